"""Kilo Code's logs in each of its eras, read by the cline and opencode formats.

Kilo Code (VS Code extension ``kilocode.kilo-code``) began as a fork of Roo Code and Cline; its
newer CLI and extension are a fork of OpenCode. Each fixture below is written from Kilo's own
types (Kilo-Org/kilocode, Kilo-Org/kilo) with values made up for these tests; every figure is
summed by hand from them.

* The extension before 7.x (2025 to early 2026) and the Kilo CLI 0.x (late 2025, the extension's
  core run in Node): task folders ``tasks/<id>/`` under the editor's
  ``globalStorage/kilocode.kilo-code/`` or ``~/.kilocode/cli/global/``. Kilo's ``api_req_started``
  text adds ``usageMissing`` (no usage found for the call, its counts left 0) and
  ``inferenceProvider`` (the upstream that served an OpenRouter-shaped call: Kilo's own gateway,
  handler ``kilocode``, and OpenRouter), beside Roo Code's ``apiProtocol``.
* The Kilo CLI 1.0.x (2026-01-28 to February 2026): OpenCode's JSON storage under
  ``~/.local/share/kilo/storage/``.
* Kilo Code 7.x and the Kilo CLI 7.x: OpenCode's database as ``~/.local/share/kilo/kilo.db``;
  its legacy migration imports old task folders into it as sessions without usage.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import msgspec
import pytest
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from tests.unit.logs.test_opencode import _storage
from tests.unit.logs.test_opencode_db import audit_locked, write_db

TASK = Path(__file__).parent / "fixtures" / "cline" / "kilo-gateway"
CLINE = FORMATS["cline"]
OPENCODE = FORMATS["opencode"]
#: Where the extension and the Kilo CLI 0.x keep a task folder, below the home folder.
EXTENSION_TASKS = ".config/Code/User/globalStorage/kilocode.kilo-code/tasks"
CLI_0_TASKS = ".kilocode/cli/global/tasks"
#: 2026-02-10, after the Kilo CLI's first release (2026-01-28).
KILO_1_0_CREATED = 1_770_681_600_000


# -- the extension before 7.x, and the Kilo CLI 0.x: task folders ----------------------------------


def test_a_kilo_gateway_task_field_by_field() -> None:
    requests, summary = import_file(TASK / "ui_messages.json", CLINE, ImportContext())
    # Kilo's gateway (OpenRouter's handler): apiProtocol openai, tokensIn the whole prompt with
    # the reads inside and an Anthropic upstream's writes folded in (cacheWrites 0: the prompt
    # past the reads read as written; no price for an unnamed model splits off an uncached
    # tail); the Anthropic handler: additive.
    assert [(r.line, r.usage) for r in requests] == [
        (3, Usage(cache_write_5m=14200, output=310)),
        (5, Usage(cache_read=14150, cache_write_5m=15100 - 14150, output=120)),
        (8, Usage(cache_read=15000, cache_write_5m=1200, uncached=6, output=75)),
    ]
    # The upstream Kilo's gateway names (inferenceProvider "Anthropic") serves its calls: the
    # log names no model (main: the gateway's calls were the unknown provider's).
    assert [r.provider for r in requests] == ["anthropic", "anthropic", "anthropic"]
    assert any("inferenceProvider" in note for note in summary.notes)
    # usageMissing: Kilo found no usage for the call (its counts 0): skipped, saying so.
    assert [line for line, _ in summary.skipped] == [6]
    assert "usageMissing" in summary.skipped[0][1]
    assert "$0.1091" in " | ".join(summary.notes)  # 0.0891 + 0.0098 + 0 + 0.0102


@pytest.mark.parametrize("where", [EXTENSION_TASKS, CLI_0_TASKS])
def test_a_kilo_task_folder_is_found_in_a_home_walk(tmp_path: Path, where: str) -> None:
    folder = tmp_path / where / "0b7c6d1e-2f3a-4b5c-8d9e-0f1a2b3c4d5e"
    shutil.copytree(TASK, folder)
    requests, summaries = load_trace([tmp_path])
    assert [s.file for s in summaries] == [str(folder / "ui_messages.json")]  # the other two read with it
    t = run_audit([tmp_path]).totals
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (
        3, 6, 14150 + 15000, 14200 + 950 + 1200, 310 + 120 + 75)


def test_an_upstream_no_provider_claims_stays_unknown(tmp_path: Path) -> None:
    entries = json.loads((TASK / "ui_messages.json").read_text())
    for entry in entries:
        entry["text"] = entry["text"].replace('"Anthropic"', '"Fireworks"')
    (tmp_path / "ui_messages.json").write_text(json.dumps(entries))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.provider for r in requests] == ["unknown", "unknown", "anthropic"]


# -- the Kilo CLI 1.0.x: OpenCode's JSON storage under ~/.local/share/kilo/storage/ ----------------


def _kilo_session(version: str, created: int) -> dict:
    """A Kilo CLI session through Kilo's gateway (providerID ``kilo``): two steps, additive."""
    sid = "ses_kilo01"
    info = {"id": sid, "projectID": "prj_k1", "directory": "/w", "title": "t", "version": version,
            "time": {"created": created, "updated": created + 9000}}
    steps = [{"input": 2400, "output": 300, "reasoning": 0, "cache": {"read": 0, "write": 9100}},
             {"input": 180, "output": 90, "reasoning": 0, "cache": {"read": 11500, "write": 260}}]
    messages = []
    for n, tokens in enumerate(steps):
        uid, aid = f"msg_k{2 * n:02}u", f"msg_k{2 * n + 1:02}a"
        when = created + 1000 * n
        messages.append({"info": {"id": uid, "sessionID": sid, "role": "user", "time": {"created": when}, "agent": "code",
                                  "model": {"providerID": "kilo", "modelID": "anthropic/claude-sonnet-4.5"}},
                         "parts": [{"id": f"prt_k{n}t", "messageID": uid, "sessionID": sid, "type": "text", "text": "go"}]})
        messages.append({"info": {"id": aid, "sessionID": sid, "role": "assistant", "time": {"created": when + 1},
                                  "providerID": "kilo", "modelID": "anthropic/claude-sonnet-4.5", "mode": "code"},
                         "parts": [{"id": f"prt_k{n}s", "messageID": aid, "sessionID": sid, "type": "step-start"},
                                   {"id": f"prt_k{n}f", "messageID": aid, "sessionID": sid, "type": "step-finish",
                                    "tokens": tokens, "cost": 0.01}]})
    return {"info": info, "messages": messages}


def test_a_kilo_cli_1_0_storage_is_read_as_opencode_1_1(tmp_path: Path) -> None:
    root = tmp_path / ".local" / "share" / "kilo" / "storage"
    session = _storage(root, _kilo_session("1.0.21", KILO_1_0_CREATED))
    requests, summaries = load_trace([tmp_path])
    assert [s.file for s in summaries] == [str(session)]
    assert [r.usage for r in requests] == [
        Usage(uncached=2400, cache_write_5m=9100, output=300),
        Usage(uncached=180, cache_read=11500, cache_write_5m=260, output=90),
    ]
    assert {r.provider for r in requests} == {"anthropic"}
    assert any("Kilo CLI 1.0.21 (built on OpenCode 1.1" in note for s in summaries for note in s.notes)


