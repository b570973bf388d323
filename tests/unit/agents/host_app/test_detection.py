"""Hybrid control detection: detected controls join the accessibility list and are clicked by position."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starweave.agents.app.controls import Control, annotation_dict
from starweave.agents.app.detection import add_detected_controls, visual_action
from starweave.agents.app.execution import execute_actions
from starweave.agents.app.response import AppAction
from starweave.commands import Command, Result, ResultStatus
from starweave.tools.desktop.model import ControlInfo, Rect

WINDOW = {"x": 100, "y": 50, "width": 400, "height": 300}


class FakeDetector:
    def __init__(self, found: list[ControlInfo]) -> None:
        self.found = found
        self.seen: list[tuple[bytes, Rect]] = []

    async def detect(self, png: bytes, origin: Rect) -> list[ControlInfo]:
        self.seen.append((png, origin))
        return self.found


class Recorder:
    def __init__(self) -> None:
        self.commands: list[Command] = []

    async def execute_commands(self, commands: list[Command]) -> list[Result]:
        self.commands.extend(commands)
        return [Result(status=ResultStatus.SUCCESS, result="ok") for _ in commands]


def detected(name: str, x: int, y: int) -> ControlInfo:
    return ControlInfo(id="d", name=name, control_type="Button", rect=Rect(x=x, y=y, width=40, height=20))


async def test_detected_controls_are_added_unless_they_overlap(tmp_path: Path) -> None:
    shot = tmp_path / "clean.png"
    shot.write_bytes(b"png")
    a11y = [Control(id="1", name="OK", control_type="Button", rect=[110, 60, 150, 80])]
    detector = FakeDetector([detected("OK again", 111, 61), detected("Gear", 300, 200)])
    merged = await add_detected_controls(detector, shot, a11y, WINDOW)
    assert [(c.id, c.name, c.extra.get("source")) for c in merged] == [
        ("1", "OK", None),
        ("2", "Gear", "detector"),
    ]
    assert detector.seen == [(b"png", Rect(x=100, y=50, width=400, height=300))]


def test_a_click_on_a_detected_control_becomes_a_coordinate_click() -> None:
    gear = Control(
        id="2", name="Gear", control_type="Button", rect=[300, 200, 340, 220], extra={"source": "detector"}
    )
    action = visual_action(
        AppAction(function="click_input", arguments={"id": "2", "name": "Gear"}), gear, WINDOW
    )
    assert isinstance(action, AppAction) and action.function == "click_on_coordinates"
    assert action.arguments == {"x": 0.55, "y": 160 / 300, "button": "left", "double": False}
    refused = visual_action(
        AppAction(function="set_edit_text", arguments={"id": "2", "text": "x"}), gear, WINDOW
    )
    assert isinstance(refused, str) and "can be clicked, not used with set_edit_text" in refused


async def test_execution_sends_the_coordinate_click() -> None:
    gear = Control(
        id="2", name="Gear", control_type="Button", rect=[300, 200, 340, 220], extra={"source": "detector"}
    )
    dispatcher = Recorder()
    actions = [AppAction(function="click_input", arguments={"id": "2", "name": "Gear"})]
    outcome = await execute_actions(
        dispatcher,
        actions,
        annotation_dict([gear]),
        planned_is_live=True,
        hold_sensitive=False,
        window_rect=WINDOW,
    )
    assert not outcome.stopped
    assert [(c.tool_name, c.parameters) for c in dispatcher.commands] == [
        ("click_on_coordinates", {"x": 0.55, "y": 160 / 300, "button": "left", "double": False})
    ]
    typed: list[Any] = [AppAction(function="set_edit_text", arguments={"id": "2", "text": "x"})]
    outcome = await execute_actions(
        Recorder(),
        typed,
        annotation_dict([gear]),
        planned_is_live=True,
        hold_sensitive=False,
        window_rect=WINDOW,
    )
    assert outcome.stopped
