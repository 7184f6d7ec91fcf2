"""Lesson 9 exercise: a tiling cache and an adaptive tiling policy for a stream of matmul shapes.

A server runs one matmul per request, and every request may bring a new shape (M, N, K). Before each
launch the host must choose a TCubeTiling. The Planner below searches every base block and core split
for every shape, even a shape it has tiled before: correct, but the host pays hundreds of candidates
per request. Make it cheaper without making the device slower:

1. a cache: a shape seen before gets its tiling back through tiler.reuse (one lookup, no search);
2. the seed's adaptive policy for a new shape: while the shapes change slowly (the history's stability
   above SEED_STABLE), search fully once per size bucket and then only fit the core split to that
   bucket's base block; when the shapes jump around, fit the core split to the safe base block.

The tiler is the only way to a tiling, and every call costs host time on the timeline:
    tiler.search(shape)              every base block and core split (hundreds of candidates)
    tiler.search(shape, base=(bm, bn, bk))   only the core split, for that base block (a few candidates)
    tiler.reuse(tiling)              a tiling this tiler returned earlier in the run (one candidate)
Check it with:  ascendsim lesson check 9

第 9 课练习：为一连串形状不断变化的矩阵乘实现 tiling 缓存和自适应 tiling 策略。
服务端每个请求运行一次矩阵乘，每个请求都可能带来新的形状 (M, N, K)。每次下发之前，主机都要选定一个 TCubeTiling。
下面的 Planner 对每个形状都搜索所有基本块和核划分，即使这个形状之前已经算过：结果正确，但主机每个请求都要评估
几百个候选。在不让设备变慢的前提下把它变便宜：
1. 缓存：见过的形状通过 tiler.reuse 取回它的 tiling（查找一次，不再搜索）；
2. 对新形状使用原文的自适应策略：形状变化缓慢时（历史的稳定度高于 SEED_STABLE），每个尺寸桶只完整搜索一次，
   之后只把核划分适配到该桶的基本块；形状剧烈跳变时，把核划分适配到安全基本块。
tiler 是得到 tiling 的唯一途径，每次调用都会在时间线上花费主机时间（见上面的三种调用）。
检查：ascendsim lesson check 9
"""

from engine.host.dynamic_shapes import SAFE_BASE, SEED_STABLE, ShapeHistory, size_bucket  # noqa: F401 (yours to use)


class Planner:
    """Chooses the TCubeTiling of each matmul of a stream of shapes, on the host, through ``tiler``."""

    def __init__(self, tiler):
        self.tiler = tiler
        self.history = ShapeHistory()  # the seed's variability and stability of the recent shapes
        # TODO (2 lines): a cache of tilings by shape, and the base block tuned for each size bucket

    def tiling_for(self, shape):
        shape = tuple(shape)
        # TODO (about 15 lines): a shape in the cache -> self.tiler.reuse(its tiling);
        #   a new shape, stability above SEED_STABLE -> a full search for the first shape of its
        #   size_bucket (remember its base block), tiler.search(shape, base=that block) for the others;
        #   a new shape otherwise -> tiler.search(shape, base=SAFE_BASE with each side cut to the shape,
        #   rounded up to 16). Put every new tiling in the cache.
        tiling = self.tiler.search(shape)
        self.history.add(shape)
        return tiling


# Predict before you run: (1) on the random sequence (eight shapes, none repeated), does a tiling cache
# alone cut the host's tiling time by at least 10 %? (2) On the stable sequence (one shape eight times)
# the cache cuts the host's tiling time from about 310 us to about 40 us: is the run, from the first copy
# to the last, at least 5 % shorter? Answer "yes" or "no" to each.
PREDICTIONS = {"cache_random": None, "run_faster": None}  # TODO
