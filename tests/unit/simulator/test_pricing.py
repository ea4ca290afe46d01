"""The price table (data/prices.csv) and the dollar cost of one request, to the exact digit."""

import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.pricing import (
    COLUMNS,
    OPTIONAL_COLUMNS,
    CostBreakdown,
    PriceTable,
    cost_of,
    deepseek_period,
    format_usd,
    get_price,
    load_prices,
    storage_usd,
)
from tests.builders import ENVELOPE

D = Decimal


def make_observation(
    prompt: int, cached: int, written: int, *, written_long: int = 0, output: int = 0, status: int = 200
) -> Observation:
    """One conversation request with these token counts."""
    return Observation(
        index=0,
        purpose="conversation",
        envelope=ENVELOPE,
        max_tokens=None,
        prompt_tokens=prompt,
        cached_tokens=cached,
        written_tokens=written,
        divergence=None,
        extends_previous_conversation=False,
        rewrites_since_previous=(),
        written_long_tokens=written_long,
        output_tokens=output,
        status=status,
    )


def parts(cost: CostBreakdown) -> tuple[Decimal, ...]:
    return (cost.uncached_input, cost.cache_read, cost.cache_write, cost.output, cost.total)


# --- the shipped table --------------------------------------------------------------------


def test_shipped_table_has_the_required_models_each_with_a_source():
    table = load_prices()
    for model in (
        "deepseek-v4-pro",
        "deepseek-v4-flash",
        "claude-opus-4-5",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "gpt-5",
        "gpt-5.4",
        "gpt-5.6-sol",
        "gemini-2.5-pro",
        "gemini-3-pro-preview",
    ):
        assert model in table.models()
    assert all(row.source and row.evidence for row in table.rows)
    # Loaded once per process.
    assert load_prices() is table


def test_latest_row_is_the_default_and_aliases_resolve_to_it():
    flash = get_price("deepseek-v4-flash")
    assert flash.effective == "2026-09-10"
    assert get_price("deepseek-flash") == flash
    assert get_price("claude-sonnet-4-20250514").model == "claude-sonnet-4"


def test_as_of_picks_the_row_in_force_then():
    # The hit price was cut at 12:15 UTC on 2026-04-26; peak pricing began 2026-08-16 16:00 UTC.
    assert get_price("deepseek-v4-flash", as_of="2026-04-25").rates.cache_read == D("0.028")
    assert get_price("deepseek-v4-flash", as_of="2026-04-26T12:15Z").rates.cache_read == D("0.0028")
    # A bare date is 00:00 UTC, so the row of 16:00 that day is not yet in force.
    before = get_price("deepseek-v4-flash", as_of="2026-08-16")
    assert before.effective == "2026-04-26T12:15Z" and before.period is None
    after = get_price("deepseek-v4-flash", as_of="2026-08-16T18:00+02:00")
    assert after.effective == "2026-08-16T16:00Z" and after.period == "off-peak"
    # Undated rows ("since launch") are in force at any date.
    assert get_price("claude-opus-4-5", as_of="2020-01-01").effective == ""


def test_as_of_before_the_first_row_or_malformed_is_a_user_error():
    with pytest.raises(UserError, match=r"no price for 'deepseek-v4-flash' as of 2026-01-01: its first row is effective 2026-04-24"):
        get_price("deepseek-v4-flash", as_of="2026-01-01")
    with pytest.raises(UserError, match=r"price date '2026-13-01' is not YYYY-MM-DD"):
        get_price("deepseek-v4-flash", as_of="2026-13-01")


def test_unknown_model_names_a_few_close_ids_and_where_the_table_is():
    # It printed the whole table, every model id, in one line of ~1,700 characters.
    with pytest.raises(UserError) as err:
        get_price("gpt-9")
    message = str(err.value)
    assert message.startswith("unknown price model 'gpt-9' (closest priced: ")
    closest = message.split("closest priced: ")[1].split(";")[0].split(", ")
    assert 1 <= len(closest) <= 3 and set(closest) <= set(load_prices().models())
    assert "every priced model: prefixbench/simulator/data/prices.csv" in message
    assert len(message) < 400 and "\n" not in message
    with pytest.raises(UserError, match=r"unknown price model 'nope' \(no priced model is close; "):
        get_price("nope")


def test_unknown_period_is_a_user_error_and_one_price_models_ignore_the_period():
    with pytest.raises(UserError, match=r"unknown price period 'night' \(known: off-peak, peak\)"):
        get_price("deepseek-v4-flash", period="night")
    sonnet = get_price("claude-sonnet-4-5", period="peak")
    assert sonnet.period is None and sonnet.rates.input == D("3")


# --- cost arithmetic -----------------------------------------------------------------------


def test_deepseek_flash_off_peak_and_peak():
    # 100k prompt, 90k served from the cache, 10k new (all written: DeepSeek has no write fee,
    # so the written tokens bill as uncached input), 2k output. Latest Flash prices, USD per 1M:
    # off-peak input 0.15, hit 0.003, output 0.60; peak is twice that.
    obs = make_observation(100_000, 90_000, 10_000, output=2_000)
    off_peak = cost_of(obs, get_price("deepseek-v4-flash"))
    assert parts(off_peak) == (D("0.0015"), D("0.00027"), D(0), D("0.0012"), D("0.00297"))
    peak = cost_of(obs, get_price("deepseek-v4-flash", period="peak"))
    assert parts(peak) == (D("0.003"), D("0.00054"), D(0), D("0.0024"), D("0.00594"))


def test_anthropic_bills_5m_and_1h_writes_at_their_own_prices():
    # Sonnet 4.5: input 3, read 0.30, 5 m write 3.75, 1 h write 6, output 15 (USD per 1M).
    # 50k prompt = 20k read + 25k written (5k of them with the 1 h TTL) + 5k uncached.
    obs = make_observation(50_000, 20_000, 25_000, written_long=5_000, output=1_000)
    cost = cost_of(obs, get_price("claude-sonnet-4-5"))
    assert parts(cost) == (D("0.015"), D("0.006"), D("0.105"), D("0.015"), D("0.141"))


def test_a_model_without_a_1h_price_bills_long_writes_at_its_write_price():
    # gpt-5.6-sol has one write price (1.25x, 30 min TTL): 6.25 per 1M at launch.
    obs = make_observation(10_000, 0, 8_000, written_long=3_000)
    cost = cost_of(obs, get_price("gpt-5.6-sol", as_of="2026-08-01"))
    assert cost.cache_write == D("0.05") and cost.uncached_input == D("0.01")


