"""The built wheel holds the whole product: installed into a fresh virtual environment, every scenario and
every command runs from a folder outside the checkout (so the checkout cannot stand in for the package).

Slow (about 25 s: building the wheel, a new venv, installing the runtime dependencies from the package
registry through pip's cache), but part of the default run, as CI runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from app.cli import cli
from engine.profiles.profile import list_profiles
from engine.scenarios import registry

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "app", "lessons")
SMALL = {
    "host-lifecycle": ["--n", "64"],
    "pipeline": ["--n", "64", "--batches", "3"],
    "matmul": ["--m", "96", "--n", "80", "--k", "64"],
    "matmul-leaky-relu": ["--m", "64", "--n", "48", "--k", "32"],
    "vector-add": ["--length", "5000"],
    "debug-demo": ["--bug", "missing-wait"],
    "dynamic-shapes": ["--sequence", "random", "--count", "3"],
}
# how each top-level command is exercised from the installed wheel (a new command must be added here)
COMMANDS = {
    "run": [["run", "matmul", "--m", "128", "--n", "128", "--k", "128", "--report", "--csv", "pipes.csv"]],
    "trace": [["trace", "pipeline", "--n", "64", "--batches", "2", "--out", "t.json"]],
    "compare": [["compare", "matmul", "--m", "128", "--buffer-num", "1", "--", "matmul", "--m", "128"]],
    "profiles": [["profiles"], ["profiles", "show", "measured-accelerator"]],
    "bench": [["bench", "--quick", "--json"]],
    "lesson": [
        ["lesson", "list"],
        ["lesson", "show", "1", "--lang", "zh"],
        ["lesson", "start", "1", "--dir", "lesson-1"],
        ["lesson", "check", "1", "--file", "subs/alice/exercise.py"],
    ],
    "grade": [["grade", "subs", "--lesson", "1", "--out", "grades.json"]],
    "calibrate": [["calibrate", "--case", "add-48core-16384", "--json"]],
    "tui": [["tui", "--lesson", "1", "--steps", "3", "--screenshot", "tui.svg", "--size", "80x24"]],
    "web": [],  # a server: started below, asked for its page, layout and assets, then stopped
}


def shipped_files() -> list[str]:
    """Every file of the product in the checkout (git's list when there is one), as paths in the wheel."""
    try:
        out = subprocess.run(
            ["git", "ls-files", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = [str(p.relative_to(ROOT)) for pkg in PACKAGES for p in (ROOT / pkg).rglob("*") if p.is_file()]
    return sorted(f for f in out if "__pycache__" not in f and not f.endswith(".pyc"))


def clean_source(dest: Path, shipped: list[str]) -> Path:
    """The checkout's own files (``shipped`` and the build's metadata) copied to dest, so nothing left in the
    checkout (a stale build/ folder, an untracked module) can reach the wheel: what is built is what a clean
    clone builds."""
    for rel in [*shipped, "pyproject.toml", "README.md"]:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    return dest


def serve_from_the_wheel(ascendsim: Path, work: Path, env: dict) -> None:
    """``ascendsim web`` from the venv answers with the dashboard, its layout and its own assets."""
    import socket
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [str(ascendsim), "web", "--port", str(port), "--runs-dir", str(work / "runs")]
    server = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"

    def get(path: str) -> str:
        with urllib.request.urlopen(url + path, timeout=30) as response:
            assert response.status == 200, path
            return response.read().decode()

    try:
        for _ in range(300):
            try:
                page = get("/")
                break
            except OSError:
                assert server.poll() is None, server.stdout.read()
                time.sleep(0.1)
        assert "AscendSim" in page
        assert "ascendsim" in get("/assets/player.js") and get("/assets/style.css")
        layout = get("/_dash-layout")
        assert "lang-switch" in layout and "page" in layout
    finally:
        server.terminate()
        server.wait(timeout=30)


def run(cmd, cwd, env, timeout=300):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_and_every_command_runs(tmp_path):
    t0 = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    shipped = shipped_files()
    dist, source = tmp_path / "dist", clean_source(tmp_path / "source", shipped)
    run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(dist)], tmp_path, env)
    (wheel,) = dist.glob("ascendsim-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [f for f in shipped if f not in names]
    assert not missing, f"the wheel leaves out {missing}"
    extra = sorted(n for n in names - set(shipped) if n.split("/")[0] in PACKAGES)
    assert not extra, f"the wheel holds files the checkout does not: {extra}"
    built = time.perf_counter()

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path, env)
    python, ascendsim = venv / "bin" / "python", venv / "bin" / "ascendsim"
    run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)], tmp_path, env)
    installed = time.perf_counter()

    work = tmp_path / "elsewhere"  # outside the checkout: nothing of the repository is importable here
    work.mkdir()
    where = run([str(python), "-c", "import app, engine, lessons; print(engine.__file__, app.__file__)"], work, env)
    assert str(ROOT) not in where.stdout and str(venv) in where.stdout, where.stdout
    deps = run([str(python), "-m", "pip", "list", "--format=json"], work, env)
    installed_names = {d["name"].lower() for d in json.loads(deps.stdout)}
    assert {"numpy", "click", "dash", "plotly", "textual"} <= installed_names
    assert not {"playwright", "pytest", "hypothesis", "ruff"} & installed_names, "test tools are not runtime needs"

    # the installed command knows every scenario and command of the checkout
    listed = run([str(ascendsim), "run", "--help"], work, env).stdout
    assert all(name in listed for name in registry()), listed
    top = run([str(ascendsim), "--help"], work, env).stdout
    assert set(cli.commands) == set(COMMANDS), "tests/test_wheel.py must exercise every command"
    assert all(name in top for name in COMMANDS)

    # every scenario (run and trace) and every profile, in one process of the installed package
    script = (
        "import sys\n"
        "from app.cli import main\n"
        f"small = {SMALL!r}\n"
        "for name, args in small.items():\n"
        "    assert main(['run', name, *args, '--json']) == 0, name\n"
        "    assert main(['trace', name, *args, '--out', name + '.json']) == 0, name\n"
        f"for profile in {list_profiles()!r}:\n"
        "    assert main(['profiles', 'show', profile]) == 0, profile\n"
    )
    out = run([str(python), "-c", script], work, env).stdout
    docs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert {d["scenario"] for d in docs} == set(registry())
    assert all(d["correct"] is not False for d in docs)
    assert all((work / f"{name}.json").is_file() for name in registry())

    # a class of one: lesson 1's reference solution as a submission, taken from the installed package
    copy = (
        "import pathlib, shutil, lessons\n"
        "src = next(pathlib.Path(lessons.__file__).parent.glob('l01_*')) / 'solution.py'\n"
        "(pathlib.Path('subs') / 'alice').mkdir(parents=True)\n"
        "shutil.copy(src, 'subs/alice/exercise.py')\n"
    )
    run([str(python), "-c", copy], work, env)

    # every command through the console script
    for runs in COMMANDS.values():
        for args in runs:
            run([str(ascendsim), *args], work, env)
    assert (work / "pipes.csv").is_file() and (work / "t.json").is_file()
    assert (work / "lesson-1" / "exercise.py").is_file()
    assert (work / "tui.svg").read_text().startswith("<svg")
    assert json.loads((work / "grades.json").read_text())["rows"][0]["verdict"] == "PASS"
    bad = subprocess.run(
        [str(ascendsim), "run", "matmul", "--m", "0"], cwd=work, env=env, capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error: --m must be >= 1")
    serve_from_the_wheel(ascendsim, work, env)

    end = time.perf_counter()
    total = end - t0
    # a figure for the record, not a verdict (speed is judged by benchmarks)
    print(
        f"wheel {built - t0:.1f} s, venv + install {installed - built:.1f} s, commands {end - installed:.1f} s, "
        f"total {total:.1f} s"
    )
