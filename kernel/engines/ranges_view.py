"""The compressed view: what the model sees once active blocks stand in for their parts.

::

    parts    u1 R T C t  R T C t  R T        covered by b1: R T C t R T C t
    view     u1 [b1 summary]      R T        the first user message always stays

Order of the steps, each a pure function of the parts and the state:

1. drop the parts covered by an active block (but the first user message), putting the
   block's summary where its first dropped part was; apply emergency truncations;
2. hide the compress calls whose blocks are all inactive (the newest two stay);
3. defensive cleanup, in this order: tool calls with no result in view (but an in-flight
   compress call), tool results with no call in view, then, outermost, reasoning runs with
   no reply right after them. Outermost because dropping a call can orphan its reasoning.

Step 2 runs before the cleanup (acp-kernel runs it after) so that the reasoning strip sees
the final set of calls. The reasoning strip is seed 000's fix: off in the legacy preset.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from msgspec.structs import replace

from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.ranges_state import (
    CompressionBlock,
    CompressionState,
    is_message_ref,
    part_tokens,
    rebuild_messages,
)
from prefixbench.kernel.pairs import (
    Part,
    strip_orphaned_reasoning,
    strip_orphaned_tool_calls,
    strip_orphaned_tool_results,
)
from prefixbench.simulator.wire import Block, Message, Reasoning, Text, ToolCall, ToolResult

#: The tool the model calls to compress; its own calls are exempt from tool-pair widening.
COMPRESS_TOOL_NAME = "compress"
#: First line of every rendered summary.
SUMMARY_MARKER = "[Compressed conversation section]"
#: Historical compress calls whose blocks went inactive that stay visible anyway.
KEEP_HIDDEN_COMPRESS_CALLS = 2
#: Emergency truncation keeps this many characters at each end of a tool output.
TRUNCATE_KEEP_CHARS = 2_000


def summary_text(block: CompressionBlock) -> str:
    """The rendered summary: the marker, the topic if any, then the model's summary."""
    head = SUMMARY_MARKER if block.topic is None else f"{SUMMARY_MARKER} — {block.topic}"
    return f"{head}\n{block.summary}"


def summary_part(block: CompressionBlock, config: RangesConfig) -> Part:
    """The synthetic part standing in for ``block``; its ref is the block id."""
    # A group no message can have, so the summary rebuilds into a message of its own.
    number = int(block.block_id[1:])
    return Part(block.block_id, config.summary_role, Text(summary_text(block)), -number)


def truncation_marker(original_tokens: int) -> str:
    """The marker between the kept head and tail of a truncated tool output."""
    return f"\n\n...[truncated for context space] — original ~{original_tokens} tokens]...\n\n"


def truncate_result(part: Part) -> Part:
    """A tool-result part cut to its first and last 2,000 characters (unchanged if short)."""
    result = part.block
    assert isinstance(result, ToolResult)
    text = "".join(item.text for item in result.content)
    if len(text) <= 2 * TRUNCATE_KEEP_CHARS:
        return part
    kept = text[:TRUNCATE_KEEP_CHARS] + truncation_marker(part_tokens(part)) + text[-TRUNCATE_KEEP_CHARS:]
    return replace(part, block=ToolResult(result.call_id, (Text(kept),), result.is_error))


def first_user_group(parts: Sequence[Part]) -> int | None:
    """Group of the first user message (kept even when covered), or None."""
    return next((p.group for p in parts if p.role == "user"), None)


def hidden_compress_calls(parts: Sequence[Part], state: CompressionState) -> frozenset[str]:
    """Compress calls to hide: every block they made is inactive, except the newest two."""
    if not any(not b.is_active and b.compress_call_id is not None for b in state.blocks):
        return frozenset()
    made: dict[str, list[CompressionBlock]] = {}
    for block in state.blocks:
        if block.compress_call_id is not None:
            made.setdefault(block.compress_call_id, []).append(block)
    spent = [
        p.block.call_id
        for p in parts
        if isinstance(p.block, ToolCall)
        and p.block.name == COMPRESS_TOOL_NAME
        and made.get(p.block.call_id)
        and not any(b.is_active for b in made[p.block.call_id])
    ]
    return frozenset(spent[: max(0, len(spent) - KEEP_HIDDEN_COMPRESS_CALLS)])


