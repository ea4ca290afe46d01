"""``audit --codex-warm-head [MODEL=]N``: a Codex session's first call reads a head cached before
the log (28 of 31 public rollouts' first calls, 1,920 to 22,400 tokens, not the same amount for
one version and model), which nothing in the log tells; the user may say how much, and the notes
say it was assumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from tests.unit.audit.fixtures import write_jsonl


def _tc(prompt: int, cached: int, total: tuple[int, int]) -> dict:
    return {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": total[0], "cached_input_tokens": total[1], "output_tokens": 40},
        "last_token_usage": {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": 20}}}


def _rollout(path: Path, model: str = "gpt-5.5", session: str = "019d-head", hour: int = 10) -> Path:
    # Codex 0.128.0: a first call that read 11,648 tokens cached before the session (the head),
    # then one that extends it inside the TTL.
    def item(ts: str, kind: str, payload: dict) -> dict:
        return {"timestamp": f"2026-05-02T{hour}:{ts}Z", "type": kind, "payload": payload}

    def user(text: str) -> dict:
        return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}

    return write_jsonl(path, [
        item("00:00.000", "session_meta", {"id": session, "cwd": "/w", "originator": "codex-tui", "cli_version": "0.128.0",
                                           "source": "cli", "model_provider": "openai"}),
        item("00:00.100", "turn_context", {"cwd": "/w", "model": model, "effort": "medium"}),
        item("00:00.200", "response_item", user("fix the tests")),
        item("00:05.000", "response_item", {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"}),
        item("00:05.100", "event_msg", _tc(18_000, 11_648, (18_000, 11_648))),
        item("00:07.000", "response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"}),
        item("00:09.000", "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}),
        item("00:09.100", "event_msg", _tc(18_600, 17_792, (36_600, 29_440))),
    ])


def _audit(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["audit", *argv, "--format", "json", "--quiet"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def test_a_warm_codex_head_the_user_names_is_read_by_the_first_call(tmp_path, capsys) -> None:
    log = str(_rollout(tmp_path / "rollout.jsonl"))
    plain = _audit(capsys, log)
    # Nothing in the log says what was cached before it: the first call is predicted to read 0.
    assert [r["predicted_cache_read"] for r in plain["requests"]] == [0, 17_792]
    assert not any("--codex-warm-head" in n for n in plain["notes"])
    for value in ("11648", "gpt-5.5=11648", "gpt-5.4=5504, gpt-5.5 = 11648"):
        warm = _audit(capsys, log, "--codex-warm-head", value)
        assert [r["predicted_cache_read"] for r in warm["requests"]] == [11_648, 17_792], value
        assert any("11,648 tokens assumed kept warm by the account (--codex-warm-head)" in n for n in warm["notes"]), value
    named = _audit(capsys, log, "--codex-warm-head", "gpt-5.5=11648")
    assert ("--codex-warm-head gpt-5.5=11,648: Codex on gpt-5.5 assumed to find that many tokens of its head cached "
            "before the log (2 request(s)); where the log's own cold points agree on a warm head, theirs is kept") in named["notes"]
    # A model the logs do not hold changes nothing, and says so.
    other = _audit(capsys, log, "--codex-warm-head", "gpt-5.4=5504")
    assert other["requests"] == plain["requests"]
    assert "--codex-warm-head gpt-5.4=5,504: no request of Codex on gpt-5.4 in these logs, nothing changed" in other["notes"]
    # A bare N on logs with no Codex call: it read "no request of every Codex model".
    none = _audit(capsys, str(Path(__file__).parent.parent / "logs" / "fixtures" / "pi.jsonl"), "--codex-warm-head", "4096")
    assert "--codex-warm-head *=4,096: no request of Codex in these logs, nothing changed" in none["notes"]


@pytest.mark.parametrize(("value", "says"), [
    ("lots", "'lots' is not a whole number of tokens from 1 to 2,000,000"),
    ("gpt-5.5=0", "'0' is not a whole number"),
    # Found by fuzzing: a digit that is no int ("²"), and more digits than int() takes: ValueError.
    ("gpt-5.5=²", "'²' is not a whole number"),
    ("0" * 5000, "is not a whole number of tokens from 1 to 2,000,000"),
    ("gpt-5.5=1,gpt-5.5=2", "gpt-5.5 is named twice"),
    ("1,2", "every model is named twice"),
    ("gpt-5.5=1,", "'' is not N or MODEL=N"),
    ("=5", "'=5' is not N or MODEL=N"),
])
def test_a_bad_codex_warm_head_is_one_line_and_exit_2(tmp_path, capsys, value, says) -> None:
    log = str(_rollout(tmp_path / "rollout.jsonl"))
    assert main(["audit", log, "--quiet", "--codex-warm-head", value]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("prefixbench: error: --codex-warm-head ") and says in err[0], err
    assert captured.out == ""


def test_a_warm_head_the_logs_own_cold_points_show_wins_over_the_option(tmp_path, capsys) -> None:
    # Two sessions of one version and model whose first calls both read 11,648: the log shows
    # the warm head itself, and a different amount named by the option does not replace it.
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _rollout(tmp_path / "a" / "rollout.jsonl", session="019d-a")
    _rollout(tmp_path / "b" / "rollout.jsonl", session="019d-b", hour=14)
    both = _audit(capsys, str(tmp_path), "--codex-warm-head", "gpt-5.5=5504")
    assert [r["predicted_cache_read"] for r in both["requests"]] == [11_648, 17_792, 11_648, 17_792]
    assert any("11,648 tokens kept warm by the account: 2 cold points" in n for n in both["notes"])
    assert not any("assumed kept warm" in n for n in both["notes"])
