"""A read past what the previous counted call left, after responses the endpoint answered with no
token counts (skipped as no call, though they were sent and may have cached): the row names those
lines as its evidence, whatever the provider's usage convention; without them it still says why
the read is past the prediction (aistrad/work's Claude Code on glm-4.7 through a router: such rows
said nothing on Z.AI)."""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

ZERO = {"input_tokens": 0, "output_tokens": 0}


def _session(tmp_path: Path, model: str, first: dict, second: dict, zero: bool) -> list:
    """Two calls of one lane, with a response of all-zero usage between them where ``zero``."""
    t = Transcript(version="2.0.76")
    t.user("scan the repo", "2026-01-04T10:00:00.000Z", root=True)
    t.assistant("req_1", "2026-01-04T10:00:05.000Z", [first], model=model)
    if zero:
        t.user("ok", "2026-01-04T10:00:10.000Z", tool=True)
        t.assistant("req_2", "2026-01-04T10:00:15.000Z", [ZERO], model=model)
    t.user("and now?", "2026-01-04T10:00:20.000Z", tool=True)
    t.assistant("req_3", "2026-01-04T10:00:25.000Z", [second], model=model)
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    assert result.totals.requests == 2
    return result.rows


def test_a_zai_read_past_the_previous_counted_call_names_the_uncounted_response(tmp_path: Path) -> None:
    # Z.AI's usage is not additive (no write count): main gave this row no detail at all.
    rows = _session(tmp_path, "glm-4.7", cc_usage(10_000, 0, 0, 100), cc_usage(300, 0, 20_096, 50), zero=True)
    row = rows[1]
    assert row.provider == "zai" and row.cause is None and not row.read_within
    assert f"read {20_096 - row.expected_cache_read:,} tokens more than the previous counted call left" in row.detail
    assert "a response with no token counts between them (its file's line 4), which was sent and may have cached" in row.detail


def test_a_zai_read_past_the_prediction_without_such_lines_still_says_why(tmp_path: Path) -> None:
    rows = _session(tmp_path, "glm-4.7", cc_usage(10_000, 0, 0, 100), cc_usage(300, 0, 20_096, 50), zero=False)
    row = rows[1]
    assert row.cause is None and not row.read_within
    assert row.detail.startswith(f"read {20_096 - row.predicted_cache_read:,} tokens more than the model predicts")
    assert "no token counts" not in row.detail


def test_an_anthropic_read_past_the_identity_names_the_uncounted_response(tmp_path: Path) -> None:
    # Additive usage: the read is past the previous call's read and write; the zero-usage line
    # between is named rather than the general words.
    rows = _session(tmp_path, "claude-sonnet-4-5-20250929", cc_usage(3, 10_000, 0, 100), cc_usage(3, 200, 14_000, 50), zero=True)
    row = rows[1]
    assert row.provider == "anthropic" and row.cause is None and row.identity is False
    assert row.detail == ("read 4,000 tokens more than the previous request left cached: the log has a response with no "
                          "token counts between them (its file's line 4), which was sent and may have cached")
    rows = _session(tmp_path, "claude-sonnet-4-5-20250929", cc_usage(3, 10_000, 0, 100), cc_usage(3, 200, 14_000, 50), zero=False)
    assert "a call the log does not count" in rows[1].detail


def test_a_sidechains_zero_line_is_not_named_for_the_main_lane(tmp_path: Path) -> None:
    # A subagent (sidechain) answered with no counts between the main lane's two calls: that line
    # is the sidechain's, no evidence for what the main lane read (it was named before).
    model = "claude-sonnet-4-5-20250929"
    main = Transcript(version="2.0.76")
    main.user("scan the repo", "2026-01-04T10:00:00.000Z", root=True)
    main.assistant("req_1", "2026-01-04T10:00:05.000Z", [cc_usage(3, 10_000, 0, 100)], model=model)
    side = Transcript(session="side", version="2.0.76", sidechain=True)
    side.user("look", "2026-01-04T10:00:08.000Z", root=True)
    side.assistant("req_s", "2026-01-04T10:00:09.000Z", [ZERO], model=model)
    for line in side.lines:
        line["sessionId"] = "s1"
    main.user("and now?", "2026-01-04T10:00:20.000Z", tool=True)
    main.assistant("req_3", "2026-01-04T10:00:25.000Z", [cc_usage(3, 200, 14_000, 50)], model=model)
    lines = main.lines[:2] + side.lines + main.lines[2:]
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", lines)])
    row = next(row for row in result.rows if row.lane == "main" and row.line == 6)
    assert "no token counts" not in row.detail
    assert "a call the log does not count" in row.detail


