"""Lesson 11 scenario: C = LeakyReLU(A @ B) at 512 x 2048 x 256 on ascend910b1, a mixed (MIX 1:2) kernel.

Also the host program the drive runs the trainee's kernel and tiling with, the check's inputs and expected C,
the hidden cases and the truths of the questions (computed here with the reference solution).
"""

from __future__ import annotations

import numpy as np

from engine import Simulation, TilingContext, asc
from engine.host.acl_codes import ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from engine.scenarios.kernels import matmul_tolerance
from lessons.hostkit import check, kernel_us, uniform
from lessons.selectors import trace_lane_facts

MAIN = (512, 2048, 256)  # 4 AI cores of 8 base blocks of 128 x 256: the slots are reused, the vectors matter
ALPHA = 0.001  # the slope of CANN's MatmulLeakyReluCustom sample (C = C > 0 ? C : C * 0.001)
SEED = 11
CORES = 24  # ascend910b1's AI cores (24 AIC + 48 AIV)
SLOTS = 2  # the workspace slots the lesson's host gives each AI core
BASE_M, BASE_N = 128, 256  # the host tiling's base block (the reference's and the stub's)


def inputs(m: int, n: int, k: int, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    return uniform(seed, m * k).reshape(m, k), uniform(seed + 1, k * n).reshape(k, n)


def expected(m: int, n: int, k: int, seed: int = SEED, alpha: float = ALPHA) -> np.ndarray:
    """LeakyReLU(A @ B) in fp32 (fp16 inputs, fp32 accumulation): what the fp16 C is compared with."""
    a, b = inputs(m, n, k, seed)
    c = a.astype(np.float32) @ b.astype(np.float32)
    return np.maximum(c, np.float32(alpha) * c)


def tolerance(ref: np.ndarray, k: int) -> float:
    return matmul_tolerance(ref, k, "fp16")


def core_bytes(run, core_type: str, pipe: str) -> dict[int, int]:
    """Bytes each core of ``core_type`` moved on ``pipe`` (its lanes of the trace), by core number."""
    t = run.trace
    out: dict[int, int] = {}
    for lane, f in enumerate(trace_lane_facts(t)):
        if f.kind == "pipe" and f.core_type == core_type and f.pipe == pipe:
            out[f.core] = out.get(f.core, 0) + int(t.columns["nbytes"][np.flatnonzero(t.lane == lane)].sum())
    return out


# -- hidden cases (lessons/hidden.py): drawn when the check runs, never shown ------------------------------------
def draw_uneven(rng: np.random.Generator) -> dict:
    """M whose last base block has an odd number of rows (sometimes a single row), N not a multiple of the base
    block's 256 columns, on ascend910b1."""
    tail = 1 if rng.integers(0, 2) else 2 * int(rng.integers(1, 60)) + 1
    m = BASE_M * int(rng.integers(1, 4)) + tail
    n = 16 * int(rng.integers(17, 48))
    n += 16 if n % BASE_N == 0 else 0
    k = 16 * int(rng.integers(4, 16))  # 64 .. 240: a K slice of 64 and a shorter one
    return {"m": m, "n": n, "k": k, "seed": int(rng.integers(12, 1 << 20)), "slots": 2}


def draw_other_chip(rng: np.random.Generator) -> dict:
    """ascend910b3 (20 AI cores; source: INI), more base blocks per AI core than the visible case and one workspace
    slot per AI core instead of two (a slot reused at every block)."""
    return {
        "m": BASE_M * int(rng.choice([3, 5])),  # 3 or 5 AI cores
        "n": BASE_N * int(rng.integers(4, 7)),
        "k": 16 * int(rng.integers(4, 9)),
        "seed": int(rng.integers(12, 1 << 20)),
        "slots": 1,
        "profile": "ascend910b3",
    }


# -- the host program --------------------------------------------------------------------------------------------
def run(sim: Simulation, kernel, tiling_fn, m: int, n: int, k: int, seed: int = SEED, slots: int = SLOTS):
    """Inputs in, the host tiling (``tiling_fn``, for the chip's AI cores), the GM workspace it asks for, the kernel
    with A, B, C, the workspace and the tiling, C back (fp16, m x n)."""
    acl = sim.acl
    a, b = inputs(m, n, k, seed) if sim.numerics else (np.zeros((m, k), np.float16), np.zeros((k, n), np.float16))
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "acl.rt.set_device")
    stream, ret = acl.rt.create_stream()
    check(ret, "acl.rt.create_stream")
    context = TilingContext()
    workspace = tiling_fn(context, m, n, k, sim.profile.chip.aic_cores, ALPHA, slots)
    sizes = [a.nbytes, b.nbytes, m * n * 2, int(workspace)]
    dev = []
    for size in sizes:
        p, ret = acl.rt.malloc(max(1, size), ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        dev.append(p)
    for p, name, shape in zip(dev, "ABC", ((m, k), (k, n), (m, n)), strict=False):
        sim.name_tensor(p, name, shape, "float16")
    host = []
    for size in sizes[:3]:
        h, ret = acl.rt.malloc_host(size)
        check(ret, "acl.rt.malloc_host")
        host.append(h)
    for x, h, d in zip((a, b), host, dev, strict=False):
        if sim.numerics:
            acl.util.ptr_to_numpy(h, x.size, np.float16)[:] = x.reshape(-1)
        check(acl.rt.memcpy_async(d, x.nbytes, h, x.nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "memcpy_async")
    gm = [asc.GlobalAddress(d, asc.half) for d in dev[:3]] + [asc.GlobalAddress(dev[3], asc.float32)]
    raw = context.get_raw_tiling_data()
    check(acl.rt.launch_kernel(kernel, context.get_block_dim(), stream, *gm, raw), "acl.rt.launch_kernel")
    check(acl.rt.memcpy_async(host[2], sizes[2], dev[2], sizes[2], ACL_MEMCPY_DEVICE_TO_HOST, stream), "memcpy_async")
    sync = acl.rt.synchronize_stream(stream)
    c = np.zeros((m, n), np.float16)
    if sim.numerics and sync == 0:
        c[:] = acl.util.ptr_to_numpy(host[2], m * n, np.float16).reshape(m, n)
    for d in dev:
        check(acl.rt.free(d), "acl.rt.free")
    for h in host:
        check(acl.rt.free_host(h), "acl.rt.free_host")
    check(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
    check(acl.rt.reset_device(0), "acl.rt.reset_device")
    check(acl.finalize(), "acl.finalize")
    return c


def scenario(sim: Simulation) -> dict:
    from .solution import matmul_leaky_relu, matmul_leaky_relu_tiling

    c = run(sim, matmul_leaky_relu, matmul_leaky_relu_tiling, *MAIN)
    if not sim.numerics:
        return {"correct": None}
    ref = expected(*MAIN)
    return {"correct": bool(np.max(np.abs(c.astype(np.float32) - ref)) <= tolerance(ref, MAIN[2]))}


def scenario_inputs() -> dict:
    a, b = inputs(*MAIN)
    return {"A": a, "B": b}


def _reference_us(shape: tuple[int, int, int], slots: int = SLOTS) -> float:
    from .solution import matmul_leaky_relu, matmul_leaky_relu_tiling

    sim = Simulation(numerics=False)
    run(sim, matmul_leaky_relu, matmul_leaky_relu_tiling, *shape, slots=slots)
    return kernel_us(sim.finish())


def reference_kernel_us() -> float:
    """The reference solution's kernel time at the main shape (the overlap criterion's yardstick)."""
    return _reference_us(MAIN)


def truth_one_slot() -> str:
    ratio = _reference_us(MAIN, 1) / _reference_us(MAIN, 2)
    return "about 2x" if ratio >= 1.7 else ("about 1.3x" if ratio >= 1.15 else "about the same")


def truth_workspace_bytes() -> str:
    """GM bytes one base block travels through the workspace: the fixpipe writes it, the two AIVs read it back."""
    from .solution import matmul_leaky_relu, matmul_leaky_relu_tiling

    sim = Simulation(numerics=False)
    m, n, k = MAIN
    run(sim, matmul_leaky_relu, matmul_leaky_relu_tiling, m, n, k)
    result = sim.finish()
    blocks = -(-m // BASE_M) * -(-n // BASE_N)
    moved = sum(core_bytes(result, "AIC", "FIXP").values()) + sum(core_bytes(result, "AIV", "MTE2").values())
    per_block = moved // blocks  # the fixpipe's writes and the AIVs' reads
    return f"{per_block // 1024} KiB"
