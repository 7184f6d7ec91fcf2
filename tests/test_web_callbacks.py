"""The dashboard's server-side callbacks called as plain functions (no browser, no Dash request): each module's
``Callbacks`` over a real run store, given what a page would send, and ``trigger`` where the callback asks
which input fired. A malformed request is answered in the page or not at all (PreventUpdate), never with an
exception (a failed request)."""

from __future__ import annotations

import inspect
import json
import re

import pytest
from dash import Dash, no_update
from dash.exceptions import PreventUpdate

from app.present.messages import t as msg
from app.server import managers
from app.web import compare, exercise, pages, player, playground
from app.web.runs import Runs
from lessons.catalog import get

CJK = re.compile(r"[\u4e00-\u9fff]")
LESSON = {"lesson": 1}
SESSION = "callbacktests0001"  # a tab's id as the page makes it (8 to 64 letters and digits)
TINY = {"scenario": "matmul", "profile": "ascend910b1", "params": {"m": "64", "n": "64", "k": "64"}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return Runs(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def play(runs):
    return player.Callbacks(runs)


@pytest.fixture(scope="module")
def meta(play):
    return play.load_run(LESSON, "en", None)[0]


def _text(node) -> str:
    """The text a component tree shows (its strings, depth first)."""
    if isinstance(node, str | int | float):
        return str(node)
    if isinstance(node, list | tuple):
        return " ".join(_text(n) for n in node)
    children = getattr(node, "children", None)
    return "" if children is None else _text(children)


def _ids(node, out=None) -> list:
    out = [] if out is None else out
    if isinstance(node, list | tuple):
        for n in node:
            _ids(n, out)
    elif hasattr(node, "to_plotly_json"):
        if getattr(node, "id", None) is not None:
            out.append(node.id)
        _ids(getattr(node, "children", None), out)
    return out


def _progress(lines: list):
    """A job's ``set_progress``, keeping what it was told."""
    return lines.append


def _request(meta, **changes) -> dict:
    """A ``window-request`` as assets/player.js sends it."""
    req = {"run": meta["key"], "lang": "en", "first": 0, "count": 40, "core": meta["cores"][0], "step": 3, "sig": 7}
    return {**req, **changes}


# -- the wiring ----------------------------------------------------------------------------------------------
def test_every_server_callback_is_a_method_of_its_modules_callbacks(tmp_path, runs):
    app = Dash(__name__, background_callback_manager=managers.LocalManager(tmp_path / "callbacks"))
    pages.register(app, runs, "en")
    for module in (playground, compare, player, exercise):
        module.register(app, runs)
    wired = [v["callback"].__wrapped__ for v in app.callback_map.values() if "callback" in v]  # not the browser's
    assert len(wired) >= 25  # every module's callbacks, not only one
    for fn in wired:
        assert inspect.ismethod(fn) and type(fn.__self__).__name__ == "Callbacks", fn
        assert fn.__self__.runs is runs and fn.__name__ in vars(type(fn.__self__))
    owners = {type(fn.__self__).__module__ for fn in wired}
    assert owners == {f"app.web.{m}" for m in ("pages", "playground", "compare", "player", "exercise")}


def test_a_job_that_failed_outside_its_own_handling_is_said_in_the_page_in_both_languages(tmp_path, runs):
    """Each background callback's on_error puts one line (both languages: a poll carries no page state) in its
    own error or status output, and nothing else; the error's text stays in the server's log."""
    from dash import Output

    from app.server.jobs import LOST

    seen = []

    class Recording(Dash):
        def callback(self, *args, **kwargs):
            if kwargs.get("background"):
                seen.append(([a for a in args if isinstance(a, Output)], kwargs["on_error"]))
            return super().callback(*args, **kwargs)

    app = Recording(__name__, background_callback_manager=managers.LocalManager(tmp_path / "callbacks"))
    for module in (playground, compare, exercise):
        module.register(app, runs)
    assert len(seen) == 3
    for outputs, on_error in seen:
        for err, key in ((RuntimeError(f"... {LOST} ..."), "web.job_lost"), (KeyError("internal"), "web.job_failed")):
            said = on_error(err)
            assert len(said) == len(outputs)
            (at,) = [i for i, v in enumerate(said) if v is not no_update]
            assert outputs[at].component_id in ("pg-error", "cmp-error", "ex-status")
            assert said[at] == f"{msg(key, 'en')} / {msg(key, 'zh')}" and "internal" not in said[at]


# -- the player: a run, a window, the timeline ------------------------------------------------------------------
def test_load_run_describes_a_lesson_run_and_picks_its_first_core(play, meta, runs):
    loaded = runs.load(LESSON)
    got = play.load_run(LESSON, "en", None)
    assert len(got) == 8 and got[0] == meta
    assert meta["n"] == len(loaded.replay) > 0 and meta["key"] == loaded.key
    cores = meta["cores"]
    assert cores and got[2] == cores and got[3] == cores[0] and got[4] == got[5] == cores and got[6] == cores[:1]
    assert got[1] == meta["n"] - 1  # the slider's last step
    assert got[7].startswith(msg("web.lesson_n", "en", n=1, title=get(1).title["en"]))
    assert f"{loaded.events:,}" in got[7]
    with pytest.raises(PreventUpdate):  # the page has that run already
        play.load_run(LESSON, "en", meta)
    with pytest.raises(PreventUpdate):
        play.load_run(None, "en", None)


@pytest.mark.parametrize("run", [{"lesson": 99}, {"lesson": "x"}, ["lesson", 1], {"scenario": ["matmul"]}])
def test_load_run_answers_a_malformed_run_in_the_status_line(play, run):
    got = play.load_run(run, "en", None)
    assert got[:7] == (no_update,) * 7
    assert isinstance(got[7], str) and got[7]


def test_the_status_line_follows_the_language(play, meta):
    zh = play.status_in("zh", LESSON, meta)
    en = play.status_in("en", LESSON, meta)
    assert CJK.search(zh) and get(1).title["zh"] in zh
    assert not CJK.search(en) and zh != en
    with pytest.raises(PreventUpdate):  # another run's meta: that run's own load answers
        play.status_in("zh", LESSON, {**meta, "key": "another"})


def test_the_runs_views_are_drawn_in_the_language_asked(play, meta):
    system, metrics, figure, _note, style = play.run_views(meta, "zh", LESSON)
    assert CJK.search(_text(system)) and CJK.search(_text(metrics))
    assert isinstance(figure, dict) and "layout" in figure
    assert style == {"display": "none"}  # lesson 1 moves no matrix
    with pytest.raises(PreventUpdate):
        play.run_views(None, "en", LESSON)


def test_fetch_window_sends_the_window_asked_with_its_pipeline_and_timeline(play, meta):
    window, view, pipeline, timeline = play.fetch_window(_request(meta, first=10, count=40), LESSON, [], ["on"], None)
    assert (window["first"], window["count"], window["n"]) == (10, 40, meta["n"])
    assert window["sig"] == 7 and len(window["labels"]) == 40 and window["labels"][0] == f"step 11 / {meta['n']}"
    assert view == {"run": meta["key"], "span": view["span"], "first": 10, "count": 40} and view["span"] > 0
    assert len(window["tl"]["page"]) == 40  # the timeline's page of each step in the window
    assert isinstance(timeline, dict) and timeline["data"] and isinstance(pipeline, dict)
    # the same viewport asked again without following: the window moves, the timeline stays as it is
    again = play.fetch_window(_request(meta, first=50, count=20), LESSON, [], [], view)
    assert (again[0]["first"], again[0]["count"]) == (50, 20) and again[3] is no_update


def test_fetch_window_in_chinese_and_clamped_to_the_run(play, meta):
    n = meta["n"]
    window = play.fetch_window(_request(meta, lang="zh", first=n - 5, count=40), LESSON, [], ["on"], None)[0]
    assert window["first"] + window["count"] == n and window["labels"][0].startswith("第")
    whole = play.fetch_window(_request(meta, count=10**12), LESSON, [], ["on"], None)[0]
    assert whole["first"] == 0 and whole["count"] <= n


@pytest.mark.parametrize(
    "changes",
    [{"first": "x"}, {"count": "x"}, {"step": "x"}, {"first": None}, {"first": float("nan")}, {"run": "another"}],
)
def test_fetch_window_refuses_a_malformed_request_without_failing(play, meta, changes):
    with pytest.raises(PreventUpdate):
        play.fetch_window(_request(meta, **changes), LESSON, [], ["on"], None)


def test_fetch_window_keeps_a_step_beyond_the_run_inside_its_window(play, meta):
    far = play.fetch_window(_request(meta, first=0, count=40, step=10**12), LESSON, [], ["on"], None)
    near = play.fetch_window(_request(meta, first=0, count=40, step=39), LESSON, [], ["on"], None)
    assert far[0]["first"] == 0 and far[2] == near[2]  # the pipeline drawn at the window's last step


def test_zoom_whole_run_device_work_and_a_dragged_range(play, meta, runs):
    view = play.fetch_window(_request(meta), LESSON, [], ["on"], None)[1]
    end = runs.load(LESSON).outline["end_us"]
    fig, follow, new_view, _patch = play.zoom(None, 1, None, [], ["on"], LESSON, 3, "en", view, trigger="tl-whole")
    assert fig["data"] and follow == [] and new_view["span"] is None
    fig, follow, new_view, _patch = play.zoom(None, None, 1, [], ["on"], LESSON, 3, "en", view, trigger="tl-work")
    assert fig["data"] and 0 < new_view["span"] < end
    dragged = {"xaxis.range[0]": 100.0, "xaxis.range[1]": 300.0}
    fig, _f, new_view, _p = play.zoom(dragged, None, None, [], ["on"], LESSON, 3, "en", view, trigger="tl-zoom")
    assert new_view["span"] == pytest.approx(200.0) and list(fig["layout"]["xaxis"]["range"]) == [100.0, 300.0]


@pytest.mark.parametrize(
    ("relayout", "step", "trigger"),
    [
        ({"xaxis.range[0]": "x", "xaxis.range[1]": 1}, 3, "tl-zoom"),  # not a number
        ({"dragmode": "pan"}, 3, "tl-zoom"),  # no range in it
        ("x", 3, "tl-zoom"),
        (None, 10**12, "tl-whole"),  # a step beyond the run
        (None, -1, "tl-work"),
        (None, "x", "tl-follow"),
    ],
)
def test_zoom_refuses_what_it_cannot_draw(play, meta, relayout, step, trigger):
    view = play.fetch_window(_request(meta), LESSON, [], ["on"], None)[1]
    with pytest.raises(PreventUpdate):
        play.zoom(relayout, 1, 1, [], ["on"], LESSON, step, "en", view, trigger=trigger)


# -- the player: jumps, breakpoints, a slot's numbers ----------------------------------------------------------
def test_jump_goes_to_the_next_and_previous_event_of_a_kind(play, runs):
    replay = runs.load(LESSON).replay
    target, status = play.jump(None, 1, 0, "COPY", LESSON, "en", trigger="jump-next")
    forward = target["step"]
    assert status == "" and forward > 0 and replay.event(forward).kind == "COPY"
    assert all(replay.event(s).kind != "COPY" for s in range(1, forward))
    target, _ = play.jump(1, None, len(replay) - 1, "COPY", LESSON, "en", trigger="jump-prev")
    assert forward <= target["step"] < len(replay) - 1 and replay.event(target["step"]).kind == "COPY"
    assert play.jump(None, 1, len(replay) - 1, "COPY", LESSON, "en", trigger="jump-next") == (no_update, "COPY: -")


def test_jump_answers_a_bad_kind_inline_and_refuses_a_step_beyond_the_run(play):
    for kind in ("NOPE", ["COPY"]):
        target, status = play.jump(None, 1, 0, kind, LESSON, "en", trigger="jump-next")
        assert target is no_update and status.startswith("kind must be one of CALL") and repr(kind) in status
    for step in (10**12, -3, "x"):
        with pytest.raises(PreventUpdate):
            play.jump(None, 1, step, "COPY", LESSON, "en", trigger="jump-next")


def test_breakpoints_are_added_checked_and_removed(play, meta):
    add = {"trigger": "bp-add"}
    items, shown, error = play.breakpoints(1, [], "COPY", None, "", None, [], LESSON, "zh", **add)
    assert items == [{"kind": "COPY", "core": None, "src": None, "mark": None}] and error == ""
    assert "COPY" in _text(shown) and CJK.search(shown[0].children[1].title)
    items, _shown, _e = play.breakpoints(2, [None], None, meta["cores"][0], "", "tile", items, LESSON, "en", **add)
    assert len(items) == 2 and items[1]["core"] == meta["cores"][0] and items[1]["mark"] == "tile"
    got = play.breakpoints(3, [None, None], None, "AIV 999", "", None, items, LESSON, "en", **add)
    assert got[:2] == (no_update, no_update) and "AIV 999" in got[2]  # not a core of this run: said inline
    got = play.breakpoints(3, [None, None], None, None, "no-line-here", None, items, LESSON, "en", **add)
    assert got[:2] == (no_update, no_update) and got[2].startswith("breakpoint source line")
    items, shown, _e = play.breakpoints(
        3, [None, 1], None, None, "", None, items, LESSON, "en", trigger={"type": "bp-del", "i": 0}
    )
    assert items == [{"kind": None, "core": meta["cores"][0], "src": None, "mark": "tile"}]
    items, shown, _e = play.breakpoints(
        3, [1], None, None, "", None, items, LESSON, "en", trigger={"type": "bp-del", "i": 0}
    )
    assert items == [] and shown == msg("web.bp_none", "en")


def test_a_slots_numbers_or_why_not(play, meta):
    no_core = play.tile_values({"buf": "UB", "q": 0, "s": 0}, 0, LESSON, "AIV 999", "zh")
    assert no_core.children == msg("web.no_core", "zh")
    note = play.tile_values({"buf": "UB", "q": 7, "s": 9}, 0, LESSON, meta["cores"][0], "zh")  # no such slot
    assert note.className == "note" and note.children == msg("web.no_slot", "zh", buf="UB", q=7, s=9)
    for click, step in (({"buf": "UB", "q": 0, "s": 0}, 10**12), (["x"], 0), ({"buf": "UB", "q": "x", "s": 0}, 0)):
        with pytest.raises(PreventUpdate):  # what the page's own panel could not have sent
            play.tile_values(click, step, LESSON, meta["cores"][0], "en")
    with pytest.raises(PreventUpdate):
        play.tile_values(None, 0, LESSON, meta["cores"][0], "en")


# -- the pages: routing, the language, a lesson, its questions, exports ------------------------------------------
def test_the_language_switch_translates_every_marked_text(runs):
    cb = pages.Callbacks(runs, "en")
    outputs = [
        {"id": {"type": "t", "key": k, "n": i}, "property": "children"}
        for i, k in enumerate(("web.questions", "web.lesson"))
    ]
    zh = cb.translate("zh", outputs=outputs)
    assert zh == [msg("web.questions", "zh"), msg("web.lesson", "zh")] and all(CJK.search(x) for x in zh)
    assert cb.translate("en", outputs=outputs) == [msg("web.questions", "en"), msg("web.lesson", "en")]
    assert cb.translate("fr", outputs=outputs[:1]) == [msg("web.questions", "en")]  # an unknown language: English


def test_routes_in_the_default_language_and_the_one_asked(runs):
    cb = pages.Callbacks(runs, "zh")
    lessons_page = cb.route("/", "?lesson=3", None)  # no language kept in the browser: the server's default
    assert CJK.search(_text(lessons_page)) and "lesson-select" in _ids(lessons_page)
    assert "pg-scenario" in _ids(cb.route("/playground/", "", "en"))
    assert "cmp-run" in _ids(cb.route("/compare", "", "en"))
    assert msg("web.not_found", "en") in _text(cb.route("/nowhere", "", "en"))
    assert "lesson-select" in _ids(cb.route(["x"], {"y": 1}, "zh"))  # not a path: the home page


def test_a_lesson_in_chinese_and_a_lesson_that_does_not_exist(runs):
    cb = pages.Callbacks(runs, "en")
    run, head, steps, questions, panel = cb.lesson(1, "zh", None)
    assert run == LESSON and msg("web.lesson_n", "zh", n=1, title=get(1).title["zh"]) in _text(head)
    assert len(steps) == len(get(1).steps) and steps[0].id == {"type": "lesson-step", "i": 0}
    assert {"type": "q-check", "q": "setup"} in _ids(questions) and panel.id == "ex-panel"
    assert cb.lesson(1, "en", LESSON)[0] is no_update  # the run shown already
    for number in (99, "x", ["x"]):
        run, error, *rest = cb.lesson(number, "en", None)
        assert run is no_update and error.className == "error" and rest == [[], [], []]


def test_a_question_is_answered_by_the_simulator(runs):
    cb = pages.Callbacks(runs, "en")
    lesson = get(1)
    truth = runs.truth(lesson, "setup")
    wrong = next(c for c in lesson.questions[0].choices if c != truth)
    ident = {"type": "q-check", "q": "setup"}
    texts, classes = cb.answer([1], [truth], [ident], 1, "zh", trigger=ident)
    assert classes == ["answer right"] and CJK.search(_text(texts))
    assert cb.answer([1], [wrong], [ident], 1, "en", trigger=ident)[1] == ["answer wrong"]
    assert cb.answer([1], [None], [ident], 1, "en", trigger=ident) == ([msg("web.choose_first", "en")], ["answer"])
    for clicks, number, trigger in (([0], 1, ident), ([1], "x", ident), ([1], 1, "lesson-select"), ("x", 1, ident)):
        with pytest.raises(PreventUpdate):
            cb.answer(clicks, [truth], [ident], number, "en", trigger=trigger)


def test_the_lesson_page_shows_no_explanation_until_its_question_is_answered(runs):
    """Every lesson's page, in both languages, holds no question's explanation (not in its text, not in any
    component's property) until the trainee has chosen an answer and asked; then that one shows."""
    from lessons.catalog import lessons

    cb = pages.Callbacks(runs, "en")
    for lesson in lessons():
        for lang in ("en", "zh"):
            _run, *parts = cb.lesson(lesson.number, lang, None)
            page = json.dumps([getattr(x, "to_plotly_json", lambda x=x: x)() for x in parts], default=str)
            page = json.loads(page)  # as the browser receives it
            for q in lesson.questions:
                assert q.explain[lang] not in json.dumps(page, ensure_ascii=False), (lesson.number, q.id, lang)
                ident = {"type": "q-check", "q": q.id}
                unanswered = cb.answer([1], [None], [ident], lesson.number, lang, trigger=ident)
                assert q.explain[lang] not in _text(unanswered[0])
    q = get(1).questions[0]
    ident = {"type": "q-check", "q": q.id}
    assert q.explain["en"] in _text(cb.answer([1], [q.choices[0]], [ident], 1, "en", trigger=ident)[0])


def test_exports_of_the_last_run(runs):
    cb = pages.Callbacks(runs, "en")
    assert cb.export_label(None, "zh") == msg("web.export_none", "zh")
    assert cb.export_label(LESSON, "en") == msg("web.export_run", "en", name="lesson 1")
    sent, error = cb.export(None, 1, None, LESSON, "en", trigger="exp-summary")
    summary = json.loads(sent["content"])
    assert error == "" and sent["filename"] == "lesson-1.summary.json"
    assert summary["run"] == LESSON and summary["events"] == len(runs.load(LESSON).replay)
    sent, _ = cb.export(1, None, None, LESSON, "en", trigger="exp-chrome")
    assert sent["filename"] == "lesson-1.trace.json" and json.loads(sent["content"])["traceEvents"]
    sent, _ = cb.export(None, None, 1, LESSON, "en", trigger="exp-csv")
    assert sent["filename"] == "lesson-1.pipes.csv" and sent["content"].count("\n") > 1
    assert cb.export(1, None, None, None, "zh", trigger="exp-chrome") == (no_update, msg("web.export_none", "zh"))
    sent, error = cb.export(1, None, None, {"scenario": ["matmul"]}, "en", trigger="exp-chrome")
    assert sent is no_update and error.startswith("scenario must be one of")


# -- the playground ------------------------------------------------------------------------------------------------
def test_the_playground_form_follows_the_scenario(runs):
    cb = playground.Callbacks(runs)
    fields, m_row, n_row, k_row = cb.scenario_fields("vector-add", "en", trigger="pg-scenario")
    assert {"type": "pg-param", "name": "length"} in _ids(fields)
    assert m_row == k_row == {"display": "none"} and n_row == {"display": "none"}  # vector-add has no m, n, k
    assert cb.scenario_fields("matmul", "en", trigger="pg-scenario")[1:] == ({}, {}, {})
    assert CJK.search(cb.scenario_line("matmul", "zh")) and cb.scenario_line("matmul", "en").startswith("matmul: ")
    for name in (["matmul"], "nope", None):
        with pytest.raises(PreventUpdate):
            cb.scenario_fields(name, "en", trigger="pg-scenario")
    assert cb.restore(None, TINY, None) == TINY
    with pytest.raises(PreventUpdate):
        cb.restore(None, TINY, LESSON)  # a run on screen stays


def _inputs(node) -> dict:
    """{name: (value, placeholder)} of the form's text inputs, from the components a callback returned."""
    return {c.id["name"]: (c.value, c.placeholder) for c in _components(node) if hasattr(c, "placeholder")}


def test_a_language_switch_keeps_what_the_form_holds_and_says_the_rest_in_the_new_language(runs):
    cb = playground.Callbacks(runs)
    ids = [{"type": "pg-param", "name": n} for n in ("cores", "base", "buffer_num", "out_dtype", "seed")]
    values = ["4", "", 1, "fp32", "7"]
    fields = cb.scenario_fields("matmul", "zh", values, ids, trigger="lang-page")[0]
    inputs = _inputs(fields)
    assert inputs["cores"][0] == "4" and inputs["seed"][0] == "7"  # what was typed
    assert CJK.search(inputs["base"][1]), inputs["base"]  # an empty field's words, in Chinese now
    assert ("buffer_num", 1) in [(c.id["name"], c.value) for c in _components(fields) if hasattr(c, "clearable")]
    assert all(CJK.search(f.title) for f in fields)  # the help too
    # choosing another scenario starts from its defaults, whatever the form held
    fresh = _inputs(cb.scenario_fields("matmul", "zh", values, ids, trigger="pg-scenario")[0])
    assert fresh["cores"][0] == "" and fresh["seed"][0] == "0"
    # what a hostile page sends as the form's state is ignored, never rendered
    odd = cb.scenario_fields("matmul", "en", [["x"], {"a": 1}], [{"name": "cores"}, "seed"], trigger="lang-page")
    assert _inputs(odd[0])["cores"][0] == "" and _inputs(odd[0])["seed"][0] == "0"


def _components(node) -> list:
    out = []
    for child in node if isinstance(node, list) else [node]:
        out.append(child)
        kids = getattr(child, "children", None)
        if isinstance(kids, list):
            out.extend(_components(kids))
    return out


def _click(cb, scenario="matmul", m="64", profile="ascend910b1", session=SESSION, lines=None):
    lines = [] if lines is None else lines
    return cb.run_clicked(
        _progress(lines), 1, [], scenario, profile, m, "64", "64", [], [], [], None, "en", session, trigger="pg-run"
    )


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"scenario": ["matmul"]}, "scenario must be one of"),
        ({"scenario": "nope"}, "scenario must be one of"),
        ({"m": "abc"}, "m must be an integer, got 'abc'"),
        ({"m": "0"}, "m must be >= 1"),
        ({"profile": ["x"]}, "profile must be one of"),
    ],
)
def test_a_bad_playground_request_is_answered_in_the_form(runs, changes, said):
    run, last, error, note, *form = _click(playground.Callbacks(runs), **changes)
    assert run is no_update and last is no_update and said in error and note == ""
    assert form == [no_update, no_update, no_update, []]


