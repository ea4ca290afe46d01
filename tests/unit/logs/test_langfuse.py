"""Langfuse observations (workloads/logs/formats/langfuse.py): every shape of export, each
integration's usageDetails, and what is counted apart.

The fixtures are written here from Langfuse's public API types (``ObservationsView``, the
``{data, meta}`` page, a trace with its ``observations``), the columns of its blob-storage export
(``LEGACY_OBSERVATION_EXPORT_FIELDS``), its ingestion's usage normalization
(``packages/shared/src/server/ingestion/types.ts``: an OpenAI usage's details are subtracted from
``input``) and the Python SDK's LangChain handler (``_parse_usage_model``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.formats.common import parse_time_ms
from prefixbench.workloads.logs.formats.langfuse import from_litellm, litellm_readings, read_details

FIXTURES = Path(__file__).parent / "fixtures"
SHAPES = ("langfuse.json", "langfuse-openai.jsonl", "langfuse-trace.json", "langfuse-legacy.json", "langfuse-blob.jsonl")


def read(path: Path):
    fmt = detect_format(path)
    assert fmt is FORMATS["langfuse"]
    return import_file(path, fmt, ImportContext())


@pytest.mark.parametrize("name", SHAPES)
def test_every_shape_is_detected_from_content_under_any_name(tmp_path: Path, name: str) -> None:
    # An API page, JSON lines, a trace export, a bare array, the blob export: named anything.
    copy = tmp_path / "export-2025-11.txt"
    shutil.copy(FIXTURES / name, copy)
    assert detect_format(copy) is FORMATS["langfuse"]


def test_the_api_page_totals_equal_the_observations_own_sums() -> None:
    # Sums of the served generations' usageDetails (gen-3 failed: level ERROR, counted apart).
    result = run_audit([FIXTURES / "langfuse.json"])
    t = result.totals
    assert t.requests == 3
    assert t.input == 20 + 8 + 264
    assert t.output == 50 + 12 + 9
    assert t.cache_read == 0 + 4000 + 1536
    assert t.cache_write == 4000 + 300
    assert t.cache_write_1h == 0
    page = json.loads((FIXTURES / "langfuse.json").read_text())
    served = [o for o in page["data"] if o["type"] == "GENERATION" and o["level"] != "ERROR"]
    # Every bucket is disjoint: prompt + output is the observation's own total.
    assert t.input + t.cache_read + t.cache_write + t.output == sum(o["usageDetails"]["total"] for o in served)


def test_a_v2_api_page_reads_its_raw_string_input_as_the_messages_sent() -> None:
    """``GET /api/public/v2/observations`` (fields core,basic,time,io,model,usage; fern
    ``commons.ObservationV2``) names the model ``providedModelName``, gives ``meta.cursor`` and
    returns ``input`` as the raw string Langfuse stored: JSON text of the messages. It used to be
    read as no messages (the session a chain); it is the body, as a v1 page's list is."""
    requests, summary = read(FIXTURES / "langfuse-v2.json")
    assert [r.model for r in requests] == ["claude-sonnet-4-5-20250929"] * 2 and {r.lane for r in requests} == {"sess-v2"}
    # Anthropic's usage as it is: input (uncached) beside cache_read_input_tokens / cache_creation_input_tokens.
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests] == [
        (12, 0, 2100, 40), (9, 2100, 25, 30)]
    assert sum(r.usage.uncached + r.usage.cache_read + r.usage.cache_write_5m + r.usage.output for r in requests) == 2152 + 2164
    first, second = requests
    assert first.body is not None and second.body is not None
    # (the system message is the body's system prompt, not one of its messages)
    assert [m.role for m in second.body.messages] == ["user", "assistant", "user"] and len(first.body.messages) == 1
    assert not any("read as chains" in note for note in summary.notes)


def test_a_raw_string_input_that_is_no_json_holds_no_messages(tmp_path: Path) -> None:
    page = json.loads((FIXTURES / "langfuse-v2.json").read_text())
    page["data"][0]["input"] = "[not json"
    page["data"][1]["input"] = "Fix the failing test in utils.py"
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(page))
    requests, summary = read(path)
    assert [r.body for r in requests] == [None, None] and any("read as chains" in note for note in summary.notes)


def test_a_raw_string_input_nested_too_deep_holds_no_messages(tmp_path: Path) -> None:
    # Found by fuzzing: JSON text nested deeper than msgspec decodes raised RecursionError, a traceback.
    page = json.loads((FIXTURES / "langfuse-v2.json").read_text())
    page["data"][0]["input"] = "[" * 2000 + "]" * 2000
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(page))
    requests, _ = read(path)
    assert len(requests) == 2 and requests[0].body is None


