"""The steps after reading that issue 19's speed pass made faster, each timed in process on the
real-shaped transcripts (copies of ../shared/realdata's Claude Code ones,
:func:`~tests.bench.test_audit_bench.write_real_shaped_transcripts`; PREFIXBENCH_AUDIT_STEPS_COPIES
copies, default 20, about 20 MB) (pytest-benchmark; run with
`python -m pytest tests/bench/test_audit_steps_bench.py --bench`):

* pricing every request (``cost_total`` of each request's usage at its price row);
* the send clock (``clock_by_position``);
* laying out ``--format json``'s requests (``_formatted_rows``, 64 rows a chunk);
* reading back the rows with a cause (``RowSpill.misses``) beside every row (``RowSpill.batches``).

The whole audit against a bare ``json.loads`` pass is tests/bench/test_audit_speed_bench.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.bench.test_audit_bench import write_real_shaped_transcripts

pytestmark = pytest.mark.bench

COPIES = int(os.environ.get("PREFIXBENCH_AUDIT_STEPS_COPIES", "20"))
REALDATA = Path(os.environ.get("PREFIXBENCH_REALDATA") or Path(__file__).resolve().parents[3] / "shared" / "realdata")


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory):
    """The folder's trace and its audit (rows in memory)."""
    from prefixbench.workloads.audit.core import load_trace, run_audit

    source = REALDATA / "claude-code-viewer"
    if not source.is_dir():
        pytest.skip(f"real transcripts not found at {source} (they live beside the project)")
    folder = tmp_path_factory.mktemp("audit-steps") / "projects"
    write_real_shaped_transcripts(folder, source, 0, copies=COPIES)
    requests, summaries = load_trace([folder])
    return requests, summaries, run_audit([folder])


def test_pricing_every_request(benchmark, audited) -> None:
    from prefixbench.simulator.price_lookup import Prices
    from prefixbench.simulator.pricing import cost_total

    requests, _, _ = audited
    prices = Prices(None)
    priced = [(r.usage, row) for r in requests if r.usage is not None
              and (row := prices.row(r.model, r.sent_ms, r.speed, r.upstream)) is not None]
    benchmark(lambda: [cost_total(usage, row) for usage, row in priced])
    benchmark.extra_info["requests"] = len(priced)


def test_the_send_clock(benchmark, audited) -> None:
    from prefixbench.workloads.audit.core import clock_by_position

    requests, summaries, _ = audited
    benchmark(clock_by_position, requests, summaries)
    benchmark.extra_info["requests"] = len(requests)


def test_laying_out_the_requests_of_the_json(benchmark, audited) -> None:
    from prefixbench.reports.audit import ROWS_A_CHUNK, _formatted_rows

    rows = audited[2].rows
    benchmark(lambda: [_formatted_rows(rows[k:k + ROWS_A_CHUNK]) for k in range(0, len(rows), ROWS_A_CHUNK)])
    benchmark.extra_info["requests"] = len(rows)


@pytest.mark.parametrize("which", ["misses", "batches"])
def test_reading_back_the_rows(benchmark, audited, which: str) -> None:
    from prefixbench.workloads.audit.spill import RowSpill

    rows = audited[2].rows
    with RowSpill(rows) as spill:
        found = benchmark(lambda: sum(len(batch) for batch in getattr(spill, which)()))
    benchmark.extra_info.update({"requests": len(rows), "read_back": found})
