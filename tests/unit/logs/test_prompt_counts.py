"""OpenAI-shaped prompt counts that leave the cached part out (workloads/logs/endpoints.py and
the readers' subset_usage): a record whose cached tokens exceed its prompt count is read as
prompt count + cached, and decides its endpoint's (host's, else file's) other records; an
endpoint no record decides keeps the spec's inclusive reading. On the earlier code every such
record stopped the audit (exit 2, "cached (128) and written (0) tokens exceed ...")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import OPENAI, ZAI, gateway_at
from prefixbench.simulator.usage import PROMPT_EXCLUSIVE, PROMPT_EXCLUSIVE_BY_PEERS, Usage
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs import endpoints
from prefixbench.workloads.logs.formats.codex import _usage as codex_usage
from prefixbench.workloads.logs.trace import TraceRequest
from tests.unit.audit.fixtures import capture_line, write_jsonl

GATEWAY = "https://llm.example.net/v1/chat/completions"


def _chat(prompt: int, cached: int | None, completion: int, *, model: str = "glm-5.1", turn: int = 0, url: str = GATEWAY, sent: float = 1_780_000_000.0) -> dict:
    usage: dict = {"prompt_tokens": prompt, "completion_tokens": completion}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    body = {"model": model, "messages": [{"role": "system", "content": "You are terse."}, *[{"role": "user", "content": f"step {i}"} for i in range(turn + 1)]]}
    return capture_line(body, {"body": {"usage": usage}}, url=url, sent=sent + 10 * turn)


def test_readers_read_cached_above_the_count_as_a_count_without_it() -> None:
    chat = {"prompt_tokens": 40, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 128}}
    responses = {"input_tokens": 40, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 128}}
    want = Usage(cache_read=128, uncached=40, output=5, prompt_count=PROMPT_EXCLUSIVE)
    assert OPENAI.read_usage(chat, "w") == want and OPENAI.read_usage(responses, "w") == want
    assert ZAI.read_usage(chat, "w") == want  # the compatible reader (Kimi, Qwen, MiniMax, GLM)
    assert codex_usage({"input_tokens": 40, "cached_input_tokens": 128, "output_tokens": 5}, "w") == want
    # At or below the count: the spec's reading (the audit may read it otherwise: see below).
    assert OPENAI.read_usage({**chat, "prompt_tokens": 300}, "w") == Usage(128, 0, 0, 172, 5)
    # Written tokens above the count fit neither reading, and cached + written above it with the
    # cached part alone below does not tell which part the count leaves out: one line, as before.
    with pytest.raises(UserError, match=r"^w: cached \(128\) and written \(50\) tokens exceed input tokens \(40\)$"):
        OPENAI.read_usage({**responses, "input_tokens_details": {"cached_tokens": 128, "cache_write_tokens": 50}}, "w")
    with pytest.raises(UserError, match=r"^w: cached \(30\) and written \(20\) tokens exceed input tokens \(40\)$"):
        OPENAI.read_usage({**responses, "input_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 20}}, "w")


def test_one_record_above_its_count_decides_its_endpoint(tmp_path: Path) -> None:
    # One host, two files: a cold call (nothing cached: the same either way), one whose cached
    # tokens (128) exceed prompt_tokens (40): exclusive, and one (128 of 300) that fits either
    # reading: read exclusive too, as its host's other record says. Another host's call (256 of
    # 500, fits either) keeps the spec's reading: no record of that host decides it.
    write_jsonl(tmp_path / "a.jsonl", [_chat(100, 0, 10), _chat(40, 128, 5, turn=1)])
    write_jsonl(tmp_path / "b.jsonl", [_chat(300, 128, 7, turn=2)])
    write_jsonl(tmp_path / "c.jsonl", [_chat(500, 256, 3, model="gpt-4.1", url="https://api.openai.com/v1/chat/completions")])
    requests, _ = load_trace([tmp_path])
    got = {(Path(r.file).name, r.line): (r.usage.cache_read, r.usage.uncached, r.usage.output, r.usage.prompt_count) for r in requests}
    assert got == {
        ("a.jsonl", 1): (0, 100, 10, ""),
        ("a.jsonl", 2): (128, 40, 5, PROMPT_EXCLUSIVE),  # prompt 168 = 40 + 128
        ("b.jsonl", 1): (128, 300, 7, PROMPT_EXCLUSIVE_BY_PEERS),  # prompt 428 = 300 + 128
        ("c.jsonl", 1): (256, 244, 3, ""),  # prompt 500, as the spec says
    }
    assert {r.endpoint for r in requests} == {"llm.example.net/v1/chat/completions", "api.openai.com/v1/chat/completions"}
    result = run_audit([tmp_path])
    t = result.totals
    # Field by field, by hand: uncached 100 + 40 + 300 + 244, read 128 + 128 + 256, output 10 + 5 + 7 + 3.
    # No call reports a write count (chat completions): the writes are unknown (None), not 0.
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (4, 684, 512, None, 25)
    said = [n for n in result.notes if "excludes the cached tokens" in n]
    assert said == [
        "llm.example.net/v1/chat/completions: the OpenAI-shaped prompt count (prompt_tokens / input_tokens) excludes the cached tokens, against "
        "the spec (1 of 2 responses that report cached tokens report more than the prompt count, which only that reading "
        "fits): each is read as prompt count + cached tokens"
    ]


def test_without_a_host_the_file_and_provider_decide() -> None:
    # Logs that name no endpoint (a Codex rollout, a Cline task...) are decided per file and
    # provider; an additive provider's records are never changed.
    def req(file: str, provider: str, usage: Usage) -> TraceRequest:
        return TraceRequest(file, 1, "main", "main", 0, None, None, provider, "m", usage=usage)

    proof = Usage(cache_read=128, uncached=40, prompt_count=PROMPT_EXCLUSIVE)
    fits = Usage(cache_read=128, uncached=172)
    settled = endpoints.settle([
        req("a", "zai", proof), req("a", "zai", fits), req("a", "openai", fits), req("b", "zai", fits),
        req("a", "anthropic", proof), req("a", "anthropic", fits),  # may be Anthropic's own additive usage
    ])
    assert [(r.file, r.provider, r.usage.uncached, r.usage.prompt_count) for r in settled] == [
        ("a", "zai", 40, PROMPT_EXCLUSIVE), ("a", "zai", 300, PROMPT_EXCLUSIVE_BY_PEERS),
        ("a", "openai", 172, ""), ("b", "zai", 172, ""), ("a", "anthropic", 40, PROMPT_EXCLUSIVE), ("a", "anthropic", 172, ""),
    ]
    assert [n.split(": the")[0] for n in endpoints.notes(settled)] == ["a (anthropic)", "a (zai)"]


def test_audit_reads_it_and_refuses_the_impossible_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_jsonl(tmp_path / "cap.jsonl", [_chat(40, 128, 5)])
    assert main(["audit", str(log), "--quiet"]) == 0
    bad = _chat(40, 128, 5)
    bad["response"]["body"]["usage"]["prompt_tokens_details"]["cache_write_tokens"] = 41
    write_jsonl(log, [bad])
    capsys.readouterr()
    assert main(["audit", str(log), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"prefixbench: error: {log}:1: cached (128) and written (41) tokens exceed prompt_tokens (40)"]
    assert "Traceback" not in err


def test_charm_hyper_is_a_gateway_whose_calls_keep_no_answer(tmp_path: Path) -> None:
    # glm-5.1 through Charm's gateway keeps Z.AI's rules (step, prices) but not the answer after
    # the prompt that Z.AI's own endpoint keeps: the capture holds no reply for the body model.
    url = "https://hyper.charm.land/v1/chat/completions"
    assert gateway_at(url) == "Charm's Hyper" and gateway_at("https://api.z.ai/api/coding/paas/v4/chat/completions") is None
    reply = {"choices": [{"message": {"role": "assistant", "content": "done"}}]}
    lines = [_chat(100, 0, 10, url=url), _chat(40, 128, 5, url=url, turn=1)]
    direct = [_chat(100, 0, 10, url="https://api.z.ai/api/coding/paas/v4/chat/completions")]
    for line in (*lines, *direct):
        line["response"]["body"].update(reply)
    write_jsonl(tmp_path / "hyper.jsonl", lines)
    write_jsonl(tmp_path / "zai.jsonl", direct)
    requests, _ = load_trace([tmp_path])
    assert {(Path(r.file).name, r.provider, bool(r.reply)) for r in requests} == {("hyper.jsonl", "zai", False), ("zai.jsonl", "zai", True)}
    notes = run_audit([tmp_path]).notes
    assert any(n.startswith("2 call(s) through hyper.charm.land (Charm's Hyper), a gateway") for n in notes), notes


def test_cline_openai_compatible_handler_reads_above_tokens_in(tmp_path: Path) -> None:
    # Cline's OpenAI-compatible handler writes prompt_tokens as tokensIn. A server that leaves the
    # cached part out shows it where cacheReads exceed tokensIn (the earlier code cut the reads
    # down to tokensIn: 2,944 read as 200). The task's other call of that provider is read so too.
    def entry(ts: int, tokens_in: int, reads: int, out: int) -> dict:
        info = {"request": "r", "tokensIn": tokens_in, "tokensOut": out, "cacheWrites": 0, "cacheReads": reads, "cost": 0.001}
        return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(info),
                "modelInfo": {"providerId": "openai", "modelId": "glm-5.1", "mode": "act"}}

    task = tmp_path / "tasks" / "t1"
    task.mkdir(parents=True)
    start = {"ts": 1_780_000_000_000, "type": "say", "say": "task", "text": "go"}
    calls = [entry(1_780_000_001_000, 3000, 0, 10), entry(1_780_000_010_000, 200, 2944, 20), entry(1_780_000_020_000, 4000, 3200, 30)]
    (task / "ui_messages.json").write_text(json.dumps([start, *calls]), encoding="utf-8")
    requests, _ = load_trace([task / "ui_messages.json"])
    assert [(r.provider, r.usage.cache_read, r.usage.uncached, r.usage.prompt_count) for r in requests] == [
        ("zai", 0, 3000, ""), ("zai", 2944, 200, PROMPT_EXCLUSIVE), ("zai", 3200, 4000, PROMPT_EXCLUSIVE_BY_PEERS),
    ]
    notes = run_audit([task / "ui_messages.json"]).notes
    assert any(n.startswith(f"{task / 'ui_messages.json'} (zai): the OpenAI-shaped prompt count") and "(1 of 2 responses" in n for n in notes), notes


def test_a_lone_record_above_its_count_does_not_decide_a_file_whose_others_fit_the_spec() -> None:
    # ISO-Bench's gpt-4o Trae run of 2025-10-08 (vllm_core-0000): one response reports 46,720
    # cached of 23,429 input, the other 48 fit the spec's reading. That one is read as it only
    # can be; the others keep the spec's reading, and the note says what decided it.
    def req(usage: Usage) -> TraceRequest:
        return TraceRequest("t.json", 1, "main", "main", 0, None, None, "openai", "gpt-4o", usage=usage)

    proof = Usage(cache_read=46_720, uncached=23_429, prompt_count=PROMPT_EXCLUSIVE)
    fits = Usage(cache_read=2_048, uncached=1_000)
    settled = endpoints.settle([req(fits), req(proof), req(fits), req(fits)])
    assert [(r.usage.uncached, r.usage.prompt_count) for r in settled] == [
        (1_000, ""), (23_429, PROMPT_EXCLUSIVE), (1_000, ""), (1_000, "")]
    assert endpoints.notes(settled) == (
        "t.json (openai): 1 of 4 responses that report cached tokens report more than the prompt count "
        "(prompt_tokens / input_tokens), read as prompt count + cached tokens (the only reading they fit); "
        "the other 3 fit the spec's reading (the count includes the cached tokens) and are read so: "
        "a minority of records does not decide the endpoint's reading",)
    # Half or more decide it, as before (two of three here).
    settled = endpoints.settle([req(proof), req(proof), req(fits)])
    assert [r.usage.prompt_count for r in settled] == [PROMPT_EXCLUSIVE, PROMPT_EXCLUSIVE, PROMPT_EXCLUSIVE_BY_PEERS]


def test_exactly_half_the_records_above_their_count_decide_the_endpoint() -> None:
    # "Half or more" (endpoints.settle): one record that can only be exclusive against one that
    # fits either reading reads both exclusive, and the note names the one that decided it.
    def req(usage: Usage) -> TraceRequest:
        return TraceRequest("t.json", 1, "main", "main", 0, None, None, "openai", "gpt-4o", usage=usage)

    settled = endpoints.settle([req(Usage(cache_read=2_048, uncached=1_000)),
                                req(Usage(cache_read=46_720, uncached=23_429, prompt_count=PROMPT_EXCLUSIVE))])
    assert [(r.usage.uncached, r.usage.prompt_count) for r in settled] == [
        (3_048, PROMPT_EXCLUSIVE_BY_PEERS), (23_429, PROMPT_EXCLUSIVE)]
    assert endpoints.notes(settled)[0].startswith("t.json (openai): the OpenAI-shaped prompt count")
    assert "(1 of 2 responses that report cached tokens report more than the prompt count" in endpoints.notes(settled)[0]
