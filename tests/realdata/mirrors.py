"""Public repositories the realdata tests read real sessions from, at one commit, out of a local
git copy (a bare mirror or a clone); a test skips, naming the repository and how to get it,
where the copy or the commit is absent."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest


def git(repo: Path, *args: str, text: bool = True) -> subprocess.CompletedProcess:
    """``git`` on ``repo``'s object store (its ``.git`` in a clone, the folder itself if bare)."""
    git_dir = repo / ".git" if (repo / ".git").is_dir() else repo
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=text, check=False)


def file_at(repo: Path, commit: str, path: str, url: str, env: str) -> bytes:
    """The bytes of ``path`` at ``commit``; skips the test when git, the copy or the file is missing."""
    if shutil.which("git") is None or not repo.is_dir():
        pytest.skip(f"no git copy of {url} at {repo}: clone it and set {env} to read {path} at commit {commit}")
    shown = git(repo, "show", f"{commit}:{path}", text=False)
    if shown.returncode != 0:
        pytest.skip(f"{commit[:12]}:{path} not in {repo}")
    return shown.stdout


def files_at(repo: Path, commit: str, url: str, env: str) -> list[str]:
    """Every file of ``repo`` at ``commit``; skips the test when git, the copy or the commit is missing."""
    if shutil.which("git") is None or not repo.is_dir():
        pytest.skip(f"no git copy of {url} at {repo}: clone it and set {env}")
    listed = git(repo, "ls-tree", "-r", "--name-only", commit)
    if listed.returncode != 0:
        pytest.skip(f"commit {commit[:12]} not in {repo}")
    return listed.stdout.splitlines()


def tree_at(repo: Path, commit: str, url: str, env: str, prefix: str, into: Path, suffix: str = "",
            left_out: frozenset[str] = frozenset()) -> list[Path]:
    """The files under ``prefix`` ending in ``suffix`` at ``commit`` (``left_out`` aside), written
    into ``into`` with their paths kept (subagent folders mean something); the paths written.
    Skips as :func:`files_at` does."""
    written = []
    for name in files_at(repo, commit, url, env):
        if name.startswith(prefix) and name.endswith(suffix) and name not in left_out:
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file_at(repo, commit, name, url, env))
            written.append(target)
    return written


def codex_recount(paths: list[Path]) -> tuple[int, int, int, int]:
    """Calls, uncached input, reads and output of Codex rollouts: one call per ``token_count``
    event whose running total moved, its ``last_token_usage``; a count of no input and no output
    is no call, and one whose running total and usage another rollout holds (a subagent's copy
    of its parent's history) is counted once. Lines are split at newlines only (a message may
    hold a U+2028)."""
    calls = uncached = read = output = 0
    seen: set[tuple[str, str]] = set()
    for path in paths:
        previous = None
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            entry = json.loads(line)
            payload = entry.get("payload") or {}
            if entry.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
                total, last = payload["info"]["total_token_usage"], payload["info"]["last_token_usage"]
                if total == previous:  # the same count repeated: no new call
                    continue
                previous = total
                key = (json.dumps(total, sort_keys=True), json.dumps(last, sort_keys=True))
                if (last["input_tokens"] == 0 and last["output_tokens"] == 0) or key in seen:
                    continue
                seen.add(key)
                calls += 1
                uncached += last["input_tokens"] - last["cached_input_tokens"]
                read += last["cached_input_tokens"]
                output += last["output_tokens"]
    return calls, uncached, read, output


def gemini_recount(paths: list[Path]) -> tuple[int, int, int, int, set[str]]:
    """Calls, uncached input (the tool-use prompt with it), output (thoughts with it), reads and
    models of Gemini CLI session files (one JSON object each): one call per ``gemini`` message with
    a non-zero token count, once per session and message id; ``input`` includes ``cached``."""
    calls = uncached = output = read = 0
    models: set[str] = set()
    seen: set[tuple[str, str]] = set()
    for path in paths:
        session = json.loads(path.read_text(encoding="utf-8"))
        for message in session["messages"]:
            tokens = message.get("tokens") or {}
            if message.get("type") != "gemini" or not (tokens.get("input") or tokens.get("output")):
                continue
            if (session["sessionId"], message["id"]) in seen:
                continue
            seen.add((session["sessionId"], message["id"]))
            calls += 1
            uncached += tokens["input"] - tokens.get("cached", 0) + tokens.get("tool", 0)
            output += tokens["output"] + tokens.get("thoughts", 0)
            read += tokens.get("cached", 0)
            models.add(message["model"])
    return calls, uncached, output, read, models
