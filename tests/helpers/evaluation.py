"""What the EvaluationAgent tests share: a recorded verdict, the evaluation.log record's keys and
reader, and a spy on the messages the judge sends its model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from starweave.agents.evaluation import EvaluationAgent

#: The keys of an evaluation.log record, in the reference's order (spec D §22).
RECORD_KEYS = ["complete", "sub_scores", "reason", "level", "request", "type"]


def verdict(complete: str, reason: str, name: str = "the request") -> dict[str, Any]:
    """The EvaluationAgent's answer: one sub-goal ``name`` scored as the whole, ``complete``."""
    return {"reason": reason, "sub_scores": [{"name": name, "evaluation": complete}], "complete": complete}


def evaluation_log(folder: Path) -> list[dict[str, Any]]:
    """The records of ``folder/evaluation.log``."""
    text = (folder / "evaluation.log").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[list[dict[str, Any]]]:
    """The messages the EvaluationAgent sends its model (a spy: the real call still happens)."""
    seen: list[list[dict[str, Any]]] = []
    original = EvaluationAgent.judge

    async def spy(self: EvaluationAgent, messages: list[dict[str, Any]]) -> Any:
        seen.append(messages)
        return await original(self, messages)

    monkeypatch.setattr(EvaluationAgent, "judge", spy)
    return seen
