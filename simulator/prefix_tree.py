"""A radix tree over token streams: the store behind the openai, deepseek and radix cache models.

Edges are byte strings of token streams (:mod:`prefixbench.simulator.tokens`); children are
keyed by the first byte of their edge, so two children never share a first byte and a walk
is one dict lookup and one C-speed byte comparison per node. A request adds at most one split
and one leaf, so a run of a few dozen requests of a million tokens each stays a few hundred
nodes. Token counts come from stream depths (``tokens_at``), never from walking tokens.

::

    root ─ "tools|system|u0" ─┬─ "a0|t0" ─ "a1|t1"      (conversation)
                               └─ "summarize"           (summary call: a branch)

Each node remembers the tick it was last used (TTL and LRU) and whether a stored unit ends at
its end (DeepSeek's cache prefix units, OpenAI's breakpoints). Using a node always uses the
path above it, so a parent is never older than its children: expiry and LRU eviction can cut
whole subtrees and leaves.
"""

from __future__ import annotations

import msgspec
from prefixbench.simulator.cache import common_prefix_len
from prefixbench.simulator.tokenizer import STREAM_BYTES


class TreeNode(msgspec.Struct, eq=False):
    """One edge of the tree and the node it ends in."""

    edge: bytes
    parent: TreeNode | None
    #: Stream bytes from the root through the end of ``edge``.
    depth: int
    last_tick: int
    #: Creation order: breaks LRU ties deterministically.
    seq: int
    children: dict[int, TreeNode] = msgspec.field(default_factory=dict)
    #: Write order of the stored unit (breakpoint) ending here; 0 when none does.
    mark_seq: int = 0

    @property
    def num_tokens(self) -> int:
        """Tokens this edge adds to its parent's (ceil accounting: a path sums to its total)."""
        above = self.parent.depth if self.parent is not None else 0
        return _ceil_tokens(self.depth) - _ceil_tokens(above)


class TreeMatch(msgspec.Struct, frozen=True):
    """How far a stream runs along the tree."""

    #: Stream bytes shared with the stored sequences (may end inside an edge).
    depth: int
    #: Nodes whose whole edge lies inside the match, root excluded, shallowest first.
    path: tuple[TreeNode, ...]


class PrefixTree:
    """A radix tree of token streams with use ticks, stored-unit marks and token accounting."""

    def __init__(self) -> None:
        self.root = TreeNode(b"", None, 0, 0, 0)
        #: Tokens held by all edges (ceil accounting).
        self.num_tokens = 0
        #: Marks written so far; a mark's ``mark_seq`` is its rank in this order.
        self.num_marks = 0
        self._num_created = 0

    def match(self, stream: bytes, *, stale_tick: int | None = None) -> TreeMatch:
        """Walk ``stream`` down the tree, dropping subtrees last used at or before ``stale_tick``."""
        node = self.root
        pos = 0
        path: list[TreeNode] = []
        end = len(stream)
        while pos < end:
            child = node.children.get(stream[pos])
            if child is None:
                break
            if stale_tick is not None and child.last_tick <= stale_tick:
                self.remove(child)
                break
            edge = child.edge
            shared = common_prefix_len(edge, stream[pos : pos + len(edge)])
            pos += shared
            if shared < len(edge):
                break
            path.append(child)
            node = child
        return TreeMatch(pos, tuple(path))

    def insert(self, stream: bytes, tick: int, *, stale_tick: int | None = None) -> TreeNode:
        """Store ``stream`` (splitting where it leaves an edge) and mark its path used at ``tick``.

        Returns the node that ends exactly at the end of the stream (the root for an empty one).
        """
        node = self.root
        pos = 0
        end = len(stream)
        while pos < end:
            child = node.children.get(stream[pos])
            if child is not None and stale_tick is not None and child.last_tick <= stale_tick:
                self.remove(child)
                child = None
            if child is None:
                child = self._new_node(stream[pos:], node, end, tick)
                node.children[stream[pos]] = child
                self.num_tokens += child.num_tokens
                return child
            shared = common_prefix_len(child.edge, stream[pos : pos + len(child.edge)])
            if shared < len(child.edge):
                child = self._split(child, shared)
            child.last_tick = tick
            pos += shared
            node = child
        return node

    def mark(self, node: TreeNode) -> None:
        """Record that a stored unit (breakpoint) ends at ``node``; rewriting it renews its rank."""
        self.num_marks += 1
        node.mark_seq = self.num_marks

    def remove(self, node: TreeNode) -> int:
        """Detach ``node`` and its subtree; returns the tokens freed."""
        parent = node.parent
        assert parent is not None, "the root is never removed"
        del parent.children[node.edge[0]]
        freed = 0
        stack = [node]
        while stack:
            current = stack.pop()
            freed += current.num_tokens
            stack.extend(current.children.values())
            current.parent = None  # detached: an LRU queue holding it can tell
        self.num_tokens -= freed
        return freed

    def _new_node(self, edge: bytes, parent: TreeNode, depth: int, tick: int) -> TreeNode:
        self._num_created += 1
        return TreeNode(edge, parent, depth, tick, self._num_created)

    def _split(self, child: TreeNode, offset: int) -> TreeNode:
        """Cut ``child``'s edge after ``offset`` bytes; returns the new upper node."""
        parent = child.parent
        assert parent is not None and 0 < offset < len(child.edge)
        upper = self._new_node(child.edge[:offset], parent, parent.depth + offset, child.last_tick)
        parent.children[child.edge[0]] = upper
        child.edge = child.edge[offset:]
        child.parent = upper
        upper.children[child.edge[0]] = child
        # Token accounting telescopes along the path: a split leaves the total unchanged.
        return upper


def _ceil_tokens(depth: int) -> int:
    return -(-depth // STREAM_BYTES)
