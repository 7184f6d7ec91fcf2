"""The full host lifecycle of one operator call, as a pyACL program.

init -> set_device -> create_stream -> malloc (host pinned, device) -> memcpy_async host to device ->
matmul -> synchronize_stream -> memcpy device to host -> check -> free -> destroy_stream ->
reset_device -> finalize. Every return code is checked, as real pyACL code must.
"""

from __future__ import annotations

import numpy as np

from ..host.acl_codes import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
    error_name,
)
from ..simulation import Simulation
from . import SEED, Outcome, Param, Scenario, ScenarioArgError, ScenarioFailed
from .cost import host_lifecycle_cost


def check_ret(ret: int, what: str) -> None:
    if ret != ACL_SUCCESS:
        raise ScenarioFailed(
            f"{what} failed: {error_name(ret)} ({ret})", ret, zh=f"{what} 失败：{error_name(ret)}（{ret}）"
        )


def run(sim: Simulation, n: int, seed: int) -> Outcome:
    acl = sim.acl
    nbytes = n * n * 2
    check_ret(acl.init(), "acl.init")
    check_ret(acl.rt.set_device(0), "acl.rt.set_device")
    stream, ret = acl.rt.create_stream()
    check_ret(ret, "acl.rt.create_stream")

    host = {}
    for name in ("a", "b", "c"):
        host[name], ret = acl.rt.malloc_host(nbytes)
        check_ret(ret, "acl.rt.malloc_host")
    dev = {}
    for name in ("a", "b", "c"):
        dev[name], ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret(ret, "acl.rt.malloc")

    a = b = None
    if sim.numerics:
        rng = np.random.default_rng(seed)
        a = rng.uniform(-1, 1, (n, n)).astype(np.float16)
        b = rng.uniform(-1, 1, (n, n)).astype(np.float16)
        acl.util.ptr_to_numpy(host["a"], (n, n), np.float16)[:] = a
        acl.util.ptr_to_numpy(host["b"], (n, n), np.float16)[:] = b

    for name in ("a", "b"):
        ret = acl.rt.memcpy_async(dev[name], nbytes, host[name], nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream)
        check_ret(ret, "acl.rt.memcpy_async")
    check_ret(acl.op.matmul(dev["a"], dev["b"], dev["c"], n, n, n, stream), "acl.op.matmul")
    check_ret(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
    check_ret(acl.rt.memcpy(host["c"], nbytes, dev["c"], nbytes, ACL_MEMCPY_DEVICE_TO_HOST), "acl.rt.memcpy")

    correct = None
    details = {}
    if sim.numerics and sim.verify:
        c = acl.util.ptr_to_numpy(host["c"], (n, n), np.float16).astype(np.float32)
        ref = a.astype(np.float32) @ b.astype(np.float32)
        err = float(np.max(np.abs(c - ref)))
        # fp16 output: half an fp16 ulp of the largest value, plus fp32 accumulation-order noise
        tol = float(np.max(np.abs(ref))) * 2.0**-10 + 1e-3
        correct = err <= tol
        details = {"max_abs_err": err, "tolerance": tol}

    for name in ("a", "b", "c"):
        check_ret(acl.rt.free(dev[name]), "acl.rt.free")
        check_ret(acl.rt.free_host(host[name]), "acl.rt.free_host")
    check_ret(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
    check_ret(acl.rt.reset_device(0), "acl.rt.reset_device")
    check_ret(acl.finalize(), "acl.finalize")
    return Outcome(correct, details)


def check(profile, values: dict) -> None:
    need = 3 * (values["n"] ** 2 * 2 + profile.limits.malloc_pad + profile.limits.malloc_round)
    if need > profile.chip.device_memory_bytes:
        raise ScenarioArgError(
            f"--n: three {values['n']}x{values['n']} fp16 device buffers need {need} B, more than "
            f"{profile.name}'s {profile.chip.device_memory_bytes} B of device memory (got --n {values['n']})",
            "n",
            zh=f"--n：三个 {values['n']}x{values['n']} fp16 设备缓冲区需要 {need} B，超过了 {profile.name} 的 "
            f"{profile.chip.device_memory_bytes} B 设备内存（收到 --n {values['n']}）",
        )


SCENARIO = Scenario(
    name="host-lifecycle",
    cost=host_lifecycle_cost,
    summary="init, copy in, matmul, synchronize, copy back, check, tear down",
    summary_zh="初始化、拷入、矩阵乘、同步、拷回、校验、释放",
    params=(
        Param(
            "n",
            int,
            512,
            "matrix size (n x n x n fp16 matmul)",
            help_zh="矩阵规模（n x n x n 的 fp16 矩阵乘）",
            minimum=1,
        ),
        SEED,
    ),
    run=run,
    check=check,
)