# -- Kilo Code 7.x and the Kilo CLI 7.x: kilo.db ---------------------------------------------------


def _migrated(legacy: dict) -> dict:
    """A task folder as Kilo Code 7.x's legacy migration imports it: session version ``v2``, every
    message's model ``legacy``, each assistant message's tokens 0 and no step parts."""
    sid = "ses_legacy01"
    info = {"id": sid, "projectID": "prj_k1", "directory": "/w", "title": "Add a --dry-run flag", "version": "v2",
            "time": {"created": legacy["ts"], "updated": legacy["ts"]}}
    zero = {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    messages = []
    for n, role in enumerate(("user", "assistant", "user", "assistant")):
        mid = f"msg_legacy{n:02}"
        data = {"id": mid, "sessionID": sid, "role": role, "time": {"created": legacy["ts"] + n}}
        if role == "user":
            data |= {"agent": "code", "model": {"providerID": "legacy", "modelID": "legacy"}}
        else:
            data |= {"providerID": "legacy", "modelID": "legacy", "mode": "code", "agent": "main", "cost": 0,
                     "tokens": zero, "path": {"cwd": "/w", "root": "/w"}, "parentID": f"msg_legacy{n - 1:02}"}
        messages.append({"info": data, "parts": [{"id": f"prt_legacy{n:02}", "messageID": mid, "sessionID": sid,
                                                  "type": "text", "text": "..."}]})
    return {"info": info, "messages": messages}


def test_a_kilo_db_with_migrated_legacy_tasks_counts_only_real_steps(tmp_path: Path) -> None:
    # The migration keeps the old task folder; its copy in kilo.db carries no usage, so the
    # calls are counted once (from the task folder) and the copy's replies are listed as skipped.
    folder = tmp_path / ".local" / "share" / "kilo"
    folder.mkdir(parents=True)
    write_db(folder / "kilo.db", [_kilo_session("7.2.30", 1_777_000_000_000), _migrated({"ts": 1_761_000_000_000})])
    shutil.copytree(TASK, tmp_path / EXTENSION_TASKS / "0b7c6d1e")
    requests, summaries = load_trace([tmp_path])
    by_format = {r.source_format for r in requests}
    assert by_format == {"cline", "opencode"}
    t = run_audit([tmp_path]).totals
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (
        3 + 2, 6 + 2400 + 180, 29150 + 11500, 15150 + 1200 + 9100 + 260, 505 + 300 + 90)
    skipped = [reason for s in summaries for _, reason in s.skipped]
    assert skipped.count("assistant message with no step-finish (no usage recorded)") == 2


def test_a_kilo_channel_database_is_found_in_a_walk(tmp_path: Path) -> None:
    # A build of another channel than latest/beta/prod keeps kilo-<channel>.db beside kilo.db.
    folder = tmp_path / "kilo"
    folder.mkdir()
    write_db(folder / "kilo-dev.db", [_kilo_session("7.3.1", 1_780_000_000_000)])
    t = run_audit([tmp_path]).totals
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (2, 2580, 11500, 9360, 390)


def test_a_locked_kilo_db_names_kilo(tmp_path: Path) -> None:
    db = write_db(tmp_path / "kilo.db", [_kilo_session("7.2.30", 1_777_000_000_000)])
    assert "the Kilo Code database is locked" in audit_locked(db)


@pytest.mark.parametrize("name", ["kilo.db", "kilo-dev.db", "kilo-nightly.db"])
def test_a_locked_kilo_channel_db_names_kilo(name: str) -> None:
    # A build of another channel than latest, beta or prod names its database kilo-<channel>.db
    # (docs/formats.md): locked, it is Kilo Code's too (main named only kilo.db so).
    from prefixbench.workloads.logs.formats.opencode_db import failure

    line = str(failure(Path("/home/u/.local/share/kilo") / name, sqlite3.OperationalError("database is locked")))
    assert "the Kilo Code database is locked" in line, line


def _env_message(ts: int, model: str | None) -> dict:
    """A user message as Roo Code and Kilo Code save it: the environment details end with the
    current mode and, since 2025, the model in force."""
    details = "<environment_details>\n# Current Mode\n<slug>code</slug>\n<name>Code</name>\n"
    if model is not None:
        details += f"<model>{model}</model>\n"
    return {"role": "user", "ts": ts, "content": [{"type": "text", "text": "go"}, {"type": "text", "text": details + "</environment_details>"}]}


def _gateway_call(ts: int, tokens_in: int, reads: int, upstream: str, cost: float = 0.0, tokens_out: int = 50) -> dict:
    text = {"apiProtocol": "openai", "tokensIn": tokens_in, "tokensOut": tokens_out, "cacheWrites": 0, "cacheReads": reads,
            "cost": cost, "usageMissing": False, "inferenceProvider": upstream}
    return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(text)}


