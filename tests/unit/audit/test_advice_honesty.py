"""What to change, read as a user reads it: a fix whose re-simulation changed none of its misses
is not "not worth it at these prices", a fix is said to be net only of what it adds, a saving
that leaves unpriced misses out says so, and the top fix's saving is given as a share of the
spend, the same in the table and report.html."""

from __future__ import annotations

import json
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from types import SimpleNamespace

from msgspec.structs import replace

import prefixbench.reports.advice as views
import prefixbench.workloads.audit.advice as advice
from prefixbench.reports.cli import main
from prefixbench.workloads.audit.advice import Resimulated, rank
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import WhatIf
from tests.unit.audit.test_advice import _paused


def _ran(fix: str, saved: str, changes: tuple = ()) -> WhatIf:
    return WhatIf(fix=fix, applies=True, requests_changed=len(changes), tokens_to_read=0, saved_usd=Decimal(saved),
                  assumption="assumed", detail="what drove it", changes=changes)


def _change(row, saved: str) -> SimpleNamespace:
    return SimpleNamespace(file=row.file, lane=row.lane, index=row.index, saved_usd=Decimal(saved), priced=True,
                           reported_read=0, counterfactual_read=0)


def _audit_and_miss(tmp_path: Path):
    path = _paused(tmp_path)
    result = run_audit([path], trace=load_trace([path]))
    (miss,) = [row for row in result.rows if row.cause == "ttl-expired"]
    return result, miss


def _one(result, fix: str, w: WhatIf):
    (rec,) = [rec for rec in rank(result, Resimulated({fix: w}, {})) if rec.fix == fix]
    return rec


def test_a_fix_that_leaves_its_misses_as_logged_recovers_none_and_is_no_price_verdict(tmp_path: Path) -> None:
    """A Codex rollout's pin-model changed 0 of its 1 miss and read "does not pay ... net of its
    write premiums" and "not worth it at these prices (leave it as it is)": pinning recovered
    nothing, it was not a matter of the prices (and pin-model adds no write premium)."""
    result, miss = _audit_and_miss(tmp_path)
    rec = _one(result, "keep-alive", _ran("keep-alive", "0"))
    assert rec.detail.startswith(advice.RECOVERS_NONE) and "1 request(s) they are on as logged" in rec.detail
    assert "not worth it" not in rec.change and rec.change.startswith("would not have recovered these misses")
    assert views.saves_text(rec.saved_usd, rec.unpriced_requests, rec.lost_usd, rec.detail) == "recovers none"
    # Costing more on other requests: said of those requests, net of what the fix adds.
    elsewhere = SimpleNamespace(file=miss.file, lane=miss.lane, index=0, saved_usd=Decimal("-0.01"), priced=True,
                                reported_read=0, counterfactual_read=0)
    rec = _one(result, "keep-alive", _ran("keep-alive", "-0.01", (elsewhere,)))
    assert rec.detail.startswith(advice.RECOVERS_NONE)
    assert "on the other requests it changes it costs $0.0100 more net of the keep-alive requests it sends" in rec.detail
    # ... and the dollars cell says so too, not "recovers none" alone.
    assert views.saves_text(rec.saved_usd, rec.unpriced_requests, rec.lost_usd, rec.detail) == "recovers none; costs $0.0100 more"
    # ttl-auto leaves every lane's TTL as logged where the other one does not pay: a price verdict.
    rec = _one(result, "ttl-auto", _ran("ttl-auto", "0"))
    assert rec.detail.startswith("does not pay: re-simulated, it saves nothing, against the ")
    assert rec.change.startswith("not worth it at these prices")
    assert views.saves_text(rec.saved_usd, rec.unpriced_requests, rec.lost_usd, rec.detail) == "does not pay"


