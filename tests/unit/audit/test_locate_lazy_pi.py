"""A pi session's messages kept as where their lines start, their records made when a break is
located on them (as Claude Code's: tests/unit/audit/test_locate_lazy.py).

Read as it lies on disk, a pi session makes no message record while it is read; one it cannot
read again by an offset (compressed, UTF-16) makes them as it reads. Either way a request's
records, and every row of the audit, are the same, for every entry that sends a message (a user
turn, a tool result, an assistant reply, a !cmd, an extension's message, the two summaries).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import msgspec
import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.locate import logged
from prefixbench.workloads.logs.formats import pi
from prefixbench.workloads.logs.history import message_count
from tests.unit.audit.fixtures import read_keeping_places

T0 = 1765233665294


def _message(role: str, ms: int, content: object = "", **more: object) -> dict:
    return {"type": "message", "timestamp": "2025-12-08T22:41:09.389Z", "message": {"role": role, "content": content, "timestamp": ms, **more}}


def _call(ms: int, read: int, written: int, fresh: int = 10) -> dict:
    usage = {"input": fresh, "output": 100, "cacheRead": read, "cacheWrite": written, "cost": {}}
    return _message("assistant", ms, [{"type": "text", "text": f"reply at {ms}"}], provider="anthropic",
                    model="claude-opus-4-5", api="anthropic-messages", usage=usage, stopReason="stop")


def _entries() -> list[dict]:
    """Every entry kind that sends a message, and calls whose read falls short of the prompt before."""
    header = {"type": "session", "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x", "thinkingLevel": "off"}
    return [
        header,
        _message("user", T0, "start the parser"),
        _call(T0 + 10, 0, 40_000),
        _message("toolResult", T0 + 1000, [{"type": "text", "text": "     1\tdef parse(x):\n" * 300}], toolName="read"),
        _call(T0 + 1010, 40_000, 3_000),
        _message("bashExecution", T0 + 2000, command="ls", output="a.py b.py", exitCode=1),
        {"type": "custom_message", "timestamp": "x", "customType": "note", "content": "An extension's note. " * 50, "display": False},
        _message("user", T0 + 3000, "Today's date is 2025-09-03. " + "Carry on with the parser. " * 300),
        _call(T0 + 3010, 41_500, 4_000),  # stopped inside the tool result's file content (message 3)
        {"type": "branch_summary", "timestamp": "x", "summary": "We tried the other branch. " * 40},
        _message("user", T0 + 4000, "next"),
        _call(T0 + 4010, 44_000, 1_500),  # stopped inside the date's message (message 7, after the !cmd's and the extension's)
        {"type": "compaction", "timestamp": "x", "summary": "So far: the parser. " * 30, "tokensBefore": 48_000},
        _message("user", T0 + 5000, "go on " * 200),
        _call(T0 + 5010, 0, 2_000),  # (pi's unlogged head: a compaction's and a short read's breaks are placed there)
        _message("user", T0 + 6000, "and more " * 200),
        _call(T0 + 6010, 1_000, 2_000),
    ]


def _copies(tmp_path: Path) -> dict[str, Path]:
    text = "".join(json.dumps(entry) + "\n" for entry in _entries())
    paths = {"plain": tmp_path / "plain" / "s.jsonl", "gzip": tmp_path / "gzip" / "s.jsonl.gz", "utf16": tmp_path / "utf16" / "s.jsonl"}
    for path in paths.values():
        path.parent.mkdir()
    paths["plain"].write_text(text, encoding="utf-8")
    paths["gzip"].write_bytes(gzip.compress(text.encode()))
    paths["utf16"].write_bytes(text.encode("utf-16"))
    return paths


def test_a_pi_session_on_disk_makes_no_message_record_while_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails on the code before: every message's record was made as its entry was read."""
    path = _copies(tmp_path)["plain"]
    made, kept = read_keeping_places(pi, path, monkeypatch)
    assert made == []
    assert kept and all(type(m) is bytes for m in kept)
    assert sum(message_count(m) for m in kept) == 14  # (each reply counted again as the next call's first message; the compaction dropped the one before it)
    found = [row.location for row in run_audit([path]).rows if row.location]
    assert 0 < len(made) < 14
    assert [where[:45] for where in found] == ["the cached prefix ended inside message 3 (too",
                                               "the cached prefix ended inside message 7 (use",
                                               "the cached prefix ended inside the unlogged h",
                                               "the cached prefix ended inside the unlogged h"]
    assert ["holds a file's content" in found[0], "it holds a date" in found[1]] == [True, True]


def test_pi_records_read_again_are_the_records_made_as_read(tmp_path: Path) -> None:
    copies = _copies(tmp_path)
    read = {name: load_trace([path])[0] for name, path in copies.items()}
    assert all(type(r.messages) is tuple for r in read["gzip"] + read["utf16"])
    as_read = [logged(r) for r in read["gzip"]]
    assert [logged(r) for r in read["plain"]] == as_read == [logged(r) for r in read["utf16"]]
    assert {m.role for records in as_read for m in records} == {"user", "assistant", "toolResult"}
    assert any(m.marks for records in as_read for m in records)
    rows = {name: [msgspec.structs.replace(row, file="") for row in run_audit([path]).rows] for name, path in copies.items()}
    assert rows["plain"] == rows["gzip"] == rows["utf16"]
    assert sum(bool(row.location) for row in rows["plain"]) == 4


def test_a_pi_session_changed_after_it_was_read_is_one_line(tmp_path: Path) -> None:
    path = _copies(tmp_path)["plain"]
    requests, _ = load_trace([path])
    last = next(r for r in reversed(requests) if r.messages)
    path.write_text(json.dumps({"type": "model_change", "provider": "x", "modelId": "y"}) + "\n")
    with pytest.raises(UserError, match=r"s\.jsonl: changed while it was audited"):
        logged(last)
