"""Aider's chat history: detection by content, totals field by field, the reading stated, bad
input in one line, and aider's other logs refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.formats.aider import ANALYTICS, LLM_HISTORY
from prefixbench.workloads.logs.sources import find_log_files
from prefixbench.simulator.providers import rules_for
from prefixbench.simulator.usage import Usage

FIXTURE = Path(__file__).parent / "fixtures" / "aider.md"
AIDER = FORMATS["aider"]


def read(path: Path):
    return import_file(path, detect_format(path), ImportContext())


@pytest.mark.parametrize("name", ["notes.md", "history.txt", "chat"])
def test_a_chat_history_is_told_by_its_content_under_any_name(tmp_path: Path, name: str) -> None:
    log = tmp_path / name
    shutil.copy(FIXTURE, log)
    assert detect_format(log) is AIDER


def test_a_folder_walk_picks_the_hidden_chat_history_up_and_no_other_markdown(tmp_path: Path) -> None:
    shutil.copy(FIXTURE, tmp_path / ".aider.chat.history.md")
    (tmp_path / "README.md").write_text("# a project\n\nnot a log\n")
    (tmp_path / ".notes.md").write_text("hidden, not aider's\n")
    found = [(p.name, why) for p, why in find_log_files([tmp_path])]
    assert (".aider.chat.history.md", None) in found
    assert all(name != ".notes.md" for name, _ in found)
    assert ("README.md", None) not in found


def test_the_totals_are_the_tokens_lines_sums_field_by_field() -> None:
    requests, summary = read(FIXTURE)
    assert summary.requests == len(requests) == 6  # one per Tokens line
    total = lambda field: sum(getattr(r.usage, field) for r in requests)  # noqa: E731
    # By hand from the fixture: 3.2k/2.5k w/344, 12k/1.1k w/9.8k h/1.2k, 5.0k/5.0k h/87, 12,345/678, 2,001/99,
    # and aider 0.75.1's 9.0k/3.0k w/2.0k h/100, whose 'sent' counts the write twice.
    assert total("cache_read") == 9800 + 5000 + 2000
    assert total("cache_write_5m") == 2500 + 1100 + 3000
    assert total("cache_write_1h") == 0
    assert total("uncached") == (3200 - 2500) + (12000 - 1100 - 9800) + 0 + 12345 + 2001 + (9000 - 2 * 3000 - 2000)
    assert total("output") == 344 + 1200 + 87 + 678 + 99 + 100
    # The prompt is 'sent', hit and write inside it (less the write counted twice).
    assert [r.usage.prompt for r in requests] == [3200, 12000, 5000, 12345, 2001, 9000 - 3000]
    assert all(r.sent_ms is None and r.ready_ms is None for r in requests)
    assert [r.usage.cache_reported for r in requests] == [True, True, True, False, False, True]


def test_the_notes_state_the_reading_the_rounding_and_the_missing_clock() -> None:
    notes = " | ".join(read(FIXTURE)[1].notes)
    assert "no time per call" in notes and "no TTL expiry is judged" in notes
    assert "'sent' is the whole prompt, cache write and cache hit inside it" in notes
    assert "4 Tokens line(s) print rounded counts" in notes
    assert "1 call(s) of aider 0.61 to 0.81.2 through litellm's Anthropic route" in notes
    assert "2 call(s) in runs that print no cache count" in notes


def _run(body: str, start: str = "2025-05-01 08:00:00") -> str:
    return f"\n# aider chat started at {start}\n\n{body}"


def test_architect_mode_reads_the_editor_calls_in_a_lane_of_their_own(tmp_path: Path) -> None:
    log = tmp_path / "h.md"
    log.write_text(_run(
        "> Main model: claude-sonnet-4-20250514 with architect edit format, prompt cache  \n"
        "> Editor model: claude-3-5-haiku-20241022 with editor-diff edit format  \n\n"
        "#### plan it  \n\nThe plan.\n\n> Tokens: 4.0k sent, 4.0k cache write, 100 received.  \n"
        "> Edit the files? (Y)es/(N)o [Yes]: y  \n\nThe edit.\n\n> Tokens: 1.5k sent, 1.5k cache write, 50 received.  \n"
        "\nThe fix.\n\n> Tokens: 1.7k sent, 1.5k cache hit, 40 received.  \n"
        "#### again  \n\nMore.\n\n> Tokens: 4.3k sent, 4.0k cache hit, 80 received.  \n"
    ))
    requests, _ = read(log)
    assert [(r.model, r.lane_kind) for r in requests] == [
        ("claude-sonnet-4-20250514", "main"), ("claude-3-5-haiku-20241022", "subagent"),
        ("claude-3-5-haiku-20241022", "subagent"), ("claude-sonnet-4-20250514", "main"),
    ]
    assert requests[1].prefix.parent is None and requests[2].prefix.parent == requests[1].prefix.node
    assert requests[3].prefix.parent == requests[0].prefix.node


@pytest.mark.parametrize(
    ("body", "line", "says"),
    [
        ("#### hi  \n\nHello.\n\n> Tokens: 1.2k sent, 3 recieved.  \n", 8, "a Tokens line aider does not write"),
        ("#### hi  \n\nHello.\n\n> Tokens: 1.2x sent, 3 received.  \n", 8, "a Tokens line aider does not write"),
        # a count past any model's context: one line, not an overflow deep in the replay
        ("#### hi  \n\nHello.\n\n> Tokens: 99999999999999999999999 sent, 3 received.  \n", 8, "sent is not a plausible count"),
        ("#### hi  \n\nHello.\n\n> Tokens: 12k sent, 99999999999999999999k cache hit, 3 received.  \n", 8, "cache hit is not a plausible count"),
        # digits past what an int or a float can hold: the same line, not a ValueError or OverflowError
        ("#### hi  \n\nHello.\n\n> Tokens: " + "9" * 400 + "k sent, 3 received.  \n", 8, "sent is not a plausible count"),
        ("#### hi  \n\nHello.\n\n> Tokens: 12k sent, " + "9" * 5000 + " received.  \n", 8, "received is not a plausible count"),
    ],
)
def test_a_mutated_tokens_line_is_one_line_naming_it_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, line: int, says: str) -> None:
    log = tmp_path / "h.md"
    log.write_text(_run(body))
    assert main(["audit", str(log)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"prefixbench: error: {log}:{line}: {says}") or f"{log}:{line}: {says}" in err
    assert "\n" not in err and "Traceback" not in err


def test_a_run_start_without_its_time_is_refused_naming_the_line(tmp_path: Path) -> None:
    log = tmp_path / "h.md"
    log.write_text(_run("#### hi  \n") + "\n# aider chat started at yesterday\n")
    with pytest.raises(UserError, match=rf"^{log}:6: a run's first line without its time"):
        read(log)


@pytest.mark.parametrize("when", ["2024-13-45 99:99:99", "2024-02-30 12:00:00", "0000-01-01 00:00:00"])
def test_a_run_start_whose_time_is_no_date_is_refused_naming_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], when: str) -> None:
    # Shaped as aider's (four digits, two, two...) but no day on the calendar: one line, not strptime's ValueError.
    log = tmp_path / "h.md"
    log.write_text(_run("#### hi  \n") + f"\n# aider chat started at {when}\n")
    assert main(["audit", str(log)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"prefixbench: error: {log}:6: a run's first line whose time is no date ('{when}')"


def test_lines_are_counted_at_newlines_only_as_an_editor_counts_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A reply may hold a form feed, U+2028, U+0085...: str.splitlines breaks there too, and the
    # line named was past the one an editor shows.
    log = tmp_path / "h.md"
    log.write_text(_run("#### hi  \n\nSure\u2028here\x0c it is\x1c ok\x85\n\n> Tokens: 1.2x sent, 3 received.  \n"))
    assert main(["audit", str(log)]) == 2
    assert capsys.readouterr().err.startswith(f"prefixbench: error: {log}:8: a Tokens line aider does not write")
    log.write_text(_run("#### hi  \n\nSure\u2028here\x0c#### it is\n\n> Tokens: 1.2k sent, 3 received.  \n"))
    requests, _ = read(log)
    assert [r.line for r in requests] == [8]
    assert [m.role for m in requests[0].messages] == ["user"]  # ('#### ' after a form feed is the reply's text, no user input)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_a_compressed_chat_history_named_reads_as_the_plain_one(tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str) -> None:
    # As a JSON log's: gzip, bzip2 or xz by its first bytes (it was "not a JSON log: its first line is not JSON").
    import bz2
    import gzip
    import lzma

    pack = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[suffix]
    log = tmp_path / f".aider.chat.history.md{suffix}"
    log.write_bytes(pack(FIXTURE.read_bytes()))
    assert detect_format(log) is AIDER
    requests, summary = read(log)
    plain, _ = read(FIXTURE)
    assert [(r.line, r.model, r.usage) for r in requests] == [(r.line, r.model, r.usage) for r in plain]
    # Cut short: one line naming the file and what is wrong, exit 2.
    log.write_bytes(pack(FIXTURE.read_bytes())[:-20])
    assert main(["audit", str(log)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"prefixbench: error: {log}") and "cut short or corrupt" in err and "\n" not in err


def test_a_compressed_history_past_the_size_read_is_refused_by_its_decompressed_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    from prefixbench.workloads.logs.formats import aider

    log = tmp_path / ".aider.chat.history.md.gz"
    log.write_bytes(gzip.compress(FIXTURE.read_bytes()))
    monkeypatch.setattr(aider, "MAX_BYTES", FIXTURE.stat().st_size - 1)  # its compressed bytes are fewer
    with pytest.raises(UserError, match=rf"^{log}: larger than [\d,]+ bytes; split it by run"):
        read(log)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_a_history_with_a_byte_order_mark_reads_from_its_first_run(tmp_path: Path, encoding: str) -> None:
    # A byte-order mark before the first run's line (an editor's UTF-8 BOM, Windows PowerShell's
    # UTF-16 copy): the first run was taken for text before it, its calls skipped (UTF-8), or the
    # file was no aider history at all (UTF-16).
    log = tmp_path / "h.md"
    text = FIXTURE.read_text().lstrip("\n")
    log.write_text(text, encoding=encoding)
    assert detect_format(log) is AIDER
    requests, summary = read(log)
    plain = tmp_path / "plain.md"
    plain.write_text(text)
    expected, _ = read(plain)
    assert [(r.line, r.model, r.usage) for r in requests] == [(r.line, r.model, r.usage) for r in expected]
    assert summary.skipped == ()


def test_markdown_that_is_not_aider_s_is_no_format(tmp_path: Path) -> None:
    log = tmp_path / "README.md"
    log.write_text("# a project\n\n> Tokens: 1k sent, 2 received.\n")
    with pytest.raises(UserError, match=rf"^{log}:1: not a JSON log"):
        detect_format(log)


def test_the_llm_history_is_refused_saying_what_it_keeps(tmp_path: Path) -> None:
    log = tmp_path / ".aider.llm.history"
    log.write_text("TO LLM 2025-05-01T08:00:01\n-------\nSYSTEM Act as an expert\n\nLLM RESPONSE 2025-05-01T08:00:09\nASSISTANT ok\n")
    with pytest.raises(UserError) as caught:
        detect_format(log)
    assert str(caught.value) == f"{log}:1: {LLM_HISTORY}"


def test_the_analytics_log_is_refused_saying_what_it_keeps(tmp_path: Path) -> None:
    log = tmp_path / "analytics.jsonl"
    event = {"event": "message_send", "properties": {"main_model": "gpt-4o", "prompt_tokens": 1200, "completion_tokens": 30,
                                                     "total_tokens": 1230, "cost": 0.01}, "user_id": "u1", "time": 1746086400}
    log.write_text(json.dumps({"event": "launched", "properties": {}, "user_id": "u1", "time": 1746086399}) + "\n" + json.dumps(event) + "\n")
    with pytest.raises(UserError) as caught:
        read(log)
    assert str(caught.value) == f"{log}:1: {ANALYTICS}"


def test_an_analytics_log_beside_a_history_of_no_tokens_line_points_at_neither(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Both in one folder: the audit's error was the analytics log's refusal, "audit aider's chat
    # history instead", the history it had just read and found no call in.
    instead = "; audit aider's chat history instead (.aider.chat.history.md)"
    log = tmp_path / "analytics.jsonl"
    log.write_text(json.dumps({"event": "message_send", "properties": {"prompt_tokens": 1200, "completion_tokens": 30},
                               "user_id": "u1", "time": 1746086400}) + "\n")
    history = tmp_path / ".aider.chat.history.md"
    history.write_text(_run("> Aider v0.86.1  \n> Main model: gpt-4o with diff edit format  \n\n#### /add x.py  \n"))
    assert main(["audit", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"prefixbench: error: {log}:1: {ANALYTICS.removesuffix(instead)}; {history}: no call read "
                   "from .aider.chat.history.md: no 'Tokens:' line in its 1 run(s) (aider writes one after each message it sends)")


def test_a_history_of_no_tokens_line_reads_no_call_and_says_why(tmp_path: Path) -> None:
    log = tmp_path / "h.md"
    log.write_text(_run("> Aider v0.86.1  \n> Main model: gpt-4o with diff edit format  \n\n#### /add x.py  \n"))
    requests, summary = read(log)
    assert requests == [] and summary.notes[0].startswith("no call read from h.md: no 'Tokens:' line in its 1 run(s)")


@pytest.mark.parametrize(
    ("version", "model", "twice"),
    [
        ((0, 59, 1), "claude-3-5-sonnet-20240620", (False, False)),  # aider summed litellm's input-only prompt
        ((0, 62, 0), "claude-3-5-sonnet-20240620", (True, True)),  # hit twice: aider 0.63's own fix
        ((0, 63, 0), "anthropic/claude-3-5-sonnet-20241022", (False, True)),
        ((0, 81, 2), "claude-3-7-sonnet-20250219", (False, True)),  # litellm 1.65.3
        ((0, 81, 3), "claude-3-7-sonnet-20250219", (False, False)),  # litellm 1.65.7: the read only
        ((0, 75, 1), "openrouter/anthropic/claude-3.7-sonnet", (False, False)),  # not litellm's Anthropic route
        ((0, 75, 1), "deepseek/deepseek-chat", (False, False)),
        (None, "claude-3-7-sonnet-20250219", (False, False)),  # no version named: read as aider means it
    ],
)
def test_what_sent_counts_twice_follows_the_aider_version_and_route(version, model, twice) -> None:
    from prefixbench.workloads.logs.formats.aider import doubled

    assert doubled(version, model) == twice


def test_august_2024_development_versions_print_their_cache_counts_outside_sent(tmp_path: Path) -> None:
    """Aider 0.50.2-dev (in aider's own tests/fixtures/chat-history.md): '492 sent, 1,278 cached'
    (the hit outside 'sent', no write printed), then 'cache write' and 'cache hit' labels still
    outside 'sent' ('194 sent, 9,474 cache write'); 0.51.0 put them inside."""
    log = tmp_path / "h.md"
    log.write_text(_run(
        "> Aider v0.50.2-dev  \n> Main model: anthropic/claude-3-haiku-20240307 with whole edit format, caching, infinite output  \n\n"
        "#### hi  \n\nHello.\n\n> Tokens: 492 sent, 1,278 cached, 72 received. Cost: $0.0026 message, $0.0026 session.  \n"
    ) + _run(
        "> Aider v0.50.2-dev  \n> Main model: anthropic/claude-3-haiku-20240307 with whole edit format, prompt cache, infinite output  \n\n"
        "#### hi  \n\nHello.\n\n> Tokens: 194 sent, 9,474 cache write, 7 received. Cost: $0.0000088 message, $0.0000088 session.  \n"
        "#### hi  \n\nHello.\n\n> Tokens: 194 sent, 9,474 cache hit, 7 received, cache costs not included. Cost: $0.00029 message, $0.00029 session.  \n",
        start="2025-05-01 08:10:00",
    ))
    requests, summary = read(log)
    assert [r.usage for r in requests] == [
        Usage(cache_read=1278, uncached=492, output=72, writes_reported=False),
        Usage(cache_write_5m=9474, uncached=194, output=7),
        Usage(cache_read=9474, uncached=194, output=7),
    ]
    assert any(note.startswith("3 call(s) of aider's development versions before 0.51.0") for note in summary.notes)


def test_a_history_under_aider_s_name_whose_head_was_cut_is_read_from_its_first_run(tmp_path: Path) -> None:
    body = "-*- mode: fundamental -*-\n> isort....Passed  \n> Tokens: 1,000 sent, 10 received.  \n" + FIXTURE.read_text()
    named = tmp_path / "x.chat.history.md"
    named.write_text(body)
    requests, summary = read(named)
    assert len(requests) == 6 and summary.skipped == ((3, "a Tokens line before the file's first run ('# aider chat started at'): "
                                                         "its model unknown, not read"),)
    assert summary.notes[-1] == "3 line(s) of text before the file's first run ('# aider chat started at'): not read (its head cut or edited)"
    other = tmp_path / "x.md"  # under another name, its content alone decides: not aider's
    other.write_text(body)
    with pytest.raises(UserError, match="not a JSON log"):
        detect_format(other)


def test_inside_a_reply_s_code_block_lines_shaped_like_aider_s_are_the_reply_s(tmp_path: Path) -> None:
    log = tmp_path / "h.md"
    log.write_text(_run(
        "> Main model: gpt-4o with diff edit format  \n\n#### show me the history format  \n\nHere:\n\n```\n"
        "# aider chat started at {current_time}\n#### a user line\n> Tokens: {sent} sent, {received} received.\n"
        "> Main model: other-model with whole edit format\n```\n\n> Tokens: 1,200 sent, 80 received.  \n"
    ))
    requests, _ = read(log)
    assert [(r.model, r.usage.prompt, r.usage.output) for r in requests] == [("gpt-4o", 1200, 80)]


def test_a_chat_history_read_as_another_format_names_itself_and_the_input_that_reads_it() -> None:
    with pytest.raises(UserError) as caught:
        import_file(FIXTURE, FORMATS["codex"], ImportContext())
    assert str(caught.value) == f"{FIXTURE}: an aider chat history read as codex (--input aider reads it)"  # (it said "a database")


def test_the_cost_line_aider_writes_under_a_tokens_line_is_aider_s_not_the_reply_s(tmp_path: Path) -> None:
    # With both cache counts aider puts 'Cost:' on a line of its own (base_coder.py: sep "\n"),
    # which its chat history writes without the '> ' of the line above (io.py blockquotes the
    # first line only). Before: read as one more assistant message before the next input.
    log = tmp_path / "h.md"
    log.write_text(_run(
        "> Main model: claude-sonnet-4-20250514 with diff edit format, prompt cache  \n\n"
        "#### one  \n\nDone.\n\n> Tokens: 4.0k sent, 1.0k cache write, 2.0k cache hit, 100 received.  \n"
        "Cost: $0.02 message, $0.04 session.  \n\n"
        "#### two  \n\nAgain.\n\n> Tokens: 4.3k sent, 4.0k cache hit, 80 received. Cost: $0.01 message, $0.05 session.  \n"
    ))
    requests, _ = read(log)
    assert [(m.role, m.excerpt) for m in requests[1].messages] == [("assistant", "Done."), ("user", "two")]
    assert requests[1].prefix.new_blocks == 2


def test_the_announcement_s_markers_of_august_2024_are_not_the_model_s_name(tmp_path: Path) -> None:
    """Aider 0.49 to 0.50.x-dev (2024-08-12 to 08-19, Aider-AI/aider 124e85236, 53db8cfa8) put
    '♾️ ' before the edit format (infinite output) and '⚡' after the model (prompt caching): the
    model and the edit format are the words around them."""
    log = tmp_path / "h.md"
    log.write_text(_run(
        "> Aider v0.50.2-dev  \n> Models: claude-3-5-sonnet-20240620 with ♾️ diff edit format, weak model claude-3-haiku-20240307  \n\n"
        "#### hi  \n\nHello.\n\n> Tokens: 492 sent, 1,278 cached, 72 received. Cost: $0.0026 message, $0.0026 session.  \n"
    ) + _run(
        "> Aider v0.50.2-dev  \n> Model: anthropic/claude-3-haiku-20240307⚡ with ♾️ whole edit format  \n\n"
        "#### hi  \n\nHello.\n\n> Tokens: 194 sent, 9,474 cached, 7 received. Cost: $0.000057 message, $0.000057 session.  \n",
        start="2025-05-01 08:10:00",
    ))
    requests, _ = read(log)
    assert [(r.model, r.provider) for r in requests] == [
        ("claude-3-5-sonnet-20240620", "anthropic"), ("anthropic/claude-3-haiku-20240307", "anthropic"),
    ]
    assert [r.prefix.head for r in requests] == ["aider:diff:claude-3-5-sonnet-20240620", "aider:whole:anthropic/claude-3-haiku-20240307"]


def test_a_deepseek_call_counts_its_reads_in_the_step_of_its_run_s_start(tmp_path: Path) -> None:
    """The calls have no time, their run's start has one: DeepSeek read in 64-token units before
    V4 (2026-04-24), in 128 since; a run is dated by its start."""
    body = "> Model: deepseek/deepseek-coder with diff edit format  \n\n#### hi  \n\nHello.\n\n> Tokens: 21,539 sent, 320 cache hit, 9 received.  \n"
    log = tmp_path / "h.md"
    log.write_text(_run(body, start="2024-08-19 13:19:19") + _run(body, start="2026-05-18 09:00:00"))
    requests, summary = read(log)
    assert [rules_for(r.provider).read_step(r.model, r.read_step) for r in requests] == [64, 128]
    assert all(r.sent_ms is None for r in requests)
    assert any(note.startswith("1 call(s) of a provider whose reads counted in another step before a date") for note in summary.notes)


def test_the_line_patterns_are_compiled_when_a_history_is_read_not_at_start_up() -> None:
    """Every audit imports the aider reader; its line patterns cost a millisecond of start-up
    each process, and only a chat history read needs them."""
    import subprocess
    import sys

    probe = ("from prefixbench.workloads.logs.formats import aider, detect_format\n"
             f"detect_format(__import__('pathlib').Path({str(FIXTURE)!r}))\n"
             "print(aider._line_patterns.cache_info().currsize)\n")
    before = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert before.stdout.split() == ["0"]
    read(FIXTURE)
    from prefixbench.workloads.logs.formats import aider
    assert aider._line_patterns.cache_info().currsize == 1


def test_input_aider_reads_a_history_with_text_before_its_first_run_under_any_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Content alone does not tell such a file (its first line is a note), so auto refuses it; named
    with ``--input aider`` it is read, the text before the first run skipped, the counts those of
    the history itself."""
    log = tmp_path / "notes.txt"
    log.write_text("my notes on this session\n\n" + FIXTURE.read_text())
    assert main(["audit", str(log), "--quiet", "--format", "json"]) == 2
    assert "not a JSON log" in capsys.readouterr().err
    assert main(["audit", str(log), "--input", "aider", "--quiet", "--format", "json"]) in (0, 1)
    forced = json.loads(capsys.readouterr().out)["totals"]
    assert main(["audit", str(FIXTURE), "--quiet", "--format", "json"]) in (0, 1)
    plain = json.loads(capsys.readouterr().out)["totals"]
    assert forced["requests"] == plain["requests"] == 6
    assert [forced[k] for k in ("input", "output", "cache_read", "cache_write")] == [plain[k] for k in ("input", "output", "cache_read", "cache_write")]


@pytest.mark.parametrize(("model", "provider"), [
    ("ollama/qwen2.5-coder:32b", "unknown"),  # main: qwen
    ("ollama_chat/qwen2.5-coder:32b", "unknown"),  # main: qwen
    ("lm_studio/qwen2.5-coder-32b-instruct", "unknown"),  # main: qwen
    ("openrouter/qwen/qwen-2.5-coder-32b-instruct", "qwen"),  # a gateway: the maker's, as before
    # litellm's other engines a user runs (its LlmProviders). Main: qwen, each.
    ("hosted_vllm/Qwen/Qwen2.5-Coder-32B-Instruct", "unknown"),
    ("vllm/Qwen/Qwen2.5-Coder-32B-Instruct", "unknown"),
    ("xinference/qwen2.5-coder-instruct", "unknown"),
    ("llamafile/qwen2.5-coder-32b", "unknown"),
    # A vendor's route (no engine of the user's): the model maker's, as before.
    ("fireworks_ai/accounts/fireworks/models/qwen2p5-coder-32b-instruct", "qwen"),
])
def test_a_model_on_a_self_hosted_engine_is_provider_unknown(tmp_path: Path, model: str, provider: str) -> None:
    """Through litellm's Ollama or LM Studio the host runs the model and its cache: not the model
    maker's, as the other readers read such a host (self_hosted)."""
    log = tmp_path / "h.md"
    log.write_text(_run(f"> Model: {model} with whole edit format  \n\n#### hi  \n\nHello.\n\n"
                        "> Tokens: 2,000 sent, 9 received.  \n"))
    requests, _ = read(log)
    assert [(r.model, r.provider) for r in requests] == [(model, provider)]


def _one_call_audit(tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str) -> tuple[list[str], dict]:
    """One call of ``model`` in an aider log: the upstreams its reader gives, and its audit.json."""
    log = tmp_path / "h.md"
    log.write_text(_run(f"> Model: {model} with whole edit format  \n\n#### hi  \n\nHello.\n\n"
                        "> Tokens: 2,000 sent, 9 received.  \n"))
    requests, _ = read(log)
    assert main(["audit", str(log), "--quiet", "--format", "json"]) in (0, 1)
    return [r.upstream for r in requests], json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("model", "engine"), [
    ("ollama/deepseek-chat", "ollama"),  # main: $0.00056378 at DeepSeek's list price
    ("ollama_chat/gpt-4o", "ollama_chat"),  # main: $0.00509 at OpenAI's
    ("lm_studio/gpt-4o", "lm_studio"),
    # litellm's other engines a user runs. Main: priced at DeepSeek's or OpenAI's list price.
    ("hosted_vllm/deepseek-chat", "hosted_vllm"),
    ("triton/gpt-4o", "triton"),
    ("docker_model_runner/deepseek-chat", "docker_model_runner"),
    ("lemonade/deepseek-chat", "lemonade"),
    ("oobabooga/gpt-4o", "oobabooga"),
])
def test_a_model_on_a_self_hosted_engine_is_unpriced_whatever_its_name(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                        model: str, engine: str) -> None:
    """No vendor bills a call an engine of the user's own ran: its engine is the call's upstream,
    which leaves it unpriced, as the other readers' self-hosted calls are."""
    upstreams, out = _one_call_audit(tmp_path, capsys, model)
    assert upstreams == [engine]
    totals = out["totals"]
    assert any(f"served by {engine}, a host running open models itself" in note for note in out["notes"]), out["notes"]
    assert totals["unpriced_requests"] == 1 and totals["cost_usd"] in (None, 0, "0", "0.00", "0.000000"), totals


