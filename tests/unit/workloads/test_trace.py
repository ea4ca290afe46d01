"""check --trace on recorded traffic, and the recorder that writes a kernel run in that format."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.reports.entry import main
from prefixbench.simulator.wire import Envelope, Message, Reasoning, Request, Text, ToolCall, ToolResult, ToolSchema
from prefixbench.workloads.logs.chat_completions import LineError, parse_request, parse_rewrites, request_body
from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.trace import read_trace, replay_trace, run_trace_specs


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """seed-coding at 32k recorded from the legacy and the patched kernel."""
    folder = tmp_path_factory.mktemp("traces")
    for preset in ("legacy", "patched"):
        assert main(["record", str(folder / f"{preset}.jsonl"), "--preset", preset, "--window", "32k"]) == 0
    return folder


def test_legacy_recording_fails_and_patched_passes_the_integrity_specs(recorded, capsys):
    capsys.readouterr()
    assert main(["check", "--trace", str(recorded / "legacy.jsonl")]) == 1
    legacy = capsys.readouterr().out
    assert "FAIL  summary-uncached-bounded [legacy.jsonl/lenient]: summary 1/3 (request #20) hit 0.0%" in legacy
    assert "FAIL  summary-envelope-routed [legacy.jsonl/lenient]: request #20: summary call sent effort 'high', routed 'max'" in legacy
    assert "PASS  no-silent-rewrite [legacy.jsonl/lenient]" in legacy
    # patched passes every integrity spec; the cost spec finds its prune pass at request #19,
    # one request before the checkpoint rewrites the whole prefix anyway (docs/check.md).
    assert main(["check", "--trace", str(recorded / "patched.jsonl")]) == 1
    patched = capsys.readouterr().out
    assert patched.strip().splitlines()[-1] == "4 passed, 1 skipped (vacuous: proves nothing), 1 failed: rewrites-pay-back"
    assert "FAIL  rewrites-pay-back [patched.jsonl/lenient]: 1 of 4 rewrites never paid back; first at request #19 (prune" in patched
    assert "SKIP  window-respected [patched.jsonl/lenient]: the log does not say the model's context window" in patched
    assert main(["check", "--trace", str(recorded / "patched.jsonl"), "--windows", "32k"]) == 1
    assert "PASS  window-respected @32k [patched.jsonl/lenient]" in capsys.readouterr().out


def test_specs_that_could_not_see_refused_requests_say_so(recorded, capsys):
    """Under deepseek-official the legacy recording has 63 of its 64 requests refused. Specs that
    read the cache saw one request: no-silent-rewrite does not pass on it, rewrites-pay-back does
    not claim the log has no rewrite (it has several), and window-respected says the refused
    prompts' length was never checked."""
    capsys.readouterr()
    assert main(["check", "--trace", str(recorded / "legacy.jsonl"), "--windows", "32k", "--profile", "deepseek-official"]) == 1
    lines = {line.split()[1]: line for line in capsys.readouterr().out.splitlines() if line[:4] in ("PASS", "FAIL", "SKIP")}
    assert "63 of 64 requests refused" in lines["strict-profile-accepts"]
    assert lines["no-silent-rewrite"].startswith("SKIP") and "63 of 64 requests refused" in lines["no-silent-rewrite"]
    payback = lines["rewrites-pay-back"]
    assert payback.startswith("SKIP") and "no durable rewrite" not in payback and "63 of 64 requests were refused" in payback
    assert "63 refused first for another reason" in lines["window-respected"]


def test_a_recorded_run_costs_what_the_run_cost(recorded):
    from prefixbench.workloads.scripted.registry import execute, make_workload

    run = execute(make_workload("seed-coding", 32_000), "patched")
    replayed = replay_trace(read_trace(recorded / "patched.jsonl"))
    assert [o.purpose for o in replayed] == [o.purpose for o in run.observations]
    assert [o.rewrites_since_previous for o in replayed] == [o.rewrites_since_previous for o in run.observations]
    assert [o.extends_previous_conversation for o in replayed] == [o.extends_previous_conversation for o in run.observations]
    # The format joins a message's text blocks into one string: a few tokens per checkpoint.
    uncached = sum(o.uncached_tokens for o in replayed)
    assert abs(uncached - sum(o.uncached_tokens for o in run.observations)) < 100


