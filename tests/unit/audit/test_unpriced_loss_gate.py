"""``--max-lost-usd`` on a log whose every miss is in no dollar figure (pi through Ollama: no
price), and what the audit says of an Ollama ``:cloud`` model's price."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from prefixbench.reports.audit import audit_table
from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import run_audit


def _ollama_session(path: Path, model: str, t0: int = 1_788_000_000_000, provider: str = "ollama", grow: int = 1_000) -> Path:
    """A pi session through Ollama (or ``provider``) of three calls on a prompt growing by
    ``grow`` tokens, none reporting a read."""
    entries: list[dict] = [{"type": "session", "id": "p1", "timestamp": "2026-08-29T10:00:00.000Z", "cwd": "/x"},
                           {"type": "message", "message": {"role": "user", "content": [], "timestamp": t0}}]
    for n in range(3):
        usage = {"input": 9_000 + grow * n, "output": 40, "cacheRead": 0, "cacheWrite": 0, "cost": {}}
        entries.append({"type": "message", "message": {
            "role": "assistant", "content": [], "timestamp": t0 + 10 + 5000 * n, "provider": provider, "model": model,
            "api": "openai-completions", "usage": usage, "stopReason": "stop"}})
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def test_max_lost_usd_fails_when_every_miss_is_unpriced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It passed with a warning that 3 of 3 requests are in no dollar figure, though its misses lost
    tokens: the loss is unknown in dollars, not $0, so the gate fails, saying how many tokens."""
    log = _ollama_session(tmp_path / "s.jsonl", "qwen3-coder:30b")
    result = run_audit([log])
    misses = [row for row in result.rows if row.lost_tokens]
    assert misses and all(row.lost_usd is None for row in misses)
    tokens = sum(row.lost_tokens for row in misses)
    junit = tmp_path / "j.xml"
    assert main(["audit", str(log), "--quiet", "--max-lost-usd", "0.01", "--junit", str(junit)]) == 1
    said = (f"lost unknown in dollars: {len(misses)} miss(es) lost {tokens:,} tokens, none of them in a dollar figure "
            "(self-hosted: no bill: ollama), to hold to --max-lost-usd $0.01; a self-hosted engine sends no bill: gate its "
            "misses with --fail-on or --min-hit-ratio")
    assert capsys.readouterr().err.strip() == f"FAIL {said}"
    totals = ElementTree.parse(junit).getroot().find("testsuite").findall("testcase")[-1]
    assert totals.find("failure").get("message") == said


def test_a_cloud_model_through_ollama_is_billed_by_ollama_not_free(tmp_path: Path) -> None:
    """``kimi-k2.5:cloud`` through Ollama runs in Ollama's cloud, which bills it through its plans:
    the note said no vendor bills its calls, and the headline called it a self-hosted engine."""
    table = audit_table(run_audit([_ollama_session(tmp_path / "c.jsonl", "kimi-k2.5:cloud")]))
    assert "a host running open models itself" not in table and "no vendor bills" not in table
    assert ("note: no price for 3 request(s) of kimi-k2.5:cloud served by ollama: a cloud model of Ollama's (its tag ends "
            "in cloud) runs in Ollama's cloud, not on the user's machine, and Ollama bills it through its plans") in table
    assert "paid unknown (3 request(s) served by a host whose price for the model prefixbench lacks: Ollama's cloud)" in table
    # A model the user runs on Ollama itself: as before.
    local = audit_table(run_audit([_ollama_session(tmp_path / "l.jsonl", "qwen3-coder:30b")]))
    assert "paid unknown (3 request(s) served by a self-hosted engine: ollama)" in local
    assert "served by ollama, a host running open models itself: no vendor bills its calls" in local


def test_only_a_cloud_tag_on_an_ollama_host_is_ollamas_cloud() -> None:
    from prefixbench.simulator.providers.vllm import ollama_cloud
    assert ollama_cloud("kimi-k2.5:cloud", "ollama") and ollama_cloud("gpt-oss:120b-cloud", "ollama-launch")
    assert not ollama_cloud("qwen3-coder:30b", "ollama") and not ollama_cloud("kimi-k2.5:cloud", "lmstudio")
    assert not ollama_cloud("cloud", "ollama")
    # Ollama's cloud API itself, whatever the tag; Codex's --oss host (Ollama) with a cloud tag.
    assert ollama_cloud("gpt-oss:120b", "ollama.com") and ollama_cloud("gpt-oss:120b-cloud", "oss")
    assert ollama_cloud("kimi-k2.5:cloud", "oss") and not ollama_cloud("gpt-oss:20b", "oss")


def test_max_lost_usd_fails_when_unpriced_misses_lost_most_tokens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One cheap priced miss beside a self-hosted engine's large ones: the gate passed with a
    warning, judging the priced cents alone. Now the unpriced misses' lost tokens, the larger part,
    fail it, and the line says why they have no dollars (no price row, no bill)."""
    ollama = _ollama_session(tmp_path / "o.jsonl", "qwen3-coder:30b", grow=20_000)
    priced = _ollama_session(tmp_path / "p.jsonl", "gpt-4o", provider="openai", grow=0)
    unknown = _ollama_session(tmp_path / "u.jsonl", "glm-9-nonesuch", provider="zzhost", grow=0)
    result = run_audit([ollama, priced, unknown])
    misses = [row for row in result.rows if row.lost_tokens]
    assert any(row.lost_usd is not None for row in misses) and any(row.lost_usd is None for row in misses)
    assert main(["audit", str(ollama), str(priced), str(unknown), "--quiet", "--max-lost-usd", "1000"]) == 1
    err = capsys.readouterr().err
    fail = next(line for line in err.splitlines() if line.startswith("FAIL"))
    assert fail.startswith("FAIL lost unknown in dollars: ") and " of " in fail and "the priced rest lost $" in fail
    assert "self-hosted: no bill: ollama" in fail and "--fail-on" not in fail
    # The priced misses the larger part: the gate judges the dollars, warning of the unpriced requests.
    assert main(["audit", str(priced), "--quiet", "--max-lost-usd", "1000"]) == 0


def test_unpriced_reasons_tell_no_price_row_from_no_bill(tmp_path: Path) -> None:
    from prefixbench.workloads.audit.gate import _unpriced_misses, _unpriced_reasons

    ollama = _ollama_session(tmp_path / "o.jsonl", "qwen3-coder:30b")
    unknown = _ollama_session(tmp_path / "u.jsonl", "glm-9-nonesuch", provider="zzhost")
    result = run_audit([ollama, unknown])
    reasons = _unpriced_reasons(result, _unpriced_misses(result))
    assert set(reasons) == {"self-hosted: no bill", "no price row"}, reasons
    assert reasons["no price row"] == {"glm-9-nonesuch": 2} and reasons["self-hosted: no bill"] == {"ollama": 2}
