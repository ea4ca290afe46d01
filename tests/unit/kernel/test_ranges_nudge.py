"""Protected zone, recommended ranges, the nudge decision and the emergency valve."""

from msgspec.structs import replace
from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.ranges_nudge import (
    NUDGE_MARKER,
    Nudge,
    RecommendedRange,
    decide_nudge,
    plan_truncation,
    protected_zone,
    recommend_ranges,
)
from prefixbench.kernel.engines.ranges_state import (
    CompressionBlock,
    NudgeState,
    assign_refs,
    initial_state,
)
from prefixbench.kernel.engines.ranges_view import render_parts
from prefixbench.kernel.session import tool_result_message
from prefixbench.simulator.wire import Message, Reasoning, Text, ToolCall, user_text

#: Growth unit G = 5% of the window, gate = 45% of G (floors low enough for small windows).
GROWTH = dict(growth_floor=1_000, growth_cap=1_000_000, min_growth_floor=1_000)
LIMIT = 100_000  # G = 5,000 tokens, gate = 2,250 tokens


def step(n: int, chars: int = 400, tool: str = "read_file") -> tuple[Message, Message]:
    """A thinking tool step whose text and result are ``chars`` characters each."""
    assistant = Message(
        "assistant", (Reasoning(f"r{n}"), Text(f"{n}".ljust(chars, ".")), ToolCall(f"c{n}", tool, "{}"))
    )
    return assistant, tool_result_message(f"c{n}", f"{n}".ljust(chars, "-"))


def history(num_steps: int, chars: int = 400, *, turns_at: tuple[int, ...] = ()) -> tuple[Message, ...]:
    """A user message, then tool steps; a new user message before each step in ``turns_at``."""
    out: list[Message] = [user_text("start")]
    for n in range(num_steps):
        if n in turns_at:
            out.append(user_text(f"turn {n}"))
        out.extend(step(n, chars))
    return tuple(out)


def view_of(messages, state=None, config=None, pairs=True):
    parts, state = assign_refs(messages, state or initial_state())
    config = config or RangesConfig()
    return render_parts(parts, state, config, reasoning_pairs=pairs), state


def ref_span(view, idx) -> tuple[str, ...]:
    return tuple(view[i].ref for i in sorted(idx))


# --- protected zone -------------------------------------------------------------------------


def test_zone_is_the_last_parts_closed_over_pairs():
    # Last 2 parts are C5 and t5; the fix widens the zone to step 5's reasoning and text.
    config = RangesConfig(preserve_recent_messages=2, preserve_recent_tokens=0)
    view, _ = view_of(history(6, chars=10), config=config)
    assert ref_span(view, protected_zone(view, config, reasoning_pairs=True)) == (
        "m00001",
        "m00022",
        "m00023",
        "m00024",
        "m00025",
    )
    # Legacy closes over tool pairs only: the zone starts at the call, after its reasoning.
    assert ref_span(view, protected_zone(view, config, reasoning_pairs=False)) == ("m00001", "m00024", "m00025")


def test_zone_includes_the_tail_reaching_the_token_budget():
    # Each step is R 1 token, T 100 (400 characters), C 3, t 100 by the acp counter.
    config = RangesConfig(preserve_recent_messages=0, preserve_recent_tokens=120)
    view, _ = view_of(history(6, chars=400), config=config)
    zone = protected_zone(view, config, reasoning_pairs=True)
    # t5 (100 tokens) then C5 (3): 103 < 120, T5 reaches it; R5 joins by pairing.
    assert ref_span(view, zone) == ("m00022", "m00023", "m00024", "m00025")


def test_zone_keeps_the_last_user_message():
    config = RangesConfig(preserve_recent_messages=1, preserve_recent_tokens=0)
    view, _ = view_of(history(4, chars=10, turns_at=(2,)), config=config)
    zone = ref_span(view, protected_zone(view, config, reasoning_pairs=True))
    assert zone[0] == "m00010"  # the user message "turn 2"
    assert view[9].block == Text("turn 2")


# --- recommendation ---------------------------------------------------------------------------


