"""The CI gate: ``--fail-on``, ``--min-hit-ratio``, ``--max-lost-usd``, and the JUnit view of lanes."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

import msgspec
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import usd_sum
from prefixbench.workloads.audit.causes import CAUSES
from prefixbench.workloads.audit.core import BAD_INPUT, AuditResult, AuditRow, LaneSummary, loss_seen
from prefixbench.workloads.audit.shares import loss_parts

#: Characters XML 1.0 cannot carry at all.
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


class Gate(msgspec.Struct, frozen=True):
    """What makes an audit fail."""

    fail_on: tuple[str, ...] = ()
    min_hit_ratio: float | None = None
    max_lost_usd: Decimal | None = None

    @classmethod
    def parse(cls, fail_on: str | None, min_hit_ratio: str | float | None, max_lost_usd: str | float | None) -> Gate:
        """Check the options (UserError naming the option on a bad value)."""
        causes: tuple[str, ...] = ()
        if fail_on is not None:  # --fail-on= too: refused, not taken as no gate
            causes = tuple(item.strip() for item in fail_on.split(","))
            if not all(causes):  # said as every other list option says it (it read "unknown cause ''")
                raise UserError(f"--fail-on: empty item in {fail_on!r}")
            unknown = [c for c in causes if c not in CAUSES]
            if unknown:
                raise UserError(f"--fail-on: unknown cause {', '.join(unknown)} (known: {', '.join(CAUSES)})")
        ratio = None
        if min_hit_ratio is not None:
            try:
                ratio = float(min_hit_ratio)
            except ValueError:
                raise UserError(f"--min-hit-ratio: {min_hit_ratio!r} is not a number") from None
            if not 0 <= ratio <= 1:
                raise UserError(f"--min-hit-ratio: {ratio} is not between 0 and 1")
        lost = None
        if max_lost_usd is not None:
            try:
                lost = Decimal(str(max_lost_usd))
            except InvalidOperation:
                raise UserError(f"--max-lost-usd: {max_lost_usd!r} is not a dollar amount") from None
            if not lost.is_finite() or lost < 0:
                raise UserError(f"--max-lost-usd: {max_lost_usd!r} is not a non-negative dollar amount")
        return cls(causes, ratio, lost)

    @property
    def active(self) -> bool:
        return bool(self.fail_on) or self.min_hit_ratio is not None or self.max_lost_usd is not None


def _compacted_misses(result: AuditResult) -> frozenset[tuple[str, str, int]]:
    """``(file, lane, line)`` of each cold request on a context whose compaction the log marks
    (the compactions table's ``after`` rows) that another cause leads (an idle gap past the TTL
    that expired the head too): the compaction happened all the same, a second cause."""
    return frozenset((c.file, c.lane, c.line) for c in result.compactions
                     if c.kind == "after" and c.verdict == "cold" and c.cause not in (None, "compaction"))


def gated_rows(result: AuditResult, cause: str, compacted: frozenset[tuple[str, str, int]] | None = None) -> list[AuditRow]:
    """The misses ``--fail-on cause`` holds: those of that cause, those whose loss it shares as
    their second cause (:attr:`AuditRow.secondary_cause`) and, for ``compaction``, those a logged
    compaction is a second cause of (:func:`_compacted_misses`)."""
    if cause != "compaction":
        return [row for row in result.rows if cause in (row.cause, row.secondary_cause)]
    also = _compacted_misses(result) if compacted is None else compacted
    return [row for row in result.rows if cause in (row.cause, row.secondary_cause)
            or (row.cause is not None and (row.file, row.lane, row.line) in also)]


def cause_part(row: AuditRow, cause: str) -> int:
    """The lost tokens of ``row`` that are ``cause``'s, as the causes table counts them: the second
    cause's part of a shared miss, the rest to the leading cause; a miss a logged compaction is a
    second cause of, with no part told, whole."""
    parts = [part.tokens for part in loss_parts(row) if part.cause == cause]
    return sum(parts) if parts else row.lost_tokens or 0


def violations(result: AuditResult, gate: Gate) -> list[str]:
    """One line per violation (empty: the audit passes). A cause's line quotes the first miss's
    detail whole: never cut, so never cut inside a word."""
    lines: list[str] = []
    for cause in gate.fail_on:
        rows = gated_rows(result, cause)
        if rows:
            first = rows[0]
            basis = _predicted(result, rows)
            shared = sum(row.secondary_cause == cause for row in rows)
            others = sum(row.cause != cause and row.secondary_cause != cause for row in rows)
            led = [f"{shared} of them led by another cause, this one's part of the loss counted" if shared else "",
                   f"{others} of them led by another cause, the compaction logged beside it" if others else ""]
            told = f" ({'; '.join(part for part in led if part)})" if shared or others else ""
            lines.append(
                f"FAIL cause {cause}: {len(rows)} request(s){told}, {sum(cause_part(r, cause) for r in rows):,} tokens lost{basis}; "
                f"first at {first.file}:{first.line} ({first.detail})"
            )
    if gate.min_hit_ratio is not None and result.totals.hit_ratio is None:
        # No ratio at all (no request reports its cache use, none is of a cache trace): the gate
        # cannot vouch for the log, so it fails, saying why.
        lines.append(f"FAIL no hit ratio (no request reports its cache use) to hold to --min-hit-ratio {gate.min_hit_ratio:.2%}")
    elif gate.min_hit_ratio is not None and result.totals.hit_ratio < gate.min_hit_ratio:
        # With no request reporting its cache use, the ratio gated is the model's (docs/audit.md#gate): said so.
        predicted = _all_predicted(result)
        what = "predicted hit ratio" if predicted else "hit ratio"
        why = " (no request reports its cache use)" if predicted else ""
        lines.append(f"FAIL {what} {result.totals.hit_ratio:.2%}{why} is below --min-hit-ratio {gate.min_hit_ratio:.2%}")
    if gate.max_lost_usd is not None and _none_seen(result):
        # Usage with no cache field on every request: no miss could be seen, so the loss is
        # unknown, not $0; the gate cannot vouch for the log, as --min-hit-ratio cannot.
        lines.append(f"FAIL no loss (no request reports its cache use, so no miss could be seen) to hold to "
                     f"--max-lost-usd ${gate.max_lost_usd}")
    elif gate.max_lost_usd is not None and (unpriced := _unpriced_misses(result)):
        # The misses in no dollar figure (no price, a self-hosted engine's calls) lost the larger
        # part of the tokens: the loss is mostly unknown in dollars, not the priced part's figure,
        # so the gate cannot vouch for the log either (docs/audit.md#gate).
        lines.append(_unpriced_line(result, unpriced, gate.max_lost_usd))
    elif gate.max_lost_usd is not None and result.totals.lost_usd > gate.max_lost_usd:
        lost = result.totals.lost_usd
        predicted = usd_sum(row.lost_usd for row in result.rows if row.reported_cache_read is None and row.lost_usd)
        if _all_predicted(result):
            lines.append(f"FAIL predicted lost ${lost:.4f} (no request reports its cache use) is above --max-lost-usd ${gate.max_lost_usd}")
        else:
            basis = f" (${predicted:.4f} of it predicted: its requests report no cache use)" if predicted else ""
            lines.append(f"FAIL lost ${lost:.4f}{basis} is above --max-lost-usd ${gate.max_lost_usd}")
    return lines


def _unseen(row: AuditRow) -> bool:
    """Whether ``row``'s usage has no cache field, so no miss of its could be seen (a request with
    no usage at all is unpriced, said apart)."""
    return not loss_seen(row) and row.reported_uncached is not None


def _none_seen(result: AuditResult) -> bool:
    """Whether every request's usage has no cache field: the loss cannot be judged at all."""
    return bool(result.rows) and all(_unseen(row) for row in result.rows)


