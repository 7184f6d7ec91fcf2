/* AscendSim's code editor: CodeMirror 6 for the Exercise panel, behind window.AscendSimEditor.
 *
 * build.sh bundles this file into app/web/assets/editor.bundle.js (one IIFE, no network). The API is
 * documented in app/web/editor.py; assets/editor-init.js connects it to the Dash component. Python decides
 * what goes in the editor (the stub, the lesson, the error line); this file only edits and draws it.
 */
import {closeBrackets, closeBracketsKeymap} from "@codemirror/autocomplete";
import {defaultKeymap, history, historyKeymap, indentLess, indentMore} from "@codemirror/commands";
import {python} from "@codemirror/lang-python";
import {bracketMatching, HighlightStyle, indentOnInput, indentUnit, syntaxHighlighting} from "@codemirror/language";
import {
    Annotation, countColumn, EditorSelection, EditorState, RangeSet, StateEffect, StateField,
} from "@codemirror/state";
import {
    Decoration, drawSelection, EditorView, GutterMarker, gutterLineClass, highlightActiveLine,
    highlightActiveLineGutter, highlightSpecialChars, keymap, lineNumbers, ViewPlugin,
} from "@codemirror/view";
import {tags as t} from "@lezer/highlight";

const DRAFT_PREFIX = "ascendsim-draft-";
const SAVE_DELAY_MS = 300;
const ERROR_ID = "ex-error-line";
const TAB = 4;

// -- the error line: a position (the start of the marked line) that follows edits ---------------------
const setError = StateEffect.define();
const errorLine = Decoration.line({class: "cm-errorLine"});
const errorGutter = new (class extends GutterMarker {
    get elementClass() { return "cm-errorGutter"; }
})();

const errorField = StateField.define({
    create: () => null,
    update(pos, tr) {
        let next = pos;
        if (next !== null && tr.docChanged) {  // a change that deletes all of the line drops the mark
            const line = tr.startState.doc.lineAt(next);
            let gone = false;
            tr.changes.iterChangedRanges((a, b) => { gone ||= b > a && a <= line.from && b >= line.to; });
            next = gone ? null : tr.state.doc.lineAt(tr.changes.mapPos(next, -1)).from;
        }
        for (const e of tr.effects) { if (e.is(setError)) { next = e.value; } }
        return next;
    },
    provide: (f) => [
        EditorView.decorations.from(f, (p) => (p === null ? Decoration.none : Decoration.set(errorLine.range(p)))),
        gutterLineClass.from(f, (p) => (p === null ? RangeSet.empty : RangeSet.of(errorGutter.range(p)))),
    ],
});

/* While a line is marked, an element #ex-error-line[data-line=N] sits on the editor's right edge at the
 * line's height in the file (an overview-ruler tick; clicking it scrolls to the line). It is outside the
 * virtualised content, so it exists even when the marked line is scrolled out of view. */
const errorTick = ViewPlugin.fromClass(class {
    constructor(view) { this.dom = null; this.sync(view); }
    update(u) {
        if (u.docChanged || u.startState.field(errorField) !== u.state.field(errorField)) { this.sync(u.view); }
    }
    sync(view) {
        const pos = view.state.field(errorField);
        if (pos === null) { this.destroy(); return; }
        if (!this.dom) {
            const old = document.getElementById(ERROR_ID);
            if (old) { old.remove(); }
            this.dom = document.createElement("div");
            this.dom.id = ERROR_ID;
            this.dom.className = "cm-errorTick";
            this.dom.addEventListener("mousedown", (e) => {
                e.preventDefault();
                const at = view.state.field(errorField);
                if (at !== null) {
                    view.dispatch({selection: {anchor: at}, effects: EditorView.scrollIntoView(at, {y: "center"})});
                    view.focus();
                }
            });
            view.dom.appendChild(this.dom);
        }
        const doc = view.state.doc;
        const line = doc.lineAt(pos).number;
        this.dom.dataset.line = String(line);
        this.dom.style.top = `calc(${(100 * (line - 0.5)) / doc.lines}% - 2px)`;
    }
    destroy() {
        if (this.dom) { this.dom.remove(); this.dom = null; }
    }
});

