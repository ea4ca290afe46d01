"""Words and figures the audit's views share, so that the terminal table, audit.md and
report.html say the same thing the same way: what a hit ratio is over, where a request is, and
the one precision of a column of dollars."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path, PurePath

from prefixbench.simulator.providers.hosts import service_name, third_party_host
from prefixbench.simulator.providers.vllm import OLLAMA_CLOUD, ollama_cloud, own_host


def ratio_basis(reporting: int, total: int) -> str:
    """What a hit ratio is over, when not every one of ``total`` requests reports its cache use
    (the terminal's and audit.md's headline, and report.html's): "" when every one does."""
    if reporting == total:
        return ""
    if not reporting:
        return " (predicted: no request reports its cache use)"
    return f" (of the {reporting:,} requests that report their cache use)"


def unpriced_words(no_usage: dict[str, int], no_price: dict[str, int],
                   ranged: tuple[int, Decimal, Decimal] = (0, Decimal(0), Decimal(0)),
                   hosts: tuple[dict[str, int], dict[str, int]] = ({}, {})) -> str:
    """What a dollar total leaves out, and why, per reason, in one clause: `` (not in it: 12,031
    request(s) with no usage reported by their format: mooncake)``, `` (... with no price for
    their model: glm-9)``, `` (... whose log sums cache reads and writes: $1.4616 to $9.5612)``,
    or several: `` (not in it: 42 request(s): 40 with no usage reported by their format (mooncake),
    2 with no price for their model (glm-9))``; a reason naming several counts each (``a 3, b 2``).
    ``no_usage``: requests per log format that reports no usage; ``no_price``: requests with
    usage per model the price table does not price; ``ranged``: the requests whose log sums
    their cache reads and writes, priced as a range only, and that range; ``hosts``: requests with
    usage per host that served them at a price of its own that prefixbench lacks for the model
    (``served by a host whose price for the model prefixbench lacks: Fireworks``), and per self-hosted engine (``served by a self-hosted engine: ollama``), whatever
    their model's row (:func:`left_out_counts`); '' when none is left out."""

    def names(counts: dict[str, int]) -> str:
        if len(counts) == 1:
            return next(iter(counts))
        return ", ".join(f"{name} {n:,}" for name, n in sorted(counts.items()))

    groups = [(why, sum(kept.values()), names(kept)) for why, counts in
              (("with no usage reported by their format", no_usage), ("with no price for their model", no_price),
               ("served by a host whose price for the model prefixbench lacks", hosts[0]), ("served by a self-hosted engine", hosts[1]))
              if (kept := {k: n for k, n in counts.items() if n > 0})]
    count, low, high = ranged
    if count:
        groups.append(("whose log sums cache reads and writes", count, f"{usd_cents4(low)} to {usd_cents4(high)}"))
    if not groups:
        return ""
    total = sum(n for _, n, _ in groups)
    if len(groups) == 1:
        why, _, detail = groups[0]
        return f" (not in it: {total:,} request(s) {why}: {detail})"
    parts = ", ".join(f"{n:,} {why} ({detail})" for why, n, detail in groups)
    return f" (not in it: {total:,} request(s): {parts})"


def paid_total_words(paid: str, requests: int, no_usage: dict[str, int], no_price: dict[str, int],
               ranged: tuple[int, Decimal, Decimal] = (0, Decimal(0), Decimal(0)),
               hosts: tuple[dict[str, int], dict[str, int]] = ({}, {})) -> str:
    """The headline's *paid* clause: ``paid $1.2345`` and what it leaves out (:func:`unpriced_words`);
    ``paid unknown (51 request(s) with no price for their model: x)`` when it leaves out every one
    of the ``requests``: a total of none of them is not $0."""
    words = unpriced_words(no_usage, no_price, ranged, hosts)
    left = sum(no_usage.values()) + sum(no_price.values()) + ranged[0] + sum(hosts[0].values()) + sum(hosts[1].values())
    if requests and left >= requests:
        return "paid unknown" + words.replace(" (not in it: ", " (", 1)
    return f"paid {paid}{words}"


def lost_total_words(lost: str, lost_zero: bool, unpriced_misses: int, *, seen: bool = True) -> str:
    """The headline's *lost* clause: ``lost to misses $0.0785`` and the misses it leaves out
    (:func:`unpriced_misses_words`); ``lost to misses unknown (2 misses with no dollar figure)``
    when it is $0 only because no miss that lost tokens has a dollar figure, or because no
    request reports its cache use (``seen`` False), so no miss could be seen."""
    if not seen:
        return "lost to misses unknown (no request reports its cache use, so no miss could be seen)"
    words = unpriced_misses_words(unpriced_misses)
    if lost_zero and unpriced_misses:
        return "lost to misses unknown" + words.replace(" (not in it: ", " (", 1)
    return f"lost to misses {lost}{words}"


def left_out_counts(files: Iterable[tuple[str, int]], models: Iterable[tuple[str, int, int, int]],
                    hosts: Iterable[tuple[str, str, int]] = ()) -> tuple[dict[str, int], dict[str, int], tuple[dict[str, int], dict[str, int]]]:
    """The reasons of :func:`unpriced_words`, counted: requests with no usage per format, from
    each file's ``(format, no-usage requests)``; requests of no price per model, from each
    model's ``(model, unpriced, no-usage, ranged requests)``, but for those ``hosts`` counts as
    ``(model, host, requests)`` (:attr:`~prefixbench.workloads.audit.core.AuditResult.unpriced_hosts`),
    which are counted per host that bills its own price (by its one name,
    :func:`~prefixbench.simulator.providers.hosts.third_party_host`, where it is a third-party host), and per self-hosted engine
    (:func:`~prefixbench.simulator.providers.vllm.own_host`): no price because of who served them,
    not of their model."""
    no_usage: Counter[str] = Counter()
    for fmt, n in files:
        no_usage[fmt] += n
    no_price: Counter[str] = Counter()
    for model, unpriced, without_usage, ranged in models:
        no_price[model] += unpriced - without_usage - ranged
    billed: Counter[str] = Counter()
    engines: Counter[str] = Counter()
    for model, host, n in hosts:
        no_price[model] -= n
        if ollama_cloud(model, host):  # (Ollama's cloud bills it through its plans: no engine of the user's)
            billed[OLLAMA_CLOUD] += n
        elif own_host(host):
            engines[host] += n
        else:  # (one spelling a host: fireworks, fireworks-ai and Fireworks are one)
            billed[third_party_host(host) or host] += n
    return dict(no_usage), dict(no_price), (dict(billed), dict(engines))


def engine_served(hosts: Iterable[tuple[str, str, int]]) -> Counter[str]:
    """Per model, its requests an engine of the user's served (``(model, host, requests)``:
    :attr:`~prefixbench.workloads.audit.core.AuditResult.unpriced_hosts`; a host
    :func:`~prefixbench.simulator.providers.vllm.own_host` keeps, Ollama's cloud not among them):
    the requests :func:`left_out_counts` says no vendor bills."""
    served: Counter[str] = Counter()
    for model, host, n in hosts:
        if own_host(host) and not ollama_cloud(model, host):
            served[model] += n
    return served


def model_paid_cell(paid: str, requests: int, unpriced: int, no_usage: int, ranged: int, priced: bool, engine: int) -> str:
    """A model's *paid* cell: ``self-hosted`` where none of its requests is priced and every one
    with usage to price was served by an engine of the user's (``engine``: :func:`engine_served`,
    the model's ``self_hosted_requests``), as the headline and the gate say of them; ``no price``
    where the price table has no row of the model; else as any group's (:func:`paid_cell`)."""
    if not priced and no_usage < requests:
        return "self-hosted" if engine and engine == unpriced - no_usage - ranged else "no price"
    return paid_cell(paid, requests, unpriced, no_usage, ranged, engine)


def no_usage_words(prompts: int | None, replies: int | None) -> str:
    """The headline's tokens where no request reports usage (the table's and report.html's): the
    prompt and reply lengths the logs give for every request (``prompts``, ``replies``: the
    totals' ``logged_prompt_tokens`` and ``logged_output_tokens``), only the provider's cache
    counts missing; or, None, no token figure at all."""
    if prompts is None or replies is None:
        return "usage not reported (the logs give no input, output or cache tokens)"
    return (f"prompts {prompts:,} tokens and output {replies:,} (the logs' own lengths per request, the cached part inside "
            "the prompts); cache read and write not reported (the logs give no provider cache counts)")


def relay_words(relays: Iterable[tuple[str, str, str, int]]) -> str:
    """What the headline's *paid* adds where calls went through a relay (``(provider, model, relay,
    requests)``: :attr:`~prefixbench.workloads.audit.core.AuditResult.relays`): the maker's list
    price, not the relay's bill, and which relay; "" where none did."""
    relays = list(relays)
    if not relays:
        return ""
    calls = sum(n for *_, n in relays)
    names = ", ".join(dict.fromkeys(repr(relay) for _, _, relay, _ in relays))
    return f" (at the maker's list price, not the relay's bill: {calls:,} request(s) through the relay {names})"


def service_words(services: Iterable[tuple[str, str, str, int]], no_price: Mapping[str, int] | None = None) -> str:
    """What the headline's *paid* adds where calls went to a service of the maker's models
    (``(provider, model, service, requests)``: :attr:`~prefixbench.workloads.audit.core.AuditResult.services`,
    Azure OpenAI): the maker's list price, not the service's bill, and which service, with a count
    each where there are several; the calls of a model with no price (a count in ``no_price``,
    :func:`left_out_counts`) said to be unpriced instead; "" where none went to one. A service is
    counted once, whatever deployments of it the calls named
    (:func:`~prefixbench.simulator.providers.hosts.service_name`): the models table names those."""
    priced: Counter[str] = Counter()
    unpriced: Counter[str] = Counter()
    for _, model, service, n in services:
        ((unpriced if (no_price or {}).get(model, 0) > 0 else priced))[service_name(service)] += n

    def to(counts: Counter[str]) -> str:
        names = (next(iter(counts)) if len(counts) == 1
                 else ", ".join(f"{name} {n:,}" for name, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))))
        return f"{sum(counts.values()):,} request(s) to {names}"

    parts = ([f"at the maker's list price, not the service's bill: {to(priced)}"] if priced else []) + (
        [f"unpriced, their model having no price: {to(unpriced)}"] if unpriced else [])
    return f" ({'; '.join(parts)})" if parts else ""


