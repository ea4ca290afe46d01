"""Third-party hosts' own price rows (simulator/data/host-*.csv, ``HOST_PRICES``): a call a log
says such a host served is priced at that host's row for the model, with the cache rule the host
documents; a model the host's table lacks stays unpriced, never at its maker's list price."""

import re
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest

from prefixbench.simulator.price_lookup import Prices
from prefixbench.simulator.pricing import cost_of, load_host_prices, load_prices
from prefixbench.simulator.providers.hosts import HOST_PRICES, THIRD_PARTY_HOSTS, host_price_file

D = Decimal
#: A call on 2026-07-29 (the day of the public pi session Fireworks served, tests/realdata).
SENT = 1_785_312_000_000


def _usage(prompt: int, cached: int, output: int) -> SimpleNamespace:
    return SimpleNamespace(prompt_tokens=prompt, cached_tokens=cached, written_tokens=0, written_long_tokens=0,
                           output_tokens=output)


def test_every_host_table_is_a_known_host_s_and_every_row_cites_a_source() -> None:
    assert set(HOST_PRICES) <= set(THIRD_PARTY_HOSTS)
    for key, name in HOST_PRICES.items():
        table = load_host_prices(name)
        assert table.rows, name
        for row in table.rows:
            # Each row its host's, with a page a reader can open, and a note saying what it read there.
            assert row.provider == key, row.where
            assert re.match(r"https://[a-z0-9.-]+\.[a-z]+/", row.source), row.where
            assert row.note and row.evidence in ("official", "secondary", "inferred"), row.where
            # Hosts bill no cache write (each file says so): a written token bills as input.
            assert row.rates.cache_write is None and row.long_tier is None, row.where
            assert row.rates.cache_read <= row.rates.input, row.where


@pytest.mark.parametrize(("upstream", "model", "row", "rates"), [
    # The public pi session's host and model (pi's provider id, Fireworks' own model id).
    ("fireworks", "accounts/fireworks/models/minimax-m3", "minimax-m3", ("0.30", "0.06", "1.20")),
    # litellm's route, OpenCode's provider id, OpenRouter's upstream; a maker's spelling as alias.
    ("fireworks_ai", "fireworks_ai/accounts/fireworks/models/kimi-k2p6", "kimi-k2p6", ("0.95", "0.16", "4.00")),
    ("fireworks-ai", "accounts/fireworks/models/glm-5p1", "glm-5p1", ("1.40", "0.26", "4.40")),
    ("Fireworks", "moonshotai/kimi-k2.5", "kimi-k2p5", ("0.60", "0.10", "3.00")),
    ("fireworks", "accounts/fireworks/models/gpt-oss-120b", "gpt-oss-120b", ("0.15", "0.015", "0.60")),
    ("groq", "openai/gpt-oss-120b", "gpt-oss-120b", ("0.15", "0.075", "0.60")),
    ("Groq", "qwen/qwen3-32b", "qwen3-32b", ("0.29", "0.29", "0.59")),
    # Zed's provider name, OpenCode's id; Together's own mixed-case model ids.
    ("Together AI", "moonshotai/Kimi-K2.6", "kimi-k2.6", ("1.20", "0.20", "4.50")),
    ("togetherai", "zai-org/GLM-5.2", "glm-5.2", ("1.40", "0.26", "4.40")),
])
def test_a_call_a_host_served_resolves_to_the_hosts_own_row(upstream: str, model: str, row: str,
                                                            rates: tuple[str, str, str]) -> None:
    prices = Prices(None)
    found = prices.row(model, SENT, upstream=upstream)
    assert found is not None and found.model == row
    assert found.provider == next(key for key in HOST_PRICES if upstream.lower().startswith(key))
    assert (found.rates.input, found.rates.cache_read, found.rates.output) == tuple(map(D, rates))
    assert prices.priced_by_host(model, upstream) and not prices.at_list_price(model, upstream)
    assert not prices.missing


def test_the_cache_rule_each_host_documents() -> None:
    prices = Prices(None)
    usage = _usage(10_000, 8_000, 100)  # 2,000 uncached, 8,000 read, nothing written
    # Fireworks: cached input at the model's own discounted price (MiniMax M3: 0.06 against 0.30).
    fw = cost_of(usage, prices.row("accounts/fireworks/models/minimax-m3", SENT, upstream="fireworks"))
    assert (fw.uncached_input, fw.cache_read, fw.cache_write, fw.output) == (D("0.0006"), D("0.00048"), 0, D("0.00012"))
    # Groq: half the input price on a model its caching page lists (gpt-oss-120b)...
    listed = cost_of(usage, prices.row("openai/gpt-oss-120b", SENT, upstream="groq"))
    assert listed.cache_read == D(8_000) * D("0.075") / 1_000_000
    # ...and none on another: a cached read bills as input (qwen3-32b).
    unlisted = cost_of(usage, prices.row("qwen/qwen3-32b", SENT, upstream="groq"))
    assert unlisted.cache_read == D(8_000) * D("0.29") / 1_000_000 == D("0.00232")
    assert unlisted.total == cost_of(_usage(10_000, 0, 100), prices.row("qwen/qwen3-32b", SENT, upstream="groq")).total


@pytest.mark.parametrize(("model", "upstream"), [
    # A model the host's table lacks, though its maker's table prices it.
    ("accounts/fireworks/models/deepseek-v4-flash", "fireworks"),
    ("minimax-m2", "fireworks"),
    ("moonshotai/kimi-k2.5", "groq"),
    # Together bills cached input at a discount on select models, unnamed: a model whose cached
    # rate no source gives is left out of its table (Kimi K2.5, GLM-5.1), not guessed.
    ("moonshotai/Kimi-K2.5", "together"),
    ("zai-org/GLM-5.1", "togetherai"),
    # A host prefixbench holds no prices of, for a model another host's table has.
    ("minimax-m3", "deepinfra"),
    ("openai/gpt-oss-120b", "Cerebras"),
    # A host running open models itself.
    ("gpt-oss-120b", "ollama"),
])
def test_an_unknown_model_on_a_host_stays_unpriced_never_at_the_makers_price(model: str, upstream: str) -> None:
    prices = Prices(None)
    assert prices.row(model, SENT, upstream=upstream) is None
    assert not prices.priced_by_host(model, upstream)
    # Not listed among the models the maker's table lacks: the host note covers it.
    assert not prices.missing


def test_the_host_price_file_is_found_by_any_spelling_of_the_host() -> None:
    assert {host_price_file(n) for n in ("fireworks", "fireworks_ai", "fireworks-ai", "Fireworks")} == {"host-fireworks.csv"}
    assert host_price_file("groq") == "host-groq.csv"
    assert {host_price_file(n) for n in ("together", "togetherai", "Together AI", "together_ai")} == {"host-together.csv"}
    assert [host_price_file(n) for n in ("deepinfra", "cerebras", "inference", "openrouter", "")] == [None] * 5


def test_price_as_of_reaches_a_hosts_rows_too() -> None:
    # Undated rows (since launch): any date finds them, as the maker's undated rows.
    prices = Prices("2026-01-01")
    assert prices.row("accounts/fireworks/models/minimax-m3", None, upstream="fireworks").model == "minimax-m3"


def test_the_host_files_are_shipped_beside_the_makers_table() -> None:
    data = Path(load_prices().path).parent
    assert sorted(p.name for p in data.glob("host-*.csv")) == sorted(HOST_PRICES.values())
