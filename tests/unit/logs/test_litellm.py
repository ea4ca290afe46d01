"""LiteLLM proxy spend logs (workloads/logs/formats/litellm.py): each generation of the row's
usage, the /spend/logs JSON array, stored prompts as bodies, and what is skipped.

Rows are written here from LiteLLM's ``SpendLogsPayload`` / ``SpendLogsMetadata`` types
(``litellm/proxy/_types.py``) and its Anthropic usage transformation.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext

FIXTURE = Path(__file__).parent / "fixtures" / "litellm.jsonl"


def read(path: Path):
    fmt = detect_format(path)
    assert fmt is FORMATS["litellm"]
    return import_file(path, fmt, ImportContext())


def row(rid: str, start: str, **extra: object) -> dict:
    return {"request_id": rid, "call_type": "acompletion", "startTime": start, "endTime": start, "model": "claude-opus-4-5",
            "custom_llm_provider": "anthropic", "cache_hit": "False", "status": "success"} | extra


def test_a_spend_logs_api_array_with_older_litellm_anthropic_usage(tmp_path: Path) -> None:
    # Older LiteLLM: prompt_tokens = input + reads (writes apart); the first row (9 < 0 + 6000)
    # decides the file. Stored prompts become bodies.
    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"}]
    rows = [
        row("a", "2025-11-01T10:00:00Z", prompt_tokens=9, completion_tokens=3, session_id="s",
            metadata={"additional_usage_values": {"cache_creation_input_tokens": 6000, "cache_read_input_tokens": 0}},
            proxy_server_request=json.dumps({"model": "claude-opus-4-5", "messages": messages})),
        row("b", "2025-11-01T10:00:09Z", prompt_tokens=6012, completion_tokens=4, session_id="s",
            metadata={"additional_usage_values": {"cache_creation_input_tokens": 40, "cache_read_input_tokens": 6000}}),
        row("e", "2025-11-01T10:00:10Z", call_type="aembedding", prompt_tokens=5, completion_tokens=0),
        row("f", "2025-11-01T10:00:11Z", status="failure", prompt_tokens=0, completion_tokens=0),
    ]
    path = tmp_path / "spend_logs.json"
    path.write_text(json.dumps(rows, indent=2))
    requests, summary = read(path)
    assert [r.usage for r in requests] == [Usage(cache_write_5m=6000, uncached=9, output=3), Usage(cache_read=6000, cache_write_5m=40, uncached=12, output=4)]
    assert requests[0].body is not None and requests[0].body.system == "You are terse." and requests[1].body is None
    assert [reason for _, reason in summary.skipped] == ["aembedding call: no prompt to cache", "failed call: not served"]
    assert any("not writes (older LiteLLM)" in n for n in summary.notes)


def test_every_row_of_a_one_line_array_names_its_element(tmp_path: Path) -> None:
    # Regression (a new user's pass): /spend/logs saved as it came (one line) put every row on
    # line 1; each names its element, a pretty-printed array keeps its lines and no path.
    rows = [row(rid, f"2025-11-01T10:00:0{n}Z", prompt_tokens=9, completion_tokens=3) for n, rid in enumerate("abc")]
    path = tmp_path / "spend_logs.json"
    path.write_text(json.dumps(rows))
    assert [(r.line, r.path) for r in read(path)[0]] == [(1, "[0]"), (1, "[1]"), (1, "[2]")]
    path.write_text(json.dumps(rows, indent=2))
    assert len({r.line for r in read(path)[0]}) == 3 and {r.path for r in read(path)[0]} == {""}


def test_rows_without_cache_counts_say_so(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(row("a", "2025-01-01 10:00:00", model="gpt-4o", custom_llm_provider="openai", prompt_tokens=900,
                                   completion_tokens=3, metadata={"user_api_key": "x"})) + "\n")
    requests, summary = read(path)
    assert [(r.provider, r.usage, r.lane) for r in requests] == [("openai", Usage(uncached=900, output=3, cache_reported=False), "a")]
    assert any("not reported, not zero" in n for n in summary.notes)


def test_audit_totals_equal_the_rows_own_sums() -> None:
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    served = [r for r in rows if r["cache_hit"] != "True"]
    result = run_audit([FIXTURE])
    t = result.totals
    assert t.requests == len(served) == 3
    assert t.input + t.cache_read + t.cache_write == sum(r["prompt_tokens"] for r in served) == 4020 + 4308 + 1800
    assert t.output == sum(r["completion_tokens"] for r in served) == 71
    assert (t.cache_read, t.cache_write) == (4000 + 1536, 4000 + 300)


@pytest.mark.parametrize("rows", [
    [row("a", "2025-11-01T10:00:00Z", prompt_tokens=-1)],
    [row("a", "2025-11-01T10:00:00Z", prompt_tokens=10, metadata="{broken")],
    [row("a", "yesterday", prompt_tokens=10)],
    [row("a", "2025-11-01T10:00:00Z", cache_hit="True")],
    [{"request_id": "a", "call_type": "acompletion", "startTime": "2025-11-01T10:00:00Z"}, {"model": "x"}],
])
def test_bad_rows_are_one_line_errors(tmp_path: Path, rows: list) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(UserError) as caught:
        import_file(path, FORMATS["litellm"], ImportContext())
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def standard(pid: str, start: float, **extra: object) -> dict:
    """A StandardLoggingPayload (litellm/types/utils.py) as a logging callback writes it: ``id``
    (no ``request_id``), ``trace_id``, epoch-second times, a boolean ``cache_hit``."""
    return {"id": pid, "trace_id": "trace-9", "call_id": f"call-{pid}", "call_type": "acompletion", "stream": True,
            "response_cost": 0.01, "status": "success", "custom_llm_provider": "anthropic", "startTime": start,
            "endTime": start + 2.0, "completionStartTime": start + 0.8, "response_time": 2.0, "model": "claude-sonnet-4-5",
            "model_id": "m1", "model_group": "claude", "api_base": "https://api.anthropic.com/v1/messages", "cache_hit": False,
            "cache_key": None, "saved_cache_cost": 0.0, "request_tags": [], "end_user": None, "messages": None, "response": None,
            "error_str": None, "model_parameters": {}, "hidden_params": {"model_id": "m1", "cache_key": None, "api_base": None,
                                                                           "response_cost": None, "additional_headers": {}}} | extra


def test_standard_logging_payloads_a_callback_writes(tmp_path: Path) -> None:
    # The StandardLoggingPayload LiteLLM hands every logging callback (the S3 / GCS bucket and
    # generic loggers write it as it is): main did not recognise it (no request_id) and refused
    # the file. Its trace_id is what the proxy stores as the spend-log row's session_id.
    usage = {"prompt_tokens": 4020, "completion_tokens": 30, "cache_creation_input_tokens": 4000, "cache_read_input_tokens": 0,
             "prompt_tokens_details": {"cached_tokens": 0, "cache_creation_tokens": 4000}}
    first = standard("chatcmpl-a", 1761994800.5, prompt_tokens=4020, completion_tokens=30, metadata={"usage_object": usage})
    # An older payload without usage_object keeps the usage in the response it logged.
    second = standard("chatcmpl-b", 1761994806.0, prompt_tokens=4310, completion_tokens=12, metadata={"user_api_key_alias": "ci"},
                      response={"id": "chatcmpl-b", "object": "chat.completion", "model": "claude-sonnet-4-5", "choices": [],
                                "usage": {"prompt_tokens": 4310, "completion_tokens": 12, "cache_creation_input_tokens": 300,
                                          "cache_read_input_tokens": 4000,
                                          "prompt_tokens_details": {"cached_tokens": 4000, "cache_creation_tokens": 300}}})
    cached = standard("chatcmpl-c", 1761994808.0, cache_hit=True, prompt_tokens=4310, metadata={})
    failed = standard("chatcmpl-d", 1761994809.0, status="failure", error_str="overloaded", metadata={})
    path = tmp_path / "standard_logging.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in (first, second, cached, failed)))
    requests, summary = read(path)
    assert [(r.request_id, r.lane, r.provider, r.usage, r.sent_ms, r.ready_ms) for r in requests] == [
        ("chatcmpl-a", "trace-9", "anthropic", Usage(cache_write_5m=4000, uncached=20, output=30), 1761994800500, 1761994801300),
        ("chatcmpl-b", "trace-9", "anthropic", Usage(cache_read=4000, cache_write_5m=300, uncached=10, output=12), 1761994806000, 1761994806800)]
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert [why for _, why in summary.skipped] == ["served from LiteLLM's response cache: never sent to a provider", "failed call: not served"]


def test_a_kimi_usage_object_with_cached_tokens_at_the_top(tmp_path: Path) -> None:
    # Kimi's chat usage keeps cached_tokens at the top; main read it as cache not reported.
    usage = {"prompt_tokens": 2500, "completion_tokens": 25, "total_tokens": 2525, "cached_tokens": 2048}
    path = tmp_path / "spend.jsonl"
    path.write_text(json.dumps(row("k", "2025-11-01T10:00:00Z", model="kimi-k2-thinking", custom_llm_provider="moonshot",
                                   prompt_tokens=2500, completion_tokens=25, metadata={"usage_object": usage})) + "\n")
    requests, summary = read(path)
    assert [(r.provider, r.usage) for r in requests] == [("moonshot", Usage(cache_read=2048, uncached=452, output=25))]
    assert not any("not reported" in n for n in summary.notes)


def test_each_upstream_openrouter_names_is_a_cache_of_its_own(tmp_path: Path) -> None:
    """A row's stored response keeps OpenRouter's ``provider`` (the upstream that served the call):
    a call DeepInfra served after one DeepSeek served reads nothing of DeepSeek's cache (before:
    predicted to read the first call's prompt, one cache for every upstream)."""
    first = [{"role": "system", "content": "You are a careful coding agent. " * 400}, {"role": "user", "content": "fix the bug"}]
    second = [*first, {"role": "assistant", "content": "done"}, {"role": "user", "content": "now test it"}]

    def served(rid: str, start: str, messages: list, prompt: int, upstream: str) -> dict:
        usage = {"prompt_tokens": prompt, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 0}}
        return row(rid, start, model="deepseek/deepseek-chat-v3.1", custom_llm_provider="openrouter", session_id="s",
                   prompt_tokens=prompt, completion_tokens=5, metadata={"usage_object": usage},
                   proxy_server_request=json.dumps({"model": "openrouter/deepseek/deepseek-chat-v3.1", "messages": messages}),
                   response=json.dumps({"id": rid, "provider": upstream, "usage": usage}))

    path = tmp_path / "spend.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (
        served("a", "2025-11-01T10:00:00Z", first, 3210, "DeepSeek"), served("b", "2025-11-01T10:01:00Z", second, 3230, "DeepInfra"))))
    requests, _ = read(path)
    assert [(r.provider, r.upstream) for r in requests] == [("deepseek", "DeepSeek"), ("deepseek", "DeepInfra")]
    last = run_audit([path]).rows[1]
    assert (last.predicted_cache_read, last.reported_cache_read, last.cause) == (0, 0, "provider-best-effort")


