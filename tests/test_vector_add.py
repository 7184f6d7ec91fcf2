"""Vector add: exact fp16 results for any length, and the overlap double buffering buys."""

import numpy as np
import pytest

from engine import asc
from engine.kernels.vector_add import add_kernel
from tests.kernel_helpers import device, empty_device, from_device, to_device


def run_add(length, block_dim, tile, buffer_num, seed=0):
    sim, stream = device()
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, length).astype(np.float16)
    y = rng.uniform(-1, 1, length).astype(np.float16)
    ptrs = [to_device(sim, x), to_device(sim, y), empty_device(sim, x.nbytes)]
    args = [asc.GlobalAddress(p) for p in ptrs]
    assert sim.acl.rt.launch_kernel(add_kernel, block_dim, stream, *args, length, tile, buffer_num) == 0
    assert sim.acl.rt.synchronize_stream(stream) == 0
    z = from_device(sim, ptrs[2], length, np.float16)
    return x, y, z, sim.finish()


@pytest.mark.parametrize("length", [1, 15, 16, 17, 1000, 4096, 100_003])
@pytest.mark.parametrize("buffer_num", [1, 2])
def test_add_is_exact_for_any_length(length, buffer_num):
    x, y, z, result = run_add(length, 7, 1024, buffer_num)
    np.testing.assert_array_equal(z, x + y)  # fp16 + fp16 rounded to fp16, as the vector unit does
    assert result.findings == []


def overlaps(result, core="AIV 0"):
    """Pairs (MTE2 copy of tile i+1, V add of tile i) on one core that overlap in time."""
    rows = [r for r in result.trace.rows() if r["lane"].startswith(core + "/")]
    copies = [r for r in rows if r["name"] == "data_copy GM->UB"]
    adds = [r for r in rows if r["name"] == "add"]
    return sum(1 for c in copies for a in adds if c["start"] < a["end"] and a["start"] < c["end"])


def test_double_buffering_overlaps_the_copy_of_the_next_tile_with_the_add():
    *_, single = run_add(16 * 1024, 1, 1024, 1)
    *_, double = run_add(16 * 1024, 1, 1024, 2)
    assert overlaps(single) == 0
    assert overlaps(double) >= 10  # almost every add runs while the next tile's copy streams in
    kernel = next(r for r in double.trace.rows() if r["lane"] == "Device 0 AI cores/kernels")
    kernel1 = next(r for r in single.trace.rows() if r["lane"] == "Device 0 AI cores/kernels")
    assert kernel["end"] - kernel["start"] < kernel1["end"] - kernel1["start"]


def test_blocks_spread_over_cores_in_waves():
    *_, result = run_add(96 * 1024, 96, 1024, 2)  # 96 blocks on 48 vector cores: two waves
    blocks = [r for r in result.trace.rows() if r["kind"] == "BLOCK"]
    assert len(blocks) == 96
    per_core = {}
    for r in blocks:
        per_core.setdefault(r["lane"].split("/")[0], []).append(r)
    assert len(per_core) == 48 and all(len(v) == 2 for v in per_core.values())
    for runs in per_core.values():
        assert runs[1]["start"] >= runs[0]["end"]  # the second wave waits for the first


def test_determinism_of_kernel_traces():
    *_, a = run_add(50_000, 9, 2048, 2)
    *_, b = run_add(50_000, 9, 2048, 2)
    for name, col in a.trace.columns.items():
        np.testing.assert_array_equal(col, b.trace.columns[name], err_msg=name)
