/* AscendSim player: stepping runs in the browser.
 *
 * The server sends a run's description (the "meta" store) once and windows of frames (the "window"
 * store): per step, indices into parts it rendered once (host, core and code panels as HTML), the
 * cores' activity codes, the matrices' tile outlines (plotly shapes the server drew), the page of the
 * timeline to show, and how many output tiles have landed (the meta's landing grids say which cells that fills). One clientside
 * callback per step moves the step (buttons, keys, slider, play, breakpoints), draws it and asks for
 * another window only when the step leaves (or nears the edge of) the one loaded: no server round
 * trip per frame.
 *
 * Drawing a step must not cost time in proportion to the whole page, so what changes at every step
 * is written straight into its container (panels, core colours, labels) and the charts' cursors are
 * moved with Plotly.relayout; the tile outlines and the output's completion on the matrices, which
 * change less often, go through Dash as a Patch of the figure. The containers are empty Dash
 * components, so Dash never redraws over what is written here.
 *
 * No rule about what a step shows is decided here (app/present/playback.py owns them): the window says
 * which lesson step is narrated at each step, the meta where a lesson's next/previous buttons go and each
 * speed's (interval, events per tick), the window the tile outlines and the timeline's page. The one thing kept here is the lesson step a trainee chose
 * explicitly, which the narration shows until the step moves (the Playback rule, applied).
 */
