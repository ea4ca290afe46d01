"""Aider chat histories committed to public repositories by accident, read where they live (a
local git copy of each; never copied into this project, each test skips without its copy): the
audit's totals equal the sums of the histories' own ``Tokens`` lines, as aider printed them.

None of these histories prints a cache count (aider streams by default, and a streamed reply
carries no usage): each call reads as cache not reported, its ``sent`` as the prompt. The
reading of the cache counts rests on aider's own code and the unit fixtures.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from tests.realdata.mirrors import file_at

MIRRORS = Path(os.environ.get("PREFIXBENCH_AIDER_MIRRORS", "/work/.mirror"))
ENV = "PREFIXBENCH_AIDER_MIRRORS"
#: (repository, commit, path, calls, models): aider versions noted beside each.
SAMPLES = [
    # aider 0.85.1 and 0.85.2, gpt-4o and gpt-4.1 (streamed)
    ("AFI-Protocol/afi-core", "59f264996752251a16788fce2715c2cec7252970", ".aider.chat.history.md", 39, {"gpt-4o", "gpt-4.1"}),
    # openrouter/openrouter/horizon-beta: a provider the audit does not model
    ("BjornNordblom/pocketflow-text2sql-gui", "fa36619313c0eb9605ca446524c7c0b111af6b59", ".aider.chat.history.md", 62,
     {"openrouter/openrouter/horizon-beta"}),
    # openrouter/openai/gpt-4o-mini
    ("AbdulAlkawasmeh/metadata-aider", "b7544e2efb5467d731cd5c197365c6bde778cbf3", ".aider.chat.history.md", 12, {"openrouter/openai/gpt-4o-mini"}),
    # claude-3-5-sonnet-20240620, exact and rounded counts
    ("Awhitter/pgstndtrprt", "6497d657daf3076fd9af530eb000a224e9e268ad", ".aider.chat.history.md", 5, {"claude-3-5-sonnet-20240620"}),
]

_TOKENS = re.compile(r"> Tokens: (\S+) sent(?:, (\S+) cache write)?(?:, (\S+) cache hit)?, (\S+) received\.")


def _printed(text: str | None) -> int:
    if not text:
        return 0
    return round(float(text[:-1]) * 1000) if text.endswith("k") else int(text.replace(",", ""))


@pytest.mark.parametrize(("repo", "commit", "path", "calls", "models"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_a_public_history_reads_to_its_tokens_lines(tmp_path: Path, repo: str, commit: str, path: str, calls: int, models: set[str]) -> None:
    log = tmp_path / ".aider.chat.history.md"
    log.write_bytes(file_at(MIRRORS / repo.replace("/", "+") / "repo", commit, path, f"github.com/{repo}", ENV))
    assert detect_format(log) is FORMATS["aider"]
    requests, summary = import_file(log, FORMATS["aider"], ImportContext())
    lines = [m for line in log.read_text(errors="replace").splitlines() if (m := _TOKENS.match(line))]
    assert len(requests) == summary.requests == len(lines) == calls
    sent = sum(_printed(m.group(1)) for m in lines)
    received = sum(_printed(m.group(4)) for m in lines)
    assert sum(r.usage.prompt for r in requests) == sent
    assert sum(r.usage.output for r in requests) == received
    assert sum(r.usage.cache_read + r.usage.cache_write for r in requests) == sum(_printed(m.group(2)) + _printed(m.group(3)) for m in lines) == 0
    assert {r.model for r in requests} == models
    assert all(r.sent_ms is None and not r.usage.cache_reported for r in requests)
