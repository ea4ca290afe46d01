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


def test_a_pi_call_on_an_api_that_counts_writes_is_not_taken_as_unmarked(tmp_path: Path) -> None:
    """pi's cacheWrite is 0 on every openai-completions call, so "wrote nothing" tells nothing
    there; what decides is the API: on anthropic-messages pi marks, and a miss is judged as any."""
    log = _session(tmp_path / "q.jsonl", [(1_106, 0), (1_136, 0), (139, 1_024)])
    log.write_text(log.read_text().replace('"openai-completions"', '"anthropic-messages"'))
    rows = run_audit([log]).rows
    assert "provider-best-effort" not in [r.cause for r in rows]
    unmarked = run_audit([_session(tmp_path / "u.jsonl", [(1_106, 0), (1_136, 0), (139, 1_024)])]).rows
    assert "assumed" in unmarked[1].detail and "by default" in unmarked[1].detail


def _capture(path: Path, marked: bool, writes: int) -> Path:
    """An HTTP capture of three chat-completions calls to DashScope, the system part marked or not."""
    system = {"type": "text", "text": "You are a careful coding agent. " * 150}
    if marked:
        system["cache_control"] = {"type": "ephemeral"}
    turns = [{"role": "user", "content": "read main.py"}]
    lines = []
    for n, read in enumerate((0, 0, 1_200)):
        if n:
            turns = [*turns, {"role": "assistant", "content": "ok"}, {"role": "user", "content": f"step {n}"}]
        sent = 1_756_944_000.0 + 20 * n
        details = {"cached_tokens": read, **({"cache_creation_input_tokens": writes} if n < 2 else {})}
        body = {"model": "qwen3-coder-plus", "messages": [{"role": "system", "content": [system]}, *turns]}
        response = {"id": f"c{n}", "object": "chat.completion", "model": "qwen3-coder-plus",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                    "usage": {"prompt_tokens": 1_300 + 10 * n, "completion_tokens": 5, "prompt_tokens_details": details}}
        lines.append({"request": {"timestamp": sent, "method": "POST", "headers": {}, "body": body,
                                  "url": "https://dashscope-intl.aliyuncs.com/compatible-mode/v1/chat/completions"},
                      "response": {"timestamp": sent + 2, "status_code": 200, "headers": {}, "body": response}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_chat_completions_body_marked_on_a_content_part_is_not_the_implicit_cache(tmp_path: Path) -> None:
    """Qwen Code sends DashScope OpenAI-shaped bodies with cache_control on content parts; the
    chat-completions reader read none of them, so a marked call's miss was put down to the
    implicit cache (a request with no cache_control)."""
    marked = run_audit([_capture(tmp_path / "m.jsonl", True, 1_200)]).rows
    assert [r.provider for r in marked] == ["qwen"] * 3
    assert "provider-best-effort" not in [r.cause for r in marked]
    # Unmarked, and writing nothing: the implicit cache, its logged body named as the evidence.
    plain = run_audit([_capture(tmp_path / "p.jsonl", False, 0)]).rows
    assert [r.cause for r in plain][1:] == ["provider-best-effort"] * 2
    assert "its logged body carries no cache_control" in plain[1].detail
    # A body with no marker whose call reported a write was marked (an unmarked call writes no
    # explicit entry): not the implicit cache.
    wrote = run_audit([_capture(tmp_path / "w.jsonl", False, 1_200)]).rows
    assert wrote[1].cause != "provider-best-effort"


def test_a_pi_session_that_never_read_is_still_judged_by_its_api(tmp_path: Path) -> None:
    # No call of the file read, so its writes are taken as logged (0, reported): the API the log
    # names still decides that pi sent no marker (github.com/xiayongchao/pi-demo's parent session).
    rows = run_audit([_session(tmp_path / "q.jsonl", [(1_106, 0), (1_136, 0)])]).rows
    assert [r.cause for r in rows] == ["cold-start", "provider-best-effort"]
    assert "openai-completions, the API its log names" in rows[1].detail