def test_the_model_a_call_used_is_read_from_the_environment_details_of_its_user_message(tmp_path: Path) -> None:
    # Kilo's gateway logs no model in ui_messages.json; the history beside names it in each user
    # message's environment details, saved after the call's api_req_started and before its reply
    # (Roo Code announces a call, gathers the details, then streams). A failed stream retried
    # sends no new message, nor does a parent task going on from a subtask's result (saved when
    # the subtask ended, before the call): each used the message saved before it. The model
    # switches mid-task: a lane of its own.
    def reply(ts: int) -> dict:
        return {"ts": ts, "type": "say", "say": "text", "text": "..."}

    ui = [
        _gateway_call(1_768_000_000_000, 14_000, 0, "Google AI Studio"), reply(1_768_000_005_000),
        _gateway_call(1_768_000_010_000, 15_000, 13_800, "Google AI Studio"), reply(1_768_000_015_000),
        {"ts": 1_768_000_020_000, "type": "say", "say": "api_req_started", "text": json.dumps(
            {"apiProtocol": "openai", "tokensIn": 0, "tokensOut": 0, "cacheWrites": 0, "cacheReads": 0, "cost": 0,
             "cancelReason": "streaming_failed", "streamingFailedMessage": "Google AI Studio error"})},
        {"ts": 1_768_000_021_000, "type": "say", "say": "error", "text": "retrying"},
        _gateway_call(1_768_000_030_000, 15_900, 14_900, "Google AI Studio"), reply(1_768_000_035_000),
        {"ts": 1_768_000_039_000, "type": "say", "say": "subtask_result", "text": "done"},
        _gateway_call(1_768_000_040_000, 16_500, 0, "xAI"), reply(1_768_000_045_000),
    ]
    history = [
        _env_message(1_768_000_000_700, "google/gemini-3-flash-preview"),
        {"role": "assistant", "ts": 1_768_000_009_000, "content": [{"type": "text", "text": "a"}]},
        _env_message(1_768_000_010_600, "google/gemini-3-flash-preview"),
        {"role": "assistant", "ts": 1_768_000_012_000, "content": [{"type": "text", "text": "b"}]},
        _env_message(1_768_000_020_500, "google/gemini-3-flash-preview"),
        {"role": "assistant", "ts": 1_768_000_036_000, "content": [{"type": "text", "text": "c"}]},
        # The subtask's result, its details in a tool result (native tool calls), before the call.
        {"role": "user", "ts": 1_768_000_039_500, "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "done"}, *_env_message(0, "x-ai/grok-code-fast-1")["content"][1:]]}]},
        {"role": "assistant", "ts": 1_768_000_046_000, "content": [{"type": "text", "text": "d"}]},
        _env_message(1_768_000_047_000, "google/gemini-3-flash-preview"),  # the next turn's, after the reply
    ]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    requests, summary = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [(r.model, r.provider) for r in requests] == [
        ("google/gemini-3-flash-preview", "gemini"),
        ("google/gemini-3-flash-preview", "gemini"),
        ("google/gemini-3-flash-preview", "gemini"),  # the retry: the message saved before it
        ("x-ai/grok-code-fast-1", "xai"),  # after the subtask: the message saved before it
    ]
    assert len({r.prefix.head for r in requests}) == 2  # (main: one head, model "unknown")
    totals = run_audit([tmp_path]).totals
    assert totals.unpriced_requests == 0  # (main: all 4 unpriced)
    assert (totals.requests, totals.cache_read) == (4, 13_800 + 14_900)


def test_a_call_before_any_message_naming_a_model_keeps_the_fallbacks(tmp_path: Path) -> None:
    # No <model> in the history (Roo Code before it wrote one, or Cline): the model is unknown and
    # the upstream inferenceProvider names is the provider, as before.
    (tmp_path / "ui_messages.json").write_text(json.dumps([_gateway_call(1_768_000_000_000, 14_000, 0, "Anthropic")]))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps([_env_message(1_768_000_000_700, None)]))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [(r.model, r.provider) for r in requests] == [("unknown", "anthropic")]


def test_the_upstream_note_names_only_calls_that_name_no_model(tmp_path: Path) -> None:
    # A DeepSeek model DeepSeek served is named by its environment details: the note saying the
    # calls named no model and were given to their inferenceProvider's upstream was said of it
    # (the model's provider and the upstream's are one). A model no provider claims is the
    # upstream's, and the note says so.
    (tmp_path / "ui_messages.json").write_text(json.dumps([_gateway_call(1_768_000_000_000, 14_000, 0, "DeepSeek")]))
    (tmp_path / "api_conversation_history.json").write_text(
        json.dumps([_env_message(1_768_000_000_700, "deepseek/deepseek-chat-v3.1")]))
    requests, summary = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [(r.model, r.provider) for r in requests] == [("deepseek/deepseek-chat-v3.1", "deepseek")]
    assert not any("naming no model" in note for note in summary.notes)
    for model, named in ((None, "unknown"), ("acme/house-model-1", "acme/house-model-1")):
        (tmp_path / "api_conversation_history.json").write_text(json.dumps([_env_message(1_768_000_000_700, model)]))
        requests, summary = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
        assert [(r.model, r.provider) for r in requests] == [(named, "deepseek")]
        assert any("calls naming no model, or one no provider claims, counted under the upstream" in note
                   and "DeepSeek (deepseek)" in note for note in summary.notes)


def test_kilo_gateway_writes_of_an_anthropic_model_are_its_tokens_in_past_the_reads(tmp_path: Path) -> None:
    # Kilo's gateway reports cacheWrites 0 on an Anthropic model while OpenRouter billed the
    # prompt past the reads as written: its cost says so (claude-sonnet-4.5: 3 input, 0.30 read,
    # 3.75 write, 15 output per 1M). 21,648 of the first call's 21,658 written (10 past the last
    # breakpoint), which the second reads; a cost that does not split: all of it written.
    ui = [
        _gateway_call(1_768_000_000_000, 21_658, 0, "Anthropic", cost=21_648 * 3.75e-6 + 10 * 3e-6 + 50 * 15e-6),
        _gateway_call(1_768_000_010_000, 24_304, 21_648, "Anthropic", cost=21_648 * 0.3e-6 + 2_646 * 3.75e-6 + 10 * 3e-6 + 50 * 15e-6),
        _gateway_call(1_768_000_020_000, 25_000, 24_294, "Anthropic", cost=0.5),
    ]
    history = [_env_message(1_768_000_000_700, "anthropic/claude-sonnet-4.5"),
               _env_message(1_768_000_010_700, "anthropic/claude-sonnet-4.5"),
               _env_message(1_768_000_020_700, "anthropic/claude-sonnet-4.5")]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    requests, summary = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.usage for r in requests] == [  # (main: no write, tokensIn past the reads uncached)
        Usage(cache_write_5m=21_648, uncached=10, output=50),
        Usage(cache_read=21_648, cache_write_5m=2_646, uncached=10, output=50),
        Usage(cache_read=24_294, cache_write_5m=706, output=50),
    ]
    assert any("tokensIn read as written" in note for note in summary.notes)
    rows = run_audit([tmp_path]).rows
    assert [r.read_within for r in rows] == [True, True, True]


def test_kilo_gateway_calls_of_a_model_without_writes_keep_their_reading(tmp_path: Path) -> None:
    # Gemini through the same gateway: no write billed, the prompt past the reads uncached.
    ui = [_gateway_call(1_768_000_000_000, 14_000, 12_000, "Google AI Studio", cost=0.002)]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps([_env_message(1_768_000_000_700, "google/gemini-3-flash-preview")]))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.usage for r in requests] == [Usage(cache_read=12_000, uncached=2_000, output=50)]


def _roo_openrouter_call(ts: int, tokens_in: int, reads: int, cost: float, tokens_out: int = 40) -> dict:
    # Roo Code's OpenRouter handler: the openai protocol, no upstream named, cacheWrites always 0.
    text = {"apiProtocol": "openai", "tokensIn": tokens_in, "tokensOut": tokens_out, "cacheWrites": 0, "cacheReads": reads, "cost": cost}
    return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(text)}


def _roo_task(tmp_path: Path, calls: list[dict], model: str = "anthropic/claude-sonnet-4") -> tuple[list, object]:
    (tmp_path / "ui_messages.json").write_text(json.dumps(calls))
    (tmp_path / "api_conversation_history.json").write_text(
        json.dumps([_env_message(call["ts"] + 300, model) for call in calls]))
    requests, summary = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    return requests, summary


