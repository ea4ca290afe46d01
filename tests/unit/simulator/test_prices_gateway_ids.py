"""Model ids as gateways and client libraries spell them, resolved to a price row only where the
gateway bills the provider's list price: OpenRouter's variants (``:free`` at $0, ``:thinking`` /
``:beta`` as the model, ``:nitro`` / ``:floor`` / ``:exacto`` only for a model every host bills at
its list price), Vertex AI's ``@`` snapshots (LiteLLM's ``vertex_ai/claude-...@20250929``), and
the DeepSeek and OpenAI rows real logs named without one. Each id here was "no price" before."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import FREE_MODEL, load_prices
from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.fixtures import OPENROUTER_URL, capture_line, chat_usage, openrouter_turns, write_jsonl

#: As a log spells it -> the row it resolves to.
RESOLVED = {
    # OpenRouter's free variants: $0 a token, whatever the model.
    "deepseek/deepseek-chat-v3.1:free": FREE_MODEL,
    "qwen/qwen3-coder:free": FREE_MODEL,
    "openrouter/moonshotai/kimi-k2:free": FREE_MODEL,  # (LiteLLM's openrouter/ route)
    "nvidia/nemotron-3-super-120b-a12b:free": FREE_MODEL,  # a model the table has no paid row for
    # Catalog variants billed as the model.
    "anthropic/claude-3.7-sonnet:thinking": "claude-3-7-sonnet",
    "anthropic/claude-3.5-sonnet:beta": "claude-3-5-sonnet",
    # Routing variants of closed-weight models: every host (the vendor, Bedrock, Vertex AI, Azure)
    # bills the vendor's list price.
    "anthropic/claude-sonnet-4.5:exacto": "claude-sonnet-4-5",
    "google/gemini-2.5-pro:nitro": "gemini-2.5-pro",
    "x-ai/grok-code-fast-1:floor": "grok-code-fast-1",
    "openai/gpt-5:nitro": "gpt-5",
    # Vertex AI's snapshot ids (LiteLLM's vertex_ai/ route and Claude Code on Vertex).
    "vertex_ai/claude-sonnet-4-5@20250929": "claude-sonnet-4-5",
    "claude-opus-4-1@20250805": "claude-opus-4-1",
    "vertex_ai/gemini-2.5-pro@001": "gemini-2.5-pro",
    # Rows added: o4-mini (a Langfuse fixture's calls).
    "o4-mini-2025-04-16": "o4-mini",
    "openai/o4-mini": "o4-mini",
    # Codex's small models (test logs name them; the rows were missing).
    "codex-mini-latest": "codex-mini-latest",
    "gpt-5.1-codex-mini": "gpt-5.1-codex-mini",
    # Z.AI's GLM-4.7 (a Claude Code test log names it through Z.AI's Anthropic-compatible endpoint).
    "glm-4.7": "glm-4.7",
    "zai/glm-4.7": "glm-4.7",  # (LiteLLM's zai/ route)
    "glm-4.7-flashx": "glm-4.7-flashx",
}

#: Still no price, on purpose: a routing variant of an open-weight model picks among hosts of
#: differing prices, ``:online`` adds a search fee the table does not hold, and a ``:free`` needs
#: a gateway's vendor part to be OpenRouter's.
UNPRICED = ("z-ai/glm-4.6:exacto", "deepseek/deepseek-chat:nitro", "moonshotai/kimi-k2:floor", "openai/gpt-4o:online",
            "qwen3-coder:free", "deepseek/deepseek-chat-v3.1", "qwen/qwen3-coder", "anthropic/claude-sonnet-4.9:exacto")


@pytest.mark.parametrize("name", sorted(RESOLVED))
def test_a_gateways_spelling_resolves_to_the_row_it_bills_at(name: str) -> None:
    assert load_prices().resolve(name) == RESOLVED[name]


@pytest.mark.parametrize("name", UNPRICED)
def test_a_spelling_without_a_list_price_stays_unpriced(name: str) -> None:
    with pytest.raises(UserError, match="unknown price model"):
        load_prices().resolve(name)


def test_the_free_row_bills_nothing_and_cites_openrouter() -> None:
    row = load_prices().get("qwen/qwen3-coder:free")
    assert row.is_free and row.source.startswith("https://openrouter.ai/")
    assert not load_prices().get("anthropic/claude-3.7-sonnet:thinking").is_free


@pytest.mark.parametrize(("when", "prices"), [
    ("2025-09-05T15:59Z", ("0.27", "0.07", "1.10")),  # V3 (before the V3.1 price list)
    ("2025-09-05T16:00Z", ("0.56", "0.07", "1.68")),  # V3.1, the official page's list from 16:00 UTC
    ("2025-09-29", ("0.28", "0.028", "0.42")),  # V3.2-Exp's cut (was dated 2025-12-09, a table's update)
])
def test_deepseek_chat_carries_the_v3_1_and_v3_2_price_lists(when: str, prices: tuple[str, str, str]) -> None:
    for model in ("deepseek-chat", "deepseek-reasoner"):
        rates = load_prices().get(model, as_of=when).rates
        if model == "deepseek-reasoner" and when < "2025-09-05T16:00Z":
            continue  # (R1's own price before V3.1)
        assert (rates.input, rates.cache_read, rates.output) == tuple(Decimal(p) for p in prices)


def test_an_openrouter_free_model_is_priced_at_0_and_the_audit_says_so(tmp_path: Path) -> None:
    """Two calls of qwen/qwen3-coder:free through OpenRouter: before, both were "no price" (their
    dollars left out, the model listed unpriced); now $0, priced, and a note names the row."""
    url, usage = OPENROUTER_URL, chat_usage
    first, second = openrouter_turns()
    lines = [capture_line({"model": "qwen/qwen3-coder:free", "messages": first}, {"body": {"id": "gen-1", "usage": usage(3210, 0)}}, url=url),
             capture_line({"model": "qwen/qwen3-coder:free", "messages": second}, {"body": {"id": "gen-2", "usage": usage(3230, 3200)}},
                          url=url, sent=1748554764.0)]
    result = run_audit([write_jsonl(tmp_path / "or.jsonl", lines)])
    assert result.totals.unpriced_requests == 0
    assert result.totals.cost_usd == 0
    (model,) = result.models
    assert model.priced and model.unpriced_requests == 0
    assert f"priced at $0 by the row {FREE_MODEL} (a free variant, no charge a token): qwen/qwen3-coder:free" in result.notes
    assert not any(n.startswith("no price for") for n in result.notes)
