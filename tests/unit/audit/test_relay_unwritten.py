"""A relay the audit cannot name (provider ``unknown``) whose usage is Anthropic-shaped (it counts
cache writes): a call is expected to read at most what the previous call read and wrote, as a
cache returns only what was written; the uncached rest was never stored and is no loss."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.reports.cli import main
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

#: Claude Code's model; its writes unsplit by TTL and much of its prompt uncached mark a relay.
RELAY_MODEL = "claude-opus-4-8"


def _unsplit(uncached: int, write: int, read: int) -> dict:
    """A relay's usage: Anthropic's keys, its writes not split by TTL (both parts 0)."""
    usage = cc_usage(uncached, write, read, 9)
    usage["cache_creation"] = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    return usage


def _relay(folder: Path, second_read: int) -> None:
    """Two calls to the relay: the first reads 1,500, writes 200 and sends 31,000 uncached; the
    second reads ``second_read`` and sends 31,000 uncached again."""
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [_unsplit(31000, 200, 1500)], model=RELAY_MODEL)
    t.user("next", "2025-09-03T00:00:30.000Z")
    t.assistant("r2", "2025-09-03T00:00:33.000Z", [_unsplit(31000, 300, second_read)], model=RELAY_MODEL)
    write_jsonl(folder / "s1.jsonl", t.lines)


def _second_row(folder: Path, capsys) -> dict:
    assert main(["audit", str(folder), "--quiet", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["requests"]
    assert [row["provider"] for row in rows] == ["unknown", "unknown"]
    return rows[1]


def test_a_call_that_read_all_that_was_written_is_no_miss(tmp_path: Path, capsys) -> None:
    # The second call read the 1,700 tokens the first read and wrote: the 31,000 it sent uncached
    # were never written, so it lost nothing (the base expected the whole previous prompt, 32,700,
    # and put 31,000 tokens down to "an earlier message changed").
    _relay(tmp_path, 1700)
    row = _second_row(tmp_path, capsys)
    assert row["expected_cache_read"] <= 1700
    assert not row["lost_tokens"] and row["cause"] is None
    assert "never written" in row["detail"] and "not counted as a loss" in row["detail"]


def test_a_short_read_is_a_miss_of_what_was_written_only(tmp_path: Path, capsys) -> None:
    # A read that stopped short of what was written loses the written part only.
    _relay(tmp_path, 200)
    row = _second_row(tmp_path, capsys)
    assert row["cause"] is not None
    assert 0 < row["lost_tokens"] <= 1500


def test_a_fix_whose_misses_are_on_an_unknown_provider_says_they_rest_on_default_rules() -> None:
    # static-system was recommended from an unknown relay's misses with nothing at the fix saying
    # their cause was read under default rules (only each row's detail said so).
    from decimal import Decimal
    from types import SimpleNamespace

    from prefixbench.workloads.audit.advice import _recommendation

    def row(provider: str) -> SimpleNamespace:
        return SimpleNamespace(cause="system-changed", provider=provider, file="f.jsonl", lane="main", lost_usd=Decimal("0.1"))

    w = SimpleNamespace(requests_changed=0, assumption="")
    rec = _recommendation("static-system", w, [row("unknown"), row("anthropic")], [], {"f.jsonl": "claude-code"},
                          None, Decimal("0.2"), "")
    assert rec.pattern.startswith("system-changed x2: $0.2000 lost; 1 of these misses is on a provider the audit has "
                                  "no rules for (unknown): read under default rules")
    rec = _recommendation("static-system", w, [row("anthropic")], [], {"f.jsonl": "claude-code"}, None, Decimal("0.1"), "")
    assert "unknown" not in rec.pattern


def _relay_call(seq: int, read: int, write: int, uncached: int, write_field: bool = True):
    from prefixbench.simulator.usage import Usage
    from prefixbench.workloads.logs.trace import Prefix, TraceRequest

    usage = Usage(cache_read=read, cache_write_5m=write, uncached=uncached, writes_reported=write_field)
    return TraceRequest(file="relay.jsonl", line=seq + 1, lane="main", lane_kind="main", seq=seq, sent_ms=seq * 1_000,
                        ready_ms=seq * 1_000 + 500, provider="unknown", model=RELAY_MODEL, usage=usage,
                        prefix=Prefix("h", f"relay.jsonl#{seq}", None if seq == 0 else f"relay.jsonl#{seq - 1}"))


def test_the_cap_needs_a_write_count_of_the_previous_call_that_can_be_trusted() -> None:
    # Mixed usage shapes from one relay. The base capped whenever either call showed a write, at
    # the previous call's read + write: a previous call with no write field (or a 0 the relay
    # gave because it does not count writes on every response) hid ~29K tokens of loss
    # (expected 29,952 -> 896 for a previous read of 1,000 of 30,000 and a current write of 500).
    from prefixbench.workloads.audit.core import _identity_expected
    from prefixbench.workloads.audit.precedence import Previous

    current = _relay_call(1, 0, 500, 29_600)
    no_field = Previous(_relay_call(0, 1_000, 0, 29_000, write_field=False), 0, 500)
    assert _identity_expected(current, no_field) > 29_000
    zero_alone = Previous(_relay_call(0, 1_000, 0, 29_000), 0, 500)
    assert _identity_expected(current, zero_alone) > 29_000
    # A 0 from a relay that reported writes on the lane's other calls, or a write above 0: trusted.
    zero_in_writing_lane = Previous(_relay_call(0, 1_000, 0, 29_000), 0, 500, lane_wrote=True)
    assert _identity_expected(current, zero_in_writing_lane) <= 1_000
    wrote = Previous(_relay_call(0, 1_000, 200, 28_800), 0, 500, lane_wrote=True)
    assert _identity_expected(current, wrote) <= 1_200


def test_a_zero_write_is_trusted_once_the_lane_showed_a_write(tmp_path: Path, capsys) -> None:
    # End to end: the first call writes 0 of 30,000 and nothing before it wrote: the second (which
    # writes 500) is measured against the whole previous prompt; a third after the second's write
    # is capped at what the second read and wrote.
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [_unsplit(29000, 0, 1000)], model=RELAY_MODEL)
    t.user("next", "2025-09-03T00:00:30.000Z")
    t.assistant("r2", "2025-09-03T00:00:33.000Z", [_unsplit(29600, 500, 0)], model=RELAY_MODEL)
    t.user("more", "2025-09-03T00:01:00.000Z")
    t.assistant("r3", "2025-09-03T00:01:03.000Z", [_unsplit(29600, 0, 500)], model=RELAY_MODEL)
    write_jsonl(tmp_path / "s1.jsonl", t.lines)
    assert main(["audit", str(tmp_path), "--quiet", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["requests"]
    assert rows[1]["expected_cache_read"] > 29_000 and rows[1]["lost_tokens"] > 29_000
    assert rows[2]["expected_cache_read"] <= 500 and not rows[2]["lost_tokens"]
