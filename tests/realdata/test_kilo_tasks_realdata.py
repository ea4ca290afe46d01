"""Kilo Code task folders read where they live, from a local git copy of the repository (never
copied into this project; the test skips without it):

* 43 task folders of the Kilo Code VS Code extension (``ui_messages.json``,
  ``api_conversation_history.json`` and mostly ``task_metadata.json``, 2026-01-12, a Chinese
  user building an n8n workflow site) that their author exported from
  ``globalStorage/kilocode.kilo-code/tasks/`` into ``exports/kilo_tasks/`` of
  github.com/gao51-qw/n8nworkflow.com (commit ``44161b318c9ba9a1fc15196d0cdea24868163706``), from
  ``PREFIXBENCH_N8NWORKFLOW_COM_REPO`` (default the workplace's mirror). Every call went through
  Kilo's gateway (protocol ``openai``, ``inferenceProvider`` naming the upstream):
  anthropic/claude-sonnet-4.5 (Anthropic, Amazon Bedrock), google/gemini-3-flash-preview (Google
  AI Studio, Google) and x-ai/grok-code-fast-1 (xAI), the model named only in each user message's
  environment details in the history beside.

What is checked is the log's own bookkeeping, recounted here from the raw fields (one request per
api_req_started with a count, a failed stream or a call Kilo marked usageMissing counted apart),
that the model read for each call is one its upstream serves (but for one whose message the
history lost: none), that the Claude calls' writes are what their cost fields bill, and how well
the reads are predicted.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at, files_at

ENV = "PREFIXBENCH_N8NWORKFLOW_COM_REPO"
URL = "github.com/gao51-qw/n8nworkflow.com"
REPO = Path(os.environ.get(ENV, "/work/.mirror/gao51-qw+n8nworkflow.com/repo"))
COMMIT = "44161b318c9ba9a1fc15196d0cdea24868163706"
FOLDER = "exports/kilo_tasks/"
#: The model family each upstream Kilo's gateway names serves.
UPSTREAMS = {"Anthropic": "claude", "Amazon Bedrock": "claude", "Google AI Studio": "gemini", "Google": "gemini", "xAI": "grok"}
#: claude-sonnet-4.5's prices per 1M tokens on 2026-01-12: input, read, write (5 min), output.
SONNET_4_5 = (Decimal("3"), Decimal("0.30"), Decimal("3.75"), Decimal("15"))


def _calls(ui: Path) -> list[dict]:
    """The api_req_started entries of a ui_messages.json that carry a count and did not stop."""
    found = []
    for entry in json.loads(ui.read_text()):
        if entry.get("say") != "api_req_started":
            continue
        info = json.loads(entry["text"])
        if any(info.get(k) for k in ("tokensIn", "tokensOut", "cacheReads", "cacheWrites")) and not info.get("cancelReason"):
            found.append(info)
    return found


def test_kilo_gateway_tasks_count_what_the_log_sums_and_name_each_call_s_model(tmp_path: Path) -> None:
    names = [n for n in files_at(REPO, COMMIT, URL, ENV) if n.startswith(FOLDER) and n.endswith(".json")]
    for name in names:
        out = tmp_path / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(file_at(REPO, COMMIT, name, URL, ENV))
    uis = sorted(tmp_path.glob(f"{FOLDER}*/ui_messages.json"))
    assert len(uis) == 43
    calls = {str(ui): _calls(ui) for ui in uis}
    every = [c for cs in calls.values() for c in cs]
    assert len(every) == 683  # 692 entries, 9 of them failed streams or usageMissing
    assert {c["apiProtocol"] for c in every} == {"openai"} and not any(c["cacheWrites"] for c in every)

    result = run_audit([tmp_path / FOLDER])
    # One task's ui_messages.json is an empty array (its history has 15 messages): skipped.
    assert [(f.file, f.format) for f in result.files if f.format != "cline"] == [
        (str(tmp_path / FOLDER / "1a16eddc-a2f7-4f9d-b6b1-9847cbe8b6d3" / "ui_messages.json"), "empty")]
    t = result.totals
    assert t.requests == 683 and t.unpriced_requests == 1  # main: every call's model unknown, unpriced
    assert t.cache_read == sum(c["cacheReads"] for c in every) == 25_640_512
    assert t.output == sum(c["tokensOut"] for c in every) == 347_641
    # Protocol openai: tokensIn is the whole prompt, the reads inside.
    assert t.input + t.cache_write == sum(c["tokensIn"] - c["cacheReads"] for c in every) == 8_996_249

    # Each call's model, read from its user message's environment details, is one its upstream
    # serves, but for one call whose message the history lost (the parent's call after a
    # subtask, answered empty and retried; the retry's message replaced it): no model named. The
    # Claude calls' writes (folded into tokensIn, cacheWrites 0) are what each call's cost bills at
    # the write rate, to the token, 0 to 10 tokens of each left uncached.
    rows = {}
    for row in result.rows:
        rows.setdefault(row.file, []).append(row)
    written = 0
    unnamed = []
    for ui, cs in calls.items():
        mine = sorted(rows.get(ui, []), key=lambda r: r.index)
        assert len(mine) == len(cs)
        for call, row in zip(cs, mine):
            if row.model == "unknown":
                unnamed.append((Path(ui).parent.name, row.index, call["inferenceProvider"], call["cost"]))
                continue
            assert UPSTREAMS[call["inferenceProvider"]] in row.model, (ui, row.index, row.model)
            if "claude" in row.model:
                input_rate, read_rate, write_rate, output_rate = SONNET_4_5
                past = call["tokensIn"] - call["cacheReads"]
                spent = (Decimal(repr(call["cost"])) * 1_000_000 - call["cacheReads"] * read_rate
                         - call["tokensOut"] * output_rate - past * input_rate)
                tokens = spent / (write_rate - input_rate)
                assert tokens == tokens.to_integral_value() and 0 <= past - int(tokens) <= 10
                assert row.reported_cache_write == int(tokens)
                written += int(tokens)
    assert t.cache_write == written == 805_741
    assert [u[:3] for u in unnamed] == [("c4f37332-855b-4fe8-934c-9fa5e309547b", 13, "Google AI Studio")]

    by = {p: [r for r in result.rows if r.provider == p] for p in {r.provider for r in result.rows}}
    assert {p: (len(rs), sum(r.read_within for r in rs)) for p, rs in by.items()} == {
        # main: anthropic (106, 28) and bedrock (5, 3), the writes read as uncached input;
        # unknown (452, 140) for Gemini: the model unread, Google's upstreams named by no provider.
        # gemini 153 before a Gemini call after 10 idle minutes read nothing and a 3 Pro read moved up,
        # 157 before Google AI Studio's calls read on 8,000-token checkpoints from 16,000 (315 before
        # a read moved up whole steps from the checkpoint the lane read).
        # xai 58 before a grok read went on into the previous reply the prompt holds (7 gained, 2
        # lost: a reply sent back without its reasoning, a call routed to an older call's server).
        # anthropic 94 and gemini 351 before each upstream's cache was its own (a call Anthropic served
        # after two Amazon Bedrock served, a Gemini call to Vertex after AI Studio's and one the other
        # way round: each read 0, the chain predicted the other upstream's prefix).
        # anthropic 95 before a call that starts a user turn (text after tool results: a user's
        # message, an Orchestrator subtask's result with environment details) read only as far as
        # the previous turn's first call that thought: Anthropic drops earlier turns' thinking on
        # claude-sonnet-4.5 then (9 of its calls, 4 of them after a subtask).
        # gemini 353 before Vertex AI's calls read to the token, trailing the previous prompt by 1,000
        # (360 with a lag of 1,250, the even half's tie broken toward the middle with the held-out
        # half's help; 1,000 is the smallest tied lag, a tie-break fixed in advance).
        # gemini 356 before 3 Flash's idle rule waited 20 minutes, not 10 (an AI Studio call after
        # 15.1 idle minutes read 0, now predicted to read 24,344 as its lane's checkpoints go).
        "anthropic": (111, 104), "gemini": (451, 355), "xai": (120, 63), "unknown": (1, 1),
    }
    # By upstream: Google AI Studio 313 of 335 (119 on the model's 3,924 steps; 314 before 3 Flash's
    # idle rule waited 20 minutes), Vertex AI 42 of 116 (39 on the model's 3,924 steps; 313 and 38
    # before each upstream's cache was its own).
    gemini = [(r, c) for ui, cs in calls.items() for r, c in zip(sorted(rows.get(ui, []), key=lambda r: r.index), cs)
              if r.provider == "gemini"]
    assert {up: (sum(c["inferenceProvider"] == up for _, c in gemini), sum(r.read_within for r, c in gemini if c["inferenceProvider"] == up))
            for up in ("Google AI Studio", "Google")} == {"Google AI Studio": (335, 313), "Google": (116, 42)}
    # Each Gemini call's cost is the log's own to the token: tokensIn the whole prompt, the reads
    # inside (gemini-3-flash-preview: $0.50 input, $0.05 read, $3 output per 1M).
    assert all(abs((c["tokensIn"] - c["cacheReads"]) * 0.5e-6 + c["cacheReads"] * 0.05e-6 + c["tokensOut"] * 3e-6 - c["cost"]) < 1e-9
               for _, c in gemini)
    assert sum(r.predicted_cache_read == r.reported_cache_read for r in by["anthropic"]) == 94  # 93 before
    # Priced at the listed prices, the Claude and Gemini calls cost what the log's own cost fields
    # sum to (Kilo's gateway passing OpenRouter's bill on); grok-code-fast-1 was free on Kilo then.
    logged = {"gemini": -unnamed[0][3]}  # the unnamed call is unpriced
    for call in every:
        family = UPSTREAMS[call["inferenceProvider"]]
        logged[family] = logged.get(family, 0) + call["cost"]
    for provider, family in (("anthropic", "claude"), ("gemini", "gemini")):
        assert abs(float(sum(r.cost_usd for r in by[provider])) - logged[family]) < 0.005, provider
    assert logged["grok"] == 0
