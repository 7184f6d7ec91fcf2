"""TilingData on the host, GET_TILING_DATA and TILING_KEY_IS in the kernel: layout, checks, launch, cost."""

from __future__ import annotations

import numpy as np
import pytest

from engine import Simulation, TilingContext, asc
from engine.host.tiling_data import MAX_TILING_DATA_BYTES, TilingDataError
from engine.host.tiling_record import raw_from_record, raw_record, struct_from_record, struct_record
from lessons.hostkit import HostError, run_vector_kernel


class Inner(asc.TilingData):
    a = asc.Field(asc.uint8)
    b = asc.Field(asc.float32)


class Outer(asc.TilingData):
    n = asc.Field(asc.uint16)
    big = asc.Field(asc.int64, default=-5)
    inner = asc.StructField(Inner)
    flag = asc.Field(asc.int8)


def test_the_layout_is_cs_with_every_field_aligned_and_the_whole_padded_to_8():
    assert Inner.numpy_dtype.itemsize == 8 and Inner.numpy_dtype.fields["b"][1] == 4
    offsets = {name: Outer.numpy_dtype.fields[name][1] for name in Outer.fields}
    assert offsets == {"n": 0, "big": 8, "inner": 16, "flag": 24}
    assert Outer().get_data_size() == 32


def test_set_get_and_attributes_round_trip_through_the_bytes():
    t = Outer()
    t.set_n(65535)
    t.inner.a = 7
    t.inner.set_b(0.1)
    t.flag = -3
    back = Outer.from_bytes(t.to_bytes())
    assert back == t and back.get_big() == -5 and back.inner.b == float(np.float32(0.1))


@pytest.mark.parametrize(
    ("action", "field", "message"),
    [
        (lambda t: t.set_nope(1), "Outer.set_nope", "is not a field (the fields: n, big, inner, flag)"),
        (lambda t: setattr(t, "nope", 1), "Outer.nope", "is not a field"),
        (lambda t: t.set_n(65536), "Outer.n", "is a uint16 field: 0..65535, got 65536"),
        (lambda t: t.set_n(-1), "Outer.n", "0..65535, got -1"),
        (lambda t: t.set_n(2.5), "Outer.n", "it takes an integer, got 2.5"),
        (lambda t: t.set_n("3"), "Outer.n", "it takes a number, got '3'"),
        (lambda t: t.set_n(True), "Outer.n", "it takes a number, got True"),
        (lambda t: setattr(t.inner, "b", float("inf")), "Inner.b", "a finite number"),
        (lambda t: setattr(t, "inner", Outer()), "Outer.inner", "holds a Inner"),
    ],
)
def test_a_bad_field_or_value_names_the_field_the_limit_and_the_value(action, field, message):
    with pytest.raises(TilingDataError) as err:
        action(Outer())
    assert str(err.value).startswith(field) and message in str(err.value)
    assert err.value.message_zh.startswith(field) and "实际为" in err.value.message_zh


def test_a_struct_over_the_capacity_or_with_a_bad_type_is_refused_when_it_is_declared():
    with pytest.raises(
        TilingDataError, match=r"Big holds at most 16384 B \(CANN's default tiling data capacity\), got 16392"
    ):
        type("Big", (asc.TilingData,), {f"f{i}": asc.Field(asc.uint64) for i in range(2049)})
    with pytest.raises(TilingDataError, match=r"Half\.x has one of the types asc\.int8, .* got asc\.float16"):
        type("Half", (asc.TilingData,), {"x": asc.Field(asc.half)})
    with pytest.raises(TilingDataError, match="field must be a C\\+\\+ identifier"):
        type("Odd", (asc.TilingData,), {"set_x": asc.Field(asc.int32)})
    with pytest.raises(TilingDataError, match="needs at least one field"):
        type("Empty", (asc.TilingData,), {})
    assert MAX_TILING_DATA_BYTES == 16 * 1024


def test_the_context_checks_the_block_count_and_the_tiling_key():
    ctx = TilingContext()
    with pytest.raises(TilingDataError, match="block_dim is an integer >= 1, got 0"):
        ctx.set_block_dim(0)
    with pytest.raises(
        TilingDataError, match=r"tiling_key is an integer 0\.\.18446744073709551615 \(uint64_t\), got -1"
    ):
        ctx.set_tiling_key(-1)
    ctx.set_tiling_key(3)
    Inner(a=1).save_to_buffer(ctx.get_raw_tiling_data())
    assert ctx.get_raw_tiling_data().get_data_size() == 8 and ctx.get_tiling_key() == 3


