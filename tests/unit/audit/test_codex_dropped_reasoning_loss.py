"""A Codex call sent without the previous turn's reasoning after an idle gap past the TTL: the
part of the previous prompt it did not send is no expiry's loss (a keep-alive or a longer TTL
would not have read it, as their re-simulations show), so the row splits it off."""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.test_codex_turns import ANSWER, CALL, OUTPUT, REASONING, USER, _usage, _write


def test_the_dropped_reasoning_is_split_off_an_expirys_loss(tmp_path: Path) -> None:
    # j5ik2o/dotfiles' rollout line 108: 30,208 tokens put down to ttl-expired, of which the
    # re-simulations of keep-alive and ttl-1h read back 21,504: the rest was turn 1's reasoning,
    # which the call did not send.
    items = [("10:00:01.000", "message", USER)]
    for i, (prompt, read) in enumerate(((20_000, 0), (22_000, 19_840), (24_000, 21_888))):
        items += [
            (f"10:00:{10 * i + 2:02d}.000", "reasoning", REASONING),
            (f"10:00:{10 * i + 3:02d}.000", "function_call" if i < 2 else "message", CALL if i < 2 else ANSWER),
            (f"10:00:{10 * i + 4:02d}.000", "usage", _usage(prompt, read)),
        ]
        if i < 2:
            items.append((f"10:00:{10 * i + 5:02d}.000", "function_call_output", OUTPUT))
    # Turn 2, 50 minutes later, smaller than the last prompt: sent without turn 1's reasoning.
    items += [("10:50:00.000", "message", USER), ("10:50:03.000", "usage", _usage(23_000, 0))]
    rows = run_audit([_write(tmp_path / "r.jsonl", items, model="gpt-5.4")]).rows
    row = rows[3]
    assert row.cause == "ttl-expired" and row.lost_tokens == row.expected_cache_read > 20_000
    # What it kept of the previous prompt (turn 1's first prompt, 20,000) is the expiry's part;
    # the rest is the dropped reasoning's, counted messages-changed.
    assert row.secondary_cause == "messages-changed"
    assert 0 < row.secondary_lost_tokens == row.expected_cache_read - (row.lost_tokens - row.secondary_lost_tokens)
    assert row.lost_tokens - row.secondary_lost_tokens <= 20_000
    assert "were not sent: the prompt kept only 20,000 tokens of the previous one" in row.detail