def test_ttl_auto_is_credited_only_with_the_misses_it_recovers(tmp_path: Path) -> None:
    """ttl-auto that gave a lane the other lifetime, saving on a request that did not miss, and
    recovered none of the ttl-expired misses its cause points at, listed them as its own
    ("ttl-expired x1: $... lost" in its pattern and its lost dollars). It is credited with the
    misses it recovers only: none, said in its pattern; its lost dollars stay those of the misses
    its cause points at (its table cell read "no miss" while its pattern named 3). Where it changed nothing (every lane kept
    as logged) its misses stay its own, a verdict on the prices (above)."""
    result, miss = _audit_and_miss(tmp_path)
    elsewhere = SimpleNamespace(file=miss.file, lane=miss.lane, index=0, saved_usd=Decimal("0.05"), priced=True,
                                reported_read=0, counterfactual_read=0)
    for changes in ((elsewhere,), (elsewhere, _change(miss, "0"))):  # the miss's own write changed, its read not
        rec = _one(result, "ttl-auto", _ran("ttl-auto", "0.05", changes))
        assert rec.saved_usd == Decimal("0.05")
        assert rec.pattern.startswith("it recovers none of the 1 miss(es) its cause points it at (ttl-expired x1: $")
        # Its *lost to its misses* cell is what the misses its cause points at lost, as its pattern
        # says, not "no miss" (which means no miss points at the fix): one meaning for both.
        cell = views.lost_words(rec.lost_usd, rec.causes, rec.unpriced_requests)
        assert rec.lost_usd == miss.lost_usd and rec.causes == ("ttl-expired",) and cell != "no miss"
        assert f"(ttl-expired x1: {cell} lost)" in rec.pattern
        assert f"its dollars are on what the {len(changes)} request(s) it changes paid" in rec.pattern
    # It recovers the miss: credited with it, as before.
    recovered = SimpleNamespace(file=miss.file, lane=miss.lane, index=miss.index, saved_usd=Decimal("0.05"), priced=True,
                                reported_read=0, counterfactual_read=miss.lost_tokens)
    rec = _one(result, "ttl-auto", _ran("ttl-auto", "0.05", (recovered,)))
    assert rec.lost_usd == miss.lost_usd and rec.causes == ("ttl-expired",)


def test_a_fix_that_does_not_pay_is_net_only_of_what_it_adds(tmp_path: Path) -> None:
    """Every "does not pay" read "net of its write premiums", keep-alive's and pin-model's too."""
    result, miss = _audit_and_miss(tmp_path)
    rec = _one(result, "keep-alive", _ran("keep-alive", "0", (_change(miss, "0"),)))
    assert "it saves nothing net of the keep-alive requests it sends, against" in rec.detail
    assert "write premiums" not in rec.detail and rec.change.startswith("not worth it at these prices")


def test_a_ttl_fix_is_net_of_write_premiums_only_where_it_writes_at_1_hour(tmp_path: Path) -> None:
    """ttl-auto that kept every lane on 5 m read "it saves nothing net of its write
    premiums" (a pi home, docs/audit.md): a plan that writes nothing at 1 h adds no write premium."""
    result, miss = _audit_and_miss(tmp_path)

    def written(saved: str, write_1h: int) -> SimpleNamespace:
        return SimpleNamespace(file=miss.file, lane=miss.lane, index=0, saved_usd=Decimal(saved), priced=True,
                               reported_read=0, counterfactual_read=0, counterfactual_write_1h=write_1h)

    for saved, changes in (("0", ()), ("-0.01", (written("-0.01", 0),))):
        rec = _one(result, "ttl-auto", _ran("ttl-auto", saved, changes))
        said = "saves nothing" if saved == "0" else "costs $0.0100 more"
        assert rec.detail.startswith(f"does not pay: re-simulated, it {said}, against the "), rec.detail
        assert "write premiums" not in rec.detail
    # A plan that writes at 1 h pays its premium: said so.
    rec = _one(result, "ttl-auto", _ran("ttl-auto", "-0.01", (written("-0.01", 20_000),)))
    assert rec.detail.startswith("does not pay: re-simulated, it costs $0.0100 more net of its write premiums, against"), (
        rec.detail)
    # Held by column, as the re-simulation holds them: read the same.
    from prefixbench.workloads.audit.whatif import _Changes

    for write_1h in (0, 20_000):
        columns = _Changes()
        columns.add((miss.file, miss.lane), 0, 1, 0, 0, 0, 0, write_1h, Decimal("-0.01"))
        rec = _one(result, "ttl-auto", _ran("ttl-auto", "-0.01", columns))
        assert ("net of its write premiums" in rec.detail) == (write_1h > 0), rec.detail


