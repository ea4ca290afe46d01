"""``prefixbench proxy`` as a user runs it: a process, its banner, its lines, its exit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from prefixbench.reports.cli import main

ROOT = Path(__file__).resolve().parents[3]
KEY = "sk-ant-api03-CLI-PLANTED-0f1e2d3c4b5a69788796a5b4c3d2e1f0"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--upstream", "ftp://x"], "--upstream 'ftp://x': expected a provider name or an http(s):// URL"),
        (["--upstream", "vllm"], "--upstream vllm: no known public API base; give its URL"),
        (["--listen", "localhost"], "--listen 'localhost': expected host:port"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(argv, message, capsys, tmp_path) -> None:
    pytest.importorskip("aiohttp", reason="the proxy extra (aiohttp) is not installed")
    assert main(["proxy", *argv, "--out", str(tmp_path / "c.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_without_the_extra_it_says_which_to_install(monkeypatch, capsys, tmp_path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "aiohttp" else real(name, *a))
    assert main(["proxy", "--out", str(tmp_path / "c.jsonl")]) == 2
    assert "pip install 'prefixbench[proxy]'" in capsys.readouterr().err


def test_the_command_records_redacts_and_stops_cleanly(tmp_path: Path) -> None:
    pytest.importorskip("aiohttp", reason="the proxy extra (aiohttp) is not installed")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    standin = subprocess.Popen([sys.executable, "-m", "tests.unit.proxy.standin"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    out = tmp_path / "capture.jsonl"
    try:
        upstream = f"http://127.0.0.1:{standin.stdout.readline().strip()}"  # type: ignore[union-attr]
        proxy = subprocess.Popen([sys.executable, "-m", "prefixbench", "proxy", "--listen", "127.0.0.1:0", "--upstream", upstream, "--out", str(out)],
                                 cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        banner = proxy.stderr.readline()  # type: ignore[union-attr]
        base = banner.split()[2]
        assert base.startswith("http://127.0.0.1:") and f"capture {out}" in banner
        body = json.dumps({"model": "claude-sonnet-4-20250514", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}).encode()
        request = urllib.request.Request(f"{base}/v1/messages?key={KEY}", data=body, headers={"x-api-key": KEY, "content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200 and b'"usage"' in response.read()
        proxy.send_signal(signal.SIGTERM)
        stdout, stderr = proxy.communicate(timeout=60)
    finally:
        standin.terminate()
        standin.wait(30)
    assert proxy.returncode == 0, stderr
    assert stdout.startswith("#1 side  read 0 / prompt "), stdout
    assert "stopped after 1 calls" in stderr
    assert KEY not in stdout + banner + stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    record = json.loads(out.read_text())
    assert record["request"]["url"].endswith("?key=[redacted]") and {k.lower(): v for k, v in record["request"]["headers"].items()}["x-api-key"] == "[redacted]"


def test_the_command_line_never_loads_aiohttp() -> None:
    """Start-up is benchmarked: building the parsers (proxy's included) and --help import no aiohttp."""
    code = ("import sys; from prefixbench.reports.cli import build_parser; build_parser(); build_parser('proxy'); "
            "import prefixbench.reports.proxy_record, prefixbench.reports.proxy_command; print('aiohttp' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
    shown = subprocess.run([sys.executable, "-m", "prefixbench", "proxy", "--help"], capture_output=True, text=True, check=True).stdout
    assert "--upstream NAME|URL" in shown and "--listen HOST:PORT" in shown
