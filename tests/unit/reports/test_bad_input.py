"""Issue 8's corpus: every input that once crashed, hung or was accepted silently, as a user
feeds it. Each ends in exit 2 with one line naming the file:line or option/key, or exit 0 with
the right result; never a traceback. The inputs are written here, by the tests."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from prefixbench.reports.options import warn_window_memory

USER = {"role": "user", "content": "hi"}
GOOD = {"model": "m", "messages": [USER]}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err.strip()


def assert_one_line(status: int, err: str, *needles: str) -> None:
    assert status == 2, err
    assert err.startswith("prefixbench: error: ") and "\n" not in err and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)


# --- chat-completions replay ---------------------------------------------------------------


def chat_log(tmp_path: Path, second: bytes) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + second + b"\n")
    return path


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


CHAT_CRASHES = {
    "invalid utf-8": (b'{"model": "m\xff"}', "log.jsonl:2: not UTF-8"),
    "cut mid-character": ('{"model": "h\u00e9'.encode()[:-1], "log.jsonl:2: not UTF-8"),
    "nested 1000 deep": (('{"model": "m", "messages": ' + nested(1000) + "}").encode(), "log.jsonl:2: JSON nested too deep"),
    "nested 150 deep": (('{"model": "m", "messages": [' + nested(150) + "]}").encode(), "log.jsonl:2: nested too deep"),
    "4301-digit integer": (('{"model": "m", "messages": [], "max_tokens": ' + "9" * 4301 + "}").encode(), "more than 4,300 digits"),
    "lone surrogate in a message": (b'{"model": "m", "messages": [{"role": "user", "content": "\\ud800"}]}', "messages[0].content holds a lone surrogate"),
    "lone surrogate in a tool name": (
        b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [{"function": {"name": "\\udfff"}}]}',
        "tools[0].function.name holds a lone surrogate",
    ),
    "lone surrogate in the system text": (
        b'{"model": "m", "messages": [{"role": "system", "content": "a\\ud800"}, {"role": "user", "content": "x"}]}',
        "lone surrogate",
    ),
    "tool_calls is a number": (
        b'{"model": "m", "messages": [{"role": "assistant", "content": "x", "tool_calls": 5}]}',
        "messages[0].tool_calls must be a list",
    ),
    "NaN temperature": (b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": NaN}', "NaN is not a JSON number"),
    "infinite temperature": (b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 1e999}', "too large"),
}

CHAT_SILENT = {
    "zero max_tokens": ({**GOOD, "max_tokens": 0}, "'max_tokens' must be a positive integer"),
    "negative max_tokens": ({**GOOD, "max_completion_tokens": -5}, "'max_completion_tokens' must be a positive integer"),
    "negative temperature": ({**GOOD, "temperature": -0.5}, "'temperature' must be a number from 0 to 2"),
    "huge temperature": ({**GOOD, "temperature": 10**400}, "'temperature' must be a number from 0 to 2"),
    "huge max_tokens": ({**GOOD, "max_tokens": 10**400}, "'max_tokens' must be a positive integer up to 1,000,000,000"),
    "no messages": ({"model": "m", "messages": []}, "'messages' is empty"),
    "empty model": ({"model": "", "messages": [USER]}, "'model' is empty"),
    "empty provider": ({**GOOD, "provider": ""}, "'provider' is empty"),
    "banana effort": ({**GOOD, "reasoning_effort": "banana"}, "'reasoning_effort' must be one of"),
    "string parameters": (
        {**GOOD, "tools": [{"function": {"name": "ls", "parameters": ""}}]},
        "tools[0].function.parameters must be an object",
    ),
    "orphan tool result": (
        {"model": "m", "messages": [USER, {"role": "tool", "tool_call_id": "nope", "content": "x"}]},
        "messages[1]: tool_call_id 'nope' answers no earlier assistant tool call",
    ),
}


@pytest.mark.parametrize("line, message", CHAT_CRASHES.values(), ids=CHAT_CRASHES.keys())
def test_chat_completions_crashes_are_one_line(tmp_path, capsys, line, message):
    assert_one_line(*run(capsys, "replay", str(chat_log(tmp_path, line)))[::2], message)


@pytest.mark.parametrize("body, message", CHAT_SILENT.values(), ids=CHAT_SILENT.keys())
def test_chat_completions_nonsense_is_refused(tmp_path, capsys, body, message):
    assert_one_line(*run(capsys, "replay", str(chat_log(tmp_path, json.dumps(body).encode())))[::2], "log.jsonl:2: ", message)


def test_empty_stop_list_and_no_stop_are_one_request_family(tmp_path, capsys):
    # Providers treat "stop": [] as no stop sequence: the second request must hit the first's cache.
    turn = {"model": "m", "messages": [USER, {"role": "assistant", "content": "hello " * 200}, USER]}
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(turn) + "\n" + json.dumps({**turn, "stop": []}) + "\n")
    status, out, err = run(capsys, "replay", str(path), "--format", "json")
    assert status == 0, err
    first, second = json.loads(out)
    assert second["cached_tokens"] == second["prompt_tokens"] == first["prompt_tokens"]
    # ...while a real stop sequence is another family and misses.
    path.write_text(json.dumps(turn) + "\n" + json.dumps({**turn, "stop": ["END"]}) + "\n")
    status, out, _ = run(capsys, "replay", str(path), "--format", "json")
    assert json.loads(out)[1]["cached_tokens"] == 0


def test_json_line_separators_bom_are_read_not_refused(tmp_path, capsys):
    # U+2028, U+2029 and U+0085 are legal raw inside a JSON string; a BOM may start the file.
    body = {"model": "m", "messages": [{"role": "user", "content": "a\u2028b\u2029c\u0085d"}]}
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(body, ensure_ascii=False).encode() + b"\n")
    status, out, err = run(capsys, "replay", str(path), "--format", "json")
    assert status == 0, err
    assert len(json.loads(out)) == 1


@pytest.mark.parametrize("target", ["/proc/self/mem", "/dev/zero", "folder", "binary"])
def test_files_that_are_not_logs_are_one_line(tmp_path, capsys, target):
    if target == "folder":
        target = str(tmp_path)
    elif target == "binary":
        path = tmp_path / "a.bin"
        path.write_bytes(bytes(range(256)) * 4)
        target = str(path)
    elif not Path(target).exists():
        pytest.skip(f"{target} does not exist here")
    for fmt in ("chat-completions", "anthropic-capture"):
        assert_one_line(*run(capsys, "replay", target, "--input", fmt)[::2], target)


# --- anthropic capture ---------------------------------------------------------------------


def capture_line(body: object = None, *, sent: object = 1.0, answered: object = 2.0, status: object = 200, usage=None) -> str:
    usage = usage or {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}
    body = body or {"model": "claude-x", "messages": [{"role": "user", "content": "hi"}]}
    return json.dumps(
        {"request": {"timestamp": sent, "body": body}, "response": {"timestamp": answered, "status_code": status, "body": {"usage": usage}}}
    )


def capture_file(tmp_path: Path, second: str | bytes) -> Path:
    path = tmp_path / "cap.jsonl"
    second_bytes = second.encode() if isinstance(second, str) else second
    path.write_bytes(capture_line().encode() + b"\n" + second_bytes + b"\n")
    return path


CAPTURE_CASES = {
    "nested 1000 deep": (capture_line().replace('"hi"', nested(1000)), "cap.jsonl:2: JSON nested too deep"),
    "huge integer": (capture_line().replace('"output_tokens": 5', '"output_tokens": ' + "7" * 4400), "more than 4,300 digits"),
    "timestamp 1e308": (capture_line(answered=1e308), "cap.jsonl:2: response timestamp 1e+308 is not a Unix time"),
    "request timestamp 1e308": (capture_line(sent=1e308), "cap.jsonl:2: request timestamp"),
    "NaN timestamp": (capture_line().replace('"timestamp": 2.0', '"timestamp": NaN'), "NaN is not a JSON number"),
    "surrogate in system": (capture_line({"model": "c", "system": "\ud800", "messages": []}), "system holds a lone surrogate"),
    "surrogate in a message": (capture_line({"model": "c", "messages": [{"role": "user", "content": "\udc00"}]}), "lone surrogate"),
    "surrogate in the model": (capture_line({"model": "c\ud800", "messages": []}), "request.body.model holds a lone surrogate"),
    "negative cache count": (
        capture_line(usage={"input_tokens": 1, "cache_read_input_tokens": -4, "output_tokens": 1}),
        "usage.cache_read_input_tokens is not a non-negative integer",
    ),
    "negative 1h split": (
        capture_line(usage={"input_tokens": 1, "cache_creation_input_tokens": 3, "cache_creation": {"ephemeral_1h_input_tokens": -1}, "output_tokens": 1}),
        "ephemeral_1h_input_tokens must be an integer from 0",
    ),
    "string status": (capture_line(status="500"), "status_code must be an integer"),
    "count beyond any real one": (
        capture_line(usage={"input_tokens": 10**400, "cache_read_input_tokens": 0, "output_tokens": 1}),
        "usage.input_tokens (401 digits) is beyond any real count",
    ),
    "negative temperature": (
        capture_line({"model": "c", "temperature": -1, "messages": [{"role": "user", "content": "x"}]}),
        "temperature must be a number from 0 to 1",
    ),
    "huge temperature": (
        capture_line({"model": "c", "temperature": 10**400, "messages": [{"role": "user", "content": "x"}]}),
        "temperature must be a number from 0 to 1",
    ),
    "invalid utf-8": (b'{"request": "\xc3', "cap.jsonl:2: not UTF-8"),
}


@pytest.mark.parametrize("line, message", CAPTURE_CASES.values(), ids=CAPTURE_CASES.keys())
def test_capture_crashes_are_one_line(tmp_path, capsys, line, message):
    for fmt in ("table", "json"):
        status, _, err = run(capsys, "replay", "--input", "anthropic-capture", str(capture_file(tmp_path, line)), "--format", fmt)
        assert_one_line(status, err, message)


def test_capture_with_raw_line_separators_and_skipped_500(tmp_path, capsys):
    text = capture_line({"model": "c", "messages": [{"role": "user", "content": "a\u2028b\u2029c\u0085"}]})
    raw = json.dumps(json.loads(text), ensure_ascii=False)
    assert "\u2028" in raw
    path = capture_file(tmp_path, raw + "\n" + capture_line(status=500))
    status, out, err = run(capsys, "replay", "--input", "anthropic-capture", str(path), "--format", "json")
    assert status == 0, err
    assert len(json.loads(out)) == 2  # two served calls; the 500 is skipped, not counted


# --- --engine-config -----------------------------------------------------------------------

TT = ["sweep", "--workload", "thinking-tools", "--engines", "ranges", "--windows", "32k", "--presets", "patched", "--quiet"]


def config_file(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


CONFIG_CASES = {
    "invalid utf-8": ("c.toml", b"[ranges]\ntier2_trigger = 5 # \xff\n", "c.toml:2: not UTF-8"),
    "list for a model name": (
        "c.json",
        '{"checkpoint": {"summarization_provider": "x", "summarization_model": ["a"]}}',
        "checkpoint.summarization_model must be a string",
    ),
    "5000-digit integer (toml)": ("c.toml", "[ranges]\ntier2_trigger = " + "1" * 5000, "more than 4,300 digits"),
    "5000-digit integer (json)": ("c.json", '{"ranges": {"tier2_trigger": ' + "1" * 5000 + "}}", "more than 4,300 digits"),
    "nested 2000 deep (toml)": ("c.toml", "a = " + "[" * 2000 + "]" * 2000, "nested too deep"),
    "nested 2000 deep (json)": ("c.json", '{"ranges": ' + nested(2000) + "}", "nested too deep"),
    "max_summary_length 50": ("c.toml", "[ranges]\nmax_summary_length = 50", "max_summary_length (50)"),
    "min_summary_length 20000": ("c.toml", "[ranges]\nmin_summary_length = 20000", "ranges.min_summary_length"),
    "max below scripted summaries": ("c.toml", "[ranges]\nmax_summary_length = 200", "scripted model writes"),
    "ranges table without ranges": ("c.toml", "[user-tail]\nretained_turns = 2", "[user-tail] is set but the sweep runs only ranges"),
    "syntax error": ("c.json", '{"ranges": {"a": "x', "c.json:1: invalid JSON (Unterminated string starting at column"),
    # An empty file ran the sweep with defaults, silently: most likely the wrong file.
    "empty toml": ("c.toml", "", "no engine tables"),
    "empty json object": ("c.json", "{}", "no engine tables"),
}


@pytest.mark.parametrize("name, data, message", CONFIG_CASES.values(), ids=CONFIG_CASES.keys())
def test_engine_config_crashes_and_hangs_are_one_line(tmp_path, capsys, name, data, message):
    path = config_file(tmp_path, name, data)
    status, _, err = run(capsys, *TT, "--engine-config", str(path), "--out", str(tmp_path / "out"))
    assert_one_line(status, err, str(path), message)
    assert "at at" not in err


def test_upper_case_toml_and_bom_are_read(tmp_path, capsys):
    path = config_file(tmp_path, "C.TOML", b"\xef\xbb\xbf[ranges]\ntier2_trigger = 6\n")
    status, _, err = run(capsys, *TT, "--turns", "1", "--steps-per-turn", "4", "--engine-config", str(path), "--out", str(tmp_path / "o"))
    assert status == 0, err


# --- options and --out ---------------------------------------------------------------------

SMALL = ["sweep", "--windows", "32k", "--presets", "patched", "--steps", "30", "--quiet"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--steps", "0"], "seed-coding: --steps must be 1 to 10,000, got 0"),
        (["--windows", "32k,32k"], "--windows: '32k' given twice"),
        (["--windows", "32k,32000"], "--windows: 32,000 tokens given twice"),
        (["--presets", "patched,patched"], "--presets: 'patched' given twice"),
        (["--period", "peak"], "--period chooses a price row, so it needs --price"),
        (["--cache", "openai:"], "nothing after the colon"),
        (["--tokenizer", "deepseek-v4"], "add --cache deepseek"),
        (["--windows", "inf"], "--windows: window must be a positive number of tokens up to 1,000m"),
        (["--seeds", ""], "--seeds: empty item in ''"),  # before: ignored, seed 0 run
        (["--windows", "nan"], "--windows: window must be a positive number"),
        (["--windows", "1e400"], "--windows: window must be a positive number"),
        (["--cache", "vllm:capacity_blocks=" + "9" * 5000], "has 5,000 digits: too large"),
        (["--cache", "vllm:capacity_blocks=\u00b2"], "capacity_blocks"),  # found by fuzzing: "²" isdigit, no int: ValueError
        (["--cache", "anthropic:chars_per_token=1e-300"], "chars_per_token must be a number from 0.01 to 1000"),
    ],
)
def test_silently_accepted_options_are_refused(tmp_path, capsys, argv, message):
    status, _, err = run(capsys, *SMALL, *argv, "--out", str(tmp_path / "o"))
    assert_one_line(status, err, message)
    assert not (tmp_path / "o").exists()  # refused before anything ran or was written


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--retain-tokens", "-5"], "error: --retain-tokens must be 0 or more, got -5"),
        (["--retain-ratio", "0.9"], "error: --retain-ratio must be >= 0 and below --threshold-ratio 0.8, got 0.9"),
        (["--gap-s", "-5", "--workload", "idle-gaps"], "error: idle-gaps: --gap-s must be between 0 and 86400 seconds"),
        (["--gap-s", "3"], "--gap-s does not apply to workload 'seed-coding' (its options: --steps, --effort, --pruner,"),
        # Before: "got None": the word seed-coding takes for the adapter's effort, read as no value.
        (["--workload", "thinking-tools", "--effort", "default"],
         "error: thinking-tools: --effort must be one of low, high, max (thinking on), got 'default' (thinking mode sends an effort"),
        # Before: "(known: low, high, max)", without the "default" the --help offers.
        (["--effort", "ultra"], "error: unknown effort 'ultra' (known: low, high, max, or default for the adapter's own)"),
    ],
)
def test_a_bad_workload_option_names_its_flag(tmp_path, capsys, argv, message):
    # Before: the factory's key ("checkpoint.retain_tokens", "idle-gaps: gap_s", "its options:
    # steps, ..., threshold_ratio, checkpoint, seed"), not what the user typed.
    small = [word for word in SMALL if word not in ("--steps", "30")] if "--workload" in argv else SMALL
    status, _, err = run(capsys, *small, *argv, "--out", str(tmp_path / "o"))
    assert_one_line(status, err, message)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--steps", "10001"], "seed-coding: --steps must be 1 to 10,000, got 10001"),
        (["--steps", "99999999999"], "seed-coding: --steps must be 1 to 10,000, got 99999999999"),
        (["--workload", "thinking-tools", "--steps-per-turn", "10001"], "thinking-tools: --steps-per-turn must be 1 to 10,000"),
        (["--workload", "idle-gaps", "--steps-per-turn", "10001"], "idle-gaps: --steps-per-turn must be 1 to 10,000"),
        (["--workload", "idle-gaps", "--turns", "99999999999"], "idle-gaps: --turns must be 1 to 10,000"),
        (["--workload", "thinking-tools", "--turns", "10001"], "thinking-tools: --turns must be 1 to 10,000"),
        (["--workload", "subagents", "--subagent-steps", "10001"], "subagents: --subagent-steps must be 1 to 10,000"),
        (["--workload", "subagents", "--main-steps", "10001"], "subagents: --main-steps must be 1 to 10,000"),
    ],
)
def test_a_huge_step_or_turn_count_is_refused_before_any_run(tmp_path, capsys, argv, message):
    # Before: a turn of more than 10,000 steps ran them all, then ended in a RuntimeError
    # traceback (exit 1); --turns 99999999999 ran on with no end.
    small = [word for word in SMALL if word not in ("--steps", "30")] if "--workload" in argv else SMALL
    status, _, err = run(capsys, *small, *argv, "--out", str(tmp_path / "o"))
    assert_one_line(status, err, message)
    assert not (tmp_path / "o").exists()


def test_record_refuses_a_huge_steps_before_running(tmp_path, capsys):
    status, _, err = run(capsys, "record", str(tmp_path / "x.jsonl"), "--steps", "10001")
    assert_one_line(status, err, "seed-coding: --steps must be 1 to 10,000, got 10001")
    assert not (tmp_path / "x.jsonl").exists()


def test_an_engine_config_files_key_keeps_its_name_beside_a_flag(tmp_path, capsys):
    config = tmp_path / "engine.toml"
    config.write_text("[checkpoint]\nretain_tokens = -5\n")
    status, _, err = run(capsys, *SMALL, "--engine-config", str(config), "--out", str(tmp_path / "o"))
    assert_one_line(status, err, f"{config}: checkpoint.retain_tokens must be 0 or more")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_standard_output_is_named(tmp_path):
    # Before: "prefixbench: error: No space left on device", naming nothing.
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "prefixbench", "sweep", "--windows", "32k", "--presets", "patched", "--steps", "30",
             "--quiet", "--out", str(tmp_path / "o")],
            stdout=full, stderr=subprocess.PIPE, text=True, check=False,
        )
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["prefixbench: error: standard output: No space left on device"], done.stderr
    assert (tmp_path / "o" / "runs.csv").is_file()  # what was computed is kept


@pytest.mark.parametrize("value", ["nan", "inf", "1e-300", "0"])
def test_chars_per_token_must_be_a_usable_ratio(tmp_path, capsys, value):
    path = capture_file(tmp_path, capture_line())
    status, _, err = run(capsys, "replay", "--input", "anthropic-capture", str(path), "--chars-per-token", value)
    assert_one_line(status, err, "--chars-per-token must be a number from 0.01 to 1000")


def test_a_huge_window_says_what_it_will_take():
    line = warn_window_memory((100_000_000,), available=8 * 10**9)
    assert line and "3.1 GB" in line and "it fits" in line
    line = warn_window_memory((100_000_000,), available=2 * 10**9)
    assert line and "more than this machine has free" in line
    assert warn_window_memory((512_000,), available=8 * 10**9) is None


def _out_cases(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    afile = tmp_path / "afile"
    afile.write_text("x")
    folder_report = tmp_path / "rep"
    (folder_report / "report.md").mkdir(parents=True)
    return {
        "a file": (afile, "is a file, not a folder"),
        "under a file": (afile / "sub", f"lies under the file {afile}"),
        "report.md a folder": (folder_report, "report.md is a folder"),
        "proc": (Path("/proc/x"), "virtual filesystem"),
        "root": (Path("/"), "filesystem root"),
    }


@pytest.mark.parametrize("case", ["a file", "under a file", "report.md a folder", "proc", "root"])
def test_bad_out_is_refused_before_any_run(tmp_path, capsys, monkeypatch, case):
    from prefixbench.workloads.runs import sweep as sweep_module

    out, message = _out_cases(tmp_path)[case]
    ran = []
    monkeypatch.setattr(sweep_module, "execute_planned", lambda *a: ran.append(a))
    status, _, err = run(capsys, *SMALL, "--out", str(out))
    assert_one_line(status, err, "--out", message)
    assert not ran


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_unwritable_out_is_refused(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert_one_line(*run(capsys, *SMALL, "--out", str(locked))[::2], "cannot write there")


def test_replay_of_another_agents_log_names_its_format(tmp_path, capsys):
    # A pi session given to replay (which reads request bodies): the line says what the file is
    # and what reads it, instead of only "missing field 'model'".
    log = tmp_path / "session.jsonl"
    log.write_text(
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}\n'
        '{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01Z",'
        '"message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1767225601000}}\n'
    )
    assert main(["replay", str(log)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the file is in the pi format" in err[0] and "prefixbench audit" in err[0], err


# --- a torn last line (a log still being written) ------------------------------------------

TORN_WORDS = "the last line breaks off with no newline (the agent still writing it?): not read"


def _torn_cases(tmp_path: Path) -> dict[str, tuple[list[str], str, str]]:
    """argv before the file, whole text, the last line cut short (no newline)."""
    second = {"model": "m", "messages": [USER, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "more"}]}
    chat = json.dumps(GOOD) + "\n" + json.dumps(second) + "\n"
    capture = capture_line() + "\n" + capture_line(sent=3.0, answered=4.0) + "\n"
    return {
        "replay": (["replay"], chat, json.dumps(second)[:40]),
        "replay json": (["replay", "--format", "json"], chat, json.dumps(second)[:-3]),
        "check --trace": (["check", "--trace"], chat, json.dumps(second)[:25] + '\\u00'),
        "replay anthropic-capture": (["replay", "--input", "anthropic-capture", "--format", "json"], capture, capture_line()[:70]),
    }


@pytest.mark.parametrize("case", ["replay", "replay json", "check --trace", "replay anthropic-capture"])
def test_a_torn_last_line_is_skipped_and_said_as_audit_does(tmp_path, capsys, case):
    """On main, replay and check --trace refused the log audit reads (FILE:LINE: invalid JSON)."""
    argv, whole, cut = _torn_cases(tmp_path)[case]
    path = tmp_path / "live.jsonl"
    path.write_text(whole)
    status, expected, err = run(capsys, *argv, str(path))
    assert status == 0 and err == "", err
    lines = whole.count("\n")
    path.write_text(whole + cut)
    status, out, err = run(capsys, *argv, str(path))
    assert status == 0, err
    assert out == expected  # the whole records, as if the torn line were not there yet
    assert err == f"prefixbench: warning: {path}:{lines + 1}: {TORN_WORDS}"
    # audit says the same of the same file (its own reading of the format)
    if case != "check --trace":
        status, _, err = run(capsys, "audit", str(path), "--quiet", "--format", "json")
        assert status == 0 and err == f"prefixbench: warning: {path}:{lines + 1}: {TORN_WORDS}", err
    # Cut anywhere but the last line: an error naming the file:line.
    path.write_text(whole.replace("\n", "\n" + cut + "\n", 1))
    status, _, err = run(capsys, *argv, str(path))
    assert_one_line(status, err, f"{path}:2: ")
    # A cut first line is no log being written: refused too, as audit does.
    path.write_text(cut)
    status, _, err = run(capsys, *argv, str(path))
    assert_one_line(status, err, f"{path}:1: ")


ZERO_WORDS = ("the file ends in zero bytes (NUL) after its last whole line: room the file system gave the file that "
              "no write filled (the machine stopped while the agent wrote it, or the file was copied then): not read")
ZERO_CUT_WORDS = ("a record cut short, then zero bytes (NUL) to the end of the file: room the file system gave the file "
                  "that no write filled (the machine stopped while the agent wrote it, or the file was copied then): "
                  "the partly written record is not read")
ZEROS_AFTER_RECORD_WORDS = ("the record on this line is read; zero bytes (NUL) follow it to the end of the file (its "
                            "newline never written): room the file system gave the file that no write filled (the "
                            "machine stopped while the agent wrote it, or the file was copied then): the zeros are not read")


@pytest.mark.parametrize("case", ["replay", "replay json", "check --trace", "replay anthropic-capture"])
def test_a_zero_filled_tail_is_skipped_and_said(tmp_path, capsys, case):
    """A file whose length ran past what was written to it ends in zero bytes: a Codex 0.139
    rollout of 2026-06 ends in 3,772 of them after its 133rd line. Before, every command refused
    the file ("binary data, not a text log", exit 2; audit left the whole file out)."""
    argv, whole, cut = _torn_cases(tmp_path)[case]
    path = tmp_path / "crashed.jsonl"
    path.write_text(whole)
    status, expected, err = run(capsys, *argv, str(path))
    assert status == 0 and err == "", err
    lines = whole.count("\n")
    # Zeros alone after the last whole line, and zeros after a line cut short: that line was part
    # of a record, which is said to be dropped (it was said to follow "its last whole line").
    for tail, words in ((b"\0" * 3_772, ZERO_WORDS), (cut.encode() + b"\0" * 40, ZERO_CUT_WORDS)):
        path.write_bytes(whole.encode() + tail)
        status, out, err = run(capsys, *argv, str(path))
        assert (status, out) == (0, expected), err
        assert err == f"prefixbench: warning: {path}:{lines + 1}: {words}"
        if case != "check --trace":
            status, _, err = run(capsys, "audit", str(path), "--quiet", "--format", "json")
            assert status == 0 and err == f"prefixbench: warning: {path}:{lines + 1}: {words}", err
    # Zeros with a line after them are bad input inside the log: refused with their FILE:LINE.
    path.write_bytes(whole.encode() + b"\0" * 10 + b"\n" + whole.encode())
    status, _, err = run(capsys, *argv, str(path))
    assert_one_line(status, err, f"{path}:{lines + 1}: ")
    # A file of zeros alone is no log: refused as before.
    path.write_bytes(b"\0" * 100)
    status, _, err = run(capsys, *argv, str(path))
    assert_one_line(status, err, f"{path}:1: ")


@pytest.mark.parametrize("records", ["one record", "all records"])
@pytest.mark.parametrize("case", ["replay", "replay json", "check --trace", "replay anthropic-capture"])
def test_a_whole_last_record_that_zeros_follow_is_read(tmp_path, capsys, case, records):
    """A last record that is whole but lacks its newline, zero bytes after it (the newline never
    written): read up to the zeros, as the same file without them is. The warning said of that
    line "after its last whole line ... not read" and audit counted it skipped (1, the clean
    copy 0); a file of that one record was refused (``binary data, not a text log``, exit 2)."""
    argv, whole, _ = _torn_cases(tmp_path)[case]
    if records == "one record":
        whole = whole.split("\n")[0] + "\n"
    path = tmp_path / "crashed.jsonl"
    path.write_text(whole)
    status, expected, err = run(capsys, *argv, str(path))
    assert status == 0 and err == "", err
    clean = None
    if case != "check --trace":
        status, clean, err = run(capsys, "audit", str(path), "--quiet", "--format", "json")
        assert status == 0 and err == "", err
    lines = whole.count("\n")
    path.write_bytes(whole.encode().removesuffix(b"\n") + b"\0" * 500)
    status, out, err = run(capsys, *argv, str(path))
    assert (status, out) == (0, expected), err
    assert err == f"prefixbench: warning: {path}:{lines}: {ZEROS_AFTER_RECORD_WORDS}"
    if clean is not None:
        status, zeros, err = run(capsys, "audit", str(path), "--quiet", "--format", "json")
        assert status == 0 and err == f"prefixbench: warning: {path}:{lines}: {ZEROS_AFTER_RECORD_WORDS}", err
        counts = [[(f["requests"], f["skipped"]) for f in json.loads(text)["files"]] for text in (clean, zeros)]
        assert counts[0] == counts[1] and counts[0][0][0] == lines  # the same requests, nothing skipped
        note = json.loads(zeros)["files"][0]["notes"][-1]
        assert note == f"line {lines}: {ZEROS_AFTER_RECORD_WORDS}" and "not read\"" not in note


@pytest.mark.parametrize("records", ["one record", "two records"])
@pytest.mark.parametrize("argv", [["replay"], ["check", "--trace"], ["audit", "--quiet"]])
def test_a_last_record_too_deep_to_parse_before_zeros_is_refused_for_its_depth(tmp_path, capsys, argv, records):
    """A last record nested past what the parser holds, zero bytes after it: refused as
    ``binary data, not a text log`` (the zeros blamed, exit 2); now with the words the same record
    gets with its newline (nested too deep, at its line)."""
    deep = '{"a": ' * 1_500 + "1" + "}" * 1_500
    before = json.dumps(GOOD) + "\n" if records == "two records" else ""
    line = before.count("\n") + 1
    path = tmp_path / "deep.jsonl"
    path.write_text(before + deep + "\n")
    status, _, expected = run(capsys, *argv, str(path))
    assert_one_line(status, expected, f"{path}:{line}: ", "nested too deep")
    path.write_bytes((before + deep).encode() + b"\0" * 100)
    status, _, err = run(capsys, *argv, str(path))
    assert (status, err) == (2, expected)


@pytest.mark.parametrize("argv", [["replay"], ["replay", "--format", "json"], ["check", "--trace"], ["audit", "--quiet"]])
def test_a_first_line_of_zeros_is_binary_data_in_every_command(tmp_path, capsys, argv):
    """A blank line, then zero bytes alone: ``audit`` said ``binary data, not a text log`` and
    ``replay`` ``invalid JSON (Expecting value at column 1)`` of the same line; one wording now."""
    path = tmp_path / "zeros.jsonl"
    path.write_bytes(b"\n" + b"\0" * 100)
    status, _, err = run(capsys, *argv, str(path))
    assert_one_line(status, err, f"{path}:2: binary data, not a text log")
    if argv[0] == "audit":
        return  # (audit tells a file with zeros inside its first bytes by them: binary file, at line 1)
    # Zeros inside a line (not after whole lines): the same words, at their line.
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + b'{"model": "m"\0}\n' + json.dumps(GOOD).encode() + b"\n")
    status, _, err = run(capsys, *argv, str(path))
    assert_one_line(status, err, f"{path}:2: binary data, not a text log")


FIXTURES = Path(__file__).resolve().parents[1] / "logs" / "fixtures"


def _audit_json(capsys, path: Path) -> tuple[int, list, str]:
    """audit's status, its files' (requests, skipped) and its stderr."""
    status, out, err = run(capsys, "audit", str(path), "--quiet", "--format", "json")
    files = [(f["requests"], f["skipped"]) for f in json.loads(out)["files"]] if status in (0, 1) else []
    return status, files, err


def _zeros_document_words(zeros: int, at: int) -> str:
    return (f"the JSON document is read whole, up to the zero bytes (NUL) that start on this line at byte {at}: {zeros:,} of "
            "them, to the end of the file: room the file system gave the file that no write filled (the machine stopped "
            "while the agent wrote it, or the file was copied then): the zeros are not read")


def _copied_document(tmp_path: Path, log: str) -> tuple[Path, Path]:
    """A fixture's JSON document copied into ``tmp_path``: (what to audit, the document's path),
    a Cline task copied whole (its ui_messages.json the document)."""
    source = FIXTURES / log
    if source.is_dir():
        shutil.copytree(source, tmp_path / "task")
        return tmp_path / "task", tmp_path / "task" / "ui_messages.json"
    shutil.copy(source, tmp_path / source.name)
    return tmp_path / source.name, tmp_path / source.name


@pytest.mark.parametrize("log", ["cline/claude-dev", "gemini-cli.json", "opencode.json", "swe-agent.json"])
def test_a_json_document_that_zeros_end_is_read_up_to_them_or_refused_where_cut(tmp_path, capsys, log):
    """A JSON document (a Cline task's ui_messages.json array, a Gemini CLI session, an
    ``opencode export``, a mini-swe-agent trajectory: one pretty-printed object each) that zero
    bytes end was refused (the file ends in zero bytes, exit 2), whole or not. Whole before the
    zeros, it is read now as the same file without them, with a warning (how many, where) as a
    JSON-lines log's zeros get; cut short before them, it is refused for that, at the byte."""
    target, path = _copied_document(tmp_path, log)
    status, clean, err = _audit_json(capsys, target)
    assert status == 0 and err == "", err
    data = path.read_bytes()
    lines = data.count(b"\n") + 1  # the line the zeros start on
    path.write_bytes(data + b"\0" * 3_000)
    status, files, err = _audit_json(capsys, target)
    assert (status, files) == (0, clean), err
    words = _zeros_document_words(3_000, len(data))
    assert err == f"prefixbench: warning: {path}:{lines}: {words}"
    status, out, _ = run(capsys, "audit", str(target), "--quiet", "--format", "json")
    assert json.loads(out)["files"][0]["notes"][-1] == f"line {lines}: {words}"
    # Cut short before the zeros (the machine stopped while the agent wrote it): refused for being cut.
    body = data.rstrip()
    cut = len(body) * 2 // 3
    path.write_bytes(body[:cut] + b"\0" * 3_000)
    status, _, err = run(capsys, "audit", str(target), "--quiet")
    line = body[:cut].count(b"\n") + 1
    assert_one_line(status, err, f"{path}:{line}: the JSON document is cut short at byte {cut}, "
                    "where zero bytes (NUL) run to the end of the file")
    # Zeros with text after them are binary data, as before.
    path.write_bytes(data + b"\0" * 3_000 + b" ")
    status, _, err = run(capsys, "audit", str(target), "--quiet")
    assert_one_line(status, err, "binary data, not a text log")


