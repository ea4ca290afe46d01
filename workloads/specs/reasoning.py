"""Seed 003's reasoning-integrity contract, and what strict DeepSeek endpoints accept, per engine.

Each spec runs ``thinking-tools`` at a window and judges the requests the provider received,
recorded by a :class:`Recorder` in front of the profile's validator. The judges are pure
functions of a run and its recorded requests, so the suite can also feed them hand-made
violations.

::

    spec                             decision                                          fails on
    retained-reasoning-replayed      ADR 0256 d2: last 3 thinking turns kept and       legacy
                                     replayed between the summary and the user tail
    reasoning-backfill-per-binding   ADR 0256 d3: "" official, placeholder relay       legacy
    reasoning-field-normalized       D677: one field, live reasoning never replaced    pre-d677
    user-only-tail                   ADR 0136 / ADR 0256 d4: user-only tails           (guard)
    official-accepts-every-request   deepseek-official: zero 400s (ranges)             legacy
    relay-accepts-every-request      deepseek-relay: zero 400s (user-tail, ranges)     legacy
    strict-profiles-accept-guard     zero 400s where no switch causes any              (guard)
    checkpoint-keeps-reasoning       checkpoint replays reasoning byte for byte        (guard)

Every check is called as ``check(preset, window, engine)`` with ``engine`` one of the
spec's ``engines``; ``preset`` is a preset name or a :class:`~prefixbench.kernel.presets.Preset`.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.engines.user_tail import TRUNCATION_MARKER, checkpoint_record, is_checkpoint
from prefixbench.kernel.presets import Preset, get_preset
from prefixbench.kernel.reasoning import ELLIPSIS, PLACEHOLDER, RETAINED_CHARS, RETAINED_TURNS, real_reasoning
from prefixbench.kernel.session import Event, Session
from prefixbench.simulator.provider import SimulatedProvider, Validator
from prefixbench.simulator.validate import TurnKey, is_thinking, turn_key
from prefixbench.simulator.wire import Block, Message, Reasoning, Request, ToolCall, ToolResult
from prefixbench.workloads.specs.base import Spec, SpecResult, Verdict, hit_pct
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.scripted.loop import run_workload
from prefixbench.workloads.scripted.registry import validator_for
from prefixbench.workloads.scripted.thinking_tools import ThinkingToolsWorkload

#: Lower bound for a warm checkpoint summary call's hit ratio (as in seed 001's specs).
MIN_SUMMARY_HIT = 0.95


# --- recording ------------------------------------------------------------------------------


class Recorder(msgspec.Struct):
    """A validator that records every request and reply, and defers verdicts to ``inner``.

    ``requests[i]`` is the request of observation ``i`` (the provider checks every request
    once, in order).
    """

    inner: Validator | None = None
    requests: list[Request] = msgspec.field(default_factory=list)
    #: Per emitted turn (text and tool calls), the reasoning the model produced for it.
    emitted: dict[TurnKey, set[str]] = msgspec.field(default_factory=dict)

    def check(self, request: Request) -> str | None:
        """Record, then ask the inner validator."""
        self.requests.append(request)
        return None if self.inner is None else self.inner.check(request)

    def accepted(self, request: Request, reply_blocks: tuple[Block, ...]) -> None:
        """Record what the model emitted, then tell the inner validator."""
        key = turn_key(reply_blocks)
        if key is not None:
            text = "".join(b.text for b in reply_blocks if isinstance(b, Reasoning))
            self.emitted.setdefault(key, set()).add(text)
        if self.inner is not None:
            self.inner.accepted(request, reply_blocks)


def run_recorded(
    workload: ThinkingToolsWorkload, preset: str | Preset, engine: str, profile: str
) -> tuple[Run, Recorder]:
    """Run ``workload`` under ``profile`` with every request recorded."""
    resolved = preset if isinstance(preset, Preset) else get_preset(preset)
    recorder = Recorder(validator_for(workload, profile))
    provider = SimulatedProvider(validator=recorder)
    run = run_workload(workload, workload.engine(engine, resolved), provider, preset=resolved.name, profile=profile)
    return run, recorder


def _preset_name(preset: str | Preset) -> str:
    return preset.name if isinstance(preset, Preset) else preset


def _require(spec: str, engine: str, allowed: tuple[str, ...]) -> None:
    if engine not in allowed:
        raise UserError(f"spec {spec} applies to engine(s) {', '.join(allowed)}, not {engine!r}")


def _strict(request: Request) -> bool:
    """Whether a DeepSeek endpoint checks this request's reasoning (thinking mode with tools)."""
    return bool(request.tools) and is_thinking(request.envelope)


