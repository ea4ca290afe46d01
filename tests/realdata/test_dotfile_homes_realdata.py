"""Agent homes committed to public repositories, audited out of sample (none was
used while the readers were written), read where they live (a local git copy; never copied into
this project, each test skips without it):

* github.com/Xu-Wentao/dotfile (``936f6d7fb2f4815c3f581ce89844ca1712b7bc1d``, 2026-05-06): a
  ``.claude/projects/`` of Claude Code 2.1.78 to 2.1.96 (the CLI, the VS Code extension and Claude
  Desktop), 175 transcripts (41 of them subagents'), claude-sonnet-4-6, -opus-4-6 and -haiku-4-5
  on Anthropic, a few calls of glm-5.1 / glm-5-turbo and of longcat-flash-thinking-2601-platform
  through Anthropic-compatible endpoints. Two of its transcripts log a second response (another
  message id) under the requestId of a response cut off after its first block; the second read
  what the first wrote, so both were calls. From ``PREFIXBENCH_XU_DOTFILE_REPO``.
* github.com/blubber/dotfiles (``6b09a1c39b9728bd0ef2ce1ff8e7ba5c0631d4ca``, 2026-03-09, the
  last commit before the sessions were removed): a ``.codex/sessions/`` of 61 rollouts, 2026-02,
  Codex CLI 0.98.0 and a source build that calls itself 0.0.0, gpt-5.3-codex on OpenAI. From
  ``PREFIXBENCH_BLUBBER_DOTFILES_REPO``.

* github.com/InvictusAutomation/oc-admin-home-shared (``1ea89dff2f7899e5f05138f941097e8834575353``,
  2026-03-23): an OpenClaw host's ``.claude/projects/``, 89 transcripts of Claude Code 2.1.68 to
  2.1.73 on MiniMax-M2.1 (MiniMax's Anthropic-compatible API). From ``PREFIXBENCH_INVICTUS_REPO``.
* github.com/4thehalibit/omarchy-backup (``41bb7a1ab482a67e4302082008caaff403d36544``,
  2026-04-29): a ``.claude/projects/`` of 29 transcripts (18 of them subagents') of Claude Code
  2.1.81 and 2.1.97, claude-sonnet-4-6 and claude-haiku-4-5 on Anthropic. From
  ``PREFIXBENCH_OMARCHY_REPO``.

* github.com/bradymholt/dotfiles (``45d7e4b3270155adf58720f0a6cdfeab42f5dc39``, 2026-01-13, the
  last commit before the transcripts were removed): a ``.claude/projects/`` of 52 transcripts of
  Claude Code 2.0.2 to 2.1.1 (2025-12 to 2026-01), claude-sonnet-4-5, claude-opus-4-1 and -4-5,
  claude-haiku-4-5 on Anthropic. From ``PREFIXBENCH_BRADYMHOLT_REPO``.

* github.com/SudarshanVK/dotfiles (``c47592c89a024a6e7a9fb50ea13eb64cda7e3a03``, 2026-05-09): a
  ``.claude/projects/`` of 31 transcripts (6 subagents') of Claude Code 2.1.39 to 2.1.132 (CLI,
  VS Code, the Agent SDK), Claude on Anthropic and, on 2.1.121 to 2.1.132, unsloth/Qwen3-Coder-Next
  through an Anthropic-compatible endpoint (132 calls, read with Qwen's rules by its name). From
  ``PREFIXBENCH_SUDARSHAN_REPO``.
* github.com/JamesTiberiusKirk/dotsv2 (``c4267e011b9fefb19bcf4f50e7a3e1281b354495``, 2026-06-04,
  the last commit before the transcripts were removed): a ``.claude/projects/`` of 72 transcripts
  (43 subagents') of Claude Code 2.1.145 and 2.1.150, claude-sonnet-4-6, -haiku-4-5 and -opus-4-7
  on Anthropic. From ``PREFIXBENCH_DOTSV2_REPO``.

* github.com/deder01/config_files (``20624dfb9e17592bb2aa2bcbe4d7e484aa334fe5``, 2026-03-25): a
  ``.claude/projects/`` of 33 transcripts (27 subagents') of Claude Code 2.1.2 to 2.1.81 (2026-01
  and 03), claude-opus-4-5 most of them, on Anthropic. From ``PREFIXBENCH_DEDER_REPO``.
* github.com/LuisUma92/dotfiles (``21e6253a2e2b2c98f3813a54d7a16e227fcb1b78``, 2026-03-09): a
  ``.claude/projects/`` of 6 transcripts (3 subagents') of Claude Code 2.1.56, claude-opus-4-6,
  -haiku-4-5 and -sonnet-4-6 on Anthropic. From ``PREFIXBENCH_LUISUMA_REPO``.

What is checked: the audit's totals equal the logs' own sums, counted here from the raw lines,
and how many reads are predicted within 3%.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

import pytest
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import codex_recount, tree_at

XU = Path(os.environ.get("PREFIXBENCH_XU_DOTFILE_REPO", "/work/.mirror/Xu-Wentao+dotfile/repo"))
XU_COMMIT = "936f6d7fb2f4815c3f581ce89844ca1712b7bc1d"
XU_URL, XU_ENV = "github.com/Xu-Wentao/dotfile", "PREFIXBENCH_XU_DOTFILE_REPO"

BLUBBER = Path(os.environ.get("PREFIXBENCH_BLUBBER_DOTFILES_REPO", "/work/.mirror/blubber+dotfiles/repo"))
BLUBBER_COMMIT = "6b09a1c39b9728bd0ef2ce1ff8e7ba5c0631d4ca"
BLUBBER_URL, BLUBBER_ENV = "github.com/blubber/dotfiles", "PREFIXBENCH_BLUBBER_DOTFILES_REPO"

INVICTUS = Path(os.environ.get("PREFIXBENCH_INVICTUS_REPO", "/work/.mirror/InvictusAutomation+oc-admin-home-shared/repo"))
INVICTUS_COMMIT = "1ea89dff2f7899e5f05138f941097e8834575353"
INVICTUS_URL, INVICTUS_ENV = "github.com/InvictusAutomation/oc-admin-home-shared", "PREFIXBENCH_INVICTUS_REPO"

OMARCHY = Path(os.environ.get("PREFIXBENCH_OMARCHY_REPO", "/work/.mirror/4thehalibit+omarchy-backup/repo"))
OMARCHY_COMMIT = "41bb7a1ab482a67e4302082008caaff403d36544"
OMARCHY_URL, OMARCHY_ENV = "github.com/4thehalibit/omarchy-backup", "PREFIXBENCH_OMARCHY_REPO"

BRADY = Path(os.environ.get("PREFIXBENCH_BRADYMHOLT_REPO", "/work/.mirror/bradymholt+dotfiles/repo"))
BRADY_COMMIT = "45d7e4b3270155adf58720f0a6cdfeab42f5dc39"
BRADY_URL, BRADY_ENV = "github.com/bradymholt/dotfiles", "PREFIXBENCH_BRADYMHOLT_REPO"

SUDARSHAN = Path(os.environ.get("PREFIXBENCH_SUDARSHAN_REPO", "/work/.mirror/SudarshanVK+dotfiles/repo"))
SUDARSHAN_COMMIT = "c47592c89a024a6e7a9fb50ea13eb64cda7e3a03"
SUDARSHAN_URL, SUDARSHAN_ENV = "github.com/SudarshanVK/dotfiles", "PREFIXBENCH_SUDARSHAN_REPO"

DOTSV2 = Path(os.environ.get("PREFIXBENCH_DOTSV2_REPO", "/work/.mirror/JamesTiberiusKirk+dotsv2/repo"))
DOTSV2_COMMIT = "c4267e011b9fefb19bcf4f50e7a3e1281b354495"
DOTSV2_URL, DOTSV2_ENV = "github.com/JamesTiberiusKirk/dotsv2", "PREFIXBENCH_DOTSV2_REPO"

DEDER = Path(os.environ.get("PREFIXBENCH_DEDER_REPO", "/work/.mirror/deder01+config_files/repo"))
DEDER_COMMIT = "20624dfb9e17592bb2aa2bcbe4d7e484aa334fe5"
DEDER_URL, DEDER_ENV = "github.com/deder01/config_files", "PREFIXBENCH_DEDER_REPO"

LUIS = Path(os.environ.get("PREFIXBENCH_LUISUMA_REPO", "/work/.mirror/LuisUma92+dotfiles/repo"))
LUIS_COMMIT = "21e6253a2e2b2c98f3813a54d7a16e227fcb1b78"
LUIS_URL, LUIS_ENV = "github.com/LuisUma92/dotfiles", "PREFIXBENCH_LUISUMA_REPO"


def _copy(repo: Path, commit: str, url: str, env: str, prefix: str, into: Path) -> list[Path]:
    return tree_at(repo, commit, url, env, prefix, into)


def _claude_sums(paths: list[Path]) -> tuple[int, int, int, int, int, int]:
    """Calls, uncached input, output, reads, writes and 1 h writes of Claude Code transcripts: one
    call per (requestId, message id), its last line's usage; ``<synthetic>`` lines are no call."""
    last: dict[tuple, dict] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            message = entry.get("message") or {}
            if entry.get("type") == "assistant" and message.get("usage") and message.get("model") != "<synthetic>":
                last[(entry.get("requestId"), message.get("id"))] = message["usage"]
    usages = list(last.values())
    return (len(usages), *(sum(u.get(k) or 0 for u in usages) for k in (
        "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")),
        sum((u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0) for u in usages))


