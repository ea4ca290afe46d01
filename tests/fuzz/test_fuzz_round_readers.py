"""Fuzz the readers' newer paths on whole logs: an Agentic Mooncake v2 trace (header and
dependency rows), a SWE-agent RetryAgent trajectory with its ``attempt_<n>/`` files, a
mini-swe-agent FormatError message keeping its response, an OpenHands 1.x SystemPromptEvent, an
agent-traces conversation's ``hash_id_scope``, a Trae nudge, a Codex ``-codex`` model's reasoning
token counts, Gemini CLI's api_response beside gen_ai records, Claude Code's llm_request spans,
a LiteLLM spend-logs page and a Langfuse v2 raw-string input. One file of the log gets up to
three structural edits (any JSON value or a nasty scalar at any place, or a key deleted), and
at times JSON text or nesting that broke a reader once (:data:`EMBEDDED`) at one place; it is
written as lines or pretty-printed, and may be read under any ``--input``: ``audit`` ends in exit 0
or one line of exit 2, never an exception or a hang."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings
from tests.unit.logs import test_codex, test_mooncake, test_swe_agent, test_trae_agent
from tests.unit.logs.test_agent_traces import conversation
from tests.unit.logs.test_openhands import V1

FIXTURES = Path(__file__).parents[1] / "unit" / "logs" / "fixtures"
INPUTS = ("auto", "mooncake", "swe-agent", "openhands", "agent-traces", "trae-agent", "codex", "gemini-cli", "otel", "litellm",
          "langfuse", "claude-code", "chat-completions")


def _lines(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _mooncake(root: Path) -> Path:
    row = test_mooncake.agentic_row
    _lines(root / "t.jsonl", [
        test_mooncake.AGENTIC_HEADER,
        row("a0", "alpha", "root", [1, 2], 0.0, 8),
        row("a1", "alpha", "explore", [1, 2], 100.5, 8,
            dependencies=[{"request_id": "a0", "trigger": "dispatch", "delay_ms": 100.5, "relation": "spawn"}]),
        row("a2", "alpha", "root", [1, 2, 3], 900.0, 13,
            dependencies=[{"request_id": "a1", "trigger": "completion", "delay_ms": 0.0, "relation": "join"}]),
        row("b0", "beta", "root", [1, 2], 0.0, 8),
    ])
    return root / "t.jsonl"


def _retry_agent(root: Path) -> Path:
    attempts = [test_swe_agent._attempt(3), test_swe_agent._attempt(2)]
    parent = test_swe_agent.write(root / "i.traj", test_swe_agent.retry_traj(attempts, 1))
    for n, attempt in enumerate(attempts):
        (root / f"attempt_{n}").mkdir()
        test_swe_agent.write(root / f"attempt_{n}" / "i.traj", attempt)
    return parent


def _format_error(root: Path) -> Path:
    sw, gpt = test_swe_agent, "gpt-4o-2024-08-06"
    messages = [sw.SYSTEM, sw.TASK,
                {"role": "assistant", "content": None, "tool_calls": sw.call(1),
                 "extra": {"response": sw.response("r1", gpt, sw.openai_usage(2000, 0, 30)), "cost": 0.01, "timestamp": 1761994801.0}},
                {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py", "extra": {"timestamp": 1761994802.0}},
                {"role": "user", "content": "No tool calls found.",
                 "extra": {"interrupt_type": "FormatError", "cost": 0.002, "response": sw.response("r2", gpt, sw.openai_usage(2100, 1920, 9))}}]
    value = sw.mini_v2(messages, model=gpt)
    value["info"]["mini_version"] = "2.4.6"
    return sw.write(root / "t.traj.json", value)


def _openhands(root: Path) -> Path:
    shutil.copytree(V1, root / "c")
    return next((root / "c" / "events").glob("event-00000-*.json"))


def _agent_traces(root: Path) -> Path:
    _lines(root / "t.jsonl", [conversation("local"), conversation("per_context", ident="d")])
    return root / "t.jsonl"


def _trae(root: Path) -> Path:
    t, gpt5 = test_trae_agent, "gpt-5-2025-08-07"

    def reasoned(i: int, o: int, r: int) -> dict:
        return t._usage(i, o, 0, r) | {"reasoning_tokens": o - 100}

    calls = [t._call("2025-11-14T15:35:52.000000", "openai", gpt5,
                     [{"role": "system", "content": "You are an expert."}, {"role": "user", "content": "go " * 300}], reasoned(8710, 900, 6400)),
             t._call("2025-11-14T15:35:58.000000", "openai", gpt5, [t._result("c1", "a")], reasoned(9710, 1200, 9600)),
             t._call("2025-11-14T15:36:10.000000", "openai", gpt5,
                     [{"role": "user", "content": "It seems that you have not completed the task."}], reasoned(9320, 300, 8704))]
    return t._trajectory(root / "trajectory.json", calls)


def _codex(root: Path) -> Path:
    c = test_codex

    def tc(total: tuple[int, int, int], last: tuple[int, int, int], reasoning: int) -> dict:
        event = c._tc(*total, *last)
        event["info"]["last_token_usage"]["reasoning_output_tokens"] = reasoning
        return event

    return c._codex(root / "rollout-1.jsonl", [
        ("2025-11-17T21:32:46.000Z", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        ("2025-11-17T21:32:50.000Z", tc((10000, 0, 2000), (10000, 0, 2000), 1500)),
        ("2025-11-17T21:32:52.000Z", {"type": "function_call_output", "call_id": "c", "output": "ok"}),
        ("2025-11-17T21:32:55.000Z", tc((22500, 11392, 2030), (12500, 11392, 30), 0)),
    ])


def _fixture(name: str) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        return Path(shutil.copy(FIXTURES / name, root / name))
    return make


#: Each log: a function writing it into a folder and giving the file the edits go to.
LOGS: dict[str, Callable[[Path], Path]] = {
    "agentic-mooncake": _mooncake,
    "swe-agent-retry": _retry_agent,
    "mini-format-error": _format_error,
    "openhands-system-prompt": _openhands,
    "agent-traces-scope": _agent_traces,
    "trae-nudge": _trae,
    "codex-reasoning": _codex,
    "gemini-cli-0.12-otel": _fixture("otel_gemini_cli_0_12.jsonl"),
    "claude-code-spans": _fixture("otel_claude_code_traces.json"),
    "litellm-page": _fixture("litellm-spend-logs-ui.json"),
    "langfuse-v2": _fixture("langfuse-v2.json"),
}


#: Values that broke this round's readers: JSON text nested deeper than a decoder goes, or
#: holding a lone surrogate (a raw-string input), and arrays nested just within or past what
#: ``json`` reads (an OpenHands event's tools), written in place of ``_DEEP<n>``.
EMBEDDED = ("[" * 3000 + "]" * 3000, '[{"role": "user", "content": "a\ud800"}]', '{"messages": [{"role": "user", "content": "\udc00"}]}',
            "[1e999]", '{"messages": [{"role": "user", "content": "hi"}]}', "_DEEP150", "_DEEP970", "_DEEP980", "_DEEP985")


#: Fields holding a body or a head, JSON text at times.
HOT = frozenset(("input", "tools", "system_prompt", "metadata", "response", "replay_config", "messages", "history", "query",
                 "input_messages", "content", "text"))


def _embed(doc: object, place: int, value: str) -> object:
    """``doc`` with its ``place``-th string or container (depth first, ``place`` wrapped) set to ``value``."""
    spots: list[tuple[object, object]] = []

    def walk(node: object) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            if isinstance(child, (str, list, dict)):
                spots.append((node, key))
            walk(child)

    walk(doc)
    # Half the time a field that holds a body or a head (where JSON text and nesting are read).
    hot = [spot for spot in spots if spot[1] in HOT]
    spots = hot if hot and place % 2 else spots
    if spots:
        node, key = spots[place // 2 % len(spots)]
        node[key] = value  # type: ignore[index]
    return doc


def _deep(text: str) -> str:
    for depth in (150, 970, 980, 985):
        text = text.replace(f'"_DEEP{depth}"', "[" * depth + "]" * depth)
    return text


def _load(path: Path) -> tuple[bool, object]:
    """``(is_lines, document)``: a JSON-lines file as the list of its rows."""
    text = path.read_text()
    try:
        return False, json.loads(text)
    except json.JSONDecodeError:
        return True, [json.loads(line) for line in text.splitlines() if line.strip()]


def test_this_rounds_readers_end_cleanly_on_edited_logs(importer_examples):
    tally = Tally("round readers", bound_s=20)

    @fuzz_settings(importer_examples)
    @given(name=st.sampled_from(sorted(LOGS)), data=st.data(), pretty=st.booleans(), folder=st.booleans(),
           fmt=st.one_of(st.just("auto"), st.sampled_from(INPUTS)), output=st.sampled_from(("json", "table")))
    def case(name: str, data: st.DataObject, pretty: bool, folder: bool, fmt: str, output: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            target = LOGS[name](root)
            lines, doc = _load(target)
            doc = data.draw(edited(st.just(doc), max_edits=3))
            if data.draw(st.integers(0, 3)) == 0:
                doc = _embed(doc, data.draw(st.integers(0, 10_000)), data.draw(st.sampled_from(EMBEDDED)))
            if lines and isinstance(doc, list) and not pretty:
                text = "".join(json.dumps(row) + "\n" for row in doc)
            else:
                text = json.dumps(doc, indent=2 if pretty else None)
            target.write_text(_deep(text), errors="surrogatepass")
            tally.check(["audit", "--quiet", "--format", output, "--input", fmt, str(root if folder else target)])

    case()
    tally.report()


def test_any_agentic_mooncake_dependency_graph_counts_each_row_once(importer_examples):
    """Agentic Mooncake v2 rows of any plays, sessions and start times whose dependencies name any
    request ids: themselves, later rows, each other in a cycle, none of the file's. ``audit`` ends
    in exit 0 or one line of exit 2, and what it reads is every row, once."""
    from prefixbench.workloads.audit.core import load_trace

    tally = Tally("agentic mooncake dependencies", bound_s=20)
    ids = [f"r{i}" for i in range(6)]
    rows = st.lists(st.tuples(st.sampled_from(("alpha", "beta")), st.sampled_from(("root", "explore", "plan")),
                              st.floats(0, 5000, allow_nan=False), st.lists(st.integers(1, 6), max_size=4),
                              st.lists(st.tuples(st.sampled_from((*ids, "gone")), st.sampled_from(("dispatch", "completion", 7, None)),
                                                 st.one_of(st.floats(allow_nan=True), st.integers(-5, 5), st.none())), max_size=3)),
                    min_size=1, max_size=len(ids))

    @fuzz_settings(importer_examples)
    @given(rows=rows)
    def case(rows) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "t.jsonl"
            _lines(path, [test_mooncake.AGENTIC_HEADER, *(
                test_mooncake.agentic_row(ids[i], play, session, hashes, start, 4 * len(hashes) + 1,
                                          dependencies=[{"request_id": rid, "trigger": trigger, "delay_ms": delay} for rid, trigger, delay in deps])
                for i, (play, session, start, hashes, deps) in enumerate(rows))])
            if tally.check(["audit", "--quiet", "--format", "json", str(path)]) == 0:
                requests, _ = load_trace([path])
                assert len(requests) == len(rows)

    case()
    tally.report()
