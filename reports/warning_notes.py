"""The engines' warnings, one note per (engine, kind of warning), for sweep, bench and check, and
the runs whose engine went by a cache lifetime other than their cache's (:func:`ttl_notes`).

Kept apart from :mod:`prefixbench.reports.sweep` (which imports pandas) so that ``check``, which
writes no table, stays light (docs/performance.md, Start-up)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from prefixbench.simulator.windows import format_window
from prefixbench.workloads.runs.schema import parse_engine_warnings


#: The runs a warning note names one by one; past this many it says how many more.
NAMED_RUNS = 4


def warning_notes(records: Iterable[Mapping[str, object]], bench: bool = False) -> list[str]:
    """One note per (engine, kind of warning) the runs' engines logged (their ``engine_warnings``),
    in the order they first came: how many times, and in which runs (with each run's count when
    there are several). None for runs without warnings. codex-compact's path under ``auto`` is
    noted only for the runs where it is not the one the run's cache suggests (:func:`_path_expected`).
    ``bench``: the records are bench's (its cache labels, one ``--engine-config`` for every cache)."""
    from prefixbench.kernel.strategies.claude_code import warning_note as claude_note
    from prefixbench.kernel.strategies.codex import path_note, path_taken

    def warning_note(kind: str, times: str) -> tuple[str, str] | None:
        return claude_note(kind, times) or path_note(kind, times)

    records = list(records)
    varying = [k for k in ("profile",) if len({str(rec.get(k)) for rec in records}) > 1]
    found: dict[tuple[str, str], dict[str, int]] = {}
    for rec in records:
        for kind, count in parse_engine_warnings(rec.get("engine_warnings")):
            path = path_taken(kind)
            if path is not None and _path_expected(path, rec.get("cache")):
                continue
            runs = found.setdefault((str(rec["engine"]), kind), {})
            label = _run_label(rec, varying)
            runs[label] = runs.get(label, 0) + count
    notes = []
    for (engine, kind), runs in found.items():
        total = sum(runs.values())
        times = f"{total:,} time{'s' if total != 1 else ''}"
        where = _runs_text(runs)
        known = warning_note(kind, times)
        if known is not None:
            did, instead = known
            notes.append(f"{engine} {did} in {where}; {instead}")
        else:
            notes.append(f"{engine} warned '{kind}' {times} in {where}; a warning does not stop a run, the engine went on")
    return notes + ttl_notes(records, bench)


def ttl_notes(records: Iterable[Mapping[str, object]], bench: bool = False) -> list[str]:
    """One note per (engine, setting, cache) where an engine went by a cache lifetime setting of
    its own (Claude Code's ``cache_ttl_s``, OpenClaw's ``ttl_s``: each engine's ``ttl_setting``)
    other than the lifetime the run's cache gave its requests (an engine cannot see the run's
    cache), and the run had an idle gap long enough for that to matter (its ``longest_idle_ms``;
    a record without it, from an older prefixbench, is noted as before). For ``bench``, one note
    per (engine, setting) naming the workloads and, for each, the caches, with no advice: one
    ``--engine-config`` serves every cache there, so no setting suits them all."""
    from prefixbench.kernel.strategies import claude_code, openclaw
    from prefixbench.kernel.strategies.settings import TtlSetting, ttl_note_text
    from prefixbench.workloads.runs.sweep import recorded_engine_config

    notes: list[str] = []
    # (engine, setting: its acts_ms, which differs by cache, left 0) -> workload -> caches
    caches: dict[tuple[str, TtlSetting], dict[str, list[str]]] = {}
    for rec in records:
        cache = rec.get("cache")
        run_ttl = _run_ttl_ms(cache)
        if not isinstance(cache, str) or run_ttl is False or run_ttl is None:
            continue
        engine, settings = str(rec.get("engine")), recorded_engine_config(rec.get("params"))
        window = _int_or_none(rec.get("window"))
        found = claude_code.ttl_setting(engine, settings, run_ttl, window) or openclaw.ttl_setting(engine, settings, run_ttl, window)
        idle = _int_or_none(rec.get("longest_idle_ms"))
        if found is None or (idle is not None and idle < found.acts_ms):
            continue  # (no idle gap of the run was long enough for the setting to matter)
        if bench:
            by_workload = caches.setdefault((engine, found._replace(acts_ms=0)), {})
            if cache not in (named := by_workload.setdefault(str(rec.get("workload", "")), [])):
                named.append(cache)
            continue
        note = ttl_note_text(engine, found, run_ttl, cache)  # type: ignore[arg-type]
        if note not in notes:
            notes.append(note)
    for (engine, found), by_workload in caches.items():
        setting = found.seconds
        lifetime = "the 1 h cache" if setting == 3_600 else f"a cache of {setting:,} s"
        runs = _and([f"{'of ' + workload + ' ' if workload else ''}on {_and(named)}" for workload, named in by_workload.items()])
        notes.append(f"{engine} {found.does} by its {found.name} ({setting:,} s), not by "
                     f"the run's cache: its runs {runs} model {found.models} as on {lifetime} "
                     f"(one --engine-config serves every cache of a bench)")
    return notes


