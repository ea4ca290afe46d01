"""A pi session's first call on DeepSeek reads the head its project's earlier sessions of that day
stored as their common prefix, from the third session on (``deepseek``'s
``third_starts_read_common_head``): earlier sessions send the same system prompt and tools, then
part, so DeepSeek stores the part they share, and later sessions read it. pi names a head per
session file, so without the rule every first call is predicted to read nothing. Each call's level
is the one the first calls sent before it agree on, more of them than read 0 or another level: its
own read and later ones are what is predicted, never looked at. Each test builds its own small
sessions."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit

DAY = datetime(2026, 6, 12, 5, 0, tzinfo=UTC).timestamp() * 1000


def _session(folder: Path, n: int, start_ms: float, first: tuple[int, int], model: str = "deepseek-v4-pro") -> None:
    """One pi session of two calls: the first ``(prompt, read)``, the second extending it."""
    prompt, read = first
    stamp = datetime.fromtimestamp(start_ms / 1000, UTC).isoformat().replace("+00:00", "Z")

    def at(ms: float) -> str:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def call(k: int, ms: float, tokens: int, hit: int) -> dict:
        usage = {"input": tokens - hit, "output": 40, "cacheRead": hit, "cacheWrite": 0, "totalTokens": tokens + 40}
        return {"type": "message", "id": f"a{n}{k}", "parentId": f"u{n}{k}", "timestamp": at(ms),
                "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}], "api": "openai-completions",
                            "provider": "deepseek", "model": model, "usage": usage, "stopReason": "stop", "timestamp": int(ms)}}

    def user(k: int, ms: float) -> dict:
        return {"type": "message", "id": f"u{n}{k}", "parentId": None if k == 0 else f"a{n}{k - 1}", "timestamp": at(ms),
                "message": {"role": "user", "content": [{"type": "text", "text": f"question {n}.{k}"}], "timestamp": int(ms)}}

    entries = [{"type": "session", "version": 3, "id": f"s{n}", "timestamp": stamp, "cwd": "/home/me/project"},
               user(0, start_ms), call(0, start_ms + 1_000, prompt, read),
               user(1, start_ms + 20_000), call(1, start_ms + 21_000, prompt + 200, prompt // 128 * 128)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"session-{n}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))


def _rows(folder: Path) -> list:
    """Each session's first call's row, in send order."""
    return sorted((r for r in run_audit([folder]).rows if r.index == 0), key=lambda r: r.timestamp or "")


def _first_reads(folder: Path) -> list[tuple[int | None, int]]:
    """(reported, predicted) read of each session's first call, in send order."""
    return [(r.reported_cache_read, r.predicted_cache_read) for r in _rows(folder)]


def test_third_and_later_sessions_read_the_head_the_earlier_ones_agree_on(tmp_path: Path) -> None:
    # The first two read 3,712 (kept warm by sessions before the log): the third and fourth are
    # predicted to read it, from two and three earlier first calls; the row says so, and a note.
    for n in range(4):
        _session(tmp_path / "p", n, DAY + n * 600_000, (3840, 3712))
    result = run_audit([tmp_path / "p"])
    rows = sorted((r for r in result.rows if r.index == 0), key=lambda r: r.timestamp or "")
    assert [(r.reported_cache_read, r.predicted_cache_read, r.predicted_by) for r in rows] == [
        (3712, 0, "chain"), (3712, 0, "chain"), (3712, 3712, "common-head"), (3712, 3712, "common-head")]
    assert any(note.startswith("2 first call(s) of deepseek deepseek-v4-pro predicted from the level 3,712 tokens "
                               "that 2 to 3 earlier first calls of their group") for note in result.notes)


def test_a_level_comes_from_the_earlier_first_calls_only(tmp_path: Path) -> None:
    # The third and fourth read 3,712 after two that read 0: nothing earlier agrees on a head, so
    # neither is predicted to (main before this test: both were, from their own reads).
    for n, read in enumerate([0, 0, 3712, 3712]):
        _session(tmp_path / "own", n, DAY + n * 600_000, (3840, read))
    assert _first_reads(tmp_path / "own") == [(0, 0), (0, 0), (3712, 0), (3712, 0)]
    # Two read 3,712, then four read 0: the third and fourth are predicted to read it (zeros one
    # and none); from the fifth on as many or more read 0 as read it, so no level (main: every call
    # from the third predicted 3,712, later reads of 0 not counted).
    for n, read in enumerate([3712, 3712, 0, 0, 0, 0]):
        _session(tmp_path / "later", n, DAY + n * 600_000, (3840, read))
    assert _first_reads(tmp_path / "later") == [(3712, 0), (3712, 0), (0, 3712), (0, 3712), (0, 0), (0, 0)]


def test_a_tie_sets_no_level(tmp_path: Path) -> None:
    # Two earlier first calls read 3,712 and two 4,096: the fifth is predicted from neither.
    for n, read in enumerate([3712, 3712, 4096, 4096, 4096]):
        _session(tmp_path / "levels", n, DAY + n * 600_000, (4200, read))
    assert _first_reads(tmp_path / "levels")[4] == (4096, 0)
    # Two read 0 and two 3,712 before the fifth: a tie with the zeros, no level either.
    for n, read in enumerate([0, 3712, 0, 3712, 3712]):
        _session(tmp_path / "zeros", n, DAY + n * 600_000, (3840, read))
    assert _first_reads(tmp_path / "zeros")[4] == (3712, 0)


def test_no_level_on_another_day_or_with_two_sessions_or_a_shorter_prompt(tmp_path: Path) -> None:
    # Two sessions on one day, two on the next: no day holds a third.
    for n in range(4):
        _session(tmp_path / "days", n, DAY + (n // 2) * 86_400_000 + n * 600_000, (3840, 3712))
    assert _first_reads(tmp_path / "days") == [(3712, 0)] * 4
    # The fourth session's prompt is shorter than the level: it reads none of it.
    for n, (prompt, read) in enumerate([(3840, 3712), (3840, 3712), (3840, 3712), (3063, 512)]):
        _session(tmp_path / "short", n, DAY + n * 600_000, (prompt, read))
    assert _first_reads(tmp_path / "short")[2:] == [(3712, 3712), (512, 0)]


def test_folders_and_models_are_apart(tmp_path: Path) -> None:
    # The same four first reads split over two folders (two projects' sessions): no folder holds a third.
    for n in range(4):
        _session(tmp_path / "split" / f"p{n % 2}", n, DAY + n * 600_000, (3840, 3712))
    assert _first_reads(tmp_path / "split") == [(3712, 0)] * 4
    # Another model's session in the folder does not count towards a third.
    for n, model in enumerate(["deepseek-v4-flash", "deepseek-v4-pro", "deepseek-v4-pro", "deepseek-v4-pro"]):
        _session(tmp_path / "models", n, DAY + n * 600_000, (3840, 3712), model)
    assert _first_reads(tmp_path / "models") == [(3712, 0), (3712, 0), (3712, 0), (3712, 3712)]
