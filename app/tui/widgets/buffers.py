"""The buffers pane: the selected core's L1 / L0A / L0B / L0C / UB with occupancy bars and every
ping/pong slot (from ``core_view``), and on request one slot's real numbers (from ``tile_view``)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text

from app.present.text import fit, fractal_rows, hbar, value_rows
from app.present.vocabulary import SlotStatus

from .pane import View


def _kib(n: int) -> str:
    return f"{n / 1024:.0f}" if n >= 1024 else f"{n / 1024:.2f}"


class BuffersView(View):
    """Model: ``core`` (a :func:`app.present.views.core_view` dict), ``header`` (core, block, activity),
    ``running`` (label), ``selected`` ([buffer, queue, slot] or None), ``tile`` (a
    :func:`app.present.views.tile_view` dict or None), ``tile_title`` and ``shape`` (texts)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "buffers--header",
        "buffers--bar",
        "buffers--selected",
        "buffers--dim",
        "buffers--values",
        "buffers--fractals",
        *(status.style for status in SlotStatus),
    }

    def draw(self, model: dict, width: int) -> Text:
        core = model["core"]
        dim = self.style("buffers--dim")
        out = Text(fit(model["header"], width), self.style("buffers--header"))
        if model.get("running"):
            out.append("\n" + fit(model["running"], width), dim)
        if not core["buffers"]:
            out.append("\n" + fit(model["empty"], width), dim)
        tile = model.get("tile")
        if tile is not None:
            out.append("\n" + fit(model["tile_title"], width), self.style("buffers--header"))
            if tile.get("values") is None:
                out.append("\n" + fit(tile.get("note", ""), width), dim)
            else:
                fractals = tile.get("fractals")
                if fractals:  # how the slot keeps the tile: its fractals, where each sits and in what order
                    out.append("\n" + fit(fractals["format_label"], width), self.style("buffers--header"))
                    out.append("\n" + fit(fractals["title"], width), dim)
                    for line in fractal_rows(fractals, width):
                        out.append("\n" + fit(line, width), self.style("buffers--fractals"))
                    if fractals["more"]:
                        out.append("\n" + fit(fractals["more"], width), dim)
                    out.append("\n" + fit(fractals["where"], width), dim)
                    out.append("\n" + fit(fractals["legend"], width), dim)
                out.append("\n" + fit(model["shape"], width), dim)
                for line in value_rows(tile["values"], width):
                    out.append("\n" + line, self.style("buffers--values"))
        bar_w = max(4, min(20, width - 22))
        for b in core["buffers"]:
            out.append(f"\n{b['name']:<4}", self.style("buffers--header"))
            out.append(hbar(b["fill"], bar_w), self.style("buffers--bar"))
            out.append(f" {100 * b['fill']:>3.0f}% {_kib(b['used'])}/{_kib(b['capacity'])} KiB", dim)
            for s in b["slots"]:
                chosen = model.get("selected") == [b["name"], s["queue"], s["slot"]]
                status = SlotStatus(s["state"])
                slot = "·" if s["slot"] < 0 else s["slot"]
                text = f"{'▸' if chosen else ' '}{status.glyph} q{s['queue']} {s['position']} {slot} {s['state_label']}"
                if s["tile"]:
                    text += f"  {s['tile']}"
                if s.get("format"):
                    text += f" {s['format']}"
                style = self.style(status.style)
                if chosen:
                    style = style + self.style("buffers--selected")
                out.append("\n" + fit(text, width), style)
        return out
