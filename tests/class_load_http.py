"""The class load at the HTTP level: each user is a client that sends what a browser's page sends, without a browser.

A user opens the lessons page (the page itself, lesson 1's run described, its views, its first window of frames:
stepping happens in the browser and asks nothing more for 20 steps), then the playground page, and runs its own
matmul: the Run click starts the job, the page polls it every 250 ms (one poll in flight, as Dash does), and the
run is then described, its views drawn and its first window sent. Run-to-views is from the click to the last of
those answers. The requests are built from the app's own callback list (``/_dash-dependencies``) with the
values a page holds, so they follow the app's callbacks as they change.

``python -m tests.class_load --http --users 5,10,20,40`` prints the table (see tests/class_load.py).
"""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from engine.scenarios import registry

POLL_S = 0.1  # the playground's JOB_POLL_MS
POLL_SHARE, POLL_MAX_S = 0.1, 1.5  # and player.js's spacing: a tenth of the time since the first poll, at most
CONFIG = re.compile(r'<script id="_dash-config" type="application/json">(.*?)</script>', re.S)


class Page:
    """One page load of one user: its own HTTP session, the page's end id, and what its components hold."""

    def __init__(self, url: str, path: str, deps: list[dict]) -> None:
        import requests

        self.url, self.deps = url, deps
        self.http = requests.Session()
        html = self.http.get(url + path, timeout=120).text
        self.end_id = json.loads(CONFIG.search(html).group(1)).get("end_id", "")
        self.held: dict[str, object] = {}  # "id.property" -> value, as the page's components hold them

    def dep(self, *outputs: str) -> dict:
        """The callback whose output names all of ``outputs``."""
        return next(d for d in self.deps if all(o in d["output"] for o in outputs))

    def call(self, dep: dict, changed: str, extra: str = "") -> dict:
        """Send callback ``dep`` with what the page holds (``changed``: the input that fired); its answer."""
        body = {
            "output": dep["output"],
            "outputs": _outputs(dep["output"]),
            "inputs": [self._value(i) for i in dep["inputs"]],
            "state": [self._value(s) for s in dep.get("state", [])],
            "changedPropIds": [changed],
        }
        r = self.http.post(f"{self.url}/_dash-update-component?endId={self.end_id}{extra}", json=body, timeout=300)
        if r.status_code == 204:
            return {}
        r.raise_for_status()
        answer = r.json()
        for ident, props in (answer.get("response") or {}).items():
            if ident.startswith("{"):  # pattern-matching components: what the page holds for them stays
                continue
            for prop, value in props.items():
                self.held[f"{ident}.{prop.split('@')[0]}"] = value  # a duplicate output's name ends in @<hash>
        return answer

    def job(self, dep: dict, changed: str) -> dict:
        """A background callback: the click starts the job, then one poll at a time until its answer."""
        started = self.call(dep, changed)
        query = f"&cacheKey={started['cacheKey']}&job={started['job']}"
        first = None
        while True:
            time.sleep(POLL_S)
            now = time.monotonic()
            first = first or now
            time.sleep(min(POLL_MAX_S, POLL_SHARE * (now - first)))
            answer = self.call(dep, changed, query)
            if "response" in answer:
                return answer

    def _value(self, item: dict):
        ident, prop = item["id"], item["property"]
        if ident.startswith("{"):  # pattern-matching: the components the page holds for it
            return [{"id": i, "property": prop, "value": v} for i, v in self.held.get(f"{ident}.{prop}", [])]
        key = f"{ident}.{prop}"
        return (
            {"id": ident, "property": prop, "value": self.held[key]}
            if key in self.held
            else {
                "id": ident,
                "property": prop,
            }
        )


def _outputs(output: str):
    if not output.startswith(".."):
        ident, prop = output.rsplit(".", 1)
        return {"id": ident, "property": prop}
    out = []
    for spec in (s for s in output.strip(".").split("...") if s):
        ident, prop = spec.rsplit(".", 1)
        out.append({"id": json.loads(ident) if ident.startswith("{") else ident, "property": prop})
    return out


