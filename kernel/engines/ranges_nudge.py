"""When to ask the model to compress, what to propose, and the emergency valve.

Recommendation (pipeline step 6). The protected zone is the last ``preserve_recent_messages``
visible parts, the smallest tail reaching ``preserve_recent_tokens`` and the last user
message, closed over pairs so it never starts in the middle of one::

    view     u1 R T C t  R T C t  u2 R T C t
    zone                          └─────────┘   (last user message and after)
    ranges   └───────────────────┘              contiguous, outside the zone, >= 5,000 chars

Decision (step 7 of seed 002's turn). ``G`` is the growth a tier-1 nudge waits for, ``floor``
the growth below which no growth nudge fires. Pressure (usage >= 75%) nudges the tier with
the most pending tokens whenever the context grew since the last nudge; emergency (>= 95%)
always does. The nudge itself is text the engine appends to the view for one request only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeAlias

import msgspec

from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.ranges_state import (
    CompressionState,
    NudgeState,
    count_tokens,
    is_message_ref,
    part_chars,
    part_tokens,
    ref_number,
)
from prefixbench.kernel.engines.ranges_view import TRUNCATE_KEEP_CHARS, summary_text, truncate_result
from prefixbench.kernel.pairs import Part, pair_closure, tool_names
from prefixbench.simulator.wire import ToolResult

NudgeReason: TypeAlias = Literal["growth", "pressure", "emergency"]

#: First characters of every nudge message: the scripted model keys on it.
NUDGE_MARKER = "[context-nudge]"
#: A run is split at a user message once it holds this many parts.
SPLIT_AT_USER_AFTER = 3
#: Emergency truncation only considers tool outputs of at least this many tokens.
TRUNCATE_MIN_TOKENS = 1_000
#: Emergency truncation stops once the context is at this share of the truncate threshold.
TRUNCATE_TARGET = 0.9


class RecommendedRange(msgspec.Struct, frozen=True):
    """A compressible span of the view, by ref, with its size."""

    start_ref: str
    end_ref: str
    num_parts: int
    chars: int
    tokens: int


class Nudge(msgspec.Struct, frozen=True):
    """A decision to ask the model to compress, with the ranges it should target."""

    tier: int
    reason: NudgeReason
    #: ``(startRef, endRef)`` oldest first: part refs for tier 1, block ids for tiers 2 and 3.
    ranges: tuple[tuple[str, str], ...]
    token_count: int
    limit: int
    pending_tokens: int

    def text(self) -> str:
        """The transient user message that carries the nudge."""
        pct = self.token_count * 100 // self.limit
        if self.tier == 1:
            ask = "Replace older history with your own summary using the compress tool."
        else:
            ask = (
                f"Distill the tier-{self.tier - 1} summaries into one tier-{self.tier} summary "
                "using the compress tool with block ids."
            )
        lines = [
            f"{NUDGE_MARKER} Context is at {pct}% of the {self.limit:,}-token window "
            f"({self.token_count:,} tokens, {self.reason}). {ask} "
            f"About {self.pending_tokens:,} tokens can be compressed. Recommended ranges, oldest first:",
            *(f"range {start} {end}" for start, end in self.ranges),
        ]
        return "\n".join(lines)


def protected_tool_indices(parts: Sequence[Part], config: RangesConfig, *, reasoning_pairs: bool) -> frozenset[int]:
    """Parts of protected tools' calls and results, closed over pairs."""
    if not config.protected_tools:
        return frozenset()
    names = tool_names(parts)
    protected = frozenset(config.protected_tools)
    seeds = [idx for idx, p in enumerate(parts) if p.call_id is not None and names.get(p.call_id) in protected]
    return pair_closure(seeds, parts, reasoning_pairs=reasoning_pairs)


