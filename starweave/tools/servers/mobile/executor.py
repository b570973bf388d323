"""MobileExecutor ("Mobile Executor MCP Server"): the MobileAgent's action tools (spec C §13.9).

Each tool returns ``{"success", "action", "output" | "message", "error"?}`` and never raises: a
refused argument or a failed adb command is ``{"success": false, "action", "error"}``. Every tool
runs one fixed adb command through :class:`starweave.tools.mobile.Adb`; none takes a command line.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from starweave.tools.mobile.adb import ALLOWED_KEYCODES, AdbError, check_package, escape_input_text
from starweave.tools.servers.mobile.collector import list_apps
from starweave.tools.servers.mobile.state import CACHE_TYPES, MobileServerState
from starweave.tools.servers.mobile.uitree import MobileControl

EXECUTOR_NAME = "Mobile Executor MCP Server"
CLEAR_TEXT_DELETES = 50
#: Sent after the focusing tap (never offered to the model: press_key keeps its allow-list): the
#: tap leaves the cursor where it landed, mid-text, and DEL only erases what lies before it.
MOVE_END = "KEYCODE_MOVE_END"
MAX_WAIT_SECONDS = 60.0
ControlId = Annotated[str, Field(description="Id of the control in the current control list.")]
ControlName = Annotated[str, Field(description="Name of that control, as listed.")]


def _failure(action: str, error: str) -> dict[str, Any]:
    return {"success": False, "action": action, "error": error}


async def _act(state: MobileServerState, action: str, run: Callable[[], Awaitable[str]]) -> dict[str, Any]:
    """Run one screen-changing adb command; the caches of the old screen go either way."""
    try:
        output = await run()
    except AdbError as exc:
        return _failure(action, str(exc))
    finally:
        state.after_action()
    return {"success": True, "action": action, "output": output.strip()}


def _normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def resolve_app_name(name: str, packages: list[str]) -> str | None:
    """The package whose display name is ``name``, or None.

    The display name is derived from the package's LAST segment (``com.example.notes`` -> "notes"),
    compared without case, spaces or punctuation (the shortest such package first); failing that,
    the first package with a segment that starts with the name. ``dumpsys package`` labels are not
    read: one call per package is slow.
    """
    wanted = _normalise(name)
    if not wanted:
        return None
    exact = [p for p in packages if _normalise(p.rsplit(".", 1)[-1]) == wanted]
    if exact:
        # The app itself before its helpers: com.android.settings, not com.android.providers.settings.
        return min(exact, key=lambda p: (p.count("."), p))
    partial = [p for p in packages if any(_normalise(seg).startswith(wanted) for seg in p.split(".")[1:])]
    return sorted(partial)[0] if partial else None


async def launch_target(state: MobileServerState, package_name: str, id: str | None) -> tuple[str, list[str]]:
    """The package ``launch_app(package_name, id)`` starts, and the warnings to report; AdbError
    when it cannot start one.

    An ``id`` of the last app list must name the same app as ``package_name`` (the package, or a
    display name resolving to it): a mismatch is refused rather than guessed. A display name is
    resolved among the user's apps, then among the system apps (Settings, Phone, Camera...).
    """
    package = package_name.strip()
    listed = state.last_apps.get(str(id)) if id is not None else None
    if listed is not None:
        if package and listed != package and resolve_app_name(package, [listed]) is None:
            raise AdbError(f"App id {id} is {listed}, not '{package_name}'; name one app (its id or name)")
        return listed, []
    if "." in package:
        return check_package(package), []
    try:
        packages = await list_apps(state)
        resolved = resolve_app_name(package, packages)
        if resolved is None:
            packages = await list_apps(state, include_system_apps=True)
            resolved = resolve_app_name(package, packages)
    except AdbError as exc:
        raise AdbError(f"Cannot resolve the app name '{package_name}': {exc}") from None
    if resolved is None:
        raise AdbError(f"No installed app matches '{package_name}'; installed: {packages}")
    return check_package(resolved), [f"Resolved app name '{package_name}' to package '{resolved}'"]


def typed_chunks(text: str) -> list[str]:
    """``text`` split so that ``input text`` types it exactly; AdbError for text it cannot type.

    ``input text`` turns every ``%s`` into a space and has no escape for a literal one, so the
    text is cut after each such ``%``: ``"50%s"`` is typed as ``"50%"`` then ``"s"``. It types only
    ASCII on a real phone (other characters are dropped or crash it while adb reports success).
    """
    escape_input_text(text)  # empty, too long, control characters: the adb layer's own refusals
    bad = next((ch for ch in text if not ch.isascii()), None)
    if bad is not None:
        raise AdbError(
            f"text to type contains {bad!r} (U+{ord(bad):04X}): adb's `input text` types ASCII only; "
            "rephrase in ASCII or type it with the phone's keyboard"
        )
    parts = text.split("%s")
    return [("s" if i else "") + part + ("%" if i < len(parts) - 1 else "") for i, part in enumerate(parts)]


def _control_info(control: MobileControl, with_rect: bool = True) -> dict[str, Any]:
    info: dict[str, Any] = {"id": control.id, "name": control.name, "type": control.type}
    if with_rect:
        info["rect"] = list(control.rect)
    return info


def _missing_control(state: MobileServerState, action: str, control_id: str) -> dict[str, Any]:
    known = [c.id for c in state.controls.value or []]
    return _failure(
        action,
        f"Control with id '{control_id}' not found in the cached controls (available ids: {known}); "
        "the screen changed since they were read: call get_app_window_controls_target_info again",
    )


def _name_warning(control: MobileControl, control_name: str) -> str | None:
    if control_name and control_name != control.name:
        return f"Control name mismatch: id {control.id} is '{control.name}', not '{control_name}'"
    return None


def create_executor_server(state: MobileServerState) -> MCPServer:
    """Build MobileExecutor on ``state`` (shared with the MobileDataCollector of the same device)."""
    srv = MCPServer(EXECUTOR_NAME, log_level="WARNING")
    adb = state.adb

    @srv.tool()
    async def tap(
        x: Annotated[int, Field(description="Horizontal pixel from the left edge.")],
        y: Annotated[int, Field(description="Vertical pixel from the top edge.")],
    ) -> dict[str, Any]:
        """Tap the screen at (x, y)."""
        return await _act(state, f"tap({x}, {y})", lambda: adb.tap(x, y))

    @srv.tool()
    async def swipe(
        start_x: int,
        start_y: int,
        end_x: int,
        end_y: int,
        duration: Annotated[int, Field(description="Milliseconds the swipe takes.")] = 300,
    ) -> dict[str, Any]:
        """Swipe from (start_x, start_y) to (end_x, end_y), e.g. to scroll a list."""
        action = f"swipe({start_x}, {start_y}, {end_x}, {end_y}, {duration}ms)"
        return await _act(state, action, lambda: adb.swipe(start_x, start_y, end_x, end_y, duration))

    @srv.tool()
    async def type_text(
        text: Annotated[str, Field(description="The text to type (one line; press ENTER with press_key).")],
        control_id: ControlId,
        control_name: ControlName,
        clear_current_text: Annotated[bool, Field(description="Delete the field's text first.")] = False,
    ) -> dict[str, Any]:
        """Tap the text field control_id to focus it, then type text into it."""
        action = f"type_text({text!r}, control {control_id})"
        control = state.find_control(control_id)
        if control is None:
            return _missing_control(state, action, control_id)

        x, y = control.center

        async def run() -> str:
            chunks = typed_chunks(text)  # refuse bad text before touching the screen
            await adb.tap(x, y)
            await adb.shell("input", "keyevent", MOVE_END)
            if clear_current_text:
                await adb.keyevent("KEYCODE_DEL", times=CLEAR_TEXT_DELETES)
            outputs = [await adb.input_text(chunk) for chunk in chunks]
            return "".join(outputs)

        result = await _act(state, action, run)
        if result["success"]:
            result["message"] = f"Clicked control '{control.name}' at ({x}, {y}) | Typed text: {text}"
            result["control_info"] = _control_info(control, with_rect=False)
            warning = _name_warning(control, control_name)
            if warning:
                result["warning"] = warning
        return result

    @srv.tool()
    async def launch_app(
        package_name: Annotated[
            str, Field(description='Package (com.example.notes) or app name ("Notes") to launch.')
        ],
        id: Annotated[str | None, Field(description="Id of the app in the last app list (optional).")] = None,
    ) -> dict[str, Any]:
        """Launch an installed app by package name or display name."""
        action = f"launch_app({package_name!r})"
        try:
            package, warnings = await launch_target(state, package_name, id)
        except AdbError as exc:
            return _failure(action, str(exc))
        result = await _act(state, action, lambda: adb.launch(package))
        result.update(package_name=package, app_info={"package": package, "id": id})
        if warnings:
            result["warning"] = "; ".join(warnings)
        return result

    @srv.tool()
    async def resolve_app(
        package_name: Annotated[str, Field(description="As launch_app takes it.")],
        id: Annotated[str | None, Field(description="As launch_app takes it.")] = None,
    ) -> dict[str, Any]:
        """The package launch_app(package_name, id) would start, without starting it (the agent
        checks that package for CONFIRM)."""
        action = f"resolve_app({package_name!r})"
        try:
            package, warnings = await launch_target(state, package_name, id)
        except AdbError as exc:
            return _failure(action, str(exc))
        return {"success": True, "action": action, "package_name": package, "warning": "; ".join(warnings)}

    @srv.tool()
    async def press_key(
        key_code: Annotated[str, Field(description=f"One of: {', '.join(ALLOWED_KEYCODES)}.")],
    ) -> dict[str, Any]:
        """Press a hardware or navigation key (HOME, BACK, ENTER, DEL...)."""
        return await _act(state, f"press_key({key_code})", lambda: adb.keyevent(key_code))

    @srv.tool()
    async def click_control(
        control_id: ControlId,
        control_name: ControlName,
    ) -> dict[str, Any]:
        """Tap the centre of control control_id (a name mismatch gives a warning but still clicks)."""
        action = f"click_control({control_id}, {control_name!r})"
        control = state.find_control(control_id)
        if control is None:
            return _missing_control(state, action, control_id)
        result = await _act(state, action, lambda: adb.tap(*control.center))
        result["control_info"] = _control_info(control)
        if result["success"]:
            result["message"] = f"Clicked control '{control.name}' at {control.center}"
        warning = _name_warning(control, control_name)
        if warning:
            result["warning"] = warning
        return result

    @srv.tool()
    async def wait(
        seconds: Annotated[float, Field(description="How long to wait, 0 to 60 seconds.")] = 1.0,
    ) -> dict[str, Any]:
        """Wait for the screen to settle (an app loading, an animation)."""
        action = f"wait({seconds})"
        if not 0 <= seconds <= MAX_WAIT_SECONDS:
            return _failure(action, f"seconds must be between 0 and {MAX_WAIT_SECONDS:g}, got {seconds}")
        try:
            await asyncio.sleep(seconds)
        finally:
            state.after_action()  # the screen went on changing (an app loading): read it anew
        return {"success": True, "action": action, "output": f"Waited {seconds} seconds"}

    @srv.tool()
    async def invalidate_cache(
        cache_type: Annotated[str, Field(description=f"One of: {' | '.join(CACHE_TYPES)}.")] = "all",
    ) -> dict[str, Any]:
        """Forget cached device data so the next read goes to the device."""
        action = f"invalidate_cache({cache_type})"
        if cache_type not in CACHE_TYPES:
            return _failure(
                action, f"unknown cache type {cache_type!r}; use one of: {', '.join(CACHE_TYPES)}"
            )
        cleared = state.invalidate(cache_type)
        return {"success": True, "action": action, "message": f"Cleared: {', '.join(cleared)}"}

    return srv