def _vertex_rows(api_base: str | None) -> list[dict]:
    usage = {"additional_usage_values": {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
    extra = {} if api_base is None else {"api_base": api_base}
    return [row(rid, f"2025-11-01T10:00:0{n}Z", model="claude-sonnet-4-5@20250929", custom_llm_provider="vertex_ai",
                prompt_tokens=900, completion_tokens=3, metadata=usage, **extra) for n, rid in enumerate("ab")]


@pytest.mark.parametrize(("api_base", "said"), [
    (None, "2 call(s) of claude-sonnet-4-5@20250929 through Vertex AI"),
    ("https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict",
     "the global endpoint"),
    ("https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict",
     "2 on a regional endpoint (us-east5)"),
])
def test_claude_through_vertex_ai_says_its_price_is_the_global_endpoints(tmp_path: Path, api_base: str | None, said: str) -> None:
    # LiteLLM's vertex_ai/claude-* calls were priced at Anthropic's list price with no word that
    # Vertex AI bills its regional endpoints 10% more for Claude Sonnet 4.5 and later models.
    path = tmp_path / "vertex.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _vertex_rows(api_base)))
    requests, summary = read(path)
    assert {r.provider for r in requests} == {"anthropic"}
    (note,) = [n for n in summary.notes if "Vertex AI" in n]
    assert said in note and "10%" in note, note
    result = run_audit([path])
    assert all(r.cost_usd is not None for r in result.rows) and any("Vertex AI" in n for n in result.files[0].notes)
    # Anthropic's own API: no such note.
    path.write_text("".join(json.dumps(r | {"custom_llm_provider": "anthropic"}) + "\n" for r in _vertex_rows(None)))
    assert not any("Vertex AI" in n for n in read(path)[1].notes)


PAGE = Path(__file__).parent / "fixtures" / "litellm-spend-logs-ui.json"


def test_a_page_of_the_paginated_spend_logs_endpoints_is_its_rows() -> None:
    """``/spend/logs/ui`` and ``/spend/logs/v2`` (the Admin UI's Logs page; BerriAI/litellm
    spend_management_endpoints.py ``ui_view_spend_logs``) answer ``{data: [rows], total, page,
    page_size, total_pages}``, newest first. Such a page used to be no known format; its rows are
    read as a /spend/logs array's."""
    assert detect_format(PAGE) is FORMATS["litellm"]
    requests, summary = read(PAGE)
    # Newer LiteLLM's Anthropic usage: prompt_tokens = input + reads + writes.
    assert [r.request_id for r in requests] == ["req-1", "req-2"]  # in start order
    assert [r.usage for r in requests] == [Usage(cache_write_5m=21050, uncached=4, output=512),
                                           Usage(cache_read=21050, cache_write_5m=730, uncached=6, output=240)]
    totals = run_audit([PAGE]).totals
    assert (totals.requests, totals.input, totals.cache_read, totals.cache_write, totals.output) == (2, 4 + 6, 21050, 21050 + 730, 512 + 240)
    assert [r.path for r in requests] == ["data[2]", "data[1]"] and {r.lane for r in requests} == {"cc-1"}
    assert summary.skipped == ((1, "data[0]: failed call: not served"),)
    assert requests[1].prefix.parent == requests[0].prefix.node


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("names", [("page-1.json", "page-2.json"), ("page-2.json", "page-1.json")])
def test_overlapping_pages_count_each_row_once(tmp_path: Path, names: tuple[str, str], jobs: int) -> None:
    """Pages fetched one after another overlap where rows were added between the fetches (newest
    first: the last row of one page is the first of the next). Each request id is counted once,
    whichever page is read first (before: req-1 twice, 4 calls of 3); in workers the same."""
    import functools

    from prefixbench.workloads.audit.core import load_trace
    from prefixbench.workloads.runs.execute import map_runs

    first = json.loads(PAGE.read_text())
    second = dict(first, page=2, data=[first["data"][-1], row("req-0", "2026-10-05T08:00:00Z", spend=0.01,
                                                                  prompt_tokens=100, completion_tokens=10, total_tokens=110)])
    (tmp_path / names[0]).write_text(json.dumps(first))
    (tmp_path / names[1]).write_text(json.dumps(second))
    requests, summaries = load_trace([tmp_path], map_files=functools.partial(map_runs, jobs=jobs))
    assert sorted(r.request_id for r in requests) == ["req-0", "req-1", "req-2"]
    # page-2.json is read second: the second page's req-1 is its data[0], the first page's its data[2].
    at = "data[0]" if names[1] == "page-2.json" else "data[2]"
    assert [why for _, why in summaries[1].skipped if "already counted" in why] == [
        f"{at}: request req-1 already counted (pages of the paginated endpoints overlap where rows were added between "
        "fetches; an export saved twice)"]
    assert run_audit([tmp_path]).totals.requests == 3


def test_a_page_whose_every_row_another_page_counted_is_no_error(tmp_path: Path) -> None:
    # A page fetched again with the same rows (its total grown by rows it no longer shows, so not
    # the same bytes): its rows are the other's, nothing is its own. Before the rows were counted
    # once, this file is no error either.
    page = json.loads(PAGE.read_text())
    (tmp_path / "page-1.json").write_text(json.dumps(page))
    (tmp_path / "page-1-again.json").write_text(json.dumps(dict(page, total=page["total"] + 1)))
    result = run_audit([tmp_path])
    assert result.totals.requests == 2
    _, summaries = load_trace_of(tmp_path)
    assert Path(summaries[1].file).name == "page-1.json" and summaries[1].requests == 0 and summaries[1].notes == (
        "every served row (2) already counted from an earlier file of the audit: nothing of this file's own",)


def load_trace_of(path: Path):
    from prefixbench.workloads.audit.core import load_trace

    return load_trace([path])


def test_a_page_holding_something_else_than_rows_is_refused_in_one_line(tmp_path: Path) -> None:
    # (detected from its first rows; a later element that is no row is refused where it is)
    page = json.loads(PAGE.read_text())
    page["data"] = page["data"] * 2 + [{"startTime": "2026-10-05T09:01:00Z", "spend": 0.1}]
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    with pytest.raises(UserError, match=r"data\[6\] of a spend-logs page is not a spend-log row") as error:
        read(path)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(("engine", "model"), [
    ("hosted_vllm", "deepseek-chat"), ("ollama_chat", "deepseek-chat"), ("lm_studio", "gpt-4o"), ("xinference", "deepseek-chat"),
])
def test_a_row_routed_to_an_engine_the_user_runs_is_unknown_and_unpriced(tmp_path: Path, engine: str, model: str) -> None:
    """A proxy routing a model to the user's own engine (``custom_llm_provider``: vLLM, Ollama, LM
    Studio, Xinference): the engine's cache, not the model maker's, and no vendor's bill. Main read
    each as DeepSeek's or OpenAI's and priced it at its list price."""
    usage = {"prompt_tokens": 2000, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 0}}
    path = tmp_path / "spend.jsonl"
    path.write_text(json.dumps(row("a", "2025-11-01T10:00:00Z", model=model, custom_llm_provider=engine, prompt_tokens=2000,
                                   completion_tokens=9, metadata={"usage_object": usage})) + "\n")
    requests, _ = read(path)
    assert [(r.provider, r.model, r.upstream) for r in requests] == [("unknown", model, engine)]
    result = run_audit([path])
    assert result.totals.unpriced_requests == 1
    assert any(f"served by {engine}, a host running open models itself" in note for note in result.notes), result.notes


def test_a_call_routed_to_a_third_party_host_is_unpriced_not_the_makers_list_price(tmp_path: Path) -> None:
    # LiteLLM's fireworks_ai route: Fireworks serves DeepSeek's model at its own prices. The row's
    # model keeps its last part (deepseek-v4-flash, which Fireworks' own table does not list),
    # which main priced at DeepSeek's list price.
    usage = {"prompt_tokens": 3000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 0}}
    # (DeepSeek's own API names the model deepseek-v4-flash: an accounts/fireworks/ id is Fireworks' alone.)
    rows = [row(rid, f"2026-08-01T10:0{n}:00Z", model=model, custom_llm_provider=provider,
                prompt_tokens=3000, completion_tokens=5, metadata={"usage_object": usage})
            for n, (rid, provider, model) in enumerate((("a", "fireworks_ai", "accounts/fireworks/models/deepseek-v4-flash"),
                                                        ("b", "deepseek", "deepseek-v4-flash")))]
    path = tmp_path / "spend.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    requests, _ = read(path)
    assert [r.upstream for r in requests] == ["fireworks_ai", ""]
    result = run_audit([path])
    assert result.rows[0].cost_usd is None and result.rows[1].cost_usd is not None and result.totals.unpriced_requests == 1
    assert any("served by fireworks_ai (the log names it): Fireworks sets its own" in n for n in result.notes), result.notes


