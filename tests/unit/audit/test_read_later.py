"""A miss a later call of the lane contradicts (issue 19). A later call that extends a miss reads
what the miss itself wrote, whatever the miss was (a change the agent made is written by the call
that makes it and read by the next: Anthropic's own diagnostics said tools_changed or
system_changed of Claude Code misses whose next call read past them), so only a later read of
what no call since the miss had written by then tells: it was cached before the miss, with the
content the miss sent, so the miss was the provider's, not a change."""

from __future__ import annotations

import pytest
from prefixbench.simulator.price_lookup import Prices
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit import core
from prefixbench.workloads.audit.core import audit_requests
from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest

HEAD = "kimi-cli:main:kimi-k2:1.0"
SEC = 1_000
T0 = 1_780_000_000_000


def _call(seq: int, sent: int, read: int, prompt: int, *, file: str = "a.jsonl", events: tuple[tuple[str, str], ...] = (),
          model: str = "kimi-k2", head: str = HEAD, answer: int = SEC, parent: str | None = "") -> TraceRequest:
    return TraceRequest(
        file=file, line=seq + 1, lane="main", lane_kind="main", seq=seq, sent_ms=T0 + sent, ready_ms=T0 + sent + answer,
        provider="moonshot", model=model, usage=Usage(cache_read=read, uncached=prompt - read),
        prefix=Prefix(head, f"{file}#{seq}", (None if seq == 0 else f"{file}#{seq - 1}") if parent == "" else parent),
        events=events,
    )


def _lane(third: TraceRequest | None = None, fourth: TraceRequest | None = None, file: str = "a.jsonl") -> list[TraceRequest]:
    """A lane whose third call read 144 of the 21,000 tokens the second left cached and took 2 s
    to answer; its fourth, sent 1 s after it (before its response began: nothing it wrote could
    be read yet), read 21,000."""
    return [
        _call(0, 0, 0, 20_000, file=file),
        _call(1, 5 * SEC, 20_000, 21_000, file=file),
        third or _call(2, 10 * SEC, 144, 21_300, file=file, answer=2 * SEC),
        fourth or _call(3, 11 * SEC, 21_000, 21_444, file=file),
    ]


def _audit(requests: list[TraceRequest], jobs: int = 1) -> core.AuditResult:
    files = sorted({r.file for r in requests})
    return audit_requests(requests, [FileSummary(f, "kimi-cli", 4) for f in files], Prices(None), jobs=jobs)


def _row(result: core.AuditResult, line: int = 3, file: str = "a.jsonl") -> core.AuditRow:
    return next(row for row in result.rows if row.file == file and row.line == line)


def test_a_miss_a_later_call_read_past_before_anything_since_was_written_is_the_providers() -> None:
    row = _row(_audit(_lane()))
    assert (row.cause, row.evidence, row.lost_tokens) == ("provider-best-effort", "log", 20_856)
    assert row.detail == (
        "read 144 of 21,000 cached tokens; the call at line 4, sent 1s later (inside the 5m00s TTL) with the same head and "
        "logged messages and nothing logged in between, read 21,000 tokens of that prefix, none of it written by this call "
        "or one between (each reported writing nothing or had not begun its response), so the prefix before token 144 was "
        "cached as this call sent it: the provider missed (a server without the entry, an eviction), not the agent's doing")


def test_the_first_later_call_that_read_more_is_named_past_calls_that_missed_too() -> None:
    requests = _lane(fourth=_call(3, 10 * SEC + 500, 144, 21_400, answer=2 * SEC))
    requests.append(_call(4, 11 * SEC + 500, 21_000, 21_500))
    result = _audit(requests)
    row = _row(result)
    assert row.cause == "provider-best-effort"
    assert "the call at line 5, sent 1s later" in row.detail
    # The call between, sent before the miss's response began, is that rule's.
    assert _row(result, 4).cause == "concurrent-write"


@pytest.mark.parametrize("third, fourth", [
    # Sent after the miss's response began: it may have read what the miss wrote (a change the
    # miss made is written by it and read by the next call).
    (None, _call(3, 15 * SEC, 21_000, 21_444)),
    # Something logged between the two: the content may differ.
    (None, _call(3, 11 * SEC, 21_000, 21_444, events=(("user_turn", ""),))),
    # Another model (another request family): another cache.
    (None, _call(3, 11 * SEC, 21_000, 21_444, model="kimi-k2.5")),
    # A new chain after the head, not the miss's content.
    (None, _call(3, 11 * SEC, 21_000, 21_444, parent=None)),
    # Past the 5 min TTL of what the miss cached (its answer took 10 min).
    (_call(2, 10 * SEC, 144, 21_300, answer=600 * SEC), _call(3, 10 * SEC + 360 * SEC, 21_000, 21_444)),
    # It read no more than the miss.
    (None, _call(3, 11 * SEC, 144, 21_444)),
])
def test_no_later_read_of_what_was_cached_before_the_miss_leaves_the_cause_to_the_other_rules(third, fourth) -> None:
    assert _row(_audit(_lane(third, fourth))).cause != "provider-best-effort"


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts made for any log, however small (as tests/unit/audit/test_audit_parts.py makes them)."""
    monkeypatch.setattr(core, "PARALLEL_PASS_AT_LEAST", 0)
    monkeypatch.setattr(core, "LARGEST_PART", 1.0)


def test_the_audit_in_parts_says_what_one_pass_says(split_small) -> None:
    other = "kimi-cli:main:kimi-k2:1.1"
    requests = _lane() + [_call(s, t, r, p, file="b.jsonl", head=other, answer=a) for s, t, r, p, a in
                          ((0, 2 * SEC, 0, 9_000, SEC), (1, 7 * SEC, 8_000, 9_500, SEC), (2, 12 * SEC, 144, 9_600, 3 * SEC),
                           (3, 13 * SEC, 9_500, 9_700, SEC))]
    requests.sort(key=lambda r: r.sent_ms or 0)
    one, two = _audit(requests), _audit(requests, jobs=2)
    assert _row(one).cause == _row(one, 3, "b.jsonl").cause == "provider-best-effort"
    assert one == two


def test_another_lane_that_could_have_written_the_prefix_in_between_leaves_the_miss_as_located() -> None:
    """A call of another lane under the same head and family whose write could be read before
    the later call was sent may have cached what the later call read: it tells nothing then."""
    other = _call(0, 10 * SEC + 200, 0, 20_000, file="b.jsonl", answer=300)
    result = _audit([*_lane(), other])
    assert _row(result).cause != "provider-best-effort"
    # Under another head (another family's entry) it cannot have written this lane's prefix.
    elsewhere = _call(0, 10 * SEC + 200, 0, 20_000, file="b.jsonl", answer=300, head="kimi-cli:main:kimi-k2:other")
    assert _row(_audit([*_lane(), elsewhere])).cause == "provider-best-effort"
    # Nor can a write that could be read only after the later call was sent.
    late = _call(0, 10 * SEC + 200, 0, 20_000, file="b.jsonl", answer=5 * SEC)
    assert _row(_audit([*_lane(), late])).cause == "provider-best-effort"
