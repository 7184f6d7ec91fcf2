"""Hostile submissions, written as a trainee who wants a PASS or wants to do damage would write them.

Each attack is plain Python a trainee could submit; ``attacks(where)`` fills in the paths it aims at
(``where``: the test's folder outside every sandbox, the project, site-packages, lesson 3's check, the
grader's pid). Every attack is built on lesson 3's stub or on a wrong program, so a PASS could only come
from fooling the grader; the tests assert the verdict and that the damage it tried is absent.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from lesson_submissions import edit, solution, stub

MARK = "MARK-{name}"  # every submission carries its own marker: a reader of classmates' files would print theirs


@dataclass(frozen=True)
class Where:
    outside: str  # a folder of the test's, outside every sandbox
    project: str  # the project's root
    site: str  # site-packages
    check: str  # lesson 3's check.py
    grader_pid: int


def _tail(code: str) -> str:
    """Code appended to lesson 3's stub: the attack runs when the module is imported, then the stub goes on."""
    return stub(3) + "\n" + code


def attacks(w: Where) -> dict[str, tuple[str, frozenset[str]]]:
    """name -> (source, the verdicts it may get). None of them may get PASS."""
    wrong_kernel = edit(solution(3), "asc.adds(y_local, y_local, b, count)", "asc.adds(y_local, y_local, -b, count)")
    solution_path = f"{w.project}/lessons/l03_copyin_compute_copyout/solution.py"
    hidden = base64.b64encode(b"lessons.l03_copyin_compute_copyout.solution").decode()
    out = {
        # the old grader's audit hook: rebind the harness's globals, then start processes and write anywhere
        "rebind_harness": _tail(
            "import sys\n"
            "main = sys.modules['__main__']\n"
            "for k in list(vars(main)):\n"
            "    if not k.startswith('__'):\n"
            "        setattr(main, k, None)\n"
            "import subprocess\n"
            f"subprocess.Popen(['/bin/sh', '-c', 'echo pwned > {w.outside}/popen.txt'])\n"
        ),
        "ctypes_fork_setsid": _tail(
            "import ctypes, time\n"
            "libc = ctypes.CDLL(None)\n"
            "pid = libc.fork()\n"
            "if pid == 0:\n"
            "    libc.setsid()\n"
            f"    open('{w.outside}/forked.txt', 'w').write('alive')\n"
            "    time.sleep(600)\n"
            "    libc._exit(0)\n"
            "if pid < 0:\n"
            "    raise PermissionError(1, 'fork refused')\n"
        ),
        "os_fork_setsid": _tail(
            "import os, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            f"    open('{w.outside}/forked2.txt', 'w').write('alive')\n"
            "    time.sleep(600)\n"
            "    os._exit(0)\n"
        ),
        # writing outside the work folder without any hook to neuter
        "write_outside": _tail(f"open('{w.outside}/plain.txt', 'w').write('x')\n"),
        "write_project": _tail(f"open('{w.project}/lessons/pwned.py', 'w').write('x = 1')\n"),
        "symlink_write": _tail(
            "import os\n"
            f"os.symlink('{w.project}/lessons/hostkit.py', 'link.py')\n"
            "open('link.py', 'a').write('# pwned\\n')\n"
        ),
        "hardlink_write": _tail(
            f"import os\nos.link('{w.project}/lessons/hostkit.py', 'hard.py')\nopen('hard.py', 'a').write('#')\n"
        ),
        "dir_fd_write": _tail(
            "import os\n"
            f"d = os.open('{w.project}/lessons', os.O_RDONLY)\n"
            "fd = os.open('pwned2.py', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d)\n"
            "os.write(fd, b'x = 1')\n"
        ),
        "rename_outside": _tail(
            "import os\n"
            "open('inside.txt', 'w').write('x')\n"
            f"os.rename('inside.txt', '{w.project}/lessons/renamed.txt')\n"
        ),
        # classmates and the grader
        "folder_reader": _tail(
            "import os\n"
            "seen = []\n"
            "for pid in os.listdir('/proc'):\n"
            "    if not pid.isdigit():\n"
            "        continue\n"
            "    for sub in ('cwd', 'root/sandbox', 'root/tmp'):\n"
            "        try:\n"
            "            base = f'/proc/{pid}/{sub}'\n"
            "            for name in os.listdir(base):\n"
            "                if name.endswith('.py'):\n"
            "                    seen.append(open(os.path.join(base, name)).read())\n"
            "        except OSError:\n"
            "            pass\n"
            "for root in ('/tmp', '/work', '/home', '/sandbox', '/var', '/srv', '/mnt'):\n"
            "    for dirpath, _, files in os.walk(root):\n"
            "        for name in files:\n"
            "            try:\n"
            "                text = open(os.path.join(dirpath, name), errors='replace').read()\n"
            "            except OSError:\n"
            "                continue\n"
            "            seen += [line for line in text.splitlines() if 'MARK-' in line]\n"
            "print('\\n'.join(line for text in seen for line in text.splitlines() if 'MARK-' in line))\n"
        ),
        "sibling_killer": _tail(
            "import os, signal\n"
            "try:\n"
            "    os.kill(-1, signal.SIGKILL)\n"
            "except OSError:\n"
            "    pass\n"
            f"for pid in [*range(1, 5000), {w.grader_pid}]:\n"
            "    if pid == os.getpid():\n"
            "        continue\n"
            "    try:\n"
            "        signal.pidfd_send_signal(os.pidfd_open(pid), signal.SIGKILL)\n"
            "    except OSError:\n"
            "        pass\n"
            "    try:\n"
            "        os.kill(pid, signal.SIGKILL)\n"
            "    except OSError:\n"
            "        pass\n"
        ),
        # the lesson's own files
        "rewrite_check": _tail(f"open('{w.check}', 'w').write('def judge(data, ctx):\\n    return []\\n')\n"),
        "plant_pth": _tail(f"open('{w.site}/aaa-pwned.pth', 'w').write('import os\\n')\n"),
        # the reference solution, by every way in
        "import_solution": edit(
            stub(3),
            "def copy_in(x_gm, in_q, count):",
            "from lessons.l03_copyin_compute_copyout.solution import copy_in, compute, copy_out  # noqa\n\n\n"
            "def _unused(x_gm, in_q, count):",
        ),
        "exec_solution": _tail(
            f"src = open('{solution_path}').read()\nprint('REFERENCE-SOURCE', len(src), src[:200])\nexec(src)\n"
        ),
        "b64_import": _tail(
            "import base64, importlib\n"
            f"ref = importlib.import_module(base64.b64decode('{hidden}').decode())\n"
            "copy_in, compute, copy_out = ref.copy_in, ref.compute, ref.copy_out\n"
        ),
        "sys_modules": _tail(
            "import sys\n"
            "ref = sys.modules.get('lessons.l03_copyin_compute_copyout.solution')\n"
            "copy_in, compute, copy_out = ref.copy_in, ref.compute, ref.copy_out\n"
        ),
        "pycache": _tail(
            "import glob, marshal\n"
            f"found = glob.glob('{w.project}/lessons/l03_copyin_compute_copyout/__pycache__/solution*.pyc')\n"
            "code = marshal.loads(open(found[0], 'rb').read()[16:])\n"
            "exec(code)\n"
        ),
        # the result channel: forge a frame claiming the right answers
        "forge_channel": _tail(
            "import os, sys, numpy as np\n"
            "from lessons.wire import encode\n"
            "from lessons.l03_copyin_compute_copyout.scenario import CASES, expected, inputs\n"
            "fd = int(sys.argv[1])\n"
            "ys = {f'y_{n}': expected(inputs(seed, total)) for n, total, _b, seed in CASES}\n"
            "os.write(fd, encode({'status': 'result', 'message': ''}))\n"
            "os.write(fd, encode({'host': [], 'blocks': {}, 'files': [], 'reads': {}, 'outputs': ys,\n"
            "                     'values': {'predictions': {'load_pipe': 'MTE2'}}}))\n"
            "os._exit(0)\n"
        ),
        # the engine and the run: right numbers into GM behind the kernel's back, findings cleared
        "gm_poke": _gm_poke(wrong_kernel),
        "clear_findings": edit(solution(3), "    in_q.free_tensor(x_local)\n", "")
        + "\nimport gc\nimport lessons.tape as _tape\n_run = _tape.Recorder.run\n\n\n"
        "def _clean(self, name, sim):\n"
        "    _run(self, name, sim)\n"
        "    for o in gc.get_objects():\n"
        "        if type(o).__name__ in ('Simulation', 'RunResult'):\n"
        "            o.findings.clear()\n\n\n"
        "_tape.Recorder.run = _clean\n",
        # reports: oversized messages
        "huge_message": _tail("raise ValueError('x' * 30_000_000)\n"),
        "deep_traceback": _tail("def dive(n, pad='y' * 100_000):\n    return dive(n + 1)\ndive(0)\n"),
    }
    verdicts = {
        "rebind_harness": {"FORBIDDEN", "CRASH"},
        "ctypes_fork_setsid": {"FORBIDDEN"},
        "os_fork_setsid": {"FORBIDDEN"},
        "write_outside": {"RUNTIME_ERROR", "FORBIDDEN"},
        "write_project": {"FORBIDDEN"},
        "symlink_write": {"FORBIDDEN"},
        "hardlink_write": {"FORBIDDEN"},
        "dir_fd_write": {"FORBIDDEN"},
        "rename_outside": {"FORBIDDEN"},
        "folder_reader": {"FAIL"},
        "sibling_killer": {"FAIL"},
        "rewrite_check": {"FORBIDDEN"},
        "plant_pth": {"FORBIDDEN"},
        "import_solution": {"RUNTIME_ERROR"},
        "exec_solution": {"FORBIDDEN"},  # solution.py cannot be opened in the sandbox
        "b64_import": {"RUNTIME_ERROR"},
        "sys_modules": {"RUNTIME_ERROR"},
        "pycache": {"RUNTIME_ERROR"},
        "forge_channel": {"TAMPERED"},
        "gm_poke": {"NOT_ON_DEVICE"},
        "clear_findings": {"FAIL"},
        "huge_message": {"RUNTIME_ERROR"},
        "deep_traceback": {"RUNTIME_ERROR"},
    }
    return {
        name: (MARK.format(name=name).join(["# ", "\n"]) + src, frozenset(verdicts[name])) for name, src in out.items()
    }


