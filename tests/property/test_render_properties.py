"""The property the byte-exact trie relies on: no rendered unit is a proper byte prefix of another.

Because of it, the longest common prefix of two requests is "all shared leading units, then a
common prefix inside the first unit that differs" (simulator/render.py). Units of every kind
(tools, system text, system blocks, messages with every block type) are drawn together, so a
message is also checked against a tools or system unit.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.simulator.render import render_message, render_system, render_system_blocks, render_tools
from prefixbench.simulator.wire import Message, Reasoning, Text, ToolCall, ToolResult, ToolSchema

# Short texts over a small alphabet make near-collisions (one text a prefix of another) likely.
texts = st.text(alphabet=st.sampled_from('ab"\\{}[],:é\u2028\n'), max_size=6) | st.text(max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
blocks = st.one_of(
    st.builds(Text, texts),
    st.builds(Reasoning, texts, st.sampled_from(("reasoning_content", "reasoning_text", "reasoning"))),
    st.builds(ToolCall, texts, texts, texts),
    st.builds(ToolResult, texts, st.lists(st.builds(Text, texts), max_size=3).map(tuple), st.booleans()),
)
messages = st.builds(
    Message, st.sampled_from(("system", "user", "assistant", "tool")), st.lists(blocks, max_size=4).map(tuple)
)
tools = st.lists(
    st.builds(lambda n, d, p: ToolSchema.make(n, d, p), texts, texts, st.dictionaries(texts, json_values, max_size=3)),
    min_size=1,
    max_size=3,
).map(tuple)
units = st.one_of(
    messages.map(lambda m: render_message(m).data),
    tools.map(lambda t: render_tools(t).data),
    texts.map(lambda s: render_system(s).data),
    st.lists(texts, min_size=1, max_size=3).map(lambda b: render_system_blocks(tuple(b)).data),
)


@settings(max_examples=400)
@given(st.lists(units, min_size=2, max_size=6))
def test_no_rendered_unit_is_a_proper_prefix_of_another(rendered):
    for a in rendered:
        for b in rendered:
            assert not (len(a) < len(b) and b.startswith(a)), (a, b)
