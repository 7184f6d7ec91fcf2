"""Host programs the lessons' scenarios and drives share: run a vector kernel end to end.

Written as a trainee would write them (pyACL calls, every return code checked), so a lesson's
timeline shows a complete, correct host side around the kernel it teaches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import Simulation, asc
from engine.host.acl_codes import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
    error_name,
)


class HostError(RuntimeError):
    """A pyACL call of a lesson's host program failed."""


def check(ret: int, what: str) -> None:
    if ret != ACL_SUCCESS:
        raise HostError(f"{what} failed: {error_name(ret)} ({ret})")


def run_vector_kernel(
    sim: Simulation,
    kernel,
    inputs: list[np.ndarray],
    out_count: int,
    block_dim: int,
    *args,
    out_dtype=np.float16,
    tensors: tuple[tuple[str, tuple[int, ...]], ...] = (),
    align: int = 1,
) -> np.ndarray:
    """init, copy ``inputs`` in, launch ``kernel(*inputs, out, *args)`` on ``block_dim`` blocks, copy the
    output back, tear down; returns the output (numpy). Host buffers are pinned (``malloc_host``).
    ``tensors``: a (name, shape) per input and for the output, so the views draw them as those matrices.
    ``align``: every device buffer is rounded up to a multiple of this many bytes (CANN's tail-block tiling
    pads the data to whole 32-byte blocks: the kernel may then process the padding, which is never copied back)."""
    acl = sim.acl
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "acl.rt.set_device")
    stream, ret = acl.rt.create_stream()
    check(ret, "acl.rt.create_stream")
    out_bytes = out_count * np.dtype(out_dtype).itemsize
    sizes = [-(-max(1, n) // align) * align for n in [*(x.nbytes for x in inputs), out_bytes]]
    dev, host = [], []
    for size in sizes:
        p, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        dev.append(p)
        if tensors:
            name, shape = tensors[len(dev) - 1]
            dtype = inputs[len(dev) - 1].dtype if len(dev) <= len(inputs) else np.dtype(out_dtype)
            sim.name_tensor(p, name, shape, str(dtype))
        h, ret = acl.rt.malloc_host(size)
        check(ret, "acl.rt.malloc_host")
        host.append(h)
    for x, h, d in zip(inputs, host, dev, strict=False):
        if sim.numerics and x.size:
            acl.util.ptr_to_numpy(h, x.size, x.dtype)[:] = x
        if x.nbytes:
            check(acl.rt.memcpy_async(d, x.nbytes, h, x.nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "memcpy_async")
    gm = [
        asc.GlobalAddress(d, asc.float32 if x.dtype == np.float32 else asc.half)
        for d, x in zip(dev, inputs, strict=False)
    ]
    out_t = asc.float32 if np.dtype(out_dtype) == np.float32 else asc.half
    gm.append(asc.GlobalAddress(dev[-1], out_t))
    check(acl.rt.launch_kernel(kernel, block_dim, stream, *gm, *args), "acl.rt.launch_kernel")
    if out_bytes:
        ret = acl.rt.memcpy_async(host[-1], out_bytes, dev[-1], out_bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream)
        check(ret, "memcpy_async")
    sync = acl.rt.synchronize_stream(stream)
    out = np.zeros(out_count, out_dtype)
    if sim.numerics and out_count and sync == ACL_SUCCESS:
        out[:] = acl.util.ptr_to_numpy(host[-1], out_count, out_dtype)
    for d, h in zip(dev, host, strict=True):
        check(acl.rt.free(d), "acl.rt.free")
        check(acl.rt.free_host(h), "acl.rt.free_host")
    check(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
    check(acl.rt.reset_device(0), "acl.rt.reset_device")
    check(acl.finalize(), "acl.finalize")
    return out


BLOCK_BYTES = 32  # a data block: DataCopy moves whole 32-byte blocks between GM and the core


@dataclass(frozen=True)
class CoreSplit:
    """CANN's tail-core tiling (lesson 2): ``former_num`` big cores of ``former_length`` elements first, then
    small cores of ``tail_length``, every length a whole number of 32-byte data blocks, over ``block_dim`` blocks."""

    block_dim: int
    former_num: int
    former_length: int
    tail_length: int
    aligned_length: int  # the total rounded up to whole data blocks: what the cores process


def split_cores(total: int, dtype_bytes: int, cores: int) -> CoreSplit:
    """The split of ``total`` elements over at most ``cores`` blocks (the host's; lesson 2 derives it)."""
    align = BLOCK_BYTES // dtype_bytes
    blocks = max(1, -(-total // align))
    dim = min(cores, blocks)
    return CoreSplit(dim, blocks % dim, -(-blocks // dim) * align, blocks // dim * align, blocks * align)


def uniform(seed: int, count: int, low: float = -1.0, high: float = 1.0, dtype=np.float16) -> np.ndarray:
    """Seeded inputs: ``count`` values in ``[low, high)``."""
    return np.random.default_rng(seed).uniform(low, high, count).astype(dtype)


def kernel_us(result) -> float:
    """Simulated time of the (last) kernel of a finished run, in microseconds."""
    from engine.analysis.pipes import kernel_rows

    rows = kernel_rows(result.trace)
    if not len(rows):
        return 0.0
    i = int(rows[-1])
    return (int(result.trace.end[i]) - int(result.trace.start[i])) / 1e6
