"""Versioned price table (``data/prices.csv``) and the dollar cost of one request.

Prices are USD per 1M tokens, one row per (model, effective date), each with its source and
how solid that source is. One request costs

    uncached input   (prompt - cached - written) tokens at the input price
    cache read       cached tokens at the read price
    cache read       cached tokens at the read price; the part read from an explicit cache
                     (``cached_explicit_tokens``) at the explicit-read price where the row has one
    cache write      (written - written_long) at the write price, written_long at the 1 h price
    output           output tokens at the output price
    storage          ``stored_token_ms`` (tokens x milliseconds an explicit cache is kept) at the
                     storage price per 1M tokens per hour; its own line, never folded into input

An explicit cache the agent creates beside a request (Gemini ``caches.create``, a call of its
own: ``created_tokens``, outside the prompt) bills its tokens at the input price of a prompt that
size, in the cache-write part (it is what writing that cache costs).

A model that bills no write fee (empty ``cache_write``) bills its written tokens as uncached
input, which is how its invoice shows them (DeepSeek calls them cache misses), so its cache-write
part is always zero. A row with a long-context tier bills every part of a request at the tier
prices once the prompt has more than ``long_threshold`` tokens.

DeepSeek bills peak hours at twice the listed (off-peak) price. The simulator's clock is logical,
so the period is an option (default ``off-peak``), not read from a tick; :func:`deepseek_period`
maps a real UTC time to its period for traces that carry one.

Arithmetic is exact (:class:`~decimal.Decimal` under a context that traps rounding), so the same
run gives byte-identical reports; rounding happens only in :func:`format_usd`, and in storage,
whose token-hours (a lifetime in ms over 3,600,000) can be a repeating decimal: a storage amount
is rounded half-even to 10^-18 USD.

The columns ``explicit_read``, ``long_explicit_read`` and ``storage`` came later: a file whose
header stops at ``note`` (without them) still reads, and so does a row that stops there; they
are empty then.
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Iterable
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Context, Decimal, Inexact, InvalidOperation, localcontext
from pathlib import Path
from typing import Literal, Protocol, get_args

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import PlainUsage as _PlainUsage, Usage as _Usage

#: The highest price a cell may hold (USD per 1M tokens, or per 1M tokens an hour): far above any
#: model's, and low enough that every cost stays exact in the Decimal context.
MAX_PRICE = 1_000_000

Period = Literal["off-peak", "peak"]
Evidence = Literal["official", "secondary", "inferred", "unconfirmed"]

PERIODS: tuple[Period, ...] = get_args(Period)
EVIDENCE: tuple[Evidence, ...] = get_args(Evidence)
#: The simulator has no wall clock; off-peak is the price an unattended benchmark usually pays.
DEFAULT_PERIOD: Period = "off-peak"

#: The columns of the price file, in order.
COLUMNS = (
    "provider",
    "model",
    "aliases",
    "effective",
    "input",
    "cache_read",
    "cache_write",
    "cache_write_1h",
    "output",
    "long_threshold",
    "long_input",
    "long_cache_read",
    "long_cache_write",
    "long_cache_write_1h",
    "long_output",
    "peak_factor",
    "evidence",
    "source",
    "note",
    "explicit_read",
    "long_explicit_read",
    "storage",
)
#: Columns a file may leave out of its header (added after the first release): empty in every row.
OPTIONAL_COLUMNS = ("explicit_read", "long_explicit_read", "storage")
#: Milliseconds in the hour the storage price is quoted for.
_HOUR_MS = Decimal(3_600_000)
#: The quantum a storage amount is rounded to (see the module doc).
_STORAGE_QUANTUM = Decimal("1e-18")

#: DeepSeek peak windows (UTC, Monday-Friday), from https://api-docs.deepseek.com/quick_start/pricing.
DEEPSEEK_PEAK_HOURS = ((1, 4), (6, 10))

_MILLION = Decimal(1_000_000)
#: Every cost is tokens x price / 10^6: exact at this precision, and a trap makes sure it stays so.
_EXACT = Context(prec=60, traps=[Inexact, InvalidOperation])
#: A model id: lowercase, digits, ``.``, ``_``, ``-``, and ``:`` (Bedrock ids end in a version,
#: ``anthropic.claude-sonnet-4-5-20250929-v1:0``; a ``:`` needs no CSV quoting).
_ID = re.compile(r"[a-z0-9][a-z0-9._:-]*\Z")
#: A gateway's qualified name of a model, ``gateway/id`` (an alias only: a gateway's own price of
#: the model, such as OpenCode Zen's free models as OpenCode names them, ``opencode/<id>``).
_GATEWAY_NAME = re.compile(r"[a-z0-9][a-z0-9._:-]*/[a-z0-9][a-z0-9._:-]*\Z")
#: Bedrock cross-region inference profiles put a geography before a model id
#: (``us.anthropic.claude-...``, ``global.anthropic.claude-...``,
#: https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html): a name
#: the table does not know is looked up again without it.
PROFILE_PREFIXES = ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.")
#: What a provider appends to a model id for a snapshot or version: a date (``-2025-12-11``,
#: ``-20251101``, Vertex AI's ``@20250929``, ``@001``, ``@latest``) and/or a Bedrock version
#: (``-v1:0``). A name the table does not know is looked up again without it, so an unlisted
#: snapshot bills as its model (the listed ones are aliases).
_SNAPSHOT = re.compile(r"(-\d{4}-\d{2}-\d{2}|-20\d{6}|@20\d{6}|@\d{3}|@latest)?(-v\d+(:\d+)?)?\Z")
#: OpenRouter's variants of a model that bill as the model itself (a suffix after a ``:``): ``:thinking``
#: (its reasoning on) and ``:beta`` (Anthropic's endpoint without OpenRouter's moderation), catalog
#: entries at the model's price. A name the table does not know is looked up again without one.
PRICE_NEUTRAL_VARIANTS = (":thinking", ":beta")
#: OpenRouter's routing variants (https://openrouter.ai/docs/guides/routing/model-variants/overview):
#: the same model, sent to the hosts the variant ranks first (``:nitro`` by throughput, ``:floor``
#: by price, ``:exacto`` by reliability). A host bills its own price, so such a name resolves to
#: the model only where every host of it bills the model's list price (its provider's rules say so:
#: :attr:`~prefixbench.simulator.providers.base.ProviderRules.hosts_bill_list_price`); else it is
#: left unpriced.
ROUTING_VARIANTS = (":nitro", ":floor", ":exacto")
#: OpenRouter's free variant, ``vendor/model:free``: a catalog entry that bills no token. Every such
#: name resolves to the table's row :data:`FREE_MODEL` (all prices 0, its source cited there).
FREE_VARIANT = ":free"
FREE_MODEL = "openrouter-free"
#: What a fast-mode model's price rows are named after (``claude-opus-4-8-fast``): the model's id
#: and this, which is how gateways name fast mode (OpenRouter's ``anthropic/claude-opus-4.6-fast``).
FAST_SUFFIX = "-fast"
#: A version number written with a dot (``4.5``), which some providers' ids write ``4-5``.
_DOTTED = re.compile(r"(\d)\.(\d)")
_WHEN = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2}))?\Z")


class Rates(msgspec.Struct, frozen=True):
    """One set of prices in USD per 1M tokens; ``cache_write`` None = no write fee;
    ``explicit_read`` None = an explicit read costs ``cache_read`` like any other."""

    input: Decimal
    cache_read: Decimal
    cache_write: Decimal | None
    cache_write_1h: Decimal | None
    output: Decimal
    explicit_read: Decimal | None = None

    def scaled(self, factor: Decimal) -> Rates:
        """Every price times ``factor``."""
        with localcontext(_EXACT):
            return Rates(
                self.input * factor,
                self.cache_read * factor,
                None if self.cache_write is None else self.cache_write * factor,
                None if self.cache_write_1h is None else self.cache_write_1h * factor,
                self.output * factor,
                None if self.explicit_read is None else self.explicit_read * factor,
            )

    @property
    def explicit_read_price(self) -> Decimal:
        """What one explicit read costs per 1M tokens: its own price, else the read price."""
        return self.cache_read if self.explicit_read is None else self.explicit_read


class LongTier(msgspec.Struct, frozen=True):
    """Prices for a request whose prompt has more than ``threshold`` tokens."""

    threshold: int
    rates: Rates


_UNCOMPARED_ROW_FIELDS = frozenset({"where", "effective_at"})


class PriceRow(msgspec.Struct, frozen=True):
    """One model's prices from one effective date on, with where they come from."""

    provider: str
    model: str
    aliases: tuple[str, ...]
    #: As written in the file; "" = since the model's launch (the sources give no date).
    effective: str
    rates: Rates
    long_tier: LongTier | None
    #: Peak price = listed price x factor; None = one price all day.
    peak_factor: Decimal | None
    evidence: Evidence
    source: str
    note: str
    #: ``file:line`` of the row, for messages; not compared (see ``__eq__``).
    where: str = ""
    #: The period the rates were resolved for (None for a model without peak pricing).
    period: Period | None = None
    #: ``effective`` parsed; not compared, not in the repr.
    effective_at: datetime | None = None
    #: USD per 1M tokens per hour an explicit cache is kept (Gemini ``CachedContent``); None =
    #: the row names no storage fee.
    storage: Decimal | None = None

    def _compared(self) -> tuple[object, ...]:
        """The fields equality and the hash look at: all but ``where`` and ``effective_at``."""
        return tuple(getattr(self, name) for name in self.__struct_fields__ if name not in _UNCOMPARED_ROW_FIELDS)

    def __eq__(self, other: object) -> bool:
        if type(other) is not PriceRow:
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        shown = (f"{name}={getattr(self, name)!r}" for name in self.__struct_fields__ if name != "effective_at")
        return f"PriceRow({', '.join(shown)})"

    @property
    def is_free(self) -> bool:
        """Whether the row bills nothing (a gateway's free variant, :data:`FREE_MODEL`)."""
        rates = self.rates
        return not (rates.input or rates.cache_read or rates.cache_write or rates.cache_write_1h or rates.output
                    or rates.explicit_read or self.long_tier or self.storage)

    @property
    def has_write_fee(self) -> bool:
        """Whether cache writes bill at their own price (else at the input price)."""
        return self.rates.cache_write is not None

    def rates_for(self, prompt_tokens: int) -> Rates:
        """The rates a request with this many prompt tokens pays."""
        tier = self.long_tier
        if tier is not None and prompt_tokens > tier.threshold:
            return tier.rates
        return self.rates

    def for_period(self, period: Period) -> PriceRow:
        """The row priced for a DeepSeek period; a row without peak pricing is returned as is."""
        if self.peak_factor is None:
            return self
        if period == "off-peak":
            return replace(self, period=period)
        tier = self.long_tier
        return replace(
            self,
            rates=self.rates.scaled(self.peak_factor),
            long_tier=None if tier is None else LongTier(tier.threshold, tier.rates.scaled(self.peak_factor)),
            period=period,
        )


