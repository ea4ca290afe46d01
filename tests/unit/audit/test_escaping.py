"""Every log string the audit writes is escaped for the medium it lands in: the terminal (the
table, ``--format md``, FAIL lines, what-if, replay's table), Markdown (audit.md's code fence) and
HTML (report.html's embedded data); JSON and CSV carry it unchanged."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.reports.audit import audit_markdown
from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import run_audit

from .fixtures import HOSTILE, Transcript, cc_usage, hostile_logs, write_jsonl

#: What a terminal must never receive from a log: C0 controls but the line feed the writer ends
#: lines with, DEL, C1, the line and paragraph separators, the bidirectional overrides.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: HOSTILE as the terminal and Markdown show it.
SHOWN = "m<!--<script>\\x1b]0;title\\x07\\x1b[2J</script>\\n# heading\\n<img src=x onerror=alert(1)>````\\u2028&amp;"
GATE = ["--fail-on", "model-changed,system-changed,cold-start"]


def _terminal_safe(text: str, where: str) -> None:
    assert not RAW.search(text), (where, RAW.search(text))
    for line in text.splitlines():  # a newline read from a log never starts a line of ours
        assert not line.startswith(("# heading", "<img")), (where, line)


def _fence_holds(markdown: str, where: str) -> None:
    """The table's fence opens once and closes once, after the whole table: no line of the log's
    text closes it early (a closing fence is a line of at least as many backticks, up to 3 spaces in)."""
    lines = markdown.split("\n")
    opening = next(i for i, line in enumerate(lines) if line.startswith("```"))
    fence = lines[opening]
    assert set(fence) == {"`"} and len(fence) > 4, (where, fence)  # longer than the log's run of 4
    closing = [i for i, line in enumerate(lines) if i > opening and re.fullmatch(r" {0,3}`{%d,} *" % len(fence), line)]
    assert closing and lines.index("## Causes") > closing[0], where
    body = "\n".join(lines[opening + 1 : closing[0]])
    assert "worst requests" in body and "calibration per file" in body and SHOWN in body, where  # all of the table inside


def test_a_hostile_log_is_escaped_in_every_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = hostile_logs(tmp_path / "logs")
    out = tmp_path / "out"
    assert main(["audit", str(logs), "--quiet", *GATE, "--what-if", "ttl-1h,static-system", "--out", str(out)]) == 1
    table = capsys.readouterr()
    _terminal_safe(table.out, "table")
    _terminal_safe(table.err, "FAIL lines")
    assert SHOWN in table.out and "FAIL cause model-changed" in table.err and "\\x1b]0;title" in table.err

    assert main(["audit", str(logs), "--quiet", "--format", "md"]) == 0
    markdown = capsys.readouterr()
    _terminal_safe(markdown.out + markdown.err, "--format md")
    _fence_holds(markdown.out, "--format md")
    audit_md = (out / "audit.md").read_text(encoding="utf-8")
    _terminal_safe(audit_md, "audit.md")
    _fence_holds(audit_md, "audit.md")

    assert main(["replay", str(logs / "capture.jsonl"), "--input", "anthropic-capture"]) == 0
    replay = capsys.readouterr()
    _terminal_safe(replay.out + replay.err, "replay")

    # JSON and CSV are data: the name comes back exactly as the log had it.
    assert main(["audit", str(logs), "--quiet", "--format", "json", "--what-if", "ttl-1h,static-system"]) == 0
    printed = capsys.readouterr().out
    assert printed == (out / "audit.json").read_text(encoding="utf-8")
    record = json.loads(printed)
    assert HOSTILE in {r["model"] for r in record["requests"]}
    assert any(HOSTILE[:20] in r["detail"] for r in record["requests"] if r["cause"] == "model-changed")
    with (out / "audit.csv").open(encoding="utf-8", newline="") as handle:
        assert HOSTILE in {row["model"] for row in csv.DictReader(handle)}

    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<!--" not in html and "<img" not in html
    assert html.count("<script") == 2 and html.count("</script") == 2  # the page's own two, nothing else
    data = re.search(r'<script type="application/json" id="prefixbench-data">(.*?)</script>', html, re.S).group(1)
    assert "\u2028" not in data and "&" not in data
    assert json.loads(data)["models"] == record["models"]


def test_the_chart_titles_show_a_file_name_escaped(tmp_path: Path, recwarn: pytest.WarningsRecorder) -> None:
    """audit.png's panel title names the file: a control character in it is drawn as its escape,
    never handed to matplotlib (whose missing-glyph warning would print it raw to the terminal)."""
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    log = write_jsonl(tmp_path / "a\x1b[2Jb.jsonl", t.lines)
    assert main(["audit", str(log), "--quiet", "--out", str(tmp_path / "out")]) == 0
    assert not [w for w in recwarn if "\x1b" in str(w.message)]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_script_json_never_holds_what_ends_or_escapes_a_script(text: str) -> None:
    from prefixbench.reports.html import script_json

    payload = script_json({"model": text, "notes": [text, "<!--<script></script>"]})
    assert not re.search("[<>&\u2028\u2029]", payload)
    assert json.loads(payload) == {"model": text, "notes": [text, "<!--<script></script>"]}


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="`\n x#<", max_size=40))
def test_the_markdown_fence_is_longer_than_any_backtick_run(tmp_path_factory: pytest.TempPathFactory, name: str) -> None:
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)], model="claude" + name)
    log = write_jsonl(tmp_path_factory.mktemp("md") / "s.jsonl", t.lines)
    markdown = audit_markdown(run_audit([log]))
    fence = markdown.split("\n```", 1)[1].split("\n", 1)[0]
    fence = "```" + fence
    assert set(fence) == {"`"}
    longest = max((len(run) for run in re.findall("`+", name)), default=0)
    assert len(fence) == max(3, longest + 1)
    opening = markdown.index(fence + "\n")
    closing = markdown.index("\n" + fence + "\n", opening + 1)
    assert markdown[opening:closing].count("\n") >= 10  # the whole table is inside
    assert "\n" not in name or "\\n" in markdown  # the log's newline shown, never written