// -- look: the page's light palette (app/web/assets/style.css), monospace as in the Code view --------------
const theme = EditorView.theme({
    "&": {
        color: "var(--ink, #1f2933)", backgroundColor: "#fbfcfd", fontSize: "12.5px",
        border: "1px solid var(--line, #d9dee4)", borderRadius: "4px", minHeight: "16em", maxHeight: "70vh",
    },
    "&.cm-focused": {outline: "none", borderColor: "var(--blue, #4c78a8)", boxShadow: "0 0 0 2px #dbe6f2"},
    ".cm-scroller": {
        fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Noto Sans Mono CJK SC", monospace',
        lineHeight: "1.45", overflow: "auto",
    },
    ".cm-content": {padding: "4px 0", caretColor: "var(--ink, #1f2933)"},
    ".cm-cursor, .cm-dropCursor": {borderLeftColor: "var(--ink, #1f2933)", borderLeftWidth: "2px"},
    ".cm-gutters": {backgroundColor: "#f4f6f8", color: "#a0a8b0", borderRight: "1px solid var(--line, #d9dee4)"},
    ".cm-lineNumbers .cm-gutterElement": {padding: "0 8px 0 10px", minWidth: "34px"},
    ".cm-activeLine": {backgroundColor: "#eef3f8"},
    ".cm-activeLineGutter": {backgroundColor: "#e3eaf2", color: "var(--ink, #1f2933)"},
    ".cm-selectionBackground, .cm-content ::selection": {backgroundColor: "#dde6ef"},
    "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground": {backgroundColor: "#cfe0f5"},
    "&.cm-focused .cm-matchingBracket": {backgroundColor: "#d7e6f7", outline: "1px solid #9ab8dc"},
    "&.cm-focused .cm-nonmatchingBracket": {backgroundColor: "#fde2e1", outline: "1px solid #f5a3a3"},
    ".cm-line.cm-errorLine": {backgroundColor: "#ffe8e8", boxShadow: "inset 3px 0 0 var(--accent, #c7000b)"},
    ".cm-gutterElement.cm-errorGutter": {backgroundColor: "var(--accent, #c7000b)", color: "#fff", fontWeight: "600"},
    ".cm-errorTick": {
        position: "absolute", right: "1px", width: "10px", height: "4px", borderRadius: "2px", zIndex: "3",
        backgroundColor: "var(--accent, #c7000b)", cursor: "pointer",
    },
}, {dark: false});

const highlight = HighlightStyle.define([
    {tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword, t.operatorKeyword], color: "#8a1c7c"},
    {tag: [t.self, t.bool, t.null], color: "#8a1c7c"},
    {tag: [t.number], color: "#b35c00"},
    {tag: [t.string, t.special(t.string), t.character], color: "#1b7f3b"},
    {tag: [t.escape], color: "#0e6b5c"},
    {tag: [t.comment, t.lineComment, t.blockComment], color: "#6b7785", fontStyle: "italic"},
    {tag: [t.function(t.definition(t.variableName)), t.definition(t.className)], color: "#1f4f82", fontWeight: "600"},
    {tag: [t.function(t.variableName), t.function(t.propertyName)], color: "#2f5f8f"},
    {tag: [t.className, t.typeName], color: "#1f4f82"},
    {tag: [t.meta], color: "#b35c00"},
    {tag: [t.invalid], color: "#b00020"},
]);

// Tab: indent a selection, or insert spaces up to the next 4-column stop; Shift-Tab dedents.
function tab(view) {
    const {state} = view;
    if (state.selection.ranges.some((r) => !r.empty)) { return indentMore(view); }
    view.dispatch(state.update(state.changeByRange((range) => {
        const line = state.doc.lineAt(range.head);
        const n = TAB - (countColumn(line.text.slice(0, range.head - line.from), TAB) % TAB);
        return {changes: {from: range.head, insert: " ".repeat(n)}, range: EditorSelection.cursor(range.head + n)};
    }), {scrollIntoView: true, userEvent: "input.indent"}));
    return true;
}

const base = [
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightSpecialChars(),
    history(),
    drawSelection(),
    EditorState.tabSize.of(TAB),
    indentUnit.of(" ".repeat(TAB)),
    indentOnInput(),
    python(),
    syntaxHighlighting(highlight),
    bracketMatching(),
    closeBrackets(),
    highlightActiveLine(),
    keymap.of([
        ...closeBracketsKeymap,
        ...defaultKeymap,
        ...historyKeymap,
        {key: "Tab", run: tab, shift: indentLess},
    ]),
    errorField,
    errorTick,
    theme,
];

// -- the editors on the page, by element id; drafts in localStorage --------------------------------------
const editors = new Map();  // id -> {host, view, lesson, stub, timer}
const waiting = new Map();  // id -> options, for a mount asked before its element exists
const quiet = Annotation.define();  // a change that is not the trainee's draft (reset)

function draftKey(lesson) { return DRAFT_PREFIX + lesson; }
function readDraft(lesson) {
    if (lesson === null) { return null; }
    try { return window.localStorage.getItem(draftKey(lesson)); } catch (_) { return null; }
}
function writeDraft(lesson, text) {
    if (lesson === null) { return; }
    try { window.localStorage.setItem(draftKey(lesson), text); } catch (_) { /* storage full or disabled */ }
}
function dropDraft(lesson) {
    if (lesson === null) { return; }
    try { window.localStorage.removeItem(draftKey(lesson)); } catch (_) { /* storage disabled */ }
}