def views(page: Page, run: dict) -> None:
    """What the player asks for a run it is given: its description, then its views and its first window at once."""
    page.held["run.data"] = run
    page.call(page.dep("meta.data", "step-slider.max"), "run.data")
    meta = page.held["meta.data"]
    core = meta["cores"][0] if meta["cores"] else None
    sig = json.dumps([meta["key"], core, "en", []], separators=(",", ":"))
    start = meta.get("start") or 0
    page.held["window-request.data"] = {
        "run": meta["key"],
        "core": core,
        "lang": "en",
        "bps": [],
        "sig": sig,
        "first": 0,
        "count": meta["window"],
        "step": start,
    }
    page.held["tl-follow.value"] = ["on"]
    with ThreadPoolExecutor(2) as pool:  # the browser sends these two at once
        done = [
            pool.submit(page.call, page.dep("sys-device.children"), "meta.data"),
            pool.submit(page.call, page.dep("window.data", "tl-view.data", "pipeline-graph"), "window-request.data"),
        ]
        for f in done:
            f.result()


def user(url: str, deps: list[dict], i: int, shape: tuple[int, int, int], session: str) -> float:
    """One user's session (lessons page, then a playground run of ``shape``); seconds from the Run click to the
    run's views."""
    lessons = Page(url, "/", deps)
    lessons.held.update({"lang-page.data": "en", "player-lang.data": "en"})
    views(lessons, {"lesson": 1})
    play = Page(url, "/playground", deps)
    fill_playground(play, shape, session)
    t0 = time.perf_counter()
    answer = play.job(play.dep("pg-last.data", "pg-error.children"), "pg-run.n_clicks")
    run = play.held.get("run.data")
    if not isinstance(run, dict) or not answer:
        raise RuntimeError(f"user {i}: the job answered no run: {json.dumps(answer)[:300]}")
    views(play, run)
    return time.perf_counter() - t0


def fill_playground(page: Page, shape: tuple[int, int, int], session: str, numerics: bool = True) -> None:
    """What the playground's form holds once a user typed a matmul of ``shape`` (its other fields as they open)."""
    fields = [p for p in registry()["matmul"].params if p.name not in ("m", "n", "k")]
    page.held.update(
        {
            "lang-page.data": "en",
            "player-lang.data": "en",
            "session.data": session,
            "pg-scenario.value": "matmul",
            "pg-profile.value": "ascend910b1",
            "pg-m.value": str(shape[0]),
            "pg-n.value": str(shape[1]),
            "pg-k.value": str(shape[2]),
            "pg-numerics.value": ["on"] if numerics else [],
            "pg-run.n_clicks": 1,
            '{"name":["ALL"],"type":"pg-param"}.id': [(_id(p), _id(p)) for p in fields],
            '{"name":["ALL"],"type":"pg-param"}.value': [(_id(p), _form(p)) for p in fields],
        }
    )


def _id(param) -> dict:
    return {"type": "pg-param", "name": param.name}


def _form(param):
    """What the playground's form holds for ``param`` before anyone types (app/web/playground.param_fields)."""
    if param.type is bool:
        return ["on"] if param.default else []
    if param.choices:
        return param.default
    return "" if param.default is None else str(param.default)


def drive(url: str, users: int, shapes: list[tuple[int, int, int]], load) -> None:
    """``users`` clients at once against the server at ``url``; their times and errors go into ``load``."""
    import requests

    deps = requests.get(url + "/_dash-dependencies", timeout=60).json()
    lock = threading.Lock()

    def one(i: int) -> None:
        try:
            took = user(url, deps, i, shapes[i], f"httpuser{i:04d}{int(time.time())}")
            with lock:
                load.run_to_views_s.append(took)
        except Exception as exc:  # a user who never got their run: counted, with what went wrong
            with lock:
                load.errors.append(f"user {i}: {type(exc).__name__}: {str(exc)[:200]}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(users)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


__all__ = ("Page", "drive", "fill_playground", "user", "views")
