"""Small user engines the tests load by import path (``tests.user_engines:...``)."""

from __future__ import annotations

from prefixbench.kernel import EngineBase, EngineOptions, Message, Session, StepContext, Text, ToolResult, count_tokens


class Truncating(EngineBase):
    """Drops the oldest messages past 80% of the window; declares the drop only when asked to."""

    name = "truncating"

    def __init__(self, window: int, declare: bool) -> None:
        self.window, self.declare, self.dropped = window, declare, 0

    def before_step(self, ctx: StepContext) -> None:
        messages = ctx.messages()
        if count_tokens(messages[self.dropped :], ctx.routed) < 0.8 * self.window:
            return
        while count_tokens(messages[self.dropped :], ctx.routed) > 0.5 * self.window or messages[self.dropped].role == "tool":
            self.dropped += 1
        if self.declare:
            ctx.declare_rewrite("truncate")

    def view(self, session: Session) -> tuple[Message, ...]:
        return session.derive_messages()[self.dropped :]


def silent(window: int, options: EngineOptions) -> Truncating:
    """Truncates without a word: no-silent-rewrite must fail."""
    return Truncating(window, declare=False)


def declared(window: int, options: EngineOptions) -> Truncating:
    """Truncates and declares it: every break is explained (but it never summarizes)."""
    engine = Truncating(window, declare=True)
    engine.name = "declared-truncating"
    return engine


def raises(window: int, options: EngineOptions) -> Truncating:
    """A factory that fails."""
    raise ValueError(f"no engine for window {window}")


def not_an_engine(window: int, options: EngineOptions) -> object:
    """A factory that returns something else."""
    return object()


NOT_CALLABLE = 42


def configurable(window: int, options: EngineOptions) -> Truncating:
    """Declares its truncations when its ``--engine-config`` table says ``declare = true``."""
    declare = options.config.get("declare", False)
    if not isinstance(declare, bool):
        raise ValueError(f"declare must be true or false, got {declare!r}")
    engine = Truncating(window, declare=declare)
    engine.name = f"configurable-{'declared' if declare else 'silent'}"
    return engine


# --- broken engines: each fails in its own way while it runs (tests/unit/workloads/test_engine_errors.py)


class Broken(EngineBase):
    """An engine that breaks as ``how`` says: ``raise-at-5`` (before_step raises at its 5th step),
    ``view-dict``, ``view-none``, ``view-str``, ``view-dicts`` (a list of dicts), ``tool-raises``."""

    def __init__(self, how: str) -> None:
        self.name, self.how, self.steps = f"broken-{how}", how, 0

    def before_step(self, ctx: StepContext) -> None:
        self.steps += 1
        if self.how == "raise-at-5" and self.steps == 5:
            raise RuntimeError("the engine's own bug at its 5th step")

    def view(self, session: Session) -> tuple[Message, ...]:
        messages = session.derive_messages()
        broken: dict[str, object] = {
            "view-dict": {"messages": messages},
            "view-none": None,
            "view-str": "hello",
            "view-dicts": [{"role": m.role, "content": m.text()} for m in messages],
        }
        return broken.get(self.how, messages)  # type: ignore[return-value]

    def run_tool(self, session: Session, call: object) -> Message | None:
        if self.how == "tool-raises":
            raise KeyError("no such tool state")
        return None


def raise_at_5(window: int, options: EngineOptions) -> Broken:
    return Broken("raise-at-5")


def view_dict(window: int, options: EngineOptions) -> Broken:
    return Broken("view-dict")


def view_none(window: int, options: EngineOptions) -> Broken:
    return Broken("view-none")


def view_str(window: int, options: EngineOptions) -> Broken:
    return Broken("view-str")


def view_dicts(window: int, options: EngineOptions) -> Broken:
    return Broken("view-dicts")


def tool_raises(window: int, options: EngineOptions) -> Broken:
    return Broken("tool-raises")