class Usage(Protocol):
    """What :func:`cost_of` reads: an :class:`~prefixbench.simulator.observe.Observation` fits."""

    prompt_tokens: int
    cached_tokens: int
    written_tokens: int
    written_long_tokens: int
    output_tokens: int
    # Optional (read with getattr, 0 when absent): cached_explicit_tokens, the part of
    # cached_tokens read from an explicit cache; stored_token_ms, tokens x ms of explicit
    # storage this request paid for; created_tokens, an explicit cache created beside it.


class CostBreakdown(msgspec.Struct, frozen=True):
    """The dollars of one request (or a sum of them), split by what they pay for."""

    uncached_input: Decimal
    cache_read: Decimal
    cache_write: Decimal
    output: Decimal
    #: Explicit-cache storage (token-hours at the storage price); 0 for every implicit cache.
    storage: Decimal = Decimal(0)

    @property
    def total(self) -> Decimal:
        """All five parts."""
        with localcontext(_EXACT):
            return self.uncached_input + self.cache_read + self.cache_write + self.output + self.storage

    def __add__(self, other: CostBreakdown) -> CostBreakdown:
        with localcontext(_EXACT):
            return CostBreakdown(
                self.uncached_input + other.uncached_input,
                self.cache_read + other.cache_read,
                self.cache_write + other.cache_write,
                self.output + other.output,
                self.storage + other.storage,
            )

    @classmethod
    def zero(cls) -> CostBreakdown:
        """Nothing billed."""
        return cls(Decimal(0), Decimal(0), Decimal(0), Decimal(0), Decimal(0))


