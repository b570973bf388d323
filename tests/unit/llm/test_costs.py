"""Price table lookup and call cost."""

from __future__ import annotations

import logging

import pytest

from starweave.config.models import Price
from starweave.llm.base import Usage
from starweave.llm.costs import BUILTIN_PRICES, cost_of, price_of


def test_builtin_prices_match_the_reference_template() -> None:
    assert BUILTIN_PRICES["gpt-4o"] == (0.0025, 0.01)
    assert BUILTIN_PRICES["gpt-4o-mini"] == (0.00015, 0.0006)
    assert BUILTIN_PRICES["claude-3-5-sonnet-20241022"] == (0.003, 0.015)


def test_cost_is_tokens_over_1000_times_price() -> None:
    assert cost_of("gpt-4o", Usage(2000, 500)) == pytest.approx(2 * 0.0025 + 0.5 * 0.01)


def test_config_prices_override_and_add_models() -> None:
    prices = {"gpt-4o": Price(prompt=1.0, completion=2.0), "my-model": {"prompt": 0.5, "completion": 0.5}}
    assert cost_of("gpt-4o", Usage(1000, 1000), prices) == pytest.approx(3.0)
    assert cost_of("my-model", Usage(1000, 0), prices) == pytest.approx(0.5)


def test_dated_variant_uses_longest_prefix() -> None:
    assert price_of("gpt-4o-mini-2024-07-18") == (0.00015, 0.0006)
    assert price_of("gpt-4o-2024-08-06") == (0.0025, 0.01)


def test_free_and_unknown_models_cost_nothing(caplog: pytest.LogCaptureFixture) -> None:
    assert cost_of("gemini-1.5-pro", Usage(1000, 1000)) == 0.0
    assert cost_of("gpt-4o", Usage(1000, 1000), provider="local") == 0.0
    assert cost_of("gpt-4o", Usage(1000, 1000), provider="replay") == 0.0
    with caplog.at_level(logging.DEBUG, logger="starweave.llm"):
        assert cost_of("mystery-model", Usage(1000, 1000)) == 0.0
    assert any("mystery-model" in r.getMessage() for r in caplog.records)
