"""Codex CLI rollouts their authors committed as ``codex-session.jsonl`` (hackathon and grant
submissions that asked for the agent session), read where they live: a local git copy of each
repository (never copied into this project; each test skips without it). OpenAI's own API,
2026-04 to 2026-07, Codex 0.114 to 0.144, gpt-5.4 to gpt-5.6-sol:

* github.com/AkashJana18/edgerunner (Codex 0.144.1, gpt-5.6-sol and gpt-5.6-luna, 2026-07-10, 173
  calls), ``PREFIXBENCH_EDGERUNNER_REPO``;
* github.com/swarnasn29/soulpass (Codex 0.122.0, gpt-5.4, 2026-04-21, 85 calls),
  ``PREFIXBENCH_SOULPASS_REPO``;
* github.com/Krosss0001/rave-era-project (Codex 0.125.0, gpt-5.5, 2026-04-26, 69 calls),
  ``PREFIXBENCH_RAVE_ERA_REPO``;
* github.com/uzaxirr/raze (Codex 0.114.0, gpt-5.4, 2026-03-12, 18 calls), ``PREFIXBENCH_RAZE_REPO``.

Two of them idle more than an hour between calls, which is what OpenAI's cache lifetimes are
measured by: gpt-5.4 on the in-memory default (2026-04) read only the shared head after 2h13m;
gpt-5.6-sol, whose 30 min is documented as a minimum, read all the previous prompt left cached
after 1h05m.

From Codex 0.122 on, every read lies on a grid coarser than OpenAI's 128-token steps (384 + k x
512 on gpt-5.4 and gpt-5.5, 768 + k x 1,024 on gpt-5.6-sol), and none reads into the previous
response: the audit learns the grid from the reads (workloads/audit/grid.py), or, in a session
too short to learn it, takes the one measured for the model (:data:`SHORT`, :data:`MORE`).
"""

from __future__ import annotations

import json
from decimal import Decimal
import os
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at

#: env var: (repository, commit, calls, (input with the cached part, cached, output) of Codex's
#: last running total, reads within 3%, reads predicted exactly), counted from the files. Main
#: before the learned read grids (workloads/audit/grid.py) and the warm head's falls
#: (core.head_sizes): 159, 79, 57, 17 within 3% and 1, 2, 1, 14 exact. Before the measured
#: grids of Codex 0.122.0 on (grid.CODEX_GRIDS: edgerunner's 3 calls on gpt-5.6-luna) 148, 80,
#: 46, 14 exact. Before a token count written after its call's tool output was dated by that
#: call's outputs (codex.py): edgerunner 164 within, 150 exact. Before a new turn whose prompt
#: shrank was read only up to the previous turn's first prompt (codex.py, _shared): soulpass 81
#: and rave-era 59 within, 80 and 46 exact. Before a new turn whose prompt grew by less than the
#: previous response it sends back was taken to have dropped the previous turn's reasoning
#: (codex.py, _shared): rave-era 60 within (its line 585). Before a new turn that grew by the
#: response or more after a turn that reasoned (not interrupted, not GPT-5.6) was taken to
#: have dropped it too: rave-era 61 within (its line 489).
SESSIONS = {
    "PREFIXBENCH_EDGERUNNER_REPO": (
        "AkashJana18/edgerunner", "fe59a88f62f473797ac88b35260a00cabe8801f0", 173, (35_779_173, 34_132_736, 98_116), 165, 151,
    ),
    "PREFIXBENCH_SOULPASS_REPO": (
        "swarnasn29/soulpass", "12c056d3476363d4c491ccb52716328467ff5f66", 85, (12_710_499, 12_212_608, 47_484), 83, 82,
    ),
    "PREFIXBENCH_RAVE_ERA_REPO": (
        "Krosss0001/rave-era-project", "c332b1a71ed38c443a9d3a4a7c2d531131c747fe", 69, (6_890_784, 6_368_128, 30_615), 62, 47,
    ),
    "PREFIXBENCH_RAZE_REPO": ("uzaxirr/raze", "413af633008c7234fb3055019605eb3ca348e00f", 18, (1_257_132, 1_160_576, 19_360), 17, 14),
}
HOUR_MS = 3_600_000


