"""The reading stage of an audit, in parts, against a bare ``json.loads`` pass (pytest-benchmark;
run with `python -m pytest tests/bench/test_reading_bench.py --bench`).

On a real-shaped folder of Claude Code transcripts (copies of ../shared/realdata's, as
``tests/bench/test_audit_speed_bench.py`` makes them with ``PREFIXBENCH_AUDIT_CORPUS=real``;
PREFIXBENCH_READING_MB megabytes, default 40), in one process, each part the best of
PREFIXBENCH_READING_ROUNDS passes (default 3) of CPU time:

- ``json_loads``: the bare pass, every line of every file read and given to ``json.loads``;
- ``msgspec``: the same lines given to msgspec's generic decode (what the reader runs);
- ``msgspec_typed``: a decode of only what the Claude Code reader asks of a line, its message's
  content and ``toolUseResult`` left as raw JSON: the most that skipping what a request does not
  need before decoding it could save on the decode;
- ``records``: the files read as the audit reads them (``iter_records``: the decode, the
  nesting check, each line's place in its file);
- ``classify``: each file's first ``CHECK_LINES`` records classified by every format's detector,
  as every file read is checked;
- ``walk``: the Claude Code reader on the records already read (the chains, the requests);
- ``load_trace``: the whole reading of the folder, as ``audit`` runs it.

Nothing here asserts a time: the figures and their ratios to the bare pass go into
``benchmark.extra_info`` and are printed.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from tests.bench.test_audit_bench import write_real_shaped_transcripts
from tests.bench.test_audit_speed_bench import REALDATA

pytestmark = pytest.mark.bench

MEGABYTES = int(os.environ.get("PREFIXBENCH_READING_MB", "40"))
ROUNDS = int(os.environ.get("PREFIXBENCH_READING_ROUNDS", "3"))


class _Message(msgspec.Struct):
    """What the Claude Code reader reads of a line's message (its content kept as raw JSON)."""

    content: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    model: object = msgspec.UNSET
    usage: object = msgspec.UNSET
    id: object = msgspec.UNSET
    stop_reason: object = msgspec.UNSET
    role: object = msgspec.UNSET


class _Entry(msgspec.Struct):
    """What the Claude Code reader reads of a transcript line (every other field skipped)."""

    type: object = msgspec.UNSET
    uuid: object = msgspec.UNSET
    parentUuid: object = msgspec.UNSET
    timestamp: object = msgspec.UNSET
    message: _Message | msgspec.UnsetType = msgspec.UNSET
    isSidechain: object = msgspec.UNSET
    subtype: object = msgspec.UNSET
    sessionId: object = msgspec.UNSET
    requestId: object = msgspec.UNSET
    version: object = msgspec.UNSET
    entrypoint: object = msgspec.UNSET
    toolUseResult: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = REALDATA / "claude-code-viewer"
    if not source.is_dir():
        pytest.skip(f"real transcripts not found at {source} (they live beside the project)")
    path = tmp_path_factory.mktemp("reading") / "projects"
    write_real_shaped_transcripts(path, source, MEGABYTES)
    return path


def _best(run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return round(best, 3)


def test_reading_in_parts(benchmark, folder: Path) -> None:
    from prefixbench.workloads.audit.core import load_trace
    from prefixbench.workloads.logs.formats import CHECK_LINES, claude_code, classify_record
    from prefixbench.workloads.logs.formats.base import ImportContext
    from prefixbench.workloads.logs.records import READ_BUFFER, iter_records

    paths = sorted(folder.glob("*.jsonl"))
    size = sum(path.stat().st_size for path in paths)

    def each_line(decode: Callable[[bytes], object]) -> Callable[[], None]:
        def run() -> None:
            for path in paths:
                with path.open("rb") as handle:
                    for line in handle:
                        decode(line)
        return run

    read = {path: list(iter_records(path, buffering=READ_BUFFER)) for path in paths}
    lines = sum(map(len, read.values()))

    def classify() -> None:
        for records in read.values():
            for record in records:
                if record.line <= CHECK_LINES:
                    classify_record(record.value)

    def walk() -> None:
        ctx = ImportContext()
        for path, records in read.items():
            claude_code.read(path, records, ctx)

    def records() -> None:
        for path in paths:
            for _ in iter_records(path, buffering=READ_BUFFER):
                pass

    figures: dict[str, float] = {}

    def run() -> None:
        figures["json_loads"] = _best(each_line(json.loads))
        figures["msgspec"] = _best(each_line(msgspec.json.Decoder().decode))
        figures["msgspec_typed"] = _best(each_line(msgspec.json.Decoder(_Entry).decode))
        figures["records"] = _best(records)
        figures["classify"] = _best(classify)
        figures["walk"] = _best(walk)
        figures["load_trace"] = _best(lambda: load_trace([folder]))

    benchmark.pedantic(run, rounds=1, iterations=1)
    bare = figures["json_loads"]
    ratios = {f"{name}_over_json_loads": round(seconds / bare, 2) for name, seconds in figures.items() if name != "json_loads"}
    benchmark.extra_info.update({"mb": round(size / 1e6, 1), "files": len(paths), "lines": lines, "rounds": ROUNDS,
                                 "cpu_s": figures, **ratios, "load_avg": round(os.getloadavg()[0], 2)})
    print(f"\n{size / 1e6:.0f} MB, {lines:,} lines in {len(paths)} files, best of {ROUNDS}, CPU s: "
          + ", ".join(f"{name} {seconds}" for name, seconds in figures.items())
          + "; over the bare pass: " + ", ".join(f"{name.removesuffix('_over_json_loads')} {r}x" for name, r in ratios.items()))