def _unpriced_misses(result: AuditResult) -> list[AuditRow]:
    """The misses in no dollar figure, where they lost more tokens than the priced misses did
    (empty where they did not, or there is none): ``--max-lost-usd`` cannot judge such a log,
    whose dollar figure would leave out the larger part of its loss."""
    misses = [row for row in result.rows if row.lost_tokens]
    unpriced = [row for row in misses if row.lost_usd is None]
    priced = sum(row.lost_tokens or 0 for row in misses if row.lost_usd is not None)
    return unpriced if sum(row.lost_tokens or 0 for row in unpriced) > priced else []


def _unpriced_reasons(result: AuditResult, rows: list[AuditRow]) -> dict[str, dict[str, int]]:
    """Why ``rows`` (misses in no dollar figure) have no dollars, by model: ``self-hosted: no
    bill`` where the model's unpriced calls were served by an engine of the user's
    (:func:`~prefixbench.simulator.providers.vllm.own_host`, Ollama's cloud not among them),
    ``a host's price prefixbench lacks`` where by a host billing its own price, ``priced as a range
    only`` where the log sums its cache reads and writes, else ``no price row`` (the price table
    has none for the model); each reason's misses counted per engine, host or model."""
    from prefixbench.simulator.providers.vllm import ollama_cloud, own_host

    hosts: dict[str, str] = {}
    for model, host, _ in result.unpriced_hosts:
        hosts.setdefault(model, host)
    ranged = {m.model for m in result.models if m.ranged_requests and m.ranged_requests == m.unpriced_requests}
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        host = hosts.get(row.model, "")
        if host and own_host(host) and not ollama_cloud(row.model, host):
            out["self-hosted: no bill"][host] += 1
        elif host:
            out["a host's price prefixbench lacks"][host] += 1
        elif row.model in ranged:
            out["priced as a range only"][row.model] += 1
        else:
            out["no price row"][row.model] += 1
    return {why: dict(names) for why, names in out.items()}


