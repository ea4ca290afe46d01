"""Cline, Roo Code and Kilo Code task folders (workloads/logs/formats/cline.py).

The fixtures under ``fixtures/cline/`` are task folders written for these tests, one per version
and provider handler; every figure below is summed by hand from them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from prefixbench.reports.audit import audit_csv, audit_markdown, audit_table, request_record
from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import PROMPT_EXCLUSIVE_BY_COST, Usage
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file, resolve
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext
from prefixbench.workloads.logs.formats.cline import detect
from prefixbench.workloads.logs.records import iter_records
from prefixbench.workloads.logs.trace import TraceRequest
from tests.conftest import REALDATA

FIXTURES = Path(__file__).parent / "fixtures"
TASKS = FIXTURES / "cline"
CLINE = FORMATS["cline"]


def _read(folder: str) -> tuple[list[TraceRequest], list[str], list[tuple[int, str]]]:
    requests, summary = import_file(TASKS / folder / "ui_messages.json", CLINE, ImportContext())
    return requests, list(summary.notes), list(summary.skipped)


def _usages(requests: list[TraceRequest]) -> list[tuple[int, str, str, Usage | None]]:
    return [(r.line, r.provider, r.model, r.usage) for r in requests]


def _totals(requests: list[TraceRequest]) -> tuple[int, int, int, int]:
    """(uncached, cache read, cache write, output) summed over the requests."""
    usages = [r.usage for r in requests if r.usage is not None]
    return (
        sum(u.uncached for u in usages),
        sum(u.cache_read for u in usages),
        sum(u.cache_write_5m + u.cache_write_1h for u in usages),
        sum(u.output for u in usages),
    )


# -- detection -------------------------------------------------------------------------------


def test_detector_on_each_kind_of_task_file() -> None:
    assert detect({"ts": 1, "type": "say", "say": "api_req_started", "text": "{}"}) == Evidence.ENTRY
    assert detect({"ts": 1, "type": "ask", "ask": "followup"}) == Evidence.ENTRY
    assert detect({"role": "user", "content": [{"type": "text", "text": "hi"}], "ts": 1}) == Evidence.SHAPE
    assert detect({"role": "assistant", "content": "x", "modelInfo": {}, "metrics": {}}) == Evidence.SHAPE
    assert detect({"files_in_context": [], "model_usage": [], "environment_history": []}) == Evidence.SHAPE
    # Not a task file: another agent's entry, a body with a model, a say without its value.
    assert detect({"type": "user", "message": {"role": "user", "content": "hi"}}) is None
    assert detect({"role": "user", "content": "hi", "model": "m"}) is None
    assert detect({"ts": 1, "type": "say"}) is None
    assert detect({}) is None


@pytest.mark.parametrize("name", ["ui_messages.json", "api_conversation_history.json", "task_metadata.json"])
def test_every_file_of_a_task_folder_is_detected_whatever_its_name(tmp_path: Path, name: str) -> None:
    source = TASKS / "anthropic-modelinfo" / name
    assert detect_format(source) is CLINE
    renamed = tmp_path / "saved.txt"
    shutil.copy(source, renamed)
    assert detect_format(renamed) is CLINE


def test_a_one_line_and_a_pretty_printed_array_read_alike(tmp_path: Path) -> None:
    entries = [r.value for r in iter_records(TASKS / "roo-total" / "ui_messages.json")]
    for text in (json.dumps(entries), json.dumps(entries, indent=2)):
        path = tmp_path / "ui_messages.json"
        path.write_text(text)
        requests, _ = import_file(path, detect_format(path), ImportContext())
        assert [r.usage for r in requests] == [r.usage for r in _read("roo-total")[0]]


def test_every_call_of_a_one_line_array_is_a_node_of_its_own(tmp_path: Path) -> None:
    """Regression (a real Cline task, gmfstu/Online-Card-Architecture): a task file written as one
    line gives every entry line 1; the chain's nodes were named by line, so every call was the
    same node, its own parent, and the prediction never got past the first call's prefix."""
    source = TASKS / "anthropic-modelinfo"
    for name in ("api_conversation_history.json", "task_metadata.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    entries = [r.value for r in iter_records(source / "ui_messages.json")]
    shapes = []
    for text in (json.dumps(entries, indent=2), json.dumps(entries)):  # the one-line file last: audited below
        (tmp_path / "ui_messages.json").write_text(text)
        requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
        nodes = [r.prefix.node for r in requests if r.prefix is not None]
        assert len(set(nodes)) == len(requests) == 3
        shapes.append([None if r.prefix is None or r.prefix.parent is None else nodes.index(r.prefix.parent) for r in requests])
    assert shapes[0] == shapes[1] == [None, 0, None]  # the truncation before the third starts a new chain
    rows = run_audit([tmp_path]).rows
    assert rows[1].predicted_cache_read == rows[1].reported_cache_read == 9000  # the first call's prefix


def test_every_call_of_a_one_line_array_has_a_place_of_its_own(tmp_path: Path) -> None:
    """Regression (a new user's pass): a ui_messages.json written as one line gives every entry
    line 1, so ``file:line`` named the same place for every call; each now names its entry
    (``ui_messages.json:1 [4]``) in the requests' ``path``, the table, audit.md and audit.csv.
    A pretty-printed file keeps its lines and no path."""
    source = TASKS / "anthropic-modelinfo"
    for name in ("api_conversation_history.json", "task_metadata.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    entries = [r.value for r in iter_records(source / "ui_messages.json")]
    (tmp_path / "ui_messages.json").write_text(json.dumps(entries, indent=2))
    pretty = run_audit([tmp_path]).rows
    assert len({r.line for r in pretty}) == 3 and {r.path for r in pretty} == {""}
    (tmp_path / "ui_messages.json").write_text(json.dumps(entries))
    result = run_audit([tmp_path])
    places = [(row.line, row.path) for row in result.rows]
    assert len(set(places)) == len(places) == 3 and {line for line, _ in places} == {1}
    assert all(path.startswith("[") for _, path in places)
    entry = int(places[1][1][1:-1])
    assert entries[entry]["say"] == "api_req_started"  # the index names the call's own entry
    for text in (audit_markdown(result), audit_table(result)):  # the worst requests (those that lost tokens)
        shown = re.findall(r"ui_messages\.json:1 (\[\d+\])", text)
        assert shown and set(shown) <= {path for _, path in places}
    assert [request_record(row)["path"] for row in result.rows] == [path for _, path in places]
    assert all(f",{path}" in audit_csv(result) for _, path in places)


def test_the_aliases_name_the_format() -> None:
    for alias in ("cline", "roo", "roo-code", "kilo", "kilo-code"):
        assert resolve(alias) is CLINE


# -- readings, version by version and handler by handler --------------------------------------


def test_cline_anthropic_handler_is_additive_and_stopped_streams_are_counted_apart() -> None:
    requests, notes, skipped = _read("anthropic-modelinfo")
    model = "claude-sonnet-4-5-20250929"
    assert _usages(requests) == [
        (3, "anthropic", model, Usage(cache_write_5m=9000, uncached=4, output=120)),
        (5, "anthropic", model, Usage(cache_read=9000, cache_write_5m=300, uncached=6, output=80)),
        (8, "anthropic", model, Usage(cache_read=2500, cache_write_5m=4000, uncached=5, output=50)),
    ]
    assert _totals(requests) == (4 + 6 + 5, 9000 + 2500, 9000 + 300 + 4000, 120 + 80 + 50)
    assert [line for line, _ in skipped] == [7, 9, 10]
    assert "cancelled stream" in skipped[0][1] and "failed stream" in skipped[1][1] and "never finished" in skipped[2][1]
    assert "1 cancelled stream counted apart, not in the totals (9,303 prompt tokens reported on them)" in notes
    assert "1 failed stream counted apart, not in the totals (0 prompt tokens reported on them)" in notes
    assert f"usage of anthropic ({model}): tokensIn excludes cacheReads and cacheWrites (additive)" in notes
    assert "the log's own cost fields sum to $0.0571 (a check on the dollars here)" in notes


def test_a_truncation_is_a_compaction_and_the_history_beside_gives_the_blocks_added() -> None:
    requests, _, _ = _read("anthropic-modelinfo")
    first, second, third = requests
    assert first.prefix is not None and second.prefix is not None and third.prefix is not None
    # Content blocks per message of the history beside it: 2 2 2 1 1 1 3 1 1; the calls' prompts
    # end at messages 0, 2 and 6 (conversationHistoryIndex + 1).
    assert [r.prefix.new_blocks for r in requests] == [2, 2 + 2, 1 + 1 + 1 + 3]
    assert second.prefix.parent == first.prefix.node
    assert third.prefix.parent is None  # the truncation starts a new chain after the head
    # The user turn before the cancelled call is carried to the next counted one.
    assert third.events == (("user_turn", ""), ("compaction", "history truncated: messages 1-2 dropped"))


def test_deepseek_misses_are_uncached_never_writes_in_every_handler_version() -> None:
    requests, notes, _ = _read("deepseek-metadata")
    # Handler and model from task_metadata.json; tokensIn 0 (v1, v3) or hits + misses (early 2025).
    assert _usages(requests) == [
        (3, "deepseek", "deepseek-chat", Usage(uncached=5000, output=100)),
        (4, "deepseek", "deepseek-chat", Usage(cache_read=4992, uncached=260, output=50)),
        (5, "deepseek", "deepseek-chat", Usage(cache_read=5384, uncached=116, output=40)),
    ]
    assert _totals(requests) == (5000 + 260 + 116, 4992 + 5384, 0, 100 + 50 + 40)
    assert any("cacheWrites holds the provider's cache MISS count" in n and "never as a cache write" in n for n in notes)


def test_a_gateway_is_additive_and_the_openai_compatible_handler_keeps_the_whole_prompt() -> None:
    requests, notes, _ = _read("gateway-and-compatible")
    assert _usages(requests) == [
        (3, "anthropic", "anthropic/claude-sonnet-4.5", Usage(cache_write_5m=7000, uncached=12, output=64)),
        (4, "anthropic", "anthropic/claude-sonnet-4.5", Usage(cache_read=7000, cache_write_5m=200, uncached=9, output=30)),
        # tokensIn 7600 = 7272 read + 328 missed; cacheWrites 328 is the server's miss count.
        (5, "deepseek", "deepseek-chat", Usage(cache_read=7272, uncached=328, output=20)),
    ]
    assert _totals(requests) == (12 + 9 + 328, 7000 + 7272, 7000 + 200, 64 + 30 + 20)
    assert requests[2].events == (("model_change", "openai/deepseek-chat"),)
    assert any(n.startswith("usage of openrouter (") and "gateway" in n for n in notes)
    assert any(n.startswith("usage of openai (deepseek-chat): tokensIn is the whole prompt") for n in notes)


def test_roo_code_protocols_before_late_2025() -> None:
    requests, notes, _ = _read("roo-protocol")
    assert _usages(requests) == [
        (3, "anthropic", "unknown", Usage(cache_write_5m=12000, uncached=3, output=200)),
        (4, "anthropic", "unknown", Usage(cache_read=12000, cache_write_5m=500, uncached=8, output=90)),
        (6, "unknown", "unknown", Usage(cache_read=1920, uncached=380, output=40)),
    ]
    assert _totals(requests) == (3 + 8 + 380, 12000 + 1920, 12000 + 500, 200 + 90 + 40)
    assert requests[2].events == (("compaction", "context condensed"),)
    assert "usage of protocol anthropic (unknown): tokensIn excludes cacheReads and cacheWrites (additive)" in notes


def test_handlers_that_pass_prompt_tokens_on_are_read_whole_and_a_miss_is_never_a_write() -> None:
    # Cline 3.30-3.89: xai.ts and fireworks.ts write prompt_tokens whole (fireworks' misses as
    # cacheWrites); litellm.ts and requesty.ts prompt_tokens whole with the writes inside, LiteLLM
    # a DeepSeek-shaped server's prompt_cache_miss_tokens as cacheWrites.
    requests, notes, _ = _read("passthrough-handlers")
    assert [r.usage for r in requests] == [
        Usage(cache_read=8704, uncached=296, output=100),
        Usage(cache_read=8704, uncached=696, output=80),
        Usage(cache_write_5m=9500, uncached=500, output=90),
        Usage(cache_read=9500, cache_write_5m=290, uncached=510, output=60),
        Usage(cache_read=3840, uncached=1160, output=50),
        Usage(cache_read=10000, cache_write_5m=600, uncached=400, output=70),
    ]
    assert [r.provider for r in requests][0] == "xai" and requests[4].provider == "deepseek"
    assert any(n.startswith("usage of xai (grok-4) and fireworks (accounts/fireworks/models/kimi-k2-instruct): tokensIn is "
                            "the whole prompt") for n in notes)
    assert any(n.startswith("usage of litellm (claude-sonnet-4-5) and requesty (anthropic/claude-sonnet-4-5): a gateway's "
                            "handler passing prompt_tokens on") for n in notes)
    assert any(n.startswith("usage of litellm (deepseek-chat): cacheWrites holds the provider's cache MISS count") for n in notes)


def test_each_reading_is_noted_once_naming_every_handler_and_model_read_so(tmp_path: Path) -> None:
    # A task of twelve calls over three Claude models on the Anthropic handler, one on DeepSeek's:
    # two readings, each said once (it was said once per model, the same sentence three times).
    models = ["claude-sonnet-4-20250514"] * 6 + ["claude-opus-4-20250514"] * 4 + ["claude-3-5-haiku-20241022"] + ["deepseek-chat"]
    entries = [{"ts": 1763000000000 + 1000 * n, "type": "say", "say": "api_req_started",
                "text": json.dumps({"tokensIn": 10, "tokensOut": 5, "cacheReads": 1000 * n, "cacheWrites": 100}),
                "modelInfo": {"providerId": "deepseek" if "deepseek" in model else "anthropic", "modelId": model, "mode": "act"}}
               for n, model in enumerate(models, start=1)]
    (tmp_path / "ui_messages.json").write_text(json.dumps(entries))
    requests, summary = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert len(requests) == 12
    readings = [n for n in summary.notes if n.startswith("usage of ")]
    assert [n.partition(": ")[0] for n in readings] == [
        "usage of anthropic (claude-sonnet-4-20250514), anthropic (claude-opus-4-20250514) and anthropic (claude-3-5-haiku-20241022)",
        "usage of deepseek (deepseek-chat)",
    ]
    assert readings[0].endswith(": tokensIn excludes cacheReads and cacheWrites (additive)")
    assert len(set(summary.notes)) == len(summary.notes)


def test_cline_3_17_xai_handler_wrote_tokens_in_0_beside_hits_and_misses(tmp_path: Path) -> None:
    info = {"request": "r", "tokensIn": 0, "tokensOut": 40, "cacheWrites": 900, "cacheReads": 6100, "cost": 0.002}
    entry = {"ts": 1747000000000, "type": "say", "say": "api_req_started", "text": json.dumps(info),
             "modelInfo": {"providerId": "xai", "modelId": "grok-3", "mode": "act"}}
    (tmp_path / "ui_messages.json").write_text(json.dumps([entry]))
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.usage for r in requests] == [Usage(cache_read=6100, uncached=900, output=40)]


def test_openrouter_handler_before_mid_2025_wrote_prompt_tokens_whole() -> None:
    # openrouter.ts before cline/cline#4314 (2025-06-26): inputTokens prompt_tokens, the cached inside.
    requests, notes, _ = _read("openrouter-early")
    assert [r.usage for r in requests] == [
        Usage(uncached=8000, output=120),
        Usage(cache_read=7900, uncached=700, output=90),
        Usage(cache_read=8500, uncached=600, output=70),
    ]
    assert any(n.startswith("usage of openrouter (google/gemini-2.5-pro): tokensIn is the whole prompt") for n in notes)
    # The later, additive handler is still told apart by its counts (tokensIn below the reads).
    later, _, _ = _read("gateway-and-compatible")
    assert later[1].usage == Usage(cache_read=7000, cache_write_5m=200, uncached=9, output=30)


def test_roo_code_openai_protocol_writes_to_a_provider_that_bills_them_are_writes() -> None:
    # Roo Code's OpenRouter / Requesty / LiteLLM / Roo handlers under the openai protocol:
    # tokensIn is the whole prompt, cacheWrites real writes inside it (DeepSeek's: misses).
    requests, notes, _ = _read("roo-openai-writes")
    assert [(r.provider, r.model, r.usage) for r in requests] == [
        ("anthropic", "anthropic/claude-sonnet-4.5", Usage(cache_write_5m=11500, uncached=500, output=200)),
        ("anthropic", "anthropic/claude-sonnet-4.5", Usage(cache_read=11500, cache_write_5m=550, uncached=550, output=90)),
    ]
    assert any("the openai protocol with cacheWrites from a provider that bills writes" in n for n in notes)


def test_kilo_code_quota_fallback_wrapping_anthropic_is_additive_under_the_openai_protocol() -> None:
    # Kilo Code 4.64+: virtual-quota-fallback.ts passes the wrapped Anthropic handler's usage on
    # (input_tokens additive, real writes) while getApiProtocol names it "openai".
    requests, notes, _ = _read("kilo-quota-fallback")
    assert [(r.provider, r.usage) for r in requests] == [
        ("anthropic", Usage(cache_write_5m=11960, uncached=40, output=200)),
        ("anthropic", Usage(cache_read=11960, cache_write_5m=600, uncached=9, output=90)),
        ("anthropic", Usage(cache_read=12560, cache_write_5m=450, uncached=7, output=80)),
    ]
    assert any(n.startswith("usage of protocol openai (claude-sonnet-4-20250514): the openai protocol, yet tokensIn "
                            "excludes cacheReads and cacheWrites") for n in notes)
    # Kilo's gateway (writes 0) and Roo's whole-prompt handlers are untouched.
    whole, _, _ = _read("roo-openai-writes")
    assert whole[1].usage == Usage(cache_read=11500, cache_write_5m=550, uncached=550, output=90)


#: The three calls of the handler fixtures that write then read a Claude prompt (cline-gateway-early,
#: vercel-anthropic-doubled, ...), read right.
_WRITE_THEN_TWO_READS = [
    Usage(cache_write_5m=11960, uncached=40, output=200),
    Usage(cache_read=11960, cache_write_5m=600, uncached=9, output=90),
    Usage(cache_read=12560, cache_write_5m=450, uncached=7, output=80),
]


def test_cline_own_provider_before_august_2025_wrote_prompt_tokens_whole() -> None:
    # cline.ts before cline/cline#5426 (#4314 only changed Gemini models): inputTokens
    # prompt_tokens whole, cacheWriteTokens 0, totalCost the billed cost.
    requests, notes, _ = _read("cline-gateway-early")
    assert [r.usage for r in requests] == _WRITE_THEN_TWO_READS
    assert any(n.startswith("usage of cline (anthropic/claude-sonnet-4): Cline's own provider before cline/cline#5426")
               for n in notes)


def test_vercel_gateway_under_the_anthropic_protocol_counts_reads_and_writes_twice_since_late_2025() -> None:
    # vercel-ai-gateway.ts yields prompt_tokens (whole) as inputTokens under the anthropic
    # protocol; the writer since Roo Code #8954 adds the reads and writes to it again.
    requests, notes, _ = _read("vercel-anthropic-doubled")
    assert [r.usage for r in requests] == _WRITE_THEN_TWO_READS
    assert any(n.startswith("usage of protocol anthropic (anthropic/claude-sonnet-4.5): tokensIn counts cacheReads and "
                            "cacheWrites twice") for n in notes)
    # Roo Code's whole tokensIn under the same protocol stays read once.
    whole, _, _ = _read("roo-total")
    assert all(r.usage.uncached < r.usage.prompt for r in whole if r.usage.cache_read)


def test_calls_the_log_bills_at_0_are_said_to_be_priced_at_list(tmp_path: Path) -> None:
    # Kilo Code's free models (x-ai/grok-code-fast-1 :free) log cost 0; the audit prices at list.
    info = {"apiProtocol": "openai", "tokensIn": 9000, "tokensOut": 40, "cacheWrites": 0, "cacheReads": 8000, "cost": 0}
    entry = {"ts": 1768000000000, "type": "say", "say": "api_req_started", "text": json.dumps(info)}
    (tmp_path / "ui_messages.json").write_text(json.dumps([entry, {**entry, "ts": 1768000001000}]))
    _, summary = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert ("calls the log says cost $0 (a free model, or one billed by a plan): 2 of unknown; the dollars here price "
            "them at the model's list prices, not at what the log says was billed") in summary.notes


def test_roo_code_since_late_2025_counts_the_whole_prompt_in_tokens_in() -> None:
    requests, notes, _ = _read("roo-total")
    assert [r.usage for r in requests] == [
        Usage(cache_write_5m=15000, uncached=3, output=200),
        Usage(cache_read=15000, cache_write_5m=400, uncached=8, output=90),
        Usage(cache_read=4000, cache_write_5m=5000, uncached=10, output=40),
    ]
    assert _totals(requests) == (3 + 8 + 10, 15000 + 4000, 15000 + 400 + 5000, 200 + 90 + 40)
    assert requests[2].events == (("compaction", "sliding-window truncation"),)
    assert any("tokensIn is the whole prompt, cacheReads and cacheWrites included" in n for n in notes)


def test_claude_dev_usage_in_api_req_finished() -> None:
    requests, notes, _ = _read("claude-dev")
    assert _usages(requests) == [
        (3, "unknown", "unknown", Usage(uncached=2100, output=300)),
        (5, "unknown", "unknown", Usage(uncached=2500, output=150)),
    ]
    assert any(n.startswith("usage of calls naming no handler (unknown): read as additive") for n in notes)


def test_a_log_naming_no_handler_with_tokens_in_always_0_is_read_as_deepseek_writes_it(tmp_path: Path) -> None:
    """Cline before modelInfo, no task_metadata.json: only DeepSeek's handler leaves tokensIn 0
    on every call beside its cache counts, so cacheWrites is its miss count, not a write."""
    entries = [r.value for r in iter_records(TASKS / "deepseek-metadata" / "ui_messages.json")][:3]
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(entries))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [(r.provider, r.usage) for r in requests] == [
        ("deepseek", Usage(uncached=5000, output=100)),
        ("deepseek", Usage(cache_read=4992, uncached=260, output=50)),
    ]
    assert any("as only DeepSeek's handler writes them" in n for n in summary.notes)


