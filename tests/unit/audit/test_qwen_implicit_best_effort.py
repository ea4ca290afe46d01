"""Qwen's implicit cache is best effort (Model Studio's context-cache page: no hit is guaranteed,
even for the same prompt). A pi session on qwen-plus through DashScope's compatible endpoint (pi
marks no request for it: the implicit cache), shaped as github.com/xiayongchao/pi-demo's: a call
a second after the previous one reads 0, the next reads a whole number of 64-token units short
of its prompt. Nothing changed in the log, so both misses are the provider's; the code before
put them inside the unlogged head (system-changed) and recommended a byte-stable system prompt."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit


def _session(path: Path, calls: list[tuple[int, int]]) -> Path:
    """A pi session on qwen-plus: per ``(uncached, read)``, a user's text then the call, 1 s apart."""
    t0 = 1_774_442_692_000  # 2026-03-25T12:44:52Z
    lines: list[dict] = [{"type": "session", "version": 3, "id": "q", "timestamp": "2026-03-25T12:44:52.000Z", "cwd": "/w"},
                         {"type": "model_change", "id": "c", "parentId": None, "timestamp": "2026-03-25T12:44:52.000Z",
                          "provider": "qwen", "modelId": "qwen-plus"}]
    parent = "c"
    for i, (uncached, read) in enumerate(calls):
        ts = t0 + 1_000 * i
        stamp = f"2026-03-25T12:44:{52 + i:02d}.000Z"
        lines.append({"type": "message", "id": f"u{i}", "parentId": parent, "timestamp": stamp,
                      "message": {"role": "user", "content": [{"type": "text", "text": f"question {i}"}], "timestamp": ts}})
        lines.append({"type": "message", "id": f"a{i}", "parentId": f"u{i}", "timestamp": stamp, "message": {
            "role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}],
            "api": "openai-completions", "provider": "qwen", "model": "qwen-plus", "stopReason": "stop",
            "timestamp": ts + 700,
            "usage": {"input": uncached, "output": 10, "cacheRead": read, "cacheWrite": 0,
                      "totalTokens": uncached + 10 + read}}})
        parent = f"a{i}"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_an_unmarked_qwen_call_that_reads_short_with_nothing_changed_is_the_providers_miss(tmp_path: Path) -> None:
    log = _session(tmp_path / "q.jsonl", [(1_106, 0), (1_136, 0), (139, 1_024)])
    result = run_audit([log])
    assert {(r.provider, r.model) for r in result.rows} == {("qwen", "qwen-plus")}
    assert [r.cause for r in result.rows] == ["cold-start", "provider-best-effort", "provider-best-effort"]
    assert all("Qwen's implicit cache" in r.detail for r in result.rows[1:])
    # The miss is the provider's, so no fix of the agent is recommended for it.
    assert not result.recommendations
