"""The loss split does not depend on hypotheticals: a miss is moved between classes only by its
own fixes (what its cause points at, keep-alive where it may bridge its gap), never by a
--what-if the user asked for or a fix another file of the run made re-simulated, and only where
the fix reads back at least half of what it lost (workloads/audit/advice.py)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

from prefixbench.workloads.audit.advice import Resimulated, advise, follow_resimulation, rank
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import what_if
from tests.unit.audit.fixtures import cc_usage
from tests.unit.audit.test_advice_honesty import _ran
from tests.unit.audit.test_advice_settable import _two
from tests.unit.audit.test_codex_turns import ANSWER, USER, _usage, _write


def _codex_30m(tmp_path: Path) -> Path:
    """A Codex rollout on gpt-4o (one retention, in_memory) idle 30 minutes: a ttl-expired miss
    past the model's one lifetime, unavoidable by its cause."""
    folder = tmp_path / "codex"
    folder.mkdir()
    items = [("10:00:01.000", "message", USER), ("10:00:02.000", "message", ANSWER),
             ("10:00:03.000", "usage", _usage(20_000, 0)),
             ("10:30:00.000", "message", USER), ("10:30:03.000", "usage", _usage(20_500, 0))]
    return _write(folder / "r.jsonl", items, model="gpt-4o")


def _claude_1h20m(tmp_path: Path) -> Path:
    """A Claude Code session idle 1h20m after a 1 h write: keep-alive is its own fix."""
    folder = tmp_path / "claude"
    folder.mkdir()
    return _two(folder, "long", "01:20:00", cc_usage(3, 20_000, 0, 40, write_1h=20_000),
                cc_usage(3, 20_300, 0, 40, write_1h=20_300))


def _advise(paths: list[Path], what_ifs: tuple[str, ...] = ()):
    trace = load_trace(paths)
    result = run_audit(paths, trace=trace)
    return advise(result, trace, what_ifs=what_if(*trace, list(what_ifs)) if what_ifs else None)


def _expired(result, name: str):
    (row,) = [row for row in result.rows if row.cause == "ttl-expired" and row.file.endswith(name)]
    return row


def test_a_what_if_asked_for_does_not_move_a_miss_between_classes(tmp_path: Path) -> None:
    # The miss read unavoidable alone and recoverable with --what-if keep-alive: the split
    # followed whatever the user asked to re-simulate.
    path = _codex_30m(tmp_path)
    alone = _advise([path])
    asked = _advise([path], ("keep-alive",))
    assert _expired(alone, "r.jsonl").loss_class == "unavoidable"
    assert _expired(asked, "r.jsonl").loss_class == "unavoidable"
    assert asked.loss_split == alone.loss_split


def test_an_unrelated_file_in_the_run_does_not_move_a_miss_between_classes(tmp_path: Path) -> None:
    # Audited with a Claude Code file whose own gap keep-alive bridges, the Codex miss read
    # recoverable: keep-alive, re-simulated for the other file, read it too.
    codex = _codex_30m(tmp_path)
    alone = _advise([codex])
    both = _advise([codex, _claude_1h20m(tmp_path)])
    assert _expired(both, "r.jsonl").loss_class == _expired(alone, "r.jsonl").loss_class == "unavoidable"
    # The Claude Code miss is still its own fix's evidence.
    assert _expired(both, "long.jsonl").loss_class == "recoverable"


def test_a_fix_that_reads_back_a_sliver_of_a_miss_does_not_recover_it(tmp_path: Path) -> None:
    # "recovers" was any read above the logged and predicted one: one token more of a 20,000-token
    # miss moved its whole loss to recoverable and credited keep-alive with it.
    path = _claude_1h20m(tmp_path)
    result = run_audit([path], trace=load_trace([path]))
    miss = _expired(result, "long.jsonl")
    assert miss.lost_tokens and miss.lost_tokens > 1_000

    def read(tokens: int) -> Resimulated:
        change = SimpleNamespace(file=miss.file, lane=miss.lane, index=miss.index, saved_usd=Decimal("0.001"),
                                 priced=True, reported_read=0, counterfactual_read=tokens)
        return Resimulated({"keep-alive": _ran("keep-alive", "0.001", (change,))}, {})

    base = max(0, miss.predicted_cache_read)
    sliver = read(base + 1)
    followed = follow_resimulation(result, sliver)
    assert _expired(followed, "long.jsonl").loss_class == "unavoidable"
    assert followed.loss_split == result.loss_split
    assert not any(rec.lost_usd for rec in rank(followed, sliver))
    # Half of what it lost is enough.
    half = read(base + miss.lost_tokens // 2 + 1)
    assert _expired(follow_resimulation(result, half), "long.jsonl").loss_class == "recoverable"
