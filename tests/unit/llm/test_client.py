"""The shared call logic: retries with the error fed back, usage accumulation, timeouts, records."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from starweave.errors import LLMResponseError, LLMTimeoutError
from starweave.llm.base import Message, RawAnswer, RawRequest, Usage
from starweave.llm.client import BaseLLMClient, retry_message
from starweave.llm.providers.replay import ReplayClient

SCHEMA = {
    "type": "object",
    "properties": {
        "thought": {"type": "string"},
        "status": {"type": "string", "enum": ["CONTINUE", "FINISH"]},
    },
    "required": ["thought", "status"],
    "additionalProperties": False,
}
MESSAGES: list[Message] = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "go"}]


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


class RecordingReplay(ReplayClient):
    """A replay client that keeps the conversations it was sent (a test provider, not a mock)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[list[Message]] = []

    async def _raw_complete(self, request: RawRequest) -> RawAnswer:
        self.sent.append(list(request.messages))
        answer = await super()._raw_complete(request)
        # Pretend each answer used tokens so accumulation can be checked.
        return RawAnswer(answer.text, Usage(10, 5), answer.model)


async def test_invalid_first_answer_is_retried_with_the_error_fed_back(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "answers.jsonl",
        [
            "Sorry, I cannot do JSON",
            {"thought": "t", "status": "DONE"},
            {"thought": "ok", "status": "FINISH"},
        ],
    )
    records: list[dict[str, Any]] = []
    client = RecordingReplay(path, json_retries=3, on_call=records.append)
    completion = await client.complete(MESSAGES, SCHEMA)
    assert completion.parsed == {"thought": "ok", "status": "FINISH"}
    assert json.loads(completion.text) == completion.parsed
    assert completion.attempts == 3
    assert completion.usage == Usage(30, 15)
    assert completion.usage.total == 45
    assert completion.provider == "replay" and completion.cost == 0.0
    # The second request carries the bad answer and a user message naming the error.
    second = client.sent[1]
    assert second[: len(MESSAGES)] == MESSAGES
    assert second[-2] == {"role": "assistant", "content": "Sorry, I cannot do JSON"}
    assert second[-1]["role"] == "user" and "no JSON object" in second[-1]["content"]
    assert '"enum": ["CONTINUE", "FINISH"]' in second[-1]["content"]
    assert "'DONE' is not one of" in client.sent[2][-1]["content"]
    assert [r["attempt"] for r in records] == [1, 2, 3]
    assert records[0]["error"] and records[2]["error"] is None


async def test_gives_up_after_json_parsing_retry_attempts(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "answers.jsonl", ["nope", "still nope", {"thought": "late", "status": "FINISH"}]
    )
    client = ReplayClient(path, json_retries=2)
    with pytest.raises(LLMResponseError, match="after 2 attempts; last error: the answer contains no JSON"):
        await client.complete(MESSAGES, SCHEMA)
    assert client.remaining == 1


async def test_without_schema_the_text_is_returned_unparsed(tmp_path: Path) -> None:
    client = ReplayClient(write_lines(tmp_path / "a.jsonl", ["free text"]))
    completion = await client.complete(MESSAGES)
    assert (completion.text, completion.parsed, completion.attempts) == ("free text", None, 1)


async def test_fenced_answer_is_accepted(tmp_path: Path) -> None:
    client = ReplayClient(
        write_lines(tmp_path / "a.jsonl", ['```json\n{"thought": "x", "status": "CONTINUE"}\n```'])
    )
    completion = await client.complete(MESSAGES, SCHEMA)
    assert completion.parsed == {"thought": "x", "status": "CONTINUE"} and completion.attempts == 1


class SlowClient(BaseLLMClient):
    """A provider whose answer takes ``delay`` seconds."""

    name = "slow"

    def __init__(self, delay: float, **kwargs: Any) -> None:
        super().__init__("slow-model", **kwargs)
        self.delay = delay

    async def _raw_complete(self, request: RawRequest) -> RawAnswer:
        await asyncio.sleep(self.delay)
        return RawAnswer('{"thought": "t", "status": "FINISH"}', Usage(1000, 1000))


async def test_timeout_names_provider_model_and_setting() -> None:
    client = SlowClient(5.0, timeout=0.05)
    with pytest.raises(LLMTimeoutError) as info:
        await client.complete(MESSAGES)
    message = str(info.value)
    assert "slow/slow-model" in message and "0.05 s" in message and "TIMEOUT" in message


async def test_cost_uses_prices_and_latency_is_measured(caplog: pytest.LogCaptureFixture) -> None:
    client = SlowClient(0.02, prices={"slow-model": {"prompt": 0.001, "completion": 0.002}})
    with caplog.at_level(logging.INFO, logger="starweave.llm"):
        completion = await client.complete(MESSAGES, SCHEMA, max_tokens=10, temperature=0.5)
    assert completion.cost == pytest.approx(0.003)
    assert completion.latency >= 0.02
    line = next(r.getMessage() for r in caplog.records if "llm call" in r.getMessage())
    assert (
        "provider=slow model=slow-model" in line and "prompt_tokens=1000" in line and "cost=0.003000" in line
    )


class ConstrainedReplay(RecordingReplay):
    """A recording replay provider that declares schema-constrained decoding, like the local model."""

    schema_constrained = True


async def test_constrained_provider_retry_names_the_error_without_the_schema(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "a.jsonl", [{"thought": "t", "status": "DONE"}, {"thought": "t"}])
    client = ConstrainedReplay(path, json_retries=2)
    with pytest.raises(LLMResponseError):
        await client.complete(MESSAGES, SCHEMA)
    retry = client.sent[1][-1]
    assert retry["role"] == "user" and "'DONE' is not one of" in retry["content"]
    assert "one JSON object" in retry["content"]
    assert '"properties"' not in retry["content"] and '"enum"' not in retry["content"]


async def test_unconstrained_provider_retry_repeats_the_schema(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "a.jsonl", [{"thought": "t", "status": "DONE"}, {"thought": "t"}])
    client = RecordingReplay(path, json_retries=2)
    with pytest.raises(LLMResponseError):
        await client.complete(MESSAGES, SCHEMA)
    retry = client.sent[1][-1]["content"]
    assert "'DONE' is not one of" in retry and json.dumps(SCHEMA) in retry


def test_retry_message_prepends_the_error() -> None:
    with_schema = retry_message("bad value", SCHEMA)
    assert with_schema.startswith("Your previous answer could not be used: bad value.")
    assert with_schema.endswith(json.dumps(SCHEMA))
    short = retry_message("bad value", None)
    assert short.startswith("Your previous answer could not be used: bad value.")
    assert "one JSON object" in short and "{" not in short
