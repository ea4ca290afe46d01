"""The send clock (:func:`~prefixbench.workloads.audit.core.clock_by_position`) clocks each file
on its own and merges the files' send orders (``heapq.merge``): it must give exactly what one
straightforward pass and one sort over every request gave, ties included (equal send times in
several files, equal seqs in one file's lanes, calls with no send time, files no summary names)."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.workloads.audit.core import clock_by_position
from prefixbench.workloads.logs.trace import FileSummary, TraceRequest


def _reference(requests: list[TraceRequest], summaries: list[FileSummary]) -> tuple[list[int], list[int], list[int]]:
    """The clock as one pass over every request in (file order, seq) and one sort by (tick, file
    order, seq), ties by position: the code before the per-file merge, written out plainly."""
    order = {s.file: n for n, s in enumerate(summaries)}
    n = len(requests)
    ticks, readies = [0] * n, [0] * n
    in_order = sorted(range(n), key=lambda i: (order.get(requests[i].file, 0), requests[i].seq))
    last: dict[tuple[str, str], int] = {}
    untimed: dict[tuple[str, str], int] = {}
    timed: set[tuple[str, str]] = set()
    for i in in_order:
        r = requests[i]
        key = (r.file, r.lane)
        if key in timed:
            continue
        if r.sent_ms is None:
            untimed[key] = untimed.get(key, 0) + 1
            continue
        timed.add(key)
        if key in untimed and r.sent_ms > untimed[key]:
            last[key] = r.sent_ms - untimed[key] - 1
    for i in in_order:
        r = requests[i]
        key = (r.file, r.lane)
        base = r.sent_ms if r.sent_ms is not None else last.get(key, 0) + 1
        tick = max(base, last.get(key, base))
        last[key] = tick
        ticks[i] = tick
        readies[i] = max(tick, r.ready_ms) if r.ready_ms is not None else tick
    positions = sorted(range(n), key=lambda i: (ticks[i], order.get(requests[i].file, 0), requests[i].seq))
    return ticks, readies, positions


_CALL = st.tuples(
    st.sampled_from(["a.jsonl", "b.jsonl", "c.jsonl", "stray.jsonl"]),  # stray: no summary names it
    st.sampled_from(["main", "sub-1", "sub-2"]),
    st.integers(0, 5),  # seq: repeats on purpose
    st.one_of(st.none(), st.integers(0, 8), st.sampled_from([1_757_000_000_000, 1_757_000_000_001])),
    st.one_of(st.none(), st.integers(0, 12)),
)


@settings(max_examples=int(os.environ.get("PREFIXBENCH_FUZZ_EXAMPLES") or 300), deadline=None)
@given(calls=st.lists(_CALL, max_size=40), files=st.permutations(["a.jsonl", "b.jsonl", "c.jsonl"]))
def test_the_merged_send_clock_is_the_plain_sort_ties_included(calls, files) -> None:
    requests = [TraceRequest(file, line, lane, "main" if lane == "main" else "subagent", seq, sent, ready, "anthropic",
                             "claude-sonnet-4-5-20250929")
                for line, (file, lane, seq, sent, ready) in enumerate(calls, 1)]
    summaries = [FileSummary(name, "claude-code", 0) for name in files]
    ticks, readies, positions = clock_by_position(requests, summaries)
    assert (ticks, readies, list(positions)) == _reference(requests, summaries)


@settings(max_examples=int(os.environ.get("PREFIXBENCH_FUZZ_EXAMPLES") or 300), deadline=None)
@given(calls=st.lists(_CALL, max_size=40), files=st.permutations(["a.jsonl", "b.jsonl", "c.jsonl"]),
       apart=st.lists(st.sampled_from([0, 5, 20, 1_000, 10**13]), min_size=4, max_size=4))
def test_files_sent_one_after_another_are_laid_out_as_the_plain_sort_says(calls, files, apart) -> None:
    """Files whose send times lie apart (sessions one after another: a file's span after every
    earlier one's is laid after them unmerged), or touch, or overlap: still the plain sort."""
    shift = dict(zip(["a.jsonl", "b.jsonl", "c.jsonl", "stray.jsonl"], apart))
    requests = [TraceRequest(file, line, lane, "main" if lane == "main" else "subagent", seq,
                             None if sent is None else sent + shift[file], None if ready is None else ready + shift[file],
                             "anthropic", "claude-sonnet-4-5-20250929")
                for line, (file, lane, seq, sent, ready) in enumerate(calls, 1)]
    summaries = [FileSummary(name, "claude-code", 0) for name in files]
    ticks, readies, positions = clock_by_position(requests, summaries)
    assert (ticks, readies, list(positions)) == _reference(requests, summaries)
