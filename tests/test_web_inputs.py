"""Every input of every server callback given malformed values, one at a time, the others as a page sends them:
the answer is an inline message or nothing (PreventUpdate), never an exception (a failed request: the page would
stay blank), and never internal text (a Python error's words, a traceback, an errno).

A table of each callback's valid call (what a page sends, over a real run store: lesson 1 and a 64^3 matmul),
and the malformed values tried in every position: wrong types, out-of-range numbers, and tampered versions of
the dicts a page keeps (a run, a window request, a breakpoint, a slot click, a viewport)."""

from __future__ import annotations

import re

import pytest
from dash import no_update
from dash.exceptions import PreventUpdate

from app.web import compare, exercise, pages, player, playground
from app.web.errors import RunRequestError
from app.web.runs import Runs

LESSON = {"lesson": 1}
TINY = {"scenario": "matmul", "profile": "ascend910b1", "params": {"m": 64, "n": 64, "k": 64}, "numerics": True}
SESSION = "inputtests000001"

GARBAGE = [
    None,
    [],
    {},
    "",
    "x",
    "abc",
    0,
    -1,
    10**12,
    1e308,
    float("nan"),
    True,
    ["a", 1],
    {"a": [1, {"b": None}]},
    "9" * 500,
]
TAMPERED_RUNS = [
    {"lesson": "x"},
    {"lesson": 99},
    {"lesson": [1]},
    {"scenario": ["matmul"]},
    {"scenario": "matmul", "params": {"m": "abc"}},
    {"scenario": "matmul", "params": "m=1"},
    {"scenario": "matmul", "params": {"m": 10**9, "n": 10**9, "k": 10**9}},
    {"scenario": "nope"},
    {"exercise": 1, "code": "zz"},
    {"exercise": "x", "code": "0" * 32},
    {"exercise": 1},
]
# words of Python's own errors, which must never reach a page
INTERNAL = re.compile(
    r"Traceback|invalid literal|string indices|has no attribute|NoneType|not subscriptable|unhashable|"
    r"Errno|object is not|KeyError|TypeError|IndexError|AttributeError|StopIteration|argument of type|"
    r"not iterable|unsupported operand|got an unexpected"
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    runs = Runs(tmp_path_factory.mktemp("runs"))
    runs.compute(TINY, SESSION + "x", lambda *_: None, "en")
    return runs


@pytest.fixture(scope="module")
def cbs(runs):
    def graded(*_args, **_kw):  # reached only by a well-formed request: grading itself is tested elsewhere
        raise RunRequestError("graded", "已评分")

    runs._grade = graded
    runs._reference_ready = lambda *_: None
    play = player.Callbacks(runs)
    return {
        "pages": pages.Callbacks(runs, "en"),
        "playground": playground.Callbacks(runs),
        "compare": compare.Callbacks(runs),
        "player": play,
        "exercise": exercise.Callbacks(runs),
    }


@pytest.fixture(scope="module")
def state(cbs, runs):
    """What a page holds once lesson 1 and the matmul are loaded: their meta and a window request."""
    play = cbs["player"]
    lesson_meta = play.load_run(LESSON, "en", None)[0]
    run_meta = play.load_run(TINY, "en", None)[0]
    return {"lesson": lesson_meta, "run": run_meta}


def _window(meta, **changes) -> dict:
    req = {"run": meta["key"], "lang": "en", "first": 0, "count": 40, "core": meta["cores"][0], "step": 3, "sig": 1}
    return {**req, **changes}


def _calls(state):
    """(callback, method, kwargs of a valid call, inputs to spoil, extra values for some inputs) for each call."""
    lm, rm = state["lesson"], state["run"]
    view = {"run": lm["key"], "span": 100.0, "first": 0, "count": 40}
    bp = {"kind": "COMPUTE", "core": None, "src": None, "mark": None}
    slot = {"buf": "x", "q": 0, "s": 0, "at": 1}
    ex_ids = [{"type": "pg-param", "name": "base"}]
    return [
        ("pages", "route", {"path": "/", "search": "?lesson=2", "lang": "en"}),
        ("pages", "remember", {"run": LESSON}),
        ("pages", "lesson", {"number": 2, "lang": "en", "run": LESSON}),
        ("pages", "lesson_menu", {"lang": "zh"}),
        (
            "pages",
            "answer",
            {
                "clicks": [1],
                "answers": ["kernel"],
                "ids": [{"type": "q-check", "q": "setup"}],
                "number": 1,
                "lang": "en",
                "trigger": {"type": "q-check", "q": "setup"},
            },
        ),
        (
            "pages",
            "answer",
            {
                "clicks": [1],
                "answers": ["kernel"],
                "ids": [{"type": "q-check", "q": "nope"}],
                "number": 1,
                "lang": "en",
                "trigger": {"type": "q-check", "q": "nope"},
            },
        ),
        ("pages", "export_label", {"run": LESSON, "lang": "en"}),
        ("pages", "export", {"_c": 1, "_s": None, "_v": None, "run": LESSON, "lang": "en", "trigger": "exp-summary"}),
        (
            "playground",
            "scenario_fields",
            {"name": "matmul", "lang": "zh", "values": ["64"], "ids": ex_ids, "trigger": "lang-page"},
        ),
        ("playground", "scenario_line", {"name": "matmul", "lang": "en"}),
        ("playground", "restore", {"_ts": 1, "last": TINY, "run": None}),
        (
            "playground",
            "run_clicked",
            {
                "set_progress": lambda _x: None,
                "_clicks": 1,
                "tries": [],
                "scenario": "matmul",
                "profile": "ascend910b1",
                "m": "64",
                "n": "64",
                "k": "64",
                "ids": [],
                "values": [],
                "numerics": ["on"],
                "run": None,
                "lang": "en",
                "session": SESSION,
                "trigger": "pg-run",
            },
        ),
        (
            "compare",
            "compare",
            {
                "set_progress": lambda _x: None,
                "_run": 1,
                "sa": "matmul",
                "oa": "--m 64 --n 64 --k 64",
                "sb": "matmul",
                "ob": "--m 64 --n 64 --k 128",
                "numerics": [],
                "lang": "en",
                "session": SESSION + "c",
            },
        ),
        ("compare", "redraw", {"lang": "zh", "shown": [TINY, TINY]}),
        ("player", "load_run", {"run": TINY, "lang": "en", "old": None}),
        ("player", "status_in", {"lang": "zh", "run": LESSON, "meta": lm}),
        ("player", "run_views", {"meta": lm, "lang": "en", "run": LESSON}),
        ("player", "fetch_window", {"req": _window(lm), "run": LESSON, "expand": [], "follow": ["on"], "view": view}),
        (
            "player",
            "zoom",
            {
                "relayout": {"xaxis.range[0]": 0, "xaxis.range[1]": 10},
                "_whole": None,
                "_work": None,
                "expand": [],
                "follow": ["on"],
                "run": LESSON,
                "step": 3,
                "lang": "en",
                "view": view,
                "trigger": "tl-zoom",
            },
        ),
        (
            "player",
            "zoom",
            {
                "relayout": None,
                "_whole": 1,
                "_work": None,
                "expand": [],
                "follow": ["on"],
                "run": LESSON,
                "step": 3,
                "lang": "en",
                "view": view,
                "trigger": "tl-follow",
            },
        ),
        (
            "player",
            "jump",
            {
                "_prev": None,
                "_next": 1,
                "step": 3,
                "kind": "COMPUTE",
                "run": LESSON,
                "lang": "en",
                "trigger": "jump-next",
            },
        ),
        (
            "player",
            "breakpoints",
            {
                "_add": 1,
                "deletes": [],
                "kind": "COMPUTE",
                "core": lm["cores"][0],
                "src": "",
                "mark": "",
                "current": [bp],
                "run": LESSON,
                "lang": "en",
                "trigger": "bp-add",
            },
        ),
        (
            "player",
            "breakpoints",
            {
                "_add": None,
                "deletes": [1],
                "kind": None,
                "core": None,
                "src": None,
                "mark": None,
                "current": [bp],
                "run": LESSON,
                "lang": "en",
                "trigger": {"type": "bp-del", "i": 0},
            },
        ),
        ("player", "tile_values", {"click": slot, "step": 3, "run": TINY, "core": rm["cores"][0], "lang": "en"}),
        (
            "exercise",
            "check",
            {
                "set_progress": lambda _x: None,
                "submit": {"lesson": 3, "code": "x = 1", "n": 1},
                "lang": "en",
                "session": SESSION + "e",
            },
        ),
        ("exercise", "show", {"lang": "zh", "number": 3, "doc": None}),
        (
            "exercise",
            "go",
            {"clicks": [1], "mine": TINY, "run": LESSON, "trigger": {"type": "diff-step", "i": 0, "step": 2}},
        ),
        ("exercise", "switch", {"_mine": 1, "_ref": None, "mine": TINY, "number": 3, "trigger": "ex-show-mine"}),
    ]


def _spoiled(arg: str, value) -> list:
    """The malformed values tried for input ``arg`` whose valid value is ``value``: every kind of garbage, tampered
    run dicts for an input holding a run, and each key of a dict (or of a list's first dict) given each garbage."""
    out = list(GARBAGE)
    if arg in ("run", "mine", "last", "old"):
        out += TAMPERED_RUNS
    if arg == "shown":
        out += [[r, TINY] for r in TAMPERED_RUNS]
    inner = value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else value
    if isinstance(inner, dict):
        for key in inner:
            for bad in GARBAGE:
                spoilt = {**inner, key: bad}
                out.append([spoilt, *value[1:]] if inner is not value else spoilt)
    return out


def _strings(value, out: list) -> list:
    """Every string in an answer (component trees, figures, dicts, lists)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)
    elif isinstance(value, list | tuple):
        for v in value:
            _strings(v, out)
    elif hasattr(value, "to_plotly_json"):
        _strings(value.to_plotly_json(), out)
    return out


def _call(fn, kwargs):
    try:
        return fn(**kwargs)
    except PreventUpdate:
        return no_update


def test_every_callback_answers_its_valid_call(cbs, state):
    """The table's valid calls are valid: each answers (so a malformed value below is the only thing wrong)."""
    for group, name, kwargs in _calls(state):
        fn = getattr(cbs[group], name)
        answer = _call(fn, kwargs)
        assert answer is not no_update or name in ("restore", "zoom"), (group, name)
        assert not [s for s in _strings(answer, []) if INTERNAL.search(s)], (group, name)


def test_malformed_values_for_every_callback_input_are_answered_inline_or_ignored(cbs, state):
    failures = []
    tried = 0
    for group, name, kwargs in _calls(state):
        fn = getattr(cbs[group], name)
        for arg in kwargs:
            if arg in ("set_progress", "trigger"):
                continue
            for bad in _spoiled(arg, kwargs[arg]):
                tried += 1
                try:
                    answer = _call(fn, {**kwargs, arg: bad})
                except Exception as exc:  # what the test is for
                    failures.append(f"{group}.{name}({arg}={bad!r:.40}): {type(exc).__name__}: {exc}"[:300])
                    continue
                leaked = [s for s in _strings(answer, []) if INTERNAL.search(s)]
                if leaked:
                    failures.append(f"{group}.{name}({arg}={bad!r:.40}) shows internal text: {leaked[0][:200]}")
    print(f"\n{tried} malformed calls")
    assert not failures, "\n".join(failures[:40]) + f"\n({len(failures)} in all)"


def test_every_refusal_a_page_can_show_is_written_in_both_languages():
    """Every RunRequestError, ScenarioArgError, ScenarioFailed, ParamValueError and TilingError raised anywhere is
    given its Chinese where it is made (a call without it would fail only when that refusal happens)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    chinese = {  # the error -> how its call gives the Chinese: a positional index or a keyword
        "RunRequestError": (1, "zh"),
        "ParamValueError": (1, "zh"),
        "ScenarioArgError": (None, "zh"),
        "ScenarioFailed": (2, "zh"),
        "TilingError": (3, "limit_zh"),
    }
    missing, seen = [], 0
    for path in sorted([*root.glob("app/**/*.py"), *root.glob("engine/**/*.py"), *root.glob("lessons/**/*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in chinese:
                at, keyword = chinese[node.func.id]
                seen += 1
                given = any(k.arg == keyword for k in node.keywords) or (at is not None and len(node.args) > at)
                if not given:
                    missing.append(f"{path.relative_to(root)}:{node.lineno} {node.func.id}")
    assert seen > 60 and not missing, missing


CJK = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"\b[a-z]{4,}\b")  # an English word (identifiers and values are quoted or named)


def _inline(cbs, state, lang: str) -> list[tuple[str, str, str, str]]:
    """(what, the inline message in ``lang``, the field it must name, the value it must quote) for bad requests
    on every surface that answers in the page."""
    play, pg, cmp_, pages_, ex = cbs["player"], cbs["playground"], cbs["compare"], cbs["pages"], cbs["exercise"]
    form = {
        "set_progress": lambda _x: None,
        "_clicks": 1,
        "tries": [],
        "scenario": "matmul",
        "profile": "ascend910b1",
        "ids": [],
        "values": [],
        "numerics": [],
        "run": None,
        "lang": lang,
        "session": SESSION + lang,
        "trigger": "pg-run",
    }
    out = []
    for m, n, field, value in (
        ("abc", "64", "m", "'abc'"),
        ("0", "64", "m", "0"),
        ("16384", "8192", "m x n x k", "16384"),
    ):
        said = pg.run_clicked(**form, m=m, n=n, k=n)[2]
        out.append((f"playground m={m}", said, field, value))
    said = pg.run_clicked(**{**form, "numerics": ["on"]}, m="8192", n="8192", k="8192")[2]
    out.append(("playground numerics 8192^3", said, "m x n x k", "8192"))
    base = {
        "set_progress": lambda _x: None,
        "_run": 1,
        "sa": "matmul",
        "sb": "matmul",
        "numerics": [],
        "lang": lang,
        "session": SESSION + "c" + lang,
    }
    out.append(("compare options", cmp_.compare(**base, oa="--nope 1", ob="")[0], "A", "'--nope'"))
    out.append(("compare value", cmp_.compare(**base, oa="", ob="--m x")[0], "B", "'x'"))
    bp = {
        "_add": 1,
        "deletes": [],
        "core": None,
        "mark": "",
        "current": [],
        "run": LESSON,
        "lang": lang,
        "trigger": "bp-add",
    }
    out.append(("breakpoint kind", play.breakpoints(**bp, kind="NOPE", src="")[2], "", "'NOPE'"))
    out.append(("breakpoint line", play.breakpoints(**bp, kind=None, src="nope")[2], "", "'nope'"))
    jump = {"_prev": None, "_next": 1, "step": 3, "run": LESSON, "lang": lang, "trigger": "jump-next"}
    out.append(("jump kind", play.jump(**jump, kind="NOPE")[1], "", "'NOPE'"))
    out.append(("tampered run", play.load_run({"lesson": "x"}, lang, None)[7], "", "'x'"))
    out.append(("lesson number", pages_.lesson("x", lang, LESSON)[1].children, "", "'x'"))
    submit = {"lesson": 3, "code": 7, "n": 1}
    out.append(("exercise code", ex.check(lambda _x: None, submit, lang, SESSION + "e" + lang)[2], "code", "7"))
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_inline_refusals_name_the_field_and_the_value_in_the_pages_language(cbs, state, lang):
    for what, said, field, value in _inline(cbs, state, lang):
        assert isinstance(said, str) and said, what
        assert field in said and value in said, (what, said)
        assert not INTERNAL.search(said), (what, said)
        if lang == "zh":
            assert CJK.search(said), (what, said)
        else:
            assert not CJK.search(said), (what, said)
