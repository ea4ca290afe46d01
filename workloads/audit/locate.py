"""Where a break happened, on a transcript's logged history (evidence ``position``).

A transcript log holds the conversation, not the bytes sent, so when a request reads less than
its lane left cached there is no body to diff. What is there: the reported read ``R`` (where the
cached prefix ended, in tokens), the reported prompt of every request, and the messages each
request added (:attr:`~prefixbench.workloads.logs.trace.TraceRequest.messages`). Each request's
new messages lie between its parent's prompt and its own::

    head (system + tools, unlogged) | request 1's messages | request 2's messages | ...
    0 ........................... P0 .................... P1 ................... P2
                                                    ^ R: the read stopped here

so the history maps token ``R`` onto one message, spreading each request's new tokens over its
messages by their logged size. The first changed byte lies at or after ``R`` (a provider reads
whole cached entries), so the message holding token ``R`` is where the sent prompt began to
differ, or the last one before it. Where that message carries a *mark* (a system reminder, a
date, a file's content: :mod:`prefixbench.workloads.logs.history`), or the log shows the tool
list changed, or more blocks were added than the provider's breakpoint lookback reaches, the
location names that as the likely change. In a Claude Code transcript, a read that fell back to
where the head ends by its estimate (within :data:`AT_HEAD_END` past it) stopped at the head, not
in message 1: the head itself, which the log does not hold, is the first part that may differ
(Anthropic's diagnostic on public sessions; no other agent's logs have shown it, so theirs are
placed in message 1).

Memory: one :class:`Segment` per request, holding a reference to the request, whose messages are
small records (no text beyond a short excerpt) or only where their lines start in the file (the
records made from the lines read again when a break is located on them).
"""

from __future__ import annotations

import re
from functools import lru_cache

import msgspec
from prefixbench.simulator.providers import rules_for
from prefixbench.workloads.logs.formats import FORMATS
from prefixbench.workloads.logs.history import MARKS, message_count
from prefixbench.workloads.logs.records import values_at
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.trace import LoggedMessage, TraceRequest, unpacked_offsets

#: A read this share past the head's estimated end still stopped at the head (a fall back to it).
AT_HEAD_END = 0.03

#: Which mark names the likely change when a message has several (the most specific first).
MARK_ORDER: tuple[str, ...] = ("system-reminder", "file-read", "date")


class Segment(msgspec.Struct, frozen=True, gc=False):  # frozen, its parent made before it: no cycle
    """One request's new messages and the prompt tokens they span (``start`` to ``end``).

    The audit holds one a request through its pass: the ends are read from the request's usage
    and the parent's, not held as ints of their own (32 bytes each past 256); the messages are
    the request's, as it keeps them (their records: :meth:`records`)."""

    parent: Segment | None
    #: The request (its messages, and its usage, whose prompt is where the stretch ends).
    request: TraceRequest
    #: Where the stretch starts; None: where the parent's ends.
    start_at: int | None
    #: Logged messages before this segment in its chain.
    first_index: int

    @property
    def usage(self) -> Usage:
        return self.request.usage  # type: ignore[return-value]  (a request with a usage has a segment)

    @property
    def count(self) -> int:
        """How many messages the stretch holds."""
        return message_count(self.request.messages)

    def records(self) -> tuple[LoggedMessage, ...]:
        """The records of its messages (made from their lines read again where the request
        keeps only where they start: :func:`logged`)."""
        return logged(self.request)

    @property
    def start(self) -> int:
        """The prompt token the stretch starts at."""
        return self.parent.end if self.start_at is None else self.start_at  # type: ignore[union-attr]

    @property
    def end(self) -> int:
        """The prompt token the stretch ends at (the request's prompt)."""
        return self.usage.prompt


def logged(r: TraceRequest) -> tuple[LoggedMessage, ...]:
    """``r``'s logged messages as their records: kept so, or made from their lines read again
    where its reader kept only where they start (``messages`` as bytes), the records that reader
    makes (its format's ``message_of_line``)."""
    messages = r.messages
    return messages if type(messages) is tuple else _read_again(r.file, messages, r.source_format)  # type: ignore[arg-type]


@lru_cache(maxsize=8)  # (a break's location reads its segment's messages a few times: read once for them; emptied a pass: Histories)
def _read_again(path: str, offsets: bytes, fmt: str) -> tuple[LoggedMessage, ...]:
    record = FORMATS[fmt].message_of_line
    assert record is not None, fmt
    return tuple(record(value, path) for value in values_at(path, unpacked_offsets(offsets)))


