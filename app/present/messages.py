"""Every string a trainee sees in a view, in English and Chinese: one catalogue for both UIs.

``t(key, lang, **values)`` formats the entry for ``lang`` ("en" or "zh"); a key missing from the
catalogue is an error (caught by a test that renders every view in both languages), never a
silently English label in the Chinese UI.
"""

from __future__ import annotations

from types import MappingProxyType

LANGS = ("en", "zh")

_CATALOGUE = MappingProxyType(
    {
        # system view
        "host": ("Host CPU", "主机 CPU"),
        "device": ("Device (Ascend AI processor)", "设备（昇腾 AI 处理器）"),
        "gm": ("GM (HBM)", "全局内存 GM（HBM）"),
        "l2": ("L2 cache", "L2 缓存"),
        "link": ("host link (PCIe)", "主机链路（PCIe）"),
        "cores": ("AI cores", "AI Core"),
        "idle": ("idle", "空闲"),
        "in_call": ("in {call}", "正在执行 {call}"),
        "blocked_on": ("blocked: waiting for {what}", "阻塞：等待{what}"),
        "host_free": ("running host code", "执行主机代码"),
        "wait.stream": ("a stream to drain", "流执行完毕"),
        "wait.event": ("an event", "事件完成"),
        "wait.copy": ("a copy", "拷贝完成"),
        "wait.pageable": ("a pageable copy", "可分页内存拷贝完成"),
        "wait.room": ("room in a full stream", "流队列腾出空间"),
        "wait.device": ("the whole device", "整个设备执行完毕"),
        # activity of a core
        # kinds of findings (engine.findings.Finding.kind); their messages stay the engine's English diagnostics
        "finding.race": ("race", "数据竞争"),
        "finding.deadlock": ("deadlock", "死锁"),
        "finding.acl-error": ("ACL error", "ACL 错误"),
        "finding.kernel-error": ("kernel error", "核函数错误"),
        # causes of idle time (engine.analysis.gaps.CAUSES)
        "gap.waiting for the host": ("waiting for the host", "等待主机提交"),
        "gap.waiting for the previous task": ("waiting for the previous task", "等待同一流上的前一个任务"),
        "gap.waiting for a copy engine": ("waiting for a copy engine", "等待拷贝引擎"),
        "gap.waiting for the AI cores": ("waiting for the AI cores", "等待 AI Core"),
        "gap.waiting on an event": ("waiting on an event", "等待事件"),
        "gap.waiting for data": ("waiting for data", "等待数据"),
        "gap.no free buffer slot": ("no free buffer slot", "没有空闲的缓冲槽位"),
        "gap.waiting for a cross-core flag": ("waiting for a cross-core flag", "等待跨核同步标志"),
        "gap.waiting on a flag": ("waiting on a flag", "等待同步标志"),
        "gap.shared-bandwidth contention": ("shared-bandwidth contention", "共享带宽争用"),
        "gap.no work: tail": ("no work: tail", "无任务：尾部等待"),
        "gap.no work: too few blocks": ("no work: too few blocks", "无任务：块数太少"),
        "activity.cube": ("Cube computing", "Cube 计算中"),
        "activity.vector": ("Vector computing", "Vector 计算中"),
        "activity.load": ("loading data", "搬入数据"),
        "activity.store": ("storing results", "搬出结果"),
        "activity.wait": ("waiting on a flag", "等待同步标志"),
        "activity.busy": ("running block {block}", "运行块 {block}"),
        "activity.idle": ("idle", "空闲"),
        # streams and engines
        "stream": ("stream", "流"),
        "pending": ("queued", "排队"),
        "running": ("running", "执行中"),
        "done": ("done", "已完成"),
        "copy_engine": ("copy engine", "拷贝引擎"),
        "no_copy": ("no copy", "无拷贝"),
        # core view
        "buffer": ("buffer", "缓冲区"),
        "capacity": ("capacity", "容量"),
        "used": ("used", "已用"),
        "slot": ("slot", "槽位"),
        "state.free": ("free", "空闲"),
        "state.allocated": ("allocated", "已分配"),
        "state.enqueued": ("enqueued (data ready)", "已入队（数据就绪）"),
        "state.dequeued": ("dequeued (in use)", "已出队（使用中）"),
        "state.in use": ("in use", "使用中"),
        "empty_slot": ("empty", "空"),
        "pipe": ("pipe", "流水线"),
        "pipe.SCALAR": ("Scalar unit", "标量单元"),
        "pipe.VECTOR": ("Vector unit", "Vector 单元"),
        "pipe.CUBE": ("Cube unit", "Cube 单元"),
        "pipe.MTE1": ("MTE1: L1 -> L0A/L0B", "MTE1：L1 -> L0A/L0B"),
        "pipe.MTE2": ("MTE2: GM -> L1/UB", "MTE2：GM -> L1/UB"),
        "pipe.MTE3": ("MTE3: UB -> GM", "MTE3：UB -> GM"),
        "pipe.FIXP": ("FixPipe: L0C -> GM", "FixPipe：L0C -> GM"),
        "values_unavailable": ("values not available: {why}", "数值不可用：{why}"),
        # timeline
        "timeline": ("Timeline", "时间线"),
        "lane.HOST": ("host thread", "主机线程"),
        "lane.STREAM": ("stream", "流"),
        "lane.COPY_ENGINE": ("copy engine", "拷贝引擎"),
        "lane.KERNELS": ("kernels", "核函数"),
        "lane.BLOCK": ("blocks", "块"),
        "lane.PIPE": ("pipe", "流水线"),
        "aggregated": ("{n} events, shown as busy share", "{n} 个事件，按忙碌占比显示"),
        # matrices
        "matrices": ("Matrices", "矩阵"),
        "role.input": ("input", "输入"),
        "role.output": ("output", "输出"),
        "complete": ("{done} of {total} tiles complete", "已完成 {done}/{total} 个分块"),
        # pipeline
        "pipeline": ("Pipeline (per tile)", "流水线（按分块）"),
        "web.pipeline_empty": (
            "No tiles to show for this core yet: this run's kernels are operator-level, or the core has not loaded one",
            "这个核还没有可显示的分块：此运行的核函数按算子级模拟，或该核尚未载入分块",
        ),
        "stage.MTE2": ("CopyIn (MTE2)", "搬入 CopyIn（MTE2）"),
        "stage.MTE1": ("Load L0 (MTE1)", "加载 L0（MTE1）"),
        "stage.CUBE": ("Compute (Cube)", "计算 Compute（Cube）"),
        "stage.VECTOR": ("Compute (Vector)", "计算 Compute（Vector）"),
        "stage.FIXP": ("CopyOut (FixPipe)", "搬出 CopyOut（FixPipe）"),
        "stage.MTE3": ("CopyOut (MTE3)", "搬出 CopyOut（MTE3）"),
        # phases (app.present.phases)
        "phases": ("Phases", "阶段"),
        "phase.setup": ("set-up", "准备"),
        "phase.work": ("device work", "设备工作"),
        "phase.teardown": ("teardown", "收尾"),
        # walkthroughs (app.present.walkthrough)
        "scenario_title": ("Scenario {name}", "场景 {name}"),
        "lesson_step": ("lesson step {i} / {n}", "课程第 {i} / {n} 步"),
        "step_unresolved": ("this step's event is not in the run: {why}", "本步骤对应的事件不在本次运行中：{why}"),
        "prepare.run": ("running the simulation", "运行模拟"),
        "prepare.replay": ("indexing the trace", "索引轨迹"),
        "prepare.steps": ("finding the lesson's steps", "定位课程步骤"),
        "prepare.analysis": ("analysing the run", "分析运行结果"),
        "preparing": ("Preparing {what}: {phase}...", "正在准备{what}：{phase}……"),
        "prepare_failed": ("could not prepare the run: {why}", "无法准备本次运行：{why}"),
        # terminal UI: panes, status, keys, check
        "narration": ("Lesson", "讲解"),
        "buffers_of": ("Buffers of {core}", "{core} 的缓冲区"),
        "block_of": ("block {block}", "块 {block}"),
        "no_block": ("no block has run on {core} yet", "{core} 上还没有运行过任何块"),
        "no_buffers": ("block {block} has set up no buffer yet", "块 {block} 尚未分配缓冲区"),
        "pipes_now": ("running", "执行中"),
        "tile_hint": ("v: tile values  s: next slot", "v：分块数值  s：下一个槽位"),
        "tile_of": ("{buffer} queue {queue} slot {slot}: {tile}", "{buffer} 队列 {queue} 槽位 {slot}：{tile}"),
        "tile_shape": ("{rows} x {cols} {dtype}", "{rows} x {cols} {dtype}"),
        "legend": ("legend", "图例"),
        "utilisation": ("utilisation per pipe", "各流水线利用率"),
        "playing": ("playing", "播放中"),
        "paused": ("paused", "已暂停"),
        "speed": ("{n} events/s", "{n} 事件/秒"),
        "kind_selected": ("kind {kind}", "类型 {kind}"),
        "breakpoints": ("{n} breakpoint(s)", "{n} 个断点"),
        "breakpoint_set": ("breakpoint set: {what}", "已设置断点：{what}"),
        "breakpoint_cleared": ("breakpoint cleared: {what}", "已清除断点：{what}"),
        "stopped_at_breakpoint": ("stopped at a breakpoint", "在断点处停止"),
        "end_of_run": ("end of the run", "运行结束"),
        "core_selected": ("core {core}", "核 {core}"),
        "no_such_core": ("no core {n} in this run", "本次运行中没有核 {n}"),
        "window": ("{t0} - {t1} us", "{t0} - {t1} us"),
        "checking": ("checking {file}...", "正在检查 {file}……"),
        "check_title": ("Check of {file}", "{file} 的检查结果"),
        "no_exercise": (
            "{file} does not exist: run  ascendsim lesson start {n}  first, or give  --file PATH",
            "{file} 不存在：请先运行  ascendsim lesson start {n}，或使用  --file PATH  指定文件",
        ),
        "check_failed": ("the check could not run: {why}", "检查无法运行：{why}"),
        "close": ("esc: close", "esc：关闭"),
        "help_title": ("Keys", "按键"),
        "key.step_back": ("previous event", "上一个事件"),
        "key.step_forward": ("next event", "下一个事件"),
        "key.kind_back": ("previous of kind", "上一个同类事件"),
        "key.kind_forward": ("next of kind", "下一个同类事件"),
        "key.next_kind": ("choose the kind", "选择事件类型"),
        "key.breakpoint": ("breakpoint here (line, else kind+core)", "在此设断点（按行，否则按类型+核）"),
        "key.breakpoint_kind": ("breakpoint on this kind", "按事件类型设断点"),
        "key.play": ("play / pause", "播放 / 暂停"),
        "key.faster": ("faster", "加速"),
        "key.slower": ("slower", "减速"),
        "key.lesson_next": ("next lesson step", "下一课程步骤"),
        "key.lesson_back": ("previous lesson step", "上一课程步骤"),
        "key.focus": ("next pane", "下一个窗格"),
        "key.digit": ("select a core by number", "按编号选择核"),
        "key.language": ("中文", "English"),
        "key.check": ("check my exercise", "检查我的练习"),
        "key.zoom_in": ("zoom in", "放大"),
        "key.zoom_out": ("zoom out", "缩小"),
        "key.pan_left": ("pan left", "左移"),
        "key.pan_right": ("pan right", "右移"),
        "key.expand": ("show / hide the core's pipes", "显示 / 隐藏核的流水线"),
        "key.values": ("tile values", "分块数值"),
        "key.next_slot": ("next slot", "下一个槽位"),
        "key.help": ("help", "帮助"),
        "key.quit": ("quit", "退出"),
        "short.step": ("step", "单步"),
        "short.play": ("play", "播放"),
        "short.lesson": ("lesson", "课程"),
        "short.check": ("check", "检查"),
        "short.help": ("help", "帮助"),
        "short.quit": ("quit", "退出"),
        "short.kind": ("kind", "同类"),
        "short.break": ("break", "断点"),
        "short.speed": ("speed", "速度"),
        "short.pane": ("pane", "窗格"),
        # metrics
        "metrics": ("Metrics", "指标"),
        "percent_of_peak": ("% of peak (its unit)", "峰值占比 %（所用单元）"),
        "tflops": ("achieved TFLOPS", "实际 TFLOPS"),
        "kernel_us": ("kernel time (us)", "核函数时间（us）"),
        "simulated_us": ("simulated time (us)", "模拟时间（us）"),
        "findings": ("Findings", "发现的问题"),
        "no_findings": ("no findings", "未发现问题"),
        "recommendations": ("Recommendations", "优化建议"),
        # code
        "code": ("Code", "代码"),
        "source_unavailable": ("source not available", "源码不可用"),
        # events
        "step": ("step {i} / {n}", "第 {i} / {n} 步"),
        "event_at": ("{name} on {lane} at {time} us", "{time} us：{lane} 上的 {name}"),
        # web dashboard (app/web)
        "web.title": ("AscendSim: host and device, step by step", "AscendSim：主机与设备协同，逐步演示"),
        "web.nav.lessons": ("Lessons", "课程"),
        "web.nav.playground": ("Playground", "实验场"),
        "web.nav.compare": ("Compare", "对比"),
        "web.nav.export": ("Export", "导出"),
        "web.not_found": ("No page at this address.", "该地址没有页面。"),
        "web.back": ("◀ back", "◀ 后退"),
        "web.forward": ("forward ▶", "前进 ▶"),
        "web.play": ("▶ play", "▶ 播放"),
        "web.pause": ("❚❚ pause", "❚❚ 暂停"),
        "web.speed": ("speed (steps/s)", "速度（步/秒）"),
        "web.jump": ("jump to the event kind", "按事件类型跳转"),
        "web.jump_prev": ("◀ previous", "◀ 上一个"),
        "web.jump_next": ("next ▶", "下一个 ▶"),
        "web.core_shown": ("core shown", "显示的核"),
        "web.breakpoints": ("Breakpoints (play stops there)", "断点（播放在此停止）"),
        "web.bp_kind": ("event kind", "事件类型"),
        "web.bp_core": ("core", "核"),
        "web.bp_src": ("source line, file:line", "源码行 file:line"),
        "web.bp_mark": ("user mark (empty: any)", "用户标记（留空：任意）"),
        "web.bp_add": ("add breakpoint", "添加断点"),
        "web.bp_none": ("no breakpoints", "没有断点"),
        "web.keys": (
            "Keys (outside text fields): ← → step, space play / pause, [ ] previous / next event of the chosen "
            "kind, Home / End first / last step.",
            "快捷键（焦点不在输入框时）：← → 单步，空格 播放/暂停，[ ] "
            "上一个/下一个所选类型的事件，Home / End 第一步/最后一步。",
        ),
        "web.view.system": ("System: host, link, device", "系统：主机、链路、设备"),
        "web.view.core": ("Inside one core", "一个核的内部"),
        "web.no_core": ("this run used no AI core", "本次运行没有使用 AI Core"),
        "web.block": ("block {block}", "块 {block}"),
        "web.no_block": ("no block yet", "尚未运行块"),
        "web.of": ("{used} of {capacity}", "{used} / {capacity}"),
        "web.click_slot": ("Click a slot to see the numbers in it.", "点击槽位查看其中的数值。"),
        "web.tile_values": (
            "Numbers in {buffer}, queue {queue}, slot {slot}, at this step: {tile}",
            "此步 {buffer} 队列 {queue} 槽位 {slot} 中的数值：{tile}",
        ),
        "web.tile_corner": ("top-left {rows} x {cols} of {shape}", "{shape} 的左上角 {rows} x {cols}"),
        "web.pipes": ("Pipes and what each runs", "各流水线及其正在执行的指令"),
        "web.streams": ("Streams", "流"),
        "web.legend": ("Core colours", "核的颜色"),
        "web.follow": ("follow the cursor", "跟随光标"),
        "web.whole_run": ("whole run", "整个运行"),
        "web.expand": ("pipes of", "展开流水线的核"),
        "web.duration": ("duration", "时长"),
        "web.bytes": ("bytes", "字节"),
        "web.flops": ("flops", "浮点运算"),
        "web.src": ("source", "源码"),
        "web.busy": ("busy share", "忙碌占比"),
        "web.time_us": ("simulated time (us)", "模拟时间（us）"),
        "web.no_tensors": (
            "This run names no GM tensors, so there is nothing to draw here.",
            "本次运行没有命名的 GM 张量，此处无可显示内容。",
        ),
        "web.no_values": (
            "values are not loaded for a run this large: outlines and progress only",
            "运行规模过大，未加载数值：只显示分块轮廓和进度",
        ),
        "web.tile_legend": (
            "Outlines: the tile each core holds now (its colour). Output: the core that wrote each tile.",
            "轮廓：每个核当前持有的分块（按核着色）。输出：写出每个分块的核。",
        ),
        "web.pipe_ratios": ("busy share of the kernel's time (%)", "占核函数时间的忙碌比例（%）"),
        "web.roofline": ("Roofline", "屋顶线"),
        "web.intensity": ("arithmetic intensity (flop / HBM byte)", "算术强度（flop / HBM 字节）"),
        "web.tflops": ("TFLOPS", "TFLOPS"),
        "web.gaps": ("Idle time by cause (us)", "按原因统计的空闲时间（us）"),
        "web.try": ("try it", "试一试"),
        "web.lesson": ("Lesson", "课程"),
        "web.lesson_n": ("Lesson {n}: {title}", "第 {n} 课：{title}"),
        "web.about": ("About this lesson", "本课简介"),
        "web.steps": ("Steps", "步骤"),
        "web.prev_step": ("◀ previous step", "◀ 上一步骤"),
        "web.next_step": ("next step ▶", "下一步骤 ▶"),
        "web.step_missing": (
            "Steps {steps} point at events this run does not have ({why})",
            "步骤 {steps} 对应的事件不在本次运行中（{why}）",
        ),
        "web.questions": ("Predict, then run", "先预测，再运行"),
        "web.check": ("check with the simulator", "用模拟器验证"),
        "web.right": ("Right: the simulator says {answer}.", "正确：模拟器的结果是 {answer}。"),
        "web.wrong": (
            "Not quite: you said {yours}, the simulator says {answer}.",
            "不对：你的答案是 {yours}，模拟器的结果是 {answer}。",
        ),
        "web.choose_first": ("Choose an answer first.", "请先选择一个答案。"),
        "web.exercise": ("Exercise", "练习"),
        "web.start_with": (
            "Start with ascendsim lesson start {n}; check with ascendsim lesson check {n}.",
            "开始：ascendsim lesson start {n}；检查：ascendsim lesson check {n}。",
        ),
        "web.scenario": ("scenario", "场景"),
        "web.profile": ("hardware profile", "硬件配置"),
        "web.numerics": ("compute the numbers (numerics)", "计算真实数值（numerics）"),
        "web.run": ("Run", "运行"),
        "web.pg_hint": ("Choose a scenario and its parameters, then press Run.", "选择场景及其参数，然后点击运行。"),
        "web.cancel": ("Cancel", "取消"),
        "web.cancelled": ("Cancelled.", "已取消。"),
        "web.phase.queued": ("queued: {ahead} ahead", "排队中：前面还有 {ahead} 个"),
        "web.phase.joined": (
            "an identical run is being computed: waiting for it",
            "同样的运行正在计算：等待它完成",
        ),
        "web.phase.simulating": (
            "simulating: {events} of about {total} events",
            "模拟中：约 {total} 个事件中的 {events} 个",
        ),
        "web.phase.storing": ("storing the run", "保存运行结果"),
        "web.phase.starting": ("starting", "启动中"),
        "web.busy.session": (
            "One run at a time per browser tab: wait for the one running, or cancel it.",
            "每个浏览器标签页一次只能运行一个：请等待当前运行结束，或取消它。",
        ),
        "web.busy.rate": (
            "At most {n} runs a minute per browser tab: try again in a moment.",
            "每个浏览器标签页每分钟最多运行 {n} 次：请稍后再试。",
        ),
        "web.busy.queue": (
            "The server's queue is full ({n} runs waiting): try again in a moment.",
            "服务器队列已满（{n} 个运行在等待）：请稍后再试。",
        ),
        "web.note.joined": (
            "An identical run was already being computed; it was shared.",
            "同样的运行已在计算中，已共享其结果。",
        ),
        "web.note.damaged": (
            "The stored copy of this run was damaged; it was set aside and computed again.",
            "该运行的存储副本已损坏；已移到一旁并重新计算。",
        ),
        "web.note.unstored": (
            "This run could not be stored ({why}); it is shown from this server's memory.",
            "该运行无法保存（{why}）；当前从服务器内存中显示。",
        ),
        "web.ran": ("{scenario}: {events} events, {us} us simulated", "{scenario}：{events} 个事件，模拟时间 {us} us"),
        "web.failed": ("The run failed: {message}", "运行失败：{message}"),
        "web.compare_a": ("Run A", "运行 A"),
        "web.compare_b": ("Run B", "运行 B"),
        "web.compare_run": ("Compare", "对比"),
        "web.metric": ("metric", "指标"),
        "web.change": ("B vs A", "B 相对 A"),
        "web.what_changed": ("What changed", "改变了什么"),
        "web.why": ("Why", "原因"),
        "web.same_params": ("The two runs have the same parameters.", "两次运行的参数相同。"),
        "web.param_changed": ("{name}: {a} → {b}", "{name}：{a} → {b}"),
        "web.only_in": ("only in {run}: {items}", "仅在 {run} 中：{items}"),
        "web.export_title": ("Export the current run", "导出当前运行"),
        "web.export_none": (
            "No run yet: play a lesson or run the playground first.",
            "还没有运行：请先播放一节课或在实验场中运行。",
        ),
        "web.export_run": ("Current run: {name}", "当前运行：{name}"),
        "web.export_chrome": ("Chrome trace (open it in Perfetto)", "Chrome 轨迹（在 Perfetto 中打开）"),
        "web.export_summary": ("Summary (JSON)", "摘要（JSON）"),
        "web.export_csv": ("Busy ratio per core and pipe (CSV)", "各核各流水线忙碌比例（CSV）"),
        "why.buffer_num": (
            "buffer_num sets double buffering: with 2 slots the next tile loads (MTE2) while this one computes; "
            "compare mte2_compute_overlap and the idle time 'waiting for data'.",
            "buffer_num 决定是否双缓冲：有 2 个槽位时，下一个分块的搬入（MTE2）与当前分块的计算同时进行；"
            "请对比 mte2_compute_overlap 和“等待数据”的空闲时间。",
        ),
        "why.cores": (
            "cores sets how many cores share the work: fewer cores, less parallelism; compare "
            "parallelism_utilization and kernel_us.",
            "cores 决定由多少个核分担工作：核越少，并行度越低；请对比 parallelism_utilization 和 kernel_us。",
        ),
        "why.base": (
            "base sets the block each mmad works on: bigger blocks reuse each loaded tile more (higher intensity) "
            "but must fit L0A/L0B/L0C; compare percent_of_peak.",
            "base 决定每次 mmad 处理的基本块：块越大，每个加载的分块复用越多（强度越高），但必须放得进 L0A/L0B/L0C；"
            "请对比 percent_of_peak。",
        ),
        "why.streams": (
            "streams sets how many queues feed the device: with two, one batch's copies overlap another's "
            "matmul; compare copy_compute_overlap.",
            "streams 决定向设备提交任务的队列数：有两个流时，"
            "一批数据的拷贝与另一批的矩阵乘重叠；请对比 copy_compute_overlap。",
        ),
        "why.pageable": (
            "pageable host memory makes each async copy hold the host until it is done; pinned memory lets the "
            "host run ahead; compare host_wait_us.",
            "可分页主机内存会让每次异步拷贝阻塞主机直至完成；锁页内存让主机可以继续向前执行；请对比 host_wait_us。",
        ),
        "why.sync_each": (
            "sync_each makes the host wait after every batch, so the device idles between batches; compare "
            "host_wait_us and device_busy_us.",
            "sync_each 让主机在每批之后等待，设备在批次之间空闲；请对比 host_wait_us 和 device_busy_us。",
        ),
        "why.tile_length": (
            "tile_length sets the work per loop iteration: bigger tiles mean fewer iterations and less per-tile "
            "overhead, up to what fits in UB.",
            "tile_length 决定每次循环处理的数据量：分块越大，迭代次数越少、每块开销越少，但必须放得进 UB。",
        ),
        "why.shape": (
            "the shape changes the work itself: compare tflops and percent_of_peak rather than the times.",
            "形状改变了工作量本身：请对比 tflops 和 percent_of_peak，而不是时间。",
        ),
        "why.profile": (
            "another profile is another chip: different core counts, buffer sizes and bandwidths.",
            "不同的硬件配置就是不同的芯片：核数、缓冲区大小和带宽都不同。",
        ),
        "why.other": (
            "{name} changed; the metrics below show its effect.",
            "{name} 改变了；下面的指标显示了它的影响。",
        ),
    }
)