def test_records_are_plain_data_and_rebuild_the_same_struct():
    t = Outer(n=9, flag=1)
    t.inner.b = 2.5
    doc = struct_record(t)
    again = struct_from_record(doc)
    assert struct_record(again) == doc and again.to_bytes() == t.to_bytes()
    ctx = TilingContext()
    ctx.set_tiling_key(2)
    t.save_to_buffer(ctx.get_raw_tiling_data())
    raw = raw_from_record(raw_record(ctx.get_raw_tiling_data()))
    assert raw.tiling_key == 2 and raw.get_data() == t.to_bytes()


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"n": "__import__('os')", "f": [["x", "uint8", 1]]}, "TilingData name must be a C++ identifier"),
        ({"n": "T", "f": [["x", "os.system", 1]]}, "T.x has one of the types"),
        ({"n": "T", "f": [["__class__", "uint8", 1]]}, "T field must be a C++ identifier"),
        ({"n": "T", "f": [["x", "uint8", 300]]}, "T.x is a uint8 field: 0..255, got 300"),
        ({"n": "T", "f": [["x", "uint8", 1], ["x", "uint8", 2]]}, "T.x is declared once"),
        ({"n": "T", "f": [[f"f{i}", "uint64", 0] for i in range(2049)]}, "T holds at most 16384 B"),
        ({"n": "T", "f": [["x", "uint8", 1]], "code": "x"}, "TilingData record is"),
    ],
)
def test_a_hostile_record_is_refused_naming_what_is_wrong(doc, message):
    with pytest.raises(TilingDataError) as err:
        struct_from_record(doc)
    assert message in str(err.value)


class ScaleTiling(asc.TilingData):
    length = asc.Field(asc.uint32)


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY, tiling_keys=(1, 2))
def scale(x: asc.GlobalAddress, z: asc.GlobalAddress, tiling: asc.TilingAddress):
    t = asc.get_tiling_data(tiling)
    n = t.length
    start = asc.get_block_idx() * n
    x_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, n)
    z_gm.set_global_buffer(z + start, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=n * 2)
    local = buf.get(asc.half)
    asc.data_copy(local, x_gm, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.muls(local, local, 2.0 if asc.tiling_key_is(1) else 3.0, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(z_gm, local, n)


def _launch(key: int, sim=None, blocks: int = 4):
    ctx = TilingContext()
    ctx.set_block_dim(blocks)
    ctx.set_tiling_key(key)
    ScaleTiling(length=256).save_to_buffer(ctx.get_raw_tiling_data())
    x = np.arange(256 * blocks, dtype=np.float16) / 64
    sim = sim or Simulation()
    z = run_vector_kernel(sim, scale, [x], x.size, ctx.get_block_dim(), ctx.get_raw_tiling_data())
    return x, z, sim


def test_the_kernel_reads_the_hosts_tiling_and_the_key_picks_its_variant():
    for key, factor in ((1, 2), (2, 3)):
        x, z, sim = _launch(key)
        assert np.array_equal(z, x * np.float16(factor))
        t = sim.finish().trace
        rows = np.flatnonzero(t.name == t.names.index("get_tiling_data 8 B"))
        assert len(rows) == 4  # one per block
        cycles = (int(t.end[rows[0]]) - int(t.start[rows[0]])) / sim.profile.ps_per_cycle
        assert round(cycles) == sim.profile.compute.gm_hbm_latency_cycles + 1  # one GM round trip + one 8-byte load


def test_a_key_the_kernel_has_no_variant_for_is_refused_at_the_launch():
    sim = Simulation()
    with pytest.raises(HostError, match="ACL_ERROR_INVALID_PARAM"):
        _launch(7, sim)
    finding = next(f for f in sim.finish().findings if "tiling_key" in f.message)
    assert "tiling_key must be one of scale's tiling keys (1, 2), got 7" in finding.message


def test_an_empty_tiling_buffer_is_refused_at_the_launch():
    sim = Simulation()
    acl = sim.acl
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    x, _ = acl.rt.malloc(512, 0)
    z, _ = acl.rt.malloc(512, 0)
    args = (asc.GlobalAddress(x), asc.GlobalAddress(z), TilingContext().get_raw_tiling_data())
    assert acl.rt.launch_kernel(scale, 1, stream, *args) != 0
    assert any("empty tiling buffer" in f.message for f in sim.finish().findings)


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY, tiling_keys=(1, 2))
def asks_key_3(x: asc.GlobalAddress, z: asc.GlobalAddress, tiling: asc.TilingAddress):
    asc.get_tiling_data(tiling)
    asc.tiling_key_is(3)


def test_a_kernel_asking_for_a_key_it_did_not_declare_fails_naming_its_keys():
    ctx = TilingContext()
    ctx.set_block_dim(1)
    ctx.set_tiling_key(1)
    ScaleTiling(length=16).save_to_buffer(ctx.get_raw_tiling_data())
    sim = Simulation()
    x = np.zeros(16, np.float16)
    run_vector_kernel(sim, asks_key_3, [x], 16, 1, ctx.get_raw_tiling_data())  # the kernel fails: a finding
    messages = [f.message for f in sim.finish().findings]
    assert any("tiling_key_is: key must be one of asks_key_3's tiling keys (1, 2), got 3" in m for m in messages)


def test_a_kernel_reading_tiling_it_was_not_given_fails():
    @asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
    def reads(x: asc.GlobalAddress, z: asc.GlobalAddress):
        asc.get_tiling_data(x)

    sim = Simulation()
    run_vector_kernel(sim, reads, [np.zeros(16, np.float16)], 16, 1)
    assert any("get_tiling_data: takes the kernel's tiling argument" in f.message for f in sim.finish().findings)
