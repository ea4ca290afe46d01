"""keep-alive pings as a client could: every idle gap past the interval is bridged and its pings
charged, whether or not the entry outlived it (a client cannot know that when the gap starts), and
the interval is the TTL but on a model whose log shows its entries outliving it: there a gap no
longer than the longest gap up to which every gap the log can judge was read in full (MiniMax's
entries outlive its published 5 m, measured on a committed Claude Code home) is one a client
would not ping, taking the bound from its own history. Before, a gap whose next request read in
full was left unbridged too: hindsight, which left those pings' cost out of the figure."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.audit.whatif import what_if

MIN = 60_000


def _session(path: Path, calls: list[tuple[int, int, int, int]], provider: str = "minimax-cn",
             model: str = "MiniMax-M2.5-highspeed", api: str = "anthropic-messages") -> Path:
    """A pi session: per ``(minute, input, read, write)``, a user's text then the call, sent that
    many minutes after the first."""
    t0 = 1_773_900_000_000
    lines: list[dict] = [{"type": "session", "version": 3, "id": "k", "timestamp": "2026-03-19T06:00:00.000Z", "cwd": "/w"},
                         {"type": "model_change", "id": "c", "timestamp": "2026-03-19T06:00:00.000Z",
                          "provider": provider, "modelId": model}]
    for i, (minute, uncached, read, write) in enumerate(calls):
        ts = t0 + minute * MIN
        stamp = f"2026-03-19T{6 + minute // 60:02d}:{minute % 60:02d}:00.000Z"
        lines.append({"type": "message", "timestamp": stamp,
                      "message": {"role": "user", "content": [{"type": "text", "text": f"ask {i}"}], "timestamp": ts}})
        lines.append({"type": "message", "timestamp": stamp, "message": {
            "role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}],
            "api": api, "provider": provider, "model": model, "stopReason": "stop", "timestamp": ts + 1_000,
            "usage": {"input": uncached, "output": 40, "cacheRead": read, "cacheWrite": write,
                      "totalTokens": uncached + 40 + read + write}}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_gap_no_longer_than_the_models_survival_bound_is_not_bridged(tmp_path: Path) -> None:
    # Gaps past MiniMax's 5 m: 12 min read in full (the entry outlived it); 8 min after a call
    # that cached nothing (the log cannot judge it, but every gap it can judge up to 12 min was
    # read in full); 30 min read nothing. Only the 30 min gap gets its pings.
    log = _session(tmp_path / "s.jsonl", [(0, 20, 0, 13_000), (12, 20, 13_020, 60), (13, 13_100, 0, 0),
                                         (21, 20, 0, 13_200), (51, 20, 0, 13_300)])
    (keep,) = what_if(*load_trace([log]), ["keep-alive"])
    assert keep.detail == (
        "6 keep-alive request(s) bridge 1 idle gap(s) past the TTL; 2 idle gap(s) past the TTL not bridged, as the log "
        "shows the model's entries outliving gaps that long, so a client would ping it only past them "
        "(MiniMax-M2.5-highspeed: 2 no longer than 12m00s, up to which every gap of the model was read in full (the longest "
        "at s.jsonl:6))"), keep.detail


def test_a_gap_past_the_bound_read_in_full_is_still_bridged_and_its_pings_charged(tmp_path: Path) -> None:
    # 8 min read in full, 20 min read nothing, 30 min read in full: the bound is 8 min, so the
    # 20 and 30 min gaps are bridged. That the 30 min one's entry outlived it is hindsight a
    # client pinging past 8 min does not have: its pings are charged like the 20 min one's.
    calls = [(0, 20, 0, 13_000), (8, 20, 13_020, 60), (28, 20, 0, 13_140), (58, 20, 13_160, 40)]
    log = _session(tmp_path / "s.jsonl", calls)
    (keep,) = what_if(*load_trace([log]), ["keep-alive"])
    assert keep.detail.startswith("10 keep-alive request(s) bridge 2 idle gap(s) past the TTL; 1 idle gap(s) past the TTL "
                                  "not bridged"), keep.detail
    assert keep.detail.endswith("(MiniMax-M2.5-highspeed: 1 no longer than 8m00s, up to which every gap of the model was "
                                "read in full (the longest at s.jsonl:6))"), keep.detail
    # The 30 min gap's pings are charged as they are where its entry died: the same keep-alive cost.
    (died,) = what_if(*load_trace([_session(tmp_path / "d.jsonl", [*calls[:3], (58, 20, 0, 13_200)])]), ["keep-alive"])
    (ping,) = [c for c in keep.changes if c.index == -1]
    (ping_died,) = [c for c in died.changes if c.index == -1]
    assert ping.saved_usd < 0 and ping.saved_usd == ping_died.saved_usd


def test_a_shorter_gap_read_short_leaves_no_bound(tmp_path: Path) -> None:
    # 12 min read in full, but 8 min read nothing: the log shows entries dying in gaps that short
    # too, so no gap of the model goes unbridged, the one read in full among them.
    log = _session(tmp_path / "s.jsonl", [(0, 20, 0, 13_000), (12, 20, 13_020, 60), (20, 20, 0, 13_140),
                                         (50, 20, 0, 13_200)])
    (keep,) = what_if(*load_trace([log]), ["keep-alive"])
    assert keep.detail == "9 keep-alive request(s) bridge 3 idle gap(s) past the TTL", keep.detail


def test_no_entry_shown_surviving_leaves_every_gap_bridged(tmp_path: Path) -> None:
    # The same gaps, none read in full: every one is bridged, as before, and nothing is said.
    log = _session(tmp_path / "s.jsonl", [(0, 20, 0, 13_000), (12, 20, 0, 13_080), (20, 20, 0, 13_140),
                                         (50, 20, 0, 13_200)])
    (keep,) = what_if(*load_trace([log]), ["keep-alive"])
    assert keep.detail == "9 keep-alive request(s) bridge 3 idle gap(s) past the TTL", keep.detail


def test_the_rule_is_the_same_on_anthropic(tmp_path: Path) -> None:
    # Anthropic's 5 m entry read in full after 7 min (refreshed by a call the log does not hold,
    # say) and nothing shorter read short: the bound is 7 min, so no keep-alive there; the 40 min
    # gap still gets its pings.
    log = _session(tmp_path / "s.jsonl", [(0, 20, 0, 13_000), (7, 20, 13_000, 60), (47, 20, 0, 13_200)],
                   provider="anthropic", model="claude-sonnet-4-5")
    (keep,) = what_if(*load_trace([log]), ["keep-alive"])
    assert keep.detail.startswith("8 keep-alive request(s) bridge 1 idle gap(s) past the TTL; 1 idle gap(s)"), keep.detail
    assert keep.detail.endswith("(claude-sonnet-4-5: 1 no longer than 7m00s, up to which every gap of the model was read "
                                "in full (the longest at s.jsonl:6))"), keep.detail
