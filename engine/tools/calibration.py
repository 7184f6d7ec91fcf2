"""Calibration: published Ascend profiling results, run through the simulator, side by side.

Each case is one TOML file in ``engine/tools/calibration_cases`` (shipped with the package, so
``ascendsim calibrate`` works from an installed wheel; ``tests/calibration`` holds the tests that
check them). A case names

* ``[source]``: where the numbers were published (repository, path, commit, section), on which
  hardware, and with which kernel: a case without all of these is refused;
* ``[setup]``: the published kernel's shape and tiling, which the simulator runs unchanged;
* ``[published]``: the published ``Task Duration`` (``task_us``) and pipe ratios, with msprof's names.

The simulated task time is the kernel's span on the cores plus the profile's kernel start-up
(``host.kernel_start_us``), as msprof's ``Task Duration`` includes the launch; ratios are computed
as the published tables compute them (:func:`msprof_ratios`: mean pipe time over mean per-core
execution time). The busiest pipe on each side is the pipe with the highest ratio.

A case is within tolerance when its task time is within ``TASK_TOLERANCE``, its busiest pipe is the
published one, and its Cube (``mac``) and scalar ratios are within ``RATIO_TOLERANCE`` points.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

CASE_DIR = Path(__file__).parent / "calibration_cases"
SOURCE_KEYS = ("repository", "path", "commit", "section", "hardware", "kernel")
KINDS = MappingProxyType(
    {
        "matmul": (
            "m",
            "n",
            "k",
            "cores",
            "single_m",
            "single_n",
            "base",
            "depth_a1",
            "depth_b1",
            "step_ka",
            "step_kb",
            "db_l0",
            "b_trans",
            "iterate_order",
            "api",
        ),
        "vector-add": ("length", "cores", "tile_length", "buffer_num"),
    }
)
RATIO_PREFIX = MappingProxyType({"matmul": "aic_", "vector-add": "aiv_"})
TASK_TOLERANCE = 0.20  # issue 14: every case's task time within +-20 %
# issue 23: these ratios within so many points of the core time of the published ones (a pipe's short name)
RATIO_TOLERANCE = MappingProxyType({"mac": 0.05, "scalar": 0.10})


class CalibrationError(ValueError):
    """A case file is malformed; the message names the file, the key and what was expected."""


@dataclass(frozen=True)
class CalibrationCase:
    id: str
    kind: str
    title: str
    profile: str
    source: dict[str, str]
    setup: dict[str, Any]
    published: dict[str, float]
    file: str

    @property
    def url(self) -> str:
        s = self.source
        return f"https://github.com/{s['repository']}/blob/{s['commit']}/{s['path']}"

    @property
    def published_ratios(self) -> dict[str, float]:
        return {k: v for k, v in self.published.items() if k.endswith("_ratio")}


def case_files() -> list[Path]:
    return sorted(CASE_DIR.glob("*.toml"))


def load_case(path: Path) -> CalibrationCase:
    try:
        with path.open("rb") as fh:
            raw = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise CalibrationError(f"{path.name}: not valid TOML ({exc})") from exc
    for section in ("case", "source", "setup", "published"):
        if not isinstance(raw.get(section), dict):
            raise CalibrationError(f"{path.name}: missing section [{section}]")
    case, source, setup, published = raw["case"], raw["source"], raw["setup"], raw["published"]
    for key in ("id", "kind", "title", "profile"):
        if not isinstance(case.get(key), str) or not case[key]:
            raise CalibrationError(f"{path.name}: key case.{key} must be a non-empty string")
    for key in SOURCE_KEYS:
        if not isinstance(source.get(key), str) or not source[key].strip():
            raise CalibrationError(f"{path.name}: key source.{key} must cite where the numbers come from, got nothing")
    commit = source["commit"]
    if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit):
        raise CalibrationError(f"{path.name}: key source.commit must be a 40-hex-digit commit, got {commit!r}")
    kind = case["kind"]
    if kind not in KINDS:
        raise CalibrationError(f"{path.name}: key case.kind must be one of {', '.join(KINDS)}, got {kind!r}")
    for key in KINDS[kind]:
        if key not in setup:
            raise CalibrationError(f"{path.name}: missing key setup.{key} (a {kind} case needs it)")
    task = published.get("task_us")
    if isinstance(task, bool) or not isinstance(task, int | float) or task <= 0:
        raise CalibrationError(f"{path.name}: key published.task_us must be a number > 0, got {task!r}")
    prefix = RATIO_PREFIX[kind]
    ratios = {k: v for k, v in published.items() if k != "task_us"}
    for key, value in ratios.items():
        if not key.startswith(prefix) or not key.endswith("_ratio"):
            raise CalibrationError(f"{path.name}: key published.{key} must be an msprof '{prefix}*_ratio' name")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise CalibrationError(f"{path.name}: key published.{key} must be a ratio in [0, 1], got {value!r}")
    if not ratios:
        raise CalibrationError(f"{path.name}: section [published] needs at least one pipe ratio")
    return CalibrationCase(
        id=case["id"],
        kind=kind,
        title=case["title"],
        profile=case["profile"],
        source=dict(source),
        setup=dict(setup),
        published={k: float(v) for k, v in published.items()},
        file=path.name,
    )


def load_cases(ids: list[str] | tuple[str, ...] = ()) -> list[CalibrationCase]:
    """Every case (or the ones named in ``ids``, in that order)."""
    cases = [load_case(p) for p in case_files()]
    by_id = {c.id: c for c in cases}
    if len(by_id) != len(cases):
        raise CalibrationError("two calibration case files share one case.id")
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise CalibrationError(f"unknown case {unknown[0]!r}; known cases: {', '.join(by_id)}")
    return [by_id[i] for i in ids] if ids else cases


# -- running a case -------------------------------------------------------------------------------
MATMUL_APIS = ("matmul", "basic")  # setup.api: the Matmul high-level API, or basic instructions


def _run_matmul(case: CalibrationCase, profile):
    from .. import Simulation, asc
    from ..aicore.matmul_tiling import TCubeTiling, TilingError, validate
    from ..kernels.matmul import matmul_tiled
    from ..kernels.matmul_api import matmul_api_kernel

    s = case.setup
    if s["api"] not in MATMUL_APIS:
        raise CalibrationError(f"{case.file}: key setup.api must be one of {', '.join(MATMUL_APIS)}, got {s['api']!r}")
    kernel = matmul_api_kernel if s["api"] == "matmul" else matmul_tiled
    bm, bn, bk = s["base"]
    tiling = TCubeTiling(
        usedCoreNum=s["cores"],
        M=s["m"],
        N=s["n"],
        Ka=s["k"],
        Kb=s["k"],
        singleCoreM=s["single_m"],
        singleCoreN=s["single_n"],
        singleCoreK=s["k"],
        baseM=bm,
        baseN=bn,
        baseK=bk,
        depthA1=s["depth_a1"],  # base blocks in L1, ADK's units as published
        depthB1=s["depth_b1"],
        stepM=1,
        stepN=1,
        stepKa=s["step_ka"],
        stepKb=s["step_kb"],
        isBias=0,
        iterateOrder=s["iterate_order"],
        dbL0A=s["db_l0"],
        dbL0B=s["db_l0"],
        dbL0C=1,
    )
    try:
        validate(tiling, profile)
    except TilingError as exc:
        raise CalibrationError(f"{case.file}: [setup] is not a valid tiling on {profile.name}: {exc}") from None
    sim = Simulation(profile, numerics=False)
    stream = _open(sim)
    ptrs = [_malloc(sim, size) for size in (s["m"] * s["k"] * 2, s["k"] * s["n"] * 2, s["m"] * s["n"] * 2)]
    args = [asc.GlobalAddress(p, asc.half) for p in ptrs]
    _check(sim.acl.rt.launch_kernel(kernel, s["cores"], stream, *args, tiling, bool(s["b_trans"])), case)
    _check(sim.acl.rt.synchronize_stream(stream), case)
    return sim


def _run_vector_add(case: CalibrationCase, profile):
    from .. import Simulation, asc
    from ..kernels.vector_add import add_kernel

    s = case.setup
    sim = Simulation(profile, numerics=False)
    stream = _open(sim)
    gm = [asc.GlobalAddress(_malloc(sim, s["length"] * 2), asc.half) for _ in range(3)]
    launch = sim.acl.rt.launch_kernel(
        add_kernel, s["cores"], stream, *gm, s["length"], s["tile_length"], s["buffer_num"]
    )
    _check(launch, case)
    _check(sim.acl.rt.synchronize_stream(stream), case)
    return sim


def _open(sim) -> int:
    sim.acl.init()
    sim.acl.rt.set_device(0)
    stream, _ = sim.acl.rt.create_stream()
    return stream


def _malloc(sim, size: int) -> int:
    ptr, ret = sim.acl.rt.malloc(size, 0)
    if ret:
        raise CalibrationError(f"acl.rt.malloc({size}) returned {ret}")
    return ptr


def _check(ret: int, case: CalibrationCase) -> None:
    if ret:
        raise CalibrationError(f"{case.id}: the simulated run failed with ACL error {ret}")


_RUNNERS = MappingProxyType({"matmul": _run_matmul, "vector-add": _run_vector_add})


def simulate(case: CalibrationCase) -> dict:
    """The simulator's figures for a case: ``task_us``, ``kernel_us``, the msprof-named ratios as msprof
    computes them (``ratios``) and as ``ascendsim run`` reports them, over the kernel's span (``span_ratios``)."""
    from ..analysis.pipes import kernel_metrics
    from ..profiles.profile import load_profile

    profile = load_profile(case.profile)
    sim = _RUNNERS[case.kind](case, profile)
    result = sim.finish()
    memory = sim.runtime.ai_cores().memory.stats()
    metrics = kernel_metrics(result.trace, profile)
    return {
        "task_us": round(metrics["kernel_us"] + profile.host.kernel_start_us, 3),
        "kernel_us": metrics["kernel_us"],
        "ratios": msprof_ratios(result.trace, RATIO_PREFIX[case.kind]),
        "span_ratios": {k: v for k, v in metrics["pipe_ratios"].items() if k.startswith(RATIO_PREFIX[case.kind])},
        "l2_hit_rate": memory["l2_hit_rate"],
        "hbm_read_bytes": memory["hbm_read_bytes"],
    }


