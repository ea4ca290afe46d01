"""``audit --jobs N``: the audit's pass (prediction, explanation, pricing, rows) split into parts
that share no state, each predicted in a forked worker (workloads/audit/core.py ``pass_parts``),
the output byte for byte the same as one pass over the whole log."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit import core
from prefixbench.workloads.audit.core import Baseline, audit_requests, load_trace
from prefixbench.simulator.price_lookup import Prices
from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest

from .fixtures import Transcript, cc_usage, write_jsonl
from .test_audit_jobs import _folder

HEAD = "claude-code:main:claude-sonnet-4-5:2.1.0"
MIN = 60_000
DAY = 24 * 60 * MIN
T0 = 1_780_000_000_000
CC21 = Path(__file__).parent / "data" / "claude-code-2.1"


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> list[list[core.PassPart] | None]:
    """Parts made for any log, however small or lopsided; the parts each audit made, in a list."""
    monkeypatch.setattr(core, "PARALLEL_PASS_AT_LEAST", 0)
    monkeypatch.setattr(core, "LARGEST_PART", 1.0)
    made: list[list[core.PassPart] | None] = []
    parts = core.pass_parts

    def spy(inputs, jobs):
        found = parts(inputs, jobs)
        made.append(found)
        return found

    monkeypatch.setattr(core, "pass_parts", spy)
    return made


def _call(file: str, seq: int, sent: int, read: int, write: int, parent: str | None, head: str = HEAD) -> TraceRequest:
    return TraceRequest(
        file=file, line=seq + 1, lane="main", lane_kind="main", seq=seq, sent_ms=T0 + sent, ready_ms=T0 + sent + 2_000,
        provider="anthropic", model="claude-sonnet-4-5", usage=Usage(cache_read=read, cache_write_5m=write, uncached=3),
        prefix=Prefix(head, f"{file}#{seq}", parent),
    )


def _sessions() -> tuple[list[TraceRequest], list[FileSummary]]:
    """Under one head the account does not keep warm (a start read 0): a and b a day apart (the
    head's entry expired between them: two stretches), c resumed from a's last call, and d under
    another head at the same time as a."""
    requests = [
        _call("a.jsonl", 0, 0, 12_000, 8_000, None),
        _call("a.jsonl", 1, MIN, 20_000, 1_000, "a.jsonl#0"),
        _call("c.jsonl", 0, 3 * MIN, 21_000, 500, "a.jsonl#1"),
        _call("d.jsonl", 0, 2 * MIN, 0, 9_000, None, head="claude-code:main:claude-sonnet-4-5:2.2.0"),
        _call("b.jsonl", 0, DAY, 0, 12_500, None),
        _call("b.jsonl", 1, DAY + MIN, 12_500, 900, "b.jsonl#0"),
    ]
    return requests, [FileSummary(f, "claude-code", 2) for f in ("a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl")]


def test_parts_keep_resumed_sessions_together_and_split_a_head_where_its_entry_expired(split_small) -> None:
    requests, summaries = _sessions()
    base_1, base_2 = Baseline(), Baseline()
    one = audit_requests(requests, summaries, Prices(None), baseline=base_1)
    two = audit_requests(requests, summaries, Prices(None), baseline=base_2, jobs=3)
    (parts,) = split_small
    assert parts is not None
    # Send order: a#0, a#1, d#0, c#0, b#0, b#1. a and its resumption c share a's nodes; b, a
    # day later, finds the head's entry a stored expired (its first place is marked so); d is under another head.
    by_part = sorted(sorted({requests[i].file for i in (two_positions(requests, summaries)[k] for k in p.order)}) for p in parts)
    assert by_part == [["a.jsonl", "c.jsonl"], ["b.jsonl"], ["d.jsonl"]]
    (b_part,) = [p for p in parts if len(p.expire)]
    assert [requests[two_positions(requests, summaries)[k]].file for k in b_part.expire] == ["b.jsonl"]
    assert one == two
    assert bytes(base_1.preds.values) == bytes(base_2.preds.values)
    b_start = next(row for row in two.rows if row.file == "b.jsonl" and row.line == 1)
    # The head a sent was seen before b (a whole day), and its entry expired: a loss, put down to the TTL.
    assert (b_start.expected_cache_read, b_start.cause) == (12_000, "ttl-expired")


def two_positions(requests: list[TraceRequest], summaries: list[FileSummary]) -> list[int]:
    return list(core.clock_by_position(requests, summaries)[2])


def test_without_the_expired_head_a_later_part_would_explain_its_start_otherwise(split_small, monkeypatch) -> None:
    """The fixture above needs what the parts are given: the head's entry found expired, and the
    heads sent before (a part without them says something else of b's start)."""
    requests, summaries = _sessions()
    one = audit_requests(requests, summaries, Prices(None))
    parts = core.pass_parts
    monkeypatch.setattr(core, "pass_parts", lambda inputs, jobs: [core.PassPart(p.order, frozenset()) for p in parts(inputs, jobs)])
    forgot_expiry = audit_requests(requests, summaries, Prices(None), jobs=3)
    monkeypatch.setattr(core, "pass_parts", parts)
    monkeypatch.setattr(core, "_head_firsts", lambda requests, positions: [])
    forgot_heads = audit_requests(requests, summaries, Prices(None), jobs=3)
    row = lambda result: next((r.expected_cache_read, r.cause) for r in result.rows if r.file == "b.jsonl" and r.line == 1)  # noqa: E731
    assert row(one) == (12_000, "ttl-expired")
    assert row(forgot_expiry) != row(one) and row(forgot_heads) != row(one)


def test_a_head_whose_lifetime_counts_from_the_answers_end_is_not_split_before_it_expires(split_small) -> None:
    """Qwen's 5 min count from the end of the response that wrote the entry (``ttl_from='end'``):
    a's first answer ran 4 min, so b's start 5.5 min after it began still reads the head. The
    parts split where max(send, first token) + 5 min had passed, and b's part found the entry
    expired: a miss that one pass does not see (jobs 1 and 3 differed)."""
    def call(file: str, seq: int, sent: int, took: int, read: int, parent: str | None) -> TraceRequest:
        return TraceRequest(file=file, line=seq + 1, lane="main", lane_kind="main", seq=seq, sent_ms=T0 + sent,
                            ready_ms=T0 + sent + 1_000, done_ms=T0 + sent + took, provider="qwen", model="qwen3-coder-plus",
                            usage=Usage(cache_read=read, uncached=3_000), prefix=Prefix("qwen-code:main", f"{file}#{seq}", parent))

    requests = [call("a.jsonl", 0, 0, 4 * MIN, 0, None), call("b.jsonl", 0, 5 * MIN + 31_000, 30_000, 2_000, None),
                call("a.jsonl", 1, 60 * MIN, 30_000, 2_000, "a.jsonl#0")]
    summaries = [FileSummary(f, "gemini-cli", 2) for f in ("a.jsonl", "b.jsonl")]
    one = audit_requests(requests, summaries, Prices(None))
    two = audit_requests(requests, summaries, Prices(None), jobs=3)
    b_start = next(row for row in one.rows if row.file == "b.jsonl")
    assert b_start.predicted_cache_read == 2_000  # (one pass: the entry lives to a's end + 5 min)
    assert two == one


def test_a_head_kept_warm_by_the_account_joins_no_sessions(split_small) -> None:
    requests, summaries = _sessions()
    # Every cold point reads the same 12,000: the account keeps the head warm, no request reads its entry.
    requests[4] = _call("b.jsonl", 0, DAY, 12_000, 500, None)
    requests[3] = _call("d.jsonl", 0, 2 * MIN, 12_000, 500, None)
    one = audit_requests(requests, summaries, Prices(None))
    two = audit_requests(requests, summaries, Prices(None), jobs=4)
    (parts,) = split_small
    assert parts is not None and not any(p.expire for p in parts)
    # c resumes a's last call: they share its chain node, the only link between them here.
    files = sorted(sorted({requests[two_positions(requests, summaries)[k]].file for k in p.order}) for p in parts)
    assert files == [["a.jsonl", "c.jsonl"], ["b.jsonl"], ["d.jsonl"]]
    assert one == two


def test_overlapping_sessions_under_a_head_stay_in_one_part(split_small) -> None:
    requests, summaries = _sessions()
    requests[4] = _call("b.jsonl", 0, 4 * MIN, 0, 12_500, None)  # inside the TTL of a's writes
    requests[5] = _call("b.jsonl", 1, 5 * MIN, 12_500, 900, "b.jsonl#0")
    one = audit_requests(requests, summaries, Prices(None))
    two = audit_requests(requests, summaries, Prices(None), jobs=2)
    (parts,) = split_small
    files = [{requests[two_positions(requests, summaries)[k]].file for k in p.order} for p in parts]
    assert {"a.jsonl", "b.jsonl", "c.jsonl"} in files
    assert one == two


def _mixed_folder(tmp_path: Path) -> Path:
    """Every format's fixture, a resumed Claude Code session and a forked Codex rollout (two
    families), a Claude Code 2.1 session with its compaction lane in a subagents folder, a
    session with a sidechain and a subagent file, and two sessions a day apart under one head."""
    root = _folder(tmp_path)
    shutil.copytree(CC21, root / "cc21")
    main_ = Transcript("sess")
    main_.user("go", "2025-09-05T00:00:00.000Z", root=True)
    main_.assistant("m1", "2025-09-05T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    main_.user("more", "2025-09-05T00:00:10.000Z")
    main_.assistant("m2", "2025-09-05T00:00:12.000Z", [cc_usage(3, 500, 14000, 9)])
    side = Transcript("sess", sidechain=True)
    side.user("task", "2025-09-05T00:00:03.000Z", root=True)
    side.assistant("sc1", "2025-09-05T00:00:04.000Z", [cc_usage(3, 2000, 10000, 9)])
    write_jsonl(root / "project" / "sess.jsonl", main_.lines + side.lines)
    agent = Transcript("agent", version="1.0.98", sidechain=True)
    agent.user("subtask", "2025-09-05T00:00:05.000Z", root=True)
    agent.assistant("a1", "2025-09-05T00:00:06.000Z", [cc_usage(3, 2000, 10000, 9)])
    write_jsonl(root / "project" / "sess" / "subagents" / "agent-abc.jsonl", agent.lines)
    for day, read in ((6, 10000), (7, 0)):
        t = Transcript(f"day{day}")
        t.user("go", f"2025-09-0{day}T00:00:00.000Z", root=True)
        t.assistant(f"d{day}a", f"2025-09-0{day}T00:00:02.000Z", [cc_usage(3, 15000 - read, read, 9)])
        t.user("more", f"2025-09-0{day}T00:01:00.000Z")
        t.assistant(f"d{day}b", f"2025-09-0{day}T00:01:02.000Z", [cc_usage(3, 400, 15000, 9)])
        write_jsonl(root / "project" / f"day{day}.jsonl", t.lines)
    return root


@pytest.mark.parametrize("options", [("--format", "json"), (), ("--what-if", "all"), ("--format", "json", "--what-if", "all")])
def test_jobs_2_prints_the_same_bytes_as_jobs_1_with_the_pass_in_parts(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], split_small, options: tuple[str, ...],
) -> None:
    folder = _mixed_folder(tmp_path)
    outputs = []
    for jobs in ("1", "2"):
        code = main(["audit", str(folder), "--quiet", "--jobs", jobs, *options])
        captured = capfd.readouterr()
        outputs.append((code, captured.out, captured.err))
    assert outputs[0][0] == 0 and outputs[0] == outputs[1]
    (parts,) = [p for p in split_small if p is not None]
    assert len(parts) == 2 and any(p.expire for p in parts)


def test_the_out_folder_is_the_same_with_the_pass_in_parts(tmp_path: Path, capfd: pytest.CaptureFixture[str], split_small) -> None:
    folder = _mixed_folder(tmp_path)
    for jobs in ("1", "2"):
        assert main(["audit", str(folder), "--quiet", "--jobs", jobs, "--out", str(tmp_path / f"out{jobs}")]) == 0
    capfd.readouterr()
    names = sorted(p.name for p in (tmp_path / "out1").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "out2").iterdir()) and "audit.json" in names
    for name in names:
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes(), name


def test_the_parts_of_the_mixed_folder_cover_every_request_once(tmp_path: Path, split_small) -> None:
    folder = _mixed_folder(tmp_path)
    requests, summaries = load_trace([folder])
    audit_requests(requests, summaries, Prices(None), jobs=2)
    (parts,) = split_small
    assert parts is not None
    places = sorted(k for p in parts for k in p.order)
    assert places == list(range(len(requests)))
    positions = two_positions(requests, summaries)
    files = [{Path(requests[positions[k]].file).name for k in p.order} for p in parts]
    # A resumed session and the one it resumes, a Codex fork and its source, a compaction lane
    # and the main lane it summarizes: one part each. (A Claude Code subagent file starts its own
    # chain under a head of its own, here one the account keeps warm: it shares nothing.)
    together = [{"a.jsonl", "b.jsonl"}, {"rollout-1.jsonl", "rollout-2.jsonl"},
                {"7c1e2f40-9a1d-4b53-8e0f-2d6a51c0b9e3.jsonl", "agent-acompact-5e21a9.jsonl"}]
    for pair in together:
        assert any(pair <= names for names in files), pair



def test_a_session_resumed_under_another_head_joins_the_one_it_resumes(split_small) -> None:
    """e resumes a's last call a minute later under another head (no head's stretch ties them):
    the chain node they share keeps them in one part, where e reads what a left cached."""
    requests, summaries = _sessions()
    requests.append(_call("e.jsonl", 0, 2 * MIN, 21_000, 500, "a.jsonl#1", head="claude-code:main:claude-sonnet-4-5:2.3.0"))
    summaries.append(FileSummary("e.jsonl", "claude-code", 1))
    one = audit_requests(requests, summaries, Prices(None))
    two = audit_requests(requests, summaries, Prices(None), jobs=4)
    (parts,) = split_small
    assert parts is not None
    files = [{requests[two_positions(requests, summaries)[k]].file for k in p.order} for p in parts]
    assert any({"a.jsonl", "e.jsonl"} <= names for names in files)
    assert one == two
