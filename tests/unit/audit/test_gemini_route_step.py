"""Gemini 2.5 Pro's ~4,080-token checkpoints were measured through OpenRouter alone (one Roo Code
task, tests/realdata/test_roo_tasks_realdata.py): the route decides the step, not the name
``google/gemini-2.5-pro``, which Vertex AI's own OpenAI-compatible endpoint requires too. And a
2.5 lane that has read nothing yet reads nothing whatever checkpoint step the model has, a head
of known size included; those requests are counted in the follow note. Each test failed on the
code before (checked): the Vertex capture read in 4,080 steps ([0, 0, 0, 0, 12,240]), the second
session predicted 8,160 then 12,240, and the note was missing."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import msgspec

from prefixbench.simulator.providers.gemini import RULES
from prefixbench.workloads.audit.core import load_trace, run_audit

VERTEX = "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/endpoints/openapi/chat/completions"
OPENROUTER = "https://openrouter.ai/api/v1/chat/completions"


def _capture(path: Path, url: str) -> Path:
    """Five chat-completions calls of google/gemini-2.5-pro, each extending the previous one's
    messages, every read reported 0."""
    lines, messages = [], [{"role": "system", "content": "s " * 6000}]
    for i in range(5):
        messages = [*messages, {"role": "user", "content": f"q{i} " + "w " * (2000 + 500 * i)}]
        usage = {"prompt_tokens": 8000 + 2600 * i, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 0}}
        lines.append({"request": {"url": url, "method": "POST", "timestamp": 1755635332.0 + 30 * i,
                                  "body": {"model": "google/gemini-2.5-pro", "messages": list(messages)}},
                      "response": {"status_code": 200, "timestamp": 1755635333.0 + 30 * i, "body": {
                          "model": "google/gemini-2.5-pro", "usage": usage,
                          "choices": [{"message": {"role": "assistant", "content": "ok"}}]}}})
        messages = [*messages, {"role": "assistant", "content": "ok"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_the_4080_step_is_openrouters_not_the_names() -> None:
    assert RULES.read_step("google/gemini-2.5-pro") == 1
    assert RULES.route_step("openrouter", "google/gemini-2.5-pro") == 4080
    # Unmeasured names, and other routes, read to the token.
    assert RULES.route_step("openrouter", "google/gemini-2.5-pro-preview-05-06") == 0
    assert RULES.route_step("openrouter", "google/gemini-2.5-pro-exp-03-25") == 0
    assert RULES.route_step("kilocode", "google/gemini-2.5-pro") == 0
    assert RULES.route_step("", "google/gemini-2.5-pro") == 0


def test_vertex_ai_s_own_endpoint_reads_to_the_token(tmp_path: Path) -> None:
    vertex = run_audit([_capture(tmp_path / "vertex.jsonl", VERTEX)]).rows
    assert [r.predicted_cache_read for r in vertex] == [0, 0, 10_598, 13_198, 15_798]
    through = run_audit([_capture(tmp_path / "openrouter.jsonl", OPENROUTER)]).rows
    assert [r.predicted_cache_read for r in through] == [0, 0, 0, 0, 12_240]
    assert all(r.predicted_cache_read % 4080 == 0 for r in through)


def _session(path: Path, session: str, calls: list[tuple[str, int, int]]) -> Path:
    """A Gemini CLI JSON session ``session``: one user turn, then a model message per ``(model,
    prompt, cached)``, 3 s apart."""
    zero = datetime(2025, 11, 7, 3, tzinfo=timezone.utc)
    start = "2025-11-07T03:00:00.000Z"
    messages: list[dict] = [{"id": "u", "timestamp": start, "type": "user", "content": "go"}]
    for i, (model, prompt, cached) in enumerate(calls):
        sent = (zero + timedelta(seconds=3 * i + 1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        messages.append({"id": f"m{i}", "timestamp": sent, "type": "gemini", "content": "ok", "model": model,
                         "tokens": {"input": prompt, "output": 20, "cached": cached, "thoughts": 5, "tool": 0,
                                    "total": prompt + 25}})
    path.write_text(json.dumps({"sessionId": session, "projectHash": "h", "startTime": start, "lastUpdated": start,
                                "messages": messages}))
    return path


def test_a_2_5_lane_on_a_grid_with_a_sized_head_reads_nothing_until_it_has_read(tmp_path: Path) -> None:
    # Session a reads 8,160 at its start (the head's size); session b reads 0 three times. On a
    # 4,080 grid (--read-step's way) b's second and third calls were predicted the head (8,160),
    # then 12,240: the head-checkpoint rule ran before unread_until_read.
    model = "gemini-2.5-pro"
    a = _session(tmp_path / "a.json", "a", [(model, 10_000, 8_160)])
    b = _session(tmp_path / "b.json", "b", [(model, 10_000, 0), (model, 13_000, 0), (model, 17_000, 0)])
    requests, files = load_trace([a, b])
    stepped = [msgspec.structs.replace(r, read_step=4080) for r in requests]
    rows = run_audit([a, b], trace=(stepped, files)).rows
    assert [r.predicted_cache_read for r in rows if r.file.endswith("b.json")] == [0, 0, 0]
    off = run_audit([a, b], trace=(stepped, files), follow_reads=False).rows
    assert [r.predicted_cache_read for r in off if r.file.endswith("b.json")] == [0, 8_160, 12_240]


def test_the_follow_note_counts_the_requests_predicted_unread_until_read(tmp_path: Path) -> None:
    # The only change --no-follow-reads makes here is that rule's (13,000 -> 0 and 10,000 -> 0):
    # the note counts those two requests.
    model = "gemini-2.5-pro"
    a = _session(tmp_path / "a.json", "a", [(model, 10_000, 8_160)])
    b = _session(tmp_path / "b.json", "b", [(model, 10_000, 0), (model, 13_000, 0), (model, 17_000, 0)])
    result = run_audit([a, b])
    assert [r.predicted_cache_read for r in result.rows if r.file.endswith("b.json")] == [0, 0, 0]
    assert [r.predicted_cache_read for r in run_audit([a, b], follow_reads=False).rows
            if r.file.endswith("b.json")] == [0, 10_000, 13_000]
    assert any(n.startswith("reads predicted to keep to the checkpoint") and "(gemini: 2 request(s))" in n
               for n in result.notes)
