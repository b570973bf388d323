"""The provider-neutral types of the LLM layer: token usage, a completed call and the client interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

# A schema is either a JSON-schema dict or a pydantic model class.
Schema = dict[str, Any] | type[BaseModel]
# Messages are OpenAI chat format: {"role": ..., "content": str | list of text/image_url parts}.
Message = dict[str, Any]


@dataclass(frozen=True)
class Usage:
    """Token counts of one call (or of all attempts of one call)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens
        )


@dataclass(frozen=True)
class Completion:
    """The result of :meth:`LLMClient.complete`.

    ``parsed`` is the validated JSON object when a schema was given, else None. ``usage``, ``cost``
    and ``latency`` (seconds) cover every attempt; ``attempts`` counts them (1 = first try worked).
    """

    text: str
    parsed: dict[str, Any] | None
    usage: Usage
    cost: float
    latency: float
    model: str
    provider: str
    attempts: int = 1


@dataclass(frozen=True)
class RawRequest:
    """One request to a provider's raw call: the conversation, the JSON schema the answer must
    follow (``None`` for free text) and its name, and the sampling settings of this attempt."""

    messages: list[Message]
    json_schema: dict[str, Any] | None
    schema_name: str
    max_tokens: int
    temperature: float


@dataclass(frozen=True)
class RawAnswer:
    """What a provider's raw call returns: the answer text, the tokens it used and, when the
    provider measures them (the embedded model does), where the time went (``timings``)."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    timings: dict[str, float] = field(default_factory=dict)


class LLMClient(ABC):
    """A chat model behind one provider.

    ``name`` is the provider name (``openai``, ``local``, ...), ``model`` the model name used for
    prices and logs.
    """

    name: str
    model: str

    @abstractmethod
    async def complete(
        self,
        messages: list[Message],
        schema: Schema | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        """Send ``messages``; with ``schema`` the answer must be one JSON object matching it."""

    @abstractmethod
    async def aclose(self) -> None:
        """Release the provider's connections or model."""
