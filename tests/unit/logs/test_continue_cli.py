"""Continue sessions (workloads/logs/formats/continue_cli.py): fixtures built here from the session
shape Continue writes (core/index.d.ts ``Session``, ``ChatHistoryItem``; the cn CLI's
``extensions/cli`` puts the API's usage on each assistant message, Continue's OpenAI adapters'
``chunk.usage`` with the model and cost_cents beside it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import PROMPT_EXCLUSIVE, Usage
from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.logs.formats import FORMATS, detect_format, resolve
from prefixbench.workloads.logs.formats.continue_cli import IDE_SESSION, PYTHON_SERVER_SESSION
from prefixbench.workloads.logs.sources import find_log_files
from tests.unit.audit.fixtures import cli_in_process as _cli

SID = "3f2a9c1e-5b7d-4e8f-9a01-23456789abcd"
SONNET = "claude-sonnet-4-5-20250929"


def _anthropic(prompt: int, out: int, write: int, read: int, model: str = SONNET) -> dict:
    """The Anthropic adapter's usage (openai-adapters ``Anthropic.ts``): prompt_tokens is
    ``input_tokens``, the reads and writes beside it."""
    return {"completion_tokens": out, "prompt_tokens": prompt, "total_tokens": prompt + out,
            "prompt_tokens_details": {"cache_write_tokens": write, "cache_read_tokens": read, "cached_tokens": read},
            "model": model, "cost_cents": 1}


def _openai(prompt: int, out: int, cached: int | None, model: str = "gpt-5") -> dict:
    """OpenAI's chat usage as the API sent it (cached_tokens inside prompt_tokens)."""
    usage: dict = {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out, "model": model, "cost_cents": 1}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
    return usage


def _item(role: str, content: str = "x", usage: dict | None = None, **extra: object) -> dict:
    message: dict = {"role": role, "content": content}
    if usage is not None:
        message["usage"] = usage
    for key in ("toolCalls", "toolCallId"):
        if key in extra:
            message[key] = extra.pop(key)
    return {"message": message, "contextItems": [], **extra}


def _session(path: Path, history: list[dict], **extra: object) -> Path:
    doc = {"sessionId": SID, "title": "t", "workspaceDirectory": "file:///home/u/p", "history": history, **extra}
    path.write_text(json.dumps(doc, indent=2))
    return path


def _read_call() -> list[dict]:
    return [{"id": "toolu_1", "type": "function", "function": {"name": "Read", "arguments": "{\"filepath\": \"a.py\"}"}}]


def test_cn_session_one_request_per_assistant_usage_with_totals_field_by_field(tmp_path: Path) -> None:
    history = [
        _item("system", "You are an agent in the Continue CLI."),
        _item("user", "rename the helper"),
        _item("assistant", "reading", _anthropic(3, 40, 9000, 0), toolCalls=_read_call()),
        _item("tool", "def helper(): pass", toolCallId="toolu_1"),
        _item("assistant", "done", _anthropic(5, 12, 120, 9000)),
        _item("user", "now with gpt"),
        _item("assistant", "ok", _openai(9500, 7, 8960)),
        _item("assistant", "cancelled"),  # no usage: skipped, listed
        _item("user", "again"),
        _item("assistant", "ok", _openai(9600, 3, None)),  # no cached_tokens: cache use not reported
    ]
    path = _session(tmp_path / "any-name.json", history,
                    usage={"promptTokens": 19108, "completionTokens": 62, "promptTokensDetails": {"cachedTokens": 9000}, "totalCost": 0.1})
    assert detect_format(path) is FORMATS["continue-cli"]
    requests, summaries = load_trace([path])
    assert [r.path for r in requests] == ["history[2]", "history[4]", "history[6]", "history[9]"]
    assert [r.request_id for r in requests] == [f"{SID}#2", f"{SID}#4", f"{SID}#6", f"{SID}#9"]
    assert [r.provider for r in requests] == ["anthropic", "anthropic", "openai", "openai"]
    assert [(r.sent_ms, r.done_ms) for r in requests] == [(None, None)] * 4  # Continue stamps no item
    # Field by field: additive where the Anthropic adapter's keys are there, subset otherwise.
    assert requests[0].usage == Usage(cache_write_5m=9000, uncached=3, output=40)
    assert requests[1].usage == Usage(cache_read=9000, cache_write_5m=120, uncached=5, output=12)
    assert requests[2].usage == Usage(cache_read=8960, uncached=540, output=7)
    assert requests[3].usage == Usage(uncached=9600, output=3, cache_reported=False)
    assert sum(r.usage.prompt for r in requests) == 9003 + 9125 + 9500 + 9600
    assert sum(r.usage.output for r in requests) == 40 + 12 + 7 + 3
    # One chain: system and user first, then the reply and the tool result, ...
    assert [r.prefix.new_blocks for r in requests] == [2, 2, 2, 3]
    assert [r.prefix.parent for r in requests][1:] == [r.prefix.node for r in requests][:-1]
    assert requests[2].events == (("user_turn", ""), ("model_change", f"{SONNET} -> gpt-5"))
    assert any("file-read" in m.marks for m in requests[1].messages)
    summary = summaries[0]
    assert summary.format == "continue-cli" and summary.requests == 4
    assert [why for _, why in summary.skipped] == ["history[7]: assistant message with no usage"]
    notes = " | ".join(summary.notes)
    assert "2 call(s) with cache_read_tokens read as additive" in notes
    assert "2 call(s) read as subset" in notes
    assert "the session's own totals (usage): prompt 19108, completion 62, cached 9000, written None" in notes


