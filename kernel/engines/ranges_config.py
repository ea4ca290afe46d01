"""Policy of the ``ranges`` engine: one flat, validated, frozen config.

Defaults are acp-kernel's ``defaultConfig`` (seed 002). Every bad value raises
:class:`UserError` with one line naming the key, so a sweep config fails before any run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

import msgspec
from prefixbench.simulator.checks import is_int, is_number, spelled
from prefixbench.simulator.errors import UserError

RenderStrategy: TypeAlias = Literal["all", "text-only", "none"]
NudgeForce: TypeAlias = Literal["soft", "strong"]
SummaryRole: TypeAlias = Literal["system", "user"]

RENDER_STRATEGIES: tuple[str, ...] = ("all", "text-only", "none")
NUDGE_FORCES: tuple[str, ...] = ("soft", "strong")
SUMMARY_ROLES: tuple[str, ...] = ("system", "user")
#: Tier triggers count active blocks; beyond this a trigger can never fire in practice.
MAX_TIER_TRIGGER = 1000


class RangesConfig(msgspec.Struct, frozen=True):
    """``ranges`` engine policy (defaults are acp-kernel's)."""

    #: Context window in tokens; None means the routed model's window.
    context_limit: int | None = None
    tiers_enabled: bool = True
    #: Active tier-1 blocks needed before a tier-2 distillation is proposed.
    tier2_trigger: int = 5
    #: Active tier-2 blocks needed before a tier-3 distillation is proposed.
    tier3_trigger: int = 10
    #: Usage share at or above which any pending tier is nudged (pressure).
    nudge_max_context_pct: float = 0.75
    #: Validated only, as in acp-kernel: the decision does not read it.
    nudge_min_context_pct: float = 0.45
    #: ``strong`` nudges at pressure even without growth since the last nudge.
    nudge_force: NudgeForce = "soft"
    growth_ratio: float = 0.05
    growth_floor: int = 50_000
    growth_cap: int = 50_000
    min_growth_floor: int = 20_000
    min_growth_ratio: float = 0.45
    #: Usage share at or above which the nudge ignores every gate.
    emergency_threshold_pct: float = 0.95
    tier2_growth_multiplier: float = 1.5
    #: Turns a block survives before it is counted as old generation.
    promotion_threshold: int = 5
    #: Usage share at or above which large tool outputs are truncated in the view.
    truncate_threshold: float = 0.95
    #: Characters a batch of message ranges needs before it may be compressed.
    min_compress_range: int = 5_000
    max_summary_length: int = 20_000
    min_summary_length: int = 50
    #: Tools whose calls and results are never compressed.
    protected_tools: tuple[str, ...] = ()
    #: The last N visible parts are never compressed (0 = none).
    preserve_recent_messages: int = 5
    #: The smallest tail reaching this many tokens is never compressed (0 = none).
    preserve_recent_tokens: int = 5_000
    #: Where ``<acp>`` ref tags are written into message text; ``none`` keeps bytes as sent.
    render_tags: RenderStrategy = "none"
    #: Role of the synthetic summary message (acp-kernel uses system).
    summary_role: SummaryRole = "system"

    def __post_init__(self) -> None:
        if self.context_limit is not None:
            _positive_int("context_limit", self.context_limit)
        _bool("tiers_enabled", self.tiers_enabled)
        for key in ("tier2_trigger", "tier3_trigger"):
            value = getattr(self, key)
            if _not_int(value) or not 2 <= value <= MAX_TIER_TRIGGER:
                raise UserError(f"ranges.{key} must be an integer in [2, {MAX_TIER_TRIGGER}], got {spelled(value)}")
        if self.tier3_trigger <= self.tier2_trigger:
            raise UserError(
                f"ranges.tier3_trigger ({self.tier3_trigger}) must be greater than tier2_trigger ({self.tier2_trigger})"
            )
        for key in (
            "nudge_max_context_pct",
            "nudge_min_context_pct",
            "emergency_threshold_pct",
            "truncate_threshold",
            "growth_ratio",
            "min_growth_ratio",
        ):
            value = getattr(self, key)
            if _not_number(value) or not 0 < value <= 1:
                raise UserError(f"ranges.{key} must be a number in (0, 1], got {spelled(value)}")
        if self.nudge_min_context_pct > self.nudge_max_context_pct:
            raise UserError(
                f"ranges.nudge_min_context_pct ({self.nudge_min_context_pct}) must not exceed "
                f"nudge_max_context_pct ({self.nudge_max_context_pct})"
            )
        if self.emergency_threshold_pct < self.nudge_max_context_pct:
            raise UserError(
                f"ranges.emergency_threshold_pct ({self.emergency_threshold_pct}) must not be below "
                f"nudge_max_context_pct ({self.nudge_max_context_pct})"
            )
        if self.nudge_force not in NUDGE_FORCES:
            raise UserError(f"ranges.nudge_force must be one of {', '.join(NUDGE_FORCES)}, got {self.nudge_force!r}")
        for key in (
            "growth_floor",
            "growth_cap",
            "min_growth_floor",
            "promotion_threshold",
            "max_summary_length",
            "min_summary_length",
        ):
            _positive_int(key, getattr(self, key))
        if self.growth_floor > self.growth_cap:
            raise UserError(f"ranges.growth_floor ({self.growth_floor}) must not exceed growth_cap ({self.growth_cap})")
        if _not_number(self.tier2_growth_multiplier) or not 1 <= self.tier2_growth_multiplier < math.inf:
            raise UserError(
                f"ranges.tier2_growth_multiplier must be a number >= 1, got {self.tier2_growth_multiplier!r}"
            )
        for key in ("min_compress_range", "preserve_recent_messages", "preserve_recent_tokens"):
            value = getattr(self, key)
            if _not_int(value) or value < 0:
                raise UserError(f"ranges.{key} must be a non-negative integer, got {spelled(value)}")
        if self.min_summary_length >= self.max_summary_length:
            raise UserError(
                f"ranges.min_summary_length ({self.min_summary_length}) must be below "
                f"max_summary_length ({self.max_summary_length})"
            )
        if not isinstance(self.protected_tools, tuple):
            raise UserError(f"ranges.protected_tools must be a list of tool names, got {self.protected_tools!r}")
        for idx, name in enumerate(self.protected_tools):
            if not isinstance(name, str) or not name:
                raise UserError(f"ranges.protected_tools[{idx}] must be a non-empty string, got {name!r}")
        if self.render_tags not in RENDER_STRATEGIES:
            raise UserError(
                f"ranges.render_tags must be one of {', '.join(RENDER_STRATEGIES)}, got {self.render_tags!r}"
            )
        if self.summary_role not in SUMMARY_ROLES:
            raise UserError(f"ranges.summary_role must be one of {', '.join(SUMMARY_ROLES)}, got {self.summary_role!r}")

    @staticmethod
    def from_mapping(data: Mapping[str, Any]) -> RangesConfig:
        """A config from a mapping (e.g. parsed TOML/JSON); unknown keys are a UserError."""
        if not isinstance(data, Mapping):
            raise UserError(f"ranges config must be a mapping, got {type(data).__name__}")
        known = list(RangesConfig.__struct_fields__)
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                raise UserError(f"ranges: unknown config key {key!r} (known: {', '.join(known)})")
            if key == "protected_tools" and isinstance(value, list):
                value = tuple(value)
            values[key] = value
        return RangesConfig(**values)

    def growth_unit(self, limit: int) -> int:
        """G: the growth a tier-1 nudge waits for, ``clamp(round(limit * growth_ratio), floor, cap)``."""
        return min(self.growth_cap, max(self.growth_floor, round(limit * self.growth_ratio)))

    def growth_gate(self, limit: int) -> float:
        """The growth since the last nudge below which no growth nudge fires."""
        return max(self.min_growth_floor, self.min_growth_ratio * self.growth_unit(limit))


def _not_int(value: object) -> bool:
    return not is_int(value)


def _not_number(value: object) -> bool:
    return not is_number(value)


def _positive_int(key: str, value: object) -> None:
    if _not_int(value) or value <= 0:  # type: ignore[operator]
        raise UserError(f"ranges.{key} must be a positive integer, got {spelled(value)}")


def _bool(key: str, value: object) -> None:
    if not isinstance(value, bool):
        raise UserError(f"ranges.{key} must be true or false, got {spelled(value)}")