def msprof_ratios(trace, prefix: str) -> dict[str, float]:
    """Pipe ratios of the last kernel as the published tables compute them: each core's pipe time over
    that core's own execution time (``aic_time`` / ``aiv_time``: its first block's start to its last
    block's end), averaged over the cores (mean pipe time / mean core time). A core that finishes early
    (a tail block) is not diluted by the kernel's span, as :func:`~engine.analysis.pipes.kernel_metrics`'
    ratios (busy / kernel time) are."""
    from ..aicore.pipes import AIC_RATIO_NAMES, AIV_RATIO_NAMES, LANE_NAMES
    from ..analysis.pipes import core_busy, kernel_rows
    from ..trace import Kind

    row = int(kernel_rows(trace)[-1])
    start, end = int(trace.start[row]), int(trace.end[row])
    kind = "AIC" if prefix == "aic_" else "AIV"
    busy = {core: b for core, b in core_busy(trace, start, end).items() if core.startswith(kind)}
    c = trace.columns
    blocks = (c["kind"] == Kind.BLOCK) & (c["end"] > start) & (c["start"] < end)
    spans: dict[str, list[int]] = {}
    for lane, s, e in zip(c["lane"][blocks], c["start"][blocks], c["end"][blocks], strict=True):
        span = spans.setdefault(trace.lanes[int(lane)].process, [int(s), int(e)])
        span[0], span[1] = min(span[0], int(s)), max(span[1], int(e))
    core_time = float(np.mean([spans[core][1] - spans[core][0] for core in busy]))
    names = AIC_RATIO_NAMES if kind == "AIC" else AIV_RATIO_NAMES
    return {
        name: round(float(np.mean([b.get(LANE_NAMES[pipe], 0) for b in busy.values()])) / core_time, 4)
        for pipe, name in names
    }