_L3_COPY_OUT = """def copy_out(y_gm, out_q, count):
    y_local = out_q.deque()
    if count * asc.half.sizeof() % 32 == 0:
        asc.data_copy(y_gm, y_local, count)
    else:
        asc.data_copy_pad(y_gm, y_local, count)
    out_q.free_tensor(y_local)
"""
_GM_POKE_COPY_OUT = """def copy_out(y_gm, out_q, count):
    import numpy as np
    from engine.aicore.running import current

    y_local = out_q.deque()
    if count * asc.half.sizeof() % 32 == 0:
        asc.data_copy(y_gm, y_local, count)
    else:
        asc.data_copy_pad(y_gm, y_local, count)
    out_q.free_tensor(y_local)
    sim = current().sim  # then the right numbers, computed with numpy, straight into the output's GM bytes
    mem = {a.ident: sim.devmem.view(a).view(np.float16) for a in sim.devmem.space.live()}
    mem[2][:] = np.maximum(mem[1] * np.float16(A) + np.float16(B), np.float16(0))
"""


def _gm_poke(wrong: str) -> str:
    text = edit(wrong, _L3_COPY_OUT, _GM_POKE_COPY_OUT)
    return text + "\nA, B = 0.5, -0.25\n"


def fast_hardware_l5() -> str:
    """Lesson 5, single-buffered (too slow for the check), with the hardware made faster inside the child."""
    slow = edit(solution(5), "BUFFER_NUM = 2", "BUFFER_NUM = 1")
    return (
        "import tomllib\n"
        "_load = tomllib.load\n\n\n"
        "def _fast(f, **kw):\n"
        "    doc = _load(f, **kw)\n"
        "    for table in doc.values():\n"
        "        if isinstance(table, dict):\n"
        "            for k, v in list(table.items()):\n"
        "                if isinstance(v, int | float) and ('gbps' in k or 'ghz' in k or 'bytes_per' in k):\n"
        "                    table[k] = v * 10\n"
        "    return doc\n\n\n"
        "tomllib.load = _fast\n"
        "import engine.profiles.profile as _profile\n"
        "for _name in dir(_profile):\n"
        "    _f = getattr(_profile, _name)\n"
        "    if hasattr(_f, 'cache_clear'):\n"
        "        _f.cache_clear()\n" + slow
    )


