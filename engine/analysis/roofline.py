"""The roofline of each kernel shape: arithmetic intensity and achieved throughput against the roofs.

Intensity is flops per byte: per byte moved between GM and the cores (every GM read and write of an
instruction-level kernel's pipes; an op-level kernel's operands and result once) for the L2 and
per-core path roofs, and per byte that actually crossed HBM (L2 misses and writes, measured by the
L2 model) for the HBM roof. Every roof belongs to the unit that did the work
(:func:`.pipes.kernel_units`): the compute roof is the Cube's fp16 peak for Cube work, the vector
units' for vector work, and for an op-level matmul the peak of the device that ran it; the memory
roofs are HBM and L2 (shared by all cores) and the per-core GM path summed over the cores the kernel
used. An op-level matmul timed from another device's measurements has that device's compute and
memory roofs only (its L2 and core paths are not in the profile).

Kernels of the same shape (same name, flops and bytes) are one line with their ``count``; their
achieved throughput is their flops over their summed time. At most ``MAX_KERNELS`` instruction-level
kernels are examined (each needs a pass over the trace); op-level kernels are all counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType

from ..simulation import RunResult
from ..trace import Kind
from ..trace.detail import touches_gm
from .pipes import kernel_core_type, kernel_rows, kernel_units

MAX_KERNELS = 16


@dataclass(frozen=True)
class RooflineRow:
    """One kernel shape against its roofs (TFLOPS each, by name: ``compute``, ``hbm``, and ``l2`` and
    ``core_paths`` when the profile has those paths)."""

    kernel: str
    count: int  # kernels of this shape
    flops: int  # of one kernel
    gm_bytes: int  # moved between GM and the cores, by one kernel
    hbm_bytes: int  # that crossed HBM
    intensity_flops_per_byte: float  # over gm_bytes
    hbm_intensity_flops_per_byte: float | None  # over hbm_bytes (None: nothing crossed HBM)
    roofs: Mapping[str, float]  # compute_tflops, hbm_tflops[, l2_tflops, core_paths_tflops]
    ridge_point_hbm: float
    achieved_tflops: float
    bound_by: str  # the lowest roof's name: compute, hbm, l2 or core_paths
    percent_of_roof: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "roofs", MappingProxyType(dict(self.roofs)))

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["roofs"] = dict(self.roofs)
        return out


def _roofs(peak: float, hbm_gbps: float, hbm_intensity: float, intensity: float, paths_gbps: tuple | None) -> dict:
    roofs = {
        "compute_tflops": round(peak / 1e12, 3),
        "hbm_tflops": round(min(hbm_gbps * 1e9 * hbm_intensity / 1e12, 1e9), 3),
    }
    if paths_gbps is not None:
        roofs["l2_tflops"] = round(paths_gbps[0] * 1e9 * intensity / 1e12, 3)
        roofs["core_paths_tflops"] = round(paths_gbps[1] * 1e9 * intensity / 1e12, 3)
    return roofs


def roofline(result: RunResult) -> list[RooflineRow]:
    t = result.trace
    c = t.columns
    p = result.profile
    names = t.names
    gm = t.rows_with(touches_gm) & (c["kind"] == Kind.MOVE)
    blocks = c["kind"] == Kind.BLOCK
    rows = kernel_rows(t)
    units, _work, peaks = kernel_units(t, p, rows)
    shapes: dict[tuple, dict] = {}
    examined = 0
    for j, row in enumerate(rows):
        s, e = int(c["start"][row]), int(c["end"][row])
        flops = int(c["flops"][row])
        if units[j] == "op":  # operands and result once
            moved = hbm = int(c["nbytes"][row])
            key = ("op", int(c["name"][row]), flops, moved)
            if key not in shapes:
                elsewhere = p.op_measured_elsewhere
                paths = None if elsewhere else (p.chip.l2_gbps, p.paths.gm_to_l1 * p.cube_cores)
                shapes[key] = _entry(names[c["name"][row]], flops, moved, hbm, peaks[j], p.op_hbm_gbps, paths)
        else:
            if examined >= MAX_KERNELS:
                continue
            examined += 1
            inside = (c["start"] >= s) & (c["start"] < e)
            cores = {t.lanes[int(i)].process for i in c["lane"][inside & blocks]}
            memory = next((k for k in result.extra.get("kernel_memory", []) if k["start_ps"] == s), None)
            moved = int(c["nbytes"][inside & gm].sum())
            hbm = memory["hbm_read_bytes"] + memory["hbm_write_bytes"] if memory is not None else moved
            cube, _n = kernel_core_type(t, p, cores, s, e)
            per_core = p.paths.gm_to_l1 if cube else p.paths.gm_to_ub
            key = ("kernel", int(c["name"][row]), flops, moved, hbm)
            if key not in shapes:
                paths = (p.chip.l2_gbps, per_core * len(cores))
                shapes[key] = _entry(names[c["name"][row]], flops, moved, hbm, peaks[j], p.chip.hbm_gbps, paths)
        entry = shapes[key]
        entry["count"] += 1
        entry["_ps"] += max(1, e - s)
    return [_finish(entry) for entry in shapes.values()]


def _entry(name: str, flops: int, moved: int, hbm: int, peak: float, hbm_gbps: float, paths) -> dict:
    intensity = flops / moved if moved else 0.0
    hbm_intensity = flops / hbm if hbm else float("inf")
    return {
        "kernel": name,
        "count": 0,
        "flops": flops,
        "gm_bytes": moved,
        "hbm_bytes": hbm,
        "intensity_flops_per_byte": round(intensity, 3),
        "hbm_intensity_flops_per_byte": round(hbm_intensity, 3) if hbm else None,
        "roofs": _roofs(peak, hbm_gbps, hbm_intensity, intensity, paths),
        "ridge_point_hbm": round(peak / (hbm_gbps * 1e9), 2),
        "_ps": 0,
    }


def _finish(entry: dict) -> RooflineRow:
    seconds = entry.pop("_ps") / 1e12
    achieved = entry["flops"] * entry["count"] / seconds / 1e12
    roofs = entry["roofs"]
    bound = min(roofs, key=roofs.get)
    return RooflineRow(
        **entry,
        achieved_tflops=round(achieved, 3),
        bound_by=bound.removesuffix("_tflops"),
        percent_of_roof=round(100 * achieved / roofs[bound], 2) if roofs[bound] else 0.0,
    )
