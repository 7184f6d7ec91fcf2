"""View-models on small known runs, the message catalogue, and runs stored and rebuilt."""

import json
import re
import warnings

import numpy as np
import pytest

from app.present import Replay
from app.present import views as V
from app.present.messages import LANGS, keys, t
from app.present.vocabulary import Activity
from app.server.store import RunSpec, RunStore, decode, encode
from engine.scenarios.runner import get_scenario, run_scenario
from engine.trace.locations import CoreRef
from tests.replay_helpers import first_mmad

AIC0 = CoreRef("AIC", 0)


@pytest.fixture(scope="module")
def matmul():
    run = run_scenario("matmul", m=256, n=256, k=256, cores=4)
    replay = Replay(run.result, inputs=get_scenario("matmul").inputs(run.params), context={"params": run.params})
    return run, replay


def test_every_message_exists_in_both_languages():
    for key in keys():
        en, zh = t(key, "en"), t(key, "zh")
        words = re.findall("[A-Za-z]{2,}", re.sub(r"\{[^}]*\}", "", en))
        shared_ok = all(w in ("us", "ms", "KB", "MB", "GB", "TB", "TFLOPS") for w in words)  # symbols, units
        assert en and zh and (en != zh or shared_ok), key
    with pytest.raises(ValueError, match="lang must be one of en, zh"):
        t("host", "fr")


def test_every_scenario_and_parameter_has_its_chinese_text():
    from app.present.messages import param_help, scenario_summary
    from engine.scenarios import registry

    scenarios = registry()
    for s in scenarios.values():
        assert scenario_summary(s, "en") == s.summary
        assert re.search("[\u4e00-\u9fff]", scenario_summary(s, "zh")), s.name
        for p in s.params:
            assert param_help(p, "en") == p.help
            assert re.search("[\u4e00-\u9fff]", param_help(p, "zh")), (s.name, p.name)


def test_findings_are_labelled_by_kind_in_both_languages():
    from app.present.messages import finding_kind
    from engine.scenarios.runner import PROGRAM_ERRORS

    for kind in PROGRAM_ERRORS:
        assert finding_kind(kind, "en") and re.search("[\u4e00-\u9fff]", finding_kind(kind, "zh")), kind
    assert finding_kind("something-new", "zh") == "something-new"  # shown as it is, never dropped
    run = run_scenario("debug-demo", bug="missing-wait")
    view = V.metrics_view(Replay(run.result), "zh")
    assert [f["label"] for f in view["findings"]] == ["数据竞争"]
    said = view["findings"][0]["message"]  # the engine's diagnosis, in the view's language (Finding.message_zh)
    assert "数据竞争" in said and "race" not in said and said == run.result.findings[0].message_zh
    assert "race" in V.metrics_view(Replay(run.result), "en")["findings"][0]["message"]


@pytest.mark.parametrize("lang", LANGS)
def test_every_view_is_json_in_both_languages(matmul, lang):
    _run, replay = matmul
    step = first_mmad(replay)
    docs = [
        V.system_view(replay, step, lang),
        V.core_view(replay, step, AIC0, lang),
        V.tile_view(replay, step, AIC0, "L1", 0, 0, 8, lang),
        V.timeline_view(replay, step, expand=(AIC0,), lang=lang),
        V.matrices_view(replay, step, lang=lang),
        V.pipeline_view(replay, step, AIC0, lang=lang),
        V.metrics_view(replay, lang),
        V.code_view(replay, step, 2, lang),
    ]
    for doc in docs:
        json.dumps(doc)
    system = docs[0]
    assert len(system["device"]["cores"]) == 24 + 48
    assert system["step_label"] == t("step", lang, i=step + 1, n=len(replay))


def test_system_view_colours_the_cores_by_what_they_do(matmul):
    _run, replay = matmul
    step = first_mmad(replay)
    cores = {(c["kind"], c["index"]): c for c in V.system_view(replay, step)["device"]["cores"]}
    here = replay.event(step).core
    assert cores[here.kind, here.index]["activity"] == Activity.CUBE == "cube"
    assert cores[here.kind, here.index]["name"] == here.label
    assert all(cores["AIC", i]["activity"] == "idle" for i in range(4, 24))  # 4 cores were asked for
    assert all(cores["AIV", i]["activity"] == "idle" for i in range(48))


