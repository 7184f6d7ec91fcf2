/* AscendSim: connects the editor component of app/web/editor.py to window.AscendSimEditor (editor.bundle.js).
 *
 * An element with class "ascendsim-editor" is mounted as soon as it appears on the page (Dash renders pages
 * after the scripts load) and again when its data-lesson changes, with the stub, lesson and label its data
 * attributes carry. A click on a button with data-editor-action="reset" or "download" calls that function on
 * the editor named by its data-editor-target. Python decides what the attributes say; this file only
 * connects them. Dash loads the assets in name order, so this file runs before the bundle: it looks for
 * window.AscendSimEditor only when something happens.
 */
(function () {
    "use strict";
    const hosts = document.getElementsByClassName("ascendsim-editor");  // live: cheap to look at often

    function api() { return window.AscendSimEditor; }

    function mountAll() {
        const editor = api();
        if (!editor) { return; }
        for (const el of Array.from(hosts)) {
            if (el.id && el.dataset.lesson !== undefined) {
                editor.mount(el.id, {doc: el.dataset.stub || "", lesson: el.dataset.lesson, label: el.dataset.label});
            }
        }
    }

    function act(event) {
        const button = event.target.closest && event.target.closest("[data-editor-action]");
        const editor = api();
        if (!button || !editor) { return; }
        const id = button.dataset.editorTarget || "ex-editor";
        const host = document.getElementById(id);
        if (!host || editor.getValue(id) === null) { return; }
        if (button.dataset.editorAction === "reset") {
            editor.reset(id, host.dataset.stub || "");
        } else if (button.dataset.editorAction === "download") {
            editor.download(id, host.dataset.filename || "exercise.py");
        }
    }

    new MutationObserver(mountAll).observe(document.documentElement, {
        childList: true, subtree: true, attributes: true, attributeFilter: ["data-lesson"],
    });
    document.addEventListener("click", act);
    if (document.readyState === "loading") {
        document.addEventListener("DOMContentLoaded", mountAll);
    } else {
        mountAll();
    }
})();
