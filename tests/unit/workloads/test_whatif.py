"""audit --what-if on synthetic traces whose answers can be worked out by hand
(claude-sonnet-4: input $3, read $0.30, 5 m write $3.75, 1 h write $6 per 1M tokens)."""

from decimal import Decimal

import pytest

from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest
from prefixbench.workloads.audit.whatif import parse_fixes, what_if
from prefixbench.workloads.audit.core import Heads

MODEL = "claude-sonnet-4-20250514"
T0 = 1_756_860_000_000  # a real epoch-ms clock (2025-09-03), so the dated price rows apply
HEAD = "test:head"


def req(file, lane, kind, seq, sent, ready, node, parent, usage, head=HEAD):
    return TraceRequest(
        file=file, line=seq + 1, lane=lane, lane_kind=kind, seq=seq, sent_ms=sent, ready_ms=ready,
        provider="anthropic", model=MODEL, usage=usage, prefix=Prefix(head, node, parent),
    )


def summaries(*files):
    return [FileSummary(f, "claude-code", 0) for f in files]


def concurrent_subagents():
    """Main lane, then three subagents started in the same millisecond on a 10,000-token head:
    the first writes it, the other two miss because the entry is still being written."""
    f = "s.jsonl"
    rs = [req(f, "main", "main", 0, T0, T0 + 2000, "m0", None, Usage(cache_write_5m=20_000, uncached=3, output=50), head="test:main")]
    seq = 1
    for k in range(3):
        start = T0 + 10_000
        first = Usage(cache_read=0, cache_write_5m=10_500, uncached=3, output=50)
        rs.append(req(f, f"sub-{k}", "subagent", seq, start, start + 2500, f"s{k}a", None, first))
        seq += 1
        rs.append(req(f, f"sub-{k}", "subagent", seq, start + 4000, start + 5000, f"s{k}b", f"s{k}a",
                      Usage(cache_read=10_500, cache_write_5m=300, uncached=3, output=50)))
        seq += 1
    # a later subagent that reads the head: it tells the audit how big the head is
    late = T0 + 60_000
    rs.append(req(f, "sub-3", "subagent", seq, late, late + 2000, "s3a", None, Usage(cache_read=10_000, cache_write_5m=400, uncached=3, output=50)))
    return rs, summaries(f)


def test_stagger_saves_exactly_the_head_of_each_concurrent_start():
    requests, sums = concurrent_subagents()
    (w,) = what_if(requests, sums, ["stagger-subagents"])
    assert w.applies and w.requests_changed == 2
    assert w.tokens_to_read == 2 * 10_000
    # each concurrent start reads the 10,000-token head instead of writing it: 10,000 x (3.75 - 0.30) / 1M
    assert w.saved_usd == 2 * Decimal(10_000) * (Decimal("3.75") - Decimal("0.30")) / 1_000_000
    assert sorted(c.lane for c in w.changes) == ["sub-1", "sub-2"]
    assert all(c.counterfactual_read == 10_000 and c.counterfactual_write == 500 for c in w.changes)


def test_stagger_cannot_apply_without_subagents():
    requests, sums = concurrent_subagents()
    main_only = [r for r in requests if r.lane == "main"]
    (w,) = what_if(main_only, sums, ["stagger-subagents"])
    assert not w.applies and w.saved_usd is None and "no subagent" in w.detail
    assert w.to_json()["requests_changed"] is None  # not a 0 that reads like "nothing to gain"


