"""The status line: where the replay stands (lesson step, event step), play state, speed, the
selected kind, breakpoints, and the last message (a breakpoint set, a check running...)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text

from app.present.text import cells, fit

from .pane import View


class StatusBar(View):
    """Model: ``parts`` (texts shown left to right, most important first) and ``message`` (shown last,
    in its own style). When the line is too narrow, parts after the first two give way to the message."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"status--part", "status--message", "status--sep"}

    def draw(self, model: dict, width: int) -> Text:
        out = Text()
        used = 0
        parts = list(model["parts"])
        message = model.get("message") or ""
        while message and len(parts) > 2 and sum(cells(p) + 3 for p in parts) + cells(message) + 3 > width:
            parts.pop()
        for i, part in enumerate(parts):
            piece = (" │ " if i else " ") + part
            if used + cells(piece) > width:
                break
            out.append(piece, self.style("status--part"))
            used += cells(piece)
        if message and width - used > 4:
            out.append(fit(" │ " + message, width - used), self.style("status--message"))
        return out
