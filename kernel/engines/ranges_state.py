"""State of the ``ranges`` engine, and the message <-> part conversion it works on.

Everything here is plain data passed in and out: the engine persists
:class:`CompressionState` between turns, never a module global.

Refs. Every part gets a ref ``m00001``, ``m00002``... in order of first sight, never reused.
The state keeps, per message identity in order of first sight, the ref of its first part and
its number of parts, so a part keeps its ref for the whole session. The engine names a
message ``s<event seq>``; pure callers default to its position, which is stable as long as
the history is only appended to. An identity seen again with another number of parts is a
caller bug (ValueError), not a silent ref shift.

::

    messages  [user "fix it"] [assistant R T C1] [tool r1]
    parts      m00001          m00002 m00003 m00004  m00005
    groups     0               1      1      1       2
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Literal, assert_never

import msgspec
from msgspec.structs import replace

from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.pairs import Part
from prefixbench.simulator.wire import Block, Message, Reasoning, Text, ToolCall, ToolResult

Generation = Literal["young", "old"]


def make_ref(number: int) -> str:
    """The ref of the ``number``-th part ever seen (1-based)."""
    return f"m{number:05d}"


#: ``_REFS[n] == make_ref(n)``, grown on demand: formatting every ref of every request again
#: was the engine's largest cost. A memo of pure strings, not state.
_REFS: list[str] = [""]


def _refs_through(number: int) -> list[str]:
    """The ref memo, grown to hold ``number``."""
    if number >= len(_REFS):
        _REFS.extend(make_ref(n) for n in range(len(_REFS), number + 1))
    return _REFS


def is_message_ref(ref: str) -> bool:
    """``mNNNNN``: a part ref (as opposed to a block id ``bN``)."""
    return len(ref) >= 2 and ref[0] == "m" and ref[1:].isascii() and ref[1:].isdigit()


def is_block_ref(ref: str) -> bool:
    """``bN``: a compression block id."""
    return len(ref) >= 2 and ref[0] == "b" and ref[1:].isascii() and ref[1:].isdigit()


def ref_number(ref: str) -> int:
    """The number in a ``mNNNNN`` or ``bN`` ref."""
    return int(ref[1:])


def count_tokens(text: str) -> int:
    """acp-kernel's token heuristic: one per CJK character, ``ceil(rest / 4)`` for the rest."""
    if text.isascii():
        return -(-len(text) // 4)
    cjk = sum(
        1
        for ch in text
        if "\u4e00" <= ch <= "\u9fff" or "\u3040" <= ch <= "\u30ff" or "\uac00" <= ch <= "\ud7af"
    )
    return cjk + math.ceil((len(text) - cjk) / 4)


def block_text(block: Block) -> str:
    """The text a part carries, as counted for sizes: tool calls count name and arguments."""
    match block:
        case Text(text=text) | Reasoning(text=text):
            return text
        case ToolCall(name=name, arguments=arguments):
            return name + arguments
        case ToolResult(content=content):
            return "".join(item.text for item in content)
        case _:
            assert_never(block)


@lru_cache(maxsize=65536)
def block_size(block: Block) -> tuple[int, int]:
    """``(chars, tokens)`` of a block (memoized: blocks are immutable and re-read every request)."""
    text = block_text(block)
    return len(text), count_tokens(text)


def part_chars(part: Part) -> int:
    """Characters of a part (the unit of ``min_compress_range``)."""
    return block_size(part.block)[0]


def part_tokens(part: Part) -> int:
    """Tokens of a part by the acp-kernel heuristic."""
    return block_size(part.block)[1]


class CompressionBlock(msgspec.Struct, frozen=True):
    """One compressed section: the model's summary and the parts it stands for."""

    block_id: str
    run_id: str
    tier: int
    summary: str
    topic: str | None
    #: Parts this block compressed directly (not through a consumed block), in history order.
    direct_refs: tuple[str, ...]
    #: Every part the block covers, consumed blocks' parts included, in history order.
    effective_refs: tuple[str, ...]
    #: Blocks this one consumed (they went inactive when it was created).
    direct_block_ids: tuple[str, ...]
    compressed_tokens: int
    survived_count: int = 0
    generation: Generation = "young"
    is_active: bool = True
    compress_call_id: str | None = None
    start_ref: str | None = None
    end_ref: str | None = None


class NudgeState(msgspec.Struct, frozen=True):
    """Growth baselines of the nudge decision, in context tokens."""

    #: Stamped on the first turn after a reset: where growth is measured from.
    last_per_message_tokens: int | None = None
    #: Context size when the last nudge was shown.
    last_shown_tokens: int | None = None
    #: ``(tier, tokens)``: context size when each tier was last nudged.
    last_shown_by_tier: tuple[tuple[int, int], ...] = ()

    def shown_for(self, tier: int) -> int | None:
        """Context size when ``tier`` was last nudged, or None."""
        return next((tokens for t, tokens in self.last_shown_by_tier if t == tier), None)

    def with_shown(self, tier: int, tokens: int) -> NudgeState:
        """Stamp a nudge of ``tier`` at ``tokens``."""
        by_tier = tuple(sorted({**dict(self.last_shown_by_tier), tier: tokens}.items()))
        return replace(self, last_shown_tokens=tokens, last_shown_by_tier=by_tier)


class CompressionState(msgspec.Struct, frozen=True):
    """Everything the engine remembers between turns."""

    #: Message identities in order of first sight, with the number of each one's first part
    #: ref and its number of parts (three parallel tuples: cheap to index every request).
    message_ids: tuple[str, ...] = ()
    message_refs: tuple[int, ...] = ()
    message_sizes: tuple[int, ...] = ()
    #: Refs handed out so far; the next part gets ``make_ref(num_refs + 1)``.
    num_refs: int = 0
    blocks: tuple[CompressionBlock, ...] = ()
    #: Refs of tool results the emergency valve truncated, in the order it did.
    truncated: tuple[str, ...] = ()
    #: ``(ref, tokens)`` frozen at a part's first tagged render, so its tag never churns.
    token_snapshot: tuple[tuple[str, int], ...] = ()
    nudge: NudgeState = msgspec.field(default_factory=NudgeState)
    tokens_compressed: int = 0
    num_compressions: int = 0
    num_runs: int = 0
    num_turns: int = 0

    def block(self, block_id: str) -> CompressionBlock | None:
        """The block with this id, or None."""
        if not is_block_ref(block_id):
            return None
        number = ref_number(block_id)
        if 1 <= number <= len(self.blocks):
            return self.blocks[number - 1]
        return None

    @property
    def active_blocks(self) -> tuple[CompressionBlock, ...]:
        """Blocks currently rendered as summaries, oldest first."""
        return tuple(b for b in self.blocks if b.is_active)

    def message_of(self, ref: str) -> str:
        """Identity of the message a part ref belongs to."""
        number = ref_number(ref)
        idx = bisect_right(self.message_refs, number) - 1
        if idx < 0 or number >= self.message_refs[idx] + self.message_sizes[idx]:
            raise KeyError(ref)
        return self.message_ids[idx]

    def covering(self) -> dict[str, CompressionBlock]:
        """Active block covering each covered ref (active blocks never overlap)."""
        return {ref: b for b in self.blocks if b.is_active for ref in b.effective_refs}


def initial_state() -> CompressionState:
    """The state of a session the engine has not seen yet."""
    return CompressionState()


def default_raw_ids(messages: Sequence[Message]) -> tuple[str, ...]:
    """Positional message identities, for callers whose history is append-only."""
    return tuple(str(idx) for idx in range(len(messages)))


#: Parts of one message by ``(identity, position)``: a memo the engine may keep across
#: requests because its identities name immutable log events. Results never depend on it.
PartsMemo = dict[tuple[str, int], tuple[Part, ...]]


def assign_refs(
    messages: Sequence[Message],
    state: CompressionState,
    raw_ids: Sequence[str] | None = None,
    memo: PartsMemo | None = None,
) -> tuple[tuple[Part, ...], CompressionState]:
    """Split messages into parts and give each new part the next ref (pipeline step 1).

    Args:
        raw_ids: one stable identity per message (default: its position).
        memo: parts already built for an identity at a position, when identities name
            immutable messages (the engine's event seqs); skips rebuilding them.
    Returns:
        the parts in order and the state with the new refs recorded.
    Raises:
        ValueError: ``raw_ids`` does not match ``messages``, or a known identity now names a
            message with another number of parts.
    """
    ids = default_raw_ids(messages) if raw_ids is None else tuple(raw_ids)
    if len(ids) != len(messages):
        raise ValueError(f"{len(ids)} raw ids for {len(messages)} messages")
    known = dict(zip(state.message_ids, zip(state.message_refs, state.message_sizes, strict=True), strict=True))
    num_refs = state.num_refs
    new: list[tuple[str, int, int]] = []
    parts: list[Part] = []
    for group, (raw, message) in enumerate(zip(ids, messages, strict=True)):
        size = len(message.blocks)
        entry = known.get(raw)
        if entry is None:
            entry = (num_refs + 1, size)
            num_refs += size
            known[raw] = entry
            new.append((raw, *entry))
        elif entry[1] != size:
            raise ValueError(f"message {raw!r} had {entry[1]} parts and now has {size}: its identity was reused")
        if memo is None:
            parts.extend(_message_parts(message, entry[0], group))
            continue
        built = memo.get((raw, group))
        if built is None:
            built = memo[(raw, group)] = _message_parts(message, entry[0], group)
        parts.extend(built)
    if new:
        state = replace(
            state,
            message_ids=state.message_ids + tuple(n[0] for n in new),
            message_refs=state.message_refs + tuple(n[1] for n in new),
            message_sizes=state.message_sizes + tuple(n[2] for n in new),
            num_refs=num_refs,
        )
    return tuple(parts), state


@lru_cache(maxsize=16384)
def _message_parts(message: Message, first_ref: int, group: int) -> tuple[Part, ...]:
    """The parts of one message (memoized: the same history is split again every request)."""
    refs = _refs_through(first_ref + len(message.blocks))
    return tuple(Part(refs[first_ref + k], message.role, block, group) for k, block in enumerate(message.blocks))


def rebuild_messages(parts: Iterable[Part], sources: Sequence[Message] = ()) -> tuple[Message, ...]:
    """Wire messages from parts: consecutive parts of one group form one message.

    An assistant message carries its reasoning first (a stable move: well-formed input is
    already in that order); every tool result becomes its own ``tool`` message. When
    ``sources`` (the messages the parts came from) is given, a message rebuilt unchanged is
    the source object itself, so downstream memo caches hit.
    """
    out: list[Message] = []
    run: list[Part] = []

    def flush() -> None:
        if not run:
            return
        head = run[0]
        blocks = tuple(p.block for p in run)
        if head.role == "assistant":
            blocks = tuple(b for b in blocks if isinstance(b, Reasoning)) + tuple(
                b for b in blocks if not isinstance(b, Reasoning)
            )
        source = sources[head.group] if 0 <= head.group < len(sources) else None
        if source is not None and source.role == head.role and source.blocks == blocks:
            out.append(source)
        else:
            out.append(Message(head.role, blocks))
        run.clear()

    for part in parts:
        if run and (part.group != run[0].group or part.role != run[0].role or part.role == "tool"):
            flush()
        run.append(part)
    flush()
    return tuple(out)


def sync_blocks(parts: Sequence[Part], state: CompressionState, config: RangesConfig) -> CompressionState:
    """Age the active blocks by one turn; retire blocks none of whose parts exist (step 2).

    A block consumed by another is already inactive. Survivors count turns and turn ``old``
    at ``promotion_threshold``.
    """
    present = {p.ref for p in parts}
    blocks = []
    for block in state.blocks:
        if block.is_active and not present.intersection(block.effective_refs):
            block = replace(block, is_active=False)
        elif block.is_active:
            survived = block.survived_count + 1
            generation: Generation = "old" if survived >= config.promotion_threshold else block.generation
            block = replace(block, survived_count=survived, generation=generation)
        blocks.append(block)
    return replace(state, blocks=tuple(blocks), num_turns=state.num_turns + 1)