class Location(msgspec.Struct, frozen=True):
    """Where the cached prefix of one request ended, on its logged history."""

    #: 1-based position of the message in the chain's logged history; 0: the unlogged head.
    message: int
    role: str
    #: About which token of the prompt the cached prefix ended (the reported read).
    token: int
    prompt: int
    excerpt: str
    #: The likely change, in words ("" when the log shows none).
    change: str
    #: The change's kind: a mark of :data:`~prefixbench.workloads.logs.history.MARKS`,
    #: ``tools``, ``head``, ``lookback``, one of :data:`SNAPSHOT_KINDS`, or "".
    kind: str = ""
    #: Where the head ends by its estimate, for a read that fell back to that end (message 0,
    #: the excerpt message 1's); None otherwise.
    head_end: int | None = None

    def where(self) -> str:
        """``the cached prefix ended inside message 12 (user, about token 40,210 of 52,000 of the prompt): "..."``."""
        if self.head_end is not None:
            return (
                f"the cached prefix ended at the end of the unlogged head (system prompt and tools), at token {self.token:,} of "
                f"{self.prompt:,}: {self.token - self.head_end:,} tokens past its estimated end ({self.head_end:,}), before "
                "message 1" + (f': "{self.excerpt}"' if self.excerpt else "")
            )
        return (
            f"the cached prefix ended inside the unlogged head (system prompt and tools), at token {self.token:,} of {self.prompt:,}"
            if self.message == 0
            else f"the cached prefix ended inside message {self.message} ({self.role}, about token {self.token:,} of "
            f"{self.prompt:,} of the prompt)" + (f': "{self.excerpt}"' if self.excerpt else "")
        )

    def text(self) -> str:
        """Where, then the likely change (or that the log shows none)."""
        return self.where() + (f"; likely change: {self.change}" if self.change else "; the log does not show what changed there")


def short_where(location: str) -> str:
    """A location's text in a table cell: ``msg 12``, ``head`` or "" (no location)."""
    # Read at the text's start: the excerpt after it is a message's own words.
    if re.match(r"the cached prefix ended (?:inside|at the end of) the unlogged head", location):
        return "head"
    found = re.match(r"the cached prefix ended inside message (\d+)", location)
    return f"msg {found.group(1)}" if found else ""


class Histories:
    """The logged history of every chain, one :class:`Segment` per request, keyed by its node.

    A caller that says how many later requests extend each request's node (``add``'s ``uses``:
    the audit's pass, which knows every request before it starts) lets it forget a node once the
    last of them has looked it up: a segment holds its parent, so a chain still extended stays
    whole, and a chain no later request extends (a finished session) is freed with its last
    segment, not held to the pass's end."""

    def __init__(self, heads: dict[str, int | None]) -> None:
        self.heads = heads
        self.segments: dict[str, Segment] = {}
        #: Nodes looked up more than once yet, with the lookups left; -1: kept to the end. A node
        #: stored with ``uses`` 1 is not here: its one lookup forgets it.
        self._left: dict[str, int] = {}
        self._counted = False
        # The records an earlier audit in this process read again are of the files as they were
        # then: a file rewritten in place since (its lines at the same bytes) is read anew.
        _read_again.cache_clear()

    def add(self, r: TraceRequest, uses: int | None = None, counted: bool = False) -> Segment | None:
        """Record ``r``'s new messages (after its parent's prompt); its segment, None without a history.

        ``counted``: ``uses`` says how many later requests extend ``r``'s node (None: unknown,
        kept); a node is then forgotten once that many have looked it up, and one no request
        extends is not kept. Either way every request gets the segment it would."""
        if r.prefix is None or r.usage is None or not r.messages:
            return None
        key = r.prefix.parent
        parent = self.segments.get(key) if key is not None else None
        if parent is not None and self._counted:
            left = self._left.get(key)  # type: ignore[arg-type]
            if left is None:
                del self.segments[key]  # type: ignore[arg-type]  (its one lookup)
            elif left > 1:
                self._left[key] = left - 1  # type: ignore[index]
            elif left == 1:
                del self.segments[key], self._left[key]  # type: ignore[arg-type]
        prompt = r.usage.prompt
        start: int | None
        if parent is not None:
            start = None if parent.end <= prompt else prompt  # min(parent's end, prompt)
            first = parent.first_index + parent.count
        else:
            head = self.heads.get(r.prefix.head)
            start = min(prompt, head) if head is not None else max(0, prompt - sum(m.tokens for m in logged(r)))
            first = 0
        segment = Segment(parent, r, start, first)
        node = r.prefix.node
        if counted:
            self._counted = True
            if uses is None:
                self._left[node] = -1
            elif uses > 1:
                self._left[node] = uses
            elif uses == 1:
                self._left.pop(node, None)
            if uses == 0:
                self.segments.pop(node, None)  # (an older segment of the name is not looked up either)
                self._left.pop(node, None)
                return segment
        self.segments[node] = segment
        return segment


