"""User-tail engine: Codex-shaped checkpoints that keep a summary and user messages only (seed 003).

Modelled on PI-Desktop (seed 003). Before each step, when the estimated context reaches
``hardLimit`` (3.1, from the model's window and output cap), everything since the last
boundary is summarized and replaced by a checkpoint::

    before    [ C0 | u a t a t a t u a t a t ]          C0 an earlier checkpoint
    summary   system + "<conversation> u a t ... </conversation> <previous-summary> C0 ..."
    after     [ C1 ]  rendered as  [ summary, r r r, u ]
                                             ^ retained thinking turns (DeepSeek only)
                                                    ^ user tail

* The summary call serializes the conversation as text with no tools (pi's ``compact()``), so
  unlike the checkpoint engine it reuses no cached prefix: this engine pays the whole history
  uncached once per fold.
* Tail (ADR 0136, ``tail_rule="task-boundary"``): compacting mid-turn (``active_turn``) keeps
  only the latest user message, truncated to ``min(20_000, hardLimit/2)`` tokens; compacting
  before a new prompt (``completed_turn``) keeps none. ``tail_rule="codex"`` is the older ADR
  0064 tail: user messages newest first within that budget, then chronological.
* DeepSeek bindings (ADR 0256): the checkpoint stores the newest 3 thinking turns (thinking and
  text, 4,000 chars each) and replays them as text-only assistant rows between the summary and
  the user tail; every request backfills and normalizes the reasoning field
  (:mod:`prefixbench.kernel.reasoning`). Switches: ``retained_reasoning`` off = no retained
  turns and ``""`` backfill even for relays; ``normalize_reasoning`` off = before D677.
* If the summary input would not fit (3.2 summary-input guard) or the call fails, a
  deterministic ``retained_tail`` checkpoint is landed instead: the previous summary, capped,
  and a smaller user tail.

The checkpoint is one surface replace (``rewrite="checkpoint"``) whose ``info`` holds the
summary, the retained turns and the user tail; :meth:`UserTailEngine.view` expands it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal, assert_never

import msgspec

from prefixbench.simulator.checks import is_positive_int, spelled
from prefixbench.simulator.errors import UserError
from prefixbench.kernel.api import StepContext, warn
from prefixbench.kernel.meter import BLOCK_OVERHEAD, CHARS_PER_TOKEN, ROLE_OVERHEAD, price_header, price_message
from prefixbench.kernel.model import ModelInfo
from prefixbench.kernel.presets import Preset
from prefixbench.kernel.reasoning import (
    backfill,
    backfill_value,
    real_reasoning,
    retain_turns,
    retained_rows,
)
from prefixbench.kernel.records import CheckpointRecord, RetainedTurn, SummaryCallRecord, TailMode
from prefixbench.kernel.session import Event, Header, Session
from prefixbench.simulator.wire import REASONING_FIELDS, Message, Reasoning, Request, Text, ToolCall, ToolResult, user_text

Binding = Literal["deepseek-official", "deepseek-relay", "other"]
BINDINGS: tuple[str, ...] = ("deepseek-official", "deepseek-relay", "other")
TailRule = Literal["task-boundary", "codex"]
TAIL_RULES: tuple[str, ...] = ("task-boundary", "codex")
RowKind = Literal["summary", "retained-reasoning", "retained-user", "live"]

SUMMARY_SYSTEM = (
    "You condense coding-agent sessions into handoff notes. Read the transcript you are given "
    "and answer with the notes only."
)
SUMMARY_PROMPT = """\
The transcript above, inside <conversation> tags, is the part of a coding session that no \
longer fits the context window. If a <previous-summary> is given, it covers what came before \
the transcript: merge it in, keeping what still holds.

