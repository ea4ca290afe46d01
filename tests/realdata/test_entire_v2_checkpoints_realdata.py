"""Sessions Entire's v2 checkpoint layout keeps in a public repository, read where they live (a
local git copy; never copied into this project, the test skips without it):
github.com/computermode/test-repo, Entire 0.5.6 (2026-03 to 04), from
``PREFIXBENCH_COMPUTERMODE_TEST_REPO`` (default the workplace's mirror).

The v2 layout splits a checkpoint over two refs: ``refs/entire/checkpoints/v2/main`` keeps each
session folder's ``metadata.json`` (the agent, Entire's token sums) and Entire's compact
``transcript.jsonl``; ``refs/entire/checkpoints/v2/full/current`` keeps the agent's own file as
``raw_transcript`` (no extension) in the same folder. On the latter:

- Claude Code 2.1.77 to 2.1.146 (claude-opus-4-6, claude-opus-4-7): 40 raw transcripts (one
  of which Entire's metadata labels Gemini CLI) of 28 sessions (a session checkpointed again holds its earlier calls), 128 distinct calls; the audit
  of all of them counts each call once and its totals equal the calls' own usage summed, 107
  reads within 3%. Audited one at a time, each file's totals equal its own sums (184 calls, 137
  reads within 3%).
- pi (claude-opus-4-7, 2026-04-24): one session of 4 calls; totals equal its usage and Entire's
  sums; 3 reads within 3%.
- Gemini CLI (gemini-3-flash-preview): the four sessions the v1 branch's test does not pin;
  totals equal the messages' ``tokens`` (input without ``cached``, output with ``thoughts``).
  Audited together with the v1 branch's five (23 calls, 2026-03-17 to 30), 20 reads within 3%
  (13 before the head counted as a lane's first checkpoint: seven second calls read the head,
  5,665-5,888, which one session's first call read from another's, 5,736).
- Kiro CLI: its conversation state keeps no token count, and Entire's compact transcripts of
  Kiro and Cursor have no ``ts``: each is refused in one line naming what it is (before: unknown
  log format).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats.totals_only import KIRO_CONVERSATION
from tests.realdata.mirrors import file_at, files_at

ENV = "PREFIXBENCH_COMPUTERMODE_TEST_REPO"
URL = "github.com/computermode/test-repo"
REPO = Path(os.environ.get(ENV, "/work/.mirror/computermode+test-repo/repo"))
#: refs/entire/checkpoints/v2/full/current and refs/entire/checkpoints/v2/main, 2026-04-24.
FULL = "2c72293efb589f45cd2120ebd7f309e521df2a78"
MAIN = "a027cece0e6828e2d07d7dd51a249577912b765f"


def _raw(folder: str, tmp_path: Path) -> Path:
    path = tmp_path / folder.replace("/", "_")
    path.write_bytes(file_at(REPO, FULL, f"{folder}/raw_transcript", URL, ENV))
    return path


def _claude_code_sums(path: Path) -> tuple[dict[tuple[str, str], dict], set[str]]:
    """Each call's usage by (session, message id), and the Claude Code versions that wrote them."""
    calls: dict[tuple[str, str], dict] = {}
    versions: set[str] = set()
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("version"):
            versions.add(entry["version"])
        message = entry.get("message") or {}
        if entry.get("type") == "assistant" and message.get("usage") and message.get("model") != "<synthetic>":
            calls[(entry["sessionId"], message["id"])] = message["usage"]
    return calls, versions


def _sums(calls: dict) -> tuple[int, int, int, int]:
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
    return tuple(sum(u.get(k) or 0 for u in calls.values()) for k in keys)  # type: ignore[return-value]


def _totals(result) -> tuple[int, int, int, int]:
    """The totals against the log's own sums: writes no call reports a count of (None) are its 0."""
    t = result.totals
    return (t.input, t.cache_read, t.cache_write or 0, t.output)


def test_claude_code_raw_transcripts_count_each_call_once(tmp_path: Path) -> None:
    folders = sorted(n.rsplit("/", 1)[0] for n in files_at(REPO, FULL, URL, ENV) if n.endswith("/raw_transcript"))
    paths, calls, versions = [], {}, set()
    for folder in folders:
        path = _raw(folder, tmp_path)
        # Told by content (Entire's metadata labels one of them Gemini CLI): JSON lines whose
        # assistant entries carry a usage and Claude Code's version.
        try:
            own, written = _claude_code_sums(path)
        except (ValueError, KeyError):
            continue
        if not own or not written:
            continue
        paths.append(path)
        calls.update(own)
        versions |= written
    assert len(paths) == 40 and len({session for session, _ in calls}) == 28 and len(calls) == 128
    assert min(versions, key=lambda v: tuple(map(int, v.split(".")))) == "2.1.77"
    assert max(versions, key=lambda v: tuple(map(int, v.split(".")))) == "2.1.146"
    result = run_audit(paths)
    assert result.totals.requests == 128
    assert _totals(result) == _sums(calls) == (265, 2_783_662, 478_411, 12_504)
    assert sum(f.read_within for f in result.files) == 107


#: raw transcript folder: (Claude Code version, calls, reads within 3%), audited alone.
CLAUDE_CODE_ALONE = {
    "1f/00c95a412b/0": ("2.1.146", 4, 3),
    "6d/5a7951e4f1/0": ("2.1.126", 6, 4),
    "f3/2a9575d83c/0": ("2.1.126", 8, 5),
    "e8/e062073afb/0": ("2.1.89", 10, 8),
}


