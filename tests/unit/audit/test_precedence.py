"""The audit's cause precedence (workloads/audit/precedence.py): each rule of the table fires on a
small hand-built request, and an earlier rule wins where both apply."""

from __future__ import annotations

from msgspec.structs import replace

from prefixbench.simulator.wire import Envelope, Message, Request, Text
from prefixbench.workloads.audit.precedence import (
    CAUSE_RULES,
    Evidence,
    Prediction,
    Previous,
    find_cause,
)
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.trace import Prefix, TraceRequest

MODEL = "claude-sonnet-4-5"
MIN = 60_000  # logical ms


def req(
    seq: int = 1,
    *,
    provider: str = "anthropic",
    model: str = MODEL,
    usage: Usage | None = None,
    parent: str | None = "n0",
    events: tuple[tuple[str, str], ...] = (),
    body: Request | None = None,
    new_blocks: int = 1,
    sent_ms: int | None = None,
    envelope: tuple[tuple[str, str], ...] = (),
    diagnostic: str | None = None,
) -> TraceRequest:
    return TraceRequest(
        file="f.jsonl",
        line=seq + 1,
        lane="main",
        lane_kind="main",
        seq=seq,
        sent_ms=sent_ms,
        ready_ms=None,
        provider=provider,  # type: ignore[arg-type]
        model=model,
        envelope=envelope,
        usage=usage or Usage(cache_read=0, cache_write_5m=5000, uncached=10),
        body=body,
        prefix=None if body is not None else Prefix("h", f"n{seq}", parent, new_blocks),
        events=events,
        diagnostic=diagnostic,
    )


PREV = req(0, usage=Usage(cache_read=0, cache_write_5m=5000, uncached=10), parent=None)
OPUS = "claude-opus-4-5"  # minimum 4,096 tokens
PREV_OPUS = req(0, model=OPUS, parent=None)


def ev(
    r: TraceRequest,
    *,
    prev: TraceRequest | None = PREV,
    pred: Prediction | None = None,
    tick: int = MIN,
    prev_ready: int = 0,
    head: int | None = None,
    lost: int = 5000,
    expected: int = 5000,
    compaction_at: dict[str, int] | None = None,
) -> Evidence:
    return Evidence(
        r=r,
        prev=None if prev is None else Previous(prev, 0, prev_ready),
        pred=pred or Prediction(0, 0, 0, "chain"),
        tick=tick,
        head=head,
        lost=lost,
        expected=expected,
        compaction_at=compaction_at or {},
    )


def cause(e: Evidence) -> str:
    return find_cause(e).cause


def rule(e: Evidence) -> str:
    """The name of the table row that decided."""
    for row in CAUSE_RULES:
        if row.test(e) is not None:
            return row.name
    raise AssertionError


def body(*texts: str, model: str = MODEL) -> Request:
    return Request(Envelope("anthropic", model), tuple(Message("user", (Text(t),)) for t in texts))


def test_the_table_ends_with_unexplained_and_names_each_rule_once():
    names = [row.name for row in CAUSE_RULES]
    assert names[-1] == "unexplained" and len(set(names)) == len(names)


def test_diagnostic_wins_over_everything_the_log_shows():
    r = req(diagnostic="tools_changed", model="claude-opus-4-5", events=(("compaction", ""),))
    e = ev(r, tick=2 * 3_600_000)
    assert (rule(e), cause(e)) == ("diagnostic", "tools-changed")
    # Without it, the compaction rule; 2 hours idle, past the TTL, the head had expired too: the
    # expiry leads where the head is at least half of what was lost, else the compaction.
    plain = replace(e, use_diagnostic=False, head=4000)
    assert (rule(plain), cause(plain)) == ("compaction", "ttl-expired")
    assert cause(replace(e, use_diagnostic=False)) == "compaction"  # the head's size unknown
    assert cause(replace(e, use_diagnostic=False, tick=60_000)) == "compaction"


def test_a_compaction_past_the_ttl_is_led_by_the_cause_of_more_of_the_lost_tokens():
    # Cline-Xray's task: 18 idle minutes, then a truncation; the head (8,096 tokens) is a tenth of
    # the 80,769 lost: the compaction leads, the expired head named with its share. Base (integ56
    # after fix56b): ttl-expired, all 80,769 counted recoverable though a keep-alive keeps 8,096.
    r = req(model="claude-opus-4-5", events=(("compaction", "history truncated"),))
    small = ev(r, tick=18 * MIN, head=8_096, lost=80_769, expected=8_096)
    finding = find_cause(small)
    assert finding.cause == "compaction"
    assert "the head (8,096 tokens, 8,096 of the 80,769 lost) had expired too: idle 18m00s" in finding.detail
    assert "could still be read" not in finding.detail
    big = ev(r, tick=18 * MIN, head=60_000, lost=80_000, expected=60_000)
    assert find_cause(big).cause == "ttl-expired"