def test_ranges_are_batched_to_the_minimum_size_oldest_first():
    # Steps of 213 characters (R 2, T 100, C 11, t 100), user turns before steps 2, 4 and 6.
    config = RangesConfig(preserve_recent_messages=4, preserve_recent_tokens=0, min_compress_range=1_000)
    view, state = view_of(history(8, chars=100, turns_at=(2, 4, 6)), config=config)
    ranges = recommend_ranges(view, state, config, reasoning_pairs=True)
    # Runs split at each user message (every run already has >= 3 parts): 431, 432, 432 and
    # 213 characters; the zone is step 7 and the last user message (m00028). The first three
    # runs merge into one batch of >= 1,000; the last one is too small and stays alone.
    assert ranges == (
        RecommendedRange("m00001", "m00027", 27, 1_295, 330),
        RecommendedRange("m00029", "m00032", 4, 213, 54),
    )


def test_ranges_split_at_summaries_and_at_user_messages():
    config = RangesConfig(preserve_recent_messages=4, preserve_recent_tokens=0, min_compress_range=0)
    messages = history(6, chars=10, turns_at=(3,))
    # A block over step 1 splits the history at its summary.
    _, state = assign_refs(messages, initial_state())
    covered = ("m00006", "m00007", "m00008", "m00009")
    block = CompressionBlock("b1", "r1", 1, "s" * 60, None, covered, covered, (), 20, 0)
    state = replace(state, blocks=(block,))
    view, state = view_of(messages, state, config)
    ranges = recommend_ranges(view, state, config, reasoning_pairs=True)
    # The summary sits at m00006..m00009; the last user message (m00014) is protected.
    assert [(r.start_ref, r.end_ref) for r in ranges] == [
        ("m00001", "m00005"),
        ("m00010", "m00013"),
        ("m00015", "m00022"),
    ]


def test_protected_tools_are_never_recommended():
    messages = (user_text("start"), *step(0, 10), *step(1, 10, tool="todo"), *step(2, 10), *step(3, 10))
    config = RangesConfig(
        preserve_recent_messages=4, preserve_recent_tokens=0, min_compress_range=0, protected_tools=("todo",)
    )
    view, state = view_of(messages, config=config)
    ranges = recommend_ranges(view, state, config, reasoning_pairs=True)
    # Step 1 (m00006..m00009) stays whole and visible: reasoning, text, call and result.
    assert [(r.start_ref, r.end_ref) for r in ranges] == [("m00002", "m00005"), ("m00010", "m00013")]


# --- nudge decision ---------------------------------------------------------------------------


def rng(tokens: int, chars: int = 10_000) -> RecommendedRange:
    return RecommendedRange("m00002", "m00040", 39, chars, tokens)


def test_first_turn_stamps_the_baseline_and_does_not_nudge():
    config = RangesConfig(**GROWTH)
    nudge, baselines = decide_nudge(30_000, LIMIT, [rng(20_000)], initial_state(), config)
    assert nudge is None
    assert baselines == NudgeState(last_per_message_tokens=30_000)


def test_growth_nudge_needs_the_gate_and_g_pending_tokens():
    config = RangesConfig(**GROWTH)
    state = replace(initial_state(), nudge=NudgeState(last_per_message_tokens=30_000))
    # 2,249 tokens of growth: under the 2,250 gate.
    assert decide_nudge(32_249, LIMIT, [rng(20_000)], state, config)[0] is None
    # At the gate, but only 4,999 pending tokens (< G).
    assert decide_nudge(32_250, LIMIT, [rng(4_999)], state, config)[0] is None
    nudge, baselines = decide_nudge(32_250, LIMIT, [rng(5_000), rng(900, chars=4_999)], state, config)
    # The small range does not count and is not proposed.
    assert nudge == Nudge(1, "growth", (("m00002", "m00040"),), 32_250, LIMIT, 5_000)
    assert baselines.last_shown_tokens == 32_250
    assert baselines.last_shown_by_tier == ((1, 32_250),)


def test_pressure_nudges_until_the_context_stops_growing():
    config = RangesConfig(**GROWTH)
    state = replace(initial_state(), nudge=NudgeState(76_000, None))
    nudge, baselines = decide_nudge(76_000, LIMIT, [rng(100)], state, config)
    assert (nudge.tier, nudge.reason) == (1, "pressure")
    state = replace(state, nudge=baselines)
    # Shown at 76,000: no growth, no repeat; one token more, a repeat.
    assert decide_nudge(76_000, LIMIT, [rng(100)], state, config)[0] is None
    assert decide_nudge(76_001, LIMIT, [rng(100)], state, config)[0] is not None
    # "strong" force repeats without growth.
    assert decide_nudge(76_000, LIMIT, [rng(100)], state, replace(config, nudge_force="strong"))[0] is not None


