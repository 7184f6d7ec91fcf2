"""The shared memory system: GM requests, first-byte latency, L2 hits, and links shared by all cores."""

import pytest

from engine import load_profile
from engine.aicore.memory_system import SharedMemorySystem, requests

PROFILE = load_profile("ascend910b1")
PS_PER_CYCLE = PROFILE.ps_per_cycle
GM_TO_L1 = PROFILE.paths.gm_to_l1 * 1e9 / 1e12  # bytes per ps
HBM_LAT = round(PROFILE.compute.gm_hbm_latency_cycles * PS_PER_CYCLE)
L2_LAT = round(PROFILE.compute.gm_l2_latency_cycles * PS_PER_CYCLE)


def test_requests_never_cross_a_row_or_a_512_byte_boundary():
    assert requests(0, 128, 128, 16384, 512) == 128  # an A tile of 64 fp16 columns: one request per row
    assert requests(0, 128, 1024, 16384, 512) == 256
    assert requests(0, 1, 8192, 8192, 512) == 16  # contiguous
    assert requests(0, 4, 2048, 2048, 512) == 16  # rows packed end to end are one run
    assert requests(256, 1, 512, 512, 512) == 2  # misaligned: straddles a boundary
    assert requests(0, 3, 100, 450, 512) == 1 + 2 + 1  # rows at 0..100, 450..550 (crosses 512), 900..1000
    assert requests(480, 2, 64, 600, 512) == 2 + 1  # 480..544 crosses 512; 1080..1144 does not


def test_whole_requests_set_a_single_cores_rate():
    mem = SharedMemorySystem(PROFILE)
    thin = mem.tile_key(("gm", 1), 0, 256, 128, 16384)  # 32 KB in 128-byte rows
    wide = mem.tile_key(("gm", 2), 0, 64, 512, 16384)  # 32 KB in 512-byte rows
    mem.read(thin, 32768, 0, GM_TO_L1)  # first touch: misses, now resident
    mem.read(wide, 32768, 0, GM_TO_L1)
    t = 10**9  # later, on idle links: both hit L2
    thin_ps = mem.read(thin, 32768, t, GM_TO_L1) - L2_LAT
    wide_ps = mem.read(wide, 32768, 2 * t, GM_TO_L1) - L2_LAT
    assert wide_ps == round(32768 / GM_TO_L1)
    assert thin_ps == round(4 * 32768 / GM_TO_L1)  # a quarter of the path rate, like the published 65.8 GB/s


def test_a_miss_pays_hbm_latency_and_a_hit_l2_latency():
    mem = SharedMemorySystem(PROFILE)
    key = mem.tile_key(("gm", 1), 0, 1, 4096, 4096)
    first = mem.read(key, 4096, 0, GM_TO_L1)
    second = mem.read(key, 4096, 10**9, GM_TO_L1)
    assert first - second == HBM_LAT - L2_LAT > 0
    assert mem.stats()["l2_hits"] == 1 and mem.stats()["l2_misses"] == 1


def test_many_cores_share_the_l2_link_and_never_exceed_it():
    mem = SharedMemorySystem(PROFILE)
    size = 1 << 20
    keys = [mem.tile_key(("gm", 1), i * size, 1, size, size) for i in range(24)]
    for key in keys:  # warm L2
        mem.read(key, size, 0, GM_TO_L1)
    start = 10**10
    ends = [start + mem.read(key, size, start, GM_TO_L1) - L2_LAT for key in keys]
    l2 = PROFILE.chip.l2_gbps * 1e9 / 1e12
    assert ends[0] - start == round(size / GM_TO_L1)  # the first is limited by its own path
    assert max(ends) - start == pytest.approx(24 * size / l2, rel=1e-6)  # together: the link's bandwidth
    assert 24 * size / (max(ends) - start) <= l2 * (1 + 1e-9)


def test_writes_cross_l2_and_hbm_and_are_posted():
    mem = SharedMemorySystem(PROFILE)
    size = 1 << 20
    hbm = PROFILE.chip.hbm_gbps * 1e9 / 1e12
    rate = PROFILE.paths.l0c_to_gm * 1e9 / 1e12
    assert mem.write(size, 0, rate) == round(size / rate)  # one core: its path, no latency
    ends = [mem.write(size, 10**9, rate) for _ in range(48)]
    assert max(ends) == pytest.approx(48 * size / hbm, rel=1e-6)


def test_a_transfer_timed_late_uses_the_idle_link_after_its_start():
    """Within a core, program order can time a load that starts before the store timed just ahead of it
    (double buffering): the load is carried in the link's idle time, not queued behind the store."""
    mem = SharedMemorySystem(PROFILE)
    size = 48 << 10
    rate = PROFILE.paths.gm_to_ub * 1e9 / 1e12
    store_at, load_at = 900_000, 400_000  # the store is timed first but starts later
    mem.write(size, store_at, PROFILE.paths.ub_to_gm * 1e9 / 1e12)
    alone = SharedMemorySystem(PROFILE)
    late = mem.read(mem.tile_key(("gm", 1), 0, 1, size, size), size, load_at, rate)
    assert late == alone.read(alone.tile_key(("gm", 1), 0, 1, size, size), size, load_at, rate)
    assert load_at + late < store_at  # done before the store even starts


def test_late_transfers_fill_gaps_and_then_wait_behind_owed_bytes():
    mem = SharedMemorySystem(PROFILE)
    assert mem._carry(0, 1000, 100) == 1100
    assert mem._carry(0, 5000, 100) == 5100  # leaves the gap 1100..5000 idle
    assert mem._carry(0, 1050, 3000) == 4100  # arrives late: carried in that gap, from 1100
    assert mem._carry(0, 1000, 1000) == 5100 + 100  # 4100..5000 holds 900 ps of it, the rest after the owed bytes
    assert mem._carry(0, 6000, 10) == 6010  # in time order again: the plain fluid queue


def test_in_order_arrivals_are_a_plain_fluid_queue():
    mem = SharedMemorySystem(PROFILE)
    ends = [mem._carry(1, start, 300) for start in (0, 100, 200, 1000, 1000, 5000)]
    assert ends == [300, 600, 900, 1300, 1600, 5300]