def test_a_checkpoint_restore_is_counted_apart_and_forks_the_chain(tmp_path: Path) -> None:
    entries = [r.value for r in iter_records(TASKS / "gateway-and-compatible" / "ui_messages.json")][:3]
    deleted = {"tokensIn": 10, "tokensOut": 5, "cacheWrites": 7, "cacheReads": 100, "cost": 0.01}
    entries.insert(2, {"ts": 1762000004000, "type": "say", "say": "deleted_api_reqs", "text": json.dumps(deleted)})
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(entries))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert len(requests) == 2 and requests[1].prefix is not None and requests[1].prefix.parent is not None
    assert requests[1].events == (("fork", "checkpoint restored: the calls after it were deleted"),)
    assert (
        "1 checkpoint restore deleted earlier calls (counted apart, not in the totals; their summed fields: "
        "tokensIn 10, tokensOut 5, cacheWrites 7, cacheReads 100)"
    ) in summary.notes


def _with_subagent_usage(tmp_path: Path, text: str) -> tuple[list, object]:
    """A task's first two calls with a subagent_usage row of ``text`` between them, read."""
    entries = [r.value for r in iter_records(TASKS / "gateway-and-compatible" / "ui_messages.json")][:3]
    entries.insert(2, {"ts": 1762000004000, "type": "say", "say": "subagent_usage", "text": text})
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(entries))
    return import_file(path, CLINE, ImportContext())


def test_subagent_usage_rows_are_counted_apart(tmp_path: Path) -> None:
    # Cline's SDK build (2026-08) writes a say "subagent_usage" row when a round of spawn_agent
    # calls ends: the subagents' calls summed, cacheWrites and cacheReads always 0. No call of this
    # task, so not in the totals (before: passed over, unsaid); the note names its sums.
    usage = {"source": "subagents", "tokensIn": 48_210, "tokensOut": 1_904, "cacheWrites": 0, "cacheReads": 0, "cost": 0.0731}
    requests, summary = _with_subagent_usage(tmp_path, json.dumps(usage))
    before, _ = import_file(TASKS / "gateway-and-compatible" / "ui_messages.json", CLINE, ImportContext())
    assert _totals(requests) == _totals(before[:2])
    assert (
        "1 subagent_usage row: the spawned subagents' calls summed by Cline, with no cache split (cacheWrites and "
        "cacheReads written as 0): counted apart, not in the totals (their own session files hold the calls) "
        "(tokensIn 48,210, tokensOut 1,904, cost $0.0731)"
    ) in summary.notes


@pytest.mark.parametrize("cost", ["NaN", "Infinity", "1" + "0" * 400, "-5", "true"])
def test_a_subagent_usage_cost_out_of_range_is_left_out_of_its_sum(tmp_path: Path, cost: str) -> None:
    # A cost no finite dollar amount (NaN, an infinity, an integer past a float, a negative, a
    # bool) is read as a call's logged cost is (logged_cost): left out of the sum. Before: a huge
    # integer crashed the note's formatting (OverflowError), NaN printed "$nan", true counted $1.
    _, summary = _with_subagent_usage(tmp_path, '{"tokensIn": 10, "tokensOut": 2, "cost": %s}' % cost)
    assert any(note.endswith("(tokensIn 10, tokensOut 2, cost $0.0000)") for note in summary.notes)


def test_a_subagent_usage_row_with_a_cache_split_is_not_said_to_have_none(tmp_path: Path) -> None:
    # Cline writes cacheWrites and cacheReads as 0 on its subagents' row; a fork of its SDK build
    # (lgiaccar/PlinyCode, apps/vscode/src/sdk/message-translator/advisor-rows.ts) writes its
    # advisor's call as a subagent_usage row of source "advisor" with the call's cache split.
    # Before: the note said "no cache split (cacheWrites and cacheReads written as 0)" all the
    # same, and left the split out of its sums.
    usage = {"source": "advisor", "tokensIn": 812, "tokensOut": 640, "cacheWrites": 300, "cacheReads": 9_000, "cost": 0.012}
    _, summary = _with_subagent_usage(tmp_path, json.dumps(usage))
    note = next(note for note in summary.notes if "subagent_usage" in note)
    assert "written as 0" not in note
    assert note.endswith("(tokensIn 812, tokensOut 640, cacheWrites 300, cacheReads 9,000, cost $0.0120)")


# -- the folder walk and the audit -----------------------------------------------------------


