"""``audit --assume-model [FORMAT=]MODEL``: the model of the calls whose log names none (a Claude
Managed Agents event stream without a ``session.updated`` event, ``opencode run --format json``
output). On main these calls are model ``unknown``, unpriced, and the option does not exist
(argparse refuses it: exit 2 on every test here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prefixbench.reports.cli import main

T0 = "2026-08-02T09:00:"
OPENCODE_RUN = Path(__file__).parents[1] / "logs" / "fixtures" / "opencode" / "run.jsonl"


def _ev(kind: str, eid: str, sec: float, **fields) -> dict:
    return {"type": kind, "id": eid, "processed_at": f"{T0}{sec:06.3f}Z", **fields}


def _span(n: int, sec: float, inp: int, read: int, written: int, out: int) -> list[dict]:
    return [
        _ev("span.model_request_start", f"sevt_s{n}", sec),
        _ev("span.model_request_end", f"sevt_e{n}", sec + 2, model_request_start_id=f"sevt_s{n}", is_error=False,
            model_usage={"input_tokens": inp, "cache_read_input_tokens": read, "cache_creation_input_tokens": written,
                         "output_tokens": out}),
    ]


def _stream(path: Path) -> str:
    """Two calls on the agent's configured model (no event names it), then a session.updated
    naming claude-sonnet-4-5, applied from the next turn: a third call on that named model."""
    events = [
        _ev("session.status_running", "sevt_r", 0),
        _ev("user.message", "sevt_u1", 0.1, content=[{"type": "text", "text": "go"}]),
        *_span(1, 1, 3, 0, 5000, 100),
        *_span(2, 4, 2, 5000, 300, 50),
        _ev("session.updated", "sevt_up", 7, agent={"model": {"id": "claude-sonnet-4-5"}}),
        _ev("user.message", "sevt_u2", 8, content=[{"type": "text", "text": "more"}]),
        *_span(3, 9, 4, 5300, 200, 20),
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return str(path)


def _audit(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["audit", *argv, "--format", "json", "--quiet"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def _models(out: dict) -> dict[tuple[str, str], tuple[int, str | None]]:
    return {(m["provider"], m["model"]): (m["requests"], m["cost_usd"]) for m in out["models"]}


# By hand, per million tokens: claude-opus-4-5 input 5, read 0.50, 5 m write 6.25, output 25;
# claude-sonnet-4-5 input 3, read 0.30, 5 m write 3.75, output 15.
#   call 1 (opus):   3 x 5 + 5,000 x 6.25 + 100 x 25                  = 33,765 -> $0.033765
#   call 2 (opus):   2 x 5 + 5,000 x 0.50 + 300 x 6.25 + 50 x 25      =  5,635 -> $0.005635
#   call 3 (sonnet): 4 x 3 + 5,300 x 0.30 + 200 x 3.75 + 20 x 15      =  2,652 -> $0.002652
OPUS_USD = 0.0394
SONNET_USD = 0.002652


@pytest.mark.parametrize("extra", [(), ("--jobs", "2"), ("--what-if", "ttl-1h")])
def test_managed_agents_calls_naming_no_model_are_priced_with_the_assumed_model(tmp_path, capsys, extra) -> None:
    log = _stream(tmp_path / "events.jsonl")
    plain = _audit(capsys, log, *extra)
    assert _models(plain)[("anthropic", "claude-sonnet-4-5")] == (1, pytest.approx(SONNET_USD))
    assert _models(plain)[("anthropic", "unknown")][0] == 2
    assert plain["totals"]["unpriced_requests"] == 2
    assumed = _audit(capsys, log, "--assume-model", "claude-opus-4-5", *extra)
    assert _models(assumed) == {
        ("anthropic", "claude-opus-4-5"): (2, pytest.approx(OPUS_USD)),
        ("anthropic", "claude-sonnet-4-5"): (1, pytest.approx(SONNET_USD)),  # the model the log names, kept
    }
    assert [r["model"] for r in assumed["requests"]] == ["claude-opus-4-5", "claude-opus-4-5", "claude-sonnet-4-5"]
    assert [r["cost_usd"] for r in assumed["requests"]] == pytest.approx([0.033765, 0.005635, 0.002652])
    assert assumed["totals"]["unpriced_requests"] == 0
    assert assumed["totals"]["cost_usd"] == pytest.approx(OPUS_USD + SONNET_USD)
    assert ("assumed: 2 call(s) whose log names no model ran on claude-opus-4-5 (--assume-model claude-opus-4-5: "
            "2 managed-agents on anthropic); 1 call(s) whose log names their model kept it") in assumed["notes"]
    if extra and extra[0] == "--what-if":
        assert assumed["what_if"] and assumed["what_if"] != plain["what_if"]  # the fixes priced too


def test_the_reading_note_does_not_call_the_assumed_calls_unpriced(tmp_path, capsys) -> None:
    # Fails on main: the stream's note said "its calls not priced" beside the note pricing them.
    log = tmp_path / "events.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in [*_span(1, 1, 3, 0, 5000, 100), *_span(2, 4, 2, 5000, 300, 50)]))
    out = _audit(capsys, str(log), "--assume-model", "claude-opus-4-5")
    notes = " ".join([*out["notes"], *(n for f in out["files"] for n in f["notes"])])
    assert "no event names the model" in notes and "unpriced unless audit --assume-model names it" in notes
    assert "not priced" not in notes and out["totals"]["unpriced_requests"] == 0


def test_the_table_says_the_assumed_model_and_its_dollars(tmp_path, capsys) -> None:
    log = _stream(tmp_path / "events.jsonl")
    assert main(["audit", log, "--quiet", "--assume-model", "managed-agents=claude-opus-4-5"]) == 0
    table = capsys.readouterr().out
    assert "anthropic  claude-opus-4-5" in table and "$0.0394" in table
    assert "(--assume-model managed-agents=claude-opus-4-5: 2 managed-agents on anthropic)" in table


def test_a_call_whose_log_names_its_model_keeps_it(tmp_path, capsys) -> None:
    log = _stream(tmp_path / "events.jsonl")
    # The same model the log names later: only the two calls naming none take it.
    out = _audit(capsys, log, "--assume-model", "claude-sonnet-4-5")
    assert _models(out) == {("anthropic", "claude-sonnet-4-5"): (3, pytest.approx(SONNET_USD + (
        3 * 3 + 5000 * 3.75 + 100 * 15 + 2 * 3 + 5000 * 0.30 + 300 * 3.75 + 50 * 15) / 1e6))}
    # A format the option does not name is left as it is.
    other = _audit(capsys, log, "--assume-model", "opencode=gpt-5.5")
    assert ("anthropic", "unknown") in _models(other)
    assert "--assume-model opencode=gpt-5.5: no call of opencode in these logs lacks a model name, nothing changed" in other["notes"]


def test_opencode_run_output_takes_the_provider_the_model_names(capsys) -> None:
    plain = _audit(capsys, str(OPENCODE_RUN))
    assert {(m["provider"], m["model"]) for m in plain["models"]} == {("unknown", "unknown")}
    out = _audit(capsys, str(OPENCODE_RUN), "--assume-model", "opencode=claude-sonnet-4-5")
    assert {(m["provider"], m["model"]) for m in out["models"]} == {("anthropic", "claude-sonnet-4-5")}
    # By hand from the fixture's three steps (input 1,223, output 200, read 19,200, written 20,440):
    # 1,223 x 3 + 200 x 15 + 19,200 x 0.30 + 20,440 x 3.75 = 89,079 -> $0.089079.
    assert out["totals"]["cost_usd"] == pytest.approx(0.089079)
    gpt = _audit(capsys, str(OPENCODE_RUN), "--assume-model", "gpt-5.5")
    assert {(m["provider"], m["model"]) for m in gpt["models"]} == {("openai", "gpt-5.5")}
    # A format named wins over the bare model (every other format).
    both = _audit(capsys, str(OPENCODE_RUN), "--assume-model", "gpt-5.5, opencode = claude-sonnet-4-5")
    assert {(m["provider"], m["model"]) for m in both["models"]} == {("anthropic", "claude-sonnet-4-5")}
    assert "--assume-model gpt-5.5: no call of a format not named in these logs lacks a model name, nothing changed" in both["notes"]


@pytest.mark.parametrize(("value", "says"), [
    ("claude opus", "'claude opus' is not MODEL or FORMAT=MODEL"),
    ("aider=gpt-4o=x", "'aider=gpt-4o=x' is not MODEL or FORMAT=MODEL"),
    ("managed-agents=", "'managed-agents=' is not MODEL or FORMAT=MODEL"),
    ("claude-opus-4-5,", "'' is not MODEL or FORMAT=MODEL"),
    ("nosuch=claude-opus-4-5", "unknown format 'nosuch'"),
    ("claude-opus-4-5,claude-sonnet-4-5", "every format is named twice"),
    ("opencode=gpt-5.5,opencode=gpt-5.4", "opencode is named twice"),
    ("unknown", "'unknown' is what a log naming no model gives"),
    ("my-local-model", "no provider's rules and no price row name 'my-local-model'"),
    ("managed-agents=gpt-5.5", "managed-agents calls are anthropic's, gpt-5.5 is openai's"),
    ("gpt-5.5", "which are anthropic's, and gpt-5.5 is openai's (name a model per format: FORMAT=MODEL)"),
])
def test_a_bad_assumed_model_is_one_line_and_exit_2(tmp_path, capsys, value, says) -> None:
    log = _stream(tmp_path / "events.jsonl")
    assert main(["audit", log, "--quiet", "--assume-model", value]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("prefixbench: error: --assume-model ") and says in err[0], err
    assert captured.out == ""


def test_a_model_a_provider_names_without_a_price_row_is_taken_and_said_unpriced(tmp_path, capsys) -> None:
    log = _stream(tmp_path / "events.jsonl")
    out = _audit(capsys, log, "--assume-model", "claude-future-9")
    assert _models(out)[("anthropic", "claude-future-9")][0] == 2
    assert out["totals"]["unpriced_requests"] == 2
    assert any(n.startswith("assumed: 2 call(s) whose log names no model ran on claude-future-9") and
               "no price row for claude-future-9: its calls stay unpriced" in n for n in out["notes"])


def test_the_assumed_model_names_the_chain_head_and_model_changes(tmp_path, capsys) -> None:
    # Fails on main: the calls took the model but their chain head stayed "...:unknown" (named so in
    # the notes, and apart from the head of the calls naming that model), and the switch to the
    # model the log names later read "unknown -> claude-sonnet-4-5" where no model changed.
    from prefixbench.workloads.audit.assume_model import assume_models
    from prefixbench.workloads.audit.core import load_trace

    log = _stream(tmp_path / "events.jsonl")
    out = _audit(capsys, log, "--assume-model", "claude-sonnet-4-5")
    heads = [n for n in out["notes"] if n.startswith("unlogged head")]
    assert heads == [f"unlogged head managed-agents:{log}:main:claude-sonnet-4-5: size unknown (no lane start read anything)"]
    requests, _ = load_trace([Path(log)])
    same, _ = assume_models(requests, {"*": "claude-sonnet-4-5"})
    assert {r.prefix.head for r in same if r.prefix} == {f"managed-agents:{log}:main:claude-sonnet-4-5"}
    assert [e for r in same for e in r.events if e[0] == "model_change"] == []
    other, _ = assume_models(requests, {"*": "claude-opus-4-5"})
    assert [e for r in other for e in r.events if e[0] == "model_change"] == [("model_change", "claude-opus-4-5 -> claude-sonnet-4-5")]


def test_an_unknown_assumed_model_names_the_closest_priced_ones_not_all(tmp_path, capsys) -> None:
    """A slip (``claud-opus-4-5``) gets the closest priced names, not a 1,800-character list of every
    row of the price table."""
    log = _stream(tmp_path / "events.jsonl")
    assert main(["audit", log, "--quiet", "--assume-model", "claud-opus-4-5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and len(err) < 400, err
    assert "closest priced: claude-opus-4-5," in err and "simulator/data/prices.csv" in err, err


def test_an_unpriced_model_error_says_where_an_installed_price_table_is(tmp_path, capsys) -> None:
    # The error said "every priced model: simulator/data/prices.csv", a path of the source
    # checkout a wheel user cannot find: it names the path inside the installed package and the
    # command that prints it, and that command prints the table's real path.
    log = _stream(tmp_path / "events.jsonl")
    for option in ("--assume-model", "--model-alias"):
        value = "claud-opus-4-5" if option == "--assume-model" else "my-opus=claud-opus-4-5"
        assert main(["audit", log, "--quiet", option, value]) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith("every priced model: prefixbench/simulator/data/prices.csv of the installed package; "
                            "python -m prefixbench.simulator.pricing prints its full path)"), err
    shown = subprocess.run([sys.executable, "-m", "prefixbench.simulator.pricing"], capture_output=True, text=True,
                           check=True, cwd=tmp_path)
    path = Path(shown.stdout.strip())
    assert path.is_file() and path.name == "prices.csv" and path.parent.parent.name == "simulator"
    assert "claude-opus-4-5" in path.read_text(encoding="utf-8")


def test_a_model_named_in_capitals_is_the_model_the_log_names_in_lowercase(tmp_path, capsys) -> None:
    # The price look-up ignores case, so CLAUDE-SONNET-4-5 was accepted and kept as typed: the
    # assumed calls were another model than the call the log names claude-sonnet-4-5 (two rows of
    # the models table, two models to the cache). As --model-alias does, the model is lowercased.
    log = _stream(tmp_path / "events.jsonl")
    assumed = _audit(capsys, log, "--assume-model", "CLAUDE-SONNET-4-5")
    assert [r["model"] for r in assumed["requests"]] == ["claude-sonnet-4-5"] * 3
    assert [(m["model"], m["requests"]) for m in assumed["models"]] == [("claude-sonnet-4-5", 3)]
