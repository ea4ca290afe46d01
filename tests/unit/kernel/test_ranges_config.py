"""RangesConfig: acp-kernel's defaults, and one clear line naming the key for bad values."""

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.engines.ranges_config import RangesConfig


def test_defaults_are_acp_kernels():
    config = RangesConfig()
    assert (config.tier2_trigger, config.tier3_trigger, config.promotion_threshold) == (5, 10, 5)
    assert (config.min_compress_range, config.min_summary_length, config.max_summary_length) == (5_000, 50, 20_000)
    assert (config.preserve_recent_messages, config.preserve_recent_tokens) == (5, 5_000)
    assert (config.render_tags, config.protected_tools) == ("none", ())
    # G = clamp(round(limit * 0.05), 50,000, 50,000) and the gate max(20,000, 0.45 G).
    assert config.growth_unit(32_000) == config.growth_unit(2_000_000) == 50_000
    assert config.growth_gate(128_000) == 22_500


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"tier2_trigger": 1}, r"ranges\.tier2_trigger must be an integer in \[2, 1000\], got 1"),
        ({"tier3_trigger": 1001}, r"ranges\.tier3_trigger must be an integer in \[2, 1000\], got 1001"),
        (
            {"tier2_trigger": 6, "tier3_trigger": 6},
            r"ranges\.tier3_trigger \(6\) must be greater than tier2_trigger \(6\)",
        ),
        ({"tier2_trigger": 2.5}, r"ranges\.tier2_trigger must be an integer"),
        ({"nudge_max_context_pct": 1.5}, r"ranges\.nudge_max_context_pct must be a number in \(0, 1\], got 1\.5"),
        ({"truncate_threshold": 0}, r"ranges\.truncate_threshold must be a number in \(0, 1\], got 0"),
        ({"nudge_min_context_pct": 0.8}, r"ranges\.nudge_min_context_pct \(0\.8\) must not exceed"),
        ({"emergency_threshold_pct": 0.5}, r"ranges\.emergency_threshold_pct \(0\.5\) must not be below"),
        ({"nudge_force": "hard"}, r"ranges\.nudge_force must be one of soft, strong, got 'hard'"),
        ({"growth_floor": 0}, r"ranges\.growth_floor must be a positive integer, got 0"),
        ({"growth_floor": 60_000}, r"ranges\.growth_floor \(60000\) must not exceed growth_cap \(50000\)"),
        ({"max_summary_length": -1}, r"ranges\.max_summary_length must be a positive integer, got -1"),
        ({"min_summary_length": 30_000}, r"ranges\.min_summary_length \(30000\) must be below max_summary_length"),
        ({"context_limit": 0}, r"ranges\.context_limit must be a positive integer, got 0"),
        ({"min_compress_range": -5}, r"ranges\.min_compress_range must be a non-negative integer, got -5"),
        ({"preserve_recent_messages": True}, r"ranges\.preserve_recent_messages must be a non-negative integer"),
        ({"protected_tools": ("todo", 3)}, r"ranges\.protected_tools\[1\] must be a non-empty string, got 3"),
        ({"protected_tools": "todo"}, r"ranges\.protected_tools must be a list of tool names"),
        ({"render_tags": "some"}, r"ranges\.render_tags must be one of all, text-only, none, got 'some'"),
        ({"summary_role": "tool"}, r"ranges\.summary_role must be one of system, user"),
        ({"tiers_enabled": "yes"}, r"ranges\.tiers_enabled must be true or false"),
        ({"tier2_growth_multiplier": 0.5}, r"ranges\.tier2_growth_multiplier must be a number >= 1"),
    ],
)
def test_bad_values_name_the_key(changes, message):
    with pytest.raises(UserError, match=message):
        RangesConfig(**changes)


def test_from_mapping_builds_and_converts_lists():
    config = RangesConfig.from_mapping(
        {"protected_tools": ["todo", "plan"], "tier2_trigger": 3, "render_tags": "text-only"}
    )
    assert config == RangesConfig(protected_tools=("todo", "plan"), tier2_trigger=3, render_tags="text-only")


def test_from_mapping_rejects_unknown_keys():
    with pytest.raises(UserError, match=r"^ranges: unknown config key 'tier_2_trigger' \(known: context_limit, "):
        RangesConfig.from_mapping({"tier_2_trigger": 3})
    with pytest.raises(UserError, match="ranges config must be a mapping, got list"):
        RangesConfig.from_mapping([("tier2_trigger", 3)])