def busiest(ratios: dict[str, float]) -> str:
    """The pipe with the highest ratio, by its msprof name without core prefix and suffix ("mte2")."""
    name = max(sorted(ratios), key=lambda k: ratios[k])
    return _short(name)


def _short(name: str) -> str:
    """A ratio's pipe without core prefix and suffix: "aic_mac_ratio" -> "mac"."""
    return name.split("_", 1)[1].removesuffix("_ratio")


def compare(case: CalibrationCase, sim: dict) -> dict:
    """One row of the calibration table: every published figure beside the simulated one, with its error.

    The task time's error is relative ((simulated - published) / published); a ratio's error is the
    difference in points of the core time (simulated - published).
    """
    pub_task = case.published["task_us"]
    task_error = (sim["task_us"] - pub_task) / pub_task
    figures = [{"figure": "task_us", "published": pub_task, "simulated": sim["task_us"], "error": round(task_error, 4)}]
    figures[0].update(tolerance=TASK_TOLERANCE, within=abs(task_error) <= TASK_TOLERANCE)
    for name, value in case.published_ratios.items():
        got = sim["ratios"].get(name, 0.0)
        row = {"figure": name, "published": value, "simulated": got, "error": round(got - value, 4)}
        tolerance = RATIO_TOLERANCE.get(_short(name))
        if tolerance is not None:
            row.update(tolerance=tolerance, within=abs(got - value) <= tolerance + 1e-9)
        figures.append(row)
    pub_busiest = busiest(case.published_ratios)
    sim_busiest = busiest({k: v for k, v in sim["ratios"].items() if k in case.published_ratios})
    ok_figures = all(f.get("within", True) for f in figures)
    return {
        "id": case.id,
        "kind": case.kind,
        "title": case.title,
        "profile": case.profile,
        "source": {**case.source, "url": case.url},
        "setup": case.setup,
        "figures": figures,
        "task_error": round(task_error, 4),
        "busiest": {"published": pub_busiest, "simulated": sim_busiest},
        "l2_hit_rate": sim["l2_hit_rate"],
        "hbm_read_bytes": sim["hbm_read_bytes"],
        "within_tolerance": ok_figures and pub_busiest == sim_busiest,
    }


def calibrate(ids: list[str] | tuple[str, ...] = ()) -> dict:
    """Run every case (or those named) and compare; the document ``ascendsim calibrate --json`` prints."""
    runs: dict[str, dict] = {}  # cases that publish one setup twice (two implementations) run it once
    rows = []
    for case in load_cases(ids):
        key = repr((case.profile, case.kind, sorted(case.setup.items())))
        if key not in runs:
            runs[key] = simulate(case)
        rows.append(compare(case, runs[key]))
    errors = [abs(r["task_error"]) for r in rows]
    return {
        "tolerance": {"task_us": TASK_TOLERANCE, "busiest_pipe": "must match", **RATIO_TOLERANCE},
        "cases": rows,
        "summary": {
            "cases": len(rows),
            "within_tolerance": sum(r["within_tolerance"] for r in rows),
            "max_abs_task_error": round(max(errors), 4) if errors else None,
            "geomean_task_ratio": round(math.exp(sum(math.log(1 + r["task_error"]) for r in rows) / len(rows)), 4)
            if rows
            else None,
        },
    }
