"""The ``prefixbench`` command: sweep, check, replay, audit.

A user mistake ends with one line on stderr (``prefixbench: error: ...``) and exit status 2;
a failing check exits 1. A user's engine that fails while it runs is such a mistake too (an
:class:`~prefixbench.kernel.api.EngineError`: one line naming the engine, the method, the step,
the workload and the window). ``--debug`` (on any subcommand) or ``PREFIXBENCH_DEBUG=1`` prints
the traceback before that line.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, assert_never

from prefixbench.reports.options import Default, check_price_options, parse_list, parse_windows, warn_window_memory
from prefixbench.reports.stdio import (
    STDIN_NAME,
    drop_stdout,
    is_dash,
    path_argument,
    read_stdin_text,
    readable_file,
    refuse_dashes,
    refuse_terminal,
    reopen_closed_streams,
)
from prefixbench.reports.subcommands import Subcommands
from prefixbench.simulator.errors import UserError

if TYPE_CHECKING:
    from prefixbench.reports.progress import ReadProgress
    from prefixbench.workloads.runs.options import CheckOptions
    from prefixbench.workloads.specs.base import SpecResult
    from prefixbench.workloads.scripted.registry import WorkloadEntry

# Start-up (docs/performance.md): this module imports only argparse and a few small modules. A
# subcommand's options, and what their help lists (workloads, presets, cache models), are
# built only for the subcommand on the command line, and each command imports what it uses
# when it runs: `--version`, `--help` and `replay` never load the kernel, the workloads,
# numpy, pandas or matplotlib (tests/unit/reports/test_startup.py).

DEFAULT_OUT = Path("prefixbench-out")
#: Set to 1 (or any value but 0 and empty) for the traceback behind an error line, as ``--debug``.
DEBUG_VARIABLE = "PREFIXBENCH_DEBUG"
DEBUG_HELP = f"on an error, print the traceback before the one-line message (also: {DEBUG_VARIABLE}=1)"

#: Each subcommand's one line, in ``prefixbench --help``'s order: its ``--help`` line and
#: README.md's list of commands (tests/test_docs.py holds the README to it).
COMMANDS = {
    "sweep": "run workloads x engines x presets x windows; tables, CSV, charts, report.html",
    "check": "run the integrity specs on a preset, your engine (--engine) or a recorded log (--trace)",
    "replay": "replay a request log or a captured session through a cache model",
    "compare": "judge a new sweep or audit against a baseline, with regression limits",
    "audit": "which requests of real agent logs missed the cache, why, and what it cost",
    "record": "write a kernel run as a request log, for replay and check --trace",
    "bench": "rank compaction strategies by cost per task across provider caches, windows and seeds",
    "proxy": "record an agent's calls through a local reverse proxy, each miss explained live",
}


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, worked out the same way without importing shutil
    (which brings zlib, bz2 and lzma: start-up: docs/performance.md): ``COLUMNS`` when a positive
    number, else the terminal's width, else 80."""
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    try:
        lines = int(os.environ["LINES"])
    except (KeyError, ValueError):
        lines = 0
    if columns <= 0 or lines <= 0:
        try:
            size = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            size = os.terminal_size((80, 24))
        if columns <= 0:
            columns = size.columns or 80
    return columns


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, as wide as argparse makes it, without importing shutil for that."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width)

    def _split_lines(self, text: str, width: int) -> list[str]:
        """argparse's, but a line never ends inside a hyphenated name (``mini-swe-`` / ``agent``
        read as two words): names of formats, cache models and strategies stay whole."""
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """The description's paragraph, wrapped as :meth:`_split_lines` wraps an option's help."""
        import textwrap

        return textwrap.fill(" ".join(text.split()), width, initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False)