@pytest.mark.parametrize("argv", [("audit",), ("replay",), ("check", "--trace")])
def test_a_jsonl_log_whose_first_line_zeros_cut_short_says_so_of_the_line_in_every_command(tmp_path, capsys, argv):
    """A JSON-lines log whose first record is cut short where zero bytes run to its end: audit
    said "the JSON document is cut short" (a line, not a document), replay and check --trace
    "binary data, not a text log" of the same file. Every command says the line is cut, at the byte."""
    path = tmp_path / "cut.jsonl"
    record = json.dumps(GOOD).encode()
    path.write_bytes(record[:40] + b"\0" * 100)
    status, _, err = run(capsys, *argv, str(path))
    assert_one_line(status, err, f"{path}:1: the JSON on the file's first line is cut short at byte 40, where zero bytes (NUL) "
                    "run to the end of the file", "the part written is no whole JSON value")


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_utf16_document_that_zeros_end_counts_the_files_zero_bytes(tmp_path, capsys, encoding):
    """A UTF-16 document is read from its UTF-8 copy, where two zero bytes of the file are one: the
    warning said half the file's zeros ("50 of them" of 100), and an odd count of them was refused
    as "the file ends inside a UTF-16 character". The warning names the line (no byte) and counts
    the file's zeros, odd or even; a zero byte alone after the text is still a cut character."""
    text = (FIXTURES / "gemini-cli.json").read_text(encoding="utf-8").rstrip()
    data = (b"\xff\xfe" if encoding.endswith("le") else b"\xfe\xff") + text.encode(encoding)
    path = tmp_path / "session.json"
    path.write_bytes(data)
    status, clean, err = _audit_json(capsys, path)
    assert status == 0 and err == "", err
    line = text.count("\n") + 1
    for zeros in (100, 101, 3):
        path.write_bytes(data + b"\0" * zeros)
        status, files, err = _audit_json(capsys, path)
        assert (status, files) == (0, clean), err
        assert err.startswith(f"prefixbench: warning: {path}:{line}: the JSON document is read whole, up to the zero bytes "
                              f"(NUL) that start on this line: {zeros:,} of them, to the end of the file"), err
    path.write_bytes(data + b"\0")
    status, _, err = run(capsys, "audit", str(path), "--quiet")
    assert_one_line(status, err, f"{path}:{line}: the file ends inside a UTF-16 character")


