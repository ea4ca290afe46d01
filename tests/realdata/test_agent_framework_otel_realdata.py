"""OpenTelemetry spans of Microsoft Agent Framework (Python), read where they live (a local git copy;
never copied into this project, the test skips without it):

* ``traces.jsonl`` of github.com/Josh-Weston/microsoft-agent-framework-samples at commit
  ``e595bd1cdfd8d79f0fe6729fa33d5a5311b957c8`` (2026-03-02; removed in the next commit): the
  Python SDK's console exporter writing the spans of eleven workflow runs (2026-03-01/02), two
  agents each, on ``openai/gpt-oss-20b:fireworks-ai`` through Hugging Face's router, one object
  after another (most of them twice: once when the span started, once when it ended). From
  ``PREFIXBENCH_AGENT_FRAMEWORK_SAMPLES_REPO`` (default the workplace's mirror).

The framework opens its ``invoke_agent`` span beside its ``chat`` spans (both under the
workflow's executor span), with their summed usage: 22 agent spans over 34 calls. What is
checked, recounted here from the raw spans: each agent span's counts equal the sum of the chat
spans beside it, and the audit counts the chat spans only (before: 56 requests, every token twice).
The provider reports no cache field, so no read is checked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at

REPO = Path(os.environ.get("PREFIXBENCH_AGENT_FRAMEWORK_SAMPLES_REPO", "/work/.mirror/Josh-Weston+microsoft-agent-framework-samples/repo"))
COMMIT = "e595bd1cdfd8d79f0fe6729fa33d5a5311b957c8"
URL, ENV = "github.com/Josh-Weston/microsoft-agent-framework-samples", "PREFIXBENCH_AGENT_FRAMEWORK_SAMPLES_REPO"


def _spans(text: str) -> dict[str, dict]:
    """The file's spans by id, the last print of each (the one written when it ended)."""
    decoder, at, spans = json.JSONDecoder(), 0, {}
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return spans
        span, at = decoder.raw_decode(text, at)
        spans[span["context"]["span_id"]] = span


def test_agent_spans_beside_their_chat_spans_are_not_counted_again(tmp_path: Path) -> None:
    data = file_at(REPO, COMMIT, "traces.jsonl", URL, ENV)
    path = tmp_path / "traces.jsonl"
    path.write_bytes(data)
    spans = _spans(data.decode())
    with_usage = [s for s in spans.values() if "gen_ai.usage.input_tokens" in s["attributes"]]
    chats = [s for s in with_usage if s["attributes"]["gen_ai.operation.name"] == "chat"]
    agents = [s for s in with_usage if s["attributes"]["gen_ai.operation.name"] == "invoke_agent"]
    assert (len(spans), len(chats), len(agents)) == (199, 34, 22)
    for agent in agents:
        beside = [c for c in chats if c["parent_id"] == agent["parent_id"] and agent["start_time"] <= c["start_time"] <= agent["end_time"]]
        assert beside
        for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"):
            assert agent["attributes"][key] == sum(c["attributes"][key] for c in beside)

    result = run_audit([path])
    t = result.totals
    assert t.requests == len(chats) == 34
    assert t.input == sum(c["attributes"]["gen_ai.usage.input_tokens"] for c in chats) == 7309
    assert t.output == sum(c["attributes"]["gen_ai.usage.output_tokens"] for c in chats) == 2410
    assert t.cache_read is None  # no cache attribute: not reported, not 0
    (summary,) = result.files
    assert summary.skipped == len(agents)
