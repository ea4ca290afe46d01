"""Agent sessions committed to public repositories and audited out of sample (none of them among
the sources the readers or the provider rules were built on), read where they live (a local git
copy of each; never copied into this project, each test skips without it):

* github.com/24-ang/earth-0 (commit ``8a88e667f52abd6a0a9a7d920852108c73c79f8b``, 2026-07-03; the
  next commit removed them): ``sessions/``, six pi sessions of 2026-06-12 written on Termux, every
  call deepseek-v4-pro on DeepSeek's own API (pi's ``openai-completions`` protocol, thinking level
  high); two calls failed with ``402 Insufficient Balance`` and log an all-zero usage. From
  ``PREFIXBENCH_EARTH0_REPO``;
* github.com/EddieisxD/dotfiles (``24ec46126c3e6917a3f306187e728083a90b9fe7``, 2026-07-16): a
  ``.pi/agent/sessions/``, twelve pi sessions of 2026-07-10 to 16: qwen3.5 on a local Ollama, a
  free router's ``auto`` answered by minimaxai/minimax-m2.7 (``responseModel``), gpt-4o-mini and
  gpt-5.5 on OpenAI. From ``PREFIXBENCH_EDDIE_DOTFILES_REPO``;
* github.com/frinfo702/dotfiles (``28418b7a9ff9af83906793fb27b0734a30fc8558``, 2026-06-19): a
  ``.pi/agent/sessions/``, 38 pi sessions of 2026-05-11 to 26 in six projects (one, of
  2026-05-25, absent from the workplace's snapshot): deepseek-v4-flash and deepseek-v4-pro on
  DeepSeek's API, and kimi-k2.6 through a provider entry of the user's own, ``kimi-coder``, answered
  as kimi-for-coding (Kimi Code's endpoint); one session forked from another holds a copy of one of its calls.
  From ``PREFIXBENCH_FRINFO_DOTFILES_REPO``;
* github.com/elithrar/dotfiles (``58e1559ee18fcafc4b58535842774b1532273abe``, 2026-06-29): a
  ``.pi/agent/sessions/``, three pi sessions of 2026-06-30 (UTC), every call gpt-5.5 through
  pi's ``openai-codex`` provider (a ChatGPT login, OpenAI's Responses API). From
  ``PREFIXBENCH_ELITHRAR_DOTFILES_REPO``;
* github.com/xiayongchao/pi-demo (``b244c802f7d8e64c2a0e4b2bb0067d957a347352``, 2026-03-25; the
  next commit removed them): ``.pi-sessions/``, seven pi sessions an SDK demo wrote (forks, a
  branch, a child that inherits its parent's first two calls), every call qwen-plus through pi's
  ``qwen`` provider (DashScope's OpenAI-compatible endpoint: implicit caching). From
  ``PREFIXBENCH_PI_DEMO_REPO``;
* github.com/Chiward/text_to_picture (``04b8ca6b433fbf62175dc9d40a65a52a41a6476e``, 2025-09-25): a
  Windows home's ``.gemini/tmp/*/chats/``, six Gemini CLI sessions of 2025-09-24/25 in two
  projects, every call gemini-2.5-pro through Google. Two files share one ``sessionId`` (a session
  begun at 09:59 and carried on at 10:02, its first reply written again in the second file). From
  ``PREFIXBENCH_TEXT_TO_PICTURE_REPO``;
* github.com/davidbuadze/david (``bc56ad832ad440762517769f6832ede1f50efafa``, 2025-09-18): a
  ``.gemini/tmp/``, one Gemini CLI session of that day (and its ``logs.json``), gemini-2.5-pro
  through Google. From ``PREFIXBENCH_DAVID_REPO``;
* github.com/Nicksakaraw/damini-ai (``e34c7e7bab75279bac09b13f50272b183c1bfd9a``, 2026-07-05): a
  home's ``.gemini/tmp/m09-tapan/``, Gemini CLI's JSONL sessions: one interactive session of
  2026-05-19 (24 calls, gemini-3-flash-preview through Google; ten of its replies written twice,
  the same counts each time) and three of its A2A server (``a2a-serv``) holding no call. From
  ``PREFIXBENCH_DAMINI_AI_REPO``.

What is checked: the audit's totals equal the sessions' own sums, recounted here from the raw
files, and how many reads it predicts within 3%.
"""

from __future__ import annotations

import os
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import gemini_jsonl_recount, gemini_recount, pi_recount, read_within, tree_at