def test_long_context_tier_switches_above_the_threshold():
    # gpt-5.4: 2.50 / 0.25 / 15 up to 272,000 prompt tokens; above, 5.00 / 0.50 / 22.50.
    price = get_price("gpt-5.4")
    at = cost_of(make_observation(272_000, 200_000, 0, output=1_000), price)
    assert parts(at) == (D("0.18"), D("0.05"), D(0), D("0.015"), D("0.245"))
    above = cost_of(make_observation(272_001, 200_000, 0, output=1_000), price)
    assert parts(above) == (D("0.360005"), D("0.1"), D(0), D("0.0225"), D("0.482505"))


def test_peak_scales_the_long_tier_too(tmp_path):
    row = make_row(long_threshold="1000", long_input="2", long_cache_read="0.2", long_output="4", peak_factor="2")
    table = load_prices(write_prices(tmp_path, row))
    price = table.get("m1", period="peak")
    assert price.long_tier is not None and price.long_tier.rates.input == D("4")
    assert cost_of(make_observation(1_001, 0, 0), price).uncached_input == D("0.004004")


def test_rejected_request_costs_nothing_and_bad_counts_raise():
    price = get_price("deepseek-v4-flash")
    assert cost_of(make_observation(5_000, 0, 0, output=10, status=400), price).total == 0
    with pytest.raises(ValueError, match="inconsistent usage"):
        cost_of(make_observation(100, 80, 30), price)


def test_seed_001_fold_at_512k_on_v4_pro_off_peak():
    # Seed 001: at a 512k window a legacy summary call re-sends ~332k tokens uncached; patched,
    # ~470 uncached and the rest read from the cache. "About $0.22 to about $0.008."
    pro = get_price("deepseek-v4-pro")
    legacy = cost_of(make_observation(332_345, 0, 332_345), pro)
    patched = cost_of(make_observation(332_345, 331_875, 470), pro)
    assert legacy.total == D("0.2193477") and format_usd(legacy.total) == "$0.2193"
    assert patched.total == D("0.00761145") and format_usd(patched.total) == "$0.007611"


def test_deepseek_peak_windows():
    monday = datetime(2026, 9, 14, tzinfo=UTC)
    assert [deepseek_period(monday.replace(hour=h)) for h in (0, 1, 3, 4, 6, 9, 10)] == [
        "off-peak", "peak", "peak", "off-peak", "peak", "peak", "off-peak",
    ]
    assert deepseek_period(datetime(2026, 9, 19, 2, tzinfo=UTC)) == "off-peak"  # Saturday


def test_format_usd():
    cases = {
        "0.2193477": "$0.2193",
        "12.34": "$12.3400",
        "1234.5": "$1,234.5000",
        "0.00761145": "$0.007611",
        "0.0000028": "$0.000002800",
        "0": "$0",
        "-0.01": "-$0.0100",
    }
    assert {k: format_usd(D(k)) for k in cases} == cases


# --- model families added for real logs (issue 21 part 3) -----------------------------------
# Each name is spelled as an agent logs it (gateway prefix, Bedrock profile, snapshot date); on a
# table without the family it is an unknown model ("no price" in an audit). Dollars by hand.


def test_zai_glm_5_family_bills_writes_as_input():
    # GLM-5.2 (as OpenRouter names it): 1.40 input, 0.26 cached, 4.40 output, no write fee.
    # 100k prompt = 80k read + 20k uncached (10k of them "written": billed as input), 2k out.
    obs = make_observation(100_000, 80_000, 10_000, output=2_000)
    assert parts(cost_of(obs, get_price("z-ai/glm-5.2"))) == (D("0.028"), D("0.0208"), D(0), D("0.0088"), D("0.0576"))
    # GLM-5: 1 / 0.20 / 3.20 -> 20k x 1 + 80k x 0.2 + 2k x 3.2.
    assert cost_of(obs, get_price("glm-5")).total == D("0.0424")
    assert get_price("GLM-5.1").rates == get_price("glm-5.2").rates


def test_xai_grok_4_5_grok_4_1_fast_and_grok_3():
    obs = make_observation(50_000, 40_000, 0, output=1_000)
    # grok-4.5: 10k x 2 + 40k x 0.50 + 1k x 6.
    assert parts(cost_of(obs, get_price("x-ai/grok-4.5"))) == (D("0.02"), D("0.02"), D(0), D("0.006"), D("0.046"))
    # grok-3 (its -latest alias): 10k x 3 + 40k x 0.75 + 1k x 15.
    assert cost_of(obs, get_price("grok-3-latest")).total == D("0.075")
    # grok-4-1-fast (OpenRouter spells it grok-4.1-fast): 10k x 0.2 + 40k x 0.05 + 1k x 0.5.
    assert cost_of(obs, get_price("x-ai/grok-4.1-fast")).total == D("0.0045")


def test_openai_gpt_5_2_and_codex_by_snapshot_name():
    # 1.75 / 0.175 / 14: 10k x 1.75 + 90k x 0.175 + 1k x 14.
    obs = make_observation(100_000, 90_000, 0, output=1_000)
    assert parts(cost_of(obs, get_price("gpt-5.2-2025-12-11"))) == (D("0.0175"), D("0.01575"), D(0), D("0.014"), D("0.04725"))
    assert cost_of(obs, get_price("openai/gpt-5.3-codex")).total == D("0.04725")


def test_gpt_5_6_terra_and_luna_price_cut_is_chosen_by_the_request_time():
    # 10k prompt = 6k read + 2.5k written (1.25x input, 30 min) + 1.5k uncached; 10 output.
    obs = make_observation(10_000, 6_000, 2_500, output=10)
    before = cost_of(obs, get_price("gpt-5.6-terra", as_of="2026-07-29T23:59Z"))  # 2.50 / 0.25 / 3.125 / 15
    assert parts(before) == (D("0.00375"), D("0.0015"), D("0.0078125"), D("0.00015"), D("0.0132125"))
    after = cost_of(obs, get_price("openai/gpt-5.6-terra", as_of="2026-07-30"))  # 2 / 0.20 / 2.50 / 12
    assert parts(after) == (D("0.003"), D("0.0012"), D("0.00625"), D("0.00012"), D("0.01057"))
    # Luna after the cut, 0.20 / 0.02 / 0.25 / 1.20; over 272K: 0.40 / 0.04 / 1.80.
    assert cost_of(obs, get_price("gpt-5.6-luna")).total == D("0.001057")
    long = make_observation(300_000, 200_000, 0, output=1_000)
    assert parts(cost_of(long, get_price("gpt-5.6-luna"))) == (D("0.04"), D("0.008"), D(0), D("0.0018"), D("0.0498"))


