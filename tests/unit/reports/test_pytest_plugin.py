"""The pytest plugin, run in a child pytest: off without its option, one item per spec with it."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.readme import doc_block

ROOT = Path(__file__).resolve().parents[3]
#: Where the engines these tests load live (a failing engine's line names its file and line).
ENGINES_FILE = ROOT / "tests" / "user_engines.py"

pytestmark = pytest.mark.skipif(
    not any(ep.name == "prefixbench" for ep in entry_points(group="pytest11")),
    reason="the pytest11 entry point is not installed (reinstall prefixbench: pip install -e .)",
)

OWN_TEST = "def test_own():\n    assert 1 + 1 == 2\n"


def run_pytest(folder: Path, *args: str) -> tuple[int, dict[str, tuple[str, str]], str]:
    """Run pytest in ``folder``; returns (exit code, {classname::name: (outcome, message)}, output)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(folder)])}
    report = folder / "report.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--junitxml={report}", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )
    outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        failure, skipped = case.find("failure"), case.find("skipped")
        outcome = "failed" if failure is not None else "skipped" if skipped is not None else "passed"
        node = failure if failure is not None else skipped
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = (outcome, "" if node is None else node.get("message", ""))
    return proc.returncode, outcomes, proc.stdout + proc.stderr


def test_without_its_option_the_plugin_adds_nothing(tmp_path):
    (tmp_path / "test_own.py").write_text(OWN_TEST + "\ndef test_fixture(prefixbench):\n    raise AssertionError\n")
    code, outcomes, output = run_pytest(tmp_path)
    assert code == 0, output
    assert outcomes == {
        "test_own::test_own": ("passed", ""),
        "test_own::test_fixture": ("skipped", "the prefixbench fixture needs --prefixbench-engine package.module:factory"),
    }
    assert "prefixbench::" not in output and "warning" not in output.lower()


def test_a_silent_engine_fails_exactly_the_specs_it_breaks(tmp_path):
    (tmp_path / "test_own.py").write_text(OWN_TEST)
    code, outcomes, output = run_pytest(tmp_path, "--prefixbench-engine", "tests.user_engines:silent", "--prefixbench-windows", "32k")
    assert code == 1, output
    failed = {name: message for name, (outcome, message) in outcomes.items() if outcome == "failed"}
    assert sorted(failed) == [
        "prefixbench::no-silent-rewrite[32k-seed-coding-lenient]",
        "prefixbench::no-silent-rewrite[32k-thinking-tools-lenient]",
        "prefixbench::summary-uncached-bounded[32k-seed-coding-lenient]",
        "prefixbench::summary-uncached-bounded[32k-thinking-tools-lenient]",
    ]
    assert failed["prefixbench::no-silent-rewrite[32k-seed-coding-lenient]"].startswith(
        "FAIL  no-silent-rewrite @32k [truncating/seed-coding/lenient]: request #"
    )
    skipped = sorted(name for name, (outcome, _) in outcomes.items() if outcome == "skipped")
    assert skipped == [  # vacuous: it sends no summary call and declares no rewrite
        "prefixbench::rewrites-pay-back[32k-seed-coding-lenient]", "prefixbench::rewrites-pay-back[32k-thinking-tools-lenient]",
        "prefixbench::summary-envelope-routed[32k-seed-coding-lenient]", "prefixbench::summary-envelope-routed[32k-thinking-tools-lenient]",
    ]
    assert outcomes["test_own::test_own"] == ("passed", "")


def test_markers_select_specs(tmp_path):
    code, outcomes, output = run_pytest(
        tmp_path, "--prefixbench-engine", "tests.user_engines:declared", "--prefixbench-windows", "32k",
        "--prefixbench-profile", "lenient,deepseek-official", "-m", "no_silent_rewrite or strict_profile_accepts",
    )
    assert code == 0, output
    assert sorted(outcomes) == [
        "prefixbench::no-silent-rewrite[32k-seed-coding-lenient]",
        "prefixbench::no-silent-rewrite[32k-thinking-tools-deepseek-official]",
        "prefixbench::no-silent-rewrite[32k-thinking-tools-lenient]",
        "prefixbench::strict-profile-accepts[32k-thinking-tools-deepseek-official]",
    ]


def test_the_readme_engine_and_fixture_spec_pass(tmp_path):
    (tmp_path / "readme_engine.py").write_text(doc_block("docs/engine-api.md", "## The engine API"))
    (tmp_path / "test_team.py").write_text(doc_block("docs/engine-api.md", "## With pytest"))
    code, outcomes, output = run_pytest(tmp_path, "--prefixbench-engine", "readme_engine:factory", "--prefixbench-windows", "32k")
    assert code == 0, output
    assert outcomes["test_team::test_every_fold_is_declared"] == ("passed", "")
    assert sum(outcome == "passed" for outcome, _ in outcomes.values()) == 15  # 6 specs x 2 cases, deterministic x 2, the team's test


