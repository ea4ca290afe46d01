"""``audit --model-alias ALIAS=MODEL``: a gateway's or an agent's own name for a model (Cline's
``claude_4_5_opus``) priced and modelled as a model of the price table. Before it, such calls
were unpriced, ``--assume-model`` did not touch them (their log names a model), and the option
did not exist (argparse refused it: exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from tests.unit.audit.fixtures import anthropic_body, capture_line, write_jsonl

ALIAS = "claude_4_5_opus"


def _capture(path: Path) -> str:
    """Two Anthropic calls naming the alias: a first write of 5,000 tokens, then a read of it."""
    usages = [
        {"input_tokens": 3, "cache_creation_input_tokens": 5000, "cache_read_input_tokens": 0, "output_tokens": 100},
        {"input_tokens": 2, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 5000, "output_tokens": 50},
    ]
    lines = [
        capture_line(anthropic_body(ALIAS, messages=1 + 2 * i), {"body": {"type": "message", "model": ALIAS, "usage": usage}},
                     sent=1767261600.0 + 10 * i)
        for i, usage in enumerate(usages)
    ]
    return str(write_jsonl(path, lines))


def _audit(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["audit", *argv, "--format", "json", "--quiet"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("extra", [(), ("--jobs", "2"), ("--what-if", "ttl-1h")])
def test_an_alias_is_priced_and_modelled_as_the_model_it_names(tmp_path, capsys, extra) -> None:
    log = _capture(tmp_path / "capture.jsonl")
    plain = _audit(capsys, log, *extra)
    assert plain["totals"]["unpriced_requests"] == 2
    # The note on the unpriced model names the alias in the option that prices it (no model guessed).
    note = next(n for n in plain["notes"] if n.startswith(f"no price for {ALIAS}"))
    assert f"--model-alias {ALIAS}=MODEL prices it as MODEL" in note
    aliased = _audit(capsys, log, "--model-alias", f"{ALIAS}=claude-opus-4-5", *extra)
    # By hand, claude-opus-4-5 per million: input 5, read 0.50, 5 m write 6.25, output 25:
    #   3 x 5 + 5,000 x 6.25 + 100 x 25 = 33,765; 2 x 5 + 5,000 x 0.50 + 300 x 6.25 + 50 x 25 = 5,635
    assert [(r["model"], r["provider"]) for r in aliased["requests"]] == [("claude-opus-4-5", "anthropic")] * 2
    assert [r["cost_usd"] for r in aliased["requests"]] == pytest.approx([0.033765, 0.005635])
    assert aliased["totals"]["unpriced_requests"] == 0
    assert (f"assumed: 2 call(s) naming {ALIAS} priced and modelled as claude-opus-4-5 "
            f"(--model-alias {ALIAS}=claude-opus-4-5: 2 on anthropic)") in aliased["notes"]
    assert not any(n.startswith("no price for") for n in aliased["notes"])
    # --assume-model is for logs naming no model: it leaves the alias unpriced.
    assumed = _audit(capsys, log, "--assume-model", "claude-opus-4-5", *extra)
    assert assumed["totals"]["unpriced_requests"] == 2


def test_an_alias_no_call_names_is_said_to_change_nothing(tmp_path, capsys) -> None:
    out = _audit(capsys, _capture(tmp_path / "capture.jsonl"), "--model-alias", "opus_x=claude-opus-4-5")
    assert "--model-alias opus_x=claude-opus-4-5: no call in these logs names opus_x, nothing changed" in out["notes"]


@pytest.mark.parametrize(("value", "said"), [
    (f"{ALIAS}=claude-opus-9", "no price row names 'claude-opus-9' (closest priced: "),
    (ALIAS, f"{ALIAS!r} is not ALIAS=MODEL"),
    (f"{ALIAS}=claude-opus-4-5,{ALIAS}=claude-opus-4-1", f"{ALIAS} is named twice"),
    ("unknown=claude-opus-4-5", "--assume-model names the model of those calls"),
    ("claude-opus-4-5=claude-opus-4-5", "claude-opus-4-5 is mapped to itself"),
    (f"{ALIAS}=claude-opus-4-5=x", "is not ALIAS=MODEL"),
])
def test_a_bad_alias_is_one_line_and_exit_2(tmp_path, capsys, value, said) -> None:
    log = _capture(tmp_path / "capture.jsonl")
    assert main(["audit", log, "--model-alias", value, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"prefixbench: error: --model-alias {value}: ") and said in err and len(err.splitlines()) == 1


def test_a_model_named_in_capitals_is_the_same_model_as_the_calls_naming_it(tmp_path, capsys) -> None:
    """The price table's ids are lowercase and its look-up ignores case, so ``=CLAUDE-OPUS-4-5``
    was accepted; kept as typed, the aliased calls were another model than the lane's calls
    naming claude-opus-4-5 (two rows of the models table; to the replay's cache, keyed by the
    model's name, two models)."""
    usages = [
        {"input_tokens": 3, "cache_creation_input_tokens": 5000, "cache_read_input_tokens": 0, "output_tokens": 100},
        {"input_tokens": 2, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 5000, "output_tokens": 50},
    ]
    lines = [
        capture_line(anthropic_body(model, messages=1 + 2 * i), {"body": {"type": "message", "model": model, "usage": usage}},
                     sent=1767261600.0 + 10 * i)
        for i, (model, usage) in enumerate(zip((ALIAS, "claude-opus-4-5"), usages))
    ]
    log = str(write_jsonl(tmp_path / "capture.jsonl", lines))
    out = _audit(capsys, log, "--model-alias", f"{ALIAS}=CLAUDE-OPUS-4-5")
    assert [r["model"] for r in out["requests"]] == ["claude-opus-4-5"] * 2
    assert [(m["model"], m["requests"]) for m in out["models"]] == [("claude-opus-4-5", 2)]


def test_a_logged_name_the_option_cannot_take_is_not_suggested_for_it(tmp_path, capsys) -> None:
    """A log may name its model with a space or an '=' (a gateway's display name); ``--model-alias``
    cannot take such a name, so the unpriced note says so instead of suggesting a command that
    would be refused."""
    odd = "Claude Opus (gateway)=4"
    lines = [
        capture_line(anthropic_body(odd, messages=1), {"body": {"type": "message", "model": odd, "usage": {
            "input_tokens": 3, "cache_creation_input_tokens": 500, "cache_read_input_tokens": 0, "output_tokens": 10}}},
            sent=1767261600.0),
    ]
    out = _audit(capsys, str(write_jsonl(tmp_path / "capture.jsonl", lines)))
    note = next(n for n in out["notes"] if n.startswith("no price for"))
    assert "cannot be given to --model-alias (a space, comma or '=' in the name)" in note
    assert "=MODEL" not in note


def test_the_unpriced_note_gives_the_true_reason_a_name_cannot_be_aliased() -> None:
    """A name too long for the option, or with a control character, has no space, comma or '=':
    the note names what is wrong with it, not a reason it does not have."""
    from prefixbench.workloads.audit.core import _unpriced_note

    long_name = "m" * 121
    note = _unpriced_note([long_name, "a\tb", "c d"])
    assert f"{long_name!r} cannot be given to --model-alias (longer than 120 characters)" in note
    assert "'a\\tb', 'c d' cannot be given to --model-alias (a space, comma or '=' in the name)" in note
    control = _unpriced_note(["a\x01b"])
    assert "'a\\x01b' cannot be given to --model-alias (an unprintable character in the name)" in control


def _claude_code_spans_with(tmp_path: Path, key: str, value: str) -> Path:
    """The Claude Code llm_request spans fixture with every span's ``key`` attribute set to ``value``."""
    export = json.loads((Path(__file__).parents[1] / "logs" / "fixtures" / "otel_claude_code_traces.json").read_text())
    for span in export["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for attribute in span["attributes"]:
            if attribute["key"] == key:
                attribute["value"] = {"stringValue": value}
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(export))
    return path


def test_a_fast_mode_call_without_a_fast_price_is_not_offered_an_alias(tmp_path) -> None:
    """A call run in fast mode on a model the table holds no fast price for is missing as
    ``<model>-fast``, a name no call gives: ``--model-alias claude-sonnet-4-5-fast=MODEL`` would
    change nothing (before, the note suggested it). The note says which row is missing instead."""
    from prefixbench.workloads.audit.core import run_audit

    path = _claude_code_spans_with(tmp_path, "speed", "fast")
    note = next(n for n in run_audit([path]).notes if n.startswith("no price for"))
    assert "claude-sonnet-4-5-fast is the fast-mode row the table lacks for claude-sonnet-4-5" in note, note
    assert "=MODEL" not in note


def test_a_logged_model_named_like_a_fast_row_is_still_offered_an_alias(tmp_path) -> None:
    """A log that names a model ``claude-sonnet-4-5-fast`` itself (a gateway's name; the calls run
    at standard speed) is a name --model-alias prices: the note offers the alias and does not say
    the calls ran in fast mode. Before, any missing ``<priced model>-fast`` was taken for a
    fast-mode row the table lacks (a name no call gives), and the working alias was withheld."""
    from prefixbench.workloads.audit.core import run_audit

    path = _claude_code_spans_with(tmp_path, "model", "claude-sonnet-4-5-fast")
    note = next(n for n in run_audit([path]).notes if n.startswith("no price for"))
    assert "fast-mode row" not in note, note
    assert "--model-alias claude-sonnet-4-5-fast=MODEL" in note, note