def unpriced_misses_words(misses: int) -> str:
    """What the lost-dollars total leaves out: `` (not in it: 2 misses with no dollar figure)``, '' when
    every miss that lost tokens is priced (no price row, or a range only: ``-`` in the causes table)."""
    if not misses:
        return ""
    return f" (not in it: {misses:,} miss{'es' if misses != 1 else ''} with no dollar figure)"


def plus_unpriced(figure: str, unpriced: int) -> str:
    """A dollar figure and the requests it leaves out for want of a price, the one way every view
    says it (a group's *paid* and *lost* cells, a fix's *saved*): ``$1.2345 + 3 unpriced``;
    ``figure`` alone where none is."""
    return f"{figure} + {unpriced:,} unpriced" if unpriced else figure


def paid_cell(paid: str, requests: int, unpriced: int = 0, no_usage: int = 0, ranged: int = 0, self_hosted: int = 0) -> str:
    """A group's *paid* cell (a session, a day, a lane, a file, a model; ``paid``: its dollars
    formatted), saying which of its ``requests`` are in it as the headline does: ``paid`` when
    every one is priced; ``$1.2345 + 3 unpriced`` when some are not; when none is, why: ``no
    usage`` (none carries usage to price), ``range only`` (each log sums its cache reads and
    writes), ``self-hosted`` (each has usage and an engine of the user's served it: ``self_hosted``
    counts those, as the models table and the headline count them; no vendor bills them), ``no
    price`` (each has usage no price row prices: a model the price table does not price, or some
    served by the user's engine and the rest of such a model) or ``unpriced`` (a mix of these)."""
    if not unpriced:
        return paid
    if unpriced < requests:
        return plus_unpriced(paid, unpriced)
    no_price = unpriced - no_usage - ranged
    if no_price == unpriced and self_hosted == no_price:
        return "self-hosted"
    return ("no usage" if no_usage == unpriced else "range only" if ranged == unpriced
            else "no price" if no_price == unpriced else "unpriced")