def idle_lane(gap_ms):
    """A lane of three requests; the third comes ``gap_ms`` after the second and (on the 5 m TTL)
    re-writes the 30,000-token prefix it had cached."""
    f = "idle.jsonl"
    rs = [
        req(f, "main", "main", 0, T0, T0 + 1000, "a", None, Usage(cache_write_5m=30_000, uncached=3, output=10)),
        req(f, "main", "main", 1, T0 + 20_000, T0 + 21_000, "b", "a", Usage(cache_read=30_000, cache_write_5m=1_000, uncached=3, output=10)),
    ]
    expired = gap_ms > 5 * 60_000
    third = Usage(cache_read=0 if expired else 31_000, cache_write_5m=32_000 if expired else 1_000, uncached=3, output=10)
    rs.append(req(f, "main", "main", 2, T0 + 20_000 + gap_ms, T0 + 21_000 + gap_ms, "c", "b", third))
    return rs, summaries(f)


def test_ttl_1h_wins_on_a_gap_between_5m_and_1h_and_says_which_gaps():
    requests, sums = idle_lane(20 * 60_000)
    (w,) = what_if(requests, sums, ["ttl-1h"])
    assert w.applies and w.tokens_to_read == 31_000
    # every write at $6 instead of $3.75, and the third request reads 31,000 instead of writing them
    writes = 30_000 + 1_000 + 1_000  # what the 1 h policy writes
    premium = Decimal(writes) * (Decimal(6) - Decimal("3.75"))
    regained = Decimal(31_000) * (Decimal("3.75") - Decimal("0.30"))
    assert w.saved_usd == (regained - premium) / 1_000_000 > 0
    assert "1 in 5 m-1 h" in w.detail


def test_ttl_1h_costs_more_when_every_gap_is_short():
    requests, sums = idle_lane(60_000)
    (w,) = what_if(requests, sums, ["ttl-1h"])
    assert w.tokens_to_read == 0
    assert w.saved_usd == -Decimal(32_000) * (Decimal(6) - Decimal("3.75")) / 1_000_000
    (auto,) = what_if(requests, sums, ["ttl-auto"])
    assert auto.applies and auto.saved_usd == 0 and "1 h on 0 of 1" in auto.detail


def test_ttl_auto_picks_1h_where_it_pays():
    requests, sums = idle_lane(20 * 60_000)
    one_h, auto = what_if(requests, sums, ["ttl-1h", "ttl-auto"])
    assert auto.saved_usd == one_h.saved_usd > 0 and "1 h on 1 of 1" in auto.detail


def test_ttl_auto_words_its_choice_in_the_terms_of_each_provider_in_the_log():
    # On a log of Anthropic lanes only the detail read "(OpenAI's: 24h retention), 5 m (in_memory) on
    # the rest": both providers' words. Each provider present gets its own, and only those.
    requests, sums = idle_lane(20 * 60_000)
    (auto,) = what_if(requests, sums, ["ttl-auto"])
    assert auto.detail == ("1 h on 1 of 1 lane(s) picking Anthropic's cache TTL per write (5 m / 1 h), 5 m on the rest "
                           "(one TTL per lane kind, as the agents' settings allow, the cheaper over its lanes: 1h on the "
                           "1 main-session lane(s))")
    # An OpenAI lane on a model offering both retention policies (gpt-5.1: in_memory or 24h).
    f = "o.jsonl"
    openai = [replace(r, file=f, provider="openai", model="gpt-5.1", usage=replace(r.usage, cache_write_5m=0),
                      prefix=replace(r.prefix, head="test:o", node=f"o{r.seq}", parent=f"o{r.seq - 1}" if r.seq else None))
              for r in requests]
    (auto,) = what_if(openai, summaries(f), ["ttl-auto"])
    assert auto.detail.startswith("24h on ") and auto.detail.split(" (one TTL per lane kind")[0].endswith(
        " of 1 lane(s) picking OpenAI's prompt cache retention per request (in_memory / 24h), in_memory on the rest")
    (auto,) = what_if(requests + openai, sums + summaries(f), ["ttl-auto"])
    anthropic_words, openai_words = auto.detail.split(" (one TTL per lane kind")[0].split("; ")
    assert anthropic_words == "1 h on 1 of 1 lane(s) picking Anthropic's cache TTL per write (5 m / 1 h), 5 m on the rest"
    assert "OpenAI's prompt cache retention" in openai_words and "Anthropic" not in openai_words


