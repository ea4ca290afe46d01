"""Agent state stores committed to public repositories, read where they live (a local git copy of
each; never copied into this project, each test skips without it):

* an OpenCode database (``opencode.db``, OpenCode 1.16.0, 2026-07-30) committed at the root of
  github.com/suhd550-dev/stunning-memory (commit ``7b38109fb446018a25bb3d5fe35428abb2242041``): one
  session of 26 calls to deepseek-v4-flash through MonkeyCode's gateway (``monkeycode-ai``). It
  is a late 1.x database: it has the ``session_message`` table, empty, and no ``session_v2``, so it
  is read from its ``session`` / ``message`` / ``part`` tables. From
  ``PREFIXBENCH_STUNNING_MEMORY_REPO`` (default the workplace's mirror);
* an OpenHands 1.x conversation folder (``base_state.json`` and ``events/``; 3 calls of
  openai/gpt-4o-mini, 2026-02-05) that github.com/OpenHands/software-agent-sdk kept as a PR
  artifact of its event-to-OpenAI-messages example
  (``.pr/event-json-to-openai-messages/cd94562403b9487ebdd4018e3f531dfd/conversations/...``,
  commit ``4f4c68c16716c592abffc3e34da00428584145fe``, removed the next day). From ``PREFIXBENCH_AGENT_SDK_REPO`` (default the
  workplace's mirror);
* a Qwen Code home folder (``.qwen/``, its ``projects/*/chats/*.jsonl``: Qwen Code 0.5.0 and
  0.9.1, 2025-12, ``coder-model`` through Qwen's OAuth, Windows paths) that
  github.com/Haniaimraxn/TODO-LIST committed in its first commit
  (``f2a4071a05a708f4c3dfc8849daf14e93d0e0306``): ten sessions, 160 assistant records and the
  CLI's telemetry of 164 calls. From ``PREFIXBENCH_TODO_LIST_REPO`` (default the workplace's
  mirror); only the chat files are read.

What is checked is the store's own bookkeeping recounted from its raw fields, and how well its
reads are predicted.
"""

from __future__ import annotations

import json
from decimal import Decimal
import os
import sqlite3
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at, files_at

STUNNING_MEMORY = Path(os.environ.get("PREFIXBENCH_STUNNING_MEMORY_REPO", "/work/.mirror/suhd550-dev+stunning-memory/repo"))
STUNNING_MEMORY_COMMIT = "7b38109fb446018a25bb3d5fe35428abb2242041"
AGENT_SDK = Path(os.environ.get("PREFIXBENCH_AGENT_SDK_REPO", "/work/.mirror/OpenHands+software-agent-sdk/repo"))
AGENT_SDK_COMMIT = "4f4c68c16716c592abffc3e34da00428584145fe"
TODO_LIST = Path(os.environ.get("PREFIXBENCH_TODO_LIST_REPO", "/work/.mirror/Haniaimraxn+TODO-LIST/repo"))
TODO_LIST_COMMIT = "f2a4071a05a708f4c3dfc8849daf14e93d0e0306"
AGENT_SDK_CONVERSATION = (
    ".pr/event-json-to-openai-messages/cd94562403b9487ebdd4018e3f531dfd/conversations/cd94562403b9487ebdd4018e3f531dfd"
)


def test_opencode_database_counts_what_its_tables_sum_and_reads_in_128_token_units(tmp_path: Path) -> None:
    data = file_at(STUNNING_MEMORY, STUNNING_MEMORY_COMMIT, "opencode.db", "github.com/suhd550-dev/stunning-memory",
                   "PREFIXBENCH_STUNNING_MEMORY_REPO")
    path = tmp_path / "opencode.db"
    path.write_bytes(data)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {name for (name,) in db.execute("select name from sqlite_master where type = 'table'")}
    assert {"session", "message", "part", "session_message"} <= tables and "session_v2" not in tables
    assert db.execute("select count(*) from session_message").fetchone() == (0,)
    steps = [json.loads(d)["tokens"] for (d,) in db.execute("select data from part") if json.loads(d).get("type") == "step-finish"]
    (session,) = db.execute("select version, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write from session")
    db.close()
    assert len(steps) == 26 and session[0] == "v1.16.0"

    result = run_audit([path])
    assert [f.format for f in result.files] == ["opencode"]
    t = result.totals
    assert t.requests == 26
    # Additive, as OpenCode stores every provider's usage: the same sums the session row keeps.
    assert t.input == sum(s["input"] for s in steps) == session[1] == 5_387
    assert t.output == sum(s["output"] + s["reasoning"] for s in steps) == session[2] + session[3] == 4_814
    assert t.cache_read == sum(s["cache"]["read"] for s in steps) == session[4] == 622_720
    assert t.cache_write == sum(s["cache"]["write"] for s in steps) == session[5] == 0
    # The one assistant message without a step (its tokens all 0) is listed, not counted.
    assert result.files[0].skip_reasons == (("assistant message with no step-finish (no usage recorded)", 1),)
    assert {(r.provider, r.model) for r in result.rows} == {("deepseek", "monkeycode-basic/deepseek-v4-flash")}
    # Through the gateway too, every read is whole 128-token units (DeepSeek V4's step).
    assert all(r.reported_cache_read % 128 == 0 for r in result.rows)
    # 24 of 26 within 3%: 20 exact, 4 one or two units (128 tokens) above the read. The two others: the
    # first call read a 20,480-token head cached before the session; the fourth read its previous
    # prompt (20,907 tokens, 20,864 in units) but not the 1,705-token answer after it, which the
    # model predicts DeepSeek keeps.
    assert result.files[0].read_within == 24
    off = [r.predicted_cache_read - r.reported_cache_read for r in result.rows if r.read_within]
    assert sorted(off) == [0] * 20 + [128, 128, 128, 256]
    missed = [(r.index, r.reported_cache_read, r.predicted_cache_read) for r in result.rows if not r.read_within]
    assert missed == [(0, 20_480, 0), (3, 20_864, 22_528)]


