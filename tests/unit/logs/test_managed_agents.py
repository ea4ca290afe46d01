"""Claude Managed Agents event streams (workloads/logs/formats/managed_agents.py): one call per
``span.model_request_end``, totals checked field by field against sums worked out by hand.

On main none of these files is read: each is "unknown log format"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.reports.cli import run
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format

T0 = "2026-08-02T09:00:"


def _ev(kind: str, eid: str, sec: float | None, **fields) -> dict:
    event = {"type": kind, "id": eid, **fields}
    if sec is not None:
        event["processed_at"] = f"{T0}{sec:06.3f}Z"
    return event


def _span(n: int, sec: float, usage: tuple[int, int, int, int], **fields) -> list[dict]:
    """A model request: its start, then its end ``usage`` = (input, read, written, output) 2 s on."""
    inp, read, written, out = usage
    return [
        _ev("span.model_request_start", f"sevt_s{n}", sec),
        _ev("span.model_request_end", f"sevt_e{n}", sec + 2, model_request_start_id=f"sevt_s{n}", is_error=False,
            model_usage={"input_tokens": inp, "cache_read_input_tokens": read, "cache_creation_input_tokens": written,
                         "output_tokens": out, **fields}),
    ]


def _stream() -> list[dict]:
    return [
        _ev("session.status_running", "sevt_r", 0),
        _ev("session.thread_status_running", "sevt_tr", 0, agent_name="coder", session_thread_id="sthr_1"),
        _ev("user.message", "sevt_u", 0.1, content=[{"type": "text", "text": "go"}]),
        *_span(1, 1, (3, 0, 5000, 100)),
        *_span(2, 4, (2, 5000, 300, 50)),
        _ev("span.model_request_start", "sevt_s3", 7),
        _ev("span.model_request_end", "sevt_e3", 8, model_request_start_id="sevt_s3", is_error=True,
            model_usage={"input_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 0}),
        _ev("session.error", "sevt_err", 8.1, error={"type": "model_request_failed_error", "message": "x", "retry_status": {"type": "retrying"}}),
        *_span(4, 9, (2, 5300, 0, 20, ), speed="fast"),
        _ev("agent.thread_context_compacted", "sevt_c", 12),
        *_span(5, 13, (4, 0, 2000, 70)),
        _ev("span.outcome_evaluation_end", "sevt_o", 16, outcome_evaluation_start_id="x", outcome_id="outc_1", iteration=0,
            result="satisfied", explanation="ok",
            usage={"input_tokens": 10, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 100, "output_tokens": 30}),
        _ev("session.usage", "sevt_su", 17, usage={"input_tokens": 21, "cache_read_input_tokens": 11200, "output_tokens": 270,
                                                   "cache_creation": {"ephemeral_5m_input_tokens": 7400, "ephemeral_1h_input_tokens": 0},
                                                   "list_cost": {"amount": "1234", "currency": "USD"}}),
        _ev("span.model_request_start", "sevt_s6", 18),  # interrupted: no end
        _ev("user.interrupt", "sevt_i", None),
    ]


def _write(path: Path, events: list[dict], wrap: bool = False) -> Path:
    lines = [{"role": "system", "kind": e["type"].split(".", 1)[1], "time": e.get("processed_at"), "raw": e} if wrap else e for e in events]
    path.write_text("".join(json.dumps(v) + "\n" for v in lines))
    return path


@pytest.mark.parametrize("shape", ["lines", "wrapped", "array", "page"])
def test_each_span_end_is_one_call_and_the_totals_are_the_spans_sums(tmp_path: Path, shape: str) -> None:
    events = _stream()
    path = tmp_path / "events.json"
    if shape == "array":
        path.write_text(json.dumps(events))
    elif shape == "page":
        path.write_text(json.dumps({"data": events, "next_page": None}))
    else:
        _write(path, events, wrap=shape == "wrapped")
    assert detect_format(path) is FORMATS["managed-agents"]
    result = run_audit([path])
    t = result.totals
    # Four spans with tokens (the is_error one has none, the last start none at all), by hand:
    # input 3+2+2+4, read 0+5000+5300+0, written 5000+300+0+2000, output 100+50+20+70.
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.cache_write_1h, t.output) == (4, 11, 10_300, 7_300, 0, 240)
    requests, summaries = load_trace([path])
    assert [r.provider for r in requests] == ["anthropic"] * 4 and {r.model for r in requests} == {"unknown"}
    assert [r.lane for r in requests] == ["main"] * 4
    first, second, fast, compacted = requests
    assert (first.sent_ms, first.done_ms) == (1785661201000, 1785661203000)  # the span's start and end
    assert first.events == (("user_turn", ""),)
    assert second.prefix.parent == first.prefix.node and fast.prefix.parent == second.prefix.node
    assert [r.speed for r in requests] == ["", "", "fast", ""]  # model_usage.speed: priced at the fast row
    assert compacted.prefix.parent is None and ("compaction", "agent.thread_context_compacted") in compacted.events
    reasons = [reason for _, reason in summaries[0].skipped]
    assert reasons == ["failed model request (is_error) with no tokens",
                       "model request started with no span.model_request_end (no usage: interrupted)"]
    notes = " ".join(summaries[0].notes)
    assert "spans sum to 17,611 prompt tokens (10,300 read, 7,300 written) and 240 output" in notes
    assert "grader's usage" in notes and "1,010 prompt tokens (900 read, 100 written), 30 output" in notes
    assert "session.usage" in notes and "list cost 12.34 USD" in notes
    assert "coder (sthr_1)" in notes and "1 call(s) in fast mode" in notes
    assert "no event names the model" in notes


def test_a_list_cost_of_digits_int_does_not_take_is_no_cost(tmp_path: Path) -> None:
    # Found by fuzzing: the note's list cost went through int() where str.isdigit passed: "²"
    # (a digit to isdigit, no int) raised ValueError, a traceback. No cost is named then.
    events = _stream()
    for event in events:
        if event["type"] == "session.usage":
            event["usage"]["list_cost"]["amount"] = "\u00b2"
    _, summaries = load_trace([_write(tmp_path / "events.jsonl", events)])
    notes = " ".join(summaries[0].notes)
    assert "session.usage" in notes and "list cost" not in notes


def test_a_session_update_names_the_model_from_the_next_turn(tmp_path: Path) -> None:
    events = [
        _ev("session.status_running", "sevt_r", 0),
        *_span(1, 1, (3, 0, 5000, 10)),
        _ev("session.updated", "sevt_up", 4, agent={"type": "agent", "id": "agent_1", "model": {"id": "claude-sonnet-4-5", "speed": "standard"}}),
        *_span(2, 5, (3, 5000, 10, 10)),  # the same turn: still unknown
        _ev("user.message", "sevt_u", 8, content=[{"type": "text", "text": "more"}]),
        *_span(3, 9, (3, 5010, 10, 10)),
    ]
    requests, summaries = load_trace([_write(tmp_path / "s.jsonl", events)])
    assert [r.model for r in requests] == ["unknown", "unknown", "claude-sonnet-4-5"]
    assert ("model_change", "unknown -> claude-sonnet-4-5") in requests[2].events
    result = run_audit([tmp_path / "s.jsonl"])
    assert result.totals.cost_usd > 0  # the named model's calls are priced


@pytest.mark.parametrize(
    ("usage", "message"),
    [
        ({"input_tokens": -1}, "model_usage.input_tokens is not a non-negative integer"),
        ({"output_tokens": "9"}, "model_usage.output_tokens is not a non-negative integer"),
        ("x", "model_usage is not an object"),
    ],
)
def test_a_bad_count_is_one_line_naming_the_place(tmp_path: Path, capsys: pytest.CaptureFixture[str], usage: object, message: str) -> None:
    events = [_ev("span.model_request_start", "sevt_s", 0),
              _ev("span.model_request_end", "sevt_e", 1, model_request_start_id="sevt_s", model_usage=usage)]
    path = _write(tmp_path / "bad.jsonl", events)
    with pytest.raises(UserError, match=message):
        load_trace([path])
    assert run(["audit", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}:2: " in err[0] and message in err[0]


def test_a_span_is_read_by_anthropics_usage_reader(tmp_path: Path) -> None:
    # Fails on main: the format read its four counts with its own code beside the provider's
    # reader, so a span's cache_creation split (1 h writes, as Anthropic's usage carries it) was
    # read as 5 m writes, and a bad 1 h count passed unseen.
    from prefixbench.simulator.providers.anthropic import read_usage
    from prefixbench.simulator.usage import Usage

    usage = {"input_tokens": 3, "cache_read_input_tokens": 10, "cache_creation_input_tokens": 5000, "output_tokens": 9,
             "cache_creation": {"ephemeral_1h_input_tokens": 4000}, "speed": "fast"}
    events = [_ev("span.model_request_start", "sevt_s", 0),
              _ev("span.model_request_end", "sevt_e", 1, model_request_start_id="sevt_s", model_usage=usage)]
    requests, _ = load_trace([_write(tmp_path / "s.jsonl", events)])
    assert [r.usage for r in requests] == [read_usage(usage, "x")]
    assert requests[0].usage == Usage(cache_read=10, cache_write_5m=1000, cache_write_1h=4000, uncached=3, output=9, speed="fast")
    usage["cache_creation"] = {"ephemeral_1h_input_tokens": -1}
    with pytest.raises(UserError, match="model_usage.cache_creation.ephemeral_1h_input_tokens is not a non-negative integer"):
        load_trace([_write(tmp_path / "s.jsonl", events)])


def test_a_stream_with_no_span_end_reads_no_call(tmp_path: Path) -> None:
    events = [_ev("session.status_running", "sevt_r", 0), _ev("agent.message", "sevt_m", 1, content=[])]
    requests, summaries = load_trace([_write(tmp_path / "s.jsonl", events)])
    assert requests == [] and summaries[0].format == "managed-agents"


def test_a_span_naming_a_thread_is_that_threads_lane(tmp_path: Path) -> None:
    """No public stream has one (the API documents cross-posting for permission requests only),
    but a span that names its thread is read in that thread's lane, a chain of its own."""
    events = [*_span(1, 1, (3, 0, 5000, 10)), *_span(2, 3, (3, 5000, 10, 10))]
    events[2]["session_thread_id"] = events[3]["session_thread_id"] = "sthr_child"
    events += _span(3, 6, (3, 5010, 20, 10))
    requests, _ = load_trace([_write(tmp_path / "s.jsonl", events)])
    assert [(r.lane, r.lane_kind) for r in requests] == [("main", "main"), ("thread:sthr_child", "subagent"), ("main", "main")]
    assert requests[1].prefix.parent is None and requests[2].prefix.parent == requests[0].prefix.node


