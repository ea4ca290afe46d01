"""Deterministic filler text with no long repeated runs, so byte prefixes stay honest.

Words come from a fixed vocabulary of 8,192 pronounceable nonsense words; which word comes
next is drawn from a splitmix64 stream seeded by the label's SHA-256. Two texts with different
labels therefore differ right after the label, and a text never repeats a long run of itself.
Pure integer arithmetic: the same label and length give the same text on every machine.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

_CONSONANTS = "bcdfghjklmnprstvz"
_VOWELS = "aeiou"
_VOCAB_BITS = 13
_MASK64 = (1 << 64) - 1


def _make_vocabulary() -> tuple[str, ...]:
    syllables = [c + v for c in _CONSONANTS for v in _VOWELS]  # 85 syllables
    words = []
    idx = 0
    while len(words) < (1 << _VOCAB_BITS):
        a, b, c = idx % 85, (idx // 85) % 85, (idx // 7225) % 85
        length = 2 + idx % 2
        word = syllables[a] + syllables[b] + (syllables[c] if length == 3 else "")
        words.append(word)
        idx += 1
    return tuple(words)


_VOCABULARY = _make_vocabulary()
#: Characters each word adds to a text: the word and the space before the next one.
_STEPS = np.array([len(word) + 1 for word in _VOCABULARY], dtype=np.int64)
_WORDS = np.array(_VOCABULARY, dtype=object)


def _stream(seed: int, count: int) -> np.ndarray:
    """``count`` splitmix64 outputs for ``seed``."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


@lru_cache(maxsize=4096)
def prose(label: str, chars: int) -> str:
    """``chars`` characters of filler starting with ``label: ``."""
    text = f"{label}: "
    if len(text) >= chars:
        return text[:chars]
    seed = int.from_bytes(hashlib.sha256(label.encode()).digest()[:8], "big") & _MASK64
    words: list[str] = []
    have = len(text)
    drawn = 0
    while have < chars:
        batch = (chars - have) // 4 + 16
        indices = _stream(seed + drawn, batch) >> np.uint64(64 - _VOCAB_BITS)
        drawn += batch * 0x1000
        # Words are taken up to and including the one that reaches ``chars`` (vectorized).
        reach = have + np.cumsum(_STEPS[indices])
        take = min(int(np.searchsorted(reach, chars, side="left")) + 1, len(indices))
        words.extend(_WORDS[indices[:take]].tolist())
        have = int(reach[take - 1])
    return (text + " ".join(words))[:chars]
