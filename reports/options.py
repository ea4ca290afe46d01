"""Parsing of option values shared by the subcommands (windows, comma lists), and the typed
options (workloads/runs/options.py) filled from the flags: argparse stops here."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.windows import MIN_WINDOW, format_window

if TYPE_CHECKING:  # annotations only: the command line loads the option structs when a command runs
    from prefixbench.simulator.pricing import PriceRow
    from prefixbench.workloads.runs.options import CheckOptions, RecordOptions, SweepRunOptions

#: Measured on seed-coding (2m window: 162 MB peak, 512k: 125 MB): about 100 MB of libraries
#: plus ~30 bytes per token of the largest window.
BASE_BYTES = 100_000_000
BYTES_PER_TOKEN = 30
#: Above this a sweep says what it is about to take, even when the machine has room.
NOTE_BYTES = 1_000_000_000
#: The largest window accepted (1,000m tokens, far above any model's).
MAX_WINDOW = 1_000_000_000


class Default(str):
    """An option's default value, told apart from the same text typed on the command line
    (a grid file's value is overridden only by flags the user gave)."""


def given(value: object) -> bool:
    """Whether an option value came from the command line (not its default, not unset)."""
    return value is not None and not isinstance(value, Default)


def parse_window(text: str, option: str = "--windows", minimum: int = MIN_WINDOW) -> int:
    """``32k`` -> 32,000; ``1m`` -> 1,000,000; ``128000`` -> 128,000 (k = 1,000, as in seed 001).
    ``option`` is the option an error names (``--window`` on record, ``--prefixbench-windows``);
    ``minimum`` the smallest window taken (:data:`MIN_WINDOW`, a scripted workload's)."""
    raw = text.strip().lower().replace("_", "").replace(",", "")
    scale = 1
    if raw.endswith("k"):
        raw, scale = raw[:-1], 1_000
    elif raw.endswith("m"):
        raw, scale = raw[:-1], 1_000_000
    try:
        value = float(raw) * scale
    except ValueError:
        raise UserError(f"{option}: {text!r} is not a token count (use e.g. 32k, 128k or 128000)") from None
    if not 0 < value <= MAX_WINDOW:  # NaN and infinity fail here too
        raise UserError(f"{option}: window must be a positive number of tokens up to 1,000m, got {text!r}")
    if value != int(value):
        raise UserError(f"{option}: window must be a positive whole number of tokens, got {text!r}")
    if value < minimum:
        what = "the smallest a scripted workload runs at" if minimum == MIN_WINDOW else "the smallest a log is judged at"
        raise UserError(f"{option}: window must be at least {minimum:,} tokens ({format_window(minimum)}), {what}, got {text!r}")
    return int(value)


def check_engine_refs(refs: tuple[str, ...] | list[str]) -> None:
    """Refuse an ``--engine`` that names no engine (naming ``--engine``, not the list it joins), or one given twice."""
    from prefixbench.kernel.loading import unknown_engine
    from prefixbench.workloads.scripted.registry import is_builtin_engine, is_user_engine

    for idx, ref in enumerate(refs):
        if not is_builtin_engine(ref) and not is_user_engine(ref):
            raise UserError(f"--engine: {unknown_engine(ref)}")
        if ref in refs[:idx]:
            raise UserError(f"--engine: {ref!r} given twice (each would run again)")


def parse_list(text: str, option: str) -> tuple[str, ...]:
    """A comma-separated option value; empty items are an error."""
    items = tuple(item.strip() for item in text.split(","))
    if not all(items):
        raise UserError(f"{option}: empty item in {text!r}")
    for idx, item in enumerate(items):
        if item in items[:idx]:
            raise UserError(f"{option}: {item!r} given twice in {text!r} (each would run again)")
    return items


#: More seeds than this in one sweep is almost certainly a typo (``0-100000``).
MAX_SEEDS = 10_000


def parse_seeds(text: str, option: str = "--seeds") -> tuple[int, ...]:
    """``0-16`` (inclusive), ``0,3,5`` or a mix (``0-3,7``) -> the seeds, in the order given."""
    seeds: list[int] = []
    for item in parse_list(text, option):
        low, sep, high = item.partition("-")
        try:
            first = int(low)
            last = int(high) if sep else first
        except ValueError:
            raise UserError(f"{option}: {item!r} is not a seed or a range of seeds (e.g. 0-16 or 0,3,5)") from None
        if first < 0:
            raise UserError(f"{option}: {item!r} is not a range of seeds >= 0 (e.g. 0-16)")
        if last < first:
            raise UserError(f"{option}: {item!r} runs backwards: write the lower seed first ({last}-{first})")
        if last - first + len(seeds) >= MAX_SEEDS:
            raise UserError(f"{option}: {item!r} names more than {MAX_SEEDS:,} seeds")
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        raise UserError(f"{option}: {text!r} names a seed twice")
    return tuple(seeds)


def parse_windows(text: str, option: str = "--windows", minimum: int = MIN_WINDOW) -> tuple[int, ...]:
    """``--windows``: distinct windows (``32k,32000`` is one window given twice), each at least
    ``minimum`` tokens."""
    windows = tuple(parse_window(w, option, minimum) for w in parse_list(text, option))
    for idx, window in enumerate(windows):
        if window in windows[:idx]:
            raise UserError(f"{option}: {window:,} tokens given twice in {text!r} (each would run again)")
    return windows


def memory_estimate(window: int) -> int:
    """Bytes a run at ``window`` is expected to hold at its peak."""
    return BASE_BYTES + BYTES_PER_TOKEN * window


def available_memory() -> int | None:
    """Bytes of physical memory available now (None where the system does not say)."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def warn_window_memory(windows: tuple[int, ...], available: int | None = None) -> str | None:
    """One warning line when the largest window needs more than 1 GB or than the machine has free."""
    if not windows:
        return None
    largest = max(windows)
    need = memory_estimate(largest)
    free = available if available is not None else available_memory()
    if need <= NOTE_BYTES and (free is None or need <= free):
        return None
    have = f"{free / 1e9:.1f} GB available" if free is not None else "available memory unknown"
    verdict = "more than this machine has free; expect swapping or a MemoryError" if free is not None and need > free else "it fits"
    line = f"prefixbench: warning: --windows {largest:,}: a run needs about {need / 1e9:.1f} GB of memory ({have}): {verdict}"
    print(line, file=sys.stderr)
    return line


def check_price_date(price_as_of: str | None) -> None:
    """``--price-as-of``'s date, refused naming the option (as ``audit`` does) before any work."""
    if price_as_of is not None:
        from prefixbench.simulator.pricing import parse_when

        parse_when(price_as_of, what="--price-as-of")


def price_row(
    model: str, as_of: str | None, period: str | None, *, named: str = "--period peak", option: str | None = "--price"
) -> PriceRow:
    """``--price MODEL`` at ``--price-as-of`` and ``--period``; ``peak`` on a row with one price
    all day is refused, naming it as ``named`` (the library ignores the period there, but a user
    who asked for the peak surcharge would read one-price dollars as peak ones). A model with no
    row is named after ``option`` (a grid file names its key itself: None).

    Raises:
        UserError: a bad date, an unknown model or period, no row in force, or peak without one.
    """
    from prefixbench.simulator.pricing import get_price

    check_price_date(as_of)
    try:
        row = get_price(model, as_of=as_of, period=period)
    except UserError as exc:  # the option named, as every other option's error names it
        raise UserError(f"{option}: {exc}" if option else str(exc)) from None
    if period == "peak" and row.peak_factor is None:
        when = f" as of {as_of}" if as_of else ""
        raise UserError(f"{named}: {row.model}{when} has one price all day, no peak period "
                        "(only DeepSeek rows with a peak_factor have one)")
    return row


#: A price row's provider whose cache model has another name (the rest share theirs, or run
#: through the cache model :data:`~prefixbench.simulator.providers.PROVIDERS` names).
_PRICED_CACHE = {"google": "gemini"}


def cross_priced_note(cache: str, row: PriceRow) -> str | None:
    """The note for ``--price`` of one provider on ``--cache`` of another (``--price gpt-5.1
    --cache anthropic``): that cache's reads and writes priced at the other's rates. None when
    they match, and for a cache that is no provider's (``byte-exact``, ``vllm``, ``radix``) or a
    row of a gateway that bills other providers' models."""
    from prefixbench.simulator.models import parse_cache_spec
    from prefixbench.simulator.providers import PROVIDERS

    name = str(cache).partition(":")[0]
    try:
        name = parse_cache_spec(str(cache))[0]
    except UserError:
        pass
    cached = PROVIDERS.get(name) or next((r for r in PROVIDERS.values() if r.body_model == name), None)
    if cached is None or not cached.reports_usage:  # the reference, or a self-hosted engine
        return None
    rules = PROVIDERS.get(row.provider)
    priced = _PRICED_CACHE.get(row.provider) or (rules.body_model if rules is not None else None)
    if priced is None or priced == name:
        return None
    return (f"note: --price {row.model} is {row.provider}'s price row and --cache {cache} models {name}'s cache: "
            f"{name}'s cached reads and writes are priced at {row.provider}'s rates")


def check_price_options(period: str | None, price_as_of: str | None) -> None:
    """``--period`` and ``--price-as-of`` choose a price row: without ``--price`` they do nothing."""
    for flag, value in (("--period", period), ("--price-as-of", price_as_of)):
        if value is not None:
            raise UserError(f"{flag} chooses a price row, so it needs --price MODEL")


def workload_options(args: argparse.Namespace) -> dict[str, object]:
    """The workload options given on the command line, as the factories take them (``--effort default`` is None)."""
    from prefixbench.workloads.scripted.registry import option_names, option_value

    options: dict[str, object] = {}
    for name in option_names():
        value = getattr(args, name)
        if value is not None:
            options[name] = option_value(name, value)
    return options


def sweep_run_options(args: argparse.Namespace) -> SweepRunOptions:
    """How ``sweep`` executes and prints, from its flags."""
    from prefixbench.workloads.runs.options import SweepRunOptions

    return SweepRunOptions(
        out=args.out, format=args.format, quiet=args.quiet, jobs=args.jobs, scheduler=args.scheduler, fresh=args.fresh
    )


def check_options(args: argparse.Namespace) -> CheckOptions:
    """``check``'s flags."""
    from prefixbench.workloads.runs.options import CheckOptions

    if args.trace is not None and args.preset is not None:
        # A recorded log was made by whatever engine and preset made it: --preset judges nothing here.
        raise UserError("--trace judges a recorded log: --preset does not apply (record --preset chose it)")
    return CheckOptions(
        preset=args.preset or "patched", windows=args.windows, engines=args.engines, engine=tuple(args.engine or ()),
        engine_config=args.engine_config, profile=args.profile, trace=args.trace, input=args.input, out=args.out,
        vacuous_fails=args.vacuous == "fail", quiet=args.quiet,
    )


def record_options(args: argparse.Namespace) -> RecordOptions:
    """``record``'s flags."""
    from prefixbench.workloads.runs.options import RecordOptions

    return RecordOptions(
        file=args.file, workload=args.workload, window=args.window, preset=args.preset, profile=args.profile,
        engine=tuple(args.engine or ()), workload_options=workload_options(args), force=args.force, quiet=args.quiet,
    )
