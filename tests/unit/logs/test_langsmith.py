"""LangSmith runs (workloads/logs/formats/langsmith.py): every shape of export, each place a run's
usage is kept, and what is counted apart.

The runs are written here from LangSmith's Run schema (``langchain-ai/langsmith-sdk``,
``python/langsmith/schemas.py``: ``run_type``, ``prompt_tokens``, ``prompt_token_details``,
``child_runs``, ``dotted_order``), the ``{runs, cursors}`` answer of ``POST /api/v1/runs/query``
and LangChain's ``UsageMetadata`` (``input_tokens`` the sum of all input types, with
``input_token_details`` {``cache_read``, ``cache_creation``}).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext
from prefixbench.workloads.logs.formats.langsmith import detect

CLAUDE = {"ls_provider": "anthropic", "ls_model_name": "claude-sonnet-4-5-20250929"}


def run(rid: str, start: str, **fields) -> dict:
    """One run of ``run_type`` llm unless ``fields`` says otherwise."""
    return {"id": rid, "run_type": "llm", "trace_id": "tr-1", "start_time": start, "status": "success", **fields}


def read(path: Path):
    fmt = detect_format(path)
    assert fmt is FORMATS["langsmith"]
    return import_file(path, fmt, ImportContext())


def test_the_detector_tells_a_run_and_a_runs_query_answer() -> None:
    one = run("r1", "2025-11-01T10:00:00")
    assert detect(one) is Evidence.SHAPE
    assert detect({"runs": [one], "cursors": {}}) is Evidence.WRAPPER
    assert detect({"id": "r1", "run_type": "agent", "start_time": "x"}) is None  # not a LangSmith run type
    assert detect({"id": "r1", "run_type": ["llm"], "start_time": "x"}) is None  # (unhashable: no TypeError)
    assert detect({"run_type": "llm", "start_time": "x"}) is None  # no id
    assert detect({"runs": [{"id": 1}], "cursors": {}}) is None


def test_list_runs_as_json_lines_with_child_runs_sum_field_by_field(tmp_path: Path) -> None:
    # client.list_runs dumped one run a line, under any name; the root run holds its children
    # (read_run with load_child_runs), one of them an llm run; a run repeated on another line is
    # counted once; a failed one is counted apart.
    child = run("c1", "2025-11-01T10:00:01Z", extra={"metadata": {**CLAUDE, "thread_id": "th"}},
                prompt_tokens=5000, completion_tokens=100, prompt_token_details={"cache_read": 4096, "cache_creation": 800})
    root = run("root", "2025-11-01T10:00:00Z", run_type="chain", child_runs=[child, run("t1", "2025-11-01T10:00:02Z", run_type="tool")])
    second = run("c2", "2025-11-01T10:00:03Z", extra={"metadata": {**CLAUDE, "thread_id": "th"}},
                 outputs={"usage_metadata": {"input_tokens": 5200, "output_tokens": 40,
                                             "input_token_details": {"cache_read": 4896, "cache_creation": 300}}})
    failed = run("c3", "2025-11-01T10:00:04Z", error="APIConnectionError", extra={"metadata": CLAUDE})
    path = tmp_path / "runs-export.txt"
    path.write_text("\n".join(json.dumps(r) for r in (root, second, failed, second)) + "\n")
    requests, summary = read(path)
    assert [r.request_id for r in requests] == ["c1", "c2"]
    assert [r.path for r in requests] == ["child_runs[0]", ""]
    assert {r.lane for r in requests} == {"th"} and requests[1].prefix.parent == requests[0].prefix.node
    assert [r.provider for r in requests] == ["anthropic", "anthropic"]
    # By hand: c1 uncached 5000 - 4096 - 800 = 104; c2 5200 - 4896 - 300 = 4.
    assert requests[0].usage == Usage(cache_read=4096, cache_write_5m=800, uncached=104, output=100)
    assert requests[1].usage == Usage(cache_read=4896, cache_write_5m=300, uncached=4, output=40)
    total = [sum(getattr(r.usage, f) for r in requests) for f in ("cache_read", "cache_write_5m", "uncached", "output")]
    assert total == [4096 + 4896, 800 + 300, 104 + 4, 140]
    # Prompt counts summed back: each call's parts add up to the prompt it logged.
    assert [r.usage.cache_read + r.usage.cache_write_5m + r.usage.uncached for r in requests] == [5000, 5200]
    assert [why for _, why in summary.skipped] == ["failed llm run c3: APIConnectionError", "llm run c2 repeated: counted once"]
    assert any("2 chain, tool" in n for n in summary.notes)


def test_raw_provider_usage_and_missing_cache_fields(tmp_path: Path) -> None:
    # Anthropic's own usage in llm_output (additive: input_tokens is the uncached part, the 1-hour
    # write split out); a usage_metadata with no cache detail reports no cache use; a Claude run
    # with reads but no write field has its writes not reported (not 0).
    raw = run("a1", "2025-11-01T10:00:00Z", extra={"metadata": CLAUDE}, outputs={"llm_output": {"usage": {
        "input_tokens": 12, "output_tokens": 7, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 500,
        "cache_creation": {"ephemeral_5m_input_tokens": 200, "ephemeral_1h_input_tokens": 300}}}})
    plain = run("a2", "2025-11-01T10:00:01Z", trace_id="tr-2", extra={"invocation_params": {"model": "gpt-4.1", "ls_provider": "openai"}},
                outputs={"usage_metadata": {"input_tokens": 900, "output_tokens": 3}})
    reads_only = run("a3", "2025-11-01T10:00:02Z", extra={"metadata": CLAUDE}, prompt_tokens=3100, completion_tokens=5,
                     prompt_token_details={"cache_read": 3000})
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([raw, plain, reads_only]))
    requests, summary = read(path)
    assert requests[0].usage == Usage(cache_read=3000, cache_write_5m=200, cache_write_1h=300, uncached=12, output=7)
    assert requests[1].usage == Usage(uncached=900, output=3, cache_reported=False)
    assert (requests[1].provider, requests[1].model) == ("openai", "gpt-4.1")
    assert requests[2].usage == Usage(cache_read=3000, uncached=100, output=5, writes_reported=False)
    assert any("bills cache writes apart" in n for n in summary.notes)


def test_ttl_split_writes_with_cache_creation_zero_are_writes(tmp_path: Path) -> None:
    # langchain-anthropic's _create_usage_metadata moves the writes into the TTL keys and sets
    # cache_creation to 0 (so the total is not counted twice): on the message's usage_metadata
    # and on the run's prompt_token_details LangSmith fills from it, the split is the writes.
    split = {"cache_read": 3000, "cache_creation": 0, "ephemeral_5m_input_tokens": 40, "ephemeral_1h_input_tokens": 500}
    message = {"message": {"kwargs": {"usage_metadata": {"input_tokens": 3560, "output_tokens": 10, "input_token_details": split}}}}
    on_message = run("s1", "2025-11-01T10:00:00Z", extra={"metadata": CLAUDE}, outputs={"generations": [[message]]})
    on_run = run("s2", "2025-11-01T10:00:01Z", extra={"metadata": CLAUDE}, prompt_tokens=3560, completion_tokens=10,
                 prompt_token_details=split)
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([on_message, on_run]))
    requests, _ = read(path)
    want = Usage(cache_read=3000, cache_write_5m=40, cache_write_1h=500, uncached=20, output=10)
    assert [r.usage for r in requests] == [want, want]


def test_bad_runs_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    over = run("b1", "2025-11-01T10:00:00Z", extra={"metadata": CLAUDE}, prompt_tokens=10, completion_tokens=1,
               prompt_token_details={"cache_read": 20})
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(over) + "\n")
    with pytest.raises(UserError, match=r"bad.jsonl:1: run b1: cache reads \(20\) and writes \(0\) exceed"):
        read(path)
    path.write_text(json.dumps(run("b2", "2025-11-01T10:00:00Z", run_type="chain")) + "\n")
    assert main(["audit", "--quiet", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no llm run with token usage" in err[0]


def test_audit_input_langsmith_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    fixtures = Path(__file__).parent / "fixtures"
    assert main(["audit", str(fixtures / "langsmith.json"), "--input", "langsmith", "--quiet"]) == 0
    assert "3 requests" in capsys.readouterr().out
    assert main(["audit", str(fixtures / "langfuse.json"), "--input", "langsmith", "--quiet"]) == 2
    assert main(["audit", str(fixtures / "langsmith.json"), "--input", "langfuse", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "--input langsmith reads it" in err[1]


def test_a_bulk_export_parquet_file_reads_as_its_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A bulk export's Parquet file: JSON text columns, timestamps without zone (UTC), a 16-byte id.
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        {"id": bytes(range(16)), "run_type": "llm", "trace_id": "t", "start_time": datetime(2025, 11, 1, 10, 0, 0),
         "extra": json.dumps({"metadata": CLAUDE}), "error": None, "prompt_tokens": 5000, "completion_tokens": 10,
         "prompt_token_details": json.dumps({"cache_read": 4000, "cache_creation": 900})},
        {"id": bytes(16), "run_type": "chain", "trace_id": "t", "start_time": datetime(2025, 11, 1, 10, 0, 0),
         "extra": None, "error": None, "prompt_tokens": None, "completion_tokens": None, "prompt_token_details": None},
    ]
    folder = tmp_path / "export"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), folder / "part-0.parquet")
    pq.write_table(pa.Table.from_pylist([{"sweep": 1}]), folder / "store.parquet")  # no run columns: not a log
    path = folder / "part-0.parquet"
    requests, summary = read(path)
    assert [(r.request_id, r.line, r.sent_ms, r.provider) for r in requests] == [
        ("00010203-0405-0607-0809-0a0b0c0d0e0f", 1, 1761991200000, "anthropic")]
    assert requests[0].usage == Usage(cache_read=4000, cache_write_5m=900, uncached=100, output=10)
    assert main(["audit", str(folder), "--quiet"]) == 0  # the folder walk offers *.parquet files
    assert "1 request" in capsys.readouterr().out
    (folder / "bad.parquet").write_bytes(b"PAR1 cut short")
    assert main(["audit", str(folder / "bad.parquet"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.parquet: a Parquet file that cannot be read" in err[0]
    # Named directly, a valid Parquet file without the runs' columns is named for what it is (not
    # "binary file"), with or without --input langsmith.
    for extra in ([], ["--input", "langsmith"]):
        assert main(["audit", str(folder / "store.parquet"), "--quiet", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "store.parquet:1: a Parquet file without LangSmith's run columns (id, run_type)" in err[0]


def test_an_empty_runs_query_answer_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 19: a runs query answer of no run said "unknown log format"; it is named in one line
    # (exit 2), as Helicone's empty answer is, with or without --input.
    path = tmp_path / "runs.json"
    path.write_text(json.dumps({"runs": [], "cursors": {"next": None}}))
    for extra in ([], ["--input", "langsmith"]):
        assert main(["audit", str(path), "--quiet", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "runs.json:1: an answer" in err[0] and "with no runs (LangSmith's" in err[0]
    # A bare empty array names no one.
    path.write_text("[]")
    assert main(["audit", str(path), "--quiet"]) == 2
    assert "LangSmith" not in capsys.readouterr().err


def test_usage_metadata_kept_in_the_runs_metadata_is_read(tmp_path: Path) -> None:
    # The SDK's RunTree.set(usage_metadata=...) keeps the usage in extra.metadata.usage_metadata
    # (its wrappers copy it there too); a run dumped with it only there was skipped as having no
    # usage. Hand sums: m1 uncached 5000 - 4608 - 0 = 392, read 4608, out 120; m2 the run's own counts.
    kept = run("m1", "2025-11-01T10:00:00Z", extra={"metadata": {**CLAUDE, "usage_metadata": {
        "input_tokens": 5000, "output_tokens": 120, "total_tokens": 5120, "input_token_details": {"cache_read": 4608, "cache_creation": 0}}}})
    own = run("m2", "2025-11-01T10:00:09Z", extra={"metadata": CLAUDE}, prompt_tokens=700, completion_tokens=9,
              prompt_token_details={"cache_read": 0, "cache_creation": 650})
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (kept, own)))
    requests, _ = read(path)
    assert [r.usage for r in requests] == [Usage(cache_read=4608, uncached=392, output=120),
                                           Usage(cache_write_5m=650, uncached=50, output=9)]
