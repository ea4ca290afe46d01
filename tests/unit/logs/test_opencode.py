"""OpenCode sessions (workloads/logs/formats/opencode.py): the export, both storage layouts,
failed calls, summaries and prunes, and what a folder walk makes of them."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext
from prefixbench.workloads.logs.formats.opencode import detect
from prefixbench.workloads.logs.sources import find_log_files
from tests.fuzz.harness import Tally, fuzz_settings, mutated, write

EXPORT = Path(__file__).parent / "fixtures" / "opencode.json"
FORMAT = FORMATS["opencode"]


def _export() -> dict:
    return json.loads(EXPORT.read_text())


def _read(path: Path):
    return import_file(path, FORMAT, ImportContext())


def test_export_totals_field_by_field() -> None:
    requests, summary = _read(EXPORT)
    usages = [r.usage for r in requests]
    # By hand from the fixture's four step-finish parts (the failed call has none):
    # input 5 + 7 + 9500 + 3000; output + reasoning (100 + 50) + 200 + 800 + 40;
    # cache read 9000; cache write 9000 + 400 + 2500.
    assert len(requests) == 4
    assert sum(u.uncached for u in usages) == 12512
    assert sum(u.output for u in usages) == 1190
    assert sum(u.cache_read for u in usages) == 9000
    assert sum(u.cache_write_5m for u in usages) == 11900
    assert sum(u.cache_write_1h for u in usages) == 0
    assert summary.skipped == ((1, "failed call (APIError: Overloaded)"),)
    notes = " ".join(summary.notes)
    assert "input 12,512, output + reasoning 1,190, cache read 9,000, cache write 11,900 (the same" in notes
    assert "$0.1031" in notes  # the step costs: 0.03525 + 0.0084 + 0.0405 + 0.018975


def test_export_detected_from_content_under_any_name(tmp_path: Path) -> None:
    renamed = tmp_path / "whatever.txt"
    renamed.write_bytes(EXPORT.read_bytes())
    assert detect_format(renamed) is FORMAT
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(_export()))  # one line, not pretty-printed
    assert [r.usage for r in _read(compact)[0]] == [r.usage for r in _read(EXPORT)[0]]


def test_detector_names_each_record_shape() -> None:
    export = _export()
    message = export["messages"][1]
    assert detect(export) == Evidence.WRAPPER
    assert detect(export["info"]) == Evidence.ENTRY
    assert detect(message["info"]) == Evidence.ENTRY
    assert detect(message["parts"][3]) == Evidence.WRAPPER
    assert detect(export["messages"][2]["parts"][0]) == Evidence.WRAPPER  # a compaction part, not a pi entry
    assert detect({"info": {}, "messages": []}) is None
    assert detect({"role": "user", "content": "hi"}) is None


@pytest.mark.parametrize(("dropped", "missing"), [
    (("projectID", "directory"), "projectID or directory"),
    (("title",), "title"),
    (("time", "projectID", "directory"), "time, no projectID or directory"),
])
def test_an_export_whose_info_lacks_a_key_names_it(tmp_path: Path, dropped: tuple[str, ...], missing: str) -> None:
    # An export whose info lacked projectID and directory was refused as "not an OpenCode
    # session (no record of it among the first lines...)" under --input opencode, and as an
    # "unknown log format" without it, naming neither key; detection stays as strict.
    export = _export()
    for key in dropped:
        export["info"].pop(key)
    assert detect(export) is None
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    said = f"{path}:1: an OpenCode export whose info has no {missing}: not read as an OpenCode session"
    with pytest.raises(UserError) as caught:
        import_file(path, FORMAT, ImportContext())
    assert str(caught.value).startswith(said), str(caught.value)
    with pytest.raises(UserError) as caught:
        detect_format(path)
    assert str(caught.value).startswith(said), str(caught.value)
    # its messages another session's: nothing says it is this export, so no such words
    export["messages"][0]["info"]["sessionID"] = "ses_other"
    path.write_text(json.dumps(export))
    with pytest.raises(UserError) as caught:
        import_file(path, FORMAT, ImportContext())
    assert "OpenCode export" not in str(caught.value)


def test_summary_call_is_its_own_lane_and_the_next_request_a_compaction() -> None:
    result = run_audit([EXPORT])
    assert [(row.lane, row.lane_kind) for row in result.rows] == [
        ("main", "main"), ("main", "main"), ("compaction", "compaction"), ("main", "main")
    ]
    last = result.rows[-1]
    assert last.cause == "compaction" and "after the summary call" in last.detail


def _storage(root: Path, export: dict, *, earlier: bool = False) -> Path:
    """The export written as OpenCode's JSON storage: the current layout, or the earlier one."""
    info = export["info"]
    sid = info["id"]
    session = root / "session" / ("info" if earlier else info["projectID"]) / f"{sid}.json"
    messages = root / ("session/message" if earlier else "message") / sid
    for path in (session.parent, messages):
        path.mkdir(parents=True, exist_ok=True)
    session.write_text(json.dumps(info, indent=2))
    for item in export["messages"]:
        mid = item["info"]["id"]
        (messages / f"{mid}.json").write_text(json.dumps(item["info"], indent=2))
        parts = root / ("session/part" if earlier else "part") / (f"{sid}/{mid}" if earlier else mid)
        parts.mkdir(parents=True, exist_ok=True)
        for part in item["parts"]:
            (parts / f"{part['id']}.json").write_text(json.dumps(part, indent=2))
    return session


