"""What to change, first: the loss split, the recommendations and the views that open with them."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.reports.cli import main
from prefixbench.simulator.providers import ANTHROPIC, DEEPSEEK, OPENAI
from prefixbench.workloads.audit.advice import AGENT_SETTINGS, GENERIC_CHANGE, advise, resimulation_targets
from prefixbench.workloads.audit.causes import CAUSES
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.losses import CAUSE_CLASS, CAUSE_FIX, LOSS_CLASSES, loss_class, split_losses
from prefixbench.workloads.audit.whatif import ALL_FIXES, FIXES, parse_fixes, what_if
from tests.unit.audit.fixtures import Transcript, anthropic_body, cc_usage, write_jsonl


def _paused(tmp_path: Path, pause: str = "00:20:00") -> Path:
    """A Claude Code session idle ``pause`` (hh:mm:ss) between two requests."""
    t = Transcript("s1")
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 20_000, 0, 40)])
    t.user("after a pause", f"2025-09-03T{pause}.000Z")
    t.assistant("r2", f"2025-09-03T{pause[:-2]}02.000Z", [cc_usage(3, 20_300, 0, 40)])
    return write_jsonl(tmp_path / "s1.jsonl", t.lines)


def _audit(path: Path):
    trace = load_trace([path])
    return advise(run_audit([path], trace=trace), trace)


def _row(cause, gap_ms=None, lane_kind="main", lost="0"):
    return SimpleNamespace(cause=cause, provider=ANTHROPIC.name, model="claude-sonnet-4-5", lane_kind=lane_kind, gap_ms=gap_ms,
                           lost_usd=Decimal(lost), loss_class=None, secondary_loss_class=None, secondary_lost_usd=None)


# --- the loss classes ------------------------------------------------------------------------


def test_every_cause_has_a_class_and_a_new_one_is_unknown() -> None:
    assert set(CAUSES) <= set(CAUSE_CLASS)
    assert set(CAUSE_CLASS.values()) <= set(LOSS_CLASSES)
    assert loss_class(_row("a-cause-added-tomorrow")) == "unknown"
    assert loss_class(_row(None)) is None
    assert all(set(fixes) <= {f.split("=")[0] for f in ALL_FIXES} | set(ALL_FIXES) for fixes in CAUSE_FIX.values())


def test_an_idle_gap_past_every_ttl_is_unavoidable_and_a_shorter_one_recoverable() -> None:
    assert loss_class(_row("ttl-expired", gap_ms=20 * 60_000)) == "recoverable"
    assert loss_class(_row("ttl-expired", gap_ms=4 * 3_600_000 + 11 * 60_000)) == "unavoidable"
    assert loss_class(_row("cold-start")) == "unavoidable"
    assert loss_class(_row("unexplained")) == "unknown"


def test_a_compaction_call_that_missed_is_recoverable_by_keeping_its_prefix() -> None:
    assert loss_class(_row("effort-changed", lane_kind="compaction")) == "recoverable"
    assert loss_class(_row("effort-changed")) == "unknown"


def test_each_class_holds_the_exact_sum_of_its_requests() -> None:
    # Before, the total was rounded once to the cent and its cents split by largest remainders:
    # three classes of $0.005 read $0.01, $0.01 and $0.00 (a cent the unknown class did lose
    # given to another), and the JSON kept only those cents.
    rows = [_row("ttl-expired", 60_000, lost="0.005"), _row("cold-start", lost="0.005"), _row("unexplained", lost="0.005")]
    for row in rows:
        row.loss_class = loss_class(row)
    split = split_losses(rows)
    assert split.lost_usd == Decimal("0.015")
    assert (split.recoverable_usd, split.unavoidable_usd, split.unknown_usd) == (Decimal("0.005"),) * 3
    # A $0.0297 recoverable miss beside $0.0221 and $0.0038 of others: each its own.
    rows = [_row("ttl-expired", 60_000, lost="0.0297"), _row("provider-best-effort", lost="0.0221"), _row("unexplained", lost="0.0038")]
    for row in rows:
        row.loss_class = loss_class(row)
    split = split_losses(rows)
    assert split.lost_usd == Decimal("0.0556")
    assert (split.recoverable_usd, split.unavoidable_usd, split.unknown_usd) == (Decimal("0.0297"), Decimal("0.0221"), Decimal("0.0038"))
    # The text rounds each as the report's other dollars, no cent moved between them.
    from prefixbench.reports.advice import split_line

    assert split_line(split) == "lost $0.0556 = recoverable $0.0297 (1 req) + unavoidable $0.0221 (1 req) + unknown $0.003800 (1 req)"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(LOSS_CLASSES), st.integers(0, 10**9)), max_size=40))
def test_the_three_parts_are_the_exact_sums_of_their_requests(items) -> None:
    rows = [SimpleNamespace(loss_class=name, lost_usd=Decimal(units).scaleb(-8), secondary_loss_class=None, secondary_lost_usd=None)
            for name, units in items]
    split = split_losses(rows)
    exact = sum((row.lost_usd for row in rows), Decimal(0))
    assert split.lost_usd == exact
    assert split.recoverable_usd + split.unavoidable_usd + split.unknown_usd == split.lost_usd
    for name in LOSS_CLASSES:
        assert split.usd(name) == sum((row.lost_usd for row in rows if row.loss_class == name), Decimal(0))


# --- recommendations -------------------------------------------------------------------------


def test_a_pause_under_an_hour_is_recoverable_and_keep_alive_is_recommended(tmp_path: Path) -> None:
    result = _audit(_paused(tmp_path))
    split = result.loss_split
    assert split is not None and split.recoverable_requests == 1 and split.recoverable_usd > 0
    assert split.recoverable_usd + split.unavoidable_usd + split.unknown_usd == result.totals.lost_usd
    assert result.recommendations is not None
    best = result.recommendations[0]
    assert (best.rank, best.fix, best.agent) == (1, "keep-alive", "Claude Code")
    assert best.saved_usd is not None and 0 < best.saved_usd < best.lost_usd  # the keep-alive's read is charged
    assert (best.requests, best.lanes, best.sessions) == (1, 1, 1) and best.causes == ("ttl-expired",)
    ttl = next(rec for rec in result.recommendations if rec.fix == "ttl-auto")
    assert ttl.setting is not None and "promptCacheTtl" in ttl.setting and ttl.source


def test_a_pause_past_every_ttl_is_unavoidable_and_nothing_is_recommended(tmp_path: Path) -> None:
    result = _audit(_paused(tmp_path, "04:11:00"))
    assert result.loss_split is not None and result.loss_split.unavoidable_requests >= 1
    assert result.loss_split.recoverable_usd == 0 and result.recommendations == ()


def test_the_keep_alive_fix_states_the_reach_the_plan_runs() -> None:
    """--what-if's description of keep-alive names the margin and the most keep-alives a gap the
    plan and the loss split use (before: its own copy, 30 s and 10, in the text)."""
    from prefixbench.workloads.audit.losses import KEEP_ALIVE_MARGIN_MS, KEEP_ALIVE_MAX

    assert f"every TTL minus {KEEP_ALIVE_MARGIN_MS // 1000} s of the gap, at most {KEEP_ALIVE_MAX} times a gap" in FIXES["keep-alive"]


def test_the_keep_alive_assumption_is_short_and_keeps_every_fact() -> None:
    """keep-alive's assumption (printed in the what-to-change detail) ran past 1,000 characters;
    it says the same facts in fewer words: the interval and cap, what each ping is charged and
    on which gaps, where the pings count from, and the survival bound's source and effect."""
    from prefixbench.workloads.audit.losses import KEEP_ALIVE_MARGIN_MS

    text = FIXES["keep-alive"]
    margin = f"{KEEP_ALIVE_MARGIN_MS // 1000} s"
    # (700 before it said how a write the log does not report is counted: 160 characters more)
    assert len(text) <= 860, len(text)
    for fact in ("every TTL minus", "at most", "(its read, any write, 1 output token)", "whether the entry outlived it or not",
                 "(the send; Qwen: the response's end)", "earlier gaps in one home or source folder (its logs pooled)", "2+ read in full past it plus "
                 + margin, "idle from the response's end", "none read short up to that idle", f"the first comes {margin} "
                 "before that idle", "a shorter gap is not bridged"):
        assert fact in text, fact


