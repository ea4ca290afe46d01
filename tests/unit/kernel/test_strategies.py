"""The strategy engines (kernel/strategies/): each one's trigger and its effect on the messages.

Each engine is driven by hand on a built session, through a step context whose client records
the summary calls and whose clock the test moves, so a trigger is pinned to the token (or the
second) and the view after it is asserted whole.
"""

from __future__ import annotations

import ast
import base64
from pathlib import Path

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from prefixbench.kernel import EngineOptions, Header, Message, Reasoning, Reply, Session, StepContext, Text, ToolCall, user_text
from prefixbench.kernel.loading import installed_engines, load_engine
from prefixbench.kernel.model import ModelInfo
from prefixbench.kernel.session import tool_result_message
from prefixbench.kernel.strategies import (
    claude_code,
    context_editing,
    continue_cli,
    goose,
    hermes,
    no_compaction,
    openai_compaction,
    openclaw,
    sliding_window,
)
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Envelope, ToolSchema

ROOT = Path(__file__).resolve().parents[3]
ENGINES = (
    "no-compaction", "sliding-window", "claude-code-autocompact", "claude-code-idle-compact",
    "anthropic-context-editing", "openai-server-compaction", "goose-auto-compact", "continue-cli-compact",
    "hermes-compress", "openclaw-compaction",
)
HEADER = Header(Envelope("acme", "m1", "high"), "sys", (ToolSchema.make("read_file", "Read a file.", {"type": "object"}),))


class Harness:
    """A session, a step context on it, the requests its client received and a movable clock."""

    def __init__(self, window: int = 10_000, cap: int = 500) -> None:
        self.session = Session("t")
        self.session.log_header(HEADER)
        self.sent: list = []
        self.now = 0
        self.info = ModelInfo("acme", "m1", window, cap, "high")
        self.ctx = StepContext(self.session, lambda p, m: self.info, self.client, window, HEADER, lambda: self.now)

    def client(self, request):
        self.sent.append(request)
        return Reply((Text(f"summary {len(self.sent)}"),))

    def user(self, text: str = "task") -> None:
        self.session.append("user/message", user_text(text))

    def step(self, n: int, chars: int = 400, tool: str = "read_file", reasoning: str | None = None) -> None:
        blocks = (Reasoning(reasoning),) if reasoning else ()
        call = ToolCall(f"c{n}", tool, f'{{"n":{n}}}')
        self.session.append("assistant/message", Message("assistant", (*blocks, Text(f"step {n}"), call)))
        self.session.append("tool/result", tool_result_message(f"c{n}", chr(97 + n % 26) * chars))

    def rewrites(self) -> list[str]:
        return [e.rewrite_kind for e in self.session.events if e.kind == "compaction/rewrite"]

    def tokens(self, engine) -> int:
        return self.ctx.measure(engine.view(self.session)).total_tokens


def build(name: str, window: int = 10_000, **config):
    """The engine itself, from its installed factory (its state is asserted below)."""
    return installed_engines()[name].load()(window, EngineOptions(config=config))


# --- packaging: installed by name, on the public API only


def test_every_strategy_is_an_installed_entry_point_of_prefixbench():
    installed = installed_engines()
    for name in ENGINES:
        assert name in installed
        assert installed[name].value.startswith("prefixbench.kernel.strategies.")
        assert load_engine(name).build(8_000, EngineOptions())  # the smallest window a workload runs at.name == name


