"""Session log and surface: append, replace (shadowed events kept), header logging, guards."""

import pytest

from prefixbench.kernel.session import Header, Session, SessionError, tool_result_message
from prefixbench.simulator.wire import Envelope, Message, Text, user_text
from tests.builders import ENVELOPE, make_session


def test_append_puts_surface_kinds_on_the_surface_only():
    session = Session("s")
    a = session.append("turn/start", turn=0)
    b = session.append("user/message", user_text("hi"))
    assert session.surface == (b.seq,)
    assert a.surface_op is None and b.surface_op == "append"
    assert [e.seq for e in session.events] == [0, 1]


def test_replace_splices_a_positional_span_and_keeps_shadowed_events():
    session = make_session(3)  # header, user, (assistant, tool) x 3 -> surface seqs 1..7
    assert session.surface == (1, 2, 3, 4, 5, 6, 7)
    event = session.replace(1, 4, "user/message", user_text("checkpoint"), rewrite="checkpoint")
    assert session.surface == (event.seq, 5, 6, 7)
    assert event.source_seqs == (1, 2, 3, 4)
    assert len(session.events) == 9 and session.event(2).message is not None  # still in the log
    assert event.rewrite_kind == "checkpoint"
    # Positions, not seqs, define spans: the high seq now sits at position 0.
    later = session.replace(event.seq, 5, "user/message", user_text("again"))
    assert session.surface == (later.seq, 6, 7)


def test_replace_rejects_spans_that_are_reversed_or_shadowed():
    session = make_session(2)
    with pytest.raises(SessionError):
        session.replace(4, 2, "user/message", user_text("x"))
    session.replace(1, 2, "user/message", user_text("x"))
    with pytest.raises(SessionError, match="not on the surface"):
        session.replace(2, 3, "user/message", user_text("y"))


def test_tool_result_replacement_may_only_change_the_content():
    session = make_session(1)
    result_seq = session.surface[-1]
    session.replace(result_seq, result_seq, "tool/result", tool_result_message("call-0", "short"))
    assistant_seq = session.surface[1]
    with pytest.raises(SessionError, match="exactly one tool/result"):
        session.replace(assistant_seq, assistant_seq, "tool/result", tool_result_message("call-0", "x"))
    result_seq = session.surface[-1]
    with pytest.raises(SessionError, match="only the result content"):
        session.replace(result_seq, result_seq, "tool/result", tool_result_message("other", "x"))


def test_empty_assistant_messages_derive_nothing():
    session = Session("s")
    session.append("user/message", user_text("a"))
    session.append("assistant/message", Message("assistant", ()))
    session.append("assistant/message", Message("assistant", (Text("b"),)))
    assert [m.text() for m in session.derive_messages()] == ["a", "b"]


def test_header_is_logged_initially_and_then_only_on_change():
    session = Session("s")
    header = Header(ENVELOPE, "sys")
    first = session.log_header(header)
    assert first is not None and first.info["reason"] == "initial"
    assert session.log_header(Header(ENVELOPE, "sys")) is None
    changed = session.log_header(Header(Envelope("acme", "m2"), "sys"))
    assert changed is not None and changed.info["reason"] == "change"
    assert session.request_header() == Header(Envelope("acme", "m2"), "sys")
