"""The screens over the player: the key help (``?``), the result of a check (``g``), and the progress
shown while a run is prepared in a worker."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, ProgressBar, Static

from app.present.messages import t as msg
from app.present.text import fit


class Preparing(Vertical):
    """What the worker is doing: the phase in words and a bar over the phases (hidden when done)."""

    def __init__(self, total: int) -> None:
        super().__init__(id="preparing")
        self.total = total

    def compose(self) -> ComposeResult:
        yield Label("", id="preparing-label")
        yield ProgressBar(total=self.total, show_eta=False, id="preparing-bar")

    def show(self, text: str, done: int) -> None:
        self.query_one("#preparing-label", Label).update(text)
        self.query_one(ProgressBar).update(progress=done)

    def fail(self, text: str) -> None:
        self.add_class("-failed")
        self.query_one(ProgressBar).display = False
        self.query_one("#preparing-label", Label).update(text)


class HelpScreen(ModalScreen):
    """Every key, what it does in the UI's language, greyed out when it cannot act now."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("escape,question_mark,q", "dismiss", show=False)]

    def __init__(self, rows: list[tuple[str, str, bool]], lang: str) -> None:
        super().__init__()
        self.rows, self.lang = rows, lang

    def compose(self) -> ComposeResult:
        text = Text()
        width = max(len(k) for k, _d, _e in self.rows) + 2
        for keys, description, enabled in self.rows:
            text.append(fit(keys, width), "bold" if enabled else "dim")
            text.append(description + "\n", "" if enabled else "dim")
        text.append("\n" + msg("close", self.lang), "italic")
        with VerticalScroll(id="help-body") as body:
            body.border_title = msg("help_title", self.lang)
            yield Static(text, id="help-text")


class CheckScreen(ModalScreen):
    """The grader's report on the trainee's exercise (pass / fail per criterion, yours vs expected,
    hints, the cost table), as ``ascendsim lesson check`` prints it."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("escape,q,g", "dismiss", show=False)]

    def __init__(self, title: str, report: str, passed: bool, lang: str) -> None:
        super().__init__()
        self.title_text, self.report, self.passed, self.lang = title, report, passed, lang

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="check-body", classes="-passed" if self.passed else "-failed") as body:
            body.border_title = self.title_text
            body.border_subtitle = msg("close", self.lang)
            yield Static(Text(self.report), id="check-text")
