"""Hardware profiles: one TOML file per chip in ``engine/profiles``, loaded into frozen dataclasses.

Every number in a profile file carries its source in a comment, opening with the tag of a source
listed in ``profiles/sources.toml`` (read by :mod:`engine.profiles.sources`); numbers with no public
source are marked ``ASSUMPTION`` with the reasoning. A profile may name
``based_on = "other"`` to take every section it does not define from another profile (used by
``measured-accelerator``, whose host side is measured and whose AI cores are the 910B1's).

A malformed or incomplete file raises :class:`ProfileError` naming the file, the key and what was
expected. Nothing here holds module-level mutable state: :func:`load_profile` reads the file each
time (it is cheap) and returns an immutable object.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

PROFILE_DIR = Path(__file__).parent
SOURCES_NAME = "sources.toml"  # beside the profiles: the sources their comments cite (not a profile)
DEFAULT_PROFILE = "ascend910b1"


class ProfileError(ValueError):
    """A profile file or name is wrong; the message names the file, the key and the expectation."""


@dataclass(frozen=True)
class Chip:
    name: str
    title: str
    architecture: str  # "split": separate AIC (Cube) and AIV (Vector) cores; "coupled": one core has both
    aic_cores: int  # Cube cores (split) or combined Cube+Vector cores (coupled)
    aiv_cores: int  # Vector cores (split) or vector-only cores (coupled, e.g. 310P3)
    clock_mhz: float
    device_memory_bytes: int
    l2_bytes: int
    hbm_gbps: float  # shared by all cores
    l2_gbps: float  # shared by all cores


@dataclass(frozen=True)
class Buffers:
    """Per-core on-chip buffers in bytes (0 = the buffer does not exist on this chip)."""

    l1: int
    l0a: int
    l0b: int
    l0c: int
    ub: int
    bt: int
    fb: int
    ub_align: int
    l1_align: int
    l0a_align: int
    l0b_align: int
    l0c_align: int


@dataclass(frozen=True)
class CorePaths:
    """Per-core maximum rate of each data path, GB/s."""

    gm_to_l1: float
    gm_to_ub: float
    ub_to_gm: float
    l1_to_gm: float
    l0c_to_gm: float
    l0c_to_l1: float
    l1_to_l0a: float
    l1_to_l0b: float
    ub_to_ub: float


@dataclass(frozen=True)
class Compute:
    cube_m: int
    cube_n: int
    cube_k: int
    cube_fp32_divisor: int  # fp32 inputs run at 1/divisor of the fp16 rate
    vector_repeat_bytes: int  # bytes one vector repeat processes per cycle
    vector_slow_divisor: int  # exp/ln/sqrt/div take this many cycles per repeat
    mte_startup_cycles: int  # fixed latency of every MTE/FIX transfer
    cube_startup_cycles: int
    vector_startup_cycles: int
    flag_cycles: int  # set_flag / wait_flag / barrier execution
    cross_flag_cycles: int  # a cross-core flag from an AIC to its AIVs (or back) arriving
    gm_l2_latency_cycles: int  # what a GM read that hits L2 adds to its MTE instruction after its requests streamed
    gm_hbm_latency_cycles: int  # the same for a GM read that goes to HBM
    gm_request_bytes: int  # largest GM read request of an MTE (requests never cross a row or this alignment)


@dataclass(frozen=True)
class Scalar:
    """Scalar-unit cycles to issue one instruction: computing its addresses and parameters (address
    arithmetic, loop control) and dispatching it into its pipe's queue. The scalar unit runs ahead of the
    pipes, which work in parallel with it; a block is scalar-bound when these cycles add up to more than
    its busiest pipe's work (:mod:`engine.aicore.scalar_unit`)."""

    flag: int  # set_flag / wait_flag (and the queue calls that imply them), barriers, cross-core flags
    vector: int  # a vector instruction (and a UB -> UB copy)
    copy_ub: int  # a DataCopy between GM and UB, or L1 -> GM
    copy_l1: int  # a DataCopy GM -> L1 (or L0) of a Cube kernel: ND -> NZ parameters
    load_l0: int  # a LoadData L1 -> L0A / L0B
    mmad: int  # an Mmad
    fixpipe: int  # a Fixpipe L0C -> GM or L1
    matmul_api_k_step: int  # the Matmul API's own iteration logic per K step of its loop
    matmul_api_copy: int  # the Matmul API's bookkeeping per GM -> L1 copy it issues


@dataclass(frozen=True)
class Host:
    h2d_pinned: tuple[tuple[float, float], ...]  # (MiB, GB/s) points
    h2d_pageable: tuple[tuple[float, float], ...]
    d2h_pinned: tuple[tuple[float, float], ...]
    d2h_pageable: tuple[tuple[float, float], ...]
    d2d_gbps: float
    h2h_gbps: float
    copy_engines_h2d: int
    copy_engines_d2h: int
    copy_engines_d2d: int
    api_call_us: float  # a cheap runtime call (create/destroy, query)
    init_us: float
    set_device_us: float
    malloc_us: float
    free_us: float
    memcpy_call_us: float  # enqueueing an async copy
    launch_call_us: float  # enqueueing a kernel
    event_call_us: float  # record / wait event enqueue
    sync_call_us: float  # entering and leaving a blocking synchronize
    kernel_start_us: float  # device-side: task scheduler to all cores running
    tiling_us_per_candidate: float  # host time the automatic tiler spends per candidate it scores


