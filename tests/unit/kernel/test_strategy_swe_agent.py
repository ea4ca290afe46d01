"""swe-agent-last-n-observations (kernel/strategies/swe_agent.py): which outputs are elided, and when."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions
from prefixbench.kernel.strategies.foldview import tool_text
from prefixbench.kernel.strategies.swe_agent import LastNObservations, factory
from tests.unit.kernel.agent_sessions import context, grow, rewrites, session_with


def _elided(view):
    return [i for i, m in enumerate(view) if m.role == "tool" and tool_text(m).startswith("Old environment output: (")]


def test_all_but_the_newest_n_outputs_are_elided_to_a_line_count():
    session = session_with([("fix", 20)])
    engine = LastNObservations(n=5)
    engine.before_step(context(session, 10**7))
    view = engine.view(session)
    assert _elided(view) == [2 * k + 2 for k in range(15)]
    lines = len(tool_text(session.derive_messages()[2]).splitlines())
    assert lines == 40 and tool_text(view[2]) == f"Old environment output: ({lines} lines omitted)"
    assert view[-10:] == session.derive_messages()[-10:]  # the newest five steps whole
    assert view[0] == session.derive_messages()[0]  # the task (the first observation) is never elided
    assert rewrites(session) == ["mask"]


def test_every_new_output_moves_the_edge_unless_polling_holds_it():
    session = session_with([("fix", 5)])
    engine = LastNObservations(n=5)
    engine.before_step(context(session, 10**7))
    assert rewrites(session) == []  # five outputs and the task: nothing to elide yet
    for _ in range(6):
        grow(session, 1)
        engine.before_step(context(session, 10**7))
    assert rewrites(session) == ["mask"] * 6
    session = session_with([("fix", 5)])
    engine = LastNObservations(n=5, polling=3)
    for _ in range(6):
        grow(session, 1)
        engine.before_step(context(session, 10**7))
    assert len(rewrites(session)) == 2  # the edge moves every third output
    assert 5 <= len([m for m in engine.view(session) if m.role == "tool"]) - len(_elided(engine.view(session))) <= 8


def test_the_factory_defaults_to_the_paper_config_and_refuses_zero():
    assert (factory(1, EngineOptions()).n, factory(1, EngineOptions()).polling) == (5, 1)
    with pytest.raises(ValueError, match="positive"):
        factory(1, EngineOptions(config={"n": 0}))
