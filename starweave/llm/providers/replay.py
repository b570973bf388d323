"""Replay recorded answers (api_type ``replay``): deterministic runs without a model.

The file is JSON lines, read in order, one answer per call. Each line is either

* a JSON object: the model's answer (a line of a session's ``response.log`` works too: when the
  call has a schema, only the keys the schema's top-level ``properties`` define are kept, matched
  case- and underscore-insensitively, so ``control_label`` answers ``ControlLabel``); or
* a JSON string: the raw answer text, returned as is (to replay malformed or fenced answers).

Blank lines are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starweave.errors import LLMError, ProviderUnavailable
from starweave.llm.base import RawAnswer, RawRequest
from starweave.llm.client import BaseLLMClient

REPLAY_MODEL = "replay"


def load_answers(path: str | Path) -> list[dict[str, Any] | str]:
    """Read the answers of a replay file; errors name ``file:line``."""
    file = Path(path).expanduser()
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise ProviderUnavailable(
            f"{file}: replay file not found; set REPLAY_FILE to an existing file"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ProviderUnavailable(f"{file}: cannot read the replay file: {exc}") from exc
    answers: list[dict[str, Any] | str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ProviderUnavailable(
                f"{file}:{number}: not valid JSON: {exc.msg} (column {exc.colno})"
            ) from exc
        if not isinstance(value, dict | str):
            raise ProviderUnavailable(
                f"{file}:{number}: expected a JSON object (an answer) or a string (raw answer text), "
                f"got {type(value).__name__}"
            )
        answers.append(value)
    return answers


def _normal(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def select_fields(record: dict[str, Any], json_schema: dict[str, Any] | None) -> dict[str, Any]:
    """The part of ``record`` the schema's top-level properties define, keyed by the schema's names.

    Without a schema, or with a schema without properties, the record is returned unchanged.
    """
    properties = (json_schema or {}).get("properties")
    if not isinstance(properties, dict) or not properties:
        return record
    by_normal = {_normal(key): key for key in record}
    selected: dict[str, Any] = {}
    for name in properties:
        if name in record:
            selected[name] = record[name]
        elif _normal(name) in by_normal:
            selected[name] = record[by_normal[_normal(name)]]
    return selected


class ReplayClient(BaseLLMClient):
    """Answers each call with the next recorded answer of ``path``."""

    name = "replay"

    def __init__(self, path: str | Path, *, model: str = REPLAY_MODEL, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.path = Path(path)
        self.answers = load_answers(path)
        self.position = 0

    @property
    def remaining(self) -> int:
        """How many answers are left."""
        return len(self.answers) - self.position

    async def _raw_complete(self, request: RawRequest) -> RawAnswer:
        if self.position >= len(self.answers):
            raise LLMError(
                f"{self.path}: the replay file had {len(self.answers)} answers and all were used "
                f"(call {self.position + 1}); record more answers or shorten the run"
            )
        answer = self.answers[self.position]
        self.position += 1
        if isinstance(answer, str):
            return RawAnswer(text=answer, model=self.model)
        return RawAnswer(
            text=json.dumps(select_fields(answer, request.json_schema), ensure_ascii=False), model=self.model
        )
