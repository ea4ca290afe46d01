"""Read grids learned from a log's own reads (OpenAI through Codex, measured).

OpenAI documents reads in 128-token steps from 1,024 tokens. The Codex rollouts of 2026-04 on
(Codex 0.122 to 0.144) read on a coarser grid that starts elsewhere: all 187 reads of gpt-5.4 and
gpt-5.5 in nine sessions of nine users are ``384 + k x 512`` tokens, and all 173 of
gpt-5.6-sol and gpt-5.6-luna in one session ``768 + k x 1,024``; the earlier ones (Codex 0.58,
0.114, 0.118 alpha: 60 reads) are on no such grid. The same sessions never read into the
previous response (2 of 350 follow-ups read past the previous prompt; before 0.122, 31 of 60),
so on a learned grid the chain model keeps no response after its prompt (OpenAI's
``caches_output``). No page documents it, and the version,
the model and the day each change it, so no fixed rule says where it holds: the reads of a log
do. A read on the 128-token grid would sit on one point of a ``s``-token grid by chance with
odds ``128 / s``; where every read of a (provider, model, agent version) lies on one such grid
and that many distinct reads sharing it by chance is less likely than 1 in 200
(:data:`CHANCE`), the reads of those requests are predicted on that grid: the last point at or
below the prefix they share (a read 384 tokens past a point still counts as the point).

Only body-less requests (the chain model's) are learned and changed, only those of the
providers in :data:`PROVIDERS`, and never a request whose step an endpoint, a date or
``--read-step`` set.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import msgspec

from prefixbench.simulator.providers import rules_for
from prefixbench.workloads.logs.trace import TraceRequest

#: Providers whose reads are checked for a coarser grid (where one was measured).
PROVIDERS = frozenset({"openai"})
#: Coarser steps tried, as multiples of the provider's step, largest first.
MULTIPLES = (16, 8, 4, 2)
#: The most likely the shared grid may be by chance: ``(step / grid) ** (distinct reads - 1)``.
CHANCE = 1 / 200


class Grid(msgspec.Struct, frozen=True):
    """``offset + k x step`` tokens: the reads of one (provider, model, agent version)."""

    provider: str
    model: str
    agent_version: str | None
    step: int
    #: Where the grid starts (1 to ``step`` tokens: a grid through 0 starts at ``step``, so a
    #: request carrying one is known by its offset).
    offset: int
    #: The reported reads (at or above the read minimum) that lie on it, and how many differ.
    reads: int
    distinct: int


def _key(r: TraceRequest) -> tuple[str, str, str | None]:
    return (r.provider, r.model, r.agent_version)


def learn(requests: Sequence[TraceRequest]) -> list[Grid]:
    """The grids the reported reads show (see the module doc), in first-seen order."""
    reads: dict[tuple[str, str, str | None], list[int]] = defaultdict(list)
    for r in requests:
        if r.provider not in PROVIDERS or r.body is not None or r.read_step or r.usage is None or not r.usage.cache_reported:
            continue
        rules = rules_for(r.provider)
        if r.usage.cache_read >= max(rules.min_tokens, 1):
            reads[_key(r)].append(r.usage.cache_read)
    grids = []
    for key, seen in reads.items():
        base = rules_for(key[0]).read_step(key[1])
        distinct = len(set(seen))
        for multiple in MULTIPLES:
            step = base * multiple
            residues = {read % step for read in seen}
            if len(residues) == 1 and (1 / multiple) ** (distinct - 1) < CHANCE:
                grids.append(Grid(key[0], key[1], key[2], step, residues.pop() or step, len(seen), distinct))
                break
    return grids


def settle(requests: list[TraceRequest]) -> list[TraceRequest]:
    """The requests, with the grid :func:`learn` found for theirs set as their read step."""
    found = {(g.provider, g.model, g.agent_version): g for g in learn(requests)}
    if not found:
        return requests
    out = []
    for r in requests:
        grid = found.get(_key(r)) if r.body is None and not r.read_step else None
        out.append(r if grid is None else msgspec.structs.replace(r, read_step=grid.step, read_offset=grid.offset))
    return out


def notes(requests: Sequence[TraceRequest]) -> tuple[str, ...]:
    """One note per learned grid the requests carry: what it is and what decided it."""
    counts: dict[tuple[str, str, str | None, int, int], int] = defaultdict(int)
    for r in requests:
        if r.read_offset:
            counts[(r.provider, r.model, r.agent_version, r.read_step, r.read_offset)] += 1
    return tuple(
        f"{provider} reads of {model}{'' if version is None else f' (agent {version})'} predicted on a "
        f"{step:,}-token grid from {offset:,} ({n:,} request(s)): every read the log reports for them is "
        f"{offset:,} + k x {step:,} tokens, not the documented {rules_for(provider).read_step(model):,}-token steps"
        for (provider, model, version, step, offset), n in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or ""))
    )
