"""The core grid: every AI core of the chip as a glyph of its activity (and its block when there is
room), the selected core marked, the host, link and streams above it (from ``system_view``)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text

from app.present.text import cells, fit
from app.present.vocabulary import Activity

from .pane import View


class CoresView(View):
    """Model: ``system`` (a :func:`app.present.views.system_view` dict), ``core`` (the selected
    core's name), ``legend`` (:class:`Activity` -> label in the UI's language) and ``streams`` (label text)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {a.style for a in Activity} | {"cores--selected", "cores--dim"}

    def draw(self, model: dict, width: int) -> Text:
        system = model["system"]
        out = Text()
        dim = self.style("cores--dim")
        for e in system["link"]["engines"]:
            if e["busy"]:
                out.append(fit(f"{e['label']} {100 * e['progress']:.0f}% {e['task'] or ''}", width) + "\n", dim)
        for s in system["streams"]:
            if s["running"] or s["pending"]:
                text = f"{s['label']}: {s['running'] or '-'} +{s['pending']}"
                out.append(fit(text, width) + "\n", dim)
        cores = system["device"]["cores"]
        by_type: dict[str, list[dict]] = {}
        for c in cores:
            by_type.setdefault(c["kind"], []).append(c)
        wide = max((len(str(c["block"])) for c in cores if c["block"] is not None), default=1)
        for kind, group in by_type.items():
            cell = wide + 2 if 4 + len(group) * (wide + 2) <= 2 * width else 1
            per_line = max(1, (width - 4) // cell)
            for start in range(0, len(group), per_line):
                out.append(f"{kind if start == 0 else '':<4}", dim)
                for c in group[start : start + per_line]:
                    what = Activity(c["activity"])
                    block = "" if c["block"] is None else c["block"]
                    text = what.glyph if cell == 1 else f"{what.glyph}{block:<{wide}} "
                    style = self.style(what.style)
                    if c["name"] == model["core"]:
                        style = style + self.style("cores--selected")
                    out.append(text, style)
                out.append("\n")
        line = ""
        for a, label in model["legend"].items():
            entry = f"{Activity(a).glyph} {label}"
            if line and cells(line) + 2 + cells(entry) > width:
                out.append(line + "\n", dim)
                line = ""
            line = f"{line}  {entry}" if line else entry
        out.append(line, dim)
        return out
