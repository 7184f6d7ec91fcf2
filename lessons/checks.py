"""What a lesson's ``check.judge`` returns, and the measurements most checks share.

Every helper reads a run rebuilt in the grader (:class:`lessons.wire.RunData`): nothing here runs in
the child. Tolerances are stated where they are used, in the criterion's ``expected`` text.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from engine.analysis.pipes import kernel_rows as pipes_kernel_rows
from engine.device.stream import TaskKind
from engine.trace import Kind
from engine.trace.intervals import covered

from .credit import NOT_FROM_DEVICE_ZH, NotFromDevice
from .selectors import trace_lane_facts

Text = str | dict  # plain text, or {"en": ..., "zh": ...} when it has words to translate


def bi(en: str, zh: str) -> dict:
    return {"en": en, "zh": zh}


def pick(text: Text, lang: str) -> str:
    return text.get(lang, text.get("en", "")) if isinstance(text, dict) else str(text)


@dataclass
class Criterion:
    """One thing the check demands: passed or not, and what the trainee's run showed against the target."""

    id: str
    passed: bool
    yours: Text = ""
    expected: Text = ""
    detail: Text = ""
    off_device: bool = False  # failed only because the right values did not come from the device
    case: str = ""  # the kind of hidden case it was judged on (lessons.hidden.concealed); "" for a visible one


class Data:
    """What a check judges: the trusted replay's runs, outputs and observations, and the trainee's answers.

    ``run``, ``output`` and ``observed`` come from the grader's own re-execution of the recording
    (:mod:`lessons.replay`); ``value`` is what the trainee's code answered (its plain return values and
    predictions), judged as it is.
    """

    def __init__(self, replayed, values: dict) -> None:
        self._replayed = replayed
        self.values = values if isinstance(values, dict) else {}

    def run(self, key: str):
        if key not in self._replayed.runs:
            raise KeyError(f"run {key!r} was not recorded")
        return self._replayed.runs[key]

    def has_run(self, key: str) -> bool:
        return key in self._replayed.runs

    def launches(self, key: str) -> list:
        """The kernel launches of run ``key``: (kernel name, block_dim, the other arguments by value)."""
        return self._replayed.launches.get(key, [])

    def value(self, key: str, default=None):
        return self.values.get(key, default)

    def output(self, key: str):
        """A result the device computed, as the replay verified it (an array, a list, None or NotFromDevice)."""
        return self._replayed.outputs.get(key)

    def observed(self, key: str, default=None):
        return self._replayed.observed.get(key, default)


# -- numbers --------------------------------------------------------------------------------------
def compare(ident: str, yours, expected: np.ndarray, atol: float = 0.0, rtol: float = 0.0) -> Criterion:
    """``|yours - expected| <= atol + rtol * |expected|`` everywhere (the tolerance is stated in ``expected``)."""
    n = expected.size
    if atol == 0 and rtol == 0:
        want = bi(f"{n} values, exactly", f"{n} 个值，完全相等")
    else:
        want = bi(
            f"{n} values within {atol:g} + {rtol:g}*|expected|", f"{n} 个值，误差不超过 {atol:g} + {rtol:g}*|期望值|"
        )
    if yours is None:
        return Criterion(ident, False, bi("no result", "没有结果"), want)
    if isinstance(yours, NotFromDevice):  # wrong values are reported as wrong; right ones as not the device's
        claimed = None if yours.claimed is None else compare(ident, yours.claimed, expected, atol, rtol)
        if claimed is not None and not claimed.passed:
            return claimed
        reason = NOT_FROM_DEVICE_ZH.get(yours.reason, yours.reason)
        return Criterion(
            ident,
            False,
            bi(f"not computed by the device: {yours.reason}", f"不是由设备计算得到的：{reason}"),
            want,
            off_device=claimed is not None,
        )
    try:
        got = np.asarray(yours, dtype=np.float64)
    except (TypeError, ValueError):
        return Criterion(ident, False, bi("not an array of numbers", "不是数值数组"), want)
    if got.shape != expected.shape:
        return Criterion(
            ident,
            False,
            bi(f"shape {got.shape}", f"形状 {got.shape}"),
            bi(f"shape {expected.shape}", f"形状 {expected.shape}"),
        )
    e = expected.astype(np.float64)
    bad = ~(np.abs(got - e) <= atol + rtol * np.abs(e))
    bad |= np.isnan(got) != np.isnan(e)
    if not bad.any():
        err = float(np.max(np.abs(got - e))) if got.size else 0.0
        return Criterion(ident, True, bi(f"max |error| {err:.3g}", f"最大误差 {err:.3g}"), want)
    first = int(np.flatnonzero(bad.reshape(-1))[0])
    where = ",".join(map(str, np.unravel_index(first, e.shape))) if e.ndim else ""
    n_bad, g0, e0 = int(bad.sum()), got.reshape(-1)[first], e.reshape(-1)[first]
    return Criterion(
        ident,
        False,
        bi(
            f"{n_bad} of {n} values wrong; the first at [{where}] is {g0:.6g}",
            f"{n} 个值中有 {n_bad} 个错误；第一个在 [{where}]，值为 {g0:.6g}",
        ),
        bi(f"{e0:.6g} at [{where}]; " + want["en"], f"[{where}] 处应为 {e0:.6g}；" + want["zh"]),
    )