def test_the_keep_alive_assumption_says_an_unreported_write_counts_as_none() -> None:
    """Keep-alive judges a gap by what the previous call left cached (``ProviderRules.left_cached``:
    on an additive provider its read plus its write, so a usage with no write field left its read
    only), and prices a logged call at its logged counts (no write there: no write premium to
    save). Its assumption did not say so."""
    text = FIXES["keep-alive"]
    assert "a write the log does not report (an Anthropic usage with no write field) is none" in text
    assert "the call left only its read cached" in text and "no write premium is saved on one" in text


def test_keep_alive_charges_its_requests(tmp_path: Path) -> None:
    trace = load_trace([_paused(tmp_path)])
    (keep,) = what_if(*trace, ["keep-alive"])
    (charge,) = [c for c in keep.changes if c.index == -1]
    assert keep.applies and keep.requests_changed == 1 and charge.saved_usd < 0
    assert "4 keep-alive request(s) bridge 1 idle gap(s)" in keep.detail  # 20 min / 4 m 30 s


def test_what_if_all_runs_every_fix() -> None:
    assert parse_fixes("all") == list(ALL_FIXES)
    assert {fix.split("=")[0] for fix in ALL_FIXES} == set(FIXES)
    assert parse_fixes("ttl-1h,all")[0] == "ttl-1h" and len(parse_fixes("ttl-1h,all")) == len(ALL_FIXES)


def test_every_agent_setting_names_its_source_and_a_known_fix() -> None:
    for (fmt, fix), setting in AGENT_SETTINGS.items():
        assert fix in GENERIC_CHANGE and fix in FIXES, (fmt, fix)
        assert setting.source, (fmt, fix)


def test_a_fix_that_needs_bodies_says_how_to_record_them(tmp_path: Path, capsys) -> None:
    assert main(["audit", str(_paused(tmp_path)), "--quiet", "--what-if", "static-system,breakpoints=auto"]) == 0
    out = capsys.readouterr().out
    assert out.count("prefixbench proxy") >= 2 and "claude-trace" in out


# --- the views open with it ------------------------------------------------------------------