def hit_cell(ratio: float | None, predicted: bool) -> str:
    """A roll-up's or a lane's *hit* cell: ``pred 50.0%`` where no request of it reports its cache
    use, so the ratio is the cache model's prediction (:data:`PREDICTED_HIT`), not one reported;
    ``50.0%`` otherwise; ``-`` where it has none (its requests' usage has no cache field, and
    they are no cache trace: :func:`~prefixbench.workloads.audit.core.hit_ratio`)."""
    if ratio is None:
        return "-"
    return f"pred {ratio:.1%}" if predicted else f"{ratio:.1%}"


def headline_hit(ratio: float | None, basis: str) -> str:
    """The headline's hit ratio and what it is over (:func:`ratio_basis`): ``n/a (...)`` where
    no request reports its cache use and none is of a cache trace, so there is no ratio."""
    if ratio is None:
        return "n/a (no request reports its cache use)"
    return f"{ratio:.1%}{basis}"


#: What a session's row says after its name where the session's main transcript is not among the
#: files read (``RollUp.main_absent``: only its subagents' or compaction agents' transcripts are):
#: its name is the file the agent writes the session's transcript as, which the log does not hold.
MAIN_ABSENT = "main transcript not in the log"


#: The legend line under the roll-ups (sessions, days) when some row has a *re-write* factor
#: (``RollUp.rewrite_factor``): the column's name alone does not say what it divides.
REWRITE_LEGEND = ("re-write: the prompt tokens paid at the write or the full input price (written + uncached) over the "
                  "sum of each lane's largest prompt; 1.00x: each lane paid for its context once and read it after, "
                  "2.00x: twice (an expiry, a changed prefix); a compaction raises it, a head another session kept "
                  "warm can take it below 1")