def test_a_bad_engine_is_a_usage_error(tmp_path):
    (tmp_path / "test_own.py").write_text(OWN_TEST)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--prefixbench-engine", "tests.user_engines:raises"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    # the line names the option that gave the engine, as docs/engine-api.md says
    assert "prefixbench: --prefixbench-engine tests.user_engines:raises: the factory raised ValueError" in proc.stderr


def test_the_engine_config_reaches_the_factory(tmp_path):
    (tmp_path / "engines.toml").write_text('["tests.user_engines:configurable"]\ndeclare = true\n')
    (tmp_path / "test_own.py").write_text(
        "def test_declared(prefixbench):\n    assert prefixbench.run().engine == 'configurable-declared'\n"
    )
    code, outcomes, output = run_pytest(
        tmp_path, "--prefixbench-engine", "tests.user_engines:configurable", "--prefixbench-windows", "32k",
        "--prefixbench-engine-config", "engines.toml", "-m", "not summary_envelope_routed and not summary_uncached_bounded and not rewrites_pay_back and not window_respected and not tool_pairs_intact",
    )
    assert code == 0, output
    assert sorted(outcomes) == [
        "prefixbench::deterministic[32k-seed-coding-lenient]",
        "prefixbench::deterministic[32k-thinking-tools-lenient]",
        "prefixbench::no-silent-rewrite[32k-seed-coding-lenient]",
        "prefixbench::no-silent-rewrite[32k-thinking-tools-lenient]",
        "test_own::test_declared",
    ]


def _run_pytest_raw(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(folder)])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )


@pytest.mark.parametrize(
    "case, says",
    [
        # The engine's file and line: the full path, the run's folder being elsewhere.
        ("raise_at_5", f"before_step() raised RuntimeError in {ENGINES_FILE}:77 at step 4"),
        ("view_dict", "view() returned dict at step 0"),
        ("view_none", "view() returned None at step 0"),
        ("view_str", "view() returned str at step 0"),
        ("view_dicts", "view() returned a list holding a dict (item 0) at step 0"),
        ("tool_raises", f"raised KeyError in {ENGINES_FILE}:91 at step 0"),
    ],
)
def test_a_failing_engine_is_one_short_error_per_case(tmp_path, case, says):
    (tmp_path / "test_own.py").write_text(OWN_TEST)
    code, outcomes, output = run_pytest(tmp_path, "--prefixbench-engine", f"tests.user_engines:{case}", "--prefixbench-windows", "32k")
    assert code == 1, output
    # One error per case (seed-coding and thinking-tools at 32k), reported at setup; the case's other specs skip.
    errors = [line for line in output.splitlines() if line.startswith("ERROR prefixbench::")]
    assert len(errors) == 2, output
    assert sum(" ERROR at setup of " in line for line in output.splitlines()) == 2
    for workload in ("seed-coding", "thinking-tools"):
        assert f"{says} ({workload}, 32k)" in output, output
    # The engine's own frames only: none of prefixbench's, and a short report (it was 5,976 lines).
    assert "user_engines.py" in output
    assert "loop.py" not in output and "guard.py" not in output and "_pytest" not in output
    assert len(output.splitlines()) < 40, output
    skipped = [name for name, (outcome, message) in outcomes.items() if outcome == "skipped"]
    assert skipped and all("the engine failed on 32k-" in outcomes[name][1] for name in skipped)
    assert outcomes["test_own::test_own"] == ("passed", "")


def test_an_engine_whose_name_raises_is_a_usage_error(tmp_path):
    (tmp_path / "test_own.py").write_text(OWN_TEST)
    proc = _run_pytest_raw(tmp_path, "--prefixbench-engine", "tests.user_engines:name_raises")
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert (
        f"prefixbench: --prefixbench-engine tests.user_engines:name_raises: name raised ValueError in {ENGINES_FILE}:124 (seed-coding, 32k): "
        "the name is not configured"
    ) in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_the_fixture_reports_an_engine_error_in_one_short_failure(tmp_path):
    (tmp_path / "test_team.py").write_text("def test_team(prefixbench):\n    prefixbench.run()\n")
    code, outcomes, output = run_pytest(
        tmp_path, "--prefixbench-engine", "tests.user_engines:view_none", "--prefixbench-windows", "32k", "-k", "test_team",
    )
    assert code == 1, output
    outcome, message = outcomes["test_team::test_team"]
    assert outcome == "failed" and message.startswith("Failed: engine broken-view-none (tests.user_engines:view_none): view() returned None")
    assert "loop.py" not in output and len(output.splitlines()) < 20, output