@pytest.mark.parametrize(("model", "host"), [
    # (deepseek-v4-flash: a model Fireworks' own table does not list; its deepseek-v4-pro is priced at its row)
    ("fireworks_ai/accounts/fireworks/models/deepseek-v4-flash", "fireworks_ai"),  # main: priced at DeepSeek's list price
    ("groq/moonshotai/kimi-k2.5", "groq"),  # main: at Moonshot's
])
def test_a_model_on_a_third_party_host_is_unpriced(tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str, host: str) -> None:
    """A litellm route to a host serving other makers' open models at its own prices: the host is
    the call's upstream, which leaves it unpriced (the table holds none of that host's prices)."""
    upstreams, out = _one_call_audit(tmp_path, capsys, model)
    assert upstreams == [host]
    assert any(f"served by {host} (the log names it)" in note for note in out["notes"]), out["notes"]
    assert out["totals"]["unpriced_requests"] == 1


def test_an_aider_log_points_past_a_chat_history_of_another_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The pointer to aider's chat history was taken as met by a history of any folder the audit
    # read: an analytics log of one repo lost "audit aider's chat history instead" to another's.
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    log = tmp_path / "one" / "analytics.jsonl"
    log.write_text(json.dumps({"event": "message_send", "properties": {"prompt_tokens": 1200, "completion_tokens": 30},
                               "user_id": "u1", "time": 1746086400}) + "\n")
    history = tmp_path / "two" / ".aider.chat.history.md"
    history.write_text(_run("> Aider v0.86.1  \n> Main model: gpt-4o with diff edit format  \n\n#### /add x.py  \n"))
    assert main(["audit", str(log), str(history), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == f"prefixbench: error: {log}:1: {ANALYTICS}"
