"""``ranges``: model-driven range compression (acp-kernel, seed 002).

The model writes the summaries; the engine decides when to ask, which ranges to propose,
tracks blocks and tiers, and renders the compressed view. It never calls a model.

Per request (:func:`process_turn`)::

    assign refs ─> sync blocks ─> render view ─> recommend ─> nudge? ─> emergency truncate ─> tags
    (m00001..)     (age, retire)  (summaries     (protected    (growth,   (>= 95%: cut big
                                   in place,      zone, >= 5k   pressure,  tool outputs in
                                   orphan strip)  char batches) emergency) the view)

When the model calls ``compress`` (:func:`apply_compression`) each range is widened to whole
tool pairs and, with ``Preset.reasoning_pairs`` (seed 000's fix), whole reasoning pairs, to a
fixpoint, and becomes a block whose summary renders where the range began. With the switch
off (legacy) a range can split reasoning from its reply, and no orphaned reasoning is
stripped: the rebuilt assistant turn then carries reasoning other than what the model
produced with it, or none, which a strict DeepSeek endpoint answers with HTTP 400.

The session log stays append-only: the view is rendered from the full history and the state
each request. A compression or truncation is still a durable rewrite of what the provider
saw, so it is logged with ``info["rewrite"]`` and the loop notes it to the provider. A nudge
is one transient user message at the end of one request; when it leaves the view without a
compression behind it, that too is noted (``nudge``), so no rewrite is ever silent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
from msgspec.structs import replace

from prefixbench.kernel.api import StepContext, warn
from prefixbench.kernel.engines.ranges_compress import (
    CompressArgumentsError,
    apply_compression,
    parse_compress_arguments,
)
from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.ranges_nudge import (
    Nudge,
    decide_nudge,
    plan_truncation,
    recommend_ranges,
)
from prefixbench.kernel.engines.ranges_state import (
    CompressionState,
    PartsMemo,
    assign_refs,
    initial_state,
    rebuild_messages,
    sync_blocks,
)
from prefixbench.kernel.engines.ranges_view import COMPRESS_TOOL_NAME, render_parts, tag_parts
from prefixbench.kernel.meter import price_header, price_message
from prefixbench.kernel.model import ModelCatalog
from prefixbench.kernel.presets import Preset
from prefixbench.kernel.session import Header, Session, tool_result_message
from prefixbench.simulator.wire import Message, ToolCall, user_text

__all__ = ["RangesEngine", "process_turn"]


def process_turn(
    messages: Sequence[Message],
    state: CompressionState,
    config: RangesConfig,
    token_count: int | Callable[[tuple[Message, ...]], int],
    *,
    limit: int | None = None,
    reasoning_pairs: bool = True,
    raw_ids: Sequence[str] | None = None,
    memo: PartsMemo | None = None,
) -> tuple[tuple[Message, ...], CompressionState, Nudge | None]:
    """One request's pipeline: the messages to send, the next state and the nudge decision.

    Args:
        messages: the full, uncompressed history.
        token_count: the context size the nudge and the valve judge: the host's count, or a
            function that prices the view this turn renders (before any truncation).
        limit: context window; ``config.context_limit`` when None. With neither, no nudge
            and no truncation is decided.
        reasoning_pairs: seed 000's fix (orphaned-reasoning strip; widening is in
            :func:`apply_compression`).
        raw_ids: stable message identities (default: positions).
        memo: see :func:`assign_refs`.
    """
    parts, state = assign_refs(messages, state, raw_ids, memo)
    state = sync_blocks(parts, state, config)
    view = render_parts(parts, state, config, reasoning_pairs=reasoning_pairs)
    window = limit if limit is not None else config.context_limit
    nudge: Nudge | None = None
    rendered: tuple[Message, ...] | None = None
    if window is not None:
        if callable(token_count):
            rendered = rebuild_messages(view, messages)
            count = token_count(rendered)
        else:
            count = token_count
        ranges = recommend_ranges(view, state, config, reasoning_pairs=reasoning_pairs)
        nudge, baselines = decide_nudge(count, window, ranges, state, config)
        state = replace(state, nudge=baselines)
        truncated = plan_truncation(view, count, window, state, config)
        if truncated:
            state = replace(state, truncated=state.truncated + truncated)
            view = render_parts(parts, state, config, reasoning_pairs=reasoning_pairs)
            rendered = None
    if config.render_tags != "none":
        view, state = tag_parts(view, state, config)
        rendered = None
    if rendered is None:
        rendered = rebuild_messages(view, messages)
    return rendered, state, nudge


def nudge_message(nudge: Nudge) -> Message:
    """The transient user message that carries a nudge."""
    return user_text(nudge.text())


class _Turn(msgspec.Struct, frozen=True):
    """The view computed for one surface, reused until the surface or header changes."""

    key: tuple[tuple[int, ...], Header | None]
    messages: tuple[Message, ...]
    nudge: Nudge | None


class _Shown(msgspec.Struct, frozen=True):
    """A nudge that went out in a view, and the log length when it did."""

    nudge: Nudge
    num_events: int


class RangesEngine:
    """Model-driven range compression over an append-only session."""

    name = "ranges"

    def __init__(self, config: RangesConfig, preset: Preset) -> None:
        self.config = config
        self.preset = preset
        #: The latest engine state; every pure function takes and returns it explicitly.
        self.state: CompressionState = initial_state()
        self._catalog: ModelCatalog | None = None
        self._turn: _Turn | None = None
        self._shown: _Shown | None = None
        # Memos, not state: the log is append-only and events immutable, so the history and
        # the parts of each event can be extended instead of rebuilt every request.
        self._history: _History = _History((), (), ())
        self._parts_memo: PartsMemo = {}

    # --- Engine protocol ----------------------------------------------------------------

    def before_step(self, ctx: StepContext) -> None:
        """Run this request's pipeline (bookkeeping, nudge decision, emergency truncation)."""
        self._catalog = ctx.catalog
        self._run_turn(ctx.session)

    def view(self, session: Session) -> tuple[Message, ...]:
        """The compressed view, plus the transient nudge message when one fires."""
        turn = self._turn
        if turn is None or turn.key != self._key(session):
            turn = self._run_turn(session)
        if turn.nudge is None:
            return turn.messages
        self._shown = _Shown(turn.nudge, len(session.events))
        return (*turn.messages, nudge_message(turn.nudge))

    def run_tool(self, session: Session, call: ToolCall) -> Message | None:
        """Apply a ``compress`` call; other tools are not the engine's."""
        if call.name != COMPRESS_TOOL_NAME:
            return None
        try:
            ranges = parse_compress_arguments(call.arguments, call.call_id)
        except CompressArgumentsError as exc:
            warn(session, f"compress call {call.call_id}: {exc}")
            return tool_result_message(call.call_id, f"error: {exc}", is_error=True)
        messages, raw_ids = self._read_history(session)
        state, result = apply_compression(
            ranges,
            messages,
            self.state,
            self.config,
            reasoning_pairs=self.preset.reasoning_pairs,
            raw_ids=raw_ids,
        )
        self.state = state
        self._turn = None
        for block in result.blocks:
            session.append(
                "compaction/compress",
                engine=self.name,
                block_id=block.block_id,
                tier=block.tier,
                covered_refs=block.effective_refs,
                direct_refs=block.direct_refs,
                consumed_block_ids=block.direct_block_ids,
                compressed_tokens=block.compressed_tokens,
                summary_chars=len(block.summary),
                compress_call_id=call.call_id,
                rewrite="compress",
            )
        if not result.is_ok:
            warn(session, f"compress call {call.call_id} failed: {'; '.join(result.errors)}")
        return tool_result_message(call.call_id, result.text(), is_error=not result.is_ok)

    # --- internals ----------------------------------------------------------------------

    def _read_history(self, session: Session) -> tuple[tuple[Message, ...], tuple[str, ...]]:
        """The surface's messages and identities, extended from the last read when appended to."""
        surface = session.surface
        cached = self._history
        n = len(cached.surface)
        if surface[:n] == cached.surface:
            messages, raw_ids = _read_surface(session, surface[n:])
            history = _History(surface, cached.messages + tuple(messages), cached.raw_ids + tuple(raw_ids))
        else:
            messages, raw_ids = _read_surface(session, surface)
            history = _History(surface, tuple(messages), tuple(raw_ids))
        self._history = history
        return history.messages, history.raw_ids

    def _key(self, session: Session) -> tuple[tuple[int, ...], Header | None]:
        return session.surface, session.request_header()

    def _limit(self, header: Header | None) -> int | None:
        if self.config.context_limit is not None:
            return self.config.context_limit
        if header is None or self._catalog is None:
            return None
        return self._catalog(header.envelope.provider, header.envelope.model).context_window

    def _settle_nudge(self, session: Session) -> None:
        """Log the nudge that left the view; a rewrite note unless a compression followed it."""
        shown = self._shown
        if shown is None:
            return
        self._shown = None
        followed = any(e.rewrite_kind is not None for e in session.since(shown.num_events))
        info: dict[str, Any] = {"rewrite": "nudge"} if not followed else {}
        session.append(
            "compaction/nudge",
            engine=self.name,
            tier=shown.nudge.tier,
            reason=shown.nudge.reason,
            ranges=shown.nudge.ranges,
            token_count=shown.nudge.token_count,
            is_followed=followed,
            **info,
        )

    def _run_turn(self, session: Session) -> _Turn:
        self._settle_nudge(session)
        messages, raw_ids = self._read_history(session)
        header = session.request_header()
        header_tokens = price_header(header)
        priced: list[int] = []

        def count(view: tuple[Message, ...]) -> int:
            priced.append(header_tokens + sum(price_message(m) for m in view))
            return priced[-1]

        before = self.state.truncated
        out, state, nudge = process_turn(
            messages,
            self.state,
            self.config,
            count,
            limit=self._limit(header),
            reasoning_pairs=self.preset.reasoning_pairs,
            raw_ids=raw_ids,
            memo=self._parts_memo,
        )
        self.state = state
        new = state.truncated[len(before) :]
        if new:
            session.append(
                "compaction/prune",
                engine=self.name,
                truncated_refs=new,
                shadowed_seqs=tuple(int(state.message_of(ref)[1:]) for ref in new),
                token_count=priced[0],
                rewrite="truncate",
            )
        self._turn = _Turn(self._key(session), out, nudge)
        return self._turn


class _History(msgspec.Struct, frozen=True):
    """The surface's messages and their identities (``s<seq>``), as last read."""

    surface: tuple[int, ...]
    messages: tuple[Message, ...]
    raw_ids: tuple[str, ...]


def _read_surface(session: Session, seqs: Sequence[int]) -> tuple[list[Message], list[str]]:
    messages: list[Message] = []
    raw_ids: list[str] = []
    for seq in seqs:
        message = session.message_at(seq)
        if message is not None:
            messages.append(message)
            raw_ids.append(f"s{seq}")
    return messages, raw_ids
