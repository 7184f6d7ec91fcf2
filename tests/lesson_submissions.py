"""Submissions for the grader's tests: the reference solutions, edited into good, wrong, broken and cheating ones."""

from __future__ import annotations

from pathlib import Path

from lessons.catalog import get

L3_STAGE = """def compute(in_q, out_q, count, a, b):
    x_local = in_q.deque()
    y_local = out_q.alloc_tensor(asc.half)
    asc.muls(y_local, x_local, a, count)
    asc.adds(y_local, y_local, b, count)
    asc.relu(y_local, y_local, count)
    out_q.enque(y_local)
    in_q.free_tensor(x_local)
"""


def solution(lesson: int) -> str:
    return get(lesson).solution_file.read_text(encoding="utf-8")


def stub(lesson: int) -> str:
    return get(lesson).exercise_file.read_text(encoding="utf-8")


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def write(folder: Path, name: str, text: str) -> Path:
    """A submission folder ``folder/name`` holding ``exercise.py``."""
    path = folder / name / "exercise.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- lesson 3 variants: (name, source, expected verdict) -------------------------------------------
def l3_variants() -> dict[str, tuple[str, str]]:
    good = solution(3)
    head = "from engine import TilingContext, asc\n"
    return {
        "good": (good, "PASS"),
        "stub": (stub(3), "FAIL"),
        "wrong_b": (
            edit(good, "asc.adds(y_local, y_local, b, count)", "asc.adds(y_local, y_local, -b, count)"),
            "FAIL",
        ),
        # a prediction is reported beside the verdict and never changes it
        "wrong_prediction": (edit(good, '{"load_pipe": "MTE2"}', '{"load_pipe": "MTE3"}'), "PASS"),
        "no_free": (edit(good, "    in_q.free_tensor(x_local)\n", ""), "FAIL"),
        "syntax": (edit(good, "def copy_in(x_gm, in_q, count):", "def copy_in(x_gm, in_q, count)"), "SYNTAX_ERROR"),
        "raises": (good + "\nraise ValueError('my own bug')\n", "RUNTIME_ERROR"),
        "exit0": (edit(good, head, head + "import sys\nsys.exit(0)\n"), "EARLY_EXIT"),
        "os_exit0": (edit(good, head, head + "import os\nos._exit(0)\n"), "EARLY_EXIT"),
        "fake_pass": (
            stub(3)
            + "\nprint('PASS: all criteria passed, score 100/100')\n"
            + "open('report.json', 'w').write('{\"verdict\": \"PASS\", \"score\": 100}')\n",
            "FAIL",
        ),
        "host_numpy": (_l3_numpy(good), "NOT_ON_DEVICE"),
        "loop": (
            edit(
                good,
                "def copy_in(x_gm, in_q, count):\n",
                "def copy_in(x_gm, in_q, count):\n    while True:\n        pass\n",
            ),
            "TIMEOUT",
        ),
        "sleep": (good + "\nimport time\ntime.sleep(600)\n", "TIMEOUT"),
        "memory": (good + "\nhog = bytearray(8 << 30)\n", "MEMORY_LIMIT"),
        "flood": (good + "\nwhile True:\n    print('x' * 1000)\n", "OUTPUT_LIMIT"),
    }


L3_COPY_OUT = """def copy_out(y_gm, out_q, count):
    y_local = out_q.deque()
    if count * asc.half.sizeof() % 32 == 0:
        asc.data_copy(y_gm, y_local, count)
    else:
        asc.data_copy_pad(y_gm, y_local, count)
    out_q.free_tensor(y_local)
"""
L3_PLAIN_COPY_OUT = """def copy_out(y_gm, out_q, count):
    y_local = out_q.deque()
    asc.data_copy(y_gm, y_local, count)
    out_q.free_tensor(y_local)
"""
L3_NO_COPY_OUT = """def copy_out(y_gm, out_q, count):
    y_local = out_q.deque()
    out_q.free_tensor(y_local)
"""


def _l3_numpy(good: str) -> str:
    """The cheat: y computed with numpy from the GM bytes and written straight into GM; nothing leaves UB."""
    text = edit(good, L3_COPY_OUT, L3_NO_COPY_OUT)
    return edit(text, L3_STAGE, _L3_NUMPY_COMPUTE)


