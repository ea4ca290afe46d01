"""Helicone request logs (workloads/logs/formats/helicone.py): every shape kept, the disjoint
columns, and what is counted apart.

The rows are written here from Helicone's ``HeliconeRequest`` type (``request_id``,
``request_created_at``, ``response_status``, ``prompt_tokens``, ``prompt_cache_read_tokens``,
``prompt_cache_write_tokens``, ``properties``), the ``{data, error}`` answer of
``POST /v1/request/query`` and its cost code (``costOfPrompt``: ``prompt_tokens`` are the uncached
tokens, reads and writes priced apart).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext
from prefixbench.workloads.logs.formats.helicone import detect


def row(rid: str, created: str, **fields) -> dict:
    return {"request_id": rid, "request_created_at": created, "response_status": 200, "provider": "ANTHROPIC",
            "model": "claude-sonnet-4-5-20250929", "properties": {"Helicone-Session-Id": "s"}, **fields}


def read(path: Path):
    fmt = detect_format(path)
    assert fmt is FORMATS["helicone"]
    return import_file(path, fmt, ImportContext())


def test_requests_without_a_session_or_user_are_not_chained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Rows naming no session and no user: two unrelated calls on two models are each a lane of
    # their own, so no model switch is read between them.
    claude = row("r1", "2025-11-01T10:00:00Z", properties={}, prompt_tokens=20, completion_tokens=10,
                 prompt_cache_read_tokens=3000, prompt_cache_write_tokens=0)
    gpt = row("r2", "2025-11-01T10:01:00Z", properties={}, provider="OPENAI", model="gpt-4o", prompt_tokens=464,
              completion_tokens=10, prompt_cache_read_tokens=1536)
    path = tmp_path / "requests.json"
    path.write_text(json.dumps({"data": [claude, gpt], "error": None}))
    requests, summary = read(path)
    assert [r.lane for r in requests] == ["r1", "r2"]
    assert [r.prefix.parent for r in requests] == [None, None]
    assert any("a lane of its own" in n for n in summary.notes)
    assert main(["audit", str(path), "--format", "json", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "model-changed" not in out and "pin-model" not in out


def test_the_detector_tells_a_row_and_an_answer() -> None:
    one = row("r", "2025-11-01T10:00:00Z", prompt_tokens=1)
    assert detect(one) is Evidence.SHAPE
    assert detect({"data": [one], "error": None}) is Evidence.WRAPPER
    assert detect({"data": [one]}) is None  # (not the API's envelope: no error key)
    assert detect({"request_id": "r", "request_created_at": "x"}) is None  # no token column


def test_rows_one_a_line_sum_field_by_field(tmp_path: Path) -> None:
    # Rows one a line under any name: a 1-hour write split out; a row repeated counted once; a row
    # without cache columns reports no cache use; a Claude row with reads but no write column has
    # its writes not reported; an OpenRouter-proxied row: the slug decides the provider.
    first = row("r1", "2025-11-01T10:00:00Z", prompt_tokens=30, completion_tokens=60, prompt_cache_read_tokens=5000,
                prompt_cache_write_tokens=900, prompt_cache_write_1h=600, cost=0.02)
    plain = row("r2", "2025-11-01T10:00:01Z", prompt_tokens=700, completion_tokens=7, properties={}, helicone_user="u")
    reads_only = row("r3", "2025-11-01T10:00:02Z", prompt_tokens=12, completion_tokens=3, prompt_cache_read_tokens=5900)
    routed = row("r4", "2025-11-01T10:00:03Z", provider="OPENROUTER", model="deepseek/deepseek-chat", prompt_tokens=100,
                 completion_tokens=9, prompt_cache_read_tokens=2000, prompt_cache_write_tokens=0)
    path = tmp_path / "export.log"
    path.write_text("\n".join(json.dumps(r) for r in (first, plain, first, reads_only, routed)) + "\n")
    requests, summary = read(path)
    assert [r.request_id for r in requests] == ["r1", "r2", "r3", "r4"]
    assert [r.lane for r in requests] == ["s", "u", "s", "s"]
    assert [r.provider for r in requests] == ["anthropic", "anthropic", "anthropic", "deepseek"]
    assert requests[0].usage == Usage(cache_read=5000, cache_write_5m=300, cache_write_1h=600, uncached=30, output=60)
    assert requests[1].usage == Usage(uncached=700, output=7, cache_reported=False)
    assert requests[2].usage == Usage(cache_read=5900, uncached=12, output=3, writes_reported=False)
    assert requests[3].usage == Usage(cache_read=2000, uncached=100, output=9)
    total = [sum(getattr(r.usage, f) for r in requests) for f in ("cache_read", "cache_write_5m", "cache_write_1h", "uncached", "output")]
    assert total == [5000 + 5900 + 2000, 300, 600, 30 + 700 + 12 + 100, 60 + 7 + 3 + 9]
    assert [why for _, why in summary.skipped] == ["request r1 repeated: counted once"]
    assert any("bills cache writes apart" in n for n in summary.notes)


def test_an_answer_with_no_requests_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The API's answer to a query that matched nothing: one line saying so (exit 2, as for other
    # empty exports), not "unknown log format", with or without --input helicone.
    path = tmp_path / "requests.json"
    path.write_text(json.dumps({"data": [], "error": None}))
    for extra in ([], ["--input", "helicone"]):
        assert main(["audit", str(path), "--quiet", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "requests.json:1: an answer" in err[0] and "with no requests (Helicone's" in err[0]


def test_bad_rows_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row("b1", "2025-11-01T10:00:00Z", prompt_tokens=-3)) + "\n")
    with pytest.raises(UserError, match=r"bad.jsonl:1: request b1"):
        read(path)
    path.write_text(json.dumps(row("b2", "2025-11-01T10:00:00Z", prompt_tokens=3, response_status=500)) + "\n")
    assert main(["audit", "--quiet", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no Helicone request with token counts (1 skipped)" in err[0]


def test_audit_input_helicone_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    fixtures = Path(__file__).parent / "fixtures"
    assert main(["audit", str(fixtures / "helicone.json"), "--input", "helicone", "--quiet"]) == 0
    assert "3 requests" in capsys.readouterr().out
    assert main(["audit", str(fixtures / "openrouter.jsonl"), "--input", "helicone", "--quiet"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize(("name", "answer", "said"), [
    ("helicone.json", {"data": [], "error": None}, "with no requests (Helicone's"),
    ("langfuse.json", {"data": [], "meta": {"page": 1, "limit": 50, "totalItems": 0, "totalPages": 0}}, "with no observations (Langfuse's"),
    ("langsmith.json", {"runs": [], "cursors": {"next": None}}, "with no runs (LangSmith's"),
])
def test_a_folder_walk_skips_an_empty_answer_saying_what_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              name: str, answer: dict, said: str) -> None:
    # Issue 19: a walk skipped an empty answer as "metadata or another tool's file"; it is listed
    # as empty, saying what it is, and the other files are read. A folder of it alone says it.
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / name).write_text(json.dumps(answer))
    assert main(["audit", str(tmp_path / "logs"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no log to audit" in err[0] and said in err[0]
    shutil.copy(Path(__file__).parent / "fixtures" / "helicone.json", tmp_path / "logs" / "requests.json")
    assert main(["audit", str(tmp_path / "logs"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "3 requests" in out
    assert any(f"note ({name}): skipped: an answer" in line and said in line and "(found by the folder walk)" in line
               for line in out.splitlines())
