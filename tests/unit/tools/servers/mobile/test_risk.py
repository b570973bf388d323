"""The CONFIRM rules (tools/servers/mobile/risk.py, agents/mobile/safety.py) on the simulated
phone's real uiautomator XML: what each action touches, and what may run without asking."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.android_sim.phone.state import default_state
from helpers.android_sim.phone.ui import dump_xml

from starweave.agents.app.controls import Control
from starweave.agents.mobile.safety import mobile_risk, mobile_sensitive_reason, target_moved
from starweave.tools.servers.mobile import action_risk, app_risk, assess, parse_controls


def screen(name: str, **fields: Any) -> list[dict[str, Any]]:
    """The controls of a simulator screen as the collector lists them."""
    state = default_state()
    state.update(screen=name, **fields)
    return [c.target_info() for c in parse_controls(dump_xml(state))]


MESSAGES = screen("messages")  # 2 row (holds 3 "Delete"), 4 "Slide to pay", 5 field, 6 send icon
NOTES = screen("notes", notes=["call mom"])  # 2 Note field, 3 Save, 4 Delete


def test_the_simulated_screens_are_the_ones_the_rules_are_tested_on() -> None:
    assert [(c["id"], c["name"], c["type"]) for c in MESSAGES] == [
        ("1", "Messages", "TextView"),
        ("2", "", "LinearLayout"),
        ("3", "Delete", "TextView"),
        ("4", "Slide to pay", "SeekBar"),
        ("5", "Message", "EditText"),
        ("6", "", "ImageButton"),
    ]
    assert MESSAGES[5]["dangerous"] == "send"  # from its resource id alone


@pytest.mark.parametrize(
    ("tool", "arguments", "words"),
    [
        # A clickable row without a name around a "Delete" label: clicked, or tapped beside the label.
        ("click_control", {"control_id": "2"}, ("presses", "Delete")),
        ("tap", {"x": 700, "y": 380}, ("presses", "Delete")),
        ("tap", {"x": 200, "y": 380}, ("lands on", "Delete")),
        # The send icon has only a resource id; a float tap is the same tap.
        ("click_control", {"control_id": "6"}, ("send",)),
        ("tap", {"x": 970.0, "y": 2270.0}, ("send",)),
        # A swipe over "Slide to pay".
        ("swipe", {"start_x": 100, "start_y": 660, "end_x": 1000, "end_y": 660}, ("swipe", "pay")),
        ("swipe", {"start_x": 200, "start_y": 560, "end_x": 200, "end_y": 250}, ("Delete",)),
        # ENTER in a chat: the screen has a message field and a send control.
        ("press_key", {"key_code": "KEYCODE_ENTER"}, ("ENTER",)),
        ("tap", {"x": "a", "y": 1}, ("not numbers",)),
    ],
)
def test_risky_actions_on_the_chat_screen(
    tool: str, arguments: dict[str, Any], words: tuple[str, ...]
) -> None:
    reason = action_risk(tool, arguments, MESSAGES)
    assert reason is not None and all(w in reason for w in words), reason


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("type_text", {"text": "pay rent and buy milk, send it", "control_id": "5"}),
        ("tap", {"x": 540, "y": 170}),  # the title
        ("swipe", {"start_x": 540, "start_y": 1900, "end_x": 540, "end_y": 1000}),
        ("press_key", {"key_code": "KEYCODE_BACK"}),
    ],
)
def test_harmless_actions_on_the_chat_screen(tool: str, arguments: dict[str, Any]) -> None:
    assert action_risk(tool, arguments, MESSAGES) is None


def test_the_notes_apps_benign_flow_never_asks_but_delete_does() -> None:
    assert action_risk("type_text", {"text": "buy milk", "control_id": "2"}, NOTES) is None
    assert action_risk("click_control", {"control_id": "3"}, NOTES) is None
    assert action_risk("press_key", {"key_code": "KEYCODE_ENTER"}, NOTES) is None
    typed = screen("notes", note_text="buy milk", focused="note")  # the field's name is now its text
    assert action_risk("tap", {"x": 540, "y": 380}, typed) is None
    assert "delete" in (action_risk("click_control", {"control_id": "4"}, NOTES) or "")


def test_no_control_list_asks_before_touching_the_screen() -> None:
    assert action_risk("tap", {"x": 1, "y": 1}, []) == "no control list: nothing shows what the tap lands on"
    assert action_risk("swipe", {"start_x": 1, "start_y": 1, "end_x": 1, "end_y": 500}, [])
    assert action_risk("press_key", {"key_code": "ENTER"}, [])
    assert action_risk("press_key", {"key_code": "KEYCODE_HOME"}, []) is None
    assert action_risk("launch_app", {"package_name": "com.example.notes"}, []) is None


def test_dialogs_permission_and_confirmation() -> None:
    dialog = screen("messages", permission_dialog=True)
    names = {c["name"]: c["id"] for c in dialog}
    assert "allow" in (action_risk("click_control", {"control_id": names["Allow"]}, dialog) or "")
    assert action_risk("click_control", {"control_id": names["Don't allow"]}, dialog) is None
    question = {"id": "1", "name": "Delete 3 notes?", "type": "TextView", "rect": [0, 0, 100, 50]}
    ok = {"id": "2", "name": "OK", "type": "Button", "rect": [0, 60, 100, 110]}
    assert "accepts a dialog" in (action_risk("click_control", {"control_id": "2"}, [question, ok]) or "")
    calm = {**question, "name": "Note saved"}
    assert action_risk("click_control", {"control_id": "2"}, [calm, ok]) is None


@pytest.mark.parametrize(
    ("package", "risky"),
    [
        ("com.android.vending", True),
        ("com.android.packageinstaller", True),
        ("com.google.android.packageinstaller", True),
        ("com.google.android.apps.walletnfcrel", True),
        ("com.samsung.android.spay", True),
        ("com.example.notes", False),
        ("com.android.settings", False),
        ("com.example.display", False),
    ],
)
def test_stores_installers_and_wallets_ask_before_launching(package: str, risky: bool) -> None:
    assert (app_risk(package) is not None) is risky


def test_the_agent_keeps_the_collectors_danger_flag_and_the_field_name_rule() -> None:
    controls = [Control.from_dict(c) for c in MESSAGES]
    # The send icon is flagged by the collector (resource id); the agent's Control keeps that flag.
    assert "send" in (mobile_sensitive_reason("click_control", {"control_id": "6"}, controls) or "")
    field = Control(id="9", name="Amount to pay", control_type="EditText", rect=[0, 900, 100, 950])
    reason = mobile_sensitive_reason("type_text", {"text": "12", "control_id": "9"}, [field])
    assert reason == 'the field "Amount to pay" says pay, which cannot always be undone'
    assert (
        mobile_sensitive_reason("type_text", {"text": "please send it", "control_id": "5"}, controls) is None
    )


def test_a_held_action_still_aims_at_the_control_approved() -> None:
    controls = [Control.from_dict(c) for c in NOTES]
    risk = mobile_risk("click_control", {"control_id": "4"}, controls)
    assert risk is not None and risk.target is not None and risk.target["name"] == "Delete"
    assert target_moved("click_control", {"control_id": "4"}, risk.target, controls) == ""
    other = [Control.from_dict(c) for c in screen("calculator")]
    moved = target_moved("click_control", {"control_id": "4"}, risk.target, other)
    assert moved == "control 4 is no longer 'Delete' at [560, 500, 1020, 640]"
    tapped = assess("tap", {"x": 700, "y": 560}, NOTES)
    assert tapped is not None and tapped.target is not None
    assert target_moved("tap", {"x": 700, "y": 560}, tapped.target, other).endswith("no longer on the screen")
