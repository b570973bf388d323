"""Blackboard: prompt rendering with the exact headers, and persistence."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from starweave.agent import Blackboard

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def filled(tmp_path: Path) -> Blackboard:
    shot = tmp_path / "shot.png"
    shot.write_bytes(PNG)
    bb = Blackboard()
    bb.add_questions({"question": "Which file?", "answer": "report.docx"})
    bb.add_requests({"request_0": "open the report"})
    bb.add_trajectories({"step": 1, "observation": "Word is open"})
    bb.add_image(shot, {"subtask": "open", "step": 1})
    return bb


def test_prompt_sections_and_headers(tmp_path: Path) -> None:
    parts = filled(tmp_path).blackboard_to_prompt()
    assert parts[0] == {"type": "text", "text": "[Blackboard:]"}
    assert parts[1]["text"] == (
        '[Questions & Answers:]\n[{"question": "Which file?", "answer": "report.docx"}]'
    )
    assert parts[2]["text"] == '[Request History:]\n[{"request_0": "open the report"}]'
    assert parts[3]["text"] == (
        '[Step Trajectories Completed Previously:]\n[{"step": 1, "observation": "Word is open"}]'
    )
    assert parts[4] == {"type": "text", "text": '{"subtask": "open", "step": 1}'}
    assert parts[5]["type"] == "image_url"
    url = parts[5]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == PNG
    assert len(parts) == 6


def test_image_file_is_read_at_prompt_time(tmp_path: Path) -> None:
    bb = filled(tmp_path)
    (tmp_path / "shot.png").write_bytes(PNG + b"changed")
    url = bb.screenshots_to_prompt()[1]["image_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1]).endswith(b"changed")


def test_missing_screenshot_becomes_a_note(tmp_path: Path) -> None:
    bb = Blackboard()
    bb.add_image(tmp_path / "gone.png", {"step": 3})
    parts = bb.screenshots_to_prompt()
    assert parts[1]["type"] == "text" and "gone.png" in parts[1]["text"]


def test_empty_sections_are_left_out_and_empty_board_gives_nothing() -> None:
    bb = Blackboard()
    assert bb.is_empty() and bb.blackboard_to_prompt() == []
    bb.add_requests({"request_0": "x"})
    assert [p["text"].split("\n")[0] for p in bb.blackboard_to_prompt()] == [
        "[Blackboard:]",
        "[Request History:]",
    ]


async def test_async_prompt_matches_sync(tmp_path: Path) -> None:
    bb = filled(tmp_path)
    assert await bb.ablackboard_to_prompt() == bb.blackboard_to_prompt()


def test_save_load_round_trip(tmp_path: Path) -> None:
    bb = filled(tmp_path)
    path = tmp_path / "bb.json"
    bb.save(path)
    assert json.loads(path.read_text())["screenshots"][0]["screenshot_path"] == str(tmp_path / "shot.png")
    other = Blackboard()
    other.add_questions({"stale": True})
    other.load(path)
    assert other.blackboard_to_dict() == bb.blackboard_to_dict()
    assert other.blackboard_to_prompt() == bb.blackboard_to_prompt()


def test_from_dict_missing_sections_and_clear(tmp_path: Path) -> None:
    bb = Blackboard()
    bb.blackboard_from_dict({"requests": [{"request_0": "a"}]})
    assert bb.requests.length == 1 and bb.questions.is_empty()
    bb.add_data({"k": 1}, bb.trajectories)
    bb.clear()
    assert bb.is_empty()
