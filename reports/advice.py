"""The audit's opening: what to change (the recommendations) and the loss split, as text lines
(the terminal table and audit.md) and as report.html's first section. The recommendations are
computed in :mod:`prefixbench.workloads.audit.advice`; nothing here recomputes them."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from pathlib import PurePath

from prefixbench.reports.auditwords import file_labels, none_priced, usd_cents4
from prefixbench.reports.textable import text_lines, visible
from prefixbench.reports.whatif import hedged
from prefixbench.simulator.pricing import format_usd
from prefixbench.workloads.audit.advice import RECOVERS_NONE, cannot_apply, names_setting
from prefixbench.workloads.audit.core import AuditResult
from prefixbench.workloads.audit.losses import CLASS_MEANINGS, LOSS_CLASSES, LossSplit
from prefixbench.workloads.audit.precedence import RELAYED

#: How the recommendations are ranked and what their dollars are (every view says it).
RANKING = (
    "ranked by the net dollars each fix saved when the whole log was re-simulated with it, after the write "
    "premiums and keep-alive requests it adds"
)


def saves_text(saved: Decimal | None, unpriced: int = 0, lost: Decimal | float = 0, detail: str = "") -> str:
    """``saves $0.0331`` (at the column's one precision, :func:`usd_cents4`, as the worst
    requests' *lost*); ``does not pay`` for 0 or less; ``cannot re-simulate`` for None;
    ``unknown (unpriced)`` for None or 0 or less when every miss it targets is in no dollar figure
    (``unpriced`` of them, none priced: ``lost`` 0), since nothing could price what it saves;
    ``recovers none`` for 0 where the re-simulation changed none of its misses (its
    ``detail`` opens with :data:`~.advice.RECOVERS_NONE`): not a verdict on the prices, and
    ``recovers none; costs $0.0012 more`` below 0 (what the fix adds, as keep-alive requests); ``saves
    up to $0.0067`` / ``may save $0.0067`` where its detail hedges it (:func:`~.whatif.hedged`)."""
    if (saved is None or saved <= 0) and unpriced and not lost:
        return "unknown (unpriced)"
    if saved is not None and saved <= 0 and detail.startswith(RECOVERS_NONE):
        return "recovers none" if saved == 0 else f"recovers none; costs {usd_cents4(-saved)} more"
    if saved is None:
        return "cannot re-simulate"
    if saved <= 0:
        return "does not pay" if saved == 0 else f"costs {usd_cents4(-saved)} more"
    return hedged(f"saves {usd_cents4(saved)}", saved, detail)


def share_words(fix: str, saved: Decimal | float | None, paid: Decimal | float | None, unpriced: int = 0,
                detail: str | None = "") -> str:
    """What the top fix saves as a share of what the log paid: ``the top fix, static-system,
    saves 22.4% of the $76.5648 paid`` (at the dollars column's precision), adding the requests
    the paid figure leaves out (``unpriced``: no price or no usage); '' where it saves nothing or
    nothing was paid, since a share of either would mean nothing."""
    if saved is None or paid is None:
        return ""
    saved, paid = Decimal(str(saved)), Decimal(str(paid))
    if saved <= 0 or paid <= 0:
        return ""
    share = saved / paid * 100
    pct = "<0.1%" if share < Decimal("0.05") else f"{share.quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)}%"
    out = f"the top fix, {fix}, {hedged('saves ' + pct, saved, detail)} of the {usd_cents4(paid)} paid"
    if unpriced:
        out += f" (by the priced requests: the {unpriced:,} request(s) in no dollar figure are not in it)"
    return out


def counted(n: int, noun: str) -> str:
    """``1 lane``, ``2 lanes``, ``0 requests`` (report.html's evidence cell read ``1 lanes``)."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def lost_text(lost: Decimal | float, causes: tuple[str, ...] | list[str]) -> str:
    """What a fix's misses lost, as its pattern says it on the line below and the causes table and
    the loss split say their dollars (:func:`~prefixbench.simulator.pricing.format_usd`: 4 decimals
    from a cent up, 4 significant digits under one): the same figure read one way (the column read
    ``$0.0003`` above ``concurrent-write x2: $0.0002580 lost``); ``no miss`` when no miss of the
    audit points at the fix (it saves on what the requests it changes paid, not on a miss)."""
    return "no miss" if not causes and not lost else format_usd(Decimal(str(lost)))


def lost_words(lost: Decimal | float, causes: tuple[str, ...] | list[str], unpriced: int = 0) -> str:
    """:func:`lost_text`, and the misses it leaves out: ``$0.0413 + 2 unpriced``, ``unpriced``
    when none of them could be priced."""
    if not unpriced:
        return lost_text(lost, causes)
    return f"{lost_text(lost, causes)} + {unpriced:,} unpriced" if lost else "unpriced"


def split_line(split: LossSplit, all_unpriced: bool = False) -> str:
    """``lost $2.0213 = recoverable $0.1006 (3 req) + unavoidable $1.4990 (2 req, 1 unpriced) +
    unknown $0.4217 (1 req)`` (each exact sum rounded on its own, as the report's other dollars:
    :func:`~prefixbench.simulator.pricing.format_usd`, so a class reads what its rows add up to;
    *unpriced*: requests that lost tokens no dollar figure holds).
    A class whose dollars are unknown (:meth:`~.LossSplit.usd_unknown`: no priced request of it
    lost anything, some lost tokens no dollar figure holds) has no dollar figure (``recoverable (1
    req, 1 unpriced: no dollar figure)``; JSON null): $0.00 would claim nothing was lost. A class
    with no request, or whose requests lost nothing (cold starts), lost a known $0, priced or not.
    ``all_unpriced`` (no request of the audit is priced): the total reads ``lost unknown``."""
    def part(name: str) -> str:
        requests, unpriced, shared = split.requests(name), split.unpriced(name), split.shared(name)
        counted = f"{requests:,} req" + (f" +{shared:,} shared" if shared else "") + (f", {unpriced:,} unpriced" if unpriced else "")
        if split.usd_unknown(name):
            return f"{name} ({counted}: no dollar figure)"
        return f"{name} {format_usd(split.usd(name))} ({counted})"

    lost = "unknown" if all_unpriced else format_usd(split.lost_usd)
    return f"lost {lost} = " + " + ".join(part(name) for name in LOSS_CLASSES)


def never_read_words(reporting: int, read: int, written: int | None, predicted: bool, uncached: int,
                     missed: int = 0, lost: int = 0) -> str:
    """What "nothing to change" leaves out where no request read anything from the cache: a 0%
    hit ratio with no miss is not a log with nothing to change (a gateway's calls with caching off
    or not reported); the log cannot tell which, so this says what it shows and what to check.
    ``reporting``: requests that report their cache use; ``read``, ``written``: the cache tokens
    they report (``written`` None: no request gives a write count, an OpenAI-shaped usage's, so
    nothing is said of writes); ``predicted``: whether the audit predicted any read; ``missed``,
    ``lost``: the requests the audit counts as misses all the same (a server whose cache it does
    not model: against the prefix a cache would have kept) and the tokens they lost, said as such
    rather than "no miss"; '' when any was read."""
    if not reporting or read or written or predicted:
        return ""
    did = "read or wrote anything in it" if written is not None else "read anything from it (their writes are not reported)"
    seen = ("so it sees no miss" if not missed else
            f"so the {missed:,} miss{'' if missed == 1 else 'es'} it counts ({lost:,} tokens) {'is' if missed == 1 else 'are'} against the prefix a "
            "cache would have kept, not a read it predicts")
    return (f"but none of the {reporting:,} requests that report their cache use {did} "
            f"({uncached:,} input tokens, every one at the full price), and the audit predicts no read either, "
            f"{seen}: the log does not tell why; if the provider caches this model, check that caching "
            "reaches it (cache_control sent, a gateway passing it on and reporting cached tokens)")


def _never_read_lines(result: AuditResult) -> list[str]:
    t = result.totals
    # (a count is None where no request reports it: then never_read_words says nothing)
    lost = [row.lost_tokens for row in result.rows if row.lost_tokens]
    words = never_read_words(sum(row.reported_cache_read is not None for row in result.rows), t.cache_read or 0, t.cache_write,
                             any(row.predicted_cache_read for row in result.rows), t.input or 0, len(lost), sum(lost))
    return [f"  {words}"] if words else []


#: How many sessions :func:`never_read_group_lines` names one a line before "and N more".
NEVER_READ_SHOWN = 5


class _NeverRead:
    """One session's requests to one provider and model, summed for :func:`never_read_group_lines`
    (``files``: the session's files they are in)."""

    __slots__ = ("files", "requests", "reporting", "read", "written", "unreported_writes", "predicted", "uncached", "largest", "usd", "unpriced")

    def __init__(self) -> None:
        self.requests = self.reporting = self.read = self.written = self.predicted = self.uncached = self.largest = self.unpriced = 0
        self.unreported_writes = False
        self.usd = Decimal(0)
        self.files: set[str] = set()


def never_read_group_lines(rows, paid: Decimal | None, name=lambda file: file, session_of: Mapping[str, str] | None = None) -> list[str]:
    """Where the whole log read from the cache but some sessions did not: the sessions (each one
    provider and model of one session) whose every request reports its cache use, reads and writes
    none of it, and whose provider caches (a hosted provider whose usage is read; not an unknown
    relay's) a prompt as long as their longest (not one below the model's minimum) while the audit predicted no read for them either, so the audit sees no miss there and
    "what to change" would say nothing of them. Where their writes are not reported, a session of
    one request (it reads nothing by nature) or to a provider that caches without markers is not
    named: nothing shows it missed. The count is of the agent's sessions, as the roll-up per
    session counts them (a file is its own but where it is part of another's, ``session_of``:
    a Claude Code subagent's or compaction agent's transcript is its session's, named by the
    session's main transcript, :attr:`~prefixbench.workloads.logs.trace.FileSummary.session`),
    the lines of pairs. A line saying what they paid at the full input
    price, then one line a session and pair (the costliest first, :data:`NEVER_READ_SHOWN` of them, then
    "and N more"), with how many files it sums where more than one. ``rows``: objects with the :class:`~.core.AuditRow` fields (or mappings of
    them, the ``--format json`` requests); ``paid``: the whole log's dollars; ``name``: a file's
    (or session's) name as the tables show it. [] where no session is such, or where none of the log's read
    anything (:func:`never_read_words` says so for the whole log)."""
    from prefixbench.simulator.providers import hosted_provider

    def get(row, field):
        return row.get(field) if isinstance(row, dict) else getattr(row, field)

    groups: dict[tuple[str, str, str], _NeverRead] = {}
    any_read = False
    for row in rows:
        read, write = get(row, "reported_cache_read"), get(row, "reported_cache_write")
        any_read = any_read or bool(read) or bool(get(row, "predicted_cache_read"))
        file = get(row, "file")
        g = groups.setdefault(((session_of or {}).get(file, file), get(row, "provider"), get(row, "model")), _NeverRead())
        g.files.add(file)
        g.requests += 1
        g.reporting += read is not None
        g.read += read or 0
        g.written += write or 0
        g.unreported_writes = g.unreported_writes or (read is not None and write is None)
        g.predicted += get(row, "predicted_cache_read") or 0
        g.uncached += get(row, "reported_uncached") or 0
        g.largest = max(g.largest, get(row, "reported_uncached") or 0)
        cost = get(row, "cost_usd")
        if cost is None:
            g.unpriced += 1
        else:
            g.usd += Decimal(str(cost))
    if not any_read:
        return []
    found = sorted(((key, g) for key, g in groups.items()
                    if g.reporting == g.requests and not (g.read or g.written or g.predicted)
                    and (rules := hosted_provider(key[1])) is not None and g.largest >= rules.min_cacheable(key[2])
                    # writes not reported: a lone request reads nothing by nature, and a provider
                    # that caches without markers (no breakpoints on its wire) may have written
                    # all it could; the log shows nothing amiss there
                    and not (g.unreported_writes and (g.requests == 1 or rules.max_breakpoints is None))),
                   key=lambda item: (-item[1].usd, item[0]))
    if not found:
        return []
    usd = sum((g.usd for _, g in found), Decimal(0))
    requests = sum(g.requests for _, g in found)
    sessions = len({session for (session, _, _), _ in found})
    of = f" of ${paid:,.2f} paid" if paid else ""
    pairs = f" ({len(found):,} provider and model pairs)" if len(found) != sessions else ""
    unreported = sum(g.unreported_writes for _, g in found)
    did = "read and wrote nothing in the cache" if not unreported else "read nothing from the cache"
    unsaid = "" if not unreported else (", writes not reported" + ("" if unreported == len(found) else f" for {unreported:,} of them"))
    # cache_control advice only where the provider takes markers (others cache unasked)
    marked = any(hosted_provider(provider).max_breakpoints is not None for (_, provider, _), _ in found)
    check = "cache_control sent, a gateway passing it on and reporting cached tokens" if marked else "a gateway reporting cached tokens"
    out = [f"  {sessions:,} session{'' if sessions == 1 else 's'}{pairs} to a provider that caches {did} "
           f"({requests:,} request{'' if requests == 1 else 's'}{unsaid}, ${usd:,.2f}{of}, every input token at the full price), and the audit "
           f"predicts no read there either, so it sees no miss and ranks no fix for them: check that caching reaches them ({check}):"]
    for (session, provider, model), g in found[:NEVER_READ_SHOWN]:
        writes = ", writes not reported" if g.unreported_writes else ""
        files = f" in {len(g.files):,} files" if len(g.files) > 1 else ""
        out.append(f"    {name(session)}: {provider} {model}, {g.requests:,} request{'' if g.requests == 1 else 's'}{files}, "
                   f"{g.uncached:,} input tokens, ${g.usd:,.2f}{writes}" + (f" ({g.unpriced:,} unpriced)" if g.unpriced else ""))
    if len(found) > NEVER_READ_SHOWN:
        rest = found[NEVER_READ_SHOWN:]
        out.append(f"    and {len(rest):,} more (${sum((g.usd for _, g in rest), Decimal(0)):,.2f})")
    return out


#: How the fixes that save nothing on the log (:func:`~.advice.saves_nothing`) are introduced,
#: apart and after the ranked ones, each once with its re-simulation's reason; and what the list
#: says where every fix re-simulated is such.
NOT_RANKED = "not ranked, as re-simulated they save nothing on this log (why, for each)"
NOTHING_SAVES = "no fix re-simulated saves anything on this log (listed below, not ranked)"
#: The same for the fixes that cannot apply to the log (:func:`~.advice.cannot_apply`: nothing
#: they change is in it), in --what-if's words, and what the list says where they are all there is.
NOT_APPLICABLE = "not ranked, as they cannot apply to this log: nothing they change is in it (why, for each)"
NOTHING_APPLIES = "no fix the misses point at can apply to this log (listed below, not ranked)"


def nothing_words(apart: list) -> str:
    """What the list says where no fix is ranked, from the fixes listed apart (structs or JSON
    records): :data:`NOTHING_APPLIES` where none can apply, :data:`NOTHING_SAVES` where every one
    was re-simulated and saves nothing, and both counts where they mix (a fix never re-simulated
    is not one that "re-simulated saves nothing")."""
    inapplicable = sum(map(_inapplicable, apart))
    if inapplicable == len(apart):
        return NOTHING_APPLIES
    if not inapplicable:
        return NOTHING_SAVES
    saving_nothing = len(apart) - inapplicable
    return (f"no fix the misses point at saves anything on this log: {saving_nothing:,} re-simulated "
            f"save{'s' if saving_nothing == 1 else ''} nothing, {inapplicable:,} cannot apply to it (listed below, not ranked)")


def _inapplicable(rec: object) -> bool:
    """Whether a fix listed apart (a struct, or its JSON record) cannot apply to the log."""
    if isinstance(rec, dict):
        return cannot_apply(rec["saved_usd"], rec["detail"])
    return cannot_apply(rec.saved_usd, rec.detail)  # type: ignore[attr-defined]


#: What the opening says where no request reports its cache use (a block-hash trace): no miss could
#: be seen, so neither "no miss has a fix" nor a loss split of $0.00 would be true of the log.
UNSEEN = "no request reports its cache use, so no miss could be seen"


def advice_lines(result: AuditResult) -> list[str]:
    """The opening of the terminal view: recommendations, then the loss split."""
    out: list[str] = []
    recs = result.recommendations
    # (Misses the cache model found on logged request bodies are seen: listed, explained and ranked.)
    unseen = bool(result.rows) and all(row.reported_cache_read is None for row in result.rows) and not result.causes
    if recs is not None:
        out.append(f"what to change: {RANKING}")
        apart = [rec for rec in recs if rec.rank is None]
        recs = tuple(rec for rec in recs if rec.rank is not None)
        if not recs and not apart and unseen:
            out.append(f"  nothing to rank: {UNSEEN}")
        elif not recs and not apart:
            out.append("  nothing: no miss in these logs has a fix that would have recovered it")
            out += _never_read_lines(result)
        elif not recs:
            out.append(f"  nothing: {nothing_words(apart)}")
        else:
            out += text_lines(
                ["#", "fix", "agent", "dollars", "lost to its misses", "requests", "lanes", "sessions"],
                [
                    [str(rec.rank), rec.fix, rec.agent, saves_text(rec.saved_usd, rec.unpriced_requests, rec.lost_usd, rec.detail),
                     lost_words(rec.lost_usd, rec.causes, rec.unpriced_requests),
                     f"{rec.requests:,}", f"{rec.lanes:,}", f"{rec.sessions:,}"]
                    for rec in recs
                ],
                {0, 3, 4, 5, 6, 7},
            )
            top, t = recs[0], result.totals
            if words := share_words(top.fix, top.saved_usd, t.cost_usd, t.unpriced_requests, top.detail):
                out.append(f"  {words}")
            for rec in recs:
                out.append(visible(f"{rec.rank}. {rec.fix}: {rec.change}"))
                if rec.setting:
                    out.append(visible(f"   setting: {rec.setting}"))
                if rec.source:  # a line of its own: a setting's parentheses never nest around a URL
                    # (under a none-line it is the change's source, not a setting's)
                    out.append(visible(f"   {'source' if names_setting(rec.setting) else 'see'}: {rec.source}"))
                out.append(visible(f"   pattern: {rec.pattern}"))
                out.append(visible(f"   assumes: {rec.assumption}"))
                if rec.detail:
                    out.append(visible(f"   {rec.detail}"))
        for heading, listed in ((NOT_RANKED, [rec for rec in apart if not _inapplicable(rec)]),
                                (NOT_APPLICABLE, [rec for rec in apart if _inapplicable(rec)])):
            if listed:
                out.append(f"  {heading}:")
                out += [visible(f"  - {rec.fix} ({rec.agent}): {rec.detail}") for rec in listed]
        if not unseen:
            labels = file_labels([f.file for f in result.files] + [r.file for r in result.rows])
            out += [visible(line) for line in never_read_group_lines(result.rows, result.totals.cost_usd,
                                                                     lambda f: labels.get(f) or PurePath(f).name, result.session_of)]
        out.append("")
    split = result.loss_split
    if split is not None and unseen:
        out += [f"lost unknown: {UNSEEN}", ""]
    elif split is not None:
        out.append(split_line(split, none_priced(result.totals.requests, result.totals.unpriced_requests)))
        out += [f"  {name}: {CLASS_MEANINGS[name]}" for name in LOSS_CLASSES]
        relayed = [row.detail for row in result.rows if row.cause == "provider-best-effort" and row.detail.startswith(RELAYED)]
        if relayed:
            names = ", ".join(dict.fromkeys(detail[len(RELAYED):].split(": ", 1)[0] for detail in relayed))
            out.append(f"  (the provider's own miss of a call through the relay {names} is the relay's cache's, not the model "
                       "maker's: the notes say which calls)")
        out.append("")
    return out


def sessions_by_folder(record: dict) -> dict[str, str]:
    """The session of each file of the ``--format json`` object (``record``) that is part of
    another's: its file record's ``session``
    (:data:`~prefixbench.workloads.audit.schema.FILE_SESSION_FIELD`, the audit's
    :attr:`~prefixbench.workloads.audit.core.AuditResult.session_of`), so report.html counts
    sessions as the terminal does. An object none of whose file records holds a ``session`` (an
    older one's) is told by its folders: a Claude Code transcript in ``<project>/<session>/`` or below
    (:func:`~prefixbench.workloads.logs.claude_layout.subagent_depth`) is of
    ``<project>/<session>.jsonl`` where that session has a roll-up (its ``sessions`` key) and the
    file none; there an older version's subagent, beside its session's transcript, and a copy's
    that keeps its sessions elsewhere stay sessions of their own."""
    from prefixbench.workloads.audit.schema import FILE_SESSION_FIELD
    from prefixbench.workloads.logs.claude_layout import subagent_depth

    files = record.get("files") or ()
    if any(FILE_SESSION_FIELD in f for f in files):
        return {f["file"]: f[FILE_SESSION_FIELD] for f in files if f.get(FILE_SESSION_FIELD)}
    keys = {s.get("key") for s in record.get("sessions") or ()}
    out: dict[str, str] = {}
    for file in {r.get("file") for r in record.get("requests") or ()} - keys:
        path = PurePath(file)
        depth = subagent_depth(path.parts)
        if depth and depth < len(path.parents):
            session = str(path.parents[depth] / f"{path.parents[depth - 1].name}.jsonl")
            if session in keys:
                out[file] = session
    return out


def advice_html(record: dict, unseen: bool = False) -> str:
    """report.html's "What to change" section from the ``--format json`` object; ``unseen``: no
    request reports its cache use, so no miss could be seen (no ranking, no loss split said)."""
    from html import escape

    from prefixbench.reports.html import note, num, table

    parts = []
    recs = record.get("recommendations")
    apart = [rec for rec in recs or () if rec["rank"] is None]
    if recs is not None:
        recs = [rec for rec in recs if rec["rank"] is not None]
        if not recs and apart:
            parts.append(note(f"Nothing: {nothing_words(apart)}."))
        elif not recs and unseen:
            parts.append(note(f"Nothing to rank: {UNSEEN}."))
        elif not recs:
            parts.append(note("Nothing to change: no miss in these logs has a fix that would have recovered it."))
            rows, totals = record.get("requests") or [], record.get("totals") or {}
            if record.get("requests_shown") is None and (words := never_read_words(
                    sum(r.get("reported_cache_read") is not None for r in rows), int(totals.get("cache_read") or 0),
                    None if totals.get("cache_write") is None else int(totals["cache_write"]),
                    any(r.get("predicted_cache_read") for r in rows), int(totals.get("input") or 0),
                    sum(bool(r.get("lost_tokens")) for r in rows), sum(r.get("lost_tokens") or 0 for r in rows))):
                parts.append(note(words[0].upper() + words[1:] + "."))
        else:
            rows = []
            for rec in recs:
                saved = rec["saved_usd"]
                rows.append(({"data-recommendation": rec["fix"]}, [
                    num("rank", rec["rank"], str(rec["rank"])),
                    rec["fix"],
                    rec["change"] + (f"; setting: {rec['setting']}" if rec["setting"] else ""),
                    num("saved_usd", saved, saves_text(None if saved is None else Decimal(str(saved)),
                                                       rec.get("unpriced_requests", 0), rec["lost_usd"],
                                                       rec["detail"] or "")),
                    num("lost_usd", rec["lost_usd"], lost_words(rec["lost_usd"], rec["causes"], rec.get("unpriced_requests", 0))),
                    f"{counted(rec['requests'], 'request')}, {counted(rec['lanes'], 'lane')}, "
                    f"{counted(rec['sessions'], 'session')}: {rec['pattern']}",
                    rec["assumption"] + (f" ({rec['detail']})" if rec["detail"] else ""),
                ]))
            parts.append(table(["#", "fix", "what to change", "dollars", "lost to its misses", "evidence", "assumption"], rows))
            sources = [(rec["fix"], rec["source"]) for rec in recs if rec["source"]]
            if sources:
                parts.append('<p class="note">' + "; ".join(f"{escape(fix)}: {escape(src)}" for fix, src in sources) + "</p>")
            totals = record.get("totals") or {}
            if words := share_words(recs[0]["fix"], recs[0]["saved_usd"], totals.get("cost_usd"),
                                    int(totals.get("unpriced_requests") or 0), recs[0]["detail"]):
                parts.append(note(words[0].upper() + words[1:] + "."))
            parts.append(note(RANKING[0].upper() + RANKING[1:] + "."))
        for heading, listed in ((NOT_RANKED, [rec for rec in apart if not _inapplicable(rec)]),
                                (NOT_APPLICABLE, [rec for rec in apart if _inapplicable(rec)])):
            if not listed:
                continue
            parts.append(note(heading[0].upper() + heading[1:] + ":"))
            parts.append(table(["fix", "agent", "lost to its misses", "why"], [
                ({"data-not-ranked": rec["fix"]}, [
                    rec["fix"], rec["agent"],
                    num("lost_usd", rec["lost_usd"], lost_words(rec["lost_usd"], rec["causes"], rec.get("unpriced_requests", 0))),
                    rec["detail"] or "",
                ]) for rec in listed]))
        if not unseen and record.get("requests_shown") is None:
            totals = record.get("totals") or {}
            paid = totals.get("cost_usd")
            lines = never_read_group_lines(record.get("requests") or [], None if paid is None else Decimal(str(paid)),
                                           lambda f: f.replace("\\", "/").rsplit("/", 1)[-1], sessions_by_folder(record))
            if lines:
                parts.append(note(lines[0].strip()[0].upper() + lines[0].strip()[1:] + " " + "; ".join(line.strip() for line in lines[1:]) + "."))
    split = record.get("loss_split")
    if split is not None and unseen:
        parts.append(note(f"Lost unknown: {UNSEEN}."))
    elif split is not None:
        def usd(value: float | None) -> str:  # null: none of its requests priced
            return "unknown" if value is None else format_usd(Decimal(str(value)))

        rows = [({"data-loss-class": name}, [
            name,
            num(f"{name}_usd", split[f"{name}_usd"], usd(split[f"{name}_usd"])),
            num(f"{name}_requests", split[f"{name}_requests"], f"{split[f'{name}_requests']:,}"
                + (f" +{split[f'{name}_shared']:,} shared" if split.get(f"{name}_shared") else "")
                + (f" ({split[f'{name}_unpriced']:,} unpriced)" if split.get(f"{name}_unpriced") else "")),
            CLASS_MEANINGS[name],
        ]) for name in LOSS_CLASSES]
        rows.append(({"data-loss-class": "total"}, ["lost", num("lost_usd", split["lost_usd"], usd(split["lost_usd"])), "", ""]))
        parts.append(table(["loss", "dollars", "requests", "meaning"], rows))
    return "".join(parts)
