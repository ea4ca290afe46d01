"""keep-alive on OpenAI's in-memory retention (5-10 min, best effort) pings before the lower end:
planned at 10 min, a ping could come after the entry went."""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.audit.whatif import FIXES, what_if
from tests.unit.audit.test_codex_turns import ANSWER, USER, _usage, _write


def test_keep_alive_pings_openais_in_memory_retention_at_its_lower_bound(tmp_path: Path) -> None:
    # Two gpt-5.4 calls 40 minutes apart: every 4 m 30 s (5 min less the margin) is 8 pings,
    # where every 9 m 30 s (the 10 min upper bound) was 4.
    items = [("10:00:01.000", "message", USER), ("10:00:02.000", "message", ANSWER),
             ("10:00:03.000", "usage", _usage(20_000, 0)),
             ("10:40:00.000", "message", USER), ("10:40:03.000", "usage", _usage(20_500, 0))]
    trace = load_trace([_write(tmp_path / "r.jsonl", items, model="gpt-5.4")])
    (keep,) = what_if(*trace, ["keep-alive"])
    assert "8 keep-alive request(s) bridge 1 idle gap(s)" in keep.detail, keep.detail
    # Said in the assumption of a log with OpenAI requests (only there: FIXES names no provider).
    assert "OpenAI's in-memory retention taken at its documented lower bound, 5 min" in keep.assumption
    assert "OpenAI" not in FIXES["keep-alive"]
