"""Replay a request log through the simulated provider and report what each request cost."""

from __future__ import annotations

import json
from collections.abc import Iterable

from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.wire import Request


def replay(requests: Iterable[Request], cache: CacheModel | None = None) -> list[Observation]:
    """Send each request, in order, to a fresh simulated provider (one tick apart)."""
    provider = SimulatedProvider(cache=cache)
    for tick, request in enumerate(requests):
        provider.send(request, tick)
    return provider.observations


def replay_records(observations: list[Observation]) -> list[dict[str, object]]:
    """One JSON-ready object per request."""
    return [
        {
            "index": o.index,
            "purpose": o.purpose,
            "model": o.envelope.model,
            "prompt_tokens": o.prompt_tokens,
            "cached_tokens": o.cached_tokens,
            "uncached_tokens": o.uncached_tokens,
            "extends_previous": o.extends_previous_conversation,
            "divergence": None
            if o.divergence is None
            else {
                "section": o.divergence.section,
                "message": o.divergence.message_idx,
                "block": o.divergence.block_idx,
                "byte": o.divergence.byte_offset,
            },
        }
        for o in observations
    ]


def replay_json(observations: list[Observation]) -> str:
    """``--format json``."""
    return json.dumps(replay_records(observations), indent=2)


def replay_table(observations: list[Observation]) -> str:
    """Aligned text: one line per request plus a total."""
    header = ["#", "purpose", "prompt", "cached", "uncached", "hit", "extends", "first divergence"]
    rows = [
        [
            str(o.index),
            o.purpose,
            f"{o.prompt_tokens:,}",
            f"{o.cached_tokens:,}",
            f"{o.uncached_tokens:,}",
            f"{o.hit_ratio * 100:.1f}%",
            "yes" if o.extends_previous_conversation else "no",
            "-" if o.divergence is None else o.divergence.describe(),
        ]
        for o in observations
    ]
    prompt = sum(o.prompt_tokens for o in observations)
    cached = sum(o.cached_tokens for o in observations)
    rows.append(["all", "", f"{prompt:,}", f"{cached:,}", f"{prompt - cached:,}", f"{(cached / prompt if prompt else 1) * 100:.1f}%", "", ""])
    right = {0, 2, 3, 4, 5}
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows[:-1]), line(["-" * w for w in widths]), line(rows[-1])])