def locate(segment: Segment, read: int, r: TraceRequest) -> Location:
    """Where ``r``'s cached prefix ended (``read`` tokens in), on the history ending at ``segment``.

    The message holding token ``read`` is where the read stopped; the first byte that changed lies
    between there and the end of that request's stretch (the next entry a request wrote), so the
    first marked message in that stretch, if any, names the likely change.
    """
    prompt = segment.end
    s: Segment | None = segment.parent if segment.parent is not None else segment
    while s is not None and (read < s.start or not s.count):
        s = s.parent
    snapshot = _snapshot(r)
    if s is None:
        if snapshot is not None:
            return Location(0, "head", read, prompt, "", snapshot[1], snapshot[0])
        return _head(read, prompt, r)
    at_idx = _message_at(s, read)
    message = s.records()[at_idx]
    at_head_end = s.parent is None and at_idx == 0 and read <= s.start * (1 + AT_HEAD_END)
    if at_head_end and snapshot is not None and snapshot[0] != "snapshot-same":
        return Location(0, "head", read, prompt, message.excerpt, snapshot[1], snapshot[0], head_end=s.start)
    if at_head_end and snapshot is not None:
        # The logged snapshots show the head the same: the read kept it, so what changed is past
        # it, in message 1 (a lookback overflow or a mark still named as usual).
        change, kind = _lookback(r), "lookback"
        if not change:
            change, kind = _marked_change(s, at_idx, r)
        return Location(s.first_index + 1, message.role, read, prompt, message.excerpt,
                        f"{change}; {snapshot[1]}" if change else snapshot[1], kind)
    if at_head_end and (tools := _tools(r)):
        # The read fell back to where the head ends, and the log shows the tool list changed on
        # the way (ToolSearch, MCP): Anthropic's own diagnostic calls such a fall, the head kept,
        # ``tools_changed`` (a public Claude Code 2.1.126 session), not a change in message 1.
        return Location(s.first_index + 1, message.role, read, prompt, message.excerpt, tools, "tools")
    change, kind = _lookback(r), "lookback"
    if not change and at_head_end and s.start > 0 and _falls_to_head_end(r):
        return _head_end(s, read, prompt, r)
    if not change:
        change, kind = _marked_change(s, at_idx, r)
    return Location(s.first_index + at_idx + 1, message.role, read, prompt, message.excerpt, change, kind)


def _message_at(s: Segment, read: int) -> int:
    """The index in ``s`` of the message holding token ``read`` (its tokens spread by logged size)."""
    messages = s.records()
    span, total = max(0, s.end - s.start), sum(m.tokens for m in messages)
    at = float(s.start)
    for i, message in enumerate(messages):
        at += span * (message.tokens / total if total else 1 / len(messages))
        if read < at:
            return i
    return len(messages) - 1


def _marked_change(s: Segment, at_idx: int, r: TraceRequest) -> tuple[str, str]:
    """The first marked message from the one the read stopped in to the end of its segment: every
    request wrote an entry at its prompt's end, so the first changed byte lies before that end."""
    messages = s.records()
    for i in range(at_idx, len(messages)):
        message = messages[i]
        mark = next((m for m in MARK_ORDER if m in message.marks), None)
        if mark is None:
            continue
        if i == at_idx:
            return f"it holds {MARKS[mark]}", mark
        excerpt = f': "{message.excerpt}"' if message.excerpt else ""
        return f"message {s.first_index + i + 1} ({message.role}{excerpt}) holds {MARKS[mark]}", mark
    if tools := _tools(r):
        return tools, "tools"
    return "", ""


def _lookback(r: TraceRequest) -> str:
    """The lookback overflow, when ``r`` added more blocks than its provider's breakpoint reaches back."""
    lookback = rules_for(r.provider).lookback_blocks
    if lookback is None or r.prefix is None or r.prefix.new_blocks <= lookback:
        return ""
    return (
        f"a lookback overflow: {r.prefix.new_blocks} new blocks since the last breakpoint, beyond the provider's "
        f"{lookback}-block lookback, so the breakpoint could not find the entry the previous request wrote"
    )


#: A location's kind when the logged prompt snapshots decide the head (Claude Code 2.1.263's
#: ``prompt_snapshot``): its tools changed, its system prompt changed, or neither did.
SNAPSHOT_KINDS = ("tools-snapshot", "system-snapshot", "snapshot-same")

#: The change a location names when the snapshots show the head the same.
SNAPSHOT_SAME = ("the logged prompt snapshot is identical to the lane's previous one (system prompt and tools), so the "
                 "head is not what changed")


#: The change a location names when ``r``'s api-request row shows the head the same as the
#: request it extends (Claude Code 2.1.282 on), by what it shows of the messages.
REQUEST_SAME = ("the logged api-request row has the same system prompt and tools hash as the request it extends, so "
                "the head is not what changed")


