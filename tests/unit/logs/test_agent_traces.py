"""Block-hash agent traces (kv-cache-tester's, AgentX kind): one object per conversation,
compact or pretty-printed, read from a folder walk; subagents as lanes; ids per scope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.records import iter_records

FIXTURE = Path(__file__).parent / "fixtures" / "agent-traces.json"


def conversation(scope: str | None = "local", ident: str = "c") -> dict:
    """Parent [1,2] -> subagent [1,2] -> parent [1,2,3], 4-token blocks."""
    value: dict = {"id": ident, "models": ["m"], "block_size": 4, "tool_tokens": 4, "system_tokens": 0, "requests": [
        {"t": 0.0, "type": "n", "model": "m", "in": 8, "out": 1, "hash_ids": [1, 2]},
        {"t": 1.0, "type": "subagent", "agent_id": "a1", "requests": [
            {"t": 0.0, "type": "n", "model": "m", "in": 8, "out": 1, "hash_ids": [1, 2]},
        ]},
        {"t": 2.0, "type": "n", "model": "m", "in": 13, "out": 1, "hash_ids": [1, 2, 3]},
    ]}
    if scope is not None:
        value["hash_id_scope"] = scope
    return value


def test_a_pretty_printed_trace_alone_in_a_folder_is_audited(tmp_path: Path) -> None:
    """A one-object .json under 1 MiB is metadata to a folder walk unless a format detects it."""
    (tmp_path / "trace_0001.json").write_text(FIXTURE.read_text())
    (tmp_path / "meta.json").write_text(json.dumps({"agentType": "x"}, indent=2))
    result = run_audit([tmp_path])
    assert [f.format for f in result.files] == ["not-a-log", "agent-traces"]
    assert result.totals.requests == 3


@pytest.mark.parametrize("indent", [None, 2])
def test_compact_and_pretty_read_alike(tmp_path: Path, indent: int | None) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(conversation(), indent=indent))
    requests, summaries = load_trace([path])
    assert summaries[0].format == "agent-traces"
    assert [(r.lane, r.lane_kind, r.sent_ms) for r in requests] == [("c", "main", 0), ("c/a1", "subagent", 1000), ("c", "main", 2000)]


def _reads(tmp_path: Path, *conversations: dict) -> list[int]:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in conversations))
    return [row.predicted_cache_read for row in run_audit([path]).rows]


def test_ids_with_a_lone_surrogate_are_read(tmp_path: Path) -> None:
    # Found by fuzzing: a conversation id or agent_id of "\\ud800" (valid JSON, no UTF-8) was
    # encoded to hash the ids' namespace: UnicodeEncodeError, a traceback. Read as any other id.
    value = conversation("per_context", ident="c\ud800")
    value["requests"][1]["agent_id"] = "a\udc00"
    assert _reads(tmp_path, value) == [0, 0, 8]


def test_scope_per_context_gives_each_context_its_own_ids(tmp_path: Path) -> None:
    # The first traces (no hash_id_scope) numbered a subagent's blocks from 1 again: its [1, 2]
    # are not the parent's, a cold start; the parent's third request reads its 8.
    assert _reads(tmp_path, conversation("per_context")) == [0, 0, 8]
    assert _reads(tmp_path, conversation(None)) == [0, 0, 8]


def test_scope_global_and_local_share_ids_with_the_subagents(tmp_path: Path) -> None:
    # kv-cache-tester's README (c9b3da5, the v8 set): local ids are "scoped per conversation, with
    # sub-agents sharing the parent's namespace" (a subagent's ids go on from the parent's: in the
    # v8 trace_0020 the Explore subagent's first id is the parent's last + 1); aiperf's TraceLab
    # conversion writes local traces whose subagents re-send the parent's blocks by their ids.
    # main gave a local subagent ids of its own: the [1, 2] it re-sent were read cold.
    assert _reads(tmp_path, conversation("global")) == [0, 8, 8]
    assert _reads(tmp_path, conversation("local")) == [0, 8, 8]


def test_conversations_never_share_blocks(tmp_path: Path) -> None:
    """Every conversation numbers its blocks from 1: two of them (two files, or two lines of
    one) share nothing (each one's first request is cold; its subagent, local, reads the parent's)."""
    assert _reads(tmp_path, conversation(ident="a"), conversation(ident="b")) == [0, 8, 8, 0, 8, 8]
    (tmp_path / "x.json").write_text(json.dumps(conversation(ident="a")))
    (tmp_path / "y.json").write_text(json.dumps(conversation(ident="a"), indent=1))  # other bytes: not a copy
    rows = run_audit([tmp_path / "x.json", tmp_path / "y.json"]).rows
    assert [row.predicted_cache_read for row in rows] == [0, 8, 8, 0, 8, 8]


def _coarse(block_size: int = 4) -> dict:
    """A conversation whose ids were hashed over blocks of about 10 tokens, though it declares 4
    (as kv-cache-tester's traces_neon/: ids over about 85 tokens, declared 64)."""
    return {"id": "n", "models": ["m"], "block_size": block_size, "hash_id_scope": "global", "tool_tokens": 0,
            "system_tokens": 0, "requests": [
                {"t": 0.0, "type": "s", "model": "m", "in": 30, "out": 1, "hash_ids": [1, 2, 3]},
                {"t": 1.0, "type": "s", "model": "m", "in": 12, "out": 1, "hash_ids": [1, 2, 3]},  # fits 4-token blocks alone
                {"t": 2.0, "type": "s", "model": "m", "in": 41, "out": 1, "hash_ids": [1, 2, 3, 4]},
            ]}


def test_ids_that_cannot_be_the_prompts_blocks_are_even_shares_of_it(tmp_path: Path) -> None:
    # 3 ids cannot be 4-token blocks of a 30-token prompt (it has 7 whole blocks): the ids were
    # hashed over larger blocks, so every request of the conversation reads its prompt spread over
    # its ids. Read as 4-token blocks, the second request (the first re-sent) read 12 of 12 by
    # chance and the third 12 of the 30 it re-sent.
    assert _reads(tmp_path, _coarse()) == [0, 12, 41 * 3 // 4]
    path = tmp_path / "t.jsonl"
    notes = run_audit([path]).files[0].notes
    assert any(n.startswith("3 of 3 request(s) are of a conversation whose hash_ids cannot all be block_size-token blocks")
               for n in notes)
    # More ids than the prompt can hold (4 tokens, 3 ids of 4): spread the same way, and the 4
    # tokens cached under them are all a re-send of them can read (9 was predicted before).
    value = _coarse()
    value["requests"] = [{"t": 0.0, "type": "s", "model": "m", "in": 4, "out": 1, "hash_ids": [1, 2, 3]},
                         {"t": 1.0, "type": "s", "model": "m", "in": 9, "out": 1, "hash_ids": [1, 2, 3]}]
    assert _reads(tmp_path, value) == [0, 4]
    # Ids that are the prompts' blocks keep block_size (the published traces: the whole blocks only).
    assert _reads(tmp_path, conversation("local")) == [0, 8, 8]


def test_an_id_keeps_one_size_so_no_read_exceeds_what_was_cached(tmp_path: Path) -> None:
    # 3 tokens over 8 ids, then 500 over those 8 and one more: an even share of each request's own
    # prompt made the 8 ids 444 tokens in the second, predicted read, of the 3 ever cached.
    value = _coarse()
    value["requests"] = [{"t": 0.0, "type": "s", "model": "m", "in": 3, "out": 1, "hash_ids": list(range(1, 9))},
                         {"t": 1.0, "type": "s", "model": "m", "in": 500, "out": 1, "hash_ids": list(range(1, 10))},
                         {"t": 2.0, "type": "s", "model": "m", "in": 600, "out": 1, "hash_ids": list(range(1, 11))}]
    # The third reads what the first two cached under its first 9 ids: 3 + 497.
    assert _reads(tmp_path, value) == [0, 3, 500]
    requests, _ = load_trace([tmp_path / "t.jsonl"])
    sizes: dict = {}
    for r in requests:  # one size per id, wherever it is sent
        for i, size in zip(r.hash_ids, r.block_tokens):
            assert sizes.setdefault(i, size) == size


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c.update(hash_id_scope="team"), "hash_id_scope 'team' is none of global, local, per_context"),
        # Found by fuzzing: a list or an object there raised TypeError (unhashable type), a traceback.
        (lambda c: c.update(hash_id_scope=["global"]), r"hash_id_scope \['global'\] is none of global, local, per_context"),
        (lambda c: c.update(hash_id_scope={}), r"hash_id_scope \{\} is none of"),
        (lambda c: c.update(block_size=0), "block_size is not a block size"),
        (lambda c: c["requests"][0].update(hash_ids=[1, -2]), r"requests\[0\]: hash_ids must be"),
        (lambda c: c["requests"][0].update(hash_ids=[1, [2]]), r"requests\[0\]: hash_ids must be"),
        (lambda c: c["requests"][1]["requests"][0].update(t="soon"), r"requests\[1\]\.requests\[0\]: t is not a number of seconds"),
        (lambda c: c["requests"][2].update(t=float("nan")), r"requests\[2\]: t is not a number"),
        # Found by fuzzing: an integer too large for a float raised OverflowError (a traceback).
        (lambda c: c["requests"][0].update(t=10**400), r"requests\[0\]: t is not a number of seconds"),
        (lambda c: c["requests"][2].update(api_time=-(10**400)), r"requests\[2\]: api_time is not a number of seconds"),
        (lambda c: c["requests"][2].update(**{"in": -1}), r"requests\[2\]: in is not a non-negative integer"),
        (lambda c: c.update(requests=[]), "no requests in this trace"),
    ],
)
def test_bad_conversations_are_one_line(tmp_path: Path, edit, message: str) -> None:
    value = conversation()
    edit(value)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(value, indent=1))
    with pytest.raises(UserError, match=message) as info:
        load_trace([path], "agent-traces")
    assert str(info.value).startswith(f"{path}:1")


