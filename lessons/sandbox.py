"""The operating-system sandbox a submission runs in: bubblewrap (Debian's ``bubblewrap`` package).

Each child gets, from the kernel rather than from Python:

* new user, PID, network, IPC and UTS namespaces (``bwrap --unshare-*``), running as ``nobody`` (uid 65534)
  with every capability dropped: it sees only its own processes, so it can neither read a classmate's
  folder through ``/proc`` nor signal the grader or a classmate; the network is loopback only;
* a read-only view of the Python installation and of the project's ``engine`` and ``lessons`` packages,
  in which every lesson's ``solution.py`` and ``check.py`` are empty and its byte-code caches hidden;
* a private writable work folder (``/sandbox``, a size-capped tmpfs holding only its own copy of the
  submission) and a private capped ``/tmp``; no home directory, no grader temp files;
* a seccomp filter refusing new processes (``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD``) and
  the kernel interfaces an exercise never needs (mounts, namespaces, ``ptrace``, ``bpf``, ...);
* POSIX limits on address space, CPU time, open files and file size, set before ``bwrap`` starts (the
  child cannot raise them), and a wall-time limit enforced by the grader, which kills the whole sandbox
  (``--die-with-parent``: killing ``bwrap`` ends every process in it).

What it does not protect against: a kernel vulnerability reachable from an unprivileged user namespace,
and anything that uses time or memory within the limits. Without bubblewrap, :func:`missing` says why
and the caller decides (``grade`` refuses; ``lesson check`` of a trainee's own file runs unsandboxed).
"""

from __future__ import annotations

import os
import platform
import shutil
import struct
import subprocess
import sys
from functools import cache
from pathlib import Path

WORK = "/sandbox"  # the child's work folder, inside the sandbox
NOBODY = 65534
PACKAGES = ("engine", "lessons")  # what the child imports from the project
HIDDEN = ("solution.py", "check.py")  # per lesson folder: never readable from the sandbox
MISSING = "bubblewrap is not installed (Debian: apt-get install bubblewrap): submissions cannot be sandboxed"


