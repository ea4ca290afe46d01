"""What to change, first: the audit's recommendations, ranked by the dollars a fix saves.

For every recoverable miss (:mod:`.losses`) the fix that recovers it (:data:`.losses.CAUSE_FIX`)
is re-simulated on the whole log by :func:`.whatif.what_if` (``--what-if all``: every fix), and
each fix that saves money becomes one :class:`~.losses.Recommendation`: the pattern and its evidence
(requests, lanes, sessions), what to change in the agent that wrote the log (its documented
setting where one is known: :data:`AGENT_SETTINGS`; else that none is documented for it), the net dollars the re-simulation saves
(after write premiums: a 1 h write costs 2x the input price; and after the keep-alive
requests ``keep-alive`` sends, each charged) and the fix's assumption. A fix the log cannot re-simulate (no
request bodies) is still listed where the audit found recoverable dollars for it, or misses no
dollar figure holds (unpriced), with ``saved_usd`` None and how to record a log that can
(:data:`.whatif.RECORD_BODIES`).

Ranked by saved dollars, best first; then the fixes whose saving is unknown, and the ones the log
cannot re-simulate, by the dollars the audit lost to their causes. The fixes the recoverable
misses point at that save nothing (their write premiums exceed what they recover: said so), and
those that cannot apply to the log at all (nothing they change is in it: no subagent lanes to
stagger, as ``--what-if`` says), are listed apart, not ranked (rank None).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

import msgspec
from prefixbench.simulator.providers import UNKNOWN
from prefixbench.simulator.pricing import format_usd, usd_sum
from prefixbench.workloads.audit.losses import UNKNOWN_FIX, Recommendation, fix_parts, fixes_for, keep_alive_may_bridge
from prefixbench.workloads.logs.formats.opencode import KILO_7

if TYPE_CHECKING:
    from prefixbench.workloads.audit.core import AuditResult, AuditRow, FileCalibration
    from prefixbench.simulator.price_lookup import Prices
    from prefixbench.workloads.audit.whatif import WhatIf
    from prefixbench.workloads.logs.trace import FileSummary, TraceRequest

class AgentSetting(msgspec.Struct, frozen=True):
    """What to change in one agent for one fix: the change, the documented setting, its source."""

    change: str
    setting: str | None = None
    source: str | None = None
    #: The first release of the agent that reads the setting, where its source names one:
    #: ``(what, version)`` pairs, ``what`` "" for the whole setting, else the part of it
    #: (Claude Code's promptCacheTtl from 2.1.243, its ENABLE_PROMPT_CACHING_1H from 2.1.108).
    #: The setting line says so where the log's versions of the agent are all older, or unknown
    #: (:func:`since_said`).
    since: tuple[tuple[str, str], ...] = ()


#: The agent each log format comes from (formats not listed: their name).
AGENTS: dict[str, str] = {
    "claude-code": "Claude Code",
    "codex": "Codex CLI",
    "pi": "pi",
    # One reader for the three task-folder agents, which the folder does not tell apart.
    "cline": "Cline, Roo Code or Kilo Code",
    "openclaw": "OpenClaw",
    "opencode": "OpenCode",
    "gemini-cli": "Gemini CLI",
    "openhands": "OpenHands",
    "swe-agent": "SWE-agent",
    "http-capture": "the captured agent",
    # Kilo Code 7, told from OpenCode by its files (the format's name is the agent's).
    KILO_7: KILO_7,
}

# Where each setting below was found (changelogs, docs and source; nothing here is guessed).
# Anthropic's own changelog of Claude Code documents both TTL variables (2.1.108); the per-lane
# settings are not in a page of Anthropic's the audit found: a secondary source, marked [S].
_CLAUDE_CODE_1H = "Claude Code changelog, 2.1.108: https://github.com/anthropics/claude-code/blob/main/CHANGELOG.md"
_CLAUDE_CODE_TTLS = ("Claude Code 2.1.243+, secondary source [S]: "
                     "https://www.developersdigest.tech/blog/claude-code-prompt-cache-ttl-controls")
_CLAUDE_CODE_CACHING = "https://code.claude.com/docs/en/prompt-caching"
_PI_SETTINGS = "pi-mono packages/coding-agent/docs/settings.md (Compaction)"
_PI_AI = "pi-mono packages/ai: PI_CACHE_RETENTION=long asks Anthropic for the 1 h TTL"
_PI_SYSTEM = ("pi-mono packages/coding-agent CHANGELOG 0.58.0 (#2131: the system prompt keeps only the date, "
              "so prefixes stay cacheable across reloads and resumed sessions); src/core/system-prompt.ts and "
              "resource-loader.ts put AGENTS.md / CLAUDE.md in the system prompt")
_PI_WARMING = ("pi 0.86.0+, secondary sources [S]: https://github.com/can1357/oh-my-pi/issues/12691 (quoting pi's "
               "docs/settings.md, Cache warming: cacheWarming off / streaming / idle), "
               "https://github.com/earendil-works/pi/issues/9868 (idle warming stops 30 minutes after the agent settles)")
_OPENCLAW_CACHING = ("OpenClaw docs, the Prompt caching page at https://docs.openclaw.ai (cacheRetention none / short / long on "
                     "agents.defaults.models[\"provider/model\"].params or agents.list[].params; heartbeat keep-warm: "
                     "agents.defaults.heartbeat.every, agents.list[].heartbeat)")
#: Kilo Code 7 (Kilo-Org/kilocode, built on OpenCode): its config schema (``Config.Info``, strict:
#: an unknown key is an error) keeps OpenCode's ``compaction`` but has neither ``warming`` nor a
#: provider's or model's cache lifetime, and its request builder passes none (native-request.ts
#: @3775ae4); a cache lifetime option is an open request (#11800).
_KILO_7_CONFIG = ("Kilo-Org/kilocode@002186d packages/opencode/src/config/config.ts (Config.Info: compaction.auto, compaction.prune, "
                  "compaction.reserved; read from kilo.json(c) or opencode.json(c))")
_KILO_7_NO_CACHE_SETTING = ("Kilo-Org/kilocode@002186d packages/opencode/src/config/config.ts (Config.Info, strict: no warming, no cache "
                            "lifetime); a cache lifetime option is an open request: https://github.com/Kilo-Org/kilocode/issues/11800")
_CODEX_CONFIG = "https://github.com/openai/codex/pull/22870 (model_auto_compact_token_limit)"
_CODEX_MODEL = ("https://developers.openai.com/codex/config-basic/ (Default model: model in ~/.codex/config.toml; "
                "precedence: CLI flags such as --model, then a --profile's values, then config.toml)")
_OPENCODE_CONFIG = "https://hexdocs.pm/opencode_sdk/OpenCode.Generated.ConfigCompaction.html"
_OPENCODE_WARMING = ("https://opencode.ai/docs/warming/ (warming: a request shortly before the model's cache.ttl runs out, "
                     "at 90% of it, until duration has passed since the last request that was not one; off by default, "
                     "duration 30 minutes)")
_OPENCODE_CACHE_TTL = ("https://opencode.ai/docs/warming/ (its example sets \"providers\": {\"anthropic\": {\"settings\": "
                       "{\"cache\": {\"ttl\": \"1h\"}}}}; a \"5m\" cache is warmed every 4.5 minutes, a \"1h\" one outlives "
                       "the 30-minute warming window) and the model's cache lifetime it links, "
                       "https://opencode.ai/docs/models#cache-lifetime")
#: Why a TTL fix in Cline, Roo Code or Kilo Code (the extension, forked from Roo Code: one task
#: folder format, which does not say which of them wrote it) names no setting: none of them
#: documents a prompt-cache lifetime, and each marks its Anthropic breakpoints with no ttl (the
#: provider's 5-minute default). Kilo Code 7, rebuilt on OpenCode (kilo.json), is not this format:
#: its missing cache lifetime option is Kilo-Org/kilocode#11800, not cited here.
_CLINE_FAMILY_TTL = ("none of them documents a prompt-cache lifetime; each marks its Anthropic cache breakpoints "
                     "{\"type\": \"ephemeral\"} with no ttl, the 5-minute default: Cline, cline/cline@21cb8d2 "
                     "sdk/packages/llms/src/providers/routing/utils.ts (createEphemeralCacheControl); Roo Code, "
                     "RooCodeInc/Roo-Code@cb83656 src/api/providers/anthropic.ts (its prompt-cache settings, "
                     "awsUsePromptCache and litellmUsePromptCache, turn caching on or off only); Kilo Code, "
                     "Kilo-Org/kilocode@0fc86ce src/api/providers/anthropic.ts")
_CLAUDE_CODE_MODEL = ("https://code.claude.com/docs/en/model-config (the opusplan alias: Opus in plan mode, Sonnet "
                      "otherwise; the default setting: some Max users fall back from Opus to Sonnet past a usage threshold; "
                      "the model setting, --model, ANTHROPIC_MODEL); CLI reference: --fallback-model (print mode)")
_GEMINI_MODEL = ("gemini-cli docs/cli/model-routing.md (model selection precedence: --model, GEMINI_MODEL, model.name; "
                 "the default is auto) and docs/cli/model.md (/model: Auto lets the system choose Pro or Flash per task)")

#: (format, fix name) -> what to change in that agent, with its documented setting. Only
#: settings found in the agent's documentation, changelog or source are named.
AGENT_SETTINGS: dict[tuple[str, str], AgentSetting] = {
    ("claude-code", "ttl-1h"): AgentSetting(
        "opt the session into the 1-hour prompt-cache TTL", "ENABLE_PROMPT_CACHING_1H=1", _CLAUDE_CODE_1H,
        (("", "2.1.108"),)),
    ("claude-code", "ttl-5m"): AgentSetting(
        "force the 5-minute prompt-cache TTL", "FORCE_PROMPT_CACHING_5M=1", _CLAUDE_CODE_1H, (("", "2.1.108"),)),
    ("claude-code", "ttl-auto"): AgentSetting(
        "set one TTL for the main session and one for subagents, \"1h\" or \"5m\" each, as the detail names them "
        "(the cheaper over all the lanes of that kind)",
        "promptCacheTtl (main session), subagentPromptCacheTtl (subagents) in settings.json; before 2.1.243: "
        "ENABLE_PROMPT_CACHING_1H=1 (both kinds at once)", _CLAUDE_CODE_TTLS,
        (("promptCacheTtl and subagentPromptCacheTtl", "2.1.243"), ("ENABLE_PROMPT_CACHING_1H", "2.1.108"))),
    ("claude-code", "static-system"): AgentSetting(
        "keep the system prompt stable mid-session: connect MCP servers and edit CLAUDE.md before the session, "
        "not during it (either rebuilds the cached prefix)", None, _CLAUDE_CODE_CACHING),
    ("claude-code", "keep-prefix-compaction"): AgentSetting(
        "update Claude Code (2.1 sends its compaction call on the main lane's cached prefix) and compact at natural "
        "breaks between tasks (/compact), so the compaction call reads the warm prefix",
        None, _CLAUDE_CODE_CACHING),
    ("pi", "ttl-1h"): AgentSetting("ask for long cache retention (the 1 h TTL on Anthropic)", "PI_CACHE_RETENTION=long", _PI_AI),
    ("pi", "ttl-auto"): AgentSetting(
        "ask for long cache retention (the 1 h TTL on Anthropic) in the runs of the lane kind the detail gives 1 h (one "
        "setting per run: it is not picked per session in hindsight)", "PI_CACHE_RETENTION=long", _PI_AI),
    ("pi", "static-system"): AgentSetting(
        "keep the system prompt byte-stable across reloads and resumed sessions: on pi older than 0.58.0, update pi "
        "to 0.58.0 or later (before it, every start wrote the current time into the system prompt), and edit "
        "AGENTS.md / CLAUDE.md between sessions, not during one (pi puts them in the system prompt)", None, _PI_SYSTEM),
    ("pi", "keep-prefix-compaction"): AgentSetting(
        "compact less often and keep more recent context, so fewer compaction calls re-send the window",
        "compaction.reserveTokens, compaction.keepRecentTokens (settings.json)", _PI_SETTINGS),
    ("pi", "keep-alive"): AgentSetting(
        "let pi warm the cache while the session idles: shortly before the entry expires it sends the last request "
        "again for one output token, where it judges that cheaper than a rewrite. It does not apply everywhere the figure "
        "does: pi's idle warming stops 30 minutes after the agent settles, so a longer gap is not bridged (the figure's "
        "keep-alive bridges a gap with up to 10 requests at the TTL), and on 1 h entries (PI_CACHE_RETENTION=long) it "
        "never fires (due at 54 minutes, past that 30-minute cap)", "cacheWarming: \"idle\" (settings.json)", _PI_WARMING,
        (("", "0.86.0"),)),
    ("openclaw", "ttl-1h"): AgentSetting(
        "ask for long cache retention (the 1 h TTL on Anthropic)", "cacheRetention: \"long\" in the model's or the "
        "agent's params (openclaw.json)", _OPENCLAW_CACHING),
    ("openclaw", "ttl-auto"): AgentSetting(
        "ask for long cache retention (the 1 h TTL on Anthropic) for the agents whose sessions idle 5 m-1 h",
        "cacheRetention: \"long\" in those agents' params (agents.list[].params, openclaw.json)", _OPENCLAW_CACHING),
    ("openclaw", "keep-alive"): AgentSetting(
        "keep the cache warm through idle gaps with a heartbeat a little shorter than the cache TTL (a heartbeat runs "
        "an agent turn, which costs more than the 1-token keep-alive the figure charges)",
        "heartbeat.every (agents.defaults.heartbeat, or agents.list[].heartbeat for one agent)", _OPENCLAW_CACHING),
    ("codex", "keep-prefix-compaction"): AgentSetting(
        "move the auto-compaction threshold so compactions happen at task boundaries",
        "model_auto_compact_token_limit (~/.codex/config.toml)", _CODEX_CONFIG),
    ("codex", "pin-model"): AgentSetting(
        "if you did not switch the model yourself (/model), keep the session on one model: each switch re-sends the "
        "whole context uncached (the other model's price differs: the choice is yours)",
        "model in ~/.codex/config.toml, or --model (-m) for one run", _CODEX_MODEL),
    ("claude-code", "pin-model"): AgentSetting(
        "if you did not switch the model yourself (/model), set one model by name: the opusplan alias switches Opus and "
        "Sonnet with plan mode, the default setting can fall back from Opus to Sonnet, and --fallback-model switches on "
        "overload; each switch re-sends the whole context uncached (the other model's price differs: the choice is yours)",
        "model in settings.json, or --model / ANTHROPIC_MODEL, a model name (not opusplan or default); no --fallback-model",
        _CLAUDE_CODE_MODEL),
    ("gemini-cli", "pin-model"): AgentSetting(
        "if you did not switch the model yourself, pin one: the default auto model lets Gemini CLI's router pick Pro or "
        "Flash per task, and each switch re-sends the whole context uncached (the choice is yours: pinning Flash is cheaper "
        "per token, pinning Pro dearer)",
        "model.name in settings.json (or --model, GEMINI_MODEL; /model -> Manual for one session)", _GEMINI_MODEL),
    ("opencode", "keep-alive"): AgentSetting(
        "keep the cache warm through idle gaps with session warming, for longer than the gaps last (a warming "
        "request adds a short user message and reply, which costs more than the 1-token keep-alive the figure charges)",
        "warming: { \"duration\": longer than the idle gaps } in opencode.json (warming: true warms for 30 minutes only)",
        _OPENCODE_WARMING),
    # OpenCode's cache lifetime is a provider's or a model's setting, a TTL per write: the change is
    # in the words of the provider the lanes went to (:data:`PER_WRITE_SETTINGS`).
    ("opencode", "ttl-1h"): AgentSetting(
        "", "cache.ttl \"1h\" in the settings of the provider (or model) the lanes use, in opencode.json "
        "(\"providers\": {\"anthropic\": {\"settings\": {\"cache\": {\"ttl\": \"1h\"}}}})", _OPENCODE_CACHE_TTL),
    ("opencode", "ttl-5m"): AgentSetting(
        "", "cache.ttl \"5m\" in the settings of the provider (or model) the lanes use, in opencode.json", _OPENCODE_CACHE_TTL),
    ("opencode", "ttl-auto"): AgentSetting(
        "", "cache.ttl \"1h\" or \"5m\" in the settings of the model (or provider) each lane kind uses, as the detail "
        "names them, in opencode.json (one setting per model: main and subagent lanes on one model get one TTL)",
        _OPENCODE_CACHE_TTL),
    # No setting (the change is the provider's, :func:`_ttl_change`): where that was looked for.
    ("cline", "ttl-1h"): AgentSetting("", None, _CLINE_FAMILY_TTL),
    ("cline", "ttl-5m"): AgentSetting("", None, _CLINE_FAMILY_TTL),
    ("cline", "ttl-auto"): AgentSetting("", None, _CLINE_FAMILY_TTL),
    ("opencode", "keep-prefix-compaction"): AgentSetting(
        "tune automatic compaction and tool-output pruning", "compaction.auto, compaction.prune, compaction.reserved (opencode.json)",
        _OPENCODE_CONFIG),
    # Kilo Code 7, told from OpenCode by its files (opencode.KILO_7): OpenCode's warming and
    # cache.ttl are not its settings (:data:`NO_SETTING_SOURCES`).
    (KILO_7, "keep-prefix-compaction"): AgentSetting(
        "tune automatic compaction and tool-output pruning",
        "compaction.auto, compaction.prune, compaction.reserved (kilo.json)", _KILO_7_CONFIG),
}

#: Where an agent's settings were read and found to hold none for a fix (its *see* line), per
#: (format, fix): the none-line names its evidence, only for the fixes that evidence is about
#: (Kilo 7's config has no cache lifetime and no warming: its keep-alive and TTL fixes, not its
#: pin-model or breakpoints, whose settings were not what #11800 asks for).
NO_SETTING_SOURCES: dict[tuple[str, str], str] = {
    (KILO_7, fix): _KILO_7_NO_CACHE_SETTING for fix in ("keep-alive", "ttl-1h", "ttl-5m", "ttl-auto")}

#: Settings that pick a TTL per write (Anthropic's ``cache_control`` ttl): the change stays in the
#: words of the provider the lanes went to (:func:`_ttl_change`), and where their clients pick no
#: TTL per write (a retention per request, OpenAI's) the setting is not named for them.
PER_WRITE_SETTINGS = frozenset({("opencode", "ttl-1h"), ("opencode", "ttl-5m"), ("opencode", "ttl-auto")})

#: How the setting line of a fix opens where the agent's documentation, changelog and source name
#: no setting for it (:data:`AGENT_SETTINGS` has none): every fix says its setting or that none is
#: documented, rather than a change with no word on how to apply it (Claude Code's keep-alive,
#: a TTL fix in Cline, Roo Code or Kilo Code: :data:`_CLINE_FAMILY_TTL`).
NONE_DOCUMENTED = "none documented"


def no_setting(agent: str) -> str:
    """The setting line of a fix with no documented setting in ``agent`` (its display name; a
    list of agents, or the Cline family's name, is "any of" them: ``none documented for Claude
    Code, Cline, Roo Code or Kilo Code`` read as alternatives)."""
    return f"{NONE_DOCUMENTED} for {'any of: ' if ', ' in agent or ' or ' in agent else ''}{agent}"


def release(version: str) -> tuple[int, ...] | None:
    """The numbers a version opens with (``2.1.87`` -> (2, 1, 87); ``0.78.0-alpha.1`` -> (0, 78,
    0)), None where it opens with none."""
    found = re.match(r"\d+(?:\.\d+)*", version.strip().lstrip("vV"))
    return tuple(int(n) for n in found.group(0).split(".")) if found else None


def since_said(agent: str, since: Sequence[tuple[str, str]], versions: Collection[str]) -> str:
    """What a setting line adds for the agent releases its setting needs (:attr:`AgentSetting.since`),
    given the versions of ``agent`` the log names (``versions``): where all are older than a part's
    release, that the part needs it and what the log's sessions ran; where some are at or past it,
    nothing; where the log names none, the release the part is read from. "" where nothing is said."""
    known = sorted({v for v in versions if release(v) is not None}, key=lambda v: (release(v), v))
    if not known:
        said = [f"{what + ' ' if what else ''}from {agent if n == 0 else ''}{' ' if n == 0 else ''}{version}"
                for n, (what, version) in enumerate(since)]
        return ", ".join(said)
    newest = max(release(v) for v in known)
    older = [(what, version) for what, version in since if newest < (release(version) or ())]
    if not older:
        return ""
    ran = known[0] if len(known) == 1 else f"{known[0]}-{known[-1]}"
    parts = [f"{agent + ' ' if n == 0 else ''}{version} or later{' for ' + what if what else ''}"
             for n, (what, version) in enumerate(older)]
    return f"needs {', '.join(parts)} (this log's sessions ran {ran})"


def names_setting(setting: str | None) -> bool:
    """Whether a recommendation's ``setting`` names one (not None, not :func:`no_setting`'s line):
    its source is then the setting's (a *source* line), else the change's (a *see* line)."""
    return bool(setting) and not setting.startswith(NONE_DOCUMENTED)

#: What to change for a fix in any agent (the agent's setting is added when known).
GENERIC_CHANGE: dict[str, str] = {
    "ttl-1h": "write the prompt cache with the 1 h TTL (Anthropic cache_control ttl \"1h\")",
    "ttl-5m": "write the prompt cache with the 5 m TTL",
    "ttl-auto": "pick one TTL for the main sessions and one for the subagents, 1 h or 5 m each, as the detail names them",
    "keep-alive": "while the session idles past the cache TTL (a user away, a long tool run), send a minimal request "
    "(the last prompt again, max_tokens 1) a little before the TTL runs out, so the next turn reads the cache",
    "stagger-subagents": "start subagents after the first one's response has begun, so they read the shared head "
    "instead of each writing it",
    "static-system": "keep the system prompt and tools byte-stable inside a session: move dates, times and "
    "per-turn state out of the prefix, into the latest message",
    "keep-prefix-compaction": "send the compaction call as the main lane's last request plus the instruction, "
    "with the same model, tools, system and effort, so it reads the cached prefix",
    "pin-model": "if you did not switch the model yourself (an automatic router or fallback did), pin the session to one "
    "model: a switch re-sends the whole context uncached, since no cache entry is shared across models",
    "breakpoints": "place cache_control breakpoints so that one reaches the previous request's entry "
    "(automatic caching: one top-level cache_control)",
}


#: How the clients of a fix's requests pick a cache lifetime (:func:`~.whatif.lifetime_knobs`): a
#: TTL per write, and the longer retentions they may ask per request (``24h``, ``12h``).
Lifetimes = tuple[bool, frozenset[str]]

#: What to change for a TTL fix where the log's clients pick a retention policy per request
#: (OpenAI, on a model offering both) instead of a TTL per write (:data:`GENERIC_CHANGE`'s words):
#: naming Anthropic's ``cache_control`` on a Codex log was advice its agent cannot follow.
RETENTION_CHANGE: dict[str, str] = {
    "ttl-1h": "on OpenAI, ttl-1h means its extended 24 h retention, not a 1 h TTL: ask for it on every request "
    "(prompt_cache_retention \"24h\", same price)",
    "ttl-5m": "ask for in-memory prompt cache retention on every request (prompt_cache_retention \"in_memory\")",
    "ttl-auto": "pick one retention for the main sessions and one for the subagents: prompt_cache_retention \"24h\" "
    "or \"in_memory\" each, as the detail names them",
}


#: The same for GPT-6.2 Sol, whose page prices a 12-hour retention beside its 30-minute default
#: (simulator/providers/openai.py; the page names no request field for it).
TWELVE_HOUR_CHANGE: dict[str, str] = {
    "ttl-1h": "ask for the 12-hour prompt cache retention on every gpt-6.2-sol request (its write costs 2x the "
    "30-minute write's price)",
    "ttl-5m": "keep gpt-6.2-sol's 30-minute prompt cache retention (the default) on every request",
    "ttl-auto": "pick one retention for the main sessions and one for the subagents on gpt-6.2-sol: 12 hours (its write "
    "at 2x the 30-minute write's price) or 30 minutes each, as the detail names them",
}


def _ttl_change(name: str, knobs: Lifetimes) -> str:
    """A TTL fix's change in the words of the ways the log's clients pick a lifetime (``knobs``:
    :func:`~.whatif.lifetime_knobs`), each where the log has it."""
    per_write, longer = knobs
    words = [GENERIC_CHANGE[name]] if per_write or not longer or name not in RETENTION_CHANGE else []
    if name in RETENTION_CHANGE:
        words += [RETENTION_CHANGE[name]] if "24h" in longer else []
        words += [TWELVE_HOUR_CHANGE[name]] if "12h" in longer else []
    return "; ".join(words)


def _fix_name(fix: str) -> str:
    return fix.split("=", 1)[0]


def advise(
    result: AuditResult,
    trace: tuple[Sequence[TraceRequest], Sequence[FileSummary]],
    *,
    price_as_of: str | None = None,
    what_ifs: Sequence[WhatIf] | None = None,
    jobs: int = 1,
    baseline: object | None = None,
) -> AuditResult:
    """``result`` with its recommendations (:func:`recommend`) filled in (``jobs``, ``baseline``:
    see :func:`~prefixbench.workloads.audit.whatif.what_if`)."""
    from msgspec.structs import replace

    from prefixbench.simulator.price_lookup import Prices

    requests, summaries = trace
    wanted, changed = resimulation_targets([result.rows])
    found = resimulate(requests, summaries, wanted, changed, result.files, prices=Prices(price_as_of), what_ifs=what_ifs,
                       jobs=jobs, baseline=baseline)
    followed = follow_resimulation(result, found)
    return replace(followed, recommendations=rank(followed, found))


def targets(result: AuditResult) -> dict[str, list[AuditRow]]:
    """The recoverable misses of the audit, by the fix that would recover them."""
    out: dict[str, list[AuditRow]] = defaultdict(list)
    for row in result.rows:
        for fix in fixes_for(row):
            out[fix].append(row)
    return dict(out)


def resimulation_targets(batches: Iterable[Sequence[AuditRow]]) -> tuple[list[str], set[tuple[str, int]]]:
    """What the re-simulations of what to change read of the audit's rows, given a batch at a
    time (the rows of a spilled audit come back a file at a time): the fixes the recoverable
    misses point at, in :func:`targets`'s order (each at its first miss), and the (file, line) of
    the misses put down to a changed system prompt (what ``static-system`` re-simulates on a log
    without bodies)."""
    fixes: dict[str, None] = {}  # ordered, each fix once across the batches
    changed: set[tuple[str, int]] = set()
    for rows in batches:
        for row in rows:
            fixes.update(dict.fromkeys(fixes_for(row)))
            if keep_alive_may_bridge(row):
                fixes["keep-alive"] = None
            if "system-changed" in (row.cause, getattr(row, "secondary_cause", None)):
                changed.add((row.file, row.line))
    if "ttl-auto" in fixes:
        # The one-TTL settings (FORCE_PROMPT_CACHING_5M, ENABLE_PROMPT_CACHING_1H) beside the
        # per-kind one: listed where they save (their evaluations are ttl-auto's own, memoised).
        fixes.update(dict.fromkeys(SETTABLE_TTLS))
    return list(fixes), changed


#: The TTL fixes a single setting applies, re-simulated wherever ttl-auto is.
SETTABLE_TTLS = ("ttl-5m", "ttl-1h")


class Resimulated(msgspec.Struct):
    """What to change, re-simulated (:func:`resimulate`): each fix's :class:`~.whatif.WhatIf` by
    name, the agent (log format) of each file, a capture's named by its system prompt, and the
    session of each file that is part of another's (:attr:`FileSummary.session`: a Claude Code
    subagent's transcript, its session's main transcript), and the versions of each agent (by
    its format in ``formats``) the log's requests name (:attr:`TraceRequest.agent_version`)."""

    done: dict[str, WhatIf]
    formats: dict[str, str]
    sessions: dict[str, str] = {}
    versions: dict[str, tuple[str, ...]] = {}


