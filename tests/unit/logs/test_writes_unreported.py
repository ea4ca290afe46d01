"""One rule says when a call's cache writes are not reported: its usage has no write field and
its provider bills writes apart. Each reader of a usage that may lack the field applies it
(:func:`~prefixbench.simulator.providers.writes_unreported`), none a copy of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prefixbench.simulator.providers import writes_unreported

ROOT = Path(__file__).resolve().parents[3]
#: The readers, and the shared call each makes: the rule itself, or gateway_usage's step that applies
#: it to a usage whose write field is missing.
READERS = ("gateway_usage", "langfuse", "otel", "copilot_cli", "langsmith", "openrouter", "helicone")
SHARED = ("writes_unreported(", "writes_unknown_unless_named(")


@pytest.mark.parametrize(("names_writes", "provider", "unreported"), [
    (False, "anthropic", True),   # bills writes apart, no field: unknown
    (True, "anthropic", False),   # a field, even at 0, is a count
    (False, "openai", False),     # writes are not billed apart: nothing to leave out
    (False, "deepseek", False),
    (False, "no-such-provider", False),
])
def test_the_rule(names_writes: bool, provider: str, unreported: bool) -> None:
    assert writes_unreported(names_writes, provider) is unreported


@pytest.mark.parametrize("name", READERS)
def test_each_reader_applies_the_shared_rule_not_its_own_copy(name: str) -> None:
    # Each of these once spelled it out itself (`... or not rules_for(provider).is_additive`).
    text = (ROOT / "workloads" / "logs" / "formats" / f"{name}.py").read_text(encoding="utf-8")
    assert any(call in text for call in SHARED), name
    assert not re.search(r"\.is_additive\b", text), name
