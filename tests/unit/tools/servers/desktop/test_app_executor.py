"""AppUIExecutor through a real in-process MCP client, over a fake desktop."""

from __future__ import annotations

import asyncio
import time

from starweave.tools.servers.desktop import UIState

from .desktop_kit import open_desktop
from .fake_backend import FakeDesktopBackend

CONTROL_TOOLS = [
    ("click_input", {}),
    ("set_edit_text", {"text": "x"}),
    ("keyboard_input", {"keys": "a"}),
    ("wheel_mouse_input", {"wheel_dist": -1}),
    ("texts", {}),
]


async def test_control_tools_need_a_window_and_a_known_control() -> None:
    async with open_desktop() as d:
        for tool, extra in CONTROL_TOOLS:
            error = await d.error(d.app, tool, {"id": "1", "name": "7", **extra})
            assert "Error: No window selected" in error, tool
        assert "Error: No window selected" in await d.error(
            d.app, "click_on_coordinates", {"x": 0.5, "y": 0.5}
        )
        await d.select()
        for tool, extra in CONTROL_TOOLS:
            error = await d.error(d.app, tool, {"id": "42", "name": "?", **extra})
            assert "Control with id '42' not found. Available control ids: ['1', '2', '3', '4', '5']" in error


async def test_clicks_drive_the_calculator() -> None:
    async with open_desktop() as d:
        await d.select()
        for label, name in (("1", "7"), ("2", "+"), ("1", "7"), ("3", "=")):
            said = await d.ok(d.app, "click_input", {"id": label, "name": name})
            assert said == f"Clicked Button '{name}' (id {label}) with the left button."
        assert await d.ok(d.app, "texts", {"id": "4", "name": "Display"}) == "14"
        double = await d.ok(
            d.app, "click_input", {"id": "5", "name": "Off", "button": "right", "double": True}
        )
        assert double == "Double-clicked Button 'Off' (id 5) with the right button."
        assert d.backend.calls[-1] == ("click", "5", None, None, "right", True)
        bad = await d.error(d.app, "click_input", {"id": "1", "name": "7", "button": "thumb"})
        assert "button" in bad


async def test_name_mismatch_warns_but_acts_on_the_id() -> None:
    async with open_desktop() as d:
        await d.select()
        said = await d.ok(d.app, "click_input", {"id": "1", "name": "8"})
        assert said.startswith(
            "Warning: control id '1' is named '7', not '8'; the action was applied to control '1'."
        )
        assert d.backend.calls[-1][:2] == ("click", "1")
        typed = await d.ok(d.app, "set_edit_text", {"id": "4", "name": "Screen", "text": "5"})
        assert typed.startswith("Warning: control id '4' is named 'Display', not 'Screen'")


async def test_coordinates_are_fractions_of_the_window() -> None:
    async with open_desktop() as d:
        await d.select()  # Calculator at (100, 50), 400 x 600
        said = await d.ok(d.app, "click_on_coordinates", {"x": 0.5, "y": 0.25, "double": True})
        assert said == "Double-clicked at (0.5, 0.25) of the window (screen 300, 200) with the left button."
        assert d.backend.calls[-1] == ("click", None, 300, 200, "left", True)
        d.backend.windows[0].rectangle.x = 200  # the window moved: fractions follow it
        await d.ok(d.app, "click_on_coordinates", {"x": 0.0, "y": 1.0})
        assert d.backend.calls[-1][2:4] == (200, 650)
        error = await d.error(d.app, "click_on_coordinates", {"x": 1.5, "y": 0.5})
        assert "Coordinate x=1.5 is outside the window; coordinates are fractions of the window" in error
        dragged = await d.ok(
            d.app,
            "drag_on_coordinates",
            {
                "start_x": 0.0,
                "start_y": 0.0,
                "end_x": 1.0,
                "end_y": 0.5,
                "key_hold": "shift",
                "duration": 0.2,
            },
        )
        assert dragged == "Dragged from (0.0, 0.0) to (1.0, 0.5) of the window holding shift."
        assert d.backend.calls[-1] == ("drag", 200, 50, 600, 350, "left", 0.2, "shift")
        assert "Coordinate y=-0.1" in await d.error(
            d.app, "drag_on_coordinates", {"start_x": 0, "start_y": -0.1, "end_x": 1, "end_y": 1}
        )


