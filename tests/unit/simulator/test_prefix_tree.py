"""The radix tree over token streams shared by the openai, deepseek and radix models."""

from __future__ import annotations

from prefixbench.simulator.prefix_tree import PrefixTree


def test_insert_then_match_shares_the_longest_prefix_and_splits_once():
    tree = PrefixTree()
    tree.insert(b"aaaabbbbcccc", 0)
    tree.insert(b"aaaabbbbdddd", 1)
    assert tree.num_tokens == 4  # aaaa bbbb + cccc | dddd
    found = tree.match(b"aaaabbbbdd")
    assert found.depth == 10
    assert [node.edge for node in found.path] == [b"aaaabbbb"]
    assert tree.match(b"zz").depth == 0


def test_token_accounting_telescopes_to_the_ceil_total_of_every_path():
    tree = PrefixTree()
    tree.insert(b"0123456789", 0)  # 3 tokens (last one partial)
    assert tree.num_tokens == 3
    tree.insert(b"0123456789abcdef", 1)  # an extension: 4 tokens in all
    assert tree.num_tokens == 4
    tree.insert(b"01234", 2)  # a split inside the first edge adds nothing
    assert tree.num_tokens == 4


def test_stale_nodes_are_dropped_with_their_subtree():
    tree = PrefixTree()
    tree.insert(b"aaaabbbb", 10)
    tree.insert(b"aaaacccc", 20)  # the shared head is now last used at 20
    found = tree.match(b"aaaabbbb", stale_tick=10)
    assert found.depth == 4  # the bbbb leaf (last used at 10) is gone, the head is not
    assert tree.num_tokens == 2
    assert tree.match(b"aaaacccc", stale_tick=20).depth == 0
    assert tree.num_tokens == 0


def test_marks_are_ranked_in_write_order_and_removal_detaches_the_subtree():
    tree = PrefixTree()
    a = tree.insert(b"aaaa", 0)
    tree.mark(a)
    b = tree.insert(b"aaaabbbb", 1)
    tree.mark(b)
    tree.mark(a)
    assert (a.mark_seq, b.mark_seq, tree.num_marks) == (3, 2, 3)
    assert a.children == {b.edge[0]: b} and not b.children
    assert tree.remove(b) == 1 and not a.children and b.parent is None
