"""A mixed (MIX_AIC_1_2) kernel: C = LeakyReLU(A @ B), the Cube and two Vector cores working together.

The shape of Ascend's MatmulLeakyRelu sample. Each block runs on one AI core's group: its AIC
computes base blocks of A @ B (GM -> L1 -> L0A/L0B -> Cube -> L0C, in the Cube's layouts) and moves each
finished fp32 block to a GM *workspace* through the fixpipe (NZ -> ND on the way); the two AIVs read it
back into UB, apply LeakyReLU (``max(x, alpha * x)``), cast to fp16 and write C. AIV 0 takes the upper half of the
block's rows, AIV 1 the lower half.

Cross-core flags hand the workspace back and forth (two slots, so the Cube computes block i+1
while the vectors work on block i):

* ``READY + slot`` — AIC -> both AIVs: the fixpipe finished writing the slot (set on PIPE_FIX);
* ``FREE + slot`` — each AIV -> AIC: the AIV's reads of the slot are done (set on PIPE_MTE2);
  the AIC's wait takes one set from each AIV before it overwrites the slot.

Drop a wait (``skip_wait``) and the race detector reports the AIV reading the workspace unordered
with the fixpipe writing it; drop a set (``skip_set``) and the group deadlocks, diagnosed.

The kernel names its fast path where it is declared: :func:`stamped_matmul_leaky_relu`.
"""

from __future__ import annotations

import numpy as np

from engine import asc
from engine.aicore import cube, vector_math
from engine.aicore.matmul_tiling import TCubeTiling
from engine.kernels import matmul_fast
from engine.kernels.matmul import CubeQueues, base_blocks, compute_base_block, fixpipe_params

READY, FREE = 0, 2  # cross-core flag ids: READY + slot, FREE + slot
SLOTS = 2  # workspace slots per block
CHUNK_ELEMENTS = 8192  # fp32 elements an AIV moves through UB at a time (32 KB)


def workspace_bytes(tiling: TCubeTiling) -> int:
    """GM workspace the kernel needs: per block, two fp32 base blocks."""
    return tiling.usedCoreNum * SLOTS * tiling.baseM * tiling.baseN * asc.float32.sizeof()


