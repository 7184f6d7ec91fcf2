"""Pipes of an AI core, hardware events between them, and their names in traces.

Pipes (ADK ``kernel_event.h``): S scalar, V vector, M cube (mmad), MTE1 (L1 -> L0A/L0B),
MTE2 (GM -> L1/L0/UB), MTE3 (UB/L1 -> GM), FIX (L0C -> GM/L1). Lane names follow Huawei's
simulator trace: SCALAR, VECTOR, CUBE, MTE1, MTE2, MTE3, FIXP.
"""

from __future__ import annotations

from enum import Enum, IntEnum


class Pipe(IntEnum):
    S = 0
    V = 1
    M = 2
    MTE1 = 3
    MTE2 = 4
    MTE3 = 5
    FIX = 6


N_PIPES = len(Pipe)
LANE_NAMES = ("SCALAR", "VECTOR", "CUBE", "MTE1", "MTE2", "MTE3", "FIXP")

# msprof PipeUtilization names, per core type
AIC_RATIO_NAMES = (
    (Pipe.M, "aic_mac_ratio"),
    (Pipe.MTE1, "aic_mte1_ratio"),
    (Pipe.MTE2, "aic_mte2_ratio"),
    (Pipe.FIX, "aic_fixpipe_ratio"),
    (Pipe.S, "aic_scalar_ratio"),
)
AIV_RATIO_NAMES = (
    (Pipe.V, "aiv_vec_ratio"),
    (Pipe.MTE2, "aiv_mte2_ratio"),
    (Pipe.MTE3, "aiv_mte3_ratio"),
    (Pipe.S, "aiv_scalar_ratio"),
)


class PipeID(Enum):
    """Arguments of ``pipe_barrier``."""

    PIPE_S = Pipe.S
    PIPE_V = Pipe.V
    PIPE_M = Pipe.M
    PIPE_MTE1 = Pipe.MTE1
    PIPE_MTE2 = Pipe.MTE2
    PIPE_MTE3 = Pipe.MTE3
    PIPE_FIX = Pipe.FIX
    PIPE_ALL = None


class HardEvent(Enum):
    """``SRC_DST``: the DST pipe waits for the SRC pipe (ADK ``HardEvent``)."""

    MTE2_V = (Pipe.MTE2, Pipe.V)
    V_MTE2 = (Pipe.V, Pipe.MTE2)
    V_MTE3 = (Pipe.V, Pipe.MTE3)
    MTE3_V = (Pipe.MTE3, Pipe.V)
    MTE2_MTE1 = (Pipe.MTE2, Pipe.MTE1)
    MTE1_MTE2 = (Pipe.MTE1, Pipe.MTE2)
    MTE1_M = (Pipe.MTE1, Pipe.M)
    M_MTE1 = (Pipe.M, Pipe.MTE1)
    M_FIX = (Pipe.M, Pipe.FIX)
    FIX_M = (Pipe.FIX, Pipe.M)
    MTE2_M = (Pipe.MTE2, Pipe.M)
    M_MTE2 = (Pipe.M, Pipe.MTE2)
    MTE3_MTE2 = (Pipe.MTE3, Pipe.MTE2)
    MTE2_MTE3 = (Pipe.MTE2, Pipe.MTE3)
    V_S = (Pipe.V, Pipe.S)
    S_V = (Pipe.S, Pipe.V)
    MTE2_S = (Pipe.MTE2, Pipe.S)
    S_MTE2 = (Pipe.S, Pipe.MTE2)
    MTE3_S = (Pipe.MTE3, Pipe.S)
    S_MTE3 = (Pipe.S, Pipe.MTE3)
    M_V = (Pipe.M, Pipe.V)
    V_M = (Pipe.V, Pipe.M)
    FIX_V = (Pipe.FIX, Pipe.V)
    V_FIX = (Pipe.V, Pipe.FIX)
    FIX_MTE2 = (Pipe.FIX, Pipe.MTE2)
    MTE2_FIX = (Pipe.MTE2, Pipe.FIX)
    FIX_MTE3 = (Pipe.FIX, Pipe.MTE3)
    MTE3_FIX = (Pipe.MTE3, Pipe.FIX)
    FIX_S = (Pipe.FIX, Pipe.S)
    M_S = (Pipe.M, Pipe.S)

    @property
    def src(self) -> Pipe:
        return self.value[0]

    @property
    def dst(self) -> Pipe:
        return self.value[1]
