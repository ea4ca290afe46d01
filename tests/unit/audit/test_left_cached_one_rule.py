"""What a call left cached is one rule (ProviderRules.left_cached): the audit's expected read of
the next call and keep-alive's judgement of an idle gap (did the next call read all of it?) both
use it. keep-alive had its own copy, which took the whole prompt where the audit bounds the next
read by what the call read and wrote: a relay's write of 0 after its lane wrote, and an
Anthropic-shaped usage with no write field. There a next call that read all the audit expects
was judged a short read, ending the survival bound a client takes from its history."""

from __future__ import annotations

import pytest

from prefixbench.simulator.providers import rules_for
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import _identity_expected
from prefixbench.workloads.audit.precedence import Previous
from prefixbench.workloads.audit.whatif import _left_cached, _read_in_full
from prefixbench.workloads.logs.trace import TraceRequest

T0 = 1_756_860_000_000


def _call(provider: str, model: str, seq: int, usage: Usage) -> TraceRequest:
    return TraceRequest(file="s.jsonl", line=seq + 1, lane="main", lane_kind="main", seq=seq, sent_ms=T0 + seq * 600_000,
                        ready_ms=T0 + seq * 600_000 + 1000, provider=provider, model=model, usage=usage)


CASES = [
    # A relay the audit cannot name, counting writes: its lane wrote before, this call wrote 0, so
    # it stored nothing past its 10,000-token read (the 2,000 uncached were never written).
    ("unknown", "claude-opus-4-8", Usage(cache_read=10_000, uncached=2_000), True, 10_000),
    # Anthropic-shaped usage whose log has no write field: the audit expects its read back, no more.
    ("anthropic", "claude-sonnet-4-20250514", Usage(cache_read=8_000, uncached=4_000, writes_reported=False), False, 8_000),
    # Anthropic with writes: what it read and wrote (unchanged).
    ("anthropic", "claude-sonnet-4-20250514", Usage(cache_read=8_000, cache_write_5m=3_000, uncached=5), False, 11_000),
    # OpenAI, no write count: its whole prompt (unchanged).
    ("openai", "gpt-5.1", Usage(cache_read=8_000, uncached=4_000, writes_reported=False), False, 12_000),
]


@pytest.mark.parametrize("provider, model, usage, lane_wrote, left", CASES)
def test_keep_alive_takes_what_a_call_left_cached_by_the_audits_rule(provider, model, usage, lane_wrote, left):
    prev = _call(provider, model, 0, usage)
    assert _left_cached(prev, lane_wrote) == left == rules_for(provider).left_cached(usage, lane_wrote)
    # The next call, idle 10 minutes, reads exactly what the audit expects of it: no miss there,
    # and keep-alive judges the entry to have outlived the gap (read in full).
    nxt = _call(provider, model, 1, Usage(cache_read=0, uncached=20_000))
    expected = _identity_expected(nxt, Previous(prev, 0, 1, lane_wrote=lane_wrote))
    assert expected <= left
    read = _call(provider, model, 1, Usage(cache_read=expected, uncached=20_000 - expected))
    assert _read_in_full(read, prev, lane_wrote)
    # Half of it is a short read.
    half = _call(provider, model, 1, Usage(cache_read=expected // 2, uncached=20_000 - expected // 2))
    assert not _read_in_full(half, prev, lane_wrote)