def stamped_matmul_leaky_relu(
    a: asc.GlobalAddress,
    b: asc.GlobalAddress,
    c: asc.GlobalAddress,
    workspace: asc.GlobalAddress,
    tiling: TCubeTiling,
    alpha: float,
    skip_wait: bool = False,
    skip_set: bool = False,
):
    """:func:`matmul_leaky_relu`'s fast path: each core's steps recorded once per signature and stamped
    after (:mod:`engine.kernels.matmul_fast`). A stamped step moves A's rows and C's with its base block,
    B's columns and C's, and the workspace slots with the block; its cross-core flags go to the group
    recorder in order, so the three cores take turns as the real code makes them. The numbers: C and
    each workspace slot's last fp32 block from the launch's product, with the epilogue's vector
    arithmetic. The broken variants (the debugging lesson's race and deadlock) and launches whose
    buffers share an allocation run the kernel's code call by call."""
    if skip_wait or skip_set or not matmul_fast.separate(a, b, c, workspace):
        return matmul_leaky_relu.fn(a, b, c, workspace, tiling, alpha, skip_wait, skip_set)
    t = tiling
    block = asc.get_block_idx()
    m0, n0, rows, cols = t.core_region(block)
    if rows == 0 or cols == 0:
        return
    work = block_workspace(workspace, t, block)
    blocks = base_blocks(t, m0, n0, rows, cols)
    per_block = (SLOTS * t.baseM * t.baseN * asc.float32.sizeof(), 0, 0)  # the workspace moves with the block
    if not asc.ascend_is_aic():
        vec = VectorSide(t, c, work)
        strides = [(vec.c_gm, (0, t.N * 2, 2)), (work, per_block)]
        step = lambda i, blk: vec.step(i, blk, alpha)  # noqa: E731
        matmul_fast.stamp_blocks("matmul_leaky_relu", blocks, vec.queues, strides, step, lambda i, _: (i % SLOTS,))
        return
    cube_side = CubeSide(t, a, b, work)
    k_strides = [(cube_side.a_gm, (t.Ka * 2, 0, 2)), (cube_side.b_gm, (0, 2, t.N * 2))]
    cube_side.spans = matmul_fast.span_stamper("matmul_leaky_relu", cube_side.queues, k_strides, ())
    strides = [(cube_side.a_gm, (0, t.Ka * 2, 0)), (cube_side.b_gm, (0, 0, 2)), (work, per_block)]
    signature = lambda i, _: (i % SLOTS, i >= SLOTS)  # noqa: E731
    matmul_fast.stamp_blocks("matmul_leaky_relu", blocks, cube_side.queues, strides, cube_side.step, signature)
    cube_side.drain(len(blocks))
    last = {i % SLOTS: blk for i, blk in enumerate(blocks)}  # what each workspace slot holds at the end

    c_gm = asc.GlobalTensor()
    c_gm.set_global_buffer(c, t.M * t.N)

    def write(x, matrix) -> None:  # what the vectors leave in C, and the fixpipe in the workspace slots
        count = x.size
        scaled = vector_math.evaluate("muls", [x], (float(alpha),), np.float32, count)
        y = vector_math.evaluate("max", [x, scaled], (), np.float32, count)
        out = vector_math.evaluate("cast", [y], (), np.float16, count)
        matrix(c_gm, t.M, t.N)[m0 : m0 + rows, n0 : n0 + cols] = out
        slots = matrix(work, SLOTS * t.baseM, t.baseN)
        for slot, (bm, bn, mr, nc) in last.items():
            part = x[bm - m0 : bm - m0 + mr, bn - n0 : bn - n0 + nc]
            slots[slot * t.baseM : slot * t.baseM + mr, :nc] = cube.fixpipe(part, np.float32)

    matmul_fast.with_region(cube_side.a_gm, cube_side.b_gm, t, (m0, n0, rows, cols), write)


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_2, fast_path=stamped_matmul_leaky_relu)
def matmul_leaky_relu(
    a: asc.GlobalAddress,
    b: asc.GlobalAddress,
    c: asc.GlobalAddress,
    workspace: asc.GlobalAddress,
    tiling: TCubeTiling,
    alpha: float,
    skip_wait: bool = False,
    skip_set: bool = False,
):
    t = tiling
    block = asc.get_block_idx()
    m0, n0, rows, cols = t.core_region(block)
    if rows == 0 or cols == 0:
        return
    work = block_workspace(workspace, t, block)
    blocks = base_blocks(t, m0, n0, rows, cols)
    if asc.ascend_is_aic():
        cube = CubeSide(t, a, b, work)
        for i, blk in enumerate(blocks):
            cube.step(i, blk, set_ready=not (skip_set and i == len(blocks) - 1))
        cube.drain(len(blocks))
    else:
        vec = VectorSide(t, c, work)
        for i, blk in enumerate(blocks):
            vec.step(i, blk, alpha, wait_ready=not (skip_wait and i == 0))


def block_workspace(workspace: asc.GlobalAddress, t: TCubeTiling, block: int) -> asc.GlobalTensor:
    """This block's two fp32 base-block slots of the GM workspace."""
    slot_elems = t.baseM * t.baseN
    work = asc.GlobalTensor()
    work.set_global_buffer(workspace + block * SLOTS * slot_elems, SLOTS * slot_elems)  # + elements
    return work


