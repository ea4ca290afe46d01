"""The format table: every format in it (and every ``--input`` choice) has a module, a detector
test and a reader test on a fixture of its own (``fixtures/<name>.jsonl``, or ``fixtures/<name>.json``
for a format whose files are one JSON object).

The tests enumerate :data:`FORMATS`, so a format added to the table without a fixture and an
expected reading fails :func:`check_table`; a planted extra entry shows that it does.
"""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import pytest
from msgspec.structs import replace
from prefixbench.reports.cli import build_parser
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import provider_of_model
from prefixbench.workloads.logs import formats
from prefixbench.workloads.logs.formats import (
    FORMATS,
    REPLAYS,
    detect_format,
    import_file,
    noun_a,
)
from prefixbench.workloads.logs.formats.base import ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import head_digest
from prefixbench.workloads.logs.records import iter_records
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.trace import Prefix, TraceRequest

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> Path:
    """The format's fixture: ``<name>.json`` when there is one (a one-object file), else ``<name>.jsonl``."""
    whole = FIXTURES / f"{name}.json"
    text = FIXTURES / f"{name}.md"  # a log kept as text, not JSON (aider's chat history)
    return whole if whole.is_file() else text if text.is_file() else FIXTURES / f"{name}.jsonl"


def namespaced(file: str, conversation: int, context: str | None, ids: tuple[int, ...]) -> tuple[int, ...]:
    """A block-hash agent trace's ids as its reader keys them: under a 64-bit digest of the file,
    the conversation's ordinal in it and (ids per context) the context's lane; ``context`` None
    where the conversation's contexts share its ids (``hash_id_scope`` local or global)."""
    scope = (f"{file}\0{conversation}" if context is None else f"{file}\0{conversation}\0{context}").encode()
    prefix = int.from_bytes(hashlib.blake2b(scope, digest_size=8).digest(), "big") << 64
    return tuple(prefix | i for i in ids)


