"""The terminal UI's own labels (the lesson picker, key words that say what a key does now), in English and
Chinese: part of the one catalogue of :mod:`app.present.messages` (look them up with ``t``)."""

from __future__ import annotations

from types import MappingProxyType

TUI = MappingProxyType(
    {
        # the lesson picker (o)
        "key.pick_lesson": ("choose another lesson", "选择其他课程"),
        "short.pick_lesson": ("lessons", "课程"),
        "tui.picker_title": ("Choose a lesson", "选择课程"),
        "tui.picker_hint": ("↑↓ move · enter open · esc cancel", "↑↓ 移动 · enter 打开 · esc 取消"),
        "tui.picker_current": ("open now", "当前课程"),
        # key words and help lines that say what the key does (now)
        "short.stop": ("stop", "暂停"),  # space while playing
        "short.kind_of": ("{kind} events", "{kind} 事件"),  # shift+arrows jump between events of that kind
        "short.breakpoint": ("breakpoint", "断点"),
        "key.switch_language": ("switch the language to 中文 (Chinese)", "切换界面语言为 English（英文）"),
        "key.choose_kind": ("next event kind (the one ⇧←→ jump to)", "切换事件类型（⇧←→ 跳转的类型）"),
        "key.show_values": ("show / hide the selected slot's values", "显示 / 隐藏所选槽位的数值"),
        "key.next_slot_of": ("select the next slot (its values: v)", "选择下一个槽位（查看数值：v）"),
    }
)

__all__ = ("TUI",)