# -- what the device did --------------------------------------------------------------------------
def kernel_rows(run) -> np.ndarray:
    """The rows of the kernels that ran (:func:`engine.analysis.pipes.kernel_rows`)."""
    return pipes_kernel_rows(run.trace)


def kernel_flops(run) -> int:
    """Flops of every kernel the device ran (instruction level: counted per vector / Cube instruction)."""
    return int(run.trace.flops[kernel_rows(run)].sum())


def kernel_time_us(run) -> float:
    rows = kernel_rows(run)
    t = run.trace
    return covered(t.start[rows], t.end[rows]) / 1e6 if len(rows) else 0.0


def pipe_rows(run, pipe: str, kinds=(Kind.MOVE, Kind.COMPUTE)) -> np.ndarray:
    t = run.trace
    facts = trace_lane_facts(t)
    lanes = [i for i, f in enumerate(facts) if f.kind == "pipe" and f.pipe == pipe]
    return np.flatnonzero(np.isin(t.lane, lanes) & np.isin(t.kind, kinds))


def pipe_bytes(run, pipe: str) -> int:
    return int(run.trace.columns["nbytes"][pipe_rows(run, pipe, (Kind.MOVE,))].sum())


def pipe_flops(run, pipe: str) -> int:
    return int(run.trace.flops[pipe_rows(run, pipe, (Kind.COMPUTE,))].sum())


def named_rows(run, name: str, kind: Kind | None = None) -> np.ndarray:
    t = run.trace
    ids = [i for i, n in enumerate(t.names) if n == name]
    keep = np.isin(t.name, ids)
    if kind is not None:
        keep &= t.kind == kind
    return np.flatnonzero(keep)


def findings(*runs) -> list[Text]:
    """Every problem the runs show, one line each in English and Chinese, in order (cross-stream races
    included: ``Simulation.finish`` checks for them on every run)."""
    out = []
    for f in (f for run in runs for f in run.findings):
        zh = f"{_KIND_ZH.get(f.kind, f.kind)}: {f.text('zh').splitlines()[0]}"
        out.append(bi(f"{f.kind}: {f.message.splitlines()[0]}", zh))
    return out


_KIND_ZH = MappingProxyType(
    {"race": "数据竞争", "deadlock": "死锁", "acl-error": "ACL 错误", "kernel-error": "核函数错误"}
)


def first_failure(cases: list[Criterion]) -> Criterion:
    """The criterion of several cases: the first that failed, else the first (all passed)."""
    return next((c for c in cases if not c.passed), cases[0])


def on_device(weak: list[str], ok: Text, expected: Text) -> Criterion:
    """The ``on_device`` criterion over several runs: passes when no run is in ``weak`` (each a line saying how
    little of it the kernel computed); shows the first that is."""
    return Criterion("on_device", not weak, weak[0] if weak else ok, expected)


NO_FINDINGS = bi("no race, deadlock or kernel error", "没有数据竞争、死锁或核函数错误")


def no_findings(problems: list[str], expected: Text = NO_FINDINGS, shown: int = 1) -> Criterion:
    """The ``no_findings`` criterion: passes when ``problems`` (from :func:`findings`) is empty; shows the
    first ``shown`` of them."""
    shown_text = bi(*("\n".join(pick(p, lang) for p in problems[:shown]) for lang in ("en", "zh")))
    return Criterion("no_findings", not problems, shown_text if problems else bi("none", "无"), expected)


def tasks_of(run, kind: TaskKind) -> list:
    return [task for task in run.tasks if task.kind == kind]


def d2h_from_kernel(run) -> int:
    """Bytes copied device -> host from memory a kernel wrote before the copy.

    A copy counts when a kernel task wrote an overlapping range of the same allocation and is ordered
    before the copy (its stream's vector-clock entry is known to the copy).
    """
    kernels = [k for k in tasks_of(run, TaskKind.KERNEL) if k.end >= 0]
    copied = 0
    for copy in tasks_of(run, TaskKind.COPY):
        if copy.end < 0 or not copy.reads or copy.reads[0][0][0] != "device":
            continue
        if not copy.writes or copy.writes[0][0][0] == "device":
            continue  # device -> device
        (alloc, lo, hi) = copy.reads[0]
        for k in kernels:
            before = k.clock(k.stream) <= copy.clock(k.stream)
            if before and any(a == alloc and wlo < hi and lo < whi for a, wlo, whi in k.writes):
                copied += hi - lo
                break
    return copied
