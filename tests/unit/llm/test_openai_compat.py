"""The OpenAI-compatible provider against a real local HTTP server; secrets never leak."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.fake_openai_server import ScriptedServer, chat_answer, scripted_server

from starweave.config.models import AgentLLMConfig, SystemConfig
from starweave.errors import LLMError, LLMResponseError, ProviderUnavailable
from starweave.llm.factory import create_llm
from starweave.llm.jsonschema import schema_instruction
from starweave.llm.providers.openai_compat import normalise_base

SECRET = "sk-test-9f8e7d6c5b4a39281706"
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with scripted_server() as state:
        yield state


def make_client(server: ScriptedServer, records: list[dict[str, Any]], **extra: Any) -> Any:
    agent = AgentLLMConfig(API_TYPE="openai", API_BASE=server.base_url, API_KEY=SECRET, **extra)
    return create_llm(agent, SystemConfig(MAX_RETRY=0), on_call=records.append)


async def test_schema_call_sends_json_schema_and_counts_cost(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.body = chat_answer('{"n": 7}')
    records: list[dict[str, Any]] = []
    client = make_client(server, records)
    with caplog.at_level(logging.DEBUG):
        completion = await client.complete([{"role": "user", "content": "seven"}], SCHEMA, max_tokens=50)
    await client.aclose()
    request = server.requests[0]
    assert request["model"] == "gpt-4o-mini" and request["max_tokens"] == 50 and request["temperature"] == 0.0
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "response", "schema": SCHEMA},
    }
    assert {k.lower(): v for k, v in server.headers[0].items()}["authorization"] == f"Bearer {SECRET}"
    assert completion.parsed == {"n": 7} and completion.provider == "openai"
    # Dated model names are priced as their base model: 1000 × 0.00015/1K + 100 × 0.0006/1K.
    assert completion.cost == pytest.approx(0.00015 + 0.00006)
    assert SECRET not in caplog.text and SECRET not in repr(records)


async def test_rejected_key_is_a_clear_error_without_the_key(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.status = 401
    server.body = {"error": {"message": f"Incorrect API key provided: {SECRET}.", "code": "invalid_api_key"}}
    client = make_client(server, [])
    with caplog.at_level(logging.DEBUG), pytest.raises(ProviderUnavailable) as info:
        await client.complete([{"role": "user", "content": "x"}])
    await client.aclose()
    assert "rejected the API key (HTTP 401)" in str(info.value)
    assert SECRET not in str(info.value) and info.value.__cause__ is None
    assert SECRET not in caplog.text


async def test_server_error_message_is_redacted(server: ScriptedServer) -> None:
    server.status = 400
    server.body = {"error": {"message": f"bad request for key {SECRET}"}}
    client = make_client(server, [])
    with pytest.raises(LLMError) as info:
        await client.complete([{"role": "user", "content": "x"}])
    await client.aclose()
    assert "HTTP 400" in str(info.value) and SECRET not in str(info.value)


async def test_unreachable_endpoint_names_the_base_url() -> None:
    agent = AgentLLMConfig(API_TYPE="vllm", API_BASE="http://127.0.0.1:9/v1", API_MODEL="m")
    client = create_llm(agent, SystemConfig(MAX_RETRY=0))
    with pytest.raises(LLMError, match=r"cannot reach http://127\.0\.0\.1:9/v1"):
        await client.complete([{"role": "user", "content": "x"}])
    await client.aclose()


async def test_deepseek_uses_json_object_and_schema_in_prompt(server: ScriptedServer) -> None:
    server.body = chat_answer('{"n": 1}', model="deepseek-chat")
    agent = AgentLLMConfig(API_TYPE="deepseek", API_BASE=server.base_url, API_KEY=SECRET)
    client = create_llm(agent, SystemConfig(MAX_RETRY=0))
    completion = await client.complete([{"role": "user", "content": "one"}], SCHEMA)
    await client.aclose()
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    assert server.requests[0]["messages"][-1]["content"] == schema_instruction(SCHEMA)
    assert completion.parsed == {"n": 1}


@pytest.mark.parametrize(("api_type", "schema_repeated"), [("openai", False), ("deepseek", True)])
async def test_retry_repeats_the_schema_only_without_constrained_decoding(
    server: ScriptedServer, api_type: str, schema_repeated: bool
) -> None:
    server.body = chat_answer('{"n": "seven"}')
    agent = AgentLLMConfig(API_TYPE=api_type, API_BASE=server.base_url, API_KEY=SECRET)
    client = create_llm(agent, SystemConfig(MAX_RETRY=0, JSON_PARSING_RETRY=2))
    with pytest.raises(LLMResponseError):
        await client.complete([{"role": "user", "content": "seven"}], SCHEMA)
    await client.aclose()
    assert len(server.requests) == 2
    retry = next(m for m in reversed(server.requests[1]["messages"]) if m["role"] == "user")
    assert retry["content"].startswith("Your previous answer could not be used: $.n: expected integer")
    assert ('"required": ["n"]' in retry["content"]) is schema_repeated


def test_base_url_normalisation() -> None:
    assert (
        normalise_base("openai", "https://api.openai.com/v1/chat/completions") == "https://api.openai.com/v1"
    )
    assert normalise_base("ollama", "http://localhost:11434") == "http://localhost:11434/v1"
    assert normalise_base("ollama", "") == "http://localhost:11434/v1"
    assert normalise_base("openai", "") is None
