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
    assert "static-system: cannot apply: the log has no request bodies" in out
    assert "gaps: 0 <= 5 m, 1 in 5 m-1 h" in out


def test_a_bad_fix_is_exit_2_before_any_log_is_read(tmp_path, capsys):
    missing = tmp_path / "nope.jsonl"  # never read: the option fails first
    assert main(["audit", str(missing), "--what-if", "ttl-2h", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown fix 'ttl-2h'" in err and err.count("\n") == 1
