"""The key bar: the main keys with a word each in the UI's language, greyed out when the action is
impossible now (Textual's ``check_action`` decides; this bar only reads the screen's active bindings)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text

from app.present.messages import t as msg
from app.present.text import cells

from .pane import View

# (keys shown, message key of its word, the actions it stands for), most important first
ENTRIES = (
    ("←→", "short.step", ("step(-1)", "step(1)")),
    ("space", "short.play", ("play",)),
    ("n/p", "short.lesson", ("lesson(1)", "lesson(-1)")),
    ("g", "short.check", ("check",)),
    ("l", "key.language", ("language",)),
    ("?", "short.help", ("help",)),
    ("q", "short.quit", ("quit",)),
    ("⇧←→", "short.kind", ("kind(-1)", "kind(1)")),
    ("b", "short.break", ("breakpoint",)),
    ("+-", "short.speed", ("speed(1)", "speed(-1)")),
    ("tab", "short.pane", ("app.focus_next",)),
)


class KeyBar(View):
    """Model: ``lang`` and ``enabled`` (action -> enabled, from the screen's active bindings)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"keybar--key", "keybar--word", "keybar--disabled"}

    def draw(self, model: dict, width: int) -> Text:
        lang = model["lang"]
        enabled = model["enabled"]
        out = Text()
        used = 0
        for keys, word_key, actions in ENTRIES:
            known = [a for a in actions if a in enabled]
            if not known:
                continue
            word = msg(word_key, lang)
            piece = f" {keys} {word} "
            if used + cells(piece) > width:
                break
            on = any(enabled[a] for a in known)
            out.append(f" {keys}", self.style("keybar--key" if on else "keybar--disabled"))
            out.append(f" {word} ", self.style("keybar--word" if on else "keybar--disabled"))
            used += cells(piece)
        return out