def test_a_task_folder_pairs_its_files_and_audits_once(tmp_path: Path) -> None:
    """The walk audits ui_messages.json, which reads the two files beside it; they are not
    audited on their own."""
    requests, summaries = load_trace([TASKS / "anthropic-modelinfo"])
    assert [(Path(s.file).name, s.format, s.requests) for s in summaries] == [("ui_messages.json", "cline", 3)]
    assert len(requests) == 3 and [r.prefix.new_blocks for r in requests if r.prefix] == [2, 4, 6]
    totals = run_audit([TASKS / "anthropic-modelinfo"]).totals
    assert (totals.requests, totals.input, totals.output, totals.cache_read, totals.cache_write) == (3, 15, 250, 11500, 13300)
    # Without the ui file beside them, each is audited alone and says where the usage is: the
    # history's one assistant message with metrics is a call of its own (its cached 9,000 the
    # first call's write, which the history cannot tell from a read: cache not reported).
    shutil.copytree(TASKS / "anthropic-modelinfo", tmp_path / "task")
    (tmp_path / "task" / "ui_messages.json").unlink()
    requests, summaries = load_trace([tmp_path])
    assert [Path(s.file).name for s in summaries] == ["api_conversation_history.json", "task_metadata.json"]
    assert all("without its ui_messages.json" in s.notes[0] for s in summaries)
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.output, r.usage.cache_reported) for r in requests if r.usage] == [
        (4, 0, 120, False)
    ] and [r.usage.cache_unsplit for r in requests if r.usage] == [9000]


def test_a_history_file_alone_says_where_the_usage_is(tmp_path: Path) -> None:
    path = tmp_path / "api_conversation_history.json"
    history = json.loads((TASKS / "anthropic-modelinfo" / "api_conversation_history.json").read_text())
    path.write_text(json.dumps([{k: v for k, v in m.items() if k != "metrics"} for m in history]))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert requests == [] and "without its ui_messages.json" in summary.notes[0]


def test_an_empty_task_file_in_a_folder_is_skipped_not_an_error(tmp_path: Path) -> None:
    shutil.copytree(TASKS / "roo-total", tmp_path / "task")
    (tmp_path / "task" / "api_conversation_history.json").write_text("[]")
    requests, summaries = load_trace([tmp_path])
    assert len(requests) == 3
    assert [s.format for s in summaries if Path(s.file).name == "api_conversation_history.json"] == ["empty"]


def test_a_context_history_beside_the_ui_file_is_skipped_by_a_walk_as_not_a_log(tmp_path: Path) -> None:
    # Cline 3.10+ keeps its context edits in context_history.json, a serialized map (an array of
    # arrays): a walk refused the whole audit on it ("nested array where a record was expected").
    # Named alone it is still refused.
    shutil.copytree(TASKS / "anthropic-modelinfo", tmp_path / "task")
    edits = tmp_path / "task" / "context_history.json"
    edits.write_text(json.dumps([[1, [0, [[0, [[1744295276344, "text", ["[NOTE] history removed"], []]]]]]]]))
    result = run_audit([tmp_path])
    assert sorted((Path(f.file).name, f.format) for f in result.files) == [
        ("context_history.json", "not-a-log"), ("ui_messages.json", "cline")]
    assert result.totals.requests == 3
    with pytest.raises(UserError, match=r"context_history.json:1: nested array where a record was expected$"):
        run_audit([edits])


@pytest.mark.parametrize(
    ("log", "named", "found"),
    [
        (TASKS / "roo-total" / "ui_messages.json", "codex", "cline"),
        (FIXTURES / "codex.jsonl", "cline", "codex"),
        (FIXTURES / "pi.jsonl", "roo", "pi"),
    ],
)
def test_a_wrong_input_is_exit_2_naming_the_format_found(
    log: Path, named: str, found: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", str(log), "--input", named, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"a {found} record in a file read as" in err and f"--input {found}" in err


def test_a_malformed_text_or_count_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ui_messages.json"
    bad = {"ts": 1, "type": "say", "say": "api_req_started", "text": json.dumps({"tokensIn": -4, "cost": 0.1})}
    path.write_text(json.dumps([bad]))
    assert main(["audit", str(path), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: {path}:1: tokensIn is not a non-negative integer (-4)"
    with pytest.raises(UserError):
        import_file(path, CLINE, ImportContext())


# -- Cline 4.x / Cline CLI: SDK sessions ------------------------------------------------------

SDK = TASKS / "sdk-session" / "1791234567890_q7xk2"
SDK_LEAD = SDK / "1791234567890_q7xk2.messages.json"


def test_a_cline_sdk_session_is_detected_and_its_metrics_count_the_whole_prompt() -> None:
    """Cline 4.x (June 2026 on) writes sessions/<id>/<id>.messages.json; main refused it as an
    unknown format. ``metrics.inputTokens`` is the whole prompt, reads and writes inside it."""
    doc = json.loads(SDK_LEAD.read_text())
    assert detect(doc) == Evidence.WRAPPER and detect_format(SDK_LEAD).name == "cline"
    assert detect({**doc, "agent": ["lead"]}) is None and detect({**doc, "version": "1"}) is None
    requests, summary = import_file(SDK_LEAD, CLINE, ImportContext())
    # One call per assistant message with metrics (msg_a3 has none: the turn's last message does).
    assert [r.request_id for r in requests] == ["msg_a1", "msg_a2", "msg_a4", "msg_a5"]
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests if r.usage] == [
        (10, 0, 8190, 120), (10, 8190, 400, 80), (10, 8590, 400, 60), (9300, 0, 0, 200)]
    assert [r.provider for r in requests] == ["anthropic", "anthropic", "anthropic", "openai"]
    assert [r.prefix.new_blocks for r in requests if r.prefix] == [1, 3, 4, 2]
    assert ("model_change", "claude-sonnet-4-6 -> gpt-5.4") in requests[3].events and ("user_turn", "") in requests[3].events
    assert [r.prefix.parent for r in requests if r.prefix][1:] == [r.prefix.node for r in requests[:-1] if r.prefix]
    assert requests[1].sent_ms == 1791234567890 + 4500 and all(r.lane_kind == "main" for r in requests)
    assert any("inputTokens" in n and "whole prompt" in n for n in summary.notes)
    assert any("$0.0682" in n for n in summary.notes)


def test_a_cline_sdk_session_folder_audits_lead_and_subagent_and_skips_the_manifest() -> None:
    requests, summaries = load_trace([TASKS / "sdk-session"])
    by_name = {Path(s.file).name: (s.format, s.requests) for s in summaries}
    assert by_name == {
        "1791234567890_q7xk2.json": ("not-a-log", 0),
        "1791234567890_q7xk2.messages.json": ("cline", 4),
        "agent_k3p9.messages.json": ("cline", 1),
    }
    sub = [r for r in requests if r.lane_kind == "subagent"]
    assert len(sub) == 1 and sub[0].usage == Usage(cache_write_5m=2990, uncached=10, output=40)
    # One object a file, every call on its first line: each names its message (as a Gemini CLI
    # .json session's do), so that file:line tells them apart.
    lead = [(r.line, r.path) for r in requests if r.file.endswith("_q7xk2.messages.json")]
    assert len(set(lead)) == len(lead) == 4 and all(path.startswith("messages[") for _, path in lead)


def test_a_cline_sdk_compaction_state_marks_the_first_call_after_it(tmp_path: Path) -> None:
    shutil.copytree(SDK, tmp_path / "s")
    state = {"version": 1, "updated_at": "2026-10-05T10:31:00.000Z", "source_message_count": 5, "messages": []}
    (tmp_path / "s" / "1791234567890_q7xk2.compaction.json").write_text(json.dumps(state))
    requests, summary = import_file(tmp_path / "s" / SDK_LEAD.name, CLINE, ImportContext())
    assert [any(k == "compaction" for k, _ in r.events) for r in requests] == [False, False, True, False]
    assert requests[2].prefix is not None and requests[2].prefix.parent is None
    assert any("compacted after message 5" in n for n in summary.notes)


def test_a_legacy_task_resumed_in_cline_4_does_not_count_its_carried_totals(tmp_path: Path) -> None:
    """Cline 4.x resumes a pre-4.0 task by converting its history into the SDK session and putting
    the old task's summed usage on the last converted assistant message, then appending a warning
    user message. That sum is not a call (the old task's ui_messages.json holds the calls)."""
    doc = json.loads(SDK_LEAD.read_text())
    legacy = [
        {"id": "l1", "role": "user", "content": [{"type": "text", "text": "old task"}]},
        {"id": "l2", "role": "assistant", "content": [{"type": "text", "text": "old answer"}],
         "modelInfo": {"id": "claude-sonnet-4-5", "provider": "unknown"},
         "metrics": {"inputTokens": 900000, "outputTokens": 9000, "cacheReadTokens": 800000, "cacheWriteTokens": 90000, "cost": 3.1}},
        {"id": "l3", "role": "user", "content": [{"type": "text", "text": "Warning: this is a legacy conversation, which means tool names may have changed."}]},
    ]
    doc["messages"] = legacy + doc["messages"]
    path = tmp_path / "x.messages.json"
    path.write_text(json.dumps(doc))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["msg_a1", "msg_a2", "msg_a4", "msg_a5"]
    assert [line for line, why in summary.skipped if "pre-4.0 task" in why] == [1]
    assert ("resume", "a pre-4.0 Cline task resumed as an SDK session") in requests[0].events


def _imported_session(folder: Path, *, manifest: bool) -> Path:
    """A Cline CLI 3.0.65 (SDK 0.0.86) session imported from Claude Code, then continued in Cline:
    two copied Claude Code calls (their usage as Claude Code logged it, additive, cost 0, dated
    before the import), then one prompt and two calls of Cline's own."""
    sid = "1795000000000_imprt"
    folder.mkdir()
    at = 1_795_000_000_000  # 2026-11-18T11:06:40Z, the import
    def call(mid: str, ts: int, metrics: tuple[int, int, int, int, float]) -> dict:
        tokens_in, reads, writes, out, cost = metrics
        return {"id": mid, "role": "assistant", "content": [{"type": "text", "text": mid}], "ts": ts,
                "modelInfo": {"id": "claude-sonnet-4-6", "provider": "anthropic"},
                "metrics": {"inputTokens": tokens_in, "outputTokens": out, "cacheReadTokens": reads,
                            "cacheWriteTokens": writes, "cost": cost}}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "fix the bug"}], "ts": at - 600_000},
        call("cc1", at - 590_000, (3, 0, 12_000, 200, 0)),
        {"role": "user", "content": [{"type": "text", "text": "and the test"}], "ts": at - 500_000},
        call("cc2", at - 490_000, (5, 12_000, 400, 150, 0)),
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "carry on in cline"}], "ts": at + 60_000},
        call("c1", at + 65_000, (15_000, 0, 14_000, 300, 0.06)),
        call("c2", at + 70_000, (15_500, 14_000, 400, 100, 0.01)),
    ]
    doc = {"version": 1, "updated_at": "2026-11-18T11:08:00.000Z", "agent": "lead", "sessionId": sid,
           "origin": {"source": "cli", "mode": "import", "sessionId": sid, "trigger": "claude-code"}, "messages": messages}
    path = folder / f"{sid}.messages.json"
    path.write_text(json.dumps(doc, indent=2))
    if manifest:
        meta = {"title": "fix the bug", "sessionHistoryOrigin": {"mode": "import", "trigger": "claude-code"},
                "importedFrom": {"tool": "claude-code", "sourceSessionId": "5f0c", "sourcePath": "/h/.claude/projects/p/5f0c.jsonl",
                                 "importedAt": "2026-11-18T11:06:40.000Z", "sourceProvider": "anthropic",
                                 "sourceModel": "claude-sonnet-4-6"}}
        (folder / f"{sid}.json").write_text(json.dumps({
            "version": 1, "session_id": sid, "source": "cli", "pid": 0, "started_at": "2026-11-18T10:56:40.000Z",
            "status": "completed", "interactive": True, "provider": "anthropic", "model": "claude-sonnet-4-6",
            "cwd": "/w", "workspace_root": "/w", "enable_tools": True, "enable_spawn": False, "enable_teams": False,
            "metadata": meta}))
    return path


def test_a_session_imported_from_another_agent_counts_only_clines_own_calls(tmp_path: Path) -> None:
    """The Cline CLI 3.0.65 (SDK 0.0.86) imports Claude Code, Codex and OpenCode sessions,
    copying each source call's usage onto its converted message. Those are the other agent's
    calls (in its own log), not Cline's: skipped, and Cline's first call resumes."""
    path = _imported_session(tmp_path / "s", manifest=True)
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["c1", "c2"]
    # c1: 15,000 in, 14,000 written -> 1,000 uncached; c2: 15,500 in, 14,000 read, 400 written -> 1,100.
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests if r.usage] == [
        (1_000, 0, 14_000, 300), (1_100, 14_000, 400, 100)]
    assert sum(r.usage.prompt for r in requests if r.usage) == 30_500
    assert [why.split(":")[0] for _, why in summary.skipped] == ["messages[1]", "messages[3]"]
    assert all("claude-code session" in why for _, why in summary.skipped)
    assert ("resume", "a claude-code session imported into Cline, continued there") in requests[0].events
    assert any("imported from claude-code" in n for n in summary.notes)


def test_an_imported_session_without_its_manifest_says_it_cannot_tell(tmp_path: Path) -> None:
    path = _imported_session(tmp_path / "s", manifest=False)
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["cc1", "cc2", "c1", "c2"] and not summary.skipped
    assert any("imported from claude-code" in n and "cannot be told" in n for n in summary.notes)


def test_an_imported_session_whose_messages_carry_no_time_says_it_cannot_tell(tmp_path: Path) -> None:
    # The manifest says when, but the imported messages carry no ts: none is dated before the
    # import, nothing is skipped, and the note says the copied usage cannot be told (before, it
    # said the copied calls were skipped).
    path = _imported_session(tmp_path / "s", manifest=True)
    doc = json.loads(path.read_text())
    for message in doc["messages"][:4]:
        del message["ts"]
    path.write_text(json.dumps(doc))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["cc1", "cc2", "c1", "c2"] and not summary.skipped
    assert any("imported from claude-code" in n and "no message dated before its importedAt" in n and "cannot be told" in n
               for n in summary.notes)
    assert not any("are skipped" in n for n in summary.notes)


