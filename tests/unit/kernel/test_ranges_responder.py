"""The scripted model's answer to a ranges nudge (workloads.scripted.ranges_responder)."""

import json

from prefixbench.kernel.engines.ranges_compress import parse_compress_arguments
from prefixbench.kernel.engines.ranges_nudge import Nudge
from prefixbench.simulator.wire import Envelope, Message, Reasoning, Request, Text, user_text
from prefixbench.workloads.scripted.ranges_responder import COMPRESS_TOOL, compress_reply, compress_summary, nudge_ranges

ENVELOPE = Envelope("deepseek", "deepseek-reasoner", "high")
NUDGE = user_text(Nudge(1, "pressure", (("m00002", "m00040"), ("m00051", "m00090")), 80_000, 100_000, 9_000).text())


def request(*messages: Message) -> Request:
    return Request(ENVELOPE, messages, "sys", (COMPRESS_TOOL,))


def test_no_nudge_no_reply():
    assert compress_reply(request()) is None
    assert compress_reply(request(user_text("range m00001 m00002"))) is None
    assert compress_reply(request(NUDGE, Message("assistant", (Text("ok"),)))) is None


def test_a_nudge_gets_one_compress_call_on_the_oldest_range():
    reply = compress_reply(request(user_text("go"), NUDGE))
    (call,) = reply.tool_calls
    assert (call.call_id, call.name) == ("compress-2-m00002-m00040", "compress")
    (asked,) = parse_compress_arguments(call.arguments)
    assert (asked.start_ref, asked.end_ref) == ("m00002", "m00040")
    assert asked.summary == compress_summary("m00002", "m00040")
    assert json.loads(call.arguments) == {
        "ranges": [{"startRef": "m00002", "endRef": "m00040", "summary": asked.summary}]
    }
    # No reasoning in the conversation, none in the reply.
    assert reply.blocks == (call,)


def test_summaries_are_deterministic_and_300_to_600_characters():
    sizes = {len(compress_summary(f"m{n:05d}", f"m{n + 30:05d}")) for n in range(1, 200)}
    assert min(sizes) >= 300 and max(sizes) <= 600 and len(sizes) > 20
    assert compress_summary("m00002", "m00040") == compress_summary("m00002", "m00040")
    assert compress_summary("m00002", "m00040").startswith("summary of m00002..m00040: ")


def test_a_thinking_conversation_gets_reasoning_in_its_field():
    thinking = Message("assistant", (Reasoning("hmm", "reasoning_text"), Text("done")))
    reply = compress_reply(request(user_text("go"), thinking, NUDGE))
    reasoning, call = reply.blocks
    assert isinstance(reasoning, Reasoning) and reasoning.field == "reasoning_text"
    assert reasoning.text.startswith("compress thinking m00002..m00040: ")
    assert compress_reply(request(user_text("go"), thinking, NUDGE), reasoning=False).blocks == (call,)


def test_block_ranges_are_passed_through():
    nudge = user_text(Nudge(2, "growth", (("b1", "b5"),), 40_000, 100_000, 8_000).text())
    assert nudge_ranges(nudge) == (("b1", "b5"),)
    (call,) = compress_reply(request(nudge)).tool_calls
    assert parse_compress_arguments(call.arguments)[0].start_ref == "b1"


def test_the_tool_schema_names_compress():
    assert COMPRESS_TOOL.name == "compress"
    assert json.loads(COMPRESS_TOOL.parameters)["required"] == ["ranges"]
