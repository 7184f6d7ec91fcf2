"""The web dashboard's own labels (pages, panels, jobs), in English and Chinese: part of the one catalogue of
:mod:`app.present.messages` (look them up with ``t``)."""

from __future__ import annotations

from types import MappingProxyType

WEB = MappingProxyType(
    {
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
        "web.goto": ("go to step", "跳到第几步"),
        "web.jump": ("jump to the event kind", "按事件类型跳转"),
        "web.jump_prev": ("◀ previous", "◀ 上一个"),
        "web.jump_next": ("next ▶", "下一个 ▶"),
        "web.core_shown": ("core shown", "显示的核"),
        "web.breakpoints": ("Breakpoints (play stops there)", "断点（播放在此停止）"),
        "web.bp_kind": ("event kind", "事件类型"),
        "web.bp_core": ("core", "核"),
        "web.bp_src": ("source line, file:line", "源码行（文件:行号）"),
        "web.bp_field.kind": ("kind", "类型"),
        "web.bp_field.core": ("core", "核"),
        "web.bp_field.src": ("line", "源码行"),
        "web.bp_field.mark": ("mark", "标记"),
        "web.dd.select_all": ("Select all", "全选"),
        "web.dd.deselect_all": ("Deselect all", "全不选"),
        "web.dd.selected_count": ("{num_selected} selected", "已选 {num_selected} 项"),
        "web.dd.search": ("Search", "搜索"),
        "web.dd.clear_search": ("Clear search", "清除搜索"),
        "web.dd.clear_selection": ("Clear selection", "清除选择"),
        "web.dd.no_options_found": ("No options found", "没有匹配的选项"),
        "web.bp_remove": ("remove this breakpoint", "删除这个断点"),
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
        "web.bad_kind": ("kind must be one of {kinds}, got {got}", "事件类型必须是 {kinds} 之一，收到 {got}"),
        "web.no_slot": (
            "{buf} has no slot {q}.{s} at this step on this core.",
            "在这一步，这个核上的 {buf} 没有槽位 {q}.{s}。",
        ),
        "web.no_core": (
            "No AI core ran a block in this run: its matmuls (if any) run at op level, each one task on the AI-core "
            "array costed from a measured table or a roofline, not instruction by instruction. Lesson 3 opens a "
            "vector core, lesson 6 a Cube core.",
            "本次运行没有 AI Core 运行块：其中的矩阵乘（如有）以算子级运行，每个都是 AI Core 阵列上的一个任务，"
            "按实测表或屋顶线模型计时，而不是逐条指令模拟。第 3 课展开 Vector 核，第 6 课展开 Cube 核。",
        ),
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
        "web.device_work": ("device work", "设备工作"),
        "web.device_work_tip": (
            "Show the device's work: from the first copy or kernel to the last (set-up and teardown left out)",
            "只看设备工作：从第一次拷贝或核函数到最后一次（不含准备与收尾）",
        ),
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
        "web.gaps": (
            "Idle time by cause, summed over every lane (us): it can exceed the run",
            "按原因统计的空闲时间，各泳道之和（us）：可能超过运行时长",
        ),
        "web.auto": ("auto", "自动"),
        "web.auto.aic_cores": ("auto: all {aic} cores", "自动：全部 {aic} 个核"),
        "web.auto.aiv_blocks": (
            "auto: enough blocks for the {aiv} vector cores",
            "自动：足够 {aiv} 个 Vector 核的块数",
        ),
        "web.auto.tiling": ("auto: the tiler chooses", "自动：由 tiling 搜索选择"),
        "web.no_recommendations": ("nothing to recommend for this run", "这次运行没有需要改进的建议"),
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
        "web.tab_views": ("Views", "视图"),
        "web.tab_exercise": ("Exercise: write and check your code", "练习：编写并检查你的代码"),
        "web.scenario": ("scenario", "场景"),
        "web.profile": ("hardware profile", "硬件配置"),
        "web.numerics": ("compute the numbers (numerics)", "计算真实数值（numerics）"),
        "web.run": ("Run", "运行"),
        "web.pg_hint": ("Choose a scenario and its parameters, then press Run.", "选择场景及其参数，然后点击运行。"),
        "web.cancel": ("Cancel", "取消"),
        "web.cancelled": ("Cancelled.", "已取消。"),
        "web.phase.queued": ("queued: {ahead} ahead", "排队中：前面还有 {ahead} 个"),
        "web.run_lesson": ("lesson {n}", "第 {n} 课"),
        "web.run_scenario": ("{scenario} on {profile}: {params}", "{scenario}，{profile}：{params}"),
        "web.timing_only": ("(timing only)", "（只计时，不算数值）"),
        "web.run_exercise": ("your run of lesson {n}'s exercise", "你的第 {n} 课练习的运行"),
        "web.exercise_narration": (
            "Your run of lesson {n}'s exercise. The lesson's steps narrate the lesson's own run: "
            "press “Show the lesson's run” under the verdict to read them beside it.",
            "这是你为第 {n} 课练习写的代码的运行。课程步骤讲解的是课程自己的运行："
            "点击结论下方的“查看课程的运行”即可对照阅读。",
        ),
        "web.phase.joined": (
            "an identical run is being computed: waiting for it",
            "同样的运行正在计算：等待它完成",
        ),
        "web.phase.simulating": (
            "simulating: {events} of about {total} events",
            "模拟中：约 {total} 个事件中的 {events} 个",
        ),
        "web.phase.storing": ("storing the run", "保存运行结果"),
        "web.phase.preparing": ("preparing the first views", "准备最初的视图"),
        "web.phase.starting": ("starting", "启动中"),
        "web.resent": (
            "The server lost an answer (a worker restarted): the page asked again and carried on; nothing was lost.",
            "服务器丢失了一个应答（有工作进程重启）：页面已重新请求并继续，没有丢失任何内容。",
        ),
        "web.job_lost": (
            "The server lost this job's process again and again and gave up: press the button again "
            "(if it happens again, the run is too big for this server).",
            "服务器多次失去了这个作业的进程，已放弃：请再按一次按钮（如果再次发生，说明这次运行超出了服务器的能力）。",
        ),
        "web.job_failed": (
            "The server failed while doing this (its log says why): press the button again.",
            "服务器在处理时出错（原因见服务器日志）：请再按一次按钮。",
        ),
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
    }
)

__all__ = ("WEB",)
