"""Claude Code and Codex homes committed to public repositories, audited out of sample (none was
used while the readers were written), read where they live (a local git copy; never copied into
this project, each test skips without it):

* github.com/7567491/Feishu_ClaudeCode (``869a42d7abaa93ca3ff0dcf4a63eb10fc696d736``): a committed
  ``.codex/sessions/`` of 19 Codex CLI 0.63.0 rollouts (2025-11-27 to 12-02; three more the
  workplace's snapshot lacks), gpt-5.1-codex-max through a provider the home's ``config.toml``
  names ``codex``, a reseller's relay (its own ``base_url``), which the rollouts name only as
  ``model_provider: "codex"``. From ``PREFIXBENCH_FEISHU_CLAUDECODE_REPO``.
* github.com/emd5-afk/BIME_U01 (``24127c0e299638f28fbaadd3aa2e7fca78a98e3f``): 4 rollouts of Codex
  in VS Code 0.107.0-alpha.5 (2026-03-03/04), gpt-5.3-codex on OpenAI. From
  ``PREFIXBENCH_BIME_U01_REPO``.
* github.com/akhileswar18/behaviour_lab (``488736298bc266f4b853d225cc4eb6b074f2926b``): one rollout
  of Codex Desktop 0.108.0-alpha.12 (2026-03-05; a second the snapshot lacks), gpt-5.3-codex on
  OpenAI. From ``PREFIXBENCH_BEHAVIOUR_LAB_REPO``.
* github.com/gouchan/agent-swarm-config (``fca6ecb24baa3dc2226b11741d74fc5311c25e50``): a committed
  ``.claude/projects/`` of 3 transcripts, Claude Code 2.0.15-2.0.21 (2025-10-15 to 17), Claude on
  Anthropic. From ``PREFIXBENCH_AGENT_SWARM_CONFIG_REPO``.
* github.com/patleeman/dotfiles (``d0b6898268b45005124bc85b76eab2be7789d47c``): a committed
  ``.claude/projects/`` of 5,757 transcripts (three more the snapshot lacks), Claude Code
  2.0.67-2.0.76 (2025-12-28 to 2026-01-03), most of them short sessions an app of the user's
  starts in its own workspaces, Claude on Anthropic. From ``PREFIXBENCH_PATLEEMAN_DOTFILES_REPO``.
* github.com/kimjindol2025/home-projects (``fc89df5e3210f37c2b3aa105087a237909ab0a7a``, 2026-03-05): a
  Termux home's committed ``.claude/projects/``, 493 transcripts (468 subagents', 360 of them
  ``agent-acompact-*``), Claude Code 2.1.49-2.1.62 (2026-02-19 to 03-03), Claude on Anthropic; 22
  session transcripts the snapshot lacks (past its size limit) left out, so most subagents' parents
  are absent. From ``PREFIXBENCH_KIMJINDOL_HOME_REPO``.
* github.com/awesumsawz/dotfiles-universal (``49d63c930ee4cdc8db5a394fd579dbe108fae8e0``, 2026-03-25), a
  committed ``.claude/projects/`` of 59 transcripts (23 subagents'), Claude Code 2.1.12-2.1.83
  (2026-01-20 to 03-25), Claude on Anthropic; 13 the snapshot lacks left out. From
  ``PREFIXBENCH_AWESUMSAWZ_DOTFILES_REPO``.
* github.com/carollynn2253/Clauding (``8caedfbd01c4574f745b88591e91429beb86394e``, 2026-03-11): 12
  transcripts (4 subagents'), Claude Code 2.1.53-2.1.59 (2026-02-25/26), Claude on Anthropic. From
  ``PREFIXBENCH_CLAUDING_REPO``.
* github.com/outrcore/Atlas (``d1548b7d525943899ae62d6ea9d27b53e04823ba``, 2026-02-09): 30
  transcripts (4 subagents'), Claude Code 2.1.27-2.1.29 (2026-01-30 to 02-01), Claude on
  Anthropic. From ``PREFIXBENCH_OUTRCORE_ATLAS_REPO``.
* github.com/underspecified/dotfiles (``a011f3846ca2e57e3e0bb0e27ceaf5e6511ee2a7``, 2025-08-09): a
  ``~/.config/claude/projects/`` (Claude Code's XDG home) of 6 transcripts, Claude Code
  1.0.44-1.0.68, Claude on Anthropic; 4 the snapshot lacks left out. From
  ``PREFIXBENCH_UNDERSPECIFIED_DOTFILES_REPO``.
* github.com/JaydenXsoe/ocodex (``317a6db6db4dddc6300a1b7501490548b88d5e8f``): 134 rollouts of a
  Codex of 2025-08 that wrote no token counts: nothing to audit, said in one line. From
  ``PREFIXBENCH_OCODEX_REPO``.

What is checked: the audit's totals equal the logs' own sums, counted here from the raw lines,
and how many reads are predicted within 3%.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import claude_recount, codex_recount, mirror, read_within, tree_at


FEISHU_URL, FEISHU_ENV, FEISHU = mirror("7567491/Feishu_ClaudeCode", "PREFIXBENCH_FEISHU_CLAUDECODE_REPO")
FEISHU_COMMIT = "869a42d7abaa93ca3ff0dcf4a63eb10fc696d736"
#: Absent from the workplace's snapshot (past its size limit).
FEISHU_LEFT_OUT = frozenset(f".codex/sessions/{name}.jsonl" for name in (
    "2025/11/29/rollout-2025-11-29T15-06-29-019ace6f-419b-73f1-8566-1d9d4463b457",
    "2025/12/01/rollout-2025-12-01T14-35-29-019ad89f-9a9d-7f72-b277-5b8fba246863",
    "2025/12/02/rollout-2025-12-02T05-03-41-019adbba-7601-73f0-9816-e9ba38884d05"))
BIME_URL, BIME_ENV, BIME = mirror("emd5-afk/BIME_U01", "PREFIXBENCH_BIME_U01_REPO")
BIME_COMMIT = "24127c0e299638f28fbaadd3aa2e7fca78a98e3f"
LAB_URL, LAB_ENV, LAB = mirror("akhileswar18/behaviour_lab", "PREFIXBENCH_BEHAVIOUR_LAB_REPO")
LAB_COMMIT = "488736298bc266f4b853d225cc4eb6b074f2926b"
LAB_LEFT_OUT = frozenset({
    ".codex/sessions/2026/03/05/rollout-2026-03-05T16-14-54-019cc07f-4e0a-74d3-9567-409e2ab6f7e9.jsonl"})
SWARM_URL, SWARM_ENV, SWARM = mirror("gouchan/agent-swarm-config", "PREFIXBENCH_AGENT_SWARM_CONFIG_REPO")
SWARM_COMMIT = "fca6ecb24baa3dc2226b11741d74fc5311c25e50"
PAT_URL, PAT_ENV, PAT = mirror("patleeman/dotfiles", "PREFIXBENCH_PATLEEMAN_DOTFILES_REPO")
PAT_COMMIT = "d0b6898268b45005124bc85b76eab2be7789d47c"
PAT_LEFT_OUT = frozenset(f".claude/projects/-Users-patrick-workingdir-familiar/{name}.jsonl" for name in (
    "1be0f875-0798-4f9b-ad96-619f34a5d419", "aa963161-1823-4c76-bbd6-9ba194427e16",
    "b12bc5c9-232e-4962-baa4-daebd8549f82"))
KIM_URL, KIM_ENV, KIM = mirror("kimjindol2025/home-projects", "PREFIXBENCH_KIMJINDOL_HOME_REPO")
KIM_COMMIT = "fc89df5e3210f37c2b3aa105087a237909ab0a7a"
KIM_LEFT_OUT = frozenset(f".claude/projects/-data-data-com-termux-files-home/{name}.jsonl" for name in (
    "0cc5fe38-ad48-4a14-9f63-0071e0bc5b9a", "0d74e48e-79b2-44f9-906f-23c3170a6041",
    "34632016-9b2c-4684-95b0-f61221a4e094", "4136806b-8583-4da6-a3ad-b6cfd8ea7b6e",
    "42d6ef44-6d38-4495-a97b-a2a9c903dfe1", "47817460-ef14-445d-9f88-261cf9516610",
    "4e24fd2d-d039-4b57-854f-e0a5e3922aa1", "6f956068-91e6-4317-9ad3-c3a5f80b6584",
    "76285b21-53cd-4da2-b567-1d06ca35c207", "87f05ea2-2d8d-4d0b-a657-0a34abadd5a2",
    "986daba2-4079-4137-ad25-a3c244703217", "a0850af1-4b54-4124-865d-9c7700103be0",
    "a952e850-dabf-44ec-a2be-f559f9551fa8", "aefc00fa-5689-44b8-88b0-623efc4bea0d",
    "b2c7f404-c0b1-4988-8ee0-9840300710a0", "bd403f91-bda6-4621-9762-571c6865f355",
    "cae2d11c-e97f-4785-a216-d6ed9efff01e", "dca68f14-4317-4a00-ac81-cbf80a23c5f1",
    "ed347de5-82a9-4de1-a627-24cac64f0591", "f34b371e-ed73-469f-b7c0-aa9c4fddf530",
    "f785cb1d-1595-4fbb-bb0d-22db695e6f68", "fd54aa30-47f9-4f2b-ac33-21e08d2239de"))
AWE_URL, AWE_ENV, AWE = mirror("awesumsawz/dotfiles-universal", "PREFIXBENCH_AWESUMSAWZ_DOTFILES_REPO")
AWE_COMMIT = "49d63c930ee4cdc8db5a394fd579dbe108fae8e0"
AWE_LEFT_OUT = frozenset(f".claude/projects/-Users-jbiggs-code-buy-hh{name}.jsonl" for name in (
    "-buy-honehealth-com-longevity-lp/979e30c8-84cf-43c8-a3ce-4383887d8d43",
    "-buy-honehealth-com-longevity-lp/979e30c8-84cf-43c8-a3ce-4383887d8d43/subagents/agent-acompact-33ce7cb51b98e134",
    "-buy-honehealth-com-themes-HoneLandingPages/5b2f9863-0747-463f-ad7c-b1cba8d96ad6",
    "-buy-honehealth-com-themes-HoneLandingPages/984b5a77-c1b0-432e-acf9-6aae6c557aad",
    "/9d578e7d-f32a-4224-8017-efbaa1a68f97",
    *(f"/9d578e7d-f32a-4224-8017-efbaa1a68f97/subagents/agent-acompact-{agent}" for agent in (
        "20c0812a64ec43e1", "52a209d0b7c32d4e", "8da7758ca7b53827", "cec22566c8275d66", "e5b9c9a910f88b54",
        "e7aa7fe15a626485", "f679c831a1374769", "f877c1b79a542278"))))
CLAUDING_URL, CLAUDING_ENV, CLAUDING = mirror("carollynn2253/Clauding", "PREFIXBENCH_CLAUDING_REPO")
CLAUDING_COMMIT = "8caedfbd01c4574f745b88591e91429beb86394e"
ATLAS_URL, ATLAS_ENV, ATLAS = mirror("outrcore/Atlas", "PREFIXBENCH_OUTRCORE_ATLAS_REPO")
ATLAS_COMMIT = "d1548b7d525943899ae62d6ea9d27b53e04823ba"
XDG_URL, XDG_ENV, XDG = mirror("underspecified/dotfiles", "PREFIXBENCH_UNDERSPECIFIED_DOTFILES_REPO")
XDG_COMMIT = "a011f3846ca2e57e3e0bb0e27ceaf5e6511ee2a7"
XDG_LEFT_OUT = frozenset(f".config/claude/projects/-Users-eric-git-{name}.jsonl" for name in (
    "classy/27aec5d6-9f22-47c1-9305-7aa81e2193da", "classy/633cea7d-1cfd-4ee4-94aa-59cd56d633f2",
    "gliclass/85edd7bc-851f-413e-a62d-edc3346eb4ac", "gliclass/a5c8886c-1572-4a26-b92d-4075d016bd89"))
OCODEX_URL, OCODEX_ENV, OCODEX = mirror("JaydenXsoe/ocodex", "PREFIXBENCH_OCODEX_REPO")
OCODEX_COMMIT = "317a6db6db4dddc6300a1b7501490548b88d5e8f"


def test_a_codex_0_63_home_through_a_relay_totals_its_token_counts(tmp_path: Path) -> None:
    paths = tree_at(FEISHU, FEISHU_COMMIT, FEISHU_URL, FEISHU_ENV, ".codex/sessions/", tmp_path, ".jsonl",
                    FEISHU_LEFT_OUT)
    assert len(paths) == 19
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    # Counted file by file: two sessions a day apart open with the same instructions and a
    # four-character prompt, so their first calls report the same running total and usage
    # (3,511 in, 3,072 read, 29 out), which codex_recount over all files takes for a fork's copy.
    sums = tuple(map(sum, zip(*(codex_recount([p]) for p in paths))))
    assert (t.requests, t.input, t.cache_read, t.output) == sums == (593, 13_505_974, 5_836_288, 144_522)
    assert codex_recount(paths)[0] == 592
    # The rollouts name the relay only as "codex", which is read under OpenAI's rules and prices,
    # the relay named: its misses with nothing changed are the relay's cache's, not OpenAI's.
    assert Counter((r.provider, r.model) for r in result.rows) == {("openai", "gpt-5.1-codex-max"): 593}
    assert result.relays == (("openai", "gpt-5.1-codex-max", "codex", 593),)
    assert all(r.detail.startswith("through the relay 'codex': ") for r in result.rows if r.cause == "provider-best-effort")
    # 448 of the 593 calls read 3,072 tokens, the head every session opens with, whatever the
    # session had sent before; 30 read 90% or more of their prompt. OpenAI's cache would have
    # read each conversation back: no rule models the relay (one source).
    assert sum(r.reported_cache_read == 3_072 for r in result.rows) == 448
    assert read_within(result) == 37
    causes = Counter(r.cause for r in result.rows if r.cause)
    assert causes == {"provider-best-effort": 531, "messages-changed": 37, "ttl-expired": 4}


def test_two_codex_0_107_and_0_108_homes_total_their_token_counts(tmp_path: Path) -> None:
    for repo, commit, url, env, left_out, into, count, sums, within in (
            (BIME, BIME_COMMIT, BIME_URL, BIME_ENV, frozenset(), tmp_path / "b", 4,
             (88, 182_377, 1_791_360, 34_971), 79),
            (LAB, LAB_COMMIT, LAB_URL, LAB_ENV, LAB_LEFT_OUT, tmp_path / "l", 1,
             (7, 30_707, 163_712, 1_709), 6)):
        paths = tree_at(repo, commit, url, env, ".codex/sessions/", into, ".jsonl", left_out)
        assert len(paths) == count
        result = run_audit([into / ".codex" / "sessions"])
        t = result.totals
        assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == sums
        assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.3-codex")}
        assert read_within(result) == within


def _audit_claude_home(into: Path, paths: list[Path], sums: tuple[int, int, int, int, int]):
    """The audit of the ``.claude/projects/`` copied into ``into``, its calls, uncached input,
    output, reads and writes asserted equal to the transcripts' own (``paths``) and to ``sums``."""
    result = run_audit([into / ".claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == claude_recount(paths) == sums
    return result


def test_a_claude_code_2_0_15_to_2_0_21_home_totals_its_lines(tmp_path: Path) -> None:
    paths = tree_at(SWARM, SWARM_COMMIT, SWARM_URL, SWARM_ENV, ".claude/projects/", tmp_path, ".jsonl")
    assert len(paths) == 3
    result = _audit_claude_home(tmp_path, paths, (54, 3_777, 5_860, 1_314_203, 110_825))
    assert Counter(r.model for r in result.rows) == {
        "claude-sonnet-4-5-20250929": 52, "claude-haiku-4-5-20251001": 2}
    assert {r.provider for r in result.rows} == {"anthropic"}
    assert read_within(result) == 51


def test_a_claude_code_2_0_76_home_of_many_short_sessions_totals_its_lines(tmp_path: Path) -> None:
    paths = tree_at(PAT, PAT_COMMIT, PAT_URL, PAT_ENV, ".claude/projects/", tmp_path, ".jsonl", PAT_LEFT_OUT)
    assert len(paths) == 5_757
    result = _audit_claude_home(tmp_path, paths, (1_619, 775_964, 239_851, 43_666_397, 3_359_890))
    assert Counter(r.model for r in result.rows) == {
        "claude-sonnet-4-5-20250929": 682, "claude-haiku-4-5-20251001": 513, "claude-opus-4-5-20251101": 424}
    assert {r.provider for r in result.rows} == {"anthropic"}
    # 1,088 while a session's first call that sends an earlier session's first prompt again (the
    # app starts one every two minutes with the same message: same folder, version and size,
    # within the TTL) was predicted to read the warm head only (12,673), not all of it: 257 main
    # threads' and 113 "Warmup" subagents' first calls gained, none lost.
    assert read_within(result) == 1_458
    # Of the 161 not within 3%, 146 read more than predicted (no miss), 95 of them main threads'
    # first calls reading 14,830 tokens, a level past the warm head that the sessions of every
    # folder share and that expires: every Sonnet lane start within 5 min of another Sonnet
    # main-thread call read it or more (97 + 258), the 21 others the head (not predicted:
    # docs/audit.md).
    assert sum(not r.read_within and r.reported_cache_read > (r.predicted_cache_read or 0)
               for r in result.rows) == 146


def test_a_claude_code_2_1_49_to_2_1_62_termux_home_totals_its_lines(tmp_path: Path) -> None:
    paths = tree_at(KIM, KIM_COMMIT, KIM_URL, KIM_ENV, ".claude/projects/", tmp_path, ".jsonl", KIM_LEFT_OUT)
    assert len(paths) == 493
    # Output 859,977 while a reply the session's file cut at its first block (output 4, as an
    # auto-compaction began) was not given the 2,838 of its agent-acompact-* copy, that copy's
    # line written mid-stream too (stop_reason null on almost every 2.1.49-2.1.55 line).
    result = _audit_claude_home(tmp_path, paths, (2_911, 58_619, 862_811, 254_015_078, 12_437_300))
    assert Counter(r.model for r in result.rows) == {"claude-haiku-4-5-20251001": 2_209, "claude-sonnet-4-6": 702}
    assert {r.provider for r in result.rows} == {"anthropic"}
    # Of the 475 not within 3%, 454 read more than predicted (no miss), 274 of them calls of
    # agent-acompact-* files whose session transcripts are absent: they read a conversation
    # the files do not hold.
    assert read_within(result) == 2_436
    more = [r for r in result.rows if not r.read_within and r.reported_cache_read > (r.predicted_cache_read or 0)]
    assert (len(more), sum(r.lane_kind == "compaction" and r.cause is None for r in more)) == (454, 274)


def test_three_claude_code_2_1_12_to_2_1_83_homes_total_their_lines(tmp_path: Path) -> None:
    for repo, commit, url, env, left_out, into, count, sums, models, within in (
            (AWE, AWE_COMMIT, AWE_URL, AWE_ENV, AWE_LEFT_OUT, tmp_path / "a", 59,
             (1_054, 63_781, 495_442, 61_125_558, 4_050_660),
             {"claude-sonnet-4-6": 873, "claude-haiku-4-5-20251001": 139, "claude-opus-4-6": 29,
              "claude-opus-4-5-20251101": 13}, 1_018),  # 1,017 before a record rewritten under its uuid
             # was placed where the file writes it (a subagent file that starts its prompt again:
             # its second run's first call reads the first run's 37,134 tokens, now predicted)
            (CLAUDING, CLAUDING_COMMIT, CLAUDING_URL, CLAUDING_ENV, frozenset(), tmp_path / "c", 12,
             (130, 3_135, 137_330, 8_476_265, 472_042),
             {"claude-sonnet-4-6": 69, "claude-opus-4-6": 50, "claude-haiku-4-5-20251001": 11}, 127),
            (ATLAS, ATLAS_COMMIT, ATLAS_URL, ATLAS_ENV, frozenset(), tmp_path / "o", 30,
             (74, 262, 637, 1_513_520, 141_944),
             {"claude-opus-4-5-20251101": 59, "claude-haiku-4-5-20251001": 15}, 72)):
        paths = tree_at(repo, commit, url, env, ".claude/projects/", into, ".jsonl", left_out)
        assert len(paths) == count
        result = _audit_claude_home(into, paths, sums)
        assert Counter(r.model for r in result.rows) == models
        assert {r.provider for r in result.rows} == {"anthropic"}
        assert read_within(result) == within


def test_a_claude_code_1_0_xdg_home_totals_its_lines(tmp_path: Path) -> None:
    paths = tree_at(XDG, XDG_COMMIT, XDG_URL, XDG_ENV, ".config/claude/projects/", tmp_path, ".jsonl", XDG_LEFT_OUT)
    assert len(paths) == 6
    result = run_audit([tmp_path / ".config" / "claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == claude_recount(paths) == (
        527, 1_557, 71_011, 31_466_528, 2_394_384)
    assert Counter(r.model for r in result.rows) == {"claude-sonnet-4-20250514": 327, "claude-opus-4-20250514": 200}
    assert read_within(result) == 519


def test_a_codex_home_of_rollouts_without_token_counts_is_nothing_to_audit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = tree_at(OCODEX, OCODEX_COMMIT, OCODEX_URL, OCODEX_ENV, ".codex/", tmp_path, ".jsonl")
    rollouts = [p for p in paths if p.name.startswith("rollout-")]
    assert len(rollouts) == 134
    assert codex_recount(rollouts)[0] == 0
    assert main(["audit", *map(str, rollouts), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nothing to audit" in err[0] and "no token_count events" in err[0]
    assert "133 other file(s) hold none either" in err[0]
