"""The README's example runs, its main-job command works, and .ci/run calls its test command."""

import re
import shlex
from pathlib import Path

from app.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_python_examples_run_and_say_what_they_did(capsys):
    examples = blocks("python")
    assert len(examples) == 3
    for code in examples:
        exec(compile(code, "README.md", "exec"), {})  # each ends with assertions of its own
        out = capsys.readouterr().out
        assert "us simulated" in out, "a README example must print something that shows it worked"
        if "doubled" in out:  # the kernel example: the README quotes its output
            assert f"It prints `{out.strip()}`" in README


def test_main_job_command_runs(capsys):
    commands = [line for b in blocks("bash") for line in b.splitlines() if line.startswith("ascendsim ")]
    assert commands[0] == "ascendsim web", "the README's main job is the dashboard (tests/test_web_browser.py)"
    assert main(["web", "--help"]) == 0
    args = shlex.split(commands[1])[1:]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "correct: True" in out and "simulated time" in out


def test_ci_runs_the_readme_test_command():
    test_cmd = next(line for b in blocks("bash") for line in b.splitlines() if "pytest" in line)
    assert test_cmd.strip() in (ROOT / ".ci" / "run").read_text()
