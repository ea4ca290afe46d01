"""The shipped compaction strategies (kernel/strategies/) checked against real sessions of their
agents compacting, read where they live: public repositories, at one commit each, out of the
workplace's git mirrors (``PREFIXBENCH_MIRROR_ROOT``, default ``/work/.mirror``, one
``owner+name/repo`` copy per repository; a test skips, naming the repository, where its copy or
commit is absent). Nothing is copied into the project.

Per agent, what the logs show against what the engine does:

* the trigger: the context size the agent itself logged when it compacted (Claude Code's
  ``compactMetadata.preTokens``, pi's ``tokensBefore``, Codex's last ``token_count``), against the
  engine's threshold on the window the log was written under (each constant says how that window
  is known);
* the summary call: warm or cold, and its read/prompt ratio, where the log keeps the call (Claude
  Code's ``agent-acompact-*`` subagent transcripts, OpenCode's exported summary messages), as the
  audit judges it, against the engine's simulated summary calls (``run_case`` at 128k);
* the size of the first request after the compaction.

The real sessions' figures are pinned exactly (the logs at a commit do not move). The engines'
side is not: what each verdict claims (the engine's trigger in the band the real ones are in, its
summary call as warm or as cold, what it keeps in the real range) is checked on the engine's own
runs, so a workload or tokenizer change that keeps the agreement passes and one that breaks it
fails.

docs/strategies_agents.md ("Checked against real sessions") gives the tables and verdicts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.kernel.strategies import claude_code
from prefixbench.kernel.strategies.claude_code import autocompact_threshold
from prefixbench.kernel.strategies.codex import CodexCompact, is_item
from prefixbench.kernel.strategies.openclaw import DEFAULTS as OPENCLAW_DEFAULTS, OpenClawCompaction
from prefixbench.kernel.strategies.pi import PiCompaction
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.specs.engine import EngineCase, run_case
from tests.realdata.mirrors import file_at
from tests.unit.kernel.agent_sessions import context, session_with

MIRRORS = Path(os.environ.get("PREFIXBENCH_MIRROR_ROOT", "/work/.mirror"))


def _show(repo: str, commit: str, path: str, tmp_path: Path) -> Path:
    """``path`` of github.com/``repo`` at ``commit``, written under ``tmp_path`` (the audit reads files)."""
    data = file_at(MIRRORS / repo.replace("/", "+", 1) / "repo", commit, path, f"github.com/{repo}", "PREFIXBENCH_MIRROR_ROOT")
    out = tmp_path / repo.replace("/", "+") / commit[:12] / path
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return out


def _records(path: Path) -> list[dict]:
    """A JSONL file's records, two records run together on one line (a lost newline) read as two; a
    line that is not JSON (a record cut short) is left out."""
    decoder, records = json.JSONDecoder(), []
    for line in path.read_text(encoding="utf-8").splitlines():
        text, at, values = line.strip(), 0, []
        try:
            while at < len(text):
                value, at = decoder.raw_decode(text, at)
                values.append(value)
        except json.JSONDecodeError:
            continue
        records += values
    return records


def _claude_triggers(window: int, threshold: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The context Claude Code's engine compacted at, on both engine workloads at ``window`` with
    its threshold set to ``threshold``: what it measured as the size of the next request when a
    step of it landed a checkpoint, like Claude Code's ``preTokens`` (the request it would have
    sent next), not the last prompt it sent."""
    found: list[int] = []
    step = claude_code.ClaudeCodeCompact.before_step

    def recording(self, ctx) -> None:  # type: ignore[no-untyped-def]
        tokens = ctx.usage_tokens(self.view(ctx.session))
        rewrites = sum(1 for e in ctx.session.events if e.kind == "compaction/rewrite")
        step(self, ctx)
        if tokens >= self.threshold(ctx) and sum(1 for e in ctx.session.events if e.kind == "compaction/rewrite") > rewrites:
            found.append(tokens)

    monkeypatch.setattr(claude_code.ClaudeCodeCompact, "before_step", recording)
    for workload in ("seed-coding", "thinking-tools"):
        run_case("claude-code-autocompact", EngineCase(window, workload, "lenient"), "patched", {"threshold_tokens": threshold})
    return found


def _simulated(engine: str) -> list[tuple[float, int, int]]:
    """The engine's summary calls at 128k on both engine workloads: (hit ratio, prompt of the
    conversation request before, prompt of the first conversation request after)."""
    calls = []
    for workload in ("seed-coding", "thinking-tools"):
        observations = run_case(engine, EngineCase(128_000, workload, "lenient")).observations
        for i, o in enumerate(observations):
            if o.purpose != "compaction":
                continue
            after = [p.prompt_tokens for p in observations[i + 1:] if p.purpose == "conversation"]
            before = [p.prompt_tokens for p in observations[:i] if p.purpose == "conversation"]
            calls.append((o.cached_tokens / o.prompt_tokens, before[-1], after[0] if after else 0))
    return calls


# --- Claude Code (claude-code-autocompact) --------------------------------------------------------