def test_a_compaction_whose_head_another_lane_kept_warm_is_no_expiry():
    # 2 hours since this lane's previous call, but another lane (a compaction call) sent under the
    # same head 25s before: the head was warm, so the compaction alone explains the miss. Base
    # named ttl-expired ("the head had expired too") from this lane's own gap alone.
    r = req(model="claude-opus-4-5", events=(("compaction", ""),))
    e = ev(r, tick=2 * 3_600_000, head=3000)
    assert cause(e) == "ttl-expired"
    assert cause(replace(e, head_since=25_000)) == "compaction"
    assert cause(replace(e, head_since=20 * 60_000)) == "ttl-expired"


def test_lane_start_in_flight_before_start_expired():
    start = req(parent=None)
    e = ev(start, prev=None, pred=Prediction(0, 0, 0, "chain", in_flight=True, expired=True))
    assert (rule(e), cause(e)) == ("start-in-flight", "concurrent-write")
    e = ev(start, prev=None, pred=Prediction(0, 0, 0, "chain", expired=True), lost=0)
    assert (rule(e), cause(e)) == ("start-expired", "ttl-expired")


def test_start_resumed_before_cold_start():
    e = ev(req(parent=None, events=(("resume", "r"),)), prev=None, lost=0)
    assert (rule(e), cause(e)) == ("start-resumed", "resume")


def test_cold_start_on_a_lane_start_that_lost_nothing():
    e = ev(req(parent=None), prev=None, lost=0, expected=0)
    assert (rule(e), cause(e)) == ("cold-start", "cold-start")
    assert "first request of the lane" in find_cause(e).detail
    e = ev(req(parent=None), lost=0, expected=0)
    assert "new conversation root" in find_cause(e).detail


def test_a_lane_start_that_lost_reads_falls_through_to_the_log():
    e = ev(req(parent=None, model="claude-opus-4-5", usage=Usage(uncached=3_000)), prev=None, lost=100, expected=100)
    assert rule(e) == "below-minimum"


def test_body_diff_before_logged_events():
    before, after = body("a" * 50), body("b" * 50, "c")
    r = req(body=after, events=(("compaction", ""),))
    e = ev(r, prev=req(0, body=before))
    assert (rule(e), find_cause(e).evidence) == ("body-diff", "body-diff")


def test_body_diff_after_a_compaction_call_is_a_compaction():
    r = req(3, body=body("b" * 50, "c"))
    e = ev(r, prev=req(0, body=body("a" * 50)), compaction_at={"f.jsonl": 3})
    assert (rule(e), cause(e)) == ("body-diff", "compaction")


def test_compaction_before_resume_and_model_change():
    r = req(model="claude-opus-4-5", events=(("compaction", "summary"), ("resume", "")))
    e = ev(r, head=100)
    assert (rule(e), cause(e)) == ("compaction", "compaction")
    assert "the head (100 tokens) could still be read" in find_cause(e).detail


def test_resumed_before_model_change():
    e = ev(req(model="claude-opus-4-5", events=(("fork", "forked"),)))
    assert (rule(e), cause(e), find_cause(e).detail) == ("resumed", "resume", "forked")


def test_a_fork_measured_against_its_sources_call_is_no_resume():
    """A fork's first call whose previous request is its source's call (another file's lane):
    its loss is judged as that lane's next request's would be (here the model), not a resume.
    Main called it a resume."""
    source = replace(PREV, file="source.jsonl")
    e = ev(req(model="claude-opus-4-5", events=(("fork", "forked"),)), prev=source)
    assert e.crosses and (rule(e), cause(e)) == ("model-changed", "model-changed")


def test_model_change_before_family_change():
    e = ev(req(model="claude-opus-4-5", envelope=(("effort", "high"),)))
    assert (rule(e), cause(e)) == ("model-changed", "model-changed")


def test_family_change_before_idle_past_ttl():
    e = ev(req(envelope=(("effort", "high"),)), tick=3_600_000)
    assert (rule(e), cause(e)) == ("family-changed", "effort-changed")
    assert find_cause(e).detail == "new request family: effort default -> high"


