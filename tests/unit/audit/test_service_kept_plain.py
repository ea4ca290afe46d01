"""The service a log names (Azure OpenAI) is one of a request's rare fields: a request that sets
it is kept whole by :func:`~prefixbench.workloads.logs.trace.plain`, in this process and as a
worker of ``--jobs 2`` sends it back. Dropping the field from plain()'s test survived every test."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.logs.trace import PLAIN_TYPES, TraceRequest, plain
from prefixbench.workloads.runs.execute import map_runs
from tests.unit.audit.test_relay_wording import _rollout


def test_plain_keeps_a_request_naming_its_service() -> None:
    r = TraceRequest("f.jsonl", 3, "main", "main", 0, None, None, "openai", "gpt-5.1", service="Azure OpenAI")
    assert plain(r) is r and plain(r, usage=False) is r
    assert type(plain(TraceRequest("f.jsonl", 3, "main", "main", 0, None, None, "openai", "gpt-5.1"))) in PLAIN_TYPES


def test_the_service_survives_a_read_in_workers(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    paths = [_rollout(tmp_path / "logs" / f"{n}" / "rollout.jsonl", "azure") for n in (1, 2)]
    paths[1].write_text(paths[1].read_text().replace('"id": "s"', '"id": "s2"').replace('"output_tokens": 50', '"output_tokens": 60'))  # (another session)
    inline = load_trace(paths)
    parallel = load_trace(paths, map_files=functools.partial(map_runs, jobs=2))
    assert {r.service for r in parallel[0]} == {"Azure OpenAI"} and len(parallel[0]) == 12
    assert parallel == inline
    outputs = []
    for jobs in ("1", "2"):
        assert main(["audit", str(tmp_path / "logs"), "--jobs", jobs, "--format", "json"]) == 0
        outputs.append(capfd.readouterr().out)
    assert outputs[0] == outputs[1]
    assert any("went to Azure OpenAI" in n for n in json.loads(outputs[1])["notes"])
