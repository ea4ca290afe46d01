"""Peer benchmark: prefixbench beside the other tools of the field, whole process, side by side.

    python bench/peers/run.py [--repeat 5] [--peers /work/venvs/peers] [--json FILE] [--keep DIR]

What it does, every step rerunnable:

1. Writes the peer workload (prefixbench.workloads.scripted.interleaved: 4 sessions x 50 turns,
   interleaved, ~2,000-word tool results, every 10th turn of session 0 rewriting an old tool
   result in place) as a chat-completions log, and converts it into each peer's input format:
   kvcache-simulator traces (prefix-chained block hashes of prefixbench's rendering, at 16 and
   at 512 tokens a block), a promptcachelint trace (provider + body records) and a
   prompt-cache-doctor log (body + usage records, the usage being prefixbench's prediction).
2. Times each tool as a whole process (wall clock and peak RSS from ``wait4``), ``--repeat``
   rounds interleaved so machine load hits every tool alike; the median wall and the largest
   peak are reported, with the ratio to the prefixbench row of the same job. Jobs: the peer
   workload, the 64-request claude-trace capture, and the Claude Code transcripts in
   ``../shared/realdata`` (ccusage; ``prefixbench audit`` when this build has it), and
   kvcache-simulator's own 512-token trace read by both tools (``prefixbench audit --input
   mooncake``), the one job where both read identical input.
3. Checks the hit counts where the models coincide: kvcache-simulator's infinite-capacity
   ceiling (16-token blocks) against prefixbench's ``vllm`` model (16-token blocks, room to
   spare) over the same measured half of the requests, and at 512-token blocks against
   ``prefixbench audit`` on the same trace; promptcachelint's sessions and prefix
   breaks against prefixbench's conversation lanes and requests that do not extend their lane.

Peers are installed in their own environment (``--peers``, default /work/venvs/peers:
``pip install kvcache-simulator prompt-cache-doctor promptcachelint`` into it, ``npm install
--prefix <peers>/node ccusage``); a peer that is not installed is listed as missing, never
failed. Input formats were learnt from each package's documentation and source; no peer code
is used here. Generated files live in a temporary folder, deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from prefixbench.simulator.render import render_request
from prefixbench.workloads.logs.chat_completions import read_chat_completions
from prefixbench.workloads.scripted.interleaved import InterleavedSpec, write_interleaved

ROOT = Path(__file__).resolve().parents[2]
REALDATA = ROOT.parent / "shared" / "realdata"
CAPTURE = REALDATA / "claude-trace-lemmy" / "test-traffic.jsonl"
TRANSCRIPTS = REALDATA / "claude-code-viewer"
DEFAULT_PEERS = Path("/work/venvs/peers")
#: The kvcache-simulator model used for its memory accounting (any of its catalog would do:
#: the hit-rate ceiling does not depend on it).
KV_MODEL = "deepseek-v4-pro"
BYTES_PER_TOKEN = 4  # prefixbench's heuristic tokenizer: the rendering's bytes, 4 a token
BARE_JSON = "import json, sys\nfor name in sys.argv[1:]:\n    for line in open(name, 'rb'):\n        json.loads(line)\n"


@dataclass
class Tool:
    """One process to time for one job."""

    job: str
    name: str
    argv: list[str] | None  # None: missing
    env: dict[str, str] = field(default_factory=dict)
    note: str = ""
    is_reference: bool = False  # the prefixbench row the ratios divide by
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    peak_kb: int = 0
    error: str | None = None

    @property
    def wall(self) -> float | None:
        return statistics.median(self.walls) if self.walls else None

    @property
    def cpu(self) -> float | None:
        return statistics.median(self.cpus) if self.cpus else None


#: Runs one tool and reports ``[exit code, wall s, cpu s, peak RSS KB]``. A small process of
#: its own (python -S -I, ~8 MB) forks the tool: Linux hands an exec'd process the peak RSS of
#: the memory image it replaces, so forking from this harness (hundreds of MB after generating
#: the inputs) would report that instead of the tool's own peak.
LAUNCHER = """
import json, os, sys, time
out, err, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
    os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
