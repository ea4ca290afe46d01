"""``audit --out`` lands the whole set or nothing, and cleans up after a killed audit (issue 23).

An audit is stopped at every named point of its landing (:func:`prefixbench.reports.outdir.landing_point`),
as a ``kill -9`` there would: the folder holds the earlier audit's files or the new ones, never
a mix once the next command has completed what it finds, and no staging folder stays.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from prefixbench.reports.outdir import JOURNAL, LOCK, STOP_AT, complete_landing
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks an audit to stop it")

FILES = ["audit.csv", "audit.json", "audit.md", "audit.png", "report.html"]
#: The points of a landing into a folder that holds other files too (journal, links, one rename).
JOURNALED = ["staged", "journaled", "linked", "landed:.tables", "removed", "landed"]


def session(folder: Path, idle_minutes: int) -> Path:
    """A three-request transcript; the idle time decides whether the third one missed."""
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    t.user("result", "2025-09-03T00:00:03.000Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:05.000Z", [cc_usage(3, 200, 15000, 9)])
    t.user("next", f"2025-09-03T00:{idle_minutes:02d}:00.000Z")
    t.assistant("r3", f"2025-09-03T00:{idle_minutes:02d}:03.000Z", [cc_usage(3, 15300, 0, 9)])
    return write_jsonl(folder / "s1.jsonl", t.lines)


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    """Two logs whose audits differ, and the files the second one's audit writes."""
    first, second = session(tmp_path / "first", 1), session(tmp_path / "second", 20)
    assert main(["audit", str(second), "--out", str(tmp_path / "reference"), "--quiet"]) == 0
    return first, second, files(tmp_path / "reference")


def audit_stopped_at(point: str, log: Path, out: Path) -> None:
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.environ[STOP_AT] = point
            main(["audit", str(log), "--out", str(out), "--quiet"])
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 137  # it got there, and stopped there


def staging_left(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(".audit-")]


def test_a_killed_audits_staging_is_removed_by_the_next_audit(tmp_path, logs, capsys):
    _, second, reference = logs
    out = tmp_path / "out"
    audit_stopped_at("staged", second, out)
    assert not out.exists() and len(staging_left(tmp_path)) == 1  # the files were staged, not landed
    assert main(["audit", str(second), "--out", str(out), "--quiet"]) == 0
    assert staging_left(tmp_path) == [] and files(out) == reference


@pytest.mark.parametrize("point", ["staged", "landed"])
def test_an_audit_over_its_own_earlier_out_swaps_the_whole_set_at_once(tmp_path, logs, point):
    first, second, reference = logs
    out = tmp_path / "out"
    assert main(["audit", str(first), "--out", str(out), "--quiet"]) == 0
    earlier = files(out)
    assert earlier != reference
    audit_stopped_at(point, second, out)
    assert files(out) == (earlier if point == "staged" else reference)  # one or the other, whole
    assert main(["audit", str(second), "--out", str(out), "--quiet"]) == 0
    assert staging_left(tmp_path) == [] and files(out) == reference


@pytest.mark.parametrize("point", JOURNALED)
def test_an_audit_into_a_shared_folder_stopped_at_each_point_never_mixes(tmp_path, logs, point):
    first, second, reference = logs
    out = tmp_path / "out"
    assert main(["audit", str(first), "--out", str(out), "--quiet"]) == 0
    (out / "notes.txt").write_text("mine")  # a folder shared with other files: files land one by one
    earlier = files(out)
    audit_stopped_at(point, second, out)
    # As the stop left it: the earlier set or the new one, whole, never a mix.
    now = {k: v for k, v in files(out).items() if k not in (LOCK, JOURNAL)}
    decided = JOURNALED.index(point) >= JOURNALED.index("landed:.tables")
    assert now == ({**reference, "notes.txt": b"mine"} if decided else earlier)
    if JOURNALED.index(point) < JOURNALED.index("journaled"):
        assert not (out / JOURNAL).exists()
    # What the next command finds it completes first: the whole new set.
    complete_landing(out)
    now = {k: v for k, v in files(out).items() if k != LOCK}
    expected = earlier if JOURNALED.index(point) < JOURNALED.index("journaled") else {**reference, "notes.txt": b"mine"}
    assert now == expected
    assert main(["audit", str(second), "--out", str(out), "--quiet"]) == 0
    assert files(out) == {**reference, "notes.txt": b"mine"}
    assert staging_left(tmp_path) == []
    hidden = sorted(p.name for p in out.iterdir() if p.name.startswith("."))
    assert len(hidden) == 2 and hidden[0] == ".tables" and hidden[1].startswith(".tables-")  # the links and their generation
