"""examples/engines, loaded from its source folder: cache-aware passes, truncate-oldest fails as it should."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.engine import run_engine_specs

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "engines"


@pytest.fixture(autouse=True)
def example_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))


def test_the_entry_points_name_the_factories():
    declared = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]["entry-points"]["prefixbench.engines"]
    assert declared == {
        "truncate-oldest": "prefixbench_example_engines:truncate_oldest",
        "cache-aware": "prefixbench_example_engines:cache_aware",
    }


def test_cache_aware_passes_every_spec():
    results = list(run_engine_specs("prefixbench_example_engines:cache_aware", [32_000, 128_000], ["lenient", "deepseek-official"]))
    assert len(results) == 2 * (6 + 6 + 7) + 2  # and deterministic, on each workload's first case
    assert [r.line() for r in results if not r.passed] == []


def test_truncate_oldest_fails_on_its_silent_rewrite():
    results = list(run_engine_specs("prefixbench_example_engines:truncate_oldest", [32_000]))
    verdicts = {(r.spec, r.workload): r.verdict for r in results}
    for workload in ("seed-coding", "thinking-tools"):
        assert verdicts[("no-silent-rewrite", workload)] is Verdict.VIOLATED
        assert verdicts[("summary-uncached-bounded", workload)] is Verdict.VIOLATED
        assert verdicts[("summary-envelope-routed", workload)] is Verdict.VACUOUS


def test_engine_api_shows_what_check_prints_for_truncate_oldest(capsys):
    # docs/engine-api.md kept "4 passed" and no deterministic line after that spec was added.
    from prefixbench.reports.cli import main

    lines = (EXAMPLE.parents[1] / "docs" / "engine-api.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("$ prefixbench check --engine truncate-oldest --windows 32k")
    shown = lines[start + 1 : next(i for i in range(start, len(lines)) if lines[i] == "```")]
    assert main(["check", "--engine", "prefixbench_example_engines:truncate_oldest", "--windows", "32k"]) == 1
    printed = capsys.readouterr().out.strip().splitlines()
    cut = shown.index("...")
    assert shown[:cut] == printed[:cut]
    assert shown[-1] == printed[-1]
