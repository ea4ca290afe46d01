"""Baselines: compare two results of the same kind, figure by figure, against thresholds.

Two kinds of result compare:

- **sweep**: ``runs.csv`` or the ``sweep --format json`` output. One *unit* per run, keyed by
  the run schema's keys (workload, window, engine, preset, profile, cache, seed).
- **audit**: the ``audit --format json`` object (``{"schema": 6, "requests", "lanes",
  "causes", "totals", ...}``; schemas 1 to 6 are read, :data:`~prefixbench.workloads.audit.schema.READ_SCHEMAS`).
  One unit per lane (keyed by file and lane), one for the totals, and one per cause (shown, never
  gated: a cause's share moves whenever another one does); recommendations and their ranks are
  not read. A unit whose request counts differ (an audit of a log that grew) has its tokens and
  dollars judged per request (:data:`PER_REQUEST_GATES`), its dollars per priced request where
  either side left some unpriced (:func:`priced_counts`), a note saying so. A unit of the same
  request count whose unpriced request counts differ has its dollars over other requests on each
  side: listed not comparable, never gated (:func:`priced_otherwise`), a note saying how many
  each side left unpriced.

Which figures a unit has, and which threshold gates each, is declared on the record's schema
(:mod:`prefixbench.workloads.runs.schema`, :mod:`prefixbench.workloads.audit.schema`). A
numeric field an audit object has beyond its schema is shown, never gated.

A file is read into a :class:`Result` (kind + units of numeric figures); :func:`compare`
pairs the units of two results and measures each figure's change; :class:`Thresholds`
decides which changes are regressions. Named baselines live as JSON files under
``.prefixbench/`` (:func:`save_baseline`, :func:`load_baseline`), like pytest-benchmark's
``.benchmarks/``.

Every malformed input raises :class:`~prefixbench.simulator.errors.UserError` naming the file
and the key or line.
"""

from __future__ import annotations

import csv
import json
import math
import re
from decimal import Decimal, localcontext
from collections.abc import Mapping
from pathlib import Path

import msgspec
from prefixbench.simulator.checks import is_int, spelled
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.schema import NOT_REPORTED, READ_SCHEMAS, UNIT_FIELDS
from prefixbench.workloads.fields import Field, Gate, Worse, figures, names
from prefixbench.workloads.logs.reading import json_reason
from prefixbench.workloads.runs.schema import COST_COLUMNS, KEY_FIELDS, RUN_COLUMNS, RUN_FIGURES
from prefixbench.simulator.windows import format_window

#: The folder named baselines live in (relative to the working directory), like ``.benchmarks/``.
BASELINE_DIR = Path(".prefixbench")
BASELINE_FORMAT = 1
SWEEP_KEYS = names(KEY_FIELDS)
#: The figure a sweep JSON or runs.csv must have to be one.
_SWEEP_REQUIRED = (*(k for k in SWEEP_KEYS if k != "seed"), "session_uncached_tokens")
#: Each unit's compared figures by the name compare shows: a run's, a lane's, the totals', a cause's.
UNIT_FIGURES: dict[str, dict[str, Field]] = {
    "run": figures(RUN_FIGURES),
    **{unit: figures(fields) for unit, fields in UNIT_FIELDS.items()},
}


class Unit(msgspec.Struct, frozen=True):
    """One run, lane, cause or the totals: a label and its numeric figures."""

    group: str  # "run", "lane", "totals" or "cause"
    key: str
    figures: dict[str, float]
    #: A run's workload parameters (``steps=40``...): two runs made with different ones do not
    #: compare. Empty when unknown (an audit's units, a baseline saved before runs kept them).
    params: dict[str, str] = msgspec.field(default_factory=dict)
    #: The figures the audit wrote null where its schema says what a null says (a count no
    #: request of the unit reports: ``not reported``), in no ``figures``: never read as 0.
    unreported: tuple[str, ...] = ()

    @property
    def gated(self) -> bool:
        """Causes are context, not gates: the rest are."""
        return self.group != "cause"


class Result(msgspec.Struct, frozen=True):
    """A sweep or audit result reduced to comparable units."""

    kind: str  # "sweep" or "audit"
    source: str
    units: dict[tuple[str, str], Unit]
    #: The audit JSON's schema (None: a sweep, or a saved baseline, which does not keep it).
    schema: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "prefixbench_baseline": BASELINE_FORMAT,
            "kind": self.kind,
            "source": self.source,
            "units": [
                {"group": u.group, "key": u.key, "figures": u.figures, **({"params": u.params} if u.params else {}),
                 **({"unreported": list(u.unreported)} if u.unreported else {})}
                for u in self.units.values()
            ],
        }


# --- reading -------------------------------------------------------------------------------


def read_result(path: Path) -> Result:
    """Read a sweep (runs.csv, sweep JSON), an audit JSON or a saved baseline."""
    if path.is_dir():
        for name in ("runs.csv", "audit.json"):
            if (path / name).is_file():
                return read_result(path / name)
        raise UserError(f"{path}: a folder without runs.csv or audit.json (pass the file itself)")
    from prefixbench.workloads.logs.reading import check_readable

    if path.exists():
        check_readable(path)  # a device (/dev/zero) is refused, not read until memory runs out
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start}); expected runs.csv or a JSON result") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    return result_from_text(text, str(path))