Write the handoff notes under these headings: Goal; Constraints and preferences; Done; In \
progress; Blocked; Key decisions; Next steps; Critical context (exact paths, commands, \
identifiers and error text). Be brief and factual; copy exact strings exactly."""
CHECKPOINT_PREFACE = (
    "Earlier turns of this session were condensed to stay within the context window. "
    "The notes below replace them; continue from them without mentioning them."
)
FALLBACK_MARKER = "[Older context was omitted to fit the context window; only the notes below were kept.]"
TRUNCATION_MARKER = "\n[... message truncated to fit the retained tail ...]"


class UserTailConfig(msgspec.Struct, frozen=True):
    """Policy of the user-tail engine (defaults are PI-Desktop's)."""

    #: Which endpoint the live model is bound to: official DeepSeek, a strict relay, or none.
    binding: Binding = "other"
    #: The reasoning field the live binding emits and reads.
    reasoning_field: str = "reasoning_content"
    #: ``task-boundary`` (ADR 0136) or ``codex`` (the ADR 0064 budgeted user tail).
    tail_rule: TailRule = "task-boundary"
    retained_turns: int = 3
    retained_chars: int = 4_000
    #: Cap of the user tail in tokens (also bounded by half of hardLimit).
    user_budget_cap: int = 20_000
    #: Summary output cap; default ``min(0.8 * headroom, model max tokens)``.
    summary_max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.binding not in BINDINGS:
            raise UserError(f"user-tail.binding must be one of {', '.join(BINDINGS)}, got {self.binding!r}")
        if self.reasoning_field not in REASONING_FIELDS:
            raise UserError(
                f"user-tail.reasoning_field must be one of {', '.join(REASONING_FIELDS)}, got {self.reasoning_field!r}"
            )
        if self.binding == "deepseek-official" and self.reasoning_field != "reasoning_content":
            raise UserError(
                f"user-tail.reasoning_field must be reasoning_content for binding deepseek-official, "
                f"got {self.reasoning_field!r}"
            )
        if self.tail_rule not in TAIL_RULES:
            raise UserError(f"user-tail.tail_rule must be one of {', '.join(TAIL_RULES)}, got {self.tail_rule!r}")
        for key, minimum in (("retained_turns", 0), ("retained_chars", 1), ("user_budget_cap", 0)):
            value = getattr(self, key)
            if not is_positive_int(value, minimum=minimum):
                raise UserError(f"user-tail.{key} must be an integer >= {minimum}, got {spelled(value)}")
        cap = self.summary_max_tokens
        if cap is not None and not is_positive_int(cap):
            raise UserError(f"user-tail.summary_max_tokens must be a positive integer, got {cap!r}")

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, object]) -> UserTailConfig:
        """Build from a config mapping (UserError on an unknown key or a bad value)."""
        if not isinstance(mapping, Mapping):
            raise UserError(f"user-tail config must be a mapping, got {type(mapping).__name__}")
        known = cls.__struct_fields__
        for key in mapping:
            if key not in known:
                raise UserError(f"unknown user-tail config key {key!r} (known: {', '.join(known)})")
        return cls(**mapping)  # type: ignore[arg-type]

    @property
    def is_deepseek(self) -> bool:
        """Whether the binding is a DeepSeek-compatible Completions endpoint."""
        return self.binding != "other"


class Budget(msgspec.Struct, frozen=True):
    """PI-Desktop's budgets for one model (seed 003)."""

    window: int
    headroom: int
    hard_limit: int
    user_budget: int
    #: The summary call is skipped when the history reaches this many tokens.
    summary_guard: int
    summary_max_tokens: int
    fallback_summary_chars: int
    fallback_user_budget: int