def resimulate(
    requests: Sequence[TraceRequest],
    summaries: Sequence[FileSummary],
    fixes: Sequence[str],
    changed: set[tuple[str, int]],
    files: Sequence[FileCalibration],
    *,
    prices: Prices | None = None,
    what_ifs: Sequence[WhatIf] | None = None,
    jobs: int = 1,
    baseline: object | None = None,
) -> Resimulated:
    """The half of :func:`recommend` that reads the trace and not the rows: ``fixes`` re-simulated
    where ``what_ifs`` lacks them, with ``changed`` (both from :func:`resimulation_targets`);
    ``files``: the audit's files (their formats)."""
    from prefixbench.workloads.audit.whatif import what_if

    done = {w.fix: w for w in (what_ifs or ())}
    missing = [fix for fix in fixes if fix not in done]
    if missing:
        for w in what_if(list(requests), list(summaries), missing, prices=prices, system_changed=changed, jobs=jobs,
                         baseline=baseline):
            done[w.fix] = w
    formats = {f.file: f.format for f in files}
    formats.update(_captured_agents(requests, formats))
    # OpenClaw writes pi's session format, in agents/<agentId>/sessions/ (pi's own: agent/sessions/):
    # its settings, not pi's, are the ones to name.
    formats.update({file: "openclaw" for file, fmt in formats.items() if fmt == "pi" and OPENCLAW_SESSIONS.search(file)})
    # An OpenTelemetry export names its agent (service.name): that agent, not "otel".
    formats.update({s.file: s.agent for s in summaries if s.agent and s.file in formats})
    versions: dict[str, set[str]] = defaultdict(set)
    for r in requests:
        if r.agent_version:
            versions[formats.get(r.file, "")].add(r.agent_version)
    return Resimulated(done, formats, {s.file: s.session for s in summaries if s.session},
                       {fmt: tuple(sorted(found)) for fmt, found in versions.items()})


