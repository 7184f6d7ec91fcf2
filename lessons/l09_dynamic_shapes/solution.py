"""Lesson 9 reference solution: a tiling cache, and the seed's adaptive policy for the shapes it misses."""

from engine.host.dynamic_shapes import SAFE_BASE, SEED_STABLE, ShapeHistory, size_bucket


class Planner:
    """Chooses the TCubeTiling of each matmul of a stream of shapes, on the host, through ``tiler``."""

    def __init__(self, tiler):
        self.tiler = tiler
        self.history = ShapeHistory()  # the seed's variability and stability of the recent shapes
        self.cache = {}  # shape -> its tiling (one profile and core count here: key by them too when they vary)
        self.bucket_base = {}  # size bucket -> the base block a full search chose for its first shape

    def tiling_for(self, shape):
        shape = tuple(shape)
        cached = self.cache.get(shape)
        if cached is not None:
            tiling = self.tiler.reuse(cached)  # a repeated shape: one lookup
        else:
            tiling = self.cache[shape] = self._new_shape(shape)
        self.history.add(shape)
        return tiling

    def _new_shape(self, shape):
        if self.history.stability(shape) > SEED_STABLE:  # shapes change slowly: the bucket's base block still suits
            bucket = size_bucket(shape)
            base = self.bucket_base.get(bucket)
            if base is not None:
                return self.tiler.search(shape, base=base)  # only the core split is fitted to the exact shape
            tiling = self.tiler.search(shape)
            self.bucket_base[bucket] = (tiling.baseM, tiling.baseN, tiling.baseK)
            return tiling
        # shapes jump around: the seed's conservative strategy, a safe base block cut to the shape
        safe = tuple(min(b, -(-side // 16) * 16) for b, side in zip(SAFE_BASE, shape, strict=True))
        return self.tiler.search(shape, base=safe)


PREDICTIONS = {"cache_random": "no", "run_faster": "no"}