def _reasoning_texts(message: Message) -> list[str]:
    return [b.text for b in message.blocks if isinstance(b, Reasoning)]


def checkpoints(session: Session) -> list[Event]:
    """The user-tail checkpoints of a run, in order."""
    return [event for event in session.events if is_checkpoint(event)]


def first_request_after(requests: Sequence[Request], checkpoint: Event) -> tuple[int, Request] | None:
    """The first conversation request whose context starts with this checkpoint's summary."""
    for idx, request in enumerate(requests):
        if request.purpose == "conversation" and request.messages and request.messages[0] == checkpoint.message:
            return idx, request
    return None


def _region(session: Session, checkpoint: Event) -> list[Event]:
    """The surface events a checkpoint replaced (its sources minus the summary event)."""
    return [session.event(seq) for seq in checkpoint.source_seqs if session.event(seq).kind != "compaction/summary"]


# --- judges ---------------------------------------------------------------------------------


def judge_retained_reasoning(run: Run, requests: Sequence[Request], preset: str) -> SpecResult:
    """ADR 0256 d2: each checkpoint keeps min(3, thinking turns it compacted), truncated, replayed after the summary."""
    name = "retained-reasoning-replayed"
    found = checkpoints(run.session)
    if not found:
        return SpecResult(name, Verdict.VACUOUS, "no checkpoint landed, so the spec proves nothing", preset, run.window, run.engine)
    num_turns = num_truncated = 0
    for cp in found:
        record = checkpoint_record(cp)
        cid = record.compaction_id
        turns = record.retained_reasoning
        thinking_rows = 0
        for event in _region(run.session, cp):
            if is_checkpoint(event):
                thinking_rows += len(checkpoint_record(event).retained_reasoning)
            elif event.message is not None and event.message.role == "assistant" and real_reasoning(event.message):
                thinking_rows += 1
        want = min(RETAINED_TURNS, thinking_rows)
        if len(turns) != want:
            figure = f"checkpoint {cid} compacted {thinking_rows} thinking turns and kept {len(turns)}, want {want}"
            return SpecResult(name, Verdict.VIOLATED, figure, preset, run.window, run.engine)
        for turn in turns:
            for part in (turn.thinking, turn.text):
                if len(part) > RETAINED_CHARS and not (len(part) == RETAINED_CHARS + 1 and part.endswith(ELLIPSIS)):
                    figure = f"checkpoint {cid} kept {len(part):,} chars of a turn, cap {RETAINED_CHARS:,} + '…'"
                    return SpecResult(name, Verdict.VIOLATED, figure, preset, run.window, run.engine)
            num_truncated += turn.thinking.endswith(ELLIPSIS) and len(turn.thinking) == RETAINED_CHARS + 1
        num_turns += len(turns)
        after = first_request_after(requests, cp)
        if after is None:
            continue
        idx, request = after
        rows = request.messages[1 : 1 + len(turns)]
        for turn, row in zip(turns, rows, strict=False):
            texts = _reasoning_texts(row)
            if row.role != "assistant" or row.tool_calls or texts != [turn.thinking] or row.text() != turn.text:
                figure = f"request #{idx} does not replay checkpoint {cid}'s retained turns right after the summary"
                return SpecResult(name, Verdict.VIOLATED, figure, preset, run.window, run.engine)
        if len(rows) != len(turns):
            figure = f"request #{idx} replays {len(rows)} of checkpoint {cid}'s {len(turns)} retained turns"
            return SpecResult(name, Verdict.VIOLATED, figure, preset, run.window, run.engine)
    figure = f"{len(found)} checkpoints replayed {num_turns} retained thinking turns ({num_truncated} cut to 4,000 chars)"
    return SpecResult(name, Verdict.PASS, figure, preset, run.window, run.engine)


def judge_backfill(requests: Sequence[Request], emitted: dict[TurnKey, set[str]], binding: str) -> tuple[bool, str]:
    """ADR 0256 d3: every replayed turn the model emitted without thinking carries exactly the binding's fill."""
    want = PLACEHOLDER if binding == "deepseek-relay" else ""
    num_rows = 0
    for idx, request in enumerate(requests):
        if request.purpose != "conversation" or not _strict(request):
            continue
        for position, message in enumerate(request.messages):
            if message.role != "assistant":
                continue
            key = turn_key(message.blocks)
            if key is None or emitted.get(key) != {""}:
                continue
            texts = _reasoning_texts(message)
            if texts != [want]:
                return False, (
                    f"{binding}: request #{idx} message {position}, a turn emitted without thinking, "
                    f"carries {texts!r}, want [{want!r}]"
                )
            num_rows += 1
    if not num_rows:
        return False, f"{binding}: no turn without thinking was replayed, so the spec proves nothing"
    return True, f"{binding}: {num_rows:,} replayed rows without thinking carried {want!r}"


