"""A committed Gemini CLI home not measured before (round 61, agents other than Claude Code and
Codex), read where it lives (a local git copy; never copied into this project, the test skips
without it):

* ``.gemini/tmp/`` of github.com/Sm1tee/dotfiles (commit
  ``5c807b45358c28c3ce946c4bac265082840616cd``, 2025-07-19; Gemini CLI of July 2025): 15
  ``logs.json`` (523 prompts the user typed) and six chats saved with ``/chat save``
  (``checkpoint-<tag>.json``, 27 to 434 ``Content`` entries each, Russian tags among them), and no
  session file under ``chats/``: no model call with its usage anywhere, so the folder and each
  saved chat are refused in one line (exit 2), ``--format json`` and ``--what-if all`` alike.
  From ``PREFIXBENCH_SM1TEE_DOTFILES_REPO``; only ``.gemini/tmp/`` is written out (the home's
  ``oauth_creds.json`` is never read).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from tests.realdata.mirrors import tree_at

URL = "github.com/Sm1tee/dotfiles"
ENV = "PREFIXBENCH_SM1TEE_DOTFILES_REPO"
REPO = Path(os.environ.get(ENV, "/work/.mirror/Sm1tee+dotfiles/repo"))
COMMIT = "5c807b45358c28c3ce946c4bac265082840616cd"


@pytest.fixture
def home(tmp_path: Path) -> tuple[Path, list[Path]]:
    paths = tree_at(REPO, COMMIT, URL, ENV, ".gemini/tmp/", tmp_path)
    return tmp_path / ".gemini" / "tmp", paths


def test_the_home_holds_prompts_and_saved_chats_and_no_usage(home) -> None:
    _, paths = home
    logs = [p for p in paths if p.name == "logs.json"]
    saved = [p for p in paths if p.name.startswith("checkpoint-")]
    assert (len(paths), len(logs), len(saved)) == (21, 15, 6)
    prompts = [entry for p in logs for entry in json.loads(p.read_text(encoding="utf-8"))]
    assert len(prompts) == 523 and {k for e in prompts for k in e} == {"sessionId", "messageId", "type", "message", "timestamp"}
    sizes = []
    for path in saved:
        contents = json.loads(path.read_text(encoding="utf-8"))
        assert {m["role"] for m in contents} == {"user", "model"} and {k for m in contents for k in m} == {"role", "parts"}
        sizes.append(len(contents))
    assert sorted(sizes) == [27, 79, 160, 233, 299, 434]


@pytest.mark.parametrize("extra", [[], ["--format", "json"], ["--what-if", "all"]])
def test_the_folder_is_refused_in_one_line(home, capsys, extra: list[str]) -> None:
    folder, _ = home
    assert main(["audit", str(folder), *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert re.search(r"nothing to audit: no model call with usage in the logs given \(\S+/logs\.json: a Gemini CLI "
                     r"logs\.json: the prompts the user typed .*; 20 other file\(s\) hold none either\)", err)


def test_each_saved_chat_is_refused_in_one_line(home, capsys) -> None:
    _, paths = home
    for path in (p for p in paths if p.name.startswith("checkpoint-")):
        assert main(["audit", str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert f"{path.name}: a saved chat or shared export holds the conversation, not its usage" in err
