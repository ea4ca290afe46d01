"""A miss the provider could not find the previous message for (``previous_message_not_found``)
after a gap past the 1 h TTL its lane wrote, which the audit itself puts down to ttl-expired, is
counted as keep-alive's re-simulation finds it, as a ttl-expired miss is: on a Claude Code home
nine such misses were ``unknown`` in the loss split while keep-alive "saves" on them."""

from __future__ import annotations

from pathlib import Path

from tests.unit.audit.fixtures import cc_usage
from tests.unit.audit.test_advice_setting_lines import _long_gap
from tests.unit.audit.test_advice_settable import _advise, _two


def test_a_previous_message_not_found_past_the_1h_ttl_is_counted_as_keep_alive_finds_it(tmp_path: Path) -> None:
    """Nine such misses of a Claude Code home (66-540 min gaps past the 1 h TTL) were ``unknown``
    in the loss split while keep-alive "saves" on them: the provider says the entry was gone, the
    gap says why, and keep-alive re-simulated reads it back, as it does a ttl-expired miss."""
    diagnosed = _advise([_long_gap(tmp_path, "previous_message_not_found")])
    (miss,) = [row for row in diagnosed.rows if row.lost_tokens]
    assert (miss.cause, miss.inferred_cause) == ("previous-message-not-found", "ttl-expired")
    assert miss.loss_class == "recoverable"
    split = diagnosed.loss_split
    assert split.recoverable_requests == 1 and split.unknown_requests == 0 and split.recoverable_usd > 0
    (rec,) = [rec for rec in diagnosed.recommendations if rec.fix == "keep-alive"]
    assert rec.saved_usd is not None and rec.saved_usd > 0 and not rec.inferred
    assert "the loss split counts" not in rec.detail
    # The same as the miss without the diagnostic (the audit's own cause).
    (tmp_path / "plain").mkdir()
    plain = _advise([_long_gap(tmp_path / "plain")])
    (same,) = [row for row in plain.rows if row.lost_tokens]
    assert same.cause == "ttl-expired" and same.loss_class == "recoverable" and same.lost_usd == miss.lost_usd


def test_a_previous_message_not_found_the_audit_does_not_put_down_to_expiry_stays_unknown(tmp_path: Path) -> None:
    """Only the audit's own ttl-expired makes it keep-alive's: a gap within the TTL is not one."""
    second = cc_usage(3, 20_300, 0, 40, write_1h=20_300)
    second["cache_miss_reason"] = "previous_message_not_found"
    path = _two(tmp_path, "short", "00:02:00", cc_usage(3, 20_000, 0, 40, write_1h=20_000), second)
    result = _advise([path])
    (miss,) = [row for row in result.rows if row.lost_tokens]
    assert miss.cause == "previous-message-not-found" and miss.inferred_cause != "ttl-expired"
    assert miss.loss_class == "unknown"