def test_strategies_import_only_the_public_engine_api():
    # What a third party could write: prefixbench.kernel (the public API), the package's own
    # modules, and the standard library; no reach into the loop, the simulator or a private name.
    for path in sorted((ROOT / "kernel" / "strategies").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("prefixbench"):
                assert node.module == "prefixbench.kernel" or node.module.startswith("prefixbench.kernel.strategies."), (
                    path.name, node.module)
            if isinstance(node, ast.Import):
                assert not any(alias.name.startswith("prefixbench") for alias in node.names), path.name
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                assert isinstance(node.value, ast.Name) and node.value.id == "self", (path.name, node.attr)


@pytest.mark.parametrize(
    ("name", "config", "message"),
    [
        ("sliding-window", {"budget": 3}, "sliding-window: unknown setting 'budget' (known: budget_tokens, low_water_tokens)"),
        ("sliding-window", {"budget_tokens": -1}, "sliding-window: budget_tokens must be an integer >= 0, got -1"),
        ("claude-code-autocompact", {"microcompact": "yes"}, "claude-code-autocompact: microcompact must be true or false, got 'yes'"),
        ("claude-code-autocompact", {"precompute_buffer": 1}, "claude-code-autocompact: precompute_buffer must be under 1, got 1"),
        ("roo-condense", {"release": 3.28}, 'roo-condense: release must be a string, got 3.28: quote it, release = "3.28"'),
        ("anthropic-context-editing", {"exclude_tools": "bash"}, "anthropic-context-editing: exclude_tools must be a list of strings, got 'bash'"),
        ("anthropic-context-editing", {"thinking_keep": "some"}, 'thinking_keep must be an integer >= 0 or "all"'),
        ("anthropic-context-editing", {"thinking_keep": "\u00b2"}, 'thinking_keep must be an integer >= 0 or "all"'),
        ("anthropic-context-editing", {"trigger_type": "turns"}, "trigger_type must be input_tokens or tool_uses"),
        ("openai-server-compaction", {"compact_threshold": 0}, "compact_threshold and item_max_tokens must be positive"),
        ("no-compaction", {"x": 1}, "no-compaction: unknown setting 'x' (known: )"),
    ],
)
def test_a_bad_setting_is_one_line(name, config, message):
    with pytest.raises(UserError) as error:
        load_engine(name).build(10_000, EngineOptions(config=config))
    assert message in str(error.value) and "\n" not in str(error.value)


# --- no-compaction


def test_no_compaction_sends_everything_and_never_rewrites():
    h = Harness()
    engine = build("no-compaction")
    h.user()
    for n in range(100):  # far past the window
        h.step(n)
        engine.before_step(h.ctx)
    assert engine.view(h.session) == h.ctx.messages()
    assert h.tokens(engine) > 10_000 and h.rewrites() == [] and h.sent == []


# --- sliding-window


def test_sliding_window_drops_the_oldest_pairs_to_fit_and_declares_it():
    h = Harness(window=10_000, cap=500)  # budget: 9,500 tokens
    engine = build("sliding-window")
    h.user()
    n = 0
    while h.ctx.measure(h.ctx.messages()).total_tokens <= 9_500:
        h.step(n)
        n += 1
        engine.before_step(h.ctx)
    assert h.rewrites() == ["truncate"]
    view = engine.view(h.session)
    # It dropped the user message and whole steps: it opens on an assistant call, never on a result.
    assert view[0].role == "assistant" and view[0].tool_calls
    assert view == h.ctx.messages()[engine.start :]
    assert 9_500 - 120 < h.tokens(engine) <= 9_500  # as little as fits: one step is ~110 tokens
    # Nothing new, nothing dropped; one more step drops one more pair from the head.
    engine.before_step(h.ctx)
    assert h.rewrites() == ["truncate"]
    start = engine.start
    h.step(n)
    engine.before_step(h.ctx)
    assert h.rewrites() == ["truncate", "truncate"] and engine.start == start + 2


def test_sliding_window_low_water_drops_more_at_once():
    h = Harness(window=10_000)
    engine = build("sliding-window", low_water_tokens=5_000)
    h.user()
    for n in range(200):
        h.step(n)
        engine.before_step(h.ctx)
    assert h.tokens(engine) <= 9_500
    # 200 steps of ~130 tokens: the first drop at ~9,500, then one every ~35 steps (4,500 tokens).
    assert h.rewrites() == ["truncate"] * 4


# --- claude-code-autocompact


def test_claude_code_threshold_is_the_window_less_the_summary_room_and_buffer():
    assert claude_code.autocompact_threshold(200_000, 32_000) == 167_000  # 83.5% of a 200k window
    assert claude_code.autocompact_threshold(200_000, 8_192) == 178_808
    assert claude_code.autocompact_threshold(32_000, 2_000) == 17_000
    assert claude_code.autocompact_threshold(10_000, 500) == 0  # a window under the buffer compacts always


#: Claude Code up to 2.1.152 as its transcripts show it: the summary alone, made at the threshold.
SUMMARY_ALONE = {"preserve_recent": 0, "precompute_buffer": 0, "restore_files": 0}


def test_claude_code_autocompact_replays_the_view_and_restarts_from_the_summary():
    h = Harness(window=40_000, cap=2_000)  # threshold 40,000 - 2,000 - 13,000 = 25,000
    engine = build("claude-code-autocompact", 40_000, **SUMMARY_ALONE)
    h.user()
    n = 0
    while True:
        h.step(n)
        n += 1
        before = engine.view(h.session)
        tokens = h.ctx.measure(before).total_tokens
        engine.before_step(h.ctx)
        if h.sent:
            break
        assert tokens < 25_000
    assert tokens >= 25_000
    (call,) = h.sent
    # The call replays exactly what the engine would have sent, then asks; routed family, capped output.
    assert call.messages == (*before, claude_code.INSTRUCTION)
    assert (call.purpose, call.envelope, call.max_tokens) == ("compaction", Envelope("acme", "m1", "high"), 2_000)
    assert engine.view(h.session) == (Message("user", (Text(claude_code.CONTINUED + "summary 1"),)),)
    assert h.rewrites() == ["checkpoint"] and engine.counts["auto"] == 1
    h.step(n)
    assert engine.view(h.session)[1:] == h.ctx.messages()[-2:]


def _run_to(h: Harness, engine, until, chars: int = 4_000, first: int = 0) -> int:
    """A user message, then steps (one read_file call each, numbered from ``first``) until
    ``until()``; the number of steps taken."""
    h.user()
    n = 0
    while not until():
        h.step(first + n, chars=chars)
        engine.before_step(h.ctx)
        n += 1
        assert n < 500
    return n


def test_claude_code_precomputes_the_summary_and_keeps_the_rounds_since():
    # 2.1.185 on a 200k window: the summary call at 153,000 tokens (180,000 less 15%), the
    # compaction at 167,000, keeping the round the call left out and every message since.
    h = Harness(window=200_000, cap=64_000)
    engine = build("claude-code-autocompact", 200_000, restore_files=0)
    sizes: list[int] = []
    _run_to(h, engine, lambda: sizes.append(h.tokens(engine)) or bool(h.sent))
    (call,) = h.sent
    assert sizes[-2] < 153_000 <= sizes[-1] and h.rewrites() == []
    view = engine.view(h.session)
    assert view == h.ctx.messages()  # nothing rewritten yet
    # The call sends the view but its newest round (the last reply and its result).
    assert call.messages == (*view[:-2], claude_code.INSTRUCTION) and view[-2].role == "assistant"
    arm_round = view[-2:]
    n = _run_to(h, engine, lambda: bool(h.rewrites()), first=1_000)
    assert len(h.sent) == 1 and engine.counts == {"auto": 1, "idle": 0, "expiry": 0, "microcompact": 0, "precomputed": 1, "thrash": 0}
    messages = h.ctx.messages()
    since = messages[messages.index(arm_round[1]) + 1 :]
    assert len(since) == 2 * n + 1  # the new user message of _run_to and the steps since
    assert engine.view(h.session) == (Message("user", (Text(claude_code.CONTINUED + "summary 1"),)), *arm_round, *since)
    assert h.tokens(engine) < 167_000 - 153_000 + 10_000


def test_claude_code_compacts_at_once_keeping_the_newest_round_without_precompute():
    h = Harness(window=40_000, cap=2_000)
    engine = build("claude-code-autocompact", 40_000, precompute_buffer=0, restore_files=0)
    h.user()
    n = 0
    while not h.sent:
        h.step(n)
        n += 1
        last = engine.view(h.session)
        engine.before_step(h.ctx)
    (call,) = h.sent
    assert call.messages == (*last[:-2], claude_code.INSTRUCTION)
    assert engine.view(h.session) == (Message("user", (Text(claude_code.CONTINUED + "summary 1"),)), *last[-2:])
    assert h.rewrites() == ["checkpoint"]
    # Every kept tool result has its call in the view (tool-pairs-intact).
    view = engine.view(h.session)
    calls = {c.call_id for m in view for c in m.tool_calls}
    assert all(r.call_id in calls for m in view for r in m.tool_results)


def test_claude_code_keeps_no_round_that_alone_would_not_fit():
    h = Harness(window=40_000, cap=2_000)
    engine = build("claude-code-autocompact", 40_000, precompute_buffer=0, restore_files=0)
    h.user()
    h.step(0)
    h.step(1, chars=120_000)  # one result over the 25,000-token threshold
    engine.before_step(h.ctx)
    assert engine.view(h.session) == (Message("user", (Text(claude_code.CONTINUED + "summary 1"),)),)


def test_claude_code_re_reads_the_newest_files_after_a_compaction():
    h = Harness(window=40_000, cap=2_000)
    engine = build("claude-code-autocompact", 40_000, precompute_buffer=0, restore_file_tokens=1_500)
    h.user()
    for n in range(20):
        h.step(n, chars=4_000 if n != 17 else 8_000)  # about 1,000 tokens each; file 17 over 1,500
        engine.before_step(h.ctx)
    assert h.sent == []
    h.step(20, chars=4_000)
    h.step(0, chars=4_000)  # file 0 read again: now the newest, with this content
    h.step(21, chars=60_000)
    engine.before_step(h.ctx)
    view = engine.view(h.session)
    # The summary, the kept round (file 21's read), then of the five newest other files (0, 20,
    # 19, 18, 17) all but 17, over restore_file_tokens, newest first.
    restored = [m.blocks[0].text for m in view[3:]]
    assert view[1].tool_calls[0].arguments == '{"n":21}'
    assert [t.startswith(claude_code.RESTORED) for t in restored] == [True] * 4
    assert [t[len(claude_code.RESTORED)] for t in restored] == ["a", "u", "t", "s"]
    assert len(h.sent) == 1


def test_claude_code_restore_keeps_within_its_total_and_can_be_off():
    h = Harness(window=40_000, cap=2_000)
    engine = build("claude-code-autocompact", 40_000, precompute_buffer=0, restore_tokens=2_500)
    off = build("claude-code-autocompact", 40_000, precompute_buffer=0, restore_files=0)
    for n in range(8):
        h.step(n, chars=4_000)
    h.step(8, chars=120_000)
    engine.before_step(h.ctx)
    off.before_step(h.ctx)
    assert len(engine.view(h.session)) == 1 + 2  # the summary and two files within 2,500 tokens
    assert len(off.view(h.session)) == 1


@pytest.mark.parametrize("precompute_buffer", [0, 0.5])
def test_claude_code_re_reads_only_the_files_that_fit_after_a_large_kept_round(precompute_buffer):
    # A small window (threshold 25,000), five file reads of ~4,000 tokens, then a kept round of
    # ~15,000: the summary, the kept rounds and every file not kept would come to ~35,000 tokens,
    # so the restarted view would compact again at once. With restore_fit (prefixbench's former
    # default; Claude Code has no such check) only the files that fit are re-read.
    h = Harness(window=40_000, cap=2_000)
    engine = build("claude-code-autocompact", 40_000, precompute_buffer=precompute_buffer, restore_fit=True)
    h.user()
    for n in range(5):
        h.step(n, chars=16_000)
        engine.before_step(h.ctx)
    assert h.rewrites() == []
    h.step(5, chars=60_000)
    engine.before_step(h.ctx)
    assert h.rewrites() == ["checkpoint"] and len(h.sent) == 1
    assert engine.counts["precomputed"] == (1 if precompute_buffer else 0)
    view = engine.view(h.session)
    assert h.ctx.usage_tokens(view) < 25_000  # the first request after the compaction fits
    h.step(6)
    engine.before_step(h.ctx)
    assert h.rewrites() == ["checkpoint"] and engine.counts["auto"] == 1  # and does not compact again
    restored = [m for m in view if m.role == "user" and m.blocks[0].text.startswith(claude_code.RESTORED)]
    assert len(restored) >= 1  # the files that fit are still re-read


def test_claude_code_re_arms_its_precompute_once_the_context_reaches_the_point_again():
    # 2.1.185 and 2.1.337 arm a precompute on any request whose context is at the point, but the
    # one a compaction was made for, and while none is pending: after a compaction, the next
    # summary call comes once the context has grown back to 153,000 tokens.
    h = Harness(window=200_000, cap=64_000)
    engine = build("claude-code-autocompact", 200_000, restore_files=0)
    _run_to(h, engine, lambda: bool(h.rewrites()))
    assert len(h.sent) == 1 and engine.pending is None
    sizes: list[int] = []
    _run_to(h, engine, lambda: sizes.append(h.tokens(engine)) or len(h.sent) == 2, first=1_000)
    assert sizes[-2] < 153_000 <= sizes[-1] and h.rewrites() == ["checkpoint"]
    _run_to(h, engine, lambda: len(h.rewrites()) == 2, first=2_000)
    assert engine.counts["precomputed"] == 2 and len(h.sent) == 2


class RefusingHarness(Harness):
    """A harness whose summary calls all fail."""

    def client(self, request):
        self.sent.append(request)
        return Reply(error="HTTP 529: overloaded")


@pytest.mark.parametrize(("failures", "calls"), [(3, 3), (0, 5)])
def test_claude_code_stops_re_arming_after_three_failed_precomputes(failures, calls):
    # Each failed precompute re-arms at the next request, until 3 failed in a row (2.1.185:
    # tengu_precomputed_compact_rearm_capped); precompute_failures = 0 retries at every request.
    h = RefusingHarness(window=200_000, cap=64_000)
    engine = build("claude-code-autocompact", 200_000, restore_files=0, precompute_failures=failures)
    _run_to(h, engine, lambda: bool(h.sent))
    for n in range(4):
        h.step(1_000 + n, chars=400)
        engine.before_step(h.ctx)
    assert h.tokens(engine) < 167_000 and len(h.sent) == calls and engine.pending is None


def _refill(h: Harness, engine, steps: int, first: int = 100) -> None:
    """``steps`` steps, each reading a new ~500-token file, with the engine before each next one."""
    for n in range(first, first + steps):
        h.step(n, chars=2_000)
        engine.before_step(h.ctx)


#: Five ~6,000-token files re-read after each summary put a 40k window's restart (threshold
#: 25,000) over its threshold: every compaction is refilled at the next request.
THRASH = {"precompute_buffer": 0, "restore_file_tokens": 10_000}


def _thrashing(**config):
    h = Harness(window=40_000, cap=2_000)
    engine = build("claude-code-autocompact", 40_000, **THRASH, **config)
    h.user()
    for n in range(5):
        h.step(n, chars=24_000)
        engine.before_step(h.ctx)
    assert engine.counts["auto"] == 1 and h.ctx.usage_tokens(engine.view(h.session)) >= 25_000
    return h, engine


def test_claude_code_restores_within_its_budgets_whatever_the_window():
    # Claude Code re-reads up to 5 files within its fixed budgets and does not check the room
    # left: the restarted view is over the threshold, so the next request compacts again.
    h, engine = _thrashing()
    restored = [m for m in engine.view(h.session) if m.role == "user" and m.blocks[0].text.startswith(claude_code.RESTORED)]
    assert len(restored) == 4  # the five newest files but the one the kept round read
    _refill(h, engine, 1)
    assert engine.counts["auto"] == 2 and engine.refills == 1


def test_claude_code_stops_after_three_rapid_refills_in_a_turn():
    # 2.1.92-2.1.337: the 4th compaction within 3 requests of the previous one (3 refills in a
    # row) trips the breaker: Claude Code ends the turn with "Autocompact is thrashing" and sends
    # nothing. The scripted turn goes on here, so the stop is logged and counted and the
    # compaction made as the next turn's first would be (the count starts over).
    h, engine = _thrashing()
    _refill(h, engine, 2)
    assert engine.counts["auto"] == 3 and engine.refills == 2 and engine.counts["thrash"] == 0
    _refill(h, engine, 1, first=200)
    assert engine.counts["thrash"] == 1 and engine.counts["auto"] == 4 and engine.refills == 0
    (warning,) = _thrash_warnings(h)
    assert "autocompact is thrashing [threshold 25,000 tokens, within 3 requests, 3 in a row]" in warning.info["text"]
    _refill(h, engine, 3, first=300)  # the next three refills count again from the new start
    assert engine.counts["thrash"] == 2 and engine.counts["auto"] == 7


def test_claude_code_counts_a_thrash_stop_only_when_its_compaction_lands():
    # The stop is counted and logged with the compaction made in its place: a summary call that
    # fails makes no compaction, so no stop either; the next one that lands is counted once.
    h, engine = _thrashing()
    _refill(h, engine, 2)
    assert engine.refills == 2
    refusing, working = RefusingHarness(window=40_000, cap=2_000), h.ctx
    h.ctx = msgspec.structs.replace(working, client=refusing.client)
    _refill(h, engine, 1, first=200)
    assert refusing.sent and engine.counts["thrash"] == 0 and engine.counts["auto"] == 3
    assert not _thrash_warnings(h)
    h.ctx = working
    _refill(h, engine, 1, first=300)
    assert engine.counts["thrash"] == 1 and engine.counts["auto"] == 4 and engine.refills == 0
    assert len(_thrash_warnings(h)) == 1


def test_claude_code_thrash_count_restarts_with_each_user_turn_and_after_three_requests():
    h, engine = _thrashing()
    _refill(h, engine, 2)
    assert engine.refills == 2
    h.user("next")  # a new prompt: Claude Code's compact tracking starts over
    engine.before_step(h.ctx)
    _refill(h, engine, 1)  # the first compaction of this turn, no refill
    assert engine.counts["auto"] == 4 and engine.refills == 0 and engine.counts["thrash"] == 0
    # A compaction thrash_turns or more requests after the previous one is no rapid refill
    # (here thrash_turns = 1: each refill comes 1 request after the compaction before it).
    slow = build("claude-code-autocompact", 40_000, **THRASH, thrash_turns=1)
    h2 = Harness(window=40_000, cap=2_000)
    h2.user()
    for n in range(5):
        h2.step(n, chars=24_000)
        slow.before_step(h2.ctx)
    _refill(h2, slow, 6)
    assert slow.counts["auto"] == 7 and slow.refills == 0 and slow.counts["thrash"] == 0


def test_claude_code_thrash_stop_off_and_restore_fit_give_the_former_behaviours():
    # thrash_refills = 0: no stop (2.1.22 has none); every refill compacts again.
    h, engine = _thrashing(thrash_refills=0)
    _refill(h, engine, 6)
    assert engine.counts["auto"] == 7 and engine.counts["thrash"] == 0
    assert not _thrash_warnings(h)
    # restore_fit: only the files that fit are re-read, so the restart stays under the threshold.
    h = Harness(window=40_000, cap=2_000)
    fit = build("claude-code-autocompact", 40_000, **THRASH, restore_fit=True)
    h.user()
    for n in range(5):
        h.step(n, chars=24_000)
        fit.before_step(h.ctx)
    assert fit.counts["auto"] == 1 and h.ctx.usage_tokens(fit.view(h.session)) < 25_000
    _refill(h, fit, 1)
    assert fit.counts["auto"] == 1
    assert not [e for e in h.session.events if e.kind == "compaction/warning"]


def _thrash_warnings(h: Harness) -> list:
    return [e for e in h.session.events if e.kind == "compaction/warning" and "autocompact is thrashing" in e.info["text"]]


def test_claude_code_warns_once_when_its_threshold_is_under_the_restarted_context():
    # The five re-read files put every restart over the 25,000-token threshold: each compaction
    # is followed by another at the next request whatever the workload does. Said once a run,
    # with the threshold; the refills go on.
    h, engine = _thrashing()
    _refill(h, engine, 6)
    low = [e.info["text"] for e in h.session.events
           if e.kind == "compaction/warning" and claude_code.LOW_THRESHOLD_KIND in e.info["text"]]
    assert len(low) == 1 and engine.counts["auto"] == 7
    assert low[0].startswith("claude-code-autocompact: the threshold is below the restarted context [threshold 25,000 tokens]: "
                             "compaction 1 restarted the context at ")


def test_claude_code_notes_each_read_call_once(monkeypatch):
    # The read-file scan reads each message's calls once, not the whole session every step.
    reads = []
    calls = Message.tool_calls
    monkeypatch.setattr(Message, "tool_calls", property(lambda m: reads.append(m) or calls.fget(m)))
    h = Harness(window=1_000_000)
    engine = build("claude-code-autocompact", 1_000_000)
    h.user()
    for n in range(200):
        h.step(n, chars=40)
        engine.scan(h.ctx)
    assert len(reads) <= 2 * len(h.ctx.messages())
    assert list(engine.files) == [("read_file", f'{{"n":{n}}}') for n in range(200)]


def test_claude_code_drops_a_precomputed_summary_when_it_clears_old_results():
    h = Harness(window=200_000, cap=64_000)
    engine = build("claude-code-autocompact", 200_000, restore_files=0)
    _run_to(h, engine, lambda: bool(h.sent))
    assert engine.pending is not None
    h.now += 3_600_000
    h.step(999)
    engine.before_step(h.ctx)
    assert engine.pending is None and h.rewrites() == ["microcompact"]


def test_claude_code_clears_old_tool_results_after_the_cache_expired():
    h = Harness(window=200_000, cap=8_000)
    engine = build("claude-code-autocompact", 200_000)
    h.user()
    for n in range(8):
        h.step(n)
        h.now += 5_000
        engine.before_step(h.ctx)
    h.now += 3_600_000  # away for the cache's whole 1 h lifetime
    h.step(8)
    engine.before_step(h.ctx)
    assert h.rewrites() == ["microcompact"] and h.sent == []
    results = [m.tool_results[0] for m in engine.view(h.session) if m.role == "tool"]
    assert [r.content[0].text for r in results[:4]] == [claude_code.CLEARED] * 4
    assert [r.content[0].text[:1] for r in results[4:]] == ["e", "f", "g", "h", "i"]  # the 5 newest
    assert [r.call_id for r in results] == [f"c{n}" for n in range(9)]  # pairs intact


def test_claude_code_does_not_clear_within_the_cache_lifetime():
    h = Harness(window=200_000, cap=8_000)
    engine = build("claude-code-autocompact", 200_000)
    h.user()
    for n in range(8):
        h.step(n)
        engine.before_step(h.ctx)
    h.now += 3_500_000
    h.step(8)
    engine.before_step(h.ctx)
    assert h.rewrites() == [] and engine.view(h.session) == h.ctx.messages()


@pytest.mark.parametrize(("name", "idle_s", "compacts"), [
    # 2.1.286 and 2.1.337 fire at 0.9 of the cache's lifetime after its last use: minute 54 of 60.
    ("claude-code-idle-compact", 3_240, True),
    ("claude-code-idle-compact", 3_239, False),
    ("claude-code-autocompact", 3_400, False),
])
def test_idle_compaction_after_54_minutes_on_a_large_context(name, idle_s, compacts):
    h = Harness(window=1_000_000, cap=8_000)
    engine = build(name, 1_000_000, idle_min_tokens=1_000, **SUMMARY_ALONE)
    h.user()
    for n in range(10):
        h.step(n)
        engine.before_step(h.ctx)
    assert h.tokens(engine) >= 1_000 and h.sent == []
    h.now += idle_s * 1_000
    h.user("back")
    engine.before_step(h.ctx)
    assert bool(h.sent) is compacts
    assert h.rewrites() == (["checkpoint"] if compacts else [])
    if compacts:
        assert engine.counts["idle"] == 1 and len(engine.view(h.session)) == 1


class WakingHarness(Harness):
    """A harness whose context takes wake asks (``ctx.wake_at``), as the agent loop's does."""

    def __init__(self, window: int = 10_000, cap: int = 500) -> None:
        super().__init__(window, cap)
        self.asks: list[int] = []
        self.ctx = StepContext(self.session, lambda p, m: self.info, self.client, window, HEADER, lambda: self.now,
                               None, self.asks.append)


@pytest.mark.parametrize(("name", "config", "asks"), [
    ("claude-code-idle-compact", {}, True),
    ("claude-code-idle-compact", {"cache_ttl_s": 300}, False),  # Claude Code arms it on the 1 h cache only
    ("claude-code-autocompact", {}, False),
])
def test_idle_compaction_asks_to_be_woken_at_minute_54_after_each_request(name, config, asks):
    h = WakingHarness(window=1_000_000, cap=8_000)
    engine = build(name, 1_000_000, idle_min_tokens=1_000, **config)
    h.user()
    for n in range(3):
        h.step(n)
        h.now += 10_000
        engine.before_step(h.ctx)
    assert h.asks == ([30_000 + 3_240_000 - 10_000 * k for k in (2, 1, 0)] if asks else [])


@pytest.mark.parametrize(("woken_s", "min_tokens", "compacts"), [
    (3_240, 1_000, True),
    (3_600, 1_000, False),  # the cache has expired: Claude Code's "lapsed"
    (3_240, 10_000_000, False),  # under idle_min_tokens
])
def test_woken_in_the_gap_the_idle_compaction_runs_then_and_not_again_at_the_return(woken_s, min_tokens, compacts):
    h = WakingHarness(window=1_000_000, cap=8_000)
    engine = build("claude-code-idle-compact", 1_000_000, idle_min_tokens=min_tokens, **SUMMARY_ALONE)
    h.user()
    for n in range(10):
        h.step(n)
        engine.before_step(h.ctx)
    h.now += woken_s * 1_000
    engine.on_wake(h.ctx)
    assert (len(h.sent), engine.counts["idle"]) == ((1, 1) if compacts else (0, 0))
    h.now += 600_000  # back at minute 64 (or 70)
    h.user("back")
    engine.before_step(h.ctx)
    # The return sends the compacted context; with a context that takes asks, no compaction runs there.
    assert engine.counts["idle"] == (1 if compacts else 0) and len(h.sent) == (1 if compacts else 0)


def test_idle_compaction_needs_a_large_context():
    h = Harness(window=1_000_000, cap=8_000)
    engine = build("claude-code-idle-compact", 1_000_000)  # the default: 200,000 tokens
    h.user()
    h.step(0)
    engine.before_step(h.ctx)
    h.now += 4_000_000
    h.user("back")
    engine.before_step(h.ctx)
    # Away past the TTL on a small context: no idle compaction; the one result is the newest, kept.
    assert h.sent == [] and h.rewrites() == []


@pytest.mark.parametrize(("fraction", "idle_s", "compacts"), [(0.5, 1_800, True), (0.5, 1_799, False), (0.95, 3_419, False)])
def test_idle_compaction_fires_at_its_fraction_of_the_cache_lifetime(fraction, idle_s, compacts):
    h = Harness(window=1_000_000, cap=8_000)
    engine = build("claude-code-idle-compact", 1_000_000, idle_min_tokens=1_000, idle_fire_fraction=fraction, **SUMMARY_ALONE)
    h.user()
    for n in range(10):
        h.step(n)
        engine.before_step(h.ctx)
    h.now += idle_s * 1_000
    h.user("back")
    engine.before_step(h.ctx)
    assert bool(h.sent) is compacts


def test_idle_compaction_runs_with_the_one_hour_cache_only():
    # Claude Code's timer is not armed on the 5 minute cache ("not_one_hour"): away an hour, the
    # engine clears old results as the cache expired, and compacts nothing.
    h = Harness(window=1_000_000, cap=8_000)
    engine = build("claude-code-idle-compact", 1_000_000, idle_min_tokens=1_000, cache_ttl_s=300, **SUMMARY_ALONE)
    h.user()
    for n in range(10):
        h.step(n)
        engine.before_step(h.ctx)
    h.now += 3_600_000
    h.user("back")
    engine.before_step(h.ctx)
    assert h.sent == [] and h.rewrites() == ["microcompact"] and engine.counts["idle"] == 0


def _precomputed(**config):
    """An idle-compact engine on a 200k window holding a precomputed summary (153,000 tokens)."""
    h = Harness(window=200_000, cap=64_000)
    engine = build("claude-code-idle-compact", 200_000, restore_files=0, idle_min_tokens=100_000, **config)
    _run_to(h, engine, lambda: bool(h.sent))
    assert engine.pending is not None and h.rewrites() == []
    return h, engine


def test_after_the_cache_expired_the_precomputed_summary_is_installed_at_the_next_prompt():
    # 2.1.337's compact_after_cache_expiry: back after the 1 h cache expired, below the threshold,
    # the summary made early is installed with no new summary call (the context is rewritten anyway).
    h, engine = _precomputed(after_expiry=True)
    (call,) = h.sent
    h.now += 3_600_000
    h.user("back")
    engine.before_step(h.ctx)
    assert h.sent == [call] and h.rewrites() == ["checkpoint"]
    assert engine.counts["expiry"] == 1 and engine.counts["precomputed"] == 1 and engine.counts["idle"] == 0
    assert engine.view(h.session)[0] == Message("user", (Text(claude_code.CONTINUED + "summary 1"),))
    (event,) = [e for e in h.session.events if e.kind == "compaction/rewrite"]
    assert (event.info["trigger"], event.info["precomputed"]) == ("expiry", True)


@pytest.mark.parametrize(("config", "idle_s", "user"), [
    ({}, 3_600, True),  # off by default (a remote flag in 2.1.337): idle compaction writes a new summary
    ({"after_expiry": True}, 3_500, True),  # the cache is still warm: the idle compaction, a new call
    ({"after_expiry": True}, 3_600, False),  # a tool result, not the user's prompt: no install
])
def test_the_precomputed_summary_is_installed_only_after_the_cache_expired_at_a_prompt(config, idle_s, user):
    h, engine = _precomputed(**config)
    h.now += idle_s * 1_000
    if user:
        h.user("back")
    else:
        h.step(999)
    engine.before_step(h.ctx)
    # No install; the idle compaction (a gap of 54 minutes or more) summarizes anew instead.
    assert engine.counts["expiry"] == 0 and engine.counts["idle"] == 1 and len(h.sent) == 2


@pytest.mark.parametrize(("config", "message"), [
    ({"after_expiry": True, "release": "2.1.286"},
     "after_expiry needs release 2.1.337 (2.1.286 has no compaction after the cache expired)"),
    ({"release": "2.1.300"}, "release must be one of 2.1.286, 2.1.337, got '2.1.300'"),
    ({"idle_fire_fraction": 0.4}, "idle_fire_fraction must be a number between 0.5 and 0.95, got 0.4"),
    ({"idle_fire_fraction": 0.96}, "idle_fire_fraction must be a number between 0.5 and 0.95, got 0.96"),
    ({"idle_fire_fraction": 1.0}, "idle_fire_fraction must be a number between 0.5 and 0.95, got 1.0"),
    # The type check says the range too, not only "a number >= 0".
    ({"idle_fire_fraction": "0.9"}, "idle_fire_fraction must be a number between 0.5 and 0.95, got '0.9'"),
    ({"idle_fire_fraction": True}, "idle_fire_fraction must be a number between 0.5 and 0.95, got true"),
])
def test_idle_settings_out_of_what_the_binaries_do_are_one_line(config, message):
    # The error names the engine the table built (claude-code-idle-compact), not the class's first name.
    with pytest.raises(UserError) as raised:
        load_engine("claude-code-idle-compact").build(32_000, EngineOptions(config=config))
    assert str(raised.value) == f"engine claude-code-idle-compact: the factory raised ValueError: claude-code-idle-compact: {message}"


def test_an_autocompact_table_turning_idle_compaction_on_names_the_idle_engine_in_its_errors():
    with pytest.raises(UserError) as raised:
        load_engine("claude-code-autocompact").build(32_000, EngineOptions(config={"idle_compact": True, "release": "x"}))
    assert str(raised.value) == ("engine claude-code-autocompact: the factory raised ValueError: claude-code-idle-compact: "
                                 "release must be one of 2.1.286, 2.1.337, got 'x'")
    with pytest.raises(UserError) as raised:
        load_engine("claude-code-autocompact").build(32_000, EngineOptions(config={"precompute_buffer": 1.0}))
    assert str(raised.value) == ("engine claude-code-autocompact: the factory raised ValueError: claude-code-autocompact: "
                                 "precompute_buffer must be under 1, got 1.0")


def test_the_precomputed_summary_is_not_installed_after_expiry_at_or_over_the_threshold():
    # compact_after_cache_expiry installs only below the threshold; at it, the return compacts anew
    # (here the idle compaction, the context taking no wake asks).
    h, engine = _precomputed(after_expiry=True)
    n = 1_000
    while h.tokens(engine) < engine.threshold(h.ctx):
        h.step(n, chars=4_000)
        n += 1
    h.now += 3_600_000
    h.user("back")
    engine.before_step(h.ctx)
    assert engine.counts["expiry"] == 0 and engine.counts["precomputed"] == 0 and engine.counts["idle"] == 1
    assert len(h.sent) == 2


def test_after_expiry_needs_idle_compaction():
    with pytest.raises(UserError, match="claude-code-autocompact: after_expiry needs idle_compact"):
        load_engine("claude-code-autocompact").build(32_000, EngineOptions(config={"after_expiry": True}))


# --- anthropic-context-editing


def _edited(h: Harness, engine) -> list[str]:
    return [m.tool_results[0].content[0].text[:1] if m.role == "tool" else m.role for m in engine.view(h.session)]


def test_context_editing_clears_all_but_the_newest_three_past_the_trigger():
    h = Harness(window=100_000)
    engine = build("anthropic-context-editing", 100_000, trigger=1_000)
    h.user()
    for n in range(6):
        h.step(n)
    assert h.ctx.measure(h.ctx.messages()).total_tokens < 1_000
    engine.before_step(h.ctx)
    assert h.rewrites() == [] and engine.view(h.session) == h.ctx.messages()
    for n in range(6, 10):
        h.step(n)
    engine.before_step(h.ctx)
    placeholder = context_editing.PLACEHOLDER[:1]
    view = engine.view(h.session)
    assert [m.tool_results[0].content[0].text for m in view if m.role == "tool"][:7] == [context_editing.PLACEHOLDER] * 7
    assert _edited(h, engine)[-6:] == ["assistant", "h", "assistant", "i", "assistant", "j"]
    assert _edited(h, engine).count(placeholder) == 7 and h.rewrites() == ["clear_tool_uses"]
    # The calls stay (only results are cleared by default), and every result keeps its call id.
    assert [c.arguments for m in view for c in m.tool_calls] == [f'{{"n":{n}}}' for n in range(10)]
    # Stateless, as the server is: every new tool use past the trigger clears one more result.
    h.step(10)
    engine.before_step(h.ctx)
    assert h.rewrites() == ["clear_tool_uses"] * 2 and _edited(h, engine).count(placeholder) == 8


def test_context_editing_exclude_tools_keep_and_inputs():
    h = Harness(window=100_000)
    engine = build(
        "anthropic-context-editing", 100_000, trigger=500, keep=1, exclude_tools=["memory"], clear_tool_inputs=True
    )
    h.user()
    for n in range(6):
        h.step(n, tool="memory" if n == 1 else "read_file")
    engine.before_step(h.ctx)
    view = engine.view(h.session)
    texts = [m.tool_results[0].content[0].text[:1] for m in view if m.role == "tool"]
    assert texts == ["[", "b", "[", "[", "[", "f"]
    assert [c.arguments for m in view for c in m.tool_calls] == ["{}", '{"n":1}', "{}", "{}", "{}", '{"n":5}']


def test_context_editing_clear_at_least_and_tool_use_trigger():
    h = Harness(window=100_000)
    h.user()
    for n in range(6):
        h.step(n)
    # Clearing 3 results frees ~300 tokens: less than asked, so nothing is cleared.
    stingy = build("anthropic-context-editing", 100_000, trigger=500, clear_at_least=5_000)
    stingy.before_step(h.ctx)
    assert stingy.view(h.session) == h.ctx.messages()
    by_uses = build("anthropic-context-editing", 100_000, trigger=5, trigger_type="tool_uses")
    by_uses.before_step(h.ctx)  # 6 tool uses > 5
    assert _edited(h, by_uses).count(context_editing.PLACEHOLDER[:1]) == 3


def test_clear_thinking_keeps_the_newest_turns_reasoning():
    h = Harness(window=100_000)
    engine = build("anthropic-context-editing", 100_000, clear_tool_uses=False)
    for turn in range(3):
        h.user(f"task {turn}")
        for n in range(2):
            h.step(turn * 2 + n, reasoning=f"think {turn}")
        engine.before_step(h.ctx)
    reasoning = [b.text for m in engine.view(h.session) for b in m.reasoning]
    assert reasoning == ["think 2", "think 2"]
    assert h.rewrites() == ["clear_thinking", "clear_thinking"]  # at the start of turns 1 and 2
    keep_all = build("anthropic-context-editing", 100_000, clear_tool_uses=False, thinking_keep="all")
    keep_all.before_step(h.ctx)
    assert keep_all.view(h.session) == h.ctx.messages()
    two = build("anthropic-context-editing", 100_000, clear_tool_uses=False, thinking_keep=2)
    two.before_step(h.ctx)
    assert [b.text for m in two.view(h.session) for b in m.reasoning] == ["think 1"] * 2 + ["think 2"] * 2


def test_context_editing_default_trigger_is_100k_or_half_the_window():
    assert context_editing.factory(1_000_000, EngineOptions()).trigger == 100_000
    assert context_editing.factory(32_000, EngineOptions()).trigger == 16_000


# --- openai-server-compaction


def test_openai_compaction_replaces_earlier_items_with_an_opaque_item():
    h = Harness(window=10_000)
    engine = build("openai-server-compaction")  # threshold 8,000 tokens
    assert engine.compact_threshold == 8_000
    h.user()
    n = 0
    while not h.sent:
        h.step(n)
        n += 1
        before = engine.view(h.session)
        tokens = h.ctx.measure(before).total_tokens
        engine.before_step(h.ctx)
    assert tokens >= 8_000 and h.ctx.measure(before[:-2]).total_tokens < 8_000
    (call,) = h.sent
    assert call.messages == (*before, openai_compaction.INSTRUCTION) and call.purpose == "compaction"
    (item,) = engine.view(h.session)
    blob = item.text().removeprefix("[compaction encrypted_content=").removesuffix("]")
    assert base64.b64decode(blob).decode() == "summary 1" and "summary" not in item.text()
    assert h.rewrites() == ["compaction"]
    h.step(n)
    assert engine.view(h.session) == (item, *h.ctx.messages()[-2:])


def test_module_factories_match_their_entry_points():
    assert isinstance(no_compaction.factory(1_000, EngineOptions()), no_compaction.NoCompaction)
    assert isinstance(sliding_window.factory(1_000, EngineOptions()), sliding_window.SlidingWindow)
    assert claude_code.idle_compact(1_000, EngineOptions()).name == "claude-code-idle-compact"


# --- settings are parsed input: fuzzed

KEYS = sorted(
    {*claude_code.DEFAULTS, *context_editing.DEFAULTS, *goose.DEFAULTS, *continue_cli.DEFAULTS, *hermes.DEFAULTS,
     *openclaw.DEFAULTS, "budget_tokens", "low_water_tokens", "compact_threshold", "item_max_tokens", "bogus"}
)
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-10, 10**12), st.floats(allow_nan=True), st.text(max_size=8),
    st.lists(st.text(max_size=4), max_size=3), st.sampled_from(["all", "tool_uses", "input_tokens", "3"]),
)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(ENGINES), config=st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=4))
@example(name="claude-code-autocompact", config={"idle_compact": True})  # found by CI: the engine names itself idle
def test_any_settings_table_builds_an_engine_or_is_one_line(name, config):
    try:
        engine = load_engine(name).build(32_000, EngineOptions(config=config))
    except UserError as error:
        assert "\n" not in str(error) and str(error).startswith(f"engine {name}:")
    else:
        # Claude Code's two names are one engine: ``idle_compact`` decides which it is.
        claude = ("claude-code-autocompact", "claude-code-idle-compact")
        assert engine.name == (claude[bool(engine.settings["idle_compact"])] if name in claude else name)


