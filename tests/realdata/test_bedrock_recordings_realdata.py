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

from prefixbench.workloads.audit.core import load_trace
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
