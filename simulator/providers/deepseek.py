"""DeepSeek: disk cache of prefix units, subset usage, 128-token units, best effort, no write fee.

Facts (https://api-docs.deepseek.com/guides/kv_cache):
``prompt_cache_hit_tokens`` + ``prompt_cache_miss_tokens`` = ``prompt_tokens`` (subset usage);
hits measured in 128-token units since V4 (64 in the 2024 doc, and in reads before V4); entries live "hours to days", best
effort, so no TTL is modelled; a miss costs what a write costs. Its Anthropic-compatible
endpoint reports ``input_tokens`` WITHOUT the read part and ignores ``cache_control``.

**A run's first call reads the head kept warm [M].** mini-swe-agent's trajectories log every
message but not the tool the agent declares, which DeepSeek renders before them: the byte-level
model, replaying the logged bodies, sees no prefix shared between runs (the system message and
the task template's opening, all they share, fill less than one 64-token unit), yet 178 of the 191
first calls of the five deepseek-chat folders a fork of github.com/SWE-agent/mini-swe-agent kept
(2026-04, the realdata tests' ``DEEPSEEK_RUNS``) read 320 tokens, 9 read 0 (5 of them in the
folder run one task at a time) and 4 read more. So where the first calls of one model in a log with bodies
agree on a read more often than on any other, 0 included, every such first call is predicted to
read at least it (:attr:`~prefixbench.simulator.providers.base.ProviderRules.body_starts_read_warm_level`).
Chosen on the 100-run bench's even runs (first calls within 3%: 1 -> 49 of 50), held out on its
odd runs (1 -> 48 of 49) and the other four folders (bench_dev 2 -> 20 of 23, the rerun 0 -> 20,
lite 0 -> 23, the one-at-a-time folder 5 -> 18: its five reads of 0 are lost); the reasoner's
ten first calls agree on no read, and DeepSeek's other body logs (two recordings, 13 first calls:
7 read 0) are left as they were.

**From the third session of a day, a session's first call reads the head earlier ones agree on
[M][O].** Where the log holds no bodies and names a head per session (pi's and OpenClaw's session
files), the chain model sees nothing a session's first call shares with earlier sessions. The
cache guide's ``A+B`` then ``A+C`` example stores ``A`` only once two requests part after it.
Grouped by model, session folder (a project) and UTC day (pi's system prompt ends with the date
and then the working directory, the date in the user's local time: the UTC day approximates it;
OpenClaw's prompt not checked): of the 26 first calls of github.com/24-ang/earth-0 (six
deepseek-v4-pro sessions of 2026-06-12) and github.com/frinfo702/dotfiles (20, deepseek-v4-flash
and -pro, 2026-05), 12 of the 14 firsts of a group read 0 (the others 640, and 9,472 where a
subagent run, in a folder of its own, sent an earlier run's prompt again), 4 of the 5 seconds read
0, and all 7 thirds or later read a head: 6 their group's head (3,712 three times, 4,096 twice,
3,456 once), one 512 under a shorter system prompt. The first calls of a group from the third on
are predicted to read the non-zero read two or more of the group's first calls sent before it
agree on, more of them than read 0 or agree on any other read, where their prompt holds it
(:attr:`~prefixbench.simulator.providers.base.ProviderRules.third_starts_read_common_head`): a
call's own read and later ones are never looked at. On those two homes that predicts nothing
(before each later first call as many or more read 0 as read its head): earth-0 75 of 82 and
frinfo702 241 of 266 within 3% either way. On a third home,
github.com/Musk-fanX/openclaw-backup's deepseek-chat OpenClaw home, five one-task sessions of
2026-03-05 read 640 after one that read 6,080 and one 128: the last three are predicted, 1,215 ->
1,218 of 1,254. (Taking each call's level from its whole group, its own read and zeros left out,
claimed 78, 243 and 1,220: those calls partly graded themselves.)
"""

from __future__ import annotations

from collections.abc import Mapping

from prefixbench.simulator.providers.base import CacheOption, ProviderRules, count
from prefixbench.simulator.providers.openai import read_usage as read_chat_usage
from prefixbench.simulator.usage import Usage

