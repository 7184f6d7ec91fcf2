"""What a scenario run will need, estimated from its parameters before anything runs.

A :class:`Cost` holds the host memory the run will use (its numpy inputs, outputs and host buffers,
the simulated device memory that numerics back with real arrays, and the trace), the trace events it
will record (for instruction-level kernels, about one per instruction), and the floating-point work
of its numerics. Front ends compare it with the machine's limits and refuse a run that cannot finish,
or show progress for one that takes a while; an estimate never runs the simulation. Each scenario names
its estimate (``Scenario.cost``; ``Scenario.estimate`` calls it).

The per-unit figures are measured on this simulator (``tests/test_cost.py`` keeps them within 30 %
of the real counts):

* ``EVENT_BYTES``: host memory per trace event while a run is simulated and analysed (170 B measured
  on the 8192^3 timing-only matmul: columns, the scheduler's per-instruction arrays, the analysis'
  masks), rounded up;
* instructions per unit of kernel work (``_MATMUL_*``, ``_VECTOR_ADD_*``): counted from runs of the
  shipped kernels (a K slice is one ``mmad`` with its two ``load_data`` and queue flags, a chunk is
  the two GM loads of ``stepK`` slices, a base block ends with one ``fixpipe``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..profiles.profile import Profile

EVENT_BYTES = 200
# Host rows and device rows per pipeline batch (2 copies in, the matmul, 1 copy out: each a call and
# two task rows; waits when a stream is full), measured: 20.7 per batch
_PIPELINE_EVENTS_PER_BATCH = 21
# instructions of the tiled Cube matmul per K slice, per chunk of stepK slices, per base block
_MATMUL_SLICE, _MATMUL_CHUNK, _MATMUL_BLOCK = 11, 10, 4
# the mixed kernel adds, per base block, the vector cores' epilogue and the cross-core flags
_MIX_BLOCK = 25
# vector add: instructions per tile (3 moves, 1 add, 12 queue flags) and per block (set-up)
_VECTOR_ADD_TILE, _VECTOR_ADD_BLOCK = 16, 4


@dataclass(frozen=True)
class Cost:
    """Estimated needs of one run. ``params`` names, per field, the scenario parameters that set it (a message
    shows them as CLI flags or form fields)."""

    host_bytes: int  # numpy arrays the numerics allocate (host buffers, device memory, references)
    events: int  # trace events (instructions included)
    flops: int = 0  # floating-point work of the numerics (numpy), 0 without numerics
    params: dict = field(default_factory=dict)  # {"host_bytes": ("m", "n", "k"), "events": ..., "flops": ...}
    input_bytes: int = 0  # the named input arrays a replay regenerates for tile values (``Scenario.inputs``)

    @property
    def memory_bytes(self) -> int:
        """All host memory: the arrays plus the trace."""
        return self.host_bytes + self.events * EVENT_BYTES


def host_lifecycle_cost(profile: Profile, v: dict, numerics: bool) -> Cost:
    n2 = v["n"] ** 2
    # pinned A, B, C and device A, B, C (fp16), the fp64 draws, fp32 copies, reference and error
    host = (12 + 8 + 4 * 6) * n2 if numerics else 0
    flops = 2 * 2 * v["n"] ** 3 if numerics else 0  # the simulated op and the numpy reference
    return Cost(host, 40, flops, {"host_bytes": ("n",), "events": ("n",), "flops": ("n",)})


def pipeline_cost(profile: Profile, v: dict, numerics: bool) -> Cost:
    n2, batches, streams = v["n"] ** 2, v["batches"], v["streams"]
    host = 0
    flops = 0
    if numerics:
        # per batch: two inputs and one output on the host (fp16); per stream: three device buffers;
        # the base inputs (fp64 draws), the fp32 reference and one rolled copy while checking
        host = batches * 6 * n2 + streams * 6 * n2 + (8 + 4 * 6) * n2
        flops = 2 * v["n"] ** 3 * (batches + 1)
    events = _PIPELINE_EVENTS_PER_BATCH * batches + 8 * streams + 20
    params = {"host_bytes": ("batches", "n"), "events": ("batches",), "flops": ("batches", "n")}
    return Cost(host, events, flops, params)


def matmul_units(tiling) -> tuple[int, int, int]:
    """(K slices, chunks, base blocks) the tiled kernel works through, over all its cores."""
    t = tiling
    slices_per_block = math.ceil(t.Ka / t.baseK)
    chunks_per_block = math.ceil(t.Ka / (t.baseK * t.stepKa))
    blocks = 0
    for core in range(t.usedCoreNum):
        _m0, _n0, rows, cols = t.core_region(core)
        blocks += math.ceil(rows / t.baseM) * math.ceil(cols / t.baseN)
    return blocks * slices_per_block, blocks * chunks_per_block, blocks


def matmul_cost_of(tiling, v: dict, numerics: bool, out_bytes: int, mixed: bool) -> Cost:
    """A matmul's cost from its tiling (:func:`engine.scenarios.kernels.matmul_tiling`'s) and parameters."""
    m, n, k = v["m"], v["n"], v["k"]
    slices, chunks, blocks = matmul_units(tiling)
    events = _MATMUL_SLICE * slices + _MATMUL_CHUNK * chunks + (_MATMUL_BLOCK + (_MIX_BLOCK if mixed else 0)) * blocks
    events += 60 + 8 * tiling.usedCoreNum * (3 if mixed else 1)
    host = flops = 0
    if numerics:
        mk, kn, mn = m * k, k * n, m * n
        # pinned and device A, B, C; the fp64 draws of A and B; fp32 copies of A and B; the fp32 result,
        # reference and error arrays; the fp32 workspace of the mixed kernel (device memory)
        host = 2 * (2 * mk + 2 * kn + out_bytes * mn) + 8 * max(mk, kn) + 4 * (mk + kn) + 16 * mn
        host += 4 * mn if mixed else 0
        flops = 2 * 2 * m * n * k  # the Cube's mmads (in numpy) and the reference
    names = ("m", "n", "k")
    return Cost(host, events, flops, {"host_bytes": names, "events": names, "flops": names}, 2 * (m * k + k * n))


def vector_add_units(length: int, tile_length: int, block_dim: int) -> tuple[int, int]:
    """(tiles, blocks) of the vector-add kernel: blocks take a balanced share, in tiles."""
    base, rem = divmod(length, block_dim)
    tiles = rem * math.ceil((base + 1) / tile_length) + (block_dim - rem) * math.ceil(base / tile_length)
    return tiles, block_dim


def vector_add_cost(profile: Profile, v: dict, numerics: bool) -> Cost:
    length, tile = v["length"], v["tile_length"]
    block_dim = v["cores"] or min(profile.vector_cores, max(1, math.ceil(length / tile)))
    tiles, blocks = vector_add_units(length, tile, block_dim)
    events = _VECTOR_ADD_TILE * tiles + _VECTOR_ADD_BLOCK * blocks + 60
    # pinned and device x, y, z (fp16), the fp64 draws, the expected sum and the fp32 error arrays
    host = (12 + 8 + 2 + 12) * length if numerics else 0
    names = ("length",) if v["cores"] is None else ("length", "cores")
    params = {"host_bytes": ("length",), "events": names, "flops": names}
    return Cost(host, events, length if numerics else 0, params, 2 * 2 * length)


def summed_cost(costs, names: tuple[str, ...]) -> Cost:
    """Several runs' costs as one (a sequence of matmuls), every figure scaling with ``names``."""
    host = events = flops = 0
    for one in costs:
        host, events, flops = host + one.host_bytes, events + one.events, flops + one.flops
    return Cost(host, events, flops, {"host_bytes": names, "events": names, "flops": names})


def debug_demo_cost(profile: Profile, v: dict, numerics: bool) -> Cost:
    return Cost(1 << 20, 2000, 0, {})
