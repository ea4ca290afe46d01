"""Small readers the format modules share: times and objects (token counts are read as the
providers read them: :func:`prefixbench.simulator.providers.base.count`)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers.base import ProviderRules, count
from prefixbench.simulator.wire import canonical_json
from prefixbench.workloads.logs.reading import check_tree
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import LaneKind, TraceRequest

#: Epoch milliseconds beyond any real log (year 5138).
MAX_EPOCH_MS = 10**14


def parse_time_ms(value: object, where: str) -> int | None:
    """An ISO-8601 string, epoch seconds (float) or epoch ms (int > 1e11) as epoch ms."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise UserError(f"{where}: timestamp {value!r} is not a time")
    if isinstance(value, (int, float)):
        if not (isinstance(value, int) or math.isfinite(value)) or not 0 <= value < MAX_EPOCH_MS:
            raise UserError(f"{where}: timestamp {value!r:.40} is not a plausible time")
        return int(value) if value > 1e11 else round(value * 1000)
    if isinstance(value, str):
        moment = _iso_moment(value)
        try:
            if moment is not None:
                return round(moment.timestamp() * 1000)
        except (ValueError, OverflowError):
            pass
        raise UserError(f"{where}: timestamp {value!r} is not ISO 8601")
    raise UserError(f"{where}: timestamp {value!r} is not a time")


def _iso_moment(text: str) -> datetime | None:
    """An ISO-8601 string as an aware time (one without offset is read as UTC, never local),
    None where it is not one."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_time_us(text: str) -> int | None:
    """An ISO-8601 string as exact epoch microseconds, for ordering times written at other
    precisions or offsets (``10:00:05Z`` before ``10:00:05.5+00:00``, which their text sorts the
    other way); None where it is not one."""
    moment = _iso_moment(text)
    if moment is None:
        return None
    try:
        return (moment - _EPOCH) // timedelta(microseconds=1)
    except OverflowError:
        return None


#: Most dollars one logged call may say it cost; past it (or not a finite number) it is not read.
MAX_LOGGED_COST = 1e9


def logged_dollars(value: object) -> float | None:
    """A call's cost as its log states it, in dollars: a finite number from 0 below
    ``MAX_LOGGED_COST`` (NaN and the infinities fail the range, and an integer too large for a
    float is compared before any conversion), else None (a log's own sums are a note, never
    worth refusing it for)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < MAX_LOGGED_COST:
        return float(value)
    return None


def logged_dollars_of(values: Iterable[object], *, text: bool = False) -> float | None:
    """The first of ``values`` (a log's cost fields, most trusted first) that
    :func:`logged_dollars` reads, else None; with ``text``, a number written as a string
    (``"0.0123"``) is read as that number, text that is no number skipped."""
    for value in values:
        if text and isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                continue
        dollars = logged_dollars(value)
        if dollars is not None:
            return dollars
    return None


def logged_count(value: object, where: str, key: str) -> int | None:
    """A token count a log gives under ``key``: None when absent (null), a whole float (``12.0``,
    as JSON from a dynamic language may write it) as its integer, else checked by
    :func:`~prefixbench.simulator.providers.base.count` (a bad one is a one-line error at ``where``)."""
    if value is None:
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    return count(value, where, key)


def clipped_text(value: object, limit: int = 200) -> str:
    """``value`` stripped and cut to ``limit`` characters when it is a string, else "" (a name,
    lane or reason a log gives, kept short in ids and notes)."""
    return value.strip()[:limit] if isinstance(value, str) else ""


#: The gateways whose calls naming no session each get a lane of their own (:func:`own_lane`).
OWN_LANE_FORMATS = frozenset({"litellm", "openrouter", "helicone"})


def in_own_lane(source_format: str, lane: str, request_id: str | None, line: int) -> bool:
    """Whether a request of ``source_format`` is in a lane :func:`own_lane` gave it alone (named by
    its id, or by its line where it has none) rather than a session's."""
    if source_format not in OWN_LANE_FORMATS:
        return False
    return lane == request_id if request_id else lane == f"line {line}" or lane.startswith(f"line {line} ")


def own_lane(named: str, call_id: str) -> str:
    """The lane of a gateway's call: the session (or user) it names, else a lane of its own named
    by ``call_id`` (its id): nothing in a call that names neither links it to another, so it
    follows no call and no other call follows it (no model switch is seen across two of them)."""
    return named or call_id