def test_a_playground_run_is_computed_stored_and_plays(runs):
    cb = playground.Callbacks(runs)
    lines = []
    run, last, error, _note, *_form = _click(cb, lines=lines, session="callbacktests0002")
    assert error == "" and run == last == {**TINY, "numerics": False}
    assert lines[0] == [msg("web.phase.starting", "en")] and len(lines) > 1
    assert runs.stored(runs.spec(run))
    meta = player.Callbacks(runs).load_run(run, "en", None)[0]
    assert meta["n"] == len(runs.load(run).replay) > 0 and meta["cores"]


@pytest.mark.parametrize("damage", ["truncated", "empty", "zeroed"])
def test_a_damaged_playground_run_is_computed_again_and_the_form_says_so(tmp_path, damage):
    """A stored playground run whose file was truncated, emptied or zeroed: the Run click computes it again, the
    form's note says so (in the page's language), and the run plays."""
    runs = Runs(tmp_path)
    cb = playground.Callbacks(runs)
    run = _click(cb, session="callbacktests0003")[0]
    path = runs.store.path(runs.spec(run))
    data = path.read_bytes()
    path.write_bytes({"truncated": data[: len(data) // 3], "empty": b"", "zeroed": bytes(len(data))}[damage])
    again = Runs(tmp_path)  # another worker: nothing in its memory
    answer = playground.Callbacks(again).run_clicked(
        lambda _x: None,
        1,
        [],
        "matmul",
        "ascend910b1",
        "64",
        "64",
        "64",
        [],
        [],
        [],
        None,
        "zh",
        "callbacktests0004",
        trigger="pg-run",
    )
    assert answer[2] == "" and answer[3] == msg("web.note.damaged", "zh")
    assert path.is_file() and again.load(run).events > 0


# -- the compare page ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("a", "b", "said"),
    [
        ((["matmul"], ""), ("matmul", ""), "A: scenario must be one of"),
        (("matmul", ""), ("matmul", "--nope 1"), "options: '--nope' is not an option of matmul"),
        (("matmul", ["--m"]), ("matmul", ""), "A: options must be text, got ['--m']"),
        (("matmul", "--m 0"), ("matmul", ""), "A: m must be >= 1"),
        (("matmul", '--m "64'), ("matmul", ""), "A: options: a quote is not closed in '--m \"64'"),
    ],
)
def test_a_bad_comparison_is_answered_inline(runs, a, b, said):
    error, result, shown = compare.Callbacks(runs).compare(_progress([]), 1, *a, *b, [], "en", SESSION)
    assert said in error and result is no_update and shown is no_update


def test_two_runs_compared_and_redrawn_in_chinese(runs):
    cb = compare.Callbacks(runs)
    options = "--m 64 --n 64 --k 64"
    error, result, shown = cb.compare(
        _progress([]), 1, "matmul", options, "matmul", f"{options} --buffer-num 1", [], "en", "callbacktests0003"
    )
    assert error == "" and result.id == "cmp-body" and [r["params"].get("buffer_num") for r in shown] == [None, "1"]
    assert "buffer_num" in _text(result)
    again = cb.redraw("zh", shown)
    assert again.id == "cmp-body" and CJK.search(_text(again))
    for bad in (None, shown[:1], [shown[0], "x"], [{"scenario": ["x"]}, shown[1]]):
        with pytest.raises(PreventUpdate):
            cb.redraw("zh", bad)


# -- the Exercise panel -------------------------------------------------------------------------------------------
def _grade(lesson: int = 1) -> dict:
    """A grade as :func:`app.web.exercise.grade_doc` keeps it (one failed criterion, an error line)."""
    criterion = {"id": "c1", "passed": False, "yours": "1", "expected": "2", "detail": "", "hint": "look", "title": "T"}
    return {
        "verdict": "FAIL",
        "score": 50,
        "lesson": lesson,
        "time_s": 0.1,
        "messages": [],
        "stdout": "",
        "costs": {},
        "line": 7,
        "criteria": {"en": [criterion], "zh": [{**criterion, "title": "标题"}]},
        "predictions": {},
        "run": None,
        "n": 2,
    }


def test_a_kept_grade_is_drawn_again_in_the_language_asked(runs):
    cb = exercise.Callbacks(runs)
    head, criteria, output, buttons, line = cb.show("zh", 1, _grade())
    assert "FAIL" in _text(head) and CJK.search(_text(head)) and head.className == "verdict-line fail"
    assert len(criteria) == 1 and "标题" in _text(criteria) and line == 7 and buttons == {"display": "none"}
    assert CJK.search(_text(output))  # no run of the trainee's: said why
    empty = ([], [], [], {"display": "none"}, None)
    assert cb.show("en", 2, _grade(1)) == empty and cb.show("en", 1, None) == empty


def test_run_and_check_with_code_runs_off_says_why(runs, monkeypatch):
    monkeypatch.setattr(runs, "code_runs", ("off", "bubblewrap is missing"))
    cb = exercise.Callbacks(runs)
    got = cb.check(_progress([]), {"code": "print(1)", "lesson": 1, "n": 1}, "en", SESSION)
    assert got[:2] == (no_update, no_update) and "bubblewrap is missing" in got[2] and got[3] is no_update
    with pytest.raises(PreventUpdate):
        cb.check(_progress([]), "not a submission", "en", SESSION)


def test_the_trainees_run_and_the_reference_and_a_statements_link(runs):
    cb = exercise.Callbacks(runs)
    mine = {"exercise": 1, "code": "0" * 32}
    assert cb.switch(1, None, mine, 1, trigger="ex-show-mine") == mine
    assert cb.switch(None, 1, mine, 1, trigger="ex-show-ref") == LESSON
    with pytest.raises(PreventUpdate):
        cb.switch(1, None, None, 1, trigger="ex-show-mine")  # no run of the trainee's yet
    run, target = cb.go([1], mine, LESSON, trigger={"type": "diff-step", "i": 0, "step": 12})
    assert run == mine and target["step"] == 12
    assert cb.go([1], mine, mine, trigger={"type": "diff-step", "i": 0, "step": 0})[0] is no_update
    for trigger in ({"type": "diff-step", "i": 0, "step": "12"}, {"type": "diff-step", "i": 0, "step": -1}, "x"):
        with pytest.raises(PreventUpdate):
            cb.go([1], mine, LESSON, trigger=trigger)


def test_a_steps_preview_is_cut_between_words_never_inside_an_identifier():
    from app.web.pages import _preview

    line = "最后一个核的分块是 1041 个元素、2082 字节：不是整数个 32 字节数据块，"
    line += "DataCopy 会拒绝它。copy_in 使用 DataCopyPad：..."
    cut = _preview(line)
    assert cut.endswith("…") and len(cut) <= 71 and "DataCopy 会" in cut and "Dat…" not in cut
    assert cut.removesuffix("…").split()[-1] in line.split()  # the last word is whole
    words = "copy_in_with_a_long_name " * 4
    assert _preview(words) == "copy_in_with_a_long_name copy_in_with_a_long_name…"
    assert _preview("short") == "short"


def test_a_warmed_process_prepares_a_playground_run_without_translating_its_kernel_again(tmp_path):
    """What the job launcher does once before forking jobs (``Runs.warm``), in a fresh process: it stores nothing,
    and a playground job after it finds the kernel's C++ view already made (the longest of a job's first-time
    costs)."""
    import subprocess
    import sys

    script = f"""
import json
from app.present.cpp.module import translate
from app.web.runs import Runs, validate_request
runs = Runs({str(tmp_path)!r})
runs.warm()
warmed = translate.cache_info()
stored = sorted(str(f) for f in runs.directory.rglob("*.npz"))
request = {{"scenario": "matmul", "params": {{"m": 256, "n": 192, "k": 320}}, "numerics": True}}
spec, _s, cost = validate_request(request)
runs.store.remember(spec, runs._simulate(spec, cost.events, lambda *a: None).result)
runs.prepare(spec, request, "en")
after = translate.cache_info()
got = {{"stored": stored, "warmed": warmed.currsize, "misses": [warmed.misses, after.misses]}}
print(json.dumps({{**got, "hits": [warmed.hits, after.hits]}}))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["warmed"] >= 1, got
    assert got["misses"][1] == got["misses"][0] and got["hits"][1] > got["hits"][0], got
    assert got["stored"] == [], got
