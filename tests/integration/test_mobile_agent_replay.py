"""MobileAgent end to end on recorded answers, against a fake phone behind local MCP servers with the
MobileDataCollector / MobileExecutor tool names and result shapes (real MCP, real logs, real files)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.evaluation import verdict
from helpers.linux_replay import read_jsonl
from helpers.mobile_fake import NOTES, SHOP, FakePhone
from helpers.mobile_replay import mobile_answer, run_mobile

NOTE_ANSWERS = [
    mobile_answer("launch_app", {"package_name": NOTES}),
    mobile_answer("type_text", {"text": "call mom", "control_id": "2"}),
    mobile_answer("click_control", {"control_id": "3", "control_name": "Save"}),
    mobile_answer("", status="FINISH", comment="Saved the note 'call mom'."),
]


async def test_the_agent_writes_and_saves_a_note(tmp_path: Path) -> None:
    phone = FakePhone()
    result = await run_mobile(tmp_path, NOTE_ANSWERS, phone, request="write a note 'call mom' and save it")
    assert result["status"] == "FINISH", result
    assert result["result"] == "Saved the note 'call mom'."
    assert result["agent"] == "MobileAgent"
    assert phone.saved == ["call mom"]
    actions = [(name, args) for name, args in phone.calls if name not in _DATA_TOOLS]
    assert actions == [
        ("launch_app", {"package_name": NOTES}),
        # control_name filled in from the screen's list
        ("type_text", {"text": "call mom", "control_id": "2", "control_name": "Note"}),
        ("click_control", {"control_id": "3", "control_name": "Save"}),
    ]
    # every step looked at the screen first: screenshot, apps, controls
    assert [name for name, _ in phone.calls[:3]] == list(_DATA_TOOLS)

    logs = tmp_path / "logs" / "run1"
    steps = read_jsonl(logs / "response.log")
    assert [s["status"] for s in steps] == ["CONTINUE", "CONTINUE", "CONTINUE", "FINISH"]
    assert steps[0]["agent_type"] == "MobileAgent"
    assert set(steps[0]["time_cost"]) == {
        "DATA_COLLECTION",
        "LLM_INTERACTION",
        "ACTION_EXECUTION",
        "MEMORY_UPDATE",
    }
    for step in (1, 2, 3, 4):
        assert (logs / f"action_step{step}.png").is_file()
        assert (logs / f"action_step{step}_annotated.png").is_file()
    assert steps[1]["annotated_screenshot_path"].endswith("action_step2_annotated.png")
    prompts = [r["prompt"] for r in read_jsonl(logs / "request.log")]
    second = prompts[1][-1]["content"]
    # text only (no --visual): the notes screen's controls, the apps, the last success action
    assert isinstance(second, str)
    assert "[2] EditText 'Note'" in second and "[3] Button 'Save'" in second
    assert NOTES in second.split("[Installed Apps]")[1]
    assert "launch_app(package_name='com.example.notes')" in second.split("[Last Success Actions]")[1]
    assert "Saved the note" in json.loads((logs / "result.json").read_text())["result"]


_DATA_TOOLS = ("capture_screenshot", "get_mobile_app_target_info", "get_app_window_controls_target_info")


BUY_ANSWERS = [
    mobile_answer("launch_app", {"package_name": SHOP}),
    mobile_answer("click_control", {"control_id": "2", "control_name": "Buy now"}, "FINISH", "Bought."),
]


async def test_a_sensitive_action_asks_and_a_refusal_is_not_executed(tmp_path: Path) -> None:
    phone = FakePhone()
    answers = [
        mobile_answer("launch_app", {"package_name": SHOP}),
        mobile_answer("click_control", {"control_id": "2", "control_name": "Buy now"}),
    ]
    result = await run_mobile(tmp_path, answers, phone, request="buy it", confirm=False)
    assert result["asked"] == ["click_control(control_id='2', control_name='Buy now')"]
    assert phone.bought == 0
    assert not any(name == "click_control" for name, _ in phone.calls)
    assert result["status"] == "FAIL"
    assert "did not allow" in result["result"]


async def test_an_approved_sensitive_action_runs(tmp_path: Path) -> None:
    phone = FakePhone()
    answers = BUY_ANSWERS
    result = await run_mobile(tmp_path, answers, phone, confirm=True)
    assert len(result["asked"]) == 1
    assert phone.bought == 1
    assert result["status"] == "FINISH" and result["result"] == "Bought."


async def test_yes_approves_without_asking(tmp_path: Path) -> None:
    phone = FakePhone()
    answers = BUY_ANSWERS
    result = await run_mobile(tmp_path, answers, phone, auto_approve=True)
    assert result["asked"] == []
    assert phone.bought == 1


async def test_a_failed_action_is_reported_and_an_unknown_control_is_not_sent(tmp_path: Path) -> None:
    phone = FakePhone()
    answers = [
        mobile_answer("launch_app", {"package_name": "com.nowhere"}, "FINISH", "opened"),
        mobile_answer("click_control", {"control_id": "99", "control_name": "Ghost"}),
        mobile_answer("", status="FAIL", comment="cannot"),
    ]
    result = await run_mobile(tmp_path, answers, phone)
    steps = read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    # the failed launch turns the FINISH into CONTINUE, with the error as the note
    assert steps[0]["status"] == "CONTINUE" and "no app com.nowhere" in steps[0]["note"]
    assert "No control has id '99'" in steps[1]["note"]
    assert not any(name == "click_control" for name, _ in phone.calls)
    assert result["status"] == "FAIL"
    prompt = read_jsonl(tmp_path / "logs" / "run1" / "request.log")[1]["prompt"]
    assert "no app com.nowhere" in prompt[-1]["content"]


async def test_evaluate_judges_the_mobile_run(tmp_path: Path) -> None:
    phone = FakePhone()
    answers = [*NOTE_ANSWERS, verdict("yes", "the note was saved")]
    result = await run_mobile(tmp_path, answers, phone, request="save a note", evaluate=True)
    assert result["status"] == "FINISH"
    records = read_jsonl(tmp_path / "logs" / "run1" / "evaluation.log")
    assert [r["complete"] for r in records] == ["yes"]
    # four agent steps, then the evaluator's call on the same replayed model
    calls = read_jsonl(tmp_path / "logs" / "run1" / "llm.log")
    assert len(calls) == 5 and json.loads(calls[-1]["response"])["complete"] == "yes"
    assert "evaluation" in (tmp_path / "console.txt").read_text()


async def test_a_repeated_launch_is_redrawn_then_refused_then_fails(tmp_path: Path) -> None:
    phone = FakePhone()
    launch = mobile_answer("launch_app", {"package_name": NOTES})
    # step 2 repeats (and its redraw too), refused with a note; step 3 the same: the task fails
    result = await run_mobile(tmp_path, [launch] * 5, phone)
    assert [name for name, _ in phone.calls].count("launch_app") == 1
    steps = read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    assert "Not run again: launch_app(package_name='com.example.notes') already succeeded" in steps[1]["note"]
    assert result["status"] == "FAIL" and "kept repeating" in result["result"]
    prompts = [r["prompt"] for r in read_jsonl(tmp_path / "logs" / "run1" / "request.log")]
    # the earlier steps come back as chat turns: what the model saw, what it answered
    assert [m["role"] for m in prompts[1]] == ["system", "user", "assistant", "user"]
    assert json.loads(prompts[1][2]["content"])["action"]["function"] == "launch_app"
    assert "[Current Screen Controls]" in prompts[1][1]["content"]
