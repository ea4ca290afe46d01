"""Explicit caches in the audit: what creating and keeping them cost, and who read them.

An explicit cache (Gemini ``cachedContent``) is billed apart from the requests that read it
(https://ai.google.dev/gemini-api/docs/caching): its tokens once at the input price when it is
created, and storage per token-hour for as long as it is kept. A log shows that as a creation
(:class:`~prefixbench.workloads.logs.trace.ExplicitCache`, from the importer); this module prices
each one through the one cost seam, :func:`~prefixbench.simulator.pricing.cost_of` (its
``created_tokens`` and ``stored_token_ms``: the cache-write and storage lines of a
:class:`~prefixbench.simulator.pricing.CostBreakdown`), counts the requests that read it, and says
what the log cannot tell: a cache read but never created in these logs (its creation and storage
are not in the dollars), a lifetime the log does not show, a model without a storage price.

A creation is not a request: it is in no lane, no hit ratio, no loss; its dollars are in the
totals (``cache_create_usd``, ``storage_usd``, and ``cost_usd``), its file's and its model's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Container, Sequence
from datetime import UTC, datetime
from decimal import Decimal

import msgspec

from prefixbench.simulator.pricing import PriceRow, cost_of, format_usd, usd_sum
from prefixbench.workloads.logs.trace import ExplicitCache, FileSummary, TraceRequest

#: The price row in force for a model at a time (the audit's ``Prices.row``).
RowOf = Callable[[str, "int | None"], "PriceRow | None"]
_HOUR_MS = 3_600_000


class ExplicitCacheRow(msgspec.Struct, frozen=True):
    """One explicit cache a log created, priced (``audit --format json``: ``explicit_caches``).

    ``kept_hours`` None: the log does not show how long it was kept, and ``storage_usd`` is None
    (unknown); ``create_usd`` and ``storage_usd`` None as well where the model has no price row,
    ``storage_usd`` where its row names no storage price.
    """

    file: str
    line: int
    name: str
    provider: str
    model: str
    tokens: int
    created: str | None
    kept_hours: float | None
    #: ``expiry``, ``delete`` or ``update`` (what set its end last).
    ended_by: str
    #: Requests of the audit that read it, and the tokens they read from it.
    reads: int
    read_tokens: int
    create_usd: Decimal | None
    storage_usd: Decimal | None


class _Creation(msgspec.Struct, frozen=True):
    """A creation as :func:`cost_of` reads it: no prompt of its own, ``created_tokens`` at the
    input price and ``stored_token_ms`` at the storage price."""

    created_tokens: int
    stored_token_ms: int
    prompt_tokens: int = 0
    cached_tokens: int = 0
    written_tokens: int = 0
    written_long_tokens: int = 0
    output_tokens: int = 0


def price_caches(summaries: Sequence[FileSummary], requests: Sequence[TraceRequest], row_of: RowOf) -> tuple[ExplicitCacheRow, ...]:
    """Every explicit cache the files created, priced at the row in force when it was created."""
    reads: dict[str, list[int]] = defaultdict(list)
    for r in requests:
        if r.explicit_cache is not None and r.usage is not None:
            reads[r.explicit_cache].append(r.usage.cache_read_explicit)
    return tuple(_priced(cache, reads.get(cache.name, []), row_of) for summary in summaries for cache in summary.explicit_caches)


def _priced(cache: ExplicitCache, reads: list[int], row_of: RowOf) -> ExplicitCacheRow:
    row = row_of(cache.model, cache.created_ms)
    create = storage = None
    if row is not None:
        cost = cost_of(_Creation(cache.tokens, cache.tokens * (cache.kept_ms or 0)), row)
        create = cost.cache_write
        storage = cost.storage if cache.kept_ms is not None and row.storage is not None else None
    return ExplicitCacheRow(
        file=cache.file,
        line=cache.line,
        name=cache.name,
        provider=cache.provider,
        model=cache.model,
        tokens=cache.tokens,
        created=None if cache.created_ms is None else _iso(cache.created_ms),
        kept_hours=None if cache.kept_ms is None else cache.kept_ms / _HOUR_MS,
        ended_by=cache.ended_by,
        reads=len(reads),
        read_tokens=sum(reads),
        create_usd=create,
        storage_usd=storage,
    )


def cost_by(caches: Sequence[ExplicitCacheRow], key: Callable[[ExplicitCacheRow], str]) -> dict[str, Decimal]:
    """The caches' dollars (creation and storage) summed by ``key``."""
    out: dict[str, Decimal] = defaultdict(Decimal)
    for cache in caches:
        out[key(cache)] = usd_sum([out[key(cache)], cache.create_usd or Decimal(0), cache.storage_usd or Decimal(0)])
    return out


def known_sum(caches: Sequence[ExplicitCacheRow], field: str) -> Decimal | None:
    """The caches' ``field`` (``create_usd`` or ``storage_usd``) summed over those whose log and
    price row give it; None where there are caches and none gives it (unknown, not $0)."""
    known = [value for value in (getattr(c, field) for c in caches) if value is not None]
    return None if caches and not known else usd_sum(known)


def usd_or_unknown(value: Decimal | None) -> str:
    """``$0.0300``, or ``unknown`` for None."""
    return "unknown" if value is None else format_usd(value)


def read_detail(r: TraceRequest, created: Container[str]) -> str:
    """What a request that read an explicit cache says about it ("" for any other)."""
    if r.explicit_cache is None or r.usage is None:
        return ""
    text = f"read {r.usage.cache_read_explicit:,} tokens from the explicit cache {r.explicit_cache} (priced at the explicit read rate)"
    if r.explicit_cache not in created:
        text += "; its creation is not in these logs: its creation and storage are unknown"
    return text


def notes(caches: Sequence[ExplicitCacheRow], requests: Sequence[TraceRequest]) -> list[str]:
    """What the report must say about explicit caches: what they cost, what is unknown."""
    out = []
    if caches:
        create, storage = known_sum(caches, "create_usd"), known_sum(caches, "storage_usd")
        hours = sum(c.kept_hours or 0.0 for c in caches)
        out.append(
            f"{len(caches)} explicit cache(s) created in these logs ({sum(c.tokens for c in caches):,} tokens, kept "
            f"{hours:,.2f} h in all): {usd_or_unknown(create)} to create (input price) and {usd_or_unknown(storage)} storage, in the totals' "
            "dollars but in no request, lane or hit ratio"
        )
        unknown = [c.name for c in caches if c.kept_hours is None]
        if unknown:
            out.append(f"storage unknown for {', '.join(unknown)}: the log does not show how long it was kept")
        unpriced = sorted({c.model for c in caches if c.create_usd is not None and c.storage_usd is None and c.kept_hours is not None})
        if unpriced:
            out.append(f"no storage price for {', '.join(unpriced)}: its explicit caches' storage is left out")
    created = {c.name for c in caches}
    missing: dict[str, int] = defaultdict(int)
    for r in requests:
        if r.explicit_cache is not None and r.explicit_cache not in created:
            missing[r.explicit_cache] += 1
    if missing:
        names = ", ".join(f"{name} ({n} request(s))" for name, n in sorted(missing.items()))
        out.append(
            f"explicit cache(s) read but not created in these logs: {names}: their reads are priced at the explicit "
            "read rate; their creation and storage are not in the dollars (storage unknown)"
        )
    return out


def _iso(ms: int) -> str:
    if ms < 1e11:  # a relative clock, as the audit's own times
        return f"+{ms}ms"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
