"""MobileAgent end to end on recorded answers, on the simulated phone through the real
MobileDataCollector / MobileExecutor servers (real MCP, real adb layer, real logs, real files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.android_sim import NOTES, SimulatedPhone
from helpers.android_sim import android_phone as android_phone
from helpers.evaluation import verdict
from helpers.linux_replay import read_jsonl
from helpers.mobile_replay import mobile_answer, note_answers, phone_options, run_mobile

NOTE = "call mom & dad"
#: What each step reads before the model is asked: the screen, the apps (cached after step 1), the controls.
LOOK = ("exec-out screencap -p", "shell pm list packages -3", "shell uiautomator dump")


def actions(phone: SimulatedPhone) -> list[str]:
    """The commands that acted on the phone (not the looks at it)."""
    looks = ("exec-out screencap", "shell pm list", "shell uiautomator", "shell cat", "shell rm")
    return [h for h in phone.state()["history"] if not h.startswith(looks)]


async def test_the_agent_writes_and_saves_a_note(tmp_path: Path, android_phone: SimulatedPhone) -> None:
    request = f"write the note '{NOTE}' in the notes app and save it"
    result = await run_mobile(tmp_path, note_answers(NOTE), phone_options(android_phone), request)
    assert result["status"] == "FINISH", result
    assert result["result"] == f"Saved the note '{NOTE}'."
    assert result["agent"] == "MobileAgent"
    phone = android_phone.state()
    assert phone["notes"] == [NOTE] and phone["screen"] == "notes"
    assert actions(android_phone) == [
        f"shell monkey -p {NOTES} -c android.intent.category.LAUNCHER 1",
        "shell input tap 540 380",  # the Note field, focused
        "shell input keyevent KEYCODE_MOVE_END",
        "shell input text 'call%smom%s&%sdad'",  # one literal argument: the & ran nothing
        "shell input tap 290 570",  # Save
    ]
    # every step looked at the screen first: screenshot, apps, controls
    assert tuple(h.rsplit(" ", 1)[0] if "uiautomator" in h else h for h in phone["history"][:3]) == LOOK

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
    # the control's name came from the screen's list (the model gave only the id)
    assert steps[1]["output"] == f"Clicked control 'Note' at (540, 380) | Typed text: {NOTE}"
    for step in (1, 2, 3, 4):
        assert (logs / f"action_step{step}.png").is_file()
        assert (logs / f"action_step{step}_annotated.png").is_file()
    assert steps[1]["annotated_screenshot_path"].endswith("action_step2_annotated.png")
    prompts = [r["prompt"] for r in read_jsonl(logs / "request.log")]
    second = prompts[1][-1]["content"]
    # text only (no --visual): the notes screen's controls, the apps, the last success action
    assert isinstance(second, str)
    assert "[2] EditText 'Note'" in second and "[3] Button 'Save'" in second
    assert "[4] Button 'Delete'" in second
    assert NOTES in second.split("[Installed Apps]")[1]
    assert f"launch_app(package_name='{NOTES}')" in second.split("[Last Success Actions]")[1]
    assert "Saved the note" in json.loads((logs / "result.json").read_text())["result"]


DELETE = mobile_answer("click_control", {"control_id": "4", "control_name": "Delete"}, "FINISH", "Deleted.")


async def test_a_sensitive_action_asks_and_a_refusal_is_not_executed(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    android_phone.update(notes=["keep me"])
    answers = [
        mobile_answer("launch_app", {"package_name": NOTES}),
        mobile_answer("click_control", {"control_id": "4", "control_name": "Delete"}),
    ]
    result = await run_mobile(tmp_path, answers, phone_options(android_phone), "delete my notes")
    assert result["asked"] == ["click_control(control_id='4', control_name='Delete')"]  # not the launch
    assert android_phone.state()["notes"] == ["keep me"]
    assert not any("input tap" in h for h in actions(android_phone))
    assert result["status"] == "FAIL"
    assert "did not allow" in result["result"]


async def test_an_approved_sensitive_action_runs(tmp_path: Path, android_phone: SimulatedPhone) -> None:
    android_phone.update(screen="notes", notes=["old"])
    result = await run_mobile(tmp_path, [DELETE], phone_options(android_phone), confirm=True)
    assert len(result["asked"]) == 1
    assert android_phone.state()["notes"] == []
    assert result["status"] == "FINISH" and result["result"] == "Deleted."


async def test_yes_approves_without_asking(tmp_path: Path, android_phone: SimulatedPhone) -> None:
    android_phone.update(screen="notes", notes=["old"])
    result = await run_mobile(tmp_path, [DELETE], phone_options(android_phone), auto_approve=True)
    assert result["asked"] == []
    assert android_phone.state()["notes"] == []


async def test_a_failed_action_is_reported_and_an_unknown_control_is_not_sent(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    answers = [
        mobile_answer("launch_app", {"package_name": "com.nowhere"}, "FINISH", "opened"),
        mobile_answer("click_control", {"control_id": "99", "control_name": "Ghost"}),
        mobile_answer("", status="FAIL", comment="cannot"),
    ]
    result = await run_mobile(tmp_path, answers, phone_options(android_phone))
    steps = read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    # the failed launch turns the FINISH into CONTINUE, with the error as the note
    failure = "No activities found to run, monkey aborted"
    assert steps[0]["status"] == "CONTINUE" and failure in steps[0]["note"], steps[0]
    assert "No control has id '99'" in steps[1]["note"]
    assert not any("input" in h for h in actions(android_phone))
    assert android_phone.state()["screen"] == "launcher"
    assert result["status"] == "FAIL"
    prompt = read_jsonl(tmp_path / "logs" / "run1" / "request.log")[1]["prompt"]
    assert failure in prompt[-1]["content"]


async def test_evaluate_judges_the_mobile_run(tmp_path: Path, android_phone: SimulatedPhone) -> None:
    answers = [*note_answers("call mom"), verdict("yes", "the note was saved")]
    result = await run_mobile(tmp_path, answers, phone_options(android_phone), "save a note", evaluate=True)
    assert result["status"] == "FINISH"
    assert android_phone.state()["notes"] == ["call mom"]
    records = read_jsonl(tmp_path / "logs" / "run1" / "evaluation.log")
    assert [r["complete"] for r in records] == ["yes"]
    # four agent steps, then the evaluator's call on the same replayed model
    calls = read_jsonl(tmp_path / "logs" / "run1" / "llm.log")
    assert len(calls) == 5 and json.loads(calls[-1]["response"])["complete"] == "yes"
    assert "evaluation" in (tmp_path / "console.txt").read_text()


async def test_a_repeated_launch_is_redrawn_then_refused_then_fails(
    tmp_path: Path, android_phone: SimulatedPhone
) -> None:
    launch = mobile_answer("launch_app", {"package_name": NOTES})
    # step 2 repeats (and its redraw too), refused with a note; step 3 the same: the task fails
    result = await run_mobile(tmp_path, [launch] * 5, phone_options(android_phone))
    assert actions(android_phone) == [f"shell monkey -p {NOTES} -c android.intent.category.LAUNCHER 1"]
    steps = read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    assert f"Not run again: launch_app(package_name='{NOTES}') already succeeded" in steps[1]["note"]
    assert result["status"] == "FAIL" and "kept repeating" in result["result"]
    prompts = [r["prompt"] for r in read_jsonl(tmp_path / "logs" / "run1" / "request.log")]
    # the earlier steps come back as chat turns: what the model saw, what it answered
    assert [m["role"] for m in prompts[1]] == ["system", "user", "assistant", "user"]
    assert json.loads(prompts[1][2]["content"])["action"]["function"] == "launch_app"
    assert "[Current Screen Controls]" in prompts[1][1]["content"]


async def test_with_guards_off_a_repeat_runs_but_a_sensitive_action_still_asks(
    tmp_path: Path, android_phone: SimulatedPhone, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STARWEAVE_SYSTEM__GUARDS", "off")
    android_phone.update(notes=["keep me"])
    launch = mobile_answer("launch_app", {"package_name": NOTES})
    delete = mobile_answer("click_control", {"control_id": "4", "control_name": "Delete"})
    # no redraw and no refusal: the repeated launch runs, and the model's own answers decide
    result = await run_mobile(
        tmp_path, [launch, launch, delete], phone_options(android_phone), "delete my notes"
    )
    launched = f"shell monkey -p {NOTES} -c android.intent.category.LAUNCHER 1"
    assert [a for a in actions(android_phone) if a == launched] == [launched, launched]
    assert not any(
        "Not run again" in s["note"] for s in read_jsonl(tmp_path / "logs" / "run1" / "response.log")
    )
    # the CONFIRM check is no guard: the delete was asked about, refused and not run
    assert result["asked"] == ["click_control(control_id='4', control_name='Delete')"]
    assert android_phone.state()["notes"] == ["keep me"] and result["status"] == "FAIL"