def recommend(
    requests: Sequence[TraceRequest],
    summaries: Sequence[FileSummary],
    result: AuditResult,
    *,
    prices: Prices | None = None,
    what_ifs: Sequence[WhatIf] | None = None,
    jobs: int = 1,
    baseline: object | None = None,
) -> tuple[Recommendation, ...]:
    """The recommendations for an audited trace (see the module doc). ``what_ifs``: fixes already
    re-simulated (``--what-if``); the targeted fixes they lack are re-simulated here (``baseline``:
    see :func:`~prefixbench.workloads.audit.whatif.what_if`)."""
    wanted, changed = resimulation_targets([result.rows])
    found = resimulate(requests, summaries, wanted, changed, result.files, prices=prices, what_ifs=what_ifs, jobs=jobs, baseline=baseline)
    return rank(follow_resimulation(result, found), found)


def follow_resimulation(result: AuditResult, found: Resimulated) -> AuditResult:
    """``result`` with the recoverable misses that no fix recovers when it ran counted ``unknown``:
    a miss is recoverable by its cause (:func:`~.losses.loss_class`) until its fixes are
    re-simulated; where each of them left the request unchanged (``breakpoints=auto`` on a
    capture whose entry it cannot reach) or cannot apply to the log (``static-system`` on a log
    without bodies whose reads show no break it can remove), the split says what the
    re-simulation found. Its loss split is summed again from the rows (the same rule)."""
    from msgspec.structs import replace

    from prefixbench.workloads.audit.losses import split_losses

    by_key = {(row.file, row.lane, row.index): row for row in result.rows}
    by_fix: dict[str, set[tuple[str, str, int]]] = {}
    # A targeted miss: whether a fix of its that ran recovered it (:func:`_recovered_keys`, as
    # each fix's credit counts it), not merely changed it: a re-simulation that changes a miss's
    # write and reads little more of it did not recover it, so the split must not call it
    # recoverable (static-system's 10 misses "left as logged" stayed recoverable).
    ran: dict[tuple[str, str, int], bool] = {}
    for fix, rows in targets(result).items():
        w = found.done.get(fix)
        if w is None:
            continue  # not re-simulated: its class stays what its cause says
        if not w.applies:
            # The fix cannot apply to this log ("cannot apply", "cannot re-simulate"): it recovers
            # none of its misses, which stay recoverable only where another of their fixes does
            # (austinweitao/claude-backup: a static-system miss counted recoverable while
            # --what-if said static-system cannot apply there).
            for row in rows:
                ran.setdefault((row.file, row.lane, row.index), False)
            continue
        if fix not in by_fix:
            by_fix[fix] = _recovered_keys(fix, w, by_key)
        for row in rows:
            key = (row.file, row.lane, row.index)
            ran[key] = ran.get(key, False) or key in by_fix[fix]
    unrecovered = {key for key, recovered in ran.items() if not recovered}
    # A miss classed otherwise that one of its own fixes recovers (reads most of it) is
    # recoverable: the fix is the evidence (keep-alive bridging a gap past a 1 h TTL the write
    # logged). Only the row's own fixes count (:func:`_own_fixes`), never a --what-if the user
    # asked for or a fix another row of the run triggered: the split must not depend on them. Not
    # so for a fix of an unknown cause that may have been the user's choice (pin-model: UNKNOWN_FIX).

    def recovers(fix: str, key: tuple[str, str, int]) -> bool:
        w = found.done.get(fix)
        if w is None or not w.applies or _fix_name(fix) in _CHOICE_FIXES:
            return False
        if fix not in by_fix:
            by_fix[fix] = _recovered_keys(fix, w, by_key)
        return key in by_fix[fix]

    recovered = {key for key, row in by_key.items() if any(recovers(fix, key) for fix in _own_fixes(row))}
    promoted = {key for key in recovered if (row := by_key.get(key)) is not None and row.cause is not None
                and (row.lost_tokens or 0) > 0 and row.loss_class != "recoverable"
                and getattr(row, "secondary_cause", None) is None}
    unrecovered -= recovered
    if not unrecovered and not promoted:
        return result
    rows = tuple(replace(row, loss_class="unknown") if (key := (row.file, row.lane, row.index)) in unrecovered
                 else replace(row, loss_class="recoverable") if key in promoted else row
                 for row in result.rows)
    return replace(result, rows=rows, loss_split=split_losses(rows))


