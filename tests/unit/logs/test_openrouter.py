"""OpenRouter generations (workloads/logs/formats/openrouter.py): every shape kept, the native
counts read OpenAI-shaped, and what is counted apart.

The generations are written here from OpenRouter's ``GET /api/v1/generation`` answer
(openrouter.ai/docs/api/api-reference/generations/get-generation: ``data`` with ``model``,
``provider_name``, ``created_at``, ``latency``, ``tokens_*`` and ``native_tokens_*``) and the
camelCase fields of its TypeScript SDK's ``GenerationResponseData``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext
from prefixbench.workloads.logs.formats.openrouter import detect


def gen(gid: str, created: str, **fields) -> dict:
    return {"id": gid, "model": "anthropic/claude-sonnet-4.5", "provider_name": "Google Vertex", "created_at": created,
            "latency": 800, "finish_reason": "stop", **fields}


def read(path: Path):
    fmt = detect_format(path)
    assert fmt is FORMATS["openrouter"]
    return import_file(path, fmt, ImportContext())


def test_generations_without_a_session_are_not_chained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The generation endpoint's answers seldom name a session or user: two unrelated calls of
    # one file, on two models, are each a lane of its own, so no model switch is read between them.
    claude = gen("g1", "2025-11-01T10:00:00Z", native_tokens_prompt=3520, native_tokens_completion=10, native_tokens_cached=3000)
    gpt = gen("g2", "2025-11-01T10:01:00Z", model="openai/gpt-4o", provider_name="OpenAI", native_tokens_prompt=2000,
              native_tokens_completion=10, native_tokens_cached=1536)
    path = tmp_path / "generations.jsonl"
    path.write_text("\n".join(json.dumps({"data": g}) for g in (claude, gpt)) + "\n")
    requests, summary = read(path)
    assert [r.lane for r in requests] == ["g1", "g2"]
    assert [r.prefix.parent for r in requests] == [None, None]
    assert any("a lane of its own" in n for n in summary.notes)
    assert main(["audit", str(path), "--format", "json", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "model-changed" not in out and "pin-model" not in out


def test_the_detector_tells_a_generation_and_an_answer() -> None:
    one = gen("g", "2025-11-01T10:00:00Z", native_tokens_prompt=10, native_tokens_completion=2)
    assert detect(one) is Evidence.SHAPE
    assert detect({"data": one}) is Evidence.WRAPPER
    assert detect({"data": [one, one]}) is Evidence.WRAPPER
    assert detect({"id": "g", "model": "m", "created_at": "x"}) is None  # no token count
    assert detect({"data": {"id": "g"}}) is None


def test_an_array_of_answers_and_camel_case_sum_field_by_field(tmp_path: Path) -> None:
    # A JSON array of answers (one in the SDK's camelCase), under any name; a generation repeated
    # is counted once; without native counts the normalized ones are read, cache not reported;
    # a Claude generation with a cached count but no cache-creation field: writes not reported.
    first = gen("g1", "2025-11-01T10:00:00Z", native_tokens_prompt=9000, native_tokens_completion=70, native_tokens_cached=8192,
                native_tokens_cache_creation=700, native_tokens_reasoning=20, total_cost=0.01, external_user="u1")
    camel = {"id": "g2", "model": "openai/gpt-4.1", "providerName": "OpenAI", "createdAt": "2025-11-01T10:00:02Z",
             "nativeTokensPrompt": 3000, "nativeTokensCompletion": 10, "nativeTokensCached": 2048, "latency": 400}
    plain = gen("g3", "2025-11-01T10:00:04Z", tokens_prompt=500, tokens_completion=5, external_user="u1")
    reads_only = gen("g4", "2025-11-01T10:00:06Z", native_tokens_prompt=8300, native_tokens_completion=9, native_tokens_cached=8192,
                     external_user="u1", cancelled=True)
    path = tmp_path / "activity.txt"
    path.write_text(json.dumps([{"data": first}, {"data": camel}, {"data": plain}, {"data": reads_only}, {"data": first}]))
    requests, summary = read(path)
    assert [r.request_id for r in requests] == ["g1", "g2", "g3", "g4"]
    assert [r.lane for r in requests] == ["u1", "g2", "u1", "u1"]
    assert [r.path for r in requests] == ["[0].data", "[1].data", "[2].data", "[3].data"]
    assert [r.upstream for r in requests] == ["Google Vertex", "OpenAI", "Google Vertex", "Google Vertex"]
    # By hand: 9000 - 8192 - 700 = 108; 3000 - 2048 = 952; 8300 - 8192 = 108.
    assert requests[0].usage == Usage(cache_read=8192, cache_write_5m=700, uncached=108, output=70)
    assert (requests[1].provider, requests[1].usage) == ("openai", Usage(cache_read=2048, uncached=952, output=10))
    assert requests[2].usage == Usage(uncached=500, output=5, cache_reported=False)
    assert requests[3].usage == Usage(cache_read=8192, uncached=108, output=9, writes_reported=False)
    assert [r.done_ms - r.sent_ms for r in requests] == [800, 400, 800, 800]
    total = [sum(getattr(r.usage, f) for r in requests) for f in ("cache_read", "cache_write_5m", "uncached", "output")]
    assert total == [8192 + 2048 + 8192, 700, 108 + 952 + 500 + 108, 70 + 10 + 5 + 9]
    assert [why for _, why in summary.skipped] == ["generation g1 repeated: counted once"]
    assert any("1 cancelled" in n for n in summary.notes) and any("bills cache writes apart" in n for n in summary.notes)


def test_bad_generations_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(gen("b1", "2025-11-01T10:00:00Z", native_tokens_prompt=10, native_tokens_cached=20)) + "\n")
    # Only the fields the generation has are named (no cache-creation field: no "(0)" for it).
    with pytest.raises(UserError, match=r"bad.jsonl:1: generation b1: native_tokens_cached \(20\) exceeds native_tokens_prompt \(10\)$"):
        read(path)
    path.write_text(json.dumps(gen("b3", "2025-11-01T10:00:00Z", native_tokens_prompt=10, native_tokens_cached=8,
                                   native_tokens_cache_creation=5)) + "\n")
    with pytest.raises(UserError, match=r"generation b3: native_tokens_cached \(8\) and native_tokens_cache_creation \(5\) exceed "):
        read(path)
    path.write_text(json.dumps({"data": gen("b2", "2025-11-01T10:00:00Z", native_tokens_prompt=10, finish_reason="error")}) + "\n")
    assert main(["audit", "--quiet", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no OpenRouter generation with token counts (1 skipped)" in err[0]


def test_audit_input_openrouter_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    fixtures = Path(__file__).parent / "fixtures"
    assert main(["audit", str(fixtures / "openrouter.jsonl"), "--input", "openrouter-generations", "--quiet"]) == 0
    assert "3 requests" in capsys.readouterr().out
    assert main(["audit", str(fixtures / "litellm.jsonl"), "--input", "openrouter", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1


def test_sessionless_generations_are_treated_as_litellm_rows_are(tmp_path: Path) -> None:
    # Like LiteLLM's and Helicone's sessionless calls: a miss at a lane's start says it has no
    # previous call (no "0s idle"), and the lanes table sums them in one row.
    from prefixbench.reports.audit import audit_table
    from prefixbench.workloads.audit.core import run_audit

    calls = [gen(f"g{n}", f"2025-11-01T10:{n:02d}:00Z", model="openai/gpt-4.1", provider_name="OpenAI",
                 native_tokens_prompt=6100, native_tokens_completion=4, native_tokens_cached=0 if n % 3 == 0 else 6016)
             for n in range(6)]
    path = tmp_path / "generations.jsonl"
    path.write_text("\n".join(json.dumps({"data": g}) for g in calls) + "\n")
    result = run_audit([path])
    (missed,) = [r for r in result.rows if r.cause not in (None, "cold-start")]
    assert missed.lane == "g3" and missed.cause == "unexplained" and "no previous call in its lane" in missed.detail
    assert "another lane's call under the same head was sent 1m00s before" in missed.detail
    assert "sessionless calls (6)" in audit_table(result)
