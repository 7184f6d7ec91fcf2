"""The profiler and debugger: every finding and every recommendation, triggered and not triggered."""

import csv
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from app.cli import main
from engine.analysis import analyze
from engine.analysis.compare import compare
from engine.analysis.export import buffer_counters, chrome_trace, flag_flows, write_pipe_csv
from engine.analysis.metrics import run_metrics
from engine.scenarios.runner import analyze_run, run_scenario


def report(name, profile="ascend910b1", numerics=False, gains=False, **params):
    run = run_scenario(name, profile, numerics=numerics, **params)
    return analyze_run(run, measure_gains=gains), run


def rules(rep):
    return {r.rule for r in rep.recommendations}


def kinds(rep):
    return sorted(f.kind for f in rep.findings)


# -- findings ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("bug", "kind", "needle"),
    [
        ("missing-wait", "race", "read-after-write race on UB(VECIN)[0:2048): muls on VECTOR (engine/kernels/scale.py"),
        ("empty-deque", "deadlock", "deque on a VECIN TQue with nothing enqueued"),
        ("never-recorded", "deadlock", "for event 1, which is never recorded"),
        ("wait-cycle", "deadlock", "cycle: stream 1 -> stream 2 -> stream 1"),
        ("cross-stream", "race", "cross-stream read-after-write race on device allocation #1 bytes [0, 2048)"),
        ("use-after-free", "acl-error", "use after free"),
    ],
)
def test_each_bug_is_found(bug, kind, needle):
    rep, _ = report("debug-demo", numerics=True, bug=bug)
    found = [f for f in rep.findings if f.kind == kind]
    assert found and any(needle in f.message for f in found), [str(f) for f in rep.findings]


def test_a_correct_program_has_no_findings():
    rep, run = report("debug-demo", numerics=True, bug="none")
    assert rep.findings == [] and run.outcome.correct is True


@pytest.mark.parametrize(
    "name,params",
    [
        ("matmul", {"m": 300, "n": 200, "k": 100}),
        ("vector-add", {"length": 10_001}),
        ("pipeline", {"n": 128, "batches": 5, "streams": 3}),
        ("host-lifecycle", {"n": 64}),
    ],
)
def test_no_false_positives_on_shipped_scenarios(name, params):
    rep, run = report(name, numerics=True, **params)
    assert rep.findings == [], [str(f) for f in rep.findings]
    assert run.outcome.correct is True


def test_cross_stream_race_needs_an_unordered_pair():
    """The same two streams, ordered by an event (bug=none), are not a race; without it they are."""
    ok, _ = report("debug-demo", bug="none")
    bad, _ = report("debug-demo", bug="cross-stream")
    assert "race" not in kinds(ok) and "race" in kinds(bad)
    race = next(f for f in bad.findings if f.kind == "race")
    source = (Path(__file__).resolve().parent.parent / "engine/scenarios/debug_demo.py").read_text().splitlines()
    write = next(i for i, line in enumerate(source, 1) if "acl.rt.memcpy_async(dx" in line)  # s1 writes dx
    read = next(i for i, line in enumerate(source, 1) if 'if bug == "cross-stream"' in line) + 1  # s2 reads it
    assert f"debug_demo.py:{read}" in race.message and f"debug_demo.py:{write}" in race.message, race.message


