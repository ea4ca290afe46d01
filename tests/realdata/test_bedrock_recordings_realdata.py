"""Real Bedrock answers, read where they live: the HTTP recordings OpenInference's Bedrock
instrumentation tests replay (github.com/Arize-ai/openinference,
``js/packages/openinference-instrumentation-bedrock/test/recordings/``; nock recordings of real
calls, a binary answer kept as hex), from a local git copy of that repository
(``PREFIXBENCH_OPENINFERENCE_REPO``, default the workplace's mirror). They are never copied into
this project; the test skips without them.

Each recorded event stream is made into capture lines the way captures keep one (claude-trace's
and prefixbench proxy's text, where the framing bytes that are not UTF-8 turn to U+FFFD, and
base64 of the bytes), and read by ``http-capture``.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.bedrock_wire import decode_frames

REPO = Path(os.environ.get("PREFIXBENCH_OPENINFERENCE_REPO", "/work/.mirror/Arize-ai+openinference/repo"))
FOLDER = "js/packages/openinference-instrumentation-bedrock/test/recordings"
#: recording: (operation, uncached input, output), as the stream's own last record says.
STREAMS = {
    "should-handle-basic-converse-stream-responses.json": ("converse-stream", 13, 35),
    "should-handle-invoke-model-with-response-stream.json": ("invoke-with-response-stream", 12, 100),
    "should-handle-amazon-nova-streaming.json": ("invoke-with-response-stream", 13, 114),
    "should-handle-amazon-nova-models-with-streaming.json": ("converse-stream", 5, 100),
}


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    git_dir = REPO / ".git" if (REPO / ".git").is_dir() else REPO
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False)


def _recording(name: str) -> list[dict]:
    if shutil.which("git") is None or not REPO.is_dir():
        pytest.skip(f"no git copy of openinference at {REPO}")
    shown = _git("show", f"HEAD:{FOLDER}/{name}")
    if shown.returncode != 0:
        pytest.skip(f"{name} not in {REPO}")
    return json.loads(shown.stdout)


def _lines(recording: list[dict]) -> dict[str, list[dict]]:
    """Capture lines of the recording's binary answers, in both forms."""
    out: dict[str, list[dict]] = {"text": [], "base64": []}
    for k, call in enumerate(recording):
        if not (call.get("responseIsBinary") and isinstance(call.get("response"), str)):
            continue
        data = bytes.fromhex(call["response"])
        request = {"timestamp": 1755567453.0 + k, "method": "POST", "url": call["scope"] + call["path"], "body": call.get("body")}
        for form, kept in (("text", data.decode("utf-8", "replace")), ("base64", base64.b64encode(data).decode())):
            out[form].append({"request": request, "response": {"status_code": call["status"], "body_raw": kept}})
    return out


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_recorded_streams_read_alike_as_text_and_as_bytes(name: str, tmp_path: Path) -> None:
    operation, uncached, output = STREAMS[name]
    lines = _lines(_recording(name))
    for form, kept in lines.items():
        path = tmp_path / f"{form}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in kept), encoding="utf-8")
        (request,), (summary,) = load_trace([path])
        assert summary.skipped == ()
        assert kept[0]["request"]["url"].endswith(operation)
        assert (request.usage.uncached, request.usage.cache_read, request.usage.cache_write, request.usage.output) == (uncached, 0, 0, output)
    assert "\ufffd" in lines["text"][0]["response"]["body_raw"]  # the text form really lost bytes


def test_every_recorded_stream_checks_frame_by_frame() -> None:
    listed = _git("ls-tree", "--name-only", f"HEAD:{FOLDER}")
    if shutil.which("git") is None or listed.returncode != 0:
        pytest.skip(f"no git copy of openinference at {REPO}")
    streams = frames = 0
    for name in listed.stdout.decode().split():
        for call in _recording(name):
            if isinstance(call, dict) and call.get("responseIsBinary") and isinstance(call.get("response"), str):
                streams += 1
                frames += len(decode_frames(bytes.fromhex(call["response"])))
    assert streams >= 17 and frames >= 895  # at 1fe497f1d: 17 streams, 895 frames, every CRC right


