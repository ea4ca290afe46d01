"""Gemini's own API in HTTP captures (workloads/logs/formats/gemini_wire.py): model calls read
from the wire, explicit caches created, read and billed."""

from __future__ import annotations

import functools
import json
from decimal import Decimal
from pathlib import Path

import pytest
from msgspec.structs import replace
from prefixbench.reports.cli import run
from prefixbench.simulator.pricing import load_prices
from prefixbench.simulator.providers.gemini import native_route
from prefixbench.workloads.audit.core import audit_requests, load_trace, run_audit
from prefixbench.simulator.price_lookup import Prices
from prefixbench.workloads.logs.formats import detect_format
from prefixbench.workloads.logs.formats.gemini_wire import chat_shape, duration_ms
from tests.unit.audit.fixtures import capture_line, write_jsonl

API = "https://generativelanguage.googleapis.com/v1beta"
VERTEX = "https://us-central1-aiplatform.googleapis.com/v1/projects/p1/locations/us-central1"
#: 2026-01-01T00:00:00Z: the shipped gemini-2.5-flash row (input 0.30, read 0.03, output 2.50 per
#: 1M tokens, no explicit_read of its own, storage 1.00 per 1M tokens per hour) is in force.
T0 = 1767225600.0


def usage(prompt: int, cached: int = 0, out: int = 0, thoughts: int = 0, tool: int = 0) -> dict:
    """A ``usageMetadata`` as the API sends it (``totalTokenCount`` is the sum of the rest)."""
    meta = {"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out + thoughts + tool}
    if cached:
        meta["cachedContentTokenCount"] = cached
    if thoughts:
        meta["thoughtsTokenCount"] = thoughts
    if tool:
        meta["toolUsePromptTokenCount"] = tool
    return meta


def answer(text: str, meta: dict | None) -> dict:
    chunk: dict = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}]}
    if meta is not None:
        chunk["usageMetadata"] = meta
    return chunk


def gen_body(*turns: str, cached: str | None = None) -> dict:
    contents = [{"role": "user" if n % 2 == 0 else "model", "parts": [{"text": t}]} for n, t in enumerate(turns)]
    body: dict = {"contents": contents, "generationConfig": {"temperature": 0.2}}
    if cached is not None:
        body["cachedContent"] = cached
    else:
        body["systemInstruction"] = {"parts": [{"text": "You are a coding agent."}]}
    return body


def call(url: str, body: dict | None, response: dict, sent: float, method: str = "POST") -> dict:
    line = capture_line(body or {}, response, url=url, sent=sent)
    line["request"]["method"] = method
    if body is None:
        del line["request"]["body"]
    return line


def test_native_calls_read_from_the_wire_json_sse_and_array(tmp_path: Path) -> None:
    # One call a shape: a JSON body (the Gemini API), ?alt=sse events whose last one carries the
    # whole usage (earlier chunks carry only the prompt), a JSON array of chunks (Vertex AI), and
    # a proxy's host with a model name no table knows: the path alone says it is Gemini's wire.
    sse = "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in (answer("a", {"promptTokenCount": 5200}), answer("b", usage(5200, 4096, 30, thoughts=70))))
    lines = [
        call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("hi"), {"body": answer("ok", usage(5000, 0, 100, tool=12))}, T0),
        call(f"{API}/models/gemini-2.5-flash:streamGenerateContent?alt=sse", gen_body("hi", "ok", "more"), {"body_raw": sse}, T0 + 60),
        call(f"{VERTEX}/publishers/google/models/gemini-2.5-pro:streamGenerateContent", gen_body("x"),
             {"body": [answer("a", None), answer("b", usage(9000, 8192, 5))]}, T0 + 120),
        call("http://localhost:8080/v1beta/models/house-model-7:generateContent", gen_body("y"), {"body_raw": json.dumps(answer("c", usage(100, 0, 1)))}, T0 + 180),
    ]
    path = write_jsonl(tmp_path / "gemini.jsonl", lines)
    assert detect_format(path).name == "http-capture"
    requests, summaries = load_trace([path])
    got = [(r.provider, r.model, r.usage.cache_read, r.usage.uncached, r.usage.output) for r in requests]
    assert got == [
        ("gemini", "gemini-2.5-flash", 0, 5000 + 12, 100),  # tool-use prompt tokens are input beside the prompt
        ("gemini", "gemini-2.5-flash", 4096, 1104, 100),  # thoughts are output
        ("gemini", "gemini-2.5-pro", 8192, 808, 5),
        ("gemini", "house-model-7", 0, 100, 1),
    ]
    assert summaries[0].skipped == () and summaries[0].explicit_caches == ()
    # The bodies are rebuilt for the body diff: system, the turns, the family's temperature.
    body = requests[1].body
    assert body is not None and body.system == "You are a coding agent." and len(body.messages) == 3
    assert body.envelope.provider == "gemini" and body.envelope.temperature == 0.2


