"""A lane start's inferred head and the provider's minimum (workloads/audit/precedence.py).

* A lane's first call read less than the head other lanes' calls read: without a body nothing shows
  its head was theirs, so the read ending "inside the head" is no change of the system prompt
  (austinweitao/claude-backup: a new session in another project, through a relay, was ranked the
  top fix "keep the system prompt stable mid-session").
* The minimum bounds what the provider's rule says: the prompt (Gemini, Anthropic...) or each read
  (OpenAI): a 4,007-token head read by an 8,104-token Gemini prompt is not below a 4,096 minimum
  that is the prompt's (hoon9732/devenv_vault's .gemini sessions).
"""

from __future__ import annotations

from msgspec.structs import replace
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.locate import Location
from prefixbench.workloads.audit.precedence import (
    Evidence,
    Prediction,
    Previous,
    find_cause,
)
from prefixbench.workloads.logs.trace import Prefix, TraceRequest


def _req(*, provider: str, model: str, usage: Usage, seq: int = 0, parent: str | None = None,
         sent_ms: int | None = None) -> TraceRequest:
    return TraceRequest(
        file="p/s.jsonl", line=seq + 32, lane="main", lane_kind="main", seq=seq, sent_ms=sent_ms, ready_ms=None,
        provider=provider, model=model, envelope=(), usage=usage, body=None,  # type: ignore[arg-type]
        prefix=Prefix("h", f"n{seq}", parent),
    )


def _ev(r: TraceRequest, *, expected: int, prev: TraceRequest | None = None, location: Location | None = None) -> Evidence:
    assert r.usage is not None
    return Evidence(
        r=r, prev=None if prev is None else Previous(prev, 0, 0), pred=Prediction(0, 0, 0, "chain"), tick=1_000,
        head=expected, lost=expected - r.usage.cache_read, expected=expected, compaction_at={}, location=location,
    )


def _inside_head(read: int, prompt: int) -> Location:
    return Location(0, "head", read, prompt, "", "the system prompt or the tool list (neither is in the log)", "head")


def test_a_lane_start_below_an_inferred_head_is_no_system_change():
    for provider, model in (("unknown", "claude-opus-4-8"), ("anthropic", "claude-opus-4-5")):
        r = _req(provider=provider, model=model, usage=Usage(cache_read=1_770, cache_write_5m=158, uncached=32_726))
        found = find_cause(_ev(r, expected=19_205, location=_inside_head(1_770, 34_654)))
        assert found.cause == "unexplained", (provider, found)
        assert "other lanes' calls read under the same inferred head" in found.detail
        assert "no body is logged" in found.detail and "nothing changed inside its lane" in found.detail


def test_a_lane_start_after_a_logged_tool_change_says_so_but_is_no_change_of_its_lane():
    # Eduardodmb/ClaudeHome: three lane starts read 0 of a 14,223-token head after a logged
    # deferred_tools_delta, and were tools-changed (recoverable, by a fix that never re-simulated them).
    r = _req(provider="anthropic", model="claude-opus-4-5", usage=Usage(cache_read=0, cache_write_5m=20_000, uncached=390))
    where = Location(0, "head", 0, 20_390, "", "the tool list changed (logged: deferred_tools_delta)", "tools")
    found = find_cause(_ev(r, expected=14_223, location=where))
    assert found.cause == "unexplained"
    assert "(the tool list changed (logged: deferred_tools_delta), before its first call: its head may differ from theirs)" in found.detail


def test_a_read_inside_the_head_mid_lane_is_still_located():
    # The same read after a call of its own lane: the lane's own head is what fell short.
    prev = _req(provider="anthropic", model="claude-opus-4-5", usage=Usage(cache_read=19_205, cache_write_5m=9_000, uncached=10))
    r = _req(provider="anthropic", model="claude-opus-4-5", seq=1, parent="n0",
             usage=Usage(cache_read=1_770, cache_write_5m=30_000, uncached=10))
    found = find_cause(_ev(r, expected=28_205, prev=prev, location=_inside_head(1_770, 31_780)))
    assert found.cause == "system-changed"


def test_the_gemini_minimum_is_the_prompts_not_the_expected_reads():
    pro = "gemini-2.5-pro"  # minimum 4,096 on the page of September 2025
    sent = 1_757_642_000_000  # 2025-09-12
    # A lane start of 8,104 tokens that read nothing of a 4,007-token head: its prompt is cacheable.
    r = _req(provider="gemini", model=pro, usage=Usage(cache_read=0, uncached=8_104), sent_ms=sent)
    found = find_cause(_ev(r, expected=4_007))
    assert found.cause != "below-minimum", found
    # A prompt below the minimum is.
    small = _req(provider="gemini", model=pro, usage=Usage(cache_read=0, uncached=3_900), sent_ms=sent)
    found = find_cause(_ev(small, expected=3_000))
    assert found.cause == "below-minimum"
    assert found.detail == "its prompt (3,900 tokens) is below gemini-2.5-pro's minimum of 4,096: nothing of it is cached"


def test_anthropic_minimum_is_the_cacheable_prompts():
    opus = "claude-opus-4-5"  # minimum 4,096
    prev = _req(provider="anthropic", model=opus, usage=Usage(cache_read=0, cache_write_5m=3_000, uncached=10))
    above = _req(provider="anthropic", model=opus, seq=1, parent="n0", usage=Usage(cache_read=0, cache_write_5m=5_000, uncached=10))
    assert find_cause(_ev(above, expected=3_000, prev=prev)).cause != "below-minimum"
    # Nothing written of a 4,010-token prompt: below the minimum.
    below = _req(provider="anthropic", model=opus, seq=1, parent="n0", usage=Usage(cache_read=0, uncached=4_010))
    assert find_cause(_ev(below, expected=3_000, prev=prev)).cause == "below-minimum"
    # Nothing written of a 9,000-token prompt: a missing breakpoint, maybe, not the minimum.
    unmarked = _req(provider="anthropic", model=opus, seq=1, parent="n0", usage=Usage(cache_read=0, uncached=9_000))
    assert find_cause(_ev(unmarked, expected=3_000, prev=prev)).cause != "below-minimum"


def test_openai_minimum_bounds_each_read():
    # OpenAI reports a read shorter than 1,024 tokens as 0, whatever the prompt's length.
    r = _req(provider="openai", model="gpt-5", usage=Usage(cache_read=0, uncached=9_000))
    found = find_cause(_ev(r, expected=900, prev=_req(provider="openai", model="gpt-5", usage=Usage(cache_read=0, uncached=900))))
    assert found.cause == "below-minimum"
    assert "below gpt-5's minimum of 1,024 for a read" in found.detail
    assert find_cause(replace(_ev(r, expected=2_048), lost=2_048)).cause != "below-minimum"
