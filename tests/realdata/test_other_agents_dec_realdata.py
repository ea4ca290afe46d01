"""Gemini CLI homes and session archives committed to public repositories, audited out of sample
in December 2026 (none but TP-Tutor was used while the readers were written), read where they
live (a local git copy; never copied into this project, each test skips without it). Only session files are
written out of a commit; a credential store is read in memory, for its shape alone.

* github.com/mischa-thisness/M-Gemini (``3bad8d462ef0a93165eb373a44f09a77910e5ecd``, 2026-01-11):
  a user's archive of Gemini CLI sessions (the one-object ``session-*.json`` form, 2025-11-19 to
  2026-01-11), synced twice (``Archives/`` and ``chat_logs/``: the same sessions, some of them
  again under a later name as the CLI rewrote them); three sessions are past the snapshot's size
  limit (absent in both folders). gemini-3-flash-preview, gemini-3-pro-preview, gemini-2.5-pro
  and gemini-2.5-flash. From ``PREFIXBENCH_M_GEMINI_REPO``.
* github.com/Inamajet/atlas-ai (``9690f43a2e4f9d9c5594ce2f706c26b60a843295``, 2026-06): a Cloud
  Shell ``.gemini/`` home: one a2a-server session of its header line alone, and the CLI's
  ``gemini-credentials.json`` (its FileKeychain's encrypted store: no JSON), which refused the
  whole audit of the home before. From ``PREFIXBENCH_ATLAS_AI_REPO``.
* github.com/Dani00777/Aeterna-Restaurants-AI-SaaS (``f4fe5610f93981729cd3c94ac050ab1f011ce74e``,
  2026-04): a ``.gemini/`` home of no session, its ``gemini-credentials.json`` of the same shape.
  From ``PREFIXBENCH_AETERNA_REPO``.
* github.com/AnthonyontheHub/TP-Tutor (``6b23abb38985d2d91422d406497edfc2f87dda6e``, a later
  commit than the one ``test_other_agent_homes_oos_realdata`` reads): its ``.gemini/`` home's
  ``gemini-credentials.json``, the same shape. From ``PREFIXBENCH_TP_TUTOR_REPO``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prefixbench.reports.audit import nothing_to_audit
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.sources import _KEYCHAIN_TEXT
from tests.realdata.mirrors import file_at, gemini_recount, git, mirror, read_within, tree_at

M_GEMINI_URL, M_GEMINI_ENV, M_GEMINI = mirror("mischa-thisness/M-Gemini", "PREFIXBENCH_M_GEMINI_REPO")
M_GEMINI_COMMIT = "3bad8d462ef0a93165eb373a44f09a77910e5ecd"
#: Sessions past the size limit of the snapshot these were measured on (absent from it), in both folders.
M_GEMINI_LEFT_OUT = frozenset(f"{folder}/session-{name}.json" for folder in ("Archives", "chat_logs")
                              for name in ("2025-12-26T06-16-d55e33ef", "2026-01-01T09-05-93960e40", "2026-01-01T11-40-7f12c335"))

ATLAS_URL, ATLAS_ENV, ATLAS = mirror("Inamajet/atlas-ai", "PREFIXBENCH_ATLAS_AI_REPO")
ATLAS_COMMIT = "9690f43a2e4f9d9c5594ce2f706c26b60a843295"

AETERNA_URL, AETERNA_ENV, AETERNA = mirror("Dani00777/Aeterna-Restaurants-AI-SaaS", "PREFIXBENCH_AETERNA_REPO")
AETERNA_COMMIT = "f4fe5610f93981729cd3c94ac050ab1f011ce74e"

TP_TUTOR_URL, TP_TUTOR_ENV, TP_TUTOR = mirror("AnthonyontheHub/TP-Tutor", "PREFIXBENCH_TP_TUTOR_REPO")
TP_TUTOR_COMMIT = "6b23abb38985d2d91422d406497edfc2f87dda6e"


def _sessions(into: Path) -> list[Path]:
    paths = [path for folder in ("Archives/", "chat_logs/")
             for path in tree_at(M_GEMINI, M_GEMINI_COMMIT, M_GEMINI_URL, M_GEMINI_ENV, folder, into, ".json", M_GEMINI_LEFT_OUT)]
    if not paths:
        pytest.skip(f"no session of {M_GEMINI_URL} at {M_GEMINI_COMMIT[:12]}")
    return paths


def test_a_twice_synced_gemini_archive_totals_its_calls_once(tmp_path: Path) -> None:
    """Each call once however many copies of its session the archive holds (the same session id
    and message id: a copy, or a later file of the same session), its tokens as the CLI wrote
    them; three messages of all-zero tokens are no call."""
    paths = _sessions(tmp_path)
    assert len(paths) == 117
    result = run_audit([tmp_path])
    t = result.totals
    calls, uncached, output, read, models = gemini_recount(paths)
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read) == (1_804, 13_607_082, 621_448, 55_327_403)
    assert t.cache_write is None  # Gemini's implicit cache reports no write
    assert models == {"gemini-3-flash-preview", "gemini-3-pro-preview", "gemini-2.5-pro", "gemini-2.5-flash"}
    assert {r.model for r in result.rows} == models
    # Gemini's implicit cache is best-effort: about half the reads land within 3% of the prediction
    # (measured, no rule added for them).
    assert read_within(result) == 920


def _keychain(repo: Path, commit: str, url: str, env: str) -> bytes:
    return file_at(repo, commit, ".gemini/gemini-credentials.json", url, env)


@pytest.mark.parametrize("repo,commit,url,env", [(ATLAS, ATLAS_COMMIT, ATLAS_URL, ATLAS_ENV),
                                                 (AETERNA, AETERNA_COMMIT, AETERNA_URL, AETERNA_ENV),
                                                 (TP_TUTOR, TP_TUTOR_COMMIT, TP_TUTOR_URL, TP_TUTOR_ENV)])
def test_committed_gemini_credential_stores_have_the_shape_the_walk_skips(repo: Path, commit: str, url: str, env: str) -> None:
    """The committed stores are one line of IV:tag:ciphertext in hex, as fileKeychain.ts writes
    it, and no JSON: the shape a walk of a Gemini home skips (read in memory, never written)."""
    store = _keychain(repo, commit, url, env)
    assert _KEYCHAIN_TEXT.fullmatch(store) is not None
    assert not store.lstrip().startswith((b"{", b"["))


def test_a_cloud_shell_home_of_a_header_only_session_says_it_holds_no_call(tmp_path: Path) -> None:
    """Its one session is the a2a-server's header line alone: the audit names it, not the
    credential store beside it."""
    if git(ATLAS, "cat-file", "-e", f"{ATLAS_COMMIT}^{{commit}}").returncode != 0:
        pytest.skip(f"commit {ATLAS_COMMIT[:12]} not in {ATLAS}")
    paths = tree_at(ATLAS, ATLAS_COMMIT, ATLAS_URL, ATLAS_ENV, ".gemini/tmp/", tmp_path, ".jsonl")
    assert [p.name for p in paths] == ["session-2026-06-14T22-47-a2a-serv.jsonl"]
    requests, summaries = load_trace([tmp_path / ".gemini"])
    assert requests == []
    assert "no model call in this Gemini CLI session: it holds its header only, no message" in nothing_to_audit(summaries)