def test_a_usage_without_a_token_count_is_no_call(tmp_path: Path) -> None:
    # Vertex AI's answer to a prompt its Model Armor template blocked: usageMetadata holds the
    # traffic type alone (pydantic-ai's recording, 2026-05). Before, a call of 0 tokens.
    blocked = {"promptFeedback": {"blockReason": "MODEL_ARMOR"}, "usageMetadata": {"trafficType": "ON_DEMAND"}}
    lines = [
        call(f"{VERTEX}/publishers/google/models/gemini-2.5-flash:generateContent", gen_body("hi"), {"body": answer("ok", usage(5000, 0, 9))}, T0),
        call(f"{VERTEX}/publishers/google/models/gemini-2.5-flash:generateContent", gen_body("tell me"), {"body": blocked}, T0 + 60),
    ]
    requests, summaries = load_trace([write_jsonl(tmp_path / "gemini.jsonl", lines)])
    assert [(r.usage.uncached, r.usage.output) for r in requests] == [(5000, 9)]
    # Named, not the generic "no usage in the response" of a response with no usageMetadata.
    assert list(summaries[0].skipped) == [(2, "usageMetadata with no token count (blocked prompt?): no model call")]


def test_the_sdks_snake_case_usage_metadata_is_read_and_one_without_a_count_is_no_call(tmp_path: Path) -> None:
    # The Python SDK's dump: usage_metadata with snake_case counts is a call like camelCase's;
    # with traffic_type alone (a blocked prompt) it is skipped and named.
    read = {"candidates": [], "usage_metadata": {"prompt_token_count": 5000, "cached_content_token_count": 4096,
                                                  "candidates_token_count": 9, "traffic_type": "ON_DEMAND"}}
    blocked = {"prompt_feedback": {"block_reason": "MODEL_ARMOR"}, "usage_metadata": {"traffic_type": "ON_DEMAND"}}
    lines = [
        call(f"{VERTEX}/publishers/google/models/gemini-2.5-flash:generateContent", gen_body("hi"), {"body": read}, T0),
        call(f"{VERTEX}/publishers/google/models/gemini-2.5-flash:generateContent", gen_body("tell me"), {"body": blocked}, T0 + 60),
    ]
    requests, summaries = load_trace([write_jsonl(tmp_path / "gemini.jsonl", lines)])
    assert [(r.usage.cache_read, r.usage.uncached, r.usage.output) for r in requests] == [(4096, 904, 9)]
    assert list(summaries[0].skipped) == [(2, "usageMetadata with no token count (blocked prompt?): no model call")]


def test_cached_tokens_with_no_prompt_count_skip_that_call_and_keep_the_file(tmp_path: Path) -> None:
    # cachedContentTokenCount with no promptTokenCount: before, "exceeds promptTokenCount (0)"
    # refused the whole file; now that one call is skipped and named, the first is audited.
    odd = {"candidates": [], "usageMetadata": {"cachedContentTokenCount": 4096, "candidatesTokenCount": 3}}
    lines = [
        call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("hi"), {"body": answer("ok", usage(5000, 0, 9))}, T0),
        call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("tell me"), {"body": odd}, T0 + 60),
    ]
    requests, summaries = load_trace([write_jsonl(tmp_path / "gemini.jsonl", lines)])
    assert [(r.usage.uncached, r.usage.output) for r in requests] == [(5000, 9)]
    assert list(summaries[0].skipped) == [(2, "usageMetadata names cached tokens but no prompt token count: the prompt's size is unknown")]