#: Claude Code transcripts with automatic compactions, on models Claude Code runs with a 200k
#: window unless the 1M beta is on (no ``[1m]`` model id; every logged ``preTokens`` is under
#: 200,000): (repository, commit, path, Claude Code version(s) in the file).
CLAUDE_CODE_SESSIONS = (
    ("fabien-lessirard/dotfiles", "f965d955f1b56882838b4744ca50c03fba039315",
     ".claude/projects/C--Users-acodu-dev-dashboard-mictlan/cbcb3021-e5fd-488d-9518-8b8ac8502ccb.jsonl"),
    ("fabien-lessirard/dotfiles", "f965d955f1b56882838b4744ca50c03fba039315",
     ".claude/projects/C--Users-acodu-dev-dashboard-mictlan/e739b244-acba-4c61-bb7c-897bf3a86747.jsonl"),
    ("LAF-US/IDAHO-VAULT", "c1c3fe9b6f274081e0ffbb32e541a9bf32f08892",
     ".claude/projects/c--Users-loganf-Documents-IDAHO-VAULT/05541cb5-fe43-41c9-87ef-2a6d89bba271.jsonl"),
    ("akshatairan47-dot/pv-case-review", "569d46c8bdc6c04650bb6ac25f3b426378a42ab7", "claude-code-session.jsonl"),
    ("AlexandreVassard/will-it-rain", "91d63b508d087fe2ff16aca958434960fc4d75ec", "claude.jsonl"),
    ("allym-4/test", "cf475d46db3b154091c59dc7eecf6a6e270313ef", "session-transcript.jsonl"),
    ("marot/spotter", "8cc42b0bd39d04e71e509d7d58e6782ab435329f", "test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl"),
    ("marot/spotter", "8cc42b0bd39d04e71e509d7d58e6782ab435329f", "test/fixtures/transcripts/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"),
    ("leolin84200704/posthog-impact-dashboard", "3adbaa8f38f78e94c7e1824e587ec03f6fd4db46", "claude-session.jsonl"),
)
_IDAHO = ".claude/projects/c--Users-loganf-Documents-IDAHO-VAULT/05541cb5-fe43-41c9-87ef-2a6d89bba271/subagents/"
#: Subagent transcripts (claude-haiku-4-5) of the same IDAHO-VAULT session, compacting on their own.
CLAUDE_CODE_SUBAGENTS = tuple(
    ("LAF-US/IDAHO-VAULT", "c1c3fe9b6f274081e0ffbb32e541a9bf32f08892", f"{_IDAHO}agent-{name}.jsonl")
    for name in ("a3144f31772d15038", "a6e0641177278d14c", "a6f4214ad9ef22a7f", "aaf9eed0c454c6cf1")
)
#: The transcripts of Claude Code's compaction call itself (its ``acompact`` subagent), beside
#: the sessions above: (repository, commit, path).
CLAUDE_CODE_SUMMARY_CALLS = (
    ("fabien-lessirard/dotfiles", "f965d955f1b56882838b4744ca50c03fba039315",
     ".claude/projects/C--Users-acodu-dev-dashboard-mictlan/e739b244-acba-4c61-bb7c-897bf3a86747/subagents/agent-acompact-870cd0c7b9931190.jsonl"),
    ("marot/spotter", "8cc42b0bd39d04e71e509d7d58e6782ab435329f",
     "test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl"),
    ("marot/spotter", "8cc42b0bd39d04e71e509d7d58e6782ab435329f",
     "test/fixtures/transcripts/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl"),
)
#: The window those models run with in Claude Code, and their output cap (>= 20,000 for every
#: one of them, so the reserve is the full 20,000).
CLAUDE_WINDOW, CLAUDE_CAP = 200_000, 64_000


def _usage_total(usage: dict) -> int:
    return usage.get("input_tokens", 0) + usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)


def _claude_compactions(path: Path) -> list[tuple[str, int, int | None, int | None, str | None]]:
    """Each compact boundary: (trigger, preTokens, prompt and cache read of the first request
    after, the model of the last request before). The first request after is the first main-chain
    response (not a sidechain's) logged later than the boundary with a usage over 0."""
    records = _records(path)
    found, model = [], None
    for i, record in enumerate(records):
        message = record.get("message") or {}
        if record.get("type") == "assistant" and not record.get("isSidechain") and message.get("model", "<synthetic>") != "<synthetic>":
            model = message["model"]
        if record.get("subtype") != "compact_boundary":
            continue
        meta, at = record["compactMetadata"], record["timestamp"]
        after = next((r["message"]["usage"] for r in records[i + 1:]
                      if r.get("type") == "assistant" and not r.get("isSidechain") and r.get("timestamp", "") > at
                      and _usage_total(r["message"].get("usage") or {}) > 0), None)
        found.append((meta["trigger"], meta["preTokens"],
                      _usage_total(after) if after else None, after.get("cache_read_input_tokens") if after else None, model))
    return found


def _claude(sessions, tmp_path: Path) -> list[tuple[str, int, int | None, int | None, str | None]]:
    return [c for repo, commit, path in sessions for c in _claude_compactions(_show(repo, commit, path, tmp_path))]


def test_claude_code_auto_compactions_fire_where_the_engine_threshold_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    threshold = autocompact_threshold(CLAUDE_WINDOW, CLAUDE_CAP)
    assert threshold == 167_000
    main = sorted(pre for trigger, pre, _, _, _ in _claude(CLAUDE_CODE_SESSIONS, tmp_path) if trigger == "auto")
    # 17 automatic compactions in 9 main-session transcripts (Claude Code 2.1.22 to 2.1.185):
    # every one at or over the engine's threshold and under the window, 12 of them within 3,000
    # tokens of it (preTokens counts what the compacted request would have sent, so one step's
    # new tool results can overshoot: at most 8,199 here).
    assert len(main) == 17
    assert main[0] >= threshold and main[-1] < CLAUDE_WINDOW
    assert (main[0], main[-1]) == (167_094, 175_199)
    assert sum(pre - threshold < 3_000 for pre in main) == 12
    # Subagent transcripts (claude-haiku-4-5, Claude Code 2.1.92): 9 boundaries, all over the
    # threshold too, by 10,860 to 24,997 tokens; no request is logged after any of them, so what
    # they kept is not known and they are left out of the verdict.
    sub = _claude(CLAUDE_CODE_SUBAGENTS, tmp_path)
    pre = sorted(p for trigger, p, _, _, _ in sub if trigger == "auto")
    assert len(pre) == 9 and pre[0] - threshold == 10_860 and pre[-1] - threshold == 24_997
    assert all(after is None for _, _, after, _, _ in sub)
    # The engine agrees, measured like preTokens (its own count of the request it would send
    # next when it compacted, not the last prompt it sent): run at the real 200k window with the
    # threshold 2.1.x used (the workloads' own output caps put it elsewhere: 174,500 on
    # seed-coding, whose cap is window/16 = 12,500, and 178,808 on thinking-tools; with 167,000 the
    # engine compacts at 167,013-172,739), it compacts at or over the threshold and, as the 17 real
    # ones, short of the window less the output reserve (20,000: none near the window), a step's
    # new tool results overshooting the threshold as Claude Code's do.
    limit = CLAUDE_WINDOW - 20_000
    assert main[-1] < limit
    engine = _claude_triggers(CLAUDE_WINDOW, threshold, monkeypatch)
    assert engine and all(threshold <= at < limit for at in engine)