def _int_or_none(value: object) -> int | None:
    """``value`` as an int (a record's window), or None when it is none."""
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _run_ttl_ms(cache: object) -> int | None | bool:
    """The lifetime the cache named ``cache`` (a spec, or a bench label) gives its requests
    (None: entries never expire); False when ``cache`` is no cache it knows."""
    from prefixbench.simulator.errors import UserError
    from prefixbench.simulator.models import unmarked_ttl_ms

    if not isinstance(cache, str) or not cache:
        return False
    try:
        return unmarked_ttl_ms(_cache_spec(cache))
    except (UserError, ValueError):
        return False


def _cache_spec(cache: str) -> str:
    """The cache spec of ``cache``: a bench label's, or ``cache`` itself."""
    from prefixbench.workloads.runs.bench import BENCH_CACHES

    return next((entry.cache for entry in BENCH_CACHES if entry.label == cache), cache)


def _path_expected(path: str, cache: object) -> bool:
    """Whether codex-compact's ``auto`` path is the one the run's cache suggests: remote for a
    cache that prices OpenAI, local for any other (or none). Only a differing path is worth a note:
    an OpenAI-priced run that compacted locally, its route not OpenAI's, or the reverse."""
    from prefixbench.kernel.strategies.codex import REMOTE_PROVIDERS

    remote = isinstance(cache, str) and _cache_spec(cache).split(":", 1)[0].strip() in REMOTE_PROVIDERS
    return (path != "local") == remote


def engine_notes(tables: Iterable[tuple[str, Mapping[str, object]]]) -> list[str]:
    """What the runs' engine settings rest on, once each: ``tables`` pairs each engine with its
    ``--engine-config`` table (e.g. the assumed price of codex-compact's remote compact calls)."""
    from prefixbench.kernel.strategies.codex import run_notes

    return list(dict.fromkeys(note for engine, table in tables for note in run_notes(str(engine), table)))


def _run_label(rec: Mapping[str, object], varying: Collection[str] = ()) -> str:
    """``seed-coding 16k patched cache byte-exact`` (with ``seed 3`` when not the default shape,
    and the profile when named in ``varying``, the runs differing in it). The cache model is
    always named: an engine that reads its context's size from the provider's usage (Claude
    Code's) counts what that provider counts, so one run's warnings can differ from another's
    under another cache model (thinking-tools 24k: 34 thrash stops under byte-exact, 37 under
    Anthropic's model, which counts more tokens than chars/4)."""
    seed = rec.get("seed", 0)
    parts = [str(rec["workload"]), format_window(int(rec["window"])), str(rec["preset"])]  # type: ignore[call-overload]
    parts += [] if str(seed) in ("0", "") else [f"seed {seed}"]
    parts += [f"{key} {rec[key]}" for key in varying]
    cache = rec.get("cache")
    parts += [f"cache {cache}"] if isinstance(cache, str) and cache else []  # (not NaN, a frame's empty cell)
    return " ".join(parts)


def _runs_text(runs: dict[str, int]) -> str:
    """``seed-coding 16k patched``, or ``2 runs: a (3), b (16)``, naming at most :data:`NAMED_RUNS`."""
    if len(runs) == 1:
        return next(iter(runs))
    named = [f"{label} ({count:,})" for label, count in list(runs.items())[:NAMED_RUNS]]
    more = len(runs) - NAMED_RUNS
    return f"{len(runs)} runs: {', '.join(named)}" + (f" and {more} more" if more > 0 else "")