def test_dropping_the_declared_rewrites_is_a_silent_rewrite(recorded, tmp_path):
    lines = (recorded / "patched.jsonl").read_text().splitlines()
    stripped = [json.dumps({k: v for k, v in json.loads(line).items() if k != "rewrites"}) for line in lines]
    (tmp_path / "silent.jsonl").write_text("\n".join(stripped) + "\n")
    results = {r.spec: r for r in run_trace_specs(tmp_path / "silent.jsonl")}
    assert results["no-silent-rewrite"].verdict is Verdict.VIOLATED
    assert results["no-silent-rewrite"].figure.startswith("request #")


def test_a_log_of_two_sessions_judges_each_as_if_recorded_alone(recorded, tmp_path, capsys):
    """An agent records every request of a test run, usually several sessions: the second
    session's opening is no silent rewrite of the first, and each session gets the verdicts
    its own log gets, its requests named by their line in the whole log."""
    patched = (recorded / "patched.jsonl").read_text()
    legacy = (recorded / "legacy.jsonl").read_text()
    first = len(patched.splitlines())
    (tmp_path / "two.jsonl").write_text(patched + legacy)
    capsys.readouterr()
    assert main(["check", "--trace", str(tmp_path / "two.jsonl"), "--windows", "128k"]) == 1
    out = capsys.readouterr().out
    assert "rewrote cached history" not in out
    one = f"two.jsonl lane 1 ({first} requests from #0)/lenient"
    two = f"two.jsonl lane 2 ({first} requests from #{first})/lenient"
    assert f"PASS  no-silent-rewrite @128k [{one}]" in out and f"PASS  no-silent-rewrite @128k [{two}]" in out
    assert f"PASS  summary-uncached-bounded @128k [{one}]" in out
    assert f"FAIL  summary-uncached-bounded @128k [{two}]: summary 1/3 (request #{first + 20}) hit 0.0%" in out
    # The same 4 rewrites per session as each log alone, not thrown off by the other session.
    assert f"FAIL  rewrites-pay-back @128k [{two}]: 1 of 4 rewrites never paid back; first at request #{first + 19} (prune" in out
    alone = {r.spec: r for r in run_trace_specs(recorded / "legacy.jsonl", windows=(128_000,))}
    split = [r for r in run_trace_specs(tmp_path / "two.jsonl", windows=(128_000,)) if "lane 2" in r.engine]
    assert [r.verdict for r in split] == [alone[r.spec].verdict for r in split]


def test_a_single_session_log_has_one_conversation_and_a_restart_after_a_summary_call_is_none():
    from prefixbench.workloads.specs.trace import TraceEntry, conversations

    envelope = Envelope("mock", "mock")
    opening = Request(envelope, (Message("user", (Text("task"),)),))
    reply = Request(envelope, (*opening.messages, Message("assistant", (Text("ok"),)), Message("user", (Text("go"),))))
    summary = Request(envelope, reply.messages, purpose="compaction")
    restarted = Request(envelope, (Message("user", (Text("summary so far"),)),))
    entries = [TraceEntry(opening), TraceEntry(reply), TraceEntry(summary), TraceEntry(restarted), TraceEntry(opening), TraceEntry(reply)]
    assert conversations(entries) == [[0, 1, 2, 3], [4, 5]]
    # A declared rewrite back to the opening is the same conversation (judged as a rewrite).
    assert conversations([TraceEntry(opening), TraceEntry(reply), TraceEntry(opening, ("checkpoint",))]) == [[0, 1, 2]]
    # A second user message before any reply continues the opening.
    second = Request(envelope, (*opening.messages, Message("user", (Text("and tests"),))))
    assert conversations([TraceEntry(opening), TraceEntry(second), TraceEntry(reply)]) == [[0, 1, 2]]


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    """A 13-request seed-coding recording (no summary call), as its lines."""
    path = tmp_path_factory.mktemp("short") / "short.jsonl"
    assert main(["record", str(path), "--steps", "12", "--window", "128k"]) == 0
    return path.read_text().splitlines(keepends=True)


