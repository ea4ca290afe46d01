"""The bench's real-shaped folder is copies of a folder of Claude Code transcripts: a folder that
holds none (../shared/realdata itself, whose transcripts are in its subfolders) is a clear error,
not a loop that never reaches the size asked for."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.bench.test_audit_bench import write_real_shaped_transcripts


@pytest.fixture
def alarm():
    """Fail a call that does not return within 10 seconds (the loop this guards against)."""

    def hang(signum, frame):
        raise AssertionError("write_real_shaped_transcripts did not return")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("inside", [None, "other.txt", "empty.jsonl"])
def test_a_folder_of_no_transcript_is_refused(tmp_path: Path, alarm, inside: str | None) -> None:
    source = tmp_path / "realdata"
    (source / "claude-code-viewer").mkdir(parents=True)
    if inside:
        (source / inside).write_text("\n" if inside.endswith(".jsonl") else "not a transcript\n")
    with pytest.raises(ValueError, match=r"realdata: no Claude Code transcript .*claude-code-viewer"):
        write_real_shaped_transcripts(tmp_path / "out", source, 1)


def test_a_folder_of_transcripts_is_copied(tmp_path: Path, alarm) -> None:
    source = tmp_path / "cc"
    source.mkdir()
    entry = {"type": "assistant", "requestId": "req_1", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
             "message": {"id": "msg_1", "role": "assistant", "content": []}}
    (source / "s.jsonl").write_text(json.dumps(entry) + "\n")
    size, requests = write_real_shaped_transcripts(tmp_path / "out", source, 0, copies=2)
    assert requests == 2 and size > 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["s-c0001.jsonl", "s-c0002.jsonl"]
