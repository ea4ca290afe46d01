"""ttl-auto picks one TTL per lane kind of each agent (log format) and agent home: a setting is
one agent's, in one home, so a Claude Code home and a pi home are never given one pooled pick
(workloads/audit/whatif.py)."""

from __future__ import annotations

from msgspec.structs import replace

from prefixbench.workloads.audit.whatif import what_if
from prefixbench.workloads.logs.trace import FileSummary
from tests.unit.workloads.test_whatif import idle_lane

CLAUDE = "/h/a/.claude/projects/-w/s.jsonl"
PI = "/h/b/.pi/agent/sessions/--w--/s.jsonl"


def _moved(requests, file: str, tag: str):
    return [replace(r, file=file, prefix=replace(r.prefix, head=f"test:{tag}", node=f"{tag}{r.seq}",
                                                  parent=f"{tag}{r.seq - 1}" if r.seq else None))
            for r in requests]


def test_a_claude_code_home_and_a_pi_home_get_their_own_picks() -> None:
    # Claude Code idles 20 min (1 h pays there); pi never idles past 5 m (1 h only adds its write
    # premium, more than Claude Code's lane regains). Pooled, the main lanes got 5 m in both homes
    # and ttl-auto saved nothing.
    idle, _ = idle_lane(20 * 60_000)
    busy, _ = idle_lane(60_000)
    requests = _moved(idle, CLAUDE, "c") + _moved(busy, PI, "p")
    sums = [FileSummary(CLAUDE, "claude-code", 0), FileSummary(PI, "pi", 0)]
    alone_1h, = what_if(_moved(idle, CLAUDE, "c"), sums[:1], ["ttl-1h"])
    (auto,) = what_if(requests, sums, ["ttl-auto"])
    assert "1h on the 1 main-session lane(s) of claude-code in /h/a/.claude/projects" in auto.detail, auto.detail
    assert "5m on the 1 main-session lane(s) of pi in /h/b/.pi/agent/sessions" in auto.detail, auto.detail
    assert auto.saved_usd == alone_1h.saved_usd > 0
