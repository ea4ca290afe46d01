"""Checkpoint engine: summarize a head-anchored region into one user message.

Before each step, when the metered context reaches ``threshold_ratio`` of the window:

1. optionally prune oversized tool results (see *prune order* below);
2. pick the region: from the head of the surface up to a cut that leaves a retained tail of
   at least ``retain_tokens``, moved earlier until no tool call is split from its result;
3. send a summary call that replays ``[tools, system, region]`` and appends one instruction,
   so it is a byte prefix of the last conversation request and hits the warm cache;
4. replace the region by a checkpoint user message that must be smaller than it.

Steps 2-4 repeat up to ``compaction_retries`` more times while still above the threshold.

::

    surface    [ u a t a t a t | a t a t ]         u user, a assistant, t tool result
                 region ---------  tail -----
    summary    tools system u a t a t a t  INSTRUCTION      <- warm prefix, 1 new message
    after      [ C | a t a t ]                     C checkpoint

Prune order. With ``cache_aware_prune`` off (legacy) the pruner lands over the whole surface
before the region is chosen, so the summary replays rewritten tool results and misses the
cache from the first one. With it on, the pass is planned and priced first: if it alone
clears pressure it lands everywhere; if a summary runs anyway only the retained tail is
pruned and the region stays byte-identical.

Envelope. With ``inherit_envelope`` off (legacy) the summary call names only provider and
model, so the adapter fills in its default effort and drops temperature and stop: another
request family, a cold cache. With it on, the call copies effort, temperature and stop from
the routed header when it targets exactly that provider/model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.checks import is_int, is_number, range_text, spelled
from prefixbench.simulator.errors import UserError
from prefixbench.kernel.api import CompactionError, StepContext, warn
from prefixbench.kernel.meter import Measurement, measure, price_message
from prefixbench.kernel.model import ModelInfo
from prefixbench.kernel.pairs import balanced_cuts
from prefixbench.kernel.presets import Preset
from prefixbench.kernel.prompts import CHECKPOINT_PREAMBLE, SUMMARY_CLOSE, SUMMARY_INSTRUCTION, SUMMARY_OPEN
from prefixbench.kernel.prune import PruneDecision, PrunerConfig, land_prune, plan_prune, savings
from prefixbench.kernel.records import CheckpointRecord, SummaryCallRecord
from prefixbench.kernel.session import Header, Session
from prefixbench.simulator.wire import Envelope, Message, Request, Text, ToolCall, user_text

INSTRUCTION_MESSAGE = user_text(SUMMARY_INSTRUCTION)


class CheckpointConfig(msgspec.Struct, frozen=True):
    """Checkpoint engine policy (defaults are the shipped engine's)."""

    threshold_ratio: float = 0.8
    #: Retained-tail budget as a share of the window; 0.16 when neither it nor
    #: ``retain_tokens`` is set. The two are exclusive.
    retain_ratio: float | None = None
    retain_tokens: int | None = None
    max_tokens: int = 8192
    compaction_retries: int = 1
    summarization_provider: str = ""
    summarization_model: str = ""
    pruner: PrunerConfig | None = None

    def __post_init__(self) -> None:
        if not 0 < self.threshold_ratio <= 1:
            raise UserError(f"checkpoint.threshold_ratio must be in (0, 1], got {self.threshold_ratio!r}")
        if self.retain_tokens is not None and self.retain_ratio is not None:
            raise UserError("checkpoint: set retain_ratio or retain_tokens, not both")
        if self.retain_tokens is None:
            if not 0 <= self.effective_retain_ratio < self.threshold_ratio:
                raise UserError(
                    f"checkpoint.retain_ratio must be >= 0 and below threshold_ratio {self.threshold_ratio}, "
                    f"got {self.retain_ratio!r}"
                )
        elif self.retain_tokens < 0:
            raise UserError(f"checkpoint.retain_tokens must be {range_text(0)}, got {self.retain_tokens!r}")
        if self.max_tokens <= 0:
            raise UserError(f"checkpoint.max_tokens must be positive, got {self.max_tokens!r}")
        if self.compaction_retries < 0:
            raise UserError(f"checkpoint.compaction_retries must be >= 0, got {self.compaction_retries!r}")
        if bool(self.summarization_provider) != bool(self.summarization_model):
            raise UserError("checkpoint: summarization_provider and summarization_model must be set together")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], base: CheckpointConfig | None = None) -> CheckpointConfig:
        """A config from a mapping (parsed TOML/JSON) applied over ``base`` (default: the defaults).

        ``pruner`` takes a mapping of pruner budgets, or ``"none"``/``null`` for no pruner.
        Unknown keys are a UserError naming the key.
        """
        if not isinstance(data, Mapping):
            raise UserError(f"checkpoint config must be a mapping, got {type(data).__name__}")
        known = list(cls.__struct_fields__)
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                raise UserError(f"checkpoint: unknown config key {key!r} (known: {', '.join(known)})")
            if key == "pruner":
                if value is None or value == "none":
                    value = None
                elif isinstance(value, Mapping):
                    pruner_keys = list(PrunerConfig.__struct_fields__)
                    bad = [k for k in value if k not in pruner_keys]
                    if bad:
                        raise UserError(f"checkpoint.pruner: unknown key {bad[0]!r} (known: {', '.join(pruner_keys)})")
                    value = PrunerConfig(**value)
                else:
                    raise UserError(f"checkpoint.pruner must be a mapping or 'none', got {spelled(value)}")
            values[key] = value
        if "retain_tokens" in values and "retain_ratio" not in values:
            values["retain_ratio"] = None  # the two are exclusive; naming one replaces the other
        if "retain_ratio" in values and "retain_tokens" not in values:
            values["retain_tokens"] = None
        for key in ("threshold_ratio", "retain_ratio"):
            value = values.get(key)
            if value is not None and not is_number(value):
                raise UserError(f"checkpoint.{key} must be a number, got {spelled(value)}")
        for key in ("retain_tokens", "max_tokens", "compaction_retries"):
            value = values.get(key)
            if value is not None and not is_int(value):
                raise UserError(f"checkpoint.{key} must be an integer, got {spelled(value)}")
        for key in ("summarization_provider", "summarization_model"):
            value = values.get(key)
            if value is not None and not isinstance(value, str):
                raise UserError(f"checkpoint.{key} must be a string, got {value!r:.60}")
        return replace(base or cls(), **values)

    @property
    def effective_retain_ratio(self) -> float:
        """The retain ratio in force (0.16 unless set)."""
        return 0.16 if self.retain_ratio is None else self.retain_ratio

    def budgets(self, window: int) -> tuple[int, int]:
        """``(threshold_tokens, retain_tokens)`` for a context window."""
        threshold = int(window * self.threshold_ratio)
        if self.retain_tokens is not None:
            retain = self.retain_tokens
            if retain >= threshold:
                raise UserError(
                    f"checkpoint.retain_tokens {retain} must be below the threshold "
                    f"({threshold} tokens = {self.threshold_ratio} x {window} window)"
                )
        else:
            retain = int(window * self.effective_retain_ratio)
        return threshold, retain


