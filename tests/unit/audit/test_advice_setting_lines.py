"""Every fix in what to change names its agent's setting or says none is documented for that
agent: a user audit found a Cline-family TTL fix (Roo Code task folders) and Claude Code's
``1 keep-alive saves $6.5710`` with no setting line and no word that none exists (only a Codex
TTL fix said ``none documented for Codex CLI``); Roo Code's controlled-hierarchy tasks
(jsboige-mcp-servers@dbe9a89) now read ``1 keep-alive Cline, Roo Code or Kilo Code saves
$0.1867`` with ``setting: none documented for any of: Cline, Roo Code or Kilo Code``."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefixbench.reports.advice import advice_html, advice_lines
from prefixbench.reports.audit import audit_record
from prefixbench.workloads.audit import advice
from prefixbench.workloads.audit.advice import names_setting, no_setting
from prefixbench.workloads.logs.formats.opencode import KILO_7
from tests.unit.audit.fixtures import cc_usage
from tests.unit.audit.test_advice_settable import _advise, _two

#: The fixes what to change can rank (each a --what-if of its own).
FIXES = (*advice.GENERIC_CHANGE, "keep-prefix-compaction")


@pytest.mark.parametrize("fmt", [*advice.AGENTS, "some-new-format"])
@pytest.mark.parametrize("fix", FIXES)
def test_every_agent_and_fix_names_a_setting_or_says_none_is_documented(fmt: str, fix: str) -> None:
    agent, _, setting, source = advice._agent_advice(fix, [fmt], (True, frozenset()), None)
    found = advice.AGENT_SETTINGS.get((fmt, fix))
    if found is not None and found.setting:
        assert setting == found.setting and names_setting(setting) and source == found.source
    else:
        one_of = "any of: " if fmt == "cline" else ""  # (the Cline family's name lists three agents)
        assert setting == no_setting(agent) == f"none documented for {one_of}{agent}", (fmt, fix, setting)
        assert not names_setting(setting)
        # The none-line's evidence only where it was looked for for this fix (found, or none).
        assert source == (found.source if found is not None else advice.NO_SETTING_SOURCES.get((fmt, fix))), (fmt, fix)


def test_kilo_7_cites_its_missing_cache_lifetime_on_its_keep_alive_and_ttl_fixes_only() -> None:
    """A review found every Kilo 7 fix with no setting of its own (pin-model, static-system,
    stagger-subagents, breakpoints) citing config.ts's "no warming, no cache lifetime" and #11800,
    evidence about the cache lifetime alone."""
    cited = {fix for fix in FIXES if "11800" in (advice._agent_advice(fix, [KILO_7], (True, frozenset()), None)[3] or "")}
    assert cited == {"keep-alive", "ttl-1h", "ttl-5m", "ttl-auto"}
    for fix in ("pin-model", "static-system", "stagger-subagents", "breakpoints"):
        agent, _, setting, source = advice._agent_advice(fix, [KILO_7], (True, frozenset()), None)
        assert (agent, setting, source) == (KILO_7, f"none documented for {KILO_7}", None), fix
    assert KILO_7 in advice.AGENTS  # (so the test above covers it)


def test_agents_sharing_a_fix_with_no_setting_say_so_once_naming_them_all() -> None:
    agent, change, setting, _ = advice._agent_advice("keep-alive", ["claude-code", "cline"], (True, frozenset()), None)
    assert agent == "Claude Code, Cline, Roo Code or Kilo Code"
    # "any of" them: "for Claude Code, Cline, Roo Code or Kilo Code" read as alternatives.
    assert setting == "none documented for any of: Claude Code, Cline, Roo Code or Kilo Code"
    assert change == advice.GENERIC_CHANGE["keep-alive"]


def test_a_mixed_agents_keep_alive_says_its_change_says_what_to_do_not_what_to_ask_for() -> None:
    """Keep-alive asks the provider for nothing: ``(the change says what to ask for)`` is a TTL
    fix's wording."""
    _, _, setting, _ = advice._agent_advice("keep-alive", ["pi", "claude-code"], (True, frozenset()), None)
    assert setting == ('pi: cacheWarming: "idle" (settings.json); Claude Code: none documented (the change says what to do)')
    _, _, setting, _ = advice._agent_advice("ttl-1h", ["claude-code", "codex"], (True, frozenset()), None)
    assert setting.endswith("Codex CLI: none documented (the change says what to ask for)")


def _long_gap(tmp_path: Path, reason: str | None = None) -> Path:
    """A Claude Code session idle 1h20m after a 1 h write; the provider's miss reason if given."""
    second = cc_usage(3, 20_300, 0, 40, write_1h=20_300)
    if reason is not None:
        second["cache_miss_reason"] = reason
    return _two(tmp_path, "long", "01:20:00", cc_usage(3, 20_000, 0, 40, write_1h=20_000), second)