async def test_text_keys_scroll_and_read() -> None:
    async with open_desktop() as d:
        await d.select(window_id="2", name="notes.txt - Mousepad")
        said = await d.ok(d.app, "set_edit_text", {"id": "1", "name": "Text", "text": " world"})
        assert said == "Entered text into Document 'Text' (id 1): ' world'."
        assert await d.ok(d.app, "texts", {"id": "1", "name": "Text"}) == "hello world"
        await d.ok(
            d.app, "set_edit_text", {"id": "1", "name": "Text", "text": "new", "clear_current_text": True}
        )
        assert await d.ok(d.app, "texts", {"id": "1", "name": "Text"}) == "new"
        keys = await d.ok(d.app, "keyboard_input", {"id": "1", "name": "Text", "keys": "!{ENTER}"})
        assert keys == "Sent keys '!{ENTER}' to Document 'Text' (id 1)."
        assert await d.ok(d.app, "texts", {"id": "1", "name": "Text"}) == "new!\n"
        unfocused = await d.ok(
            d.app, "keyboard_input", {"id": "99", "name": "", "keys": "{VK_CONTROL}s", "control_focus": False}
        )
        assert unfocused == "Sent keys '{VK_CONTROL}s' to the focused element."
        assert d.backend.calls[-1] == ("type_keys", "{VK_CONTROL}s", None)
        assert await d.ok(d.app, "wheel_mouse_input", {"id": "1", "name": "Text", "wheel_dist": -5}) == (
            "Scrolled Document 'Text' (id 1) down 5 notch(es)."
        )
        assert await d.ok(d.app, "wheel_mouse_input", {"id": "1", "name": "Text", "wheel_dist": 2}) == (
            "Scrolled Document 'Text' (id 1) up 2 notch(es)."
        )
        assert d.backend.calls[-1] == ("scroll", "1", 2)


async def test_backend_failures_name_the_action() -> None:
    async with open_desktop() as d:
        await d.select()
        failing = [
            (
                "click",
                "click_input",
                {"id": "1", "name": "7"},
                "Failed to click Button '7' (id 1): RuntimeError: x",
            ),
            (
                "click",
                "click_on_coordinates",
                {"x": 0, "y": 0},
                "Failed to click at (100, 50): RuntimeError: x",
            ),
            (
                "drag",
                "drag_on_coordinates",
                {"start_x": 0, "start_y": 0, "end_x": 0, "end_y": 0},
                "Failed to drag",
            ),
            (
                "set_text",
                "set_edit_text",
                {"id": "4", "name": "Display", "text": "1"},
                "Failed to set the text of",
            ),
            (
                "type_keys",
                "keyboard_input",
                {"id": "4", "name": "Display", "keys": "1"},
                "Failed to send keys to",
            ),
            (
                "scroll",
                "wheel_mouse_input",
                {"id": "4", "name": "Display"},
                "Failed to scroll Edit 'Display' (id 4)",
            ),
            (
                "get_text",
                "texts",
                {"id": "4", "name": "Display"},
                "Failed to read the text of Edit 'Display' (id 4)",
            ),
        ]
        for method, tool, args, expected in failing:
            d.backend.failures = {method: RuntimeError("x")}
            assert expected in await d.error(d.app, tool, args), tool


async def test_wait_is_non_blocking_and_capped() -> None:
    backend = FakeDesktopBackend()
    async with open_desktop(UIState(backend_factory=lambda: backend, max_wait_seconds=0.3)) as d:
        started = time.monotonic()
        waiting = asyncio.create_task(d.ok(d.app, "wait", {"seconds": 5}))
        assert await d.ok(d.app, "summary", {"text": "meanwhile"}) == "meanwhile"
        assert not waiting.done()  # another tool answered while wait was sleeping
        assert await waiting == "Waited 0.3 seconds (capped from 5 s)."
        assert 0.25 <= time.monotonic() - started < 3
        assert await d.ok(d.app, "wait", {"seconds": 0.01}) == "Waited 0.01 seconds."
        assert "Cannot wait a negative time (-1.0 s); give 0 to 0.3 seconds" in await d.error(
            d.app, "wait", {"seconds": -1}
        )
    assert UIState().max_wait_seconds == 300.0


async def test_summary_echoes_and_tool_list() -> None:
    async with open_desktop() as d:
        text = "The display shows 14."
        assert await d.ok(d.app, "summary", {"text": text}) == text
        names = {t.name for t in (await d.app.list_tools()).tools}
        assert names == {
            "click_input",
            "click_on_coordinates",
            "drag_on_coordinates",
            "set_edit_text",
            "keyboard_input",
            "wheel_mouse_input",
            "texts",
            "wait",
            "summary",
        }
        assert {t.name for t in (await d.host.list_tools()).tools} == {
            "select_application_window",
            "launch_application",
            "close_application_window",
        }
        assert {t.name for t in (await d.collector.list_tools()).tools} == {
            "get_desktop_app_info",
            "get_desktop_app_target_info",
            "get_app_window_info",
            "get_app_window_controls_info",
            "get_app_window_controls_target_info",
            "capture_window_screenshot",
            "capture_desktop_screenshot",
            "get_ui_tree",
        }
