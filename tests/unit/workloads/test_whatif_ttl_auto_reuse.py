"""ttl-auto reuses a one-TTL plan's evaluation only where its final plan asks every request for
what that plan asks (whatif._ttl_auto's evaluate). A lane ttl-auto does not pick for (its
Anthropic requests have no prefix or body, so no ttl fix chooses for it) asks for nothing under
ttl-auto, while the 1 h plan asks its requests for 1 h: the plans differ, so ttl-auto must be
re-simulated, not handed the 1 h plan's changes. Replacing the check with ``if True`` passed
every test."""

from __future__ import annotations

from msgspec.structs import replace

import prefixbench.workloads.audit.whatif as whatif
from prefixbench.workloads.audit.whatif import _ttl_for, lane_bounds, what_if
from tests.unit.workloads.test_whatif import idle_lane


def _spy(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = whatif._evaluate

    def evaluate(fix, *args, **kwargs):
        calls.append(fix)
        return real(fix, *args, **kwargs)

    monkeypatch.setattr(whatif, "_evaluate", evaluate)
    return calls


def test_a_one_ttl_final_plan_is_reused(monkeypatch) -> None:
    requests, sums = idle_lane(20 * 60_000)  # one lane, 1 h pays: the final plan is the 1 h plan
    calls = _spy(monkeypatch)
    (auto,) = what_if(requests, sums, ["ttl-auto"])
    assert "1 h on 1 of 1" in auto.detail and auto.saved_usd > 0
    assert "ttl-auto" not in calls  # (the 1 h plan's evaluation, reused)


def test_a_lane_no_pick_reaches_is_re_simulated_not_handed_the_one_ttl_plan(monkeypatch) -> None:
    requests, sums = idle_lane(20 * 60_000)
    # A second lane of the same file: Anthropic requests with usage but no prefix (nor body).
    bare = [replace(r, lane="other", prefix=None, seq=r.seq + 10, line=r.line + 10) for r in requests]
    assert set(lane_bounds(requests + bare)) == {("idle.jsonl", "main")}  # ttl-auto picks for "main" only
    assert all(_ttl_for(r, "1h") == "1h" for r in bare)  # ... while the 1 h plan asks these for 1 h
    calls = _spy(monkeypatch)
    (auto,) = what_if(requests + bare, sums, ["ttl-auto"])
    assert "1 h on 1 of 1" in auto.detail
    assert calls.count("ttl-auto") == 1, calls
