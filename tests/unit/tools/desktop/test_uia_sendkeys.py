"""Windows key input: nothing stays held down, whatever stops the keys."""

from __future__ import annotations

from typing import Any

import pytest

from starweave.errors import DesktopError
from starweave.tools.desktop.keys import KeyDown, KeyPress, KeyUp, TypeText
from starweave.tools.desktop.windows.sendkeys import send_ops


class Keys:
    VK_CONTROL = "ctrl"
    VK_SHIFT = "shift"
    VK_OEM_MINUS = "minus"
    VK_A = "a"


class FakeAuto:
    Keys = Keys

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def PressKey(self, code: str) -> None:
        self.events.append(("down", code))

    def ReleaseKey(self, code: str) -> None:
        self.events.append(("up", code))

    def SendKeys(self, text: str, interval: float = 0.0) -> None:
        self.events.append(("text", text))


def test_a_chord_with_punctuation_is_pressed_and_released_in_order() -> None:
    auto = FakeAuto()
    send_ops(auto, [KeyPress("-", ("ctrl",)), TypeText("a{b}")], lambda: False)
    assert auto.events == [
        ("down", "ctrl"),
        ("down", "minus"),
        ("up", "minus"),
        ("up", "ctrl"),
        ("text", "a{{}b{}}"),
    ]


def test_an_unknown_key_fails_before_any_key_goes_down() -> None:
    auto = FakeAuto()
    with pytest.raises(DesktopError, match="No virtual key"):
        send_ops(auto, [KeyDown("ctrl"), KeyPress("€", ("ctrl",))], lambda: False)
    assert auto.events == []


def test_keys_held_when_the_caller_gives_up_are_released() -> None:
    auto = FakeAuto()
    calls = iter([False, True])
    send_ops(auto, [KeyDown("shift"), KeyPress("a"), KeyUp("shift")], lambda: next(calls))
    assert auto.events == [("down", "shift"), ("up", "shift")]