class PriceTable(msgspec.Struct, frozen=True):
    """Every row of a price file, and the names (ids and aliases) that find them."""

    path: str
    rows: tuple[PriceRow, ...]
    #: Model id or alias -> model id; not compared (see ``__eq__``; a dict is not hashable).
    names: dict[str, str]

    def __eq__(self, other: object) -> bool:
        if type(other) is not PriceTable:
            return NotImplemented
        return (self.path, self.rows) == (other.path, other.rows)

    def __hash__(self) -> int:
        return hash((self.path, self.rows))

    def models(self) -> tuple[str, ...]:
        """Known model ids, sorted."""
        return tuple(sorted({row.model for row in self.rows}))

    def resolve(self, name: str) -> str:
        """The model id for an id or alias, also as a log spells it (any case, a gateway's vendor
        part, a Bedrock profile, an unlisted snapshot's date or version suffix, Vertex AI's
        ``@``-snapshot, a gateway's dotted version of a hyphenated id, OpenRouter's variants:
        :data:`PRICE_NEUTRAL_VARIANTS`, :data:`ROUTING_VARIANTS` where every host bills the list
        price, :data:`FREE_VARIANT` at the :data:`FREE_MODEL` row).

        Raises:
            UserError: unknown name; the message names the closest model ids and where the table is.
        """
        model = self.names.get(name)
        if model is None:
            model = self._variant(name)
        if model is None:
            # A log's spelling (``MiniMax-M2``), a gateway's vendor part (``x-ai/grok-4``), a
            # Bedrock inference profile (``us.anthropic.claude-...``).
            lowered = name.lower()
            tail = lowered.rpartition("/")[2]
            candidates = (lowered, tail, *(tail[len(p) :] for p in PROFILE_PREFIXES if tail.startswith(p)))
            # Then a snapshot the table does not list by name (``gpt-5.2-2025-12-11``,
            # ``claude-...-20260630``, ``anthropic.claude-...-v1:0``) as its undated model.
            undated = tuple(_SNAPSHOT.sub("", c) for c in candidates)
            # Last, a gateway's dotted version of an id the provider writes with a hyphen
            # (OpenRouter's ``anthropic/claude-sonnet-4.5`` for ``claude-sonnet-4-5``).
            dashed = tuple(_DOTTED.sub(r"\1-\2", c) for c in (*candidates, *undated) if _DOTTED.search(c))
            for candidate in (*candidates, *undated, *dashed):
                model = self.names.get(candidate)
                if model is not None:
                    break
        if model is None:
            # A typo's nearest name first, so that it is not lost at the end of the long list.
            import difflib  # (only on this error)

            # A few close names, and where every one is (the whole table made a line of ~1,700 characters).
            best = difflib.get_close_matches(name.lower(), self.models(), n=1, cutoff=0.85)
            near = difflib.get_close_matches(name.lower(), self.models(), n=3, cutoff=0.6)
            did = f"did you mean {best[0]!r}? " if best else ""
            closest = f"closest priced: {', '.join(near)}; " if near else "no priced model is close; "
            raise UserError(f"unknown price model {name!r} ({did}{closest}aliases accepted; every priced model: {PRICE_TABLE_WHERE})")
        return model

    def _variant(self, name: str) -> str | None:
        """The model an OpenRouter variant's name (``vendor/model:variant``) bills as, or None for a
        name that is no variant, or one whose model is unknown or routed to hosts of differing
        prices (see :data:`ROUTING_VARIANTS`)."""
        base, colon, suffix = name.lower().rpartition(":")
        variant = colon + suffix
        if not base or "/" not in base:
            return None
        if variant == FREE_VARIANT:
            return self.names.get(FREE_MODEL)
        if variant not in PRICE_NEUTRAL_VARIANTS and variant not in ROUTING_VARIANTS:
            return None
        try:
            model = self.resolve(base)
        except UserError:
            return None
        if variant in ROUTING_VARIANTS:
            from prefixbench.simulator.providers import provider_of_model  # (the rules import nothing of this module)

            rules = provider_of_model(model)
            if rules is None or not rules.hosts_bill_list_price:
                return None
        return model

    def history(self, name: str) -> tuple[PriceRow, ...]:
        """Rows of a model, oldest first (an undated row first of all)."""
        model = self.resolve(name)
        rows = [row for row in self.rows if row.model == model]
        return tuple(sorted(rows, key=_effective_key))

    def fast_model(self, name: str) -> str:
        """The id of a model's fast-mode price rows (Anthropic's fast mode: the same model, asked
        with ``speed: "fast"``, billed at its own price): the model's id with ``-fast`` appended,
        as gateways name it; a name that is a fast id already is its own.

        Raises:
            UserError: an unknown model, or one the table holds no fast price for (named
                ``<model>-fast``, so the audit lists it among the unpriced models).
        """
        model = self.resolve(name)
        if model.endswith(FAST_SUFFIX):
            return model
        fast = model + FAST_SUFFIX
        if fast not in self.names:
            raise UserError(f"unknown price model {fast!r}: no fast-mode price for {model!r}")
        return fast

    def get(
        self, name: str, *, as_of: str | None = None, period: str | None = None, speed: str | None = None
    ) -> PriceRow:
        """The row in force for a model, priced for a period.

        Args:
            name: model id or alias.
            as_of: ``YYYY-MM-DD`` (00:00 UTC) or ``YYYY-MM-DDTHH:MMZ``; None = the latest row.
            period: ``off-peak`` (the default) or ``peak``; ignored by models with one price.
            speed: ``fast`` = the model's fast-mode rows (:meth:`fast_model`); None or
                ``standard`` = its own.

        Raises:
            UserError: unknown model, period or speed, a malformed date, no row in force on it,
                or no fast-mode price for the model.
        """
        if period is not None and period not in PERIODS:
            raise UserError(f"unknown price period {period!r} (known: {', '.join(PERIODS)})")
        if speed not in (None, "standard", "fast"):
            raise UserError(f"unknown speed {speed!r} (known: standard, fast)")
        rows = self.history(self.fast_model(name) if speed == "fast" else name)
        if as_of is None:
            row = rows[-1]
        else:
            when = parse_when(as_of, what="price date")
            in_force = [r for r in rows if r.effective_at is None or r.effective_at <= when]
            if not in_force:
                raise UserError(
                    f"no price for {rows[0].model!r} as of {as_of}: its first row is effective {rows[0].effective}"
                )
            row = in_force[-1]
        return row.for_period(period or DEFAULT_PERIOD)  # type: ignore[arg-type]


