"""A pi session's first call on DeepSeek reads the head its project's earlier sessions of that day
stored as their common prefix, from the third session on (``deepseek``'s
``third_starts_read_common_head``): the first two send the same system prompt and tools, then part,
so DeepSeek stores the part they share, and later sessions read it. pi names a head per session
file, so before the rule every first call was predicted to read nothing. Each test builds its own
small sessions; the first fails on the code before the rule."""

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


def _first_reads(folder: Path) -> list[tuple[int | None, int]]:
    """(reported, predicted) read of each session's first call, in send order."""
    rows = sorted((r for r in run_audit([folder]).rows if r.index == 0), key=lambda r: r.timestamp or "")
    return [(r.reported_cache_read, r.predicted_cache_read) for r in rows]


def test_third_and_later_sessions_read_the_head_they_agree_on(tmp_path: Path) -> None:
    for n, read in enumerate([0, 0, 3712, 3712]):
        _session(tmp_path / "p", n, DAY + n * 600_000, (3840, read))
    assert _first_reads(tmp_path / "p") == [(0, 0), (0, 0), (3712, 3712), (3712, 3712)]


def test_no_level_on_another_day_or_with_two_sessions_or_a_shorter_prompt(tmp_path: Path) -> None:
    # Two sessions on one day, two on the next: no day holds a third.
    for n, read in enumerate([0, 3712, 0, 3712]):
        _session(tmp_path / "days", n, DAY + (n // 2) * 86_400_000 + n * 600_000, (3840, read))
    assert _first_reads(tmp_path / "days") == [(0, 0), (3712, 0), (0, 0), (3712, 0)]
    # The fourth session's prompt is shorter than the level: it reads none of it.
    for n, (prompt, read) in enumerate([(3840, 0), (3840, 0), (3840, 3712), (3840, 3712), (3063, 512)]):
        _session(tmp_path / "short", n, DAY + n * 600_000, (prompt, read))
    assert _first_reads(tmp_path / "short")[4] == (512, 0)


def test_folders_and_models_are_apart(tmp_path: Path) -> None:
    # The same four first reads split over two folders (two projects' sessions): no folder holds a third.
    for n, read in enumerate([0, 0, 3712, 3712]):
        _session(tmp_path / "split" / f"p{n % 2}", n, DAY + n * 600_000, (3840, read))
    assert sorted(_first_reads(tmp_path / "split")) == [(0, 0), (0, 0), (3712, 0), (3712, 0)]
    # Another model's sessions in the folder do not count towards a third.
    for n, (read, model) in enumerate([(0, "deepseek-v4-flash"), (0, "deepseek-v4-pro"), (3712, "deepseek-v4-pro"), (3712, "deepseek-v4-pro")]):
        _session(tmp_path / "models", n, DAY + n * 600_000, (3840, read), model)
    assert _first_reads(tmp_path / "models") == [(0, 0), (0, 0), (3712, 0), (3712, 3712)]