@pytest.mark.parametrize("earlier", [False, True])
def test_storage_reads_as_the_export_and_only_its_session_file_is_listed(tmp_path: Path, earlier: bool) -> None:
    session = _storage(tmp_path / "storage", _export(), earlier=earlier)
    found = find_log_files([tmp_path])
    assert [path for path, reason in found if reason is None] == [session]
    assert {reason for _, reason in found} == {None, "read-with"}
    requests, summaries = load_trace([tmp_path])
    assert [s.file for s in summaries] == [str(session)]  # the message and part files are read by it
    exported, _ = _read(EXPORT)
    assert [replace(r, file="", line=0, path="") for r in requests] == [replace(r, file="", line=0, path="") for r in exported]
    # The export is one object: each call names its message and step (a storage file is a message's own).
    assert [r.path for r in exported] == [r.request_id for r in exported] and len({r.path for r in exported}) == len(exported)
    assert {r.path for r in requests} == {""}
    assert "24 message and part files read" in " ".join(summaries[0].notes)


def test_the_whole_storage_folder_is_audited_beside_its_other_files(tmp_path: Path) -> None:
    """Regression: OpenCode keeps diffs, todos and project records beside the sessions; a walk of
    the storage lists them as metadata (content of no known format, any size) instead of
    stopping the audit on them."""
    storage = tmp_path / "storage"
    session = _storage(storage, _export())
    sid = _export()["info"]["id"]
    for folder, name, text in (
        ("session_diff", f"{sid}.json", json.dumps([{"file": "t.py", "before": "x" * (2 << 20), "after": "y", "additions": 1, "deletions": 1}])),
        ("todo", f"{sid}.json", "[]"),
        ("project", "prj_4b825dc642cb.json", json.dumps({"id": "prj_4b825dc642cb", "worktree": "/work/app", "vcs": "git", "time": {"created": 1}})),
    ):
        (storage / folder).mkdir()
        (storage / folder / name).write_text(text)
    requests, summaries = load_trace([tmp_path])
    assert len(requests) == 4
    assert sorted((Path(s.file).parent.name, s.format) for s in summaries) == [
        ("prj_4b825dc642cb", "opencode"), ("project", "not-a-log"), ("session_diff", "not-a-log"), ("todo", "empty")
    ]
    assert str(session) in {s.file for s in summaries}


def test_a_storage_file_named_alone(tmp_path: Path) -> None:
    session = _storage(tmp_path / "storage", _export())
    part = next((tmp_path / "storage" / "part").rglob("*.json"))
    requests, summary = _read(part)
    assert requests == [] and f"read with its session file {session}" in summary.notes[0]
    session.unlink()
    with pytest.raises(UserError, match="without its session file"):
        _read(part)


