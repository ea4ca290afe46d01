"""MiniMax keeps no entry at the tool-result breakpoint pi places (measured on a committed
OpenClaw home: see :mod:`prefixbench.simulator.providers.minimax`): a tool loop's calls read the
system prompt's entry again and again, so a request is predicted to read what its lane's previous
request reported reading. The test fails on the code before the rule, which predicted every
follow-up to read the whole previous prompt."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit

#: The head (system prompt and tools) every tool-loop call read.
HEAD = 12_000


def _session(path: Path, calls: list[tuple[str, int, int, int]]) -> Path:
    """A pi session on MiniMax's Anthropic-compatible endpoint: per ``(before, input, read,
    write)``, a user's text (``user``) or a tool result (``tool``) then the call, 3 s apart."""
    t0 = 1_773_900_000_000
    lines: list[dict] = [{"type": "session", "version": 3, "id": "m", "timestamp": "2026-03-19T06:00:00.000Z", "cwd": "/w"},
                         {"type": "model_change", "id": "c", "timestamp": "2026-03-19T06:00:00.000Z",
                          "provider": "minimax-cn", "modelId": "MiniMax-M2.5-highspeed"}]
    for i, (before, uncached, read, write) in enumerate(calls):
        ts = t0 + 3_000 * i
        stamp = f"2026-03-19T06:00:{3 * i:02d}.000Z"
        if before == "user":
            lines.append({"type": "message", "timestamp": stamp,
                          "message": {"role": "user", "content": [{"type": "text", "text": f"ask {i}"}], "timestamp": ts}})
        else:
            lines.append({"type": "message", "timestamp": stamp,
                          "message": {"role": "toolResult", "toolCallId": f"t{i - 1}", "toolName": "read",
                                      "content": [{"type": "text", "text": f"result {i}"}], "isError": False, "timestamp": ts}})
        lines.append({"type": "message", "timestamp": stamp, "message": {
            "role": "assistant", "content": [{"type": "toolCall", "id": f"t{i}", "name": "read", "arguments": {"path": "a"}}],
            "api": "anthropic-messages", "provider": "minimax-cn", "model": "MiniMax-M2.5-highspeed", "stopReason": "toolUse",
            "timestamp": ts + 1_000,
            "usage": {"input": uncached, "output": 40, "cacheRead": read, "cacheWrite": write,
                      "totalTokens": uncached + 40 + read + write}}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_minimax_tool_loop_is_predicted_to_read_the_head_it_read(tmp_path: Path) -> None:
    # The user's text writes up to itself (all but its last 20 tokens); the tool results after it
    # write nothing and read the head alone, while their prompts grow past it.
    log = _session(tmp_path / "m.jsonl", [("user", 20, 0, 13_000), ("tool", 1_500, HEAD, 0), ("tool", 2_400, HEAD, 0),
                                         ("tool", 5_000, HEAD, 0)])
    result = run_audit([log])
    assert {(r.provider, r.model) for r in result.rows} == {("minimax", "MiniMax-M2.5-highspeed")}
    # The second call has no earlier read to keep to: the chain model's whole previous prompt.
    assert [r.predicted_cache_read for r in result.rows] == [0, 13_020, HEAD, HEAD]
    assert [r.read_within for r in result.rows] == [True, False, True, True]
    # Without following, every follow-up is predicted to read its previous prompt (the code before).
    plain = run_audit([log], follow_reads=False)
    assert [r.predicted_cache_read for r in plain.rows] == [0, 13_020, 13_500, 14_400]
    assert sum(r.read_within for r in plain.rows) == 1
    # Only the prediction follows: the causes and losses are counted as before.
    assert [(r.cause, r.lost_tokens) for r in result.rows] == [(r.cause, r.lost_tokens) for r in plain.rows]
    note = next(n for n in result.notes if "checkpoint the lane's previous request read" in n)
    assert "minimax: 2 request(s)" in note and "tool-result breakpoint (MiniMax" in note


def test_a_minimax_tool_loop_call_that_wrote_nothing_is_the_providers_miss(tmp_path: Path) -> None:
    # Its calls wrote 0: a changed system prompt or history would have been written at pi's
    # breakpoints (as the call after the user's text was), so the read that stopped inside the
    # head is MiniMax's doing, not pi's date-stamped system prompt (system-changed, a recoverable
    # loss, before: 381 of a committed OpenClaw home's 434 calls).
    log = _session(tmp_path / "m.jsonl", [("user", 20, 0, 13_000), ("tool", 1_500, HEAD, 0), ("tool", 2_400, HEAD, 0),
                                         ("tool", 2_000, HEAD, 900)])
    rows = run_audit([log]).rows
    assert [r.cause for r in rows[1:3]] == ["provider-best-effort", "provider-best-effort"]
    assert all("wrote nothing: MiniMax kept no entry at the agent's last breakpoint" in r.detail for r in rows[1:3])
    # A call that wrote is judged as any: its prompt may have changed.
    assert rows[3].cause != "provider-best-effort"
