"""Dynamic shapes (seed sections 3.2 and 5.2): shape history, tiling cache and an adaptive policy.

When every call brings a new shape, the host must tile again before each launch, and that host
work can sit on the critical path. The seed's answer has three parts, named as it names them:

* :class:`ShapeHistory` keeps the recent shapes and measures how much they vary: the *variability*
  is the seed's average relative change between consecutive problem sizes (``|s_i - s_{i-1}| /
  s_{i-1}`` with ``s = M*N*K``), the *stability* is ``1 - variability`` (clipped to [0, 1]).
* :class:`DynamicTilingAdapter` turns a history and the current shape into a :class:`TilingPolicy`
  (static when the variability is below 0.1, the seed's threshold; its stability), which the
  coordinator decides by.
* :class:`DynamicShapeCoordinator` makes a :class:`TuningDecision` for each shape under one of three
  policies: ``recompute`` (search the tiling every time), ``cache`` (a :class:`TilingCache` keyed by
  shape and profile: a repeated shape costs one lookup), or ``adaptive`` (the seed's). Adaptive
  first looks the exact shape up in the cache; on a miss, a *stable* stream (stability above 0.8:
  shapes change slowly) reuses the base block tuned once for the shape's size bucket and only fits
  the core split to the exact shape — the seed's aggressive strategy, a search a few dozen times
  cheaper than a full one after the bucket's first shape; a *variable* stream takes the seed's
  conservative strategy: a safe base block (128 x 128 x 64, cut to the shape) that fits every
  profile's L0 buffers double-buffered, with the core split fitted, and no search over bases.

Every decision carries its host cost: candidates scored x the profile's ``tiling_us_per_candidate``
(a cache lookup counts as one candidate: an ASSUMPTION, a hash lookup and a copy of the struct).
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass

from ..aicore.matmul_tiling import TCubeTiling, auto_tiling
from ..profiles.profile import Profile

SEED_STATIC_VARIABILITY = 0.1  # seed 3.2: is_static = (avg_variation < 0.1)
SEED_STABLE = 0.8  # seed 5.2: pattern.stability > 0.8 -> the aggressive (tuned) strategy
HISTORY = 8  # shapes the coordinator looks back on (ASSUMPTION: enough to see a trend, short enough to react)
SAFE_BASE = (128, 128, 64)  # fits L0A/L0B (2 x 16 KiB) and L0C (64 KiB) of every profile, double-buffered
POLICIES = ("recompute", "cache", "adaptive")

Shape = tuple[int, int, int]


class ShapeHistory:
    """The last ``size`` shapes and how much they vary."""

    def __init__(self, size: int = HISTORY) -> None:
        self.shapes: deque[Shape] = deque(maxlen=size)

    def add(self, shape: Shape) -> None:
        self.shapes.append(tuple(shape))

    def variability(self, current: Shape | None = None) -> float:
        """The seed's average relative variation of problem size over the history (and ``current``)."""
        sizes = [m * n * k for m, n, k in self.shapes]
        if current is not None:
            sizes.append(current[0] * current[1] * current[2])
        if len(sizes) < 2:
            return 0.0
        changes = [abs(b - a) / a for a, b in itertools.pairwise(sizes)]
        return sum(changes) / len(changes)

    def stability(self, current: Shape | None = None) -> float:
        return stability_of(self.variability(current))


def stability_of(variability: float) -> float:
    """The seed's stability: ``1 - variability``, clipped to [0, 1]."""
    return max(0.0, min(1.0, 1.0 - variability))


@dataclass(frozen=True)
class TilingPolicy:
    """Seed 3.2's analysis of the shapes so far and the current one: static or not, how much they vary."""

    is_static: bool
    variability: float
    stability: float


class TilingCache:
    """Tilings by (profile, shape, cores, buffer number): what recomputing would return, found in one lookup."""

    def __init__(self) -> None:
        self._tilings: dict[tuple, TCubeTiling] = {}
        self.hits = 0
        self.misses = 0

    def key(self, profile: Profile, shape: Shape, cores: int, buffer_num: int) -> tuple:
        return (profile.name, *shape, cores, buffer_num)

    def get(self, key: tuple) -> TCubeTiling | None:
        found = self._tilings.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, key: tuple, tiling: TCubeTiling) -> None:
        self._tilings[key] = tiling

    def __len__(self) -> int:
        return len(self._tilings)


