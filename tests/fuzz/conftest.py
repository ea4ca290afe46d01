"""Fuzz runs: a few derandomized examples by default, the long run with ``--fuzz``."""

from __future__ import annotations

import os

import pytest

from tests.fuzz.harness import DEFAULT_EXAMPLES, LONG_CONFIG_EXAMPLES, LONG_IMPORTER_EXAMPLES


@pytest.fixture
def long_run(request: pytest.FixtureRequest) -> bool:
    """Whether this is the long run (``python -m pytest tests/fuzz --fuzz``)."""
    return bool(request.config.getoption("--fuzz"))


def _override() -> int | None:
    """``PREFIXBENCH_FUZZ_EXAMPLES=N`` sets every property's example count (for a quick probe)."""
    text = os.environ.get("PREFIXBENCH_FUZZ_EXAMPLES")
    return int(text) if text else None


@pytest.fixture
def importer_examples(long_run: bool) -> int:
    return _override() or (LONG_IMPORTER_EXAMPLES if long_run else DEFAULT_EXAMPLES)


@pytest.fixture
def config_examples(long_run: bool) -> int:
    return _override() or (LONG_CONFIG_EXAMPLES if long_run else DEFAULT_EXAMPLES // 3)
