"""The metrics pane: headline numbers, utilisation per pipe as bars, the run's phases, findings and
recommendations (from ``metrics_view`` and ``phases_view``)."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text

from app.present.text import fit, hbar, readable

from .pane import View


class MetricsView(View):
    """Model: ``metrics`` (a :func:`app.present.views.metrics_view` dict), ``phases`` (a
    :func:`app.present.phases.phases_view` dict) and ``utilisation`` (its heading)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "metrics--heading",
        "metrics--bar",
        "metrics--dim",
        "metrics--finding",
        "metrics--now",
    }

    def draw(self, model: dict, width: int) -> Text:
        m, phases = model["metrics"], model["phases"]
        head, dim = self.style("metrics--heading"), self.style("metrics--dim")
        out = Text()
        for h in m["headline"]:
            value = readable(h["value"])
            label = h["label"] if cell_len(h["label"]) + len(value) < width else h["short"]  # narrow: the short name
            out.append(fit(label, max(1, width - len(value) - 1)) + " " + value + "\n")
        out.append(fit(phases["title"], width) + "\n", head)
        for p in phases["phases"]:
            mark = "▸" if p["phase"] == phases["current"] else " "
            text = f"{mark}{p['label']}"
            value = f"{p['us']:,.1f} us {100 * p['share']:.0f}%"
            style = self.style("metrics--now") if mark == "▸" else None
            out.append(fit(text, max(1, width - len(value) - 1)) + " " + value + "\n", style)
        ratios = {k: v for k, v in m["pipe_ratios"].items() if v > 0}
        if ratios:
            out.append(fit(model["utilisation"], width) + "\n", head)
            name_w = max(len(k) for k in ratios) - len("_ratio")
            bar_w = max(3, width - name_w - 6)
            for name, ratio in ratios.items():
                out.append(f"{name.removesuffix('_ratio'):<{name_w}} ", dim)
                out.append(hbar(ratio, bar_w), self.style("metrics--bar"))
                out.append(f"{100 * ratio:>4.0f}%\n", dim)
        out.append(fit(f"{m['findings_title']} ({len(m['findings'])})", width), head)
        if not m["findings"]:
            out.append("\n" + fit(m["no_findings"], width), dim)
        for f in m["findings"]:
            first = f["message"].splitlines()[0] if f["message"] else ""
            out.append("\n" + fit(f"{f['label']}: {first}", width), self.style("metrics--finding"))
        if m["recommendations"]:
            out.append("\n" + fit(m["recommendations_title"], width), head)
            for r in m["recommendations"]:
                out.append("\n" + fit(f"- {r['title']}", width))
        return out