def test_pruned_tool_outputs_are_a_compaction_of_the_next_request(tmp_path: Path) -> None:
    export = _export()
    tool = export["messages"][1]["parts"][2]
    tool["state"]["time"]["compacted"] = export["messages"][4]["info"]["time"]["created"]  # pruned at turn 3
    export["messages"][3]["info"].pop("summary")  # no summary call this time: an ordinary answer
    export["messages"][3]["info"]["mode"] = export["messages"][3]["info"]["agent"] = "build"
    path = write(tmp_path / "pruned.json", json.dumps(export))
    requests, _ = _read(path)
    assert [r.events for r in requests][2:] == [
        (("user_turn", ""), ("compaction", "compaction requested (/compact or context full)")),
        (("user_turn", ""), ("compaction", "1 tool output(s) pruned in place")),
    ]
    assert requests[3].prefix is not None and requests[3].prefix.parent is None


def test_a_negative_input_is_read_back_with_its_cache(tmp_path: Path) -> None:
    export = _export()
    finish = export["messages"][1]["parts"][6]
    finish["tokens"]["input"] = -9393  # 7 stored as 7 - 9000 - 400 by a double subtraction
    path = write(tmp_path / "negative.json", json.dumps(export))
    requests, summary = _read(path)
    assert requests[1].usage.uncached == 7
    assert any("negative input" in note for note in summary.notes)
    finish["tokens"]["input"] = -20000
    with pytest.raises(UserError, match="below minus the cache"):
        _read(write(path, json.dumps(export)))


def test_a_folder_holding_one_export_is_audited(tmp_path: Path) -> None:
    """Regression: the folder walk took any one-object .json of 1 MiB or less for metadata."""
    (tmp_path / "ses_1.json").write_bytes(EXPORT.read_bytes())
    requests, summaries = load_trace([tmp_path])
    assert len(requests) == 4 and summaries[0].format == "opencode"


def test_a_subagent_session_is_a_subagent_lane(tmp_path: Path) -> None:
    export = _export()
    export["info"]["parentID"] = "ses_parent"
    requests, _ = _read(write(tmp_path / "child.json", json.dumps(export)))
    assert {r.lane_kind for r in requests if r.lane == "main"} == {"subagent"}


def test_a_retried_call_is_a_failed_call_counted_apart(tmp_path: Path) -> None:
    """OpenCode 0.x kept a call that failed and was retried as a ``retry`` part of the assistant
    message, ``{attempt, error {name, data {message, isRetryable}}, time {created}}``, before the
    step of the attempt that answered (anomalyco/opencode ``MessageV2.RetryPart``; later versions
    only set the session's status). Each is a failed call: counted apart, in the skipped records,
    the calls as before. Before this the retry parts were passed over (no skipped record)."""
    export = _export()
    answered = export["messages"][3]
    mid, sid = answered["info"]["id"], answered["info"]["sessionID"]
    answered["parts"][:0] = [
        {"id": f"prt_retry{n}", "messageID": mid, "sessionID": sid, "type": "retry", "attempt": n,
         "error": {"name": "APIError", "data": {"message": "Overloaded", "isRetryable": True, "statusCode": 529}},
         "time": {"created": 1_760_000_000_000 + n}}
        for n in (1, 2)]
    requests, summary = _read(write(tmp_path / "retried.json", json.dumps(export)))
    before, before_summary = _read(EXPORT)
    assert [r.usage for r in requests] == [r.usage for r in before]
    retried = [s for s in summary.skipped if "retried" in s[1]]
    assert [text for _, text in retried] == ["failed call (APIError: Overloaded), retried (attempt 1)",
                                             "failed call (APIError: Overloaded), retried (attempt 2)"]
    assert len(summary.skipped) == len(before_summary.skipped) + 2


