"""OpenHands runs (workloads/logs/formats/openhands.py): evaluation outputs with
``metrics.token_usages``, cumulative copies counted once, and runs with running totals only.

Written here from OpenHands' ``Metrics`` / ``TokenUsage`` (``openhands/llm/metrics.py``) and the
way its LLM wrapper fills them from LiteLLM's usage (``openhands/llm/llm.py``).
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.formats.common import as_dict
from tests.fuzz.harness import NASTY_TOKENS, Tally, edited, fuzz_settings, mutated, to_json_line
from tests.unit.logs.hang_guard import no_hang

FIXTURE = Path(__file__).parent / "fixtures" / "openhands.json"


def token_usage(rid: str, prompt: int, out: int, read: int, write: int, model: str = "anthropic/claude-sonnet-4-20250514") -> dict:
    return {"model": model, "prompt_tokens": prompt, "completion_tokens": out, "cache_read_tokens": read, "cache_write_tokens": write,
            "context_window": 200000, "per_turn_token": prompt + out, "response_id": rid}


def output_line(instance: str, usages: list[dict]) -> dict:
    return {"instance_id": instance, "instruction": "...", "history": [], "test_result": {"git_patch": ""},
            "metrics": {"accumulated_cost": 0.1, "accumulated_token_usage": {}, "costs": [], "response_latencies": [], "token_usages": usages}}


def test_output_jsonl_one_lane_per_instance_older_litellm(tmp_path: Path) -> None:
    # prompt_tokens 7 < 0 + 6000 written: this LiteLLM left writes out of prompt_tokens.
    lines = [output_line("django__django-1", [token_usage("r1", 7, 40, 0, 6000), token_usage("r2", 6012, 9, 6000, 300)]),
             output_line("astropy__astropy-2", [token_usage("r1", 2500, 3, 0, 0, "gpt-4o")])]
    path = tmp_path / "output.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    requests = import_file(path, detect_format(path), ImportContext())[0]
    assert [(r.lane, r.provider, r.usage) for r in requests] == [
        ("django__django-1", "anthropic", Usage(cache_write_5m=6000, uncached=7, output=40)),
        ("django__django-1", "anthropic", Usage(cache_read=6000, cache_write_5m=300, uncached=12, output=9)),
        ("astropy__astropy-2", "openai", Usage(uncached=2500, output=3)),
    ]


def test_cumulative_copies_and_the_raw_response_count_each_call_once(tmp_path: Path) -> None:
    # Each event carries the metrics so far; the first call is also on its action's model_response.
    first = token_usage("chatcmpl-1", 3000, 5, 0, 0, "gpt-4o")
    second = token_usage("chatcmpl-2", 3100, 6, 2944, 0, "gpt-4o")
    events = [
        {"id": 1, "timestamp": "2025-11-01T10:00:01", "source": "agent", "action": "run", "args": {},
         "tool_call_metadata": {"model_response": {"id": "chatcmpl-1", "model": "gpt-4o", "usage": {"prompt_tokens": 3000, "completion_tokens": 5}}},
         "llm_metrics": {"token_usages": [first]}},
        {"id": 2, "timestamp": "2025-11-01T10:00:02", "source": "environment", "observation": "run", "content": "ok"},
        {"id": 3, "timestamp": "2025-11-01T10:00:05", "source": "agent", "action": "finish", "args": {}, "llm_metrics": {"token_usages": [first, second]}},
    ]
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(events, indent=2))
    requests, _ = import_file(path, FORMATS["openhands"], ImportContext())
    assert [(r.request_id, r.usage) for r in requests] == [("chatcmpl-1", Usage(uncached=3000, output=5)), ("chatcmpl-2", Usage(cache_read=2944, uncached=156, output=6))]


@pytest.mark.parametrize("raw", [
    {"prompt_tokens": 3100, "completion_tokens": 6, "prompt_tokens_details": {"cached_tokens": None}},
    {"prompt_tokens": 3100, "completion_tokens": 6, "cached_tokens": None},
])
def test_a_raw_response_whose_cache_field_is_null_leaves_the_usage_to_the_token_usage(tmp_path: Path, raw: dict) -> None:
    """A cache field given as null is cache use not reported (``given``), as the LiteLLM reader
    and the provider rules read it: the richer TokenUsage of the same call decides (it read the
    null as reported and kept no read)."""
    usage = token_usage("chatcmpl-2", 3100, 6, 2944, 0, "gpt-4o")
    events = [
        {"id": 1, "timestamp": "2025-11-01T10:00:01", "source": "agent", "action": "run", "args": {},
         "tool_call_metadata": {"model_response": {"id": "chatcmpl-2", "model": "gpt-4o", "usage": raw}},
         "llm_metrics": {"token_usages": [usage]}},
    ]
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(events, indent=2))
    requests, _ = import_file(path, FORMATS["openhands"], ImportContext())
    assert [r.usage for r in requests] == [Usage(cache_read=2944, uncached=156, output=6)]


def test_audit_totals_equal_the_responses_own_sums() -> None:
    events = json.loads(FIXTURE.read_text())
    usages = [e["tool_call_metadata"]["model_response"]["usage"] for e in events if "tool_call_metadata" in e]
    t = run_audit([FIXTURE]).totals
    assert t.requests == len(usages) == 2
    assert t.input + t.cache_read + t.cache_write == sum(u["prompt_tokens"] for u in usages) == 16152
    assert (t.cache_read, t.cache_write) == (8000, 8120)
    assert t.output == sum(u["completion_tokens"] for u in usages) == 90


@pytest.mark.parametrize("value", [
    [{"id": 1, "source": "agent", "action": "run", "llm_metrics": {"accumulated_cost": 0.1, "accumulated_token_usage": {"prompt_tokens": 9}}}],
    [output_line("i", [token_usage("r", -1, 0, 0, 0)])],
    [output_line("i", [token_usage("r", 10, 0, 20, 11)])],  # written above the prompt too: no reading fits
    [{"id": 1, "source": "agent", "action": "run"}, {"unrelated": True}],
    # token_usages that is no list (a fuzzer's find: a TypeError before)
    [{"id": 1, "source": "agent", "action": "run", "llm_metrics": {"accumulated_token_usage": {"prompt_tokens": 9}, "token_usages": -1}}],
])
def test_bad_runs_are_one_line_errors(tmp_path: Path, value: list) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(value))
    with pytest.raises(UserError) as caught:
        import_file(path, FORMATS["openhands"], ImportContext())
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


@pytest.mark.parametrize(("base_url", "provider"), [
    ("http://localhost:2600", "unknown"),  # a local proxy (OpenHands' Multi-SWE-bench example: Llama 4 via OpenRouter)
    ("https://api.openai.com/v1", "openai"),
    ("https://api.deepseek.com", "deepseek"),
    (None, "openai"),  # no endpoint named: LiteLLM's openai/ route is OpenAI's
])
def test_an_openai_route_to_another_server_is_not_openai(tmp_path: Path, base_url: str | None, provider: str) -> None:
    """LiteLLM's ``openai/<model>`` means "an OpenAI-compatible client": with the run's
    ``llm_config.base_url`` elsewhere, the server is not OpenAI, so its misses are not put down
    to OpenAI's best-effort cache."""
    line = output_line("i-1", [token_usage("gen-1", 5000, 10, 0, 0, "openai/openrouter-llama-4-maverick"),
                               token_usage("gen-2", 5200, 10, 0, 0, "openai/openrouter-llama-4-maverick")])
    line["metadata"] = {"llm_config": {"model": "openai/openrouter-llama-4-maverick", "base_url": base_url}}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(line) + "\n")
    requests, summary = import_file(path, detect_format(path), ImportContext())
    assert {r.provider for r in requests} == {provider}
    assert any("OpenAI-compatible server, not OpenAI" in note for note in summary.notes) == (provider == "unknown")


