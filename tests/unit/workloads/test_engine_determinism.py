"""The ``deterministic`` spec of ``check --engine``: each workload's first case runs twice and the
requests the provider received must be byte-identical (house rule: same inputs, same outputs)."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from prefixbench.kernel.presets import PRESETS
from prefixbench.reports.cli import main
from prefixbench.simulator.wire import Envelope, Message, Request, Text
from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.engine import (
    DETERMINISTIC, _first_difference, determinism_cases, engine_cases, judge_determinism, run_case, run_engine_specs,
)

#: Every engine prefixbench ships that check --engine takes: the built-in one both gate workloads
#: mounts, and the strategies its own package installs (not another package's).
SHIPPED = ("checkpoint", *sorted(
    ep.name for ep in entry_points(group="prefixbench.engines") if ep.dist is not None and ep.dist.name == "prefixbench"
))


def test_each_workload_s_first_case_runs_again():
    cases = engine_cases([32_000, 128_000], ("lenient", "deepseek-official"))
    assert [c.id for c in determinism_cases(cases)] == ["32k-seed-coding-lenient", "32k-thinking-tools-lenient"]


def test_an_engine_that_differs_between_runs_fails_naming_the_first_request(capsys):
    assert main(["check", "--engine", "tests.user_engines:drifting", "--windows", "32k", "--quiet"]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if " deterministic " in line]
    assert len(lines) == 2, lines
    assert lines[0].startswith("FAIL  deterministic @32k [drifting/seed-coding/lenient]: a second run of the same case sent a "
                               "different request #")
    assert "its prompt differs from byte " in lines[0] and lines[0].endswith("the same inputs must give byte-identical requests")


def test_a_deterministic_engine_passes_and_the_line_follows_its_case(capsys):
    main(["check", "--engine", "tests.user_engines:declared", "--windows", "32k,128k", "--quiet"])
    out = capsys.readouterr().out.splitlines()
    specs = [line.split()[1] + " " + line.split()[2] for line in out[:-1]]
    assert specs.count("deterministic @32k") == 2 and not any(s.startswith("deterministic @128k") for s in specs)
    first = next(i for i, line in enumerate(out) if " deterministic " in line)
    assert out[first] == ("PASS  deterministic @32k [declared-truncating/seed-coding/lenient]: 2 runs of the case sent the "
                          f"same {len(run_case('tests.user_engines:declared', engine_cases([32_000])[0]).observations)} "
                          "requests, byte for byte")
    assert "seed-coding" in out[first - 1] and "thinking-tools" in out[first + 1]


@pytest.mark.parametrize("engine", SHIPPED)
def test_every_shipped_engine_is_deterministic_on_every_preset(engine):
    # (the shipped strategies read no preset: kernel/strategies never names one; checkpoint does)
    for preset in PRESETS if engine == "checkpoint" else ("patched",):
        for case in determinism_cases(engine_cases([32_000])):
            result = judge_determinism(engine, case, preset)
            assert result.verdict is Verdict.PASS, result.line()


def test_a_shorter_second_run_is_named():
    envelope = Envelope(provider="mock", model="mock")
    one = Request(envelope, (Message("user", (Text("a"),)),))
    run = run_case("tests.user_engines:declared", engine_cases([32_000])[0])
    assert _first_difference([one, one], [one], run) == (
        "a second run of the same case sent 1 request, the first 2 (the first 1 alike); the same inputs must give "
        "byte-identical requests"
    )
    other = Request(envelope, (Message("user", (Text("b"),)),))
    assert "its prompt differs from byte " in _first_difference([one], [other], run)
    capped = Request(envelope, one.messages, max_tokens=5)
    assert "its max_tokens differs, beside the prompt" in _first_difference([one], [capped], run)


def test_the_spec_is_in_every_engine_check():
    results = list(run_engine_specs("tests.user_engines:declared", [32_000]))
    assert [r.spec for r in results].count(DETERMINISTIC.name) == 2
