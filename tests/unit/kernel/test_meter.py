"""Heuristic token meter: exact prices per block kind, header, surface fold, usage anchor."""

from prefixbench.kernel.meter import measure, price_block, price_header, price_message, utf16_len
from prefixbench.kernel.session import Header, Session
from prefixbench.simulator.wire import Message, Reasoning, Text, ToolCall, ToolResult, user_text
from tests.builders import ENVELOPE, TOOLS, make_session


def test_block_prices():
    assert price_block(Text("x" * 9)) == 3 + 4
    assert price_block(Reasoning("x" * 8)) == 2 + 4
    assert price_block(ToolCall("id", "read_file", '{"i":12}')) == 3 + 2 + 4
    assert price_block(ToolResult("id", (Text("x" * 5), Text("y")))) == (2 + 4) + (1 + 4) + 4


def test_message_adds_the_role_overhead():
    assert price_message(Message("user", (Text("abcd"), Text("ef")))) == (1 + 4) + (1 + 4) + 4


def test_lengths_count_utf16_code_units_like_the_original():
    assert utf16_len("abc") == 3
    assert utf16_len("é") == 1
    assert utf16_len("😀") == 2  # an astral character is a surrogate pair
    assert price_block(Text("😀😀")) == 1 + 4


def test_header_price_counts_system_and_tool_json():
    assert price_header(None) == 0
    assert price_header(Header(ENVELOPE)) == 0
    system_only = price_header(Header(ENVELOPE, "x" * 10))
    assert system_only == 3 + 4
    assert price_header(Header(ENVELOPE, "x" * 10, TOOLS)) > system_only


def test_measure_folds_the_surface_and_adds_the_header():
    session = make_session(2)
    m = measure(session)
    assert [n.seq for n in m.nodes] == list(session.surface)
    assert m.surface_tokens == sum(price_message(msg) for msg in session.derive_messages())
    assert m.total_tokens == m.surface_tokens + price_header(session.request_header())


def test_projection_lowers_node_prices_and_totals():
    m = measure(make_session(2))
    seq = m.nodes[-1].seq
    projected = m.project({seq: 5})
    assert projected.nodes[-1].tokens == m.nodes[-1].tokens - 5
    assert projected.total_tokens == m.total_tokens - 5
    assert m.project({seq: 10_000}).nodes[-1].tokens == 0  # never below zero


def test_provider_usage_anchors_the_total_when_the_header_is_unchanged():
    session = Session("s")
    header = Header(ENVELOPE, "sys")
    session.log_header(header)
    session.append("user/message", user_text("u" * 40))
    step_surface = session.surface
    reply = Message("assistant", (Text("a" * 40),))
    estimate_at_anchor = price_header(header) + price_message(user_text("u" * 40)) + price_message(reply)
    session.append("assistant/message", reply, header=header, usage_tokens=estimate_at_anchor + 100, step_surface=step_surface)
    session.append("user/message", user_text("v" * 8))
    m = measure(session)
    # Provider said 100 more than the estimate; growth since the anchor is added on top.
    assert m.total_tokens == estimate_at_anchor + 100 + price_message(user_text("v" * 8))
    # A usage below the estimate never lowers the reading.
    session2 = Session("s2")
    session2.log_header(header)
    session2.append("user/message", user_text("u" * 40))
    session2.append("assistant/message", reply, header=header, usage_tokens=1, step_surface=session2.surface)
    assert measure(session2).total_tokens == estimate_at_anchor