def judge_normalized(requests: Sequence[Request], emitted: dict[TurnKey, set[str]]) -> tuple[bool, str]:
    """D677: one reasoning field per request, and no turn the model thought in loses its reasoning."""
    num_mixed = 0
    for idx, request in enumerate(requests):
        if request.purpose != "conversation" or not _strict(request):
            continue
        assistants = [(p, m) for p, m in enumerate(request.messages) if m.role == "assistant"]
        fields = {b.field for _, m in assistants for b in m.blocks if isinstance(b, Reasoning)}
        if len(fields) > 1:
            return False, f"request #{idx} sends reasoning in {len(fields)} fields: {', '.join(sorted(fields))}"
        rebuilt = live = False
        for position, message in assistants:
            key = turn_key(message.blocks)
            produced = emitted.get(key) if key is not None else None
            if produced is None:
                rebuilt = rebuilt or bool(real_reasoning(message))
                continue
            if not any(produced):
                continue
            live = True
            value = "".join(_reasoning_texts(message))
            if value not in produced:
                return False, (
                    f"request #{idx} message {position}: the model's reasoning was replaced by {value[:48]!r}"
                )
        num_mixed += rebuilt and live
    if not num_mixed:
        return False, "no request mixed rebuilt and live reasoning rows, so the spec proves nothing"
    return True, f"{num_mixed} requests mixed rebuilt and live reasoning; one field each, live reasoning kept"


def judge_user_only_tail(run: Run, requests: Sequence[Request], preset: str) -> SpecResult:
    """ADR 0136 tail rules, unchanged by ADR 0256: active turn keeps the latest user message, completed none."""
    name = "user-only-tail"
    found = checkpoints(run.session)
    if not found:
        return SpecResult(name, Verdict.VACUOUS, "no checkpoint landed, so the spec proves nothing", preset, run.window, run.engine)
    counts = {"active_turn": 0, "completed_turn": 0}
    for cp in found:
        record = checkpoint_record(cp)
        cid, mode, users = record.compaction_id, record.tail_mode, record.retained_users
        latest: Message | None = None
        for event in _region(run.session, cp):
            if is_checkpoint(event):
                latest = next(reversed(checkpoint_record(event).retained_users), latest)
            elif event.kind == "user/message" and event.message is not None:
                latest = event.message
        match mode:
            case "completed_turn":
                ok = not users
            case "active_turn":
                ok = (
                    len(users) == 1
                    and latest is not None
                    and users[0].role == "user"
                    and (users[0] == latest or _is_truncation(users[0], latest))
                )
            case _:
                return SpecResult(name, Verdict.VIOLATED, f"checkpoint {cid} has no tail mode", preset, run.window, run.engine)
        if not ok:
            figure = f"checkpoint {cid} ({mode}) kept {len(users)} user message(s) that are not its task boundary"
            return SpecResult(name, Verdict.VIOLATED, figure, preset, run.window, run.engine)
        counts[mode] += 1
        after = first_request_after(requests, cp)
        if after is None:
            continue
        idx, request = after
        kept = len(record.retained_reasoning) + len(users)
        for message in request.messages[1 : 1 + kept]:
            if any(isinstance(b, (ToolCall, ToolResult)) for b in message.blocks):
                figure = f"request #{idx} replays a tool call or result in checkpoint {cid}'s retained rows"
                return SpecResult(name, Verdict.VIOLATED, figure, preset, run.window, run.engine)
    figure = (
        f"{len(found)} checkpoints: {counts['active_turn']} active (latest user message only), "
        f"{counts['completed_turn']} completed (empty tail); no tool call replayed"
    )
    return SpecResult(name, Verdict.PASS, figure, preset, run.window, run.engine)


def _is_truncation(kept: Message, original: Message) -> bool:
    text = kept.text()
    return text.endswith(TRUNCATION_MARKER) and original.text().startswith(text[: -len(TRUNCATION_MARKER)])


