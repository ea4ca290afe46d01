"""A fix whose saving is on calls through a relay (a Codex ``model_provider`` of the user's own
configuration) rests on the relay caching as the maker does, which the log does not show (the
relay notes say its rules are not known): every view says it "may save", the JSON marks it
``inferred`` and its detail says why. The same log sent to OpenAI's own API "saves"."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from tests.unit.audit.fixtures import write_jsonl

REASON = "through the relay 'myrelay', whose cache rules are not known (OpenAI's were applied)"


def _rollout(path: Path, provider: str, day: int = 15) -> Path:
    """Six turns on a growing prompt, the fourth after 20 minutes idle (past OpenAI's in-memory
    retention, inside its 24 h one): it reads only what was cached before the pause expired."""
    start = datetime(2026, 1, day, 10, tzinfo=timezone.utc)
    seconds, lines = 0, [
        {"timestamp": start.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "type": "session_meta",
         "payload": {"id": "s", "cli_version": "0.63.0", "model_provider": provider}},
        {"timestamp": start.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "type": "turn_context",
         "payload": {"model": "gpt-5.1-codex-max", "effort": "high"}},
    ]

    def at(second: int) -> str:
        return (start + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    for n in range(6):
        seconds += 1_200 if n == 3 else 10
        lines += [
            {"timestamp": at(seconds + 1), "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"turn {n}"}]}},
            {"timestamp": at(seconds + 3), "type": "response_item",
             "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
        ]
        prompt = 20_000 + 1_000 * n
        read = 0 if n in (0, 3) else (prompt - 1_000) // 128 * 128
        usage = {"input_tokens": prompt, "cached_input_tokens": read, "output_tokens": 50}
        lines.append({"timestamp": at(seconds + 4), "type": "event_msg",
                      "payload": {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}})
    return write_jsonl(path, lines)


def _views(tmp_path: Path, provider: str, capsys) -> tuple[dict, str, str, str]:
    log = _rollout(tmp_path / provider / "rollout.jsonl", provider)
    assert main(["audit", str(log), "--quiet", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert main(["audit", str(log), "--quiet"]) == 0
    table = capsys.readouterr().out
    out = tmp_path / provider / "out"
    assert main(["audit", str(log), "--quiet", "--out", str(out)]) == 0
    capsys.readouterr()
    return record, table, (out / "audit.md").read_text(encoding="utf-8"), (out / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("provider", ["myrelay", "openai"])
def test_a_fix_saving_on_relayed_calls_may_save_in_every_view(tmp_path: Path, provider: str, capsys) -> None:
    record, table, md, page = _views(tmp_path, provider, capsys)
    saving = [rec for rec in record["recommendations"] if rec["saved_usd"] and rec["saved_usd"] > 0]
    assert saving and saving[0]["fix"] in ("ttl-1h", "ttl-auto")
    relayed = provider == "myrelay"
    for rec in saving:
        assert rec["inferred"] is relayed
        assert (REASON in rec["detail"]) is relayed
        assert ("all it saves is on 1 call(s)" in rec["detail"]) is relayed
    top = saving[0]["fix"]
    row = next(line for line in table.splitlines() if line.startswith(f"1  {top} "))
    assert ("may save $" in row) is relayed and (" saves $" in row) is not relayed
    top_line = next(line for line in table.splitlines() if line.startswith("  the top fix,"))
    assert top_line.startswith(f"  the top fix, {top}, {'may save' if relayed else 'saves'} ")
    for text in (md, page):
        assert ("may save $" in text) is relayed
        assert (REASON in text) is relayed


def test_a_fix_saving_partly_on_relayed_calls_says_how_much(tmp_path: Path, capsys) -> None:
    # (a day apart: the two sessions' caches are not one another's)
    logs = [_rollout(tmp_path / provider / "rollout.jsonl", provider, day) for provider, day in (("myrelay", 15), ("openai", 16))]
    assert main(["audit", *map(str, logs), "--quiet", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    top = record["recommendations"][0]
    assert top["saved_usd"] > 0 and top["inferred"] is True
    # Half of the gross is on the relayed call: said with both figures, not "all".
    said = next(part for part in top["detail"].split("; ") if "it saves gross is on 1 call(s) " + REASON[:27] in part)
    usd = [float(word.strip("$")) for word in said.split() if word.startswith("$")]
    assert len(usd) == 2 and usd[0] * 2 == pytest.approx(usd[1], abs=2e-4)


def test_report_html_hedges_a_relayed_lane_of_a_what_if(tmp_path: Path, capsys) -> None:
    log = _rollout(tmp_path / "myrelay" / "rollout.jsonl", "myrelay")
    out = tmp_path / "out"
    assert main(["audit", str(log), "--quiet", "--what-if", "ttl-1h", "--out", str(out)]) == 0
    capsys.readouterr()
    page = (out / "report.html").read_text(encoding="utf-8")
    lane = page[page.index('data-fix-lane="ttl-1h|'):]
    lane = lane[:lane.index("</tr>")]
    assert 'data-field="saved_usd"' in lane and ">may save $" in lane
    assert "through the relay &#x27;myrelay&#x27;, whose cache rules are not known" in lane
