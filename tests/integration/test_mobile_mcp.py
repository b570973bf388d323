"""The mobile MCP servers on the simulated phone: tool result shapes, the exact commands sent, the
local registration of mcp.yaml's MobileAgent.default, and `starweave mcp serve mobile` over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from typing import Any

import httpx
from helpers.android_sim import SimulatedPhone
from helpers.android_sim import android_phone as android_phone
from mcp import Client

from starweave.config.models import ShellConfig
from starweave.tools.mcp_manager import default_registry
from starweave.tools.mobile import Adb
from starweave.tools.servers.mobile import (
    MobileRegistry,
    MobileServerState,
    create_data_collector_server,
    create_executor_server,
    mobile_state,
)


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    content = result.structured_content
    return content.get("result", content) if isinstance(content, dict) else content


async def test_collect_then_act_on_the_shared_state(android_phone: SimulatedPhone) -> None:
    android_phone.update(screen="notes", note_text="old")
    state = MobileServerState(android_phone.adb_client())
    async with (
        Client(create_data_collector_server(state)) as data,
        Client(create_executor_server(state)) as action,
    ):
        shot = (await data.call_tool("capture_screenshot", {})).content[0].text
        assert shot.startswith("data:image/png;base64,iVBORw0KGgo")
        tree = _data(await data.call_tool("get_ui_tree", {}))
        assert tree["success"] is True and tree["format"] == "xml" and "<hierarchy" in tree["ui_tree"]
        info = _data(await data.call_tool("get_device_info", {}))
        assert info["from_cache"] is False
        assert info["device_info"] == {
            "model": "Starweave SimPhone",
            "android_version": "14",
            "sdk_version": "34",
            "screen_size": "Physical size: 1080x2400",
            "screen_density": "Physical density: 420",
            "battery_level": "85",
            "battery_status": "2",
        }
        assert _data(await data.call_tool("get_device_info", {}))["from_cache"] is True
        apps = _data(await data.call_tool("get_mobile_app_target_info", {"filter": "NOTES"}))
        assert apps == [
            {"kind": "third_party_agent", "id": "1", "name": "com.example.notes", "type": "com.example.notes"}
        ]
        controls = _data(await data.call_tool("get_app_window_controls_target_info", {}))
        assert [(c["id"], c["name"], c["type"]) for c in controls] == [
            ("1", "Notes", "TextView"),
            ("2", "old", "EditText"),
            ("3", "Save", "Button"),
            ("4", "Delete", "Button"),
            ("5", "No notes yet", "TextView"),
        ]
        assert controls[3]["dangerous"] == "delete"

        typed = _data(
            await action.call_tool(
                "type_text",
                {
                    "text": "milk; $(reboot)",
                    "control_id": "2",
                    "control_name": "old",
                    "clear_current_text": True,
                },
            )
        )
        assert typed["success"] is True
        assert typed["message"] == "Clicked control 'old' at (540, 380) | Typed text: milk; $(reboot)"
        assert typed["control_info"] == {"id": "2", "name": "old", "type": "EditText"}
        assert android_phone.state()["note_text"] == "milk; $(reboot)"  # cleared, then typed literally
        # The controls were read before the typing: after it, the ids are gone until collected again.
        stale = _data(await action.call_tool("click_control", {"control_id": "3", "control_name": "Save"}))
        assert stale["success"] is False and "get_app_window_controls_target_info" in stale["error"]
        await data.call_tool("get_app_window_controls_target_info", {})
        clicked = _data(await action.call_tool("click_control", {"control_id": "3", "control_name": "Saved"}))
        assert clicked["success"] is True
        assert clicked["control_info"] == {
            "id": "3",
            "name": "Save",
            "type": "Button",
            "rect": [60, 500, 520, 640],
        }
        assert "mismatch" in clicked["warning"]
    assert android_phone.state()["notes"] == ["milk; $(reboot)"]
    remote = android_phone.shell_commands()
    assert ["input", "tap", "540", "380"] in remote
    inputs = [r for r in remote if r[0] == "input"]
    assert inputs[:4] == [
        ["input", "tap", "540", "380"],
        ["input", "keyevent", "KEYCODE_MOVE_END"],
        ["input", "keyevent", *["KEYCODE_DEL"] * 50],
        ["input", "text", "milk;%s$(reboot)"],
    ]
    assert remote[-1] == ["input", "tap", "290", "570"]


async def test_action_results_and_errors(android_phone: SimulatedPhone) -> None:
    state = MobileServerState(android_phone.adb_client())
    async with Client(create_executor_server(state)) as action:

        async def call(tool: str, **args: Any) -> dict[str, Any]:
            result: dict[str, Any] = _data(await action.call_tool(tool, args))
            return result

        assert await call("tap", x=5, y=6) == {"success": True, "action": "tap(5, 6)", "output": ""}
        assert (await call("swipe", start_x=500, start_y=1500, end_x=500, end_y=500))["action"] == (
            "swipe(500, 1500, 500, 500, 300ms)"
        )
        launched = await call("launch_app", package_name="Calculator")
        assert launched["success"] is True and launched["package_name"] == "com.example.calculator"
        assert launched["warning"] == "Resolved app name 'Calculator' to package 'com.example.calculator'"
        assert android_phone.state()["screen"] == "calculator"
        missing = await call("launch_app", package_name="Camera")
        assert missing["success"] is False and missing["error"].startswith(
            "No installed app matches 'Camera'"
        )
        hostile = await call("launch_app", package_name="com.x;reboot")
        assert hostile["success"] is False and "invalid package name" in hostile["error"]
        assert (await call("press_key", key_code="KEYCODE_BACK"))["success"] is True
        assert android_phone.state()["screen"] == "launcher"
        refused = await call("press_key", key_code="KEYCODE_CAMERA")
        assert refused["success"] is False and "not allowed" in refused["error"]
        newline = await call("type_text", text="a", control_id="9", control_name="x")
        assert newline["success"] is False and "not found" in newline["error"]
        assert (await call("wait", seconds=0))["success"] is True
        assert (await call("wait", seconds=-1))["success"] is False
        assert (await call("invalidate_cache", cache_type="apps"))["message"] == "Cleared: apps"
        assert (await call("invalidate_cache", cache_type="bogus"))["success"] is False
        # An app id from the last list must name the app given: a mismatch is refused, not guessed
        # (the agent checks the package it names for CONFIRM; another one must not start instead).
        state.last_apps = {"1": "com.example.notes"}
        by_id = await call("launch_app", package_name="notes", id="1")
        assert by_id["success"] is True and by_id["package_name"] == "com.example.notes"
        assert "warning" not in by_id
        mismatch = await call("launch_app", package_name="com.example.calculator", id="1")
        assert mismatch == {
            "success": False,
            "action": "launch_app('com.example.calculator')",
            "error": (
                "App id 1 is com.example.notes, not 'com.example.calculator'; name one app (its id or name)"
            ),
        }
        resolved = await call("resolve_app", package_name="Calculator")
        assert resolved["success"] is True and resolved["package_name"] == "com.example.calculator"
    assert android_phone.state()["screen"] == "notes"
    assert not any("KEYCODE_CAMERA" in r for r in android_phone.shell_commands())
    monkeys = [r for r in android_phone.shell_commands() if r[0] == "monkey"]
    assert [m[2] for m in monkeys] == ["com.example.calculator", "com.example.notes"]


async def test_failed_adb_gives_the_error_shapes(android_phone: SimulatedPhone) -> None:
    android_phone.update(adb_state="offline")
    state = MobileServerState(android_phone.adb_client())
    async with (
        Client(create_data_collector_server(state)) as data,
        Client(create_executor_server(state)) as action,
    ):
        tree = _data(await data.call_tool("get_ui_tree", {}))
        assert tree["success"] is False and "device offline" in tree["error"]
        tapped = _data(await action.call_tool("tap", {"x": 1, "y": 1}))
        assert tapped == {
            "success": False,
            "action": "tap(1, 1)",
            "error": "`adb -s emulator-5554 shell input tap 1 1` failed (exit 1): adb: device offline.",
        }
        controls = await data.call_tool("get_app_window_controls_target_info", {})
        assert controls.is_error and "device offline" in controls.content[0].text


async def test_the_device_state_comes_from_adbs_device_list(android_phone: SimulatedPhone) -> None:
    state = MobileServerState(android_phone.adb_client())
    async with Client(create_data_collector_server(state)) as data:
        assert _data(await data.call_tool("get_device_state", {})) == {"success": True, "state": "device"}
        android_phone.update(adb_state="unauthorized")
        assert _data(await data.call_tool("get_device_state", {}))["state"] == "unauthorized"
        android_phone.set_online(False)
        assert _data(await data.call_tool("get_device_state", {}))["state"] == "absent"
    missing = MobileServerState(Adb(str(android_phone.folder / "no-adb"), android_phone.serial))
    async with Client(create_data_collector_server(missing)) as data:
        assert _data(await data.call_tool("get_device_state", {}))["state"] == "no_adb"


async def test_local_registration_drives_the_bound_phone(android_phone: SimulatedPhone) -> None:
    android_phone.update(screen="notes", note_text="bound")
    shell = ShellConfig.model_validate({})
    registry = MobileRegistry(mobile_state(android_phone.adb_client()), default_registry)
    collector = registry.get("MobileDataCollector")(shell)
    executor = registry.get("MobileExecutor")(shell)
    async with Client(collector) as data, Client(executor) as action:
        await data.call_tool("get_app_window_controls_target_info", {})
        assert _data(await action.call_tool("click_control", {"control_id": "3", "control_name": "Save"}))[
            "success"
        ]
    assert android_phone.state()["notes"] == ["bound"]


async def test_mcp_serve_mobile_over_http(android_phone: SimulatedPhone) -> None:
    android_phone.update(screen="notes", note_text="served")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starweave.cli",
        "mcp",
        "serve",
        "mobile",
        "--data-port",
        "0",
        "--action-port",
        "0",
        "--adb-path",
        str(android_phone.adb_path),
        "--serial",
        "emulator-5554",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        urls: dict[str, str] = {}
        deadline = time.monotonic() + 60
        assert proc.stdout is not None
        while len(urls) < 2:
            line = (
                await asyncio.wait_for(proc.stdout.readline(), max(0.1, deadline - time.monotonic()))
            ).decode()
            assert line, "the server exited before listening"
            match = re.match(r"(\w+) listening on (\S+)", line)
            if match:
                urls[match.group(1)] = match.group(2)
        async with httpx.AsyncClient() as http:
            health = (await http.get(urls["MobileExecutor"].replace("/mcp", "/health"))).json()
            # Neither the adb program nor the device is told to whoever asks.
            assert health == {"status": "healthy", "server": "MobileExecutor"}
            # A foreign Host header is refused (DNS-rebinding protection on loopback).
            foreign = await http.post(urls["MobileExecutor"], headers={"Host": "evil.example"}, json={})
            assert foreign.status_code in (403, 421)
        async with Client(urls["MobileDataCollector"]) as data, Client(urls["MobileExecutor"]) as action:
            await data.call_tool("get_app_window_controls_target_info", {})
            clicked = await action.call_tool("click_control", {"control_id": "3", "control_name": "Save"})
            assert json.loads(clicked.content[0].text)["success"] is True
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 20)
    assert android_phone.shell_commands()[-1] == ["input", "tap", "290", "570"]
    assert android_phone.state()["notes"] == ["served"]


async def test_mcp_serve_mobile_refuses_stdio() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "starweave.cli", "mcp", "serve", "mobile", "--transport", "stdio",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    _, errs = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    assert (
        errs.decode().strip()
        == "error: the mobile servers run over HTTP only (two servers, one process); drop --transport"
    )


async def test_executor_on_the_simulated_phone(android_phone: SimulatedPhone) -> None:
    """System apps by name, text typed exactly at the field's end, non-ASCII refused, and `wait`
    forgetting the controls like every other action."""
    state = MobileServerState(android_phone.adb_client())
    async with (
        Client(create_data_collector_server(state)) as data,
        Client(create_executor_server(state)) as action,
    ):

        async def call(tool: str, **args: Any) -> dict[str, Any]:
            result: dict[str, Any] = _data(await action.call_tool(tool, args))
            return result

        # Settings is a system app; the phone has user apps, which are searched first.
        settings = await call("launch_app", package_name="Settings")
        assert settings["success"] is True and settings["package_name"] == "com.android.settings"
        assert android_phone.state()["screen"] == "settings"
        android_phone.update(screen="notes", note_text="old")
        await data.call_tool("get_app_window_controls_target_info", {})
        typed = await call("type_text", text="50%s off", control_id="2", control_name="Note")
        assert typed["success"] is True and android_phone.state()["note_text"] == "old50%s off"
        await data.call_tool("get_app_window_controls_target_info", {})
        refused = await call("type_text", text="café", control_id="2", control_name="Note")
        assert refused["success"] is False and "ASCII only" in refused["error"]
        assert android_phone.state()["note_text"] == "old50%s off"
        await data.call_tool("get_app_window_controls_target_info", {})
        assert (await call("wait", seconds=0))["success"] is True
        stale = await call("click_control", control_id="3", control_name="Save")
        assert stale["success"] is False and "get_app_window_controls_target_info" in stale["error"]
    history = [" ".join(h) if isinstance(h, list) else str(h) for h in android_phone.state()["history"]]
    focus = next(i for i, h in enumerate(history) if "input tap 540 380" in h)
    # The cursor goes to the end before anything is deleted or typed (the tap left it mid-text).
    assert "KEYCODE_MOVE_END" in history[focus + 1]
    assert not any("café" in h for h in history)