def test_claude_code_summary_call_is_warm_as_the_engine_simulates(tmp_path: Path) -> None:
    calls = []
    for repo, commit, path in CLAUDE_CODE_SUMMARY_CALLS:
        audit = run_audit([_show(repo, commit, path, tmp_path)])
        calls += [(c.verdict, c.cache_read, c.prompt) for c in audit.compactions if c.kind == "call"]
    # The audit judges each logged compaction call warm: it replayed the session's cached prefix.
    assert [v for v, _, _ in calls] == ["warm"] * 3
    ratios = sorted(round(read / prompt, 4) for _, read, prompt in calls)
    assert ratios == [0.95, 0.9626, 0.9853]  # 164,830 of 173,514 (94.996%), 163,062 of 169,397, 166,758 of 169,248
    # The engine's summary calls (128k, both workloads) are warm too: each reads at least the
    # share of its prompt the least warm real call read.
    simulated = _simulated("claude-code-autocompact")
    assert simulated and min(hit for hit, _, _ in simulated) >= ratios[0]


def _first_after_rewrite(engine: str, window: int) -> list[tuple[int, int]]:
    """The engine's first conversation request after each checkpoint it landed, on both engine
    workloads at ``window``: (prompt, read from cache)."""
    return [(o.prompt_tokens, o.cached_tokens)
            for workload in ("seed-coding", "thinking-tools")
            for o in run_case(engine, EngineCase(window, workload, "lenient")).observations
            if o.purpose == "conversation" and "checkpoint" in o.rewrites_since_previous]


def test_claude_code_keeps_what_the_real_sessions_keep_after_a_compaction(tmp_path: Path) -> None:
    found = _claude(CLAUDE_CODE_SESSIONS, tmp_path)
    after = [(prompt, read, model) for trigger, _, prompt, read, model in found if trigger == "auto" and prompt]
    # 16 of the 17 have a request after. In 3 (IDAHO-VAULT, claude-haiku-4-5, within two minutes)
    # the context did not shrink: the next request is 167,185-168,155 tokens, 159,262 read.
    stuck = sorted(prompt for prompt, read, model in after if prompt > 150_000)
    assert stuck == [167_185, 167_796, 168_155]
    assert {model for prompt, _, model in after if prompt > 150_000} == {"claude-haiku-4-5-20251001"}
    # The other 13: 29,644 to 72,022 tokens, 0 to 70,762 of them read from cache (the system
    # prompt and tools, 11-35k, and where a boundary opened a resumed file, more).
    shrunk = sorted(prompt for prompt, _, _ in after if prompt <= 150_000)
    assert len(shrunk) == 13 and (shrunk[0], shrunk[-1]) == (29_644, 72_022)
    # Beyond what they read from cache they carry 1,260 to 42,072 tokens (10,393 or more in 12 of
    # the 13): the summary, the files re-read and, from 2.1.185, the newest messages kept.
    beyond = sorted(prompt - read for prompt, read, _ in after if prompt <= 150_000)
    assert (beyond[0], beyond[-1]) == (1_260, 42_072) and sum(b >= 10_000 for b in beyond) == 12
    # The engine at the real sessions' 200k window (the summary, the round its precomputed call
    # left out and every message since, and the files re-read) agrees in size: each of its first
    # requests after is within the 13 real ones, both in all it sends and in what it carries
    # beyond the cache (the summary alone, which the engine once kept, was far below them).
    engine = _first_after_rewrite("claude-code-autocompact", CLAUDE_WINDOW)
    assert engine and all(shrunk[0] < p < shrunk[-1] for p, _ in engine)
    assert all(beyond[0] < p - read < beyond[-1] for p, read in engine)
    # What Claude Code itself logged of the context after (6 boundaries give postTokens), and the
    # recent messages 2.1.185 keeps as they were (``preservedMessages``, 3 boundaries).
    records = [(r, _records(_show(repo, commit, path, tmp_path))) for repo, commit, path in CLAUDE_CODE_SESSIONS
               for r in _records(_show(repo, commit, path, tmp_path)) if r.get("subtype") == "compact_boundary"]
    metas = [r["compactMetadata"] for r, _ in records]
    assert sorted(m["postTokens"] for m in metas if "postTokens" in m) == [6_591, 6_977, 7_918, 8_526, 13_546, 14_097]
    assert sorted(len(m["preservedMessages"]["uuids"]) for m in metas if "preservedMessages" in m) == [19, 27, 29]
    # Each 2.1.185 segment opens on a model reply (an API round: the engine's unit of
    # preserve_recent). The context before that reply was 150,538, 152,943 and 158,219 tokens, and
    # with it 160,595, 153,223 and 158,700: the engine's precompute point, 153,000 (85% of
    # 180,000), falls within the first two; the third segment opens later, on a turn's last
    # reply, six requests after the context passed 153,000, which the re-arm rule of the
    # binaries (and the engine) does not explain; a failed first call would.
    heads = []
    for boundary, session in records:
        segment = boundary["compactMetadata"].get("preservedSegment")
        if segment is None:
            continue
        at = next(i for i, r in enumerate(session) if r.get("uuid") == segment["headUuid"])
        assert session[at]["type"] == "assistant"
        before = [r for r in session[:at] if r.get("type") == "assistant" and not r.get("isSidechain")
                  and _usage_total(r["message"].get("usage") or {}) > 0]
        usage = before[-1]["message"]["usage"]
        heads.append(_usage_total(usage) + usage.get("output_tokens", 0))
    assert len(heads) == 3 and sorted(heads)[:2] == [150_538, 152_943]


