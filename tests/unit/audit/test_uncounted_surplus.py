"""A read past what the previous counted call left, after responses the endpoint answered with no
token counts (skipped as no call, though they were sent and may have cached): the row names those
lines as its evidence, whatever the provider's usage convention; without them it still says why
the read is past the prediction (aistrad/work's Claude Code on glm-4.7 through a router: such rows
said nothing on Z.AI)."""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

ZERO = {"input_tokens": 0, "output_tokens": 0}


def _session(tmp_path: Path, model: str, first: dict, second: dict, zero: bool) -> list:
    """Two calls of one lane, with a response of all-zero usage between them where ``zero``."""
    t = Transcript(version="2.0.76")
    t.user("scan the repo", "2026-01-04T10:00:00.000Z", root=True)
    t.assistant("req_1", "2026-01-04T10:00:05.000Z", [first], model=model)
    if zero:
        t.user("ok", "2026-01-04T10:00:10.000Z", tool=True)
        t.assistant("req_2", "2026-01-04T10:00:15.000Z", [ZERO], model=model)
    t.user("and now?", "2026-01-04T10:00:20.000Z", tool=True)
    t.assistant("req_3", "2026-01-04T10:00:25.000Z", [second], model=model)
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    assert result.totals.requests == 2
    return result.rows


def test_a_zai_read_past_the_previous_counted_call_names_the_uncounted_response(tmp_path: Path) -> None:
    # Z.AI's usage is not additive (no write count): main gave this row no detail at all.
    rows = _session(tmp_path, "glm-4.7", cc_usage(10_000, 0, 0, 100), cc_usage(300, 0, 20_096, 50), zero=True)
    row = rows[1]
    assert row.provider == "zai" and row.cause is None and not row.read_within
    assert f"read {20_096 - row.expected_cache_read:,} tokens more than the previous counted call left" in row.detail
    assert "a response with no token counts between them (its file's line 4), which was sent and may have cached" in row.detail


def test_a_zai_read_past_the_prediction_without_such_lines_still_says_why(tmp_path: Path) -> None:
    rows = _session(tmp_path, "glm-4.7", cc_usage(10_000, 0, 0, 100), cc_usage(300, 0, 20_096, 50), zero=False)
    row = rows[1]
    assert row.cause is None and not row.read_within
    assert row.detail.startswith(f"read {20_096 - row.predicted_cache_read:,} tokens more than the model predicts")
    assert "no token counts" not in row.detail


def test_an_anthropic_read_past_the_identity_names_the_uncounted_response(tmp_path: Path) -> None:
    # Additive usage: the read is past the previous call's read and write; the zero-usage line
    # between is named rather than the general words.
    rows = _session(tmp_path, "claude-sonnet-4-5-20250929", cc_usage(3, 10_000, 0, 100), cc_usage(3, 200, 14_000, 50), zero=True)
    row = rows[1]
    assert row.provider == "anthropic" and row.cause is None and row.identity is False
    assert row.detail == ("read 4,000 tokens more than the previous request left cached: the log has a response with no "
                          "token counts between them (its file's line 4), which was sent and may have cached")
    rows = _session(tmp_path, "claude-sonnet-4-5-20250929", cc_usage(3, 10_000, 0, 100), cc_usage(3, 200, 14_000, 50), zero=False)
    assert "a call the log does not count" in rows[1].detail