def test_openai_compatible_endpoint_is_gemini_with_its_usage(tmp_path: Path) -> None:
    # generativelanguage.googleapis.com/v1beta/openai/ speaks chat completions: the endpoint says
    # Gemini, its usage is OpenAI's shape (cached tokens inside prompt_tokens).
    body = {"model": "gemini-2.5-flash", "messages": [{"role": "user", "content": "hi"}]}
    reply = {"body": {"usage": {"prompt_tokens": 5000, "completion_tokens": 20, "total_tokens": 5020, "prompt_tokens_details": {"cached_tokens": 4000}}}}
    path = write_jsonl(tmp_path / "compat.jsonl", [capture_line(body, reply, url=f"{API}/openai/chat/completions", sent=T0)])
    (r,), _ = load_trace([path])
    assert (r.provider, r.usage.cache_read, r.usage.uncached, r.usage.output) == ("gemini", 4000, 1000, 20)
    assert native_route(f"{API}/openai/chat/completions", "POST") is None
    # Hand-computed at the gemini-2.5-flash row: 1,000 x 0.30 + 4,000 x 0.03 + 20 x 2.50 per 1M.
    assert run_audit([path]).totals.cost_usd == Decimal("0.00047")


def cache_created(name: str, tokens: int, sent: float, ttl: str | None = "7200s", expire: str | None = None, vertex: bool = False) -> dict:
    body: dict = {"model": "models/gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"text": "a long document"}]}]}
    if ttl is not None:
        body["ttl"] = ttl
    answer_body: dict = {"name": name, "model": "models/gemini-2.5-flash", "usageMetadata": {"totalTokenCount": tokens}}
    if expire is not None:
        answer_body["expireTime"] = expire
    url = f"{VERTEX}/cachedContents" if vertex else f"{API}/cachedContents"
    return call(url, body, {"body": answer_body}, sent)


def test_explicit_cache_created_read_and_deleted_is_billed(tmp_path: Path) -> None:
    # The story: at 00:00 an agent creates a cached content of 100,000 tokens (ttl 2 h), reads it
    # twice (100,010-token prompts, 100,000 of them from the cache), and deletes it at 01:30.
    # It is billed 100,000 x 0.30 / 1M = $0.03 to create and 100,000 tokens x 1.5 h x 1.00 / 1M
    # = $0.15 of storage; each read costs 10 x 0.30 + 100,000 x 0.03 + 50 x 2.50 per 1M =
    # $0.003128. A fourth request reads a cache the log never created: its read is priced, and
    # the audit says its creation and storage are unknown.
    lines = [
        cache_created("cachedContents/abc123", 100_000, T0),
        call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("q1", cached="cachedContents/abc123"), {"body": answer("a", usage(100_010, 100_000, 50))}, T0 + 600),
        call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("q2", cached="cachedContents/abc123"), {"body": answer("b", usage(100_010, 100_000, 50))}, T0 + 1200),
        call(f"{API}/cachedContents/abc123", None, {"body": {}}, T0 + 5400, method="DELETE"),
        call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("q3", cached="cachedContents/elsewhere"), {"body": answer("c", usage(40_010, 40_000, 50))}, T0 + 6000),
    ]
    path = write_jsonl(tmp_path / "explicit.jsonl", lines)
    result = run_audit([path])
    (cache,) = result.explicit_caches
    assert (cache.name, cache.tokens, cache.kept_hours, cache.ended_by, cache.reads, cache.read_tokens) == (
        "cachedContents/abc123", 100_000, 1.5, "delete", 2, 200_000)
    assert (cache.create_usd, cache.storage_usd) == (Decimal("0.03"), Decimal("0.15"))
    # One lane per named cache: a read of one is judged against that cache, not the lane before.
    assert [row.lane for row in result.rows] == ["main:cachedContents/abc123"] * 2 + ["main:cachedContents/elsewhere"]
    # The creation is no request: three requests, the hit ratio over their prompts only.
    assert result.totals.requests == 3
    assert result.totals.hit_ratio == pytest.approx(240_000 / 240_030)
    assert (result.totals.cache_create_usd, result.totals.storage_usd) == (Decimal("0.03"), Decimal("0.15"))
    reads = [row.cost_usd for row in result.rows]
    assert reads == [Decimal("0.003128"), Decimal("0.003128"), Decimal("0.000003") + Decimal("0.0012") + Decimal("0.000125")]
    assert result.totals.cost_usd == Decimal("0.18") + sum(reads, Decimal(0))
    assert sum((s.cost_usd for s in result.sessions), Decimal(0)) == result.totals.cost_usd
    assert result.files[0].cost_usd == result.totals.cost_usd and result.models[0].cost_usd == result.totals.cost_usd
    # Each read says it was explicit; the unknown one says what is not known.
    assert all(row.cause is None for row in result.rows)
    assert "from the explicit cache cachedContents/abc123 (priced at the explicit read rate)" in result.rows[0].detail
    assert "cachedContents/elsewhere" in result.rows[2].detail and "unknown" in result.rows[2].detail
    assert any("read but not created in these logs: cachedContents/elsewhere (1 request(s))" in n and "storage unknown" in n for n in result.notes)
    # A read from a named cache is not the lane's head: no unlogged head is inferred from it.
    assert not any(n.startswith("unlogged head") for n in result.notes)
    # The model predicts the named cache's size: the reads are within 3%.
    assert [row.predicted_cache_read for row in result.rows[:2]] == [100_000, 100_000]


