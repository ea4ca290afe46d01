"""The re-simulations of what to change start from the audit's own prediction of the log as sent
(``audit_requests(..., baseline=)``), rather than predicting every request once more: it must be
exactly what what-if's own baseline predicts, including on a provider whose reads the audit
follows (Gemini), where the audit's row differs from the chain model's prediction.

Fails on main: ``audit_requests`` and ``what_if`` take no ``baseline`` there."""

from __future__ import annotations

import json
from pathlib import Path

import prefixbench.workloads.audit.whatif as whatif
from prefixbench.workloads.audit.core import Baseline, audit_requests, head_sizes, load_trace
from prefixbench.workloads.audit.whatif import what_if
from tests.unit.workloads.test_whatif import body_lane, concurrent_subagents, idle_lane
from tests.unit.workloads.test_whatif_units import _counting, _elsewhere


def _gemini(path: Path) -> Path:
    """A Gemini CLI session whose reads lag its prompts (the audit follows them)."""
    start = "2026-03-26T05:00:00.000Z"
    lines: list[dict] = [{"sessionId": "f", "projectHash": "h", "startTime": start, "lastUpdated": start, "kind": "main"},
                         {"id": "u", "timestamp": start, "type": "user", "content": [{"text": "go"}]}]
    for i, (prompt, cached) in enumerate([(9_000, 0), (12_000, 7_000), (15_000, 7_050), (18_000, 7_020), (20_000, 0)]):
        lines.append({"id": f"m{i}", "timestamp": f"2026-03-26T05:00:{3 * i + 1:02d}.000Z", "type": "gemini", "content": "ok",
                      "tokens": {"input": prompt, "output": 20, "cached": cached, "thoughts": 5, "tool": 0, "total": prompt + 25},
                      "model": "gemini-3.1-pro-preview"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _trace(tmp_path: Path):
    subagents, sums = concurrent_subagents()
    lane, lane_sums = idle_lane(20 * 60_000)
    other = _elsewhere(lane, "other.jsonl", "other:head")
    bodies, body_sums = body_lane("You are a coding agent. Today is 2025-09-04. " + "Rules. " * 300)
    gemini, gemini_sums = load_trace([_gemini(tmp_path / "g.jsonl")])
    from prefixbench.workloads.logs.trace import FileSummary

    return (subagents + other + bodies + gemini,
            sums + [FileSummary("other.jsonl", "claude-code", 0)] + body_sums + gemini_sums)


def test_the_audits_baseline_is_what_ifs_own(tmp_path: Path) -> None:
    requests, summaries = _trace(tmp_path)
    baseline = Baseline()
    result = audit_requests(requests, summaries, baseline=baseline)
    clock = whatif.clock_by_position(requests, summaries)
    sources = whatif.compaction_sources([requests[i] for i in clock[2]])
    own = whatif._predict(requests, head_sizes(requests), lambda r: None, *clock, sources)
    assert baseline.requests == len(requests) == len(baseline.preds)
    made = {(r.file, r.lane, r.seq): (p.read, p.write, p.write_1h, p.uncached) for r, p in zip(requests, baseline.preds)}
    assert made == {key: (p.read, p.write, p.write_1h, p.uncached) for key, p in own.items()}
    assert list(baseline.clock[2]) == list(clock[2]) and baseline.sources == sources
    # the audit followed the Gemini reads: its rows are not the baseline there
    rows = {(row.file, row.line): row.predicted_cache_read for row in result.rows}
    assert any(rows[(r.file, r.line)] != p.read for r, p in zip(requests, baseline.preds) if r.file.endswith("g.jsonl"))


def test_what_if_from_the_audits_baseline_answers_the_same_and_predicts_less(tmp_path: Path, monkeypatch) -> None:
    requests, summaries = _trace(tmp_path)
    baseline = Baseline()
    audit_requests(requests, summaries, baseline=baseline)
    fixes = ["stagger-subagents", "ttl-1h", "ttl-auto", "keep-alive", "static-system"]
    seen = _counting(monkeypatch)
    alone = what_if(requests, summaries, fixes)
    predicted_alone = sum(seen.values())
    seen.clear()
    shared = what_if(requests, summaries, fixes, baseline=baseline)
    assert shared == alone
    # every request was predicted once less: the baseline was not made again
    assert predicted_alone - sum(seen.values()) == len(requests)
    # a baseline of another trace (here: one request less) is not used
    assert what_if(requests[:-1], summaries, fixes, baseline=baseline) == what_if(requests[:-1], summaries, fixes)
