"""Fuzz the Bedrock Converse body parser (workloads/logs/converse_body.py) and the Converse
calls of ``audit --input http-capture``: generated and edited bodies end in a request the body
model can replay, or a clean UserError naming the line, never a traceback."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.models import make_cache
from prefixbench.simulator.providers import BEDROCK
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.workloads.logs.converse_body import parse_converse_body, replayable
from prefixbench.workloads.logs.formats.common import refuse_lone_surrogates
from tests.fuzz.harness import Tally, edited, fuzz_settings, json_values, mutated, to_json_line, weighted, write

MODELS = ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.amazon.nova-pro-v1:0", "anthropic.claude-opus-4-7", "meta.llama3-70b", "")
texts = st.one_of(st.text(max_size=12), st.sampled_from(("x" * 5000, "é" * 2000)))
cache_points = st.fixed_dictionaries({"cachePoint": st.fixed_dictionaries(
    {"type": st.sampled_from(("default", "default", "ephemeral"))}, optional={"ttl": st.sampled_from(("5m", "1h", "2h"))})})
blocks = st.one_of(
    st.fixed_dictionaries({"text": texts}),
    cache_points,
    st.fixed_dictionaries({"toolUse": st.fixed_dictionaries({"toolUseId": st.just("t1"), "name": st.just("run"), "input": json_values})}),
    st.fixed_dictionaries({"toolResult": st.fixed_dictionaries(
        {"toolUseId": st.just("t1"), "content": st.lists(st.one_of(st.fixed_dictionaries({"text": texts}), st.fixed_dictionaries({"json": json_values})), max_size=2)},
        optional={"status": st.sampled_from(("success", "error"))})}),
    st.fixed_dictionaries({"reasoningContent": st.one_of(
        st.fixed_dictionaries({"reasoningText": st.fixed_dictionaries({"text": texts, "signature": st.just("c2ln")})}),
        st.fixed_dictionaries({"redactedContent": st.just("AAAA")}))}),
    st.fixed_dictionaries({"image": st.fixed_dictionaries({"format": st.just("png"), "source": st.fixed_dictionaries({"bytes": st.just("iVBO")})})}),
    st.dictionaries(st.sampled_from(("guardContent", "citationsContent", "video")), json_values, min_size=1, max_size=1),
)
messages = st.lists(st.fixed_dictionaries({"role": st.sampled_from(("user", "assistant", "user", "system")), "content": st.lists(blocks, max_size=4)}), max_size=4)
tools = st.lists(st.one_of(cache_points, st.fixed_dictionaries({"toolSpec": st.fixed_dictionaries(
    {"name": st.sampled_from(("read", "write", ""))}, optional={"description": texts, "inputSchema": st.fixed_dictionaries({"json": json_values})})})), max_size=4)
bodies = st.fixed_dictionaries({"messages": messages}, optional={
    "system": st.lists(st.one_of(st.fixed_dictionaries({"text": texts}), cache_points), max_size=3),
    "toolConfig": st.fixed_dictionaries({"tools": tools}),
    "inferenceConfig": st.fixed_dictionaries({}, optional={"maxTokens": st.integers(-1, 10**6), "temperature": st.floats(allow_nan=True),
                                                          "stopSequences": st.lists(st.text(max_size=3), max_size=2)}),
    "additionalModelRequestFields": json_values,
    "promptVariables": json_values,
})


def test_converse_bodies_parse_to_a_replayable_request_or_one_clear_error(importer_examples):
    @fuzz_settings(importer_examples)
    @given(body=edited(bodies), model=st.sampled_from(MODELS))
    def case(body: object, model: str) -> None:
        if not isinstance(body, dict) or not replayable(body):
            return
        try:
            refuse_lone_surrogates(body, "f:1", "request.body")  # the capture reader's check, before any parsing
            request = parse_converse_body(body, model, "f:1")
        except UserError as exc:
            assert str(exc).startswith("f:1: ") and "\n" not in str(exc)
            return
        # What the audit does with it: the Bedrock body model replays it twice without an error.
        provider = SimulatedProvider(cache=make_cache(BEDROCK.body_model or "byte-exact", **dict(BEDROCK.body_model_options)))
        first = provider.send(request, 0, ready_tick=10)
        second = provider.send(request, 20, ready_tick=30)
        assert 0 <= second.cached_tokens <= second.prompt_tokens == first.prompt_tokens

    case()


SEED_BODY = {"toolConfig": {"tools": [{"toolSpec": {"name": "read", "inputSchema": {"json": {"type": "object"}}}}, {"cachePoint": {"type": "default"}}]},
             "system": [{"text": "Be brief. " * 300}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
             "messages": [{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}],
             "inferenceConfig": {"maxTokens": 100, "temperature": 0.5}}
USAGE = {"inputTokens": 5, "outputTokens": 9, "cacheReadInputTokens": 0, "cacheWriteInputTokens": 800}


@st.composite
def captured_call(draw) -> dict:
    model = draw(st.sampled_from(("us.anthropic.claude-sonnet-4-5-20250929-v1%3A0", "us.amazon.nova-pro-v1%3A0")))
    url = f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{model}/{draw(st.sampled_from(('converse', 'converse-stream')))}"
    body = draw(st.one_of(st.just(SEED_BODY), bodies))
    return {"request": {"timestamp": 1768471200.0, "method": "POST", "url": url, "body": body},
            "response": {"timestamp": 1768471201.0, "status_code": 200, "body": {"usage": USAGE}}}


SEED = b"\n".join(to_json_line({"request": {"timestamp": 1768471200.0 + i, "url": "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-pro-v1%3A0/converse",
                                            "body": SEED_BODY}, "response": {"timestamp": 1768471201.0 + i, "status_code": 200, "body": {"usage": USAGE}}})
                  for i in range(2)) + b"\n"


def test_captures_of_converse_calls_end_cleanly(importer_examples):
    tally = Tally("bedrock-converse-capture", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-converse-"))
    path = folder / "capture.jsonl"

    @fuzz_settings(importer_examples)
    @given(data=weighted(
        (st.lists(edited(captured_call()).map(to_json_line), min_size=1, max_size=3).map(b"\n".join), 3),
        (mutated(SEED), 1),
    ))
    def case(data: bytes) -> None:
        tally.check(["audit", str(write(path, data)), "--input", "http-capture", "--quiet", "--format", "json"])

    case()
    tally.report()