def test_gpt_5_6_sol_promotion_and_the_bare_alias():
    obs = make_observation(10_000, 6_000, 2_500, output=10)
    # Launch (5 / 0.50 / 6.25 / 30) until 2026-08-21, then 4 / 0.40 / 5 / 20; gpt-5.6 is Sol.
    assert cost_of(obs, get_price("gpt-5.6-sol", as_of="2026-08-20")).total == D("0.026425")
    assert parts(cost_of(obs, get_price("gpt-5.6", as_of="2026-09-01"))) == (
        D("0.006"), D("0.0024"), D("0.0125"), D("0.0002"), D("0.0211"))


def test_moonshot_kimi_k2_6():
    # 0.95 miss / 0.16 hit / 4 output: 40k x 0.95 + 60k x 0.16 + 1k x 4.
    obs = make_observation(100_000, 60_000, 0, output=1_000)
    assert parts(cost_of(obs, get_price("moonshotai/kimi-k2.6"))) == (D("0.038"), D("0.0096"), D(0), D("0.004"), D("0.0516"))
    assert cost_of(obs, get_price("kimi-k2.5")).total == D("0.033")  # 40k x 0.6 + 60k x 0.1 + 1k x 3


def test_minimax_m3_writes_and_its_512k_tier():
    # A Fireworks-style id; 0.30 / 0.06 / write 0.375 / 1.20 up to 524,288 prompt tokens.
    row = get_price("accounts/fireworks/models/minimax-m3")
    obs = make_observation(100_000, 50_000, 30_000, output=2_000)
    assert parts(cost_of(obs, row)) == (D("0.006"), D("0.003"), D("0.01125"), D("0.0024"), D("0.02265"))
    # Above: 0.60 / 0.12 / 2.40 -> 100k x 0.6 + 500k x 0.12 + 1k x 2.4.
    assert cost_of(make_observation(600_000, 500_000, 0, output=1_000), row).total == D("0.1224")
    assert get_price("MiniMax-M3") == row


def test_anthropic_sonnet_5_and_5_5_and_haiku_5_5():
    # As the Sonnet 4.5 test: 20k read, 20k 5 m + 5k 1 h written, 5k uncached, 1k out.
    obs = make_observation(50_000, 20_000, 25_000, written_long=5_000, output=1_000)
    # Sonnet 5: 2 / 0.20 / 2.50 / 4 / 10.
    assert parts(cost_of(obs, get_price("claude-sonnet-5"))) == (D("0.01"), D("0.004"), D("0.07"), D("0.01"), D("0.094"))
    # Sonnet 5.5: the read halves to 0.10 on 2026-10-07.
    assert cost_of(obs, get_price("claude-sonnet-5-5", as_of="2026-10-06")).cache_read == D("0.004")
    assert cost_of(obs, get_price("claude-sonnet-5-5", as_of="2026-10-07")).cache_read == D("0.002")
    # Haiku 5.5 up to 100k prompt tokens: 0.10 / 0.01 / 0.125 / 0.20 / 0.50.
    haiku = get_price("anthropic/claude-haiku-5-5")
    assert parts(cost_of(obs, haiku)) == (D("0.0005"), D("0.0002"), D("0.0035"), D("0.0005"), D("0.0047"))
    # Over 100k every part at 5x: 50k x 0.5 + 100k x 0.05 + 1k x 2.5.
    assert cost_of(make_observation(150_000, 100_000, 0, output=1_000), haiku).total == D("0.0325")


def test_anthropic_fable_and_mythos_5_and_5_1():
    # The pricing page's table: 10 / 12.50 (5 m) / 20 (1 h) / 50 for all four; a hit is 1 on
    # Fable 5 and Mythos 5, 0.25 on 5.1. Claude Code 2.1.205 to 2.1.237 transcripts name
    # claude-fable-5, which the audit left unpriced.
    obs = make_observation(50_000, 20_000, 25_000, written_long=5_000, output=1_000)
    five = (D("0.05"), D("0.02"), D("0.35"), D("0.05"), D("0.47"))
    for model in ("claude-fable-5", "claude-mythos-5"):
        assert parts(cost_of(obs, get_price(model))) == five
    for model in ("claude-fable-5-1", "claude-mythos-5-1"):
        assert cost_of(obs, get_price(model)).cache_read == D("0.005")
    # On Bedrock, as the other Claude 5 models: the list price (inferred), a profile resolving to it.
    assert get_price("global.anthropic.claude-fable-5").rates == get_price("claude-fable-5").rates


def test_anthropic_fable_and_mythos_5_2():
    # Released 2026-11-09 at 8 / 0.20 hit / 10 (5 m) / 16 (1 h) / 40, below Fable 5.1; the
    # audit left both unpriced before these rows.
    obs = make_observation(50_000, 20_000, 25_000, written_long=5_000, output=1_000)
    assert parts(cost_of(obs, get_price("claude-fable-5-2"))) == (
        D("0.04"), D("0.004"), D("0.28"), D("0.04"), D("0.364")
    )
    # Mythos 5.2, the same model by invitation, at the same prices.
    assert get_price("claude-mythos-5-2").rates == get_price("claude-fable-5-2").rates
    # Its source (a tracker reading the page) gives 8 / 40 and the 0.20 hit, no write price: the
    # writes are Fable 5.2's by the Mythos rows' pattern, so the row's weakest evidence is inferred.
    assert get_price("claude-fable-5-2").evidence == "secondary"
    assert get_price("claude-mythos-5-2").evidence == "inferred"


def test_anthropic_opus_5_5_reads_at_0_05x_as_its_model_page_says():
    # The model page: 4 / 20, writes 5 (5 m) and 8 (1 h), a cache read 0.20 (0.05x, not the
    # usual 0.1x the row had assumed); fast mode is twice every part.
    obs = make_observation(50_000, 20_000, 25_000, written_long=5_000, output=1_000)
    assert parts(cost_of(obs, get_price("claude-opus-5-5"))) == (
        D("0.02"), D("0.004"), D("0.14"), D("0.02"), D("0.184")
    )
    assert get_price("claude-opus-5-5", speed="fast").rates.cache_read == D("0.40")