def test_a_miss_on_a_server_of_unknown_cache_says_so(tmp_path: Path) -> None:
    line = output_line("i-1", [token_usage("gen-1", 5000, 10, 0, 0, "openai/openrouter-llama-4-maverick"),
                               token_usage("gen-2", 5200, 10, 0, 0, "openai/openrouter-llama-4-maverick")])
    line["metadata"] = {"llm_config": {"base_url": "http://localhost:2600"}}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(line) + "\n")
    row = run_audit([path]).rows[1]
    assert row.cause == "unexplained" and "a server whose cache prefixbench does not model" in (row.detail or "")


# --- OpenHands 1.x (software-agent-sdk): conversations/<id>/base_state.json with events/ beside it.
# The fixture is written here from the SDK's ConversationState, ConversationStats and TokenUsage
# (openhands-sdk/openhands/sdk/conversation/{state,conversation_stats}.py, llm/utils/metrics.py).
V1 = Path(__file__).parent / "fixtures" / "openhands-v1" / "7c0ffee15d2a4b8e9f31a6b2c4d8e0f1"


def test_v1_conversation_folder_totals_equal_the_hand_sums() -> None:
    # agent: prompts 6600 + 7000 + 7700, reads 0 + 6500 + 6600, writes 6500 + 400 + 1000, outputs 210 + 120 + 210;
    # condenser: prompt 9000, read 6600, write 1200, output 800. LiteLLM's prompt_tokens holds reads and writes.
    t = run_audit([V1.parent]).totals
    assert t.requests == 4
    assert t.cache_read == 0 + 6500 + 6600 + 6600 == 19700
    assert t.cache_write == 6500 + 400 + 1000 + 1200 == 9100
    assert t.input == (6600 - 0 - 6500) + (7000 - 6500 - 400) + (7700 - 6600 - 1000) + (9000 - 6600 - 1200) == 1500
    assert t.input + t.cache_read + t.cache_write == 6600 + 7000 + 7700 + 9000
    assert t.output == 210 + 120 + 210 + 800 == 1340


def test_v1_state_one_call_per_token_usage_each_llm_its_lane() -> None:
    path = V1 / "base_state.json"
    requests, summary = import_file(path, detect_format(path), ImportContext())
    assert [(r.lane, r.lane_kind, r.request_id, r.provider, r.model) for r in requests] == [
        ("main", "main", "chatcmpl-a1", "anthropic", "claude-sonnet-4-5-20250929"),
        ("main", "main", "chatcmpl-a2", "anthropic", "claude-sonnet-4-5-20250929"),
        ("main", "main", "chatcmpl-a3", "anthropic", "claude-sonnet-4-5-20250929"),
        ("condenser", "compaction", "chatcmpl-c1", "anthropic", "claude-sonnet-4-5-20250929"),
    ]
    assert requests[1].usage == Usage(cache_read=6500, cache_write_5m=400, uncached=100, output=120)
    assert any("agent: 3, condenser: 1" in note for note in summary.notes)


def test_v1_event_files_are_read_with_their_state_or_alone_yield_no_call(tmp_path: Path) -> None:
    events = sorted((V1 / "events").iterdir())
    assert all(FORMATS["openhands"].read_with(e, json.loads(e.read_text())) == V1 / "base_state.json" for e in events)
    alone = tmp_path / "event-00001-x.json"
    alone.write_text((V1 / "events" / events[1].name).read_text())  # a user MessageEvent
    requests, summary = import_file(alone, detect_format(alone), ImportContext())
    assert requests == [] and "base_state.json" in summary.notes[0]


def test_v1_preview_service_to_metrics_and_a_repeated_response_once(tmp_path: Path) -> None:
    # SDK 1.0 previews (to 2025-10-19) named the map service_to_metrics and the LLM's id service_id.
    usage = token_usage("chatcmpl-9", 5000, 20, 4096, 0, "openai/gpt-5")
    state = {"id": "c1", "agent": {"kind": "Agent", "llm": {"model": "openai/gpt-5", "service_id": "agent"}},
             "stats": {"service_to_metrics": {"agent": {"model_name": "openai/gpt-5", "token_usages": [usage, usage]}}}}
    path = tmp_path / "base_state.json"
    path.write_text(json.dumps(state))
    requests = import_file(path, detect_format(path), ImportContext())[0]
    assert [(r.lane, r.provider, r.usage) for r in requests] == [("main", "openai", Usage(cache_read=4096, uncached=904, output=20))]


@pytest.mark.parametrize("stats", [
    {"usage_to_metrics": {"agent": {"token_usages": []}}},
    {"usage_to_metrics": {"agent": {"token_usages": "none"}}},
    {"usage_to_metrics": {"agent": {"token_usages": [token_usage("r", 10, 0, 20, 11)]}}},  # written above the prompt too
])
def test_v1_bad_states_are_one_line_errors(tmp_path: Path, stats: dict) -> None:
    path = tmp_path / "base_state.json"
    path.write_text(json.dumps({"id": "c1", "agent": {"kind": "Agent"}, "stats": stats}))
    with pytest.raises(UserError, match="base_state.json:1"):
        import_file(path, FORMATS["openhands"], ImportContext())