class CubeSide:
    """The AIC's part: each base block of A @ B through L1/L0 to L0C, then the fixpipe to a workspace slot."""

    def __init__(self, t: TCubeTiling, a, b, work) -> None:
        self.t = t
        self.work = work
        self.a_gm, self.b_gm = asc.GlobalTensor(), asc.GlobalTensor()
        self.a_gm.set_global_buffer(a, t.M * t.Ka)
        self.b_gm.set_global_buffer(b, t.Kb * t.N)
        self.pipe = asc.TPipe()
        self.q = CubeQueues(self.pipe, t)
        self.queues = (self.q.a1, self.q.b1, self.q.a2, self.q.b2, self.q.co1)
        self.spans = None  # the fast path's K-span stamper (matmul_fast.span_stamper), else each K step runs

    def step(self, i: int, blk: tuple, set_ready: bool = True) -> None:
        t, q = self.t, self.q
        bm, bn, mr, nc = blk
        slot = i % SLOTS
        compute_base_block(q, t, self.a_gm, self.b_gm, bm, bn, mr, nc, spans=self.spans and self.spans(blk))
        if i >= SLOTS:  # after the block's loads and mmads were issued: the wait holds every later instruction
            asc.cross_core_wait_flag(FREE + slot)  # both AIVs have read what this slot held
        acc = q.co1.deque()
        asc.fixpipe(self.work[slot * t.baseM * t.baseN :], acc, fixpipe_params(mr, nc, t.baseN, asc.float32))
        q.co1.free_tensor(acc)
        if set_ready:
            asc.cross_core_set_flag(READY + slot, pipe=asc.PipeID.PIPE_FIX)

    def drain(self, n_blocks: int) -> None:
        for i in range(max(0, n_blocks - SLOTS), n_blocks):
            asc.cross_core_wait_flag(FREE + i % SLOTS)  # the vectors are done with every slot


class VectorSide:
    """An AIV's part: its half of each base block's rows, workspace -> UB -> LeakyReLU -> fp16 -> C."""

    def __init__(self, t: TCubeTiling, c, work) -> None:
        self.t = t
        self.work = work
        self.c_gm = asc.GlobalTensor()
        self.c_gm.set_global_buffer(c, t.M * t.N)
        self.pipe = asc.TPipe()
        self.inq = asc.TQue(asc.TPosition.VECIN, 2)
        self.outq = asc.TQue(asc.TPosition.VECOUT, 2)
        tmp_buf = asc.TBuf(asc.TPosition.VECCALC)
        self.pipe.init_buffer(que=self.inq, num=2, len=CHUNK_ELEMENTS * asc.float32.sizeof())
        self.pipe.init_buffer(que=self.outq, num=2, len=CHUNK_ELEMENTS * asc.half.sizeof())
        self.pipe.init_buffer(buf=tmp_buf, num=CHUNK_ELEMENTS * asc.float32.sizeof())
        self.tmp = tmp_buf.get(asc.float32)
        self.sub = asc.get_subblockidx()
        self.queues = (self.inq, self.outq)

    def step(self, i: int, blk: tuple, alpha: float, wait_ready: bool = True) -> None:
        t, inq, outq = self.t, self.inq, self.outq
        bm, bn, mr, nc = blk
        slot = i % SLOTS
        upper = (mr + 1) // 2
        r0, my_rows = (0, upper) if self.sub == 0 else (upper, mr - upper)
        if wait_ready:
            asc.cross_core_wait_flag(READY + slot)  # the Cube's result is in the workspace
        step = max(1, CHUNK_ELEMENTS // nc)
        for r in range(r0, r0 + my_rows, step):
            n_rows = min(step, r0 + my_rows - r)
            count = n_rows * nc
            x = inq.alloc_tensor(asc.float32, shape=(n_rows, nc))
            asc.data_copy(x, self.work.tile(slot * t.baseM + r, 0, n_rows, nc, t.baseN))
            inq.enque(x)
            x = inq.deque()
            asc.muls(self.tmp, x, alpha, count)
            asc.max(x, x, self.tmp, count)  # LeakyReLU for 0 <= alpha <= 1
            y = outq.alloc_tensor(asc.half, shape=(n_rows, nc))
            asc.cast(y, x, "CAST_ROUND", count)
            inq.free_tensor(x)
            outq.enque(y)
            y = outq.deque()
            asc.data_copy(self.c_gm.tile(bm + r, bn, n_rows, nc, t.N), y)
            outq.free_tensor(y)
        asc.cross_core_set_flag(FREE + slot, pipe=asc.PipeID.PIPE_MTE2)  # my reads of the slot are done