function save(ed) {  // writes a draft waiting to be written (debounced, or now when the page goes)
    if (ed.timer === null) { return; }
    clearTimeout(ed.timer);
    ed.timer = null;
    writeDraft(ed.lesson, ed.view.state.doc.toString());
}

function createState(ed, text, label) {
    const listener = EditorView.updateListener.of((u) => {
        if (!u.docChanged || u.transactions.every((tr) => tr.annotation(quiet))) { return; }
        if (ed.timer !== null) { clearTimeout(ed.timer); }
        ed.timer = setTimeout(() => save(ed), SAVE_DELAY_MS);
    });
    const attrs = label ? [EditorView.contentAttributes.of({"aria-label": label})] : [];
    return EditorState.create({doc: text, extensions: [base, listener, attrs]});
}

function lessonOf(options) {
    const v = options.lesson;
    return v === undefined || v === null || v === "" ? null : String(v);
}

function editorFor(id) {
    const ed = editors.get(id);
    if (!ed) { throw new Error(`AscendSimEditor: no editor mounted in #${id}`); }
    return ed;
}

function whenPresent(id, options) {
    waiting.set(id, options);
    if (waiting.size > 1) { return; }
    const observer = new MutationObserver(() => {
        for (const [key, opts] of [...waiting]) {
            if (document.getElementById(key)) { waiting.delete(key); mount(key, opts); }
        }
        if (waiting.size === 0) { observer.disconnect(); }
    });
    observer.observe(document.documentElement, {childList: true, subtree: true});
}

/** Mounts an editor in element `id` (again: no second editor; a new lesson swaps the content). */
function mount(id, options) {
    const opts = options || {};
    const host = document.getElementById(id);
    if (!host) { whenPresent(id, opts); return false; }
    waiting.delete(id);
    const lesson = lessonOf(opts);
    const stub = opts.doc === undefined || opts.doc === null ? "" : String(opts.doc);
    let ed = editors.get(id);
    if (ed && (ed.host !== host || !host.contains(ed.view.dom))) {  // Dash replaced the element
        save(ed);
        ed.view.destroy();
        editors.delete(id);
        ed = null;
    }
    if (ed) {
        if (ed.lesson !== lesson) {
            save(ed);
            ed.lesson = lesson;
            ed.stub = stub;
            const draft = readDraft(lesson);
            ed.view.setState(createState(ed, draft === null ? stub : draft, opts.label));
        }
        return true;
    }
    ed = {host, view: null, lesson, stub, timer: null};
    const draft = readDraft(lesson);
    ed.view = new EditorView({state: createState(ed, draft === null ? stub : draft, opts.label), parent: host});
    editors.set(id, ed);
    return true;
}

function getValue(id) {
    const ed = editors.get(id);
    return ed ? ed.view.state.doc.toString() : null;
}

function replaceAll(ed, text, extra) {
    const view = ed.view;
    view.dispatch({
        changes: {from: 0, to: view.state.doc.length, insert: String(text)},
        selection: {anchor: 0},
        scrollIntoView: true,
        ...extra,
    });
}

function setValue(id, text) { replaceAll(editorFor(id), text, {userEvent: "input.replace"}); }

/** Marks line `n` (1-based, clamped to the file) as the error line, or clears the mark (null). */
function markLine(id, n) {
    const view = editorFor(id).view;
    if (n === null || n === undefined) { view.dispatch({effects: setError.of(null)}); return; }
    const k = Math.trunc(Number(n));
    if (!Number.isFinite(k)) { throw new TypeError(`AscendSimEditor.markLine: not a line number: ${n}`); }
    const doc = view.state.doc;
    const pos = doc.line(Math.min(Math.max(k, 1), doc.lines)).from;
    view.dispatch({effects: [setError.of(pos), EditorView.scrollIntoView(pos, {y: "nearest"})]});
}

/** Replaces the content with the stub (undoable) and forgets the lesson's draft. */
function reset(id, stubText) {
    const ed = editorFor(id);
    const stub = stubText === undefined || stubText === null ? ed.stub : String(stubText);
    if (ed.timer !== null) { clearTimeout(ed.timer); ed.timer = null; }
    replaceAll(ed, stub, {effects: setError.of(null), annotations: quiet.of(true), userEvent: "input.reset"});
    dropDraft(ed.lesson);
}

/** Saves the content as a file through a Blob download. */
function download(id, filename) {
    const blob = new Blob([editorFor(id).view.state.doc.toString()], {type: "text/x-python"});
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = filename || "exercise.py";
    a.style.display = "none";
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function saveAll() { editors.forEach(save); }

if (!window.AscendSimEditor) {  // a second copy of the bundle must not make second editors
    window.addEventListener("pagehide", saveAll);
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") { saveAll(); } });
    window.AscendSimEditor = Object.freeze({mount, getValue, setValue, markLine, reset, download, DRAFT_PREFIX});
}