def test_every_recorded_converse_call_replays_its_body(tmp_path: Path) -> None:
    """The recorded Converse / ConverseStream request bodies (Claude, Nova, Llama, Mistral,
    Cohere, Jamba, Titan; text, images, tools, tool use, system prompts) become requests whose
    system blocks, tools and messages are the body's, none refused."""
    listed = _git("ls-tree", "--name-only", f"HEAD:{FOLDER}")
    if shutil.which("git") is None or listed.returncode != 0:
        pytest.skip(f"no git copy of openinference at {REPO}")
    calls = 0
    for n, name in enumerate(listed.stdout.decode().split()):
        recorded = [call for call in _recording(name) if isinstance(call, dict) and call.get("status") == 200
                    and str(call.get("path", "")).endswith(("/converse", "/converse-stream"))]
        if not recorded:
            continue
        lines = []
        for k, call in enumerate(recorded):
            response = call["response"]
            binary = call.get("responseIsBinary")
            kept = {"body_raw": base64.b64encode(bytes.fromhex(response)).decode()} if binary else {"body": response}
            lines.append({"request": {"timestamp": 1755567453.0 + k, "method": "POST", "url": call["scope"] + call["path"], "body": call["body"]},
                          "response": {"status_code": 200, **kept}})
        path = tmp_path / f"{n}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        requests, (summary,) = load_trace([path])
        # A recorded answer without usage (an empty one) is skipped, and said; no body is refused.
        assert all(why == "no usage in the response" for _, why in summary.skipped), name
        served = [call for line_no, call in enumerate(recorded, 1) if line_no not in dict(summary.skipped)]
        assert len(requests) == len(served), name
        for request, call in zip(requests, served):
            body = call["body"]
            assert request.body is not None and request.provider == "bedrock", name
            assert len(request.body.messages) == len(body["messages"]), name
            assert len(request.body.system_blocks) == sum("text" in block for block in body.get("system", [])), name
            assert len(request.body.tools) == sum("toolSpec" in tool for tool in body.get("toolConfig", {}).get("tools", [])), name
            calls += 1
    assert calls >= 28  # at 1fe497f1d: 30 served Converse calls, 2 of them answered without usage


PYDANTIC_AI = Path(os.environ.get("PREFIXBENCH_PYDANTIC_AI_REPO", "/work/.mirror/pydantic+pydantic-ai/repo"))
PYDANTIC_AI_COMMIT = "4fda38988f2939fa6ea9cdefcf120693e10ef491"
#: The cassettes whose Bedrock calls use the prompt cache: path: calls.
CACHE_CASSETTES = {
    "tests/models/bedrock/cassettes/test_cache/test_bedrock_single_tool_choice_preserves_cache[anthropic].yaml": 4,
    "tests/models/bedrock/cassettes/test_cache/test_bedrock_single_tool_choice_preserves_cache[nova].yaml": 4,
    "tests/models/cassettes/test_anthropic/test_anthropic_cache_bedrock_real_api.yaml": 2,
    "tests/models/cassettes/test_bedrock/test_bedrock_cache_messages_with_document_as_last_content.yaml": 2,
    "tests/models/cassettes/test_bedrock/test_bedrock_cache_messages_with_image_as_last_content.yaml": 2,
    "tests/models/cassettes/test_bedrock/test_bedrock_cache_messages_with_video_as_last_content.yaml": 1,
    "tests/models/cassettes/test_bedrock/test_bedrock_cache_point_adds_cache_control[claude-sonnet-4-5].yaml": 1,
    "tests/models/cassettes/test_bedrock/test_bedrock_cache_point_adds_cache_control[nova-lite].yaml": 1,
    "tests/models/cassettes/test_bedrock/test_bedrock_cache_usage_includes_cache_tokens.yaml": 1,
    "tests/models/cassettes/test_bedrock/test_bedrock_cache_write_and_read.yaml": 2,
}


def _cassette_lines(doc: dict) -> tuple[list[dict], list[dict]]:
    """Capture lines of a cassette's Bedrock Converse and InvokeModel calls, and their usage."""
    lines, usages = [], []
    for k, interaction in enumerate(doc.get("interactions") or []):
        request, response = interaction["request"], interaction["response"]
        if "bedrock-runtime" not in request["uri"] or not request["uri"].endswith(("/converse", "/invoke")):
            continue
        body = request.get("parsed_body") or json.loads(request["body"])
        answer = response["parsed_body"]
        sent = 1_782_000_000.0 + 2 * k
        lines.append({"request": {"timestamp": sent, "method": "POST", "url": request["uri"], "body": body},
                      "response": {"timestamp": sent + 1, "status_code": response["status"]["code"], "body": answer}})
        usages.append(answer["usage"])
    return lines, usages


