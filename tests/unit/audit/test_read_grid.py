"""Read grids learned from a log's own reads (workloads/audit/grid.py). Hand-made Codex rollouts:
call i sends a prompt of 20,000 tokens and up (:data:`PROMPTS`), a minute after the call before,
and answers 600 tokens; each follow-up reports as read the previous prompt on the grid 384 + k x 512 (what Codex
0.122 to 0.142 sessions on gpt-5.4 and gpt-5.5 show), never the answer after it."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.simulator.providers.base import on_grid
from prefixbench.simulator.providers.openai import RULES
from prefixbench.workloads.audit.core import assume_read_steps, audit_requests, load_trace, run_audit

OUTPUT = 600
#: Grown by uneven amounts, so that their reads lie on no grid coarser than 512 tokens.
PROMPTS = (20_000, 21_700, 24_100, 25_900, 28_300, 29_800, 32_100, 33_700)


def prompts(calls: int) -> list[int]:
    return list(PROMPTS[:calls])


def grid_reads(calls: int) -> list[int]:
    sent = prompts(calls)
    return [0] + [on_grid(p, 512, 384) for p in sent[:-1]]


def rollout(path: Path, reads: list[int], model: str = "gpt-5.5", version: str = "0.128.0") -> Path:
    lines = [
        {"timestamp": "2026-05-04T10:00:00.000Z", "type": "session_meta",
         "payload": {"id": "s", "cli_version": version, "model_provider": "openai"}},
        {"timestamp": "2026-05-04T10:00:00.000Z", "type": "turn_context", "payload": {"model": model, "effort": "high"}},
    ]
    for i, (prompt, read) in enumerate(zip(prompts(len(reads)), reads)):
        def at(second: int) -> str:
            return f"2026-05-04T10:{i:02d}:{second:02d}.000Z"
        lines += [
            {"timestamp": at(1), "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"turn {i}"}]}},
            {"timestamp": at(3), "type": "response_item",
             "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
        ]
        usage = {"input_tokens": prompt, "cached_input_tokens": read, "output_tokens": OUTPUT}
        lines.append({"timestamp": at(4), "type": "event_msg",
                      "payload": {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_on_grid_and_round_read_with_an_offset() -> None:
    assert [on_grid(n, 512, 384) for n in (300, 384, 895, 896, 20_000)] == [0, 384, 384, 896, 19_840]
    # OpenAI's minimum still holds: a grid point below 1,024 reads 0. Without an offset, as before.
    assert [RULES.round_read(n, "gpt-5.5", 512, 384) for n in (1_000, 1_300, 1_500, 20_000)] == [0, 0, 1_408, 19_840]
    assert RULES.round_read(20_000, "gpt-5.5") == 19_968


def test_reads_on_a_coarse_grid_are_predicted_on_it(tmp_path: Path) -> None:
    # 6 distinct reads, all 384 + k x 512: by chance (1/4)^5, so the grid is learned. Each
    # follow-up is predicted exactly: the previous prompt on the grid, not its answer after it
    # (main predicted (prompt + 600) // 128 x 128: 20,480 for 19,840).
    reads = grid_reads(7)
    result = run_audit([rollout(tmp_path / "r.jsonl", reads)])
    rows = result.rows
    assert [r.reported_cache_read for r in rows] == reads
    assert [r.predicted_cache_read for r in rows[1:]] == reads[1:]
    assert [r.expected_cache_read for r in rows[1:]] == reads[1:]
    # No follow-up is put down to the provider's best effort (main: all 6 were).
    assert [r.cause for r in rows[1:]] == [None] * 6
    assert any("512-token grid from 384" in note and "gpt-5.5 (agent 0.128.0)" in note for note in result.notes)
    # ... and no note claims the responses were kept.
    assert not any("cache that keeps output" in note for note in result.notes)


def test_too_few_reads_on_one_grid_teach_nothing(tmp_path: Path) -> None:
    # 4 distinct reads: (1/4)^3 = 1/64 by chance, above 1 in 200: the documented 128-token steps
    # (Codex 0.121: before the release whose measured grid is assumed, see the tests below).
    reads = grid_reads(5)
    rows = run_audit([rollout(tmp_path / "r.jsonl", reads, version="0.121.0")]).rows
    assert rows[1].predicted_cache_read == (prompts(5)[0] + OUTPUT) // 128 * 128 == 20_480
    # One read off the grid among many: no grid either.
    reads = grid_reads(8)
    reads[3] += 128
    rows = run_audit([rollout(tmp_path / "s.jsonl", reads, version="0.121.0")]).rows
    assert rows[1].predicted_cache_read == 20_480


def test_few_reads_of_codex_0_122_on_get_the_measured_grid(tmp_path: Path) -> None:
    # The same 4 distinct reads from Codex 0.128.0 on gpt-5.5: too few to learn a grid, but the
    # release's measured one (384 + k x 512, no response kept) predicts every follow-up exactly
    # (main: (prompt + 600) // 128 x 128, 20,480 for 19,840, and no grid note).
    reads = grid_reads(5)
    result = run_audit([rollout(tmp_path / "r.jsonl", reads)])
    assert [r.predicted_cache_read for r in result.rows[1:]] == reads[1:]
    (note,) = [n for n in result.notes if "-token grid from" in n]
    assert "gpt-5.5 (agent 0.128.0) predicted on a 512-token grid from 384 (5 request(s)): too few reads" in note
    # gpt-5.6-terra's grid starts elsewhere (256 + k x 512); a model the table does not name and
    # an alpha of 0.122.0 (which read in 128-token steps) keep the documented steps.
    terra = [0] + [on_grid(p, 512, 256) for p in prompts(4)[:-1]]
    rows = run_audit([rollout(tmp_path / "t.jsonl", terra, model="gpt-5.6-terra", version="0.144.5")]).rows
    assert [r.predicted_cache_read for r in rows[1:]] == terra[1:]
    for name, model, version in (("u", "gpt-5.2", "0.128.0"), ("v", "gpt-5.4", "0.122.0-alpha.13")):
        rows = run_audit([rollout(tmp_path / f"{name}.jsonl", reads[:3], model=model, version=version)]).rows
        assert rows[1].predicted_cache_read == 20_480, (model, version)


def test_read_step_option_wins_over_a_learned_grid(tmp_path: Path) -> None:
    requests, summaries = load_trace([rollout(tmp_path / "r.jsonl", grid_reads(7))])
    assert {(r.read_step, r.read_offset) for r in requests} == {(512, 384)}
    stepped = assume_read_steps(requests, {"openai": 128})
    assert {(r.read_step, r.read_offset) for r in stepped} == {(128, 0)}
    rows = audit_requests(stepped, summaries).rows
    assert rows[1].predicted_cache_read == 20_480


def test_before_codex_0_122_a_learned_grid_keeps_the_response(tmp_path: Path) -> None:
    # gpt-5.4-mini subagents of Codex 0.115 and 0.119 alphas read on the same grid, but each
    # follow-up read the previous prompt and its whole response (measured: grid.keeps_output).
    # The 6 distinct reads teach the grid; each is predicted with the 600-token answer kept
    # (main: the previous prompt alone, 19,840 for 20,352).
    sent = prompts(7)
    reads = [0] + [on_grid(p + OUTPUT, 512, 384) for p in sent[:-1]]
    assert reads[1] == 20_352
    result = run_audit([rollout(tmp_path / "r.jsonl", reads, model="gpt-5.4-mini", version="0.115.0-alpha.27")])
    assert [r.predicted_cache_read for r in result.rows[1:]] == reads[1:]
    assert any("512-token grid from 384" in note and "gpt-5.4-mini (agent 0.115.0-alpha.27)" in note for note in result.notes)
    # From the release on, the same log's response is not kept: the previous prompt alone.
    rows = run_audit([rollout(tmp_path / "s.jsonl", reads, model="gpt-5.4-mini", version="0.122.0")]).rows
    assert [r.predicted_cache_read for r in rows[1:]] == [on_grid(p, 512, 384) for p in sent[:-1]]
