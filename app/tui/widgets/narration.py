"""The narration pane: the lesson's text for the current lesson step, and what the host is doing now."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text

from .pane import View


class NarrationView(View):
    """Model: ``text``, ``diagnosis`` (what the step's symptom means, or a note that it is hidden: lesson 10),
    ``problem`` (a step that is not in the run) and ``host`` (what the host is doing; the current event itself is
    on the status line, in sight at any size)."""

    WRAP = True
    COMPONENT_CLASSES: ClassVar[set[str]] = {"narration--problem", "narration--now"}

    def draw(self, model: dict, width: int) -> Text:
        out = Text(model.get("text", ""))
        if model.get("diagnosis"):
            out.append("\n\n" + model["diagnosis"])
        if model.get("problem"):
            out.append("\n" + model["problem"], self.style("narration--problem"))
        out.append(f"\n▶ {model['host']}", self.style("narration--now"))
        return out