def _check(tmp_path, capsys, name, lines, window="128k"):
    (tmp_path / name).write_text("".join(lines))
    capsys.readouterr()
    code = main(["check", "--trace", str(tmp_path / name), "--windows", window])
    return code, capsys.readouterr().out


def test_a_retried_opening_request_stays_in_its_conversation(short, tmp_path, capsys):
    """An agent that resends its first request (a timeout, a retry) records it twice: one
    conversation, printed as a log of one (it was split into a one-request session)."""
    code, retried = _check(tmp_path, capsys, "retry.jsonl", [short[0], *short])
    assert code == 0
    assert "[retry.jsonl/lenient]" in retried and "lane" not in retried
    assert "PASS  no-silent-rewrite @128k [retry.jsonl/lenient]: 14 conversation requests, every break explained" in retried


def test_two_interleaved_recordings_are_judged_each_on_its_own(short, tmp_path, capsys):
    """Two sessions of the same agent sent at once: their lines alternate, and each request
    continues its own session's latest, not the line before (the second session's requests
    were judged as silent rewrites of the first's)."""
    other = short[:9]
    lines = [*short[:4], other[0]]
    for mine, theirs in zip(short[4:], other[1:]):
        lines += [mine, theirs]
    lines += short[4 + len(other) - 1 :]
    code, out = _check(tmp_path, capsys, "inter.jsonl", lines)
    assert code == 0, out
    assert "PASS  no-silent-rewrite @128k [inter.jsonl lane 1 (13 requests from #0)/lenient]" in out
    assert "PASS  no-silent-rewrite @128k [inter.jsonl lane 2 (9 requests from #4)/lenient]" in out
    assert "rewrote cached history" not in out


def test_subagents_are_conversations_of_their_own_and_the_main_agent_one(tmp_path, capsys):
    """A subagents recording: the main agent's requests around its subagents' stay one
    conversation (its last request was judged in a subagent's session, a silent rewrite), and
    each subagent is judged alone."""
    path = tmp_path / "sub.jsonl"
    assert main(["record", str(path), "--workload", "subagents", "--window", "32k"]) == 0
    lines = path.read_text().splitlines(keepends=True)
    code, out = _check(tmp_path, capsys, "sub.jsonl", lines, "32k")
    assert code == 0, out
    assert "rewrote cached history" not in out
    assert "PASS  no-silent-rewrite @32k [sub.jsonl lane 1 (6 requests from #0)/lenient]" in out
    for lane, first in ((2, 5), (3, 6), (4, 7), (5, 8)):
        assert f"PASS  no-silent-rewrite @32k [sub.jsonl lane {lane} (7 requests from #{first})/lenient]" in out
    assert "lane 6" not in out