#: Interval (tokens) of the fixed checkpoints; 128 per the measurements.
DEFAULT_INTERVAL = 128
INTERVALS = (64, 128)
#: V4's launch, 2026-04-24 00:00 UTC (epoch ms). Reads before it count in the 2024 guide's
#: 64-token units: a real Cline task on DeepSeek's API of 2025-10-15 read 59 times, every read a
#: multiple of 64 and 28 of them of 128; a real OpenCode session on deepseek-v4-flash of
#: 2026-05-18 read 87 times, every one a multiple of 128.
V4_LAUNCH_MS = 1_776_988_800_000
LEGACY_INTERVAL = 64


#: The ``deepseek`` model's options, with what each default rests on (``--help``, the reports'
#: assumptions).
OPTIONS = (
    CacheOption(key="interval", default=DEFAULT_INTERVAL,
                seen="64 (59 of 59 reads before V4, 2025) | 128 (123 of 123 reads of V4, 2026: an OpenCode session, a gateway's database, DeepSeek's own API)",
                source="M", help="tokens between fixed checkpoints, the step reads count in"),
    CacheOption(key="whole_units", default=True,
                seen="every read of the public traffic measured is whole units, at a message end's unit too (182 of 182)",
                source="M", help="a read counts whole interval units; false reads a message end's unit to its token"),
    CacheOption(key="cache_output", default=True, seen="a unit at the end of each model output (2026 guide)", source="O",
                help="store the unit at the end of each reply as it is produced"),
    CacheOption(key="common_prefix_units", default=True, seen="the guide's A+B, A+C, A+D example", source="O",
                help="store a unit where a request leaves a stored prefix"),
    CacheOption(key="ttl_ms", default=None, seen="hours to days, best effort (not published)", source="O",
                help="idle lifetime of an entry in ms"),
)


def read_anthropic_compatible_usage(usage: Mapping[str, object], where: str) -> Usage:
    """The ``/anthropic`` endpoint's usage: ``input_tokens`` EXCLUDES reads; no write fee, no split."""
    return Usage(
        cache_read=count(usage.get("cache_read_input_tokens"), where, "usage.cache_read_input_tokens"),
        uncached=count(usage.get("input_tokens"), where, "usage.input_tokens")
        + count(usage.get("cache_creation_input_tokens"), where, "usage.cache_creation_input_tokens"),
        output=count(usage.get("output_tokens"), where, "usage.output_tokens"),
    )


def read_usage(usage: Mapping[str, object], where: str) -> Usage:
    """DeepSeek usage from either endpoint: the Anthropic-compatible fields when present, else chat completions."""
    if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage:
        return read_anthropic_compatible_usage(usage, where)
    return read_chat_usage(usage, where)


RULES = ProviderRules(
    speaks_messages=True,
    name="deepseek",
    own_hosts=("deepseek",),  # its own API as gateways name it (OpenRouter's provider names)
    api_base="https://api.deepseek.com",
    # Cline's DeepSeek handler puts prompt_cache_miss_tokens into cacheWrites and
    # prompt_cache_hit_tokens into cacheReads; tokensIn is 0 (or, early 2025, prompt_tokens).
    agent_handlers=(("deepseek", "miss-as-write"),),
    usage_convention="subset",
    read_usage=read_usage,
    model_prefixes=("deepseek",),
    url_markers=("deepseek",),
    block_tokens=DEFAULT_INTERVAL,
    block_tokens_before=((V4_LAUNCH_MS, LEGACY_INTERVAL),),
    min_tokens=0,
    read_multiplier=0.02,
    write_multiplier=1.0,
    best_effort_note="DeepSeek caches best-effort",
    # [O] The 2026 cache guide stores a unit at the end of the user input and one at the end of
    # the model output of every request: a next prompt that sends the response back whole reads both.
    caches_output=True,
    body_starts_read_warm_level=True,  # [M] see the module doc
    third_starts_read_common_head=True,  # [M][O] see the module doc
    body_model="deepseek",
    body_step_option="interval",
    step_note="measured, not documented: every read of the public DeepSeek traffic measured is whole units, at a "
              "message end's unit too (182 of 182), in units of 64 tokens before V4 (59 of 59 reads, 2025) and of 128 "
              "since (123 of 123, 2026); --read-step deepseek=1 counts them to the token",
    chain_as="deepseek",
    cache_options=OPTIONS,
    sources=("https://api-docs.deepseek.com/guides/kv_cache",),
)
