"""The command line's subparsers, wrapped so that only the subcommand being run is filled in.

Its own module so that the modules adding a subcommand's options (``record``'s in
:mod:`prefixbench.reports.trace`, ``bench``'s in :mod:`prefixbench.reports.bench`) can name the
type they are passed without importing :mod:`prefixbench.reports.cli`, which imports them.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any


class Unused:
    """Stands in for the parser of a subcommand that is not being run: takes any call, adds
    nothing, and is falsy so a ``_add_*_parser`` can return before importing what its help lists."""

    def __bool__(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


class Subcommands:
    """``add_subparsers()``, filling in only the subcommand ``only`` (None: all of them).

    Every subcommand is still registered, with its help line from ``helps`` (one wording: the
    command line's ``COMMANDS``), so ``--help`` lists them all; each takes ``--debug`` after the
    subcommand too, helped as ``debug_help``."""

    def __init__(self, action: argparse._SubParsersAction, only: str | None, helps: Mapping[str, str], debug_help: str) -> None:
        self._action = action
        self._only = only
        self._helps = helps
        self._debug_help = debug_help

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser | Unused:
        parser = self._action.add_parser(name, help=self._helps[name], **kwargs)
        # SUPPRESS: absent, it leaves the top-level value alone.
        parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=self._debug_help)
        return parser if self._only is None or self._only == name else Unused()