def _claude_turn_events(path: Path, sidechain: bool) -> list[tuple[str, int]]:
    """A transcript as the thrash stop counts it: ``("boundary", preTokens)``, ``("request",
    prompt)`` once per response (its records share a message id), ``("stop", 0)`` for Claude
    Code's own "Autocompact is thrashing" message (no request sent), ``("prompt", 0)`` for a
    message the user typed; main-chain records only, or with ``sidechain`` a subagent's."""
    events, seen = [], set()
    for record in _records(path):
        message = record.get("message") or {}
        if bool(record.get("isSidechain")) is not sidechain:
            continue
        if record.get("subtype") == "compact_boundary":
            events.append(("boundary", record["compactMetadata"]["preTokens"]))
        elif record.get("type") == "assistant" and message.get("id") not in seen:
            seen.add(message.get("id"))
            text = "".join(b.get("text", "") for b in message.get("content") or [] if isinstance(b, dict))
            if message.get("model") == "<synthetic>" and text.startswith("Autocompact is thrashing"):
                events.append(("stop", _usage_total(message.get("usage") or {})))
            elif _usage_total(message.get("usage") or {}) > 0:
                events.append(("request", _usage_total(message["usage"])))
        elif (record.get("type") == "user" and isinstance(message.get("content"), str) and not record.get("isMeta")
              and not record.get("isCompactSummary") and not message["content"].startswith("<")):
            events.append(("prompt", 0))
    return events


def test_claude_code_stops_after_three_rapid_refills_in_a_turn_as_the_engine_counts(tmp_path: Path) -> None:
    # Claude Code 2.1.92's subagents in the IDAHO-VAULT session (claude-haiku-4-5): after every
    # compaction the very next request is over the threshold again (a rapid refill). The one
    # that compacts three times stops at its 4th trigger with Claude Code's own error message,
    # no request sent: 3 refills within 3 requests of the previous compaction, in one turn.
    subs = {path.rsplit("-", 1)[-1]: _claude_turn_events(_show(repo, commit, path, tmp_path), sidechain=True)
            for repo, commit, path in CLAUDE_CODE_SUBAGENTS}
    kinds = {name: [kind for kind, _ in events] for name, events in subs.items()}
    assert kinds["a6f4214ad9ef22a7f.jsonl"] == ["prompt", "request", "boundary", "request", "boundary", "request",
                                                "boundary", "request", "stop"]
    assert [v for k, v in subs["a6f4214ad9ef22a7f.jsonl"] if k == "stop"] == [0]
    # The other three end after two compactions (their task ended); none stops.
    assert sorted(k.count("boundary") for k in kinds.values()) == [2, 2, 2, 3]
    refills = [events[i + 1][1] for events in subs.values() for i, (k, _) in enumerate(events) if k == "boundary"]
    assert len(refills) == 9 and min(refills) >= 178_506 > 167_000
    defaults = claude_code.DEFAULTS
    assert (defaults["thrash_refills"], defaults["thrash_turns"]) == (3, 3)
    # The main session (2.1.92, claude-haiku-4-5): two rapid refills in one turn, then the user's
    # next prompt, and a 4th compaction in a row without a stop: the count starts over each turn.
    idaho = next(session for session in CLAUDE_CODE_SESSIONS if session[0] == "LAF-US/IDAHO-VAULT")
    main = _claude_turn_events(_show(*idaho, tmp_path), sidechain=False)
    first = next(i for i, (kind, _) in enumerate(main) if kind == "boundary")
    assert [kind for kind, _ in main[first:first + 8]] == ["boundary", "request", "boundary", "request", "boundary",
                                                          "request", "prompt", "boundary"]
    assert "stop" not in [kind for kind, _ in main]


# --- pi (pi-compaction) -------------------------------------------------------------------------

#: pi sessions of pi's author on claude-opus-4-5, whose window pi's own model registry gives as
#: 200,000 (``packages/ai/src/models.generated.ts`` at the session's commit ``705ba5d``).
PI_OPUS_45 = (
    ("badlogic/pi-mono", "705ba5d4f2637fb66b6ab933438a8b68eaa8e0e9", "compact.jsonl"),
    ("f5-sales-demo/xcsh", "a3dc8b7e4636fa49f5d3601e266db10b51f9983d", "session.jsonl"),
)


def _pi_compactions(path: Path) -> list[tuple[int, int, bool, int | None, int | None]]:
    """Each compaction entry: (tokensBefore, the last response's total, whether it keeps nothing
    (session format 1: its ``firstKeptEntryIndex`` is its own index or past it), the first request
    after and its cache read)."""
    records = _records(path)
    found, last = [], None
    for i, record in enumerate(records):
        message = record.get("message") or {}
        if message.get("role") == "assistant" and message.get("usage"):
            last = message["usage"]
        if record.get("type") != "compaction":
            continue
        after = next((r["message"]["usage"] for r in records[i + 1:]
                      if (r.get("message") or {}).get("role") == "assistant" and r["message"].get("usage")), None)
        found.append((record["tokensBefore"], last["totalTokens"], record.get("firstKeptEntryIndex", -1) >= i,
                      after["input"] + after["cacheRead"] + after["cacheWrite"] if after else None,
                      after["cacheRead"] if after else None))
    return found