def test_openhands_v1_conversation_counts_its_token_usages_and_times_them_from_its_events(tmp_path: Path) -> None:
    listed = files_at(AGENT_SDK, AGENT_SDK_COMMIT, "github.com/OpenHands/software-agent-sdk", "PREFIXBENCH_AGENT_SDK_REPO")
    folder = tmp_path / "conversation"
    for name in (p for p in listed if p.startswith(AGENT_SDK_CONVERSATION + "/")):
        out = folder / name[len(AGENT_SDK_CONVERSATION) + 1:]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(file_at(AGENT_SDK, AGENT_SDK_COMMIT, name, "github.com/OpenHands/software-agent-sdk", "PREFIXBENCH_AGENT_SDK_REPO"))
    state = json.loads((folder / "base_state.json").read_text())
    usages = state["stats"]["usage_to_metrics"]["agent"]["token_usages"]
    assert len(usages) == 3 and len(list((folder / "events").iterdir())) == 9

    result = run_audit([folder])
    assert {f.format for f in result.files} == {"openhands"}
    t = result.totals
    assert t.requests == 3
    # LiteLLM's usage: prompt_tokens includes the reads; no writes on OpenAI.
    assert t.cache_read == sum(u["cache_read_tokens"] for u in usages) == 7_552
    assert t.input + t.cache_read == sum(u["prompt_tokens"] for u in usages) == 11_583
    assert t.output == sum(u["completion_tokens"] for u in usages) == 94
    assert t.cache_write == 0
    # The accumulated total the state also keeps is not counted again.
    total = state["stats"]["usage_to_metrics"]["agent"]["accumulated_token_usage"]
    assert (total["prompt_tokens"], total["cache_read_tokens"]) == (11_583, 7_552)
    assert {r.provider for r in result.rows} == {"openai"}
    # Priced at gpt-4o-mini's row (0.15 input, 0.075 read, 0.60 output per 1M): 4,031 x 0.15 +
    # 7,552 x 0.075 + 94 x 0.60 = 1,227.45 per 1M tokens (no price before: left out).
    assert (t.unpriced_requests, t.cost_usd) == (0, Decimal("0.00122745"))
    # Each call's time comes from the event naming its response: all three timed, and all
    # three reads (0, 3,712, 3,840: 128-token steps of the previous prompt) predicted exactly.
    assert all(r.timestamp for r in result.rows)
    assert [r.reported_cache_read for r in result.rows] == [0, 3_712, 3_840]
    assert [r.predicted_cache_read for r in result.rows] == [0, 3_712, 3_840]


def test_qwen_code_chats_count_the_calls_their_telemetry_logs(tmp_path: Path) -> None:
    listed = files_at(TODO_LIST, TODO_LIST_COMMIT, "github.com/Haniaimraxn/TODO-LIST", "PREFIXBENCH_TODO_LIST_REPO")
    chats = [name for name in listed if name.startswith(".qwen/projects/") and name.endswith(".jsonl")]
    assert len(chats) == 10
    records = []
    for name in chats:
        data = file_at(TODO_LIST, TODO_LIST_COMMIT, name, "github.com/Haniaimraxn/TODO-LIST", "PREFIXBENCH_TODO_LIST_REPO")
        (tmp_path / name.rsplit("/", 1)[1]).write_bytes(data)
        records += [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    usages = [r["usageMetadata"] for r in records if r["type"] == "assistant"]
    events = [r["systemPayload"]["uiEvent"] for r in records if r.get("subtype") == "ui_telemetry"]
    calls = [e for e in events if e["event.name"] == "qwen-code.api_response"]
    assert (len(usages), len(calls), sum(e["event.name"] == "qwen-code.api_error" for e in events)) == (160, 164, 1)
    assert {r["version"] for r in records} == {"0.5.0", "0.9.1"}

    result = run_audit([tmp_path])
    assert {f.format for f in result.files} == {"gemini-cli"}
    t = result.totals
    # Every call the telemetry logs (the records' 160 and 4 with no record), its prompt count
    # holding the read (Gemini's convention, which Qwen Code keeps).
    assert t.requests == len(calls) == 164
    assert t.cache_read == sum(e["cached_content_token_count"] for e in calls) == 9_417_401
    assert t.input == sum(e["input_token_count"] - e["cached_content_token_count"] + e["tool_token_count"] for e in calls) == 816_564
    assert t.output == sum(e["output_token_count"] + e["thoughts_token_count"] for e in calls) == 184_575
    assert t.cache_write == 0
    # The records' own usage is the same calls' but four: 160 calls, read 9,335,159.
    assert sum(u["cachedContentTokenCount"] for u in usages) == 9_335_159
    notes = [n for f in result.files for n in f.notes if "telemetry logs" in n or "own token totals" in n]
    assert len(notes) == 18 and all("(the same)" in n or "; the same)" in n for n in notes)
    assert [f.skip_reasons for f in result.files if f.skip_reasons] == [(("failed call (qwen-code.api_error telemetry): no usage", 1),)]
    # Of the 4 calls no record holds: a reply retried on the same prompt (the main chain), and 3
    # side calls on a prompt of their own (589 tokens read of each: a short head of their own).
    side = [r for r in result.rows if r.lane == "side:telemetry"]
    assert [r.reported_cache_read for r in side] == [589, 589, 589]
    assert {(r.provider, r.model) for r in result.rows} == {("unknown", "coder-model")}
    assert sum(1 for r in result.rows if r.read_within) == 112