def test_openai_gpt_6_family_with_writes_and_the_272k_tier():
    # GPT-6 Astra / Sol / Luna (2026-09), 6.1 Sol and 6.2 Astra / Sol (2026-11): writes bill
    # 1.25x input, and over 272K input tokens input and cache double, output 1.5x.
    short = make_observation(100_000, 60_000, 10_000, output=2_000)
    assert parts(cost_of(short, get_price("gpt-6.1-sol"))) == (
        D("0.06"), D("0.006"), D("0.025"), D("0.02"), D("0.111")
    )
    assert cost_of(short, get_price("gpt-6.2-sol")).total == D("0.111")
    assert cost_of(short, get_price("gpt-6-sol")).cache_read == D("0.012")
    assert cost_of(short, get_price("gpt-6-luna")).total == D("0.00585")
    assert cost_of(short, get_price("gpt-6-astra")).total == D("0.585")
    assert cost_of(short, get_price("gpt-6.2-astra")).total == D("0.444")
    long = make_observation(300_000, 200_000, 50_000, output=1_000)
    assert parts(cost_of(long, get_price("openai/gpt-6.2-sol"))) == (
        D("0.20"), D("0.04"), D("0.25"), D("0.015"), D("0.505")
    )


def test_openai_gpt_5_1_codex_max():
    # Codex logs name it (190 of 2,076 requests unpriced in BearTDK6/ba-pro's sessions): priced as gpt-5.1-codex.
    obs = make_observation(100_000, 60_000, 0, output=2_000)
    assert cost_of(obs, get_price("gpt-5.1-codex-max")).total == D("0.0775")


def test_openai_gpt_5_4_mini_and_nano():
    obs = make_observation(100_000, 60_000, 0, output=2_000)
    assert cost_of(obs, get_price("gpt-5.4-mini")).total == D("0.0435")
    assert cost_of(obs, get_price("gpt-5.4-nano-2026-03-17")).total == D("0.0117")


def test_gemini_3_1_pro_customtools_endpoint_is_priced_as_3_1_pro():
    # Gemini CLI sessions name Google's second 3.1 Pro endpoint (custom tools preferred over
    # bash); it was unpriced, its calls' dollars left out of a real session's total.
    obs = make_observation(100_000, 60_000, 0, output=2_000)
    custom = get_price("gemini-3.1-pro-preview-customtools", as_of="2026-04-25")
    assert custom.rates == get_price("gemini-3.1-pro-preview", as_of="2026-04-25").rates
    assert parts(cost_of(obs, custom)) == (D("0.08"), D("0.012"), D("0"), D("0.024"), D("0.116"))


def test_gemini_3_5_3_8_and_3_1_flash_lite():
    obs = make_observation(100_000, 60_000, 0, output=2_000)
    assert parts(cost_of(obs, get_price("gemini-3.5-flash"))) == (
        D("0.06"), D("0.009"), D("0"), D("0.018"), D("0.087")
    )
    assert cost_of(obs, get_price("gemini-3.5-flash-lite")).total == D("0.0188")
    # The GA id and the preview id gemini-cli still sends are one price row.
    assert cost_of(obs, get_price("gemini-3.1-flash-lite-preview")).total == D("0.0145")
    assert get_price("models/gemini-3.1-flash-lite").rates == get_price("gemini-3.1-flash-lite-preview").rates
    # Gemini 3.8 Flash: half price through 2026-12-31, list price from 2027-01-01.
    assert cost_of(obs, get_price("gemini-3.8-flash", as_of="2026-12-05")).total == D("0.042")
    assert cost_of(obs, get_price("gemini-3.8-flash", as_of="2027-01-01")).total == D("0.084")
    # Gemini 3.7 Flash: the same half price, through 2027-12-31.
    assert cost_of(obs, get_price("gemini-3.7-flash", as_of="2027-06-01")).total == D("0.042")
    assert cost_of(obs, get_price("gemini-3.7-flash", as_of="2028-01-01")).total == D("0.084")


def test_minimax_m2_5_and_highspeed():
    # OpenClaw homes log both (all 434 requests of Ccccx/openclaw-bak unpriced before).
    obs = make_observation(100_000, 60_000, 10_000, output=2_000)
    assert parts(cost_of(obs, get_price("MiniMax-M2.5"))) == (
        D("0.009"), D("0.0018"), D("0.00375"), D("0.0024"), D("0.01695")
    )
    assert cost_of(obs, get_price("MiniMax-M2.5-highspeed")).total == D("0.02835")


def test_qwen3_8_max_one_tier_with_implicit_and_explicit_reads():
    # 2 / 6 up to 1M tokens at one price; implicit reads 0.2x, explicit reads 0.1x, writes 1.25x.
    row = get_price("qwen3.8-max")
    assert (row.rates.cache_read, row.rates.explicit_read, row.rates.cache_write) == (D("0.40"), D("0.20"), D("2.50"))
    assert row.long_tier is None
    obs = make_observation(100_000, 60_000, 0, output=2_000)
    assert cost_of(obs, row).total == D("0.116")


def test_glm_5_3_kimi_k3_and_grok_4_7():
    obs = make_observation(100_000, 60_000, 0, output=2_000)
    assert cost_of(obs, get_price("z-ai/glm-5.3")).total == D("0.0804")
    assert cost_of(obs, get_price("kimi-k3")).total == D("0.168")
    assert cost_of(obs, get_price("kimi-k2.7-code")).total == D("0.0574")
    assert cost_of(obs, get_price("grok-4.7")).total == D("0.122")
    # Over 200K prompt tokens every part of a Grok 4.7 request bills at 2x.
    long = make_observation(250_000, 100_000, 0, output=1_000)
    assert cost_of(long, get_price("grok-4.7")).total == D("0.712")


def test_bedrock_ids_of_the_5_5_models_and_fable_5_1():
    # Bedrock logs name them by their model pages' Bedrock ids, behind an inference profile: each
    # is Anthropic's list price (inferred, as the other Claude 5 rows there), bands and dates included.
    for bedrock, anthropic in (
        ("global.anthropic.claude-opus-5-5", "claude-opus-5-5"),
        ("us.anthropic.claude-fable-5-1", "claude-fable-5-1"),
        ("eu.anthropic.claude-sonnet-5-5", "claude-sonnet-5-5"),
        ("anthropic.claude-haiku-5-5", "claude-haiku-5-5"),
    ):
        assert get_price(bedrock).rates == get_price(anthropic).rates, bedrock
        assert get_price(bedrock).long_tier == get_price(anthropic).long_tier, bedrock
    assert get_price("anthropic.claude-sonnet-5-5", as_of="2026-10-01").rates.cache_read == D("0.20")