#: Fixes of a cause the user may have chosen (:data:`~.losses.UNKNOWN_FIX`): what they recover
#: stays where the split put it, and their row says how much of their saving is there.
_CHOICE_FIXES = frozenset(fix for fixes in UNKNOWN_FIX.values() for fix in fixes)


def _recovered_elsewhere(fix: str, rows: Sequence[AuditRow]) -> str:
    """What the pattern adds where some of the misses a fix is credited with (it recovers them:
    :func:`_credited`) are of a cause that points at another fix, or at none: their cause is not
    its, so the fix's *lost to its misses* is not a loss of its own cause. '' where every miss is
    its own (``ttl-1h`` and ``ttl-5m`` taken as ``ttl-auto``). On a Claude Code home, ttl-auto
    recovered one compaction call's miss (``compaction-miss x1: $0.1244 lost``), read as a TTL
    miss of its own beside the 35 ttl-expired misses it did not recover."""
    as_fix = "ttl-auto" if _fix_name(fix) in SETTABLE_TTLS else fix
    foreign = [row for row in rows if row.cause is not None and not {fix, as_fix} & set(_own_fixes(row))]
    if not foreign:
        return ""
    others = sorted({other for row in foreign for other in _own_fixes(row)})
    points = f"points at {', '.join(others)}" if others else "points at no fix"
    if len(foreign) == len(rows):
        return (f"{'its' if len(rows) == 1 else 'their'} cause {points}, not at this fix, which recovers "
                f"{'it' if len(rows) == 1 else 'them'} all the same (it reads back at least half of what each lost)")
    one = len(foreign) == 1
    return (f"{len(foreign):,} of them ({_causes_text(foreign)}) {'is a miss' if one else 'are misses'} whose cause {points}, "
            f"not at this fix, which recovers {'it' if one else 'them'} all the same (it reads back at least half of what "
            "each lost)")


def _own_fixes(row: AuditRow) -> tuple[str, ...]:
    """The fixes re-simulated for ``row`` itself (:func:`resimulation_targets`): those its causes
    point at, and keep-alive where it may bridge the row's gap."""
    own = fixes_for(row)
    return own + ("keep-alive",) if keep_alive_may_bridge(row) and "keep-alive" not in own else own