#: The legend line under the roll-ups when some *hit* cell is predicted (:func:`hit_cell`).
PREDICTED_HIT = "pred: no request of the row reports its cache use; its hit ratio is the cache model's prediction"
#: Said under a table with a write cell ``-`` in a row that reports its cache use: its usage has no
#: write count (an OpenAI-shaped one's writes are billed inside its uncached input; a log that
#: leaves the count out, as some exports of Anthropic-shaped usage do, gives none either).
WRITES_NOT_REPORTED = ("write -: cache write not reported (no request of the row gives a write count: an OpenAI-shaped "
                       "usage has none, its writes billed as uncached input, and some logs leave the count out); a row "
                       "where some requests give one sums theirs only")


def loss_legend(groups: Iterable[tuple[int, int, int]]) -> list[str]:
    """:data:`LOSS_NOT_SEEN` where a table's rows (each ``(requests, unpriced, unseen)``) hold one
    whose loss some request leaves untold, and no want of a price already makes its cell ``-``."""
    return [LOSS_NOT_SEEN] if any(unseen and not none_priced(requests, unpriced) for requests, unpriced, unseen in groups) else []


#: The legend under a causes table one of whose causes shares a miss another leads (text and page).
SHARED_LEGEND = ("+N shared: misses another cause leads whose loss this one shares; their part of the loss is in "
                 "this cause's tokens and dollars, the rest in the leading cause's")


def none_priced(requests: int, unpriced: int) -> bool:
    """Whether none of a group's ``requests`` is priced (``unpriced`` of them are not): its *lost*
    cell says ``-`` and its JSON ``lost_usd`` is null, as $0 would claim none was lost."""
    return bool(requests) and unpriced >= requests


def none_seen(requests: int, unseen: int) -> bool:
    """Whether nothing tells the loss of any of a group's ``requests`` (``unseen`` of them:
    :func:`~prefixbench.workloads.audit.core.loss_seen` False): no request of it reports its
    cache use and none is a request-body log's predicted one, so no miss could be seen; its
    *lost* cell says ``-`` and its JSON ``lost_usd`` is null, as $0 would claim none was lost."""
    return bool(requests) and unseen >= requests


#: Said under a table with a *lost* cell that is ``-`` for want of reported cache use, or that
#: sums some of its requests only (:func:`none_seen`).
LOSS_NOT_SEEN = ("lost -: unknown, no request of the row reports its cache use, so no miss could be seen (a request-body "
                 "log's predicted loss is a figure); a row where only some requests report it sums theirs only")