def test_bedrock_ids_of_newer_claude_models():
    # A profile and a version suffix resolve to the Bedrock row, at Anthropic's list price.
    assert get_price("global.anthropic.claude-sonnet-5").rates == get_price("claude-sonnet-5").rates
    opus = get_price("us.anthropic.claude-opus-4-7-v1:0")
    assert (opus.model, opus.rates) == ("anthropic.claude-opus-4-7", get_price("claude-opus-4-7").rates)


def test_an_unlisted_snapshot_resolves_to_its_model_and_nothing_else_does():
    table = load_prices()
    assert table.resolve("qwen3-coder-plus-2025-07-22") == "qwen3-coder-plus"
    assert table.resolve("claude-sonnet-5-20260630") == "claude-sonnet-5"
    assert table.resolve("kimi-k2-0905-preview") == "kimi-k2-0905-preview"  # 0905 is part of the id
    for name in ("gpt-9-2026-01-01", "glm-5.9", "grok-4.5-fast"):
        with pytest.raises(UserError, match="unknown price model"):
            table.resolve(name)



def test_deepseek_v4_snapshot_ids_resolve_to_their_models():
    # DeepSeek's pricing page names the mid-2026 snapshots V4-Flash-0731 and V4-Pro-0813, and a
    # gateway passes those ids on (Crush's recorded calls through Charm's gateway, 2026-08): their
    # 53 requests were unpriced. The month-day suffix is part of other providers' ids
    # (kimi-k2-0905-preview), so the two are listed as aliases, not stripped by a rule.
    table = load_prices()
    assert table.resolve("deepseek-v4-flash-0731") == "deepseek-v4-flash"
    assert table.resolve("deepseek-v4-pro-0813") == "deepseek-v4-pro"
    assert get_price("deepseek-v4-flash-0731", as_of="2026-08-19").rates == get_price("deepseek-v4-flash", as_of="2026-08-19").rates


def test_a_gateways_dotted_version_of_a_hyphenated_id_resolves_to_it():
    # OpenRouter (and Cline's gateway) name Anthropic's models with a dot: a real Cline task through
    # Cline's gateway left 5 requests of anthropic/claude-sonnet-4.5 unpriced.
    table = load_prices()
    assert table.resolve("anthropic/claude-sonnet-4.5") == "claude-sonnet-4-5"
    assert table.resolve("anthropic/claude-3.7-sonnet") == "claude-3-7-sonnet"
    assert table.resolve("claude-haiku-4.5") == "claude-haiku-4-5"
    assert table.resolve("openai/gpt-5.1") == "gpt-5.1"  # a dotted id stays itself
    # 1,000 uncached + 2,000 read + 100 output at Sonnet 4.5's $3 / $0.30 / $15:
    # 0.003 + 0.0006 + 0.0015 = $0.0051.
    row = table.get("anthropic/claude-sonnet-4.5", as_of="2026-01-01")
    from prefixbench.simulator.usage import Usage

    assert cost_of(Usage(cache_read=2_000, uncached=1_000, output=100), row).total == Decimal("0.0051")
    with pytest.raises(UserError, match="unknown price model"):
        table.resolve("anthropic/claude-sonnet-4.9")


# --- malformed files -----------------------------------------------------------------------

HEADER = ",".join(COLUMNS)
BASE = {
    "provider": "acme",
    "model": "m1",
    "aliases": "m1-alias",
    "effective": "2026-01-01",
    "input": "1",
    "cache_read": "0.1",
    "output": "2",
    "evidence": "official",
    "source": "https://example.invalid/prices",
}


def make_row(**cells: str) -> str:
    """A CSV line: BASE with some cells changed (absent columns are empty)."""
    values = {**BASE, **cells}
    return ",".join(values.get(column, "") for column in COLUMNS)


ROW = make_row()


def write_prices(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text("# comment\n\n" + HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_minimal_file_loads(tmp_path):
    table = load_prices(write_prices(tmp_path, ROW))
    assert isinstance(table, PriceTable) and table.models() == ("m1",)
    assert table.get("m1-alias").where == f"{tmp_path / 'prices.csv'}:4"


def test_a_gateway_qualified_alias_is_found_by_its_whole_name_only(tmp_path):
    # OpenCode Zen's free models are $0 as Zen names them (opencode/<id>), not under the bare id
    # another route may bill: an alias gateway/id (refused before: not a lowercase id).
    table = load_prices(write_prices(tmp_path, make_row(model="zen-free", aliases="zen/m-free")))
    assert table.resolve("zen/m-free") == "zen-free" and table.resolve("Zen/M-Free") == "zen-free"
    with pytest.raises(UserError, match="unknown price model 'm-free'"):
        table.resolve("m-free")
    shipped = load_prices()
    assert shipped.get("opencode/deepseek-v4-flash-free").is_free
    with pytest.raises(UserError):
        shipped.resolve("deepseek-v4-flash-free")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (make_row(cache_read="0.1x"), "column 'cache_read': '0.1x' is not a price in USD per 1M tokens"),
        (make_row(input="-1"), "column 'input': '-1' is not a price in USD per 1M tokens"),
        (make_row(input="NaN"), "column 'input': 'NaN' is not a price in USD per 1M tokens"),
        (make_row(output=""), "column 'output': a price is required"),
        (make_row(effective="2026-1-1"), "column 'effective': date '2026-1-1' is not YYYY-MM-DD or YYYY-MM-DDTHH:MMZ"),
        (make_row(cache_write_1h="5"), "column 'cache_write_1h': a 1 h write price needs a cache_write price"),
        (make_row(evidence="rumour"), "column 'evidence': 'rumour' is not one of official, secondary, inferred, unconfirmed"),
        (make_row(source=""), "column 'source': every row needs a source"),
        (make_row(model="M 1"), "column 'model': 'M 1' is not a lowercase id ([a-z0-9._:-])"),
        (make_row(aliases="zen/a/b"), "column 'aliases': 'zen/a/b' is not a lowercase id ([a-z0-9._:-]) or gateway/id"),
        (make_row(peak_factor="0.5"), "column 'peak_factor': '0.5' is below 1 (listed prices are the off-peak ones)"),
        (make_row(long_threshold="1000"), "column 'long_input': a long_threshold needs the long_* prices"),
        (make_row(long_input="3"), "column 'long_input': long_* prices need a long_threshold"),
        (make_row(long_threshold="1k", long_input="3", long_cache_read="0.3", long_output="5"), "column 'long_threshold': '1k' is not a positive number of prompt tokens"),
        (
            make_row(cache_write="1.25", long_threshold="1000", long_input="3", long_cache_read="0.3", long_output="5"),
            "column 'long_cache_write': must be set exactly when cache_write is",
        ),
        (ROW + ",extra", f"23 fields, expected 22 ({', '.join(COLUMNS)})"),
        (",".join(ROW.split(",")[:-1]), f"21 fields, expected 22 ({', '.join(COLUMNS)})"),
        (make_row(storage="1/h"), "column 'storage': '1/h' is not a price in USD per 1M tokens"),
        (make_row(explicit_read="-0.1"), "column 'explicit_read': '-0.1' is not a price in USD per 1M tokens"),
        (make_row(long_explicit_read="0.2"), "column 'long_explicit_read': long_* prices need a long_threshold"),
        (
            make_row(explicit_read="0.05", long_threshold="1000", long_input="3", long_cache_read="0.3", long_output="5"),
            "column 'long_explicit_read': must be set exactly when explicit_read is",
        ),
        ('acme,m1,"unclosed,2026-01-01', "not a CSV line (unexpected end of data)"),
    ],
)
def test_a_bad_row_names_file_line_and_column(tmp_path, row, message):
    path = write_prices(tmp_path, make_row(model="m0", aliases=""), row)
    with pytest.raises(UserError) as err:
        load_prices(path)
    assert str(err.value) == f"{path}:5: {message}"