def test_caches_read_in_workers_are_the_same(tmp_path: Path) -> None:
    # audit --jobs reads each file in a worker: the caches a file creates travel with its summary.
    from prefixbench.workloads.runs.execute import map_runs

    for name, sent in (("a", T0), ("b", T0 + 60)):
        write_jsonl(tmp_path / "logs" / f"{name}.jsonl", [
            cache_created(f"cachedContents/{name}", 1000, sent),
            call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("q", cached=f"cachedContents/{name}"), {"body": answer("a", usage(1010, 1000, 5))}, sent + 1),
        ])
    inline = load_trace([tmp_path / "logs"])
    parallel = load_trace([tmp_path / "logs"], map_files=functools.partial(map_runs, jobs=2))
    assert parallel == inline and [len(s.explicit_caches) for s in parallel[1]] == [1, 1]


def test_explicit_read_is_priced_at_the_rows_explicit_rate(tmp_path: Path) -> None:
    # A row with its own explicit_read price (0.0125 here, against 0.03 for an implicit read):
    # the read named by cachedContent pays it, 100,000 x 0.0125 / 1M = $0.00125 of its cost.
    table = load_prices()
    rows = tuple(replace(r, rates=replace(r.rates, explicit_read=Decimal("0.0125"))) if r.model == "gemini-2.5-flash" else r for r in table.rows)
    prices = Prices(None, replace(table, rows=rows))
    lines = [
        cache_created("cachedContents/abc123", 100_000, T0),
        call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("q1", cached="cachedContents/abc123"), {"body": answer("a", usage(100_010, 100_000, 50))}, T0 + 600),
        call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("q1"), {"body": answer("a", usage(100_010, 100_000, 50))}, T0 + 700),
    ]
    requests, summaries = load_trace([write_jsonl(tmp_path / "rate.jsonl", lines)])
    result = audit_requests(requests, summaries, prices)
    explicit_read, implicit_read = (row.cost_usd for row in result.rows)
    assert explicit_read == Decimal("0.000003") + Decimal("0.00125") + Decimal("0.000125")
    assert implicit_read == Decimal("0.000003") + Decimal("0.003") + Decimal("0.000125")


def test_cache_lifetime_from_ttl_expire_time_updates_and_vertex_names(tmp_path: Path) -> None:
    # a: no expireTime in the answer: the request's ttl (30 min) is the lifetime.
    # b: the answer's expireTime (2 h after the request) wins over the request's ttl; an update at
    #    01:00 sets 3 h more (its answer's expireTime): kept 4 h in all.
    # c: a Vertex name (projects/.../cachedContents/<id>), no ttl at all: the documented 1 h.
    # A delete of a cache this file never created, and a creation whose answer has no count,
    # are listed as skipped.
    lines = [
        cache_created("cachedContents/a", 1_000_000, T0, ttl="1800s"),
        cache_created("cachedContents/b", 1_000_000, T0, ttl="60s", expire="2026-01-01T02:00:00Z"),
        call(f"{API}/cachedContents/b", {"ttl": "10800s"}, {"body": {"name": "cachedContents/b", "expireTime": "2026-01-01T04:00:00.000000001Z"}}, T0 + 3600, method="PATCH"),
        cache_created("projects/p1/locations/us-central1/cachedContents/c", 1_000_000, T0, ttl=None, vertex=True),
        call(f"{API}/cachedContents/zzz", None, {"body": {}}, T0 + 60, method="DELETE"),
        call(f"{API}/cachedContents", {"model": "models/gemini-2.5-flash"}, {"body": {"name": "cachedContents/d"}}, T0),
    ]
    path = write_jsonl(tmp_path / "life.jsonl", lines)
    _, (summary,) = load_trace([path])
    assert [(c.name, c.kept_ms, c.ended_by) for c in summary.explicit_caches] == [
        ("cachedContents/a", 1_800_000, "expiry"),
        ("cachedContents/b", 4 * 3_600_000, "update"),
        ("cachedContents/c", 3_600_000, "expiry"),
    ]
    assert [reason.split(",")[0] for _, reason in summary.skipped] == [
        "deletion of cachedContents/zzz", "cached content created without a name and usageMetadata.totalTokenCount in the response: not billed"]
    # Storage: 1M tokens x (0.5 + 4 + 1) h x 1.00 per 1M tokens per hour.
    assert run_audit([path]).totals.storage_usd == Decimal("5.5")


