"""Anthropic's fast mode in the audit (issue 21, item 3).

A call the provider served in fast mode says so in its usage (``usage.speed: "fast"``,
https://platform.claude.com/docs/en/build-with-claude/fast-mode): it is billed at the model's
fast price, a multiple of the standard one with the cache multipliers on top, and it shares no
cached prefix with standard calls ("Requests at different speeds do not share cached prefixes").
A call whose usage does not say ``fast`` is standard: never guessed.

The dollars below are worked by hand from the price rows (USD per 1M tokens): Opus 4.8 standard
5 / 0.50 read / 6.25 write / 25 output; fast 10 / 1.00 / 12.50 / 50.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit

from .fixtures import Transcript, anthropic_body, capture_line, cc_usage, sse, write_jsonl

#: 2026-07-01 00:00 UTC: Opus 4.8's fast row is in force (from 2026-05-28).
JULY = 1_782_864_000.0


def _fast(usage: dict) -> dict:
    return {**usage, "service_tier": "standard", "speed": "fast", "inference_geo": "us"}


def _standard(usage: dict) -> dict:
    return {**usage, "service_tier": "standard", "speed": "standard"}


def _transcript(tmp_path: Path, first: dict, second: dict, model: str = "claude-opus-4-8") -> Path:
    t = Transcript(version="2.1.170")
    t.user("fix the bug", "2026-07-01T10:00:00.000Z", root=True)
    t.assistant("r1", "2026-07-01T10:00:01.000Z", [first], model=model)
    t.user("file contents", "2026-07-01T10:00:20.000Z", tool=True)
    t.assistant("r2", "2026-07-01T10:00:21.000Z", [second], model=model)
    return write_jsonl(tmp_path / "session.jsonl", t.lines)


def test_a_transcript_s_fast_calls_are_priced_at_the_fast_price(tmp_path: Path) -> None:
    # Fails on main: both calls priced at the standard rates (0.12755 and 0.018175).
    log = _transcript(tmp_path, _fast(cc_usage(10, 20_000, 0, 100)), _fast(cc_usage(10, 500, 20_000, 200)))
    rows = run_audit([log]).rows
    # 10 x 10 + 20,000 x 12.50 + 100 x 50 = 255,100 / 1M
    # 10 x 10 + 20,000 x 1.00 + 500 x 12.50 + 200 x 50 = 36,350 / 1M
    assert [r.cost_usd for r in rows] == [Decimal("0.2551"), Decimal("0.03635")]


def test_a_call_whose_usage_says_standard_or_nothing_is_standard(tmp_path: Path) -> None:
    log = _transcript(tmp_path, _standard(cc_usage(10, 20_000, 0, 100)), cc_usage(10, 500, 20_000, 200))
    rows = run_audit([log]).rows
    # 10 x 5 + 20,000 x 6.25 + 100 x 25 = 127,550 / 1M; 10 x 5 + 20,000 x 0.50 + 500 x 6.25 + 200 x 25 = 18,175 / 1M
    assert [r.cost_usd for r in rows] == [Decimal("0.12755"), Decimal("0.018175")]


def test_a_switch_to_fast_loses_the_standard_calls_cache_and_is_named(tmp_path: Path) -> None:
    # Fails on main: the switch was not seen (the cause was another), and the loss was priced at
    # the standard rates (0.115).
    log = _transcript(tmp_path, cc_usage(10, 20_000, 0, 100), _fast(cc_usage(10, 20_510, 0, 200)))
    second = run_audit([log]).rows[1]
    assert (second.expected_cache_read, second.reported_cache_read) == (20_000, 0)
    assert second.cause == "effort-changed"
    assert "speed standard -> fast (usage.speed)" in second.detail
    # 10 x 10 + 20,510 x 12.50 + 200 x 50 = 266,475 / 1M; lost: 20,000 written at 12.50, not read at 1.00
    assert (second.cost_usd, second.lost_usd) == (Decimal("0.266475"), Decimal("0.23"))


def test_back_to_standard_after_a_fast_call_is_named_too(tmp_path: Path) -> None:
    t = Transcript(version="2.1.170")
    t.user("fix the bug", "2026-07-01T10:00:00.000Z", root=True)
    t.assistant("r1", "2026-07-01T10:00:01.000Z", [cc_usage(10, 20_000, 0, 100)], model="claude-opus-4-8")
    t.user("more", "2026-07-01T10:00:20.000Z", tool=True)
    t.assistant("r2", "2026-07-01T10:00:21.000Z", [_fast(cc_usage(10, 20_510, 0, 200))], model="claude-opus-4-8")
    t.user("again", "2026-07-01T10:00:40.000Z", tool=True)
    t.assistant("r3", "2026-07-01T10:00:41.000Z", [cc_usage(10, 600, 20_000, 50)], model="claude-opus-4-8")
    third = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)]).rows[2]
    # It read the standard call's 20,000 tokens, not the fast call's 20,510.
    assert (third.expected_cache_read, third.reported_cache_read, third.cause) == (20_510, 20_000, "effort-changed")
    assert "speed fast -> standard (usage.speed)" in third.detail


def test_a_fast_call_on_a_model_without_a_fast_price_is_left_unpriced(tmp_path: Path) -> None:
    # Never priced at the standard rate (that would halve it or worse): unpriced, and named.
    log = _transcript(tmp_path, cc_usage(10, 20_000, 0, 100), _fast(cc_usage(10, 500, 20_000, 200)), model="claude-sonnet-4-6")
    result = run_audit([log])
    assert result.rows[0].cost_usd == Decimal("0.07653")  # 10 x 3 + 20,000 x 3.75 + 100 x 15
    assert result.rows[1].cost_usd is None
    assert any("claude-sonnet-4-6-fast" in note for note in result.notes)


def test_a_captured_stream_s_usage_speed_prices_the_call_fast(tmp_path: Path) -> None:
    # Fails on main: priced at 5 / 25 (0.0101125 less).
    usage = {"input_tokens": 1_200, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1,
             "service_tier": "standard", "speed": "fast"}
    events = sse(
        {"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
                                              "content": [], "usage": usage}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 405}},
        {"type": "message_stop"},
    )
    body = {**anthropic_body("claude-opus-4-8"), "speed": "fast"}
    log = write_jsonl(tmp_path / "capture.jsonl", [capture_line(body, {"body_raw": events}, sent=JULY)])
    rows = run_audit([log]).rows
    # 1,200 x 10 + 405 x 50 = 32,250 / 1M
    assert [r.cost_usd for r in rows] == [Decimal("0.03225")]


def test_a_request_asking_for_fast_whose_response_says_standard_is_standard(tmp_path: Path) -> None:
    # Opus 4.6 from 2026-06-29: speed "fast" runs and bills at standard, and the usage says so.
    usage = {"input_tokens": 1_200, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 405,
             "speed": "standard"}
    response = {"body": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-opus-4-6",
                         "content": [{"type": "text", "text": "ok"}], "usage": usage}}
    body = {**anthropic_body("claude-opus-4-6"), "speed": "fast"}
    log = write_jsonl(tmp_path / "capture.jsonl", [capture_line(body, response, sent=JULY)])
    # 1,200 x 5 + 405 x 25 = 16,125 / 1M
    assert [r.cost_usd for r in run_audit([log]).rows] == [Decimal("0.016125")]
