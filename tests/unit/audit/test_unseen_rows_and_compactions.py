"""What a log that reports no cache use cannot tell is never written as a figure.

- A request whose loss nothing tells (its usage has no cache field; a block-hash trace's request
  with no usage) writes ``lost_tokens`` null in ``--format json`` and empty in audit.csv, as its
  ``lost_usd`` already was; the base wrote 0. Schema 4; compare reads 1 to 4.
- A compaction such a log still shows by its prompts (the prompt fell below half of the lane's
  previous one; a body past a compaction call that rewrote the messages) is listed, ``unknown``,
  with what showed it; the base listed none, its shrink and after detection hanging on a cause.
- A request-body log's compaction shows its read as the cache model's prediction (``predicted``,
  ``pred N``); an ``after`` there, judged against that same prediction, is ``unknown``, not
  ``warm``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from prefixbench.reports.audit import audit_csv, audit_json, audit_table
from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.audit.schema import READ_SCHEMAS, SCHEMA_VERSION
from prefixbench.workloads.runs.compare import Thresholds, compare, result_from_json

from .fixtures import write_jsonl
from .test_compaction_unreported import SYSTEM, _capture, _turn, chat_capture


def _chat(path: Path, prompts: tuple[int, ...], cached: bool, bodies: list[list[dict]]) -> Path:
    """An http capture of chat-completions calls to gpt-4o, one per body, with these prompt sizes
    (each reading 1,024 cached tokens where ``cached``, else no cache field)."""
    return chat_capture(path, prompts, bodies, [1_024 if cached else None] * len(prompts))


# --- 1. a request's unknown loss is null, not 0 -------------------------------------------------


def test_cli_json_writes_an_unseen_requests_lost_tokens_null_not_0(tmp_path: Path, capsys) -> None:
    log = _capture(tmp_path / "plain.jsonl", cached=False)
    assert main(["audit", str(log), "--format", "json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == SCHEMA_VERSION == 6
    assert [r["lost_tokens"] for r in data["requests"]] == [None] * 4
    assert [r["lost_usd"] for r in data["requests"]] == [None] * 4
    assert data["totals"]["unseen_requests"] == 4
    (lane,) = data["lanes"]
    assert (lane["lost_tokens"], lane["lost_usd"], lane["unseen_requests"]) == (None, None, 4)


def test_a_mixed_log_keeps_the_reported_requests_figures_and_sums_theirs_only(tmp_path: Path) -> None:
    result = run_audit([_capture(tmp_path / "mixed.jsonl", cached=True, plain=(1,))])
    assert [row.lost_tokens is None for row in result.rows] == [False, True, False, False]
    assert all(isinstance(row.lost_tokens, int) for row in result.rows if row.reported_cache_read is not None)
    record = json.loads(audit_json(result))
    (lane,) = record["lanes"]
    assert lane["unseen_requests"] == 1
    assert lane["lost_tokens"] == sum(r["lost_tokens"] for r in record["requests"] if r["lost_tokens"] is not None)
    rows = list(csv.DictReader(io.StringIO(audit_csv(result))))
    assert [r["lost_tokens"] for r in rows][1] == ""
    assert all(r["lost_tokens"] != "" for k, r in enumerate(rows) if k != 1)


def test_compare_reads_schema_4_against_3_whose_0_was_written_for_an_unknown_loss(tmp_path: Path) -> None:
    new = json.loads(audit_json(run_audit([_capture(tmp_path / "plain.jsonl", cached=False)])))
    old = json.loads(json.dumps(new))
    old["schema"] = 3
    for request in old["requests"]:
        request["lost_tokens"] = 0
    assert READ_SCHEMAS == (1, 2, 3, 4, 5, 6)
    comparison = compare(result_from_json(old, "base"), result_from_json(new, "new"), Thresholds.parse("usd=0%"))
    assert not comparison.failed
    assert not [c for c in comparison.changes if c.base != c.new or c.regressed]


# --- 2. a compaction shown by a prompt that shrank, with no cache use reported -----------------


def test_a_shrink_with_no_cache_field_is_listed_unknown_with_its_evidence(tmp_path: Path) -> None:
    bodies = [[_turn("user", 0)], [_turn("user", 0), _turn("assistant", 0), _turn("user", 1)],
              [{"role": "user", "content": "Summary so far."}, _turn("user", 2)]]
    plain = run_audit([_chat(tmp_path / "plain.jsonl", (1_600, 2_200, 900), cached=False, bodies=bodies)])
    (shrink,) = plain.compactions
    assert (shrink.line, shrink.kind, shrink.verdict) == (3, "shrink", "unknown")
    assert (shrink.cache_read, shrink.lost_usd, shrink.warm_cost_usd, shrink.prompt) == (None, None, None, 900)
    assert "the prompt fell from 2,200 to 900 tokens" in shrink.detail and "no cache use reported" in shrink.detail
    head = next(line for line in audit_table(plain).splitlines() if line.startswith("compactions ("))
    assert head.startswith("compactions (1: 0 warm, 0 cold, 1 unknown (no cache use reported")


def test_an_unknown_compaction_with_no_cached_prefix_known_shows_it_unknown_not_0(tmp_path: Path) -> None:
    # Nothing of the shrink's new context is predicted readable (could 0): as a cold one's, what
    # it could have read is not told (null, `?`), where the base wrote 0 beside a cold one's `?`.
    bodies = [[_turn("user", 0)], [_turn("user", 0), _turn("assistant", 0), _turn("user", 1)],
              [{"role": "user", "content": "Summary so far."}, _turn("user", 2)]]
    result = run_audit([_chat(tmp_path / "plain.jsonl", (1_600, 2_200, 900), cached=False, bodies=bodies)])
    (shrink,) = result.compactions
    assert (shrink.verdict, shrink.expected_cache_read) == ("unknown", None)
    assert json.loads(audit_json(result))["compactions"][0]["expected_cache_read"] is None
    lines = audit_table(result).splitlines()
    head = next(k for k, line in enumerate(lines) if line.startswith("compactions ("))
    assert "readable prefix the log does not tell" not in lines[head]  # (a count of cold ones only)
    assert lines[head + 1].split()[4:9] == ["read", "cached", "before", "paid", "warm"]
    cells = next(line for line in lines[head:] if line.startswith("plain.jsonl:3 ")).split()
    assert [cells[4], cells[5], cells[7]] == ["-", "?", "?"]  # read, cached before, warm cost


def test_a_prompt_that_shrank_a_little_is_no_compaction(tmp_path: Path) -> None:
    bodies = [[_turn("user", 0)], [_turn("user", 0), _turn("assistant", 0), _turn("user", 1)], [_turn("user", 5)]]
    assert not run_audit([_chat(tmp_path / "plain.jsonl", (1_600, 2_200, 1_500), cached=False, bodies=bodies)]).compactions


def test_an_after_shown_by_the_bodies_is_listed_with_no_cache_field(tmp_path: Path) -> None:
    result = run_audit([_capture(tmp_path / "plain.jsonl", cached=False)])
    call, after = result.compactions
    assert (call.kind, after.kind, after.line, after.verdict) == ("call", "after", 4, "unknown")
    assert after.detail.startswith("after the compaction call at line 3 (body-diff:")
    assert (after.lost_usd, after.warm_cost_usd, after.cache_read) == (None, None, None)


# --- 3. a request-body log's compaction: its read predicted, said so ---------------------------


def _bodies(path: Path) -> Path:
    conversation = [_turn("user", 0), _turn("assistant", 0), _turn("user", 1), _turn("assistant", 1), _turn("user", 2)]
    system = {"role": "system", "content": SYSTEM}
    return write_jsonl(path, [
        {"model": "gpt-4o", "messages": [system, *conversation[:3]]},
        {"model": "gpt-4o", "messages": [system, *conversation]},
        {"model": "gpt-4o", "purpose": "compaction",
         "messages": [system, *conversation, {"role": "user", "content": "Write a detailed summary of the conversation so far."}]},
        {"model": "gpt-4o", "messages": [system, {"role": "user", "content": "Summary: steps 0 to 2 are done."}, _turn("user", 3)]},
    ])


def test_a_request_body_logs_compactions_say_their_read_is_predicted(tmp_path: Path) -> None:
    result = run_audit([_bodies(tmp_path / "bodies.jsonl")], fmt="chat-completions")
    by_kind = {c.kind: c for c in result.compactions}
    assert set(by_kind) == {"call", "after"} and all(c.predicted for c in result.compactions)
    after = by_kind["after"]
    # Its read and what it could read are the same prediction: not judged warm.
    assert (after.verdict, after.lost_usd, after.warm_cost_usd) == ("unknown", None, None)
    assert after.cache_read is not None and "predicted read" in after.detail and "not told" in after.detail
    call = by_kind["call"]
    assert call.verdict in ("warm", "cold") and call.detail.startswith("predicted")
    lines = audit_table(result).splitlines()
    head = next(line for line in lines if line.startswith("compactions ("))
    assert "1 unknown (read predicted only" in head
    start = lines.index(head)
    row = next(line for line in lines[start:] if line.startswith("bodies.jsonl:4 "))
    assert f"pred {after.cache_read:,}" in row and " unknown " in row
    assert any(line.startswith("read pred: the cache model's prediction") for line in lines)
    records = json.loads(audit_json(result))["compactions"]
    assert [r["predicted"] for r in records] == [True, True]


def test_a_cold_predicted_compaction_calls_detail_says_predicted(tmp_path: Path) -> None:
    # The compaction call sends another system prompt: predicted to read none of what the main
    # request left cached, cold. Its detail is its row's own ("the compaction call read 0 of
    # ..."), which the base showed as it is, a prediction reading as a reported read.
    conversation = [_turn("user", 0), _turn("assistant", 0), _turn("user", 1), _turn("assistant", 1), _turn("user", 2)]
    system = {"role": "system", "content": SYSTEM}
    other = {"role": "system", "content": "You summarize conversations. " * 40}
    log = write_jsonl(tmp_path / "bodies.jsonl", [
        {"model": "gpt-4o", "messages": [system, *conversation[:3]]},
        {"model": "gpt-4o", "messages": [system, *conversation]},
        {"model": "gpt-4o", "purpose": "compaction",
         "messages": [other, *conversation, {"role": "user", "content": "Write a detailed summary of the conversation so far."}]},
    ])
    result = run_audit([log], fmt="chat-completions")
    (call,) = result.compactions
    assert (call.kind, call.verdict, call.cache_read, call.predicted, call.cause) == ("call", "cold", 0, True, "compaction-miss")
    assert call.detail.startswith("predicted (the cache model on the logged bodies: the log reports no usage): the compaction call read 0")
    row = next(line for line in audit_table(result).splitlines() if line.startswith("bodies.jsonl:3  main  call"))
    assert "pred 0" in row and "predicted (the cache model" in row


def test_a_reported_compaction_is_not_marked_predicted(tmp_path: Path) -> None:
    result = run_audit([_capture(tmp_path / "cached.jsonl", cached=True)])
    assert result.compactions and not any(c.predicted for c in result.compactions)
    assert all(r["predicted"] is False for r in json.loads(audit_json(result))["compactions"])
