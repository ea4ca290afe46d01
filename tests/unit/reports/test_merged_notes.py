"""A note said alike of several files is printed once, ``note (N files): ...``. One that holds a
figure read as a total then: three Claude Code sessions, one relayed call each, printed
``note (3 files): claude-opus-4-6: 1 call(s) here read as through a relay ...``, one call in all
to the eye, three in fact. Such a note is said of each file; one without a figure reads as before."""

from __future__ import annotations

from pathlib import Path

from prefixbench.reports.audit import audit_table
from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

MODEL = "claude-opus-4-6"


def _session(path: Path, call_id: str) -> Path:
    """One call whose message id is of no shape a maker writes (``msg_`` and 16 hex digits): a relay's."""
    t = Transcript(version="2.1.177")
    t.user("hello", "2026-09-10T02:00:00.000Z", root=True)
    t.assistant(call_id, "2026-09-10T02:00:03.000Z", [cc_usage(3, 21_000, 0, 40)], model=MODEL)
    return write_jsonl(path, t.lines)


def test_a_note_with_a_count_merged_across_files_says_it_is_each_files(tmp_path: Path) -> None:
    paths = [_session(tmp_path / f"s{n}.jsonl", f"18c39a43412ef20{n}") for n in range(3)]
    result = run_audit(paths)
    notes = [line for line in audit_table(result).splitlines() if line.startswith("note (")]
    relayed = [line for line in notes if "call(s) here read as through a relay" in line]
    assert [line.split(": ", 1)[0] for line in relayed] == ["note (each of 3 files)"], notes
    assert f"{MODEL}: 1 call(s) here" in relayed[0]
    # A merged note with no figure in it (a model's version is none) keeps its words.
    plain = [line for line in notes if "files)" in line and line not in relayed]
    assert plain and all(line.startswith("note (3 files): ") for line in plain), notes