def _session(env: str, tmp_path: Path) -> Path:
    repo, commit = SESSIONS[env][:2]
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    path = tmp_path / "codex-session.jsonl"
    path.write_bytes(file_at(mirror, commit, "codex-session.jsonl", f"github.com/{repo}", env))
    return path


def _last_total(path: Path) -> dict:
    totals = [
        record["payload"]["info"]["total_token_usage"]
        for record in map(json.loads, path.read_text(encoding="utf-8").splitlines())
        if record.get("type") == "event_msg" and record["payload"].get("type") == "token_count" and record["payload"].get("info")
    ]
    return totals[-1]


@pytest.mark.parametrize("env", sorted(SESSIONS))
def test_codex_session_counts_codexs_running_total_and_its_reads_are_predicted(env: str, tmp_path: Path) -> None:
    _, _, calls, (prompt, cached, output), within, exact = SESSIONS[env]
    path = _session(env, tmp_path)
    total = _last_total(path)
    assert (total["input_tokens"], total["cached_input_tokens"], total["output_tokens"]) == (prompt, cached, output)
    result = run_audit([path])
    assert [f.format for f in result.files] == ["codex"]
    t = result.totals
    assert t.requests == calls
    # Subset usage: the cached part is inside Codex's input count.
    assert (t.input + t.cache_read, t.cache_read, t.output, t.cache_write) == (prompt, cached, output, None)  # no write count
    assert {r.provider for r in result.rows} == {"openai"}
    assert result.files[0].read_within == within
    assert sum(r.predicted_cache_read == r.reported_cache_read for r in result.rows) == exact


#: The read grid each session's reads lie on (every reported read; Codex 0.114 on gpt-5.4: none).
GRIDS = {
    "PREFIXBENCH_EDGERUNNER_REPO": "gpt-5.6-sol (agent 0.144.1) predicted on a 1,024-token grid from 768",
    "PREFIXBENCH_SOULPASS_REPO": "gpt-5.4 (agent 0.122.0) predicted on a 512-token grid from 384",
    "PREFIXBENCH_RAVE_ERA_REPO": "gpt-5.5 (agent 0.125.0) predicted on a 512-token grid from 384",
    "PREFIXBENCH_RAZE_REPO": None,
}


@pytest.mark.parametrize("env", sorted(SESSIONS))
def test_codex_reads_on_a_coarser_grid_are_predicted_on_it(env: str, tmp_path: Path) -> None:
    result = run_audit([_session(env, tmp_path)])
    # (edgerunner's 3 calls on gpt-5.6-luna are too few to learn a grid: they get the one
    # measured for the model, in a note of their own)
    notes = [n for n in result.notes if "-token grid from" in n and "too few reads" not in n]
    if GRIDS[env] is None:
        # Codex 0.114 (2026-03, an API key): reads in 128-token steps, several past the previous
        # prompt into its response, which the model keeps.
        assert notes == []
        return
    (note,) = notes
    assert GRIDS[env] in note
    step, offset = (1_024, 768) if "1,024" in note else (512, 384)
    assert all(r.reported_cache_read % step == offset for r in result.rows if r.reported_cache_read)