@dataclass(frozen=True)
class TuningDecision:
    """What the coordinator chose for one shape, and what the choice cost on the host."""

    shape: Shape
    policy: str  # recompute, cache, adaptive
    strategy: (
        str  # "search" (full), "cached" (the shape's own tiling), "bucket" (the bucket's base), "safe" (SAFE_BASE)
    )
    cache: str  # "hit", "miss" or "none" (recompute)
    tiling: TCubeTiling
    candidates: int  # candidates scored (a lookup counts one)
    tiling_us: float  # host time the decision cost
    stability: float
    variability: float
    use_double_buffering: bool

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "tiling"}
        t = self.tiling
        out["shape"] = list(self.shape)
        out["base"] = [t.baseM, t.baseN, t.baseK]
        out["cores"] = t.usedCoreNum
        return out


def size_bucket(shape: Shape) -> Shape:
    """The size class of a shape: each side rounded up to a power of two (at least 16)."""
    return tuple(max(16, 1 << math.ceil(math.log2(max(1, side)))) for side in shape)


class DynamicTilingAdapter:
    """Seed 3.2: from recent problem sizes, a static or adaptive tiling policy."""

    def analyze_shape_pattern(self, history: ShapeHistory, current: Shape) -> TilingPolicy:
        variability = history.variability(current)
        return TilingPolicy(variability < SEED_STATIC_VARIABILITY, variability, stability_of(variability))


class DynamicShapeCoordinator:
    """Seed 5.2: one :class:`TuningDecision` per shape, under a policy, with a tiling cache."""

    def __init__(self, profile: Profile, policy: str = "adaptive", cores: int | None = None, buffer_num: int = 2):
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        self.profile = profile
        self.policy = policy
        self.cores = cores or profile.chip.aic_cores
        self.buffer_num = buffer_num
        self.history = ShapeHistory()
        self.adapter = DynamicTilingAdapter()
        self.cache = TilingCache()
        self._bucket_bases: dict[tuple, tuple[int, int, int]] = {}  # size bucket -> its tuned base block
        self.decisions: list[TuningDecision] = []

    def _search(self, shape: Shape, base: tuple[int, int, int] | None = None) -> tuple[TCubeTiling, int]:
        return auto_tiling(self.profile, *shape, self.cores, self.buffer_num, base)

    def _on_miss(self, shape: Shape, stability: float) -> tuple[TCubeTiling, int, str]:
        """A tiling for a shape the cache does not hold: (tiling, candidates scored, strategy)."""
        if self.policy == "cache":
            return (*self._search(shape), "search")
        if stability > SEED_STABLE:  # slow change: the size bucket's tuned base block still suits
            bucket = (self.profile.name, size_bucket(shape), self.cores, self.buffer_num)
            base = self._bucket_bases.get(bucket)
            if base is None:
                tiling, scored = self._search(shape)
                self._bucket_bases[bucket] = (tiling.baseM, tiling.baseN, tiling.baseK)
                return tiling, scored, "search"
            return (*self._search(shape, base), "bucket")
        safe = tuple(min(b, -(-side // 16) * 16) for b, side in zip(SAFE_BASE, shape, strict=True))
        return (*self._search(shape, safe), "safe")

    def make_decision(self, shape: Shape) -> TuningDecision:
        shape = tuple(int(x) for x in shape)
        pattern = self.adapter.analyze_shape_pattern(self.history, shape)
        stability, variability = pattern.stability, pattern.variability
        key = self.cache.key(self.profile, shape, self.cores, self.buffer_num)
        if self.policy == "recompute":
            tiling, scored = self._search(shape)
            strategy, cache = "search", "none"
        else:
            tiling = self.cache.get(key)
            scored, cache, strategy = 1, "hit", "cached"  # a lookup counts as one candidate
            if tiling is None:
                cache = "miss"
                tiling, searched, strategy = self._on_miss(shape, stability)
                scored += searched
                self.cache.put(key, tiling)
        self.history.add(shape)
        cost = scored * self.profile.host.tiling_us_per_candidate
        decision = TuningDecision(
            shape,
            self.policy,
            strategy,
            cache,
            tiling,
            scored,
            cost,
            round(stability, 4),
            round(variability, 4),
            tiling.dbL0A == 2,
        )
        self.decisions.append(decision)
        return decision