#: Where a user finds the shipped price table, from a wheel as from a checkout: the path inside the
#: installed package, and the command that prints it in full (this module run as a script).
PRICE_TABLE_WHERE = ("prefixbench/simulator/data/prices.csv of the installed package; "
                     "python -m prefixbench.simulator.pricing prints its full path")


def shipped_prices_path() -> str:
    """The path of the price table installed with prefixbench (what :data:`PRICE_TABLE_WHERE` names)."""
    path = Path(__file__).parent / "data" / "prices.csv"
    if path.is_file():
        return str(path)
    from importlib import resources

    return str(resources.files("prefixbench.simulator").joinpath("data", "prices.csv"))


def load_prices(path: Path | str | None = None) -> PriceTable:
    """Read and check a price file; None = the table shipped with prefixbench (read once).

    Raises:
        UserError: an unreadable file or a bad row, naming ``file:line`` and the column.
    """
    if path is None:
        return _shipped_table()
    return _read_table(Path(path))


@functools.cache
def load_host_prices(name: str) -> PriceTable:
    """The price file ``name`` shipped beside the maker's table (a third-party host's own prices,
    :data:`~prefixbench.simulator.providers.hosts.HOST_PRICES`), read and checked as
    :func:`load_prices` reads a table (read once).

    Raises:
        UserError: an unreadable file or a bad row, naming ``file:line`` and the column.
    """
    path = Path(__file__).parent / "data" / name
    if path.is_file():
        return _read_table(path)
    from importlib import resources

    ref = resources.files("prefixbench.simulator").joinpath("data", name)
    with resources.as_file(ref) as found:
        return _read_table(found)


