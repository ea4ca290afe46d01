"""Protocol strictness profiles: which requests a provider answers with HTTP 400.

DeepSeek thinking mode (DeepSeek's thinking-mode guide, api-docs.deepseek.com/guides/thinking_mode, the rule since September 2026): when a request carries ``tools``, the
reasoning of every earlier assistant turn must be passed back, else HTTP 400 "The
reasoning_content in the thinking mode must be passed back to the API.". The profiles::

    profile            field read               empty ""   non-empty value
    deepseek-official  reasoning_content        accepted   byte-identical to what the model emitted
    deepseek-relay     one, configurable        rejected   accepted (a relay checks presence only)
    lenient            -                        -          any reasoning accepted (Anthropic, Responses)

Every profile, ``lenient`` included, refuses a request whose tool calls and results do not pair
up (below): no provider takes one, whatever it does with reasoning.

A request is in thinking mode when its effort is set and is not ``none``; the rules apply only
when it also carries tools. A relay checks presence and non-emptiness, so the documented
placeholder ``[reasoning not retained for this turn]`` passes it; the official endpoint concatenates
replayed reasoning into the model's context, so the simulated one holds it to what it emitted.

Every profile holds a request to the pairing of tool calls and results, which every provider
checks on every request, thinking or not. On chat completions (the 400s users of DeepSeek's
official API quote: github.com/qwersyk/Newelle/issues/425, github.com/itmisx/deepx-code/issues/94
after a compaction cut, github.com/BigPizzaV3/CodexPlusPlus/issues/308):
a tool result must answer a call of the assistant row right before it (``Messages with role
'tool' must be a response to a preceding message with 'tool_calls'``), and an assistant row with
tool calls must be followed by a result for each call before any other row (``An assistant
message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.
(insufficient tool messages following tool_calls message)``). An engine that drops the assistant
row of a tool call, reorders a call and its result, or cuts between them is refused.

Anthropic's Messages API holds a request to the same rule: each ``tool_use`` block must be
answered by a ``tool_result`` block in the next message (platform.claude.com/docs/en/agents-and-tools/tool-use/overview).
Its 400s read ``messages.N: `tool_use` ids were found without `tool_result` blocks immediately
after: ID. Each `tool_use` block must have a corresponding `tool_result` block in the next
message.`` (github.com/anthropics/claude-code/issues/5060) and ``messages.N.content.0: unexpected
`tool_use_id` found in `tool_result` blocks: ID. Each `tool_result` block must have a
corresponding `tool_use` block in the previous message.`` (github.com/anthropics/claude-code/issues/13460).
OpenAI's Responses API refuses a ``function_call`` input item with no ``function_call_output``
for its ``call_id`` ("No tool output found for function call ID.",
github.com/bytedance/trae-agent/issues/358) and an output whose call is missing ("No tool call
found for function call output with call_id ID.", github.com/leookun/cursor-byok/issues/307); it
does not ask for the output right after its call, so the rule here is the stricter wires'
(Anthropic's, chat completions'): a request that passes it passes every provider. The simulated
refusal quotes the chat-completions text whatever the profile: one rule, one wording.

The official provider remembers, per emitted assistant turn, the reasoning it produced. It
knows a turn by its non-reasoning content (text and tool calls), so a row that was rebuilt or
moved is still recognized; a row it never emitted (say, a text-only replay of a thinking turn
without its tool calls) is not held to byte-exactness, only to presence.
"""

from __future__ import annotations

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.provider import Validator
from prefixbench.simulator.wire import REASONING_FIELDS, Block, Envelope, Message, Reasoning, Request, Text, ToolCall, ToolResult

PROFILES: tuple[str, ...] = ("deepseek-official", "deepseek-relay", "lenient")
#: The field the official DeepSeek endpoint reads.
OFFICIAL_FIELD = "reasoning_content"

TurnKey = tuple[str, tuple[ToolCall, ...]]


def rejection_reason(field_name: str) -> str:
    """The provider's 400 text for a missing reasoning field (the guide above)."""
    return f"The {field_name} in the thinking mode must be passed back to the API."


def is_thinking(envelope: Envelope) -> bool:
    """Whether a request family runs in thinking mode (an effort is set and is not ``none``)."""
    return envelope.reasoning_effort is not None and envelope.reasoning_effort != "none"


def turn_key(blocks: tuple[Block, ...]) -> TurnKey | None:
    """How the provider recognizes a turn: its text and tool calls (None when it has neither)."""
    texts = [block.text for block in blocks if isinstance(block, Text)]
    text = texts[0] if len(texts) == 1 else "".join(texts)
    calls = tuple(block for block in blocks if isinstance(block, ToolCall))
    if not text and not calls:
        return None
    return (text, calls)


#: The endpoint's 400 for a tool result that answers no call of the row before it.
ORPHAN_RESULT = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
#: The endpoint's 400 for a tool call left without its result.
MISSING_RESULT = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
    "(insufficient tool messages following tool_calls message)"
)


def is_pairing_refusal(error: str | None) -> bool:
    """Whether a provider's refusal text is :func:`pairing_problem`'s (a call or result unpaired)."""
    return error is not None and error.startswith((ORPHAN_RESULT, MISSING_RESULT))