@pytest.mark.parametrize("log", ["cline/claude-dev", "swe-agent.json"])
def test_a_one_line_json_document_cut_short_by_zeros_says_so(tmp_path, capsys, log):
    """A document written on one line (a Cline ui_messages.json written without newlines), cut
    short where zero bytes run to the file's end: refused as ``binary file, not a text log`` (or
    ``binary data``), the zeros blamed; now for being cut, at the byte. Whole, it is read."""
    target, path = _copied_document(tmp_path, log)
    data = json.dumps(json.loads(path.read_bytes())).encode()
    path.write_bytes(data)
    status, clean, err = _audit_json(capsys, target)
    assert status == 0 and err == "", err
    path.write_bytes(data + b"\0" * 100)
    status, files, err = _audit_json(capsys, target)
    assert (status, files) == (0, clean) and err.startswith(f"prefixbench: warning: {path}:1: "), err
    # (an object on one line reads as a JSON-lines log's first line would: said of the line)
    what = "the JSON document" if data.startswith(b"[") else "the JSON on the file's first line"
    for cut in (40, len(data) - 1):
        path.write_bytes(data[:cut] + b"\0" * 100)
        status, _, err = run(capsys, "audit", str(target), "--quiet")
        assert_one_line(status, err, f"{path}:1: {what} is cut short at byte {cut}, where zero bytes (NUL) run")