def get_price(
    model: str,
    *,
    as_of: str | None = None,
    period: str | None = None,
    table: PriceTable | None = None,
    speed: str | None = None,
) -> PriceRow:
    """The price row for a model from the shipped table (or ``table``); see :meth:`PriceTable.get`."""
    return (table or load_prices()).get(model, as_of=as_of, period=period, speed=speed)


def cost_of(usage: Usage, price: PriceRow) -> CostBreakdown:
    """Dollars of one request at ``price``. A rejected request (``status`` other than 200) is free.

    Raises:
        ValueError: token counts that cannot come from one request (cached + written > prompt, ...).
    """
    return _priced(usage, price, False)  # type: ignore[return-value]


def cost_total(usage: Usage, price: PriceRow) -> Decimal:
    """``cost_of(usage, price).total``: the same Decimal, summed where the parts are made (one
    exact context a request, no breakdown made; the audit prices every request, and what-if
    every request a fix changes, this way)."""
    return _priced(usage, price, True)  # type: ignore[return-value]


#: The usage records of :mod:`prefixbench.simulator.usage` (read field by field in :func:`_priced`).
_OWN_USAGES = (_Usage, _PlainUsage)

#: ``CostBreakdown.zero().total``: what a refused request costs.
_NOTHING = CostBreakdown.zero().total