def test_a_pretty_printed_object_is_one_record_and_a_broken_first_line_keeps_its_message(tmp_path: Path) -> None:
    pretty = tmp_path / "p.json"
    pretty.write_text("\n" + json.dumps({"a": 1}, indent=2) + "\n" + json.dumps({"b": [1, 2]}, indent=2) + "\n")
    assert [(r.line, r.value) for r in iter_records(pretty)] == [(2, {"a": 1}), (5, {"b": [1, 2]})]
    broken = tmp_path / "b.jsonl"
    broken.write_text('{"a": 1\n{"b": 2}\n')  # not one value across lines either: the JSON-lines error
    with pytest.raises(UserError, match=rf"^{broken}:1: truncated or malformed JSON \(Expecting ',' delimiter at column 8\)$"):
        list(iter_records(broken))
    truncated = tmp_path / "t.json"
    truncated.write_text(json.dumps({"a": [1, 2]}, indent=2)[:-3])
    with pytest.raises(UserError, match=rf"^{truncated}:1: truncated or malformed JSON"):
        list(iter_records(truncated))
    after = tmp_path / "after.json"
    after.write_text(json.dumps({"a": 1}, indent=2) + "\n{oops\n")
    with pytest.raises(UserError, match=rf"^{after}:4: truncated or malformed JSON"):
        list(iter_records(after))