print(json.dumps([os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss]))
"""


def run_once(tool: Tool, out: Path) -> None:
    """One whole-process run: wall clock around fork/exec/wait, CPU time and peak RSS (wait4)."""
    errors = out.with_suffix(".err")
    launched = subprocess.run(
        [sys.executable, "-S", "-I", "-c", LAUNCHER, str(out), str(errors), *tool.argv],
        env={**os.environ, **tool.env},
        capture_output=True,
        text=True,
        check=True,
    )
    code, wall, cpu, peak_kb = json.loads(launched.stdout)
    if code != 0:
        last = errors.read_text(errors="replace").strip().splitlines()[-1:]
        tool.error = f"exit {code}: {last[0] if last else ''}"
        return
    tool.walls.append(wall)
    tool.cpus.append(cpu)
    tool.peak_kb = max(tool.peak_kb, peak_kb)


# ---- the workload in each tool's format -------------------------------------------------


def write_kvcache_trace(chat: Path, out: Path, block_tokens: int) -> None:
    """kvcache-simulator JSONL: per request, prefix-chained ids of its ``block_tokens``-token
    blocks of prefixbench's rendering (4 bytes a token); a last partial block gets an id of its
    own and its real token count (``block_tokens`` field), so only full blocks can be shared."""
    size = block_tokens * BYTES_PER_TOKEN
    with out.open("w") as handle:
        for request in read_chat_completions(chat):
            data = b"".join(unit.data for unit in render_request(request).units)
            ids: list[str] = []
            tokens: list[int] = []
            chain = b""
            full = len(data) // size
            for k in range(full):
                chain = hashlib.blake2b(chain + data[k * size : (k + 1) * size], digest_size=12).digest()
                ids.append(chain.hex())
                tokens.append(block_tokens)
            rest = data[full * size :]
            if rest:
                ids.append(hashlib.blake2b(chain + rest + b"|partial", digest_size=12).hexdigest())
                tokens.append(-(-len(rest) // BYTES_PER_TOKEN))
            record = {"block_size": block_tokens, "hash_ids": ids, "input_length": sum(tokens), "block_tokens": tokens}
            handle.write(json.dumps(record) + "\n")


def write_promptcachelint_trace(chat: Path, out: Path) -> None:
    """promptcachelint JSONL: one record per request, provider + body, one logical second apart."""
    with chat.open("rb") as source, out.open("w") as handle:
        for index, line in enumerate(source):
            body = json.loads(line)
            handle.write(json.dumps({"provider": "openai", "body": body, "at": float(index), "model": body["model"]}) + "\n")


def write_pcd_log(chat: Path, predicted: list[dict], out: Path) -> None:
    """prompt-cache-doctor JSONL: request body plus OpenAI-shaped usage (prefixbench's prediction)."""
    with chat.open("rb") as source, out.open("w") as handle:
        for line, row in zip(source, predicted):
            usage = {
                "prompt_tokens": row["prompt_tokens"],
                "prompt_tokens_details": {"cached_tokens": row["cached_tokens"]},
                "completion_tokens": 0,
            }
            handle.write(json.dumps({"model": "gpt-4o", "request": json.loads(line), "response": {"usage": usage}}) + "\n")


def write_promptcachelint_capture(capture: Path, out: Path) -> None:
    """The claude-trace capture as promptcachelint records: anthropic body + reported usage."""
    from prefixbench.workloads.logs.anthropic_capture import read_usage

    with capture.open("rb") as source, out.open("w") as handle:
        for number, line in enumerate(source, 1):
            if not line.strip():
                continue
            record = json.loads(line)
            response = record.get("response") or {}
            if not 200 <= int(response.get("status_code") or 200) < 300:
                continue
            usage = read_usage(response, f"{capture}:{number}")
            handle.write(
                json.dumps(
                    {
                        "provider": "anthropic",
                        "body": record["request"]["body"],
                        "at": float(record["request"]["timestamp"]),
                        "usage": {
                            "input_tokens": usage.uncached,
                            "cache_read": usage.cache_read,
                            "cache_write": usage.cache_write,
                            "output_tokens": usage.output,
                        },
                    }
                )
                + "\n"
            )


# ---- agreement where the models coincide ------------------------------------------------


def prefixbench_vllm_hits(chat: Path, measured_from: int) -> int:
    """Cached tokens of prefixbench's vllm model (16-token blocks, no eviction) over the measured requests."""
    from prefixbench.simulator.models import make_cache
    from prefixbench.workloads.logs.replay import replay

    requests = list(read_chat_completions(chat))
    # Room for every block of every request: nothing is ever evicted, like the ceiling.
    room = sum(-(-len(b"".join(u.data for u in render_request(r).units)) // 64) for r in requests)
    observations = replay(requests, make_cache("vllm", capacity_blocks=room))
    return sum(o.cached_tokens for o in observations[measured_from:])


def prefixbench_lanes(chat: Path) -> tuple[int, int, list[dict]]:
    """(lanes opened, requests that do not extend their lane's latest request, per-request rows)."""
    from prefixbench.simulator.provider import SimulatedProvider

    provider = SimulatedProvider()
    for tick, request in enumerate(read_chat_completions(chat)):
        provider.send(request, tick)
    breaks = sum(not o.extends_previous_conversation for o in provider.observations) - provider.lanes_opened
    rows = [{"prompt_tokens": o.prompt_tokens, "cached_tokens": o.cached_tokens} for o in provider.observations]
    return provider.lanes_opened, breaks, rows


# ---- the run ----------------------------------------------------------------------------


def peer_bin(peers: Path, name: str) -> str | None:
    for candidate in (peers / "bin" / name, peers / "node" / "node_modules" / ".bin" / name):
        if candidate.exists():
            return str(candidate)
    return None


def prefixbench_has(command: str) -> bool:
    done = subprocess.run([sys.executable, "-m", "prefixbench", "--help"], capture_output=True, text=True)
    return f"{{{command}" in done.stdout or f",{command}" in done.stdout


def build_tools(work: Path, peers: Path, spec: InterleavedSpec) -> tuple[list[Tool], dict]:
    """Generate every input, return the tools to time and the agreement figures."""
    python = sys.executable
    pb = [python, "-m", "prefixbench"]
    chat = work / "peer-chat.jsonl"
    size = write_interleaved(chat, spec)
    print(f"peer workload: {spec.num_requests} requests, {size / 1e6:.1f} MB -> {chat}", file=sys.stderr)
    job = f"peer workload ({spec.num_requests} requests, {size / 1e6:.0f} MB)"
    tools = [
        Tool(job, "prefixbench replay", [*pb, "replay", str(chat)], is_reference=True),
        Tool(job, "prefixbench replay --format json", [*pb, "replay", str(chat), "--format", "json"]),
        Tool(job, "python json.loads, every line (bare)", [python, "-c", BARE_JSON, str(chat)]),
    ]
    agreement: dict = {}
    lanes, breaks, predicted = prefixbench_lanes(chat)
    agreement["prefixbench lanes / breaks"] = (lanes, breaks)

    kv = peer_bin(peers, "kvcache-simulator")
    for block in (16, 512):
        name = f"kvcache-simulator ({block}-token blocks)"
        if kv is None:
            tools.append(Tool(job, name, None, note="missing: pip install kvcache-simulator into the peers venv"))
            continue
        trace = work / f"kvcache-{block}.jsonl"
        write_kvcache_trace(chat, trace, block)
        argv = [kv, "run", "--trace", str(trace), "--model", KV_MODEL, "--no-progress", "--format", "json"]
        tools.append(Tool(job, name, argv, note=f"its trace: {trace.stat().st_size / 1e6:.0f} MB"))
        if block == 16:
            done = subprocess.run(argv, capture_output=True, text=True)  # also builds its C++ core once
            if done.returncode == 0:
                result = json.loads(done.stdout)
                measured_from = result["metadata"]["warmupRequests"]
                agreement["kvcache ceiling hit tokens vs prefixbench vllm"] = (
                    result["ceiling"]["hitTokens"],
                    prefixbench_vllm_hits(chat, measured_from),
                )

    if kv is not None:
        # The same job on identical input: kvcache-simulator's own 512-token trace, which
        # ``prefixbench audit`` reads as a block-hash trace (Mooncake's fields plus its own).
        trace = work / "kvcache-512.jsonl"
        same = f"kvcache-simulator's 512-token trace ({trace.stat().st_size / 1e6:.1f} MB), both tools"
        ours = [*pb, "audit", "--input", "mooncake", str(trace), "--format", "json", "--quiet"]
        theirs = [kv, "run", "--trace", str(trace), "--model", KV_MODEL, "--no-progress", "--format", "json"]
        tools += [
            Tool(same, "prefixbench audit --input mooncake", ours, is_reference=True),
            Tool(same, "kvcache-simulator (512-token blocks)", theirs),
            Tool(same, "python json.loads, every line (bare)", [python, "-c", BARE_JSON, str(trace)]),
        ]
        a, b = subprocess.run(theirs, capture_output=True, text=True), subprocess.run(ours, capture_output=True, text=True)
        if a.returncode == 0 and b.returncode == 0:
            ceiling = json.loads(a.stdout)["ceiling"]
            rows = json.loads(b.stdout)["requests"][ceiling["measurementStartRequest"]:]
            agreement["kvcache 512 ceiling vs prefixbench audit (hit, total tokens)"] = (
                (ceiling["hitTokens"], ceiling["totalTokens"]),
                (sum(r["predicted_cache_read"] for r in rows), sum(r["predicted_cache_read"] + r["predicted_uncached"] for r in rows)),
            )

    pcl = peer_bin(peers, "promptcachelint")
    if pcl is None:
        tools.append(Tool(job, "promptcachelint report", None, note="missing: pip install promptcachelint"))
    else:
        trace = work / "promptcachelint.jsonl"
        write_promptcachelint_trace(chat, trace)
        argv = [pcl, "report", str(trace), "--json"]
        tools.append(Tool(job, "promptcachelint report", argv))
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode == 0:
            report = json.loads(done.stdout)
            agreement["promptcachelint sessions / breaks"] = (len(report["sessions"]), report["totals"]["breaks"])

    pcd = peer_bin(peers, "pcd")
    if pcd is None:
        tools.append(Tool(job, "prompt-cache-doctor analyze", None, note="missing: pip install prompt-cache-doctor"))
    else:
        log = work / "pcd.jsonl"
        write_pcd_log(chat, predicted, log)
        tools.append(
            Tool(job, "prompt-cache-doctor analyze", [pcd, "analyze", str(log), "--json"], note="reads reported usage; simulates nothing")
        )

    if CAPTURE.is_file():
        job = f"claude-trace capture (64 requests, {CAPTURE.stat().st_size / 1e6:.1f} MB)"
        tools += [
            Tool(job, "prefixbench replay --input anthropic-capture", [*pb, "replay", "--input", "anthropic-capture", str(CAPTURE)], is_reference=True),
            Tool(job, "python json.loads, every line (bare)", [python, "-c", BARE_JSON, str(CAPTURE)]),
        ]
        if pcl is not None:
            trace = work / "promptcachelint-capture.jsonl"
            write_promptcachelint_capture(CAPTURE, trace)
            tools.append(Tool(job, "promptcachelint report", [pcl, "report", str(trace), "--json"]))
    else:
        print(f"capture not found at {CAPTURE}: its job is skipped", file=sys.stderr)

    if TRANSCRIPTS.is_dir():
        files = sorted(TRANSCRIPTS.glob("*.jsonl"))
        job = f"Claude Code transcripts ({len(files)} sessions, {sum(f.stat().st_size for f in files) / 1e6:.1f} MB)"
        audit = [*pb, "audit", *map(str, files), "--format", "json", "--quiet"]
        if prefixbench_has("audit"):
            tools.append(Tool(job, "prefixbench audit", audit, is_reference=True))
        else:
            tools.append(Tool(job, "prefixbench audit", None, note="not in this build yet"))
        tools.append(Tool(job, "python json.loads, every line (bare)", [python, "-c", BARE_JSON, *map(str, files)]))
        cc = peer_bin(peers, "ccusage")
        if cc is None:
            tools.append(Tool(job, "ccusage claude session", None, note="missing: npm install --prefix <peers>/node ccusage"))
        else:
            home = work / "claude-home" / "projects" / "sample-project"
            home.mkdir(parents=True)
            for f in files:
                shutil.copy(f, home / f.name)
            ccusage = [cc, "claude", "session", "--json", "--offline"]
            env = {"CLAUDE_CONFIG_DIR": str(work / "claude-home")}
            tools.append(Tool(job, "ccusage claude session", ccusage, env=env))
            theirs = subprocess.run(ccusage, capture_output=True, text=True, env={**os.environ, **env})
            ours = subprocess.run(audit, capture_output=True, text=True)
            if theirs.returncode == 0 and ours.returncode == 0:
                sessions = json.loads(theirs.stdout)["sessions"]
                totals = json.loads(ours.stdout)["totals"]
                agreement["ccusage vs prefixbench audit (input, output, cache read, cache write)"] = (
                    tuple(sum(x[k] for x in sessions) for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens")),
                    tuple(totals[k] for k in ("input", "output", "cache_read", "cache_write")),
                )
    return tools, agreement


def table(tools: list[Tool]) -> str:
    """The side-by-side table, one block per job."""
    header = ["job", "tool", "wall s", "cpu s", "peak RSS MB", "wall / prefixbench", "cpu / prefixbench", "RSS / prefixbench", "note"]
    rows: list[list[str]] = []
    for job in dict.fromkeys(t.job for t in tools):
        group = [t for t in tools if t.job == job]
        ref = next((t for t in group if t.is_reference and t.wall is not None), None)
        for n, t in enumerate(group):
            label = job if n == 0 else ""
            if t.argv is None or t.wall is None:
                rows.append([label, t.name, "-", "-", "-", "-", "-", "-", t.note or t.error or ""])
                continue
            wall_ratio = f"{t.wall / ref.wall:.2f}x" if ref else "-"
            cpu_ratio = f"{t.cpu / ref.cpu:.2f}x" if ref else "-"
            rss_ratio = f"{t.peak_kb / ref.peak_kb:.2f}x" if ref else "-"
            rows.append([label, t.name, f"{t.wall:.3f}", f"{t.cpu:.3f}", f"{t.peak_kb / 1024:.0f}", wall_ratio, cpu_ratio, rss_ratio, t.note])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    right = {2, 3, 4, 5, 6, 7}

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def run(repeat: int, peers: Path, spec: InterleavedSpec, keep: Path | None = None) -> dict:
    """Generate, time and compare; returns everything the table shows (for tests/bench)."""
    work = Path(tempfile.mkdtemp(prefix="prefixbench-peers-")) if keep is None else keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        tools, agreement = build_tools(work, peers, spec)
        present = [t for t in tools if t.argv is not None]
        for tool in present:  # warm-up: page cache, .pyc files, kvcache-simulator's compiled core
            run_once(tool, work / "stdout")
            tool.walls.clear()
            tool.cpus.clear()
            tool.peak_kb = 0
        for round_no in range(repeat):
            print(f"round {round_no + 1}/{repeat}", file=sys.stderr)
            for tool in present:
                run_once(tool, work / "stdout")
        return {
            "tools": [
                {"job": t.job, "name": t.name, "wall_s": t.wall, "cpu_s": t.cpu, "peak_rss_mb": t.peak_kb / 1024 if t.walls else None,
                 "reference": t.is_reference, "missing": t.argv is None, "note": t.note, "error": t.error}
                for t in tools
            ],
            "agreement": agreement,
            "table": table(tools),
        }
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def agreement_lines(agreement: dict) -> list[str]:
    lines = []
    if "kvcache ceiling hit tokens vs prefixbench vllm" in agreement:
        theirs, ours = agreement["kvcache ceiling hit tokens vs prefixbench vllm"]
        verdict = "agree" if theirs == ours else f"DIFFER by {ours - theirs:+,}"
        lines.append(f"hit tokens, measured half, 16-token blocks: kvcache-simulator ceiling {theirs:,}, prefixbench vllm {ours:,}: {verdict}")
    key = "kvcache 512 ceiling vs prefixbench audit (hit, total tokens)"
    if key in agreement:
        theirs, ours = agreement[key]
        verdict = "agree" if tuple(theirs) == tuple(ours) else "DIFFER"
        lines.append(f"hit / total tokens, measured half, kvcache's 512-token trace: kvcache-simulator ceiling {tuple(theirs)}, prefixbench audit {tuple(ours)}: {verdict}")
    key = "ccusage vs prefixbench audit (input, output, cache read, cache write)"
    if key in agreement:
        theirs, ours = agreement[key]
        # A count of the audit's totals is null where no request reports it: no figure to agree with.
        verdict = ("not compared: no request reports usage (the audit's '-')" if None in tuple(ours)
                   else "agree" if tuple(theirs) == tuple(ours) else "DIFFER")
        shown = tuple("-" if n is None else n for n in ours)
        lines.append(f"reported tokens of the transcripts (input, output, read, write): ccusage {theirs}, prefixbench audit {shown}: {verdict}")
    lanes, breaks = agreement["prefixbench lanes / breaks"]
    if "promptcachelint sessions / breaks" in agreement:
        sessions, their_breaks = agreement["promptcachelint sessions / breaks"]
        verdict = "agree" if (sessions, their_breaks) == (lanes, breaks) else "DIFFER"
        lines.append(f"conversations / prefix breaks: promptcachelint {sessions} / {their_breaks}, prefixbench lanes {lanes} / {breaks}: {verdict}")
    else:
        lines.append(f"conversations / prefix breaks: prefixbench lanes {lanes} / {breaks} (promptcachelint missing)")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds per tool (default 5; the median is shown)")
    parser.add_argument("--peers", type=Path, default=DEFAULT_PEERS, help=f"the peers' environment (default {DEFAULT_PEERS})")
    parser.add_argument("--sessions", type=int, default=InterleavedSpec().sessions)
    parser.add_argument("--turns", type=int, default=InterleavedSpec().turns)
    parser.add_argument("--json", type=Path, default=None, help="also write the results as JSON here")
    parser.add_argument("--keep", type=Path, default=None, help="generate into this folder and keep it")
    args = parser.parse_args()
    result = run(args.repeat, args.peers, InterleavedSpec(args.sessions, args.turns), args.keep)
    print(result["table"])
    print()
    print("\n".join(agreement_lines(result["agreement"])))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
