"""The call logic every provider shares: timeout, JSON extraction, validation, retries, logging, cost.

A provider subclasses :class:`BaseLLMClient` and implements only :meth:`BaseLLMClient._raw_complete`
(one request, one answer). Everything else lives here so all providers behave the same.
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from starweave.errors import (
    JSONExtractionError,
    LLMError,
    LLMResponseError,
    LLMTimeoutError,
    SchemaValidationError,
)
from starweave.llm.base import Completion, LLMClient, Message, RawAnswer, RawRequest, Schema, Usage
from starweave.llm.costs import cost_of
from starweave.llm.jsonschema import extract_json, schema_dict, schema_instruction, schema_name, validate
from starweave.redaction import redact

logger = logging.getLogger("starweave.llm")

OnCall = Callable[[dict[str, Any]], None]


def retry_message(error: str, json_schema: dict[str, Any] | None) -> str:
    """The user message that feeds a parse/validation error back to the model.

    ``json_schema`` is ``None`` when the provider's decoding is schema-constrained: the schema is
    then already part of every request and is not repeated.
    """
    return f"Your previous answer could not be used: {error}. {schema_instruction(json_schema)}"


class BaseLLMClient(LLMClient):
    """Shared implementation of :meth:`LLMClient.complete` on top of a provider's raw call.

    ``timeout`` (seconds) bounds each attempt; ``json_retries`` is how many attempts a schema call
    gets (``JSON_PARSING_RETRY``); ``prices`` override the built-in price table; ``on_call``
    receives one record per attempt (for a session's request log).
    """

    name = "base"
    # True when the provider enforces the schema while decoding (JSON-schema-constrained output);
    # retries then do not repeat the schema.
    schema_constrained = False

    def __init__(
        self,
        model: str,
        *,
        timeout: float = 180.0,
        json_retries: int = 3,
        max_tokens: int = 2000,
        temperature: float = 0.0,
        prices: Mapping[str, Any] | None = None,
        on_call: OnCall | None = None,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.json_retries = max(1, json_retries)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.prices = prices
        self.on_call = on_call

    @abstractmethod
    async def _raw_complete(self, request: RawRequest) -> RawAnswer:
        """Send one request and return the answer text and its token usage."""

    async def aclose(self) -> None:
        """Nothing to release by default."""

    async def complete(
        self,
        messages: list[Message],
        schema: Schema | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        """Call the model; with ``schema``, retry until the answer parses and validates."""
        json_schema = schema_dict(schema) if schema is not None else None
        name = schema_name(schema) if schema is not None else "response"
        tokens = max_tokens if max_tokens is not None else self.max_tokens
        temp = temperature if temperature is not None else self.temperature
        conversation = list(messages)
        usage = Usage()
        started = time.monotonic()
        attempts_allowed = self.json_retries if schema is not None else 1
        last_error = ""
        for attempt in range(1, attempts_allowed + 1):
            attempt_started = time.monotonic()
            answer = await self._timed_call(RawRequest(conversation, json_schema, name, tokens, temp))
            usage = usage + answer.usage
            model = answer.model or self.model
            parsed: dict[str, Any] | None = None
            error = ""
            if schema is not None:
                try:
                    parsed = validate(extract_json(answer.text), schema)
                except (JSONExtractionError, SchemaValidationError) as exc:
                    error = str(exc)
            self._record(conversation, answer, model, attempt, time.monotonic() - attempt_started, error)
            if not error:
                latency = time.monotonic() - started
                return Completion(
                    text=answer.text,
                    parsed=parsed,
                    usage=usage,
                    cost=cost_of(model, usage, self.prices, self.name),
                    latency=latency,
                    model=model,
                    provider=self.name,
                    attempts=attempt,
                )
            last_error = error
            logger.info(
                "%s/%s answer rejected (attempt %d of %d): %s",
                self.name,
                model,
                attempt,
                attempts_allowed,
                error,
            )
            assert json_schema is not None
            conversation = [
                *conversation,
                {"role": "assistant", "content": answer.text},
                {
                    "role": "user",
                    "content": retry_message(error, None if self.schema_constrained else json_schema),
                },
            ]
        raise LLMResponseError(
            f"{self.name}/{self.model} gave no valid JSON answer after {attempts_allowed} attempts; "
            f"last error: {last_error}. Raise JSON_PARSING_RETRY in system.yaml or use a stronger model."
        )

    async def _timed_call(self, request: RawRequest) -> RawAnswer:
        try:
            return await asyncio.wait_for(self._raw_complete(request), self.timeout)
        except TimeoutError as exc:
            raise LLMTimeoutError(
                f"{self.name}/{self.model} did not answer within {self.timeout:g} s; raise TIMEOUT in "
                "system.yaml (or the agent's TIMEOUT in agents.yaml), or use a faster model"
            ) from exc

    def _record(
        self,
        messages: list[Message],
        answer: RawAnswer,
        model: str,
        attempt: int,
        elapsed: float,
        error: str,
    ) -> None:
        cost = cost_of(model, answer.usage, self.prices, self.name)
        logger.info(
            "llm call provider=%s model=%s attempt=%d prompt_tokens=%d completion_tokens=%d "
            "cost=%.6f latency=%.2fs%s",
            self.name,
            model,
            attempt,
            answer.usage.prompt_tokens,
            answer.usage.completion_tokens,
            cost,
            elapsed,
            f" error={error}" if error else "",
        )
        if self.on_call is None:
            return
        self.on_call(
            {
                "provider": self.name,
                "model": model,
                "attempt": attempt,
                "messages": messages,
                "response": answer.text,
                "prompt_tokens": answer.usage.prompt_tokens,
                "completion_tokens": answer.usage.completion_tokens,
                "cost": cost,
                "latency": elapsed,
                "error": error or None,
                **({"timings": answer.timings} if answer.timings else {}),
            }
        )


class SDKClient(BaseLLMClient):
    """A provider reached through a vendor SDK object (``sdk``): the provider name it reports, the
    secrets to mask in its error texts, and closing the SDK's connections."""

    def __init__(
        self, sdk: Any, model: str, *, provider: str, secrets: tuple[str, ...] = (), **kwargs: Any
    ) -> None:
        super().__init__(model, **kwargs)
        self.name = provider
        self.sdk = sdk
        self._secrets = secrets

    def _failure(self, detail: str) -> LLMError:
        """An LLMError naming provider and model, with the secrets masked in ``detail``."""
        return LLMError(f"{self.name}/{self.model}: {redact(detail, self._secrets)}")

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections."""
        await self.sdk.close()
