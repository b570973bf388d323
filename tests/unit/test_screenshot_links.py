"""Screenshots and results read back from a log folder in the workspace: a link the model's commands
plant under their names (or over the folder) is never read, so no file reaches the model, the
detector or the batch summary through it."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from starweave.agent import Blackboard
from starweave.agents.app.detection import add_detected_controls
from starweave.config.known_workspaces import remember_workspace
from starweave.log_folder import write_log_file
from starweave.session.batch import _saved_result
from starweave.tools.desktop.model import ControlInfo, Rect

CANARY = b"swc-screenshot-canary"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
WINDOW = {"x": 0, "y": 0, "width": 100, "height": 100}


class RecordingDetector:
    def __init__(self) -> None:
        self.seen: list[bytes] = []

    async def detect(self, png: bytes, origin: Rect) -> list[ControlInfo]:
        self.seen.append(png)
        return []


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_bytes(CANARY)
    return path


@pytest.fixture
def task_folder(tmp_path: Path) -> Path:
    """``logs/task`` inside a workspace an agent has had, with one step's screenshot in it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    remember_workspace(workspace)
    folder = workspace / "logs" / "task"
    write_log_file(folder / "action_step1.png", PNG)
    return folder


def plant(link: Path, target: Path) -> None:
    """What ``rm -f LINK; ln -s TARGET LINK`` in the model's command does."""
    link.unlink(missing_ok=True)
    link.symlink_to(target)


def test_the_blackboard_never_sends_a_file_linked_under_a_screenshots_name(
    task_folder: Path, secret: Path
) -> None:
    board = Blackboard()
    shot = task_folder / "action_step1.png"
    board.add_image(shot, {"step": 1})
    assert base64.b64decode(board.screenshots_to_prompt()[1]["image_url"]["url"].split(",", 1)[1]) == PNG
    plant(shot, secret)
    parts = board.screenshots_to_prompt()
    assert parts[1] == {"type": "text", "text": f"[Screenshot unavailable: {shot}]"}
    assert base64.b64encode(CANARY).decode() not in json.dumps(parts)
    assert secret.read_bytes() == CANARY


def test_the_blackboard_never_reads_through_a_log_folder_swapped_for_a_link(
    task_folder: Path, secret: Path
) -> None:
    (secret.parent / "action_step1.png").write_bytes(CANARY)
    board = Blackboard()
    board.add_image(task_folder / "action_step1.png", {"step": 1})
    moved = task_folder.with_name("moved")
    task_folder.rename(moved)
    task_folder.symlink_to(secret.parent)
    parts = board.screenshots_to_prompt()
    assert parts[1]["type"] == "text" and "unavailable" in parts[1]["text"]
    assert base64.b64encode(CANARY).decode() not in json.dumps(parts)


async def test_the_detector_never_gets_a_file_linked_under_the_screenshots_name(
    task_folder: Path, secret: Path
) -> None:
    detector = RecordingDetector()
    shot = task_folder / "action_step1.png"
    await add_detected_controls(detector, shot, [], WINDOW)
    assert detector.seen == [PNG]
    plant(shot, secret)
    with pytest.raises(FileNotFoundError):
        await add_detected_controls(detector, shot, [], WINDOW)
    assert detector.seen == [PNG]


def test_a_stopped_plans_result_is_never_read_through_a_link(task_folder: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "outside.json"
    foreign.write_text(json.dumps({"status": "FINISH", "note": CANARY.decode()}))
    write_log_file(task_folder / "result.json", json.dumps({"status": "FAIL"}).encode())
    assert _saved_result(task_folder) == {"status": "FAIL"}
    plant(task_folder / "result.json", foreign)
    assert _saved_result(task_folder) is None
