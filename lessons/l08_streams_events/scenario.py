"""Lesson 8 scenario: four batches through the two-stream pipeline (copy stream, compute stream, events).

Also the check's batches, how to draw its hidden cases (``draw_<kind>``), the one-stream baseline the speed-up
is measured against and the truth of "does a third stream help?", both run here, in the grader, with the
lesson's own reference programs.
"""

from __future__ import annotations

import numpy as np

from engine import Simulation
from engine.host.acl_codes import ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from engine.scenarios.kernels import matmul_tolerance
from lessons.costs import stream_span_us
from lessons.hostkit import check, uniform

N, BATCHES = 512, 8  # 512^3 fp16 matmuls: copies and compute of similar length on ascend910b1


def inputs(batches: int = BATCHES, n: int = N, seed: int = 100) -> tuple[list[np.ndarray], list[np.ndarray]]:
    a = [uniform(seed + i, n * n).reshape(n, n) for i in range(batches)]
    b = [uniform(seed + 100 + i, n * n).reshape(n, n) for i in range(batches)]
    return a, b


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(1000, 1 << 20))


def draw_odd_batches(rng: np.random.Generator) -> dict:
    """Hidden: an odd number of batches (the last one has no partner in the other buffer set)."""
    return {"batches": int(rng.choice([3, 5, 7])), "n": int(rng.choice([64, 96, 128])), "seed": _seed(rng)}


def draw_one_batch(rng: np.random.Generator) -> dict:
    """Hidden: a single batch (no buffer set is ever reused)."""
    return {"batches": 1, "n": int(rng.integers(4, 13)) * 16, "seed": _seed(rng)}


def draw_other_size(rng: np.random.Generator) -> dict:
    """Hidden: matrices of another size, not a multiple of 16 (two or four batches)."""
    n = int(rng.integers(40, 200))
    n += 0 if n % 16 else int(rng.integers(1, 16))
    return {"batches": int(rng.choice([2, 4])), "n": n, "seed": _seed(rng)}


def expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) @ b.astype(np.float32)


def tolerance(ref: np.ndarray) -> float:
    return matmul_tolerance(ref, ref.shape[0], "fp16")


def work_span_us(run) -> float:
    """From the first copy or kernel on a stream to the last one's end: the pipeline without set-up."""
    return stream_span_us(run)


def reference_pipeline(acl, a_batches, b_batches, streams: int):
    """The pipeline on 1 stream (everything in order), 2 (copies in | matmul + copies back) or
    3 (copies in | matmul | copies back) streams, with the events each needs."""
    n, count = a_batches[0].shape[0], len(a_batches)
    nbytes = n * n * 2
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "acl.rt.set_device")
    hosts = []
    for _ in range(3 * count):
        ptr, ret = acl.rt.malloc_host(nbytes)
        check(ret, "malloc_host")
        hosts.append(ptr)
    host_a, host_b, host_c = hosts[:count], hosts[count : 2 * count], hosts[2 * count :]
    for i in range(count):
        acl.util.ptr_to_numpy(host_a[i], (n, n), np.float16)[:] = a_batches[i]
        acl.util.ptr_to_numpy(host_b[i], (n, n), np.float16)[:] = b_batches[i]
    dev = []
    for _ in range(6):
        ptr, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "malloc")
        dev.append(ptr)
    dev_a, dev_b, dev_c = dev[0:2], dev[2:4], dev[4:6]
    made = []
    for _ in range(streams):
        s, ret = acl.rt.create_stream()
        check(ret, "create_stream")
        made.append(s)
    copy_in, compute, copy_out = made[0], made[min(1, streams - 1)], made[streams - 1]
    events = {}

    def event(key):
        if key not in events:
            events[key], ret = acl.rt.create_event()
            check(ret, "create_event")
        return events[key]

    for i in range(count):
        s = i % 2
        if streams > 1 and i >= 2:
            check(acl.rt.stream_wait_event(copy_in, event(("consumed", i - 2))), "wait")
        check(acl.rt.memcpy_async(dev_a[s], nbytes, host_a[i], nbytes, ACL_MEMCPY_HOST_TO_DEVICE, copy_in), "copy")
        check(acl.rt.memcpy_async(dev_b[s], nbytes, host_b[i], nbytes, ACL_MEMCPY_HOST_TO_DEVICE, copy_in), "copy")
        if streams > 1:
            check(acl.rt.record_event(event(("loaded", i)), copy_in), "record")
            check(acl.rt.stream_wait_event(compute, event(("loaded", i))), "wait")
        if streams > 2 and i >= 2:
            check(acl.rt.stream_wait_event(compute, event(("drained", i - 2))), "wait")  # C slot copied back
        check(acl.op.matmul(dev_a[s], dev_b[s], dev_c[s], n, n, n, compute), "matmul")
        if streams > 1:
            check(acl.rt.record_event(event(("consumed", i)), compute), "record")
        if streams > 2:
            check(acl.rt.stream_wait_event(copy_out, event(("consumed", i))), "wait")
        check(acl.rt.memcpy_async(host_c[i], nbytes, dev_c[s], nbytes, ACL_MEMCPY_DEVICE_TO_HOST, copy_out), "copy")
        if streams > 2:
            check(acl.rt.record_event(event(("drained", i)), copy_out), "record")
    check(acl.rt.synchronize_device(), "synchronize_device")
    results = [acl.util.ptr_to_numpy(host_c[i], (n, n), np.float16).copy() for i in range(count)]
    for e in events.values():
        check(acl.rt.destroy_event(e), "destroy_event")
    for ptr in dev:
        check(acl.rt.free(ptr), "free")
    for ptr in hosts:
        check(acl.rt.free_host(ptr), "free_host")
    for s in made:
        check(acl.rt.destroy_stream(s), "destroy_stream")
    check(acl.rt.reset_device(0), "reset_device")
    check(acl.finalize(), "finalize")
    return results


def _span(streams: int) -> float:
    sim = Simulation(numerics=False)
    a, b = inputs()
    reference_pipeline(sim.acl, a, b, streams)
    return work_span_us(sim.finish())


def baseline_us() -> float:
    """The one-stream pipeline's span on the check's batches."""
    return _span(1)


def scenario(sim: Simulation) -> dict:
    from .solution import pipeline

    a, b = inputs(4)
    c = pipeline(sim.acl, a, b)
    return {
        "correct": all(
            np.max(np.abs(ci.astype(np.float32) - expected(ai, bi))) <= tolerance(expected(ai, bi))
            for ai, bi, ci in zip(a, b, c, strict=True)
        )
    }


def truth_third_stream() -> str:
    two, three = _span(2), _span(3)
    return "yes" if three < 0.95 * two else "no"