def test_a_claude_usage_with_no_write_field_has_its_writes_not_reported(tmp_path: Path) -> None:
    # A Claude row whose usage has reads but no write field at all (no cache_creation_input_tokens,
    # no prompt_tokens_details.cache_creation_tokens) was read as writing 0, though the next call
    # read what the first wrote; a field present at 0 is a 0, and an OpenAI usage has no write field to miss.
    rows = [
        row("a", "2025-11-01T10:00:00Z", session_id="s", metadata={"usage_object": {
            "prompt_tokens": 6009, "completion_tokens": 3, "cache_read_input_tokens": 0}}),
        row("b", "2025-11-01T10:00:09Z", session_id="s", metadata={"usage_object": {
            "prompt_tokens": 6012, "completion_tokens": 4, "cache_read_input_tokens": 6000}}),
        row("c", "2025-11-01T10:00:19Z", session_id="s", metadata={"usage_object": {
            "prompt_tokens": 6012, "completion_tokens": 4, "cache_read_input_tokens": 6000, "cache_creation_input_tokens": 0}}),
        row("d", "2025-11-01T10:00:29Z", session_id="t", model="gpt-4o", custom_llm_provider="openai", metadata={"usage_object": {
            "prompt_tokens": 6012, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 6000}}}),
    ]
    path = tmp_path / "spend_logs.json"
    path.write_text(json.dumps(rows))
    requests, summary = read(path)
    assert [r.usage.writes_reported for r in requests] == [False, False, True, True]
    assert any(n.startswith("2 call(s) of a provider that bills cache writes apart whose usage has no write field") for n in summary.notes)
    assert [r.reported_cache_write for r in run_audit([path]).rows] == [None, None, 0, None]  # (OpenAI's: no write count)


