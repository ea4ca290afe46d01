"""Per-session and per-day roll-ups (AuditResult, the JSON, the tables), the worst requests'
details cut at a word boundary with the whole text in audit.md, and audit.png on the clock."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from prefixbench.reports.audit import DETAIL_WIDTH, audit_figure, audit_html, audit_markdown, audit_table, request_times
from prefixbench.reports.cli import main
from prefixbench.reports.textable import ELLIPSIS
from prefixbench.workloads.audit.core import NO_DAY, run_audit
from prefixbench.workloads.audit.schema import ROLLUP_FIELDS

from .fixtures import Transcript, cc_usage, write_jsonl


def _two_sessions(folder: Path) -> Path:
    """s1 on 3 Sep (a TTL expiry inside it); s2 across midnight into 4 Sep."""
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    t.user("result", "2025-09-03T00:00:03.000Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:05.000Z", [cc_usage(3, 200, 15000, 9)])
    t.user("next", "2025-09-03T00:20:00.000Z")
    t.assistant("r3", "2025-09-03T00:20:03.000Z", [cc_usage(3, 15300, 0, 9)])
    write_jsonl(folder / "s1.jsonl", t.lines)
    u = Transcript("s2")
    u.user("go", "2025-09-03T23:59:00.000Z", root=True)
    u.assistant("q1", "2025-09-03T23:59:02.000Z", [cc_usage(3, 12000, 0, 9)])
    u.user("result", "2025-09-04T00:00:03.000Z", tool=True)
    u.assistant("q2", "2025-09-04T00:00:05.000Z", [cc_usage(3, 100, 12000, 9)])
    write_jsonl(folder / "s2.jsonl", u.lines)
    return folder


def test_roll_ups_add_up_to_the_totals(tmp_path):
    result = run_audit([_two_sessions(tmp_path / "logs")])
    assert [Path(s.key).name for s in result.sessions] == ["s1.jsonl", "s2.jsonl"]
    assert [d.key for d in result.days] == ["2025-09-03", "2025-09-04"]
    for rolls in (result.sessions, result.days):
        assert sum(r.requests for r in rolls) == result.totals.requests == 5
        assert sum((r.cost_usd for r in rolls), Decimal(0)) == result.totals.cost_usd
        assert sum((r.lost_usd for r in rolls), Decimal(0)) == result.totals.lost_usd
        assert sum(r.cache_read for r in rolls) == result.totals.cache_read
    s1, s2 = result.sessions
    assert (s1.first, s1.last) == ("2025-09-03T00:00:00.000Z", "2025-09-03T00:20:00.000Z")  # send times
    assert s1.top_cause == "ttl-expired" and s1.misses == 2 and s1.lost_usd > 0
    day1, day2 = result.days
    assert (day1.requests, day2.requests) == (4, 1)  # s2 crosses midnight: its second request is on the 4th


def test_roll_ups_in_the_json_and_the_tables(tmp_path, capsys):
    logs = _two_sessions(tmp_path / "logs")
    assert main(["audit", str(logs), "--format", "json", "--quiet"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [list(s) for s in record["sessions"]] == [[f.name for f in ROLLUP_FIELDS]] * 2
    assert [d["key"] for d in record["days"]] == ["2025-09-03", "2025-09-04"]
    assert sum(d["requests"] for d in record["days"]) == record["totals"]["requests"]
    result = run_audit([logs])
    table = audit_table(result)
    assert "per session" in table and "per day (UTC)" in table
    assert "2025-09-03 00:00 .. 00:20" in table  # one day: the end says only the time
    assert "2025-09-03 23:59 .. 2025-09-04 00:00" in table


def test_a_request_without_a_timestamp_falls_in_no_day(tmp_path):
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    lines = t.lines
    for line in lines:
        line.pop("timestamp", None)
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", lines)])
    assert [d.key for d in result.days] == [NO_DAY] and result.sessions[0].first is None


def _long_detail_result(tmp_path):
    result = run_audit([_two_sessions(tmp_path / "logs")])
    long = "the cached prefix ended inside message 12 (user, about token 48,000 of the prompt): " + "word " * 40
    rows = tuple(r if r.cause != "ttl-expired" else type(r)(**{**{f: getattr(r, f) for f in r.__struct_fields__}, "detail": long})
                 for r in result.rows)
    return type(result)(**{**{f: getattr(result, f) for f in result.__struct_fields__}, "rows": rows}), long


def test_a_long_detail_is_cut_at_a_word_boundary_and_whole_in_audit_md(tmp_path):
    result, long = _long_detail_result(tmp_path)
    table = audit_table(result)
    (line,) = [line for line in table.splitlines() if "ttl-expired" in line and "s1.jsonl:" in line]
    shown = line[line.index("the cached prefix"):]
    assert shown.endswith(ELLIPSIS) and len(shown) <= DETAIL_WIDTH
    assert long.startswith(shown[: -len(ELLIPSIS)]) and long[len(shown) - 1] == " "  # cut before a space
    # It names where to look without --out too: a user who ran no --out has no audit.md.
    assert "the whole text is in --format json, and in the audit.md --out writes" in table
    md = audit_markdown(result)
    assert "## Details of the worst requests" in md and long.strip() in md


def test_audit_png_draws_on_the_clock_where_requests_have_timestamps(tmp_path):
    result = run_audit([_two_sessions(tmp_path / "logs")])
    assert request_times(result.rows) is not None
    fig = audit_figure(result)
    axes = fig.get_axes()
    assert [ax.get_xlabel() for ax in axes] == ["time (UTC), 2025-09-03", "time (UTC), 2025-09-03 .. 2025-09-04"]
    lo, hi = axes[0].get_xlim()
    # matplotlib's dates are days since 1970: the panel spans s1's 20 minutes
    start = request_times([r for r in result.rows if r.file.endswith("s1.jsonl")])[0] / 86_400_000
    assert lo < start < hi and (hi - lo) * 1440 == pytest.approx(20, rel=0.2)


def test_audit_png_draws_in_request_order_without_timestamps(tmp_path):
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    lines = t.lines
    for line in lines:
        line.pop("timestamp", None)
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", lines)])
    assert request_times(result.rows) is None
    assert [ax.get_xlabel() for ax in audit_figure(result).get_axes()] == ["request (file order)"]


def test_a_fail_line_quotes_the_detail_whole(tmp_path, monkeypatch):
    """main cut the detail at 120 characters, inside a word; the line now quotes it whole."""
    from prefixbench.workloads.audit import gate as gate_module
    from prefixbench.workloads.audit.gate import Gate, violations

    result, long = _long_detail_result(tmp_path)
    (line,) = violations(result, Gate.parse("ttl-expired", None, None))
    assert line.endswith(f"({long})")
    xml = gate_module.junit_xml(result, Gate.parse("ttl-expired", None, None)).decode()
    assert 'message="ttl-expired at line' in xml and long.strip() in xml


def test_files_of_one_name_are_told_apart_in_every_table(tmp_path):
    """OpenHands 0.x sessions (``<id>/events/0.json``) and conversation folders share their file
    names: a table names each by as many of its last parts as tell it from the others (every
    row said ``0.json``), and a file of a name of its own by its name alone."""
    logs = _two_sessions(tmp_path / "logs")
    for name, folder in (("s1.jsonl", "a1"), ("s2.jsonl", "b2")):
        (logs / folder / "events").mkdir(parents=True)
        (logs / name).rename(logs / folder / "events" / "0.json")
    write_jsonl(logs / "solo.jsonl", [])
    result = run_audit([logs])
    table, md = audit_table(result), audit_markdown(result)
    session_rows = table.split("per session")[1].split("per day")[0]
    assert "a1/events/0.json" in session_rows and "b2/events/0.json" in session_rows
    lane_rows = table.split("lanes: reported vs predicted")[1].split("models")[0]
    assert lane_rows.count("a1/events/0.json") == 1 and lane_rows.count("b2/events/0.json") == 1
    assert "a1/events/0.json:" in table.split("worst requests")[1].split("per session")[0]
    assert "a1/events/0.json" in md and "b2/events/0.json" in md
    assert not any(line.startswith("0.json") for line in table.splitlines())
    html = audit_html(result)
    assert html.count(">a1/events/0.json<") >= 2 and html.count(">b2/events/0.json<") >= 2  # sessions, files
    assert "a1/events/0.json · " in html and ">0.json<" not in html


def test_report_html_never_cuts_two_files_to_one_name(tmp_path):
    """report.html cuts a long part to its first 8 characters: two Claude Code project folders
    (``-home-me-work-project-alpha``, ``-home-me-work-project-beta``) holding a session of one
    name, and two Gemini CLI sessions of one day, were each shown as the same cell (``-home-me…/s.jsonl``,
    ``session-….jsonl``); a cut that would merge two files is not made."""
    logs = _two_sessions(tmp_path / "logs")
    for name, folder in (("s1.jsonl", "-home-me-work-project-alpha"), ("s2.jsonl", "-home-me-work-project-beta")):
        (logs / folder).mkdir(parents=True)
        (logs / name).rename(logs / folder / "s.jsonl")
    html = audit_html(run_audit([logs]))
    assert ">-home-me-work-project-alpha/s.jsonl<" in html and ">-home-me-work-project-beta/s.jsonl<" in html
    assert "-home-me…/s.jsonl" not in html
    logs = _two_sessions(tmp_path / "gemini")
    for name, stem in (("s1.jsonl", "session-2026-12-05T06-40-3a1b2c3d"), ("s2.jsonl", "session-2026-12-05T07-10-9f8e7d6c")):
        (logs / name).rename(logs / f"{stem}.jsonl")
    html = audit_html(run_audit([logs]))
    assert ">session-2026-12-05T06-40-3a1b2c3d.jsonl<" in html and ">session-2026-12-05T07-10-9f8e7d6c.jsonl<" in html
    assert "session-….jsonl" not in html


def test_report_html_still_cuts_a_long_name_of_its_own(tmp_path):
    logs = _two_sessions(tmp_path / "logs")
    (logs / "s1.jsonl").rename(logs / "fe5e1c67-0a1b-4c2d-8e3f-405162738495.jsonl")
    html = audit_html(run_audit([logs]))
    assert ">fe5e1c67….jsonl<" in html


def test_audit_png_cuts_a_long_idle_gap_out_of_the_clock(tmp_path):
    # A session resumed the next day (a Gemini CLI session, 93 requests over 38 h, 29 h of them
    # idle) was two slivers at the ends of an empty clock axis: by send order, the gap marked.
    t = Transcript("s1")
    t.user("go", "2025-09-03T10:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T10:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    t.user("more", "2025-09-03T10:01:00.000Z")
    t.assistant("r2", "2025-09-03T10:01:02.000Z", [cc_usage(3, 15100, 15000, 9)])
    t.user("next day", "2025-09-04T09:00:00.000Z")
    t.assistant("r3", "2025-09-04T09:00:02.000Z", [cc_usage(3, 15200, 0, 9)])
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    (ax,) = audit_figure(result).get_axes()
    assert ax.get_xlabel() == "request (send order; dotted: idle 1h or more, the clock cut there), 2025-09-03 .. 2025-09-04"
    assert [text.get_text() for text in ax.texts] == [" idle 22h59m"]
    # report.html's lane chart the same way
    assert "request of the lane, in order (the clock cut at its idle gaps of 1h or more: 22h59m)" in audit_html(result)
    # a short session stays on the clock
    assert [a.get_xlabel() for a in audit_figure(run_audit([_two_sessions(tmp_path / "logs")])).get_axes()][0].startswith("time (UTC)")


def _mooncake(path: Path, second: list[int]) -> Path:
    """Two requests of 2,048 tokens in 512-token blocks: the second's hashes ``second``."""
    path.write_text("".join(json.dumps({"timestamp": t, "input_length": 2048, "output_length": 1, "hash_ids": ids}) + "\n"
                            for t, ids in ((0, [1, 2, 3, 4]), (9, second))))
    return path