def expected(name: str) -> list[TraceRequest]:
    """What the reader of ``name`` makes of its fixture (bodies compared by their model only)."""
    file = str(fixture(name))
    match name:
        case "claude-code":
            return [
                TraceRequest(
                    file, 3, "main", "main", 0, 1756857600000, 1756857602000, "anthropic", "claude-sonnet-4-20250514",
                    usage=Usage(cache_write_5m=2000, uncached=3, output=120),  # the LAST line's output count
                    # (a lane start whose prompt is the first message alone: named by what it sends,
                    # the home (the folder above the project's) and project folder among it)
                    prefix=Prefix("claude-code:main:claude-sonnet-4-20250514:1.0.98",
                                  f"by-content:cc-start:{fixture(name).parents[2]}:1.0.98:main:fixtures:"
                                  "f45ac1b3898a13385f0c8685:2003"),
                    events=(("user_turn", ""),), request_id="req_1", agent_version="1.0.98", source_format=name,
                )
            ]
        case "http-capture":
            return [
                TraceRequest(
                    file, 1, "main", "main", 0, 1748554704000, 1748554705500, "anthropic", "claude-sonnet-4-20250514",
                    usage=Usage(cache_read=1200, uncached=4, output=9), source_format=name,
                    endpoint="api.anthropic.com/v1/messages",
                )
            ]
        case "codex":
            return [
                TraceRequest(
                    file, 5, "main", "main", 0, 1759312801000, 1759312803000, "openai", "gpt-5-codex",
                    envelope=(("effort", "high"),),
                    usage=Usage(cache_read=4096, uncached=904, output=50),  # input_tokens includes the cached part
                    # A call's node is its thread and running total (a subagent's copy names its parent's calls by them).
                    prefix=Prefix("codex:gpt-5-codex:0.46.0", 'codex:sess-1@{"cached_input_tokens": 4096, "input_tokens": 5000, "output_tokens": 50}', None, 2, replays_output=True),
                    events=(("user_turn", ""),), agent_version="0.46.0", source_format=name,
                    done_ms=1759312804000,  # the token_count event: the response had ended
                )
            ]
        case "pi":
            return [
                TraceRequest(
                    file, 3, "main", "main", 0, 1761987602000, None, "anthropic", "claude-sonnet-4-5",
                    envelope=(("thinking", "off"),),
                    usage=Usage(cache_write_5m=3000, uncached=12, output=30),
                    prefix=Prefix(f"pi:{file}:anthropic:claude-sonnet-4-5", f"pi:{file}#3", None, 2),
                    events=(("user_turn", ""),), source_format=name,
                )
            ]
        case "chat-completions":
            return [
                TraceRequest(file, 1, "main", "main", 0, None, None, "openai", "gpt-4o", source_format=name),
                TraceRequest(file, 2, "main", "main", 1, None, None, "openai", "gpt-4o", envelope=(("effort", "low"),), source_format=name),
            ]
        case "anthropic-bodies":
            return [TraceRequest(file, 1, "main", "main", 0, None, None, "anthropic", "claude-sonnet-4-20250514", source_format=name)]
        case "mooncake":
            return [
                TraceRequest(
                    file, line, "trace", "trace", seq, sent, None, "engine", "mooncake",
                    envelope=(("input_length", str(length)), ("output_length", str(out))),
                    hash_ids=hashes, block_tokens=(512,) * len(hashes), source_format=name,
                )
                for seq, (line, sent, length, out, hashes) in enumerate(((1, 0, 1000, 10, (1, 2)), (2, 250, 1500, 20, (1, 2, 3))))
            ]
        case "agent-traces":
            # Block size 4; the subagent's t counts from its entry's (2.0 + 0.5 s), its ttft
            # gives the time its response began; hash_id_scope local: the subagent's ids are the
            # conversation's (kv-cache-tester's v8 README), so its blocks 1 and 2 are the parent's.
            main, sub = "conv-1", "conv-1/agent_001"
            opus, haiku = "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"
            return [
                TraceRequest(
                    file, 1, lane, kind, seq, sent, ready, "engine", model,
                    envelope=(("input_length", str(length)), ("output_length", str(out))),
                    hash_ids=namespaced(file, 0, None, ids), block_tokens=(4,) * len(ids), source_format=name,
                    done_ms=done,  # t + api_time where the entry has one
                    path=path,  # every request is on line 1: where in its record
                )
                for seq, (lane, kind, sent, ready, done, model, length, out, ids, path) in enumerate((
                    (main, "main", 0, None, 1500, opus, 10, 5, (1, 2), "requests[0]"),
                    (sub, "subagent", 2500, 2750, None, haiku, 9, 3, (1, 2), "requests[1].requests[0]"),
                    (main, "main", 3000, None, None, opus, 13, 4, (1, 2, 3), "requests[2]"),
                ))
            ]
        case "opencode":
            # One request per step-finish; input excludes the cache (additive), output + reasoning
            # is billed output; the summary call is a lane of its own; the failed call is skipped.
            t0, sid = 1762000000000, "ses_6d2f0a1b3ffeABCDEF"
            build, summary = "opencode:build:anthropic", "opencode:compaction:anthropic"

            def step(seq: int, lane: str, kind: str, sent: int, usage: Usage, prefix: Prefix, events: tuple, key: str) -> TraceRequest:
                return TraceRequest(
                    file, 1, lane, kind, seq, sent, None, "anthropic", "claude-sonnet-4-5", usage=usage, prefix=prefix,
                    events=events, request_id=key, agent_version="0.15.8", source_format=name,
                    compaction_call=kind == "compaction", path=key,  # the export is one object: each call names its step
                )

            node = f"opencode:{sid}#"
            return [
                step(0, "main", "main", t0 + 100, Usage(cache_write_5m=9000, uncached=5, output=150),
                     Prefix(build, node + "msg_02/prt_msg_02_3", None, 1), (("user_turn", ""),), "msg_02/prt_msg_02_3"),
                step(1, "main", "main", t0 + 3000, Usage(cache_read=9000, cache_write_5m=400, uncached=7, output=200),
                     Prefix(build, node + "msg_02/prt_msg_02_6", node + "msg_02/prt_msg_02_3", 2), (), "msg_02/prt_msg_02_6"),
                step(2, "compaction", "compaction", t0 + 60100, Usage(uncached=9500, output=800),
                     Prefix(summary, node + "msg_04/prt_msg_04_2", None, 2), (), "msg_04/prt_msg_04_2"),
                step(3, "main", "main", t0 + 90000, Usage(cache_write_5m=2500, uncached=3000, output=40),
                     Prefix(build, node + "msg_07/prt_msg_07_2", None, 2),
                     (("compaction", "after the summary call"), ("user_turn", "")), "msg_07/prt_msg_07_2"),
            ]
        case "gemini-cli":
            # tokens.input includes cached (subset); tool is uncached input, thoughts are output;
            # the provider is whatever the table makes of the model's name (unknown until it has
            # Gemini's rules); the message without tokens is skipped.
            def gemini(seq: int, sent: int, model: str, usage: Usage, key: str, parent: str | None, events: tuple) -> TraceRequest:
                rules = provider_of_model(model)
                return TraceRequest(
                    file, 1, "main", "main", seq, sent, None, rules.name if rules else "unknown", model, usage=usage,
                    # (the head: one per workspace, the session's projectHash, and model)
                    prefix=Prefix(f"gemini-cli:main:b1946ac92492d2347c6235b4d2611184:{model}", f"gemini-cli:{file}#{key}",
                                  parent and f"gemini-cli:{file}#{parent}", 2),
                    events=events, request_id=key, source_format=name,
                    path={"g1": "messages[1]", "g2": "messages[2]", "g3": "messages[4]"}[key],  # all on line 1
                )

            return [
                gemini(0, 1759312800000, "gemini-2.5-pro", Usage(uncached=10000, output=500), "g1", None, (("user_turn", ""),)),
                gemini(1, 1759312806000, "gemini-2.5-pro", Usage(cache_read=9800, uncached=800, output=150), "g2", "g1", ()),
                gemini(2, 1759312860000, "gemini-2.5-flash", Usage(uncached=11005, output=70), "g3", "g2",
                       (("user_turn", ""), ("model_change", "gemini-2.5-pro -> gemini-2.5-flash"))),
            ]
        case "swe-agent":
            # mini-swe-agent 2.x through LiteLLM to Anthropic (newer LiteLLM: prompt_tokens includes
            # reads and writes); sent at the previous message's timestamp (the first: created).
            model = "claude-sonnet-4-5-20250929"
            return [
                TraceRequest(
                    file, 1, "main", "main", 0, 1761994800000, 1761994801500, "anthropic", model,
                    usage=Usage(cache_write_5m=3000, uncached=12, output=40),  # 3012 - 0 - 3000
                    request_id="chatcmpl-a1", agent_version="2.2.8", source_format=name,
                    path="messages[2]",  # the trajectory is one object: each call names its message
                ),
                TraceRequest(
                    file, 1, "main", "main", 1, 1761994802000, 1761994804000, "anthropic", model,
                    usage=Usage(cache_read=3000, cache_write_5m=105, uncached=5, output=25),  # 3110 - 3000 - 105
                    request_id="chatcmpl-a2", agent_version="2.2.8", source_format=name, path="messages[4]",
                ),
            ]
        case "otel":
            # Two chat spans under an invoke_agent span (its summed usage is not counted again);
            # input_tokens includes reads and writes, as the semantic conventions say.
            trace, model = "5b8efff798038103d269b633813fc60c", "claude-sonnet-4-5-20250929"
            first, second = (f"otel:{file}#{trace}:{span}:{i}" for i, span in enumerate(("bb00000000000002", "dd00000000000004")))
            return [
                TraceRequest(
                    file, 1, trace, "main", 0, 1761994800000, None, "anthropic", model,
                    usage=Usage(cache_write_5m=5000, uncached=12, output=40),  # 5012 - 0 - 5000
                    prefix=Prefix(f"otel:anthropic:{model}", first), request_id="msg_01", source_format=name, done_ms=1761994801500,
                    path="resourceSpans[0].scopeSpans[0].spans[1]",  # the export is one object: each call names its span
                ),
                TraceRequest(
                    file, 1, trace, "main", 1, 1761994802000, None, "anthropic", model,
                    usage=Usage(cache_read=5000, cache_write_5m=120, uncached=10, output=25),  # 5130 - 5000 - 120
                    prefix=Prefix(f"otel:anthropic:{model}", second, first), request_id="msg_02", source_format=name, done_ms=1761994804000,
                    path="resourceSpans[0].scopeSpans[0].spans[3]",
                ),
            ]
        case "litellm":
            # Two rows of one session (usage_object, then metadata as a JSON string), a row LiteLLM's
            # own response cache served (skipped), an older row with additional_usage_values only.
            claude = "claude-sonnet-4-5-20250929"
            head, first = f"litellm:anthropic:{claude}", f"litellm:{file}#1:chatcmpl-1"
            return [
                TraceRequest(
                    file, 1, "sess-1", "main", 0, 1761991200000, 1761991201200, "anthropic", claude,
                    usage=Usage(cache_write_5m=4000, uncached=20, output=50),  # 4020 - 0 - 4000
                    prefix=Prefix(head, first), request_id="chatcmpl-1", source_format=name, done_ms=1761991202000,
                ),
                TraceRequest(
                    file, 2, "sess-1", "main", 1, 1761991205000, 1761991205900, "anthropic", claude,
                    usage=Usage(cache_read=4000, cache_write_5m=300, uncached=8, output=12),  # 4308 - 4000 - 300
                    prefix=Prefix(head, f"litellm:{file}#2:chatcmpl-2", first), request_id="chatcmpl-2", source_format=name, done_ms=1761991206000,
                ),
                TraceRequest(
                    file, 4, "chatcmpl-4", "main", 2, 1761991260000, 1761991260400, "openai", "gpt-4o-2024-08-06",
                    usage=Usage(cache_read=1536, uncached=264, output=9),  # 1800 includes the 1536 cached
                    prefix=Prefix("litellm:openai:gpt-4o-2024-08-06", f"litellm:{file}#4:chatcmpl-4"), request_id="chatcmpl-4", source_format=name, done_ms=1761991261000,
                ),
            ]
        case "langfuse":
            # An observations API page: two Anthropic generations of one trace (usageDetails with
            # Anthropic's keys beside its uncached input: additive), in start order, a chain (their
            # input holds no messages); a failed one (level ERROR) skipped; an OpenAI generation
            # whose input_cached_tokens Langfuse split out of input, with its messages as the body.
            claude = "claude-sonnet-4-5-20250929"
            head, first = f"langfuse:anthropic:{claude}", f"langfuse:{file}#trace-a:gen-1"
            return [
                TraceRequest(
                    file, 1, "trace-a", "main", 0, 1761991200100, 1761991201200, "anthropic", claude,
                    usage=Usage(cache_write_5m=4000, uncached=20, output=50),
                    prefix=Prefix(head, first), request_id="gen-1", source_format=name, done_ms=1761991202000,
                    path="data[2]",  # the page is one object: each call names its observation
                ),
                TraceRequest(
                    file, 1, "trace-a", "main", 1, 1761991205000, 1761991205900, "anthropic", claude,
                    usage=Usage(cache_read=4000, cache_write_5m=300, uncached=8, output=12),
                    prefix=Prefix(head, f"langfuse:{file}#trace-a:gen-2", first), request_id="gen-2", source_format=name,
                    done_ms=1761991206000, path="data[1]",
                ),
                TraceRequest(
                    file, 1, "trace-b", "main", 2, 1761991260000, 1761991260600, "openai", "gpt-4o-2024-08-06",
                    usage=Usage(cache_read=1536, uncached=264, output=9),  # input 264 = 1800 - 1536 cached
                    request_id="gen-4", source_format=name, done_ms=1761991261000, path="data[4]",
                ),
            ]
        case "langsmith":
            # A runs query answer: a chain run (not a call); two Anthropic llm runs of one thread in
            # start order, a chain, one with LangSmith's own prompt_tokens, one with only the
            # message's usage_metadata (both include the cache buckets: uncached = prompt - read -
            # written); a failed one (error) skipped; an OpenAI run with only llm_output's raw usage.
            claude = "claude-sonnet-4-5-20250929"
            head, first = f"langsmith:anthropic:{claude}", f"langsmith:{file}#thread-a:llm-1"
            return [
                TraceRequest(
                    file, 1, "thread-a", "main", 0, 1761991200100, 1761991201200, "anthropic", claude,
                    usage=Usage(cache_write_5m=4000, uncached=20, output=50),  # 4020 - 0 - 4000
                    prefix=Prefix(head, first), request_id="llm-1", source_format=name, done_ms=1761991202000,
                    path="runs[2]",
                ),
                TraceRequest(
                    file, 1, "trace-b", "main", 1, 1761991203000, None, "openai", "gpt-4o-2024-08-06",
                    usage=Usage(cache_read=1536, uncached=464, output=40),  # 2000 - 1536 cached
                    prefix=Prefix("langsmith:openai:gpt-4o-2024-08-06", f"langsmith:{file}#trace-b:llm-4"),
                    request_id="llm-4", source_format=name, done_ms=1761991204000, path="runs[4]",
                ),
                TraceRequest(
                    file, 1, "thread-a", "main", 2, 1761991205000, None, "anthropic", claude,
                    usage=Usage(cache_read=4000, cache_write_5m=80, uncached=20, output=30),  # 4100 - 4000 - 80
                    prefix=Prefix(head, f"langsmith:{file}#thread-a:llm-2", first), request_id="llm-2",
                    source_format=name, done_ms=1761991206000, path="runs[1]",
                ),
            ]
        case "openrouter":
            # Generation answers one a line ({data}) and a bare generation: native counts, the
            # prompt including the cached and written parts; a failed one (finish_reason error)
            # skipped; a session is a lane, a generation naming none a lane of its own; done at created_at + latency.
            claude = "claude-sonnet-4.5"
            head, first = f"openrouter:anthropic:{claude}", f"openrouter:{file}#s1:gen-1"
            return [
                TraceRequest(
                    file, 1, "s1", "main", 0, 1761991200000, None, "anthropic", claude,
                    usage=Usage(cache_write_5m=4000, uncached=20, output=50),  # 4020 - 0 - 4000
                    prefix=Prefix(head, first), request_id="gen-1", source_format=name, done_ms=1761991202000,
                    path="data", upstream="Anthropic",
                ),
                TraceRequest(
                    file, 4, "gen-4", "main", 1, 1761991203000, None, "deepseek", "deepseek-chat-v3.1",
                    usage=Usage(cache_read=1536, uncached=464, output=40),  # 2000 - 1536
                    prefix=Prefix("openrouter:deepseek:deepseek-chat-v3.1", f"openrouter:{file}#gen-4:gen-4"),
                    request_id="gen-4", source_format=name, done_ms=1761991204500, upstream="DeepInfra",
                    read_step=64,  # DeepSeek's reads through OpenRouter's route (the provider rules' route step)
                ),
                TraceRequest(
                    file, 2, "s1", "main", 2, 1761991205000, None, "anthropic", claude,
                    usage=Usage(cache_read=4000, cache_write_5m=80, uncached=20, output=30),  # 4100 - 4000 - 80
                    prefix=Prefix(head, f"openrouter:{file}#s1:gen-2", first), request_id="gen-2", source_format=name,
                    done_ms=1761991206000, path="data", upstream="Anthropic",
                ),
            ]
        case "helicone":
            # A request query answer: disjoint columns (uncached = prompt_tokens); a session is a
            # lane, a user another; a failed request (status 529) skipped; ready at
            # time_to_first_token, done at response_created_at, else delay_ms after it was sent.
            claude = "claude-sonnet-4-5-20250929"
            head, first = f"helicone:anthropic:{claude}", f"helicone:{file}#s1:h1"
            return [
                TraceRequest(
                    file, 1, "s1", "main", 0, 1761991200000, 1761991201200, "anthropic", claude,
                    usage=Usage(cache_write_5m=4000, uncached=20, output=50),
                    prefix=Prefix(head, first), request_id="h1", source_format=name, done_ms=1761991202000, path="data[0]",
                ),
                TraceRequest(
                    file, 1, "u2", "main", 1, 1761991203000, 1761991203300, "openai", "gpt-4o-2024-08-06",
                    usage=Usage(cache_read=1536, uncached=464, output=40),
                    prefix=Prefix("helicone:openai:gpt-4o-2024-08-06", f"helicone:{file}#u2:h4"),
                    request_id="h4", source_format=name, done_ms=1761991204000, path="data[3]",
                ),
                TraceRequest(
                    file, 1, "s1", "main", 2, 1761991205000, None, "anthropic", claude,
                    usage=Usage(cache_read=4000, cache_write_5m=80, uncached=20, output=30),
                    prefix=Prefix(head, f"helicone:{file}#s1:h2", first), request_id="h2", source_format=name,
                    done_ms=1761991206000, path="data[1]",
                ),
            ]
        case "openhands":
            # A saved trajectory: two action events, each with the raw response of its call;
            # sent at the previous event's time, ready at the action's.
            model = "claude-sonnet-4-5-20250929"
            head, first = f"openhands:anthropic:{model}", f"openhands:{file}#main:0"
            return [
                TraceRequest(
                    file, 14, "main", "main", 0, 1761991200000, 1761991204500, "anthropic", model,
                    usage=Usage(cache_write_5m=8000, uncached=12, output=60),  # 8012 - 0 - 8000
                    prefix=Prefix(head, first), request_id="oh-1", source_format=name,
                ),
                TraceRequest(
                    file, 98, "main", "main", 1, 1761991205000, 1761991209000, "anthropic", model,
                    usage=Usage(cache_read=8000, cache_write_5m=120, uncached=20, output=30),  # 8140 - 8000 - 120
                    prefix=Prefix(head, f"openhands:{file}#main:1", first), request_id="oh-2", source_format=name,
                ),
            ]
        case "cline":
            # A ui_messages.json of Cline 3.x (modelInfo on each entry), Anthropic's handler: additive.
            model = "claude-sonnet-4-5-20250929"
            return [
                TraceRequest(
                    file, 3, "main", "main", 0, 1761987601000, None, "anthropic", model,
                    usage=Usage(cache_write_5m=9000, uncached=4, output=120),
                    prefix=Prefix(f"cline:{Path(file).parent}:{model}", f"cline:{file}#0"),  # the call's place
                    events=(("user_turn", ""),), source_format=name,
                )
            ]
        case "amp":
            # A thread of January 2026: usage on the assistant message, Claude's additive counts.
            model = "claude-sonnet-4-5-20250929"
            tid = "T-5b0c7a1e-0000-4000-8000-000000000001"
            return [
                TraceRequest(
                    file, 1, "main", "main", 0, 1768822795000, None, "anthropic", model,
                    usage=Usage(cache_write_5m=7000, uncached=6, output=80),
                    prefix=Prefix(f"amp:main:{model}", f"amp:{file}:{tid}#1:0", None, 2),  # (one head every thread)
                    events=(("user_turn", ""),), request_id=f"{tid}#1", source_format=name,
                    done_ms=1768822800000,  # the usage's timestamp: the call had ended
                    path="messages[1]",  # the thread is one object: the call names its message
                )
            ]
        case "continue-cli":
            # A cn session: usage on the assistant message, the Anthropic adapter's split (additive).
            model = "claude-sonnet-4-5-20250929"
            sid = "8d0f7c2e-1a3b-4c5d-9e6f-0a1b2c3d4e5f"
            return [
                TraceRequest(
                    file, 1, "main", "main", 0, None, None, "anthropic", model,
                    usage=Usage(cache_write_5m=7000, uncached=6, output=80),  # prompt_tokens excludes the write
                    prefix=Prefix(f"continue-cli:main:{model}", f"continue-cli:{file}:{sid}#2", None, 2),  # system and user
                    events=(("user_turn", ""),), request_id=f"{sid}#2", source_format=name,
                    path="history[2]",  # the session is one object: the call names its history item
                )
            ]
        case "trae-agent":
            # A trajectory of Trae's anthropic client: Anthropic's additive counts, the time read as UTC.
            model = "claude-sonnet-4-20250514"
            return [
                TraceRequest(
                    file, 1, "main", "main", 0, 1752156135500, None, "anthropic", model,
                    usage=Usage(uncached=1830, output=95),
                    # system and task; the head keyed by a digest of the logged system prompt and tool names
                    prefix=Prefix(f"trae-agent:main:7e493dcaec5d:{model}", f"trae-agent:{file}:0", None, 2),
                    events=(("user_turn", ""),), request_id="0", source_format=name,
                    done_ms=1752156135500,  # the response had come back; no send time is kept
                    path="llm_interactions[0]",
                )
            ]
        case "kimi-cli":
            # A wire.jsonl of protocol 1.3: one step, Kimi's usage normalized to additive by kosong.
            return [
                TraceRequest(
                    file, 5, "main", "main", 0, 1770000000250, 1770000001500, "moonshot", "kimi-for-coding",
                    usage=Usage(uncached=5200, output=40),
                    prefix=Prefix(f"kimi-cli:{Path(file).parent}:main", f"kimi-cli:{file}#5", None, 2),
                    events=(("user_turn", ""),), request_id="chatcmpl-fixture1", agent_version="wire 1.3",
                    source_format=name, done_ms=1770000002000,
                )
            ]
        case "managed-agents":
            # Two model request spans of one turn: sent at the span's start, done at its end;
            # Anthropic's additive counts; no event names the model.
            head = f"managed-agents:{file}:main:unknown"
            return [
                TraceRequest(
                    file, 5, "main", "main", 0, 1785578400200, None, "anthropic", "unknown",
                    usage=Usage(cache_write_5m=6000, uncached=3, output=40),
                    prefix=Prefix(head, f"managed-agents:{file}#5"), events=(("user_turn", ""),),
                    request_id="sevt_fx05", source_format=name, done_ms=1785578403000,
                ),
                TraceRequest(
                    file, 9, "main", "main", 1, 1785578404500, None, "anthropic", "unknown",
                    usage=Usage(cache_read=6000, cache_write_5m=90, uncached=2, output=12),
                    prefix=Prefix(head, f"managed-agents:{file}#9", f"managed-agents:{file}#5"),
                    request_id="sevt_fx09", source_format=name, done_ms=1785578406000,
                ),
            ]
        case "inspect-ai":
            # An Inspect log of release 0.3.130: Anthropic's input_tokens excludes the read and
            # written parts (additive) in every release. The third model event was answered from
            # Inspect's local cache (cache: read): no provider call, skipped. Each sample and epoch
            # a lane; a call extends the previous call of its model; the head digests the event's
            # tools and system messages.
            head = "inspect:anthropic/claude-sonnet-4-20250514:" + head_digest(
                [[{"name": "bash", "description": "run a command"}], ["You are a careful engineer."]])
            node = f"inspect:{file}#samples[0].events["
            return [
                TraceRequest(
                    file, 1, "1_epoch_1", "main", 0, 1756720801000, None, "anthropic", "claude-sonnet-4-20250514",
                    usage=Usage(cache_write_5m=9000, uncached=3, output=120), prefix=Prefix(head, node + "1]"),
                    request_id="ev-1", source_format=name, done_ms=1756720803000, path="samples[0].events[1]",
                ),
                TraceRequest(
                    file, 1, "1_epoch_1", "main", 1, 1756720805000, None, "anthropic", "claude-sonnet-4-20250514",
                    envelope=(("effort", "high"),), usage=Usage(cache_read=9000, cache_write_5m=1200, uncached=4, output=80),
                    prefix=Prefix(head, node + "3]", node + "1]"), request_id="ev-2", source_format=name, done_ms=1756720806000,
                    path="samples[0].events[3]",
                ),
            ]
        case "zed":
            # A 0.2.0 thread: request_token_usage has one entry per message; each assistant
            # message's entry is its call's (Anthropic: additive); the entry at message 5 is a copy
            # of message 3's (its call reported none): skipped. No times in a thread.
            head = "zed:main:claude-sonnet-4-20250514"

            def call(seq: int, index: int, usage: Usage, parent: int | None, blocks: int, events: tuple) -> TraceRequest:
                return TraceRequest(
                    file, 1, "main", "main", seq, None, None, "anthropic", "claude-sonnet-4-20250514", usage=usage,
                    prefix=Prefix(head, f"zed:main#{index}", None if parent is None else f"zed:main#{parent}", blocks),
                    events=events, request_id=f"main#{index}", source_format=name, path=f"messages[{index}]",
                )

            return [
                call(0, 1, Usage(cache_write_5m=9000, uncached=3, output=120), None, 1, (("user_turn", ""),)),
                call(1, 2, Usage(cache_read=9000, cache_write_5m=400, uncached=5, output=80), 1, 3, ()),
                call(2, 3, Usage(cache_read=9400, cache_write_5m=300, uncached=4, output=30), 2, 3, ()),
                call(3, 6, Usage(cache_read=9700, cache_write_5m=250, uncached=6, output=50), 3, 3, (("user_turn", ""),)),
            ]
        case "openhands-completions":
            # One completion log (software-agent-sdk 1.x): the body sent, LiteLLM's Anthropic usage
            # (2410 - 0 read - 2400 written = 10 uncached); logged at the timestamp, sent latency_sec before.
            return [
                TraceRequest(
                    file, 1, "main", "main", 0, 1788000001250, None, "anthropic", "claude-sonnet-4-5-20250929",
                    usage=Usage(cache_write_5m=2400, uncached=10, output=35),
                    request_id="chatcmpl-fixture-1", source_format=name, done_ms=1788000003500,
                )
            ]
        case "copilot-cli":
            # Six exported assistant_usage_events rows (sqlite3 -json: one element a line, the
            # first at line 2): input_tokens holds the reads and writes (12000 - 0 - 11500 = 500,
            # 12800 - 11500 - 700 = 600, 5000 - 0 - 4800 = 200, 9000 - 6144 - 0 = 2856); done at
            # created_at, sent duration_ms before; the agent's row a subagent lane; the row of no
            # tokens (line 6) skipped; NULL cache counts (line 7) not reported.
            node = lambda line, seq: f"copilot-cli:{file}#{line}:{seq}"  # noqa: E731
            return [
                TraceRequest(
                    file, 2, "a1", "main", 0, 1791144921000, None, "anthropic", "claude-sonnet-4.6",
                    usage=Usage(cache_write_5m=11500, uncached=500, output=300),
                    prefix=Prefix("copilot-cli:main:claude-sonnet-4.6", node(2, 0)), events=(("user_turn", ""),),
                    request_id="a1#1", source_format=name, done_ms=1791144925000,
                ),
                TraceRequest(
                    file, 3, "a1", "main", 1, 1791144928500, None, "anthropic", "claude-sonnet-4.6",
                    usage=Usage(cache_read=11500, cache_write_5m=700, uncached=600, output=120),
                    prefix=Prefix("copilot-cli:main:claude-sonnet-4.6", node(3, 1), node(2, 0)),
                    request_id="a1#2", source_format=name, done_ms=1791144931000,
                ),
                TraceRequest(
                    file, 4, "a1/explore-1", "subagent", 2, 1791144932500, None, "anthropic", "claude-haiku-4.5",
                    usage=Usage(cache_write_5m=4800, uncached=200, output=80),
                    prefix=Prefix("copilot-cli:subagent:claude-haiku-4.5", node(4, 2)),
                    request_id="a1#3", source_format=name, done_ms=1791144934000,
                ),
                TraceRequest(
                    file, 5, "a1", "main", 3, 1791144968000, None, "openai", "gpt-5.4",
                    usage=Usage(cache_read=6144, uncached=2856, output=50),
                    prefix=Prefix("copilot-cli:main:gpt-5.4", node(5, 3), node(3, 1)),
                    events=(("user_turn", ""), ("model_change", "claude-sonnet-4.6 -> gpt-5.4")),
                    request_id="a1#4", source_format=name, done_ms=1791144970000,
                ),
                TraceRequest(
                    file, 7, "b2", "main", 4, 1791187202000, None, "gemini", "gemini-2.5-pro",
                    usage=Usage(uncached=3000, output=20, cache_reported=False),
                    prefix=Prefix("copilot-cli:main:gemini-2.5-pro", node(7, 4)), events=(("user_turn", ""),),
                    request_id="b2#6", source_format=name, done_ms=1791187202000,
                ),
            ]
        case "aider":
            # One call per Tokens line, without times; 'sent' is the whole prompt (hit and write
            # inside it), counts as aider printed them (3.2k = 3,200). A run printing no cache
            # count (0.47: streamed, or a provider without cache) reads as cache not reported.
            first, second = "2025-03-01 10:00:00", "2025-03-02 09:30:00"

            def call(seq: int, line: int, lane: str, model: str, provider: str, usage: Usage, parent: int | None,
                     blocks: int, events: tuple, head: str, read_step: int = 0) -> TraceRequest:
                return TraceRequest(
                    file, line, lane, "main", seq, None, None, provider, model, usage=usage,
                    prefix=Prefix(head, f"aider:{lane}#{line}", None if parent is None else f"aider:{lane}#{parent}", blocks),
                    events=events, request_id=f"{lane}#{line}", source_format=name, read_step=read_step,
                )

            sonnet, turn = "claude-3-7-sonnet-20250219", (("user_turn", ""),)
            return [
                call(0, 26, first, sonnet, "anthropic", Usage(cache_write_5m=2500, uncached=700, output=344), None, 1, turn, f"aider:diff:{sonnet}"),
                call(1, 33, first, sonnet, "anthropic", Usage(cache_read=9800, cache_write_5m=1100, uncached=1100, output=1200), 26, 2, turn,
                     f"aider:diff:{sonnet}"),
                # After /clear the chat starts anew: a chain of its own.
                call(2, 42, first, sonnet, "anthropic", Usage(cache_read=5000, output=87), None, 1, turn, f"aider:diff:{sonnet}"),
                # DeepSeek read in 64-token units before V4 (2026-04-24): dated by its run's start.
                call(3, 54, second, "deepseek/deepseek-chat", "deepseek", Usage(uncached=12345, output=678, cache_reported=False), None, 1, turn,
                     "aider:diff:deepseek/deepseek-chat", read_step=64),
                call(4, 64, second, "gpt-4o", "openai", Usage(uncached=2001, output=99, cache_reported=False), 54, 2,
                     (("model_change", "gpt-4o"), ("user_turn", "")), "aider:diff:gpt-4o"),
                # Aider 0.75.1 on litellm's Anthropic route: 'sent' (9.0k) counts the 3.0k write twice.
                call(5, 75, "2025-03-03 18:00:00", "anthropic/claude-3-7-sonnet-20250219", "anthropic",
                     Usage(cache_read=2000, cache_write_5m=3000, uncached=1000, output=100), None, 1, turn,
                     "aider:diff:anthropic/claude-3-7-sonnet-20250219"),
            ]
    raise AssertionError(f"no expected reading for format {name!r}: add one here and fixtures/{name}.jsonl")


