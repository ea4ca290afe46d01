"""``--format json`` lays out a chunk of requests from the rows themselves (their dollars as
floats), not from a dict a request (:func:`~prefixbench.reports.audit._formatted_rows`): the
text must be exactly what the records (:func:`~prefixbench.reports.audit.request_record`) give,
laid out as :func:`~prefixbench.reports.audit._formatted_list` lays them out."""

from __future__ import annotations

import os
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.reports import audit as audit_report
from prefixbench.reports.audit import _formatted_list, _formatted_rows, request_record
from prefixbench.workloads.audit.core import AuditRow

_TEXT = st.text(max_size=12)
_INT = st.integers(-(2**40), 2**40)
_DOLLARS = st.one_of(
    st.none(),
    st.decimals(allow_nan=False, allow_infinity=False, min_value=Decimal("-1e6"), max_value=Decimal("1e6")),
    st.sampled_from([Decimal(0), Decimal("0.00"), Decimal("0E-8"), Decimal("0.0000104"), Decimal("1E+1"), Decimal("3.750000")]),
)
_ROW = st.builds(
    AuditRow,
    file=_TEXT, lane=_TEXT, lane_kind=_TEXT, index=_INT, line=_INT, timestamp=st.none() | _TEXT, provider=_TEXT,
    model=_TEXT, reported_cache_read=st.none() | _INT, reported_cache_write=st.none() | _INT,
    reported_cache_write_1h=st.none() | _INT, reported_uncached=st.none() | _INT, reported_output=st.none() | _INT,
    predicted_cache_read=_INT, predicted_cache_write=_INT, predicted_uncached=_INT, expected_cache_read=_INT,
    lost_tokens=_INT, cause=st.none() | _TEXT, evidence=st.none() | _TEXT, detail=_TEXT, cost_usd=_DOLLARS,
    lost_usd=_DOLLARS, predicted_by=_TEXT, identity=st.none() | st.booleans(), gap_ms=st.none() | _INT,
    inferred_cause=st.none() | _TEXT, server_reason=st.none() | _TEXT, loss_class=st.none() | _TEXT, location=_TEXT,
    path=_TEXT,
)


def test_the_rows_are_laid_out_as_they_are() -> None:
    """The fast way is taken (the schema's request record is the row's fields, dollars aside)."""
    assert audit_report._ROWS_AS_RECORDS


@settings(max_examples=int(os.environ.get("PREFIXBENCH_FUZZ_EXAMPLES") or 200), deadline=None)
@given(rows=st.lists(_ROW, max_size=5))
def test_a_chunk_of_rows_is_its_records_laid_out(rows: list[AuditRow]) -> None:
    assert _formatted_rows(rows) == _formatted_list([request_record(row) for row in rows], 1)


def test_a_lone_surrogate_is_written_as_the_records_write_it() -> None:
    row = AuditRow("a\ud800.jsonl", "main", "main", 0, 1, None, "anthropic", "m", None, None, None, None, None, 0, 0, 0, 0,
                   0, None, None, "", Decimal("0.0036150"), Decimal(0), "chain", None, None, None, None, None, "", "")
    assert _formatted_rows([row, row]) == _formatted_list([request_record(row)] * 2, 1)
