"""The timeline pane: one line of block characters per lane (from ``timeline_view``), a cursor column
at the current event, the current event's lane marked."""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.geometry import Region

from app.present.text import cells, column_of, fit, lane_cells, lane_label

from .pane import View

KINDS = (
    "CALL", "WAIT", "COPY", "KERNEL", "MARK", "MOVE", "COMPUTE", "FLAG_SET", "FLAG_WAIT", "BARRIER", "BLOCK",
    "ERROR", "HOST_WORK", "BUFFER", "BUSY",
)  # fmt: skip
MAX_LABEL = 16


def kind_class(kind: str) -> str:
    return "kind--" + kind.lower().replace("_", "-")


class TimelineView(View):
    """Model: ``view`` (a :func:`app.present.views.timeline_view` dict drawn at this width) and
    ``lane`` (the id of the current event's lane). The cursor is the reversed column."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {kind_class(k) for k in KINDS} | {
        "timeline--label",
        "timeline--current",
        "timeline--future",
        "timeline--cursor",
    }

    def label_width(self, model: dict, width: int) -> int:
        labels = [cells(lane_label(lane)) + 1 for lane in model["view"]["lanes"]] or [4]
        return max(4, min(MAX_LABEL, max(labels), width // 4))

    def strip_width(self, model: dict, width: int) -> int:
        return max(1, width - self.label_width(model, width) - 1)

    def draw(self, model: dict, width: int) -> Text:
        view = model["view"]
        lw = self.label_width(model, width)
        sw = self.strip_width(model, width)
        t0, t1, cursor = view["t0_us"], view["t1_us"], view["cursor_us"]
        col = column_of(cursor, t0, t1, sw)
        out = Text()
        styles: dict[tuple[str, bool, bool], Style] = {}

        def style_of(kind: str, done: bool, at_cursor: bool) -> Style:
            key = (kind, done, at_cursor)
            if key not in styles:
                style = self.style(kind_class(kind)) if kind in KINDS else Style()
                if kind and not done:
                    style = style + self.style("timeline--future")
                if at_cursor:
                    style = style + self.style("timeline--cursor")
                styles[key] = style
            return styles[key]

        self.current_line = 0
        for i, lane in enumerate(view["lanes"]):
            current = lane["id"] == model.get("lane")
            if current:
                self.current_line = i
            label_style = self.style("timeline--current" if current else "timeline--label")
            if i:
                out.append("\n")
            out.append(fit(("▸" if current else " ") + lane_label(lane), lw) + " ", label_style)
            run, run_key = [], None  # consecutive columns of one style go out as one segment
            for c, cell in enumerate(lane_cells(lane, t0, t1, sw, cursor)):
                key = (cell.kind, cell.done, c == col)
                if key != run_key and run:
                    out.append("".join(run), style_of(*run_key))
                    run = []
                run_key = key
                run.append("│" if c == col and cell.char == " " else cell.char)
            if run:
                out.append("".join(run), style_of(*run_key))
        return out

    def watch_model(self) -> None:
        super().watch_model()
        self.call_after_refresh(self._follow)

    def _follow(self) -> None:
        """Keep the current event's lane in sight."""
        line = getattr(self, "current_line", 0)
        if self.parent is not None:
            self.parent.scroll_to_region(Region(0, line, 1, 1), animate=False, immediate=True)
