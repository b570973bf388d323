"""The mobile MCP tools against the simulated phone (tests/helpers/android_sim): the same adb layer a
real phone gets; the phone's screens change with the actions and its state shows the saved note."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.android_sim import SimulatedPhone
from helpers.android_sim import android_phone as android_phone
from mcp import Client

from starweave.tools.mobile import Adb, AdbError
from starweave.tools.servers.mobile import (
    MobileServerState,
    create_data_collector_server,
    create_executor_server,
)

pytestmark = pytest.mark.slow


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    content = result.structured_content
    return content.get("result", content) if isinstance(content, dict) else content


async def test_open_notes_type_and_save_on_the_simulated_phone(android_phone: SimulatedPhone) -> None:
    state = MobileServerState(Adb(str(android_phone.adb_path), "emulator-5554", timeout=30.0))
    async with (
        Client(create_data_collector_server(state)) as data,
        Client(create_executor_server(state)) as action,
    ):
        shot = (await data.call_tool("capture_screenshot", {})).content[0].text
        assert shot.startswith("data:image/png;base64,iVBORw0KGgo")
        apps = _data(await data.call_tool("get_mobile_app_target_info", {}))
        assert {a["name"] for a in apps} == {"com.example.notes", "com.example.calculator"}
        launched = _data(await action.call_tool("launch_app", {"package_name": "notes"}))
        assert launched["success"] is True and launched["package_name"] == "com.example.notes"
        assert android_phone.state()["screen"] == "notes"

        controls = _data(await data.call_tool("get_app_window_controls_target_info", {}))
        by_name = {c["name"]: c for c in controls}
        assert {"Note", "Save", "Delete"} <= set(by_name)
        assert by_name["Delete"]["dangerous"] == "delete"
        typed = _data(
            await action.call_tool(
                "type_text",
                {"text": "buy milk & eggs", "control_id": by_name["Note"]["id"], "control_name": "Note"},
            )
        )
        assert typed["success"] is True, typed
        assert android_phone.state()["note_text"] == "buy milk & eggs"

        # The action emptied the controls cache: collect again before the next click, as the agent does.
        controls = _data(await data.call_tool("get_app_window_controls_target_info", {}))
        save = next(c for c in controls if c["name"] == "Save")
        clicked = _data(
            await action.call_tool("click_control", {"control_id": save["id"], "control_name": "Save"})
        )
        assert clicked["success"] is True, clicked
    phone = android_phone.state()
    assert phone["notes"] == ["buy milk & eggs"] and phone["status_message"] == "Saved"


async def test_keys_and_refusals_on_the_simulated_phone(android_phone: SimulatedPhone) -> None:
    state = MobileServerState(Adb(str(android_phone.adb_path), "emulator-5554", timeout=30.0))
    async with Client(create_executor_server(state)) as action:
        assert _data(await action.call_tool("launch_app", {"package_name": "com.example.calculator"}))[
            "success"
        ]
        assert android_phone.state()["screen"] == "calculator"
        assert _data(await action.call_tool("press_key", {"key_code": "KEYCODE_HOME"}))["success"]
        assert android_phone.state()["screen"] == "launcher"
        missing = _data(await action.call_tool("launch_app", {"package_name": "com.example.absent"}))
        assert missing["success"] is False and missing["error"]
    android_phone.set_online(False)
    offline = MobileServerState(Adb(str(android_phone.adb_path), "emulator-5554", timeout=30.0))
    async with Client(create_executor_server(offline)) as action:
        result = _data(await action.call_tool("tap", {"x": 10, "y": 10}))
        assert result["success"] is False and "emulator-5554" in result["error"]


async def test_a_failed_ui_dump_never_gives_the_previous_screen(android_phone: SimulatedPhone) -> None:
    adb = Adb(str(android_phone.adb_path), android_phone.serial)
    android_phone.dump()  # an earlier dump left its file on the phone (the launcher's)
    assert 'text="Notes"' in await adb.dump_ui_xml()
    android_phone.update(ui_dump_fails=True, screen="notes")  # the dump now fails without a word
    with pytest.raises(
        AdbError, match=r"`adb -s emulator-5554 shell cat /sdcard/starweave_ui_\w+\.xml` failed"
    ):
        await adb.dump_ui_xml()
    # Every dump's file is removed: nothing is left for a later failure to read.
    assert not [f for f in (android_phone.folder / "sdcard").rglob("starweave_ui_*")]