def test_idle_past_the_providers_ttl_before_sent_before_ready():
    e = ev(req(), tick=6 * MIN, prev_ready=7 * MIN)
    assert (rule(e), cause(e)) == ("idle-past-ttl", "ttl-expired")
    assert find_cause(e).detail == "idle 6m00s since the previous request, past the 5m00s TTL"
    # A 1 h write lives an hour: the same gap is no longer past the TTL.
    long = req(0, usage=Usage(cache_write_1h=5000, uncached=10), parent=None)
    assert rule(ev(req(), prev=long, tick=6 * MIN)) != "idle-past-ttl"


def test_a_read_past_the_head_after_a_gap_past_the_ttl_is_no_expiry():
    """A real Codex session on gpt-5.6-sol (30 min TTL) read 94,976 of the 95,872 tokens its
    previous call left cached after 1h05m idle: the conversation's entry outlived the gap, so
    its 896 lost tokens are not the TTL's. Main called them ttl-expired."""
    prev = req(0, provider="openai", model="gpt-5.6-sol", parent=None)
    late = req(provider="openai", model="gpt-5.6-sol", usage=Usage(cache_read=94_976, uncached=10_648))
    e = ev(late, prev=prev, tick=66 * MIN, head=11_008, lost=896, expected=95_872)
    assert rule(e) != "idle-past-ttl"
    assert (rule(e), cause(e)) == ("best-effort", "provider-best-effort")
    # Only the shared head read (another lane may keep it warm): the conversation's entry expired.
    head_only = req(provider="openai", model="gpt-5.6-sol", usage=Usage(cache_read=11_008, uncached=94_000))
    e = ev(head_only, prev=prev, tick=66 * MIN, head=11_008, lost=84_864, expected=95_872)
    assert (rule(e), cause(e)) == ("idle-past-ttl", "ttl-expired")


def test_openai_lives_ten_minutes_deepseek_has_no_ttl():
    for provider, fires in (("openai", True), ("deepseek", False)):
        prev = req(0, provider=provider, model="m", parent=None)
        e = ev(req(provider=provider, model="m"), prev=prev, tick=11 * MIN)
        assert (rule(e) == "idle-past-ttl") is fires


def test_sent_before_ready_before_below_minimum():
    e = ev(req(model=OPUS), prev=PREV_OPUS, tick=MIN, prev_ready=2 * MIN, expected=100)
    assert (rule(e), cause(e)) == ("sent-before-ready", "concurrent-write")


def test_below_minimum_reads_the_models_minimum():
    small_prev = req(0, model=OPUS, parent=None, usage=Usage(uncached=3000))
    e = ev(req(model=OPUS, usage=Usage(uncached=4000)), prev=small_prev, expected=4000)
    assert (rule(e), find_cause(e).detail) == (
        "below-minimum", "its prompt (4,000 tokens) is below claude-opus-4-5's minimum of 4,096: nothing of it is cached")
    assert rule(ev(req(model="claude-sonnet-4-5", usage=Usage(uncached=4000)), prev=small_prev, expected=4000)) != "below-minimum"
    # The minimum is the prompt's (Anthropic's min_applies_to): a read expected below it of a
    # prompt that wrote 5,000 tokens is no such miss.
    assert rule(ev(req(model=OPUS), prev=PREV_OPUS, expected=4000)) != "below-minimum"


def test_below_minimum_takes_the_gemini_page_of_the_day_the_request_was_sent():
    """Gemini's caching page gave 2.5 Flash 1,024 tokens up to its version of 2026-05-28 and 2,048
    from its version of 2026-07-07 on: a 1,500-token prompt is below the minimum only after."""
    june, august = 1_780_272_000_000, 1_785_542_400_000  # 2026-06-01, 2026-08-01 00:00 UTC
    flash = "gemini-2.5-flash"
    prev = req(0, provider="gemini", model=flash, parent=None, usage=Usage(uncached=1000))
    small = Usage(uncached=1500)
    assert rule(ev(req(provider="gemini", model=flash, sent_ms=june, usage=small), prev=prev, expected=1500)) != "below-minimum"
    for sent in (august, None):  # a request of unknown time takes today's table
        e = ev(req(provider="gemini", model=flash, sent_ms=sent, usage=small), prev=prev, expected=1500)
        assert (rule(e), find_cause(e).detail) == (
            "below-minimum", "its prompt (1,500 tokens) is below gemini-2.5-flash's minimum of 2,048: nothing of it is cached")