def test_v1_calls_timed_from_their_events_and_a_condensation_starts_a_chain(tmp_path: Path) -> None:
    path = V1 / "base_state.json"
    requests, summary = import_file(path, detect_format(path), ImportContext())
    def ms(clock: str) -> int:
        return int(datetime.fromisoformat(f"2026-07-28T{clock}+00:00").timestamp() * 1000)

    # a1: its ActionEvent at 09:00:05, after the user's message at 09:00:01; a2 names no event;
    # a3: its MessageEvent at 09:01:30 after the Condensation (c1) at 09:01:00.
    assert [(r.request_id, r.sent_ms, r.ready_ms) for r in requests] == [
        ("chatcmpl-a1", ms("09:00:01"), ms("09:00:05")),
        ("chatcmpl-a2", None, None),
        ("chatcmpl-a3", ms("09:01:00"), ms("09:01:30")),
        ("chatcmpl-c1", ms("09:00:07"), ms("09:01:00")),
    ]
    assert requests[2].events == (("compaction", "history condensed (a Condensation event)"),) and requests[2].prefix.parent is None
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert any("3 of 4 call(s) timed" in note for note in summary.notes)
    alone = tmp_path / "base_state.json"
    alone.write_text(path.read_text())
    requests, summary = import_file(alone, detect_format(alone), ImportContext())
    assert all(r.sent_ms is None and r.ready_ms is None for r in requests) and any("no time per call" in n for n in summary.notes)


def test_v1_damaged_conversations_end_cleanly(tmp_path: Path) -> None:
    """A 1.x conversation whose state or events are edited, foreign or broken: one line and exit 2,
    or a reading; never a traceback."""
    state = json.loads((V1 / "base_state.json").read_text())
    events = sorted(p.name for p in (V1 / "events").iterdir())
    tally = Tally("openhands 1.x", bound_s=20)
    garbage = st.one_of(edited(st.just(state), max_edits=4).map(to_json_line), st.sampled_from(NASTY_TOKENS),
                        mutated((V1 / "base_state.json").read_bytes()))

    @fuzz_settings(25)
    @given(raw=garbage, event=st.sampled_from(events), event_raw=st.one_of(st.sampled_from(NASTY_TOKENS), st.just(None)))
    def case(raw: bytes, event: str, event_raw: bytes | None) -> None:
        folder = tmp_path / "conv"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(V1, folder)
        (folder / "base_state.json").write_bytes(raw)
        if event_raw is not None:
            (folder / "events" / event).write_bytes(event_raw)
        tally.check(["audit", str(folder), "--quiet"])

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0


def test_v1_acp_agent_turns_are_each_a_request_read_additive(tmp_path: Path) -> None:
    # An ACPAgent (Claude Code over ACP) records one TokenUsage per prompt turn, every one with the
    # ACP session's id as its response id and its input without the cache.
    turns = [token_usage("acp-sess-1", 3, 400, 0, 18000, "claude-sonnet-4-5"), token_usage("acp-sess-1", 6, 250, 52000, 3100, "claude-sonnet-4-5"),
             token_usage("acp-sess-1", 2, 90, 60000, 800, "claude-sonnet-4-5")]
    state = {"id": "c2", "agent": {"kind": "ACPAgent", "acp_command": ["claude-agent-acp"], "llm": {"model": "acp-managed", "usage_id": "agent"}},
             "stats": {"usage_to_metrics": {"agent": {"model_name": "acp-managed", "token_usages": turns}}}}
    path = tmp_path / "base_state.json"
    path.write_text(json.dumps(state))
    requests, summary = import_file(path, detect_format(path), ImportContext())
    assert [r.usage for r in requests] == [
        Usage(cache_write_5m=18000, uncached=3, output=400),
        Usage(cache_read=52000, cache_write_5m=3100, uncached=6, output=250),
        Usage(cache_read=60000, cache_write_5m=800, uncached=2, output=90),
    ]
    assert {r.provider for r in requests} == {"anthropic"}
    assert any("each TokenUsage is one prompt turn" in note for note in summary.notes)


def old_output_line(instance: str) -> dict:
    """An evaluation output line of OpenHands 0.2x: metrics of costs only, each call's usage on
    the action it chose (two actions of one response: one call), times on the history's events."""
    def response(rid: str, prompt: int, cached: int, out: int) -> dict:
        return {"id": rid, "model": "gpt-5-2025-08-07", "usage": {"prompt_tokens": prompt, "completion_tokens": out,
                                                                   "prompt_tokens_details": {"cached_tokens": cached}}}
    history = [
        {"id": 0, "timestamp": "2026-01-23T16:27:08.000000", "source": "user", "action": "message", "args": {"content": "fix it"}},
        {"id": 1, "timestamp": "2026-01-23T16:27:34.291000", "source": "agent", "action": "run", "args": {},
         "tool_call_metadata": {"function_name": "execute_bash", "model_response": response("chatcmpl-a", 3457, 1920, 243)}},
        {"id": 2, "timestamp": "2026-01-23T16:27:34.300000", "source": "agent", "action": "read", "args": {},
         "tool_call_metadata": {"function_name": "str_replace_editor", "model_response": response("chatcmpl-a", 3457, 1920, 243)}},
        {"id": 3, "timestamp": "2026-01-23T16:27:40.000000", "source": "environment", "observation": "run", "content": "ok"},
        {"id": 4, "timestamp": "2026-01-23T16:27:52.851000", "source": "agent", "action": "finish", "args": {},
         "tool_call_metadata": {"function_name": "finish", "model_response": response("chatcmpl-b", 5918, 3328, 183)}},
    ]
    return {"instance_id": instance, "instruction": "...", "history": history, "error": None, "test_result": {"git_patch": ""},
            "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": "openai/gpt-5", "base_url": None}},
            "metrics": {"accumulated_cost": 0.01, "costs": [{"model": "openai/gpt-5", "cost": 0.004, "timestamp": 1769185672.1}] * 2,
                        "response_latencies": []}}


