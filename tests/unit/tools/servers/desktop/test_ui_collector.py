"""UICollector and HostUIExecutor through real in-process MCP clients, over a fake desktop."""

from __future__ import annotations

import base64

from starweave.tools.servers.desktop import UIState

from .desktop_kit import open_desktop


async def test_desktop_app_info_uses_one_based_ids_and_drops_empty_windows() -> None:
    async with open_desktop() as d:
        windows = await d.ok(d.collector, "get_desktop_app_info")
        assert windows == [
            {"id": "1", "name": "Calculator", "type": "Frame", "kind": "window"},
            {"id": "2", "name": "notes.txt - Mousepad", "type": "Window", "kind": "window"},
        ]
        everything = await d.ok(d.collector, "get_desktop_app_info", {"remove_empty": False})
        assert [w["id"] for w in everything] == ["1", "2", "3"] and everything[2]["name"] == ""
        d.backend.windows.pop(0)
        cached = await d.ok(d.collector, "get_desktop_app_info", {"refresh_app_windows": False})
        assert len(cached) == 3  # the last list, not the desktop's current one
        fresh = await d.ok(d.collector, "get_desktop_app_info")
        assert fresh == [{"id": "1", "name": "notes.txt - Mousepad", "type": "Window", "kind": "window"}]


async def test_desktop_app_target_info_and_listing_failure() -> None:
    async with open_desktop() as d:
        targets = await d.ok(d.collector, "get_desktop_app_target_info")
        assert targets[0] == {
            "kind": "window",
            "id": "1",
            "name": "Calculator",
            "type": "Frame",
            "rect": [100, 50, 500, 650],
        }
        d.backend.failures["list_windows"] = RuntimeError("registry gone")
        error = await d.error(d.collector, "get_desktop_app_info")
        assert "Failed to list the desktop windows: RuntimeError: registry gone" in error


async def test_select_application_window_errors_word_for_word() -> None:
    async with open_desktop() as d:
        assert "Window id is required for select_application_window" in await d.error(
            d.host, "select_application_window", {"id": "", "name": "x"}
        )
        assert "No application windows available. Please call get_desktop_app_info first." in await d.error(
            d.host, "select_application_window", {"id": "1", "name": "Calculator"}
        )
        await d.ok(d.collector, "get_desktop_app_info")
        assert "Control with id '7' not found. Available control ids: ['1', '2']" in await d.error(
            d.host, "select_application_window", {"id": "7", "name": "Calculator"}
        )
        d.backend.failures["focus_window"] = RuntimeError("window vanished")
        error = await d.error(d.host, "select_application_window", {"id": "1", "name": "Calculator"})
        assert "Failed to set focus on window: RuntimeError: window vanished" in error
        assert d.state.selected_app_window is None


async def test_select_application_window_result_and_name_mismatch() -> None:
    async with open_desktop() as d:
        await d.ok(d.collector, "get_desktop_app_info")
        selected = await d.ok(
            d.host, "select_application_window", {"id": "2", "name": "notes.txt - Mousepad"}
        )
        assert selected["root_name"] == "Mousepad"  # no process: the window class stands in
        info = selected["window_info"]
        assert info["annotation_id"] == "2" and info["is_active"] is True and "warning" not in selected
        assert info["rectangle"] == {"x": 590, "y": 40, "width": 520, "height": 500}
        assert set(info) == {
            "annotation_id",
            "name",
            "title",
            "handle",
            "class_name",
            "process_id",
            "is_visible",
            "is_minimized",
            "is_maximized",
            "is_active",
            "rectangle",
            "text_content",
            "control_type",
        }
        assert d.backend.focused == "w-edit" and d.state.selected_annotation_id == "2"
        other = await d.ok(d.host, "select_application_window", {"id": "1", "name": "Calc"})
        assert other["warning"] == "Window id '1' is named 'Calculator', not 'Calc'; selected window '1'."