def test_pi_compacts_over_window_less_reserve_as_the_engine_does(tmp_path: Path) -> None:
    engine = PiCompaction(200_000)
    threshold = engine.window - engine.reserve
    found = [c for repo, commit, path in PI_OPUS_45 for c in _pi_compactions(_show(repo, commit, path, tmp_path))]
    # Three compactions (the second of compact.jsonl on its last line, run together with the last
    # reply: a newline lost). tokensBefore is the last response's total each time.
    assert [(before, total, nothing) for before, total, nothing, _, _ in found] == [
        (184_525, 184_525, False), (131_140, 131_140, True), (186_045, 186_045, False)]
    # Two are over 183,616, by 909 and 2,429: pi's automatic trigger (shouldCompact). The third is
    # 52,476 under it, so pi's trigger did not fire it: it was run by hand (/compact), and keeps
    # nothing (firstKeptEntryIndex past every entry), as the custom-compaction.ts hook example at
    # that commit does; it is left out of the trigger's check.
    automatic = [before for before, _, nothing, _, _ in found if before > threshold]
    assert [before - threshold for before in automatic] == [909, 2_429]
    assert [threshold - before for before, _, nothing, _, _ in found if nothing] == [52_476]
    # The first request after (one of the three has one: the other two end their files): 32,562
    # tokens, none read from cache, against the engine's keep_recent_tokens (20,000) plus summary;
    # the engine's first request after sends 20,978-25,713 tokens at 128k.
    assert [(size, read) for _, _, _, size, read in found if size] == [(32_562, 0)]
    assert engine.keep_recent == 20_000
    # Both are of the size the engine keeps: its 20,000 recent tokens and more (cut at a message
    # boundary, plus the summary and the system prompt), under twice that; the engine's from its
    # own runs (128k, both workloads).
    kept = [p for p, _ in _first_after_rewrite("pi-compaction", 128_000)]
    assert kept and all(engine.keep_recent <= size < 2 * engine.keep_recent for size in [*kept, 32_562])
    # pi's summary call is not in its session file; the engine's is cold (a text transcript under
    # its own system prompt), which the cold first request after does not contradict.
    assert max(hit for hit, _, _ in _simulated("pi-compaction")) < 0.01


# --- Codex (codex-compact) ----------------------------------------------------------------------

#: A Codex 0.122.0 session (gpt-5.4, 2026-04-21) with one automatic compaction; its
#: ``token_count`` events give ``model_context_window`` = 258,400.
CODEX_SESSION = ("swarnasn29/soulpass", "12c056d3476363d4c491ccb52716328467ff5f66", "codex-session.jsonl")


def test_codex_compaction_is_remote_and_fires_over_ninety_percent_of_the_logged_window(tmp_path: Path) -> None:
    records = _records(_show(*CODEX_SESSION, tmp_path))
    counts = [(i, r["payload"]) for i, r in enumerate(records)
              if r.get("type") == "event_msg" and r["payload"].get("type") == "token_count" and r["payload"].get("info")]
    (at,) = [i for i, r in enumerate(records) if r.get("type") == "compacted"]
    before = [p for i, p in counts if i < at][-1]["info"]
    after = [p for i, p in counts if i > at and p["info"]["last_token_usage"]["input_tokens"]][0]["info"]
    window = before["model_context_window"]
    assert window == 258_400
    limit = CodexCompact(window).limit
    assert limit == 232_560
    # The last request before: 234,537 prompt + 218 output = 234,755 tokens, 2,195 over the engine's limit.
    assert before["last_token_usage"]["total_tokens"] == 234_755 >= limit
    # The compaction is Codex's remote one (no local summary message: an empty ``message`` and
    # the server's ``replacement_history``), the engine's ``mode = "remote"``.
    compacted = records[at]["payload"]
    assert compacted["message"] == "" and compacted["replacement_history"]
    # The call itself is not in the log: the running totals are the same after it as before, so
    # its tokens (and whether any were read from cache) cannot be checked.
    assert [p for i, p in counts if i > at][0]["info"]["total_token_usage"] == before["total_token_usage"]
    # The replacement history: the 8 earlier user messages, Codex's initial context (developer
    # message, environment context) put back before the last user message, that message, and the
    # compaction item last. The engine's remote mode keeps the same order (user messages, then
    # the item; run below on a session of these user messages), its initial context being the
    # routed system prompt and tools, which stay first.
    history = compacted["replacement_history"]
    shape = [item.get("role", item["type"]) for item in history]
    assert shape == ["user"] * 8 + ["developer", "user", "user", "compaction"]
    assert history[9]["content"][0]["text"].startswith("<environment_context>")
    # Every real user message of the session is kept (9, about 1,000 tokens at 4 characters a
    # token): under both the local 20,000 and the remote 64,000 budget, so the budget is not
    # decided by this session.
    users = [r["payload"] for r in records[:at] if r.get("type") == "response_item"
             and r["payload"].get("role") == "user"
             and not r["payload"]["content"][0]["text"].startswith(("<environment_context>", "<turn_aborted>"))]
    kept = [item for i, item in enumerate(history) if item.get("role") == "user" and i != 9]
    assert [u["content"] for u in users] == [k["content"] for k in kept]
    assert sum(len(u["content"][0]["text"]) for u in users) // 4 < 20_000 < 64_000
    # The engine's remote mode on a session of the same shape: these 9 user messages, each with
    # tool steps after it, over the limit at the logged window. Its new history is the real one
    # without Codex's initial context: the user messages in order, then the compaction item.
    texts = [u["content"][0]["text"] for u in users]
    session = session_with([(text, 52) for text in texts])
    engine = CodexCompact(window, mode="remote")
    engine.before_step(context(session, window))
    view = engine.view(session)
    assert [m.text() for m in view[:-1]] == texts and is_item(view[-1])
    real = [item for item in history if item.get("role") != "developer" and not (
        item.get("role") == "user" and item["content"][0]["text"].startswith("<environment_context>"))]
    assert [item.get("role", item["type"]) for item in real] == ["user"] * len(texts) + ["compaction"]
    # The first request after: 22,361 tokens (11,136 read from cache, under half): the history
    # now opens on an old user message where the cached one had the developer message, so only
    # the instructions and tools can match (the session's first request, on the same head,
    # read 11,648 of 18,405).
    assert (after["last_token_usage"]["input_tokens"], after["last_token_usage"]["cached_input_tokens"]) == (22_361, 11_136)
    first = [p for i, p in counts if p["info"]["last_token_usage"]["input_tokens"]][0]["info"]["last_token_usage"]
    assert (first["input_tokens"], first["cached_input_tokens"]) == (18_405, 11_648)


