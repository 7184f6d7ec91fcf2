"""The status line: where the replay stands (event step) and the play state, the current event (always there,
cut to the room left), flags (breakpoints, a check running), the speed and the selected kind when there is room,
and the last message (a breakpoint set, a core selected...)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text

from app.present.text import cells, fit

from .pane import View

SEP = " │ "
MIN_NOW = 24  # cells the current event keeps whatever else wants the line (its start: the event's name)
MIN_MESSAGE = 6


class StatusBar(View):
    """Model: ``parts`` (always shown, left to right: the step, the play state), ``now`` (the current event),
    ``flags`` and ``extra`` (texts shown after it while they fit, flags first) and ``message`` (shown last, in
    its own style). Who gives way on a narrow line: the extras first, then the event's end, the flags, the
    message; the parts and the event's first :data:`MIN_NOW` cells never do."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"status--part", "status--now", "status--message"}

    def draw(self, model: dict, width: int) -> Text:
        head = SEP.join(model["parts"])
        now = SEP + model["now"] if model.get("now") else ""
        message = SEP + model["message"] if model.get("message") else ""
        room = width - cells(head)
        now_w = min(cells(now), MIN_NOW, max(0, room))
        room -= now_w
        message_w = min(cells(message), room) if room >= MIN_MESSAGE else 0
        room -= message_w
        shown = []
        for part in model.get("flags", ()):
            if cells(SEP + part) > room:
                break
            shown.append(part)
            room -= cells(SEP + part)
        more = min(cells(now) - now_w, room)  # the rest of the event before the extras
        now_w, room = now_w + more, room - more
        for part in model.get("extra", ()):
            if cells(SEP + part) > room:
                break
            shown.append(part)
            room -= cells(SEP + part)
        out = Text(fit(head, min(width, cells(head))), self.style("status--part"))
        if now_w:
            out.append(fit(now, now_w), self.style("status--now"))
        if shown:
            out.append("".join(SEP + part for part in shown), self.style("status--part"))
        if message_w:
            out.append(fit(message, message_w), self.style("status--message"))
        return out
