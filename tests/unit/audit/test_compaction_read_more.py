"""A compaction whose request read more than the cache model predicted the new context shares
with what was cached is said to have done so: the base wrote "read X of the Y tokens it could
have read" with X over Y (a real pi session on Z.AI: "read 52,160 of the 8,128 tokens it could
have read"), a contradiction. A read at or under the prediction keeps its wording."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit

from .fixtures import write_jsonl

T0 = 1765233665294


def _message(role: str, ts_ms: int, usage: tuple[int, int, int] | None = None) -> dict:
    message: dict = {"role": role, "content": [], "timestamp": ts_ms}
    if usage is not None:
        uncached, read, written = usage
        message.update({"provider": "anthropic", "model": "claude-opus-4-5", "api": "anthropic-messages", "stopReason": "stop",
                        "usage": {"input": uncached, "output": 10, "cacheRead": read, "cacheWrite": written, "cost": {}}})
    return {"type": "message", "timestamp": "2025-12-08T22:41:09.389Z", "message": message}


def _compaction(tmp_path: Path, read: int):
    """A pi session: a first call of 3,010 tokens (a chain start: the unlogged head fits in it, so
    the cache model takes it for no more than that), a tool loop growing to 43,021, a compaction,
    then a call of 5,010 tokens on the new context reporting ``read`` of them cached."""
    header = {"type": "session", "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"}
    entries = [
        header,
        _message("user", T0), _message("assistant", T0 + 10, (10, 0, 3000)),
        _message("toolResult", T0 + 5000), _message("assistant", T0 + 5010, (1, 3010, 40000)),
        {"type": "compaction", "timestamp": "x", "summary": "s", "firstKeptEntryIndex": 1, "tokensBefore": 43021},
        _message("user", T0 + 20000), _message("assistant", T0 + 20010, (10, read, 5000 - read)),
    ]
    (compaction,) = run_audit([write_jsonl(tmp_path / "pi.jsonl", entries)]).compactions
    assert compaction.kind == "after"
    return compaction


def test_a_compaction_reading_more_than_predicted_says_so(tmp_path: Path) -> None:
    c = _compaction(tmp_path, 4_000)
    assert (c.verdict, c.cache_read, c.expected_cache_read) == ("warm", 4_000, 3_000)
    assert c.detail == "read 4,000: more than the 3,000 the cache model predicted it shares with what was cached"


@pytest.mark.parametrize("read", [3_000, 2_990])
def test_a_compaction_reading_no_more_than_predicted_keeps_its_wording(tmp_path: Path, read: int) -> None:
    c = _compaction(tmp_path, read)
    assert c.detail == (f"read {read:,} of the {c.expected_cache_read:,} tokens it could have read "
                        "(the prefix the new context shares with what was cached)")
    assert c.cache_read <= c.expected_cache_read
