"""The audit one request at a time, as a recording proxy sees them (``prefixbench proxy``).

:class:`LiveAudit` takes HTTP-capture records (the ``{request, response}`` lines the
``http-capture`` format reads) as each call finishes and returns the call's
:class:`~prefixbench.workloads.audit.core.AuditRow`: the same prediction, expected read, cause
(body diff first) and dollars lost that ``prefixbench audit`` gives, computed with the audit's
own steps (:class:`~prefixbench.workloads.audit.core.Predictor` and its explanation) on the
calls seen so far. Nothing is recomputed per call: the cache models keep their state, so a
session of n calls costs what one audit of it costs.

The one difference from ``audit`` of the finished file: calls are taken in the order they
finish, while ``audit`` replays them in the order they were sent. Calls that overlap in time
(parallel subagents) may be judged against a different predecessor live than in the file's
audit; the file's audit is the reference.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from prefixbench.simulator.price_lookup import Prices
from prefixbench.workloads.audit.core import (
    AuditRow,
    Heads,
    Predictor,
    _explain,
    _Shared,
    _Step,
    end_tick,
    head_sizes,
    wrote,
)
from prefixbench.workloads.audit.locate import Histories
from prefixbench.workloads.audit.precedence import Previous
from prefixbench.workloads.logs.formats.http_capture import _Capture
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import TraceRequest


class LiveAudit:
    """Audit a capture as it grows: :meth:`add` one record, get its row (or why it has none)."""

    def __init__(self, name: str | Path, prices: Prices | None = None) -> None:
        self.capture = _Capture(Path(name))
        self.requests: list[TraceRequest] = []
        self.heads = Heads()
        self.predictor = Predictor(self.heads)
        self.shared = _Shared(self.heads, prices or Prices(None), Histories(self.heads))
        self.previous: dict[str, Previous] = {}
        self.index: dict[str, int] = defaultdict(int)
        self.last_tick: dict[str, int] = {}
        self.line = 0

    def add(self, record: dict) -> AuditRow | str:
        """The audit row of one captured call, or the reason the audit skips it (``HTTP 529: ...``).

        Raises:
            UserError: a record the http-capture format refuses (as ``audit`` would).
        """
        self.line += 1
        before = len(self.capture.out)
        skipped = len(self.capture.skipped)
        self.capture.line(Record(self.line, record))
        if len(self.capture.out) == before:
            return self.capture.skipped[skipped][1] if len(self.capture.skipped) > skipped else "not audited"
        r = self.capture.out[-1]
        self.requests.append(r)
        # A call with a parsed prefix: the chain model needs the head sizes; one with a body: the
        # first bodies' warm level (``body_starts``) counts it.
        if r.prefix is not None or r.body is not None:
            self._update_heads()
        base = r.sent_ms if r.sent_ms is not None else self.last_tick.get(r.lane, 0) + 1
        tick = max(base, self.last_tick.get(r.lane, base))  # the audit's clock never runs backwards in a lane
        self.last_tick[r.lane] = tick
        ready = max(tick, r.ready_ms) if r.ready_ms is not None else tick
        pred = self.predictor.predict(r, tick, ready)
        segment = self.shared.histories.add(r)  # a capture logs bodies, not a transcript: usually None
        start_from = self.predictor.start_reads.pop((r.file, r.lane, r.seq), None) if self.predictor.start_reads else None
        row = _explain(_Step(r, self.previous.get(r.lane), pred, tick, self.index[r.lane], segment=segment, start_from=start_from),
                       self.shared)
        last = self.previous.get(r.lane)
        self.previous[r.lane] = Previous(r, tick, ready, end_tick(r, ready), wrote(r) or (last is not None and last.lane_wrote))
        self.index[r.lane] += 1
        if r.prefix is not None:
            self.shared.head_seen.setdefault(r.prefix.head, tick)
        if r.is_compaction_call:
            self.shared.compaction_at[r.file] = r.line
        return row

    def _update_heads(self) -> None:
        fresh = head_sizes(self.requests)
        self.heads.clear()
        self.heads.update(fresh)
        # Everything head_sizes decides (as the batch audit's Heads holds it); token_scales and
        # last_sizes are the predictor's own, learned request by request, and stay.
        for name in ("warm", "falls", "assumed", "levels", "start_warm", "capped", "body_starts", "common_starts"):
            setattr(self.heads, name, getattr(fresh, name))
        self.predictor.warm = frozenset(fresh.warm)
        self.predictor.start_warm = frozenset(fresh.start_warm)
