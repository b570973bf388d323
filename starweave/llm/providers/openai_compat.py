"""OpenAI and every OpenAI-compatible endpoint (api_type openai, ollama, vllm, deepseek, qwen, gemini).

Uses the ``openai`` SDK's ``AsyncOpenAI``. With a schema the request carries
``response_format={"type": "json_schema", ...}`` (``json_object`` plus the schema in the prompt for
endpoints without structured output); the shared client still extracts, validates and retries.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starweave.config.models import AgentLLMConfig, SystemConfig
from starweave.errors import LLMError, ProviderUnavailable
from starweave.llm.base import Message, RawAnswer, RawRequest, Usage
from starweave.llm.client import SDKClient
from starweave.llm.jsonschema import schema_instruction

if TYPE_CHECKING:
    # The SDK takes half a second to import: only a run that uses it pays (as the anthropic one).
    import openai


@dataclass(frozen=True)
class Endpoint:
    """Defaults of one OpenAI-compatible api_type."""

    base_url: str | None
    env_vars: tuple[str, ...]
    default_model: str
    # None: no key needed (a placeholder is sent); otherwise a key is required.
    placeholder_key: str | None = None
    json_schema_supported: bool = True


ENDPOINTS: dict[str, Endpoint] = {
    "openai": Endpoint(None, ("OPENAI_API_KEY",), "gpt-4o-mini"),
    "ollama": Endpoint(
        "http://localhost:11434/v1", ("OLLAMA_API_KEY",), "llama3.1", placeholder_key="ollama"
    ),
    "vllm": Endpoint("http://localhost:8000/v1", ("VLLM_API_KEY",), "", placeholder_key="EMPTY"),
    "deepseek": Endpoint(
        "https://api.deepseek.com/v1", ("DEEPSEEK_API_KEY",), "deepseek-chat", json_schema_supported=False
    ),
    "qwen": Endpoint(
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        ("DASHSCOPE_API_KEY", "QWEN_API_KEY"),
        "qwen-plus",
    ),
    "gemini": Endpoint(
        "https://generativelanguage.googleapis.com/v1beta/openai/",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "gemini-2.0-flash",
    ),
}


def resolve_key(api_type: str, configured: str) -> tuple[str, str]:
    """The API key for ``api_type`` and where it came from (``config``, an env var name or ``placeholder``).

    Returns ``("", "")`` when no key is available.
    """
    if configured:
        return configured, "config"
    endpoint = ENDPOINTS[api_type]
    for variable in endpoint.env_vars:
        value = os.environ.get(variable, "")
        if value:
            return value, variable
    if endpoint.placeholder_key is not None:
        return endpoint.placeholder_key, "placeholder"
    return "", ""


def normalise_base(api_type: str, base: str) -> str | None:
    """The SDK base URL: the reference's ``.../chat/completions`` form is cut, Ollama gets ``/v1``."""
    base = base.strip().rstrip("/")
    if not base:
        return ENDPOINTS[api_type].base_url
    for suffix in ("/chat/completions", "/completions"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    if api_type == "ollama" and not base.endswith("/v1"):
        base += "/v1"
    return base


class OpenAICompatClient(SDKClient):
    """A chat model behind the OpenAI SDK (also used for Azure with an ``AsyncAzureOpenAI`` client)."""

    sdk: openai.AsyncOpenAI

    def __init__(
        self,
        sdk: openai.AsyncOpenAI,
        model: str,
        *,
        provider: str = "openai",
        json_schema_supported: bool = True,
        reasoning_model: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(sdk, model, provider=provider, **kwargs)
        self.json_schema_supported = json_schema_supported
        # With json_schema support the schema goes into response_format and constrains the answer.
        self.schema_constrained = json_schema_supported
        self.reasoning_model = reasoning_model

    async def _raw_complete(self, request: RawRequest) -> RawAnswer:
        body: dict[str, Any] = {"model": self.model, "messages": request.messages}
        if self.reasoning_model:
            # o-series models take max_completion_tokens and no temperature.
            body["max_completion_tokens"] = request.max_tokens
        else:
            body["max_tokens"] = request.max_tokens
            body["temperature"] = request.temperature
        if request.json_schema is not None:
            if self.json_schema_supported:
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": request.schema_name, "schema": request.json_schema},
                }
            else:
                body["response_format"] = {"type": "json_object"}
                instruction: Message = {"role": "system", "content": schema_instruction(request.json_schema)}
                body["messages"] = [*request.messages, instruction]
        import openai

        try:
            response = await self.sdk.chat.completions.create(**body)
        except openai.AuthenticationError:
            raise ProviderUnavailable(
                f"{self.name}/{self.model}: the endpoint rejected the API key (HTTP 401); check API_KEY in "
                "agents.yaml or the provider's API key environment variable"
            ) from None
        except openai.APIStatusError as exc:
            raise self._failure(f"HTTP {exc.status_code}: {exc.message}") from None
        except openai.APIConnectionError as exc:
            raise self._failure(
                f"cannot reach {self.sdk.base_url}: {exc}; check API_BASE and that the server is running"
            ) from None
        if not response.choices:
            raise LLMError(f"{self.name}/{self.model}: the answer has no choices")
        text = response.choices[0].message.content or ""
        usage = response.usage
        return RawAnswer(
            text=text,
            usage=Usage(usage.prompt_tokens, usage.completion_tokens) if usage else Usage(),
            model=response.model or self.model,
        )


def create_openai_client(
    api_type: str, agent: AgentLLMConfig, system: SystemConfig, *, timeout: float, **kwargs: Any
) -> OpenAICompatClient:
    """Build the client for an OpenAI-compatible ``api_type``; ProviderUnavailable if no key is set."""
    endpoint = ENDPOINTS[api_type]
    key, _source = resolve_key(api_type, agent.api_key.get_secret_value())
    if not key:
        raise ProviderUnavailable(
            f"api_type {api_type!r} needs an API key: set API_KEY in agents.yaml or the environment "
            f"variable {' or '.join(endpoint.env_vars)}"
        )
    model = agent.api_model or endpoint.default_model
    if not model:
        raise ProviderUnavailable(f"api_type {api_type!r} has no default model: set API_MODEL in agents.yaml")
    import openai

    sdk = openai.AsyncOpenAI(
        api_key=key,
        base_url=normalise_base(api_type, agent.api_base),
        max_retries=system.max_retry,
        timeout=timeout,
    )
    return OpenAICompatClient(
        sdk,
        model,
        provider=api_type,
        json_schema_supported=endpoint.json_schema_supported,
        reasoning_model=agent.reasoning_model,
        secrets=(key,),
        timeout=timeout,
        **kwargs,
    )
