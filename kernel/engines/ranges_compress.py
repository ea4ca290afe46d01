"""``apply_compression``: land the model's compress decision as new blocks (seed 002).

Per batch: resolve refs, gate on size, then per range widen to whole pairs, consume nested
blocks, keep protected and recent parts visible, validate the summary and create the block::

    parts     u1 R1 T1 C1 t1 R2 T2 C2 t2 u2 ...
    asked          [T1 ......... R2]                startRef=T1 endRef=R2
    widened     [R1 T1 C1 t1 R2 T2 C2 t2]           reasoning + tool pairs, to a fixpoint
    block b1    covers R1..t2; its summary renders where R1 was

Without reasoning pairs (legacy) only tool pairs widen: b1 would cover T1..R2 plus t1, and
the view would replay R1 alone and T2 C2 without their reasoning.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

import msgspec
from msgspec.structs import replace

from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.ranges_nudge import protected_tool_indices, protected_zone
from prefixbench.kernel.engines.ranges_state import (
    CompressionBlock,
    CompressionState,
    NudgeState,
    assign_refs,
    count_tokens,
    is_block_ref,
    is_message_ref,
    part_chars,
    part_tokens,
)
from prefixbench.kernel.engines.ranges_view import COMPRESS_TOOL_NAME, render_parts
from prefixbench.kernel.pairs import Part, widen_range
from prefixbench.simulator.wire import Message

#: Highest tier a distillation can reach.
MAX_TIER = 3


class CompressArgumentsError(ValueError):
    """The compress tool's arguments are not the documented JSON shape."""


class RangeRequest(msgspec.Struct, frozen=True):
    """One range of a compress call, as the model wrote it."""

    start_ref: str
    end_ref: str
    summary: str
    topic: str | None = None
    compress_call_id: str | None = None
    summary_max_chars: int | None = None


class CompressionResult(msgspec.Struct, frozen=True):
    """What a compress call did: the blocks made, and why any range was refused."""

    blocks: tuple[CompressionBlock, ...] = ()
    warnings: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def is_ok(self) -> bool:
        """At least one block was created."""
        return bool(self.blocks)

    def text(self) -> str:
        """The tool result the model reads."""
        lines = [
            f"compressed {b.effective_refs[0]}..{b.effective_refs[-1]} into {b.block_id} (tier {b.tier}, "
            f"{len(b.effective_refs)} parts, ~{b.compressed_tokens:,} tokens)"
            for b in self.blocks
        ]
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [f"error: {e}" for e in self.errors]
        return "\n".join(lines) if lines else "nothing compressed"


def parse_compress_arguments(arguments: str, call_id: str | None = None) -> tuple[RangeRequest, ...]:
    """Ranges from the compress tool's JSON arguments ``{"ranges": [{startRef, endRef, summary, topic?}]}``."""
    try:
        data = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise CompressArgumentsError(f"arguments are not JSON: {exc.msg}") from None
    except (ValueError, RecursionError):
        raise CompressArgumentsError("arguments are JSON nested too deep, or hold a number too long to read") from None
    items = data.get("ranges") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise CompressArgumentsError('expected {"ranges": [{"startRef", "endRef", "summary"}, ...]}')
    out = []
    for idx, item in enumerate(items):
        if not isinstance(item, dict):
            raise CompressArgumentsError(f"ranges[{idx}] is not an object")
        for key in ("startRef", "endRef", "summary"):
            if not isinstance(item.get(key), str):
                raise CompressArgumentsError(f"ranges[{idx}].{key} must be a string")
        topic = item.get("topic")
        if topic is not None and not isinstance(topic, str):
            raise CompressArgumentsError(f"ranges[{idx}].topic must be a string")
        out.append(RangeRequest(item["startRef"], item["endRef"], item["summary"], topic, call_id))
    return tuple(out)


class _Span(msgspec.Struct, frozen=True):
    """A resolved range: part indices in the full history."""

    request: RangeRequest
    start: int
    end: int
    is_block_range: bool