def _forked(export: dict, at: int) -> dict:
    """A fork of ``export`` as OpenCode's ``Session.fork`` makes it (anomalyco/opencode
    packages/opencode/src/session/index.ts): a new session, created now, titled "(fork #1)",
    holding a copy of the first ``at`` messages and their parts under new ids, each message's
    ``time`` kept; then one turn of its own (a user message and a call reading the copy)."""
    sid = "ses_6d2f0a1b3ffeFORKED"
    info = dict(export["info"], id=sid, title=export["info"]["title"] + " (fork #1)", time={"created": 1762000200000, "updated": 1762000300000})
    messages = []
    for n, message in enumerate(export["messages"][:at]):
        mid = f"msg_1{n:02}"
        messages.append({"info": dict(message["info"], id=mid, sessionID=sid),
                         "parts": [dict(part, id=f"prt_1{n:02}{k}", messageID=mid, sessionID=sid) for k, part in enumerate(message["parts"])]})
    messages.append({"info": {"id": "msg_200", "sessionID": sid, "role": "user", "time": {"created": 1762000250000}},
                     "parts": [{"id": "prt_200", "messageID": "msg_200", "sessionID": sid, "type": "text", "text": "now the other way"}]})
    step = {"input": 300, "output": 40, "reasoning": 0, "cache": {"read": 9000, "write": 0}}
    messages.append({"info": {"id": "msg_201", "sessionID": sid, "role": "assistant", "time": {"created": 1762000250100, "completed": 1762000256000},
                              "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "mode": "build", "tokens": step, "cost": 0.004},
                     "parts": [{"id": "prt_201", "messageID": "msg_201", "sessionID": sid, "type": "step-start"},
                               {"id": "prt_202", "messageID": "msg_201", "sessionID": sid, "type": "step-finish", "tokens": step, "cost": 0.004}]})
    return {"info": info, "messages": messages}


def test_a_forked_session_does_not_count_the_calls_it_copied(tmp_path: Path) -> None:
    """OpenCode's ``/fork`` (``Session.fork``) copies the source session's messages and parts,
    step-finish tokens included, into a new session under new ids, keeping each message's time:
    the copies are dated before the session was created. The source session counts those calls;
    the fork counts only its own (one here), its first a ``fork`` event starting a new chain.
    Before this the fork counted the copied three calls again (four calls)."""
    fork = _forked(_export(), 4)
    requests, summary = _read(write(tmp_path / "fork.json", json.dumps(fork)))
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.output) for r in requests] == [(300, 9000, 40)]
    assert requests[0].prefix.parent is None
    assert [kind for kind, _ in requests[0].events] == ["fork", "user_turn"]
    assert any("3 call(s) copied from the session it was forked from" in note for note in summary.notes)
    # The source and its fork read together: every call once.
    source = write(tmp_path / "source.json", EXPORT.read_text())
    total, _ = load_trace([source, tmp_path / "fork.json"])
    assert len(total) == 5


def _deepseek_export(provider: str, model: str) -> dict:
    """A session of two calls in one assistant message: a tool call, then the answer."""
    sid = "ses_ds"
    finish = [
        {"input": 12_000, "output": 300, "reasoning": 100, "cache": {"read": 0, "write": 0}},
        # the second call's prompt: the first's prompt, its reasoning and output, the tool's result
        {"input": 198, "output": 50, "reasoning": 0, "cache": {"read": 12_352, "write": 0}},
    ]
    parts: list[dict] = []
    for k, tokens in enumerate(finish):
        parts += [{"type": "step-start", "id": f"prt_{k}a"},
                  {"type": "step-finish", "reason": "tool-calls" if k == 0 else "stop", "cost": 0, "tokens": tokens, "id": f"prt_{k}b"}]
    for part in parts:
        part.update({"sessionID": sid, "messageID": "msg_2"})
    return {
        "info": {"id": sid, "projectID": "p", "directory": "/w", "title": "t", "version": "1.14.0", "time": {"created": 1762000000000, "updated": 1762000010000}},
        "messages": [
            {"info": {"id": "msg_1", "sessionID": sid, "role": "user", "time": {"created": 1762000000000}},
             "parts": [{"type": "text", "text": "go", "id": "prt_u", "sessionID": sid, "messageID": "msg_1"}]},
            {"info": {"id": "msg_2", "sessionID": sid, "role": "assistant", "time": {"created": 1762000000100, "completed": 1762000009000},
                      "parentID": "msg_1", "modelID": model, "providerID": provider, "mode": "build", "agent": "build",
                      "cost": 0, "tokens": {"input": 12_198, "output": 350, "reasoning": 100, "cache": {"read": 12_352, "write": 0}}},
             "parts": parts},
        ],
    }


