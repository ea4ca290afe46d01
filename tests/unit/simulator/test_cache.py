"""The byte-exact reference cache: family keys, longest shared prefix, divergence location."""


from msgspec.structs import replace

from prefixbench.simulator.cache import ByteExactCache, common_prefix_len, tokens_of
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.render import render_request
from prefixbench.simulator.wire import Envelope, Message, Text, ToolCall
from tests.builders import ENVELOPE, make_request


def test_tokens_round_up_bytes_over_four():
    assert [tokens_of(n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]


def test_common_prefix_len_finds_first_difference():
    assert common_prefix_len(b"abcdef", b"abcxef") == 3
    assert common_prefix_len(b"abc", b"abcdef") == 3
    assert common_prefix_len(b"", b"x") == 0
    assert common_prefix_len(b"x" * 1000 + b"a", b"x" * 1000 + b"b") == 1000


def test_first_request_is_all_uncached_and_fully_written():
    provider = SimulatedProvider()
    obs = provider.send(make_request("hello"))
    assert obs.cached_tokens == 0
    assert obs.written_tokens == obs.prompt_tokens == tokens_of(render_request(make_request("hello")).num_bytes)
    # A first request diverges at its first byte: the tools unit.
    assert obs.divergence is not None and obs.divergence.section == "tools" and obs.divergence.byte_offset == 0


def test_append_only_extension_is_cached_up_to_the_previous_prompt():
    provider = SimulatedProvider()
    first = provider.send(make_request("hello", "world"))
    second = provider.send(make_request("hello", "world", "again"))
    previous_bytes = render_request(make_request("hello", "world")).num_bytes
    assert second.cached_tokens == tokens_of(previous_bytes)
    assert second.extends_previous_conversation
    assert second.divergence is not None and second.divergence.message_idx == 2
    assert first.prompt_tokens < second.prompt_tokens


def test_different_effort_temperature_or_stop_shares_nothing():
    for envelope in (
        replace(ENVELOPE, reasoning_effort="max"),
        replace(ENVELOPE, temperature=0.2),
        replace(ENVELOPE, stop=("END",)),
        replace(ENVELOPE, model="m2"),
    ):
        provider = SimulatedProvider()
        provider.send(make_request("hello", "world"))
        obs = provider.send(make_request("hello", "world", envelope=envelope))
        assert obs.cached_tokens == 0, envelope
        assert not obs.extends_previous_conversation


def test_max_tokens_is_not_part_of_the_family():
    provider = SimulatedProvider()
    provider.send(make_request("hello", "world", max_tokens=100))
    obs = provider.send(make_request("hello", "world", max_tokens=9999))
    assert obs.cached_tokens == obs.prompt_tokens
    assert obs.divergence is None


def test_rewrite_at_message_k_caps_the_hit_and_is_located_to_the_byte():
    provider = SimulatedProvider()
    provider.send(make_request("aaaa", "bbbb", "cccc"))
    obs = provider.send(make_request("aaaa", "bbXb", "cccc"))
    rendered = render_request(make_request("aaaa", "bbXb", "cccc"))
    before = sum(len(u.data) for u in rendered.units[: rendered.first_message_unit + 1])
    # Inside message 1: '{"role":"assistant","content":[{"type":"text","text":"bb' is shared.
    shared_in_unit = len('{"role":"assistant","content":[{"type":"text","text":"bb')
    assert obs.divergence is not None
    assert (obs.divergence.message_idx, obs.divergence.block_idx) == (1, 0)
    assert obs.divergence.unit_offset == shared_in_unit
    assert obs.divergence.byte_offset == before + shared_in_unit
    assert obs.cached_tokens == tokens_of(before + shared_in_unit)
    assert obs.divergence.describe() == f"message 1 block 0 @ byte {before + shared_in_unit}"


def test_best_prefix_is_taken_over_any_earlier_request_of_the_family():
    provider = SimulatedProvider()
    provider.send(make_request("aaaa", "long shared answer", "x"))
    provider.send(make_request("zzzz"))
    obs = provider.send(make_request("aaaa", "long shared answer", "y"))
    rendered = render_request(make_request("aaaa", "long shared answer", "y"))
    unit = rendered.units[-1].data
    shared = sum(len(u.data) for u in rendered.units[:-1]) + unit.index(b'"y"') + 1
    assert obs.cached_tokens == tokens_of(shared)
    assert not obs.extends_previous_conversation  # the previous request was "zzzz"


def test_block_index_of_a_divergence_in_a_later_block():
    cache = ByteExactCache()
    a = make_request("q")
    msg = Message("assistant", (Text("same"), ToolCall("c1", "read_file", '{"i":1}')))
    b = replace(a, messages=(*a.messages, msg))
    c = replace(a, messages=(*a.messages, Message("assistant", (Text("same"), ToolCall("c1", "read_file", '{"i":2}')))))
    cache.observe(render_request(b), ENVELOPE, 0)
    verdict = cache.observe(render_request(c), ENVELOPE, 1)
    assert verdict.divergence is not None
    assert (verdict.divergence.message_idx, verdict.divergence.block_idx) == (1, 1)


def test_rewrites_noted_by_the_agent_ride_on_the_next_observation():
    provider = SimulatedProvider()
    provider.send(make_request("a"))
    provider.note_rewrite("checkpoint")
    provider.note_rewrite("prune")
    obs = provider.send(make_request("b"))
    assert obs.rewrites_since_previous == ("checkpoint", "prune")
    assert provider.send(make_request("b", "c")).rewrites_since_previous == ()


def test_envelope_label_is_readable():
    assert Envelope("p", "m", "max", 0.5, ("x",)).label() == "p/m effort=max temperature=0.5 stop=['x']"
