"""Real DeepSeek API calls, read where they live: the VCR cassettes pydantic-ai's DeepSeek tests
replay (github.com/pydantic/pydantic-ai, ``tests/models/cassettes/test_deepseek/`` and
``test_deepseek_responses/`` at commit ``4fda38988f2939fa6ea9cdefcf120693e10ef491``; calls to
``api.deepseek.com/chat/completions`` recorded 2025-04 to 2026-06 and to its Responses endpoint
``api.deepseek.com/responses`` recorded 2026-08, each with the request body it sent and the answer,
usage included), from a local git copy of that repository (``PREFIXBENCH_PYDANTIC_AI_REPO``,
default the workplace's mirror). They are never copied into this project; the test skips without
them.

Each cassette is made here into a capture file, one line a call (the body, and the answer as a
JSON body or, for a stream, ``body_raw``), timed at the answer's own ``created`` /
``created_at``, and the folder is read by ``http-capture``.

Beside them, DeepSeek V4 through a gateway: Crush's agent tests on Charm's ``hyper.charm.land``
(github.com/charmbracelet/crush, ``internal/agent/testdata/TestCoderAgent/deepseek-v4/`` at commit
``e5023c5757923debdcac26a557558a46a328db9a``, recorded 2026-08-19; ``PREFIXBENCH_CRUSH_REPO``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import files_at, git

REPO = Path(os.environ.get("PREFIXBENCH_PYDANTIC_AI_REPO", "/work/.mirror/pydantic+pydantic-ai/repo"))
COMMIT = "4fda38988f2939fa6ea9cdefcf120693e10ef491"
FOLDERS = ("tests/models/cassettes/test_deepseek/", "tests/models/cassettes/test_deepseek_responses/")
_CREATED = re.compile(r'"created(?:_at)?":(\d+)')


def _usage(line: dict) -> dict | None:
    """The usage the answer reported: its JSON body's, else the stream's last."""
    response = line["response"]
    if isinstance(response.get("body"), dict):
        return response["body"].get("usage")
    found = None
    for event in (response.get("body_raw") or "").splitlines():
        if event.startswith("data: {"):
            data = json.loads(event[len("data: "):])
            found = data.get("usage") or (data.get("response") or {}).get("usage") or found
    return found


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """The cassettes as capture files, and every call's line."""
    yaml = pytest.importorskip("yaml")
    listed = files_at(REPO, COMMIT, "github.com/pydantic/pydantic-ai", "PREFIXBENCH_PYDANTIC_AI_REPO")
    folder = tmp_path_factory.mktemp("deepseek")
    every = []
    for n, path in enumerate(sorted(p for p in listed if p.startswith(FOLDERS) and p.endswith(".yaml"))):
        lines = []
        for interaction in yaml.safe_load(git(REPO, "show", f"{COMMIT}:{path}").stdout)["interactions"]:
            request, response = interaction["request"], interaction["response"]
            answer = response.get("parsed_body")
            raw = None if isinstance(answer, dict) else (response.get("body") or {}).get("string")
            created = (answer.get("created") or answer.get("created_at")) if isinstance(answer, dict) else None
            if created is None and raw and _CREATED.search(raw):
                created = int(_CREATED.search(raw).group(1))
            kept: dict = {"timestamp": created, "status_code": response["status"]["code"],
                          "headers": {"content-type": (response["headers"].get("content-type") or ["application/json"])[0]}}
            kept["body" if isinstance(answer, dict) else "body_raw"] = answer if isinstance(answer, dict) else raw
            lines.append({"request": {"timestamp": created, "method": request["method"], "url": request["uri"],
                                      "body": request["parsed_body"]}, "response": kept})
        (folder / f"{n:02d}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        every.extend(lines)
    if not every:
        pytest.skip(f"no DeepSeek cassette under {FOLDERS} at {COMMIT[:12]} in {REPO}")
    return folder, every


def test_deepseek_calls_count_what_deepseek_reported(captured: tuple[Path, list[dict]]) -> None:
    folder, lines = captured
    used = [u for u in map(_usage, lines) if u]
    assert len(lines) == 20 and len(used) == 19  # one call answered HTTP 400, without usage
    result = run_audit([folder])
    assert {f.format for f in result.files} == {"http-capture"}
    assert sum(dict(f.skip_reasons).get("HTTP 400: not served, neither read nor written", 0) for f in result.files) == 1
    t = result.totals
    assert t.requests == 19
    assert {r.provider for r in result.rows} == {"deepseek"}
    chat = [u for u in used if "prompt_tokens" in u]
    responses = [u for u in used if "input_tokens" in u]
    assert (len(chat), len(responses)) == (5, 14)
    # Chat completions: hit + miss = prompt_tokens; the Responses endpoint counts the cached
    # part inside input_tokens, as OpenAI's does. Subset both ways.
    assert all(u["prompt_cache_hit_tokens"] + u["prompt_cache_miss_tokens"] == u["prompt_tokens"] for u in chat)
    reads = sum(u["prompt_cache_hit_tokens"] for u in chat) + sum(u["input_tokens_details"]["cached_tokens"] for u in responses)
    prompts = sum(u["prompt_tokens"] for u in chat) + sum(u["input_tokens"] for u in responses)
    assert (t.cache_read, t.input + t.cache_read, t.cache_write) == (reads, prompts, None) == (3_328, 5_654, None)  # no write count
    assert t.output == sum(u["completion_tokens"] for u in chat) + sum(u["output_tokens"] for u in responses) == 1_793


def test_deepseek_v4_reads_whole_128_token_units(captured: tuple[Path, list[dict]]) -> None:
    folder, _ = captured
    result = run_audit([folder])
    reads = sorted(r.reported_cache_read for r in result.rows if r.reported_cache_read)
    # Every read is whole 128-token units, in both endpoints' answers (the calls of 2025, on
    # deepseek-reasoner before V4, read nothing).
    assert reads == [128, 128, 128, 256, 256, 256, 384, 384, 512, 896]
    assert all(n % 128 == 0 for n in reads)
    # 12 of 19 predicted within 3% (8 when a unit at a message end was read to its token: 410,
    # 408 and 151 where DeepSeek read 384, 384 and 128; whole units since). Four lane starts read
    # a head another recording cached; a reasoner follow-up that read 896 is predicted 768 (its
    # unit's end estimated at 880 of DeepSeek's tokens, a step below).
    assert sum(f.read_within for f in result.files) == 12


#: Crush's agent tests on DeepSeek V4 through Charm's own gateway (``hyper.charm.land``), recorded
#: 2026-08-19 (github.com/charmbracelet/crush, 13 cassettes, the commit that added them).
CRUSH = Path(os.environ.get("PREFIXBENCH_CRUSH_REPO", "/work/.mirror/charmbracelet+crush/repo"))
CRUSH_COMMIT = "e5023c5757923debdcac26a557558a46a328db9a"
CRUSH_FOLDER = "internal/agent/testdata/TestCoderAgent/deepseek-v4/"


def test_deepseek_v4_through_charms_gateway_reads_to_the_token_and_is_priced(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    listed = files_at(CRUSH, CRUSH_COMMIT, "github.com/charmbracelet/crush", "PREFIXBENCH_CRUSH_REPO")
    usages = []
    for n, path in enumerate(sorted(p for p in listed if p.startswith(CRUSH_FOLDER))):
        lines = []
        for interaction in yaml.safe_load(git(CRUSH, "show", f"{CRUSH_COMMIT}:{path}").stdout)["interactions"]:
            request, response = interaction["request"], interaction["response"]
            if not request["url"].endswith("/chat/completions"):
                continue
            created = int(_CREATED.search(response["body"]).group(1))
            lines.append({"request": {"timestamp": created, "method": "POST", "url": request["url"], "body": json.loads(request["body"])},
                          "response": {"timestamp": created + 1, "status_code": response["code"],
                                       "headers": {"content-type": "text/event-stream"}, "body_raw": response["body"]}})
            usages.append(_usage(lines[-1]))
        (tmp_path / f"{n:02d}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    if not usages:
        pytest.skip(f"no cassette under {CRUSH_FOLDER} at {CRUSH_COMMIT[:12]} in {CRUSH}")
    assert len(usages) == 53
    result = run_audit([tmp_path])
    t = result.totals
    assert t.requests == 53
    assert t.input + t.cache_read == sum(u["prompt_tokens"] for u in usages)
    assert t.cache_read == sum((u.get("prompt_tokens_details") or {}).get("cached_tokens", 0) for u in usages) == 99_875
    assert {r.model for r in result.rows} == {"deepseek-v4-flash-0731", "deepseek-v4-pro-0813"}
    # Priced as their models (the dated ids are aliases): no request left without dollars.
    assert not any("no price" in note for note in result.notes)
    # The gateway leaves prompt_tokens_details out when nothing was read: 42 calls say nothing
    # of the cache. The 11 that read did so to the token (six of them the previous call's prompt
    # less one token), not in the 128-token units of DeepSeek's own API; all 11 within 3%.
    reads = [r for r in result.rows if r.reported_cache_read is not None]
    assert len(reads) == 11 and sum(r.reported_cache_read % 128 != 0 for r in reads) == 10
    assert sum(r.read_within for r in reads) == 11