class Region(msgspec.Struct, frozen=True):
    """A head-anchored span of the surface: positions ``0..count-1``."""

    start: int
    end: int
    count: int


def select_compactable_range(session: Session, measurement: Measurement, retain_tokens: int) -> Region | None:
    """The head region whose cut leaves a tail of >= ``retain_tokens``, widened to a balanced cut."""
    surface = session.surface
    if tuple(node.seq for node in measurement.nodes) != surface:
        raise CompactionError("measurement does not match the surface")
    if not surface:
        return None
    acc = 0
    keep = len(surface)
    for idx in range(len(surface) - 1, -1, -1):
        acc += measurement.nodes[idx].tokens
        keep = idx
        if acc >= retain_tokens:
            break
    if keep == 0:
        return None
    balanced = balanced_cuts([session.message_at(seq) for seq in surface])
    while keep > 0 and not balanced[keep]:
        keep -= 1
    if keep == 0:
        return None
    return Region(surface[0], surface[keep - 1], keep)


def summary_envelope(header: Header, target: tuple[str, str], inherit: bool) -> Envelope:
    """The envelope the summary call names (before adapter defaults)."""
    routed = header.envelope
    if not inherit or (routed.provider, routed.model) != target:
        return Envelope(*target)
    return Envelope(target[0], target[1], routed.reasoning_effort, routed.temperature, routed.stop)


def decide_prune(
    session: Session, measurement: Measurement, plan: tuple, threshold_tokens: int, retain_tokens: int
) -> PruneDecision:
    """Cache-aware prune order: none, prune everywhere, or prune only the retained tail."""
    if not plan:
        return PruneDecision("none")
    projected = measurement.project(savings(plan))
    if projected.total_tokens < threshold_tokens:
        return PruneDecision("prune-only")
    # Select on projected prices so the tail matches what the summary keeps after the pass.
    region = select_compactable_range(session, projected, retain_tokens)
    tail_start = 0 if region is None else region.count
    return PruneDecision("tail-only", frozenset(session.surface[tail_start:]))