def test_the_table_opens_with_what_to_change_and_the_split(tmp_path: Path, capsys) -> None:
    assert main(["audit", str(_paused(tmp_path)), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("what to change: ranked by the net dollars")
    split = next(line for line in lines if line.startswith("lost $"))
    assert "recoverable $" in split and "unavoidable $" in split and "unknown $" in split
    headline = next(i for i, line in enumerate(lines) if " requests: input " in line)
    assert lines.index(split) < headline


def test_json_and_markdown_open_with_them(tmp_path: Path, capsys) -> None:
    log = _paused(tmp_path)
    assert main(["audit", str(log), "--quiet", "--format", "json", "--what-if", "all"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert list(record)[:3] == ["schema", "loss_split", "recommendations"]
    split = record["loss_split"]
    assert abs(split["recoverable_usd"] + split["unavoidable_usd"] + split["unknown_usd"] - split["lost_usd"]) < 1e-12
    # Exact, as the requests' own dollars (summing them by loss_class gives the same).
    assert split["recoverable_usd"] == sum(r["lost_usd"] for r in record["requests"] if r["loss_class"] == "recoverable")
    assert {entry["fix"] for entry in record["what_if"]} == set(ALL_FIXES)
    (first, *_) = record["recommendations"]
    assert first["fix"] == "keep-alive" and first["saved_usd"] > 0 and first["rank"] == 1
    assert [r["loss_class"] for r in record["requests"]] == ["unavoidable", "recoverable"]  # cold start, then the pause
    assert main(["audit", str(log), "--quiet", "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert md.index("what to change:") < md.index("misses by cause")


def test_report_html_opens_with_what_to_change(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["audit", str(_paused(tmp_path)), "--quiet", "--out", str(out)]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.index('<section id="what-to-change">') < page.index('<section id="totals">')
    assert 'data-recommendation="keep-alive"' in page and 'data-loss-class="recoverable"' in page


def test_a_log_that_reports_no_cache_use_is_not_told_it_lost_nothing(tmp_path: Path, capsys) -> None:
    """Before, a block-hash trace (no usage at all) opened with "nothing: no miss in these logs has
    a fix" and "lost $0.00 = recoverable $0.00 (0 req) + ...", above a headline saying its loss is
    unknown since no miss could be seen: the opening now says the same, in every view."""
    trace = tmp_path / "mooncake.jsonl"
    trace.write_text("".join(json.dumps({"timestamp": t, "input_length": 2048, "output_length": 1, "hash_ids": [1, 2, 3, 4]}) + "\n"
                             for t in (0, 9)))
    out = tmp_path / "out"
    assert main(["audit", str(trace), "--quiet", "--out", str(out)]) == 0
    head = capsys.readouterr().out.split(" requests: ")[0]
    assert "nothing to rank: no request reports its cache use, so no miss could be seen" in head
    assert "lost unknown: no request reports its cache use" in head and "lost $0.00" not in head
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Lost unknown: no request reports its cache use" in page and 'data-loss-class=' not in page
    assert "lost unknown:" in (out / "audit.md").read_text(encoding="utf-8")


# --- request-body logs list their misses -----------------------------------------------------


def test_a_request_body_log_lists_and_prices_its_misses(tmp_path: Path) -> None:
    """Fails on the audit before: no usage, so every request was 'paid $0, lost $0' and no miss was listed."""
    dated = anthropic_body(messages=6, system="Today is 2025-09-04. " + "You are helpful. " * 400)
    log = write_jsonl(tmp_path / "bodies.jsonl", [anthropic_body(messages=2), anthropic_body(messages=4), dated])
    result = _audit(log)
    (miss,) = [row for row in result.rows if row.lost_tokens]
    assert (miss.line, miss.cause, miss.evidence, miss.loss_class) == (3, "system-changed", "body-diff", "recoverable")
    assert miss.reported_cache_read is None and miss.lost_usd and miss.lost_usd > 0  # predicted, never shown as reported
    assert result.totals.cost_usd > 0 and result.totals.lost_usd == miss.lost_usd
    assert any("request-body logs report no usage" in note for note in result.notes)
    assert result.recommendations and result.recommendations[0].fix == "static-system"
    assert result.recommendations[0].saved_usd and result.recommendations[0].saved_usd > 0


def test_a_request_body_log_whose_misses_are_listed_is_not_told_no_miss_could_be_seen(tmp_path: Path, capsys) -> None:
    """The misses the cache model finds on logged bodies are listed, priced and ranked; the opening
    and the headline said "lost unknown: no request reports its cache use, so no miss could be
    seen" under a recommendation naming the miss, and report.html likewise (true of a block-hash
    trace only, whose audit finds no miss)."""
    dated = anthropic_body(messages=6, system="Today is 2025-09-04. " + "You are helpful. " * 400)
    log = write_jsonl(tmp_path / "bodies.jsonl", [anthropic_body(messages=2), anthropic_body(messages=4), dated])
    out = tmp_path / "out"
    assert main(["audit", str(log), "--quiet", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "no miss could be seen" not in text and "lost unknown" not in text
    head = text.split(" requests: ")[0]
    assert "1. static-system:" in head and "recoverable $0.0" in head and "(1 req)" in head
    headline = next(line for line in text.splitlines() if " requests: " in line)
    assert "lost to misses $0.0" in headline
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "no miss could be seen" not in page and 'data-loss-class="recoverable"' in page


def test_the_fixes_to_resimulate_are_the_same_read_whole_or_a_batch_at_a_time() -> None:
    # The command reads a spilled audit's rows a file at a time; it kept its own ordered set of
    # the fixes across batches beside advise()'s (targeted_fixes, system_changed). One helper now
    # gives both: each fix once, in the order of its first miss, however the rows are batched.
    # (Fails on main: resimulation_targets did not exist.)
    def row(cause: str, file: str, line: int) -> SimpleNamespace:
        return SimpleNamespace(**vars(_row(cause)), file=file, line=line)

    rows = [row("concurrent-write", "a", 1), row("system-changed", "a", 2), row("concurrent-write", "b", 3),
            row("ttl-expired", "b", 4), row("system-changed", "b", 5)]
    whole = resimulation_targets([rows])
    assert whole == resimulation_targets([rows[:2], [], rows[2:]])
    fixes, changed = whole
    # ttl-auto brings the two one-TTL settings with it (listed where they save).
    assert fixes == [*dict.fromkeys(f for r in rows for f in CAUSE_FIX.get(r.cause, ())), "ttl-5m", "ttl-1h"]
    assert fixes[0] == CAUSE_FIX["concurrent-write"][0] and len(fixes) == len(set(fixes))
    assert changed == {("a", 2), ("b", 5)}


def test_a_what_if_fix_listed_for_its_saving_names_the_misses_it_recovers(tmp_path: Path) -> None:
    """``--what-if ttl-1h`` on a session idle 20 minutes: ttl-1h reads back the ttl-expired miss,
    yet its row said ``no miss`` and its pattern "no miss the audit found points at this fix"
    (no cause maps to ttl-1h, so the misses it recovers were left out)."""
    path = _paused(tmp_path)
    trace = load_trace([path])
    result = run_audit([path], trace=trace)
    (ttl_1h,) = what_if(*trace, ["ttl-1h"])
    assert ttl_1h.saved_usd > 0 and ttl_1h.tokens_to_read > 0
    rec = {r.fix: r for r in advise(result, trace, what_ifs=[ttl_1h]).recommendations}["ttl-1h"]
    assert rec.causes == ("ttl-expired",) and rec.lost_usd > 0
    assert rec.pattern.startswith("ttl-expired x1: $") and "no miss" not in rec.pattern


def _codex_idle(tmp_path: Path) -> Path:
    """A Codex 0.58 rollout on gpt-5.1-codex (OpenAI: in_memory or 24h retention per request),
    idle 39 minutes between its second and third calls."""
    records = [{"timestamp": "2025-11-17T10:00:00.000Z", "type": "session_meta",
                "payload": {"id": "019a-idle", "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.58.0",
                            "source": "cli", "model_provider": "openai"}}]
    total = [0, 0, 0]
    for n, (sent, prompt, cached) in enumerate([("10:00:10", 12_000, 0), ("10:01:00", 12_500, 11_904),
                                                ("10:40:00", 13_000, 0), ("10:41:00", 13_500, 12_928)]):
        def at(seconds: int, kind: str, payload: dict) -> dict:
            return {"timestamp": f"2025-11-17T{sent[:-2]}{int(sent[-2:]) + seconds:02d}.000Z", "type": kind, "payload": payload}
        total = [total[0] + prompt, total[1] + cached, total[2] + 100]
        records += [
            at(0, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"step {n}"}]}),
            at(0, "turn_context", {"cwd": "/w", "model": "gpt-5.1-codex", "effort": "high"}),
            at(5, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}),
            at(5, "event_msg", {"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": total[0], "cached_input_tokens": total[1], "output_tokens": total[2]},
                "last_token_usage": {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": 100}}}),
        ]
    return write_jsonl(tmp_path / "rollout-2025-11-17T10-00-00-019a-idle.jsonl", records)


def test_ttl_advice_on_an_openai_log_names_the_retention_it_can_ask_for(tmp_path: Path) -> None:
    """On a Codex rollout (OpenAI: no TTL per write, a retention policy per request), ttl-1h and
    ttl-auto told the user to write "Anthropic cache_control ttl 1h" and to pick "1 h for lanes
    that idle 5 m-1 h": a knob and bounds the log's provider does not have."""
    path = _codex_idle(tmp_path)
    trace = load_trace([path])
    result = run_audit([path], trace=trace)
    recs = {r.fix: r for r in advise(result, trace, what_ifs=what_if(*trace, ["ttl-1h", "ttl-auto"])).recommendations}
    assert recs["ttl-auto"].causes == ("ttl-expired",) and recs["ttl-auto"].saved_usd > 0
    for fix in ("ttl-1h", "ttl-auto"):
        change = recs[fix].change
        assert 'prompt_cache_retention "24h"' in change and "cache_control" not in change and "5 m-1 h" not in change, change
    assert "one retention for the main sessions and one for the subagents" in recs["ttl-auto"].change
    # The fix's name says 1 h; on OpenAI it re-simulated the 24 h retention, and the row says so.
    assert recs["ttl-1h"].change.startswith("on OpenAI, ttl-1h means its extended 24 h retention, not a 1 h TTL")
    # An Anthropic log keeps the TTL's words.
    claude = _paused(tmp_path)
    trace = load_trace([claude])
    recs = {r.fix: r for r in advise(run_audit([claude], trace=trace), trace,
                                     what_ifs=what_if(*trace, ["ttl-1h"])).recommendations}
    assert "prompt_cache_retention" not in recs["ttl-1h"].change


def test_a_fix_over_the_lanes_of_two_agents_names_each_agents_setting(tmp_path: Path, capsys) -> None:
    """``audit cc-log codex-log --what-if ttl-1h``: the fix was one row named after the agent
    with the most lanes, so Claude Code's ENABLE_PROMPT_CACHING_1H=1 was shown for the Codex lane
    too. Each agent is named with its own change and setting, in the table, JSON and report.html."""
    claude, codex = _paused(tmp_path), _codex_idle(tmp_path)
    out = tmp_path / "out"
    assert main(["audit", str(claude), str(codex), "--quiet", "--what-if", "ttl-1h", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    (rec,) = [r for r in json.loads((out / "audit.json").read_text())["recommendations"] if r["fix"] == "ttl-1h"]
    assert rec["lanes"] == 2 and rec["agent"] == "Claude Code, Codex CLI"
    claude_setting = AGENT_SETTINGS[("claude-code", "ttl-1h")].setting
    # (the transcript's Claude Code 1.0.98 is older than the setting's 2.1.108: said)
    assert rec["setting"] == (f"Claude Code: {claude_setting}; needs Claude Code 2.1.108 or later (this log's sessions "
                              "ran 1.0.98); Codex CLI: none documented (the change says what to ask for)")
    assert rec["change"].startswith("Claude Code: opt the session into the 1-hour prompt-cache TTL; Codex CLI: ")
    assert 'prompt_cache_retention "24h"' in rec["change"].split("Codex CLI: ")[1]
    assert f"   setting: {rec['setting']}" in table and "Claude Code, Codex CLI" in table
    html = (out / "report.html").read_text()
    assert "Codex CLI: none documented" in html and "Claude Code, Codex CLI" in html
    assert "needs Claude Code 2.1.108 or later" in html and "needs Claude Code 2.1.108 or later" in table
    # One agent keeps its own words, unlabelled.
    assert main(["audit", str(claude), "--quiet", "--what-if", "ttl-1h", "--format", "json"]) == 0
    (alone,) = [r for r in json.loads(capsys.readouterr().out)["recommendations"] if r["fix"] == "ttl-1h"]
    assert alone["agent"] == "Claude Code" and alone["setting"] == (f"{claude_setting}; needs Claude Code 2.1.108 or "
                                                                           "later (this log's sessions ran 1.0.98)")


def _pi_restarted(tmp_path: Path) -> Path:
    """A pi session whose third call, 20 s after the second, read nothing: the cached prefix ended
    in the unlogged head, where pi before 0.58.0 wrote the current time (system-changed)."""
    t0 = 1765233665294

    def msg(role: str, at: int, usage: tuple[int, int, int] | None = None) -> dict:
        message = {"role": role, "content": [], "timestamp": t0 + at}
        if usage is not None:
            i, r, w = usage
            message.update({"provider": "anthropic", "model": "claude-opus-4-5", "api": "anthropic-messages", "stopReason": "stop",
                            "usage": {"input": i, "output": 10, "cacheRead": r, "cacheWrite": w, "cost": {}}})
        return {"type": "message", "timestamp": "2025-12-08T22:41:09.389Z", "message": message}

    header = {"type": "session", "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x", "provider": "anthropic",
              "modelId": "claude-opus-4-5", "thinkingLevel": "off"}
    return write_jsonl(tmp_path / "pi.jsonl", [header, msg("user", 0), msg("assistant", 10, (10, 0, 40_000)), msg("toolResult", 5000),
                                               msg("assistant", 5010, (1, 40_000, 500)), msg("user", 25_000),
                                               msg("assistant", 25_010, (10, 0, 41_000))])


def test_pi_system_prompt_advice_names_the_pi_release_that_fixed_it(tmp_path: Path, capsys) -> None:
    # The generic "move dates out of the prefix" is not something a pi user can do: the pi
    # release that stopped writing the time into the system prompt is (CHANGELOG 0.58.0, #2131).
    assert main(["audit", str(_pi_restarted(tmp_path)), "--quiet"]) == 0
    out = capsys.readouterr().out
    fix = next(line for line in out.splitlines() if line.startswith("1. static-system: "))
    assert "update pi to 0.58.0 or later" in fix and "AGENTS.md" in fix
    assert "   see: pi-mono packages/coding-agent CHANGELOG 0.58.0 (#2131" in out


def test_a_log_that_never_read_the_cache_is_not_told_there_is_nothing_to_change(tmp_path: Path, capsys) -> None:
    # A Cline history through a company gateway (../shared/realdata-like: 220 calls, 13.9 M input
    # tokens, every one reporting 0 cached): 0.0% hit, and the audit opened "nothing: no miss in
    # these logs has a fix", as if the log were fine.
    history = [{"role": "user", "content": [{"type": "text", "text": "task " * 50}]}]
    for n in range(3):
        history.append({"role": "assistant", "content": [{"type": "text", "text": f"step {n}"}],
                        "metrics": {"tokens": {"prompt": 2_000 + 500 * n, "completion": 40, "cached": 0}},
                        "ts": 1_777_000_000_000 + 10_000 * n, "modelInfo": {"modelId": "claude_4_5_opus", "providerId": "openai"}})
        history.append({"role": "user", "content": [{"type": "text", "text": f"result {n} " * 40}]})
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    assert main(["audit", str(folder), "--quiet"]) == 0
    head = capsys.readouterr().out.split("\nlost $")[0]
    assert "nothing: no miss in these logs has a fix" in head
    assert "but none of the 3 requests that report their cache use read or wrote anything in it (7,500 input tokens" in head
    assert "check that caching reaches it" in head
    assert main(["audit", str(folder), "--quiet", "--out", str(tmp_path / "out")]) == 0
    assert "But none of the 3 requests that report their cache use" in (tmp_path / "out" / "report.html").read_text()


def test_a_log_that_never_read_and_whose_misses_are_counted_is_not_told_it_has_no_miss(tmp_path: Path, capsys) -> None:
    # An OpenClaw (pi) session on a local Ollama (adrianstanca1/vps-config's shape: 67 calls, none
    # reading the cache): the audit predicts no read, yet counts the calls as misses of the prefix
    # an ideal cache would have kept; the opening said "so it sees no miss" above a table of 66.
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-03-21T19:16:45.000Z", "cwd": "/w"}]
    parent = None
    for n in range(4):
        user = {"type": "message", "id": f"u{n}", "parentId": parent, "timestamp": f"2026-03-21T19:2{n}:00.000Z",
                "message": {"role": "user", "content": [{"type": "text", "text": f"question {n}"}]}}
        reply = {"type": "message", "id": f"a{n}", "parentId": f"u{n}", "timestamp": f"2026-03-21T19:2{n}:05.000Z",
                 "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {n}"}], "stopReason": "stop",
                             "api": "ollama", "provider": "ollama", "model": "qwen3:8b",
                             "usage": {"input": 10_000 + 1_000 * n, "output": 50, "cacheRead": 0, "cacheWrite": 0,
                                       "totalTokens": 10_050 + 1_000 * n}}}
        lines += [user, reply]
        parent = f"a{n}"
    session = tmp_path / "s1.jsonl"
    session.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = run_audit([session])
    missed = [row.lost_tokens for row in result.rows if row.lost_tokens]
    assert all(not row.predicted_cache_read and row.reported_cache_read == 0 for row in result.rows) and missed
    assert main(["audit", str(session), "--quiet"]) == 0
    head = capsys.readouterr().out.split("\nlost ")[0]
    assert "sees no miss" not in head
    assert (f"and the audit predicts no read either, so the {len(missed)} misses it counts ({sum(missed):,} tokens) are "
            "against the prefix a cache would have kept, not a read it predicts: the log does not tell why") in head
    assert main(["audit", str(session), "--quiet", "--out", str(tmp_path / "out")]) == 0
    assert f"so the {len(missed)} misses it counts" in (tmp_path / "out" / "report.html").read_text()


def test_a_gap_past_a_models_one_lifetime_that_keep_alives_bridge_is_recoverable_by_them() -> None:
    """A real OpenCode session (w12z/Cap) on gpt-5.6-sol, whose one retention is 30 min, missed
    after idling 37m43s: before, the split called it unavoidable and the audit's what to change
    listed no keep-alive, while --what-if all found keep-alive its best fix ($0.7672 net).
    Keep-alives every 29m30s bridge up to 11 x 29m30s; past that, and past Anthropic's 1 h (the
    row does not say whether its lane asked for 1 h), it stays unavoidable."""
    from prefixbench.workloads.audit.losses import fixes_for

    def openai(gap_ms: int) -> SimpleNamespace:
        return SimpleNamespace(cause="ttl-expired", provider="openai", model="gpt-5.6-sol", lane_kind="main", gap_ms=gap_ms)

    within = openai(37 * 60_000 + 43_000)
    assert (loss_class(within), fixes_for(within)) == ("recoverable", ("keep-alive",))
    assert loss_class(openai(11 * (30 * 60_000 - 30_000))) == "recoverable"
    assert loss_class(openai(11 * (30 * 60_000 - 30_000) + 1)) == "unavoidable"
    assert loss_class(_row("ttl-expired", gap_ms=4 * 3_600_000 + 11 * 60_000)) == "unavoidable"
    # OpenAI's in_memory lifetime (5-10 min, best effort) is not one a keep-alive can count on.
    gpt4o = SimpleNamespace(cause="ttl-expired", provider="openai", model="gpt-4o", lane_kind="main", gap_ms=20 * 60_000)
    assert loss_class(gpt4o) == "unavoidable"


def test_keep_alives_to_a_model_with_no_price_are_said_uncharged(tmp_path: Path) -> None:
    """A real Roo task's lane sent 10 of its keep-alives to calls of no price row: they were left
    out of the charge without a word. The detail now says so."""
    t = Transcript("s1")
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 20_000, 0, 40)], model="claude-unpriced-test-9")
    t.user("after a pause", "2025-09-03T00:20:00.000Z")
    t.assistant("r2", "2025-09-03T00:20:02.000Z", [cc_usage(3, 20_300, 0, 40)], model="claude-unpriced-test-9")
    trace = load_trace([write_jsonl(tmp_path / "s1.jsonl", t.lines)])
    (keep,) = what_if(*trace, ["keep-alive"])
    assert keep.applies and "4 of them to a model with no price row, not charged in the figure" in keep.detail


def test_keep_alive_cannot_apply_where_no_provider_publishes_a_cache_lifetime(tmp_path: Path) -> None:
    """A real OpenHands run (105 calls to llama-4-maverick, provider unknown) got keep-alive
    "applies, 0 changed, $0" and "no idle gap past a TTL", as if a TTL were known. Gemini's
    implicit cache publishes no lifetime either: keep-alive says it has no TTL to beat."""
    from tests.unit.audit.test_pin_model import _session

    (keep,) = what_if(*load_trace([_session(tmp_path / "gemini.jsonl")]), ["keep-alive"])
    assert not keep.applies and keep.saved_usd is None and "no TTL for a keep-alive to beat" in keep.detail
    (keep,) = what_if(*load_trace([_paused(tmp_path)]), ["keep-alive"])
    assert keep.applies  # Anthropic's 5 m


def test_a_miss_no_fix_recovers_when_re_simulated_is_not_counted_recoverable(tmp_path: Path) -> None:
    """A capture with no cache_control: its breakpoint-placement miss was "recoverable: a fix
    re-simulated by --what-if would have read these tokens" while that fix's re-simulation changed
    0 of its misses. The split follows the re-simulation where it ran: recoverable only if a fix
    that ran recovered the miss (read back at least half of what it lost; changing it is not
    enough, as test_advice_honesty's test of it says)."""
    from prefixbench.workloads.audit.advice import Resimulated, follow_resimulation
    from prefixbench.workloads.audit.core import run_audit
    from tests.unit.audit.test_rollups import _two_sessions

    result = run_audit([_two_sessions(tmp_path)])
    (miss,) = [row for row in result.rows if row.loss_class == "recoverable"]  # ttl-expired: ttl-auto, keep-alive
    at = SimpleNamespace(file=miss.file, lane=miss.lane, index=miss.index, reported_read=0,
                         counterfactual_read=miss.predicted_cache_read + miss.lost_tokens)
    ran = lambda changes: SimpleNamespace(applies=True, changes=changes)  # noqa: E731
    unchanged = follow_resimulation(result, Resimulated({"ttl-auto": ran(()), "keep-alive": ran(())}, {}))
    split = unchanged.loss_split
    assert (split.recoverable_requests, split.recoverable_usd, split.unknown_requests, split.unknown_usd) == (0, 0, 1, miss.lost_usd)
    assert [row.loss_class for row in unchanged.rows if row.index == miss.index and row.lane == miss.lane] == ["unknown"]
    # One of its fixes recovers it: recoverable as its cause says.
    assert follow_resimulation(result, Resimulated({"ttl-auto": ran(()), "keep-alive": ran((at,))}, {})) is result
    cannot = SimpleNamespace(applies=False, changes=())
    assert follow_resimulation(result, Resimulated({"ttl-auto": cannot, "keep-alive": ran((at,))}, {})) is result
    # Its fixes cannot apply to the log ("cannot apply" in --what-if): no fix re-simulated
    # recovers it, so it is not recoverable either (it stayed so before: austinweitao's
    # static-system miss, "recoverable" beside "static-system ... cannot apply").
    for done in ({"ttl-auto": cannot}, {"ttl-auto": cannot, "keep-alive": cannot}):
        moved = follow_resimulation(result, Resimulated(done, {}))
        assert [row.loss_class for row in moved.rows if row.index == miss.index and row.lane == miss.lane] == ["unknown"]
        assert (moved.loss_split.recoverable_requests, moved.loss_split.unknown_usd) == (0, miss.lost_usd)
    # Not re-simulated at all: as its cause says.
    assert follow_resimulation(result, Resimulated({}, {})) is result


def test_breakpoint_placements_meaning_covers_a_request_with_no_cache_control() -> None:
    from prefixbench.workloads.audit.causes import cause_meaning

    meaning = cause_meaning("breakpoint-placement")
    assert "no cache_control" in meaning and "20-block lookback" in meaning


def _chat_log(path: Path, cached: list[int | None]) -> Path:
    """A chat-completions log of one growing conversation; ``cached`` each response's
    ``cached_tokens`` (None: its usage has no cache field)."""
    lines = []
    for i, hit in enumerate(cached):
        messages = [{"role": "system", "content": "You are a coding agent. " * 200}]
        messages += [{"role": "user", "content": f"step {n}"} for n in range(i + 1)]
        usage = {"prompt_tokens": 1300 + 10 * i, "completion_tokens": 20}
        if hit is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": hit}
        lines.append({"request": {"timestamp": 1767225600 + 60 * i, "method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                                  "headers": {}, "body": {"model": "gpt-4o", "messages": messages}},
                      "response": {"timestamp": 1767225602 + 60 * i, "status_code": 200, "headers": {},
                                   "body": {"id": f"c{i}", "object": "chat.completion", "model": "gpt-4o",
                                            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                                            "usage": usage}}})
    return write_jsonl(path, lines)


def test_report_html_does_not_claim_a_zero_loss_when_no_miss_could_be_seen(tmp_path: Path, capsys) -> None:
    """Usage with no cache field: the terminal and audit.md said "lost unknown", but report.html's
    worst requests said "No request lost anything" and its waterfall drew paid -> without the
    misses as equal, a $0 loss."""
    out = tmp_path / "out"
    assert main(["audit", str(_chat_log(tmp_path / "plain.jsonl", [None, None, None])), "--quiet", "--out", str(out)]) == 0
    capsys.readouterr()
    page = (out / "report.html").read_text(encoding="utf-8")
    worst = page.split('<section id="worst">')[1].split("</section>")[0]
    assert "No request lost anything" not in worst and "no miss could be seen" in worst
    fall = page.split('<section id="waterfall">')[1].split("</section>")[0]
    assert "No waterfall: lost unknown" in fall and "without the misses" not in fall


def test_report_html_waterfall_says_it_sums_the_seen_requests_only(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["audit", str(_chat_log(tmp_path / "mixed.jsonl", [None, 0, 0])), "--quiet", "--out", str(out)]) == 0
    capsys.readouterr()
    page = (out / "report.html").read_text(encoding="utf-8")
    fall = page.split('<section id="waterfall">')[1].split("</section>")[0]
    assert "sum the 2 request(s) that report their cache use only: 1 report none" in fall
    assert "No request lost anything" not in page.split('<section id="worst">')[1].split("</section>")[0]


def _session(tmp_path: Path, name: str, usages: list[dict]) -> Path:
    t = Transcript(name)
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    for n, usage in enumerate(usages):
        t.assistant(f"{name}-r{n}", f"2025-09-03T00:0{n}:02.000Z", [usage])
        t.user(f"next {n}", f"2025-09-03T00:0{n}:30.000Z")
    return write_jsonl(tmp_path / "logs" / f"{name}.jsonl", t.lines)


def test_a_session_that_never_read_the_cache_is_named_where_the_rest_of_the_log_did(tmp_path: Path, capsys) -> None:
    # github.com/austinweitao/claude-backup's projects/ (tests/realdata): 3 Anthropic sessions, 20
    # requests, read and wrote nothing and paid $25.29 of $77.82 at the full input price; the audit
    # said "lost $0" of them and nothing in "what to change": the warning for a log that never read
    # the cache was the whole log's only, and the rest of the log read.
    (tmp_path / "logs").mkdir()
    _session(tmp_path, "cached", [cc_usage(3, 20_000, 0, 40), cc_usage(3, 300, 20_000, 40), cc_usage(3, 300, 20_300, 40)])
    _session(tmp_path, "uncached", [cc_usage(20_000, 0, 0, 40), cc_usage(20_300, 0, 0, 40), cc_usage(20_600, 0, 0, 40)])
    _session(tmp_path, "uncached2", [cc_usage(30_000, 0, 0, 40)])
    assert main(["audit", str(tmp_path / "logs"), "--quiet", "--out", str(tmp_path / "out")]) == 0
    head = capsys.readouterr().out.split("\nlost $")[0]
    lines = head.splitlines()
    opening = next(line for line in lines if "to a provider that caches read and wrote nothing" in line)
    assert opening.startswith("  2 sessions to a provider that caches read and wrote nothing in the cache (4 requests, $")
    assert "check that caching reaches them" in opening
    named = lines[lines.index(opening) + 1:lines.index(opening) + 3]
    assert named[0].startswith("    uncached.jsonl: anthropic claude-sonnet-4-20250514, 3 requests, 60,900 input tokens, $")
    assert named[1].startswith("    uncached2.jsonl: anthropic claude-sonnet-4-20250514, 1 request, 30,000 input tokens, $")
    assert "cached.jsonl:" not in head.replace("uncached", "")
    # the files --out writes say it too: audit.md as the terminal does, report.html as one note
    md = (tmp_path / "out" / "audit.md").read_text(encoding="utf-8")
    assert "2 sessions to a provider that caches read and wrote nothing in the cache (4 requests, $" in md
    assert "uncached2.jsonl: anthropic claude-sonnet-4-20250514, 1 request" in md
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "2 sessions to a provider that caches read and wrote nothing in the cache (4 requests, $" in html
    assert "uncached2.jsonl: anthropic claude-sonnet-4-20250514, 1 request" in html


def test_the_sessions_that_never_read_are_capped_one_a_line() -> None:
    from prefixbench.reports.advice import NEVER_READ_SHOWN, never_read_group_lines

    def row(file: str, read: int, cost: str, provider: str = ANTHROPIC.name) -> dict:
        return {"file": file, "provider": provider, "model": "claude-sonnet-4-5", "reported_cache_read": read,
                "reported_cache_write": 0, "predicted_cache_read": read, "reported_uncached": 5_000, "cost_usd": cost}

    rows = [row("read.jsonl", 5_000, "1")] + [row(f"s{n}.jsonl", 0, f"0.{n}") for n in range(1, 9)]
    lines = never_read_group_lines(rows, Decimal("10"))
    assert lines[0].startswith("  8 sessions to a provider that caches read and wrote nothing in the cache (8 requests, $3.60 of $10.00 paid")
    assert [line.split(":")[0].strip() for line in lines[1:-1]] == ["s8.jsonl", "s7.jsonl", "s6.jsonl", "s5.jsonl", "s4.jsonl"]
    assert len(lines) == NEVER_READ_SHOWN + 2 and lines[-1] == "    and 3 more ($0.60)"
    # a relay of unknown caching, or a log none of which read (the whole log's line says so), is not named
    assert never_read_group_lines([row("read.jsonl", 5_000, "1"), row("x.jsonl", 0, "1", "unknown")], None) == []
    assert never_read_group_lines([row("x.jsonl", 0, "1")], None) == []
    # nor a session whose prompts were all shorter than the model's minimum (../shared/realdata's
    # test-traffic.jsonl: 47 haiku calls of about 120 tokens could not have been cached)
    short = row("short.jsonl", 0, "0.01") | {"reported_uncached": 120}
    assert never_read_group_lines([row("read.jsonl", 5_000, "1"), short], None) == []


def _never_read_row(file: str, provider: str, model: str, read, write, predicted: int = 0) -> dict:
    return {"file": file, "provider": provider, "model": model, "reported_cache_read": read, "reported_cache_write": write,
            "predicted_cache_read": predicted, "reported_uncached": 5_000, "cost_usd": "0.10"}


def test_a_session_whose_writes_are_not_reported_is_not_named_where_caching_is_automatic() -> None:
    # A lone OpenAI or DeepSeek call reads 0 by nature and reports no write count: it was named as
    # having "read and wrote nothing" with cache_control advice that does not apply there.
    from prefixbench.reports.advice import never_read_group_lines

    rows = [_never_read_row("a.jsonl", OPENAI.name, "gpt-5", 0, None),
            _never_read_row("b.jsonl", OPENAI.name, "gpt-5", 0, None), _never_read_row("b.jsonl", OPENAI.name, "gpt-5", 5_000, None, 5_000),
            _never_read_row("c.jsonl", DEEPSEEK.name, "deepseek-chat", 0, None)]
    assert never_read_group_lines(rows, None) == []
    # nor several calls to a provider that caches unasked, writes unreported
    assert never_read_group_lines(rows + [_never_read_row("d.jsonl", OPENAI.name, "gpt-5", 0, None)] * 3, None) == []
    # a provider that needs markers, writes unreported, several calls: named, but never "wrote nothing"
    lines = never_read_group_lines(rows + [_never_read_row("e.jsonl", ANTHROPIC.name, "claude-sonnet-4-5", 0, None)] * 2, None)
    assert lines[0].startswith("  1 session to a provider that caches read nothing from the cache (2 requests, writes not reported, $0.20")
    assert "wrote nothing" not in lines[0] and "cache_control sent" in lines[0]
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["e.jsonl"]


def test_a_session_the_audit_predicted_a_read_for_or_with_unreporting_requests_is_not_named() -> None:
    from prefixbench.reports.advice import never_read_group_lines

    model = "claude-sonnet-4-5"
    base = [_never_read_row("read.jsonl", ANTHROPIC.name, model, 5_000, 0, 5_000)]
    # predicted a read there: the audit sees that miss and ranks it
    assert never_read_group_lines(base + [_never_read_row("p.jsonl", ANTHROPIC.name, model, 0, 0, 3_000)] * 2, None) == []
    # some of its requests report no cache use: the log cannot say it read nothing
    assert never_read_group_lines(base + [_never_read_row("n.jsonl", ANTHROPIC.name, model, 0, 0),
                                          _never_read_row("n.jsonl", ANTHROPIC.name, model, None, None)], None) == []
    # the control: the same session with every request reporting is named
    assert never_read_group_lines(base + [_never_read_row("n.jsonl", ANTHROPIC.name, model, 0, 0)] * 2, None)


def test_the_never_read_count_is_of_sessions_not_of_models_in_them() -> None:
    from prefixbench.reports.advice import never_read_group_lines

    rows = [_never_read_row("read.jsonl", ANTHROPIC.name, "claude-sonnet-4-5", 5_000, 0, 5_000),
            _never_read_row("s.jsonl", ANTHROPIC.name, "claude-sonnet-4-5", 0, 0),
            _never_read_row("s.jsonl", ANTHROPIC.name, "claude-opus-4-5", 0, 0)]
    lines = never_read_group_lines(rows, None)
    assert lines[0].startswith("  1 session (2 provider and model pairs) to a provider that caches read and wrote nothing")
    assert len(lines) == 3
