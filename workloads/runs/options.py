"""Typed options of the commands that run workloads: the command line (reports/cli.py) fills
them from its flags, and nothing below reports/ sees the flags themselves.

Values stay as given where parsing them can fail (``windows``: ``"32k,128k"``): each is parsed
where it is used, so an error names the first bad flag in the same order as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec


class SweepRunOptions(msgspec.Struct, frozen=True):
    """How ``sweep`` executes its plan and what it prints (the plan itself is a SweepSpec)."""

    out: Path
    format: Literal["table", "json"] = "table"
    #: No progress and no summary line on stderr.
    quiet: bool = False
    #: Worker processes (None: the cores when there is enough to share).
    jobs: int | None = None
    #: A Dask scheduler address or ``"local"`` (None: this machine's processes).
    scheduler: str | None = None
    #: Recompute runs the result store already holds.
    fresh: bool = False


class CheckOptions(msgspec.Struct, frozen=True):
    """``check``: the built-in specs on a preset, user engines, or a recorded trace."""

    preset: str = "patched"
    #: ``--windows`` as given (None: 32k,128k,512k for engines; none for a trace).
    windows: str | None = None
    #: ``--engines`` as given, comma-separated (None: every built-in one).
    engines: str | None = None
    #: User engines by import path or installed name (``--engine``, repeatable).
    engine: tuple[str, ...] = ()
    engine_config: Path | None = None
    #: Provider profiles, comma-separated.
    profile: str = "lenient"
    trace: Path | None = None
    #: How messages name the trace where it is not its path: ``<stdin>`` for ``--trace -``
    #: (read from a temporary copy whose folder differs on every run).
    trace_shown: str | None = None
    input: str = "chat-completions"
    out: Path | None = None
    #: A vacuous result fails instead of being skipped.
    vacuous_fails: bool = False
    #: No progress or 'wrote' line on stderr (``--quiet``).
    quiet: bool = False


class RecordOptions(msgspec.Struct, frozen=True):
    """``record``: one workload at one window and preset, its requests written to ``file``."""

    file: Path
    workload: str = "seed-coding"
    window: str = "32k"
    preset: str = "patched"
    profile: str = "lenient"
    engine: tuple[str, ...] = ()
    #: The workload options given (as the factory takes them).
    workload_options: dict[str, object] = msgspec.field(default_factory=dict)
    #: Replace ``file`` if it exists (``--force``); else an existing file is refused.
    force: bool = False
    #: No progress or 'wrote' line on stderr (``--quiet``).
    quiet: bool = False
