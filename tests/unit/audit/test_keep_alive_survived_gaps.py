"""keep-alive pings as a client could: every idle gap past the interval is bridged and its pings
charged, whether or not the entry outlived it (a client cannot know that when the gap starts).
The interval is the TTL but where the history before the gap, of the same source and model,
shows entries outliving it: at least two gaps read in full past the TTL plus the margin, every
judged gap up to that length read in full, and no other call of the model sent during a judged
gap. Before, the bound was taken from the whole log, the gap being decided among it: a model's
one gap read in full set a bound equal to itself, so that gap went unbridged because of its own
outcome (hindsight), and its pings were left out of the figure."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.audit.whatif import what_if
from tests.unit.audit.test_codex_turns import ANSWER, USER, _usage, _write

MIN = 60_000
NOT_BRIDGED = "not bridged"


def _session(path: Path, calls: list[tuple], provider: str = "minimax-cn",
             model: str = "MiniMax-M2.5-highspeed", api: str = "anthropic-messages") -> Path:
    """A pi session: per ``(minute, input, read, write[, model])``, a user's text then the call,
    sent that many minutes (a float: seconds too) after the first; a call naming another model
    than the one before it comes after a model change."""
    t0 = 1_773_900_000_000
    lines: list[dict] = [{"type": "session", "version": 3, "id": "k", "timestamp": "2026-03-19T06:00:00.000Z", "cwd": "/w"},
                         {"type": "model_change", "id": "c", "timestamp": "2026-03-19T06:00:00.000Z",
                          "provider": provider, "modelId": model}]
    current = model
    for i, (minute, uncached, read, write, *named) in enumerate(calls):
        ts = t0 + round(minute * MIN)
        stamp = datetime.fromtimestamp(ts / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        call_model = named[0] if named else model
        if call_model != current:
            lines.append({"type": "model_change", "id": f"c{i}", "timestamp": stamp, "provider": provider, "modelId": call_model})
            current = call_model
        lines.append({"type": "message", "timestamp": stamp,
                      "message": {"role": "user", "content": [{"type": "text", "text": f"ask {i}"}], "timestamp": ts}})
        lines.append({"type": "message", "timestamp": stamp, "message": {
            "role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}],
            "api": api, "provider": provider, "model": call_model, "stopReason": "stop", "timestamp": ts + 1_000,
            "usage": {"input": uncached, "output": 40, "cacheRead": read, "cacheWrite": write,
                      "totalTokens": uncached + 40 + read + write}}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _keep(*paths: Path):
    (keep,) = what_if(*load_trace(list(paths)), ["keep-alive"])
    return keep


def _pings(keep) -> list:
    return [c for c in keep.changes if c.index == -1]


def test_a_gaps_own_read_does_not_decide_whether_it_is_bridged(tmp_path: Path) -> None:
    # One 8 min gap past MiniMax's 5 m, read in full in one log and read short in the other: a
    # client deciding when the gap starts cannot tell them apart, so both charge the same ping.
    # (Before, the read in full set a bound of 8 min from itself: "no keep-alive, $0".)
    full = _keep(_session(tmp_path / "a" / "s.jsonl", [(0, 20, 0, 13_000), (8, 20, 13_000, 60)]))
    short = _keep(_session(tmp_path / "b" / "s.jsonl", [(0, 20, 0, 13_000), (8, 20, 0, 13_080)]))
    assert full.detail == short.detail == "1 keep-alive request(s) bridge 1 idle gap(s) past the TTL", (full.detail, short.detail)
    assert [c.saved_usd for c in _pings(full)] == [c.saved_usd for c in _pings(short)]
    assert _pings(full) and _pings(full)[0].saved_usd < 0


# Two gaps read in full (12 min each), then a 10 min one: the history before the 10 min gap holds
# two survivals longer than it.
TWO_SURVIVALS = [(0, 20, 0, 13_000), (12, 20, 13_000, 60), (24, 20, 13_060, 60), (34, 20, 0, 13_200), (64, 20, 0, 13_300)]


def test_a_gap_within_the_bound_of_earlier_gaps_is_not_bridged(tmp_path: Path) -> None:
    keep = _keep(_session(tmp_path / "s.jsonl", TWO_SURVIVALS))
    # 0-12 (no history) and 12-24 (one survival: not enough) are bridged, 2 pings each; 24-34 is
    # not (bound 12 min on two reads in full); 34-64 is (the 10 min gap read short ends the bound).
    assert keep.detail == (
        "10 keep-alive request(s) bridge 3 idle gap(s) past the TTL; 1 idle gap(s) past the TTL not bridged, as the log "
        "had already shown the model's entries outliving gaps that long, so a client's first ping, 30 s before that length, "
        "would come after the gap's end "
        "(MiniMax-M2.5-highspeed: 1 idle no longer than a bound of at most 12m00s, the longest idle up to which every "
        f"earlier gap of the model in {tmp_path.parent} (one history: every transcript under that folder, whichever "
        "account wrote it) was read in full (2 such reads past the TTL and margin, the longest at s.jsonl:8))"), keep.detail


def test_one_survival_sets_no_bound(tmp_path: Path) -> None:
    # One read in full could be a refresh the log does not hold: the next gap is bridged.
    keep = _keep(_session(tmp_path / "s.jsonl", [(0, 20, 0, 13_000), (12, 20, 13_000, 60), (22, 20, 0, 13_100)]))
    assert keep.detail == "4 keep-alive request(s) bridge 2 idle gap(s) past the TTL", keep.detail


def test_a_read_in_full_within_the_margin_past_the_ttl_is_no_survival(tmp_path: Path) -> None:
    # 5m20s and 5m25s read in full: within 30 s of the 5 m TTL, clock noise rather than survival.
    calls = [(0, 20, 0, 13_000), (5 + 20 / 60, 20, 13_000, 60), (10 + 45 / 60, 20, 13_060, 60), (15 + 50 / 60, 20, 0, 13_200)]
    keep = _keep(_session(tmp_path / "s.jsonl", calls))
    assert NOT_BRIDGED not in keep.detail, keep.detail
    assert keep.detail == "3 keep-alive request(s) bridge 3 idle gap(s) past the TTL", keep.detail


def test_a_gap_another_session_of_the_model_sent_in_is_not_judged(tmp_path: Path) -> None:
    # The same survivals, but another session of the same source sent to the model during each:
    # it may have refreshed the entry, so neither counts and the 10 min gap is bridged.
    main = _session(tmp_path / "home" / "sessions" / "p" / "a.jsonl", TWO_SURVIVALS)
    other = _session(tmp_path / "home" / "sessions" / "q" / "b.jsonl", [(6, 20, 0, 9_000), (18, 20, 0, 9_100)])
    keep = _keep(main, other)
    assert NOT_BRIDGED not in keep.detail, keep.detail
    # Alone, the session leaves the 10 min gap unbridged (the test above).
    assert NOT_BRIDGED in _keep(main).detail


def test_survivals_count_within_a_source_and_never_across_sources(tmp_path: Path) -> None:
    history = [(0, 20, 0, 13_000), (12, 20, 13_000, 60), (24, 20, 13_060, 60)]
    later = [(30, 20, 0, 13_000), (40, 20, 0, 13_100)]
    same = _keep(_session(tmp_path / "home" / "sessions" / "p" / "a.jsonl", history),
                 _session(tmp_path / "home" / "sessions" / "q" / "b.jsonl", later))
    assert "1 idle gap(s) past the TTL not bridged" in same.detail, same.detail
    apart = _keep(_session(tmp_path / "one" / "sessions" / "p" / "a.jsonl", history),
                  _session(tmp_path / "two" / "sessions" / "q" / "b.jsonl", later))
    assert NOT_BRIDGED not in apart.detail, apart.detail


def test_a_gap_to_another_model_is_no_survival_of_the_first(tmp_path: Path) -> None:
    # Twice the next call, to another model, read all the first model's call left: that shows
    # nothing of the first model's entries, so its later 10 min gap is bridged.
    other = "MiniMax-M2.7"
    calls = [(0, 20, 0, 13_000), (12, 20, 13_000, 60, other), (13, 20, 0, 13_000), (25, 20, 13_000, 60, other),
             (26, 20, 0, 13_000), (36, 20, 0, 13_100)]
    keep = _keep(_session(tmp_path / "s.jsonl", calls))
    assert NOT_BRIDGED not in keep.detail, keep.detail


def test_a_short_read_as_long_as_a_full_one_ends_the_bound_before_it(tmp_path: Path) -> None:
    # 8 and 9 min read in full, then 12 min read short and 12 min read in full: the bound stops
    # at 9 min (8m59s of idle), before the equal short read, so the last 11 min gap is bridged.
    # Once the bound holds, each gap's one ping comes 30 s before it (the last three gaps).
    calls = [(0, 20, 0, 13_000), (8, 20, 13_000, 60), (17, 20, 13_060, 60), (29, 20, 0, 13_200),
             (41, 20, 13_200, 60), (52, 20, 0, 13_300)]
    keep = _keep(_session(tmp_path / "s.jsonl", calls))
    assert keep.detail == "5 keep-alive request(s) bridge 5 idle gap(s) past the TTL", keep.detail


def test_a_read_of_six_tenths_is_a_short_read(tmp_path: Path) -> None:
    # 8 and 9 min read in full, 10 min read 60% of what was cached: short (the tolerance is
    # far tighter), so the bound is 9 min and the next 10 min gap is bridged, by one ping 30 s
    # before the bound.
    calls = [(0, 20, 0, 13_000), (8, 20, 13_000, 60), (17, 20, 13_060, 60), (27, 20, 7_872, 5_300), (37, 20, 0, 13_300)]
    keep = _keep(_session(tmp_path / "s.jsonl", calls))
    assert keep.detail == "4 keep-alive request(s) bridge 4 idle gap(s) past the TTL", keep.detail


def test_all_gaps_unbridged_says_so_without_contradiction(tmp_path: Path) -> None:
    # Two hour-long gaps read in full (too long for ten keep-alives: not bridged, but judged),
    # then a 10 min gap within their bound: no gap is bridged, and the detail says so plainly.
    calls = [(0, 20, 0, 13_000), (60, 20, 13_000, 60), (120, 20, 13_060, 60), (130, 20, 0, 13_200)]
    keep = _keep(_session(tmp_path / "s.jsonl", calls))
    assert keep.detail.startswith("no idle gap bridged: 1 idle gap(s) past the TTL not bridged, as the log had already "
                                  "shown"), keep.detail
    assert "ten keep-alives or fewer" not in keep.detail


def _codex(path: Path, turns: list[tuple[str, int, int]]) -> Path:
    items = []
    for clock, prompt, read in turns:
        h, m = clock.split(":")
        items += [(f"{h}:{m}:00.000", "message", USER), (f"{h}:{m}:02.000", "message", ANSWER),
                  (f"{h}:{m}:03.000", "usage", _usage(prompt, read))]
    return _write(path, items, model="gpt-5.4")


def test_openai_gaps_past_the_five_minute_floor_are_bridged(tmp_path: Path) -> None:
    # A 7 min gap on gpt-5.4: past the 5 min lower end of in-memory retention the pings assume,
    # so it gets one at 4 m 30 s (before, a gap under the 10 min upper end was never bridged).
    keep = _keep(_codex(tmp_path / "r.jsonl", [("10:00", 20_000, 0), ("10:07", 20_500, 0)]))
    assert keep.detail == "1 keep-alive request(s) bridge 1 idle gap(s) past the TTL", keep.detail


def test_openai_survivals_are_judged_past_the_floor_from_what_its_prompt_cached(tmp_path: Path) -> None:
    # OpenAI's usage reports no writes: what a call left cached is the cacheable part of its
    # prompt. Two 8 min gaps read it all: past the 5 min floor, so the 7 min gap after is not bridged.
    keep = _keep(_codex(tmp_path / "r.jsonl", [("10:00", 20_000, 0), ("10:08", 20_500, 19_968), ("10:16", 21_000, 20_480),
                                               ("10:23", 21_500, 0)]))
    assert keep.detail.startswith("2 keep-alive request(s) bridge 2 idle gap(s) past the TTL; 1 idle gap(s) past the TTL "
                                  "not bridged"), keep.detail
    # Idle is measured from the response's end (3 s after the send), not send to send.
    assert "(gpt-5.4: 1 idle no longer than a bound of at most 7m57s" in keep.detail, keep.detail


def test_a_projects_folder_above_two_homes_keeps_their_histories_apart(tmp_path: Path) -> None:
    # Two users' homes under one ``projects`` folder: one home's survivals say nothing of the
    # other's client, so the other's 10 min gap is bridged. (Before, the outermost ``projects``
    # folder was the source: both homes pooled, and the gap was left unbridged.)
    history = [(0, 20, 0, 13_000), (12, 20, 13_000, 60), (24, 20, 13_060, 60)]
    later = [(30, 20, 0, 13_000), (40, 20, 0, 13_100)]
    for home in (".pi/agent/sessions", "sessions"):
        keep = _keep(_session(tmp_path / home / "projects" / "alice" / home / "p" / "a.jsonl", history),
                     _session(tmp_path / home / "projects" / "bob" / home / "q" / "b.jsonl", later))
        assert NOT_BRIDGED not in keep.detail, (home, keep.detail)
    # The same two sessions in one home pool their history.
    same = _keep(_session(tmp_path / "one" / ".pi" / "agent" / "sessions" / "p" / "a.jsonl", history),
                 _session(tmp_path / "one" / ".pi" / "agent" / "sessions" / "q" / "b.jsonl", later))
    assert "1 idle gap(s) past the TTL not bridged" in same.detail, same.detail


def test_a_source_is_one_agent_home_in_every_format() -> None:
    from prefixbench.workloads.audit.whatif import _source_of

    assert _source_of("/home/u/projects/alice/.claude/projects/-w-x/s.jsonl") == "/home/u/projects/alice/.claude/projects"
    assert _source_of("/home/u/projects/alice/.claude/projects/-w-x/s/subagents/a.jsonl") == (
        "/home/u/projects/alice/.claude/projects")
    assert _source_of("/home/u/projects/bob/.codex/sessions/2026/05/04/r.jsonl") == "/home/u/projects/bob/.codex"
    # Codex's archived sessions are the same home, one account's cache, as its live ones.
    assert _source_of("/home/u/projects/bob/.codex/archived_sessions/r.jsonl") == "/home/u/projects/bob/.codex"
    assert _source_of("/h/projects/c/.pi/agent/sessions/--w--/s.jsonl") == "/h/projects/c/.pi/agent/sessions"
    assert _source_of("/h/.gemini/tmp/abc123/chats/s.json") == "/h/.gemini/tmp"
    assert _source_of("/backup/projects/x/sessions/p/s.jsonl") == "/backup/projects/x/sessions"
    assert _source_of("/logs/run/s.jsonl") == "/logs/run"


def test_past_the_bound_the_first_ping_comes_a_margin_before_it(tmp_path: Path) -> None:
    # Two gaps of 12 min read in full set a 12 min bound; the 20 min gap after it is bridged by a
    # ping at 11m30s of idle, then one every 4m30s (at 16m00s): two, not four from 4m30s.
    from prefixbench.workloads.audit.core import load_trace
    from prefixbench.workloads.audit.whatif import _plan_keep_alive

    requests, summaries = load_trace([_session(tmp_path / "s.jsonl", [(0, 20, 0, 13_000), (12, 20, 13_000, 60),
                                                                      (24, 20, 13_060, 60), (44, 20, 13_100, 60)])])[:2]
    plan = _plan_keep_alive(requests, summaries)
    last = max(r.sent_ms for r in requests if r.sent_ms is not None and r not in plan.added)
    start = last - 20 * MIN
    assert sorted(r.sent_ms - start for r in plan.added if r.sent_ms > start) == [11 * MIN + 30_000, 16 * MIN], plan.added


def _codex_timed(path: Path, turns: list[tuple[str, str, int, int]], provider: str = "openai") -> Path:
    """Codex turns: per ``(sent, answered, prompt, read)``, the user's message at ``sent`` and the
    answer and its token count at ``answered`` (times of day with seconds)."""
    items = []
    for sent, answered, prompt, read in turns:
        items += [(f"{sent}.000", "message", USER), (f"{answered}.000", "message", ANSWER),
                  (f"{answered}.500", "usage", _usage(prompt, read))]
    path.parent.mkdir(parents=True, exist_ok=True)
    return _write(path, items, model="gpt-5.4" if provider == "openai" else "qwen3-coder-plus", provider=provider)


def test_a_gap_is_history_once_its_next_response_has_ended(tmp_path: Path) -> None:
    # Session a's two 8 min gaps read in full; the second's next call answers only at 10:18:00.
    # Session b's gap starts at 10:16:33, before that answer: a client has one survival then,
    # no bound, so b's 7 min gap is bridged. (Before, history was keyed on the send, 10:16:00.)
    home = tmp_path / "home" / "sessions"
    a = _codex_timed(home / "a.jsonl", [("10:00:00", "10:00:03", 20_000, 0), ("10:08:00", "10:08:03", 20_500, 19_968),
                                        ("10:16:00", "10:18:00", 21_000, 20_480)])
    b = _codex_timed(home / "b.jsonl", [("10:16:30", "10:16:33", 20_000, 0), ("10:23:30", "10:23:33", 20_500, 0)])
    keep = _keep(a, b)
    assert NOT_BRIDGED not in keep.detail, keep.detail
    # Answered at 10:16:03 instead, the two survivals are history when b's gap starts.
    a = _codex_timed(tmp_path / "early" / "sessions" / "a.jsonl", [
        ("10:00:00", "10:00:03", 20_000, 0), ("10:08:00", "10:08:03", 20_500, 19_968), ("10:16:00", "10:16:03", 21_000, 20_480)])
    b = _codex_timed(tmp_path / "early" / "sessions" / "b.jsonl", [
        ("10:16:30", "10:16:33", 20_000, 0), ("10:23:30", "10:23:33", 20_500, 0)])
    assert NOT_BRIDGED in _keep(a, b).detail


def test_the_ttl_counts_from_where_the_provider_starts_an_entrys_lifetime(tmp_path: Path) -> None:
    # Sent 5m30s apart, the first answer ending a minute after its send. OpenAI's entry lives
    # from the send (as the re-simulation counts it): past 5 min, one ping. Qwen's lives from the
    # response's end: 4m30s idle, within its 5 min, so no ping (before: one, send to send).
    turns = [("10:00:00", "10:01:00", 20_000, 0), ("10:05:30", "10:05:33", 20_500, 0)]
    openai = _keep(_codex_timed(tmp_path / "o" / "r.jsonl", turns))
    assert openai.detail == "1 keep-alive request(s) bridge 1 idle gap(s) past the TTL", openai.detail
    qwen = _keep(_codex_timed(tmp_path / "q" / "r.jsonl", turns, provider="qwen"))
    assert not _pings(qwen), qwen.detail
    assert "keep-alive request(s) bridge" not in qwen.detail, qwen.detail
