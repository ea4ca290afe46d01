"""Fuzz the fork links of a Claude Code forked session (``forkedFrom`` on its copied entries) and
of a Qwen Code fork subagent (``agent_bootstrap`` of ``kind: "fork"``): a marker of any JSON value,
with or without the source's file, ends ``audit`` in exit 0 or one line of exit 2, never an
exception; each call is counted once at most, and the fork's own calls always."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.workloads.audit.core import load_trace
from tests.fuzz.harness import JSON, Tally, fuzz_settings
from tests.unit.logs.test_claude_code import _forked_session
from tests.unit.logs.test_gemini_cli import _qwen_fork_home


def _counted(root: Path) -> list[str] | None:
    try:
        requests, _ = load_trace([root])
    except Exception as error:  # a refusal: the CLI's one line said it
        assert type(error).__name__ == "UserError", error
        return None
    return [str(r.request_id) for r in requests]


def test_any_forked_from_reads_and_counts_each_call_once(importer_examples):
    tally = Tally("claude-code forked session", bound_s=20)

    @fuzz_settings(importer_examples)
    @given(marker=JSON, parent=st.booleans(), how=st.sampled_from(["branch", "sdk"]))
    def case(marker, parent, how) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = _forked_session(Path(tmp), how, parent=parent)
            fork = root / "b7f0-fork.jsonl"
            lines = [json.loads(line) for line in fork.read_text().splitlines()]
            for line in lines:
                if "forkedFrom" in line:
                    line["forkedFrom"] = marker
            fork.write_text("".join(json.dumps(line) + "\n" for line in lines))
            tally.check(["audit", "--quiet", "--format", "json", str(root)])
            ids = _counted(root)
        if ids is not None:
            assert ids.count("req_f1") == ids.count("req_f2") == 1
            assert ids.count("req_s1") <= 1 and ids.count("req_s2") <= 1

    case()
    tally.report()


def test_any_qwen_fork_bootstrap_reads_and_counts_each_call_once(importer_examples):
    tally = Tally("qwen-code fork", bound_s=20)

    @fuzz_settings(importer_examples)
    @given(payload=JSON, session=st.booleans(), spawn_args=JSON)
    def case(payload, session, spawn_args) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            main, agent = _qwen_fork_home(root)
            records = [json.loads(line) for line in agent.read_text().splitlines()]
            records[0]["systemPayload"] = payload
            agent.write_text("".join(json.dumps(r) + "\n" for r in records))
            spawned = [json.loads(line) for line in main.read_text().splitlines()]
            spawned[5]["message"]["parts"][1]["functionCall"]["args"] = spawn_args
            main.write_text("".join(json.dumps(r) + "\n" for r in spawned))
            if not session:
                main.unlink()
            tally.check(["audit", "--quiet", "--format", "json", str(root)])
            ids = _counted(root)
        if ids is not None:
            assert len(ids) == len(set(ids))
            assert len([i for i in ids if i in ("y0", "y2") or i.startswith("telemetry@")]) == 2

    case()
    tally.report()
