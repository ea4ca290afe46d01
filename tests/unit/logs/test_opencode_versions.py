"""OpenCode's stored step tokens read by the convention of the version that wrote them.

The sessions here are written by hand from what OpenCode's ``Session.getUsage`` stored in each
version (anomalyco/opencode, packages/opencode/src/session/index.ts):

* before anomalyco/opencode#4256 (merged 2025-11-12, released in 1.0.62): ``input`` is the AI SDK's
  ``inputTokens`` as given, so through OpenAI, OpenRouter, Google and other OpenAI-style
  providers it includes the cache read; through the Anthropic and Bedrock SDKs it does not;
* 1.3.4 (AI SDK v6, commit c33d9996f, #18433) until #19758: through the Anthropic SDK ``input``
  includes the read and the write (v6 counts them in, OpenCode still took the count as given);
* before #21047 an OpenAI-SDK step (and from 1.3.4 any step) stored the SDK's ``outputTokens``
  (reasoning inside) beside the reasoning; the step's ``total`` (the SDK's, input + output) shows
  it where there is one.
"""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.workloads.logs.formats import FORMATS, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from tests.unit.logs.test_opencode_db import write_db

FORMAT = FORMATS["opencode"]


def _session(version: str | None, provider: str, model: str, steps: list[dict]) -> dict:
    """An ``opencode export`` of one user turn and one assistant message per step."""
    info = {"id": "ses_versions01", "projectID": "prj_01", "directory": "/w", "title": "t", "time": {"created": 1, "updated": 2}}
    if version is not None:
        info["version"] = version
    messages = []
    for n, tokens in enumerate(steps):
        messages.append({"info": {"id": f"msg_{2 * n:03}u", "sessionID": info["id"], "role": "user", "time": {"created": 10 * n}},
                         "parts": [{"id": f"prt_{n}t", "messageID": f"msg_{2 * n:03}u", "sessionID": info["id"], "type": "text", "text": "go"}]})
        mid = f"msg_{2 * n + 1:03}a"
        messages.append({
            "info": {"id": mid, "sessionID": info["id"], "role": "assistant", "time": {"created": 10 * n + 1},
                     "providerID": provider, "modelID": model, "mode": "build"},
            "parts": [{"id": f"prt_{n}s", "messageID": mid, "sessionID": info["id"], "type": "step-start"},
                      {"id": f"prt_{n}f", "messageID": mid, "sessionID": info["id"], "type": "step-finish",
                       "tokens": tokens, "cost": 0}],
        })
    return {"info": info, "messages": messages}


def _tokens(input: int, read: int, write: int = 0, output: int = 50, reasoning: int = 0, total: int | None = None) -> dict:
    tokens = {"input": input, "output": output, "reasoning": reasoning, "cache": {"read": read, "write": write}}
    if total is not None:
        tokens["total"] = total
    return tokens


def _read(tmp_path: Path, export: dict):
    path = tmp_path / "session.json"
    path.write_text(json.dumps(export))
    requests, summary = import_file(path, FORMAT, ImportContext())
    return [r.usage for r in requests], " | ".join(summary.notes)


#: An OpenAI session's calls as the SDK counted them: prompt 12,000 then 12,900 and 13,400 of
#: which 11,776 and 12,800 were read.
OPENAI_INCLUSIVE = [_tokens(12_000, 0), _tokens(12_900, 11_776), _tokens(13_400, 12_800)]


def test_a_0x_openai_session_stored_the_read_inside_input(tmp_path: Path) -> None:
    usages, notes = _read(tmp_path, _session("0.15.8", "openai", "gpt-4.1", OPENAI_INCLUSIVE))
    assert [u.uncached for u in usages] == [12_000, 1_124, 600]  # main: 12,000 / 12,900 / 13,400
    assert [u.cache_read for u in usages] == [0, 11_776, 12_800]
    assert "OpenCode 0.15.8 (before 1.0.62, anomalyco/opencode#4256)" in notes and "read as input - cache read" in notes


def test_a_0x_anthropic_session_was_already_additive(tmp_path: Path) -> None:
    steps = [_tokens(3, 0, 9_000), _tokens(7, 9_000, 400)]
    usages, notes = _read(tmp_path, _session("0.15.8", "anthropic", "claude-sonnet-4-5", steps))
    assert [(u.uncached, u.cache_read, u.cache_write_5m) for u in usages] == [(3, 0, 9_000), (7, 9_000, 400)]
    assert "before anomalyco/opencode#4256" not in notes


def test_a_0x_session_whose_input_is_below_its_read_is_read_as_additive(tmp_path: Path) -> None:
    steps = [_tokens(12_000, 0), _tokens(124, 11_776)]  # 124 < 11,776: no inclusive count
    usages, notes = _read(tmp_path, _session("0.15.8", "openrouter", "z-ai/glm-4.6", steps))
    assert [u.uncached for u in usages] == [12_000, 124]
    assert "1 of 1 cached steps' input is below their read: read as additive" in notes


