"""The code editor of a lesson's Exercise panel: the Dash components, and how the browser side loads.

The editor is CodeMirror 6, built from pinned npm packages into ``assets/editor.bundle.js`` by
``app/web/bundles/build.sh`` (committed: installing ascendsim needs no Node). Dash puts every ``.js`` file of
``assets/`` on every page but those :data:`LAZY_ASSETS` matches: the bundle is loaded by ``assets/editor-init.js``
when :func:`editor`'s element comes near the viewport (the Exercise panel shown) or the pointer reaches an element
with :data:`PREFETCH` (the Exercise tab), so that a page load does not evaluate it (about 0.1 s). The init script
mounts the editor as soon as the bundle has run and the element is there (a MutationObserver) and wires the
buttons of :func:`editor_buttons`; nothing else on the page has to call ``mount``.

The page decides, the browser draws (STYLE.md rule 18): Python puts the stub, the lesson number, the download
name and the content's accessible label in data attributes; the JS only edits, stores drafts and draws marks.

The browser API, ``window.AscendSimEditor`` (for Dash clientside callbacks and Playwright):

* ``mount(elementId, {doc, lesson, label})`` — creates the editor inside the element (``ex-editor``); its
  content area ``#ex-editor .cm-content`` is a real ``contenteditable``. It opens on the saved draft of
  ``lesson`` if there is one, else on ``doc``. Calling it again on the same element makes no second editor:
  the same lesson keeps the content, another lesson swaps in that lesson's draft or ``doc``; if Dash replaced
  the element, the old editor is dropped and a new one made. Returns false (and mounts when the element
  appears) if there is no such element yet.
* ``getValue(elementId)`` — the code (``null`` if nothing is mounted there); ``setValue(elementId, text)``
  replaces it (undoable; saved as the draft).
* ``markLine(elementId, n)`` — marks line ``n`` (1-based, clamped to the file) as the error line: class
  ``cm-errorLine`` on the line, ``cm-errorGutter`` on its line number, and an element ``#ex-error-line`` with
  ``data-line="n"`` (a tick on the editor's right edge at the line's height in the file; clicking it scrolls
  there). The mark follows its line through edits elsewhere (``data-line`` too); an edit that deletes all of
  the line's text (or replaces the whole file, as ``setValue`` and ``reset`` do) drops it.
  ``markLine(elementId, null)`` clears it and removes ``#ex-error-line``.
* Drafts: every change is saved (300 ms debounced, and at once when the page is hidden or unloaded) in
  ``localStorage["ascendsim-draft-<lesson>"]``. ``reset(elementId, stubText)`` puts the stub back (undoable
  with Ctrl+Z), clears the mark and deletes the draft. ``download(elementId, filename)`` saves the code as a
  file (a Blob download).

Keys: Tab inserts spaces to the next 4-column stop (indents a selection), Shift+Tab dedents, Enter keeps and
deepens Python indentation, Ctrl+Z / Ctrl+Shift+Z (Ctrl+Y) undo and redo, brackets and quotes close
themselves and matching brackets are highlighted. The editor shows no text but the code.
"""

from __future__ import annotations

from pathlib import Path

from dash import html

ASSETS = Path(__file__).resolve().parent / "assets"
BUNDLE = ASSETS / "editor.bundle.js"
SOURCES = Path(__file__).resolve().parent / "bundles"  # package.json, package-lock.json, src/, build.sh

LAZY_ASSETS = r"(^|/)editor\.bundle\.js$"  # Dash's ``assets_ignore``: served when asked for, not put on every page
PREFETCH = "data-editor-prefetch"  # an element whose hover or focus starts loading the bundle
EDITOR_ID = "ex-editor"
RESET_ID = "ex-reset"
DOWNLOAD_ID = "ex-download"
ERROR_LINE_ID = "ex-error-line"  # created by the browser while a line is marked
DRAFT_PREFIX = "ascendsim-draft-"  # localStorage key of a lesson's draft: DRAFT_PREFIX + str(lesson)

_TEXT = {
    "reset": {"en": "Reset to the stub", "zh": "恢复为初始代码"},
    "download": {"en": "Download", "zh": "下载"},
    "code": {"en": "Exercise code", "zh": "练习代码"},
}


def _text(key: str, lang: str) -> str:
    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be one of en, zh, got {lang!r}")
    return _TEXT[key][lang]


def editor(lesson: int, stub: str, lang: str = "en", filename: str = "exercise.py") -> html.Div:
    """The editor's element: empty for Dash (CodeMirror fills it in the browser), carrying the lesson's
    number, its stub (what the editor opens on without a draft, and what Reset puts back), the name Download
    saves under and the code area's accessible label in ``lang``."""
    return html.Div(
        id=EDITOR_ID,
        className="ascendsim-editor",
        **{
            "data-lesson": str(lesson),
            "data-stub": stub,
            "data-filename": filename,
            "data-label": _text("code", lang),
        },
    )


def editor_buttons(lang: str = "en", target: str = EDITOR_ID) -> list[html.Button]:
    """The "Reset to the stub" (``ex-reset``) and "Download" (``ex-download``) buttons, labelled in ``lang``;
    ``assets/editor-init.js`` calls ``reset``/``download`` on the editor ``target`` when they are clicked."""
    return [
        html.Button(
            _text(action, lang),
            id=ident,
            className="btn small",
            n_clicks=0,
            **{"data-editor-action": action, "data-editor-target": target},
        )
        for action, ident in (("reset", RESET_ID), ("download", DOWNLOAD_ID))
    ]


__all__ = (
    "BUNDLE",
    "DOWNLOAD_ID",
    "DRAFT_PREFIX",
    "EDITOR_ID",
    "ERROR_LINE_ID",
    "RESET_ID",
    "SOURCES",
    "editor",
    "editor_buttons",
)
