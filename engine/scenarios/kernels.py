"""Scenarios that run instruction-level kernels: ``matmul`` and ``vector-add``.

Both are complete host programs: allocate, copy in, tile on the host, launch, synchronize, copy
back and check against numpy, then tear down. Their summaries add the kernel's metrics (TFLOPS,
Cube utilisation, pipe ratios with msprof's names) and the tiling used.
"""

from __future__ import annotations

import math
from types import MappingProxyType

import numpy as np

from .. import asc
from ..aicore.matmul_tiling import MultiCoreMatmulTiling, TilingError
from ..analysis.pipes import kernel_metrics
from ..host.acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from ..simulation import Simulation
from . import SEED, NumericSize, Outcome, Param, ParamValueError, Scenario, ScenarioArgError, flag_of
from .cost import Cost, matmul_cost_of, vector_add_cost
from .host_lifecycle import check_ret

OUT_TYPES = MappingProxyType({"fp16": asc.half, "fp32": asc.float32})


def parse_base(text: str | tuple[int, int, int]) -> tuple[int, int, int]:
    """``"128,256,64"`` (or an already parsed triple: validating twice is harmless) -> (128, 256, 64)."""
    parts = [str(p) for p in text] if isinstance(text, tuple | list) else str(text).split(",")
    if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
        raise ParamValueError(
            "must be three integers BM,BN,BK (multiples of 16) like 128,256,64",
            "必须是三个整数 BM,BN,BK（16 的倍数），例如 128,256,64",
        )
    base = tuple(int(p) for p in parts)
    if any(v < 16 or v % 16 for v in base):
        raise ParamValueError("must be multiples of 16 (one Cube fractal)", "必须是 16 的倍数（一个 Cube 分形）")
    return base


def _device_buffers(acl, sizes: list[int]) -> list[int]:
    ptrs = []
    for size in sizes:
        ptr, ret = acl.rt.malloc(size, 0)
        check_ret(ret, "acl.rt.malloc")
        ptrs.append(ptr)
    return ptrs


def _host_buffers(acl, sizes: list[int]) -> list[int]:
    ptrs = []
    for size in sizes:
        ptr, ret = acl.rt.malloc_host(size)
        check_ret(ret, "acl.rt.malloc_host")
        ptrs.append(ptr)
    return ptrs


def matmul_macs(v: dict) -> NumericSize:
    """A matmul's numerics: m x n x k multiply-adds."""
    return NumericSize("macs", v["m"] * v["n"] * v["k"], ("m", "n", "k"))


def vector_elements(v: dict) -> NumericSize:
    """A vector add's numerics: its length."""
    return NumericSize("elements", v["length"], ("length",))


def matmul_inputs(values: dict) -> dict[str, np.ndarray]:
    """A and B of the matmul scenarios: uniform in [-1, 1), fp16, from ``seed``."""
    m, n, k = values["m"], values["n"], values["k"]
    rng = np.random.default_rng(values["seed"])
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    return {"A": a, "B": b}


def vector_add_inputs(values: dict) -> dict[str, np.ndarray]:
    """x and y of the vector-add scenario: uniform in [-1, 1), fp16, from ``seed``."""
    rng = np.random.default_rng(values["seed"])
    x = rng.uniform(-1, 1, values["length"]).astype(np.float16)
    y = rng.uniform(-1, 1, values["length"]).astype(np.float16)
    return {"x": x, "y": y}


