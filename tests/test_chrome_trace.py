"""The Chrome trace export opens in Perfetto: metadata, properly nested slices, matched flows."""

import json
from collections import defaultdict

import numpy as np

from engine.scenarios.runner import run_scenario
from engine.trace.chrome import chrome_json


def check_nesting(trace):
    """Per lane, any two slices are disjoint or one contains the other (integer picoseconds)."""
    for lane in np.unique(trace.lane):
        sel = np.flatnonzero(trace.lane == lane)
        spans = sorted((int(trace.start[i]), -int(trace.end[i])) for i in sel)
        stack = []
        for start, neg_end in spans:
            end = -neg_end
            while stack and stack[-1] <= start:
                stack.pop()
            if stack:
                assert end <= stack[-1], f"lane {trace.lane_label(int(lane))}: [{start}, {end}] crosses a parent"
            stack.append(end)


def test_structure_of_pipeline_trace():
    run = run_scenario("pipeline", "measured-accelerator", n=256, batches=4, streams=2)
    trace = run.result.trace
    check_nesting(trace)
    text, count = chrome_json(trace)
    doc = json.loads(text)
    events = doc["traceEvents"]
    assert count == len(events)
    meta = [e for e in events if e["ph"] == "M"]
    procs = {e["args"]["name"] for e in meta if e["name"] == "process_name"}
    assert {"Host", "Device 0 streams", "Device 0 copy engines", "Device 0 AI cores"} <= procs
    threads = {(e["pid"], e["args"]["name"]) for e in meta if e["name"] == "thread_name"}
    assert len(threads) == len(trace.lanes)
    slices = [e for e in events if e["ph"] == "X"]
    assert slices and all(e["dur"] > 0 for e in slices)
    named = {(e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name"}
    assert all((e["pid"], e["tid"]) in named for e in slices)
    # flows: every start has one finish with the same id, each at the start of a slice on its thread
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    finishes = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts and starts.keys() == finishes.keys()
    by_thread = defaultdict(list)
    for e in slices + [e for e in events if e["ph"] == "i"]:
        by_thread[(e["pid"], e["tid"])].append(e)
    for flow in list(starts.values()) + list(finishes.values()):
        host = by_thread[(flow["pid"], flow["tid"])]
        assert any(s["ts"] <= flow["ts"] <= s["ts"] + s.get("dur", 0) for s in host)
    # every device copy and kernel is linked to the host call that caused it
    copies = [i for i in range(len(trace)) if trace.names[trace.name[i]].endswith("copy")]
    assert all(trace.cause[i] >= 0 for i in copies)
    host_lane = trace.lane_id("Host", "host thread")
    assert all(trace.lane[trace.cause[i]] == host_lane for i in copies)


def test_counters_and_extra_flows():
    trace = run_scenario("host-lifecycle", n=32).result.trace
    text, _count = chrome_json(
        trace, flows=[(0, 1, "custom")], counters=[("Host", "bytes", np.array([0, 10]), np.array([1, 2]))]
    )
    doc = json.loads(text)
    names = {e["name"] for e in doc["traceEvents"] if e["ph"] in ("s", "C")}
    assert {"custom", "bytes"} <= names


def test_kernel_trace_nests_and_links_flags(tmp_path):
    from engine.analysis.export import chrome_trace

    run = run_scenario("matmul", "ascend910b1", numerics=False, m=256, n=256, k=512)
    check_nesting(run.result.trace)
    text, count = chrome_trace(run.result, metadata={"run": "矩阵乘 256"})
    doc = json.loads(text)
    assert json.dumps(doc) == text  # written as the encoder writes it (numbers, strings, separators), event by event
    events = doc["traceEvents"]
    assert count == len(events) and doc["otherData"] == {"run": "矩阵乘 256"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert {"SCALAR", "CUBE", "MTE1", "MTE2", "FIXP", "BLOCK"} <= set(threads.values())
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    finishes = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts.keys() == finishes.keys()
    flag_flows = [i for i, e in starts.items() if e["name"].startswith("flag ")]
    assert len(flag_flows) > 50
    for i in flag_flows:
        s, f = starts[i], finishes[i]
        assert s["pid"] == f["pid"] and threads[(s["pid"], s["tid"])] != threads[(f["pid"], f["tid"])]
        assert s["ts"] <= f["ts"] + 1e-6  # a set fires before (or as) its wait is released
    counters = [e for e in events if e["ph"] == "C"]
    assert counters and all(v >= 0 for e in counters for v in e["args"].values())