def _mooncake_beside_logs_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, dict]:
    """A block-hash trace (no usage) beside two reporting sessions, and their audit.json."""
    trace = _mooncake(tmp_path / "mooncake.jsonl", [1, 2, 3, 4])
    logs = _two_sessions(tmp_path / "logs")
    assert main(["audit", str(trace), str(logs), "--format", "json", "--quiet"]) == 0
    return trace, logs, json.loads(capsys.readouterr().out)


def test_a_roll_up_of_requests_that_report_no_cache_use_shows_no_miss_count(tmp_path, capsys):
    """A block-hash trace reports no cache use: its session and day rows said "misses 0" (and the
    JSON ``cache_read: 0``), a count the log never gave; now ``-`` and null, as "lost unknown"."""
    trace = _mooncake(tmp_path / "mooncake.jsonl", [1, 2, 3, 4])
    logs = _two_sessions(tmp_path / "logs")
    result = run_audit([trace, logs])
    (unseen, *seen), days = result.sessions, result.days
    assert (unseen.misses, unseen.input, unseen.cache_read, unseen.cache_write) == (None, None, None, None)
    assert all(s.misses is not None and s.cache_read is not None for s in seen)
    assert [d.misses for d in days] == [3, 0, None]  # the 3rd and 4th Sep (reported), no timestamp (the trace)
    table = audit_table(result)
    row = next(line for line in table.splitlines() if line.startswith("mooncake.jsonl"))
    assert row.split()[:5] == ["mooncake.jsonl", "no", "timestamp", "2", "1"] and row.split()[5] == "-"
    assert main(["audit", str(trace), str(logs), "--format", "json", "--quiet"]) == 0
    record = json.loads(capsys.readouterr().out)
    session = record["sessions"][0]
    assert (session["misses"], session["input"], session["cache_read"], session["cache_write"]) == (None, None, None, None)
    assert record["days"][0]["misses"] == 3
    page = audit_html(result)
    assert 'data-session="' in page
    markdown = audit_markdown(result)
    assert "| 0 |" not in next(line for line in markdown.splitlines() if "mooncake.jsonl" in line and "no timestamp" in line)