class CheckpointEngine:
    """Head-anchored checkpoint summaries with an optional model-free pruner."""

    name = "checkpoint"

    def __init__(self, config: CheckpointConfig, preset: Preset) -> None:
        self.config = config
        self.preset = preset

    def view(self, session: Session) -> tuple[Message, ...]:
        """The surface as is."""
        return session.derive_messages()

    def run_tool(self, session: Session, call: ToolCall) -> Message | None:
        """The checkpoint engine owns no tools."""
        return None

    def before_step(self, ctx: StepContext) -> None:
        """The pressure trigger: prune and/or summarize when over the threshold."""
        session = ctx.session
        header = session.request_header()
        if header is None:
            return
        target = self._target(header)
        info = ctx.catalog(*target)
        threshold, retain = self.config.budgets(info.context_window)
        m = measure(session)
        if m.total_tokens < threshold:
            return
        if self.config.pruner is not None:
            m = self._prune(session, m, threshold, retain)
            if m.total_tokens < threshold:
                return
        for _ in range(self.config.compaction_retries + 1):
            region = select_compactable_range(session, m, retain)
            if region is None:
                return
            try:
                self.compact_region(ctx, header, target, info, region, m)
            except CompactionError as exc:
                warn(session, f"compaction failed: {exc}")
                return
            m = measure(session)
            if m.total_tokens < threshold:
                return
        warn(session, f"still above threshold after {self.config.compaction_retries + 1} attempts")

    def _target(self, header: Header) -> tuple[str, str]:
        if self.config.summarization_provider:
            return (self.config.summarization_provider, self.config.summarization_model)
        return (header.envelope.provider, header.envelope.model)

    def _prune(self, session: Session, m: Measurement, threshold: int, retain: int) -> Measurement:
        assert self.config.pruner is not None
        plan = plan_prune(session, self.config.pruner)
        if not self.preset.cache_aware_prune:
            land_prune(session, plan)
            return measure(session) if plan else m
        decision = decide_prune(session, m, plan, threshold, retain)
        match decision.kind:
            case "none":
                return m
            case "prune-only":
                land_prune(session, plan)
            case "tail-only":
                land_prune(session, plan, include=decision.tail.__contains__)
        return measure(session)

    def compact_region(
        self,
        ctx: StepContext,
        header: Header,
        target: tuple[str, str],
        info: ModelInfo,
        region: Region,
        prepared: Measurement,
    ) -> None:
        """One summary transaction: summary call, then the checkpoint replaces the region."""
        session = ctx.session
        compaction_id = f"c{sum(1 for e in session.events if e.kind == 'compaction/start')}"
        session.append("compaction/start", compaction_id=compaction_id)
        try:
            surface = session.surface
            shadowed = surface[: region.count]
            shadowed_tokens = sum(node.tokens for node in prepared.nodes[: region.count])
            replayed = tuple(m for m in (session.message_at(seq) for seq in shadowed) if m is not None)
            named = summary_envelope(header, target, self.preset.inherit_envelope)
            request = Request(
                info.wire_envelope(named),
                (*replayed, INSTRUCTION_MESSAGE),
                header.system,
                header.tools,
                self.config.max_tokens,
                "compaction",
            )
            reply = ctx.client(request)
            if reply.error is not None:
                raise CompactionError(f"summary call failed: {reply.error}")
            summary = tuple(Text(b.text) for b in reply.blocks if isinstance(b, Text) and b.text.strip())
            if not summary:
                raise CompactionError("summary call returned no text")
            checkpoint = Message(
                "user",
                (Text(CHECKPOINT_PREAMBLE + "\n\n" + SUMMARY_OPEN), *summary, Text(SUMMARY_CLOSE)),
            )
            if price_message(checkpoint) >= shadowed_tokens:
                raise CompactionError(
                    f"checkpoint ({price_message(checkpoint)} tokens) is not smaller than the region ({shadowed_tokens})"
                )
            if session.surface != surface:
                raise CompactionError("surface changed during the summary call")
            summary_event = session.append(
                "compaction/summary",
                record=SummaryCallRecord(
                    compaction_id=compaction_id,
                    provider=target[0],
                    model=target[1],
                    reasoning_effort=named.reasoning_effort,
                    max_tokens=self.config.max_tokens,
                    shadowed_seqs=shadowed,
                    shadowed_token_count=shadowed_tokens,
                ),
            )
            session.replace(
                region.start,
                region.end,
                "user/message",
                checkpoint,
                source_seqs=(region.start, summary_event.seq, *shadowed),
                rewrite="checkpoint",
                record=CheckpointRecord(compaction_id=compaction_id, engine="checkpoint"),
            )
        except CompactionError as exc:
            session.append("compaction/end", compaction_id=compaction_id, error=str(exc))
            raise
        session.append("compaction/end", compaction_id=compaction_id)
