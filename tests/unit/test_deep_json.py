"""JSON nested past the parser's depth, where a reader parses text it was handed (a captured
body kept as a string, SSE data, a results file, a model's tool arguments): one clear line or
the record skipped, never a RecursionError traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.kernel.engines.ranges_compress import CompressArgumentsError, parse_compress_arguments
from prefixbench.reports.cli import main

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("response", [
    {"status_code": 200, "body_raw": "data: " + DEEP + "\n\n"},  # a Responses stream
    {"status_code": 200, "body": DEEP},  # a body kept as text
])
def test_a_captured_openai_answer_nested_too_deep_is_no_usage(tmp_path: Path, response: dict, capsys: pytest.CaptureFixture[str]) -> None:
    line = {"request": {"url": "https://api.openai.com/v1/responses", "body": {"model": "gpt-5", "input": "hi"}}, "response": response}
    (tmp_path / "c.jsonl").write_text(json.dumps(line) + "\n")
    assert main(["audit", str(tmp_path / "c.jsonl"), "--quiet", "--format", "json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # The call skipped (no usage in the answer), so nothing is left to audit: one line saying so.
    assert len(err) == 1 and err[0].startswith("prefixbench: error: nothing to audit:") and "c.jsonl:1: " in err[0]


def test_a_results_file_nested_too_deep_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"runs": ' + DEEP + "}")
    assert main(["compare", str(path), str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nested too deep" in err[0] and str(path) in err[0]


def test_compress_arguments_nested_too_deep_are_refused() -> None:
    with pytest.raises(CompressArgumentsError, match="nested too deep"):
        parse_compress_arguments('{"ranges": ' + DEEP + "}")


@pytest.mark.parametrize(("value", "said"), [
    ("[" * 5_000 + "]" * 5_000, "(nested too deep)"),
    ("9" * 5_000, "for integer string conversion: value has 5000 ...)"),  # cut at a word, not inside one
])
def test_a_log_line_the_reader_refuses_says_why_in_whole_words(tmp_path: Path, value: str, said: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"type": "user", "x": ' + value + "}\n")
    assert main(["audit", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"prefixbench: error: {path}:1: JSON this reader refuses (") and err[0].endswith(said)
