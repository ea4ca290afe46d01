"""What to change on a Codex home whose calls all went through a relay (github.com/7567491/Feishu_ClaudeCode
at ``869a42d7abaa93ca3ff0dcf4a63eb10fc696d736``, its ``.codex/sessions/``: 19 rollouts of Codex CLI
0.63.0, gpt-5.1-codex-max through the provider the home names ``codex``; read where it lives, a
local git copy, from ``PREFIXBENCH_FEISHU_CLAUDECODE_REPO``, the test skipping without it).

ttl-1h and ttl-auto save on the 4 idle gaps past OpenAI's in-memory retention. One of those misses
(line 314 of the 12-02 11:17 rollout) is ttl-expired, its loss mostly shared with a changed message
(the split counts it unknown), and neither fix reads back half of it: its pattern must call it a
miss of the fix's own cause left unrecovered, never "another cause (ttl-expired x1)". And as every
call went through the relay, whose cache rules are not known, both "may save"."""

from __future__ import annotations

from pathlib import Path

import json

from prefixbench.reports.cli import main
from tests.realdata.mirrors import tree_at
from tests.realdata.test_relay_and_older_homes_oos_realdata import FEISHU, FEISHU_COMMIT, FEISHU_ENV, FEISHU_LEFT_OUT, FEISHU_URL


def test_a_relayed_codex_homes_ttl_fixes_name_their_own_cause_and_may_save(tmp_path: Path, capsys) -> None:
    tree_at(FEISHU, FEISHU_COMMIT, FEISHU_URL, FEISHU_ENV, ".codex/sessions/", tmp_path, ".jsonl", FEISHU_LEFT_OUT)
    home = str(tmp_path / ".codex" / "sessions")
    assert main(["audit", home, "--quiet", "--format", "json"]) == 0
    recs = {rec["fix"]: rec for rec in json.loads(capsys.readouterr().out)["recommendations"]}
    for fix in ("ttl-1h", "ttl-auto"):
        rec = recs[fix]
        assert rec["rank"] in (1, 2) and rec["saved_usd"] > 0
        assert "another cause (ttl-expired" not in rec["pattern"] and "other causes (ttl-expired" not in rec["pattern"]
        assert "ttl-expired x1: $0.0487 lost; it reads back less than half of what each lost" in rec["pattern"]
        assert rec["inferred"] is True
        assert ("all it saves is on 4 call(s) through the relay 'codex', whose cache rules are not known "
                "(OpenAI's were applied)") in rec["detail"]
    assert main(["audit", home, "--quiet"]) == 0
    table = capsys.readouterr().out
    assert "1  ttl-1h    Codex CLI  may save $0.0556" in table and "saves $0.0556" not in table
    assert "it changes 1 miss(es) of the same cause without recovering them (ttl-expired x1" in table
