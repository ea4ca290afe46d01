"""A Claude Code call whose message id is of no shape Anthropic's API, Bedrock or Vertex writes
went through a relay the transcript does not name: it keeps Anthropic's rules and list price, the
relay is said (an unnamed one), and a fix saving on it "may save".

Seen on github.com/austinweitao/claude-backup: 20 calls of claude-fable-5 and claude-opus-4.8
whose ids are ``msg_`` + 16 hex digits (Anthropic's: ``msg_`` + 24 base62 characters). Read as an
unknown provider's, their lost dollars went from $1.43 to $20.29 though Anthropic's rules predicted
their reads; read as relayed on Anthropic's rules, nothing moves but what the audit says of them.

The other shapes no maker writes are read the same way: ``msg_`` and a UUID (aistrad/work's
vibelife project) and an OpenAI chat completion's id, bare or after ``msg_`` (xfs96192/claude-config,
a gateway answering the Messages API from an OpenAI-compatible upstream). A bare UUID is not: it
is seen on calls Anthropic's API served (K3RN-LABS/k3rn.labs, ``requestId`` ``req_011C...``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefixbench.reports.audit import audit_table
from prefixbench.reports.whatif import hedged
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import what_if
from prefixbench.workloads.logs.trace import UNNAMED_RELAY
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

MODEL = "claude-opus-4-6"


def _session(tmp_path: Path, ids: tuple[str, str, str], model: str = MODEL, bare: bool = False) -> Path:
    """Three calls: a cold start, a read of it, and one 10 minutes later that finds the 5-minute
    entry gone (a fix keeping it warm saves on it). ``bare``: the message ids without ``msg_``."""
    t = Transcript(version="2.1.177")
    t.user("hello", "2026-09-10T02:00:00.000Z", root=True)
    t.assistant(ids[0], "2026-09-10T02:00:03.000Z", [cc_usage(3, 21_000, 0, 40)], model=model)
    t.user("result", "2026-09-10T02:00:10.000Z", tool=True)
    t.assistant(ids[1], "2026-09-10T02:00:13.000Z", [cc_usage(5, 900, 21_000, 40)], model=model)
    t.user("again", "2026-09-10T02:10:13.000Z")
    t.assistant(ids[2], "2026-09-10T02:10:16.000Z", [cc_usage(5, 22_500, 0, 40)], model=model)
    if bare:
        for line in t.lines:
            if line.get("type") == "assistant":
                line["message"]["id"] = line["message"]["id"].removeprefix("msg_")
    return write_jsonl(tmp_path / "s1.jsonl", t.lines)


#: Real shapes: a relay's (austinweitao/claude-backup), then Anthropic's API's, Bedrock's and
#: Vertex's (the public homes the realdata tests read).
RELAY_IDS = ("18c39a43412ef206", "18c39a4b0f21c8aa", "18c39a6e9d03b7f1")
API_IDS = ("01EitihKEWdz4ZsYrobMDUn3", "0175yHhPUPFGbabUiDkdjvaD", "01XTudNCUwVIOPraK7Kg9kt2")


def test_a_call_whose_message_id_no_maker_writes_is_relayed_on_anthropic_s_rules(tmp_path: Path) -> None:
    # Before: no relay at all (the ids not looked at): no caveat, no note of the evidence, and the
    # keep-alive saving said as sure.
    path = _session(tmp_path, RELAY_IDS)
    result = run_audit([path])
    assert [(r.provider, r.model) for r in result.rows] == [("anthropic", MODEL)] * 3
    assert result.relays == (("anthropic", MODEL, UNNAMED_RELAY, 3),)
    table = audit_table(result)
    assert f"(at the maker's list price, not the relay's bill: 3 request(s) through the relay '{UNNAMED_RELAY}')" in table
    assert f"anthropic via relay '{UNNAMED_RELAY}'" in table
    assert any(n.startswith(f"3 request(s) of {MODEL} went through a relay the log does not name") for n in result.notes)
    (evidence,) = [n for f in result.files for n in f.notes if "re-id'd" in n]
    assert evidence.startswith(f"{MODEL}: 3 call(s) here read as through a relay the transcript does not name")
    assert "msg_ and hex digits alone" in evidence
    # The rules stay Anthropic's: the third call's miss is the TTL's, as on the maker's own API.
    assert [r.cause for r in result.rows] == ["cold-start", None, "ttl-expired"]
    (keep,) = what_if(*load_trace([path]), ["keep-alive"])
    assert keep.saved_usd is not None and keep.saved_usd > 0
    assert f"through the relay '{UNNAMED_RELAY}'" in keep.detail, keep.detail
    assert hedged("saves $0.01", keep.saved_usd, keep.detail) == "may save $0.01"


@pytest.mark.parametrize("ids", [
    API_IDS,
    tuple("bdrk_" + i for i in API_IDS),
    tuple("vrtx_" + i for i in API_IDS),
    # Short hex (a counter or a fixture's) is no evidence: 16 digits at least.
    ("1a2b", "3c4d", "5e6f"),
])
def test_a_call_whose_message_id_is_of_a_maker_s_shape_names_no_relay(tmp_path: Path, ids: tuple[str, str, str]) -> None:
    result = run_audit([_session(tmp_path, ids)])
    assert [(r.provider, r.model) for r in result.rows] == [("anthropic", MODEL)] * 3
    assert result.relays == ()
    assert not [n for f in result.files for n in f.notes if "re-id'd" in n]


def test_a_foreign_id_on_a_model_not_anthropic_s_names_no_relay(tmp_path: Path) -> None:
    # MiniMax's Anthropic-compatible API: its own provider's, whatever its ids look like.
    result = run_audit([_session(tmp_path, RELAY_IDS, model="MiniMax-M2.7")])
    assert {r.provider for r in result.rows} == {"minimax"} and result.relays == ()


#: Real shapes of the other relays' ids: msg_ and a UUID (aistrad/work), msg_ and an OpenAI chat
#: completion's id, and that id alone (xfs96192/claude-config: chatcmpl- and 24 hex digits).
OTHER_RELAY_IDS = {
    "msg_ and a UUID": (("c3c76e23-e0c1-446b-bf36-77960496e3f1", "0b7e1a52-52f3-4c55-9a0c-2f6d1e8b9a41",
                         "5d2f8e10-7c4b-4a9e-b1d3-6e0f2a9c8b77"), False),
    "an OpenAI chat completion's id (chatcmpl-...)": (("chatcmpl-6964c4bee67600bcbd377297", "chatcmpl-6964c4db5851dec0c39fe701",
                                                       "chatcmpl-697b0ec383be495fa7b1ede2"), False),
    "an OpenAI chat completion's id (chatcmpl-...), bare": (("chatcmpl-697b0ec383be495fa7b1ede2", "chatcmpl-697b0ec383be495fa7b1ede3",
                                                             "chatcmpl-697b0ec383be495fa7b1ede4"), True),
}


@pytest.mark.parametrize("shape", sorted(OTHER_RELAY_IDS))
def test_a_call_whose_message_id_is_another_shape_no_maker_writes_is_relayed_the_same_way(tmp_path: Path, shape: str) -> None:
    # Before: no relay (only msg_ + hex was looked at). After: relayed as msg_ + hex is, its note
    # naming the shape; rules, causes and the saving's amount as before, the saving hedged.
    ids, bare = OTHER_RELAY_IDS[shape]
    path = _session(tmp_path, ids, bare=bare)
    result = run_audit([path])
    assert [(r.provider, r.model) for r in result.rows] == [("anthropic", MODEL)] * 3
    assert result.relays == (("anthropic", MODEL, UNNAMED_RELAY, 3),)
    (evidence,) = [n for f in result.files for n in f.notes if "re-id'd" in n]
    assert f"their message ids are {shape.removesuffix(', bare')}, which neither" in evidence, evidence
    assert [r.cause for r in result.rows] == ["cold-start", None, "ttl-expired"]
    (keep,) = what_if(*load_trace([path]), ["keep-alive"])
    assert f"through the relay '{UNNAMED_RELAY}'" in keep.detail, keep.detail
    assert hedged("saves $0.01", keep.saved_usd, keep.detail) == "may save $0.01"
    # The same calls under Anthropic's own ids: the same dollars and causes, no relay.
    plain = run_audit([_session(tmp_path / "api", API_IDS)])
    assert (plain.totals.lost_usd, [r.cause for r in plain.rows]) == (result.totals.lost_usd, [r.cause for r in result.rows])


def test_a_bare_uuid_names_no_relay(tmp_path: Path) -> None:
    # K3RN-LABS/k3rn.labs: UUID message ids on calls whose requestId is Anthropic's (req_011C...):
    # not a relay's shape.
    ids = ("6c452252-e0f8-41a3-9ac4-02ad20be9463", "b180b5fa-39af-415d-a697-f67114edc313", "0753d66c-d953-4905-b9d1-9af7df3c076c")
    result = run_audit([_session(tmp_path, ids, bare=True)])
    assert [(r.provider, r.model) for r in result.rows] == [("anthropic", MODEL)] * 3
    assert result.relays == ()
    assert not [n for f in result.files for n in f.notes if "re-id'd" in n]
