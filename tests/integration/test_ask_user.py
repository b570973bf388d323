"""PENDING questions, the question-and-answer memory, follow-up rounds and round verdicts of a
LinuxAgent run on recorded answers (real tools, real files; the terminal is a scripted view)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.linux_replay import answer, prompts, read_jsonl, responses, run

from starweave.agents.common import NO_ANSWER
from starweave.session.customization import EARLIER_ANSWER

QUESTION = "Which greeting should the file hold?"


def config_dir(tmp_path: Path, **keys: Any) -> Path:
    """A config folder whose system.yaml sets ``keys``."""
    folder = tmp_path / "config"
    (folder / "ufo").mkdir(parents=True, exist_ok=True)
    lines = [f"{key}: {json.dumps(value)}" for key, value in keys.items()]
    (folder / "ufo" / "system.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def ask_answers(then: str = "echo ahoy > greeting.txt") -> list[dict[str, Any]]:
    """The model asks, then writes what it was told, then finishes."""
    return [
        answer(None, "PENDING", result=QUESTION, thought="the request does not say which greeting"),
        answer(then),
        answer(None, "FINISH", result="written"),
    ]


def first_user_message(prompt: list[dict[str, Any]]) -> str:
    return str(next(m["content"] for m in prompt if m["role"] == "user"))


async def test_a_question_is_asked_and_the_answer_reaches_the_next_prompt(tmp_path: Path) -> None:
    config = config_dir(tmp_path, ASK_QUESTION=True)
    result = await run(tmp_path, ask_answers(), request="write a greeting", config_dir=config, typed=["ahoy"])
    assert result["status"] == "FINISH"
    calls = prompts(tmp_path)
    # The first prompt offers PENDING (the user can be asked) and holds no answer yet.
    assert "status PENDING" in calls[0][0]["content"] and "ahoy" not in first_user_message(calls[0])
    pair = json.dumps({"question": QUESTION, "answer": "ahoy"})
    assert pair in first_user_message(calls[1]) and "data from the user" in first_user_message(calls[1])
    assert [r["status"] for r in responses(tmp_path)] == ["PENDING", "CONTINUE", "FINISH"]
    assert (tmp_path / "ws" / "greeting.txt").read_text() == "ahoy\n"
    console = (tmp_path / "console.txt").read_text()
    assert "Question (PENDING)" in console and QUESTION in console


async def test_without_a_terminal_the_run_goes_on_and_says_so(tmp_path: Path) -> None:
    config = config_dir(tmp_path, ASK_QUESTION=True)
    result = await run(tmp_path, ask_answers(), config_dir=config, typed=None)
    assert result["status"] == "FINISH"
    calls = prompts(tmp_path)
    # Nobody can be asked: the model is told no answer is available.
    assert json.dumps(NO_ANSWER) in first_user_message(calls[1])
    console = " ".join((tmp_path / "console.txt").read_text().split())
    assert f"Question not asked (no terminal to ask on): {QUESTION} - continuing without an answer" in console


async def test_with_ask_question_off_the_model_is_not_offered_pending(tmp_path: Path) -> None:
    # The schema has no PENDING: the recorded question is an invalid answer, the next one is used.
    result = await run(tmp_path, ask_answers(), typed=["never read"])
    assert result["status"] == "FINISH"
    assert "status PENDING" not in prompts(tmp_path)[0][0]["content"]
    assert [r["status"] for r in responses(tmp_path)] == ["CONTINUE", "FINISH"]
    assert "Question" not in (tmp_path / "console.txt").read_text()


async def test_an_empty_answer_is_no_answer(tmp_path: Path) -> None:
    qa_file = tmp_path / "qa" / "memory.jsonl"
    config = config_dir(tmp_path, ASK_QUESTION=True, USE_CUSTOMIZATION=True, QA_PAIR_FILE=str(qa_file))
    await run(tmp_path, ask_answers(), config_dir=config, typed=["  "])
    assert json.dumps(NO_ANSWER) in first_user_message(prompts(tmp_path)[1])
    assert "No answer given" in (tmp_path / "console.txt").read_text()
    assert not qa_file.exists()  # nothing answered, nothing kept


async def test_answers_are_kept_and_offered_to_later_runs(tmp_path: Path) -> None:
    qa_file = tmp_path / "qa" / "memory.jsonl"
    keys = {"ASK_QUESTION": True, "USE_CUSTOMIZATION": True, "QA_PAIR_FILE": str(qa_file), "QA_PAIR_NUM": 2}
    first = tmp_path / "first"
    first.mkdir()
    await run(
        first, ask_answers(), request="write a greeting", config_dir=config_dir(first, **keys), typed=["ahoy"]
    )
    saved = read_jsonl(qa_file)
    assert [(r["question"], r["answer"], r["request"]) for r in saved] == [
        (QUESTION, "ahoy", "write a greeting")
    ]
    assert saved[0]["time"].endswith("+00:00")
    # An older pair, a corrupt line and a newer pair: QA_PAIR_NUM 2 keeps the two newest valid ones.
    with qa_file.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
        handle.write(
            json.dumps({"question": "Your city?", "answer": "Lyon", "request": "r", "time": ""}) + "\n"
        )
    qa_file.write_text(json.dumps({"question": "Oldest?", "answer": "gone"}) + "\n" + qa_file.read_text())
    later = tmp_path / "later"
    later.mkdir()
    finish = [answer(None, "FINISH", result="done")]
    await run(later, finish, config_dir=config_dir(later, **keys), typed=None)
    shown = first_user_message(prompts(later)[0])
    assert '"answer": "ahoy"' in shown and '"answer": "Lyon"' in shown and "Oldest?" not in shown
    assert EARLIER_ANSWER in shown


async def test_secrets_are_not_kept(tmp_path: Path) -> None:
    qa_file = tmp_path / "memory.jsonl"
    keys = {"ASK_QUESTION": True, "USE_CUSTOMIZATION": True, "QA_PAIR_FILE": str(qa_file)}
    key = "sk-proj-Abc123Def456Ghi789Jkl012Mno345"
    await run(tmp_path, ask_answers(), config_dir=config_dir(tmp_path, **keys), typed=[f"use {key}"])
    text = qa_file.read_text()
    assert key not in text and "use " in text


async def test_max_round_runs_a_follow_up_round_in_the_same_session(tmp_path: Path) -> None:
    answers = [
        answer("echo one > one.txt"),
        answer(None, "FINISH", result="one written"),
        answer("echo two > two.txt"),
        answer(None, "FINISH", result="two written"),
    ]
    # MAX_STEP counts each round's steps: two rounds of two steps fit under a cap of 2.
    config = config_dir(tmp_path, MAX_ROUND=2, MAX_STEP=2)
    result = await run(tmp_path, answers, request="write one.txt", config_dir=config, typed=["write two.txt"])
    assert result["status"] == "FINISH" and result["result"] == "two written" and result["rounds"] == 2
    records = responses(tmp_path)
    assert [(r["round_num"], r["request"]) for r in records] == [
        (0, "write one.txt"),
        (0, "write one.txt"),
        (1, "write two.txt"),
        (1, "write two.txt"),
    ]
    assert (tmp_path / "ws" / "one.txt").exists() and (tmp_path / "ws" / "two.txt").exists()
    # Same agent memory: the second round's prompt still shows the first round's steps.
    assert "echo one > one.txt" in json.dumps(prompts(tmp_path)[2])
    assert "Next request (empty to stop)" in (tmp_path / "console.txt").read_text()


async def test_max_round_stops_on_an_empty_request_and_off_a_terminal(tmp_path: Path) -> None:
    answers = [answer(None, "FINISH", result="done"), answer(None, "FINISH", result="unused")]
    for typed, name in ((["   "], "empty"), (None, "no_terminal")):
        folder = tmp_path / name
        folder.mkdir()
        result = await run(folder, answers, config_dir=config_dir(folder, MAX_ROUND=3), typed=typed)
        assert result["result"] == "done"
        assert len(responses(folder)) == 1


async def test_eva_round_judges_each_round_and_the_session(tmp_path: Path) -> None:
    def verdict(complete: str) -> dict[str, Any]:
        return {"reason": f"judged {complete}", "sub_scores": [], "complete": complete}

    answers = [
        answer(None, "FINISH", result="first"),
        verdict("yes"),
        answer(None, "FINISH", result="second"),
        verdict("no"),
        verdict("unsure"),
    ]
    config = config_dir(tmp_path, MAX_ROUND=2, EVA_ROUND=True, EVA_SESSION=True)
    await run(tmp_path, answers, request="first request", config_dir=config, typed=["second request"])
    records = read_jsonl(tmp_path / "logs" / "run1" / "evaluation.log")
    assert [(r["level"], r.get("round"), r["complete"], r["request"]) for r in records] == [
        ("round", 0, "yes", "first request"),
        ("round", 1, "no", "second request"),
        ("session", None, "unsure", "first request"),
    ]


def verdict_answer(complete: str) -> dict[str, Any]:
    return {"reason": f"judged {complete}", "sub_scores": [], "complete": complete}


async def test_eva_round_alone_judges_the_rounds_without_a_session_verdict(tmp_path: Path) -> None:
    answers = [
        answer(None, "FINISH", result="first"),
        verdict_answer("yes"),
        answer(None, "FINISH", result="second"),
        verdict_answer("no"),
    ]
    # EVA_ROUND without EVA_SESSION / --evaluate: the evaluator is built for the rounds only.
    config = config_dir(tmp_path, MAX_ROUND=2, EVA_ROUND=True)
    await run(tmp_path, answers, request="first request", config_dir=config, typed=["second request"])
    records = read_jsonl(tmp_path / "logs" / "run1" / "evaluation.log")
    assert [(r["level"], r.get("round"), r["complete"]) for r in records] == [
        ("round", 0, "yes"),
        ("round", 1, "no"),
    ]


async def test_a_single_round_judged_as_a_session_is_not_judged_twice(tmp_path: Path) -> None:
    answers = [answer(None, "FINISH", result="done"), verdict_answer("unsure")]
    # One round ran: MAX_ROUND 1, or the user gave no follow-up request.
    for max_round, typed in ((1, None), (3, [""])):
        folder = tmp_path / f"max_round_{max_round}"
        folder.mkdir()
        config = config_dir(folder, MAX_ROUND=max_round, EVA_ROUND=True, EVA_SESSION=True)
        await run(folder, answers, request="only request", config_dir=config, typed=typed)
        records = read_jsonl(folder / "logs" / "run1" / "evaluation.log")
        assert [(r["level"], r["complete"]) for r in records] == [("session", "unsure")]