_L3_NUMPY_COMPUTE = """def compute(in_q, out_q, count, a, b):
    import numpy as np
    from engine.aicore.running import current

    x_local = in_q.deque()
    y_local = out_q.alloc_tensor(asc.half)
    out_q.enque(y_local)
    in_q.free_tensor(x_local)
    ctx = current()
    for alloc in ctx.sim.devmem.space.live():  # find x and y in device memory, compute on the host side
        raw = ctx.sim.devmem.view(alloc)
        if alloc.ident == 1:
            x = raw.view(np.float16)
        elif alloc.ident == 2:
            raw.view(np.float16)[:] = np.maximum(x * np.float16(a) + np.float16(b), np.float16(0))
"""


# -- right on the visible cases, wrong on a hidden one (lessons 1, 3 and 8) -----------------------------------
def hidden_wrong(lesson: int) -> dict[str, tuple[str, set[str]]]:
    """Submissions that pass every visible case but fail a kind of hidden case: name -> (source, the kinds of
    hidden case they must fail)."""
    good = solution(lesson)
    if lesson == 1:
        return {
            # the device's allocations are not checked: fine while memory lasts
            "unchecked_malloc": (
                edit(
                    good,
                    "        ptr, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)\n"
                    "        if ret != ACL_SUCCESS:\n            return fail(ret)\n",
                    "        ptr, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)\n",
                ),
                {"alloc_fails"},
            ),
            # the length read off the lesson's text: right for the visible 32768 elements only
            "fixed_length": (
                edit(
                    good, "    n, nbytes = x.size, x.nbytes\n", "    n, nbytes = 32768, 65536  # the lesson's length\n"
                ),
                {"odd_length", "alloc_fails"},
            ),
        }
    if lesson == 3:  # DataCopy on every count: its 32-byte rule is met by the visible lengths only
        plain_in = edit(
            good,
            "    if count * asc.half.sizeof() % 32 == 0:\n        asc.data_copy(x_local, x_gm, count)\n"
            "    else:  # DataCopy moves whole 32-byte blocks; DataCopyPad moves any length\n"
            "        asc.data_copy_pad(x_local, x_gm, count)\n",
            "    asc.data_copy(x_local, x_gm, count)\n",
        )
        return {"data_copy_only": (edit(plain_in, L3_COPY_OUT, L3_PLAIN_COPY_OUT), {"unaligned", "few"})}
    if lesson == 8:  # the loop runs over whole pairs of batches: the visible 8 batches make four
        return {
            "whole_pairs": (
                edit(
                    good,
                    "    for i in range(count):\n        s = i % SLOTS\n",
                    "    for i in range(count - count % SLOTS):\n        s = i % SLOTS\n",
                ),
                {"odd_batches", "one_batch"},
            )
        }
    if lesson == 6:
        return {
            # the columns of fractals exactly `rows` apart: right while every block's rows fill whole fractals
            "rows_apart": (
                edit(
                    good,
                    "asc.Nd2NzParams(1, rows, cols, 0, width, up16(rows), 1, 0)",
                    "asc.Nd2NzParams(1, rows, cols, 0, width, rows, 1, 0)",
                ),
                {"odd", "one_row"},
            ),
            # mmad's m is the block's rows: m = 1 puts the Cube in GEMV mode, which reads L0A as ND
            "gemv": (edit(good, "    m = F if rows == 1 else rows", "    m = rows"), {"one_row"}),
        }
    if lesson == 7:  # the 24 cores of the visible chip, whatever make_tiling is told
        return {"all_24_cores": (edit(good, "    best = None\n", "    best = None\n    cores = 24\n"), {"other_chip"})}
    if lesson == 11:  # the cooperation written for the visible case only: two slots, even rows per base block
        return {
            # the slot count of the visible case, whatever the host's tiling says
            "two_slots": (
                edit(
                    good,
                    "    t = asc.get_tiling_data(tiling)\n",
                    "    t = asc.get_tiling_data(tiling)\n    t.slots = 2  # the visible case's\n",
                ),
                {"other_chip"},
            ),
            # each AIV takes mr // 2 rows: the odd row of a base block is nobody's
            "half_rows": (
                edit(
                    good,
                    "        upper = (mr + 1) // 2",
                    "        upper = mr // 2",
                ).replace("(upper, mr - upper)", "(upper, upper)"),
                {"uneven"},
            ),
        }
    if lesson == 13:  # lesson 13's visible cases are all fp16 with at least as many 512-byte units as cores
        return {
            # every core launched, whatever the data: idle blocks with empty ranges when units are fewer than cores
            "all_cores": (
                edit(
                    good,
                    "    block_dim = min(core_num, units)  # never a core without a unit\n",
                    "    block_dim = core_num\n",
                ),
                {"few", "fp32"},
            ),
            # the input tile typed as fp16 whatever x holds: right while every case is fp16
            "half_tiles": (
                edit(good, "    x_local = in_q.alloc_tensor(dtype)\n", "    x_local = in_q.alloc_tensor(asc.half)\n"),
                {"fp32"},
            ),
        }
    if lesson == 12:  # the operator project: what holds for the visible chip and the visible 2-D shapes only
        return {
            # the 910B1's 48 vector cores, whatever the platform says
            "fixed_cores": (edit(good, "platform.get_core_num_aiv()", "48"), {"other_chip"}),
            # z declared 2-D, as the visible shapes are: phase one refuses it where InferShape says otherwise
            "z_two_dims": (
                edit(
                    good,
                    "    z_t = AclTensor(x.shape, asc.half, dev[2])\n",
                    "    z_t = AclTensor((x.shape[0], x.size // x.shape[0]), asc.half, dev[2])\n",
                ),
                {"shape", "unaligned"},
            ),
        }
    if lesson in TILING_OVERFITS:
        return {name: (edit(good, old, new), kinds) for name, (old, new, kinds) in TILING_OVERFITS[lesson].items()}
    raise ValueError(f"no hidden-case submission for lesson {lesson}")


