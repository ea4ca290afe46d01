"""Price rows for the models the public sessions of tests/realdata name (each was unpriced on
main, its dollars left out of the audit), and the models left unpriced on purpose: their price
is a plan's or a route's, not a list price."""

from __future__ import annotations

from decimal import Decimal

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import load_prices

#: As a log spells the model: (the row it resolves to, input, cache read, output).
PRICED = {
    "anthropic/claude-opus-4.8-fast": ("claude-opus-4-8-fast", "10", "1.00", "50"),  # Cline's gateway
    "claude-3-5-sonnet-20241022": ("claude-3-5-sonnet", "3", "0.30", "15"),
    "gpt-4.1-2025-04-14": ("gpt-4.1", "2.00", "0.50", "8.00"),
    "gpt-5-mini-2025-08-07": ("gpt-5-mini", "0.25", "0.025", "2.00"),
    "gpt-4.1-mini-2025-04-14": ("gpt-4.1-mini", "0.40", "0.10", "1.60"),  # crewAI's cassettes (with gpt-5-nano: 264 calls)
    "gpt-5-nano": ("gpt-5-nano", "0.05", "0.005", "0.40"),
    "gpt-5-codex": ("gpt-5-codex", "1.25", "0.125", "10.00"),
    "gpt-4": ("gpt-4", "30.00", "30.00", "60.00"),
    "gpt-35-turbo": ("gpt-3.5-turbo", "0.50", "0.50", "1.50"),
    "gemini-2.0-flash": ("gemini-2.0-flash", "0.10", "0.025", "0.40"),
}

#: Priced by a plan or a route: no row.
UNPRICED = ("big-pickle", "deepseek-v4-flash-free", "kimi-for-coding", "minimax-m2.7:cloud", "glm-4-7", "doubao-seed-code",
            "claude_4_5_opus",
            "openrouter-llama-4-maverick", "mistralai/voxtral-small-24b-2507")


@pytest.mark.parametrize("name", sorted(PRICED))
def test_a_public_sessions_model_has_its_price(name: str) -> None:
    model, input_, read, output = PRICED[name]
    row = load_prices().get(name)
    assert row.model == model
    assert (row.rates.input, row.rates.cache_read, row.rates.output) == (Decimal(input_), Decimal(read), Decimal(output))
    assert row.source.startswith("https://")


def test_fast_mode_is_twice_opus_4_8_with_the_cache_multipliers_on_top() -> None:
    table = load_prices()
    fast, standard = table.get("claude-opus-4-8-fast").rates, table.get("claude-opus-4-8").rates
    assert fast.input == 2 * standard.input and fast.output == 2 * standard.output
    assert (fast.cache_read, fast.cache_write, fast.cache_write_1h) == (
        fast.input / 10, fast.input * Decimal("1.25"), fast.input * 2)


@pytest.mark.parametrize("name", UNPRICED)
def test_a_plan_or_route_priced_model_stays_unpriced(name: str) -> None:
    with pytest.raises(UserError, match="unknown price model"):
        load_prices().get(name)
