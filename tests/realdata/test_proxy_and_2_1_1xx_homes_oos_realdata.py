"""Claude Code and Codex homes found committed to public repositories, audited out of sample (none
was used while the readers were written), read where they live (a local git copy; never copied
into this project, each test skips without it):

* github.com/Eduardodmb/ClaudeHome (``446d50d63b665abe5f13bea8c9fa6d9713e863f5``, 2026-07-06): a
  Windows ``~/.claude`` committed whole, its ``projects/`` and a backup of it
  (``projects.bak-20260511-072525/``): 35 transcripts (9 subagents'), Claude Code 2.1.119 to
  2.1.136 (2026-04/05), claude-sonnet-4-5, -sonnet-4-6 and -haiku-4-5 on Anthropic. One transcript
  past the workplace snapshot's size limit is left out. From ``PREFIXBENCH_CLAUDEHOME_REPO``.
* github.com/Damon-Salvetore/claude-code (``2215aab4e128ee1524a9a7dbc3088a41da35e15f``,
  2026-03-06): a ``~/.claude`` committed whole, 49 transcripts (40 subagents'), Claude Code 2.1.63
  pointed (its ``settings.json``) at ``http://localhost:4141``, the default port of the copilot-api
  proxies that serve GitHub Copilot's models: ``claude-opus-4.6-1m`` and ``-fast``, no call
  reporting a cache write. Two transcripts past the snapshot's size limit are left out. From
  ``PREFIXBENCH_DAMON_CLAUDE_REPO``.
* github.com/ttiimmothy/dotfiles (``1d6dc9153bdba92917f89e013ff3a7b764d269d1``, the commit that
  added a ``.codex/``, deleted by the next): 11 rollouts, the 6 of 2026-05-19 of Codex 0.131.0
  (``codex-tui``), gpt-5.4 and gpt-5.5 on OpenAI; 5 of them end before any call (no credit left),
  the 5 older ones hold a session header alone. From ``PREFIXBENCH_TTIIMMOTHY_DOTFILES_REPO``.
* github.com/pichi-vm/devmap (``515ee756d970fea55a0af9358f86a2c28552fdae``): two rollouts of
  ``codex exec`` naming itself 1.17.7 (2026-07-31), gpt-5.5 through ``amd-openai``, a provider of
  the user's configuration (a company gateway). From ``PREFIXBENCH_PICHI_DEVMAP_REPO``.

What is checked: the audit's totals equal the logs' own sums, counted here from the raw lines,
and how many reads are predicted within 3%.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prefixbench.workloads.audit.core import load_trace, run_audit
from tests.realdata.mirrors import claude_recount, codex_recount, mirror, read_within, tree_at

HOME_URL, HOME_ENV, HOME = mirror("Eduardodmb/ClaudeHome", "PREFIXBENCH_CLAUDEHOME_REPO")
HOME_COMMIT = "446d50d63b665abe5f13bea8c9fa6d9713e863f5"
#: Past the workplace snapshot's size limit: left out, so that every copy reads the same files.
HOME_LEFT_OUT = frozenset({"projects.bak-20260511-072525/X--03-ACG-Odoo-Docs/7aa45653-4f81-4987-9230-a7f24eb16c56.jsonl"})

DAMON_URL, DAMON_ENV, DAMON = mirror("Damon-Salvetore/claude-code", "PREFIXBENCH_DAMON_CLAUDE_REPO")
DAMON_COMMIT = "2215aab4e128ee1524a9a7dbc3088a41da35e15f"
DAMON_LEFT_OUT = frozenset(f"projects/-home-yingbohao/{name}.jsonl" for name in (
    "6e901229-6912-48e3-8e8a-cc49793fa4a8", "dafb9c86-85fb-4ab7-a630-b9f0dc2e3406"))

TT_URL, TT_ENV, TT = mirror("ttiimmothy/dotfiles", "PREFIXBENCH_TTIIMMOTHY_DOTFILES_REPO")
TT_COMMIT = "1d6dc9153bdba92917f89e013ff3a7b764d269d1"

DEVMAP_URL, DEVMAP_ENV, DEVMAP = mirror("pichi-vm/devmap", "PREFIXBENCH_PICHI_DEVMAP_REPO")
DEVMAP_COMMIT = "515ee756d970fea55a0af9358f86a2c28552fdae"


def _home(repo: Path, commit: str, url: str, env: str, prefixes: tuple[str, ...], into: Path,
          left_out: frozenset[str]) -> list[Path]:
    """The transcripts under ``prefixes``, each subagent's ``.meta.json`` beside it (as a home has
    them: it names the subagent's type); the transcripts' paths."""
    paths = []
    for prefix in prefixes:
        paths += tree_at(repo, commit, url, env, prefix, into, ".jsonl", left_out)
        tree_at(repo, commit, url, env, prefix, into, ".meta.json", left_out)
    return paths


def test_a_claude_code_2_1_119_to_2_1_136_home_totals_its_lines(tmp_path: Path) -> None:
    paths = _home(HOME, HOME_COMMIT, HOME_URL, HOME_ENV, ("projects/", "projects.bak-20260511-072525/"), tmp_path, HOME_LEFT_OUT)
    assert len(paths) == 35
    result = run_audit([tmp_path])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == claude_recount(paths) == (
        2_208, 15_859, 1_449_632, 186_558_220, 5_058_338)
    assert Counter(r.model for r in result.rows) == {
        "claude-sonnet-4-5-20250929": 1_143, "claude-sonnet-4-6": 986, "claude-haiku-4-5-20251001": 79}
    assert {r.provider for r in result.rows} == {"anthropic"}
    # 2,076 while a claude-sonnet-4-5 turn after a turn that thought was predicted to read only as
    # far as the previous turn's first thinking: from 2.1.119 all 110 such read the whole previous
    # prompt (to 8 tokens), none stopped there. The 22 left: reads that stopped at the head or
    # inside a message (the server's own miss reason names 4), lane starts, and reads past what
    # the log shows written (a call it does not hold).
    assert read_within(result) == 2_186


def test_a_claude_code_home_behind_a_copilot_proxy_totals_its_lines(tmp_path: Path) -> None:
    paths = _home(DAMON, DAMON_COMMIT, DAMON_URL, DAMON_ENV, ("projects/",), tmp_path, DAMON_LEFT_OUT)
    assert len(paths) == 49
    result = run_audit([tmp_path / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == claude_recount(paths) == (
        772, 2_836_364, 357_504, 43_192_351, 0)
    assert Counter(r.model for r in result.rows) == {"claude-opus-4.6-1m": 744, "claude-opus-4.6-fast": 28}
    # No call reports a write, yet the reads grow call after call: in the 28 files where two reads
    # or more outgrew every earlier one, the writes are read as not reported (761 calls), so each
    # call leaves its whole prompt for the next. 450 while they were 0 (each call predicted to read
    # what the previous read); most of the 134 left follow responses the proxy gave no counts for.
    requests, summaries = load_trace([tmp_path / "projects"])
    assert sum(not r.usage.writes_reported for r in requests) == 761
    assert sum(any("its writes read as not reported, not 0" in n for n in s.notes) for s in summaries) == 28
    assert read_within(result) == 638


def test_a_codex_0_131_home_totals_its_token_counts(tmp_path: Path) -> None:
    paths = _home(TT, TT_COMMIT, TT_URL, TT_ENV, (".codex/sessions/",), tmp_path, frozenset())
    assert len(paths) == 11
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (2, 24_823, 11_008, 165)
    assert [(r.provider, r.model) for r in result.rows] == [("openai", "gpt-5.4"), ("openai", "gpt-5.5")]
    # Both read Codex 0.131's 5,504-token head, cached before the log begins: a session's first
    # call, and the first after switching gpt-5.4 to gpt-5.5 (another model's cache). Measured, not
    # added: two reads of one head in one home are no rule.
    assert [r.reported_cache_read for r in result.rows] == [5_504, 5_504]
    assert read_within(result) == 0


def test_a_codex_exec_home_through_a_company_gateway_totals_its_token_counts(tmp_path: Path) -> None:
    paths = _home(DEVMAP, DEVMAP_COMMIT, DEVMAP_URL, DEVMAP_ENV, (".codex/sessions/",), tmp_path, frozenset())
    assert len(paths) == 2
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (14, 160_534, 1_118_976, 10_455)
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.5")}
    assert any("went through 'amd-openai', an endpoint of your configuration" in n for n in result.notes)
    # The one off: the first rollout's first call read 3,456 tokens cached before the log begins.
    assert read_within(result) == 13
