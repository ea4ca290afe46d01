"""``prefixbench proxy`` as a user runs it: a process, its banner, its lines, its exit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
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
        # (main said "expected host:port" of a host:port whose port is past 65535)
        (["--listen", "127.0.0.1:99999"], "--listen '127.0.0.1:99999': port 99999 is not from 0 to 65535 (0 picks a free one)"),
        # int() of 4,301 digits or more raised ValueError: a traceback (review).
        (["--listen", "127.0.0.1:" + "9" * 5000], "--listen '127.0.0.1:" + "9" * 30 + "'...: port 999999999999... "
         "(5,000 digits) is not from 0 to 65535 (0 picks a free one)"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(argv, message, capsys, tmp_path) -> None:
    assert main(["proxy", *argv, "--out", str(tmp_path / "c.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--upstream", "antrhopic"], "--upstream 'antrhopic': expected a provider name or an http(s):// URL"),
        (["--listen", "127.0.0.1"], "--listen '127.0.0.1': expected host:port"),
        (["--out", "{tmp}"], "is a folder; the proxy appends to a capture file"),
        (["--out", "{tmp}/log.jsonl"], "holds a chat-completions log"),
        # Fails on integ53: "cannot open for appending (File exists)", from the folder's mkdir.
        (["--out", "{tmp}/log.jsonl/c.jsonl"], "--out {tmp}/log.jsonl/c.jsonl: lies under the file {tmp}/log.jsonl, not a folder"),
    ],
)
def test_a_typo_is_named_before_the_missing_extra(argv, message, monkeypatch, capsys, tmp_path) -> None:
    # Fails on main: without aiohttp every mistake was answered "needs aiohttp" first, and the
    # typo only after installing the extra.
    import importlib.util

    (tmp_path / "log.jsonl").write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "aiohttp" else real(name, *a))
    argv = [word.replace("{tmp}", str(tmp_path)) for word in argv]
    out = [] if "--out" in argv else ["--out", str(tmp_path / "c.jsonl")]
    assert main(["proxy", *argv, *out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    message = message.replace("{tmp}", str(tmp_path))
    assert len(err) == 1 and message in err[0] and "aiohttp" not in err[0], err


@pytest.mark.parametrize(("content", "holds"), [
    ('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n', "holds a chat-completions log"),
    ("notes, not a log\n", "holds no capture"),
])
def test_an_out_file_holding_another_log_is_refused(content, holds, tmp_path) -> None:
    # Fails on main: the proxy appended its captures after a request log (or any file), making a
    # file of two formats that audit then refuses, and said "the earlier ones: prefixbench audit ...".
    out = tmp_path / "session.jsonl"
    out.write_text(content)
    try:  # a process with a time bound: on main the proxy started and served until stopped
        done = subprocess.run([sys.executable, "-m", "prefixbench", "proxy", "--listen", "127.0.0.1:0", "--out", str(out)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the proxy started on an --out holding another log")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"prefixbench: error: --out {out}: {holds}; the proxy appends to a capture (http-capture): name another file"]
    assert out.read_text() == content


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
    assert proxy.returncode == 143, stderr  # 128 + SIGTERM, as Ctrl-C's 130 (docs/proxy.md)
    assert stdout.startswith("#1 side  read 0 / prompt "), stdout
    assert stderr.splitlines()[-1] == f"prefixbench proxy: stopped (SIGTERM) after 1 call; audit them with: prefixbench audit {out}"
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


def _banner_and_stop(tmp_path: Path, upstream: str, sig: signal.Signals) -> tuple[int, str, str]:
    """Start the proxy (no call reaches the upstream), stop it with ``sig``: status, banner, stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proxy = subprocess.Popen([sys.executable, "-m", "prefixbench", "proxy", "--listen", "127.0.0.1:0", "--upstream", upstream,
                              "--out", str(tmp_path / "session.jsonl")], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    banner = proxy.stderr.readline() + proxy.stderr.readline()  # type: ignore[union-attr]
    proxy.send_signal(sig)
    _, stderr = proxy.communicate(timeout=60)
    return proxy.returncode, banner, stderr


def test_stopped_with_no_call_it_says_so_and_sigterm_stops_as_documented(tmp_path: Path) -> None:
    """After 0 calls it offers no audit of the empty capture (on main: "audit them with: ..."
    although that audit exits 2); SIGTERM and Ctrl-C both stop cleanly, each saying so, with
    128 + the signal's number (on main SIGTERM exited 0 and Ctrl-C 130)."""
    pytest.importorskip("aiohttp", reason="the proxy extra (aiohttp) is not installed")
    status, _, stderr = _banner_and_stop(tmp_path, "anthropic", signal.SIGTERM)
    capture = tmp_path / "session.jsonl"
    assert status == 143, stderr
    assert stderr.splitlines()[-1] == f"prefixbench proxy: stopped (SIGTERM); no call was recorded, {capture} is empty"
    assert "audit them" not in stderr
    assert main(["audit", str(capture), "--out", str(tmp_path / "a")]) == 2  # why it must not be offered
    status, _, stderr = _banner_and_stop(tmp_path, "anthropic", signal.SIGINT)
    assert status == 130 and stderr.splitlines()[-2:] == [
        f"prefixbench proxy: stopped (Ctrl-C); no call was recorded, {capture} is empty", "prefixbench: interrupted"], stderr


@pytest.mark.parametrize(
    ("upstream", "offered"),
    [
        ("anthropic", "ANTHROPIC_BASE_URL={base}"),
        ("openai", "OPENAI_BASE_URL={base}/v1"),
        ("deepseek", "OPENAI_BASE_URL={base}"),
        ("gemini", "OPENAI_BASE_URL={base}/v1beta/openai"),
        ("https://api.deepseek.com/anthropic", "ANTHROPIC_BASE_URL={base}"),
    ],
)
def test_the_start_up_line_offers_only_the_variable_that_fits_the_upstream(upstream: str, offered: str) -> None:
    """On main ``--upstream anthropic`` also offered OPENAI_BASE_URL=.../v1, which would send
    OpenAI calls to api.anthropic.com. The offers are docs/proxy.md's table's."""
    pytest.importorskip("aiohttp", reason="the proxy extra (aiohttp) is not installed")
    from prefixbench.reports.proxy import agent_hint
    from prefixbench.reports.proxy_options import resolve_upstream

    base = "http://127.0.0.1:8787"
    hint = agent_hint(resolve_upstream(upstream), base)
    assert hint == f"point the agent at it: {offered.format(base=base)}"
    row = [line for line in (ROOT / "docs" / "proxy.md").read_text().splitlines() if f"| `--upstream {upstream}` |" in line]
    assert len(row) == 1 and row[0].endswith(f"| `{offered.format(base=base)}` |"), row


def test_the_start_up_line_of_a_process_offers_one_variable(tmp_path: Path) -> None:
    pytest.importorskip("aiohttp", reason="the proxy extra (aiohttp) is not installed")
    _, banner, _ = _banner_and_stop(tmp_path, "anthropic", signal.SIGTERM)
    assert "ANTHROPIC_BASE_URL=http://127.0.0.1:" in banner and "OPENAI_BASE_URL" not in banner, banner


def test_a_port_with_leading_zeros_past_ints_digit_limit_is_its_number() -> None:
    # int() of the 5,002 characters raised ValueError (review).
    from prefixbench.reports.proxy_options import parse_listen

    assert parse_listen("127.0.0.1:" + "0" * 5000 + "80") == ("127.0.0.1", 80)


def test_stopped_after_calls_the_upstream_never_answered_it_offers_no_audit(tmp_path: Path) -> None:
    """Upstream unreachable (no network): the proxy's last line said "audit them with: prefixbench
    audit FILE", and that audit exited 2 ("unknown log format"): the capture holds requests with
    no response, no usage."""
    pytest.importorskip("aiohttp", reason="the proxy extra (aiohttp) is not installed")
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "capture.jsonl"
    proxy = subprocess.Popen([sys.executable, "-m", "prefixbench", "proxy", "--listen", "127.0.0.1:0", "--upstream",
                              f"http://127.0.0.1:{dead}", "--out", str(out)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    base = proxy.stderr.readline().split()[2]  # type: ignore[union-attr]
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(f"{base}/v1/messages", data=body, headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 502
    proxy.send_signal(signal.SIGTERM)
    _, stderr = proxy.communicate(timeout=60)
    assert proxy.returncode == 143, stderr
    assert stderr.splitlines()[-1] == ("prefixbench proxy: stopped (SIGTERM) after 1 call, none answered by the upstream "
                                       "(the errors above): no usage for audit to read in them")
    assert main(["audit", str(out), "--quiet"]) == 2  # why the audit must not be offered
