"""Every command, every parameter, every kind of bad value: exit 2, one line naming the flag, no work done.

The table is built from the commands themselves (the click tree and each scenario's declared
parameters), so a new command or parameter is tested without editing this file. For each value the
test asserts: exit code 2, nothing on stdout, exactly one line on stderr starting with ``error:``
that names the flag as the user types it, no traceback, no simulation started (the input is refused
before any work), and no output file (or temporary file) left in the output folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

import app.cli.budget
import engine.scenarios.runner
from app.cli import cli, main
from app.cli.usage import OutputFile, ProfileName, ValueChoice
from engine.scenarios import registry

HUGE = str(10**30)


def _unwritable_dir(tmp: Path) -> Path:
    """A folder no file can be created in: sysfs refuses even root; elsewhere a read-only folder."""
    if os.path.isdir("/sys/kernel"):
        return Path("/sys")
    ro = tmp / "read-only"
    ro.mkdir()
    ro.chmod(0o500)
    return ro


def _leaves(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            if command.invoke_without_command:
                yield (*path, name), command
            yield from _leaves(command, (*path, name))
        else:
            yield (*path, name), command


def _scenario_param(path: tuple[str, ...], name: str):
    if len(path) == 2 and path[0] in ("run", "trace"):
        return next((p for p in registry()[path[1]].params if p.name == name), None)
    return None


def _bad_values(path: tuple[str, ...], option: click.Option, tmp: Path) -> list[tuple[str, str]]:
    """(kind of bad value, value) pairs for one option."""
    t = option.type
    if option.is_flag:
        return []
    if isinstance(t, OutputFile):
        existing = tmp / "a-folder"
        existing.mkdir(exist_ok=True)
        return [
            ("missing folder", str(tmp / "no-such-folder" / "out.json")),
            ("unwritable place", str(_unwritable_dir(tmp) / "out.json")),
            ("existing directory", str(existing)),
            ("directory with a slash", str(tmp) + "/"),
        ]
    if isinstance(t, ProfileName):
        return [("unknown name", "nope"), ("missing file", str(tmp / "nope.toml")), ("empty", "")]
    if isinstance(t, ValueChoice):
        return [("unknown name", "nope"), ("negative", "-1"), ("huge", HUGE)]
    param = _scenario_param(path, option.name)
    if param is not None and param.parse is not None:  # a shape such as --base BM,BN,BK
        return [
            ("wrong shape", "64,64"),
            ("wrong shape", "64,64,64,64"),
            ("non-numeric", "a,b,c"),
            ("NaN", "nan,16,16"),
            ("zero", "0,16,16"),
            ("negative", "-16,16,16"),
            ("huge", f"{HUGE},16,16"),
        ]
    if isinstance(t, click.types.IntParamType) or t is click.INT:
        out = [("non-numeric", "abc"), ("NaN", "nan"), ("fraction", "1.5")]
        minimum = param.minimum if param is not None else getattr(t, "min", None)
        maximum = param.maximum if param is not None else getattr(t, "max", None)
        if minimum is not None and minimum >= 0:  # a declared range: below it is bad
            out.append(("negative", "-1"))
        if minimum is not None and minimum > 0:
            out.append(("zero", "0"))
        if param is not None or maximum is not None:  # a scenario size: too big for the machine or the limit
            out.append(("huge", HUGE))
        return out
    if isinstance(t, click.types.FloatParamType):
        return [("non-numeric", "abc"), ("NaN", "nan"), ("infinite", "inf"), ("negative", "-1"), ("huge", "1e308")]
    return []


def _cases(tmp: Path):
    for path, command in _leaves(cli):
        required = []
        if any(isinstance(p.type, OutputFile) and p.required for p in command.params):
            required = ["--out", str(tmp / "out" / "trace.json")]
        for option in command.params:
            if not isinstance(option, click.Option):
                continue
            flag = max(option.opts, key=len)
            for kind, value in _bad_values(path, option, tmp):
                args = [*path, *[a for a in required if flag != "--out"], flag, value]
                if flag == "--out":
                    args = [*path, flag, value]
                yield f"{' '.join(path)} {flag} {kind}", args, flag
        for argument in (p for p in command.params if isinstance(p, click.Argument)):
            if isinstance(argument.type, ProfileName):
                yield f"{' '.join(path)} NAME unknown name", [*path, "nope"], f"{' '.join(path)} NAME"
        yield f"{' '.join(path)} unknown option", [*path, "--no-such-flag", "1"], "--no-such-flag"


EXTRA = [
    # (what, args, what the message must name)
    ("options before the scenario name", ["run", "--m", "128", "matmul"], "options follow the scenario name"),
    ("options before the scenario name (trace)", ["trace", "--n", "64", "pipeline"], "options follow the scenario"),
    ("unknown scenario", ["run", "nosuch"], "nosuch"),
    ("unknown command", ["nosuch"], "nosuch"),
    ("trace without --out", ["trace", "pipeline"], "--out"),
    ("compare without runs", ["compare"], "--"),
    ("compare without the separator", ["compare", "matmul"], "--"),
    ("compare unknown scenario", ["compare", "nope", "--", "matmul"], "run A"),
    ("compare empty side", ["compare", "matmul", "--"], "run B"),
    ("compare bad value in A", ["compare", "matmul", "--m", "-1", "--", "matmul"], "--m"),
    ("compare bad value in B", ["compare", "matmul", "--", "matmul", "--buffer-num", "3"], "--buffer-num"),
    ("compare unknown profile", ["compare", "matmul", "--", "matmul", "--profile", "nope"], "--profile"),
    ("compare huge run", ["compare", "matmul", "--m", HUGE, "--", "matmul"], "--m"),
    ("compare unknown option", ["compare", "matmul", "--bogus", "--", "matmul"], "--bogus"),
    ("pipeline: too many streams", ["run", "pipeline", "--streams", "100000"], "--streams"),
    ("pipeline: streams x n over device memory", ["run", "pipeline", "--streams", "30000"], "--streams"),
    ("matmul: host memory", ["run", "matmul", "--m", "10000000"], "--m"),
    ("vector-add: host memory", ["run", "vector-add", "--length", "10000000000"], "--length"),
    ("pipeline: host memory", ["run", "pipeline", "--batches", "1000000"], "--batches"),
    (
        "matmul: trace events",
        ["run", "matmul", "--m", "100000", "--n", "100000", "--k", "100000", "--no-numerics"],
        "--m",
    ),
    ("leaky relu on a coupled chip", ["run", "matmul-leaky-relu", "--profile", "ascend910a"], "--profile"),
    ("leaky relu n not a multiple of 16", ["run", "matmul-leaky-relu", "--n", "17"], "--n"),
    ("vector-add tile over UB", ["run", "vector-add", "--tile-length", "40000"], "--tile-length"),
    ("matmul base over L0A", ["run", "matmul", "--base", "256,256,128"], "--base"),
    ("matmul cores over the chip", ["run", "matmul", "--cores", "25"], "--cores"),
]


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if a simulation starts: bad input must be refused before any work."""

    def refuse(*args, **kwargs):
        raise AssertionError("a simulation started before the input was refused")

    monkeypatch.setattr(engine.scenarios.runner, "Simulation", refuse)


