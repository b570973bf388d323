"""pywinauto key syntax -> neutral operations -> xdotool commands."""

from __future__ import annotations

import pytest

from starweave.errors import DesktopError
from starweave.tools.desktop.keys import (
    MAX_KEY_OPS,
    MAX_REPEAT,
    KeyDown,
    KeyPress,
    KeyUp,
    TypeText,
    parse_keys,
    text_ops,
)
from starweave.tools.desktop.linux.keys import to_xdotool, translate_keys


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


def test_repeat_counts_and_operation_counts_are_bounded() -> None:
    assert len(parse_keys(f"{{DOWN {MAX_REPEAT}}}")) == MAX_REPEAT
    with pytest.raises(DesktopError, match="over the limit of 100"):
        parse_keys("{DOWN 200000}")
    with pytest.raises(DesktopError, match="Too many key operations"):
        parse_keys("{TAB}" * (MAX_KEY_OPS + 1))
    with pytest.raises(DesktopError, match="Too many key operations"):
        text_ops("x\n" * MAX_KEY_OPS)


def test_literal_text_is_never_key_syntax() -> None:
    text = "Discount 50% ~now {x} ^+(a)"
    assert text_ops(text) == [TypeText(text)]
    assert text_ops("a\nb\r\n") == [TypeText("a"), KeyPress("enter"), TypeText("b"), KeyPress("enter")]
    assert to_xdotool(text_ops("50% ~now\nok")) == [
        ["type", "--delay", "5", "--", "50% ~now"],
        ["key", "--clearmodifiers", "Return"],
        ["type", "--delay", "5", "--", "ok"],
    ]