def test_1_0_62_is_where_the_read_left_input(tmp_path: Path) -> None:
    usages, notes = _read(tmp_path, _session("1.0.61", "openai", "gpt-5", OPENAI_INCLUSIVE))
    assert [u.uncached for u in usages] == [12_000, 1_124, 600]
    assert "OpenCode 1.0.61 (before 1.0.62" in notes
    additive = [_tokens(12_000, 0), _tokens(1_124, 11_776), _tokens(600, 12_800)]
    usages, notes = _read(tmp_path, _session("1.0.62", "openai", "gpt-5", additive))
    assert [u.uncached for u in usages] == [12_000, 1_124, 600]
    assert "before 1.0.62" not in notes


def test_a_1_3_5_anthropic_session_stored_its_cache_inside_input(tmp_path: Path) -> None:
    # anomalyco/opencode#19757's own step: input 139,499 = 139,417 read + 81 written + 1.
    steps = [_tokens(9_004, 0, 9_000), _tokens(139_499, 139_417, 81)]
    usages, notes = _read(tmp_path, _session("1.3.5", "anthropic", "claude-opus-4-6", steps))
    assert [(u.uncached, u.cache_read, u.cache_write_5m) for u in usages] == [(4, 0, 9_000), (1, 139_417, 81)]
    assert "OpenCode 1.3.5 (1.3.4 on, before anomalyco/opencode#19758)" in notes and "input - read - write" in notes
    # Its OpenAI calls were already additive then.
    usages, _ = _read(tmp_path, _session("1.3.5", "openai", "gpt-5", [_tokens(12_000, 0), _tokens(1_124, 11_776)]))
    assert [u.uncached for u in usages] == [12_000, 1_124]


def test_later_versions_and_a_1_3_anthropic_session_below_its_cache_are_additive(tmp_path: Path) -> None:
    for version in ("1.3.3", "1.17.18", "2.0.3"):
        usages, notes = _read(tmp_path, _session(version, "anthropic", "claude-sonnet-5", [_tokens(9_004, 0, 9_000), _tokens(20, 9_000, 5)]))
        assert [u.uncached for u in usages] == [9_004, 20], version
    usages, notes = _read(tmp_path, _session("1.3.6", "anthropic", "claude-sonnet-5", [_tokens(9_004, 0, 9_000), _tokens(20, 9_000, 5)]))
    assert [u.uncached for u in usages] == [9_004, 20]
    assert "below its cache on 1 of 2 cached steps: read as additive" in notes


def test_a_session_naming_no_version_is_read_as_additive_and_said_so(tmp_path: Path) -> None:
    usages, notes = _read(tmp_path, _session(None, "openai", "gpt-5", OPENAI_INCLUSIVE))
    assert [u.uncached for u in usages] == [12_000, 12_900, 13_400]
    assert "names no OpenCode version: other providers' input read as additive" in notes


def test_a_version_of_thousands_of_digits_is_no_release(tmp_path: Path) -> None:
    # int() of it raised past Python's 4,300-digit limit: a traceback, not the audit.
    usages, notes = _read(tmp_path, _session("1" * 5000 + ".0.0", "openai", "gpt-5", OPENAI_INCLUSIVE))
    assert [u.uncached for u in usages] == [12_000, 12_900, 13_400]
    assert "names no OpenCode version" in notes


def test_reasoning_inside_output_is_billed_once_by_the_steps_total(tmp_path: Path) -> None:
    # An OpenAI step before #21047: output 500 holds reasoning 300; total = 100 + 1,000 + 500.
    inside = _tokens(100, 1_000, output=500, reasoning=300, total=1_600)
    # After: output 200 beside reasoning 300; total = 100 + 1,000 + 200 + 300.
    beside = _tokens(100, 1_000, output=200, reasoning=300, total=1_600)
    usages, notes = _read(tmp_path, _session("1.3.3", "openai", "gpt-5", [_tokens(1_000, 0), inside, beside]))
    assert [u.output for u in usages] == [50, 500, 500]  # main: 50, 800, 500
    assert "1 step(s) stored their reasoning inside output too" in notes


def test_the_database_reads_each_session_by_its_version_column(tmp_path: Path) -> None:
    export = _session("0.15.8", "openai", "gpt-4.1", OPENAI_INCLUSIVE)
    path = write_db(tmp_path / "opencode.db", [export])
    requests, summary = import_file(path, FORMAT, ImportContext())
    assert [r.usage.uncached for r in requests if r.usage] == [12_000, 1_124, 600]