def test_roo_openrouter_writes_of_an_anthropic_model_are_told_from_the_cost(tmp_path: Path) -> None:
    # Roo Code's OpenRouter handler names no upstream and no write, its cost OpenRouter's bill:
    # here a key of the user's own, the upstream's bill (30,000 past the reads written at 3.75,
    # reads at 0.30, output at 15 per 1M) plus OpenRouter's 5% fee. The fee keeps the cost from
    # splitting to whole tokens: all of the prompt past the reads is read as written.
    def billed(uncached: int, reads: int) -> float:
        return 1.05 * (uncached * 3.75e-6 + reads * 0.3e-6 + 40 * 15e-6)

    calls = [_roo_openrouter_call(1_758_800_000_000, 30_000, 0, billed(30_000, 0)),
             _roo_openrouter_call(1_758_800_020_000, 31_200, 30_000, billed(1_200, 30_000))]
    requests, summary = _roo_task(tmp_path, calls)
    assert [r.usage for r in requests] == [  # (main: no write, the prompt past the reads uncached)
        Usage(cache_write_5m=30_000, output=40),
        Usage(cache_read=30_000, cache_write_5m=1_200, output=40),
    ]
    assert any("Roo Code's OpenRouter handler reports no cache writes" in note for note in summary.notes)
    assert [r.read_within for r in run_audit([tmp_path]).rows] == [True, True]


def test_roo_openrouter_costs_that_split_to_whole_tokens_keep_the_tail_uncached(tmp_path: Path) -> None:
    # OpenRouter's own credits (no fee): the cost splits the 30,000 into 29,990 written and a
    # 10-token tail past the last breakpoint.
    cost = 29_990 * 3.75e-6 + 10 * 3e-6 + 40 * 15e-6
    requests, _ = _roo_task(tmp_path, [_roo_openrouter_call(1_758_800_000_000, 30_000, 0, cost)])
    assert [r.usage for r in requests] == [Usage(cache_write_5m=29_990, uncached=10, output=40)]


def test_roo_openai_protocol_costs_that_bill_no_write_keep_their_reading(tmp_path: Path) -> None:
    # A handler to Claude that caches nothing (no breakpoints sent): the cost is the counts at the
    # input price, so no write is read, and a call whose cost says otherwise does not outvote it.
    plain = [_roo_openrouter_call(1_758_800_000_000, 30_000, 0, 30_000 * 3e-6 + 40 * 15e-6),
             _roo_openrouter_call(1_758_800_020_000, 31_200, 0, 31_200 * 3.75e-6 + 40 * 15e-6)]
    requests, summary = _roo_task(tmp_path, plain)
    assert [r.usage for r in requests] == [Usage(uncached=30_000, output=40), Usage(uncached=31_200, output=40)]
    assert not any("Roo Code's OpenRouter handler" in note for note in summary.notes)
    # A model that bills no write (Gemini's implicit cache) is not read so, whatever its cost.
    requests, _ = _roo_task(tmp_path, [_roo_openrouter_call(1_758_800_000_000, 30_000, 20_000, 0.5)],
                            model="google/gemini-2.5-flash")
    assert [r.usage for r in requests] == [Usage(cache_read=20_000, uncached=10_000, output=40)]


def test_a_call_whose_message_the_history_lost_is_named_by_its_own_request(tmp_path: Path) -> None:
    # A restored task: the history lost the calls' messages. Each api_req_started keeps
    # the user message it sent as "request", the environment details at its end; a <model> tag
    # before them (a file the agent read) names nothing.
    def call(ts: int, request: str) -> dict:
        text = {"request": request, "apiProtocol": "openai", "tokensIn": 12_000, "tokensOut": 40, "cacheWrites": 0,
                "cacheReads": 0, "cost": 0.01}
        return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(text)}

    def details(model: str) -> str:
        return f"<environment_details>\n# Current Mode\n<slug>code</slug>\n<model>{model}</model>\n</environment_details>"

    ui = [call(1_758_800_000_000, "[read_file] Result: <model>not/this-one</model>\n" + details("google/gemini-2.5-pro")),
          call(1_758_800_020_000, "[read_file] Result: <model>x-ai/grok-4</model>"),
          call(1_758_800_040_000, "ok\n" + details("x-ai/grok-code-fast-1"))]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    history = [{"role": "assistant", "ts": 1_758_800_045_000, "content": [{"type": "text", "text": "done"}]}]
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.model for r in requests] == ["google/gemini-2.5-pro", "unknown", "x-ai/grok-code-fast-1"]  # (main: all unknown)
    # A message the history kept still names its call.
    (tmp_path / "api_conversation_history.json").write_text(json.dumps([_env_message(1_758_800_040_300, "x-ai/grok-4"), *history]))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.model for r in requests][2] == "x-ai/grok-4"


def test_kilo_gateway_calls_on_grok_read_into_the_reply_the_next_prompt_holds(tmp_path: Path) -> None:
    # xAI keeps a reply after its prompt and Kilo sends the reply back: a next prompt that holds
    # the previous prompt and its whole reply reads both (main: the previous prompt alone, 12.5%
    # short); one shorter than that (the reasoning not sent back) reads the previous prompt.
    ui = [
        _gateway_call(1_768_000_000_000, 14_000, 640, "xAI", tokens_out=2_000),
        _gateway_call(1_768_000_010_000, 16_500, 16_000, "xAI", tokens_out=3_000),
        _gateway_call(1_768_000_020_000, 17_000, 16_448, "xAI"),
    ]
    history = [_env_message(1_768_000_000_700 + k * 10_000, "x-ai/grok-code-fast-1") for k in range(3)]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    rows = run_audit([tmp_path]).rows
    assert [r.provider for r in rows] == ["xai"] * 3
    assert [r.predicted_cache_read for r in rows[1:]] == [16_000 - 5, 16_500 - 5]  # (the unread tail)
    assert [r.read_within for r in rows[1:]] == [True, True]


def test_kilo_gateway_calls_of_an_open_model_an_anthropic_kind_upstream_serves_keep_their_reading(tmp_path: Path) -> None:
    # Llama through Kilo's gateway, served by Amazon Bedrock (an Anthropic-kind provider's rules
    # by the upstream): the model is no Claude, nothing written to fold; the prompt past the reads
    # is uncached (the code before this test read all 14,000 as written). With no model named, the
    # upstream decides, as before.
    ui = [_gateway_call(1_768_000_000_000, 14_000, 0, "Amazon Bedrock", cost=0.01)]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(
        json.dumps([_env_message(1_768_000_000_700, "meta-llama/llama-3.3-70b-instruct")]))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.usage for r in requests] == [Usage(uncached=14_000, output=50)]
    (tmp_path / "api_conversation_history.json").write_text(json.dumps([_env_message(1_768_000_000_700, None)]))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert requests[0].usage is not None and requests[0].usage.cache_write == 14_000


