"""ttl-auto's group is the unit one TTL setting of the agent covers, read from the folder layout
the agent writes, never from a folder's name (workloads/audit/whatif.py ``_setting_scope``): a
copied Claude Code home is one home whatever its folder is called, and the tasks of a Cline (Roo
Code, Kilo Code) ``tasks/`` folder are one extension's, so one group, not one per task."""

from __future__ import annotations

from msgspec.structs import replace

from prefixbench.workloads.audit.whatif import _setting_scope, _survival_scope, what_if
from prefixbench.workloads.logs.trace import FileSummary
from tests.unit.workloads.test_whatif import idle_lane


def _moved(requests, file: str, tag: str):
    return [replace(r, file=file, prefix=replace(r.prefix, head=f"test:{tag}", node=f"{tag}{r.seq}",
                                                  parent=f"{tag}{r.seq - 1}" if r.seq else None))
            for r in requests]


def _two_lanes(idle_file: str, busy_file: str, fmt: str):
    """One lane idling 20 min (1 h pays on it alone) and one never idle past 5 m (1 h only adds
    its write premium, more than the other lane regains): one pick over both keeps 5 m and saves
    nothing, a pick per lane saves what 1 h saves on the idle one."""
    idle, _ = idle_lane(20 * 60_000)
    busy, _ = idle_lane(60_000)
    requests = _moved(idle, idle_file, "i") + _moved(busy, busy_file, "b")
    return requests, [FileSummary(idle_file, fmt, 0), FileSummary(busy_file, fmt, 0)]


def test_a_claude_code_home_saves_the_same_whatever_its_folder_is_called() -> None:
    saved, details = [], []
    for home in ("/u/.claude/projects", "/u/cc/projects.bak-20260511-072525", "/u/backup"):
        requests, sums = _two_lanes(f"{home}/-w-a/s1.jsonl", f"{home}/-w-b/s2.jsonl", "claude-code")
        (auto,) = what_if(requests, sums, ["ttl-auto"])
        saved.append(auto.saved_usd)
        details.append(auto.detail)
    assert saved[0] == saved[1] == saved[2] == 0, (saved, details)
    for detail in details:  # one home: one pick over both projects' lanes, the home not named
        assert "5m on the 2 main-session lane(s))" in detail, detail
        assert "upper bound, not a setting" in detail, detail


def test_a_subagent_in_its_session_folder_is_of_its_home_not_its_project() -> None:
    # Claude Code writes a subagent's transcript as <session>/agent-<id>.jsonl too (pshung's
    # personal_git: agent-a39a72a3f183bee41.jsonl, isSidechain, beside no subagents/ folder): the
    # home's setting covers it, as it covers the session; not its project folder, a unit apart.
    session = "1e63ef6a-0c1d-4a4e-9d2b-5f0e8c7a6b31"
    requests, sums = _two_lanes("/u/cc/-w-a/s1.jsonl", f"/u/cc/-w-b/{session}/agent-a39a72a3f183bee41.jsonl",
                                "claude-code")
    (auto,) = what_if(requests, sums, ["ttl-auto"])
    assert "5m on the 2 main-session lane(s))" in auto.detail, auto.detail
    assert "/u/cc/-w-b" not in auto.detail, auto.detail
    assert auto.saved_usd == 0


def test_the_tasks_of_a_cline_tasks_folder_fall_into_one_group() -> None:
    tasks = "/g/saoudrizwan.claude-dev/tasks"
    requests, sums = _two_lanes(f"{tasks}/1700000000001/api_conversation_history.json",
                                f"{tasks}/1700000000002/api_conversation_history.json", "cline")
    (auto,) = what_if(requests, sums, ["ttl-auto"])
    assert "5m on the 2 main-session lane(s))" in auto.detail, auto.detail
    assert " of cline in " not in auto.detail, auto.detail
    assert auto.saved_usd == 0  # the per-task pick is only the hindsight upper bound
    assert "upper bound, not a setting" in auto.detail, auto.detail


def test_two_homes_still_get_their_own_picks_whatever_their_names() -> None:
    requests, sums = _two_lanes("/a/projects.old/-w/s1.jsonl", "/b/claude-copy/-w/s2.jsonl", "claude-code")
    (auto,) = what_if(requests, sums, ["ttl-auto"])
    assert "1h on the 1 main-session lane(s) of claude-code in /a/projects.old" in auto.detail, auto.detail
    assert "5m on the 1 main-session lane(s) of claude-code in /b/claude-copy" in auto.detail, auto.detail
    assert auto.saved_usd > 0


