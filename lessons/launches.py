"""What a check reads of the kernel launches the grader's replay made: each launch's kernel, block count and
the tiling it carried (the struct and the tiling key), from the trusted re-execution, never from the child."""

from __future__ import annotations

from dataclasses import dataclass

from engine.host.tiling_data import TilingData
from engine.host.tiling_record import raw_from_record


@dataclass(frozen=True)
class Launch:
    kernel: str
    block_dim: int
    tiling: TilingData | None  # the struct of its raw tiling buffer (None: it carried no tiling)
    tiling_key: int


def launches(data, run: str) -> list[Launch]:
    """The launches of run ``run`` in the order the replay made them."""
    out = []
    for kernel, block_dim, values in data.launches(run):
        raw = next((v["rtd"] for v in values if isinstance(v, dict) and "rtd" in v), None)
        if raw is None:
            out.append(Launch(str(kernel), int(block_dim), None, 0))
            continue
        buf = raw_from_record(raw)
        out.append(Launch(str(kernel), int(block_dim), buf.struct(), buf.tiling_key))
    return out