def test_an_output_line_before_token_usages_reads_its_history(tmp_path: Path) -> None:
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(old_output_line("alibaba__fastjson2-2775")) + "\n")
    assert detect_format(path) is FORMATS["openhands"]
    requests, _ = import_file(path, FORMATS["openhands"], ImportContext())
    assert [(r.lane, r.request_id, r.usage) for r in requests] == [
        ("alibaba__fastjson2-2775", "chatcmpl-a", Usage(cache_read=1920, uncached=1537, output=243)),
        ("alibaba__fastjson2-2775", "chatcmpl-b", Usage(cache_read=3328, uncached=2590, output=183)),
    ]
    # Sent at the event before the action, ready at the action.
    assert [(r.sent_ms, r.ready_ms) for r in requests] == [(1769185628000, 1769185654291), (1769185660000, 1769185672851)]


# --- OpenHands 0.x app sessions: sessions/<id>/events/<n>.json, one event a file, and
# event_cache/<start>-<end>.json pages of the same events (written here from OpenHands 0.x's
# file store, openhands/events/stream.py: get_conversation_events_dir, _get_filename_for_id).


def v0_session(folder: Path, served: tuple[str, str] | None = None, last_read: int = 13824) -> list[dict]:
    """A 0.x session folder of three calls, each action keeping its raw response; returns the
    events. ``served``: the upstreams OpenRouter names in the responses (its ``provider``), the
    one reporting cache use and the one that does not (the third call's); ``last_read``: the
    fourth call's read."""
    def action(ident: int, at: str, rid: str, prompt: int, read: int | None) -> dict:
        usage: dict = {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20,
                       "prompt_tokens_details": None if read is None else {"cached_tokens": read}}
        response = {"id": rid, "model": "deepseek/deepseek-v3.2-exp", "usage": usage}
        if served is not None:
            response["provider"] = served[read is None]
        return {"id": ident, "timestamp": at, "source": "agent", "message": "Running command", "action": "run", "args": {"command": "ls"},
                "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": f"call-{ident}",
                                       "model_response": response},
                "llm_metrics": {"accumulated_cost": 0.0, "accumulated_token_usage": {"prompt_tokens": prompt}, "costs": [], "token_usages": []}}

    def observation(ident: int, at: str) -> dict:
        return {"id": ident, "timestamp": at, "source": "environment", "message": "ok", "observation": "run", "content": "ok", "extras": {}}

    events = [
        {"id": 0, "timestamp": "2025-10-07T00:54:00", "source": "user", "message": "hi", "action": "message", "args": {"content": "hi"}},
        action(1, "2025-10-07T00:54:10", "gen-1", 13000, 0),
        observation(2, "2025-10-07T00:54:11"),
        action(3, "2025-10-07T00:54:20", "gen-2", 13400, 12928),
        observation(4, "2025-10-07T00:54:21"),
        action(5, "2025-10-07T00:54:30", "gen-3", 13900, None),  # an upstream that reports no cache use
        observation(6, "2025-10-07T00:54:31"),
        action(7, "2025-10-07T00:54:31", "gen-3", 13900, None),  # a second action of the same response
        observation(8, "2025-10-07T00:54:40"),
        action(9, "2025-10-07T00:54:50", "gen-4", 14300, last_read),
        observation(10, "2025-10-07T00:54:51"),
    ]
    (folder / "events").mkdir(parents=True)
    (folder / "event_cache").mkdir()
    for event in events:
        (folder / "events" / f"{event['id']}.json").write_text(json.dumps(event))
    (folder / "event_cache" / "0-25.json").write_text(json.dumps(events))
    (folder / "metadata.json").write_text(json.dumps({"conversation_id": folder.name, "accumulated_cost": 0.0, "prompt_tokens": 54600}))
    return events