def test_core_view_slots_and_tile_values(matmul):
    run, replay = matmul
    step = first_mmad(replay)
    core = replay.event(step).core
    view = V.core_view(replay, step, core)
    assert (view["core"], view["kind"], view["index"]) == (core.label, core.kind, core.index)
    l1 = next(b for b in view["buffers"] if b["name"] == "L1")
    assert l1["capacity"] == 524288 and 0 < l1["fill"] <= 1
    held = [s for s in l1["slots"] if s["tile_ref"]]
    assert held and {s["tile_ref"]["tensor"] for s in held} <= {"A", "B"}
    s = held[0]
    tile = V.tile_view(replay, step, core, "L1", s["queue"], s["slot"], max_cells=4)
    ref = s["tile_ref"]
    source = get_scenario("matmul").inputs(run.params)[ref["tensor"]]
    expected = source[ref["row"] : ref["row"] + 4, ref["col"] : ref["col"] + 4].astype(np.float64)
    np.testing.assert_allclose(tile["values"], expected, rtol=1e-4)
    assert tile["truncated"] and tile["shape"] == [ref["rows"], ref["cols"]]
    cube = next(p for p in view["pipes"] if p["pipe"] == "CUBE")
    assert cube["busy"] and cube["instruction"] == "mmad" and 0 <= cube["progress"] <= 1