def test_a_copilot_cli_events_file_is_named_not_read_as_a_managed_agents_stream(tmp_path: Path) -> None:
    # GitHub Copilot CLI's events.jsonl shares event types with Managed Agents (user.message,
    # session.error, system.message), each with a string id: main detected it as a Managed Agents
    # stream and said "nothing to audit ... a Managed Agents event stream: one call per
    # span.model_request_end (0)". Its events carry their payload under ``data`` and a
    # ``parentId``; it logs each call's output tokens, and prompt and cache counts only per session.
    events = [
        {"type": "session.start", "data": {"sessionId": "s", "version": 1, "producer": "copilot-agent", "copilotVersion": "0.0.400",
                                          "startTime": "2026-01-10T09:00:00.000Z"}, "id": "e1", "timestamp": "2026-01-10T09:00:00.000Z", "parentId": None},
        {"type": "user.message", "data": {"content": "list the files"}, "id": "e2", "timestamp": "2026-01-10T09:00:01.000Z", "parentId": "e1"},
        {"type": "assistant.message", "data": {"messageId": "m1", "content": "Done", "toolRequests": [], "outputTokens": 7, "model": "gpt-5-mini"},
         "id": "e3", "timestamp": "2026-01-10T09:00:04.000Z", "parentId": "e2"},
        {"type": "session.shutdown", "data": {"modelMetrics": {"gpt-5-mini": {"requests": 1}},
                                             "tokenDetails": {"input": {"tokenCount": 900}, "output": {"tokenCount": 7},
                                                              "cache_read": {"tokenCount": 0}, "cache_write": {"tokenCount": 0}}},
         "id": "e4", "timestamp": "2026-01-10T09:00:05.000Z", "parentId": "e3"},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    with pytest.raises(UserError, match=r"events\.jsonl:1: a GitHub Copilot CLI session \(events\.jsonl\): .* no request to audit; "
                       r"audit its session store instead \(~/\.copilot/session-store\.db, Copilot CLI 1\.0\.73 on\), or its "
                       r"OpenTelemetry file export \(run copilot with COPILOT_OTEL_FILE_EXPORTER_PATH=FILE, then audit FILE: format otel\)$"):
        detect_format(path)
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "events.jsonl").write_bytes(path.read_bytes())
    with pytest.raises(UserError, match="none is a log"):  # beside no log: the walk skips it as another tool's file
        run_audit([folder])