def test_below_minimum_before_beyond_lookback():
    e = ev(req(model=OPUS, new_blocks=30, usage=Usage(uncached=4000)), prev=req(0, model=OPUS, parent=None, usage=Usage(uncached=3000)), expected=4000)
    assert rule(e) == "below-minimum"


def test_beyond_lookback_before_best_effort_and_head():
    e = ev(req(new_blocks=21), head=0)
    assert (rule(e), cause(e)) == ("beyond-lookback", "breakpoint-placement")
    assert "beyond the 20-block lookback" in find_cause(e).detail
    assert rule(ev(req(new_blocks=20))) != "beyond-lookback"


def test_breakpoints_miss_when_the_body_replay_predicts_it_too():
    grown = body("a" * 50, "more")
    e = ev(req(body=grown), prev=req(0, body=body("a" * 50)), pred=Prediction(0, 0, 0, "body"))
    assert (rule(e), find_cause(e).evidence) == ("breakpoints-miss", "body-diff")
    assert "carries no cache_control at all" in find_cause(e).detail


def test_a_shrinking_prompt_is_a_rewrite_not_the_providers_doing():
    # Codex 0.116: two misses inside a turn whose prompt shrank by 5.7k and 7.3k tokens were
    # called provider-best-effort ("nothing changed in the log"). gpt-4o: in-memory retention
    # only (gpt-5 keeps a prefix 24 h by default), so 11 minutes idle is past its TTL.
    prev = req(0, provider="openai", model="gpt-4o", parent=None, usage=Usage(cache_read=40_000, uncached=2_000))
    shrank = req(provider="openai", model="gpt-4o", usage=Usage(cache_read=3_000, uncached=33_300))
    e = ev(shrank, prev=prev, expected=42_000, lost=39_000, tick=MIN)
    assert (rule(e), cause(e), find_cause(e).evidence) == ("prompt-shrank", "messages-changed", "log")
    assert "shrank by 5,700 tokens (42,000 -> 36,300)" in find_cause(e).detail
    # Below half of the previous prompt: a compaction the log does not mark.
    halved = req(provider="openai", model="gpt-4o", usage=Usage(cache_read=0, uncached=12_000))
    assert cause(ev(halved, prev=prev, expected=42_000, lost=42_000)) == "compaction"
    # A prompt that grew is not a shrink, and a TTL expiry still comes first.
    grew = req(provider="openai", model="gpt-4o", usage=Usage(cache_read=100, uncached=45_000))
    assert rule(ev(grew, prev=prev, expected=42_000)) == "best-effort"
    assert rule(ev(shrank, prev=prev, expected=42_000, tick=11 * MIN)) == "idle-past-ttl"


def test_idle_is_counted_from_the_previous_responses_end_where_the_log_has_it():
    # A 12-minute response followed one second later by the next call: 1s idle, not 12m01s
    # (gpt-4o: in-memory retention only, 10 min).
    prev = req(0, provider="openai", model="gpt-4o", parent=None, usage=Usage(cache_read=0, uncached=5_100))
    r = req(provider="openai", model="gpt-4o", usage=Usage(cache_read=100, uncached=5_000))
    e = Evidence(r=r, prev=Previous(prev, 0, 0, 12 * MIN), pred=Prediction(0, 0, 0, "chain"), tick=12 * MIN + 1_000,
                 head=None, lost=5_000, expected=5_100, compaction_at={})
    assert rule(e) == "idle-past-ttl"  # the TTL counts from the request's start (providers.md)
    assert find_cause(e).detail == "12m01s since the previous request was sent (1s idle after its response ended), past the 10m00s TTL"
    within = Evidence(r=r, prev=Previous(prev, 0, 0, 4 * MIN), pred=Prediction(0, 0, 0, "chain"), tick=4 * MIN + 1_000,
                      head=None, lost=5_000, expected=5_100, compaction_at={})
    assert "and 1s idle after the previous response ended: " in find_cause(within).detail


def test_best_effort_only_for_best_effort_providers_and_before_the_head_stop():
    prev = req(0, provider="openai", model="gpt-5", parent=None)
    e = ev(req(provider="openai", model="gpt-5", usage=Usage(cache_read=100, uncached=5000)), prev=prev, head=100)
    assert (rule(e), cause(e)) == ("best-effort", "provider-best-effort")
    assert "OpenAI routes by a prefix hash" in find_cause(e).detail
    assert rule(ev(req(usage=Usage(cache_read=100, uncached=5000)), head=100)) == "stopped-at-head"