def test_the_unit_is_read_from_each_agents_layout() -> None:
    # Claude Code: a subagent lies two folders below its session's project folder.
    assert _setting_scope("/u/copy/-w/s.jsonl", "claude-code") == "/u/copy"
    assert _setting_scope("/u/copy/-w/s/subagents/agent-a1.jsonl", "claude-code") == "/u/copy"
    # ... one in its session's folder (no subagents/) one below it; an older one beside its session.
    session = "1e63ef6a-0c1d-4a4e-9d2b-5f0e8c7a6b31"
    assert _setting_scope(f"/u/copy/-w/{session}/agent-a1.jsonl", "claude-code") == "/u/copy"
    assert _setting_scope(f"/u/copy/-w/{session}/agent-acompact-1f.jsonl", "claude-code") == "/u/copy"
    assert _setting_scope("/u/copy/-w/agent-a1.jsonl", "claude-code") == "/u/copy"
    # ... a workflow run's agent four below it (and in a copy that swaps its session and subagents folders).
    run = f"/u/copy/-w/{session}/subagents/workflows/wf_4af3c93a-ada/agent-a0b8e04.jsonl"
    assert _setting_scope(run, "claude-code") == "/u/copy"
    assert _setting_scope(f"/u/copy/-w/subagents/{session}/workflows/wf_4af3c93a-ada/agent-a0b8.jsonl",
                          "claude-code") == "/u/copy"
    assert _survival_scope(run, {run: "claude-code"}) == "/u/copy"
    # keep-alive's survival history reads the same unit.
    assert _survival_scope(f"/u/copy/-w/{session}/agent-a1.jsonl", {f"/u/copy/-w/{session}/agent-a1.jsonl": "claude-code"}) == (
        "/u/copy")
    # Codex: dated sessions and the flat archive of one home, whatever the home is called.
    assert _setting_scope("/u/codex-copy/sessions/2026/05/04/rollout-1.jsonl", "codex") == "/u/codex-copy"
    assert _setting_scope("/u/codex-copy/archived_sessions/rollout-2.jsonl", "codex") == "/u/codex-copy"
    # pi: one home's sessions folder; OpenClaw (written as pi): one agent, whose params set it.
    assert _setting_scope("/u/.pi/agent/sessions/--w--/s.jsonl", "pi") == "/u/.pi/agent/sessions"
    assert _setting_scope("/u/.openclaw/agents/main/sessions/s.jsonl", "pi") == "/u/.openclaw/agents/main"
    # Cline, Roo Code, Kilo Code: the folder holding the task folders.
    assert _setting_scope("/g/rooveterinaryinc.roo-cline/tasks/t1/ui_messages.json", "cline") == (
        "/g/rooveterinaryinc.roo-cline/tasks")
    # A file given alone, relative: no folder above it, one unit.
    assert _setting_scope("s.jsonl", "claude-code") == ""


def test_a_codex_home_audited_from_inside_sessions_is_one_scope_not_one_a_month() -> None:
    """``cd ~/.codex/sessions && prefixbench audit .`` gives ``2026/06/10/r.jsonl`` (4 parts): the
    date was not read, and the scope became ``2026/06``, one home per month."""
    assert _setting_scope("2026/05/30/a.jsonl", "codex") == _setting_scope("2026/06/01/b.jsonl", "codex") == ""
    assert _setting_scope("sessions/2026/05/30/a.jsonl", "codex") == _setting_scope("sessions/2026/06/01/b.jsonl", "codex")


def test_a_windows_path_is_split_at_backslashes_too() -> None:
    home = "C:\\Users\\u\\.codex"
    assert _setting_scope(f"{home}\\sessions\\2026\\05\\30\\a.jsonl", "codex") == home
    assert _setting_scope(f"{home}\\sessions\\2026\\06\\01\\b.jsonl", "codex") == home
    assert _setting_scope("C:\\u\\copy\\-w\\s\\subagents\\agent-a1.jsonl", "claude-code") == "C:\\u\\copy"
