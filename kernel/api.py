"""The public engine API: what a compaction engine receives before each step, and what it gives back.

A compaction engine is any object with a ``name`` and three methods (:class:`Engine`). The
agent loop calls them in this order, every step::

    engine.before_step(ctx)       compact if needed: prune, send a summary call through
                                  ctx.client, land durable rewrites on ctx.session
    engine.view(ctx.session)      the messages the next conversation request carries
    engine.run_tool(session, c)   for each tool call of the reply: the engine's own tools
                                  (None: not the engine's, the workload runs it)

What the engine receives (:class:`StepContext`):

* ``ctx.session``: the session log. ``ctx.messages()`` is the conversation as the provider
  would see it if nothing were compacted (the surface's messages, in order).
* ``ctx.window``: the routed model's context window in tokens; ``ctx.routed``: the routed
  request header (envelope, system prompt, tools), the same on every step.
* ``ctx.now_ms()``: the run's logical clock (milliseconds; idle gaps show in it).
* ``ctx.wake_at(ms)``: asks the loop to wake the engine at logical time ``ms`` if it falls
  inside the next idle gap (the time a workload scripts between a turn's end and the user's
  next message). The loop then sets the clock to ``ms`` and calls ``engine.on_wake(ctx)``: an
  optional method (:class:`EngineBase` has a no-op one) that may compact as ``before_step``
  does, its calls sent and priced at that time. See :meth:`StepContext.wake_at`.
* ``ctx.meter()``: the heuristic token meter's reading of the session as logged (the
  uncompacted conversation); ``ctx.measure(messages)``: the same meter on the messages the
  engine is about to send (its view), which is what a decision to compact should read;
  :func:`count_tokens` prices any list of messages the same way. ``ctx.usage_tokens(messages)``
  counts as agents do (Claude Code, Codex, pi, OpenCode): the provider's reported prompt +
  output tokens of the last conversation request, plus the meter on the messages after it.
* ``ctx.client(request)``: sends one request (a summary call) through the simulated
  provider and returns the scripted model's :class:`Reply` (``reply.error`` is set when the
  provider refused it). :meth:`StepContext.summary_request` builds one in the routed
  request family.

What the engine gives back: the messages :meth:`Engine.view` returns are sent as they are.
When they stop extending the previous request byte for byte, the engine must have *declared*
a durable rewrite since that request, or the specs call it a silent rewrite of cached
history. Declare one with :meth:`StepContext.declare_rewrite` (an engine that renders its
view from its own state), or by landing it on the session (``session.replace(...,
rewrite="checkpoint")``, which also shadows the replaced messages on the surface).

An engine may also act inside an idle gap, when the user is away: ``ctx.wake_at(ms)`` asks the
loop to call ``engine.on_wake(ctx)`` at logical time ``ms`` of the next gap (a compaction timed
against a cache's lifetime, as Claude Code's idle compaction). An engine that never asks needs
no ``on_wake`` and sees no change.

A factory builds an engine for one workload: ``factory(window, options) -> Engine``
(:data:`EngineFactory`, :class:`EngineOptions`). ``prefixbench sweep|check --engine
package.module:factory`` loads one by import path; an installed package lists its factories
under the entry-point group ``prefixbench.engines`` so they are known by name.

A user's engine that raises, or gives back something else than the types above (a view that
is not a sequence of :class:`Message`, a tool result that is not a ``Message`` or None), stops
the run with an :class:`EngineError`: one line naming the engine, the method, the step, the
workload and the window (the command line exits 2; ``--debug`` shows the traceback).

The three built-in engines (``checkpoint``, ``ranges``, ``user-tail``) use this API and
nothing else of the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import msgspec

from prefixbench.kernel.meter import Measurement, NodePrice, measure, price_header, price_message
from prefixbench.kernel.model import ModelCatalog, ModelClient, ModelInfo, Reply
from prefixbench.kernel.presets import Preset, get_preset
from prefixbench.kernel.session import Header, Session
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Envelope, Message, Reasoning, Request, Text, ToolCall, ToolResult, user_text

__all__ = [
    "API_VERSION",
    "CompactionError",
    "Engine",
    "EngineBase",
    "EngineError",
    "EngineFactory",
    "EngineOptions",
    "Envelope",
    "Header",
    "Measurement",
    "Message",
    "ModelInfo",
    "Preset",
    "Reasoning",
    "Reply",
    "Request",
    "Session",
    "StepContext",
    "Text",
    "ToolCall",
    "ToolResult",
    "count_tokens",
    "user_text",
    "warn",
]

#: Bumped when a name of this module changes meaning; engines may check it.
API_VERSION = 1


class CompactionError(RuntimeError):
    """A compaction attempt failed; the turn continues with the surface as it is."""


class EngineError(UserError):
    """A user's engine failed while it ran: it raised, or gave back the wrong type.

    The message is one line: ``engine NAME: view() returned dict at step 4 (seed-coding, 32k):
    expected a sequence of Message``. The loop adds where it happened (:meth:`locate`), so the
    error names the step, the workload and the window. ``trace`` keeps the traceback cut to the
    engine's own frames (or the engine method's ``File ..., line ...`` for a wrong return type);
    the error crosses process boundaries (``--jobs``, Dask) with all its fields.

    A :class:`~prefixbench.simulator.errors.UserError`: the command line ends with exit 2.

    Attributes:
        engine: the engine's name (and the reference it was loaded by, when that differs).
        call: what was called: ``before_step()``, ``view()``, ``run_tool(read_file)``, ``name``.
        what: what went wrong, ``raised RuntimeError`` or ``returned dict``.
        detail: the error's own message, or what was expected.
        step: ``step 4`` or ``turn 2 step 4`` (empty before the loop located it).
        workload, window: the run's workload and context window (empty / 0 when unknown).
        trace: the traceback cut to the engine's frames (may be empty).
    """

    def __init__(
        self, engine: str, call: str, what: str, detail: str = "", *, step: str = "", workload: str = "",
        window: int = 0, trace: str = "",
    ) -> None:
        self.engine, self.call, self.what, self.detail = engine, call, what, detail
        self.step, self.workload, self.window, self.trace = step, workload, window, trace
        super().__init__(self.line())

    def line(self) -> str:
        """The one-line message."""
        where = f" at {self.step}" if self.step else ""
        if self.workload:
            where += f" ({self.workload}, {window_label(self.window)})" if self.window else f" ({self.workload})"
        detail = f": {self.detail}" if self.detail else ""
        return f"engine {self.engine}: {self.call} {self.what}{where}{detail}"

    def locate(self, *, step: str | None = None, workload: str | None = None, window: int | None = None) -> EngineError:
        """Fill in where it happened (fields already set stay); returns itself, to re-raise."""
        self.step = self.step or step or ""
        self.workload = self.workload or workload or ""
        self.window = self.window or window or 0
        self.args = (self.line(),)
        return self

    def __reduce__(self) -> tuple[object, ...]:
        # Pickled by its fields (a worker process or a Dask worker hands it back whole).
        return (_engine_error, (self.engine, self.call, self.what, self.detail, self.step, self.workload, self.window, self.trace))


def _engine_error(
    engine: str, call: str, what: str, detail: str, step: str, workload: str, window: int, trace: str
) -> EngineError:
    return EngineError(engine, call, what, detail, step=step, workload=workload, window=window, trace=trace)


def window_label(window: int) -> str:
    """``32k``, ``1m``, or the number itself."""
    if window and window % 1_000_000 == 0:
        return f"{window // 1_000_000}m"
    if window and window % 1_000 == 0:
        return f"{window // 1_000}k"
    return str(window)


def type_name(value: object) -> str:
    """The name of a value's type, as an error names what an engine gave back."""
    return "None" if value is None else type(value).__name__


