"""An Amp thread of late 2025 committed to a public repository, read where it lives (a local git
copy; never copied into this project, the test skips without it):

* ``.local/share/amp/threads/T-e27481cd-3cd0-42ee-b07f-643aba461893.json`` of
  github.com/workriar/cortinasbras (commit ``c20bf591d09f3fb6fa10ae0cc809fab36735417d``, its first
  commit, 2026-01-18, a Replit home; removed by ``6c03baccb4ddcff9d289097cdbb409911d1d8936``): one
  thread of 2025-10-28 (thread format v6991), 161 calls of claude-sonnet-4-5 and one
  claude-3-5-haiku title. From ``PREFIXBENCH_CORTINASBRAS_REPO`` (default the workplace's mirror).

It holds both counts of a call: each assistant message's whole usage (no ``timestamp`` yet), and a
``usageLedger`` event naming the message, stamped when the call was billed. The audit counts each
call once from its message and times it by its ledger event.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format
from tests.realdata.mirrors import file_at

CORTINASBRAS = Path(os.environ.get("PREFIXBENCH_CORTINASBRAS_REPO", "/work/.mirror/workriar+cortinasbras/repo"))
CORTINASBRAS_COMMIT = "c20bf591d09f3fb6fa10ae0cc809fab36735417d"
THREAD = ".local/share/amp/threads/T-e27481cd-3cd0-42ee-b07f-643aba461893.json"


def _ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def test_a_late_2025_thread_counts_what_its_messages_sum_timed_by_its_ledger(tmp_path: Path) -> None:
    data = file_at(CORTINASBRAS, CORTINASBRAS_COMMIT, THREAD, "github.com/workriar/cortinasbras", "PREFIXBENCH_CORTINASBRAS_REPO")
    path = tmp_path / THREAD.rsplit("/", 1)[1]
    path.write_bytes(data)
    thread = json.loads(data)
    usage = {m["messageId"]: m["usage"] for m in thread["messages"] if m.get("usage")}
    assert all("timestamp" not in u for u in usage.values())
    events = thread["usageLedger"]["events"]
    # The log's own sums: each message's usage, and the ledger's one call that names no message.
    calls = [(u["inputTokens"], u["outputTokens"], u["cacheCreationInputTokens"], u["cacheReadInputTokens"]) for u in usage.values()]
    calls += [(e["tokens"]["input"], e["tokens"]["output"], 0, 0) for e in events if e["operationType"] != "inference"]
    # The ledger restates each message's input and output.
    billed = {e["toMessageId"]: e for e in events if e["operationType"] == "inference"}
    assert sorted(billed) == sorted(usage)
    assert all((usage[m]["inputTokens"], usage[m]["outputTokens"]) == (e["tokens"]["input"], e["tokens"]["output"]) for m, e in billed.items())

    assert detect_format(path) is FORMATS["amp"]
    result = run_audit([path])
    t = result.totals
    assert t.requests == len(calls) == 162
    assert (t.input, t.output, t.cache_write, t.cache_read) == tuple(sum(c[i] for c in calls) for i in range(4)) == (926, 30_924, 979_483, 19_267_911)
    assert sum(r.lane == "side:title-generation" for r in result.rows) == 1

    # Every call timed: it ended when its ledger event was billed (before, 150 of 162 had no time).
    requests, summaries = load_trace([path])
    main = [r for r in requests if r.lane == "main"]
    assert [r.done_ms for r in main] == [_ms(billed[int(r.request_id.rsplit("#", 1)[1])]["timestamp"]) for r in main]
    assert all(r.sent_ms is not None for r in requests)
    assert any("161 call(s) timed by the usageLedger event" in n for n in summaries[0].notes)
    # So the two idle gaps past the 5-minute TTL (64 and 73 minutes) are the expiries they were
    # (one before), and 155 of 162 reads are predicted within 3% (154 before).
    assert sum(r.cause == "ttl-expired" for r in result.rows) == 2
    assert sum(1 for r in result.rows if r.read_within) == 155