async def test_root_name_is_the_process_name() -> None:
    import os

    import psutil

    async with open_desktop() as d:
        d.backend.windows[0].process_id = os.getpid()
        await d.ok(d.collector, "get_desktop_app_info")
        selected = await d.ok(d.host, "select_application_window", {"id": "1", "name": "Calculator"})
        assert selected["root_name"] == psutil.Process().name()


async def test_window_tools_need_a_selected_window() -> None:
    async with open_desktop() as d:
        assert "Error: No window selected" in await d.error(d.collector, "get_app_window_info")
        assert "Error: No window selected" in await d.error(d.collector, "get_app_window_controls_info")
        assert await d.ok(d.collector, "capture_window_screenshot") == "Error: No window selected"
        assert await d.ok(d.collector, "get_ui_tree") == {"error": "No window selected"}


async def test_window_info_and_controls_follow_the_field_list() -> None:
    async with open_desktop() as d:
        await d.select(walk=False)
        d.backend.windows[0].rectangle.x = 120  # moved since it was selected
        info = await d.ok(
            d.collector,
            "get_app_window_info",
            {"field_list": ["control_text", "control_type", "control_rect", "is_enabled"]},
        )
        assert info == {
            "control_text": "Calculator",
            "control_type": "Frame",
            "control_rect": {"x": 120, "y": 50, "width": 400, "height": 600},
            "is_enabled": True,
        }
        controls = await d.ok(
            d.collector,
            "get_app_window_controls_info",
            {"field_list": ["label", "control_text", "control_rect", "is_enabled"]},
        )
        assert controls[0] == {
            "label": "1",
            "control_text": "7",
            "control_rect": [110, 200, 160, 240],
            "is_enabled": True,
        }
        assert controls[4]["is_enabled"] is False and list(d.state.control_dict) == ["1", "2", "3", "4", "5"]
        default = await d.ok(d.collector, "get_app_window_controls_info")
        assert set(default[0]) == {
            "label",
            "control_text",
            "control_type",
            "control_rect",
            "is_enabled",
            "is_visible",
        }
        error = await d.error(
            d.collector, "get_app_window_controls_info", {"field_list": ["label", "colour"]}
        )
        assert "Unknown control field(s) ['colour']" in error
        assert "Unknown window field(s) ['nope']" in await d.error(
            d.collector, "get_app_window_info", {"field_list": ["nope"]}
        )


async def test_controls_target_info_and_walk_failure() -> None:
    async with open_desktop() as d:
        await d.select(window_id="2", name="notes.txt - Mousepad", walk=False)
        targets = await d.ok(
            d.collector, "get_app_window_controls_target_info", {"field_list": ["automation_id", "actions"]}
        )
        assert targets[1] == {
            "kind": "control",
            "id": "2",
            "name": "Save",
            "type": "Button",
            "rect": [600, 80, 640, 110],
            "source": "a11y",
            "automation_id": "save",
            "actions": ["click"],
        }
        d.backend.failures["window_controls"] = TimeoutError("walk took too long")
        error = await d.error(d.collector, "get_app_window_controls_info")
        assert (
            "Failed to read the controls of window 'notes.txt - Mousepad': TimeoutError: walk took" in error
        )


async def test_screenshots_are_base64_png() -> None:
    async with open_desktop() as d:
        desktop_png = base64.b64decode(await d.ok(d.collector, "capture_desktop_screenshot"))
        assert desktop_png.startswith(b"\x89PNG\r\n\x1a\n")
        await d.select(walk=False)
        window_png = base64.b64decode(await d.ok(d.collector, "capture_window_screenshot"))
        assert window_png.startswith(b"\x89PNG") and window_png != desktop_png
        assert ("screenshot", "w-calc") in d.backend.calls and ("screenshot", None) in d.backend.calls
        d.backend.failures["screenshot"] = OSError("XGetImage failed")
        assert await d.ok(d.collector, "capture_window_screenshot") == (
            "Error capturing screenshot: OSError: XGetImage failed"
        )
        shot = await d.ok(d.collector, "capture_desktop_screenshot", {"all_screens": False})
        assert shot.startswith("Error capturing screenshot: ")


