"""The screens over the player: the key help (``?``), the result of a check (``g``), the lesson picker
(``o``), and the progress shown while a run is prepared in a worker."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

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

    def restart(self) -> None:
        """Shown again, empty, for the next run to prepare (after a run was ready or failed)."""
        self.remove_class("-failed")
        self.query_one(ProgressBar).display = True
        self.show("", 0)
        self.display = True

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


class LessonPicker(ModalScreen[int | None]):
    """Every lesson, its number and title in the UI's language, the open one marked and highlighted first.
    Enter dismisses with the chosen lesson's number, Escape with None; a digit moves to that lesson (0: 10)."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape,o,q", "dismiss", show=False),
        *(Binding(str(d), f"jump({d or 10})", show=False) for d in range(10)),
    ]

    def __init__(self, rows: list[tuple[int, str]], current: int | None, lang: str) -> None:
        """``rows``: (number, heading) of every lesson; ``current``: the open lesson's number (None: a scenario)."""
        super().__init__()
        self.rows, self.current, self.lang = rows, current, lang
        self.numbers = [number for number, _heading in rows]

    def compose(self) -> ComposeResult:
        options = []
        for number, heading in self.rows:
            now = number == self.current
            prompt = Text("● " if now else "  ", "bold")
            prompt.append(heading, "bold" if now else "")
            if now:
                prompt.append(f"  ({msg('tui.picker_current', self.lang)})", "italic")
            options.append(Option(prompt, id=f"lesson-{number}"))
        with Vertical(id="picker-body") as body:
            body.border_title = msg("tui.picker_title", self.lang)
            body.border_subtitle = msg("tui.picker_hint", self.lang)
            yield OptionList(*options, id="picker-list")

    def on_mount(self) -> None:
        chooser = self.query_one(OptionList)
        chooser.highlighted = self.numbers.index(self.current) if self.current in self.numbers else 0
        chooser.focus()

    def action_jump(self, number: int) -> None:
        if number in self.numbers:
            self.query_one(OptionList).highlighted = self.numbers.index(number)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.numbers[event.option_index])
