"""Gemini 2.5's implicit-cache reads, as Gemini CLI homes committed to public repositories show
them (fabien-lessirard/dotfiles, brexp/infra; tests/realdata/test_committed_homes_realdata.py):
a read trails the previous prompt by a few hundred tokens rather than keeping to the last read,
the first call after the lane switched model reads nothing, and (every Gemini model) a call sent
more than ten minutes after its lane's previous one reads nothing; and (aim's benchmark runs)
a Gemini 3 Pro read moves up, short of the previous prompt, once that one left 6,000 tokens
uncached. Each test fails on the code before its rule (checked): it predicted the last read,
after a switch the model's own earlier prompt, after ten idle minutes the previous prompt, on 3
Pro the last read."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit


def _session(path: Path, calls: list[tuple[str, int, int]], at: list[int] | None = None) -> Path:
    """A Gemini CLI JSON session: one user turn, then a model message per ``(model, prompt,
    cached)``, 3 s apart (``at``: each one's seconds after the start instead)."""
    start = "2025-11-07T03:00:00.000Z"
    zero = datetime(2025, 11, 7, 3, tzinfo=timezone.utc)
    messages: list[dict] = [{"id": "u", "timestamp": start, "type": "user", "content": "go"}]
    for i, (model, prompt, cached) in enumerate(calls):
        sent = zero + timedelta(seconds=at[i] if at else 3 * i + 1)
        messages.append({"id": f"m{i}", "timestamp": sent.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "type": "gemini",
                         "content": "ok", "model": model,
                         "tokens": {"input": prompt, "output": 20, "cached": cached, "thoughts": 5, "tool": 0,
                                    "total": prompt + 25}})
    path.write_text(json.dumps({"sessionId": "s", "projectHash": "h", "startTime": start, "lastUpdated": start,
                                "messages": messages}))
    return path


def test_a_2_5_read_trails_the_previous_prompt_not_the_last_read(tmp_path: Path) -> None:
    # gemini-2.5-flash: each read is the previous prompt less a few hundred tokens (20,700 of
    # 21,000, then 21,600 of 22,000), not the read before it (the code before predicted 20,700 for
    # the fourth: 4% under). Predicted: at least the previous prompt less 500.
    flash = _session(tmp_path / "flash.json", [("gemini-2.5-flash", 20_000, 0), ("gemini-2.5-flash", 21_000, 19_600),
                                                ("gemini-2.5-flash", 22_000, 20_700), ("gemini-2.5-flash", 23_000, 21_600)])
    rows = run_audit([flash]).rows
    assert [r.predicted_cache_read for r in rows] == [0, 0, 20_500, 21_500]  # (the second: unread_until_read)
    assert [r.read_within for r in rows] == [True, False, True, True]
    # gemini-2.5-pro trails by more (1,000) and moves up only once the previous call left 2,000
    # tokens or more uncached past its read: the third call's previous one left 1,500, so it keeps
    # to 19,500; the fourth's left 3,400, so it is predicted 23,900 - 1,000.
    pro = _session(tmp_path / "pro.json", [("gemini-2.5-pro", 20_000, 0), ("gemini-2.5-pro", 21_000, 19_500),
                                            ("gemini-2.5-pro", 22_900, 19_450), ("gemini-2.5-pro", 23_900, 22_000)])
    rows = run_audit([pro]).rows
    assert [r.predicted_cache_read for r in rows] == [0, 0, 19_500, 21_900]
    assert all(r.read_within for r in rows[2:])


def test_a_2_5_call_right_after_a_model_switch_reads_nothing(tmp_path: Path) -> None:
    # Gemini CLI's router sends a turn to Flash or Pro; the first call after a switch read nothing
    # (fabien-lessirard/dotfiles: 88 of 151 such calls), neither the head nor the model's own
    # earlier prompt in the lane. The code before predicted Pro's earlier 12,000 for the fourth.
    log = _session(tmp_path / "switch.json", [("gemini-2.5-pro", 10_000, 0), ("gemini-2.5-pro", 12_000, 9_800),
                                               ("gemini-2.5-flash", 14_000, 0), ("gemini-2.5-pro", 16_000, 0),
                                               ("gemini-2.5-pro", 17_000, 15_800)])
    rows = run_audit([log]).rows
    assert [r.predicted_cache_read for r in rows] == [0, 0, 0, 0, 16_000]  # (the second: unread_until_read)
    assert all(r.read_within for r in rows[2:])
    # Gemini 3 keeps the chain model's prediction: a switch there read the head (tests/realdata,
    # the plan-mode session).
    three = _session(tmp_path / "three.json", [("gemini-3-pro-preview", 10_000, 0), ("gemini-3-pro-preview", 12_000, 9_500),
                                                ("gemini-3-flash-preview", 14_000, 0), ("gemini-3-pro-preview", 16_000, 0)])
    assert run_audit([three]).rows[3].predicted_cache_read > 0


def test_a_call_after_ten_idle_minutes_reads_nothing(tmp_path: Path) -> None:
    # A call sent more than 10 min after its lane's previous one read nothing in most cases (the
    # Gemini sessions tests/realdata reads: 96 of 136 such calls, 2.5 and 3 alike), neither the previous
    # prompt nor the head. A call is sent when the message before it was written: the third here
    # 11 min after the second (the code before predicted the previous prompt, less the lag on
    # 2.5), the fifth 9 min after the fourth, still predicted to read.
    for model in ("gemini-2.5-flash", "gemini-3-pro-preview"):
        log = _session(tmp_path / f"{model}.json", [(model, 20_000, 0), (model, 21_000, 20_000), (model, 22_000, 0),
                                                    (model, 23_000, 22_000), (model, 24_000, 23_000)],
                       at=[1, 661, 670, 670 + 9 * 60, 1_300])
        rows = run_audit([log]).rows
        assert [r.gap_ms for r in rows] == [None, 1_000, 660_000, 9_000, 540_000]
        # (2.5's second call reads nothing: its lane has read nothing yet, unread_until_read.)
        assert [r.predicted_cache_read for r in rows][:3] == [0, 0 if "2.5" in model else 20_000, 0], model
        assert rows[2].read_within and rows[4].predicted_cache_read >= 22_000


def test_a_3_flash_call_reads_after_15_idle_minutes_but_not_after_25(tmp_path: Path) -> None:
    # gemini-3-flash-preview calls sent 10 to 20 minutes after their lane's previous one mostly read
    # (Gemini CLI homes: 3 of 28 read 0, 11 most of the previous prompt; damini-ai's after 10m04s and
    # 15m04s): on 3 Flash the idle rule waits 20 minutes. A call is sent when the message before it
    # was written: the third here 15 min after the second (the code before predicted 0), the fifth
    # 25 min after the fourth (nothing, as before).
    model = "gemini-3-flash-preview"
    log = _session(tmp_path / "flash.json", [(model, 20_000, 0), (model, 21_000, 19_620), (model, 22_000, 19_620),
                                             (model, 23_000, 19_620), (model, 24_000, 0)],
                   at=[1, 1 + 15 * 60, 11 + 15 * 60, 11 + 40 * 60, 20 + 40 * 60])
    rows = run_audit([log]).rows
    assert [r.gap_ms for r in rows][2:] == [900_000, 10_000, 1_500_000]
    assert rows[2].predicted_cache_read == 19_620 and rows[2].read_within
    assert rows[4].predicted_cache_read == 0 and rows[4].read_within
    # 3 Pro and 3 Flash-Lite keep ten minutes (measured: 3.x Pro's three such calls read a head or 0).
    for other in ("gemini-3-pro-preview", "gemini-3-flash-lite-preview"):
        log = _session(tmp_path / f"{other}.json", [(other, 20_000, 0), (other, 21_000, 19_620), (other, 22_000, 19_620)],
                       at=[1, 1 + 15 * 60, 10 + 15 * 60])
        assert run_audit([log]).rows[2].predicted_cache_read == 0, other


def test_a_3_pro_read_moves_up_only_after_6000_tokens_left_uncached(tmp_path: Path) -> None:
    # Gemini 3 and 3.1 Pro keep to the last read while the previous call left less than 6,000
    # tokens uncached past it (aim's 3.1 Pro: 13 of 191 reads moved up below 3,000, 36 of 137 from
    # 3,000 to 6,000, 27 of 37 above), then read about the previous prompt (short by a median
    # 1,572): predicted that prompt less 2,000. The code before kept the fifth call to 19,600.
    model = "gemini-3.1-pro-preview"
    log = _session(tmp_path / "pro.json", [(model, 20_000, 0), (model, 21_000, 19_600), (model, 23_000, 19_600),
                                            (model, 30_000, 19_600), (model, 31_000, 28_000)])
    rows = run_audit([log]).rows
    assert [r.predicted_cache_read for r in rows] == [0, 20_000, 19_600, 19_600, 28_000]
    assert all(r.read_within for r in rows)
    # Measured on 3 and 3.1 Pro only: a later Pro keeps to the last read (the code before this
    # line took any 3.x Pro, 3.5 included, to move up).
    later = _session(tmp_path / "later.json", [("gemini-3.5-pro-preview", prompt, read) for prompt, read in
                                               ((20_000, 0), (21_000, 19_600), (23_000, 19_600), (30_000, 19_600), (31_000, 28_000))])
    assert run_audit([later]).rows[4].predicted_cache_read == 19_600


def test_the_idle_rule_needs_both_send_times(tmp_path: Path) -> None:
    # A call whose log gives no send time is on the audit's counter ticks, which an epoch time does
    # not share: the idle before the next call is unknown, not 56 years, and that call is predicted
    # as any other (the code before read the gap as idle and predicted 0). A pi session (OpenClaw's,
    # through google-gemini-cli) whose first exchange has no timestamp.
    lines: list[dict] = [{"type": "session", "version": 3, "id": "g", "timestamp": "2026-03-21T13:33:20.000Z", "cwd": "/w"},
                         {"type": "model_change", "id": "c", "timestamp": "2026-03-21T13:33:20.000Z",
                          "provider": "google-gemini-cli", "modelId": "gemini-3-flash-preview"}]
    for i, (uncached, read) in enumerate([(20_000, 0), (1_000, 20_000)]):
        ts = {"timestamp": 1_774_100_000_000 + 5_000 * i} if i else {}
        lines.append({"type": "message", **ts, "message": {"role": "user", "content": [{"type": "text", "text": f"ask {i}"}], **ts}})
        lines.append({"type": "message", **ts, "message": {
            "role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}], "api": "google-gemini-cli",
            "provider": "google-gemini-cli", "model": "gemini-3-flash-preview", "stopReason": "stop", **ts,
            "usage": {"input": uncached, "output": 40, "cacheRead": read, "cacheWrite": 0, "totalTokens": uncached + 40 + read}}})
    log = tmp_path / "pi.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rows = run_audit([log]).rows
    assert rows[0].timestamp is None and rows[1].predicted_cache_read > 0


def test_a_2_5_lane_that_has_read_nothing_yet_reads_nothing(tmp_path: Path) -> None:
    # A Gemini CLI session's first call read nothing; the next call of the lane read nothing too in
    # about half the homes' such calls (KuantumQuest/MyDotFiles-HyDE 30 of 58 calls before the
    # lane's first read, fabien-lessirard 13 of 49, IDAHO-VAULT 22 of 50, brexp 8 of 20), where
    # the code before predicted the whole previous prompt (20,000 here). Once the lane has read,
    # a read of 0 is a lapse as before (the fourth: the previous prompt less the 2.5 Flash lag,
    # 21,500).
    log = _session(tmp_path / "cold.json", [("gemini-2.5-flash", 20_000, 0), ("gemini-2.5-flash", 21_000, 0),
                                             ("gemini-2.5-flash", 22_000, 21_000), ("gemini-2.5-flash", 22_500, 0)])
    rows = run_audit([log]).rows
    assert [r.predicted_cache_read for r in rows][:3] == [0, 0, 0]
    assert rows[1].read_within
    assert rows[3].predicted_cache_read == 21_500
    # Gemini 3 keeps the chain model's prediction (measured on 2.5 only).
    three = _session(tmp_path / "three.json", [("gemini-3.1-pro-preview", 20_000, 0), ("gemini-3.1-pro-preview", 21_000, 0)])
    assert run_audit([three]).rows[1].predicted_cache_read == 20_000


def test_2_5_flash_lite_is_left_out_of_unread_until_read(tmp_path: Path) -> None:
    # Unmeasured on Flash-Lite (fabien-lessirard's 59 calls: no prediction changes): its second
    # call keeps the chain model's prediction, the whole previous prompt (0 before).
    lite = _session(tmp_path / "lite.json", [("gemini-2.5-flash-lite", 20_000, 0), ("gemini-2.5-flash-lite", 21_000, 0)])
    assert run_audit([lite]).rows[1].predicted_cache_read == 20_000
    flash = _session(tmp_path / "flash.json", [("gemini-2.5-flash", 20_000, 0), ("gemini-2.5-flash", 21_000, 0)])
    assert run_audit([flash]).rows[1].predicted_cache_read == 0


def test_the_3_flash_idle_limit_is_20_minutes_and_a_zeroed_call_names_its_limit(tmp_path: Path) -> None:
    # Probed on both sides of 20 minutes (15 and 25 alone pass with a limit anywhere between; a
    # call is sent when the message before it was written, so the gap is the second ``at``), and
    # a call the idle rule predicted to read nothing says which limit applied: 20 min on
    # gemini-3-flash, 10 on any other Gemini model (gemini-3.5-flash among them: the 20-minute
    # rule's pattern is gemini-3-flash, not Flash-Lite). The code before named no limit.
    model = "gemini-3-flash-preview"
    for minutes, predicted in ((19, 19_620), (21, 0)):
        log = _session(tmp_path / f"flash{minutes}.json", [(model, 20_000, 0), (model, 21_000, 19_620), (model, 22_000, 0)],
                       at=[1, 1 + minutes * 60, 10 + minutes * 60])
        row = run_audit([log]).rows[2]
        assert (row.gap_ms, row.predicted_cache_read) == (minutes * 60_000, predicted), minutes
        assert ("past the 20m00s idle" in row.detail) == (predicted == 0), row.detail
    for other in ("gemini-3.5-flash", "gemini-3-flash-lite-preview", "gemini-2.5-flash"):
        log = _session(tmp_path / f"{other}.json", [(other, 20_000, 0), (other, 21_000, 19_620), (other, 22_000, 21_000)],
                       at=[1, 1 + 15 * 60, 10 + 15 * 60])
        row = run_audit([log]).rows[2]
        assert row.predicted_cache_read == 0, other
        assert f"sent 15m00s after its lane's previous call, past the 10m00s idle after which the audit predicts a {other} call reads nothing" in row.detail, row.detail


def test_a_lane_back_on_a_model_idles_since_that_models_own_last_call(tmp_path: Path) -> None:
    # wingorithm/Vibe-Coding-Comparison-Project's Gemini CLI session (tests/realdata/
    # test_unmeasured_gemini_openclaw_realdata.py): 3 Flash, then 3.1 Pro for a few calls, then 3
    # Flash again 43 min after its own last call but 1.5 min after the lane's last (Pro) call: it
    # read nothing. The idle was counted from the lane's previous call, so Flash's 43-minute-old
    # entry was predicted read (47,088 tokens there). A call is sent when the message before it
    # was written: Flash's calls are sent at 0 and 1 s, Pro's at 25 min, Flash's third 5 s later.
    flash, pro = "gemini-3-flash-preview", "gemini-3.1-pro-preview"
    log = _session(tmp_path / "back.json", [(flash, 20_000, 0), (flash, 21_000, 19_620), (pro, 22_000, 0), (flash, 23_000, 0)],
                   at=[1, 1_500, 1_505, 1_510])
    row = run_audit([log]).rows[3]
    assert (row.gap_ms, row.predicted_cache_read, row.read_within) == (5_000, 0, True)
    assert ("predicted to read nothing: sent 25m04s after its lane's previous gemini-3-flash-preview call, past the "
            "20m00s idle") in row.detail, row.detail


def test_a_call_predicted_nothing_before_its_lane_read_still_names_the_idle_limit(tmp_path: Path) -> None:
    # dogmaai/magi-ui's Gemini CLI session (2025-09, gemini-2.5-pro): the second call, sent 3h01m
    # after the first, read 0. Its lane had read nothing yet, so unread_until_read predicted 0
    # before the idle rule looked; the code before then left the idle limit out of the row's
    # detail (it named it only where the idle alone zeroed a read), blaming the provider with the
    # 3h idle unremarked. The row names unread_until_read as what predicted nothing and the idle
    # past the limit as an added fact (it did not decide: the prediction is 0 without it); the
    # code before named the idle as the reason. The prediction is unchanged.
    model = "gemini-2.5-pro"
    log = _session(tmp_path / "idle.json", [(model, 8_000, 0), (model, 8_400, 0), (model, 8_800, 0), (model, 9_200, 8_500)],
                   at=[1, 1 + 3 * 3600, 30 + 3 * 3600, 60 + 3 * 3600])
    rows = run_audit([log]).rows
    assert [r.predicted_cache_read for r in rows][:3] == [0, 0, 0]
    assert rows[2].gap_ms == 3 * 3600_000
    assert (f"; predicted to read nothing: its lane had read nothing yet, and a {model} call whose lane has read nothing "
            "reads nothing (unread_until_read, a measured rule); also sent 3h00m after its lane's previous call, past the "
            f"10m00s idle after which the audit predicts a {model} call reads nothing") in rows[2].detail, rows[2].detail
    assert "predicted to read nothing: sent" not in rows[2].detail
    # Within the limit nothing is added: the last call, 29 s after the one before.
    assert "idle after which" not in rows[3].detail and "idle after which" not in rows[1].detail


def test_a_prefix_too_short_to_cache_sent_past_the_idle_limit_gets_no_idle_words(tmp_path: Path) -> None:
    # A prompt below the model's minimum is predicted to read nothing by the chain model, idle or
    # not: the idle rule decided nothing and adds nothing, so the row's detail stays the
    # minimum's (the code before appended "predicted to read nothing: sent 3h00m after ..." to any
    # zero prediction past the limit). A call the idle rule did zero still names it (the control).
    model = "gemini-2.5-pro"
    short = _session(tmp_path / "short.json", [(model, 500, 0), (model, 600, 0), (model, 700, 0)], at=[1, 1 + 3 * 3600, 30 + 3 * 3600])
    row = run_audit([short]).rows[2]
    assert (row.predicted_cache_read, row.gap_ms, row.cause) == (0, 3 * 3600_000, "below-minimum")
    assert "idle" not in row.detail and "unread_until_read" not in row.detail, row.detail
    read = _session(tmp_path / "read.json", [(model, 8_000, 0), (model, 8_400, 7_900), (model, 8_800, 0), (model, 9_200, 0)],
                    at=[1, 30, 30 + 3 * 3600, 60 + 3 * 3600])
    row = run_audit([read]).rows[3]
    assert row.predicted_cache_read == 0
    assert ("; predicted to read nothing: sent 3h00m after its lane's previous call, past the 10m00s idle") in row.detail, row.detail
    assert "unread_until_read" not in row.detail
