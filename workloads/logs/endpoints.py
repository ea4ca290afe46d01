"""What the audit learns per endpoint: how its OpenAI-shaped prompt count holds the cached part,
and whether it is a known gateway.

By the spec, chat completions' ``usage.prompt_tokens`` and the Responses API's
``usage.input_tokens`` include ``cached_tokens``. Some gateways send them without it (Charm's
Hyper, ``hyper.charm.land``, on glm-5.1 and gpt-oss-120b in 2026-05 to 07: Crush's recorded
agent tests). A record whose cached tokens exceed its prompt count can only be read one way:
the usage readers read it as prompt count + cached and mark it
(:data:`~prefixbench.simulator.usage.PROMPT_EXCLUSIVE`). A record at or below fits either
reading, so it is read as its endpoint's others say: where the records of the endpoint (host and
path, where the log names it, else its file and provider) that can only be exclusive are half or
more of those that report cached tokens, every record of it that reports
cached tokens is read exclusive too (in a file, those of providers whose wire counts are a
subset: a file may mix shapes); where none can, the spec's inclusive reading stands and
nothing is said. A minority does not decide: an endpoint whose prompt counts leave the cached
part out shows it on most records that read (an agent's call adds little to a long cached
prompt: Hyper's, 38 of 39), while one odd record among records that fit the spec (ISO-Bench's
gpt-4o Trae run of 2025-10-08: 1 of 49) is read as it only can be and the others as the spec
says; a note says so.

A call through a known gateway (:data:`~prefixbench.simulator.providers.GATEWAYS`) is read with
its model's provider's rules but without the keep-the-answer rule of that provider's own
endpoint (the capture reader keeps no reply for it); the audit says how many calls that was.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from msgspec.structs import replace

from prefixbench.simulator.providers import GATEWAYS, rules_for
from prefixbench.simulator.usage import PROMPT_EXCLUSIVE, PROMPT_EXCLUSIVE_BY_PEERS
from prefixbench.workloads.logs.trace import TraceRequest


def _group(r: TraceRequest) -> str:
    """What a request's convention is decided over, as the notes name it: its endpoint (host and
    path), else its file and provider."""
    return r.endpoint or f"{r.file} ({r.provider})"


def settle(requests: list[TraceRequest]) -> list[TraceRequest]:
    """``requests`` with each record that fits either reading read exclusive, at an endpoint whose
    records that can only be exclusive are half or more of those that report cached tokens (a
    minority does not decide: :func:`notes` says so); the same list, changed in place, where
    there is such an endpoint."""
    proved, fits = _counts(requests)
    decided = {where for where, n in proved.items() if n >= fits.get(where, 0)}
    if not decided:
        return requests
    for i, r in enumerate(requests):
        u = r.usage
        if u is not None and _fits_either(r) and _group(r) in decided:
            requests[i] = replace(r, usage=replace(u, uncached=u.uncached + u.cache_read, prompt_count=PROMPT_EXCLUSIVE_BY_PEERS))
    return requests


def _fits_either(r: TraceRequest) -> bool:
    """Whether ``r`` is read as the spec says though it would fit the exclusive reading too: a
    record with cached tokens at or below its count; in a file, of a provider whose wire counts
    are a subset (an endpoint's path fixes the wire shape; a file may mix shapes)."""
    u = r.usage
    return (u is not None and not u.prompt_count and u.cache_read > 0
            and (bool(r.endpoint) or not rules_for(r.provider).is_additive))


def _counts(requests: Sequence[TraceRequest]) -> tuple[dict[str, int], dict[str, int]]:
    """Per group: the records that can only be exclusive, and those read as the spec says that
    fit either reading."""
    proved: dict[str, int] = defaultdict(int)
    fits: dict[str, int] = defaultdict(int)
    for r in requests:
        if r.usage is not None and r.usage.prompt_count == PROMPT_EXCLUSIVE:
            proved[_group(r)] += 1
        elif _fits_either(r):
            fits[_group(r)] += 1
    return proved, fits


def notes(requests: Sequence[TraceRequest]) -> tuple[str, ...]:
    """Per endpoint read exclusive: which convention, and the records that decided it (or, where
    a minority can only be exclusive, that the others kept the spec's reading); per known
    gateway, its calls."""
    proved, fits = _counts(requests)
    alike: dict[str, int] = defaultdict(int)
    for r in requests:
        if r.usage is not None and r.usage.prompt_count == PROMPT_EXCLUSIVE_BY_PEERS:
            alike[_group(r)] += 1
    through: dict[str, int] = defaultdict(int)
    for r in requests:
        host = r.endpoint.partition("/")[0]
        if host in GATEWAYS:
            through[host] += 1
    gateways = tuple(
        f"{n} call(s) through {host} ({GATEWAYS[host]}), a gateway: read with their model's provider's rules, but its "
        "cache is not taken to keep the answer after the prompt as the provider's own endpoint may (its recorded "
        "traffic mostly reads the previous prompt alone)"
        for host, n in sorted(through.items())
    )
    return gateways + tuple(
        f"{where}: the OpenAI-shaped prompt count (prompt_tokens / input_tokens) excludes the cached tokens, "
        f"against the spec ({n} of {n + alike[where]} responses that report cached tokens report more than the "
        "prompt count, which only that reading fits): each is read as prompt count + cached tokens"
        if not fits.get(where) else
        f"{where}: {n} of {n + fits[where]} responses that report cached tokens report more than the prompt count "
        "(prompt_tokens / input_tokens), read as prompt count + cached tokens (the only reading they fit); "
        f"the other {fits[where]} fit the spec's reading (the count includes the cached tokens) and are read so: "
        "a minority of records does not decide the endpoint's reading"
        for where, n in sorted(proved.items())
    )