def test_table_level_conflicts_name_the_later_line(tmp_path):
    path = write_prices(tmp_path, ROW, make_row(aliases=""))
    with pytest.raises(UserError, match=r"prices.csv:5: column 'effective': a second row for 'm1' effective 2026-01-01 \(first at .*:4\)"):
        load_prices(path)
    path = write_prices(tmp_path, ROW, make_row(model="m2"))
    with pytest.raises(UserError, match=r"prices.csv:5: column 'aliases': 'm1-alias' already names model 'm1'"):
        load_prices(path)
    path = write_prices(tmp_path, ROW, make_row(provider="other", aliases="", effective="2026-02-01"))
    with pytest.raises(UserError, match=r"prices.csv:5: column 'provider': 'm1' is 'acme' at .*:4"):
        load_prices(path)


def test_bad_header_and_missing_file(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text(HEADER.replace("cache_read", "cache_hit") + "\n" + ROW + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"prices.csv:1: unknown column 'cache_hit' in the header"):
        load_prices(path)
    path.write_text(HEADER + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"prices.csv: no price rows"):
        load_prices(path)
    with pytest.raises(UserError, match=r"cannot read price file .*missing.csv"):
        load_prices(tmp_path / "missing.csv")


# --- explicit reads, storage, older files, Bedrock ids ----------------------------------------

LEGACY_COLUMNS = [c for c in COLUMNS if c not in OPTIONAL_COLUMNS]


def test_a_file_written_before_the_explicit_columns_still_loads(tmp_path):
    path = tmp_path / "old.csv"
    old_row = ",".join({**BASE}.get(column, "") for column in LEGACY_COLUMNS)
    path.write_text(",".join(LEGACY_COLUMNS) + "\n" + old_row + "\n", encoding="utf-8")
    row = load_prices(path).get("m1")
    assert row.storage is None and row.rates.explicit_read is None
    assert row.rates.explicit_read_price == Decimal("0.1")


def test_a_row_may_stop_before_the_optional_columns_under_the_new_header(tmp_path):
    short = ",".join(ROW.split(",")[: len(LEGACY_COLUMNS)])
    table = load_prices(write_prices(tmp_path, short, make_row(model="m2", aliases="", storage="4.5", explicit_read="0.05")))
    assert table.get("m1").storage is None
    assert table.get("m2").storage == Decimal("4.5") and table.get("m2").rates.explicit_read == Decimal("0.05")


def test_a_header_with_only_some_optional_columns_names_the_missing_one(tmp_path):
    path = tmp_path / "half.csv"
    path.write_text(",".join([*LEGACY_COLUMNS, "explicit_read"]) + "\n" + ROW + "\n", encoding="utf-8")
    with pytest.raises(UserError, match="missing column 'long_explicit_read'"):
        load_prices(path)


def test_qwen_explicit_reads_cost_the_explicit_price_and_implicit_reads_the_read_price():
    # qwen3-coder-plus up to 32K: input 1.00, implicit read 0.20 (0.2x), explicit read 0.10 (0.1x).
    row = get_price("qwen3-coder-plus")
    both = SimpleNamespace(prompt_tokens=20_000, cached_tokens=15_000, written_tokens=0, written_long_tokens=0,
                           output_tokens=0, cached_explicit_tokens=10_000)
    # 10,000 explicit x 0.10 / 1M = 0.001 plus 5,000 implicit x 0.20 / 1M = 0.001: reads 0.002;
    # 5,000 uncached x 1.00 / 1M = 0.005. At one read price (0.20) the reads would cost 0.003.
    cost = cost_of(both, row)
    assert (cost.cache_read, cost.uncached_input, cost.total) == (Decimal("0.002"), Decimal("0.005"), Decimal("0.007"))
    # The long tier (prompt > 32,000): explicit 0.18, implicit 0.36, input 1.80.
    long = SimpleNamespace(prompt_tokens=40_000, cached_tokens=30_000, written_tokens=0, written_long_tokens=0,
                           output_tokens=0, cached_explicit_tokens=30_000)
    assert cost_of(long, row).cache_read == Decimal("0.0054")  # 30,000 x 0.18 / 1M
    # A row without an explicit price reads every cached token at cache_read.
    deepseek = get_price("deepseek-v4-flash", as_of="2026-05-01")
    assert cost_of(long, deepseek).cache_read == Decimal(30_000) * Decimal("0.0028") / 1_000_000


def test_storage_is_its_own_line_token_hours_at_the_storage_price():
    row = get_price("gemini-2.5-pro")  # storage 4.50 per 1M tokens per hour
    usage = SimpleNamespace(prompt_tokens=0, cached_tokens=0, written_tokens=0, written_long_tokens=0,
                            output_tokens=0, stored_token_ms=100_000 * 2 * 3_600_000)
    cost = cost_of(usage, row)
    # 100,000 tokens x 2 h x 4.50 / 1M = 0.90
    assert cost.storage == Decimal("0.9") and cost.uncached_input == 0 and cost.total == Decimal("0.9")
    # 10 minutes of 6,000 tokens on Flash (1.00/M/h): 6,000 x 1/6 h / 1M = 0.001 exactly
    flash = get_price("gemini-2.5-flash")
    assert storage_usd(6_000 * 600_000, flash) == Decimal("0.001")
    # A repeating decimal (7 ms) is rounded half-even to 1e-18 USD, the same every time.
    assert storage_usd(7, flash) == Decimal("1.944444E-12")  # 7 / 3.6e12, six digits kept
    # A row without a storage price bills none; a sum keeps the storage apart.
    assert cost_of(usage, get_price("qwen3-max")).storage == 0
    assert (cost + cost).storage == Decimal("1.8") and CostBreakdown.zero().storage == 0


def test_bedrock_ids_with_a_colon_and_inference_profiles_resolve_to_the_dated_row():
    table = load_prices()
    model = "anthropic.claude-sonnet-4-5-20250929-v1:0"
    for name in (model, "us." + model, "global." + model, "bedrock/eu." + model, "US." + model.upper()):
        assert table.resolve(name) == model
    row = table.get("us." + model, as_of="2026-01-15")
    assert (row.provider, row.effective, row.rates.cache_write, row.rates.cache_write_1h) == ("bedrock", "2025-09-29", Decimal("3.75"), Decimal("6"))
    with pytest.raises(UserError, match="no price for 'anthropic.claude-sonnet-4-5-20250929-v1:0' as of 2025-09-01"):
        table.get(model, as_of="2025-09-01")


def test_an_explicit_cache_created_beside_a_request_bills_as_input_in_the_write_part():
    row = get_price("gemini-2.5-pro")  # input 1.25 up to 200K prompt tokens, 2.50 above
    usage = SimpleNamespace(prompt_tokens=1_000, cached_tokens=0, written_tokens=0, written_long_tokens=0,
                            output_tokens=0, created_tokens=8_000)
    # 8,000 x 1.25 / 1M = 0.01, a write; the request's own 1,000 at input: 0.00125.
    cost = cost_of(usage, row)
    assert (cost.cache_write, cost.uncached_input) == (Decimal("0.01"), Decimal("0.00125"))
    # A content over 200K tokens is created at the long tier's input price: 250,000 x 2.50 / 1M.
    big = SimpleNamespace(**{**vars(usage), "created_tokens": 250_000})
    assert cost_of(big, row).cache_write == Decimal("0.625")


CELLS = st.one_of(st.sampled_from(("", "0", "0.1", "-1", "nan", "inf", "1e400", "1/h", "4.50", " 2 ")), st.text(max_size=8))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.fixed_dictionaries({"explicit_read": CELLS, "long_explicit_read": CELLS, "storage": CELLS,
                              "long_threshold": st.sampled_from(("", "1000"))}),
       st.integers(0, 4), st.booleans())