def render_parts(
    parts: Sequence[Part], state: CompressionState, config: RangesConfig, *, reasoning_pairs: bool
) -> tuple[Part, ...]:
    """The compressed view as parts: summaries in place, truncations applied, orphans stripped."""
    covering = state.covering()
    truncated = frozenset(state.truncated)
    keep_group = first_user_group(parts)
    emitted: set[str] = set()
    view: list[Part] = []
    for part in parts:
        block = covering.get(part.ref)
        if block is None:
            view.append(truncate_result(part) if part.ref in truncated else part)
            continue
        if part.group == keep_group and part.role == "user":
            view.append(part)
        if block.block_id not in emitted:
            emitted.add(block.block_id)
            view.append(summary_part(block, config))
    hidden = hidden_compress_calls(parts, state)
    if hidden:
        view = [p for p in view if p.call_id not in hidden]
    # A compress call is answered by the engine after the view of its own step was built;
    # only that in-flight call may stay without a result. One whose result exists but was
    # compressed away is an orphan like any other.
    answered: set[str] = set()
    compress_calls: set[str] = set()
    for p in parts:
        content = p.block
        if isinstance(content, ToolResult):
            answered.add(content.call_id)
        elif isinstance(content, ToolCall) and content.name == COMPRESS_TOOL_NAME:
            compress_calls.add(content.call_id)
    in_flight = compress_calls - answered
    out = strip_orphaned_tool_calls(view, keep=lambda p: p.call_id in in_flight)
    out = strip_orphaned_tool_results(out)
    if reasoning_pairs:
        out = strip_orphaned_reasoning(out)
    return out


def render_messages(
    parts: Sequence[Part], state: CompressionState, config: RangesConfig, *, reasoning_pairs: bool
) -> tuple[Message, ...]:
    """The compressed view as wire messages."""
    return rebuild_messages(render_parts(parts, state, config, reasoning_pairs=reasoning_pairs))


def ref_tag(ref: str, tokens: int, kind: str) -> str:
    """The ``<acp>`` tag that names a part's ref in its text."""
    return f' <acp tokens="{tokens}" type="{kind}">{ref}</acp>'


def tag_parts(
    view: Sequence[Part], state: CompressionState, config: RangesConfig
) -> tuple[tuple[Part, ...], CompressionState]:
    """Write ref tags into the view per ``config.render_tags`` (render-refs, the last step).

    ``text-only`` tags text parts; ``all`` also tool calls and results. Reasoning is never
    tagged: it must replay byte for byte. Each tag's token count is frozen at the part's
    first tagged render so a part's bytes never change from one request to the next.
    """
    if config.render_tags == "none":
        return tuple(view), state
    snapshot = dict(state.token_snapshot)
    added: list[tuple[str, int]] = []
    out: list[Part] = []
    for part in view:
        if not is_message_ref(part.ref) or part.kind == "reasoning":
            out.append(part)
            continue
        if config.render_tags == "text-only" and part.kind != "text":
            out.append(part)
            continue
        tokens = snapshot.get(part.ref)
        if tokens is None:
            tokens = part_tokens(part)
            snapshot[part.ref] = tokens
            added.append((part.ref, tokens))
        tag = ref_tag(part.ref, tokens, part.kind)
        block: Block
        match part.block:
            case Text(text=text):
                block = Text(text + tag)
            case ToolCall(call_id=call_id, name=name, arguments=arguments):
                block = ToolCall(call_id, name, arguments + tag)
            case ToolResult(call_id=call_id, content=content, is_error=is_error):
                block = ToolResult(call_id, (*content, Text(tag.lstrip())), is_error)
            case Reasoning():
                block = part.block
            case _:
                assert_never(part.block)
        out.append(replace(part, block=block))
    if added:
        state = replace(state, token_snapshot=state.token_snapshot + tuple(added))
    return tuple(out), state
