"""A transcript's messages kept as where their lines start, their records made when a break is
located on them (``TraceRequest.messages`` as bytes; workloads/audit/locate.py's ``logged``).

Read as it lies on disk, a Claude Code transcript makes no message record while it is read; one
it cannot read again by an offset (compressed, UTF-16, records run together on a line) makes them
as it reads. Either way a request's records, and every row of the audit, are the same.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import claude_code
from prefixbench.workloads.audit.locate import logged
from prefixbench.workloads.logs.history import message_count
from tests.unit.audit.fixtures import read_keeping_places
from prefixbench.workloads.logs.records import iter_records, values_at
from tests.unit.audit.test_locate import _Log, _opening


def _marked(log: _Log) -> None:
    """Breaks that land on a reminder, a date and a file's content (test_locate's three)."""
    _opening(log)
    log.user("<system-reminder>The task list is empty.</system-reminder> go on")
    log.assistant("r4", 13_000, 1_000)
    log.user("and the other file")
    log.assistant("r5", 13_003, 2_000)  # stopped in r4's stretch, the reminder the likely change
    log.user("Today's date is 2025-09-03. " + "Carry on with the parser. " * 300)
    log.assistant("r6", 15_006, 800)
    log.user("next")
    log.assistant("r7", 15_500, 2_000)  # stopped inside the date's message
    log.tool_result("     1\tdef parse(x):\n" * 300, toolUseResult={"type": "text", "file": {"filePath": "/p/parser.py"}})
    log.assistant("r8", 17_500, 3_000)
    log.user([{"type": "text", "text": "thanks"}, {"type": "text", "text": "<system-reminder>x</system-reminder>"}])
    log.assistant("r9", 20_500, 500)
    log.user("again \u00e9\u4e2d")
    log.assistant("r10", 18_000, 2_600)  # stopped inside the file's content


def _text(log: _Log) -> str:
    return "".join(json.dumps(line) + "\n" for line in log.lines)


def _copies(tmp_path: Path, log: _Log) -> dict[str, Path]:
    """The transcript as it lies on disk, and as copies whose lines cannot be read again by an offset."""
    text = _text(log)
    plain = tmp_path / "plain" / "s1.jsonl"
    packed = tmp_path / "gzip" / "s1.jsonl.gz"
    wide = tmp_path / "utf16" / "s1.jsonl"
    for path in (plain, packed, wide):
        path.parent.mkdir()
    plain.write_text(text, encoding="utf-8")
    packed.write_bytes(gzip.compress(text.encode()))
    wide.write_bytes(text.encode("utf-16"))
    return {"plain": plain, "gzip": packed, "utf16": wide}


def test_a_transcript_on_disk_makes_no_message_record_while_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails on the code before: every message's record was made as its line was read."""
    log = _Log()
    _marked(log)
    path = _copies(tmp_path, log)["plain"]
    made, kept = read_keeping_places(claude_code, path, monkeypatch)
    assert made == []
    assert kept and all(type(m) is bytes for m in kept)
    assert sum(message_count(m) for m in kept) == sum(line["type"] in ("user", "assistant") for line in log.lines) - 1
    # The audit makes the records of the stretches it locates breaks on, and only those.
    rows = run_audit([path]).rows
    assert 0 < len(made) < len(log.lines) / 2
    found = [row.location for row in rows if row.location]
    assert [where[:45] for where in found] == ["the cached prefix ended inside message 6 (ass",
                                               "the cached prefix ended inside message 11 (us",
                                               "the cached prefix ended inside message 15 (us"]
    assert ["holds a system reminder" in found[0], "it holds a date" in found[1], "it holds a file's content" in found[2]] == [True] * 3