# -- recommendations --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rule", "name", "fires", "quiet"),
    [
        (
            "double_buffering",
            "matmul",
            {"m": 512, "n": 512, "k": 512, "buffer_num": 1},
            {"m": 512, "n": 512, "k": 512, "buffer_num": 2},
        ),
        (
            "larger_base_blocks",
            "matmul",
            {"m": 1024, "n": 1024, "k": 1024, "base": "64,64,256"},
            {"m": 1024, "n": 1024, "k": 1024},
        ),
        (
            "pinned_memory",
            "pipeline",
            {"n": 512, "batches": 4, "streams": 2, "pageable": True},
            {"n": 512, "batches": 4, "streams": 2},
        ),
        ("second_stream", "pipeline", {"n": 1024, "batches": 6, "streams": 1}, {"n": 1024, "batches": 6, "streams": 2}),
        ("too_few_blocks", "vector-add", {"length": 65536, "cores": 4}, {"length": 65536}),
        ("unbalanced_tail", "vector-add", {"length": 49 * 2048, "cores": 49}, {"length": 48 * 2048, "cores": 48}),
        ("cache_tilings", "matmul", {"m": 256, "n": 256, "k": 256}, {"m": 4096, "n": 4096, "k": 4096}),
        (
            "host_between_launches",
            "pipeline",
            {"n": 64, "batches": 12, "streams": 2, "sync_each": True},
            {"n": 2048, "batches": 6, "streams": 2},
        ),
    ],
)
def test_each_rule_fires_and_stays_quiet(rule, name, fires, quiet):
    yes, _ = report(name, **fires)
    no, _ = report(name, **quiet)
    assert rule in rules(yes), (rule, [r.evidence for r in yes.recommendations])
    assert rule not in rules(no), (rule, [r.evidence for r in no.recommendations if r.rule == rule])
    rec = next(r for r in yes.recommendations if r.rule == rule)
    assert rec.evidence and "threshold" in rec.evidence and rec.title_zh


def test_gains_are_measured_by_re_running():
    rep, _ = report("matmul", gains=True, m=512, n=512, k=512, buffer_num=1)
    rec = next(r for r in rep.recommendations if r.rule == "double_buffering")
    assert rec.change == {"buffer_num": 2} and rec.target == "kernel_us"
    again = run_scenario("matmul", numerics=False, m=512, n=512, k=512, buffer_num=2)
    kernel = analyze(again.result).metrics.kernel_us
    assert rec.predicted_us == pytest.approx(kernel, abs=1e-3)
    assert rec.before_us == rep.metrics.kernel_us and 0 < rec.predicted_gain < 1


# -- metrics, gaps, roofline --------------------------------------------------------------------------
def test_metrics_of_a_double_buffered_matmul():
    """24 cores loading through the shared L2 make a big fp16 matmul MTE2-bound on the 910B1, as published
    msprof data shows (engine/tools/calibration_cases: MTE2 ~0.96, Cube ~0.85, at best ~76 % of peak)."""
    rep, _ = report("matmul", m=2048, n=2048, k=2048)
    m = rep.metrics
    assert 0.65 < m.cube_utilization < 0.85 and m.mte2_compute_overlap > 0.5
    assert 65 < m.percent_of_peak < 80 and m.parallelism_utilization > 0.9
    k = m.kernels[0]
    assert len(k.pipe_ratios_per_core) == 24 and k.pipe_ratios_per_core["AIC 0"]["CUBE"] > 0.65
    assert k.pipe_ratios_per_core["AIC 0"]["MTE2"] > k.pipe_ratios_per_core["AIC 0"]["CUBE"]
    roof = rep.roofline[0]
    assert roof.achieved_tflops <= min(roof.roofs.values()) * 1.001
    assert roof.hbm_bytes < roof.gm_bytes  # L2 serves the re-reads


def test_gap_causes():
    rep, _ = report("pipeline", n=1024, batches=6, streams=2)
    causes = rep.gaps.by_lane_type
    assert causes["copy engines"]  # the D2H engine waits for kernels: the previous task on its stream
    assert set(causes["copy engines"]) <= {"waiting for the host", "waiting for the previous task"}
    rep, _ = report("vector-add", length=49 * 2048, cores=49)
    assert rep.gaps.by_lane_type["cores"]["no work: tail"] > 0
    assert rep.gaps.by_lane_type["pipes"]["waiting for data"] > 0
    rep, _ = report("debug-demo", bug="none")
    assert rep.gaps.by_lane_type["streams"]["waiting on an event"] > 0
    top = [g for g in rep.gaps.top if g.cause == "waiting on an event"]
    assert top and "recorded on Device 0 streams/stream 1" in top[0].detail


def test_host_device_balance():
    rep, run = report("pipeline", n=64, batches=24, streams=1)
    m = rep.metrics
    # over the work phase: tiny batches keep the host busy with calls (the seed's balance rule fires)
    assert m.balance_over == "work" and 0.2 < m.host_share < 0.5 and m.balance_score < 0.8
    assert "host_device_balance" in {r.rule for r in rep.recommendations}
    # over the whole run, set-up (init, set_device: 3 ms of assumed host time) dominates
    whole = run_metrics(run.result, whole_run=True)
    assert whole.balance_over == "whole run" and whole.host_share > 0.8 and whole.balance_score < 0.2
    big, _ = report("pipeline", n=1024, batches=8, streams=2)
    assert big.metrics.balance_score == 1.0 and "host_device_balance" not in {r.rule for r in big.recommendations}
    rep, _ = report("pipeline", n=4096, batches=4, streams=2)
    assert rep.metrics.copy_compute_overlap > 0.1


