"""CONFIRM detection for every key spelling and program launches; stale speculative actions stop."""

from __future__ import annotations

import pytest

from starweave.agents.app.controls import Control, annotation_dict
from starweave.agents.app.execution import execute_actions, window_changed
from starweave.agents.app.response import AppAction
from starweave.agents.app.safety import closing_chord, sensitive_reason
from starweave.commands import Command, Result, ResultStatus


@pytest.mark.parametrize(
    "keys",
    [
        "%{F4}",
        "{VK_CONTROL}q",
        "{CTRL}q",
        "^(q)",
        "^{q}",
        "{VK_MENU}{F4}",
        "{ALT}{F4}",
        "%{F4 1}",
        "^w",
        "{VK_CONTROL down}q{VK_CONTROL up}",
    ],
)
def test_every_spelling_of_a_closing_chord_is_sensitive(keys: str) -> None:
    assert closing_chord(keys)
    assert sensitive_reason("keyboard_input", {"keys": keys}) is not None


@pytest.mark.parametrize("keys", ["^s", "{ENTER}", "hello", "%f", "{F4}", "q"])
def test_ordinary_keys_are_not(keys: str) -> None:
    assert not closing_chord(keys)


def test_launching_a_program_needs_approval() -> None:
    assert (
        sensitive_reason("launch_application", {"command": "sh -c 'echo x > /tmp/y'"})
        == "it starts a program"
    )


class Desktop:
    """Answers control walks from a script of windows and records the actions."""

    def __init__(self, walks: list[list[Control]]) -> None:
        self.walks = walks
        self.actions: list[str] = []

    async def execute_commands(self, commands: list[Command]) -> list[Result]:
        command = commands[0]
        if command.tool_name == "get_app_window_controls_info":
            controls = self.walks.pop(0)
            rows = [{"label": c.id, "control_text": c.name, "control_type": c.control_type} for c in controls]
            return [Result(status=ResultStatus.SUCCESS, result=rows)]
        self.actions.append(command.tool_name)
        return [Result(status=ResultStatus.SUCCESS, result="ok")]


FILE = Control(id="1", name="File", control_type="MenuItem")
EDIT = Control(id="2", name="Name", control_type="Edit")


async def test_an_action_without_a_control_is_not_run_in_a_changed_window() -> None:
    dialog = [FILE, EDIT, Control(id="3", name="Save", control_type="Button")]
    desktop = Desktop([dialog])
    actions = [
        AppAction(function="click_input", arguments={"id": "1", "name": "File"}),
        AppAction(function="click_on_coordinates", arguments={"x": 0.5, "y": 0.5}),
        AppAction(function="keyboard_input", arguments={"keys": "{ENTER}", "control_focus": False}),
    ]
    outcome = await execute_actions(
        desktop, actions, annotation_dict([FILE, EDIT]), planned_is_live=True, hold_sensitive=False
    )
    assert desktop.actions == ["click_input"] and outcome.stopped
    assert "the window changed since the model saw it: new ['3']" in outcome.fallback


async def test_an_unchanged_window_runs_the_whole_plan() -> None:
    desktop = Desktop([[FILE, EDIT], [FILE, EDIT]])
    actions = [
        AppAction(function="click_input", arguments={"id": "1", "name": "File"}),
        AppAction(function="click_on_coordinates", arguments={"x": 0.5, "y": 0.5}),
        AppAction(function="keyboard_input", arguments={"keys": "{ENTER}", "control_focus": False}),
    ]
    outcome = await execute_actions(
        desktop, actions, annotation_dict([FILE, EDIT]), planned_is_live=True, hold_sensitive=False
    )
    assert (
        desktop.actions == ["click_input", "click_on_coordinates", "keyboard_input"] and not outcome.stopped
    )
    assert outcome.validations == 2


async def test_approval_covers_only_the_approved_action() -> None:
    delete = Control(id="1", name="Delete file", control_type="Button")
    discard = Control(id="2", name="Discard all changes", control_type="Button")
    desktop = Desktop([[delete, discard], [delete, discard]])
    actions = [
        AppAction(function="click_input", arguments={"id": "1", "name": "Delete file"}),
        AppAction(function="click_input", arguments={"id": "2", "name": "Discard all changes"}),
    ]
    outcome = await execute_actions(
        desktop,
        actions,
        annotation_dict([delete, discard]),
        planned_is_live=False,
        hold_sensitive=True,
        approved=1,
    )
    assert desktop.actions == ["click_input"]
    assert [a.arguments["id"] for a in outcome.pending] == ["2"] and "discard" in outcome.pending_reason


def test_window_changed_names_the_difference() -> None:
    assert window_changed({"1": FILE}, {"1": FILE}) is None
    renamed = Control(id="1", name="Edit", control_type="MenuItem")
    assert window_changed({"1": FILE, "2": EDIT}, {"1": renamed}) == (
        "the window changed since the model saw it: gone ['2']; changed ['1']"
    )


def test_content_controls_may_change_their_text() -> None:
    display = Control(id="9", name="2+3", control_type="Edit")
    assert window_changed({"9": display}, {"9": Control(id="9", name="5", control_type="Edit")}) is None


def test_typing_into_a_terminal_needs_approval() -> None:
    reason = sensitive_reason("keyboard_input", {"keys": "rm -rf ~{ENTER}"}, "", "xfce4-terminal")
    assert reason is not None and "types into a terminal" in reason
    assert sensitive_reason("set_edit_text", {"text": "ls"}, "", "/usr/bin/xterm") is not None
    assert sensitive_reason("keyboard_input", {"keys": "hello"}, "", "mousepad") is None