# --- OpenCode (opencode-summary) ----------------------------------------------------------------

#: OpenCode sessions their authors exported, with summary calls in them.
OPENCODE_SESSIONS = (
    ("salmankalam/uicomponents", "2451fa76828e6fbccdd17b882dc55a0ea54728a8", "session-export.json"),
    ("klan1/k1.lib-bootstrap", "555fdb426fa81f5a5befd6b417cf3a594e9232e1", "session-export.json"),
)


def test_opencode_summary_calls_are_cold_as_the_engine_simulates(tmp_path: Path) -> None:
    calls = []
    for repo, commit, path in OPENCODE_SESSIONS:
        audit = run_audit([_show(repo, commit, path, tmp_path)])
        calls += [(c.verdict, c.cache_read, c.expected_cache_read, c.prompt) for c in audit.compactions if c.kind == "call"]
    # Three summary calls, each reading nothing of the 104,832-121,984 tokens the session had cached.
    assert calls == [
        ("cold", 0, 104_832, 104_846),
        ("cold", 0, 106_496, 106_516),
        ("cold", 0, 121_984, 122_063),
    ]
    assert max(hit for hit, _, _ in _simulated("opencode-summary")) < 0.01


# --- OpenClaw (openclaw-compaction) -------------------------------------------------------------

#: An OpenClaw home (2026-03-05/06, deepseek-chat through DeepSeek's OpenAI-compatible API) whose
#: ``openclaw.json`` at the same commit declares the model's ``contextWindow`` = 128,000 and
#: compaction mode ``safeguard``.
OPENCLAW_HOME = ("Musk-fanX/openclaw-backup", "bd51e967f196b87f1e006258a276a4f18397d395")
OPENCLAW_SESSIONS = ("agents/main/sessions/676ff86e-7673-4625-92e4-a7b5a6454395.jsonl",
                     "agents/main/sessions/d27ecd5a-45f9-41a3-bad1-ddef6a3c79fc.jsonl")


def test_openclaw_compacts_at_the_window_less_its_reserve_floor_or_on_overflow(tmp_path: Path) -> None:
    repo, commit = OPENCLAW_HOME
    config = json.loads(_show(repo, commit, "openclaw.json", tmp_path).read_text(encoding="utf-8"))
    (window,) = {m["contextWindow"] for p in config["models"]["providers"].values() for m in p["models"]}
    assert window == 128_000
    engine = OpenClawCompaction(window, dict(OPENCLAW_DEFAULTS))
    threshold = engine.window - engine.reserve
    assert threshold == 108_000
    found = []
    for path in OPENCLAW_SESSIONS:
        records = _records(_show(repo, commit, path, tmp_path))
        last = None
        for i, record in enumerate(records):
            message = record.get("message") or {}
            if message.get("role") == "assistant" and message.get("usage"):
                last = message
            if record.get("type") == "compaction":
                after = next(r["message"]["usage"] for r in records[i + 1:]
                             if (r.get("message") or {}).get("role") == "assistant" and r["message"].get("usage"))
                found.append((record["tokensBefore"], last.get("stopReason"), after["input"] + after["cacheRead"], after["cacheRead"]))
    # Five compactions. Two after a normal reply, at 110,305 and 108,889 tokens: over the engine's
    # threshold (window - reserve floor 20,000) by 2,305 and 889.
    normal = [(before, size) for before, reason, size, _ in found if reason == "stop"]
    assert normal == [(110_305, 35_623), (108_889, 58_741)]
    assert all(before > threshold for before, _ in normal)
    # Three after an errored response, at 129,738-167,334 tokens: over the window itself, so
    # compactions on overflow, which pi (and so OpenClaw) runs and the engine, checking before
    # each step, never needs.
    overflow = sorted(before for before, reason, _, _ in found if reason == "error")
    assert overflow == [129_738, 146_145, 167_334] and overflow[0] > window
    # The first request after: 20,745-58,741 tokens, 18,112-22,016 read from cache (the system
    # prompt and tools survive). The summary call is not in the session file.
    assert sorted(size for _, _, size, _ in found) == [20_745, 23_601, 23_659, 35_623, 58_741]
    assert sorted(read for _, _, _, read in found) == [18_112, 21_696, 21_952, 21_952, 22_016]


# --- Roo Code and Kilo Code (roo-condense) ------------------------------------------------------