def test_claude_code_keep_alive_says_no_setting_is_documented_in_every_view(tmp_path: Path) -> None:
    result = _advise([_long_gap(tmp_path)])
    (rec,) = [rec for rec in result.recommendations if rec.fix == "keep-alive"]
    assert rec.rank == 1 and rec.setting == "none documented for Claude Code"
    text = "\n".join(advice_lines(result))
    assert "1. keep-alive: " in text and "   setting: none documented for Claude Code" in text
    assert "   source:" not in text  # (a none-line has no source of its own)
    html = advice_html(audit_record(result))
    assert "setting: none documented for Claude Code" in html


@pytest.mark.parametrize(("fix", "ttl"), [("ttl-1h", '"1h"'), ("ttl-5m", '"5m"'), ("ttl-auto", '"1h" or "5m"')])
def test_opencode_ttl_fixes_name_its_documented_cache_ttl(fix: str, ttl: str) -> None:
    """OpenCode documents a cache lifetime (its Warming page sets ``"providers": {"anthropic":
    {"settings": {"cache": {"ttl": "1h"}}}}`` and links models#cache-lifetime): its TTL fixes said
    ``none documented for OpenCode``."""
    agent, change, setting, source = advice._agent_advice(fix, ["opencode"], (True, frozenset()), None)
    assert agent == "OpenCode" and names_setting(setting)
    assert setting.startswith(f"cache.ttl {ttl} in the settings of the ") and "opencode.json" in setting
    assert "https://opencode.ai/docs/warming/" in source and "models#cache-lifetime" in source
    assert change == advice._ttl_change(fix, (True, frozenset()))  # (Anthropic's words: a TTL per write)


def test_opencode_ttl_setting_is_not_named_for_lanes_that_pick_a_retention_per_request() -> None:
    """On OpenAI (a retention per request, no TTL per write) cache.ttl is not the setting to name."""
    _, change, setting, _ = advice._agent_advice("ttl-1h", ["opencode"], (False, frozenset({"24h"})), None)
    assert setting == "none documented for OpenCode"
    assert "prompt_cache_retention" in change


def test_a_cline_family_ttl_fix_says_where_no_setting_was_found_per_agent() -> None:
    """A Cline-family TTL fix's "none documented" cited Kilo-Org/kilocode#11800, an issue about
    Kilo Code 7 (rebuilt on OpenCode, kilo.json), not the task-folder agents: each of Cline, Roo
    Code and Kilo Code is now cited where its breakpoints were read (no ttl: the 5 m default)."""
    for fix in ("ttl-1h", "ttl-5m", "ttl-auto"):
        agent, change, setting, source = advice._agent_advice(fix, ["cline"], (True, frozenset()), None)
        assert setting == "none documented for any of: Cline, Roo Code or Kilo Code"
        assert change == advice._ttl_change(fix, (True, frozenset()))  # (the provider's change, as before)
        assert source is not None and "11800" not in source, source
        for cited in ("cline/cline@21cb8d2", "RooCodeInc/Roo-Code@cb83656", "Kilo-Org/kilocode@0fc86ce"):
            assert cited in source, (fix, source)
        assert not advice.names_setting(setting)  # (so the report gives it on a see: line)
    # Keep-alive is not a TTL fix: no source, as before.
    assert advice._agent_advice("keep-alive", ["cline"], (True, frozenset()), None)[3] is None


@pytest.mark.parametrize("fix", ["ttl-1h", "ttl-5m", "ttl-auto", "keep-alive"])
def test_kilo_code_7_gets_no_opencode_cache_setting(fix: str) -> None:
    """Kilo Code 7 (the OpenCode reader names it from its files) has neither OpenCode's warming nor
    its cache.ttl: its config schema is strict and holds no such key, and a cache lifetime is an
    open request (Kilo-Org/kilocode#11800). Its line says none, with where that was read."""
    from prefixbench.workloads.logs.formats.opencode import KILO_7

    agent, change, setting, source = advice._agent_advice(fix, [KILO_7], (True, frozenset()), None)
    assert agent == KILO_7 and setting == f"none documented for {KILO_7}"
    assert "config.ts" in source and "Kilo-Org/kilocode/issues/11800" in source
    assert "opencode.json" not in change and "warming" not in change


def test_kilo_code_7_compaction_names_its_own_config_file() -> None:
    from prefixbench.workloads.logs.formats.opencode import KILO_7

    _, _, setting, source = advice._agent_advice("keep-prefix-compaction", [KILO_7], (True, frozenset()), None)
    assert setting == "compaction.auto, compaction.prune, compaction.reserved (kilo.json)"
    assert "Kilo-Org/kilocode@002186d packages/opencode/src/config/config.ts" in source


def test_opencode_and_kilo_code_7_lanes_each_get_their_own_setting() -> None:
    from prefixbench.workloads.logs.formats.opencode import KILO_7

    agent, _, setting, _ = advice._agent_advice("ttl-1h", ["opencode", KILO_7], (True, frozenset()), None)
    assert agent == f"OpenCode, {KILO_7}"
    assert setting.startswith("OpenCode: cache.ttl \"1h\"") and f"{KILO_7}: none documented" in setting
