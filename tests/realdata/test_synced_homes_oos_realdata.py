"""Claude Code and Codex homes found committed to public repositories, audited out of sample (none
was used while the readers were written), read where they live (a local git copy; never copied
into this project, each test skips without it):

* github.com/pshung/personal_git (``a8cbef1d282193633e7209e1fc6782cdbe5df19f``, 2026-05-21): a
  ``~/.claude`` synced to git by a hook, its ``.claude/projects/`` 948 transcripts (852 of them
  subagents'), Claude Code 2.1.21 to 2.1.143 (2026-01 to 05), Claude on Anthropic. Ten files the
  workplace's snapshot lacks are left out, and one whose bytes are no transcript (assembler
  output under a ``.jsonl`` name: the audit leaves it out as bad input, exit 2). From
  ``PREFIXBENCH_PERSONAL_GIT_REPO``.
* github.com/Zatoichi-42/claude-zibe (``0a42058a34e87db7e8e0a9d1e3eaaa6584f7a5f2``): a committed
  ``.claude/projects/`` of one project, Claude Code 2.1.92 (2026-04-05), eight subagents. From
  ``PREFIXBENCH_CLAUDE_ZIBE_REPO``.
* github.com/borja-rojo-ilvento/dotfiles (``229634138a2bac88f324ed476535b6546b73cbc1``) and
  github.com/francojc/dotfiles (``9d714146d2e084c09b268ec6002d3ea76a371542``): committed
  ``.claude/projects/`` of Claude Code 1.0.17 to 1.0.30 (2025-06). From
  ``PREFIXBENCH_BORJA_DOTFILES_REPO`` and ``PREFIXBENCH_FRANCOJC_DOTFILES_REPO``.
* github.com/886caigudong/caigudong- (``9d7335ec1ba67383c3d80383745b3d3084bc38c0``, 2026-05-21): a
  committed ``.claude/projects/`` (9 transcripts), Claude Code 2.1.143 to 2.1.146, deepseek-v4-flash
  through DeepSeek's Anthropic-compatible endpoint (the home's settings name it) and
  claude-opus-4-7 through a relay whose counts split every prompt in fixed shares. From
  ``PREFIXBENCH_CAIGUDONG_REPO``.
* github.com/LZY2333/LZY-FE-JumpTrack (``27fd886e87ce56352ac34ca4b9f7232356f7d0f4``, 2026-02-28): a
  committed ``.claude/projects/`` (47 transcripts, 11 subagents'), Claude Code 2.1.31 to 2.1.62,
  Claude on Anthropic. From ``PREFIXBENCH_LZY_JUMPTRACK_REPO``.
* github.com/ikn7/sentinelPI (``bc1331ad1a0040b66c0e7994cca8b9014f67ec8b``, 2026-02),
  github.com/yakschuss/dotfiles (``10a2e4cf61407e8c12c368163fc93af925bb9f9f``, 2025-12 to 2026-01)
  and github.com/oliyoung/dotfiles (``d375c4f57cc75e98fcbe09991672081bf6b8bc49``, 2026-01):
  committed ``.claude/projects/`` of Claude Code 2.1.29-2.1.31, 2.0.49-2.0.76 and 2.0.75-2.1.14,
  Claude on Anthropic; the transcripts the workplace's snapshot lacks (past its size limit) left
  out. From ``PREFIXBENCH_SENTINELPI_REPO``, ``PREFIXBENCH_YAKSCHUSS_DOTFILES_REPO`` and
  ``PREFIXBENCH_OLIYOUNG_DOTFILES_REPO``.
* github.com/Quelklef/shell-ws (``044184aacc6683c4f7951b104db1c56ba3fc4a39``, one Codex CLI 0.105.0
  rollout), github.com/KongJin/JG (``83ad8964c83d8de54ff249b0813eb6c7c2196b5f``, 18 rollouts of
  ``codex exec`` 0.117/0.118 and one of Codex in VS Code, 9 with no call) and
  github.com/memrynote/memrynote (``8cd473e9b7ad6562839c9cf8424362026308d2eb``, 8 rollouts of Codex
  CLI 0.89/0.91, 7 with no call) and github.com/Satyam-stysh/Phishing_url_cheaker
  (``048cbed9877777c0323355a77885bebff3263461``, 12 rollouts of Codex in VS Code 0.118.0-alpha.2, one
  more past the workplace snapshot's size limit left out): committed ``.codex/sessions/``, OpenAI.
  From ``PREFIXBENCH_SHELL_WS_REPO``, ``PREFIXBENCH_KONGJIN_JG_REPO``, ``PREFIXBENCH_MEMRYNOTE_REPO``
  and ``PREFIXBENCH_PHISHING_URL_REPO``.

What is checked: the audit's totals equal the logs' own sums, counted here from the raw lines,
and how many reads are predicted within 3%.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import claude_recount, codex_recount, mirror, read_within, tree_at


PSH_URL, PSH_ENV, PSH = mirror("pshung/personal_git", "PREFIXBENCH_PERSONAL_GIT_REPO")
PSH_COMMIT = "a8cbef1d282193633e7209e1fc6782cdbe5df19f"
#: Absent from the workplace's snapshot (past its size limit), and one file of assembler output.
PSH_LEFT_OUT = frozenset(f".claude/projects/{name}.jsonl" for name in (
    "-home-nick-work-ai-iree/5675d38f-8fdb-4747-bf76-1a372ab4e435/subagents/agent-acompact-d366f4a67bde7eef",
    "-home-nick-work-hybrid-sim/40a789da-b31a-4947-a3d1-a08f95bd3c64",
    "-home-nick-work-hybrid-sim/425cc4d1-73e2-4464-b1b5-b5667a4107e7",
    "-home-nick-work-hybrid-sim/aaa0233d-e63b-482c-aef4-485612957b50",
    "-home-nick-work-hybrid-sim/e0ccf1ad-afc6-4d55-abb5-fddc53280cbe",
    "-home-nick-work-hybrid-sim/e7898df5-b929-489b-bd91-9a98bdc17f33",
    "-home-nick-work-libnn-0421/b4f5b9f7-fb07-4972-8cec-a175472fb595",
    "-home-nick-work-libnn-0421/c5543f22-1bda-47c4-a76e-d6e3930611f2",
    "-local-nick-ai-iree/333d55b1-c32e-4aaa-b8da-adab81bfbb07/subagents/agent-acompact-5a071e",
    "-local-nick-vsim/57d006bf-1478-4817-9aef-727cf0869470",
    "-home-nick-work-AIAutoIREE/44aa4b1c-b38e-4c12-9e05-a725871f6a6c/subagents/agent-acompact-273ef0",
))

ZIBE_URL, ZIBE_ENV, ZIBE = mirror("Zatoichi-42/claude-zibe", "PREFIXBENCH_CLAUDE_ZIBE_REPO")
ZIBE_COMMIT = "0a42058a34e87db7e8e0a9d1e3eaaa6584f7a5f2"
BORJA_URL, BORJA_ENV, BORJA = mirror("borja-rojo-ilvento/dotfiles", "PREFIXBENCH_BORJA_DOTFILES_REPO")
BORJA_COMMIT = "229634138a2bac88f324ed476535b6546b73cbc1"
FRANCO_URL, FRANCO_ENV, FRANCO = mirror("francojc/dotfiles", "PREFIXBENCH_FRANCOJC_DOTFILES_REPO")
FRANCO_COMMIT = "9d714146d2e084c09b268ec6002d3ea76a371542"
CAI_URL, CAI_ENV, CAI = mirror("886caigudong/caigudong-", "PREFIXBENCH_CAIGUDONG_REPO")
CAI_COMMIT = "9d7335ec1ba67383c3d80383745b3d3084bc38c0"
LZY_URL, LZY_ENV, LZY = mirror("LZY2333/LZY-FE-JumpTrack", "PREFIXBENCH_LZY_JUMPTRACK_REPO")
LZY_COMMIT = "27fd886e87ce56352ac34ca4b9f7232356f7d0f4"
IKN_URL, IKN_ENV, IKN = mirror("ikn7/sentinelPI", "PREFIXBENCH_SENTINELPI_REPO")
IKN_COMMIT = "bc1331ad1a0040b66c0e7994cca8b9014f67ec8b"
IKN_LEFT_OUT = frozenset(f".claude/projects/-home-user/{name}.jsonl" for name in (
    "4c410970-27cf-44b9-9a7b-538f37bf2d48", "f725ca92-357d-4931-a104-d9c9f554567f",
    "fad99b44-7337-47f8-955b-2384ef483150"))
YAK_URL, YAK_ENV, YAK = mirror("yakschuss/dotfiles", "PREFIXBENCH_YAKSCHUSS_DOTFILES_REPO")
YAK_COMMIT = "10a2e4cf61407e8c12c368163fc93af925bb9f9f"
YAK_LEFT_OUT = frozenset(f".claude/projects/-Users-jschuss-Brightline-reef/{name}.jsonl" for name in (
    "2ec88ade-0de1-46cb-a53c-119ef1c24aa3", "4290e9eb-c4c8-41d3-8452-9f6400648f31",
    "47676caa-8819-4e39-88ca-f5a47e1d6de4", "6174db5e-7c71-46f6-a2fb-66c64caa1dc0",
    "c541241e-90ec-4f48-b2e3-4728e585f3c9"))
OLI_URL, OLI_ENV, OLI = mirror("oliyoung/dotfiles", "PREFIXBENCH_OLIYOUNG_DOTFILES_REPO")
OLI_COMMIT = "d375c4f57cc75e98fcbe09991672081bf6b8bc49"
OLI_LEFT_OUT = frozenset(f".claude/projects/-mnt-c-Users-o-young-work-architecture/{name}.jsonl" for name in (
    "c6b70995-fb42-44d0-878a-2a2a203ac178", "c7bf99a4-22b1-498b-b2bf-bb697fa65a6e"))
SHELL_URL, SHELL_ENV, SHELL = mirror("Quelklef/shell-ws", "PREFIXBENCH_SHELL_WS_REPO")
SHELL_COMMIT = "044184aacc6683c4f7951b104db1c56ba3fc4a39"
JG_URL, JG_ENV, JG = mirror("KongJin/JG", "PREFIXBENCH_KONGJIN_JG_REPO")
JG_COMMIT = "83ad8964c83d8de54ff249b0813eb6c7c2196b5f"
MEMRY_URL, MEMRY_ENV, MEMRY = mirror("memrynote/memrynote", "PREFIXBENCH_MEMRYNOTE_REPO")
MEMRY_COMMIT = "8cd473e9b7ad6562839c9cf8424362026308d2eb"
PHISH_URL, PHISH_ENV, PHISH = mirror("Satyam-stysh/Phishing_url_cheaker", "PREFIXBENCH_PHISHING_URL_REPO")
PHISH_COMMIT = "048cbed9877777c0323355a77885bebff3263461"
PHISH_LEFT_OUT = frozenset({
    ".codex/sessions/2026/04/03/rollout-2026-04-03T14-55-22-019d53d7-7683-7ab1-a3cd-d3383a18938c.jsonl"})


def _audit_claude_home(into: Path, paths: list[Path], sums: tuple[int, int, int, int, int]):
    """The audit of the ``.claude/projects/`` copied into ``into``, its calls, uncached input,
    output, reads and writes asserted equal to the transcripts' own (``paths``) and to ``sums``."""
    result = run_audit([into / ".claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == claude_recount(paths) == sums
    return result


def test_a_synced_claude_code_home_of_2_1_21_to_2_1_143_totals_its_lines(tmp_path: Path) -> None:
    paths = tree_at(PSH, PSH_COMMIT, PSH_URL, PSH_ENV, ".claude/projects/", tmp_path, ".jsonl", PSH_LEFT_OUT)
    assert len(paths) == 948
    result = _audit_claude_home(tmp_path, paths, (
        13_128, 807_193, 5_917_528, 1_006_024_797, 54_232_628))
    assert Counter(r.model for r in result.rows) == {
        "claude-haiku-4-5-20251001": 5_162, "claude-opus-4-7": 4_851, "claude-opus-4-6": 1_999,
        "claude-sonnet-4-6": 669, "claude-opus-4-5-20251101": 250, "claude-sonnet-4-5-20250929": 197}
    assert {r.provider for r in result.rows} == {"anthropic"}
    # 211 of its 296 sessions are subagents' and compaction agents' transcripts without their
    # session's <session>.jsonl (7,634 of the calls): said so on their rows (none was before).
    absent = [s for s in result.sessions if s.main_absent]
    assert (len(result.sessions), len(absent), sum(s.requests for s in absent)) == (296, 211, 7_634)
    # 11,087 while each call of a compaction lane was read as a response paused after a
    # server-side compaction: 2.1.29-2.1.72's agent-acompact-* files hold many calls each (1,163
    # in 2.1.72's), every one reading what the one before it wrote, and each was predicted
    # to read the head only. Of the 541 left, 157 are 2.1.23-2.1.29 agent-aprompt_suggestion-*
    # calls of sessions whose own transcript the repository does not hold: they read the
    # conversation (a median 99% of their prompts), which is not in the files, so the audit says
    # it was cached before the log.
    assert read_within(result) == 12_587
    # 1,657 compaction rows (1,529 within) while every call of an agent-acompact-* file was a
    # compaction call: 2.1.71-2.1.72's files hold the conversation before the instruction to
    # summarize (1,515 calls, now main-thread calls), and 44 of them were said to be compaction
    # calls that missed (72 compaction-miss rows, now 28): 29 now messages-changed, 7 ttl-expired,
    # 6 system-changed (agent-acompact-03fe84883cab3579.jsonl:222, after "continue" and 19 idle
    # minutes within its writes' 1 h TTL: it read 6,532 tokens, below the 8,778-token head, the
    # session's cwd having changed), 1 breakpoint-placement, 1 unexplained.
    compaction = [r for r in result.rows if r.lane_kind == "compaction"]  # (29 within before)
    assert (len(compaction), sum(bool(r.read_within) for r in compaction)) == (142, 59)
    causes = Counter(r.cause for r in result.rows if r.cause)
    # 57 lane starts read less than the head other lanes' calls read (an inferred head key) and
    # were put down to a change of their own head: 18 subagent starts system-changed, 39 main
    # starts after a logged deferred_tools_delta tools-changed. Nothing changed inside their
    # lanes: they are unexplained (64 system-changed and 3 unexplained before).
    assert (causes["compaction-miss"], causes["messages-changed"], causes["ttl-expired"], causes["system-changed"],
            causes["breakpoint-placement"], causes["unexplained"]) == (28, 265, 58, 46, 2, 60)
    starts = [r for r in result.rows if r.cause == "unexplained" and r.index == 0 and "under the same inferred head" in r.detail]
    assert len(starts) == 57


def test_a_claude_code_2_1_92_home_written_twice_over_totals_its_lines(tmp_path: Path) -> None:
    paths = tree_at(ZIBE, ZIBE_COMMIT, ZIBE_URL, ZIBE_ENV, ".claude/projects/", tmp_path, ".jsonl")
    assert len(paths) == 13
    # Output 121,135 while the first copy of a subagent transcript written twice over, its first
    # response line naming a parent the file never gives, was placed last and its mid-stream
    # output count (1) taken for the response's (144).
    result = _audit_claude_home(tmp_path, paths, (
        223, 2_660, 121_278, 10_660_126, 1_327_060))
    assert Counter(r.model for r in result.rows) == {
        "claude-sonnet-4-6": 199, "claude-opus-4-6": 12, "claude-haiku-4-5-20251001": 12}
    assert read_within(result) == 205


def test_two_claude_code_1_0_homes_total_their_lines(tmp_path: Path) -> None:
    borja = tree_at(BORJA, BORJA_COMMIT, BORJA_URL, BORJA_ENV, ".claude/projects/", tmp_path / "b", ".jsonl")
    franco = tree_at(FRANCO, FRANCO_COMMIT, FRANCO_URL, FRANCO_ENV, ".claude/projects/", tmp_path / "f", ".jsonl")
    assert (len(borja), len(franco)) == (55, 5)
    for paths, root, sums, within in (
            (borja, tmp_path / "b", (650, 3_856, 44_082, 15_608_092, 2_154_185), 605),
            (franco, tmp_path / "f", (173, 10_053, 32_884, 5_003_207, 475_960), 170)):
        result = _audit_claude_home(root, paths, sums)
        assert {(r.provider, r.model) for r in result.rows} == {("anthropic", "claude-sonnet-4-20250514")}
        assert read_within(result) == within


def test_a_claude_code_2_1_146_home_on_deepseek_and_a_relay_totals_its_lines(tmp_path: Path) -> None:
    paths = tree_at(CAI, CAI_COMMIT, CAI_URL, CAI_ENV, ".claude/projects/", tmp_path, ".jsonl")
    assert len(paths) == 9
    result = _audit_claude_home(tmp_path, paths, (
        178, 431_214, 63_164, 11_199_194, 215_971))
    assert Counter((r.provider, r.model) for r in result.rows) == {
        ("deepseek", "deepseek-v4-flash"): 161, ("unknown", "claude-opus-4-7"): 17}
    deepseek = [r for r in result.rows if r.provider == "deepseek"]
    assert sum(bool(r.read_within) for r in deepseek) == 158
    # The relay's 17 calls split every prompt in one of two fixed shares (read / write /
    # uncached 15% / 54% / 31%, or 8% / 28.8% / 63.2%), whatever came before: counts made up by
    # the relay, not a cache's; 3 within 3%, no rule.
    relay = [r for r in result.rows if r.provider == "unknown"]
    shares = {(round(r.reported_cache_read / p, 2), round(r.reported_cache_write / p, 2))
              for r in relay for p in [r.reported_cache_read + r.reported_cache_write + r.reported_uncached]}
    assert shares == {(0.15, 0.54), (0.08, 0.29)}
    assert sum(bool(r.read_within) for r in relay) == 3


def test_a_claude_code_2_1_31_to_2_1_62_home_totals_its_lines(tmp_path: Path) -> None:
    paths = tree_at(LZY, LZY_COMMIT, LZY_URL, LZY_ENV, ".claude/projects/", tmp_path, ".jsonl")
    assert len(paths) == 47
    result = _audit_claude_home(tmp_path, paths, (
        557, 7_294, 247_858, 22_054_678, 2_238_119))
    assert Counter(r.model for r in result.rows) == {
        "claude-sonnet-4-6": 373, "claude-haiku-4-5-20251001": 124, "claude-sonnet-4-5-20250929": 43,
        "claude-opus-4-6": 17}
    assert read_within(result) == 513


def test_three_more_claude_code_2_0_and_2_1_homes_total_their_lines(tmp_path: Path) -> None:
    for repo, commit, url, env, left_out, into, files, sums, models, within in (
            (IKN, IKN_COMMIT, IKN_URL, IKN_ENV, IKN_LEFT_OUT, tmp_path / "i", 76,
             (435, 15_953, 5_780, 31_526_626, 2_762_940),
             {"claude-opus-4-5-20251101": 298, "claude-haiku-4-5-20251001": 121, "claude-sonnet-4-5-20250929": 16},
             # 362 while each call of its compaction lanes was read as paused after a server-side
             # compaction. Most of the rest are agent-aprompt_suggestion-* calls whose session's
             # own transcript is left out (past the snapshot's size limit): the conversation they
             # read is not in the files, so the audit says it was cached before the log. 363 while
             # the conversation's last call, written into agent-acompact-4474ad.jsonl before the
             # instruction to summarize, was a compaction call said to miss.
             364),
            (YAK, YAK_COMMIT, YAK_URL, YAK_ENV, YAK_LEFT_OUT, tmp_path / "y", 199,
             (2_899, 349_809, 533_608, 203_331_185, 15_712_810),
             {"claude-opus-4-5-20251101": 1_846, "claude-haiku-4-5-20251001": 951, "claude-sonnet-4-5-20250929": 102},
             # 2,686 while the second of two parallel tool results in a 2.0.x subagent's
             # transcript, chained under an entry the file never gives (126 of them), started
             # a new chain: the next call was predicted to read the head only. 2,823 while four
             # subagents' first calls sending an earlier one's "Warmup" prompt again (same size, same
             # folder, within the TTL) were predicted to read 0, not all of it.
             2_827),
            (OLI, OLI_COMMIT, OLI_URL, OLI_ENV, OLI_LEFT_OUT, tmp_path / "o", 76,
             (1_582, 77_890, 535_796, 104_323_553, 9_802_321),
             {"claude-sonnet-4-5-20250929": 1_566, "claude-haiku-4-5-20251001": 16}, 1_515)):
        paths = tree_at(repo, commit, url, env, ".claude/projects/", into, ".jsonl", left_out)
        assert len(paths) == files
        result = _audit_claude_home(into, paths, sums)
        assert Counter(r.model for r in result.rows) == models
        assert {r.provider for r in result.rows} == {"anthropic"}
        assert read_within(result) == within


def test_four_committed_codex_homes_total_their_token_counts(tmp_path: Path) -> None:
    for repo, commit, url, env, left_out, into, sums, models, within in (
            (SHELL, SHELL_COMMIT, SHELL_URL, SHELL_ENV, frozenset(), tmp_path / "s",
             (234, 1_439_806, 20_439_552, 156_136), {"gpt-5.4": 198, "gpt-5.2-codex": 36}, 220),
            (JG, JG_COMMIT, JG_URL, JG_ENV, frozenset(), tmp_path / "j", (39, 219_695, 835_200, 18_046),
             {"gpt-5.4": 39}, 34),
            (MEMRY, MEMRY_COMMIT, MEMRY_URL, MEMRY_ENV, frozenset(), tmp_path / "m",
             (102, 262_682, 9_336_064, 48_116), {"gpt-5.2-codex": 102}, 92),
            (PHISH, PHISH_COMMIT, PHISH_URL, PHISH_ENV, PHISH_LEFT_OUT, tmp_path / "p",
             (578, 1_517_999, 27_818_752, 243_513), {"gpt-5.4": 480, "gpt-5.3-codex": 98}, 545)):
        paths = tree_at(repo, commit, url, env, ".codex/sessions/", into, ".jsonl", left_out)
        result = run_audit([into / ".codex" / "sessions"])
        t = result.totals
        assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == sums
        assert Counter(r.model for r in result.rows) == models
        assert {r.provider for r in result.rows} == {"openai"}
        assert read_within(result) == within
