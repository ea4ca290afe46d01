"""LiveAudit (the proxy's one-call-at-a-time audit) agrees with the audit of the whole file."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.audit.live import LiveAudit

FIXTURE = Path(__file__).resolve().parents[1] / "logs" / "fixtures" / "http-capture.jsonl"


def test_live_rows_are_the_audits_rows_for_calls_in_send_order() -> None:
    live = LiveAudit(FIXTURE)
    rows = [live.add(json.loads(line)) for line in FIXTURE.read_text().splitlines() if line.strip()]
    audited = [row for row in rows if not isinstance(row, str)]
    skipped = [row for row in rows if isinstance(row, str)]
    whole = run_audit([FIXTURE])
    assert len(audited) == len(whole.rows) and skipped  # the fixture has a call that was not served
    for mine, theirs in zip(audited, whole.rows):
        assert (mine.line, mine.lane, mine.cause, mine.evidence, mine.lost_tokens, mine.expected_cache_read, mine.predicted_cache_read, mine.lost_usd) == \
            (theirs.line, theirs.lane, theirs.cause, theirs.evidence, theirs.lost_tokens, theirs.expected_cache_read, theirs.predicted_cache_read, theirs.lost_usd)
    assert any(s.startswith("HTTP 529") for s in skipped)


def _conversation(tmp_path: Path) -> Path:
    """Five Anthropic calls, one second apart: cold, extend, system changed (a miss), extend, a 5-minute gap."""
    system = "You are a careful coding agent. " * 400
    user = {"role": "user", "content": "fix the bug"}
    reply = {"role": "assistant", "content": "Reading it."}
    plan = [(system, [user], 0, 3264), (system, [user, reply, user], 3264, 34), (system + " Today is Monday.", [user, reply, user], 0, 3303),
            (system + " Today is Monday.", [user, reply, user, reply, user], 3303, 34), (system + " Today is Monday.", [user, reply, user, reply, user, reply, user], 0, 3371)]
    calls = []
    for n, (text, messages, read, written) in enumerate(plan):
        body = {"model": "claude-sonnet-4-20250514", "max_tokens": 100, "system": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}], "messages": messages}
        usage = {"input_tokens": 3, "cache_read_input_tokens": read, "cache_creation_input_tokens": written, "output_tokens": 5}
        calls.append((1764633600.0 + n + (400 if n == 4 else 0), body, usage))
    return _capture(tmp_path / "capture.jsonl", "https://api.anthropic.com/v1/messages", calls)


def _capture(path: Path, url: str, calls: list[tuple[float, dict, dict]]) -> Path:
    """A capture at ``path`` of ``calls`` (sent at, request body, response usage) to ``url``, each
    answered half a second after it was sent."""
    lines = [json.dumps({"request": {"timestamp": sent, "url": url, "body": body},
                         "response": {"timestamp": sent + 0.5, "status_code": 200, "body": {"usage": usage}}})
             for sent, body, usage in calls]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_live_rows_match_on_a_conversation_with_a_change_and_an_expiry(tmp_path: Path) -> None:
    path = _conversation(tmp_path)
    live = LiveAudit(path)
    mine = [live.add(json.loads(line)) for line in path.read_text().splitlines()]
    whole = run_audit([path]).rows
    key = lambda row: (row.line, row.cause, row.evidence, row.lost_tokens, row.expected_cache_read, row.predicted_cache_read, row.lost_usd)  # noqa: E731
    assert [key(row) for row in mine] == [key(row) for row in whole]  # type: ignore[arg-type]
    assert [row.cause for row in whole] == ["cold-start", None, "system-changed", None, "ttl-expired"]


def _deepseek_starts(tmp_path: Path) -> Path:
    """Four DeepSeek conversations (a lane each, by their cache keys), one call each, every first
    call reading the same 320 tokens."""
    usage = {"prompt_tokens": 2000, "completion_tokens": 5, "total_tokens": 2005, "prompt_cache_hit_tokens": 320,
             "prompt_cache_miss_tokens": 1680, "prompt_tokens_details": {"cached_tokens": 320}}
    calls = [(1764633600.0 + 600 * n,
              {"model": "deepseek-chat", "prompt_cache_key": f"conv{n}", "messages": [{"role": "system", "content": "You are a helpful assistant."},
                                                                                   {"role": "user", "content": f"Solve issue {n}: " + "abcd"[n] * 3000}]},
              usage) for n in range(4)]
    return _capture(tmp_path / "deepseek.jsonl", "https://api.deepseek.com/chat/completions", calls)


def test_live_heads_hold_everything_the_batch_audits_do(tmp_path: Path) -> None:
    # The live audit copied warm/assumed/levels/start_warm but not body_starts (DeepSeek's
    # body_starts_read_warm_level), falls or capped, so it predicted these first calls cold.
    from prefixbench.workloads.audit.core import head_sizes

    path = _deepseek_starts(tmp_path)
    live = LiveAudit(path)
    mine = [live.add(json.loads(line)) for line in path.read_text().splitlines()]
    whole = run_audit([path]).rows
    fresh = head_sizes(live.requests)
    assert fresh.body_starts  # the capture exercises the rule
    for name in ("warm", "falls", "assumed", "levels", "start_warm", "capped", "body_starts", "common_starts"):
        assert getattr(live.heads, name) == getattr(fresh, name), name
    # The last call is predicted as the batch audit predicts it (earlier ones saw fewer lane starts).
    assert mine[-1].predicted_cache_read == whole[-1].predicted_cache_read == 320  # type: ignore[union-attr]
