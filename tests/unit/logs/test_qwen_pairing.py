"""Qwen Code's pairing of assistant records with api_response telemetry events
(:class:`~prefixbench.workloads.logs.formats.gemini_cli._Unpaired`): the same events paired as the
scan of every unpaired event it replaced, and no scan of them all per record."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.gemini_cli import _Unpaired


def _scan(pending: list, usage: Usage, since: int) -> tuple | None:
    """The pairing as it was (a scan of the unpaired list per record), the reference."""
    at = next((n for n in range(len(pending) - 1, -1, -1) if pending[n][3] == usage), None)
    if at is None:
        return None
    event = pending.pop(at)
    retries = []
    n = at - 1
    while n >= 0 and pending[n][0] > since:
        if pending[n][3].prompt == usage.prompt and not pending[n][4]:
            retries.append(pending.pop(n))
        n -= 1
    return event, retries[::-1]


_USAGES = st.builds(lambda read, uncached, output: Usage(read, 0, 0, uncached, output),
                    st.sampled_from([0, 100]), st.sampled_from([5, 105]), st.sampled_from([1, 2]))
# Each step: an event (its usage, its subagent or "") or a record's call of a usage.
_STEPS = st.lists(st.tuples(st.booleans(), _USAGES, st.sampled_from(["", "", "explore-1"])), max_size=60)


@settings(max_examples=300, deadline=None)
@given(_STEPS)
def test_pairing_by_usage_pairs_as_the_scan_of_every_unpaired_event_did(steps: list) -> None:
    keyed, scanned, since = _Unpaired(), [], 0
    for line, (is_event, usage, agent) in enumerate(steps, start=1):
        if is_event:
            event = (line, None, "qwen3-coder-plus", usage, agent)
            keyed.append(event)
            scanned.append(event)
            continue
        found = keyed.pair(usage, since)
        assert found == _scan(scanned, usage, since)
        if found is not None:
            since = found[0][0]
    assert list(keyed) == scanned
    assert bool(keyed) == bool(scanned)


class _Counted:
    """A usage that counts how often it is compared (dict lookups of unequal hashes compare none)."""

    compared = 0

    def __init__(self, n: int) -> None:
        self.n = n
        self.prompt = n

    def __hash__(self) -> int:
        return self.n

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return isinstance(other, _Counted) and other.n == self.n


def test_a_record_finds_its_event_without_comparing_every_unpaired_one() -> None:
    # 2,000 events no record pairs, then 2,000 records of other counts and 2,000 of the events'
    # own (latest first): the scan compared 4 million times; by usage, a few per record.
    unpaired = _Unpaired()
    for n in range(2000):
        unpaired.append((n + 1, None, "m", _Counted(n), "agent"))  # type: ignore[arg-type]
    _Counted.compared = 0
    for n in range(2000):
        assert unpaired.pair(_Counted(10_000 + n), 0) is None  # type: ignore[arg-type]
    for n in reversed(range(2000)):
        found = unpaired.pair(_Counted(n), n + 1)  # type: ignore[arg-type]
        assert found is not None and found[0][0] == n + 1
    assert _Counted.compared <= 4 * 4000
    assert not unpaired
