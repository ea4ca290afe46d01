"""A committed Claude Code home audited out of sample: github.com/aistrad/work at commit
``ece61bc6b5d4c7293dd8d07da79d9f8225809d60`` (2026-01-28; two commits later the transcripts were
removed), its ``.claude/projects/``: Claude Code 2.0.74-2.1.21 on one Linux machine, 2025-12 to
2026-01. Two slices of it are read (the whole home is about 2,250 transcripts, 500 MB):

* every transcript that names a GLM model (64 files, 47 of them ``agent-*.jsonl``, in four
  projects): Claude Code 2.0.74, 2.0.76 and 2.1.1 sending glm-4.7 (and glm-4.5-air for four
  subagent calls) to Z.AI through claude-code-router (the user's prompts name it: ``ccr code``),
  which gives the responses no ``requestId``. The endpoint reported no token counts at all for
  49 responses (40 of one session's 69): each is skipped as no call, so a follow-up after them
  reads past what the previous counted call sent (17 follow-ups, 5 of them off by more than 3%);
  every glm-4.7 read is a multiple of 128 tokens (288 of 288), and a follow-up reads into the
  reply before it (Claude Code sends it back whole). No write count is reported;
* the project ``-home-aiscend-work-mentis`` (76 transcripts, 53 of them subagents'; 4 empty, 7
  holding only a queue operation and 15 no response): Claude Code 2.0.76 of 2026-01-04/05, claude-opus-4-5
  and claude-haiku-4-5 on Anthropic.

* the project ``-home-aiscend-work-fortune-ai`` (241 transcripts, 172 of them subagents', 5
  empty): Claude Code 2.0.76 of 2025-12-29 to 2026-01-04, claude-opus-4-5, -haiku-4-5 and
  -sonnet-4-5 on Anthropic, three subagent calls of glm-4.7; 330 calls of 38 transcripts went
  through an endpoint whose usage has no cache field (no ``requestId`` either): read unknown; 329
  calls carry message ids of ``msg_`` + 32 hex (no maker's shape): relayed on Anthropic's rules.

* one transcript of ``-home-aiscend-work-vibelife`` (Claude Code 2.1.19, claude-sonnet-4-5 on
  Anthropic) whose messages hold raw U+0085 characters (text decoded in the wrong encoding): a line
  is split at newlines only. Its 11 calls carry message ids of ``msg_`` + a UUID (no maker's
  shape): relayed on Anthropic's rules, every count as before.

Transcripts of 4 MiB or more are left out (the workplace's snapshot lacks them: three of
fortune-ai's main sessions, and in the GLM slice those the tree gives no size for). From
``PREFIXBENCH_AISTRAD_WORK_REPO``, else the look-up tools' mirror; each test skips without it.
What is checked: the audit's totals equal the transcripts' own sums (recounted here from the raw
files) and how many reads it predicts within 3%.
"""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import claude_recount, file_at, files_at, git, mirror, read_within, tree_at

URL, ENV, REPO = mirror("aistrad/work", "PREFIXBENCH_AISTRAD_WORK_REPO")
COMMIT = "ece61bc6b5d4c7293dd8d07da79d9f8225809d60"
#: The snapshot's size limit: larger files are absent from it.
TOO_LARGE = 4 * 1024 * 1024
FORTUNE = ".claude/projects/-home-aiscend-work-fortune-ai/"
#: fortune-ai's transcripts of 4 MiB or more.
FORTUNE_LEFT_OUT = frozenset(FORTUNE + name + ".jsonl" for name in (
    "57d1b191-4eb4-429c-96ac-40f334a1945a", "a14201ba-4ede-41f2-a2e9-5272a635e063", "a1f17a72-fee4-42ee-a18d-e451690cb163"))


def _glm_transcripts(into: Path) -> list[Path]:
    """The home's transcripts under 4 MiB whose text names a GLM model, written into ``into``."""
    files_at(REPO, COMMIT, URL, ENV)  # skips where the copy or the commit is absent
    listed = git(REPO, "ls-tree", "-r", "-l", COMMIT, "--", ".claude/projects/").stdout.splitlines()
    written = []
    for row in listed:
        meta, name = row.split("\t", 1)
        size = meta.split()[3]
        if not name.endswith(".jsonl") or not size.isdigit() or int(size) >= TOO_LARGE:
            continue
        data = file_at(REPO, COMMIT, name, URL, ENV)
        if b'"model":"glm-' in data:
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(target)
    return written


def _totals(result) -> tuple[int, int, int, int, int | None]:
    t = result.totals
    return t.requests, t.input, t.output, t.cache_read, t.cache_write