def _resolve(
    request: RangeRequest,
    parts: Sequence[Part],
    index: dict[str, int],
    state: CompressionState,
    covering: dict[str, CompressionBlock],
    warnings: list[str],
) -> _Span | str:
    """Boundary refs to part indices, or the reason they cannot be resolved."""

    def block_span(block: CompressionBlock) -> tuple[int, int] | None:
        positions = [index[ref] for ref in block.effective_refs if ref in index]
        return (min(positions), max(positions)) if positions else None

    edges = []
    for edge, ref in (("start", request.start_ref), ("end", request.end_ref)):
        if is_block_ref(ref):
            block = state.block(ref)
            span = block_span(block) if block is not None and block.is_active else None
            if span is None:
                return f"{edge} ref {ref} is not an active block"
        elif is_message_ref(ref) and ref in index:
            span = (index[ref], index[ref])
            if ref in covering:
                block = covering[ref]
                warnings.append(f"{ref} is already compressed; using {block.block_id}")
                span = block_span(block) or span
        else:
            return f"unknown {edge} ref {ref!r}"
        edges.append(span[0] if edge == "start" else span[1])
    start, end = edges
    if start > end:
        return f"range {request.start_ref}..{request.end_ref} ends before it starts"
    is_block_range = is_block_ref(request.start_ref) or is_block_ref(request.end_ref)
    return _Span(request, start, end, is_block_range)


def apply_compression(
    ranges: Sequence[RangeRequest],
    messages: Sequence[Message],
    state: CompressionState,
    config: RangesConfig,
    *,
    reasoning_pairs: bool = True,
    raw_ids: Sequence[str] | None = None,
) -> tuple[CompressionState, CompressionResult]:
    """Land a compress call: one block per accepted range (a refused call only records new refs).

    Args:
        messages: the full, uncompressed history (the same the engine's turn sees).
        reasoning_pairs: widen to reasoning pairs too (seed 000's fix; off = legacy).
        raw_ids: stable message identities (see :func:`assign_refs`).
    """
    parts, state = assign_refs(messages, state, raw_ids)
    index = {p.ref: idx for idx, p in enumerate(parts)}
    warnings: list[str] = []
    errors: list[str] = []
    spans = _resolve_spans(ranges, parts, index, state, config, warnings, errors)
    if spans is None:
        return state, CompressionResult((), tuple(warnings), tuple(errors))
    # Recent and protected parts, by history index: the view is what the model was shown.
    view = render_parts(parts, state, config, reasoning_pairs=reasoning_pairs)
    zone = {
        index[view[i].ref]
        for i in protected_zone(view, config, reasoning_pairs=reasoning_pairs)
        if view[i].ref in index
    }
    hard = protected_tool_indices(parts, config, reasoning_pairs=reasoning_pairs)
    taken: list[tuple[int, int]] = []
    created: list[CompressionBlock] = []
    run_id = f"r{state.num_runs + 1}"
    for span in spans:
        request = span.request
        start, end = span.start, span.end
        if not span.is_block_range:
            start, end = widen_range(
                start, end, parts, reasoning_pairs=reasoning_pairs, ignore_tools=frozenset({COMPRESS_TOOL_NAME})
            )
        if any(start <= t_end and t_start <= end for t_start, t_end in taken):
            warnings.append(f"range {request.start_ref}..{request.end_ref} overlaps an earlier range; skipped")
            continue
        outcome = _make_block(request, span.is_block_range, start, end, parts, state, config, zone, hard, run_id)
        if isinstance(outcome, str):
            errors.append(outcome)
            continue
        block, consumed, notes = outcome
        warnings.extend(notes)
        state = _with_block(state, block, consumed)
        taken.append((start, end))
        created.append(block)
    if created:
        # A successful compress resets the growth baselines, or the nudge re-fires at once.
        state = replace(state, nudge=NudgeState(), num_runs=state.num_runs + 1)
    return state, CompressionResult(tuple(created), tuple(warnings), tuple(errors))