def test_stopped_at_head_is_a_messages_change():
    e = ev(req(usage=Usage(cache_read=100, cache_write_5m=4900)), head=100)
    assert (rule(e), cause(e)) == ("stopped-at-head", "messages-changed")


def test_unexplained_says_why_the_log_cannot_tell():
    e = ev(req(events=(("user_turn", ""),)), tick=MIN)
    assert (rule(e), cause(e), find_cause(e).evidence) == ("unexplained", "unexplained", "none")
    assert find_cause(e).detail == "at a new user turn 1m00s after the previous request, with no change logged"
    quiet = ev(req(), tick=MIN)
    assert find_cause(quiet).detail.endswith("nothing logged in between explains it")


def test_nothing_read_on_a_server_of_unknown_cache_is_not_located():
    """A read of 0 on a provider the audit does not model (Claude Code on OpenRouter's free
    Nemotron) ends "inside the unlogged head" only because nothing was read: whether that
    server caches at all is not in the log, so no system-prompt change is claimed (main said
    system-changed)."""
    from prefixbench.workloads.audit.locate import Location

    prev = req(0, provider="unknown", model="nvidia/nemotron", parent=None, usage=Usage(uncached=25_430))
    r = req(provider="unknown", model="nvidia/nemotron", usage=Usage(uncached=27_842))
    e = replace(ev(r, prev=prev, lost=25_344, expected=25_344), location=Location(0, "head", 0, 27_842, "", ""))
    assert (rule(e), cause(e)) == ("unexplained", "unexplained")
    assert "cache prefixbench does not model" in find_cause(e).detail
    # What a known provider read is still located.
    known = replace(e, r=replace(r, provider="anthropic", model=MODEL), prev=Previous(PREV, 0, 0))
    assert (rule(known), cause(known)) == ("located", "system-changed")


def test_stopped_at_head_before_located_before_unexplained():
    from prefixbench.workloads.audit.locate import Location

    where = Location(3, "user", 100, 5010, "hello", "it holds a date or time", "date")
    e = replace(ev(req(usage=Usage(cache_read=100, cache_write_5m=4900))), location=where)
    assert (rule(e), cause(e), find_cause(e).evidence) == ("located", "messages-changed", "position")
    assert find_cause(e).detail.startswith('the cached prefix ended inside message 3 (user, about token 100 of 5,010')
    assert rule(replace(e, head=100)) == "stopped-at-head"
    head = replace(e, location=Location(0, "head", 0, 5010, "", "the tool list changed (logged: x)", "tools"))
    assert (rule(head), cause(head)) == ("located", "tools-changed")
    # Sent before the request it follows: the location means nothing, the break stays unexplained.
    early = replace(e, r=replace(e.r, sent_ms=10), prev=Previous(replace(PREV, sent_ms=20), 0, 0))
    assert (rule(early), cause(early)) == ("unexplained", "unexplained")


def test_a_read_at_a_warm_level_names_itself_among_the_cold_points_only_where_it_is_one():
    # A read after an idle past the TTL that stopped at a level two cold points read. A request
    # naming an explicit cache is left out of the cold points (core._cold_reads): the detail said
    # "this one included" of it too.
    r = req(usage=Usage(cache_read=17_482, cache_write_5m=3_371, uncached=3))
    level = replace(ev(r, tick=7 * MIN, head=12_249, lost=3_371, expected=20_853), pred=Prediction(12_249, 0, 0, "chain"),
                    levels=((17_482, 2),))
    assert "as 2 cold points of this log did (lane starts and reads after a TTL expiry, this one included; " in find_cause(level).detail
    named = replace(level, r=replace(r, explicit_cache="cachedContents/abc"))
    detail = find_cause(named).detail
    assert "as 2 cold points of this log did (lane starts and reads after a TTL expiry, not this one, which names an explicit cache; " in detail
    assert "this one included" not in detail


def test_a_ttl_counted_from_the_responses_end_is_judged_by_the_idle_time():
    """Qwen's 5 min count from the end of the response that wrote the entry (ttl_from='end'): a
    call sent 6 min after the previous one was sent, 4 min after its response ended, is inside the
    TTL (the chain model predicts the read); int38b called it ttl-expired by the 6 min ("6m00s since
    the previous request was sent (4m00s idle after its response ended), past the 5m00s TTL")."""
    prev = req(0, provider="qwen", model="qwen3-coder-plus", parent=None)
    def at(tick: int, r: TraceRequest = req(provider="qwen", model="qwen3-coder-plus")) -> Evidence:
        e = ev(r, prev=prev, tick=tick)
        return replace(e, prev=Previous(prev, 0, 0, 2 * MIN))
    assert rule(at(6 * MIN)) != "idle-past-ttl"
    assert (rule(at(8 * MIN)), cause(at(8 * MIN))) == ("idle-past-ttl", "ttl-expired")
    # A TTL counted from the request's start (Anthropic's) is judged by the time since it was sent.
    e = replace(ev(req(), tick=6 * MIN), prev=Previous(PREV, 0, 0, 2 * MIN))
    assert rule(e) == "idle-past-ttl"