# Chinese texts of the scenarios' summaries and parameter help (the English ones live with the scenarios,
# in engine.scenarios; a test checks that every scenario and parameter has its entry here)
_SCENARIOS_ZH = MappingProxyType(
    {
        "host-lifecycle": (
            "初始化、拷入、矩阵乘、同步、拷回、校验、释放",
            {"n": "矩阵规模（n x n x n 的 fp16 矩阵乘）", "seed": "输入数据的随机种子"},
        ),
        "pipeline": (
            "B 批“拷入 / 矩阵乘 / 拷出”，轮流分配到 S 条流上（原文的预取流水线）",
            {
                "n": "每批的矩阵规模（n x n x n 的 fp16 矩阵乘）",
                "batches": "批次数",
                "streams": "流的数量",
                "pageable": "使用可分页（普通 numpy）主机内存，而不是锁页内存",
                "seed": "输入数据的随机种子",
                "sync_each": "每批之后都同步（主机每次只给设备送一批）",
                "prefetch_depth": "0：整批轮流分配到各条流；D：拷贝在自己的流上提前 D 批进行（StreamManager）",
            },
        ),
        "matmul": (
            "C = A @ B（fp16 输入，fp32 累加），使用分块的多核 Cube 核函数",
            {
                "m": "A 和 C 的行数",
                "n": "B 和 C 的列数",
                "k": "A 的列数，B 的行数",
                "cores": "使用的 Cube 核数（默认：全部）",
                "base": "固定的基本块 BM,BN,BK（默认：由自动分块器决定）",
                "buffer_num": "1：不用双缓冲；2：L1 和 L0 双缓冲",
                "out_dtype": "C 的数据类型",
                "seed": "输入数据的随机种子",
            },
        ),
        "matmul-leaky-relu": (
            "C = LeakyReLU(A @ B)：混合核函数，每个 AI Core 的 Cube 核与两个 Vector 核协同工作",
            {
                "m": "A 和 C 的行数",
                "n": "B 和 C 的列数（16 的倍数）",
                "k": "A 的列数，B 的行数",
                "alpha": "LeakyReLU 在 x < 0 时的斜率（max(x, alpha*x)）",
                "cores": "使用的 AI Core 数（每个是 1 个 AIC + 2 个 AIV 的一组；默认：全部）",
                "base": "固定的基本块 BM,BN,BK（默认：由自动分块器决定）",
                "buffer_num": "1：不用双缓冲；2：L1 和 L0 双缓冲",
                "seed": "输入数据的随机种子",
            },
        ),
        "vector-add": (
            "在 Vector 核上计算 z = x + y：CopyIn / Compute / CopyOut",
            {
                "length": "fp16 元素个数",
                "buffer_num": "队列槽位数：1（不重叠）或 2（双缓冲）",
                "tile_length": "每个分块的元素个数",
                "cores": "启动的块数（默认：足够让每个 Vector 核都分到分块）",
                "seed": "输入数据的随机种子",
            },
        ),
        "debug-demo": (
            "一个带有典型协同错误（--bug）的小程序，供调试器演示",
            {
                "bug": "哪一种错误：none、missing-wait、empty-deque、never-recorded、wait-cycle、cross-stream、"
                "use-after-free"
            },
        ),
        "dynamic-shapes": (
            "同一条流上形状不断变化的矩阵乘，由主机按 recompute / cache / adaptive 策略计算分块",
            {
                "sequence": "stable、drifting、random，或形状列表 MxNxK,MxNxK,...",
                "count": "矩阵乘的个数",
                "policy": "主机如何得到每次的分块方案",
                "seed": "输入数据（以及随机序列）的随机种子",
            },
        ),
    }
)


