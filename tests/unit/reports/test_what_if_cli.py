"""``audit --what-if`` on the command line: the table, the JSON entries, and bad fixes."""

import json

from prefixbench.reports.cli import main
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl


def _log(tmp_path):
    t = Transcript("s1")
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 20_000, 0, 40)])
    t.user("after a pause", "2025-09-03T00:20:00.000Z")
    t.assistant("r2", "2025-09-03T00:20:02.000Z", [cc_usage(3, 20_300, 0, 40)])
    return write_jsonl(tmp_path / "s1.jsonl", t.lines)


def test_json_carries_one_entry_per_fix(tmp_path, capsys):
    log = _log(tmp_path)
    assert main(["audit", str(log), "--format", "json", "--quiet", "--what-if", "ttl-1h,stagger-subagents"]) == 0
    record = json.loads(capsys.readouterr().out)
    one_h, stagger = record["what_if"]
    for entry in record["what_if"]:
        assert {"fix", "applies", "requests_changed", "tokens_to_read", "saved_usd", "assumption"} <= set(entry)
    assert one_h["fix"] == "ttl-1h" and one_h["applies"] and one_h["tokens_to_read"] == 20_000
    assert stagger == {**stagger, "applies": False, "saved_usd": None, "requests_changed": None}


def test_the_table_follows_the_audit(tmp_path, capsys):
    log = _log(tmp_path)
    assert main(["audit", str(log), "--quiet", "--what-if", "ttl-1h,static-system"]) == 0
    out = capsys.readouterr().out
    assert "what if (each fix alone" in out
    assert "static-system: cannot re-simulate: the log has no request bodies" in out
    assert "gaps: 0 <= 5 m, 1 in 5 m-1 h" in out


def test_a_bad_fix_is_exit_2_before_any_log_is_read(tmp_path, capsys):
    missing = tmp_path / "nope.jsonl"  # never read: the option fails first
    assert main(["audit", str(missing), "--what-if", "ttl-2h", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown fix 'ttl-2h'" in err and err.count("\n") == 1
    # The fix list names breakpoints' places as --help and docs/audit.md do (it said "SPEC").
    assert "breakpoints=PLACE+..." in err and "SPEC" not in err


def _unpriced_log(tmp_path):
    """``_log`` on a Claude model the price table has no row for (a newer one): the 20 min gap
    is still one a 1 h TTL keeps warm, whatever the dollars."""
    t = Transcript("s1")
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 20_000, 0, 40)], model="claude-unlisted-9")
    t.user("after a pause", "2025-09-03T00:20:00.000Z")
    t.assistant("r2", "2025-09-03T00:20:02.000Z", [cc_usage(3, 20_300, 0, 40)], model="claude-unlisted-9")
    return write_jsonl(tmp_path / "s1.jsonl", t.lines)


def test_an_unpriced_request_a_fix_changes_is_counted_and_its_dollars_unknown(tmp_path, capsys):
    """A request of a model with no price row still moves tokens into the read under a fix: it is
    counted in requests changed and tokens to read, and the dollars say unknown, not ``$0``
    (before: 0 requests, +0 tokens, ``$0``, as if the fix did nothing)."""
    log = _unpriced_log(tmp_path)
    assert main(["audit", str(log), "--format", "json", "--quiet", "--what-if", "ttl-1h,keep-alive"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [entry["fix"] for entry in record["what_if"]] == ["ttl-1h", "keep-alive"]  # the loop below checks each
    for entry, changed in zip(record["what_if"], (2, 1)):  # ttl-1h writes both with the 1 h TTL
        assert entry["requests_changed"] == changed and entry["tokens_to_read"] == 20_000, entry
        assert entry["unpriced_requests"] == changed and entry["saved_usd"] is None  # no dollar figure, as its lane's (was 0.0: "$0" to a JSON reader)
        assert [c["saved_usd"] for c in entry["changes"] if c["index"] >= 0] == [None] * changed
        assert [lane["saved_usd"] for lane in entry["lanes"]] == [None]  # its one lane: no dollar figure
    assert main(["audit", str(log), "--quiet", "--what-if", "ttl-1h"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("ttl-1h  "))
    assert row.split() == ["ttl-1h", "yes", "2", "+20,000", "unknown", "(unpriced)"], row


def test_ttl_auto_says_it_cannot_choose_a_ttl_for_a_lane_of_no_price(tmp_path, capsys):
    """ttl-auto picks the cheaper TTL per lane; with no price row there is no cheaper one, and it
    said only '1 h on 0 of 1 lane(s)', as if 5 m had been found cheaper."""
    log = _unpriced_log(tmp_path)
    assert main(["audit", str(log), "--format", "json", "--quiet", "--what-if", "ttl-auto"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["what_if"]
    assert "1 lane(s) with no price row among them: 5 m, no price to tell which TTL is cheaper" in entry["detail"], entry["detail"]


def test_report_html_says_unknown_not_cannot_apply_of_a_fix_none_of_whose_changes_is_priced(tmp_path, capsys):
    """report.html's what-if table reads the JSON's saved_usd: null since 2c64173c for a fix that
    applies and changes only unpriced requests, which it read as 'cannot apply'."""
    log = _unpriced_log(tmp_path)
    out = tmp_path / "out"
    assert main(["audit", str(log), "--quiet", "--what-if", "ttl-1h", "--out", str(out)]) == 0
    capsys.readouterr()
    html = (out / "report.html").read_text()
    row = html[html.index('data-fix="ttl-1h"'):]
    row = row[: row.index("</tr>")]
    assert "unknown (unpriced)" in row and "cannot apply" not in row, row


def test_a_fix_the_log_lacks_bodies_for_is_said_as_what_to_change_says_it(tmp_path, capsys):
    """static-system on a transcript (no request bodies) was "cannot apply" in --what-if while what
    to change ranked it "cannot re-simulate" (it may apply to the agent; the log cannot show it).
    --what-if now says "cannot re-simulate" there, in the table, report.html and the JSON's
    needs_bodies, and "cannot apply" only where nothing the fix changes is in the log
    (stagger-subagents without subagent lanes)."""
    log = _log(tmp_path)
    out = tmp_path / "out"
    assert main(["audit", str(log), "--quiet", "--what-if", "static-system,stagger-subagents", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith(("static-system ", "stagger-subagents "))}
    assert rows["static-system"].split()[-2:] == ["cannot", "re-simulate"], rows
    assert rows["stagger-subagents"].split()[-2:] == ["cannot", "apply"], rows
    assert "static-system: cannot re-simulate: the log has no request bodies" in text
    assert "stagger-subagents: cannot apply: the log has no subagent lanes to stagger" in text
    assert "static-system: cannot apply" not in text
    html = (out / "report.html").read_text()
    for fix, words in (("static-system", "cannot re-simulate"), ("stagger-subagents", "cannot apply")):
        row = html[html.index(f'data-fix="{fix}"'):]
        assert words in row[: row.index("</tr>")], row
    assert main(["audit", str(log), "--quiet", "--format", "json", "--what-if", "ttl-1h,static-system,stagger-subagents"]) == 0
    entries = {w["fix"]: w for w in json.loads(capsys.readouterr().out)["what_if"]}
    assert entries["static-system"]["needs_bodies"] is True and entries["stagger-subagents"]["needs_bodies"] is False
    assert "needs_bodies" not in entries["ttl-1h"]  # (only on a fix that does not apply)
