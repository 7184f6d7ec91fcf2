"""A pane: a focusable, scrollable frame with a title around one view, and the base class of views.

A :class:`View` holds a view-model in its reactive ``model`` attribute and draws it with
:meth:`View.draw` — a function of the model and the width only — so it redraws whenever the model or
its size changes and never looks anywhere else.
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget


class Pane(VerticalScroll, can_focus=True):
    """A titled frame the user tabs to; arrow keys scroll it (the app's step keys take priority)."""

    def __init__(self, view: Widget, *, id: str) -> None:
        super().__init__(view, id=id)
        self.view = view


class View(Widget):
    """A view-model in, a renderable out. Subclasses implement :meth:`draw`."""

    DEFAULT_CSS = "View { height: auto; }"
    model: reactive[dict | None] = reactive(None)
    WRAP = False  # True: prose, wrapped to the width; False: one line per row, cut at the width

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._drawn: tuple[tuple, Text] | None = None

    def draw(self, model: dict, width: int) -> Text:
        raise NotImplementedError

    def text(self, width: int) -> Text:
        """The drawing at ``width``, computed once per (model, width)."""
        key = (id(self.model), width)
        if self._drawn is None or self._drawn[0] != key:
            text = Text("") if self.model is None or width <= 0 else self.draw(self.model, width)
            if not self.WRAP:
                text.no_wrap, text.overflow = True, "crop"
            self._drawn = (key, text)
        return self._drawn[1]

    def render(self) -> Text:
        return self.text(self.content_size.width)

    def get_content_height(self, container, viewport, width: int) -> int:
        if self.WRAP:
            return super().get_content_height(container, viewport, width)
        return len(self.text(width).plain.split("\n")) if self.model is not None else 1

    def watch_model(self) -> None:
        """Redraw; lay the screen out again only when the number of lines changed (a step seldom
        changes it, and a layout pass costs more than drawing every pane)."""
        before = self._drawn[1].plain.count("\n") if self._drawn is not None else -1
        self._drawn = None
        width = self.content_size.width
        if self.WRAP or before != self.text(width).plain.count("\n"):
            self.refresh(layout=True)

    def style(self, name: str):
        """A rich Style from the tcss (component class ``name``)."""
        return self.get_component_rich_style(name, partial=True)