def module_of(name: str) -> str:
    return f"prefixbench.workloads.logs.formats.{name.replace('-', '_')}"


def check_table() -> None:
    """Every format has its module (exposing the table's object), a fixture and an expected reading."""
    for name, fmt in formats.FORMATS.items():
        assert fmt.name == name
        try:
            module = importlib.import_module(module_of(name))
        except ModuleNotFoundError:
            raise AssertionError(f"format {name!r} has no module {module_of(name)}") from None
        assert module.FORMAT is fmt, f"{module_of(name)}.FORMAT is not the table's {name!r}"
        assert fixture(name).is_file(), f"no fixture for format {name!r}: add fixtures/{name}.jsonl (or .json)"
        expected(name)


def test_every_format_has_a_module_a_fixture_and_an_expected_reading() -> None:
    check_table()


def test_a_format_added_without_fixtures_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    planted = replace(FORMATS["mooncake"], name="planted")
    monkeypatch.setitem(formats.FORMATS, "planted", planted)
    with pytest.raises(AssertionError, match="'planted'"):
        check_table()
    # With a module of its own, the missing fixture and expected reading still fail.
    real = importlib.import_module
    module = type("Module", (), {"FORMAT": planted})
    monkeypatch.setattr(importlib, "import_module", lambda name: module if name == module_of("planted") else real(name))
    with pytest.raises(AssertionError, match="no fixture for format 'planted'"):
        check_table()


