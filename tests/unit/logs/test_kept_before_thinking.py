"""The one rule both Claude Code's and Cline's readers apply at a new user turn on a model that
drops earlier turns' thinking (``ProviderRules.strips_prior_thinking``): the cached prefix is kept
only up to the prompt of the previous turn's first call whose response thought.

``earlier`` is the chain before the call, newest first, as ``(model, thought, new_turn, call)``."""

from __future__ import annotations

from prefixbench.simulator.providers import ANTHROPIC, OPENAI
from prefixbench.workloads.logs.formats.common import kept_before_thinking

#: A model whose earlier turns' thinking Anthropic drops, and one whose it keeps.
STRIPS, KEEPS = "claude-sonnet-4-5-20250929", "claude-opus-4-6"


def _kept(earlier: list[tuple[str, bool, bool, str]], *, model: str = STRIPS, new_turn: bool = True, rules=ANTHROPIC):
    return kept_before_thinking(rules, model, new_turn, iter(earlier))


def test_the_models_stand_for_what_they_are_named() -> None:
    assert ANTHROPIC.strips_thinking(STRIPS) and not ANTHROPIC.strips_thinking(KEEPS)


def test_a_new_turn_keeps_up_to_the_previous_turns_first_call_that_thought() -> None:
    # previous turn: a (started it, no thinking), b (thought), c (thought); newest first
    earlier = [(STRIPS, True, False, "c"), (STRIPS, True, False, "b"), (STRIPS, False, True, "a")]
    assert _kept(earlier) == "b"


def test_the_call_that_started_the_previous_turn_counts_when_it_thought() -> None:
    earlier = [(STRIPS, True, False, "b"), (STRIPS, True, True, "a")]
    assert _kept(earlier) == "a"


def test_thinking_before_the_previous_turn_was_dropped_already() -> None:
    # the previous turn (a) did not think; the one before it (z) did
    earlier = [(STRIPS, False, True, "a"), (STRIPS, True, False, "z"), (STRIPS, False, True, "y")]
    assert _kept(earlier) is None


def test_a_call_to_another_model_ends_the_walk() -> None:
    earlier = [(STRIPS, False, False, "b"), (KEEPS, True, False, "a"), (STRIPS, True, True, "z")]
    assert _kept(earlier) is None
    # a thinking call of the same model after the switch still counts
    assert _kept([(STRIPS, True, False, "b"), (KEEPS, True, True, "a")]) == "b"


def test_nothing_is_dropped_without_a_new_turn_a_stripping_model_or_rules() -> None:
    earlier = [(STRIPS, True, True, "a")]
    assert _kept(earlier, new_turn=False) is None
    assert _kept([(KEEPS, True, True, "a")], model=KEEPS) is None
    assert _kept(earlier, rules=None) is None
    assert _kept(earlier, rules=OPENAI) is None
    assert _kept([]) is None


def test_the_walk_stops_at_the_previous_turns_start() -> None:
    # reading past the turn's start would ask for calls the rule never needs
    def chain():
        yield STRIPS, True, True, "a"
        raise AssertionError("read past the previous turn's start")

    assert kept_before_thinking(ANTHROPIC, STRIPS, True, chain()) == "a"
