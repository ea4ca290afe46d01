"""Self-hosted engines: ``vllm`` (hashed KV blocks, LRU free queue) and ``radix`` (SGLang's tree).

Neither bills anything; both report what the engine reuses, under a KV capacity. One engine
serves every family, so the capacity is shared, while a family salt keeps their entries
apart (vLLM's ``cache_salt`` in block 0, SGLang's ``RadixKey.extra_key``).

``vllm`` (vLLM's automatic prefix caching: vllm/v1/core/{kv_cache_utils,block_pool,kv_cache_manager}.py):

* A prompt is cut into ``block_size`` (16) token blocks; only full blocks are cached, each
  under a parent-hash chain ``h_k = H(h_{k-1}, tokens of block k)``, ``h_{-1}`` = the family
  salt (``H`` = blake2b-128, deterministic, unlike vLLM's per-process ``NONE_HASH``).
* A hit is the longest run of leading blocks whose hashes are cached, capped so the last
  prompt token is recomputed: at most ``floor((n - 1) / 16) * 16`` tokens.
* ``capacity_blocks`` blocks exist, all free at start, in a free queue. A hit takes its
  blocks out of the queue; new blocks are popped from the head, evicting the hash the block
  held; when a request finishes its blocks go back to the tail in reverse order, so its
  last, most specific block is evicted first. A request that needs more blocks than are
  free keeps only the blocks it could get cached (vLLM itself would refuse such a prompt).
  A recomputed block whose hash is still cached is not cached twice (vLLM may hold both).
  Default 65,536 blocks (1,048,576 tokens at 16) [I: room for one 1M context, not a GPU].
* With ``cache_output`` the reply's tokens (decode blocks) are hashed and cached too, once
  their block is full; the request finishes after its reply (or when the next one arrives).

``radix`` (SGLang's RadixAttention: sglang/srt/mem_cache/radix_cache.py, managers/schedule_batch.py):

* A token-level radix tree (``page_size=1``); a hit is the longest stored token prefix, at
  most ``n - 1`` tokens (``_compute_max_prefix_len``: one token is left to compute logits).
* ``capacity_tokens`` bounds the tree. Before storing a request's new tokens, leaves are
  evicted least recently used first (last use = the tick of the request that last matched or
  stored them; ties: oldest node first), never the matched path being extended; a parent left
  childless becomes a leaf. A request that cannot fit is stored only as far as room allows.
  Default 1,048,576 tokens.
* With ``cache_output`` the finished request (prompt + reply) is inserted, as SGLang's
  ``cache_finished_req`` does.

Both read the reply too when ``cache_output`` is on, which the byte-exact reference (prompts
only) does not; on prompts alone, with room to spare, they equal the reference floored to
their granularity (tests/property/test_cache_models.py).
"""

from __future__ import annotations

import hashlib
import heapq
from collections import OrderedDict, deque

import msgspec

from prefixbench.simulator.checks import is_positive_int, spelled
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.cache import CacheVerdict, common_prefix_len
from prefixbench.simulator.prefix_tree import PrefixTree, TreeMatch, TreeNode
from prefixbench.simulator.providers.vllm import VLLM
from prefixbench.simulator.render import RenderedRequest, RenderedUnit
from prefixbench.simulator.tokenizer import STREAM_BYTES, Tokenizer, make_tokenizer
from prefixbench.simulator.tokens import TokenView, TokenizedModel, reply_view, token_view
from prefixbench.simulator.wire import Envelope, canonical_json

#: vLLM's default block (the provider rules).
DEFAULT_BLOCK_SIZE = VLLM.block_tokens
#: 2**16 blocks of 16 = 1,048,576 tokens [I: a round number, not a measured GPU].
DEFAULT_CAPACITY_BLOCKS = 65_536
DEFAULT_CAPACITY_TOKENS = 1_048_576
#: Recent streams per family whose block hashes are reused (prefix sharing makes most reusable).
_HASH_MEMO = 4


def family_salt(envelope: Envelope) -> bytes:
    """Deterministic bytes naming a request family (never Python's salted ``hash``)."""
    fields = [envelope.provider, envelope.model, envelope.reasoning_effort, envelope.temperature, envelope.stop]
    return hashlib.blake2b(canonical_json(fields).encode(), digest_size=16).digest()


def _positive_int(model: str, option: str, value: object) -> int:
    if not is_positive_int(value):
        raise UserError(f"{model}: {option} must be a positive integer, got {spelled(value)}")
    return value