def _priced(usage: Usage, price: PriceRow, total: bool) -> CostBreakdown | Decimal:
    """:func:`cost_of`, or (``total``) its breakdown's total."""
    if type(usage) in _OWN_USAGES:
        # The simulator's own usage (every request the audit prices): its fields read directly,
        # not through the names below (a property each, and four attributes it never has:
        # no status, storage or creation, always billed). ``written`` and ``prompt`` are
        # Usage.cache_write and Usage.prompt written out, kept in step with them:
        # tests/unit/simulator/test_pricing.py::test_the_simulators_own_usage_is_priced_as_its_protocol_names_say.
        cached, written_long = usage.cache_read, usage.cache_write_1h  # type: ignore[attr-defined]
        written = usage.cache_write_5m + written_long  # type: ignore[attr-defined]
        prompt = cached + written + usage.uncached + usage.cache_unsplit  # type: ignore[attr-defined]
        output, explicit = usage.output, usage.cache_read_explicit  # type: ignore[attr-defined]
        stored = created = 0
    else:
        if getattr(usage, "status", 200) != 200:
            # Providers do not bill a request they refused (HTTP 400 invalid_request_error).
            return _NOTHING if total else CostBreakdown.zero()
        prompt = usage.prompt_tokens
        cached = usage.cached_tokens
        written = usage.written_tokens
        written_long = getattr(usage, "written_long_tokens", 0)
        output = usage.output_tokens
        explicit = getattr(usage, "cached_explicit_tokens", 0)
        stored = getattr(usage, "stored_token_ms", 0)
        created = getattr(usage, "created_tokens", 0)
    if (
        min(prompt, cached, written, written_long, output, explicit, stored, created) < 0
        or cached + written > prompt
        or written_long > written
        or explicit > cached
    ):
        raise ValueError(
            f"inconsistent usage: prompt={prompt} cached={cached} written={written} "
            f"written_long={written_long} output={output} cached_explicit={explicit} stored_token_ms={stored} "
            f"created={created}"
        )
    rates = price.rates_for(prompt)
    storage = _storage_usd(stored, price.storage)
    with localcontext(_EXACT):
        cache_read = _usd(cached - explicit, rates.cache_read) + _usd(explicit, rates.explicit_read_price)
        if rates.cache_write is None:
            uncached_input = _usd(prompt - cached, rates.input)
            cache_write = Decimal(0)
        else:
            uncached_input = _usd(prompt - cached - written, rates.input)
            long_rate = rates.cache_write if rates.cache_write_1h is None else rates.cache_write_1h
            cache_write = _usd(written - written_long, rates.cache_write) + _usd(written_long, long_rate)
        cache_write += _usd(created, price.rates_for(created).input)
        output_usd = _usd(output, rates.output)
        if total:  # CostBreakdown.total's sum, in the same order, in this same exact context
            return uncached_input + cache_read + cache_write + output_usd + storage
        return CostBreakdown(uncached_input, cache_read, cache_write, output_usd, storage)


def storage_usd(token_ms: int, price: PriceRow) -> Decimal:
    """Dollars of keeping ``token_ms`` tokens x milliseconds in an explicit cache at ``price``
    (0 where the row names no storage fee), rounded as the module doc says."""
    return _storage_usd(token_ms, price.storage)


def _storage_usd(token_ms: int, per_million_hour: Decimal | None) -> Decimal:
    if not token_ms or per_million_hour is None:
        return Decimal(0)
    with localcontext(Context(prec=80)):
        amount = Decimal(token_ms) * per_million_hour / (_MILLION * _HOUR_MS)
        return amount.quantize(_STORAGE_QUANTUM) if amount.as_tuple().exponent < -18 else amount  # type: ignore[operator]


def usd_sum(amounts: Iterable[Decimal]) -> Decimal:
    """Exact sum of dollar amounts."""
    with localcontext(_EXACT):
        return sum(amounts, Decimal(0))


def deepseek_period(when: datetime) -> Period:
    """DeepSeek's billing period at a real time (Chinese public holidays, all off-peak, not modelled).

    Raises:
        ValueError: a naive datetime (the windows are in UTC).
    """
    if when.tzinfo is None:
        raise ValueError("deepseek_period needs an aware datetime")
    utc = when.astimezone(UTC)
    if utc.weekday() < 5 and any(start <= utc.hour < end for start, end in DEEPSEEK_PEAK_HOURS):
        return "peak"
    return "off-peak"


def format_usd(amount: Decimal) -> str:
    """Dollars for a report: 4 decimals from one cent up, else 4 significant digits.

    ``$0.2193``, ``$12.3400``, ``$0.007611``, ``$0.00000280``, ``$0``, ``-$0.0100``.
    """
    if amount == 0:
        return "$0"
    size = abs(amount)
    quantum = Decimal("0.0001") if size >= Decimal("0.01") else Decimal(1).scaleb(size.adjusted() - 3)
    # Enough digits for the whole amount at 4 decimals: past the default 28 (a figure of 10^24
    # dollars or more, as a compared file can hold) quantize raised InvalidOperation.
    with localcontext(Context(prec=max(28, size.adjusted() + 8))):
        rounded = size.quantize(quantum, rounding=ROUND_HALF_UP)
    return f"{'-' if amount < 0 else ''}${rounded:,f}"


def format_rate(price: Decimal) -> str:
    """A price per 1M tokens as written in the file (``0.15``, ``6.25``), without exponent."""
    return f"{price:f}"


