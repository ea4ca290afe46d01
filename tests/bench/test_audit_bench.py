"""Speed and memory of ``prefixbench audit`` (pytest-benchmark; run with `python -m pytest tests/bench --bench`).

Targets: the agent logs of ../shared/realdata (the five folders the target was set on: Claude
Code, the capture, Codex, Mooncake, pi) audited in under 3 s, and the 27.5 MB of block-hash agent
traces reported beside them; 100 MB of Claude Code transcripts streamed under 400 MB peak RSS. The rates (requests/s, MB/s) go into
``benchmark.extra_info``, next to ccusage on the same Claude Code files when a ``ccusage``
binary is on PATH (or named by PREFIXBENCH_CCUSAGE).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prefixbench.reports.audit import audit_table
from prefixbench.workloads.audit.core import run_audit

pytestmark = pytest.mark.bench

TARGET_S = 3.0
TARGET_RSS_MB = 400
BIG_MB = 100


#: The folders the 3 s target was set on (the block-hash agent traces came later: reported apart).
TARGET_FOLDERS = ("claude-code-viewer", "claude-trace-lemmy", "codex-rollout", "mooncake-conversation", "pi-sessions")


def test_realdata_audit(benchmark, realdata_logs: list[Path]) -> None:
    realdata_logs = [folder for folder in realdata_logs if folder.name in TARGET_FOLDERS]
    size = sum(p.stat().st_size for folder in realdata_logs for p in folder.rglob("*.json*"))

    def audit() -> int:
        result = run_audit(realdata_logs)
        audit_table(result)
        return result.totals.requests

    requests = benchmark.pedantic(audit, rounds=3, iterations=1)
    seconds = benchmark.stats.stats.mean
    benchmark.extra_info.update(
        {"requests": requests, "seconds": round(seconds, 3), "requests_per_s": round(requests / seconds),
         "mb_per_s": round(size / 1e6 / seconds, 1), "target_s": TARGET_S, "within_target": seconds < TARGET_S}
    )
    print(f"\nrealdata: {requests:,} requests, {size / 1e6:.1f} MB in {seconds:.2f} s "
          f"({requests / seconds:,.0f} requests/s, {size / 1e6 / seconds:.1f} MB/s; target < {TARGET_S} s)")


def write_big_transcripts(folder: Path, megabytes: int = BIG_MB, sessions: int | None = None) -> tuple[int, int]:
    """Deterministic Claude Code transcripts of about ``megabytes`` MB: sessions of a main thread
    with tool turns, inline sidechains, streamed multi-line responses; ``sessions``: that many
    files instead (400 requests, 1.7 MB each). Returns (bytes, requests)."""
    folder.mkdir(parents=True, exist_ok=True)
    filler = ("lorem ipsum dolor sit amet consectetur " * 40)[:1400]
    written = requests = 0
    session = 0
    while session < sessions if sessions is not None else written < megabytes * 1_000_000:
        session += 1
        lines = []
        parent = None
        read = 0
        for turn in range(400):
            uuid = f"{session}-u{turn}"
            ts = f"2025-09-03T{(turn // 60) % 24:02d}:{turn % 60:02d}:00.000Z"
            content = filler if turn == 0 else [{"type": "tool_result", "tool_use_id": f"t{turn}", "content": filler}]
            lines.append({"parentUuid": parent, "isSidechain": False, "sessionId": str(session), "version": "1.0.98",
                          "type": "user", "message": {"role": "user", "content": content}, "uuid": uuid, "timestamp": ts})
            parent = uuid
            write = 400 + turn % 7 * 50
            for block in range(3):  # one response streamed as three lines
                auuid = f"{uuid}-a{block}"
                usage = {"input_tokens": 4, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
                         "output_tokens": 10 if block < 2 else 120,
                         "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0}}
                lines.append({"parentUuid": parent, "isSidechain": False, "sessionId": str(session), "version": "1.0.98",
                              "type": "assistant", "requestId": f"req_{session}_{turn}", "uuid": auuid, "timestamp": ts,
                              "message": {"id": f"msg_{session}_{turn}", "role": "assistant", "model": "claude-sonnet-4-20250514",
                                          "content": [{"type": "text", "text": filler[:300]}], "usage": usage}})
                parent = auuid
            read += write
            requests += 1
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (folder / f"session-{session:04d}.jsonl").write_text(text, encoding="utf-8")
        written += len(text)
    return written, requests


#: The ids a Claude Code entry links by; a copy of a real transcript gets its own of each.
_ID_KEYS = ("uuid", "parentUuid", "logicalParentUuid", "requestId", "sessionId", "leafUuid")


def write_real_shaped_transcripts(folder: Path, source: Path, megabytes: int, copies: int | None = None) -> tuple[int, int]:
    """About ``megabytes`` MB of Claude Code transcripts made of the real ones in ``source``
    (../shared/realdata/claude-code-viewer): copy ``k`` of every file has its ids suffixed with
    ``-c<k>`` and its times moved ``k`` days later, so the copies are sequential sessions of their
    own with the real files' shape (tool results, file reads, ``toolUseResult`` beside them).
    ``copies``: that many copies of every file instead of ``megabytes``. Written under ``folder``
    (a temporary folder), never in the project. Returns (bytes, requests). Raises ValueError
    when ``source`` holds no transcript with a line (such as ../shared/realdata itself, whose
    transcripts are in its subfolders)."""
    from datetime import datetime, timedelta

    folder.mkdir(parents=True, exist_ok=True)
    originals = [(path.stem, [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()])
                 for path in sorted(source.glob("*.jsonl"))]
    if not any(entries for _, entries in originals):
        # (copies of nothing would never reach the size asked for)
        raise ValueError(f"{source}: no Claude Code transcript (*.jsonl with a line) to copy; "
                         "it needs a folder of them, such as ../shared/realdata/claude-code-viewer")
    per_copy = sum(len({e.get("requestId") for e in entries if e.get("type") == "assistant" and e.get("requestId")})
                   for _, entries in originals)
    written = 0
    wanted, copies = copies, 0
    while (copies < wanted) if wanted is not None else (written < megabytes * 1_000_000):
        copies += 1
        for stem, entries in originals:
            lines = []
            for entry in entries:
                entry = dict(entry)
                for key in _ID_KEYS:
                    if isinstance(entry.get(key), str):
                        entry[key] = f"{entry[key]}-c{copies}"
                if isinstance(entry.get("message"), dict) and isinstance(entry["message"].get("id"), str):
                    entry["message"] = {**entry["message"], "id": f"{entry['message']['id']}-c{copies}"}
                if isinstance(entry.get("timestamp"), str):
                    moment = datetime.fromisoformat(entry["timestamp"]) + timedelta(days=copies)
                    entry["timestamp"] = moment.isoformat().replace("+00:00", "Z")
                lines.append(json.dumps(entry))
            text = "\n".join(lines) + "\n"
            (folder / f"{stem}-c{copies:04d}.jsonl").write_text(text, encoding="utf-8")
            written += len(text.encode("utf-8"))
    return written, per_copy * copies


def test_big_transcripts_rss(benchmark, tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    size, requests = write_big_transcripts(folder)
    script = (
        "import resource, sys\n"
        "from prefixbench.reports.cli import main\n"
        "code = main(['audit', sys.argv[1], '--format', 'json', '--quiet', '--jobs', '1'])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    peaks: list[float] = []

    def run() -> None:
        done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True, check=True)
        peaks.append(int(done.stderr.strip().splitlines()[-1]) / 1024)

    benchmark.pedantic(run, rounds=1, iterations=1)
    seconds = benchmark.stats.stats.mean
    peak = max(peaks)
    benchmark.extra_info.update(
        {"mb": round(size / 1e6, 1), "requests": requests, "seconds": round(seconds, 2), "peak_rss_mb": round(peak),
         "requests_per_s": round(requests / seconds), "mb_per_s": round(size / 1e6 / seconds, 1),
         "target_rss_mb": TARGET_RSS_MB, "within_target": peak < TARGET_RSS_MB}
    )
    print(f"\n{size / 1e6:.0f} MB of transcripts, {requests:,} requests: {seconds:.1f} s "
          f"({requests / seconds:,.0f} requests/s, {size / 1e6 / seconds:.1f} MB/s), peak RSS {peak:.0f} MB "
          f"(target < {TARGET_RSS_MB} MB)")


def test_ccusage_side_by_side(benchmark, realdata: Path, tmp_path: Path) -> None:
    """ccusage (npm) on the same Claude Code files, when installed; prefixbench's time beside it."""
    binary = os.environ.get("PREFIXBENCH_CCUSAGE") or shutil.which("ccusage")
    source = realdata / "claude-code-viewer"
    if binary is None:
        pytest.skip("ccusage not installed (npm install ccusage, or set PREFIXBENCH_CCUSAGE)")
    home = tmp_path / ".claude"
    (home / "projects" / "sample").mkdir(parents=True)
    for path in source.glob("*.jsonl"):
        shutil.copy(path, home / "projects" / "sample" / path.name)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(home)}
    start = time.perf_counter()
    done = subprocess.run([binary, "daily", "--json", "--offline"], capture_output=True, text=True, env=env, check=True)
    ccusage_s = time.perf_counter() - start
    theirs = json.loads(done.stdout)["totals"]
    result = benchmark.pedantic(lambda: run_audit([source]), rounds=3, iterations=1)
    ours = result.totals
    benchmark.extra_info.update(
        {"ccusage_s": round(ccusage_s, 3), "prefixbench_s": round(benchmark.stats.stats.mean, 3),
         "ccusage_output": theirs["outputTokens"], "prefixbench_output": ours.output,
         "ccusage_cost": theirs["totalCost"], "prefixbench_cost": float(ours.cost_usd)}
    )
    print(f"\nccusage {ccusage_s:.2f} s (output {theirs['outputTokens']:,}, ${theirs['totalCost']:.3f}) vs "
          f"prefixbench audit {benchmark.stats.stats.mean:.2f} s (output {ours.output:,}, ${ours.cost_usd:.3f})")