(function () {
    "use strict";
    const VIEWS = ["system", "core", "timeline", "matrices", "pipeline", "metrics", "code"];
    const memo = {metaKey: null, win: null, last: {}, tick: null, narrated: null, grid: null, seen: null,
                  asked: null, retry: null, chosen: null, clicks: {}};
    const RETRY_MS = 4000; // a window request whose answer never came (its server died) is asked again

    function nu() { return window.dash_clientside.no_update; }
    // what moved the step: Dash names only the first of the inputs that changed since the callback last ran
    // (``triggered_id``), and a window or a run's views arriving in the same turn as a click or a jump can come
    // first; so every changed input is read, and a trainee's action wins over a tick, a tick over data arriving.
    // A lesson's buttons (pattern-matching ids) count only when clicked: drawn again (a language switch), they
    // change without a click.
    const DATA = ["meta", "window", "core-select", "player-lang", "breakpoints"];
    function idOf(propId) {
        if (propId.charAt(0) === "{") { return JSON.parse(propId.substring(0, propId.lastIndexOf("}") + 1)); }
        const dot = propId.lastIndexOf(".");
        return dot < 0 ? propId : propId.substring(0, dot);
    }
    function triggers() {
        const c = window.dash_clientside.callback_context;
        const out = [];
        for (const t of (c && c.triggered) || []) {
            const id = idOf(t.prop_id);
            if (typeof id !== "object" || t.value) { out.push(id); }
        }
        return out;
    }
    function trigger(ids) {
        // the slider also changes when this callback moved the step (its value set to the step: an echo that can
        // come in one turn with the next click), so any other action wins over it
        const rank = function (id) {
            if (id === "step-slider") { return 1; }
            if (id === "play-timer") { return 2; }
            return DATA.indexOf(id) >= 0 ? 3 : 0;
        };
        let best;
        for (const id of ids) { if (best === undefined || rank(id) < rank(best)) { best = id; } }
        return best;
    }
    // clicks of a button since the player last ran: Dash holds the player while a window it takes is on its way
    // and then runs it once for everything that changed meanwhile, so one call can bring several clicks of a
    // button, and each one counts (a button drawn anew counts from 0 again)
    function clicked(key, n) {
        const now = n || 0, before = memo.clicks[key];
        memo.clicks[key] = now;
        return before === undefined || now < before ? now : now - before;
    }
    function clicks(back, fwd, play, lnav, ctx) {
        const out = {"step-back": clicked("step-back", back), "step-forward": clicked("step-forward", fwd),
                     "play": clicked("play", play)};
        const ids = ((ctx && ctx.inputs_list) || [])[9];
        (Array.isArray(ids) ? ids : []).forEach(function (item, j) {
            out["ls-nav " + item.id.dir] = clicked("ls-nav " + item.id.dir, (lnav || [])[j]);
        });
        return out;
    }
    function clamp(x, lo, hi) { return Math.max(lo, Math.min(hi, x)); }
    function tickOf(meta, speed) { return meta.speeds[String(speed)] || [1000, 1]; } // [interval ms, events]
    function byId(id) { return document.getElementById(id); }
    function setText(id, text) {
        const el = byId(id);
        if (el && el.textContent !== text) { el.textContent = text; }
    }

    // the lesson step narrated at ``step``: the one chosen by a button while the step stays on it, else what
    // the window says (undefined: the window around the step has not arrived yet)
    function lessonAt(meta, win, step) {
        if (!meta || !meta.lesson) { return -1; }
        const c = memo.chosen;
        if (c && c.key === meta.key && c.step === step) { return c.k; }
        if (!win || win.run !== meta.key || !win.lesson) { return undefined; }
        const i = step - win.first;
        return (i >= 0 && i < win.count) ? win.lesson[i] : undefined;
    }

    // -- the step ------------------------------------------------------------------------------------
    function control(id, counts, slider, jump, meta, step, win, speed, playing) {
        const same = [nu(), nu(), nu(), nu(), nu(), nu()];
        if (!meta) { return same; }
        const n = meta.n;
        let s = (typeof step === "number") ? step : 0;
        let play = !!playing;
        if (memo.metaKey !== meta.key) {
            memo.metaKey = meta.key;
            memo.chosen = null;
            s = meta.start || 0;
            play = false;
        }
        // the action Dash names as the trigger; then every click of the lesson-step arrows and of ← / → that came with
        // this call, whichever input Dash named first (a click made while the call waited for a window, or while an
        // earlier click's call waited, comes in one call with it: a lost → at lesson 9's last lesson step in CI)
        const kind = (id && typeof id === "object") ? id.type : id;
        if (kind === "step-first") { s = 0; play = false; }
        else if (kind === "step-last") { s = n - 1; play = false; }
        else if (kind === "step-slider") { s = slider; play = false; }
        else if (kind === "jump-target" && jump) { s = jump.step; play = false; }
        else if (kind === "play") {
            if (counts.play % 2) { play = !play; }
            if (play && s >= n - 1) { s = 0; }
        } else if (kind === "lesson-step" && meta.lesson) {
            const a = meta.lesson.anchors[id.i];
            if (a !== null && a !== undefined) { s = a; memo.chosen = {key: meta.key, k: id.i, step: a}; }
            play = false;
        } else if (kind === "play-timer") {
            if (!play) { return same; }
            let target = Math.min(n - 1, s + tickOf(meta, speed)[1]);
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
        for (const dir of [1, -1]) {
            for (let c = (meta.lesson && counts["ls-nav " + dir]) || 0; c > 0; c--) {
                const cur = lessonAt(meta, win, s);
                const to = cur === undefined ? null : meta.lesson.nav[String(dir)][cur + 1];
                if (to === null || to === undefined) { break; }
                s = meta.lesson.anchors[to];
                memo.chosen = {key: meta.key, k: to, step: s};
            }
            if (counts["ls-nav " + dir]) { play = false; }
        }
        if (counts["step-forward"] || counts["step-back"]) {
            s += counts["step-forward"] - counts["step-back"];
            play = false;
        }
        s = clamp(Math.round(s), 0, Math.max(0, n - 1));
        if (memo.chosen && memo.chosen.step !== s) { memo.chosen = null; } // the step moved: the rule again
        const changedPlay = play !== !!playing;
        const tick = tickOf(meta, speed)[0];
        const newTick = tick !== memo.tick;
        memo.tick = tick;
        return [
            s !== step ? s : nu(),
            s !== slider ? s : nu(),
            changedPlay ? play : nu(),
            changedPlay ? !play : nu(),
            newTick ? tick : nu(),
            changedPlay ? (play ? "btn play playing" : "btn play") : nu(),
        ];
    }

    // -- asking for frames ---------------------------------------------------------------------------
    function request(step, meta, core, lang, bps, win, req) {
        if (!meta) { return nu(); }
        const W = meta.window;
        const s = (typeof step === "number") ? step : (meta.start || 0);
        const sig = JSON.stringify([meta.key, core || null, lang, bps || []]);
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
        return {run: meta.key, core: core || null, lang: lang, bps: bps || [], sig: sig, first: first, count: W,
                step: s};
    }

    function ask(asked, tries) {
        memo.asked = asked;
        window.dash_clientside.set_props("window-request", {data: asked});
        clearTimeout(memo.retry);
        memo.retry = setTimeout(function () {
            const w = memo.seen;
            const answered = w && w.sig === asked.sig && w.first === asked.first;
            if (memo.asked !== asked || answered || tries >= 6) { return; }
            ask(Object.assign({}, asked, {retry: tries + 1}), tries + 1); // a new value: the request is sent again
        }, RETRY_MS * Math.pow(2, tries));
    }

    // -- drawing one step ------------------------------------------------------------------------------
    function landed(grid, n) {
        // the heatmap once ``n`` output tiles have landed: each cell's colour where the server says it is filled
        return grid.order.map(function (row, r) {
            return row.map(function (o, c) { return o !== null && o < n ? grid.colour[r][c] : null; });
        });
    }

    function plot(id) { return document.querySelector("#" + id + " .js-plotly-plot"); }

    // The cursor (and the pipeline's veil over the future) is a line laid over the chart, placed in pixels
    // from the chart's own axis: moving it costs nothing, whereas a Plotly shape would redraw the chart.
    function overlay(id, cls) {
        const box = byId(id);
        if (!box) { return null; }
        let el = box.querySelector(":scope > ." + cls);
        if (!el) {
            el = document.createElement("div");
            el.className = cls;
            box.appendChild(el);
        }
        return el;
    }

    function placeCursor(id, t) {
        memo.cursor = memo.cursor || {};
        memo.cursor[id] = t;
        const gd = plot(id);
        const line = overlay(id, "cursor");
        const veil = id === "pipeline-graph" ? overlay(id, "veil") : null;
        if (!line) { return; }
        line.dataset.x = String(t);
        const fl = gd && gd._fullLayout;
        const xa = fl && fl.xaxis;
        if (!xa || !xa.l2p || !fl._size) { line.style.display = "none"; if (veil) { veil.style.display = "none"; } return; }
        if (!gd._ascendsimHooked) {  // after any redraw (new figure, zoom), put the cursor back
            gd._ascendsimHooked = true;
            gd.on("plotly_afterplot", function () { placeCursor(id, memo.cursor[id]); });
        }
        const box = byId(id).getBoundingClientRect(), g = gd.getBoundingClientRect();
        const x = g.left - box.left + xa._offset + xa.l2p(t);
        const left = g.left - box.left + xa._offset, right = left + xa._length;
        const top = g.top - box.top + fl._size.t;
        const inside = x >= left - 0.5 && x <= right + 0.5;
        line.style.display = inside ? "block" : "none";
        line.style.left = x + "px";
        line.style.top = top + "px";
        line.style.height = fl._size.h + "px";
        if (veil) {
            const from = Math.max(left, Math.min(right, x));
            veil.style.display = from < right ? "block" : "none";
            veil.style.left = from + "px";
            veil.style.width = (right - from) + "px";
            veil.style.top = top + "px";
            veil.style.height = fl._size.h + "px";
        }
    }

    function showPage(id, win, i) {
        // following the cursor: show the page the server computed for this step (app.present.viewport)
        const gd = plot(id);
        const tl = win.tl;
        if (!gd || !window.Plotly || !gd.layout || !gd.layout.xaxis || !tl || !tl.pages.length) { return; }
        const want = tl.pages[tl.page[i]], r = gd.layout.xaxis.range;
        if (!r || r[0] !== want[0] || r[1] !== want[1]) {
            // Plotly.update emits no plotly_relayout: Dash does not take this for the user's zoom
            window.Plotly.update(gd, {}, {"xaxis.range": want.slice()});
        }
    }

    function ensureGrid(meta) {
        const grid = byId("core-grid");
        if (!grid) { return null; }
        if (grid.dataset.key !== meta.key) {
            let html = "";
            meta.grid_cores.forEach(function (core) {
                // the server sends each core's label, caption and class as fields: nothing here parses a name
                html += '<div class="cell i ' + core.css + '" data-core="' + core.name + '" title="' + core.name + '">' +
                    core.short + "</div>";
            });
            grid.innerHTML = html;
            grid.dataset.key = meta.key;
            grid.dataset.codes = "";
        }
        return grid;
    }

    function render(step, win, following, meta) {
        // returns the Patch of the matrices (or no_update); everything else is written in place
        if (!meta || !win || win.run !== meta.key) { return nu(); }
        const i = step - win.first;
        if (i < 0 || i >= win.count) {
            setText("step-label", (step + 1) + " / " + meta.n);
            setText("event-label", "…");
            return nu();
        }
        if (memo.win !== win) { memo.win = win; memo.last = {}; }
        const last = memo.last;
        setText("step-label", win.labels[i]);
        setText("event-label", win.events[i]);
        [["host", "sys-host"], ["core", "core-body"], ["code", "code-body"], ["cpp", "cpp-body"],
         ["cppnotes", "cpp-notes"]].forEach(function (pair) {
            const k = win.index[pair[0]] ? win.index[pair[0]][i] : undefined;
            const el = byId(pair[1]);
            if (k === undefined || !el) { return; }
            const blank = win[pair[0] + "_blank"]; // a step with no line of code keeps the code shown before it
            if (blank && blank.indexOf(k) >= 0 && el.dataset.part) { return; }
            if (last[pair[0]] !== k || el.dataset.part !== win.sig + ":" + k) {
                last[pair[0]] = k;
                el.innerHTML = win.parts[pair[0]][k];
                el.dataset.part = win.sig + ":" + k;
            }
        });
        const grid = ensureGrid(meta);
        const g = win.index.grid ? win.index.grid[i] : undefined;
        if (grid && g !== undefined) {
            const codes = win.parts.grid[g];
            if (grid.dataset.codes !== codes) {
                const old = grid.dataset.codes || "";
                const cells = grid.children;
                for (let c = 0; c < cells.length; c++) {
                    const a = codes[c] || "i";
                    if (old[c] !== a) { cells[c].className = "cell " + a + " " + (meta.grid[c] || ""); }
                }
                grid.dataset.codes = codes;
            }
        }
        const t = win.times[i];
        if (following && following.length) { showPage("timeline-graph", win, i); }
        placeCursor("timeline-graph", t);
        placeCursor("pipeline-graph", t);
        if (!meta.axes || !meta.axes.length) { return nu(); }
        const mgd = plot("matrices-graph");
        if (!mgd || !mgd.data || mgd.data.length < meta.axes.length) {
            last.tiles = last.done = undefined; // the figure is not there yet: draw the overlays at the next step
            return nu();
        }
        const mx = new window.dash_clientside.Patch();
        let changed = false;
        const ti = win.tiles && win.tiles.at ? win.tiles.at[i] : undefined;
        if (ti !== undefined && last.tiles !== ti) {
            last.tiles = ti;
            // the outlines the server drew, per core and what it holds, for this step
            const shapes = [];
            win.tiles.held[ti].forEach(function (k) { Array.prototype.push.apply(shapes, win.tiles.shapes[k]); });
            mx.assign(["layout", "shapes"], shapes);
            changed = true;
        }
        const d = win.index.done ? win.index.done[i] : undefined;
        if (d !== undefined && last.done !== d) {
            last.done = d;
            const counts = win.parts.done[d];
            meta.landing.forEach(function (grid, j) { mx.assign(["data", grid.trace, "z"], landed(grid, counts[j])); });
            changed = true;
        }
        return changed ? mx.build() : nu();
    }

    // -- a lesson's narration --------------------------------------------------------------------------
    function div(cls, text) {
        return {type: "Div", namespace: "dash_html_components", props: {className: cls, children: text}};
    }

    function narrate(step, meta, win, lang, buttons) {
        const L = meta && meta.lesson;
        const none = [nu(), new Array(buttons).fill(nu())].concat(VIEWS.map(nu));
        lang = lang || "en";
        if (!L) {  // a trainee's run: the page's note instead of the lesson's narration (once per run and language)
            const note = meta && meta.narration;
            const said = JSON.stringify([lang, buttons]);
            if (!note || (memo.narrated && memo.narrated.meta === meta && memo.narrated.key === said)) { return none; }
            memo.narrated = {meta: meta, key: said};
            return [[div("ntext", note[lang])], new Array(buttons).fill("lstep")].concat(VIEWS.map(function () { return "view"; }));
        }
        const j = lessonAt(meta, win, (typeof step === "number") ? step : 0);
        if (j === undefined) { return none; } // the window with this step's lesson step is on its way
        const key = JSON.stringify([lang, j, buttons]);
        if (memo.narrated && memo.narrated.meta === meta && memo.narrated.key === key) { return none; }
        memo.narrated = {meta: meta, key: key};
        const children = j < 0 ? [div("ntext", L.summary[lang])]
            : [div("nhead", (j + 1) + " / " + L.anchors.length), div("ntext", L.text[lang][j])];
        if (L.missing_note) { children.push(div("note", L.missing_note[lang])); }
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

    // -- one callback per step: move, draw, ask for frames if needed, narrate ------------------------------
    function player(_back, _fwd, slider, _ticks, jump, _play, _first, _last, _lsteps, _lnav, meta, win, core, lang,
                    bps, step, speed, playing, follow, req) {
        const ctx = window.dash_clientside.callback_context;
        const ids = triggers();
        const lists = (ctx && ctx.outputs_list) || [];
        const buttons = Array.isArray(lists[8]) ? lists[8].length : 0;
        const counts = clicks(_back, _fwd, _play, _lnav, ctx);
        const moved = control(trigger(ids), counts, slider, jump, meta, step, win, speed, playing);
        const s = moved[0] === nu() ? ((typeof step === "number") ? step : 0) : moved[0];
        const patch = render(s, win, follow, meta);
        memo.drawn = {step: s, win: win, follow: follow, meta: meta};
        const asked = request(s, meta, core, lang, bps, win, req);
        memo.seen = win;
        if (asked !== nu()) {
            // a side update: the window request feeds a server callback whose window feeds this one
            ask(asked, 0);
        }
        const told = narrate(s, meta, win, lang, buttons);
        return moved.concat([patch], told);
    }

    // -- a run's views arrived (the system panel with its core grid, the matrices figure): the step drawn again
    // on them. A callback of its own: were the views an input of ``player``, Dash would hold every step (and the
    // first window's request) until the views' answer came.
    function viewsArrived(_device) {
        const d = memo.drawn;
        if (!d) { return nu(); }
        memo.last.tiles = undefined;
        memo.last.done = undefined;
        return render(d.step, d.win, d.follow, d.meta);
    }

    // -- the timeline's relayout events: only a user's zoom or pan goes to the server ------------------------
    function zoomGate(relayout) {
        if (!relayout) { return nu(); }
        const keys = Object.keys(relayout);
        const user = keys.some(function (k) { return k.indexOf("xaxis.range") === 0 || k === "xaxis.autorange"; });
        if (!user || keys.some(function (k) { return k.indexOf("shapes") === 0; })) { return nu(); }
        return relayout;
    }

    window.dash_clientside = Object.assign({}, window.dash_clientside, {
        ascendsim: {player: player, viewsArrived: viewsArrived, zoomGate: zoomGate},
    });

    // -- a callback request whose answer was lost is sent again ------------------------------------------------
    // Dash ends a callback whose request got no answer and never asks again: when the worker that took a job's
    // poll died (killed, restarted), the page kept the last progress it had shown and the run never arrived,
    // though the job ran on and any other worker could answer. So a request that got no answer or only part of
    // one, or a proxy's "no worker" (502, 503, 504), is sent again until RESEND_FOR_MS; the server answers it as
    // it would have answered the first (a job's result stays a while after a poll took it; a job-starting request
    // sent again polls the job the first one started: app/server/jobs.py, LocalManager).
    const RESEND_MS = [200, 400, 800, 1600], RESEND_FOR_MS = 60000, RESENT_SHOWN_MS = 15000;
    let resentTimer = null;
    const resent = function () { // the page says so (the shell's note, in the page's language), for a while
        const note = document.querySelector(".conn-note");
        if (!note) { return; }
        note.hidden = false;
        clearTimeout(resentTimer);
        resentTimer = setTimeout(function () { note.hidden = true; }, RESENT_SHOWN_MS);
    };
    // -- a job's polls space out as it runs -----------------------------------------------------------------------
    // Dash polls a background job a fixed interval after each answer (one poll in flight). Each poll of a job also
    // waits POLL_SHARE of the time since the job's first poll, up to POLL_MAX_MS: a page learns that its job ended
    // within about a tenth of the job's time (a 1 s run is seen at once, not up to half a second late), and a job
    // that waits in the queue or runs long is not polled several times a second by every page that waits for it.
    const POLL_SHARE = 0.1, POLL_MAX_MS = 1500, firstPoll = new Map();
    const backoff = function (url) {
        const m = /[?&]cacheKey=([^&]+)/.exec(url);
        if (!m) { return 0; }
        if (firstPoll.size > 64) { firstPoll.clear(); }
        const now = Date.now();
        if (!firstPoll.has(m[1])) { firstPoll.set(m[1], now); }
        return Math.min(POLL_MAX_MS, Math.round(POLL_SHARE * (now - firstPoll.get(m[1]))));
    };
    const later = function (ms) { return new Promise(function (go) { setTimeout(go, ms); }); };
    const sendOnce = window.fetch.bind(window);
    window.fetch = function (url, init) {
        if (typeof url !== "string" || url.indexOf("_dash-update-component") < 0) { return sendOnce(url, init); }
        const wait = backoff(url);
        if (wait > 0) { return later(wait).then(function () { return resend(url, init); }); }
        return resend(url, init);
    };
    const resend = function (url, init) {
        const since = Date.now();
        return new Promise(function (resolve, reject) {
            (function send(n) {
                const again = function () { setTimeout(send, RESEND_MS[Math.min(n, RESEND_MS.length - 1)], n + 1); };
                const late = function () { return Date.now() - since > RESEND_FOR_MS; };
                const lost = function (err) { if (late()) { reject(err); } else { again(); } };
                sendOnce(url, init).then(function (res) {
                    if ([502, 503, 504].indexOf(res.status) >= 0 && !late()) { again(); return; }
                    // the whole body before it counts as an answer: a worker killed while it wrote one leaves
                    // its status line and half a body, and Dash reads the body where a failure is never handled
                    res.arrayBuffer().then(function (body) {
                        if (n > 0 && res.ok) { resent(); }
                        const empty = [101, 204, 205, 304].indexOf(res.status) >= 0;
                        resolve(new Response(empty ? null : body,
                                             {status: res.status, statusText: res.statusText, headers: res.headers}));
                    }, lost);
                }, lost);
            }(0));
        });
    };

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
        const button = byId(target);
        if (!button) { return; }
        ev.preventDefault();
        button.click();
    });

    // -- clicks inside the panels written above: a slot shows its numbers, a core cell opens that core ---------
    document.addEventListener("click", function (ev) {
        const set = window.dash_clientside && window.dash_clientside.set_props;
        if (!set || !ev.target.closest) { return; }
        const slot = ev.target.closest("#core-body .slot[data-buf]");
        if (slot) {
            set("slot-click", {data: {buf: slot.dataset.buf, q: +slot.dataset.q, s: +slot.dataset.s, at: Date.now()}});
            return;
        }
        const cell = ev.target.closest("#core-grid .cell[data-core]");
        if (cell) {
            set("core-pick", {data: {core: cell.dataset.core, at: Date.now()}});
        }
    });
}());
