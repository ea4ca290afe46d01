"""Compaction strategies of real agents and providers, each an engine on the public engine API.

One module per strategy; each is built on :mod:`prefixbench.kernel` (the public engine API)
and nothing else of prefixbench, and is installed as an entry point of prefixbench itself
(group ``prefixbench.engines`` in pyproject.toml), so ``--engine NAME`` runs it as it would
run a user's engine::

    no-compaction                never compacts (the baseline)
    sliding-window               drops the oldest messages to fit, tool pairs kept whole
    claude-code-autocompact      Claude Code's auto-compact: a summary replaying the cached
                                 prefix near the window's end, and its clearing of old tool
                                 results after the cache expired
    claude-code-idle-compact     the same, and a compaction after ~55 min idle on a large context
    anthropic-context-editing    Anthropic's server-side clear_tool_uses and clear_thinking
    openai-server-compaction     OpenAI's compact_threshold: an opaque item replaces earlier items

What each models, from which public source, and what it simplifies: docs/strategies.md.
"""