def test_a_lane_or_model_of_requests_that_report_no_usage_shows_no_count(tmp_path, capsys):
    """A block-hash trace reports no usage: its model row said "input 0, output 0, cache read 0,
    cache write 0" and its lane's JSON ``reported_cache_read: 0``, counts the log never gave; now
    ``-`` and null, by the roll-ups' rule (:func:`reported_sum`). A lane that reports keeps its counts."""
    trace = _mooncake(tmp_path / "mooncake.jsonl", [1, 2, 3, 4])
    logs = _two_sessions(tmp_path / "logs")
    result = run_audit([trace, logs])
    unseen = next(lane for lane in result.lanes if lane.file.endswith("mooncake.jsonl"))
    assert (unseen.reported_cache_read, unseen.reported_cache_write, unseen.reported_uncached, unseen.reported_output) == (None,) * 4
    assert all(lane.reported_cache_read is not None for lane in result.lanes if lane is not unseen)
    engine = next(m for m in result.models if m.model == "mooncake")
    assert (engine.input, engine.output, engine.cache_read, engine.cache_write) == (None,) * 4
    assert all(m.cache_read is not None and m.input is not None for m in result.models if m is not engine)
    table = audit_table(result)
    models = table.split("\nmodels\n")[1].split("\n\n")[0]
    row = next(line for line in models.splitlines() if "mooncake" in line)
    assert row.split()[3:7] == ["-", "-", "-", "-"]
    assert main(["audit", str(trace), str(logs), "--format", "json", "--quiet"]) == 0
    record = json.loads(capsys.readouterr().out)
    lane = next(lane for lane in record["lanes"] if lane["file"].endswith("mooncake.jsonl"))
    assert [lane[k] for k in ("reported_cache_read", "reported_cache_write", "reported_uncached", "reported_output")] == [None] * 4
    model = next(m for m in record["models"] if m["model"] == "mooncake")
    assert [model[k] for k in ("input", "output", "cache_read", "cache_write")] == [None] * 4
    assert 'data-lane="' in audit_html(result)


