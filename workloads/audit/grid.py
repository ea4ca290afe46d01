"""Read grids learned from a log's own reads (OpenAI through Codex, measured).

OpenAI documents reads in 128-token steps from 1,024 tokens. The Codex rollouts of 2026-04 on
(Codex 0.122 to 0.144) read on a coarser grid that starts elsewhere: all 187 reads of gpt-5.4 and
gpt-5.5 in nine sessions of nine users are ``384 + k x 512`` tokens, and all 173 of
gpt-5.6-sol and gpt-5.6-luna in one session ``768 + k x 1,024``; the earlier ones (Codex 0.58,
0.114, 0.118 alpha: 60 reads) are on no such grid. The same sessions never read into the
previous response (2 of 350 follow-ups read past the previous prompt; before 0.122, 31 of 60),
so on a learned grid the chain model keeps no response after its prompt (OpenAI's
``caches_output``), but for a Codex older than 0.122.0 (:func:`keeps_output`). No page documents it, and the version,
the model and the day each change it, so the reads of a log decide where they can. A read on the 128-token grid would sit on one point of a ``s``-token grid by chance with
odds ``128 / s``; where every read of a (provider, model, agent version) lies on one such grid
and that many distinct reads sharing it by chance is less likely than 1 in 200
(:data:`CHANCE`), the reads of those requests are predicted on that grid: the last point at or
below the prefix they share (a read 384 tokens past a point still counts as the point).

Only body-less requests (the chain model's) are learned and changed, only those of the
providers in :data:`PROVIDERS`, and never a request whose step an endpoint, a date or
``--read-step`` set.

A short session has too few reads to learn its grid (4 distinct reads for a 1,024-token grid, 5
for a 512-token one), yet its reads lie on the same grids. So a Codex rollout from 0.122.0 on
(the release: 0.122.0 alphas and earlier read in 128-token steps and into the response) on a
model whose grid was measured (:data:`CODEX_GRIDS`) is predicted on that grid where its own
reads learn none, and keeps no response either. Measured on 19 public rollouts of 19 users
(committed as ``codex-session.jsonl``), Codex 0.122.0 to 0.144.5, 2026-04 to 07: all 415 of
their reads lie on their model's grid, and 2 of 396 follow-ups read past the previous prompt;
in the 7 rollouts of Codex 0.101 to 0.122.0-alpha.13 (2026-02 to 04), 17 of 56 reads lie on
it (about the quarter chance puts there) and 39 of 50 follow-ups read past the previous prompt.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import msgspec

from prefixbench.simulator.providers import rules_for
from prefixbench.simulator.providers.openai import base_model
from prefixbench.workloads.logs.trace import TraceRequest, whole

#: Providers whose reads are checked for a coarser grid (where one was measured).
PROVIDERS = frozenset({"openai"})
#: Coarser steps tried, as multiples of the provider's step, largest first.
MULTIPLES = (16, 8, 4, 2)
#: The most likely the shared grid may be by chance: ``(step / grid) ** (distinct reads - 1)``.
CHANCE = 1 / 200
#: The first Codex release whose rollouts read on the grids below (its alphas did not).
CODEX_SINCE = (0, 122, 0)
#: OpenAI model -> (step, offset) of the grid its reads lie on in Codex rollouts from
#: :data:`CODEX_SINCE` on [M] (reads; rollouts): gpt-5.3-codex (3; 1), gpt-5.4 (95; 3),
#: gpt-5.5 (135; 13), gpt-5.6-sol (170; 1), gpt-5.6-luna (3; 1), gpt-5.6-terra (9; 1).
CODEX_GRIDS = {
    "gpt-5.3-codex": (512, 384),
    "gpt-5.4": (512, 384),
    "gpt-5.5": (512, 384),
    "gpt-5.6-sol": (1_024, 768),
    "gpt-5.6-luna": (1_024, 768),
    "gpt-5.6-terra": (512, 256),
}


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
        # (a grid already set, learned or measured, has an offset: its requests still count)
        if r.provider not in PROVIDERS or r.body is not None or (r.read_step and not r.read_offset) or r.usage is None or not r.usage.cache_reported:
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


def _version(text: str | None) -> tuple[int, int, int, int] | None:
    """``0.128.0`` as (0, 128, 0, 1), a pre-release (``0.122.0-alpha.13``) as (0, 122, 0, 0), so that
    it sorts before its release; None when unreadable."""
    core, dash, _ = (text or "").partition("-")
    parts = core.split(".")
    if len(parts) != 3 or not all(part.isascii() and part.isdigit() and len(part) < 7 for part in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2]), 0 if dash else 1


def codex_grid(r: TraceRequest) -> tuple[int, int] | None:
    """The measured grid (step, offset) of a body-less Codex request to OpenAI from
    :data:`CODEX_SINCE` on, for a model :data:`CODEX_GRIDS` names; None otherwise."""
    if r.provider not in PROVIDERS or r.source_format != "codex" or r.body is not None or r.read_step:
        return None
    version = _version(r.agent_version)
    if version is None or version < (*CODEX_SINCE, 1):
        return None
    return CODEX_GRIDS.get(base_model(r.model))


def keeps_output(r: TraceRequest) -> bool:
    """A body-less Codex request to OpenAI on a grid learned from its log whose Codex predates
    :data:`CODEX_SINCE` (its alphas included): its response is kept after its prompt all the same.
    Measured on the only such calls, gpt-5.4-mini subagents of Codex 0.115.0-alpha.27 and
    0.119.0-alpha.28 in two homes of two users: of the 88 calls of a turn after a response of 500
    tokens or more, 70 read the previous prompt and its whole response (on the grid), 10 part of
    it, 3 the prompt alone, 5 less; from the release on, 19 of 2,871 such calls read it whole and
    2,308 the prompt alone (docs/audit.md has the table)."""
    if r.provider not in PROVIDERS or r.source_format != "codex" or r.body is not None or not r.read_offset:
        return False
    version = _version(r.agent_version)
    return version is not None and version < (*CODEX_SINCE, 1)


def settle(requests: list[TraceRequest]) -> list[TraceRequest]:
    """The requests, with the grid :func:`learn` found for theirs set as their read step, else
    the measured Codex grid (:func:`codex_grid`)."""
    found = {(g.provider, g.model, g.agent_version): g for g in learn(requests)}
    out = []
    for r in requests:
        if r.body is not None or r.read_step:
            out.append(r)
            continue
        grid = found.get(_key(r))
        step_offset = (grid.step, grid.offset) if grid is not None else codex_grid(r)
        out.append(r if step_offset is None else msgspec.structs.replace(whole(r), read_step=step_offset[0], read_offset=step_offset[1]))
    return out


def notes(requests: Sequence[TraceRequest]) -> tuple[str, ...]:
    """One note per grid the requests carry: what it is and what decided it."""
    counts: dict[tuple[str, str, str | None, int, int], int] = defaultdict(int)
    for r in requests:
        if r.read_offset:
            counts[(r.provider, r.model, r.agent_version, r.read_step, r.read_offset)] += 1
    learned = {(g.provider, g.model, g.agent_version) for g in learn(requests)}
    out = []
    for (provider, model, version, step, offset), n in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "")):
        head = (
            f"{provider} reads of {model}{'' if version is None else f' (agent {version})'} predicted on a "
            f"{step:,}-token grid from {offset:,} ({n:,} request(s)): "
        )
        if provider not in PROVIDERS:  # (a grid the reader set: the upstream a gateway names decides it)
            out.append(head + f"the grid {model} reads on through the upstream the log's gateway named (measured), "
                              f"not the model's {rules_for(provider).read_step(model):,}-token steps")
            continue
        if (provider, model, version) in learned:
            why = f"every read the log reports for them is {offset:,} + k x {step:,} tokens"
        else:
            why = (
                f"too few reads to learn a grid, the one public Codex rollouts from {'.'.join(map(str, CODEX_SINCE))} "
                f"on read {model} on (measured), with no response kept"
            )
        out.append(head + why + f", not the documented {rules_for(provider).read_step(model):,}-token steps")
    return tuple(out)