def test_claude_code_replaced_setting_names_its_replacement():
    """A config written for the fixed 3,300 s idle gap says what replaced it, before the known keys."""
    from prefixbench.kernel.strategies.settings import read_settings
    from prefixbench.kernel.strategies.claude_code import DEFAULTS, _REPLACED
    with pytest.raises(ValueError, match=r"setting 'idle_after_s' was replaced: use idle_fire_fraction"):
        read_settings("claude-code-idle-compact", {"idle_after_s": 3300}, DEFAULTS, _REPLACED)
    with pytest.raises(ValueError, match=r"unknown setting 'nope' \(known: "):
        read_settings("claude-code-idle-compact", {"nope": 1}, DEFAULTS, _REPLACED)


@pytest.mark.parametrize(("window", "config", "why"), [
    (128_000, {}, "idle_min_tokens 200,000 at or over the run's window"),
    (200_000, {}, "idle_min_tokens 200,000 at or over the run's window"),
    (1_000_000, {"cache_ttl_s": 300}, "cache_ttl_s 300, not the 1 h cache"),
    (1_000_000, {}, None),
    (128_000, {"idle_min_tokens": 16_000}, None),
])
def test_idle_compaction_that_cannot_fire_warns_once_a_run(window, config, why):
    # Base: silent; the run was auto-compact's under the idle engine's name.
    h = Harness(window=window, cap=8_000)
    engine = build("claude-code-idle-compact", window, **config)
    h.user()
    for n in range(3):
        h.step(n)
        engine.before_step(h.ctx)
    warned = lambda: [e.info["text"] for e in h.session.events if e.kind == "compaction/warning"]  # noqa: E731
    assert warned() == []  # no idle gap yet: idle compaction could not fire on any settings
    h.now += 3_300_000  # a gap of 55 minutes: the timer would fire at minute 54
    for n in range(3, 6):
        h.step(n)
        engine.before_step(h.ctx)
    texts = warned()
    expected = [] if why is None else [
        f"claude-code-idle-compact: idle compaction cannot fire [{why}]: the run compacts as claude-code-autocompact would"]
    assert texts == expected
    auto = build("claude-code-autocompact", window, **config)
    auto.before_step(h.ctx)
    assert [e.info["text"] for e in h.session.events if e.kind == "compaction/warning"] == expected  # no idle timer: silent
