"""``codex-compact``: Codex CLI's compaction: its local turn (openai/codex, ``codex-rs/core/src/compact.rs``),
or a remote path (below; the default ``auto`` picks as Codex does for the routed provider).

Before a step, when the view reaches the auto-compact limit (90% of the window, or a lower
configured ``limit``):

1. the compaction request is the whole current view with the compact prompt appended as one
   more user message, sent as a normal turn of the routed family (same envelope, system and
   tools): it extends the request before it, so only what came since and the prompt are new;
   if it would not fit the window, the oldest items are dropped first (Codex drops the oldest
   history item and retries when the request overflows);
2. the new history is the user messages of the view (summary messages excluded), newest first
   within ``user_budget`` tokens (the one that crosses it is shortened), back in chronological
   order, then one user message: the summary prefix, a newline and the reply's text;
3. the rewrite is declared (``checkpoint``).

The system prompt and tools (Codex's initial context) stay as they are.

``mode = "remote"`` models Codex's first remote compaction instead (``compact_remote.rs``, chosen
in Codex when the provider is OpenAI's and the ``remote_compaction_v2`` feature is off):

1. the compaction request is the current view under the routed system prompt with no tools and
   no prompt of Codex's own (the server holds the instruction), sent to ``/responses/compact``
   as a ``compaction`` request; while it (measured without tools) would not fit the window, the
   trailing tool results are emptied to ``aborted``, stopping at the first call or assistant
   message (Codex removes only the tool outputs it added itself from the end, and its history
   normalisation gives each call left without one an ``aborted`` output);
2. the new history is the user messages of the view (earlier compaction items excluded),
   newest first within ``retained_budget`` tokens (64,000, the server's retained-message
   default Codex mirrors in ``compact_remote_v2.rs``), back in chronological order, then the
   compaction item (the reply as an opaque blob, as ``openai-server-compaction`` writes it);
3. the rewrite is declared (``compaction``).

``mode = "remote_v2"`` models Codex's newest remote path (``compact_remote_v2.rs``, taken at
commit ``009bd87`` when the provider is OpenAI's: its ``remote_compaction_v2`` feature is stable
and on by default there):

1. the compaction request is a normal turn of the routed family (envelope, system and tools)
   carrying the current view and then a ``compaction_trigger`` item (a request control: the
   engine sends a short stand-in, the server's rendering of it is not published); it extends the
   request before it, so it reads the cached prefix; the trailing tool results are emptied as in
   ``remote`` while the view (measured without tools, as Codex estimates it) would not fit;
2. the new history is built as in ``remote``: the user messages of the view within
   ``retained_budget``, then the compaction item;
3. the rewrite is declared (``compaction``).

``mode = "auto"`` (the default) takes the path Codex takes for the routed provider: ``remote_v2``
when it is OpenAI's, ``local`` for every other.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec

from prefixbench.kernel import EngineBase, EngineOptions, Message, Session, StepContext, Text, ToolResult, count_tokens, user_text, warn

from prefixbench.kernel.strategies.foldview import Folded, shorten, skip_tool_results, tokens_of
from prefixbench.kernel.strategies.openai_compaction import compaction_item
from prefixbench.kernel.strategies.settings import read_settings

#: Written for this engine after ``templates/compact/prompt.md`` at commit ``928a707`` (same aim,
#: about its length): a handoff for the one task still in progress, in a fixed outline.
COMPACT_PROMPT = (
    "The conversation so far is about to be replaced by your summary, so a fresh model will read "
    "only what you write next. Focus on the most recent user request that is not finished yet and "
    "describe it as follows.\n\n"
    "1. Task under way: what the user asked for and what counts as done.\n"
    "2. Progress: what has been changed or learned, with the files and commands that matter.\n"
    "3. Next steps: the concrete actions left for this task, in order.\n"
    "4. Constraints: preferences and decisions the user stated that still apply.\n"
    "5. Earlier tasks: one line for all of them, or nothing.\n\n"
    "Leave out work that is already complete and do not propose extra checks nobody requested. "
    "Be short; structure beats prose."
)
#: Marks the summary message (so the next compaction does not keep it as a user message);
#: paraphrases ``templates/compact/summary_prefix.md`` at ``928a707``.
SUMMARY_PREFIX = (
    "You are picking up a task in progress after the context was compacted. A previous model wrote "
    "the handoff summary below; take it as the record of what is done. Go on from its next steps "
    "for the task under way; do not reopen finished tasks or review earlier work unless the user "
    "asked for it. The tools it used are in the state it left them. The summary:"
)

#: What a result of the remote mode rests on, for the reports that show one.
REMOTE_PRICE_NOTE = (
    "codex-compact mode=remote: each compact call is priced as an ordinary request of its shape, cold "
    "in the simulator's rendering (tools before the system prompt); how much of /responses/compact "
    "OpenAI serves from cache is not published, so those calls' uncached tokens are an assumption"
)


#: What a result of the remote_v2 mode rests on.
REMOTE_V2_NOTE = (
    "codex-compact mode=remote_v2: each compact call is a normal turn of the routed family (history, tools, "
    "then a compaction_trigger item), priced as any request; the engine sends a short stand-in for the "
    "trigger, whose rendering and the server's compaction pass are not published"
)


#: The kind of the warning the default ``auto`` logs once a run, at its first compaction: the
#: path it took and the routed provider that decided it (the bracket), for the sweep, bench and
#: check notes (:func:`path_note`).
_AUTO_PATH = re.compile(r"mode=auto chose its path \[(local|remote_v2), routed provider ([^\]]*)\]")


def path_taken(kind: str) -> str | None:
    """The path (``local`` or ``remote_v2``) the kind of the warning ``auto`` logs names; None for another."""
    found = _AUTO_PATH.fullmatch(kind)
    return None if found is None else found.group(1)


def path_note(kind: str, times: str) -> tuple[str, str] | None:
    """``(what the engine did, why)`` for the kind of the warning ``auto`` logs; None for another."""
    found = _AUTO_PATH.fullmatch(kind)
    if found is None:
        return None
    path, provider = found.groups()
    return (f"took the {path} path (mode=auto, routed provider {provider})",
            "auto compacts remotely only where the run routes OpenAI's provider, whatever cache model prices it; "
            "set mode to choose")


def run_notes(engine: str, settings: Mapping[str, object]) -> list[str]:
    """Notes for a run of ``engine`` whose ``--engine-config`` table is ``settings`` (its values
    as given, or as the run's record holds them: text)."""
    if engine != "codex-compact":
        return []
    mode = str(settings.get("mode", "")).strip()
    return [REMOTE_PRICE_NOTE] if mode == "remote" else [REMOTE_V2_NOTE] if mode == "remote_v2" else []


#: The start of a compaction item's text (``openai_compaction.compaction_item``).
ITEM_MARK = "[compaction encrypted_content="
MODES = ("auto", "local", "remote", "remote_v2")
#: Stands for the ``compaction_trigger`` item ``compact_remote_v2.rs`` appends to the request
#: (``{"type": "compaction_trigger"}``: a request control, never kept in the history).
TRIGGER = user_text("[compaction_trigger]")
#: The routed providers Codex compacts remotely for (its built-in OpenAI provider).
REMOTE_PROVIDERS = frozenset({"openai"})
#: The output a trimmed tool result is left with (Codex's normalisation fills a call without one so).
ABORTED = "aborted"
DEFAULTS: dict[str, object] = {"limit": None, "user_budget": 20_000, "mode": "auto", "retained_budget": 64_000}


class CodexCompact(EngineBase):
    """Warm whole-history summary, then the user messages within a budget and the summary last."""

    name = "codex-compact"

    def __init__(
        self, window: int, limit: int | None = None, user_budget: int = 20_000, mode: str = "auto",
        retained_budget: int = 64_000,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"codex-compact: mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.window = window
        ninety = window * 9 // 10
        self.limit = ninety if limit is None else min(limit, ninety)
        self.user_budget = user_budget
        self.mode = mode
        self.retained_budget = retained_budget
        self.folded = Folded()
        #: Whether the path ``auto`` took was logged (once a run).
        self.path_told = False

    def view(self, session: Session) -> tuple[Message, ...]:
        """The kept user messages and the summary, then everything since."""
        return self.folded.view(session)

    def before_step(self, ctx: StepContext) -> None:
        """Compact when the next request reaches the auto-compact limit."""
        view = self.view(ctx.session)
        tokens = ctx.usage_tokens(view)
        if tokens < self.limit:
            return
        live = self.folded.live(ctx.session)
        if all(m.role == "user" for m in live):
            warn(ctx.session, f"codex-compact: {tokens} tokens >= limit {self.limit} with nothing to compact")
            return
        mode = self.path(ctx)
        if self.mode == "auto" and not self.path_told:
            self.path_told = True
            header = ctx.routed or ctx.header()
            provider = "none" if header is None else header.envelope.provider
            warn(ctx.session, f"codex-compact: mode=auto chose its path [{mode}, routed provider {provider}]: Codex "
                              "compacts remotely for OpenAI's provider only")
        if mode != "local":
            self._remote(ctx, view, v2=mode == "remote_v2")
            return
        prompt = user_text(COMPACT_PROMPT)
        sent = list(view)
        while len(sent) > 1 and ctx.measure([*sent, prompt]).total_tokens > self.window:
            sent = sent[skip_tool_results(sent, 1) :]  # the oldest item, and results left without their call
        reply = ctx.client(ctx.summary_request([*sent, prompt]))
        if reply.error is not None:
            warn(ctx.session, f"codex-compact: the compaction turn failed: {reply.error}")
            return
        summary = user_text(f"{SUMMARY_PREFIX}\n{reply.text().strip()}")
        users = [m for m in view if m.role == "user" and not is_summary(m)]
        head = (*select_user_messages(users, self.user_budget), summary)
        self.folded.land(head, len(ctx.session.derive_messages()))
        ctx.declare_rewrite("checkpoint")

    def path(self, ctx: StepContext) -> str:
        """The mode this compaction takes: the one set, or for ``auto`` Codex's for the routed provider."""
        if self.mode != "auto":
            return self.mode
        header = ctx.routed or ctx.header()
        return "remote_v2" if header is not None and header.envelope.provider in REMOTE_PROVIDERS else "local"

    def _remote(self, ctx: StepContext, view: tuple[Message, ...], v2: bool = False) -> None:
        """The view to the compact endpoint without tools (``v2``: as a normal turn with its tools
        and the trigger item); kept user messages and the item come back."""
        sent = trim_trailing_results(ctx, list(view), self.window)
        request = ctx.summary_request([*sent, TRIGGER]) if v2 else msgspec.structs.replace(ctx.summary_request(sent), tools=())
        reply = ctx.client(request)
        text = reply.text().strip()
        if reply.error is not None or not text:
            warn(ctx.session, f"codex-compact: the remote compaction failed: {reply.error or 'no compaction item'}")
            return
        users = [m for m in sent if m.role == "user" and not is_item(m)]  # Codex keeps summary messages here
        head = (*select_user_messages(users, self.retained_budget), compaction_item(text))
        self.folded.land(head, len(ctx.session.derive_messages()))
        ctx.declare_rewrite("compaction")


def trim_trailing_results(ctx: StepContext, sent: list[Message], window: int) -> list[Message]:
    """``sent`` with its trailing tool results emptied to ``aborted`` while the tool-less request is over ``window``.

    Codex (``compact_remote.rs``) removes only the items it generated itself (tool outputs) from
    the end and stops at the first call or assistant message; its history normalisation then gives
    each call left without an output an ``aborted`` one. The size is measured without the tools,
    which the compact request does not carry.
    """
    header = ctx.routed or ctx.header()
    tools = count_tokens((), header) - count_tokens((), None if header is None else msgspec.structs.replace(header, tools=()))
    index = len(sent) - 1
    while index > 0 and sent[index].role == "tool" and ctx.measure(sent).total_tokens - tools > window:
        message = sent[index]
        parts = tuple(
            msgspec.structs.replace(p, content=(Text(ABORTED),)) if isinstance(p, ToolResult) else p
            for p in message.blocks
        )
        sent[index] = msgspec.structs.replace(message, blocks=parts)
        index -= 1
    return sent


def is_item(message: Message) -> bool:
    """Whether a user message is a compaction item this engine wrote in remote mode."""
    return message.text().startswith(ITEM_MARK)


def is_summary(message: Message) -> bool:
    """Whether a user message is a summary this engine wrote."""
    return message.text().startswith(SUMMARY_PREFIX + "\n")


def select_user_messages(users: list[Message], budget: int) -> tuple[Message, ...]:
    """Newest first while they fit ``budget`` tokens (the crossing one shortened), in chronological order."""
    kept: list[Message] = []
    left = budget
    for message in reversed(users):
        if left <= 0:
            break
        cost = tokens_of([message])
        if cost <= left:
            kept.append(message)
            left -= cost
            continue
        cut = shorten(message, left)
        if cut is not None:
            kept.append(cut)
        break
    return tuple(reversed(kept))


def factory(window: int, options: EngineOptions) -> CodexCompact:
    """``codex-compact``; ``--engine-config``: ``limit`` (tokens, capped at 90% of the window), ``user_budget``
    (local mode), ``mode`` (``auto``, ``local``, ``remote`` or ``remote_v2``), ``retained_budget`` (the
    remote modes); a budget no mode set can use is an error (``auto`` may take either)."""
    config = read_settings("codex-compact", options.config, DEFAULTS)
    only = {"user_budget": ("auto", "local"), "retained_budget": ("auto", "remote", "remote_v2")}
    for key, modes in only.items():
        if key in options.config and config["mode"] not in modes:
            allowed = " or ".join(repr(m) for m in modes if m != "auto")
            raise ValueError(f"codex-compact: {key} applies only to mode = {allowed} (mode is {config['mode']!r})")
    return CodexCompact(
        window, limit=config["limit"], user_budget=config["user_budget"],  # type: ignore[arg-type]
        mode=config["mode"], retained_budget=config["retained_budget"],  # type: ignore[arg-type]
    )