def test_sessionless_rows_are_each_a_lane_of_their_own(tmp_path: Path) -> None:
    # Issue 19: rows naming no session shared one lane ("calls"), so the body of one unrelated
    # call was diffed against the next and a model change between them named model-changed.
    # Each is a lane of its own now (as OpenRouter's and Helicone's sessionless calls are); rows
    # of one session keep theirs, and a switch inside it is still named.
    system = "You answer questions about the build. " * 400

    def called(rid: str, start: str, model: str, **extra: object) -> dict:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": f"question {rid}"}]
        usage = {"additional_usage_values": {"cache_creation_input_tokens": 3200, "cache_read_input_tokens": 0}}
        return row(rid, start, model=model, prompt_tokens=3300, completion_tokens=3, metadata=usage,
                   proxy_server_request=json.dumps({"model": model, "messages": messages}), **extra)

    sonnet, opus = "claude-sonnet-4-5-20250929", "claude-opus-4-5"
    path = tmp_path / "spend.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (
        called("a", "2025-11-01T10:00:00Z", sonnet), called("b", "2025-11-01T10:00:05Z", opus),
        called("c", "2025-11-01T10:00:10Z", sonnet, session_id="s1"), called("d", "2025-11-01T10:00:15Z", opus, session_id="s1"))))
    requests, _ = read(path)
    assert [r.lane for r in requests] == ["a", "b", "s1", "s1"]
    rows = run_audit([path]).rows
    assert [(r.lane, r.index, r.cause) for r in rows] == [
        ("a", 0, "cold-start"), ("b", 0, "cold-start"), ("s1", 0, "cold-start"), ("s1", 1, "model-changed")]


