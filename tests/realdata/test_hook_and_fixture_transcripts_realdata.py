"""Real Claude Code transcripts kept in public repositories, most in shapes the other realdata tests
do not read, each read where it lives at one commit (never copied into this project; each test
skips without its git copy):

* ``logs/chat.json``, the JSON array a Stop hook writes (the hooks template many projects copied
  rewrites it at every stop with the whole transcript; two keep it under ``.claude/``), committed by
  seventeen users: Claude Code 1.0.48 to 2.1.146, 2025-07 to 2026-06, on claude-opus-4,
  claude-opus-4-1, claude-sonnet-4, claude-sonnet-4-5, claude-opus-4-5, claude-opus-4-6 and
  claude-opus-4-7 (1 h writes, and a run of ten failed retries) (:data:`CHAT_JSON`, one env var
  each);
* the real transcripts github.com/DRMacIver/claude-reliability records for its snapshot tests
  (``snapshot-tests/tests/<case>/transcript.jsonl``: Claude Code 2.1.14 run headless on
  claude-opus-4-5, 2026-01-21, ten cases, three of them with no call), audited as one folder
  (one account), from ``PREFIXBENCH_CLAUDE_RELIABILITY_REPO``;
* a ``~/.claude/projects/<project>/`` folder github.com/kfischer-okarin/scripts-and-tools keeps as
  the fixture of its history tool (``src/claude-history/test/fixtures/claude-projects/``, Claude
  Code 2.0.74, 2025-12-20: a session on claude-opus-4-5, a Task subagent on claude-sonnet-4-5 and
  the 2.0.x warmup calls as top-level ``agent-*.jsonl`` files, two empty files and two byte-equal
  copies), from ``PREFIXBENCH_SCRIPTS_AND_TOOLS_REPO``.
* the output of seventeen headless runs, ``claude -p --output-format stream-json`` (Claude Code
  2.0.37 and 2.0.41, claude-sonnet-4-5 and claude-haiku-4-5, 2025-11; no parent links, no
  timestamps) github.com/JoshuaOliphant/mochi_donut keeps as ``agents/<id>/<step>/cc_raw_output.jsonl``,
  from ``PREFIXBENCH_CHAT_MOCHI_DONUT_REPO``;
* a Claude Code 2.0.37 session (claude-opus-4-1, 11 calls, 2025-11-12) committed as
  ``claude-test.jsonl`` beside a trace viewer's samples in github.com/thomasahle/trace-taxi, from
  ``PREFIXBENCH_TRACE_TAXI_REPO``.

What is checked is each log's own bookkeeping, recounted here from the raw fields (one call per
message id, its last line's usage, ``<synthetic>`` lines left out) against the audit's totals,
and how many reads the audit predicts within 3% (measured 2026-12-04).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import load_trace, run_audit
from tests.realdata.mirrors import file_at, files_at

#: env var: (repository, commit of ``logs/chat.json``, Claude Code version, calls, (input,
#: output, read, write, 1 h write) summed from the file, records skipped, reads within 3%).
CHAT_JSON = {
    "PREFIXBENCH_CHAT_BLACKCORE_REPO": (
        "rickhallett/blackcore", "84d3278e7b92c08bf99aeb5902f5966328444b3a", "1.0.48", 42,
        (46, 1_904, 1_346_189, 43_587, 0), 1, 41,
    ),
    "PREFIXBENCH_CHAT_SAORSA_CORE_REPO": (
        "dirvine/saorsa-core", "1236ae258c52c5227805f7a0386e3fb9875b1866", "1.0.77", 68,
        (117, 45_028, 7_085_244, 264_790, 0), 0, 68,
    ),
    "PREFIXBENCH_CHAT_RESTAURANT_APP_REPO": (
        "lroy-stack/restaurant-app", "0cbb2ded801a94f796b0df98d3581fad8caafe06", "1.0.113", 162,
        (12_957, 36_480, 17_086_269, 1_208_071, 0), 1, 151,
    ),
    "PREFIXBENCH_CHAT_GOLFGOD_REPO": (
        "ThomasJMcGovern/Golfgod_v1", "0b343971595f0b194a47a4a34aa6ee34ae1b9f9c", "2.0.28", 6,
        (15_193, 3_009, 384_129, 85_695, 0), 0, 5,
    ),
    "PREFIXBENCH_CHAT_MOCHI_DONUT_REPO": (
        "JoshuaOliphant/mochi_donut", "e1d07cd3dbf31dc0f581eaa1738dcb1fc95d45d0", "2.0.37", 32,
        (8_656, 38_086, 2_494_961, 644_550, 0), 0, 28,
    ),
    "PREFIXBENCH_CHAT_RHEMA_REPO": (
        "FellowDalton/rhema", "528ec6cabb6c274c6ddb50d6b5a3902ed2f4fbf6", "2.0.42", 5,
        (42, 1_456, 81_383, 21_144, 0), 0, 5,
    ),
    "PREFIXBENCH_CHAT_AWE_REPO": (
        "siliconyouth/awe", "8c96bea8bb895afd76cecf539f7e0b081bb656b4", "1.0.81", 13,
        (35, 238, 406_248, 25_405, 0), 0, 11,
    ),
    "PREFIXBENCH_CHAT_GISTCONSOLE_REPO": (
        "TJProRata/GistConsole", "6b3adb865fcd82c1b4f8a5a85512ea11e693f76c", "2.0.36", 22,
        (6_008, 7_235, 1_958_653, 189_006, 0), 0, 21,  # 20 before a turn dropped the previous one's thinking
    ),
    "PREFIXBENCH_CHAT_DMUX_REPO": (
        "applab-nl/dmux", "eef6c282b0951b31c5ad296ca9cafa5f0be4576e", "2.0.42", 49,
        (773, 16_398, 2_518_843, 417_923, 0), 0, 44,
    ),
    "PREFIXBENCH_CHAT_HARNESS_LAB_REPO": (
        "jim-at-jibba/harness-lab", "5ca71f8c810bbc4dc8e34a24a0e3d8dd9dfc8da1", "2.1.146", 23,
        (12_385, 20_397, 1_164_501, 94_526, 94_526), 1, 21,
    ),
    "PREFIXBENCH_CHAT_AGENTS_LEAGUE_REPO": (
        "bensaNiv/agents-league", "f05b8cba132933370ceed8fcfb067fb87032553d", "2.0.57", 5,
        (49, 3_079, 240_220, 163_531, 0), 0, 5,
    ),
    "PREFIXBENCH_CHAT_AZURE_N8N_SERVER_REPO": (
        "eltelemaco/azure-n8n-server", "1a31c33c0a1daa113499c5dec63a5ace2a97412c", "2.1.37", 12,
        (98, 2_606, 331_657, 41_281, 41_281), 0, 12,
    ),
    "PREFIXBENCH_CHAT_AGENTS_TESTING_REPO": (
        "jacgood/agents_testing", "2255eb3e186eaf9f1739b8d0ccbb849b84009a84", "1.0.65", 7,
        (74, 4_070, 367_530, 66_304, 0), 0, 7,
    ),
    "PREFIXBENCH_CHAT_CLAUDE_DEBUGGER_REPO": (
        "stevengonsalvez/claude-debugger", "be5b2c878a896f987c69082a7d0d5a15ec7852f0", "1.0.103", 29,
        (73, 4_386, 1_358_188, 219_014, 0), 0, 29,
    ),
    "PREFIXBENCH_CHAT_CRYPTO_REPO": (
        "muah1987/crypto", "c54472a7ce3cbd1784fdd855c23b7b47b0851134", "2.1.42", 94,
        (195, 9_383, 9_509_512, 362_830, 362_830), 2, 94,
    ),
    "PREFIXBENCH_CHAT_LOOPKIT_REPO": (
        "pookNast/loopkit", "73124c94e142519fea575e92b06a8c2a86b24acc", "2.1.96", 103,
        (127, 76_844, 9_844_058, 212_933, 212_933), 0, 102,
    ),
    "PREFIXBENCH_CHAT_A_SDLC_REPO": (
        "pleelapr/a-sdlc", "41db236f7747377a0b37967b510f6f90f5ae9ee6", "2.1.15", 27,
        (195, 55, 1_500_707, 136_173, 0), 0, 25,
    ),
}

#: The two kept under ``.claude/`` (the hook writing into the project's own settings folder).
CHAT_JSON_PATH = {"PREFIXBENCH_CHAT_AGENTS_LEAGUE_REPO": ".claude/logs/chat.json", "PREFIXBENCH_CHAT_AZURE_N8N_SERVER_REPO": ".claude/logs/chat.json"}

TRACE_TAXI = Path(os.environ.get("PREFIXBENCH_TRACE_TAXI_REPO", "/work/.mirror/thomasahle+trace-taxi/repo"))
TRACE_TAXI_COMMIT = "0cb1c8f5b74acc937a3844221eedeb338c34eb98"

CLAUDE_RELIABILITY = Path(os.environ.get(
    "PREFIXBENCH_CLAUDE_RELIABILITY_REPO", "/work/.mirror/DRMacIver+claude-reliability/repo"))
#: The snapshot cases' transcripts at the last commit each was recorded (seven re-recorded at the
#: first, three kept from the second).
CLAUDE_RELIABILITY_CASES = {
    "228d653b8d2aba8251eb3f3d4c222a2f652d7c60": (
        "coverage-test-fix", "hello-world-script", "python-to-rust-port", "stop-hook-fast-path-clean",
        "stop-hook-reflection-first-stop", "stop-hook-reflection-second-stop", "stop-hook-uncommitted-changes",
    ),
    "5ce05224c37417e96cd37b9c6bfa79c763468992": ("basic-stop-hook", "problem-mode", "unpushed-commits"),
}

#: The commit holding mochi_donut's stream-json runs (the last to change ``agents/``).
MOCHI_DONUT_RUNS_COMMIT = "84cadad1259e33fe8cf3d49e3c1e0b49d61f2fea"

SCRIPTS_AND_TOOLS = Path(os.environ.get(
    "PREFIXBENCH_SCRIPTS_AND_TOOLS_REPO", "/work/.mirror/kfischer-okarin+scripts-and-tools/repo"))
SCRIPTS_AND_TOOLS_COMMIT = "226dc4f748b8eb04c159b2ab272cc4166259abc5"
SCRIPTS_AND_TOOLS_FOLDER = "src/claude-history/test/fixtures/claude-projects/-Users-user-project"


def _usages(entries: list) -> tuple[list[dict], set[str]]:
    """One usage per API call (the last line of each message id, no ``<synthetic>`` line) and the
    versions the entries name."""
    usage: dict[str, dict] = {}
    versions: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if entry.get("version"):
            versions.add(entry["version"])
        message = entry.get("message")
        if entry.get("type") == "assistant" and isinstance(message, dict) and message.get("usage") and message.get("model") != "<synthetic>":
            usage[message["id"]] = message["usage"]
    return list(usage.values()), versions


def _jsonl(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _sums(usages: list[dict]) -> tuple[int, int, int, int, int]:
    return (
        sum(u["input_tokens"] for u in usages), sum(u["output_tokens"] for u in usages),
        sum(u.get("cache_read_input_tokens") or 0 for u in usages), sum(u.get("cache_creation_input_tokens") or 0 for u in usages),
        sum((u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0 for u in usages),
    )


def _within(result) -> int:
    return sum(r.read_within for r in result.rows)


@pytest.mark.parametrize("env", sorted(CHAT_JSON))
def test_stop_hook_chat_json_counts_what_the_log_sums(env: str, tmp_path: Path) -> None:
    repo, commit, version, calls, sums, skipped, within = CHAT_JSON[env]
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    path = tmp_path / "chat.json"
    path.write_bytes(file_at(mirror, commit, CHAT_JSON_PATH.get(env, "logs/chat.json"), f"github.com/{repo}", env))
    usages, versions = _usages(json.loads(path.read_text(encoding="utf-8")))
    assert versions == {version}
    assert len(usages) == calls and _sums(usages) == sums
    result = run_audit([path])
    assert [f.format for f in result.files] == ["claude-code"]
    t = result.totals
    assert (t.requests, (t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h)) == (calls, sums)
    assert result.files[0].skipped == skipped  # a <synthetic> line: no call
    assert _within(result) == within


def test_stop_hook_chat_json_sessions_sum_as_measured() -> None:
    # 669 of 699 within 3% (668 before a new turn on claude-sonnet-4-5 read only as far as the
    # previous turn's first thinking, which Anthropic drops then: GistConsole). Of the seven first added (323 of 342), the 19 off: 3 lane starts reading a head another session had cached;
    # mochi_donut's two reads of that head (14,608) 6m30s and 6m52s after the previous call, past
    # the 5 min TTL, predicted 0 because the same head read 0 after idles of 28 min to 24 h (the
    # account kept it warm only while its other sessions ran, which the file does not show); 11
    # falls to the head or into the history inside the TTL (restaurant-app 10, a-sdlc 1) that a
    # transcript gives no cause for; 1 read of 1,121 tokens more than the previous call left
    # cached (blackcore: a call the log does not count). Of the later ten (345 of 357): lane starts
    # reading a head cached before, falls to the head or into the history inside the TTL with no
    # cause in the transcript (dmux, GistConsole, loopkit), a read past the TTL (dmux) and one read
    # 20,755 tokens past what the previous call left (harness-lab, after ten failed retries).
    assert sum(c[3] for c in CHAT_JSON.values()) == 699 and sum(c[6] for c in CHAT_JSON.values()) == 669


def test_retry_notices_are_no_blocks_of_the_prompt_after_them(tmp_path: Path) -> None:
    env = "PREFIXBENCH_CHAT_HARNESS_LAB_REPO"
    repo, commit, *_ = CHAT_JSON[env]
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    path = tmp_path / "chat.json"
    path.write_bytes(file_at(mirror, commit, "logs/chat.json", f"github.com/{repo}", env))
    entries = json.loads(path.read_text(encoding="utf-8"))
    assert sum(e.get("subtype") == "api_error" for e in entries) == 10  # FailedToOpenSocket, ten retries
    row = next(r for r in run_audit([path]).rows if r.reported_cache_read == 55_332)
    # 7 min after the retries (1 h writes), the call read more than all the previous prompt left
    # (34,577; the other 20,755 no logged call wrote). Main counted the ten retry notices, the
    # API error reply and the turn's duration as blocks: 23 new blocks, past the lookback, and
    # predicted the 13,552-token head.
    assert (row.predicted_cache_read, row.cause) == (34_577, None)


def test_claude_reliability_snapshot_transcripts_as_one_folder(tmp_path: Path) -> None:
    url, env = "github.com/DRMacIver/claude-reliability", "PREFIXBENCH_CLAUDE_RELIABILITY_REPO"
    folder = tmp_path / "transcripts"
    usages: list[dict] = []
    for commit, cases in CLAUDE_RELIABILITY_CASES.items():
        for case in cases:
            path = folder / case / "transcript.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(file_at(CLAUDE_RELIABILITY, commit, f"snapshot-tests/tests/{case}/transcript.jsonl", url, env))
            found, versions = _usages(_jsonl(path))
            assert versions <= {"2.1.14"}
            usages += found
    assert len(usages) == 70
    result = run_audit([folder])
    assert {f.format for f in result.files} == {"claude-code"} and len(result.files) == 10
    t = result.totals
    assert (t.requests, (t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h)) == (70, _sums(usages))
    assert _sums(usages) == (60, 842, 1_701_601, 48_507, 0)
    # Every session of the folder starts by reading the same 15,289-token head (one account): as
    # one folder all 70 reads are within 3%; one file alone misses its lane start.
    assert _within(result) == 70


def test_claude_projects_folder_with_warmup_agents_copies_and_empty_files(tmp_path: Path) -> None:
    url, env = "github.com/kfischer-okarin/scripts-and-tools", "PREFIXBENCH_SCRIPTS_AND_TOOLS_REPO"
    names = [n for n in files_at(SCRIPTS_AND_TOOLS, SCRIPTS_AND_TOOLS_COMMIT, url, env)
             if n.startswith(SCRIPTS_AND_TOOLS_FOLDER + "/") and n.endswith(".jsonl")]
    folder = tmp_path / "-Users-user-project"
    folder.mkdir()
    for name in names:
        (folder / Path(name).name).write_bytes(file_at(SCRIPTS_AND_TOOLS, SCRIPTS_AND_TOOLS_COMMIT, name, url, env))
    formats: dict[str, str] = {}
    result = run_audit([folder])
    for summary in result.files:
        formats[Path(summary.file).name] = summary.format
    assert len(names) == 29 and len(formats) == 29
    assert sorted(n for n, f in formats.items() if f != "claude-code") == [
        "0f13eeba-e6ed-42ea-ad8c-d8db37e1304e.jsonl", "34d48ba8-bf7c-478e-aa05-b568b8be4cd1.jsonl",  # empty
        "b8649630-2a03-472f-b005-712c4650e6e9.jsonl", "e9040aa9-cf0d-4b25-a964-b30198f1f544.jsonl",  # copies
    ]
    counted = [p for p in sorted(folder.iterdir()) if formats[p.name] == "claude-code"]
    usages = [u for p in counted for u in _usages(_jsonl(p))[0]]
    assert len(usages) == 34  # 15 main, 3 of a Task subagent, 16 warmup calls (no cache)
    t = result.totals
    assert (t.requests, (t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h)) == (34, _sums(usages))
    assert _sums(usages) == (23_713, 2_249, 315_668, 45_563, 0)
    # The one off: the main lane's read of 13,289 tokens 17m49s after its previous call, past the
    # 5 min TTL (a head another session kept warm; no lane start in the folder read anything).
    assert _within(result) == 33


def test_trace_taxi_session_reads_two_warm_heads(tmp_path: Path) -> None:
    path = tmp_path / "claude-test.jsonl"
    path.write_bytes(file_at(TRACE_TAXI, TRACE_TAXI_COMMIT, "claude-test.jsonl", "github.com/thomasahle/trace-taxi", "PREFIXBENCH_TRACE_TAXI_REPO"))
    usages, versions = _usages(_jsonl(path))
    assert versions == {"2.0.37"} and len(usages) == 11
    result = run_audit([path])
    t = result.totals
    assert (t.requests, (t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h)) == (11, _sums(usages))
    assert _sums(usages) == (92, 1_591, 223_784, 44_988, 0)
    # The account kept two prefixes warm: 12,249 tokens (the system prompt and tools) after idles of
    # 27 min and 1h31m, and 17,482 (that head and the project's first message) at the lane start
    # and after idles of 5m22s and 13m15s (another session of the same project ran meanwhile).
    # The audit takes the smaller, agreed by two cold points, as the warm head: the three reads of
    # 17,482 are predicted 12,249.
    cold = [(r.reported_cache_read, r.predicted_cache_read) for r in result.rows if r.reported_cache_read in (12_249, 17_482)]
    assert cold == [(17_482, 12_249)] * 3 + [(12_249, 12_249)] * 2
    # The two reads of the longer level after the idles are TTL expiries, losing what the previous
    # call read and wrote past it (20,853 + 281 - 17,482; 17,482 + 3,853 - 17,482): the
    # conversation's entry went and the read stopped at a level three cold points read. Before,
    # they were put down to a change of the first message (messages-changed).
    after = [r for r in result.rows if r.reported_cache_read == 17_482 and r.index > 0]
    assert [(r.cause, r.lost_tokens) for r in after] == [("ttl-expired", 3_652), ("ttl-expired", 3_853)]
    assert all(("it read 17,482 tokens, as 3 cold points of this log did (lane starts and reads after a TTL expiry, this one "
                "included; reads within 1% of 17,482 tokens, their sizes alone compared)") in r.detail for r in after)
    assert _within(result) == 8


def test_headless_stream_json_runs_count_what_they_print_and_chain_in_print_order(tmp_path: Path) -> None:
    url, env = "github.com/JoshuaOliphant/mochi_donut", "PREFIXBENCH_CHAT_MOCHI_DONUT_REPO"
    mirror = Path(os.environ.get(env, "/work/.mirror/JoshuaOliphant+mochi_donut/repo"))
    names = [n for n in files_at(mirror, MOCHI_DONUT_RUNS_COMMIT, url, env) if n.endswith("/cc_raw_output.jsonl")]
    assert len(names) == 17
    usages: list[dict] = []
    versions: set[str] = set()
    within = 0
    for name in names:
        path = tmp_path / name.replace("/", "_")
        path.write_bytes(file_at(mirror, MOCHI_DONUT_RUNS_COMMIT, name, url, env))
        entries = _jsonl(path)
        assert not any("parentUuid" in e or "timestamp" in e for e in entries)  # the stream's shape
        versions |= {e["claude_code_version"] for e in entries if e.get("subtype") == "init"}
        found = _usages(entries)[0]
        usages += found
        result = run_audit([path])
        assert [f.format for f in result.files] == ["claude-code"]
        t = result.totals
        assert (t.requests, (t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h)) == (len(found), _sums(found)), name
        assert {r.agent_version for r in load_trace([path])[0]} <= versions  # the init line's
        within += _within(result)
    assert versions == {"2.0.37", "2.0.41"}
    assert len(usages) == 426 and _sums(usages) == (17_073, 168_066, 22_899_723, 1_032_628, 0)
    # Each message extends the one its run printed before. Main read every line as a root,
    # predicted to read the head alone: 52 of 426 within 3%.
    assert within == 426
