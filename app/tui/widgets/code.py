"""The code pane: the source file of the current event, its line highlighted (from ``code_view``), or, toggled
with ``c``, the C++ (Ascend C) of that line and its neighbours (from ``cpp_view``) with what CANN does
differently."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text

from app.present.text import fit, wrap

from .pane import View


class CodeView(View):
    """Model: a :func:`app.present.views.code_view` dict (lines around the current one) plus
    ``breakpoints``: the line numbers of that file that carry a breakpoint."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"code--gutter", "code--current", "code--breakpoint", "code--note"}

    def draw(self, model: dict, width: int) -> Text:
        if model.get("kind") == "cpp":
            return self.draw_cpp(model, width)
        out = Text()
        if not model["lines"]:
            return out.append(model.get("note", ""), self.style("code--note"))
        out.append(fit(f"{model['file']}:{model['line']}", width) + "\n", self.style("code--note"))
        first, line = model["first_line"], model["line"]
        digits = len(str(first + len(model["lines"])))
        marks = set(model.get("breakpoints", ()))
        for i, text in enumerate(model["lines"]):
            n = first + i
            mark = "●" if n in marks else " "
            gutter = f"{mark}{n:>{digits}} "
            body = fit(text.replace("\t", "    "), max(0, width - len(gutter)))
            if n == line:
                out.append(gutter + body, self.style("code--current"))
            else:
                out.append(mark, self.style("code--breakpoint"))
                out.append(gutter[1:], self.style("code--gutter"))
                out.append(body)
            if i < len(model["lines"]) - 1:
                out.append("\n")
        return out

    def draw_cpp(self, model: dict, width: int) -> Text:
        """The C++ lines, the ones that render the current Python line highlighted, each run of lines of one
        Python statement numbered with that statement's line; then the notes."""
        out = Text()
        out.append(fit(model.get("label") or model.get("file") or "", width) + "\n", self.style("code--note"))
        if not model["lines"]:
            return out.append(model.get("note", ""), self.style("code--note"))
        digits = max((len(str(p)) for p in model["py"] if p is not None), default=1)
        current = set(model["current"])
        for i, (text, py) in enumerate(zip(model["lines"], model["py"], strict=True)):
            gutter = f" {'' if py is None else py:>{digits}} "
            body = fit(text, max(0, width - len(gutter)))
            if i in current:
                out.append(gutter + body, self.style("code--current"))
            else:
                out.append(gutter, self.style("code--gutter"))
                out.append(body)
            out.append("\n")
        if model.get("note"):
            out.append(fit(model["note"], width) + "\n", self.style("code--note"))
        for note in model["notes"]:
            for k, part in enumerate(wrap(note, max(10, width - 2))):
                out.append(("• " if k == 0 else "  ") + part + "\n", self.style("code--note"))
        return out.rstrip() or out
