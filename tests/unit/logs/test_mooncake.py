"""Block-hash traces (workloads/logs/formats/mooncake.py): Mooncake's and kvcache-simulator's."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
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
