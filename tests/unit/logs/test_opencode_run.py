"""``opencode run --format json`` output, read by the OpenCode format (workloads/logs/formats/opencode.py):
one request per step_finish event, a lane per session, errors and unfinished steps counted apart."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, classify_record, detect_format, import_file
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext
from prefixbench.workloads.logs.formats.opencode import detect
from prefixbench.workloads.logs.records import iter_records
from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, to_json_line, write

RUN = Path(__file__).parent / "fixtures" / "opencode" / "run.jsonl"
FORMAT = FORMATS["opencode"]


def _events() -> list[dict]:
    return [json.loads(line) for line in RUN.read_text().splitlines()]


def _read(path: Path):
    return import_file(path, FORMAT, ImportContext())


def test_run_output_detected_from_content_under_any_name(tmp_path: Path) -> None:
    assert detect_format(RUN) is FORMAT
    renamed = tmp_path / "out.txt"
    renamed.write_bytes(RUN.read_bytes())
    assert detect_format(renamed) is FORMAT
    for record in iter_records(RUN):
        assert detect(record.value) == Evidence.WRAPPER
        assert classify_record(record.value) == "opencode"
        others = [f.name for f in FORMATS.values() if f is not FORMAT and f.detect(record.value) is not None]
        assert others == [], (record.line, others)
    # A stored part (messageID at the top) stays a part, and an event without its part's ids is no event.
    assert detect({"type": "text", "sessionID": "ses_1", "timestamp": 1, "part": {"type": "text"}}) is None


def test_run_totals_field_by_field() -> None:
    requests, summary = _read(RUN)
    usages = [r.usage for r in requests]
    # By hand from the three step_finish events: input 1200 + 15 + 8; output + reasoning
    # (90 + 30) + (48 + 12) + 20; cache read 0 + 19200 + 0; cache write 18000 + 340 + 2100.
    assert len(requests) == 3 == summary.requests
    assert sum(u.uncached for u in usages) == 1223
    assert sum(u.output for u in usages) == 200
    assert sum(u.cache_read for u in usages) == 19200
    assert sum(u.cache_write_5m for u in usages) == 20440
    assert sum(u.cache_write_1h for u in usages) == 0
    assert [u.output for u in usages] == [120, 60, 20]
    assert summary.format == "opencode"
    assert summary.skipped == ((9, "failed call (APIError: Rate limit exceeded)"),)
    assert [r.line for r in requests] == [3, 7, 12]
    assert [r.seq for r in requests] == [0, 1, 2]
    assert [(r.lane, r.lane_kind) for r in requests] == [
        ("main", "main"), ("main", "main"), ("ses_4a1f00000002RunChild", "subagent")
    ]
    # Sent when its step started; the second step continues the first's chain.
    assert [r.sent_ms for r in requests] == [1767100000100, 1767100003700, 1767100020000]
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert [(r.model, r.provider) for r in requests] == [("unknown", "unknown")] * 3
    notes = " ".join(summary.notes)
    assert "names no model" in notes and "provider unknown" in notes
    assert "$0.0794" in notes  # 0.0712 + 0.0082


def test_a_part_that_names_the_model_is_used(tmp_path: Path) -> None:
    events = _events()
    events[0]["part"]["model"] = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}
    path = write(tmp_path / "run.jsonl", b"\n".join(to_json_line(e) for e in events))
    requests, summary = _read(path)
    assert [(r.model, r.provider) for r in requests[:2]] == [("claude-sonnet-4-5", "anthropic")] * 2
    assert requests[2].model == "unknown"  # the child session's parts name none


def test_a_step_cut_off_is_skipped_and_said(tmp_path: Path) -> None:
    events = _events()[:5]  # the second step started, never finished
    path = write(tmp_path / "run.jsonl", b"\n".join(to_json_line(e) for e in events))
    requests, summary = _read(path)
    assert len(requests) == 1
    assert summary.skipped == ((4, "step with no step_finish (no usage recorded: the run ended or was cut)"),)


def test_a_foreign_line_in_run_output_is_one_line(tmp_path: Path) -> None:
    path = write(tmp_path / "run.jsonl", RUN.read_bytes() + b'{"hello": 1}\n')
    with pytest.raises(UserError, match=r"run\.jsonl:13: not an event of `opencode run --format json`"):
        _read(path)


def test_run_audit_ends_cleanly() -> None:
    result = run_audit([RUN])
    assert len(result.rows) == 3


def test_mutated_run_output_ends_cleanly() -> None:
    """Mutated bytes and edited events of run output: one line and exit 2, or a reading."""
    tally = Tally("opencode run", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-opencode-run-"))
    events = _events()

    @fuzz_settings(25)
    @given(
        raw=st.one_of(
            mutated(RUN.read_bytes()),
            st.lists(edited(st.sampled_from(events), max_edits=3), min_size=1, max_size=6).map(
                lambda docs: b"\n".join(map(to_json_line, docs))
            ),
        ),
        explicit=st.booleans(),
    )
    def case(raw: bytes, explicit: bool) -> None:
        path = write(folder / "run.jsonl", raw)
        tally.check(["audit", str(path), "--quiet", *(["--input", "opencode"] if explicit else [])])

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0


#: A real ``opencode run --format json`` output (never copied into the project): its audit's
#: totals equal the sums of its own step_finish events.
REAL_RUN = os.environ.get("PREFIXBENCH_OPENCODE_RUN")


@pytest.mark.skipif(not REAL_RUN, reason="set PREFIXBENCH_OPENCODE_RUN to a saved `opencode run --format json` output")
def test_a_real_run_output_totals_equal_its_own_sums() -> None:
    path = Path(REAL_RUN or "")
    requests, _ = _read(path)
    sums = [0, 0, 0, 0]
    for line in path.read_text().splitlines():
        event = json.loads(line) if line.strip() else {}
        if event.get("type") == "step_finish":
            tokens = event["part"]["tokens"]
            for i, n in enumerate((tokens["input"], tokens["output"] + tokens["reasoning"], tokens["cache"]["read"], tokens["cache"]["write"])):
                sums[i] += n
    assert [sum(r.usage.uncached for r in requests), sum(r.usage.output for r in requests),
            sum(r.usage.cache_read for r in requests), sum(r.usage.cache_write for r in requests)] == sums