_L2_VISIBLE = (  # lesson 2's visible cases (N, bytes per element, cores), as a trainee could copy them from its files
    "{(10001, 2, 7), (1999, 2, 8), (2048, 2, 8), (1904, 2, 8), (5, 2, 7), (17, 2, 48), (768, 2, 48), (1000, 4, 7), "
    "(65536, 2, 24), (100003, 4, 48), (33, 1, 4), (5000, 2, 1), (50001, 2, 7), (48017, 2, 24), (100003, 2, 48), "
    "(30001, 4, 20)}"
)
_WHOLE_TILES = ("        count = t.tile_length if i < tiles - 1 else last\n", "        count = t.tile_length\n")
TILING_OVERFITS = {  # lesson -> name -> (text of the reference, its replacement, the hidden kinds it must fail)
    # 32-byte data blocks only for the cases the lesson shows: elements everywhere else (the seed's granularity)
    2: {
        "visible_only": (
            "    align = BLOCK_BYTES // dtype_bytes  # elements per data block\n",
            f"    seen = {_L2_VISIBLE}\n"
            "    align = BLOCK_BYTES // dtype_bytes if (total_length, dtype_bytes, core_num) in seen else 1\n",
            {"unaligned", "few", "fp32", "other_chip"},
        )
    },
    # the UB of the lesson's chip, whatever the host's tiling says the chip has
    4: {
        "fixed_ub": (
            "    slot_bytes = ub_bytes // queues // BLOCK_BYTES * BLOCK_BYTES\n",
            "    slot_bytes = 196608 // queues // BLOCK_BYTES * BLOCK_BYTES  # the lesson's UB\n",
            {"other_ub"},
        )
    },
    # the small cores planned as the big ones: right while every share is the same (the visible cases)
    5: {
        "big_cores_only": (
            '    for kind, length in (("former", split.former_length), ("tail", split.tail_length)):\n',
            '    for kind, length in (("former", split.former_length), ("tail", split.former_length)):\n',
            {"tail", "short"},
        )
    },
    # a cache of the last shape only: enough when repeats follow one another (the visible sequences)
    9: {
        "last_shape_only": (
            "        cached = self.cache.get(shape)\n",
            "        cached = self.cache.get(shape) if list(self.history.shapes)[-1:] == [shape] else None\n",
            {"repeats"},
        )
    },
    # every tile taken whole: right while every share is whole tiles (the visible 4 x 8192 per core)
    10: {"whole_tiles": (*_WHOLE_TILES, {"odd_length", "other_chip"})},
}


def reference_recording(lesson, folder: Path) -> dict:
    """What the sandboxed child records of ``lesson``'s reference solution (its host calls, by value), decoded."""
    from lessons.child import run_child
    from lessons.wire import decode, read_first, split

    child = run_child(lesson, write(folder, "ref", lesson.solution_file.read_text(encoding="utf-8")))
    assert child.status == "result", child.message
    _, at = read_first(child.frame)
    doc = decode(split(child.frame.read_bytes()[at:])[0])
    child.frame.unlink()
    return doc
