"""A hardware profile as a learner reads it: every number with its source, or the assumption behind it.

:func:`profile_document` gathers the values (:func:`engine.profiles.profile.load_profile`), the comment of
each key (:func:`engine.profiles.sources.profile_sources`) and the legend of the sources cited;
:func:`render_profile` turns it into text for ``ascendsim profiles show NAME``.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from engine.profiles.profile import PROFILE_DIR, load_profile
from engine.profiles.sources import profile_sources, source_legend

DERIVED = {
    "peak_fp16_tflops": "derived: Cube cores x cube_m x cube_n x cube_k x 2 x clock",
    "vector_peak_fp16_tflops": "derived: vector cores x vector_repeat_bytes / 2 fp16 lanes x clock",
    "op_matmul_peak_tflops": "derived: op_matmul.peak_tflops when the op-level times come from another device, "
    "else the Cube peak",
    "ps_per_cycle": "derived: 1e6 / clock_mhz",
    "vector_cores": "derived: AIV cores (split chips) or all cores (coupled chips)",
}


DEFAULTS = {
    "op_matmul.peak_tflops": "not set: the op-level matmul runs on this chip's Cube cores, at their peak",
    "op_matmul.hbm_gbps": "not set: the op-level matmul reads and writes this chip's HBM (chip.hbm_gbps)",
}


def _plain(value):
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def profile_document(name: str) -> dict:
    """The profile's values by section (as ``Profile.describe``), plus ``sources`` (section -> key ->
    ``{kind, source, file}``, kind being "source", "assumption", "unsourced", "default" or "derived") and the
    ``legend`` of the sources cited."""
    profile = load_profile(name)
    sources = profile_sources(name)
    legend = source_legend()
    path = Path(profile.source_file)
    doc: dict = {
        "name": profile.name,
        "title": profile.chip.title,
        "file": path.name,
        "shipped": path.resolve().parent == PROFILE_DIR.resolve(),
    }
    provenance: dict[str, dict] = {}
    cited: set[str] = set()
    for section in ("chip", "buffers", "paths", "compute", "scalar", "host", "limits", "op_matmul"):
        part = getattr(profile, section)
        values, origin = {}, {}
        for f in fields(part):
            values[f.name] = _plain(getattr(part, f.name))
            src = sources.get(f"{section}.{f.name}")
            if src is None:
                text = DEFAULTS.get(f"{section}.{f.name}", "not set in the profile: the default applies")
                origin[f.name] = {"kind": "default", "source": text}
                continue
            origin[f.name] = {"kind": src.kind, "source": src.text, "file": src.file}
            cited.update(src.tags(legend))
            if src.kind == "assumption":
                cited.add("ASSUMPTION")
        doc[section] = values
        provenance[section] = origin
    doc["derived"] = profile.describe()["derived"]
    provenance["derived"] = {k: {"kind": "derived", "source": DERIVED.get(k, "derived")} for k in doc["derived"]}
    doc["sources"] = provenance
    doc["legend"] = {tag: legend[tag] for tag in legend if tag in cited}
    return doc


def render_profile(doc: dict) -> str:
    shipped = ", shipped with AscendSim" if doc["shipped"] else ""
    lines = [f"{doc['name']}: {doc['title']}   (profile file {doc['file']}{shipped})"]
    for section, origin in doc["sources"].items():
        lines.append(f"[{section}]")
        for key, row in origin.items():
            if key in ("name", "title"):
                continue
            lines.append(f"  {key} = {doc[section][key]}")
            label = "" if row["kind"] == "derived" else row["kind"]  # derived lines say so themselves
            text = row["source"]
            if row["kind"] == "assumption":
                text = text.removeprefix("ASSUMPTION: ")
            origin_file = f" ({row['file']})" if row.get("file") and row["file"] != doc["file"] else ""
            lines.append(f"      {label + origin_file + ': ' if label else ''}{text}")
    lines.append("Sources cited:")
    for tag, info in doc["legend"].items():
        lines.append(f"  {tag}: {info['title']} ({info['where']})")
    return "\n".join(lines)