@example({"explicit_read": "", "long_explicit_read": "", "storage": "\r0", "long_threshold": ""}, 0, False)  # drawn once
def test_any_explicit_or_storage_cell_loads_or_is_one_user_error(tmp_path, cells, cut, legacy_header):
    if cells["long_threshold"]:
        cells = {**cells, "long_input": "3", "long_cache_read": "0.3", "long_output": "5"}
    row = make_row(**cells)
    if cut:
        row = ",".join(row.split(",")[: len(COLUMNS) - cut]) if "," in row else row
    header = ",".join(LEGACY_COLUMNS) if legacy_header else HEADER
    path = tmp_path / "fuzz.csv"
    path.write_text(header + "\n" + row + "\n", encoding="utf-8")
    try:
        table = load_prices(path)
    except UserError as err:
        # The row starts on line 2; a cell holding a line break ("\r0") ends it there, and the
        # error names the physical line the rest is on.
        assert re.match(rf"{re.escape(str(path))}:[2-9]: ", str(err)) and "\n" not in str(err)
        return
    price = table.get("m1")
    for value in (price.storage, price.rates.explicit_read):
        assert value is None or (value.is_finite() and value >= 0)
    usage = SimpleNamespace(prompt_tokens=2_000, cached_tokens=1_000, written_tokens=0, written_long_tokens=0,
                            output_tokens=1, cached_explicit_tokens=500, stored_token_ms=7 * 3_600_001, created_tokens=3)
    assert cost_of(usage, price).total >= 0


def test_a_price_beyond_any_model_is_one_line(tmp_path):
    """Found by the fuzzer: 1e400 USD per 1M tokens loaded and then broke exact arithmetic."""
    path = tmp_path / "big.csv"
    path.write_text(HEADER + "\n" + make_row(storage="1e400") + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r":2: .*'1e400' is above 1,000,000 USD per 1M tokens"):
        load_prices(path)


def test_gpt_4o_mini_is_priced():
    # A public OpenHands 1.x conversation ran gpt-4o-mini (through LiteLLM, as openai/gpt-4o-mini);
    # its three calls were unpriced. 1M uncached + 1M read + 1M output = 0.15 + 0.075 + 0.60.
    row = get_price("openai/gpt-4o-mini")
    assert (row.rates.input, row.rates.cache_read, row.rates.output) == (Decimal("0.15"), Decimal("0.075"), Decimal("0.60"))


@settings(max_examples=400, deadline=None)
@given(
    st.integers(min_value=0, max_value=3_000_000), st.integers(min_value=0, max_value=3_000_000),
    st.integers(min_value=0, max_value=3_000_000), st.integers(min_value=0, max_value=100), st.integers(min_value=0, max_value=200_000),
    st.integers(min_value=0, max_value=10_000), st.sampled_from([200, 400]), st.data(),
)
def test_cost_total_is_the_breakdowns_total_to_the_last_digit(cached, written, uncached, long_pct, output, explicit, status, data):
    """cost_total sums the parts where cost_of makes them (a speed-up of the audit's and
    what-if's pricing): the same Decimal, its exponent included (the outputs print it), at every
    row of the shipped table and each DeepSeek period."""
    from prefixbench.simulator.pricing import cost_total

    rows = load_prices().rows
    row = data.draw(st.sampled_from(range(len(rows))).map(lambda k: rows[k]))
    row = row.for_period(data.draw(st.sampled_from(["off-peak", "peak"])))
    usage = SimpleNamespace(prompt_tokens=cached + written + uncached, cached_tokens=cached, written_tokens=written,
                            written_long_tokens=written * long_pct // 100, output_tokens=output, status=status,
                            cached_explicit_tokens=min(explicit, cached), stored_token_ms=explicit * 1000, created_tokens=explicit)
    expected = cost_of(usage, row).total
    found = cost_total(usage, row)
    assert found == expected and found.as_tuple() == expected.as_tuple()


