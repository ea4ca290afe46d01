"""Claude Code's billing header block (workloads/logs/billing_header.py): its cch changes on every
request; Anthropic's cache is assumed to ignore it (an option), third-party servers key on it.

The captures here are written from the documented shape (system[0] =
``x-anthropic-billing-header: cc_version=<v>.<3 hex>; cc_entrypoint=cli; cch=<5 hex>;``, then
Claude Code's identity and prompt blocks with breakpoints), not copied from any public file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Envelope, Request, user_text
from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.fixtures import capture_line, write_jsonl

CCH = ("3fa01", "b7c42", "0e9d5", "c1d2e")
HEADER = "x-anthropic-billing-header: cc_version=2.1.60.4ab; cc_entrypoint=cli; cch={};"


def _body(k: int, model: str) -> dict:
    """Claude Code's k-th main-lane request: the billing block with the k-th cch, the identity and
    the prompt (both marked), and 2k+1 messages, the last block marked."""
    messages = []
    for n in range(2 * k + 1):
        role = "user" if n % 2 == 0 else "assistant"
        messages.append({"role": role, "content": [{"type": "text", "text": f"turn {n} " + "lorem ipsum " * 300}]})
    messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return {
        "model": model,
        "max_tokens": 32000,
        "system": [
            {"type": "text", "text": HEADER.format(CCH[k])},
            {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude.", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "Help with software tasks. " * 500, "cache_control": {"type": "ephemeral"}},
        ],
        "tools": [{"name": "Read", "description": "read a file " * 40, "input_schema": {"type": "object"}}],
        "messages": messages,
    }


def _capture(tmp_path: Path, *, url: str = "https://api.anthropic.com/v1/messages", model: str = "claude-sonnet-4-5",
             reads: bool = True) -> Path:
    """Four requests 20 s apart. ``reads``: usage as a cache that ignores cch reports it (each
    request reads the whole previous prompt), else as one that keys on it (nothing read: the
    third-party servers of the issues)."""
    lines = []
    written = 0
    for k in range(4):
        prompt = 9000 + 1900 * k
        read, write = (written, prompt - written) if reads else (0, 0)
        usage = {"input_tokens": 3 if reads else prompt, "cache_creation_input_tokens": write,
                 "cache_read_input_tokens": read, "output_tokens": 50}
        lines.append(capture_line(_body(k, model), {"body": {"usage": usage}}, url=url, sent=1770000000.0 + 20 * k))
        written = read + write
    return write_jsonl(tmp_path / "cc.jsonl", lines)


def test_anthropic_reads_past_a_changed_cch_by_default(tmp_path: Path) -> None:
    # Fails on main: every request after the first was a system-changed miss at the cch.
    result = run_audit([_capture(tmp_path)])
    rows = sorted(result.rows, key=lambda row: row.line)
    assert all(row.cause != "system-changed" for row in rows)
    assert all(row.read_within for row in rows)  # main: predicted 0 read after the first request
    for before, after in zip(rows, rows[1:]):
        assert after.predicted_cache_read == before.predicted_cache_read + before.predicted_cache_write
        assert after.predicted_cache_read > 0
    (note,) = [n for n in result.notes if "billing header" in n]
    assert note.startswith("assumed: anthropic's prompt cache ignores the cch value") and "4 request(s)" in note
    assert "--billing-header anthropic=keyed" in note


def test_keyed_anthropic_predicts_no_read_past_the_header(tmp_path: Path) -> None:
    # Keyed, the model reads nothing past the block (the tools before it are below the minimum)
    # where the capture reports the whole previous prompt read: the evidence against keying.
    result = run_audit([_capture(tmp_path)], billing_header={"anthropic": "keyed"})
    rows = sorted(result.rows, key=lambda row: row.line)
    assert [row.predicted_cache_read for row in rows[1:]] == [0, 0, 0]
    assert not any(row.read_within for row in rows[1:])
    assert any("breaks this server's prefix cache (anthropic: 3 request(s)" in n for n in result.notes)


def test_third_party_server_keys_on_it_and_the_advice_names_the_switch(tmp_path: Path) -> None:
    path = _capture(tmp_path, url="https://api.z.ai/api/anthropic/v1/messages", model="glm-4.7", reads=False)
    result = run_audit([path])
    rows = sorted(result.rows, key=lambda row: row.line)
    assert {row.provider for row in rows} == {"zai"}
    assert [row.cause for row in rows[1:]] == ["system-changed"] * 3
    assert "Claude Code's billing header cch changed" in rows[1].detail
    (note,) = [n for n in result.notes if "billing header" in n]
    assert "breaks this server's prefix cache (zai: 3 request(s)" in note
    assert "CLAUDE_CODE_ATTRIBUTION_HEADER=0" in note and "2.1.181" in note
    # ...and a server known to strip it is an option.
    stripped = run_audit([path], billing_header={"zai": "ignored"})
    assert all(row.cause != "system-changed" for row in sorted(stripped.rows, key=lambda row: row.line)[1:])


def test_zeroing_keeps_the_length_and_touches_only_the_header() -> None:
    from prefixbench.workloads.logs.billing_header import billing_cch, without_cch

    envelope = Envelope("anthropic", "claude-sonnet-4-5")
    later = "notes: the placeholder is cch=12345; in the docs"
    body = Request(envelope, (user_text("hi"),), system_blocks=(HEADER.format("b7c42"), "You are Claude Code.", later))
    stable = without_cch(body)
    assert billing_cch(body) == "b7c42" and billing_cch(stable) == "00000"
    assert len(stable.system_blocks[0]) == len(body.system_blocks[0])
    assert stable.system_blocks[1:] == body.system_blocks[1:]  # a cch= in later text is left alone
    plain = Request(envelope, (user_text("hi"),), system_blocks=(later,))
    assert without_cch(plain) is plain and billing_cch(plain) is None
    # The string form of system (a relay's rewrite) carries it too.
    text = Request(envelope, (user_text("hi"),), system=HEADER.format("c1d2e") + "\nYou are Claude Code.")
    assert without_cch(text).system == HEADER.format("00000") + "\nYou are Claude Code."


@pytest.mark.parametrize("text", ["anthropic", "anthropic=maybe", "nobody=keyed", "zai=keyed,zai=ignored", "=keyed", "",
                                  "anthropic=keyed,"])
def test_bad_option_is_one_line(text: str) -> None:
    from prefixbench.workloads.logs.billing_header import parse_modes

    with pytest.raises(UserError, match=r"^--billing-header "):
        parse_modes(text)


def test_cli_option_and_bad_value(tmp_path: Path, capsys) -> None:
    path = _capture(tmp_path)
    assert main(["audit", "--quiet", "--billing-header", "anthropic=keyed", "--format", "json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "breaks this server's prefix cache (anthropic: 3 request(s)" in out
    # Said beside another option's note, not instead of it.
    assert main(["audit", "--quiet", "--read-step", "anthropic=1", "--format", "json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "assumed: anthropic's prompt cache ignores the cch value" in out and "as --read-step asked" in out
    assert main(["audit", "--quiet", "--billing-header", "anthropic=sometimes", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--billing-header" in err[0]


def test_the_option_on_a_log_without_the_block_says_it_changed_nothing(tmp_path: Path) -> None:
    """Before, --billing-header on a capture whose bodies carry no billing block (Claude Code
    before 2.1, another agent) said nothing, though --help promises it is said in the notes."""
    body = _body(0, "claude-sonnet-4-5")
    body["system"] = body["system"][1:]  # no x-anthropic-billing-header block
    usage = {"input_tokens": 9000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 50}
    path = write_jsonl(tmp_path / "old.jsonl", [capture_line(body, {"body": {"usage": usage}}, sent=1770000000.0)])
    result = run_audit([path], billing_header={"anthropic": "keyed"})
    (note,) = [n for n in result.notes if "--billing-header" in n]
    assert note.startswith("--billing-header anthropic=keyed: no request of anthropic in these logs carries") and "nothing changed" in note
    assert not [n for n in run_audit([path]).notes if "billing header" in n]  # not asked: not said


def test_replay_of_an_anthropic_capture_reads_past_the_header(tmp_path: Path) -> None:
    # Fails on main: the byte-level replay keyed on the cch and read nothing after the first call.
    from prefixbench.workloads.logs.anthropic_capture import read_capture
    from prefixbench.workloads.logs.capture_replay import replay_calls

    capture = read_capture(_capture(tmp_path))
    rows = replay_calls(capture)
    for before, after in zip(rows, rows[1:]):  # each reads all the previous one held
        assert after.predicted_cache_read == before.predicted_cache_read + before.predicted_cache_write > 0
    keyed = replay_calls(capture, billing_header="keyed")
    assert [row.predicted_cache_read for row in keyed] == [0, 0, 0, 0]
    assert "Claude Code's billing header cch changed" in keyed[1].divergence
