"""Prices of hosted models and the cost of a call (USD per 1,000 tokens, as ``prices.yaml``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from starweave.llm.base import Usage

logger = logging.getLogger("starweave.llm")

# (prompt, completion) USD per 1K tokens. Config PRICES entries override these.
BUILTIN_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (0.0025, 0.01),
    "gpt-4o-mini": (0.00015, 0.0006),
    "gpt-4-turbo": (0.01, 0.03),
    "gpt-4-vision-preview": (0.01, 0.03),
    "gpt-3.5-turbo": (0.0005, 0.0015),
    "gpt-4.1": (0.002, 0.008),
    "gpt-4.1-mini": (0.0004, 0.0016),
    "gpt-4.1-nano": (0.0001, 0.0004),
    "o1": (0.015, 0.06),
    "o3-mini": (0.0011, 0.0044),
    "o4-mini": (0.0011, 0.0044),
    "claude-3-5-sonnet-20241022": (0.003, 0.015),
    "claude-3-5-haiku-20241022": (0.0008, 0.004),
    "claude-3-opus-20240229": (0.015, 0.075),
    "claude-3-haiku-20240307": (0.00025, 0.00125),
    "claude-3-7-sonnet-20250219": (0.003, 0.015),
    "claude-sonnet-4-20250514": (0.003, 0.015),
    "deepseek-chat": (0.00027, 0.0011),
    "deepseek-reasoner": (0.00055, 0.00219),
    "gemini-2.0-flash-exp": (0.0, 0.0),
}

# Providers that never cost money.
FREE_PROVIDERS = frozenset({"local", "replay", "ollama"})


def _price_pair(entry: Any) -> tuple[float, float]:
    """Accept a config ``Price`` model, a mapping ``{prompt, completion}`` or a pair."""
    if isinstance(entry, Mapping):
        return float(entry.get("prompt", 0.0)), float(entry.get("completion", 0.0))
    if isinstance(entry, tuple | list):
        return float(entry[0]), float(entry[1])
    return float(entry.prompt), float(entry.completion)


def price_of(model: str, prices: Mapping[str, Any] | None = None) -> tuple[float, float] | None:
    """The (prompt, completion) price of ``model``; config ``prices`` win over the built-in table.

    Gemini models are free in the reference's table. A dated variant (``gpt-4o-2024-08-06``) falls
    back to the longest known prefix. None when the model is unknown.
    """
    table = {name: _price_pair(entry) for name, entry in (prices or {}).items()}
    for name, pair in table.items():
        if name.lower() == model.lower():
            return pair
    if model in BUILTIN_PRICES:
        return BUILTIN_PRICES[model]
    if model.lower().startswith("gemini"):
        return (0.0, 0.0)
    known = {**BUILTIN_PRICES, **table}
    prefixes = [name for name in known if model.startswith(name + "-")]
    if prefixes:
        return known[max(prefixes, key=len)]
    return None


def cost_of(model: str, usage: Usage, prices: Mapping[str, Any] | None = None, provider: str = "") -> float:
    """USD cost of ``usage`` tokens on ``model``: Σ tokens / 1000 × price; 0.0 for free or unknown models."""
    if provider in FREE_PROVIDERS:
        return 0.0
    pair = price_of(model, prices)
    if pair is None:
        logger.debug("no price known for model %r; counting its cost as 0 (add it under PRICES)", model)
        return 0.0
    return usage.prompt_tokens / 1000 * pair[0] + usage.completion_tokens / 1000 * pair[1]