def test_a_shrunk_prompt_read_to_inside_the_head_after_a_tool_change_is_a_tools_change():
    """Claude Code 2.1.152 (allym-4/test): a prompt 43,879 tokens smaller than the previous, a tool
    list change logged (deferred tools) and the read inside the head; Anthropic's diagnostic said
    tools_changed. The tools come first: the location decides, not the shrink (which it did before:
    messages-changed)."""
    from prefixbench.workloads.audit.locate import Location

    prev = req(0, usage=Usage(cache_read=120_000, cache_write_5m=5_000, uncached=3), parent=None)
    r = req(usage=Usage(cache_read=11_213, cache_write_5m=70_298, uncached=3), events=(("tools_change", "deferred_tools_delta"),))
    where = Location(0, "head", 11_213, 81_514, "", "the tool list changed (logged: deferred_tools_delta)", "tools")
    e = replace(ev(r, prev=prev, expected=81_000, lost=69_787), location=where)
    assert (rule(e), cause(e), find_cause(e).evidence) == ("located", "tools-changed", "position")
    # Without the logged tool change, or ended inside a message, the shrink decides as before.
    assert rule(replace(e, r=replace(r, events=()))) == "prompt-shrank"
    assert rule(replace(e, location=replace(where, message=3, role="user"))) == "prompt-shrank"


def test_idle_past_ttl_judges_the_head_by_another_lanes_call_within_the_ttl():
    # 20 min idle in this lane, but another lane sent under the head 30s before: the head was warm.
    # A read of the whole head: only the lane's own part past it expired (still ttl-expired). A read
    # short of it: the expiry does not explain it (base: ttl-expired either way).
    at_head = ev(req(usage=Usage(cache_read=3000, cache_write_5m=2000, uncached=10)), tick=20 * MIN, head=3000,
                 lost=2000)
    warm = replace(at_head, head_since=30_000)
    assert (rule(warm), cause(warm)) == ("idle-past-ttl", "ttl-expired")
    assert "the head (3,000 tokens) was warm and read" in find_cause(warm).detail
    assert "was warm" not in find_cause(at_head).detail
    short = replace(warm, r=req(usage=Usage(cache_read=1000, cache_write_5m=4000, uncached=10)), lost=4000)
    assert (rule(short), cause(short)) == ("idle-past-ttl", "unexplained")
    assert cause(replace(short, head_since=None)) == cause(replace(short, head_since=10 * MIN)) == "ttl-expired"


