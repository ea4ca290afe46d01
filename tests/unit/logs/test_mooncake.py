"""Block-hash traces (workloads/logs/formats/mooncake.py): Mooncake's and kvcache-simulator's."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import detect_format
from tests.unit.audit.fixtures import write_jsonl


def test_mooncake_predicts_shared_blocks(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "trace.jsonl", [
        {"timestamp": 0, "input_length": 1100, "output_length": 10, "hash_ids": [1, 2, 3]},
        {"timestamp": 50, "input_length": 1600, "output_length": 10, "hash_ids": [1, 2, 4, 5]},
    ])
    result = run_audit([path])
    assert [row.predicted_cache_read for row in result.rows] == [0, 1024]
    assert result.rows[1].reported_cache_read is None


def test_kvcache_simulator_traces_string_ids_and_partial_blocks(tmp_path: Path) -> None:
    # kvcache-simulator's trace: Mooncake's fields plus string ids, block_size and the tokens of
    # each block; only the blocks a request shares with what was sent before are read.
    path = write_jsonl(tmp_path / "kv.jsonl", [
        {"block_size": 16, "hash_ids": ["a", "b", "c"], "input_length": 40, "block_tokens": [16, 16, 8]},
        {"block_size": 16, "hash_ids": ["a", "b", "c", "d"], "input_length": 56, "block_tokens": [16, 16, 16, 8]},
        {"block_size": 16, "hash_ids": ["a", "b", "c"], "input_length": 40, "block_tokens": [16, 16, 8]},
        {"block_size": 16, "hash_ids": ["a", "e"], "input_length": 32},
    ])
    assert detect_format(path).name == "mooncake"
    result = run_audit([path])
    # "c" (8 tokens) and "c" (16 tokens) share an id only because the content matched; the
    # trace is trusted: the third request reads 16 + 16 + 8.
    assert [row.predicted_cache_read for row in result.rows] == [0, 48, 40, 16]
    assert [row.predicted_uncached for row in result.rows] == [40, 8, 0, 16]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"hash_ids": [1, True], "input_length": 10}, "hash_ids must be integers or non-empty strings"),
        ({"hash_ids": ["", "x"], "input_length": 10}, "hash_ids must be integers or non-empty strings"),
        ({"hash_ids": [1], "input_length": 10, "block_size": 0}, "block_size is not a block size"),
        ({"hash_ids": [1], "input_length": 10, "block_size": "16"}, "block_size is not a block size"),
        ({"hash_ids": [1, 2], "input_length": 10, "block_tokens": [5]}, "one count per hash id (2)"),
        ({"hash_ids": [1], "input_length": 10, "block_size": 16, "block_tokens": [17]}, "counts from 1 to block_size (16)"),
    ],
)
def test_block_trace_errors_name_the_line(tmp_path: Path, record: dict, message: str) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [{"hash_ids": [9], "input_length": 3}, record])
    with pytest.raises(UserError, match=rf"bad.jsonl:2: .*{message.replace('(', '.').replace(')', '.')}"):
        run_audit([path], fmt="mooncake")


AGENTIC_HEADER = {"schema": "dynamo.agentic_mooncake", "version": 2, "block_size": 4, "hash_id_scope": "local",
                  "source": {"format": "weka", "digest": "sha256:0"}}


def agentic_row(rid: str, play: str, session: str, ids: list[int], start: float, length: int, **extra: object) -> dict:
    return {"request_id": rid, "play_id": play, "session_id": session, "model": "m", "input_length": length,
            "output_length": 1, "hash_ids": ids, "not_before_ms": start, **extra}


def test_agentic_mooncake_v2_plays_are_namespaces_and_sessions_lanes(tmp_path: Path) -> None:
    """AISimulate's Agentic Mooncake v2 (what its Weka/AgentX importer lowers a trace to, and
    Dynamo replays): a header line, then rows of a play's sessions. main stopped at the header
    ("expected an object with hash_ids"). Two plays reuse session names and ids: not the same blocks."""
    rows = [AGENTIC_HEADER]
    for play in ("alpha", "beta"):
        rows += [agentic_row(f"{play}-0", play, "root", [1, 2], 0.0, 8),
                 agentic_row(f"{play}-1", play, "explore", [1, 2], 100.5, 8,
                             dependencies=[{"request_id": f"{play}-0", "trigger": "dispatch", "delay_ms": 100.5, "relation": "spawn"}]),
                 agentic_row(f"{play}-2", play, "root", [1, 2, 3], 900.0, 13,
                             dependencies=[{"request_id": f"{play}-1", "trigger": "completion", "delay_ms": 0.0, "relation": "join"}])]
    path = write_jsonl(tmp_path / "agentic.jsonl", rows)
    assert detect_format(path).name == "mooncake"
    result = run_audit([path])
    assert [row.predicted_cache_read for row in result.rows] == [0, 8, 8] * 2
    requests = load_trace([path])[0]
    assert [(r.lane, r.lane_kind, r.sent_ms) for r in requests] == [
        ("alpha/root", "main", 0), ("alpha/explore", "subagent", 100), ("alpha/root", "main", 900),
        ("beta/root", "main", 0), ("beta/explore", "subagent", 100), ("beta/root", "main", 900)]


def test_agentic_mooncake_ids_are_packed_per_play(tmp_path: Path) -> None:
    """A play's ids are packed into ints under the play's namespace, as the other block-hash
    readers pack theirs (before: a new string of file, play and id for every id of every row,
    about 2.5x the reading's time and 3x its peak memory on a 50k-row trace); a block a later row
    repeats is the same object, and two plays' equal raw ids stay apart."""
    path = write_jsonl(tmp_path / "agentic.jsonl", [
        AGENTIC_HEADER, agentic_row("a0", "alpha", "root", [1, 2], 0.0, 8), agentic_row("b0", "beta", "root", [1, 2], 1.0, 8),
        agentic_row("a1", "alpha", "root", [1, 2, 3], 2.0, 12)])
    a0, b0, a1 = load_trace([path])[0]
    assert all(type(h) is int for r in (a0, b0, a1) for h in r.hash_ids)
    assert [h & (1 << 64) - 1 for h in a1.hash_ids] == [1, 2, 3]
    assert set(a0.hash_ids).isdisjoint(b0.hash_ids)
    assert all(x is y for x, y in zip(a0.hash_ids, a1.hash_ids))


@pytest.mark.parametrize(
    ("header", "row", "message"),
    [
        ({"version": 3}, {}, "version 3 is not the one read .2."),
        ({"hash_id_scope": "global"}, {}, "hash_id_scope 'global' is not local"),
        ({"block_size": 0}, {}, "block_size is not a block size"),
        ({}, {"play_id": ""}, "request_id, play_id and session_id must be non-empty strings"),
        ({}, {"hash_ids": [1, -1]}, "hash_ids must be a list of non-negative 64-bit integers"),
        ({}, {"hash_ids": [1, 1 << 64]}, "hash_ids must be a list of non-negative 64-bit integers"),
        ({}, {"hash_ids": [1, "x"]}, "hash_ids must be a list of non-negative 64-bit integers"),
        ({}, {"hash_ids": [True]}, "hash_ids must be a list of non-negative 64-bit integers"),
        ({}, {"hash_ids": {"1": 2}}, "hash_ids must be a list of non-negative 64-bit integers"),
        ({}, {"not_before_ms": "soon"}, "not_before_ms is not a time in ms"),
    ],
)
def test_agentic_mooncake_errors_name_the_line(tmp_path: Path, header: dict, row: dict, message: str) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [AGENTIC_HEADER | header, agentic_row("r", "p", "s", [1], 0.0, 4) | row])
    line = 1 if header else 2
    with pytest.raises(UserError, match=rf"bad.jsonl:{line}: .*{message}"):
        run_audit([path])


def test_agentic_mooncake_row_without_ids_is_refused(tmp_path: Path) -> None:
    """formats.md: a row without its ids is one error line naming it (before: read as no blocks,
    so its whole input was predicted cold)."""
    row = agentic_row("r", "p", "s", [1], 0.0, 4)
    del row["hash_ids"]
    path = write_jsonl(tmp_path / "bad.jsonl", [AGENTIC_HEADER, row])
    with pytest.raises(UserError, match=r"bad.jsonl:2: an Agentic Mooncake request without hash_ids"):
        run_audit([path])