def test_a_compaction_summary_is_an_event_of_the_next_call(tmp_path: Path) -> None:
    # What cn's compaction leaves: the system message, then the summary (an assistant message of no usage).
    history = [
        _item("system", "sys"),
        {"message": {"role": "assistant", "content": "summary"}, "contextItems": [], "conversationSummary": "summary"},
        _item("user", "go on"),
        _item("assistant", "ok", _anthropic(4, 9, 300, 5000)),
    ]
    requests, summaries = load_trace([_session(tmp_path / "s.json", history)])
    assert len(requests) == 1 and requests[0].events == (("compaction", ""), ("user_turn", ""))
    assert requests[0].prefix.new_blocks == 3
    assert summaries[0].skipped == ()


def test_the_aliases_name_the_format() -> None:
    assert resolve("continue") is FORMATS["continue-cli"] and resolve("cn") is FORMATS["continue-cli"]


def _refused_in_one_line(path: Path, detected: str, said: str) -> None:
    """Detection refuses ``path`` (``detected``: a pattern), and audit, auto or ``--input cn``,
    says ``said`` of its first line in one line, exit 2, nothing on stdout."""
    with pytest.raises(UserError, match=detected):
        detect_format(path)
    for argv in (("audit", str(path)), ("audit", "--input", "cn", str(path))):
        status, out, err = _cli(*argv)
        assert status == 2 and out == ""
        assert err.strip() == f"prefixbench: error: {path}:1: {said}"


def test_an_extension_session_of_no_usage_is_refused_in_one_line(tmp_path: Path) -> None:
    path = _session(tmp_path / "ide.json", [_item("user", "hi"), _item("assistant", "hello")])
    _refused_in_one_line(path, "^.*ide.json:1: a Continue session with no call's usage", IDE_SESSION)
    # A folder walk skips it with that note and audits the cn session beside it.
    _session(tmp_path / "cn.json", [_item("user", "hi"), _item("assistant", "ok", _anthropic(1, 2, 3, 0))])
    marked = dict(find_log_files([tmp_path]))
    assert marked[tmp_path / "cn.json"] is None
    assert marked[path] is not None and IDE_SESSION in marked[path]


def test_a_session_of_the_2023_python_server_is_refused_in_one_line(tmp_path: Path) -> None:
    # Continue's first design (a Python server behind the VS Code extension, 2023) kept the same
    # file name with another shape: a step timeline and its session_info, no token count.
    step = {"step": {"name": "UserInputStep", "description": "fix it", "class_name": "UserInputStep",
                     "chat_context": [], "manage_own_chat_context": False},
            "observation": None, "depth": 0, "deleted": False, "active": False, "logs": [], "context_used": []}
    doc = {"history": {"timeline": [step], "current_index": 0}, "active": False, "user_input_queue": [],
           "session_info": {"session_id": SID, "title": "t", "date_created": "1697641295.7378268",
                            "workspace_directory": "c:\\Users\\u\\p"}, "config": {}}
    path = tmp_path / f"{SID}.json"
    path.write_text(json.dumps(doc, indent=2))
    _refused_in_one_line(path, "a Continue session of its 2023 Python server", PYTHON_SERVER_SESSION)
    # A folder walk says the same of it (before: the extensions' no-usage session's note, which
    # names another shape and other agents), and audits the cn session beside it.
    _session(tmp_path / "cn.json", [_item("user", "hi"), _item("assistant", "ok", _anthropic(1, 2, 3, 0))])
    marked = dict(find_log_files([tmp_path]))
    assert marked[tmp_path / "cn.json"] is None
    assert marked[path] is not None and PYTHON_SERVER_SESSION in marked[path] and IDE_SESSION not in marked[path]