def test_a_claude_code_home_of_2_1_78_to_2_1_96_totals_its_lines(tmp_path: Path) -> None:
    paths = [p for p in _copy(XU, XU_COMMIT, XU_URL, XU_ENV, ".claude/projects/", tmp_path) if p.suffix == ".jsonl"]
    assert len(paths) == 175
    calls, uncached, output, read, write, write_1h = _claude_sums(paths)
    result = run_audit([tmp_path / ".claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h) == (
        calls, uncached, output, read, write, write_1h) == (1_028, 1_977_556, 479_562, 43_211_899, 3_644_346, 2_105_507)
    # Two calls were logged under the requestId of the response before them (a different message
    # id); before they were counted, 1,026 calls and 7,653 tokens of writes fewer.
    # 968 of 1,026 before; 969 while a session's first call sending an earlier session's first
    # prompt again (the same message and size, the same folder and version, within the TTL) was
    # predicted to read the head only: four such read all of it (+4), one 22 s after the other
    # read the head only (-1). 972 while a subagent's head was its session's alone, not its type's
    # too: session e1dfbe01's executor agents read 9,059 tokens at their starts, its code reviewers
    # 6,763 or 7,758, and one level (8,503) was predicted for both (+8).
    assert sum(f.read_within for f in result.files) == 980
    # longcat-flash-thinking-2601-platform (48 calls) is no modelled provider's model: unknown,
    # not Anthropic (it was Anthropic's before).
    assert {r.provider for r in result.rows} == {"anthropic", "zai", "unknown"}
    assert {r.model for r in result.rows if r.provider == "unknown"} == {"longcat-flash-thinking-2601-platform"}




def test_a_codex_home_of_0_98_totals_its_token_counts(tmp_path: Path) -> None:
    paths = _copy(BLUBBER, BLUBBER_COMMIT, BLUBBER_URL, BLUBBER_ENV, ".codex/sessions/", tmp_path)
    assert len(paths) == 61
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (385, 1_173_167, 12_996_352, 108_956)
    assert t.cache_write is None
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.3-codex")}
    # 32 of the 38 off are OpenAI's best effort (a read below the previous prompt, nothing changed).
    assert sum(f.read_within for f in result.files) == 347


def test_a_claude_code_home_on_minimax_totals_its_lines(tmp_path: Path) -> None:
    paths = [p for p in _copy(INVICTUS, INVICTUS_COMMIT, INVICTUS_URL, INVICTUS_ENV, ".claude/projects/", tmp_path)
             if p.suffix == ".jsonl"]
    assert len(paths) == 89
    result = run_audit([tmp_path / ".claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h) == _claude_sums(paths) == (
        90, 153_251, 23_199, 1_475_539, 162_363, 0)
    assert {(r.provider, r.model) for r in result.rows} == {("minimax", "MiniMax-M2.1")}
    assert sum(f.read_within for f in result.files) == 64


def test_a_claude_code_home_of_2_1_97_totals_its_lines(tmp_path: Path) -> None:
    paths = [p for p in _copy(OMARCHY, OMARCHY_COMMIT, OMARCHY_URL, OMARCHY_ENV, ".claude/projects/", tmp_path)
             if p.suffix == ".jsonl"]
    assert len(paths) == 29
    result = run_audit([tmp_path / ".claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h) == _claude_sums(paths) == (
        718, 4_040, 280_830, 35_465_642, 969_398, 661_707)
    assert {r.provider for r in result.rows} == {"anthropic"}
    assert sum(f.read_within for f in result.files) == 704


def test_a_claude_code_home_of_2_0_to_2_1_1_totals_its_lines(tmp_path: Path) -> None:
    paths = [p for p in _copy(BRADY, BRADY_COMMIT, BRADY_URL, BRADY_ENV, ".claude/projects/", tmp_path) if p.suffix == ".jsonl"]
    assert len(paths) == 52
    result = run_audit([tmp_path / ".claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h) == _claude_sums(paths) == (
        1_038, 57_778, 94_484, 52_067_392, 5_728_348, 0)
    assert {r.provider for r in result.rows} == {"anthropic"}
    assert sum(f.read_within for f in result.files) == 979  # 53 of the 59 off: messages changed


def test_a_claude_code_home_with_a_local_qwen_model_totals_its_lines(tmp_path: Path) -> None:
    paths = [p for p in _copy(SUDARSHAN, SUDARSHAN_COMMIT, SUDARSHAN_URL, SUDARSHAN_ENV, ".claude/projects/", tmp_path)
             if p.suffix == ".jsonl"]
    assert len(paths) == 31
    result = run_audit([tmp_path / ".claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h) == _claude_sums(paths) == (
        212, 303_193, 52_132, 7_963_939, 411_717, 0)
    assert sum(r.model == "unsloth/Qwen3-Coder-Next" for r in result.rows) == t.unpriced_requests == 132
    assert sum(f.read_within for f in result.files) == 206


def test_a_claude_code_home_of_2_1_150_totals_its_lines(tmp_path: Path) -> None:
    paths = [p for p in _copy(DOTSV2, DOTSV2_COMMIT, DOTSV2_URL, DOTSV2_ENV, ".claude/projects/", tmp_path)
             if p.suffix == ".jsonl"]
    assert len(paths) == 72
    result = run_audit([tmp_path / ".claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h) == _claude_sums(paths) == (
        1_926, 13_534, 649_236, 117_689_133, 4_493_616, 2_963_352)
    assert {r.provider for r in result.rows} == {"anthropic"}
    assert sum(f.read_within for f in result.files) == 1_888


@pytest.mark.parametrize(("home", "files", "sums", "within"), [
    ((DEDER, DEDER_COMMIT, DEDER_URL, DEDER_ENV), 33, (2_865, 16_988, 114_289, 227_698_642, 859_099, 90_323), 2_855),
    ((LUIS, LUIS_COMMIT, LUIS_URL, LUIS_ENV), 6, (131, 384, 57_892, 6_367_781, 363_890, 195_822), 129),
])
def test_more_claude_code_homes_total_their_lines(tmp_path: Path, home: tuple, files: int, sums: tuple, within: int) -> None:
    paths = [p for p in _copy(*home, ".claude/projects/", tmp_path) if p.suffix == ".jsonl"]
    assert len(paths) == files
    result = run_audit([tmp_path / ".claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h) == _claude_sums(paths) == sums
    assert {r.provider for r in result.rows} == {"anthropic"}
    assert sum(f.read_within for f in result.files) == within


def test_a_codex_home_of_0_118_totals_its_token_counts(tmp_path: Path) -> None:
    # The same Xu-Wentao/dotfile, at an earlier commit (ca45010, 2026-04-09) that still held
    # ``.codex/sessions/``: 5 rollouts of Codex 0.118.0 (codex-tui), gpt-5.4 on OpenAI.
    paths = _copy(XU, "ca45010dff1f1858fb6ba45b92beb34632fb3d9c", XU_URL, XU_ENV, ".codex/sessions/", tmp_path)
    assert len(paths) == 5
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (42, 323_949, 1_755_008, 14_545)
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.4")}
    assert sum(f.read_within for f in result.files) == 35  # 4 of the 7 off: OpenAI's best effort


def test_the_claude_code_homes_what_to_change_is_advice_a_setting_can_follow(tmp_path: Path) -> None:
    """Xu-Wentao/dotfile@936f6d7: ttl-auto ranked first, "saves $3.1337", by giving 1 h to 6 of 80
    lanes in hindsight (a setting applies to every session of its kind), while ttl-5m
    (FORCE_PROMPT_CACHING_5M=1), saving $2.2506, was not listed; keep-alive was credited with 3
    misses it left as logged, and the two it bridged (idle 1h30m and 1h01m after 1 h writes) were
    unavoidable in the split."""
    from prefixbench.workloads.audit.advice import advise
    from prefixbench.workloads.audit.core import load_trace

    _copy(XU, XU_COMMIT, XU_URL, XU_ENV, ".claude/projects/", tmp_path)
    trace = load_trace([tmp_path / ".claude" / "projects"])
    result = advise(run_audit([tmp_path / ".claude" / "projects"], trace=trace), trace)
    recs = {rec.fix: rec for rec in result.recommendations}
    assert recs["ttl-5m"].saved_usd == recs["ttl-auto"].saved_usd  # 5 m on both lane kinds: ttl-5m's figure
    assert abs(recs["ttl-5m"].saved_usd - Decimal("2.2506")) < Decimal("0.0001")
    # (its sessions ran Claude Code 2.1.78-2.1.96, older than the 2.1.108 that reads it: said)
    assert recs["ttl-5m"].setting == ("FORCE_PROMPT_CACHING_5M=1; needs Claude Code 2.1.108 or later "
                                      "(this log's sessions ran 2.1.78-2.1.96)")
    assert "an upper bound, not a setting" in recs["ttl-auto"].detail
    keep = recs["keep-alive"]
    assert "changes 0 of these" not in keep.pattern and "ttl-expired x2" in keep.pattern
    bridged = [row for row in result.rows if row.cause == "ttl-expired" and row.line in (60, 143)
               and row.lost_usd is not None and row.lost_usd > Decimal("0.25")]
    assert len(bridged) == 2 and {row.loss_class for row in bridged} == {"recoverable"}


def test_the_claude_code_homes_fixes_say_what_they_recover_as_the_split_counts_it(tmp_path: Path) -> None:
    """Xu-Wentao/dotfile@936f6d7: static-system said it "changes 10 requests the audit put down to
    other causes (system-changed x10)" and "leaves as logged the 13 miss(es) its cause points it at
    (system-changed x10, tools-changed x3)", while the loss split counted all 11 system-changed
    misses recoverable. Its re-simulation reads each of the 11 back (against the log with the
    break in it; the audit's model, blind to a change it infers from the reads, had predicted those
    reads): credited with 11, leaving the 3 tools-changed as logged (a log without bodies shows no
    tools change to re-simulate). Every recoverable miss is one a fix of its recovered. (Since a
    subagent's head is one per subagent type, 7 of the 11 reads short of one shared subagent head
    are predicted, no longer misses: 4 system-changed misses are left, each read back.)"""
    from prefixbench.workloads.audit.advice import (_own_fixes, _recovered_keys, follow_resimulation, rank, resimulate,
                                                    resimulation_targets)
    from prefixbench.workloads.audit.core import load_trace

    _copy(XU, XU_COMMIT, XU_URL, XU_ENV, ".claude/projects/", tmp_path)
    trace = load_trace([tmp_path / ".claude" / "projects"])
    audited = run_audit([tmp_path / ".claude" / "projects"], trace=trace)
    wanted, changed = resimulation_targets([audited.rows])
    found = resimulate(*trace, wanted, changed, audited.files)
    result = follow_resimulation(audited, found)
    recs = {rec.fix: rec for rec in rank(result, found)}
    static = recs["static-system"]
    assert static.pattern.startswith("system-changed x4: $0.8605 lost") and "other cause" not in static.pattern
    assert static.pattern.endswith("it leaves as logged the 3 miss(es) its cause points it at (tools-changed x3: $0.8819 lost)")
    by_key = {(row.file, row.lane, row.index): row for row in result.rows}
    recovered = {fix: _recovered_keys(fix, w, by_key) for fix, w in found.done.items() if w.applies}
    recoverable = [row for row in result.rows if row.loss_class == "recoverable" and row.cause is not None]
    assert len(recoverable) == result.loss_split.recoverable_requests == 6
    assert all(any((row.file, row.lane, row.index) in recovered.get(fix, ()) for fix in _own_fixes(row)) for row in recoverable)
    assert sum(row.cause == "system-changed" for row in recoverable) == 4
