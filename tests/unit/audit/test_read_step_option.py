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
    assert [r["predicted_cache_read"] for r in to_the_token["requests"]] == [0, 9_000, 17_000]
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