#: The share of a miss's lost tokens a fix must read back to recover it (:func:`_recovered_keys`):
#: at least half, so one more token read of a 100k miss neither moves its loss nor credits the fix.
RECOVERED_SHARE = Fraction(1, 2)


def _recovered_keys(fix: str, w: WhatIf, by_key: dict[tuple[str, str, int], AuditRow]) -> set[tuple[str, str, int]]:
    """The misses ``w``'s re-simulation recovers: it reads more of them than they read as logged
    and than the audit's own model predicted (a TTL fix changes every write, not every read), by
    at least :data:`RECOVERED_SHARE` of the tokens the miss lost."""
    out = set()
    inferred = _fix_name(fix) == "static-system"
    for c in w.changes:
        key = (c.file, c.lane, c.index)
        row = by_key.get(key)
        if c.index < 0 or row is None or row.cause is None or (row.lost_tokens or 0) <= 0:
            continue
        # A system prompt change the audit infers from the reads (a log without bodies) is one
        # its model did not see: it predicted the read past it that the miss lost, and the fix,
        # measured against the log with the break in it, reads it back. Against that prediction
        # it would gain nothing on any of them (10 of 11 such misses of a Claude Code home were
        # said to be left as logged while the fix read each back in full).
        seen = c.reported_read if inferred and "system-changed" in (row.cause, getattr(row, "secondary_cause", None)) \
            else max(c.reported_read, row.predicted_cache_read)
        gained = c.counterfactual_read - seen
        if gained > 0 and gained >= RECOVERED_SHARE * row.lost_tokens:
            out.add(key)
    return out


def rank(result: AuditResult, found: Resimulated) -> tuple[Recommendation, ...]:
    """The half of :func:`recommend` that reads the rows, not the trace: the re-simulated fixes
    ranked, each with the misses that point at it."""
    wanted = targets(result)
    formats = found.formats
    # A request is (file, lane, index): a one-object JSON log holds every request on line 1.
    by_key = {(row.file, row.lane, row.index): row for row in result.rows}
    recommendations: list[Recommendation] = []
    for fix, w in found.done.items():
        rows = wanted.get(fix, [])
        # Each miss counts the part of its loss whose cause the fix recovers: a miss two causes
        # share is split between its causes' fixes as the causes table splits it.
        parts = [part for row in rows for part in fix_parts(row, fix)]
        lost = usd_sum(usd or Decimal(0) for _, usd in parts)
        unpriced = sum(row.lost_usd is None and (row.lost_tokens or 0) > 0 for row in rows)
        causes = Counter(cause for cause, _ in parts if cause)
        # A fix whose recovering a miss made it recoverable in the split (keep-alive over a gap
        # past a logged 1 h TTL) is listed too, whatever it costs: the split names it as the fix.
        recovered_keys = _recovered_keys(fix, w, by_key)  # once a fix: the credit, the split's words and the misses read it
        evidence = (w.applies and not rows and _fix_name(fix) not in (*SETTABLE_TTLS, *_CHOICE_FIXES)
                    and bool(recovered_keys))
        if w.applies and w.saved_usd is not None and (w.saved_usd > 0 or rows or evidence):
            # A fix that saves money, or one the audit's recoverable misses point at (listed with
            # what the re-simulation says, even when its write premiums eat what it recovers).
            changed = [(c.file, c.lane) for c in w.changes]
            detail = w.detail
            pointed = (lost, causes, unpriced)  # what the misses its cause points at lost
            left: list[AuditRow] = []
            credited = _credited(recovered_keys, rows, by_key)
            if credited is None and rows and not recovered_keys and _fix_name(fix) == "ttl-auto" and any(
                    c.index >= 0 for c in w.changes):
                # ttl-auto gave some lane the other lifetime and recovered none of its misses: what
                # it saves is on what the requests it changes paid (a TTL fix changes every write,
                # not every read), so it is credited with none of them, as any fix is credited with
                # what it recovers only. Where it changed nothing (every lane kept as logged, as
                # the other lifetime did not pay), its misses stay its own: a verdict on the prices.
                credited = []
            if credited is not None:
                # Credited with the misses it recovers, whatever cause the audit gave them; the
                # misses its cause points at that it leaves as logged are said apart.
                recovered = {(row.file, row.lane, row.index) for row in credited}
                left = [row for row in rows if (row.file, row.lane, row.index) not in recovered]
                # Each by the parts of its loss whose cause the fix recovers (the whole, under its
                # cause, where no part's cause points at it), with ttl-1h and ttl-5m taken as the
                # TTL fix they set: ttl-1h and ttl-auto running the same plan on a Codex home
                # recovered the same 24 misses and said $1.9254 and $1.8462 lost (6 misses shared
                # between an expired entry and a changed message counted whole for one, by their
                # ttl-expired part for the other).
                parts_fix = "ttl-auto" if _fix_name(fix) in SETTABLE_TTLS else fix
                parts = [part for row in credited for part in fix_parts(row, parts_fix)]
                rows = credited
                lost = usd_sum(usd or Decimal(0) for _, usd in parts)
                unpriced = sum(row.lost_usd is None and (row.lost_tokens or 0) > 0 for row in rows)
                causes = Counter(cause for cause, _ in parts if cause)
            split_said = _on_split_classes(fix, w, by_key, recovered_keys)
            if split_said:
                detail = f"{detail}; {split_said}" if detail else split_said
            if left and not rows:
                # Credited with none of the misses its cause points at (ttl-auto, above): what they
                # lost is still what its *lost to its misses* says, as its pattern does ("no miss"
                # means no miss points at the fix); the pattern says it recovers none of them.
                lost, causes, unpriced = pointed
            elif not rows:
                # Listed for what it saves (a --what-if fix no cause points at, ttl-1h): the misses
                # among the requests it changes are still its misses, not "no miss".
                rows = [row for key, row in by_key.items() if key in recovered_keys]
                lost = usd_sum(row.lost_usd or Decimal(0) for row in rows)
                causes = Counter(row.cause for row in rows if row.cause is not None)
                unpriced = sum(row.lost_usd is None and (row.lost_tokens or 0) > 0 for row in rows)
            recovers_none = _recovers_none(fix, w, rows)
            if w.saved_usd <= 0:
                said = "saves nothing" if w.saved_usd == 0 else f"costs {format_usd(-w.saved_usd)} more"
                net = _net_of(fix, w)
                detail = (f"does not pay: re-simulated, it {said}{net}, against the "
                          f"{format_usd(lost)} its misses lost" + (f"; {w.detail}" if w.detail else ""))
                if unpriced:
                    detail = (f"{'unknown' if not lost else 'does not pay on the priced requests'}: re-simulated, "
                              f"it {said}{net} on the requests it could price, against the "
                              f"{format_usd(lost)} its priced misses lost; {unpriced:,} of its misses are in no dollar "
                              "figure (no price, or a range only), so what it saves on them is unknown"
                              + (f"; {w.detail}" if w.detail else ""))
                if recovers_none:
                    # Not a price verdict: the re-simulation left every request its misses are on
                    # as it was, so the fix would not have recovered them (whatever it costs).
                    elsewhere = ("" if w.saved_usd == 0 else
                                 f"; on the other requests it changes it {said}{net}")
                    detail = (f"{RECOVERS_NONE}: re-simulated, it leaves the {len(rows):,} request(s) they are "
                              f"on as logged, so it would not have saved the {format_usd(lost)} they lost{elsewhere}"
                              + (f"; {w.detail}" if w.detail else ""))
            elif unpriced:
                # A saving on the priced requests only: say what the figure leaves out.
                detail = ((f"{w.detail}; " if w.detail else "") + f"the saving is the priced requests' only: {unpriced:,} "
                          "of its misses are in no dollar figure (no price, or a range only), so what it saves on them "
                          "is unknown")
            rec = _recommendation(fix, w, rows, changed or [(r.file, r.lane) for r in rows], formats, w.saved_usd, lost, detail,
                                  unpriced, _knobs(w, rows, by_key), _knobs_by_agent(w, rows, by_key, formats),
                                  recovers_none=recovers_none and w.saved_usd <= 0, causes=causes, sessions_of=found.sessions,
                                  versions=found.versions)
            rec = _pi_warming_on_1h(rec, fix, changed or [(r.file, r.lane) for r in rows], formats, result.rows)
            if said := _recovered_elsewhere(fix, rows):
                rec = msgspec.structs.replace(rec, pattern=f"{rec.pattern}; {said}")
            pattern = _pattern_of_changes(rec.pattern, w, rows, lost, by_key,
                                          {(row.file, row.lane, row.index) for row in left})
            if left and not rows:  # (ttl-auto, above: it recovers none of the misses its cause points at)
                pattern = (f"it recovers none of the {len(left):,} miss(es) its cause points it at ({_causes_text(left)}: "
                           f"{format_usd(lost)} lost): its dollars are on "
                           f"what the {w.requests_changed:,} request(s) it changes paid (e.g. a cheaper cache write), not "
                           "on a miss")
            elif left:
                # A miss its cause points at that it changes (a TTL fix changes every write of a
                # lane) without reading it back is not recovered, nor left as logged: said apart.
                changed_keys = {(c.file, c.lane, c.index) for c in w.changes}
                touched = [row for row in left if (row.file, row.lane, row.index) in changed_keys]
                kept = [row for row in left if (row.file, row.lane, row.index) not in changed_keys]
                if touched:
                    on_touched = usd_sum(c.saved_usd for c in w.changes if c.priced and c.index >= 0 and any(
                        (c.file, c.lane, c.index) == (row.file, row.lane, row.index) for row in touched))
                    pattern += (f"; it changes {len(touched):,} miss(es) its cause points it at without recovering them "
                                f"({_causes_text(touched)}: {format_usd(usd_sum(row.lost_usd or Decimal(0) for row in touched))} "
                                f"lost; it reads back less than half of what each lost), "
                                f"{'saving' if on_touched >= 0 else 'costing'} {format_usd(abs(on_touched))} there")
                if kept:
                    pattern += (f"; it leaves as logged the {len(kept):,} miss(es) its cause points it at ({_causes_text(kept)}: "
                                f"{format_usd(usd_sum(row.lost_usd or Decimal(0) for row in kept))} lost)")
            recommendations.append(msgspec.structs.replace(rec, pattern=pattern))
        elif not w.applies and rows and (lost > 0 or unpriced):
            # Listed with what its misses lost; where none of them is priced, its saving is
            # unknown on two counts, and said so rather than left out. Ranked only where the log
            # lacks the request bodies to re-simulate it on (it may apply, the log cannot show
            # it); a fix with nothing to change in the log (no subagent lanes to stagger) cannot
            # apply at all, as --what-if says, and is listed apart, not ranked (:func:`cannot_apply`):
            # a mini-swe-agent log ranked stagger-subagents #1 while --what-if said "cannot apply".
            detail = f"{w.why_not}: {w.detail}"
            recommendations.append(_recommendation(fix, w, rows, [(row.file, row.lane) for row in rows], formats, None, lost, detail,
                                                   unpriced, _knobs(w, rows, by_key), _knobs_by_agent(w, rows, by_key, formats),
                                                   causes=causes, sessions_of=found.sessions, versions=found.versions))
    recommendations.sort(key=_rank_key)
    # Ranked: the fixes that save, then those whose saving is unknown (no re-simulation, no
    # price); a fix that saves nothing here is set apart after them, unranked (rank None), once,
    # its detail saying why (it ranked among the fixes that save, as "leave it as it is").
    ranked = [msgspec.structs.replace(rec, rank=n) for n, rec in enumerate(
        (rec for rec in recommendations if not not_ranked(rec)), 1)]
    apart = [msgspec.structs.replace(rec, rank=None) for rec in recommendations if not_ranked(rec)]
    return (*_with_alternatives(ranked), *apart)