def test_deepseek_calls_are_predicted_to_read_into_the_previous_reply(tmp_path: Path) -> None:
    # DeepSeek caches a call's output after its prompt, and OpenCode sends the reply back whole
    # (reasoning first): the second call reads 12,000 + 100 + 300 = 12,400 tokens, in whole
    # 64-token units, 12,352. Read only to the previous prompt, 11,968 (a 3.1% miss).
    result = run_audit([write(tmp_path / "s.json", json.dumps(_deepseek_export("deepseek", "deepseek-v4-flash")))])
    assert [(r.provider, r.reported_cache_read, r.predicted_cache_read) for r in result.rows] == [
        ("deepseek", 0, 0), ("deepseek", 12_352, 12_352)]


@pytest.mark.parametrize("model", ["deepseek-v4-flash-free", "big-pickle"])
def test_an_opencode_zen_free_model_is_priced_at_zero_said_so(tmp_path: Path, model: str) -> None:
    # OpenCode Zen's pricing table (opencode.ai/docs/zen) lists its free models as Free: through
    # Zen (providerID opencode) they were unpriced, their dollars left out; now $0, said so, under
    # OpenCode's own name of a Zen model, opencode/<id>, and predicted as before.
    zen = run_audit([write(tmp_path / "zen.json", json.dumps(_deepseek_export("opencode", model)))])
    assert {r.model for r in zen.rows} == {f"opencode/{model}"}
    assert [r.cost_usd for r in zen.rows] == [0, 0] and zen.totals.unpriced_requests == 0
    assert f"priced at $0 by the row opencode-zen-free (a free variant, no charge a token): opencode/{model}" in zen.notes
    # The same id through another route than Zen is not Zen's free model: unpriced as before.
    other = run_audit([write(tmp_path / "other.json", json.dumps(_deepseek_export("openrouter", model)))])
    assert {r.model for r in other.rows} == {model} and other.totals.unpriced_requests == 2
    # A Zen model Zen bills keeps its id and its price.
    paid = run_audit([write(tmp_path / "paid.json", json.dumps(_deepseek_export("opencode", "deepseek-v4-flash")))])
    assert {r.model for r in paid.rows} == {"deepseek-v4-flash"} and all(r.cost_usd for r in paid.rows)


def test_openai_calls_are_not_taken_to_read_into_the_previous_reply(tmp_path: Path) -> None:
    # Two real OpenCode sessions on OpenAI read no further than the previous prompt.
    export = _deepseek_export("openai", "gpt-5.2")
    result = run_audit([write(tmp_path / "s.json", json.dumps(export))])
    assert [r.predicted_cache_read for r in result.rows] == [0, 11_904]  # 1,024 + 128 x 85