def test_emergency_ignores_every_gate_but_needs_something_to_compress():
    config = RangesConfig(**GROWTH)
    state = replace(initial_state(), nudge=NudgeState(96_000, 96_000, ((1, 96_000),)))
    nudge, _ = decide_nudge(96_000, LIMIT, [rng(100)], state, config)
    assert (nudge.tier, nudge.reason) == (1, "emergency")
    assert decide_nudge(96_000, LIMIT, [], state, config)[0] is None


def _tier1_blocks(count: int, summary_chars: int) -> tuple[CompressionBlock, ...]:
    return tuple(
        CompressionBlock(f"b{n}", "r1", 1, "s" * summary_chars, None, (f"m{n:05d}",), (f"m{n:05d}",), (), 10, 0)
        for n in range(1, count + 1)
    )


def test_tier2_distillation_waits_for_the_trigger_and_1_5_g():
    config = RangesConfig(**GROWTH)
    # 5 tier-1 summaries of 6,000 chars, rendered with the 34-char marker line: 5 x 1,509 = 7,545 >= 1.5 G.
    blocks = _tier1_blocks(5, 6_000)
    state = replace(initial_state(), blocks=blocks, nudge=NudgeState(30_000))
    nudge, _ = decide_nudge(33_000, LIMIT, [rng(1_000)], state, config)
    assert nudge == Nudge(2, "growth", (("b1", "b5"),), 33_000, LIMIT, 7_545)
    # Four blocks are below tier2_trigger = 5.
    state = replace(state, blocks=blocks[:4])
    assert decide_nudge(33_000, LIMIT, [rng(1_000)], state, config)[0] is None


def test_a_shrinking_context_resets_the_baselines():
    config = RangesConfig(**GROWTH)
    state = replace(initial_state(), nudge=NudgeState(60_000, 60_000, ((1, 60_000),)))
    _, baselines = decide_nudge(54_999, LIMIT, [], state, config)
    assert baselines == NudgeState(last_per_message_tokens=54_999)


def test_nudge_text_starts_with_the_marker_and_lists_ranges():
    text = Nudge(1, "pressure", (("m00002", "m00040"), ("m00051", "m00090")), 80_000, LIMIT, 9_000).text()
    assert text.startswith(f"{NUDGE_MARKER} Context is at 80% of the 100,000-token window")
    assert text.splitlines()[1:] == ["range m00002 m00040", "range m00051 m00090"]


# --- emergency truncation ---------------------------------------------------------------------


def test_truncation_waits_for_the_threshold():
    view, state = view_of(history(6, chars=8_000))
    assert plan_truncation(view, 94_999, LIMIT, state, RangesConfig()) == ()


def test_truncation_cuts_largest_first_until_under_target_outside_recent():
    messages = (
        user_text("go"),
        *step(0, 8_000),
        *step(1, 20_000),
        *step(2, 12_000),
        *step(3, 16_000),
        *step(4, 30_000),
    )
    config = RangesConfig(preserve_recent_messages=3)
    view, state = view_of(messages, config=config)
    # Target 0.9 x 95,000 = 85,500; step 4's result is recent. A cut output keeps 4,064
    # characters (2,000 + 64 of marker + 2,000) = 1,016 tokens. Largest first: step 1 saves
    # 3,984, step 3 2,984, step 2 1,984, step 0 984: 96,000 -> 86,064, every candidate used.
    assert plan_truncation(view, 96_000, LIMIT, state, config) == ("m00009", "m00017", "m00013", "m00005")
    # Cutting stops once under target: an 80,000-char output saves 20,000 - 1,017 = 18,983.
    big = (user_text("go"), *step(0, 8_000), *step(1, 80_000), *step(2, 12_000), *step(3, 30_000))
    big_view, big_state = view_of(big, config=config)
    assert plan_truncation(big_view, 96_000, LIMIT, big_state, config) == ("m00009",)
    # Already truncated outputs are not cut twice.
    state = replace(state, truncated=("m00009",))
    assert plan_truncation(view, 95_000, LIMIT, state, config) == ("m00017", "m00013", "m00005")


def test_truncation_skips_outputs_under_1000_tokens():
    view, state = view_of(history(6, chars=3_996))  # 999 tokens each
    assert plan_truncation(view, 99_000, LIMIT, state, RangesConfig()) == ()
