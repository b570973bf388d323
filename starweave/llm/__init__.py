"""The LLM layer: one client interface over the embedded model, OpenAI-compatible endpoints, Azure,
Anthropic and recorded answers, with shared timeouts, JSON validation, retries and cost accounting."""

from starweave.llm.base import Completion, LLMClient, Message, RawAnswer, RawRequest, Schema, Usage
from starweave.llm.client import BaseLLMClient, OnCall, SDKClient
from starweave.llm.costs import BUILTIN_PRICES, cost_of, price_of
from starweave.llm.factory import DEFAULT_MODELS, create_llm, provider_status, secret_values
from starweave.llm.jsonschema import extract_json, schema_errors, schema_instruction, validate
from starweave.llm.providers.local_model import model_status

__all__ = [
    "BUILTIN_PRICES",
    "DEFAULT_MODELS",
    "BaseLLMClient",
    "Completion",
    "LLMClient",
    "Message",
    "OnCall",
    "RawAnswer",
    "RawRequest",
    "SDKClient",
    "Schema",
    "Usage",
    "cost_of",
    "create_llm",
    "extract_json",
    "model_status",
    "price_of",
    "provider_status",
    "schema_errors",
    "schema_instruction",
    "secret_values",
    "validate",
]
