"""What may stay Latin in text a trainee reads in Chinese, and the check that finds English left in it.

A Chinese message keeps file:line, identifiers (with _ or . or an inner capital), hex, numbers, API and buffer
names as they are (:func:`english_left`); a page of the UI also keeps the terms CANN's own Chinese documents
use untranslated (Host, Device, Tiling, CopyIn/Compute/CopyOut), key names, product names, and the names the
trainee's code uses (:func:`ui_words`: identifiers of the lessons' code and of the ``asc`` API, the scenarios'
parameters and their choices).
"""

from __future__ import annotations

import builtins
import io
import keyword
import re
import tokenize
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u4e00-\u9fff]")
# what may stay Latin in a Chinese message: file:line, identifiers (with _ . or an inner capital), hex, numbers
_TOKENS = re.compile(
    r"\S+\.py:\d+|[\w.]+\([^()]*\)|0x[0-9a-fA-F]+|[A-Za-z_]\w*(?:[._]\w+)+|[A-Za-z]+[A-Z]\w*"
    r"|\b[A-Z0-9_]{2,}\b|[A-Za-z]+\d\w*|\d[\w.]*"
)
# single words that are names, not English: API and parameter names, units, dtypes, the hardware's own terms
ALLOWED = frozenset(
    re.findall(
        r"\S+",
        """dst src count kind policy size ptr priority record deque enque mmad fixpipe cast reshape dtype num len que
        buf mode pipe flag set wait event tile numpy int float16 float32 fp16 fp32 us ns ms B KiB MiB GiB TiB Core Cube
        Vector copy memset memcpy malloc free core None str list matmul""",
    )
)


def english_left(text: str) -> list[str]:
    """The Latin words of three letters or more left in ``text`` once the allowed tokens are taken out."""
    rest = _TOKENS.sub(" ", text)
    return [w for w in re.findall(r"[A-Za-z]{3,}", rest) if w not in ALLOWED]


def assert_chinese(text: str) -> None:
    assert CJK.search(text), text
    assert not english_left(text), (english_left(text), text)


# the terms CANN's Chinese documentation itself leaves in English, key and language names, products, units
UI_TERMS = frozenset(
    re.findall(
        r"\S+",
        """Host Device Tiling tiling CopyIn CopyOut Compute Ascend repeat English Home End space Chrome Perfetto
        True False flop JSON CSV Kernel kernel Unified Buffer Atlas msprof Task Duration Block Dim devkit docs Hard
        Swish min max stable drifting random""",
    )
)


@cache
def ui_words() -> frozenset[str]:
    """Names a trainee meets in code: identifiers of the lessons' exercise, solution and scenario files and of
    the ``asc`` API (Python keywords and comments left out), and the scenarios' parameters and choices."""
    from engine.scenarios import registry

    names: set[str] = set()
    files = [*ROOT.glob("lessons/l*/exercise.py"), *ROOT.glob("lessons/l*/solution.py")]
    files += [*ROOT.glob("lessons/l*/scenario.py"), ROOT / "engine" / "asc.py"]
    for path in files:
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string):
                names.update(w for w in re.findall("[A-Za-z]+", tok.string))
    for scenario in registry().values():
        for p in scenario.params:
            names.update(re.findall("[A-Za-z]+", p.name))
            for choice in p.choices or ():
                names.update(re.findall("[A-Za-z]+", str(choice)))
    return frozenset(names - set(dir(builtins)) | UI_TERMS)


def ui_english_left(text: str) -> list[str]:
    """:func:`english_left` for a page of the UI (see :func:`ui_words`)."""
    allowed = ui_words()
    return [w for w in english_left(text) if w not in allowed]