def test_v0_session_folder_reads_its_event_files_in_number_order_once(tmp_path: Path) -> None:
    """A 0.x session keeps one event a file (``events/10.json`` sorts before ``2.json`` by name):
    the folder's first event file reads them all as one stream, every call once, and the cache's
    pages of the same events add nothing. Before, ``events/0.json`` stopped the audit: "no
    per-call usage"."""
    folder = tmp_path / "sessions" / "841d0ac7"
    v0_session(folder)
    result = run_audit([tmp_path / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == (4, 13000 + 472 + 13900 + 476, 12928 + 13824, 80)
    assert [(r.line, r.reported_cache_read) for r in result.rows] == [(1, 0), (3, 12928), (5, None), (9, 13824)]
    assert [f.format for f in result.files if f.requests] == ["openhands"]
    assert {r.provider for r in result.rows} == {"deepseek"}


def test_a_v0_call_reads_only_what_the_upstream_that_served_it_cached(tmp_path: Path) -> None:
    """OpenRouter names the upstream that served each call (the raw response's ``provider``): a
    call DeepSeek served after one DeepInfra served reads what DeepSeek cached (the second call's
    13,400-token prompt, on its 64-token steps: 13,376), not the prompt DeepInfra was sent
    (before: predicted 13,888, one cache for every upstream)."""
    folder = tmp_path / "sessions" / "5e0f"
    v0_session(folder, served=("DeepSeek", "DeepInfra"), last_read=13376)
    requests, _ = import_file(folder / "events" / "0.json", FORMATS["openhands"], ImportContext())
    assert [r.upstream for r in requests] == ["DeepSeek", "DeepSeek", "DeepInfra", "DeepSeek"]
    last = run_audit([tmp_path / "sessions"]).rows[-1]
    assert (last.predicted_cache_read, last.reported_cache_read, last.read_within) == (13376, 13376, True)


def test_v0_session_files_other_than_the_first_are_read_with_it(tmp_path: Path) -> None:
    folder = tmp_path / "s1"
    events = v0_session(folder)
    lead = folder / "events" / "0.json"
    for other in [folder / "events" / "3.json", folder / "events" / "10.json", folder / "event_cache" / "0-25.json"]:
        value = json.loads(other.read_text())
        assert FORMATS["openhands"].read_with(other, value[0] if isinstance(value, list) else value) == lead
        requests, summary = import_file(other, detect_format(other), ImportContext())
        assert requests == [] and str(lead) in summary.notes[0]
    assert FORMATS["openhands"].read_with(lead, events[0]) is None
    requests, summary = import_file(lead, detect_format(lead), ImportContext())
    assert [r.request_id for r in requests] == ["gen-1", "gen-2", "gen-3", "gen-4"]
    assert [(r.sent_ms is not None, r.ready_ms is not None) for r in requests] == [(True, True)] * 4
    assert "11 event file(s) read in number order" in summary.notes[-1]


def test_v0_session_without_a_call_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "s2"
    (folder / "events").mkdir(parents=True)
    for ident in range(3):
        (folder / "events" / f"{ident}.json").write_text(json.dumps(
            {"id": ident, "timestamp": "2025-10-07T00:54:00", "source": "environment", "observation": "agent_state_changed", "content": "", "extras": {}}))
    requests, summary = import_file(folder / "events" / "0.json", FORMATS["openhands"], ImportContext())
    assert requests == [] and "none with a call's usage" in summary.notes[0]


def test_v0_damaged_sessions_end_cleanly(tmp_path: Path) -> None:
    """A 0.x session whose event files are edited, foreign or broken: one line and exit 2, or a
    reading; never a traceback."""
    source = tmp_path / "source"
    events = v0_session(source, served=("DeepSeek", "DeepInfra"))  # (the upstream each response names edited too)
    tally = Tally("openhands 0.x session", bound_s=20)

    @fuzz_settings(25)
    @given(ident=st.sampled_from([e["id"] for e in events]),
           raw=st.one_of(st.sampled_from(NASTY_TOKENS), st.sampled_from(events).flatmap(lambda e: edited(st.just(e), max_edits=4)).map(to_json_line)),
           extra=st.sampled_from(["", "11.json", "07.json", "x.json"]))
    def case(ident: int, raw: bytes, extra: str) -> None:
        folder = tmp_path / "case"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(source, folder)
        (folder / "events" / f"{ident}.json").write_bytes(raw)
        if extra:
            (folder / "events" / extra).write_bytes(raw)
        tally.check(["audit", str(folder), "--quiet"])

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0


# --- OpenHands V1 app server: v1_conversations/<conversation id hex>/<event id hex>.json, one
# event a file, the usage in its ConversationStateUpdateEvents. Written here from the app server's
# EventServiceBase / webhook_router (openhands/app_server/event/event_service_base.py,
# event_callback/webhook_router.py) and the SDK's ConversationStateUpdateEvent, ConversationStats
# and MetricsSnapshot (openhands-sdk/openhands/sdk/event/conversation_state.py,
# conversation/conversation_stats.py, llm/utils/metrics.py).
APP = Path(__file__).parent / "fixtures" / "openhands-app" / "v1_conversations"
SNAPSHOTS = APP / "3f1c0a9e6b2d4e578c419a0b7d2e5f13"  # stats updates as MetricsSnapshot (SDK from 2025-12-04)
FULL = APP / "9b7e2c4d1a3f4e6b8d0c2e4f6a8b0c1d"  # stats updates with token_usages (2025-11-25 to 12-04), a late full_state


def test_app_server_event_files_are_openhands_read_with_the_folders_first() -> None:
    for folder in (SNAPSHOTS, FULL):
        files = sorted(folder.iterdir())
        assert all(detect_format(f).name == "openhands" for f in files)
        read_with = FORMATS["openhands"].read_with
        assert read_with(files[0], json.loads(files[0].read_text())) is None
        assert all(read_with(f, json.loads(f.read_text())) == files[0] for f in files[1:])
        requests, summary = import_file(files[1], FORMATS["openhands"], ImportContext())
        assert requests == [] and f"read with {files[0]}" in summary.notes[0]


def test_app_server_snapshot_steps_are_the_calls_with_the_hand_sums() -> None:
    # Running totals of agent: (5000, 100, 0, 4900) then (10300, 180, 4900, 5200): two calls,
    # (5000, 100, 0, 4900) and (5300, 80, 4900, 300); condenser: one call (9000, 800, 6000, 1200).
    # A repeated total is no call. LiteLLM's prompt_tokens holds reads and writes.
    result = run_audit([SNAPSHOTS])
    t = result.totals
    assert t.requests == 3
    assert t.cache_read == 0 + 4900 + 6000 == 10900
    assert t.cache_write == 4900 + 300 + 1200 == 6400
    assert t.input == (5000 - 0 - 4900) + (5300 - 4900 - 300) + (9000 - 6000 - 1200) == 2000
    assert t.output == 100 + 80 + 800 == 980
    first = sorted(SNAPSHOTS.iterdir())[0]
    requests, summary = import_file(first, detect_format(first), ImportContext())
    def ms(clock: str) -> int:
        return int(datetime.fromisoformat(f"2026-03-02T{clock}+00:00").timestamp() * 1000)

    # A call is ready at its stats update and sent at the conversation's event before it.
    assert [(r.lane, r.lane_kind, r.sent_ms, r.ready_ms) for r in requests] == [
        ("main", "main", ms("10:00:01"), ms("10:00:05.990")),
        ("main", "main", ms("10:00:07"), ms("10:00:10.990")),
        ("condenser", "compaction", ms("10:00:15"), ms("10:00:19.990")),
    ]
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert any("agent: 2 from stats updates, condenser: 1 from stats updates" in n for n in summary.notes)


def test_app_server_token_usages_each_response_once_timed_by_its_action() -> None:
    # f1 (6000, 50, 0, 5900) and f2 (6400, 70, 5900, 400), each in two stats updates and a late full_state.
    first = sorted(FULL.iterdir())[0]
    requests, _ = import_file(first, detect_format(first), ImportContext())
    assert [(r.request_id, r.usage) for r in requests] == [
        ("chatcmpl-f1", Usage(cache_write_5m=5900, uncached=100, output=50)),
        ("chatcmpl-f2", Usage(cache_read=5900, cache_write_5m=400, uncached=100, output=70)),
    ]
    ms = int(datetime.fromisoformat("2025-11-30T08:00:09+00:00").timestamp() * 1000)
    assert (requests[1].sent_ms, requests[1].ready_ms) == (ms - 4000, ms)


def test_app_server_a_late_full_state_lists_the_calls_before_it_and_steps_go_on_after(tmp_path: Path) -> None:
    # A subscriber joining at 10:00:12 gets a full_state listing agent's two calls (the steps
    # before it are those calls); one more response later steps the total by (7000, 60, 6000, 500).
    folder = tmp_path / "v1_conversations" / SNAPSHOTS.name
    shutil.copytree(SNAPSHOTS, folder)
    full = next(json.loads(f.read_text()) for f in folder.iterdir() if json.loads(f.read_text()).get("key") == "full_state")
    agent = {"model_name": "anthropic/claude-sonnet-4-5-20250929", "accumulated_cost": 0.02,
             "accumulated_token_usage": token_usage("", 10300, 180, 4900, 5200) | {"per_turn_token": 5380},
             "token_usages": [token_usage("chatcmpl-s1", 5000, 100, 0, 4900), token_usage("chatcmpl-s2", 5300, 80, 4900, 300)]}
    late = {**full, "id": "0005eed0-0000-4000-8000-00000000aa01", "timestamp": "2026-03-02T10:00:12.000000",
            "value": {**full["value"], "stats": {"usage_to_metrics": {"agent": agent}}}}
    step = {"id": "0005eed0-0000-4000-8000-00000000aa02", "timestamp": "2026-03-02T10:00:30.000000", "source": "environment",
            "key": "stats", "kind": "ConversationStateUpdateEvent", "value": {"usage_to_metrics": {"agent": {
                "model_name": "anthropic/claude-sonnet-4-5-20250929", "accumulated_cost": 0.05,
                "accumulated_token_usage": token_usage("", 17300, 240, 10900, 5700) | {"per_turn_token": 7060}}}}}
    for event in (late, step):
        (folder / (event["id"].replace("-", "") + ".json")).write_text(json.dumps(event, indent=2))
    requests, summary = import_file(sorted(folder.iterdir())[0], FORMATS["openhands"], ImportContext())
    # In time order: the listed calls at their actions (10:00:06, 10:00:11), not at the full_state.
    assert [(r.lane, r.request_id, r.usage) for r in requests] == [
        ("main", "chatcmpl-s1", Usage(cache_write_5m=4900, uncached=100, output=100)),
        ("main", "chatcmpl-s2", Usage(cache_read=4900, cache_write_5m=300, uncached=100, output=80)),
        ("condenser", None, Usage(cache_read=6000, cache_write_5m=1200, uncached=1800, output=800)),
        ("main", None, Usage(cache_read=6000, cache_write_5m=500, uncached=500, output=60)),
    ]
    assert requests[3].prefix.parent == requests[1].prefix.node
    assert any("agent: 2 from token_usages and 1 from stats updates" in n for n in summary.notes)


def test_app_server_before_december_2025_named_by_time_and_kind(tmp_path: Path) -> None:
    # To 2025-11 the app server kept v1/events/<conversation id>/<YYYYMMDDHHMMSS>_<kind>_<event id hex>,
    # no extension (a folder walk does not list them: the first is named).
    folder = tmp_path / "v1" / "events" / "3f1c0a9e-6b2d-4e57-8c41-9a0b7d2e5f13"
    folder.mkdir(parents=True)
    for file in SNAPSHOTS.iterdir():
        event = json.loads(file.read_text())
        stamp = datetime.fromisoformat(event["timestamp"]).strftime("%Y%m%d%H%M%S")
        (folder / f"{stamp}_{event['kind']}_{event['id'].replace('-', '')}").write_text(file.read_text())
    files = sorted(folder.iterdir())
    assert all(FORMATS["openhands"].read_with(f, json.loads(f.read_text())) == files[0] for f in files[1:])
    requests, _ = import_file(files[0], detect_format(files[0]), ImportContext())
    assert [(r.lane, r.usage.cache_read) for r in requests] == [("main", 0), ("main", 4900), ("condenser", 6000)]


def test_app_server_conversation_without_usage_says_where_it_looked(tmp_path: Path) -> None:
    folder = tmp_path / "v1_conversations" / SNAPSHOTS.name
    shutil.copytree(SNAPSHOTS, folder)
    for file in folder.iterdir():
        if json.loads(file.read_text()).get("key") == "stats":
            file.unlink()
    requests, summary = import_file(sorted(folder.iterdir())[0], FORMATS["openhands"], ImportContext())
    assert requests == [] and "no per-call usage" in summary.notes[0] and "ConversationStateUpdateEvent" in summary.notes[0]
    assert "base_state.json" not in summary.notes[0]


def test_app_server_a_step_of_several_calls_is_not_one_call(tmp_path: Path) -> None:
    # The second update is lost: the step from 0 to the second total spans two calls (its
    # per_turn_token, the last call's prompt + output, is not the step's): not read, said.
    folder = tmp_path / SNAPSHOTS.name
    shutil.copytree(SNAPSHOTS, folder)
    for file in folder.iterdir():
        if json.loads(file.read_text()).get("timestamp") == "2026-03-02T10:00:05.990000":
            file.unlink()
    requests, summary = import_file(sorted(folder.iterdir())[0], FORMATS["openhands"], ImportContext())
    assert [r.lane for r in requests] == ["condenser"]
    assert any("1 step(s) of a running total not one call" in n for n in summary.notes)


def test_app_server_events_are_ordered_by_their_time_not_their_text(tmp_path: Path) -> None:
    # The same conversation, its timestamps written at other precisions and offsets. As text,
    # "10:00:10Z" sorts after "10:00:10.99+00:00" ("Z" after "."), and "11:00:15+01:00" after
    # every "10:..." time: the observation that sends the second call would follow its stats
    # update, and the one that sends the condenser's call would come last.
    folder = tmp_path / "v1_conversations" / SNAPSHOTS.name
    shutil.copytree(SNAPSHOTS, folder)
    written = {"2026-03-02T10:00:01.000000": "2026-03-02T10:00:05.123456",  # the message: sends the first call
               "2026-03-02T10:00:05.990000": "2026-03-02T10:00:05.5",  # its stats update
               "2026-03-02T10:00:07.000000": "2026-03-02T10:00:10Z",  # the observation: sends the second
               "2026-03-02T10:00:10.990000": "2026-03-02T10:00:10.99+00:00",
               "2026-03-02T10:00:15.000000": "2026-03-02T11:00:15+01:00",
               "2026-03-02T10:00:20.500000": "not a time"}  # the last event: keeps its place
    for file in folder.iterdir():
        event = json.loads(file.read_text())
        event["timestamp"] = written.get(event["timestamp"], event["timestamp"])
        file.write_text(json.dumps(event))
    requests, _ = import_file(sorted(folder.iterdir())[0], FORMATS["openhands"], ImportContext())

    def ms(clock: str) -> int:
        return int(datetime.fromisoformat(f"2026-03-02T{clock}+00:00").timestamp() * 1000)

    assert [(r.lane, r.sent_ms, r.ready_ms) for r in requests] == [
        ("main", ms("10:00:05.123"), ms("10:00:05.500")),
        ("main", ms("10:00:10"), ms("10:00:10.990")),
        ("condenser", ms("10:00:15"), ms("10:00:19.990")),
    ]


def _event_log(tmp_path: Path, edit=lambda event: event) -> Path:
    """The app-server fixture's events one a line in a file of their own (as a 1.x conversation's
    persisted events are kept where they are exported), each through ``edit`` (None drops it)."""
    events = [edit(json.loads(f.read_text())) for f in sorted(SNAPSHOTS.iterdir())]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events if e is not None))
    return path