def test_qwens_implicit_cache_is_best_effort_for_a_request_known_to_carry_no_marker():
    """Model Studio's implicit cache (a request with no cache_control) guarantees no hit, even for
    the same prompt; its explicit cache guarantees one for 5 min. A read of 0 of an unmarked
    request with nothing changed in the log is the provider's (xiayongchao/pi-demo: reads of 0 a
    second after the previous call, then reads of the prefix they held); the code before had no
    note for Qwen, so nothing here was put down to the provider."""
    from prefixbench.simulator.wire import CacheBreakpoint

    prev = req(0, provider="qwen", model="qwen-plus", usage=Usage(cache_read=0, uncached=1_106), parent=None)
    r = req(provider="qwen", model="qwen-plus", usage=Usage(cache_read=0, uncached=1_136))

    def at(made: TraceRequest) -> Evidence:
        return ev(made, prev=prev, tick=1_500, prev_ready=800, lost=1_100, expected=1_100)

    # pi's openai-completions API marks nothing for DashScope by default (and logs cacheWrite 0 on
    # every call, so a 0 tells nothing): taken as unmarked by its API, the detail says so.
    pi = at(replace(r, source_format="pi", api="openai-completions"))
    assert (rule(pi), cause(pi)) == ("best-effort", "provider-best-effort")
    assert "Qwen's implicit cache (a request with no cache_control) is best effort" in find_cause(pi).detail
    assert "pi sends this provider no cache_control by default" in find_cause(pi).detail
    assert "assumed" in find_cause(pi).detail
    # A pi call on pi's Anthropic API (which marks every call), or naming no API, is not taken as
    # unmarked even where it wrote nothing (the code before took any pi call that wrote 0). One
    # that reported a write is marked whatever its API.
    for api in ("anthropic-messages", ""):
        assert rule(at(replace(r, source_format="pi", api=api))) != "best-effort"
    marked_pi = replace(r, source_format="pi", api="openai-completions", usage=replace(r.usage, cache_write_5m=1_136, uncached=0))
    assert rule(at(marked_pi)) != "best-effort"
    for other in ("gemini-cli", "claude-code", "otel", ""):
        assert rule(at(replace(r, source_format=other, api="openai-completions"))) != "best-effort"
    # A logged body decides, whatever the format: with a cache_control marker it is explicit.
    # (Replayed, the bodies predict the read, so the breakpoints do not explain the miss.)
    unmarked = Request(Envelope("openai", "qwen-plus"), (Message("user", (Text("hi"),)),))
    marked = replace(unmarked, cache_breakpoints=(CacheBreakpoint("messages", 0, 0),))
    replayed = Prediction(1_100, 0, 36, "body")
    plain = replace(at(replace(r, source_format="claude-code", body=unmarked, prefix=None)), pred=replayed)
    assert rule(plain) == "best-effort"
    assert "its logged body carries no cache_control" in find_cause(plain).detail
    # A top-level cache_control (automatic caching), marks an OpenAI-shaped body's reader read
    # but placed nowhere, and a reported write each show a marked request.
    for shown in (replace(unmarked, auto_cache="5m"), replace(unmarked, cache_marked=True)):
        assert rule(replace(at(replace(r, source_format="claude-code", body=shown, prefix=None)), pred=replayed)) != "best-effort"
    wrote = replace(r, source_format="claude-code", body=unmarked, prefix=None, usage=replace(r.usage, cache_write_5m=36))
    assert rule(replace(at(wrote), pred=replayed)) != "best-effort"
    assert rule(replace(at(replace(r, source_format="pi", body=marked, prefix=None)), pred=replayed)) != "best-effort"


def test_a_tool_list_change_logged_before_a_best_effort_miss_is_the_tools_doing():
    """Codex 0.167.2 writes ``dynamic_tools_updated`` when a thread's dynamic tools change (the
    reader logs a ``tools_change``): a miss after it on OpenAI is the tools' doing. Base: the
    provider's, its detail saying nothing had changed in the log."""
    prev = req(0, provider="openai", model="gpt-5.5", parent=None)
    changed = req(provider="openai", model="gpt-5.5", usage=Usage(cache_read=1_024, uncached=19_476),
                  events=(("tools_change", "dynamic_tools_updated at line 6 (tools named in it: fetch, lookup)"),))
    e = ev(changed, prev=prev, tick=MIN, lost=18_816, expected=19_840)
    finding = find_cause(e)
    assert (rule(e), finding.cause) == ("tools-logged", "tools-changed")
    assert "logged: dynamic_tools_updated at line 6 (tools named in it: fetch, lookup)" in finding.detail
    assert "nothing changed in the log" not in finding.detail
    # Without the event, the provider's as before; on Anthropic (no best-effort cache), not this rule.
    plain = ev(replace(changed, events=()), prev=prev, tick=MIN, lost=18_816, expected=19_840)
    assert (rule(plain), cause(plain)) == ("best-effort", "provider-best-effort")
    anthropic = ev(req(events=changed.events, usage=Usage(cache_read=1_024, uncached=4_000)))
    assert rule(anthropic) != "tools-logged"


