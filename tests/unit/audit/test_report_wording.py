"""What a new user reading the docs found in ``audit``'s outputs: report.html says what its hit
ratio is over and signs its dollars as the terminal does, the TTL fixes count and word what
applies, the advice's dollars and counts agree and explain themselves, rows of a one-object JSON
log are told apart, excerpts are escaped once, and audit.png panels and ticks say what they draw."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from prefixbench.reports.audit import audit_html, audit_json, audit_markdown, audit_table
from prefixbench.simulator.pricing import format_usd
from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl
from tests.unit.audit.test_rollups import _two_sessions


def _mooncake(path: Path) -> Path:
    """A trace without usage (every figure of it is the cache model's prediction)."""
    return write_jsonl(path, [
        {"timestamp": 0, "input_length": 2048, "output_length": 1, "hash_ids": [1, 2, 3, 4]},
        {"timestamp": 9, "input_length": 2048, "output_length": 1, "hash_ids": [1, 2, 3, 4]},
    ])


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def test_the_page_says_what_its_hit_ratio_is_over_as_the_terminal_does(tmp_path: Path) -> None:
    folder = _two_sessions(tmp_path / "logs")
    _mooncake(folder / "trace.jsonl")
    result = run_audit([folder])
    said = "(of the 5 requests that report their cache use)"
    assert said in audit_table(result)
    html = audit_html(result)
    subtitle = re.search(r"<header>.*?</header>", html).group(0)
    assert said in subtitle
    totals = _text(re.search(r'<section id="totals">.*?</section>', html).group(0))
    assert said in totals


def test_a_predicted_only_trace_does_not_pass_its_ratio_off_as_reported(tmp_path: Path) -> None:
    result = run_audit([_mooncake(tmp_path / "trace.jsonl")])
    said = "(predicted: no request reports its cache use)"
    assert said in audit_table(result)
    totals = _text(re.search(r'<section id="totals">.*?</section>', audit_html(result)).group(0))
    assert said in totals


def test_the_page_says_extra_cost_in_words_as_the_terminal_does(tmp_path: Path) -> None:
    from prefixbench.reports.whatif import run_what_if, what_if_records, what_if_table
    from prefixbench.workloads.audit.core import load_trace

    folder = _two_sessions(tmp_path / "logs")
    trace = load_trace([folder])
    result = run_audit([folder], trace=trace)
    fixes = run_what_if(trace, "ttl-1h", None, result)
    assert fixes[0].saved_usd is not None and fixes[0].saved_usd < 0  # 1 h writes cost more here
    terminal = what_if_table(fixes)
    words = re.search(r"costs \$[0-9.,]+ more", terminal).group(0)
    section = _text(re.search(r'<section id="what-if">.*?</section>', audit_html(result, what_if_records(fixes))).group(0))
    assert words in section
    assert not re.search(r"-\$[0-9]", section)  # no negative dollars, in the fix table or per lane


def test_a_divergence_excerpt_is_escaped_once() -> None:
    from prefixbench.simulator.wire import Envelope, Request, user_text
    from prefixbench.workloads.logs.bodydiff import body_diff

    family, ask = Envelope("anthropic", "claude-sonnet-4-5"), (user_text("go"),)
    before = Request(family, ask, system="fix it\n\n[... tool result middle pruned ...] end")
    after = Request(family, ask, system="fix it STOP")
    found = body_diff(before, after)
    assert found is not None and found.cause == "system-changed"
    # The prompt is JSON text: its newline is already the two characters \n, shown once.
    assert "\\\\" not in found.detail
    assert "'\\n\\n[... tool result middle pruned" in found.detail and "' STOP" in found.detail


def test_a_cut_that_ends_inside_an_escape_does_not_escape_the_closing_quote() -> None:
    from prefixbench.workloads.logs.bodydiff import _quoted

    assert _quoted("pruned ...]\\") == "'pruned ...]'"
    assert _quoted("two \\\\") == "'two \\\\'"
    assert _quoted("a\\nb") == "'a\\nb'"


def test_ttl_gaps_count_only_the_lanes_a_ttl_fix_reaches(tmp_path: Path) -> None:
    from prefixbench.workloads.audit.core import load_trace
    from prefixbench.workloads.audit.whatif import _gaps_text, lane_bounds, what_if

    folder = _two_sessions(tmp_path / "logs")
    write_jsonl(folder / "trace.jsonl", [  # Mooncake: no TTL a client can pick; 20 gaps of 1 s
        {"timestamp": 1000 * n, "input_length": 2048, "output_length": 1, "hash_ids": [1, 2, 3, 4]} for n in range(21)
    ])
    requests, summaries = load_trace([folder])
    (fix,) = what_if(list(requests), list(summaries), ["ttl-1h"])
    # s1: 3 s, then 20 min; s2: 1 min: the Anthropic lanes' gaps only
    assert "gaps: 2 <= 5 m, 1 in 5 m-1 h" in fix.detail
    assert "1 lane(s) of other providers left out" in fix.detail
    bounds = lane_bounds(requests)
    assert len(bounds) == 2
    assert "15,804 <= 5 m" in _gaps_text((15804, 148, 17), next(iter(bounds.values())))


def _openai_rollout(path: Path, minutes: tuple[int, ...], model: str = "gpt-5.1-codex") -> Path:
    """A Codex rollout: one call at each of ``minutes`` (a 20,000-token prompt growing 1,000 a call)."""
    start = datetime(2026, 1, 15, 10, tzinfo=timezone.utc)

    def at(minute: int, second: int) -> str:
        return (start + timedelta(minutes=minute, seconds=second)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    lines = [
        {"timestamp": at(0, 0), "type": "session_meta", "payload": {"id": "s", "cli_version": "0.60.0", "model_provider": "openai"}},
        {"timestamp": at(0, 0), "type": "turn_context", "payload": {"model": model, "effort": "high"}},
    ]
    for n, minute in enumerate(minutes):
        lines += [
            {"timestamp": at(minute, 1), "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"turn {n}"}]}},
            {"timestamp": at(minute, 3), "type": "response_item",
             "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
        ]
        usage = {"input_tokens": 20_000 + 1_000 * n, "cached_input_tokens": 0, "output_tokens": 50}
        lines.append({"timestamp": at(minute, 4), "type": "event_msg",
                      "payload": {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}})
    return write_jsonl(path, lines)


def test_ttl_gaps_of_an_openai_lane_are_counted_in_its_retention_lifetimes(tmp_path: Path) -> None:
    # An OpenAI lane chooses between in_memory (10 min idle) and 24h retention, not 5 m and 1 h:
    # a 7-minute gap is one in_memory keeps, a 2-hour gap one 24h retention keeps.
    from prefixbench.workloads.audit.core import load_trace
    from prefixbench.workloads.audit.whatif import what_if

    rollout = _openai_rollout(tmp_path / "codex" / "rollout.jsonl", (0, 7, 127))
    requests, summaries = load_trace([rollout])
    found = {fix.fix: fix for fix in what_if(list(requests), list(summaries), ["ttl-1h", "ttl-5m", "ttl-auto"])}
    openai = "gaps: 1 <= 10 m, 1 in 10 m-24 h (24h retention keeps these warm), 0 > 24 h"
    # The middle gaps are listed right after their count, not after "> 24 h" (where they read as
    # gaps past the long lifetime).
    listed = "gaps: 1 <= 10 m, 1 in 10 m-24 h [120m00s] (24h retention keeps these warm), 0 > 24 h"
    for name in ("ttl-1h", "ttl-5m"):
        (lane,) = found[name].lanes
        assert lane.note == listed, lane.note
        assert found[name].detail == listed, found[name].detail
    # ttl-auto names what the lane asks for: the retention policy, not a TTL.
    (lane,) = found["ttl-auto"].lanes
    assert re.fullmatch(r"(in_memory|24h) \(" + re.escape(openai) + r"\)", lane.note), lane.note

    # Beside Anthropic lanes: their notes as before, the totals per provider (other bounds).
    folder = _two_sessions(tmp_path / "logs")
    requests, summaries = load_trace([folder, rollout])
    (fix,) = what_if(list(requests), list(summaries), ["ttl-1h"])
    anthropic = "gaps: 1 <= 5 m, {} in 5 m-1 h{} (a 1 h TTL keeps these warm), 0 > 1 h"
    assert sorted(lane.note for lane in fix.lanes) == sorted([
        anthropic.format(0, ""), anthropic.format(1, " [19m57s]"), listed])
    assert fix.detail == (
        "anthropic (2 lane(s)): gaps: 2 <= 5 m, 1 in 5 m-1 h [19m57s] (a 1 h TTL keeps these warm), 0 > 1 h; "
        f"openai (1 lane(s)): {listed}"), fix.detail


def test_a_ttl_fix_on_an_openai_log_says_what_applies_there(tmp_path: Path) -> None:
    from prefixbench.workloads.audit.core import load_trace
    from prefixbench.workloads.audit.whatif import what_if
    codex = Path(__file__).parents[1] / "logs" / "fixtures" / "codex.jsonl"
    requests, summaries = load_trace([codex])
    assert {(r.provider, r.model) for r in requests} == {("openai", "gpt-5-codex")}
    # gpt-5-codex offers both retention policies: the fixes re-simulate them (4 s gaps: no change).
    for fix in what_if(list(requests), list(summaries), ["ttl-1h", "ttl-5m", "ttl-auto"]):
        assert fix.applies and fix.saved_usd == 0 and fix.requests_changed == 0
        assert "only Anthropic" not in fix.detail
    # gpt-4o keeps a prefix in memory only: nothing to choose, and the detail says what OpenAI offers.
    older = tmp_path / "codex.jsonl"
    older.write_text(codex.read_text().replace('"gpt-5-codex"', '"gpt-4o"'))
    requests, summaries = load_trace([older])
    for fix in what_if(list(requests), list(summaries), ["ttl-1h", "ttl-5m", "ttl-auto"]):
        assert not fix.applies
        assert "prompt_cache_retention" in fix.detail and "which this fix re-simulates on the models that offer both" in fix.detail


def _change(lane: str, index: int, saved: str):
    from decimal import Decimal

    from prefixbench.workloads.audit.whatif import RequestChange

    return RequestChange("f.jsonl", lane, index, 1, 0, 100, 100, 0, 0, Decimal(saved))


def _fix(saved: str, changes: tuple):
    from decimal import Decimal

    from prefixbench.workloads.audit.whatif import WhatIf

    return WhatIf("static-system", True, sum(c.index >= 0 for c in changes), 0, Decimal(saved), "assumed", "", (), changes)


def test_advice_says_why_its_requests_and_dollars_differ_from_its_misses() -> None:
    from decimal import Decimal
    from types import SimpleNamespace

    from prefixbench.workloads.audit.advice import _pattern_of_changes

    misses = [SimpleNamespace(file="f.jsonl", lane="main", index=i, cause="system-changed") for i in range(3)]
    other = SimpleNamespace(file="f.jsonl", lane="main", index=7, cause="unexplained")
    by_key = {(r.file, r.lane, r.index): r for r in [*misses, other]}
    fix = _fix("3.5", (*(_change("main", i, "1") for i in range(3)), _change("main", 7, "0.5")))
    text = _pattern_of_changes("system-changed x3: $3.0000 lost", fix, misses, Decimal(3), by_key)
    assert "also changes 1 request the audit put down to another cause (unexplained x1), saving $0.5000 there" in text
    assert "so it saves $0.5000 more than its misses lost" in text
    # Saving more on the misses themselves than their loss: said why.
    alone = _fix("4", tuple(_change("main", i, "1.3333333") for i in range(3)))
    assert "the loss counts only the tokens" in _pattern_of_changes("p", alone, misses, Decimal(3), by_key)
    # No miss points at the fix: no unrelated cause passed off as its pattern.
    cheaper = _fix("0.7", (_change("main", 7, "0.7"),))
    text = _pattern_of_changes("unexplained x1", cheaper, [], Decimal(0), by_key)
    assert text.startswith("no miss the audit found points at this fix") and "not on a miss" in text


def test_advice_formats_dollars_and_cites_its_sources_without_nesting(tmp_path: Path, capsys) -> None:
    from prefixbench.reports.advice import lost_text
    from prefixbench.reports.cli import main
    from prefixbench.workloads.audit.advice import AGENT_SETTINGS
    from tests.unit.audit.test_advice import _audit, _paused

    result = _audit(_paused(tmp_path))
    for rec in result.recommendations:
        assert not re.search(r"\d USD\b", rec.pattern + rec.detail), rec
    assert main(["audit", str(tmp_path / "s1.jsonl"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"\([^()]*\([^()]*https?://", out)  # no URL inside nested brackets
    assert re.search(r"^   source: .*\[S\]: https://", out, re.M)  # the per-lane TTL settings: a secondary source
    official = AGENT_SETTINGS[("claude-code", "ttl-5m")].source
    assert "github.com/anthropics/claude-code" in official and "715494637" not in official
    assert lost_text(0, ()) == "no miss" and lost_text(1.5, ("ttl-expired",)) == "$1.5000"


def test_requests_of_a_one_object_json_session_are_told_apart(tmp_path: Path) -> None:
    import csv
    import io
    import json

    from prefixbench.reports.audit import audit_csv, audit_json, audit_markdown

    def model(mid: str, ts: str, prompt: int, cached: int) -> dict:
        return {"id": mid, "timestamp": ts, "type": "gemini", "content": "ok", "model": "gemini-2.5-pro",
                "tokens": {"input": prompt, "output": 5, "cached": cached, "thoughts": 0, "tool": 0, "total": prompt + 5}}

    session = {
        "sessionId": "s-1", "projectHash": "p", "startTime": "2025-09-03T00:00:00.000Z",
        "lastUpdated": "2025-09-03T00:01:00.000Z",
        "messages": [
            {"id": "u1", "timestamp": "2025-09-03T00:00:00.000Z", "type": "user", "content": "go"},
            model("m1", "2025-09-03T00:00:02.000Z", 9000, 0),
            {"id": "u2", "timestamp": "2025-09-03T00:00:10.000Z", "type": "user", "content": "more"},
            model("m2", "2025-09-03T00:00:12.000Z", 9500, 0),
            {"id": "u3", "timestamp": "2025-09-03T00:00:20.000Z", "type": "user", "content": "again"},
            model("m3", "2025-09-03T00:00:22.000Z", 9900, 4000),
        ],
    }
    log = tmp_path / "gemini-session.json"
    log.write_text(json.dumps(session))
    result = run_audit([log])
    assert [row.line for row in result.rows] == [1, 1, 1]
    assert [row.path for row in result.rows] == ["messages[1]", "messages[3]", "messages[5]"]
    assert [r["path"] for r in json.loads(audit_json(result))["requests"]] == ["messages[1]", "messages[3]", "messages[5]"]
    assert [r["path"] for r in csv.DictReader(io.StringIO(audit_csv(result)))] == ["messages[1]", "messages[3]", "messages[5]"]
    table = audit_table(result)
    worst = [line for line in table.splitlines() if line.startswith("gemini-session.json:1 messages[")]
    assert worst, table
    assert "gemini-session.json:1 messages[" in audit_markdown(result)


def test_claude_code_calls_run_together_on_one_line_are_told_apart(tmp_path: Path) -> None:
    # A lost newline puts two records on one line: a call's last line is the second of them.
    t = Transcript()
    t.user("hi", "2025-09-03T00:00:00Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:01Z", [cc_usage(10, 4000, 0, 5)])
    t.user("ok", "2025-09-03T00:00:10Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:11Z", [cc_usage(1, 100, 4000, 5)])
    lines = [json.dumps(record) for record in t.lines]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([*lines[:2], "".join(lines[2:])]) + "\n")
    result = run_audit([path])
    assert [(row.line, row.path) for row in result.rows] == [(2, ""), (3, "record[1]")]
    assert [r["path"] for r in json.loads(audit_json(result))["requests"]] == ["", "record[1]"]


def test_the_worst_requests_lost_column_has_one_precision() -> None:
    from decimal import Decimal

    from prefixbench.reports.auditwords import usd_cents4

    assert [usd_cents4(Decimal(v)) for v in ("0.0617", "0.006356", "0.00009225", "0.00001", "0")] == [
        "$0.0617", "$0.0064", "$0.0001", "<$0.0001", "$0"]
    assert usd_cents4(None) == "-" and usd_cents4(Decimal("12.34567")) == "$12.3457"


def _clock_session(folder: Path, name: str, start_minute: int) -> None:
    from tests.unit.audit.fixtures import Transcript, cc_usage

    t = Transcript(name)
    t.user("go", f"2025-09-03T00:{start_minute:02d}:00.000Z", root=True)
    t.assistant(f"{name}-r1", f"2025-09-03T00:{start_minute:02d}:02.000Z", [cc_usage(3, 15000, 0, 9)])
    t.user("more", f"2025-09-03T00:{start_minute:02d}:40.000Z", tool=True)
    t.assistant(f"{name}-r2", f"2025-09-03T00:{start_minute:02d}:42.000Z", [cc_usage(3, 200, 15000, 9)])
    write_jsonl(folder / f"{name}.jsonl", t.lines)


def test_audit_png_gives_reported_files_their_panels_and_folds_the_predicted_ones(tmp_path: Path) -> None:
    from prefixbench.reports.audit import CHART_PANELS, audit_figure, chart_panels

    folder = tmp_path / "logs"
    for n in range(3):
        _clock_session(folder, f"s{n}", n)
    for n in range(CHART_PANELS + 2):
        _mooncake(folder / f"trace-{n:02d}.jsonl")
    result = run_audit([folder])
    panels, order = chart_panels(result)
    assert order[:3] == [str(folder / f"s{n}.jsonl") for n in range(3)]
    assert order[3] == f"{CHART_PANELS + 2} files that report no cache use, in order" and len(order) == 4
    assert sum(len(rows) for rows in panels.values()) == len(result.rows)  # nothing left out
    titles = [ax.get_title() for ax in audit_figure(result).axes]
    assert titles[0].startswith("s0.jsonl (2 requests)") and "predicted only" in titles[3]
    # More reported files than panels: the last panel of theirs folds the rest.
    many = tmp_path / "many"
    for n in range(CHART_PANELS + 3):
        _clock_session(many, f"s{n:02d}", n)
    panels, order = chart_panels(run_audit([many]))
    assert len(order) == CHART_PANELS and order[-1] == "4 more files that report their cache use, in order"


def test_audit_png_on_a_short_capture_has_bars_and_readable_ticks(tmp_path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from prefixbench.reports.audit import audit_figure

    folder = tmp_path / "logs"
    _clock_session(folder, "s0", 0)  # 42 s
    _clock_session(folder, "s1", 2)  # the same file would do; two files: the capture spans 2 min 42 s
    from prefixbench.reports.audit import _time_bars

    # Most requests seconds apart, one long gap: each bar still spans a fair share of the axis.
    starts = [0, 1000, 1500, 2000, 150_000, 151_000]
    _, widths = _time_bars(starts)
    assert min(widths) * 86_400_000 >= 151_000 / (3 * len(starts)) - 1
    fig = audit_figure(run_audit([folder]))
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels and all(re.fullmatch(r"\d\d:\d\d:\d\d", label) for label in labels), labels
    assert ax.get_xlabel() == "time (UTC), 2025-09-03"


def test_every_request_of_a_one_object_session_has_its_own_path() -> None:
    """Property: whatever the run of user and model messages of a one-object Gemini CLI session,
    each counted call's path names its own message (``messages[i]``, a model message), once."""
    import json
    import tempfile

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from prefixbench.workloads.audit.core import load_trace

    folder = Path(tempfile.mkdtemp(prefix="path-gemini-"))

    @settings(max_examples=25, deadline=None)
    @given(kinds=st.lists(st.sampled_from(["user", "gemini"]), min_size=1, max_size=12))
    def case(kinds: list[str]) -> None:
        messages = []
        for n, kind in enumerate(kinds):
            message = {"id": f"m{n}", "timestamp": f"2025-09-03T00:00:{n * 2:02d}.000Z", "type": kind, "content": "x"}
            if kind == "gemini":
                message |= {"model": "gemini-2.5-pro", "tokens": {"input": 2000 + n, "output": 3, "cached": 0, "total": 2003 + n}}
            messages.append(message)
        path = folder / "session.json"
        path.write_text(json.dumps({"sessionId": "s", "projectHash": "p", "messages": messages}))
        requests, _ = load_trace([path])
        paths = [r.path for r in requests]
        assert len(set(paths)) == len(paths) == kinds.count("gemini")
        assert all(kinds[int(p[len("messages["):-1])] == "gemini" for p in paths)

    case()


def test_the_headline_says_which_requests_its_dollars_leave_out(tmp_path: Path) -> None:
    # A model the price table does not know: its requests were in "paid $X" as $0, and only a
    # note at the end said so (a new user read "paid $0" for a session that cost $2.28).
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    t.user("more", "2025-09-03T00:00:10.000Z")
    t.assistant("r2", "2025-09-03T00:00:12.000Z", [cc_usage(3, 20, 1500, 9)], model="claude-nobody-knows-9")
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    assert result.totals.unpriced_requests == 1
    # 3 input + 1,500 written x 1.25 + 9 output at Sonnet 4's $3 / $15: $0.005769.
    assert "paid $0.005769 (not in it: 1 request(s) with no price for their model: claude-nobody-knows-9), lost" in audit_table(result)
    assert "paid $0.005769 (not in it: 1 request(s) with no price for their model: claude-nobody-knows-9)," in _text(audit_html(result))
    assert json.loads(audit_json(result))["totals"]["unpriced_requests"] == 1


def test_audit_png_draws_requests_sent_at_the_same_moment_side_by_side(tmp_path: Path) -> None:
    """Three subagents started at the same millisecond (as claude-code-viewer's fe5e1c67...jsonl
    lines 18, 40 and 127): three bars side by side, none over another, and a miss marker for each
    (on main they were drawn on top of each other, their markers on one spot)."""
    from prefixbench.reports.audit import _time_bars, audit_figure

    main = Transcript("s1")
    main.user("go", "2025-09-03T00:50:00.000Z", root=True)
    main.assistant("m1", "2025-09-03T00:50:02.000Z", [cc_usage(3, 15000, 0, 9)])
    lines = list(main.lines)
    for k in range(3):
        sub = Transcript("s1", sidechain=True)
        sub.n = 100 * (k + 1)  # uuids of their own
        sub.user("task", "2025-09-03T00:52:54.163Z", root=True)
        sub.assistant(f"sub{k}", "2025-09-03T00:52:56.000Z", [cc_usage(3, 12000, 0, 9)])
        lines += sub.lines
    main.user("more", "2025-09-03T00:53:40.000Z", tool=True)
    main.assistant("m2", "2025-09-03T00:53:42.000Z", [cc_usage(3, 200, 15000, 9)])
    write_jsonl(tmp_path / "s1.jsonl", lines + main.lines[-2:])
    result = run_audit([tmp_path])
    # (the three send one prompt, "task" alone: the second and third start while the first's
    # entry at that content-named node is still being written, as a chain's walk back says)
    assert [row.cause for row in result.rows] == ["cold-start"] * 2 + ["concurrent-write"] * 2 + [None]
    ax = audit_figure(result).axes[0]
    reads = next(c for c in ax.collections if c.get_label() == "cache read")  # a rectangle a bar
    spans = sorted((p.vertices[:, 0].min(), p.vertices[:, 0].max()) for p in reads.get_paths())
    assert len(spans) == 5 and all(w > 0 for _, w in ((a, b - a) for a, b in spans))
    assert all(b[0] >= a[1] - 1e-9 for a, b in zip(spans, spans[1:])), spans  # no bar over another
    from matplotlib.collections import PathCollection

    markers = [tuple(o) for c in ax.collections if isinstance(c, PathCollection) for o in c.get_offsets()]
    assert len(markers) == len(set(markers)) == 4  # every miss its own marker
    # Alone, bars keep their time and width; the three at one moment share the room from it.
    t = 1_756_860_774_163
    lefts, widths = _time_bars([t - 174_163, t, t, t, t + 45_837])
    assert lefts[0] * 86_400_000 == pytest.approx(t - 174_163) and lefts[1] * 86_400_000 == pytest.approx(t)
    assert lefts[1] < lefts[2] < lefts[3] and widths[1] == pytest.approx(widths[2]) == pytest.approx(widths[3])
    assert lefts[3] + widths[3] <= lefts[4]


def test_the_headline_counts_requests_without_usage_that_no_dollar_figure_holds(tmp_path: Path) -> None:
    # A block-hash trace reports no usage and names no priced model: its requests were left out
    # of "paid $0" without a word (../shared/realdata: 14,817 of 16,027 requests), as a session
    # of an unpriced model was before the headline named those.
    result = run_audit([_mooncake(tmp_path / "trace.jsonl")])
    assert result.totals.unpriced_requests == 2
    # ... and says why: no usage to price, not a missing price (a block-hash trace's claude-*
    # models have prices), and with every request left out, that the total is unknown, not $0.
    assert "paid unknown (2 request(s) with no usage reported by their format: mooncake), lost" in audit_table(result)
    assert json.loads(audit_json(result))["totals"]["unpriced_requests"] == 2
    assert json.loads(audit_json(result))["totals"]["unpriced_no_usage"] == 2


def test_unpriced_words_say_which_requests_lack_usage_and_which_a_price() -> None:
    from prefixbench.reports.auditwords import unpriced_words

    assert unpriced_words({"codex": 0}, {"x": 0}) == ""
    assert unpriced_words({}, {"glm-9": 42}) == " (not in it: 42 request(s) with no price for their model: glm-9)"
    assert unpriced_words({"mooncake": 42}, {}) == " (not in it: 42 request(s) with no usage reported by their format: mooncake)"
    assert unpriced_words({"mooncake": 40}, {"b": 1, "a": 1}) == (
        " (not in it: 42 request(s): 40 with no usage reported by their format (mooncake), "
        "2 with no price for their model (a 1, b 1))")


def test_the_headline_names_formats_without_usage_as_formats_not_their_models_as_unpriced(tmp_path: Path) -> None:
    """../shared/realdata's headline read "not in it: 14,817 request(s) of claude-haiku-...,
    claude-sonnet-4-20250514, ..., mooncake, no usage": priced models listed as if they lacked a
    price, and a format (mooncake) among them as a model. Each reason is said apart: the formats
    that report no usage, the models the price table lacks."""
    result = run_audit([_unpriced_sessions(tmp_path)])
    words = ("(not in it: 4 request(s): 2 with no usage reported by their format (mooncake), "
             "2 with no price for their model (claude-nobody-knows-9))")
    assert words in audit_table(result) and words in _text(audit_html(result))


def _unpriced_sessions(folder: Path) -> Path:
    """s1: one priced request and one of a model the price table lacks; s2: only that model's;
    trace.jsonl: a block-hash trace with no usage."""
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    t.user("more", "2025-09-03T00:00:10.000Z")
    t.assistant("r2", "2025-09-03T00:00:12.000Z", [cc_usage(3, 20, 1500, 9)], model="claude-nobody-knows-9")
    write_jsonl(folder / "s1.jsonl", t.lines)
    u = Transcript("s2")
    u.user("go", "2025-09-03T01:00:00.000Z", root=True)
    u.assistant("q1", "2025-09-03T01:00:02.000Z", [cc_usage(3, 1500, 0, 9)], model="claude-nobody-knows-9")
    write_jsonl(folder / "s2.jsonl", u.lines)
    _mooncake(folder / "trace.jsonl")
    return folder


def _row_of(table: str, first: str) -> list[str]:
    """The cells of the first line of ``table`` that starts with ``first`` (split on 2+ spaces)."""
    line = next(line for line in table.splitlines() if line.startswith(first))
    return re.split(r"\s{2,}", line.strip())


def test_a_session_day_lane_and_file_of_unpriced_requests_say_so_not_paid_0(tmp_path: Path) -> None:
    # Every session, day, lane and file row showed "paid $0" (and "lost $0") for requests in no
    # dollar figure, while the headline said they were left out: a session of 317 block-hash
    # requests (../shared/realdata/agentx-traces) read as free.
    result = run_audit([_unpriced_sessions(tmp_path / "logs")])
    table = audit_table(result)
    sessions = table.split("per session")[1].split("per day")[0]
    days = table.split("per day (UTC)")[1].split("lanes: reported")[0]
    lanes = table.split("lanes: reported vs predicted")[1].split("\nmodels")[0]
    files = table.split("calibration per file")[1]
    # (paid, lost): the last cells but the top cause of a roll-up; the last two of a lane or file.
    assert _row_of(sessions, "s1.jsonl")[-3:-1] == ["$0.005769 + 1 unpriced", "$0"]
    assert _row_of(sessions, "s2.jsonl")[-3:-1] == ["no price", "-"]
    assert _row_of(sessions, "trace.jsonl")[-3:-1] == ["no usage", "-"]
    assert _row_of(days, "2025-09-03")[-3:-1] == ["$0.005769 + 2 unpriced", "$0"]
    assert _row_of(days, "no timestamp")[-3:-1] == ["no usage", "-"]
    assert _row_of(lanes, "s2.jsonl")[-2:] == ["no price", "-"]
    assert _row_of(lanes, "trace.jsonl")[-2:] == ["no usage", "-"]  # was "-" "-" as if not known
    assert _row_of(files, "s1.jsonl")[-2:] == ["$0.005769 + 1 unpriced", "$0"]
    assert _row_of(files, "trace.jsonl")[-2:] == ["no usage", "-"]
    # audit.md is the same table; report.html says the same words.
    assert "no price" in audit_markdown(result) and "$0.005769 + 1 unpriced" in audit_markdown(result)
    page = _text(audit_html(result))
    assert "$0.005769 + 1 unpriced" in page and "$0.005769 + 2 unpriced" in page
    assert "no price" in page and "no usage" in page
    # The JSON carries the counts (the headline's, per group).
    record = json.loads(audit_json(result))
    by_key = {r["key"]: r for r in record["sessions"]}
    assert [(by_key[k]["unpriced_requests"], by_key[k]["unpriced_no_usage"]) for k in sorted(by_key)] == [(1, 0), (1, 0), (2, 2)]
    assert [(d["unpriced_requests"], d["unpriced_no_usage"]) for d in record["days"]] == [(2, 0), (2, 2)]
    assert sorted((f["unpriced_requests"], f["unpriced_no_usage"]) for f in record["files"]) == [(1, 0), (1, 0), (2, 2)]
    assert sorted((lane["unpriced_requests"], lane["unpriced_no_usage"]) for lane in record["lanes"]) == [(1, 0), (1, 0), (2, 2)]


def _agent_trace(path: Path, model: str) -> Path:
    """A block-hash agent trace (no usage) of ``model``."""
    path.write_text(json.dumps({"id": "c", "models": [model], "block_size": 4, "tool_tokens": 4, "system_tokens": 0,
                                "requests": [{"t": 0.0, "type": "n", "model": model, "in": 8, "out": 1, "hash_ids": [1, 2]},
                                             {"t": 2.0, "type": "n", "model": model, "in": 13, "out": 1, "hash_ids": [1, 2, 3]}]}))
    return path


def test_a_priced_model_whose_requests_carry_no_usage_says_no_usage_not_no_price(tmp_path: Path) -> None:
    # claude-opus-4-6 in a block-hash trace (../shared/realdata/agentx-traces) has a price row:
    # the models table said "no price", and its JSON priced: false.
    _agent_trace(tmp_path / "trace_0001.json", "claude-opus-4-6")
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)], model="claude-nobody-knows-9")
    write_jsonl(tmp_path / "s1.jsonl", t.lines)
    result = run_audit([tmp_path])
    models = audit_table(result).split("\nmodels")[1].split("calibration per file")[0]
    assert _row_of(models, "engine")[1:] == ["claude-opus-4-6", "2", "-", "-", "-", "-", "no usage", "-"]
    assert _row_of(models, "anthropic")[-2:] == ["no price", "-"]
    record = {m["model"]: m for m in json.loads(audit_json(result))["models"]}
    assert record["claude-opus-4-6"]["priced"] is True and record["claude-opus-4-6"]["unpriced_no_usage"] == 2
    assert record["claude-nobody-knows-9"]["priced"] is False and record["claude-nobody-knows-9"]["unpriced_requests"] == 1
    # The headline says each reason apart: the format that reports no usage (not claude-opus-4-6,
    # which has a price), the model with no price; and with every request left out, that the
    # total is unknown, not $0.
    assert ("paid unknown (3 request(s): 2 with no usage reported by their format (agent-traces), "
            "1 with no price for their model (claude-nobody-knows-9))") in audit_table(result)


def test_a_paid_cell_says_which_requests_it_leaves_out() -> None:
    from prefixbench.reports.auditwords import lost_cell, paid_cell

    assert paid_cell("$1.23", 5) == "$1.23"
    assert paid_cell("$1.23", 5, 2, 1) == "$1.23 + 2 unpriced"
    assert paid_cell("$0", 5, 5, 5) == "no usage"
    assert paid_cell("$0", 5, 5, 0) == "no price"
    assert paid_cell("$0", 5, 5, 0, 5) == "range only"
    assert paid_cell("$0", 5, 5, 2, 1) == "unpriced"
    assert lost_cell("$0", 5, 5) == "-" and lost_cell("$0", 5, 4) == "$0" and lost_cell("$0", 0, 0) == "$0"


def _expiring(folder: Path, name: str, model: str | None) -> None:
    """A session whose second call, 20 minutes on, writes again what the first wrote (a TTL expiry)."""
    extra = {} if model is None else {"model": model}
    t = Transcript(name)
    t.n = 100 * int(name[1:])  # uuids of its own
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant(f"{name}r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)], **extra)
    t.user("next", "2025-09-03T00:20:00.000Z")
    t.assistant(f"{name}r2", "2025-09-03T00:20:03.000Z", [cc_usage(3, 15300, 0, 9)], **extra)
    write_jsonl(folder / f"{name}.jsonl", t.lines)


def test_a_cause_whose_misses_are_unpriced_does_not_say_it_lost_0(tmp_path: Path) -> None:
    # A miss of a model the price table lacks lost tokens but no dollars it could say: the causes
    # table summed it as $0 (here: all of a cause's misses, "ttl-expired ... 15,000 ... $0").
    _expiring(tmp_path, "s1", "claude-nobody-knows-9")
    result = run_audit([tmp_path])
    assert _row_of(audit_table(result), "ttl-expired")[1:4] == ["1", "15,000", "-"]
    # The loss split counted it in "recoverable $0.00 (1 req)" without a word, then as "$0.00 (1
    # req, 1 unpriced)" while the JSON and report.html said unknown (null): it says unknown too.
    # (The cold start lost nothing: a known $0, priced or not.)
    assert "lost unknown = recoverable (1 req, 1 unpriced: no dollar figure) + unavoidable $0 (1 req)" in audit_table(result)
    assert "lost unknown = recoverable (1 req, 1 unpriced: no dollar figure)" in audit_markdown(result)
    assert json.loads(audit_json(result))["loss_split"]["recoverable_usd"] is None
    assert json.loads(audit_json(result))["loss_split"]["recoverable_unpriced"] == 1
    assert next(c for c in json.loads(audit_json(result))["causes"] if c["cause"] == "ttl-expired")["unpriced_requests"] == 1
    # Beside a priced one: its dollars, and the miss they leave out.
    _expiring(tmp_path, "s2", None)
    result = run_audit([tmp_path])
    assert _row_of(audit_table(result), "ttl-expired")[1:4] == ["2", "30,000", f"{format_usd(result.causes[0].lost_usd)} + 1 unpriced"]
    assert re.search(r"ttl-expired2\s*30,000\s*\$0\.05\d+ \+ 1 unpriced", _text(audit_html(result)))
    assert "2 (1 unpriced)" in _text(audit_html(result))  # the loss split's requests
    assert re.search(r"recoverable \$0\.0\d+ \(2 req, 1 unpriced\)", audit_table(result))


def test_a_loss_class_none_of_whose_requests_is_priced_says_unknown_beside_priced_ones(tmp_path: Path) -> None:
    # A priced session that misses nothing beside an unpriced one whose miss is recoverable: the
    # class's dollars are unknown (JSON null), not "$0.00", while the total is a figure.
    _expiring(tmp_path, "s1", "claude-nobody-knows-9")
    t = Transcript("s2")
    t.n = 200
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("s2r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    write_jsonl(tmp_path / "s2.jsonl", t.lines)
    result = run_audit([tmp_path])
    split = json.loads(audit_json(result))["loss_split"]
    assert split["recoverable_usd"] is None and split["lost_usd"] is not None
    for text in (audit_table(result), audit_markdown(result)):
        assert "recoverable (1 req, 1 unpriced: no dollar figure) + unavoidable $" in text


def test_a_fix_whose_misses_are_unpriced_is_not_said_not_to_pay(tmp_path: Path, capsys) -> None:
    # A TTL expiry of a model the price table lacks: the re-simulation could price nothing, and
    # the advice said "does not pay ... against the $0 its misses lost" and "not worth it at these
    # prices", with $0 lost to its misses.
    from prefixbench.reports.cli import main

    _expiring(tmp_path, "s1", "claude-nobody-knows-9")
    assert main(["audit", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    advice = out.split("\n1. ")[0]
    assert _row_of(advice, "1  keep-alive")[3:5] == ["unknown (unpriced)", "unpriced"]
    assert "does not pay" not in out and "not worth it" not in out.split("misses by cause")[0]
    assert "1 of its misses are in no dollar figure (no price, or a range only), so what it saves on them is unknown" in out
    assert main(["audit", str(tmp_path), "--quiet", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert {rec["fix"]: rec["unpriced_requests"] for rec in record["recommendations"]}["keep-alive"] == 1
    from prefixbench.reports.advice import advice_html, lost_words, saves_text

    page = _text(advice_html(record))
    assert "unknown (unpriced)" in page and "does not pay" not in page
    assert lost_words(1.5, ("ttl-expired",), 2) == "$1.5000 + 2 unpriced" and lost_words(0, ("ttl-expired",), 2) == "unpriced"
    assert saves_text(Decimal(0), 2, Decimal("0.5")) == "does not pay" and saves_text(Decimal(0), 2, 0) == "unknown (unpriced)"


def test_a_fix_it_cannot_resimulate_whose_misses_are_unpriced_is_listed_not_dropped(tmp_path: Path, capsys) -> None:
    # More new blocks than Anthropic's 20-block lookback on a model the price table lacks: the
    # miss points at breakpoints=auto, which a transcript (no request bodies) cannot re-simulate.
    # A fix that cannot re-simulate was listed only where its misses lost dollars: here none
    # could be priced, and "what to change" said nothing at all.
    from prefixbench.reports.advice import saves_text
    from prefixbench.reports.cli import main

    model = "claude-nobody-knows-9"
    t = Transcript()
    t.user("fix the failing test in parser.py", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:05.000Z", [cc_usage(3, 10_000, 0, 50)], model=model)
    t.user("def parse(x):\n    return x\n" * 200, "2025-09-03T00:00:10.000Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:15.000Z", [cc_usage(3, 2_000, 10_000, 50)], model=model)
    t.user("all good " * 100, "2025-09-03T00:00:20.000Z", tool=True)
    t.assistant("r3", "2025-09-03T00:00:25.000Z", [cc_usage(3, 1_000, 12_000, 50)], model=model)
    for n in range(11):
        t.user(f"step {n} " * 20, f"2025-09-03T00:01:{2 * n:02d}.000Z", tool=True)
        t.user(f"note {n}", f"2025-09-03T00:01:{2 * n + 1:02d}.000Z")
    t.assistant("r4", "2025-09-03T00:02:00.000Z", [cc_usage(3, 3_000, 12_003, 50)], model=model)
    write_jsonl(tmp_path / "s1.jsonl", t.lines)
    assert main(["audit", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "breakpoint-placement" in out
    advice = out.split("\n1. ")[0]
    assert _row_of(advice, "1  breakpoints=auto")[3:5] == ["unknown (unpriced)", "unpriced"]
    assert "cannot re-simulate: breakpoints can only be moved where the log has Anthropic request bodies" in out
    assert main(["audit", str(tmp_path), "--quiet", "--format", "json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)["recommendations"]
    # (lost_usd null, as its "unpriced" says: none of its misses priced, not $0 lost)
    assert (rec["fix"], rec["saved_usd"], rec["lost_usd"], rec["unpriced_requests"]) == ("breakpoints=auto", None, None, 1)
    assert saves_text(None, 1, 0) == "unknown (unpriced)" and saves_text(None, 1, Decimal("0.5")) == "cannot re-simulate"


def _unpriced_pause(tmp_path: Path) -> Path:
    """Two calls of a model no price row holds, 20 minutes apart: a cold start, then a TTL
    expiry that lost 20,000 tokens and no dollar figure."""
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 20_000, 0, 9)], model="claude-nobody-knows-9")
    t.user("after a pause", "2025-09-03T00:20:00.000Z")
    t.assistant("r2", "2025-09-03T00:20:02.000Z", [cc_usage(3, 20_300, 0, 9)], model="claude-nobody-knows-9")
    return write_jsonl(tmp_path / "s.jsonl", t.lines)


def test_the_headline_says_which_misses_its_lost_dollars_leave_out(tmp_path: Path) -> None:
    # An unpriced model's miss: the causes table says "-" for its dollars, but the headline said
    # "lost to misses $0", as if nothing was lost, then "$0 (not in it: ...)": a total of none of
    # them, and "paid $0" of two requests none of which has a price.
    result = run_audit([_unpriced_pause(tmp_path)])
    for text in (audit_table(result), _text(audit_html(result))):
        assert "lost to misses unknown (1 miss with no dollar figure)" in text
        assert "paid unknown (2 request(s) with no price for their model: claude-nobody-knows-9)" in text
        assert "$0" not in text.split("hit ratio")[0].split("requests")[-1]


def test_paid_and_lost_words_say_unknown_only_when_nothing_is_priced() -> None:
    from prefixbench.reports.auditwords import lost_total_words, paid_total_words

    assert paid_total_words("$1.5000", 3, {}, {"x": 1}) == "paid $1.5000 (not in it: 1 request(s) with no price for their model: x)"
    assert paid_total_words("$0", 3, {"mooncake": 3}, {}) == "paid unknown (3 request(s) with no usage reported by their format: mooncake)"
    assert paid_total_words("$0", 0, {}, {}) == "paid $0"
    assert lost_total_words("$0.0100", False, 2) == "lost to misses $0.0100 (not in it: 2 misses with no dollar figure)"
    assert lost_total_words("$0", True, 0) == "lost to misses $0"
    assert lost_total_words("$0", True, 0, seen=False).startswith("lost to misses unknown (no request reports its cache use")


def test_a_log_of_one_request_says_one_request(tmp_path: Path) -> None:
    """Before: "1 requests: input ..." in the headline (one Trae Agent or Continue session)."""
    trace = tmp_path / "mooncake.jsonl"
    trace.write_text(json.dumps({"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]}) + "\n")
    table = audit_table(run_audit([trace]))
    assert "\n1 request: usage not reported" in table and "1 requests" not in table


def test_a_log_with_no_usage_has_no_token_figures_in_the_headline(tmp_path: Path) -> None:
    # A block-hash trace reports no usage: its headline said "input 0, output 0, cache write 0,
    # cache read 0 ... paid $0, lost to misses $0", zeros that read as measured. One request here
    # gives no "out": no length is summed.
    path = _agent_trace(tmp_path / "trace_0001.json", "claude-opus-4-6")
    trace = json.loads(path.read_text())
    del trace["requests"][1]["out"]
    path.write_text(json.dumps(trace))
    headline = next(line for line in audit_table(run_audit([tmp_path])).splitlines() if " requests: " in line)
    assert headline.startswith("2 requests: usage not reported (the logs give no input, output or cache tokens); hit ratio ")
    assert "paid unknown (2 request(s) with no usage reported by their format: agent-traces)" in headline
    assert "lost to misses unknown (no request reports its cache use" in headline and "input 0" not in headline


def test_a_block_hash_trace_headline_sums_the_lengths_it_gives_and_says_only_the_cache_counts_are_missing(tmp_path: Path) -> None:
    # kv-cache-tester's trace_0012 (callanjfox/kv-cache-tester@94f6046): every request gives "in"
    # and "out", totals.combined_tokens input 649,460 / output 4,130; the headline said "usage not
    # reported (the logs give no input, output or cache tokens)". Two files here, their subagent's
    # requests counted in the file's combined totals as the trace's own totals count them.
    _agent_trace(tmp_path / "trace_0001.json", "claude-opus-4-6")
    second = {"id": "d", "block_size": 4, "tool_tokens": 4, "system_tokens": 0,
              "requests": [{"t": 0.0, "type": "n", "model": "m", "in": 40, "out": 7, "hash_ids": list(range(10))},
                           {"t": 1.0, "type": "subagent", "agent_id": "a1",
                            "requests": [{"t": 0.0, "type": "n", "model": "m", "in": 9, "out": 3, "hash_ids": [7, 8]}]}],
              "totals": {"combined_tokens": {"input": 49, "output": 10}}}
    (tmp_path / "trace_0002.json").write_text(json.dumps(second))
    first = json.loads((tmp_path / "trace_0001.json").read_text())
    given = [(sum(r["in"] for r in first["requests"]), sum(r["out"] for r in first["requests"])),
             (second["totals"]["combined_tokens"]["input"], second["totals"]["combined_tokens"]["output"])]
    prompts, replies = sum(i for i, _ in given), sum(o for _, o in given)
    assert (prompts, replies) == (70, 12)
    headline = next(line for line in audit_table(run_audit([tmp_path])).splitlines() if " requests: " in line)
    assert headline.startswith(f"4 requests: prompts {prompts:,} tokens and output {replies:,} (the logs' own lengths per "
                               "request, the cached part inside the prompts); cache read and write not reported (the logs "
                               "give no provider cache counts); hit ratio ")
    assert "usage not reported" not in headline and "no input, output" not in headline


def test_a_block_hash_traces_logged_lengths_are_in_the_json_and_the_page(tmp_path: Path) -> None:
    """The headline's ``prompts N tokens and output M`` was in the table and audit.md only: the
    JSON's totals and files said nothing of them (every count null) and report.html's subtitle
    left them out. Now the JSON gives them (``logged_prompt_tokens``, ``logged_output_tokens``,
    per file and in the totals) and the page says the table's words."""
    _agent_trace(tmp_path / "trace_0001.json", "claude-opus-4-6")
    first = json.loads((tmp_path / "trace_0001.json").read_text())
    prompts, replies = sum(r["in"] for r in first["requests"]), sum(r["out"] for r in first["requests"])
    result = run_audit([tmp_path])
    record = json.loads(audit_json(result))
    assert (record["totals"]["logged_prompt_tokens"], record["totals"]["logged_output_tokens"]) == (prompts, replies)
    assert [(f["logged_prompt_tokens"], f["logged_output_tokens"]) for f in record["files"]] == [(prompts, replies)]
    words = f"prompts {prompts:,} tokens and output {replies:,} (the logs' own lengths per request"
    assert words in audit_table(result) and words in audit_markdown(result)
    subtitle = audit_html(result).split("</h1><p>")[1].split("</p>")[0]
    assert subtitle.startswith(f"2 requests in 1 file(s): {words}".replace("'", "&#x27;")), subtitle
    # A file that gives no length for some request: no figure, null.
    trace = json.loads((tmp_path / "trace_0001.json").read_text())
    del trace["requests"][1]["out"]
    (tmp_path / "trace_0001.json").write_text(json.dumps(trace))
    record = json.loads(audit_json(run_audit([tmp_path])))
    assert record["totals"]["logged_prompt_tokens"] is None and record["files"][0]["logged_output_tokens"] is None
    # A log that reports usage has none either.
    assert json.loads(audit_json(run_audit([_two_sessions(tmp_path / "cc")])))["totals"]["logged_prompt_tokens"] is None



def test_an_unpriced_sessions_top_cause_is_the_one_that_lost_tokens(tmp_path: Path) -> None:
    # Every cause lost $0 where no price row holds the model: the session's top cause was the
    # first cause in table order (cold-start, which loses nothing), not the TTL expiry that lost
    # 20,000 tokens.
    result = run_audit([_unpriced_pause(tmp_path)])
    assert {c.cause for c in result.causes} == {"cold-start", "ttl-expired"}
    assert [s.top_cause for s in result.sessions] == ["ttl-expired"]
    assert [d.top_cause for d in result.days] == ["ttl-expired"]


def test_one_unpriced_words_and_one_plus_unpriced_phrase() -> None:
    """Two functions were named ``unpriced_words`` (the headline's clause, and a fix's saved
    dollars with its unpriced requests), and three views wrote ``+ N unpriced`` each their own way:
    one name now means one thing, and the phrase is made in one place."""
    from decimal import Decimal

    from prefixbench.reports import auditwords, whatif
    from prefixbench.reports.auditwords import lost_cell, paid_cell, plus_unpriced
    from prefixbench.reports.whatif import saved_cell

    assert not hasattr(whatif, "unpriced_words") and hasattr(auditwords, "unpriced_words")
    assert plus_unpriced("$1.2345", 3) == "$1.2345 + 3 unpriced" and plus_unpriced("$1.2345", 0) == "$1.2345"
    assert paid_cell("$1.2345", 10, 3) == lost_cell("$1.2345", 10, 3, count=True) == plus_unpriced("$1.2345", 3)
    assert saved_cell(Decimal("0.0331"), 2) == "saves $0.0331 + 2 unpriced"
    assert saved_cell(Decimal(0), 2) == saved_cell(None, 2) == "unknown (unpriced)" and saved_cell(Decimal("0.5"), 0) == "saves $0.5000"


def test_ttl_expired_means_the_lifetimes_of_the_logs_providers(tmp_path: Path, capsys) -> None:
    """A Codex log's misses-by-cause said ttl-expired is "idle longer than the entry's TTL (5 m /
    1 h)" beside a detail "past the 10m00s TTL": Anthropic's lifetimes on an OpenAI log. The
    meaning names the lifetimes of the log's providers, from their rules."""
    from prefixbench.reports.cli import main
    from prefixbench.simulator.providers import PROVIDERS
    from tests.unit.audit.test_advice import _codex_idle, _paused

    openai, anthropic = PROVIDERS["openai"].ttl_words(), PROVIDERS["anthropic"].ttl_words()
    assert "5-10 min" in openai and "24 h" in openai and "1 h" in anthropic
    codex = _codex_idle(tmp_path)
    result = run_audit([codex])
    (line,) = [line for line in audit_table(result).splitlines() if line.startswith("ttl-expired ")]
    assert line.endswith(f"idle longer than the entry's TTL since it was last used (openai: {openai})") and "5 m" not in line
    assert f"(openai: {openai})" in _text(audit_html(result)) and f"(openai: {openai})" in audit_markdown(result)
    claude = _paused(tmp_path / "cc")
    assert main(["audit", str(claude), str(codex), "--quiet"]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("ttl-expired ")]
    assert line.endswith(f"(anthropic: {anthropic}; openai: {openai})")


def test_what_to_change_dollars_share_one_precision() -> None:
    """``saves $0.007444`` beside ``saves $0.0141``: the column mixed significant figures; it
    takes the worst requests' one rule (4 decimals), as --what-if's dollars do. What its misses
    lost is the figure its pattern and the causes table give (format_usd): a loss under a cent
    read ``$0.0003`` in the column above ``concurrent-write x2: $0.0002580 lost``
    (test_advice_rounding.py)."""
    from prefixbench.reports.advice import lost_text, saves_text

    assert saves_text(Decimal("0.007444")) == "saves $0.0074" and saves_text(Decimal("0.0141")) == "saves $0.0141"
    assert saves_text(Decimal("-0.0012345")) == "costs $0.0012 more" and saves_text(Decimal("0.00001")) == "saves <$0.0001"
    assert lost_text(Decimal("0.007444"), ("ttl-expired",)) == "$0.007444"
    assert lost_text(Decimal("0.0141"), ("ttl-expired",)) == "$0.0141"


def test_the_lifetime_lookup_keeps_its_cache_beside_the_lifetime_words() -> None:
    # ttl_words' helper was put between _ttl_ms and its lru_cache, which then cached the words
    # (a handful of calls an audit) and no longer the lookup the pass makes once a request.
    from prefixbench.simulator.providers import base

    assert hasattr(base._ttl_ms, "cache_info")
    base._ttl_ms.cache_clear()
    for _ in range(3):
        base._ttl_ms((("5m", 300_000), ("1h", 3_600_000)), "5m", "1h")
    assert base._ttl_ms.cache_info().hits >= 2


def test_worst_requests_of_an_unpriced_model_say_they_are_ranked_by_tokens(tmp_path: Path) -> None:
    # Every lost cell read "-" under "worst requests (top 1 by dollars lost)".
    table = audit_table(run_audit([_unpriced_pause(tmp_path)]))
    assert "worst requests (top 1 by tokens lost: none has a dollar figure)" in table and "by dollars lost" not in table


def test_the_models_table_says_what_its_engine_provider_is(tmp_path: Path) -> None:
    """A block-hash trace names no provider: its models row says ``engine``, and the table says
    what that is, so no user takes it for a provider they never used."""
    table = audit_table(run_audit([_mooncake(tmp_path / "trace.jsonl")]))
    models = table.split("\nmodels\n", 1)[1].split("\n\n", 1)[0]
    assert any(line.startswith("engine ") for line in models.splitlines())
    # What the trace is, not a claim that its model was self-hosted (a kv-cache-tester trace of
    # claude-opus-4-5 traffic read "a self-hosted inference engine's block cache").
    assert ("engine: a block-hash replay trace of the row's traffic, simulated as an inference engine's block cache "
            "(block-hash traces name no provider, so this does not say where the model ran)") in models
    assert "self-hosted" not in table


def test_an_openai_only_audit_says_its_writes_are_not_reported() -> None:
    """A Codex rollout's usage has no write count (its 0 is none), and a 1 h write is Anthropic's:
    the headline said ``cache write 0 (0 at 1 h)``, the JSON totals ``cache_write: 0``."""
    codex = Path(__file__).parents[1] / "logs" / "fixtures" / "codex.jsonl"
    result = run_audit([codex])
    headline = next(line for line in audit_table(result).splitlines() if re.match(r"[0-9,]+ requests?: ", line))
    assert "cache write not reported, cache read " in headline and "at 1 h" not in headline
    totals = json.loads(audit_json(result))["totals"]
    assert totals["cache_write"] is None and totals["cache_write_1h"] is None and totals["cache_read"] is not None
    assert "cache write not reported" in audit_markdown(result)


def test_an_anthropic_audit_still_names_its_writes_and_their_1h_part(tmp_path: Path) -> None:
    table = audit_table(run_audit([_two_sessions(tmp_path)]))
    headline = next(line for line in table.splitlines() if re.match(r"[0-9,]+ requests?: ", line))
    assert re.search(r"cache write [0-9,]+ \([0-9,]+ at 1 h\), cache read ", headline), headline