def logged_millis(value: object) -> int | None:
    """A duration or delay a log gives in milliseconds, rounded to a whole one: a number from 0
    below 1e10 (NaN, the infinities and booleans fail), else None."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e10
    return round(value) if ok else None  # type: ignore[arg-type]


def logged_cost(value: object) -> float:
    """:func:`logged_dollars`, 0 for a value it does not read (a sum's term)."""
    dollars = logged_dollars(value)
    return 0.0 if dollars is None else dollars


def json_text(value: object) -> object:
    """``value`` parsed when it is JSON text (a body a capture kept as a string), else ``value``
    itself; None for text that is not JSON, or that nests deeper than the parser goes."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):  # json.JSONDecodeError is a ValueError
        return None


def id_space(scope: str) -> int:
    """The high bits a block-hash trace's ids are packed under in ``scope`` (a file and its
    namespace): a raw id ``h`` below 2**64 is ``id_space(scope) | h``, a string id
    ``f"{id_space(scope):x}:{h}"``, so no two scopes share a block."""
    return int.from_bytes(hashlib.blake2b(scope.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big") << 64


def head_digest(value: object) -> str:
    """A short digest of what a log shows of a request's head (a system prompt, tool schemas),
    for a head key to carry: 12 hex digits of the SHA-256 of its canonical JSON (a lone surrogate
    kept as its bytes, never an error)."""
    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()[:12]


def as_dict(value: object) -> dict:
    """``value`` when it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def objects(path: Path, records: Iterable[Record], what: str) -> Iterator[Record]:
    """Each record, checked to be a JSON object (``what`` names what it should hold): anything
    else is a one-line error naming file:line."""
    for record in records:
        if not isinstance(record.value, dict):
            raise UserError(f"{path}:{record.line}: expected a JSON object{what}")
        yield record


def refuse_lone_surrogates(body: object, where: str, root: str = "") -> None:
    """Refuse a request body holding a lone surrogate (``"\\udc00"``: valid JSON, not Unicode, so
    it could never be rendered or sent), in the line ``replay`` gives: ``where`` (file:line), then
    the string's path in the line (``root`` is the body's own, e.g. ``request.body``).

    Only for a body read the plain way (:attr:`Record.plain`, or a body captured as text):
    msgspec refuses lone surrogates, so what it read holds none and is not walked again.
    """
    check_tree(body, where, root=root, max_depth=None)


class Lane:
    """The chain of one lane while a log is read: its name and kind, the node its next call
    extends, the model it last named, and the events since its previous call. A format's own
    lane adds what else it follows."""

    def __init__(self, name: str, kind: LaneKind) -> None:
        self.name = name
        self.kind = kind
        self.parent: str | None = None
        self.model: str | None = None
        self.events: list[tuple[str, str]] = []

    def send_to(self, model: str) -> None:
        """The lane's next call goes to ``model``: a ``model_change`` event where it named another."""
        if self.model is not None and model != self.model:
            self.events.append(("model_change", f"{self.model} -> {model}"))
        self.model = model


_Call = TypeVar("_Call")


def kept_before_thinking(
    rules: ProviderRules | None, model: str, new_turn: bool, earlier: Iterable[tuple[str, bool, bool, _Call]],
) -> _Call | None:
    """Which earlier call's prompt a call to ``model`` keeps cached where the model drops earlier
    turns' thinking at a new user turn
    (:attr:`~prefixbench.simulator.providers.base.ProviderRules.strips_prior_thinking`): the
    previous turn's first call whose response thought (the thinking followed its prompt, and is
    gone now). ``earlier``: the calls of the chain before this one, newest first, each as
    ``(model, thought, new_turn, call)``: its model, whether its response thought, whether it
    started a user turn, and what the reader wants back. None where nothing is dropped: this call
    starts no user turn, ``rules`` (None: no provider's) keep the thinking of ``model``, or no call
    of the previous turn on the same model thought. Each reader adapts its own chain to it."""
    if not new_turn or rules is None or not rules.strips_thinking(model):
        return None
    first = None
    for their_model, thought, their_turn, call in earlier:
        if their_model != model:
            break
        if thought:
            first = call
        if their_turn:
            break  # (the previous turn's first call: earlier turns' thinking was dropped before)
    return first


def writes_left_as_logged(requests: list[TraceRequest]) -> tuple[list[TraceRequest], int]:
    """``requests`` with the writes of a call whose log has no write count
    (:attr:`~prefixbench.simulator.usage.Usage.writes_reported` False) taken as logged again (none)
    where no call of its model and provider in the file read anything: a server that never read
    showed no cache at all, and its zeros stand. The requests, and how many calls keep their
    writes unknown."""
    read = {(r.provider, r.model) for r in requests if r.usage is not None and r.usage.cache_read > 0}
    out: list[TraceRequest] = []
    unknown = 0
    for r in requests:
        if r.usage is not None and not r.usage.writes_reported:
            if (r.provider, r.model) in read:
                unknown += 1
            else:
                r = replace(r, usage=replace(r.usage, writes_reported=True))
        out.append(r)
    return out, unknown