def _teardown(acl, stream: int, dev: list[int], host: list[int]) -> None:
    for p in dev:
        check_ret(acl.rt.free(p), "acl.rt.free")
    for p in host:
        check_ret(acl.rt.free_host(p), "acl.rt.free_host")
    check_ret(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
    check_ret(acl.rt.reset_device(0), "acl.rt.reset_device")
    check_ret(acl.finalize(), "acl.finalize")


def matmul_tiling(profile, m, n, k, cores, base, buffer_num, out_dtype):
    api = MultiCoreMatmulTiling(profile)
    api.set_dim(cores)
    api.set_a_type(asc.half)
    api.set_b_type(asc.half)
    api.set_c_type(OUT_TYPES[out_dtype])
    api.set_shape(m, n, k)
    api.set_buffer_num(buffer_num)
    if base is not None:
        api.set_fix_split(*base)
    return api.get_tiling(), api.candidates_scored


def _matmul_cost(profile, v: dict, numerics: bool, out_bytes: int, mixed: bool) -> Cost:
    cube_out = "fp32" if mixed else v["out_dtype"]
    cores = v["cores"] or profile.chip.aic_cores
    tiling, _scored = matmul_tiling(profile, v["m"], v["n"], v["k"], cores, v["base"], v["buffer_num"], cube_out)
    return matmul_cost_of(tiling, v, numerics, out_bytes, mixed)


def matmul_cost(profile, v: dict, numerics: bool) -> Cost:
    """The matmul scenario's cost (its tiling planned as the run plans it)."""
    return _matmul_cost(profile, v, numerics, 2 if v["out_dtype"] == "fp16" else 4, mixed=False)


def matmul_leaky_relu_cost(profile, v: dict, numerics: bool) -> Cost:
    return _matmul_cost(profile, {**v, "out_dtype": "fp16"}, numerics, 2, mixed=True)


def run_matmul(
    sim: Simulation, m: int, n: int, k: int, cores, base, buffer_num: int, out_dtype: str, seed: int
) -> Outcome:
    from ..kernels.matmul import matmul_tiled

    def launch(acl, stream, args, tiling) -> list[int]:
        check_ret(acl.rt.launch_kernel(matmul_tiled, tiling.usedCoreNum, stream, *args, tiling), "launch_kernel")
        return []

    return _matmul_program(sim, m, n, k, cores, base, buffer_num, out_dtype, seed, launch, lambda c: c, out_dtype)


def run_matmul_leaky_relu(
    sim: Simulation, m: int, n: int, k: int, alpha: float, cores, base, buffer_num: int, seed: int
) -> Outcome:
    from ..kernels.matmul_leaky_relu import matmul_leaky_relu, workspace_bytes

    def launch(acl, stream, args, tiling) -> list[int]:
        size = workspace_bytes(tiling)
        work, ret = acl.rt.malloc(size, 0)
        check_ret(ret, "acl.rt.malloc")
        gm = (*args, asc.GlobalAddress(work, asc.float32))
        check_ret(acl.rt.launch_kernel(matmul_leaky_relu, tiling.usedCoreNum, stream, *gm, tiling, alpha), "launch")
        return [work]

    def leaky(c: np.ndarray) -> np.ndarray:
        return np.maximum(c, np.float32(alpha) * c)

    # the Cube's output is the fp32 workspace: tile for fp32 results
    outcome = _matmul_program(sim, m, n, k, cores, base, buffer_num, "fp16", seed, launch, leaky, "fp32")
    outcome.details["alpha"] = alpha
    return outcome


def _matmul_program(
    sim, m, n, k, cores, base, buffer_num, out_dtype, seed, launch, reference, cube_out_dtype
) -> Outcome:
    """The host side of a matmul kernel: inputs in, tiling (for the Cube writing ``cube_out_dtype``),
    ``launch`` (returns extra device buffers), result out."""
    acl = sim.acl
    out_t = OUT_TYPES[out_dtype]
    sizes = [m * k * 2, k * n * 2, m * n * out_t.sizeof()]
    check_ret(acl.init(), "acl.init")
    check_ret(acl.rt.set_device(0), "acl.rt.set_device")
    stream, ret = acl.rt.create_stream()
    check_ret(ret, "acl.rt.create_stream")
    dev = _device_buffers(acl, sizes)
    shapes = ((m, k), (k, n), (m, n))
    for ptr, name, shape, dtype in zip(dev, "ABC", shapes, ("float16", "float16", out_t.name), strict=True):
        sim.name_tensor(ptr, name, shape, dtype)
    host = _host_buffers(acl, sizes)
    a = b = inputs = None
    if sim.numerics:
        inputs = matmul_inputs({"m": m, "n": n, "k": k, "seed": seed})
        a, b = inputs["A"], inputs["B"]
        acl.util.ptr_to_numpy(host[0], (m, k), np.float16)[:] = a
        acl.util.ptr_to_numpy(host[1], (k, n), np.float16)[:] = b
    for i in (0, 1):
        check_ret(
            acl.rt.memcpy_async(dev[i], sizes[i], host[i], sizes[i], ACL_MEMCPY_HOST_TO_DEVICE, stream),
            "acl.rt.memcpy_async",
        )
    tiling, scored = matmul_tiling(
        sim.profile, m, n, k, cores or sim.profile.chip.aic_cores, base, buffer_num, cube_out_dtype
    )
    sim.host_compute(
        f"matmul tiling ({scored} candidates)",
        scored * sim.profile.host.tiling_us_per_candidate,
        what="tiling",
        name_zh=f"矩阵乘 tiling（{scored} 个候选）",
    )
    args = (asc.GlobalAddress(dev[0], asc.half), asc.GlobalAddress(dev[1], asc.half), asc.GlobalAddress(dev[2], out_t))
    dev += launch(acl, stream, args, tiling)
    check_ret(
        acl.rt.memcpy_async(host[2], sizes[2], dev[2], sizes[2], ACL_MEMCPY_DEVICE_TO_HOST, stream),
        "acl.rt.memcpy_async",
    )
    check_ret(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
    details: dict = {"tiling": tiling.to_dict(), "tiling_candidates": scored}
    correct = None
    if sim.numerics and sim.verify:
        c = acl.util.ptr_to_numpy(host[2], (m, n), out_t.np).astype(np.float32)
        ref = reference(a.astype(np.float32) @ b.astype(np.float32))
        err = float(np.max(np.abs(c - ref)))
        tol = matmul_tolerance(ref, k, out_dtype)
        correct = err <= tol
        details.update(max_abs_err=err, tolerance=tol)
    _teardown(acl, stream, dev, host)
    sim.extra.update(sim.runtime.ai_cores().memory.stats())
    return Outcome(correct, details, inputs)


def matmul_tolerance(ref: np.ndarray, k: int, out_dtype: str) -> float:
    """fp32 accumulation in a different order than numpy (k terms of magnitude <= 1: k * 2^-22),
    plus half an ulp of the output type at the largest value."""
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    ulp = 2.0**-11 if out_dtype == "fp16" else 2.0**-24
    return k * 2.0**-22 + scale * ulp + 1e-6


def check_matmul(profile, v: dict) -> None:
    cores = v["cores"]
    if cores is not None and not 1 <= cores <= profile.chip.aic_cores:
        raise ScenarioArgError(
            f"--cores must be in 1..{profile.chip.aic_cores} ({profile.name}), got {cores}",
            "cores",
            zh=f"--cores 必须在 1..{profile.chip.aic_cores} 之间（{profile.name}），收到 {cores}",
        )
    out = OUT_TYPES[v["out_dtype"]].sizeof()
    need = v["m"] * v["k"] * 2 + v["k"] * v["n"] * 2 + v["m"] * v["n"] * out
    if need > profile.chip.device_memory_bytes:
        raise ScenarioArgError(
            f"--m/--n/--k: A, B and C need {need} B, more than {profile.name}'s "
            f"{profile.chip.device_memory_bytes} B of device memory (got {v['m']}x{v['n']}x{v['k']})",
            "m",
            "n",
            "k",
            zh=f"--m/--n/--k：A、B 和 C 需要 {need} B，超过了 {profile.name} 的 "
            f"{profile.chip.device_memory_bytes} B 设备内存（收到 {v['m']}x{v['n']}x{v['k']}）",
        )
    if v["base"] is None:
        return  # the automatic tiler finds a tiling for any shape
    try:
        matmul_tiling(
            profile, v["m"], v["n"], v["k"], cores or profile.chip.aic_cores, v["base"], v["buffer_num"], v["out_dtype"]
        )
    except TilingError as exc:
        names = ("base",) if v["base"] else ("m", "n", "k")
        flags = "/".join(map(flag_of, names))
        raise ScenarioArgError(f"{flags}: {exc}", *names, zh=f"{flags}：{exc.zh}") from None


def check_matmul_leaky_relu(profile, v: dict) -> None:
    if profile.chip.architecture != "split":
        raise ScenarioArgError(
            f"--profile: {profile.name} has coupled AI cores (no AIC/AIV groups); mixed kernels need a split chip "
            "such as ascend910b1",
            "profile",
            zh=f"--profile：{profile.name} 的 AI 核是耦合架构（没有 AIC/AIV 分组）；混合核函数需要分离架构的芯片，"
            "例如 ascend910b1",
        )
    if v["n"] % 16:
        raise ScenarioArgError(
            f"--n must be a multiple of 16 (C rows leave UB in 32-byte blocks), got {v['n']}",
            "n",
            zh=f"--n 必须是 16 的倍数（C 的行以 32 字节块离开 UB），收到 {v['n']}",
        )
    check_matmul(profile, {**v, "out_dtype": "fp32"})  # tiling for the Cube's fp32 workspace results


def run_vector_add(sim: Simulation, length: int, buffer_num: int, tile_length: int, cores, seed: int) -> Outcome:
    from ..kernels.vector_add import add_kernel

    acl = sim.acl
    nbytes = length * 2
    block_dim = cores or min(sim.profile.vector_cores, max(1, math.ceil(length / tile_length)))
    check_ret(acl.init(), "acl.init")
    check_ret(acl.rt.set_device(0), "acl.rt.set_device")
    stream, ret = acl.rt.create_stream()
    check_ret(ret, "acl.rt.create_stream")
    dev = _device_buffers(acl, [nbytes] * 3)
    for ptr, name in zip(dev, "xyz", strict=True):
        sim.name_tensor(ptr, name, (length,), "float16")
    host = _host_buffers(acl, [nbytes] * 3)
    x = y = inputs = None
    if sim.numerics:
        inputs = vector_add_inputs({"length": length, "seed": seed})
        x, y = inputs["x"], inputs["y"]
        acl.util.ptr_to_numpy(host[0], length, np.float16)[:] = x
        acl.util.ptr_to_numpy(host[1], length, np.float16)[:] = y
    for i in (0, 1):
        check_ret(acl.rt.memcpy_async(dev[i], nbytes, host[i], nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "memcpy")
    gm = [asc.GlobalAddress(p, asc.half) for p in dev]
    check_ret(acl.rt.launch_kernel(add_kernel, block_dim, stream, *gm, length, tile_length, buffer_num), "launch")
    check_ret(acl.rt.memcpy_async(host[2], nbytes, dev[2], nbytes, ACL_MEMCPY_DEVICE_TO_HOST, stream), "memcpy")
    check_ret(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
    details: dict = {"block_dim": block_dim, "tile_length": tile_length}
    correct = None
    if sim.numerics and sim.verify:
        z = acl.util.ptr_to_numpy(host[2], length, np.float16)
        expected = x + y  # fp16 addition, as the vector unit does it
        err = float(np.max(np.abs(z.astype(np.float32) - expected.astype(np.float32))))
        correct = err == 0.0
        details.update(max_abs_err=err, tolerance=0.0)
    _teardown(acl, stream, dev, host)
    return Outcome(correct, details, inputs)


def check_vector_add(profile, v: dict) -> None:
    cores = v["cores"]
    if cores is not None and not 1 <= cores <= profile.limits.max_block_dim:
        raise ScenarioArgError(
            f"--cores must be in 1..{profile.limits.max_block_dim}, got {cores}",
            "cores",
            zh=f"--cores 必须在 1..{profile.limits.max_block_dim} 之间，收到 {cores}",
        )
    if v["tile_length"] * 2 * 3 * v["buffer_num"] > profile.buffers.ub:
        raise ScenarioArgError(
            f"--tile-length: 3 queues x {v['buffer_num']} slots x {v['tile_length']} fp16 need "
            f"{v['tile_length'] * 6 * v['buffer_num']} B, more than the {profile.buffers.ub} B of UB "
            f"(got --tile-length {v['tile_length']})",
            "tile_length",
            zh=f"--tile-length：3 个队列 x {v['buffer_num']} 个槽位 x {v['tile_length']} 个 fp16 需要 "
            f"{v['tile_length'] * 6 * v['buffer_num']} B，超过了 UB 的 {profile.buffers.ub} B"
            f"（收到 --tile-length {v['tile_length']}）",
        )
    if v["length"] * 6 > profile.chip.device_memory_bytes:
        raise ScenarioArgError(
            f"--length: x, y and z need {v['length'] * 6} B, more than device memory",
            "length",
            zh=f"--length：x、y 和 z 需要 {v['length'] * 6} B，超过了设备内存",
        )


# the parameters both matmul scenarios take alike
_M = Param("m", int, 1024, "rows of A and C", help_zh="A 和 C 的行数", minimum=1)
_K = Param("k", int, 1024, "columns of A, rows of B", help_zh="A 的列数，B 的行数", minimum=1)
_BASE = Param(
    "base",
    str,
    None,
    "fixed base block BM,BN,BK (default: the automatic tiler decides)",
    help_zh="固定的基本块 BM,BN,BK（默认：由自动分块器决定）",
    parse=parse_base,
    auto="tiling",
)
_BUFFER_NUM = Param(
    "buffer_num",
    int,
    2,
    "1: no double buffering; 2: double-buffered L1 and L0",
    help_zh="1：不用双缓冲；2：L1 和 L0 双缓冲",
    choices=(1, 2),
)


SCENARIOS = (
    Scenario(
        name="matmul",
        cost=matmul_cost,
        summary="C = A @ B (fp16 in, fp32 accumulate) with the tiled multi-core Cube kernel",
        summary_zh="C = A @ B（fp16 输入，fp32 累加），使用分块的多核 Cube 核函数",
        params=(
            _M,
            Param("n", int, 1024, "columns of B and C", help_zh="B 和 C 的列数", minimum=1),
            _K,
            Param(
                "cores",
                int,
                None,
                "Cube cores to use (default: all)",
                help_zh="使用的 Cube 核数（默认：全部）",
                minimum=1,
                auto="aic_cores",
            ),
            _BASE,
            _BUFFER_NUM,
            Param("out_dtype", str, "fp16", "dtype of C", help_zh="C 的数据类型", choices=("fp16", "fp32")),
            SEED,
        ),
        run=run_matmul,
        check=check_matmul,
        inputs=matmul_inputs,
        numeric_size=matmul_macs,
        report=lambda result: kernel_metrics(result.trace, result.profile),
    ),
    Scenario(
        name="matmul-leaky-relu",
        cost=matmul_leaky_relu_cost,
        summary="C = LeakyReLU(A @ B): a mixed kernel, the Cube and two Vector cores of each AI core in step",
        summary_zh="C = LeakyReLU(A @ B)：混合核函数，每个 AI Core 的 Cube 核与两个 Vector 核协同工作",
        params=(
            _M,
            Param(
                "n",
                int,
                1024,
                "columns of B and C (a multiple of 16)",
                help_zh="B 和 C 的列数（16 的倍数）",
                minimum=16,
            ),
            _K,
            Param(
                "alpha",
                float,
                0.1,
                "LeakyReLU slope for x < 0 (max(x, alpha*x))",
                help_zh="LeakyReLU 在 x < 0 时的斜率（max(x, alpha*x)）",
                minimum=0.0,
                maximum=1.0,
            ),
            Param(
                "cores",
                int,
                None,
                "AI cores (AIC + 2 AIV groups) to use (default: all)",
                help_zh="使用的 AI Core 数（每个是 1 个 AIC + 2 个 AIV 的一组；默认：全部）",
                minimum=1,
                auto="aic_cores",
            ),
            _BASE,
            _BUFFER_NUM,
            SEED,
        ),
        run=run_matmul_leaky_relu,
        check=check_matmul_leaky_relu,
        inputs=matmul_inputs,
        numeric_size=matmul_macs,
        report=lambda result: kernel_metrics(result.trace, result.profile),
    ),
    Scenario(
        name="vector-add",
        cost=vector_add_cost,
        summary="z = x + y on the vector cores, CopyIn / Compute / CopyOut",
        summary_zh="在 Vector 核上计算 z = x + y：CopyIn / Compute / CopyOut",
        params=(
            Param("length", int, 65536, "number of fp16 elements", help_zh="fp16 元素个数", minimum=1),
            Param(
                "buffer_num",
                int,
                2,
                "queue slots: 1 (no overlap) or 2 (double buffering)",
                help_zh="队列槽位数：1（不重叠）或 2（双缓冲）",
                choices=(1, 2),
            ),
            Param("tile_length", int, 2048, "elements per tile", help_zh="每个分块的元素个数", minimum=16),
            Param(
                "cores",
                int,
                None,
                "blocks to launch (default: enough tiles for every vector core)",
                help_zh="启动的块数（默认：足够让每个 Vector 核都分到分块）",
                minimum=1,
                auto="aiv_blocks",
            ),
            SEED,
        ),
        run=run_vector_add,
        check=check_vector_add,
        inputs=vector_add_inputs,
        numeric_size=vector_elements,
        report=lambda result: kernel_metrics(result.trace, result.profile),
    ),
)