@pytest.mark.parametrize("side", ["api_conversation_history.json", "task_metadata.json"])
def test_a_file_a_cline_task_is_read_with_that_zeros_end_is_read_up_to_them(tmp_path, capsys, side):
    """A Cline task's api_conversation_history.json or task_metadata.json (read beside its
    ui_messages.json) that zero bytes end was refused (exit 2: the file ends in zero bytes, or
    binary data), whole or not; auditing the folder warned that the file was read whole, then
    refused it. Whole before the zeros it is read now, with one warning (the ui file's notes say
    it too), the same for both files: each is one JSON document (the metadata's, an object on one
    line, was said as a JSON-lines log's last record or tail); cut short before them, refused for that."""
    task = tmp_path / "task"
    shutil.copytree(FIXTURES / "cline" / "kilo-gateway", task)
    ui, path = task / "ui_messages.json", task / side
    status, clean, err = _audit_json(capsys, ui)
    assert status == 0 and err == "", err
    data = path.read_bytes().rstrip(b"\n")
    path.write_bytes(data + b"\0" * 3_000)
    words = _zeros_document_words(3_000, len(data))
    for target in (ui, task):
        status, files, err = _audit_json(capsys, target)
        # (the folder's audit leaves the side file to its ui_messages.json, as without the zeros)
        assert (status, files) == (0, clean), err
        assert err == f"prefixbench: warning: {path}:1: {words}"
    status, out, _ = run(capsys, "audit", str(ui), "--quiet", "--format", "json")
    assert json.loads(out)["files"][0]["notes"][-1] == f"{side}:1: {words}"
    # Zeros after the file's newline: read as well, said alike.
    path.write_bytes(data + b"\n" + b"\0" * 3_000)
    words = _zeros_document_words(3_000, len(data) + 1)
    for target in (ui, task):
        status, files, err = _audit_json(capsys, target)
        assert (status, files) == (0, clean) and err == f"prefixbench: warning: {path}:2: {words}", err
    path.write_bytes(data[: len(data) // 2] + b"\0" * 3_000)
    status, _, err = run(capsys, "audit", str(ui), "--quiet")
    what = "the JSON document" if side.startswith("api") else "the JSON on the file's first line"  # (the metadata: one line)
    assert_one_line(status, err, f"{path}:1: {what} is cut short at byte {len(data) // 2}, where zero bytes")


def test_a_cline_task_whose_three_files_zeros_end_reads_them_alike(tmp_path, capsys):
    """The kilo-gateway task with 4,096 zero bytes after each of its three files: its
    api_conversation_history.json and ui_messages.json were said as JSON documents read whole, its
    task_metadata.json as a JSON-lines log whose zero tail is not read (a skipped record, though
    none was); both side files were audited by themselves too (two rows of 0 requests, one skipping
    1). Now all three are said alike, nothing skipped, the folder's rows those of the task without zeros."""
    task = tmp_path / "task"
    shutil.copytree(FIXTURES / "cline" / "kilo-gateway", task)
    status, clean, err = _audit_json(capsys, task)
    assert status == 0 and err == "", err
    sizes = {}
    for path in sorted(task.iterdir()):
        sizes[path.name] = (path.read_bytes().count(b"\n") + 1, path.stat().st_size)
        path.write_bytes(path.read_bytes() + b"\0" * 4_096)
    status, files, err = _audit_json(capsys, task)
    assert (status, files) == (0, clean), err
    said = sorted(err.splitlines())
    assert said == sorted(f"prefixbench: warning: {task / name}:{line}: {_zeros_document_words(4_096, size)}"
                          for name, (line, size) in sizes.items()), err
    status, out, _ = run(capsys, "audit", str(task), "--quiet")
    assert status == 0 and "after its last whole line" not in out, out
    assert not [row for row in out.splitlines() if row.startswith(("api_conversation_history.json", "task_metadata.json"))], out


def test_audit_of_a_log_whose_only_call_is_torn_off_says_it_once(tmp_path, capsys):
    """Before, a Claude Code transcript cut inside its one assistant line printed the torn tail as
    a warning, then the error "nothing to audit (...: <the same words>)": two lines, one repeated."""
    user = {"type": "user", "sessionId": "s", "uuid": "u1", "parentUuid": None, "timestamp": "2025-09-03T00:00:00.000Z",
            "message": {"role": "user", "content": "hi"}}
    reply = {"type": "assistant", "sessionId": "s", "uuid": "a1", "parentUuid": "u1", "timestamp": "2025-09-03T00:00:02.000Z",
             "requestId": "r1", "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
                                            "usage": {"input_tokens": 3, "output_tokens": 9}}}
    path = tmp_path / "cut.jsonl"
    path.write_text(json.dumps(user) + "\n" + json.dumps(reply)[:60])
    status, _, err = run(capsys, "audit", str(path))
    assert_one_line(status, err, "nothing to audit", f"{path}:2: {TORN_WORDS}")


@pytest.mark.parametrize("argv", [["replay"], ["check", "--trace"], ["audit", "--quiet", "--format", "json"]])
def test_a_last_line_cut_inside_a_character_is_a_torn_tail(tmp_path, capsys, argv):
    """A writer's buffer ends between the bytes of a UTF-8 character as readily as between
    characters; on main such a last line was 'not UTF-8 text' (exit 2) in all three commands."""
    second = {"model": "m", "messages": [USER, {"role": "assistant", "content": "d\u00e9j\u00e0 \u2713"}, {"role": "user", "content": "more"}]}
    whole = (json.dumps(GOOD) + "\n").encode()
    line = json.dumps(second, ensure_ascii=False).encode()
    cut = line[: line.index("\u2713".encode()) + 2]  # two of the check mark's three bytes
    path = tmp_path / "live.jsonl"
    path.write_bytes(whole)
    status, expected, err = run(capsys, *argv, str(path))
    assert status in (0, 1) and err == "", err
    path.write_bytes(whole + cut)
    got, out, err = run(capsys, *argv, str(path))
    if argv[0] == "audit":  # its JSON lists the skipped line too
        out, expected = json.loads(out)["requests"], json.loads(expected)["requests"]
    assert (got, out) == (status, expected), err
    assert err == f"prefixbench: warning: {path}:2: {TORN_WORDS}"
    # The same bytes with a line after them are not UTF-8: refused with their FILE:LINE.
    path.write_bytes(whole + cut + b"\n" + whole)
    status, _, err = run(capsys, *argv, str(path))
    assert_one_line(status, err, f"{path}:2: ")


@pytest.mark.parametrize("argv", [["replay"], ["check", "--trace"], ["audit", "--quiet"]])
@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
def test_a_log_whose_only_line_is_cut_inside_a_character_says_the_file_ends_there(tmp_path, capsys, monkeypatch, argv, stdin):
    """A cut first line is refused (no log being written: a copy cut short), as one cut mid-JSON
    is; cut inside a character it was 'not UTF-8 text' (replay and check --trace: 'a binary or
    truncated file?'), now the line says where the file ends. Also read from standard input."""
    import io
    import sys

    line = json.dumps({"model": "m", "messages": [{"role": "user", "content": "d\u00e9j\u00e0 \u2713"}]}, ensure_ascii=False).encode()
    data = line[: line.index("\u2713".encode()) + 1]
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data)
    name = str(path)
    if stdin:
        stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", stream)
        name = "<stdin>"
    status, _, err = run(capsys, *argv, "-" if stdin else str(path))
    assert_one_line(status, err, f"{name}:1: the file ends inside a UTF-8 character")
    if argv[0] == "audit" and not stdin:  # a folder walk names it so too, and leaves it out
        folder = tmp_path / "walk"
        folder.mkdir()
        (folder / "cut.jsonl").write_bytes(data)
        status, _, err = run(capsys, "audit", "--quiet", str(folder))
        assert_one_line(status, err, f"{folder / 'cut.jsonl'}:1: the file ends inside a UTF-8 character")


