"""A compaction whose request reports no cache use (a chat-completions usage with no cached-tokens
field) is judged ``unknown``: no read, no loss, no warm cost, in the table, in ``--format json``
and from the command line, as the request rows already say of such a request. The base judged
it ``warm`` with its loss $0 (an ``after`` one's ``lost_usd`` 0.0) and its warm cost its own
price, while its detail said there was nothing to judge. A compaction whose request reports its
cache use is judged warm or cold as before."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

from prefixbench.reports.audit import audit_json, audit_table
from prefixbench.reports.cli import main
from prefixbench.reports.compare import compare_text
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import _judge_compaction, run_audit
from prefixbench.workloads.audit.schema import READ_SCHEMAS, SCHEMA_VERSION
from prefixbench.workloads.runs.compare import Thresholds, compare, result_from_json

from .fixtures import write_jsonl

#: 2025-09-04 00:00 UTC: after the price rows used here.
T0 = 1_756_944_000.0
SYSTEM = "You are a careful coding agent. " * 150


def _turn(role: str, n: int) -> dict:
    return {"role": role, "content": f"{role} turn {n} " + "word " * 300}


def chat_capture(path: Path, prompts: tuple[int, ...], bodies: list[list[dict]], cached: list[int | None]) -> Path:
    """An http capture of chat-completions calls to gpt-4o, one per body, with these prompt sizes;
    each usage gives ``prompt_tokens_details.cached_tokens`` where ``cached`` has a count for it,
    else no cache field."""
    records = []
    for n, (messages, prompt, read) in enumerate(zip(bodies, prompts, cached)):
        usage: dict = {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20}
        if read is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": read}
        sent = T0 + 60 * n
        body = {"model": "gpt-4o", "messages": [{"role": "system", "content": SYSTEM}, *messages]}
        response = {"id": f"c{n}", "object": "chat.completion", "model": "gpt-4o",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}], "usage": usage}
        records.append({
            "request": {"timestamp": sent, "method": "POST", "url": "https://api.openai.com/v1/chat/completions", "headers": {}, "body": body},
            "response": {"timestamp": sent + 2, "status_code": 200, "headers": {}, "body": response},
        })
    return write_jsonl(path, records)


def _capture(path: Path, cached: bool, plain: tuple[int, ...] = ()) -> Path:
    """Four chat-completions calls to gpt-4o (:func:`chat_capture`): two turns, a summary call that
    replays the conversation plus its instruction (a compaction call), then one on the new context.
    ``cached``: each usage gives ``prompt_tokens_details.cached_tokens`` (but the calls numbered in
    ``plain``); else no cache field."""
    conversation = [_turn("user", 0), _turn("assistant", 0), _turn("user", 1), _turn("assistant", 1), _turn("user", 2)]
    bodies = [
        conversation[:3],
        conversation,
        [*conversation, {"role": "user", "content": "Write a detailed summary of the conversation so far."}],
        [{"role": "user", "content": "Summary: steps 0 to 2 are done."}, _turn("assistant", 9), _turn("user", 3)],
    ]
    prompts = (1_600, 2_200, 2_220, 1_500)
    return chat_capture(path, prompts, bodies, [prompt * 8 // 10 if cached and n not in plain else None
                                                 for n, prompt in enumerate(prompts)])


def _judge(kind: str, usage: Usage | None):
    request = SimpleNamespace(usage=usage, model="gpt-4o", sent_ms=0, speed=None, upstream=None)
    row = SimpleNamespace(file="s.jsonl", lane="main", line=3, expected_cache_read=2_000, lost_usd=None,
                          cost_usd=None if usage is None else Decimal("0.0057"), cause=None, detail="")
    prices = SimpleNamespace(row=lambda *args: SimpleNamespace())
    return _judge_compaction(kind, request, row, SimpleNamespace(read=1_200), prices)


def test_a_compaction_whose_usage_has_no_cache_field_is_unknown_not_warm() -> None:
    plain = Usage(uncached=2_220, output=20, cache_reported=False)
    for kind, could in (("call", 2_000), ("after", 1_200), ("shrink", 1_200)):
        judged = _judge(kind, plain)
        assert judged.verdict == "unknown"
        assert (judged.cache_read, judged.lost_usd, judged.warm_cost_usd) == (None, None, None)
        # What it could have read stays the cache model's figure; its cost is what it paid.
        assert (judged.expected_cache_read, judged.cost_usd, judged.prompt) == (could, Decimal("0.0057"), 2_220)
        assert "no cache use reported" in judged.detail and "its usage has no cache field" in judged.detail
    nothing = _judge("after", None)
    assert (nothing.verdict, nothing.lost_usd, nothing.warm_cost_usd) == ("unknown", None, None)
    assert "the log has no usage for it" in nothing.detail


def test_a_reported_compaction_is_still_judged() -> None:
    warm = _judge("after", Usage(cache_read=1_200, uncached=1_020, output=20))
    assert warm.verdict == "warm" and warm.cache_read == 1_200


def test_the_audit_of_a_capture_without_cache_fields_says_unknown(tmp_path: Path) -> None:
    result = run_audit([_capture(tmp_path / "plain.jsonl", cached=False)])
    # The call, and (since schema 4) the request after it, which its body shows on a new context.
    call, after = result.compactions
    assert (call.kind, call.line, call.verdict) == ("call", 3, "unknown")
    assert (after.kind, after.line, after.verdict) == ("after", 4, "unknown")
    assert (call.cache_read, call.lost_usd, call.warm_cost_usd) == (None, None, None)
    assert call.expected_cache_read and call.cost_usd
    lines = audit_table(result).splitlines()
    head = next(line for line in lines if line.startswith("compactions ("))
    assert head.startswith("compactions (2: 0 warm, 0 cold, 2 unknown (no cache use reported")
    assert "the cold ones paid" not in head
    row = next(line for line in lines if line.startswith("plain.jsonl:3 "))
    cells = row.split()
    assert cells[3:6] == ["unknown", "-", f"{call.expected_cache_read:,}"] and cells[7] == "?"
    record = json.loads(audit_json(result))["compactions"][0]
    assert (record["verdict"], record["lost_usd"], record["warm_cost_usd"], record["cache_read"]) == ("unknown", None, None, None)


def test_the_same_capture_reporting_its_cache_use_is_judged(tmp_path: Path) -> None:
    result = run_audit([_capture(tmp_path / "cached.jsonl", cached=True)])
    assert [c.verdict for c in result.compactions] and all(c.verdict in ("warm", "cold") for c in result.compactions)
    assert "unknown" not in next(line for line in audit_table(result).splitlines() if line.startswith("compactions ("))


def test_cli_json_writes_an_unknown_compaction_with_null_dollars(tmp_path: Path, capsys) -> None:
    log = _capture(tmp_path / "plain.jsonl", cached=False)
    assert main(["audit", str(log), "--format", "json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == SCHEMA_VERSION == 6
    call, _after = data["compactions"]
    assert (call["kind"], call["verdict"], call["cache_read"], call["lost_usd"], call["warm_cost_usd"]) == (
        "call", "unknown", None, None, None)
    assert call["expected_cache_read"] > 0 and call["cost_usd"] > 0


def test_compare_reads_schema_4_and_a_verdict_gone_unknown_is_no_change(tmp_path: Path) -> None:
    """compare does not read compactions: an audit of schema 3 whose compaction was judged warm
    ($0 lost) against the same audit of schema 4 judging it unknown is no regression nor an
    improvement, and a schema-3 file is still read."""
    new = json.loads(audit_json(run_audit([_capture(tmp_path / "plain.jsonl", cached=False)])))
    old = json.loads(json.dumps(new))
    old["schema"] = 3
    old["compactions"][0].update(verdict="warm", lost_usd=0.0, warm_cost_usd=old["compactions"][0]["cost_usd"])
    assert READ_SCHEMAS[-1] == 6 and 3 in READ_SCHEMAS
    comparison = compare(result_from_json(old, "base"), result_from_json(new, "new"), Thresholds.parse("usd=0%"))
    assert not comparison.failed
    assert not [c for c in comparison.changes if c.base != c.new or c.regressed or "verdict" in c.figure]
    assert "every shared figure is identical" in compare_text(comparison)


def test_the_lost_dollars_gate_counts_an_unknown_compaction_as_unseen_not_as_0(tmp_path: Path, capsys) -> None:
    """Only the compaction call's usage lacks the cache field: it is unknown, and --max-lost-usd,
    which judges the request rows, says it judged the others only (no $0 taken for it)."""
    log = _capture(tmp_path / "mixed.jsonl", cached=True, plain=(2,))
    assert main(["audit", str(log), "--format", "json", "--quiet", "--max-lost-usd", "100"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    (call,) = [c for c in data["compactions"] if c["kind"] == "call"]
    assert (call["verdict"], call["lost_usd"], call["warm_cost_usd"]) == ("unknown", None, None)
    assert data["totals"]["unseen_requests"] == 1
    assert "judged the requests that report their cache use only: 1 of 4" in captured.err
