"""The audit's pass in parts (workloads/audit/core.py ``pass_parts``) gives what one pass over the
whole log gives: random sessions under a few heads, resumed from each other's calls, a day or a
few minutes apart, with 5 m and 1 h writes and answers of logged length, on three providers (Qwen's
lifetimes counted from the answer's end), audited with ``jobs`` 1 and 3
(parts made for any log here, however small), each part in a forked worker."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit import core
from prefixbench.workloads.audit.core import AuditRow, Baseline, audit_requests
from prefixbench.simulator.price_lookup import Prices
from prefixbench.workloads.audit.spill import BucketSpill
from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest

T0 = 1_780_000_000_000
MIN = 60_000
#: Gaps between a file's calls, and between the files' starts: inside a 5 m TTL, past it, past 1 h, a day.
GAPS = [MIN, 7 * MIN, 70 * MIN, 24 * 60 * MIN]
#: Qwen's lifetimes count from the end of the answer (``ttl_from='end'``, where the log says when).
MODELS = [("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-5"), ("qwen", "qwen3-coder-plus")]

call = st.tuples(
    st.sampled_from(GAPS),  # after the previous call of the file
    st.sampled_from([0, 6_000, 12_000, 20_000]),  # read
    st.sampled_from([0, 500, 8_000]),  # write
    st.booleans(),  # an hour's write
    st.sampled_from([None, 30_000, 4 * MIN]),  # how long the answer ran, where the log says
)
session = st.tuples(
    st.sampled_from(GAPS),  # after the previous file's start
    st.integers(0, 2),  # head
    st.integers(0, 2),  # model
    st.one_of(st.none(), st.integers(0, 5)),  # the earlier file whose last call it resumes
    st.lists(call, min_size=1, max_size=4),
)


def _trace(sessions: list) -> tuple[list[TraceRequest], list[FileSummary]]:
    requests: list[TraceRequest] = []
    last: list[str] = []
    start = T0
    for n, (gap, head, model, resumes, calls) in enumerate(sessions):
        start += gap
        provider, name = MODELS[model]
        file = f"s{n}.jsonl"
        parent = last[resumes] if resumes is not None and resumes < len(last) else None
        sent = start
        for seq, (after, read, write, hour, took) in enumerate(calls):
            sent += after if seq else 0
            usage = (Usage(cache_read=read, cache_write_5m=0 if hour else write, cache_write_1h=write if hour else 0, uncached=3)
                     if provider == "anthropic" else Usage(cache_read=read, uncached=3 + write))
            node = f"{file}#{seq}"
            requests.append(TraceRequest(
                file=file, line=seq + 1, lane="main", lane_kind="main", seq=seq, sent_ms=sent, ready_ms=sent + 2_000,
                done_ms=None if took is None else sent + took,
                provider=provider, model=name, usage=usage, prefix=Prefix(f"head-{head}-{name}", node, parent),
            ))
            parent = node
        last.append(parent)
    return requests, [FileSummary(f"s{n}.jsonl", "claude-code", len(s[4])) for n, s in enumerate(sessions)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(session, min_size=2, max_size=6))
# Qwen: s0's first answer ran 4 min, so s1's start 7 min after it still reads the head (the parts
# split at send + 5 min and found it expired).
@example([(MIN, 0, 2, None, [(MIN, 12_000, 0, False, 4 * MIN), (70 * MIN, 12_000, 500, False, None)]),
          (7 * MIN, 0, 2, None, [(MIN, 6_000, 0, False, None)])])
# A lane start (s5, resuming s2's call) under a head s0 used 11 minutes before, in another part:
# "another lane's call under the same head was sent 11m00s before" only in the whole pass (CI, integ56).
@example([(MIN, 1, 1, None, [(MIN, 6_000, 0, False, None)]), (MIN, 0, 0, None, [(MIN, 0, 0, False, None)]),
          (MIN, 0, 0, None, [(MIN, 0, 0, False, None), (70 * MIN, 0, 0, False, None)]),
          (MIN, 0, 0, None, [(MIN, 0, 0, False, None)]), (MIN, 0, 0, None, [(MIN, 0, 0, False, None)]),
          (7 * MIN, 1, 1, 2, [(MIN, 0, 0, False, None)])])
def test_parts_give_the_whole_pass(monkeypatch: pytest.MonkeyPatch, sessions: list) -> None:
    monkeypatch.setattr(core, "PARALLEL_PASS_AT_LEAST", 0)
    monkeypatch.setattr(core, "LARGEST_PART", 1.0)
    requests, summaries = _trace(sessions)
    one, two = Baseline(), Baseline()
    whole = audit_requests(requests, summaries, Prices(None), baseline=one)
    parts = audit_requests(requests, summaries, Prices(None), baseline=two, jobs=3)
    assert parts == whole
    assert bytes(one.preds.values) == bytes(two.preds.values)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(session, min_size=2, max_size=6))
def test_parts_summed_in_workers_write_the_same_spilled_rows(monkeypatch: pytest.MonkeyPatch, sessions: list) -> None:
    """With the rows on disk (as ``audit`` keeps them), each part's files summed and their rows
    packed in its worker: the same result and the same rows, in the same order."""
    monkeypatch.setattr(core, "PARALLEL_PASS_AT_LEAST", 0)
    monkeypatch.setattr(core, "LARGEST_PART", 1.0)
    requests, summaries = _trace(sessions)
    with BucketSpill() as one, BucketSpill() as two:
        whole = audit_requests(requests, summaries, Prices(None), spill=one)
        parts = audit_requests(requests, summaries, Prices(None), spill=two, jobs=3)
        assert parts == whole
        assert two.load() == one.load() and two.count == one.count


_row = st.builds(
    lambda file, lane, reported, read, write, uncached, output, cause, cost, lost, day, predicted: AuditRow(
        file=f"f{file}", lane=f"l{lane}", lane_kind="main", index=0, line=1, timestamp=None if day is None else f"2026-0{day}-01T00:00:00Z",
        provider="anthropic", model="claude-sonnet-4-5", reported_cache_read=read if reported else None,
        reported_cache_write=write if reported else None, reported_cache_write_1h=0 if reported else None,
        reported_uncached=uncached if reported or output else None, reported_output=output,
        predicted_cache_read=predicted, predicted_cache_write=write, predicted_uncached=uncached, expected_cache_read=read,
        lost_tokens=0 if cause is None else write, cause=cause, evidence=None if cause is None else "log", detail="",
        cost_usd=None if cost is None else Decimal(cost), lost_usd=None if lost is None or cause is None else Decimal(lost),
    ),
    st.integers(0, 2), st.integers(0, 1), st.booleans(), st.integers(0, 9_000), st.integers(0, 9_000), st.integers(0, 900),
    st.one_of(st.none(), st.integers(0, 500)), st.sampled_from([None, "ttl", "system_change"]),
    st.sampled_from([None, "0.0012", "1.50", "0.000003750"]), st.sampled_from([None, "0.0004", "0.25", "0"]),
    st.one_of(st.none(), st.integers(1, 3)), st.integers(0, 9_000),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_row, max_size=5), max_size=5), st.sampled_from(["totals", "roll-up", "model", "losses"]))
def test_a_roll_merged_a_file_at_a_time_is_the_roll_of_the_files_added(files: list, what: str) -> None:
    """The sums a worker makes of a file (a fresh roll), merged in file order, are what adding
    each file's rows to one roll makes (the predicted share counted only while no row reports)."""
    added, merged = core._Roll(), core._Roll()
    added_notes, merged_notes = core._NoteCounts(), core._NoteCounts()
    for rows in files:
        added.add(rows, what)
        mine = core._Roll()
        mine.add(rows, what)
        merged.merge(mine)
        added_notes.add(rows)
        notes = core._NoteCounts()
        notes.add(rows)
        merged_notes.merge(notes)
    assert {k: str(v) if isinstance(v, Decimal) else v for k, v in vars(merged).items()} == \
        {k: str(v) if isinstance(v, Decimal) else v for k, v in vars(added).items()}
    assert vars(merged_notes) == vars(added_notes)
