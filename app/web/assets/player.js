/* AscendSim player: stepping runs in the browser.
 *
 * The server sends a run's description (the "meta" store) once and windows of frames (the "window"
 * store): per step, indices into parts it rendered once (host, core, code panels), the cores'
 * activity codes, the tiles each core holds and the output tiles landed. These clientside callbacks
 * move the step (buttons, keys, slider, play, breakpoints), swap the parts in, move the cursors and
 * redraw the tile outlines with Patch updates, and ask for another window only when the step leaves
 * (or nears the edge of) the one loaded: no server round trip per frame.
 */
(function () {
    "use strict";
    const VIEWS = ["system", "core", "timeline", "matrices", "pipeline", "metrics", "code"];
    const memo = {metaKey: null, win: null, last: {}};

    function nu() { return window.dash_clientside.no_update; }
    function trigger() {
        const c = window.dash_clientside.callback_context;
        return c ? c.triggered_id : undefined;
    }
    function clamp(x, lo, hi) { return Math.max(lo, Math.min(hi, x)); }
    function interval(speed) { return Math.max(50, Math.round(1000 / Math.max(1, speed || 10))); }
    function perTick(speed) { return Math.max(1, Math.round((speed || 10) * interval(speed) / 1000)); }

    function lessonIndex(meta, step) {
        const L = meta && meta.lesson;
        if (!L) { return -1; }
        let best = -1, at = -1;
        L.anchors.forEach(function (a, k) {
            if (a !== null && a <= step && a >= at) { best = k; at = a; }
        });
        return best;
    }

    // -- the step ------------------------------------------------------------------------------------
    function control(_back, _fwd, slider, _ticks, jump, _play, _first, _last, _lsteps, _lnav, meta,
                     step, win, speed, playing) {
        const same = [nu(), nu(), nu(), nu(), nu(), nu()];
        if (!meta) { return same; }
        const n = meta.n;
        const id = trigger();
        let s = (typeof step === "number") ? step : 0;
        let play = !!playing;
        if (memo.metaKey !== meta.key) {
            memo.metaKey = meta.key;
            s = meta.start || 0;
            play = false;
        }
        const kind = (id && typeof id === "object") ? id.type : id;
        if (kind === "lesson-step" || kind === "ls-nav") {
            const c = window.dash_clientside.callback_context;
            const clicked = c && c.triggered && c.triggered.some(function (t) { return t.value; });
            if (!clicked) { return same; }  // the buttons were re-rendered, not clicked
        }
        if (kind === "step-back") { s -= 1; play = false; }
        else if (kind === "step-forward") { s += 1; play = false; }
        else if (kind === "step-first") { s = 0; play = false; }
        else if (kind === "step-last") { s = n - 1; play = false; }
        else if (kind === "step-slider") { s = slider; play = false; }
        else if (kind === "jump-target" && jump) { s = jump.step; play = false; }
        else if (kind === "play") {
            play = !play;
            if (play && s >= n - 1) { s = 0; }
        } else if (kind === "lesson-step" && meta.lesson) {
            const a = meta.lesson.anchors[id.i];
            if (a !== null && a !== undefined) { s = a; }
            play = false;
        } else if (kind === "ls-nav" && meta.lesson) {
            const A = meta.lesson.anchors;
            let k = lessonIndex(meta, s) + id.dir;
            while (k >= 0 && k < A.length && (A[k] === null)) { k += id.dir; }
            if (k >= 0 && k < A.length) { s = A[k]; }
            play = false;
        } else if (kind === "play-timer") {
            if (!play) { return same; }
            let target = Math.min(n - 1, s + perTick(speed));
            if (!win || win.run !== meta.key || s < win.first || s >= win.first + win.count) {
                return same; // wait for the window around here
            }
            const hi = win.first + win.count - 1;
            target = Math.min(target, hi);
            if (target === s && s < n - 1) { return same; }
            for (const b of win.breaks) {
                if (b > s && b <= target) { target = b; play = false; break; }
            }
            s = target;
            if (s >= n - 1) { play = false; }
        }
        s = clamp(Math.round(s), 0, Math.max(0, n - 1));
        const cls = play ? "btn play playing" : "btn play";
        const moved = s !== step;
        return [moved ? s : nu(), s, play === !!playing ? nu() : play, !play, interval(speed), cls];
    }

    // -- asking for frames ---------------------------------------------------------------------------
    function request(step, meta, core, lang, bps, win, req) {
        if (!meta) { return nu(); }
        const W = meta.window;
        const s = (typeof step === "number") ? step : (meta.start || 0);
        const want = {run: meta.key, core: core || null, lang: lang, bps: bps || []};
        const sig = JSON.stringify([want.run, want.core, want.lang, want.bps]);
        const covers = function (w) {
            if (!w) { return false; }
            const lo = w.first, hi = w.first + w.count;
            if (s < lo || s >= hi) { return false; }
            const margin = Math.floor(W / 4);
            if (s - lo < margin && lo > 0) { return false; }
            if (hi - s <= margin && hi < meta.n) { return false; }
            return true;
        };
        if (win && win.sig === sig && covers(win)) { return nu(); }
        if (req && req.sig === sig && covers(req)) { return nu(); } // already asked
        const first = clamp(s - Math.floor(W / 4), 0, Math.max(0, meta.n - W));
        return Object.assign({}, want, {sig: sig, first: first, count: W});
    }

    // -- drawing one step ------------------------------------------------------------------------------
    function tilesAt(win, i) {
        const held = {};
        for (const change of win.tiles.changes) {
            if (change[0] > i) { break; }
            held[change[1]] = change[2];
        }
        return held;
    }

    function tileShapes(win, held, meta) {
        const shapes = [];
        const colours = meta.colours;
        Object.keys(held).forEach(function (c) {
            for (const t of win.tiles.values[held[c]]) {
                const ax = meta.axes[t[0]];
                shapes.push({
                    type: "rect", xref: ax.x, yref: ax.y,
                    x0: t[3], x1: t[3] + t[5], y0: t[2], y1: t[2] + t[4],
                    line: {color: colours[c % colours.length], width: 2, dash: t[1] === "L1" ? "dot" : "solid"},
                });
            }
        });
        return shapes;
    }

    function completion(meta, out, count) {
        const ax = meta.axes[out.tensor];
        const fr = ax.cell[0], fc = ax.cell[1];
        const gr = Math.ceil(ax.rows / fr), gc = Math.ceil(ax.cols / fc);
        const z = [];
        for (let r = 0; r < gr; r++) { z.push(new Array(gc).fill(null)); }
        const k = meta.colours.length;
        for (let j = 0; j < Math.min(count, out.tiles.length); j++) {
            const t = out.tiles[j];
            const r1 = Math.min(gr, Math.ceil((t[0] + t[2]) / fr)), c1 = Math.min(gc, Math.ceil((t[1] + t[3]) / fc));
            for (let r = Math.floor(t[0] / fr); r < r1; r++) {
                for (let c = Math.floor(t[1] / fc); c < c1; c++) { z[r][c] = t[4] % k; }
            }
        }
        return z;
    }

    function followRange(win, i) {
        const T = win.times;
        const lo = Math.max(0, i - 12), hi = Math.min(T.length - 1, i + 12);
        const t = T[i];
        const w = Math.max(T[hi] - T[lo], 0.02) * 1.3;
        const start = Math.max(t - 0.4 * w, -0.02 * w);
        return [start, start + w];
    }

    function render(step, win, follow, meta) {
        const ctx = window.dash_clientside.callback_context;
        const cells = (ctx && ctx.outputs_list && ctx.outputs_list[3]) ? ctx.outputs_list[3].length : 0;
        const none = [nu(), nu(), nu(), cells ? new Array(cells).fill(nu()) : [], nu(), nu(), nu(), nu(), nu()];
        if (!meta || !win || win.run !== meta.key) { return none; }
        const i = step - win.first;
        if (i < 0 || i >= win.count) {
            none[0] = (step + 1) + " / " + meta.n;
            none[1] = "…";
            return none;
        }
        if (memo.win !== win) { memo.win = win; memo.last = {}; }
        const last = memo.last;
        const out = none.slice();
        out[0] = win.labels[i];
        out[1] = win.events[i];
        const pick = function (name, slot) {
            const k = win.index[name] ? win.index[name][i] : undefined;
            if (k === undefined) { return; }
            if (last[name] !== k) { last[name] = k; out[slot] = win.parts[name][k]; }
        };
        pick("host", 2);
        pick("core", 4);
        pick("code", 5);
        const g = win.index.grid ? win.index.grid[i] : undefined;
        if (g !== undefined && last.grid !== g && cells) {
            last.grid = g;
            const codes = win.parts.grid[g];
            const list = [];
            for (let c = 0; c < cells; c++) {
                const a = codes[c] || "i";
                list.push("cell " + a + " " + (meta.grid[c] || ""));
            }
            out[3] = list;
        }
        const t = win.times[i];
        const tl = new window.dash_clientside.Patch();
        tl.assign(["layout", "shapes", 0, "x0"], t).assign(["layout", "shapes", 0, "x1"], t);
        if (follow && follow.length) { tl.assign(["layout", "xaxis", "range"], followRange(win, i)); }
        out[6] = tl.build();
        const pl = new window.dash_clientside.Patch();
        pl.assign(["layout", "shapes", 0, "x0"], t).assign(["layout", "shapes", 0, "x1"], t);
        pl.assign(["layout", "shapes", 1, "x0"], t);
        out[7] = pl.build();
        if (meta.axes && meta.axes.length) {
            const mx = new window.dash_clientside.Patch();
            let changed = false;
            const held = tilesAt(win, i);
            const sig = JSON.stringify(held);
            if (last.tiles !== sig) {
                last.tiles = sig;
                mx.assign(["layout", "shapes"], tileShapes(win, held, meta));
                changed = true;
            }
            const d = win.index.done ? win.index.done[i] : undefined;
            if (d !== undefined && last.done !== d) {
                last.done = d;
                const counts = win.parts.done[d];
                meta.outputs.forEach(function (o, j) {
                    mx.assign(["data", meta.axes[o.tensor].trace, "z"], completion(meta, o, counts[j]));
                });
                changed = true;
            }
            if (changed) { out[8] = mx.build(); }
        }
        return out;
    }

    // -- a lesson's narration --------------------------------------------------------------------------
    function narrate(step, meta, lang) {
        const ctx = window.dash_clientside.callback_context;
        const buttons = (ctx && ctx.outputs_list && ctx.outputs_list[1]) ? ctx.outputs_list[1].length : 0;
        const L = meta && meta.lesson;
        if (!L) { return [nu(), new Array(buttons).fill(nu())].concat(VIEWS.map(nu)); }
        lang = lang || "en";
        const j = lessonIndex(meta, (typeof step === "number") ? step : 0);
        const div = function (cls, text) {
            return {type: "Div", namespace: "dash_html_components", props: {className: cls, children: text}};
        };
        let children;
        if (j < 0) {
            children = [div("ntext", L.summary[lang])];
        } else {
            children = [div("nhead", (j + 1) + " / " + L.anchors.length), div("ntext", L.text[lang][j])];
        }
        const missing = L.missing.map(function (why) {
            return why ? L.missing_label[lang].replace("{why}", why) : null;
        }).filter(Boolean);
        if (missing.length) { children.push(div("note", missing.join(" "))); }
        const classes = [];
        for (let k = 0; k < buttons; k++) {
            let cls = "lstep";
            if (k === j) { cls += " current"; }
            if (L.anchors[k] === null) { cls += " missing"; }
            classes.push(cls);
        }
        const focus = j >= 0 ? L.views[j] : null;
        return [children, classes].concat(VIEWS.map(function (v) { return v === focus ? "view focus" : "view"; }));
    }

    window.dash_clientside = Object.assign({}, window.dash_clientside, {
        ascendsim: {control: control, request: request, render: render, narrate: narrate},
    });

    // -- keys: step when the focus is not in a text field ------------------------------------------------
    const KEYS = {
        ArrowRight: "step-forward", ArrowLeft: "step-back", " ": "play", "[": "jump-prev", "]": "jump-next",
        Home: "step-first", End: "step-last",
    };
    document.addEventListener("keydown", function (ev) {
        const el = ev.target;
        if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
        if (el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName) ||
                   (el.getAttribute && el.getAttribute("role") === "slider"))) { return; }
        const target = KEYS[ev.key];
        if (!target) { return; }
        const button = document.getElementById(target);
        if (!button) { return; }
        ev.preventDefault();
        button.click();
    });
}());
