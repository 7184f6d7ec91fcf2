"""Every number of every profile names its source (a tag from sources.toml) or is an ASSUMPTION with reasoning,
the product cites nothing outside itself, and ``profiles show`` prints each number with its source."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.cli import main
from engine.profiles.profile import PROFILE_DIR, list_profiles, load_profile
from engine.profiles.sources import profile_sources, source_legend

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("chip", "buffers", "paths", "compute", "scalar", "host", "limits", "op_matmul")


def numbers(name):
    doc = load_profile(name).describe()
    for section in SECTIONS:
        for key, value in doc[section].items():
            if isinstance(value, int | float) or (isinstance(value, tuple | list) and value):
                yield f"{section}.{key}", value


@pytest.mark.parametrize("name", list_profiles())
def test_every_number_has_a_source_or_a_reasoned_assumption(name):
    sources = profile_sources(name)
    legend = source_legend()
    file_keys = set(sources)
    for key, _value in numbers(name):
        if key not in file_keys:  # an optional key left at its default (op_matmul.peak_tflops, hbm_gbps)
            section, field = key.split(".")
            assert section == "op_matmul" and field in ("peak_tflops", "hbm_gbps"), key
            continue
        src = sources[key]
        assert src.kind != "unsourced", f"{name} {key} has no source comment"
        if src.kind == "assumption":
            reasoning = src.text.split("ASSUMPTION", 1)[1].strip(" :")
            assert len(reasoning.split()) >= 4, f"{name} {key}: an assumption needs its reasoning: {src.text!r}"
        else:
            assert src.tags(legend), f"{name} {key}: the comment names no source from sources.toml: {src.text!r}"
            assert all(tag in legend for tag in src.tags(legend))


def test_nothing_in_the_product_points_outside_it():
    shipped = [*ROOT.joinpath("engine").rglob("*"), *ROOT.joinpath("app").rglob("*"), ROOT / "README.md"]
    for path in shipped:
        if path.is_file() and path.suffix in (".py", ".toml", ".json", ".md"):
            assert "reference/" not in path.read_text(encoding="utf-8"), f"{path} cites a file outside the product"


def test_docs_describe_every_source():
    text = (ROOT / "docs" / "sources.md").read_text()
    for tag in source_legend():
        assert f"| {tag} |" in text, tag


def test_sources_file_is_not_a_profile():
    assert "sources" not in list_profiles() and (PROFILE_DIR / "sources.toml").is_file()


def test_profiles_show_prints_every_number_with_its_source(capsys):
    assert main(["profiles", "show", "ascend910b1"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    for key, _value in numbers("ascend910b1"):
        field = key.split(".")[1]
        i = next(i for i, line in enumerate(lines) if line.startswith(f"  {field} = "))
        assert re.match(r"^\s+(source|assumption|default)(\s\(\S+\))?: \S", lines[i + 1]), (key, lines[i + 1])
    assert "assumption: a vector copy moves one 256-B repeat per cycle" in text
    assert "source: INI [SoCInfo] cube core count" in text
    assert "Sources cited:" in text and "MSOP: " in text


def test_profiles_show_json_and_inherited_sources(capsys):
    assert main(["profiles", "show", "measured-accelerator", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["chip"]["aic_cores"] == 24 and doc["derived"]["op_matmul_peak_tflops"] == 989.5
    assert doc["sources"]["chip"]["aic_cores"]["file"] == "ascend910b1.toml"  # inherited through based_on
    assert doc["sources"]["op_matmul"]["peak_tflops"]["source"].startswith("NVIDIA H200")
    assert doc["sources"]["host"]["launch_call_us"]["source"].startswith("JSON kernel_launch_async_us")
    assert set(doc["legend"]) >= {"INI", "JSON", "NVIDIA", "ASSUMPTION"}