def test_sdk_event_log_one_a_line_reads_its_stats_updates(tmp_path: Path) -> None:
    # The same calls as the folder: before, the file yielded none and sent the user to a
    # base_state.json it does not have.
    path = _event_log(tmp_path)
    assert detect_format(path).name == "openhands"
    requests, summary = import_file(path, FORMATS["openhands"], ImportContext())
    assert [(r.lane, r.lane_kind, r.usage) for r in requests] == [
        ("main", "main", Usage(cache_write_5m=4900, uncached=100, output=100)),
        ("main", "main", Usage(cache_read=4900, cache_write_5m=300, uncached=100, output=80)),
        ("condenser", "compaction", Usage(cache_read=6000, cache_write_5m=1200, uncached=1800, output=800)),
    ]
    assert any(n.startswith("an OpenHands 1.x event log (events one a line): its 11 event(s)") for n in summary.notes)
    assert not any("base_state.json" in n for n in summary.notes)


def test_sdk_event_log_without_stats_still_says_where_the_usage_is(tmp_path: Path) -> None:
    path = _event_log(tmp_path, lambda e: None if e.get("key") in ("stats", "full_state") else e)
    requests, summary = import_file(path, FORMATS["openhands"], ImportContext())
    assert requests == [] and "base_state.json" in summary.notes[0]


