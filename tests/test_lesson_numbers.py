"""Every number a lesson narrates says where it comes from, in both languages.

The narrated text is each lesson's summary, its steps' text and diagnoses and its questions' explanations
(``lesson.toml``: ``summary``, ``[[steps]]`` ``en`` / ``zh`` and ``diagnosis_en`` / ``diagnosis_zh``,
``[[questions]]`` ``explain_en`` / ``explain_zh``). A field that narrates a number must carry at least one mark:

- a source, ``source: ...`` / ``sources: ...`` (usually inside parentheses), ``来源：...`` in Chinese;
- the simulator's assumption, ``simulator's assumption`` / ``模拟器假设``;
- a figure this simulation computed, ``(simulated)`` or ``(simulated: ...)`` / ``（模拟结果）`` or
  ``（模拟结果：...）``: a time, ratio or range of the run the lesson shows, which follows from the
  profile's numbers and the program, not a published measurement;
- a choice of the lesson's program, ``(the lesson's program)`` / ``（本课程序）``: a block count, a tile
  size or a batch count the program sets, which claims nothing about the hardware;
- a profile field, ``profile field host.kernel_start_us`` / ``配置字段 host.kernel_start_us``: the field
  must exist, and a field whose profile comment is an ASSUMPTION needs the assumption mark beside it.

The English and the Chinese text of one field carry the same kinds of mark. The granularity is the text
field (one summary, one step), not each number: a mark covers the field's numbers, and says which when
they differ.

Not narrated numbers, and so allowed without a mark (:func:`narrated_numbers` removes them first): code
(backtick spans, calls such as ``set_device(1)``, identifiers with digits such as ``L0A``, ``fp16``,
``910B1``, ``depthA1``, indexing such as ``loaded[0]``, ``i + 1``), indices (lesson, case, section, step,
batch, block, core, device, stream, event, slot, request and bug numbers), error codes (six digits,
100000-599999, and ``0 is ACL_SUCCESS``) and shapes (``512 x 512``, ``4096^3``).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from engine.profiles.sources import profile_sources

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LESSON_FILES = sorted(LESSONS.glob("l[0-9][0-9]_*/lesson.toml"))

MARKS = {
    "source": (re.compile(r"\bsources?:", re.I), re.compile(r"来源[：:]")),
    "assumption": (re.compile(r"simulator's assumption", re.I), re.compile(r"模拟器假设")),
    "simulated": (re.compile(r"\bsimulated[):]"), re.compile(r"模拟结果[）：]")),
    "program": (re.compile(r"\(the lesson's program[):]"), re.compile(r"（本课程序[）：]")),
}
PROFILE_FIELD = (
    re.compile(r"profile fields?\s+([a-z_0-9]+\.[a-z_0-9]+)"),
    re.compile(r"配置字段\s*([a-z_0-9]+\.[a-z_0-9]+)"),
)

_INDEX_EN = (
    r"\b(?:lessons?|cases?|sections?|steps?|batch(?:es)?|blocks?|cores?|streams?|events?|slots?|buffer sets?|"
    r"scenario|AIV|AIC|id|ids|number|tile|tiles|requests?|devices?|bugs?)"
    r"\s+\d+(?:\.\d+)?(?:(?:\s*(?:,|and|or|to|-|–)\s*)\d+(?:\.\d+)?)*"
)
_INDEX_ZH = (
    r"(?:第\s*\d+(?:\s*[、和至-]\s*\d+)*\s*(?:课|批|个|套|块|步|号|节|次|条|行|列)"
    r"|(?:流|核|块|批|事件|槽位|用例|设备|请求|错误|case|Case)\s*\d+"
    r"|\d+(?:\.\d+)*\s*节)"
)
NOT_NARRATED = [
    (r"`[^`]*`", "code in backticks"),
    (r"\b[\w.]+\([^()\n]*\)", "a call, as in set_device(1) or launch_kernel(add_kernel, 8, stream, ...)"),
    (r"\b\d+\s+(?:is|表示)\s+ACL_\w+", "a return code: 0 is ACL_SUCCESS"),
    (r"\b\w*\[[^\]\n]*\]", "indexing, as in loaded[0] or C[0:256, 0:256]"),
    (
        r"\b(?=\w*[A-Za-z_])(?=\w*\d)[A-Za-z_0-9]+(?:\.[A-Za-z_0-9]+)*\b(?<!\d[x×])",
        "an identifier with digits: L0A, fp16, 910B1, depthA1, x16",
    ),
    (r"\b[a-zA-Z]\s*[+\-]\s*\d+\b", "index arithmetic, as in i + 1"),
    (_INDEX_EN, "an index: lesson 2, case 5, section 2.3, block 0, stream 1"),
    (_INDEX_ZH, "an index: 第 2 课, 第 0 批, 流 1"),
    (r"\b[1-5]0\d{4}\b", "an error code (ACL_ERROR_* and ACL_ERROR_RT_* are six digits)"),
    (r"\d+(?:\s*[x×]\s*\d+)+(?!\s*(?:[x×]\b|倍))", "a shape: 512 x 512, 128 x 256 x 64"),
    (r"\d+\s*(?:\^\s*\d+|³)", "a shape: 4096^3, 512³"),
    (r"PCIe \d\.\d", "a standard's name: PCIe 4.0"),
]
_NOT_NARRATED = [re.compile(p, re.I if p is _INDEX_EN else 0) for p, _why in NOT_NARRATED]
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def narrated_numbers(text: str) -> list[str]:
    """The numbers of ``text`` that are narrated, once code, indices, error codes and shapes are removed."""
    for pattern in _NOT_NARRATED:
        text = pattern.sub(" ", text)
    return _NUMBER.findall(text)


def marks(text: str, zh: bool) -> set[str]:
    """The kinds of mark ``text`` carries ("source", "assumption", "simulated", "profile:<field>")."""
    found = {kind for kind, pats in MARKS.items() if pats[zh].search(text)}
    found |= {f"profile:{f}" for f in PROFILE_FIELD[zh].findall(text)}
    return found


def problems(en: str, zh: str, where: str, fields: dict) -> list[str]:
    """What is wrong with one text field's marks: unmarked numbers, a language without the other's
    marks, an unknown profile field, an assumption field cited without the assumption mark."""
    out = []
    kinds = {}
    for lang, text in (("en", en), ("zh", zh)):
        numbers = narrated_numbers(text)
        found = marks(text, lang == "zh")
        kinds[lang] = {k.split(":")[0] for k in found}
        if numbers and not found:
            out.append(f"{where} [{lang}]: narrates {', '.join(numbers[:6])} with no source or assumption mark")
        for mark in sorted(found):
            if not mark.startswith("profile:"):
                continue
            field = mark.split(":", 1)[1]
            if field not in fields:
                out.append(f"{where} [{lang}]: cites profile field {field}, which no profile has")
            elif fields[field] == "assumption" and "assumption" not in found:
                out.append(
                    f"{where} [{lang}]: cites {field}, an ASSUMPTION in the profile, without the assumption mark"
                )
    if kinds["en"] != kinds["zh"]:
        out.append(f"{where}: English marks {sorted(kinds['en'])}, Chinese marks {sorted(kinds['zh'])}")
    return out


def profile_fields() -> dict[str, str]:
    """``{"section.key": "source" | "assumption" | ...}`` of the default profile."""
    return {key: src.kind for key, src in profile_sources("ascend910b1").items()}


def lesson_problems(path: Path, fields: dict) -> list[str]:
    lesson = tomllib.loads(path.read_text(encoding="utf-8"))
    name = path.parent.name
    texts = [("summary", lesson["summary"])]
    texts += [(f"step {i + 1}", step) for i, step in enumerate(lesson.get("steps", []))]
    texts += [
        (f"step {i + 1} diagnosis", {"en": step["diagnosis_en"], "zh": step["diagnosis_zh"]})
        for i, step in enumerate(lesson.get("steps", []))
        if "diagnosis_en" in step
    ]
    texts += [
        (f"question {q['id']}", {"en": q.get("explain_en", ""), "zh": q.get("explain_zh", "")})
        for q in lesson.get("questions", [])
    ]
    out = []
    for where, text in texts:
        out += problems(text["en"], text["zh"], f"{name} {where}", fields)
    return out


@pytest.fixture(scope="module")
def fields():
    return profile_fields()


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.parent.name)
def test_every_narrated_number_is_marked(path, fields):
    assert lesson_problems(path, fields) == []


def test_an_unmarked_number_fails(fields):
    en = "The copy takes 30 us over the host link."
    zh = "这次拷贝在主机链路上需要 30 us。"
    assert problems(en, zh, "synthetic", fields) == [
        "synthetic [en]: narrates 30 with no source or assumption mark",
        "synthetic [zh]: narrates 30 with no source or assumption mark",
    ]


def test_each_mark_counts_and_both_languages_must_agree(fields):
    assert problems("L1 holds 512 KiB (source: INI).", "L1 有 512 KiB（来源：INI）。", "s", fields) == []
    assert (
        problems(
            "One copy engine per direction (simulator's assumption): 1.",
            "每个方向一个拷贝引擎（模拟器假设）：1。",
            "a",
            fields,
        )
        == []
    )
    assert problems("It takes 526 us (simulated).", "耗时 526 us（模拟结果）。", "r", fields) == []
    assert problems("It takes 526 us (simulated).", "耗时 526 us（来源：INI）。", "m", fields) == [
        "m: English marks ['simulated'], Chinese marks ['source']"
    ]


def test_a_profile_field_is_a_source_only_if_the_profile_sources_it(fields):
    assert fields["host.kernel_start_us"] == "source" and fields["host.copy_engines_h2d"] == "assumption"
    ok_en, ok_zh = "20 us (profile field host.kernel_start_us).", "20 us（配置字段 host.kernel_start_us）。"
    assert problems(ok_en, ok_zh, "k", fields) == []
    bad = problems(
        "1 engine (profile field host.copy_engines_h2d).", "1 个（配置字段 host.copy_engines_h2d）。", "c", fields
    )
    assert bad == [
        "c [en]: cites host.copy_engines_h2d, an ASSUMPTION in the profile, without the assumption mark",
        "c [zh]: cites host.copy_engines_h2d, an ASSUMPTION in the profile, without the assumption mark",
    ]
    assert "no profile has" in problems("3 (profile field host.nope).", "3（配置字段 host.nope）。", "n", fields)[0]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Block 0 of lesson 2 reads loaded[0] on stream 1, i + 1 later.", []),
        ("L0A and fp16 on the 910B1 with depthA1, case 3, section 2.3.", []),
        ("ACL_ERROR_RT_PARAM_INVALID is 107000; a 512 x 512 tile; 4096^3.", []),
        ("第 2 课的第 0 批在流 1 上。", []),
        ("about 1.7x faster, 60 us per batch, 75 %", ["1.7", "60", "75"]),
    ],
)
def test_what_counts_as_a_narrated_number(text, numbers):
    assert narrated_numbers(text) == numbers