def scenario_summary(scenario, lang: str = "en") -> str:
    """What a scenario (:class:`engine.scenarios.Scenario`) runs, in ``lang``."""
    return _SCENARIOS_ZH[scenario.name][0] if known_lang(lang) == "zh" else scenario.summary


def param_help(scenario, param, lang: str = "en") -> str:
    """The help of one of a scenario's parameters, in ``lang``."""
    return _SCENARIOS_ZH[scenario.name][1][param.name] if known_lang(lang) == "zh" else param.help


def scenarios_translated() -> dict[str, set[str]]:
    """The scenarios with Chinese texts, and the parameters of each (for the completeness test)."""
    return {name: set(params) for name, (_summary, params) in _SCENARIOS_ZH.items()}


def t(key: str, lang: str = "en", **values) -> str:
    """The catalogue entry ``key`` in ``lang``, formatted with ``values``."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, got {lang!r}")
    entry = _CATALOGUE[key]
    text = entry[LANGS.index(lang)]
    return text.format(**values) if values else text


def finding_kind(kind: str, lang: str = "en") -> str:
    """A finding's kind as a label in ``lang`` (a kind the catalogue does not know is shown as it is)."""
    key = f"finding.{kind}"
    return t(key, lang) if key in _CATALOGUE else kind


def known_lang(lang) -> str:
    """``lang`` if it is one of :data:`LANGS`, else English (what a browser sent may be anything)."""
    return lang if isinstance(lang, str) and lang in LANGS else LANGS[0]


def keys() -> tuple[str, ...]:
    return tuple(_CATALOGUE)
