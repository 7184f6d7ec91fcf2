/* AscendSim: connects the editor component of app/web/editor.py to window.AscendSimEditor (editor.bundle.js).
 *
 * The bundle (CodeMirror, 380 KB) is not among the scripts of the page (app/web/app.py leaves it out): evaluating
 * it cost every page load about 0.1 s, for an editor that only the Exercise tab shows. It is loaded once, from
 * beside this file, when an element with class "ascendsim-editor" comes near the viewport (an IntersectionObserver:
 * a hidden panel's element does not) or the pointer or focus reaches a button with data-editor-prefetch (the
 * Exercise tab). Such an element is mounted as soon as the bundle is there, and again when its data-lesson
 * changes, with the stub, lesson and label its data attributes carry. A click on a button with
 * data-editor-action="reset" or "download" calls that function on the editor named by its data-editor-target.
 * Python decides what the attributes say; this file only connects them. A page that lists the bundle among its
 * scripts (Dash's default) has it already: this file then loads nothing.
 */
(function () {
    "use strict";
    const hosts = document.getElementsByClassName("ascendsim-editor");  // live: cheap to look at often
    const BUNDLE = "editor.bundle.js";
    const here = document.currentScript ? document.currentScript.src : "";
    const seen = new WeakSet();  // the hosts the IntersectionObserver watches
    const near = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) { load(); }
    }, {rootMargin: "50% 0px"}) : null;
    let asked = false;

    function api() { return window.AscendSimEditor; }

    function load() {  // the bundle, once; mountAll when it has run
        if (asked || api()) { return; }
        asked = true;
        if (near) { near.disconnect(); }
        if (document.querySelector('script[src*="/' + BUNDLE + '"]')) { return; }  // listed by the page: coming
        const script = document.createElement("script");
        // beside this file, with its query (Dash's ?m=: a new install is not served an old bundle from a cache)
        script.src = here ? here.replace(/editor-init\.js(?=[?#]|$)/, BUNDLE) : BUNDLE;
        script.onload = mountAll;
        script.onerror = function () { asked = false; };  // the next sight of an editor asks again
        document.head.appendChild(script);
    }

    function mountAll() {
        const editor = api();
        if (!editor) {
            if (!asked && near) {
                for (const el of Array.from(hosts)) {
                    if (!seen.has(el)) { seen.add(el); near.observe(el); }
                }
            } else if (!near && hosts.length) {
                load();
            }
            return;
        }
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
    function prefetch(event) {  // the Exercise tab under the pointer or the focus: the bundle is on its way
        if (!asked && event.target.closest && event.target.closest("[data-editor-prefetch]")) { load(); }
    }
    document.addEventListener("pointerover", prefetch);
    document.addEventListener("focusin", prefetch);
    if (document.readyState === "loading") {
        document.addEventListener("DOMContentLoaded", mountAll);
    } else {
        mountAll();
    }
})();