def test_model_families_of_the_real_logs_have_rows_with_their_documented_prices():
    """Families seen in the real traffic the suite reads (Crush's title calls, an OpenCode
    session through Ollama, OpenHands trajectories) priced at their providers' list prices as
    copies of the pricing pages give them (USD per 1M tokens; the rows name the sources)."""
    # glm-4.5-air: 0.20 input, 0.03 cached, 1.10 output, no write fee. 10,000 tokens, 8,000 read,
    # 500 out: 2,000 x 0.20 + 8,000 x 0.03 + 500 x 1.10 = 400 + 240 + 550 millionths of a dollar.
    cost = cost_of(make_observation(10_000, 8_000, 0, output=500), get_price("glm-4.5-air", as_of="2026-07-01"))
    assert parts(cost) == (D("0.0004"), D("0.00024"), D("0"), D("0.00055"), D("0.00119"))
    # MiniMax-M2.7 (a log's spelling): 0.30 input, 0.06 read (0.2x), 0.375 write, 1.20 output.
    # 12,000 tokens = 9,000 read + 2,000 written + 1,000 uncached, 300 out: 300 + 540 + 750 + 360.
    cost = cost_of(make_observation(12_000, 9_000, 2_000, output=300), get_price("MiniMax-M2.7"))
    assert parts(cost) == (D("0.0003"), D("0.00054"), D("0.00075"), D("0.00036"), D("0.00195"))
    # Its highspeed variant: input 0.60 and output 2.40, the cache prices the same.
    fast = get_price("minimax-m2.7-highspeed", as_of="2026-05-01").rates
    assert (fast.input, fast.cache_read, fast.cache_write, fast.output) == (D("0.60"), D("0.06"), D("0.375"), D("2.40"))
    # gpt-4o: 2.50 input, 1.25 cached (0.5x), 10.00 output, no write fee. 4,072 tokens, 3,072 read,
    # 200 out: 1,000 x 2.50 + 3,072 x 1.25 + 200 x 10 = 2,500 + 3,840 + 2,000 millionths.
    cost = cost_of(make_observation(4_072, 3_072, 0, output=200), get_price("openai/gpt-4o-2024-08-06"))
    assert parts(cost) == (D("0.0025"), D("0.00384"), D("0"), D("0.002"), D("0.00834"))
    # Ollama's minimax-m2.7:cloud is another host's price: not MiniMax's row.
    with pytest.raises(UserError):
        get_price("minimax-m2.7:cloud")


def test_kimi_rows_rest_on_moonshots_own_pricing_page():
    """Moonshot's pricing page (archived 2026-03-26) lists kimi-k2.5 at 0.10 hit / 0.60 miss /
    3.00 output and kimi-k2-0905-preview at 0.15 / 0.60 / 2.50: the rows are official now, their
    numbers unchanged."""
    for model, (hit, miss, out) in (("kimi-k2.5", ("0.10", "0.60", "3.00")), ("kimi-k2-0905-preview", ("0.15", "0.60", "2.50"))):
        row = get_price(model)
        assert row.evidence == "official" and row.source == "https://platform.moonshot.ai/docs/pricing/chat"
        assert (row.rates.cache_read, row.rates.input, row.rates.output) == (D(hit), D(miss), D(out))


def test_a_misspelt_model_is_told_its_nearest_name_first():
    # 'claude-sonet-4-5' was answered with the whole table (1,700 characters) and no hint.
    with pytest.raises(UserError) as err:
        get_price("claude-sonet-4-5")
    assert str(err.value).startswith("unknown price model 'claude-sonet-4-5' (did you mean 'claude-sonnet-4-5'? closest priced: ")


@settings(max_examples=400, deadline=None)
@given(
    st.integers(min_value=0, max_value=3_000_000), st.integers(min_value=0, max_value=3_000_000),
    st.integers(min_value=0, max_value=3_000_000), st.integers(min_value=0, max_value=3_000_000),
    st.integers(min_value=0, max_value=200_000), st.integers(min_value=0, max_value=3_000_000),
    st.integers(min_value=0, max_value=3_000_000), st.booleans(), st.data(),
)
def test_the_simulators_own_usage_is_priced_as_its_protocol_names_say(
        read, write_5m, write_1h, uncached, output, explicit, unsplit, plain, data):
    """A :class:`Usage` (or :class:`PlainUsage`) is priced from its fields directly (the audit's
    every request): the same Decimal, exponent included, as the same usage read through the
    names ``cost_of`` documents (``prompt_tokens``, ``cached_tokens``...), breakdown and total,
    at every row of the shipped table and each DeepSeek period."""
    from prefixbench.simulator.pricing import cost_total
    from prefixbench.simulator.usage import Usage, plain_usage

    rows = load_prices().rows
    row = data.draw(st.sampled_from(range(len(rows))).map(lambda k: rows[k]))
    row = row.for_period(data.draw(st.sampled_from(["off-peak", "peak"])))
    usage = Usage(cache_read=read, cache_write_5m=write_5m, cache_write_1h=write_1h, uncached=uncached, output=output,
                  cache_read_explicit=0 if plain else min(explicit, read), cache_unsplit=0 if plain else unsplit)
    if plain:
        usage = plain_usage(usage)
        assert type(usage) is not Usage
    named = SimpleNamespace(prompt_tokens=usage.prompt, cached_tokens=usage.cache_read, written_tokens=usage.cache_write,
                            written_long_tokens=usage.cache_write_1h, output_tokens=usage.output,
                            cached_explicit_tokens=usage.cache_read_explicit)
    assert cost_of(usage, row) == cost_of(named, row)
    assert [p.as_tuple() for p in parts(cost_of(usage, row))] == [p.as_tuple() for p in parts(cost_of(named, row))]
    found, expected = cost_total(usage, row), cost_total(named, row)
    assert found == expected and found.as_tuple() == expected.as_tuple()
