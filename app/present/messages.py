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
        "host_memory": ("host memory", "主机内存"),
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
        "no_instruction": ("-", "-"),
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
        "lesson_title": ("Lesson {n}: {title}", "第 {n} 课：{title}"),
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
        "no_tile": ("no slot holds a tile", "没有槽位存放分块"),
        "legend": ("legend", "图例"),
        "utilisation": ("utilisation per pipe", "各流水线利用率"),
        "current_event": ("now", "当前"),
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
        "percent_of_peak": ("% of Cube peak", "Cube 峰值占比 %"),
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
    }
)


def t(key: str, lang: str = "en", **values) -> str:
    """The catalogue entry ``key`` in ``lang``, formatted with ``values``."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, got {lang!r}")
    entry = _CATALOGUE[key]
    text = entry[LANGS.index(lang)]
    return text.format(**values) if values else text


def keys() -> tuple[str, ...]:
    return tuple(_CATALOGUE)
