"""OpenAI's cache lifetime, decided per request: the body's ``prompt_cache_retention`` where the
model offers it, else the model's documented default on the day the request was sent
(simulator/providers/openai.py). Hand-computed stories on two-call Codex rollouts: call 1 sends a
20,000-token prompt, call 2 extends it 20 minutes later. With 24 h retention call 2 reads call 1's
prompt (and its 50 output tokens, sent back) in 128-token steps: 20,050 // 128 * 128 = 19,968."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.simulator.providers.openai import RULES, retention
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.precedence import ttl_ms
from prefixbench.workloads.audit.whatif import what_if

HIT = 19_968


def rollout(path: Path, model: str, day: str, gap_min: int, second_read: int) -> Path:
    """Two Codex calls on ``day``, ``gap_min`` minutes apart; call 2 reports ``second_read`` cached."""

    def at(minute: int, second: int) -> str:
        return f"{day}T10:{minute:02d}:{second:02d}.000Z"

    lines = [
        {"timestamp": at(0, 0), "type": "session_meta", "payload": {"id": "s", "cli_version": "0.60.0", "model_provider": "openai"}},
        {"timestamp": at(0, 0), "type": "turn_context", "payload": {"model": model, "effort": "high"}},
    ]
    for minute, prompt, read in ((0, 20_000, 0), (gap_min, 21_000, second_read)):
        lines += [
            {"timestamp": at(minute, 1), "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"turn {minute}"}]}},
            {"timestamp": at(minute, 3), "type": "response_item",
             "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
        ]
        usage = {"input_tokens": prompt, "cached_input_tokens": read, "output_tokens": 50}
        lines.append({"timestamp": at(minute, 4), "type": "event_msg",
                      "payload": {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def second_call(path: Path):
    rows = [row for row in run_audit([path]).rows if row.reported_cache_read is not None]
    assert len(rows) == 2
    return rows[1]


def test_a_20_minute_gap_on_gpt_5_5_is_a_hit(tmp_path: Path) -> None:
    # gpt-5.5 keeps a prefix 24 h, whatever the body asks: the read is predicted, no cause.
    row = second_call(rollout(tmp_path / "r.jsonl", "gpt-5.5", "2026-08-03", 20, HIT))
    assert (row.predicted_cache_read, row.cause) == (HIT, None)


def test_a_20_minute_gap_on_a_model_without_24h_retention_is_a_ttl_miss(tmp_path: Path) -> None:
    # gpt-4o keeps a prefix in memory only: 10 min idle (the documented 5-10 min's upper end).
    row = second_call(rollout(tmp_path / "r.jsonl", "gpt-4o", "2026-08-03", 20, 0))
    assert (row.predicted_cache_read, row.cause) == (0, "ttl-expired")
    assert "past the 10m00s TTL" in row.detail


def test_in_memory_keeps_a_prefix_ten_idle_minutes(tmp_path: Path) -> None:
    # In memory is "typically" 5 to 10 min of inactivity (the guide). In Codex rollouts of
    # 2025-11 to 2026-04, 18 of 24 calls sent 5 to 10 min after the one before read the
    # conversation's entry (BearTDK6/ba-pro, FabianLobosMendoza/Autos): the lower end predicted
    # none of them (main predicted 0 here); the upper end predicts the read, no cause.
    seven = second_call(rollout(tmp_path / "a.jsonl", "gpt-5.1-codex", "2026-01-15", 7, HIT))
    assert (seven.predicted_cache_read, seven.cause) == (HIT, None)
    # Past 10 min idle it is gone.
    eleven = second_call(rollout(tmp_path / "b.jsonl", "gpt-5.1-codex", "2026-01-15", 11, 0))
    assert (eleven.predicted_cache_read, eleven.cause) == (0, "ttl-expired")


def test_the_default_of_a_model_offering_both_is_dated(tmp_path: Path) -> None:
    # gpt-5.1 offers in_memory and 24h: before the API reference of 2026-06-01 a request that asked
    # nothing got in_memory (a 20-minute gap is a TTL miss), from it on 24h (a hit).
    before = second_call(rollout(tmp_path / "a.jsonl", "gpt-5.1-codex", "2026-05-31", 20, 0))
    after = second_call(rollout(tmp_path / "b.jsonl", "gpt-5.1-codex", "2026-06-01", 20, HIT))
    assert (before.predicted_cache_read, before.cause) == (0, "ttl-expired")
    assert (after.predicted_cache_read, after.cause) == (HIT, None)
    # The client could have asked 24h: the loss is recoverable. gpt-4o offers nothing longer
    # than 10 min, so its 20-minute miss is not.
    assert before.loss_class == "recoverable"
    assert second_call(rollout(tmp_path / "c.jsonl", "gpt-4o", "2026-05-31", 20, 0)).loss_class == "unavoidable"


def test_a_body_that_asks_in_memory_gets_10_minutes() -> None:
    from prefixbench.simulator.wire import Envelope, Request, user_text
    from prefixbench.workloads.logs.trace import TraceRequest

    def request(asked: str | None) -> TraceRequest:
        body = Request(Envelope("openai", "gpt-5.1"), (user_text("hi"),), retention=asked)
        return TraceRequest(file="f", line=1, lane="main", lane_kind="main", seq=0, sent_ms=None, ready_ms=None,
                            provider="openai", model="gpt-5.1", body=body)

    assert ttl_ms(request("in_memory")) == 10 * 60_000
    assert ttl_ms(request("24h")) == 24 * 3_600_000
    assert ttl_ms(request(None)) == 24 * 3_600_000  # asked nothing, sent at an unknown time: today's default


@pytest.mark.parametrize(
    ("model", "asked", "day", "zdr", "expected"),
    [
        ("gpt-5.5", "in_memory", None, False, "24h"),  # 24h only
        ("gpt-5.5-pro", None, "2025-12-01", True, "24h"),
        ("gpt-5.1", None, "2026-05-31", False, "in_memory"),  # before the documented default
        ("gpt-5.1", None, "2026-06-01", False, "24h"),
        ("gpt-5.1", None, "2026-06-01", True, "in_memory"),  # a ZDR organization
        ("gpt-5.1", "24h", "2025-12-01", True, "24h"),  # the body decides
        ("openai/gpt-4.1-2025-04-14", None, None, False, "24h"),  # vendor part and snapshot date ignored
        ("gpt-4o", "24h", None, False, "in_memory"),  # not offered
        ("gpt-5-mini", None, None, False, "in_memory"),  # not on the guide's list
        ("gpt-5.6-sol", None, None, False, "30m"),  # prompt_cache_options.ttl, a minimum
        ("gpt-6.2-sol", "12h", None, False, "12h"),  # its model page prices a 12-hour cache write
        ("gpt-6.2-sol", None, "2026-12-01", False, "30m"),  # asked nothing: 30 min
        ("gpt-6.2-astra", "12h", None, False, "30m"),  # no page seen names it for Astra
        ("gpt-6.1-sol", "12h", None, False, "30m"),
        ("gpt-5.1", "12h", "2026-05-20", False, "in_memory"),  # not a pre-5.6 retention
    ],
)
def test_the_documented_table(model: str, asked: str | None, day: str | None, zdr: bool, expected: str) -> None:
    from datetime import datetime, timezone

    sent = None if day is None else int(datetime.fromisoformat(day).replace(tzinfo=timezone.utc).timestamp() * 1000)
    assert retention(model, asked, sent, zdr) == expected


def test_the_longest_lifetime_follows_the_model() -> None:
    # What decides whether a TTL miss was avoidable (losses.py).
    assert RULES.longest_ttl_ms("gpt-5.1") == 24 * 3_600_000
    assert RULES.longest_ttl_ms("gpt-4o") == 10 * 60_000
    assert RULES.longest_ttl_ms("gpt-5.6-sol") == 30 * 60_000
    assert RULES.longest_ttl_ms("gpt-6.2-sol") == 12 * 3_600_000
    assert RULES.longest_ttl_ms("gpt-6.2-astra") == 30 * 60_000


def written_rollout(path: Path, model: str, gap_min: int) -> Path:
    """Two Codex calls on 2026-12-01, ``gap_min`` minutes apart, each reading nothing and writing
    its whole prompt (``cache_write_input_tokens``, GPT-5.6 on)."""
    rollout(path, model, "2026-12-01", gap_min, 0)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        info = line["payload"].get("info") if line["type"] == "event_msg" else None
        if info:
            for usage in (info["total_token_usage"], info["last_token_usage"]):
                usage["cache_write_input_tokens"] = usage["input_tokens"]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_gpt_6_2_sol_body_asking_12h_keeps_its_prefix_12_hours_and_the_note_says_so() -> None:
    from prefixbench.simulator.wire import Envelope, Request, user_text
    from prefixbench.workloads.audit.core import retention_notes
    from prefixbench.workloads.logs.trace import TraceRequest

    def request(model: str, asked: str | None) -> TraceRequest:
        body = Request(Envelope("openai", model), (user_text("hi"),), retention=asked)
        return TraceRequest(file="f", line=1, lane="main", lane_kind="main", seq=0, sent_ms=None, ready_ms=None,
                            provider="openai", model=model, body=body)

    assert ttl_ms(request("gpt-6.2-sol", "12h")) == 12 * 3_600_000
    assert ttl_ms(request("gpt-6.2-sol", None)) == 30 * 60_000
    assert ttl_ms(request("gpt-6.2-astra", "12h")) == 30 * 60_000
    (note,) = retention_notes([request("gpt-6.2-sol", "12h")])
    assert "1 request(s) as their body or --openai-zdr asked: 12h (GPT-6.2 Sol's 12-hour retention)" in note


def test_a_40_minute_gap_on_gpt_6_2_sol_is_recoverable_with_12h_retention(tmp_path: Path) -> None:
    # 30 min by default: 40 idle minutes expire the prefix. The page's 12-hour retention would
    # have kept it, so the miss is recoverable, not unavoidable (past the longest lifetime).
    row = second_call(written_rollout(tmp_path / "r.jsonl", "gpt-6.2-sol", 40))
    assert (row.cause, row.loss_class) == ("ttl-expired", "recoverable")


def test_the_ttl_what_if_asks_12h_on_gpt_6_2_sol_and_bills_its_writes_at_the_12h_price(tmp_path: Path) -> None:
    # Asked for 12 h, call 2 reads call 1's 20,000-token prompt (19,968 in 128-token steps), and
    # every write bills at the page's 12-hour price, 5 / M, not the 30-minute 2.50 / M:
    # call 1: its 20,000 written tokens cost 0.05 more; call 2: 21,000 written (0.0525) become
    # 19,968 read at 0.10 / M (0.0019968) and 1,032 written at 5 / M (0.00516): 0.0453432 less.
    from decimal import Decimal

    requests, summaries = load_trace([written_rollout(tmp_path / "r.jsonl", "gpt-6.2-sol", 40)])
    (longer,) = what_if(list(requests), list(summaries), ["ttl-1h"])
    assert longer.applies and longer.tokens_to_read == HIT
    first, second = sorted(longer.changes, key=lambda c: c.index)
    assert (first.counterfactual_write, first.counterfactual_write_1h) == (20_000, 20_000)
    assert (second.counterfactual_read, second.counterfactual_write_1h) == (HIT, 1_032)
    assert longer.saved_usd == Decimal("0.0453432") - Decimal("0.05")  # one reuse does not pay the 2x write
    (shorter,) = what_if(list(requests), list(summaries), ["ttl-5m"])
    assert shorter.applies and shorter.requests_changed == 0  # 30 min already
    (auto,) = what_if(list(requests), list(summaries), ["ttl-auto"])
    # The lane keeps 30 min (12 h costs more than it saves here), said in the 12h choice's words.
    assert auto.detail.startswith("12h on 0 of 1 lane(s) picking gpt-6.2-sol's prompt cache retention")


def test_the_ttl_advice_names_the_12_hour_retention_for_gpt_6_2_sol() -> None:
    from prefixbench.workloads.audit.advice import _ttl_change
    from prefixbench.workloads.audit.whatif import lifetime_knobs

    assert lifetime_knobs([("openai", "gpt-6.2-sol")]) == (False, frozenset({"12h"}))
    assert lifetime_knobs([("openai", "gpt-6.2-astra")]) == (False, frozenset())
    assert lifetime_knobs([("openai", "gpt-5.1"), ("anthropic", "claude-opus-5")]) == (True, frozenset({"24h"}))
    change = _ttl_change("ttl-1h", lifetime_knobs([("openai", "gpt-6.2-sol")]))
    assert "12-hour prompt cache retention" in change and "2x the 30-minute write" in change and "24h" not in change
    both = _ttl_change("ttl-1h", lifetime_knobs([("openai", "gpt-6.2-sol"), ("openai", "gpt-5.1")]))
    assert 'prompt_cache_retention "24h"' in both and "12-hour" in both


def test_openai_zdr_keeps_an_unasked_request_in_memory(tmp_path: Path) -> None:
    from prefixbench.workloads.audit.core import assume_zdr, audit_requests

    requests, summaries = load_trace([rollout(tmp_path / "r.jsonl", "gpt-5.1", "2026-08-03", 20, HIT)])
    result = audit_requests(assume_zdr(list(requests)), summaries)
    second = [row for row in result.rows if row.reported_cache_read is not None][1]
    # In memory, the prefix is predicted gone after 20 min; the log's read is no loss, so no cause.
    assert (second.predicted_cache_read, second.cause) == (0, None)
    assert any("2 request(s) as their body or --openai-zdr asked: in_memory (10 min)" in note for note in result.notes)


def test_the_ttl_what_if_re_simulates_24h_retention_on_openai_lanes(tmp_path: Path) -> None:
    # gpt-5.1 in May 2026: in_memory by default, so the 20-minute gap lost the read. Asked for
    # 24h (same price), call 2 reads 19,968 more tokens.
    requests, summaries = load_trace([rollout(tmp_path / "r.jsonl", "gpt-5.1", "2026-05-20", 20, 0)])
    (longer,) = what_if(list(requests), list(summaries), ["ttl-1h"])
    assert longer.applies and (longer.requests_changed, longer.tokens_to_read) == (1, HIT)
    assert longer.saved_usd is not None and longer.saved_usd > 0
    (shorter,) = what_if(list(requests), list(summaries), ["ttl-5m"])
    assert shorter.applies and shorter.requests_changed == 0  # in_memory already


def test_the_cli_flag_and_the_note_name_the_assumption(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from prefixbench.reports.cli import main

    log = rollout(tmp_path / "r.jsonl", "gpt-5.1", "2026-08-03", 20, 0)
    assert main(["audit", str(log), "--format", "json", "--quiet"]) in (0, 1)
    default = json.loads(capsys.readouterr().out)
    assert main(["audit", str(log), "--format", "json", "--quiet", "--openai-zdr"]) in (0, 1)
    zdr = json.loads(capsys.readouterr().out)
    # Without ZDR, gpt-5.1 in August 2026 keeps the prefix 24 h: the read of 0 is OpenAI's own
    # miss; with ZDR it kept it 10 min, and 20 idle minutes expired it.
    assert [r["cause"] for r in default["requests"]][1] == "provider-best-effort"
    assert [r["cause"] for r in zdr["requests"]][1] == "ttl-expired"
    note = next(n for n in default["notes"] if n.startswith("OpenAI cache lifetime per request"))
    # The count, then the lifetime (it read "2 their model's documented default (2 24h (extended))").
    assert note.startswith("OpenAI cache lifetime per request: 2 request(s) with their model's documented default: "
                           "24h (extended). "), note
    assert "--openai-zdr" in note
    # Given --openai-zdr, the note says the ZDR it assumed: it said "Assumed: the organization has
    # no Zero Data Retention unless --openai-zdr" with the option given.
    note = next(n for n in zdr["notes"] if n.startswith("OpenAI cache lifetime per request"))
    assert "Assumed (--openai-zdr): the organization has Zero Data Retention" in note and "no Zero Data" not in note
    assert not any(n.startswith("--openai-zdr: no request") for n in zdr["notes"])
    # On logs with no OpenAI request the option changes nothing, and says so (it was silent).
    pi = Path(__file__).parent.parent / "logs" / "fixtures" / "pi.jsonl"
    assert main(["audit", str(pi), "--format", "json", "--quiet", "--openai-zdr"]) in (0, 1)
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(n.startswith("--openai-zdr: no request to OpenAI") and n.endswith("nothing changed") for n in notes)


def test_the_ttl_what_if_re_simulates_24h_retention_on_captured_openai_bodies(tmp_path: Path) -> None:
    # The same story on captured chat-completions bodies: a plan's retention moves the request, so
    # the re-simulation of only what a fix reaches replays it (it was left as logged).
    from tests.unit.audit.fixtures import capture_line, write_jsonl

    system = {"role": "system", "content": "You are a coding agent. " * 800}
    first = [system, {"role": "user", "content": "fix the test"}]
    second = [*first, {"role": "assistant", "content": "done"}, {"role": "user", "content": "and the docs"}]
    sent = 1_779_271_200.0  # 2026-05-20 10:00 UTC: gpt-5.1 keeps in memory by default then

    def call(messages: list, at: float, prompt: int, cached: int) -> dict:
        usage = {"prompt_tokens": prompt, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": cached}}
        answer = {"body": {"choices": [{"message": {"role": "assistant", "content": "done"}}], "usage": usage}}
        return capture_line({"model": "gpt-5.1", "messages": messages}, answer,
                            url="https://api.openai.com/v1/chat/completions", sent=at)

    log = write_jsonl(tmp_path / "cap.jsonl", [call(first, sent, 4_820, 0), call(second, sent + 20 * 60, 4_840, 0)])
    requests, summaries = load_trace([log])
    assert all(r.body is not None for r in requests)
    (longer,) = what_if(list(requests), list(summaries), ["ttl-1h"])
    assert longer.applies and longer.requests_changed == 1 and longer.tokens_to_read > 4_000


@pytest.mark.parametrize("asked", [[], {}, 24, ["24h"]])
def test_a_retention_that_is_not_a_word_is_one_error_line(asked: object) -> None:
    # Found by the fuzzer: a list asked as prompt_cache_retention raised "unhashable type: 'list'".
    from prefixbench.workloads.logs.chat_completions import LineError, parse_request

    body = {"model": "gpt-5.5", "prompt_cache_retention": asked, "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(LineError, match="field 'prompt_cache_retention' must be one of in_memory, 24h, got"):
        parse_request(body)


def test_the_zdr_help_names_only_the_models_zdr_changes(capsys: pytest.CaptureFixture[str]) -> None:
    """``audit --help`` on ``--openai-zdr``: the models whose default ZDR turns to in_memory are the
    ones offering both policies; gpt-5.5 keeps 24h either way (it listed gpt-5.5 among the first,
    then said gpt-5.5 is always 24h)."""
    from prefixbench.reports.cli import build_parser

    parser = build_parser("audit")
    action = next(a for sub in parser._subparsers._group_actions for p in sub.choices.values()  # noqa: SLF001
                   for a in p._actions if "--openai-zdr" in a.option_strings)  # noqa: SLF001
    changed, _, kept = action.help.partition("2026-06-01; ")
    assert retention("gpt-5.5", None, None, zdr=True) == "24h" and retention("gpt-5.4", None, None, zdr=True) == "in_memory"
    assert "gpt-5.4" in changed and "gpt-5.5" not in changed, action.help
    assert "gpt-5.5" in kept, action.help


def test_the_lifetime_note_counts_each_lifetime_after_its_name_where_there_are_several(tmp_path: Path) -> None:
    # gpt-5.1 defaults to 24h from the API reference of 2026-06-01, to in_memory before it: two
    # rollouts, one each side, give one count per lifetime, each after the lifetime's name.
    from prefixbench.workloads.audit.core import load_trace, retention_notes

    requests, _ = load_trace([rollout(tmp_path / "may.jsonl", "gpt-5.1", "2026-05-20", 5, 0),
                              rollout(tmp_path / "aug.jsonl", "gpt-5.1", "2026-08-03", 5, 0)])
    (note,) = retention_notes(requests)
    assert note.startswith("OpenAI cache lifetime per request: 4 request(s) with their model's documented default: "
                           "24h (extended) for 2, in_memory (10 min) for 2. "), note
