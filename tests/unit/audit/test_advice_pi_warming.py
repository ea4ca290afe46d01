"""pi's keep-alive setting, ``cacheWarming: "idle"``, says where it does not give the figure: the
source the audit cites (earendil-works/pi#9868) says idle warming never fires under
``PI_CACHE_RETENTION=long`` (due at 54 minutes, 90% of the 1 h TTL, past its 30-minute cap after
the agent settles), the very setting the audit gives for pi's ttl-1h, and the re-simulated
keep-alive bridges a gap with up to 10 requests where pi's warming stops after 30 minutes."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.workloads.audit import advice
from tests.unit.audit.test_advice_settable import _advise


def _pi_gap(path: Path, gap_minutes: int, hour: bool) -> Path:
    """A pi session of two Anthropic calls ``gap_minutes`` apart, each writing its prompt (with
    ``hour``, as 1 h entries: ``cacheWrite1h``, pi's ``PI_CACHE_RETENTION=long``)."""
    t0 = 1_788_000_000_000
    entries: list[dict] = [{"type": "session", "id": "p1", "timestamp": "2026-08-29T10:00:00.000Z", "cwd": "/x"},
                           {"type": "message", "message": {"role": "user", "content": [], "timestamp": t0}}]
    for write, at in ((20_000, 10), (20_300, 10 + gap_minutes * 60_000)):
        usage = {"input": 3, "output": 40, "cacheRead": 0, "cacheWrite": write, "cost": {}}
        if hour:
            usage["cacheWrite1h"] = write
        entries.append({"type": "message", "message": {
            "role": "assistant", "content": [], "timestamp": t0 + at, "provider": "anthropic", "model": "claude-sonnet-4-5",
            "api": "anthropic-messages", "usage": usage, "stopReason": "stop"}})
        entries.append({"type": "message", "message": {"role": "user", "content": [], "timestamp": t0 + at + 1000}})
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def _keep_alive(path: Path):
    (rec,) = [rec for rec in _advise([path]).recommendations if rec.fix == "keep-alive"]
    assert rec.agent == "pi" and rec.setting == 'cacheWarming: "idle" (settings.json); from pi 0.86.0'  # (pi's log names no version)
    return rec


def test_pi_keep_alive_says_where_idle_warming_does_not_apply(tmp_path: Path) -> None:
    rec = _keep_alive(_pi_gap(tmp_path / "s.jsonl", 20, hour=False))
    assert "stops 30 minutes after the agent settles, so a longer gap is not bridged" in rec.change
    assert "up to 10 requests" in rec.change
    assert "on 1 h entries (PI_CACHE_RETENTION=long) it never fires" in rec.change
    assert "does not give this figure" not in rec.change  # (5 m lanes: the setting may give it)


def test_pi_keep_alive_on_1h_lanes_says_the_setting_does_not_give_the_figure(tmp_path: Path) -> None:
    rec = _keep_alive(_pi_gap(tmp_path / "s.jsonl", 80, hour=True))
    assert rec.saved_usd is not None and rec.saved_usd > 0
    assert rec.change.endswith(advice.PI_WARMING_ON_1H.format(n="the pi lanes it changes")), rec.change
    assert "on them the setting does not give this figure" in rec.change
