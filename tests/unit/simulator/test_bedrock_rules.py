"""AWS Bedrock's rules (simulator/providers/bedrock.py) and its Amazon Nova price rows."""

from __future__ import annotations

from decimal import Decimal

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import cost_of, load_prices
from prefixbench.simulator.providers import BEDROCK, provider_of_model, provider_of_request
from prefixbench.simulator.usage import Usage


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        # The prompt-caching page's model table: 512, 4,096, 2,048, Nova's "1K", else 1,024.
        ("us.anthropic.claude-opus-5", 512), ("anthropic.claude-fable-5-1", 512),
        ("anthropic.claude-opus-4-5-20251101-v1:0", 4096), ("global.anthropic.claude-opus-4-7", 4096),
        ("anthropic.claude-haiku-4-5-20251001-v1:0", 4096), ("anthropic.claude-mythos-preview", 4096),
        ("anthropic.claude-3-5-haiku-20241022-v1:0", 2048),
        ("us.amazon.nova-pro-v1:0", 1000), ("amazon.nova-micro-v1:0", 1000), ("global.amazon.nova-2-lite-v1:0", 1000),
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", 1024), ("anthropic.claude-opus-4-8", 1024),
        ("anthropic.claude-opus-4-1-20250805-v1:0", 1024), ("anthropic.claude-3-7-sonnet-20250219-v1:0", 1024),
    ],
)
def test_minimum_per_cache_checkpoint_by_model(model: str, minimum: int) -> None:
    assert BEDROCK.min_cacheable(model) == minimum


@pytest.mark.parametrize("model", ["amazon.nova-lite-v1:0", "eu.amazon.nova-lite-v1:0", "apac.amazon.nova-pro-v1:0",
                                   "global.amazon.nova-2-lite-v1:0", "jp.anthropic.claude-sonnet-4-5-20250929-v1:0"])
def test_nova_and_every_profile_geography_name_bedrock(model: str) -> None:
    found = provider_of_model(model)
    assert found is not None and found.name == "bedrock"
    assert provider_of_request(f"http://127.0.0.1:8080/model/{model}/converse-stream", model).name == "bedrock"


def test_the_three_usage_spellings_read_alike() -> None:
    # Converse (and ConverseStream's metadata event); cacheDetails splits the write by TTL.
    converse = {"inputTokens": 12, "outputTokens": 8, "cacheReadInputTokens": 4_000, "cacheWriteInputTokens": 3_000,
                "cacheDetails": [{"ttl": "5m", "inputTokens": 1_000}, {"ttl": "1h", "inputTokens": 2_000}]}
    assert BEDROCK.read_usage(converse, "w") == Usage(4_000, 1_000, 2_000, 12, 8)
    # Nova's InvokeModel answer: Converse's input name, the invocation metrics' cache names.
    nova = {"inputTokens": 12, "outputTokens": 8, "totalTokens": 4_020, "cacheReadInputTokenCount": 4_000, "cacheWriteInputTokenCount": 0}
    assert BEDROCK.read_usage(nova, "w") == Usage(4_000, 0, 0, 12, 8)
    # amazon-bedrock-invocationMetrics (and the X-Amzn-Bedrock-* headers).
    metrics = {"inputTokenCount": 12, "outputTokenCount": 8, "invocationLatency": 900, "cacheReadInputTokenCount": 4_000,
               "cacheWriteInputTokenCount": 300}
    assert BEDROCK.read_usage(metrics, "w") == Usage(4_000, 300, 0, 12, 8)
    # Anthropic's, from a Claude InvokeModel body.
    assert BEDROCK.read_usage({"input_tokens": 12, "cache_read_input_tokens": 4_000, "output_tokens": 8}, "w") == Usage(4_000, 0, 0, 12, 8)


def test_a_bad_count_is_one_clear_error() -> None:
    with pytest.raises(UserError, match=r"^w: usage.cacheReadInputTokenCount is not a non-negative integer"):
        BEDROCK.read_usage({"inputTokenCount": 1, "cacheReadInputTokenCount": -4}, "w")
    with pytest.raises(UserError, match=r"^w: usage.cacheDetails\[\].inputTokens"):
        BEDROCK.read_usage({"inputTokens": 1, "cacheWriteInputTokens": 5, "cacheDetails": [{"ttl": "1h", "inputTokens": "5"}]}, "w")


