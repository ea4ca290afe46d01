"""The ``deepseek`` cache model: DeepSeek V4's disk cache of "cache prefix units".

Rules (DeepSeek's context-caching guide, https://api-docs.deepseek.com/guides/kv_cache, 2026):

* **Key.** An exact token prefix from token 0, per request family.
* **Units.** Because of sliding-window attention the cache stores independent checkpoints,
  "cache prefix units", and a request hits only a unit it *fully* contains. Units are stored
  (1) at the end of each user input (the end of the prompt) and at the end of each model
  output: prompt + reply as soon as the reply is produced (``observe_output``, unless
  ``cache_output`` is off), and the end of every assistant message a prompt replays;
  (2) at a common prefix detected across requests: when a request leaves a stored prefix in
  the middle, the shared part becomes a unit (the doc's ``A+B``, ``A+C`` -> miss, stores
  ``A``; ``A+D`` hits ``A``); (3) every ``interval`` tokens along everything stored. The
  interval is not published: 128 fits 17 of 17 measured hit sizes (64 fits 1-3, and the 2024
  doc's 64-token storage unit); default 128, 64 selectable.
* **Hit.** The deepest unit inside the prefix the request shares with what is stored, at most
  ``prompt - 1`` tokens: the last token is always computed (the measured hits withhold the
  final block). So a re-sent identical prompt of ``n`` tokens reads its deepest interval
  unit below ``n``, and an append-only extension reads up to the previous request's reply.
* **Whole units** (``whole_units``, on by default [M]). Every read DeepSeek's API reported in
  the public traffic measured is a whole number of ``interval`` units, also where the guide's
  wording puts the unit at an input's or an output's end: 26 of 26 reads of deepseek-v4-flash
  through a gateway (an OpenCode database, 2026), 10 of 10 of pydantic-ai's recorded calls to
  DeepSeek's own API (2025-2026), 87 of 87 of an OpenCode session (2026-05), and 59 of 59 of a
  Cline task in the 64-token units of 2025. So a unit at a message end is read down to the
  interval below it (a 935-token prompt extended reads 896). ``whole_units=false`` reads such
  a unit to its token, as the guide's wording alone would.
* **Billing.** No write fee (a miss costs the same as a write): ``written_tokens`` = prompt -
  cached, all of which is stored.
* **Lifetime.** "Hours to days", best effort: no eviction by default; ``ttl_ms`` sets an idle
  lifetime (an entry idle for ``ttl_ms`` or longer is gone; a read refreshes it).

Against the byte-exact reference, which sees prompts only: with ``cache_output`` the next
prompt also reads the reply before it, so a tool loop's hit rate runs above the reference's
(seed-coding: about 93.5% against 89.8% of all prompt tokens); with ``cache_output=False``
every hit lies within the reference's (tests/property/test_cache_models.py).
"""

from __future__ import annotations

from prefixbench.simulator.checks import is_positive_int
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.cache import CacheVerdict
from prefixbench.simulator.prefix_tree import PrefixTree, TreeMatch
from prefixbench.simulator.providers.deepseek import DEFAULT_INTERVAL, INTERVALS
from prefixbench.simulator.render import RenderedRequest, RenderedUnit
from prefixbench.simulator.tokenizer import STREAM_BYTES, Tokenizer, make_tokenizer
from prefixbench.simulator.tokens import TokenizedModel, reply_view, token_view
from prefixbench.simulator.wire import Envelope

__all__ = ["DEFAULT_INTERVAL", "INTERVALS", "DeepSeekCache"]
#: How a rendered assistant message unit begins (render.py).
_ASSISTANT = b'{"role":"assistant"'


