"""Matmul tiling on the host: the ``TCubeTiling`` struct, its constraints, and an automatic tiler.

``MultiCoreMatmulTiling`` mirrors the Ascend C host API (``SetDim``, ``SetShape``, ``SetFixSplit``,
``GetTiling``). Each core (block) computes a ``singleCoreM x singleCoreN`` region of C over the whole
K; inside it, ``baseM x baseN`` blocks of C, one ``baseK`` slice of K per ``mmad``. A and B move
GM -> L1 in chunks of ``stepKa`` / ``stepKb`` K-slices, then L1 -> L0A/L0B per K-slice (``dbL0A`` /
``dbL0B`` slots). ``depthA1`` / ``depthB1`` count base blocks held in L1, as CANN's TCubeTiling does
("depthA1为A1中全载baseM*baseK的份数", the TCubeTiling structure page of the Ascend C API reference):
``depthA1 = stepM * stepKa * slots`` with 1 slot (single) or 2 (double buffered), so stepKa = 4 double
buffered is depthA1 = 8. Every constraint the ADK
documents for TCubeTiling is checked; a violation names the field, the limit and the value.

The automatic tiler scores candidates with a small analytic model of the same pipes (the slowest of
Cube, MTE1 and MTE2 per K-slice when double buffered, their sum when not; MTE2 in whole GM requests as
the memory system counts them), bounded below by the time the shared L2 needs to carry every core's
loads, and keeps the fastest;
the number of candidates it scored is what the host pays for tiling (``host.tiling_us_per_candidate``).

With a fixed base block (``SetFixSplit``), A and B are staged in L1 as CANN's published high-performance
matmul samples stage them (:func:`sample_l1_steps`): each operand gets half of L1, in ``buffer_num``
slots, and moves in the deepest K step that fills its half, so for the recommended 128 x 256 x 64
block stepKa = 8 and stepKb = 4 (depthA1 = 16, depthB1 = 8).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from ..profiles.profile import Profile

FP16 = 2
FP32 = 4


class TilingError(ValueError):
    """A tiling constraint is violated: ``field``, ``limit`` and ``value`` say which and how (``limit_zh``: the
    limit in Chinese, for the UIs that show the trainee's language; :attr:`zh` is the whole message)."""

    def __init__(self, field: str, limit: str, value, limit_zh: str) -> None:
        super().__init__(f"{field} {limit}, got {value}")
        self.field = field
        self.limit = limit
        self.value = value
        self.zh = f"{field} {limit_zh}，收到 {value}"


@dataclass(frozen=True)
class TCubeTiling:
    usedCoreNum: int
    M: int
    N: int
    Ka: int
    Kb: int
    singleCoreM: int
    singleCoreN: int
    singleCoreK: int
    baseM: int
    baseN: int
    baseK: int
    depthA1: int
    depthB1: int
    stepM: int
    stepN: int
    stepKa: int
    stepKb: int
    isBias: int
    iterateOrder: int  # 0: M first (walk down a column of base blocks), 1: N first (along a row)
    dbL0A: int
    dbL0B: int
    dbL0C: int

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def l1_slots_a(self) -> int:
        """A's L1 buffers (1 or 2): ``depthA1`` base blocks in chunks of ``stepM * stepKa``."""
        return _l1_slots(self, "depthA1", ("stepM", "stepKa"))

    @property
    def l1_slots_b(self) -> int:
        """B's L1 buffers (1 or 2): ``depthB1`` base blocks in chunks of ``stepN * stepKb``."""
        return _l1_slots(self, "depthB1", ("stepN", "stepKb"))

    @property
    def m_cores(self) -> int:
        return math.ceil(self.M / self.singleCoreM)

    @property
    def n_cores(self) -> int:
        return math.ceil(self.N / self.singleCoreN)

    def core_region(self, block: int) -> tuple[int, int, int, int]:
        """``(m0, n0, rows, cols)`` of C that block ``block`` computes (rows or cols may be 0)."""
        mi, ni = divmod(block, self.n_cores)
        m0, n0 = mi * self.singleCoreM, ni * self.singleCoreN
        return m0, n0, max(0, min(self.singleCoreM, self.M - m0)), max(0, min(self.singleCoreN, self.N - n0))


def _l1_slots(t: TCubeTiling, depth: str, steps: tuple[str, str]) -> int:
    """``depth`` / (the two ``steps``' product), which must be 1 or 2; else :class:`TilingError`."""
    chunk = getattr(t, steps[0]) * getattr(t, steps[1])
    value = getattr(t, depth)
    if chunk < 1 or value not in (chunk, 2 * chunk):
        raise TilingError(
            depth,
            f"counts base blocks in L1: must be {steps[0]}*{steps[1]} ({chunk}, one buffer) or twice it "
            f"({2 * chunk}, double buffered)",
            value,
            f"是 L1 中基本块的个数：必须是 {steps[0]}*{steps[1]}（{chunk}，单缓冲）或它的两倍（{2 * chunk}，双缓冲）",
        )
    return value // chunk


def validate(t: TCubeTiling, profile: Profile, out_bytes: int = FP16) -> None:
    """Raise :class:`TilingError` on the first violated constraint."""
    b = profile.buffers
    cores = profile.chip.aic_cores
    fr = profile.compute.cube_m

    def need(ok: bool, field: str, limit: str, value, limit_zh: str) -> None:
        if not ok:
            raise TilingError(field, limit, value, limit_zh)

    for name in ("M", "N", "Ka", "Kb", "singleCoreM", "singleCoreN", "singleCoreK", "baseM", "baseN", "baseK"):
        need(getattr(t, name) >= 1, name, "must be >= 1", getattr(t, name), "必须 >= 1")
    need(t.Ka == t.Kb, "Kb", f"must equal Ka ({t.Ka})", t.Kb, f"必须等于 Ka（{t.Ka}）")
    need(
        1 <= t.usedCoreNum <= cores,
        "usedCoreNum",
        f"must be in 1..{cores} (Cube cores of {profile.name})",
        t.usedCoreNum,
        f"必须在 1..{cores} 之间（{profile.name} 的 Cube 核数）",
    )
    need(
        t.m_cores * t.n_cores <= t.usedCoreNum,
        "usedCoreNum",
        f"must cover ceil(M/singleCoreM) x ceil(N/singleCoreN) = {t.m_cores * t.n_cores} core regions",
        t.usedCoreNum,
        f"必须覆盖 ceil(M/singleCoreM) x ceil(N/singleCoreN) = {t.m_cores * t.n_cores} 个核区域",
    )
    need(
        t.singleCoreK == t.Ka,
        "singleCoreK",
        f"must equal K ({t.Ka}): split-K is not supported",
        t.singleCoreK,
        f"必须等于 K（{t.Ka}）：不支持切分 K",
    )
    for name in ("baseM", "baseN", "baseK"):
        need(getattr(t, name) % fr == 0, name, f"must be a multiple of {fr}", getattr(t, name), f"必须是 {fr} 的倍数")
    for name in ("dbL0A", "dbL0B", "dbL0C"):
        need(getattr(t, name) in (1, 2), name, "must be 1 or 2", getattr(t, name), "必须是 1 或 2")
    for name in ("stepM", "stepN"):
        need(
            getattr(t, name) == 1,
            name,
            "must be 1 (one base block of M/N per L1 load)",
            getattr(t, name),
            "必须是 1（每次 L1 载入一个 M/N 方向的基本块）",
        )
    for name in ("stepKa", "stepKb"):
        need(getattr(t, name) >= 1, name, "must be >= 1", getattr(t, name), "必须 >= 1")
    _l1_slots(t, "depthA1", ("stepM", "stepKa"))  # each depth is one or two K steps of base blocks
    _l1_slots(t, "depthB1", ("stepN", "stepKb"))
    need(
        t.iterateOrder in (0, 1),
        "iterateOrder",
        "must be 0 (M first) or 1 (N first)",
        t.iterateOrder,
        "必须是 0（先 M）或 1（先 N）",
    )
    need(t.isBias == 0, "isBias", "must be 0 (bias is not supported)", t.isBias, "必须是 0（不支持偏置）")
    l0a = t.baseM * t.baseK * FP16 * t.dbL0A
    need(l0a <= b.l0a, "baseM*baseK*2*dbL0A", f"must fit L0A ({b.l0a} B)", f"{l0a} B", f"必须放得进 L0A（{b.l0a} B）")
    l0b = t.baseN * t.baseK * FP16 * t.dbL0B
    need(l0b <= b.l0b, "baseN*baseK*2*dbL0B", f"must fit L0B ({b.l0b} B)", f"{l0b} B", f"必须放得进 L0B（{b.l0b} B）")
    l0c = t.baseM * t.baseN * FP32 * t.dbL0C
    need(l0c <= b.l0c, "baseM*baseN*4*dbL0C", f"must fit L0C ({b.l0c} B)", f"{l0c} B", f"必须放得进 L0C（{b.l0c} B）")
    l1 = l1_bytes(t)
    need(
        l1 <= b.l1,
        "L1 (depthA1*baseM*baseK + depthB1*baseK*baseN)*2",
        f"must fit L1 ({b.l1} B)",
        f"{l1} B",
        f"必须放得进 L1（{b.l1} B）",
    )


def l1_bytes(t: TCubeTiling) -> int:
    """Bytes of L1 the tiling holds: ``depthA1`` base blocks of A and ``depthB1`` of B (ADK's units)."""
    return (t.depthA1 * t.baseM * t.baseK + t.depthB1 * t.baseK * t.baseN) * FP16


def make_tiling(
    m: int,
    n: int,
    k: int,
    cores: int,
    base: tuple[int, int, int],
    buffer_num: int,
    step_k: int,
    m_cores: int,
    n_cores: int,
    iterate_order: int,
) -> TCubeTiling:
    bm, bn, bk = base
    single_m = _round_up(math.ceil(m / m_cores), 16) if m_cores > 1 else m
    single_n = _round_up(math.ceil(n / n_cores), 16) if n_cores > 1 else n
    used = math.ceil(m / single_m) * math.ceil(n / single_n)
    return TCubeTiling(
        usedCoreNum=min(cores, max(1, used)),
        M=m,
        N=n,
        Ka=k,
        Kb=k,
        singleCoreM=single_m,
        singleCoreN=single_n,
        singleCoreK=k,
        baseM=bm,
        baseN=bn,
        baseK=bk,
        depthA1=buffer_num * step_k,  # base blocks of A in L1: buffer_num slots of step_k
        depthB1=buffer_num * step_k,
        stepM=1,
        stepN=1,
        stepKa=step_k,
        stepKb=step_k,
        isBias=0,
        iterateOrder=iterate_order,
        dbL0A=buffer_num,
        dbL0B=buffer_num,
        dbL0C=1,
    )


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _l2_bytes(m: int, n: int, k: int, single_m: int, single_n: int, bm: int, bn: int) -> int:
    """Bytes all cores load from GM: every base block reads its rows of A and its columns of B over all of K,
    so A is read once per column of base blocks and B once per row of them."""

    def count(size: int, single: int, base: int) -> int:  # base blocks along one side, over every core region
        full, tail = divmod(size, single)
        return full * math.ceil(single / base) + math.ceil(tail / base)

    return FP16 * k * (m * count(n, single_n, bn) + n * count(m, single_m, bm))


class _SliceModel:
    """Cycles of one K slice of one base block (the slowest pipe when double buffered, their sum when not)."""

    def __init__(self, profile: Profile, base: tuple[int, int, int], step: int, double: bool, out_bytes: int) -> None:
        c = profile.compute
        p = profile.paths
        self.clock = profile.chip.clock_mhz * 1e6
        bm, bn, bk = base
        cube = (bm // 16) * (bn // 16) * (bk // 16) + c.cube_startup_cycles
        mte1 = (bm * bk * FP16 / (p.l1_to_l0a * 1e9) + bk * bn * FP16 / (p.l1_to_l0b * 1e9)) * self.clock
        mte1 += 2 * c.mte_startup_cycles
        # MTE2 per K slice, as the memory system times it: the core streams whole GM requests (one per
        # row piece: A rows of bk*step, B rows of bn elements) at its path rate
        req = c.gm_request_bytes
        streamed = (bm * -(-bk * step * FP16 // req) + bk * step * -(-bn * FP16 // req)) * req / step
        mte2 = streamed / (p.gm_to_l1 * 1e9) * self.clock + 2 * (c.mte_startup_cycles + c.gm_l2_latency_cycles) / step
        self.link = self.clock / (profile.chip.l2_gbps * 1e9)  # cycles per byte the shared L2 carries
        self.double = double
        self.per_slice = max(cube, mte1, mte2) if double else cube + mte1 + mte2
        self.fix = bm * bn * out_bytes / (p.l0c_to_gm * 1e9) * self.clock + c.mte_startup_cycles
        self.startup = mte2 + mte1 + c.gm_hbm_latency_cycles

    def us(self, blocks: int, slices: int, l2_bytes: int) -> float:
        """``blocks``: the busiest core's base blocks; ``l2_bytes``: what all cores load through the shared L2."""
        core = blocks * (slices * self.per_slice + self.fix + (0 if self.double else self.startup)) + self.startup
        return max(core, l2_bytes * self.link) / self.clock * 1e6


_BASE_M = (16, 32, 64, 128, 256)
_BASE_N = (16, 32, 64, 128, 256)
_BASE_K = (16, 32, 64, 128, 256)
_STEP_K = (1, 2, 4, 8)


def _fits(profile: Profile, base: tuple[int, int, int], step: int, buffer_num: int) -> bool:
    """The buffer-capacity constraints, which depend only on the base block, the K step and buffering."""
    bm, bn, bk = base
    b = profile.buffers
    return (
        bm * bk * FP16 * buffer_num <= b.l0a
        and bn * bk * FP16 * buffer_num <= b.l0b
        and bm * bn * FP32 <= b.l0c
        and buffer_num * (bm * bk * step + bk * step * bn) * FP16 <= b.l1
    )


def auto_tiling(
    profile: Profile,
    m: int,
    n: int,
    k: int,
    cores: int | None = None,
    buffer_num: int = 2,
    base: tuple[int, int, int] | None = None,
    out_bytes: int = FP16,
) -> tuple[TCubeTiling, int]:
    """The fastest valid tiling by the analytic kernel time (:class:`_SliceModel`: the busiest core's base
    blocks times the per-K-slice bottleneck, or the time the shared L2 needs to carry every core's loads,
    whichever is longer); returns ``(tiling, candidates_scored)``.

    Candidates: every base block of 16..256 per side that fits the buffers (or the fixed ``base``), each
    with the deepest K step (1, 2, 4 or 8) whose L1 buffers fit, times every split of the cores over M and
    N that uses as many cores as any split can. Ties go to bigger base blocks. Iteration is M first.
    """
    cores = cores or profile.chip.aic_cores
    splits = [
        (mc, nc)
        for mc in range(1, cores + 1)
        for nc in range(1, cores // mc + 1)
        if mc <= math.ceil(m / 16) and nc <= math.ceil(n / 16)
    ]

    def regions(mc: int, nc: int) -> int:
        return math.ceil(m / _round_up(math.ceil(m / mc), 16)) * math.ceil(n / _round_up(math.ceil(n / nc), 16))

    top = max(regions(mc, nc) for mc, nc in splits)
    splits = [s for s in splits if regions(*s) == top]
    bases = (
        [base]
        if base
        else [
            (bm, bn, bk)
            for bm in _BASE_M
            for bn in _BASE_N
            for bk in _BASE_K
            if bm <= _round_up(m, 16) and bn <= _round_up(n, 16) and bk <= _round_up(k, 16)
        ]
    )
    best: tuple[tuple, tuple] | None = None
    scored = 0
    shapes = []
    for mc, nc in splits:
        single_m = _round_up(math.ceil(m / mc), 16) if mc > 1 else m
        single_n = _round_up(math.ceil(n / nc), 16) if nc > 1 else n
        shapes.append((mc, nc, min(single_m, m), min(single_n, n), single_m, single_n))
    double = buffer_num == 2
    for b in bases:
        # the deepest K step whose L1 buffers fit: deeper steps only amortise more MTE2 set-up
        steps = [
            st for st in _STEP_K if (st == 1 or st * b[2] <= _round_up(k, b[2])) and _fits(profile, b, st, buffer_num)
        ]
        if not steps:
            continue
        step = steps[-1]
        slices = math.ceil(k / b[2])
        model = _SliceModel(profile, b, step, double, out_bytes)
        for mc, nc, rows, cols, single_m, single_n in shapes:
            blocks = math.ceil(rows / b[0]) * math.ceil(cols / b[1])
            loads = _l2_bytes(m, n, k, single_m, single_n, b[0], b[1])
            scored += 1
            key = (round(model.us(blocks, slices, loads), 3), -(b[0] * b[1] * b[2]), mc)
            if best is None or key < best[0]:
                best = (key, (b, step, mc, nc))
    if best is None:
        raise TilingError(
            "baseM,baseN,baseK",
            f"no valid tiling for this shape on {profile.name}",
            base or (m, n, k),
            f"在 {profile.name} 上这个形状找不到合法的 tiling",
        )
    b, step, mc, nc = best[1]
    tiling = make_tiling(m, n, k, cores, b, buffer_num, step, mc, nc, 0)
    validate(tiling, profile, out_bytes)
    return tiling, scored


def sample_l1_steps(profile: Profile, base: tuple[int, int, int], k: int, buffer_num: int) -> tuple[int, int]:
    """``(stepKa, stepKb)`` of the L1 staging CANN's published samples use for a base block.

    ADK's ``matmul_high_performance`` case 5 (the Matmul API, MDL template, the fastest L1 set-up of its
    cases 1-5) and ``matmul_basic_api_high_performance`` (basic APIs) both give A the first half of L1 and
    B the second, each as ping and pong, and fill them: for baseM x baseN x baseK = 128 x 256 x 64 on the
    910B, stepKa = 8 and stepKb = 4 (2 x 128 x 512 x 2 B = 256 KB each; ``depthA1 = 16``, ``depthB1 = 8``).
    For other base blocks the same rule, an ASSUMPTION (no sample publishes them): the deepest step of 1, 2,
    4 or 8 whose ``buffer_num`` slots fit the operand's half of L1, and no deeper than K needs. (CATLASS's
    ``00_basic_matmul`` stages the same block with K 256 for both, stepKa = stepKb = 4, using 3/4 of L1.)
    """
    bm, bn, bk = base
    half = profile.buffers.l1 // 2

    def deepest(rows: int) -> int:
        needed = [st for st in _STEP_K if st == 1 or st * bk <= _round_up(k, bk)]
        fits = [st for st in needed if buffer_num * rows * bk * st * FP16 <= half]
        return fits[-1] if fits else 1

    return deepest(bm), deepest(bn)


class MultiCoreMatmulTiling:
    """The host tiling API: set dims, types and shape, optionally a fixed split, then ``get_tiling()``."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._dim = profile.chip.aic_cores
        self._shape: tuple[int, int, int] | None = None
        self._base: tuple[int, int, int] | None = None
        self._buffer_num = 2
        self._out_bytes = FP16
        self.candidates_scored = 0

    def set_dim(self, cores: int) -> None:
        self._dim = cores

    def set_a_type(self, dtype) -> None:
        self._require_fp16(dtype, "A")

    def set_b_type(self, dtype) -> None:
        self._require_fp16(dtype, "B")

    def set_c_type(self, dtype) -> None:
        size = getattr(dtype, "sizeof", lambda: 0)()
        if size not in (FP16, FP32):
            raise TilingError("C type", "must be float16 or float32", dtype, "必须是 float16 或 float32")
        self._out_bytes = size

    def _require_fp16(self, dtype, which: str) -> None:
        if getattr(dtype, "sizeof", lambda: 0)() != FP16:
            raise TilingError(
                f"{which} type",
                "must be float16 (fp16 inputs, fp32 accumulation)",
                dtype,
                "必须是 float16（fp16 输入，fp32 累加）",
            )

    def set_shape(self, m: int, n: int, k: int) -> None:
        for name, v in (("M", m), ("N", n), ("K", k)):
            if not isinstance(v, int) or v < 1:
                raise TilingError(name, "must be an integer >= 1", v, "必须是 >= 1 的整数")
        self._shape = (m, n, k)

    set_org_shape = set_shape

    def set_fix_split(self, base_m: int, base_n: int, base_k: int) -> None:
        self._base = (base_m, base_n, base_k)

    def set_buffer_num(self, buffer_num: int) -> None:
        if buffer_num not in (1, 2):
            raise TilingError("buffer_num", "must be 1 or 2", buffer_num, "必须是 1 或 2")
        self._buffer_num = buffer_num

    def get_tiling(self) -> TCubeTiling:
        if self._shape is None:
            raise TilingError(
                "shape", "must be set with set_shape(M, N, K) first", None, "必须先用 set_shape(M, N, K) 设置"
            )
        cores = self.profile.chip.aic_cores
        if not isinstance(self._dim, int) or not 1 <= self._dim <= cores:
            raise TilingError(
                "dim",
                f"must be in 1..{cores} (Cube cores of {self.profile.name})",
                self._dim,
                f"必须在 1..{cores} 之间（{self.profile.name} 的 Cube 核数）",
            )
        m, n, k = self._shape
        if self._base is not None:
            bm, bn, bk = self._base
            probe = make_tiling(m, n, k, self._dim, self._base, self._buffer_num, 1, 1, 1, 0)
            validate(replace(probe, M=max(m, 16), N=max(n, 16)), self.profile, self._out_bytes)
            for name, v in (("baseM", bm), ("baseN", bn), ("baseK", bk)):
                if v < 16 or v % 16:
                    raise TilingError(name, "must be a multiple of 16", v, "必须是 16 的倍数")
        tiling, self.candidates_scored = auto_tiling(
            self.profile, m, n, k, self._dim, self._buffer_num, self._base, self._out_bytes
        )
        if self._base is not None:  # the published samples' L1 staging for this base block
            step_a, step_b = sample_l1_steps(self.profile, self._base, k, self._buffer_num)
            slots = self._buffer_num
            tiling = replace(tiling, stepKa=step_a, stepKb=step_b, depthA1=slots * step_a, depthB1=slots * step_b)
        validate(tiling, self.profile, self._out_bytes)
        return tiling
