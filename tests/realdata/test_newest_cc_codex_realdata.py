"""The newest Claude Code and Codex sessions found committed to public repositories, audited out of
sample (none was used while the readers were written), read where they live (a local git copy;
never copied into this project, each test skips without it):

* github.com/austinweitao/claude-backup: a daily backup of a ``~/.claude/`` (its ``projects/``),
  Claude Code 2.1.68, 2.1.167 and 2.1.212 (2026-03 to 07). The Claude models went through a
  reseller's relay (the backup's settings name a base URL that is not Anthropic's): its
  claude-opus-4-8 responses split their cache writes by TTL as 0 + 0, which Anthropic's API never
  does, and are read as an unknown provider's; its claude-fable-5 and claude-opus-4.8 responses
  carry message ids of no maker's shape (``msg_`` + 16 hex) and are read as relayed on Anthropic's
  rules. MiniMax-M2.7 and -M3 through MiniMax's
  Anthropic-compatible API. Pinned at two commits: ``9fbf6756e58e9ad057efa25fc41ddce7d1b821bc``
  (2026-07-20, the newest: 2.1.212's dynamic-workflow subagents among them) and
  ``37ca79c59cf8cc368fa162dca3e9de37247a7f05`` (the largest). Files over the workplace snapshot's
  size limit are left out (listed below). From ``PREFIXBENCH_AUSTINWEITAO_REPO``.
* github.com/doudouqie66/CommonTools (``1bbc8e028f24ed37db971fb71475cabbd2cb48b2``, 2026-07-29): a
  committed ``.codex/sessions/`` of 441 rollouts (4 over the workplace snapshot's size limit left
  out), Codex in VS Code (``codex_vscode``) 0.137 to 0.146 (2026-06 to 07), gpt-5.5, gpt-5.6-sol
  and -terra on OpenAI, subagents among them, and 35 remote compactions (a ``compacted`` record
  whose replacement history holds an encrypted ``compaction`` item). From
  ``PREFIXBENCH_COMMONTOOLS_REPO``.
* github.com/j5ik2o/dotfiles (``f5951f06abfe7b4ea770c0d3eaa739dddfb97187``): one rollout of Codex
  CLI 0.122.0 (``.codex-personal/sessions/``, 2026-04-23), gpt-5.4 on OpenAI. From
  ``PREFIXBENCH_J5IK2O_DOTFILES_REPO``.
* github.com/wmasfoe/notch-pet (``b1a22916735ecc3b035c72f22dadd4d32d40ace7``): one rollout of Codex
  CLI 0.123.0 (2026-04-23), gpt-5.4 on OpenAI. From ``PREFIXBENCH_NOTCH_PET_REPO``.

What is checked: the audit's totals equal the logs' own sums, counted here from the raw lines,
and how many reads are predicted within 3%.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.trace import UNNAMED_RELAY
from tests.realdata.mirrors import claude_recount, codex_recount, read_within, tree_at

AUSTIN_URL, AUSTIN_ENV = "github.com/austinweitao/claude-backup", "PREFIXBENCH_AUSTINWEITAO_REPO"
AUSTIN = Path(os.environ.get(AUSTIN_ENV, "/work/.mirror/austinweitao+claude-backup/repo"))
AUSTIN_NEWEST = "9fbf6756e58e9ad057efa25fc41ddce7d1b821bc"
AUSTIN_LARGEST = "37ca79c59cf8cc368fa162dca3e9de37247a7f05"
#: The backup's transcripts absent from the workplace's snapshot (over its size limit), left out
#: so that every copy reads the same files.
AUSTIN_LEFT_OUT = frozenset({
    *(f"projects/-home-cwtrocks--claude-mem-observer-sessions/sessions/{name}.jsonl" for name in (
        "020a695f-221a-4831-934c-f94a5fadaeb7", "11974dbb-5b42-4ab0-a802-d48ace7ad257",
        "6bc248f0-715b-4d9c-9ac6-b00e90855065", "6db13fd9-24b6-4f5d-8786-175e37f2d509",
        "aa19d7bd-f5b0-41ca-a7fd-b3db9d91761b", "e4f68100-85c5-4981-9139-290e6b5bbdc9")),
    "projects/-home-cwtrocks-OpenCoreAnalysisKit/sessions/db4ec2d2-ae69-4292-a27b-d35e0476548f.jsonl",
    "projects/-home-cwtrocks/sessions/d488031e-44f8-4c4f-8bc4-e3be9f19de52.jsonl",
})

TOOLS_URL, TOOLS_ENV = "github.com/doudouqie66/CommonTools", "PREFIXBENCH_COMMONTOOLS_REPO"
TOOLS = Path(os.environ.get(TOOLS_ENV, "/work/.mirror/doudouqie66+CommonTools/repo"))
TOOLS_COMMIT = "1bbc8e028f24ed37db971fb71475cabbd2cb48b2"
TOOLS_LEFT_OUT = frozenset(f".codex/sessions/2026/{name}.jsonl" for name in (
    "06/13/rollout-2026-06-13T11-05-15-019ebef0-d6d8-7410-949d-acb4373201b6",
    "06/19/rollout-2026-06-19T10-50-35-019eddc9-7da0-7660-8798-b335dbbc191b",
    "06/29/rollout-2026-06-29T10-53-37-019f114b-de30-7050-817a-2cf51e41d099",
    "06/29/rollout-2026-06-29T18-26-07-019f12ea-2289-7c10-9b78-2a29fba4723c",
))

J5_URL, J5_ENV = "github.com/j5ik2o/dotfiles", "PREFIXBENCH_J5IK2O_DOTFILES_REPO"
J5 = Path(os.environ.get(J5_ENV, "/work/.mirror/j5ik2o+dotfiles/repo"))
J5_COMMIT = "f5951f06abfe7b4ea770c0d3eaa739dddfb97187"

NOTCH_URL, NOTCH_ENV = "github.com/wmasfoe/notch-pet", "PREFIXBENCH_NOTCH_PET_REPO"
NOTCH = Path(os.environ.get(NOTCH_ENV, "/work/.mirror/wmasfoe+notch-pet/repo"))
NOTCH_COMMIT = "b1a22916735ecc3b035c72f22dadd4d32d40ace7"


def _copy(repo: Path, commit: str, url: str, env: str, prefix: str, suffix: str, into: Path,
          left_out: frozenset[str] = frozenset()) -> list[Path]:
    return tree_at(repo, commit, url, env, prefix, into, suffix, left_out)


def test_a_claude_code_2_1_212_backup_through_a_relay_totals_its_lines(tmp_path: Path) -> None:
    paths = _copy(AUSTIN, AUSTIN_NEWEST, AUSTIN_URL, AUSTIN_ENV, "projects/", ".jsonl", tmp_path, AUSTIN_LEFT_OUT)
    assert len(paths) == 159
    result = run_audit([tmp_path / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == claude_recount(paths) == (
        672, 13_216_741, 211_921, 35_077_666, 382_727)
    # The relay's claude-opus-4-8 calls are an unknown provider's (all 296 were Anthropic's before
    # their unsplit writes were read as a relay's); the other Claude models' calls here split
    # their writes, so nothing tells them apart from Anthropic's.
    assert Counter((r.provider, r.model) for r in result.rows) == {
        ("unknown", "claude-opus-4-8"): 296, ("minimax", "MiniMax-M2.7"): 244, ("minimax", "MiniMax-M3"): 112,
        ("anthropic", "claude-fable-5"): 16, ("anthropic", "claude-opus-4.8"): 4}
    assert any("claude-opus-4-8 read as an unknown provider's" in n for f in result.files for n in f.notes)
    # The 20 calls of claude-fable-5 and claude-opus-4.8 carry message ids of msg_ and 16 hex digits,
    # which neither Anthropic's API, Bedrock nor Vertex writes: relayed, on Anthropic's rules and
    # list price (no relay before). Read as an unknown provider's instead, the home's lost dollars
    # went from $1.43 to $20.29 (17 of those calls unexplained under generic rules); here they stay.
    assert result.relays == (("anthropic", "claude-fable-5", UNNAMED_RELAY, 16),
                             ("anthropic", "claude-opus-4.8", UNNAMED_RELAY, 4))
    assert f"{t.lost_usd:.2f}" == "1.43"
    # 362, before and after: the relay's reads stay short of the prompt by a steady ~30k tokens
    # (its uncached input), which no rule models (54 of its 296 calls within).
    assert read_within(result) == 362


def test_keep_alive_on_the_backup_takes_no_bound_from_a_gaps_own_read(tmp_path: Path) -> None:
    # MiniMax-M2.7's two gaps read in full past its 5 m TTL are 5m00.1s and 5m02.1s send to send:
    # within the margin, and each would have set a bound from its own outcome. Taken from history
    # only (two survivals past the TTL plus the margin), no bound applies: every gap is bridged
    # and charged, and keep-alive costs more than it saves (it showed +$0.0086 with the bound).
    from prefixbench.workloads.audit.core import load_trace
    from prefixbench.workloads.audit.whatif import what_if

    paths = _copy(AUSTIN, AUSTIN_NEWEST, AUSTIN_URL, AUSTIN_ENV, "projects/", ".jsonl", tmp_path, AUSTIN_LEFT_OUT)
    assert len(paths) == 159
    (keep,) = what_if(*load_trace([tmp_path / "projects"]), ["keep-alive"])
    assert keep.detail.endswith("12 keep-alive request(s) bridge 8 idle gap(s) past the TTL"), keep.detail
    assert f"{keep.saved_usd:.4f}" == "-0.0064"


def test_the_backups_workflow_agents_roll_up_into_their_session(tmp_path: Path) -> None:
    # 2.1.212's workflow runs: Claude Code writes their agents in <session>/subagents/workflows/<run>/;
    # this backup keeps them in subagents/<session>/workflows/<run>/ and the session's transcript in
    # sessions/. Before, each of the session's three runs was a session of its own, keyed by a
    # <run>/<session>.jsonl no folder holds (four rows naming 3e89eb15: 43, 46, 120 and 49 requests).
    project = "projects/-home-cwtrocks-android-avd/"
    _copy(AUSTIN, AUSTIN_NEWEST, AUSTIN_URL, AUSTIN_ENV, project, ".jsonl", tmp_path, AUSTIN_LEFT_OUT)
    result = run_audit([tmp_path / project])
    rows = {Path(s.key).relative_to(tmp_path / project).as_posix(): (s.requests, s.lanes) for s in result.sessions}
    assert rows == {"sessions/3e89eb15-32e7-43f8-8734-8d47310263ea.jsonl": (258, 17),
                    "sessions/6e42724d-ca58-483b-9dbc-6044e5f8dcf4.jsonl": (3, 1),
                    "sessions/c6455dae-26cd-4ba2-a2b9-7b8e4675e19c.jsonl": (35, 1)}, rows


def test_the_backups_sessions_and_their_workflow_agents_are_of_one_project_in_every_view(tmp_path: Path) -> None:
    # The backup keeps main transcripts in <project>/sessions/ and workflow agents in
    # <project>/subagents/<session>/workflows/<run>/. Before, the audit's project folder, ttl-auto's
    # scope and a lane start's project were <project>/sessions for the 3 main transcripts of
    # -home-cwtrocks-android-avd (its scope that project, not projects/) and <project> for its 42
    # agents copied (the rest past the snapshot's size limit); now <project> and projects/ for all 45. The other projects keep no swapped session
    # folder among the copied .jsonl files: nothing tells their sessions/ apart, which stays their folder.
    from prefixbench.workloads.audit.core import _project_folder
    from prefixbench.workloads.audit.whatif import _setting_scope

    project = "projects/-home-cwtrocks-android-avd/"
    paths = _copy(AUSTIN, AUSTIN_NEWEST, AUSTIN_URL, AUSTIN_ENV, project, ".jsonl", tmp_path, AUSTIN_LEFT_OUT)
    files = [str(p) for p in paths if p.name != "journal.jsonl"]
    assert len(files) == 45 and sum("/sessions/" in f for f in files) == 3
    assert {_project_folder(f) for f in files} == {str(tmp_path / project.rstrip("/"))}
    assert {_setting_scope(f, "claude-code") for f in files} == {str(tmp_path / "projects")}


def test_the_largest_commit_of_the_backup_totals_its_lines(tmp_path: Path) -> None:
    paths = _copy(AUSTIN, AUSTIN_LARGEST, AUSTIN_URL, AUSTIN_ENV, "projects/", ".jsonl", tmp_path, AUSTIN_LEFT_OUT)
    assert len(paths) == 979
    result = run_audit([tmp_path / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == claude_recount(paths) == (
        3_388, 71_679_823, 2_718_300, 200_428_601, 7_774_789)
    providers = Counter((r.provider, r.model) for r in result.rows)
    assert providers[("unknown", "claude-opus-4-8")] == 1_519 and providers[("minimax", "MiniMax-M2.7")] == 1_741
    # 1,438 while the relay's calls were read as Anthropic's.
    assert read_within(result) == 1_443


def test_a_codex_0_137_to_0_146_home_with_remote_compactions_totals_its_token_counts(tmp_path: Path) -> None:
    paths = _copy(TOOLS, TOOLS_COMMIT, TOOLS_URL, TOOLS_ENV, ".codex/sessions/", ".jsonl", tmp_path, TOOLS_LEFT_OUT)
    assert len(paths) == 437
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    # 10,655 calls before a token count of no input and no output (ten of them, each before the
    # rollback of an interrupted first turn) was no call.
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (
        10_645, 74_952_400, 812_609_920, 4_754_196)
    assert Counter(r.model for r in result.rows) == {
        "gpt-5.5": 7_208, "gpt-5.6-sol": 2_880, "gpt-5.6-terra": 554, "gpt-5.4-mini": 3}
    # The 35 remote compactions: no call of their own in the log (the running total rises by the
    # next call's usage alone), and the call after each reads the head only (9,600 to 13,056
    # tokens, two 5,504 and 1,920, of prompts of 16,621 to 23,378): 28 of them within 3%.
    after = [r for r in result.rows if r.cause == "compaction"]
    assert len(after) == 35 and sum(bool(r.read_within) for r in after) == 28
    # 9,419 while those zero counts were calls: at lane starts they read 0, so the head kept warm
    # was taken to be 0 and 136 lane starts were predicted to read nothing.
    assert read_within(result) == 9_544


def test_a_codex_0_122_rollout_totals_its_token_counts(tmp_path: Path) -> None:
    paths = _copy(J5, J5_COMMIT, J5_URL, J5_ENV, ".codex-personal/sessions/", ".jsonl", tmp_path)
    assert len(paths) == 1
    result = run_audit(paths)
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (19, 62_115, 578_176, 4_593)
    assert t.cache_write is None
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.4")}
    assert read_within(result) == 19  # one read fell after 47 min idle: predicted, as in_memory retention has it


def test_a_codex_0_123_rollout_totals_its_token_counts(tmp_path: Path) -> None:
    paths = _copy(NOTCH, NOTCH_COMMIT, NOTCH_URL, NOTCH_ENV, ".codex/sessions/", ".jsonl", tmp_path)
    assert len(paths) == 1
    result = run_audit(paths)
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (9, 69_351, 233_344, 3_665)
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.4")}
    assert read_within(result) == 8


def test_the_backups_sessions_that_never_read_the_cache_are_named(tmp_path: Path) -> None:
    """3 Anthropic sessions of the backup (20 requests) read and wrote nothing and paid $25.29 of
    the $77.82 at the full input price; the audit said nothing of them (its warning was the whole
    log's only, and the relay's and MiniMax's calls read)."""
    from prefixbench.reports.advice import never_read_group_lines

    _copy(AUSTIN, AUSTIN_NEWEST, AUSTIN_URL, AUSTIN_ENV, "projects/", ".jsonl", tmp_path, AUSTIN_LEFT_OUT)
    result = run_audit([tmp_path / "projects"])
    # (sessions counted as the terminal counts them, a subagent's file its session's: the same 3)
    lines = never_read_group_lines(result.rows, result.totals.cost_usd, lambda f: Path(f).name, result.session_of)
    assert lines[0].startswith("  3 sessions to a provider that caches read and wrote nothing in the cache (20 requests, $25.29 of $77.82 paid")
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "668424c4-e93f-4c2a-9597-e05159a98bde.jsonl", "467fb44f-55b2-4094-b000-bdc232045e8c.jsonl",
        "c8b10888-2968-4b5b-aea9-3d6a7b1f1982.jsonl"]


