"""Anthropic Claude (api_type ``claude``/``anthropic``), through the optional ``anthropic`` SDK.

OpenAI-format messages are converted by :func:`to_anthropic_messages`. Claude has no JSON-schema
response format here, so the schema goes into the system prompt and the shared client extracts,
validates and retries.
"""

from __future__ import annotations

import os
import re
from typing import Any

from starweave.config.models import AgentLLMConfig, SystemConfig
from starweave.errors import LLMError, ProviderUnavailable
from starweave.llm.base import Message, RawAnswer, RawRequest, Usage
from starweave.llm.client import SDKClient
from starweave.llm.jsonschema import schema_instruction

ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
ANTHROPIC_INSTALL_HINT = "pip install 'starweave[anthropic]'"
DEFAULT_CLAUDE_MODEL = "claude-sonnet-4-20250514"
_DATA_URL = re.compile(r"^data:(?P<media>[\w/+.-]+);base64,(?P<data>.*)$", re.DOTALL)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if part.get("type") == "text")


def _block(part: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI content part as an Anthropic content block."""
    if part.get("type") == "image_url":
        image = part.get("image_url")
        url = image.get("url", "") if isinstance(image, dict) else str(image or "")
        match = _DATA_URL.match(url)
        if match:
            source = {"type": "base64", "media_type": match["media"], "data": match["data"]}
        else:
            source = {"type": "url", "url": url}
        return {"type": "image", "source": source}
    if part.get("type") == "text":
        return {"type": "text", "text": part.get("text", "")}
    raise LLMError(f"unsupported message content part type {part.get('type')!r} for Anthropic")


def to_anthropic_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Convert OpenAI chat messages to Anthropic's ``(system, messages)``.

    System messages become the ``system`` text; image_url parts become image blocks (data URLs as
    base64 sources); consecutive turns of the same role are merged because Claude wants them to
    alternate; any role other than assistant is sent as user.
    """
    system_parts: list[str] = []
    converted: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role", "user")
        content = message.get("content")
        if role in ("system", "developer"):
            system_parts.append(_text_of(content))
            continue
        role = "assistant" if role == "assistant" else "user"
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}]
        else:
            blocks = [_block(part) for part in content or []]
        if converted and converted[-1]["role"] == role:
            converted[-1]["content"].extend(blocks)
        else:
            converted.append({"role": role, "content": blocks})
    return "\n\n".join(part for part in system_parts if part), converted


def resolve_anthropic_key(configured: str) -> tuple[str, str]:
    """The Anthropic API key and where it came from (``config`` or the env var); ``("", "")`` if none."""
    if configured:
        return configured, "config"
    value = os.environ.get(ANTHROPIC_KEY_ENV, "")
    return (value, ANTHROPIC_KEY_ENV) if value else ("", "")


class AnthropicClient(SDKClient):
    """Claude through ``anthropic.AsyncAnthropic``."""

    name = "anthropic"

    def __init__(self, sdk: Any, model: str, *, provider: str = "anthropic", **kwargs: Any) -> None:
        super().__init__(sdk, model, provider=provider, **kwargs)

    async def _raw_complete(self, request: RawRequest) -> RawAnswer:
        import anthropic

        system, converted = to_anthropic_messages(request.messages)
        if request.json_schema is not None:
            system = f"{system}\n\n{schema_instruction(request.json_schema)}".strip()
        body: dict[str, Any] = {
            "model": self.model,
            "messages": converted,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if system:
            body["system"] = system
        try:
            response = await self.sdk.messages.create(**body)
        except anthropic.AuthenticationError:
            raise ProviderUnavailable(
                f"{self.name}/{self.model}: Anthropic rejected the API key (HTTP 401); check API_KEY in "
                f"agents.yaml or {ANTHROPIC_KEY_ENV}"
            ) from None
        except anthropic.APIStatusError as exc:
            raise self._failure(f"HTTP {exc.status_code}: {exc}") from None
        except anthropic.APIConnectionError as exc:
            raise self._failure(f"cannot reach Anthropic: {exc}") from None
        text = "".join(getattr(block, "text", "") for block in response.content)
        usage = Usage(response.usage.input_tokens, response.usage.output_tokens)
        return RawAnswer(text=text, usage=usage, model=response.model or self.model)


def create_anthropic_client(
    api_type: str, agent: AgentLLMConfig, system: SystemConfig, *, timeout: float, **kwargs: Any
) -> AnthropicClient:
    """Build the Claude client; ProviderUnavailable when the SDK or the key is missing."""
    try:
        import anthropic
    except ImportError as exc:
        raise ProviderUnavailable(
            f"api_type {api_type!r} needs the anthropic SDK: run {ANTHROPIC_INSTALL_HINT}"
        ) from exc
    key, _source = resolve_anthropic_key(agent.api_key.get_secret_value())
    if not key:
        raise ProviderUnavailable(
            f"api_type {api_type!r} needs an API key: set API_KEY in agents.yaml or {ANTHROPIC_KEY_ENV}"
        )
    sdk = anthropic.AsyncAnthropic(
        api_key=key, base_url=agent.api_base or None, max_retries=system.max_retry, timeout=timeout
    )
    return AnthropicClient(
        sdk,
        agent.api_model or DEFAULT_CLAUDE_MODEL,
        provider=api_type,
        secrets=(key,),
        timeout=timeout,
        **kwargs,
    )