def protected_zone(view: Sequence[Part], config: RangesConfig, *, reasoning_pairs: bool) -> frozenset[int]:
    """Indices of the view's soft-protected recent parts, closed over pairs.

    Tool pairs are always closed over (acp-kernel's tool-pair guarantee); reasoning pairs
    only with the fix, so the legacy zone can start between reasoning and its reply.
    """
    message_idx = [idx for idx, p in enumerate(view) if is_message_ref(p.ref)]
    zone: set[int] = set()
    if config.preserve_recent_messages > 0:
        zone.update(message_idx[-config.preserve_recent_messages :])
        last_user = next((idx for idx in reversed(message_idx) if view[idx].role == "user"), None)
        if last_user is not None:
            zone.update(idx for idx in message_idx if view[idx].group == view[last_user].group)
    if config.preserve_recent_tokens > 0:
        acc = 0
        for idx in reversed(message_idx):
            zone.add(idx)
            acc += part_tokens(view[idx])
            if acc >= config.preserve_recent_tokens:
                break
    return pair_closure(zone, view, reasoning_pairs=reasoning_pairs)


def recommend_ranges(
    view: Sequence[Part], state: CompressionState, config: RangesConfig, *, reasoning_pairs: bool
) -> tuple[RecommendedRange, ...]:
    """Compressible ranges of the view, oldest first, merged into batches of >= ``min_compress_range`` chars."""
    covering = state.covering()
    blocked = protected_zone(view, config, reasoning_pairs=reasoning_pairs) | protected_tool_indices(
        view, config, reasoning_pairs=reasoning_pairs
    )
    runs: list[list[Part]] = []
    run: list[Part] = []
    for idx, part in enumerate(view):
        eligible = is_message_ref(part.ref) and idx not in blocked and part.ref not in covering
        if not eligible:
            if run:
                runs.append(run)
                run = []
            continue
        if run and (
            ref_number(part.ref) != ref_number(run[-1].ref) + 1
            or (part.role == "user" and len(run) >= SPLIT_AT_USER_AFTER)
        ):
            runs.append(run)
            run = []
        run.append(part)
    if run:
        runs.append(run)
    batches: list[RecommendedRange] = []
    pending: RecommendedRange | None = None
    for members in runs:
        current = RecommendedRange(
            members[0].ref,
            members[-1].ref,
            len(members),
            sum(part_chars(p) for p in members),
            sum(part_tokens(p) for p in members),
        )
        if pending is not None:
            current = RecommendedRange(
                pending.start_ref,
                current.end_ref,
                pending.num_parts + current.num_parts,
                pending.chars + current.chars,
                pending.tokens + current.tokens,
            )
        if current.chars >= config.min_compress_range:
            batches.append(current)
            pending = None
        else:
            pending = current
    if pending is not None:
        batches.append(pending)
    return tuple(batches)


def pending_by_tier(
    ranges: Sequence[RecommendedRange], state: CompressionState, config: RangesConfig
) -> dict[int, int]:
    """Tokens each tier could compress now: T1 from ranges, T2/T3 from active summaries."""
    pending = {1: sum(r.tokens for r in ranges if r.chars >= config.min_compress_range), 2: 0, 3: 0}
    if config.tiers_enabled:
        for tier, trigger in ((2, config.tier2_trigger), (3, config.tier3_trigger)):
            below = [b for b in state.active_blocks if b.tier == tier - 1]
            if len(below) >= trigger:
                pending[tier] = sum(count_tokens(summary_text(b)) for b in below)
    return pending


def nudge_ranges(
    tier: int, ranges: Sequence[RecommendedRange], state: CompressionState, config: RangesConfig
) -> tuple[tuple[str, str], ...]:
    """The ranges a nudge of ``tier`` proposes, oldest first."""
    if tier == 1:
        return tuple((r.start_ref, r.end_ref) for r in ranges if r.chars >= config.min_compress_range)
    # Oldest first by position in the history (refs grow with it), not by creation order.
    below = sorted(
        (b for b in state.active_blocks if b.tier == tier - 1), key=lambda b: ref_number(b.effective_refs[0])
    )
    return ((below[0].block_id, below[-1].block_id),) if below else ()