#: The block types a message carries.
_BLOCK_TYPES = (Text, Reasoning, ToolCall, ToolResult)
_ROLES = ("system", "user", "assistant", "tool")


def message_problem(message: object) -> str | None:
    """Why ``message`` is not a well-formed :class:`Message` (None when it is). Cheap: types only."""
    if not isinstance(message, Message):
        return f"a {type_name(message)}"
    if message.role not in _ROLES:
        return f"a Message with role {message.role!r} (roles: {', '.join(_ROLES)})"
    blocks = message.blocks
    if not isinstance(blocks, tuple):
        return f"a Message whose blocks are a {type_name(blocks)}, not a tuple"
    for index, block in enumerate(blocks):
        if not isinstance(block, _BLOCK_TYPES):
            return f"a Message with a {type_name(block)} as block {index} (blocks: Text, Reasoning, ToolCall, ToolResult)"
    return None


def messages_problem(messages: object) -> str | None:
    """Why ``messages`` is not a sequence of well-formed messages (None when it is)."""
    if not isinstance(messages, (tuple, list)):
        return f"returned {type_name(messages)}"
    for index, message in enumerate(messages):
        problem = message_problem(message)
        if problem is not None:
            return f"returned a {type(messages).__name__} holding {problem} (item {index})"
    return None