def test_timeline_aggregates_busy_lanes_to_a_bounded_number_of_bars(matmul):
    _run, replay = matmul
    full = V.timeline_view(replay, 0, expand=(AIC0,), max_bars=10)
    lanes = {lane["label"]: lane for lane in full["lanes"]}
    cube = lanes["AIC 0/CUBE"]
    assert cube["count"] > 10 and cube["aggregated"] and 0 < len(cube["buckets"]) <= 10
    assert all(0 < b["busy"] <= 1 for b in cube["buckets"])
    kernels = lanes["Device 0 AI cores/kernels"]
    assert not kernels["aggregated"] and len(kernels["bars"]) == kernels["count"] == 1
    assert "AIC 1/CUBE" not in lanes and "AIC 1/BLOCK" in lanes  # pipes of collapsed cores are hidden
    # a window keeps only what overlaps it
    host = next(lane for lane in V.timeline_view(replay, 0)["lanes"] if lane["label"] == "Host/host thread")
    bar = host["bars"][len(host["bars"]) // 2]
    win = V.timeline_view(replay, 0, window=(bar["start_us"], bar["end_us"]))
    host_win = next(lane for lane in win["lanes"] if lane["label"] == "Host/host thread")
    assert 1 <= host_win["count"] < host["count"]


def test_matrices_fill_in_as_blocks_complete(matmul):
    _run, replay = matmul
    first = V.matrices_view(replay, 0)
    last = V.matrices_view(replay, len(replay) - 1)
    c0 = next(x for x in first["tensors"] if x["name"] == "C")
    c1 = next(x for x in last["tensors"] if x["name"] == "C")
    assert c0["role"] == "output" and c0["done_count"] == 0 and c1["done_count"] == c1["total"] > 0
    covered = np.zeros((256, 256), dtype=int)
    for tile in c1["done"]:
        covered[tile["row"] : tile["row"] + tile["rows"], tile["col"] : tile["col"] + tile["cols"]] += 1
    assert (covered == 1).all()  # every element of C written exactly once
    a = next(x for x in first["tensors"] if x["name"] == "A")
    assert a["role"] == "input" and len(a["heat"]) <= 48


def test_pipeline_table_shows_overlap_with_double_buffering():
    def overlap(buffer_num):
        run = run_scenario("vector-add", length=16384, tile_length=1024, cores=1, buffer_num=buffer_num, numerics=False)
        replay = Replay(run.result)
        view = V.pipeline_view(replay, len(replay) - 1, CoreRef("AIV", 0), max_tiles=64)
        rows = [r["cells"] for r in view["tiles"] if r["done"]]
        assert len(rows) == 16 and all({"MTE2", "VECTOR", "MTE3"} <= set(r) for r in rows)
        # does tile i+1's CopyIn start before tile i's compute ended?
        return sum(rows[i + 1]["MTE2"]["start_us"] < rows[i]["VECTOR"]["end_us"] for i in range(len(rows) - 1))

    assert overlap(1) == 0 and overlap(2) >= 10


def test_pipeline_rows_and_slots_are_named_by_the_tensor_they_hold():
    """A buffer the program never named is named by the kernel parameter it was passed as, a 1-D tensor by
    its element range, and a slot the vector unit computed by where its content goes (y, not its input x)."""
    from app.present.walkthrough import lesson_walkthrough

    walk = lesson_walkthrough(2)  # the scale kernel's buffers are never named with sim.name_tensor
    assert not walk.replay.result.gm and set(walk.replay.result.gm_labels.values()) >= {"x", "z"}
    core = walk.cores()[0]
    tiles = V.pipeline_view(walk.replay, len(walk.replay) - 1, core)["tiles"]
    assert tiles and all(re.fullmatch(r"z\[\d+:\d+\]", r["tile"]) for r in tiles), [r["tile"] for r in tiles]

    walk = lesson_walkthrough(5)  # x -> VECIN -> (vector) -> VECOUT -> y, double-buffered
    core = walk.cores()[0]
    held = set()
    for step in range(0, len(walk.replay), max(1, len(walk.replay) // 80)):
        for b in V.core_view(walk.replay, step, core)["buffers"]:
            held |= {(s["position"], s["tile"].split("[")[0]) for s in b["slots"] if s["tile"]}
    assert ("VECIN", "x") in held and ("VECOUT", "y") in held and ("VECOUT", "x") not in held, held


def test_code_view_marks_the_current_line(matmul):
    _run, replay = matmul
    step = first_mmad(replay)
    view = V.code_view(replay, step, context=2)
    assert (
        view["file"] == "engine/kernels/matmul.py" and "asc.mmad(" in view["lines"][view["line"] - view["first_line"]]
    )


def test_runs_are_stored_and_rebuilt_exactly(tmp_path):
    run = run_scenario("matmul-leaky-relu", m=64, n=64, k=64, cores=1)
    spec = RunSpec.of("matmul-leaky-relu", "ascend910b1", run.params)
    again, spec2 = decode(encode(run.result, spec))
    assert spec2 == spec
    a, b = run.result.trace, again.trace
    for name in a.columns:
        np.testing.assert_array_equal(a.columns[name], b.columns[name], err_msg=name)
    assert (a.names, a.srcs, a.lanes, a.details) == (b.names, b.srcs, b.lanes, b.details)
    assert again.tasks == run.result.tasks and again.gm == run.result.gm and again.findings == run.result.findings
    assert again.gm_labels == run.result.gm_labels and list(again.gm_labels.values()) == ["workspace"]  # never named
    # the rebuilt run replays to the same state and the same tile values (inputs regenerated from the seed)
    r1 = Replay(run.result, inputs=spec.inputs())
    r2 = Replay(again, inputs=spec2.inputs())
    step = first_mmad(r1)
    assert r1.state_at(step) == r2.state_at(step)
    core = r1.event(step).core
    c1 = V.core_view(r1, step, core)
    slot = next(s for b in c1["buffers"] for s in b["slots"] if s["writer"] >= 0)
    buf = next(b["name"] for b in c1["buffers"] if slot in b["slots"])
    np.testing.assert_array_equal(
        r1.tile_values(step, core, buf, slot["queue"], slot["slot"]),
        r2.tile_values(step, core, buf, slot["queue"], slot["slot"]),
    )


def test_event_names_in_chinese_come_from_the_typed_detail_also_of_a_stored_run():
    """Host waits, queue operations, the scalar unit's issue rows and the program's own host work are named in
    Chinese from their detail; a run rebuilt from its stored file (its details decoded as plain values) too."""
    from app.present.event_names import event_name

    run = run_scenario("vector-add", length=4096, tile_length=1024, cores=1, buffer_num=2, numerics=False)
    spec = RunSpec.of("vector-add", "ascend910b1", run.params)
    again, _spec = decode(encode(run.result, spec))
    for result in (run.result, again):
        t = result.trace
        names = {t.names[int(t.name[r])]: event_name(t, r, "zh") for r in range(len(t))}
        assert names["alloc VECIN slot 0"] == "分配 VECIN 槽位 0"
        assert names["set_flag MTE2_V (VECIN data)"] == "set_flag MTE2_V（VECIN 数据）"
        assert names["wait: stream 1 to drain"] == "等待：流 1 中的任务全部完成"
        assert names["issue"].startswith("发射") and names["acl.rt.malloc"] == "acl.rt.malloc"
        assert all(event_name(t, r, "en") == t.names[int(t.name[r])] for r in range(len(t)))


def test_run_store_serves_a_run_from_disk_to_another_process(tmp_path):
    spec = RunSpec.of(
        "vector-add",
        "ascend910b1",
        {"length": 4096, "buffer_num": 2, "tile_length": 1024, "cores": 2, "seed": 0},
        numerics=False,
    )
    first = RunStore(tmp_path).run(spec)
    assert (tmp_path / spec.filename).is_file()
    other = RunStore(tmp_path)  # a second worker: nothing in memory, the file on disk
    found = other.get(spec)
    assert found is not None and len(found.trace) == len(first.trace)
    assert RunSpec.of("vector-add", "ascend910b1", {"length": 4097}).key != spec.key


def test_every_detail_type_is_known_to_the_codec():
    import inspect

    from engine.trace import detail
    from engine.trace.codec import _DETAIL_TYPES

    types = {name for name, obj in inspect.getmembers(detail, inspect.isclass) if hasattr(obj, "_fields")}
    assert types == set(_DETAIL_TYPES)


def test_every_cause_of_idle_time_is_translated(matmul):
    from engine.analysis.gaps import CAUSES

    assert all(t(f"gap.{cause}", "zh") != cause for cause in CAUSES)
    _run, replay = matmul
    zh = V.metrics_view(replay, "zh")["gaps"]
    assert zh and not set(zh) & set(CAUSES)


def test_an_expanded_cores_pipes_are_listed_under_its_block_lane(matmul):
    _, replay = matmul
    lanes = V.timeline_view(replay, 0, expand=(AIC0,))["lanes"]
    mine = [i for i, lane in enumerate(lanes) if lane["core"] == "AIC 0"]
    kinds = [lanes[i]["kind"] for i in mine]
    assert kinds[0] == "BLOCK" and set(kinds[1:]) == {"PIPE"} and len(kinds) > 2
    assert mine == list(range(mine[0], mine[0] + len(mine)))  # together, nothing between them


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (22746.3, "22,746"),  # was "2.275e+04"
        (3119.604, "3,119.6"),
        (71.853, "71.85"),
        (0.73012, "0.7301"),
        (0.0015, "0.0015"),
        (1.0, "1"),
        (0.0, "0"),
        (12345678, "12,345,678"),
        (None, "-"),
        (-3.5, "-3.5"),
    ],
)
def test_figures_read_without_scientific_notation(value, shown):
    from app.present.text import readable

    assert readable(value) == shown


@pytest.mark.parametrize("shape", [(2048, 2048), (2000, 1000), (100, 37), (1, 5000), (5000, 1), (3, 200), (1, 1)])
def test_a_heatmap_cell_is_the_mean_of_its_numbers_that_are_not_nan(shape):
    """The cells' means (summed without a padded copy) are the means the padded nanmean gives, to the digit shown:
    ragged last cells, NaN (left out of its cell's mean), +-inf, and a cell of NaN only (NaN)."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, shape).astype(np.float16)
    with_nan = np.where(rng.random(shape) < 0.01, np.float16(np.nan), x)
    infinite = x.copy()
    infinite.flat[::7], infinite.flat[::11] = np.inf, -np.inf
    rows, cols = shape
    fr, fc = V.heat_cells(rows, cols, 48)
    for values in (x, with_nan, infinite, np.full(shape, np.nan, np.float16)):
        padded = np.full((-(-rows // fr) * fr, -(-cols // fc) * fc), np.nan)
        padded[:rows, :cols] = values
        with warnings.catch_warnings():  # NaN means: "Mean of empty slice", inf - inf: "invalid value"
            warnings.simplefilter("ignore", RuntimeWarning)
            heat, cell = V._downsample(values, 48)
            want = np.nanmean(padded.reshape(padded.shape[0] // fr, fr, -1, fc), axis=(1, 3))
        assert cell == [fr, fc]
        assert str(heat) == str([[round(float(v), 4) for v in row] for row in want])