def test_an_llm_with_the_sdks_default_usage_id_is_the_main_lane(tmp_path: Path) -> None:
    # No full_state names the agent's LLM and its usage id is the SDK's default, "default": the
    # main lane (before, a side lane), the condenser still a compaction lane.
    def default(event: dict) -> dict | None:
        if event.get("key") == "full_state":
            return None
        usages = as_dict(event.get("value")).get("usage_to_metrics")
        if isinstance(usages, dict) and "agent" in usages:
            usages["default"] = usages.pop("agent")
        return event

    requests, _ = import_file(_event_log(tmp_path, default), FORMATS["openhands"], ImportContext())
    assert [(r.lane, r.lane_kind) for r in requests] == [("main", "main"), ("main", "main"), ("condenser", "compaction")]
    assert requests[1].prefix.parent == requests[0].prefix.node


def test_app_server_damaged_conversations_end_cleanly(tmp_path: Path) -> None:
    """An app-server conversation whose event files are edited, foreign or broken: one line and
    exit 2, or a reading; never a traceback."""
    files = {f.name: json.loads(f.read_text()) for f in sorted(SNAPSHOTS.iterdir()) + sorted(FULL.iterdir())}
    tally = Tally("openhands V1 app server", bound_s=20)

    @fuzz_settings(25)
    @given(name=st.sampled_from(sorted(files)), data=st.data())
    def case(name: str, data: st.DataObject) -> None:
        source = SNAPSHOTS if (SNAPSHOTS / name).exists() else FULL
        raw = data.draw(st.one_of(st.sampled_from(NASTY_TOKENS), edited(st.just(files[name]), max_edits=4).map(to_json_line),
                                  mutated((source / name).read_bytes())))
        folder = tmp_path / "v1_conversations" / source.name
        shutil.rmtree(folder.parent, ignore_errors=True)
        shutil.copytree(source, folder)
        (folder / name).write_bytes(raw)
        tally.check(["audit", str(folder.parent), "--quiet"])

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0


def _run_with_system(instance: str, system: str, tools: list[str], read: int, hour: int) -> dict:
    """An evaluation output line whose history starts with OpenHands' system message (0.4x on:
    ``action: system``, ``args.content`` and ``args.tools``) and one call that read ``read``."""
    line = old_output_line(instance)
    schemas = [{"type": "function", "function": {"name": name, "parameters": {}}} for name in tools]
    line["history"] = [
        {"id": 0, "timestamp": f"2026-01-23T{hour:02d}:00:00", "source": "agent", "action": "system",
         "args": {"content": system, "tools": schemas, "openhands_version": "0.58.0", "agent_class": "CodeActAgent"}},
        {"id": 1, "timestamp": f"2026-01-23T{hour:02d}:00:30", "source": "agent", "action": "run", "args": {},
         "tool_call_metadata": {"model_response": {"id": f"chatcmpl-{instance}", "model": "gpt-5-2025-08-07",
                                                   "usage": {"prompt_tokens": 9000, "completion_tokens": 50,
                                                             "prompt_tokens_details": {"cached_tokens": read}}}}},
    ]
    return line


def test_runs_of_another_system_prompt_or_tool_set_in_one_folder_have_heads_of_their_own(tmp_path: Path) -> None:
    """The system message a run logs (its prompt and tool schemas) is the head of every call of
    the run: runs of one folder with another prompt or tool set do not share one head and its size."""
    runs = [("You are OpenHands.", ["execute_bash", "finish"], 6400)] * 3 + [("You are OpenHands.", ["execute_bash", "finish", "browser"], 8448)] * 2
    lines = [_run_with_system(f"repo__repo-{i}", system, tools, read, 10 + i) for i, (system, tools, read) in enumerate(runs)]
    path = tmp_path / "output.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    requests = import_file(path, detect_format(path), ImportContext())[0]
    heads = [r.prefix.head for r in requests]
    assert len(set(heads)) == 2 and heads[0] == heads[1] == heads[2] != heads[3] == heads[4]
    assert all(h.startswith("openhands:openai:") and h.endswith(":gpt-5-2025-08-07") for h in heads)
    assert [row.predicted_cache_read for row in run_audit([path]).rows] == [6400] * 3 + [8448] * 2


def test_a_run_that_logs_no_system_message_keeps_the_model_head(tmp_path: Path) -> None:
    line = old_output_line("alibaba__fastjson2-2775")
    line["history"].insert(0, {"id": -1, "source": "agent", "action": "system", "args": {}})  # nothing of the head in it
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(line) + "\n")
    requests = import_file(path, detect_format(path), ImportContext())[0]
    assert {r.prefix.head for r in requests} == {"openhands:openai:gpt-5-2025-08-07"}


