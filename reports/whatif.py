"""``audit --what-if``: the per-fix table and the ``"what_if"`` JSON entries. The re-simulation
is :mod:`prefixbench.workloads.audit.whatif`."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from prefixbench.reports.auditwords import plus_unpriced, usd_cents4
from prefixbench.reports.textable import text_lines
from prefixbench.simulator.pricing import format_usd
from prefixbench.workloads.audit.whatif import INFERRED, RELAYED, UNCHARGED, RequestChange, WhatIf


def what_if_records(results: Sequence[WhatIf], changes: bool = True) -> list[dict[str, object]]:
    """The ``"what_if"`` list of ``audit --format json``: fix, applies, requests_changed,
    tokens_to_read, saved_usd (signed; null when the fix cannot apply), assumption, detail,
    needs_bodies (where the fix does not apply: ``cannot re-simulate`` rather than ``cannot apply``), and per lane / per request what changed. ``changes`` False: each fix's changed requests
    are left as the fix holds them (one a request it changes), made records as they are written
    (:func:`change_records`)."""
    return [w.to_json(changes) for w in results]


def change_records(changes: Sequence[object]) -> list[object]:
    """A fix's changed requests as ``"what_if"`` lists them, whether made records already or not."""
    return [c.to_json() if isinstance(c, RequestChange) else c for c in changes]


def with_change_records(what_if: list[dict[str, object]]) -> list[dict[str, object]]:
    """``what_if`` with every fix's changed requests made records (:func:`what_if_records`)."""
    return [{**w, "changes": change_records(w["changes"])} if "changes" in w else w for w in what_if]  # type: ignore[arg-type]


def saved_text(w: WhatIf) -> str:
    return saved_cell(w.saved_usd, w.unpriced_requests, w.detail)


def saved_cell(saved: Decimal | float | None, unpriced: int | None, detail: str | None = "") -> str:
    """:func:`saved_words`, and the changed requests no price row prices: ``unknown (unpriced)``
    when none of the dollars moved (``saved`` 0, or None: the JSON's null of a fix none of whose
    changed requests is priced), else ``saves $0.0331 + 2 unpriced``
    (:func:`~prefixbench.reports.auditwords.plus_unpriced`); ``saves up to $0.0067`` or ``may save
    $0.0067`` where the fix's ``detail`` hedges its figure (:func:`hedged`)."""
    if not unpriced:
        return hedged(saved_words(saved), saved, detail)
    if saved is None:
        return "unknown (unpriced)"
    value = saved if isinstance(saved, Decimal) else Decimal(str(saved))
    return "unknown (unpriced)" if value == 0 else plus_unpriced(hedged(saved_words(value), value, detail), unpriced)


def hedged(words: str, saved: Decimal | float | None, detail: str | None) -> str:
    """``saves $X`` with the hedges its fix's ``detail`` gives it, so that the row does not read
    as a certainty where the detail hedges: ``saves up to $X`` where the fix adds requests its
    figure does not charge (keep-alives to a model with no price row: :data:`~.whatif.UNCHARGED`),
    whose cost, unknown, can only take from the saving; ``may save $X`` where the change itself is
    inferred from the reads, not seen (static-system on a log without bodies:
    :data:`~.whatif.INFERRED`), so the saving holds only as far as that inference does, or where
    it is on calls through a relay whose cache rules are not known (:data:`~.whatif.RELAYED`)."""
    if saved is None or not detail or not words.startswith("saves "):
        return words
    if UNCHARGED in detail:
        words = "saves up to " + words[len("saves "):]
    if INFERRED in detail or RELAYED in detail:
        words = "may save " + words[len("saves "):]
    return words


def saved_words(saved: Decimal | float | None) -> str:
    """Dollars a fix saves in the one sign convention (docs/audit.md): ``saves $0.0331``,
    ``costs $0.1026 more``, ``$0``; ``-`` for None. The terminal's table and report.html's, at
    one precision for the column (:func:`~.auditwords.usd_cents4`, as what to change's
    *dollars*): 4 significant digits below a cent put ``saves $0.006722`` beside ``saves $0.0224``."""
    if saved is None:
        return "-"
    value = saved if isinstance(saved, Decimal) else Decimal(str(saved))
    if value == 0:
        return "$0"
    if value < 0:
        return f"costs {usd_cents4(-value)} more"
    return f"saves {usd_cents4(value)}"


def what_if_table(results: Sequence[WhatIf]) -> str:
    """Terminal/Markdown-friendly text: one line a fix, then its assumption and what drove it."""
    header = ["fix", "applies", "requests changed", "tokens to read", "dollars"]
    rows = []
    for w in results:
        rows.append([
            w.fix,
            "yes" if w.applies else "no",
            f"{w.requests_changed:,}" if w.applies else "-",
            f"{w.tokens_to_read:+,}" if w.applies else "-",
            saved_text(w) if w.applies else w.why_not,
        ])
    out = ["", "what if (each fix alone, re-simulated on the same log; dollars against what was paid):"]
    out += text_lines(header, rows, right={2, 3, 4})
    out.append("")
    for w in results:
        out.append(f"{w.fix}: {'assumes ' + w.assumption if w.applies else w.why_not + ': ' + w.detail}")
        if w.applies and w.detail:
            out.append(f"  {w.detail}")
    return "\n".join(out)


def run_what_if(trace, fixes_text: str, price_as_of: str | None, result=None, jobs: int = 1,
                baseline=None, system_changed=None) -> list[WhatIf]:
    """Parse ``--what-if`` and run every fix on the imported ``trace`` (requests, summaries);
    ``result``, the audit of it, says which misses it put down to the system prompt (or
    ``system_changed``, their (file, line), taken from it before); ``jobs``:
    the fixes re-simulated in that many forked workers; ``baseline``: the audit's prediction of
    the log as sent (see :func:`~prefixbench.workloads.audit.whatif.what_if`)."""
    from prefixbench.workloads.audit.whatif import parse_fixes, what_if

    fixes = parse_fixes(fixes_text)
    requests, summaries = trace
    changed = system_changed
    if changed is None and result is not None:
        from prefixbench.workloads.audit.advice import resimulation_targets

        changed = resimulation_targets([result.rows])[1]
    return what_if(list(requests), list(summaries), fixes, price_as_of=price_as_of, system_changed=changed, jobs=jobs,
                   baseline=baseline)