def test_reasoning_with_no_total_is_read_by_version_and_sdk(tmp_path: Path) -> None:
    steps = [_tokens(1_000, 0, output=500, reasoning=300), _tokens(100, 1_000, output=400, reasoning=100)]
    usages, notes = _read(tmp_path, _session("0.15.8", "openai", "gpt-5", steps))
    assert [u.output for u in usages] == [500, 400]  # main: 800, 500
    assert "2 step(s) stored their reasoning inside output too" in notes
    # Google's SDK counted thoughts apart before AI SDK v6; so do current versions.
    for version, provider in (("0.15.8", "google"), ("1.17.18", "openai"), (None, "openai")):
        usages, _ = _read(tmp_path, _session(version, provider, "gpt-5", steps))
        assert [u.output for u in usages] == [800, 500], (version, provider)
    # A reasoning above its output cannot be inside it.
    steps.append(_tokens(100, 1_000, output=40, reasoning=100))
    usages, notes = _read(tmp_path, _session("0.15.8", "openai", "gpt-5", steps))
    assert [u.output for u in usages] == [800, 500, 140]
    assert "1 of 3 steps' reasoning exceeds their output: reasoning read as beside output" in notes


#: The Kilo CLI, a fork of OpenCode, writes its own release into ``version`` (Kilo-Org/kilo,
#: packages/opencode/src/installation/index.ts: ``VERSION = KILO_VERSION``): 1.0.x from late
#: January 2026 (built on OpenCode 1.1.42 to 1.1.65, whose getUsage already subtracts the cache
#: from input), then 7.x. 2026-02-10 and 2025-11-05, in epoch ms.
KILO_1_0_TIME, OPENCODE_1_0_TIME = 1_770_681_600_000, 1_762_300_800_000
#: An OpenAI-SDK session stored additively whose every input is at least its read (large tool
#: outputs after a small cached head): read as input - read, it would lose those tokens.
ADDITIVE_BIG_TAILS = [_tokens(5_000, 0), _tokens(6_000, 4_864), _tokens(12_000, 10_880)]


def _dated(export: dict, created_ms: int) -> dict:
    export["info"]["time"] = {"created": created_ms, "updated": created_ms + 1}
    return export


def test_a_kilo_cli_1_0_session_is_not_read_as_opencode_1_0(tmp_path: Path) -> None:
    export = _dated(_session("1.0.20", "openai", "gpt-5", ADDITIVE_BIG_TAILS), KILO_1_0_TIME)
    usages, notes = _read(tmp_path, export)
    assert [u.uncached for u in usages] == [5_000, 6_000, 12_000]  # main: 5,000 / 1,136 / 1,120 (read as OpenCode 1.0.20)
    assert [u.cache_read for u in usages] == [0, 4_864, 10_880]
    assert "Kilo CLI 1.0.20 (built on OpenCode 1.1" in notes and "before 1.0.62" not in notes
    # Kilo's database (~/.local/share/kilo/kilo.db, OpenCode's tables) says the same by its rows.
    requests, _ = import_file(write_db(tmp_path / "kilo.db", [export]), FORMAT, ImportContext())
    assert [r.usage.uncached for r in requests if r.usage] == [5_000, 6_000, 12_000]
    # The same version on a session of OpenCode's own 1.0.x time is OpenCode 1.0.20's.
    usages, notes = _read(tmp_path, _dated(_session("1.0.20", "openai", "gpt-5", OPENAI_INCLUSIVE), OPENCODE_1_0_TIME))
    assert [u.uncached for u in usages] == [12_000, 1_124, 600]
    assert "OpenCode 1.0.20 (before 1.0.62" in notes


def test_an_opencode_1_0_past_kilos_last_1_0_stays_opencode_after_kilos_release(tmp_path: Path) -> None:
    # Kilo's 1.0.x ended at 1.0.25: a 1.0.40 session, even created after Kilo's first release (an
    # OpenCode pinned to an old release), is OpenCode 1.0.40's (int38b read it as Kilo, additive).
    usages, notes = _read(tmp_path, _dated(_session("1.0.40", "openai", "gpt-5", OPENAI_INCLUSIVE), KILO_1_0_TIME))
    assert [u.uncached for u in usages] == [12_000, 1_124, 600]
    assert "OpenCode 1.0.40 (before 1.0.62" in notes and "Kilo" not in notes


def test_a_kilo_cli_7_anthropic_session_is_decided_by_its_steps(tmp_path: Path) -> None:
    # AI SDK v6 without #19758: input = uncached + read + write, on every cached step.
    steps = [_tokens(9_004, 0, 9_000), _tokens(139_499, 139_417, 81)]
    usages, notes = _read(tmp_path, _dated(_session("7.1.4", "anthropic", "claude-opus-4-6", steps), KILO_1_0_TIME))
    assert [(u.uncached, u.cache_read, u.cache_write_5m) for u in usages] == [(4, 0, 9_000), (1, 139_417, 81)]  # main: 9,004 / 139,499
    assert "Kilo CLI 7.1.4" in notes and "the steps decide" in notes and "input - read - write" in notes
    # An additive one (input the tail after the cache) stays additive.
    steps = [_tokens(4, 0, 9_000), _tokens(1, 139_417, 81)]
    usages, notes = _read(tmp_path, _dated(_session("7.5.11", "anthropic", "claude-opus-4-6", steps), KILO_1_0_TIME))
    assert [u.uncached for u in usages] == [4, 1]
    assert "below its cache on 2 of 2 cached steps: read as additive" in notes