def test_a_read_past_the_head_after_a_logged_tool_change_is_not_the_tools_doing():
    """A read past the shared head (or, its size not logged, past the model's minimum) shows the
    tools, which come before the conversation, were cached as the request sent them: the logged
    tool change did not cause the miss, and the provider's rule decides, its detail naming the
    change and that the read went past it. Base: ``tools-changed`` for any short read after a
    change, however much was read. The Codex case: 17,000 of 19,840 on gpt-5.5 after a
    ``dynamic_tools_updated`` line; the Kimi CLI case: 7,000 of 9,472 on deepseek-chat after
    ``toolsHash`` went from t1 to t2."""
    codex_prev = req(0, provider="openai", model="gpt-5.5", parent=None)
    codex = req(provider="openai", model="gpt-5.5", usage=Usage(cache_read=17_000, uncached=2_840),
                events=(("tools_change", "dynamic_tools_updated at line 6 (tools named in it: fetch, lookup)"),))
    kimi_prev = req(0, provider="deepseek", model="deepseek-chat", parent=None)
    kimi = req(provider="deepseek", model="deepseek-chat", usage=Usage(cache_read=7_000, uncached=2_472),
               events=(("tools_change", "toolsHash t1 -> t2"),))
    for r, prev, expected, logged in ((codex, codex_prev, 19_840, "dynamic_tools_updated at line 6"),
                                      (kimi, kimi_prev, 9_472, "toolsHash t1 -> t2")):
        e = ev(r, prev=prev, tick=MIN, lost=expected - r.usage.cache_read, expected=expected)
        finding = find_cause(e)
        assert (rule(e), finding.cause) == ("best-effort", "provider-best-effort")
        assert f"cached tokens past the tool-list change logged since the previous request ({logged}" in finding.detail
        assert "shows the tools were cached as this request sent them" in finding.detail
        assert "the head's size not being known" in finding.detail
        assert "with nothing changed in the log" not in finding.detail
    # A known head the read went past is the bound the detail names.
    e = ev(codex, prev=codex_prev, tick=MIN, lost=2_840, expected=19_840, head=12_000)
    assert rule(e) == "best-effort" and "a read past the shared head's 12,000 tokens" in find_cause(e).detail
    # A read that stopped at or short of the head (or the minimum, with no head known) is still the tools'.
    for head, read in ((17_000, 17_000), (None, 1_024), (18_000, 4_096)):
        short = ev(replace(codex, usage=Usage(cache_read=read, uncached=19_840 - read)), prev=codex_prev, tick=MIN,
                   lost=19_840 - read, expected=19_840, head=head)
        assert (rule(short), cause(short)) == ("tools-logged", "tools-changed"), (head, read)


def test_a_tool_change_logged_before_a_request_sent_before_the_previous_one_is_not_the_cause():
    """A request sent before the one it follows in the file does not extend that one's prompt: a
    tool change logged between them says nothing of its miss, and the tools rule does not fire
    (removing its ``out_of_order`` guard makes this fail). The provider's rule says why the change
    tells nothing, not that nothing changed."""
    prev = req(0, provider="openai", model="gpt-5.5", parent=None, sent_ms=10 * MIN)
    late = req(provider="openai", model="gpt-5.5", usage=Usage(cache_read=1_024, uncached=18_816), sent_ms=9 * MIN,
               events=(("tools_change", "dynamic_tools_updated at line 6 (tools named in it: fetch, lookup)"),))
    e = ev(late, prev=prev, tick=MIN, lost=18_816, expected=19_840)
    assert rule(e) != "tools-logged" and cause(e) != "tools-changed"
    finding = find_cause(e)
    assert (rule(e), finding.cause) == ("best-effort", "provider-best-effort")
    assert "(dynamic_tools_updated at line 6 (tools named in it: fetch, lookup)) telling nothing, as it was sent before" in finding.detail
    assert "with nothing changed in the log" not in finding.detail
    # In order, the same request is the tools' doing.
    in_order = ev(replace(late, sent_ms=11 * MIN), prev=prev, tick=MIN, lost=18_816, expected=19_840)
    assert rule(in_order) == "tools-logged"


def test_a_request_sending_the_previous_answer_back_was_not_sent_before_it():
    # mini-swe-agent on DeepSeek (astropy__astropy-14365, messages[144]): the tool result the
    # request carries was stamped 0.7 s before the answer it follows; a clock stepped back, not a
    # request sent while the previous response was being written.
    def body(*texts: tuple[str, str]) -> Request:
        return Request(Envelope("anthropic", OPUS), tuple(Message(role, (Text(text),)) for role, text in texts))  # type: ignore[arg-type]

    asked = (("user", "fix the bug"),)
    prev = req(0, model=OPUS, body=body(*asked))
    later = req(model=OPUS, body=body(*asked, ("assistant", "ls"), ("tool", "a.py")))
    e = ev(later, prev=prev, tick=MIN, prev_ready=2 * MIN, expected=100)
    assert rule(e) != "sent-before-ready" and cause(e) != "concurrent-write"
    # The same prompt sent again before the answer (parallel calls) still is.
    e = ev(req(model=OPUS, body=body(*asked)), prev=prev, tick=MIN, prev_ready=2 * MIN, expected=100)
    assert (rule(e), cause(e)) == ("sent-before-ready", "concurrent-write")
