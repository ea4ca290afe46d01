"""``replay`` divergences carry the audit's cause labels and excerpts."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.reports.cli import main


def test_replay_names_the_new_request_family(tmp_path: Path, capsys) -> None:
    base = {"model": "m", "reasoning_effort": "high", "messages": [{"role": "user", "content": "hello there"}]}
    grown = {**base, "messages": [*base["messages"], {"role": "assistant", "content": "hi"}]}
    effort = {**grown, "reasoning_effort": "max"}
    edited = {**effort, "messages": [{"role": "user", "content": "hello THERE"}, {"role": "assistant", "content": "hi"}]}
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(b) + "\n" for b in (base, grown, effort, edited)))
    assert main(["replay", str(log)]) == 0
    out = capsys.readouterr().out
    assert "effort-changed: new request family: reasoning_effort high -> max" in out
    assert "messages-changed: message 0 block 0 @ byte" in out and "'THERE" in out
    assert main(["replay", str(log), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["divergence"]["cause"] for r in rows] == [None, None, "effort-changed", "messages-changed"]
    assert rows[1]["divergence"]["detail"] is None  # only grew: the plain location stays


def test_replay_names_the_first_request_after_a_checkpoint(tmp_path: Path, capsys) -> None:
    """The request that opens the compacted context is compared with the conversation before the
    compaction call, not with the call (whose summary effort is not what changed for it)."""
    first = {"model": "m", "reasoning_effort": "high", "messages": [{"role": "user", "content": "fix the totals"}]}
    grown = {**first, "messages": [*first["messages"], {"role": "assistant", "content": "looking"}, {"role": "user", "content": "ok"}]}
    summary = {**grown, "reasoning_effort": "low", "purpose": "compaction",
               "messages": [*grown["messages"], {"role": "user", "content": "summarize the conversation"}]}
    after = {**first, "messages": [{"role": "user", "content": "summary: totals fixed in part 3"}, {"role": "user", "content": "go on"}]}
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(b) + "\n" for b in (first, grown, summary, after)))
    assert main(["replay", str(log), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[2]["purpose"] == "compaction" and rows[2]["divergence"]["cause"] == "effort-changed"
    label = rows[3]["divergence"]
    assert label["cause"] == "compaction"
    assert label["detail"].startswith("first request after the compaction call #2")
    assert "messages-changed: message 0" in label["detail"]
