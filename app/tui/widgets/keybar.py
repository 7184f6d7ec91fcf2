"""The key bar: the main keys with a word each in the UI's language, greyed out when the action is
impossible now (Textual's ``check_action`` decides; this bar only reads the screen's active bindings)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text

from app.present.messages import t as msg
from app.present.text import cells

from .pane import View

# (keys shown, message key of its word, the actions it stands for), most important first; a word can say what
# the key does now (WHILE_PLAYING: space stops the play; "{kind}": the kind shift+arrows jump between)
ENTRIES = (
    ("←→", "short.step", ("step(-1)", "step(1)")),
    ("space", "short.play", ("play",)),
    ("n/p", "short.lesson", ("lesson(1)", "lesson(-1)")),
    ("o", "short.pick_lesson", ("pick_lesson",)),
    ("g", "short.check", ("check",)),
    ("l", "key.language", ("language",)),
    ("?", "short.help", ("help",)),
    ("q", "short.quit", ("quit",)),
    ("⇧←→", "short.kind_of", ("kind(-1)", "kind(1)")),
    ("c", "cpp.short", ("cpp",)),
    ("b", "short.breakpoint", ("breakpoint",)),
    ("+-", "short.speed", ("speed(1)", "speed(-1)")),
    ("tab", "short.pane", ("app.focus_next",)),
)
WHILE_PLAYING = {"short.play": "short.stop"}


class KeyBar(View):
    """Model: ``lang``, ``enabled`` (action -> enabled, from the screen's active bindings), ``playing`` and
    ``kind`` (the selected event kind). Entries go left to right, two spaces apart, while they fit (the first
    eight, up to q, at 80 columns)."""

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
            now_key = WHILE_PLAYING.get(word_key, word_key) if model.get("playing") else word_key
            word = msg(now_key, lang, kind=model.get("kind") or "-")
            gap = "  " if used else ""
            if used + cells(f"{gap}{keys} {word}") > width:
                break
            on = any(enabled[a] for a in known)
            out.append(f"{gap}{keys}", self.style("keybar--key" if on else "keybar--disabled"))
            out.append(f" {word}", self.style("keybar--word" if on else "keybar--disabled"))
            used += cells(f"{gap}{keys} {word}")
        return out