#: What a view (or a request's messages) should be, said after a problem that is not a Message.
MESSAGES_EXPECTED = "expected a sequence of Message"


def messages_expected(problem: str) -> str:
    """What to say after :func:`messages_problem`'s ``problem``: ``expected a sequence of
    Message`` when something is not a Message, nothing when a Message is malformed (its role,
    its blocks): it is one, and the problem already says what is wrong with it."""
    return "" if " holding a Message " in problem else MESSAGES_EXPECTED


def check_messages(messages: object, what: str) -> tuple[Message, ...]:
    """``messages`` as a tuple, or TypeError naming ``what`` and the first thing that is not a Message."""
    problem = messages_problem(messages)
    if problem is not None:
        expected = messages_expected(problem)
        raise TypeError(f"{what}: {problem.removeprefix('returned ')}{'; ' + expected if expected else ''}")
    return tuple(messages)  # type: ignore[arg-type]


class StepContext(msgspec.Struct, frozen=True):
    """What an engine may use before a step.

    Attributes:
        session: the session log and its surface (append-only; see :class:`Session`).
        catalog: adapter facts of a provider/model route (``catalog(provider, model)``).
        client: sends one request through the simulated provider, returns the reply.
        window: the routed model's context window, in tokens (0 when the caller gave none).
        routed: the routed request header (None when the caller gave none; the session
            logs it from the first step on, :meth:`header`).
        clock: the run's logical clock in milliseconds (None when the caller gave none;
            :meth:`now_ms`).
        reported: the last conversation request's messages followed by its reply, and the
            provider's count of its prompt + output tokens (None before the first request, or
            when the caller gave none; :meth:`usage_tokens`).
        alarm: takes the engine's ask to be woken at a logical time (None when the caller
            cannot wake an engine; :meth:`wake_at`).
    """

    session: Session
    catalog: ModelCatalog
    client: ModelClient
    window: int = 0
    routed: Header | None = None
    clock: Callable[[], int] | None = None
    reported: Callable[[], tuple[tuple[Message, ...], int] | None] | None = None
    alarm: Callable[[int], None] | None = None

    def now_ms(self) -> int:
        """The run's logical time in milliseconds (0 without a clock). The loop advances it by
        each model call's latency, each tool call, and the idle gaps a workload scripts
        (``idle-gaps``), so an engine can tell how long the user was away. Never the wall clock.
        The step's conversation request is sent at the time ``before_step`` returns at."""
        return 0 if self.clock is None else self.clock()

    def wake_at(self, ms: int) -> bool:
        """Ask to be woken at logical time ``ms`` (milliseconds, as :meth:`now_ms`) during the
        next idle gap: the time a workload scripts between the end of a turn and the user's next
        message (``idle-gaps``). If the gap starts at or before ``ms`` and ends after it, the loop
        sets the clock to ``ms`` and calls the engine's ``on_wake(ctx)``; what the engine sends
        through :attr:`client` then is priced at that time (a cache's TTL sees it there), and
        the rewrites it declares are carried by the user's next request. A time outside the gap
        (already past when it starts, or at or after its end, when the user is back) is not
        woken: the engine's next ``before_step`` comes at the return, as without an ask.

        One ask at a time: a later call replaces the earlier one. An ask holds until the next
        step starts or the next idle gap ends, woken or not (ask again in each ``before_step``,
        as a timer re-armed after each request). Inside ``on_wake`` the engine may ask again for
        a later time in the same gap. When the work of a wake runs past the gap's end, the user's
        message comes when it is done.

        Returns:
            True when the caller takes asks (the agent loop does); False when it cannot wake an
            engine at all (a context built without an alarm), so an engine can fall back to
            acting at the return.

        Raises:
            TypeError: ``ms`` is not an int.
        """
        if not isinstance(ms, int) or isinstance(ms, bool):
            raise TypeError(f"ctx.wake_at() takes a logical time in milliseconds (an int), got {type_name(ms)}")
        if self.alarm is None:
            return False
        self.alarm(ms)
        return True

    def messages(self) -> tuple[Message, ...]:
        """The conversation as the provider would see it uncompacted: the surface's messages."""
        return self.session.derive_messages()

    def header(self) -> Header | None:
        """The routed header as the session last logged it (None before the first request)."""
        return self.session.request_header()

    def meter(self) -> Measurement:
        """The token meter's reading of the session as logged: the uncompacted conversation
        (per surface node prices and the total, anchored on provider usage when the workload
        reports it). An engine that sends less than the session (its own view) decides when
        to compact from :meth:`measure` instead."""
        return measure(self.session)

    def measure(self, messages: Sequence[Message]) -> Measurement:
        """The token meter on ``messages``, the list the engine is about to send, with the
        routed header: what that request would cost. ``nodes`` are per-message prices (``seq``
        is the index in ``messages``), ``total_tokens`` adds the header. The heuristic estimate
        of :func:`count_tokens`, never anchored on provider usage.

        Raises:
            TypeError: ``messages`` is not a sequence of :class:`Message`.
        """
        checked = check_messages(messages, "ctx.measure()")
        nodes = tuple(NodePrice(index, price_message(m)) for index, m in enumerate(checked))
        surface = sum(node.tokens for node in nodes)
        return Measurement(nodes, surface, price_header(self.routed or self.header()) + surface)

    def usage_tokens(self, messages: Sequence[Message]) -> int:
        """Tokens of sending ``messages``, counted the way agents count their context: when
        ``messages`` extend the last conversation request and its reply, the provider's own
        count of that request's prompt + output tokens plus the meter on the messages after it
        (Claude Code, Codex, pi and OpenCode read the last response's usage); after a rewrite,
        :meth:`measure`'s heuristic total scaled by the provider's count of the last request
        over the meter's reading of it; before the first request, the heuristic total. A
        provider that counts more tokens than chars/4 (Anthropic's models) is then seen as it
        bills.

        Raises:
            TypeError: ``messages`` is not a sequence of :class:`Message`.
        """
        checked = check_messages(messages, "ctx.usage_tokens()")
        anchor = None if self.reported is None else self.reported()
        if anchor is not None:
            sent, tokens = anchor
            if len(checked) >= len(sent) and checked[: len(sent)] == sent:
                return tokens + sum(price_message(m) for m in checked[len(sent) :])
            # Not an extension (a rewrite): the meter, scaled as the provider's count of the last
            # request ran against the meter's reading of it.
            metered = self.measure(sent).total_tokens
            estimate = self.measure(checked).total_tokens
            return estimate if metered <= 0 else -(-estimate * tokens // metered)
        return self.measure(checked).total_tokens

    def summary_request(
        self, messages: Sequence[Message], *, max_tokens: int | None = None, envelope: Envelope | None = None
    ) -> Request:
        """A ``compaction`` request in the routed family: routed envelope, system and tools.

        ``envelope`` overrides the routed one (a summary call sent elsewhere); the adapter's
        defaults apply to it as they would on the wire.
        """
        header = self.routed or self.header()
        if header is None:
            raise CompactionError("no routed header yet: a summary call needs the routed request family")
        named = envelope or header.envelope
        info = self.catalog(named.provider, named.model)
        return Request(
            info.wire_envelope(named), tuple(messages), header.system, header.tools,
            max_tokens or info.default_max_tokens, "compaction",
        )

    def declare_rewrite(self, kind: str, **info: Any) -> None:
        """Declare a durable rewrite of what the provider saw (``checkpoint``, ``truncate``...).

        The next request carries it; a request that does not extend the previous one needs one.
        """
        if not kind:
            raise ValueError("a rewrite needs a kind, e.g. 'checkpoint'")
        self.session.append("compaction/rewrite", on_surface=False, rewrite=kind, **info)


@runtime_checkable
class Engine(Protocol):
    """A compaction engine (see the module docstring for the call order).

    ``on_wake(ctx)`` is optional and not part of the protocol: the loop calls it only on an
    engine that asked to be woken inside an idle gap (:meth:`StepContext.wake_at`).
    """

    name: str

    def before_step(self, ctx: StepContext) -> None:
        """Compact if needed, before the next conversation request is built."""
        ...

    def view(self, session: Session) -> tuple[Message, ...]:
        """The messages the next conversation request carries."""
        ...

    def run_tool(self, session: Session, call: ToolCall) -> Message | None:
        """Handle a tool the engine owns (``compress``, ``new_context``...); None if not its tool."""
        ...


class EngineBase:
    """Defaults for a minimal engine: never compacts, sends the surface, owns no tools."""

    name = "engine"

    def before_step(self, ctx: StepContext) -> None:
        """Nothing by default."""

    def view(self, session: Session) -> tuple[Message, ...]:
        """The surface's messages."""
        return session.derive_messages()

    def run_tool(self, session: Session, call: ToolCall) -> Message | None:
        """No tools of its own."""
        return None

    def on_wake(self, ctx: StepContext) -> None:
        """Woken inside an idle gap at the time asked with :meth:`StepContext.wake_at`; nothing
        by default. Optional: an engine that never asks to be woken need not have it."""


class EngineOptions(msgspec.Struct, frozen=True):
    """What a factory gets besides the window.

    Attributes:
        workload: the workload the engine will run (``seed-coding``, ``thinking-tools``).
        preset: the fix switches of the run (built-in engines read them; others may ignore).
        params: the workload's parameters (``steps``, ``effort``...), as reports show them.
        config: the keys of the engine's own table of ``--engine-config`` (the file names
            that table by the name or import path the user gave), empty when none.
    """

    workload: str = ""
    preset: Preset = msgspec.field(default_factory=lambda: get_preset("patched"))
    params: Mapping[str, Any] = msgspec.field(default_factory=dict)
    config: Mapping[str, Any] = msgspec.field(default_factory=dict)


#: ``factory(window, options)`` returns a fresh engine for one run.
EngineFactory = Callable[[int, EngineOptions], Engine]


def count_tokens(messages: Sequence[Message], header: Header | None = None) -> int:
    """The meter's price of ``messages`` (plus the header's, when given)."""
    return price_header(header) + sum(price_message(m) for m in messages)


def warn(session: Session, message: str) -> None:
    """Log a compaction failure as a warning event; pressure failures never abort a turn."""
    session.append("compaction/warning", message=None, on_surface=False, text=message)