def test_a_call_no_sdk_reports_writes_for_leaves_them_unknown(tmp_path: Path) -> None:
    # OpenCode stores a write count only where its provider's SDK gives one (the Anthropic and
    # Bedrock SDKs' metadata): through OpenCode Zen's OpenAI-compatible route a 0 says nothing of
    # what the call wrote. On a server no rule names (mimo-v2.5-free, public Entire checkpoints of
    # 2026-07: each read the previous prompt whole, in 64-token units) main took the 0 as nothing
    # written and predicted the first call's read, 0, for the second.
    export = _deepseek_export("opencode", "mimo-v2.5-free")
    steps = [p for p in export["messages"][1]["parts"] if p["type"] == "step-finish"]
    steps[1]["tokens"] = {"input": 530, "output": 50, "reasoning": 0, "cache": {"read": 11_968, "write": 0}}
    result = run_audit([write(tmp_path / "s.json", json.dumps(export))])
    assert [(r.provider, r.reported_cache_read, r.predicted_cache_read) for r in result.rows] == [
        ("unknown", 0, 0), ("unknown", 11_968, 12_000)]
    # A model that never read in the session showed no cache: its zeros stand.
    steps[1]["tokens"] = {"input": 12_498, "output": 50, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    result = run_audit([write(tmp_path / "n.json", json.dumps(export))])
    assert [r.predicted_cache_read for r in result.rows] == [0, 0]
    # Through the Anthropic SDK the write count is on the wire: a 0 there is nothing written.
    export = _deepseek_export("anthropic", "claude-sonnet-4-5")
    result = run_audit([write(tmp_path / "a.json", json.dumps(export))])
    assert [r.predicted_cache_read for r in result.rows] == [0, 0]


def test_mutated_exports_end_cleanly() -> None:
    """Fuzz: a mutated export or storage file ends in exit 0 or one line with exit 2."""
    tally = Tally("opencode", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-opencode-"))
    seeds = [EXPORT.read_bytes(), json.dumps(_export()["messages"][1]["parts"][3]).encode()]

    @fuzz_settings(25)
    @given(seed=st.sampled_from(seeds), data=st.data(), explicit=st.booleans())
    def case(seed: bytes, data: st.DataObject, explicit: bool) -> None:
        path = write(folder / "log.json", data.draw(mutated(seed)))
        tally.check(["audit", str(path), "--quiet", *(["--input", "opencode"] if explicit else [])])

    case()
    assert tally.outcomes["crash"] == 0


def test_edited_values_end_cleanly(tmp_path: Path) -> None:
    """Bad values where counts, times and ids go: one clean error or a reading."""
    export = _export()
    bad_values = (None, -1, 1.5, "7", True, [], {}, 10**20)
    for value in bad_values:
        for edit in ("input", "cache", "time", "id"):
            doc = copy.deepcopy(export)
            finish = doc["messages"][1]["parts"][3]
            if edit == "input":
                finish["tokens"]["input"] = value
            elif edit == "cache":
                finish["tokens"]["cache"] = value
            elif edit == "time":
                doc["messages"][1]["info"]["time"]["created"] = value
            else:
                doc["info"]["id"] = value
            path = write(tmp_path / "edited.json", json.dumps(doc))
            try:
                _read(path)
            except UserError as exc:
                assert "\n" not in str(exc) and str(path) in str(exc)


def test_an_export_captured_with_its_exporting_session_line_is_read(tmp_path: Path) -> None:
    # `opencode export ID > file 2>&1` keeps the line OpenCode prints first (klan1/k1.lib-bootstrap
    # commits such a session-export.json): the document starts on line 2.
    text = EXPORT.read_text()
    path = write(tmp_path / "session-export.json", "Exporting session: ses_6d2f0a1b3ffeABCDEF\n" + text)
    plain = run_audit([EXPORT]).totals
    got = run_audit([path])
    assert [f.format for f in got.files] == ["opencode"]
    assert (got.totals.requests, got.totals.input, got.totals.cache_read, got.totals.output) == (
        plain.requests, plain.input, plain.cache_read, plain.output)
    assert min(r.line for r in got.rows) >= 2
    broken = write(tmp_path / "broken.json", "Exporting session: ses_x\n" + text[: len(text) // 2].rstrip().rstrip(",") + "]}")
    with pytest.raises(UserError, match=r"broken\.json:\d+: "):
        run_audit([broken])


def test_a_model_ollama_runs_is_not_read_with_its_makers_rules(tmp_path: Path) -> None:
    # Ollama (locally or in its cloud) runs open models on its own servers: in k1.lib-bootstrap's
    # export none of 548 calls of minimax-m2.7:cloud through providerID "ollama" reported a read,
    # which MiniMax's rules predicted on 522 of them.
    doc = json.loads(EXPORT.read_text())
    for message in doc["messages"]:
        if message["info"].get("role") == "assistant":
            message["info"].update(providerID="ollama", modelID="minimax-m2.7:cloud")
    requests, _ = _read(write(tmp_path / "ollama.json", json.dumps(doc)))
    assert requests and {r.provider for r in requests} == {"unknown"}


@pytest.mark.parametrize("provider_id", ["ollama-local", "lmstudio-remote", "Ollama"])
def test_a_self_hosted_provider_id_is_known_as_codex_knows_it(tmp_path: Path, provider_id: str) -> None:
    """An OpenCode provider id is a key of the user's config (``ollama-local``): a self-hosting host
    is told by the same rule as Codex's ``model_provider`` (simulator/providers/vllm.py's
    ``self_hosted``), not by a list of exact ids of this reader's own (which read these with
    MiniMax's rules)."""
    doc = json.loads(EXPORT.read_text())
    for message in doc["messages"]:
        if message["info"].get("role") == "assistant":
            message["info"].update(providerID=provider_id, modelID="minimax-m2.7:cloud")
    requests, _ = _read(write(tmp_path / "ollama.json", json.dumps(doc)))
    assert requests and {r.provider for r in requests} == {"unknown"}
    # ... and its upstream, which no vendor bills: unpriced whatever the model's name.
    assert {r.upstream for r in requests} == {provider_id}


def test_a_provider_id_named_oss_is_no_self_hosted_host(tmp_path: Path) -> None:
    """``oss`` is Codex's flag's local host (vllm.self_hosted_upstream's ``oss``), not OpenCode's:
    a provider id so named is a key of the user's, read by its model as any other."""
    doc = json.loads(EXPORT.read_text())
    for message in doc["messages"]:
        if message["info"].get("role") == "assistant":
            message["info"].update(providerID="oss", modelID="minimax-m2.7:cloud")
    requests, _ = _read(write(tmp_path / "oss.json", json.dumps(doc)))
    assert requests and {(r.provider, r.upstream) for r in requests} == {("minimax", "")}


def _agent_switch_export(version: str, last_read: int) -> dict:
    """Three turns on Claude through Anthropic: two of the plan agent, then one of build."""
    sid, t0 = "ses_sw", 1764265491000
    calls = [("plan", {"input": 10, "output": 100, "reasoning": 0, "cache": {"read": 0, "write": 10_000}}),
             ("plan", {"input": 6, "output": 100, "reasoning": 0, "cache": {"read": 10_000, "write": 500}}),
             ("build", {"input": 6, "output": 100, "reasoning": 0,
                        "cache": {"read": last_read, "write": 11_212 - last_read}})]
    messages = []
    for k, (agent, tokens) in enumerate(calls):
        user, reply, at = f"msg_{k}u", f"msg_{k}a", t0 + 60_000 * k
        messages += [
            {"info": {"id": user, "sessionID": sid, "role": "user", "agent": agent, "time": {"created": at}},
             "parts": [{"type": "text", "text": f"turn {k}", "id": f"prt_{k}u", "sessionID": sid, "messageID": user}]},
            {"info": {"id": reply, "sessionID": sid, "role": "assistant", "parentID": user, "mode": agent,
                      "modelID": "claude-sonnet-4-5-20250929", "providerID": "anthropic", "cost": 0, "tokens": tokens,
                      "time": {"created": at + 100, "completed": at + 5_000}},
             "parts": [{"type": "step-start", "id": f"prt_{k}s", "sessionID": sid, "messageID": reply},
                       {"type": "text", "text": "ok", "id": f"prt_{k}t", "sessionID": sid, "messageID": reply},
                       {"type": "step-finish", "reason": "stop", "cost": 0, "tokens": tokens, "id": f"prt_{k}f",
                        "sessionID": sid, "messageID": reply}]},
        ]
    return {"info": {"id": sid, "projectID": "p", "directory": "/w", "title": "t", "version": version,
                     "time": {"created": t0, "updated": t0 + 200_000}}, "messages": messages}


def test_an_agent_switch_before_1_1_starts_a_new_chain(tmp_path: Path) -> None:
    """Before OpenCode 1.1 (anomalyco/opencode#6319) the plan agent was sent without the edit
    tools, ahead of the system prompt: the first build call after plan shares no cached prefix
    with plan's calls (a committed 1.0.107 session read nothing, writing its 12,330 tokens). Main
    predicted it to read the plan chain: a miss nothing in the log explained."""
    result = run_audit([write(tmp_path / "s.json", json.dumps(_agent_switch_export("1.0.107", 0)))])
    last = result.rows[-1]
    assert (last.reported_cache_read, last.predicted_cache_read, last.read_within) == (0, 0, True)
    assert last.cause != "unexplained"


def test_an_agent_switch_from_1_1_on_reads_the_chain_on(tmp_path: Path) -> None:
    # Since 1.1 the edit tools stay listed for plan (the permission is asked when a tool runs):
    # 1.14 and 1.18 sessions read on across a switch.
    result = run_audit([write(tmp_path / "s.json", json.dumps(_agent_switch_export("1.14.46", 10_500)))])
    last = result.rows[-1]
    assert (last.reported_cache_read, last.predicted_cache_read) == (10_500, 10_500)


def test_a_renamed_fork_still_does_not_count_the_calls_it_copied(tmp_path: Path) -> None:
    """A fork renamed since (``/rename``, or OpenCode's title set again) has lost its
    "(fork #n)", but keeps its copies' times, dated before it was created: still only its own
    call is counted. Main knew a fork by its title and counted the three copied calls again."""
    fork = _forked(_export(), 4)
    fork["info"]["title"] = "another approach"
    created = fork["info"]["time"]["created"]
    for n, message in enumerate(fork["messages"]):  # ids as OpenCode mints them: the copies' at the fork
        at = created + n if n < 4 else message["info"]["time"]["created"]
        message["info"]["id"] = mid = f"msg_{at * 0x1000 + 1 & (1 << 48) - 1:012x}" + "Ab3" * 4 + "xy"
        for part in message["parts"]:
            part["messageID"] = mid
    requests, summary = _read(write(tmp_path / "renamed.json", json.dumps(fork)))
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.output) for r in requests] == [(300, 9000, 40)]
    assert [kind for kind, _ in requests[0].events] == ["fork", "user_turn"]
    assert any("3 call(s) copied from the session it was forked from" in note for note in summary.notes)
    source = write(tmp_path / "source.json", EXPORT.read_text())
    assert len(load_trace([source, tmp_path / "renamed.json"])[0]) == 5
    # Messages that kept ids minted when they were written (a session an upgrade copied, created
    # after them): no copies, every call counted.
    kept = json.loads(json.dumps(fork))
    for message in kept["messages"]:
        at = message["info"]["time"]["created"]
        message["info"]["id"] = f"msg_{at * 0x1000 + 1 & (1 << 48) - 1:012x}" + "Ab3" * 4 + "xy"
    requests, _ = _read(write(tmp_path / "kept.json", json.dumps(kept)))
    assert len(requests) == 4


def test_a_call_a_third_party_host_served_is_unpriced_not_the_makers_list_price(tmp_path: Path) -> None:
    # OpenCode's providerID names the host the call went to: Fireworks (models.dev's fireworks-ai)
    # bills its own prices for DeepSeek's model, which the table does not hold. Main priced both
    # calls at DeepSeek's list price; now unpriced, and a note names the host.
    model = "accounts/fireworks/models/deepseek-v4-flash"
    result = run_audit([write(tmp_path / "fw.json", json.dumps(_deepseek_export("fireworks-ai", model)))])
    assert [r.cost_usd for r in result.rows] == [None, None] and result.totals.unpriced_requests == 2
    assert any(n.startswith(f"no price for 2 request(s) of {model} served by fireworks-ai (the log names it): Fireworks sets its own")
               for n in result.notes), result.notes
    own = run_audit([write(tmp_path / "ds.json", json.dumps(_deepseek_export("deepseek", "deepseek-v4-flash")))])
    assert None not in [r.cost_usd for r in own.rows]
