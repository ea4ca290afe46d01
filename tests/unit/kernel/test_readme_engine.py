"""The guide's minimal engine (docs/engine-api.md): under 40 lines, and it passes every spec that applies."""

from __future__ import annotations

import sys

import pytest

from tests.readme import doc_block

ENGINE = doc_block("docs/engine-api.md", "## The engine API")


def test_the_readme_engine_is_complete_and_short():
    assert len(ENGINE.splitlines()) < 40
    assert "def factory(window: int, options: EngineOptions)" in ENGINE


@pytest.fixture
def readme_engine(tmp_path, monkeypatch):
    (tmp_path / "readme_engine.py").write_text(ENGINE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "readme_engine:factory"
    sys.modules.pop("readme_engine", None)


def test_the_readme_engine_passes_every_spec(readme_engine):
    from prefixbench.workloads.specs.engine import run_engine_specs

    results = list(run_engine_specs(readme_engine, [32_000], ["lenient", "deepseek-official", "deepseek-relay"]))
    assert len(results) == 3 + 3 + 4 + 4
    assert [r.line() for r in results if not r.passed] == []
    assert {r.engine for r in results} == {"half-summary"}
