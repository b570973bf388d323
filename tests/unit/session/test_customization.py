"""The question-and-answer memory, the asker, the data folder, and the round-level verdict."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from starweave.agent.blackboard import Blackboard
from starweave.agents.common import NO_ANSWER, ask_questions
from starweave.agents.evaluation import EvaluationAgent
from starweave.agents.evaluation.response import EvaluationResponse
from starweave.agents.linux.response import LinuxAgentResponse, response_json_schema
from starweave.config.models import SystemConfig
from starweave.session.console import ConsoleView
from starweave.session.customization import (
    EARLIER_ANSWER,
    QAMemory,
    QuestionAsker,
    data_root,
    load_earlier_answers,
    qa_pair_path,
)
from starweave.session.evaluation import evaluate_run
from starweave.session.logs import SessionLogs


class TypingView(ConsoleView):
    """A view on a terminal whose user types ``typed`` (None: no terminal)."""

    def __init__(self, typed: list[str] | None, ask: bool = True) -> None:
        self.out = io.StringIO()
        super().__init__(console=Console(file=self.out, width=200), ask=ask)
        self.typed = typed

    def can_ask(self) -> bool:
        return self.ask_allowed and self.typed is not None

    async def _read_line(self) -> str | None:
        return self.typed.pop(0) if self.typed else None

    def text(self) -> str:
        return " ".join(self.out.getvalue().split())


def test_the_data_folder_follows_the_environment(tmp_path: Path) -> None:
    assert data_root({"STARWEAVE_DATA_DIR": str(tmp_path)}) == tmp_path
    assert data_root({"XDG_DATA_HOME": "/x"}) == Path("/x/starweave")
    assert data_root({"HOME": "/home/u"}) == Path("/home/u/.local/share/starweave")
    system = SystemConfig()
    assert qa_pair_path(system, {"XDG_DATA_HOME": "/x"}) == Path(
        "/x/starweave/customization/global_memory.jsonl"
    )
    absolute = SystemConfig.model_validate({"QA_PAIR_FILE": str(tmp_path / "qa.jsonl")})
    assert qa_pair_path(absolute, {"XDG_DATA_HOME": "/x"}) == tmp_path / "qa.jsonl"


def test_pairs_are_appended_with_their_folder_and_read_back_newest_last(tmp_path: Path) -> None:
    memory = QAMemory(tmp_path / "deep" / "qa.jsonl", secrets=["hunter2secret"])
    for number in range(5):
        memory.append(f"q{number}?", f"a{number} hunter2secret", request="the request")
    pairs, problems = memory.recent(3)
    assert [p.question for p in pairs] == ["q2?", "q3?", "q4?"] and problems == []
    assert all("hunter2secret" not in p.answer and p.request == "the request" for p in pairs)
    assert memory.recent(0) == ([], [])
    assert QAMemory(tmp_path / "missing.jsonl").recent(5) == ([], [])


def test_corrupt_lines_are_skipped_and_named(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    good = json.dumps({"question": "q?", "answer": "a"})
    path.write_text(f"{good}\n{{broken\n[1, 2]\n\n{json.dumps({'question': 'q2?'})}\n", encoding="utf-8")
    pairs, problems = QAMemory(path).recent(10)
    assert [(p.question, p.answer) for p in pairs] == [("q?", "a")]
    assert [p.split(": ")[0] for p in problems] == [f"{path}:2", f"{path}:3", f"{path}:5"]
    view = TypingView(None)
    board = Blackboard()
    assert load_earlier_answers(QAMemory(path), 10, board, view) == 1
    assert board.questions.to_list_of_dicts() == [{"question": "q?", "answer": "a", "from": EARLIER_ANSWER}]


def test_an_unreadable_file_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "qa.jsonl"
    folder.mkdir()  # a folder where the file should be
    assert load_earlier_answers(QAMemory(folder), 5, Blackboard(), TypingView(None)) == 0
    assert "warning: QA_PAIR_FILE" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("ask_question", "typed", "ask", "reason"),
    [
        (False, ["x"], True, "ASK_QUESTION is off"),
        (True, None, True, "no terminal to ask on"),
        (True, ["x"], False, "--no-ask"),
    ],
)
async def test_an_unasked_question_says_why(
    ask_question: bool, typed: list[str] | None, ask: bool, reason: str, tmp_path: Path
) -> None:
    view = TypingView(typed, ask=ask)
    memory = QAMemory(tmp_path / "qa.jsonl")
    asker = QuestionAsker(view, ask_question, memory)
    assert await asker("Which file?") == ""
    assert f"Question not asked ({reason}): Which file? - continuing without an answer" in view.text()
    assert not memory.path.exists()


async def test_an_answered_question_is_kept_and_an_empty_one_is_not(tmp_path: Path) -> None:
    view = TypingView(["  notes.txt ", ""])
    memory = QAMemory(tmp_path / "qa.jsonl")
    asker = QuestionAsker(view, True, memory)
    board = Blackboard()
    await ask_questions(asker, board, ["Which file?", " ", "Which folder?"])
    assert board.questions.to_list_of_dicts() == [
        {"question": "Which file?", "answer": "notes.txt"},
        {"question": "Which folder?", "answer": NO_ANSWER},
    ]
    assert [(p.question, p.answer) for p in memory.recent(5)[0]] == [("Which file?", "notes.txt")]
    assert "Question (PENDING)" in view.text() and "No answer given" in view.text()


async def test_nobody_to_ask_is_no_answer() -> None:
    board = Blackboard()
    await ask_questions(None, board, ["Why?"])
    assert board.questions.to_list_of_dicts() == [{"question": "Why?", "answer": NO_ANSWER}]


def test_the_linux_schema_offers_pending_only_when_asked_to() -> None:
    tools = [{"name": "execute_command", "input_schema": {"properties": {"command": {"type": "string"}}}}]

    def statuses(schema: dict[str, Any]) -> list[list[str]]:
        return [b["properties"]["status"]["enum"] for b in schema["properties"]["action"]["anyOf"]]

    assert all("PENDING" not in s for s in statuses(response_json_schema(tools)))
    with_ask = statuses(response_json_schema(tools, ask=True))
    assert "PENDING" not in with_ask[0] and "PENDING" in with_ask[-1]  # only without a call
    parsed = LinuxAgentResponse.model_validate(
        {"action": {"function": "", "arguments": {}, "status": "pending"}, "result": "Which file?"}
    )
    assert parsed.status == "PENDING"


class RecordingEvaluator(EvaluationAgent):
    """Judges "yes" and keeps the steps it was shown."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[list[Mapping[str, Any]]] = []

    async def evaluate(
        self,
        request: str,
        records: Iterable[Mapping[str, Any]],
        outcome: Mapping[str, Any] | None = None,
        screenshots: Path | None = None,
        screenshot_steps: Any = None,
    ) -> EvaluationResponse:
        self.seen.append(list(records))
        return EvaluationResponse.model_validate({"complete": "yes", "reason": "ok", "sub_scores": []})


async def test_a_round_verdict_judges_only_its_rounds_steps(tmp_path: Path) -> None:
    logs = SessionLogs(tmp_path, "t")
    for step, round_num in ((1, 0), (2, 0), (3, 1)):
        logs.response_log.write({"step": step, "round_num": round_num})
    evaluator = RecordingEvaluator()
    view = TypingView(None)
    record = await evaluate_run(evaluator, logs, {"request": "second"}, view, "LinuxAgent", round_num=1)
    assert record is not None and record["level"] == "round" and record["round"] == 1
    assert [s["step"] for s in evaluator.seen[0]] == [3]
    session = await evaluate_run(evaluator, logs, {"request": "first"}, view, "LinuxAgent")
    assert session is not None and session["level"] == "session" and "round" not in session
    assert len(evaluator.seen[1]) == 3
