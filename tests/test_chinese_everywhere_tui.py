"""Chinese everywhere a trainee looks, in the terminal UI: every lesson opened in Chinese, every pane but the code
(Python), the status line; any Latin-script word outside the allow-list of tests/zh_text.py fails. (Apart from
the browser walk of tests/test_chinese_everywhere.py: Playwright's loop would be running in this thread.)"""

from __future__ import annotations

import pytest

from lessons.catalog import numbers
from tests.test_chinese_everywhere import english
from tests.tui_helpers import drive, lesson, make_app, shown, status

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("number", numbers())
def test_every_lesson_in_the_tui_is_chinese(number):
    """Every pane but the code, the status line and the key bar, at the opening step and 20 steps on."""
    app = make_app(lesson(number), lang="zh")
    texts: list[tuple[str, str]] = []

    async def script(pilot):
        for _ in range(2):
            for pane in ("narration", "timeline", "cores", "buffers", "metrics"):
                texts.extend((line, pane) for line in shown(app, pane).splitlines())
            texts.append((status(app), "status"))
            await pilot.press(*["right"] * 20)

    drive(app, script, size=(120, 40))
    found = english(texts)
    assert not found, found
