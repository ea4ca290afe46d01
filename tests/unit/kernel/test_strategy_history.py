"""The shared helpers of kernel/strategies/history.py that write or send for several engines."""

from __future__ import annotations

from prefixbench.kernel import Message, Reasoning, Reply, Session, StepContext, Text, user_text
from prefixbench.kernel.strategies.history import assistant_note, cold_request, reasoning_stand_in, summary_reply
from tests.unit.kernel.agent_sessions import ROUTED, Recorder, context, session_with

WINDOW = 40_000


def test_the_stand_in_takes_the_field_of_the_last_reasoning_and_is_empty_without_one():
    plain = (user_text("go"), Message("assistant", (Text("ok"),)))
    assert reasoning_stand_in(plain) == ()
    thinking = (*plain, Message("assistant", (Reasoning("a", "reasoning_content"), Text("x"))),
                Message("assistant", (Reasoning("b", "reasoning"), Text("y"))))
    assert reasoning_stand_in(thinking) == (Reasoning("", "reasoning"),)
    assert assistant_note(thinking, "noted") == Message("assistant", (Reasoning("", "reasoning"), Text("noted")))


def test_a_cold_request_goes_to_the_routed_model_with_its_own_system_and_no_tools():
    request = cold_request(context(session_with([("go", 1)]), WINDOW), (user_text("sum up"),), "SYSTEM")
    assert request is not None and request.envelope.model == ROUTED.envelope.model
    assert (request.system, request.tools, request.max_tokens, request.purpose) == ("SYSTEM", (), 2_000, "compaction")
    unrouted = StepContext(Session("s"), lambda p, m: None, Recorder(), WINDOW, None)  # no header logged yet
    assert cold_request(unrouted, (user_text("sum up"),), "") is None


class Refusing(Recorder):
    def __call__(self, request):  # type: ignore[no-untyped-def]
        self.sent.append(request)
        return Reply((), error="HTTP 400 too long")


def test_a_summary_reply_is_the_reply_or_none_after_one_warning():
    session = session_with([("go", 1)])
    request = cold_request(context(session, WINDOW), (user_text("sum up"),), "")
    reply = summary_reply(context(session, WINDOW, Recorder()), request, "x: failed")
    assert reply is not None and reply.text() == "SUMMARY OF THE WORK"
    assert summary_reply(context(session, WINDOW, Recorder("  ")), request, "x: failed") is None
    assert summary_reply(context(session, WINDOW, Refusing()), request, "x: failed") is None
    client = Recorder()
    assert summary_reply(context(session, WINDOW, client), None, "x: failed") is None and client.sent == []
    warnings = [e.info["text"] for e in session.events if e.kind == "compaction/warning"]
    assert warnings == ["x: failed: no text", "x: failed: HTTP 400 too long"]
