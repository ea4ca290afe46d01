"""A provider prefix cache over *chains* of opaque segments, for logs that carry no request bodies.

An agent log without bodies (a Claude Code transcript, a pi session, a Codex rollout) still
says which earlier call each call's prompt extends, and how many tokens each prompt had. That is
enough to run a provider's cache rules: a prompt is ``head + node_1 + ... + node_k``, where the
head is the unlogged system prompt + tools (shared by every prompt with the same ``head`` key)
and each node is the prompt of an earlier call this one extends. An entry stored at a node holds
that call's cacheable prefix, ``tokens`` long, under a request family (model, effort...).

Rules per provider (the same facts as the byte-level models, read from the provider's rule
object in :mod:`prefixbench.simulator.providers`):

* ``anthropic``: an entry is written at the end of each call's cacheable prefix and, when the
  head size is known, at the head (Claude Code puts breakpoints on the system blocks). A call
  reads the longest usable entry on its chain, else the head. An entry is usable from the moment
  the response that wrote it begins (``ready``) until its TTL (5 min or 1 h) runs out, counted
  from the request's start (the rules' ``ttl_from``: a long response uses up part of it; Qwen's
  counts from the response's end, where the log says when); every read
  pushes the expiry of the entry it hit (and of the head) on; entries further back on the chain
  keep their own last use, so a later branch back to one of them is judged by that. A chain's
  first call whose own node a reader named by content (``BY_CONTENT``) and holds a usable entry
  (an earlier call of the same name: the same prompt, sent again) reads it. Below the model's minimum cacheable length nothing is read or written.
  A breakpoint checks 20 block boundaries back: an entry more than ``lookback_blocks`` blocks
  behind the call's end is not found.
* ``openai``: prefix caching is automatic: the whole prompt is stored; a hit needs 1,024 tokens
  and counts in 128-token steps; entries live the TTL the caller passes for each call after
  their last use: OpenAI decides it per request (the audit passes the label
  ``ProviderRules.ttl_label`` gives: ``in_memory`` 10 min, the upper end of the documented
  5-10 min, ``24h`` extended retention, ``30m`` from GPT-5.6, ``12h`` on GPT-6.2 Sol where
  asked), as in the byte-level ``openai``
  model; no write fee.
* ``deepseek``: 128-token units, no write fee, no TTL within a session's time span.

Keys are strings chosen by the caller; the model never looks inside them. The walk back along a
chain stops after ``max_walk`` nodes (prompts that share only an older ancestor are rare; a
longer walk would make long chains quadratic).

A caller that sends its calls in tick order (``in_order``: the audit's replay, in send order) lets
the model forget what an expired entry held: once a call's tick is past an entry's expiry and
its answer's start (an answer can begin after a TTL counted from the send ends: until then a call
is in flight, not expired), no later call can read it, push its expiry on or store into it but as a new entry, so all a walk
back still asks of it is whether it would have served had it not expired (the ``ttl-expired``
cause): its prompt's tokens. Each time the entries stored since the last sweep reach those alive
after it (``SWEEP_AT_LEAST`` at the least), the expired ones become that one int, a *tombstone*:
the model then holds a few bytes, not an entry, for every node of an audit whose cache has moved
on. A sweep visits the entries alive after the last one and those stored since, no tombstone.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from prefixbench.simulator.providers import rules_for
from prefixbench.simulator.providers.base import ProviderRules, TtlFrom


class _Entry(msgspec.Struct, gc=False):  # ints only: no cycle (an entry a request; 16 bytes less each)
    tokens: int
    ttl_ms: int | None
    ready: int
    expiry: int | None
    #: Of ``tokens``, those of the response after the prompt (a provider that caches its output).
    output: int = 0

    def usable(self, tick: int) -> bool:
        return self.ready <= tick and (self.expiry is None or tick < self.expiry)


#: An expired entry of a model that forgets them (``in_order``): the tokens of the prompt it held
#: (``tokens - output``), all a walk back asks of it.
_Tombstone = int

#: Entries stored between two sweeps at the least.
SWEEP_AT_LEAST = 256


#: The start of a node name a reader gives by what its call sends (the same prompt, sent again,
#: names the same node: Claude Code's lane starts, ``cc-start:``): a chain's first call at such a
#: node reads the entry an earlier call left there. No other node is read by a call without a parent.
BY_CONTENT = "by-content:"


class ChainVerdict(msgspec.Struct, frozen=True):
    """What the model predicts for one call."""

    read: int
    write: int
    #: ``node``: an entry on the chain; ``head``: the shared head; ``none``: nothing usable.
    source: Literal["node", "head", "none"]
    #: An entry that would have served was still being written (its response had not begun).
    in_flight: bool = False
    #: An entry that would have served had expired.
    expired: bool = False


class ChainCache:
    """One provider's cache over chains of opaque segments (see the module doc)."""

    def __init__(
        self,
        provider: ProviderRules | str,
        *,
        max_walk: int = 64,
        lookback_blocks: int | None = None,
        ttl_from: TtlFrom | None = None,
        in_order: bool = False,
    ) -> None:
        """Args:
        provider: the provider's rules (or its name in ``PROVIDERS``).
        max_walk: nodes walked back along a chain at most.
        lookback_blocks: overrides the rules' breakpoint lookback (None: the rules', if any).
        ttl_from: overrides where the rules count a new entry's lifetime from (``start`` or ``response``).
        in_order: the caller never observes a call at an earlier tick than one before it: expired
            entries are kept as tombstones (see the module doc); a call out of order is an error.
        """
        self.rules = rules_for(provider) if isinstance(provider, str) else provider
        self.ttl_from: TtlFrom = self.rules.ttl_from if ttl_from is None else ttl_from
        self.max_walk = max_walk
        self.lookback_blocks = self.rules.lookback_blocks if lookback_blocks is None else lookback_blocks
        #: Entries by family, then by node or head key (a dict a family, not a (family, key)
        #: tuple a request: the model keeps an entry for every node of an audit); an expired one
        #: as its tombstone when ``in_order``.
        self._entries: dict[str, dict[str, _Entry | _Tombstone]] = {}
        #: Those of the families' nodes, not their heads' (what :meth:`forget` clears).
        self._node_tables: list[dict[str, _Entry | _Tombstone]] = []
        self.in_order = in_order
        #: The latest tick observed (``in_order``); the entries a sweep visits (each by its table
        #: and key, once), and how many there are when the next sweep runs.
        self._now: float = float("-inf")
        self._live_tables: list[dict[str, _Entry | _Tombstone]] = []
        self._live_keys: list[str] = []
        self._sweep_at = SWEEP_AT_LEAST
        #: Each node's parent, and its new blocks where not 1 (two dicts, not a tuple a node: the
        #: model keeps every node of an audit).
        self._parent: dict[str, str | None] = {}
        self._blocks: dict[str, int] = {}
        #: Per model, what the rules say of it (looked up once, not once a call): the most a request
        #: may have cached, the minimum a prompt needs (None: the minimum bounds reads, not
        #: prompts), the read step, and the family of its head entries.
        self._models: dict[str, tuple[int | None, int | None, int, str]] = {}
        #: A model's minimum by the era of the provider's dated tables a call falls in.
        self._dated: dict[tuple[str, int], int] = {}
        #: Each TTL's lifetime.
        self._ttls: dict[str, int | None] = {}

    def _ttl(self, ttl: str) -> int | None:
        if ttl in self._ttls:
            return self._ttls[ttl]
        found = self._ttls[ttl] = self.rules.ttl_ms(ttl)
        return found

    def _model(self, model: str) -> tuple[int | None, int | None, int, str]:
        facts = self._models.get(model)
        if facts is None:
            rules = self.rules
            minimum = rules.min_cacheable(model) if rules.min_applies_to == "prompt" else None
            facts = self._models[model] = (rules.max_cached(model), minimum, rules.read_step(model), f"head:{model}")
        return facts

    def observe(
        self,
        *,
        family: str,
        head: str,
        head_tokens: int | None,
        node: str,
        parent: str | None,
        new_blocks: int,
        cacheable: int,
        model: str,
        tick: int,
        ready: int,
        ttl: str = "5m",
        head_warm: bool = False,
        output: int = 0,
        output_written: bool = False,
        step: int = 0,
        offset: int = 0,
        shared: int | None = None,
        sent_ms: int | None = None,
        done: int | None = None,
        grid_output: bool = False,
    ) -> ChainVerdict:
        """Price one call whose cacheable prompt is ``cacheable`` tokens, then store its entries.

        ``head_warm``: the head is kept warm by traffic outside the log (the account's other
        sessions): it is readable at any tick, never in flight, never expired.
        ``output``: the response's tokens that the next call of the chain sends back right after
        this prompt; kept in this call's entry when the rules' cache keeps output
        (``caches_output``), so that a call whose prompt holds this prompt + output reads them all,
        and a shorter one (the response not sent back whole) this prompt only.
        ``output_written``: a call outside the log wrote this prompt and ``output`` after it (an
        agent's own background call), so they are kept whatever the rules say of output.
        ``step``: the read step the call's endpoint counts in, where it and not the model decides it;
        ``offset``: where that step's grid starts, where the audit learned one from the log.
        ``grid_output``: on such a grid the response is kept all the same (the calls before the
        release whose sessions read on without it: ``prefixbench.workloads.audit.grid.keeps_output``).
        ``shared``: the tokens of ``parent``'s prompt this prompt keeps, where it drops the rest
        (None: all): a read through ``parent`` stops there.
        ``sent_ms``: when the call was sent (epoch ms), where the provider's minimum changed over
        time (:attr:`~.providers.base.ProviderRules.min_tokens_before`; None: today's).
        ``done``: the tick the response ended, where the log says (lifetimes counted from it with
        ``ttl_from='end'``)."""
        return self.observe_positional(family, head, head_tokens, node, parent, new_blocks, cacheable, model, tick, ready, ttl,
                                     head_warm, output, output_written, step, offset, shared, sent_ms, done, grid_output)

    def observe_positional(self, family: str, head: str, head_tokens: int | None, node: str, parent: str | None,
                         new_blocks: int, cacheable: int, model: str, tick: int, ready: int, ttl: str, head_warm: bool,
                         output: int, output_written: bool, step: int, offset: int, shared: int | None,
                         sent_ms: int | None, done: int | None, grid_output: bool = False) -> ChainVerdict:
        """:meth:`observe` with every argument given by position, in the order above (the audit's
        predictor calls it once a request: matching 19 keywords took about 1.1 us a call)."""
        if self.in_order:
            if tick < self._now:
                raise ValueError(f"ChainCache(in_order=True): a call at tick {tick} after one at {self._now}")
            self._now = tick
            if len(self._live_keys) >= self._sweep_at:
                self._sweep(tick)
        self._parent[node] = parent
        if new_blocks != 1:
            self._blocks[node] = new_blocks
        else:
            self._blocks.pop(node, None)
        rules = self.rules
        facts = self._model(model)
        usable = self._usable(model, facts, cacheable, sent_ms)
        if usable is None:
            return ChainVerdict(0, 0, "none")
        cacheable = usable
        cap, _, model_step, head_family = facts
        read, source, in_flight, expired = 0, "none", False, False
        hit: _Entry | None = None
        cursor, blocks, steps = parent, new_blocks, 0
        entries, parents, lookback, max_walk = self._table(family), self._parent, self.lookback_blocks, self.max_walk
        if parent is None and node.startswith(BY_CONTENT):
            # A chain's first call whose node an earlier call named (the same prompt sent again,
            # another session's: a reader names such a node by what it sends, marked
            # BY_CONTENT) reads that call's entry while it lives, at the breakpoint that call
            # wrote at its end. Other nodes are a reader's own names: a call without a parent
            # there reads no entry at its node.
            own = entries.get(node)
            if type(own) is _Tombstone:
                if own <= cacheable:
                    expired = True
            elif own is not None and own.tokens - own.output <= cacheable:
                if own.usable(tick):
                    read, source, hit = own.tokens - own.output, "node", own
                elif own.ready > tick:
                    in_flight = True
                else:
                    expired = True
        while cursor is not None and steps < max_walk:
            if lookback is not None and blocks > lookback:
                break
            entry = entries.get(cursor)
            keeps = shared is not None and cursor == parent and shared <= cacheable  # (of the parent's, a part)
            if entry is None:
                pass
            elif type(entry) is _Tombstone:
                if entry <= cacheable or keeps:
                    expired = True
            elif entry.tokens - entry.output <= cacheable or keeps:
                if entry.usable(tick):
                    # The response's tokens count only when the prompt holds them all (a prompt
                    # shorter than prompt + output did not send the response back whole).
                    whole = entry.tokens if entry.tokens <= cacheable else entry.tokens - entry.output
                    read, source, hit = whole if shared is None else min(whole, shared), "node", entry
                    break
                if entry.ready > tick:
                    in_flight = True
                else:
                    expired = True
            if cursor in parents:
                cursor, more = parents[cursor], self._blocks.get(cursor, 1)
            else:
                cursor, more = None, 0
            blocks += more
            steps += 1
        heads = self._table(head_family)
        if head_tokens is not None and head_tokens <= cacheable:
            head_entry = heads.get(head)
            if read < head_tokens and head_warm:
                read, source, hit = head_tokens, "head", None
                in_flight = expired = False
            elif read < head_tokens and type(head_entry) is _Tombstone:
                expired = True
            elif read < head_tokens and head_entry is not None:
                if head_entry.usable(tick):
                    read, source, hit = head_tokens, "head", head_entry
                elif head_entry.ready > tick:
                    in_flight = True
                else:
                    expired = True
        # The endpoint's step, where it decides, wins over the model's (looked up once above).
        read = rules.round_read(read, step=step or model_step, offset=offset)
        ttl_ms = self._ttl(ttl)
        ended = done if self.ttl_from == "end" and done is not None else None
        if hit is not None:
            if ttl_ms is not None and hit.expiry is not None:
                hit.expiry = max(hit.expiry, (tick if ended is None else ended) + (hit.ttl_ms or ttl_ms))
            if head_tokens is not None and source == "node":
                self._touch(heads, head, tick, ended)
        # A grid learned from the log's reads: those sessions never read into a response (see
        # prefixbench.workloads.audit.grid), so none is kept, but where the audit says they do
        # (``grid_output``: Codex before 0.122.0, measured).
        kept = output if (rules.caches_output or output_written) and cap is None and (not offset or grid_output) else 0
        self._store(entries, node, cacheable + kept if kept else cacheable, ttl_ms, tick, ready, kept, ended)
        if head_tokens is not None and head_tokens <= cacheable:
            self._store(heads, head, head_tokens, ttl_ms, tick, ready, 0, ended)
        write = cacheable - read if rules.bills_writes else 0
        return ChainVerdict(read, write, source, in_flight and source == "none", expired and source != "node")

    def _usable(self, model: str, facts: tuple[int | None, int | None, int, str], cacheable: int, sent_ms: int | None) -> int | None:
        """The part of a call's ``cacheable`` prompt the model may cache, None below its minimum
        (the call reads and writes nothing); ``facts``: :meth:`_model`'s of it."""
        rules = self.rules
        cap, minimum, _, _ = facts
        if minimum is not None and sent_ms is not None and rules.min_tokens_before:
            # The minimum of the page in force when it was sent (Gemini's): once a model and era.
            era = (model, sum(sent_ms >= until for until, _ in rules.min_tokens_before))
            dated = self._dated.get(era)
            if dated is None:
                dated = self._dated[era] = rules.min_cacheable(model, sent_ms)
            minimum = dated
        if cap is not None:
            cacheable = min(cacheable, cap)  # the most one request may have cached (Nova: 20K)
        if minimum is not None and cacheable < minimum:
            return None
        return cacheable

    def stores_head(self, *, model: str, head_tokens: int | None, cacheable: int, sent_ms: int | None = None) -> bool:
        """Whether :meth:`observe` with these arguments stores an entry at the head (whatever the
        model holds: it depends on the call alone)."""
        usable = self._usable(model, self._model(model), cacheable, sent_ms)
        return usable is not None and head_tokens is not None and head_tokens <= usable

    def expire_head(self, *, model: str, head: str, head_tokens: int) -> None:
        """The head's entry was stored by calls this model did not observe and has expired by the
        next call observed: where the model holds no entry there, it holds that entry's tombstone
        (a walk back finds it expired, as it would the entry). An entry it holds is left alone
        (the caller knows it expired too)."""
        self._table(self._model(model)[3]).setdefault(head, head_tokens)

    def forget(self, node: str) -> None:
        """Drop what the model holds of ``node`` (its parent, blocks and entries): the caller
        knows no later call's walk back reaches it (see :class:`~prefixbench.workloads.audit.core.Predictor`).
        The head's entries are kept."""
        self._parent.pop(node, None)
        self._blocks.pop(node, None)
        for table in self._node_tables:
            table.pop(node, None)

    def _table(self, family: str) -> dict[str, _Entry | _Tombstone]:
        """The entries of ``family`` (made at its first use)."""
        table = self._entries.get(family)
        if table is None:
            table = self._entries[family] = {}
            if not family.startswith("head:"):
                self._node_tables.append(table)
        return table

    def _touch(self, table: dict[str, _Entry | _Tombstone], key: str, tick: int, ended: int | None = None) -> None:
        """A read of the entry at ``key``: its expiry pushed on from ``tick`` (from ``ended``, the
        response's end, where the lifetime counts from there)."""
        entry = table.get(key)
        if type(entry) is _Entry and entry.usable(tick) and entry.expiry is not None and entry.ttl_ms is not None:
            entry.expiry = max(entry.expiry, (tick if ended is None else ended) + entry.ttl_ms)

    def _store(self, table: dict[str, _Entry | _Tombstone], key: str, tokens: int, ttl_ms: int | None, tick: int,
               ready: int, output: int = 0, ended: int | None = None) -> None:
        """Store (or refresh) the entry at ``key``; ``ended``: the response's end, where the
        lifetime counts from there (``ttl_from='end'`` and the log says when)."""
        entry = table.get(key)
        start = self.ttl_from == "start"
        fresh = entry is None or type(entry) is _Tombstone
        if fresh or (entry.expiry is not None and entry.expiry <= tick):  # type: ignore[union-attr]
            since = ended if ended is not None else tick if start else ready
            table[key] = _Entry(tokens, ttl_ms, ready, None if ttl_ms is None else since + ttl_ms, output)
            if fresh and self.in_order:  # (an entry replaced is on the list already)
                self._live_tables.append(table)
                self._live_keys.append(key)
            return
        if entry.ready > tick:
            entry.ready = min(entry.ready, ready)
        if ttl_ms is not None and entry.expiry is not None:
            entry.ttl_ms = max(entry.ttl_ms or 0, ttl_ms)
            since = ended if ended is not None else tick if start else max(tick, entry.ready)
            entry.expiry = max(entry.expiry, since + ttl_ms)

    def _sweep(self, tick: int) -> None:
        """Every entry expired by ``tick`` and answered by then made its tombstone (``in_order``: no
        later call comes before it). An entry whose answer has not begun stays one, expired or not:
        a call before its answer is in flight (a TTL counted from the send can end first)."""
        tables: list[dict[str, _Entry | _Tombstone]] = []
        keys: list[str] = []
        for table, key in zip(self._live_tables, self._live_keys):
            entry = table.get(key)
            if entry is None:
                continue  # forgotten (:meth:`forget`)
            if entry.expiry is not None and entry.expiry <= tick and entry.ready <= tick:  # type: ignore[union-attr]  (on the list: an entry)
                # (the entry's own int where it holds no output: no new int a tombstone)
                table[key] = entry.tokens - entry.output if entry.output else entry.tokens  # type: ignore[union-attr]
            else:
                tables.append(table)
                keys.append(key)
        self._live_tables, self._live_keys = tables, keys
        self._sweep_at = len(keys) + max(SWEEP_AT_LEAST, len(keys))
