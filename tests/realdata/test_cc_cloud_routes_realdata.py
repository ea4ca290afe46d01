"""Claude Code on Amazon Bedrock and Google Vertex AI, read where the transcripts live (a local git
copy; never copied into this project, each test skips without it): does the audit read these
routes' Claude calls as Anthropic's, its cache rules applying, now that a Claude model's unsplit
writes can mark a relay (``docs/formats.md``)?

Claude Code on these routes logs the model's plain name (``claude-opus-4-6``), not the cloud's id
(``us.anthropic.claude-opus-4-6-v1``); the message ids tell the route: ``msg_bdrk_...`` (Bedrock),
``msg_vrtx_...`` (Vertex AI). No new public source of either was found for this file (committed
homes and ``claude-session.jsonl`` files searched, 2026-12-06), nor any Claude Code transcript
through a gateway (OpenRouter, LiteLLM) with a Claude model; the two below are already audited
elsewhere (``test_public_sessions_realdata.py``, ``test_dotfile_homes_realdata.py``) and read here
for the route alone:

* github.com/ikihin/bhavana (``6961556e0e178af2ec856b21918c961199d866b8``): ``claude-session.jsonl``,
  Claude Code 2.1.177, claude-opus-4-6 on Bedrock. From ``PREFIXBENCH_CC_BHAVANA_REPO``.
* github.com/SudarshanVK/dotfiles (``c47592c89a024a6e7a9fb50ea13eb64cda7e3a03``): two transcripts
  of Claude Code 2.1.112 (2026-04), claude-haiku-4-5 on Bedrock in one (27 calls), a claude-opus-4-7
  call on Vertex AI beside claude-sonnet-4-6 on Anthropic in the other. From
  ``PREFIXBENCH_SUDARSHAN_REPO``.

Every write on both routes is split by TTL (5-minute), as Anthropic's API splits it; the audit
reads every call as Anthropic's and says nothing of a relay. Totals are the logs' own sums,
counted here from the raw lines.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at

BHAVANA_URL, BHAVANA_ENV = "github.com/ikihin/bhavana", "PREFIXBENCH_CC_BHAVANA_REPO"
BHAVANA = Path(os.environ.get(BHAVANA_ENV, "/work/.mirror/ikihin+bhavana/repo"))
BHAVANA_COMMIT = "6961556e0e178af2ec856b21918c961199d866b8"

SUDARSHAN_URL, SUDARSHAN_ENV = "github.com/SudarshanVK/dotfiles", "PREFIXBENCH_SUDARSHAN_REPO"
SUDARSHAN = Path(os.environ.get(SUDARSHAN_ENV, "/work/.mirror/SudarshanVK+dotfiles/repo"))
SUDARSHAN_COMMIT = "c47592c89a024a6e7a9fb50ea13eb64cda7e3a03"
SUDARSHAN_BEDROCK = ".claude/projects/-Users-sudarshanv-Documents-code-production-mac-identity-mapper/8d14d234-a464-4b56-9c09-38e5b2608c54.jsonl"
SUDARSHAN_VERTEX = ".claude/projects/-Users-sudarshanv-Documents-code-production-infrahub-resources/6f08e152-7e83-46df-99a7-cc470fc8c103.jsonl"

_COUNTS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _calls(path: Path) -> dict[tuple, dict]:
    """Each call of a transcript, by (requestId, message id): its message, the last line's."""
    last: dict[tuple, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line) if line.strip() else {}
        message = entry.get("message")
        if entry.get("type") == "assistant" and isinstance(message, dict) and message.get("usage") \
                and message.get("model") != "<synthetic>":
            last[(entry.get("requestId"), message.get("id"))] = message
    return last


def _route(message: dict) -> str:
    """The route a call's message id names."""
    ident = str(message.get("id"))
    return "bedrock" if ident.startswith("msg_bdrk_") else "vertex" if ident.startswith("msg_vrtx_") else "anthropic"


def _sums(calls: dict[tuple, dict]) -> tuple[int, ...]:
    usages = [m["usage"] for m in calls.values() if any(m["usage"].get(k) for k in _COUNTS)]
    return (len(usages), *(sum(u.get(k) or 0 for u in usages) for k in _COUNTS))


def _unsplit(calls: dict[tuple, dict]) -> int:
    """Calls whose writes are not split by TTL."""
    def split(u: dict) -> int:
        parts = u.get("cache_creation") or {}
        return (parts.get("ephemeral_5m_input_tokens") or 0) + (parts.get("ephemeral_1h_input_tokens") or 0)
    return sum(1 for m in calls.values() if (m["usage"].get("cache_creation_input_tokens") or 0) != split(m["usage"]))


def _audit(repo: Path, commit: str, where: str, url: str, env: str, tmp_path: Path):
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(file_at(repo, commit, where, url, env))
    return path, run_audit([path])


def _no_relay(result) -> None:
    notes = [n for f in result.files for n in f.notes]
    assert not [n for n in notes if "unknown provider's" in n or "read as Anthropic's" in n]


def test_claude_code_on_bedrock_opus_reads_as_anthropic_s(tmp_path: Path) -> None:
    path, result = _audit(BHAVANA, BHAVANA_COMMIT, "claude-session.jsonl", BHAVANA_URL, BHAVANA_ENV, tmp_path)
    calls = _calls(path)
    assert Counter((_route(m), m["model"]) for m in calls.values()) == {("bedrock", "claude-opus-4-6"): 89}
    assert _unsplit(calls) == 0
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == _sums(calls) == (
        89, 129, 55_999, 6_410_533, 342_491)
    assert Counter((r.provider, r.model) for r in result.rows) == {("anthropic", "claude-opus-4-6"): 89}
    _no_relay(result)
    assert sum(f.read_within for f in result.files) == 89


def test_claude_code_on_bedrock_haiku_reads_as_anthropic_s(tmp_path: Path) -> None:
    path, result = _audit(SUDARSHAN, SUDARSHAN_COMMIT, SUDARSHAN_BEDROCK, SUDARSHAN_URL, SUDARSHAN_ENV, tmp_path)
    calls = _calls(path)
    assert Counter((_route(m), m["model"]) for m in calls.values()) == {("bedrock", "claude-haiku-4-5-20251001"): 27}
    assert _unsplit(calls) == 0
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == _sums(calls) == (
        27, 4_882, 24_364, 1_657_387, 84_191)
    assert Counter((r.provider, r.model) for r in result.rows) == {("anthropic", "claude-haiku-4-5-20251001"): 27}
    _no_relay(result)
    assert sum(f.read_within for f in result.files) == 26


def test_claude_code_on_vertex_reads_as_anthropic_s(tmp_path: Path) -> None:
    path, result = _audit(SUDARSHAN, SUDARSHAN_COMMIT, SUDARSHAN_VERTEX, SUDARSHAN_URL, SUDARSHAN_ENV, tmp_path)
    calls = _calls(path)
    assert Counter((_route(m), m["model"]) for m in calls.values()) == {
        ("vertex", "claude-opus-4-7"): 1, ("anthropic", "claude-sonnet-4-6"): 4}
    assert _unsplit(calls) == 0
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == _sums(calls) == (5, 11, 414, 115_845, 90_396)
    assert Counter((r.provider, r.model) for r in result.rows) == {
        ("anthropic", "claude-opus-4-7"): 1, ("anthropic", "claude-sonnet-4-6"): 4}
    _no_relay(result)
    assert sum(f.read_within for f in result.files) == 5
