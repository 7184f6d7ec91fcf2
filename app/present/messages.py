"""Every string a trainee sees in a view, in English and Chinese: one catalogue for both UIs.

``t(key, lang, **values)`` formats the entry for ``lang`` ("en" or "zh"); a key missing from the
catalogue is an error (caught by a test that renders every view in both languages), never a
silently English label in the Chinese UI.
"""

from __future__ import annotations

from types import MappingProxyType

from .messages_cpp import CPP
from .messages_figures import FIGURES
from .messages_layouts import LAYOUTS
from .messages_metrics import METRIC_NAMES, METRIC_SHORT
from .messages_tui import TUI
from .messages_web import WEB

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
        # kinds of findings (engine.trace.findings.Finding.kind); a finding's message is the engine's
        # (Finding.text(lang))
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
        # a lane's name, from its typed fields (app/present/lanes.py); {device}: the one device simulated
        "lane.group.HOST": ("Host", "主机"),
        "lane.group.STREAM": ("Device {device} streams", "设备 {device} 的流"),
        "lane.group.COPY_ENGINE": ("Device {device} copy engines", "设备 {device} 的拷贝引擎"),
        "lane.group.KERNELS": ("Device {device} AI cores", "设备 {device} 的 AI Core"),
        "lane.thread.HOST": ("host thread", "主机线程"),
        "lane.thread.default_stream": ("default stream", "默认流"),
        "lane.thread.STREAM": ("stream {unit}", "流 {unit}"),
        "lane.thread.COPY_ENGINE": ("{direction} engine {unit}", "{direction} 引擎 {unit}"),
        "lane.thread.KERNELS": ("kernels", "核函数"),
        "lane.thread.BLOCK": ("BLOCK", "块"),
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
        "phase.whole run": ("whole run", "整个运行"),  # RunMetrics.balance_over when the device did no work
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
        "no_core_run": (
            "No AI core ran a block in this run: its matmuls (if any) run at op level, each one task on the AI-core "
            "array costed from a measured table or a roofline, not instruction by instruction. Lesson 3 opens a "
            "vector core, lesson 6 a Cube core.",
            "本次运行没有 AI Core 运行块：其中的矩阵乘（如有）以算子级运行，每个都是 AI Core 阵列上的一个任务，"
            "按实测表或屋顶线模型计时，而不是逐条指令模拟。第 3 课展开 Vector 核，第 6 课展开 Cube 核。",
        ),
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
        "key.reveal": ("show the steps' diagnoses", "显示各步骤的诊断"),
        "diagnosis": ("Diagnosis", "诊断"),
        "diagnosis_hidden": (
            "The diagnosis of this symptom appears after your first check (g), or now with D.",
            "这个症状的诊断会在你第一次检查（g）之后显示，或按 D 立即显示。",
        ),
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
        "short.lesson": ("lesson step", "课程步骤"),
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
        "no_source_line": (
            "this event has no line of code of its own (the device did it); step to a call or an instruction to "
            "see its line",
            "此事件本身不对应任何代码行（由设备自行完成）；单步到某个调用或指令即可看到它的代码行",
        ),
        # events
        "step": ("step {i} / {n}", "第 {i} / {n} 步"),
        "event_at": ("{name} on {lane} at {time} us", "{time} us：{lane} 上的 {name}"),
        # event names built from their detail (app.present.event_names)
        "event.wait": ("wait: {what}", "等待：{what}"),
        "event.issue": ("issue", "发射 {n} 条指令"),
        "event.queue_op": ("{op} {pos} slot {slot}", "{op} {pos} 槽位 {slot}"),
        "event.q.alloc": ("alloc", "分配"),
        "event.q.enque": ("enque", "入队"),
        "event.q.deque": ("deque", "出队"),
        "event.q.free": ("free", "释放"),
        "event.flag_data": ("data", "数据"),
        "event.flag_free": ("free slot", "空闲槽位"),
        **FIGURES,  # the dashboard's figures' words (messages_figures.py)
        **LAYOUTS,  # the Cube's data layouts (messages_layouts.py)
        **WEB,  # the dashboard's own labels (messages_web.py)
        **TUI,  # the terminal UI's own labels (messages_tui.py)
        **CPP,  # the C++ (Ascend C) view and the mapping table's notes (messages_cpp.py)
        **{f"metric.{k}": v for k, v in METRIC_NAMES.items()},  # the report's figures (messages_metrics.py)
        **{f"metric_short.{k}": v for k, v in METRIC_SHORT.items()},
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


def scenario_summary(scenario, lang: str = "en") -> str:
    """What a scenario (:class:`engine.scenarios.Scenario`) runs, in ``lang``."""
    return scenario.summary_zh if known_lang(lang) == "zh" else scenario.summary


def param_help(param, lang: str = "en") -> str:
    """The help of one of a scenario's parameters, in ``lang``."""
    return param.help_zh if known_lang(lang) == "zh" else param.help


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


def metric_name(key: str, lang: str = "en", with_id: bool = True) -> str:
    """A report figure's name in ``lang``, its id after it unless ``with_id`` is False (``simulated time (us)
    · simulated_us``: the id is what the JSON and the CLI print); an id the glossary does not know is shown
    as it is."""
    entry = f"metric.{key}"
    if entry not in _CATALOGUE:
        return key
    return f"{t(entry, lang)} · {key}" if with_id else t(entry, lang)


def known_lang(lang) -> str:
    """``lang`` if it is one of :data:`LANGS`, else English (what a browser sent may be anything)."""
    return lang if isinstance(lang, str) and lang in LANGS else LANGS[0]


def keys() -> tuple[str, ...]:
    return tuple(_CATALOGUE)