#: Task folders with a ``condense_context`` message: Roo Code fixtures of jsboige/jsboige-mcp-servers
#: (claude-sonnet-4 on Anthropic, 2025-09; anthropic/claude-sonnet-4 on OpenRouter, 2025-09-25) and
#: a Kilo Code task of gao51-qw/n8nworkflow.com (Kilo's gateway, 2026-01-12).
_ROO_FIXTURES = "servers/roo-state-manager/tests/fixtures/"
CONDENSE_TASKS = (
    ("jsboige/jsboige-mcp-servers", "8b9ac085876ae7701538652c6f216e7798412f7f",
     f"{_ROO_FIXTURES}real-tasks/ac8aa7b4-319c-4925-a139-4f4adca81921/ui_messages.json"),
    ("jsboige/jsboige-mcp-servers", "8b9ac085876ae7701538652c6f216e7798412f7f",
     f"{_ROO_FIXTURES}controlled-hierarchy/e73ea764-4971-4adb-9197-52c2f8ede8ef/ui_messages.json"),
    ("gao51-qw/n8nworkflow.com", "44161b318c9ba9a1fc15196d0cdea24868163706",
     "exports/kilo_tasks/3c1ae0e4-74ea-46a0-98e9-b9a020fb28fd/ui_messages.json"),
)


def _condenses(path: Path) -> list[tuple[int, int, float, int | None]]:
    """Each condense: (prevContextTokens, newContextTokens, its cost, tokensIn of the last request before it)."""
    messages = json.loads(path.read_text(encoding="utf-8"))
    found, last = [], None
    for message in messages:
        if message.get("say") == "api_req_started":
            last = json.loads(message.get("text") or "{}")
        condense = message.get("contextCondense")
        if condense:
            before = None if last is None else last.get("tokensIn", 0) + (
                last.get("cacheReads", 0) + last.get("cacheWrites", 0) if last.get("apiProtocol") == "anthropic" else 0)
            found.append((condense["prevContextTokens"], condense["newContextTokens"], condense["cost"], before))
    return found


def test_roo_and_kilo_condenses_are_logged_with_the_call_they_were_made_for(tmp_path: Path) -> None:
    found = [c for repo, commit, path in CONDENSE_TASKS for c in _condenses(_show(repo, commit, path, tmp_path))]
    assert [(prev, new) for prev, new, _, _ in found] == [(151_255, 73_723), (168_575, 114_453), (146_958, 76_206), (36_181, 5_795)]
    # The api_req_started entry just before each Roo condense (71,331, 97,412 and 62,927 tokens)
    # is the call the condense was made for, logged before it ran: the first call AFTER the
    # condense, not the last before it (the next test reads the counts by Roo 3.28's rules).
    # Kilo's (36,181) follows its last request (35,601): a manual condense, nothing pending.
    assert [before for _, _, _, before in found] == [71_331, 97_412, 62_927, 35_601]
    # The summary calls are billed ($0.12-0.14 on Roo, 0 on Kilo's free route) but not logged as
    # requests, so warm or cold cannot be told from them.
    assert [round(cost, 3) for _, _, cost, _ in found] == [0.134, 0.122, 0.143, 0]


def _roo_calls(ui: list[dict]) -> list[tuple[int, int, int, int, int, str]]:
    """Every api_req_started entry that carries a count: (its index in the file, prompt, output,
    read, Roo's own context count of it, the request text). Roo's count (``getApiMetrics``,
    3.28) is tokensIn + tokensOut, plus the reads and writes on the ``anthropic`` protocol (whose
    tokensIn leaves them out)."""
    calls = []
    for index, entry in enumerate(ui):
        if entry.get("say") != "api_req_started":
            continue
        info = json.loads(entry.get("text") or "{}")
        if not any(info.get(k) for k in ("tokensIn", "tokensOut", "cacheReads", "cacheWrites")):
            continue
        cached = info.get("cacheReads", 0) + info.get("cacheWrites", 0) if info.get("apiProtocol") == "anthropic" else 0
        prompt = info.get("tokensIn", 0) + cached
        calls.append((index, prompt, info.get("tokensOut", 0), info.get("cacheReads", 0), prompt + info.get("tokensOut", 0),
                      info.get("request", "")))
    return calls