def test_a_group_none_of_whose_requests_is_priced_has_null_lost_in_json(tmp_path, capsys):
    """Its table's *lost* says ``-`` (nothing could be priced); the JSON said ``lost_usd: 0`` and,
    where no request reports its cache use, ``lost_tokens: 0``: now null, as the table."""
    trace, logs, record = _mooncake_beside_logs_json(tmp_path, capsys)
    for section in ("lanes", "models", "files", "sessions", "days"):
        unseen = [r for r in record[section] if "mooncake" in str(r.get("file", r.get("model", r.get("key"))))
                  or r.get("key") == NO_DAY]
        seen = [r for r in record[section] if r not in unseen]
        assert unseen and seen, section
        assert all(r["lost_usd"] is None and r.get("lost_tokens") is None for r in unseen), section
        assert all(r["lost_usd"] is not None for r in seen), section
        assert all(r["lost_tokens"] is not None for r in seen if "lost_tokens" in r), section
    result = run_audit([trace, logs])
    assert "mooncake.jsonl" in audit_html(result)


def test_a_row_none_of_whose_requests_is_priced_has_null_cost_and_split(tmp_path, capsys):
    """Every row of a block-hash trace (no usage: its *paid* says ``no usage``) said ``cost_usd:
    0.0`` in the JSON, its totals too, and the loss split $0.00 in each class while the totals'
    ``lost_usd`` was null: now null, as the table says; a row with priced requests keeps its sum."""
    trace, logs, record = _mooncake_beside_logs_json(tmp_path, capsys)
    for section in ("lanes", "models", "files", "sessions", "days"):
        unpriced = [r for r in record[section] if r["unpriced_requests"] == r["requests"]]
        priced = [r for r in record[section] if r not in unpriced]
        assert unpriced and priced, section
        assert all(r["cost_usd"] is None for r in unpriced), section
        assert all(r["cost_usd"] > 0 for r in priced), section
    assert record["totals"]["cost_usd"] > 0
    assert main(["audit", str(trace), "--format", "json", "--quiet"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["totals"]["cost_usd"] is None and record["totals"]["lost_usd"] is None
    split = record["loss_split"]
    assert [split[f"{name}_usd"] for name in ("lost", "recoverable", "unavoidable", "unknown")] == [None] * 4
    page = audit_html(run_audit([trace]))
    assert "what was paid is unknown" in page


def test_a_roll_up_whose_hit_ratio_is_predicted_says_pred(tmp_path):
    """A block-hash trace's session and day showed its predicted hit ratio ``50.0%`` as if
    reported; now ``pred 50.0%``, with a legend line, and a reported row keeps its bare ratio."""
    trace = _mooncake(tmp_path / "mooncake.jsonl", [1, 2, 3, 4])
    logs = _two_sessions(tmp_path / "logs")
    result = run_audit([trace, logs])
    table = audit_table(result)
    rolls = table.split("per session")[1].split("\nlanes")[0]
    rows = [line for line in rolls.splitlines() if line.startswith(("mooncake.jsonl", "no timestamp"))]
    assert len(rows) == 2 and all("pred 50.0%" in row for row in rows)
    reported = [line for line in table.splitlines() if line.startswith("2025-09-0")]
    assert reported and not any("pred" in row for row in reported)
    assert "pred: no request of the row reports its cache use; its hit ratio is the cache model's prediction" in table
    page = audit_html(result)
    assert "pred 50.0%" in page and "its hit ratio is the cache model&#x27;s prediction" in page
    # a log whose every request reports: no mark, no legend
    alone = audit_table(run_audit([logs])).split("per session")[1].split("\nlanes")[0]
    assert "pred" not in alone


def test_totals_of_an_audit_no_request_of_which_reports_usage_are_null(tmp_path, capsys):
    """A block-hash trace alone: the headline said "usage not reported ... lost unknown" and the
    JSON totals ``input: 0, cache_read: 0, cache_write: 0, cache_write_1h: 0, lost_usd: 0.0``,
    counts and dollars the log never gave; now null (report.html ``-``), by the groups' rules,
    and compare reads such an audit beside itself and beside one that reports."""
    trace = _mooncake(tmp_path / "mooncake.jsonl", [1, 2, 3, 4])
    assert main(["audit", str(trace), "--format", "json", "--quiet"]) == 0
    blind = json.loads(capsys.readouterr().out)["totals"]
    assert [blind[k] for k in ("input", "output", "cache_read", "cache_write", "cache_write_1h", "lost_usd")] == [None] * 6
    assert blind["requests"] == 2
    result = run_audit([trace])
    assert "usage not reported" in audit_table(result)
    page = audit_html(result)
    totals_row = page.split('data-totals="1"')[1].split("</tr>")[0]
    # (5 counts, paid and lost: no request is priced)
    assert totals_row.count("<td>-</td>") == 7 and ">0<" not in totals_row
    # an audit that reports keeps its figures
    logs = _two_sessions(tmp_path / "logs")
    assert main(["audit", str(logs), "--format", "json", "--quiet"]) == 0
    seen = json.loads(capsys.readouterr().out)["totals"]
    assert all(isinstance(seen[k], int) for k in ("input", "output", "cache_read", "cache_write", "cache_write_1h"))
    assert seen["lost_usd"] > 0
    # compare: two such audits, and one beside one that reports
    for name, args in (("blind", [str(trace)]), ("seen", [str(logs)])):
        assert main(["audit", *args, "--format", "json", "--quiet"]) == 0
        (tmp_path / f"{name}.json").write_text(capsys.readouterr().out)
    assert main(["compare", str(tmp_path / "blind.json"), str(tmp_path / "blind.json")]) == 0
    assert main(["compare", str(tmp_path / "blind.json"), str(tmp_path / "seen.json")]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


def test_a_lane_that_reports_no_cache_use_has_the_predicted_hit_ratio(tmp_path, capsys):
    """A block-hash trace's lane had ``hit_ratio: 0.0`` in audit.json (its ratio was taken from
    reported usage alone, and it reports none) and ``n/a`` in the tables: now the predicted one,
    as its session's, day's and the totals' (null ``reported_cache_read`` says so in JSON; the
    tables say ``pred 50.0%`` with the legend line). A lane that reports keeps its reported ratio."""
    trace = _mooncake(tmp_path / "mooncake.jsonl", [1, 2, 3, 4])
    logs = _two_sessions(tmp_path / "logs")
    result = run_audit([trace, logs])
    blind = next(lane for lane in result.lanes if lane.file.endswith("mooncake.jsonl"))
    assert blind.reported_cache_read is None
    assert blind.hit_ratio == pytest.approx(0.5) == result.sessions[0].hit_ratio
    seen = [lane for lane in result.lanes if lane is not blind]
    assert seen and all(lane.hit_ratio == pytest.approx(lane.reported_cache_read / (
        lane.reported_cache_read + lane.reported_cache_write + lane.reported_uncached)) for lane in seen)
    lanes = audit_table(result).split("lanes: reported vs predicted")[1].split("\nmodels")[0]
    row = next(line for line in lanes.splitlines() if line.startswith("mooncake.jsonl"))
    assert "pred 50.0%" in row and "pred" not in "".join(line for line in lanes.splitlines() if line.startswith("s"))
    assert "pred: no request of the row reports its cache use; its hit ratio is the cache model's prediction" in lanes
    assert "pred 50.0%" in audit_markdown(result).split("lanes: reported vs predicted")[1]
    page = audit_html(result).split('id="lanes"')[1]
    assert "pred 50.0%" in page.split("</table>")[0] and "the cache model&#x27;s prediction" in page.split("</table>")[1][:400]
    assert main(["audit", str(trace), "--format", "json", "--quiet"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["lanes"][0]["hit_ratio"] == 0.5 == record["totals"]["hit_ratio"]
    assert record["lanes"][0]["reported_cache_read"] is None and record["totals"]["cache_read"] is None
    # a log whose every lane reports: no mark, no legend
    alone = audit_table(run_audit([logs])).split("lanes: reported vs predicted")[1].split("\nmodels")[0]
    assert not re.search(r"pred \d", alone) and "pred:" not in alone


def test_compare_fails_on_a_block_hash_lane_whose_predicted_hit_ratio_drops(tmp_path, capsys):
    """Two audits of one block-hash trace, the second's later request sharing half the blocks it
    shared before: the lane's predicted hit ratio drops 50% -> 25% and compare names the lane's
    ``hit_ratio`` as well as the totals' (the lane's was 0.0 on both sides, so no lane failed)."""
    trace = _mooncake(tmp_path / "mooncake.jsonl", [1, 2, 3, 4])
    assert main(["audit", str(trace), "--format", "json", "--quiet"]) == 0
    (tmp_path / "base.json").write_text(capsys.readouterr().out)
    _mooncake(trace, [1, 2, 7, 8])
    assert main(["audit", str(trace), "--format", "json", "--quiet"]) == 0
    (tmp_path / "new.json").write_text(capsys.readouterr().out)
    assert json.loads((tmp_path / "new.json").read_text())["lanes"][0]["hit_ratio"] == 0.25
    assert main(["compare", str(tmp_path / "base.json"), str(tmp_path / "new.json")]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 2 regressions" in out
    failed = [line.split() for line in out.splitlines() if line.startswith("!")]
    assert [(row[1], "hit_ratio" in row) for row in failed] == [("lane", True), ("totals", True)]


def _aider_without_cache(path: Path) -> Path:
    """An aider history of a model the audit does not model, its three Tokens lines with no
    cache counts (``cache_reported`` False)."""
    turns = "".join(f"#### step {n}  \n\nDone.\n\n> Tokens: {sent} sent, 120 received.  \n\n"
                    for n, sent in ((1, "2.1k"), (2, "2.4k"), (3, "2.7k")))
    path.write_text("\n# aider chat started at 2025-03-01 10:00:00\n\n> Aider v0.82.0  \n"
                    "> Main model: ollama/qwen2.5-coder:32b with whole edit format  \n\n" + turns)
    return path


def test_a_lane_whose_usage_has_no_cache_field_has_no_hit_ratio(tmp_path, capsys):
    """An aider history without cache counts showed ``pred 48.4%`` on its lane (and its session,
    day and totals) since the predicted ratio stood in for every lane that reports no cache use:
    a prediction for a log that never showed its cache (by stand-in rules for a provider the
    audit does not model). Only a cache trace's lanes (no usage at all) keep it: this one's
    ``hit_ratio`` is null (``-``), as its ``read_within_3pct`` (no request of it reports)."""
    history = _aider_without_cache(tmp_path / ".aider.chat.history.md")
    result = run_audit([history])
    assert [lane.requests for lane in result.lanes] == [3] and result.lanes[0].reported_uncached is not None
    assert result.lanes[0].hit_ratio is None and result.lanes[0].read_within is None
    assert all(r.hit_ratio is None for r in (*result.sessions, *result.days)) and result.totals.hit_ratio is None
    table = audit_table(result)
    assert not re.search(r"pred \d", table) and "pred:" not in table and "hit ratio n/a" in table
    assert "note: no reported cache usage in these logs: there is no hit ratio" in table
    lanes = table.split("lanes: reported vs predicted")[1].split("\nmodels")[0]
    row = next(line for line in lanes.splitlines() if "aider" in line)
    # read ±3% n/a (the file reports no cache use), hit -; paid self-hosted (an Ollama model), as its models row
    assert re.search(r"n/a +- +self-hosted", row)
    assert not re.search(r"pred \d", audit_html(result).split('id="lanes"')[1].split("</table>")[0])
    assert main(["audit", str(history), "--format", "json", "--quiet"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["lanes"][0]["hit_ratio"] is None and record["lanes"][0]["read_within_3pct"] is None
    assert record["totals"]["hit_ratio"] is None
    assert main(["audit", str(history), "--min-hit-ratio", "0.5", "--quiet"]) == 1
    assert "FAIL no hit ratio" in capsys.readouterr().err


def test_a_block_hash_lane_has_no_read_within_count(tmp_path, capsys):
    """A lane no request of which reports its cache use had ``read_within_3pct: 0`` and ``0/2``:
    nothing was compared, so null and ``-``; its predicted hit ratio stays."""
    trace = _mooncake(tmp_path / "mooncake.jsonl", [1, 2, 3, 4])
    result = run_audit([trace])
    assert result.lanes[0].read_within is None and result.lanes[0].hit_ratio == pytest.approx(0.5)
    assert "0/2" not in audit_table(result).split("lanes: reported vs predicted")[1].split("\nmodels")[0]
    assert main(["audit", str(trace), "--format", "json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["lanes"][0]["read_within_3pct"] is None


def test_compare_names_a_predicted_hit_ratio_and_does_not_gate_it_against_a_reported_one(tmp_path, capsys):
    """A block-hash lane's predicted hit ratio was compared as a plain ``hit_ratio`` with a
    reported one (its copy given reported counts): ``! lane ... hit_ratio 50.0% 46.4%`` and exit 1.
    Now a predicted side is named ``hit_ratio (predicted)``, and a predicted against a reported
    one is listed ``not comparable``, never gated; predicted against predicted still gates."""
    trace = _mooncake(tmp_path / "mooncake.jsonl", [1, 2, 3, 4])
    assert main(["audit", str(trace), "--format", "json", "--quiet"]) == 0
    record = json.loads(capsys.readouterr().out)
    (tmp_path / "base.json").write_text(json.dumps(record))
    lane = record["lanes"][0]
    lane.update(reported_cache_read=1900, reported_cache_write=100, reported_uncached=2096, hit_ratio=0.463867)
    (tmp_path / "new.json").write_text(json.dumps(record))
    assert main(["compare", str(tmp_path / "base.json"), str(tmp_path / "new.json")]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "lane" in line and "hit_ratio" in line)
    assert not row.startswith("!") and "hit_ratio (BASE predicted)" in row and "not comparable" in row
    assert main(["compare", str(tmp_path / "base.json"), str(tmp_path / "new.json"), "--format", "json"]) == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert [c["comparable"] for c in changes if c["figure"].startswith("hit_ratio") and c["group"] == "lane"] == [False]
    # predicted against predicted: named so, and gated
    _mooncake(trace, [1, 2, 7, 8])
    assert main(["audit", str(trace), "--format", "json", "--quiet"]) == 0
    (tmp_path / "drop.json").write_text(capsys.readouterr().out)
    assert main(["compare", str(tmp_path / "base.json"), str(tmp_path / "drop.json")]) == 1
    failed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("!")]
    assert len(failed) == 2 and all("hit_ratio (predicted)" in line for line in failed)