@dataclass(frozen=True)
class Limits:
    max_block_dim: int
    stream_depth: int
    max_streams: int
    max_events: int
    flag_event_ids: int
    cross_flag_ids: int  # CrossCoreSetFlag flag ids (0 on chips without split AIC/AIV)
    cross_flag_max_count: int  # sets one cross-core flag counter can hold
    malloc_align: int
    malloc_round: int
    malloc_pad: int


@dataclass(frozen=True)
class OpMatmul:
    """Op-level (library) matmul cost: a roofline, or a measured table when ``measured`` is non-empty."""

    peak_efficiency: float  # fraction of peak a large, well-tiled library matmul reaches
    base_m: int  # output tile the library kernel gives one core (sets wave and tail quantisation)
    base_n: int
    measured: tuple[tuple[float, float], ...]  # (n of an n*n*n fp16 matmul, seconds per call)
    # the device the measured table comes from (0: no other device, the op runs on this chip's Cube cores)
    peak_tflops: float = 0.0  # its fp16 peak
    hbm_gbps: float = 0.0  # its memory bandwidth


@dataclass(frozen=True)
class Profile:
    chip: Chip
    buffers: Buffers
    paths: CorePaths
    compute: Compute
    scalar: Scalar
    host: Host
    limits: Limits
    op_matmul: OpMatmul
    source_file: str = ""

    @property
    def name(self) -> str:
        return self.chip.name

    @property
    def ps_per_cycle(self) -> float:
        return 1e6 / self.chip.clock_mhz

    @property
    def cube_cores(self) -> int:
        return self.chip.aic_cores

    @property
    def vector_cores(self) -> int:
        """Cores that can run a vector-only kernel."""
        if self.chip.architecture == "coupled":
            return self.chip.aic_cores + self.chip.aiv_cores
        return self.chip.aiv_cores

    @property
    def peak_fp16_flops(self) -> float:
        """The Cube cores' fp16 peak (flop/s): cores x one m*n*k fractal per cycle x 2 x clock."""
        c = self.compute
        return self.chip.aic_cores * c.cube_m * c.cube_n * c.cube_k * 2 * self.chip.clock_mhz * 1e6

    @property
    def vector_peak_fp16_flops(self) -> float:
        """The vector units' fp16 peak (flop/s): one repeat of fp16 lanes per cycle on every vector core."""
        return self.vector_cores * self.compute.vector_repeat_bytes / 2 * self.chip.clock_mhz * 1e6

    @property
    def op_measured_elsewhere(self) -> bool:
        """True when op-level matmul times come from another device's measured table."""
        return bool(self.op_matmul.measured) and self.op_matmul.peak_tflops > 0

    @property
    def op_peak_flops(self) -> float:
        """The fp16 peak of the unit that runs an op-level matmul: the measured device, or the Cube cores."""
        return self.op_matmul.peak_tflops * 1e12 if self.op_measured_elsewhere else self.peak_fp16_flops

    @property
    def op_hbm_gbps(self) -> float:
        return self.op_matmul.hbm_gbps if self.op_measured_elsewhere and self.op_matmul.hbm_gbps else self.chip.hbm_gbps

    def describe(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["derived"] = {
            "peak_fp16_tflops": round(self.peak_fp16_flops / 1e12, 1),
            "vector_peak_fp16_tflops": round(self.vector_peak_fp16_flops / 1e12, 1),
            "op_matmul_peak_tflops": round(self.op_peak_flops / 1e12, 1),
            "ps_per_cycle": round(self.ps_per_cycle, 3),
            "vector_cores": self.vector_cores,
        }
        return out


_SECTIONS = MappingProxyType(
    {
        "chip": Chip,
        "buffers": Buffers,
        "paths": CorePaths,
        "compute": Compute,
        "scalar": Scalar,
        "host": Host,
        "limits": Limits,
        "op_matmul": OpMatmul,
    }
)


def list_profiles() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml") if p.name != SOURCES_NAME)


def profile_path(name: str) -> Path:
    path = PROFILE_DIR / f"{name}.toml"
    if not path.is_file() or path.name == SOURCES_NAME:
        raise ProfileError(f"unknown profile {name!r}; known profiles: {', '.join(list_profiles())}")
    return path


def load_profile(name_or_path: str | Path = DEFAULT_PROFILE) -> Profile:
    """Load a profile by name (``ascend910b1``) or by path to a TOML file."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = profile_path(str(name_or_path))
    raw = _read_toml(path)
    seen = {path.stem}
    while "based_on" in raw:
        base_name = raw.pop("based_on")
        if not isinstance(base_name, str) or base_name in seen:
            raise ProfileError(f"{path.name}: key 'based_on' must name another profile, got {base_name!r}")
        seen.add(base_name)
        base = _read_toml(profile_path(base_name))
        merged = {k: v for k, v in base.items() if k != "based_on"}
        for section, values in raw.items():
            merged[section] = {**merged.get(section, {}), **values} if isinstance(values, dict) else values
        if "based_on" in base:
            merged["based_on"] = base["based_on"]
        raw = merged
    return _build(path, raw)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{path.name}: not valid TOML ({exc})") from exc


def _build(path: Path, raw: dict[str, Any]) -> Profile:
    unknown = set(raw) - set(_SECTIONS)
    if unknown:
        raise ProfileError(f"{path.name}: unknown section [{sorted(unknown)[0]}]; expected one of {sorted(_SECTIONS)}")
    parts = {}
    for section, cls in _SECTIONS.items():
        table = raw.get(section)
        if not isinstance(table, dict):
            raise ProfileError(f"{path.name}: missing section [{section}]")
        parts[section] = _build_section(path, section, cls, table)
    profile = Profile(**parts, source_file=str(path))
    _check_consistency(path, profile)
    return profile


def _build_section(path: Path, section: str, cls: type, table: dict[str, Any]) -> Any:
    names = {f.name for f in fields(cls)}
    extra = set(table) - names
    if extra:
        raise ProfileError(f"{path.name}: unknown key {section}.{sorted(extra)[0]}")
    values = {}
    for f in fields(cls):
        key = f"{section}.{f.name}"
        if f.name not in table:
            if f.default is not dataclasses.MISSING:  # an optional key
                values[f.name] = f.default
                continue
            raise ProfileError(f"{path.name}: missing key {key} (expected {_expected(f.type)})")
        values[f.name] = _convert(path, key, f.type, table[f.name])
    return cls(**values)


def _expected(type_name: Any) -> str:
    return {
        "int": "an integer >= 0",
        "float": "a number >= 0",
        "str": "a string",
    }.get(str(type_name), "a list of [x, y] number pairs")


def _convert(path: Path, key: str, type_name: Any, value: Any) -> Any:
    kind = str(type_name)
    bad = ProfileError(f"{path.name}: key {key} must be {_expected(kind)}, got {value!r}")
    if kind == "str":
        if not isinstance(value, str):
            raise bad
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad
        return value
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or not math.isfinite(value):
            raise bad
        return float(value)
    # a table of pairs
    if not isinstance(value, list):
        raise bad
    pairs = []
    for item in value:
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in item)
        ):
            raise bad
        pairs.append((float(item[0]), float(item[1])))
    if pairs != sorted(pairs):
        raise ProfileError(f"{path.name}: key {key} must list its points in increasing order, got {value!r}")
    return tuple(pairs)


def _check_consistency(path: Path, p: Profile) -> None:
    checks = [
        ("chip.architecture", p.chip.architecture in ("split", "coupled"), "'split' or 'coupled'"),
        ("chip.aic_cores", p.chip.aic_cores >= 1, "at least 1"),
        ("chip.clock_mhz", p.chip.clock_mhz > 0, "greater than 0"),
        ("chip.hbm_gbps", p.chip.hbm_gbps > 0, "greater than 0"),
        ("chip.l2_gbps", p.chip.l2_gbps > 0, "greater than 0"),
        ("host.h2d_pinned", len(p.host.h2d_pinned) >= 2, "at least two points"),
        ("host.h2d_pageable", len(p.host.h2d_pageable) >= 2, "at least two points"),
        ("host.d2h_pinned", len(p.host.d2h_pinned) >= 2, "at least two points"),
        ("host.d2h_pageable", len(p.host.d2h_pageable) >= 2, "at least two points"),
        ("host.copy_engines_h2d", p.host.copy_engines_h2d >= 1, "at least 1"),
        ("host.copy_engines_d2h", p.host.copy_engines_d2h >= 1, "at least 1"),
        ("host.copy_engines_d2d", p.host.copy_engines_d2d >= 1, "at least 1"),
        ("limits.malloc_align", p.limits.malloc_align >= 1, "at least 1"),
        ("limits.malloc_round", p.limits.malloc_round >= 1, "at least 1"),
        ("limits.flag_event_ids", p.limits.flag_event_ids >= 1, "at least 1"),
        ("compute.gm_request_bytes", p.compute.gm_request_bytes >= 32, "at least 32"),
        ("op_matmul.peak_efficiency", 0 < p.op_matmul.peak_efficiency <= 1, "in (0, 1]"),
    ]
    for key, ok, expected in checks:
        if not ok:
            raise ProfileError(f"{path.name}: key {key} must be {expected}")
    for name in ("l1", "l0a", "l0b", "l0c", "ub"):
        if getattr(p.buffers, name) <= 0:
            raise ProfileError(f"{path.name}: key buffers.{name} must be greater than 0")
