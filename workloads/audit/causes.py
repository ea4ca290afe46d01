"""The closed set of miss causes and their evidence levels (the exact body diff is
:mod:`prefixbench.workloads.logs.bodydiff`).

Every miss or partial hit gets exactly one cause from :data:`CAUSES`, decided by the strongest
evidence the log offers (:data:`EVIDENCE`, strongest first):

1. ``diagnostic``: the provider's own cache diagnostic (Anthropic's labels);
2. ``body-diff``: the request bodies of the call and of the lane's previous call differ at an
   exact place (envelope field, tools, system, message k block b, byte), shown with an excerpt;
3. ``log``: inferred from what the log records (timestamps, events, usage);
4. ``position``: a transcript without bodies: where the cached prefix ended on the logged
   history (which message, about which token) and the likely change the log shows there
   (:mod:`prefixbench.workloads.audit.locate`);
5. ``none``: nothing decides it (cause ``unexplained``, with the reason the log cannot tell).

Anthropic's diagnostic labels are used where they apply (``model-changed``,
``system-changed``, ``tools-changed``, ``messages-changed``, ``previous-message-not-found``),
so predicted and server-reported causes can be scored against each other.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Every cause a request can carry, with what it means (docs/audit.md and --help list these).
CAUSES: dict[str, str] = {
    "cold-start": "first use of a prefix nobody had cached yet: unavoidable",
    "concurrent-write": "sent while the entry it needed was still being written (parallel starts)",
    "ttl-expired": "idle longer than the entry's TTL since it was last used (the audit names the lifetimes of the log's providers)",
    "model-changed": "another model: nothing cached under the old one is readable",
    "model-chosen": "another model the user picked, as the log records (a /model logged before it, Gemini CLI's fallback "
    "kept on a quota error): a choice, nothing cached under the old model is readable",
    "effort-changed": "new request family: reasoning effort / thinking setting changed",
    "system-changed": "the system prompt changed",
    "tools-changed": "the tool definitions changed",
    "messages-changed": "an earlier message changed (or the read stopped at the head)",
    "previous-message-not-found": "the provider could not find the previous message (diagnostic)",
    "compaction": "the agent compacted its context: a new conversation after the head",
    "compaction-miss": "a compaction call that did not replay the cached prefix of the conversation it summarizes: "
    "it paid as writes what a cache-aware compaction reads",
    "resume": "a resumed or forked session re-sent its history",
    "below-minimum": "prefix shorter than the model's minimum cacheable length",
    "breakpoint-placement": "no breakpoint reached the cached entry: the request carries no cache_control, "
    "or the entry was beyond the breakpoint's 20-block lookback",
    "provider-best-effort": "the provider missed on its own (routing to another server or upstream, best-effort caches): not the agent's doing",
    "unexplained": "nothing in the log explains it (the detail says why the log cannot tell)",
}


def cause_meaning(cause: str, providers: Iterable[str] = ()) -> str:
    """What ``cause`` means in an audit of calls to ``providers``: ttl-expired names the
    lifetimes each of them offers, from its rules (another cause: :data:`CAUSES`' words)."""
    if cause != "ttl-expired":
        return CAUSES.get(cause, "")
    from prefixbench.simulator.providers import PROVIDERS

    lifetimes = [f"{name}: {words}" for name in sorted(set(providers))
                 if name in PROVIDERS and (words := PROVIDERS[name].ttl_words())]
    if not lifetimes:
        return "idle longer than the entry's TTL since it was last used"
    return f"idle longer than the entry's TTL since it was last used ({'; '.join(lifetimes)})"


EVIDENCE: tuple[str, ...] = ("diagnostic", "body-diff", "log", "position", "none")
#: Anthropic's diagnostic labels -> our causes.
DIAGNOSTIC_CAUSES: dict[str, str] = {
    "model_changed": "model-changed",
    "system_changed": "system-changed",
    "tools_changed": "tools-changed",
    "messages_changed": "messages-changed",
    "previous_message_not_found": "previous-message-not-found",
    # OpenAI's prompt_cache_diagnostics (Responses API, GPT-5.6 on): a cache_miss's reason, or
    # comparison_response_not_found. Settings that start a new request family map to it.
    "input_changed": "messages-changed",
    "context_compacted": "compaction",
    "comparison_response_not_found": "previous-message-not-found",
    "reasoning_effort_changed": "effort-changed",
    "prompt_cache_key_changed": "effort-changed",
    "text_format_changed": "effort-changed",
    "verbosity_changed": "effort-changed",
    "service_tier_changed": "effort-changed",
}

#: How the audit's own cause for a miss (inferred without the server's reason) scores against the
#: server's reason, in the agreement table (docs/audit.md, "Provider diagnostics"):
#:
#: * ``agrees``: the reason maps onto the audit's cause (:data:`DIAGNOSTIC_CAUSES`), or onto the
#:   cause the audit's refines (:data:`SAME_CAUSE`: a model change the log shows the user chose);
#: * ``names-more``: both hold, and the audit's says more (:data:`NARROWER`: why the previous
#:   message was not found, why the messages changed), or the server named no cause
#:   (``unavailable``) and the audit's is the only one;
#: * ``disagrees``: the audit names another cause than the server's;
#: * ``no-miss``: the server labelled a call the audit finds no miss in (it read what it expected);
#: * ``unscored``: a label this audit does not know (no cause to compare with).
VERDICTS: tuple[str, ...] = ("agrees", "names-more", "disagrees", "no-miss", "unscored")
#: Causes the audit names more precisely than a server's label and the label's cause they
#: refine, counted as the same cause (a model change the log shows the user made is still one).
SAME_CAUSE: dict[str, str] = {"model-chosen": "model-changed"}
#: For a cause a server's reason maps to, the audit causes that give a reason for it the server
#: does not: an entry not found because it had expired, was still being written, or never was;
#: messages that changed because the agent compacted its context.
NARROWER: dict[str, frozenset[str]] = {
    "previous-message-not-found": frozenset({"ttl-expired", "concurrent-write", "cold-start"}),
    "messages-changed": frozenset({"compaction", "compaction-miss"}),
}
#: The server's label for a miss it has no reason for.
NO_REASON = "unavailable"
#: What the agreement table writes as the audit's cause of a call it finds no miss in.
NO_MISS = "no miss"


def verdict(server_reason: str, audit_cause: str | None) -> str:
    """How ``audit_cause`` (None: the audit finds no miss) scores against ``server_reason``: one
    of :data:`VERDICTS`."""
    if audit_cause is None or audit_cause == NO_MISS:
        return "no-miss"
    if audit_cause == "unexplained":
        # The audit names no cause of its own: nothing to hold against the server's.
        return "unscored"
    if server_reason == NO_REASON:
        return "names-more"
    server = DIAGNOSTIC_CAUSES.get(server_reason)
    if server is None:
        return "unscored"
    if server in (audit_cause, SAME_CAUSE.get(audit_cause)):
        return "agrees"
    if audit_cause in NARROWER.get(server, ()):
        return "names-more"
    return "disagrees"


def divergence_cause(
    divergence: str, *, first: bool, family: str, family_seen: bool, earlier_families: tuple[str, ...], rewrites: str, purpose: str,
    extends: bool = False,
) -> str:
    """The cause of a run's divergence, for a sweep tooltip: ``cause: why`` beside ``tools @ byte 0``.

    The run's reference cache keys on the request family, so a divergence at byte 0 of a family
    nobody sent before is a new family (or the run's first request), not changed tools.

    Args:
        divergence: where the first new byte is (``tools @ byte 0``, ``message 12 block 1 @ byte 48213``).
        first: the run's first request.
        family: the request's family settings in words (``reasoning_effort max``).
        family_seen: an earlier request of the run had the same family.
        earlier_families: the families of the earlier requests, in words.
        rewrites: the durable rewrites the agent landed since the previous request (``checkpoint|prune``).
        purpose: ``conversation`` or ``compaction``.
        extends: the request is a byte extension of the previous conversation request (what
            diverged is only its new content: no miss).
    """
    if extends:
        return "no miss: it extends the previous request, so only its new content starts here"
    if first:
        return f"cold-start: {CAUSES['cold-start']}"
    if not family_seen:
        before = ", ".join(earlier_families[-2:]) or "default"
        return f"effort-changed: the first request with {family or 'default settings'} (earlier: {before}): a new request family reads nothing the others cached"
    if divergence.startswith("tools"):
        return f"tools-changed: {CAUSES['tools-changed']}"
    if divergence.startswith("system"):
        return f"system-changed: {CAUSES['system-changed']}"
    if rewrites:
        landed = ", ".join(dict.fromkeys(rewrites.split("|")))
        return f"messages-changed: the agent rewrote its history since the previous request ({landed})"
    if purpose == "compaction":
        return "compaction: the summary call's messages part from the conversation's here"
    return f"messages-changed: {CAUSES['messages-changed']}"
