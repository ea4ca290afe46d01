"""The price row a logged request bills at (:class:`Prices`): the one price path of the audit,
its what-if re-simulations and the readers that check a log's own dollars against the table
(the OpenTelemetry reader's agents' own costs)."""

from __future__ import annotations

from datetime import UTC, datetime

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import PriceRow, PriceTable, deepseek_period, load_host_prices, load_prices
from prefixbench.simulator.providers import provider_of_model
from prefixbench.simulator.providers.hosts import host_model, host_price_file, named_host, third_party_host
from prefixbench.simulator.providers.vllm import own_host


#: Price lookups :class:`Prices` keeps (by model and minute) before it starts again: a found row
#: is a function of the model and the minute alone, so forgetting one costs a lookup, never a figure.
PRICE_MINUTES = 256


class Prices:
    """Price rows by model and day, from the shipped table (or ``--price-as-of``).

    ``row(model, sent_ms)`` is the row in force when the request was sent (DeepSeek: for the
    peak / off-peak period of that moment); models the table does not know are collected in
    ``missing``.
    """

    def __init__(self, as_of: str | None, table: PriceTable | None = None) -> None:
        self.table = table or load_prices()
        self.as_of = as_of
        self.missing: set[str] = set()
        #: Of ``missing``, the ``<model>-fast`` names of fast-mode rows the table lacks for calls
        #: run with ``speed: fast`` (:meth:`row`): names no log gives, which no alias prices.
        self.fast_missing: set[str] = set()
        #: Models priced at their first row for a time before it (model -> that row's effective date).
        self.early: dict[str, str] = {}
        #: Models a row was in force for at some request (with ``early``: a model priced early at
        #: some of its requests, not all).
        self.in_force: set[str] = set()
        #: The rows found, by (model, minute): a minute's entries a model. The audit asks in send
        #: order, so these keep the latest :data:`PRICE_MINUTES` only and start again past them:
        #: a folder of many days would otherwise hold a few hundred bytes a minute of it (every
        #: request of a slow session) beside the trace.
        self._cache: dict[tuple[str, str | None, str], PriceRow | None] = {}
        self._minutes: dict[tuple[str, int], PriceRow | None] = {}
        #: Each model's fast-mode row name (None: the table has none).
        self._fast: dict[str, str | None] = {}
        #: Whether a (model, upstream a gateway named) bills the model's list price (:meth:`at_list_price`).
        self._hosts: dict[tuple[str, str], bool] = {}
        #: The rows third-party hosts' own tables give, by (host's price file, model, minute).
        self._host_rows: dict[tuple[str, str, str | None], PriceRow | None] = {}
        #: Whether a host's own table has a row of a model, by (model, upstream) (:meth:`priced_by_host`).
        self._by_host: dict[tuple[str, str], bool] = {}
        if as_of is not None:
            from prefixbench.simulator.pricing import parse_when

            parse_when(as_of, what="--price-as-of")

    def row(self, model: str, sent_ms: int | None, speed: str = "", upstream: str = "") -> PriceRow | None:
        """``speed``: ``fast`` where the call's usage says it ran in fast mode (:attr:`Usage.speed`):
        the model's fast-mode row (``<model>-fast``; one the table lacks is listed missing under
        that name, never priced at the standard rate); anything else the model's own.

        ``upstream``: the host a gateway says served the call (:attr:`TraceRequest.upstream`).
        An open-weight model served by a host other than its maker is billed at that host's
        price (:meth:`at_list_price`): the host's own row where prefixbench holds one
        (:meth:`host_row`), else no row, never the maker's. A model whose own id names its host
        (:func:`~prefixbench.simulator.providers.hosts.named_host`: Fireworks' namespace, a
        router's ``:<host>`` suffix) is that host's call where no upstream is given. A free
        variant (OpenRouter's ``vendor/model:free``) bills nothing whoever served it: its $0 row
        comes first."""
        if upstream and self.free_variant(model):
            upstream = ""
        elif not upstream:
            upstream = named_host(model)
        if upstream and not self.at_list_price(model, upstream):
            return self.host_row(model, sent_ms, upstream)
        if speed == "fast":
            if model not in self._fast:  # (once a model: a model without a fast row raises inside)
                try:
                    self._fast[model] = self.table.fast_model(model)
                except UserError:
                    self._fast[model] = None
                    self.missing.add(f"{self._resolved(model)}-fast")
                    self.fast_missing.add(f"{self._resolved(model)}-fast")
            fast = self._fast[model]
            if fast is None:
                return None
            model = fast
        # The row depends on the minute only (the date of the row in force, DeepSeek's period by
        # weekday and hour): one lookup a model and minute.
        minute = (model, sent_ms // 60_000) if type(sent_ms) is int and sent_ms > 1e11 else None
        if minute is not None and minute in self._minutes:
            return self._minutes[minute]
        found = self._row(model, sent_ms)
        if minute is not None:
            if len(self._minutes) >= PRICE_MINUTES:
                self._minutes.clear()
            self._minutes[minute] = found
        return found

    def at_list_price(self, model: str, upstream: str) -> bool:
        """Whether a call of ``model`` that a gateway says ``upstream`` served bills at the
        model's list price: a closed model whoever served it, an open-weight one where its maker
        served it (:meth:`~prefixbench.simulator.providers.base.ProviderRules.bills_list_price_at`);
        a model of no provider the audit models as before (at the table's row). Never where a
        host running open models itself served it (:func:`~prefixbench.simulator.providers.vllm.own_host`):
        no vendor bills that call, whatever its model's name; nor where a third-party host of open
        models served it (Fireworks, Groq, Together AI...:
        :func:`~prefixbench.simulator.providers.hosts.third_party_host`), whatever its model's
        name: that host bills its own prices (:meth:`host_row`), never the maker's."""
        key = (model, upstream)
        if key not in self._hosts:
            rules = provider_of_model(self._resolved(model))
            self._hosts[key] = (not own_host(upstream) and third_party_host(upstream) is None
                                and (rules is None or rules.bills_list_price_at(upstream)))
        return self._hosts[key]

    def free_variant(self, model: str) -> bool:
        """Whether ``model`` resolves to the table's free row (OpenRouter's ``:free`` variant)."""
        from prefixbench.simulator.pricing import FREE_MODEL, FREE_VARIANT

        return model.lower().endswith(FREE_VARIANT) and self._resolved(model) == FREE_MODEL

    def host_table(self, upstream: str) -> PriceTable | None:
        """The own price table of the third-party host ``upstream`` is
        (:data:`~prefixbench.simulator.providers.hosts.HOST_PRICES`); None for a host whose
        prices prefixbench does not hold, a host running open models itself, any other name."""
        if not upstream or own_host(upstream):
            return None
        name = host_price_file(upstream)
        return None if name is None else load_host_prices(name)

    def host_row(self, model: str, sent_ms: int | None, upstream: str) -> PriceRow | None:
        """The row of ``upstream``'s own table (:meth:`host_table`) in force for ``model`` when the
        call was sent (``--price-as-of`` if given; a time before the model's first row: that row);
        None where the host has no table or its table no row of the model (the call is unpriced,
        with the note naming the host: never listed among the models the maker's table lacks)."""
        table = self.host_table(upstream)
        if table is None or not self.priced_by_host(model, upstream):
            return None
        model = host_model(model)[0]
        when = self.as_of
        if when is None and sent_ms is not None and sent_ms > 1e11:
            when = datetime.fromtimestamp(sent_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%MZ")
        key = (table.path, model, when)
        if key not in self._host_rows:
            if len(self._host_rows) >= PRICE_MINUTES:
                self._host_rows.clear()
            try:
                row: PriceRow | None = table.get(model, as_of=when)
            except UserError:
                try:
                    row = table.history(model)[0]
                except UserError:
                    row = None
            self._host_rows[key] = row
        return self._host_rows[key]

    def priced_by_host(self, model: str, upstream: str) -> bool:
        """Whether a call of ``model`` that ``upstream`` served, off the maker's list price
        (:meth:`at_list_price`), has a row in that host's own table (:meth:`host_row`)."""
        key = (model, upstream)
        if key not in self._by_host:  # (once a model and host: a name a table lacks is slow to refuse)
            table = self.host_table(upstream)
            name = host_model(model)[0]
            self._by_host[key] = table is not None and bool(name) and self._resolves(table, name)
        return self._by_host[key]


    @staticmethod
    def _resolves(table: PriceTable, model: str) -> bool:
        try:
            table.resolve(model)
        except UserError:
            return False
        return True

    def open_weight(self, model: str) -> bool:
        """Whether hosts other than ``model``'s maker serve it at prices of their own (its
        provider's rules say so: not :attr:`~prefixbench.simulator.providers.base.ProviderRules.hosts_bill_list_price`)."""
        rules = provider_of_model(self._resolved(model))
        return rules is not None and not rules.hosts_bill_list_price

    def _resolved(self, model: str) -> str:
        try:
            return self.table.resolve(model)
        except UserError:
            return model

    def _row(self, model: str, sent_ms: int | None) -> PriceRow | None:
        when = self.as_of
        period = "off-peak"
        moment: datetime | None = None
        if sent_ms is not None and sent_ms > 1e11:
            moment = datetime.fromtimestamp(sent_ms / 1000, UTC)
            period = deepseek_period(moment)
        if when is None and moment is not None:
            when = moment.strftime("%Y-%m-%dT%H:%MZ")
        key = (model, when, period)
        if key not in self._cache:
            if len(self._cache) >= PRICE_MINUTES:
                self._cache.clear()
            try:
                found = self.table.get(model, as_of=when, period=period)
                self.in_force.add(found.model)
                row: PriceRow | None = found
            except UserError:
                try:  # a date before the model's first row: the earliest row is the best there is
                    history = self.table.history(model)
                    row = history[0].for_period(period)  # type: ignore[arg-type]
                    self.early[history[0].model] = str(history[0].effective)
                except UserError:
                    row = None
                    self.missing.add(model)
            self._cache[key] = row
        return self._cache[key]
