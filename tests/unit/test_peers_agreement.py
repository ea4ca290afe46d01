"""bench/peers/run.py's agreement lines read the audit's JSON totals, whose counts are null where
no request reports them: such a line says it compared nothing, not that the tools differ."""

from __future__ import annotations

from tests.bench.peers import load_peers_script

KEY = "ccusage vs prefixbench audit (input, output, cache read, cache write)"


def test_a_null_total_is_not_compared():
    peers = load_peers_script()
    base = {"prefixbench lanes / breaks": (1, 0)}
    same, null = (peers.agreement_lines({**base, KEY: ((1, 2, 3, 4), ours)})[0] for ours in ((1, 2, 3, 4), (None,) * 4))
    assert same.endswith("prefixbench audit (1, 2, 3, 4): agree")
    assert "prefixbench audit ('-', '-', '-', '-'): not compared" in null and "DIFFER" not in null