def sessionless_export(path: Path, rows: int = 12, gap_s: int = 40) -> Path:
    """A spend-log export of ``rows`` calls naming no session and logging no body, ``gap_s`` apart,
    every third of which read none of the 6,016 tokens the others read (a shrunk copy of a
    400-row export that showed the wording below)."""
    lines = []
    for n in range(rows):
        at = f"2025-11-01T{10 + n * gap_s // 3600:02d}:{n * gap_s // 60 % 60:02d}:{n * gap_s % 60:02d}Z"
        usage = {"prompt_tokens_details": {"cached_tokens": 0 if n % 3 == 0 else 6016}}
        lines.append(row(f"r{n}", at, model="gpt-4.1", custom_llm_provider="openai", prompt_tokens=6100,
                         completion_tokens=4, metadata={"additional_usage_values": usage}))
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_a_sessionless_call_that_misses_says_it_has_no_previous_call_not_zero_idle(tmp_path: Path) -> None:
    # Each sessionless call is a lane of its own: a miss at its start has no gap of its own, and
    # with no body nothing shows its prompt began as the other calls' did, so the provider's
    # best effort is not named (it was, "with nothing changed in the log and 0s idle").
    rows = run_audit([sessionless_export(tmp_path / "spend.jsonl")]).rows
    missed = [r for r in rows if r.cause is not None and r.cause != "cold-start"]
    assert [r.lane for r in missed] == ["r3", "r6", "r9"]
    assert {(r.cause, r.evidence) for r in missed} == {("unexplained", "none")}
    assert missed[0].detail == (
        "read 0 of the 6,016 tokens other lanes' calls read, with no previous call in its lane (its first call, so no "
        "idle time of its own); another lane's call under the same head was sent 40s before: no body is logged, so "
        "whether its prompt starts as theirs did is not in the log"
    )
    assert not any("0s idle" in r.detail for r in rows)