EARTH0 = Path(os.environ.get("PREFIXBENCH_EARTH0_REPO", "/work/.mirror/24-ang+earth-0/repo"))
EARTH0_COMMIT = "8a88e667f52abd6a0a9a7d920852108c73c79f8b"
EDDIE = Path(os.environ.get("PREFIXBENCH_EDDIE_DOTFILES_REPO", "/work/.mirror/EddieisxD+dotfiles/repo"))
EDDIE_COMMIT = "24ec46126c3e6917a3f306187e728083a90b9fe7"
FRINFO = Path(os.environ.get("PREFIXBENCH_FRINFO_DOTFILES_REPO", "/work/.mirror/frinfo702+dotfiles/repo"))
FRINFO_COMMIT = "28418b7a9ff9af83906793fb27b0734a30fc8558"
#: frinfo702's session absent from the workplace's snapshot.
FRINFO_LEFT_OUT = frozenset({".pi/agent/sessions/--Users-ken702-ghq-github.com-frinfo702-mizushi--/"
                             "2026-05-25T07-03-16-263Z_019e5df1-ec27-7fac-bdd8-a04e933fd723.jsonl"})
ELITHRAR = Path(os.environ.get("PREFIXBENCH_ELITHRAR_DOTFILES_REPO", "/work/.mirror/elithrar+dotfiles/repo"))
ELITHRAR_COMMIT = "58e1559ee18fcafc4b58535842774b1532273abe"
PI_DEMO = Path(os.environ.get("PREFIXBENCH_PI_DEMO_REPO", "/work/.mirror/xiayongchao+pi-demo/repo"))
PI_DEMO_COMMIT = "b244c802f7d8e64c2a0e4b2bb0067d957a347352"
TEXT_TO_PICTURE = Path(os.environ.get("PREFIXBENCH_TEXT_TO_PICTURE_REPO", "/work/.mirror/Chiward+text_to_picture/repo"))
TEXT_TO_PICTURE_COMMIT = "04b8ca6b433fbf62175dc9d40a65a52a41a6476e"
DAVID = Path(os.environ.get("PREFIXBENCH_DAVID_REPO", "/work/.mirror/davidbuadze+david/repo"))
DAVID_COMMIT = "bc56ad832ad440762517769f6832ede1f50efafa"
DAMINI_AI = Path(os.environ.get("PREFIXBENCH_DAMINI_AI_REPO", "/work/.mirror/Nicksakaraw+damini-ai/repo"))
DAMINI_AI_COMMIT = "e34c7e7bab75279bac09b13f50272b183c1bfd9a"


def _totals(result) -> tuple[int, int, int, int]:
    """The audit's calls, uncached input, output and reads."""
    t = result.totals
    return t.requests, t.input, t.output, t.cache_read


def test_pi_sessions_on_deepseek_v4_pro_count_what_their_messages_sum(tmp_path: Path) -> None:
    paths = tree_at(EARTH0, EARTH0_COMMIT, "github.com/24-ang/earth-0", "PREFIXBENCH_EARTH0_REPO",
                    "sessions/", tmp_path, ".jsonl")
    assert len(paths) == 6
    result = run_audit(paths)
    assert {f.format for f in result.files} == {"pi"}
    messages, calls, uncached, output, read, written, served = pi_recount(paths)
    assert served == {("deepseek", "deepseek-v4-pro")}
    assert (messages, written) == (84, 0)  # (the two 402s: no call to audit; no write count on this protocol)
    assert _totals(result) == (calls, uncached, output, read) == (82, 92_808, 24_919, 1_305_728)
    assert result.totals.cache_write is None
    # 75 of 82 within 3%. The first two sessions' first calls read 0 (the second 10 min after the
    # first); the next three read 3,712 tokens (the system prompt and tools, 2 min to 1h43m after the
    # previous session), where nothing is predicted: ``third_starts_read_common_head`` takes a level
    # from earlier first calls only, and before each of them as many or more read 0 as read 3,712
    # (78 while each call's level was taken from its whole group, its own read included). The sixth
    # session's first call read 512 under a changed, shorter system prompt; the other three read 128 or 512 tokens
    # short of the prediction (the reply the previous call ended with, or its last 128-token unit).
    assert read_within(result) == 75