def test_records_read_again_are_the_records_made_as_read(tmp_path: Path) -> None:
    log = _Log()
    _marked(log)
    copies = _copies(tmp_path, log)
    read = {name: load_trace([path])[0] for name, path in copies.items()}
    assert all(type(r.messages) is tuple for r in read["gzip"] + read["utf16"])
    as_read = [logged(r) for r in read["gzip"]]
    assert [logged(r) for r in read["plain"]] == as_read == [logged(r) for r in read["utf16"]]
    assert any(m.marks for records in as_read for m in records)
    rows = {name: [msgspec.structs.replace(row, file="") for row in run_audit([path]).rows] for name, path in copies.items()}
    assert rows["plain"] == rows["gzip"] == rows["utf16"]
    assert sum(bool(row.location) for row in rows["plain"]) == 3


def test_a_line_of_records_run_together_makes_the_records_from_there_on(tmp_path: Path) -> None:
    """Its records cannot be read again by the line's offset: the file makes the records of its
    messages from that line on as it reads, and reads the earlier ones again for the requests
    that reach back before it."""
    log = _Log()
    _marked(log)
    lines = [json.dumps(line) for line in log.lines]
    glued = tmp_path / "glued" / "s1.jsonl"
    glued.parent.mkdir()
    glued.write_text("\n".join([*lines[:9], lines[9] + lines[10], *lines[11:]]) + "\n")
    plain = _copies(tmp_path, log)["plain"]
    requests, whole = load_trace([glued])[0], load_trace([plain])[0]
    kinds = [type(r.messages) for r in requests if r.messages]
    assert bytes in kinds and tuple in kinds
    assert [logged(r) for r in requests] == [logged(r) for r in whole]
    found = [row.location for row in run_audit([glued]).rows]
    assert found == [row.location for row in run_audit([plain]).rows] and sum(map(bool, found)) == 3


def test_a_transcript_changed_after_it_was_read_is_one_line(tmp_path: Path) -> None:
    log = _Log()
    _marked(log)
    path = _copies(tmp_path, log)["plain"]
    requests, _ = load_trace([path])
    last = next(r for r in reversed(requests) if r.messages)
    path.write_text(json.dumps({"type": "summary", "leafUuid": "u1"}) + "\n")
    with pytest.raises(UserError, match=r"s1\.jsonl: changed while it was audited"):
        logged(last)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=60), min_size=1, max_size=6), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_each_line_is_read_again_as_it_was_read(tmp_path_factory: pytest.TempPathFactory, texts: list[str], end: str, bom: bool) -> None:
    """A record's offset reads its line again to the same value, whatever the line holds (a lone
    surrogate read by ``json.loads``, characters beyond ASCII, CRLF ends, a byte-order mark)."""
    path = tmp_path_factory.mktemp("lines") / "log.jsonl"
    lines = [json.dumps({"n": n, "text": text}, ensure_ascii=n % 2 == 0) for n, text in enumerate(texts)]
    lines.insert(len(texts) // 2, json.dumps({"lone": "\ud800"}))  # (msgspec refuses it: read by json.loads)
    data = (end.join(lines) + end).encode("utf-8", "surrogatepass")
    path.write_bytes(b"\xef\xbb\xbf" + data if bom else data)
    records = list(iter_records(path))
    assert [r.offset >= 0 for r in records] == [True] * len(lines) and sum(r.plain for r in records) == 1
    assert values_at(path, [r.offset for r in records]) == [r.value for r in records]


def test_a_file_rewritten_in_place_is_read_again_not_remembered(tmp_path: Path) -> None:
    """Its lines start at the same bytes, their text changed (the same lengths): a second audit
    in the same process names the new text. Before: the records the first audit read again were
    kept by the file's name and the lines' offsets, and the second audit showed the old text."""
    log = _Log()
    _marked(log)
    path = _copies(tmp_path, log)["plain"]
    before = [row.location for row in run_audit([path]).rows if row.location]
    assert any("date is 2025-09-03" in where for where in before)
    path.write_text(_text(log).replace("date is 2025-09-03", "date is 2031-11-27"), encoding="utf-8")
    after = [row.location for row in run_audit([path]).rows if row.location]
    assert len(after) == len(before) and any("date is 2031-11-27" in where for where in after)
    assert not any("date is 2025-09-03" in where for where in after)
