"""Fast-mode price rows (Anthropic's fast mode, issue 21 item 3): each model the fast-mode page
prices has a ``<model>-fast`` row, its multiple of the model's own row with the cache multipliers
on top (https://platform.claude.com/docs/en/build-with-claude/fast-mode), found by
``get(model, speed="fast")`` as the audit asks for it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import cost_of, load_prices
from prefixbench.simulator.usage import Usage

#: Model, the date asked, the fast-mode page's multiple of the standard price.
MULTIPLES = [
    ("claude-opus-4-6", "2026-06-01", 6),
    ("claude-opus-4-7", "2026-06-01", 6),
    ("claude-opus-4-8", "2026-07-01", 2),
    ("claude-opus-5", "2026-08-01", 2),
    ("claude-opus-5-5", "2026-10-01", 2),
]


@pytest.mark.parametrize(("model", "when", "multiple"), MULTIPLES)
def test_a_fast_row_is_its_multiple_of_every_standard_price(model: str, when: str, multiple: int) -> None:
    # Fails on main (no speed argument; only Opus 4.8 had a fast row).
    table = load_prices()
    fast, standard = table.get(model, as_of=when, speed="fast"), table.get(model, as_of=when)
    assert fast.model == model + "-fast"
    for part in ("input", "cache_read", "cache_write", "cache_write_1h", "output"):
        assert getattr(fast.rates, part) == multiple * getattr(standard.rates, part), part
    assert fast.long_tier is None


def test_opus_4_6_fast_as_launched_doubles_again_above_200k_tokens() -> None:
    row = load_prices().get("claude-opus-4-6", as_of="2026-03-01", speed="fast")
    assert (row.rates.input, row.rates.output) == (Decimal(30), Decimal(150))
    assert row.long_tier is not None and row.long_tier.threshold == 200_000
    assert (row.long_tier.rates.input, row.long_tier.rates.cache_read, row.long_tier.rates.output) == (
        Decimal(60), Decimal("6.00"), Decimal(225))
    # 250,000 prompt tokens (200,000 read, 50,000 uncached) and 1,000 out, all at the long tier:
    # 200,000 x 6 + 50,000 x 60 + 1,000 x 225 = 4,425,000 / 1M
    usage = Usage(cache_read=200_000, uncached=50_000, output=1_000)
    assert cost_of(usage, row).total == Decimal("4.425")


def test_a_gateway_s_fast_name_and_the_speed_find_the_same_row() -> None:
    table = load_prices()
    assert table.get("anthropic/claude-opus-4.6-fast").model == "claude-opus-4-6-fast"
    assert table.get("claude-opus-4-8-fast", speed="fast").model == "claude-opus-4-8-fast"
    assert table.get("claude-opus-4-8-20260528", speed="fast").model == "claude-opus-4-8-fast"


def test_a_model_without_fast_mode_has_no_fast_price() -> None:
    with pytest.raises(UserError, match="no fast-mode price for 'claude-sonnet-4-6'"):
        load_prices().get("claude-sonnet-4-6", speed="fast")
    with pytest.raises(UserError, match="unknown speed 'turbo'"):
        load_prices().get("claude-opus-4-8", speed="turbo")
