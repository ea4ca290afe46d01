"""Gemini 2.5 Pro's ~4,080-token checkpoints were measured through OpenRouter alone (one Roo Code
task, tests/realdata/test_roo_tasks_realdata.py): the route decides the step, not the name
``google/gemini-2.5-pro``, which Vertex AI's own OpenAI-compatible endpoint requires too. Each
test failed on the code before (checked): the Vertex capture read in 4,080 steps ([0, 0, 0, 0,
12,240])."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.simulator.providers.gemini import RULES
from prefixbench.workloads.audit.core import run_audit

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