def test_a_malformed_model_tag_names_no_model(tmp_path: Path) -> None:
    # Tags nested, unclosed or empty: no model named, not the text between (the code before this
    # test named the model "x</model>" from the nested ones).
    for tag in ("<model><model>x</model></model>", "<model>x", "<model></model>", "<model>x<br></model>"):
        (tmp_path / "ui_messages.json").write_text(json.dumps([_gateway_call(1_768_000_000_000, 14_000, 0, "Anthropic")]))
        message = _env_message(1_768_000_000_700, None)
        message["content"][1]["text"] = message["content"][1]["text"].replace("</environment_details>", tag + "\n</environment_details>")
        (tmp_path / "api_conversation_history.json").write_text(json.dumps([message]))
        requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
        assert [r.model for r in requests] == ["unknown"], tag


def test_a_model_tag_outside_the_environment_details_names_no_model(tmp_path: Path) -> None:
    # Roo Code before it named the model: environment details without <model>, after a tool result
    # holding a file that has one (an ML project's config). The file names no model the call used
    # (the code before this test took "bert-base" from it).
    (tmp_path / "ui_messages.json").write_text(json.dumps([_gateway_call(1_768_000_000_000, 14_000, 0, "Anthropic")]))
    message = _env_message(1_768_000_000_700, None)
    message["content"].insert(1, {"type": "tool_result", "tool_use_id": "t", "content": "<config>\n<model>bert-base</model>\n</config>"})
    (tmp_path / "api_conversation_history.json").write_text(json.dumps([message]))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.model for r in requests] == ["unknown"]


def test_a_message_older_than_the_call_before_names_no_model_for_a_call(tmp_path: Path) -> None:
    # A Roo Code task restored from elsewhere: its history kept the first user message, then lost
    # those of the calls after it (the handler changed to Anthropic's meanwhile). The first call's
    # message names its model, and the second call, with no message of its own since, re-sent it
    # (a retry); the third call's prompt ended with a message the history no longer has: no model
    # named (main: every call's model unknown; the latest message before any call would name
    # gemini for Claude's calls).
    def reply(ts: int) -> dict:
        return {"ts": ts, "type": "say", "say": "text", "text": "..."}

    anthropic = {"apiProtocol": "anthropic", "tokensIn": 9, "tokensOut": 40, "cacheWrites": 51_031, "cacheReads": 0, "cost": 0.2}
    ui = [
        _gateway_call(1_755_635_332_000, 10_216, 0, "Google AI Studio"), reply(1_755_635_340_000),
        _gateway_call(1_755_635_370_000, 10_660, 0, "Google AI Studio"), reply(1_755_635_380_000),
        {"ts": 1_757_421_066_000, "type": "say", "say": "api_req_started", "text": json.dumps(anthropic)},
        reply(1_757_421_070_000),
    ]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps([_env_message(1_755_635_332_500, "google/gemini-2.5-pro")]))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.model for r in requests] == ["google/gemini-2.5-pro", "google/gemini-2.5-pro", "unknown"]
    assert requests[2].provider == "anthropic"  # the handler's


def test_gemini_3_flash_through_google_ai_studio_reads_on_8000_token_checkpoints_from_16000(tmp_path: Path) -> None:
    # Kilo's gateway names the upstream. Through Google AI Studio gemini-3-flash reads nothing
    # while the previous prompt is under ~16,000 tokens, then the newest ~8,000-token checkpoint
    # inside it, a whole step past the one the lane read (measured, gao51-qw/n8nworkflow.com): 0
    # after a 12,000-token prompt (main: 11,772, the 3,924 grid), 16,000 after 17,000, 16,250 +
    # 8,000 after 25,000 (main: 23,544, over 3% short of 24,300). Vertex AI (upstream "Google")
    # reads on no such grid: to the token (the model's 3,924 set aside: see the Vertex test below).
    calls = [(12_000, 0), (17_000, 0), (25_000, 16_250), (27_000, 24_300), (30_000, 24_280)]
    for upstream, step in (("Google AI Studio", (8_000, 16_000)), ("Google", (1, 0))):
        folder = tmp_path / upstream.replace(" ", "-")
        folder.mkdir()
        start = 1_768_000_000_000
        ui = [_gateway_call(start + 10_000 * k, prompt, read, upstream) for k, (prompt, read) in enumerate(calls)]
        history = [_env_message(start + 10_000 * k + 700, "google/gemini-3-flash-preview") for k in range(len(calls))]
        (folder / "ui_messages.json").write_text(json.dumps(ui))
        (folder / "api_conversation_history.json").write_text(json.dumps(history))
        requests, _ = import_file(folder / "ui_messages.json", CLINE, ImportContext())
        assert {(r.read_step, r.read_offset) for r in requests} == {step}
    result = run_audit([tmp_path / "Google-AI-Studio"])
    assert [r.predicted_cache_read for r in result.rows] == [0, 0, 16_000, 24_250, 24_300]
    assert all(r.read_within for r in result.rows)
    assert any("8,000-token grid from 16,000 (5 request(s))" in note for note in result.notes)
    vertex = run_audit([tmp_path / "Google"]).rows
    assert [r.predicted_cache_read for r in vertex][:3] == [0, 12_000, 17_000]


def _vertex_flash_task(tmp_path: Path) -> tuple[list, object]:
    """A Kilo task of three gemini-3-flash calls through Vertex AI (upstream "Google"): 40,000,
    42,000 and 44,000-token prompts reading 0, 38,700 and 40,800; the task's import."""
    calls = [(40_000, 0), (42_000, 38_700), (44_000, 40_800)]
    start = 1_768_000_000_000
    ui = [_gateway_call(start + 10_000 * k, prompt, read, "Google") for k, (prompt, read) in enumerate(calls)]
    history = [_env_message(start + 10_000 * k + 700, "google/gemini-3-flash-preview") for k in range(len(calls))]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    return import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())


def test_gemini_3_flash_through_vertex_reads_to_the_token_trailing_the_previous_prompt(tmp_path: Path) -> None:
    # Through Vertex AI (Kilo's gateway's upstream "Google") gemini-3-flash reads on no grid, short
    # of the previous prompt by a varying amount (measured, gao51-qw/n8nworkflow.com: 116 calls): a
    # read follows the lane's last one and moves up to the previous prompt less 1,000. Here 41,000
    # after a 42,000-token prompt (the newest 3,924-token checkpoint, 39,240, is over 3% short of
    # 40,800); AI Studio keeps its grid.
    requests, _ = _vertex_flash_task(tmp_path)
    assert {(r.read_step, r.read_offset, r.read_lag, r.upstream) for r in requests} == {(1, 0, 1_000, "Google")}
    result = run_audit([tmp_path])
    assert [r.predicted_cache_read for r in result.rows] == [0, 40_000, 41_000]
    assert [r.read_within for r in result.rows] == [True, False, True]
    # The note counts the predictions the lag moved (the third), not every call through Vertex.
    assert any(note.startswith("gemini reads of google/gemini-3-flash-preview through the upstream Google predicted to the "
                               "token (1 prediction(s) its lag moved)") and "previous prompt less 1,000 tokens" in note
               for note in result.notes)
    # --no-follow-reads: the lag never ran, so no note claims it.
    unfollowed = run_audit([tmp_path], follow_reads=False)
    assert [r.predicted_cache_read for r in unfollowed.rows] == [0, 40_000, 42_000]
    assert not any("its lag moved" in note or "less 1,000 tokens" in note for note in unfollowed.notes)