def _request_rows(r: TraceRequest) -> tuple[str, str] | None:
    """What ``r``'s api-request row (Claude Code 2.1.282 on) shows against the row it extends, as a
    location's kind and change (the kinds :func:`_snapshot` gives): tools changed, system prompt
    changed, the head changed but the rows do not show which part (kind ``head``, as
    :func:`_head`'s), or the head the same (then with the first changed message, if any); None
    without the rows' events. The head is said the same only when the rows' hashes were equal:
    Claude Code's reader (``_Walk.request_events``) gives a change
    event (tools, system prompt, or ``request_shape_change``) whenever they differ."""
    found = dict(r.events)
    tools, system = found.get("request_tools_change"), found.get("request_system_change")
    messages, shape = found.get("request_messages_change"), found.get("request_shape_change")
    then = f"; {messages}" if messages is not None else ""
    if tools is not None:
        also = f"; its system prompt changed too ({system})" if system is not None else ""
        return "tools-snapshot", f"the logged api-request rows show the tools changed: {tools}{also}{then}"
    if system is not None:
        return "system-snapshot", f"the logged api-request rows show the system prompt changed: {system}{then}"
    if shape is not None:
        return "head", f"the logged api-request rows show {shape}{then}"
    if messages is not None:
        return "snapshot-same", f"{REQUEST_SAME}; the rows show {messages}"
    if "request_same" in found:
        return "snapshot-same", REQUEST_SAME
    return None


def _snapshot(r: TraceRequest) -> tuple[str, str] | None:
    """What the prompt snapshots logged on ``r``'s path show of the head, as a location's kind and
    change: the tools changed (they come first in the prefix, so named first), the system prompt
    changed, or both compared equal to the lane's previous snapshot; None without a snapshot.
    ``r``'s api-request rows, when they show it, decide first (:func:`_request_rows`): they are
    the request's own, a snapshot the last one on its path."""
    if r.events and (rows := _request_rows(r)) is not None:
        return rows
    found = dict(r.events)
    tools, system = found.get("snapshot_tools_change"), found.get("snapshot_system_change")
    if tools is not None:
        also = f"; its system prompt changed too ({system})" if system is not None else ""
        return "tools-snapshot", f"the logged prompt snapshot's tools changed: {tools}{also}"
    if system is not None:
        return "system-snapshot", f"the logged prompt snapshot's system prompt changed: {system}"
    if "snapshot_same" in found:
        return "snapshot-same", SNAPSHOT_SAME
    return None


def _tools(r: TraceRequest) -> str:
    changes = [detail for kind, detail in r.events if kind == "tools_change"]
    return f"the tool list changed (logged: {', '.join(sorted(set(changes)))})" if changes else ""


def _falls_to_head_end(r: TraceRequest) -> bool:
    """Whether ``r``'s log is one whose reads fall back to just past the head's estimated end when
    the head changed (:attr:`~prefixbench.workloads.logs.formats.base.LogFormat.head_end_falls`:
    Claude Code transcripts, where Anthropic's diagnostic said so)."""
    fmt = FORMATS.get(r.source_format)
    return fmt is not None and fmt.head_end_falls


def _head_end(s: Segment, read: int, prompt: int, r: TraceRequest) -> Location:
    """A read that fell back to where the head ends (``s`` a chain's first stretch, the read in its
    first message, within :data:`AT_HEAD_END` past its start), no tool change or lookback overflow
    logged: it stopped at the head, which the log does not hold. The read kept the head to about its
    estimated end, tools first, so what changed lies at the end of the system prompt (the head's
    size is estimated from reads, and the head may end a little past it). Anthropic's diagnostic
    said ``system_changed`` of all four such falls in public Claude Code sessions (2.1.147, 2.1.185; 83 to
    93 tokens past the head); main had put them in message 1 (``messages-changed``). A mark in
    message 1 is named too, as the other candidate."""
    fmt = FORMATS.get(r.source_format)
    change = (fmt.head_changes if fmt is not None else "") or (
        "the end of the system prompt (not in the log): the read kept the head, tools first, to about its estimated end"
    )
    first = s.records()[0]
    mark = next((m for m in MARK_ORDER if m in first.marks), None)
    if mark is not None:
        change += f"; message {s.first_index + 1} holds {MARKS[mark]}, which may have changed instead"
    return Location(0, "head", read, prompt, first.excerpt, change, "head", head_end=s.start)


def _head(read: int, prompt: int, r: TraceRequest) -> Location:
    if tools := _tools(r):
        return Location(0, "head", read, prompt, "", tools, "tools")
    if lookback := _lookback(r):
        return Location(0, "head", read, prompt, "", lookback, "lookback")
    fmt = FORMATS.get(r.source_format)
    known = fmt.head_changes if fmt is not None else ""
    return Location(0, "head", read, prompt, "", known or "the system prompt or the tool list (neither is in the log)", "head")
