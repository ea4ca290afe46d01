"""Where Claude Code writes a session's subagent transcripts, below the project's folder
(``~/.claude/projects/<project>/``): the one place the reader (a subagent's session,
:func:`~prefixbench.workloads.logs.formats.claude_code.read`, and a subagent's start node), ttl-auto's
setting scope (:func:`~prefixbench.workloads.audit.whatif._setting_scope`), the audit's project
folder (:func:`~prefixbench.workloads.audit.core._project_folder`) and report.html's sessions
(:func:`~prefixbench.reports.advice.sessions_by_folder`) learn the layouts from.

By version:

* older (1.0.x): ``agent-<id>.jsonl`` beside the session's ``<session>.jsonl`` (0 folders down);
* ``<session>/agent-<id>.jsonl`` (1);
* 2.x: ``<session>/subagents/agent-<id>.jsonl``, compaction agents ``agent-acompact-*`` too (2);
* workflow runs: ``<session>/subagents/workflows/<run>/agent-<id>.jsonl`` beside the run's
  ``journal.jsonl`` (4), which is no log: a walk skips it quietly, listed as the files beside the
  logs are (:func:`is_run_journal`).

A subagent a subagent starts is written in the same folder as the others (its
``agent-<id>.meta.json`` names its parent), never a folder below its parent's file: no layout of
its own. One copy of a home found public (austinweitao/claude-backup) swaps the two folders of a
workflow run, ``subagents/<session>/workflows/<run>/agent-<id>.jsonl``, and keeps the session's
transcript in ``sessions/<session>.jsonl``: read as the same 4 folders down, its session's
transcript that copy's. Its main transcripts, ``<project>/sessions/<session>.jsonl``, are one folder
below their project's folder (:func:`project_depth`): told so where that project's folder holds
Claude Code's session-keyed folders swapped the same way, a ``subagents`` or ``tool-results``
folder holding a folder named by a session's id (``subagents/<session>/``, where Claude Code writes
``<session>/subagents/``); a ``sessions`` folder with nothing of that beside it is a project's
folder of its own, as any folder is. The folders are told by their place and by the names Claude Code gives them (``subagents``,
``workflows``, a session's id a UUID), never by a name a user chooses."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path, PurePath

#: A Claude Code session's id, as it names the folder of the session's subagent transcripts
#: (a UUID the agent makes, never a name a user chooses: a project's folder is its path made one
#: name, ``-home-u-w``).
SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def _swapped(parts: Sequence[str]) -> bool:
    """A workflow run's agent in a copy that swaps its session's and ``subagents`` folders."""
    return len(parts) >= 5 and parts[-1].startswith("agent-") and parts[-3] == "workflows" and (
        parts[-5] == "subagents" and SESSION_ID.fullmatch(parts[-4]) is not None)


def subagent_depth(parts: Sequence[str]) -> int:
    """How many folders a Claude Code transcript (its path's ``parts``, the file last) lies below
    its project's folder, by the layouts in this module's docstring: 0 for a session's transcript
    and an older version's subagent beside it, 1, 2 or 4 for a subagent in ``<session>/``,
    ``<session>/subagents/`` or a workflow run's folder."""
    n = len(parts)
    if _swapped(parts) or (n >= 5 and parts[-1].startswith("agent-") and parts[-3] == "workflows"
                           and parts[-4] == "subagents" and SESSION_ID.fullmatch(parts[-5])):
        return 4
    if n >= 2 and parts[-2] == "subagents":
        return 2
    if n >= 2 and parts[-1].startswith("agent-") and SESSION_ID.fullmatch(parts[-2]):
        return 1
    return 0


def session_transcript(path: PurePath, session: str) -> PurePath:
    """Where the main transcript of ``session`` is, for a subagent's (or compaction agent's)
    transcript at ``path`` that names it: ``<project>/<session>.jsonl``, the project's folder
    :func:`subagent_depth`'s folders above the file (a swapped copy's: ``<project>/sessions/``).
    Above a ``subagents`` folder (or none, 2.x and older), a folder is passed over only where it is
    the session's id, never for another name."""
    if subagent_depth(path.parts) == 4:
        return project_folder(path) / ("sessions" if _swapped(path.parts) else "") / f"{session}.jsonl"
    folder = path.parent
    if folder.name == "subagents":
        folder = folder.parent
    if folder.name == session:
        folder = folder.parent
    return folder / f"{session}.jsonl"


@functools.lru_cache(maxsize=1024)
def _swapped_copy(project: str) -> bool:
    """Whether the folder ``project`` holds a ``subagents`` or ``tool-results`` folder with a folder
    named by a session's id in it: the copy that swaps a session's folders (the module's docstring)."""
    for name in ("subagents", "tool-results"):
        try:
            if any(SESSION_ID.fullmatch(entry.name) and entry.is_dir() for entry in (Path(project) / name).iterdir()):
                return True
        except OSError:
            continue
    return False


def project_depth(parts: Sequence[str]) -> int:
    """How many folders a Claude Code transcript (its path's ``parts``, the file last) lies below
    its project's folder, for every layout this module knows: :func:`subagent_depth`, and 1 for the
    swapped copy's main transcript, ``<project>/sessions/<session>.jsonl``, where its project's
    folder holds that copy's swapped session folders (the module's docstring says what decides it:
    the file system is looked at there, once a folder)."""
    depth = subagent_depth(parts)
    if depth == 0 and len(parts) >= 3 and parts[-2] == "sessions" and parts[-1].endswith(".jsonl") and (
            SESSION_ID.fullmatch(parts[-1][:-len(".jsonl")])):
        folder = list(parts[:-2])
        if folder and not folder[0]:  # (a path split at its separators: its root an empty name)
            folder[0] = "/"
        return 1 if folder and _swapped_copy(str(PurePath(*folder))) else 0
    return depth


def project_folder(path: PurePath) -> PurePath:
    """The project's folder of the Claude Code transcript at ``path`` (:func:`project_depth`
    folders above it; the topmost folder where the path is shorter)."""
    return path.parents[min(project_depth(path.parts), len(path.parents) - 1)]


#: The keys of a workflow run's ``journal.jsonl`` records: ``{"type": "started", "agentId", "key"}`` as
#: a run's agent starts and ``{"type": "result", "agentId", "key", "result"}`` as it ends (Claude Code
#: 2.1.212, austinweitao/claude-backup's three journals), ``{"type": "failed", "agentId"}`` where it
#: failed; tools that read the journal show ``started`` rows with ``label`` and ``phase`` instead of
#: ``key``. The run's bookkeeping, no call.
_JOURNAL_KEYS = frozenset({"type", "agentId", "key", "label", "phase", "result"})
_JOURNAL_TYPES = frozenset({"started", "result", "failed"})

#: Why a walk skips a workflow run's journal (:func:`is_run_journal`), said in its file's note.
RUN_JOURNAL_WHY = "a Claude Code workflow run's journal (its agents started and their results: no call), not a log"


def is_run_journal(path: PurePath, values: Sequence[object]) -> bool:
    """Whether ``path``, a file a folder walk found, is a workflow run's ``journal.jsonl``: where it
    sits (``journal.jsonl`` in a run's folder, ``workflows/<run>/``, in either folder order of the
    module's docstring) and what its first records (``values``) are: each an object of a run
    journal's keys (:data:`_JOURNAL_KEYS`), naming an ``agentId``, whose ``type`` is ``started``,
    ``result`` or ``failed``."""
    parts = path.parts
    return (len(parts) >= 4 and parts[-1] == "journal.jsonl" and parts[-3] == "workflows" and bool(values)
            and all(isinstance(v, dict) and set(v) <= _JOURNAL_KEYS and v.get("type") in _JOURNAL_TYPES
                    and "agentId" in v for v in values))