def test_gpt_5_4_on_the_in_memory_default_read_only_the_head_after_two_hours(tmp_path: Path) -> None:
    result = run_audit([_session("PREFIXBENCH_SOULPASS_REPO", tmp_path)])
    (late,) = [r for r in result.rows if r.gap_ms is not None and r.gap_ms > HOUR_MS]
    # Sent 2026-04-21, before the API reference made 24 h the default (2026-06-01): the
    # conversation's entry was gone after 2h13m, only Codex's 11,648-token head was read (kept
    # warm elsewhere: the lane start read it too, two cold points that agree, so the model reads
    # it there; it predicted 0 while the compaction's first call, 512 short of the head, counted
    # as a cold point).
    assert (late.model, late.gap_ms // 60_000, late.reported_cache_read, late.predicted_cache_read) == ("gpt-5.4", 132, 11_648, 11_648)
    assert (late.cause, late.loss_class) == ("ttl-expired", "recoverable")


def test_gpt_5_6_kept_the_conversation_past_its_30_minutes(tmp_path: Path) -> None:
    result = run_audit([_session("PREFIXBENCH_EDGERUNNER_REPO", tmp_path)])
    late = [r for r in result.rows if r.gap_ms is not None and r.gap_ms > HOUR_MS]
    assert [(r.model, r.gap_ms // 60_000) for r in late] == [("gpt-5.6-sol", 65), ("gpt-5.6-luna", 1119)]
    kept = late[0]
    # 1h05m after the previous call it read all that call left cached, 105,216 tokens: its prompt
    # (105,624) on the session's 1,024-token grid from 768. The 30 min the model gives GPT-5.6
    # (documented as a minimum) is why it predicts only the warm 11,008-token head (read by the
    # lane start and by 4 reads that fell back to it). No miss (main said 896 tokens short of
    # 95,872 in 128-token steps, provider-best-effort, predicting 0; earlier ttl-expired). The
    # idle hour is the user answering request_user_input: Codex wrote the token count of the
    # call that asked (line 95, 94,976 read) only then, so main dated that call after the hour,
    # not the next one (line 103), which was sent with the answer.
    assert kept.line == 103
    assert (kept.reported_cache_read, kept.predicted_cache_read, kept.expected_cache_read) == (105_216, 11_008, 105_216)
    assert (kept.cause, kept.loss_class) == (None, None)
    # After 18.6 h, on gpt-5.6-luna after gpt-5.6-sol, only the 11,008-token head was read: the
    # gap, past the 30 min lifetime, explains it whichever model it went to (before: model-changed,
    # unknown, and pin-model ranked first though its re-simulation changed none of it).
    assert (late[1].line, late[1].reported_cache_read, late[1].cause, late[1].loss_class) == (855, 11_008, "ttl-expired", "unavoidable")
    assert (late[1].expected_cache_read, late[1].lost_tokens, late[1].lost_usd) == (286_464, 275_456, Decimal("0.4958208"))
    assert "18h39m since the previous request" in late[1].detail and "the model changed too (gpt-5.6-sol -> gpt-5.6-luna)" in late[1].detail


#: Nine shorter Codex rollouts committed as ``codex-session.jsonl`` (1 to 8 calls each,
#: 2026-02 to 2026-07, Codex 0.101 to 0.142, gpt-5.3-codex to gpt-5.5), read from git copies in
#: the folder ``PREFIXBENCH_CODEX_MIRRORS`` names (``owner+name/repo`` each, the workplace's
#: mirror folder by default): repository: (commit, calls, within 3% alone, predicted exactly alone).
SHORT = {
    "SublyFi/privacy-x402": ("349a2af41ec3a7b7fa531b4d79a7b513103d442c", 3, 0, 0),
    "samar-58/scout": ("9a5eb814a6eb37a3b5754dba100962bdb44f311a", 8, 7, 7),
    "Sarthib7/FundWise": ("309701754d856309e269d20ec32402669f30c762", 4, 3, 3),
    "ShoomanKhatri/SolHawk-Agent": ("67d52e2eaf7f02443a9345c5609931f46c4b8867", 4, 3, 3),
    "diiviikk5/Xeus": ("c17a3601ceb183ce20fdb693bbcc67214d6db9e1", 1, 0, 0),
    "kunalcode12/openclaw_agent": ("9f36715687ec4a796da94469d8475aee2c1e6204", 6, 5, 3),
    # Its turn aborted, then rolled back (thread_rolled_back): the next call's prompt sends the
    # head alone again, 17,280 read as predicted (main chained it to the dropped turn: 3, 3).
    "yashpunmiya/Solsmile": ("f1e66f0465a40e7a4bc8bfea97911d8a51542bf5", 5, 4, 4),
    "therealjhay/Soul": ("cf7af20dbf05426f2c47fb558040bf399da0443a", 5, 4, 4),
    "mesayanroy/Valdyum-Labs": ("cd9c97c0b1539adf4addf6cbc05efa1f568b42ee", 6, 3, 2),
}


def _short_sessions(tmp_path: Path) -> list[Path]:
    mirrors = Path(os.environ.get("PREFIXBENCH_CODEX_MIRRORS", "/work/.mirror"))
    paths = []
    for repo, (commit, *_) in SHORT.items():
        path = tmp_path / repo.replace("/", "+") / "codex-session.jsonl"
        path.parent.mkdir()
        data = file_at(mirrors / repo.replace("/", "+") / "repo", commit, "codex-session.jsonl", f"github.com/{repo}", "PREFIXBENCH_CODEX_MIRRORS")
        path.write_bytes(data)
        paths.append(path)
    return paths


def test_short_codex_sessions_alone_and_together(tmp_path: Path) -> None:
    paths = _short_sessions(tmp_path)
    for path, (repo, (_, calls, within, exact)) in zip(paths, SHORT.items()):
        rows = run_audit([path]).rows
        # Main before the learned grids: 0 6 3 1 0 4 3 3 2 within 3%, 0 0 0 0 0 3 0 0 0 exact.
        # Before the measured grids of Codex 0.122.0 on (grid.CODEX_GRIDS): 0 7 3 1 0 4 3 3 3
        # within, 0 7 0 0 0 3 3 0 2 exact. Before a new turn whose prompt shrank was read up to
        # the previous turn's first prompt: openclaw_agent 4 within.
        assert (len(rows), sum(r.read_within for r in rows), sum(r.predicted_cache_read == r.reported_cache_read for r in rows)) == (
            calls, within, exact), repo
    # Audited together (a folder), the three 0.128.0 sessions on gpt-5.5 (13 calls, 11 distinct
    # reads) show their grid too, which none of them alone does.
    result = run_audit(paths)
    assert any("gpt-5.5 (agent 0.128.0) predicted on a 512-token grid from 384 (13 request(s))" in n for n in result.notes)


#: Thirteen more Codex rollouts committed as ``codex-session.jsonl`` (the same grant submissions,
#: 3 to 14 calls each, 2026-04 to 07, Codex 0.120 to 0.144.5, gpt-5.3-codex to gpt-5.6-terra),
#: audited out of sample for workloads/audit/grid.py's measured grids and the Codex reader's
#: turns and times, read from ``PREFIXBENCH_CODEX_MIRRORS`` as :data:`SHORT`: repository:
#: (commit, calls, within 3%, predicted exactly), each alone. 13 of the 21 reads still off are a
#: session's first, reading a head cached before the log began (2,432 to 11,648 tokens; the same
#: amounts recur across users, so not only the user's own sessions: docs/audit.md, "A Codex
#: session's first call"), which nothing in the log tells (``--codex-warm-head`` may); 6 fell,
#: inside the TTL and with nothing changed, to the head or an older entry (OpenAI's best
#: effort); Rivo's line 23 read
#: only the head after 3h17m idle on gpt-5.5 (whose only retention is documented as 24 h), and
#: its line 139 shrank at a new turn by more than the previous turn's reasoning.
MORE = {
    # Main: 3 3 1 12 6 1 3 8 5 4 4 2 8 within 3% (60 of 85), 0 3 0 9 0 0 3 6 1 4 4 0 8 exact.
    "CryptoSodi/Battle-Cities": ("08d1ff0d2ce276b91be1722d7c41baea7138a9c2", 4, 3, 3),
    "Shyaar/beam_v1": ("7520b442de926d46e646803c0a933813174deada", 4, 3, 3),
    "ahmadou5/token-app": ("016eef4aa872b89306d16e72d629be0d1b70c251", 3, 2, 2),
    "anmol0b/Trezo-Ai": ("e67f63d6bd071bf7bb52eee26a712dbf0b3ac6ea", 14, 12, 9),
    "ansu555/omeswap-templet": ("28544dd13e1a216b731818c6d29b83fa57028bd4", 7, 6, 6),
    "duxberus-blipkok/txguardian": ("6ad36d8d0b4121ec9640e0a454d377ead83182df", 4, 2, 2),
    "iamaanahmad/firststep": ("c5dcb975fdf916a9a462e6c4700c7185c17879b5", 4, 3, 3),
    "inspi-writer001/gildore-arena": ("cf7c302a55828b36764163c49a71f95137992c7f", 9, 8, 6),
    "kunalcode12/Empire-of-bits-vorld": ("8241f993f11c3fb287afa5e61299da11e618c755", 7, 5, 1),
    "nikhilxhub/x402-agent": ("e39087c5c742d59ba46e978fa54e888ab351e53b", 5, 4, 4),
    "obitoo2005/Solit": ("85159e44d9601da13b7def948346c691e3087f82", 6, 4, 4),
    "peridotvault/app-peridotvault-web": ("ca01efa9fc6a322b6d36a5c906e0904d1954b020", 5, 3, 3),
    "sachinacharyaa/Rivo": ("b2133a01ab5992314014072bfdaa9769d0d89ac1", 13, 9, 9),
}


def test_more_codex_sessions_alone(tmp_path: Path) -> None:
    mirrors = Path(os.environ.get("PREFIXBENCH_CODEX_MIRRORS", "/work/.mirror"))
    for repo, (commit, calls, within, exact) in MORE.items():
        path = tmp_path / repo.replace("/", "+") / "codex-session.jsonl"
        path.parent.mkdir()
        data = file_at(mirrors / repo.replace("/", "+") / "repo", commit, "codex-session.jsonl", f"github.com/{repo}", "PREFIXBENCH_CODEX_MIRRORS")
        path.write_bytes(data)
        rows = run_audit([path]).rows
        assert (len(rows), sum(r.read_within for r in rows), sum(r.predicted_cache_read == r.reported_cache_read for r in rows)) == (
            calls, within, exact), repo
        # A session's first call reads what the model cannot know of: a head cached before the log.
        assert rows[0].predicted_cache_read == 0 < rows[0].reported_cache_read, repo


#: ``--codex-warm-head`` with the amounts most first calls of these rollouts read (chosen from
#: them, so in sample; docs/audit.md, "A Codex session's first call"): within 3% by set, without
#: -> with. Nothing changes where it does not cover the first call (a Codex 0.114 rollout that read 0
#: loses one).
WARM_HEADS = "gpt-5.4=5504,gpt-5.5=11648"
WARM_WITHIN = {"SESSIONS": (327, 326), "SHORT": (29, 31), "MORE": (64, 69)}


def test_a_codex_warm_head_the_user_names_is_read_by_the_first_calls(tmp_path: Path) -> None:
    from prefixbench.reports.audit import parse_codex_heads
    from prefixbench.workloads.audit.core import assume_codex_heads, audit_requests, load_trace

    mirrors = Path(os.environ.get("PREFIXBENCH_CODEX_MIRRORS", "/work/.mirror"))
    heads = parse_codex_heads(WARM_HEADS)
    sets = {
        "SESSIONS": [_session(env, tmp_path / env) for env in sorted(SESSIONS) if (tmp_path / env).mkdir() is None],
        "SHORT": _short_sessions(tmp_path / "short") if (tmp_path / "short").mkdir() is None else [],
        "MORE": [],
    }
    for repo, (commit, *_) in MORE.items():
        path = tmp_path / "more" / repo.replace("/", "+") / "codex-session.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(file_at(mirrors / repo.replace("/", "+") / "repo", commit, "codex-session.jsonl", f"github.com/{repo}", "PREFIXBENCH_CODEX_MIRRORS"))
        sets["MORE"].append(path)
    for name, paths in sets.items():
        before = after = 0
        for path in paths:
            requests, summaries = load_trace([path])
            plain = audit_requests(requests, summaries).rows
            warm = audit_requests(assume_codex_heads(requests, heads), summaries).rows
            before += sum(r.read_within for r in plain)
            after += sum(r.read_within for r in warm)
            # A first call keeps the warm head its log's own cold points show (edgerunner's,
            # rave-era's), else reads the one named for its model.
            assert warm[0].predicted_cache_read in (plain[0].predicted_cache_read, heads.get(requests[0].model)), path
        assert (before, after) == WARM_WITHIN[name], name


#: Other sessions three of those repositories committed under the same name at other commits (a
#: rollout replaced by a later one), and one committed as ``codex-session-log.jsonl``: repository:
#: (commit, path, calls, (input with the cached part, cached, output) of Codex's last running
#: total, within 3%, predicted exactly), each alone, measured 2026-12-04 (gildore-arena 22 and 19
#: before a new turn that grew by less than the previous response was read up to the previous
#: turn's first prompt: its line 324). Codex 0.120.0 and
#: 0.122.0-alpha.13 on gpt-5.4 (2026-04/05), 0.130.0 on gpt-5.4 (2026-05-13 to 06-22, a resume 41
#: days on reading only the head), and the VS Code extension's 0.135.0-alpha.1 on gpt-5.5
#: (2026-06-01, resumed twice; the file's later versions are of 4 MiB or more).
EARLIER = {
    "anmol0b/Trezo-Ai": ("1bf566ba2852296f7e28663f4bd88201631693dc", "codex-session.jsonl", 3, (58_687, 24_704, 1_071), 1, 0),
    "kunalcode12/Empire-of-bits-vorld": (
        "5a2c36ba7cda58142e84b1ad642504db9667f764", "codex-session.jsonl", 7, (247_859, 185_344, 4_352), 5, 3,
    ),
    "inspi-writer001/gildore-arena": (
        "8c8b717fadd020b3db9385bce8c1c06a95280232", "codex-session.jsonl", 28, (2_477_186, 2_120_192, 24_017), 23, 20,
    ),
    "snepraj2709/snapmed-pharmacv": (
        "f039342e6ec5df803e25108a2249ebd2482615a2", "codex-session-log.jsonl", 165, (18_620_234, 18_215_296, 54_628), 163, 160,
    ),
}


@pytest.mark.parametrize("repo", sorted(EARLIER))
def test_earlier_codex_sessions_count_codexs_running_total(repo: str, tmp_path: Path) -> None:
    commit, where, calls, (prompt, cached, output), within, exact = EARLIER[repo]
    mirrors = Path(os.environ.get("PREFIXBENCH_CODEX_MIRRORS", "/work/.mirror"))
    path = tmp_path / where
    path.write_bytes(file_at(mirrors / repo.replace("/", "+") / "repo", commit, where, f"github.com/{repo}", "PREFIXBENCH_CODEX_MIRRORS"))
    total = _last_total(path)
    assert (total["input_tokens"], total["cached_input_tokens"], total["output_tokens"]) == (prompt, cached, output)
    result = run_audit([path])
    t = result.totals
    assert (t.requests, t.input + t.cache_read, t.cache_read, t.output) == (calls, prompt, cached, output)
    rows = result.rows
    assert (sum(r.read_within for r in rows), sum(r.predicted_cache_read == r.reported_cache_read for r in rows)) == (within, exact)
    assert rows[0].predicted_cache_read == 0 < rows[0].reported_cache_read  # a head cached before the log
