"""extends_previous_conversation per conversation (lane), not per previous request sent."""

from __future__ import annotations

from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.wire import Envelope, Message, Request, Text
from prefixbench.workloads.logs.chat_completions import parse_request
from prefixbench.workloads.scripted.interleaved import InterleavedSpec, interleaved_lines
from prefixbench.workloads.logs.jsonlines import decode

ENVELOPE = Envelope("p", "m")


def request(*texts: str, envelope: Envelope = ENVELOPE) -> Request:
    roles = ("user", "assistant")
    return Request(envelope, tuple(Message(roles[i % 2], (Text(t),)) for i, t in enumerate(texts)), system="sys")


def extends(provider: SimulatedProvider, *requests: Request) -> list[bool]:
    return [provider.send(r).extends_previous_conversation for r in requests]


def test_interleaved_sessions_each_extend_their_own_previous_request():
    flags = extends(
        SimulatedProvider(),
        request("task A"),
        request("task B"),
        request("task A", "answer A1"),
        request("task B", "answer B1"),
        request("task A", "answer A1", "more A"),
    )
    assert flags == [False, False, True, True, True]


def test_a_rewrite_breaks_only_its_own_lane_and_the_lane_follows_the_rewrite():
    flags = extends(
        SimulatedProvider(),
        request("task A", "long tool output"),
        request("task B", "b"),
        request("task A", "[pruned]"),  # rewritten in place: no longer an extension
        request("task B", "b", "b2"),
        request("task A", "[pruned]", "next"),  # extends the rewritten request, not the old one
    )
    assert flags == [False, False, False, True, True]


def test_lanes_are_per_family():
    other = Envelope("p", "m", reasoning_effort="max")
    flags = extends(SimulatedProvider(), request("task A"), request("task A", "x", envelope=other))
    assert flags == [False, False]


def test_a_single_conversation_still_compares_with_the_previous_request():
    flags = extends(
        SimulatedProvider(),
        request("task", "a"),
        request("task", "a", "b"),
        request("summary"),  # a checkpoint: shares no message, a new lane
        request("summary", "c"),
        request("task", "a", "b", "d"),  # back to the old lane's content: it extends that lane
    )
    assert flags == [False, True, False, True, True]


def test_the_peer_workload_breaks_only_where_session_0_rewrites():
    spec = InterleavedSpec(sessions=3, turns=21, result_chars=300)
    provider = SimulatedProvider()
    lines = list(interleaved_lines(spec))
    for _, _, line in lines:
        provider.send(parse_request(decode(line)))
    breaks = [(s, t) for (s, t, _), o in zip(lines, provider.observations) if not o.extends_previous_conversation]
    assert breaks == [(0, 0), (1, 0), (2, 0), (0, 10), (0, 20)]
    assert spec.rewrite_turns == (10, 20)


def test_replay_labels_a_divergence_against_the_previous_request_of_its_lane():
    from prefixbench.workloads.logs.replay import replay_labelled

    observations, labels = replay_labelled(
        [
            request("task A", "long tool output"),
            request("task B", "b"),
            request("task A", "long tool output", "more"),  # extends its lane: nothing to explain
            request("task A", "[pruned] output", "more"),  # rewrote message 1 of its own lane
        ]
    )
    assert labels[2] is None
    assert labels[3] is not None and labels[3][0] == "messages-changed" and "message 1 block 0" in labels[3][1]
    assert "long tool" in labels[3][1] and "[pruned]" in labels[3][1]
