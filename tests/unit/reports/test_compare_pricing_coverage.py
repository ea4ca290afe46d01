"""compare of two audits whose dollars cover other requests: the same log audited without and with
``--assume-model`` (its unpriced calls priced on one side only). On the base the totals' and the
lane's cost_usd were judged as a rise (the cline home of auditor63: "FAIL: 2 regressions ... totals
cost_usd $52.2384 $102.0821 +95.4%") though no request cost more: the dollars of a unit whose
unpriced requests differ between BASE and NEW are listed ``not comparable``, never gated, and a
note says how many requests each side left unpriced. Tokens are gated as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
# The Managed Agents event stream's builders, declared once (the --assume-model tests').
from tests.unit.audit.test_assume_model_option import _ev, _span

def _stream(path: Path) -> Path:
    """A Managed Agents stream: two calls on a model no event names (unpriced unless
    --assume-model names it), then one on claude-sonnet-4-5, which a session.updated names."""
    events = [
        _ev("session.status_running", "sevt_r", 0),
        _ev("user.message", "sevt_u1", 0.1, content=[{"type": "text", "text": "go"}]),
        *_span(1, 1, 3, 0, 5000, 100),
        *_span(2, 4, 2, 5000, 300, 50),
        _ev("session.updated", "sevt_up", 7, agent={"model": {"id": "claude-sonnet-4-5"}}),
        _ev("user.message", "sevt_u2", 8, content=[{"type": "text", "text": "more"}]),
        *_span(3, 9, 4, 5300, 200, 20),
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _audit_file(capsys, path: Path, log: Path, *extra: str) -> Path:
    capsys.readouterr()
    assert main(["audit", str(log), *extra, "--format", "json", "--quiet"]) in (0, 1)
    path.write_text(capsys.readouterr().out)
    return path


@pytest.fixture()
def audits(tmp_path: Path, capsys) -> tuple[Path, Path]:
    log = _stream(tmp_path / "events.jsonl")
    plain = _audit_file(capsys, tmp_path / "plain.json", log)
    assumed = _audit_file(capsys, tmp_path / "assumed.json", log, "--assume-model", "claude-opus-4-5")
    before, after = json.loads(plain.read_text())["totals"], json.loads(assumed.read_text())["totals"]
    # The premise: the same 3 requests, 2 of them unpriced in one, none in the other, and the
    # dollars many times higher where more is priced (a "regression" of +1,486% on the base).
    assert (before["requests"], before["unpriced_requests"], after["requests"], after["unpriced_requests"]) == (3, 2, 3, 0)
    assert after["cost_usd"] > 10 * before["cost_usd"]
    return plain, assumed


def test_the_same_log_with_and_without_assume_model_passes_saying_why_dollars_are_not_compared(audits, capsys) -> None:
    plain, assumed = audits
    for base, new, was, now in ((plain, assumed, 2, 0), (assumed, plain, 0, 2)):
        capsys.readouterr()
        assert main(["compare", str(base), str(new)]) == 0
        out = capsys.readouterr().out
        assert out.startswith("PASS: no figure crossed its threshold"), out
        assert (f"note: totals: dollars not comparable: {was} of 3 requests unpriced in BASE, {now} of 3 in NEW "
                "(other requests priced on each side: listed, never gated)") in out
        assert f"note: 1 lane (events.jsonl main): dollars not comparable: {was} of 3 requests unpriced in BASE" in out
        rows = [line for line in out.splitlines() if not line.startswith("note:") and ("cost_usd" in line or "lost_usd" in line)]
        assert len(rows) == 4 and all(row.startswith(" ") and row.split()[-3:-1] == ["not", "comparable"] for row in rows), out
    # The JSON verdict and the Markdown summary say the same.
    capsys.readouterr()
    assert main(["compare", str(plain), str(assumed), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["regressions"] == 0
    assert any(n.startswith("totals: dollars not comparable: 2 of 3 requests unpriced in BASE, 0 of 3 in NEW") for n in report["notes"])
    cost = [c for c in report["changes"] if c["figure"] == "cost_usd" and c["group"] in ("lane", "totals")]
    assert len(cost) == 2 and all(c["comparable"] is False and c["regressed"] is False for c in cost)
    assert main(["compare", str(plain), str(assumed), "--format", "md"]) == 0
    assert "Note: totals: dollars not comparable: 2 of 3 requests unpriced in BASE, 0 of 3 in NEW" in capsys.readouterr().out


def _record(unpriced: int, uncached: int, cost: float, requests: int = 10) -> dict:
    lane = {"file": "s.jsonl", "lane": "main", "requests": requests, "reported_cache_read": 50_000,
            "reported_uncached": uncached, "cost_usd": cost, "lost_usd": 0.1, "hit_ratio": 0.9, "unpriced_requests": unpriced}
    totals = {"requests": requests, "input": uncached, "output": 900, "cache_read": 50_000, "cost_usd": cost,
              "lost_usd": 0.1, "hit_ratio": 0.9, "unpriced_requests": unpriced}
    return {"schema": 6, "requests": [], "lanes": [lane], "causes": [], "totals": totals}


def _compare(tmp_path: Path, capsys, base: dict, new: dict) -> tuple[int, str]:
    (tmp_path / "b.json").write_text(json.dumps(base))
    (tmp_path / "n.json").write_text(json.dumps(new))
    capsys.readouterr()
    status = main(["compare", str(tmp_path / "b.json"), str(tmp_path / "n.json")])
    return status, capsys.readouterr().out


def test_tokens_are_still_gated_where_the_pricing_coverage_changed(tmp_path: Path, capsys) -> None:
    # Uncached up 10% (past uncached=2%) on the lane and the totals: 2 regressions, the dollars not among them.
    status, out = _compare(tmp_path, capsys, _record(4, 1000, 0.5), _record(0, 1100, 1.5))
    assert status == 1 and out.startswith("FAIL: 2 regressions"), out
    assert not [line for line in out.splitlines() if line.startswith("!") and "usd" in line.split()[-3:-1]]


def test_dollars_over_the_same_unpriced_count_are_gated_as_before(tmp_path: Path, capsys) -> None:
    # 4 of 10 unpriced on both sides: the priced requests are the same, +20% dollars is a regression.
    status, out = _compare(tmp_path, capsys, _record(4, 1000, 0.5), _record(4, 1000, 0.6))
    assert status == 1 and out.startswith("FAIL: 2 regressions") and "dollars not comparable" not in out, out
    # A log that grew (20 requests) with the same 4 unpriced: its tokens per request, its dollars
    # per priced request (0.5 over 6 against 1.0 over 16: less).
    status, out = _compare(tmp_path, capsys, _record(4, 1000, 0.5), _record(4, 2000, 1.0, requests=20))
    assert status == 0, out
    assert "its tokens compared per request, its dollars per priced request (6 of 10 priced in BASE, 16 of 20 in NEW)" in out


def test_a_log_that_grew_has_its_dollars_judged_per_priced_request(tmp_path: Path, capsys) -> None:
    """A growing log gains one unpriced request and its priced requests cost 10% more each: on the
    base the unpriced counts differing (4 against 5) turned its dollars off (``not comparable``,
    PASS). Per request the rise hides (0.66 over 11 is 0.6 over 10); per priced request (6 each)
    it is +10%, past usd=5%."""
    status, out = _compare(tmp_path, capsys, _record(4, 1000, 0.6), _record(5, 1100, 0.66, requests=11))
    assert status == 1 and out.startswith("FAIL: 2 regressions"), out
    rows = [line for line in out.splitlines() if line.startswith("!")]
    assert len(rows) == 2 and all("cost_usd" in row and "(+10.0% per priced request)" in row for row in rows), out
    assert ("note: totals: NEW has 10.0% more requests (10 in BASE, 11 in NEW): its tokens compared per request, its "
            "dollars per priced request (6 of 10 priced in BASE, 6 of 11 in NEW)") in out
    assert "not comparable" not in out
    # The same cost per priced request passes; so does a grown log whose dollars fell.
    for cost in (0.6, 0.5):
        status, out = _compare(tmp_path, capsys, _record(4, 1000, 0.6), _record(5, 1100, cost, requests=11))
        assert status == 0 and out.startswith("PASS"), out
    # --per-request off judges nothing per request: dollars over other priced requests are not compared.
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "b.json"), str(tmp_path / "n.json"), "--per-request", "off"]) == 1  # tokens +10%
    out = capsys.readouterr().out
    assert "note: totals: dollars not comparable: 4 of 10 requests unpriced in BASE, 5 of 11 in NEW" in out, out


def test_the_note_says_which_side_priced_none(tmp_path: Path, capsys) -> None:
    """All of BASE's requests unpriced: the note said "(other requests priced on each side ...)"
    though BASE priced none; it says which side priced none."""
    for base, new, words in ((_record(10, 1000, 0.0), _record(0, 1000, 0.5), "10 of 10 requests unpriced in BASE, 0 of 10 in NEW "
                              "(none priced in BASE: NEW's dollars listed, never gated)"),
                             (_record(0, 1000, 0.5), _record(10, 1000, 0.0), "0 of 10 requests unpriced in BASE, 10 of 10 in NEW "
                              "(none priced in NEW: BASE's dollars listed, never gated)")):
        status, out = _compare(tmp_path, capsys, base, new)
        assert status == 0 and f"note: totals: dollars not comparable: {words}" in out, out
        assert f"note: 1 lane (s.jsonl main): dollars not comparable: {words}" in out
        assert "other requests priced" not in out


def test_an_audit_that_does_not_count_unpriced_requests_is_judged_as_before(tmp_path: Path, capsys) -> None:
    # Schema 1 wrote no unpriced_requests: nothing tells the coverage apart, the dollars gate.
    old = _record(0, 1000, 0.5)
    for unit in (*old["lanes"], old["totals"]):
        del unit["unpriced_requests"]
    old["schema"] = 1
    status, out = _compare(tmp_path, capsys, old, _record(0, 1000, 0.6))
    assert status == 1 and out.startswith("FAIL: 2 regressions") and "not comparable" not in out, out


def test_a_grown_log_priced_otherwise_is_not_comparable(audits, tmp_path: Path, capsys) -> None:
    """The log grew by one call and was audited plain, then with --assume-model: 2 of 3 unpriced
    in BASE, 0 of 4 in NEW. On the base its dollars were judged per priced request over
    different sets (1 priced against 4: "+322.0% per priced request", FAIL). The one call gained
    cannot explain 2 requests priced more: the dollars are priced otherwise, not comparable."""
    plain, _ = audits
    log = tmp_path / "events.jsonl"  # grown in place: the same lane on both sides
    log.write_text(log.read_text() + "".join(json.dumps(e) + "\n" for e in _span(4, 12, 3, 5500, 100, 20)))
    grown = _audit_file(capsys, tmp_path / "grown.json", log, "--assume-model", "claude-opus-4-5")
    after = json.loads(grown.read_text())["totals"]
    assert (after["requests"], after["unpriced_requests"]) == (4, 0)
    capsys.readouterr()
    assert main(["compare", str(plain), str(grown)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS"), out
    assert ("note: totals: dollars not comparable: 2 of 3 requests unpriced in BASE, 0 of 4 in NEW "
            "(other requests priced on each side: listed, never gated)") in out
    assert "per priced request" not in out
    rows = [line for line in out.splitlines() if not line.startswith("note:") and "cost_usd" in line]
    assert len(rows) == 2 and all(row.split()[-3:-1] == ["not", "comparable"] for row in rows), out


@pytest.mark.parametrize(("base", "new", "per_priced"), [
    ((10, 4), (11, 5), True),    # one more request, it unpriced: dU 1 <= dR 1
    ((10, 4), (12, 4), True),    # two more, both priced: dU 0
    ((10, 4), (11, 6), False),   # one more, two more unpriced: dU 2 > dR 1
    ((10, 4), (11, 3), False),   # one more, one fewer unpriced: dU -1, an old request priced now
    ((11, 5), (10, 4), True),    # shrank: the one request dropped was the unpriced one
    ((11, 3), (10, 4), False),   # shrank, and a request BASE priced is unpriced in NEW
])
def test_a_grown_or_shrunk_log_is_per_priced_request_only_where_its_new_requests_explain_the_coverage(
        tmp_path: Path, capsys, base: tuple[int, int], new: tuple[int, int], per_priced: bool) -> None:
    (br, bu), (nr, nu) = base, new
    status, out = _compare(tmp_path, capsys, _record(bu, 1000 * br, 0.06 * (br - bu), requests=br),
                           _record(nu, 1000 * nr, 0.06 * (nr - nu), requests=nr))
    assert status == 0, out
    assert ("dollars per priced request" in out) is per_priced, out
    assert ("note: totals: dollars not comparable" in out) is not per_priced, out


def test_unchanged_dollars_judged_per_priced_request_are_shown_as_unchanged_tokens_are(tmp_path: Path, capsys) -> None:
    """auditor63's KaceyBui home, then with an unpriced relayed session added (253 of 253 priced
    in BASE, 253 of 300 in NEW): the note said its dollars were compared per priced request, yet
    the table showed no cost_usd or lost_usd row (unchanged per priced request, so left out) while
    the unchanged cache_write rows were shown, ``= (-15.7% per request)``. Here 2 unpriced requests
    join 10 priced ones whose dollars are the same."""
    status, out = _compare(tmp_path, capsys, _record(0, 1000, 0.6), _record(2, 1000, 0.6, requests=12))
    assert status == 0 and "dollars per priced request (10 of 10 priced in BASE, 10 of 12 in NEW)" in out, out
    rows = [line for line in out.splitlines() if {"cost_usd", "lost_usd"} & set(line.split())]
    assert len(rows) == 4, out  # the totals' and the lane's cost_usd and lost_usd
    assert all(row.rstrip().endswith("= (+0.0% per priced request)  usd=5%") for row in rows), out
    assert "= (-16.7% per request)" in out  # (the unchanged tokens, as before)
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "b.json"), str(tmp_path / "n.json"), "--format", "md"]) == 0
    assert "| = (+0.0% per priced request) |" in capsys.readouterr().out