def test_a_saving_that_leaves_unpriced_misses_out_says_so(tmp_path: Path) -> None:
    """A proxy log's static-system read "saves $0.0096" beside "$0.0099 + 43 unpriced" with no word
    that the 43 misses' saving is not in the figure."""
    result, miss = _audit_and_miss(tmp_path)
    unpriced = replace(miss, lost_usd=None)
    result = replace(result, rows=tuple(unpriced if row is miss else row for row in result.rows))
    rec = _one(result, "keep-alive", _ran("keep-alive", "0.02", (_change(miss, "0.02"),)))
    assert rec.unpriced_requests == 1 and rec.saved_usd == Decimal("0.02")
    assert rec.detail == ("what drove it; the saving is the priced requests' only: 1 of its misses are in no dollar "
                          "figure (no price, or a range only), so what it saves on them is unknown")


def test_share_words() -> None:
    assert views.share_words("static-system", Decimal("17.1855"), Decimal("72.9261")) == (
        "the top fix, static-system, saves 23.6% of the $72.9261 paid")
    assert views.share_words("x", Decimal("0.0001"), Decimal("100")) == "the top fix, x, saves <0.1% of the $100.0000 paid"
    assert views.share_words("x", 1.0, 4.0, 3).endswith("(by the priced requests: the 3 request(s) in no dollar figure are not in it)")
    assert views.share_words("x", Decimal(0), Decimal(5)) == views.share_words("x", None, Decimal(5)) == views.share_words("x", 1, 0) == ""


