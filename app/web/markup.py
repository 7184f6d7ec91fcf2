"""Dash ``html`` components written out as HTML text.

The panels a player swaps in at every step (host and streams, the core opened up, the code) are built
as Dash components by :mod:`.panels` and sent to the browser as HTML text, which the browser puts in
place itself: a page whose every slot and code line were Dash components would make each step cost
time in proportion to the whole layout (Dash re-evaluates every component on each update). Text is
escaped; only ``html`` components with plain props are accepted.
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


def to_html(node) -> str:
    """``node`` (a component, a string, a number, None or a list of them) as HTML text."""
    if node is None:
        return ""
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


__all__ = ("to_html",)
