"""A row's time (workloads/audit/core.py ``_iso``): made by integer arithmetic below 2**32
seconds, the same text as ``datetime.fromtimestamp(ms / 1000)`` cut to milliseconds gives."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import example, given, settings
from hypothesis import strategies as st

from prefixbench.workloads.audit.core import _EXACT_ISO_MS, _iso


def _as_it_was(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


@settings(max_examples=2_000, deadline=None)
@given(st.integers(min_value=10**11, max_value=10**14 - 1))
@example(10**11)
@example(_EXACT_ISO_MS - 1)
@example(_EXACT_ISO_MS)
@example(1_756_857_599_999)  # the last millisecond of a day
@example(1_756_857_600_000)  # midnight
def test_a_row_time_reads_as_fromtimestamp_wrote_it(ms: int) -> None:
    assert _iso(ms) == _as_it_was(ms)


def test_relative_clocks_and_no_time() -> None:
    assert _iso(None) is None
    assert _iso(1_234) == "+1234ms"
    assert _iso(1_756_857_600_123) == "2025-09-03T00:00:00.123Z"