#: What pi's keep-alive change adds where pi lanes the fix changes wrote 1 h entries.
PI_WARMING_ON_1H = "{n} write 1 h entries, which pi's idle warming never warms: on them the setting does not give this figure"


def _pi_warming_on_1h(rec: Recommendation, fix: str, lanes: Iterable[tuple[str, str]], formats: dict[str, str],
                      rows: Sequence[AuditRow]) -> Recommendation:
    """``rec`` with pi's keep-alive change saying so where the pi lanes it changes wrote 1 h
    entries: pi's ``cacheWarming: "idle"`` is due at 90% of the TTL (54 minutes) and stops 30
    minutes after the agent settles (earendil-works/pi#9868), so it never warms them, and the
    re-simulated figure is not what the setting gives there."""
    pi_change = AGENT_SETTINGS[("pi", "keep-alive")].change
    if _fix_name(fix) != "keep-alive" or pi_change not in rec.change:
        return rec
    pi_lanes = {lane for lane in lanes if formats.get(lane[0]) == "pi"}
    long = {(row.file, row.lane) for row in rows
            if (row.file, row.lane) in pi_lanes and (row.reported_cache_write_1h or 0) > 0}
    if not long:
        return rec
    said = PI_WARMING_ON_1H.format(n=f"{len(long):,} of the {len(pi_lanes):,} pi lanes it changes"
                                   if len(long) < len(pi_lanes) else "the pi lanes it changes")
    return msgspec.structs.replace(rec, change=rec.change.replace(pi_change, f"{pi_change}; {said}", 1))


#: How the detail of a fix that cannot apply to the log opens (nothing it changes is in it: no
#: subagent lanes to stagger), in --what-if's words: listed apart, not ranked (:func:`cannot_apply`).
CANNOT_APPLY = "cannot apply"


def cannot_apply(saved_usd: object, detail: str | None) -> bool:
    """Whether a recommendation (its ``saved_usd`` and ``detail``, as a struct's or a JSON
    record's) is of a fix that cannot apply to the log: not re-simulated (no saving) because
    nothing it changes is in the log, as opposed to a log without the bodies to re-simulate it
    on ("cannot re-simulate", ranked by what its misses lost)."""
    return saved_usd is None and (detail or "").startswith(f"{CANNOT_APPLY}: ")


def not_ranked(rec: Recommendation) -> bool:
    """Whether ``rec`` is listed apart, after the ranked fixes, with no rank: its fix saves
    nothing on the log (:func:`saves_nothing`) or cannot apply to it (:func:`cannot_apply`)."""
    return saves_nothing(rec) or cannot_apply(rec.saved_usd, rec.detail)


def saves_nothing(rec: Recommendation) -> bool:
    """Whether ``rec``'s fix is known to save nothing on this log: re-simulated, it saves $0 or
    less (it recovers none of its misses, or does not pay for what it recovers), and that figure is
    not unknown for want of prices (:attr:`~.losses.Recommendation.saved_unknown`), not even in
    part: where some of its misses are in no dollar figure (``unpriced_requests``) what it saves
    on them is unknown, and it stays ranked among the fixes whose saving is unknown (before, saved
    $0 beside $0.40 lost and 2 unpriced misses set it apart while its detail said "what it saves
    on them is unknown"), unless it recovers none of them (:data:`RECOVERS_NONE`: it saves nothing
    on them either). Such a fix is not ranked among the fixes that save: it is listed apart, with
    the re-simulation's reason (its ``detail``), the same in every view."""
    if rec.saved_usd is None or rec.saved_usd > 0 or rec.saved_unknown:
        return False
    return not rec.unpriced_requests or rec.detail.startswith(RECOVERS_NONE)


#: Fixes that recover the same misses (an entry that idles past its TTL) in different ways: each
#: is re-simulated alone, so their savings are alternatives, never a sum.
ALTERNATIVE_FIXES = frozenset({"ttl-1h", "ttl-5m", "ttl-auto", "keep-alive"})


def _with_alternatives(recs: Sequence[Recommendation]) -> list[Recommendation]:
    """``recs`` with each of :data:`ALTERNATIVE_FIXES`, where another of them is ranked too, saying
    which (by rank) it is an alternative to, and that their dollars do not add up."""
    alternatives = [rec for rec in recs if _fix_name(rec.fix) in ALTERNATIVE_FIXES]
    if len(alternatives) < 2:
        return list(recs)
    out = []
    for rec in recs:
        if rec in alternatives:
            names = ", ".join(f"{other.fix} (#{other.rank})" for other in alternatives if other is not rec)
            said = (f"an alternative to {names}, not in addition: each was re-simulated alone (they may save on "
                    "different lanes and requests): their dollars do not add up")
            rec = msgspec.structs.replace(rec, detail=f"{rec.detail}; {said}" if rec.detail else said)
        out.append(rec)
    return out


#: How the detail of a fix whose re-simulation changed none of its misses opens (and its
#: *dollars* cell reads, :func:`~prefixbench.reports.advice.saves_text`): not "does not pay".
RECOVERS_NONE = "recovers none of its misses"


def _writes_1h(w: WhatIf) -> bool:
    """Whether a request ``w`` changes writes at 1 h in its re-simulation."""
    changes = w.changes
    columns = getattr(changes, "writes_1h", None)  # (a fix's changes held by column: read from them)
    if columns is not None:
        return columns()
    return any(getattr(c, "counterfactual_write_1h", 0) > 0 for c in changes)


def _net_of(fix: str, w: WhatIf) -> str:
    """What a fix's net saving is net of, in the words of what it adds: a TTL fix's write
    premiums (a 1 h write at 2x the input price) where its re-simulation writes at 1 h,
    keep-alive's charged requests; the other fixes add neither, and "net of its write premiums"
    was said of them too (pin-model), and of a TTL plan that writes nothing at 1 h (ttl-auto
    keeping every lane on 5 m, ttl-5m): it adds no write premium."""
    name = _fix_name(fix)
    if name.startswith("ttl-"):
        return " net of its write premiums" if _writes_1h(w) else ""
    if name == "keep-alive":
        return " net of the keep-alive requests it sends"
    return ""


def _recovers_none(fix: str, w: WhatIf, rows: Sequence[AuditRow]) -> bool:
    """Whether the re-simulation of ``fix`` left every request of its misses (``rows``) as
    logged: it would not have recovered them, which is not "not worth it at these prices".
    ``ttl-auto`` is left out: it changes nothing where it picked the logged TTL for every lane
    because the other did not pay, a verdict on the prices."""
    if not rows or _fix_name(fix) == "ttl-auto":
        return False
    changed = {(c.file, c.lane, c.index) for c in w.changes}
    return not any((row.file, row.lane, row.index) in changed for row in rows)


