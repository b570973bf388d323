"""Replay recorded answers (api_type ``replay``): deterministic runs without a model.

The file is JSON lines, read in order, one answer per call. Each line is either

* a JSON object: the model's answer (a line of a session's ``response.log`` works too: when the
  call has a schema, only the keys the schema's top-level ``properties`` define are kept, matched
  case- and underscore-insensitively, so ``control_label`` answers ``ControlLabel``); or
* a JSON string: the raw answer text, returned as is (to replay malformed or fenced answers); or
* a conditional answer, ``{"$if_prompt_contains": "text", "then": <answer>, "else": <answer>}``:
  ``then`` when the call's prompt (the text of all its messages) contains ``text``, else ``else``;
  each answer is one of these three forms (conditionals nest). It shows what a prompt's content
  changes, e.g. that a retrieved help document changes the agent's answer.

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


IF_PROMPT_CONTAINS = "$if_prompt_contains"
BRANCHES = ("then", "else")


def conditional_problem(value: dict[str, Any]) -> str:
    """What is wrong with a conditional answer (and the ones it nests), or "" when it is well formed."""
    if not isinstance(value[IF_PROMPT_CONTAINS], str) or not value[IF_PROMPT_CONTAINS]:
        return f"{IF_PROMPT_CONTAINS} must be a non-empty string"
    extra = sorted(set(value) - {IF_PROMPT_CONTAINS, *BRANCHES})
    if extra:
        return f"a conditional answer has only {IF_PROMPT_CONTAINS}, then and else (not {', '.join(extra)})"
    for branch in BRANCHES:
        if not isinstance(value.get(branch), dict | str):
            return f"a conditional answer needs '{branch}': an answer object or a raw answer string"
        nested = value[branch]
        if isinstance(nested, dict) and IF_PROMPT_CONTAINS in nested:
            problem = conditional_problem(nested)
            if problem:
                return problem
    return ""


def prompt_text(request: RawRequest) -> str:
    """The text of every message of a call (text parts of multi-part contents), one per line."""
    parts: list[str] = []
    for message in request.messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return "\n".join(parts)


def choose(answer: dict[str, Any] | str, request: RawRequest) -> dict[str, Any] | str:
    """The answer a (possibly conditional) replay line gives to ``request``."""
    while isinstance(answer, dict) and IF_PROMPT_CONTAINS in answer:
        answer = answer["then" if answer[IF_PROMPT_CONTAINS] in prompt_text(request) else "else"]
    return answer


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
        problem = (
            conditional_problem(value) if isinstance(value, dict) and IF_PROMPT_CONTAINS in value else ""
        )
        if problem:
            raise ProviderUnavailable(f"{file}:{number}: {problem}")
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
        answer = choose(self.answers[self.position], request)
        self.position += 1
        if isinstance(answer, str):
            return RawAnswer(text=answer, model=self.model)
        return RawAnswer(
            text=json.dumps(select_fields(answer, request.json_schema), ensure_ascii=False), model=self.model
        )
