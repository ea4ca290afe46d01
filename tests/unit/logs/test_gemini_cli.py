"""Gemini CLI and Qwen Code sessions (workloads/logs/formats/gemini_cli.py): every version's
fixture read field by field against hand-computed sums, detection, the folder walk, and a fuzz
property."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from prefixbench.reports.audit import nothing_to_audit
from prefixbench.simulator import providers
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import OPENAI, provider_of_model
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext
from prefixbench.workloads.logs.formats.gemini_cli import SEEN_AGENT, SEEN_COPY, detect
from prefixbench.workloads.logs.records import iter_records
from tests.fuzz.harness import Tally, fuzz_settings, mutated, write
from tests.unit.audit.fixtures import gemini_session
from tests.unit.logs.hang_guard import no_hang

FIXTURES = Path(__file__).parent / "fixtures"
LEGACY = FIXTURES / "gemini-cli.json"
JSONL = FIXTURES / "gemini-cli" / "session-2026.jsonl"
QWEN = FIXTURES / "gemini-cli" / "qwen-code.jsonl"
CHECKPOINT = FIXTURES / "gemini-cli" / "checkpoint-review.json"
FORMAT = FORMATS["gemini-cli"]


def _read(path: Path):
    return import_file(path, FORMAT, ImportContext())


def _kind(request) -> str:
    """A request's head key without its workspace and model (``<agent>:<kind>``)."""
    return request.prefix.head.removesuffix(f":{request.model}").rpartition(":")[0]


def _sums(path: Path) -> tuple[int, int, int, int, int]:
    requests, _ = _read(path)
    usages = [r.usage for r in requests]
    return (
        len(requests),
        sum(u.cache_read for u in usages),
        sum(u.uncached for u in usages),
        sum(u.cache_write for u in usages),
        sum(u.output for u in usages),
    )


def test_every_version_is_detected_from_content(tmp_path: Path) -> None:
    for path in (LEGACY, JSONL, QWEN, CHECKPOINT):
        assert detect_format(path) is FORMAT, path
        anywhere = tmp_path / "renamed.log"
        anywhere.write_bytes(path.read_bytes())
        assert detect_format(anywhere) is FORMAT, path


