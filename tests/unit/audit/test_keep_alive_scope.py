"""keep-alive's survival bound reads the history of the unit the agent's TTL setting covers
(workloads/audit/whatif.py ``_survival_scope``: ``_setting_scope``, read from the folders the
agent writes), never a folder's name. Before, it read the history of ``_source_of`` (the agent
home found by folder NAMES): a Claude Code home copied as ``projects.bak-.../`` split into one
source per project folder, so one project's survivals no longer set the bound of another's gap,
and the copy audited otherwise than the same home under ``.claude/projects/``."""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.audit.whatif import _survival_scope, what_if
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

NOT_BRIDGED = "1 idle gap(s) past the TTL not bridged"


def _claude(path: Path, calls: list[tuple[str, int, int]]) -> Path:
    """A Claude Code session: per ``(hh:mm, read, write)``, a user's text then the response two
    seconds on (20 tokens uncached, 40 out, the writes at 5 m)."""
    t = Transcript(path.stem)
    for n, (at, read, write) in enumerate(calls):
        t.user(f"ask {n}", f"2025-09-03T{at}:00.000Z", root=n == 0)
        t.assistant(f"{path.stem}-r{n}", f"2025-09-03T{at}:02.000Z", [cc_usage(20, write, read, 40)])
    return write_jsonl(path, t.lines)


def _keep(home: Path):
    # Project a: two 12 min gaps read in full (a bound of 12 min). Project b, later: a 10 min gap
    # with nothing read. One home: b's gap is under the bound its history shows, not bridged.
    a = _claude(home / "-w-a" / "s1.jsonl", [("00:00", 0, 13_000), ("00:12", 13_000, 60), ("00:24", 13_060, 60)])
    b = _claude(home / "-w-b" / "s2.jsonl", [("00:30", 0, 13_000), ("00:40", 0, 13_100)])
    (keep,) = what_if(*load_trace([a, b]), ["keep-alive"])
    return keep


def test_a_claude_code_home_keeps_alive_the_same_whatever_its_folder_is_called(tmp_path: Path) -> None:
    found = {name: _keep(tmp_path / name) for name in (".claude/projects", "cc/projects.bak-20261201-072525", "backup")}
    real = found[".claude/projects"]
    assert NOT_BRIDGED in real.detail, real.detail
    for name, keep in found.items():
        assert (keep.saved_usd, keep.detail.replace(str(tmp_path / name), "HOME")) == (
            real.saved_usd, real.detail.replace(str(tmp_path / ".claude/projects"), "HOME")), name


def test_two_copied_homes_keep_their_histories_apart(tmp_path: Path) -> None:
    # Two homes copied side by side into a folder called ``projects`` (a backup of two
    # machines): b's home has no survivals, so its gap is bridged. Before, the folder's NAME made
    # ``backups/projects`` one source, and a's survivals left b's gap unbridged.
    a = _claude(tmp_path / "backups" / "projects" / "laptop" / "-w-a" / "s1.jsonl",
                [("00:00", 0, 13_000), ("00:12", 13_000, 60), ("00:24", 13_060, 60)])
    b = _claude(tmp_path / "backups" / "projects" / "desktop" / "-w-b" / "s2.jsonl",
                [("00:30", 0, 13_000), ("00:40", 0, 13_100)])
    (keep,) = what_if(*load_trace([a, b]), ["keep-alive"])
    assert "not bridged" not in keep.detail, keep.detail
    assert "bridge 3 idle gap(s)" in keep.detail, keep.detail  # (a's two, with no history yet, and b's)


def test_accounts_kept_flat_in_one_folder_are_pooled_and_the_detail_names_that_folder(tmp_path: Path) -> None:
    # Transcripts copied flat per account (dump/alice/, dump/bob/) are laid out as one home's two
    # projects, and no record names an account: one history, so alice's survivals set the bound
    # bob's gap is judged by. The detail and the assumption say which folder was pooled, so the
    # user can audit each account's folder on its own.
    dump = tmp_path / "dump"
    a = _claude(dump / "alice" / "s1.jsonl", [("00:00", 0, 13_000), ("00:12", 13_000, 60), ("00:24", 13_060, 60)])
    b = _claude(dump / "bob" / "s2.jsonl", [("00:30", 0, 13_000), ("00:40", 0, 13_100)])
    (keep,) = what_if(*load_trace([a, b]), ["keep-alive"])
    assert NOT_BRIDGED in keep.detail, keep.detail
    assert f"every earlier gap of the model in {dump} (one history: every transcript under that folder" in keep.detail, (
        keep.detail)
    assert "earlier gaps in one home or source folder (its logs pooled)" in keep.assumption
    assert "source" not in keep.detail and "same source" not in keep.assumption
    # Each account's folder audited on its own: bob's history has no survivals, his gap is bridged.
    (bob,) = what_if(*load_trace([b]), ["keep-alive"])
    assert "not bridged" not in bob.detail and "bridge 1 idle gap(s)" in bob.detail, bob.detail


def test_the_scope_is_the_settings_unit_of_the_files_format() -> None:
    formats = {"/u/copy/-w/s.jsonl": "claude-code", "/u/copy/-w/s/subagents/agent-a1.jsonl": "claude-code",
               "/g/rooveterinaryinc.roo-cline/tasks/t1/ui_messages.json": "cline"}
    assert _survival_scope("/u/copy/-w/s.jsonl", formats) == "/u/copy"
    assert _survival_scope("/u/copy/-w/s/subagents/agent-a1.jsonl", formats) == "/u/copy"
    # A Cline-family extension's tasks are one storage's (before: one source per task folder).
    assert _survival_scope("/g/rooveterinaryinc.roo-cline/tasks/t1/ui_messages.json", formats) == (
        "/g/rooveterinaryinc.roo-cline/tasks")
    # A file of no known format: its source, as before.
    assert _survival_scope("/h/.gemini/tmp/abc123/chats/s.json", {}) == "/h/.gemini/tmp"