def test_read_step_one_alone_does_not_turn_the_vertex_lag_on(tmp_path: Path) -> None:
    # --read-step sets plain steps: it clears the lag an upstream gave, and a request whose reader
    # set no lag gets none from the step alone.
    from prefixbench.workloads.audit.core import assume_read_steps
    requests, summary = _vertex_flash_task(tmp_path)
    for unset in (False, True):  # the Kilo reader's requests, then as from a reader that sets no step
        given = [msgspec.structs.replace(r, read_step=0, read_lag=0) for r in requests] if unset else requests
        stepped = assume_read_steps(list(given), {"gemini": 1})
        result = run_audit([tmp_path], trace=(stepped, [summary]))
        # The third call follows the lane's last read (38,700) and moves up no further.
        assert [r.predicted_cache_read for r in result.rows] == [0, 40_000, 38_700]
        assert not any("previous prompt less" in note for note in result.notes)
        assert {(r.read_step, r.read_lag) for r in stepped} == {(1, 0)}


def test_only_vertex_s_gemini_3_flash_reads_trail_the_previous_prompt() -> None:
    # The upstream as the gateway names it, any case; not AI Studio (its grid), not Flash-Lite
    # (unmeasured), not a log that names no upstream.
    from prefixbench.simulator.providers.gemini import RULES
    # One lookup gives the step and the lag: step 1, trailing by 1,000 (the smallest lag of the
    # even half's tie, chosen in advance).
    assert RULES.upstream_grid(" GOOGLE ", "google/gemini-3-flash-preview") == (1, 0, 1_000)
    assert RULES.upstream_grid("Google AI Studio", "google/gemini-3-flash-preview") == (8_000, 16_000, 0)
    assert RULES.upstream_grid("Google", "google/gemini-3.1-flash-lite-preview") == (0, 0, 0)
    assert RULES.upstream_grid(None, "google/gemini-3-flash-preview") == (0, 0, 0)


def test_an_ai_studio_read_moves_up_whole_steps_from_the_checkpoint_the_lane_read(tmp_path: Path) -> None:
    # A long lane's checkpoints fall behind 16,000 + k x 8,000 as its prompts grow (76,650 then
    # 84,788 in the sample, not 80,000): a read stays at 76,400 while the previous prompt holds
    # less than a step past it (the grid point 80,000 inside 81,000 is not read), then moves up
    # by one step, to 84,400 (grid: 80,000, over 3% short of 84,350).
    calls = [(80_000, 0), (81_000, 76_400), (85_500, 76_380), (86_000, 84_350)]
    start = 1_768_000_000_000
    ui = [_gateway_call(start + 10_000 * k, prompt, read, "Google AI Studio") for k, (prompt, read) in enumerate(calls)]
    history = [_env_message(start + 10_000 * k + 700, "google/gemini-3-flash-preview") for k in range(len(calls))]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    rows = run_audit([tmp_path]).rows
    assert [r.predicted_cache_read for r in rows][2:] == [76_400, 84_380]
    assert [r.read_within for r in rows][2:] == [True, True]


def test_each_upstream_the_gateway_names_is_a_cache_of_its_own(tmp_path: Path) -> None:
    # Kilo's gateway sends one model to Vertex AI (upstream "Google") then to Google AI Studio: AI
    # Studio holds nothing Vertex cached, so its first call reads 0 (as gao51-qw/n8nworkflow.com's
    # do), its miss the gateway's routing; before, the lane's chain was read across upstreams
    # (predicted 20,000 here, and 24,000 back on Vertex). Back on Vertex, the lane reads what Vertex itself cached: the
    # second call's prompt (Vertex reads to the token), not the third's.
    calls = [(20_000, 0, "Google"), (22_000, 19_620, "Google"), (24_000, 0, "Google AI Studio"), (26_000, 21_800, "Google")]
    start = 1_768_000_000_000
    ui = [_gateway_call(start + 10_000 * k, prompt, read, upstream) for k, (prompt, read, upstream) in enumerate(calls)]
    history = [_env_message(start + 10_000 * k + 700, "google/gemini-3-flash-preview") for k in range(len(calls))]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.upstream for r in requests] == ["Google", "Google", "Google AI Studio", "Google"]
    rows = run_audit([tmp_path]).rows
    switched = rows[2]
    assert (switched.predicted_cache_read, switched.read_within, switched.cause) == (0, True, "provider-best-effort")
    assert "routed this request to Google AI Studio, the lane's previous one to Google" in switched.detail
    assert [(r.predicted_cache_read, r.read_within) for r in rows[1::2]] == [(20_000, True), (22_000, True)]


def _gemini_then_grok(tmp_path: Path) -> None:
    """A Kilo task in ``tmp_path``: two calls of Gemini on Vertex (upstream Google), then one of
    grok on xAI, through the gateway."""
    calls = [(20_000, 0, "Google", "google/gemini-3-flash-preview"), (22_000, 19_620, "Google", "google/gemini-3-flash-preview"),
             (24_000, 0, "xAI", "x-ai/grok-code-fast-1")]
    start = 1_768_000_000_000
    ui = [_gateway_call(start + 10_000 * k, prompt, read, upstream) for k, (prompt, read, upstream, _) in enumerate(calls)]
    history = [_env_message(start + 10_000 * k + 700, model) for k, (_, _, _, model) in enumerate(calls)]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))


def test_a_switch_of_model_and_upstream_is_put_down_to_the_model(tmp_path: Path) -> None:
    # Another model served by another upstream (Gemini on Vertex, then grok on xAI): the model
    # change says why, as it did before upstreams were told apart (the upstream rule is for one
    # model routed to another server).
    _gemini_then_grok(tmp_path)
    last = run_audit([tmp_path]).rows[-1]
    assert (last.predicted_cache_read, last.cause) == (0, "model-changed")


def test_pin_model_says_a_lane_switched_models_across_providers_not_that_it_kept_one(tmp_path: Path) -> None:
    # A real Kilo task (gao51-qw/n8nworkflow.com) moved its lane from Claude to Grok to Gemini
    # through the gateway; pin-model, which pins within a provider, said before "every main and
    # subagent lane sends all its requests to one model", next to the model-changed misses it
    # was listed for.
    from prefixbench.workloads.audit.whatif import what_if
    from prefixbench.workloads.audit.core import load_trace

    _gemini_then_grok(tmp_path)
    requests, summaries = load_trace([tmp_path])
    [w] = what_if(list(requests), list(summaries), ["pin-model"])
    assert not w.applies and "one model, but" not in w.detail.split(";")[0]
    assert "1 lane(s) switch models only across providers (google/gemini-3-flash-preview -> x-ai/grok-code-fast-1)" in w.detail


#: 2026-01-12, a time in milliseconds as the extension writes it.
T0 = 1_768_209_000_000