# -- the report's records ------------------------------------------------------------------------------
def test_a_misspelt_metric_raises_instead_of_reading_a_default():
    """Lesson 5 once read ``metrics.get("mte2_compute_overlap", 0.0)``: a typo there failed every trainee silently."""
    rep, _ = report("vector-add", length=8 * 2048, cores=8)
    m = rep.metrics
    assert 0 <= m.mte2_compute_overlap <= 1
    with pytest.raises(AttributeError):
        m.mte2_compute_overlap_ratio  # noqa: B018 - the attribute itself is the test
    with pytest.raises(KeyError, match="'mte2_overlap' is not a run metric"):
        m.figure("mte2_overlap")
    with pytest.raises(AttributeError):
        rep.gaps.top[0].cuase  # noqa: B018
    with pytest.raises(AttributeError):
        rep.roofline[0].achieved  # noqa: B018
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.kernels[0].blocks = 0
    with pytest.raises(TypeError):
        m.kernels[0].pipe_ratios["aiv_vec_ratio"] = 1.0  # read-only, nested mappings too


def test_the_report_is_plain_data_only_at_its_json_edge():
    rep, _ = report("matmul", m=256, n=256, k=256, buffer_num=1)
    doc = json.loads(json.dumps(rep.to_dict()))
    m = rep.metrics
    assert doc["metrics"]["kernel_us"] == m.kernel_us and "main" not in doc["metrics"]  # main: its figures, flat
    assert doc["metrics"]["mte2_compute_overlap"] == m.mte2_compute_overlap
    kernel = doc["metrics"]["kernels"][0]
    assert kernel["row"] == m.kernels[0].row and kernel["pipe_ratios_per_core"]["AIC 0"] == dict(
        m.kernels[0].pipe_ratios_per_core["AIC 0"]
    )
    assert doc["roofline"][0] == {**rep.roofline[0].to_dict(), "roofs": dict(rep.roofline[0].roofs)}
    assert doc["gaps"]["top"][0]["cause"] == rep.gaps.top[0].cause
    assert [r["rule"] for r in doc["recommendations"]] == [r.rule for r in rep.recommendations]


# -- compare, exports -------------------------------------------------------------------------------
def test_compare_two_known_runs():
    a, _ = report("matmul", m=1024, n=1024, k=1024, buffer_num=1)
    b, _ = report("matmul", m=1024, n=1024, k=1024, buffer_num=2)
    diff = compare(a, b)
    assert diff.metrics["kernel_us"].ratio < 0.8  # double buffering is faster
    assert diff.pipe_ratios["aic_mac_ratio"].b > diff.pipe_ratios["aic_mac_ratio"].a
    assert "double_buffering" in diff.recommendations.only_a
    doc = json.loads(json.dumps(diff.to_dict()))
    kernel = diff.metrics["kernel_us"]
    assert doc["metrics"]["kernel_us"] == {"a": kernel.a, "b": kernel.b, "delta": kernel.delta, "ratio": kernel.ratio}
    assert doc["recommendations"]["only_a"] == list(diff.recommendations.only_a)


def test_compare_command(capsys):
    args = [
        "compare",
        "--json",
        "matmul",
        "--m",
        "512",
        "--n",
        "512",
        "--k",
        "512",
        "--buffer-num",
        "1",
        "--no-numerics",
        "--",
        "matmul",
        "--m",
        "512",
        "--n",
        "512",
        "--k",
        "512",
        "--no-numerics",
    ]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "buffer_num=1" in doc["a"] and "buffer_num=2" in doc["b"]
    assert doc["metrics"]["kernel_us"]["b"] < doc["metrics"]["kernel_us"]["a"]


def test_compare_needs_two_runs(capsys):
    assert main(["compare", "matmul", "--m", "64"]) == 2


