"""``check --engine`` / ``check --trace`` and ``record``: the command-line side of gating any engine."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefixbench.reports.options import check_engine_refs, parse_list, parse_window, parse_windows, warn_window_memory
from prefixbench.reports.stdio import path_argument
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.windows import MIN_TRACE_WINDOW

if TYPE_CHECKING:  # annotations only: the CLI builds the record parser without loading the specs
    from prefixbench.reports.subcommands import Subcommands
    from prefixbench.workloads.runs.options import CheckOptions, RecordOptions
    from prefixbench.workloads.specs.base import SpecResult


def add_trace_options(parser: argparse.ArgumentParser) -> None:
    """``--trace FILE`` and ``--input FORMAT`` on ``check``."""
    from prefixbench.workloads.specs.trace import TRACE_FORMATS

    parser.add_argument(
        "--trace", type=path_argument, default=None, metavar="FILE",
        help="judge a recorded request log instead of running engines: the specs that apply to recorded "
        "traffic (no silent rewrite, summary calls warm and in the routed family, a strict --profile "
        "accepts every request, tool pairs intact, rewrites pay back, and the window with --windows); "
        "- reads it from standard input; see 'prefixbench record'",
    )
    parser.add_argument(
        "--input", default="chat-completions", choices=TRACE_FORMATS,
        help="format of the --trace file: chat-completions request bodies, one per line, as replay reads "
        "(default: chat-completions)",
    )


def with_the_format_found(exc: UserError, path: Path, command: str, reading: str | None = None) -> str:
    """A request log that does not parse may be another agent's log: the error (``file:line:
    what``) with the format the file is in and what reads it (``replay`` and ``check --trace``
    read request bodies, ``replay --input anthropic-capture`` captures, named by ``reading``;
    ``prefixbench audit`` reads every format)."""
    from prefixbench.workloads.logs.formats import detect_format, file_format

    try:
        found = detect_format(path)
        database = file_format(path) is not None
    except (UserError, OSError):
        return _prefixbench_result(path, command) or str(exc)
    if database:  # its bytes were read as text: "not UTF-8 text ... a binary or truncated file?" misleads
        return f"{path}: a database in the {found.name} format ({found.nouns}), not a request log: {command} does not read it, prefixbench audit does"
    if found.replay is not None and found.replay.name == reading:
        return str(exc)  # read as the format it is in: the error is the file's own
    if found.replay is not None and found.replay.kind == "bodies":
        if reading is None:
            return str(exc)
        return f"{exc} (the file is in the {found.name} format: replay reads it without --input {reading})"
    if found.replay is None or command != "replay":
        return f"{exc} (the file is in the {found.name} format: {command} does not read it, prefixbench audit does)"
    return f"{exc} (the file is in the {found.name} format: replay reads it with --input {found.replay.name}, and prefixbench audit too)"


#: The largest file read whole to tell whether it is a result of prefixbench's own (an error path only).
_RESULT_SNIFF_BYTES = 64 * 1024 * 1024


def _prefixbench_result(path: Path, command: str) -> str | None:
    """The error for a result of prefixbench's own given where a request log goes (``replay
    base.json`` said "invalid JSON (Expecting value at column 2)" of a valid sweep result): what
    it is and what reads it; None when it is not one."""
    from prefixbench.workloads.runs.compare import read_result

    try:
        if not path.is_file() or path.stat().st_size > _RESULT_SNIFF_BYTES:
            return None
        kind = read_result(path).kind
    except (UserError, OSError):
        return None
    return f"{path}: a prefixbench {kind} result, not a request log: {command} does not read it, prefixbench compare does"


def warn_torn(file: Path, torn: list[int]) -> None:
    """The warning of a log's torn last line, not read (a log still being written), in the
    words audit uses; on stderr, so the output stays the requests read."""
    if torn:
        from prefixbench.reports.textable import visible
        from prefixbench.workloads.logs.jsonlines import tail_reason, torn_note

        print(visible(f"prefixbench: warning: {torn_note(file, torn[0], tail_reason(torn[0]))}"), file=sys.stderr)


def check_engines_and_trace(options: CheckOptions) -> list[SpecResult] | None:
    """The results of ``check --trace`` or of ``check`` with user engines; None for the built-in check."""
    profiles = parse_list(options.profile, "--profile")
    if options.trace is not None:
        if options.engine or options.engines or options.engine_config:
            raise UserError("--trace judges a recorded log: --engine, --engines and --engine-config do not apply")
        from prefixbench.workloads.specs.trace import run_trace_specs

        windows = parse_windows(options.windows, minimum=MIN_TRACE_WINDOW) if options.windows is not None else (None,)
        torn: list[int] = []
        from prefixbench.reports.progress import ReadProgress

        # A log of a gigabyte takes seconds to read and judge: bytes read, then each replay of
        # it, on stderr, as audit shows its reading (none for a quick check, nor with --quiet).
        try:
            size = options.trace.stat().st_size
        except OSError:  # unreadable: the reading says so, in its own words
            size = 0
        progress = ReadProgress(size, enabled=not options.quiet, command="check")
        try:
            results = run_trace_specs(options.trace, options.input, profiles, windows, torn, progress, progress.phase)
        except UserError as exc:
            raise UserError(with_the_format_found(exc, options.trace, "check --trace")) from None
        finally:
            progress.close()
        warn_torn(Path(options.trace_shown) if options.trace_shown else options.trace, torn)
        return results
    from prefixbench.workloads.scripted.registry import is_builtin_engine, user_engines

    from prefixbench.workloads.specs.registry import known_engines

    named = parse_list(options.engines, "--engines") if options.engines is not None else ()
    installed = set(user_engines())
    unknown = [e for e in named if e not in installed and e not in known_engines()]
    if unknown:  # --engines takes an installed engine too: the line lists them, as --help does
        listing = ", ".join(known_engines()) + (f"; installed: {', '.join(sorted(installed))}" if installed else "")
        from prefixbench.workloads.specs.registry import unknown_names

        raise UserError(f"--engines: no specs for {unknown_names(unknown, (*known_engines(), *installed))} (known: {listing})")
    check_engine_refs(options.engine)
    user = [*(e for e in named if e in installed and not is_builtin_engine(e)), *options.engine]
    if not user:
        if options.profile != "lenient":
            raise UserError("--profile applies to user engines (--engine) and --trace only")
        if options.engine_config is not None:
            raise UserError("check --engine-config sets user engines (--engine) only")
        return None
    from prefixbench.workloads.specs.engine import run_engine_specs
    from prefixbench.workloads.specs.registry import run_specs

    windows = parse_windows(options.windows if options.windows is not None else "32k,128k,512k")
    warn_window_memory(windows)
    builtin = [e for e in named if e not in user]
    configs: dict[str, Any] = {}
    if options.engine_config is not None:
        from prefixbench.workloads.scripted.registry import read_engine_config, renamed_table

        configs = dict(read_engine_config(options.engine_config, user))
        unused = [name for name in configs if name not in user]
        if unused and is_builtin_engine(unused[0]):
            raise UserError(f"{options.engine_config}: check --engine-config sets user engines only, not {unused[0]!r}")
        if unused:  # a user's engine, but not as --engine named it: the table would be ignored
            renamed_table(unused[0], user, str(options.engine_config))
            raise UserError(
                f"{options.engine_config}: [{unused[0]}] is set but check runs only {', '.join(user)}; "
                f"add --engine {unused[0]} or remove the table"
            )
    from prefixbench.reports.progress import SweepProgress
    from prefixbench.workloads.specs.engine import engine_cases, validate_engine

    built_by: dict[str, str] = {}  # each spec line names the engine by its name: two engines need two
    for ref in user:
        name = validate_engine(ref, engine_cases(windows, profiles)[0], options.preset, configs.get(ref))
        if built_by.setdefault(name, ref) != ref:
            raise UserError(f"engines {built_by[name]} and {ref} both build an engine named {name!r}, so their spec lines "
                            "would read alike: check one of them, or give the engines different names")
    results = run_specs(options.preset, windows, builtin) if builtin else []

    # A slow engine runs for minutes: a line every few seconds says which case it is on (none
    # for a check that ends sooner), on stderr, so the spec lines stay the output.
    total = len(engine_cases(windows, profiles)) * len(user)
    with SweepProgress(total, mode=check_progress_mode(options.quiet), interval=CHECK_PROGRESS_SECONDS, command="check", final=False) as progress:
        def on_case(label: str, done: bool) -> None:
            progress.finished(label) if done else progress.started(label)

        for ref in user:
            results.extend(run_engine_specs(ref, windows, profiles, options.preset, configs.get(ref), on_case))
    return results


#: How often ``check`` and ``record`` say which case they are on, once a case runs that long.
CHECK_PROGRESS_SECONDS = 5.0


def check_progress_mode(quiet: bool) -> str:
    """``check``'s and ``record``'s progress: lines (on a terminal too: one run at a time has
    no bar to fill), none with ``--quiet``."""
    return "off" if quiet else "lines"


def add_record_parser(sub: Subcommands, add_engine_option, add_workload_options) -> None:  # type: ignore[no-untyped-def]
    """``prefixbench record FILE``: run one workload and write its requests as a chat-completions log."""
    record = sub.add_parser(
        "record",
        description="Run one workload at one window and preset and write every request the provider received, "
        "in order, as chat-completions bodies (one per line, with purpose and the declared rewrites): the "
        "format replay and check --trace read.",
    )
    if not record:  # another subcommand is run: the presets and the workloads its help lists stay unloaded
        return
    from prefixbench.simulator.validate import PROFILES

    record.add_argument("file", metavar="FILE", type=path_argument, help="where to write the log (JSONL); - writes it to standard output")
    record.add_argument("--force", action="store_true", help="replace FILE if it exists (default: an existing FILE is refused, before the run)")
    from prefixbench.kernel.presets import PRESETS
    from prefixbench.workloads.scripted.registry import WORKLOADS

    record.add_argument("--workload", default="seed-coding", help=f"workload: {', '.join(WORKLOADS)} (default: seed-coding)")
    record.add_argument("--window", default="32k", help="context window, k = 1,000 and m = 1,000,000 tokens (default: 32k)")
    record.add_argument("--preset", default="patched", help=f"preset: {', '.join(PRESETS)} (default: patched)")
    record.add_argument("--profile", default="lenient", help=f"provider profile the run goes through: {'|'.join(PROFILES)} (default: lenient)")
    add_engine_option(record, repeatable=False)
    add_workload_options(record)
    record.add_argument("--quiet", action="store_true", help="no progress, notes or 'wrote' line on stderr (warnings and errors are still said)")


def cmd_record(options: RecordOptions) -> int:
    """``prefixbench record``."""
    from prefixbench.reports.stdio import is_dash, refuse_closed_stdout, write_stdout_bytes
    from prefixbench.workloads.scripted.record import recorded_bytes, record_run, refuse_unwritable, write_recorded

    engines = options.engine
    if len(engines) > 1:
        raise UserError(f"--engine: record runs one engine, got {len(engines)} ({', '.join(engines)})")
    window = parse_window(options.window, "--window")
    # Before the run: nothing already written is replaced, and a log that cannot be written is
    # said before the run's time is spent.
    to_stdout = is_dash(options.file)  # record - : the log on standard output (--force has nothing to replace)
    if not to_stdout:
        refuse_unwritable(options.file, replace=options.force)
    else:
        refuse_closed_stdout("record -")
    from prefixbench.reports.progress import SweepProgress
    from prefixbench.workloads.scripted.registry import WORKLOADS

    entry = WORKLOADS.get(options.workload)
    engine = engines[0] if engines else (entry.default_engine if entry is not None else "")
    # A long run (thousands of steps, a large window) takes minutes: a line every few seconds
    # says it is still running, as check --engine does (none for a record that ends sooner).
    with SweepProgress(1, mode=check_progress_mode(options.quiet), interval=CHECK_PROGRESS_SECONDS, command="record", final=False) as progress:
        progress.started(f"{engine}/{options.preset} {options.workload} at {window:,} tokens")
        run, requests = record_run(
            options.workload, window, options.preset, engines[0] if engines else None, options.profile, options.workload_options
        )
        if to_stdout:
            data = recorded_bytes(run, requests)
            whole = write_stdout_bytes(data)
            count, where = len(requests), "standard output"
        else:
            count, where = write_recorded(options.file, run, requests, replace=options.force), str(options.file)
        progress.finished(f"{engine}/{options.preset} {options.workload} at {window:,} tokens")
    what = f"{count:,} requests ({run.engine}/{run.preset}, {run.workload} at {window:,} tokens)"
    refused = sum(observation.is_rejected for observation in run.observations)
    if refused:  # in the log as sent: replay without the same --profile would count them as accepted
        what += (f"; {options.profile} refused {refused:,} of them (HTTP 400, never cached): "
                 f"check --trace --profile {options.profile} and replay --profile {options.profile} name them")
    if to_stdout and not whole:  # (| head: the reader chose to stop; not an error)
        print(f"standard output closed before the end (its reader left): part of {what} written", file=sys.stderr)
        return 0
    if not options.quiet:
        print(f"wrote {where}: {what}", file=sys.stderr)
    return 0