def _roo_text(message: dict) -> str:
    """A history message's text: its string content, or its text blocks joined as Roo's request text joins them."""
    content = message["content"]
    return content if isinstance(content, str) else "\n\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def test_roo_and_kilo_condenses_read_by_roo_3_28_s_rules(tmp_path: Path) -> None:
    """Roo Code 3.28 (September 2025, the release these Roo tasks ran) read against its logs: what
    the logged counts are, what was kept, and what the trigger can and cannot be."""
    found = []  # (task, condense's index, prev, new, calls before it, calls after it)
    uis, histories = {}, {}
    for repo, commit, path in CONDENSE_TASKS:
        ui = json.loads(_show(repo, commit, path, tmp_path).read_text(encoding="utf-8"))
        task = path.split("/")[-2][:8]
        uis[task] = ui
        histories[task] = json.loads(_show(repo, commit, path.replace("ui_messages", "api_conversation_history"), tmp_path)
                                     .read_text(encoding="utf-8"))
        calls = _roo_calls(ui)
        for index, entry in enumerate(ui):
            condense = entry.get("contextCondense")
            if condense:
                found.append((task, index, condense["prevContextTokens"], condense["newContextTokens"],
                              [c for c in calls if c[0] < index], [c for c in calls if c[0] > index]))
    assert [(task, prev) for task, _, prev, _, _, _ in found] == [
        ("ac8aa7b4", 151_255), ("e73ea764", 168_575), ("e73ea764", 146_958), ("3c1ae0e4", 36_181)]

    # Roo writes a call's api_req_started (a placeholder, counted when the reply ends) before it
    # condenses for that call: the entry just before each of Roo's condenses is the first call
    # AFTER it (prompt 71,331, 97,412, 62,927 tokens, near newContextTokens), and Roo's count
    # (``prevContextTokens``) is the call before that one's prompt + output, plus its handler's
    # count of the message pending: 36,352 (Anthropic's token count of a 101,320-character MCP
    # result), 16,044 and 2,637 on OpenRouter. (OpenRouter's is Roo's ``tiktoken``: o200k_base
    # tokens of the request text times 1.5, rounded up: 10,695 and 1,757 tokens, 16,043 and 2,636,
    # so both counts are reproduced to one token; checked with tiktoken, not a dependency here.)
    roo = [f for f in found if f[0] != "3c1ae0e4"]
    assert [before[-1][1] for *_, before, _ in roo] == [71_331, 97_412, 62_927]  # the placeholder, filled later
    assert [new for _, _, _, new, _, _ in roo] == [73_723, 114_453, 76_206]
    assert [prev - before[-2][4] for _, _, prev, _, before, _ in roo] == [36_352, 16_044, 2_637]
    assert [len(before[-1][5]) for *_, before, _ in roo] == [101_320, 34_041, 6_485]
    # Kilo's is the last call's prompt + output exactly (35,601 + 580): nothing pending. It came
    # 2.6 minutes after the task's completion, before the user's next message and with no call
    # started: Roo's manual condense (the button, ``condenseContext``), not the automatic one.
    (_, index, prev, _, before, after), = [f for f in found if f[0] == "3c1ae0e4"]
    assert prev == before[-1][4] == 35_601 + 580
    kilo = uis["3c1ae0e4"]
    assert kilo[index - 1].get("ask") == "completion_result" and kilo[index + 1].get("say") == "user_feedback"
    assert (kilo[index]["ts"] - kilo[index - 1]["ts"]) // 1000 == 158

    # What was kept: the history beside each task is [the task, the summary (an assistant
    # message, isSummary, time-stamped as the first kept message), the last 3 messages]: Roo
    # 3.28's N_MESSAGES_TO_KEEP, not the fresh start of later releases. The last kept one is the
    # message pending at the condense (the request text of the call after it). Kilo (2026-01)
    # keeps the same (the condensed messages stay, tagged ``condenseParent``).
    for task in ("ac8aa7b4", "e73ea764"):
        history, last = histories[task], [f for f in found if f[0] == task][-1]
        assert history[0]["role"] == "user" and _roo_text(history[0]).startswith("<task>")
        assert history[1]["role"] == "assistant" and history[1].get("isSummary")
        assert _roo_text(history[1]).strip() == uis[task][last[1]]["contextCondense"]["summary"].strip()
        assert history[1]["ts"] == history[2]["ts"] and [m["role"] for m in history[2:5]] == ["user", "assistant", "user"]
        assert _roo_text(history[4]) == last[4][-1][5]
    kept = [m for m in histories["3c1ae0e4"] if "condenseParent" not in m]
    assert [m["role"] for m in kept[:5]] == ["user", "assistant", "assistant", "user", "assistant"]
    assert kept[1].get("isSummary") and len(histories["3c1ae0e4"]) - len(kept) == 10

    # The trigger. At a 200k window (claude-sonnet-4 without the 1M beta: the window is not in
    # the folders), Roo 3.28 condenses past allowed = 180,000 - 16,384 (the default reserve with
    # the thinking budget on, as the tasks' reasoning shows) = 163,616, or at
    # autoCondenseContextPercent (default 100). Only
    # 168,575 is past it; 151,255 and 146,958 need a threshold under 100% (75.6% and 73.5% of
    # 200k), so the user had set one. But e73ea764 sent 152,261 tokens (Roo's count before it,
    # rebuilt as above: 119,994 + 35,454 = 155,448) without condensing, 17 minutes before
    # condensing at 168,575 and then at 146,958: one fixed threshold and window do not fit the
    # whole task (a setting, profile or window changed at the pause). After the pause it fits
    # anything in (144,011, 146,958]: the largest count that did not condense is 127,459 + 287 +
    # 16,265 (before call 281). So the percent is not decided; the count it is compared with is.
    e73 = _roo_calls(uis["e73ea764"])
    first_condense = [f for f in found if f[0] == "e73ea764"][0][1]
    assert max(c[1] for c in e73 if c[0] < first_condense) == 152_261 > 146_958
    assert [(c[1], c[2]) for c in e73 if c[0] in (212, 225, 275)] == [(119_628, 366), (152_261, 270), (127_459, 287)]
    assert 146_958 < 163_616 and 151_255 < 163_616 < 168_575

    # The first call after reads the system prompt only (32,273 of 71,331 on Anthropic, 54,211
    # of 62,927 on OpenRouter; 0 after the 17-minute pause): what follows it (the task message,
    # then the new summary) is sent for the first time.
    assert [before[-1][3] for *_, before, _ in roo] == [32_273, 0, 54_211]


def test_roo_condense_release_3_28_at_128k_sends_the_first_message_the_summary_and_the_last_3() -> None:
    """The engine's side of the Roo table: ``release = "3.28"`` on both engine workloads at 128k."""
    calls, after = [], []
    for workload in ("seed-coding", "thinking-tools"):
        observations = run_case("roo-condense", EngineCase(128_000, workload, "lenient"), config={"release": "3.28"}).observations
        for i, o in enumerate(observations):
            if o.purpose == "compaction":
                calls.append((o.cached_tokens / o.prompt_tokens, o.prompt_tokens - o.cached_tokens))
                after.append(next(p.prompt_tokens for p in observations[i + 1:] if p.purpose == "conversation"))
    # 3 cold summary calls a workload (0.0-0.6% read), then 6,114-8,791 tokens: the first message,
    # the summary and the last 3 messages (3.52's fresh start sends 219 and 2,239).
    assert len(calls) == 6 and max(hit for hit, _ in calls) < 0.007
    assert (min(u for _, u in calls), max(u for _, u in calls)) == (99_829, 103_125)
    assert (min(after), max(after)) == (6_114, 8_791)