def test_claude_code_on_glm_through_a_router_counts_what_its_transcripts_sum(tmp_path: Path) -> None:
    paths = _glm_transcripts(tmp_path)
    assert len(paths) == 64
    assert sum(p.name.startswith("agent-") for p in paths) == 47
    result = run_audit(paths)
    assert {f.format for f in result.files} == {"claude-code"}
    assert {(m.provider, m.model) for m in result.models} == {("zai", "glm-4.7"), ("zai", "glm-4.5-air")}
    calls, uncached, output, read, written = claude_recount(paths)
    assert written == 0  # Z.AI reports no write count
    assert _totals(result) == (calls, uncached, output, read, None) == (292, 842_781, 102_589, 10_588_309, None)
    # 225 of 292 within 3% (217 while Claude Code's Z.AI calls were taken not to send their reply
    # back: 153 of the 228 glm-4.7 follow-ups read the previous prompt and reply to their last
    # 128-token unit). Of the 67 off, 53 are lane starts: 46 subagents' (most of them one call
    # reading 512-11,520 tokens an earlier session cached, 8 concurrent starts reading 2,816 of a
    # 3,045-token head) and 7 main lanes' reading more than the account's warm head; of the 14
    # follow-ups, 5 read past the previous counted call after responses whose usage the router left
    # all zero (those calls were sent and cached, but are no call here) and 6 read less with
    # nothing changed in the log (provider-best-effort).
    assert read_within(result) == 225
    # Every read off by more than 3% says why: the five follow-ups past the previous counted call
    # with all-zero responses between name those lines (main gave them no detail, Z.AI's usage
    # not being additive); the three with none say nothing in the log tells.
    off = [r for r in result.rows if not r.read_within]
    assert all(r.detail for r in off)
    assert sum("with no token counts between them" in r.detail for r in off) == 5
    assert sum("nothing in the log tells what cached them" in r.detail for r in off) == 3
    # The read step: every glm-4.7 read above 0 is a multiple of 128 and about half of them of 256
    # (a 128 step, not 64 or 256); glm-4.5-air reads to the token. One log of glm-4.7 on Z.AI, so
    # the zai rules read it to the token: 14 reads predicted exactly (205 in 128-token steps).
    reads = [r.reported_cache_read for r in result.rows if r.model == "glm-4.7" and r.reported_cache_read]
    assert (len(reads), sum(n % 128 == 0 for n in reads), sum(n % 256 == 0 for n in reads)) == (287, 287, 161)
    assert sorted(r.reported_cache_read for r in result.rows if r.model == "glm-4.5-air") == [868, 869, 869, 871]
    glm = [r for r in result.rows if r.model == "glm-4.7"]
    assert (len(glm), sum(r.predicted_cache_read == r.reported_cache_read for r in glm)) == (288, 14)


def test_claude_code_on_anthropic_in_the_same_home_counts_what_its_transcripts_sum(tmp_path: Path) -> None:
    paths = tree_at(REPO, COMMIT, URL, ENV, ".claude/projects/-home-aiscend-work-mentis/", tmp_path, ".jsonl")
    assert len(paths) == 76
    assert sum(p.stat().st_size == 0 for p in paths) == 4  # read as a user would: the folder (an empty file given by name is refused)
    result = run_audit([tmp_path / ".claude" / "projects"])
    assert len(result.files) == 76
    assert {m.provider for m in result.models} == {"anthropic"}
    calls, uncached, output, read, written = claude_recount(paths)
    assert _totals(result) == (calls, uncached, output, read, written) == (463, 73_739, 430_164, 39_226_155, 3_177_631)
    assert read_within(result) == 453


def test_claude_code_partly_through_an_endpoint_without_cache_counts_counts_what_its_transcripts_sum(tmp_path: Path) -> None:
    paths = tree_at(REPO, COMMIT, URL, ENV, FORTUNE, tmp_path, ".jsonl", left_out=FORTUNE_LEFT_OUT)
    assert len(paths) == 241
    result = run_audit([tmp_path / ".claude" / "projects"])
    assert len(result.files) == 241
    calls, uncached, output, read, written = claude_recount(paths)
    assert _totals(result) == (calls, uncached, output, read, written) == (1_616, 23_519_321, 575_695, 121_936_037, 7_224_414)
    unknown = [r for r in result.rows if r.reported_cache_read is None]
    assert (len(unknown), len({r.file for r in unknown})) == (330, 38)  # no cache field: nothing to predict
    # 329 calls of its Claude models carry message ids of msg_ and 32 hex digits, no maker's shape:
    # relayed on Anthropic's rules (no relay before; lost $19.95 and every cause as before).
    assert {(model, relay): n for provider, model, relay, n in result.relays if provider == "anthropic"} == {
        ("claude-haiku-4-5-20251001", "(unnamed)"): 33, ("claude-opus-4-5-20251101", "(unnamed)"): 273,
        ("claude-sonnet-4-5-20250929", "(unnamed)"): 23}
    # 1,227 of the 1,286 calls that report their cache use within 3%. The 59 others: 15 reads
    # after an idle past the 5 min TTL and 16 lane starts (of them, 8 main lanes reading a
    # 12,832-token head cached before the log), 8 compactions, 9 calls after the history shrank,
    # 8 reads that ended inside the head (system-changed) and 3 that read past the previous call.
    assert read_within(result) == 1_227


def test_a_transcript_holding_next_line_characters_counts_what_it_sums(tmp_path: Path) -> None:
    name = ".claude/projects/-home-aiscend-work-vibelife/68845b78-7183-4d0f-a83e-f2622c9e656e.jsonl"
    path = tmp_path / "s.jsonl"
    path.write_bytes(file_at(REPO, COMMIT, name, URL, ENV))
    text = path.read_text(encoding="utf-8")
    assert "\x85" in text and len(text.splitlines()) > len(text.rstrip("\n").split("\n"))
    result = run_audit([path])
    calls, uncached, output, read, written = claude_recount([path])
    assert _totals(result) == (calls, uncached, output, read, written) == (11, 510_793, 0, 241_176, 87_334)
    assert read_within(result) == 10
    # msg_ and a UUID, no maker's shape: relayed on Anthropic's rules (no relay before; the counts
    # above and the causes as before).
    assert result.relays == (("anthropic", "claude-sonnet-4-5-20250929", "(unnamed)", 11),)
    assert [r.provider for r in result.rows] == ["anthropic"] * 11
