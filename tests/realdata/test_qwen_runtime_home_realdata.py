"""A committed Qwen Code home not measured before (round 61, agents other than Claude Code and
Codex), read where it lives (a local git copy; never copied into this project, the test skips
without it):

* ``.qwen/`` of github.com/emimichelutti-jpg/app-rrhh (commit
  ``9289811e9da0ef229d09b2e96c13c2b0baea7395``, 2026-06-25): Qwen Code 0.18.5 on Windows, one
  session started (``tip_history.json``: ``sessionCount`` 1) and no session file: its
  ``chats/<id>.runtime.json`` (the process: pid, host, folder, start, version), an empty
  ``logs.json`` and the home's settings. No model call anywhere: refused in one line (exit 2) that
  names the runtime file and points at the ``.jsonl`` of the same name, the home folder and the
  file alike (before, "unknown log format" and "no record of a format audit reads"). From
  ``PREFIXBENCH_APP_RRHH_REPO``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from tests.realdata.mirrors import tree_at

URL = "github.com/emimichelutti-jpg/app-rrhh"
ENV = "PREFIXBENCH_APP_RRHH_REPO"
REPO = Path(os.environ.get(ENV, "/work/.mirror/emimichelutti-jpg+app-rrhh/repo"))
COMMIT = "9289811e9da0ef229d09b2e96c13c2b0baea7395"
SESSION = "054b8439-3658-4ea0-913d-366f134893b7"
LINE = ("a Qwen Code runtime file (Qwen Code 0.18.5): the process that ran the session (pid, host, folder, start), "
        "no model call or usage: no calls to audit here (audit the session's .jsonl of the same name beside it)")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    paths = tree_at(REPO, COMMIT, URL, ENV, ".qwen/", tmp_path)
    assert len(paths) == 8 and not any(p.suffix == ".jsonl" for p in paths)
    return tmp_path / ".qwen"


def test_the_runtime_file_holds_the_process_and_no_message(home: Path) -> None:
    runtime = json.loads((home / "projects" / "c--users-usuario" / "chats" / f"{SESSION}.runtime.json").read_text())
    assert runtime.keys() == {"schema_version", "pid", "session_id", "work_dir", "hostname", "started_at", "qwen_version"}
    assert (runtime["session_id"], runtime["qwen_version"]) == (SESSION, "0.18.5")


@pytest.mark.parametrize("extra", [[], ["--format", "json"], ["--what-if", "all"]])
def test_the_home_is_refused_in_one_line_naming_the_runtime_file(home: Path, capsys, extra: list[str]) -> None:
    assert main(["audit", str(home), *extra]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.endswith(f"{SESSION}.runtime.json: {LINE}; 3 other file(s) hold none either)")


def test_the_runtime_file_alone_is_refused_in_one_line(home: Path, capsys) -> None:
    path = home / "projects" / "c--users-usuario" / "chats" / f"{SESSION}.runtime.json"
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.endswith(f"{path}: {LINE})")
