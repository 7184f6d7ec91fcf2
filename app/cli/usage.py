"""Usage errors of the ``ascendsim`` commands: one line on stderr, exit code 2, before any work.

Every command module (``app/cli/*.py``) reuses these pieces instead of handling errors itself:

* :class:`UsageFailure` (or :func:`fail`): raise it anywhere in a command; ``app.cli.main`` prints
  ``error: <message>`` on one line and exits with code 2. The message names the flag, its limit and
  the value the user gave.
* :func:`flag_errors`: a context manager that turns the engine's validation errors (``ValueError``
  subclasses such as ``ScenarioArgError``, ``ProfileError``, ``TilingError``) into a ``UsageFailure``.
* Click parameter types that check at parse time, so nothing runs with a bad value:
  :class:`OutputFile` (an output file whose folder exists and is writable and which is not a
  directory), :class:`ProfileName` (a shipped profile, listed in ``--help``, or a profile TOML file)
  and :class:`ValueChoice` (a choice of ints or strings, listed in ``--help``).
* :func:`write_atomically`: write an output file under a temporary name in the same folder and move
  it into place only when it is complete, so an error or Ctrl-C never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from app import files
from engine.profiles.profile import ProfileError, list_profiles, load_profile

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C (128 + SIGINT)


@dataclass
class ProcessEnd:
    """How the ``ascendsim`` process may end once its command returns (:func:`app.cli.command.console`). ``quick``:
    the command wrote its output and left nothing to clean up (no thread, no open file, no child), so the process
    ends at once instead of freeing, object by object, the run it built (an 8192^3 run: 0.2 s after its output)."""

    quick: bool = False


def may_end_quickly() -> None:
    """Say, from a command's callback, that it is done and left nothing to clean up (see :class:`ProcessEnd`)."""
    end = click.get_current_context().find_root().obj
    if isinstance(end, ProcessEnd):
        end.quick = True


class UsageFailure(Exception):
    """A bad input: one line (exit code 2) naming the flag, its limit and the value."""


def fail(message: str) -> None:
    raise UsageFailure(message)


@contextlib.contextmanager
def flag_errors(prefix: str = "") -> Iterator[None]:
    """Engine validation errors (ValueError) inside the block become one-line usage failures."""
    try:
        yield
    except ValueError as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageFailure(f"{prefix}{text}") from None


def param_label(param: click.Parameter | None, ctx: click.Context | None = None) -> str:
    """How the user typed a parameter: ``--out`` for an option, ``profiles show NAME`` for an argument."""
    if param is None:
        return ""
    if isinstance(param, click.Option):
        longest = max(param.opts, key=len)
        return longest
    name = (param.human_readable_name or param.name or "").upper()
    if ctx is not None:
        path = ctx.command_path.split(" ", 1)
        return f"{path[1]} {name}" if len(path) > 1 else name
    return name


# -- output files ---------------------------------------------------------------------------------------
def check_output_file(value: str, example: str = "out.json") -> str:
    """The problem with writing a file at ``value``, or an empty string when it can be written.

    Checks the folder exists and is a folder, the path is not a directory, and the folder accepts a
    new file (by creating and removing one: permission bits do not tell for root or read-only mounts).
    """
    path = Path(value).expanduser()
    if not value or value.endswith(("/", os.sep)) or path.is_dir():
        return f"{value} is a directory; give a file name inside it, such as {path / example}"
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.exists():
        return f"folder {folder} does not exist (got {value})"
    if not folder.is_dir():
        return f"{folder} is not a folder (got {value})"
    if path.exists() and not os.access(path, os.W_OK):
        return f"{value} exists and may not be written"
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".ascendsim-probe-")
    except OSError as exc:
        return f"cannot create a file in {folder} ({exc.strerror}) (got {value})"
    os.close(fd)
    os.unlink(probe)
    return ""


class OutputFile(click.ParamType):
    """A file the command will write: checked when the command line is parsed, before any work."""

    name = "FILE"

    def __init__(self, example: str = "out.json") -> None:
        self.example = example  # a file name the message suggests when given a directory

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        problem = check_output_file(str(value), self.example)
        if problem:
            self.fail(problem, param, ctx)
        return str(value)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """:func:`app.files.atomic_path` for a command's output: a write that fails (a full disk, say) is one line,
    and the earlier file is still whole."""
    path = Path(path).expanduser()
    try:
        with files.atomic_path(path) as tmp:
            yield tmp
    except OSError as exc:
        kept = f"; the earlier {path.name} is unchanged" if path.exists() else ""
        raise UsageFailure(f"cannot write {path}: {exc.strerror or exc}{kept}") from None


@contextlib.contextmanager
def write_atomically(
    path: str | Path, mode: str = "w", newline: str | None = None, encoding: str | None = None
) -> Iterator[Any]:
    """Open a temporary file beside ``path``; on success it replaces ``path``, on any error it is removed."""
    with atomic_path(path) as tmp, tmp.open(mode, newline=newline, encoding=encoding) as fh:
        yield fh


# -- numbers and choices --------------------------------------------------------------------------------
class IntAtLeast(click.IntRange):
    """A whole number not below ``min``; the message says so (``--detail-cores must be >= 0, got -1``)."""

    name = "integer"

    def __init__(self, minimum: int) -> None:
        super().__init__(min=minimum)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            number = int(str(value))
        except ValueError:
            self.fail(f"must be a whole number, got {value!r}", param, ctx)
        if number < self.min:
            self.fail(f"must be >= {self.min}, got {number}", param, ctx)
        return number


class SecondsIn(click.ParamType):
    """A finite number of seconds in [low, high] (``nan`` and ``inf`` are refused, unlike click.FloatRange)."""

    name = "seconds"

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(str(value))
        except ValueError:
            self.fail(f"must be a number of seconds, got {value!r}", param, ctx)
        if not math.isfinite(number) or not self.low <= number <= self.high:
            self.fail(f"must be between {self.low:g} and {self.high:g} seconds, got {value}", param, ctx)
        return number


class ValueChoice(click.ParamType):
    """One of a fixed set of values (ints or strings), shown as ``[1|2]`` in ``--help``."""

    def __init__(self, values: Sequence[Any]) -> None:
        self.values = tuple(values)
        self.name = "|".join(map(str, self.values))

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return f"[{self.name}]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        for choice in self.values:
            if str(value) == str(choice):
                return choice
        self.fail(f"must be one of {', '.join(map(str, self.values))}, got {value}", param, ctx)
        return None


class ProfileName(click.ParamType):
    """A shipped hardware profile by name, or a path to a profile TOML file; converts to the name/path.

    The profile is loaded here, so a malformed file is reported at parse time too.
    """

    name = "PROFILE"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "NAME|FILE.toml"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if text.endswith(".toml") and not Path(text).is_file():
            self.fail(f"profile file {text} does not exist", param, ctx)
        try:
            load_profile(text)
        except ProfileError as exc:
            self.fail(str(exc).splitlines()[0], param, ctx)
        return text


def profile_help(what: str = "hardware profile") -> str:
    return f"{what}: {', '.join(list_profiles())}, or a profile TOML file"
