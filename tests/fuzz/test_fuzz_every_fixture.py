"""Fuzz every reader from every log fixture, with edits the other properties do not make.

The other properties edit a few seed logs each (a nasty scalar or any JSON value at a random
place, bytes spliced in). These start from every fixture under ``tests/unit/logs/fixtures``
(the folder logs whole: Cline tasks, OpenHands conversations, OpenCode storage) and make:

* a type swap: the value at any place replaced by one of each JSON type (text, number, null,
  list, object, bool) or a number on an edge (10**400, NaN, -Infinity, 1e308, -0.0, -1, 2**64),
  or text an odd timestamp;
* a cut at any byte of the file, or its whole text re-encoded: CRLF or lone CR line ends, a
  byte order mark (UTF-8 or UTF-16), UTF-16 text, a NUL byte, Latin-1 bytes, a key repeated;
* odd entries in a walked folder beside a good log: a named pipe, a folder named like a log,
  links in a loop or to nothing or to a device, an empty file, other formats' logs;
* a column of an agent's database (OpenCode, OpenClaw, Zed) holding any SQLite type, or dropped
  or renamed, or a table dropped or doubled;
* ``compare`` of an audit result against one with a value swapped or a key deleted.

Each ends in exit 0 (or 1 for ``compare``), or exit 2 with one line naming what and where; never
a traceback or a hang. The audit reads under ``--what-if`` or ``--assume-provider`` at times.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import zstandard
from hypothesis import given
from hypothesis import strategies as st

from prefixbench.reports.cli import run
from tests.fuzz.harness import Tally, fuzz_settings

FIXTURES = Path(__file__).parents[1] / "unit" / "logs" / "fixtures"
#: Every text fixture, relative to the fixtures folder (its top folder is copied whole).
FILES = tuple(sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*")
                     if p.is_file() and p.suffix in (".json", ".jsonl", ".traj", ".md")))
#: One value of each JSON type, and numbers and text on an edge.
SWAPS = (None, True, False, "", "x", 0, -1, -0.0, 2**64, 10**400, 1e308, float("nan"), float("-inf"), [], {}, [1], {"a": 1},
         "2025-13-45T99:99:99Z", "1e999", "\ud800")
EXTRA = st.sampled_from(((), ("--what-if", "all"), ("--what-if", "pin-model,ttl-1h"), ("--assume-provider", "anthropic"),
                         ("--assume-provider", "openai"), ("--input", "auto")))


def _copy(rel: str, root: Path) -> tuple[Path, Path]:
    """The fixture ``rel`` copied into ``root``: ``(the file, what to audit)``."""
    top = Path(rel).parts[0]
    if (FIXTURES / top).is_dir():
        shutil.copytree(FIXTURES / top, root / top)
    else:
        shutil.copy(FIXTURES / top, root / top)
    return root / rel, root / top


def _load(path: Path) -> tuple[bool, object] | None:
    """``(is_lines, document)`` of a JSON or JSON-lines file; None for other text."""
    text = path.read_text()
    try:
        return False, json.loads(text)
    except json.JSONDecodeError:
        try:
            return True, [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError:
            return None


def _places(doc: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        out += _places(value, (*prefix, key))
    return out


def _swapped(doc: object, place: tuple, value: object) -> object:
    """``doc`` with the value at ``place`` set to ``value`` (``delete``: the key or item removed)."""
    doc = json.loads(json.dumps(doc))
    parent = doc
    for step in place[:-1]:
        parent = parent[step]
    if value == "delete":
        del parent[place[-1]]
    else:
        parent[place[-1]] = value
    return doc


def _dump(lines: bool, doc: object) -> bytes:
    if lines and isinstance(doc, list):
        text = "".join(json.dumps(row, allow_nan=True) + "\n" for row in doc)
    else:
        text = json.dumps(doc, allow_nan=True)
    return text.encode("utf-8", "surrogatepass")


def _swappable(rel: str) -> bool:
    """Whether the fixture ``rel`` is JSON with a value to swap: a type swap drawn from another (a
    markdown history, aider's) would audit the fixture unchanged, a case that cannot fail."""
    loaded = _load(FIXTURES / rel)
    return loaded is not None and len(_places(loaded[1])) > 1


#: The fixtures a type swap is drawn from (:func:`_swappable`).
SWAPPABLE = tuple(rel for rel in FILES if _swappable(rel))


def test_every_fixture_a_type_swap_draws_has_a_value_to_swap():
    assert SWAPPABLE and all(_swappable(rel) for rel in SWAPPABLE)
    assert "aider.md" not in SWAPPABLE and "aider.md" in FILES


def test_any_type_swapped_at_any_place_of_any_fixture_ends_cleanly(importer_examples):
    tally = Tally("type swaps", bound_s=20)

    @fuzz_settings(importer_examples)
    @given(rel=st.sampled_from(SWAPPABLE), place=st.integers(1, 10**6), value=st.sampled_from((*SWAPS, "delete")),
           whole=st.booleans(), extra=EXTRA)
    def case(rel: str, place: int, value: object, whole: bool, extra: tuple[str, ...]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            target, top = _copy(rel, Path(tmp))
            loaded = _load(target)
            assert loaded is not None, rel  # (SWAPPABLE: each a JSON document with a place to swap)
            lines, doc = loaded
            places = _places(doc)[1:]
            target.write_bytes(_dump(lines, _swapped(doc, places[place % len(places)], value)))
            tally.check(["audit", "--quiet", "--format", "json", *extra, str(top if whole else target)])

    case()
    tally.report()


#: Whole-text edits: line ends, byte order marks, encodings, NUL and Latin-1 bytes, a key repeated.
REENCODINGS = {
    "crlf": lambda b: b.replace(b"\n", b"\r\n"),
    "cr": lambda b: b.replace(b"\n", b"\r"),
    "bom": lambda b: b"\xef\xbb\xbf" + b,
    "bom-each-line": lambda b: b.replace(b"\n", b"\n\xef\xbb\xbf"),
    "utf-16": lambda b: b.decode("utf-8", "replace").encode("utf-16"),
    "utf-16-bom-only": lambda b: b"\xff\xfe" + b,
    "nul": lambda b: b.replace(b",", b",\x00", 1),
    "nul-line": lambda b: b.replace(b"\n", b"\n\x00\n", 1),
    "latin-1": lambda b: b.replace(b"e", b"\xe9", 3),
    "repeated-key": lambda b: b.replace(b'{"', b'{"type": 5, "', 3),
    "lone-surrogate": lambda b: b.replace(b'"', b'"\\udc80', 5),
}


def test_any_fixture_cut_at_any_byte_or_reencoded_ends_cleanly(importer_examples):
    tally = Tally("cuts and encodings", bound_s=20)

    @fuzz_settings(importer_examples)
    @given(rel=st.sampled_from(FILES), cut=st.one_of(st.none(), st.integers(0, 10**6)),
           edit=st.one_of(st.none(), st.sampled_from(sorted(REENCODINGS))), whole=st.booleans())
    def case(rel: str, cut: int | None, edit: str | None, whole: bool) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            target, top = _copy(rel, Path(tmp))
            data = target.read_bytes()
            if edit is not None:
                data = REENCODINGS[edit](data)
            if cut is not None:
                data = data[: cut % (len(data) + 1)]
            target.write_bytes(data)
            tally.check(["audit", "--quiet", "--format", "json", str(top if whole else target)])

    case()
    tally.report()


def _odd(root: Path, kind: str, n: int) -> None:
    """Put one odd entry ``kind`` in ``root`` (``n`` keeps names apart)."""
    name = root / f"odd{n}.jsonl"
    match kind:
        case "pipe":
            os.mkfifo(name)
        case "pipe-db":
            os.mkfifo(root / f"odd{n}.db")
        case "folder":
            name.mkdir()
        case "self-link":
            name.symlink_to(name.name)
        case "loop":
            name.symlink_to(f"odd{n}b.jsonl")
            (root / f"odd{n}b.jsonl").symlink_to(name.name)
        case "to-nothing":
            name.symlink_to(root / "nowhere")
        case "to-device":
            name.symlink_to("/dev/null")
        case "to-folder":
            name.symlink_to(root)
        case "empty":
            name.write_bytes(b"")
        case "blank":
            name.write_bytes(b"\n \r\n\t\n")
        case "empty-db":
            (root / f"odd{n}.db").write_bytes(b"")
        case "garbage-db":
            (root / f"odd{n}.sqlite").write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
        case _:  # another format's log
            _copy(kind, root)


def test_odd_entries_in_a_walked_folder_end_cleanly(importer_examples):
    tally = Tally("odd folder entries", bound_s=20)
    kinds = ("pipe", "pipe-db", "folder", "self-link", "loop", "to-nothing", "to-device", "to-folder", "empty", "blank",
             "empty-db", "garbage-db", *FILES)

    @fuzz_settings(importer_examples)
    @given(good=st.sampled_from((*FILES, None)), odd=st.lists(st.sampled_from(kinds), min_size=1, max_size=4, unique=True))
    def case(good: str | None, odd: list[str]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "logs"
            root.mkdir()
            if good is not None:
                _copy(good, root)
            for n, kind in enumerate(odd):
                if kind not in FILES or not (root / Path(kind).parts[0]).exists():
                    _odd(root, kind, n)
            tally.check(["audit", "--quiet", "--format", "json", str(root)])

    case()
    tally.report()


def _databases(root: Path) -> dict[str, Path]:
    """A small database of each agent that keeps one, in ``root``."""
    from tests.fuzz.test_fuzz_zed import SEEDS, _db
    from tests.unit.logs import test_opencode_db, test_openclaw_db, test_pi_db

    zstd = zstandard.ZstdCompressor(level=3)
    return {
        "opencode": test_opencode_db.write_db(root / "opencode.db", test_opencode_db._exports()),
        "openclaw": test_openclaw_db.write_db(root / "openclaw.sqlite"),
        "pi": test_pi_db.write_db(root / "sessions.sqlite"),
        "pi-later": test_pi_db.write_db(root / "later" / "sessions.sqlite", later=True),
        "zed": _db(root / "threads.db", [(f"t{n}", "zstd", zstd.compress(json.dumps(doc).encode())) for n, doc in enumerate(SEEDS)]),
    }


#: Values of every SQLite storage class, and text a reader may parse.
CELLS = (None, "", "x", 0, -1, 2**63 - 1, -(2**63), 1e308, float("-inf"), 0.5, b"", b"\xff\xfe", "{}", "[]", "null", '{"a":',
         "2025-99-99", "9" * 400)


def test_any_column_of_an_agent_database_holding_any_type_ends_cleanly(importer_examples):
    tally = Tally("database columns", bound_s=20)
    seeds_dir = Path(tempfile.mkdtemp(prefix="fuzz-every-db-"))
    seeds = _databases(seeds_dir)
    schemas: dict[str, dict[str, list[str]]] = {}
    for kind, path in seeds.items():
        con = sqlite3.connect(path)
        try:
            tables = [name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            schemas[kind] = {t: [row[1] for row in con.execute(f"PRAGMA table_info({t})")] for t in tables}
        finally:
            con.close()

    @fuzz_settings(importer_examples)
    @given(kind=st.sampled_from(sorted(seeds)), data=st.data(), walk=st.booleans())
    def case(kind: str, data: st.DataObject, walk: bool) -> None:
        table = data.draw(st.sampled_from(sorted(schemas[kind])))
        column = data.draw(st.sampled_from(schemas[kind][table]))
        op = data.draw(st.sampled_from(("set-all", "set-one", "set-one", "drop-column", "rename-column", "drop-table", "double")))
        statement, args = {
            "set-all": (f"UPDATE {table} SET {column} = ?", (data.draw(st.sampled_from(CELLS)),)),
            "set-one": (f"UPDATE {table} SET {column} = ? WHERE rowid = (SELECT min(rowid) FROM {table})", (data.draw(st.sampled_from(CELLS)),)),
            "drop-column": (f"ALTER TABLE {table} DROP COLUMN {column}", ()),
            "rename-column": (f"ALTER TABLE {table} RENAME COLUMN {column} TO renamed_{column}", ()),
            "drop-table": (f"DROP TABLE {table}", ()),
            "double": (f"INSERT INTO {table} SELECT * FROM {table}", ()),
        }[op]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / seeds[kind].name
            shutil.copy(seeds[kind], path)
            con = sqlite3.connect(path)
            try:
                con.execute(statement, args)
                con.commit()
            except sqlite3.Error:  # a constraint or a column SQLite will not drop: the database as it was
                pass
            finally:
                con.close()
            tally.check(["audit", "--quiet", "--format", "json", str(Path(tmp) if walk else path)])

    case()
    shutil.rmtree(seeds_dir)
    tally.report()


def test_compare_of_an_audit_result_with_a_value_swapped_ends_cleanly(importer_examples):
    tally = Tally("compare", bound_s=20)
    seed_dir = Path(tempfile.mkdtemp(prefix="fuzz-every-compare-"))
    base = seed_dir / "base.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert run(["audit", "--quiet", "--format", "json", str(FIXTURES / "codex.jsonl")]) == 0
    base.write_text(out.getvalue())
    doc = json.loads(out.getvalue())
    places = _places(doc)[1:]

    @fuzz_settings(importer_examples)
    @given(place=st.integers(0, len(places) - 1), value=st.sampled_from((*SWAPS, "delete")), new_first=st.booleans(),
           fmt=st.sampled_from(("table", "json", "md")), cut=st.one_of(st.none(), st.none(), st.none(), st.integers(0, len(out.getvalue()))))
    def case(place: int, value: object, new_first: bool, fmt: str, cut: int | None) -> None:
        new = seed_dir / "new.json"
        data = _dump(False, _swapped(doc, places[place], value))
        new.write_bytes(data if cut is None else data[:cut])
        files = [str(new), str(base)] if new_first else [str(base), str(new)]
        status = tally.check(["compare", "--format", fmt, *files], gate=True)
        assert status in (0, 1, 2)

    case()
    shutil.rmtree(seed_dir)
    tally.report()


def test_the_tally_shows_the_gates_that_failed(capsys):
    # compare's property runs with gate=True: its exit-1 cases are counted, and said.
    tally = Tally("gates", bound_s=20)
    tally.outcomes.update({"exit 0": 2, "exit 1": 1_500, "exit 2": 3})
    assert "(2 exit 0, 1,500 exit 1, 3 exit 2)" in tally.report()