def _choices(command: str) -> tuple[str, ...]:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command")
    action = next(a for a in sub.choices[command]._actions if a.dest == "input")
    return tuple(action.choices)


def test_every_audit_input_choice_is_a_format_of_the_table() -> None:
    choices = _choices("audit")
    assert choices[0] == "auto"
    for choice in choices[1:]:
        fmt = formats.resolve(choice)
        assert fmt is not None and fmt.name in FORMATS and fixture(fmt.name).is_file()
    assert set(FORMATS) <= set(choices)


def test_replay_input_choices_are_the_replayable_formats() -> None:
    assert _choices("replay") == tuple(REPLAYS) == ("chat-completions", "anthropic-capture")
    replayable = {fmt.replay.name: fmt for fmt in FORMATS.values() if fmt.replay is not None}
    assert set(replayable) == set(REPLAYS)
    assert formats.resolve("anthropic-capture") is replayable["anthropic-capture"]


@pytest.mark.parametrize("name", list(FORMATS))
def test_detector(name: str) -> None:
    """The fixture is detected as its format, and no other format's detector matches one of its
    records as decisively."""
    assert detect_format(fixture(name)) is FORMATS[name]
    fmt = FORMATS[name]
    if fixture(name).suffix == ".md":  # text told by its content as a whole: no JSON record in it
        assert fmt.detect_file is not None and fmt.detect_file(fixture(name))
        return
    for record in iter_records(fixture(name)):
        own = fmt.detect(record.value)
        assert own is not None, f"{name}:{record.line} not recognised by its own detector"
        for other in FORMATS.values():
            if other is not fmt:
                theirs = other.detect(record.value)
                assert theirs is None or theirs > own, f"{name}:{record.line} matches {other.name} as well ({theirs!r})"