def result_from_text(text: str, source: str) -> Result:
    """A result from its text (runs.csv, or JSON); ``source`` names it in errors and the table."""
    stripped = text.lstrip()
    if not stripped:
        raise UserError(f"{source}: empty file")
    if stripped[0] in "[{":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data" and stripped[0] == "{" and exc.lineno > 1:  # one object a line: a log
                raise UserError(f"{source}:{exc.lineno}: one JSON value a line (a log?), not a result: compare reads "
                                "runs.csv, sweep --format json or audit --format json") from None
            raise UserError(f"{source}:{exc.lineno}: not valid JSON ({json_reason(exc)})") from None
        except (ValueError, RecursionError):
            raise UserError(f"{source}: JSON nested too deep, or a number too long to read") from None
        return result_from_json(data, source)
    return _sweep_from_csv(text, source)


def result_from_json(data: object, source: str) -> Result:
    """A sweep list, an audit object or a saved baseline."""
    if isinstance(data, list):
        return _sweep_from_records(data, source)
    if isinstance(data, dict):
        if "prefixbench_baseline" in data:
            return _from_baseline(data, source)
        if "schema" in data or "lanes" in data:
            return _audit_from_json(data, source)
        if "results" in data and "preset" in data:  # check --out's check.json: spec verdicts, no figures to compare
            raise UserError(f"{source}: a check result (its 'results' of spec verdicts); compare reads sweep and audit "
                            "results (runs.csv, sweep --format json, audit --format json): check's exit status is its gate")
        raise UserError(f"{source}: a JSON object that is neither an audit result (no 'schema' key) nor a baseline")
    raise UserError(f"{source}: JSON {type(data).__name__} is neither a sweep (a list of runs) nor an audit (an object)")


def _sweep_from_csv(text: str, source: str) -> Result:
    reader = csv.DictReader(text.splitlines())
    try:
        rows = list(reader)
    except csv.Error as exc:  # a field over the csv module's limit (128 KiB): _csv.Error was a traceback
        # (line_num counts the lines read before the record that failed: that record starts a line on)
        raise UserError(f"{source}:{reader.line_num + 1}: not runs.csv nor JSON ({exc})") from None
    if not rows and not text.strip().splitlines()[0].startswith("workload"):
        raise UserError(f"{source}:1: not runs.csv (no 'workload' column) nor JSON")
    header = text.splitlines()[0].split(",")
    missing = [k for k in _SWEEP_REQUIRED if k not in header]
    if missing and "strategy" in header:  # bench-runs.csv or leaderboard.csv
        raise UserError(f"{source}:1: a bench result (its 'strategy' column); compare reads sweep and audit results "
                        "(runs.csv, sweep --format json, audit --format json), not a bench's")
    if missing and {"file", "lane"} <= set(header):  # an audit's audit.csv, one row per request
        raise UserError(f"{source}:1: an audit's per-request CSV (its 'file' and 'lane' columns); compare reads an "
                        "audit as audit.json (written beside it by --out) or audit --format json")
    if missing:
        raise UserError(f"{source}:1: not runs.csv: missing column(s) {', '.join(missing)}")
    records = []
    for line, row in enumerate(rows, start=2):
        rec: dict[str, object] = {}
        for key, value in row.items():
            if key is None or value is None:
                raise UserError(f"{source}:{line}: wrong number of fields")
            rec[key] = _csv_value(value, source, line, key)
        records.append(rec)
    return _sweep_units(records, source, lambda i: f"{source}:{i + 2}")


def _csv_value(value: str, source: str, line: int, key: str) -> object:
    if value.startswith("["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            raise UserError(f"{source}:{line}: column {key!r} is not a JSON list: {value[:40]!r}") from None
    return value


def _sweep_from_records(data: list, source: str) -> Result:
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise UserError(f"{source}: run [{i}] is a {type(rec).__name__}, not an object")
    return _sweep_units(data, source, lambda i: f"{source}: run [{i}]")


def _sweep_units(records: list[dict], source: str, where) -> Result:
    units: dict[tuple[str, str], Unit] = {}
    for i, rec in enumerate(records):
        missing = [k for k in _SWEEP_REQUIRED if k not in rec]
        if missing:
            raise UserError(f"{where(i)}: missing {', '.join(missing)} (not a sweep run)")
        key = run_key(rec)
        if ("run", key) in units:
            raise UserError(f"{where(i)}: run {key} appears twice")
        units[("run", key)] = Unit("run", key, _run_figures(rec, where(i)), run_params(rec))
    if not units:
        raise UserError(f"{source}: no runs")
    return Result("sweep", source, units)


def run_key(rec: Mapping[str, object]) -> str:
    """A run's label: ``key=value`` for each key of the run schema. Seed 0 (each workload's
    default shape, and the only seed of a sweep without ``--seeds``) is left out, so results
    written before runs had a seed key the same runs; a run without a seed is seed 0."""
    parts = []
    for name in SWEEP_KEYS:
        match name:
            case "window":
                parts.append(f"window={_window_text(rec[name])}")
            case "seed":
                seed = _seed_text(rec.get("seed", 0))
                if seed != "0":
                    parts.append(f"seed={seed}")
            case _:
                parts.append(f"{name}={rec[name]}")
    return " ".join(parts)


#: The keys ``sweep --format json`` adds to a run besides the run record's columns and its
#: ``params`` (spread into their own keys there).
_SWEEP_JSON_ADDED = {"uncached_change_vs_legacy", "legacy_rejected", "compaction_usd", "saving_vs_legacy_usd", "saving_vs_legacy_pct"}
_NOT_PARAMS = {*RUN_COLUMNS, *COST_COLUMNS, *_SWEEP_JSON_ADDED}


def run_params(rec: Mapping[str, object]) -> dict[str, str]:
    """A run's workload parameters (``steps``, ``effort``...): runs.csv's ``params`` column
    (``effort=max;steps=40``), or the keys the JSON output spreads it into."""
    if isinstance(rec.get("params"), str):
        pairs = (p.split("=", 1) for p in str(rec["params"]).split(";") if "=" in p)
        return {k: v for k, v in sorted(pairs)}
    return {k: str(v) for k, v in sorted(rec.items()) if k not in _NOT_PARAMS and not isinstance(v, (list, dict))}


def _seed_text(value: object) -> str:
    """``1`` for 1, 1.0 and "1" alike (runs.csv and the JSON output key the same run)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):  # (an integer too large for a float: its own digits)
        return str(value)
    return str(int(number)) if math.isfinite(number) and number == int(number) else str(value)


def _run_figures(rec: Mapping[str, object], where: str) -> dict[str, float]:
    """A run's compared figures, in the schema's order; a list figure (one value a summary
    call) as its sum or minimum, absent when the run made no summary call."""
    figures: dict[str, float] = {}
    for field in RUN_FIGURES:
        if field.reduce is not None:
            values = _number_list(rec.get(field.name, []), where, field.name)
            if values:
                figures[field.figure] = min(values) if field.reduce == "min" else float(sum(values))
            continue
        if field.name not in rec or rec[field.name] in ("", None):
            continue
        figures[field.figure] = _number(rec[field.name], where, field.name)
    return figures


def _window_text(value: object) -> str:
    try:
        n = int(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):  # (too large for a float, or infinite: its own text)
        return str(value)
    return format_window(n)


def _audit_from_json(data: dict, source: str) -> Result:
    schema = data.get("schema")
    # (a bool is an int to Python: true is no schema; nor is 6.0, which Python finds equal to 6)
    if not is_int(schema) or schema not in READ_SCHEMAS:
        raise UserError(
            f"{source}: key 'schema': audit schema {spelled(schema)} is not supported "
            f"(this prefixbench reads {', '.join(map(str, READ_SCHEMAS))})"
        )
    for name, kind in (("lanes", list), ("causes", list), ("totals", dict)):
        if not isinstance(data.get(name), kind):
            raise UserError(f"{source}: key {name!r}: expected a JSON {kind.__name__}, got {type(data.get(name)).__name__}")
    units: dict[tuple[str, str], Unit] = {}
    for i, lane in enumerate(data["lanes"]):
        if not isinstance(lane, dict) or "lane" not in lane:
            raise UserError(f"{source}: lanes[{i}]: not an object with a 'lane'")
    tails = _file_names([str(lane.get("file", "")) for lane in data["lanes"]])
    for i, lane in enumerate(data["lanes"]):
        where = f"{source}: lanes[{i}]"
        lane = _lost_unseen(lane, schema, "reported_cache_read")
        key = f"{tails.get(str(lane.get('file', '')), '')} {lane['lane']}".strip()
        _add_unit(units, Unit("lane", key, _predicted_named(_numeric_fields(lane, "lane", where), lane, "reported_cache_read"),
                              unreported=_unreported(lane, "lane")), where)
    whole = _lost_unseen(data["totals"], schema, "cache_read")
    totals = _numeric_fields(whole, "totals", f"{source}: totals")
    units[("totals", "totals")] = Unit("totals", "totals", _predicted_named(totals, whole, "cache_read"),
                                       unreported=_unreported(whole, "totals"))
    for i, cause in enumerate(data["causes"]):
        where = f"{source}: causes[{i}]"
        if not isinstance(cause, dict) or "cause" not in cause:
            raise UserError(f"{where}: not an object with a 'cause'")
        _add_unit(units, Unit("cause", str(cause["cause"]), _numeric_fields(cause, "cause", where)), where)
    return Result("audit", source, units, schema)


#: The fields that name an audit unit (never compared).
_AUDIT_KEYS = {unit: names(fields, "key") for unit, fields in UNIT_FIELDS.items()}


#: A hit ratio the cache model predicted (its unit's reported cache read is null: a block-hash or
#: Mooncake trace), named apart from a reported one: gated against another predicted one only.
PREDICTED = " (predicted)"


def _predicted_named(figures: dict[str, float], obj: Mapping[str, object], reported: str) -> dict[str, float]:
    """``figures`` with ``hit_ratio`` named ``hit_ratio (predicted)`` where ``obj``'s ``reported``
    cache read is null (the audit's ``pred``), in the same place."""
    if "hit_ratio" not in figures or obj.get(reported, 0) is not None:
        return figures
    return {f"{name}{PREDICTED}" if name == "hit_ratio" else name: value for name, value in figures.items()}


def _lost_unseen(obj: dict, schema: int, reported: str) -> dict:
    """``obj`` (a lane's or the totals' record) with ``lost_usd`` null where an audit saved before
    schema 3 wrote 0.0 for a loss nothing told: its ``reported`` cache read null and its lost
    tokens null or 0 (no request reports its cache use; a request-body log's predicted loss of 0
    is read so too, the one figure the old record cannot tell apart). Schema 3 writes that null."""
    if schema >= 3 or obj.get(reported, 0) is not None or obj.get("lost_usd") != 0 or obj.get("lost_tokens"):
        return obj
    return {**obj, "lost_usd": None}


def _unreported(obj: Mapping[str, object], unit: str) -> tuple[str, ...]:
    """The figures of an audit object written null where the schema says such a null is a count
    no request reports (``not reported``, as an OpenAI-shaped lane's writes, or the lost dollars
    of one none of whose requests reports its cache use): named, never 0. (Dollars null because
    none of its requests is priced are unknown for that reason instead: :func:`_unpriced`.)"""
    declared = UNIT_FIGURES[unit]
    requests = obj.get("requests", 0)
    left = obj.get("unpriced_requests", 0)
    unpriced = (type(requests) is int and type(left) is int and requests > 0 and left >= requests)
    return tuple(key for key, value in obj.items()
                 if value is None and (field := declared.get(key)) is not None and field.null == NOT_REPORTED
                 and not (unpriced and key in UNPRICED_DOLLARS))


def _file_names(files: list[str]) -> dict[str, str]:
    """Each log file by the shortest path tail that tells the files apart (its name, usually), so
    an audit made on a CI runner compares with one made in another checkout."""
    distinct = sorted(set(files))
    for depth in range(1, 64):
        tails = {f: "/".join(Path(f).parts[-depth:]) for f in distinct}
        if len(set(tails.values())) == len(distinct):
            return tails
    return {f: f for f in distinct}


def _add_unit(units: dict[tuple[str, str], Unit], unit: Unit, where: str) -> None:
    if (unit.group, unit.key) in units:
        raise UserError(f"{where}: {unit.group} {unit.key!r} appears twice")
    units[(unit.group, unit.key)] = unit


def _float(value: int | float) -> float:
    """``value`` as a float; an integer too large for one is infinite (float() raised OverflowError)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _numeric_fields(obj: Mapping[str, object], unit: str, where: str) -> dict[str, float]:
    """The numeric fields of an audit object, in its order (booleans and the unit's key fields
    left out; a numeric field the schema does not declare is kept, shown and never gated)."""
    keys = _AUDIT_KEYS[unit]
    out = {}
    for key, value in obj.items():
        if key in keys or isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            number = _float(value)
            if not math.isfinite(number):
                raise UserError(f"{where}: key {key!r} is {value!r:.40}, not a finite number")
            if key == "requests" and (number < 0 or not number.is_integer()):
                # (a count per-request judging divides by: 0.5 read as "98.1% fewer requests")
                raise UserError(f"{where}: key 'requests' is {value!r:.40}, expected a whole number of requests (0 or more)")
            out[key] = number
    return out


def _from_baseline(data: dict, source: str) -> Result:
    if data.get("prefixbench_baseline") != BASELINE_FORMAT or data.get("kind") not in ("sweep", "audit"):
        raise UserError(f"{source}: not a baseline this prefixbench can read (format {data.get('prefixbench_baseline')!r})")
    units: dict[tuple[str, str], Unit] = {}
    listed = data.get("units", [])
    if not isinstance(listed, list):  # (a number here was a TypeError traceback: fuzz60)
        raise UserError(f"{source}: 'units' is a JSON {type(listed).__name__}, expected a list of units")
    for i, u in enumerate(listed):
        try:
            params = {str(k): str(v) for k, v in u.get("params", {}).items()}
            unreported = tuple(str(name) for name in u.get("unreported", []))
            unit = Unit(str(u["group"]), str(u["key"]), {str(k): float(v) for k, v in u["figures"].items()}, params, unreported)
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
            raise UserError(f"{source}: units[{i}] is malformed") from None
        # Each figure finite, as an audit's or a sweep's are read: NaN, or 1e999 (infinity to
        # json.loads), reached the table's formatting as a ValueError traceback (fuzz60).
        for name, value in unit.figures.items():
            if not math.isfinite(value):
                raise UserError(f"{source}: units[{i}]: figure {name!r} is {value}, expected a finite number")
            if name == "requests" and (value < 0 or not value.is_integer()):
                raise UserError(f"{source}: units[{i}]: figure 'requests' is {value}, expected a whole number of requests (0 or more)")
        _add_unit(units, unit, f"{source}: units[{i}]")
    return Result(str(data["kind"]), str(data.get("source", source)), units)


def _number(value: object, where: str, key: str) -> float:
    if isinstance(value, bool):
        raise UserError(f"{where}: {key!r} is a boolean, expected a number")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UserError(f"{where}: {key!r} is {value!r}, expected a number") from None
    except OverflowError:  # an integer too large for a float
        raise UserError(f"{where}: {key!r} is {value!r:.40}, expected a finite number") from None
    if not math.isfinite(number):
        raise UserError(f"{where}: {key!r} is {value!r}, expected a finite number")
    return number


def _number_list(value: object, where: str, key: str) -> list[float]:
    if not isinstance(value, list):
        raise UserError(f"{where}: {key!r} is {value!r}, expected a list of numbers")
    return [_number(v, where, key) for v in value]


# --- thresholds ----------------------------------------------------------------------------

#: Threshold names -> (unit of the limit, "rise" or "drop" is bad, which figures it covers).
THRESHOLD_HELP = {
    "uncached": "relative rise of uncached tokens (session, summary calls, a lane's uncached input)",
    "hit": "drop of a hit ratio, in percentage points",
    "usd": "relative rise of dollars paid (total_usd, cost_usd) or lost (lost_usd)",
    "rejected": "rise in the number of rejected (400) requests",
    "written": "relative rise of tokens written to the cache",
}
DEFAULT_THRESHOLDS = "uncached=2%,hit=0.5pt,usd=5%,rejected=0"


def figure_field(group: str, name: str) -> Field | None:
    """The schema's declaration of a unit's figure (None: a figure the schema does not declare);
    a predicted hit ratio's is the hit ratio's."""
    return UNIT_FIGURES.get(group, {}).get(name.removesuffix(PREDICTED))


def figure_gate(group: str, name: str) -> Gate | None:
    """Which threshold a unit's figure falls under, as its schema declares (None: shown, not gated)."""
    field = figure_field(group, name)
    return None if field is None else field.gate


class Limit(msgspec.Struct, frozen=True):
    """One threshold: how much a figure of its class may worsen."""

    name: str
    amount: float
    unit: str  # "%" (relative), "pt" (percentage points of a ratio) or "" (absolute)

    def text(self) -> str:
        return f"{self.name}={_trim(self.amount)}{self.unit}"

    def crossed(self, base: float, new: float, direction: Worse = "rise") -> bool:
        """Whether ``base -> new`` worsens by more than this limit (``direction``: which way a
        figure worsens, as its schema declares)."""
        worse = base - new if direction == "drop" else new - base
        if worse <= 0:
            return False
        if self.unit == "%":
            if base == 0:
                return True  # from nothing to something: no percentage is small enough
            return worse / abs(base) * 100 > self.amount + 1e-9
        if self.unit == "pt":
            return worse * 100 > self.amount + 1e-9
        return worse > self.amount + 1e-9


class Thresholds(msgspec.Struct, frozen=True):
    limits: dict[str, Limit] = msgspec.field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, option: str = "--max-regression", over: str | None = None) -> Thresholds:
        """``uncached=2%,hit=0.5pt,usd=5%``; ``none`` for no gate at all; ``NAME=off`` turns one
        limit off. With ``over`` (the defaults' text), each named limit replaces only its own
        default and the others stay in force: ``uncached=15%`` over the defaults still gates hit,
        usd and rejected."""
        if text.strip().lower() == "none":
            return cls({})
        limits: dict[str, Limit] = dict(cls.parse(over, option).limits) if over is not None else {}
        for item in text.split(","):
            item = item.strip()
            off = re.fullmatch(r"([a-z]+)=off", item)
            match = off or re.fullmatch(r"([a-z]+)=([0-9]+(?:\.[0-9]+)?)(%|pt)?", item)
            if not match:
                raise UserError(f"{option}: {item!r} is not NAME=AMOUNT[%|pt] or NAME=off (e.g. uncached=2%,hit=0.5pt)")
            name = match.group(1)
            if name not in THRESHOLD_HELP:
                raise UserError(f"{option}: unknown figure {name!r} (known: {', '.join(THRESHOLD_HELP)})")
            if off:
                limits.pop(name, None)
                continue
            amount, unit = float(match.group(2)), match.group(3) or ""
            if name == "hit" and unit != "pt":
                raise UserError(f"{option}: hit is a ratio: give its limit in points, e.g. hit=0.5pt")
            if name != "hit" and unit == "pt":
                raise UserError(f"{option}: {name} takes a % or an absolute amount, not points")
            limits[name] = Limit(name, amount, unit)
        return cls({name: limits[name] for name in THRESHOLD_HELP if name in limits})

    def text(self) -> str:
        return ",".join(limit.text() for limit in self.limits.values()) or "none"


# --- comparing -----------------------------------------------------------------------------


class Change(msgspec.Struct, frozen=True):
    """One figure of one unit, before and after."""

    group: str
    key: str
    figure: str
    base: float | None
    new: float | None
    limit: Limit | None
    regressed: bool
    #: False for a hit ratio predicted on one side and reported on the other (``base`` the
    #: side's figure, ``figure`` naming which is predicted), for dollars unknown on one side
    #: only (None there: none of the unit's requests priced), or for dollars over another count
    #: of unpriced requests on each side (:func:`priced_otherwise`): listed, never gated.
    comparable: bool = True
    #: The side whose audit reports no such count (its null: ``BASE`` or ``NEW``; that side's
    #: value is None), "" where both do: listed, never gated, never read as 0.
    unreported: str = ""
    #: BASE's requests over NEW's where the unit's request counts differ and the figure grows
    #: with them (:data:`PER_REQUEST_GATES`): judged per request, ``new`` taken at BASE's count
    #: (:attr:`judged_new`); None where the figures are judged as they are.
    per_request: float | None = None
    #: BASE's and NEW's request counts where :attr:`per_request` (its exact terms: :func:`at_base_requests`).
    counts: tuple[float, float] | None = None
    #: Whether :attr:`counts` are BASE's and NEW's priced requests, not all of them: dollars of a
    #: grown log whose unpriced requests differ (:func:`priced_counts`), judged per priced request.
    priced: bool = False

    @property
    def judged_new(self) -> float | None:
        """NEW's figure as the limit judges it: at BASE's request count where :attr:`per_request`."""
        if self.new is None or self.per_request is None:
            return self.new
        if self.counts is not None:
            return at_base_requests(self.new, *self.counts)
        return self.new * self.per_request

    @property
    def delta(self) -> float | None:
        return None if self.base is None or self.new is None else self.new - self.base

    @property
    def relative(self) -> float | None:
        if self.base is None or self.new is None or self.base == 0:
            return None
        return (self.new - self.base) / abs(self.base)

    @property
    def relative_per_request(self) -> float | None:
        """The relative change of the figure per request (None where not judged per request)."""
        judged = self.judged_new
        if self.per_request is None or self.base is None or judged is None or self.base == 0:
            return None
        return (judged - self.base) / abs(self.base)


class Comparison(msgspec.Struct, frozen=True):
    kind: str
    base_source: str
    new_source: str
    thresholds: Thresholds
    changes: tuple[Change, ...]
    only_base: tuple[str, ...]  # "group key" of units missing from NEW
    only_new: tuple[str, ...]
    #: "group key: param BASE -> NEW" of runs both results have, made with other workload
    #: parameters: not compared, and the gate cannot vouch for them.
    mismatched: tuple[str, ...] = ()
    #: What the reader must know to read the changes (two audit schemas that count otherwise).
    notes: tuple[str, ...] = ()

    @property
    def regressions(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.regressed)

    @property
    def missing_gated(self) -> tuple[str, ...]:
        """Gated units the baseline has and NEW lacks: the gate cannot vouch for them."""
        return tuple(u for u in self.only_base if not u.startswith("cause "))

    @property
    def failed(self) -> bool:
        return bool(self.regressions or self.missing_gated or self.mismatched)

    def units(self) -> list[tuple[str, str]]:
        return list(dict.fromkeys((c.group, c.key) for c in self.changes))


#: The gates whose figures grow with the requests a unit holds (tokens, dollars): where BASE and
#: NEW hold different counts of requests (an audit of a log that grew), they are judged per
#: request. A hit ratio is one already; ``rejected`` counts a run's, which has no request count.
PER_REQUEST_GATES = frozenset({"uncached", "usd", "written"})


def at_base_requests(value: float, base_requests: float, new_requests: float) -> float:
    """NEW's ``value`` over ``new_requests`` taken at ``base_requests``, worked in the decimals the
    JSON wrote (a float's shortest text), not in floats: a per-request figure that did not change
    comes out as BASE's exactly, its change 0, not float noise (``0.003456 * 2 / 3`` against
    ``0.002304`` gave -1.88e-16)."""
    with localcontext() as ctx:
        ctx.prec = 60
        return float(Decimal(repr(value)) * Decimal(repr(base_requests)) / Decimal(repr(new_requests)))


def request_scale(base: Unit, new: Unit) -> float | None:
    """BASE's request count over NEW's where both give one and they differ (None: the same
    count, or a unit with none, such as a sweep's run)."""
    b, n = base.figures.get("requests"), new.figures.get("requests")
    if b is None or n is None or b <= 0 or n <= 0 or b == n:
        return None
    return b / n


def compare(base: Result, new: Result, thresholds: Thresholds, per_request: bool = True) -> Comparison:
    """Pair the units of two results of one kind and judge every shared figure. ``per_request``:
    a unit whose request counts differ (an audit of a grown log) has its tokens and dollars
    (:data:`PER_REQUEST_GATES`) judged per request, said in a note; False judges them as they are."""
    if base.kind != new.kind:
        raise UserError(
            f"cannot compare {_article(base.kind)} result ({base.source}) with {_article(new.kind)} result ({new.source}): "
            "compare a sweep with a sweep, an audit with an audit"
        )
    paired = [k for k in base.units if k in new.units]
    mismatched = {k: why for k in paired if (why := params_differ(base.units[k], new.units[k]))}
    shared = [k for k in paired if k not in mismatched]
    if paired and not shared:
        first = next(iter(mismatched.values()))
        raise UserError(
            f"{base.source} and {new.source} were made with different workload parameters ({first}): "
            "nothing to compare (run both with the same options)"
        )
    if not shared:
        raise UserError(
            f"{base.source} and {new.source} share no {'run' if base.kind == 'sweep' else 'lane'}: "
            "nothing to compare (were they made with the same options?)"
        )
    changes = []
    scaled: list[tuple[Unit, Unit]] = []
    #: The units whose dollars are not compared, their unpriced requests differing (by key, in order).
    uncovered: dict[tuple[str, str], tuple[Unit, Unit]] = {}
    for key in shared:
        b, n = base.units[key], new.units[key]
        scale = request_scale(b, n) if per_request and b.gated else None
        if scale is not None:
            scaled.append((b, n))
        names = list(dict.fromkeys([*b.figures, *n.figures, *b.unreported, *n.unreported]))
        unlike = _unlike_hit(b.figures, n.figures)
        done = False
        for name in names:
            if unlike and name.removesuffix(PREDICTED) == "hit_ratio":
                if not done:  # one row for the pair, where the first of the two stood
                    changes.append(Change(b.group, b.key, unlike, b.figures.get("hit_ratio", b.figures.get(f"hit_ratio{PREDICTED}")),
                                          n.figures.get("hit_ratio", n.figures.get(f"hit_ratio{PREDICTED}")), None, False, comparable=False))
                    done = True
                continue
            bv, nv = b.figures.get(name), n.figures.get(name)
            unreported = ("BASE" if name in b.unreported else "") + ("NEW" if name in n.unreported else "")
            if unreported == "BASENEW":
                continue  # neither reports it: nothing to compare, as a figure neither has
            field = figure_field(b.group, name)
            gate = field.gate if field is not None and b.gated else None
            limit = thresholds.limits.get(gate) if gate else None
            if name in UNPRICED_DOLLARS and (_unpriced(b) or _unpriced(n)):
                # Dollars of none of its requests are unknown (null, or 0.0 in an audit saved
                # before it wrote null): listed where one side has them, never a change from 0.
                bv, nv = (None if _unpriced(b) else bv), (None if _unpriced(n) else nv)
                changes.append(Change(b.group, b.key, name, bv, nv, limit, False, comparable=bv is None and nv is None))
                if bv is not None or nv is not None:
                    uncovered.setdefault((b.group, b.key), (b, n))
                continue
            by_request = scale if scale is not None and gate in PER_REQUEST_GATES else None
            counts = (b.figures["requests"], n.figures["requests"]) if by_request is not None else None
            priced = priced_counts(b, n) if name in UNPRICED_DOLLARS and not unreported else None
            per_priced = by_request is not None and priced is not None and priced != counts
            if by_request is not None and priced is not None and coverage_follows_requests(b, n):
                # A log that grew (already judged per request), the requests it gained able to
                # explain its change in unpriced ones: its dollars per PRICED request, so a
                # request priced on neither side neither hides nor makes a rise.
                counts, by_request = priced, priced[0] / priced[1]
            elif priced is not None and priced_otherwise(b, n):
                # The same requests, or a grown log's, priced otherwise on each side (an
                # --assume-model or a price table that prices more of them): not the same
                # figure, not gated.
                changes.append(Change(b.group, b.key, name, bv, nv, limit, False, comparable=False))
                uncovered.setdefault((b.group, b.key), (b, n))
                continue
            judged = nv if nv is None or counts is None else at_base_requests(nv, *counts)
            regressed = bool(
                limit and field and bv is not None and judged is not None and limit.crossed(bv, judged, field.worse)
            )
            changes.append(Change(b.group, b.key, name, bv, nv, limit, regressed, unreported=unreported,
                                  per_request=by_request, counts=counts,
                                  priced=per_priced))
    only_base = tuple(f"{g} {k}" for g, k in base.units if (g, k) not in new.units)
    only_new = tuple(f"{g} {k}" for g, k in new.units if (g, k) not in base.units)
    unlike = tuple(f"{g} {k}: {why}" for (g, k), why in mismatched.items())
    return Comparison(base.kind, base.source, new.source, thresholds, tuple(changes), only_base, only_new, unlike,
                      schema_notes(base.schema, new.schema) + per_request_notes(scaled, set(uncovered))
                      + unpriced_notes(list(uncovered.values())))


def _label(unit: Unit) -> str:
    return "totals" if unit.group == "totals" else f"{unit.group} {unit.key}"


def per_request_notes(scaled: list[tuple[Unit, Unit]], unpriced: set[tuple[str, str]] = frozenset()) -> tuple[str, ...]:
    """One line a unit whose request counts differ, judged per request: ``totals: NEW has 1.8%
    more requests (511 against 520): its tokens and dollars compared per request`` (its tokens
    only where its dollars are not compared: ``unpriced`` holds those units' keys; its dollars per
    priced request where either side left requests unpriced: :func:`priced_counts`)."""
    notes = []
    for b, n in scaled:
        was, now = b.figures["requests"], n.figures["requests"]
        more = (now - was) / was * 100
        priced = priced_counts(b, n)
        what = "tokens and dollars compared per request"
        if (b.group, b.key) in unpriced:
            what = "tokens compared per request"
        elif priced is not None and (priced[0] != was or priced[1] != now):
            what = (f"tokens compared per request, its dollars per priced request ({priced[0]:,.0f} of {was:,.0f} "
                    f"priced in BASE, {priced[1]:,.0f} of {now:,.0f} in NEW)")
        notes.append(f"{_label(b)}: NEW has {abs(more):.1f}% {'more' if more > 0 else 'fewer'} requests ({was:,.0f} in BASE, "
                     f"{now:,.0f} in NEW): its {what} (--per-request off compares them as they are)")
    return tuple(notes)


def priced_counts(base: Unit, new: Unit) -> tuple[float, float] | None:
    """BASE's and NEW's priced requests (``requests`` less ``unpriced_requests``) where both
    audits write the counts and both priced some; None otherwise (a sweep's run, an audit of
    schema 1 before it counted them, or a side that priced none: :func:`_unpriced`)."""
    if base.group == "run" or any("unpriced_requests" not in u.figures or "requests" not in u.figures for u in (base, new)):
        return None
    counts = tuple(u.figures["requests"] - u.figures["unpriced_requests"] for u in (base, new))
    return counts if min(counts) > 0 else None


def coverage_follows_requests(base: Unit, new: Unit) -> bool:
    """Whether the requests one side has more of can alone explain the change in an audit unit's
    unpriced requests: with ``dR`` the side with more requests has more, ``dU`` its unpriced
    requests less the other's, ``0 <= dU <= dR``. A log that grew by one call with that call
    unpriced (dU 1, dR 1) or priced (dU 0) is; the same log grown and audited with an
    ``--assume-model`` that prices calls BASE left unpriced (dU -2, dR 1) is not: its dollars
    cover other requests, not comparable (:func:`priced_otherwise`). A log that shrank is read the
    same way, the roles swapped. Needs both counts on both sides (:func:`priced_counts`)."""
    grown = new.figures["requests"] - base.figures["requests"]
    unpriced = new.figures["unpriced_requests"] - base.figures["unpriced_requests"]
    if grown < 0:
        grown, unpriced = -grown, -unpriced
    return 0 <= unpriced <= grown


def priced_otherwise(base: Unit, new: Unit) -> bool:
    """Whether an audit unit's dollars cover another set of requests on each side: both audits
    write its ``unpriced_requests`` and the counts differ (the same log audited with an
    ``--assume-model`` that prices 804 more requests: +95% dollars, none of it a regression). An
    audit that does not write the count (schema 1 before it did) is judged as before. Where the
    request counts differ too (a log that grew), :func:`compare` judges the dollars per priced
    request instead (:func:`priced_counts`) where the requests gained can explain the change
    (:func:`coverage_follows_requests`), unless ``--per-request off``."""
    if base.group == "run" or "unpriced_requests" not in base.figures or "unpriced_requests" not in new.figures:
        return False
    return base.figures["unpriced_requests"] != new.figures["unpriced_requests"]


def unpriced_notes(units: list[tuple[Unit, Unit]]) -> tuple[str, ...]:
    """Why units' dollars are not compared: ``totals: dollars not comparable: 804 of 1,542
    requests unpriced in BASE, 0 of 1,542 in NEW``; the lanes in one line, their counts summed
    (seven lanes priced by an --assume-model are not seven lines), the causes (never gated) in one."""
    notes = []
    lanes = [(b, n) for b, n in units if b.group == "lane"]
    causes = [b.key for b, n in units if b.group == "cause"]
    if lanes:
        names = ", ".join(b.key for b, _ in lanes[:3]) + (f" and {len(lanes) - 3} more" if len(lanes) > 3 else "")
        bases, news = [b for b, _ in lanes], [n for _, n in lanes]
        notes.append(f"{_count(len(lanes), 'lane')} ({names}): dollars not comparable: {_unpriced_text(bases)} "
                     f"requests unpriced in BASE, {_unpriced_text(news)} in NEW ({_priced_text(bases, news)})")
    for b, n in units:
        if b.group == "totals":
            notes.append(f"totals: dollars not comparable: {_unpriced_text([b])} requests unpriced in BASE, {_unpriced_text([n])} "
                         f"in NEW ({_priced_text([b], [n])})")
    if causes:
        notes.append(f"{_count(len(causes), 'cause')} ({', '.join(causes)}): dollars not comparable, their unpriced requests "
                     "differing between BASE and NEW (causes are never gated)")
    return tuple(notes)


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _unpriced_text(units: list[Unit]) -> str:
    """``804 of 1,542``: the units' unpriced requests of their requests, summed."""
    left = sum(unit.figures.get("unpriced_requests", 0) for unit in units)
    return f"{left:,.0f} of {sum(unit.figures.get('requests', 0) for unit in units):,.0f}"


def _priced_text(bases: list[Unit], news: list[Unit]) -> str:
    """What the units' dollars are over, from the counts: ``other requests priced on each side:
    listed, never gated``, or ``none priced in BASE: NEW's dollars listed, never gated`` where a
    side priced none of them (its dollars unknown, not $0)."""
    none = [side for side, units in (("BASE", bases), ("NEW", news))
            if sum(u.figures.get("requests", 0) - u.figures.get("unpriced_requests", 0) for u in units) <= 0]
    if len(none) == 1:
        other = "NEW" if none[0] == "BASE" else "BASE"
        return f"none priced in {none[0]}: {other}'s dollars listed, never gated"
    if none:
        return "none priced on either side: nothing to compare"
    return "other requests priced on each side: listed, never gated"


#: The audit schema from which a miss two causes share splits its loss between them.
SHARED_SPLIT_SCHEMA = 5


def schema_notes(base: int | None, new: int | None) -> tuple[str, ...]:
    """What two audit schemas count otherwise, where the two results are of such schemas."""
    if base is None or new is None or (base >= SHARED_SPLIT_SCHEMA) == (new >= SHARED_SPLIT_SCHEMA):
        return ()
    return (f"audit schema {base} (BASE) and {new} (NEW) count shared misses otherwise: from schema {SHARED_SPLIT_SCHEMA} a "
            "miss two causes share splits its loss between them (the second cause's part in its lost_tokens and lost_usd), "
            "before it gave the whole loss to the leading cause, so causes' figures may change with no change in the log",)


#: An audit unit's dollar figures over its requests: unknown where none of them is priced.
UNPRICED_DOLLARS = ("cost_usd", "lost_usd")


def _unpriced(unit: Unit) -> bool:
    """Whether none of an audit unit's requests is priced (its ``unpriced_requests`` are all of
    them): its :data:`UNPRICED_DOLLARS` are unknown, whether the audit wrote them null or, as one
    made before it did, 0.0."""
    requests = unit.figures.get("requests", 0)
    return unit.group != "run" and requests > 0 and unit.figures.get("unpriced_requests", 0) >= requests


def _unlike_hit(base: Mapping[str, float], new: Mapping[str, float]) -> str:
    """The figure name of a hit ratio predicted on one side and reported on the other (``""``
    when both are of one kind, or a side has none): the two measure different things."""
    if "hit_ratio" in base and f"hit_ratio{PREDICTED}" in new:
        return "hit_ratio (NEW predicted)"
    if f"hit_ratio{PREDICTED}" in base and "hit_ratio" in new:
        return "hit_ratio (BASE predicted)"
    return ""


def params_differ(base: Unit, new: Unit) -> str:
    """``steps 40 in BASE, 60 in NEW``: the workload parameters two runs of one key were made
    with, where they differ ("" when they agree, or when either result does not record them)."""
    if not base.params or not new.params:
        return ""
    diffs = [
        f"{name} {base.params.get(name, '(unset)')} in BASE, {new.params.get(name, '(unset)')} in NEW"
        for name in sorted({*base.params, *new.params})
        if base.params.get(name) != new.params.get(name)
    ]
    return "; ".join(diffs)


# --- named baselines -----------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def baseline_path(name: str, root: Path = BASELINE_DIR) -> Path:
    if not _NAME.fullmatch(name):
        raise UserError(f"baseline name {name!r}: start with an ASCII letter or digit, then ASCII letters, digits, '.', '_' or '-', "
                        "at most 100 characters (e.g. v0.3 or main)")
    return root / f"{name}.json"


def save_baseline(result: Result, name: str, root: Path = BASELINE_DIR) -> Path:
    """Store ``result`` as ``root/NAME.json`` (written whole, then renamed into place)."""
    path = baseline_path(name, root)
    tmp = path.with_suffix(".json.tmp")
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(result.to_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:  # a read-only folder, a full disk: no half-written baseline stays
        if tmp.parent.is_dir():
            tmp.unlink(missing_ok=True)
        raise UserError(f"--save {name}: cannot write {path} ({exc.strerror or exc})") from None
    return path


def load_baseline(name: str, root: Path = BASELINE_DIR) -> Result:
    path = baseline_path(name, root)
    if not path.is_file():
        known = sorted(p.stem for p in root.glob("*.json")) if root.is_dir() else []
        raise UserError(
            f"--compare: no baseline {name!r} in {root}/ "
            + (f"(saved: {', '.join(known)})" if known else "(none saved yet: use --save NAME first)")
        )
    found = read_result(path)
    # Named as the baseline, with the file it was saved from: in CI that file is another job's.
    return msgspec.structs.replace(found, source=f"baseline {name} ({path}, saved from {found.source})")


def _article(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _trim(value: float) -> str:
    return f"{value:g}"