def test_the_lanes_tables_fold_sessionless_calls_into_one_row_the_json_keeps_them(tmp_path: Path) -> None:
    # 400 sessionless rows printed 400 lane lines (72 -> 471 lines of text); now one row a file in
    # the text, Markdown and HTML tables, while each stays a lane of its own in the replay and JSON.
    from prefixbench.reports.audit import audit_json, audit_markdown, audit_table
    from prefixbench.reports.html_pages import audit_page
    from prefixbench.reports.audit import audit_record, _group_record
    from prefixbench.workloads.audit.schema import LANE_FIELDS
    from prefixbench.workloads.audit.core import fold_sessionless

    path = sessionless_export(tmp_path / "spend.jsonl")
    with path.open("a") as handle:  # one call of a named session keeps its own row
        handle.write(json.dumps(row("s1", "2025-11-01T11:00:00Z", model="gpt-4.1", custom_llm_provider="openai",
                                    prompt_tokens=6100, completion_tokens=4, session_id="sess")) + "\n")
    result = run_audit([path])
    assert len(result.sessionless_lanes) == 12 and len(json.loads(audit_json(result))["lanes"]) == 13
    text = audit_table(result)
    lanes = text[text.index("lanes: reported vs predicted"):].splitlines()
    assert any("sessionless calls (12)" in line and " 12 " in line for line in lanes)
    assert not any(line.split()[1:2] == ["r3"] for line in lanes if line.startswith("spend.jsonl"))
    assert any(line.split()[1:2] == ["sess"] for line in lanes if line.startswith("spend.jsonl"))
    assert "sessionless calls (12)" in audit_markdown(result)
    folded = [_group_record(LANE_FIELDS, lane, lane.reported_cache_read is None)
              for lane in fold_sessionless(result.lanes, result.sessionless_lanes)]
    (merged,) = [lane for lane in folded if lane["lane"].startswith("sessionless")]
    assert merged["requests"] == 12 and merged["reported_cache_read"] == 8 * 6016
    page = audit_page(audit_record(result), None, lanes=folded)
    assert "sessionless calls (12)" in page


