"""The check of a log's own cost fields against the dollars the audit prices its calls at: said
where the two are more than 1% apart, by how much, and why only where the log decides it."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.reports.audit import audit_json, audit_markdown, audit_table
from prefixbench.workloads.audit.core import run_audit

MODEL = "claude-sonnet-4-5-20250929"
INFO = {"providerId": "anthropic", "modelId": MODEL, "mode": "act"}
#: (tokensIn, cacheWrites, cacheReads, tokensOut) of three calls on Anthropic's handler (additive),
#: and each one's list price on claude-sonnet-4.5 ($3 input, $3.75 write, $0.30 read, $15 output).
CALLS = ((4, 9_000, 0, 120), (6, 300, 9_000, 80), (5, 4_000, 2_500, 50))
LIST = [(i * 3 + w * 3.75 + r * 0.30 + o * 15) / 1_000_000 for i, w, r, o in CALLS]


def _task(folder: Path, factor: float, info: dict = INFO) -> Path:
    """A Cline task whose calls' cost fields are ``factor`` times their list price (``info``: its modelInfo)."""
    folder.mkdir()
    entries = [{"ts": 1_761_990_000_000, "type": "say", "say": "task", "text": "go", "modelInfo": info}]
    for n, ((tokens_in, writes, reads, out), dollars) in enumerate(zip(CALLS, LIST)):
        text = {"request": f"r{n}", "tokensIn": tokens_in, "tokensOut": out, "cacheWrites": writes,
                "cacheReads": reads, "cost": round(dollars * factor, 8)}
        entries.append({"ts": 1_761_990_001_000 + 8_000 * n, "type": "say", "say": "api_req_started",
                        "text": json.dumps(text), "modelInfo": info})
        entries.append({"ts": 1_761_990_005_000 + 8_000 * n, "type": "say", "say": "text", "text": "ok", "modelInfo": info})
    (folder / "ui_messages.json").write_text(json.dumps(entries))
    return folder


def _notes(result: object) -> list[str]:
    return [note for f in result.files for note in f.notes]  # type: ignore[attr-defined]


def test_cost_fields_that_agree_with_the_dollars_add_no_check_note(tmp_path: Path) -> None:
    result = run_audit([_task(tmp_path / "t1", 1.004)])
    assert abs(float(result.totals.cost_usd) - sum(LIST)) < 1e-6
    assert any(n.startswith("the log's own cost fields sum to $") for n in _notes(result))
    assert not any(n.startswith("cost check") for n in _notes(result))


def test_cost_fields_more_than_one_percent_off_say_by_how_much_in_table_json_and_markdown(tmp_path: Path) -> None:
    # Before: "the log's own cost fields sum to $X (a check on the dollars here)" alone, whatever X
    # was against the dollars (Roo Code on OpenRouter: $11.5120 against $10.9648, never said).
    result = run_audit([_task(tmp_path / "t1", 1.03)])
    paid = result.totals.cost_usd
    assert abs(float(paid) - sum(LIST)) < 1e-6
    check = [n for n in _notes(result) if n.startswith("cost check")]
    assert check == [f"cost check: the log's own cost fields are 3.0% above the dollars here (${paid:.4f}, the maker's "
                     "list price of the counts read): the log does not say why (a fee, a discount, a price other than "
                     "the list price, or counts read otherwise than the agent billed them): the two disagree, and the log does "
                     "not say which, if either, is the bill"]
    # (Before: "the dollars here are not the bill", where a Cline or pi cost field is the agent's own
    # estimate, no bill either: the note claims neither is.)
    assert "not the bill" not in check[0]
    assert "cost check: the log's own cost fields are 3.0% above" in audit_table(result)
    assert "cost check: the log's own cost fields are 3.0% above" in audit_markdown(result)
    files = json.loads(audit_json(result))["files"]
    assert any(n == check[0] for f in files for n in f["notes"])
    below = run_audit([_task(tmp_path / "t2", 0.9)])
    assert any(n.startswith("cost check: the log's own cost fields are 10.0% below the dollars here") for n in _notes(below))


def test_a_relay_the_log_names_gives_the_fee_as_the_logs_word(tmp_path: Path) -> None:
    """A Cline task on its OpenRouter handler (``providerId`` ``openrouter``): the relay is the
    log's word, so the fee reason says nothing of the cost having told it."""
    info = {"providerId": "openrouter", "modelId": "anthropic/claude-sonnet-4.5", "mode": "act"}
    result = run_audit([_task(tmp_path / "t1", 1.05, info)])
    check = [n for n in _notes(result) if n.startswith("cost check")]
    assert len(check) == 1 and "every call went through OpenRouter, whose cost field" in check[0], check
    assert "told from the cost" not in check[0]
