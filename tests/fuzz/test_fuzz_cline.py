"""Fuzz a Cline / Roo Code / Kilo Code task folder: its ui_messages.json is read with the
api_conversation_history.json and task_metadata.json beside it, so each of the three is mutated
in turn, and the folder is audited: exit 0, or one line with exit 2, never a traceback."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import PROMPT_EXCLUSIVE_BY_COST
from prefixbench.workloads.logs.formats import FORMATS, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, write
from tests.fuzz.test_fuzz_audit import SEEDS

TASK = Path(__file__).parents[1] / "unit" / "logs" / "fixtures" / "cline" / "anthropic-modelinfo"
FILES = ("ui_messages.json", "api_conversation_history.json", "task_metadata.json")


def test_mutated_task_folders_end_cleanly(importer_examples):
    tally = Tally("audit cline folder", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-cline-")) / "task"
    seeds = {name: (TASK / name).read_bytes() for name in FILES}

    @fuzz_settings(importer_examples)
    @given(name=st.sampled_from(FILES), data=st.data(), explicit=st.booleans(), whole=st.booleans())
    def case(name: str, data: st.DataObject, explicit: bool, whole: bool) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(TASK, folder)
        raw = data.draw(
            st.one_of(
                mutated(seeds[name]),
                # Entries whose values are edited (a count turned into a string, a text that is no
                # longer JSON...), written as the JSON array the agent writes.
                st.lists(edited(st.sampled_from(SEEDS["cline"])), min_size=1, max_size=6).map(lambda docs: json.dumps(docs)),
            )
        )
        write(folder / name, raw)
        argv = ["audit", str(folder if whole else folder / "ui_messages.json"), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", "roo"]
        tally.check(argv)

    case()
    tally.report()


SDK_SESSION = TASK.parent / "sdk-session" / "1791234567890_q7xk2"
#: A pre-4.0 task resumed in Cline 4.x: its summed usage on a converted message, then the warning.
LEGACY_RESUME = [
    {"id": "l2", "role": "assistant", "content": [{"type": "text", "text": "old"}], "modelInfo": {"id": "m", "provider": "unknown"},
     "metrics": {"inputTokens": 9000, "outputTokens": 90, "cacheReadTokens": 8000, "cacheWriteTokens": 900, "cost": 0.3}},
    {"id": "l3", "role": "user", "content": [{"type": "text", "text": "Warning: this is a legacy conversation, which means tool names may have changed."}]},
]

#: A turn retried after empty replies (Cline SDK, 2026-08 on): two attempts' usage summed on one
#: message, its prompt more than the next call's.
RETRIED = [
    {"id": "r1", "role": "assistant", "content": [{"type": "text", "text": "a"}], "modelInfo": {"id": "m", "provider": "anthropic"},
     "metrics": {"inputTokens": 20600, "outputTokens": 80, "cacheReadTokens": 19980, "cacheWriteTokens": 300}},
    {"id": "r2", "role": "assistant", "content": [{"type": "text", "text": "b"}], "modelInfo": {"id": "m", "provider": "anthropic"},
     "metrics": {"inputTokens": 10600, "outputTokens": 30, "cacheReadTokens": 10290, "cacheWriteTokens": 300}},
]


def test_mutated_cline_sdk_sessions_end_cleanly(importer_examples):
    """A Cline 4.x session folder (<id>.messages.json beside its manifest and a subagent's file),
    its messages file mutated or its messages' values edited: exit 0, or one line with exit 2."""
    tally = Tally("audit cline sdk session", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-cline-sdk-")) / "session"
    target = folder / "1791234567890_q7xk2.messages.json"
    seed_bytes = (SDK_SESSION / target.name).read_bytes()
    seed = json.loads(seed_bytes)

    @fuzz_settings(importer_examples)
    @given(data=st.data(), whole=st.booleans(), edit=st.booleans())
    def case(data: st.DataObject, whole: bool, edit: bool) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(SDK_SESSION, folder)
        if edit:
            messages = data.draw(st.lists(edited(st.sampled_from(seed["messages"] + LEGACY_RESUME + RETRIED)), min_size=1, max_size=6))
            raw = json.dumps({**seed, "messages": messages})
        else:
            raw = data.draw(mutated(seed_bytes))
        write(target, raw)
        tally.check(["audit", str(folder if whole else target), "--quiet", "--format", "json"])

    case()
    tally.report()


def test_mutated_history_files_alone_end_cleanly(importer_examples):
    """A task's api_conversation_history.json named without its ui_messages.json, read from its
    assistant messages' metrics (Cline 3.x, 2026), mutated or its messages' values edited: exit 0,
    or one line with exit 2."""
    tally = Tally("audit cline history alone", bound_s=20)
    target = Path(tempfile.mkdtemp(prefix="fuzz-cline-history-")) / "api_conversation_history.json"
    seed_bytes = (TASK / target.name).read_bytes()
    seed = json.loads(seed_bytes)

    @fuzz_settings(importer_examples)
    @given(data=st.data(), edit=st.booleans())
    def case(data: st.DataObject, edit: bool) -> None:
        if edit:
            raw = json.dumps(data.draw(st.lists(edited(st.sampled_from(seed)), min_size=1, max_size=6)))
        else:
            raw = data.draw(mutated(seed_bytes))
        write(target, raw)
        tally.check(["audit", str(target), "--quiet", "--format", "json"])

    case()
    tally.report()


_COUNT = st.integers(0, 300_000)
_METRICS = st.one_of(
    st.none(),
    st.fixed_dictionaries({"inputTokens": _COUNT, "outputTokens": _COUNT, "cacheReadTokens": _COUNT, "cacheWriteTokens": _COUNT}),
    st.fixed_dictionaries({"inputTokens": st.one_of(_COUNT, st.text(max_size=3), st.none())}),
)


def test_cline_sdk_runs_with_summed_metrics_end_cleanly(importer_examples):
    """Runs of a Cline SDK session (a prompt, assistant messages with or without metrics, tool
    results, an empty terminal message, some of them the run's sum), written before or after
    per-turn metrics: exit 0 or one line; read, every assistant message with metrics is a call
    or a skipped sum, and only a file written before per-turn metrics has runs summed alone."""
    tally = Tally("audit cline sdk runs", bound_s=20)
    target = Path(tempfile.mkdtemp(prefix="fuzz-cline-sdk-runs-")) / "1776000000000_ab12c.messages.json"
    keys = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")

    @fuzz_settings(importer_examples)
    @given(runs=st.lists(st.tuples(st.lists(_METRICS, max_size=4), st.booleans(), st.booleans()), min_size=1, max_size=4),
           updated=st.sampled_from(["2026-04-15T00:00:00Z", "2026-05-01T00:00:00Z", "2026-09-01T00:00:00Z", 7, None]))
    def case(runs: list[tuple[list, bool, bool]], updated: object) -> None:
        messages: list[dict] = []
        for r, (calls, terminal, summed) in enumerate(runs):
            messages.append({"role": "user", "content": [{"type": "text", "text": "go"}]})
            own = []
            for n, metrics in enumerate(calls):
                message = {"id": f"{r}.{n}", "role": "assistant", "content": [{"type": "tool_use", "id": f"t{r}.{n}", "name": "x", "input": {}}]}
                if metrics is not None:
                    message["metrics"] = metrics
                    own.append(metrics)
                messages.append(message)
                messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{r}.{n}", "content": "ok"}]})
            if terminal:
                total = {k: sum(m.get(k) if isinstance(m.get(k), int) else 0 for m in own) for k in keys} if summed else {k: 1 for k in keys}
                messages.append({"id": f"{r}.end", "role": "assistant", "content": [], "metrics": total})
        doc = {"version": 1, "agent": "lead", "sessionId": "1776000000000_ab12c", "messages": messages}
        if updated is not None:
            doc["updated_at"] = updated
        target.write_text(json.dumps(doc))
        tally.check(["audit", str(target), "--quiet", "--format", "json"])
        try:
            requests, summary = import_file(target, FORMATS["cline"], ImportContext())
        except UserError:
            return
        with_metrics = {m["id"] for m in messages if m["role"] == "assistant" and "metrics" in m}
        kept = {r.request_id for r in requests}
        sums = [why for _, why in summary.skipped if "summed usage" in why]
        assert kept <= with_metrics and len(kept) + len(sums) == len(with_metrics)
        if not (isinstance(updated, str) and updated < "2026-04-23"):
            assert not any("a run of" in why for why in sums)

    case()
    tally.report()


#: What Kilo Code's api_req_started text may say of its upstream and of a call without usage.
_UPSTREAM = st.one_of(st.none(), st.sampled_from(["Anthropic", "Amazon Bedrock", "DeepSeek", "OpenAI", "Fireworks", "", " "]),
                      st.text(max_size=12), st.integers(), st.lists(st.text(max_size=3), max_size=2))
_MISSING = st.one_of(st.none(), st.booleans(), st.text(max_size=4), st.integers(-1, 2))


def test_kilo_upstream_and_usage_missing_end_cleanly(importer_examples):
    """Kilo Code's api_req_started entries with any ``inferenceProvider`` and ``usageMissing``
    (any value, or absent) on made-up counts: exit 0 or one line; read, each call's reads and
    output are what the same entry gives without the two fields, and its prompt too unless an
    openai-protocol call names its upstream (evidence of the handler: an Anthropic upstream's
    writes are real, and read with them a prompt is never less); only a call whose counts are
    all 0 is skipped for usageMissing."""
    tally = Tally("audit kilo upstream", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-kilo-upstream-"))
    target, bare = folder / "ui_messages.json", folder / "bare" / "ui_messages.json"
    bare.parent.mkdir()
    call = st.fixed_dictionaries({
        "apiProtocol": st.sampled_from(["openai", "anthropic"]),
        "tokensIn": _COUNT, "tokensOut": _COUNT, "cacheReads": _COUNT, "cacheWrites": st.sampled_from([0, 0, 700]),
    }, optional={"inferenceProvider": _UPSTREAM, "usageMissing": _MISSING})

    @fuzz_settings(importer_examples)
    @given(calls=st.lists(call, min_size=1, max_size=5), zeroed=st.sets(st.integers(0, 4)))
    def case(calls: list[dict], zeroed: set[int]) -> None:
        for n in zeroed & set(range(len(calls))):
            calls[n] |= {"tokensIn": 0, "tokensOut": 0, "cacheReads": 0, "cacheWrites": 0}
        entries = [{"ts": 1761000000000 + n, "type": "say", "say": "api_req_started", "text": json.dumps(c)} for n, c in enumerate(calls)]
        plain = [{**e, "text": json.dumps({k: v for k, v in c.items() if k not in ("inferenceProvider", "usageMissing")})}
                 for e, c in zip(entries, calls)]
        # One entry a line, as the agent pretty-prints them: entry n on line n + 2.
        target.write_text("[\n" + ",\n".join(map(json.dumps, entries)) + "\n]")
        bare.write_text("[\n" + ",\n".join(map(json.dumps, plain)) + "\n]")
        tally.check(["audit", str(target), "--quiet", "--format", "json"])
        try:
            requests, summary = import_file(target, FORMATS["cline"], ImportContext())
        except UserError:
            return
        expected, _ = import_file(bare, FORMATS["cline"], ImportContext())
        assert [(r.line, r.usage.cache_read, r.usage.output) for r in requests] == [
            (r.line, r.usage.cache_read, r.usage.output) for r in expected]
        # An openai-protocol call naming its upstream is evidence for the file's reading (an
        # Anthropic upstream's writes are real, so the handler is an additive one: Kilo Code's
        # virtual-quota-fallback): writes told apart, and a prompt read with them, never less.
        told = any(c["apiProtocol"] == "openai" and isinstance(c.get("inferenceProvider"), str) for c in calls)
        for r, bare_read in zip(requests, expected):
            assert r.usage == bare_read.usage or told, (r.usage, bare_read.usage)
            assert r.usage.prompt == bare_read.usage.prompt or (told and r.usage.prompt > bare_read.usage.prompt)
        for line, why in summary.skipped:
            if "usageMissing" in why:
                info = calls[line - 2]
                assert info.get("usageMissing") is True and not any(info[k] for k in ("tokensIn", "tokensOut", "cacheReads", "cacheWrites"))

    case()
    tally.report()


#: What a user message's environment details may say of the model (Roo Code, Kilo Code).
_MODEL_TAG = st.one_of(
    st.sampled_from(["google/gemini-3-flash-preview", "x-ai/grok-code-fast-1", "anthropic/claude-sonnet-4.5", "", " ", "a\nb"]),
    st.text(max_size=12),
)


def test_kilo_models_named_in_the_history_end_cleanly(importer_examples):
    """Kilo Code gateway calls beside a history whose user messages name a model in their
    environment details (any text, a tag left open, any ts, or none), some messages then edited:
    exit 0 or one line; read, each call's counts are those of the same calls read without the
    history, and its model is one a user message names or unknown; a call's reads lie on a grid of
    their own only where its upstream is Google AI Studio (any case) and its model gemini-3-flash."""
    tally = Tally("audit kilo history models", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-kilo-models-"))
    bare = folder / "bare" / "ui_messages.json"
    bare.parent.mkdir()
    message = st.fixed_dictionaries({
        "role": st.sampled_from(["user", "user", "assistant"]),
        "ts": st.one_of(st.integers(1761000000000, 1761000000010), st.none(), st.text(max_size=3), st.booleans()),
        "tag": _MODEL_TAG, "closed": st.booleans(), "nested": st.booleans(),
    })

    @fuzz_settings(importer_examples)
    @given(counts=st.lists(st.tuples(_COUNT, _COUNT, st.booleans()), min_size=1, max_size=4), messages=st.lists(message, max_size=6),
           edits=st.data(), upstream=st.sampled_from(["Anthropic", "Google AI Studio", " google ai studio ", "Google"]))
    def case(counts: list[tuple[int, int, bool]], messages: list[dict], edits: st.DataObject, upstream: str) -> None:
        entries = []
        for n, (total, read, replied) in enumerate(counts):
            entries.append({"ts": 1761000000000 + 3 * n, "type": "say", "say": "api_req_started", "text": json.dumps(
                {"apiProtocol": "openai", "tokensIn": total, "tokensOut": 9, "cacheWrites": 0, "cacheReads": min(read, total),
                 "cost": 0, "usageMissing": False, "inferenceProvider": upstream})})
            if replied:  # the reply's first words
                entries.append({"ts": 1761000000001 + 3 * n, "type": "say", "say": "text", "text": "..."})
        history = []
        for m in messages:
            details = f"<environment_details>\n<model>{m['tag']}" + ("</model>\n" if m["closed"] else "\n") + "</environment_details>"
            block = {"type": "text", "text": details}
            if m["nested"]:  # native tool calls: the details inside a tool result
                block = {"type": "tool_result", "tool_use_id": "t", "content": [block]}
            doc = {"role": m["role"], "content": [block]}
            if m["ts"] is not None:
                doc["ts"] = m["ts"]
            history.append(doc)
        if history and edits.draw(st.booleans()):
            history = edits.draw(st.lists(edited(st.sampled_from(history)), min_size=1, max_size=6))
        write(folder / "ui_messages.json", json.dumps(entries))
        write(folder / "api_conversation_history.json", json.dumps(history))
        write(bare, json.dumps(entries))
        tally.check(["audit", str(folder / "ui_messages.json"), "--quiet", "--format", "json"])
        try:
            requests, _ = import_file(folder / "ui_messages.json", FORMATS["cline"], ImportContext())
        except UserError:
            return
        expected, _ = import_file(bare, FORMATS["cline"], ImportContext())
        assert [(r.line, r.usage.prompt, r.usage.output) for r in requests] == [
            (r.line, r.usage.prompt, r.usage.output) for r in expected]
        named = {m["tag"].strip() for m in messages}
        assert all(r.model == "unknown" or r.model in named or not messages for r in requests)
        studio = upstream.strip().lower() == "google ai studio"
        assert all((r.read_step, r.read_offset) == ((8000, 16000) if studio and re.search(r"gemini-3-flash(?!-lite)", r.model) else (0, 0))
                   for r in requests)

    case()
    tally.report()


#: Cline handlers whose four fields are not additive (MULTI_PROVIDER_HANDLERS and providers'
#: agent_handlers), a few others, and models of providers that bill writes, that count a miss, or none.
_HANDLERS = st.sampled_from(["xai", "zai", "qwen", "fireworks", "doubao", "hicap", "lmstudio", "litellm", "requesty", "oca",
                             "openrouter", "cline", "gemini", "moonshot", "minimax", "vertex", "groq", "", "nope"])
_HANDLER_MODELS = st.sampled_from(["deepseek-chat", "claude-sonnet-4-5", "anthropic/claude-sonnet-4.5", "grok-4",
                                   "accounts/fireworks/models/deepseek-v3", "glm-4.6", "", "x"])


def _read_entries(tally: Tally, target: Path, entries: list[dict]) -> list | None:
    """``entries`` written one a line as the agent pretty-prints them (entry n on line n + 2),
    audited through the command line, then read: the requests, each count at least 0, or None
    where the reader refused the file."""
    target.write_text("[\n" + ",\n".join(map(json.dumps, entries)) + "\n]")
    tally.check(["audit", str(target), "--quiet", "--format", "json"])
    try:
        requests, _ = import_file(target, FORMATS["cline"], ImportContext())
    except UserError:
        return None
    for r in requests:
        assert min(r.usage.uncached, r.usage.cache_read, r.usage.cache_write, r.usage.output) >= 0
    return list(requests)


def test_handler_readings_end_cleanly_and_never_write_a_miss(importer_examples):
    """Cline api_req_started entries of any handler above, on any model and made-up counts: exit 0
    or one line; read, a call to a DeepSeek model through a handler that passes its MISS count on
    as cacheWrites (LiteLLM, OCA), or through one whose cacheWrites is a MISS count or 0 (subset),
    writes nothing; and no count is negative."""
    tally = Tally("audit cline handlers", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-cline-handlers-"))
    target = folder / "ui_messages.json"
    call = st.fixed_dictionaries({"tokensIn": _COUNT, "tokensOut": _COUNT, "cacheReads": _COUNT, "cacheWrites": _COUNT})

    @fuzz_settings(importer_examples)
    @given(calls=st.lists(st.tuples(call, _HANDLERS, _HANDLER_MODELS), min_size=1, max_size=5))
    def case(calls: list[tuple[dict, str, str]]) -> None:
        entries = [{"ts": 1763000000000 + n, "type": "say", "say": "api_req_started", "text": json.dumps(c),
                    "modelInfo": {"providerId": h, "modelId": m, "mode": "act"}} for n, (c, h, m) in enumerate(calls)]
        requests = _read_entries(tally, target, entries)
        for r in requests or ():
            u = r.usage
            _, handler, model = calls[r.line - 2]
            misses = "deepseek" in model and handler in ("litellm", "oca")  # prompt_cache_miss_tokens passed on
            if misses or handler in ("xai", "zai", "qwen", "fireworks", "doubao", "hicap", "lmstudio"):
                assert u.cache_write == 0, (handler, model, u)

    case()
    tally.report()


#: Models Roo Code's and Kilo Code's environment details may name: providers that bill writes,
#: one that counts a miss, and none.
_PROTOCOL_MODELS = st.sampled_from(["claude-sonnet-4-20250514", "anthropic/claude-sonnet-4.5", "deepseek-chat", "moonshotai/kimi-k2-instruct",
                                    "gpt-4.1", "google/gemini-2.5-pro", "x"])


def _name_the_model(folder: Path, model: str, turns: int, t0: int) -> None:
    """The task's ``api_conversation_history.json``: ``turns`` user messages a second apart from
    ``t0``, each with environment details that name ``model`` (as Roo Code and Kilo Code write them)."""
    details = f"<environment_details>\n<model>{model}</model>\n</environment_details>"
    (folder / "api_conversation_history.json").write_text(json.dumps(
        [{"role": "user", "content": [{"type": "text", "text": details}], "ts": t0 + 1000 * n} for n in range(turns)]))


def test_protocol_readings_end_cleanly_and_keep_a_billed_write(importer_examples):
    """Roo Code / Kilo Code api_req_started entries under either apiProtocol, the model named in
    the history's environment details, made-up counts: exit 0 or one line; read, no count is
    negative, no prompt exceeds the additive reading's, and an openai-protocol call with writes to a Claude model keeps them as writes
    (whole-prompt handlers and Kilo's virtual-quota-fallback, additive, alike)."""
    tally = Tally("audit roo/kilo protocols", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-cline-protocols-"))
    target = folder / "ui_messages.json"
    call = st.fixed_dictionaries({"tokensIn": _COUNT, "tokensOut": _COUNT, "cacheReads": _COUNT, "cacheWrites": _COUNT,
                                  "apiProtocol": st.sampled_from(["openai", "anthropic"])})

    @fuzz_settings(importer_examples)
    @given(calls=st.lists(call, min_size=1, max_size=5), model=_PROTOCOL_MODELS)
    def case(calls: list[dict], model: str) -> None:
        _name_the_model(folder, model, len(calls), 1756000000500)
        entries = [{"ts": 1756000001000 + 1000 * n, "type": "say", "say": "api_req_started", "text": json.dumps(c)}
                   for n, c in enumerate(calls)]
        requests = _read_entries(tally, target, entries)
        for r in requests or ():
            u = r.usage
            c = calls[r.line - 2]
            # No reading counts more than the additive one (a doubled tokensIn is read less).
            assert u.prompt <= c["tokensIn"] + c["cacheReads"] + c["cacheWrites"], (c, u)
            if c["apiProtocol"] == "openai" and "claude" in model and u.prompt_count == "":
                assert u.cache_write == c["cacheWrites"], (c, u)

    case()
    tally.report()


#: Costs no log should hold, yet JSON can: an integer too large for a float (OverflowError in
#: math.isfinite once), huge, negative, a number as text.
_ODD_COSTS = st.sampled_from([10**400, -(10**400), 10**20, -1, "0.02"])


def test_readings_told_from_the_cost_end_cleanly(importer_examples):
    """Roo Code / Kilo Code api_req_started entries with made-up counts and costs, under the openai
    protocol or none (Kilo Code before June 2025), the model named in the history: exit 0 or one
    line; a call read exclusive by its cost counts its reads on top of tokensIn and is one of the
    openai protocol; a call read as cache not reported names no protocol, in a file where no call
    reports a cache read or write."""
    tally = Tally("audit cline costs", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-cline-costs-"))
    target = folder / "ui_messages.json"
    small = st.integers(0, 40_000)
    call = st.fixed_dictionaries({"tokensIn": small, "tokensOut": small, "cacheReads": small,
                                  "cacheWrites": st.sampled_from([0, 0, 500]),
                                  "cost": st.one_of(st.none(), st.floats(0, 1), st.sampled_from([0.02456, 0.0405]), _ODD_COSTS)},
                                 optional={"apiProtocol": st.just("openai")})

    @fuzz_settings(importer_examples)
    @given(calls=st.lists(call, min_size=1, max_size=4), model=_PROTOCOL_MODELS)
    def case(calls: list[dict], model: str) -> None:
        _name_the_model(folder, model, len(calls), 1754800000500)
        entries = [{"ts": 1754800001000 + 1000 * n, "type": "say", "say": "api_req_started",
                    "text": json.dumps({k: v for k, v in c.items() if v is not None})} for n, c in enumerate(calls)]
        for r in _read_entries(tally, target, entries) or ():
            u, c = r.usage, calls[r.line - 2]
            if u.prompt_count == PROMPT_EXCLUSIVE_BY_COST:
                assert c.get("apiProtocol") == "openai" and u.prompt == c["tokensIn"] + c["cacheReads"], (c, u)
            if not u.cache_reported:
                assert "apiProtocol" not in c and u.prompt == c["tokensIn"], (c, u)
                assert not any(o["cacheReads"] or o["cacheWrites"] for o in calls if "apiProtocol" not in o), calls

    case()
    tally.report()


def test_history_through_a_pass_through_handler_to_deepseek_never_reads_a_miss_as_a_hit(importer_examples):
    """A history file alone whose calls went through LiteLLM's, OCA's or Requesty's handler (prompt
    passed on whole, cached inside it) to DeepSeek or Claude, with any counts and costs: read, or
    refused in one line; read, a call's prompt is its metrics.tokens.prompt, its reads never above
    its cached, and a DeepSeek call's cached is read as hits only where its cost splits it."""
    folder = Path(tempfile.mkdtemp(prefix="fuzz-cline-history-total-"))
    target = folder / "api_conversation_history.json"
    small = st.integers(0, 40_000)
    call = st.tuples(small, small, small, st.one_of(st.none(), st.floats(0, 1, allow_nan=False), st.just(0.0035), _ODD_COSTS))

    @fuzz_settings(importer_examples)
    @given(calls=st.lists(call, min_size=1, max_size=4), handler=st.sampled_from(["litellm", "oca", "requesty"]),
           model=st.sampled_from(["deepseek-chat", "claude-sonnet-4-5"]))
    def case(calls: list[tuple], handler: str, model: str) -> None:
        messages = []
        for n, (prompt, cached, out, cost) in enumerate(calls):
            metrics = {"tokens": {"prompt": prompt, "completion": out, "cached": cached}, **({} if cost is None else {"cost": cost})}
            messages += [{"role": "user", "content": [{"type": "text", "text": "x"}], "ts": 1777000000000 + 60_000 * n},
                         {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "ts": 1777000002000 + 60_000 * n,
                          "modelInfo": {"modelId": model, "providerId": handler, "mode": "act"}, "metrics": metrics}]
        target.write_text("[\n" + ",\n".join(map(json.dumps, messages)) + "\n]")  # (call n's answer on line 2n + 3)
        try:
            requests, _ = import_file(target, FORMATS["cline"], ImportContext())
        except UserError as error:
            assert "\n" not in str(error)
            return
        for r in requests:
            prompt, cached, _, cost = calls[(r.line - 3) // 2]
            u = r.usage
            assert min(u.uncached, u.cache_read, u.cache_write) >= 0
            if cached <= prompt:
                assert u.prompt == prompt and u.cache_read <= cached, (calls, u)  # (prompt holds cache_unsplit)
            if model == "deepseek-chat" and handler != "requesty" and cached and cached <= prompt:
                assert not u.cache_write, (calls, u)
                if not cost:  # no cost to split the hits from the misses: none is read as a hit
                    assert u.cache_read == 0 and not u.cache_reported and u.cache_unsplit == cached, (calls, u)

    case()