def _resolve_spans(
    ranges: Sequence[RangeRequest],
    parts: Sequence[Part],
    index: dict[str, int],
    state: CompressionState,
    config: RangesConfig,
    warnings: list[str],
    errors: list[str],
) -> list[_Span] | None:
    """Resolve each requested range to a span; None when the call is refused as too small."""
    covering = state.covering()
    spans: list[_Span] = []
    for request in ranges:
        resolved = _resolve(request, parts, index, state, covering, warnings)
        if isinstance(resolved, str):
            errors.append(resolved)
        else:
            spans.append(resolved)
    if spans and not any(s.is_block_range for s in spans):
        chars = sum(
            part_chars(parts[idx])
            for s in spans
            for idx in range(s.start, s.end + 1)
            if parts[idx].ref not in covering
        )
        if chars < config.min_compress_range:
            errors.append(
                f"ranges hold {chars:,} characters of uncompressed history, below the "
                f"{config.min_compress_range:,} minimum; choose a larger range"
            )
            return None
    return spans


def _with_block(state: CompressionState, block: CompressionBlock, consumed: Collection[str]) -> CompressionState:
    """``state`` with ``block`` added and the blocks it consumed made inactive."""
    blocks = tuple(replace(b, is_active=False) if b.block_id in consumed else b for b in state.blocks)
    return replace(
        state,
        blocks=(*blocks, block),
        tokens_compressed=state.tokens_compressed + block.compressed_tokens,
        num_compressions=state.num_compressions + 1,
    )


def _make_block(
    request: RangeRequest,
    is_block_range: bool,
    start: int,
    end: int,
    parts: Sequence[Part],
    state: CompressionState,
    config: RangesConfig,
    zone: set[int],
    hard: frozenset[int],
    run_id: str,
) -> tuple[CompressionBlock, frozenset[str], tuple[str, ...]] | str:
    """The block one widened range makes, the ids it consumes and its warnings; or an error."""
    label = f"{request.start_ref}..{request.end_ref}"
    covering = state.covering()
    nested: dict[str, CompressionBlock] = {}
    for idx in range(start, end + 1):
        block = covering.get(parts[idx].ref)
        if block is not None:
            nested[block.block_id] = block
    if is_block_range and nested:
        min_tier = min(b.tier for b in nested.values())
        tier = min(MAX_TIER, min_tier + 1) if config.tiers_enabled else 1
        consume_up_to = min_tier
    else:
        tier, consume_up_to = 1, 1
    consumed = [b for b in nested.values() if b.tier <= consume_up_to]
    consumed_ids = frozenset(b.block_id for b in consumed)
    direct: list[int] = []
    num_recent = num_protected = 0
    for idx in range(start, end + 1):
        if parts[idx].ref in covering:
            continue
        if idx in hard:
            num_protected += 1
        elif idx in zone:
            num_recent += 1
        else:
            direct.append(idx)
    notes = []
    if num_protected:
        notes.append(f"{label}: {num_protected} protected tool part(s) stay visible")
    if num_recent:
        notes.append(f"{label}: {num_recent} recent part(s) stay visible")
    if not direct and not consumed:
        if all(parts[idx].ref in covering for idx in range(start, end + 1)):
            return f"{label} is already compressed; use block ids (bN) to merge blocks"
        return f"{label} has nothing left to compress outside the protected parts"
    summary = request.summary
    max_chars = request.summary_max_chars or config.max_summary_length
    if len(summary.strip()) < config.min_summary_length:
        return f"{label}: summary has {len(summary.strip())} characters, minimum {config.min_summary_length}"
    if len(summary) > max_chars:
        return f"{label}: summary has {len(summary)} characters, maximum {max_chars}"
    refs = {parts[idx].ref for idx in direct}
    for block in consumed:
        refs.update(block.effective_refs)
    ordered = tuple(p.ref for p in parts if p.ref in refs)
    compressed_tokens = sum(part_tokens(parts[idx]) for idx in direct) + sum(
        count_tokens(b.summary) for b in consumed
    )
    block = CompressionBlock(
        block_id=f"b{len(state.blocks) + 1}",
        run_id=run_id,
        tier=tier,
        summary=summary,
        topic=request.topic,
        direct_refs=tuple(parts[idx].ref for idx in direct),
        effective_refs=ordered,
        direct_block_ids=tuple(sorted(consumed_ids, key=lambda b: int(b[1:]))),
        compressed_tokens=compressed_tokens,
        compress_call_id=request.compress_call_id,
        start_ref=request.start_ref,
        end_ref=request.end_ref,
    )
    return block, consumed_ids, tuple(notes)
