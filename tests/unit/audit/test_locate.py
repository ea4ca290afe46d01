"""Breaks located on a transcript's logged history (workloads/audit/locate.py, evidence ``position``).

Each fixture is a small Claude Code or pi log whose transcript shows the change: a system
reminder, a date, a file's content, a tool list change, more new blocks than Anthropic's
20-block lookback. The break must land on the right message with the right likely change; a
break the log cannot explain stays ``unexplained`` with its reason.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.reports.audit import audit_markdown, audit_table, request_record
from prefixbench.workloads.audit.core import AuditRow, run_audit
from prefixbench.workloads.audit.locate import Histories, Location, locate, short_where
from prefixbench.workloads.logs.formats import FORMATS
from prefixbench.workloads.logs.history import EXCERPT_CHARS, make_message
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.trace import Prefix, TraceRequest
from tests.unit.audit.fixtures import cc_usage, write_jsonl

MODEL = "claude-sonnet-4-20250514"


class _Log:
    """A Claude Code transcript with one line per message (each assistant response one line)."""

    def __init__(self) -> None:
        self.lines: list[dict] = []
        self.last: str | None = None
        self.second = 0

    def _ts(self) -> str:
        self.second += 5
        return f"2025-09-03T10:{self.second // 60:02d}:{self.second % 60:02d}.000Z"

    def _add(self, kind: str, **fields: object) -> None:
        uuid = f"u{len(self.lines) + 1}"
        self.lines.append({"parentUuid": self.last, "isSidechain": False, "sessionId": "s1", "version": "2.1.3",
                           "type": kind, "uuid": uuid, "timestamp": self._ts(), **fields})
        self.last = uuid

    def user(self, content: object, **extra: object) -> None:
        self._add("user", message={"role": "user", "content": content}, **extra)

    def tool_result(self, text: str, **extra: object) -> None:
        self.user([{"type": "tool_result", "tool_use_id": "t", "content": text}], **extra)

    def assistant(self, request: str, read: int, write: int, text: str = "ok") -> None:
        self._add("assistant", requestId=request, message={
            "id": f"msg_{request}", "role": "assistant", "model": MODEL,
            "content": [{"type": "text", "text": text}], "usage": cc_usage(3, write, read, 50)})

    def attachment(self, kind: str) -> None:
        self._add("attachment", attachment={"type": kind, "addedNames": ["mcp__db__query"]})

    def audit(self, tmp_path: Path) -> list[AuditRow]:
        return list(run_audit([write_jsonl(tmp_path / "s1.jsonl", self.lines)]).rows)


def _opening(log: _Log) -> None:
    """Three requests that grow the cache as they should (read = previous read + write)."""
    log.user("fix the failing test in parser.py")
    log.assistant("r1", 0, 10_000)
    log.tool_result("def parse(x):\n    return x\n" * 200)
    log.assistant("r2", 10_000, 2_000)
    log.tool_result("all good " * 100)
    log.assistant("r3", 12_000, 1_000)


def test_a_system_reminder_in_the_stretch_that_changed(tmp_path: Path) -> None:
    log = _Log()
    log.user("fix the failing test in parser.py")                                     # message 1
    log.assistant("r1", 0, 10_000)                                                     # 2
    log.tool_result("def parse(x):\n    return x\n" * 200)                            # 3
    log.assistant("r2", 10_000, 2_000)                                                 # 4
    log.user("<system-reminder>The task list is empty.</system-reminder> go on")       # 5
    log.assistant("r3", 12_000, 1_000)                                                 # 6
    log.user("and the other file")                                                     # 7
    log.assistant("r4", 12_003, 2_000)  # stopped at r2's entry: something in r3's stretch changed
    row = log.audit(tmp_path)[-1]
    assert (row.cause, row.evidence, row.lost_tokens) == ("messages-changed", "position", 13_000 - 12_003)
    # r3's stretch (12,003 to 13,003): r2's response, then the reminder. The read stopped at its
    # start, in message 4, and the reminder one message on is the likely change.
    assert 'inside message 4 (assistant, about token 12,003 of 14,006 of the prompt): "ok"' in row.detail
    assert 'likely change: message 5 (user: "<system-reminder>The task list is..."' in row.detail
    assert "holds a system reminder" in row.detail
    assert row.location == row.detail


def test_a_date_in_the_message_the_read_stopped_in(tmp_path: Path) -> None:
    log = _Log()
    _opening(log)
    log.user("Today's date is 2025-09-03. " + "Carry on with the parser. " * 300)    # message 7: most of r4's stretch
    log.assistant("r4", 13_000, 800)
    log.user("next")
    log.assistant("r5", 13_500, 2_000)  # stopped inside message 7
    row = log.audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("messages-changed", "position")
    assert "inside message 7 (user, about token 13,500" in row.detail and "Today's date is 2025-09-03" in row.detail
    assert "likely change: it holds a date or time" in row.detail


def test_a_file_re_read(tmp_path: Path) -> None:
    log = _Log()
    log.user("look at parser.py")
    log.assistant("r1", 0, 10_000)
    log.tool_result("     1\tdef parse(x):\n" * 300, toolUseResult={"type": "text", "file": {"filePath": "/p/parser.py"}})
    log.assistant("r2", 10_000, 3_000)
    log.user("thanks")
    log.assistant("r3", 13_000, 500)
    log.user("again")
    log.assistant("r4", 11_000, 2_600)  # stopped inside the file's content
    row = log.audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("messages-changed", "position")
    assert "inside message 3 (user, about token 11,000" in row.detail and "it holds a file's content" in row.detail


def test_a_tool_list_change_lands_in_the_head(tmp_path: Path) -> None:
    log = _Log()
    _opening(log)
    log.attachment("deferred_tools_delta")
    log.user("use the database tool")
    log.assistant("r4", 0, 13_900)  # nothing read: the tools, sent first, changed
    row = log.audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("tools-changed", "position")
    assert "inside the unlogged head (system prompt and tools), at token 0" in row.detail
    assert "the tool list changed (logged: deferred_tools_delta)" in row.detail


def test_more_new_blocks_than_the_lookback(tmp_path: Path) -> None:
    log = _Log()
    _opening(log)
    for n in range(11):  # 22 lines, 23 blocks with the response before them (the request's own line is none)
        log.tool_result(f"step {n} " * 20)
        log.user(f"note {n}")
    log.assistant("r4", 12_003, 3_000)  # the lookback could not reach r3's entry: read r2's
    row = log.audit(tmp_path)[-1]
    assert row.cause == "breakpoint-placement"
    assert "beyond the 20-block lookback" in row.detail  # the log rule decides the cause ...
    # ... and the location says where the read stopped, with the overflow as the likely change.
    assert row.location.startswith("the cached prefix ended inside message 4 (assistant, about token 12,003")
    assert "a lookback overflow: 23 new blocks since the last breakpoint" in row.location


_PI_HEADER = {"type": "session", "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x", "thinkingLevel": "off"}


_PI_T0 = 1765233665294


def _pi(role: str, dt: int, text: str, read: int | None = None, write: int = 0) -> dict:
    """A pi message ``dt`` ms after the session's first; an assistant's (``read`` given) with its usage."""
    message: dict = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": _PI_T0 + dt}
    if read is not None:
        message.update({"provider": "anthropic", "model": "claude-opus-4-5",
                        "usage": {"input": 3, "output": 5, "cacheRead": read, "cacheWrite": write}})
    return {"type": "message", "message": message}


def _pi_last_row(tmp_path: Path, *later: dict) -> AuditRow:
    """The last request's row of a pi session that opens with "hello" (a call writing 9,000
    tokens), then ``later``."""
    entries = [_PI_HEADER, _pi("user", 0, "hello"), _pi("assistant", 10, "hi", 0, 9_000), *later]
    return run_audit([write_jsonl(tmp_path / "pi.jsonl", entries)]).rows[-1]


def test_pi_user_turn_misses_land_in_the_head_with_the_date(tmp_path: Path) -> None:
    row = _pi_last_row(tmp_path, _pi("user", 60_000, "make the grays brighter"), _pi("assistant", 60_010, "done", 0, 9_100))
    assert (row.cause, row.evidence) == ("system-changed", "position")
    assert "at token 0 of 9,103" in row.detail and "date and time" in row.detail


def test_a_break_the_log_cannot_explain_stays_unexplained_with_its_reason(tmp_path: Path) -> None:
    # The last request was sent BEFORE the one it follows in the file (a second pi process on the
    # session): its prompt does not extend that one, so where its read stopped says nothing.
    row = _pi_last_row(tmp_path, _pi("toolResult", 20, "output"), _pi("assistant", 30_000, "more", 9_000, 500),
                       _pi("toolResult", 30_010, "output"), _pi("assistant", 25_000, "other", 4_000, 5_800))
    assert (row.cause, row.evidence) == ("unexplained", "none")
    assert "the log cannot tell: sent" in row.detail and "BEFORE the previous request" in row.detail
    assert row.location == ""


def test_located_breaks_show_in_the_table_markdown_and_json(tmp_path: Path) -> None:
    log = _Log()
    _opening(log)
    log.user("Today's date is 2025-09-03.")
    log.assistant("r4", 13_000, 800)
    log.user("next")
    log.assistant("r5", 13_003, 2_000)
    result = run_audit([write_jsonl(tmp_path / "s1.jsonl", log.lines)])
    row = result.rows[-1]
    table = audit_table(result)
    assert "position" in table and "msg 6" in table and "where" in table
    assert "`position`" in audit_markdown(result)
    assert request_record(row)["location"] == row.location != ""


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.lists(st.integers(0, 5_000), min_size=0, max_size=6), min_size=1, max_size=8),
    prompts=st.lists(st.integers(0, 200_000), min_size=8, max_size=8),
    read=st.integers(0, 250_000),
)
def test_any_read_lands_on_a_message_or_the_head(sizes: list[list[int]], prompts: list[int], read: int) -> None:
    """Whatever the prompts (shrinking included) and the read, locate names the head or a message
    of the history, and never fails."""
    histories = Histories({})
    parent = None
    segment = None
    for n, (tokens, prompt) in enumerate(zip(sizes, prompts)):
        messages = tuple(make_message("user", "x" * (4 * t)) for t in tokens)
        r = TraceRequest("f", n + 1, "main", "main", n, None, None, "anthropic", MODEL, usage=Usage(cache_write_5m=prompt),
                         prefix=Prefix("h", f"n{n}", parent), messages=messages)
        segment = histories.add(r) or segment
        parent = f"n{n}"
    if segment is None:
        return
    where = locate(segment, read, r)
    total = sum(len(s) for s in sizes)
    assert 0 <= where.message <= total and where.token == read
    assert where.text().startswith("the cached prefix ended inside ") or (
        where.message == 0 and where.head_end is not None and where.text().startswith("the cached prefix ended at the end of ")
    )


@given(st.text(max_size=400))
def test_an_excerpt_is_short_and_cut_at_a_word(text: str) -> None:
    message = make_message("user", [{"type": "text", "text": text}])
    assert len(message.excerpt) <= EXCERPT_CHARS + 3
    assert msgspec.json.decode(msgspec.json.encode(message), type=type(message)) == message


@pytest.mark.parametrize("text,marks", [
    ("<system-reminder>x</system-reminder>", ("system-reminder",)),
    ("the current date is 2025-09-03", ("date",)),
    ("plain words", ()),
])
def test_marks(text: str, marks: tuple[str, ...]) -> None:
    assert make_message("user", text).marks == marks


def test_a_sweep_divergence_gets_a_cause() -> None:
    from prefixbench.workloads.audit.causes import divergence_cause

    def why(divergence: str = "tools @ byte 0", **kw: object) -> str:
        args: dict = {"first": False, "family": "reasoning_effort high", "family_seen": True,
                      "earlier_families": ("reasoning_effort max",), "rewrites": "", "purpose": "conversation", **kw}
        return divergence_cause(divergence, **args)

    assert why(first=True).startswith("cold-start: ")
    assert why(family_seen=False) == (
        "effort-changed: the first request with reasoning_effort high (earlier: reasoning_effort max): "
        "a new request family reads nothing the others cached"
    )
    assert why().startswith("tools-changed: ") and why("system @ byte 0").startswith("system-changed: ")
    assert why("message 3 @ byte 900", rewrites="prune|prune|checkpoint") == (
        "messages-changed: the agent rewrote its history since the previous request (prune, checkpoint)"
    )
    assert why("message 3 @ byte 900", purpose="compaction").startswith("compaction: ")
    assert why("message 9 @ byte 9000", extends=True).startswith("no miss: ")


def _fall_near_the_head(read: int, write: int, *, first: str = "fix the failing test in parser.py", head: int = 9_990,
                        turn: object = "and the other file", **extra: object) -> _Log:
    """A lane whose start (under ``first``) reads ``head`` (the head's estimated end), a request
    that extends it, then, after the user's ``turn`` (``extra`` its line's other fields), one
    whose read falls back to ``read``."""
    log = _Log()
    log.user(first)
    log.assistant("r1", head, 12_000 - head)
    log.tool_result("all good " * 100)
    log.assistant("r2", 12_000, 1_000)
    log.user(turn, **extra)
    log.assistant("r3", read, write)
    return log


def test_a_read_fallen_to_the_head_after_toolsearch_names_the_tools_it_loaded(tmp_path: Path) -> None:
    # Claude Code 2.1.x loads deferred tools with ToolSearch: its tool result holds tool_reference
    # blocks, which the API expands into those tools' definitions. The next request's read falls
    # back to the head (a public 2.1.126 session's server diagnostic calls it tools_changed); main
    # blamed message 1 ("the log does not show what changed there", messages-changed).
    # The head (system prompt and tools) was cached before the log: the lane start reads it all.
    row = _fall_near_the_head(10_000, 3_100, head=10_000, turn=[{"type": "tool_result", "tool_use_id": "t", "content": [
        {"type": "tool_reference", "tool_name": "TaskCreate"}, {"type": "tool_reference", "tool_name": "TaskList"}]}],
        toolUseResult={"matches": ["TaskCreate", "TaskList"], "query": "select:TaskCreate,TaskList"}).audit(tmp_path)[-1]
    # The read equals the head two cold points agree on (the lane start and this fall).
    assert (row.cause, row.evidence) == ("tools-changed", "log")
    assert "stopped exactly at the head (10,000 tokens)" in row.detail
    assert "the tool list changed on the way (logged: ToolSearch loaded TaskCreate, TaskList)" in row.detail


def test_a_read_fallen_near_the_head_after_toolsearch_is_located_on_the_tools(tmp_path: Path) -> None:
    # The head is sized by the lane start alone (a read of 9,990); the fall reads 10,000, just past
    # it: located at the head's end, where a logged tool change is the likely one.
    row = _fall_near_the_head(10_000, 3_100, turn=[
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "tool_reference", "tool_name": "TaskCreate"}]}]).audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("tools-changed", "position")
    assert "inside message 1 (user, about token 10,000" in row.detail
    assert "likely change: the tool list changed (logged: ToolSearch loaded TaskCreate)" in row.detail


def test_a_toolsearch_result_does_not_blame_the_tools_for_a_read_stopped_past_the_head(tmp_path: Path) -> None:
    # A read that kept more than the head stopped at a later change: the tools (sent before the
    # messages the read kept) are not it.
    log = _Log()
    _opening(log)
    log.user("Today's date is 2025-09-03. " + "Carry on with the parser. " * 300)
    log.assistant("r4", 13_000, 800)
    log.user([{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "tool_reference", "tool_name": "WebFetch"}]}])
    log.assistant("r5", 13_500, 2_000)
    row = log.audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("messages-changed", "position")
    assert "likely change: it holds a date or time" in row.detail


def test_a_read_fallen_to_the_heads_end_with_no_tool_change_is_a_system_change(tmp_path: Path) -> None:
    # The head is sized by the lane start (a read of 9,990); a later fall reads 10,083, 93 tokens
    # past it, with nothing logged on the way. Main placed it inside message 1 and said
    # messages-changed; Anthropic's diagnostic said system_changed of all four such falls in
    # public Claude Code sessions (pv-case-review three times, blockchain-dex-events once, 83 to 93
    # tokens past the head): the head (not in the transcript) is the first part that may differ.
    log = _fall_near_the_head(
        10_083, 3_100, first="<system-reminder>The user named this session parser.</system-reminder> fix the failing test in parser.py")
    row = log.audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("system-changed", "position")
    assert row.detail.startswith(
        "the cached prefix ended at the end of the unlogged head (system prompt and tools), at token 10,083 of 13,186: "
        "93 tokens past its estimated end (9,990), before message 1")
    assert "likely change: the end of the system prompt (not in the log)" in row.detail
    # A mark in message 1 is still named, as the other candidate.
    assert "message 1 holds a system reminder" in row.detail
    assert "head" in audit_table(run_audit([write_jsonl(tmp_path / "s1.jsonl", log.lines)]))


def test_a_read_past_the_heads_end_stays_in_message_1(tmp_path: Path) -> None:
    # More than 3% past the head's estimated end: the head was kept, the read stopped inside message 1.
    row = _fall_near_the_head(10_400, 2_800).audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("messages-changed", "position")
    assert row.detail.startswith("the cached prefix ended inside message 1 (user, about token 10,400")


def test_a_fall_near_the_heads_end_is_put_at_the_head_in_claude_code_transcripts_only(tmp_path: Path) -> None:
    # The same fall as above (a head of 9,990 by the lane start, a read 93 tokens past it) in a pi
    # session: the evidence for the head's end (Anthropic's diagnostic) is Claude Code's alone, and
    # pi's system prompt ends with the date, which a change would make the read stop before, not
    # past. It stays in message 1 (it was put at the head, system-changed, whatever the format).
    # A Codex rollout logs no messages, so no read of it is placed on a history at all.
    entries = [_PI_HEADER, _pi("user", 0, "fix the failing test in parser.py"), _pi("assistant", 10, "ok", 9_990, 2_010),
               _pi("toolResult", 20, "all good " * 100), _pi("assistant", 30_000, "more", 12_000, 1_000),
               _pi("user", 40_000, "and the other file"), _pi("assistant", 40_010, "done", 10_083, 3_017)]
    row = run_audit([write_jsonl(tmp_path / "pi.jsonl", entries)]).rows[-1]
    assert (row.cause, row.evidence) == ("messages-changed", "position")
    assert row.detail.startswith('the cached prefix ended inside message 1 (user, about token 10,083 of 13,103 of the prompt): "fix')
    assert FORMATS["claude-code"].head_end_falls and not any(f.head_end_falls for name, f in FORMATS.items() if name != "claude-code")


def test_the_where_cell_reads_the_location_not_the_users_words_in_its_excerpt() -> None:
    # A message quoting "the unlogged head" (a user writing about the audit itself) put "head" in
    # the worst requests' where column, not the message the read stopped in.
    inside = Location(3, "user", 500, 1_000, "why does the audit say the unlogged head changed?", "", "")
    assert short_where(inside.text()) == short_where(inside.where()) == "msg 3"
    assert short_where(Location(0, "head", 200, 1_000, "", "", "").text()) == "head"
    at_end = Location(0, "head", 1_020, 2_000, "see inside message 7 of the log", "", "head", head_end=1_000)
    assert short_where(at_end.text()) == "head"
    assert short_where("") == ""


# Claude Code 2.1.263 logs the system prompt and the tools a call goes out with: an attachment of
# type ``prompt_snapshot`` in the chain before the call (``systemPrompt``: the system blocks;
# ``tools``: each tool as ``{"name", "description", "schema"}``, ``schema`` the definition sent;
# the session's first row lists no tools). Where the read falls at or before the head, two
# snapshots that differ decide the cause from the log; two that are the same clear the head.
_SYSTEM = ["You are an interactive agent that helps users with software engineering tasks.", "# Environment\n - Shell: zsh"]


def _tool(name: str, about: str = "") -> dict:
    schema = {"name": name, "description": about or f"The {name} tool.", "input_schema": {"type": "object", "properties": {}}}
    return {"name": name, "description": schema["description"], "schema": schema}


def _snapshot_entry(log: _Log, system: list[str], tools: list[dict] | None) -> None:
    snapshot: dict = {"type": "prompt_snapshot", "systemPrompt": system}
    if tools is not None:
        snapshot["tools"] = tools
    log._add("attachment", attachment=snapshot)


def _snapshots_around_a_fall(read: int, write: int, system: list[str], tools: list[dict]) -> _Log:
    """:func:`_fall_near_the_head` (a head of 9,990 by the lane start), a snapshot before the lane's
    first call (the session's first row, no tools, then one with Bash and Read), and one with
    ``system`` and ``tools`` before the call whose read falls to ``read``."""
    log = _Log()
    _snapshot_entry(log, _SYSTEM, None)
    log.user("fix the failing test in parser.py")
    _snapshot_entry(log, _SYSTEM, [_tool("Bash"), _tool("Read")])
    log.assistant("r1", 9_990, 2_010)
    log.tool_result("all good " * 100)
    log.assistant("r2", 12_000, 1_000)
    log.user("and the other file")
    _snapshot_entry(log, system, tools)
    log.assistant("r3", read, write)
    return log


def test_a_fall_to_the_head_after_the_snapshots_tools_changed_is_tools_changed_by_the_log(tmp_path: Path) -> None:
    # The fall of test_a_read_fallen_to_the_heads_end_with_no_tool_change_is_a_system_change, the
    # snapshots before it naming one tool more (an MCP server connected) and one redefined: main
    # said system-changed by the head's estimated end (evidence position).
    tools = [_tool("Bash", "Run a shell command, now with a timeout."), _tool("Read"), _tool("mcp__db__query")]
    row = _snapshots_around_a_fall(10_083, 3_100, _SYSTEM, tools).audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("tools-changed", "log")
    assert row.detail.startswith("the logged prompt snapshot's tools changed: +mcp__db__query ~Bash; ")
    assert "the cached prefix ended at the end of the unlogged head" in row.detail


def test_a_read_inside_the_head_after_the_snapshots_system_prompt_changed_is_system_changed_by_the_log(tmp_path: Path) -> None:
    system = [_SYSTEM[0], "# Environment\n - Shell: bash"]
    row = _snapshots_around_a_fall(6_000, 7_100, system, [_tool("Bash"), _tool("Read")]).audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("system-changed", "log")
    assert row.detail.startswith("the logged prompt snapshot's system prompt changed: 1 of 2 blocks differ")
    assert "the cached prefix ended inside the unlogged head (system prompt and tools), at token 6,000" in row.detail


def test_a_tool_removed_from_the_snapshot_is_named(tmp_path: Path) -> None:
    row = _snapshots_around_a_fall(6_000, 7_100, _SYSTEM, [_tool("Bash")]).audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("tools-changed", "log")
    assert row.detail.startswith("the logged prompt snapshot's tools changed: -Read; ")


def test_a_fall_to_the_heads_end_with_the_snapshots_the_same_is_not_the_head(tmp_path: Path) -> None:
    # The snapshots show the system prompt and the tools unchanged: the read kept the head (it
    # fell 93 tokens past its estimated end), so the change lies after it, in message 1. Main said
    # system-changed at the head.
    row = _snapshots_around_a_fall(10_083, 3_100, list(_SYSTEM), [_tool("Bash"), _tool("Read")]).audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("messages-changed", "position")
    assert row.detail.startswith("the cached prefix ended inside message 1 (user, about token 10,083")
    assert "the logged prompt snapshot is identical to the lane's previous one (system prompt and tools)" in row.detail


def test_a_read_inside_the_head_with_the_snapshots_the_same_is_not_put_down_to_the_head(tmp_path: Path) -> None:
    row = _snapshots_around_a_fall(6_000, 7_100, list(_SYSTEM), [_tool("Bash"), _tool("Read")]).audit(tmp_path)[-1]
    assert row.cause == "unexplained"
    assert "the logged prompt snapshot is identical to the lane's previous one" in row.detail


def test_a_snapshot_change_does_not_move_a_read_stopped_past_the_head(tmp_path: Path) -> None:
    # More than 3% past the head's estimated end: the head was kept whatever the snapshot says.
    row = _snapshots_around_a_fall(10_400, 2_800, _SYSTEM, [_tool("Bash")]).audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("messages-changed", "position")
    assert row.detail.startswith("the cached prefix ended inside message 1 (user, about token 10,400")


def test_a_snapshot_change_wins_over_a_prompt_that_shrank(tmp_path: Path) -> None:
    # The prompt fell from 13,003 to 11,003 tokens (history dropped) and the read ended inside the
    # head after the snapshot's tools changed: the tools come first, so they ended the read. Main
    # said messages-changed ("the prompt shrank").
    row = _snapshots_around_a_fall(6_000, 5_000, _SYSTEM, [_tool("Bash"), _tool("Read"), _tool("WebFetch")]).audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("tools-changed", "log")
    assert row.detail.startswith("the logged prompt snapshot's tools changed: +WebFetch; ")


def _wire_tool(name: str, about: str = "") -> dict:
    return {"name": name, "description": about or f"The {name} tool.", "input_schema": {"type": "object", "properties": {}}}


def _request_rows(log: _Log, ident: str, base: str | None, keep: int, tail: list[str], shape: str,
                  system: list[str], tools: list[dict]) -> None:
    """The request-replay rows Claude Code 2.1.332 writes as a call is sent (layout read from its
    binary; hashes made up): the shape row when the file lacks it, then the ``api-request`` row."""
    if not any(line.get("shapeHash") == shape and line["type"] == "api-request-shape" for line in log.lines):
        log.lines.append({"type": "api-request-shape", "sessionId": "s1", "shapeHash": shape, "version": "2.1.332",
                          "timestamp": "2025-09-03T10:00:00.000Z",
                          "shape": {"system": [{"type": "text", "text": text} for text in system], "tools": tools}})
    row: dict = {"type": "api-request", "sessionId": "s1", "id": ident, "version": "2.1.332",
                 "timestamp": "2025-09-03T10:00:00.000Z", "querySource": "repl_main_thread", "shapeHash": shape,
                 "params": {"model": MODEL, "max_tokens": 32000}, "keep": keep, "tail": tail, "cacheControl": [],
                 "requestDigest": f"d-{ident}"}
    if base is not None:
        row["base"] = base
    log.lines.append(row)


def _rows_around_a_fall(read: int, write: int, system: list[str], tools: list[dict], shape: str) -> _Log:
    """:func:`_snapshots_around_a_fall`'s calls with api-request rows (and ``requestRef`` on each
    response) instead of snapshots: r3's row extends r2's, keeping its 3 messages, with ``system``
    and ``tools`` (shape ``shape``; ``"A"`` is r1's and r2's)."""
    log = _Log()
    head = (_SYSTEM, [_wire_tool("Bash"), _wire_tool("Read")])
    log.user("fix the failing test in parser.py")
    _request_rows(log, "q1", None, 0, ["m1"], "A", *head)
    log.assistant("r1", 9_990, 2_010)
    log.lines[-1]["requestRef"] = "q1"
    log.tool_result("all good " * 100)
    _request_rows(log, "q2", "q1", 1, ["m2", "m3"], "A", *head)
    log.assistant("r2", 12_000, 1_000)
    log.lines[-1]["requestRef"] = "q2"
    log.user("and the other file")
    _request_rows(log, "q3", "q2", 3, ["m4", "m5"], shape, system, tools)
    log.assistant("r3", read, write)
    log.lines[-1]["requestRef"] = "q3"
    return log


def test_a_fall_to_the_head_after_the_request_rows_tools_changed_is_tools_changed_by_the_log(tmp_path: Path) -> None:
    # As test_a_fall_to_the_head_after_the_snapshots_tools_changed_is_tools_changed_by_the_log, the
    # change told by the call's own api-request row (Claude Code 2.1.282 on): on the base, the rows
    # were read past and the cause was system-changed by the head's estimated end (position).
    tools = [_wire_tool("Bash", "Run a shell command, now with a timeout."), _wire_tool("Read"), _wire_tool("mcp__db__query")]
    row = _rows_around_a_fall(10_083, 3_100, _SYSTEM, tools, "B").audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("tools-changed", "log")
    assert row.detail.startswith("the logged api-request rows show the tools changed: +mcp__db__query ~Bash; ")


def test_a_read_inside_the_head_after_the_request_rows_system_changed_is_system_changed_by_the_log(tmp_path: Path) -> None:
    system = [_SYSTEM[0], "# Environment\n - Shell: bash"]
    row = _rows_around_a_fall(6_000, 7_100, system, [_wire_tool("Bash"), _wire_tool("Read")], "C").audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("system-changed", "log")
    # Hand sums: the blocks are 78 + 27 characters before, 78 + 28 after: ~26 tokens both (4 a token).
    assert row.detail.startswith("the logged api-request rows show the system prompt changed: 1 of 2 blocks differ, "
                                 "~26 -> ~26 tokens; ")


def test_request_rows_whose_hash_changed_without_their_shape_rows_do_not_say_the_head_the_same(tmp_path: Path) -> None:
    # The shape hash differs from r2's, but the shape rows were written in an earlier file (a
    # resumed session), and r3 kept 2 of r2's 3 messages: on the base only the messages' change
    # was an event, so the rows were said to show "the same system prompt and tools hash" (false)
    # and the fall, inside the head yet "not the head", was unexplained.
    tools = [_wire_tool("Bash", "Run a shell command, now with a timeout."), _wire_tool("Read")]
    log = _rows_around_a_fall(10_083, 3_100, _SYSTEM, tools, "B")
    log.lines = [line for line in log.lines if line.get("type") != "api-request-shape"]
    next(line for line in log.lines if line.get("type") == "api-request" and line["id"] == "q3")["keep"] = 2
    row = log.audit(tmp_path)[-1]
    assert "same system prompt and tools hash" not in row.detail
    assert (row.cause, row.evidence) == ("system-changed", "position")
    assert ("the logged api-request rows show the system prompt or tools changed (their hash did; the shape rows are "
            "not in this file); message 3 of the 3 the previous request sent differs") in row.detail


def test_a_fall_to_the_heads_end_with_the_request_rows_the_same_is_not_the_head(tmp_path: Path) -> None:
    # The row names r2's shape (the same hash) and keeps r2's 3 messages: the head did not change.
    row = _rows_around_a_fall(10_083, 3_100, _SYSTEM, [_wire_tool("Bash"), _wire_tool("Read")], "A").audit(tmp_path)[-1]
    assert (row.cause, row.evidence) == ("messages-changed", "position")
    assert "the logged api-request row has the same system prompt and tools hash as the request it extends" in row.detail
