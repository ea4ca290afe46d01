"""Z.AI keeps an entry about 20 min idle (measured on its GLM sessions: no follow-up past 30 min
idle read its previous prompt; see :mod:`prefixbench.simulator.providers.zai`): in the chain
model a request more than 20 min after its lane's previous one reads no entry of its own. The
test fails on the code before the rule, which kept every Z.AI entry forever."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit


def _session(path: Path, calls: list[tuple[int, int, int]]) -> Path:
    """A pi session (OpenClaw's) on Z.AI's glm-5: per ``(seconds after the first, input, read)``,
    a user's text then the call."""
    t0 = 1_774_100_000_000
    lines: list[dict] = [{"type": "session", "version": 3, "id": "z", "timestamp": "2026-03-21T13:33:20.000Z", "cwd": "/w"},
                         {"type": "model_change", "id": "c", "timestamp": "2026-03-21T13:33:20.000Z",
                          "provider": "zai", "modelId": "glm-5"}]
    for i, (after, uncached, read) in enumerate(calls):
        ts = t0 + 1_000 * after
        lines.append({"type": "message", "timestamp": ts,
                      "message": {"role": "user", "content": [{"type": "text", "text": f"ask {i}"}], "timestamp": ts}})
        lines.append({"type": "message", "timestamp": ts + 2_000, "message": {
            "role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}],
            "api": "openai-completions", "provider": "zai", "model": "glm-5", "stopReason": "stop", "timestamp": ts + 2_000,
            "usage": {"input": uncached, "output": 40, "cacheRead": read, "cacheWrite": 0, "totalTokens": uncached + 40 + read}}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_glm_follow_up_idle_past_20_minutes_reads_no_entry_of_its_own(tmp_path: Path) -> None:
    # 10 min idle: the previous prompt (10,300 in 64-token steps); 25 min idle after that: nothing
    # of its own (it read 0, as three GJC calls did after 1h49m to 16h idle).
    log = _session(tmp_path / "z.jsonl", [(0, 10_300, 0), (600, 200, 10_240), (600 + 1_500, 10_700, 0)])
    rows = run_audit([log]).rows
    assert {(r.provider, r.model, r.predicted_by) for r in rows} == {("zai", "glm-5", "chain")}
    assert [r.predicted_cache_read for r in rows] == [0, 10_240, 0]
    assert rows[2].cause == "ttl-expired" and all(r.read_within for r in rows)