def test_the_fixture_reports_a_mistyped_workload_in_one_line_with_the_closest_name(tmp_path):
    (tmp_path / "test_team.py").write_text("def test_team(prefixbench):\n    prefixbench.run('seed-codng')\n")
    code, outcomes, output = run_pytest(
        tmp_path, "--prefixbench-engine", "tests.user_engines:declared", "--prefixbench-windows", "32k", "-k", "test_team",
    )
    assert code == 1, output
    outcome, message = outcomes["test_team::test_team"]
    assert outcome == "failed"
    assert message.startswith("Failed: prefixbench.run(): unknown workload 'seed-codng': did you mean 'seed-coding'?"), message
    assert "registry.py" not in output and "Traceback" not in output, output


def test_a_table_for_an_engine_that_is_not_running_is_refused(tmp_path):
    (tmp_path / "test_own.py").write_text(OWN_TEST)
    (tmp_path / "engines.toml").write_text('["tests.user_engines:declared"]\n\n["tests.user_engines:configurable"]\ndeclare = true\n')
    proc = _run_pytest_raw(
        tmp_path, "--prefixbench-engine", "tests.user_engines:declared", "--prefixbench-engine-config", "engines.toml",
    )
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    assert (
        "engines.toml: --prefixbench-engine-config sets the engine under test (tests.user_engines:declared) only, "
        "not 'tests.user_engines:configurable'"
    ) in proc.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        # the line names the pytest option, not the command line's --windows or --engine
        (["--prefixbench-engine", "checkpoint", "--prefixbench-windows", "32q"], "prefixbench: --prefixbench-windows: '32q' is not a token count"),
        # one window twice would add every item twice under one id, as check refuses it
        (["--prefixbench-engine", "checkpoint", "--prefixbench-windows", "32k,32000"], "prefixbench: --prefixbench-windows: 32,000 tokens given twice"),
        (["--prefixbench-engine", "nosuch_module_pb:factory"], "prefixbench: --prefixbench-engine nosuch_module_pb:factory: no module 'nosuch_module_pb'"),
        # a name no package installed: the line names the option, as check's names --engine
        (["--prefixbench-engine", "no-such-engine-pb"], "prefixbench: --prefixbench-engine: unknown engine 'no-such-engine-pb'"),
    ],
)
def test_a_bad_plugin_option_is_a_usage_error_naming_it(tmp_path, args, says):
    (tmp_path / "test_own.py").write_text(OWN_TEST)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert says in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_engine_that_differs_between_runs_fails_its_deterministic_items(tmp_path):
    code, outcomes, output = run_pytest(
        tmp_path, "--prefixbench-engine", "tests.user_engines:drifting", "--prefixbench-windows", "32k", "-m", "deterministic",
    )
    assert code == 1, output
    assert sorted(outcomes) == ["prefixbench::deterministic[32k-seed-coding-lenient]", "prefixbench::deterministic[32k-thinking-tools-lenient]"]
    outcome, message = outcomes["prefixbench::deterministic[32k-seed-coding-lenient]"]
    assert outcome == "failed"
    assert message.startswith("FAIL  deterministic @32k [drifting/seed-coding/lenient]: a second run of the same case sent a different request #")


@pytest.mark.parametrize(("engine", "config", "summaries"), [
    # Written before on_wake existed: no EngineBase, no hook; it runs as it did.
    ("tests.waking_engines:plain", "", 0),
    # Asks to be woken 2 minutes after each request: idle-gaps' default gaps (4-6 minutes) wake it.
    ("tests.waking_engines:waker", "after_s = 120\n", 5),
])
def test_the_fixture_runs_engines_with_and_without_the_wake_hook(tmp_path, engine, config, summaries):
    (tmp_path / "engines.toml").write_text(f'["{engine}"]\n{config}')
    (tmp_path / "test_team.py").write_text(
        "def test_team(prefixbench):\n"
        "    run = prefixbench.run('idle-gaps', '32k')\n"
        f"    assert len(run.summaries) == {summaries}\n"
    )
    code, outcomes, output = run_pytest(
        tmp_path, "--prefixbench-engine", engine, "--prefixbench-windows", "32k",
        "--prefixbench-engine-config", "engines.toml", "-k", "test_team",
    )
    assert code == 0, output
    assert outcomes["test_team::test_team"] == ("passed", "")