def _resumed(tmp_path: Path) -> tuple[Path, Path]:
    """Session a (two calls) and b, a resumed copy of a's history (counted in a) with a zero
    response and then a call reading past what a's last call left."""
    model = "claude-sonnet-4-5-20250929"
    a = Transcript("s1", version="2.0.76")
    a.user("scan the repo", "2026-01-04T10:00:00.000Z", root=True)
    a.assistant("req_0", "2026-01-04T10:00:02.000Z", [cc_usage(3, 0, 9_000, 100)], model=model)
    a.user("go", "2026-01-04T10:00:03.000Z", tool=True)
    a.assistant("req_1", "2026-01-04T10:00:05.000Z", [cc_usage(3, 1_000, 9_000, 100)], model=model)
    b = Transcript("s2", version="2.0.76")
    b.lines = [{**line, "sessionId": "s2"} for line in a.lines]
    b.last = a.last
    b.user("ok", "2026-01-05T10:00:10.000Z", tool=True)
    b.assistant("req_2", "2026-01-05T10:00:15.000Z", [ZERO], model=model)
    b.user("and now?", "2026-01-05T10:00:20.000Z", tool=True)
    b.assistant("req_3", "2026-01-05T10:00:25.000Z", [cc_usage(3, 200, 14_000, 50)], model=model)
    return write_jsonl(tmp_path / "a.jsonl", a.lines), write_jsonl(tmp_path / "b.jsonl", b.lines)


def test_a_resumed_sessions_zero_line_is_named_whichever_file_is_read_first(tmp_path: Path) -> None:
    # Read [a, b], req_1 is counted in a and b's req_3 follows it from another file: the window
    # starts at req_1's copy in b (before, nothing was named); read [b, a], b counts it.
    a, b = _resumed(tmp_path)
    words = {}
    for order in ((a, b), (b, a)):
        row = next(row for row in run_audit(list(order)).rows if row.file.endswith("b.jsonl") and row.line == 8)
        words[order] = row.detail
    assert words[(a, b)] == words[(b, a)] == (
        "read 4,000 tokens more than the previous request left cached: the log has a response with no "
        "token counts between them (its file's line 6), which was sent and may have cached")


def test_jobs_2_names_the_same_lines_as_jobs_1(tmp_path: Path, capfd, monkeypatch) -> None:
    # The lanes' uncounted lines and the copies' lines reach the workers of a pass in parts.
    from prefixbench.reports.cli import main
    from prefixbench.simulator.price_lookup import Prices
    from prefixbench.workloads.audit import core
    from prefixbench.workloads.audit.core import audit_requests, load_trace

    monkeypatch.setattr(core, "PARALLEL_PASS_AT_LEAST", 0)
    monkeypatch.setattr(core, "LARGEST_PART", 1.0)
    made = []
    parts = core.pass_parts
    monkeypatch.setattr(core, "pass_parts", lambda inputs, jobs: made.append(parts(inputs, jobs)) or made[-1])
    _resumed(tmp_path)
    other = Transcript("s9", version="2.0.76")
    other.user("another repo", "2026-01-04T10:00:00.000Z", root=True)
    other.assistant("req_9", "2026-01-04T10:00:02.000Z", [cc_usage(3, 0, 5_000, 10)], model="claude-opus-4-1-20250805")
    write_jsonl(tmp_path / "c.jsonl", other.lines)
    outputs = []
    for jobs in ("1", "2"):
        code = main(["audit", str(tmp_path), "--quiet", "--format", "json", "--jobs", jobs])
        captured = capfd.readouterr()
        outputs.append((code, captured.out, captured.err))
    assert outputs[0][0] == 0 and outputs[0] == outputs[1]
    requests, summaries = load_trace([tmp_path])
    details = [[row.detail for row in audit_requests(requests, summaries, Prices(None), jobs=jobs).rows] for jobs in (1, 2)]
    assert details[0] == details[1]
    assert any("no token counts between them (its file's line 6)" in detail for detail in details[1])
    assert any(p is not None and len(p) > 1 for p in made)
