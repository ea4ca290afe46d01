"""Claude Code's billing header: the ``x-anthropic-billing-header`` text block at the head of the
system prompt, and whether a server's prefix cache keys on its ``cch`` value.

Claude Code (2.1.36 on, by musistudio/claude-code-router#1220; unless
``CLAUDE_CODE_ATTRIBUTION_HEADER=0``) sends, as the first ``system`` block of every Messages
request, a text block of its own::

    x-anthropic-billing-header: cc_version=2.1.60.4ab; cc_entrypoint=cli; cch=3fa01;

``cc_version`` is the client version and a 3-hex suffix hashed from the conversation's first user
message (stable inside a conversation, another value in each subagent or side call);
``cc_entrypoint`` names the front end (``cli``, ``sdk-cli``, ``claude-vscode`` ...); ``cch`` is
five hex digits the client computes from the request body itself (a hash of the body with the
value zeroed), so it changes on every request whose body changed. What was measured:

* The public capture github.com/wang0618/llm-trace-sample-data@0ebb03df, ``claude-code.jsonl``
  (Claude Code 2.1.49 behind Volcengine Ark's Anthropic-compatible endpoint): 49 bodies carry
  the block as ``system[0]``, 49 distinct ``cch`` values, one ``cc_version`` suffix per
  conversation; its 28 GLM calls read nothing from cache.
* Third-party servers that cache by prefix key on it: anthropics/claude-code#68900 (Fireworks,
  0% hits), sgl-project/sglang#21064, waybarrios/vllm-mlx#277, ollama/ollama#14918,
  ggml-org/llama.cpp#21793 (mirrored as ngxson/llama.cpp#98), farion1231/cc-switch#2350;
  each proposes or merges a fix that strips, freezes or disables the block. The documented switch is ``CLAUDE_CODE_ATTRIBUTION_HEADER=0``
  (it drops the block; farion1231/cc-switch#2842, lmstudio-ai/docs#227); from Claude Code
  2.1.181 the block is stable for a conversation's lifetime behind a custom base URL
  (code.claude.com/docs/en/llm-gateway-protocol, "System prompt attribution block").
* Anthropic's own API: no public capture *file* of first-party traffic with bodies and usage
  was found. A gateway that logs both reports it (github.com/BYK/loreai#873, measured in
  production): real turns hit 92-100% although ``cch`` changes every turn, and a body replayed
  with the value turned into a non-hex placeholder read 0; its analytics had to zero ``cch``
  before comparing bodies, upstream untouched (#187), as this audit did not. Claude Code's own
  transcripts of 2.1.152 to 2.1.219 read 96.7% to 99.2% of their input from cache
  (:data:`TRANSCRIPT_EVIDENCE`; a cache keyed on a value that changes every request would read
  at most the tools before it and write the rest again each time). Another ``cc_version``
  suffix (another conversation) is kept as a change: an A/B test shows it missing the system
  prompt there (github.com/motiful/cc-cache-audit; loreai#873 says the server strips it too, so
  the sources disagree). So the assumption: Anthropic's cache ignores the ``cch`` value and keys
  on the rest of the block. It is an option (``--billing-header anthropic=keyed`` keys on it),
  said in the audit's notes.

``ignored`` here means: the value of ``cch`` is replaced by as many zeros before the body is
keyed or compared (the byte count, hence the token estimate, is unchanged); ``keyed``: the body
as sent.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias

from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import PROVIDERS, UNKNOWN, rules_for
from prefixbench.simulator.wire import Request
from prefixbench.workloads.logs.trace import TraceRequest

Mode: TypeAlias = Literal["ignored", "keyed"]
MODES: tuple[Mode, ...] = ("ignored", "keyed")

PREFIX = "x-anthropic-billing-header:"
#: The ``cch`` field of a billing header line: its value is group 1.
_CCH = re.compile(r"\bcch=([0-9A-Za-z]+);")
#: The documented switch that drops the block (and the release that made it stable behind a
#: custom base URL).
SWITCH = "CLAUDE_CODE_ATTRIBUTION_HEADER=0"
STABLE_FROM = "2.1.181"
GATEWAY_DOC = "https://code.claude.com/docs/en/llm-gateway-protocol"
THIRD_PARTY_EVIDENCE = "https://github.com/anthropics/claude-code/issues/68900"
FIRST_PARTY_EVIDENCE = "https://github.com/BYK/loreai/pull/873"

#: The reads that decide Anthropic's default (tests/realdata/test_public_sessions_realdata.py:
#: Aley3567/cutesticky@6d5acb1a, allym-4/test@cf475d46, shastrysamarth/01-campaign-audit@58628b7e).
TRANSCRIPT_EVIDENCE = ("three public Claude Code transcripts (2.1.152, 2.1.158, 2.1.219, on Anthropic's API) read 96.7%, "
                       "98.5% and 99.2% of their input from cache")


def default_mode(provider: str) -> Mode:
    """The default for ``provider``, its rules' ``billing_cch``: ``ignored`` on Anthropic's API
    (the reads Claude Code's transcripts report), ``keyed`` on every other server (as the issues
    above measured on Fireworks, SGLang, vllm-mlx, Ollama, llama.cpp and Volcengine Ark)."""
    return rules_for(provider).billing_cch


def known_providers() -> tuple[str, ...]:
    return tuple(sorted({*PROVIDERS, UNKNOWN.name}))


def parse_modes(text: str | None) -> dict[str, Mode]:
    """``--billing-header anthropic=keyed,zai=ignored`` as {provider: mode}; an empty value is
    bad input, as ``--read-step``'s is (it names no provider)."""
    if text is None:
        return {}
    modes: dict[str, Mode] = {}
    for item in text.split(","):
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not name or value not in MODES:
            raise UserError(f"--billing-header {text}: {item.strip()!r} is not PROVIDER=ignored or PROVIDER=keyed "
                            "(e.g. anthropic=keyed)")
        if name not in known_providers():
            raise UserError(f"--billing-header {text}: unknown provider {name!r} (one of: {', '.join(known_providers())})")
        if name in modes:
            raise UserError(f"--billing-header {text}: {name} is named twice")
        modes[name] = value  # type: ignore[assignment]
    return modes


