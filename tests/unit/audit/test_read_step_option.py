"""``audit --read-step PROVIDER=N``: a user tries another read step than the one the rules give a
provider (a measured or secondary one, e.g. gemini-3-flash's 3,924-token checkpoints) on their
own log; the notes say which steps were set and what the rules' own are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from tests.unit.logs.test_gemini_cli import flash_session


def _flash_session(path: Path) -> Path:
    # Three gemini-3-flash calls (Gemini CLI JSONL) reading 7,700 of a 9,000-token and 15,500 of a
    # 17,000-token previous prompt.
    return flash_session(path, "2026-03-26T04:30", [(9_000, 0), (17_000, 7_700), (26_000, 15_500)])


def _audit(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["audit", *argv, "--format", "json", "--quiet"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def test_a_read_step_set_by_the_user_replaces_the_rules_step_and_is_said(tmp_path, capsys) -> None:
    log = str(_flash_session(tmp_path / "flash.jsonl"))
    rules = _audit(capsys, log)
    # The rules: the last 3,924-token checkpoint inside the previous prompt, 2 x 3,924 and 4 x 3,924.
    assert [r["predicted_cache_read"] for r in rules["requests"]] == [0, 7_848, 15_696]
    to_the_token = _audit(capsys, log, "--read-step", "gemini=1")
    # To the token there is no grid to raise a read past the one the lane last read (7,700).
    assert [r["predicted_cache_read"] for r in to_the_token["requests"]] == [0, 9_000, 7_700]
    unfollowed = _audit(capsys, log, "--read-step", "gemini=1", "--no-follow-reads")
    assert [r["predicted_cache_read"] for r in unfollowed["requests"]] == [0, 9_000, 17_000]
    thousands = _audit(capsys, log, "--read-step", "gemini=1000")
    assert [r["predicted_cache_read"] for r in thousands["requests"]] == [0, 9_000, 17_000]
    hundreds = _audit(capsys, log, "--read-step", " gemini = 4000 ")
    assert [r["predicted_cache_read"] for r in hundreds["requests"]] == [0, 8_000, 16_000]
    note = next(n for n in to_the_token["notes"] if "--read-step" in n)
    assert note == ("gemini reads counted in steps of 1 token(s) for 3 request(s), as --read-step asked "
                    "(otherwise: 3 of gemini-3-flash-preview in steps of 3,924)")
    # The rules' checkpoint note is not given for requests whose step the user set.
    assert not any("checkpoints" in n for n in to_the_token["notes"])
    assert not any("--read-step" in n for n in rules["notes"])
    # A provider the log does not hold changes nothing, and says so.
    other = _audit(capsys, log, "--read-step", "xai=64")
    assert other["requests"] == rules["requests"]
    assert "--read-step xai=64: no request of xai in these logs, nothing changed" in other["notes"]


@pytest.mark.parametrize(("value", "says"), [
    ("gemini", "'gemini' is not PROVIDER=N"),
    ("gemni=1", "unknown provider 'gemni' (one of: anthropic, bedrock, deepseek, gemini,"),
    ("gemini=0", "gemini's step '0' is not a whole number of tokens from 1 to 1,000,000"),
    ("gemini=1.5", "gemini's step '1.5' is not a whole number"),
    # Found by fuzzing: "²" is a digit to str.isdigit but no int, and 5,000 digits pass Python's
    # int-string limit: both raised ValueError (a traceback).
    ("gemini=²", "gemini's step '²' is not a whole number"),
    ("gemini=" + "0" * 5000 + "1", "gemini's step '000"),
    ("gemini=1,gemini=2", "gemini is named twice"),
    ("gemini=1,", "'' is not PROVIDER=N"),
])
def test_a_bad_read_step_is_one_line_and_exit_2(tmp_path, capsys, value, says) -> None:
    log = str(_flash_session(tmp_path / "flash.jsonl"))
    assert main(["audit", log, "--quiet", "--read-step", value]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("prefixbench: error: --read-step ") and says in err[0], err
    assert captured.out == ""


def _deepseek_capture(path: Path) -> Path:
    # Three DeepSeek V4 calls captured with their bodies, each extending the one before.
    from tests.unit.audit.fixtures import capture_line, write_jsonl

    lines = []
    for turn, (prompt, hit) in enumerate([(3_000, 0), (3_500, 2_944), (4_000, 3_456)]):
        body = {"model": "deepseek-v4-flash", "messages": [{"role": "system", "content": "You are terse. " * 400},
                                                           *[{"role": "user", "content": f"step {i} " * 100} for i in range(turn + 1)]]}
        usage = {"prompt_tokens": prompt, "completion_tokens": 20, "prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": prompt - hit}
        lines.append(capture_line(body, {"body": {"usage": usage}}, url="https://api.deepseek.com/chat/completions", sent=1_780_000_000.0 + 10 * turn))
    return write_jsonl(path, lines)


def test_a_step_the_body_model_cannot_replay_in_counts_the_read_in_it(tmp_path, capsys) -> None:
    """On main a captured body's step the provider's cache model does not take was exit 2 in the
    model's own words: --read-step anthropic=64 "cache model 'anthropic' has no option 'block'",
    deepseek=1 "deepseek: interval must be 64 or 128". The model replays in its own step and the
    read is counted in the one asked."""
    from tests.unit.audit.fixtures import anthropic_body, capture_line, write_jsonl

    def usage(write: int, read: int) -> dict:
        return {"body": {"usage": {"input_tokens": 5, "cache_creation_input_tokens": write, "cache_read_input_tokens": read, "output_tokens": 9}}}

    anthropic = write_jsonl(tmp_path / "anthropic.jsonl", [
        capture_line(anthropic_body(messages=2), usage(2_000, 0)),
        capture_line(anthropic_body(messages=4), usage(150, 2_000), sent=1748554710.0),
    ])
    rules = _audit(capsys, str(anthropic))["requests"]
    stepped = _audit(capsys, str(anthropic), "--read-step", "anthropic=64")["requests"]
    assert rules[1]["predicted_cache_read"] > 64 and rules[1]["predicted_cache_read"] % 64
    assert [r["predicted_cache_read"] for r in stepped] == [r["predicted_cache_read"] // 64 * 64 for r in rules]
    deepseek = str(_deepseek_capture(tmp_path / "deepseek.jsonl"))
    rules = _audit(capsys, deepseek)["requests"]
    to_the_token = _audit(capsys, deepseek, "--read-step", "deepseek=1")
    # DeepSeek's model replays in its 128-token units, the read counted to the token (not down to
    # a unit of the provider's tokens): never less, and within the previous prompts (3,000, 3,500).
    pairs = [(r["predicted_cache_read"], t["predicted_cache_read"]) for r, t in zip(rules, to_the_token["requests"], strict=True)]
    assert pairs == [(0, 0), (2_944, 2_950), (3_328, 3_466)]
    assert any("deepseek reads counted in steps of 1 token(s) for 3 request(s)" in n for n in to_the_token["notes"])


def test_deepseeks_measured_units_are_said_in_the_notes(tmp_path, capsys) -> None:
    """DeepSeek's reads are counted in whole 128-token units (64 before V4), a measured rule that
    no document gives; on main the audit's notes did not say it."""
    notes = _audit(capsys, str(_deepseek_capture(tmp_path / "deepseek.jsonl")))["notes"]
    said = [n for n in notes if n.startswith("deepseek reads counted in checkpoints")]
    assert len(said) == 1 and "3 request(s) of deepseek-v4-flash in steps of 128 tokens" in said[0], notes
    assert "measured, not documented" in said[0] and "--read-step deepseek=1" in said[0]
    assert not [n for n in _audit(capsys, str(tmp_path / "deepseek.jsonl"), "--read-step", "deepseek=1")["notes"]
                if n.startswith("deepseek reads counted in checkpoints")]