def test_report_cli_text_and_json(capsys, tmp_path):
    out_csv = tmp_path / "pipes.csv"
    assert (
        main(
            [
                "run",
                "matmul",
                "--m",
                "512",
                "--n",
                "512",
                "--k",
                "512",
                "--buffer-num",
                "1",
                "--report",
                "--csv",
                str(out_csv),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "== Recommendations ==" in text and "[double_buffering]" in text and "re-run with buffer_num=2" in text
    rows = list(csv.DictReader(out_csv.open()))
    assert {r["pipe"] for r in rows} >= {"CUBE", "MTE1", "MTE2", "FIXP"}
    assert main(["run", "pipeline", "--n", "256", "--batches", "3", "--pageable", "--report", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"metrics", "gaps", "roofline", "findings", "recommendations"} <= doc.keys()
    assert "pinned_memory" in {r["rule"] for r in doc["recommendations"]}


def test_chrome_flows_counters_and_detail(tmp_path):
    run = run_scenario("vector-add", numerics=False, length=16 * 1024, cores=2, tile_length=1024)
    t = run.result.trace
    flows = flag_flows(t)
    assert flows
    for s, w, _ in flows:
        assert t.lanes[t.lane[s]].process == t.lanes[t.lane[w]].process  # same core
        assert t.kind[s] == 7 and t.kind[w] == 8 and t.end[s] <= t.end[w]  # the set fires before the wait ends
    counters = buffer_counters(t)
    assert counters and all((values >= 0).all() and values.max() <= 2 for _, _, _, values in counters)
    doc = json.loads(chrome_trace(run.result, detail_cores=1)[0])
    threads = {(e["pid"], e["args"]["name"]) for e in doc["traceEvents"] if e.get("name") == "thread_name"}
    kept = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["name"] == "add"]
    assert kept and len({e["pid"] for e in kept}) == 1  # only one core's pipes kept
    assert threads
    assert any(e["ph"] == "C" for e in doc["traceEvents"])


def test_csv_has_every_core(tmp_path):
    rep, _ = report("matmul", m=512, n=512, k=512)
    path = write_pipe_csv(tmp_path / "p.csv", rep.metrics)
    rows = list(csv.DictReader(path.open()))
    assert len({r["core"] for r in rows}) == len(rep.metrics.kernels[0].pipe_ratios_per_core)
    assert all(0 <= float(r["ratio"]) <= 1 for r in rows)


def test_analysis_is_fast_enough_for_big_runs():
    """An 8192-scale trace analyses in seconds (vectorised over the trace)."""
    rep, _ = report("matmul", m=4096, n=4096, k=4096)
    assert rep.metrics.kernels[0].instructions > 400_000
    assert np.isfinite(rep.metrics.tflops)


@pytest.mark.parametrize("number", [4, 5, 6])
def test_a_lessons_quiet_rules_are_not_recommended_on_its_run(number):
    """Lessons 4, 5 and 6 run on one core by design: the profiler does not tell them to launch more blocks."""
    from app.present.replay import Replay
    from app.present.walkthrough import run_lesson
    from lessons.catalog import get

    lesson = get(number)
    result = run_lesson(lesson)
    plain = {r.rule for r in Replay(result).report().recommendations}
    quiet = {r.rule for r in Replay(result, context={"quiet_rules": lesson.quiet_rules}).report().recommendations}
    assert "too_few_blocks" in plain and "too_few_blocks" not in quiet
    assert quiet == plain - set(lesson.quiet_rules)


def test_rules_lists_every_rule_a_recommendation_can_name():
    import re
    from pathlib import Path

    from engine.analysis import rules

    folder = Path(rules.__file__).parent
    source = "".join((folder / f).read_text(encoding="utf-8") for f in ("rules.py", "seed_rules.py"))
    assert set(re.findall(r'Recommendation\(\s*"(\w+)"', source)) == set(rules.RULES)


def test_a_lesson_naming_an_unknown_quiet_rule_is_refused(tmp_path):
    import shutil

    from lessons.catalog import LessonError, get, load

    folder = tmp_path / "l05_double_buffer"
    shutil.copytree(get(5).path, folder)
    toml = folder / "lesson.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('"low_parallelism"', '"no_such_rule"'), encoding="utf-8")
    with pytest.raises(LessonError, match="quiet_rules must list rules among"):
        load(folder)