def billing_cch(body: Request) -> str | None:
    """The ``cch`` value of the billing header block heading ``body``'s system prompt, or None."""
    first = body.system_blocks[0] if body.system_blocks else body.system
    if not first.startswith(PREFIX):
        return None
    line = first.split("\n", 1)[0]
    found = _CCH.search(line)
    return None if found is None else found.group(1)


def _zeroed(text: str) -> str:
    line, sep, rest = text.partition("\n")
    return _CCH.sub(lambda m: f"cch={'0' * len(m.group(1))};", line, count=1) + sep + rest


def without_cch(body: Request) -> Request:
    """``body`` with its billing header's ``cch`` value zeroed (same length); itself when none."""
    cch = billing_cch(body)
    if cch is None or set(cch) == {"0"}:
        return body
    if body.system_blocks:
        return replace(body, system_blocks=(_zeroed(body.system_blocks[0]), *body.system_blocks[1:]))
    return replace(body, system=_zeroed(body.system))


def in_cch(data: bytes, offset: int) -> bool:
    """Whether byte ``offset`` of a rendered system unit falls inside a billing header's ``cch`` value."""
    head = data.rfind(PREFIX.encode(), 0, offset + 1)
    if head < 0:
        return False
    at = data.find(b"cch=", head, offset + 1)
    if at < 0 or data.find(b"\\n", head, at) >= 0:
        return False
    end = data.find(b";", at)
    return at + 4 <= offset < (end if end >= 0 else len(data))


def assume_billing_headers(
    requests: Sequence[TraceRequest], modes: Mapping[str, Mode] | None = None,
) -> tuple[list[TraceRequest], tuple[str, ...]]:
    """The requests with the ``cch`` of their billing header zeroed where their provider's cache
    ignores it (``modes`` over :func:`default_mode`), and the notes that say so: the assumption and its
    evidence per provider whose requests it touched, and for each provider that keys on it and
    whose lanes sent another ``cch`` from one request to the next, the switch that stops it."""
    modes = dict(modes or {})
    out: list[TraceRequest] = []
    zeroed: Counter[str] = Counter()
    changing: Counter[str] = Counter()
    carried: Counter[str] = Counter()  # requests that carry the block, per provider
    last: dict[tuple[str, str], str] = {}
    for r in requests:
        body = r.body
        cch = None if body is None else billing_cch(body)
        if cch is None or body is None:
            out.append(r)
            continue
        carried[r.provider] += 1
        lane = (r.file, r.lane)
        if last.get(lane) not in (None, cch):
            changing[r.provider] += 1
        last[lane] = cch
        mode = modes.get(r.provider, default_mode(r.provider))
        if mode == "ignored":
            stable = without_cch(body)
            if stable is not body:
                zeroed[r.provider] += 1
                r = replace(r, body=stable)
        out.append(r)
    notes = []
    for name in sorted(zeroed):
        asked = name in modes
        notes.append(
            f"assumed: {name}'s prompt cache ignores the cch value of Claude Code's billing header block "
            f"(x-anthropic-billing-header, system[0]) and keys on the rest of it: {zeroed[name]:,} request(s) "
            "compared and replayed with it zeroed"
            + (" (--billing-header asked)" if asked else
               f"; evidence: {TRANSCRIPT_EVIDENCE} although cch changes on every request, and a gateway logging "
               f"bodies and usage measured 92-100% hits through it ({FIRST_PARTY_EVIDENCE}); no public capture file "
               "decides it; --billing-header anthropic=keyed keys on it")
        )
    for name in sorted(changing):
        if modes.get(name, default_mode(name)) == "ignored":
            continue
        notes.append(
            f"Claude Code's per-request billing header breaks this server's prefix cache ({name}: {changing[name]:,} "
            f"request(s) sent another cch than their lane's previous one in system[0]), and this server keys on it (as measured in "
            f"{THIRD_PARTY_EVIDENCE}); set {SWITCH} (or run Claude Code {STABLE_FROM}+, whose block is stable for a "
            f"conversation behind a custom base URL: {GATEWAY_DOC}); --billing-header {name}=ignored if this server "
            "strips it"
        )
    # A provider --billing-header names whose requests carry no such block: said, as --read-step
    # says of a provider with no request, not left silent (the option changed nothing).
    for name in sorted(modes):
        if not carried[name]:
            notes.append(f"--billing-header {name}={modes[name]}: no request of {name} in these logs carries Claude Code's "
                         "billing header block (x-anthropic-billing-header in system[0], with request bodies), nothing changed")
    return out, tuple(notes)