def test_the_sessionless_lanes_are_read_once_before_the_ids_are_dropped(tmp_path: Path) -> None:
    # One source: the audit reads the lanes from the ids, then drops them (drop_ids, as the CLI
    # asks), rather than the CLI reading them apart and overwriting the result's.
    from prefixbench.workloads.audit.core import load_trace

    requests, summaries = load_trace([sessionless_export(tmp_path / "spend.jsonl")], "auto")
    result = run_audit([], trace=(requests, summaries), drop_ids=True)
    assert len(result.sessionless_lanes) == 12 and all(r.request_id is None for r in requests)


def test_audit_out_folds_sessionless_calls_in_audit_md_and_report_html(tmp_path: Path, capsys) -> None:
    # The fold through the CLI, as a user gets it: `audit FILE --out DIR` (stdin: tests/unit/reports/test_stdio.py).
    from prefixbench.reports.cli import main

    path = sessionless_export(tmp_path / "spend.jsonl")
    with path.open("a") as handle:
        handle.write(json.dumps(row("s1", "2025-11-01T11:00:00Z", model="gpt-4.1", custom_llm_provider="openai",
                                    prompt_tokens=6100, completion_tokens=4, session_id="sess")) + "\n")
    out = tmp_path / "out"
    assert main(["audit", str(path), "--out", str(out), "--quiet"]) == 0
    md = (out / "audit.md").read_text()
    html = (out / "report.html").read_text()
    for text in (md, html):
        assert "sessionless calls (12)" in text
    import re

    assert not re.search(r"^spend\.jsonl\s+r\d+\s", md, re.M)  # no lane row per sessionless call
    assert re.search(r"^spend\.jsonl\s+sess\s", md, re.M)
    assert len(json.loads((out / "audit.json").read_text())["lanes"]) == 13


def test_a_gemini_row_through_openrouter_reads_the_content_made_for_the_call_as_one_explicit_read(tmp_path: Path) -> None:
    # OpenRouter names a cache_control content made for a Gemini call twice (cache_write_tokens
    # inside cached_tokens, the two above the prompt): the reader passes the row's model on, so it
    # is one explicit read; read as OpenAI's it was refused (reads and writes above the prompt).
    usage = {"prompt_tokens": 5000, "completion_tokens": 20,
             "prompt_tokens_details": {"cached_tokens": 4096, "cache_write_tokens": 4096}}
    path = tmp_path / "spend.jsonl"
    path.write_text(json.dumps(row("g", "2025-11-01T10:00:00Z", model="openrouter/google/gemini-2.5-flash",
                                   custom_llm_provider="openrouter", prompt_tokens=5000, completion_tokens=20,
                                   metadata={"usage_object": usage})) + "\n")
    requests, _ = read(path)
    assert [r.usage for r in requests] == [Usage(cache_read=4096, cache_read_explicit=4096, uncached=904, output=20)]
