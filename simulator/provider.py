"""The simulated provider: validate a request, price it against a cache model, log it."""

from __future__ import annotations

from typing import Protocol

from msgspec.structs import replace

from prefixbench.simulator.cache import ByteExactCache, CacheModel
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.render import RenderedRequest, RenderedUnit, render_message, render_request
from prefixbench.simulator.wire import Block, Envelope, Message, Request


class Validator(Protocol):
    """A protocol-strictness profile: returns the provider's 400 reason, or None to accept."""

    def check(self, request: Request) -> str | None:
        """Reason the provider would reject ``request`` with HTTP 400, or None."""
        ...

    def accepted(self, request: Request, reply_blocks: tuple[Block, ...]) -> None:
        """Remember what the model emitted in reply to ``request`` (for byte-exact replay rules)."""
        ...


class SimulatedProvider:
    """Sees every request of one agent run, in order, and reports what each one cost.

    The byte-exact reference always runs (it locates the first divergent byte); ``cache`` is
    the model that prices the request, the reference itself unless another model is given.

    ``extends_previous_conversation`` compares a request with the previous request of the same
    conversation (lane), not with the previous request sent: in a log where several sessions
    interleave, each session's requests extend each other while the line before belongs to
    another session. A lane is named by what opens it: the family, the tools and system units
    and the first message. A request whose opening no earlier request had starts a new lane;
    one that rewrites its own first message (a checkpoint that summarizes from the start)
    starts one too, and the requests after it extend that one. With a single conversation
    this is exactly "extends the previous conversation request". The ``MAX_LANES`` most
    recently used lanes are kept; finding a request's lane is one dict lookup.
    """

    MAX_LANES = 256

    def __init__(self, cache: CacheModel | None = None, validator: Validator | None = None, window: int | None = None) -> None:
        self.reference = ByteExactCache()
        self.cache: CacheModel = cache if cache is not None else self.reference
        self.validator = validator
        #: The model's context window in prompt tokens: a longer prompt is refused with 400
        #: (:func:`too_long`), as every provider does; None accepts any length (a log's replay).
        self.window = window
        self.observations: list[Observation] = []
        self._pending_rewrites: list[str] = []
        #: Latest request of each conversation lane by its opening, least recently used first.
        self._lanes: dict[tuple[object, ...], tuple[RenderedRequest, Request]] = {}
        #: Conversation lanes opened so far (requests that continued none).
        self.lanes_opened = 0

    def previous_in_lane(self, request: Request) -> Request | None:
        """The latest request of the conversation ``request`` continues (before it is sent), if any."""
        found = self._lanes.get(lane_key(request.envelope, render_request(request)))
        return None if found is None else found[1]

    def _latest(self, lane: tuple[object, ...]) -> RenderedRequest | None:
        found = self._lanes.get(lane)
        return None if found is None else found[0]

    def note_rewrite(self, kind: str) -> None:
        """Record a durable rewrite the agent landed; the next observation carries it."""
        self._pending_rewrites.append(kind)

    def send(self, request: Request, tick: int = 0, *, ready_tick: int | None = None) -> Observation:
        """Validate, price and log one request; returns its observation.

        Args:
            tick: logical send time (ms).
            ready_tick: when the response begins (ms); cache models that model in-flight
                requests do not serve this request's prefix to requests sent before it.
        """
        rendered = render_request(request)
        rewrites = tuple(self._pending_rewrites)
        self._pending_rewrites.clear()
        reason = self.validator.check(request) if self.validator is not None else None
        prompt_tokens = self.cache_prompt_tokens(rendered) if reason is not None or self.window is not None else 0
        if reason is None and self.window is not None and prompt_tokens > self.window:
            reason = too_long(prompt_tokens, self.window)
        if reason is not None:
            observation = Observation(
                index=len(self.observations),
                purpose=request.purpose,
                envelope=request.envelope,
                max_tokens=request.max_tokens,
                prompt_tokens=prompt_tokens,
                cached_tokens=0,
                written_tokens=0,
                divergence=None,
                extends_previous_conversation=extends(self._latest(lane_key(request.envelope, rendered)), rendered),
                rewrites_since_previous=rewrites,
                tick=tick,
                status=400,
                error=reason,
            )
            self.observations.append(observation)
            return observation
        if self.cache is self.reference:
            verdict = self.reference.observe(rendered, request.envelope, tick)
            divergence = verdict.divergence
        else:
            divergence = self.reference.match(rendered, request.envelope).divergence
            self.reference.store(rendered, request.envelope)
            verdict = self.cache.observe(rendered, request.envelope, tick, ready_tick=ready_tick)
        lane = lane_key(request.envelope, rendered)
        latest = self._latest(lane)
        observation = Observation(
            index=len(self.observations),
            purpose=request.purpose,
            envelope=request.envelope,
            max_tokens=request.max_tokens,
            prompt_tokens=verdict.prompt_tokens,
            cached_tokens=verdict.cached_tokens,
            written_tokens=verdict.written_tokens,
            written_long_tokens=verdict.written_long_tokens,
            cached_explicit_tokens=verdict.cached_explicit_tokens,
            stored_token_ms=verdict.stored_token_ms,
            created_tokens=verdict.created_tokens,
            divergence=divergence,
            extends_previous_conversation=extends(latest, rendered),
            rewrites_since_previous=rewrites,
            tick=tick,
        )
        if request.purpose == "conversation":
            if latest is not None:
                del self._lanes[lane]  # re-inserted last: most recently used
            else:
                self.lanes_opened += 1
                if len(self._lanes) >= self.MAX_LANES:
                    del self._lanes[next(iter(self._lanes))]
            self._lanes[lane] = (rendered, request)
        self.observations.append(observation)
        return observation

    def record_output(
        self, observation: Observation, request: Request, blocks: tuple[Block, ...], output_tokens: int
    ) -> Observation:
        """Attach the model's reply to a logged observation.

        The validator learns what the model emitted (strict providers check that replayed
        reasoning is byte-identical to it) even for a rejected request: the scripted agent goes
        on as after a successful retry.

        A cache model that stores the model's output (``observe_output``: DeepSeek's end-of-output
        unit, vLLM's decode blocks, SGLang's finished request) sees the reply of every accepted
        request here.
        """
        if self.validator is not None:
            self.validator.accepted(request, blocks)
        on_output = getattr(self.cache, "observe_output", None)
        if on_output is not None and not observation.is_rejected and blocks:
            reply = render_message(Message("assistant", blocks))
            on_output(render_request(request), request.envelope, reply, observation.tick)
        updated = replace(observation, output_tokens=output_tokens)
        self.observations[observation.index] = updated
        return updated

    def record_reply(self, observation: Observation, request: Request, reply: tuple[Message, ...]) -> None:
        """Show a cache model that stores output a captured reply: its messages as the next request
        sends them back (a Responses call's output items may be more than one assistant message).

        Each message is stored after the prompt and the messages before it, as
        :meth:`record_output` stores one; a rejected request stores nothing.
        """
        on_output = getattr(self.cache, "observe_output", None)
        if on_output is None or observation.is_rejected or not reply:
            return
        rendered = render_request(request)
        for message in reply:
            unit = render_message(message)
            on_output(rendered, request.envelope, unit, observation.tick)
            rendered = RenderedRequest((*rendered.units, unit), rendered.first_message_unit, retention=rendered.retention)

    def cache_prompt_tokens(self, rendered: RenderedRequest) -> int:
        """Prompt tokens of a request as the pricing model counts them."""
        counter = getattr(self.cache, "prompt_tokens", None)
        if counter is not None:
            return int(counter(rendered))
        return -(-rendered.num_bytes // 4)


#: How a provider's 400 for a prompt over the context window begins (Anthropic's words; OpenAI
#: and DeepSeek say "maximum context length"): what :data:`is_too_long` looks for.
TOO_LONG = "prompt is too long"


def too_long(prompt_tokens: int, window: int) -> str:
    """The 400 text for a prompt over the window: ``prompt is too long: 83602 tokens > 32000 maximum``."""
    return f"{TOO_LONG}: {prompt_tokens} tokens > {window} maximum"


def is_too_long(error: str | None) -> bool:
    """Whether a refusal's text is the window's (not a strict profile's)."""
    return error is not None and error.startswith(TOO_LONG)


def lane_key(envelope: Envelope, rendered: RenderedRequest) -> tuple[object, ...]:
    """What opens a conversation: the family, tools and system units, and the first message
    (the lane ``replay`` and ``check --trace`` group a log's requests by)."""
    return (envelope, *(unit.data for unit in rendered.units[: rendered.first_message_unit + 1]))


def extends(latest: RenderedRequest | None, rendered: RenderedRequest) -> bool:
    """Whether the request repeats its lane's latest request unit for unit, then adds to it."""
    if latest is None:
        return False
    return len(latest.units) <= len(rendered.units) and _shared_units(latest.units, rendered.units) == len(latest.units)


def _shared_units(a: tuple[RenderedUnit, ...], b: tuple[RenderedUnit, ...]) -> int:
    """Leading units two renderings share (identity first: memoized renderings are shared)."""
    count = 0
    for x, y in zip(a, b):
        if x.data is not y.data and x.data != y.data:
            break
        count += 1
    return count
