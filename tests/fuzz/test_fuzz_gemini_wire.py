"""Fuzz ``prefixbench audit`` on captures of Gemini's own API (workloads/logs/formats/gemini_wire.py):
generated model calls (bodies, streamed and JSON responses, usage), explicit caches created,
updated, read and deleted, each edited at random places, and mutated seed files, end in exit 0
or one clean line with exit 2 within the bound; never a traceback or a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, optional_keys, texts, to_json_line, weighted, write

API = "https://generativelanguage.googleapis.com/v1beta"
VERTEX = "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1"
counts = st.one_of(st.integers(0, 300_000), st.sampled_from((-1, 2**63, 1.5, "7", None)))
usage_metadata = optional_keys(
    {"promptTokenCount": counts},
    {"cachedContentTokenCount": counts, "candidatesTokenCount": counts, "thoughtsTokenCount": counts,
     "toolUsePromptTokenCount": counts, "totalTokenCount": counts},
)
part = st.one_of(
    st.fixed_dictionaries({"text": texts}, optional={"thought": st.booleans(), "thoughtSignature": texts}),
    st.fixed_dictionaries({"functionCall": optional_keys({"name": st.sampled_from(("ls", "cat"))}, {"args": st.just({"p": "."}), "id": texts})}),
    st.fixed_dictionaries({"functionResponse": optional_keys({"name": st.sampled_from(("ls", "cat"))}, {"response": st.just({"out": "a"}), "id": texts})}),
    st.just({"inlineData": {"mimeType": "image/png", "data": "AA=="}}),
)
content = st.fixed_dictionaries({"role": st.sampled_from(("user", "model", "system", 3)), "parts": st.lists(part, max_size=3)})
body = optional_keys(
    {"contents": st.lists(content, min_size=1, max_size=4)},
    {
        "systemInstruction": st.one_of(texts, st.fixed_dictionaries({"parts": st.lists(st.fixed_dictionaries({"text": texts}), max_size=2)})),
        "tools": st.lists(st.one_of(st.just({"googleSearch": {}}), st.fixed_dictionaries({"functionDeclarations": st.lists(
            optional_keys({"name": texts}, {"description": texts, "parameters": st.just({"type": "object"})}), max_size=2)})), max_size=2),
        "generationConfig": optional_keys({}, {"temperature": st.floats(0, 2), "stopSequences": st.lists(texts, max_size=2),
                                               "maxOutputTokens": st.integers(1, 10**6),
                                               "thinkingConfig": optional_keys({}, {"thinkingBudget": st.integers(-1, 10**5), "thinkingLevel": texts})}),
        "cachedContent": st.sampled_from(("cachedContents/c1", "projects/p/locations/l/cachedContents/c1", "c1", "cachedContents/")),
    },
)
chunk = optional_keys({}, {"usageMetadata": usage_metadata, "candidates": st.just([{"content": {"role": "model", "parts": [{"text": "a"}]}}])})
response = st.one_of(
    chunk.map(lambda c: {"body": c}),
    st.lists(chunk, max_size=3).map(lambda cs: {"body": cs}),
    st.lists(chunk, max_size=3).map(lambda cs: {"body_raw": "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in cs)}),
    st.lists(chunk, max_size=3).map(lambda cs: {"body_raw": json.dumps(cs)}),
)
model_url = st.sampled_from((
    f"{API}/models/gemini-2.5-flash:generateContent",
    f"{API}/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
    f"{VERTEX}/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
    "http://localhost:9/v1beta/models/m%3Ax:generateContent",
    "http://[::1/v1beta/models/m:generateContent",
))
times = st.one_of(st.floats(1767225600, 1767235600), st.sampled_from(("2026-01-01T00:00:00Z", "soon", None)))
model_call = st.fixed_dictionaries({
    "request": optional_keys({"url": model_url, "body": body}, {"timestamp": times, "method": st.just("POST")}),
    "response": st.fixed_dictionaries({"status_code": st.sampled_from((200, 200, 429))}).flatmap(
        lambda head: response.map(lambda r: {**head, **r})),
})
expiry = st.sampled_from(("2026-01-01T02:00:00Z", "2026-01-01T00:00:00.123456789Z", "yesterday", 5, None))
cache_call = st.one_of(
    st.fixed_dictionaries({
        "request": optional_keys({"url": st.sampled_from((f"{API}/cachedContents", f"{VERTEX}/cachedContents")), "method": st.just("POST"),
                                  "body": optional_keys({"model": st.sampled_from(("models/gemini-2.5-flash", "m"))},
                                                        {"ttl": st.sampled_from(("3600s", "1.5s", "1h", "", 60)), "expireTime": expiry})},
                                 {"timestamp": times}),
        "response": st.fixed_dictionaries({"status_code": st.just(200), "body": optional_keys(
            {"name": st.sampled_from(("cachedContents/c1", "projects/p/locations/l/cachedContents/c1", 7, "c1"))},
            {"usageMetadata": optional_keys({}, {"totalTokenCount": counts}), "expireTime": expiry, "createTime": expiry})}),
    }),
    st.fixed_dictionaries({
        "request": optional_keys({"url": st.sampled_from((f"{API}/cachedContents/c1", f"{API}/cachedContents/c9")),
                                  "method": st.sampled_from(("PATCH", "DELETE", "GET"))},
                                 {"timestamp": times, "body": optional_keys({}, {"ttl": st.sampled_from(("60s", "x")), "expireTime": expiry})}),
        "response": st.fixed_dictionaries({"status_code": st.just(200), "body": optional_keys({}, {"expireTime": expiry})}),
    }),
)

SEED = b"\n".join(to_json_line(line) for line in (
    {"request": {"timestamp": 1767225600.0, "method": "POST", "url": f"{API}/cachedContents",
                 "body": {"model": "models/gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"text": "doc"}]}], "ttl": "3600s"}},
     "response": {"status_code": 200, "body": {"name": "cachedContents/c1", "expireTime": "2026-01-01T01:00:00Z", "usageMetadata": {"totalTokenCount": 5000}}}},
    {"request": {"timestamp": 1767225660.0, "method": "POST", "url": f"{API}/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
                 "body": {"cachedContent": "cachedContents/c1", "contents": [{"role": "user", "parts": [{"text": "q"}]}]}},
     "response": {"status_code": 200, "body_raw": "data: " + json.dumps({"usageMetadata": {"promptTokenCount": 5010, "cachedContentTokenCount": 5000, "candidatesTokenCount": 3}}) + "\r\n\r\n"}},
    {"request": {"timestamp": 1767225700.0, "method": "POST", "url": f"{API}/models/gemini-2.5-flash:generateContent",
                 "body": {"systemInstruction": {"parts": [{"text": "s"}]}, "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}},
     "response": {"status_code": 200, "body": [{"usageMetadata": {"promptTokenCount": 2000, "cachedContentTokenCount": 1024, "toolUsePromptTokenCount": 5}}]}},
    {"request": {"timestamp": 1767227000.0, "method": "DELETE", "url": f"{API}/cachedContents/c1"}, "response": {"status_code": 200, "body": {}}},
)) + b"\n"


def test_gemini_captures_end_cleanly(importer_examples):
    tally = Tally("gemini-wire", bound_s=20)
    path = Path(tempfile.mkdtemp(prefix="fuzz-gemini-")) / "capture.jsonl"

    @fuzz_settings(importer_examples)
    @given(
        data=weighted(
            (st.lists(edited(st.one_of(model_call, model_call, cache_call)).map(to_json_line), min_size=1, max_size=5).map(b"\n".join), 3),
            (mutated(SEED), 1),
        ),
        output=st.sampled_from(("table", "json")),
    )
    def case(data: bytes, output: str) -> None:
        tally.check(["audit", str(write(path, data)), "--quiet", "--format", output, "--input", "http-capture"])

    case()
    tally.report()