def test_strict_profile_on_a_recorded_thinking_session(tmp_path, capsys):
    for engine in ("user-tail", "checkpoint"):
        for preset in ("legacy", "patched"):
            argv = ["record", str(tmp_path / f"{engine}-{preset}.jsonl"), "--workload", "thinking-tools", "--engine", engine,
                    "--preset", preset, "--profile", "deepseek-relay", "--turns", "2", "--steps-per-turn", "30"]
            assert main(argv) == 0
    capsys.readouterr()
    # user-tail before ADR 0256 backfills "" for a relay, which refuses it; after, it accepts every request
    # (user-tail's summary calls are text, never a prefix replay, so they miss on every preset).
    assert main(["check", "--trace", str(tmp_path / "user-tail-legacy.jsonl"), "--profile", "deepseek-relay"]) == 1
    assert "FAIL  strict-profile-accepts [user-tail-legacy.jsonl/deepseek-relay]: " in capsys.readouterr().out
    assert main(["check", "--trace", str(tmp_path / "user-tail-patched.jsonl"), "--profile", "deepseek-relay"]) == 1
    assert "PASS  strict-profile-accepts [user-tail-patched.jsonl/deepseek-relay]" in capsys.readouterr().out
    assert main(["check", "--trace", str(tmp_path / "checkpoint-patched.jsonl"), "--profile", "deepseek-relay"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "6 passed, 1 skipped (vacuous: proves nothing), 0 failed"
    # Here the routed effort is the adapter's default (high), so even legacy's summary call stays in the family.
    assert main(["check", "--trace", str(tmp_path / "checkpoint-legacy.jsonl"), "--profile", "deepseek-relay"]) == 0


def test_a_log_without_summary_calls_gets_the_summary_specs_as_vacuous(tmp_path):
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    (tmp_path / "t.jsonl").write_text(json.dumps(body) + "\n")
    verdicts = {r.spec: r.verdict for r in run_trace_specs(tmp_path / "t.jsonl")}
    assert verdicts == {
        "no-silent-rewrite": Verdict.PASS, "summary-uncached-bounded": Verdict.VACUOUS, "summary-envelope-routed": Verdict.VACUOUS,
        "tool-pairs-intact": Verdict.PASS, "window-respected": Verdict.VACUOUS, "rewrites-pay-back": Verdict.VACUOUS,
    }


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"model": "m", "messages": [{"role": "user", "content": "hi"}], "rewrites": "checkpoint"}', "t.jsonl:1: field 'rewrites' must be a list"),
        ('{"model": "m"}', "t.jsonl:1: missing field 'messages'"),
        ("{", "t.jsonl:1: invalid JSON"),
    ],
)
def test_a_bad_trace_is_one_line_exit_2(tmp_path, capsys, line, message):
    (tmp_path / "t.jsonl").write_text(line + "\n")
    assert main(["check", "--trace", str(tmp_path / "t.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5), lambda c: st.lists(c, max_size=3), max_leaves=6))
def test_rewrites_parse_or_raise_line_error(value):
    try:
        parsed = parse_rewrites({"rewrites": value})
    except LineError:
        return
    assert isinstance(parsed, tuple) and all(isinstance(k, str) and k for k in parsed)


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@st.composite
def _requests(draw):
    messages = [Message("user", (Text(draw(_text)),))]
    for n in range(draw(st.integers(0, 3))):
        blocks = []
        if draw(st.booleans()):
            blocks.append(Reasoning(draw(_text), draw(st.sampled_from(("reasoning_content", "reasoning")))))
        if (text := draw(_text)):
            blocks.append(Text(text))
        blocks.append(ToolCall(f"c{n}", "read", draw(st.sampled_from(("{}", '{"i":1}')))))
        messages.append(Message("assistant", tuple(blocks)))
        messages.append(Message("tool", (ToolResult(f"c{n}", (Text(draw(_text)),)),)))
    envelope = Envelope(draw(st.sampled_from(("openai", "deepseek"))), "m", draw(st.sampled_from((None, "high"))),
                        draw(st.sampled_from((None, 0.5))), draw(st.sampled_from((None, ("END",)))))
    tools = (ToolSchema.make("read", "Read.", {"type": "object"}),) if draw(st.booleans()) else ()
    return Request(envelope, tuple(messages), draw(_text), tools, draw(st.sampled_from((None, 64))),
                   draw(st.sampled_from(("conversation", "compaction"))))


@settings(max_examples=40, deadline=None)
@given(_requests(), st.lists(st.sampled_from(("checkpoint", "prune")), max_size=2))
def test_request_body_round_trips(request, rewrites):
    body = json.loads(json.dumps(request_body(request, tuple(rewrites))))
    assert parse_request(body) == request
    assert parse_rewrites(body) == tuple(rewrites)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--window", "0"], "--window: window must be a positive"),
        (["--engine", "ranges"], "workload 'seed-coding' has no engine 'ranges'"),
        (["--engine", "a", "--engine", "b"], "--engine: record runs one engine, got 2 (a, b)"),
    ],
)
def test_record_errors_are_one_line_exit_2(tmp_path, capsys, argv, message):
    assert main(["record", str(tmp_path / "x.jsonl"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err
    assert not (tmp_path / "x.jsonl").exists()


def test_a_pass_on_some_refused_requests_says_how_many_it_judged():
    from prefixbench.workloads.specs.engine import EngineCase, run_case
    from prefixbench.workloads.specs.observed import judge_no_silent_rewrite

    run = run_case("no-compaction", EngineCase(32_000, "seed-coding", "lenient"))
    verdict, figure = judge_no_silent_rewrite(run.observations)
    assert verdict.name == "PASS" and figure.endswith("judged on the 23 of 61 requests the provider accepted (38 refused, never cached)")


@pytest.mark.parametrize("argv", [["check", "--trace"], ["replay"]])
def test_an_agent_log_given_as_a_request_log_names_its_format(argv, capsys):
    """A pi session is not a request log: check --trace said only "missing field 'model'"; both
    commands name the file and line, the format found, and what reads it."""
    from pathlib import Path

    pi = Path(__file__).parents[1] / "logs" / "fixtures" / "pi.jsonl"
    assert main([*argv, str(pi)]) == 2
    err = capsys.readouterr().err.strip()
    command = " ".join(argv)
    assert err.count("\n") == 0 and f"pi.jsonl:1: " in err
    assert f"(the file is in the pi format: {command} does not read it, prefixbench audit does)" in err


@pytest.mark.parametrize("argv", [["check", "--trace"], ["replay"]])
@pytest.mark.parametrize("result", ["sweep-json", "runs-csv", "audit-json"])
def test_a_prefixbench_result_given_as_a_request_log_is_named_as_one(argv, result, tmp_path, capsys):
    """``replay base.json`` (a sweep --format json, valid JSON over several lines) said
    "base.json:1: invalid JSON (Expecting value at column 2)": it names what the file is and
    what reads it."""
    run = {"workload": "seed-coding", "window": 32000, "engine": "checkpoint", "preset": "legacy", "profile": "lenient",
           "cache": "byte-exact", "seed": 0, "session_uncached_tokens": 100, "session_hit_ratio": 0.5}
    kind = "audit" if result == "audit-json" else "sweep"
    path = tmp_path / ("runs.csv" if result == "runs-csv" else "base.json")
    if result == "runs-csv":
        path.write_text(",".join(run) + "\n" + ",".join(str(v) for v in run.values()) + "\n")
    elif result == "sweep-json":
        path.write_text(json.dumps([run], indent=2))
    else:
        from pathlib import Path

        assert main(["audit", str(Path(__file__).parents[1] / "logs" / "fixtures" / "pi.jsonl"), "--quiet", "--format", "json"]) == 0
        path.write_text(capsys.readouterr().out)
    from prefixbench.workloads.runs.compare import read_result

    assert read_result(path).kind == kind  # a result compare reads, or the test proves nothing
    assert main([*argv, str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"prefixbench: error: {path}: a prefixbench {kind} result, not a request log: {' '.join(argv)} does not read it, prefixbench compare does"


@pytest.mark.parametrize("argv", [["check", "--trace"], ["replay"]])
def test_an_agent_database_given_as_a_request_log_is_named_without_the_utf8_error(argv, tmp_path, capsys):
    """Found by a user's walk: replay of Zed's threads.db said "threads.db:1: not UTF-8 text (byte
    0xf8 ...; a binary or truncated file?)" before naming the format: the file was whole."""
    import sqlite3

    path = tmp_path / "threads.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT, updated_at TEXT, data_type TEXT, data BLOB)")
    db.execute("INSERT INTO threads VALUES ('t', 's', '2025-07-01', 'json', ?)", (b'{"version": "0.2.0"}' + bytes([0xF8]) * 8,))
    db.commit()
    db.close()
    assert main([*argv, str(path)]) == 2
    err = capsys.readouterr().err.strip()
    command = " ".join(argv)
    assert err == (f"prefixbench: error: {path}: a database in the zed format (Zed threads), not a request log: "
                   f"{command} does not read it, prefixbench audit does"), err


@pytest.mark.parametrize("fixture, hint", [
    ("recorded", "(the file is in the chat-completions format: replay reads it without --input anthropic-capture)"),
    ("pi", "(the file is in the pi format: replay does not read it, prefixbench audit does)"),
])
def test_a_log_given_to_replay_as_a_capture_names_its_format(recorded, capsys, fixture, hint):
    """replay --input anthropic-capture said only "legacy.jsonl:1: no request body" of a request
    log or an agent's log, naming neither the format it is in nor what reads it (fails on main)."""
    from pathlib import Path

    path = recorded / "legacy.jsonl" if fixture == "recorded" else Path(__file__).parents[1] / "logs" / "fixtures" / "pi.jsonl"
    assert main(["replay", "--input", "anthropic-capture", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{path.name}:1: " in err and err.endswith(hint), err


def test_check_out_says_where_it_wrote(recorded, tmp_path, capsys):
    """As sweep and audit do: one stderr line naming the folder and its files."""
    out = tmp_path / "out"
    assert main(["check", "--trace", str(recorded / "patched.jsonl"), "--out", str(out)]) == 1
    assert capsys.readouterr().err.strip() == f"wrote {out}/: check.json, report.html"
    assert sorted(p.name for p in out.iterdir()) == ["check.json", "report.html"]


def test_check_trace_out_keeps_each_profile_apart_and_names_no_preset(recorded, tmp_path, capsys):
    """trial54: report.html's grid keyed a cell by spec, log and window, so deepseek-official's
    verdicts (judged last) were drawn for lenient's too (rewrites-pay-back FAIL shown as SKIP); and
    check.json and the page said preset 'patched' of a log, which --preset does not apply to."""
    import json

    out = tmp_path / "out"
    argv = ["check", "--trace", str(recorded / "legacy.jsonl"), "--windows", "32k", "--profile", "lenient,deepseek-official"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 1
    capsys.readouterr()
    data = json.loads((out / "check.json").read_text())
    assert data["preset"] is None and {r["preset"] for r in data["results"]} == {"lenient", "deepseek-official"}
    page = (out / "report.html").read_text()
    assert page.count('<rect class="fail"') == sum(r["status"] == "FAIL" for r in data["results"])
    assert page.count('<rect class="skip"') == sum(r["status"] == "SKIP" for r in data["results"])
    assert "rewrites-pay-back [legacy.jsonl/lenient]" in page and "<title>prefixbench check: a recorded log (--trace)</title>" in page


def test_record_refuses_an_existing_file_before_the_run(tmp_path, capsys, monkeypatch):
    """On main the log was written over silently."""
    import prefixbench.workloads.scripted.record as record_module

    log = tmp_path / "mine.jsonl"
    log.write_text("a log I wrote by hand\n")
    ran = []
    monkeypatch.setattr(record_module, "record_run", lambda *args, **kwargs: ran.append(args))
    assert main(["record", str(log), "--steps", "8"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"prefixbench: error: {log}: already exists; record --force replaces it", err
    assert log.read_text() == "a log I wrote by hand\n" and not ran
    dangling = tmp_path / "link.jsonl"
    dangling.symlink_to(tmp_path / "gone.jsonl")
    assert main(["record", str(dangling), "--steps", "8"]) == 2
    assert "already exists" in capsys.readouterr().err and not (tmp_path / "gone.jsonl").exists()
    assert main(["record", str(tmp_path), "--steps", "8"]) == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: {tmp_path}: is a folder; name a file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "mine.jsonl"]


def test_record_force_replaces_the_file_whole_or_not_at_all(tmp_path, capsys, monkeypatch):
    import os

    import prefixbench.workloads.scripted.record as record_module

    log = tmp_path / "run.jsonl"
    log.write_text("old\n")
    log.chmod(0o640)
    assert main(["record", str(log), "--steps", "8", "--force"]) == 0
    assert "wrote" in capsys.readouterr().err
    lines = log.read_text().splitlines()
    assert len(lines) > 8 and all(json.loads(line)["messages"] for line in lines)
    assert log.stat().st_mode & 0o777 == 0o640 and [p.name for p in tmp_path.iterdir()] == ["run.jsonl"]
    recorded = log.read_bytes()

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(record_module.os, "fsync", full_disk)
    assert main(["record", str(log), "--steps", "9", "--force"]) == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: {log}: cannot write (No space left on device)"
    assert log.read_bytes() == recorded and [p.name for p in tmp_path.iterdir()] == ["run.jsonl"]
    assert os.access(log, os.R_OK)


def test_a_log_made_while_record_ran_is_not_written_over(tmp_path):
    from prefixbench.simulator.errors import UserError
    from prefixbench.workloads.scripted.record import record_run, write_recorded

    run, requests = record_run("seed-coding", 32_000, "patched", None, "lenient", {"steps": 8})
    log = tmp_path / "run.jsonl"
    log.write_text("someone else's\n")
    with pytest.raises(UserError, match="already exists; record --force replaces it"):
        write_recorded(log, run, requests)
    assert log.read_text() == "someone else's\n"
    assert write_recorded(log, run, requests, replace=True) == len(requests) == len(log.read_text().splitlines())


def test_ctrl_c_while_record_writes_leaves_no_partial_file(tmp_path, capsys, monkeypatch):
    """On main an interrupt mid-write left a partial new log (which the next record then refused)
    or, with --force, a hidden temporary file as large as the log beside the old one."""
    import builtins

    import prefixbench.workloads.scripted.record as record_module

    class Interrupted:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, data):
            self.handle.write(data[: len(data) // 2])
            raise KeyboardInterrupt

    monkeypatch.setattr(record_module, "open", lambda *a, **k: Interrupted(builtins.open(*a, **k)), raising=False)
    log = tmp_path / "run.jsonl"
    assert main(["record", str(log), "--steps", "8"]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()

    log.write_text("old\n")

    def interrupted_fsync(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(record_module.os, "fsync", interrupted_fsync)
    assert main(["record", str(log), "--steps", "8", "--force"]) == 130
    assert log.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["run.jsonl"]


def test_record_help_does_not_call_engine_repeatable(capsys):
    """On main record's --help said --engine was repeatable, and record refused a second one."""
    for command, repeatable in (("record", False), ("sweep", True), ("check", True), ("bench", True)):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        engine_help = text[text.index("--engine MODULE:FACTORY a user's") :].split(" --", 1)[0]
        assert ("; repeatable" in engine_help) is repeatable, (command, engine_help)


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_record_refuses_a_log_it_cannot_write_before_the_run(tmp_path, capsys, monkeypatch, force):
    """On main a missing folder (or a file where the folder should be) was found after the run,
    its time spent: a 512k run took 3 s to say 'cannot write (No such file or directory)'."""
    import prefixbench.workloads.scripted.record as record_module

    ran = []
    monkeypatch.setattr(record_module, "record_run", lambda *args, **kwargs: ran.append(args))
    (tmp_path / "file").write_text("x\n")
    for log, why in ((tmp_path / "gone" / "run.jsonl", f"no folder {tmp_path / 'gone'}"),
                     (tmp_path / "file" / "run.jsonl", f"{tmp_path / 'file'} is not a folder")):
        assert main(["record", str(log), "--steps", "8", *force]) == 2
        assert capsys.readouterr().err.strip() == f"prefixbench: error: {log}: cannot write ({why})"
    assert not ran and sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_record_force_never_replaces_a_pipe_or_device_by_a_file(tmp_path, capsys, monkeypatch):
    """On main --force renamed its log over whatever FILE was: a named pipe became a regular file
    (and /dev/null would, run as root)."""
    import os

    import prefixbench.workloads.scripted.record as record_module

    ran = []
    monkeypatch.setattr(record_module, "record_run", lambda *args, **kwargs: ran.append(args))
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    link = tmp_path / "link.jsonl"
    link.symlink_to(pipe)
    for name in (pipe, link):
        assert main(["record", str(name), "--steps", "3", "--force"]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"prefixbench: error: {name}: is not a regular file (a device, pipe or socket); record writes a log file", err
    assert not ran and (pipe.lstat().st_mode & 0o170000) == 0o010000  # still a pipe
    monkeypatch.undo()
    run, requests = record_module.record_run("seed-coding", 32_000, "patched", None, "lenient", {"steps": 3})
    from prefixbench.simulator.errors import UserError

    with pytest.raises(UserError, match="is not a regular file"):
        record_module.write_recorded(pipe, run, requests, replace=True)  # one made while the run went
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "pipe"]


def test_check_engines_unknown_lists_the_installed_engines_it_takes(capsys):
    """check --engines takes an installed engine (its --help lists them); the refusal of an unknown
    one listed only the three built-in engines (fails on main)."""
    assert main(["check", "--engines", "nope", "--windows", "32k"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("prefixbench: error: --engines: no specs for nope (known: checkpoint, user-tail, ranges; installed: ")
    assert "sliding-window" in err and err.count("\n") == 0


@pytest.mark.parametrize("packer", ["gzip", "bz2", "lzma"])
@pytest.mark.parametrize("argv", [["replay"], ["replay", "--input", "anthropic-capture"], ["check", "--windows", "32k", "--trace"]])
def test_a_compressed_request_log_is_named_compressed(recorded, tmp_path, capsys, packer, argv):
    """audit reads a .jsonl.gz as it is; replay and check --trace, given one, said "legacy.jsonl.gz:1:
    not UTF-8 text (byte 0x8b at column 2; a binary or truncated file?)", as if it were damaged
    (the walk: a user gzips a log, audit reads it, replay does not). Now one line names the
    compression and how to decompress it."""
    import importlib

    module = importlib.import_module(packer)
    kind, tool, suffix = {"gzip": ("gzip", "gunzip", ".gz"), "bz2": ("bzip2", "bunzip2", ".bz2"),
                          "lzma": ("xz", "unxz", ".xz")}[packer]
    path = tmp_path / f"legacy.jsonl{suffix}"
    path.write_bytes(module.compress((recorded / "legacy.jsonl").read_bytes()))
    assert main([*argv, str(path)]) == 2
    err = capsys.readouterr().err.strip()
    # (replay --input anthropic-capture adds the format the decompressed file is in, as for a plain one)
    assert err.count("\n") == 0 and err.startswith(
        f"prefixbench: error: {path}: {kind}-compressed: this command reads a plain JSON-lines file; decompress "
        f"it first with {tool} (prefixbench audit reads it as it is)"), err


@pytest.mark.parametrize("argv", [["replay"], ["check", "--windows", "32k", "--trace"]])
def test_a_zstd_request_log_is_named_compressed(tmp_path, capsys, argv):
    # The gzip, bzip2 and xz logs were named; a zstd one (audit names it) still said "not UTF-8
    # text (byte 0xb5 at column 2; a binary or truncated file?)" (review).
    # Since audit reads zstd too, the line says so, as for the other three (it left that out).
    path = tmp_path / "legacy.jsonl.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd\x04\x00\x51\x00\x00{}\n")
    assert main([*argv, str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {path}: zstd-compressed: this command reads a plain JSON-lines file; decompress it first with zstd -d "
        "(prefixbench audit reads it as it is)")


def test_record_says_how_many_requests_its_profile_refused(tmp_path, capsys):
    """The log holds every request as sent, the refused ones too; replay without the same
    --profile replays them as accepted, so the line that says what was written names them, and
    the two commands that tell them apart."""
    argv = ["record", str(tmp_path / "r.jsonl"), "--workload", "thinking-tools", "--engine", "ranges",
            "--preset", "legacy", "--profile", "deepseek-relay", "--window", "32k"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert err.strip() == (f"wrote {tmp_path / 'r.jsonl'}: 171 requests (ranges/legacy, thinking-tools at 32,000 tokens); "
                           "deepseek-relay refused 63 of them (HTTP 400, never cached): check --trace --profile deepseek-relay and "
                           "replay --profile deepseek-relay name them")
    assert main(["record", str(tmp_path / "p.jsonl"), "--window", "32k"]) == 0
    assert "refused" not in capsys.readouterr().err


def test_record_to_a_pipe_or_device_without_force_names_what_it_is(tmp_path, capsys, monkeypatch):
    """On integ53 `record /dev/null` said "already exists; record --force replaces it", advice
    that --force then refused: the device is named as what it is, with or without --force."""
    import os

    import prefixbench.workloads.scripted.record as record_module

    ran = []
    monkeypatch.setattr(record_module, "record_run", lambda *args, **kwargs: ran.append(args))
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for name in (pipe, "/dev/null"):
        assert main(["record", str(name), "--steps", "3"]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"prefixbench: error: {name}: is not a regular file (a device, pipe or socket); record writes a log file", err
    assert not ran
