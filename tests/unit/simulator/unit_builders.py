"""Rendered requests of exact token sizes for the cache-model tests (``make_*``).

Under the heuristic a token is 4 bytes, so a unit of ``4 * n`` bytes is ``n`` tokens and the
numbers in a test can be worked out by hand. Units made with different tags differ at their
first byte.
"""

from __future__ import annotations

import hashlib

from prefixbench.simulator.render import RenderedRequest, RenderedUnit
from prefixbench.simulator.wire import Envelope

ENV = Envelope("acme", "m1", "high")
OTHER_ENV = Envelope("acme", "m1", "max")
#: How render.py begins an assistant message unit (the deepseek model's end-of-output units).
ASSISTANT_HEAD = b'{"role":"assistant"'


def make_unit(tag: str, num_tokens: int, *, assistant: bool = False) -> RenderedUnit:
    """``num_tokens`` heuristic tokens of filler starting with ``tag`` (deterministic)."""
    size = 4 * num_tokens
    head = (ASSISTANT_HEAD if assistant else b"") + tag.encode()
    filler = hashlib.shake_256(tag.encode()).hexdigest(size).encode()
    return RenderedUnit("message", (head + filler)[:size])


def make_rendered(*units: RenderedUnit) -> RenderedRequest:
    """A request made of these units."""
    return RenderedRequest(tuple(units), 0)