def test_ttl_fixes_evaluate_each_ttl_plan_once_and_say_what_they_say_alone(monkeypatch):
    """ttl-auto evaluates the 5 m and the 1 h plan, as ttl-5m and ttl-1h do: asked together
    (``--what-if all``) each plan is evaluated once (five evaluations before: 1h, 5m, and ttl-auto's
    5m, 1h and its final plan), and every fix says what it says when asked alone. Its final plan
    here (1 h on the one lane) is ttl-1h's, so it is not evaluated a third time (it was, as
    ``ttl-auto``, before: two evaluations now, the same results)."""
    import prefixbench.workloads.audit.whatif as whatif

    requests, sums = idle_lane(20 * 60_000)
    fixes = ["ttl-1h", "ttl-5m", "ttl-auto"]
    alone = [what_if(requests, sums, [fix])[0] for fix in fixes]
    calls: list[object] = []
    real = whatif._evaluate
    monkeypatch.setattr(whatif, "_evaluate", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    together = what_if(requests, sums, fixes)
    assert together == alone
    assert calls == ["ttl-1h", "ttl-5m"]


@pytest.mark.parametrize("gap_ms, same_as", [(20 * 60_000, "ttl-1h"), (60_000, "ttl-5m")])
def test_ttl_auto_reuses_the_ttl_plan_its_choice_equals(monkeypatch, gap_ms, same_as):
    """Asked alone, ttl-auto evaluates the 5 m and the 1 h plan; where every lane picks the same
    TTL (1 h over a 20-minute gap, 5 m where every gap is short) its plan is that TTL's, reused:
    two evaluations, not three, and the figure is that TTL's own."""
    import prefixbench.workloads.audit.whatif as whatif

    requests, sums = idle_lane(gap_ms)
    (same,) = what_if(requests, sums, [same_as])
    calls: list[object] = []
    real = whatif._evaluate
    monkeypatch.setattr(whatif, "_evaluate", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    (auto,) = what_if(requests, sums, ["ttl-auto"])
    assert calls == ["ttl-5m", "ttl-1h"]
    assert auto.saved_usd == same.saved_usd and auto.changes == same.changes


def test_ttl_auto_re_simulates_a_plan_that_is_neither_ttl_plan(monkeypatch):
    """Two lane kinds picking different TTLs: the final plan is neither the 5 m nor the 1 h one,
    so it is evaluated itself (three evaluations)."""
    import prefixbench.workloads.audit.whatif as whatif

    long_gap, _ = idle_lane(20 * 60_000)
    short_gap, _ = idle_lane(60_000)
    sub = [replace(r, file="idle.jsonl", lane="sub", lane_kind="subagent", seq=10 + r.seq, line=11 + r.seq,
                   prefix=replace(r.prefix, head="test:sub", node=f"s{r.seq}", parent=f"s{r.seq - 1}" if r.seq else None))
           for r in short_gap]
    requests = long_gap + sub
    calls: list[object] = []
    real = whatif._evaluate
    monkeypatch.setattr(whatif, "_evaluate", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    (auto,) = what_if(requests, summaries("idle.jsonl"), ["ttl-auto"])
    assert calls == ["ttl-5m", "ttl-1h", "ttl-auto"]
    assert "1h on the 1 main-session lane(s)" in auto.detail and "5m on the 1 subagent lane(s)" in auto.detail


def test_body_fixes_cannot_apply_to_a_log_without_bodies():
    requests, sums = idle_lane(60_000)
    results = what_if(requests, sums, ["static-system", "breakpoints=system+last", "keep-prefix-compaction"])
    assert [w.applies for w in results] == [False, False, False]
    assert all(w.saved_usd is None and w.detail for w in results)


def test_a_request_the_fix_does_not_touch_costs_what_it_cost():
    requests, sums = concurrent_subagents()
    (w,) = what_if(requests, sums, ["stagger-subagents"])
    touched = {(c.lane, c.index) for c in w.changes}
    assert ("main", 0) not in touched and ("sub-0", 0) not in touched and ("sub-3", 0) not in touched


@pytest.mark.parametrize(
    "text, message",
    [
        ("ttl-2h", "unknown fix"),
        ("ttl-1h,,ttl-5m", "empty item"),
        ("breakpoints", "needs places"),
        ("breakpoints=middle", "is not tools"),
        ("breakpoints=tools+system+last+last-1+last-2", "at most 4"),
        ("breakpoints=auto+last", "automatic caching alone"),
        ("stagger-subagents=3", "takes no value"),
    ],
)
def test_bad_fixes_are_one_line_user_errors(text, message):
    with pytest.raises(UserError, match=message):
        parse_fixes(text)


def test_fixes_parse_and_deduplicate():
    assert parse_fixes("ttl-1h, breakpoints=tools+last-1 ,ttl-1h") == ["ttl-1h", "breakpoints=tools+last-1"]


# --- fixes that need request bodies or a compaction request --------------------------------

from prefixbench.simulator.wire import CacheBreakpoint, Envelope, Message, Request, Text, ToolSchema  # noqa: E402


def _body(system: str, turns: int) -> Request:
    messages = tuple(
        Message("user" if k % 2 == 0 else "assistant", (Text(f"turn {k} " + "words " * 400),)) for k in range(turns)
    )
    return Request(
        Envelope("anthropic", MODEL),
        messages,
        system_blocks=(system,),
        tools=(ToolSchema.make("Read", "read a file " * 200),),
        cache_breakpoints=(CacheBreakpoint("system", 0), CacheBreakpoint("messages", 0, turns - 1)),
    )


def body_lane(system_b: str):
    """Two requests of a main lane 10 s apart; the second sends ``system_b``. The reported usage
    is what the anthropic model predicts for the bodies (so it is consistent with them: first
    predicted with no usage, which the audit would count in the provider's tokens)."""
    from prefixbench.workloads.audit.whatif import simulate

    system_a = "You are a coding agent. Today is 2025-09-03. " + "Rules. " * 300
    first, second = _body(system_a, 3), _body(system_b, 5)
    rs = [
        TraceRequest(file="b.jsonl", line=1, lane="main", lane_kind="main", seq=0, sent_ms=T0, ready_ms=T0 + 1000,
                     provider="anthropic", model=MODEL, usage=None, body=first),
        TraceRequest(file="b.jsonl", line=2, lane="main", lane_kind="main", seq=1, sent_ms=T0 + 10_000, ready_ms=T0 + 11_000,
                     provider="anthropic", model=MODEL, usage=None, body=second),
    ]
    predicted = simulate(rs, summaries("b.jsonl"), Heads())
    rs = [
        replace(r, usage=Usage(cache_read=p.read, cache_write_5m=p.write, uncached=p.uncached, output=10))
        for r, p in zip(rs, (predicted[("b.jsonl", "main", 0)], predicted[("b.jsonl", "main", 1)]))
    ]
    return rs, summaries("b.jsonl")


def test_static_system_regains_the_read_a_changed_date_line_cost():
    changed = "You are a coding agent. Today is 2025-09-04. " + "Rules. " * 300
    requests, sums = body_lane(changed)
    (w,) = what_if(requests, sums, ["static-system"])
    assert w.applies and w.requests_changed == 1
    (change,) = w.changes
    assert change.index == 1 and change.counterfactual_read > 1_000 and w.saved_usd > 0
    # the same log with a byte-stable system prompt has nothing to fix
    same = "You are a coding agent. Today is 2025-09-03. " + "Rules. " * 300
    requests, sums = body_lane(same)
    (w,) = what_if(requests, sums, ["static-system"])
    assert w.applies and w.requests_changed == 0 and "already" in w.detail


def test_static_system_without_bodies_re_simulates_the_breaks_located_in_the_head():
    """A body-less lane whose third request read nothing where the chain model read the whole
    previous prompt (pi's date-stamped system prompt): as logged it starts a new chain, with the
    fix it extends the second request. 20,500 tokens move from write to read:
    20,500 x (3.75 - 0.30) / 1M = $0.070725."""
    f = "p.jsonl"
    rs = [
        req(f, "main", "main", 0, T0, T0 + 1000, "n0", None, Usage(cache_write_5m=20_000, uncached=3, output=50)),
        req(f, "main", "main", 1, T0 + 60_000, T0 + 61_000, "n1", "n0", Usage(cache_read=20_000, cache_write_5m=500, uncached=3, output=50)),
        req(f, "main", "main", 2, T0 + 120_000, T0 + 121_000, "n2", "n1", Usage(cache_write_5m=21_000, uncached=3, output=50)),
    ]
    # The audit put the miss down to the system prompt (pi: "system-changed", located in the head).
    (w,) = what_if(rs, summaries(f), ["static-system"], system_changed={(f, 3)})
    assert w.applies and w.requests_changed == 1
    (change,) = w.changes
    assert (change.index, change.counterfactual_read, change.counterfactual_write) == (2, 20_500, 500)
    assert w.saved_usd == Decimal(20_500) * (Decimal("3.75") - Decimal("0.30")) / 1_000_000
    assert "1 request(s) in 1 lane(s)" in w.detail and "inferred from the reads" in w.detail
    # Its row carries the detail's hedge: the change was inferred, not seen (it read "saves $0.0707").
    from prefixbench.reports.whatif import saved_text

    assert saved_text(w) == "may save $0.0707"
    # Left to the audit, this log (no history to locate on) says "unexplained": not this fix's.
    (other,) = what_if(rs, summaries(f), ["static-system"])
    assert not other.applies and "prefixbench proxy" in other.detail
    # Every read as the chain model predicts: nothing shows the head changing.
    steady = rs[:2]
    (none,) = what_if(steady, summaries(f), ["static-system"])
    assert not none.applies and none.saved_usd is None


def test_breakpoints_moved_off_the_system_prompt_lose_reads():
    same = "You are a coding agent. Today is 2025-09-03. " + "Rules. " * 300
    requests, sums = body_lane(same)
    keep, drop = what_if(requests, sums, ["breakpoints=system+last", "breakpoints=tools"])
    assert keep.requests_changed == 0  # where the markers already are
    assert drop.applies and drop.tokens_to_read < 0 and drop.saved_usd < 0


def test_keep_prefix_compaction_on_a_chain_log_extends_the_main_lane():
    f = "cc.jsonl"
    rs = [
        req(f, "main", "main", 0, T0, T0 + 1000, "m0", None, Usage(cache_write_5m=30_000, uncached=3, output=10), head="h:main"),
        req(f, "main", "main", 1, T0 + 5000, T0 + 6000, "m1", "m0", Usage(cache_read=30_000, cache_write_5m=2_000, uncached=3, output=10), head="h:main"),
        # the compaction call starts its own chain: as reported it re-wrote everything
        req(f, "agent-acompact-1", "compaction", 2, T0 + 8000, T0 + 9000, "c0", None,
            Usage(cache_write_5m=32_500, uncached=3, output=500), head="h:main"),
    ]
    (w,) = what_if(rs, summaries(f), ["keep-prefix-compaction"])
    assert w.applies and w.requests_changed == 1
    (change,) = w.changes
    assert change.lane == "agent-acompact-1" and change.counterfactual_read == 32_000  # the main lane's warm prefix
    assert w.saved_usd == Decimal(32_000) * (Decimal("3.75") - Decimal("0.30")) / 1_000_000


def test_fixes_re_simulated_in_forked_workers_equal_the_one_by_one_results(monkeypatch):
    """``jobs`` > 1 re-simulates the fixes in forked workers (the longest first): the same
    results in the same order, a fix that cannot apply included."""
    import prefixbench.workloads.audit.whatif as whatif

    requests, sums = concurrent_subagents()
    lane, lane_sums = idle_lane(20 * 60_000)
    requests, sums = requests + lane, sums + lane_sums
    fixes = ["keep-alive", "ttl-1h", "stagger-subagents", "ttl-auto", "static-system", "ttl-5m"]
    one = what_if(requests, sums, fixes)
    forked: list[str] = []
    real = whatif._in_workers
    monkeypatch.setattr(whatif, "_in_workers", lambda inputs, fixes, jobs: forked.append(jobs) or real(inputs, fixes, jobs))
    two = what_if(requests, sums, fixes, jobs=2)
    assert forked == [2]  # the workers ran
    assert [w.fix for w in two] == fixes and two == one
    assert any(not w.applies for w in one) and any(w.saved_usd for w in one)
    assert whatif._FORKED is None  # nothing of the trace is kept once the workers are done


def test_static_system_on_a_mix_of_bodies_and_transcripts_fixes_each_its_own_way():
    """A team folder: the body-less lane above (one break located in its head) beside a body log
    whose system prompt is stable. The fix saves the transcript's $0.070725 still; it used to
    judge the whole audit by its bodies alone and say there was nothing to fix."""
    f = "p.jsonl"
    rs = [
        req(f, "main", "main", 0, T0, T0 + 1000, "n0", None, Usage(cache_write_5m=20_000, uncached=3, output=50)),
        req(f, "main", "main", 1, T0 + 60_000, T0 + 61_000, "n1", "n0", Usage(cache_read=20_000, cache_write_5m=500, uncached=3, output=50)),
        req(f, "main", "main", 2, T0 + 120_000, T0 + 121_000, "n2", "n1", Usage(cache_write_5m=21_000, uncached=3, output=50)),
    ]
    bodies, body_sums = body_lane("You are a coding agent. Today is 2025-09-03. " + "Rules. " * 300)
    (w,) = what_if(rs + bodies, summaries(f) + body_sums, ["static-system"], system_changed={(f, 3)})
    assert w.applies and w.requests_changed == 1
    assert w.saved_usd == Decimal(20_500) * (Decimal("3.75") - Decimal("0.30")) / 1_000_000
    assert w.detail.startswith("logged bodies: every main and subagent lane already sends one system prompt")
    assert "logs without bodies: 1 request(s) in 1 lane(s)" in w.detail



def test_keep_prefix_compaction_says_what_it_counts_against_the_compactions_warm_cost():
    """The compaction call sent a prompt of its own (the main request's first three turns under
    another tool list, as a claude-trace capture's does) where the main request had five turns
    cached: the compactions table's warm cost prices the call's own prompt read, the fix the replay
    of the main request plus the instruction. Each figure says which prompt it counts, so a reader
    sees why they differ (the detail named neither before)."""
    from prefixbench.workloads.audit.core import run_audit
    from prefixbench.workloads.audit.whatif import simulate

    system = "You are a coding agent. " + "Rules. " * 300
    main = _body(system, 5)
    instruction = Message("user", (Text("Summarize the conversation so far."),))
    call = replace(main, messages=(*main.messages[:3], instruction), tools=(ToolSchema.make("Task", "launch an agent " * 200),),
                   cache_breakpoints=(CacheBreakpoint("system", 0), CacheBreakpoint("messages", 0, 3)))
    rs = [
        TraceRequest(file="c.jsonl", line=1, lane="main", lane_kind="main", seq=0, sent_ms=T0, ready_ms=T0 + 1000,
                     provider="anthropic", model=MODEL, usage=None, body=main),
        TraceRequest(file="c.jsonl", line=2, lane="compaction", lane_kind="compaction", seq=1, sent_ms=T0 + 10_000,
                     ready_ms=T0 + 11_000, provider="anthropic", model=MODEL, usage=None, body=call),
    ]
    predicted = simulate(rs, summaries("c.jsonl"), Heads())
    rs = [replace(r, usage=Usage(cache_read=p.read, cache_write_5m=p.write, uncached=p.uncached, output=10))
          for r, p in zip(rs, (predicted[("c.jsonl", "main", 0)], predicted[("c.jsonl", "compaction", 1)]))]
    (w,) = what_if(rs, summaries("c.jsonl"), ["keep-prefix-compaction"])
    (change,) = w.changes
    prompt = rs[1].usage.prompt
    said = (f"compaction at line 2: the replay sends the main request's prompt and the instruction, "
            f"{change.counterfactual_read:,} tokens read and {change.counterfactual_write:,} written, where the call as logged "
            f"sent {prompt:,} of its own (read {rs[1].usage.cache_read:,}); the compactions table's warm cost prices those "
            f"{prompt:,} read as far as the main request left them cached: it counts the logged prompt, this figure the "
            "replay's, so the two savings differ")
    assert said in w.detail, w.detail
    assert change.counterfactual_read > prompt  # the replay reads the main request's whole prompt
    # The table's figure for the same call, on its own prompt: not the fix's.
    (judged,) = [c for c in run_audit([], trace=(rs, summaries("c.jsonl"))).compactions if c.kind == "call"]
    assert judged.lost_usd is not None and judged.lost_usd != w.saved_usd


def test_static_system_on_pi_names_the_breaks_after_a_day_change():
    """A pi session's break located in its head two minutes after UTC midnight, its lane's previous
    request the day before: pi writes the date into its system prompt, so a session resumed on a
    new day rebuilds the prefix whatever its settings. The saving still counts it (moving the date
    out would remove it), and the detail says so with the dollars on it; before, it said nothing."""
    f = "p.jsonl"
    night = T0 - 42 * 60_000  # 2025-09-02 23:58 UTC
    rs = [
        req(f, "main", "main", 0, night, night + 1000, "n0", None, Usage(cache_write_5m=20_000, uncached=3, output=50)),
        req(f, "main", "main", 1, night + 60_000, night + 61_000, "n1", "n0", Usage(cache_read=20_000, cache_write_5m=500, uncached=3, output=50)),
        req(f, "main", "main", 2, night + 180_000, night + 181_000, "n2", "n1", Usage(cache_write_5m=21_000, uncached=3, output=50)),
    ]
    pi = [FileSummary(f, "pi", 0)]
    (w,) = what_if(rs, pi, ["static-system"], system_changed={(f, 3)})
    assert w.saved_usd == Decimal(20_500) * (Decimal("3.75") - Decimal("0.30")) / 1_000_000
    assert ("; 1 of the breaks located in pi-format transcripts (not the request bodies) came after a request of their "
            "lane of another UTC date, where pi's date line alone would break the prefix if the local date changed too") in w.detail, w.detail
    # Where the break lies, not a cause the log cannot show.
    assert "the log does not show whether that caused it" in w.detail
    assert "whatever its settings" not in w.detail
    assert "The figure counts them as removed all the same ($0.0707 of it on those requests;" in w.detail
    # The same session within one day, or another agent's log across midnight: nothing said.
    (same_day,) = what_if([replace(r, sent_ms=r.sent_ms - 3_600_000, ready_ms=r.ready_ms - 3_600_000) for r in rs], pi,
                          ["static-system"], system_changed={(f, 3)})
    (other,) = what_if(rs, summaries(f), ["static-system"], system_changed={(f, 3)})
    assert "another UTC date" not in same_day.detail and "another UTC date" not in other.detail
    assert same_day.saved_usd == other.saved_usd == w.saved_usd