def _unpriced_line(result: AuditResult, unpriced: list[AuditRow], limit: Decimal) -> str:
    """The ``FAIL`` line of :func:`_unpriced_misses`: how many misses and tokens are in no dollar
    figure, of how many, why (:func:`_unpriced_reasons`), and, where a self-hosted engine's calls
    are all there is to it, the gates that judge them (``--fail-on``, ``--min-hit-ratio``)."""
    misses = [row for row in result.rows if row.lost_tokens]
    tokens = sum(row.lost_tokens or 0 for row in unpriced)
    reasons = _unpriced_reasons(result, unpriced)
    why = "; ".join(f"{reason}: " + ", ".join(f"{name} {n:,}" if len(names) > 1 else name for name, n in sorted(names.items()))
                    for reason, names in sorted(reasons.items()))
    if len(unpriced) == len(misses):
        head = f"{len(unpriced):,} miss(es) lost {tokens:,} tokens, none of them in a dollar figure ({why})"
    else:
        priced = usd_sum(row.lost_usd for row in misses if row.lost_usd is not None)
        head = (f"{len(unpriced):,} of {len(misses):,} miss(es), {tokens:,} of {sum(row.lost_tokens or 0 for row in misses):,} "
                f"lost tokens, in no dollar figure ({why}; the priced rest lost ${priced:.4f})")
    hint = ("; a self-hosted engine sends no bill: gate its misses with --fail-on or --min-hit-ratio"
            if set(reasons) == {"self-hosted: no bill"} else "")
    return f"FAIL lost unknown in dollars: {head}, to hold to --max-lost-usd ${limit}{hint}"


def _all_predicted(result: AuditResult) -> bool:
    """Whether no request reports its cache use: every read, miss and loss the gate judges is then
    the cache model's prediction (docs/audit.md#gate), and its ``FAIL`` lines say so."""
    return bool(result.rows) and all(row.reported_cache_read is None for row in result.rows)


