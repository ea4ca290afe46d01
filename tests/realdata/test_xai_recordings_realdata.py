"""Real xAI answers, read where they live: the recordings pydantic-ai's xAI tests replay
(github.com/pydantic/pydantic-ai, ``tests/**/*.xai.yaml`` at commit
``4fda38988f2939fa6ea9cdefcf120693e10ef491``; calls of xAI's gRPC API recorded 2026-01 to 2026-08,
grok-3-fast, grok-3-mini, grok-4-fast, grok-4-1-fast and grok-4.5, each with the request it sent
and the usage it got back), from a local git copy of that repository
(``PREFIXBENCH_PYDANTIC_AI_REPO``, default the workplace's mirror). They are never copied into this
project; the test skips without them.

The recordings are in xAI's own protobuf-as-JSON shape, which no prefixbench reader takes: each
call is made here into a capture line of xAI's chat completions (its messages' text, its tools,
``prompt_tokens_details.cached_tokens`` from ``cached_prompt_text_tokens``) and read by
``http-capture``. Only recordings of plain chat are kept: text messages and client-side tools.
A call that ran server-side tools (web search, code execution, attachment search) counts the
inference steps inside it (its cached count can exceed its prompt), and an image's tokens are
reported outside the text count.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import files_at, git

REPO = Path(os.environ.get("PREFIXBENCH_PYDANTIC_AI_REPO", "/work/.mirror/pydantic+pydantic-ai/repo"))
COMMIT = "4fda38988f2939fa6ea9cdefcf120693e10ef491"
_ROLES = {"ROLE_USER": "user", "ROLE_ASSISTANT": "assistant", "ROLE_TOOL": "tool", "ROLE_SYSTEM": "system", "ROLE_DEVELOPER": "developer"}


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return git(REPO, *args)


def _calls(doc: dict) -> list[tuple[dict, dict]]:
    """(request, answer) of every recorded call that carries usage."""
    out = []
    for interaction in doc.get("interactions") or []:
        request = (interaction.get("request_sample") or {}).get("json")
        answer = (interaction.get("response_sample") or {}).get("json")
        if isinstance(request, dict) and isinstance(answer, dict) and answer.get("usage"):
            out.append((request, answer))
    return out


def _plain(calls: list[tuple[dict, dict]]) -> bool:
    """Text messages and client-side tools only: no server-side tool, no image tokens."""
    for request, answer in calls:
        usage = answer["usage"]
        if usage.get("server_side_tools_used") or usage.get("prompt_image_tokens"):
            return False
        if any(set(part) - {"text"} for m in request.get("messages") or [] for part in m.get("content") or []):
            return False
    return True


def _line(request: dict, answer: dict) -> dict:
    messages = []
    for m in request.get("messages") or []:
        message = {"role": _ROLES[m["role"]], "content": "".join(part["text"] for part in m.get("content") or [])}
        if m.get("tool_calls"):
            message["tool_calls"] = [{"id": c["id"], "type": "function", "function": c["function"]} for c in m["tool_calls"]]
        messages.append(message)
    body: dict = {"model": request["model"], "messages": messages}
    if request.get("tools"):
        body["tools"] = [{"type": "function", "function": t["function"]} for t in request["tools"] if "function" in t]
    usage = answer["usage"]
    # xAI counts reasoning apart from completion_tokens (total = prompt + completion + reasoning).
    shaped = {
        "prompt_tokens": usage.get("prompt_tokens", 0),
        "completion_tokens": usage.get("completion_tokens", 0) + usage.get("reasoning_tokens", 0),
        "prompt_tokens_details": {"cached_tokens": usage.get("cached_prompt_text_tokens", 0)},
    }
    when = answer["created"]
    return {
        "request": {"timestamp": when, "method": "POST", "url": "https://api.x.ai/v1/chat/completions", "body": body},
        "response": {"timestamp": when, "status_code": 200, "body": {"id": answer["id"], "model": answer["model"], "usage": shaped}},
    }


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """The plain-chat recordings as capture files, and the usage each call reported."""
    yaml = pytest.importorskip("yaml")
    listed = files_at(REPO, COMMIT, "github.com/pydantic/pydantic-ai", "PREFIXBENCH_PYDANTIC_AI_REPO")
    folder = tmp_path_factory.mktemp("xai")
    usages = []
    for path in sorted(p for p in listed if p.endswith(".xai.yaml")):
        shown = _git("show", f"{COMMIT}:{path}")
        if shown.returncode != 0:
            continue  # a file the mirror lacks
        calls = _calls(yaml.safe_load(shown.stdout) or {})
        if not calls or not _plain(calls):
            continue
        out = folder / (Path(path).name.removesuffix(".xai.yaml") + ".jsonl")
        out.write_text("".join(json.dumps(_line(request, answer)) + "\n" for request, answer in calls))
        usages.extend(answer["usage"] for _, answer in calls)
    if not usages:
        pytest.skip(f"no xAI recording at {COMMIT[:12]} in {REPO}")
    return folder, usages


def test_xai_recordings_count_what_xai_reported(recordings: tuple[Path, list[dict]]) -> None:
    folder, usages = recordings
    assert len(list(folder.iterdir())) == 27 and len(usages) == 33  # six of the recordings are two calls
    result = run_audit([folder])
    assert {f.format for f in result.files} == {"http-capture"}
    assert {r.provider for r in result.rows} == {"xai"}
    t = result.totals
    assert t.requests == len(usages)
    assert t.cache_read == sum(u["cached_prompt_text_tokens"] for u in usages) == 7_121
    assert t.input + t.cache_read == sum(u["prompt_tokens"] for u in usages) == 9_707  # subset: the read is inside the prompt
    assert (t.cache_write or 0) == 0
    assert t.output == sum(u["completion_tokens"] + u.get("reasoning_tokens", 0) for u in usages)


def test_xai_reads_are_not_whole_blocks(recordings: tuple[Path, list[dict]]) -> None:
    # What these calls tell of xAI's cache: every call read something, the first of each
    # recording too (the same test prompts had been sent before, so the account was warm), 11 of
    # the 33 read the whole prompt but its last token, and only 2 reads are a multiple of 128
    # (3 of 64; reads of 2 and 5 tokens among them). The rules' read step of 128 tokens (the
    # default before these calls were measured) predicts 1 of the 33 within 3%; the default of 1, 8,
    # and 9 since the replayed bodies are counted as xAI counted each prompt (the rest are first
    # calls, which read the account's warm cache of earlier test runs).
    _, usages = recordings
    reads = [u["cached_prompt_text_tokens"] for u in usages]
    assert all(reads)
    assert sum(u["cached_prompt_text_tokens"] == u["prompt_tokens"] - 1 for u in usages) == 11
    assert (sum(r % 128 == 0 for r in reads), sum(r % 64 == 0 for r in reads)) == (2, 3)
    result = run_audit([recordings[0]])
    assert sum(r.read_within for r in result.rows) == 9