def _flag(model: str, option: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise UserError(f"{model}: {option} must be true or false, got {spelled(value)}")
    return value


class _Running(msgspec.Struct):
    """The request in flight: its family, view, block hashes and the blocks it holds."""

    envelope: Envelope
    view: TokenView
    blocks: list[int]
    #: Leading blocks whose hash has been settled (cached, or found already cached).
    num_settled: int


class VllmCache(TokenizedModel):
    """vLLM v1 automatic prefix caching: chained block hashes, LRU free-block queue."""

    name = "vllm"

    def __init__(
        self,
        *,
        tokenizer: str | Tokenizer | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        capacity_blocks: int = DEFAULT_CAPACITY_BLOCKS,
        cache_output: bool = True,
    ) -> None:
        """Args:
        block_size: tokens per KV block.
        capacity_blocks: KV blocks in the pool.
        cache_output: also cache the reply's full blocks.

        Raises:
            UserError: a bad option, naming it.
        """
        self.block_size = _positive_int("vllm", "block_size", block_size)
        self.capacity_blocks = _positive_int("vllm", "capacity_blocks", capacity_blocks)
        self.cache_output = _flag("vllm", "cache_output", cache_output)
        self.tokenizer = make_tokenizer(tokenizer)
        self._block_bytes = self.block_size * STREAM_BYTES
        #: Free blocks, head evicted first; a value is the hash the block still holds, if any.
        self._free: OrderedDict[int, bytes | None] = OrderedDict.fromkeys(range(self.capacity_blocks))
        #: Block hash -> the block holding it.
        self._cached: dict[bytes, int] = {}
        self._hash_of: list[bytes | None] = [None] * self.capacity_blocks
        self._running: _Running | None = None
        self._recent: dict[Envelope, deque[tuple[bytes, list[bytes]]]] = {}

    @property
    def num_cached_blocks(self) -> int:
        """Blocks that hold a reusable hash."""
        return len(self._cached)

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Reuse the longest run of cached leading blocks, then compute and cache the rest."""
        del tick, ready_tick  # capacity, not time, evicts
        self._finish()
        view = token_view(rendered, self.tokenizer)
        prompt = view.num_tokens
        hashes = self._hashes(envelope, view.stream)
        hit: list[int] = []
        for block_hash in hashes[: max(prompt - 1, 0) // self.block_size]:
            block_id = self._cached.get(block_hash)
            if block_id is None:
                break
            hit.append(block_id)
        for block_id in hit:
            del self._free[block_id]  # in use again: out of the eviction queue
        self._running = _Running(envelope, view, list(hit), len(hit))
        written = self._grow(view, hashes)
        return CacheVerdict(prompt, len(hit) * self.block_size, written)

    def observe_output(self, rendered: RenderedRequest, envelope: Envelope, reply: RenderedUnit, tick: int) -> None:
        """Cache the reply's full blocks (decode), then finish the request."""
        del rendered, tick
        running = self._running
        if running is not None and self.cache_output and running.envelope == envelope:
            view = reply_view(running.view, reply, self.tokenizer)
            self._grow(view, self._hashes(envelope, view.stream))
        self._finish()

    def _grow(self, view: TokenView, hashes: list[bytes]) -> int:
        """Give the running request blocks for all of ``view``, caching each newly full one.

        Returns the tokens newly cached.
        """
        running = self._running
        assert running is not None
        needed = -(-view.num_tokens // self.block_size) - len(running.blocks)
        for _ in range(max(needed, 0)):
            if not self._free:
                break  # pool exhausted: the rest is computed but cannot be kept
            block_id, old_hash = self._free.popitem(last=False)
            if old_hash is not None:
                del self._cached[old_hash]  # evicted
                self._hash_of[block_id] = None
            running.blocks.append(block_id)
        newly = 0
        settle_to = min(len(running.blocks), len(hashes))
        for idx in range(running.num_settled, settle_to):
            block_hash = hashes[idx]
            if block_hash not in self._cached:  # else a duplicate of a cached block: not kept
                block_id = running.blocks[idx]
                self._cached[block_hash] = block_id
                self._hash_of[block_id] = block_hash
                newly += 1
        running.num_settled = max(running.num_settled, settle_to)
        running.view = view
        return newly * self.block_size

    def _finish(self) -> None:
        """Free the running request's blocks to the queue's tail, last block first."""
        running = self._running
        if running is None:
            return
        for block_id in reversed(running.blocks):
            self._free[block_id] = self._hash_of[block_id]
        self._running = None

    def _hashes(self, envelope: Envelope, stream: bytes) -> list[bytes]:
        """Chained hashes of the stream's full blocks, reusing those of a recent shared prefix."""
        recent = self._recent.setdefault(envelope, deque(maxlen=_HASH_MEMO))
        size = self._block_bytes
        reused: list[bytes] = []
        for old_stream, old_hashes in recent:
            num_shared = min(common_prefix_len(old_stream, stream) // size, len(old_hashes))
            if num_shared > len(reused):
                reused = old_hashes[:num_shared]
        hashes = reused  # a fresh slice (or list): the memo's lists are never extended
        parent = hashes[-1] if hashes else family_salt(envelope)
        for offset in range(len(hashes) * size, len(stream) - size + 1, size):
            parent = hashlib.blake2b(parent + stream[offset : offset + size], digest_size=16).digest()
            hashes.append(parent)
        recent.append((stream, hashes))
        return hashes


class RadixCache(TokenizedModel):
    """SGLang RadixAttention: a token radix tree with LRU leaf eviction under a token capacity."""

    name = "radix"

    def __init__(
        self,
        *,
        tokenizer: str | Tokenizer | None = None,
        capacity_tokens: int = DEFAULT_CAPACITY_TOKENS,
        cache_output: bool = True,
    ) -> None:
        """Args:
        capacity_tokens: KV tokens the tree may hold.
        cache_output: insert the finished request (prompt + reply).

        Raises:
            UserError: a bad option, naming it.
        """
        self.capacity_tokens = _positive_int("radix", "capacity_tokens", capacity_tokens)
        self.cache_output = _flag("radix", "cache_output", cache_output)
        self.tokenizer = make_tokenizer(tokenizer)
        self._tree_numbers: dict[int, int] = {}
        self._trees: dict[Envelope, PrefixTree] = {}
        #: The last request: its family and view, until its reply arrives.
        self._pending: tuple[Envelope, TokenView] | None = None
        #: Leaves in LRU order, kept as they change: (last tick, creation seq, tree number, leaf,
        #: tree). An entry is stale once its leaf was used again, gained a child or was evicted;
        #: stale entries are dropped when they surface.
        self._leaves: list[tuple[int, int, int, TreeNode, PrefixTree]] = []

    @property
    def num_tokens(self) -> int:
        """Tokens held by the tree, every family."""
        return sum(tree.num_tokens for tree in self._trees.values())

    def _tree(self, envelope: Envelope) -> PrefixTree:
        tree = self._trees.get(envelope)
        if tree is None:
            tree = self._trees[envelope] = PrefixTree()
            self._tree_numbers[id(tree)] = len(self._tree_numbers)
        return tree

    def _note(self, tree: PrefixTree, node: TreeNode) -> None:
        """Queue ``node`` for eviction if it is a leaf (at its current tick)."""
        if node.parent is not None and not node.children:
            heapq.heappush(self._leaves, (node.last_tick, node.seq, self._tree_numbers[id(tree)], node, tree))

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Reuse the longest stored prefix (but the last token), then store the prompt."""
        del ready_tick
        view = token_view(rendered, self.tokenizer)
        tree = self._tree(envelope)
        found = tree.match(view.stream)
        prompt = view.num_tokens
        cached = max(min(view.tokens_at(found.depth), prompt - 1), 0)
        written = self._store(tree, view.stream, tick, found)
        self._pending = (envelope, view)
        return CacheVerdict(prompt, cached, written)

    def observe_output(self, rendered: RenderedRequest, envelope: Envelope, reply: RenderedUnit, tick: int) -> None:
        """Insert the finished request, prompt + reply."""
        del rendered
        pending, self._pending = self._pending, None
        if pending is None or not self.cache_output or pending[0] != envelope:
            return
        stream = reply_view(pending[1], reply, self.tokenizer).stream
        tree = self._trees[envelope]
        self._store(tree, stream, tick, tree.match(stream))

    def _store(self, tree: PrefixTree, stream: bytes, tick: int, found: TreeMatch) -> int:
        """Make room without evicting the matched path, insert what fits; returns the tokens added."""
        # Like match_prefix: split at the match so the matched part is locked apart from the rest,
        # and mark it used.
        locked = tree.insert(stream[: found.depth], tick)
        self._note(tree, locked)
        locked_tokens = -(-found.depth // STREAM_BYTES)
        need = -(-len(stream) // STREAM_BYTES) - locked_tokens
        self._evict(need, locked)
        room = self.capacity_tokens - self.num_tokens
        if room < need:
            stream = stream[: (locked_tokens + max(room, 0)) * STREAM_BYTES]
        before = tree.num_tokens
        # Only the node the stream ends at can be a leaf whose tick changed: the rest of the path
        # are its ancestors, and a split keeps the old node (and its queue entry) as the lower half.
        self._note(tree, tree.insert(stream, tick))
        return tree.num_tokens - before

    def _evict(self, need: int, locked: TreeNode) -> None:
        """Evict least recently used leaves until ``need`` tokens are free."""
        free = self.capacity_tokens - self.num_tokens
        if free >= need:
            return
        protected: set[int] = set()
        node: TreeNode | None = locked
        while node is not None:
            protected.add(id(node))
            node = node.parent
        queue = self._leaves
        held: list[tuple[int, int, int, TreeNode, PrefixTree]] = []
        while free < need and queue:
            entry = heapq.heappop(queue)
            tick, _, _, leaf, tree = entry
            if leaf.parent is None or leaf.children or leaf.last_tick != tick:
                continue  # stale: evicted, grown or used again since it was queued
            if id(leaf) in protected:
                held.append(entry)  # the request being stored reads it; evictable later
                continue
            parent = leaf.parent
            free += tree.remove(leaf)
            if parent.parent is not None:
                self._note(tree, parent)  # queued when it became a leaf (held while protected)
        for entry in held:
            heapq.heappush(queue, entry)