@pytest.fixture(scope="module")
def cache_cassettes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    yaml = pytest.importorskip("yaml")
    git_dir = PYDANTIC_AI / ".git" if (PYDANTIC_AI / ".git").is_dir() else PYDANTIC_AI
    if shutil.which("git") is None or not PYDANTIC_AI.is_dir():
        pytest.skip(f"no git copy of github.com/pydantic/pydantic-ai at {PYDANTIC_AI}: clone it and set PREFIXBENCH_PYDANTIC_AI_REPO")
    folder = tmp_path_factory.mktemp("bedrock-cache")
    usages: list[dict] = []
    for n, (path, calls) in enumerate(sorted(CACHE_CASSETTES.items())):
        shown = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{PYDANTIC_AI_COMMIT}:{path}"], capture_output=True, text=True, check=False)
        if shown.returncode != 0:
            pytest.skip(f"{PYDANTIC_AI_COMMIT[:12]}:{path} not in {PYDANTIC_AI}")
        lines, used = _cassette_lines(yaml.safe_load(shown.stdout))
        assert len(lines) == calls, path
        (folder / f"{n:02}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        usages.extend(used)
    return folder, usages


def _counts(usage: dict) -> tuple[int, int, int, int]:
    """(uncached input, output, read, write) as Bedrock reported them: Converse's or Anthropic's names."""
    if "inputTokens" in usage:
        return usage["inputTokens"], usage["outputTokens"], usage.get("cacheReadInputTokens", 0), usage.get("cacheWriteInputTokens", 0)
    return usage["input_tokens"], usage["output_tokens"], usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"]


def test_bedrock_cache_calls_count_what_bedrock_reported(cache_cassettes: tuple[Path, list[dict]]) -> None:
    folder, usages = cache_cassettes
    result = run_audit([folder])
    assert {f.format for f in result.files} == {"http-capture"} and all(not f.skipped for f in result.files)
    assert {r.provider for r in result.rows} == {"bedrock"}
    t = result.totals
    assert t.requests == len(usages) == 20
    # Additive: inputTokens excludes the read and written parts.
    assert (t.input, t.output, t.cache_read, t.cache_write) == tuple(sum(c) for c in zip(*map(_counts, usages)))
    assert (t.input, t.output, t.cache_read, t.cache_write) == (4_589, 2_818, 41_232, 16_887)


def test_bedrock_cache_reads_against_the_prediction(cache_cassettes: tuple[Path, list[dict]]) -> None:
    # What these calls tell. Bedrock read what the chain expects on 18 of the 20 (Claude's and
    # Nova's cachePoints alike, and the first calls of three recordings, which read an account
    # cache warm from earlier runs); the two others are Nova's: a follow-up that read nothing of
    # the 2,492 tokens written 2 s before (and wrote them again), and one that read 2,098 of
    # them. The replayed bodies are counted in the anthropic model's characters per token, which
    # miss these test prompts (upper-case lines repeated, a document, an image) by -40% to +18%:
    # the 1,324-token prompt of the write-and-read pair counts 816, under Claude's 1,024-token
    # minimum, so nothing is predicted cached there. Counted as Bedrock counted each prompt, 11 of
    # the 20 reads are within 3% (8 in the model's own count), 7 of them cold starts.
    result = run_audit([cache_cassettes[0]])
    rows = result.rows
    assert sum(r.read_within for r in rows) == 11
    assert sum(r.cause == "cold-start" for r in rows) == 7
    assert sum(r.expected_cache_read == r.reported_cache_read for r in rows) == 18
    misses = [(r.reported_cache_read, r.expected_cache_read) for r in rows if r.expected_cache_read != r.reported_cache_read]
    assert misses == [(0, 2_492), (2_098, 2_492)] and {r.model for r in rows if r.expected_cache_read != r.reported_cache_read} == {"us.amazon.nova-lite-v1:0"}
