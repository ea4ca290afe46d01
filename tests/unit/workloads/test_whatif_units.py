"""audit --what-if re-simulates a fix only on the units of the log it changes: the requests that
share cache state (a chain node, a head's entry, a provider's body cache, the block hashes) with
a request the fix changes. Every other request keeps its baseline prediction, and the answers
are those of re-simulating the whole log."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

import prefixbench.workloads.audit.whatif as whatif
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import Predictor, clock_by_position, compaction_sources, head_sizes
from prefixbench.workloads.audit.whatif import ALL_FIXES, simulate, what_if
from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest
from tests.unit.workloads.test_whatif import MODEL, T0, body_lane, concurrent_subagents, idle_lane


def _counting(monkeypatch) -> Counter:
    """Count the predictions of each request (file, lane, seq) made by what-if from here on."""
    seen: Counter = Counter()

    class Counting(Predictor):
        def predict(self, r, tick, ready, source=None):
            seen[(r.file, r.lane, r.seq)] += 1
            return super().predict(r, tick, ready, source)

    monkeypatch.setattr(whatif, "Predictor", Counting)
    return seen


def _elsewhere(requests: list[TraceRequest], file: str, head: str) -> list[TraceRequest]:
    """The same requests as another file under another head: no state shared with the original."""
    return [replace(r, file=file, prefix=replace(r.prefix, head=head, node=f"{file}:{r.prefix.node}",
                                                 parent=None if r.prefix.parent is None else f"{file}:{r.prefix.parent}"))
            for r in requests]


def test_a_file_the_fix_does_not_reach_is_predicted_once(monkeypatch):
    """stagger-subagents changes the subagents of s.jsonl: the idle file beside it (its own head
    and chain) is predicted by the baseline only, the main lane of s.jsonl too (its own head); it
    was re-simulated once more per plan."""
    subagents, sums = concurrent_subagents()
    lane, lane_sums = idle_lane(20 * 60_000)
    other = _elsewhere(lane, "other.jsonl", "other:head")
    seen = _counting(monkeypatch)
    (w,) = what_if(subagents + other, sums + [FileSummary("other.jsonl", "claude-code", 0)], ["stagger-subagents"])
    assert all(seen[(r.file, r.lane, r.seq)] == 1 for r in other)
    assert seen[("s.jsonl", "main", 0)] == 1
    # the subagents, which share the head entry, are predicted again
    assert all(seen[(r.file, r.lane, r.seq)] == 2 for r in subagents if r.lane_kind == "subagent")
    # and the fix saves what it saved on s.jsonl alone: the head of each concurrent start
    assert w.applies and w.requests_changed == 2 and sorted(c.lane for c in w.changes) == ["sub-1", "sub-2"]
    assert w.saved_usd == 2 * Decimal(10_000) * (Decimal("3.75") - Decimal("0.30")) / 1_000_000


def test_a_ttl_that_is_already_the_logs_re_simulates_nothing(monkeypatch):
    """ttl-5m on a log that writes with 5 m changes no request's TTL: nothing is predicted again;
    ttl-1h changes the idle lane, whose third request reads again, and leaves the file under
    another provider's rules alone (OpenAI's gpt-4o keeps in memory only: no retention to pick)."""
    lane, sums = idle_lane(20 * 60_000)
    other = [replace(r, provider="openai", model="gpt-4o") for r in _elsewhere(lane, "o.jsonl", "o:head")]
    seen = _counting(monkeypatch)
    five, one = what_if(lane + other, sums + [FileSummary("o.jsonl", "codex", 0)], ["ttl-5m", "ttl-1h"])
    assert five.applies and five.requests_changed == 0
    assert all(seen[(r.file, r.lane, r.seq)] == 2 for r in lane)  # the baseline, then ttl-1h
    assert all(seen[(r.file, r.lane, r.seq)] == 1 for r in other)
    assert one.tokens_to_read == 31_000


def _whole(ref, requests, summaries, ttl=lambda r: None, *, link=True, aligned=False):
    """The old way: the whole plan re-simulated (``aligned`` or not)."""
    return simulate(requests, summaries, ref.heads, ttl, link=link)


def _both(monkeypatch, requests, sums, fixes=ALL_FIXES):
    parts = what_if(list(requests), list(sums), list(fixes))
    with monkeypatch.context() as m:
        m.setattr(whatif, "_resimulate", _whole)
        whole = what_if(list(requests), list(sums), list(fixes))
    return parts, whole


def test_every_fix_answers_as_the_whole_log_re_simulated(monkeypatch):
    subagents, sums = concurrent_subagents()
    lane, lane_sums = idle_lane(20 * 60_000)
    bodies, body_sums = body_lane("You are a coding agent. Today is 2025-09-04. " + "Rules. " * 300)
    requests = subagents + lane + _elsewhere(lane, "x.jsonl", "x:head") + bodies
    parts, whole = _both(monkeypatch, requests, sums + lane_sums + [FileSummary("x.jsonl", "claude-code", 0)] + body_sums)
    assert parts == whole
    assert sum(w.requests_changed for w in parts if w.applies) > 0


# --- the same on random chain logs ----------------------------------------------------------

_GAPS = st.sampled_from([1_000, 30_000, 4 * 60_000, 6 * 60_000, 20 * 60_000, 2 * 3_600_000])


@st.composite
def chain_logs(draw) -> tuple[list[TraceRequest], list[FileSummary]]:
    """Files of a main lane, then main, subagent and compaction lanes, on a few shared heads and
    models (a compaction lane often linked to the file's first lane), each
    request extending its lane's previous one, a node of any earlier request, or none; writes of
    5 m and 1 h; some requests without usage, some block-hash requests."""
    requests: list[TraceRequest] = []
    files = [f"f{n}.jsonl" for n in range(draw(st.integers(1, 3)))]
    nodes: list[str] = []
    for file in files:
        seq = 0
        first, last_tick = ("", ""), T0
        for lane_no in range(draw(st.integers(1, 3))):
            kind = "main" if lane_no == 0 else draw(st.sampled_from(["main", "subagent", "compaction"]))
            lane = f"{kind}-{lane_no}"
            head = draw(st.sampled_from(["h:a", "h:b", f"h:{file}"]))
            model = draw(st.sampled_from([MODEL, "claude-3-5-haiku-20241022"]))
            tick = T0 + draw(st.integers(0, 3)) * draw(_GAPS)
            linked = kind == "compaction" and lane_no > 0 and draw(st.booleans())
            if linked:
                # a compaction call right after the file's first lane, under its head and model
                # (the audit links it to that lane's last request), asking for more than it sent
                head, model, tick = first[0], first[1], last_tick
            if lane_no == 0:
                first = (head, model)
            previous = None
            for k in range(draw(st.integers(1, 4))):
                tick += draw(_GAPS)
                choice = draw(st.sampled_from(["lane", "lane", "any", "none"]))
                parent = previous if choice == "lane" else draw(st.sampled_from(nodes)) if choice == "any" and nodes else None
                node = f"{file}:{seq}"
                read = draw(st.sampled_from([0, 0, 4_000, 12_000, 30_000]))
                write = draw(st.sampled_from([0, 500, 4_000, 12_000, 30_000]))
                long = draw(st.booleans())
                if linked and k == 0:
                    read, write, parent = 0, 70_000, None
                usage: Usage | None = Usage(cache_read=read, cache_write_5m=0 if long else write,
                                            cache_write_1h=write if long else 0, uncached=3, output=20)
                blocks = False
                if not (linked and k == 0):
                    usage = draw(st.sampled_from([usage, usage, None]))
                    blocks = draw(st.booleans()) and draw(st.booleans()) and draw(st.booleans())
                requests.append(TraceRequest(
                    file=file, line=seq + 1, lane=lane, lane_kind=kind, seq=seq, sent_ms=tick, ready_ms=tick + draw(_GAPS) // 10,
                    provider="anthropic", model=model, usage=usage, prefix=None if blocks else Prefix(head, node, parent),
                    hash_ids=tuple(draw(st.lists(st.integers(0, 6), min_size=1, max_size=4))) if blocks else None,
                    block_tokens=(512,) * 4 if blocks else None,
                    envelope=(("input_length", "2048"),) if blocks else (),
                ))
                previous, last_tick = node, tick
                nodes.append(node)
                seq += 1
    return requests, [FileSummary(f, "claude-code", 0) for f in files]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(log=chain_logs())
def test_re_simulating_the_reached_units_answers_as_the_whole_log(monkeypatch, log):
    requests, sums = log
    parts, whole = _both(monkeypatch, requests, sums, [f for f in ALL_FIXES if f != "breakpoints=auto"])
    assert parts == whole


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log=chain_logs(), data=st.data())
def test_a_plan_sent_as_logged_answers_on_the_logs_clock_as_on_its_own(log, data):
    """static-system's plan without bodies (some requests each under a head of its own, sent as
    logged) re-simulated on the log's clock, keys and links (``aligned``) answers as with the
    plan's own clock, keys and links made anew."""
    requests, sums = log
    heads = head_sizes(requests)
    clock = clock_by_position(requests, sums)
    sources = compaction_sources([requests[i] for i in clock[2]])
    ref = whatif._Reference(requests, heads, clock, sources, simulate(requests, sums, heads, clock=clock))
    plan = [replace(r, prefix=replace(r.prefix, head=f"{r.prefix.head}|changed@{r.file}:{r.line}", parent=None))
            if r.prefix is not None and data.draw(st.booleans()) else r for r in requests]
    assert dict(whatif._resimulate(ref, plan, sums, aligned=True)) == dict(whatif._resimulate(ref, plan, sums))


