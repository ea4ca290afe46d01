"""Where a Codex call's turn and times lie in its rollout, and what that does to its predicted
read (workloads/logs/formats/codex.py). Hand-made rollouts of Codex 0.128.0 on gpt-5.5, whose
reads lie on 384 + k x 512 tokens and never reach into the previous response."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.simulator.providers.base import on_grid
from prefixbench.workloads.audit.core import load_trace, run_audit


def _ms(stamp: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def _write(path: Path, items: list[tuple[str, str, dict]], version: str = "0.128.0", model: str = "gpt-5.5",
           provider: str = "openai") -> Path:
    """``items``: (time of day, record type, payload); a ``usage`` payload is a token count, an
    ``event`` payload an ``event_msg``."""
    lines = [
        {"timestamp": "2026-05-04T10:00:00.000Z", "type": "session_meta",
         "payload": {"id": "s", "cli_version": version, "model_provider": provider}},
        {"timestamp": "2026-05-04T10:00:00.000Z", "type": "turn_context", "payload": {"model": model, "effort": "high"}},
    ]
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    for clock, kind, payload in items:
        stamp = f"2026-05-04T{clock}Z"
        if kind == "usage":
            total = {key: total[key] + payload[key] for key in total}
            lines.append({"timestamp": stamp, "type": "event_msg",
                          "payload": {"type": "token_count", "info": {"total_token_usage": total, "last_token_usage": payload}}})
        elif kind == "event":
            lines.append({"timestamp": stamp, "type": "event_msg", "payload": payload})
        else:
            lines.append({"timestamp": stamp, "type": "response_item", "payload": {"type": kind, **payload}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _usage(prompt: int, read: int, output: int = 300) -> dict:
    return {"input_tokens": prompt, "cached_input_tokens": read, "output_tokens": output}


USER = {"role": "user", "content": [{"type": "input_text", "text": "go on"}]}
ANSWER = {"role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
REASONING = {"summary": [], "encrypted_content": "x"}
CALL = {"name": "shell", "arguments": "{}", "call_id": "c"}
OUTPUT = {"call_id": "c", "output": "ok"}


def test_a_token_count_written_after_its_tool_ran_belongs_to_the_call_before_the_tool(tmp_path: Path) -> None:
    # Later Codex writes a call's token count when the tool it asked for has run (the count comes
    # right after the tool's output). The call was sent after the user message and ended with
    # its last output item; the tool's output is the next call's input. Main took both calls as
    # sent at the tool's output (10:00:30), the first one still running when the second was sent,
    # so the second was predicted to read nothing of it.
    path = _write(tmp_path / "r.jsonl", [
        ("10:00:01.000", "message", USER),
        ("10:00:05.000", "reasoning", REASONING),
        ("10:00:06.000", "function_call", CALL),
        ("10:00:30.000", "function_call_output", OUTPUT),
        ("10:00:30.005", "usage", _usage(20_000, 0)),
        ("10:00:35.000", "reasoning", REASONING),
        ("10:00:36.000", "message", ANSWER),
        ("10:00:36.005", "usage", _usage(20_800, 19_840)),
    ])
    first, second = load_trace([path])[0]
    assert (first.sent_ms, first.ready_ms, first.done_ms) == (_ms("2026-05-04T10:00:01Z"), _ms("2026-05-04T10:00:05Z"), _ms("2026-05-04T10:00:06Z"))
    assert (second.sent_ms, second.ready_ms) == (_ms("2026-05-04T10:00:30Z"), _ms("2026-05-04T10:00:35Z"))
    rows = run_audit([path]).rows
    assert (rows[1].reported_cache_read, rows[1].predicted_cache_read, rows[1].cause) == (19_840, 19_840, None)


def test_a_token_count_written_before_its_items_keeps_them_and_a_ghost_snapshot_is_no_output(tmp_path: Path) -> None:
    # Codex 0.58 writes a call's token count a few milliseconds before the call's own items
    # (reasoning, the tool call), and the tool's output in the same millisecond; a ghost snapshot
    # (Codex's undo commit, never sent to the model) comes before the first call. The items after
    # the count are that call's, so the second call is sent at the tool's output. The late-count
    # rule took them for an unclaimed call and dated the second call back to the first's send,
    # sent before the first had answered: a "concurrent-write" miss in ../shared's rollout.
    path = _write(tmp_path / "r.jsonl", [
        ("10:00:01.000", "message", USER),
        ("10:00:01.100", "ghost_snapshot", {"ghost_commit": {"id": "a"}}),
        ("10:00:04.000", "usage", _usage(10_000, 0)),
        ("10:00:04.004", "reasoning", REASONING),
        ("10:00:04.004", "function_call", CALL),
        ("10:00:04.004", "function_call_output", OUTPUT),
        ("10:00:07.000", "usage", _usage(10_400, 9_984)),
        ("10:00:07.004", "message", ANSWER),
    ], version="0.58.0")
    first, second = load_trace([path])[0]
    assert (first.sent_ms, first.ready_ms) == (_ms("2026-05-04T10:00:01Z"), _ms("2026-05-04T10:00:04Z"))
    assert second.sent_ms == _ms("2026-05-04T10:00:04.004Z")
    rows = run_audit([path]).rows
    assert rows[1].cause != "concurrent-write" and rows[1].predicted_cache_read > 0


def test_a_user_message_before_a_late_token_count_opens_the_next_call(tmp_path: Path) -> None:
    # A message the user sent while the call's tool ran comes before the call's late token
    # count: it is the next call's input, and the next call opens the user turn (main gave the
    # turn to the call before it).
    path = _write(tmp_path / "r.jsonl", [
        ("10:00:01.000", "message", USER),
        ("10:00:05.000", "function_call", CALL),
        ("10:00:20.000", "function_call_output", OUTPUT),
        ("10:00:21.000", "message", USER),
        ("10:00:21.005", "usage", _usage(20_000, 0)),
        ("10:00:25.000", "message", ANSWER),
        ("10:00:25.005", "usage", _usage(20_800, 19_840)),
    ])
    first, second = load_trace([path])[0]
    assert [kind for kind, _ in first.events] == ["user_turn"]
    assert [kind for kind, _ in second.events] == ["user_turn"]
    assert (first.done_ms, second.sent_ms) == (_ms("2026-05-04T10:00:05Z"), _ms("2026-05-04T10:00:21Z"))


def _turns(tmp_path: Path, name: str, next_prompt: int, next_read: int, *, reasoning: bool = True,
           aborted: bool = False, model: str = "gpt-5.5", provider: str = "openai") -> list:
    # Turn 1: three calls, each with reasoning (prompts 20,000, 22,000, 24,000; ``reasoning``
    # False: none, neither item nor tokens); turn 2 opens with a prompt of ``next_prompt``, after
    # turn 1 was interrupted where ``aborted``.
    items = [("10:00:01.000", "message", USER)]
    for i, prompt in enumerate((20_000, 22_000, 24_000)):
        read = 0 if i == 0 else on_grid(prompt - 2_000, 512, 384)
        items += [
            *([(f"10:00:{10 * i + 2:02d}.000", "reasoning", REASONING)] if reasoning else []),
            (f"10:00:{10 * i + 3:02d}.000", "function_call" if i < 2 else "message", CALL if i < 2 else ANSWER),
            (f"10:00:{10 * i + 4:02d}.000", "usage", _usage(prompt, read)),
        ]
        if i < 2:
            items.append((f"10:00:{10 * i + 5:02d}.000", "function_call_output", OUTPUT))
    if aborted:
        items.append(("10:00:40.000", "event", {"type": "turn_aborted", "reason": "interrupted"}))
    items += [
        ("10:01:00.000", "message", USER),
        ("10:01:02.000", "message", ANSWER),
        ("10:01:03.000", "usage", _usage(next_prompt, next_read)),
    ]
    return run_audit([_write(tmp_path / f"{name}.jsonl", items, model=model, provider=provider)]).rows


def test_a_turn_sent_without_the_previous_turns_reasoning_reads_up_to_where_it_began(tmp_path: Path) -> None:
    # Turn 2's prompt (23,000) is smaller than the last call's (24,000): its user message and
    # turn 1's answers were added, turn 1's reasoning dropped (OpenAI renders none of an earlier
    # turn). It shares with the cache only the prompt of turn 1's first call, up to where that
    # reasoning began: 20,000 -> 19,840 on the grid. Main read it as the longest earlier prompt
    # that fits (22,000 -> 21,888), a miss put down to the prompt shrinking.
    rows = _turns(tmp_path, "shrank", 23_000, 19_840)
    assert (rows[3].predicted_cache_read, rows[3].cause) == (19_840, "messages-changed")
    assert "at a new user turn: sent without the previous turn's reasoning" in rows[3].detail

def test_a_turn_that_grew_by_more_than_the_response_after_a_turn_that_reasoned_dropped_it_too(tmp_path: Path) -> None:
    # Turn 2's prompt (25,000) grew by more than the previous prompt plus its response (24,300):
    # the user's message outgrew the reasoning dropped. Main took a grown turn to have kept the
    # reasoning and predicted the whole previous prompt (23,936). In BearTDK6/ba-pro's rollouts
    # (Codex 0.65-0.119) all 42 such calls after a turn that reasoned read less than the previous
    # prompt, 28 exactly up to the previous turn's first prompt.
    rows = _turns(tmp_path, "grew", 25_000, 19_840)
    assert (rows[3].predicted_cache_read, rows[3].cause) == (19_840, "messages-changed")
    assert "follows a turn that reasoned: sent without that reasoning" in rows[3].detail


def test_a_grown_turn_keeps_the_previous_prompt_after_no_reasoning_an_interruption_or_on_gpt_5_6(tmp_path: Path) -> None:
    # Nothing to drop where turn 1 did not reason (a public gpt-5.4 rollout, soulpass, read on
    # into its previous prompt), nor after an interrupted turn (two public ones did), nor on
    # GPT-5.6, whose turns kept it (edgerunner's gpt-5.6-sol, gildore-arena's gpt-5.6-terra).
    rows = _turns(tmp_path, "plain", 25_000, 23_936, reasoning=False)
    assert (rows[3].predicted_cache_read, rows[3].cause) == (23_936, None)
    rows = _turns(tmp_path, "aborted", 25_000, 23_936, aborted=True)
    assert (rows[3].predicted_cache_read, rows[3].cause) == (23_936, None)
    rows = _turns(tmp_path, "sol", 25_000, 23_808, model="gpt-5.6-sol")
    assert rows[3].predicted_cache_read > 22_000 and rows[3].cause is None


def test_a_grown_turn_drops_the_reasoning_only_on_a_provider_known_to(tmp_path: Path) -> None:
    # The rule was measured on OpenAI (its reasoning guide, ba-pro's rollouts); a Codex session
    # through another provider (here Moonshot's kimi-k2.5) renders its reasoning as that API does,
    # unmeasured: a grown turn keeps the previous prompt, as before the rule (the code before this
    # test read it up to the previous turn's first prompt, 20,000).
    rows = _turns(tmp_path, "kimi", 25_000, 24_000, model="kimi-k2.5", provider="moonshot")
    assert {r.provider for r in rows} == {"moonshot"}
    assert rows[3].predicted_cache_read > 22_000 and rows[3].cause is None


def test_a_turn_that_grew_by_less_than_the_response_it_sends_back_dropped_the_reasoning(tmp_path: Path) -> None:
    # Turn 2's prompt (24,200) is larger than the last call's (24,000) but smaller than that
    # prompt plus the 300-token response Codex sends back: turn 1's reasoning was dropped, and a
    # user message larger than what was dropped made up the rest. Main read only "smaller than the
    # previous prompt" as that sign and predicted the whole previous prompt (23,936), a miss put
    # down to OpenAI's best effort. In the public rollouts (gpt-5.4, gpt-5.5) the reads at such
    # turns fell to the previous turn's first prompt (rave-era's line 585, gildore-arena's 324).
    rows = _turns(tmp_path, "grew-less", 24_200, 19_840)
    assert (rows[3].predicted_cache_read, rows[3].cause) == (19_840, "messages-changed")
    assert "smaller than the previous prompt and the response it sends back (24,000 + 300)" in rows[3].detail


def test_a_turn_after_a_one_call_turn_loses_nothing_to_the_dropped_reasoning(tmp_path: Path) -> None:
    # Turn 1 is one call, so its reasoning began where its prompt ended: turn 2 (24,200 < 24,000
    # + 300) still shares the whole previous prompt, and a read that falls short of it is OpenAI's
    # best effort, not the dropped reasoning (the first version of the rule above named it).
    rows = run_audit([_write(tmp_path / "one.jsonl", [
        ("10:00:01.000", "message", USER),
        ("10:00:02.000", "reasoning", REASONING),
        ("10:00:03.000", "message", ANSWER),
        ("10:00:04.000", "usage", _usage(24_000, 0)),
        ("10:01:00.000", "message", USER),
        ("10:01:02.000", "message", ANSWER),
        ("10:01:03.000", "usage", _usage(24_200, 11_648)),
    ])]).rows
    assert (rows[1].predicted_cache_read, rows[1].cause) == (23_936, "provider-best-effort")
