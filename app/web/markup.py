"""HTML text of the panels a player swaps in at every step, and of Dash ``html`` components.

The panels a player swaps in at every step (host and streams, the core opened up, the code) are built by
:mod:`.panels` from the elements of :class:`h` (the same calls as ``dash.html``'s components, without a Dash
component's validation and bookkeeping: a window's panels are thousands of them, and making them as Dash
components took half of rendering a window) and sent to the browser as HTML text, which the browser puts in
place itself: a page whose every slot and code line were Dash components would make each step cost time in
proportion to the whole layout (Dash re-evaluates every component on each update). :func:`to_html` also
writes Dash ``html`` components with plain props. Text is escaped.
"""

from __future__ import annotations

from html import escape

from dash.development.base_component import Component

_VOID = frozenset(("br", "hr", "img", "input", "meta", "link", "col", "wbr"))
_ATTRS = {"className": "class", "htmlFor": "for", "tabIndex": "tabindex", "colSpan": "colspan", "rowSpan": "rowspan"}


def _style(style: dict) -> str:
    out = []
    for key, value in style.items():
        name = "".join(f"-{c.lower()}" if c.isupper() else c for c in key)
        out.append(f"{name}: {value}")
    return "; ".join(out)


class Element:
    """An HTML element made by :class:`h`: its tag, its children and its props (as ``dash.html`` names them)."""

    __slots__ = ("children", "props", "tag")

    def __init__(self, tag: str, children, props: dict) -> None:
        self.tag, self.children, self.props = tag, children, props

    def html(self) -> str:
        props = self.props
        attrs = []
        for prop in _ORDER:  # the order Dash's components list these props in (to_html writes theirs so)
            value = props.get(prop)
            if value is not None:
                attrs.append(f' {_ATTRS.get(prop, prop)}="{escape(_style(value) if prop == "style" else str(value))}"')
        for key, value in props.items():
            if key.startswith(("data-", "aria-")) and value is not None:
                attrs.append(f' {key}="{escape(str(value))}"')
            elif key not in _ORDER:
                raise TypeError(f"{self.tag}: no prop {key!r} here")
        head = f"<{self.tag}{''.join(attrs)}>"
        return head if self.tag in _VOID else f"{head}{to_html(self.children)}</{self.tag}>"


_ORDER = ("id", "className", "style", "title")


def _element(tag: str):
    def make(children=None, **props) -> Element:
        return Element(tag, children, props)

    make.__name__ = make.__qualname__ = tag.capitalize()
    return make


class h:
    """The elements :mod:`.panels` writes as HTML: ``h.Div(children, className=..., style=..., title=...,
    **{"data-x": ...})`` as with ``dash.html``."""

    Div, Span, B, H4, Pre, Button = map(_element, ("div", "span", "b", "h4", "pre", "button"))
    I = _element("i")  # noqa: E741 - the <i> element, as dash.html.I
    Table, Caption, Tbody, Tr, Td, Ul, Li = map(_element, ("table", "caption", "tbody", "tr", "td", "ul", "li"))


def to_html(node) -> str:
    """``node`` (an :class:`Element`, a Dash ``html`` component, a string, a number, None or a list of them) as
    HTML text."""
    if node is None:
        return ""
    if isinstance(node, Element):
        return node.html()
    if isinstance(node, (list, tuple)):
        return "".join(to_html(n) for n in node)
    if isinstance(node, bool):
        return ""
    if isinstance(node, (str, int, float)):
        return escape(str(node), quote=False)
    if not isinstance(node, Component) or node._namespace != "dash_html_components":
        raise TypeError(f"only dash html components can be written as HTML, got {type(node).__name__}")
    tag = node._type.lower()
    attrs = []
    for prop in node._prop_names:
        if prop == "children":
            continue
        value = getattr(node, prop, None)
        if value is None:
            continue
        if prop == "style":
            value = _style(value)
        elif not isinstance(value, (str, int, float)):
            raise TypeError(f"{node._type}.{prop}: only plain values can be written as HTML, got {value!r}")
        attrs.append(f' {_ATTRS.get(prop, prop)}="{escape(str(value), quote=True)}"')
    for key, value in vars(node).items():  # wildcard props: data-*, aria-*
        if key.startswith(("data-", "aria-")) and value is not None:
            attrs.append(f' {key}="{escape(str(value), quote=True)}"')
    head = f"<{tag}{''.join(attrs)}>"
    if tag in _VOID:
        return head
    return f"{head}{to_html(getattr(node, 'children', None))}</{tag}>"


__all__ = ("Element", "h", "to_html")
