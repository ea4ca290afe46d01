"""What to change is advice a user can apply, credited with what it changes: a TTL fix is ranked
by what one setting per lane kind achieves (not a per-session pick in hindsight), the one-TTL
settings are listed where they save, a gap keep-alive bridges past a logged 1 h TTL is
recoverable and keep-alive is credited with it, and a Codex TTL fix says it has no setting."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest

from prefixbench.workloads.audit.advice import AGENT_SETTINGS, advise
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import what_if
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl
from tests.unit.audit.test_advice import _codex_idle


def _two(tmp_path: Path, name: str, second: str, first_usage: dict, second_usage: dict,
         version: str | None = "1.0.98") -> Path:
    """A Claude Code session of two requests, the second sent at ``second`` (hh:mm:ss), written by
    Claude Code ``version`` (None: the transcript names none)."""
    t = Transcript(name, version=version)  # type: ignore[arg-type]
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant(f"{name}-r1", "2025-09-03T00:00:02.000Z", [first_usage])
    t.user("next", f"2025-09-03T{second}.000Z")
    t.assistant(f"{name}-r2", f"2025-09-03T{second[:-2]}02.000Z", [second_usage])
    return write_jsonl(tmp_path / f"{name}.jsonl", t.lines)


def _idle_20m(tmp_path: Path, version: str | None = "1.0.98") -> Path:
    """Idle 20 minutes on 5 m writes: a ttl-expired miss a 1 h TTL would have read."""
    return _two(tmp_path, "idle", "00:20:00", cc_usage(3, 20_000, 0, 40), cc_usage(3, 20_300, 0, 40), version)


def _advise(paths: list[Path]):
    trace = load_trace(paths)
    return advise(run_audit(paths, trace=trace), trace)


def test_ttl_auto_is_ranked_by_one_ttl_per_lane_kind_not_a_pick_per_session(tmp_path: Path) -> None:
    """Xu-Wentao/dotfile: ttl-auto ranked first, "saves $3.1337", by giving 1 h to 6 of 80 lanes in
    hindsight; Claude Code's promptCacheTtl applies to every main session. Here one main session
    idles 20 min (1 h pays) and another writes 100,000 tokens it reads 2 min later (1 h costs 2x): over the main
    lanes 1 h costs more, so the setting is 5 m, as logged, and saves nothing; the per-session pick
    is stated as an upper bound only."""
    big = _two(tmp_path, "big", "00:02:00", cc_usage(3, 100_000, 0, 40), cc_usage(3, 300, 100_000, 40))
    result = _advise([_idle_20m(tmp_path), big])
    recs = {rec.fix: rec for rec in result.recommendations}
    auto = recs["ttl-auto"]
    assert auto.saved_usd is not None and auto.saved_usd <= 0
    assert "picked per lane in hindsight" in auto.detail and "an upper bound, not a setting" in auto.detail
    assert "5m on the 2 main-session lane(s)" in auto.detail
    assert "one TTL for the main session and one for subagents" in auto.change


def test_the_5_minute_setting_is_listed_with_its_setting_where_it_saves(tmp_path: Path) -> None:
    """ttl-5m (FORCE_PROMPT_CACHING_5M=1) saved $2.2506 under --what-if all and was not in what to
    change: a session writing at 1 h that never idles past 5 m pays the 1 h premium for nothing."""
    hour = _two(tmp_path, "hour", "00:02:00", cc_usage(3, 20_000, 0, 40, write_1h=20_000),
                cc_usage(3, 300, 20_000, 40, write_1h=300), "2.1.120")
    recs = {rec.fix: rec for rec in _advise([_idle_20m(tmp_path, "2.1.120"), hour]).recommendations}
    five = recs["ttl-5m"]
    assert five.saved_usd is not None and five.saved_usd > 0
    assert five.setting == "FORCE_PROMPT_CACHING_5M=1"  # (Claude Code 2.1.120: it reads the setting)


@pytest.mark.parametrize(("versions", "five", "auto"), [
    # All older than the release the changelog names: a user would set what their version ignores.
    (("2.1.87", "2.1.96"), "; needs Claude Code 2.1.108 or later (this log's sessions ran 2.1.87-2.1.96)",
     "; needs Claude Code 2.1.243 or later for promptCacheTtl and subagentPromptCacheTtl, 2.1.108 or later for "
     "ENABLE_PROMPT_CACHING_1H (this log's sessions ran 2.1.87-2.1.96)"),
    # One session at or past 2.1.108: nothing new for it; promptCacheTtl still needs 2.1.243.
    (("2.1.96", "2.1.120"), "", "; needs Claude Code 2.1.243 or later for promptCacheTtl and subagentPromptCacheTtl "
     "(this log's sessions ran 2.1.96-2.1.120)"),
    (("2.1.250", "2.1.250"), "", ""),
    # The transcripts name no version: the release each is read from.
    ((None, None), "; from Claude Code 2.1.108",
     "; promptCacheTtl and subagentPromptCacheTtl from Claude Code 2.1.243, ENABLE_PROMPT_CACHING_1H from 2.1.108"),
])
def test_a_setting_says_the_release_it_needs_where_the_logs_sessions_ran_older(
        tmp_path: Path, versions: tuple[str | None, str | None], five: str, auto: str) -> None:
    """KaceyBui/Claude-global-test@382b32e, sessions of Claude Code 2.1.87-2.1.96: ttl-5m's setting
    was FORCE_PROMPT_CACHING_5M=1 with its source "Claude Code changelog, 2.1.108" and no word that
    those versions ignore it (ttl-auto's promptCacheTtl is read from 2.1.243)."""
    idle = _idle_20m(tmp_path, versions[0])
    hour = _two(tmp_path, "hour", "00:02:00", cc_usage(3, 20_000, 0, 40, write_1h=20_000),
                cc_usage(3, 300, 20_000, 40, write_1h=300), versions[1])
    recs = {rec.fix: rec for rec in _advise([idle, hour]).recommendations}
    assert recs["ttl-5m"].setting == "FORCE_PROMPT_CACHING_5M=1" + five
    auto_setting = AGENT_SETTINGS[("claude-code", "ttl-auto")].setting
    assert recs["ttl-auto"].setting == f"{auto_setting}{auto}"


def test_a_gap_keep_alive_bridges_past_a_logged_1h_ttl_is_recoverable_and_credited_to_it(tmp_path: Path) -> None:
    """A gap of 1h20m after a 1 h write was "unavoidable" (the split read a gap past Anthropic's
    longest TTL as past any keep-alive, "the row does not say which TTL its lane asked for"), while
    keep-alive, re-simulated, bridged it and was credited with other misses. The log says the
    write was 1 h: keep-alive is re-simulated, recovers it, and the split counts it recoverable."""
    path = _two(tmp_path, "long", "01:20:00", cc_usage(3, 20_000, 0, 40, write_1h=20_000),
                cc_usage(3, 20_300, 0, 40, write_1h=20_300))
    result = _advise([path])
    (miss,) = [row for row in result.rows if row.cause == "ttl-expired"]
    assert miss.loss_class == "recoverable"
    assert result.loss_split.recoverable_requests == 1 and result.loss_split.recoverable_usd > 0
    (rec,) = [rec for rec in result.recommendations if rec.fix == "keep-alive"]
    assert rec.causes == ("ttl-expired",) and rec.lost_usd == miss.lost_usd and rec.saved_usd > 0
    assert "changes 0 of these" not in rec.pattern


def test_a_codex_ttl_fix_says_no_setting_is_documented(tmp_path: Path) -> None:
    path = _codex_idle(tmp_path)
    trace = load_trace([path])
    result = run_audit([path], trace=trace)
    recs = {r.fix: r for r in advise(result, trace, what_ifs=what_if(*trace, ["ttl-1h", "ttl-auto"])).recommendations}
    for fix in ("ttl-1h", "ttl-auto"):
        assert recs[fix].setting == "none documented for Codex CLI", recs[fix]


def test_keep_alive_names_openai_retention_only_where_the_log_has_openai(tmp_path: Path) -> None:
    path = _idle_20m(tmp_path)
    (claude,) = what_if(*load_trace([path]), ["keep-alive"])
    assert "OpenAI" not in claude.assumption
    codex = _codex_idle(tmp_path)
    (openai,) = what_if(*load_trace([codex]), ["keep-alive"])
    assert "OpenAI's in-memory retention" in openai.assumption


def test_a_fix_that_made_a_miss_recoverable_is_listed_even_where_it_does_not_pay(tmp_path: Path) -> None:
    """The split calls a miss recoverable because keep-alive, re-simulated, reads it: keep-alive is
    then in what to change, whatever its pings cost, as the split's recoverable fix."""
    from prefixbench.workloads.audit.advice import Resimulated, follow_resimulation, rank
    from tests.unit.audit.test_advice_honesty import _ran

    path = _two(tmp_path, "long", "01:20:00", cc_usage(3, 20_000, 0, 40, write_1h=20_000),
                cc_usage(3, 20_300, 0, 40, write_1h=20_300))
    result = run_audit([path], trace=load_trace([path]))
    (miss,) = [row for row in result.rows if row.cause == "ttl-expired"]
    read = SimpleNamespace(file=miss.file, lane=miss.lane, index=miss.index, saved_usd=Decimal("-0.01"), priced=True,
                           reported_read=0, counterfactual_read=20_000)
    found = Resimulated({"keep-alive": _ran("keep-alive", "-0.01", (read,))}, {})
    followed = follow_resimulation(result, found)
    assert [row.loss_class for row in followed.rows if row.cause == "ttl-expired"] == ["recoverable"]
    (rec,) = rank(followed, found)
    assert rec.fix == "keep-alive" and rec.causes == ("ttl-expired",) and rec.saved_usd < 0


def test_ttl_auto_s_assumption_calls_the_hindsight_pick_an_upper_bound_only_where_it_is_one(tmp_path: Path) -> None:
    """The detail calls the per-lane pick "no upper bound" where lanes sharing entries make it save
    less than the setting; the fix's assumption said it "is only an upper bound" on every log. It
    now says what the detail does: a bound where it saves at least the setting, else none."""
    (auto,) = what_if(*load_trace([_idle_20m(tmp_path)]), ["ttl-auto"])
    assumption = auto.assumption
    assert "only an upper bound" not in assumption
    assert "an upper bound where it saves at least the setting's figure" in assumption
    assert "no bound" in assumption
