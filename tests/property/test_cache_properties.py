"""Properties of the byte-exact reference on random request sequences."""


from hypothesis import given, settings
from hypothesis import strategies as st

from msgspec.structs import replace

from prefixbench.simulator.cache import tokens_of
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.render import render_request
from prefixbench.simulator.wire import Envelope, Message, Request, Text

texts = st.text(alphabet="abcé😀 ", min_size=0, max_size=12)
conversations = st.lists(texts, min_size=1, max_size=6)
ENV = Envelope("p", "m", "high")


def request(parts, envelope=ENV, max_tokens=None):
    messages = tuple(Message("user" if i % 2 == 0 else "assistant", (Text(t),)) for i, t in enumerate(parts))
    return Request(envelope, messages, "system", (), max_tokens)


@settings(max_examples=150, deadline=None)
@given(st.lists(conversations, min_size=1, max_size=6))
def test_cached_never_exceeds_prompt(sequence):
    provider = SimulatedProvider()
    for parts in sequence:
        obs = provider.send(request(parts))
        assert 0 <= obs.cached_tokens <= obs.prompt_tokens
        assert obs.written_tokens == obs.prompt_tokens - obs.cached_tokens


@settings(max_examples=150, deadline=None)
@given(st.lists(conversations, max_size=4), conversations, st.lists(texts, min_size=1, max_size=3))
def test_append_only_extension_is_cached_at_least_up_to_the_previous_prompt(history, base, extra):
    provider = SimulatedProvider()
    for parts in history:
        provider.send(request(parts))
    first = provider.send(request(base))
    second = provider.send(request(base + extra))
    assert second.cached_tokens >= first.prompt_tokens
    assert second.extends_previous_conversation


@settings(max_examples=100, deadline=None)
@given(conversations, st.sampled_from(["effort", "temperature", "stop"]))
def test_another_effort_temperature_or_stop_shares_nothing(parts, field):
    other = {
        "effort": replace(ENV, reasoning_effort="max"),
        "temperature": replace(ENV, temperature=0.7),
        "stop": replace(ENV, stop=("\n\n",)),
    }[field]
    provider = SimulatedProvider()
    provider.send(request(parts))
    assert provider.send(request(parts, envelope=other)).cached_tokens == 0


@settings(max_examples=100, deadline=None)
@given(conversations, st.integers(1, 10**6), st.integers(1, 10**6))
def test_another_max_tokens_shares_everything(parts, a, b):
    provider = SimulatedProvider()
    provider.send(request(parts, max_tokens=a))
    obs = provider.send(request(parts, max_tokens=b))
    assert obs.cached_tokens == obs.prompt_tokens


@settings(max_examples=150, deadline=None)
@given(st.lists(conversations, max_size=3), conversations, st.data())
def test_a_rewrite_at_message_k_caps_the_hit_at_the_bytes_before_k(history, parts, data):
    k = data.draw(st.integers(0, len(parts) - 1))
    rewritten = list(parts)
    rewritten[k] = parts[k] + "#"  # '#' never occurs in the alphabet: a fresh message
    provider = SimulatedProvider()
    for h in history:
        provider.send(request(h))
    provider.send(request(parts))
    obs = provider.send(request(rewritten))
    rendered = render_request(request(rewritten))
    before_k = sum(len(u.data) for u in rendered.units[: rendered.first_message_unit + k])
    unit = rendered.units[rendered.first_message_unit + k].data
    # The hit can reach into message k only up to the rewritten byte, never past it.
    assert obs.cached_tokens <= tokens_of(before_k + unit.index(b"#"))
    assert obs.divergence is not None and obs.divergence.message_idx == k