@pytest.mark.parametrize("name", list(FORMATS))
def test_reader(name: str) -> None:
    requests, summary = import_file(fixture(name), FORMATS[name], ImportContext())
    assert summary.format == name and summary.requests == len(requests)
    bodies = [r.body for r in requests]
    # The logged messages are checked in tests/unit/audit/test_locate.py (transcripts keep them).
    assert [replace(r, body=None, messages=()) for r in requests] == expected(name)
    if name in ("claude-code", "pi"):
        assert all(r.messages for r in requests)
    if FORMATS[name].usage == "none" or name == "http-capture":
        assert all(b is None or b.envelope.model == r.model for b, r in zip(bodies, requests))


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_file_of_another_format_is_refused_under_an_explicit_input(name: str) -> None:
    """Read as any other format (one that does not admit it), a fixture is a one-line error."""
    for other in FORMATS.values():
        if other.name == name or name in other.admits:
            continue
        with pytest.raises(UserError):
            import_file(fixture(name), other, ImportContext())


def test_the_unknown_format_message_lists_every_kind_of_log(tmp_path: Path) -> None:
    log = tmp_path / "x.jsonl"
    log.write_text('{"neither": 1}\n')
    with pytest.raises(UserError) as caught:
        detect_format(log)
    assert str(caught.value) == (
        f"{log}:1: unknown log format (not a Claude Code transcript, HTTP capture, Codex rollout, "
        "pi session, request-body log, Mooncake trace, block-hash agent trace, OpenCode session, Gemini CLI session, "
        "SWE-agent trajectory, OpenTelemetry span export, LiteLLM spend log, Langfuse observation export, LangSmith run export, "
                "OpenRouter generation export, Helicone request export, OpenHands event stream, "
                "Cline task folder, "
            "Amp thread, Kimi CLI wire log, Managed Agents event stream, OpenHands completion log, Zed thread, Copilot CLI session store, "
        "aider chat history, Continue session, Trae Agent trajectory or Inspect AI log); "
        "audit reads only these"
    )