def _check(args, needle, capsys, tmp: Path):
    out_dir = tmp / "out"
    out_dir.mkdir(exist_ok=True)
    before = sorted(p.name for p in tmp.rglob("*"))
    code = main(list(args))
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, (args, code, captured.err)
    assert captured.out == "", (args, captured.out)
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, captured.err)
    assert "Traceback" not in captured.err
    assert needle in lines[0], (args, needle, lines[0])
    assert sorted(p.name for p in tmp.rglob("*")) == before, "an output or temporary file was left behind"
    return lines[0]


def test_every_command_and_parameter_refuses_bad_values(tmp_path, capsys, no_work):
    cases = list(_cases(tmp_path))
    kinds = {case[0].rsplit(" ", 1)[-1] for case in cases}
    assert len(cases) > 200 and {"negative", "zero", "huge", "non-numeric", "NaN", "name"} <= kinds | {"name"}
    for what, args, flag in cases:
        assert _check(args, flag, capsys, tmp_path), what


@pytest.mark.parametrize(("what", "args", "needle"), EXTRA, ids=[e[0] for e in EXTRA])
def test_named_bad_inputs(what, args, needle, tmp_path, capsys, no_work):
    _check(args, needle, capsys, tmp_path)


def test_messages_name_the_right_flag(capsys, no_work, tmp_path):
    expect = {
        ("run", "pipeline", "--streams", "100000"): "error: --streams must be <= 32768 (ascend910b1), got 100000",
        ("profiles", "show", "nope"): "error: profiles show NAME: unknown profile 'nope'",
        ("run", "--m", "128", "matmul"): "error: no such option --m for 'run': options follow the scenario name "
        "(ascendsim run matmul --m ...)",
        ("run", "matmul", "--out-dtype", "fp8"): "error: --out-dtype must be one of fp16, fp32, got fp8",
    }
    for args, start in expect.items():
        line = _check(args, "", capsys, tmp_path)
        assert line.startswith(start), line
        assert "--profile" not in line or "--profile" in args
        assert not (args[1] == "pipeline" and "--n" in line), line


def test_refusals_give_the_limit_and_the_value(capsys, no_work, tmp_path):
    line = _check(["run", "matmul", "--m", "10000000"], "--m/--n/--k", capsys, tmp_path)
    assert "GB of host memory, more than the" in line and "(got --m 10000000 --n 1024 --k 1024)" in line
    line = _check(["run", "pipeline", "--batches", str(10**12), "--no-numerics"], "--batches", capsys, tmp_path)
    assert "trace events, more than the 2,147,483,647 a trace can hold" in line


def test_refuses_a_run_longer_than_the_limit(capsys, no_work, tmp_path, monkeypatch):
    monkeypatch.setattr(app.cli.budget, "available_memory", lambda: 10**15)  # a machine with memory to spare
    line = _check(["run", "host-lifecycle", "--n", "40000"], "--n", capsys, tmp_path)
    assert "the run would take about 1.4 hours, more than the limit of 1.0 hours" in line
    assert "--no-numerics skips the arithmetic (got --n 40000)" in line


def test_real_process_exit_code_and_stderr(tmp_path):
    """The console entry point itself: exit status 2, one stderr line, no traceback, nothing written."""
    out = tmp_path / "missing" / "t.json"
    for args in (["trace", "pipeline", "--out", str(out)], ["run", "matmul", "--m", "nan"], ["profiles", "show", "x"]):
        proc = subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, check=False)
        assert proc.returncode == 2 and proc.stdout == "", proc
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not out.parent.exists()


def test_help_is_plain_text_and_lists_choices(capsys):
    for path, _command in _leaves(cli):
        assert main([*path, "--help"]) == 0
        text = capsys.readouterr().out
        assert "``" not in text and ":func:" not in text and ":class:" not in text, path
    assert main(["run", "matmul", "--help"]) == 0
    text = capsys.readouterr().out
    assert "[fp16|fp32]" in text and "measured-accelerator" in text and "ascend910b1" in text
    assert main(["run", "matmul", "--help"]) == 0
    assert "[1|2]" in capsys.readouterr().out
