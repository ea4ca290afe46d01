"""One normalized usage record for a model call, whatever the provider's wire convention.

Providers report a prompt's tokens in one of two conventions (``ProviderRules.usage_convention``
in :mod:`prefixbench.simulator.providers`): *additive* (Anthropic: ``input_tokens`` excludes
the read and written parts) or *subset* (OpenAI, DeepSeek: the prompt count includes the cached
part). Each provider's rule object reads its wire usage into this one record, in which the
parts always add up: ``prompt = cache_read + cache_write + uncached`` (+ ``cache_unsplit``, the
cached tokens of a log that sums reads and writes).

It also carries the names :func:`prefixbench.simulator.pricing.cost_of` reads
(``prompt_tokens``, ``cached_tokens``, ``written_tokens``...), so a usage is priced as it is.
"""

from __future__ import annotations

import msgspec

#: How an OpenAI-shaped record's prompt count (``prompt_tokens`` / ``input_tokens``) was read
#: against its cached part where the spec's inclusive reading was not kept
#: (:attr:`Usage.prompt_count`). A record whose cached part is above its prompt count can only
#: be exclusive; one at or below fits either reading.
#: Exclusive because the record itself says so (cached tokens above the prompt count).
PROMPT_EXCLUSIVE = "exclusive"
#: Exclusive because other records of its endpoint (or file) say so, though it fits either.
PROMPT_EXCLUSIVE_BY_PEERS = "exclusive-by-peers"
#: Exclusive because the record's own cost says so: it prices the count as the uncached part.
PROMPT_EXCLUSIVE_BY_COST = "exclusive-by-cost"


class Usage(msgspec.Struct, frozen=True, gc=False):  # scalars only: no cycle (16 bytes less each)
    """Usage of one call: read, written (5 m and 1 h), uncached input and output tokens."""

    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    uncached: int = 0
    output: int = 0
    #: False when the provider's usage carried no cache field at all ("cache not reported"):
    #: then ``cache_read`` 0 says nothing, and the whole prompt sits in ``uncached`` as billed.
    cache_reported: bool = True
    #: The part of ``cache_read`` served from an explicit cache the request named (Gemini
    #: ``cachedContent``): priced at the explicit read rate.
    cache_read_explicit: int = 0
    #: An OpenAI-shaped record read with its prompt count excluding the cached part: why (one of
    #: the ``PROMPT_*`` values above); "" for the spec's reading and any other record.
    prompt_count: str = ""
    #: ``fast`` where the provider's usage says the call ran in Anthropic's fast mode
    #: (``usage.speed: "fast"``): billed at the model's fast price (its ``-fast`` price row), and
    #: cached apart from standard calls; "" for standard and for a usage that says nothing.
    speed: str = ""
    #: Tokens the log reports as cache reads and writes (or a DeepSeek-shaped server's hits and
    #: misses) summed, their split unknown (a Cline history file alone: ``metrics.tokens.cached``),
    #: in none of the other parts; with ``cache_reported`` False. The audit prices such a call as
    #: a range (all read .. all written), never as one figure.
    cache_unsplit: int = 0
    #: False where the log's usage has no field for cache writes (GitHub Copilot CLI's
    #: OpenTelemetry export: reads only): what the call wrote is unknown, inside ``uncached``.
    writes_reported: bool = True

    @property
    def cache_write(self) -> int:
        """All written tokens, 5 m and 1 h."""
        return self.cache_write_5m + self.cache_write_1h

    @property
    def prompt(self) -> int:
        """All input tokens: read + written + uncached (+ the unsplit cached tokens)."""
        return self.cache_read + self.cache_write + self.uncached + self.cache_unsplit

    @property
    def is_empty(self) -> bool:
        """Nothing reported at all (an aborted call that never reached the model)."""
        return self.prompt == 0 and self.output == 0

    # The names cost_of reads (pricing.Usage).
    @property
    def prompt_tokens(self) -> int:
        """Same as :attr:`prompt`."""
        return self.prompt

    @property
    def cached_tokens(self) -> int:
        """Same as :attr:`cache_read`."""
        return self.cache_read

    @property
    def cached_explicit_tokens(self) -> int:
        """Same as :attr:`cache_read_explicit`."""
        return self.cache_read_explicit

    @property
    def written_tokens(self) -> int:
        """Same as :attr:`cache_write`."""
        return self.cache_write

    @property
    def written_long_tokens(self) -> int:
        """Same as :attr:`cache_write_1h`."""
        return self.cache_write_1h

    @property
    def output_tokens(self) -> int:
        """Same as :attr:`output`."""
        return self.output


#: The fields most usages leave at their default: a :class:`PlainUsage` holds none of them.
RARE_USAGE_FIELDS = ("cache_reported", "cache_read_explicit", "prompt_count", "speed", "cache_unsplit", "writes_reported")


class PlainUsage(msgspec.Struct, frozen=True, gc=False):
    """A :class:`Usage` whose :data:`RARE_USAGE_FIELDS` are all at their default, in 5 slots, not
    11 (48 bytes less): the same fields, properties and values, read the same way (each rare field
    reads as its default). The audit holds the usage of every request of every file to its end,
    so it holds such a usage as this (:func:`plain_usage`). Never made by a reader, never compared
    with a :class:`Usage` (a struct of another type is not equal), never given to ``replace`` with
    a rare field (the audit's one such ``replace`` is for a usage with ``cache_unsplit`` tokens)."""

    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    uncached: int = 0
    output: int = 0


for _name, _attr in vars(Usage).items():
    if isinstance(_attr, property):  # prompt, cache_write, is_empty and the names cost_of reads
        setattr(PlainUsage, _name, _attr)
_USAGE_DEFAULTS = dict(zip(Usage.__struct_fields__, Usage.__struct_defaults__))
for _name in RARE_USAGE_FIELDS:
    # Its default as a class attribute, which an instance reads as its own (no slot of that name):
    # not a property, whose every read was a call (21 a request in the audit's pass).
    setattr(PlainUsage, _name, _USAGE_DEFAULTS[_name])
del _name, _attr


def plain_usage(usage: Usage) -> Usage:
    """``usage`` as a :class:`PlainUsage` where its :data:`RARE_USAGE_FIELDS` are all at their
    default, else ``usage`` (typed as the usage it reads as)."""
    # (each field tested, no tuple of them made: the audit asks this of every request)
    if (type(usage) is not Usage or not usage.cache_reported or usage.cache_read_explicit or usage.prompt_count
            or usage.speed or usage.cache_unsplit or not usage.writes_reported):
        return usage
    return PlainUsage(usage.cache_read, usage.cache_write_5m, usage.cache_write_1h, usage.uncached, usage.output)  # type: ignore[return-value]
