"""A real Gemini CLI session whose lane switches between gemini-3-flash-preview and
gemini-3.1-pro-preview on its own (the auto model's router; no /model set or fallback line in
it), from github.com/bhanu7410/personal_finance's ``gemini_session.json``, read from
``PREFIXBENCH_PERSONAL_FINANCE_REPO`` (default the workplace's mirror).

Before, its five switches were put down as unavoidable ($0.51 of $1.63 lost) and nothing
suggested pinning the model; they are unknown now, and pin-model is what to change first."""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path

from prefixbench.workloads.audit.advice import advise
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.losses import cents
from tests.realdata.mirrors import file_at

REPO = Path(os.environ.get("PREFIXBENCH_PERSONAL_FINANCE_REPO", "/work/.mirror/bhanu7410+personal_finance/repo"))
COMMIT = "90ee8d2b7aa930c5f9f7984554ed6d60ebc3bc9e"


def test_the_routers_switches_are_unknown_and_pin_model_comes_first(tmp_path: Path) -> None:
    data = file_at(REPO, COMMIT, "gemini_session.json", "https://github.com/bhanu7410/personal_finance",
                   "PREFIXBENCH_PERSONAL_FINANCE_REPO")
    path = tmp_path / "gemini_session.json"
    path.write_bytes(data)
    trace = load_trace([path])
    result = advise(run_audit([path], trace=trace), trace)
    switched = [row for row in result.rows if row.cause in ("model-changed", "model-chosen")]
    assert [(row.cause, row.loss_class) for row in switched] == [("model-changed", "unknown")] * 5
    split = result.loss_split
    assert split is not None and tuple(cents(value) for value in (split.lost_usd, split.unavoidable_usd, split.unknown_usd)) == (
        Decimal("1.63"), Decimal("0.70"), Decimal("0.93"))
    first = result.recommendations[0]
    assert (first.fix, first.agent, first.saved_usd.quantize(Decimal("0.0001"))) == ("pin-model", "Gemini CLI", Decimal("0.4861"))
    assert "32 from gemini-3.1-pro-preview to gemini-3-flash-preview" in first.detail
    assert "$1.8131 less at its prices (not in the figure)" in first.detail
