"""pywinauto key syntax -> neutral operations -> xdotool commands."""

from __future__ import annotations

import pytest

from starweave.errors import DesktopError
from starweave.tools.desktop.keys import KeyDown, KeyPress, KeyUp, TypeText, parse_keys
from starweave.tools.desktop.linux.keys import translate_keys


def test_bare_modifier_holds_for_next_key() -> None:
    assert parse_keys("{VK_CONTROL}s") == [KeyPress("s", ("ctrl",))]
    assert translate_keys("{VK_CONTROL}s") == [["key", "--clearmodifiers", "ctrl+s"]]


def test_prefix_modifiers_and_groups() -> None:
    assert parse_keys("^s") == [KeyPress("s", ("ctrl",))]
    assert parse_keys("^+{TAB}") == [KeyPress("tab", ("ctrl", "shift"))]
    assert parse_keys("%(fx)") == [KeyPress("f", ("alt",)), KeyPress("x", ("alt",))]
    assert translate_keys("^+{TAB}") == [["key", "--clearmodifiers", "ctrl+shift+Tab"]]


def test_named_keys_repeat_and_text_merge() -> None:
    ops = parse_keys("hello world{ENTER}{TAB 2}x~")
    assert ops == [
        TypeText("hello world"),
        KeyPress("enter"),
        KeyPress("tab"),
        KeyPress("tab"),
        TypeText("x"),
        KeyPress("enter"),
    ]
    assert translate_keys("ab{ENTER}") == [
        ["type", "--delay", "5", "--", "ab"],
        ["key", "--clearmodifiers", "Return"],
    ]


def test_newline_is_enter_and_escapes_are_literal() -> None:
    assert parse_keys("a\nb") == [TypeText("a"), KeyPress("enter"), TypeText("b")]
    assert parse_keys("{+}{^}{%}{{}{}}{~}") == [TypeText("+^%{}~")]
    assert translate_keys("^{+}") == [["key", "--clearmodifiers", "ctrl+plus"]]


def test_down_up_and_function_keys() -> None:
    assert parse_keys("{VK_SHIFT down}a{VK_SHIFT up}{F5}") == [
        KeyDown("shift"),
        TypeText("a"),
        KeyUp("shift"),
        KeyPress("f5"),
    ]
    assert translate_keys("{VK_SHIFT down}{VK_SHIFT up}{PGDN}") == [
        ["keydown", "shift"],
        ["keyup", "shift"],
        ["key", "--clearmodifiers", "Next"],
    ]


@pytest.mark.parametrize("bad", ["{NOSUCHKEY}", "{ENTER", "{TAB x}", "^(ab"])
def test_bad_syntax_names_the_problem(bad: str) -> None:
    with pytest.raises(DesktopError):
        parse_keys(bad)