def judge_accepted(run: Run, spec: str, preset: str) -> SpecResult:
    """Zero requests answered with a 400."""
    rejected = [o for o in run.observations if o.is_rejected]
    where = f"{run.engine} under {run.profile}"
    if rejected:
        first = rejected[0]
        figure = f"{where}: {len(rejected)} of {len(run.observations)} requests rejected, first #{first.index}: {first.error}"
        return SpecResult(spec, Verdict.VIOLATED, figure, preset, run.window, run.engine)
    figure = f"{where}: {len(run.observations)} requests, none rejected ({run.num_folds} folds)"
    return SpecResult(spec, Verdict.PASS, figure, preset, run.window, run.engine)


def judge_verbatim_reasoning(run: Run, requests: Sequence[Request], emitted: dict[TurnKey, set[str]], preset: str) -> SpecResult:
    """Every replayed turn carries exactly its emitted reasoning, and every summary call stays warm."""
    name = "checkpoint-keeps-reasoning"
    num_rows = 0
    for idx, request in enumerate(requests):
        for position, message in enumerate(request.messages):
            if message.role != "assistant":
                continue
            key = turn_key(message.blocks)
            produced = emitted.get(key) if key is not None else None
            if produced is None:
                figure = f"request #{idx} message {position} is an assistant row the model never emitted"
                return SpecResult(name, Verdict.VIOLATED, figure, preset, run.window, run.engine)
            texts = _reasoning_texts(message)
            if len(texts) != 1 or texts[0] not in produced:
                figure = f"request #{idx} message {position} replays reasoning {texts!r:.60} the model did not emit"
                return SpecResult(name, Verdict.VIOLATED, figure, preset, run.window, run.engine)
            num_rows += 1
    summaries = run.summaries
    if not summaries:
        return SpecResult(name, Verdict.VACUOUS, "no summary call, so the spec proves nothing", preset, run.window, run.engine)
    worst = min(summaries, key=lambda s: s.hit_ratio)
    if worst.hit_ratio < MIN_SUMMARY_HIT:
        figure = f"summary call #{worst.index} hit only {hit_pct(worst.hit_ratio)}"
        return SpecResult(name, Verdict.VIOLATED, figure, preset, run.window, run.engine)
    figure = f"{num_rows:,} replayed rows verbatim; {len(summaries)} summary calls, min hit {hit_pct(worst.hit_ratio)}"
    return SpecResult(name, Verdict.PASS, figure, preset, run.window, run.engine)


# --- checks ---------------------------------------------------------------------------------


def check_retained_reasoning(preset: str | Preset, window: int, engine: str = "user-tail") -> SpecResult:
    """ADR 0256 decision 2 on the official binding."""
    _require("retained-reasoning-replayed", engine, ("user-tail",))
    run, recorder = run_recorded(ThinkingToolsWorkload(window), preset, engine, "deepseek-official")
    return judge_retained_reasoning(run, recorder.requests, _preset_name(preset))


def check_backfill(preset: str | Preset, window: int, engine: str = "user-tail") -> SpecResult:
    """ADR 0256 decision 3: the official binding fills "", the relay binding the placeholder."""
    _require("reasoning-backfill-per-binding", engine, ("user-tail",))
    figures = []
    passed = True
    for binding in ("deepseek-official", "deepseek-relay"):
        _, recorder = run_recorded(ThinkingToolsWorkload(window, binding=binding), preset, engine, binding)
        ok, figure = judge_backfill(recorder.requests, recorder.emitted, binding)
        passed = passed and ok
        figures.append(figure)
    return SpecResult("reasoning-backfill-per-binding", Verdict.of(passed), "; ".join(figures), _preset_name(preset), window, engine)


def check_normalized(preset: str | Preset, window: int, engine: str = "user-tail") -> SpecResult:
    """D677 on a relay whose live rows use reasoning_text (rebuilt rows are stamped reasoning_content).

    Judged on the requests, not on 400s: a relay that reads only reasoning_text also rejects the
    first request after a checkpoint under D677, whose newest real reasoning is then a rebuilt row.
    """
    _require("reasoning-field-normalized", engine, ("user-tail",))
    workload = ThinkingToolsWorkload(window, binding="deepseek-relay", reasoning_field="reasoning_text")
    _, recorder = run_recorded(workload, preset, engine, "lenient")
    ok, figure = judge_normalized(recorder.requests, recorder.emitted)
    return SpecResult("reasoning-field-normalized", Verdict.of(ok), figure, _preset_name(preset), window, engine)