def decide_nudge(
    token_count: int,
    limit: int,
    ranges: Sequence[RecommendedRange],
    state: CompressionState,
    config: RangesConfig,
) -> tuple[Nudge | None, NudgeState]:
    """Whether to nudge this turn (seed 002), and the stamped baselines."""
    growth_unit = config.growth_unit(limit)
    gate = config.growth_gate(limit)
    baselines = state.nudge
    if baselines.last_per_message_tokens is None:
        baselines = NudgeState(token_count, baselines.last_shown_tokens, baselines.last_shown_by_tier)
    reference = baselines.last_shown_tokens or baselines.last_per_message_tokens or token_count
    if token_count < reference - growth_unit:
        # The context shrank by more than G (compressed elsewhere): measure from here.
        baselines, reference = NudgeState(token_count), token_count
    growth = token_count - reference
    pending = pending_by_tier(ranges, state, config)
    usage = token_count / limit
    tier: int | None = None
    reason: NudgeReason = "growth"
    # Ties go to the lower tier: compress raw history before distilling summaries.
    richest = max((t for t in (1, 2, 3) if pending[t] > 0), key=lambda t: (pending[t], -t), default=None)
    if usage >= config.emergency_threshold_pct:
        tier, reason = richest, "emergency"
    elif usage >= config.nudge_max_context_pct:
        if config.nudge_force == "strong" or baselines.last_shown_tokens is None or growth > 0:
            tier, reason = richest, "pressure"
    elif growth >= gate:

        def cadence_ok(t: int) -> bool:
            shown = baselines.shown_for(t)
            return shown is None or token_count - shown >= gate

        threshold = config.tier2_growth_multiplier * growth_unit
        if pending[1] >= growth_unit:
            tier = 1
        elif pending[2] >= threshold and pending[2] > pending[1] and cadence_ok(2):
            tier = 2
        elif pending[3] >= threshold and pending[3] > pending[2] and pending[3] > pending[1] and cadence_ok(3):
            tier = 3
    if tier is None:
        return None, baselines
    proposed = nudge_ranges(tier, ranges, state, config)
    if not proposed:
        return None, baselines
    nudge = Nudge(tier, reason, proposed, token_count, limit, pending[tier])
    return nudge, baselines.with_shown(tier, token_count)


def plan_truncation(
    view: Sequence[Part], token_count: int, limit: int, state: CompressionState, config: RangesConfig
) -> tuple[str, ...]:
    """Refs of tool outputs the emergency valve truncates this turn, largest first (§2.7).

    Only at ``truncate_threshold`` of the window; outside the last ``preserve_recent_messages``
    parts; outputs of >= 1,000 tokens not truncated before; until the context is back under
    90% of the threshold.
    """
    threshold = config.truncate_threshold * limit
    if token_count < threshold:
        return ()
    message_idx = [idx for idx, p in enumerate(view) if is_message_ref(p.ref)]
    recent = set(message_idx[-config.preserve_recent_messages :]) if config.preserve_recent_messages else set()
    done = frozenset(state.truncated)
    candidates = []
    for idx in message_idx:
        part = view[idx]
        if idx in recent or part.ref in done or not isinstance(part.block, ToolResult):
            continue
        tokens = part_tokens(part)
        if tokens < TRUNCATE_MIN_TOKENS or part_chars(part) <= 2 * TRUNCATE_KEEP_CHARS:
            continue
        candidates.append((-tokens, idx, part))
    target = TRUNCATE_TARGET * threshold
    saved = 0
    picked: list[str] = []
    for negative_tokens, _, part in sorted(candidates, key=lambda c: (c[0], c[1])):
        if token_count - saved <= target:
            break
        picked.append(part.ref)
        saved += -negative_tokens - part_tokens(truncate_result(part))
    return tuple(picked)