def test_a_display_only_error_message_is_in_no_prompt(tmp_path: Path) -> None:
    """SDK 0.0.86 (the Cline CLI 3.0.65) appends a failed run's error as an assistant message
    marked ``metadata.displayOnly`` (shown in the chat, filtered out of every request): no call,
    and no block of the next call's prompt."""
    doc = json.loads(SDK_LEAD.read_text())
    error = {"id": "error_1", "role": "assistant", "content": [{"type": "text", "text": "provider error"}, {"type": "text", "text": "x"}],
             "ts": doc["messages"][1]["ts"] + 1, "metadata": {"displayOnly": True, "displayRole": "error"},
             "modelInfo": {"id": "claude-sonnet-4-6", "provider": "anthropic"}}
    doc["messages"].insert(2, error)
    path = tmp_path / "x.messages.json"
    path.write_text(json.dumps(doc))
    requests, _ = import_file(path, CLINE, ImportContext())
    # As without it (the fixture's own counts): msg_a2's prompt adds the tool result and msg_a1's 2 blocks.
    assert [r.request_id for r in requests] == ["msg_a1", "msg_a2", "msg_a4", "msg_a5"]
    assert [r.prefix.new_blocks for r in requests if r.prefix] == [1, 3, 4, 2]


def test_a_cline_sdk_session_with_a_bad_count_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(SDK_LEAD.read_text())
    doc["messages"][1]["metrics"]["cacheReadTokens"] = "many"
    path = tmp_path / "x.messages.json"
    path.write_text(json.dumps(doc))
    assert main(["audit", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{path}:1: messages[1]: metrics.cacheReadTokens" in err


# -- real public task logs, read where they are -----------------------------------------------


def _real_logs() -> list[Path]:
    """``ui_messages.json`` files under $PREFIXBENCH_CLINE_LOGS (public task logs kept outside
    the project, e.g. a clone of CoreGems/Cline-Xray's task_sample), else ../shared/realdata/cline-tasks."""
    root = os.environ.get("PREFIXBENCH_CLINE_LOGS") or str(REALDATA / "cline-tasks")
    if not Path(root).is_dir():
        pytest.skip(f"no real Cline / Roo Code task logs at {root} (set PREFIXBENCH_CLINE_LOGS to a folder holding some)")
    found = sorted(Path(root).rglob("ui_messages.json"))
    if not found:
        pytest.skip(f"no ui_messages.json under {root}")
    return found


def _own_sums(path: Path) -> tuple[int, int, int, int, int]:
    """What the log says itself: calls with usage that were not stopped, and their field sums."""
    calls = sums_in = sums_out = writes = reads = 0
    for record in iter_records(path):
        value = record.value
        if not isinstance(value, dict) or value.get("say") != "api_req_started":
            continue
        info = json.loads(value.get("text") or "{}")
        if info.get("cancelReason") or info.get("streamingFailedMessage") or "cost" not in info:
            continue
        calls += 1
        sums_in += info.get("tokensIn") or 0
        sums_out += info.get("tokensOut") or 0
        writes += info.get("cacheWrites") or 0
        reads += info.get("cacheReads") or 0
    return calls, sums_in, sums_out, writes, reads


def test_real_task_logs_total_what_they_say() -> None:
    for path in _real_logs():
        requests, summary = import_file(path, detect_format(path), ImportContext())
        calls, tokens_in, tokens_out, writes, reads = _own_sums(path)
        usages = [r.usage for r in requests if r.usage is not None]
        assert len(requests) == calls, path
        assert sum(u.output for u in usages) == tokens_out, path
        # Every reading keeps the prompt: tokensIn + cacheReads + cacheWrites, less what a
        # subset or miss reading counts twice.
        assert sum(u.cache_read for u in usages) == reads, path
        if all("additive" in n or "gateway" in n for n in summary.notes if n.startswith("usage of")):
            assert sum(u.uncached for u in usages) == tokens_in, path
            assert sum(u.cache_write_5m for u in usages) == writes, path
        else:
            assert sum(u.uncached for u in usages) >= writes and sum(u.cache_write_5m for u in usages) == 0, path


def test_entries_of_odd_types_decide_nothing(tmp_path: Path) -> None:
    """Found by the fuzz property: a ``say`` that is not a string, counts that are not numbers
    where only the reading is decided, are ignored there (the reading itself refuses bad counts)."""
    path = tmp_path / "ui_messages.json"
    odd = {"ts": 1, "type": "say", "say": [], "text": json.dumps({"apiProtocol": "anthropic", "cacheReads": "9"})}
    good = {"ts": 2, "type": "say", "say": "api_req_started", "text": json.dumps({"tokensIn": 0, "cacheWrites": 5, "cost": 0})}
    path.write_text(json.dumps([odd, good]))
    requests, _ = import_file(path, CLINE, ImportContext())
    assert [r.line for r in requests] == [1]


def test_a_task_metadata_whose_model_usage_is_not_a_list_is_read_as_none(tmp_path: Path) -> None:
    """Found by the fuzzer: ``model_usage`` a number crashed the read (``'int' object is not iterable``)."""
    folder = tmp_path / "task"
    shutil.copytree(TASKS / "deepseek-metadata", folder)
    meta = folder / "task_metadata.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "model_usage": 17}))
    requests, _ = import_file(folder / "ui_messages.json", CLINE, ImportContext())
    assert requests and all(r.usage is not None for r in requests)


def test_an_sdk_message_time_past_year_9999_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the fuzzer: a ``ts`` of 2**63 crashed the pricing with a traceback."""
    doc = json.loads(SDK_LEAD.read_text())
    doc["messages"][0]["ts"] = 2**63
    path = tmp_path / SDK_LEAD.name
    path.write_text(json.dumps(doc))
    assert main(["audit", str(path), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {path}:1: messages[0].ts: timestamp 9223372036854775808 is not a plausible time")


def test_every_reader_s_times_are_checked_before_the_audit() -> None:
    """Whatever a reader lets through, a time past year 9999 is refused naming the request's line."""
    from msgspec.structs import replace

    real = CLINE.read

    def lax(path, records, ctx):
        requests, summary = real(path, records, ctx)
        return [replace(requests[0], sent_ms=10**20), *requests[1:]], summary

    with pytest.raises(UserError, match=r"ui_messages.json:\d+: timestamp 100000000000000000000 is not a plausible time"):
        import_file(TASKS / "deepseek-metadata" / "ui_messages.json", replace(CLINE, read=lax), ImportContext())


def test_an_audit_of_no_model_call_is_one_line_not_an_empty_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file named on the command line that holds no call with usage (bare chat messages, as a
    trajectory's messages or a task's api_conversation_history.json keep them) printed a whole
    report of 0 requests, "hit ratio 0.0%", exit 0 (and --min-hit-ratio failed it on 0%)."""
    path = tmp_path / "local.traj.json"
    path.write_text(json.dumps([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}], indent=2))
    assert main(["audit", str(path), "--quiet", "--min-hit-ratio", "0.5"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: nothing to audit: no model call with usage in the logs given ({path}: chat messages with no "
        "usage (as a Cline task's api_conversation_history.json keeps them, its usage in the ui_messages.json beside it), "
        "so no call is read here)")
    history = tmp_path / "task" / "api_conversation_history.json"
    history.parent.mkdir()
    messages = json.loads((TASKS / "anthropic-modelinfo" / "api_conversation_history.json").read_text())
    history.write_text(json.dumps([{k: v for k, v in m.items() if k != "metrics"} for m in messages]))
    assert main(["audit", str(history), "--quiet"]) == 2
    assert "without its ui_messages.json: the usage is there" in capsys.readouterr().err


@pytest.mark.parametrize("cost", ["1" + "0" * 400, "NaN", "Infinity", "-1", "1e300"])
def test_a_logged_cost_past_any_plausible_amount_is_left_out_of_the_notes(tmp_path: Path, cost: str) -> None:
    # A fuzzer's find: a cost of 10**400 dollars in a Cline 4.x message's metrics crashed the
    # sum of the session's own costs (an int too large for a float).
    source = TASKS / "sdk-session" / "1791234567890_q7xk2"
    folder = tmp_path / "session"
    shutil.copytree(source, folder)
    target = folder / "1791234567890_q7xk2.messages.json"
    text = target.read_text()
    assert text.count('"cost": 0.033') == 1
    target.write_text(text.replace('"cost": 0.033', f'"cost": {cost}'))
    assert main(["audit", str(folder), "--quiet", "--format", "json"]) == 0


def _history_item(entries: list[dict]) -> dict:
    """A Roo Code ``history_item.json`` (its ``HistoryItem``, written beside ui_messages.json since
    February 2026): the task's usage summed over its calls, written here from the entries."""
    infos = [json.loads(e["text"]) for e in entries if e.get("say") == "api_req_started"]
    return {"id": "t-1", "number": 3, "ts": 1767225600000, "task": "fix the parser", "workspace": "/w", "mode": "code",
            "tokensIn": sum(i.get("tokensIn", 0) for i in infos), "tokensOut": sum(i.get("tokensOut", 0) for i in infos),
            "cacheWrites": sum(i.get("cacheWrites", 0) for i in infos), "cacheReads": sum(i.get("cacheReads", 0) for i in infos),
            "totalCost": 0.0, "size": 4096, "status": "completed"}


def test_roo_history_item_is_read_with_its_task_and_alone_yields_no_call(tmp_path: Path) -> None:
    # Roo Code 3.49 on (February 2026) keeps history_item.json in every task folder (and tasks/_index.json above).
    task = tmp_path / "tasks" / "t-1"
    shutil.copytree(TASKS / "roo-total", task)
    entries = [r.value for r in iter_records(task / "ui_messages.json")]
    (task / "history_item.json").write_text(json.dumps(_history_item(entries)))
    (tmp_path / "tasks" / "_index.json").write_text(json.dumps({"version": 1, "updatedAt": 1767225600000, "entries": [_history_item(entries)]}))
    alone = run_audit([task.parent.parent]).totals
    assert (alone.requests, alone.cache_read, alone.cache_write, alone.input, alone.output) == (
        (lambda t: (t.requests, t.cache_read, t.cache_write, t.input, t.output))(run_audit([TASKS / "roo-total"]).totals))
    path = task / "history_item.json"
    assert CLINE.read_with(path, json.loads(path.read_text())) == task / "ui_messages.json"
    (task / "ui_messages.json").unlink()
    requests, summary = import_file(path, detect_format(path), ImportContext())
    assert requests == [] and "history item" in summary.notes[0] and "no call" in summary.notes[0]


def _gateway_call(ts: int, model: str, tokens_in: int, reads: int, out: int) -> list[dict]:
    usage = {"request": "...", "tokensIn": tokens_in, "tokensOut": out, "cacheWrites": 0, "cacheReads": reads, "cost": 0.01}
    info = {"providerId": "cline", "modelId": model, "mode": "act"}
    return [{"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(usage), "modelInfo": info},
            {"ts": ts + 1, "type": "say", "say": "text", "text": "done", "modelInfo": info}]


@pytest.mark.parametrize(("model", "provider", "written"), [
    ("anthropic/claude-sonnet-4.5", "anthropic", True), ("x-ai/grok-code-fast-1", "xai", False)])
def test_clines_own_provider_writes_are_its_tokens_in_for_an_anthropic_model(
        tmp_path: Path, model: str, provider: str, written: bool) -> None:
    # Cline's own handler reports cacheWriteTokens 0 whatever was written (cline.ts), and marks an
    # Anthropic model's last user messages for caching: the next call reads what tokensIn held.
    # Main counted tokensIn as uncached, predicted a read of 0 and missed the second call.
    entries = [{"ts": 1_767_600_000_000, "type": "say", "say": "task", "text": "fix it"},
               *_gateway_call(1_767_600_001_000, model, 20_000, 0, 100),
               *_gateway_call(1_767_600_030_000, model, 500, 20_000, 100)]
    (tmp_path / "ui_messages.json").write_text(json.dumps(entries))
    result = run_audit([tmp_path / "ui_messages.json"])
    first, second = result.rows
    assert first.provider == second.provider == provider
    if written:
        assert (first.reported_cache_write, first.reported_uncached) == (20_000, 0)
        assert second.predicted_cache_read == 20_000 and second.read_within
        assert any("tokensIn read as written" in n for n in result.files[0].notes)
    else:  # xAI writes nothing it reports: its tokensIn stays uncached, its write not reported (None)
        assert (first.reported_cache_write, first.reported_uncached) == (None, 20_000)


def _history_file(tmp_path: Path, messages: list[dict]) -> Path:
    """An api_conversation_history.json of ``messages``, alone in ``tmp_path``."""
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(messages))
    return path


def _history_call(ts: int, handler: str, model: str, prompt: int, cached: int, out: int) -> list[dict]:
    """A user message and the assistant answer that ends one call, as Cline 3.x writes them into
    api_conversation_history.json since early 2026 (``metrics.tokens``, ``modelInfo``)."""
    return [
        {"role": "user", "content": [{"type": "text", "text": "[read_file] Result: ..."}], "ts": ts},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, {"type": "tool_use", "id": f"t{ts}", "name": "read_file", "input": {}}],
         "modelInfo": {"modelId": model, "providerId": handler, "mode": "act"},
         "metrics": {"tokens": {"prompt": prompt, "completion": out, "cached": cached}, "cost": 0.001}, "ts": ts + 2_000},
    ]


