"""A Claude Code session whose first call sends what an earlier session's first call sent (the same
first message, a prompt of the same size, in the same project folder, the same version) reads
that call's whole prompt while its entry lives: Anthropic wrote it at the earlier call's last
breakpoint. An app that starts a session every two minutes with the same prompt (patleeman/
dotfiles' 2.0.76 workspaces) reads so; before, only the account's warm head was predicted. The
lane start is named by what it sends (:func:`prefixbench.workloads.logs.formats.claude_code._start_node`),
and a chain's first call reads an entry at its own node (:class:`prefixbench.simulator.chain.ChainCache`).
Each test writes its own small transcripts."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from prefixbench.simulator.chain import BY_CONTENT, ChainCache
from prefixbench.workloads.audit.core import run_audit

T0 = datetime(2026, 1, 2, 9, 0, tzinfo=UTC).timestamp() * 1000
MIN = 60_000
HEAD = 10_000


def _at(ms: float) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _session(folder: Path, name: str, start: float, text: str, read: int, write: int, version: str = "2.0.76") -> None:
    """One Claude Code session of one call: the first message ``text``, the call's read and write."""
    base = {"isSidechain": False, "userType": "external", "cwd": "/w", "sessionId": name, "version": version}
    user = {**base, "parentUuid": None, "type": "user", "uuid": f"u-{name}", "timestamp": _at(start),
            "message": {"role": "user", "content": text}}
    usage = {"input_tokens": 3, "cache_creation_input_tokens": write, "cache_read_input_tokens": read, "output_tokens": 20,
             "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0}}
    reply = {**base, "parentUuid": f"u-{name}", "type": "assistant", "uuid": f"a-{name}", "timestamp": _at(start + 3_000),
             "requestId": f"req-{name}", "message": {"model": "claude-sonnet-4-5-20250929", "id": f"msg-{name}", "type": "message",
                                                      "role": "assistant", "content": [{"type": "text", "text": "done"}],
                                                      "stop_reason": "end_turn", "usage": usage}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.jsonl").write_text(json.dumps(user) + "\n" + json.dumps(reply) + "\n")


def _predicted(root: Path) -> dict[str, tuple[int | None, int]]:
    """Per session: its first call's (reported, predicted) read."""
    return {Path(r.file).stem: (r.reported_cache_read, r.predicted_cache_read) for r in run_audit([root]).rows}


def test_a_session_sending_an_earlier_sessions_first_prompt_again_reads_all_of_it(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-w"
    _session(folder, "a", T0, "status", HEAD, 3_000)
    _session(folder, "b", T0 + 2 * MIN, "status", HEAD + 3_000, 0)  # the same prompt, two minutes on
    _session(folder, "c", T0 + 3 * MIN, "other", HEAD, 3_100)  # another first message
    _session(folder, "d", T0 + 4 * MIN, "status", HEAD, 3_050)  # the same message, another size
    assert _predicted(tmp_path / "projects") == {
        "a": (HEAD, HEAD), "b": (HEAD + 3_000, HEAD + 3_000), "c": (HEAD, HEAD), "d": (HEAD, HEAD)}


def test_the_earlier_prompt_is_not_read_past_its_ttl(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-w"
    _session(folder, "a", T0, "status", HEAD, 3_000)
    _session(folder, "b", T0 + 2 * MIN, "other", HEAD, 3_100)
    _session(folder, "c", T0 + 9 * MIN, "status", HEAD, 3_000)  # 9 min on: a's 5-minute entry expired
    assert _predicted(tmp_path / "projects")["c"] == (HEAD, HEAD)


def test_another_folder_or_version_sends_another_prompt(tmp_path: Path) -> None:
    # The transcript leaves the system prompt out; it names the project folder (the working
    # directory is in it) and the version: either changed, the prompt is not taken to be the same.
    _session(tmp_path / "projects" / "-w", "a", T0, "status", HEAD, 3_000)
    _session(tmp_path / "projects" / "-w", "b", T0 + MIN, "other", HEAD, 3_100)
    _session(tmp_path / "projects" / "-v", "c", T0 + 2 * MIN, "status", HEAD, 3_000)
    _session(tmp_path / "projects" / "-w", "d", T0 + 3 * MIN, "status", HEAD, 3_000, version="2.0.75")
    got = _predicted(tmp_path / "projects")
    # (2.0.75's head is one of its own, which no other lane start of that version read: 0)
    assert (got["c"], got["d"]) == ((HEAD, HEAD), (HEAD, 0))


_ARGS = dict(family="f", head="h", head_tokens=None, parent=None, new_blocks=1, cacheable=5_000, model="claude-sonnet-4-5")


def test_a_chains_first_call_reads_a_live_entry_at_its_own_node() -> None:
    cache = ChainCache("anthropic")
    same, other = BY_CONTENT + "same", BY_CONTENT + "other"
    first = cache.observe(node=same, tick=0, ready=1_000, **_ARGS)
    again = cache.observe(node=same, tick=60_000, ready=61_000, **_ARGS)
    other_ = cache.observe(node=other, tick=60_000, ready=61_000, **_ARGS)
    late = cache.observe(node=same, tick=60_000 + 301_000, ready=362_000, **_ARGS)
    assert [(v.read, v.write) for v in (first, again, other_, late)] == [(0, 5_000), (5_000, 0), (0, 5_000), (0, 5_000)]
    # The walk back's flags: an entry past its lifetime is expired, one still being written in flight.
    assert late.expired and not late.in_flight
    early = cache.observe(node=same, tick=361_500, ready=363_000, **_ARGS)  # (the entry is ready at 362,000)
    assert (early.read, early.in_flight) == (0, True)


def test_only_a_node_named_by_content_is_read_by_a_call_without_a_parent() -> None:
    # The rule is a Claude Code lane start's (its node named by what it sends); another reader's
    # parent-less call at a node it named before (its own name, not the prompt's) reads nothing there.
    cache = ChainCache("anthropic")
    cache.observe(node="same", tick=0, ready=1_000, **_ARGS)
    again = cache.observe(node="same", tick=60_000, ready=61_000, **_ARGS)
    assert (again.read, again.in_flight, again.expired) == (0, False, False)


def test_the_row_names_the_earlier_call_and_what_matched(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-w"
    _session(folder, "a", T0, "status", HEAD, 3_000)
    _session(folder, "b", T0 + 2 * MIN, "status", HEAD + 3_000, 0)
    rows = {Path(r.file).stem: r for r in run_audit([tmp_path / "projects"]).rows}
    said = rows["b"].detail
    assert f"{rows['a'].file}:{rows['a'].line} wrote" in said
    assert "same first message, the same reported prompt size, home, project folder and version" in said
    assert "inferred from the counts" in said
    assert "wrote: an earlier first call" not in rows["a"].detail


def test_two_homes_same_folder_share_no_start(tmp_path: Path) -> None:
    # Two homes (machines, accounts) audited together: the same folder name and first prompt in
    # each is not one cache, so their lane starts name two nodes (the base named one).
    from prefixbench.workloads.logs.formats import FORMATS, import_file
    from prefixbench.workloads.logs.formats.base import ImportContext

    _session(tmp_path / "one" / "projects" / "-w", "a", T0, "status", HEAD, 3_000)
    _session(tmp_path / "two" / "projects" / "-w", "b", T0 + 2 * MIN, "status", HEAD + 3_000, 0)
    _session(tmp_path / "one" / "projects" / "-w", "c", T0 + 3 * MIN, "status", HEAD + 3_000, 0)
    nodes = {}
    for home, name in (("one", "a"), ("two", "b"), ("one", "c")):
        path = tmp_path / home / "projects" / "-w" / f"{name}.jsonl"
        (r,), _ = import_file(path, FORMATS["claude-code"], ImportContext())
        nodes[name] = r.prefix.node
    assert nodes["a"] == nodes["c"] != nodes["b"] and nodes["a"].startswith(BY_CONTENT)