async def test_ui_tree_and_its_failure() -> None:
    async with open_desktop() as d:
        await d.select(walk=False)
        tree = await d.ok(d.collector, "get_ui_tree")
        assert tree["name"] == "Calculator" and tree["children"][0] == {
            "control_type": "Button",
            "name": "7",
            "children": [],
        }
        d.backend.failures["ui_tree"] = RuntimeError("boom")
        assert await d.ok(d.collector, "get_ui_tree") == {
            "error": "Error getting UI tree: RuntimeError: boom"
        }


async def test_a_missing_backend_is_a_clear_error() -> None:
    def no_backend() -> object:
        raise RuntimeError("no X display")

    async with open_desktop(UIState(backend_factory=no_backend)) as d:  # type: ignore[arg-type]
        error = await d.error(d.collector, "get_desktop_app_info")
        assert "The desktop backend could not start: RuntimeError: no X display" in error


async def test_launch_and_close_application() -> None:
    async with open_desktop() as d:
        launched = await d.ok(d.host, "launch_application", {"command": "gedit notes.txt", "wait_seconds": 5})
        assert launched["window"] == {"name": "Gedit", "type": "Window", "process_id": launched["pid"]}
        assert "its window is 'Gedit'" in launched["message"]
        d.backend.launch_delay = -1  # the next application never shows a window
        silent = await d.ok(d.host, "launch_application", {"command": "daemon", "wait_seconds": 0})
        assert silent["window"] is None and "no new window appeared" in silent["message"]
        assert "Application command cannot be empty." in await d.error(
            d.host, "launch_application", {"command": "  "}
        )
        d.backend.failures["launch"] = FileNotFoundError("nosuchapp")
        error = await d.error(d.host, "launch_application", {"command": "nosuchapp"})
        assert "Failed to launch application: FileNotFoundError: nosuchapp" in error

        await d.select(window_id="1", name="Calculator")
        closed = await d.ok(d.host, "close_application_window", {"id": "1", "name": "Calc"})
        assert closed == (
            "Closed window 'Calculator' (id '1'). Warning: window id '1' is named 'Calculator', not 'Calc'."
        )
        assert d.state.selected_app_window is None and d.state.control_dict == {}
        assert [w.name for w in d.backend.windows].count("Calculator") == 0
        assert "Control with id '1' not found" in await d.error(
            d.host, "close_application_window", {"id": "1", "name": "Calculator"}
        )
        d.backend.failures["close_window"] = RuntimeError("refused")
        assert "Failed to close window 'notes.txt - Mousepad': RuntimeError: refused" in await d.error(
            d.host, "close_application_window", {"id": "2", "name": "notes.txt - Mousepad"}
        )
        assert "Window id is required for close_application_window" in await d.error(
            d.host, "close_application_window", {"id": "", "name": ""}
        )


async def test_a_window_closed_behind_our_back_is_no_longer_selected() -> None:
    async with open_desktop() as d:
        await d.select(window_id="1", name="Calculator")
        closed = d.backend.windows[0].id
        d.backend.windows = [w for w in d.backend.windows if w.id != closed]  # the user quit the app
        error = await d.error(d.collector, "get_app_window_controls_info", {"field_list": ["label"]})
        assert "The selected window 'Calculator' is gone (it was closed); select a window again." in error
        assert d.state.selected_app_window is None and d.state.control_dict == {}
        error = await d.error(d.app, "click_input", {"id": "1", "name": "7"})
        assert "Error: No window selected. Call select_application_window first." in error

        # A window merely missing from one listing stays selected.
        await d.select(window_id="1", name="Editor", walk=False)
        kept = list(d.backend.windows)
        d.backend.windows = []
        await d.ok(d.collector, "get_desktop_app_info")
        assert d.state.selected_app_window is not None
        d.backend.windows = kept
        await d.ok(d.collector, "get_app_window_controls_info", {"field_list": ["label"]})