def lost_cell(lost: str, requests: int, unpriced: int = 0, *, count: bool = False, unseen: int = 0) -> str:
    """A group's *lost* cell: ``-`` when none of its ``requests`` is priced (nothing could be
    priced, so $0 would claim none was lost) or when nothing tells the loss of any (``unseen``:
    :func:`none_seen`), else ``lost`` (its dollars formatted); ``count``:
    ``$1.2345 + 2 unpriced`` when some are not (a cause's, which has no *paid* cell to say so)."""
    if none_priced(requests, unpriced) or none_seen(requests, unseen):
        return "-"
    return plus_unpriced(lost, unpriced) if count else lost


def usd_cents4(value: Decimal | float | None) -> str:
    """Dollars at one precision for a whole column (the worst requests' *lost*): 4 decimals,
    ``<$0.0001`` for a smaller amount above 0, ``$0`` for none, ``-`` for unknown."""
    if value is None:
        return "-"
    amount = value if isinstance(value, Decimal) else Decimal(str(value))
    if amount == 0:
        return "$0"
    if abs(amount) < Decimal("0.00005"):
        return f"{'-' if amount < 0 else ''}<$0.0001"
    return f"{'-' if amount < 0 else ''}${abs(amount).quantize(Decimal('0.0001'), rounding=ROUND_HALF_UP):,f}"


def file_labels(files: Iterable[str]) -> dict[str, str]:
    """Each file's name for a table cell: its last part, or as many of its last parts as tell it
    from every other file (``a1b2/events/0.json``, ``c3d4/events/0.json``: OpenHands sessions'
    event files, conversation folders' ``base_state.json``, share their names)."""
    paths = sorted(set(files))
    parts = {path: PurePath(path).parts or (path,) for path in paths}
    labels: dict[str, str] = {}
    depth = 1
    while len(labels) < len(paths):
        pending = [path for path in paths if path not in labels]
        tails = {path: PurePath(*parts[path][-depth:]).as_posix() for path in pending}  # (a root part once: /a/b.json)
        taken = Counter(PurePath(*parts[path][-depth:]).as_posix() for path in paths)
        for path in pending:
            if taken[tails[path]] == 1 or depth >= len(parts[path]):
                labels[path] = tails[path]
        depth += 1
    return labels


def request_where(file: str, line: int, path: str = "", short: Callable[[str], str] | None = None) -> str:
    """Where a request is: ``file:line``, and where in the line's record when one record holds
    several requests (``gemini-session.json:1 messages[7]``); ``short`` shortens the file name
    (its last part by default)."""
    name = short(file) if short is not None else Path(file).name
    return f"{name}:{line}" + (f" {path}" if path else "")


#: An idle gap audit.png and report.html cut out of a chart's clock: an hour or more between two requests...
IDLE_GAP_MS = 3_600_000
#: ... when such gaps take more than this share of the panel's span (a session resumed the next
#: day was two slivers at the ends of an empty axis).
IDLE_SHARE = 0.5


def idle_gaps(times: Sequence[int]) -> list[tuple[int, int]]:
    """(index of the request after the gap, gap in ms) of every gap of :data:`IDLE_GAP_MS` or
    more, when together they take more than :data:`IDLE_SHARE` of the span; [] otherwise (the
    panel stays on the clock). ``times`` in send order."""
    gaps = [(i, b - a) for i, (a, b) in enumerate(zip(times, times[1:]), start=1) if b - a >= IDLE_GAP_MS]
    span = times[-1] - times[0] if times else 0
    return gaps if span and sum(g for _, g in gaps) > IDLE_SHARE * span else []


def idle_duration(ms: int) -> str:
    """``29h15m``, ``1h``, ``3d04h`` of an idle gap."""
    minutes = ms // 60_000
    days, hours, mins = minutes // 1440, minutes // 60 % 24, minutes % 60
    if days:
        return f"{days}d{hours:02d}h"
    return f"{hours}h{mins:02d}m" if mins else f"{hours}h"


#: Said under a lanes table that folds gateway calls naming no session into one row.
SESSIONLESS_ROW = (
    "sessionless calls (N): the gateway calls of a file that name no session, summed in one row; each is a lane of its "
    "own in the cache replay and in the JSON record"
)


