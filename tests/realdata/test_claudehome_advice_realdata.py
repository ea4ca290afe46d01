"""What to change on github.com/Eduardodmb/ClaudeHome (``446d50d``, Claude Code 2.1.119 to 2.1.136:
see :mod:`tests.realdata.test_proxy_and_2_1_1xx_homes_oos_realdata`), read where it lives (a local
git copy; skips without it). Nine of its misses carry the provider's
``previous_message_not_found`` after 66 to 540 minutes idle past the 1 h TTL their lanes wrote
(the audit's own cause: ttl-expired). The loss split counted them ``unknown`` ($7.11 of $10.69)
while keep-alive, ranked first, "saves $6.5710", $5.5864 of it on them: they are now counted as
keep-alive's re-simulation finds them, as the home's ttl-expired misses are. Its keep-alive says
that no setting is documented for Claude Code."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from prefixbench.workloads.audit.advice import advise
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.losses import cents
from tests.realdata.test_proxy_and_2_1_1xx_homes_oos_realdata import HOME, HOME_COMMIT, HOME_ENV, HOME_LEFT_OUT, HOME_URL, _home


def test_a_claude_code_home_s_expired_entries_the_provider_did_not_find_are_keep_alive_s(tmp_path: Path) -> None:
    paths = _home(HOME, HOME_COMMIT, HOME_URL, HOME_ENV, ("projects/", "projects.bak-20260511-072525/"), tmp_path, HOME_LEFT_OUT)
    assert len(paths) == 35
    trace = load_trace([tmp_path])
    result = advise(run_audit([tmp_path], trace=trace), trace)
    found = [row for row in result.rows if row.cause == "previous-message-not-found"]
    assert len(found) == 9 and {row.inferred_cause for row in found} == {"ttl-expired"}
    assert all(row.gap_ms is not None and row.gap_ms > 3_600_000 for row in found)
    assert {row.loss_class for row in found} == {"recoverable"}
    split = result.loss_split
    # Three lane starts that read 0 of the 14,223-token head other sessions read, after a logged
    # deferred_tools_delta, were tools-changed, recoverable ($0.2432): nothing changed inside their
    # lanes (the head is inferred from other lanes' reads), so they are unexplained, unknown.
    assert tuple(cents(value) for value in (split.lost_usd, split.recoverable_usd, split.unavoidable_usd, split.unknown_usd)) == (
        Decimal("10.69"), Decimal("7.62"), Decimal("0.71"), Decimal("2.36"))
    # And 5 misses ($0.4113) whose fixes cannot re-simulate this log (static-system x4, no bodies and
    # no read past the head the model read; breakpoints=auto x1, no bodies) were recoverable: the
    # split said a re-simulated fix would have read them. They are unknown (8.03 / 1.95 before).
    assert split.recoverable_requests == 13
    starts = [row for row in result.rows if row.index == 0 and "deferred_tools_delta" in row.detail and row.lost_tokens]
    assert [(row.cause, row.loss_class) for row in starts] == [("unexplained", "unknown")] * 3
    keep = result.recommendations[0]
    assert (keep.rank, keep.fix, keep.saved_usd) == (1, "keep-alive", Decimal("6.57095685"))
    assert keep.setting == "none documented for Claude Code"
    assert "previous-message-not-found" not in keep.detail  # (the split's unknown misses it saves on: 1, messages-changed)
    assert "$0.1884 of its saving is on 1 miss(es) the loss split counts unknown (messages-changed x1)" in keep.detail