def free_tiler_l9() -> str:
    """Lesson 9's stub (a full search for every shape) with the host tiler's cost switched off in the child."""
    return (
        stub(9) + "\n\nimport lessons.l09_dynamic_shapes.scenario as _s\n"
        "from engine.aicore.matmul_tiling import auto_tiling as _auto\n\n\n"
        "def _free_search(self, shape, base=None):\n"
        "    m, n, k = (int(x) for x in shape)\n"
        "    fixed = None if base is None else tuple(int(x) for x in base)\n"
        "    tiling, scored = _auto(self._sim.profile, m, n, k, self._cores, self._buffer_num, fixed)\n"
        "    self._made.add(tiling)\n"
        "    self.log.append({'call': 'search', 'shape': [m, n, k], 'candidates': 0})\n"
        "    return tiling\n\n\n"
        "_s.HostTiler.search = _free_search\n"
    )


def forged_tiling_l2() -> str:
    """Lesson 2's stub (it launches one block with an empty tiling) that rewrites, in its own recording, every
    launch's tiling into the right one: the replay then launches the right tiling, and the kernel blocks the
    child recorded read another."""
    return (
        stub(2) + "\n\nimport lessons.recording as _rec\n"
        "_raw = _rec.raw_record\n\n\n"
        "def _forged(raw):\n"
        "    doc = _raw(raw)\n"
        "    n = doc['s']['f'][0][2]\n"
        "    blocks = -(-n // 16)\n"
        "    dim = max(1, min(48, blocks))\n"
        "    doc['key'] = 1 if n % 16 == 0 else 2\n"
        "    doc['s']['f'][1][2] = blocks % dim\n"
        "    doc['s']['f'][2][2] = -(-blocks // dim) * 16\n"
        "    doc['s']['f'][3][2] = blocks // dim * 16\n"
        "    return doc\n\n\n"
        "_rec.raw_record = _forged\n"
    )