def _credited(keys: set[tuple[str, str, int]], rows: Sequence[AuditRow],
              by_key: dict[tuple[str, str, int], AuditRow]) -> list[AuditRow] | None:
    """The misses a fix's re-simulation recovers (``keys``, :func:`_recovered_keys`), in the
    audit's order, where they are not exactly ``rows`` (the misses its cause points at); None where
    they are, or where it recovers none (its misses stay ``rows``: it is said to recover none of them)."""
    found = [row for key, row in by_key.items() if key in keys]
    if not found or {(r.file, r.lane, r.index) for r in found} == {(r.file, r.lane, r.index) for r in rows}:
        return None
    return found


#: Why a fix's saving on a miss the loss split does not count recoverable stays there.
_CHOICE_WHY = "the log does not say whether the agent or the user made the change"
_OTHER_WHY = "the split classes a miss by its cause, and this fix is not the one its cause points at"


def _on_split_classes(fix: str, w: WhatIf, by_key: dict[tuple[str, str, int], AuditRow],
                      recovered: set[tuple[str, str, int]]) -> str:
    """Which of ``w``'s saving is on misses it recovers (``recovered``, :func:`_recovered_keys`)
    that the loss split counts unknown or unavoidable (a fix of a cause the user may have chosen:
    :data:`_CHOICE_FIXES`), and why."""
    by_class: dict[tuple[str, bool], list[tuple[AuditRow, Decimal]]] = defaultdict(list)
    for c in w.changes:
        row = by_key.get((c.file, c.lane, c.index))
        if ((c.file, c.lane, c.index) in recovered and c.priced and row is not None
                and row.loss_class in ("unknown", "unavoidable")):
            by_class[(row.loss_class, fix in UNKNOWN_FIX.get(row.cause, ()))].append((row, c.saved_usd))
    said = []
    # A part is what the fix saves on those requests (gross); its saving is net of what its other
    # changes cost (a TTL fix's dearer writes elsewhere, keep-alive's requests): where the parts
    # come to more than the saving, they are called gross and the net said beside them, never a
    # part larger than its whole under the same word ($0.4993 "of its saving" beside saves $0.1867).
    # The gross said beside them is the whole gross, every priced change that saves (its other
    # recovered misses too), so that gross - net is what its costs come to: the parts alone left
    # out what it saves elsewhere and understated those costs (a keep-alive's $0.4996 of requests
    # said as $0.3126, its $0.1870 saved on misses the split counts recoverable left out).
    total = usd_sum(u for found in by_class.values() for _, u in found)
    net = w.saved_usd if w.saved_usd is not None else Decimal(0)
    gross = total > net
    whole = usd_sum(c.saved_usd for c in w.changes if c.priced and c.saved_usd > 0)
    for key in sorted(by_class, key=lambda k: (k[0] != "unknown", not k[1])):
        name, chosen = key
        found = by_class[key]
        usd = usd_sum(u for _, u in found)
        why = _CHOICE_WHY if chosen else _OTHER_WHY
        said.append(f"{format_usd(usd)} of its {'gross ' if gross else ''}saving is on {len(found):,} miss(es) the loss "
                    f"split counts {name} ({_causes_text([row for row, _ in found])}): {why}")
    if said and gross:
        rest = whole - total
        said.append(f"gross: {format_usd(whole)} on every request it saves on ("
                    + (f"{format_usd(total)} on the misses above, {format_usd(rest)} on others"
                       if rest > 0 else "all of it on the misses above")
                    + f"), against the {format_usd(net)} it saves net, as "
                    f"{'the keep-alive requests it sends and ' if _fix_name(fix) == 'keep-alive' else ''}its other "
                    f"changes cost {format_usd(whole - net)}")
    return "; ".join(said)


def _knobs(w: WhatIf, rows: Sequence[AuditRow], by_key: dict[tuple[str, str, int], AuditRow],
           files: set[str] | None = None) -> Lifetimes:
    """How the clients of the requests ``w`` changes, and of its misses, pick a cache lifetime
    (``files``: of those files only, one agent's)."""
    from prefixbench.workloads.audit.whatif import lifetime_knobs

    changed = [by_key[key] for c in w.changes if (key := (c.file, c.lane, c.index)) in by_key]
    return lifetime_knobs({(row.provider, row.model) for row in (*rows, *changed) if files is None or row.file in files})


def _knobs_by_agent(w: WhatIf, rows: Sequence[AuditRow], by_key: dict[tuple[str, str, int], AuditRow],
                    formats: dict[str, str]) -> Callable[[str], Lifetimes]:
    """:func:`_knobs` of one agent (log format)'s files, by format."""
    return lambda fmt: _knobs(w, rows, by_key, {file for file, f in formats.items() if f == fmt})


def _misses_changed(w: WhatIf, by_key: dict[tuple[str, str, int], AuditRow]) -> list[AuditRow]:
    """The misses (a cause, tokens lost) among the requests ``w`` changes, in the audit's order."""
    keys = {(c.file, c.lane, c.index) for c in w.changes if c.index >= 0}
    return [row for key, row in by_key.items() if key in keys and row.cause is not None and (row.lost_tokens or 0) > 0]


