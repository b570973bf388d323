"""The Linux desktop backend against real GTK apps (gnome-calculator, mousepad) under Xvfb + AT-SPI."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from helpers.desktop_env import DesktopSession
from helpers.desktop_env import desktop_backend as desktop_backend
from helpers.desktop_env import desktop_session as desktop_session
from PIL import Image

from starweave.tools.desktop.linux.backend import LinuxDesktopBackend
from starweave.tools.desktop.model import ControlInfo, Rect, WindowInfo
from starweave.tools.desktop.settle import apoll_until

pytestmark = pytest.mark.desktop


def _inside(rect: Rect, point: tuple[int, int]) -> bool:
    x, y = point
    return rect.left <= x < rect.right and rect.top <= y < rect.bottom


def _by_name(controls: list[ControlInfo], control_type: str) -> dict[str, ControlInfo]:
    return {c.name: c for c in controls if c.control_type == control_type}


async def test_list_walk_click_calculator(
    desktop_session: DesktopSession, desktop_backend: LinuxDesktopBackend
) -> None:
    app = desktop_session.launch("gnome-calculator", position=(600, 30))
    try:
        # Generous polls (they return as soon as the condition holds): the CI machine is shared and slow.
        calc = await apoll_until(lambda: _window_info(desktop_backend, app.pid), timeout=20)
        assert calc is not None, "the calculator never appeared on the AT-SPI desktop"
        assert calc.id == app.window_id and calc.title == "Calculator"
        await desktop_backend.focus_window(calc.id)

        async def keypad() -> list[ControlInfo] | None:
            # GTK builds the keypad after the window appears: poll until the buttons are there.
            found = await asyncio.wait_for(desktop_backend.window_controls(calc.id), 10)
            return found if {"2", "3", "+", "="} <= set(_by_name(found, "Button")) else None

        controls = await apoll_until(keypad, timeout=30)
        assert controls is not None, "the calculator's keypad never appeared"
        buttons = _by_name(controls, "Button")
        # GTK4 extents are window-relative; ours are on screen, inside the moved window.
        assert all(_inside(calc.rectangle, buttons[k].rect.center) for k in "23+=")
        display = next(c for c in controls if c.control_type == "Edit")
        for key in ["2", "+", "3", "="]:
            await asyncio.wait_for(desktop_backend.click(buttons[key].id), 10)
        text = await apoll_until(lambda: _text_if(desktop_backend, display.id, "5"), timeout=15)
        assert text == "5"
        tree = await desktop_backend.ui_tree(calc.id)
        assert tree["children"] and tree["rectangle"]["left"] == calc.rectangle.x
        shot = Image.open(io.BytesIO(await desktop_backend.screenshot(calc.id)))
        assert shot.size == (calc.rectangle.width, calc.rectangle.height)
        desktop = Image.open(io.BytesIO(await desktop_backend.screenshot(None)))
        assert desktop.size == (1280, 1024)
        assert await asyncio.wait_for(desktop_backend.close_window(calc.id), 10)
        assert await apoll_until(lambda: _gone(desktop_backend, calc.id), timeout=10)
    finally:
        desktop_session.stop(app)


async def _window_info(backend: LinuxDesktopBackend, pid: int) -> WindowInfo | None:
    return next((w for w in await backend.list_windows() if w.process_id == pid), None)


async def _gone(backend: LinuxDesktopBackend, window_id: str) -> bool:
    return all(w.id != window_id for w in await backend.list_windows())


async def _text_if(backend: LinuxDesktopBackend, control_id: str, expected: str) -> str | None:
    text = await backend.get_text(control_id)
    return text if text == expected else None


async def test_mousepad_type_and_save(
    desktop_session: DesktopSession, desktop_backend: LinuxDesktopBackend, tmp_path: Path
) -> None:
    app = desktop_session.launch("mousepad", position=(0, 0))
    target = tmp_path / "note.txt"
    try:
        assert await apoll_until(lambda: _window_info(desktop_backend, app.pid), timeout=10)
        await desktop_backend.focus_window(app.window_id)
        controls = await desktop_backend.window_controls(app.window_id)
        editor = next(c for c in controls if c.control_type == "Edit")
        await asyncio.wait_for(desktop_backend.type_keys("hello starweave{ENTER}second line", editor.id), 10)
        assert await desktop_backend.get_text(editor.id) == "hello starweave\nsecond line"
        await asyncio.wait_for(desktop_backend.type_keys("{VK_CONTROL}s"), 10)
        dialog = await apoll_until(lambda: _window_of(desktop_backend, app.pid, "file chooser"), timeout=30)
        assert dialog is not None, "the Save As dialog did not open"
        fields = await desktop_backend.window_controls(dialog)
        name_field = next(c for c in fields if c.control_type == "Edit" and c.is_enabled)
        await desktop_backend.set_text(name_field.id, str(target), clear=True)
        save = await apoll_until(lambda: _enabled_button(desktop_backend, dialog, "Save"), timeout=30)
        assert save is not None, "the Save button never became enabled"
        await desktop_backend.click(save.id)
        saved = await apoll_until(lambda: _file_text(target), timeout=30)
        assert saved is not None and saved.rstrip("\n") == "hello starweave\nsecond line"
    finally:
        desktop_session.stop(app)


async def _window_of(backend: LinuxDesktopBackend, pid: int, kind: str) -> str | None:
    return next(
        (w.id for w in await backend.list_windows() if w.process_id == pid and w.class_name == kind), None
    )


async def _enabled_button(backend: LinuxDesktopBackend, window_id: str, name: str) -> ControlInfo | None:
    controls = await backend.window_controls(window_id)
    return next((c for c in controls if c.control_type == "Button" and c.name == name and c.is_enabled), None)


async def _file_text(path: Path) -> str | None:
    return await asyncio.to_thread(
        lambda: path.read_text() if path.exists() and path.stat().st_size else None
    )


async def test_walk_of_main_window_includes_its_modal_dialog(
    desktop_session: DesktopSession, desktop_backend: LinuxDesktopBackend, tmp_path: Path
) -> None:
    app = desktop_session.launch("mousepad", position=(0, 0))
    target = tmp_path / "dialog.txt"
    try:
        assert await apoll_until(lambda: _window_info(desktop_backend, app.pid), timeout=10)
        await desktop_backend.focus_window(app.window_id)
        controls = await desktop_backend.window_controls(app.window_id)
        editor = next(c for c in controls if c.control_type == "Edit")
        await asyncio.wait_for(desktop_backend.type_keys("from the dialog", editor.id), 10)
        await asyncio.wait_for(desktop_backend.type_keys("^s"), 10)
        assert await apoll_until(lambda: _window_of(desktop_backend, app.pid, "file chooser"), timeout=30)
        # The agent keeps walking its main window: the Save As dialog's controls come after its own.
        main_ids = {c.id for c in controls}
        walked = await desktop_backend.window_controls(app.window_id)
        name_field = next(
            c for c in walked if c.control_type == "Edit" and c.is_enabled and c.id != editor.id
        )
        assert int(name_field.id) > int(editor.id) and len(walked) > len(main_ids)
        await desktop_backend.set_text(name_field.id, str(target), clear=True)
        save = await apoll_until(lambda: _enabled_button(desktop_backend, app.window_id, "Save"), timeout=30)
        assert save is not None, "the dialog's Save button is not among the main window's walked controls"
        # Clicking must focus the dialog, not raise the main window over it.
        await desktop_backend.click(save.id)
        saved = await apoll_until(lambda: _file_text(target), timeout=30)
        assert saved is not None and saved.rstrip("\n") == "from the dialog"
        assert not await _window_of(desktop_backend, app.pid, "file chooser")
    finally:
        desktop_session.stop(app)