def test_stagger_moves_a_call_whole_its_end_too():
    """A staggered subagent's calls are moved whole: the end of each response with its send and
    its first token (the chain model counts a Qwen entry's lifetime from the end, and idle time is
    counted from it); int38b moved the send and first token only, so a moved call ended before
    its response began."""
    requests, sums = concurrent_subagents()
    requests = [replace(r, done_ms=r.ready_ms + 700) for r in requests]
    plan = whatif._plan_stagger(requests, sums, {}, {})
    moved = [(before, after) for before, after in zip(requests, plan.requests) if after.sent_ms != before.sent_ms]
    assert moved and all(after.done_ms - before.done_ms == after.sent_ms - before.sent_ms for before, after in moved)
    assert all(after.done_ms >= after.ready_ms for _, after in moved)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a.jsonl", "b.jsonl", "c.jsonl"]), st.sampled_from(["main", "sub"]),
                          st.integers(-1, 6) | st.sampled_from([1.5, 2.5])), max_size=14))
def test_positions_worked_out_are_a_dict_of_every_key(keys):
    """The reference's positions by key (worked out from a file's start and a request's place,
    the few elsewhere held) answer as a dict of every request's key would: the last of two with
    one key, none for a key no request has; its keys are made when asked."""
    from prefixbench.workloads.audit.whatif import _Keys, _Places

    requests = [TraceRequest(file, n + 1, lane, "main", seq, None, None, "anthropic", MODEL) for n, (file, lane, seq) in enumerate(keys)]
    held = {(r.file, r.lane, r.seq): i for i, r in enumerate(requests)}
    places = _Places(requests)
    assert dict(places.items()) == held and len(places) == len(held)
    assert list(_Keys(requests)) == [_Keys(requests)[i] for i in range(len(requests))] == [(f, l, s) for f, l, s in keys]
    for file in ("a.jsonl", "d.jsonl"):
        for lane in ("main", "sub"):
            for seq in [*range(-2, 9), 1.5, 2.5]:
                assert places.get((file, lane, seq)) == held.get((file, lane, seq))
                assert ((file, lane, seq) in places) == ((file, lane, seq) in held)


def test_a_stagger_plan_makes_its_moved_calls_when_asked():
    """The stagger plan's requests: the log's where not moved (the same objects), a moved one made
    anew each time it is read (never the log's), as a list of them would read."""
    from prefixbench.workloads.audit.whatif import _Shifted

    requests = [TraceRequest("a.jsonl", n + 1, lane, "main" if lane == "main" else "subagent", n, T0 + n * 1000, T0 + n * 1000 + 5,
                             "anthropic", MODEL) for n, lane in enumerate(["main", "s1", "s1", "s2"])]
    shifted = _Shifted(requests, {("a.jsonl", "s1"): 250})
    assert len(shifted) == 4 and shifted[0] is requests[0] and shifted[3] is requests[3]
    assert shifted[1] == replace(requests[1], sent_ms=requests[1].sent_ms + 250, ready_ms=requests[1].ready_ms + 250)
    assert shifted[1] is not shifted[1] and list(shifted) == [shifted[i] for i in range(4)]
