"""The roofline of each kernel: arithmetic intensity and achieved throughput against the roofs.

Intensity is flops per byte: per byte moved between GM and the cores (every GM read and write of an
instruction-level kernel's pipes; an op-level kernel's operands and result once) for the L2 and
per-core path roofs, and per byte that actually crossed HBM (L2 misses and writes, measured by the
L2 model) for the HBM roof. The roofs are the compute peak (the Cube's fp16 peak for Cube work, the
vector units' for vector work), and each memory level's bandwidth times its intensity: HBM and L2
(shared by all cores) and the per-core GM path summed over the cores the kernel used.
"""

from __future__ import annotations

from ..detail import touches_gm
from ..simulation import RunResult
from ..trace import Kind
from .pipes import kernel_core_type, kernel_rows

MAX_KERNELS = 16


def roofline(result: RunResult) -> list[dict]:
    t = result.trace
    c = t.columns
    p = result.profile
    names = t.names
    gm = t.rows_with(touches_gm) & (c["kind"] == Kind.MOVE)
    blocks = c["kind"] == Kind.BLOCK
    out = []
    for row in kernel_rows(t)[:MAX_KERNELS]:
        s, e = int(c["start"][row]), int(c["end"][row])
        seconds = max(1, e - s) / 1e12
        flops = int(c["flops"][row])
        inside = (c["start"] >= s) & (c["start"] < e)
        cores = {t.lanes[int(i)].process for i in c["lane"][inside & blocks]}
        memory = next((k for k in result.extra.get("kernel_memory", []) if k["start_ps"] == s), None)
        hbm = None
        if memory is not None:
            hbm = memory["hbm_read_bytes"] + memory["hbm_write_bytes"]
        if cores:  # instruction level: the bytes its pipes moved
            moved = int(c["nbytes"][inside & gm].sum())
            cube, _n_cores = kernel_core_type(t, p, cores, s, e)
            per_core_gbps = p.paths.gm_to_l1 if cube else p.paths.gm_to_ub
            used = len(cores)
        else:  # op level: operands and result once
            moved = int(c["nbytes"][row])
            cube, _n_cores, used, per_core_gbps = True, p.cube_cores, p.cube_cores, p.paths.gm_to_l1
        vector_peak = p.vector_cores * p.compute.vector_repeat_bytes / 2 * p.chip.clock_mhz * 1e6  # fp16 lanes
        peak = p.peak_fp16_flops if cube else vector_peak
        intensity = flops / moved if moved else 0.0
        if hbm is None:
            hbm = moved  # op level: operands and result cross HBM once
        hbm_intensity = flops / hbm if hbm else float("inf")
        roofs = {
            "compute_tflops": round(peak / 1e12, 3),
            "hbm_tflops": round(min(p.chip.hbm_gbps * 1e9 * hbm_intensity / 1e12, 1e9), 3),
            "l2_tflops": round(p.chip.l2_gbps * 1e9 * intensity / 1e12, 3),
            "core_paths_tflops": round(per_core_gbps * 1e9 * used * intensity / 1e12, 3),
        }
        bound = min(roofs, key=roofs.get)
        achieved = flops / seconds / 1e12
        out.append(
            {
                "kernel": names[c["name"][row]],
                "flops": flops,
                "gm_bytes": moved,
                "hbm_bytes": hbm,
                "intensity_flops_per_byte": round(intensity, 3),
                "hbm_intensity_flops_per_byte": round(hbm_intensity, 3) if hbm else None,
                "achieved_tflops": round(achieved, 3),
                "roofs": roofs,
                "bound_by": bound.removesuffix("_tflops"),
                "percent_of_roof": round(100 * achieved / roofs[bound], 2) if roofs[bound] else 0.0,
                "ridge_point_hbm": round(peak / (p.chip.hbm_gbps * 1e9), 2),
            }
        )
    return out
