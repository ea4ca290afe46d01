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
    claude-code-idle-compact     the same, and a compaction at minute 54 of an idle gap on a large
                                 context (the 1 h cache)
    anthropic-context-editing    Anthropic's server-side clear_tool_uses and clear_thinking
    openai-server-compaction     OpenAI's compact_threshold: an opaque item replaces earlier items
    codex-compact                Codex's compaction as it picks it for the route: remote (v2) on
                                 OpenAI's, else a warm local turn; user messages kept
    pi-compaction                pi's compaction: a text summary before the kept recent turns
    opencode-summary             OpenCode's tool-output prune and its summary
    gemini-cli-compress          Gemini CLI's compression: a cold snapshot of the oldest 70%, and
                                 its masking of old tool outputs
    qwen-code-compress           Qwen Code's compression: a cold summary of the whole history
    openhands-*                  OpenHands' condensers: observation masking, LLM summarizing,
                                 amortized forgetting, recent events
    swe-agent-last-n-observations  SWE-agent's last-N observations history processor
    aider-chat-summary           aider's ChatSummary: finished messages summarized past a small budget
    crush-summarize              Crush's auto-summarize: a cold summary replaces the whole session
    kimi-cli-compact             Kimi CLI's SimpleCompaction: all but the newest two messages summarized
    cline-truncate               Cline's default: half the history after the first pair deleted
    cline-condense               Cline's auto-condense: a warm summarize turn after the first pair
    roo-condense                 Roo Code's cold fresh-start condense, sliding window as fallback
    goose-auto-compact           Goose's auto-compaction: a cold summary replaces everything, at a
                                 new user message past 80% or a request over the window
    continue-cli-compact         Continue's cn: a warm summary turn replaces the whole history
    hermes-compress              Hermes Agent's compressor: head and recent tail kept, the middle
                                 summarized cold, old tool results pruned first
    openclaw-compaction          OpenClaw's: pi's compaction at a 20,000-token reserve, a memory-flush
                                 turn before it, cache-ttl pruning of old tool results (opt-in)

What each models, from which public source, and what it simplifies: docs/strategies.md
(providers and Claude Code) and docs/strategies_agents.md (the other agents).
"""
