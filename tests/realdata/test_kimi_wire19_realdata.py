"""A Kimi CLI home committed to a public repository, read where it lives (a local git copy; never
copied into this project, the test skips without it):

* github.com/Mark2118/sxcHK-240- (``0aba64887c7ddbbdcd016aa66d6dca95640f18e3``, an automatic
  commit of 2026-04-21): a Windows user's ``.kimi/`` with one session of wire protocol 1.9 (newer
  than the 1.3 and 1.4 sessions read elsewhere), kimi-for-coding through Kimi's managed coding
  endpoint (its ``logs/kimi.log`` says so). The agent was told to clean the home folder and
  deleted ``.kimi`` while running, so the wire and context files Kimi CLI wrote again hold only
  the session's last two calls: the first is a lane start whose read the log cannot explain.
  From ``PREFIXBENCH_SXCHK_REPO`` (default the workplace's mirror).

What is checked is the log's own bookkeeping: one request per StatusUpdate with token usage, the
totals equal to their sums, each call's prompt equal to the ``context_tokens`` the wire reports
beside it, and how many reads are predicted within 3%.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at, files_at

SXCHK = Path(os.environ.get("PREFIXBENCH_SXCHK_REPO", "/work/.mirror/Mark2118+sxcHK-240-/repo"))
SXCHK_COMMIT = "0aba64887c7ddbbdcd016aa66d6dca95640f18e3"
URL, ENV = "github.com/Mark2118/sxcHK-240-", "PREFIXBENCH_SXCHK_REPO"


def test_a_protocol_19_session_counts_each_status_update_once(tmp_path: Path) -> None:
    names = [n for n in files_at(SXCHK, SXCHK_COMMIT, URL, ENV) if n.startswith(".kimi/sessions/")]
    assert len(names) == 2  # wire.jsonl and context.jsonl of one session
    for name in names:
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file_at(SXCHK, SXCHK_COMMIT, name, URL, ENV))
    wire = next(tmp_path.rglob("wire.jsonl"))
    lines = [json.loads(line) for line in wire.read_text().splitlines()]
    assert lines[0] == {"type": "metadata", "protocol_version": "1.9"}
    updates = [m["message"]["payload"] for m in lines[1:]
               if m["message"]["type"] == "StatusUpdate" and m["message"]["payload"].get("token_usage")]
    usages = [u["token_usage"] for u in updates]
    # The wire's own check: each call's prompt is its uncached part plus its reads.
    assert [u["context_tokens"] for u in updates] == [
        t["input_other"] + t["input_cache_read"] + t["input_cache_creation"] for t in usages] == [79_437, 79_803]
    result = run_audit([tmp_path / ".kimi" / "sessions"])
    assert [f.format for f in result.files if f.requests] == ["kimi-cli"]
    t = result.totals
    assert t.requests == len(usages) == 2
    assert t.input == sum(u["input_other"] for u in usages) == 1_032
    assert t.output == sum(u["output"] for u in usages) == 1_385
    assert t.cache_read == sum(u["input_cache_read"] for u in usages) == 158_208
    assert t.cache_write is None and sum(u["input_cache_creation"] for u in usages) == 0  # no write count reported
    assert {(r.provider, r.model) for r in result.rows} == {("moonshot", "kimi-for-coding")}
    # The second call reads what the first sent (79,360 of its 79,437, whole 256-token blocks);
    # the first is a lane start: its 78,848 read were cached by calls the deleted wire had.
    first, second = result.rows
    assert (first.predicted_cache_read, first.reported_cache_read) == (0, 78_848)
    assert second.predicted_cache_read == second.reported_cache_read == 79_360
    assert sum(f.read_within for f in result.files) == 1
