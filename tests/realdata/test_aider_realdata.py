"""Aider chat histories, read where they live (a local git copy of each; never copied into this
project, each test skips without its copy): the audit's totals equal the sums of the histories'
own ``Tokens`` lines, as aider printed them.

* Aider's own ``tests/fixtures/chat-history.md`` (Aider-AI/aider, commit
  ``5dc9490bb35f9729ef2c95d00a19ccd30c26339c``; the file last changed 2024-08-26): aider's
  history of its own development, aider 0.47.0 to 0.51.2-dev, 1,133 runs and 839 Tokens lines, 57
  of them with cache counts in every form aider printed them that month ('N cached', 'cache
  write', 'cache hit', exact and rounded, 'cache costs not included'), the development versions
  before 0.51.0 printing them outside 'sent'. Its head was cut (91 lines of a run before its
  first '# aider chat started at'): read under aider's own name, ``.aider.chat.history.md``.
* Histories committed to repositories by accident: none prints a cache count (aider streams by
  default, and a streamed reply carries no usage), each call read as cache not reported, its
  ``sent`` as the prompt.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
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
    # claude-3-5-sonnet-20241022 (67 calls) and one claude-3-opus-20240229 call; a gpt-4o run printed no Tokens line
    ("ArkMaster123/clientdemoNISTAI", "b035b3bfec029e80d76d2189281090b9a5ec2381", ".aider.chat.history.md", 68,
     {"claude-3-5-sonnet-20241022", "claude-3-opus-20240229"}),
    # gemini-2.5-pro-preview-05-06 behind a company's OpenAI-compatible gateway, in a subfolder's history
    ("Ahmedrali/rfp_response_platform", "391b6dbc678b56b203136f7a459b3e24a0f32271", "backend/.aider.chat.history.md", 52,
     {"openai/google_genai.gemini-2.5-pro-preview-05-06"}),
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


AIDER = ("Aider-AI/aider", "5dc9490bb35f9729ef2c95d00a19ccd30c26339c", "tests/fixtures/chat-history.md")
_VERSION = re.compile(r"> Aider v(\d+)\.(\d+)\.(\d+)")
_ANY_TOKENS = re.compile(
    r"> Tokens: (\S+) sent(?:, (\S+) cached)?(?:, (\S+) cache write)?(?:, (\S+) cache hit)?, (\S+) received"
)


def test_aider_s_own_history_reads_to_its_tokens_lines_cache_counts_included(tmp_path: Path) -> None:
    repo, commit, path = AIDER
    log = tmp_path / ".aider.chat.history.md"
    log.write_bytes(file_at(MIRRORS / repo.replace("/", "+") / "repo", commit, path, f"github.com/{repo}", ENV))
    assert detect_format(log) is FORMATS["aider"]
    requests, summary = import_file(log, FORMATS["aider"], ImportContext())
    # The sums as printed, by the documented reading: before 0.51.0 (and wherever 'N cached' is
    # printed) the cache counts are outside 'sent'; no version here counts a part twice.
    version, lines, prompt, read, written = None, 0, 0, 0, 0
    received = 0
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("# aider chat started at "):
            version = None
        elif (found := _VERSION.match(line)) is not None:
            version = tuple(int(g) for g in found.groups())
        elif (tokens := _ANY_TOKENS.match(line)) is not None:
            sent, cached, write, hit, out = (_printed(g) for g in tokens.groups())
            assert version is None or version < (0, 61, 0)
            outside = tokens.group(2) is not None or (version is not None and version < (0, 51, 0))
            lines += 1
            prompt += sent + (cached + write + hit if outside else 0)
            read += cached + hit
            written += write
            received += out
    assert len(requests) == summary.requests == lines == 839
    assert sum(r.usage.prompt for r in requests) == prompt
    assert sum(r.usage.cache_read for r in requests) == read == 205_524
    assert sum(r.usage.cache_write for r in requests) == written == 109_595
    assert sum(r.usage.output for r in requests) == received
    assert sum(r.usage.cache_reported for r in requests) == 57
    assert all(r.sent_ms is None for r in requests) and summary.skipped == ()


def test_aider_s_own_history_predicts_31_of_its_57_cache_counts_within_3_percent(tmp_path: Path) -> None:
    """The 57 calls printing cache counts (53 a run's first call, each run a lane), as the audit
    predicts them: 25 within 3% while the August 2024 markers hid 221 calls' model ('⚡', '♾️ ')
    and DeepSeek's reads of 2024 were counted in V4's 128-token units (its 6 lane starts reading
    the 320-token warm head predicted 256); 31 now. The 26 left: 22 first calls that read what
    a run of the same model and edit format started at most 4.2 min before had cached (Anthropic,
    5 min), against 16 first calls that wrote again after such a run (aider's repo map changed
    with the repository: the head is not in the file), so neither is predicted; 4 DeepSeek first
    calls reading a longer level (13,952; 10,496 x3) another run left."""
    repo, commit, path = AIDER
    log = tmp_path / ".aider.chat.history.md"
    log.write_bytes(file_at(MIRRORS / repo.replace("/", "+") / "repo", commit, path, f"github.com/{repo}", ENV))
    result = run_audit([log])
    assert sum(f.read_within for f in result.files) == 31
