"""z = 2 x with the hardware flags written by hand: the smallest kernel that shows pipe synchronisation.

MTE2 loads x into UB, the vector unit doubles it, MTE3 stores it. ``set_flag(MTE2_V)`` /
``wait_flag(MTE2_V)`` make V wait for the load; ``V_MTE3`` makes MTE3 wait for V. With
``sync=False`` the first wait is left out: V may read UB before the load has landed (a race).
"""

from __future__ import annotations

from engine import asc


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def scale_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, sync: bool):
    x_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    z_gm.set_global_buffer(z, n)
    pipe = asc.TPipe()
    buf_in, buf_out = asc.TBuf(asc.TPosition.VECIN), asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=buf_in, num=n * 2)
    pipe.init_buffer(buf=buf_out, num=n * 2)
    t_in, t_out = buf_in.get(asc.half), buf_out.get(asc.half)
    asc.data_copy(t_in, x_gm, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    if sync:
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.muls(t_out, t_in, 2.0, n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(z_gm, t_out, n)


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def empty_deque_kernel(x: asc.GlobalAddress):
    """Dequeues a queue nothing was enqueued to: the vector pipe would wait forever."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=256)
    q.deque(asc.half)