def _turn_after_thinking(folder: Path, model: str, thought: bool = True) -> Path:
    """A task on Anthropic's handler: a first call that thinks before a tool call (20,003 tokens of
    prompt), a second that answers (1,000 more), then the user's next message and the call on it.
    The history saves each call's user message before its reply's first entry, the reply after."""
    info = {"providerId": "anthropic", "modelId": model, "mode": "act"}

    def call(ts: int, uncached: int, write: int, read: int) -> dict:
        text = {"tokensIn": uncached, "tokensOut": 50, "cacheWrites": write, "cacheReads": read, "cost": 0.01}
        return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(text), "modelInfo": info}

    ui = [{"ts": T0 + 1_000, "type": "say", "say": "task", "text": "go"}, call(T0 + 1_100, 3, 20_000, 0),
          {"ts": T0 + 1_200, "type": "say", "say": "reasoning", "text": "..."}, call(T0 + 2_000, 3, 1_000, 20_000),
          {"ts": T0 + 2_100, "type": "say", "say": "text", "text": "done"}, {"ts": T0 + 3_000, "type": "say", "say": "user_feedback", "text": "more"},
          call(T0 + 3_100, 3, 1_500, 20_003), {"ts": T0 + 3_200, "type": "say", "say": "text", "text": "ok"}]
    first = [{"type": "thinking", "thinking": "...", "signature": "s"}] if thought else []
    history = [{"role": "user", "ts": T0 + 1_050, "content": [{"type": "text", "text": "go"}]},
               {"role": "assistant", "ts": T0 + 1_500, "content": [*first, {"type": "tool_use", "id": "t", "name": "read_file", "input": {}}]},
               {"role": "user", "ts": T0 + 1_600, "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
               {"role": "assistant", "ts": T0 + 2_500, "content": [{"type": "text", "text": "done"}]},
               {"role": "user", "ts": T0 + 3_050, "content": [{"type": "text", "text": "more"}]}]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    return folder


def test_a_user_turn_on_a_model_that_drops_earlier_thinking_reads_up_to_where_it_stood(tmp_path: Path) -> None:
    """A user turn on claude-sonnet-4-5 (and Anthropic's other models before Opus 4.5 and Sonnet
    4.6) drops the previous turn's thinking: the cached prefix ends after the prompt of that turn's
    first call that thought (9 of gao51-qw/n8nworkflow.com's Kilo calls on claude-sonnet-4.5).
    Failed before: 21,000 predicted (what the previous call left cached)."""
    def predicted(model: str, thought: bool = True) -> int:
        folder = _turn_after_thinking(tmp_path / f"{model}-{thought}", model, thought)
        return run_audit([folder]).rows[2].predicted_cache_read

    assert predicted("claude-sonnet-4-5-20250929") == 20_003
    assert predicted("claude-sonnet-4-6") == 21_000
    assert predicted("claude-sonnet-4-5-20250929", thought=False) == 21_000


def test_gemini_2_5_pro_through_openrouter_reads_on_4080_token_checkpoints(tmp_path: Path) -> None:
    # Roo Code on OpenRouter, google/gemini-2.5-pro, no upstream named (jsboige/jsboige-mcp-servers,
    # 2025-08): reads on multiples of ~4,080, the newest inside the lane's previous prompt. After
    # a 17,516-token prompt 16,324 is read (main: that prompt less the 2.5 Pro lag, 16,516); after
    # 20,331 (a call that read 0), 16,315 (main: 19,331, over 3% above). Gemini CLI's
    # gemini-2.5-pro keeps reading to the token.
    calls = [(13_000, 0), (17_516, 12_240), (20_207, 16_324), (20_331, 0), (20_961, 16_315)]
    start = 1_755_635_332_000
    ui = [{"ts": start + 30_000 * k, "type": "say", "say": "api_req_started",
           "text": json.dumps({"apiProtocol": "openai", "tokensIn": prompt, "tokensOut": 50, "cacheWrites": 0,
                               "cacheReads": read, "cost": 0.0})} for k, (prompt, read) in enumerate(calls)]
    history = [_env_message(start + 30_000 * k + 700, "google/gemini-2.5-pro") for k in range(len(calls))]
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    (tmp_path / "api_conversation_history.json").write_text(json.dumps(history))
    rows = run_audit([tmp_path]).rows
    assert [r.predicted_cache_read for r in rows][2::2] == [16_320, 16_324]
    assert [r.read_within for r in rows][2::2] == [True, True]


@pytest.mark.parametrize(("folder", "agent"), [("kilo", "Kilo Code"), ("opencode", "OpenCode")])
def test_a_locked_opencode_channel_db_names_its_agent(folder: str, agent: str) -> None:
    # OpenCode 1.18 names a build of another channel's database opencode-<channel>.db; Kilo 7.7
    # keeps reading such a file an earlier build left in its own folder (~/.local/share/kilo).
    from prefixbench.workloads.logs.formats.opencode_db import failure

    line = str(failure(Path("/home/u/.local/share") / folder / "opencode-dev.db", sqlite3.OperationalError("database is locked")))
    assert f"the {agent} database is locked" in line, line


# -- Kilo Code 7 told apart from OpenCode by what its files say ------------------------------------
# Kilo 7 (Kilo-Org/kilocode, built on OpenCode) stores OpenCode's records under its own name: its
# session ``version`` is Kilo's release (7.x, a number no OpenCode release has), its database is
# ``kilo.db`` in ``~/.local/share/kilo`` (Global.Path.data, app "kilo"). Its config schema keeps
# OpenCode's ``compaction`` and has neither ``warming`` nor a cache lifetime: the advice names
# Kilo Code 7 and says so, rather than OpenCode's settings.

from prefixbench.workloads.logs.formats.opencode import KILO_7, kilo_7_evidence  # noqa: E402


@pytest.mark.parametrize(("name", "versions", "database", "said"), [
    ("s.json", ["7.2.30"], False, "the session names Kilo's own release 7.2.30"),
    ("s.json", ["1.14.2", "7.0.4"], False, "the session names Kilo's own release 7.0.4"),
    ("kilo.db", ["1.14.2"], True, "the database is kilo.db"),
    ("kilo-dev.db", [None], True, "the database is kilo-dev.db"),
    ("opencode.db", ["7.7.9"], True, "the session names Kilo's own release 7.7.9"),
])
def test_kilo_7_is_told_by_its_version_or_its_database(name: str, versions: list, database: bool, said: str) -> None:
    evidence = kilo_7_evidence(Path("/home/u/anything") / name, versions, database)
    assert evidence.startswith(f"{KILO_7}: ") and said in evidence, evidence


@pytest.mark.parametrize(("path", "versions", "database"), [
    ("/home/u/.local/share/opencode/storage/session/prj/s.json", ["1.14.2"], False),
    # The Kilo CLI 1.0.x shares its numbers with OpenCode 1.0.x, and a folder's name is the user's.
    ("/home/u/.local/share/kilo/storage/session/prj/s.json", ["1.0.21"], False),
    ("/home/u/.local/share/kilo/opencode-dev.db", ["1.18.0"], True),
    # A JSON file named kilo.db is no database Kilo wrote; a session naming no version tells nothing.
    ("/home/u/kilo.db", [None, "v2"], False),
    ("/home/u/kilo-export.json", ["1.3.4"], False),
])
def test_nothing_but_opencode_is_said_where_the_content_does_not_tell_kilo_7(path: str, versions: list, database: bool) -> None:
    assert kilo_7_evidence(Path(path), versions, database) == ""


def _export_file(tmp_path: Path, version: str, provider: str = "kilo", model: str = "anthropic/claude-sonnet-4.5") -> Path:
    export = _kilo_session(version, 1_777_000_000_000)
    for message in export["messages"]:
        message["info"].pop("model", None)
        if message["info"]["role"] == "assistant":
            message["info"].update(providerID=provider, modelID=model)
    path = tmp_path / f"export-{version}.json"
    path.write_text(json.dumps(export, indent=2))
    return path


def test_a_kilo_7_export_names_kilo_code_7_as_its_agent(tmp_path: Path) -> None:
    requests, summary = import_file(_export_file(tmp_path, "7.2.30"), OPENCODE, ImportContext())
    assert summary.agent == KILO_7
    assert f"{KILO_7}: the session names Kilo's own release 7.2.30 (no OpenCode release is 7.x)" in summary.notes
    assert f"{KILO_7}'s own step costs sum to $0.0200 (a check on the dollars here)" in summary.notes
    # Kilo's gateway relays the calls: their bill and cache are the gateway's.
    assert [r.relay for r in requests] == ["kilo", "kilo"]
    assert {r.provider for r in requests} == {"anthropic"}


def test_an_opencode_export_stays_opencode_s(tmp_path: Path) -> None:
    requests, summary = import_file(_export_file(tmp_path, "1.14.2", provider="anthropic", model="claude-sonnet-4-5"),
                                    OPENCODE, ImportContext())
    assert summary.agent == ""
    assert not any("Kilo" in note for note in summary.notes)
    assert "OpenCode's own step costs sum to $0.0200 (a check on the dollars here)" in summary.notes
    assert [r.relay for r in requests] == ["", ""]


def test_opencode_through_kilo_s_gateway_is_relayed_but_not_named_kilo(tmp_path: Path) -> None:
    # models.dev lists Kilo's gateway (provider id kilo): OpenCode reaches it too; only the version tells.
    requests, summary = import_file(_export_file(tmp_path, "1.14.2"), OPENCODE, ImportContext())
    assert summary.agent == "" and [r.relay for r in requests] == ["kilo", "kilo"]


def test_kilo_auto_is_not_relayed_under_a_maker_s_rules(tmp_path: Path) -> None:
    # kilo-auto is Kilo's router: no maker's rules read it, so no relay of a maker's calls is said.
    requests, _ = import_file(_export_file(tmp_path, "7.2.30", model="kilo-auto/balanced"), OPENCODE, ImportContext())
    assert [(r.provider, r.relay) for r in requests] == [("unknown", ""), ("unknown", "")]


def test_a_kilo_db_names_kilo_code_7_whatever_its_folder(tmp_path: Path) -> None:
    db = write_db(tmp_path / "kilo.db", [_kilo_session("7.2.30", 1_777_000_000_000)])
    _, summaries = load_trace([db])
    assert [s.agent for s in summaries] == [KILO_7]
    assert any("the database is kilo.db" in note for s in summaries for note in s.notes)
    assert f"a {KILO_7} database: 1 session(s) read (opened read-only)" in summaries[0].notes
    other = tmp_path / "kilo"
    other.mkdir()
    plain = write_db(other / "opencode.db", [_kilo_session("1.14.2", 1_777_000_000_000)])
    _, summaries = load_trace([plain])
    assert [s.agent for s in summaries] == [""]


def test_the_kilo_cli_1_0_storage_stays_opencode_s(tmp_path: Path) -> None:
    # Its 1.0.x numbers are OpenCode's too, and its folder's name says nothing the content does.
    _storage(tmp_path / ".local" / "share" / "kilo" / "storage", _kilo_session("1.0.21", KILO_1_0_CREATED))
    _, summaries = load_trace([tmp_path])
    assert [s.agent for s in summaries] == [""]


def _idle_export(tmp_path: Path, version: str) -> Path:
    """A session whose second call, 20 minutes after the first, finds the 5-minute cache gone."""
    export = _kilo_session(version, 1_777_000_000_000)
    steps = [{"input": 3, "output": 300, "reasoning": 0, "cache": {"read": 0, "write": 40_000}},
             {"input": 3, "output": 90, "reasoning": 0, "cache": {"read": 0, "write": 40_400}}]
    for n, (user, reply) in enumerate(zip(export["messages"][::2], export["messages"][1::2])):
        when = 1_777_000_000_000 + 20 * 60_000 * n
        user["info"]["time"] = {"created": when}
        reply["info"]["time"] = {"created": when + 1}
        reply["parts"][-1]["tokens"] = steps[n]
    path = tmp_path / f"idle-{version}.json"
    path.write_text(json.dumps(export, indent=2))
    return path


@pytest.mark.parametrize("version", ["7.2.30", "1.14.2"])
def test_the_advice_names_kilo_code_7_and_no_opencode_setting(tmp_path: Path, version: str) -> None:
    from prefixbench.workloads.audit.advice import advise

    path = _idle_export(tmp_path, version)
    trace = load_trace([path])
    recs = {rec.fix: rec for rec in advise(run_audit([path], trace=trace), trace).recommendations}
    assert "keep-alive" in recs and "ttl-1h" in recs, sorted(recs)
    for fix in ("keep-alive", "ttl-1h"):
        rec = recs[fix]
        if version.startswith("7."):
            assert rec.agent == KILO_7
            assert rec.setting == f"none documented for {KILO_7}", rec.setting
            assert "Kilo-Org/kilocode/issues/11800" in (rec.source or "") and "config.ts" in (rec.source or "")
            assert "opencode.json" not in rec.change and "warming" not in rec.change
        else:
            assert rec.agent == "OpenCode" and "opencode.json" in (rec.setting or ""), rec.setting


def test_a_database_holding_kilo_s_own_table_is_kilo_code_7_s_under_any_name(tmp_path: Path) -> None:
    # Kilo 7.7 keeps a kilo_board table beside OpenCode's: its database, copied under another name.
    db = write_db(tmp_path / "copy.db", [_kilo_session("1.14.2", 1_777_000_000_000)])
    _, summaries = load_trace([db])
    assert [s.agent for s in summaries] == [""]
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE kilo_board (id text PRIMARY KEY, root_session_id text NOT NULL)")
    conn.close()
    _, summaries = load_trace([db])
    assert [s.agent for s in summaries] == [KILO_7]
    assert f"{KILO_7}: the database holds Kilo's own table kilo_board beside OpenCode's" in summaries[0].notes