def test_a_copilot_cli_session_folder_is_one_line_pointing_to_the_otel_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A session folder as Copilot CLI 1.0 keeps it (~/.copilot/session-state/<id>/): its events, its
    # workspace.yaml and a checkpoint index. The events log no call's prompt or cache counts in any
    # version (assistant.usage is an ephemeral event, never written to the file; docs/formats.md),
    # so audit names the format and where Copilot CLI does write each call's usage: its session
    # store (format copilot-cli) and its OTel file export (format otel). Before this the line
    # ended at "no request to audit".
    session = tmp_path / "session-state" / "5f0c"
    (session / "checkpoints").mkdir(parents=True)
    (session / "workspace.yaml").write_text("id: 5f0c\ncwd: /w\n")
    (session / "checkpoints" / "index.md").write_text("# Checkpoint History\n")
    events = [
        {"type": "session.start", "data": {"sessionId": "5f0c", "version": 1, "producer": "copilot-agent",
                                          "copilotVersion": "1.0.91", "selectedModel": "claude-sonnet-4.6"},
         "id": "e1", "timestamp": "2026-10-04T20:15:18.634Z", "parentId": None},
        {"type": "assistant.message", "data": {"messageId": "m1", "content": "Done", "toolRequests": [], "outputTokens": 9,
                                              "model": "claude-sonnet-4.6"},
         "id": "e2", "timestamp": "2026-10-04T20:15:25.000Z", "parentId": "e1"},
        {"type": "session.shutdown", "data": {"shutdownType": "routine", "modelMetrics": {"claude-sonnet-4.6": {
            "requests": {"count": 1, "cost": 1}, "usage": {"inputTokens": 12000, "outputTokens": 9, "cacheReadTokens": 0,
                                                           "cacheWriteTokens": 11000}}}},
         "id": "e3", "timestamp": "2026-10-04T20:15:26.000Z", "parentId": "e2"},
    ]
    (session / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    for target in (session, session / "events.jsonl"):
        assert run(["audit", str(target), "--quiet"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1
        assert "a GitHub Copilot CLI session (events.jsonl)" in err
        assert ("audit its session store instead (~/.copilot/session-store.db, Copilot CLI 1.0.73 on), or its "
                "OpenTelemetry file export (run copilot with COPILOT_OTEL_FILE_EXPORTER_PATH=FILE, then audit FILE: format otel)") in err


def test_a_copilot_cli_session_of_late_2025_is_not_said_to_log_output_tokens(tmp_path: Path) -> None:
    # Copilot CLI's sessions of late 2025 (``~/.copilot/session-state/<id>.jsonl``, a committed one
    # at Tokisaki7-Dev/HAWZX-AI@f1c0568, ``copilotVersion`` "unknown") carry no token count at all:
    # their assistant.message events have no outputTokens and there is no session.shutdown. Main's
    # refusal said the file "logs each call's output tokens only", which such a file does not.
    events = [
        {"type": "session.start", "data": {"sessionId": "s", "version": 1, "producer": "copilot-agent", "copilotVersion": "unknown",
                                          "startTime": "2025-12-02T05:48:47.760Z"}, "id": "e1", "timestamp": "2025-12-02T05:48:47.760Z", "parentId": None},
        {"type": "user.message", "data": {"content": "continue", "attachments": []}, "id": "e2", "timestamp": "2025-12-02T05:48:47.774Z", "parentId": "e1"},
        {"type": "assistant.message", "data": {"messageId": "m1", "content": "Done", "toolRequests": []},
         "id": "e3", "timestamp": "2025-12-02T05:48:52.000Z", "parentId": "e2"},
    ]
    path = tmp_path / "5f0c.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    with pytest.raises(UserError) as caught:
        detect_format(path)
    said = str(caught.value)
    assert said.startswith(f"{path}:1: a GitHub Copilot CLI session (events.jsonl): it logs no call's prompt or cache counts")
    assert "output tokens only" not in said
