"""Op-level matmul: a library operator (like CANN's aclnnMatmul) on device buffers.

``C[m, n] = A[m, k] @ B[k, n]`` with fp16 inputs, fp32 accumulation and an fp16 or fp32 output;
the numbers are computed for real by the Cube's one arithmetic (:mod:`engine.aicore.cube`: the same bytes
whatever BLAS library or thread count numpy runs with, so a trainee's process and the grader's replay
agree), K accumulated in mmads of :data:`OP_BASE_K`. Its duration is not simulated instruction by
instruction but costed:

* with a measured table (``op_matmul.measured``: seconds per call of n×n×n), by log-log
  interpolation at the equivalent size ``(m·n·k)^(1/3)``, minus the profile's kernel start
  (the table's calls include it; the runtime adds it separately), and never faster than the peak of
  the device the table was measured on (``op_matmul.peak_tflops``);
* otherwise by a roofline: compute time at ``peak_efficiency`` of the Cube peak, quantised to the
  library's output tiles (``base_m × base_n`` per core, in waves over the cores, K padded to 16),
  against the HBM time of reading A and B and writing C; the slower one wins.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ..aicore import cube
from ..host import acl_codes as C
from ..host.acl_codes import AclError
from ..profiles.profile import Profile

if TYPE_CHECKING:
    from ..simulation import Simulation

# the library's K step per mmad: CANN does not publish aclnnMatmul's tiling; the simulator's assumption is the
# K of the 128 x 256 x 64 base block that engine/aicore/matmul_tiling.py's doc gives as the recommended one
OP_BASE_K = 64
OUT_DTYPES = MappingProxyType({"fp16": np.float16, "fp32": np.float32})


def op_matmul_seconds(profile: Profile, m: int, n: int, k: int, out_bytes: int = 2) -> float:
    om = profile.op_matmul
    if om.measured:
        sizes = [math.log(p[0]) for p in om.measured]
        times = [math.log(p[1]) for p in om.measured]
        x = math.log(max(m * n * k, 1)) / 3
        if x <= sizes[0]:
            seconds = om.measured[0][1]
        elif x >= sizes[-1]:  # beyond the table: the last measured throughput
            seconds = om.measured[-1][1] * (m * n * k) / om.measured[-1][0] ** 3
        else:
            i = bisect_left(sizes, x)
            f = (x - sizes[i - 1]) / (sizes[i] - sizes[i - 1])
            seconds = math.exp(times[i - 1] + f * (times[i] - times[i - 1]))
        # never faster than the peak of the unit that ran it (the table's device, see Profile.op_peak_flops)
        return max(seconds - profile.host.kernel_start_us * 1e-6, 1e-6, 2 * m * n * k / profile.op_peak_flops)
    cores = profile.chip.aic_cores
    tiles = math.ceil(m / om.base_m) * math.ceil(n / om.base_n)
    waves = math.ceil(tiles / cores)
    k16 = math.ceil(k / profile.compute.cube_k) * profile.compute.cube_k
    per_core_flops = profile.peak_fp16_flops / cores * om.peak_efficiency
    compute = waves * 2 * om.base_m * om.base_n * k16 / per_core_flops
    memory = (m * k * 2 + k * n * 2 + m * n * out_bytes) / (profile.chip.hbm_gbps * 1e9)
    return max(compute, memory)


class OpMatmul:
    """A planned library matmul: checked shapes and buffers, its cost (a fixed duration: the runtime writes
    its row on the AI-core lane), and its numerics."""

    core_type = "cube"

    def __init__(self, sim: Simulation, m: int, n: int, k: int, out_dtype: str, a, b, c) -> None:
        self.sim = sim
        self.m, self.n, self.k = m, n, k
        self.out_dtype = out_dtype
        self.a, self.b, self.c = a, b, c  # (allocation, offset)
        self.block_dim = sim.profile.chip.aic_cores
        self.name = f"matmul {m}x{n}x{k}"
        out_bytes = np.dtype(OUT_DTYPES[out_dtype]).itemsize
        self.flops = 2 * m * n * k
        self.nbytes = m * k * 2 + k * n * 2 + m * n * out_bytes
        self.seconds = op_matmul_seconds(sim.profile, m, n, k, out_bytes)
        self.duration_ps = max(1, round(self.seconds * 1e12))  # on the cores, after the launch overhead
        self.reads = (_rng(a, m * k * 2), _rng(b, k * n * 2))
        self.writes = (_rng(c, m * n * out_bytes),)
        self._result: np.ndarray | None = None

    @classmethod
    def plan(cls, sim: Simulation, a: int, b: int, c: int, m: int, n: int, k: int, out_dtype: str) -> OpMatmul:
        for name, value in (("m", m), ("n", n), ("k", k)):
            if not isinstance(value, int) or value <= 0:
                raise AclError(
                    C.ACL_ERROR_INVALID_PARAM,
                    f"matmul: {name} must be a positive integer, got {value!r}",
                    f"matmul: {name} 必须是正整数，实际为 {value!r}",
                )
        if out_dtype not in OUT_DTYPES:
            raise AclError(
                C.ACL_ERROR_INVALID_PARAM,
                f"matmul: out_dtype must be 'fp16' or 'fp32', got {out_dtype!r}",
                f"matmul: out_dtype 必须是 'fp16' 或 'fp32'，实际为 {out_dtype!r}",
            )
        out_bytes = np.dtype(OUT_DTYPES[out_dtype]).itemsize
        space = sim.devmem.space
        ra = space.resolve(a, m * k * 2, "matmul A")
        rb = space.resolve(b, k * n * 2, "matmul B")
        rc = space.resolve(c, m * n * out_bytes, "matmul C")
        return cls(sim, m, n, k, out_dtype, ra, rb, rc)

    def finish(self) -> None:
        """Write C when the kernel ends (reading A and B as they are then)."""
        sim = self.sim
        if not sim.numerics:
            return
        mem = sim.devmem
        (aa, ao), (ba, bo), (ca, co) = self.a, self.b, self.c
        m, n, k = self.m, self.n, self.k
        a = mem.view(aa)[ao : ao + m * k * 2].view(np.float16).reshape(m, k)
        b = mem.view(ba)[bo : bo + k * n * 2].view(np.float16).reshape(k, n)
        out = cube.fixpipe(cube.matmul(a, b, OP_BASE_K), OUT_DTYPES[self.out_dtype])
        mem.view(ca)[co : co + out.nbytes] = out.reshape(-1).view(np.uint8)


def _rng(side, count: int):
    alloc, off = side
    return (alloc.where, alloc.ident), off, off + count