def _causes_text(rows: Sequence[AuditRow]) -> str:
    """``system-changed x36, unexplained x1`` (most first), of the rows that have a cause."""
    counts = Counter(row.cause for row in rows if row.cause is not None)
    return ", ".join(f"{cause} x{n:,}" for cause, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _inferred(w: WhatIf) -> bool:
    """Whether the fix's saving rests on an inference: a change inferred from the reads, not seen
    (static-system on a log without bodies: :data:`~.whatif.INFERRED` in its detail), or caching
    inferred for calls through a relay whose rules are not known (:data:`~.whatif.RELAYED`): its
    words say "may save", its detail says why."""
    from prefixbench.workloads.audit.whatif import INFERRED, RELAYED  # (imported here, as WhatIf is only for typing above)

    return w.saved_usd is not None and (INFERRED in (w.detail or "") or RELAYED in (w.detail or ""))


def _pattern_of_changes(pattern: str, w: WhatIf, rows: Sequence[AuditRow], lost: Decimal,
                        by_key: dict[tuple[str, str, int], AuditRow],
                        left: Collection[tuple[str, str, int]] = frozenset()) -> str:
    """The pattern of a re-simulated fix, saying where its requests and dollars differ from its
    misses': the requests it changes beyond them (their causes) and, when it saves more than its
    misses lost, where the rest comes from. ``left``: the misses its cause points at that it is
    not credited with (said apart by the caller, so not among "other causes" here)."""
    targeted = {(row.file, row.lane, row.index) for row in rows}
    changes = [c for c in w.changes if c.index >= 0]
    others = [by_key[key] for c in changes if (key := (c.file, c.lane, c.index)) in by_key and key not in targeted
              and key not in left]
    saved = w.saved_usd or Decimal(0)
    saves = "may save" if _inferred(w) else "saves"  # the hedge the fix's dollars carry (reports.whatif.hedged)
    if not rows:
        return (f"no miss the audit found points at this fix: it {saves} on what the {w.requests_changed:,} request(s) it "
                "changes paid (e.g. a cheaper cache write), not on a miss")
    parts = [pattern]
    missed = sum((c.file, c.lane, c.index) in targeted for c in changes)
    if missed < len(rows):
        parts.append(f"the re-simulation changes {missed:,} of these {len(rows):,} misses")
    on_others = usd_sum(c.saved_usd for c in w.changes if (c.file, c.lane, c.index) not in targeted
                        and (c.file, c.lane, c.index) not in left)
    on_left = usd_sum(c.saved_usd for c in w.changes if (c.file, c.lane, c.index) in left)
    on_misses = saved - on_others - on_left
    more = saved - lost
    # A miss of the fix's own cause that it changes without recovering it (not among ``rows``: a
    # TTL fix changes every write of a lane, and the re-simulation read back less than half of
    # it; or the split counts it unknown, a changed message sharing its loss) is not "another
    # cause": said as such, in the words the misses its cause points at are said in (ttl-1h on a
    # Codex home said "another cause (ttl-expired x1)" of its own cause's miss).
    own = {row.cause for row in rows if row.cause is not None}
    same = [row for row in others if row.cause in own and (row.lost_tokens or 0) > 0]
    if same:
        others = [row for row in others if row not in same]
        same_keys = {(row.file, row.lane, row.index) for row in same}
        on_same = usd_sum(c.saved_usd for c in w.changes if c.priced and (c.file, c.lane, c.index) in same_keys)
        on_others -= on_same
        text = (f"it changes {len(same):,} miss(es) of the same cause without recovering them ({_causes_text(same)}: "
                f"{format_usd(usd_sum(row.lost_usd or Decimal(0) for row in same))} lost; it reads back less than half "
                f"of what each lost), {'saving' if on_same >= 0 else 'costing'} {format_usd(abs(on_same))} there")
        if not others and more > 0 and on_misses <= lost:
            text += f": so it {saves} {format_usd(more)} more than its misses lost"
        parts.append(text)
    if others:
        one = len(others) == 1
        missed_others = sum(row.cause is not None for row in others)
        if missed_others == len(others):
            what = (f"{len(others):,} request{'' if one else 's'} the audit put down to "
                    f"{'another cause' if one else 'other causes'} ({_causes_text(others)})")
        elif not missed_others:
            what = f"{len(others):,} request{'' if one else 's'} that did not miss"
        else:
            # A request that did not miss has no cause ("hit" is none): counted apart.
            hits = len(others) - missed_others
            what = f"{len(others):,} request{'' if one else 's'}: " + " and ".join(
                ([f"{missed_others:,} the audit put down to {'another cause' if missed_others == 1 else 'other causes'} "
                  f"({_causes_text(others)})"] if missed_others else [])
                + [f"{hits:,} that did not miss"])
        text = (f"it also changes {what}, "
                f"{'saving' if on_others >= 0 else 'costing'} {format_usd(abs(on_others))} there")
        if more > 0 and on_misses <= lost:
            text += f": so it {saves} {format_usd(more)} more than its misses lost"
        parts.append(text)
    if more > 0 and on_misses > lost:
        # The misses themselves saved more than the audit's loss on them.
        parts.append(f"it {saves} {format_usd(more)} more than its misses lost: the loss counts only the tokens the lane's "
                     f"previous request left readable, and the fix also changes what the rest of each prompt paid to write")
    return "; ".join(parts)


#: Where OpenClaw keeps a pi-format session (``agents/<agentId>/sessions/<id>.jsonl``).
OPENCLAW_SESSIONS = re.compile(r"(?:^|[/\\])agents[/\\][^/\\]+[/\\]sessions[/\\]")


#: A capture's system prompt naming its agent (the first text that matches decides), to the
#: format whose settings apply.
CAPTURED_AGENTS: tuple[tuple[str, str], ...] = (("You are Claude Code", "claude-code"),)


def _captured_agents(requests: Sequence[TraceRequest], formats: dict[str, str]) -> dict[str, str]:
    """Capture files whose bodies' system prompt names the agent that sent them (a claude-trace
    capture is Claude Code's): the agent's format, so that its settings are the ones named."""
    found: dict[str, str] = {}
    for r in requests:
        if r.file in found or r.body is None or formats.get(r.file) != "http-capture":
            continue
        system = r.body.system or " ".join(r.body.system_blocks)
        for text, fmt in CAPTURED_AGENTS:
            if text in system:
                found[r.file] = fmt
                break
    return found


#: How a fix that is not to be made names the change its re-simulation tried (an instruction
#: after "leave it as it is" read as one to follow).
RESIMULATED_CHANGE = "the change re-simulated was"


def _rank_key(rec: Recommendation) -> tuple[int, Decimal, str]:
    """Fixes that save money by what they save; then those whose saving is unknown, and those
    the log cannot re-simulate (no bodies), by what their misses lost; last those that save
    nothing or cannot apply (not ranked: :func:`not_ranked`), by what their misses lost."""
    if rec.saved_usd is not None and rec.saved_usd > 0:
        return 0, -rec.saved_usd, rec.fix
    if not_ranked(rec):
        return 3, -rec.lost_usd, rec.fix
    return (1 if rec.saved_usd is not None else 2), -rec.lost_usd, rec.fix


def _recommendation(
    fix: str,
    w: WhatIf,
    rows: Sequence[AuditRow],
    changed: Sequence[tuple[str, str]],
    formats: dict[str, str],
    saved: Decimal | None,
    lost: Decimal,
    detail: str,
    unpriced: int = 0,
    knobs: Lifetimes = (True, frozenset()),
    agent_knobs: Callable[[str], Lifetimes] | None = None,
    *,
    recovers_none: bool = False,
    causes: Counter[str] | None = None,
    sessions_of: Mapping[str, str] | None = None,
    versions: Mapping[str, Collection[str]] | None = None,
) -> Recommendation:
    if causes is None:
        causes = Counter(row.cause for row in rows if row.cause is not None)
    lanes = set(changed) or {(row.file, row.lane) for row in rows}
    # The agent's sessions: a file is its own but where it is part of another's (``sessions_of``:
    # a Claude Code subagent's transcript is its session's), so a session's subagents are one.
    sessions = {(sessions_of or {}).get(file, file) for file, _ in lanes}
    fmt_counts = Counter(formats.get(file, "") for file, _ in lanes)
    # The agents by their lanes, most first, ties to the first name: never the set's (hash) order.
    fmts = [f for f, _ in sorted(fmt_counts.items(), key=lambda item: (-item[1], item[0]))] or [""]
    name = _fix_name(fix)
    agent, change, setting, source = _agent_advice(name, fmts, knobs, agent_knobs, versions)
    if recovers_none:  # (the re-simulation changed none of its misses: no price verdict)
        change = f"would not have recovered these misses, re-simulated, so leave it as it is; {RESIMULATED_CHANGE}: {change}"
    elif saved is not None and saved <= 0 and not (unpriced and not lost):  # (none priced: unknown, not "not worth it")
        change = f"not worth it at these prices, so leave it as it is; {RESIMULATED_CHANGE}: {change}"
    pattern = ", ".join(f"{cause} x{n:,}" for cause, n in sorted(causes.items(), key=lambda item: (-item[1], item[0])))
    if lost > 0:
        pattern = (pattern + f": {format_usd(lost)} lost" if pattern else "")
    if pattern and (unknown := sum(row.provider == UNKNOWN.name and row.cause is not None for row in rows)):
        # Their causes rest on default rules (a relay's, a server prefixbench has no rules for):
        # said where the fix is, not only in each row's detail.
        pattern += (f"; {unknown:,} of these misses {'is' if unknown == 1 else 'are'} on a provider the audit has no "
                    "rules for (unknown): read under default rules, not the provider's own")
    return Recommendation(
        rank=0,
        fix=fix,
        pattern=pattern or f"{w.requests_changed} request(s) the fix changes",
        causes=tuple(sorted(causes)),
        requests=w.requests_changed if saved is not None else len(rows),
        lanes=len(lanes),
        sessions=len(sessions),
        agent=agent,
        change=change,
        setting=setting,
        source=source,
        saved_usd=saved,
        lost_usd=lost,
        assumption=w.assumption,
        detail=detail,
        unpriced_requests=unpriced,
        inferred=saved is not None and _inferred(w),  # (no saving: nothing to hedge, and the fix not asked)
    )


def _agent_advice(name: str, fmts: Sequence[str], knobs: Lifetimes, agent_knobs: Callable[[str], Lifetimes] | None,
                  versions: Mapping[str, Collection[str]] | None = None) -> tuple[str, str, str | None, str | None]:
    """A fix's agent, change, setting and source. One agent: its own words (its documented
    setting where :data:`AGENT_SETTINGS` has one). Lanes of several agents: each agent's change,
    setting and source, labelled with its name, most lanes first, so that no agent is shown
    another's setting (Claude Code's ENABLE_PROMPT_CACHING_1H for a Codex lane). A setting an
    agent reads from a release on says so where the log's ``versions`` of that agent are all older
    (a user would set what their version ignores), or unknown (:func:`since_said`); ``versions``
    None (no log's versions to weigh): the releases are not said."""
    def one(fmt: str, lifetimes: Lifetimes) -> tuple[str, str, str | None, str | None]:
        found = AGENT_SETTINGS.get((fmt, name))
        if (fmt, name) in PER_WRITE_SETTINGS:
            found = (msgspec.structs.replace(found, change=_ttl_change(name, lifetimes))
                     if found is not None and lifetimes[0] else None)
        # (an entry with no change of its own: a source only, the change the provider's)
        change = found.change if found is not None and found.change else _ttl_change(name, lifetimes)
        agent = AGENTS.get(fmt, fmt or "the agent")
        setting = found.setting if found is not None and found.setting else no_setting(agent)
        if found is not None and found.setting and found.since and versions is not None:
            said = since_said(agent, found.since, versions.get(fmt, ()))
            setting = f"{setting}; {said}" if said else setting
        return (agent, change, setting, found.source if found is not None else NO_SETTING_SOURCES.get((fmt, name)))

    if len(fmts) == 1:
        return one(fmts[0], knobs)
    each = [one(fmt, agent_knobs(fmt) if agent_knobs is not None else knobs) for fmt in fmts]
    agent = ", ".join(a for a, _, _, _ in each)
    # (an agent's none-line names it: the same words for every agent where none names a setting)
    if len({(c, st if names_setting(st) else None, src) for _, c, st, src in each}) == 1:
        # The same words for every agent (keep-alive): said once.
        setting = each[0][2] if names_setting(each[0][2]) else no_setting(agent)
        return agent, each[0][1], setting, each[0][3]
    change = "; ".join(f"{a}: {c}" for a, c, _, _ in each)
    # An agent with none: its change says what to do (a TTL fix's, what to ask the provider for).
    what = "what to ask for" if name.startswith("ttl-") else "what to do"
    setting = (no_setting(agent) if not any(names_setting(s) for _, _, s, _ in each) else
               "; ".join(f"{a}: {s if names_setting(s) else f'{NONE_DOCUMENTED} (the change says {what})'}"
                         for a, _, s, _ in each))
    sources = [f"{a}: {src}" for a, _, _, src in each if src]
    return agent, change, setting, "; ".join(sources) or None
