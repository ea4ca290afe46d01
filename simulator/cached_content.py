"""Gemini explicit caching: named ``CachedContent`` objects an agent creates and cites.

The rules are Gemini's (:mod:`prefixbench.simulator.providers.gemini`, from
https://ai.google.dev/gemini-api/docs/caching): the client creates a cached content of some
leading part of its prompt, with a TTL (1 h unless set); a request that cites it pays its tokens
at the cached rate (0.1x), and the content is billed for storage per token-hour for as long as
it lives. Creating it bills its tokens as input. This module is the agent's side of that deal as
well, since a scripted workload sends plain requests: :class:`CachedContentCache` decides when
the agent creates a content and which one a request cites.

* **Cut point** (``at``). ``history``: everything before the request's newest message (tools,
  system, and the older history); ``head``: tools and system only.
* **Cite.** A request cites the longest live content of its family (the
  :class:`~prefixbench.simulator.wire.Envelope`) whose bytes its prompt starts with: its
  ``cached_tokens`` are that content's tokens, all of them explicit (``cached_explicit_tokens``).
* **Create.** When no live content fits, or the cut point has moved ``refresh`` tokens past the
  one cited (``double``: as many tokens as the cited content holds, so contents grow
  geometrically), the agent creates a content at the cut point, if it has at least the model's
  minimum (the same per-model table as implicit caching). Creating is a call of its own
  (``caches.create``): its tokens are ``created_tokens``, outside the prompt, billed at the input
  price; the request it comes with still cites the best content that was live before (the new
  one serves the requests after it, so no read exceeds what an earlier request sent: a
  conservative choice, since a real agent would cite the new content at once). The creating
  request pays the storage of the content's whole life: ``stored_token_ms`` = tokens x TTL (the
  agent never deletes a content or extends its TTL).
* **Expiry.** A content is gone ``ttl_ms`` after its creation, used or not; the next request
  creates a new one.
* **Implicit.** Implicit caching never applies to a request that cites or creates a content; a
  request that does neither (its cut point is under the minimum) goes through the implicit
  model (:class:`~prefixbench.simulator.automatic.AutomaticCache`), which stores only those.

Every read is a prefix an earlier request of the family sent, so no read exceeds what the
byte-exact reference serves (``tests/property/test_cache_models.py``).
"""

from __future__ import annotations

from typing import Literal, get_args

from prefixbench.simulator.automatic import AutomaticCache
from prefixbench.simulator.cache import CacheVerdict
from prefixbench.simulator.checks import is_positive_int
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.render import RenderedRequest
from prefixbench.simulator.tokenizer import Tokenizer, make_tokenizer
from prefixbench.simulator.tokens import TokenizedModel, TokenView, token_view
from prefixbench.simulator.wire import Envelope

CutPoint = Literal["history", "head"]
#: ``refresh`` value that creates a new content once the cut point has doubled the cited one.
DOUBLE = "double"

__all__ = ["CachedContentCache"]


class _Content:
    """One live cached content: the stream bytes it holds, its tokens and when it expires."""

    __slots__ = ("stream", "tokens", "expires")

    def __init__(self, stream: bytes, tokens: int, expires: int) -> None:
        self.stream = stream
        self.tokens = tokens
        self.expires = expires


class CachedContentCache(TokenizedModel):
    """Explicit ``CachedContent`` objects with a TTL and storage, and implicit caching beside."""

    def __init__(
        self,
        *,
        name: str = "cached-content",
        tokenizer: str | Tokenizer | None = None,
        ttl_ms: int = 3_600_000,
        at: CutPoint = "history",
        refresh: int | str = DOUBLE,
        implicit: AutomaticCache | None = None,
    ) -> None:
        """Args:
        ttl_ms: a content's lifetime from its creation (logical ms).
        at: ``history`` or ``head``, where the agent cuts the content (see the module doc).
        refresh: tokens the cut point must move past the cited content before the agent creates
            a new one, or ``double``.
        implicit: the implicit model for requests that neither cite nor create a content; its
            per-model minimums are the contents' too (None: a default Gemini-less one, minimum 0).

        Raises:
            UserError: a bad option, naming it.
        """
        self.name = name
        if not is_positive_int(ttl_ms):
            raise UserError(f"{name}: explicit_ttl_ms must be a positive integer (ms), got {ttl_ms!r}")
        if at not in get_args(CutPoint):
            raise UserError(f"{name}: explicit_at must be one of {', '.join(get_args(CutPoint))}, got {at!r}")
        if refresh != DOUBLE and (isinstance(refresh, bool) or not isinstance(refresh, int) or refresh < 1):
            raise UserError(f"{name}: explicit_refresh must be {DOUBLE!r} or a positive number of tokens, got {refresh!r}")
        self.tokenizer = make_tokenizer(tokenizer)
        self.ttl_ms = ttl_ms
        self.at: CutPoint = at
        self.refresh = refresh
        self.implicit = implicit or AutomaticCache(name=name, tokenizer=self.tokenizer)
        self._contents: dict[Envelope, list[_Content]] = {}
        #: Contents created so far (for reports and tests).
        self.created = 0

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Cite the longest live content the prompt starts with, or create one, or go implicit."""
        del ready_tick
        view = token_view(rendered, self.tokenizer)
        live = [c for c in self._contents.get(envelope, ()) if c.expires > tick]
        self._contents[envelope] = live
        cited = max((c for c in live if view.stream.startswith(c.stream)), key=lambda c: c.tokens, default=None)
        cut = self.cut_depth(rendered, view)
        cut_tokens = view.tokens_at(cut)
        minimum = self.implicit.minimum(envelope.model)
        prompt = view.num_tokens
        creates = cut_tokens >= max(minimum, 1) and self._refreshes(cited, cut_tokens)
        if creates:
            live.append(_Content(view.stream[:cut], cut_tokens, tick + self.ttl_ms))
            self.created += 1
        if not creates and cited is None:
            return self.implicit.observe_view(rendered, view, envelope, tick)
        read = 0 if cited is None else cited.tokens
        return CacheVerdict(
            prompt, read, 0, cached_explicit_tokens=read,
            stored_token_ms=cut_tokens * self.ttl_ms if creates else 0, created_tokens=cut_tokens if creates else 0,
        )

    def cut_depth(self, rendered: RenderedRequest, view: TokenView) -> int:
        """Stream depth where the agent cuts a content of this request."""
        if self.at == "head":
            return view.unit_ends[rendered.first_message_unit - 1] if rendered.first_message_unit > 0 else 0
        return view.unit_ends[-2] if len(view.unit_ends) >= 2 else 0

    def _refreshes(self, cited: _Content | None, cut_tokens: int) -> bool:
        if cited is None:
            return True
        step = cited.tokens if self.refresh == DOUBLE else self.refresh
        return cut_tokens - cited.tokens >= step  # type: ignore[operator]