def test_audit_refuses_a_bad_price_date_before_reading_any_log(tmp_path, capsys):
    # Before: the logs were read (a progress bar, seconds on a large folder) and their own errors
    # said first; the date was checked only when the first request was priced.
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    status, _, err = run(capsys, "audit", str(empty), "--price-as-of", "2026-13-01")
    assert_one_line(status, err, "--price-as-of '2026-13-01' is not YYYY-MM-DD")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["sweep", "--engines=", "--quiet"], "--engines: empty item in ''"),
        (["bench", "--strategies=", "--quiet"], "--strategies: empty item in ''"),
        (["check", "--engines="], "--engines: empty item in ''"),
        (["check", "--windows="], "--windows: empty item in ''"),
        (["check", "--trace", "t.jsonl", "--windows="], "--windows: empty item in ''"),
        (["audit", "a.jsonl", "--fail-on="], "--fail-on: empty item in ''"),
        (["audit", "a.jsonl", "--fail-on", "ttl-expired,,"], "--fail-on: empty item in 'ttl-expired,,'"),
    ],
)
def test_an_empty_list_is_refused_not_read_as_the_default(tmp_path, monkeypatch, capsys, argv, message):
    # Before: an empty value was taken as no value: the default engines, windows or strategies ran
    # (the whole bench), and audit --fail-on= gated nothing, as --windows= on sweep never did.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.jsonl").write_text(json.dumps(GOOD) + "\n")
    (tmp_path / "a.jsonl").write_text(json.dumps(GOOD) + "\n")
    out = ["--out", str(tmp_path / "o")] if argv[0] in ("sweep", "bench") else []
    status, _, err = run(capsys, *argv, *out)
    assert_one_line(status, err, message)
    assert not (tmp_path / "o").exists()


def test_audit_out_a_file_says_it_as_sweep_and_bench_do(tmp_path, capsys):
    # audit said "exists and is a file", sweep and bench "is a file, not a folder": one wording.
    from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    log = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    afile = tmp_path / "afile"
    afile.write_text("x")
    status, _, err = run(capsys, "audit", str(log), "--out", str(afile))
    assert_one_line(status, err, "--out", "is a file, not a folder")
