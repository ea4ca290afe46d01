"""Gemini's reads keep to the checkpoint last read: a request that extends its lane's previous one
is predicted from what that one reported reading (never its own report), raised to the newest
checkpoint on a model read in checkpoints; ``--no-follow-reads`` predicts the shared prefix.
Both tests fail on main, which predicted every read as the last checkpoint inside the previous
prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.fixtures import gemini_session


def _session(path: Path, model: str, calls: list[tuple[int, int]]) -> Path:
    return gemini_session(path, model, calls, session="f", at="2026-03-26T05:00")


def test_a_pro_read_stays_on_the_checkpoint_the_lane_last_read(tmp_path: Path) -> None:
    # gemini-3.1-pro-preview reads to the token, but in March 2026 its reads lagged the prompts:
    # 7,000 of 9,000, then 7,050 and 7,020 while the prompt grew to 12,600 (the same checkpoint,
    # its count drifting), then a miss; the call after it is still predicted at the checkpoint read
    # before the miss (7,020), and this one jumped to about its previous prompt instead (12,900).
    # (Each call leaves under 6,000 tokens uncached past its read: past that a Pro read moves up,
    # tests/unit/audit/test_gemini_25_reads.py.)
    log = _session(tmp_path / "pro.jsonl", "gemini-3.1-pro-preview",
                   [(9_000, 0), (11_000, 7_000), (12_000, 7_050), (12_600, 7_020), (13_000, 0), (14_000, 12_900)])
    followed = run_audit([log])
    assert [r.predicted_cache_read for r in followed.rows] == [0, 9_000, 7_000, 7_050, 7_020, 7_020]
    assert [r.read_within for r in followed.rows] == [True, False, True, True, False, False]
    # A miss is still counted against the previous prompt, as before: only the prediction moved.
    plain = run_audit([log], follow_reads=False)
    assert [r.predicted_cache_read for r in plain.rows] == [0, 9_000, 11_000, 12_000, 12_600, 13_000]
    assert sum(r.read_within for r in plain.rows) == 2
    assert [r.lost_tokens for r in followed.rows] == [r.lost_tokens for r in plain.rows]
    assert [r.cause for r in followed.rows] == [r.cause for r in plain.rows]
    # Each best-effort miss says where its read stands against the previous request's.
    assert [r.cause for r in followed.rows][1:5] == ["provider-best-effort"] * 4
    assert followed.rows[2].detail.endswith("(it kept to the checkpoint the previous request read, 7,000)")
    assert followed.rows[3].detail.endswith("(it kept to the checkpoint the previous request read, 7,050)")
    assert followed.rows[4].detail.endswith("(it read nothing; the previous request read 7,020)")
    assert followed.rows[1].detail.endswith("not the agent's doing")  # the previous read nothing: no comparison
    note = next(n for n in followed.notes if "checkpoint the lane's previous request read" in n)
    assert "gemini: 4 request(s)" in note and "--no-follow-reads" in note
    assert not any("checkpoint the lane's previous request read" in n for n in plain.notes)


def test_a_read_of_nothing_leaves_the_checkpoint_read_before_it(tmp_path: Path) -> None:
    # 3.1 Pro, March 2026 (aim's sessions: 9 of the 11 reads after a mid-lane read of 0 that the
    # whole previous prompt missed came back to the checkpoint read before the 0, e.g. 22,515, 0,
    # then 22,237 of a 25,573-token previous prompt): the 0 is a lapse of that checkpoint, not its
    # end. Main predicted the whole previous prompt after a 0 (24,000: 9% over). (Each call
    # leaves under 6,000 tokens uncached past the read kept: past that a Pro read moves up.)
    log = _session(tmp_path / "lapse.jsonl", "gemini-3.1-pro-preview",
                   [(9_000, 0), (20_000, 8_000), (22_000, 19_500), (24_000, 0), (25_000, 19_300), (25_200, 0), (25_400, 0)])
    result = run_audit([log])
    assert [r.predicted_cache_read for r in result.rows][3:6] == [19_500, 19_500, 19_300]
    assert [r.read_within for r in result.rows][4:6] == [True, False]
    # Two reads of 0 in a row keep it too; a prompt that shrank or a new model would not.
    assert result.rows[6].predicted_cache_read == 19_300
    # Without following, the shared prefix as before.
    assert [r.predicted_cache_read for r in run_audit([log], follow_reads=False).rows][4:] == [24_000, 25_000, 25_200]


def test_a_read_the_prediction_missed_without_a_loss_says_why(tmp_path: Path) -> None:
    # A checkpoint that jumped to the previous prompt (7,000 followed, 12,000 read) and a read past the previous prompt
    # (15,600 of a 15,000-token previous prompt) lose nothing, so they have no cause; main left
    # their detail empty (78 such misses of the 1,906 calls of the public Gemini CLI sessions).
    log = _session(tmp_path / "up.jsonl", "gemini-3.1-pro-preview", [(9_000, 0), (12_000, 7_000), (15_000, 12_000), (18_000, 15_600)])
    rows = run_audit([log]).rows
    assert [r.cause for r in rows][2:] == [None, None] and [r.read_within for r in rows][2:] == [False, False]
    assert rows[2].detail.startswith("read 5,000 tokens more than predicted: the provider's checkpoint moved, which nothing in the log tells")
    assert rows[2].detail.endswith("best effort (no saving guaranteed); no loss")
    assert rows[3].detail.startswith("read 3,600 tokens more than predicted, 600 past the previous prompt: the provider cached into")


def test_a_flash_read_is_raised_to_a_newer_checkpoint_but_not_lowered_to_one(tmp_path: Path) -> None:
    # gemini-3-flash reads in 3,924-token checkpoints: a read that reached 14,700 of a 15,000-token
    # prompt stays there (the grid's last point inside 15,500 is 11,772, lower), and once the
    # prompt passes the next point (19,620 inside 20,000) the read is predicted there.
    log = _session(tmp_path / "flash.jsonl", "gemini-3-flash-preview",
                   [(10_000, 0), (15_000, 9_500), (15_500, 14_700), (20_000, 14_650), (21_000, 19_500)])
    followed = run_audit([log])
    assert [r.predicted_cache_read for r in followed.rows] == [0, 7_848, 11_772, 14_700, 19_620]
    assert [r.read_within for r in followed.rows] == [True, False, False, True, True]
    plain = run_audit([log], follow_reads=False)
    assert [r.predicted_cache_read for r in plain.rows] == [0, 7_848, 11_772, 11_772, 19_620]


def test_no_follow_reads_is_an_audit_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = str(_session(tmp_path / "pro.jsonl", "gemini-3.1-pro-preview", [(9_000, 0), (12_000, 7_000), (15_000, 7_050)]))
    assert main(["audit", log, "--format", "json", "--quiet"]) == 0
    followed = json.loads(capsys.readouterr().out)
    assert main(["audit", log, "--format", "json", "--quiet", "--no-follow-reads"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert [r["predicted_cache_read"] for r in followed["requests"]] == [0, 9_000, 7_000]
    assert [r["predicted_cache_read"] for r in plain["requests"]] == [0, 9_000, 12_000]
    assert not any(n.startswith("--no-follow-reads:") for n in plain["notes"])
    # On logs with no Gemini or MiniMax request it changes nothing, and says so (it was silent).
    pi = Path(__file__).parent.parent / "logs" / "fixtures" / "pi.jsonl"
    assert main(["audit", str(pi), "--format", "json", "--quiet", "--no-follow-reads"]) in (0, 1)
    assert any(n.startswith("--no-follow-reads: no request to a provider") and n.endswith("nothing changed")
               for n in json.loads(capsys.readouterr().out)["notes"])
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    assert "--no-follow-reads" in capsys.readouterr().out


def test_a_prompt_that_shrank_is_not_followed(tmp_path: Path) -> None:
    # The third prompt is shorter than the second: something inside it changed, so it does not
    # hold the checkpoint the second read for certain; the chain model's walk back decides (the
    # first prompt, 9,000 tokens), as without following.
    log = _session(tmp_path / "shrank.jsonl", "gemini-3.1-pro-preview", [(9_000, 0), (12_000, 7_000), (11_000, 6_500)])
    assert [r.predicted_cache_read for r in run_audit([log]).rows] == [0, 9_000, 9_000]


def test_a_flash_read_moves_up_only_after_a_call_left_3000_tokens_uncached(tmp_path: Path) -> None:
    # gemini-3-flash, March 2026 (aim's sessions): a read moves up to a newer checkpoint almost only
    # after a call left 3,000 tokens or more uncached past the one it read. The second call read
    # 9,224 of 12,000 (2,776 left): the third keeps to 9,224, where main raised it to the grid's last
    # point inside 12,000 (11,772) and missed its read of 9,300. The third left 14,500 - 9,300 =
    # 5,200 and the fourth 16,000 - 11,700 = 4,300: the next reads move up to the grid's points
    # inside 14,500 (11,772) and 16,000 (15,696), as before.
    log = _session(tmp_path / "flash.jsonl", "gemini-3-flash-preview",
                   [(10_000, 0), (12_000, 9_224), (14_500, 9_300), (16_000, 11_700), (20_000, 15_600)])
    rows = run_audit([log]).rows
    assert [r.predicted_cache_read for r in rows] == [0, 7_848, 9_224, 11_772, 15_696]
    assert [r.read_within for r in rows] == [True, False, True, True, True]
    # The prediction moved, not the loss: each read is still counted against the previous prompt
    # (its last grid point, 11,772, less the 9,300 read: 2,472 lost), and the miss says why the read
    # stayed.
    assert [r.lost_tokens for r in rows] == [r.lost_tokens for r in run_audit([log], follow_reads=False).rows]
    assert (rows[2].lost_tokens, rows[2].cause) == (2_472, "provider-best-effort")
    assert rows[2].detail.endswith("(it kept to the checkpoint the previous request read, 9,224: that request left 2,776 tokens "
                                   "uncached past it, fewer than the ~3,000 after which this model's reads move up, measured)")