def test_format_objects_are_complete() -> None:
    for fmt in FORMATS.values():
        assert isinstance(fmt, LogFormat)
        assert fmt.noun and fmt.nouns and fmt.description and fmt.versions
        assert "\n" not in fmt.description
        assert fmt.usage in ("additive", "subset", "by-endpoint", "none")


@pytest.mark.parametrize("name", list(FORMATS))
def test_an_explicit_input_on_content_of_no_format_is_refused(tmp_path: Path, name: str) -> None:
    """``--input NAME`` on a file none of whose records is of NAME (nor of any format) is a
    one-line error, not an audit of 0 requests; the hint names ``--input auto``, which exists."""
    log = tmp_path / "x.jsonl"
    log.write_text('{"neither": 1}\n{"nor": 2}\n')
    with pytest.raises(UserError) as caught:
        import_file(log, FORMATS[name], ImportContext())
    message = str(caught.value)
    assert message.startswith(f"{log}:") and "\n" not in message
    if name in ("claude-code", "http-capture", "codex", "pi", "cline"):  # these read such a file as 0 requests
        assert message == (
            f"{log}:1: not {noun_a(FORMATS[name].noun)} (no record of it among the first lines; --input auto detects what it is)"
        )


def test_the_refusal_puts_the_right_article_before_the_format() -> None:
    """``not an OpenCode session``, ``not an HTTP capture`` (it said ``not a OpenCode session``)."""
    assert noun_a("OpenCode session") == "an OpenCode session"
    assert noun_a("HTTP capture") == "an HTTP capture"
    assert noun_a("Amp thread") == "an Amp thread"
    assert noun_a("Codex rollout") == "a Codex rollout"
    assert noun_a("SWE-agent trajectory") == "a SWE-agent trajectory"
    assert noun_a("pi session") == "a pi session"