def pairing_problem(messages: tuple[Message, ...]) -> str | None:
    """The 400 text for the first row that breaks the pairing of tool calls and results, or None.

    Results (``ToolResult`` blocks, in ``tool`` rows) must directly follow the assistant row
    whose calls they answer, one per call, before any other row; a call must not be left
    without its result, even at the end of the request.
    """
    pending: dict[str, int] = {}  # call_id -> index of the assistant row that made it
    answering: int | None = None  # the assistant row whose results may follow
    for idx, message in enumerate(messages):
        results = [block.call_id for block in message.blocks if isinstance(block, ToolResult)]
        if results:
            for call_id in results:
                if answering is None or call_id not in pending:
                    return f"{ORPHAN_RESULT} (message {idx}: tool result {call_id!r} answers no tool call of the row before it)"
                del pending[call_id]
            continue
        if pending:
            call_id, row = next(iter(pending.items()))
            return f"{MISSING_RESULT} (message {row}: tool call {call_id!r} has no result before message {idx})"
        answering = None
        calls = [block.call_id for block in message.blocks if isinstance(block, ToolCall)]
        if calls and message.role == "assistant":
            pending = dict.fromkeys(calls, idx)
            answering = idx
    if pending:
        call_id, row = next(iter(pending.items()))
        return f"{MISSING_RESULT} (message {row}: tool call {call_id!r} has no result; the request ends first)"
    return None


def _read(message: Message, field_name: str) -> str | None:
    parts = [b.text for b in message.blocks if isinstance(b, Reasoning) and b.field == field_name]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "".join(parts)


def _first_difference(a: str, b: str) -> int:
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


class LenientValidator(msgspec.Struct):
    """Accepts any reasoning (Anthropic-like, Responses-like endpoints ignore or accept it), and
    refuses only what every provider refuses: tool calls and results that do not pair up."""

    profile: str = "lenient"

    def check(self, request: Request) -> str | None:
        """The 400 reason for the first broken pairing of tool calls and results, or None."""
        return pairing_problem(request.messages)

    def accepted(self, request: Request, reply_blocks: tuple[Block, ...]) -> None:
        """Nothing to remember."""


class ReasoningReplayValidator(msgspec.Struct):
    """A DeepSeek thinking endpoint: rejects a tools request whose assistant rows lack reasoning.

    ``accept_empty``: the official endpoint takes ``""``; relays reject it.
    ``byte_exact``: non-empty reasoning on a recognized turn must equal what was emitted.
    """

    profile: str
    field: str
    accept_empty: bool
    byte_exact: bool
    #: Per emitted turn, every reasoning value the model produced for it.
    emitted: dict[TurnKey, set[str]] = msgspec.field(default_factory=dict)

    def check(self, request: Request) -> str | None:
        """The 400 reason for the first broken pairing of tool calls and results, else for the
        first offending assistant row, or None."""
        pairing = pairing_problem(request.messages)
        if pairing is not None:
            return pairing
        if not request.tools or not is_thinking(request.envelope):
            return None
        for idx, message in enumerate(request.messages):
            if message.role != "assistant":
                continue
            problem = self._problem(message)
            if problem is not None:
                return f"{rejection_reason(self.field)} (message {idx}: {problem})"
        return None

    def _problem(self, message: Message) -> str | None:
        value = _read(message, self.field)
        if value is None:
            others = sorted({b.field for b in message.blocks if isinstance(b, Reasoning)})
            if others:
                return f"assistant row carries reasoning only in {', '.join(others)}, not {self.field}"
            return f"assistant row has no {self.field}"
        if not value:
            return None if self.accept_empty else f"{self.field} is empty"
        if self.byte_exact:
            key = turn_key(message.blocks)
            produced = self.emitted.get(key) if key is not None else None
            if produced is not None and value not in produced:
                closest = max(produced, key=lambda p: _first_difference(p, value))
                at = _first_difference(closest, value)
                return f"{self.field} differs from what the model produced for this turn, first at char {at}"
        return None

    def accepted(self, request: Request, reply_blocks: tuple[Block, ...]) -> None:
        """Remember the reasoning the model produced for this turn."""
        if not self.byte_exact:
            return
        key = turn_key(reply_blocks)
        if key is None:
            return
        text = "".join(b.text for b in reply_blocks if isinstance(b, Reasoning))
        self.emitted.setdefault(key, set()).add(text)


def make_validator(profile: str, field: str | None = None) -> Validator:
    """A fresh validator for a strictness profile (one per run: it remembers what was emitted).

    Args:
        field: the one reasoning field a ``deepseek-relay`` reads (default ``reasoning_content``);
            the official endpoint reads ``reasoning_content`` only; ``lenient`` ignores it.

    Raises:
        UserError: unknown profile or field.
    """
    if field is not None and field not in REASONING_FIELDS:
        raise UserError(f"unknown reasoning field {field!r} (known: {', '.join(REASONING_FIELDS)})")
    match profile:
        case "deepseek-official":
            if field not in (None, OFFICIAL_FIELD):
                raise UserError(f"profile deepseek-official reads {OFFICIAL_FIELD} only, got field {field!r}")
            return ReasoningReplayValidator(profile, OFFICIAL_FIELD, accept_empty=True, byte_exact=True)
        case "deepseek-relay":
            return ReasoningReplayValidator(profile, field or OFFICIAL_FIELD, accept_empty=False, byte_exact=False)
        case "lenient":
            return LenientValidator()
    raise UserError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
