"""The AI cores of one device as the runtime grants them to kernels, and what a kernel hands the device.

A kernel occupies as many AIC and AIV cores as :meth:`CoreArray.need` says for its type and block count
(whole AI cores for a mixed kernel on a split chip); kernels waiting for cores are granted in queue
order (stream priority, then submission order), with no overtaking.
"""

from __future__ import annotations

from dataclasses import dataclass
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .runtime import DeviceRuntime
    from .stream import Task


class DeviceKernel(Protocol):
    """What a kernel launch hands the device: instruction-level kernels and library ops implement it.

    A kernel either runs its own code (``execute``), or has a fixed duration known when it is submitted
    (``duration_ps``: a library op costed by a model; the runtime then writes its row on the AI-core lane).
    """

    name: str
    core_type: str  # "cube", "vector" or "mix"
    block_dim: int

    def execute(self, runtime: DeviceRuntime, task: Task, start: int, cores: CoreGrant) -> int:
        """Run on the granted cores from ``start`` (ps); record trace events; return the end time."""
        ...


@dataclass(frozen=True)
class CoreGrant:
    """The physical cores a kernel received: AIC ids and AIV ids."""

    aic: tuple[int, ...]
    aiv: tuple[int, ...]


class CoreArray:
    """The AI cores of one device as two pools (AIC and AIV), granted to kernels in queue order."""

    def __init__(self, architecture: str, aic: int, aiv: int) -> None:
        self.architecture = architecture
        self.n_aic = aic
        self.n_aiv = aiv
        self.free_aic = list(range(aic))
        self.free_aiv = list(range(aiv))
        self.waiting: list[tuple] = []  # (priority, seq, task, kernel)

    def need(self, core_type: str, block_dim: int) -> tuple[int, int]:
        """(AIC, AIV) counts a kernel of this type and block count occupies."""
        if self.architecture == "coupled":
            if core_type == "vector":
                n = min(block_dim, self.n_aic + self.n_aiv)
                a = min(n, self.n_aic)
                return a, n - a
            return min(block_dim, self.n_aic), 0
        if core_type == "cube":
            return min(block_dim, self.n_aic), 0
        if core_type == "vector":
            return 0, min(block_dim, self.n_aiv)
        groups = min(block_dim, self.n_aic, self.n_aiv // 2)
        return groups, 2 * groups

    def request(self, priority: int, seq: int, task, kernel=None) -> None:
        """Queue ``task`` for cores; ``kernel`` (default: ``task.payload``) says its core type and block count."""
        heappush(self.waiting, (priority, seq, task, kernel if kernel is not None else task.payload))

    def grant(self) -> tuple[CoreGrant, object] | None:
        """Grant the first waiting kernel if its cores are free (no overtaking: FIFO by priority)."""
        if not self.waiting:
            return None
        _priority, _seq, task, kernel = self.waiting[0]
        a, v = self.need(kernel.core_type, kernel.block_dim)
        if a > len(self.free_aic) or v > len(self.free_aiv):
            return None
        self.free_aic.sort()
        self.free_aiv.sort()
        if kernel.core_type == "mix" and self.architecture == "split":
            # whole AI cores: AIC i works with AIV 2i and 2i+1 (mode-2 cross-core flags stay inside one)
            free_aiv = set(self.free_aiv)
            aic = [i for i in self.free_aic if 2 * i in free_aiv and 2 * i + 1 in free_aiv][:a]
            if len(aic) < a:
                return None
            aiv = [j for i in aic for j in (2 * i, 2 * i + 1)]
            self.free_aic = [i for i in self.free_aic if i not in aic]
            self.free_aiv = [j for j in self.free_aiv if j not in aiv]
        else:
            aic, self.free_aic = self.free_aic[:a], self.free_aic[a:]
            aiv, self.free_aiv = self.free_aiv[:v], self.free_aiv[v:]
        heappop(self.waiting)
        return CoreGrant(tuple(aic), tuple(aiv)), task

    def release(self, grant: CoreGrant) -> None:
        self.free_aic.extend(grant.aic)
        self.free_aiv.extend(grant.aiv)