def test_a_raw_string_input_holding_a_lone_surrogate_is_refused_as_a_list_input_is(tmp_path: Path, capsys) -> None:
    # Found by fuzzing: a lone surrogate (an escape the file's JSON decoded into the text) made
    # msgspec raise UnicodeEncodeError, a traceback. Refused in one line, as the same messages
    # given as a list are.
    page = json.loads((FIXTURES / "langfuse-v2.json").read_text())
    for value in ('[{"role": "user", "content": "a\ud800"}]', [{"role": "user", "content": "a\ud800"}]):
        page["data"][0]["input"] = value
        path = tmp_path / "v2.json"
        path.write_text(json.dumps(page))
        assert main(["audit", "--quiet", str(path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"prefixbench: error: {path}:1: observation obs-v2-1: input[0].content holds a lone surrogate \\ud800, "
                       "which is not Unicode text"]


def test_the_openai_integration_splits_cached_tokens_out_of_input() -> None:
    # Langfuse subtracts prompt_tokens_details from input (input_cached_tokens) and the completion
    # details from output (output_reasoning_tokens): both are added back. The third generation's
    # sender put the whole prompt in input and gave its own total (5020 < 5000 + 4864 + 20):
    # input includes the cached part. The embedding is not a call.
    requests, summary = read(FIXTURES / "langfuse-openai.jsonl")
    assert [r.usage for r in requests] == [
        Usage(uncached=1800, output=60 + 192),
        Usage(cache_read=3840, uncached=128, output=30 + 64),
        Usage(cache_read=4864, uncached=5000 - 4864, output=20),
    ]
    assert [r.envelope for r in requests] == [(("effort", "high"),)] * 2 + [()]
    # The messages sent are the body (a lane with messages everywhere); the other lane is a chain.
    first, second, third = requests
    assert first.body is not None and second.body is not None and third.body is None and third.prefix is not None
    assert len(second.body.messages) > len(first.body.messages) and first.body.tools
    assert [reason for _, reason in summary.skipped] == ["embedding emb-1: no prompt to cache"]
    assert any(n.startswith("2 generation(s): usageDetails buckets are disjoint") for n in summary.notes)
    assert any(n.startswith("1 generation(s): the sender's total is below the sum of the buckets") for n in summary.notes)
    t = run_audit([FIXTURES / "langfuse-openai.jsonl"]).totals
    # OpenAI reports no write count: the writes are unknown (None), not 0.
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == (3, 1800 + 128 + 136, 252 + 94 + 20, 3840 + 4864, None)


def test_a_trace_export_is_one_session_lane_of_anthropic_additive_calls() -> None:
    # LangChain's usage_metadata (input_cache_read / input_cache_creation split out of input) and
    # Anthropic's raw usage (input below its reads and writes); the TTL split of the raw usage
    # repeats its cache_creation_input_tokens and is not counted twice.
    requests, summary = read(FIXTURES / "langfuse-trace.json")
    assert [(r.lane, r.request_id) for r in requests] == [("sess-7", "gen-a1"), ("sess-7", "gen-a2"), ("sess-7", "gen-a3")]
    assert [r.usage for r in requests] == [
        Usage(cache_write_5m=6000, uncached=10, output=25),
        Usage(cache_read=6000, uncached=12, output=30),
        Usage(cache_read=6000, cache_write_1h=1200, uncached=5, output=9),
    ]
    assert [r.provider for r in requests] == ["anthropic"] * 3
    # A chain in start order, idle counted from the previous end.
    assert [r.prefix.parent for r in requests] == [None, requests[0].prefix.node, requests[1].prefix.node]
    assert [r.done_ms for r in requests] == [1762178403000, 1762178406000, 1762178409400]
    t = run_audit([FIXTURES / "langfuse-trace.json"]).totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h) == (3, 27, 64, 12000, 7200, 1200)


def test_observations_without_cache_keys_are_cache_not_reported() -> None:
    # Older observations: usage {input, output, total, unit} or promptTokens / completionTokens;
    # usage in CHARACTERS is not tokens.
    requests, summary = read(FIXTURES / "langfuse-legacy.json")
    assert [r.usage for r in requests] == [
        Usage(uncached=2100, output=40, cache_reported=False),
        Usage(uncached=2300, output=15, cache_reported=False),
    ]
    assert [reason for _, reason in summary.skipped] == ["generation gen-l3: usage in CHARACTERS, not tokens"]
    assert any("cache use not reported, not zero" in n for n in summary.notes)
    t = run_audit([FIXTURES / "langfuse-legacy.json"]).totals
    assert (t.requests, t.input, t.output, t.cache_read) == (2, 4400, 55, None)


def test_the_blob_export_reads_snake_case_columns_and_string_counts() -> None:
    # Enriched observations (observations_v2/): the trace's session_id on each row is the lane.
    requests, summary = read(FIXTURES / "langfuse-blob.jsonl")
    assert [r.lane for r in requests] == ["sess-blob", "sess-blob"]
    assert [r.usage for r in requests] == [
        Usage(cache_write_5m=3000, uncached=3, output=40),
        Usage(cache_read=3000, cache_write_5m=150, uncached=6, output=22),
    ]
    assert [(r.sent_ms, r.ready_ms, r.done_ms) for r in requests] == [
        (1762257600000, 1762257601000, 1762257601500),
        (1762257603000, 1762257603800, 1762257604000),
    ]
    assert [reason for _, reason in summary.skipped] == ["generation gen-b2 repeated: counted once"]
    assert any("sum to $0.0134" in n for n in summary.notes)  # 0.011859 + 0.00159, the duplicate once


@pytest.mark.parametrize(
    ("details", "usage", "convention"),
    [
        # Langfuse's own OpenAI normalization: disjoint buckets, total = their sum.
        ({"input": 264, "input_cached_tokens": 1536, "output": 9, "total": 1809}, Usage(cache_read=1536, uncached=264, output=9), "additive"),
        # An inclusive input with a smaller total (the class Langfuse's ingestion warns of).
        ({"input": 1800, "input_cached_tokens": 1536, "output": 9, "total": 1809}, Usage(cache_read=1536, uncached=264, output=9), "inclusive"),
        # A raw OpenAI-shaped usage Langfuse kept unnormalized (its nested details dropped).
        ({"prompt_tokens": 4308, "completion_tokens": 12, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 300},
         Usage(cache_read=4000, cache_write_5m=300, uncached=8, output=12), "raw"),
        # OpenTelemetry ingestion's TTL split of Anthropic's writes.
        ({"input": 7, "output": 445, "input_cached_tokens": 16399, "input_cache_creation": 0, "input_cache_creation_5m": 2089,
          "input_cache_creation_1h": 0}, Usage(cache_read=16399, cache_write_5m=2089, uncached=7, output=445), "additive"),
        # Nothing of the cache.
        ({"input": 50, "output": 5, "total": 55}, Usage(uncached=50, output=5, cache_reported=False), "none"),
    ],
)
def test_usage_details_readings(details: dict, usage: Usage, convention: str) -> None:
    reading = read_details(details, "x")
    assert (reading.usage, reading.convention) == (usage, convention)


def page(*observations: dict) -> str:
    return json.dumps({"data": list(observations), "meta": {"page": 1, "limit": 50, "totalItems": len(observations), "totalPages": 1}})


def gen(**extra: object) -> dict:
    return {"id": "g", "traceId": "t", "type": "GENERATION", "startTime": "2025-11-01T10:00:00Z", "model": "gpt-4o",
            "usageDetails": {"input": 10, "output": 1}} | extra


@pytest.mark.parametrize(
    "text",
    [
        page(gen(usageDetails={"input": -1, "output": 1})),
        page(gen(usageDetails={"input": "ten", "output": 1})),
        page(gen(usageDetails={"input": "\u00b2", "output": 1})),  # found by fuzzing: a digit to isdigit, no int: ValueError
        page(gen(startTime="yesterday")),
        page(gen(level="ERROR")),
        page({"id": "s", "traceId": "t", "type": "SPAN", "startTime": "2025-11-01T10:00:00Z"}),
        page(gen(), {"neither": 1}),
        json.dumps({"data": [{"id": "t", "timestamp": "2025-11-01T10:00:00Z", "observations": ["o1", "o2"]}], "meta": {}}),
        json.dumps(gen(input=[{"role": "user", "content": "\ud800"}])).replace("\\ud800", "\\udc00"),
        page(gen(type=["GENERATION"])),  # found by the fuzzer: a type that is not a string crashed the detector
    ],
)
def test_bad_exports_are_one_line_errors(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        import_file(path, FORMATS["langfuse"], ImportContext())
    assert "\n" not in str(caught.value) and str(caught.value).startswith(str(path))


def test_audit_input_langfuse_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(FIXTURES / "langfuse.json"), "--input", "langfuse", "--quiet"]) == 0
    assert "3 requests" in capsys.readouterr().out
    # Another format's file under --input langfuse, and a Langfuse export under another --input: exit 2, one line.
    assert main(["audit", str(FIXTURES / "litellm.jsonl"), "--input", "langfuse", "--quiet"]) == 2
    assert main(["audit", str(FIXTURES / "langfuse.json"), "--input", "litellm", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "--input langfuse reads it" in err[1]


def test_the_ui_trace_download_and_log_view_read_as_the_api_trace(tmp_path: Path) -> None:
    # The UI's download button writes {"trace": {...}, "observations": [...]}; its log view copied
    # as JSON keys the observations by id. Both read as the API's trace with its observations.
    api = json.loads((FIXTURES / "langfuse-trace.json").read_text())
    observations = api.pop("observations")
    download = tmp_path / "trace-download.json"
    download.write_text(json.dumps({"trace": api, "observations": observations}, indent=2))
    log_view = tmp_path / "log-view.json"
    log_view.write_text(json.dumps({o["id"]: o for o in observations}, indent=2))
    expected, _ = read(FIXTURES / "langfuse-trace.json")
    for path, lane in ((download, "sess-7"), (log_view, "tr-chat-1")):  # the log view holds no sessionId
        requests, _ = read(path)
        assert [(r.lane, r.request_id, r.usage) for r in requests] == [(lane, e.request_id, e.usage) for e in expected]


def test_every_call_of_a_one_object_export_names_its_observation(tmp_path: Path) -> None:
    """Regression (a new user's pass): an export is one JSON object (or a one-line array), so
    every call was on line 1 and ``file:line`` told none apart; each now names its observation."""
    api = json.loads((FIXTURES / "langfuse-trace.json").read_text())
    observations = api.pop("observations")
    page = json.loads((FIXTURES / "langfuse.json").read_text())
    shapes = {
        "download.json": (json.dumps({"trace": api, "observations": observations}, indent=2), "observations["),
        "log-view.json": (json.dumps({o["id"]: o for o in observations}), '["'),
        "page.json": (json.dumps(page, indent=2), "data["),
        "array.json": (json.dumps(page["data"]), "["),
    }
    for name, (text, start) in shapes.items():
        (tmp_path / name).write_text(text)
        requests, _ = read(tmp_path / name)
        places = [(r.line, r.path) for r in requests]
        assert len(requests) > 1 and len(set(places)) == len(places), name
        assert all(path.startswith(start) for _, path in places), (name, places)
    assert [r.path for r in read(FIXTURES / "langfuse-openai.jsonl")[0]] == [""] * len(read(FIXTURES / "langfuse-openai.jsonl")[0])


def test_older_opentelemetry_keys_keep_the_cache_inside_input() -> None:
    # Before Langfuse normalized gen_ai.usage.* it kept the attribute's tail as the key: input then
    # includes prompt_details.cache_read and output includes completion_details.reasoning, and
    # total is input + output, below the sum of the buckets.
    details = {"input": 1200, "prompt_details.cache_read": 1024, "output": 300, "completion_details.reasoning": 256, "total": 1500}
    reading = read_details(details, "x")
    assert (reading.usage, reading.convention) == (Usage(cache_read=1024, uncached=176, output=300), "inclusive")


def test_a_cost_beyond_any_float_is_no_cost_figure(tmp_path: Path) -> None:
    # Found by the fuzzer: an integer cost too large for a float crashed the cost note.
    path = tmp_path / "huge.json"
    path.write_text(page(gen(costDetails={"total": 10**400}), gen(id="h", costDetails={"total": 0.5})))
    requests, summary = import_file(path, FORMATS["langfuse"], ImportContext())
    assert len(requests) == 2 and any("sum to $0.5000" in n for n in summary.notes)


def test_a_total_above_the_buckets_is_said_not_counted(tmp_path: Path) -> None:
    # Langfuse's Vertex AI trace of gemini-2.5-flash gives input 5, output 845 and total 2,023:
    # the rest are tokens no bucket names. The buckets are counted, the gap is said.
    reading = read_details({"input": 4, "output": 30, "total": 100}, "x")
    assert (reading.usage, reading.unnamed) == (Usage(uncached=4, output=30, cache_reported=False), 66)
    assert read_details({"input": 4, "output": 30, "total": 34}, "x").unnamed == 0
    assert read_details({"input": 400, "output": 300, "total": 707}, "x").unnamed == 0  # within Langfuse's 1%
    path = tmp_path / "vertex.json"
    path.write_text(page(gen(model="gemini-2.5-flash", usageDetails={"input": 4, "output": 30, "total": 100}),
                         gen(id="h", model="gemini-2.5-flash", usageDetails={"input": 6, "output": 2, "total": 8})))
    requests, summary = read(path)
    assert sum(r.usage.uncached + r.usage.output for r in requests) == 42
    assert any(n.startswith("1 generation(s): usageDetails.total is 66 tokens above the sum of the buckets") for n in summary.notes)


def test_a_generation_of_an_engine_the_user_runs_is_unknown_and_unpriced(tmp_path: Path) -> None:
    """A generation logged under litellm's model name for the user's own Ollama (``ollama/...``):
    the engine's cache and no vendor's bill, whatever the model. Main: DeepSeek's, at its list price."""
    path = tmp_path / "obs.json"
    path.write_text(page(gen(model="ollama/deepseek-chat", usageDetails={"input": 2000, "output": 9})))
    requests, _ = read(path)
    assert [(r.provider, r.model, r.upstream) for r in requests] == [("unknown", "deepseek-chat", "ollama")]
    assert run_audit([path]).totals.unpriced_requests == 1


def _blob_without(tmp_path: Path, *dropped: str, model: str | None = None, **set_to: str) -> Path:
    """The blob export's two Claude generations (a 3,000-token write, then its read) with usage
    keys dropped or set (and ``model`` named instead)."""
    rows = [json.loads(line) for line in (FIXTURES / "langfuse-blob.jsonl").read_text().splitlines()[:2]]
    for row in rows:
        row["provided_model_name"] = model or row["provided_model_name"]
        for key in dropped:
            row["usage_details"].pop(key, None)
        row["usage_details"].update(set_to)
    path = tmp_path / "blob.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_claude_usage_with_no_write_bucket_has_its_writes_not_reported(tmp_path: Path, capsys) -> None:
    # A Claude generation whose usage_details has reads but no cache-creation key at all: the
    # totals said "cache write 0 (0 at 1 h)" though the next call read the 3,000 tokens written.
    path = _blob_without(tmp_path, "cache_creation_input_tokens")
    requests, summary = read(path)
    assert [(r.usage.cache_reported, r.usage.writes_reported) for r in requests] == [(True, False)] * 2
    assert any("what they wrote is not reported, not 0" in note for note in summary.notes)
    assert run_audit([path]).totals.cache_write is None
    assert main(["audit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "cache write not reported" in out and "cache write 0" not in out
    # A write bucket present, even at 0, is a write count: reported as logged.
    path = _blob_without(tmp_path, cache_creation_input_tokens="0")
    requests, summary = read(path)
    assert [r.usage.writes_reported for r in requests] == [True, True]
    assert not any("what they wrote is not reported" in note for note in summary.notes)
    # An OpenAI model's usage has no write bucket to miss (its writes are billed as input).
    path = _blob_without(tmp_path, "cache_creation_input_tokens", "cache_read_input_tokens", input_cached_tokens="0",
                         model="gpt-4o")
    assert [r.usage.writes_reported for r in read(path)[0]] == [True, True]


def test_an_empty_api_page_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 19: a page of no observation (a query that matched nothing) said "unknown log format";
    # it is named in one line (exit 2), as Helicone's empty answer is, with or without --input.
    path = tmp_path / "observations.json"
    path.write_text(json.dumps({"data": [], "meta": {"page": 1, "limit": 50, "totalItems": 0, "totalPages": 0}}))
    for extra in ([], ["--input", "langfuse"]):
        assert main(["audit", str(path), "--quiet", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "observations.json:1: an answer" in err[0] and "with no observations (Langfuse's" in err[0]
    # Only Langfuse's page counts name it: {data: [], meta: {}} is no one's.
    path.write_text(json.dumps({"data": [], "meta": {}}))
    assert main(["audit", str(path), "--quiet"]) == 2
    assert "unknown log format" in capsys.readouterr().err
    # A saved series of pages whose first is empty reads the pages after it.
    path.write_text(json.dumps({"data": [], "meta": {"page": 3, "limit": 50, "totalItems": 1, "totalPages": 1}}) + "\n" + page(gen()) + "\n")
    assert len(read(path)[0]) == 1


def _fixture_totals(name: str) -> tuple[tuple[int, int, int, int, int], list[str]]:
    """The audit's calls, uncached input, reads, writes and output for the fixture ``name``, and
    the notes its reader gives."""
    t = run_audit([FIXTURES / name]).totals
    return (t.requests, t.input, t.cache_read, t.cache_write, t.output), read(FIXTURES / name)[1].notes


def test_opentelemetry_attribute_tails_are_inside_input() -> None:
    # Before langfuse/langfuse#13110 (April 2026) the OpenTelemetry path kept each gen_ai.usage.*
    # attribute's tail as a usage type beside input = the span's whole input_tokens; its newest
    # still keeps cache_write.input_tokens (the conventions' name since August 2026) so, beside
    # reads it did split out of input. Hand sums, observation by observation:
    #   tail-1  claude-sonnet-4: uncached 5200 - 4800 - 350 = 50, read 4800, written 350, out 310
    #   tail-2  gpt-4.1 (pydantic-ai names its reads twice: counted once): 3000 - 2560 = 440, read 2560, out 120
    #   tail-3  claude-sonnet-4-5: input 900 already without its reads (input_cached_tokens 5000),
    #           with its writes: 900 - 800 = 100, read 5000, written 800, out 40
    # Before: tail-1 and tail-2 read as cache not reported (5200 and 3000 uncached), tail-3's
    # writes as uncached input (900) and its writes as 0.
    totals, notes = _fixture_totals("langfuse-otel-tails.json")
    assert totals == (3, 50 + 440 + 100, 4800 + 2560 + 5000, 350 + 800, 310 + 120 + 40)
    assert any(n.startswith("3 generation(s): OpenTelemetry attribute tails") for n in notes)


def test_tails_above_the_input_that_holds_them_are_refused() -> None:
    with pytest.raises(UserError, match=r"cache_read.input_tokens \(600\), cache_creation.input_tokens \(50\) exceed the input \(640\)"):
        read_details({"input": 640, "output": 3, "cache_read.input_tokens": 600, "cache_creation.input_tokens": 50}, "x")


def test_pydantic_ai_spans_of_december_2025_to_april_2026_hold_their_cache_inside_input() -> None:
    # langfuse/langfuse#10974 (December 2025) wrote pydantic-ai's spans as input_cache_read /
    # input_cache_creation beside the span's whole input_tokens, until #13110 (April 2026) split
    # them out; the LangChain handler writes the same keys beside an input already without them.
    # The observation's metadata.scope (JSON text or an object) names pydantic-ai. Hand sums:
    #   p-1  pydantic-ai, claude-sonnet-4: 6400 - 5900 - 420 = 80 uncached, read 5900, written 420, out 210
    #   p-2  pydantic-ai, gpt-4.1-mini: 2048 - 1920 = 128, read 1920, out 64
    #   p-3  LangChain handler, claude-sonnet-4: additive, 12 uncached, read 3000, written 0, out 90
    # Before: p-1 and p-2 had their whole input read as uncached as well (6400 and 2048).
    totals, notes = _fixture_totals("langfuse-pydantic-ai.jsonl")
    assert totals == (3, 80 + 128 + 12, 5900 + 1920 + 3000, 420, 210 + 64 + 90)
    assert any(n.startswith("2 generation(s): pydantic-ai's spans") for n in notes)
    assert any(n.startswith("1 generation(s): usageDetails buckets are disjoint") for n in notes)


def test_pydantic_ai_cache_above_its_input_is_refused() -> None:
    with pytest.raises(UserError, match=r"pydantic-ai's cache reads \(900\) and writes \(0\) exceed the input \(100\)"):
        read_details({"input": 100, "output": 3, "input_cache_read": 900}, "x", scope="pydantic-ai")


def test_litellm_callback_generations_hold_their_writes_inside_input_in_newer_litellm() -> None:
    # LiteLLM's Langfuse callback sends input = prompt_tokens - cache_read_input_tokens, total =
    # prompt + completion, and Anthropic's two keys; newer LiteLLM counts the writes in
    # prompt_tokens, so they are still inside input. Hand sums (prompt = uncached + read + written):
    #   l-1  claude: prompt 5260 = 60 + 0 + 5200; input 5260 -> uncached 60, written 5200, out 400
    #   l-2  claude: prompt 5555 = 45 + 5200 + 310; input 355 -> uncached 45, read 5200, written 310, out 220
    #   l-3  gpt-4.1 (metadata as JSON text, named by key alias): input 952 = 3000 - 2048 -> uncached 952, read 2048, out 50
    # Before: l-2's input (355) was read as uncached beside its writes, counting them twice.
    totals, notes = _fixture_totals("langfuse-litellm.json")
    assert totals == (3, 60 + 45 + 952, 0 + 5200 + 2048, 5200 + 310, 400 + 220 + 50)
    assert any(n.startswith("3 generation(s): sent by LiteLLM's Langfuse callback: input is its prompt_tokens less the reads "
                            "(since BerriAI/litellm#16203), the writes inside it") for n in notes)


def test_litellm_callback_generations_of_an_older_litellm_keep_their_writes_out_of_input() -> None:
    # Older LiteLLM left the writes out of prompt_tokens: o-1's input (60) is below its writes
    # (5200), so they cannot be inside it, and the file is read so. o-2 alone could not tell:
    # uncached 3000, written 2000 (before: read as 1000 uncached, the writes taken out of input).
    totals, notes = _fixture_totals("langfuse-litellm-older.jsonl")
    assert totals == (2, 60 + 3000, 0, 5200 + 2000, 400 + 100)
    assert any(n.startswith("2 generation(s): sent by LiteLLM's Langfuse callback: input is its prompt_tokens (no call read")
               and "without the writes" in n for n in notes)


def test_litellm_shape_without_litellm_marks_is_read_as_before() -> None:
    # The same keys from another sender (no LiteLLM metadata, another name): Anthropic's usage as it came.
    value = {"name": "ChatAnthropic", "metadata": {"ls_provider": "anthropic"}}
    details = {"input": 355, "output": 220, "cache_creation_input_tokens": 310, "cache_read_input_tokens": 5200}
    assert not from_litellm(value, details)
    assert from_litellm({"name": "x", "metadata": "{\"hidden_params\": {}}"}, details)
    assert read_details(details, "x").usage == Usage(cache_read=5200, cache_write_5m=310, uncached=355, output=220)


def test_litellm_callback_generations_before_november_2025_send_the_whole_prompt_as_input() -> None:
    # From BerriAI/litellm#10955 (May 2025) to #16203 (November 2025) the callback sent input as the
    # whole prompt_tokens; before #15015 (September 2025) it sent no total and Langfuse summed the
    # buckets, so a total equal to that sum, with writes, says so. Hand sums (prompt = input):
    #   m-1  claude: 4040 = 40 + 0 + 4000 -> uncached 40, written 4000, out 300
    #   m-2  claude: 4525 = 25 + 4000 + 500 -> uncached 25, read 4000, written 500, out 150
    #   m-3  gpt-4.1-mini: 1524 = 500 + 1024 -> uncached 500, read 1024, out 20
    # Before: each input read as uncached beside its reads and writes (4040 + 4525 + 1524).
    totals, notes = _fixture_totals("langfuse-litellm-2025.jsonl")
    assert totals == (3, 40 + 25 + 500, 4000 + 1024, 4000 + 500, 300 + 150 + 20)
    assert any(n.startswith("3 generation(s): sent by LiteLLM's Langfuse callback: input is its whole prompt_tokens") for n in notes)


def lite(usage: dict, start: str = "2026-05-01T10:00:00Z", line: int = 1) -> tuple[dict, int | None, str, str]:
    return usage, parse_time_ms(start, "x"), "x", f"line {line}"


@pytest.mark.parametrize(
    ("usage", "start", "held", "why"),
    [
        # A sender total below the sum by reads + writes: the whole prompt (September to November 2025).
        ({"input": 5555, "output": 10, "total": 5565, "cache_read_input_tokens": 5200, "cache_creation_input_tokens": 310},
         "2026-05-01T10:00:00Z", (True, True), "total-whole"),
        # By the writes alone, an input above its reads (only the total tells): less the reads (since November 2025).
        ({"input": 355, "output": 10, "total": 665, "cache_read_input_tokens": 300, "cache_creation_input_tokens": 310},
         "2026-05-01T10:00:00Z", (False, True), "total-less"),
        # A total equal to the sum with writes: Langfuse summed it (before #15015): the whole prompt,
        # an input above its reads, started after #16203 (only the total tells).
        ({"input": 4525, "output": 150, "total": 9175, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 500},
         "2026-05-01T10:00:00Z", (True, True), "sum-whole"),
        # A total equal to the sum without writes does not tell; an input below its reads does.
        ({"input": 90, "output": 1, "total": 3091, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 0},
         "2026-05-01T10:00:00Z", (False, True), "below-reads"),
        # ... and neither does one at least its reads, since November 2025: assumed whole...
        ({"input": 3090, "output": 1, "total": 6091, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 0},
         "2026-05-01T10:00:00Z", (True, True), "assumed"),
        # ... and before #16203 was opened, whole by its date.
        ({"input": 3090, "output": 1, "total": 6091, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 0},
         "2025-07-14T10:00:00Z", (True, True), "date"),
        # The whole prompt, an input below its reads plus writes: an older LiteLLM, writes left out.
        ({"input": 5300, "output": 10, "total": 5310, "cache_read_input_tokens": 5200, "cache_creation_input_tokens": 310},
         "2026-05-01T10:00:00Z", (True, False), "total-whole"),
    ],
)
def test_litellm_reading_is_decided_from_each_observations_numbers(usage: dict, start: str, held: tuple, why: str) -> None:
    assert litellm_readings([lite(usage, start)]) == [(held, why)]


def test_a_total_equal_to_the_sum_without_writes_does_not_decide_the_file() -> None:
    # One with no writes and a total equal to the buckets' sum (input 1524, 1024 read: Langfuse's
    # own sum of a whole prompt, or the callback's of a prompt less the reads) beside one whose
    # total says the whole prompt: the first does not tell, so it reads as the other, in either
    # order. Before, 0 extra == 0 writes took it as less the reads, for the file when it came first.
    untold = {"input": 1524, "output": 20, "total": 2568, "cache_read_input_tokens": 1024, "cache_creation_input_tokens": 0}
    whole = {"input": 5555, "output": 10, "total": 5565, "cache_read_input_tokens": 5200, "cache_creation_input_tokens": 310}
    assert litellm_readings([lite(untold), lite(whole, line=2)]) == [((True, True), "file:line 2"), ((True, True), "total-whole")]
    assert litellm_readings([lite(whole), lite(untold, line=2)]) == [((True, True), "total-whole"), ((True, True), "file:line 1")]


def test_the_2025_fixture_reads_the_same_in_any_order(tmp_path: Path) -> None:
    # langfuse-litellm-2025.jsonl with m-3 (no writes, a total equal to the buckets' sum) first, and
    # m-3 alone: started 2025-07-14, before BerriAI/litellm#16203 was opened, its input is the whole
    # prompt (uncached 1524 - 1024 = 500). Before, m-3 first decided the file less the reads
    # (uncached 40 + 4025 + 1524 = 5589 instead of 565), and alone read uncached 1524.
    lines = (FIXTURES / "langfuse-litellm-2025.jsonl").read_text().splitlines()
    reordered = tmp_path / "reordered.jsonl"
    reordered.write_text("\n".join([lines[2], lines[0], lines[1]]) + "\n")
    alone = tmp_path / "m3.jsonl"
    alone.write_text(lines[2] + "\n")
    assert run_audit([reordered]).totals.input == 40 + 25 + 500
    assert run_audit([alone]).totals.input == 500
    _, summary = read(alone)
    assert any("its start before BerriAI/litellm#16203 was opened (2025-11-03) (1)" in n for n in summary.notes)


def mixed_rows() -> list[dict]:
    # An older LiteLLM (July 2025: Langfuse summed the total) and a newer one (input less the reads).
    old = gen(id="b-1", name="litellm-acompletion", startTime="2025-07-01T10:00:00Z", model="claude-sonnet-4-20250514",
              usageDetails={"input": 4525, "output": 150, "total": 9175, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 500})
    new = gen(id="b-2", name="litellm-acompletion", startTime="2026-05-01T10:00:00Z", model="claude-sonnet-4-20250514",
              usageDetails={"input": 355, "output": 220, "total": 5775, "cache_read_input_tokens": 5200, "cache_creation_input_tokens": 310})
    return [old, new]


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_a_file_of_mixed_litellm_releases_reads_each_as_its_own_numbers_tell(tmp_path: Path, order: tuple) -> None:
    # Hand sums: b-1 whole: 4525 - 4000 - 500 = 25 uncached; b-2 less the reads: 355 - 310 = 45.
    # Before, the first decided both: refused (old first) or b-1 read uncached 4525 - 500 = 4025.
    rows = mixed_rows()
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(rows[i]) for i in order) + "\n")
    requests, summary = read(path)
    assert {r.request_id: r.usage.uncached for r in requests} == {"b-1": 25, "b-2": 45}
    assert any(n.startswith("mixed LiteLLM releases: ") for n in summary.notes)


def test_a_file_of_mixed_litellm_releases_with_one_that_does_not_tell_is_refused(tmp_path: Path) -> None:
    untold = gen(id="b-3", name="litellm-acompletion", startTime="2026-05-01T10:02:00Z", model="gpt-4.1",
                 usageDetails={"input": 6000, "output": 50, "total": 10050, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 0})
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [*mixed_rows(), untold]) + "\n")
    with pytest.raises(UserError, match=r"mixed\.jsonl:3: observation b-3: .*mixed LiteLLM releases \(line 1 reads the whole prompt, "
                                        r"line 2 the prompt less the reads\)"):
        read(path)
    assert main(["audit", str(path), "--quiet"]) == 2


def test_nothing_told_is_said_assumed(tmp_path: Path) -> None:
    # Since November 2025, no writes, every input at least its reads, totals equal to the sums:
    # nothing tells; the whole prompt is assumed and the note says so.
    row = gen(id="a-1", name="litellm-acompletion", startTime="2026-05-01T10:00:00Z", model="gpt-4.1",
              usageDetails={"input": 6000, "output": 50, "total": 10050, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 0})
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(row) + "\n")
    requests, summary = read(path)
    assert requests[0].usage.uncached == 2000
    assert any(n.endswith("what decided it: nothing told (no total that tells, no input below its reads, "
                          "a start since 2025-11-03): assumed whole (1)") for n in summary.notes)


def test_the_assumed_note_claims_no_total_and_no_release(tmp_path: Path) -> None:
    # A total below the buckets' sum by neither the reads plus the writes nor the writes alone
    # tells nothing: the note said "no total below the buckets' sum" of it, and named the input
    # "before BerriAI/litellm#16203" though nothing showed that release (started 2026-05).
    row = gen(id="d", name="litellm-acompletion", startTime="2026-05-01T10:00:00Z", model="gpt-4.1",
              usageDetails={"input": 6000, "output": 50, "total": 9000, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 0})
    path = tmp_path / "below.jsonl"
    path.write_text(json.dumps(row) + "\n")
    requests, summary = read(path)
    assert requests[0].usage.uncached == 2000
    note = next(n for n in summary.notes if "LiteLLM's Langfuse callback" in n)
    assert "no total below" not in note and "no total that tells" in note
    assert "BerriAI/litellm#16203)" not in note.split("what decided it")[0]
    assert "whole prompt_tokens (assumed: nothing shows which LiteLLM release sent it)" in note


def test_a_verdict_told_by_a_date_is_not_spread() -> None:
    # The first observation's start (before #16203 was opened) rules its own reading, not a later
    # one's: the second, untold, is assumed whole and said so, not "told by line 1's own numbers".
    untold = {"input": 6000, "output": 50, "total": 10050, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 0}
    assert litellm_readings([lite(untold, "2025-07-01T10:00:00Z"), lite(untold, line=2)]) == [
        ((True, True), "date"), ((True, True), "assumed")]
    # Own numbers still decide the rest of a file of one release.
    whole = {"input": 5555, "output": 10, "total": 5565, "cache_read_input_tokens": 5200, "cache_creation_input_tokens": 310}
    assert litellm_readings([lite(whole), lite(untold, line=2)])[1] == ((True, True), "file:line 1")


def test_a_file_of_two_releases_decides_the_writes_per_release(tmp_path: Path) -> None:
    # An older LiteLLM (2025-07: input 4300 below its reads plus writes, so its prompt_tokens left
    # the writes out) and a newer one (2026-05: input less the reads, 355 holding its 310 writes).
    # Before, the older one decided the writes for the file: the newer read 355 uncached, its
    # writes counted twice. Hand sums: 4300 - 4000 = 300; 355 - 310 = 45.
    old = gen(id="o", name="litellm-acompletion", startTime="2025-07-01T10:00:00Z", model="claude-sonnet-4-20250514",
              usageDetails={"input": 4300, "output": 150, "total": 4450, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 500})
    new = gen(id="n", name="litellm-acompletion", startTime="2026-05-01T10:00:00Z", model="claude-sonnet-4-20250514",
              usageDetails={"input": 355, "output": 220, "total": 5775, "cache_read_input_tokens": 5200, "cache_creation_input_tokens": 310})
    path = tmp_path / "both.jsonl"
    path.write_text(json.dumps(old) + "\n" + json.dumps(new) + "\n")
    requests, summary = read(path)
    assert {r.request_id: r.usage.uncached for r in requests} == {"o": 300, "n": 45}
    assert any("less the reads" in n and "the writes inside it" in n for n in summary.notes)
    assert any("whole prompt_tokens" in n and "without the writes" in n for n in summary.notes)


def test_a_pydantic_ai_span_with_input_cached_tokens_is_of_the_newer_path() -> None:
    # Since langfuse#13110 pydantic-ai's spans carry input_cached_tokens, split out of input: one
    # that names it is disjoint even beside an input_cache_read key (not refused as above its input).
    reading = read_details({"input": 100, "output": 3, "input_cached_tokens": 500, "input_cache_read": 0}, "x", scope="pydantic-ai")
    assert (reading.usage.uncached, reading.usage.cache_read, reading.convention) == (100, 500, "additive")


def test_tails_beside_an_input_below_them_are_read_so_for_the_whole_file(tmp_path: Path) -> None:
    # An instrumentation that copied Anthropic's uncached input_tokens into gen_ai.usage.input_tokens:
    # b-1's input (12) is below its tails (9000 + 400), so they cannot be inside it, and the file is
    # read so, as the otel reader reads such spans. Hand sums:
    #   b-1  uncached 12, read 9000, written 400, out 80
    #   b-2  uncached 2500, written 2000, out 30 (inside, it would have read 500 uncached)
    rows = [
        gen(id="b-1", model="claude-sonnet-4", usageDetails={"input": 12, "output": 80, "cache_read.input_tokens": 9000,
                                                             "cache_creation.input_tokens": 400}),
        gen(id="b-2", model="claude-sonnet-4", startTime="2025-11-01T10:01:00Z",
            usageDetails={"input": 2500, "output": 30, "cache_read.input_tokens": 0, "cache_creation.input_tokens": 2000}),
    ]
    path = tmp_path / "beside.json"
    path.write_text(page(*rows))
    t = run_audit([path]).totals
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (2, 12 + 2500, 9000, 400 + 2000, 80 + 30)
    _, summary = read(path)
    assert any(n.startswith("2 generation(s): OpenTelemetry attribute tails kept as usage types, beside input") for n in summary.notes)