def test_the_top_fix_saving_is_a_share_of_the_spend_in_the_table_and_report(tmp_path: Path, capsys) -> None:
    """The user's first question, what share of the bill the top fix saves, was in no view."""
    path = _paused(tmp_path)
    assert main(["audit", str(path), "--quiet", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    top, paid = record["recommendations"][0], record["totals"]["cost_usd"]
    share = Decimal(str(top["saved_usd"])) / Decimal(str(paid)) * 100
    want = f"the top fix, {top['fix']}, saves {share.quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)}% of the ${Decimal(str(paid)):.4f} paid"
    assert main(["audit", str(path), "--quiet"]) == 0
    assert f"  {want}\n" in capsys.readouterr().out
    out = tmp_path / "out"
    assert main(["audit", str(path), "--quiet", "--out", str(out)]) == 0
    text = re.sub(r"<[^>]+>", "", (out / "report.html").read_text())
    assert want[0].upper() + want[1:] + "." in text


def _uncharged_keep_alives(folder: Path) -> list[Path]:
    """Two sessions idle 20 minutes: one of a priced model, one of a model with no price row,
    whose keep-alives the keep-alive figure cannot charge."""
    from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

    paths = []
    for name, model in (("priced", "claude-sonnet-4-5"), ("unpriced", "claude-unpriced-test-9")):
        t = Transcript(name)
        t.user(f"hello from {name}", "2025-09-03T00:00:00.000Z", root=True)
        t.assistant(f"{name}-r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 20_000, 0, 40)], model=model)
        t.user(f"{name} after a pause", "2025-09-03T00:20:00.000Z")
        t.assistant(f"{name}-r2", "2025-09-03T00:20:02.000Z", [cc_usage(3, 20_300, 0, 40)], model=model)
        paths.append(write_jsonl(folder / f"{name}.jsonl", t.lines))
    return paths


def test_a_saving_on_a_change_inferred_from_the_reads_reads_may_save() -> None:
    """pi's static-system row read "saves $17.1855" (its share "saves 22.4%") where its detail
    says the system prompt's change is inferred from the reads of a log without bodies, not seen:
    the row and the share carry that hedge; a detail without it keeps "saves"."""
    from prefixbench.reports.whatif import saved_cell
    from prefixbench.workloads.audit.whatif import INFERRED, UNCHARGED

    detail = f"36 request(s) in 2 lane(s) read less than the unlogged system prompt ... (no bodies: {INFERRED})"
    assert views.saves_text(Decimal("17.1855"), 0, Decimal("16.8"), detail) == "may save $17.1855"
    assert views.share_words("static-system", 1, 4, 0, detail) == "the top fix, static-system, may save 25.0% of the $4.0000 paid"
    assert saved_cell(Decimal("0.02"), 3, detail) == "may save $0.0200 + 3 unpriced"
    assert saved_cell(Decimal("-0.01"), 0, detail) == "costs $0.0100 more"  # (no saving to hedge)
    assert saved_cell(Decimal("0.02"), 0, f"{detail}; {UNCHARGED}") == "may save up to $0.0200"
    assert views.saves_text(Decimal("17.1855"), 0, Decimal("16.8"), "logged bodies: 3 request(s)") == "saves $17.1855"


def test_a_saving_that_leaves_uncharged_keep_alives_out_is_an_upper_bound(tmp_path: Path, capsys) -> None:
    """A real OpenClaw home's keep-alive read "saves $0.0067" (what-if: "saves $0.006722") while
    8 of its 44 keep-alives went to a model with no price row, charged nothing in the figure:
    their cost can only take from it, so the figure is what it saves at most."""
    from prefixbench.reports.whatif import saved_cell
    from prefixbench.workloads.audit.whatif import UNCHARGED

    detail = f"44 keep-alive request(s); 8 of them to a model with no price row, {UNCHARGED}"
    assert views.saves_text(Decimal("0.0067"), 0, Decimal("0.2"), detail) == "saves up to $0.0067"
    assert saved_cell(Decimal("0.0067"), 0, detail) == "saves up to $0.0067"
    assert saved_cell(Decimal("0.02"), 3, detail) == "saves up to $0.0200 + 3 unpriced"
    assert saved_cell(Decimal("-0.01"), 0, detail) == "costs $0.0100 more"  # (a cost is at least the figure: said as is)
    assert views.share_words("keep-alive", 1, 4, 0, detail) == "the top fix, keep-alive, saves up to 25.0% of the $4.0000 paid"
    paths = [str(p) for p in _uncharged_keep_alives(tmp_path)]
    assert main(["audit", *paths, "--quiet", "--what-if", "keep-alive"]) == 0
    out = capsys.readouterr().out
    assert UNCHARGED in out
    (row,) = [line for line in out.splitlines() if re.match(r"1\s+keep-alive ", line)]
    assert "saves up to $" in row
    (row,) = [line for line in out.splitlines() if re.match(r"keep-alive\s+yes ", line)]
    assert "saves up to $" in row


def test_the_what_if_dollars_column_has_one_precision() -> None:
    """A real OpenClaw home's what-if table: ``saves $0.006722`` above ``saves $0.0224 + 3 unpriced``."""
    from prefixbench.reports.whatif import saved_cell, saved_words

    assert saved_words(Decimal("0.006722")) == "saves $0.0067" and saved_words(Decimal("0.0224")) == "saves $0.0224"
    assert saved_words(Decimal("-0.0012345")) == "costs $0.0012 more" and saved_cell(0.006722, 2) == "saves $0.0067 + 2 unpriced"


def test_an_openclaw_session_is_named_openclaw_with_openclaws_settings(tmp_path: Path) -> None:
    """OpenClaw homes (agents/<id>/sessions/*.jsonl, pi's format) were told "agent: pi", with
    pi's PI_CACHE_RETENTION; a Kilo Code task folder "agent: Cline"."""
    for where, agent in (("home/.openclaw/agents/main/sessions", "OpenClaw"), ("home/.pi/agent/sessions/--repo--", "pi")):
        file = str(tmp_path / where / "s.jsonl")
        found = advice.resimulate([], [], [], set(), [SimpleNamespace(file=file, format="pi")])
        assert advice.AGENTS[found.formats[file]] == agent, where
    keep = advice.AGENT_SETTINGS[("openclaw", "keep-alive")]
    assert "heartbeat.every" in (keep.setting or "") and "docs.openclaw.ai" in (keep.source or "")
    assert 'cacheRetention: "long"' in (advice.AGENT_SETTINGS[("openclaw", "ttl-auto")].setting or "")
    assert advice.AGENTS["cline"] == "Cline, Roo Code or Kilo Code"


def test_report_html_evidence_counts_agree_in_number(tmp_path: Path) -> None:
    """report.html's evidence cell read "1 requests, 1 lanes, 1 sessions"."""
    out = tmp_path / "out"
    assert main(["audit", str(_paused(tmp_path)), "--quiet", "--out", str(out)]) == 0
    text = re.sub(r"<[^>]+>", "", (out / "report.html").read_text())
    assert "1 request, 1 lane, 1 session: ttl-expired x1" in text and "1 lanes" not in text
    assert views.counted(0, "request") == "0 requests" and views.counted(1_200, "lane") == "1,200 lanes"


def test_a_miss_its_fixes_change_without_reading_back_is_not_recoverable(tmp_path: Path) -> None:
    """static-system changed 11 system-changed misses of a Claude Code home and read 1 of them
    back; its text said it left the other 10 as logged (and "put down to other causes") while the
    loss split counted all 11 recoverable. A miss is recoverable only where a fix of its that ran
    recovers it (reads back at least half of what it lost), not where one merely changes it."""
    result, miss = _audit_and_miss(tmp_path)
    assert miss.loss_class == "recoverable"
    fixes = advice.fixes_for(miss)
    touched = _change(miss, "0.01")  # its write changed, nothing more read
    followed = advice.follow_resimulation(result, Resimulated({fix: _ran(fix, "0.01", (touched,)) for fix in fixes}, {}))
    (row,) = [row for row in followed.rows if (row.file, row.lane, row.index) == (miss.file, miss.lane, miss.index)]
    assert row.loss_class == "unknown" and followed.loss_split.recoverable_requests == 0
    # Read back: recoverable, as its cause says.
    back = SimpleNamespace(**{**vars(touched), "counterfactual_read": miss.predicted_cache_read + miss.lost_tokens})
    followed = advice.follow_resimulation(result, Resimulated({fix: _ran(fix, "0.01", (back,)) for fix in fixes}, {}))
    (row,) = [row for row in followed.rows if (row.file, row.lane, row.index) == (miss.file, miss.lane, miss.index)]
    assert row.loss_class == "recoverable"


def test_two_fixes_that_change_the_same_requests_are_credited_alike() -> None:
    """ttl-1h and ttl-auto ran the same plan on a Codex home (24h on 35 of 35 lanes), recovered the
    same 24 misses, and said $1.9254 and $1.8462 lost: 6 misses shared between an expired entry
    and a changed message counted whole for ttl-1h (no cause points at it) and by their
    ttl-expired part for ttl-auto. Equal changes, equal credit: ttl-1h and ttl-5m are the TTL fix
    they set, so both count the ttl-expired part."""
    from prefixbench.simulator.price_lookup import Prices
    from prefixbench.workloads.audit.core import audit_requests
    from prefixbench.workloads.logs.trace import FileSummary
    from tests.unit.audit.test_shared_head_causes import MIN, _call

    requests = [
        _call("b.jsonl", 0, 0, 0, 12_000, None),
        _call("a.jsonl", 0, MIN, 4_000, 11_000, None),
        _call("a.jsonl", 1, 2 * MIN, 15_000, 1_000, "a.jsonl#0"),
        _call("a.jsonl", 2, 30 * MIN, 0, 20_000, None, events=(("compaction", "context condensed"),)),
    ]
    result = audit_requests(requests, [FileSummary(f, "claude-code", 2) for f in ("a.jsonl", "b.jsonl")], Prices(None))
    (row,) = [row for row in result.rows if row.secondary_cause == "ttl-expired"]
    back = SimpleNamespace(file=row.file, lane=row.lane, index=row.index, saved_usd=Decimal("0.05"), priced=True,
                           reported_read=0, counterfactual_read=row.predicted_cache_read + row.lost_tokens)
    recs = {rec.fix: rec for rec in rank(result, Resimulated({fix: _ran(fix, "0.05", (back,)) for fix in
                                                             ("ttl-auto", "ttl-1h", "ttl-5m")}, {}))}
    assert {fix: (rec.lost_usd, rec.causes) for fix, rec in recs.items()} == {
        fix: (row.secondary_lost_usd, ("ttl-expired",)) for fix in ("ttl-auto", "ttl-1h", "ttl-5m")}
    assert 0 < row.secondary_lost_usd < row.lost_usd