def _predicted(result: AuditResult, rows: list[AuditRow]) -> str:
    """What a cause's ``FAIL`` line adds when requests of ``rows`` (its misses) report no cache
    use, so their misses are the model's: "" when every one reports it."""
    predicted = sum(row.reported_cache_read is None for row in rows)
    if not predicted:
        return ""
    if _all_predicted(result):
        return " (predicted: no request reports its cache use)"
    return f" ({'all' if predicted == len(rows) else f'{predicted:,}'} of them predicted: their requests report no cache use)"


def unjudged(result: AuditResult, gate: Gate) -> list[str]:
    """What a threshold could not judge, one warning line each (empty: it judged every request):
    ``--max-lost-usd`` sums the priced requests' losses only, so a log of unpriced requests (a
    block-hash trace, an unknown model) passes it whatever its misses, unless this says so; nor
    can it judge requests whose usage has no cache field (:func:`~.core.loss_seen`: no miss seen)."""
    t = result.totals
    if gate.max_lost_usd is None:
        return []
    lines = []
    if t.unpriced_requests and not _unpriced_misses(result):  # (most lost tokens unpriced: the gate fails, saying why)
        lines.append(f"prefixbench: warning: --max-lost-usd judged the priced requests only: {t.unpriced_requests:,} of "
                     f"{t.requests:,} request(s) are in no dollar figure (no price, no usage to price, or priced as a range only), their misses' losses unknown")
    # (usage with no cache field: priced, but no miss could be seen; those with no usage are said above)
    unseen = sum(_unseen(row) for row in result.rows) if t.unseen_requests else 0
    if unseen and unseen < len(result.rows):  # (every one: the gate fails, saying why)
        lines.append(f"prefixbench: warning: --max-lost-usd judged the requests that report their cache use only: {unseen:,} of "
                     f"{t.requests:,} request(s) report none (their usage has no cache field), so no miss of theirs could be seen")
    return lines


def _dollars(usd: Decimal, requests: int, unpriced: int, left_out: int | None = None) -> str:
    """A JUnit line's dollars as the table's cells say them: none of ``requests`` priced is no
    figure (``$0.0000`` would claim nothing was paid or lost); else the figure, and beside it
    what it leaves out (``left_out``: the unpriced misses of a loss, else the unpriced requests)."""
    if requests and unpriced >= requests:
        return "unknown (no dollar figure)"
    left_out = unpriced if left_out is None else left_out
    return f"${usd:.4f}" + (f" + {left_out:,} unpriced" if left_out else "")


def _lane_text(lane: LaneSummary, reported: bool) -> str:
    """One lane's JUnit ``system-out``, saying what the table's lane row says: a lane no request
    of which reports its cache use has no loss or calibration to give (``n/a``), only the hit
    ratio and the read the cache model predicts (the table's ``pred``)."""
    if lane.hit_ratio is None:
        return (f"{lane.requests} requests, no cache use reported (hit ratio, loss and calibration n/a); "
                f"predicted read {lane.predicted_cache_read:,} tokens")
    if not reported or lane.reported_cache_read is None:
        return (f"{lane.requests} requests, no cache use reported (loss and calibration n/a); "
                f"predicted hit ratio {lane.hit_ratio:.2%}, predicted read {lane.predicted_cache_read:,} tokens")
    return (f"{lane.requests} requests, hit ratio {lane.hit_ratio:.2%}, lost {lane.lost_tokens:,} tokens "
            f"({_dollars(lane.lost_usd, lane.requests, lane.unpriced_requests, 0)}), "
            f"predicted read within 3% on {lane.read_within}/{lane.requests}")


def _shares(row: AuditRow, fail_on: tuple[str, ...]) -> str:
    """`` (X shares its loss)`` when the row fails the gate by its second cause X alone (the row
    names its leading cause), else empty."""
    if row.cause in fail_on or row.secondary_cause not in fail_on:
        return ""
    return f" ({row.secondary_cause} shares its loss)"