#: The line under the compactions table (terminal, audit.md, report.html): what *cached before*
#: measures against, which is not what the misses-by-cause table measures the same request
#: against (unitree-A1: "2 warm" with $0 lost, while misses by cause put $0.0991 on compaction,
#: the same request expected 32,128 there and 4,480 here).
COMPACTIONS_AGAINST = (
    "cached before: what the compaction could have read, the prefix its new context shares with what was cached "
    "(a call: what the main request before it left cached); misses by cause measure the same request against the "
    "whole context the lane's previous request left cached, so a compaction warm here can still lose there")

#: The causes whose loss :func:`causes_compaction_line` says what it is measured against.
COMPACTION_CAUSES = ("compaction", "compaction-miss")


def causes_compaction_line(causes: Iterable[str], listed: bool) -> str:
    """The line under the misses-by-cause table where a compaction cause (:data:`COMPACTION_CAUSES`)
    lost and the compactions table lists compactions (``listed``); "" otherwise."""
    named = [name for name in COMPACTION_CAUSES if name in set(causes)]
    if not named or not listed:
        return ""
    return (f"{', '.join(named)}: lost against the whole context the lane's previous request left cached; the "
            "compactions table judges each compaction against what its new context shares with that (its cached before)")


def compactions_heading(found: Sequence, usd: Callable[[Decimal], str]) -> str:
    """The compactions table's heading, of the audit's compactions (objects or ``--format json``
    records, read by attribute: see :func:`compaction_view`): how many warm, cold, unknown, and
    what the cold ones whose readable prefix is known paid and would have cost warm."""
    cold = [c for c in found if c.verdict == "cold"]
    unseen = sum(c.verdict == "unknown" and not c.predicted for c in found)
    untold = sum(c.verdict == "unknown" and c.predicted for c in found)
    judged = [c for c in cold if c.expected_cache_read is not None]
    unknown = len(cold) - len(judged)
    paid = sum((c.cost_usd or Decimal(0) for c in judged), Decimal(0))
    warm = sum((c.warm_cost_usd or Decimal(0) for c in judged), Decimal(0))
    return (
        f"compactions ({len(found)}: {len(found) - len(cold) - unseen - untold} warm, {len(cold)} cold"
        + (f", {unseen} unknown (no cache use reported: warm or cold not told, loss unknown)" if unseen else "")
        + (f", {untold} unknown (read predicted only: the prediction cannot judge itself)" if untold else "")
        + (f"; the cold ones paid {usd(paid)}, warm they would have cost {usd(warm)}" if judged else "")
        + (f"; {unknown} whose readable prefix the log does not tell (?): not in these sums" if unknown else "")
        + ")"
    )


#: The compactions table's columns, the terminal's and report.html's.
COMPACTION_HEADER = ("file:line", "lane", "kind", "verdict", "read", "cached before", "paid", "warm cost", "cause", "detail")

#: The line under the compactions table where a read is the cache model's prediction.
PREDICTED_COMPACTION = ("read pred: the cache model's prediction on the logged body (a request-body log reports no usage), "
                        "not a reported read; its verdict is the model's")


def compaction_cells(c, where: str, usd: Callable[[Decimal | None], str]) -> list[str]:
    """One compaction's cells under :data:`COMPACTION_HEADER` but the detail: ``?`` where its
    readable prefix is unknown (and its warm cost, as an unknown verdict's)."""
    readable_unknown = c.expected_cache_read is None
    return [
        where, c.lane, c.kind, c.verdict,
        "-" if c.cache_read is None else f"pred {c.cache_read:,}" if c.predicted else f"{c.cache_read:,}",
        "?" if readable_unknown else f"{c.expected_cache_read:,}",
        usd(c.cost_usd), "?" if readable_unknown or c.verdict == "unknown" else usd(c.warm_cost_usd),
        c.cause or "",
    ]


def compaction_view(record: Mapping[str, object]):
    """A ``--format json`` compaction record read by attribute, its dollars as Decimal (as the
    audit holds them), for :func:`compactions_heading` and :func:`compaction_cells`."""
    from types import SimpleNamespace

    fields = dict(record)
    for name in ("cost_usd", "lost_usd", "warm_cost_usd"):
        value = fields.get(name)
        fields[name] = None if value is None else Decimal(str(value))
    fields.setdefault("predicted", False)
    return SimpleNamespace(**fields)
