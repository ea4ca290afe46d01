"""Continue sessions committed to public repositories, read where they live (a local git copy of
each; never copied into this project, each test skips without it). No public session of the cn
CLI (the one Continue client that writes each call's usage) was found; what was found is what the
audit refuses, and it is refused in one line naming what it is:

* github.com/DimitrijaGj/dotfiles (commit ``0ff018a5c47da56486b61f793e8397351726182e``,
  2024-11-03): a ``.continue/sessions/`` of the VS Code extension, 11 sessions beside
  ``sessions.json``, each message's text and the extension's ``promptLogs``, no usage on any
  message. From ``PREFIXBENCH_DIMITRIJA_DOTFILES_REPO`` (default the workplace's mirror);
* github.com/falseh0ll0w/44 (commit ``5b1ca487c36a66289440650ed8593d9ba0624f76``, 2023-10-18):
  two sessions of Continue's first design, a Python server behind the extension
  (``{history: {timeline, current_index}, session_info, ...}``), read before as an unknown format.
  From ``PREFIXBENCH_FALSEH0LL0W_44_REPO`` (default the workplace's mirror).

Searched and not found (2026-12-05): a session with ``usage`` on an assistant message among the
repositories holding ``.continue/sessions/sessions.json`` (also toamedbd-code/hms, a VS Code
agent session of 2026-04 with ``promptLogs`` and no usage; workriar/cortinasbras, a cn session
of user messages only; jasmingabela/ai-coding-agent, oleg121203/Developer, Forwall100/dotfiles,
fabien-lessirard/dotfiles, Offren/RSS-aggregator-Xpath-scraper, dimits-ts/dotfiles).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import detect_format
from prefixbench.workloads.logs.formats.continue_cli import IDE_SESSION, PYTHON_SERVER_SESSION
from tests.realdata.mirrors import file_at, files_at

DIMITRIJA = ("PREFIXBENCH_DIMITRIJA_DOTFILES_REPO", "DimitrijaGj/dotfiles", "0ff018a5c47da56486b61f793e8397351726182e")
FALSEH0LL0W = ("PREFIXBENCH_FALSEH0LL0W_44_REPO", "falseh0ll0w/44", "5b1ca487c36a66289440650ed8593d9ba0624f76")


def _sessions(where: tuple[str, str, str], tmp_path: Path) -> list[Path]:
    env, repo, commit = where
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    url = f"github.com/{repo}"
    names = [n for n in files_at(mirror, commit, url, env)
             if n.startswith(".continue/sessions/") and not n.endswith("/sessions.json")]
    out = []
    for name in names:
        path = tmp_path / name.rsplit("/", 1)[1]
        path.write_bytes(file_at(mirror, commit, name, url, env))
        out.append(path)
    return out


def test_the_extensions_sessions_hold_no_usage_and_are_refused_in_one_line(tmp_path: Path) -> None:
    paths = _sessions(DIMITRIJA, tmp_path)
    assert len(paths) == 11
    messages = [item["message"] for p in paths for item in json.loads(p.read_text())["history"]]
    assert sum(m["role"] == "assistant" for m in messages) == 14
    assert not any("usage" in m for m in messages)
    for path in paths:
        with pytest.raises(UserError) as caught:
            detect_format(path)
        assert str(caught.value) == f"{path}:1: {IDE_SESSION}"
    with pytest.raises(UserError, match="none is a log"):
        run_audit([tmp_path])


def test_the_2023_python_server_sessions_are_named_and_refused(tmp_path: Path) -> None:
    paths = _sessions(FALSEH0LL0W, tmp_path)
    assert len(paths) == 2
    for path in paths:
        session = json.loads(path.read_text())
        assert set(session["history"]) == {"timeline", "current_index"} and "session_id" in session["session_info"]
        with pytest.raises(UserError) as caught:
            detect_format(path)
        assert str(caught.value) == f"{path}:1: {PYTHON_SERVER_SESSION}"