def junit_xml(result: AuditResult, gate: Gate, escape: Callable[[str], str] | None = None) -> bytes:
    """JUnit XML that says what the exit status says: one test case per lane, failing on a
    ``--fail-on`` cause it holds, and one ``totals`` case judged on the thresholds as the gate
    judges them (the whole audit's hit ratio and dollars lost), so a failure is in the file
    exactly when ``audit`` exits 1; and an ``error`` case of each file left out as bad input
    (``audit`` exits 2 then).

    ``escape`` makes each text encodable (the writer passes one that escapes lone surrogates);
    characters XML 1.0 forbids (control characters) are dropped.
    """
    from xml.etree import ElementTree  # imported for --junit only (start-up: docs/performance.md)

    def clean(text: str) -> str:
        return _XML_BAD.sub("", escape(text) if escape is not None else text)

    compacted = _compacted_misses(result)
    by_lane: dict[tuple[str, str], list[AuditRow]] = defaultdict(list)
    for row in result.rows:
        by_lane[(row.file, row.lane)].append(row)
    # As the table's lane rows: a file none of whose requests reports its cache use gives n/a.
    reported_files = {row.file for row in result.rows if row.reported_cache_read is not None}
    suite = ElementTree.Element("testsuite", name="prefixbench audit")
    failures = 0
    for lane in result.lanes:
        case = ElementTree.SubElement(suite, "testcase", classname=clean(lane.file), name=clean(lane.lane))
        rows = by_lane[(lane.file, lane.lane)]
        problems = [f"{row.cause} at line {row.line}{' (predicted)' if row.reported_cache_read is None else ''}"
                    f"{_shares(row, gate.fail_on)}: {row.detail}"
                    for row in rows if row.cause in gate.fail_on or row.secondary_cause in gate.fail_on
                    or ("compaction" in gate.fail_on and row.cause is not None and (row.file, row.lane, row.line) in compacted)]
        if problems:
            failures += 1
            # the message names the problem (a cause and its line, or a threshold); the text holds every detail whole
            failure = ElementTree.SubElement(case, "failure", message=clean(problems[0].split(": ", 1)[0]), type="cache-audit")
            failure.text = clean("\n".join(problems))
        out = ElementTree.SubElement(case, "system-out")
        out.text = _lane_text(lane, lane.file in reported_files)
    case = ElementTree.SubElement(suite, "testcase", classname="prefixbench audit", name="totals")
    thresholds = [line.removeprefix("FAIL ") for line in violations(result, Gate(min_hit_ratio=gate.min_hit_ratio, max_lost_usd=gate.max_lost_usd))]
    if thresholds:
        failures += 1
        failure = ElementTree.SubElement(case, "failure", message=clean(thresholds[0]), type="cache-audit")
        failure.text = clean("\n".join(thresholds))
    t = result.totals
    reporting = sum(row.reported_cache_read is not None for row in result.rows)
    basis = ("" if reporting == t.requests else " (predicted: no request reports its cache use)" if not reporting
             else f" (of the {reporting:,} requests that report their cache use)")
    ElementTree.SubElement(case, "system-out").text = (
        f"{t.requests} requests, hit ratio {'n/a' if t.hit_ratio is None else f'{t.hit_ratio:.2%}'}{'' if t.hit_ratio is None else basis}, paid {_dollars(t.cost_usd, t.requests, t.unpriced_requests)}, "
        f"lost {_dollars(t.lost_usd, t.requests, t.unpriced_requests, sum(c.unpriced_requests for c in result.causes))}"
    )
    # A file audit left out, its reading bad input (exit 2 whatever the gate): an error each, so
    # the file does not read as a run that passed.
    errors = 0
    for file in result.files:
        if file.format == BAD_INPUT:
            errors += 1
            case = ElementTree.SubElement(suite, "testcase", classname=clean(file.file), name="bad input")
            error = ElementTree.SubElement(case, "error", message="left out: bad input", type="bad-input")
            error.text = clean("\n".join(file.notes))
    tests = len(result.lanes) + 1 + errors
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    root = ElementTree.Element("testsuites", tests=str(tests), failures=str(failures), errors=str(errors))
    root.append(suite)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
