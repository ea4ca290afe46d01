"""``audit --assume-provider [FORMAT=]PROVIDER``: who served the calls whose log names no endpoint.

A local proxy's records of the llm-path kind keep no URL: the reader takes the provider from the
model the answer names (glm-4-7: Z.AI's rules, where Volcengine Ark served it and read 0). On main
that was said nowhere, and no option could correct it (argparse refused ``--assume-provider``:
exit 2, so every test here but the pure parsing ones fails there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.assume_provider import parse_assumed_providers
from tests.unit.audit.fixtures import anthropic_body, sse, write_jsonl
from tests.unit.logs.test_http_capture import _proxied


def _glm_call(n: int, read: int) -> dict:
    start = {"type": "message_start", "message": {"id": f"m{n}", "model": "glm-4-7", "usage": {
        "input_tokens": 2_000 + n, "output_tokens": 1, "cache_read_input_tokens": read}}}
    delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 50}}
    streamed = {"stream": True, "sse_lines": [line for line in sse(start, delta).splitlines() if line.strip()]}
    return _proxied(anthropic_body("claude-opus-4-5"), streamed, at=f"2026-02-21T08:1{n}:00+00:00")


def _log(tmp_path: Path) -> str:
    gemini = {"contents": [{"role": "user", "parts": [{"text": "plan it"}]}]}
    gemini_answer = {"candidates": [], "modelVersion": "gemini-3-pro-preview",
                     "usageMetadata": {"promptTokenCount": 5_000, "cachedContentTokenCount": 4_000, "candidatesTokenCount": 60}}
    records = [_glm_call(1, 0), _glm_call(2, 0), _proxied(gemini, gemini_answer, at="2026-02-21T08:19:00+00:00")]
    return str(write_jsonl(tmp_path / "trace.jsonl", records))


def _audit(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["audit", *argv, "--format", "json", "--quiet"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def test_a_provider_taken_from_the_model_name_is_said_to_be_an_assumption(tmp_path, capsys) -> None:
    out = _audit(capsys, _log(tmp_path))
    assert [r["provider"] for r in out["requests"]] == ["zai", "zai", "gemini"]
    # Gemini's own wire names its server: no assumption there.
    assert ("assumed: 2 http-capture call(s) name no endpoint that tells who served them: their provider was taken "
            "from the model's name (zai: 2; models glm-4-7); another server's cache behaves otherwise: name it with "
            "--assume-provider http-capture=PROVIDER") in out["notes"]


@pytest.mark.parametrize("value", ["unknown", "http-capture=unknown", "claude-trace=unknown"])
def test_the_assumed_provider_replaces_the_one_the_model_name_gave(tmp_path, capsys, value) -> None:
    out = _audit(capsys, _log(tmp_path), "--assume-provider", value)
    assert [r["provider"] for r in out["requests"]] == ["unknown", "unknown", "gemini"]
    assert any(n.startswith("assumed: 2 http-capture call(s)") and n.endswith("then set to unknown by --assume-provider")
               for n in out["notes"])
    heads = [n for n in out["notes"] if n.startswith("unlogged head") or "http:zai" in n]
    assert all("http:zai:" not in n for n in heads)


def test_a_provider_the_endpoint_names_is_never_replaced(tmp_path, capsys) -> None:
    line = {"request": {"url": "https://api.anthropic.com/v1/messages", "method": "POST", "timestamp": 1771661640.0,
                        "body": anthropic_body("claude-opus-4-5")},
            "response": {"status_code": 200, "timestamp": 1771661642.0, "body": {
                "type": "message", "model": "claude-opus-4-5", "content": [],
                "usage": {"input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 4_000, "output_tokens": 9}}}}
    path = write_jsonl(tmp_path / "capture.jsonl", [line])
    out = _audit(capsys, str(path), "--assume-provider", "zai")
    assert [r["provider"] for r in out["requests"]] == ["anthropic"]
    assert ("--assume-provider zai: no call in these logs took its provider from the model's name, nothing changed"
            in out["notes"])
    # A local proxy's URL names no provider but Anthropic's Messages path: glm-4-7's name decided
    # (Z.AI), and the option applies.
    line["request"]["url"] = "http://127.0.0.1:8082/v1/messages"
    line["request"]["body"] = anthropic_body("glm-4-7")
    path = write_jsonl(tmp_path / "local.jsonl", [line])
    assert [r["provider"] for r in _audit(capsys, str(path))["requests"]] == ["zai"]
    out = _audit(capsys, str(path), "--assume-provider", "http-capture=unknown")
    assert [r["provider"] for r in out["requests"]] == ["unknown"]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("ark", "unknown provider 'ark' (one of: anthropic, bedrock, deepseek, gemini, minimax, moonshot, openai, qwen, "
                "radix, unknown, vllm, xai, zai)"),
        ("nope=zai", "unknown format 'nope' (known: "),
        ("zai,unknown", "every format is named twice"),
        ("http-capture=", "'http-capture=' is not PROVIDER, FORMAT=PROVIDER or FORMAT:MODEL=PROVIDER"),
        ("", "'' is not PROVIDER, FORMAT=PROVIDER or FORMAT:MODEL=PROVIDER"),
        ("claude-code:=zai", "'claude-code:=zai' names no model after claude-code:"),
        ("nope:glm-4.7=zai", "unknown format 'nope' (known: "),
        ("claude-code:glm-4.7=zai,claude-code:glm-4.7=unknown", "claude-code:glm-4.7 is named twice"),
    ],
)
def test_a_bad_provider_is_one_line_and_exit_2(tmp_path, capsys, value, says) -> None:
    assert main(["audit", _log(tmp_path), "--assume-provider", value, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"--assume-provider {value}: " in err and says in err


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_value_parses_or_is_one_user_error(text: str) -> None:
    try:
        parsed = parse_assumed_providers(text)
    except UserError as exc:
        assert str(exc).startswith(f"--assume-provider {text}: ")  # one line as printed (visible() escapes)
    else:
        assert parsed and all(isinstance(v, str) for v in parsed.values())


def test_a_claude_code_call_of_another_providers_model_says_its_provider_is_assumed(tmp_path, capsys) -> None:
    # Claude Code pointed at a compatible endpoint (ANTHROPIC_BASE_URL, not in the transcript):
    # glm-4.7 is read with Z.AI's rules, which the note now calls an assumption (Volcengine Ark
    # serves glm-4-7 too); Anthropic's own models are the agent's own endpoint's, not assumed.
    log = _glm_then_sonnet(tmp_path)
    out = _audit(capsys, log)
    assert [r["provider"] for r in out["requests"]] == ["zai", "anthropic"]
    assert any(n.startswith("assumed: 1 claude-code call(s) name no endpoint that tells who served them: their provider "
                            "was taken from the model's name (zai: 1; models glm-4.7)") for n in out["notes"])
    fixed = _audit(capsys, log, "--assume-provider", "claude-code=unknown")
    assert [r["provider"] for r in fixed["requests"]] == ["unknown", "anthropic"]


def test_every_format_may_be_written_star_equals_and_the_help_says_so(tmp_path, capsys) -> None:
    # `--assume-provider '*=zai'` always meant what a bare `zai` means (every format), but no
    # --help and no page said so (the review found it by trying); --assume-model reads `*=` the
    # same way. Now both helps name the spelling, and a FORMAT named beside it wins for its calls.
    from prefixbench.workloads.audit.assume_model import parse_assumed_models

    assert parse_assumed_providers("*=zai") == parse_assumed_providers("zai") == {"*": "zai"}
    assert parse_assumed_providers("*=zai,http-capture=unknown") == {"*": "zai", "http-capture": "unknown"}
    assert parse_assumed_models("*=claude-opus-4-5") == parse_assumed_models("claude-opus-4-5")
    with pytest.raises(UserError, match="every format is named twice"):
        parse_assumed_providers("*=zai,unknown")
    out = _audit(capsys, _log(tmp_path), "--assume-provider", "*=zai,http-capture=unknown")
    assert [r["provider"] for r in out["requests"]] == ["unknown", "unknown", "gemini"]
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(or every format: bare or *=PROVIDER; a FORMAT named too wins for its calls)" in text
    assert "(or every format: bare or *=MODEL; a FORMAT named too wins for its calls)" in text


def test_assume_model_and_assume_provider_name_one_chain_head() -> None:
    # Two body-less captures of a local proxy (no provider in the URL): one call names
    # claude-opus-4-5 (head http:anthropic:claude-opus-4-5, its provider taken from the name),
    # one names no model (head http:unknown:unknown). --assume-model claude-opus-4-5 gave the
    # second its model and Anthropic, but its head became http:unknown:claude-opus-4-5: apart from
    # the first call's head, and named in the notes ("unlogged head http:unknown:...") for a
    # provider it no longer had; with --assume-provider zai too, the first head became
    # http:zai:claude-opus-4-5 and the second stayed http:unknown:claude-opus-4-5. Now the head
    # follows the provider and the model, and both calls share one head under either option.
    from msgspec.structs import replace

    from prefixbench.workloads.audit.assume_model import assume_models
    from prefixbench.workloads.audit.assume_provider import assume_providers
    from prefixbench.workloads.logs.trace import Prefix, TraceRequest

    def call(n: int, provider: str, model: str) -> TraceRequest:
        r = TraceRequest(file="cap.jsonl", line=n, lane="main", lane_kind="main", seq=n, sent_ms=n * 1_000, ready_ms=None,
                         provider=provider, model=model, prefix=Prefix(f"http:{provider}:{model}", f"cap#{n}"),
                         source_format="http-capture")
        return replace(r, provider_by_model=True)

    log = [call(1, "anthropic", "claude-opus-4-5"), call(2, "unknown", "unknown")]
    modelled, _ = assume_models(log, {"*": "claude-opus-4-5"})
    assert [(r.provider, r.prefix.head) for r in modelled] == [("anthropic", "http:anthropic:claude-opus-4-5")] * 2
    served, _ = assume_providers(modelled, {"*": "zai"})
    assert [(r.provider, r.prefix.head) for r in served] == [("zai", "http:zai:claude-opus-4-5")] * 2


def test_a_gateway_that_names_the_upstream_is_not_said_to_name_no_one(tmp_path, capsys) -> None:
    # An OpenRouter capture whose responses name DeepInfra read "name no endpoint that tells who
    # served them" beside "served by DeepInfra (the gateway names it)": the note now says who
    # served them and that their cache is modelled by the rules of the model's maker.
    from .fixtures import OPENROUTER_URL, capture_line, chat_usage, openrouter_turns

    first, second = openrouter_turns()
    records = [capture_line({"model": "z-ai/glm-4.6", "messages": messages},
                            {"body": {"id": f"g{n}", "provider": "DeepInfra", "model": "z-ai/glm-4.6", "usage": chat_usage(3210 + n, 0)}},
                            url=OPENROUTER_URL, sent=1761773000.0 + 10 * n)
               for n, messages in enumerate((first, second))]
    out = _audit(capsys, str(write_jsonl(tmp_path / "or.jsonl", records)))
    (note,) = [n for n in out["notes"] if n.startswith("assumed: ")]
    assert "name no endpoint that tells who served them" not in note
    assert note.startswith("assumed: 2 http-capture call(s) through a gateway that names the host that served them "
                           "(DeepInfra: 2) name no endpoint of that host's own: their provider, whose cache rules model "
                           "the host's, was taken from the model's name (zai: 2; models z-ai/glm-4.6)"), note


def test_a_model_key_that_changes_nothing_says_why(tmp_path, capsys) -> None:
    # A model the logs never call, and a model whose calls' provider was never assumed (Claude
    # Code's own Anthropic models), were one note alike ("no ... call took its provider from the
    # model's name"): now each says what it found. A no-op option stays a note, exit 0, as the
    # other --assume-* options' are.
    log = _glm_then_sonnet(tmp_path)
    out = _audit(capsys, log, "--assume-provider", "claude-code:foo=anthropic,claude-code:claude-sonnet-4-5-20250929=zai")
    assert [r["provider"] for r in out["requests"]] == ["zai", "anthropic"]
    assert ("--assume-provider claude-code:foo=anthropic: no call of model foo in the claude-code logs (their models: "
            "claude-sonnet-4-5-20250929, glm-4.7), nothing changed") in out["notes"]
    assert ("--assume-provider claude-code:claude-sonnet-4-5-20250929=zai: claude-sonnet-4-5-20250929's 1 claude-code "
            "call(s) took their provider (anthropic: 1) from their endpoint or the log's own evidence, not from the "
            "model's name, so it is not assumed: not changed") in out["notes"]
    assert main(["audit", log, "--assume-provider", "claude-code:foo=anthropic", "--quiet"]) == 0
    capsys.readouterr()
    # A format with no call in the logs says so.
    other = _audit(capsys, log, "--assume-provider", "http-capture=zai")
    assert "--assume-provider http-capture=zai: no http-capture call in these logs, nothing changed" in other["notes"]


def _glm_then_sonnet(tmp_path) -> str:
    """A Claude Code transcript of two calls: glm-4.7 (read with Z.AI's rules, assumed from its
    name), then Anthropic's claude-sonnet-4-5 (the agent's own endpoint's)."""
    from tests.unit.audit.fixtures import Transcript, cc_usage

    t = Transcript(version="2.1.17")
    t.user("scan the repo", "2026-05-08T14:51:20.000Z", root=True)
    t.assistant("req_1", "2026-05-08T14:51:28.000Z", [cc_usage(5, 0, 12_000, 40)], model="glm-4.7")
    t.user("and now?", "2026-05-08T14:53:00.000Z")
    t.assistant("req_2", "2026-05-08T14:53:05.000Z", [cc_usage(3, 1_000, 0, 9)], model="claude-sonnet-4-5-20250929")
    return str(write_jsonl(tmp_path / "s1.jsonl", t.lines))