def test_pi_sessions_on_ollama_a_free_router_and_openai_count_what_their_messages_sum(tmp_path: Path) -> None:
    paths = tree_at(EDDIE, EDDIE_COMMIT, "github.com/EddieisxD/dotfiles", "PREFIXBENCH_EDDIE_DOTFILES_REPO",
                    ".pi/agent/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 12
    result = run_audit(paths)
    assert {f.format for f in result.files} == {"pi"}
    messages, calls, uncached, output, read, written, served = pi_recount(paths)
    assert served == {("ollama", "qwen3.5:latest"), ("freellmapi", "auto"), ("openai", "gpt-4o-mini"), ("openai", "gpt-5.5")}
    assert _totals(result) == (calls, uncached, output, read) == (38, 494_285, 11_896, 761_936)
    assert written == 0 and messages == 63  # (25 errored or aborted calls log an all-zero usage)
    assert {(m.model, m.requests) for m in result.models} == {
        ("qwen3.5:latest", 24), ("minimaxai/minimax-m2.7", 11), ("gpt-4o-mini", 2), ("gpt-5.5", 1)}
    assert read_within(result) == 34


def test_pi_sessions_on_deepseek_and_kimi_code_count_a_forks_copied_call_once(tmp_path: Path) -> None:
    paths = tree_at(FRINFO, FRINFO_COMMIT, "github.com/frinfo702/dotfiles", "PREFIXBENCH_FRINFO_DOTFILES_REPO",
                    ".pi/agent/sessions/", tmp_path, ".jsonl", left_out=FRINFO_LEFT_OUT)
    assert len(paths) == 37
    result = run_audit(paths)
    assert {f.format for f in result.files} == {"pi"}
    _, calls, uncached, output, read, written, served = pi_recount(paths, once=True)
    # (``kimi-coder`` asked for kimi-k2.6 60 times, each answered by kimi-for-coding, the
    # ``responseModel`` the audit reads, and for kimi-for-coding twice)
    assert served == {("deepseek", "deepseek-v4-flash"), ("deepseek", "deepseek-v4-pro"), ("kimi-coder", "kimi-k2.6"),
                      ("kimi-coder", "kimi-for-coding")}
    assert pi_recount(paths)[1] == calls + 1  # (the fork's copy)
    assert _totals(result) == (calls, uncached, output, read) == (266, 562_432, 97_237, 5_884_032)
    assert written == 0 and result.totals.cache_write is None
    assert {(m.provider, m.model, m.requests) for m in result.models} == {
        ("deepseek", "deepseek-v4-flash", 136), ("deepseek", "deepseek-v4-pro", 69), ("moonshot", "kimi-for-coding", 61)}
    # 241 of 266 within 3% (226 while the user's ``kimi-coder`` entry left kimi-for-coding's calls
    # to an unknown provider: 45 of its 61 within, 60 on Moonshot's rules; 243 while
    # ``third_starts_read_common_head`` took each call's level from its whole group, its own read
    # included: from the earlier first calls alone, it predicts none here).
    # Of DeepSeek's 20 sessions' first calls, six read a head an earlier session left (640 to 9,472
    # tokens), none predicted: the third and fourth of deepseek-v4-pro in mizushi on 2026-05-25
    # (4,096) after two that read 0, a third with no other read to agree with (3,456), the two of
    # decks (the first and second of their day) and a subagent run sending an earlier run's prompt
    # again (9,472).
    # The other 14 read nothing, each the first or second of its model, folder and day.
    assert read_within(result) == 241


def test_pi_sessions_through_a_chatgpt_login_count_what_their_messages_sum(tmp_path: Path) -> None:
    paths = tree_at(ELITHRAR, ELITHRAR_COMMIT, "github.com/elithrar/dotfiles", "PREFIXBENCH_ELITHRAR_DOTFILES_REPO",
                    ".pi/agent/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 3
    result = run_audit(paths)
    messages, calls, uncached, output, read, written, served = pi_recount(paths)
    assert served == {("openai-codex", "gpt-5.5")} and (messages, written) == (32, 0)
    assert _totals(result) == (calls, uncached, output, read) == (31, 133_275, 6_608, 446_464)
    assert {(m.provider, m.model, m.requests) for m in result.models} == {("openai", "gpt-5.5", 31)}
    # 23 of 31 within 3%: the eight others read less than the previous prompt left (three of them
    # nothing) a few seconds after it, with nothing changed: OpenAI's best effort.
    assert read_within(result) == 23


def test_pi_sdk_sessions_on_qwen_plus_count_a_forked_parents_calls_once(tmp_path: Path) -> None:
    paths = tree_at(PI_DEMO, PI_DEMO_COMMIT, "github.com/xiayongchao/pi-demo", "PREFIXBENCH_PI_DEMO_REPO",
                    ".pi-sessions/", tmp_path, ".jsonl")
    assert len(paths) == 7
    result = run_audit(paths)
    assert {f.format for f in result.files} == {"pi"}
    parent = next(p for p in paths if p.parent.name == "inherit-demo" and p.name == "parent.jsonl")
    # The parent's two calls are the child's first two (the same counts): counted once, in the child.
    assert pi_recount([parent])[1:6] == (2, 2_230, 64, 0, 0)
    messages, calls, uncached, output, read, written, served = pi_recount([p for p in paths if p != parent])
    assert served == {("qwen", "qwen-plus")} and messages == calls
    assert _totals(result) == (calls, uncached, output, read) == (28, 22_724, 635, 12_800)
    # 6 of 28 within 3%, each a lane's first call that read nothing, as predicted: every read is a whole number
    # of 64-token units from 1,024 (1,024 to 1,344), 17 of the 28 calls read nothing (most a second
    # after a call that sent the same head), and a read is predicted to the token (one source does
    # not make a unit: the rule is unchanged).
    assert read_within(result) == 6
    # The 21 misses are the implicit cache's best effort (pi marks no request for DashScope): reads
    # of 0 are followed by reads of the prefix they held, head included (1,344 tokens read 4.5 min
    # after a call of 1,456 tokens read 0), so nothing changed there; they were system-changed (15)
    # and messages-changed (6), put inside the unlogged head or a message.
    assert {(c.cause, c.requests) for c in result.causes} == {("provider-best-effort", 21), ("cold-start", 6)}


def test_gemini_cli_sessions_of_september_2025_count_what_their_messages_sum(tmp_path: Path) -> None:
    paths = tree_at(TEXT_TO_PICTURE, TEXT_TO_PICTURE_COMMIT, "github.com/Chiward/text_to_picture",
                    "PREFIXBENCH_TEXT_TO_PICTURE_REPO", ".gemini/tmp/", tmp_path, ".json")
    # (the whole folder, as a user would audit it: two ``logs.json`` beside the six sessions, the
    # prompts typed, read and noted as holding no call)
    assert len(paths) == 8 and sum(p.name == "logs.json" for p in paths) == 2
    result = run_audit(paths)
    assert {f.format for f in result.files} == {"gemini-cli"}
    calls, uncached, output, read, models = gemini_recount([p for p in paths if p.parent.name == "chats"])
    assert models == {"gemini-2.5-pro"}
    assert _totals(result) == (calls, uncached, output, read) == (254, 4_308_810, 148_531, 10_452_870)
    # 112 of 254 within 3%: within a turn that holds @-included files the prompts grow by ~20,000
    # tokens while the reads stay near the turn's first prompt and creep up a few hundred tokens a
    # call (2.5 Pro's best effort, as in the other 2.5 Pro homes), 127 of the misses so attributed.
    assert read_within(result) == 112


def test_a_gemini_cli_session_on_2_5_pro_that_often_read_nothing_counts_its_messages(tmp_path: Path) -> None:
    paths = tree_at(DAVID, DAVID_COMMIT, "github.com/davidbuadze/david", "PREFIXBENCH_DAVID_REPO", ".gemini/tmp/", tmp_path, ".json")
    assert sorted(p.name for p in paths) == ["logs.json", "session-2025-09-18T10-54-b6122fc5.json"]
    result = run_audit(paths)
    calls, uncached, output, read, models = gemini_recount([p for p in paths if p.parent.name == "chats"])
    assert models == {"gemini-2.5-pro"}
    assert _totals(result) == (calls, uncached, output, read) == (59, 798_415, 26_866, 1_860_168)
    # 33 of 59 within 3%: ten calls of the one lane read nothing, 4 to 161 s after a call that read
    # most of its prompt, the rest short of the previous prompt by up to ~30,000 tokens.
    assert read_within(result) == 33


def test_gemini_cli_jsonl_sessions_of_2026_count_each_reply_once(tmp_path: Path) -> None:
    paths = tree_at(DAMINI_AI, DAMINI_AI_COMMIT, "github.com/Nicksakaraw/damini-ai", "PREFIXBENCH_DAMINI_AI_REPO",
                    ".gemini/tmp/", tmp_path)
    sessions = [p for p in paths if p.suffix == ".jsonl"]
    assert len(sessions) == 4 and sum(p.name.endswith("-a2a-serv.jsonl") for p in sessions) == 3
    result = run_audit([p for p in paths if p.suffix in {".json", ".jsonl"}])
    assert {f.format for f in result.files} == {"gemini-cli"}
    calls, uncached, output, read, models = gemini_jsonl_recount(sessions)
    assert models == {"gemini-3-flash-preview"}
    assert _totals(result) == (calls, uncached, output, read) == (24, 175_372, 5_831, 520_398)
    # 19 of 24 within 3% (17 before 3 Flash's idle rule waited 20 minutes, not 10: the calls after
    # 10m04s and 15m04s idle read 26,877 and 26,790 tokens, the lane's last read, where nothing was
    # predicted). One after 4m52s read 0 (a call after 48 min read 0, as predicted): Google's
    # implicit cache, best effort.
    assert read_within(result) == 19
