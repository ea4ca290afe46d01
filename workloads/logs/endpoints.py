"""What the audit learns per endpoint: how its OpenAI-shaped prompt count holds the cached part,
and whether it is a known gateway.

By the spec, chat completions' ``usage.prompt_tokens`` and the Responses API's
``usage.input_tokens`` include ``cached_tokens``. Some gateways send them without it (Charm's
Hyper, ``hyper.charm.land``, on glm-5.1 and gpt-oss-120b in 2026-05 to 07: Crush's recorded
agent tests). A record whose cached tokens exceed its prompt count can only be read one way:
the usage readers read it as prompt count + cached and mark it
(:data:`~prefixbench.simulator.usage.PROMPT_EXCLUSIVE`). A record at or below fits either
reading, so it is read as its endpoint's others say: where one record of the endpoint (host and
path, where the log names it, else its file and provider) can only be exclusive, every record of it that reports
cached tokens is read exclusive too (in a file, those of providers whose wire counts are a
subset: a file may mix shapes); where none can, the spec's inclusive reading stands and
nothing is said.

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
    """``requests`` with each inclusive-read record of an endpoint that has an exclusive one read
    exclusive too (the same list, changed in place, where there is such an endpoint)."""
    decided = {_group(r) for r in requests if r.usage is not None and r.usage.prompt_count == PROMPT_EXCLUSIVE}
    if not decided:
        return requests
    for i, r in enumerate(requests):
        u = r.usage
        # The spec's reading of a record with cached tokens; in a file, of a provider whose wire
        # counts are a subset (an endpoint's path fixes the wire shape; a file may mix shapes).
        if u is None or u.prompt_count or not u.cache_read or _group(r) not in decided:
            continue
        if r.endpoint or not rules_for(r.provider).is_additive:
            requests[i] = replace(r, usage=replace(u, uncached=u.uncached + u.cache_read, prompt_count=PROMPT_EXCLUSIVE_BY_PEERS))
    return requests


def notes(requests: Sequence[TraceRequest]) -> tuple[str, ...]:
    """Per endpoint read exclusive: which convention, and the records that decided it; per known
    gateway, its calls."""
    proved: dict[str, int] = defaultdict(int)
    alike: dict[str, int] = defaultdict(int)
    for r in requests:
        how = r.usage.prompt_count if r.usage is not None else ""
        if how == PROMPT_EXCLUSIVE:
            proved[_group(r)] += 1
        elif how == PROMPT_EXCLUSIVE_BY_PEERS:
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
        for where, n in sorted(proved.items())
    )
