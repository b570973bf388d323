"""Running the LinuxAgent on recorded answers: answer builders, a replay file, one run, the logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console

from starweave.session.console import ConsoleView
from starweave.session.runner import RunOptions, run_linux_task


def answer(
    command: str | None, status: str = "CONTINUE", result: str = "", thought: str = "next"
) -> dict[str, Any]:
    """One LinuxAgent answer: ``execute_command(command)`` with ``status``, or no call when None."""
    if command is None:
        action: dict[str, Any] = {"function": "", "arguments": {}, "status": status}
    else:
        action = {"function": "execute_command", "arguments": {"command": command}, "status": status}
    return {"observation": "seen", "thought": thought, "action": action, "result": result}


def tool_answer(
    function: str, arguments: dict[str, Any], status: str = "CONTINUE", result: str = ""
) -> dict[str, Any]:
    """One LinuxAgent answer calling any tool."""
    action = {"function": function, "arguments": arguments, "status": status}
    return {"observation": "seen", "thought": "next", "action": action, "result": result}


def replay_file(folder: Path, answers: list[Any]) -> Path:
    """The answers as a replay file (JSON lines) in ``folder``."""
    path = folder / "answers.jsonl"
    path.write_text("\n".join(json.dumps(a) for a in answers) + "\n", encoding="utf-8")
    return path


class AnsweringView(ConsoleView):
    """A console view whose user answers confirmations with a fixed decision and, given ``typed``
    (a terminal), types those lines in turn: answers to questions and follow-up requests."""

    def __init__(self, console: Console, answer: bool, typed: list[str] | None = None) -> None:
        super().__init__(console=console)
        self.answer = answer
        self.asked: list[str] = []
        self.typed = typed

    def confirm(self, command: str, reason: str) -> bool:
        self.asked.append(command)
        return self.answer

    def can_ask(self) -> bool:
        return self.typed is not None

    async def _read_line(self) -> str | None:
        return self.typed.pop(0) if self.typed else None


async def run(
    tmp_path: Path,
    answers: list[Any],
    request: str = "do it",
    confirm: bool = False,
    workspace: Path | None = None,
    typed: list[str] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Run ``request`` on ``answers`` in ``workspace`` (default ``tmp_path/ws``); logs go to
    ``tmp_path/logs/run1`` (``log_dir=``: another folder than ``tmp_path/logs``).
    ``typed``: the lines the user types on the terminal (None: no terminal).

    Returns the run's result (what ``result.json`` holds) plus ``asked``: the commands the user was
    asked to confirm.
    """
    options = RunOptions(
        request=request,
        workspace=workspace or tmp_path / "ws",
        provider="replay",
        replay_file=replay_file(tmp_path, answers),
        log_dir=kwargs.pop("log_dir", tmp_path / "logs"),
        task="run1",
        **kwargs,
    )
    with (tmp_path / "console.txt").open("w") as console_file:
        view = AnsweringView(Console(file=console_file, width=120), confirm, typed)
        result = await run_linux_task(options, view=view)
    result["asked"] = view.asked
    return result


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines log."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def prompts(tmp_path: Path) -> list[list[dict[str, Any]]]:
    """The prompt (chat messages) of each step of the run in ``tmp_path``."""
    return [r["prompt"] for r in read_jsonl(tmp_path / "logs" / "run1" / "request.log")]


def responses(tmp_path: Path) -> list[dict[str, Any]]:
    """The response-log records of the run in ``tmp_path``."""
    return read_jsonl(tmp_path / "logs" / "run1" / "response.log")