def test_update_without_a_time_makes_storage_unknown(tmp_path: Path) -> None:
    lines = [cache_created("cachedContents/a", 1000, T0), call(f"{API}/cachedContents/a", {"ttl": "60s"}, {"body": {}}, T0 + 10, method="PATCH")]
    del lines[1]["request"]["timestamp"]
    result = run_audit([write_jsonl(tmp_path / "unknown.jsonl", lines)])
    (cache,) = result.explicit_caches
    assert cache.kept_hours is None and cache.storage_usd is None and cache.create_usd == Decimal("0.0003")
    assert any(n.startswith("storage unknown for cachedContents/a") for n in result.notes)


def test_chat_shape_of_tool_turns_and_what_it_refuses() -> None:
    body = {
        "systemInstruction": {"parts": [{"text": "sys"}]},
        "tools": [{"functionDeclarations": [{"name": "ls", "description": "list", "parameters": {"type": "object"}}]}, {"googleSearch": {}}],
        "contents": [
            {"role": "user", "parts": [{"text": "list files"}]},
            {"role": "model", "parts": [{"text": "thinking", "thought": True}, {"functionCall": {"name": "ls", "args": {"p": "."}}, "thoughtSignature": "sig"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"out": "a b"}}}]},
        ],
    }
    shaped = chat_shape(body, "gemini-2.5-pro", "gemini")
    assert shaped is not None
    assert [m["role"] for m in shaped["messages"]] == ["system", "user", "assistant", "tool"]
    assert shaped["messages"][2]["reasoning_content"] == "thinkingsig"  # in part order
    assert [t["function"]["name"] for t in shaped["tools"]] == ["ls", "googleSearch"]
    image = {"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "AA=="}}]}]}
    assert chat_shape(image, "m", "gemini") is None
    assert chat_shape({"contents": []}, "m", "gemini") is None


@pytest.mark.parametrize(
    ("url", "method", "expected"),
    [
        (f"{API}/models/gemini-2.5-flash:generateContent", "POST", ("generate", "gemini-2.5-flash", None)),
        (f"{API}/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "POST", ("stream", "gemini-2.5-flash", None)),
        (f"{VERTEX}/publishers/google/models/gemini-2.5-pro:generateContent", "POST", ("generate", "gemini-2.5-pro", None)),
        (f"{API}/cachedContents", "POST", ("cache-create", None, None)),
        (f"{VERTEX}/cachedContents/77", "PATCH", ("cache-update", None, "cachedContents/77")),
        (f"{API}/cachedContents/x1", "DELETE", ("cache-delete", None, "cachedContents/x1")),
        (f"{API}/cachedContents/x1", "GET", None),
        (f"{API}/cachedContents", "GET", None),
        ("https://example.net/cachedContents", "POST", None),  # too plain a path off Google's hosts
        (f"{API}/models/gemini-2.5-flash:countTokens", "POST", None),
        ("http://[::1/v1beta/models/m:generateContent", "POST", None),  # urllib cannot split it: no route, no crash
    ],
)
def test_native_route(url: str, method: str, expected: tuple | None) -> None:
    route = native_route(url, method)
    assert (None if route is None else (route.action, route.model, route.cache)) == expected


def test_a_url_urllib_cannot_split_is_no_crash(tmp_path: Path) -> None:
    # A Gemini body names no model: such a line reached the Converse check, whose urlsplit raised
    # on an unclosed IPv6 bracket (a traceback, found by the fuzz property below).
    line = capture_line(gen_body("q"), {"body": answer("a", usage(10))}, url="http://[::1/v1beta/models/m:generateContent")
    _, (summary,) = load_trace([write_jsonl(tmp_path / "bad-url.jsonl", [line])])
    assert summary.skipped == ((1, "not a model call (no request body with a model)"),)


def test_durations() -> None:
    assert [duration_ms(v, "f:1", "ttl") for v in ("3600s", "1.5s", "0.000000001s")] == [3_600_000, 1500, 0]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (cache_created("cachedContents/a", 10, T0, ttl="an hour"), "request.body.ttl 'an hour' is not a duration like \"3600s\""),
        (cache_created("cachedContents/a", -1, T0), "response usageMetadata.totalTokenCount is not a non-negative integer (-1)"),
        (cache_created("cachedContents/a", 2**63, T0), "response usageMetadata.totalTokenCount is not a plausible count (9223372036854775808... > 1,000,000,000,000)"),
        (call(f"{API}/models/m:generateContent", gen_body("q", cached="mine"), {"body": answer("a", usage(10, 5))}, T0),
         "request.body.cachedContent 'mine' is not a cachedContents/<id> name"),
        (call(f"{API}/models/m:generateContent", gen_body("q"), {"body": answer("a", usage(10, 50))}, T0),
         "cachedContentTokenCount (50) exceeds promptTokenCount (10)"),
    ],
)
def test_bad_lines_end_in_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], line: dict, message: str) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [line])
    assert run(["audit", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"prefixbench: error: {path}:1: {message}"


def _two_explicit_caches() -> list[dict]:
    """A cache created, read once and deleted 1.5 h later; another updated by a PATCH without a
    time (how long it was kept, and its storage, are unknown)."""
    lines = [
        cache_created("cachedContents/abc123", 100_000, T0),
        call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("q1", cached="cachedContents/abc123"), {"body": answer("a", usage(100_010, 100_000, 50))}, T0 + 600),
        call(f"{API}/cachedContents/abc123", None, {"body": {}}, T0 + 5400, method="DELETE"),
        cache_created("cachedContents/kept", 1000, T0 + 10),
        call(f"{API}/cachedContents/kept", {"ttl": "60s"}, {"body": {}}, T0 + 20, method="PATCH"),
    ]
    del lines[4]["request"]["timestamp"]
    return lines


def test_the_terminal_view_lists_each_explicit_cache_with_its_dollars(tmp_path: Path) -> None:
    """The table and audit.md show every cache the logs created (not a request): its size, how
    long it was kept, its reads and its two costs; what the log does not show is 'unknown'."""
    from prefixbench.reports.audit import audit_markdown, audit_table

    lines = _two_explicit_caches()
    result = run_audit([write_jsonl(tmp_path / "explicit.jsonl", lines)])
    table = audit_table(result)
    section = table.split("explicit caches the logs created", 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[1].split()[:3] == ["file:line", "cache", "model"]
    first = next(line for line in section if "cachedContents/abc123" in line)
    assert first.split()[-5:] == ["delete", "1", "100,000", "$0.0300", "$0.1500"]
    assert "1.50 h" in first and "100,000" in first
    kept = next(line for line in section if "cachedContents/kept" in line)
    assert "unknown" in kept  # an update without a time: how long it was kept, and its storage, are unknown
    assert "explicit caches the logs created" in audit_markdown(result)
    # A log without explicit caches shows no such section.
    plain = run_audit([write_jsonl(tmp_path / "plain.jsonl", lines[1:2])])
    assert "explicit caches the logs created" not in audit_table(plain)


def test_report_html_lists_each_explicit_cache_with_its_dollars(tmp_path: Path) -> None:
    """report.html has the explicit-cache table the terminal view has: one row a cache, its
    two costs (inside the paid total, said apart), 'unknown' where the log does not show a
    figure; a log without explicit caches has no such section."""
    from prefixbench.reports.audit import audit_html

    lines = _two_explicit_caches()
    html = audit_html(run_audit([write_jsonl(tmp_path / "explicit.jsonl", lines)]))
    section = html.split('id="explicit-caches"', 1)[1].split("</section>", 1)[0]
    first = section.split('data-explicit-cache="cachedContents/abc123"', 1)[1].split("</tr>", 1)[0]
    for text in ("gemini-2.5-flash", "100,000", "1.50 h", "delete", "$0.0300", "$0.1500"):
        assert text in first, text
    kept = section.split('data-explicit-cache="cachedContents/kept"', 1)[1].split("</tr>", 1)[0]
    assert "unknown" in kept
    assert "but paid: creating them cost $0.0303" in section  # 100,000 + 1,000 tokens
    plain = audit_html(run_audit([write_jsonl(tmp_path / "plain.jsonl", lines[1:2])]))
    assert 'id="explicit-caches"' not in plain