def plan_budget(info: ModelInfo, config: UserTailConfig) -> Budget:
    """The budgets for a model's window and output cap."""
    window, max_tokens = info.context_window, info.default_max_tokens
    out_budget = min(max_tokens, window // 4)
    reserve_floor = min(16_384, window // 2)
    headroom = min(window - 1, max(reserve_floor, out_budget, math.ceil(0.05 * window)))
    hard_limit = window - headroom
    summary_cap = min(int(0.8 * headroom), max_tokens)
    user_budget = min(config.user_budget_cap, hard_limit // 2)
    return Budget(
        window=window,
        headroom=headroom,
        hard_limit=hard_limit,
        user_budget=user_budget,
        summary_guard=window - summary_cap - 2_048,
        summary_max_tokens=config.summary_max_tokens or summary_cap,
        fallback_summary_chars=max(256, min(12_000, int(0.75 * hard_limit))),
        fallback_user_budget=min(user_budget, hard_limit // 4),
    )


class Row(msgspec.Struct, frozen=True):
    """One message of the rebuilt context and where it comes from."""

    seq: int
    kind: RowKind
    message: Message


def is_checkpoint(event: Event) -> bool:
    """Whether a surface event is a user-tail checkpoint."""
    return isinstance(event.record, CheckpointRecord) and event.record.engine == "user-tail"


def checkpoint_record(event: Event) -> CheckpointRecord:
    """The record of a user-tail checkpoint event (a kernel bug when it has none)."""
    record = event.record
    if not isinstance(record, CheckpointRecord):
        raise TypeError(f"event {event.seq} is not a checkpoint")
    return record


def truncate_message(message: Message, budget_tokens: int) -> Message | None:
    """A user message cut to ``budget_tokens`` with a marker (None when not even the marker fits)."""
    if price_message(message) <= budget_tokens:
        return message
    room = budget_tokens - ROLE_OVERHEAD - BLOCK_OVERHEAD - math.ceil(len(TRUNCATION_MARKER) / CHARS_PER_TOKEN)
    if room <= 0:
        return None
    return Message(message.role, (Text(message.text()[: room * CHARS_PER_TOKEN] + TRUNCATION_MARKER),))


def select_user_tail(users: Sequence[Message], budget_tokens: int) -> tuple[Message, ...]:
    """ADR 0064: user messages newest first up to the budget, the crossing one truncated, chronological."""
    kept: list[Message] = []
    left = budget_tokens
    for message in reversed(users):
        if left <= 0:
            break
        cost = price_message(message)
        if cost <= left:
            kept.append(message)
            left -= cost
            continue
        cut = truncate_message(message, left)
        if cut is not None:
            kept.append(cut)
        break
    return tuple(reversed(kept))


def serialize_conversation(messages: Sequence[Message]) -> str:
    """The transcript as plain text, the way pi hands it to the summarizer (real thinking only)."""
    lines: list[str] = []
    for message in messages:
        if message.role == "assistant":
            thinking = real_reasoning(message)
            if thinking:
                lines.append(f"[assistant thinking]: {thinking}")
        for block in message.blocks:
            match block:
                case Text(text=text):
                    lines.append(f"[{message.role}]: {text}")
                case Reasoning():
                    pass  # written above, once per row, without placeholders
                case ToolCall(name=name, arguments=arguments):
                    lines.append(f"[{message.role} tool call]: {name}({arguments})")
                case ToolResult(call_id=call_id, content=content):
                    lines.append(f"[tool result {call_id}]: " + "".join(item.text for item in content))
                case _:
                    assert_never(block)
    return "\n\n".join(lines)


class UserTailEngine:
    """Summary plus user-only tail, with DeepSeek reasoning retention and backfill."""

    name = "user-tail"

    def __init__(self, config: UserTailConfig, preset: Preset) -> None:
        self.config = config
        self.preset = preset

    # --- the rebuilt context ------------------------------------------------------------

    def rows(self, session: Session) -> tuple[Row, ...]:
        """The context as rows, checkpoints expanded, before any reasoning backfill."""
        out: list[Row] = []
        for seq in session.surface:
            event = session.event(seq)
            if not is_checkpoint(event):
                message = session.message_at(seq)
                if message is not None:
                    out.append(Row(seq, "live", message))
                continue
            assert event.message is not None
            out.append(Row(seq, "summary", event.message))
            record = checkpoint_record(event)
            if self.config.is_deepseek:
                out.extend(Row(seq, "retained-reasoning", row) for row in retained_rows(record.retained_reasoning))
            out.extend(Row(seq, "retained-user", m) for m in record.retained_users)
        return tuple(out)

    def finish(self, messages: Sequence[Message]) -> tuple[Message, ...]:
        """What the binding's client sends for these rows (backfill and field normalization)."""
        if not self.config.is_deepseek:
            return tuple(messages)
        return backfill(
            messages,
            fill=backfill_value(self.config.binding, self.preset.retained_reasoning),
            default_field=self.config.reasoning_field,
            normalize=self.preset.normalize_reasoning,
        )

    def view(self, session: Session) -> tuple[Message, ...]:
        """The rebuilt context: summary, retained thinking, user tail, live rows; reasoning backfilled."""
        return self.finish([row.message for row in self.rows(session)])

    def run_tool(self, session: Session, call: ToolCall) -> Message | None:
        """This engine owns no tools (the model-called ``new_context`` is not modelled)."""
        return None

    # --- the trigger --------------------------------------------------------------------

    def before_step(self, ctx: StepContext) -> None:
        """Compact when the rebuilt context reaches hardLimit."""
        session = ctx.session
        header = session.request_header()
        if header is None or not session.surface:
            return
        info = ctx.catalog(header.envelope.provider, header.envelope.model)
        budget = plan_budget(info, self.config)
        view = self.view(session)
        tokens = price_header(header) + sum(price_message(m) for m in view)
        if tokens < budget.hard_limit:
            return
        last = session.event(session.surface[-1])
        mode: TailMode = "completed_turn" if last.kind == "user/message" and not is_checkpoint(last) else "active_turn"
        region = session.surface[:-1] if mode == "completed_turn" else session.surface
        if not region or all(is_checkpoint(session.event(seq)) for seq in region):
            warn(session, f"context at {tokens} tokens >= hardLimit {budget.hard_limit} with nothing to compact")
            return
        self.compact(ctx, header, info, budget, region, mode)
        after = price_header(header) + sum(price_message(m) for m in self.view(session))
        if after >= budget.hard_limit:
            warn(session, f"context still at {after} tokens >= hardLimit {budget.hard_limit} after compaction")

    # --- one checkpoint -----------------------------------------------------------------

    def compact(
        self, ctx: StepContext, header: Header, info: ModelInfo, budget: Budget, region: tuple[int, ...], mode: TailMode
    ) -> None:
        """Summarize ``region`` (a surface span from the head) and land the checkpoint in its place."""
        session = ctx.session
        compaction_id = f"c{sum(1 for e in session.events if e.kind == 'compaction/start')}"
        session.append("compaction/start", compaction_id=compaction_id, tail_mode=mode)
        in_region = set(region)
        rows = [row for row in self.rows(session) if row.seq in in_region]
        previous = "\n\n".join(str(checkpoint_record(session.event(row.seq)).summary) for row in rows if row.kind == "summary")
        history = [row.message for row in rows if row.kind != "summary"]
        history_tokens = sum(price_message(m) for m in history) + (math.ceil(len(previous) / CHARS_PER_TOKEN))
        summary: str | None = None
        failure = ""
        if history_tokens >= budget.summary_guard:
            failure = f"summary input {history_tokens} tokens >= guard {budget.summary_guard}"
        else:
            summary, failure = self._summarize(ctx, header, info, budget, history, previous)
        kind = "summary" if summary is not None else "retained_tail"
        if summary is None:
            warn(session, f"summary skipped ({failure}); landing a retained_tail checkpoint")
            summary = fallback_summary(previous, budget.fallback_summary_chars)
            user_budget = budget.fallback_user_budget
        else:
            user_budget = budget.user_budget
        users = [row.message for row in rows if row.kind in ("retained-user", "live") and row.message.role == "user"]
        tail = self._user_tail(users, user_budget, mode)
        retained: tuple[RetainedTurn, ...] = ()
        if self.config.is_deepseek and self.preset.retained_reasoning and self.config.retained_turns:
            retained = retain_turns(history, self.config.retained_turns, self.config.retained_chars)
        message = user_text(f"{CHECKPOINT_PREFACE}\n\n<summary>\n{summary}\n</summary>")
        summary_event = session.append(
            "compaction/summary",
            record=SummaryCallRecord(
                compaction_id=compaction_id,
                provider=header.envelope.provider,
                model=header.envelope.model,
                reasoning_effort=info.wire_envelope(header.envelope).reasoning_effort,
                max_tokens=budget.summary_max_tokens,
                shadowed_seqs=region,
                shadowed_token_count=sum(price_message(row.message) for row in rows),
            ),
            mode=kind,
        )
        session.replace(
            region[0],
            region[-1],
            "user/message",
            message,
            source_seqs=(summary_event.seq, *region),
            rewrite="checkpoint",
            record=CheckpointRecord(
                compaction_id=compaction_id,
                engine="user-tail",
                summary=summary,
                retained_users=tail,
                retained_reasoning=retained,
                tail_mode=mode,
            ),
            mode=kind,
        )
        session.append("compaction/end", compaction_id=compaction_id)

    def _summarize(
        self, ctx: StepContext, header: Header, info: ModelInfo, budget: Budget, history: list[Message], previous: str
    ) -> tuple[str | None, str]:
        prompt = f"<conversation>\n{serialize_conversation(history)}\n</conversation>\n\n"
        if previous:
            prompt += f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
        request = Request(
            info.wire_envelope(header.envelope),
            (user_text(prompt + SUMMARY_PROMPT),),
            SUMMARY_SYSTEM,
            (),
            budget.summary_max_tokens,
            "compaction",
        )
        reply = ctx.client(request)
        if reply.error is not None:
            return None, f"summary call failed: {reply.error}"
        text = reply.text().strip()
        if not text:
            return None, "summary call returned no text"
        return text, ""

    def _user_tail(self, users: list[Message], budget_tokens: int, mode: TailMode) -> tuple[Message, ...]:
        match self.config.tail_rule:
            case "codex":
                return select_user_tail(users, budget_tokens)
            case "task-boundary":
                if mode == "completed_turn" or not users:
                    return ()
                latest = truncate_message(users[-1], budget_tokens)
                return () if latest is None else (latest,)
            case _:
                assert_never(self.config.tail_rule)


def fallback_summary(previous: str, max_chars: int) -> str:
    """The deterministic retained_tail summary: a marker and the previous summary, capped.

    A previous fallback already starts with the marker; it is not stacked again.
    """
    if previous.startswith(FALLBACK_MARKER):
        previous = previous[len(FALLBACK_MARKER) :].lstrip("\n")
    text = FALLBACK_MARKER if not previous else f"{FALLBACK_MARKER}\n\n{previous}"
    return text[:max_chars]
