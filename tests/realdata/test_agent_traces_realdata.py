"""Block-hash agent traces on ../shared/realdata/agentx-traces (40 kv-cache-tester files), read
in place: the predicted hit per conversation equals the folder's independent recount (its
SOURCE.md): an unbounded prefix cache per conversation, a subagent with its own ids under
``hash_id_scope: local``, hit tokens min(hit blocks x 64, in)."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

import pytest
from prefixbench.workloads.audit.core import run_audit


def test_per_conversation_hit_matches_the_recount(realdata: Path) -> None:
    folder = realdata / "agentx-traces"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    result = run_audit([folder])
    assert result.totals.requests == 2_786
    assert {f.format for f in result.files} == {"agent-traces"}
    read: dict[str, int] = defaultdict(int)
    prompt: dict[str, int] = defaultdict(int)
    for row in result.rows:
        read[row.file] += row.predicted_cache_read
        prompt[row.file] += row.predicted_cache_read + row.predicted_uncached
    rates = [read[f] / prompt[f] for f in sorted(prompt)]
    assert len(rates) == 40
    figures = [round(100 * x, 1) for x in (min(rates), statistics.median(rates), statistics.mean(rates), max(rates))]
    assert figures == [61.7, 95.4, 92.1, 98.4]
    # The prompts are the logs' own: every file's totals.combined_tokens.input.
    for path in sorted(folder.glob("*.json")):
        assert prompt[str(path)] == json.loads(path.read_text())["totals"]["combined_tokens"]["input"]