def test_detector_on_each_record_kind() -> None:
    records = [r.value for r in iter_records(JSONL)]
    assert detect(records[0]) == Evidence.WRAPPER  # the metadata line
    assert detect(records[1]) == Evidence.ENTRY  # a user message
    assert detect(records[2]) == Evidence.ENTRY  # $set
    assert detect(records[8]) == Evidence.ENTRY  # $rewindTo
    qwen = [r.value for r in iter_records(QWEN)]
    assert {detect(v) for v in qwen} == {Evidence.WRAPPER}  # Qwen Code, not Claude Code's {role, content}
    claude_line = {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": "hi"}}
    assert detect(claude_line) is None
    assert detect({"role": "model", "parts": [{"text": "x"}]}) == Evidence.SHAPE  # an older saved chat's element


def test_legacy_session_totals() -> None:
    # By hand: cached 0 + 9800 + 0; uncached (10000 - 0) + (10600 - 9800) + (11000 - 0 + 5 tool);
    # output (200 + 300 thoughts) + 150 + (50 + 20 thoughts); no writes (implicit caching).
    assert _sums(LEGACY) == (3, 9800, 21805, 0, 720)
    _, summary = _read(LEGACY)
    assert summary.skipped == ((1, "model message without tokens (its call's usage was not recorded)"),)
    assert any("sum to 32,325 (input + tool + output + thoughts; the same as the calls' prompt + output counted here)" in note for note in summary.notes)


def test_jsonl_session_2026() -> None:
    requests, summary = _read(JSONL)
    # g1 written twice (its tool calls landed later) counts once, at the first line with tokens.
    assert [(r.request_id, r.line) for r in requests] == [("g1", 4), ("g2", 6), ("g3", 8), ("g4", 11), ("g5", 15)]
    # By hand: cached 0 + 7900 + 8300 + 8300 + 0; uncached 8000 + 500 + 300 + 250 + 1500;
    # output (120 + 80) + 60 + (30 + 10) + 40 + 25.
    assert _sums(JSONL) == (5, 24500, 10550, 0, 365)
    node = {r.request_id: r.prefix.node for r in requests}
    parents = [r.prefix.parent for r in requests]
    # g2 follows g1's tool call; the rewind to before u2 makes g4 extend g2, not g3; the
    # compressed history ($set.messages replacing the list) starts a new chain.
    assert parents == [None, node["g1"], node["g2"], node["g2"], None]
    assert requests[1].sent_ms == requests[0].sent_ms + 5000  # sent when the tool call ended
    assert [kind for kind, _ in requests[3].events] == ["rewind", "user_turn"]
    assert [kind for kind, _ in requests[4].events] == ["compaction", "user_turn", "model_change"]
    assert summary.skipped == ((16, "error shown by the CLI (a failed call or a CLI error): not a counted call"),)
    assert any("sum to 35,415" in note and "the same as the calls' prompt + output counted here)" in note for note in summary.notes)


def test_a_compressed_history_is_a_compaction_in_the_audit() -> None:
    rows = run_audit([JSONL]).rows
    assert rows[-1].cause == "compaction" and "history rewritten, 5 -> 2 messages" in rows[-1].detail


def test_rollback_of_an_aborted_turn_is_no_compaction(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in JSONL.read_text().splitlines()][:8]
    # The CLI rolls the history back to before u2 (an aborted turn) with $set.messages.
    kept = [lines[1], lines[4], lines[5]]
    lines += [{"$set": {"messages": kept}}, {"id": "u9", "timestamp": "2026-05-04T09:04:00.000Z", "type": "user", "content": "again"},
              {"id": "g9", "timestamp": "2026-05-04T09:04:02.000Z", "type": "gemini", "content": "x", "model": "gemini-2.5-pro",
               "tokens": {"input": 8450, "output": 5, "cached": 8300, "total": 8455}}]
    requests, _ = _read(write(tmp_path / "rollback.jsonl", "\n".join(map(json.dumps, lines))))
    assert requests[-1].prefix.parent == requests[1].prefix.node
    assert "compaction" not in dict(requests[-1].events)


def test_messages_in_a_batch_and_as_lines_count_once(tmp_path: Path) -> None:
    """0.39+ files hold messages both in {"$set": {"messages": [...]}} batches and as lines of their
    own; a call is counted once, whichever comes first, and one only a batch holds is counted."""
    lines = [json.loads(line) for line in JSONL.read_text().splitlines()][:6]
    batch = {"$set": {"messages": [lines[1], lines[4], lines[5]]}}
    only_in_batch = {"id": "g7", "timestamp": "2026-05-04T09:00:20.000Z", "type": "gemini", "content": "x", "model": "gemini-2.5-pro",
                     "tokens": {"input": 8500, "output": 5, "cached": 8400, "total": 8505}}
    doc = [lines[0], batch, lines[1], lines[3], lines[4], lines[5], {"$set": {"messages": [lines[1], lines[4], lines[5], only_in_batch]}}]
    requests, _ = _read(write(tmp_path / "batches.jsonl", "\n".join(map(json.dumps, doc))))
    assert [r.request_id for r in requests] == ["g1", "g2", "g7"]
    assert [r.prefix.parent for r in requests] == [None, requests[0].prefix.node, requests[1].prefix.node]


def test_qwen_code_session() -> None:
    requests, summary = _read(QWEN)
    assert [(r.lane, r.lane_kind, r.model) for r in requests] == [
        ("main", "main", "qwen3-coder-plus"), ("main", "main", "qwen3-coder-plus"),
        ("agent:explore-1", "subagent", "qwen3-coder-flash"), ("main", "main", "qwen3-coder-plus"),
    ]
    # By hand: cached 11900; uncached 12000 + 500 + 3000 + 1300; output 80 + 50 + 20 + (40 + 15).
    assert _sums(QWEN) == (4, 11900, 16800, 0, 205)
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert requests[3].prefix.parent is None and dict(requests[3].events)["compaction"] == "chat compression"
    assert {r.agent_version for r in requests} == {"0.8.2"}
    assert any("Qwen Code's own token totals sum to 28,905" in note and "the same as the calls' prompt + output counted here)" in note for note in summary.notes)


def test_saved_chats_hold_no_usage(tmp_path: Path) -> None:
    requests, summary = _read(CHECKPOINT)
    assert requests == [] and any("no calls to audit" in note for note in summary.notes)
    older = tmp_path / "checkpoint-old.json"  # before {history, authType}: a bare list of Content
    older.write_text(json.dumps(json.loads(CHECKPOINT.read_text())["history"], indent=2))
    assert detect_format(older) is FORMAT and _read(older)[0] == []


def test_a_subagent_session_is_a_subagent_lane(tmp_path: Path) -> None:
    doc = json.loads(LEGACY.read_text())
    doc["kind"] = "subagent"
    requests, _ = _read(write(tmp_path / "sub.json", json.dumps(doc, indent=2)))
    assert {(r.lane, r.lane_kind) for r in requests} == {("main", "subagent")}
    assert {_kind(r) for r in requests} == {"gemini-cli:subagent"}


def test_the_head_is_one_per_workspace_and_model(tmp_path: Path) -> None:
    """Gemini CLI's system prompt is built from the workspace's GEMINI.md and the model's variant,
    its tools from the workspace's MCP servers: two workspaces' sessions (the file's projectHash,
    else the folder its chats/ is in) and two models do not share a head. Before, every session
    had the one head ``gemini-cli:main``, its size learned from whichever workspace came first."""
    doc = json.loads(LEGACY.read_text())
    heads = {}
    for project in ("aaaa", "bbbb"):
        requests, _ = _read(write(tmp_path / f"{project}.json", json.dumps(dict(doc, projectHash=project), indent=2)))
        heads[project] = {r.model: r.prefix.head for r in requests}
    assert len(heads["aaaa"]) == 2 and set(heads["aaaa"]) == set(heads["bbbb"])
    assert all("aaaa" in head and "bbbb" not in head for head in heads["aaaa"].values())
    assert not set(heads["aaaa"].values()) & set(heads["bbbb"].values())
    assert len(set(heads["aaaa"].values())) == 2  # one per model
    # A file that names no projectHash (.jsonl message lines, no metadata line): the folder its chats/ is in.
    lines = "".join(json.dumps(message) + "\n" for message in doc["messages"])
    for project in ("one", "two"):
        chats = tmp_path / "tmp" / project / "chats"
        chats.mkdir(parents=True)
        (chats / "session.jsonl").write_text(lines)
    one = {r.prefix.head for r in _read(tmp_path / "tmp/one/chats/session.jsonl")[0]}
    two = {r.prefix.head for r in _read(tmp_path / "tmp/two/chats/session.jsonl")[0]}
    assert one and two and not one & two
    assert all(str(tmp_path / "tmp" / "one") in head for head in one)


def test_all_zero_tokens_are_a_call_whose_usage_was_not_recorded(tmp_path: Path) -> None:
    """Regression (a real public session, yoavf/ai-sessions): Gemini CLI wrote tokens of all
    zeros on a model message with tool calls. No call has an empty prompt: it is skipped and
    listed like a message without tokens, not counted as a cold start of 0 tokens that leaves
    the next request's read unexplained."""
    doc = json.loads(LEGACY.read_text())
    first = next(m for m in doc["messages"] if m.get("tokens"))
    first["tokens"] = dict.fromkeys(("input", "output", "cached", "thoughts", "tool", "total"), 0)
    requests, summary = _read(write(tmp_path / "zeros.json", json.dumps(doc, indent=2)))
    assert len(requests) == 2 and all(r.usage.prompt > 0 for r in requests)
    assert (1, "model message whose tokens are all zero (its call's usage was not recorded)") in summary.skipped
    # Not every zero is "not recorded": a call with output but no prompt still is read (and its
    # sums checked), and zeros of another type are left to the field checks.
    first["tokens"] = {"input": 0, "output": 3, "cached": 0, "total": 3}
    assert len(_read(write(tmp_path / "output.json", json.dumps(doc, indent=2)))[0]) == 3
    first["tokens"] = {"input": 0.0, "output": 0, "cached": 0, "total": 0}
    with pytest.raises(UserError):
        _read(write(tmp_path / "float.json", json.dumps(doc, indent=2)))


def test_cached_above_the_prompt_is_refused(tmp_path: Path) -> None:
    doc = json.loads(LEGACY.read_text())
    doc["messages"][2]["tokens"]["cached"] = 20000
    with pytest.raises(UserError, match="cached tokens \\(20000\\) exceed the prompt \\(10600\\)"):
        _read(write(tmp_path / "bad.json", json.dumps(doc, indent=2)))


def test_the_provider_comes_from_the_table_by_model_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """No provider is named here: whatever rule of the table takes the model's name serves it
    (the Gemini rules, once the table has them)."""
    expected = provider_of_model("gemini-2.5-pro")
    assert {r.provider for r in _read(LEGACY)[0]} == {expected.name if expected and expected.reports_usage else "unknown"}
    planted = replace(OPENAI, name="planted", model_prefixes=("gemini",))
    monkeypatch.setattr(providers, "PROVIDERS", {"planted": planted, **providers.PROVIDERS})
    assert {r.provider for r in _read(LEGACY)[0]} == {"planted"}


def test_a_folder_holding_one_session_json_is_audited(tmp_path: Path) -> None:
    """Regression: the folder walk took any one-object .json of 1 MiB or less for metadata
    ("no log files (*.jsonl, *.json) in this folder")."""
    chats = tmp_path / "chats"
    chats.mkdir()
    (chats / "session-2025-10-01T10-00-5f0c2a9e.json").write_bytes(LEGACY.read_bytes())
    (chats / "agent-1.meta.json").write_text('{"agentType": "explore"}')  # metadata stays skipped
    requests, summaries = load_trace([tmp_path])
    assert len(requests) == 3
    assert [s.format for s in summaries] == ["not-a-log", "gemini-cli"]


def test_a_json_session_migrated_to_jsonl_on_resume_is_counted_once(tmp_path: Path) -> None:
    """Gemini CLI 0.39 on: resuming a pre-0.39 ``session-*.json`` writes its metadata and every
    message again into ``session-*.jsonl`` beside it (the .json is left), then appends the new
    turns there. Main counted the copied calls twice."""
    legacy = json.loads(LEGACY.read_text())
    chats = tmp_path / "chats"
    chats.mkdir()
    (chats / "session-2025-10-01T10-00-5f0c2a9e.json").write_text(json.dumps(legacy, indent=2))
    meta = {k: v for k, v in legacy.items() if k != "messages"}
    new_user = {"id": "u3", "timestamp": "2025-10-02T09:00:00.000Z", "type": "user", "content": [{"text": "and now?"}]}
    new_call = {"id": "g5", "timestamp": "2025-10-02T09:00:04.000Z", "type": "gemini", "content": [{"text": "done"}],
                "model": legacy["messages"][4].get("model", "gemini-2.5-pro"),
                "tokens": {"input": 5000, "output": 50, "cached": 4000, "thoughts": 0, "tool": 0, "total": 5050}}
    lines = [meta, *legacy["messages"], {"$set": {"sessionId": legacy["sessionId"]}}, new_user, new_call]
    (chats / "session-2025-10-01T10-00-5f0c2a9e.jsonl").write_text("".join(json.dumps(v) + "\n" for v in lines))
    requests, summaries = load_trace([tmp_path])
    assert len(requests) == 3 + 1
    jsonl = next(s for s in summaries if s.file.endswith(".jsonl"))
    assert jsonl.requests == 1 and sum("already counted from another file" in why for _, why in jsonl.skipped) == 3
    # The new call extends the chain the legacy file's calls built.
    last_legacy = [r for r in requests if r.file.endswith(".json")][-1]
    assert requests[-1].prefix is not None and last_legacy.prefix is not None
    assert requests[-1].prefix.parent == last_legacy.prefix.node
    # Each file read alone still reads all of its calls.
    assert len(_read(chats / "session-2025-10-01T10-00-5f0c2a9e.jsonl")[0]) == 4
    # Read in workers (audit --jobs 2), the copy is still counted once, in the same trace.
    import functools

    from prefixbench.workloads.runs.execute import map_runs

    assert load_trace([tmp_path], map_files=functools.partial(map_runs, jobs=2)) == (requests, summaries)


def test_a_session_copied_into_a_project_named_folder_is_counted_once_and_said_so(tmp_path: Path) -> None:
    """Gemini CLI 0.29 on copies ``~/.gemini/tmp/<hash>/`` into ``~/.gemini/tmp/<project>/`` and
    leaves the old folder: a ``.json`` session is there twice, and its bytes differ once either is
    written again (here the project's copy got a ``summary``). Its calls are counted once, and the
    skip said they came from a .json migrated to .jsonl on resume (a committed home: 290 calls)."""
    legacy = json.loads(LEGACY.read_text())
    name = "session-2025-10-01T10-00-5f0c2a9e.json"
    for folder, session in (("5c81" * 16, legacy), ("my-project", {**legacy, "summary": "Review the parser"})):
        (tmp_path / folder / "chats").mkdir(parents=True)
        (tmp_path / folder / "chats" / name).write_text(json.dumps(session, indent=2))
    requests, summaries = load_trace([tmp_path])
    assert len(requests) == 3
    copy = next(s for s in summaries if s.requests == 0)
    assert [why for _, why in copy.skipped if "already counted" in why] == [SEEN_COPY] * 3
    assert all(".jsonl" not in why for _, why in copy.skipped)


def test_a_qwen_code_branch_copy_is_counted_once(tmp_path: Path) -> None:
    """Qwen Code's /branch copies a session's records verbatim into a new session file (same
    uuid, sessionId rewritten, ``forkedFrom {sessionId, messageUuid}``). Main counted the copied
    calls again in the branch."""
    parent = [json.loads(line) for line in QWEN.read_text().splitlines() if line.strip()][:4]
    branch = []
    for record in parent:
        copy = dict(record, sessionId="branch-qwen", forkedFrom={"sessionId": record["sessionId"], "messageUuid": record["uuid"]})
        branch.append(copy)
    branch.append(dict(parent[0], uuid="b1", parentUuid="q4", sessionId="branch-qwen", timestamp="2026-03-10T13:00:00.000Z"))
    branch.append(dict(parent[1], uuid="b2", parentUuid="b1", sessionId="branch-qwen", timestamp="2026-03-10T13:00:03.000Z",
                       usageMetadata={"promptTokenCount": 12600, "candidatesTokenCount": 30, "cachedContentTokenCount": 12400, "totalTokenCount": 12630}))
    (tmp_path / "a-parent.jsonl").write_text("".join(json.dumps(r) + "\n" for r in parent))
    (tmp_path / "b-branch.jsonl").write_text("".join(json.dumps(r) + "\n" for r in branch))
    requests, summaries = load_trace([tmp_path])
    assert [(Path(s.file).name, s.requests) for s in summaries] == [("a-parent.jsonl", 2), ("b-branch.jsonl", 1)]
    assert sum("/branch copy" in why for s in summaries for _, why in s.skipped) == 2
    last_parent, branch_call = requests[1], requests[2]
    assert branch_call.prefix is not None and last_parent.prefix is not None
    assert branch_call.prefix.parent == last_parent.prefix.node
    # Read in the other order (or alone), the copies stand for the calls once all the same.
    requests, _ = load_trace([tmp_path / "b-branch.jsonl", tmp_path / "a-parent.jsonl"])
    assert len(requests) == 3
    assert len(_read(tmp_path / "b-branch.jsonl")[0]) == 3


def test_mutated_sessions_end_cleanly() -> None:
    """Fuzz: every version's file, mutated, ends in exit 0 or one line with exit 2."""
    tally = Tally("gemini-cli", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-gemini-"))
    seeds = [path.read_bytes() for path in (LEGACY, JSONL, QWEN, CHECKPOINT)]
    zeros = json.loads(LEGACY.read_text())  # a call whose usage was not recorded: tokens all zero
    next(m for m in zeros["messages"] if m.get("tokens"))["tokens"] = dict.fromkeys(("input", "output", "cached", "total"), 0)
    seeds.append(json.dumps(zeros, indent=2).encode())

    @fuzz_settings(25)
    @given(seed=st.sampled_from(seeds), data=st.data(), explicit=st.booleans())
    def case(seed: bytes, data: st.DataObject, explicit: bool) -> None:
        path = write(folder / "session.json", data.draw(mutated(seed)))
        tally.check(["audit", str(path), "--quiet", *(["--input", "gemini-cli"] if explicit else [])])

    case()
    assert tally.outcomes["crash"] == 0


def test_mutated_migrated_sessions_end_cleanly() -> None:
    """Fuzz: a legacy .json beside a mutated .jsonl copy of it (the migration on resume), audited
    as a folder: exit 0 or one line with exit 2."""
    tally = Tally("gemini-cli migrated", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-gemini-migrated-"))
    legacy = json.loads(LEGACY.read_text())
    (folder / "session-a.json").write_text(json.dumps(legacy))
    meta = {k: v for k, v in legacy.items() if k != "messages"}
    seed = "".join(json.dumps(v) + "\n" for v in [meta, *legacy["messages"]]).encode()

    @fuzz_settings(15)
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        write(folder / "session-a.jsonl", data.draw(mutated(seed)))
        tally.check(["audit", str(folder), "--quiet"])

    case()


def test_mutated_qwen_branches_end_cleanly() -> None:
    """Fuzz: a Qwen Code session beside a mutated /branch copy of it (forkedFrom on each record),
    audited as a folder: exit 0 or one line with exit 2."""
    tally = Tally("qwen-code branch", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-qwen-branch-"))
    parent = [json.loads(line) for line in QWEN.read_text().splitlines() if line.strip()]
    (folder / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in parent))
    copies = [dict(r, sessionId="b", forkedFrom={"sessionId": r["sessionId"], "messageUuid": r["uuid"]}) for r in parent]
    seed = "".join(json.dumps(r) + "\n" for r in copies).encode()

    @fuzz_settings(15)
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        write(folder / "b.jsonl", data.draw(mutated(seed)))
        tally.check(["audit", str(folder), "--quiet"])

    case()


def _three_calls(path: Path, model: str) -> Path:
    """A session of three calls on ``model``, each prompt extending the last: 5,000, 9,000 and
    12,000 tokens, the second reading 3,900 and the third 7,840 (as Gemini 3 Flash reads: a
    checkpoint short of the previous prompt)."""
    return gemini_session(path, model, [(5_000, 0), (9_000, 3_900), (12_000, 7_840)], at="2026-05-06T10:00", step=2, output=10, thoughts=0)


def test_gemini_3_flash_reads_the_last_checkpoint_inside_the_previous_prompt(tmp_path: Path) -> None:
    # gemini-3-flash reads only at multiples of 3,924 tokens (measured): the second call's shared
    # prefix is the first prompt, 5,000 tokens, whose last checkpoint is 1 x 3,924 (reported
    # 3,900: 0.6% off); the third's is 9,000, so 2 x 3,924 = 7,848 (reported 7,840: 0.1% off).
    # Read to the token, the prediction would be 5,000 and 9,000: 28% and 15% off.
    result = run_audit([_three_calls(tmp_path / "flash.jsonl", "gemini-3-flash-preview")])
    assert [r.predicted_cache_read for r in result.rows] == [0, 3_924, 7_848]
    assert [r.read_within for r in result.rows] == [True, True, True]
    assert any("3 request(s) of gemini-3-flash-preview in steps of 3,924 tokens" in n for n in result.notes)
    # No grid measured on 2.5 Pro: its reads are predicted to the token, and no note.
    pro = run_audit([_three_calls(tmp_path / "pro.jsonl", "gemini-2.5-pro")], follow_reads=False)
    assert [r.predicted_cache_read for r in pro.rows] == [0, 5_000, 9_000]
    assert not any("checkpoints" in n for n in pro.notes)
    # By default a read keeps to the checkpoint the previous call read (3,900), no grid to raise it
    # (3.1 Pro); a 2.5 Pro read trails the previous prompt by 1,000 instead, once that prompt left
    # 2,000 or more uncached past its read (9,000 - 3,900: 8,000, against 7,840 read).
    followed = run_audit([_three_calls(tmp_path / "pro31.jsonl", "gemini-3.1-pro-preview")])
    assert [r.predicted_cache_read for r in followed.rows] == [0, 5_000, 3_900]
    # (2.5's second call reads nothing: its lane has read nothing yet, unread_until_read.)
    followed = run_audit([_three_calls(tmp_path / "pro.jsonl", "gemini-2.5-pro")])
    assert [r.predicted_cache_read for r in followed.rows] == [0, 0, 8_000]


def flash_session(path: Path, minute: str, calls: list[tuple[int, int]]) -> Path:
    """A Gemini CLI JSONL session of gemini-3-flash-preview started at ``minute`` (``2026-03-26T04:30``):
    a user turn, then one model message per ``(prompt, cached)``, 2 s apart."""
    lines = [{"sessionId": "s", "projectHash": "p", "startTime": f"{minute}:00.000Z", "lastUpdated": f"{minute}:00.000Z", "kind": "main"},
             {"id": "u1", "timestamp": f"{minute}:00.000Z", "type": "user", "content": [{"text": "fix it"}]}]
    for i, (prompt, cached) in enumerate(calls):
        lines.append({"id": f"g{i}", "timestamp": f"{minute}:{2 * i + 1:02d}.000Z", "type": "gemini", "content": "ok",
                      "tokens": {"input": prompt, "output": 10, "cached": cached, "thoughts": 0, "tool": 0, "total": prompt + 10},
                      "model": "gemini-3-flash-preview"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path

def test_gemini_3_flash_of_march_2026_is_read_in_the_same_steps(tmp_path: Path) -> None:
    # Sent on 2026-03-26, the same model read on no grid: each read a varying amount short of the
    # previous prompt (here 1,300 of 9,000 and 1,500 of 17,000, as the aim sessions' lags, 0 to
    # ~3,700). The step is not dated (a March rule to the token fits 18 fewer of 1,328 real Flash
    # calls): the reads are still predicted in steps, 2 x 3,924 = 7,848 (reported 7,700: 1.9% off)
    # and 4 x 3,924 = 15,696 (reported 15,500: 1.3% off), where to the token 9,000 and 17,000
    # would be 17% and 9.7% off. The audit's note says what the step rests on for March.
    path = flash_session(tmp_path / "march.jsonl", "2026-03-26T04:30", [(9_000, 0), (17_000, 7_700), (26_000, 15_500)])
    result = run_audit([path])
    assert [r.predicted_cache_read for r in result.rows] == [0, 7_848, 15_696]
    assert [r.read_within for r in result.rows] == [True, True, True]
    note = next(n for n in result.notes if "3 request(s) of gemini-3-flash-preview in steps of 3,924 tokens" in n)
    assert "sessions of the same model in March 2026 read on no grid" in note
    assert "905 against 887 of 1,234 within 3%" in note


def _managed(uuid: str, parent: str, n: int, kind: str, payload: dict, subtype: str = "managed_session_event_v1") -> dict:
    """A record of Qwen Code's managed engine: a system record whose ``managedSession`` is a journal
    event; its contents (and a call's usage) are resources referenced by digest, kept elsewhere."""
    ref = {"resourceId": f"res-{n}", "kind": "usage", "schemaVersion": 1, "byteLength": 96, "digest": "9" * 64}
    event = {"v": 1, "sequence": n, "eventId": f"evt-{n}", "kind": kind, "occurredAt": 1_793_000_000_000 + n,
             "sessionKey": {"tenantId": "local", "workspaceId": "w", "sessionId": "6c1e9b7a-qwen"},
             "payload": {k: (ref if v == "REF" else v) for k, v in payload.items()}}
    return {"uuid": uuid, "parentUuid": parent, "sessionId": "6c1e9b7a-qwen", "cwd": "/w", "version": "0.31.0",
            "timestamp": "2026-11-02T10:00:00.000Z", "type": "system", "subtype": subtype, "managedSession": event}


def test_qwen_code_managed_engine_records_are_listed_not_miscounted(tmp_path: Path) -> None:
    header = _managed("m0", "q7", 0, "", {}, "managed_session_header_v1")
    header["managedSession"] = {"formatVersion": 1, "minimumReader": "managed-session/1", "engine": "managed", "createdBy": "cli"}
    managed = [
        header,
        _managed("m1", "m0", 1, "model.attempt", {"attemptId": "a1", "state": "started", "usageRef": None}),
        _managed("m2", "m1", 2, "model.attempt", {"attemptId": "a1", "state": "output_committed", "usageRef": "REF"}),
        _managed("m3", "m2", 3, "message.committed", {"messageId": "x1", "role": "assistant", "contentRef": "REF"}),
    ]
    # Alone (a session the managed engine started): Qwen Code's, not a Claude Code transcript.
    alone = write(tmp_path / "managed.jsonl", "".join(json.dumps(r) + "\n" for r in managed))
    assert detect_format(alone) is FORMAT
    requests, summary = _read(alone)
    assert requests == [] and summary.skipped == ((3, "managed-engine model call: its usage is a resource outside the file (usageRef), not read"),)
    assert "4 Qwen Code managed-engine record(s)" in summary.notes[0]
    # After an ordinary prefix (a session moved to the managed engine): the prefix's calls, the same sums.
    mixed = write(tmp_path / "mixed.jsonl", QWEN.read_text() + "".join(json.dumps(r) + "\n" for r in managed))
    assert _sums(mixed) == _sums(QWEN) == (4, 11900, 16800, 0, 205)
    assert [line for line, _ in _read(mixed)[1].skipped] == [len(QWEN.read_text().splitlines()) + 3]


def test_a_gemini_3_flash_read_a_little_short_of_its_checkpoint_is_no_miss(tmp_path: Path) -> None:
    # The May session's reads of one checkpoint vary by 36-331 tokens below k x 3,924 (15,486 to
    # 15,534 for 4 x 3,924 = 15,696), while a checkpoint really lost costs 3,924 or more. Call 2
    # reads 15,486 of a 15,903-token previous prompt: 210 short of 15,696, no miss (was a
    # provider-best-effort miss of 210 tokens). Call 3 reads 11,700 of a 16,689-token prompt:
    # 3,996 short, a miss.
    path = flash_session(tmp_path / "may.jsonl", "2026-05-06T10:00", [(15_903, 0), (16_689, 15_486), (18_228, 11_700)])
    rows = run_audit([path]).rows
    assert [(r.expected_cache_read, r.lost_tokens, r.cause) for r in rows[1:]] == [(15_696, 0, None), (15_696, 3_996, "provider-best-effort")]
    assert rows[1].detail == ("read 210 tokens short of the 15,696 predicted, within the 400 its provider's counts of one "
                              "checkpoint vary by: no miss")
    # Read to the token (--read-step gemini=1), there is no checkpoint grid and no slack.
    from prefixbench.workloads.audit.core import assume_read_steps, audit_requests, load_trace

    requests, summaries = load_trace([path])
    exact = audit_requests(assume_read_steps(requests, {"gemini": 1}), summaries).rows
    assert [(r.expected_cache_read, r.lost_tokens) for r in exact[1:]] == [(15_903, 417), (16_689, 4_989)]


def _plan_mode_session(tmp_path: Path, plan_result: str) -> Path:
    """Plan Mode on gemini-3.1-pro, then flash once the plan's verdict comes back: the shared
    head is the ~7.9K start of the system prompt both modes send (each flash read below is two
    3,924-token checkpoints of it)."""
    t = iter(f"2026-06-15T18:{m:02d}:00.000Z" for m in range(60))

    def call(mid: str, model: str, prompt: int, cached: int, tools: list | None = None) -> dict:
        out = {"id": mid, "timestamp": next(t), "type": "gemini", "content": "", "model": model,
               "tokens": {"input": prompt, "output": 10, "cached": cached, "thoughts": 0, "tool": 0, "total": prompt + 10}}
        return out | ({"toolCalls": tools} if tools else {})

    def user(mid: str, text: str) -> dict:
        return {"id": mid, "timestamp": next(t), "type": "user", "content": [{"text": text}]}

    verdict = [{"id": "x1", "name": "exit_plan_mode", "status": "success", "args": {},
                "result": [{"functionResponse": {"id": "x1", "name": "exit_plan_mode", "response": {"output": plan_result}}}]}]
    lines = [
        {"sessionId": "s1", "projectHash": "p", "startTime": "2026-06-15T18:00:00.000Z", "kind": "main"},
        user("u1", "fix it"),
        call("g1", "gemini-3-flash-preview", 12_000, 0),
        user("u2", "more"),
        call("g2", "gemini-3-flash-preview", 14_000, 11_772),
        user("u3", "plan it"),
        call("g3", "gemini-3.1-pro-preview", 15_000, 0),
        call("g4", "gemini-3.1-pro-preview", 17_000, 14_950, verdict),
        call("g5", "gemini-3-flash-preview", 18_000, 7_870),
        user("u4", "User has manually exited Plan Mode. Switching to Default mode (edits will require confirmation)."),
        call("g6", "gemini-3-flash-preview", 19_000, 7_880),
    ]
    return write(tmp_path / "plan.jsonl", "\n".join(map(json.dumps, lines)))


def test_an_approved_plan_or_a_manual_exit_from_plan_mode_changes_the_system_prompt(tmp_path: Path) -> None:
    # Gemini CLI's system prompt depends on the approval mode: after an approved plan (here with
    # the switch to flash) or the user's manual exit, the next call starts a new chain after the
    # head, which the audit sizes from those calls' reads (bhanu7410/personal_finance,
    # gemini_session.json: 6 of the 12 reads after a model switch were 7,855-7,910, the rest 0).
    requests, _ = _read(_plan_mode_session(tmp_path, "Plan approved. Switching to Auto-Edit mode (edits will be applied automatically)."))
    by_id = {r.request_id: r for r in requests}
    assert [by_id[k].prefix.parent is None for k in ("g1", "g2", "g3", "g4", "g5", "g6")] == [True, False, False, False, True, True]
    assert "system_change" in dict(by_id["g5"].events) and "Plan approved" in dict(by_id["g5"].events)["system_change"]
    assert "manually exited" in dict(by_id["g6"].events)["system_change"]
    rows = run_audit([tmp_path / "plan.jsonl"]).rows
    # g5 and g6 read as the head (two checkpoints), not flash's own 14,000-token prompt of before.
    assert [r.predicted_cache_read for r in rows][-2:] == [7_848, 7_848]


def test_a_rejected_plan_stays_in_plan_mode(tmp_path: Path) -> None:
    requests, _ = _read(_plan_mode_session(tmp_path, "Plan rejected. User feedback: more detail."))
    g5 = next(r for r in requests if r.request_id == "g5")
    assert g5.prefix.parent is not None and "system_change" not in dict(g5.events)


def _prompt_log(session: str, *prompts: str) -> list[dict]:
    """Gemini CLI's logs.json (``LogEntry`` of its core's logger.ts): each prompt the user typed."""
    return [{"sessionId": session, "messageId": n, "timestamp": f"2025-10-01T10:0{n}:00.000Z", "type": "user", "message": text}
            for n, text in enumerate(prompts)]


def test_a_logs_json_of_typed_prompts_is_gemini_clis_and_says_where_the_calls_are(tmp_path: Path) -> None:
    # ~/.gemini/tmp/<project hash>/logs.json sits beside chats/: the prompts typed, no call. Main took
    # its entries for Claude Code transcript entries (a type "user" with a sessionId) and refused
    # the file with Claude Code's note ("system prompt and tools are not in a transcript"), and a
    # walk of the project folder listed it as a Claude Code transcript.
    project = tmp_path / "f360e83f"
    chats = project / "chats"
    chats.mkdir(parents=True)
    (chats / "session-2025-10-01T10-00-5f0c2a9e.json").write_bytes(LEGACY.read_bytes())
    logs = project / "logs.json"
    logs.write_text(json.dumps(_prompt_log("5f0c2a9e-1111-4222-8333-944455556666", "fix the build", "/quit"), indent=2))
    assert detect_format(logs) is FORMAT
    requests, summary = _read(logs)
    assert requests == [] and any("logs.json: the prompts the user typed" in n and "chats/" in n for n in summary.notes)
    requests, summaries = load_trace([project])
    assert len(requests) == 3 and sorted(s.format for s in summaries) == ["gemini-cli", "gemini-cli"]


def test_a_logs_json_points_at_no_session_that_holds_no_call_either(tmp_path: Path) -> None:
    # A logs.json named before its project's chats/, whose one session has no model reply: the line
    # told the user to "audit the session files under chats/ beside it", which it had just read.
    project = tmp_path / "f360e83f"
    (project / "chats").mkdir(parents=True)
    session = project / "chats" / "session-2025-10-01T10-00-5f0c2a9e.json"
    session.write_text(json.dumps({
        "sessionId": "5f0c2a9e-1111-4222-8333-944455556666", "projectHash": "ab", "startTime": "2025-10-01T10:00:00.000Z",
        "lastUpdated": "2025-10-01T10:01:00.000Z",
        "messages": [{"id": "m1", "timestamp": "2025-10-01T10:00:00.000Z", "type": "user", "content": "fix the build"}]}))
    logs = project / "logs.json"
    logs.write_text(json.dumps(_prompt_log("5f0c2a9e-1111-4222-8333-944455556666", "fix the build"), indent=2))
    _, summaries = load_trace([logs, project / "chats"])
    assert nothing_to_audit(summaries) == (
        f"nothing to audit: no model call with usage in the logs given ({logs}: a Gemini CLI logs.json: the prompts the "
        "user typed (sessionId, messageId, message), no model call or usage: no calls to audit here; "
        f"{session}: no model call in this Gemini CLI session: its 1 message(s) are 1 user message(s) and no model reply)")
    _, summaries = load_trace([logs])  # (alone, it still says where the calls are)
    assert nothing_to_audit(summaries).endswith("no calls to audit here (audit the session files under chats/ beside it))")


def test_a_logs_json_in_a_qwen_home_is_named_qwen_codes(tmp_path: Path) -> None:
    # Qwen Code (a Gemini CLI fork) writes the same logs.json to ~/.qwen/tmp/<project hash>/: a
    # committed .qwen home holding only that file was refused as "a Gemini CLI logs.json".
    project = tmp_path / "home" / ".qwen" / "tmp" / "94a6b447"
    project.mkdir(parents=True)
    logs = project / "logs.json"
    logs.write_text(json.dumps(_prompt_log("0c1d2e3f-1111-4222-8333-944455556666", "add a login page"), indent=2))
    requests, summaries = load_trace([tmp_path / "home" / ".qwen"])
    notes = [n for s in summaries for n in s.notes if "logs.json" in n]
    assert requests == [] and len(notes) == 1 and notes[0].startswith("a Qwen Code logs.json: the prompts the user typed")
    gemini = tmp_path / "home" / ".gemini" / "tmp" / "94a6b447"
    gemini.mkdir(parents=True)
    (gemini / "logs.json").write_text(logs.read_text())
    requests, summaries = load_trace([tmp_path / "home" / ".gemini"])
    assert any(n.startswith("a Gemini CLI logs.json: the prompts") for s in summaries for n in s.notes)


def _qwen_runtime(session: str, version: str = "0.18.5") -> dict:
    """The file Qwen Code writes beside a session's chats/<id>.jsonl (``<id>.runtime.json``): the
    running process, no message and no usage."""
    return {"schema_version": 1, "pid": 1224, "session_id": session, "work_dir": "C:\\Users\\me", "hostname": "DESK",
            "started_at": 1782130550.124, "qwen_version": version}


def test_a_qwen_runtime_file_is_named_and_points_at_its_session(tmp_path: Path) -> None:
    # A committed ~/.qwen (Qwen Code 0.18.5, 2026-06) held chats/<id>.runtime.json and no session:
    # the file was refused as an "unknown log format", a walk of the home as "no record of a format
    # audit reads", not saying what the file is nor where the calls are.
    chats = tmp_path / ".qwen" / "projects" / "c--users-me" / "chats"
    chats.mkdir(parents=True)
    sid = "054b8439-3658-4ea0-913d-366f134893b7"
    runtime = chats / f"{sid}.runtime.json"
    runtime.write_text(json.dumps(_qwen_runtime(sid), indent=2))
    assert detect(_qwen_runtime(sid)) is Evidence.SHAPE
    assert detect_format(runtime) is FORMAT
    requests, summary = _read(runtime)
    assert requests == [] and summary.notes[-1] == (
        "a Qwen Code runtime file (Qwen Code 0.18.5): the process that ran the session (pid, host, folder, start), "
        "no model call or usage: no calls to audit here (audit the session's .jsonl of the same name beside it)")
    _, summaries = load_trace([tmp_path / ".qwen"])
    assert nothing_to_audit(summaries) == (
        f"nothing to audit: no model call with usage in the logs given ({runtime}: " + summary.notes[-1] + ")")
    # Beside its session, it adds no call and the session is read as ever.
    session = chats / f"{sid}.jsonl"
    session.write_bytes(QWEN.read_bytes())
    alone, _ = load_trace([session])
    requests, summaries = load_trace([chats])
    assert len(requests) == len(alone) > 0 and sorted(s.format for s in summaries) == ["gemini-cli", "gemini-cli"]
    # Another object with a pid and a session id is no such file.
    assert detect({"pid": 1, "session_id": sid}) is None


def test_a_session_of_only_its_context_says_it_holds_no_model_reply(tmp_path: Path) -> None:
    # Cloud Shell's Gemini agent (the CLI's a2a-server) writes a session file per chat it opens:
    # its header, then a $set of the first user message (the session context). Committed homes
    # hold many of these, none answered; the audit refused them quoting the note on the opaque
    # head, which says nothing of why there was no call.
    chats = tmp_path / ".gemini" / "tmp" / "demo" / "chats"
    chats.mkdir(parents=True)
    head = {"sessionId": "a2a-server", "projectHash": "ab12", "startTime": "2026-07-06T19:05:00.000Z",
            "lastUpdated": "2026-07-06T19:05:00.000Z", "kind": "main"}
    context = {"id": "c0ffee", "timestamp": "2026-07-06T19:05:00.010Z", "type": "user",
               "content": [{"text": "<session_context>This is the Gemini CLI.</session_context>"}]}
    write = {"$set": {"messages": [context], "lastUpdated": "2026-07-06T19:05:00.010Z"}}
    (chats / "session-2026-07-06T19-05-a2a-serv.jsonl").write_text(f"{json.dumps(head)}\n{json.dumps(write)}\n")
    requests, summaries = load_trace([tmp_path / ".gemini"])
    assert requests == [] and nothing_to_audit(summaries).endswith(
        "session-2026-07-06T19-05-a2a-serv.jsonl: no model call in this Gemini CLI session: its 1 message(s) are 1 user "
        "message(s) and no model reply)")


def test_a_session_of_only_its_header_says_it_holds_no_message(tmp_path: Path) -> None:
    # The a2a-server also leaves files of the header line alone (a chat opened, nothing written).
    chats = tmp_path / "demo" / "chats"
    chats.mkdir(parents=True)
    head = {"sessionId": "a2a-server", "projectHash": "ab12", "startTime": "2026-05-15T01:02:30.705Z",
            "lastUpdated": "2026-05-15T01:02:30.705Z", "kind": "main"}
    (chats / "session-2026-05-15T01-02-a2a-serv.jsonl").write_text(json.dumps(head) + "\n")
    requests, summaries = load_trace([tmp_path / "demo"])
    assert requests == [] and nothing_to_audit(summaries).endswith(
        "no model call in this Gemini CLI session: it holds its header only, no message)")


def _telemetry(uuid: str, parent: str, at: str, name: str, **fields: object) -> dict:
    """A Qwen Code ``ui_telemetry`` record: the CLI's telemetry event, copied into the session."""
    event = {"event.name": name, "event.timestamp": at, "model": "qwen3-coder-plus", **fields}
    return {"uuid": uuid, "parentUuid": parent, "sessionId": "6c1e9b7a-qwen", "cwd": "/w", "version": "0.8.2",
            "timestamp": at, "type": "system", "subtype": "ui_telemetry", "systemPayload": {"uiEvent": event}}


def _response(uuid: str, parent: str, at: str, prompt: int, cached: int, output: int, thoughts: int = 0) -> dict:
    return _telemetry(uuid, parent, at, "qwen-code.api_response", input_token_count=prompt, cached_content_token_count=cached,
                      output_token_count=output, thoughts_token_count=thoughts, tool_token_count=0, duration_ms=2000)


def _with_telemetry() -> list[dict]:
    """The Qwen Code fixture with the telemetry Qwen Code 0.5 copies into a session: an
    api_response before each assistant record (its parent), a reply retried before the first
    tool result's answer (the same prompt sent twice, the first read shorter), a side call on a
    short prompt of its own, and a failed call."""
    q = {r["uuid"]: r for r in (json.loads(line) for line in QWEN.read_text().splitlines() if line.strip())}
    return [
        q["q1"],
        _response("t2", "q1", "2026-03-10T12:00:02.900Z", 12000, 0, 80), dict(q["q2"], parentUuid="t2"),
        q["q3"],
        _telemetry("e4", "q3", "2026-03-10T12:00:05.000Z", "qwen-code.api_error", error="RequestTimeOut", duration_ms=900),
        _response("r4", "e4", "2026-03-10T12:00:06.000Z", 12400, 11000, 50),  # retried: no record
        _response("t4", "r4", "2026-03-10T12:00:06.900Z", 12400, 11900, 50), dict(q["q4"], parentUuid="t4"),
        _response("s4", "q4", "2026-03-10T12:00:07.500Z", 3200, 589, 110),  # a side call: no record
        _response("t5", "s4", "2026-03-10T12:00:07.900Z", 3000, 0, 20), q["q5"],
        q["q6"], q["q7"],
        _response("t8", "q7", "2026-03-10T12:10:08.900Z", 1300, 0, 40, 15), dict(q["q8"], parentUuid="t8"),
    ]


def test_qwen_code_telemetry_counts_the_calls_no_record_holds(tmp_path: Path) -> None:
    """Qwen Code (0.5) copies an api_response telemetry event for every call into the session;
    a retried reply and a side call have their event and no assistant record. Main counted the
    records' calls only (4), the log's 6 calls nowhere, and did not list the failed one."""
    path = write(tmp_path / "qwen.jsonl", "".join(json.dumps(r) + "\n" for r in _with_telemetry()))
    requests, summary = _read(path)
    assert [(r.lane, r.request_id) for r in requests] == [
        ("main", "q2"), ("main", "telemetry@6"), ("main", "q4"), ("agent:explore-1", "q5"), ("main", "q8"),
        ("side:telemetry", "telemetry@9"),
    ]
    retry, answer, side = requests[1], requests[2], requests[5]
    # The retry is the request its record's call sent again: the same chain, before it; timed from its event.
    assert retry.prefix is not None and answer.prefix is not None and answer.prefix.parent == retry.prefix.node
    assert retry.sent_ms == 1_773_144_004_000  # 12:00:06 less its 2 s
    assert (retry.usage.cache_read, retry.usage.uncached, retry.usage.output) == (11000, 1400, 50)
    assert side.lane_kind == "side" and side.prefix is not None and side.prefix.parent is None
    assert (side.usage.cache_read, side.usage.uncached, side.usage.output) == (589, 2611, 110)
    assert summary.skipped == ((5, "failed call (qwen-code.api_error telemetry): no usage"),)
    # The totals the telemetry logs, and those of the records alone, both the same as counted.
    assert "Qwen Code's telemetry logs 6 call(s) (qwen-code.api_response): prompt 44,300, read 23,489 (the same); " \
           "2 with no record of the tree, counted from their events" in summary.notes
    assert "Qwen Code's own token totals sum to 28,905 (input + tool + output + thoughts; the same as the calls' prompt + output counted here)" in summary.notes
    # An event read after its record pairs with it all the same; one of no record's counts is not counted.
    moved = _with_telemetry()
    moved[1], moved[2] = moved[2], moved[1]
    assert [r.request_id for r in _read(write(tmp_path / "after.jsonl", "".join(json.dumps(r) + "\n" for r in moved)))[0]] == [
        "q2", "telemetry@6", "q4", "q5", "q8", "telemetry@9"]
    other = [dict(r, systemPayload={"uiEvent": dict(r["systemPayload"]["uiEvent"], input_token_count=99_999)})
             if r.get("subtype") == "ui_telemetry" and "input_token_count" in r["systemPayload"]["uiEvent"] else r
             for r in _with_telemetry()]
    requests, summary = _read(write(tmp_path / "other.jsonl", "".join(json.dumps(r) + "\n" for r in other)))
    assert [r.request_id for r in requests] == ["q2", "q4", "q5", "q8"]
    assert "Qwen Code's telemetry logs 6 call(s) (qwen-code.api_response), none with the counts of any record's call: not counted" in summary.notes


def test_mutated_qwen_telemetry_ends_cleanly() -> None:
    """Fuzz: a Qwen Code session with its telemetry records, mutated, ends in exit 0 or one line
    with exit 2."""
    tally = Tally("qwen-code telemetry", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-qwen-telemetry-"))
    seed = "".join(json.dumps(r) + "\n" for r in _with_telemetry()).encode()

    @fuzz_settings(20)
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        path = write(folder / "qwen.jsonl", data.draw(mutated(seed)))
        tally.check(["audit", str(path), "--quiet"])

    case()
    assert tally.outcomes["crash"] == 0


def test_qwen_code_telemetry_of_a_subagent_is_its_lane(tmp_path: Path) -> None:
    """Qwen Code 0.14 writes no record for a subagent's calls, only their api_response events,
    whose ``prompt_id`` (``<session>#<agent>#<turn>``) names the subagent: each is a call of the
    subagent's lane, extending its previous call. Main counted none of them."""
    records = _with_telemetry()
    sub = [_response(f"a{n}", "q3", f"2026-03-10T12:00:0{n}.500Z", prompt, cached, 30) for n, (prompt, cached) in
           enumerate([(4000, 0), (4600, 3900), (5100, 4500)], start=4)]
    for event in sub:
        event["systemPayload"]["uiEvent"]["prompt_id"] = "6c1e9b7a-qwen#debugger-x1#0"
    path = write(tmp_path / "qwen.jsonl", "".join(json.dumps(r) + "\n" for r in [*records[:4], *sub, *records[4:]]))
    requests, _ = _read(path)
    calls = [r for r in requests if r.lane == "agent:debugger-x1"]
    assert [(r.lane_kind, r.usage.cache_read) for r in calls] == [("subagent", 0), ("subagent", 3900), ("subagent", 4500)]
    assert calls[0].prefix is not None and calls[0].prefix.parent is None
    assert [r.prefix.parent for r in calls[1:] if r.prefix] == [r.prefix.node for r in calls[:2] if r.prefix]
    assert len(requests) == 9


def test_qwen_code_thoughts_inside_the_output_count_once(tmp_path: Path) -> None:
    """Qwen Code from an OpenAI-compatible reply puts the completion's count, reasoning inside, in
    ``candidatesTokenCount`` and the reasoning again in ``thoughtsTokenCount``: its total adds
    them once (prompt + candidates). Main billed the thoughts twice (output 35 + 21 here)."""
    record = json.loads(QWEN.read_text().splitlines()[1])
    record["usageMetadata"] = {"promptTokenCount": 21007, "candidatesTokenCount": 35, "thoughtsTokenCount": 21,
                               "totalTokenCount": 21042, "cachedContentTokenCount": 20699}
    gemini = dict(record, uuid="g2", usageMetadata=dict(record["usageMetadata"], totalTokenCount=21063))  # Gemini's: thoughts apart
    path = write(tmp_path / "qwen.jsonl", json.dumps(record) + "\n" + json.dumps(gemini) + "\n")
    requests, summary = _read(path)
    assert [r.usage.output for r in requests] == [35, 56]
    assert "Qwen Code's own token totals sum to 42,105 (input + tool + output + thoughts; the same as the calls' prompt + output counted here)" in summary.notes


def _oauth_session(auth: str = "qwen-oauth") -> list[dict]:
    """A Qwen Code session on ``coder-model`` (a name of no provider) through the login ``auth``:
    three calls, each reading all of the previous prompt but its last 6 tokens; the second's
    answer took 400 s, and the third was sent 1 s after it ended (401 s after it was sent)."""
    def record(uuid: str, parent: str | None, at: str, kind: str, **fields: object) -> dict:
        return {"uuid": uuid, "parentUuid": parent, "sessionId": "7d2f-oauth", "cwd": "/w", "version": "0.14.0",
                "timestamp": at, "type": kind, **fields}

    def call(n: int, parent: str, ended: str, took: int, prompt: int, read: int) -> list[dict]:
        event = {"event.name": "qwen-code.api_response", "event.timestamp": ended, "model": "coder-model",
                 "input_token_count": prompt, "cached_content_token_count": read, "output_token_count": 40,
                 "thoughts_token_count": 0, "tool_token_count": 0, "total_token_count": prompt + 40,
                 "duration_ms": took, "prompt_id": f"7d2f-oauth########{n}", "auth_type": auth}
        usage = {"promptTokenCount": prompt, "candidatesTokenCount": 40, "cachedContentTokenCount": read,
                 "thoughtsTokenCount": 0, "totalTokenCount": prompt + 40}
        return [record(f"t{n}", parent, ended, "system", subtype="ui_telemetry", systemPayload={"uiEvent": event}),
                record(f"a{n}", f"t{n}", ended, "assistant", model="coder-model", usageMetadata=usage,
                       message={"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {}}}]})]

    def result(n: int, parent: str, at: str) -> dict:
        return record(f"r{n}", parent, at, "tool_result",
                      message={"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "x"}}}]})

    return [record("u0", None, "2026-04-01T12:00:00.000Z", "user", message={"role": "user", "parts": [{"text": "go"}]}),
            *call(0, "u0", "2026-04-01T12:00:02.000Z", 2_000, 14_000, 0), result(0, "a0", "2026-04-01T12:00:03.000Z"),
            *call(1, "r0", "2026-04-01T12:06:43.000Z", 400_000, 15_000, 13_994), result(1, "a1", "2026-04-01T12:06:44.000Z"),
            *call(2, "r1", "2026-04-01T12:06:50.000Z", 6_000, 16_000, 14_994)]


def test_qwen_code_oauth_login_serves_coder_model_with_qwens_rules(tmp_path: Path) -> None:
    """Qwen Code's own login (``auth_type: qwen-oauth``) serves ``coder-model``, a name of no
    provider, through DashScope, and Qwen Code marks each streamed request's last message with
    cache_control: read with qwen's rules (main: provider unknown, each read predicted as the
    previous one's). Each call's entry lives 5 min from its response's end (the event's
    timestamp): the third call, sent 401 s after the second but 1 s after its 400 s answer ended,
    reads it (main: expired). And a read is the previous prompt less its last 6 tokens."""
    path = write(tmp_path / "oauth.jsonl", "".join(json.dumps(r) + "\n" for r in _oauth_session()))
    requests, summary = _read(path)
    assert [(r.provider, r.model) for r in requests] == [("qwen", "coder-model")] * 3
    assert [r.done_ms for r in requests] == [1_775_044_802_000, 1_775_045_203_000, 1_775_045_210_000]
    assert any(n.startswith("coder-model: a name of no provider, read with qwen's rules") for n in summary.notes)
    rows = run_audit([path]).rows
    assert [(r.reported_cache_read, r.predicted_cache_read) for r in rows] == [(0, 0), (13_994, 13_994), (14_994, 14_994)]
    assert [r.cause for r in rows[1:]] == [None, None]
    # Another login (an OpenAI-compatible endpoint of the user's choice) names no provider.
    other = write(tmp_path / "openai.jsonl", "".join(json.dumps(r) + "\n" for r in _oauth_session("openai")))
    assert {r.provider for r in _read(other)[0]} == {"unknown"}


def test_mutated_qwen_oauth_session_ends_cleanly() -> None:
    """Fuzz: a Qwen Code session whose telemetry names its login, mutated, ends in exit 0 or one
    line with exit 2."""
    tally = Tally("qwen-code oauth", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-qwen-oauth-"))
    seed = "".join(json.dumps(r) + "\n" for r in _oauth_session()).encode()

    @fuzz_settings(20)
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        path = write(folder / "oauth.jsonl", data.draw(mutated(seed)))
        tally.check(["audit", str(path), "--quiet"])

    case()
    assert tally.outcomes["crash"] == 0


def test_qwen_code_subagents_of_one_type_share_a_head_of_their_own(tmp_path: Path) -> None:
    """A Qwen Code subagent (``<type>-<random suffix>``, its calls in the telemetry alone) starts
    from its type's system prompt and tools: each type's lanes share a head, apart from other
    types' (main: one head for every subagent, so one type's head size was predicted for all)."""
    records = _oauth_session()
    for n, (agent, prompt, read) in enumerate((("debugger-35h252", 9_000, 0), ("tester-1kq9ze", 7_000, 0),
                                               ("debugger-57nz31", 9_500, 5_713))):
        event = dict(records[1]["systemPayload"]["uiEvent"], input_token_count=prompt, cached_content_token_count=read,
                     total_token_count=prompt + 40, prompt_id=f"7d2f-oauth#{agent}#0",
                     **{"event.timestamp": f"2026-04-01T12:07:{10 + n:02d}.000Z"})
        records.append(dict(records[1], uuid=f"s{n}", parentUuid=records[-1]["uuid"], systemPayload={"uiEvent": event}))
    requests, _ = _read(write(tmp_path / "agents.jsonl", "".join(json.dumps(r) + "\n" for r in records)))
    heads = {r.lane: _kind(r) for r in requests if r.prefix is not None and r.lane_kind == "subagent"}
    assert heads == {"agent:debugger-35h252": "qwen-code:subagent:debugger", "agent:tester-1kq9ze": "qwen-code:subagent:tester",
                     "agent:debugger-57nz31": "qwen-code:subagent:debugger"}
    assert {_kind(r) for r in requests if r.lane == "main"} == {"qwen-code:main"}


def _pro_session(tmp_path: Path, name: str, minute: int, calls: list[tuple[int, int]]) -> Path:
    """A saved Gemini CLI chat on gemini-2.5-pro: a call a minute from 10:``minute``, each
    (prompt, cached)."""
    messages = []
    for i, (prompt, cached) in enumerate(calls):
        stamp = f"2025-10-01T10:{minute + i:02d}:00.000Z"
        messages.append({"id": f"u{i}", "timestamp": stamp, "type": "user", "content": "go"})
        messages.append({"id": f"g{i}", "timestamp": stamp, "type": "gemini", "content": "", "model": "gemini-2.5-pro",
                         "tokens": {"input": prompt, "output": 10, "cached": cached, "thoughts": 0, "tool": 0, "total": prompt + 10}})
    return write(tmp_path / f"{name}.json", json.dumps({"sessionId": name, "projectHash": "p", "startTime": "2025-10-01T10:00:00.000Z",
                                                       "lastUpdated": "2025-10-01T11:00:00.000Z", "messages": messages}))


def test_a_session_start_reads_no_head_another_session_sent(tmp_path: Path) -> None:
    # Gemini's implicit cache: most session starts read nothing of the head other sessions sent
    # seconds to days before (KuantumQuest/MyDotFiles-HyDE: 56 of 68 lane starts read 0), so a
    # lane start is predicted to read only a warm head; inside its lane the chain reads as before.

    # (b's second call: nothing too, its lane having read nothing yet: unread_until_read; 8,200 before.)
    first = _pro_session(tmp_path, "a", 0, [(8_000, 6_100), (9_000, 7_900)])
    second = _pro_session(tmp_path, "b", 5, [(8_200, 0), (9_100, 8_100)])
    rows = run_audit([first, second]).rows
    assert [r.predicted_cache_read for r in rows] == [0, 6_100, 0, 0]  # (6,100 at b's start before)


def test_a_qwen_code_subagent_type_keeps_its_hyphens_where_no_suffix_follows(tmp_path: Path) -> None:
    # Qwen Code names a subagent <name>-<six base-36 characters> (Math.random().toString(36)
    # .slice(2, 8)); 64175d0 cut any name at its last "-": code-reviewer read as the type "code".
    records = _oauth_session()
    for n, (agent, prompt) in enumerate((("code-reviewer", 9_000), ("code-reviewer-a1b2c3", 9_500), ("code", 7_000))):
        event = dict(records[1]["systemPayload"]["uiEvent"], input_token_count=prompt, cached_content_token_count=0,
                     total_token_count=prompt + 40, prompt_id=f"7d2f-oauth#{agent}#0",
                     **{"event.timestamp": f"2026-04-01T12:07:{10 + n:02d}.000Z"})
        records.append(dict(records[1], uuid=f"s{n}", parentUuid=records[-1]["uuid"], systemPayload={"uiEvent": event}))
    requests, _ = _read(write(tmp_path / "agents.jsonl", "".join(json.dumps(r) + "\n" for r in records)))
    heads = {r.lane: _kind(r) for r in requests if r.prefix is not None and r.lane_kind == "subagent"}
    assert heads == {"agent:code-reviewer": "qwen-code:subagent:code-reviewer", "agent:code-reviewer-a1b2c3": "qwen-code:subagent:code-reviewer",
                     "agent:code": "qwen-code:subagent:code"}


def test_qwen_code_024_subagents_of_one_type_share_a_head_whatever_their_hex_suffix(tmp_path: Path) -> None:
    # Qwen Code 0.24 names a subagent <name>-<eight hex digits> (a random UUID's first 8, dashes
    # dropped) where earlier releases put six base-36 characters; its telemetry events also name
    # subagent_id and subagent_type, and have no tool_token_count. Before, the eight-digit
    # suffix was kept: every subagent was a type of its own, with a head of its own.
    records = _oauth_session()
    for n, (agent, prompt, read) in enumerate((("general-purpose-3f9a1c0e", 9_000, 0), ("explore-7b20d4aa", 7_000, 0),
                                               ("general-purpose-c81e5f27", 9_500, 5_713))):
        event = {key: value for key, value in records[1]["systemPayload"]["uiEvent"].items() if key != "tool_token_count"}
        event.update(input_token_count=prompt, cached_content_token_count=read, total_token_count=prompt + 40,
                     prompt_id=f"7d2f-oauth#{agent}#0", subagent_id=agent, subagent_type=agent.rsplit("-", 1)[0],
                     subagent_name=agent.rsplit("-", 1)[0], **{"event.timestamp": f"2026-09-22T12:07:{10 + n:02d}.000Z"})
        records.append(dict(records[1], uuid=f"s{n}", parentUuid=records[-1]["uuid"], systemPayload={"uiEvent": event}))
    requests, _ = _read(write(tmp_path / "agents.jsonl", "".join(json.dumps(r) + "\n" for r in records)))
    heads = {r.lane: _kind(r) for r in requests if r.prefix is not None and r.lane_kind == "subagent"}
    assert heads == {"agent:general-purpose-3f9a1c0e": "qwen-code:subagent:general-purpose",
                     "agent:explore-7b20d4aa": "qwen-code:subagent:explore",
                     "agent:general-purpose-c81e5f27": "qwen-code:subagent:general-purpose"}


_AGENT = "general-purpose-3f9a1c0e"


def _qwen_024_home(root: Path) -> tuple[Path, Path]:
    """A Qwen Code 0.24 project folder: the session ``chats/7d2f-oauth.jsonl`` (one main call, then
    a subagent's two calls, in its telemetry alone: api_response events with ``subagent_id`` and
    ``subagent_type``) and the subagent's transcript ``subagents/7d2f-oauth/agent-<id>.jsonl``
    (packages/core/src/agents/agent-transcript.ts: records of the parent session's id with
    ``agentId``, ``agentName``, ``isSidechain: true``, a round's ``usageMetadata`` and no model),
    which logs the same two calls, and its ``.meta.json``."""
    records = _oauth_session()[:3]
    for n, (prompt, read) in enumerate(((9_000, 0), (9_500, 8_990))):
        event = {key: value for key, value in records[1]["systemPayload"]["uiEvent"].items() if key != "tool_token_count"}
        event.update(input_token_count=prompt, cached_content_token_count=read, total_token_count=prompt + 40,
                     prompt_id=f"7d2f-oauth#{_AGENT}#{n}", subagent_id=_AGENT, subagent_type="general-purpose",
                     subagent_name="general-purpose", **{"event.timestamp": f"2026-09-22T12:00:{5 + 2 * n:02d}.000Z"})
        records.append(dict(records[1], uuid=f"s{n}", parentUuid=records[-1]["uuid"], systemPayload={"uiEvent": event}))
    side = {"sessionId": "7d2f-oauth", "cwd": "/w", "version": "0.24.4", "agentId": _AGENT, "agentName": "general-purpose",
            "isSidechain": True}
    transcript = [dict(side, uuid="x0", parentUuid=None, timestamp="2026-09-22T12:00:03.000Z", type="user",
                       message={"role": "user", "parts": [{"text": "look around"}]})]
    for n, (prompt, read) in enumerate(((9_000, 0), (9_500, 8_990))):
        transcript.append(dict(side, uuid=f"y{n}", parentUuid=transcript[-1]["uuid"], timestamp=f"2026-09-22T12:00:{5 + 2 * n:02d}.000Z",
                               type="assistant", message={"role": "model", "parts": [{"text": "reading"}]},
                               usageMetadata={"promptTokenCount": prompt, "candidatesTokenCount": 40, "cachedContentTokenCount": read,
                                              "thoughtsTokenCount": 0, "totalTokenCount": prompt + 40},
                               agentRunId="run-1", agentRound=n + 1))
    (root / "chats").mkdir()
    folder = root / "subagents" / "7d2f-oauth"
    folder.mkdir(parents=True)
    main = write(root / "chats" / "7d2f-oauth.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    agent = write(folder / f"agent-{_AGENT}.jsonl", "".join(json.dumps(r) + "\n" for r in transcript))
    (folder / f"agent-{_AGENT}.meta.json").write_text(json.dumps({
        "agentId": _AGENT, "agentType": "general-purpose", "description": "look around",
        "createdAt": "2026-09-22T12:00:03.000Z", "parentAgentId": None, "status": "completed"}))
    return main, agent


def test_a_qwen_code_024_subagent_is_counted_once_from_its_telemetry_and_its_transcript(tmp_path: Path) -> None:
    """Qwen Code 0.24 logs each subagent call twice: an api_response event in the session's
    telemetry and a record of the subagent's transcript. Main counted both (5 calls of 3)."""
    main, agent = _qwen_024_home(tmp_path)
    requests, summaries = load_trace([tmp_path])
    assert len(requests) == 3
    assert [(r.lane, r.usage.cache_read) for r in requests] == [("main", 0), (f"agent:{_AGENT}", 0), (f"agent:{_AGENT}", 8_990)]
    transcript = next(s for s in summaries if s.file == str(agent))
    assert transcript.requests == 0 and [why for _, why in transcript.skipped] == [SEEN_AGENT] * 2
    # Named the other way round, the session is still read first (its telemetry names the model,
    # the transcript none): its events count the calls, the transcript's records are skipped.
    again, summaries = load_trace([agent, main])
    assert sorted(again, key=lambda r: r.line) == sorted(requests, key=lambda r: r.line)
    assert {r.model for r in again} == {requests[0].model} and requests[0].model != "unknown"
    transcript = next(s for s in summaries if s.file == str(agent))
    assert [why for _, why in transcript.skipped] == [SEEN_AGENT] * 2
    # Each file read alone still counts all of its calls.
    assert (len(_read(main)[0]), len(_read(agent)[0])) == (3, 2)
    # Read in workers (audit --jobs 2), the same trace.
    import functools

    from prefixbench.workloads.runs.execute import map_runs

    assert load_trace([tmp_path], map_files=functools.partial(map_runs, jobs=2)) == load_trace([tmp_path])


def test_mutated_qwen_code_subagent_transcript_ends_cleanly() -> None:
    """Fuzz: a Qwen Code 0.24 subagent transcript, mutated, audited with its session, ends in exit
    0 or one line with exit 2."""
    tally = Tally("qwen-code subagent transcript", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-qwen-agent-"))
    main, agent = _qwen_024_home(folder)
    seed = agent.read_bytes()

    @fuzz_settings(20)
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        write(agent, data.draw(mutated(seed)))
        tally.check(["audit", str(main), str(agent), "--quiet"])

    case()
    assert tally.outcomes["crash"] == 0


def _qwen_json_session(model: str = "coder-model") -> dict:
    """The legacy Gemini CLI fixture as Qwen Code wrote such a session (``~/.qwen/tmp/<hash>/chats/
    session-*.json``): model messages of ``type: qwen``."""
    session = json.loads(LEGACY.read_text())
    for message in session["messages"]:
        if message["type"] == "gemini":
            message["type"], message["model"] = "qwen", model
    return session


def test_a_qwen_code_json_session_counts_its_qwen_messages(tmp_path: Path) -> None:
    """Qwen Code's sessions of Gemini CLI's shape name a model message ``type: qwen``
    (``QwenMessage``): main read none of them, and listed nothing (a committed home: 120 files,
    6,635 calls, read as no call). ``coder-model`` is a model of Qwen Code's own login
    (``QWEN_OAUTH_MODELS``): read with qwen's rules, each call reading its previous prompt."""
    path = write(tmp_path / "session-2025-11-08T22-32-c796947e.json", json.dumps(_qwen_json_session(), indent=2))
    requests, summary = _read(path)
    legacy, _ = _read(LEGACY)
    assert [r.usage for r in requests] == [r.usage for r in legacy]
    assert [(r.provider, r.model) for r in requests] == [("qwen", "coder-model")] * 3
    assert summary.notes[0].startswith("Qwen Code's system prompt")
    assert any(n.startswith("coder-model: a name of no provider, read with qwen's rules: a model of Qwen Code's own login")
               for n in summary.notes)
    # Another model (an endpoint of the user's choice) names no provider by itself.
    other = write(tmp_path / "other.json", json.dumps(_qwen_json_session("my-model"), indent=2))
    assert {r.provider for r in _read(other)[0]} == {"unknown"}


def test_mutated_qwen_json_sessions_end_cleanly() -> None:
    """Fuzz: a Qwen Code .json session, mutated, ends in exit 0 or one line with exit 2."""
    tally = Tally("qwen-code json", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-qwen-json-"))
    seed = json.dumps(_qwen_json_session(), indent=2).encode()

    @fuzz_settings(20)
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        path = write(folder / "session.json", data.draw(mutated(seed)))
        tally.check(["audit", str(path), "--quiet"])

    case()
    assert tally.outcomes["crash"] == 0


def test_a_message_of_an_unknown_type_with_tokens_is_listed(tmp_path: Path) -> None:
    # A fork's own model-message type is listed, not dropped unseen (as Qwen Code's were).
    session = json.loads(LEGACY.read_text())
    session["messages"][1]["type"] = "forked"
    requests, summary = _read(write(tmp_path / "s.json", json.dumps(session)))
    assert len(requests) == 2
    assert summary.skipped[0][1] == "message of a type the audit does not read ('forked') with tokens: not counted"


def test_qwen_code_subagents_of_one_long_head_keep_lanes_apart(tmp_path: Path) -> None:
    """Two Qwen Code subagents whose ids share their first 80 characters (a long name, then the
    suffix Qwen Code adds) are two lanes, each extending its own calls. Main cut the id at 80
    characters, so both subagents' calls were one lane, the second's first call read as
    extending the first's."""
    records = _with_telemetry()
    head = "a-subagent-named-at-length-" * 4  # 108 characters
    calls = [(f"{head}-aaa111", 4000, 0), (f"{head}-bbb222", 4000, 0), (f"{head}-aaa111", 4600, 3900), (f"{head}-bbb222", 4600, 3900)]
    sub = []
    for n, (agent, prompt, cached) in enumerate(calls, start=4):
        event = _response(f"a{n}", "q3", f"2026-03-10T12:00:0{n}.500Z", prompt, cached, 30)
        event["systemPayload"]["uiEvent"]["prompt_id"] = f"6c1e9b7a-qwen#{agent}#0"
        sub.append(event)
    path = write(tmp_path / "qwen.jsonl", "".join(json.dumps(r) + "\n" for r in [*records[:4], *sub, *records[4:]]))
    requests, _ = _read(path)
    lanes = {r.lane for r in requests if r.lane_kind == "subagent" and r.lane.startswith("agent:a-sub")}
    assert lanes == {f"agent:{head}-aaa111", f"agent:{head}-bbb222"}
    for lane in lanes:
        own = [r for r in requests if r.lane == lane]
        assert len(own) == 2 and own[0].prefix is not None and own[0].prefix.parent is None
        assert own[1].prefix is not None and own[1].prefix.parent == own[0].prefix.node


def _lines(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_the_newest_record_kinds_leave_the_counts_as_they_are(tmp_path: Path) -> None:
    """Pins the newest shapes read from the agents' source: Gemini CLI 0.57 (google-gemini/gemini-cli
    ``chatRecordingTypes.ts``, August 2026: ``kind`` on the metadata line, ``displayContent`` on a
    message, ``$set`` of ``memoryScratchpad`` or ``directories``, which touch no message) and Qwen
    Code's latest ``ChatRecord`` subtypes (QwenLM/qwen-code ``chatRecordingService.ts``, late 2026:
    ``session_model``, ``turn_result``, ``agent_retry``, ``agent_bootstrap``, ``mid_turn_user_message``,
    ``agentRunId``/``agentRound``, ``contextWindowSize``), none a call. Totals by hand."""
    gemini = _lines(tmp_path / "g" / "chats" / "session-2026-08-20T10-00-s1.jsonl", [
        {"sessionId": "s1", "projectHash": "h", "startTime": "2026-08-20T10:00:00.000Z", "lastUpdated": "2026-08-20T10:00:00.000Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-08-20T10:00:01.000Z", "type": "user", "content": [{"text": "hi"}], "displayContent": [{"text": "hi"}]},
        {"id": "g1", "timestamp": "2026-08-20T10:00:05.000Z", "type": "gemini", "content": "hello", "model": "gemini-3-pro-preview",
         "tokens": {"input": 9000, "output": 50, "cached": 0, "thoughts": 20, "tool": 0, "total": 9070}},
        {"$set": {"directories": ["/a"]}},
        {"id": "u2", "timestamp": "2026-08-20T10:01:01.000Z", "type": "user", "content": [{"text": "more"}]},
        {"id": "g2", "timestamp": "2026-08-20T10:01:05.000Z", "type": "gemini", "content": "ok", "model": "gemini-3-pro-preview",
         "tokens": {"input": 9100, "output": 40, "cached": 8000, "thoughts": 0, "tool": 0, "total": 9140}},
        {"$set": {"memoryScratchpad": {"version": 1, "toolSequence": ["read_file"]}}},
    ])
    # cached 8,000; uncached 9,000 + 1,100; output (50 + 20) + 40.
    assert _sums(gemini) == (2, 8000, 10100, 0, 110)
    base = {"sessionId": "q1", "cwd": "/w", "version": "0.30.0"}
    qwen = _lines(tmp_path / "q" / "chats" / "q1.jsonl", [
        {**base, "uuid": "a", "parentUuid": None, "timestamp": "2026-11-01T09:00:00.000Z", "type": "system", "subtype": "session_model",
         "systemPayload": {"modelId": "qwen3-coder-plus", "authType": "qwen-oauth"}},
        {**base, "uuid": "b", "parentUuid": "a", "timestamp": "2026-11-01T09:00:01.000Z", "type": "user", "message": {"role": "user", "parts": [{"text": "go"}]}},
        {**base, "uuid": "c", "parentUuid": "b", "timestamp": "2026-11-01T09:00:04.000Z", "type": "assistant", "model": "qwen3-coder-plus",
         "contextWindowSize": 1000000, "message": {"role": "model", "parts": [{"text": "ok"}]},
         "usageMetadata": {"promptTokenCount": 12000, "cachedContentTokenCount": 0, "candidatesTokenCount": 80, "totalTokenCount": 12080}},
        {**base, "uuid": "d", "parentUuid": "c", "timestamp": "2026-11-01T09:00:05.000Z", "type": "user", "subtype": "mid_turn_user_message",
         "message": {"role": "user", "parts": [{"text": "also this"}]}},
        {**base, "uuid": "e", "parentUuid": "d", "timestamp": "2026-11-01T09:00:06.000Z", "type": "system", "subtype": "agent_bootstrap",
         "agentId": "explore-1", "systemPayload": {"kind": "fork", "history": []}},
        {**base, "uuid": "f", "parentUuid": "e", "timestamp": "2026-11-01T09:00:06.500Z", "type": "system", "subtype": "agent_retry",
         "agentId": "explore-1", "systemPayload": {"attempt": 2}},
        {**base, "uuid": "g", "parentUuid": "d", "timestamp": "2026-11-01T09:00:09.000Z", "type": "assistant", "model": "qwen3-coder-plus",
         "agentRunId": "run-1", "agentRound": 1, "message": {"role": "model", "parts": [{"text": "done"}]},
         "usageMetadata": {"promptTokenCount": 12500, "cachedContentTokenCount": 11900, "candidatesTokenCount": 30, "totalTokenCount": 12530}},
        {**base, "uuid": "h", "parentUuid": "g", "timestamp": "2026-11-01T09:00:10.000Z", "type": "system", "subtype": "turn_result",
         "systemPayload": {"promptId": "p1", "state": "completed", "stopReason": "end_turn", "endedAt": 1793523610000}},
    ])
    # cached 11,900; uncached 12,000 + 600; output 80 + 30.
    assert _sums(qwen) == (2, 11900, 12600, 0, 110)


_FORK_SESSION = "5e1a-fork"
_FORK = "fork-1a2b3c4d"


def _qwen_fork_home(root: Path, *, fork_turns: str | None = None, model: str = "coder-model", fork_events: bool = True,
                    meta_model: object = None) -> tuple[Path, Path]:
    """A Qwen Code 0.30 project folder whose session ``chats/5e1a-fork.jsonl`` spawns a fork
    subagent (QwenLM/qwen-code packages/core/src/tools/agent/agent.ts ``createForkSubagent``): its
    second call's reply holds the ``agent`` function call ``subagent_type: "fork"`` (id
    ``call_fork1``); the fork runs on the parent's model, system instruction and tool declarations,
    seeded with the parent's history, that reply, a user turn of the placeholder result and the
    directive, and a model acknowledgement. Its transcript ``subagents/5e1a-fork/agent-fork-<hex>.jsonl``
    (agents/agent-transcript.ts) opens with ``agent_bootstrap {kind: "fork", history}``, the
    directive and ``agent_launch_prompt``, then its two rounds (``usageMetadata``, no model); the
    session's telemetry logs those two calls too (``subagent_type: "fork"``). The fork's first call
    reads the 14,994 tokens the spawning call's prompt left (all of its 15,000 but the last 6, as
    this login's calls do). ``fork_turns``: the fork inherits the last turns alone. ``meta_model``:
    the ``model`` the sidecar ``agent-fork-<hex>.meta.json`` names (later releases write it;
    ``None``: none, as before)."""
    def record(uuid: str, parent: str | None, at: str, kind: str, **fields: object) -> dict:
        return {"uuid": uuid, "parentUuid": parent, "sessionId": _FORK_SESSION, "cwd": "/w", "version": "0.30.1",
                "timestamp": at, "type": kind, **fields}

    def event(ended: str, prompt: int, read: int, turn: int, agent: str | None = None) -> dict:
        ev = {"event.name": "qwen-code.api_response", "event.timestamp": ended, "model": model,
              "input_token_count": prompt, "cached_content_token_count": read, "output_token_count": 40,
              "thoughts_token_count": 0, "total_token_count": prompt + 40, "duration_ms": 2_000,
              "prompt_id": f"{_FORK_SESSION}#{agent or ''}#{turn}", "auth_type": "qwen-oauth"}
        if agent:
            ev.update(subagent_id=agent, subagent_type="fork", subagent_name="fork")
        return ev

    def usage(prompt: int, read: int) -> dict:
        return {"promptTokenCount": prompt, "candidatesTokenCount": 40, "cachedContentTokenCount": read,
                "thoughtsTokenCount": 0, "totalTokenCount": prompt + 40}

    spawn = {"id": "call_fork1", "name": "agent", "args": {"description": "check the tests", "prompt": "run the tests",
                                                              "subagent_type": "fork", **({"fork_turns": fork_turns} if fork_turns else {})}}
    reply = {"role": "model", "parts": [{"text": "Forking a worker."}, {"functionCall": spawn}]}
    read0 = {"role": "model", "parts": [{"functionCall": {"id": "call_r0", "name": "read_file", "args": {"path": "a.py"}}}]}
    out0 = {"role": "user", "parts": [{"functionResponse": {"id": "call_r0", "name": "read_file", "response": {"output": "x"}}}]}
    main = [
        record("u0", None, "2026-11-02T09:00:00.000Z", "user", message={"role": "user", "parts": [{"text": "find the bug"}]}),
        record("t0", "u0", "2026-11-02T09:00:02.000Z", "system", subtype="ui_telemetry", systemPayload={"uiEvent": event("2026-11-02T09:00:02.000Z", 14_000, 0, 0)}),
        record("a0", "t0", "2026-11-02T09:00:02.000Z", "assistant", model=model, usageMetadata=usage(14_000, 0), message=read0),
        record("r0", "a0", "2026-11-02T09:00:03.000Z", "tool_result", message=out0),
        record("t1", "r0", "2026-11-02T09:00:06.000Z", "system", subtype="ui_telemetry", systemPayload={"uiEvent": event("2026-11-02T09:00:06.000Z", 15_000, 13_994, 0)}),
        record("a1", "t1", "2026-11-02T09:00:06.000Z", "assistant", model=model, usageMetadata=usage(15_000, 13_994), message=reply),
        record("r1", "a1", "2026-11-02T09:00:06.500Z", "tool_result", message={"role": "user", "parts": [
            {"functionResponse": {"id": "call_fork1", "name": "agent", "response": {"output": "Fork launched in the background."}}}]}),
        record("s0", "r1", "2026-11-02T09:00:12.000Z", "system", subtype="ui_telemetry", systemPayload={"uiEvent": event("2026-11-02T09:00:12.000Z", 15_400, 14_994, 0, _FORK)}),
        record("s1", "s0", "2026-11-02T09:00:18.000Z", "system", subtype="ui_telemetry", systemPayload={"uiEvent": event("2026-11-02T09:00:18.000Z", 16_000, 15_394, 1, _FORK)}),
        record("t2", "s1", "2026-11-02T09:00:30.000Z", "system", subtype="ui_telemetry", systemPayload={"uiEvent": event("2026-11-02T09:00:30.000Z", 15_500, 14_994, 1)}),
        record("a2", "t2", "2026-11-02T09:00:30.000Z", "assistant", model=model, usageMetadata=usage(15_500, 14_994),
               message={"role": "model", "parts": [{"text": "The fork is on it."}]}),
    ]
    if not fork_events:  # a session whose telemetry does not log the fork's calls: its transcript counts them
        main = [r for r in main if r["uuid"] not in ("s0", "s1")]
        main[-2]["parentUuid"] = "r1"
    side = {"sessionId": _FORK_SESSION, "cwd": "/w", "version": "0.30.1", "agentId": _FORK, "agentName": "fork", "isSidechain": True}
    placeholder = {"role": "user", "parts": [
        {"functionResponse": {"id": "call_fork1", "name": "agent", "response": {"output": "Fork started — processing in background"}}},
        {"text": "<fork-boilerplate>\nYou are a forked worker process.\n</fork-boilerplate>\n\nDirective: run the tests"}]}
    history = [{"role": "user", "parts": [{"text": "find the bug"}]}, read0, out0, reply, placeholder,
               {"role": "model", "parts": [{"text": "Understood. Executing directive now."}]}]
    transcript = [
        dict(side, uuid="x0", parentUuid=None, timestamp="2026-11-02T09:00:06.600Z", type="system", subtype="agent_bootstrap",
             systemPayload={"kind": "fork", "history": history}),
        dict(side, uuid="x1", parentUuid="x0", timestamp="2026-11-02T09:00:06.600Z", type="user",
             message={"role": "user", "parts": [{"text": "run the tests"}]}),
        dict(side, uuid="x2", parentUuid="x1", timestamp="2026-11-02T09:00:06.600Z", type="system", subtype="agent_launch_prompt",
             systemPayload={"displayText": "Begin."}),
        dict(side, uuid="y0", parentUuid="x2", timestamp="2026-11-02T09:00:12.000Z", type="assistant",
             message={"role": "model", "parts": []}, usageMetadata=usage(15_400, 14_994), agentRunId="run-1", agentRound=1),
        dict(side, uuid="y1", parentUuid="y0", timestamp="2026-11-02T09:00:12.000Z", type="assistant",
             message={"role": "model", "parts": [{"functionCall": {"id": "call_t1", "name": "run_shell_command", "args": {"command": "pytest"}}}]}),
        dict(side, uuid="z1", parentUuid="y1", timestamp="2026-11-02T09:00:13.000Z", type="tool_result",
             message={"role": "user", "parts": [{"functionResponse": {"id": "call_t1", "name": "run_shell_command", "response": {"output": "ok"}}}]}),
        dict(side, uuid="y2", parentUuid="z1", timestamp="2026-11-02T09:00:18.000Z", type="assistant",
             message={"role": "model", "parts": [{"text": "Scope: tests. Result: pass."}]}, usageMetadata=usage(16_000, 15_394),
             agentRunId="run-1", agentRound=2),
    ]
    (root / "chats").mkdir(parents=True)
    folder = root / "subagents" / _FORK_SESSION
    folder.mkdir(parents=True)
    main_path = root / "chats" / f"{_FORK_SESSION}.jsonl"
    main_path.write_text("".join(json.dumps(r) + "\n" for r in main))
    agent_path = folder / f"agent-{_FORK}.jsonl"
    agent_path.write_text("".join(json.dumps(r) + "\n" for r in transcript))
    (folder / f"agent-{_FORK}.meta.json").write_text(json.dumps({
        "agentId": _FORK, "agentType": "fork", "description": "check the tests", "parentSessionId": _FORK_SESSION,
        "toolUseId": "call_fork1", "parentAgentId": None, "createdAt": "2026-11-02T09:00:06.600Z", "status": "completed",
        **({} if meta_model is None else {"model": meta_model})}))
    return main_path, agent_path


def test_a_qwen_code_session_and_its_fork_read_the_same_whatever_the_file_order(tmp_path: Path) -> None:
    """The fork's transcript names no model: read before its session (``audit agent-<id>.jsonl
    chats/<session>.jsonl``, or the subagents folder named first), it counted the fork's calls as
    model unknown (unpriced, no provider's rules) and the session's telemetry, which names the
    model, skipped them as counted. The session is now read first, as Claude Code's session is
    before its subagents folder: the same calls, models and predictions in either order (the
    per-file listings keep the order the files were named in)."""
    from prefixbench.reports.audit import audit_table

    main, agent = _qwen_fork_home(tmp_path)
    by_place = lambda r: (r.file, r.line)  # noqa: E731
    ahead, _ = load_trace([main, agent])
    behind, _ = load_trace([agent, main])
    assert sorted(behind, key=by_place) == sorted(ahead, key=by_place)
    assert {r.model for r in behind} == {"coder-model"}
    first, second = run_audit([main, agent]), run_audit([agent, main])
    assert sorted(audit_table(second).splitlines()) == sorted(audit_table(first).splitlines())


def test_a_qwen_code_fork_and_a_sidecar_naming_a_model_read_the_same_whatever_the_file_order(tmp_path: Path) -> None:
    """With its session in the audit, the fork's calls are counted from the session's telemetry,
    with the model its events name: a sidecar naming another model changes nothing, in either
    order."""
    main, agent = _qwen_fork_home(tmp_path, meta_model="qwen3-coder-plus")
    by_place = lambda r: (r.file, r.line)  # noqa: E731
    ahead, _ = load_trace([main, agent])
    behind, _ = load_trace([agent, main])
    assert sorted(behind, key=by_place) == sorted(ahead, key=by_place)
    assert {r.model for r in behind} == {"coder-model"}


def test_a_qwen_code_fork_transcript_alone_takes_its_model_from_the_sidecar(tmp_path: Path) -> None:
    """Without its session, a fork's transcript named no model: its calls were model unknown. Its
    sidecar ``agent-<id>.meta.json`` (``model``, later Qwen Code releases) names it; one without
    ``model`` leaves it unknown (never guessed)."""
    _, agent = _qwen_fork_home(tmp_path, meta_model="qwen3-coder-plus")
    requests, summary = _read(agent)
    assert [r.model for r in requests] == ["qwen3-coder-plus"] * 2
    assert {r.prefix.head.rpartition(":")[2] for r in requests} == {"qwen3-coder-plus"}
    assert any(f"qwen3-coder-plus taken from agent-{_FORK}.meta.json" in note for note in summary.notes)
    bare = tmp_path / "bare"
    _, agent = _qwen_fork_home(bare)
    requests, summary = _read(agent)
    assert [r.model for r in requests] == ["unknown"] * 2
    assert not any("meta.json" in note for note in summary.notes)


@pytest.mark.parametrize(("agent_type", "model"), [("fork", "qwen3-coder-plus"), ("general-purpose", "unknown")])
def test_a_qwen_code_fork_sidecar_without_model_gives_its_launch_flags_model(tmp_path: Path, agent_type: str, model: str) -> None:
    """A sidecar without ``model`` but with ``persistedCliFlags.model``: a fork runs on its parent's
    model, which that field names; another subagent's (the parent's model before
    QwenLM/qwen-code#7104, whatever the subagent ran on) is not taken."""
    _, agent = _qwen_fork_home(tmp_path)
    meta = agent.with_name(f"agent-{_FORK}.meta.json")
    value = json.loads(meta.read_text())
    meta.write_text(json.dumps({**value, "agentType": agent_type,
                                "persistedCliFlags": {"approvalMode": "yolo", "model": "qwen3-coder-plus", "authType": "openai"}}))
    requests, _ = _read(agent)
    assert [r.model for r in requests] == [model] * 2


@pytest.mark.parametrize("sidecar", ["{not json", "[1, 2]", json.dumps({"agentId": _FORK, "model": 7}),
                                     json.dumps({"agentId": _FORK, "model": ""}), json.dumps({"agentId": "other-1", "model": "m"}),
                                     b"\xff\xfe",
                                     # nested past any reader's depth (a RecursionError in json.loads), a lone surrogate
                                     "[" * 50_000 + "]" * 50_000, '{"agentId": "%s", "model": "\\ud800"}' % _FORK])
def test_a_bad_qwen_code_sidecar_is_left_with_a_note(tmp_path: Path, sidecar: str | bytes) -> None:
    """A sidecar not JSON, not an object, whose model is not a name, or of another agent: the
    model stays unknown and a note names the file; no error."""
    _, agent = _qwen_fork_home(tmp_path)
    meta = agent.with_name(f"agent-{_FORK}.meta.json")
    meta.write_bytes(sidecar if isinstance(sidecar, bytes) else sidecar.encode())
    requests, summary = _read(agent)
    assert [r.model for r in requests] == ["unknown"] * 2
    assert sum(str(meta) in note for note in summary.notes) == 1


def test_a_qwen_code_sidecar_in_a_walked_folder_is_listed_not_audited(tmp_path: Path) -> None:
    """``audit FOLDER``: the sidecar is metadata beside the logs (listed as not-a-log), whether or
    not it names a model; the fork's transcript alone takes the model from it."""
    _, agent = _qwen_fork_home(tmp_path, meta_model="qwen3-coder-plus")
    result = run_audit([agent.parent])
    assert sorted((Path(f.file).name, f.format) for f in result.files) == [
        (f"agent-{_FORK}.jsonl", "gemini-cli"), (f"agent-{_FORK}.meta.json", "not-a-log")]
    assert {r.model for r in result.rows} == {"qwen3-coder-plus"}
    with pytest.raises(UserError, match="unknown log format"):  # named on the command line: it must be a log
        run_audit([agent.with_name(f"agent-{_FORK}.meta.json")])


def test_mutated_qwen_sidecars_end_cleanly() -> None:
    """Fuzz: a fork's transcript beside a mutated sidecar: read, the model is the sidecar's
    (where it names one) or unknown; audited, exit 0 or one line with exit 2."""
    tally = Tally("qwen-code sidecar", bound_s=20)
    root = Path(tempfile.mkdtemp(prefix="fuzz-qwen-meta-"))
    _, agent = _qwen_fork_home(root, meta_model="qwen3-coder-plus")
    meta = agent.with_name(f"agent-{_FORK}.meta.json")
    seed = json.dumps({**json.loads(meta.read_text()), "persistedCliFlags": {"model": "qwen3-coder-plus", "authType": "openai"}}).encode()

    @fuzz_settings(25)
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        raw = data.draw(mutated(seed))
        write(meta, raw)
        requests, _ = _read(agent)
        try:
            named = json.loads(raw.decode("utf-8"))  # (strict UTF-8, as Qwen Code writes it)
        except ValueError:
            named = None
        mine = isinstance(named, dict) and (not isinstance(named.get("agentId"), str) or named["agentId"] == _FORK)
        flags = named.get("persistedCliFlags") if isinstance(named, dict) else None
        if not mine:
            model = None
        elif "model" in named:
            model = named["model"]
        else:
            model = flags.get("model") if named.get("agentType") == "fork" and isinstance(flags, dict) else None
        assert {r.model for r in requests} == {model if isinstance(model, str) and model.strip() else "unknown"}
        tally.check(["audit", str(agent), "--quiet"])

    case()
    assert tally.outcomes["crash"] == 0


@pytest.mark.parametrize("fork_events", [True, False])
def test_a_qwen_code_fork_extends_the_call_that_spawned_it(tmp_path: Path, fork_events: bool) -> None:
    """A Qwen Code fork subagent sends the parent's prompt again: its first call read the 14,994
    tokens the spawning call left cached. Main predicted 0 (a lane start from the fork type's
    head), whether the session's telemetry or (where it does not log the fork's calls) the fork's
    transcript counted the call."""
    main, agent = _qwen_fork_home(tmp_path, fork_events=fork_events)
    result = run_audit([agent, main])
    first = next(r for r in result.rows if r.lane == f"agent:{_FORK}" and r.reported_cache_read == 14_994)
    assert abs(first.expected_cache_read - 14_994) <= 0.03 * 14_994
    assert not any("not in this audit" in note for note in result.notes)
    assert result.totals.requests == 5  # 3 of the session, 2 of the fork: each once
    assert [r.file for r in result.rows if r.lane == f"agent:{_FORK}"] == [str(main if fork_events else agent)] * 2
    _, summaries = load_trace([agent, main])
    fork = next(s for s in summaries if s.file == str(agent))
    assert any(note.startswith("1 Qwen Code fork subagent(s) (agent_bootstrap, kind fork)") for note in fork.notes)
    session = next(s for s in summaries if s.file == str(main))
    assert session.call_aliases == ((f"qwen-fork:{_FORK_SESSION}#call_fork1", "a1"),)
    # Read in workers (audit --jobs 2), the same trace.
    import functools

    from prefixbench.workloads.runs.execute import map_runs

    assert load_trace([tmp_path], map_files=functools.partial(map_runs, jobs=2)) == load_trace([tmp_path])


def test_a_qwen_code_fork_transcript_alone_says_it_is_not_linked(tmp_path: Path) -> None:
    """Without the session that spawned it, a fork's first call extends a call no log of the audit
    holds: the audit says so, and measures it from the head rather than guessing."""
    _, agent = _qwen_fork_home(tmp_path)
    _, summary = _read(agent)
    assert summary.call_parents == (f"qwen-fork:{_FORK_SESSION}#call_fork1",)
    result = run_audit([agent])
    assert any(f"1 lane start(s) extend a call of another thread whose log is not in this audit (agent-{_FORK}.jsonl:4)"
               in note for note in result.notes)
    assert [r.expected_cache_read for r in result.rows][0] == 0


def test_a_qwen_code_fork_of_the_last_turns_is_measured_from_its_head(tmp_path: Path) -> None:
    """A fork of the last N turns (``fork_turns``) sends the startup context and those turns, not
    the spawning call's prompt: not linked to it, and not said to miss its parent's log."""
    main, agent = _qwen_fork_home(tmp_path, fork_turns="1")
    requests, summaries = load_trace([tmp_path])
    first = next(r for r in requests if r.lane == f"agent:{_FORK}")
    assert first.prefix is not None and first.prefix.parent is None
    session = next(s for s in summaries if s.file == str(main))
    assert session.call_aliases == ((f"qwen-fork:{_FORK_SESSION}#call_fork1", ""),)
    assert any(note.startswith("1 call(s) spawning a Qwen Code fork of the last turns alone (fork_turns)") for note in session.notes)
    assert not any("not in this audit" in note for note in run_audit([tmp_path]).notes)


def test_a_qwen_code_realtime_conversation_is_listed_as_such_not_as_a_call(tmp_path: Path) -> None:
    # Later Qwen Code (late 2026) records a realtime (voice) conversation's text as user and
    # assistant records of subtype realtime_message, the assistant's naming its model and no
    # usage: no call of the chat's chain. It was listed as "assistant record without usageMetadata".
    def realtime(uuid: str, parent: str, at: str, role: str) -> dict:
        record = {"uuid": uuid, "parentUuid": parent, "sessionId": "6c1e9b7a-qwen", "cwd": "/w", "version": "0.31.0",
                  "timestamp": at, "type": role, "subtype": "realtime_message",
                  "message": {"role": "user" if role == "user" else "model", "parts": [{"text": f"spoken {uuid}"}]}}
        return dict(record, model="qwen3-omni-flash-realtime") if role == "assistant" else record

    records = [realtime("r1", "q8", "2026-03-10T12:11:00.000Z", "user"), realtime("r2", "r1", "2026-03-10T12:11:02.000Z", "assistant")]
    path = write(tmp_path / "realtime.jsonl", QWEN.read_text() + "".join(json.dumps(r) + "\n" for r in records))
    # The session's four calls, the same sums by hand as the session alone (11,900 read, 16,800 uncached, 205 out).
    assert _sums(path) == _sums(QWEN) == (4, 11900, 16800, 0, 205)
    skipped = _read(path)[1].skipped
    assert (10, "realtime conversation reply (subtype realtime_message): the transcript of a realtime (voice) session, "
                "whose usage Qwen Code does not record: not a counted call") in skipped
    assert not any("without usageMetadata" in reason for _, reason in skipped)


def test_a_session_start_that_misses_the_shared_head_invents_no_idle_time(tmp_path: Path) -> None:
    # Three sessions' first calls read a 6,000-token head; a fourth's reads 0. Its lane has no
    # previous call, so "a new user turn 0s after the previous request" would be made up: the detail
    # says it is the lane's first call and how long since another lane's call under the same head.

    files = [_pro_session(tmp_path, "a", 0, [(8_000, 6_000), (9_000, 7_900)]),
             _pro_session(tmp_path, "b", 5, [(8_200, 6_000), (9_100, 8_100)]),
             _pro_session(tmp_path, "c", 10, [(8_300, 6_000)]), _pro_session(tmp_path, "d", 15, [(8_400, 0)])]
    last = run_audit(files).rows[-1]
    assert last.cause == "unexplained"
    assert "0s after the previous request" not in last.detail
    assert "no previous call in its lane" in last.detail and "sent 5m00s before" in last.detail


def test_a_subagent_sidecar_that_is_a_named_pipe_is_a_note_not_a_hang(tmp_path: Path) -> None:
    """fuzz60: a subagent's ``.meta.json`` that is a named pipe (or a link to /dev/zero) was read
    whole: the audit waited on the pipe for ever (or read the device until memory ran out). Only a
    regular file is read; anything else is a note, and the calls are counted as without one."""
    import os

    main, agent = _qwen_024_home(tmp_path)
    meta = agent.with_name(agent.name.removesuffix(".jsonl") + ".meta.json")
    meta.unlink()
    os.mkfifo(meta)

    with no_hang():
        requests, summaries = load_trace([agent])
    assert len(requests) == 2
    summary = next(s for s in summaries if s.file == str(agent))
    assert f"{meta}: not a regular file (a pipe or a device may never end): the subagent's model is not taken from it" in summary.notes


def test_a_qwen_runtime_file_read_with_its_session_is_said_as_that_sessions(tmp_path: Path) -> None:
    """Read in the same audit as its session, the runtime file still said "no calls to audit here
    (audit the session's .jsonl ... beside it)", pointing at a file already audited, and carried
    the note on the session's opaque head though it holds no session. Now it is the session's
    runtime file, counted there; alone, it still points at it, with no note on a head."""
    chats = tmp_path / ".qwen" / "projects" / "p" / "chats"
    chats.mkdir(parents=True)
    sid = "054b8439-3658-4ea0-913d-366f134893b7"
    runtime = chats / f"{sid}.runtime.json"
    runtime.write_text(json.dumps(_qwen_runtime(sid)))
    _, alone = load_trace([runtime])
    assert alone[0].notes == (
        "a Qwen Code runtime file (Qwen Code 0.18.5): the process that ran the session (pid, host, folder, start), "
        "no model call or usage: no calls to audit here (audit the session's .jsonl of the same name beside it)",)
    (chats / f"{sid}.jsonl").write_bytes(QWEN.read_bytes())
    requests, summaries = load_trace([chats])
    assert requests
    notes = next(s.notes for s in summaries if s.file.endswith(".runtime.json"))
    assert notes == ("a Qwen Code runtime file (Qwen Code 0.18.5): the process that ran the session (pid, host, folder, start), "
                     f"no model call or usage: the runtime file of {sid}.jsonl, the session read in this audit (counted there)",)
    # Another session's runtime file is not this one's: it still points at its own.
    other = chats / "other.runtime.json"
    other.write_text(json.dumps(_qwen_runtime("other")))
    _, summaries = load_trace([chats])
    assert next(s.notes for s in summaries if s.file.endswith("other.runtime.json"))[-1].endswith(
        "(audit the session's .jsonl of the same name beside it)")


def test_a_qwen_runtime_file_has_a_whole_number_pid() -> None:
    sid = "054b8439-3658-4ea0-913d-366f134893b7"
    assert detect(_qwen_runtime(sid)) is Evidence.SHAPE
    without = {k: v for k, v in _qwen_runtime(sid).items() if k != "pid"}
    assert detect(without) is None and detect({**without, "pid": "1224"}) is None
