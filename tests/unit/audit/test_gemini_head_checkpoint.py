"""gemini-3-flash: a lane that has read nothing yet keeps to the head (system prompt and tools) as
its first checkpoint, where the audit knows the head's size, until a request left 3,000 tokens past
it (the Gemini rules' ``head_checkpoint``). Fails on integ46, which predicted the second call of
such a lane at the last 3,924-token checkpoint inside the previous prompt (3,924 where it read
5,690: computermode/test-repo's March 2026 sessions)."""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.fixtures import gemini_session


def _session(path: Path, session: str, model: str, calls: list[tuple[int, int]]) -> Path:
    return gemini_session(path, model, calls, session=session, at="2026-03-17T22:00")


def test_a_flash_lanes_first_read_is_the_head_until_a_call_left_3000_tokens_past_it(tmp_path: Path) -> None:
    # One session's first call read the head another had sent (5,700 of 6,300): the head's size.
    warm = _session(tmp_path / "a.jsonl", "a", "gemini-3-flash-preview", [(6_300, 5_700)])
    # A session whose first call read nothing, its second the head only (5,690 of a 6,350-token
    # previous prompt: 650 past the head), its third still the head.
    short = _session(tmp_path / "b.jsonl", "b", "gemini-3-flash-preview", [(6_350, 0), (6_400, 5_690), (6_900, 5_720)])
    # One whose first prompt holds 4,300 tokens past the head: the grid's newest checkpoint inside it.
    long = _session(tmp_path / "c.jsonl", "c", "gemini-3-flash-preview", [(10_000, 0), (10_300, 7_800)])
    result = run_audit([warm, short, long])
    by_file = {f: [r for r in result.rows if r.file == str(f)] for f in (short, long)}
    assert [r.predicted_cache_read for r in by_file[short]] == [0, 5_700, 5_690]
    assert [r.read_within for r in by_file[short]] == [True, True, True]
    assert [r.predicted_cache_read for r in by_file[long]] == [0, 7_848]
    # Without following reads, the grid's checkpoint inside the previous prompt, as before.
    plain = run_audit([warm, short, long], follow_reads=False)
    assert [r.predicted_cache_read for r in plain.rows if r.file == str(short)][1] == 3_924


def test_the_head_is_no_checkpoint_where_its_size_is_unknown_or_the_model_reads_to_the_token(tmp_path: Path) -> None:
    # Audited alone the session shows no head read: the grid as before.
    short = _session(tmp_path / "b.jsonl", "b", "gemini-3-flash-preview", [(6_350, 0), (6_400, 5_690)])
    assert [r.predicted_cache_read for r in run_audit([short]).rows] == [0, 3_924]
    # 3.1 Pro reads to the token and is not held to the head (its second reads vary: 5,529 of 6,294,
    # 9,306 of 9,500 in aim's sessions).
    warm = _session(tmp_path / "a.jsonl", "a", "gemini-3.1-pro-preview", [(6_300, 5_700)])
    pro = _session(tmp_path / "p.jsonl", "p", "gemini-3.1-pro-preview", [(6_350, 0), (6_400, 6_300)])
    assert [r.predicted_cache_read for r in run_audit([warm, pro]).rows if r.file == str(pro)] == [0, 6_350]