def test_a_record_of_another_format_names_the_input_that_reads_it() -> None:
    with pytest.raises(UserError, match=r"a codex record in a file read as pi \(--input codex reads it\)$"):
        import_file(fixture("codex"), FORMATS["pi"], ImportContext())


@pytest.mark.parametrize(("first", "then"), [("codex", "pi"), ("pi", "claude-code"), ("claude-code", "codex")])
def test_another_log_appended_past_the_first_lines_is_refused(
    tmp_path: Path, first: str, then: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two logs concatenated into one file: the second's records, past the lines the format check
    reads, were skipped unseen (a Codex rollout with a pi session after it: 39 requests audited,
    the pi session's 439 and $30.33 gone, exit 0). Now one line naming the first such record."""
    from prefixbench.reports.cli import main

    fixtures = Path(__file__).parent / "fixtures"
    head = (fixtures / f"{first}.jsonl").read_text()
    padding = "\n" * 300  # blank lines: the second log starts past the first 200 lines
    log = tmp_path / "two.jsonl"
    log.write_text(head + padding + (fixtures / f"{then}.jsonl").read_text())
    line = head.count("\n") + 300 + 1
    assert main(["audit", str(log), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {log}:{line}: a {then} record in a file read as {first}: another log appended to this one? "
        "(a file is one log; split it, or audit each part)")


@pytest.mark.parametrize("at", [4, 150, formats.CHECK_LINES])
def test_each_of_the_first_lines_is_checked_on_its_own(tmp_path: Path, at: int) -> None:
    """Every one of a file's first ``CHECK_LINES`` lines is classified on its own, not only until
    its first lines settle its format: a Qwen Code entry (Claude Code's keys and ``type``, a Gemini
    ``parts`` message) after a Claude Code transcript's own entries is refused wherever it falls
    among those lines. (The check past them classifies each new kind of record once, and this one's
    kind, a ``user`` entry, is the transcript's own: deciding the format early from the first lines
    and leaving the rest to that check would read this file as a transcript.)"""
    head = fixture("claude-code").read_text()
    qwen = ('{"parentUuid": "u2", "isSidechain": false, "sessionId": "s1", "type": "user", "uuid": "q1", '
            '"timestamp": "2025-09-03T00:00:05.000Z", "message": {"role": "user", "parts": [{"text": "hi"}]}}\n')
    log = tmp_path / "mixed.jsonl"
    log.write_text(head + "\n" * (at - 1 - head.count("\n")) + qwen + head)
    with pytest.raises(UserError) as caught:
        import_file(log, FORMATS["claude-code"], ImportContext())
    assert str(caught.value) == f"{log}:{at}: a gemini-cli record in a file read as claude-code (--input gemini-cli reads it)"