def test_a_relays_misses_say_its_caching_is_unknown(tmp_path: Path) -> None:
    """The relay's claude-opus-4-8 calls are an unknown provider's: their misses were put down
    to messages-changed and system-changed with nothing saying the relay's caching is not known."""
    from prefixbench.workloads.audit.core import UNKNOWN_CACHING

    _copy(AUSTIN, AUSTIN_NEWEST, AUSTIN_URL, AUSTIN_ENV, "projects/", ".jsonl", tmp_path, AUSTIN_LEFT_OUT)
    result = run_audit([tmp_path / "projects"])
    relayed = [r for r in result.rows if r.provider == "unknown" and r.lost_tokens]
    assert len(relayed) == 224 and all(r.detail.endswith(UNKNOWN_CACHING) for r in relayed)
    # 277 misses of 8,296,324 tokens while each call was expected to read the whole previous
    # prompt: the relay's usage counts writes, and ~31k tokens of every prompt are sent uncached
    # and never written, so a call can read at most what the previous one read and wrote. 53 of
    # them are no miss so (18 read all of it, their detail saying the rest was never written).
    assert sum(r.lost_tokens for r in relayed) == 217_135
    unwritten = [r for r in result.rows if r.provider == "unknown" and "never written" in r.detail]
    assert len(unwritten) == 18 and not any(r.lost_tokens or r.cause for r in unwritten)
    assert not any(UNKNOWN_CACHING in r.detail for r in result.rows if r.provider != "unknown")
