"""tests/realdata/mirrors.py lists a mirror's files with ``git ls-tree -z`` read as text: a file
name that is not UTF-8 (Latin-1 bytes) raised UnicodeDecodeError, and every realdata test of that
mirror crashed instead of reading it. Now the names are read as bytes and decoded as the file
system does, so such a file is listed, read and written back under its own bytes."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.realdata.mirrors import files_at, tree_at

NAME = b"logs/caf\xe9.jsonl"  # (Latin-1 e-acute: not UTF-8)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: no repository to list")
def test_a_file_name_that_is_not_utf8_is_listed_and_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "logs").mkdir(parents=True)
    try:
        (repo / os.fsdecode(NAME)).write_bytes(b'{"a": 1}\n')
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses a file name that is not UTF-8")
    (repo / "logs" / "plain.jsonl").write_bytes(b'{"b": 2}\n')
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "two files"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()

    names = files_at(repo, commit, "github.com/x/y", "X_MIRROR")
    assert sorted(os.fsencode(n) for n in names) == [NAME, b"logs/plain.jsonl"]
    written = tree_at(repo, commit, "github.com/x/y", "X_MIRROR", "logs/", tmp_path / "out", ".jsonl")
    assert {os.fsencode(p.relative_to(tmp_path / "out")): p.read_bytes() for p in written} == {
        NAME: b'{"a": 1}\n', b"logs/plain.jsonl": b'{"b": 2}\n'}
