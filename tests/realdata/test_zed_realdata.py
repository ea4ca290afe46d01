"""A Zed threads database committed to a public repository, read where it lives (a local git copy;
never copied into this project, the test skips without it):

* ``.local/share/zed/threads/threads.db`` of github.com/atlasatakahraman/AtlasAta-DotFiles (commit
  ``5d4cacffb0d5d0177ba1cb68c6c64facba9bcc6c``, 2026-05-23; removed by a later commit): one thread
  of Zed's current agent (version 0.3.0, Gemini 2.5 Flash through Google, saved 2026-02-06), one
  user turn whose tool loop made six model calls. From ``PREFIXBENCH_ATLAS_DOTFILES_REPO``
  (default the workplace's mirror).

It shows what a 0.3.0 thread keeps: one usage for the turn (its last call's), none for the five
calls before it, and a ``cumulative_token_usage`` left empty (Zed restored its accumulation only in
zed-industries/zed#58378, 2026-06). The audit refuses the database in one line.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
from pathlib import Path

import pytest
import zstandard

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format
from tests.realdata.mirrors import file_at

ATLAS = Path(os.environ.get("PREFIXBENCH_ATLAS_DOTFILES_REPO", "/work/.mirror/atlasatakahraman+AtlasAta-DotFiles/repo"))
ATLAS_COMMIT = "5d4cacffb0d5d0177ba1cb68c6c64facba9bcc6c"
THREADS_DB = ".local/share/zed/threads/threads.db"


def test_a_current_agent_database_keeps_one_usage_per_turn_and_is_refused(tmp_path: Path) -> None:
    data = file_at(ATLAS, ATLAS_COMMIT, THREADS_DB, "github.com/atlasatakahraman/AtlasAta-DotFiles", "PREFIXBENCH_ATLAS_DOTFILES_REPO")
    path = tmp_path / "threads.db"
    path.write_bytes(data)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ((tid, data_type, blob),) = db.execute("SELECT id, data_type, data FROM threads").fetchall()
    db.close()
    assert data_type == "zstd"
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob)) as reader:
        thread = json.loads(reader.read())
    assert thread["version"] == "0.3.0" and thread["model"] == {"provider": "google", "model": "Gemini 2.5 Flash"}
    # One user turn, six agent messages (each a model call of the turn's tool loop), one usage.
    kinds = [next(iter(m)) for m in thread["messages"]]
    assert kinds == ["User"] + ["Agent"] * 6
    assert thread["request_token_usage"] == {thread["messages"][0]["User"]["id"]: {
        "input_tokens": 2234, "output_tokens": 24, "cache_read_input_tokens": 6791}}
    assert thread["cumulative_token_usage"] == {}

    assert detect_format(path) is FORMATS["zed"]
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert str(caught.value) == (
        f"{path}: 1 of 1 Zed thread(s) is of its current agent (version 0.3.0), which keeps one usage per user turn "
        "(the turn's last call), not each call's; no thread here holds each call's usage: no request to audit; "
        "record Zed's calls with `prefixbench proxy` (Zed's provider settings take its URL as api_url)"
    )
    assert tid == "c1b34853-0e99-4358-9565-7aedc0fb53eb"