def parse_when(text: str, *, what: str) -> datetime:
    """``YYYY-MM-DD`` (00:00 UTC) or an ISO time with ``Z`` or an offset, as an aware UTC datetime.

    Raises:
        UserError: anything else; the message starts with ``what``.
    """
    try:
        if not _WHEN.match(text):
            raise ValueError(text)
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        return datetime.fromisoformat(text).astimezone(UTC)
    except ValueError:
        raise UserError(f"{what} {text!r} is not YYYY-MM-DD or YYYY-MM-DDTHH:MMZ") from None


def _usd(tokens: int, price_per_million: Decimal) -> Decimal:
    return Decimal(tokens) * price_per_million / _MILLION


def _effective_key(row: PriceRow) -> tuple[int, datetime]:
    return (0, datetime.min.replace(tzinfo=UTC)) if row.effective_at is None else (1, row.effective_at)


@functools.cache
def _shipped_table() -> PriceTable:
    # The file beside this module when installed as files (wheel or editable), which is the path
    # importlib.resources gives too; importlib.resources (~4 ms to import) only for other loaders.
    path = Path(__file__).parent / "data" / "prices.csv"
    if path.is_file():
        return _read_table(path)
    from importlib import resources

    ref = resources.files("prefixbench.simulator").joinpath("data", "prices.csv")
    with resources.as_file(ref) as path:
        return _read_table(path)


def _read_table(path: Path) -> PriceTable:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise UserError(f"cannot read price file {path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text ({err.reason})") from None
    rows: list[PriceRow] = []
    header: tuple[str, ...] | None = None
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{line_no}"
        try:
            cells = next(csv.reader([line], strict=True))
        except csv.Error as err:
            raise UserError(f"{where}: not a CSV line ({err})") from None
        if header is None:
            header = _check_header(cells, where)
            continue
        rows.append(_parse_row(cells, where, header))
    if not rows:
        raise UserError(f"{path}: no price rows")
    return PriceTable(str(path), tuple(rows), _check_names(rows))


def _check_header(cells: list[str], where: str) -> tuple[str, ...]:
    """The header's columns: all of :data:`COLUMNS` in order, or without the optional ones."""
    names = [c.strip() for c in cells]
    legacy = [c for c in COLUMNS if c not in OPTIONAL_COLUMNS]
    if names in (list(COLUMNS), legacy):
        return tuple(names)
    unknown = [n for n in names if n not in COLUMNS]
    missing = [c for c in COLUMNS if c not in names and not (c in OPTIONAL_COLUMNS and not set(OPTIONAL_COLUMNS) & set(names))]
    if unknown:
        raise UserError(f"{where}: unknown column {unknown[0]!r} in the header (columns: {', '.join(COLUMNS)})")
    if missing:
        raise UserError(f"{where}: missing column {missing[0]!r} in the header (columns: {', '.join(COLUMNS)})")
    raise UserError(f"{where}: header columns out of order (expected: {', '.join(COLUMNS)})")


def _parse_row(cells: list[str], where: str, header: tuple[str, ...] = COLUMNS) -> PriceRow:
    # The optional columns may be left off a row's end (a row written before they existed).
    short = len([c for c in header if c not in OPTIONAL_COLUMNS])
    if len(cells) not in (len(header), short):
        raise UserError(f"{where}: {len(cells)} fields, expected {len(header)} ({', '.join(header)})")
    raw = dict.fromkeys(COLUMNS, "")
    raw.update({name: cell.strip() for name, cell in zip(header, cells)})
    row = _RowReader(raw, where)
    # Checked in column order, so a row with several problems reports the leftmost first.
    provider = row.ident("provider", row.raw["provider"])
    model = row.ident("model", row.raw["model"])
    aliases = tuple(row.alias(a) for a in row.raw["aliases"].split())
    effective_at = row.effective_at()
    base = row.rates("", required=True)
    assert base is not None
    long_tier = row.long_tier(base)
    peak_factor = row.peak_factor()
    storage = row.price("storage", required=False)
    evidence = row.raw["evidence"]
    if evidence not in EVIDENCE:
        raise row.fail("evidence", f"{evidence!r} is not one of {', '.join(EVIDENCE)}")
    if not row.raw["source"]:
        raise row.fail("source", "every row needs a source")
    return PriceRow(
        provider=provider,
        model=model,
        aliases=aliases,
        effective=row.raw["effective"],
        rates=base,
        long_tier=long_tier,
        peak_factor=peak_factor,
        evidence=evidence,  # type: ignore[arg-type]
        source=row.raw["source"],
        note=row.raw["note"],
        where=where,
        effective_at=effective_at,
        storage=storage,
    )