def check_user_only_tail(preset: str | Preset, window: int, engine: str = "user-tail") -> SpecResult:
    """Structural guard: passes on every preset (no switch breaks the tail rules).

    ``UserTailConfig(tail_rule="codex")`` (ADR 0064's budgeted user tail) makes it fail; the
    suite proves it.
    """
    _require("user-only-tail", engine, ("user-tail",))
    run, recorder = run_recorded(ThinkingToolsWorkload(window), preset, engine, "deepseek-official")
    return judge_user_only_tail(run, recorder.requests, _preset_name(preset))


def check_official_accepts(preset: str | Preset, window: int, engine: str = "ranges") -> SpecResult:
    """deepseek-official rejects no request (ranges: seed 000's reasoning pairs)."""
    _require("official-accepts-every-request", engine, ("ranges",))
    run, _ = run_recorded(ThinkingToolsWorkload(window), preset, engine, "deepseek-official")
    return judge_accepted(run, "official-accepts-every-request", _preset_name(preset))


def check_relay_accepts(preset: str | Preset, window: int, engine: str = "user-tail") -> SpecResult:
    """deepseek-relay rejects no request (user-tail: ADR 0256's placeholder; ranges: seed 000)."""
    _require("relay-accepts-every-request", engine, ("user-tail", "ranges"))
    workload = ThinkingToolsWorkload(window, binding="deepseek-relay")
    run, _ = run_recorded(workload, preset, engine, "deepseek-relay")
    return judge_accepted(run, "relay-accepts-every-request", _preset_name(preset))


def check_strict_guard(preset: str | Preset, window: int, engine: str = "checkpoint") -> SpecResult:
    """Structural guard: no 400 where no switch causes one (checkpoint under both profiles, user-tail official).

    Passes on every preset; the rejecting cases have their own specs above.
    """
    _require("strict-profiles-accept-guard", engine, ("checkpoint", "user-tail"))
    profiles = ("deepseek-official", "deepseek-relay") if engine == "checkpoint" else ("deepseek-official",)
    figures = []
    for profile in profiles:
        workload = ThinkingToolsWorkload(window, binding=profile)
        run, _ = run_recorded(workload, preset, engine, profile)
        result = judge_accepted(run, "strict-profiles-accept-guard", _preset_name(preset))
        if not result.passed:
            return result
        figures.append(result.figure)
    return replace(result, figure="; ".join(figures))


def check_checkpoint_verbatim(preset: str | Preset, window: int, engine: str = "checkpoint") -> SpecResult:
    """Structural guard: the checkpoint engine's summary replay and tail keep reasoning byte-identical.

    Passes on every preset; the suite proves it fails on a request with rewritten reasoning.
    """
    _require("checkpoint-keeps-reasoning", engine, ("checkpoint",))
    run, recorder = run_recorded(ThinkingToolsWorkload(window), preset, engine, "deepseek-official")
    return judge_verbatim_reasoning(run, recorder.requests, recorder.emitted, _preset_name(preset))


SPECS: tuple[Spec, ...] = (
    Spec(
        "retained-reasoning-replayed",
        "ADR 0256 d2: checkpoints keep the last 3 thinking turns and replay them after the summary",
        check_retained_reasoning, windowed=True, engines=("user-tail",),
    ),
    Spec(
        "reasoning-backfill-per-binding",
        'ADR 0256 d3: rows without thinking get "" (official) or the placeholder (relay)',
        check_backfill, windowed=True, engines=("user-tail",),
    ),
    Spec(
        "reasoning-field-normalized",
        "D677: one reasoning field per request, live reasoning never overwritten",
        check_normalized, windowed=True, bug_preset="pre-d677", engines=("user-tail",),
    ),
    Spec(
        "user-only-tail",
        "ADR 0136: active turn keeps the latest user message, completed turn none, no tool replay",
        check_user_only_tail, windowed=True, bug_preset=None, engines=("user-tail",),
    ),
    Spec(
        "official-accepts-every-request",
        "deepseek-official answers no request of thinking-tools with 400",
        check_official_accepts, windowed=True, engines=("ranges",),
    ),
    Spec(
        "relay-accepts-every-request",
        "deepseek-relay answers no request of thinking-tools with 400",
        check_relay_accepts, windowed=True, engines=("user-tail", "ranges"),
    ),
    Spec(
        "strict-profiles-accept-guard",
        "no 400 from either strict profile where no switch causes one",
        check_strict_guard, windowed=True, bug_preset=None, engines=("checkpoint", "user-tail"),
    ),
    Spec(
        "checkpoint-keeps-reasoning",
        "checkpoint summary replay and tail carry reasoning byte for byte",
        check_checkpoint_verbatim, windowed=True, bug_preset=None, engines=("checkpoint",),
    ),
)