class NameRaises(EngineBase):
    """An engine whose ``name`` is a property that raises."""

    @property  # type: ignore[override]
    def name(self) -> str:  # type: ignore[override]
        raise ValueError("the name is not configured")


def name_raises(window: int, options: EngineOptions) -> NameRaises:
    return NameRaises()


# --- cost specs (tests/specs/test_cost_specs.py) ---------------------------------------------


class NeverCompacts(EngineBase):
    """Sends the whole session every step: past the window the provider refuses it."""

    name = "never-compacts"


def never_compacts(window: int, options: EngineOptions) -> NeverCompacts:
    return NeverCompacts()


class MasksEveryStep(EngineBase):
    """Masks every tool result but the newest and declares a rewrite before every request:
    each rewrite breaks the cache for a shrink of one tool result, and the next comes at once."""

    name = "masks-every-step"

    def before_step(self, ctx: StepContext) -> None:
        ctx.declare_rewrite("mask")

    def view(self, session: Session) -> tuple[Message, ...]:
        messages = session.derive_messages()
        results = [(i, j) for i, m in enumerate(messages) for j, b in enumerate(m.blocks) if isinstance(b, ToolResult)]
        keep = set(results[-1:])
        masked = []
        for i, m in enumerate(messages):
            blocks = tuple(
                ToolResult(b.call_id, (Text("[masked]"),), b.is_error) if isinstance(b, ToolResult) and (i, j) not in keep else b
                for j, b in enumerate(m.blocks)
            )
            masked.append(m if blocks == m.blocks else Message(m.role, blocks))
        return tuple(masked)


def masks_every_step(window: int, options: EngineOptions) -> MasksEveryStep:
    return MasksEveryStep()


def preset_switched(window: int, options: EngineOptions) -> Truncating:
    """Reads ``options.preset`` as its own before/after switch: under ``legacy`` it truncates
    at a fifth of the window, under any other preset at 80% (so the two runs differ)."""
    engine = Truncating(window, declare=True)
    if options.preset.name == "legacy":
        engine.window = window // 4  # 80% of a quarter: a fifth of the real window
    engine.name = "preset-switched"
    return engine


def named_checkpoint(window: int, options: EngineOptions) -> Truncating:
    """Declared truncation under a built-in engine's name: its runs would be taken for checkpoint's."""
    engine = Truncating(window, declare=True)
    engine.name = "checkpoint"
    return engine


def declared_again(window: int, options: EngineOptions) -> Truncating:
    """Another factory whose engine has ``declared``'s name: the two runs would share one row."""
    return declared(window, options)


class SplitsPair(Truncating):
    """Truncates like ``declared`` (and declares it), but cuts between a tool call and its
    result: the kept messages open on a tool result whose call was dropped. Every strict
    provider refuses that request; tool-pairs-intact must fail under every profile."""

    name = "split-pair"

    def before_step(self, ctx: StepContext) -> None:
        messages = ctx.messages()
        if count_tokens(messages[self.dropped :], ctx.routed) < 0.8 * self.window:
            return
        while self.dropped < len(messages) - 1 and (
            count_tokens(messages[self.dropped :], ctx.routed) > 0.5 * self.window or messages[self.dropped].role != "tool"
        ):
            self.dropped += 1
        ctx.declare_rewrite("truncate")


def split_pair(window: int, options: EngineOptions) -> SplitsPair:
    """Cuts between a tool call and its result (``declared`` is the same engine fixed)."""
    return SplitsPair(window, declare=True)


#: Engines ``drifting`` has built so far, in this process: state that outlives a run.
_DRIFTING_BUILDS = [0]


def drifting(window: int, options: EngineOptions) -> Truncating:
    """Declared truncation whose threshold moves with each engine the factory builds (a counter
    kept across runs, as an unseeded random choice would be): two runs of one case differ."""
    _DRIFTING_BUILDS[0] += 1
    engine = Truncating(window * (20 - _DRIFTING_BUILDS[0] % 4) // 20, declare=True)
    engine.name = "drifting"
    return engine