@pytest.mark.parametrize(
    ("model", "input_", "read", "output", "evidence"),
    [
        ("us.amazon.nova-micro-v1:0", "0.035", "0.00875", "0.14", "secondary"),
        ("eu.amazon.nova-lite-v1:0", "0.06", "0.015", "0.24", "secondary"),
        ("apac.amazon.nova-pro-v1:0", "0.80", "0.20", "3.20", "secondary"),
        ("us.amazon.nova-premier-v1:0", "2.50", "0.625", "12.50", "inferred"),
        ("global.amazon.nova-2-lite-v1:0", "0.30", "0.075", "2.50", "secondary"),
    ],
)
def test_nova_rows_read_at_a_quarter_of_input_and_bill_no_write_fee(model, input_, read, output, evidence) -> None:
    row = load_prices().get(model)
    assert (row.provider, row.evidence, row.source) == ("bedrock", evidence, "https://aws.amazon.com/bedrock/pricing/")
    assert (row.rates.input, row.rates.cache_read, row.rates.output) == (Decimal(input_), Decimal(read), Decimal(output))
    assert row.rates.cache_read == row.rates.input / 4 and row.rates.cache_write is None


def test_a_nova_write_bills_as_input() -> None:
    # Nova Pro: 1,000 written + 200 uncached at 0.80, 5,000 read at 0.20, 100 out at 3.20 per 1M
    # = 960 + 1,000 + 320 = 2,280 millionths.
    cost = cost_of(Usage(cache_read=5_000, cache_write_5m=1_000, uncached=200, output=100), load_prices().get("amazon.nova-pro-v1:0"))
    assert cost.total == Decimal("0.00228")


def test_nova_has_no_row_before_its_launch() -> None:
    with pytest.raises(UserError, match="no price for 'amazon.nova-premier-v1:0' as of 2025-01-01"):
        load_prices().get("amazon.nova-premier-v1:0", as_of="2025-01-01")


def test_nova_keeps_the_5_minute_ttl_whatever_the_request_asks() -> None:
    """Nova caches for 5 min only (the prompt-caching page): a request cannot ask for 1 h, so a
    gap of 10 min is past every TTL Nova has and no TTL fix applies to its lanes; keep-alives
    (each read renews the entry) bridge it, so the miss is recoverable by keep-alive alone, and a
    gap past keep-alive's reach (ten of them) is unavoidable. Claude on Bedrock could have asked 1 h."""
    from types import SimpleNamespace

    from prefixbench.workloads.audit.losses import fixes_for, loss_class

    nova, claude = "us.amazon.nova-pro-v1:0", "anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert not BEDROCK.picks_ttl(nova) and BEDROCK.picks_ttl(claude)
    assert (BEDROCK.longest_ttl_ms(nova), BEDROCK.longest_ttl_ms(claude)) == (5 * 60_000, 60 * 60_000)

    def row(model: str, minutes: int = 10) -> SimpleNamespace:
        return SimpleNamespace(cause="ttl-expired", provider="bedrock", model=model, lane_kind="main", gap_ms=minutes * 60_000)

    assert (loss_class(row(nova)), loss_class(row(claude))) == ("recoverable", "recoverable")
    assert fixes_for(row(nova)) == ("keep-alive",)
    assert loss_class(row(nova, 120)) == "unavoidable"


def test_no_ttl_fix_applies_to_a_nova_only_log() -> None:
    from prefixbench.workloads.audit.whatif import what_if
    from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest

    t0 = 1_767_225_600_000
    requests = [
        TraceRequest("n.jsonl", k + 1, "main", "main", k, t0 + k * 600_000, t0 + k * 600_000 + 500, "bedrock", "us.amazon.nova-pro-v1:0",
                     usage=Usage(cache_write_5m=2_000, uncached=10, output=5), prefix=Prefix("h", f"n{k}", f"n{k - 1}" if k else None))
        for k in range(3)
    ]
    (w,) = what_if(requests, [FileSummary("n.jsonl", "http-capture", 3)], ["ttl-1h"])
    assert not w.applies


def test_a_nova_request_has_at_most_20k_tokens_cached() -> None:
    """Nova caches at most 20K tokens of one request's prompt (the prompt-caching page): a
    50,000-token prompt writes 20,000, and the next request, extending it, reads 20,000."""
    from prefixbench.simulator.chain import ChainCache

    cache = ChainCache(BEDROCK)
    kw = dict(family="f", head="h", head_tokens=None, new_blocks=1, tick=0, ready=0)
    first = cache.observe(node="a", parent=None, cacheable=50_000, model="us.amazon.nova-pro-v1:0", **kw)
    second = cache.observe(node="b", parent="a", cacheable=51_000, model="us.amazon.nova-pro-v1:0", **{**kw, "tick": 1000, "ready": 1000})
    assert (first.read, first.write, second.read, second.write) == (0, 20_000, 20_000, 0)
    claude = ChainCache(BEDROCK).observe(node="c", parent=None, cacheable=50_000, model="anthropic.claude-sonnet-4-5-20250929-v1:0", **kw)
    assert claude.write == 50_000
    assert BEDROCK.max_cached("us.amazon.nova-pro-v1:0") == 20_000 and BEDROCK.max_cached("anthropic.claude-sonnet-4-5") is None
