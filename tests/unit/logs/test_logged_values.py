"""The small readers of logged values the gateway readers (Helicone, OpenRouter, LangSmith,
Langfuse) share: counts, dollars, milliseconds, text, and writes left unknown."""

from __future__ import annotations

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.workloads.logs.formats.common import clipped_text, logged_count, logged_dollars_of, logged_millis


def test_logged_count_reads_whole_floats_and_refuses_the_rest():
    assert logged_count(None, "f:1", "k") is None
    assert logged_count(12.0, "f:1", "k") == 12
    assert logged_count(7, "f:1", "k") == 7
    with pytest.raises(UserError, match="f:1"):
        logged_count(1.5, "f:1", "k")
    with pytest.raises(UserError):
        logged_count(float("nan"), "f:1", "k")


def test_logged_dollars_of_takes_the_first_readable_value():
    assert logged_dollars_of([None, True, -1, float("nan"), 2, 3]) == 2.0
    assert logged_dollars_of(["0.5", 1]) == 1.0  # text is not read unless asked
    assert logged_dollars_of(["x", "0.5", 1], text=True) == 0.5
    assert logged_dollars_of(["inf", "1e9"], text=True) is None
    assert logged_dollars_of([]) is None


def test_logged_millis_and_clipped_text():
    assert logged_millis(1234.6) == 1235
    assert [logged_millis(v) for v in (True, -1, 1e10, float("nan"), "5", None)] == [None] * 6
    assert clipped_text("  a b  ") == "a b"
    assert clipped_text("x" * 300) == "x" * 200
    assert clipped_text("abcdef", 3) == "abc"
    assert clipped_text(5) == ""


def test_writes_unknown_unless_named():
    usage = Usage(10, 0, 0, 5, 1, cache_reported=True)
    marked = gateway_usage.writes_unknown_unless_named(usage, False, "anthropic")
    assert not marked.writes_reported
    assert gateway_usage.writes_unknown_unless_named(usage, True, "anthropic") is usage
    assert gateway_usage.writes_unknown_unless_named(usage, False, "openai") is usage
    unreported = Usage(0, 0, 0, 5, 1, cache_reported=False)
    assert gateway_usage.writes_unknown_unless_named(unreported, False, "anthropic") is unreported
