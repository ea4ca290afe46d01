"""Real OpenCode and Gemini CLI / Qwen Code sessions, read in place where a copy of the shared
real traffic has them (``../shared/realdata/opencode*``, ``gemini-cli*``, ``qwen-code*``; never
copied into the project): every file is read as its format, and the tokens counted equal the
log's own sums (OpenCode's message totals, Gemini CLI's ``tokens.total``), which each file's
notes state."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefixbench.workloads.audit.core import run_audit

FOLDERS = {"opencode": ("opencode",), "gemini-cli": ("gemini-cli", "qwen-code")}


@pytest.mark.parametrize("fmt", sorted(FOLDERS))
def test_real_sessions_count_what_the_log_sums(realdata: Path, fmt: str) -> None:
    folders = [p for prefix in FOLDERS[fmt] for p in sorted(realdata.glob(f"{prefix}*")) if p.is_dir()]
    if not folders:
        pytest.skip(f"no {fmt} sessions in {realdata}")
    result = run_audit(folders)
    read = [f for f in result.files if f.format == fmt]
    assert read and result.totals.requests > 0
    checks = [note for f in read for note in f.notes if "own message totals" in note or "own token totals" in note]
    assert checks, "no file carried the agent's own totals"
    assert all("(the same" in note or "; the same as the calls' prompt + output counted here)" in note for note in checks), [n for n in checks if "the same" not in n]
