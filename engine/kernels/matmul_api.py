"""A high-level ``Matmul`` object in the style of Ascend C's Matmul API.

::

    mm = Matmul(pipe, tiling)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm)
    mm.iterate_all(c_gm)            # or: while mm.iterate(): mm.get_tensor_c(c_gm)

Each ``iterate()`` computes one ``baseM x baseN`` block of this core's region of C into L0C;
``get_tensor_c`` moves it to GM through the fixpipe. The pipeline underneath is the same as
:func:`engine.kernels.matmul.matmul_tiled`'s, plus what the API's generality costs the scalar unit:
its iteration logic (positions, tails, L1 cache bookkeeping) per K step and per GM -> L1 copy, one
``scalar_work`` instruction per K step (the profile's ``[scalar]`` ``matmul_api_*``, fitted to ADK's
published Matmul samples, whose scalar time is 4x that of the same tiling written with basic APIs).
"""

from __future__ import annotations

from engine import asc
from engine.aicore.matmul_tiling import TCubeTiling
from engine.kernels import matmul_fast
from engine.kernels.matmul import (
    CubeQueues,
    api_cycles,
    base_blocks,
    compute_base_block,
    gm_tensors,
    stamped_blocks,
    write_base_block,
)


class Matmul:
    def __init__(self, pipe: asc.TPipe, tiling: TCubeTiling) -> None:
        self.tiling = tiling
        self.queues = CubeQueues(pipe, tiling)
        self._a = None
        self._b = None
        self._b_trans = False
        m0, n0, rows, cols = tiling.core_region(asc.get_block_idx())
        self._blocks = base_blocks(tiling, m0, n0, rows, cols) if rows and cols else []
        self._next = 0
        self._current = None
        self._api = api_cycles()

    def set_tensor_a(self, a_gm: asc.GlobalTensor) -> None:
        self._a = a_gm

    def set_tensor_b(self, b_gm: asc.GlobalTensor, is_transpose_b: bool = False) -> None:
        """``SetTensorB(gm, isTransposeB)``: with ``is_transpose_b`` B is stored as [N, K]."""
        self._b = b_gm
        self._b_trans = is_transpose_b

    def iterate(self) -> bool:
        """Compute the next base block into L0C; False when this core's region is done."""
        if self._a is None or self._b is None:
            raise RuntimeError("Matmul: call set_tensor_a and set_tensor_b before iterate")
        if self._current is not None:
            raise RuntimeError("Matmul: get_tensor_c must move the previous block out before the next iterate")
        if self._next >= len(self._blocks):
            return False
        self._current = self._blocks[self._next]
        self._next += 1
        compute_base_block(self.queues, self.tiling, self._a, self._b, *self._current, self._b_trans, self._api)
        return True

    def get_tensor_c(self, c_gm: asc.GlobalTensor) -> None:
        if self._current is None:
            raise RuntimeError("Matmul: get_tensor_c without a block from iterate")
        write_base_block(self.queues, c_gm, self.tiling.N, *self._current)
        self._current = None

    def iterate_all(self, c_gm: asc.GlobalTensor) -> None:
        while self.iterate():
            self.get_tensor_c(c_gm)


def stamped_matmul_api(
    a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, tiling: TCubeTiling, b_trans: bool = False
):
    """:func:`matmul_api_kernel`'s fast path: what ``iterate_all`` issues (each base block's
    :func:`compute_base_block` with the API's scalar work, then its fixpipe), recorded once per base-block
    signature and stamped after (:func:`engine.kernels.matmul.stamped_blocks`)."""
    if not matmul_fast.separate(a, b, c):  # stamped copies cannot shift shared allocations apart
        return matmul_api_kernel.fn(a, b, c, tiling, b_trans)
    return stamped_blocks("matmul_api", a, b, c, tiling, b_trans, api_cycles())


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY, fast_path=stamped_matmul_api)
def matmul_api_kernel(
    a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, tiling: TCubeTiling, b_trans: bool = False
):
    """C = A @ B with the Matmul object (``b_trans``: B is stored as [N, K], ``SetTensorB(gm, true)``)."""
    a_gm, b_gm, c_gm = gm_tensors(a, b, c, tiling)
    pipe = asc.TPipe()
    mm = Matmul(pipe, tiling)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm, b_trans)
    mm.iterate_all(c_gm)