@pytest.mark.parametrize("folder", sorted(CLAUDE_CODE_ALONE))
def test_a_claude_code_raw_transcript_alone_totals_its_own_usage(folder: str, tmp_path: Path) -> None:
    version, requests, within = CLAUDE_CODE_ALONE[folder]
    path = _raw(folder, tmp_path)
    calls, versions = _claude_code_sums(path)
    assert version in versions and len(calls) == requests
    result = run_audit([path])
    assert [f.format for f in result.files] == ["claude-code"]
    assert result.totals.requests == requests and _totals(result) == _sums(calls)
    assert result.files[0].read_within == within


def test_a_pi_raw_transcript_totals_its_usage_and_entires_sums(tmp_path: Path) -> None:
    folder = "de/5a2f809927/0"
    path = _raw(folder, tmp_path)
    usages = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        message = entry.get("message") or {}
        if entry.get("type") == "message" and message.get("role") == "assistant" and message.get("usage"):
            assert message["model"] == "claude-opus-4-7"
            usages.append(message["usage"])
    own = tuple(sum(u[k] for u in usages) for k in ("input", "cacheRead", "cacheWrite", "output"))
    meta = json.loads(file_at(REPO, MAIN, f"{folder}/metadata.json", URL, ENV))
    entire = meta["token_usage"]
    assert meta["agent"] == "Pi" and entire["api_call_count"] == len(usages) == 4
    assert own == (entire["input_tokens"], entire["cache_read_tokens"], entire["cache_creation_tokens"], entire["output_tokens"])
    result = run_audit([path])
    assert [f.format for f in result.files] == ["pi"]
    assert result.totals.requests == 4 and _totals(result) == own == (9, 9_566, 4_529, 446)
    assert result.files[0].read_within == 3


#: Gemini CLI raw transcript folder: (calls, (input, cache read, cache write, output)).
GEMINI = {
    "72/9ac91fce19/0": (2, (7_046, 5_693, 0, 120)),
    "c8/1467b72ca0/0": (2, (7_062, 5_680, 0, 204)),
    "c8/eb421389c0/0": (2, (1_372, 11_379, 0, 199)),
    "ec/f782729563/0": (2, (7_045, 5_702, 0, 243)),
}


@pytest.mark.parametrize("folder", sorted(GEMINI))
def test_a_gemini_cli_raw_transcript_totals_its_messages_tokens(folder: str, tmp_path: Path) -> None:
    requests, sums = GEMINI[folder]
    path = _raw(folder, tmp_path)
    tokens = [m["tokens"] for m in json.loads(path.read_text())["messages"] if m.get("type") == "gemini" and m.get("tokens")]
    own = (sum(t["input"] - t["cached"] + t.get("tool", 0) for t in tokens), sum(t["cached"] for t in tokens), 0,
           sum(t["output"] + t.get("thoughts", 0) for t in tokens))
    assert len(tokens) == requests and own == sums
    result = run_audit([path])
    assert [f.format for f in result.files] == ["gemini-cli"]
    assert result.totals.requests == requests and _totals(result) == sums


@pytest.mark.parametrize("folder", ["75/6b48023085/0", "75/6b48023085/1", "9b/bf78569566/0", "cc/e48b6a4aec/0", "d0/66ac5f33dd/0"])
def test_a_kiro_conversation_is_refused_in_one_line(folder: str, tmp_path: Path) -> None:
    path = _raw(folder, tmp_path)
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert str(caught.value) == f"{path}:1: {KIRO_CONVERSATION}"


@pytest.mark.parametrize(("folder", "agent"), [("75/6b48023085/0", "kiro"), ("b8/b6fbd5f55f/0", "Cursor")])
def test_entires_compact_transcript_without_times_names_the_agent(folder: str, agent: str, tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(file_at(REPO, MAIN, f"{folder}/transcript.jsonl", URL, ENV))
    assert "ts" not in json.loads(path.read_text().splitlines()[0])
    with pytest.raises(UserError, match=rf"^{path}:1: Entire's compact transcript of a session of the agent {agent} .*"
                                        r"raw_transcript, same folder, on refs/entire/checkpoints/v2/full/current\) instead$"):
        run_audit([path])


#: The v1 branch's Gemini CLI sessions (tests/realdata/test_entire_codex_gemini_realdata.py) at its commit.
GEMINI_V1, GEMINI_V1_COMMIT = (("14/d75ebe3a6d/0", "5a/31697679ee/0", "79/d52455f160/0", "94/3126df1f2a/0", "e6/b2f769a273/0"),
                               "afda803df0574a112cc9c856060a13464ee0a56f")


def test_the_gemini_cli_sessions_audited_together_read_the_head_first(tmp_path: Path) -> None:
    paths = [_raw(folder, tmp_path) for folder in sorted(GEMINI)]
    for folder in GEMINI_V1:
        path = tmp_path / f"v1_{folder.replace('/', '_')}.json"
        path.write_bytes(file_at(REPO, GEMINI_V1_COMMIT, f"{folder}/full.jsonl", URL, ENV))
        paths.append(path)
    result = run_audit(paths)
    assert result.totals.requests == 23
    # 13 -> 20: a lane's second call is predicted to read the head (5,736, which c8/eb421389c0's
    # first call read), not the 3,924-token checkpoint inside the previous prompt. Off: that first
    # call (predicted 0), a second call that read 0, and a read that moved up 272 tokens.
    # 20 -> 19: the head is one per workspace (projectHash); e6/b2f769a273 ran in another one (a
    # 7,318-token first prompt, where the others' were 6,272-6,497), whose lane start read nothing:
    # its second call (read 5,888) is no longer predicted the other workspace's 5,736 head.
    assert sum(f.read_within for f in result.files) == 19