def test_a_history_file_alone_with_metrics_counts_one_call_per_assistant_message(tmp_path: Path) -> None:
    # Cline 3.x (2026) writes each call's usage into api_conversation_history.json too:
    # metrics.tokens {prompt: inputTokens, completion: outputTokens, cached: cacheWrites +
    # cacheReads}. Committed alone (no ui_messages.json), main read no call from it ("chat messages
    # with no usage") and refused the audit.
    base = 1_777_000_000_000
    messages = [
        *_history_call(base, "openai", "gpt-5.2", 12_000, 8_000, 300),  # prompt_tokens, cached inside it
        *_history_call(base + 60_000, "gemini", "gemini-2.5-pro", 1_500, 11_000, 200),  # additive, no writes
        *_history_call(base + 120_000, "anthropic", "claude-sonnet-4-5", 40, 13_000, 100),  # reads + writes summed
        *_history_call(base + 180_000, "anthropic", "claude-sonnet-4-5", 900, 0, 50),  # nothing cached: exact
        *_history_call(base + 240_000, "deepseek", "deepseek-chat", 0, 14_000, 70),  # hits + misses summed
        *_history_call(base + 300_000, "anthropic", "claude-sonnet-4-5", 0, 0, 0),  # all 0: no usage
    ]
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(messages, indent=2))
    assert detect_format(path) is CLINE
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [(r.provider, r.model) for r in requests] == [
        ("openai", "gpt-5.2"), ("gemini", "gemini-2.5-pro"), ("anthropic", "claude-sonnet-4-5"),
        ("anthropic", "claude-sonnet-4-5"), ("deepseek", "deepseek-chat")]
    got = [(u.uncached, u.cache_read, u.cache_write, u.output, u.cache_reported) for u in (r.usage for r in requests) if u]
    assert got == [
        (12_000 - 8_000, 8_000, 0, 300, True),
        (1_500, 11_000, 0, 200, True),
        (40, 0, 0, 100, False),  # the split is only in ui_messages.json: not reported, kept apart
        (900, 0, 0, 50, True),
        (0, 0, 0, 70, False),  # a DeepSeek miss is never a hit or a write
    ]
    assert [u.cache_unsplit for u in (r.usage for r in requests) if u] == [0, 0, 13_000, 0, 14_000]
    assert [reason for _, reason in summary.skipped] == ["assistant message with metrics all 0 (no usage recorded)"]
    # Sent at the user message before, done at the answer; each call adds its user message's block
    # and the previous answer's two.
    assert [(r.sent_ms, r.done_ms) for r in requests][:2] == [(base, base + 2_000), (base + 60_000, base + 62_000)]
    assert [r.prefix.new_blocks for r in requests if r.prefix] == [1, 3, 3, 3, 3]
    assert any("sums cache reads and writes" in n for n in summary.notes)
    assert any("hits and MISSES" in n for n in summary.notes)
    totals = run_audit([path]).totals
    assert (totals.requests, totals.input, totals.cache_read, totals.cache_write, totals.output) == (
        5, 4_000 + 1_500 + 40 + 900 + 0, 8_000 + 11_000, 0, 300 + 200 + 100 + 50 + 70)


def _history_without_cost(tmp_path: Path, messages: list[dict]) -> Path:
    """An api_conversation_history.json of ``messages`` with no metrics.cost (as Cline's
    Anthropic handler, which streams no total cost, writes it)."""
    for message in messages:
        message.get("metrics", {}).pop("cost", None)
    return _history_file(tmp_path, messages)


def test_a_history_file_alone_on_the_anthropic_handler_is_priced_as_a_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Cline's Anthropic handler streams no total cost, so its history file carries no
    # metrics.cost (the cost is worked out for ui_messages.json only) and cached = reads + writes
    # cannot be split. Main priced those tokens as uncached input, one figure stated as paid:
    # $0.06231 here (the real bill lies between the two ends below; on a public folder of 36
    # calls main said $7.80 where its ui_messages.json says $2.20).
    # claude-sonnet-4-5 per million: input 3, read 0.30, 5 m write 3.75, output 15.
    #   all read:    (10 x 3 + 8,000 x 0.30 + 100 x 15) + (10 x 3 + 12,000 x 0.30 + 50 x 15) =  8,310 -> $0.00831
    #   all written: (10 x 3 + 8,000 x 3.75 + 100 x 15) + (10 x 3 + 12,000 x 3.75 + 50 x 15) = 77,310 -> $0.07731
    base = 1_777_000_000_000
    messages = [*_history_call(base, "anthropic", "claude-sonnet-4-5", 10, 8_000, 100),
                *_history_call(base + 60_000, "anthropic", "claude-sonnet-4-5", 10, 12_000, 50)]
    path = _history_without_cost(tmp_path, messages)
    result = run_audit([path])
    t = result.totals
    # (the reads and writes are one sum the log cannot split: no request reports either, None)
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (2, 20, None, None, 150)
    assert (t.cost_usd, t.unpriced_requests, t.ranged_requests) == (Decimal(0), 2, 2)
    assert (t.ranged_low_usd, t.ranged_high_usd) == (Decimal("0.00831"), Decimal("0.07731"))
    assert [row.cost_usd for row in result.rows] == [None, None]
    assert "8,000 tokens logged as cache reads and writes summed: $0.0039 if all read to $0.0315 if all written" in result.rows[0].detail
    assert any(n.startswith("2 request(s) log their cache reads and writes summed, the split unknown (20,000 tokens")
               and "$0.0083 if all were read to $0.0773 if all were written" in n for n in result.notes)
    # Anthropic bills writes: the note's DeepSeek clause (a miss at the input price) is not said
    # here (it was said whatever the provider, before the review's mend).
    assert not any("DeepSeek" in n for n in result.notes if "summed, the split unknown" in n)
    assert main(["audit", str(path), "--quiet"]) == 0
    assert "paid unknown (2 request(s) whose log sums cache reads and writes: $0.0083 to $0.0773)" in capsys.readouterr().out