@cache
def missing() -> str | None:
    """Why this machine cannot sandbox a submission, or None when it can (checked once per process)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return MISSING
    try:
        probe = subprocess.run(
            [bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--", "/bin/true"],
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap cannot start ({exc})"
    if probe.returncode != 0:
        reason = probe.stderr.decode(errors="replace").strip().splitlines()
        return f"bubblewrap cannot create namespaces here ({reason[-1] if reason else probe.returncode})"
    return None


# -- what the child sees --------------------------------------------------------------------------
def _python_roots() -> list[Path]:
    """Folders holding the interpreter, its standard library and site-packages (a venv and its base)."""
    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent.parent}
    for entry in sys.path:
        p = Path(entry)
        if entry and p.is_dir() and "site-packages" in p.parts:
            roots.add(p)
    return _outermost(roots)


def _outermost(paths) -> list[Path]:
    """``paths`` without those inside another of them."""
    ordered = sorted({Path(os.path.realpath(p)) for p in paths}, key=lambda p: len(p.parts))
    out: list[Path] = []
    for p in ordered:
        if not any(p == q or q in p.parents for q in out):
            out.append(p)
    return out


def _package_dirs() -> list[Path]:
    import engine
    import lessons

    return [Path(engine.__file__).resolve().parent, Path(lessons.__file__).resolve().parent]


def _hidden(lessons_dir: Path) -> tuple[list[Path], list[Path]]:
    """(files to empty, folders to hide) under the lessons package: references, checks, their byte code."""
    files, folders = [], []
    for folder in sorted(lessons_dir.iterdir()):
        if not (folder.is_dir() and (folder / "lesson.toml").is_file()):
            continue
        files += [folder / name for name in HIDDEN if (folder / name).exists()]
        if (folder / "__pycache__").is_dir():
            folders.append(folder / "__pycache__")
    return files, folders


def command(argv: list[str], work_mb: int, seccomp_fd: int, tmp_mb: int = 16) -> list[str]:
    """The bwrap command line that runs ``argv`` (an interpreter inside the read-only view) in a new sandbox."""
    cmd = [
        shutil.which("bwrap") or "bwrap",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--uid",
        str(NOBODY),
        "--gid",
        str(NOBODY),
        "--hostname",
        "sandbox",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ]
    for name, value in _environment().items():
        cmd += ["--setenv", name, value]
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    cmd += ["--size", str(tmp_mb << 20), "--tmpfs", "/tmp"]  # first: a Python installed under /tmp is bound over it
    for top in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / top
        if p.is_symlink():
            cmd += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            cmd += ["--ro-bind", str(p), str(p)]
    if Path("/etc/ld.so.cache").exists():
        cmd += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    visible = _outermost([*_python_roots(), *_package_dirs()])
    for p in visible:
        cmd += ["--ro-bind", str(p), str(p)]
    files, folders = _hidden(_package_dirs()[1])
    for f in files:
        cmd += ["--ro-bind", "/dev/null", str(f)]
    for d in folders:
        cmd += ["--tmpfs", str(d), "--remount-ro", str(d)]
    cmd += ["--size", str(work_mb << 20), "--tmpfs", WORK, "--chdir", WORK]
    cmd += ["--seccomp", str(seccomp_fd)]  # a readable descriptor holding :func:`seccomp_filter`
    return [*cmd, "--", *argv]


def _environment() -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": WORK,
        "TMPDIR": "/tmp",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
    }


# -- the seccomp filter -----------------------------------------------------------------------------
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# syscall numbers: (clone, clone3, fork, vfork, then what no exercise needs)
_SYSCALLS = {
    "x86_64": {
        "clone": 56,
        "clone3": 435,
        "fork": 57,
        "vfork": 58,
        "deny": (
            165,
            166,
            155,
            272,
            308,
            101,
            250,
            248,
            249,
            321,
            298,
            323,
            425,
            246,
            320,
            169,
            175,
            176,
            313,
            139,
        ),  # mount umount2 pivot_root unshare setns ptrace keyctl add_key request_key bpf perf_event_open
        # userfaultfd io_uring_setup kexec_load kexec_file_load reboot init_module delete_module finit_module sysfs
    },
    "aarch64": {
        "clone": 220,
        "clone3": 435,
        "fork": None,
        "vfork": None,
        "deny": (40, 39, 41, 97, 268, 117, 219, 217, 218, 280, 241, 282, 425, 104, 294, 142, 105, 106, 273),
    },
}
_CLONE_THREAD = 0x00010000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
_EPERM, _ENOSYS = 1, 38


def seccomp_filter() -> bytes:
    """A classic-BPF seccomp program (what ``bwrap --seccomp`` loads): no new processes, no kernel admin."""
    machine = platform.machine()
    if machine not in _SYSCALLS:
        raise RuntimeError(f"no seccomp filter for {machine}")
    nums = _SYSCALLS[machine]
    prog: list[tuple[int, int, int, int]] = []

    def stmt(code: int, k: int) -> None:
        prog.append((code, 0, 0, k))

    def jeq(k: int, jt: int, jf: int) -> None:
        prog.append((0x15, jt, jf, k))  # BPF_JMP | BPF_JEQ | BPF_K

    ld, ret = 0x20, 0x06  # BPF_LD | BPF_W | BPF_ABS; BPF_RET | BPF_K
    stmt(ld, 4)  # seccomp_data.arch
    jeq(_AUDIT_ARCH[machine], 1, 0)
    stmt(ret, _RET_KILL)
    stmt(ld, 0)  # seccomp_data.nr
    if machine == "x86_64":  # the x32 ABI numbers syscalls from 0x40000000: refuse it whole
        prog.append((0x35, 0, 1, 0x40000000))  # BPF_JMP | BPF_JGE | BPF_K
        stmt(ret, _RET_KILL)
    # clone3 passes its flags in memory, which a filter cannot read: ENOSYS makes libc fall back to clone
    jeq(nums["clone3"], 0, 1)
    stmt(ret, _RET_ERRNO | _ENOSYS)
    refused = [n for n in (nums["fork"], nums["vfork"], *nums["deny"]) if n is not None]
    for n in refused:
        jeq(n, 0, 1)
        stmt(ret, _RET_ERRNO | _EPERM)
    jeq(nums["clone"], 0, 3)
    stmt(ld, 16)  # args[0], low 32 bits: the clone flags
    prog.append((0x45, 1, 0, _CLONE_THREAD))  # BPF_JMP | BPF_JSET | BPF_K: a thread -> allow
    stmt(ret, _RET_ERRNO | _EPERM)
    stmt(ret, _RET_ALLOW)
    return b"".join(struct.pack("HBBI", *ins) for ins in prog)


# -- starting it ------------------------------------------------------------------------------------
_LIMITS = (
    "import os, resource as r, sys\n"
    "m, c, f, n = map(int, sys.argv[1:5])\n"
    "r.setrlimit(r.RLIMIT_AS, (m, m))\n"
    "r.setrlimit(r.RLIMIT_CPU, (c, c + 1))\n"
    "r.setrlimit(r.RLIMIT_FSIZE, (f, f))\n"
    "r.setrlimit(r.RLIMIT_NOFILE, (n, n))\n"
    "r.setrlimit(r.RLIMIT_CORE, (0, 0))\n"
    "os.execvp(sys.argv[5], sys.argv[5:])\n"
)


def limited(cmd: list[str], memory_mb: int, cpu_s: int, output_kb: int, files: int = 256) -> list[str]:
    """``cmd`` run with the child's limits (it cannot raise them again): a small interpreter sets them, then
    becomes ``cmd`` (``exec``). CPU time: ``SIGXCPU`` at ``cpu_s``, ``SIGKILL`` a second later.

    Not a ``preexec_fn``: that makes Python fork the grader's whole process, running the ``pthread_atfork`` handlers,
    and OpenBLAS's waits for its worker threads. When another thread of the grader is inside a matrix product (the
    reference run of a lesson, computed while the child runs), both wait for each other forever: a grader of two
    jobs hung so. Without it, Python starts the child with ``vfork``, which runs no handler."""
    limits = (memory_mb << 20, cpu_s, output_kb << 10, files)
    return [sys.executable, "-I", "-S", "-c", _LIMITS, *map(str, limits), *cmd]