def _conversation_with_prompt(root: Path, name: str, prompt: str, tools: list[str], dynamic: str | None = None) -> Path:
    """A copy of the 1.x conversation folder whose SystemPromptEvent logs ``prompt`` and ``tools``
    (``ToolDefinition`` objects, as the SDK writes them from 2025-12-18), and ``dynamic`` as its
    per-conversation ``dynamic_context``."""
    folder = root / name
    shutil.copytree(V1, folder)
    first = next((folder / "events").glob("event-00000-*.json"))
    event = json.loads(first.read_text())
    event["system_prompt"] = {"type": "text", "text": prompt, "cache_prompt": False}
    event["tools"] = [{"kind": "TerminalTool", "title": t, "description": f"the {t} tool", "action_type": "TerminalAction"} for t in tools]
    if dynamic is not None:
        event["dynamic_context"] = {"type": "text", "text": dynamic}
    first.write_text(json.dumps(event))
    return folder / "base_state.json"


def test_v1_system_prompt_event_nested_too_deep_is_left_out_as_an_unreadable_event(tmp_path: Path) -> None:
    # Found by fuzzing: event files were read by json.loads alone, so a SystemPromptEvent whose
    # tools nest about 980 deep loaded and then overflowed the stack in its head digest
    # (RecursionError, a traceback). Event files are read as every log is (at most 100 levels):
    # one nested deeper is left out, as an unreadable event is.
    from prefixbench.workloads.logs.formats.openhands import _timeline

    state = _conversation_with_prompt(tmp_path, "a", "You are OpenHands agent.", ["terminal"])
    first = next((state.parent / "events").glob("event-00000-*.json"))
    event = json.loads(first.read_text())
    assert _timeline(state.parent / "events", [])[1] is not None
    for depth in (150, *range(900, 1000, 4)):
        event["tools"] = "NESTED"
        first.write_text(json.dumps(event).replace('"NESTED"', "[" * depth + "]" * depth))
        assert _timeline(state.parent / "events", [])[1] is None, depth
    requests = import_file(state, detect_format(state), ImportContext())[0]
    assert {r.prefix.head for r in requests} == {"openhands:anthropic:claude-sonnet-4-5-20250929"}


def test_v1_conversations_of_another_system_prompt_have_heads_of_their_own(tmp_path: Path) -> None:
    """A 1.x conversation's SystemPromptEvent (its prompt and tools) is the head of its agent's
    calls: conversations with another prompt or tool set do not share one head, those with the
    same prompt (whatever their per-conversation dynamic_context) do; the condenser keeps the
    model head."""
    states = [_conversation_with_prompt(tmp_path, "a", "You are OpenHands agent.", ["terminal", "file_editor"], "repo: a"),
              _conversation_with_prompt(tmp_path, "b", "You are OpenHands agent.", ["terminal", "file_editor"], "repo: b"),
              _conversation_with_prompt(tmp_path, "c", "You are OpenHands agent.", ["terminal", "file_editor", "browser"]),
              _conversation_with_prompt(tmp_path, "d", "You are a planning agent.", ["terminal", "file_editor"])]
    heads = []
    for state in states:
        requests = import_file(state, detect_format(state), ImportContext())[0]
        main = {r.prefix.head for r in requests if r.lane == "main"}
        assert len(main) == 1 and {r.prefix.head for r in requests if r.lane != "main"} == {"openhands:anthropic:claude-sonnet-4-5-20250929"}
        heads.append(main.pop())
    assert heads[0] == heads[1] and len({heads[0], heads[2], heads[3]}) == 3
    assert all(h.startswith("openhands:anthropic:") and h.endswith(":claude-sonnet-4-5-20250929") for h in heads)
    # The app server's conversation folder: its SystemPromptEvent is one of its event files.
    folder = tmp_path / "v1_conversations" / SNAPSHOTS.name
    shutil.copytree(SNAPSHOTS, folder)
    prompt = json.loads(next((states[0].parent / "events").glob("event-00000-*.json")).read_text())
    prompt |= {"id": "0005eed0-0000-4000-8000-000000000001", "timestamp": "2026-03-02T10:00:00.500000"}
    (folder / "0005eed0000040008000000000000001.json").write_text(json.dumps(prompt))
    requests = import_file(sorted(folder.iterdir())[0], FORMATS["openhands"], ImportContext())[0]
    assert {r.prefix.head for r in requests if r.lane == "main"} == {heads[0]}
    assert {r.prefix.head for r in requests if r.lane != "main"} == {"openhands:anthropic:claude-sonnet-4-5-20250929"}


def test_a_token_usage_without_cache_write_tokens_has_its_writes_not_reported(tmp_path: Path) -> None:
    # A Claude TokenUsage with cache_read_tokens but no cache_write_tokens field was read as
    # writing 0; a cache_write_tokens of 0 given stays a 0.
    without = token_usage("r1", 6007, 40, 0, 0)
    del without["cache_write_tokens"]
    later = token_usage("r2", 6012, 9, 6000, 0)
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(output_line("django__django-1", [without, later])) + "\n")
    requests, summary = import_file(path, detect_format(path), ImportContext())
    assert [(r.provider, r.usage.writes_reported) for r in requests] == [("anthropic", False), ("anthropic", True)]
    assert any("whose usage has no write field" in n for n in summary.notes)
    assert [r.reported_cache_write for r in run_audit([path]).rows] == [None, 0]


def test_a_v1_event_file_that_is_a_named_pipe_is_left_out_not_waited_on(tmp_path: Path) -> None:
    """fuzz60: the 1.x reader times its calls from the events/ folder's event-*.json files, read
    whole: one that was a named pipe made the audit wait for ever (the folder walk skips it with
    a warning; the timing read did not). It is left out, as an event file that cannot be read."""
    import os

    whole = run_audit([V1]).totals
    folder = tmp_path / V1.name
    shutil.copytree(V1, folder)
    event = sorted((folder / "events").glob("event-*.json"))[-1]
    event.unlink()
    os.mkfifo(event)

    with no_hang():
        totals = run_audit([folder]).totals
    assert (totals.requests, totals.cache_read, totals.input) == (whole.requests, whole.cache_read, whole.input)
    # Named, as Gemini CLI names a metadata file that is no regular file (it was left out silently).
    notes = import_file(folder / "base_state.json", detect_format(folder / "base_state.json"), ImportContext())[1].notes
    assert f"events/{event.name}: not a regular file (a pipe or a device may never end): left out of the call times" in notes
