"""Fuzz the reading of Claude Code's request-replay rows (2.1.282 on; workloads/logs/formats/
claude_code.py, ``_Walk.request_row`` and ``_Walk.request_events``): any JSON value in a row's
fields or a response's ``requestRef`` reads, never an exception, and changes no call or count (the
rows are metadata); rows written as Claude Code writes them (``keep`` the messages shared with the
thread's previous row, ``base`` only when ``keep`` is above 0) give each call the events a model of
the comparison expects."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.workloads.audit.core import load_trace
from tests.fuzz.harness import fuzz_settings
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

JSON = st.one_of(st.none(), st.booleans(), st.integers(-2, 9), st.text(max_size=4),
                 st.lists(st.one_of(st.text(max_size=3), st.integers()), max_size=3),
                 st.dictionaries(st.sampled_from(["system", "tools", "role", "content", "name", "text"]),
                                 st.one_of(st.text(max_size=3), st.lists(st.text(max_size=3), max_size=2)), max_size=3))
FIELDS = {"api-request": ["id", "base", "keep", "tail", "shapeHash", "cut"], "api-request-shape": ["shapeHash", "shape"],
          "api-request-blob": ["hash", "message"]}
#: Shapes by name: system block texts and tool names ("D" reads as "A" does, under another hash).
SHAPES = {"A": (("sys", "env zsh"), ("Bash",)), "B": (("sys", "env zsh"), ("Bash", "Read")), "C": (("sys", "env bash"), ("Bash",)),
          "D": (("sys", "env zsh"), ("Bash",))}


def _session(calls: list[tuple[str, tuple[int, ...]]], missing: frozenset[str] = frozenset()) -> list[dict]:
    """One main thread: per call, its shape and its messages (as numbers: equal numbers, equal
    messages), with the rows Claude Code writes before it and ``requestRef`` on its response; but
    no shape row for the shapes ``missing`` (written in an earlier file of a resumed session)."""
    t = Transcript("sess", version="2.1.332")
    t.user("go", "2026-11-25T09:00:00.000Z", root=True)
    shapes: set[str] = set()
    blobs: set[int] = set()
    before: tuple[int, ...] = ()
    for n, (shape, messages) in enumerate(calls, 1):
        if shape not in shapes and shape not in missing:
            shapes.add(shape)
            system, tools = SHAPES[shape]
            t.lines.append({"type": "api-request-shape", "sessionId": "sess", "shapeHash": shape, "shape": {
                "system": [{"type": "text", "text": text} for text in system],
                "tools": [{"name": name, "input_schema": {}} for name in tools]}})
        for m in messages:
            if m not in blobs:
                blobs.add(m)
                t.lines.append({"type": "api-request-blob", "sessionId": "sess", "hash": f"h{m}",
                                "message": {"role": "user", "content": [{"type": "text", "text": f"m{m}"}]}})
        keep = next((i for i, (a, b) in enumerate(zip(before, messages)) if a != b), min(len(before), len(messages)))
        row: dict = {"type": "api-request", "sessionId": "sess", "id": f"q{n}", "shapeHash": shape, "keep": keep,
                     "tail": [f"h{m}" for m in messages[keep:]], "params": {}}
        if keep > 0:
            row["base"] = f"q{n - 1}"
        t.lines.append(row)
        t.assistant(f"r{n}", f"2026-11-25T09:00:{2 * n:02d}.000Z", [cc_usage(3, 100, 0, 9)], model="claude-sonnet-4-6")
        t.lines[-1]["requestRef"] = f"q{n}"
        t.user("out", f"2026-11-25T09:00:{2 * n + 1:02d}.000Z", tool=True)
        before = messages
    return t.lines


def _expected(calls: list[tuple[str, tuple[int, ...]]], missing: frozenset[str] = frozenset()) -> list[set[str]]:
    """Per call, the kinds of the rows' events: nothing for the first call or one that shares no
    message with the previous (no ``base``); else the head's changes by part (both shape rows in
    the file), or that the hash changed when they do not show a part (a shape row ``missing``, or
    both read the same), the messages' change when it kept fewer than the previous sent, the same
    when neither changed (the same hash)."""
    out: list[set[str]] = [set()]
    for (shape0, before), (shape, now) in zip(calls, calls[1:]):
        keep = next((i for i, (a, b) in enumerate(zip(before, now)) if a != b), min(len(before), len(now)))
        kinds: set[str] = set()
        if keep > 0:
            (system0, tools0), (system, tools) = SHAPES[shape0], SHAPES[shape]
            if shape0 not in missing and shape not in missing:
                if system0 != system:
                    kinds.add("request_system_change")
                if tools0 != tools:
                    kinds.add("request_tools_change")
            if shape0 != shape and not kinds:
                kinds.add("request_shape_change")
            if keep < len(before):
                kinds.add("request_messages_change")
            elif shape0 == shape:
                kinds.add("request_same")
        out.append(kinds)
    return out


CALLS = st.lists(st.tuples(st.sampled_from(sorted(SHAPES)), st.lists(st.integers(0, 4), min_size=1, max_size=5).map(tuple)),
                 min_size=1, max_size=6)


def test_rows_written_as_claude_code_writes_them_give_the_expected_events(importer_examples):
    @fuzz_settings(importer_examples)
    @given(calls=CALLS, missing=st.frozensets(st.sampled_from(sorted(SHAPES))))
    def case(calls, missing) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            requests, _ = load_trace([write_jsonl(Path(tmp) / "sess.jsonl", _session(calls, missing))])
        assert [{kind for kind, _ in r.events if kind.startswith("request_")} for r in requests] == _expected(calls, missing)

    case()


def test_any_value_in_a_rows_fields_reads_and_changes_no_call(importer_examples):
    @fuzz_settings(importer_examples)
    @given(calls=CALLS, changes=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 5), JSON), max_size=6),
           refs=st.lists(JSON, max_size=3))
    def case(calls, changes, refs) -> None:
        lines = _session(calls)
        rows = [line for line in lines if line.get("type") in FIELDS]
        for at, field, value in changes:
            row = rows[at % len(rows)]
            names = FIELDS[row["type"]]
            row[names[field % len(names)]] = value
        responses = [line for line in lines if line.get("type") == "assistant"]
        for i, ref in enumerate(refs):
            responses[i % len(responses)]["requestRef"] = ref
        bare = [line for line in lines if line.get("type") not in FIELDS]
        with tempfile.TemporaryDirectory() as tmp:
            requests, _ = load_trace([write_jsonl(Path(tmp) / "sess.jsonl", lines)])
            without, _ = load_trace([write_jsonl(Path(tmp) / "bare.jsonl", bare)])
        assert [(r.request_id, r.usage) for r in requests] == [(r.request_id, r.usage) for r in without]

    case()