class _RowReader:
    """Reads and checks the cells of one price-table row; every error names ``file:line`` and column."""

    def __init__(self, raw: dict[str, str], where: str) -> None:
        self.raw = raw
        self.where = where

    def fail(self, column: str, problem: str) -> UserError:
        return UserError(f"{self.where}: column {column!r}: {problem}")

    def ident(self, column: str, value: str) -> str:
        if not _ID.match(value):
            raise self.fail(column, f"{value!r} is not a lowercase id ([a-z0-9._:-])")
        return value

    def alias(self, value: str) -> str:
        """An alias: an id, or a gateway's qualified name of one (``opencode/deepseek-v4-flash-free``,
        :data:`_GATEWAY_NAME`), which only that whole name finds (the bare id is not an alias)."""
        if not _ID.match(value) and not _GATEWAY_NAME.match(value):
            raise self.fail("aliases", f"{value!r} is not a lowercase id ([a-z0-9._:-]) or gateway/id")
        return value

    def effective_at(self) -> datetime | None:
        if not self.raw["effective"]:
            return None
        try:
            return parse_when(self.raw["effective"], what="date")
        except UserError as err:
            raise self.fail("effective", str(err)) from None

    def price(self, column: str, *, required: bool) -> Decimal | None:
        value = self.raw[column]
        if not value:
            if required:
                raise self.fail(column, "a price is required")
            return None
        try:
            number = Decimal(value)
        except InvalidOperation:
            raise self.fail(column, f"{value!r} is not a price in USD per 1M tokens") from None
        if not number.is_finite() or number < 0:
            raise self.fail(column, f"{value!r} is not a price in USD per 1M tokens")
        if number > MAX_PRICE:
            raise self.fail(column, f"{value!r} is above {MAX_PRICE:,} USD per 1M tokens: not a price")
        return number

    def rates(self, prefix: str, *, required: bool) -> Rates | None:
        names = ("input", "cache_read", "cache_write", "cache_write_1h", "output", "explicit_read")
        values = {name: self.price(prefix + name, required=False) for name in names}
        if not required and all(v is None for v in values.values()):
            return None
        for name in ("input", "cache_read", "output"):
            if values[name] is None:
                raise self.fail(prefix + name, "a price is required")
        if values["cache_write_1h"] is not None and values["cache_write"] is None:
            raise self.fail(prefix + "cache_write_1h", "a 1 h write price needs a cache_write price")
        return Rates(values["input"], values["cache_read"], values["cache_write"], values["cache_write_1h"], values["output"], values["explicit_read"])  # type: ignore[arg-type]

    def long_tier(self, base: Rates) -> LongTier | None:
        threshold = self.raw["long_threshold"]
        if not threshold:
            stray = [c for c in COLUMNS if c.startswith("long_") and self.raw[c]]
            if stray:
                raise self.fail(stray[0], "long_* prices need a long_threshold")
            return None
        if not (threshold.isascii() and threshold.isdigit()) or int(threshold) == 0:
            raise self.fail("long_threshold", f"{threshold!r} is not a positive number of prompt tokens")
        long_rates = self.rates("long_", required=False)
        if long_rates is None:
            raise self.fail("long_input", "a long_threshold needs the long_* prices")
        for name in ("cache_write", "cache_write_1h", "explicit_read"):
            if (getattr(base, name) is None) != (getattr(long_rates, name) is None):
                raise self.fail("long_" + name, f"must be set exactly when {name} is")
        return LongTier(int(threshold), long_rates)

    def peak_factor(self) -> Decimal | None:
        factor = self.price("peak_factor", required=False)
        if factor is not None and factor < 1:
            raise self.fail("peak_factor", f"{self.raw['peak_factor']!r} is below 1 (listed prices are the off-peak ones)")
        return factor


def _check_names(rows: list[PriceRow]) -> dict[str, str]:
    models = {row.model for row in rows}
    names: dict[str, str] = {m: m for m in models}
    provider_of: dict[str, PriceRow] = {}
    seen: dict[tuple[str, datetime | None], PriceRow] = {}
    for row in rows:
        first = provider_of.setdefault(row.model, row)
        if first.provider != row.provider:
            raise UserError(f"{row.where}: column 'provider': {row.model!r} is {first.provider!r} at {first.where}")
        key = (row.model, row.effective_at)
        if key in seen:
            raise UserError(
                f"{row.where}: column 'effective': a second row for {row.model!r} effective "
                f"{row.effective or '(since launch)'} (first at {seen[key].where})"
            )
        seen[key] = row
        for alias in row.aliases:
            owner = names.get(alias, row.model)
            if alias in models or owner != row.model:
                raise UserError(f"{row.where}: column 'aliases': {alias!r} already names model {owner!r}")
            names[alias] = row.model
    return names


if __name__ == "__main__":  # python -m prefixbench.simulator.pricing: where the shipped price table is
    print(shipped_prices_path())