#: argparse's line for a value its ``type=int`` (``float``) could not read.
_INVALID_NUMBER = re.compile(r"argument (?P<names>\S+): invalid (?P<kind>int|float) value: (?P<value>'.*')", re.DOTALL)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2), like every other user error."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """argparse's, keeping the words for :meth:`error`'s wording, and giving a value that
        starts with '-' and a digit (``--windows -5k``) to the option before it.

        argparse reads ``-5k``, ``-1e3`` or ``-1-3`` as an unknown option (only a plain ``-5``
        or ``-0.5`` passes as a number) and says "expected one argument"; attached as
        ``--windows=-5k``, the value reaches the option's own check, whose line names the
        option and the value. No option of prefixbench starts with '-' and a digit."""
        words = list(sys.argv[1:] if args is None else args)
        self._words = words  # kept for the error's wording
        return super().parse_known_args(self._attach_dashed_values(words), namespace)

    def _attach_dashed_values(self, words: list[str]) -> list[str]:
        joined: list[str] = []
        index = 0
        while index < len(words):
            word = words[index]
            if word == "--":
                joined.extend(words[index:])
                break
            if self._value_option(word) is not None and index + 1 < len(words) and _looks_negative(words[index + 1]):
                joined.append(f"{word}={words[index + 1]}")
                index += 2
                continue
            joined.append(word)
            index += 1
        return joined

    def _value_option(self, word: str) -> argparse.Action | None:
        """The option taking one value that ``word`` names (whole, or a unique abbreviation of a
        long option, as argparse accepts), None for anything else (a ``--name=value`` word too)."""
        if not word.startswith("-") or "=" in word or word in ("-", "--"):
            return None
        action = self._option_string_actions.get(word)
        if action is None and word.startswith("--") and self.allow_abbrev:
            matches = {self._option_string_actions[name] for name in self._option_string_actions if name.startswith(word)}
            action = next(iter(matches)) if len(matches) == 1 else None
        return action if action is not None and action.nargs is None else None

    def _missing_value(self, message: str) -> str:
        """argparse's "argument --windows: expected one argument", saying what followed the
        option and how to write a value that starts with '-'."""
        names = message.removeprefix("argument ").split(": ", 1)[0].split("/")
        option = next((name for name in names if name.startswith("--")), names[0])
        words: list[str] = getattr(self, "_words", [])
        follower = ""
        for index, word in enumerate(words[:-1]):
            if word == "--":
                break
            action = self._value_option(word)
            if action is not None and set(action.option_strings) & set(names):
                follower = words[index + 1]
                break
        if follower.startswith("-") and follower != "--" and follower.split("=", 1)[0] not in self._option_string_actions \
                and self._value_option(follower) is None:
            return f"{option}: got no value, and '{follower}' after it reads as an option; if it is the value, write {option}={follower}"
        return f"{option}: missing its value (a value that starts with '-' is written {option}=VALUE)"

    def error(self, message: str) -> NoReturn:
        words: list[str] = getattr(self, "_words", [])
        prog = self.prog
        says_where = False  # the line already names where the help lists the choices
        if message.startswith("argument ") and message.endswith(": expected one argument"):
            message = self._missing_value(message)
        elif message.startswith("argument ") and ": invalid choice: " in message:
            message, says_where = self._invalid_choice(message)
        elif message.startswith("argument ") and (bad := _INVALID_NUMBER.fullmatch(message)) is not None:
            # argparse's "argument --jobs: invalid int value: 'abc'", in the words of the options
            # that read their own numbers (--read-step, --codex-warm-head): the option, the value.
            option = next((name for name in bad["names"].split("/") if name.startswith("--")), bad["names"])
            message = f"{option}: {bad['value']} is not a {'whole number' if bad['kind'] == 'int' else 'number'}"
        elif message.startswith("the following arguments are required"):
            # argparse checks the positionals before it looks at what it could not place: an
            # unknown option is the likelier mistake, so it is the one named.
            unknown = self._unknown_options(words)
            if unknown:
                message = f"unrecognized arguments: {' '.join(unknown)}"
        elif message.startswith("unrecognized arguments") and self._subparsers is not None:
            command = _command_in(words)
            if command and command in self._subcommand_names():
                prog = f"{self.prog} {command}"  # the options the user can pick from are the subcommand's
        raise UserError(message if says_where else f"{message} (see '{prog} --help')")

    def _invalid_choice(self, message: str) -> tuple[str, bool]:
        """argparse's ``invalid choice`` line, which dumps every choice (some 60 for ``audit
        --input``), as the option, the bad value, the closest choice and the whole list only where
        it is short (else where to read it); and whether the line says where to read it."""
        import ast

        from prefixbench.simulator.errors import did_you_mean

        option, _, rest = message.removeprefix("argument ").partition(": invalid choice: ")
        value_text, _, _ = rest.partition(" (choose from ")
        try:
            value = str(ast.literal_eval(value_text))
        except (ValueError, SyntaxError):
            return message, False
        action = next((a for a in self._actions if option in (*a.option_strings, a.dest, a.metavar) and a.choices), None)
        if action is None:
            return message, False
        choices = [str(choice) for choice in action.choices]
        hint = did_you_mean(value, choices)
        listed = len(choices) > 8
        listing = f"{len(choices)} choices, listed by '{self.prog} --help'" if listed else f"choose from {', '.join(choices)}"
        if isinstance(action, argparse._SubParsersAction):  # the subcommand: a word, not an option's value
            return f"unknown command {value!r}{': ' + hint if hint else ''} ({listing})", listed
        return f"{option}: invalid choice {value!r}{': ' + hint if hint else ''} ({listing})", listed

    def _subcommand_names(self) -> set[str]:
        return {name for action in self._actions if isinstance(action, argparse._SubParsersAction) for name in action.choices}

    def _unknown_options(self, words: Sequence[str]) -> list[str]:
        """The option-like words before ``--`` that name none of this parser's options."""
        known = self._option_string_actions
        unknown: list[str] = []
        for word in words:
            if word == "--":
                break
            if not word.startswith("-") or word == "-" or _is_number(word) or _looks_negative(word):
                continue
            name = word.split("=", 1)[0]
            if name in known or (not name.startswith("--") and name[:2] in known):
                continue
            if name.startswith("--") and self.allow_abbrev and any(option.startswith(name) for option in known):
                continue
            unknown.append(word)
        return unknown


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _looks_negative(word: str) -> bool:
    """A word starting with '-' and a digit (or '.' and a digit): a negative or odd value, never an option."""
    rest = word[1:].removeprefix(".")
    return word.startswith("-") and rest[:1].isdigit()


def _is_file(word: str) -> bool:
    """Whether a command-line word names an existing file (never an error: a NUL, a name too long)."""
    try:
        return Path(word).is_file()
    except (OSError, ValueError):
        return False