class DeepSeekCache(TokenizedModel):
    """DeepSeek prefix units: input ends, output ends, detected common prefixes, fixed intervals."""

    name = "deepseek"

    def __init__(
        self,
        *,
        tokenizer: str | Tokenizer | None = None,
        interval: int = DEFAULT_INTERVAL,
        ttl_ms: int | None = None,
        common_prefix_units: bool = True,
        cache_output: bool = True,
        whole_units: bool = True,
    ) -> None:
        """Args:
        interval: tokens between fixed checkpoints, 64 or 128.
        ttl_ms: idle lifetime of an entry in logical ms; None keeps everything.
        common_prefix_units: store a unit where a request leaves a stored prefix (rule 2).
        cache_output: store the unit at the end of each reply as it is produced (off: the
            reply's unit appears only once a later prompt replays it, as the reference sees it).
        whole_units: a read counts whole ``interval`` units, at a message end's unit too (the
            measured reads); off, a message end's unit is read to its token.

        Raises:
            UserError: a bad option, naming it.
        """
        if interval not in INTERVALS or isinstance(interval, bool):
            raise UserError(f"deepseek: interval must be 64 or 128 (tokens), got {interval!r}")
        if ttl_ms is not None and not is_positive_int(ttl_ms):
            raise UserError(f"deepseek: ttl_ms must be a positive integer (ms), got {ttl_ms!r}")
        if not isinstance(common_prefix_units, bool):
            raise UserError(f"deepseek: common_prefix_units must be true or false, got {common_prefix_units!r}")
        self.tokenizer = make_tokenizer(tokenizer)
        self.interval = interval
        self.ttl_ms = ttl_ms
        self.common_prefix_units = common_prefix_units
        if not isinstance(cache_output, bool):
            raise UserError(f"deepseek: cache_output must be true or false, got {cache_output!r}")
        self.cache_output = cache_output
        if not isinstance(whole_units, bool):
            raise UserError(f"deepseek: whole_units must be true or false, got {whole_units!r}")
        self.whole_units = whole_units
        self._trees: dict[Envelope, PrefixTree] = {}

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Read the deepest fully contained unit, then store the prompt as a unit."""
        del ready_tick  # units are built "in seconds"; that delay is not modelled
        view = token_view(rendered, self.tokenizer)
        tree = self._trees.setdefault(envelope, PrefixTree())
        stale_tick = self._stale_tick(tick)
        found = tree.match(view.stream, stale_tick=stale_tick)
        prompt = view.num_tokens
        reach = max(min(view.tokens_at(found.depth), prompt - 1), 0)
        cached = reach // self.interval * self.interval
        for node in reversed(found.path):
            if node.mark_seq and view.tokens_at(node.depth) <= reach:
                end = view.tokens_at(node.depth)
                cached = max(cached, end // self.interval * self.interval if self.whole_units else end)
                break
        tree.mark(tree.insert(view.stream, tick, stale_tick=stale_tick))  # end of user input
        for unit, end in zip(rendered.units, view.unit_ends):
            # Earlier model outputs replayed in this prompt end units too; those inside the
            # shared prefix were marked when it was stored.
            if found.depth < end < len(view.stream) and unit.data.startswith(_ASSISTANT):
                tree.mark(tree.insert(view.stream[:end], tick))
        if self.common_prefix_units and _leaves_mid_edge(found, len(view.stream)):
            # Rule 2: the request left a stored prefix part-way, so the shared whole tokens
            # become a unit of their own.
            whole = found.depth // STREAM_BYTES * STREAM_BYTES
            if whole > 0:
                tree.mark(tree.insert(view.stream[:whole], tick))
        return CacheVerdict(prompt, cached, prompt - cached)

    def observe_output(self, rendered: RenderedRequest, envelope: Envelope, reply: RenderedUnit, tick: int) -> None:
        """Store the unit at the end of the model's output (prompt + reply)."""
        if not self.cache_output:
            return
        view = reply_view(token_view(rendered, self.tokenizer), reply, self.tokenizer)
        tree = self._trees.setdefault(envelope, PrefixTree())
        tree.mark(tree.insert(view.stream, tick, stale_tick=self._stale_tick(tick)))

    def _stale_tick(self, tick: int) -> int | None:
        return None if self.ttl_ms is None else tick - self.ttl_ms


def _leaves_mid_edge(found: TreeMatch, stream_len: int) -> bool:
    """Whether the request diverges inside a stored edge (not where a stored prefix ends)."""
    at_node = found.depth == (found.path[-1].depth if found.path else 0)
    return 0 < found.depth < stream_len and not at_node
