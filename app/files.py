"""Output files written whole or not at all: a reader, a crash or Ctrl-C never sees half a file, and a file is
on disk (fsynced, and its folder's entry) before its name points at it."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` for the caller to write; on success it replaces ``path``, on any
    error it is removed and an existing ``path`` is left as it was.

    The name is unique to this process and thread (a web server's threads may write at once); the file is
    created by the caller like any new file, so its permissions follow the umask.
    """
    path = Path(path).expanduser()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        yield tmp
        _sync(tmp)  # the bytes are on disk before the name points at them: a crash leaves the old file or the new
        os.replace(tmp, path)
        _sync(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _sync(path: Path) -> None:
    """fsync a file or a folder (a folder's entry for a renamed file); nothing to do where it is not supported."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