def _version() -> str:
    """The installed distribution's version (``prefixbench`` is a namespace package)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("prefixbench")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """``--version``, reading the installed version only when asked (importlib.metadata is slow to import)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> NoReturn:
        sys.stdout.write(f"prefixbench {_version()}\n")  # stdout, as argparse's own version action
        parser.exit()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser (public so the docs' command synopses can be checked against it).

    ``only``: fill in the options of that subcommand alone (``run`` passes the one on the
    command line, or ``""`` when there is none); None fills in every subcommand.
    """
    parser = _Parser(
        prog="prefixbench",
        description="Prefix-cache simulator and regression benchmarks for compacting LLM agents.",
        epilog="exit status: 0 done, 1 a check, gate or comparison failed (check; audit --fail-on, "
        "--min-hit-ratio, --max-lost-usd; compare), 2 bad input (one line naming the file:line, "
        "option or key), 130 interrupted, 143 a proxy stopped by SIGTERM",
    )
    parser.add_argument("--version", action=_VersionAction, help="show the installed version and exit")
    parser.add_argument("--debug", action="store_true", default=False, help=DEBUG_HELP)
    sub = Subcommands(parser.add_subparsers(dest="command", required=True, parser_class=_Parser), only, COMMANDS, DEBUG_HELP)
    _add_sweep_parser(sub)
    _add_check_parser(sub)
    _add_replay_parser(sub)
    _add_compare_parser(sub)
    _add_audit_parser(sub)
    _add_record_parser(sub)
    _add_bench_parser(sub)
    _add_proxy_parser(sub)
    return parser


def _command_in(argv: Sequence[str]) -> str:
    """The subcommand on the command line (its first word), ``""`` when there is none."""
    return next((arg for arg in argv if not arg.startswith("-")), "")


def _add_record_parser(sub: Subcommands) -> None:
    from prefixbench.reports.trace import add_record_parser

    add_record_parser(sub, _add_engine_option, _add_workload_options)


def _add_bench_parser(sub: Subcommands) -> None:
    from prefixbench.reports.bench import add_bench_parser

    add_bench_parser(sub, _add_engine_option, _add_workload_options)
def _add_proxy_parser(sub: Subcommands) -> None:
    proxy = sub.add_parser(
        "proxy",
        description="Forward every call of an agent to its provider unchanged (streams pass through as they "
        "arrive), append each call to a capture file that prefixbench audit reads (request bodies, usage, "
        "stream events; API keys and auth headers redacted) and print one line per call: lane, read / prompt, "
        "hit ratio and, for a miss, its cause from the body diff and the dollars lost. Needs the proxy extra "
        "(aiohttp). Ctrl-C (exit 130) or SIGTERM (exit 143) stops it, keeping every call recorded.",
    )
    if not proxy:
        return
    proxy.add_argument("--listen", default="127.0.0.1:8787", metavar="HOST:PORT", help="where the agent connects (default: 127.0.0.1:8787; port 0 picks a free one)")
    proxy.add_argument("--upstream", default="anthropic", metavar="NAME|URL", help="where calls go: anthropic, openai, deepseek, gemini (their public API bases) or a base URL "
        "such as https://api.deepseek.com/anthropic (default: anthropic)")
    proxy.add_argument("--out", type=path_argument, default=Path("prefixbench-capture.jsonl"), metavar="FILE.jsonl", help="the capture, appended to, one call a line; a file holding another log is refused (default: prefixbench-capture.jsonl)")


def _add_sweep_parser(sub: Subcommands) -> None:
    sweep = sub.add_parser(
        "sweep",
        description="Run a scripted workload through the compaction kernel at each window, engine and "
        "preset against the simulated provider cache. Prints the table and writes runs.csv, "
        "observations.csv, report.md, report.html, hit-rate.png, timeline-<window>.png (engines.png "
        "with several engines; cost.md and cost.png with --price) and the result store (store/) "
        "into --out.",
    )
    if not sweep:
        return
    from prefixbench.kernel.presets import PRESET_ORDER, PRESETS
    from prefixbench.simulator.validate import PROFILES
    from prefixbench.workloads.scripted.registry import WORKLOADS

    sweep.add_argument("--workload", default=Default("seed-coding"), help=f"workload: {_listing(WORKLOADS)} (default: seed-coding)")
    sweep.add_argument("--windows", default=Default("32k,128k,512k"), help="context windows, k = 1,000 and m = 1,000,000 tokens (default: 32k,128k,512k)")
    sweep.add_argument("--presets", default=Default(",".join(PRESET_ORDER)), help=f"presets, comma-separated: {', '.join(PRESETS)} (default: {','.join(PRESET_ORDER)})")
    sweep.add_argument("--engines", default=None, help=f"compaction engines, comma-separated: {_engine_listing()} (default: the workload's own)")
    _add_engine_option(sweep)
    sweep.add_argument("--profile", default=Default("lenient"), help=f"provider strictness profile: {'|'.join(PROFILES)} (default: lenient)")
    _add_cache_options(sweep)
    _add_workload_options(sweep)
    sweep.add_argument("--engine-config", type=path_argument, default=None, metavar="FILE", help="per-engine settings, TOML or JSON: {engine: {key: value}}; one table per engine the sweep runs. "
        "A shipped or user engine's table (e.g. [claude-code-autocompact]) is taken on any workload; "
        f"a built-in engine's table only where the workload takes it ({_sections_listing()}), refused elsewhere. "
        "Each run records its engine's table in params (engine_config=KEY=VALUE,...). "
        "Settings can add note: lines under the output (codex-compact mode=remote: the assumed price of its compact calls; mode=remote_v2: its stand-in trigger item; "
        "the engines' warnings, counted)")
    _add_price_options(sweep)
    sweep.add_argument("--out", type=path_argument, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT}/)")
    sweep.add_argument("--format", choices=("table", "json"), default="table", help="what standard output prints (default: table); --out is written either way")
    sweep.add_argument("--quiet", action="store_true", help="no progress, notes or 'wrote' line on stderr (warnings and errors are still said)")
    _add_scale_options(sweep)


def _add_scale_options(sweep: argparse.ArgumentParser) -> None:
    """Grid files, seeds, parallel and distributed execution, the result store (docs/sweep.md)."""
    sweep.add_argument("--grid", type=path_argument, default=None, metavar="FILE.toml", help="run the named sweeps of a grid file (cartesian products); flags given here override its values")
    sweep.add_argument("--sweep", dest="sweep_name", default=None, metavar="NAME", help="with --grid: only the sweep of this name (default: every sweep in the file)")
    sweep.add_argument("--seeds", default=None, help="workload shape seeds: 0-16 (inclusive), 0,3,5 or a mix; 0 is the default shape (default: 0)")
    sweep.add_argument("--jobs", type=int, default=None, metavar="N", help="worker processes, at most 4 x the cores without a remote --scheduler (default: the number of cores when the sweep has more than 4 runs to compute, else 1)")
    sweep.add_argument("--scheduler", default=None, metavar="ADDRESS|local", help="run on Dask distributed: a scheduler address (tcp://host:8786) or 'local' for a LocalCluster of --jobs workers (needs the dask extra)")
    sweep.add_argument("--fresh", action="store_true", help="recompute every run, even those already in --out's result store")


def _add_check_parser(sub: Subcommands) -> None:
    check = sub.add_parser(
        "check",
        description="Run every integrity spec on a preset, on your engine (--engine MODULE:FACTORY) or on a "
        "recorded request log (--trace FILE) and print one line per spec with the figure that decided it. "
        "Exit status 1 if any spec fails: use it to gate a kernel, engine or agent change.",
    )
    if not check:
        return
    from prefixbench.kernel.presets import PRESETS
    from prefixbench.simulator.validate import PROFILES

    check.add_argument("--preset", default=None, help=f"preset to check (default: patched; known: {', '.join(PRESETS)}; not with --trace)")
    check.add_argument("--windows", default=None, help="windows of the window-scaled specs, k = 1,000 and m = 1,000,000 tokens (default: 32k,128k,512k); with --trace, the context window(s) the log's requests must fit (default: none, so window-respected is skipped)")
    check.add_argument("--vacuous", choices=("skip", "fail"), default="skip", help="a spec the run never exercised (no summary call, no rewrite) proves nothing: skip it (default), or fail it")
    check.add_argument("--engines", default=None, help=f"only specs of these engines, comma-separated: {_engine_listing()} (default: every built-in one)")
    _add_engine_option(check)
    check.add_argument("--engine-config", type=path_argument, default=None, metavar="FILE", help="settings of user engines, TOML or JSON: {engine: {key: value}}, keyed by the name or import path given (the factory's options.config)")
    check.add_argument("--profile", default="lenient", help=f"provider profile(s) a user engine runs under and a trace is checked against, comma-separated: {'|'.join(PROFILES)} (default: lenient)")
    _add_trace_options(check)
    check.add_argument("--out", type=path_argument, default=None, metavar="DIR", help="also write check.json and report.html into this folder (default: none)")
    check.add_argument("--quiet", action="store_true", help="no progress, notes or 'wrote' line on stderr (warnings and errors are still said)")


def _add_replay_parser(sub: Subcommands) -> None:
    replay = sub.add_parser(
        "replay",
        description="Replay a JSONL request log through a simulated prefix cache (byte-exact unless --cache names "
        "another model) and print, per request, "
        "prompt, cached and uncached tokens, whether it extends the previous request of its "
        "conversation, and where it first diverged from what was cached; under a strict --profile, which "
        "requests the provider would refuse (HTTP 400).",
    )
    if not replay:
        return
    from prefixbench.simulator.validate import PROFILES
    from prefixbench.workloads.logs.formats import REPLAYS, replay_help

    replay.add_argument("file", metavar="FILE", type=path_argument, help="the request log (JSONL); - reads it from standard input")
    replay.add_argument("--input", default=next(iter(REPLAYS)), choices=tuple(REPLAYS), help=replay_help())
    replay.add_argument(
        "--chars-per-token",
        type=float,
        default=None,
        help="anthropic-capture: characters per Claude token (default: the ratio calibrated on real traffic)",
    )
    _add_cache_options(replay)
    replay.add_argument("--profile", default="lenient", help=f"provider strictness profile: {'|'.join(PROFILES)} (default: lenient); "
                        "a request it would refuse is reported rejected (HTTP 400), never cached (chat-completions logs only)")
    replay.add_argument("--format", choices=("table", "json"), default="table", help="stdout format (default: table)")
    _add_price_options(replay)
    replay.add_argument("--quiet", action="store_true", help="no progress on stderr (warnings and errors are still said)")


def _engine_listing() -> str:
    """Built-in engines, then the ones installed packages declare (entry-point group prefixbench.engines)."""
    from prefixbench.workloads.scripted.registry import all_engines, user_engines

    installed = user_engines()
    return ", ".join(all_engines()) + (f"; installed: {', '.join(installed)}" if installed else "")


def _add_engine_option(parser: argparse.ArgumentParser, *, repeatable: bool = True) -> None:
    """``--engine package.module:factory``: a user's engine by import path (repeatable, but on ``record``)."""
    parser.add_argument(
        "--engine", action="append", default=None, metavar="MODULE:FACTORY",
        help="a user's engine: package.module:factory, or an installed engine's name; the factory takes "
        "(window, options) and returns an engine (see prefixbench.kernel.api)"
        + ("; repeatable" if repeatable else "; one (the run it records)"),
    )


def _add_trace_options(parser: argparse.ArgumentParser) -> None:
    """``check --trace FILE [--input FORMAT]``: judge a recorded request log instead of a run."""
    from prefixbench.reports.trace import add_trace_options

    add_trace_options(parser)


def _add_compare_parser(sub: Subcommands) -> None:
    compare = sub.add_parser(
        "compare",
        description="Compare two sweep results (runs.csv or sweep --format json) or two audit results "
        "(audit --format json) run by run / lane by lane, and judge each figure against --max-regression. "
        "Exit 1 when a figure crosses its threshold or a baseline run is missing, 2 on files of "
        "different kinds. Named baselines live in .prefixbench/ (--save NAME, --compare NAME).",
    )
    if not compare:
        return
    from prefixbench.workloads.runs.compare import DEFAULT_THRESHOLDS, THRESHOLD_HELP

    compare.add_argument("files", nargs="+", type=path_argument, metavar="FILE", help="BASE NEW, or NEW alone with --compare NAME (or --save NAME); one of them may be -, read from standard input")
    compare.add_argument(
        "--max-regression",
        default=DEFAULT_THRESHOLDS,
        metavar="LIMITS",
        help="how much a figure may worsen, comma-separated NAME=AMOUNT[%%|pt], NAME=off, or 'none' (no gate): "
        + "; ".join(f"{k}: {v}" for k, v in THRESHOLD_HELP.items())
        + f" (default: {DEFAULT_THRESHOLDS}; a limit you name replaces only its own default, the others stay on)".replace("%", "%%"),  # argparse %-formats help
    )
    compare.add_argument(
        "--per-request", choices=("auto", "off"), default="auto",
        help="auto: where a lane's or the totals' request counts differ (an audit of a log that grew), judge its tokens "
        "and dollars (uncached, usd, written) per request, said in a note; off: judge them as they are (default: auto)",
    )
    compare.add_argument("--save", default=None, metavar="NAME", help="store NEW as the named baseline .prefixbench/NAME.json")
    compare.add_argument("--compare", default=None, metavar="NAME", help="compare NEW with the named baseline .prefixbench/NAME.json")
    compare.add_argument("--format", choices=("table", "md", "json"), default="table", help="stdout format; md is the pull-request summary (default: table)")
    compare.add_argument("--markdown", type=path_argument, default=None, metavar="FILE", help="also write the Markdown summary to FILE (for a PR comment)")


def _add_audit_parser(sub: Subcommands) -> None:
    audit = sub.add_parser("audit")
    if not audit:
        return
    from prefixbench.workloads.audit.causes import CAUSES
    from prefixbench.workloads.logs import formats

    # Set here rather than in add_parser: the format table is read only when audit is the command.
    audit.description = (
        f"Read real agent logs ({formats.nouns()}), replay every lane through the provider's cache model on the log's "
        "clock, give each miss a cause with its evidence, and price it. Exit 1 when a gate fails, 2 on bad input."
    )
    audit.add_argument("paths", nargs="+", type=path_argument, metavar="PATH", help="log files or folders (walked for *.jsonl / *.json / *.traj, also gzip, bzip2, xz or zstd compressed: *.jsonl.gz ...; for agents' databases: *.db, *.sqlite; and for aider's chat histories: *.md, .aider.chat.history.md; for a LangSmith bulk export: *.parquet; for Inspect AI's evaluation logs: *.eval); - reads one log from standard input, its format found from its content")
    audit.add_argument(
        "--input", default="auto", choices=formats.input_choices(), metavar="FORMAT",
        help=f"{formats.input_help()}. FORMAT: {', '.join(formats.input_choices())}",
    )
    audit.add_argument("--format", choices=("table", "json", "md"), default="table", help="stdout format (default: table)")
    audit.add_argument("--out", type=path_argument, default=None, metavar="DIR", help="write audit.md, audit.csv, audit.json, audit.png and report.html here (all or nothing)")
    audit.add_argument("--price-as-of", default=None, metavar="DATE", help="price every request at the row in force on DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MMZ; default: at its own time)")
    audit.add_argument("--fail-on", default=None, metavar="CAUSE,...", help=f"exit 1 if any request has one of these causes ({', '.join(CAUSES)}); "
                       "compaction also holds a miss another cause leads (ttl-expired) beside a compaction the log marks")
    audit.add_argument("--min-hit-ratio", default=None, metavar="R", help="exit 1 if the overall hit ratio (read / all input) is below R")
    audit.add_argument("--max-lost-usd", default=None, metavar="X", help="exit 1 if the dollars lost to misses exceed X, or if the loss cannot be told in dollars: no request's usage has a cache field, or misses with no dollar figure (no price row, a self-hosted engine) lost most of the lost tokens")
    audit.add_argument("--junit", type=path_argument, default=None, metavar="FILE", help="write JUnit XML, one test case per lane")
    audit.add_argument("--quiet", action="store_true", help="no progress, notes or 'wrote' line on stderr (warnings and errors are still said)")
    audit.add_argument(
        "--openai-zdr",
        action="store_true",
        help="assume the OpenAI organization has Zero Data Retention: a request that asks no prompt_cache_retention "
        "keeps its prefix in_memory (10 min idle modelled; documented 5-10 min, at most 1 h) instead of its model's "
        "documented default (24h on gpt-5.4, gpt-5.2, gpt-5.1, gpt-5, gpt-4.1 and their codex and chat variants, for "
        "requests sent from 2026-06-01; gpt-5.5 and gpt-5.5-pro keep 24h, their only policy, ZDR or not) (default: no ZDR)",
    )
    audit.add_argument(
        "--read-step",
        default=None,
        metavar="PROVIDER=N,...",
        help="count every read of PROVIDER's requests in whole steps of N tokens, instead of the step its rules give "
        "(measured or secondary steps: gemini-3-flash 3,924, xai 1, zai's glm-5 64, deepseek 128 or 64 by date; "
        "see docs/providers.md), e.g. gemini=1 or xai=64,zai=1; said in the report's notes (default: the rules' steps)",
    )
    audit.add_argument(
        "--billing-header",
        default=None,
        metavar="PROVIDER=ignored|keyed,...",
        help="whether PROVIDER's prompt cache keys on the cch value of Claude Code's billing header block "
        "(x-anthropic-billing-header, system[0], another value on every request): ignored compares and replays the "
        "bodies with it zeroed, keyed as sent. Default: anthropic=ignored (an assumption: public Claude Code "
        "2.1.152-2.1.219 transcripts read 96.7-99.2%% of their input from cache although cch changes on every "
        "request, as a gateway logging bodies measured (BYK/loreai#873); no public capture file decides it), every "
        "other server keyed (measured on "
        "third-party servers: anthropics/claude-code#68900); said in the report's notes, e.g. anthropic=keyed or "
        "zai=ignored",
    )
    audit.add_argument(
        "--codex-warm-head",
        default=None,
        metavar="[MODEL=]N,...",
        help="assume a Codex session's first call finds N tokens of its head (instructions, tools, the start of "
        "Codex's developer message) cached before the log, for MODEL (or every model), and reads them after every "
        "TTL expiry too; give a point of the model's read grid. Measured on 31 public rollouts: 28 first calls read "
        "1,920 to 22,400 tokens, 3 (Codex 0.47 to 0.114) none, and the amount varies for one version and model "
        "(gpt-5.5 on 0.125 to 0.128: 11,648 five times, 6,528 twice); see docs/audit.md. A warm head the log's own "
        "cold points show wins. (default: none assumed, a session's first call is predicted to read 0)",
    )
    audit.add_argument(
        "--assume-model",
        default=None,
        metavar="[FORMAT=]MODEL,...",
        help="the model of the calls whose log names none (Claude Managed Agents event streams without a "
        "session.updated event, `opencode run --format json` output, ...), for FORMAT (or every format: bare or *=MODEL; "
        "a FORMAT named too wins for its calls): it sets "
        "their model, the provider its name gives (a format's own where it implies one: managed-agents is "
        "Anthropic's, a model of another provider refused) and the price row. A model the log names is never "
        "replaced; said in the report's notes, e.g. claude-opus-4-5 or managed-agents=claude-opus-4-5,opencode=gpt-5.5. "
        "A name no provider's rules and no price row know is refused. (default: none, such calls stay model "
        "unknown, unpriced)",
    )
    audit.add_argument(
        "--model-alias",
        default=None,
        metavar="ALIAS=MODEL,...",
        help="price and model the calls whose log names ALIAS (a gateway's or an agent's own name for a model, "
        "e.g. Cline's claude_4_5_opus) as MODEL, a model of the price table: its price row, its provider where "
        "the call's own provider does not name it, and its cache rules; said in the report's notes. Only the "
        "names given are mapped, none is guessed; a MODEL no price row names is refused. (default: none, a name "
        "with no price row stays unpriced)",
    )
    audit.add_argument(
        "--assume-provider",
        default=None,
        metavar="[FORMAT[:MODEL]=]PROVIDER,...",
        help="who served the calls whose log names no endpoint that tells (llm-path proxy records keep no URL; a "
        "local proxy's URL names no provider), for FORMAT (or every format: bare or *=PROVIDER; a FORMAT named too "
        "wins for its calls): their provider is otherwise taken from "
        "the model's name (glm-4-7 read with Z.AI's rules where Volcengine Ark served it), an assumption the notes "
        "state. PROVIDER is one of the providers' rules or unknown (a server prefixbench has no rules for); a "
        "provider a log's endpoint or wire names is never replaced; FORMAT applies to every such call of the "
        "format, whatever its model, FORMAT:MODEL to that model's alone; e.g. unknown, http-capture=zai or "
        "claude-code:claude-opus-4-8=anthropic "
        "(default: the provider the model's name gives)",
    )
    audit.add_argument(
        "--no-follow-reads",
        dest="follow_reads",
        action="store_false",
        help="predict a Gemini or MiniMax read as the last checkpoint inside the shared prefix, not from the checkpoint the "
        "lane's previous request reported reading (measured: Gemini's reads keep to one checkpoint for several calls, then "
        "jump; a MiniMax tool loop reads only the system prompt's entry; see docs/providers.md) (default: follow the last read)",
    )
    audit.add_argument("--jobs", type=int, default=None, metavar="N", help="read the log files in N worker processes, largest first, replay and sum up the parts of the log that share nothing in N forked processes, then re-simulate the fixes of what to change in N forked processes; at most 4 x the cores without a remote --scheduler (default: 1 for less than 64 MiB of logs or one file, else one per usable core, at most one per file and 8; 1 with --scheduler; the output is the same)")
    audit.add_argument("--scheduler", default=None, metavar="ADDRESS|local", help="read the log files on Dask distributed: a scheduler address (tcp://host:8786), whose workers see the files at the same paths, or 'local' for a LocalCluster of --jobs workers (needs the dask extra)")
    audit.add_argument(
        "--what-if",
        default=None,
        metavar="FIX,...",
        help="re-simulate the log with each fix alone and print what it saves (signed): ttl-1h, ttl-5m, ttl-auto, keep-alive, "
        "stagger-subagents, static-system, keep-prefix-compaction, pin-model, breakpoints=PLACE+... (tools, system, last, last-N, auto); "
        "all: every fix",
    )


def _listing(entries: dict[str, WorkloadEntry]) -> str:
    return "; ".join(f"{name} ({entry.summary}; engines {', '.join(entry.engines)})" for name, entry in entries.items())


def _sections_listing() -> str:
    """``seed-coding: checkpoint; thinking-tools: checkpoint, user-tail, ranges; none on subagents, idle-gaps``."""
    from prefixbench.workloads.scripted.registry import WORKLOADS

    taking = [f"{name}: {', '.join(entry.engine_sections)}" for name, entry in WORKLOADS.items() if entry.engine_sections]
    fixed = [name for name, entry in WORKLOADS.items() if not entry.engine_sections]
    return "; ".join(taking) + (f"; none on {', '.join(fixed)}" if fixed else "")


def _add_cache_options(parser: argparse.ArgumentParser) -> None:
    """``--cache`` and ``--tokenizer``, the same on every subcommand that replays requests."""
    from prefixbench.simulator.models import CACHE_MODELS, more_options_help, options_help

    parser.add_argument(
        "--cache",
        default=Default("byte-exact"),
        help=f"provider cache model, optionally with options: {', '.join(CACHE_MODELS)} (byte-exact is the "
        "reference); e.g. openai:mode=5.6, vllm:capacity_blocks=4096 or xai:block=64 (default: byte-exact). "
        f"Provider models' options, default [O official / S secondary / M measured]: {options_help()}. "
        f"Simulation options, default: {more_options_help()}",
    )
    parser.add_argument(
        "--tokenizer",
        default=Default("heuristic"),
        help="token counting for the token-based cache models: heuristic (ceil(bytes/4)) or deepseek-v4 "
        "(needs the deepseek extra) (default: heuristic)",
    )


def _add_workload_options(parser: argparse.ArgumentParser) -> None:
    """One flag per workload option in the registry; its help names the workloads that take it."""
    if not parser:  # the stand-in parser of a subcommand that is not being run
        return
    from prefixbench.workloads.scripted.registry import WORKLOADS

    helps: dict[str, list[str]] = {}
    types: dict[str, type] = {}
    for entry in WORKLOADS.values():
        for option in entry.options:
            helps.setdefault(option.name, []).append(f"{entry.name}: {option.help}")
            types[option.name] = option.type
    for name, texts in helps.items():
        parser.add_argument("--" + name.replace("_", "-"), type=types[name], default=None, help="; ".join(texts))


def _add_price_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--price", default=None, metavar="MODEL", help="add dollars at this model's prices (e.g. deepseek-v4-flash)")
    parser.add_argument("--period", default=None, choices=("off-peak", "peak"), help="DeepSeek billing period (default: off-peak)")
    parser.add_argument("--price-as-of", default=None, metavar="DATE", help="use the price in force on DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MMZ; default: latest)")


def run(argv: Sequence[str] | None = None) -> int:
    """Parse and run one command; every error a user can cause becomes one line and exit 2.

    The console script enters through :func:`prefixbench.reports.entry.main`, which adds the
    Ctrl-C handling (exit 130) around this.
    """
    reopen_closed_streams()  # `>&-`: the output goes nowhere, as to a reader that left
    stdout, sys.stdout = sys.stdout, _ReaderMayLeave(sys.stdout)  # type: ignore[assignment]
    try:
        try:
            status = _run(argv)
        except SystemExit:  # --help, --version: their text is output too
            if _flush_failed():
                return 2
            raise
        return 2 if _flush_failed() else status
    finally:
        sys.stdout = stdout


def _run(argv: Sequence[str] | None) -> int:
    """:func:`run` inside its standard output."""
    args: argparse.Namespace | None = None
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        try:
            args = build_parser(_command_in(words)).parse_args(words)
        except UserError as exc:
            dashed = next((w for w in words if w.startswith("-") and w != "-" and _is_file(w)), None)
            if dashed is None:
                raise
            raise UserError(f"{exc}; {dashed} is a file, read as an option: write ./{dashed} or put -- before it") from None
        refuse_dashes(args)
        match args.command:
            case "sweep":
                return cmd_sweep(args)
            case "check":
                return cmd_check(args)
            case "replay":
                return cmd_replay(args)
            case "record":
                from prefixbench.reports.options import record_options
                from prefixbench.reports.trace import cmd_record

                return cmd_record(record_options(args))
            case "compare":
                return cmd_compare(args)
            case "audit":
                from prefixbench.reports.audit import run_audit_command

                return run_audit_command(args)
            case "bench":
                from prefixbench.reports.bench import cmd_bench

                return cmd_bench(args)
            case "proxy":
                from prefixbench.reports.proxy_command import run_proxy

                return run_proxy(args)
        raise UserError(f"unknown command {args.command!r}")
    except UserError as exc:
        if _debugging(args):
            print_traceback(exc)
        for line in getattr(exc, "lines", None) or [str(exc)]:  # a grid file: one line a problem
            _fail(_as_flags(line, args))
        return 2
    except BrokenPipeError:
        # A write that bypassed the wrapper below found the reader gone: stop quietly.
        drop_stdout(sys.stdout)
        return 0
    except OSError as exc:  # a file that vanished or a full disk while writing
        where = f"{exc.filename}: " if exc.filename else ("standard output: " if _stdout_failed() else "")
        return _fail(f"{where}{exc.strerror or exc}")
    except MemoryError:
        return _fail("out of memory (try fewer or smaller --windows)")


def _flush_failed() -> bool:
    """Flush what the command wrote to standard output while an error can still be its one line
    (Python's own flush at exit reports a full device as 'Exception ignored' and exits 120)."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        drop_stdout(sys.stdout)
        _fail(f"standard output: {exc.strerror or exc}")
        return True
    return False


class _ReaderMayLeave:
    """Standard output for one command. When the reader of a pipe goes away (``| head -3``), the
    rest of the output is dropped and the command runs on: a check, gate or comparison still
    exits with its verdict, and ``--out`` is still written (the reader's leaving used to stop the
    command with exit 0, a failed gate included, and ``audit --out`` wrote nothing)."""

    def __init__(self, stream: object) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)  # type: ignore[attr-defined, no-any-return]
        except BrokenPipeError:
            drop_stdout(self._stream)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()  # type: ignore[attr-defined]
        except BrokenPipeError:
            drop_stdout(self._stream)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    """:func:`run` with Ctrl-C as exit 130, for callers that import the CLI directly."""
    try:
        return run(argv)
    except KeyboardInterrupt:
        from prefixbench.reports.interrupt import interrupted_line

        print(interrupted_line(), file=sys.stderr)
        return 130


def _debugging(args: argparse.Namespace | None) -> bool:
    """``--debug`` was given, or the environment asks for tracebacks."""
    import os

    return bool(getattr(args, "debug", False)) or os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")


def print_traceback(exc: BaseException) -> None:
    """The traceback behind an error line, on stderr. An engine's error that crossed a process
    boundary (``--jobs``, Dask) lost its chained cause: its engine frames are printed after."""
    import traceback

    traceback.print_exception(exc, file=sys.stderr)
    trace = getattr(exc, "trace", "")
    if trace and exc.__cause__ is None:
        print(f"the engine's frames:\n{trace}", file=sys.stderr, end="" if trace.endswith("\n") else "\n")


def _as_flags(line: str, args: argparse.Namespace | None) -> str:
    """An error about a workload option given on the command line names the flag (``--gap-s``),
    not the factory's key (``idle-gaps: gap_s``, ``checkpoint.retain_tokens``) a grid or
    ``--engine-config`` file would use, once any workload option was given as a flag."""
    if args is None or getattr(args, "command", None) not in ("sweep", "bench", "record"):
        return line
    import re

    from prefixbench.workloads.scripted.registry import option_names

    names = option_names()
    if all(getattr(args, name, None) is None for name in names):
        return line  # no workload flag given: the keys are a file's (a grid, --engine-config)
    config = getattr(args, "engine_config", None)
    if config is not None and line.startswith(f"{config}:"):
        return line  # about the --engine-config file's own keys
    for name in names:
        if "_" in name:
            line = re.sub(rf"(?<![\w.-])(?:[\w-]+\.)?{name}(?!\w)", "--" + name.replace("_", "-"), line)
        else:  # a plain word ("turns"): only as the subject of a workload's limit ("idle-gaps: turns must ...")
            line = re.sub(rf"^([\w-]+: ){name}(?= must )", rf"\g<1>--{name}", line)
    return line


def _stdout_failed() -> bool:
    """Whether standard output is what refuses writes: a device that fails even an empty write
    (``> /dev/full``, a terminal gone). Python's error names no file for it. (A full disk under a
    redirected file is not told apart from another file's write on that disk: no name is said.)"""
    import os

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # stdout replaced by an object without a descriptor
        return False
    try:
        os.write(fd, b"")
    except OSError:
        drop_stdout(sys.stdout)  # the exit's own flush would fail again
        return True
    return False


def _fail(line: str) -> int:
    print(f"prefixbench: error: {one_line(line)}", file=sys.stderr)
    return 2


def one_line(text: str) -> str:
    """``text`` with every character that would break or garble the line escaped (``\\n``, ``\\u2028``, a lone surrogate)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def cmd_sweep(args: argparse.Namespace) -> int:
    """``prefixbench sweep``."""
    from prefixbench.reports.options import sweep_run_options
    from prefixbench.reports.output import sweep_specs, write_sweep

    return write_sweep(sweep_specs(args), sweep_run_options(args))


def cmd_check(args: argparse.Namespace) -> int:
    """``prefixbench check`` (``--trace -`` reads the log from standard input)."""
    from prefixbench.reports.options import check_options

    options = check_options(args)
    if not is_dash(options.trace):
        return run_check(options)
    import msgspec

    with readable_file(options.trace, "check --trace") as path:
        return run_check(msgspec.structs.replace(options, trace=path, trace_shown=STDIN_NAME))


#: ``check``'s windows when --windows is not given.
DEFAULT_CHECK_WINDOWS = "32k,128k,512k"


def run_check(options: CheckOptions) -> int:
    """Run the specs ``check`` asks for, print one line each, a note per kind of warning the
    engines logged in the runs the specs made, then the tally, always the last line on stdout
    (``tail -n 1`` reads it); 1 if any failed."""
    if options.out is not None:
        from prefixbench.reports.outdir import check_out_dir

        check_out_dir(options.out, ("check.json", "report.html"), "check")
    from prefixbench.workloads.scripted.base import collecting_runs

    with collecting_runs() as runs:
        results = _check_results(options)
    from prefixbench.reports.check_report import tally, warning_lines

    for result in results:
        print(result.line(options.vacuous_fails))
    notes = warning_lines(runs)
    for note in notes:
        print(f"note: {note}")
    failed, line = tally(results, options.vacuous_fails, None if options.trace is not None else options.preset)
    print(line)
    if options.out is not None:
        from prefixbench.reports.check_report import write_check

        write_check(options.out, None if options.trace is not None else options.preset, results, options.vacuous_fails, notes)
        from prefixbench.reports.textable import visible

        if not options.quiet:
            print(visible(f"wrote {options.out}/: check.json, report.html"), file=sys.stderr)  # as sweep and audit say
    return 1 if failed else 0


def _check_results(options: CheckOptions) -> list[SpecResult]:
    """The results of the specs ``check`` asks for (of a ``--trace`` or ``--engine``, else the built-in specs)."""
    from prefixbench.reports.trace import check_engines_and_trace

    results = check_engines_and_trace(options)
    if results is None:
        from prefixbench.reports.progress import SweepProgress
        from prefixbench.reports.trace import CHECK_PROGRESS_SECONDS, check_progress_mode
        from prefixbench.workloads.specs.registry import run_specs, spec_cases

        windows = parse_windows(options.windows if options.windows is not None else DEFAULT_CHECK_WINDOWS)
        warn_window_memory(windows)
        engines = parse_list(options.engines, "--engines") if options.engines is not None else None
        # A large window runs for seconds or minutes: a line every few seconds names the check
        # running, as check --engine does (none for a check that ends sooner, nor with --quiet).
        total = len(spec_cases(options.preset, windows, engines))
        mode = check_progress_mode(options.quiet)
        with SweepProgress(total, mode=mode, interval=CHECK_PROGRESS_SECONDS, command="check", final=False) as progress:
            def on_case(label: str, done: bool) -> None:
                progress.finished(label) if done else progress.started(label)

            results = run_specs(options.preset, windows, engines, on_case)
    return results


def cmd_replay(args: argparse.Namespace) -> int:
    """``prefixbench replay``."""
    from prefixbench.workloads.logs.formats import REPLAYS

    match REPLAYS[args.input].kind:
        case "capture":
            return _replay_capture(args)
        case "bodies":
            return _replay_bodies(args)
        case other:
            assert_never(other)


def _replay_bodies(args: argparse.Namespace) -> int:
    """``replay`` of a request-body log: each body through the cache model, in order."""
    from prefixbench.reports.replay import replay_json, replay_table
    from prefixbench.workloads.logs.chat_completions import read_chat_completions
    from prefixbench.workloads.logs.replay import replay_labelled

    if args.chars_per_token is not None:
        raise UserError("--chars-per-token applies to --input anthropic-capture only")
    from prefixbench.simulator.validate import make_validator

    validator = None if args.profile == "lenient" else make_validator(args.profile)  # (an unknown one is refused here)
    price = None
    if args.price is not None:
        from prefixbench.reports.options import cross_priced_note, price_row

        price = price_row(args.price, args.price_as_of, args.period)
        crossed = cross_priced_note(args.cache, price)
        if crossed is not None and not args.quiet:
            print(f"prefixbench: {crossed}", file=sys.stderr)
    else:
        check_price_options(args.period, args.price_as_of)
    cache = None  # the byte-exact reference, which needs no cache-model machinery
    if (args.cache, args.tokenizer) != ("byte-exact", "heuristic"):
        from prefixbench.workloads.runs.sweep import make_cache_model

        cache = make_cache_model(args.cache, args.tokenizer)
    # Streamed: each line is parsed, replayed, labelled and dropped; observations and labels stay.
    torn: list[int] = []
    unpaired: list[int] = []  # (lenient only: replayed as the endpoint accepted them)
    with readable_file(args.file, "replay") as path:
        progress = _read_progress(path, "replay", args.quiet)
        try:
            observations, labels = replay_labelled(read_chat_completions(path, torn, progress), cache, validator, unpaired)
        except UserError as exc:
            from prefixbench.reports.trace import with_the_format_found

            raise UserError(with_the_format_found(exc, path, "replay")) from None
        finally:
            progress.close()
        progress.phase(f"read {progress.total / 1e6:,.1f} MB and replayed {len(observations):,} requests "
                       f"in {time.monotonic() - progress.start:.1f} s; writing the {'JSON' if args.format == 'json' else 'table'}")
    from prefixbench.reports.trace import warn_torn

    warn_torn(STDIN_NAME if is_dash(args.file) else args.file, torn)
    if unpaired:
        more = f" (and {len(unpaired) - 1:,} more request(s))" if len(unpaired) > 1 else ""
        print(f"prefixbench: request #{unpaired[0]}: tool calls and results do not pair up{more}; replayed as the "
              "endpoint accepted it, but check --trace refuses it under every profile", file=sys.stderr)
    if args.format == "json":
        print(replay_json(observations, price, labels))
    else:
        print(replay_table(observations, price, labels, profile=args.profile))
    return 0


def _replay_capture(args: argparse.Namespace) -> int:
    """``replay --input anthropic-capture``: predicted vs reported cache usage, side by side."""
    from prefixbench.reports.capture import capture_json, capture_table
    from prefixbench.simulator.providers import ANTHROPIC
    from prefixbench.workloads.logs.anthropic_capture import read_capture
    from prefixbench.workloads.logs.capture_replay import replay_calls

    if args.tokenizer != "heuristic":
        raise UserError("--input anthropic-capture counts Claude tokens with a calibrated ratio; --tokenizer does not apply")
    if args.profile != "lenient":
        from prefixbench.simulator.validate import PROFILES

        if args.profile not in PROFILES:
            raise UserError(f"unknown profile {args.profile!r} (known: {', '.join(PROFILES)})")
        raise UserError(f"--profile {args.profile}: a DeepSeek chat-completions profile, for chat-completions logs; an anthropic "
                        "capture holds the replies the Anthropic API gave, so it does not apply")
    if args.cache not in ("byte-exact", ANTHROPIC.body_model):
        raise UserError(f"--input anthropic-capture replays through the anthropic cache model, not {args.cache!r}")
    if args.price is not None:
        raise UserError("--price is not supported with --input anthropic-capture yet")
    if args.chars_per_token is not None and not 0.01 <= args.chars_per_token <= 1000:
        raise UserError(f"--chars-per-token must be a number from 0.01 to 1000, got {args.chars_per_token}")
    from prefixbench.reports.trace import warn_torn, with_the_format_found

    torn: list[int] = []
    with readable_file(args.file, "replay") as path:
        progress = _read_progress(path, "replay", args.quiet)
        try:
            capture = read_capture(path, torn, progress)
        except UserError as exc:  # another log given with --input anthropic-capture: say which
            raise UserError(with_the_format_found(exc, path, "replay", reading="anthropic-capture")) from None
        finally:
            progress.close()
        progress.phase(f"read {progress.total / 1e6:,.1f} MB in {time.monotonic() - progress.start:.1f} s; "
                       f"replaying {len(capture.calls):,} calls")
        rows = replay_calls(capture, chars_per_token=args.chars_per_token)

    warn_torn(STDIN_NAME if is_dash(args.file) else args.file, torn)
    print(capture_json(rows) if args.format == "json" else capture_table(rows))
    return 0


def _read_progress(path: Path, command: str, quiet: bool) -> ReadProgress:
    """The progress of ``command``'s reading of the log at ``path`` (bytes read, as audit shows
    its own): off with --quiet."""
    from prefixbench.reports.progress import ReadProgress

    try:
        size = path.stat().st_size
    except OSError:  # unreadable: the reading says so, in its own words
        size = 0
    return ReadProgress(size, enabled=not quiet, command=command)


def cmd_compare(args: argparse.Namespace) -> int:
    """``prefixbench compare``."""
    from prefixbench.reports.compare import compare_json, compare_markdown, compare_text
    from prefixbench.workloads.runs.compare import DEFAULT_THRESHOLDS, Thresholds, compare, load_baseline, save_baseline

    thresholds = Thresholds.parse(args.max_regression, over=DEFAULT_THRESHOLDS)
    if args.markdown is not None:  # before the comparison: its verdict is not lost to a bad path
        from prefixbench.reports.outdir import check_out_file

        check_out_file(args.markdown, "--markdown")  # (missing folders are made when it is written, as --junit's)
    if args.save is not None:
        from prefixbench.workloads.runs.compare import baseline_path

        baseline_path(args.save)  # a bad name, or a folder it cannot go in, before the files are read
        _refuse_unwritable_baselines(args.save)
    files = list(args.files)
    if len(files) > 2:
        raise UserError(f"compare takes BASE NEW (or NEW with --compare NAME), got {len(files)} files")
    if args.compare is not None and len(files) != 1:
        raise UserError("--compare NAME takes one file, NEW (the baseline is BASE)")
    if args.compare is None and args.save is None and len(files) != 2:
        raise UserError("compare needs BASE NEW, or NEW with --compare NAME or --save NAME")
    if any(is_dash(path) for path in files):  # a terminal or a device on standard input: refused before any file is read
        refuse_terminal("compare")
    # Read in the order given: with both files wrong, the line names BASE, the first one.
    base = _read_result(files[0]) if args.compare is None and len(files) == 2 else None
    new = _read_result(files[-1])
    if args.compare is not None:
        base = load_baseline(args.compare)
    status = 0
    if base is not None:
        comparison = compare(base, new, thresholds, per_request=args.per_request == "auto")
        markdown = compare_markdown(comparison)
        if args.markdown is not None:
            try:
                args.markdown.parent.mkdir(parents=True, exist_ok=True)
                args.markdown.write_text(markdown, encoding="utf-8")
            except OSError as exc:
                raise UserError(f"--markdown {args.markdown}: cannot write ({exc.strerror or exc})") from None
            from prefixbench.reports.textable import visible

            print(visible(f"wrote {args.markdown}: the Markdown summary"), file=sys.stderr)  # as audit --out says
        match args.format:
            case "json":
                print(compare_json(comparison))
            case "md":
                print(markdown)
            case _:
                print(compare_text(comparison))
        status = 1 if comparison.failed else 0
    if args.save is not None:
        path = save_baseline(new, args.save)
        print(f"saved {new.kind} baseline {args.save!r} ({len(new.units)} units) to {path}", file=sys.stderr)
    return status


def _refuse_unwritable_baselines(name: str) -> None:
    """``--save NAME``: the baseline folder (or, before it exists, the working folder) must take a file."""
    import os

    from prefixbench.workloads.runs.compare import BASELINE_DIR

    folder = BASELINE_DIR if BASELINE_DIR.exists() else Path(".")
    if BASELINE_DIR.exists() and not BASELINE_DIR.is_dir():
        raise UserError(f"--save {name}: cannot write {BASELINE_DIR}/{name}.json ({BASELINE_DIR} is not a folder)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"--save {name}: cannot write {BASELINE_DIR}/{name}.json (folder {folder.resolve()} is not writable)")


def _read_result(path: Path):  # type: ignore[no-untyped-def]
    """A result ``compare`` reads: a file or folder, or ``-``, standard input."""
    from prefixbench.workloads.runs.compare import read_result, result_from_text

    if is_dash(path):
        return result_from_text(read_stdin_text("compare"), STDIN_NAME)
    return read_result(path)