@pytest.mark.parametrize(
    ("item", "says"),
    [
        (_item("assistant", "x", {"prompt_tokens": -1, "completion_tokens": 2, "model": SONNET}), "history[0].message.usage: prompt_tokens is not a non-negative integer"),
        (_item("assistant", "x", {"prompt_tokens": "9", "completion_tokens": 2}), "prompt_tokens is not a non-negative integer"),
        ({"message": "hi"}, "history[0] is not a {message, ...} object"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, item: dict, says: str) -> None:
    # A good call after the bad item keeps the file detected as a cn session.
    path = _session(tmp_path / "s.json", [item, _item("assistant", "ok", _anthropic(1, 2, 3, 0))])
    status, out, err = _cli("audit", str(path))
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and says in err and "Traceback" not in err


def test_cached_tokens_above_the_prompt_count_read_as_a_count_without_them(tmp_path: Path) -> None:
    """As every OpenAI-shaped usage is read (simulator/providers/base.py ``subset_usage``): a
    gateway's prompt count that leaves the cached part out, marked so."""
    requests, _ = load_trace([_session(tmp_path / "s.json", [_item("assistant", "x", _openai(10, 1, 50))])])
    assert requests[0].usage == Usage(cache_read=50, uncached=10, output=1, prompt_count=PROMPT_EXCLUSIVE)


def test_a_usage_that_is_no_object_is_one_line_exit_2(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.json", [_item("assistant", "ok", _anthropic(1, 2, 3, 0)), {"message": {"role": "assistant", "usage": 5}}])
    status, _, err = _cli("audit", str(path))
    assert status == 2 and "history[1].message.usage is not an object" in err and len(err.strip().splitlines()) == 1


def test_a_kiro_ide_session_of_the_same_shape_is_refused_so_too(tmp_path: Path) -> None:
    """Kiro's IDE keeps ``workspace-sessions/<workspace>/<id>.json`` in Continue's shape (a public
    reader's fixture of it: no contextItems, an ``id`` per message); before, an unknown log format."""
    path = tmp_path / "new-session.json"
    path.write_text(json.dumps({"sessionId": "new-session", "title": "New title", "workspaceDirectory": "/home/user/dev/app",
                                "history": [{"message": {"role": "user", "content": "q", "id": "m1"}},
                                            {"message": {"role": "assistant", "content": "a", "id": "m2"}}]}) + "\n")
    status, out, err = _cli("audit", str(path))
    assert status == 2 and out == "" and err.strip() == f"prefixbench: error: {path}:1: {IDE_SESSION}"
    assert "Kiro IDE" in IDE_SESSION


def test_openai_and_deepseek_usages_are_read_as_subset_with_their_own_cache_keys(tmp_path: Path) -> None:
    """Only the Anthropic adapter names ``cache_read_tokens`` (always, beside its write): a usage
    with ``cache_write_tokens`` alone is OpenAI's as the API sent it (GPT-5.6's writes, inside
    ``prompt_tokens``), and DeepSeek's (Continue's DeepSeek adapter is its OpenAI one) names its
    hit ``prompt_cache_hit_tokens``. Before: the first read as additive (its 10,000-token prompt as
    11,000, none of it read from the cache), the second as reporting no cache use."""
    gpt56 = {"prompt_tokens": 10000, "completion_tokens": 5, "model": "gpt-5.6-sol",
             "prompt_tokens_details": {"cached_tokens": 8000, "cache_write_tokens": 1000}}
    deepseek = {"prompt_tokens": 5000, "completion_tokens": 6, "model": "deepseek-chat",
                "prompt_cache_hit_tokens": 4000, "prompt_cache_miss_tokens": 1000}
    path = _session(tmp_path / "s.json", [_item("user", "hi"), _item("assistant", "a", gpt56),
                                          _item("user", "more"), _item("assistant", "b", deepseek)])
    requests, _ = load_trace([path])
    assert requests[0].usage == Usage(cache_read=8000, cache_write_5m=1000, uncached=1000, output=5)
    assert requests[1].usage == Usage(cache_read=4000, uncached=1000, output=6)


def test_gemini_thoughts_left_out_of_completion_tokens_count_as_output(tmp_path: Path) -> None:
    # Continue's Gemini adapter (openai-adapters Gemini.ts) passes candidatesTokenCount as
    # completion_tokens and totalTokenCount as total_tokens, no cached count: the difference is
    # the thoughts, which Google bills as output. OpenAI's total is prompt + completion.
    def gemini(prompt: int, out: int, thoughts: int) -> dict:
        return {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out + thoughts,
                "model": "gemini-2.5-pro", "cost_cents": 1}

    path = _session(tmp_path / "s.json", [
        _item("user"), _item("assistant", usage=gemini(12000, 300, 700)),
        _item("user"), _item("assistant", usage=gemini(12500, 80, 0)),
        _item("user"), _item("assistant", usage=_openai(9000, 50, 0)),
    ])
    requests, summaries = load_trace([path])
    assert [r.usage.output for r in requests] == [1000, 80, 50]
    assert [r.usage.uncached for r in requests] == [12000, 12500, 9000]
    assert not requests[0].usage.cache_reported
    assert any(n.startswith("1 Gemini call(s) whose total_tokens exceeds prompt_tokens + completion_tokens: the 700 tokens over") for n in summaries[0].notes)


def test_a_gemini_call_missing_a_count_has_no_thoughts_made_of_it(tmp_path: Path) -> None:
    # Without completion_tokens, total_tokens less prompt_tokens is not the thoughts: the whole
    # answer would be counted twice. The difference is taken only where all three are logged.
    path = _session(tmp_path / "s.json", [
        _item("user"), _item("assistant", usage={"prompt_tokens": 12000, "total_tokens": 12700, "model": "gemini-2.5-pro"}),
    ])
    requests, summaries = load_trace([path])
    assert requests[0].usage.output == 0
    assert not any("exceeds prompt_tokens + completion_tokens" in n for n in summaries[0].notes)


def test_the_ai_sdk_path_is_told_by_its_arithmetic_whatever_the_model(tmp_path: Path) -> None:
    """With ``CONTINUE_USE_AI_SDK`` set (cn 1.5.47: providers ``openai`` and ``anthropic``) the
    usage is the AI SDK's: ``cache_read_tokens`` (and ``cached_tokens``) beside a
    ``prompt_tokens`` that is the whole input, reads and writes inside (vercel/ai
    ``convert-anthropic-messages-usage.ts``: total = input + writes + reads). So a session no call
    of which has ``prompt_tokens`` below its reads + writes is read as subset, whatever its model
    is named. Before: by the model's name, a ``deepseek-chat`` call through the ``openai``
    provider read as additive (its 20,000-token prompt counted as 36,000), and a Claude call
    (9,103 tokens) as 18,203."""
    deepseek = {"prompt_tokens": 20000, "completion_tokens": 40, "total_tokens": 20040, "model": "deepseek-chat",
                "prompt_tokens_details": {"cached_tokens": 16000, "cache_read_tokens": 16000, "cache_write_tokens": 0}}
    claude = {"prompt_tokens": 9103, "completion_tokens": 20, "total_tokens": 9123, "model": SONNET,
              "prompt_tokens_details": {"cached_tokens": 9000, "cache_read_tokens": 9000, "cache_write_tokens": 100}}
    path = _session(tmp_path / "s.json", [
        _item("user", "hi"), _item("assistant", "a", deepseek), _item("user", "more"), _item("assistant", "b", claude),
    ])
    requests, summaries = load_trace([path])
    assert requests[0].usage == Usage(cache_read=16000, uncached=4000, output=40)
    assert requests[1].usage == Usage(cache_read=9000, cache_write_5m=100, uncached=3, output=20)
    assert [r.usage.prompt for r in requests] == [20000, 9103]
    assert any(n.startswith("2 call(s) with cache_read_tokens read as subset (Continue's AI SDK path") for n in summaries[0].notes)
    assert not any("read as additive" in n for n in summaries[0].notes)


@pytest.mark.parametrize("written", [100, 0])
def test_the_anthropic_adapter_is_told_by_its_arithmetic_whatever_the_model(tmp_path: Path, written: int) -> None:
    """An OpenAI-named model through the ``anthropic`` provider pointed at a Messages-API gateway:
    the Anthropic adapter's usage, ``prompt_tokens`` (3) below its reads + writes, which the AI
    SDK's never is: the whole session is read as additive, and the note says which call decided
    it. Before: read as subset by the model's name, refused (``cached (9000) and written (100)
    tokens exceed prompt_tokens (3)``), a file the release before read."""
    path = _session(tmp_path / "s.json", [
        _item("user", "hi"), _item("assistant", "a", _anthropic(3, 20, written, 9000, model="gpt-5")),
        # the same session's call that alone could be either (prompt_tokens above reads + writes)
        _item("user", "paste"), _item("assistant", "b", _anthropic(12000, 5, 0, 9000, model="gpt-5")),
    ])
    requests, summaries = load_trace([path])
    assert requests[0].usage == Usage(cache_read=9000, cache_write_5m=written, uncached=3, output=20)
    assert requests[1].usage == Usage(cache_read=9000, uncached=12000, output=5)
    notes = " | ".join(summaries[0].notes)
    assert (f"2 call(s) with cache_read_tokens read as additive (Continue's Anthropic adapter: prompt_tokens excludes its reads and "
            f"writes), decided by the arithmetic, whatever the model: history[1]'s prompt_tokens (3) is below its "
            f"cache_read_tokens + cache_write_tokens (9000 + {written})") in notes
    assert "read as subset" not in notes