def test_a_model_priced_only_as_a_range_is_not_named_among_those_with_no_price(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A DeepSeek history alone (hits and misses summed, no metrics.cost) beside a model the price
    # table does not know. merge36 put deepseek-chat among the models of no price (models table
    # "no price", JSON priced false, and the headline "1 request(s) of deepseek-chat, gpt-9-nope,
    # no price"): its price row gave the range; only gpt-9-nope has none.
    base = 1_777_000_000_000
    messages = [*_history_call(base, "deepseek", "deepseek-chat", 100, 14_000, 70),
                *_history_call(base + 60_000, "openai", "gpt-9-nope", 1_000, 0, 70)]
    path = _history_without_cost(tmp_path, messages)
    result = run_audit([path])
    assert [(m.model, m.priced) for m in result.models] == [("deepseek-chat", True), ("gpt-9-nope", False)]
    assert any("where the price has no write rate, a DeepSeek miss: at the input price" in n for n in result.notes)
    assert (result.totals.unpriced_requests, result.totals.ranged_requests) == (2, 1)
    assert main(["audit", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out
    # One clause for both reasons (two parentheses before: `(... gpt-9-nope) (not in it: 1 ...`);
    # no request priced to the cent, so the headline says unknown, not $0.
    assert ("paid unknown (2 request(s): 1 with no price for their model (gpt-9-nope), "
            "1 whose log sums cache reads and writes ($") in out
    # Each model's paid cell says why it holds no dollars (both said $0, or "no price" for a
    # model priced as a range), and the session's says neither was priced.
    models = out.split("\nmodels")[1].split("calibration per file")[0]
    assert [line.split()[-2:] for line in models.splitlines() if "deepseek-chat" in line or "gpt-9-nope" in line] == [
        ["only", "-"], ["price", "-"]]
    assert "range only" in models
    assert [(m.unpriced_requests, m.ranged_requests) for m in result.models] == [(1, 1), (1, 0)]
    assert [(s.unpriced_requests, s.ranged_requests) for s in result.sessions] == [(2, 1)]


def test_a_history_file_alone_through_clines_gateway_reads_tokens_in_as_written(tmp_path: Path) -> None:
    # As in its ui_messages.json: Cline's own provider reports no writes, so an Anthropic model's
    # prompt is what it wrote and cached what it read; another model's prompt stays uncached.
    base = 1_777_000_000_000
    messages = [*_history_call(base, "cline", "anthropic/claude-sonnet-4.5", 20_000, 0, 100),
                *_history_call(base + 30_000, "cline", "anthropic/claude-sonnet-4.5", 600, 20_000, 100),
                *_history_call(base + 60_000, "cline", "x-ai/grok-code-fast-1", 700, 19_000, 100)]
    path = _history_file(tmp_path, messages)
    requests, _ = import_file(path, CLINE, ImportContext())
    assert [(u.uncached, u.cache_read, u.cache_write) for u in (r.usage for r in requests) if u] == [
        (0, 0, 20_000), (0, 20_000, 600), (700, 19_000, 0)]


def test_a_history_file_alone_through_clines_gateway_splits_its_uncached_tail_by_cost(tmp_path: Path) -> None:
    # As its ui_messages.json is read (test_clines_own_provider_tells_its_uncached_tail_...): the
    # call's cost (claude-sonnet-4-5: 3 input, 0.30 read, 3.75 write, 15 output per 1M) tells the
    # 10 uncached tokens after the last breakpoint from the 19,990 written. Before, a history file
    # alone read all of its prompt as written.
    base = 1_767_600_000_000
    messages = _history_call(base, "cline", "anthropic/claude-sonnet-4.5", 20_000, 0, 100)
    messages[1]["metrics"]["cost"] = (19_990 * 3.75 + 10 * 3 + 100 * 15) / 1e6
    path = _history_file(tmp_path, messages)
    requests, _ = import_file(path, CLINE, ImportContext())
    assert [(u.uncached, u.cache_read, u.cache_write) for u in (r.usage for r in requests) if u] == [(10, 0, 19_990)]


def test_a_history_file_alone_with_a_bad_count_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messages = _history_call(1_777_000_000_000, "openai", "gpt-5.2", 100, 40, 3)
    messages[1]["metrics"]["tokens"]["completion"] = -1
    path = _history_file(tmp_path, messages)
    assert main(["audit", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"prefixbench: error: {path}:1: messages[1]: metrics.tokens.completion is not a non-negative integer (-1)"


def _call_entries(ts: int, tokens_in: int, reads: int, writes: int, deleted: list[int] | None, after: list[int] | None) -> list[dict]:
    """An api_req_started entry (carrying the range in force when it was said) and the reasoning
    and text of its answer (carrying ``after``: the range Cline saved while making the request)."""
    info = {"providerId": "anthropic", "modelId": "claude-opus-4-6", "mode": "act"}
    usage = {"request": "...", "tokensIn": tokens_in, "tokensOut": 300, "cacheWrites": writes, "cacheReads": reads, "cost": 0.1}
    return [
        {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(usage), "modelInfo": info,
         **({"conversationHistoryDeletedRange": deleted} if deleted else {})},
        *({"ts": ts + 4_000 + i, "type": "say", "say": say, "text": "editing", "modelInfo": info,
           **({"conversationHistoryDeletedRange": after} if after else {})} for i, say in enumerate(("reasoning", "text"))),
    ]


@pytest.mark.parametrize("condensed", [False, True])
def test_a_truncation_saved_after_a_call_was_announced_is_that_calls(tmp_path: Path, condensed: bool) -> None:
    # Cline says api_req_started, then truncates the history for that very request and saves the
    # new conversationHistoryDeletedRange with the entries after it (its answer's reasoning and
    # text): the call whose prompt fell is the one before the range is first seen. Main gave the
    # truncation to the next call: the truncated one was "compaction with no compaction logged",
    # and the next one, which read the whole truncated prompt, was predicted to read the head only.
    # A range saved after a call whose prompt did not fall (a condense tool's) is still the next's.
    base = 1_770_578_000_000
    second = (10, 8_000, 30_000) if not condensed else (10, 100_000, 2_000)  # prompt fell: 38,010 of 100,010
    entries = [{"ts": base, "type": "say", "say": "task", "text": "add the tab"},
               *_call_entries(base + 1_000, 10, 8_000, 92_000, None, None),
               *_call_entries(base + 20_000, *second, None, [2, 9]),
               *_call_entries(base + 40_000, 10, sum(second), 4_000, [2, 9], [2, 9])]
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(entries))
    requests, _ = import_file(path, CLINE, ImportContext())
    truncation = ("compaction", "history truncated: messages 2-9 dropped")
    first, truncated, after = requests
    turn = (("user_turn", ""),)
    assert [r.events for r in requests] == ([turn, (truncation,), ()] if not condensed else [turn, (), (truncation,)])
    assert (truncated.prefix.parent is None) != condensed and (after.prefix.parent is None) == condensed
    if not condensed:
        rows = run_audit([path]).rows
        # The call after the truncation reads the whole truncated prompt, as predicted now (main:
        # the head alone, 8,000).
        assert rows[2].reported_cache_read == 38_010 and rows[2].read_within and rows[2].predicted_cache_read > 30_000


def test_a_history_file_alone_splits_reads_from_writes_by_each_calls_own_cost(tmp_path: Path) -> None:
    # A handler that reports the call's cost (OpenRouter's, here with a Claude model) lets the
    # summed cached count be split: cost = prompt x input + cached x read + writes x (write - read)
    # + output x output at the model's prices (claude-sonnet-4-5: 3, 0.30, 3.75, 15 per 1M).
    base = 1_777_000_000_000
    messages = [*_history_call(base, "openrouter", "anthropic/claude-sonnet-4.5", 40, 13_000, 100),
                *_history_call(base + 30_000, "openrouter", "anthropic/claude-sonnet-4.5", 50, 14_000, 100)]
    messages[1]["metrics"]["cost"] = (40 * 3 + 10_000 * 0.30 + 3_000 * 3.75 + 100 * 15) / 1e6  # 10,000 read, 3,000 written
    messages[3]["metrics"]["cost"] = 0.02  # priced otherwise: no whole split
    path = _history_file(tmp_path, messages)
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [(u.uncached, u.cache_read, u.cache_write, u.cache_reported) for u in (r.usage for r in requests) if u] == [
        (40, 10_000, 3_000, True), (50, 0, 0, False)]
    assert any("split by each call's own metrics.cost" in n for n in summary.notes)


def _sdk_call(index: int, ts: int, model: str, prompt: int, reads: int) -> list[dict]:
    return [
        {"id": f"u{index}", "role": "user", "content": [{"type": "text", "text": "go on"}], "ts": ts},
        {"id": f"a{index}", "role": "assistant", "content": [{"type": "text", "text": "done"}], "ts": ts + 2_000,
         "modelInfo": {"id": model, "provider": "cline", "family": "claude"},
         "metrics": {"inputTokens": prompt, "outputTokens": 100, "cacheReadTokens": reads, "cacheWriteTokens": 0, "cost": 0.1}},
    ]


@pytest.mark.parametrize(("model", "written"), [("anthropic/claude-sonnet-4.5", True), ("x-ai/grok-code-fast-1", False)])
def test_a_cline_sdk_session_through_clines_own_provider_reads_its_anthropic_prompt_past_the_reads_as_written(
        tmp_path: Path, model: str, written: bool) -> None:
    # Cline 4.x through Cline's own provider: cacheWriteTokens 0 on every call while each call reads
    # the whole previous prompt (the cline/cline repository's own SDK session fixture shows it, its
    # cost fields pricing that part at the write rate). Main counted it as uncached input and
    # predicted no read of it: 9 of that session's 16 reads within 3%, 15 once read as written.
    base = 1_783_376_870_000
    doc = {"version": 1, "updated_at": "2026-07-06T10:00:00Z", "agent": "lead", "sessionId": "1783376870000_ab12c",
           "messages": [*_sdk_call(0, base, model, 34_000, 0), *_sdk_call(1, base + 10_000, model, 35_600, 33_998)]}
    path = tmp_path / "1783376870000_ab12c.messages.json"
    path.write_text(json.dumps(doc))
    result = run_audit([path])
    first, second = result.rows
    if written:
        assert (first.reported_cache_write, first.reported_uncached) == (34_000, 0)
        assert (second.reported_cache_write, second.reported_uncached, second.reported_cache_read) == (1_602, 0, 33_998)
        assert second.read_within
        assert any("inputTokens less the reads read as written" in n for n in result.files[0].notes)
    else:  # xAI reports no writes and has none: the prompt past the reads stays uncached, its write None
        assert (first.reported_cache_write, first.reported_uncached) == (None, 34_000)


def test_a_history_file_alone_splits_deepseek_hits_from_misses_by_each_calls_own_cost(tmp_path: Path) -> None:
    # DeepSeek's handler logs cached = hits + misses and its cost: misses at the input price, hits
    # at the hit price (deepseek-chat from 2025-12-09: 0.28, 0.028, output 0.42 per 1M).
    base = 1_777_000_000_000
    messages = [*_history_call(base, "deepseek", "deepseek-chat", 0, 14_000, 70),
                *_history_call(base + 30_000, "deepseek", "deepseek-chat", 0, 15_000, 70)]
    messages[1]["metrics"]["cost"] = (2_000 * 0.28 + 12_000 * 0.028 + 70 * 0.42) / 1e6  # 12,000 hits, 2,000 misses
    messages[3]["metrics"]["cost"] = 0.5  # priced otherwise: the hits and misses stay unsplit
    path = _history_file(tmp_path, messages)
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [(u.uncached, u.cache_read, u.cache_write, u.cache_reported) for u in (r.usage for r in requests) if u] == [
        (2_000, 12_000, 0, True), (0, 0, 0, False)]
    assert any("hits and MISSES, split by each call's own metrics.cost" in n for n in summary.notes)


def test_clines_own_provider_tells_its_uncached_tail_from_its_writes_by_the_calls_cost(tmp_path: Path) -> None:
    # Cline's own provider folds an Anthropic model's writes into tokensIn beside the few uncached
    # tokens after the last breakpoint; its cost fields price each part at its rate
    # (claude-sonnet-4-5: 3 input, 0.30 read, 3.75 write, 15 output per 1M), so the cost splits
    # them. Main read all of tokensIn as written: the next call read 10 tokens less than predicted,
    # an "unexplained" miss of 10 tokens on every call (haram-333/fineye's five Claude calls).
    def call(ts: int, tokens_in: int, reads: int, cost: float) -> list[dict]:
        calls = _gateway_call(ts, "anthropic/claude-sonnet-4.5", tokens_in, reads, 100)
        calls[0]["text"] = json.dumps({**json.loads(calls[0]["text"]), "cost": cost})
        return calls

    entries = [{"ts": 1_767_600_000_000, "type": "say", "say": "task", "text": "fix it"},
               *call(1_767_600_001_000, 20_000, 0, (19_990 * 3.75 + 10 * 3 + 100 * 15) / 1e6),
               *call(1_767_600_030_000, 510, 19_990, (19_990 * 0.30 + 500 * 3.75 + 10 * 3 + 100 * 15) / 1e6)]
    (tmp_path / "ui_messages.json").write_text(json.dumps(entries))
    first, second = run_audit([tmp_path / "ui_messages.json"]).rows
    assert (first.reported_cache_write, first.reported_uncached) == (19_990, 10)
    assert (second.reported_cache_write, second.reported_uncached) == (500, 10)
    assert second.predicted_cache_read == second.reported_cache_read == 19_990 and second.cause is None


def _sdk_run(prefix: str, ts: int, calls: list[tuple[int, int, int, int] | None], total: tuple[int, int, int, int] | None) -> list[dict]:
    """One run of a Cline SDK session: a prompt, one assistant message per call (its metrics, or
    none) answered by a tool result, then (``total``) an empty terminal message with those metrics."""
    def metrics(counts: tuple[int, int, int, int]) -> dict:
        return dict(zip(("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"), counts, strict=True))

    out: list[dict] = [{"id": f"{prefix}u", "role": "user", "content": [{"type": "text", "text": "go"}], "ts": ts}]
    for n, counts in enumerate(calls):
        message = {"id": f"{prefix}a{n}", "role": "assistant", "ts": ts + 1_000 * n + 500,
                   "content": [{"type": "tool_use", "id": f"{prefix}t{n}", "name": "bash", "input": {}}],
                   "modelInfo": {"id": "claude-sonnet-4-6", "provider": "anthropic"}}
        if counts is not None:
            message["metrics"] = metrics(counts)
        out.append(message)
        out.append({"id": f"{prefix}r{n}", "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"{prefix}t{n}", "content": "ok"}]})
    if total is not None:
        out.append({"id": f"{prefix}end", "role": "assistant", "content": [], "ts": ts + 9_000, "metrics": metrics(total),
                    "modelInfo": {"id": "claude-sonnet-4-6", "provider": "anthropic"}})
    return out


def test_a_cline_sdk_run_total_stamped_again_on_its_last_message_is_not_a_call(tmp_path: Path) -> None:
    # cline/cline, SDK session-data.ts from 2026-04-22 until #10689 (2026-05-12): per-turn metrics on
    # each call's message, and the run's total (AgentResult.usage) on an empty terminal message.
    calls = [(10_000, 50, 0, 9_990), (10_300, 40, 9_990, 300)]
    doc = {"version": 1, "updated_at": "2026-05-01T10:00:00Z", "agent": "lead", "sessionId": "1777600000000_ab12c",
           "messages": _sdk_run("x", 1_777_600_000_000, calls, (20_300, 90, 9_990, 10_290))}
    path = tmp_path / "1777600000000_ab12c.messages.json"
    path.write_text(json.dumps(doc))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["xa0", "xa1"]  # main: xa0, xa1, xend (20,300 more input counted twice)
    assert any("stamped again on the run's last message" in why for _, why in summary.skipped)
    # A last call whose counts are its own is kept (the same file with a real third call).
    doc["messages"] = _sdk_run("y", 1_777_600_000_000, calls, (10_600, 30, 10_290, 300))
    path.write_text(json.dumps(doc))
    requests, _ = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["ya0", "ya1", "yend"]


def test_a_display_only_error_after_a_run_total_leaves_the_total_found(tmp_path: Path) -> None:
    # A failed follow-up's displayOnly error message (no metrics) after the run's empty terminal
    # message is no message of the run: the terminal one is still its last, and its counts still
    # read as the run's summed usage (had the error counted, the total would read as a call).
    calls = [(10_000, 50, 0, 9_990), (10_300, 40, 9_990, 300)]
    messages = _sdk_run("x", 1_777_600_000_000, calls, (20_300, 90, 9_990, 10_290))
    messages.append({"id": "error_1", "role": "assistant", "content": [{"type": "text", "text": "provider error"}],
                     "ts": 1_777_600_010_000, "metadata": {"displayOnly": True, "displayRole": "error"},
                     "modelInfo": {"id": "claude-sonnet-4-6", "provider": "anthropic"}})
    doc = {"version": 1, "updated_at": "2026-05-01T10:00:00Z", "agent": "lead", "sessionId": "1777600000000_ab12c", "messages": messages}
    path = tmp_path / "1777600000000_ab12c.messages.json"
    path.write_text(json.dumps(doc))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["xa0", "xa1"]
    assert any("stamped again on the run's last message" in why for _, why in summary.skipped)


def test_a_display_only_message_with_metrics_is_still_a_call(tmp_path: Path) -> None:
    # Only a displayOnly message without usage is passed over as never sent: one that carries
    # metrics is read as the call they count, its tokens not dropped.
    calls = [(10_000, 50, 0, 9_990), (10_300, 40, 9_990, 300)]
    messages = _sdk_run("x", 1_777_600_000_000, calls, None)
    messages[3]["metadata"] = {"displayOnly": True}
    doc = {"version": 1, "updated_at": "2026-06-01T10:00:00Z", "agent": "lead", "sessionId": "1777600000000_ab12c", "messages": messages}
    path = tmp_path / "1777600000000_ab12c.messages.json"
    path.write_text(json.dumps(doc))
    requests, _ = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["xa0", "xa1"]
    assert sum(r.usage.uncached + r.usage.cache_read + r.usage.cache_write_5m for r in requests if r.usage) == 20_300


def test_a_cline_sdk_file_written_before_per_turn_metrics_holds_run_totals(tmp_path: Path) -> None:
    # Before cline/cline c1c11c186d (2026-04-22) only a run's last message carried metrics: the sum of
    # its calls, which no call's prompt was.
    messages = [*_sdk_run("p", 1_776_000_000_000, [None, None], (20_300, 90, 9_990, 10_290)),
                *_sdk_run("q", 1_776_000_100_000, [(10_600, 30, 10_290, 300)], None)]
    doc = {"version": 1, "updated_at": "2026-04-15T10:00:00Z", "agent": "lead", "sessionId": "1776000000000_ab12c",
           "messages": messages}
    path = tmp_path / "1776000000000_ab12c.messages.json"
    path.write_text(json.dumps(doc))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["qa0"]  # main: pend too, one call of 20,300 input
    assert any("a run of 2 calls (inputTokens 20,300" in why for _, why in summary.skipped)
    # The same file written after the fix: an assistant message without metrics is no sign of a sum.
    doc["updated_at"] = "2026-06-01T10:00:00Z"
    path.write_text(json.dumps(doc))
    requests, _ = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["pend", "qa0"]


def test_a_cline_sdk_call_with_zero_metrics_is_not_taken_for_its_runs_sum(tmp_path: Path) -> None:
    # A provider that reports no usage leaves every count 0: the run's last call (content, a tool
    # call) then equals the sum of the calls before it, and int38 skipped it as a stamped sum.
    doc = {"version": 1, "updated_at": "2026-06-01T10:00:00Z", "agent": "lead", "sessionId": "1780300000000_ab12c",
           "messages": _sdk_run("z", 1_780_300_000_000, [(0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0)], None)}
    path = tmp_path / "1780300000000_ab12c.messages.json"
    path.write_text(json.dumps(doc))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["za0", "za1", "za2"]
    assert not any("summed usage" in why for _, why in summary.skipped)
    # An empty terminal message with the run's (zero) sum is still no call.
    doc["messages"] = _sdk_run("e", 1_780_300_000_000, [(0, 0, 0, 0), (0, 0, 0, 0)], (0, 0, 0, 0))
    path.write_text(json.dumps(doc))
    requests, _ = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["ea0", "ea1"]


def test_a_truncation_whose_call_grew_is_that_calls_when_its_read_fell(tmp_path: Path) -> None:
    # Cline 3.12 on a task whose first message is large: every call drops a few messages after
    # it and adds more than it dropped, so the truncated call's prompt rises (161,010 after
    # 160,010) while its read stops at the kept head (150,000, below the 160,000 the previous call
    # left cached). The range was given to the next call and the truncated call predicted to
    # read the whole previous prompt (seen on a public Cline home: 8 calls of 120).
    base = 1_770_578_000_000
    entries = [{"ts": base, "type": "say", "say": "task", "text": "index the chain"},
               *_call_entries(base + 1_000, 10, 0, 150_000, None, None),
               *_call_entries(base + 20_000, 10, 150_000, 10_000, None, None),
               *_call_entries(base + 40_000, 10, 150_000, 11_000, None, [2, 5]),
               *_call_entries(base + 60_000, 10, 161_000, 2_000, [2, 5], [2, 5])]
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(entries))
    requests, _ = import_file(path, CLINE, ImportContext())
    truncation = ("compaction", "history truncated: messages 2-5 dropped")
    assert [r.events for r in requests][2:] == [(truncation,), ()]
    rows = run_audit([path]).rows
    assert [(r.reported_cache_read, r.read_within) for r in rows[2:]] == [(150_000, True), (161_000, True)]


def test_an_api_request_with_every_count_0_is_skipped_and_listed(tmp_path: Path) -> None:
    # Roo Code 3.3 (February 2025) keeps {tokensIn: 0, tokensOut: 0, cacheWrites: 0, cacheReads: 0,
    # cost: 0} on a call that failed ("the language model did not provide any assistant
    # messages") or whose provider streamed no usage: it was a request of 0 tokens in the totals.
    entries = [{"ts": 1_738_788_611_335, "type": "say", "say": "text", "text": "fix the domain"},
               {"ts": 1_738_788_611_344, "type": "say", "say": "api_req_started",
                "text": json.dumps({"request": "...", "tokensIn": 11_881, "tokensOut": 811, "cacheWrites": 0, "cacheReads": 0, "cost": 0.008})},
               {"ts": 1_738_788_700_041, "type": "say", "say": "api_req_started",
                "text": json.dumps({"request": "...", "tokensIn": 0, "tokensOut": 0, "cacheWrites": 0, "cacheReads": 0, "cost": 0})},
               {"ts": 1_738_788_760_752, "type": "say", "say": "error", "text": "Unexpected API Response"},
               {"ts": 1_738_788_837_748, "type": "say", "say": "api_req_started",
                "text": json.dumps({"request": "...", "tokensIn": 17_075, "tokensOut": 297, "cacheWrites": 0, "cacheReads": 0, "cost": 0.01})}]
    path = tmp_path / "ui_messages.json"
    path.write_text(json.dumps(entries))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [r.usage.uncached for r in requests if r.usage] == [11_881, 17_075]
    assert summary.skipped == ((1, "api_req_started with every count 0 (a failed call, or no usage reported)"),)


def test_kilo_openai_native_tokens_in_leaves_out_the_reads_told_from_the_cost() -> None:
    # openai-native.ts's chat-completions path (Kilo Code to 4.81): inputTokens prompt_tokens
    # less cached_tokens, cost calculateApiCostOpenAI of the whole prompt_tokens. No call's reads
    # exceed its tokensIn, so only the cost tells: 9040 x $2 + 8960 x $0.50 + 250 x $8 = $0.02456.
    requests, notes, _ = _read("kilo-openai-native")
    assert [(r.provider, r.usage) for r in requests] == [
        ("openai", Usage(uncached=9000, output=300)),
        ("openai", Usage(cache_read=8960, uncached=9040, output=250, prompt_count=PROMPT_EXCLUSIVE_BY_COST)),
        ("openai", Usage(cache_read=17920, uncached=18080, output=200, prompt_count=PROMPT_EXCLUSIVE_BY_COST)),
    ]
    assert any(n.startswith("usage of protocol openai (gpt-4.1): the openai protocol, yet tokensIn is prompt_tokens "
                            "less cacheReads") for n in notes)


def _costed_copy(tmp_path: Path, task: str, cost: Callable[[dict], float]) -> Path:
    """A copy of the fixture ``task``'s ui_messages.json whose every call costs ``cost(counts)``."""
    folder = tmp_path / "task"
    shutil.copytree(TASKS / task, folder)
    ui = folder / "ui_messages.json"
    entries = json.loads(ui.read_text())
    for entry in entries:
        if entry["say"] == "api_req_started":
            info = json.loads(entry["text"])
            info["cost"] = cost(info)
            entry["text"] = json.dumps(info)
    ui.write_text(json.dumps(entries))
    return ui


def test_kilo_openai_protocol_whole_prompt_kept_where_the_cost_prices_it(tmp_path: Path) -> None:
    # The same counts with the cost an OpenAI-compatible handler gives (tokensIn the whole prompt):
    # read as today, the reads inside tokensIn.
    ui = _costed_copy(tmp_path, "kilo-openai-native", lambda info: ((info["tokensIn"] - info["cacheReads"]) * 2 + info["cacheReads"] * 0.5 + info["tokensOut"] * 8) / 1e6)
    requests, _ = import_file(ui, CLINE, ImportContext())
    assert [r.usage for r in requests][1] == Usage(cache_read=8960, uncached=80, output=250)


def test_kilo_before_june_2025_reported_no_cache_told_from_the_cost(tmp_path: Path) -> None:
    # Kilo Code's gateway / OpenRouter handler before fb40132 (2025-06-20): inputTokens
    # prompt_tokens (reads and writes inside), cacheReadTokens commented out, totalCost the
    # bill, no apiProtocol in the entries. $0.011475 is not 12,600 x $3 + 200 x $15 = $0.0408.
    requests, notes, _ = _read("kilo-before-protocol")
    assert [r.usage for r in requests] == [
        Usage(uncached=12000, output=300, cache_reported=False),
        Usage(uncached=12600, output=200, cache_reported=False),
        Usage(uncached=13000, output=150, cache_reported=False),
    ]
    assert any(n.startswith("usage of calls naming no handler (anthropic/claude-sonnet-4): cache not reported") for n in notes)
    # Costs that price the counts with no cache cannot tell a read of nothing from a handler that
    # reported none: read as reported, and said so.
    ui = _costed_copy(tmp_path, "kilo-before-protocol", lambda info: (info["tokensIn"] * 3 + info["tokensOut"] * 15) / 1e6)
    requests, summary = import_file(ui, CLINE, ImportContext())
    assert all(r.usage.cache_reported for r in requests)
    assert any(n.startswith("no call of no handler named (anthropic/claude-sonnet-4) reports a cache read or write: "
                            "the log cannot tell") for n in summary.notes)


def test_cline_openrouter_generation_endpoint_reported_no_cache_told_from_the_cost(tmp_path: Path) -> None:
    # openrouter.ts before cline/cline#3340 (May 2025), usage from the generation endpoint:
    # cacheReadTokens 0, inputTokens native_tokens_prompt (whole), totalCost the bill. Claude
    # 3.7 Sonnet, the first call writing 8,000 tokens: 8,000 x $3.75 + 120 x $15 = $0.0318.
    info = {"providerId": "openrouter", "modelId": "anthropic/claude-3.7-sonnet", "mode": "act"}
    calls = [(8000, 120, 0.0318), (8600, 90, 0.00627)]
    entries = [{"ts": 1740000000000, "type": "say", "say": "task", "text": "Fix the flaky test", "modelInfo": info}] + [
        {"ts": 1740000001000 + 10000 * n, "type": "say", "say": "api_req_started", "modelInfo": info,
         "text": json.dumps({"tokensIn": tin, "tokensOut": out, "cacheWrites": 0, "cacheReads": 0, "cost": cost})}
        for n, (tin, out, cost) in enumerate(calls)]
    ui = tmp_path / "ui_messages.json"
    ui.write_text(json.dumps(entries))
    requests, summary = import_file(ui, CLINE, ImportContext())
    assert [r.usage for r in requests] == [Usage(uncached=8000, output=120, cache_reported=False),
                                           Usage(uncached=8600, output=90, cache_reported=False)]
    assert any(n.startswith("usage of openrouter (anthropic/claude-3.7-sonnet): cache not reported") for n in summary.notes)


def test_kilo_groq_kimi_tokens_in_leaves_out_the_reads_told_from_the_prices_its_costs_fit(tmp_path: Path) -> None:
    # groq.ts (Kilo Code 4.85-4.95, Kimi K2's caching): inputTokens prompt_tokens less
    # cached_tokens, cost calculateApiCostOpenAI of the whole prompt_tokens at Groq's prices. No
    # price is listed here for Groq's Kimi K2; the five costs fit $1 input, $0.50 read, $3 output
    # with tokensIn the uncached part, and only a read price of $1.50 (above the input's) else.
    requests, notes, _ = _read("kilo-groq-kimi")
    assert [(r.usage.cache_read, r.usage.uncached) for r in requests] == [
        (0, 6000), (5632, 8368), (13312, 13688), (23552, 24448), (35840, 39160)]
    assert [r.usage.prompt_count for r in requests] == ["", *[PROMPT_EXCLUSIVE_BY_COST] * 4]
    assert any(n.startswith("usage of protocol openai (moonshotai/kimi-k2-instruct): the openai protocol, yet tokensIn")
               for n in notes)
    # Costs an OpenAI-compatible handler gives (tokensIn the whole prompt): read as today.
    ui = _costed_copy(tmp_path, "kilo-groq-kimi", lambda info: ((info["tokensIn"] - info["cacheReads"]) * 1.0 + info["cacheReads"] * 0.5 + info["tokensOut"] * 3.0) / 1e6)
    whole, _ = import_file(ui, CLINE, ImportContext())
    assert [(r.usage.cache_read, r.usage.uncached, r.usage.prompt_count) for r in whole][1] == (5632, 2736, "")


@pytest.mark.parametrize("task", ["kilo-openai-native", "kilo-groq-kimi", "kilo-gateway", "kilo-before-protocol",
                                  "roo-protocol", "openrouter-early", "cline-gateway-early"])
def test_a_cost_too_large_for_a_float_is_no_cost_to_tell_the_reading_by(tmp_path: Path, task: str) -> None:
    # Found by fuzzing: a cost of 10**400 (an integer JSON allows) reached math.isfinite() and
    # float(), which raised OverflowError, and the audit crashed with a traceback. It is out of a
    # logged cost's range, so it tells nothing: read as a call whose cost is no help (here -1).
    huge, _ = import_file(_costed_copy(tmp_path / "huge", task, lambda info: 10**400), CLINE, ImportContext())
    none, _ = import_file(_costed_copy(tmp_path / "none", task, lambda info: -1), CLINE, ImportContext())
    assert huge and [r.usage for r in huge] == [r.usage for r in none]


def test_a_named_additive_handler_made_whole_by_the_late_2025_writer_is_not_read_as_a_gateway(tmp_path: Path) -> None:
    # A call naming its handler (modelInfo) beside an apiProtocol, whose tokensIn covers its reads and
    # writes (Roo Code's / Kilo Code's writer since late 2025): the "total" reading, not the one of a
    # gateway's handler passing prompt_tokens on (LiteLLM, Requesty, OCA), nor a DeepSeek MISS count.
    for handler, model, want in (("anthropic", "claude-sonnet-4-5", Usage(cache_read=15000, cache_write_5m=400, uncached=8, output=90)),
                                 ("bedrock", "us.deepseek.r1-v1:0", Usage(cache_read=15000, cache_write_5m=400, uncached=8, output=90))):
        rows = []
        for n, (tokens_in, output, writes, reads) in enumerate(((15003, 200, 15000, 0), (15408, 90, 400, 15000))):
            info = {"request": f"r{n}", "apiProtocol": "anthropic", "tokensIn": tokens_in, "tokensOut": output,
                    "cacheWrites": writes, "cacheReads": reads}
            rows.append({"ts": 1764000001000 + n * 8000, "type": "say", "say": "api_req_started", "text": json.dumps(info),
                         "modelInfo": {"providerId": handler, "modelId": model, "mode": "code"}})
        (tmp_path / "ui_messages.json").write_text(json.dumps(rows))
        requests, summary = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
        assert requests[1].usage == want
        assert (f"usage of {handler} ({model}): tokensIn is the whole prompt, cacheReads and cacheWrites included "
                "(Roo Code / Kilo Code since late 2025; Cline 4.x inputTokens)") in summary.notes


def test_a_handler_told_by_its_counts_is_judged_on_its_own_calls_where_task_metadata_names_it(tmp_path: Path) -> None:
    # A task naming no handler in its entries (no modelInfo): task_metadata.json says Anthropic's
    # served the first calls (additive: tokensIn below the reads), then OpenRouter's early handler
    # (prompt_tokens whole). Whether OpenRouter's wrote it whole is told from its own calls only.
    t0 = 1747000000000
    meta = {"model_usage": [{"ts": t0, "model_id": "claude-sonnet-4-20250514", "model_provider_id": "anthropic", "mode": "act"},
                            {"ts": t0 + 60000, "model_id": "google/gemini-2.5-pro", "model_provider_id": "openrouter", "mode": "act"}]}
    (tmp_path / "task_metadata.json").write_text(json.dumps(meta))
    rows = [{"ts": t0 + 500, "type": "say", "say": "text", "text": "go"}]
    for n, (ts, tokens_in, output, writes, reads) in enumerate(
            ((t0 + 1000, 40, 200, 11960, 0), (t0 + 9000, 9, 90, 600, 11960), (t0 + 61000, 8000, 120, 0, 0), (t0 + 69000, 8600, 90, 0, 7900))):
        info = {"request": f"r{n}", "tokensIn": tokens_in, "tokensOut": output, "cacheWrites": writes, "cacheReads": reads}
        rows.append({"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(info)})
    (tmp_path / "ui_messages.json").write_text(json.dumps(rows))
    requests, summary = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert [r.usage for r in requests] == [
        Usage(cache_write_5m=11960, uncached=40, output=200),
        Usage(cache_read=11960, cache_write_5m=600, uncached=9, output=90),
        Usage(uncached=8000, output=120),
        Usage(cache_read=7900, uncached=700, output=90),
    ]
    assert any(n.startswith("usage of openrouter (google/gemini-2.5-pro): tokensIn is the whole prompt") for n in summary.notes)


def test_a_history_file_alone_through_litellm_to_deepseek_never_reads_a_miss_as_a_hit(tmp_path: Path) -> None:
    # LiteLLM's handler passes prompt_tokens on whole and writes a DeepSeek-shaped server's MISS
    # count as cacheWrites: metrics.tokens.cached sums hits and misses, both inside prompt. Read
    # as the OpenAI-compatible handler's, every miss was a hit (a 100% hit ratio here).
    base = 1_777_000_000_000
    messages = [*_history_call(base, "litellm", "deepseek-chat", 14_000, 14_000, 70),
                *_history_call(base + 60_000, "litellm", "deepseek-chat", 15_000, 15_000, 70)]
    # deepseek-chat per million: input 0.28, hit 0.028, output 0.42; the second call 12,000 hits, 3,000 misses.
    messages[3]["metrics"]["cost"] = (12_000 * 0.028 + 3_000 * 0.28 + 70 * 0.42) / 1e6
    messages[1]["metrics"].pop("cost")
    path = _history_file(tmp_path, messages)
    requests, summary = import_file(path, CLINE, ImportContext())
    got = [(u.uncached, u.cache_read, u.cache_write, u.cache_reported, u.cache_unsplit) for u in (r.usage for r in requests)]
    assert got == [(0, 0, 0, False, 14_000), (3_000, 12_000, 0, True, 0)]
    assert any(n.startswith("usage of litellm (deepseek-chat): metrics.tokens.prompt is the whole prompt (prompt_tokens passed on "
                            "by a gateway's handler, LiteLLM's or OCA's) and includes metrics.tokens.cached, which sums a "
                            "DeepSeek-shaped server's cache hits and MISSES, split by each call's own metrics.cost")
               for n in summary.notes)


def test_a_content_block_whose_type_is_not_text_is_no_kind(tmp_path: Path) -> None:
    """A history block whose ``type`` is an object or a list (a damaged or foreign file) counts as
    no kind of block; it was a TypeError traceback (unhashable type), found by a type-swap fuzz."""
    task = shutil.copytree(TASKS / "kilo-before-protocol", tmp_path / "task")
    history = task / "api_conversation_history.json"
    messages = json.loads(history.read_text())
    assert isinstance(messages[1]["content"], list)
    for swapped in ({}, [], ["thinking"]):
        messages[1]["content"][0]["type"] = swapped
        history.write_text(json.dumps(messages))
        assert main(["audit", str(task), "--quiet", "--format", "json"]) == 0


def test_a_call_on_a_third_party_hosts_handler_is_unpriced_not_the_makers_list_price(tmp_path: Path) -> None:
    # Cline's fireworks handler: Fireworks serves DeepSeek's model at its own prices, which its
    # table does not hold for deepseek-v4-flash (it lists v4-pro). Main priced the call at
    # DeepSeek's list price; the deepseek handler's call keeps it.
    base = 1_777_000_000_000
    messages = [*_history_call(base, "fireworks", "accounts/fireworks/models/deepseek-v4-flash", 12_000, 0, 300),
                *_history_call(base + 60_000, "deepseek", "deepseek-v4-pro", 12_500, 0, 300)]
    path = _history_file(tmp_path, messages)
    requests, _ = import_file(path, CLINE, ImportContext())
    assert [r.upstream for r in requests] == ["fireworks", ""]
    result = run_audit([path])
    assert result.rows[0].cost_usd is None and result.rows[1].cost_usd is not None and result.totals.unpriced_requests == 1
    assert any("served by fireworks (the log names it): Fireworks sets its own" in n for n in result.notes), result.notes


def test_a_cline_sdk_turn_retried_after_empty_replies_is_named_as_summed_attempts(tmp_path: Path) -> None:
    # cline/cline #12927 (2026-08-04): an empty reply is retried and the discarded attempts' usage
    # is added to the accepted one's, on the one assistant message. Prompts 10,000, 10,300 and
    # 10,600; the middle turn took two attempts of its 10,300-token prompt: 20,600 on the message,
    # more than the next call's 10,600, and half of it (10,300) between its neighbours' prompts.
    calls = [(10_000, 50, 0, 9_990), (20_600, 80, 19_980, 300), (10_600, 30, 10_290, 300)]
    doc = {"version": 1, "updated_at": "2026-08-10T10:00:00Z", "agent": "lead", "sessionId": "1786000000000_ab12c",
           "messages": _sdk_run("r", 1_786_000_000_000, calls, None)}
    path = tmp_path / "1786000000000_ab12c.messages.json"
    path.write_text(json.dumps(doc))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert [r.request_id for r in requests] == ["ra0", "ra1", "ra2"]  # counted: the tokens were billed
    # The summed message's counts as logged: 300 uncached = 20,600 - 19,980 read - 300 written.
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write) for r in requests if r.usage] == [
        (10, 0, 9_990), (320, 19_980, 300), (10, 10_290, 300)]
    [note] = [n for n in summary.notes if "retries summed" in n]
    assert note.startswith("1 call(s)") and "messages[3] (inputTokens 20,600, the next call's 10,600: 2 attempts)" in note
    # Written before the retries shipped: no such note (a prompt that shrinks is an unseen compaction).
    doc["updated_at"] = "2026-07-20T10:00:00Z"
    path.write_text(json.dumps(doc))
    _, summary = import_file(path, CLINE, ImportContext())
    assert not any("retries summed" in n for n in summary.notes)
    # A compaction between them (the state beside the file): the drop is the compaction's, not a retry.
    doc["updated_at"] = "2026-08-10T10:00:00Z"
    path.write_text(json.dumps(doc))
    (tmp_path / "1786000000000_ab12c.compaction.json").write_text(json.dumps({"source_message_count": 5}))
    _, summary = import_file(path, CLINE, ImportContext())
    assert not any("retries summed" in n for n in summary.notes)


def test_a_cline_sdk_first_call_larger_than_the_next_is_no_retry(tmp_path: Path) -> None:
    # The first call has no call before it to bound its prompt from below: any prompt more than
    # the next call's and at most 3 times it passed (30,000 then 12,000: 15,000 or 10,000 per
    # "attempt" fitted under 12,000 with a lower bound of 0), and the base named it retried.
    calls = [(30_000, 50, 0, 29_990), (12_000, 30, 0, 11_990), (12_400, 30, 11_990, 400)]
    doc = {"version": 1, "updated_at": "2026-08-10T10:00:00Z", "agent": "lead", "sessionId": "1786000000000_ef56a",
           "messages": _sdk_run("f", 1_786_000_000_000, calls, None)}
    path = tmp_path / "1786000000000_ef56a.messages.json"
    path.write_text(json.dumps(doc))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert len(requests) == 3
    assert not any("retries summed" in n for n in summary.notes), summary.notes


def test_a_cline_sdk_prompt_that_falls_after_an_unseen_compaction_is_no_retry(tmp_path: Path) -> None:
    # Only the latest compaction is kept beside the file: an earlier one shows as a prompt that
    # falls. 60,000 then 12,000: 60,000 / 2 or 3 is no prompt between 40,000 (the one before) and
    # 12,000, so it is not read as retried attempts.
    calls = [(40_000, 50, 39_000, 900), (60_000, 50, 40_000, 19_900), (12_000, 30, 0, 11_990)]
    doc = {"version": 1, "updated_at": "2026-08-10T10:00:00Z", "agent": "lead", "sessionId": "1786000000000_cd34e",
           "messages": _sdk_run("c", 1_786_000_000_000, calls, None)}
    path = tmp_path / "1786000000000_cd34e.messages.json"
    path.write_text(json.dumps(doc))
    requests, summary = import_file(path, CLINE, ImportContext())
    assert len(requests) == 3 and not any("retries summed" in n for n in summary.notes)


def test_a_roo_condense_right_after_a_call_s_start_is_that_call_s(tmp_path: Path) -> None:
    # Roo Code says a call's api_req_started (filled with its counts when the reply ends), then
    # condenses for that call, then streams the reply: the first call whose prompt fell is the one
    # before the condense entry, not the one after. A manual condense (the button, after a reply)
    # is the next call's.
    def call(ts: int, tokens_in: int, reads: int) -> dict:
        info = {"request": "r", "apiProtocol": "openai", "tokensIn": tokens_in, "tokensOut": 50,
                "cacheWrites": 0, "cacheReads": reads, "cost": 0.01}
        return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(info)}

    condense = {"type": "say", "say": "condense_context",
                "contextCondense": {"summary": "s", "cost": 0.1, "prevContextTokens": 150_000, "newContextTokens": 60_000}}
    entries = [
        {"ts": 1_000, "type": "say", "say": "text", "text": "task"},
        call(2_000, 140_000, 0),
        {"ts": 3_000, "type": "say", "say": "text", "text": "reply 1"},
        call(4_000, 62_000, 54_000),  # the condense below was made for this call
        {**condense, "ts": 30_000},
        {"ts": 31_000, "type": "say", "say": "text", "text": "reply 2"},
        call(32_000, 63_000, 62_000),
        {"ts": 33_000, "type": "say", "say": "completion_result", "text": "done"},
        {**condense, "ts": 40_000},  # manual, between calls: the next call's
        {"ts": 41_000, "type": "say", "say": "user_feedback", "text": "more"},
        call(42_000, 61_000, 0),
    ]
    (tmp_path / "ui_messages.json").write_text("[\n" + ",\n".join(json.dumps(e) for e in entries) + "\n]\n")
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    compacted = [r.line for r in requests if ("compaction", "context condensed") in r.events]
    assert [r.line for r in requests] == [3, 5, 8, 12]
    assert compacted == [5, 12]


def _roo_call(ts: int, tokens_in: int, reads: int) -> dict:
    info = {"request": "r", "apiProtocol": "openai", "tokensIn": tokens_in, "tokensOut": 50,
            "cacheWrites": 0, "cacheReads": reads, "cost": 0.01}
    return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(info)}


_CONDENSE = {"type": "say", "say": "condense_context",
             "contextCondense": {"summary": "s", "cost": 0.1, "prevContextTokens": 150_000, "newContextTokens": 60_000}}
_TRUNCATION = {"type": "say", "say": "sliding_window_truncation",
               "contextTruncation": {"truncationId": "t", "messagesRemoved": 4, "prevContextTokens": 150_000,
                                     "newContextTokens": 70_000}}


def _roo_events(tmp_path: Path, between: list[dict]) -> list[tuple[tuple[str, str], ...]]:
    """The events of four calls, the second's prompt fallen, ``between`` right after its api_req_started."""
    entries = [
        {"ts": 1_000, "type": "say", "say": "text", "text": "task"},
        _roo_call(2_000, 140_000, 0),
        {"ts": 3_000, "type": "say", "say": "text", "text": "reply 1"},
        _roo_call(4_000, 62_000, 54_000),
        *between,
        {"ts": 31_000, "type": "say", "say": "text", "text": "reply 2"},
        _roo_call(32_000, 63_000, 62_000),
        {"ts": 33_000, "type": "say", "say": "text", "text": "reply 3"},
        _roo_call(34_000, 64_000, 63_000),
    ]
    (tmp_path / "ui_messages.json").write_text("[\n" + ",\n".join(json.dumps(e) for e in entries) + "\n]\n")
    requests, _ = import_file(tmp_path / "ui_messages.json", CLINE, ImportContext())
    assert len(requests) == 4
    return [r.events for r in requests]


@pytest.mark.parametrize("between, expected", [
    # A failed condense, then the sliding-window fallback (Roo's order).
    ([{"ts": 30_000, "type": "say", "say": "condense_context_error", "text": "Context size increased during condensing"},
      {**_TRUNCATION, "ts": 30_001}], (("compaction", "sliding-window truncation"),)),
    # Two condenses in a row (a forced one after a context-window error): both this call's.
    ([{**_CONDENSE, "ts": 30_000}, {**_CONDENSE, "ts": 30_500}], (("compaction", "context condensed"),) * 2),
    # The rate limit's countdown (partial) before the condense.
    ([{"ts": 4_100, "type": "say", "say": "api_req_retry_delayed", "text": "Rate limiting for 1 seconds...", "partial": True},
      {**_CONDENSE, "ts": 30_000}], (("compaction", "context condensed"),)),
    # A retry's countdown and the failed request's retry prompt before it.
    ([{"ts": 4_100, "type": "ask", "ask": "api_req_failed", "text": "500"},
      {"ts": 4_200, "type": "say", "say": "api_req_retried"}, {**_CONDENSE, "ts": 30_000}], (("compaction", "context condensed"),)),
])
def test_entries_before_a_roo_calls_reply_leave_its_compaction_on_it(tmp_path: Path, between: list[dict],
                                                                     expected: tuple[tuple[str, str], ...]) -> None:
    # Only a reply's entry ends the span in which Roo condenses or truncates for the call it has
    # announced: what comes after the call whose prompt fell is no compaction's.
    assert _roo_events(tmp_path, between) == [(), expected, (), ()]


@pytest.mark.parametrize("entry", [
    {**_CONDENSE, "ts": 30_000, "partial": True},  # a condense still running when the task stopped
    {"ts": 30_000, "type": "say", "say": "condense_context", "partial": True},
    {"ts": 30_000, "type": "say", "say": "condense_context", "partial": False},  # neither contextCondense nor contextTruncation
    {"ts": 30_000, "type": "say", "say": "sliding_window_truncation"},
])
def test_an_interrupted_roo_condense_is_no_compaction(tmp_path: Path, entry: dict) -> None:
    assert _roo_events(tmp_path, [entry]) == [(), (), (), ()]
