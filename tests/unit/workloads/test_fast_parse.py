"""The fast request-log path (msgspec, raw messages, the message memo) against the plain one.

``parse_line`` with a shared ``MessageMemo`` must give exactly what ``parse_request`` gives on
``json.loads`` of the same line, and fail with the same message, whatever the line holds.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.chat_completions import (
    LineError,
    MessageMemo,
    parse_line,
    parse_request,
    parse_rewrites,
    read_chat_completions,
)
from prefixbench.workloads.logs.jsonlines import BadJson, decode, iter_lines

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
content = st.one_of(text, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": text}), max_size=3), st.none())
tool_call = st.fixed_dictionaries(
    {"id": st.sampled_from(["c1", "c2"]), "type": st.just("function"),
     "function": st.fixed_dictionaries({"name": st.sampled_from(["read", "run"]), "arguments": st.sampled_from(['{"a":1}', "{}"])})}
)
message = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "developer", "user"]), "content": content}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": content},
                          optional={"tool_calls": st.lists(tool_call, max_size=2), "reasoning_content": st.one_of(text, st.none())}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": st.sampled_from(["c1", "c2"]), "content": content}),
)
body = st.fixed_dictionaries(
    {"model": st.sampled_from(["m", "gpt-5"]), "messages": st.lists(message, max_size=6)},
    optional={
        "reasoning_effort": st.sampled_from(["low", "high"]),
        "temperature": st.one_of(st.floats(0, 2), st.integers(0, 2)),
        "stop": st.one_of(st.text(max_size=3), st.lists(st.text(max_size=3), max_size=2)),
        "max_tokens": st.integers(1, 10_000),
        "purpose": st.sampled_from(["conversation", "compaction"]),
        "tools": st.lists(st.fixed_dictionaries({"type": st.just("function"), "function": st.fixed_dictionaries(
            {"name": st.sampled_from(["read", "run"])}, optional={"description": text})}), max_size=2),
        "extra": st.integers(),
        "rewrites": st.one_of(st.lists(st.sampled_from(["prune", "checkpoint", ""]), max_size=2), st.integers()),
    },
)
# Anything JSON, to check that bad lines fail the same way on both paths.
anything = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["model", "messages", "role", "content", "x"]), inner, max_size=3)),
    max_leaves=8,
)


def reference(line: bytes):
    try:
        body = json.loads(line)
        return parse_request(body), parse_rewrites(body)
    except LineError as exc:
        return ("error", str(exc))


def fast(line: bytes, memo: MessageMemo):
    try:
        return parse_line(line, memo)
    except LineError as exc:
        return ("error", str(exc))


@settings(max_examples=60, deadline=None)
@given(st.lists(body, min_size=1, max_size=4), st.booleans())
def test_fast_path_equals_the_plain_path_on_valid_logs(bodies, grow):
    memo = MessageMemo()
    if grow:  # a conversation resending its messages, as logs do
        bodies = [{**bodies[0], "messages": bodies[0]["messages"][: k + 1]} for k in range(len(bodies[0]["messages"]))] or bodies
    for item in bodies:
        line = json.dumps(item, ensure_ascii=False).encode()
        assert fast(line, memo) == reference(line)


@settings(max_examples=80, deadline=None)
@given(anything)
def test_fast_path_fails_like_the_plain_path(value):
    line = json.dumps(value).encode()
    assert fast(line, MessageMemo()) == reference(line)


def test_a_resent_message_is_the_same_object():
    memo = MessageMemo()
    first, _ = parse_line(b'{"model":"m","messages":[{"role":"user","content":"hello"}]}', memo)
    second, _ = parse_line(b'{"model":"m","messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"hi"}]}', memo)
    assert second.messages[0] is first.messages[0]


def test_a_look_alike_with_the_same_length_and_tail_is_parsed_on_its_own():
    memo = MessageMemo()
    tail = "x" * 100
    a, _ = parse_line(json.dumps({"model": "m", "messages": [{"role": "user", "content": "AAAA" + tail}]}).encode(), memo)
    b, _ = parse_line(json.dumps({"model": "m", "messages": [{"role": "user", "content": "BBBB" + tail}]}).encode(), memo)
    assert a.messages[0].text() == "AAAA" + tail and b.messages[0].text() == "BBBB" + tail


def test_the_memo_is_bounded_and_stays_correct_past_its_limit(monkeypatch):
    monkeypatch.setattr(MessageMemo, "LIMIT_BYTES", 200)
    memo = MessageMemo()
    for round_no in range(3):
        for n in range(20):
            line = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"message {n} " * 3}]}).encode()
            assert parse_line(line, memo)[0].messages[0].text() == f"message {n} " * 3, round_no
    assert memo._bytes <= 200


def test_lines_end_at_newline_only_and_blank_lines_are_skipped(tmp_path):
    log = tmp_path / "log.jsonl"
    line = json.dumps({"model": "m", "messages": [{"role": "user", "content": "a\u2028b\u0085c"}]}, ensure_ascii=False)
    log.write_bytes(b"\n  \n" + line.encode() + b"\r\n\n" + line.encode())
    assert [number for number, _ in iter_lines(log)] == [3, 5]
    requests = list(read_chat_completions(log))
    assert [r.messages[0].text() for r in requests] == ["a\u2028b\u0085c"] * 2


def test_bad_bytes_name_the_line(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"model":"m","messages":[{"role":"user","content":"x"}]}\n{"model":"\xff","messages":[]}\n')
    with pytest.raises(UserError, match=r"log.jsonl:2: not UTF-8"):
        list(read_chat_completions(log))
    with pytest.raises(BadJson):
        decode(b"{not json")


@pytest.mark.parametrize(
    "line, words",
    [
        (b'{"model":"m","messages":[],"temperature":NaN}', "NaN is not a JSON number"),
        (b'{"model":"m","messages":[],"temperature":1e999}', "too large"),
        (b'{"model":"m","messages":[],"max_tokens":1' + b"0" * 5000 + b"}", "more than 4,300 digits"),
        (b'{"model":"m","messages":[{"role":"user","content":"\\ud800"}]}', "lone surrogate"),
        (b'{"model":"m","messages":' + b"[" * 5000 + b"]" * 5000 + b"}", "nested too deep"),
        (b'{"model":"m","messages":[' + b"[" * 150 + b"]" * 150 + b"]}", "nested too deep"),
        (b'{"model":"m\xff","messages":[]}', "not UTF-8"),
    ],
    ids=["nan", "huge float", "huge int", "lone surrogate", "deep", "deep but within msgspec", "bad utf-8"],
)
def test_what_the_fast_path_cannot_vouch_for_is_worded_by_the_plain_reading(tmp_path, line, words):
    log = tmp_path / "log.jsonl"
    log.write_bytes(line + b"\n")
    with pytest.raises(UserError, match=r"log.jsonl:1: .*" + words):
        list(read_chat_completions(log))


def test_a_long_integer_only_the_plain_reading_holds_is_read_then_judged(tmp_path):
    # 10**40 is beyond msgspec's integers: the plain reading takes the line, and the value is
    # then judged as a value (max_tokens is bounded), not refused as bad JSON.
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":1' + b"0" * 40 + b"}\n")
    with pytest.raises(UserError, match=r"log.jsonl:1: field 'max_tokens' must be a positive integer up to 1,000,000,000"):
        list(read_chat_completions(log))
    tools = b'"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","default":1' + b"0" * 40 + b"}}}]"
    log.write_bytes(b'{"model":"m","messages":[{"role":"user","content":"x"}],' + tools + b"}\n")
    assert "1" + "0" * 40 in next(iter(read_chat_completions(log))).tools[0].parameters


def test_a_long_integer_in_a_field_nobody_reads_is_accepted(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"model":"m","messages":[{"role":"user","content":"x"}],"extra":1' + b"0" * 4000 + b"}\n")
    assert [r.messages[0].text() for r in read_chat_completions(log)] == ["x"]


def test_a_byte_order_mark_is_skipped(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'\xef\xbb\xbf{"model":"m","messages":[{"role":"user","content":"hi"}]}\n')
    assert [r.messages[0].text() for r in read_chat_completions(log)] == ["hi"]


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_end_in_requests_or_one_clean_error(tmp_path_factory, data):
    log = tmp_path_factory.mktemp("fuzz") / "log.jsonl"
    log.write_bytes(data)
    try:
        list(read_chat_completions(log))
    except UserError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(log))


def test_the_bracket_count_only_skips_lines_that_cannot_nest_too_deep():
    from prefixbench.workloads.logs.jsonlines import may_nest_too_deep, too_deep
    from prefixbench.workloads.logs.reading import MAX_DEPTH

    for depth in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2):
        text = "[" * depth + "]" * depth
        value = json.loads(text)
        # Whenever the walk would refuse a value, the count lets the walk happen.
        assert may_nest_too_deep(text) or not too_deep(value)
        assert may_nest_too_deep(text.encode()) == may_nest_too_deep(text)
    assert not may_nest_too_deep('{"hash_ids": [1, 2, 3], "input_length": 3}')
    # The line reader's count (every other byte deleted) is the same count.
    from prefixbench.workloads.logs.records import _NOT_OPENING

    for line in (b'{"a": [1, {"b": "[{"}]}', b"[]", b"", bytes(range(256)), "{é[".encode()):
        assert len(line.translate(None, _NOT_OPENING)) == line.count(b"[") + line.count(b"{")
