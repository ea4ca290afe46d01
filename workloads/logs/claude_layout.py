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
  ``journal.jsonl`` (4).

A subagent a subagent starts is written in the same folder as the others (its
``agent-<id>.meta.json`` names its parent), never a folder below its parent's file: no layout of
its own. One copy of a home found public (austinweitao/claude-backup) swaps the two folders of a
workflow run, ``subagents/<session>/workflows/<run>/agent-<id>.jsonl``, and keeps the session's
transcript in ``sessions/<session>.jsonl``: read as the same 4 folders down, its session's
transcript that copy's. The folders are told by their place and by the names Claude Code gives them (``subagents``,
``workflows``, a session's id a UUID), never by a name a user chooses."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

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
        return path.parents[4] / ("sessions" if _swapped(path.parts) else "") / f"{session}.jsonl"
    folder = path.parent
    if folder.name == "subagents":
        folder = folder.parent
    if folder.name == session:
        folder = folder.parent
    return folder / f"{session}.jsonl"
