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
* an OpenHands V1 app server's state folder (``openhands-state/``: ``openhands.db`` and
  ``v1_conversations/<id>/<event>.json``, 14 events of 2026-04-02, ``openai/director`` through a
  local proxy) that github.com/QuestNerd/pwagent committed (commit
  ``c329e9d59537fb92aa74ce73e2ac549bd121567f``): its state updates hold no usage (the proxy
  reported none), which the audit says. From ``PREFIXBENCH_PWAGENT_REPO`` (default the
  workplace's mirror);
* Qwen Code home folders (``.qwen/``) four repositories committed, of which only the sessions
  (``projects/*/chats/*.jsonl``) are read, all on ``coder-model`` through Qwen's OAuth:
  github.com/Haniaimraxn/TODO-LIST (``f2a4071a05a708f4c3dfc8849daf14e93d0e0306``, Qwen Code
  0.5.0 and 0.9.1, 2025-12, Windows), github.com/uncommonpope-png/New-backend-pope
  (``5aecee02f6b121ced0b8b0acb32ee6354b7cc7cf``, 0.12.6, 2026-03, Termux),
  github.com/kamillayarullina/hockeyscrapper (``075de8dd6277bfa92fd71c6ca1e185391d14f858``,
  0.13.0 to 0.14.0, 2026-04, Windows) and github.com/haidonglethqb/CloudSchool
  (``0dce1dca60ea95568937ebd8c73e9f9c9db4a2d7``, 0.14.0 to 0.14.2, 2026-04, Windows: its
  subagents' calls logged by the telemetry alone). From ``PREFIXBENCH_TODO_LIST_REPO``,
  ``PREFIXBENCH_BACKEND_POPE_REPO``, ``PREFIXBENCH_HOCKEYSCRAPPER_REPO`` and
  ``PREFIXBENCH_CLOUDSCHOOL_REPO`` (default the workplace's mirrors);
* an Amp data folder (``.local/share/amp/``, a Replit home) that github.com/hackclub/club-dashboard
  committed in its first commit (``bd179897fdd528a22f4997b09c2a4bbdae4c29dd``, 2025-11-20): three
  threads of 2025-10-27 (``threads/T-*.json``, thread format v27 to v194), claude-sonnet-4-5 with
  claude-3-5-haiku titles. From ``PREFIXBENCH_CLUB_DASHBOARD_REPO`` (default the workplace's
  mirror); only the threads are read;
* a Kilo CLI database (``.local/share/kilo/kilo.db`` with its ``-wal`` and ``-shm``; Kilo CLI
  7.0.46, OpenCode's schema, 2026-03-12) that github.com/Web-Designer-Rohan/Mushushi committed in
  its first commit (``a944edb97a12d97d4914daf3893bf84e9c2295ec``): three sessions on
  arcee-ai/trinity-large-preview:free through Kilo's gateway. From ``PREFIXBENCH_MUSHUSHI_REPO``
  (default the workplace's mirror);
* GitHub Copilot CLI's OpenTelemetry file export (``watson-output/otel-raw.jsonl``: Copilot CLI
  1.0.12-0, 2026-03-25, claude-opus-4.6-1m and claude-haiku-4.5 through GitHub) that
  github.com/MattGertz/OTEL-test keeps (commit ``3aa52071ea5b569624950930d9dad400ac435978``).
  From ``PREFIXBENCH_OTEL_TEST_REPO`` (default the workplace's mirror);
* GitHub Copilot Chat's OpenTelemetry file export (``otel-traces.jsonl``: Copilot Chat
  0.41.2026031804, claude-opus-4.6 and gpt-4o-mini through GitHub: the JavaScript SDK's log
  records between its metrics) that the same repository keeps at an earlier commit
  (``459410df857542b09aa5d57d5daada8271689db5``).
* github.com/cercaniaWeb/racompospro (``b551956377bd441ce70a3024272e1f199f4b5763``, its first commit,
  2025-12-05): a ``.qwen/`` of Qwen Code's earlier sessions, ``tmp/<project hash>/chats/
  session-*.json`` (Gemini CLI's shape, model messages of ``type: qwen``; 120 files of 2025-11,
  coder-model). From ``PREFIXBENCH_RACOMPOSPRO_REPO``.

What is checked is the store's own bookkeeping recounted from its raw fields, and how well its
reads are predicted.
"""

from __future__ import annotations

import json
from decimal import Decimal
import os
import sqlite3
from pathlib import Path

import pytest
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from tests.realdata.mirrors import file_at, files_at

STUNNING_MEMORY = Path(os.environ.get("PREFIXBENCH_STUNNING_MEMORY_REPO", "/work/.mirror/suhd550-dev+stunning-memory/repo"))
STUNNING_MEMORY_COMMIT = "7b38109fb446018a25bb3d5fe35428abb2242041"
RACOMPOSPRO = Path(os.environ.get("PREFIXBENCH_RACOMPOSPRO_REPO", "/work/.mirror/cercaniaWeb+racompospro/repo"))
RACOMPOSPRO_COMMIT = "b551956377bd441ce70a3024272e1f199f4b5763"
AGENT_SDK = Path(os.environ.get("PREFIXBENCH_AGENT_SDK_REPO", "/work/.mirror/OpenHands+software-agent-sdk/repo"))
AGENT_SDK_COMMIT = "4f4c68c16716c592abffc3e34da00428584145fe"
PWAGENT = Path(os.environ.get("PREFIXBENCH_PWAGENT_REPO", "/work/.mirror/QuestNerd+pwagent/repo"))
PWAGENT_COMMIT = "c329e9d59537fb92aa74ce73e2ac549bd121567f"
#: Qwen Code homes: env variable -> (repository, commit, sessions, assistant records with usage,
#: calls in the telemetry, failed calls, the audit's uncached input, output and read, and its
#: calls predicted within 3% (and of them exactly).
QWEN_HOMES = {
    "PREFIXBENCH_TODO_LIST_REPO": ("Haniaimraxn/TODO-LIST", "f2a4071a05a708f4c3dfc8849daf14e93d0e0306",
                                   10, 160, 164, 1, 816_564, 184_575, 9_417_401, 156, 13),
    "PREFIXBENCH_BACKEND_POPE_REPO": ("uncommonpope-png/New-backend-pope", "5aecee02f6b121ced0b8b0acb32ee6354b7cc7cf",
                                      4, 104, 107, 0, 3_092_864, 63_721, 5_202_846, 59, 52),
    "PREFIXBENCH_HOCKEYSCRAPPER_REPO": ("kamillayarullina/hockeyscrapper", "075de8dd6277bfa92fd71c6ca1e185391d14f858",
                                        13, 1_142, 1_145, 78, 14_644_302, 550_664, 139_691_582, 1_080, 1_050),
    "PREFIXBENCH_CLOUDSCHOOL_REPO": ("haidonglethqb/CloudSchool", "0dce1dca60ea95568937ebd8c73e9f9c9db4a2d7",
                                     17, 287, 794, 43, 4_753_008, 432_426, 40_158_920, 765, 750),
}
CLUB_DASHBOARD = Path(os.environ.get("PREFIXBENCH_CLUB_DASHBOARD_REPO", "/work/.mirror/hackclub+club-dashboard/repo"))
CLUB_DASHBOARD_COMMIT = "bd179897fdd528a22f4997b09c2a4bbdae4c29dd"
MUSHUSHI = Path(os.environ.get("PREFIXBENCH_MUSHUSHI_REPO", "/work/.mirror/Web-Designer-Rohan+Mushushi/repo"))
MUSHUSHI_COMMIT = "a944edb97a12d97d4914daf3893bf84e9c2295ec"
OTEL_TEST = Path(os.environ.get("PREFIXBENCH_OTEL_TEST_REPO", "/work/.mirror/MattGertz+OTEL-test/repo"))
OTEL_TEST_COMMIT = "3aa52071ea5b569624950930d9dad400ac435978"
OTEL_TEST_CHAT_COMMIT = "459410df857542b09aa5d57d5daada8271689db5"
#: A CloudSchool session over 4 MiB, absent from the workplace's snapshot: left out everywhere, so
#: a whole clone counts the same.
QWEN_LEFT_OUT = ".qwen/projects/c--users-chuhai-documents-cloudschool/chats/6a9a85b5-4940-4403-9f32-26ce3966423d.jsonl"
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
    assert (t.cache_write or 0) == sum(s["cache"]["write"] for s in steps) == session[5] == 0
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
    assert (t.cache_write or 0) == 0
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


def test_openhands_app_server_folder_without_usage_says_where_it_looked(tmp_path: Path) -> None:
    listed = files_at(PWAGENT, PWAGENT_COMMIT, "github.com/QuestNerd/pwagent", "PREFIXBENCH_PWAGENT_REPO")
    names = [p for p in listed if p.startswith("openhands-state/v1_conversations/")]
    for name in names:
        out = tmp_path / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(file_at(PWAGENT, PWAGENT_COMMIT, name, "github.com/QuestNerd/pwagent", "PREFIXBENCH_PWAGENT_REPO"))
    assert len(names) == 14
    events = [json.loads((tmp_path / n).read_text()) for n in names]
    # Its full_state's stats are empty and it has no stats update: the proxy reported no usage.
    full = [e for e in events if e.get("key") == "full_state"]
    assert len(full) == 1 and full[0]["value"]["stats"] == {"usage_to_metrics": {}}
    assert not [e for e in events if e.get("key") == "stats"]
    assert sum(1 for e in events if e.get("llm_response_id")) == 4
    folder = tmp_path / "openhands-state" / "v1_conversations"
    (conversation,) = folder.iterdir()
    first = sorted(conversation.iterdir())[0]
    assert all(detect_format(conversation / n.rsplit("/", 1)[1]).name == "openhands" for n in names)
    requests, summary = import_file(first, FORMATS["openhands"], ImportContext())
    assert requests == []
    assert ("an OpenHands V1 app-server conversation with no per-call usage: looked in its 14 event file(s), "
            "1 of them state updates with stats") in summary.notes[0]


def _qwen_home(env: str, tmp_path: Path) -> list[dict]:
    """The sessions of a committed Qwen Code home, written into ``tmp_path``; their records."""
    repo, commit = QWEN_HOMES[env][:2]
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    listed = files_at(mirror, commit, f"github.com/{repo}", env)
    records = []
    for name in listed:
        if name.startswith(".qwen/projects/") and name.endswith(".jsonl") and name != QWEN_LEFT_OUT:
            data = file_at(mirror, commit, name, f"github.com/{repo}", env)
            (tmp_path / name.rsplit("/", 1)[1]).write_bytes(data)
            records += [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    return records


def _output(event: dict) -> int:
    """A telemetry event's output: the thoughts are inside it where its total adds none."""
    inside = event["thoughts_token_count"] and event["total_token_count"] == (
        event["input_token_count"] + event["tool_token_count"] + event["output_token_count"])
    return event["output_token_count"] + (0 if inside else event["thoughts_token_count"])


@pytest.mark.parametrize("env", sorted(QWEN_HOMES))
def test_qwen_code_sessions_count_the_calls_their_telemetry_logs(env: str, tmp_path: Path) -> None:
    _, _, sessions, assistant, logged, failed, uncached, output, read, within, exact = QWEN_HOMES[env]
    records = _qwen_home(env, tmp_path)
    events = [r["systemPayload"]["uiEvent"] for r in records if r.get("subtype") == "ui_telemetry"]
    calls = [e for e in events if e["event.name"] == "qwen-code.api_response"]
    assert len(list(tmp_path.iterdir())) == sessions
    assert (sum(r["type"] == "assistant" and "usageMetadata" in r for r in records), len(calls)) == (assistant, logged)

    result = run_audit([tmp_path])
    assert {f.format for f in result.files} == {"gemini-cli"}
    t = result.totals
    # Every call the telemetry logs, those of no record included, the read inside each prompt
    # count (Gemini's convention, which Qwen Code keeps) and the reasoning counted once.
    assert t.requests == len(calls) == logged
    assert t.cache_read == sum(e["cached_content_token_count"] for e in calls) == read
    assert t.input == sum(e["input_token_count"] - e["cached_content_token_count"] + e["tool_token_count"] for e in calls) == uncached
    assert t.output == sum(_output(e) for e in calls) == output
    assert (t.cache_write or 0) == 0
    failures = sum(n for f in result.files for why, n in f.skip_reasons if why.startswith("failed call (qwen-code.api_error"))
    assert failures == failed == sum(e["event.name"] == "qwen-code.api_error" for e in events)
    # Each session's own checks: its telemetry's sums and its records' token totals, the same.
    notes = [n for f in result.files for n in f.notes if "telemetry logs" in n or "own token totals" in n]
    assert notes and all("(the same" in n or "; the same as the calls' prompt + output counted here)" in n for n in notes), [n for n in notes if "the same" not in n]
    # Qwen's own login (the telemetry's auth_type qwen-oauth) serves coder-model, a name of no
    # provider: read with Qwen's rules (explicit: Qwen Code marks every streamed request), each
    # entry living 5 min from its response's end, a read the previous prompt less 6 tokens (4 in
    # TODO-LIST's 2025-12 sessions: within 3%, not exact), a subagent's first call reading its
    # type's head (CloudSchool: 730 with one head for every subagent). Within 3% before (provider
    # unknown, each read predicted as the previous one's): 112 / 56 / 987 / 463.
    assert {(r.provider, r.model) for r in result.rows} == {("qwen", "coder-model")}
    rows = [r for r in result.rows if r.read_within]
    assert (len(rows), sum(r.predicted_cache_read == r.reported_cache_read for r in rows)) == (within, exact)


def test_qwen_code_json_sessions_of_gemini_clis_shape_count_their_qwen_messages(tmp_path: Path) -> None:
    url, env = "github.com/cercaniaWeb/racompospro", "PREFIXBENCH_RACOMPOSPRO_REPO"
    sessions = []
    for name in files_at(RACOMPOSPRO, RACOMPOSPRO_COMMIT, url, env):
        if name.startswith(".qwen/tmp/") and "/chats/" in name and name.endswith(".json"):
            data = file_at(RACOMPOSPRO, RACOMPOSPRO_COMMIT, name, url, env)
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            sessions.append(json.loads(data))
    assert len(sessions) == 120
    tokens = [m["tokens"] for s in sessions for m in s["messages"] if m["type"] == "qwen" and m.get("tokens")]
    result = run_audit([tmp_path / ".qwen"])
    assert {f.format for f in result.files} == {"gemini-cli"}
    t = result.totals
    # Each `qwen` message with tokens is a call (none was read before: 0 calls, nothing listed).
    assert t.requests == len(tokens) == 6_635
    assert t.input == sum(k["input"] - k["cached"] + k["tool"] for k in tokens) == 27_462_067
    assert t.output == sum(k["output"] + k["thoughts"] for k in tokens) == 2_131_931
    assert t.cache_read == sum(k["cached"] for k in tokens) == 619_591_504
    skipped = [(why, n) for f in result.files for why, n in f.skip_reasons]
    assert {why for why, _ in skipped} == {"model message without tokens (its call's usage was not recorded)"}
    assert sum(n for _, n in skipped) == 22
    # coder-model (and one call of vision-model), Qwen Code's own login's: read with qwen's rules,
    # each call reading its previous prompt less a few tokens. 5,715 within 3% as provider unknown.
    # 6,478 -> 6,506 since the head is one per workspace (.qwen/tmp/<project hash>) and model: 13
    # heads, not one of 23,050 tokens for all; the two sized, 23,668 and 26,902, are two workspaces'.
    assert {(r.provider, r.model) for r in result.rows} == {("qwen", "coder-model"), ("qwen", "vision-model")}
    assert sum(r.read_within for r in result.rows) == 6_506


def test_qwen_code_calls_with_no_record_sit_where_they_were_made(tmp_path: Path) -> None:
    """Of TODO-LIST's 4 calls with no record: a reply retried on the same prompt (in the main
    chain, before the call that was kept) and 3 side calls on a short prompt of their own (589
    tokens read of each). Of CloudSchool's biggest session's 276 calls, 194 are its subagents'
    (their ``prompt_id`` names them), each in the subagent's own lane."""
    _qwen_home("PREFIXBENCH_TODO_LIST_REPO", tmp_path)
    rows = run_audit([tmp_path / "c85afb93-5dc4-4bb5-be6e-0f2771b8e976.jsonl"]).rows
    assert [r.reported_cache_read for r in rows if r.lane == "side:telemetry"] == [589, 589, 589]
    # Within 3%: all 126 of its calls (100 before, the provider unknown).
    assert sum(r.lane == "main" for r in rows) == 123 and sum(1 for r in rows if r.read_within) == 126
    home = tmp_path / "cloud"
    home.mkdir()
    _qwen_home("PREFIXBENCH_CLOUDSCHOOL_REPO", home)
    rows = run_audit([home / "8d1c99fc-0a56-438f-94fc-56855176279d.jsonl"]).rows
    lanes = {r.lane for r in rows if r.lane_kind == "subagent"}
    assert sum(r.lane == "main" for r in rows) == 82 and sum(r.lane in lanes for r in rows) == 194
    assert len(lanes) == 18 and all(lane.startswith(("agent:debugger-", "agent:code-reviewer-", "agent:tester-")) for lane in lanes)


def test_amp_threads_count_what_their_messages_and_ledgers_sum(tmp_path: Path) -> None:
    listed = files_at(CLUB_DASHBOARD, CLUB_DASHBOARD_COMMIT, "github.com/hackclub/club-dashboard", "PREFIXBENCH_CLUB_DASHBOARD_REPO")
    threads = [name for name in listed if name.startswith(".local/share/amp/threads/")]
    assert len(threads) == 3
    calls = []
    for name in threads:
        data = file_at(CLUB_DASHBOARD, CLUB_DASHBOARD_COMMIT, name, "github.com/hackclub/club-dashboard", "PREFIXBENCH_CLUB_DASHBOARD_REPO")
        (tmp_path / name.rsplit("/", 1)[1]).write_bytes(data)
        thread = json.loads(data)
        usage = {m["messageId"]: m["usage"] for m in thread["messages"] if m.get("usage")}
        # Each ledger event once: an inference's counts from the message it names, a title's its own.
        for event in thread["usageLedger"]["events"]:
            if event["operationType"] == "inference":
                u = usage[event["toMessageId"]]
                assert (u["inputTokens"], u["outputTokens"]) == (event["tokens"]["input"], event["tokens"]["output"])
                calls.append((u["inputTokens"], u["outputTokens"], u["cacheCreationInputTokens"], u["cacheReadInputTokens"]))
            else:
                calls.append((event["tokens"]["input"], event["tokens"]["output"], 0, 0))

    result = run_audit([tmp_path])
    assert {f.format for f in result.files} == {"amp"}
    t = result.totals
    assert t.requests == len(calls) == 10
    assert (t.input, t.output, t.cache_write, t.cache_read) == tuple(sum(c[i] for c in calls) for i in range(4)) == (1_825, 999, 5_644, 105_733)
    assert sum(r.lane == "side:title-generation" for r in result.rows) == 3
    assert {r.model for r in result.rows} == {"claude-sonnet-4-5-20250929", "claude-3-5-haiku-20241022"}
    assert {r.provider for r in result.rows} == {"anthropic"}
    # 9 of 10 within 3%: the 3 titles (no read, none predicted), 3 of the longest thread's 4 later
    # calls, and each thread's first call, which read the same 14,570-token head: the threads
    # share it (one head a model, not one a thread), so the audit learns it from their 3 lane
    # starts as kept warm by the account (6 before, each predicted 0).
    assert sum(1 for r in result.rows if r.read_within) == 9
    firsts = [r for r in result.rows if r.lane == "main" and r.index == 0]
    assert [(r.reported_cache_read, r.predicted_cache_read) for r in firsts] == [(14_570, 14_570)] * 3


def test_kilo_cli_database_counts_what_its_steps_sum_with_its_write_ahead_log(tmp_path: Path) -> None:
    for name in ("kilo.db", "kilo.db-wal", "kilo.db-shm"):
        data = file_at(MUSHUSHI, MUSHUSHI_COMMIT, f".local/share/kilo/{name}", "github.com/Web-Designer-Rohan/Mushushi",
                       "PREFIXBENCH_MUSHUSHI_REPO")
        (tmp_path / name).write_bytes(data)
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("kilo.db", "kilo.db-wal", "kilo.db-shm"):
        (copy / name).write_bytes((tmp_path / name).read_bytes())
    db = sqlite3.connect(copy / "kilo.db")  # (a copy: opening it read-write checkpoints the log)
    steps = [json.loads(d)["tokens"] for (d,) in db.execute("select data from part") if json.loads(d).get("type") == "step-finish"]
    versions = {v for (v,) in db.execute("select version from session")}
    db.close()
    assert len(steps) == 95 and versions == {"7.0.46"}

    result = run_audit([tmp_path / "kilo.db"])
    assert [f.format for f in result.files] == ["opencode"]
    t = result.totals
    # Every step, those only in the write-ahead log too (85 without it).
    assert t.requests == len(steps) == 95
    assert t.input == sum(s["input"] for s in steps) == 2_178_461
    assert t.output == sum(s["output"] + s["reasoning"] for s in steps) == 91_027
    assert t.cache_read == sum(s["cache"]["read"] for s in steps) == 0 and (t.cache_write or 0) == 0
    assert {(r.provider, r.model) for r in result.rows} == {("unknown", "arcee-ai/trinity-large-preview:free")}
    notes = [n for f in result.files for n in f.notes if "own message totals" in n]
    assert len(notes) == 3 and all("(the same as its steps'" in n for n in notes)


def test_copilot_cli_otel_export_counts_its_chat_spans_as_its_agent_spans_sum_them(tmp_path: Path) -> None:
    data = file_at(OTEL_TEST, OTEL_TEST_COMMIT, "watson-output/otel-raw.jsonl", "github.com/MattGertz/OTEL-test", "PREFIXBENCH_OTEL_TEST_REPO")
    path = tmp_path / "otel-raw.jsonl"
    path.write_bytes(data)
    # Pretty-printed ResourceSpans one after another: each span's attributes as a dict.
    text, at, spans = data.decode(), 0, []
    decoder = json.JSONDecoder()
    while text[at:].strip():
        value, at = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
        assert set(value) == {"resource", "schemaUrl", "scopeSpans"}
        for scope in value["scopeSpans"]:
            for span in scope["spans"]:
                attrs = {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}
                spans.append((span["name"].split(" ")[0], attrs))
    usage = [(name, a) for name, a in spans if "gen_ai.usage.input_tokens" in a]
    chats = [a for name, a in usage if name == "chat"]
    agents = [a for name, a in usage if name == "invoke_agent"]

    def total(items: list[dict], key: str) -> int:
        return sum(int(a.get(key, 0)) for a in items)

    assert (len(chats), len(agents)) == (62, 7)
    # The export's own sums: its invoke_agent spans sum their chat spans exactly.
    for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens"):
        assert total(agents, key) == total(chats, key)

    result = run_audit([path])
    assert [f.format for f in result.files] == ["otel"]
    t = result.totals
    assert t.requests == len(chats) == 62
    assert t.cache_read == total(chats, "gen_ai.usage.cache_read.input_tokens") == 5_894_173
    assert t.input == total(chats, "gen_ai.usage.input_tokens") - t.cache_read == 331_384
    assert t.output == total(chats, "gen_ai.usage.output_tokens") == 24_709
    # The export has no write attribute (GitHub reports reads only): the writes are not reported
    # (None), not 0, on every call and so in the totals.
    assert t.cache_write is None and all(r.reported_cache_write is None for r in result.rows)
    # The 7 invoke_agent spans are listed, not counted again.
    assert sum(n for f in result.files for why, n in f.skip_reasons if why.endswith("sums the usage of the calls under it")) == 7
    assert {(r.provider, r.model) for r in result.rows} == {("anthropic", "claude-opus-4.6-1m"), ("anthropic", "claude-haiku-4.5")}
    # 57 within 3% (53 before, when a call's cacheable part was its read alone: GitHub reports no
    # writes, so the whole prompt is what the next call may read; the calls after one with no
    # cache field read its prompt but ~100 tokens). The 5 others: 2 report no cache field, the first
    # haiku call read 47,976 written outside the file, the second 195,052 after a 66,888-token
    # prompt, and one opus call read 19,883 of the 94,017 predicted (nothing logged explains it).
    assert sum(1 for r in result.rows if r.read_within) == 57


def test_copilot_chat_otel_log_records_count_its_inference_events_as_its_agent_turns_sum_them(tmp_path: Path) -> None:
    data = file_at(OTEL_TEST, OTEL_TEST_CHAT_COMMIT, "otel-traces.jsonl", "github.com/MattGertz/OTEL-test", "PREFIXBENCH_OTEL_TEST_REPO")
    path = tmp_path / "otel-traces.jsonl"
    path.write_bytes(data)
    # One record a line: the SDK's log records (attributes as a dict), its metrics, empty objects.
    records = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    logs = [r["attributes"] for r in records if "hrTime" in r]
    assert len(records) == 54 and len(logs) == 20
    assert sum(1 for r in records if "scopeMetrics" in r) == 21 and sum(1 for r in records if not r) == 13
    calls = [a for a in logs if a["event.name"] == "gen_ai.client.inference.operation.details"]
    turns = [a for a in logs if a["event.name"] == "copilot_chat.agent.turn"]
    assert len(calls) == 11 and len(turns) == 4

    result = run_audit([path])
    assert [f.format for f in result.files] == ["otel"]
    t = result.totals
    assert t.requests == 11
    # No record names a cache count: the whole input is read as uncached, the cache use unreported.
    assert t.input == sum(a["gen_ai.usage.input_tokens"] for a in calls) == 534_441
    assert t.output == sum(a["gen_ai.usage.output_tokens"] for a in calls) == 3_172
    assert t.cache_read is None and t.cache_write is None  # no cache count in the spans: not reported, not 0
    # Each agent turn repeats its one call's usage: listed, not counted again.
    claude = [a for a in calls if a["gen_ai.response.model"] == "claude-opus-4-6"]
    assert [(a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) for a in claude] == [
        (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) for a in turns]
    assert result.files[0].skip_reasons == ((
        "log record of copilot_chat.agent.turn: not one inference (gen_ai.client.inference.operation.details), its usage sums calls", 4),)
    assert {(r.provider, r.model) for r in result.rows} == {("anthropic", "claude-opus-4-6"), ("openai", "gpt-4o-mini-2024-07-18")}
