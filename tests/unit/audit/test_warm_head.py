"""The account-level warm head (workloads/audit/core.py head_sizes): one account keeps its system +
tools prefix warm across sessions, so lane starts and reads after TTL expiries read it."""

from __future__ import annotations

import msgspec

from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import audit_requests, head_sizes, warm_levels
from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest

HEAD = "claude-code:main:claude-opus-4-5:2.1.0"
MIN = 60_000
T0 = 1_780_000_000_000


def call(file: str, seq: int, sent: int, read: int, write: int, parent: str | None) -> TraceRequest:
    return TraceRequest(
        file=file, line=seq + 1, lane="main", lane_kind="main", seq=seq, sent_ms=T0 + sent, ready_ms=T0 + sent + 2_000,
        provider="anthropic", model="claude-opus-4-5", usage=Usage(cache_read=read, cache_write_5m=write, uncached=3),
        prefix=Prefix(HEAD, f"{file}#{seq}", parent),
    )


def two_sessions() -> list[TraceRequest]:
    # Session a: starts reading the account's warm 12,249-token head, works, idles 2 h (past
    # the 5 m TTL) and reads 12,249 again. Session b starts on a resumed conversation that read
    # 17,538 (more than the head), then idles and reads 12,249 after the expiry too.
    return [
        call("a.jsonl", 0, 0, 12_249, 8_000, None),
        call("a.jsonl", 1, MIN, 20_249, 1_000, "a.jsonl#0"),
        call("a.jsonl", 2, 121 * MIN, 12_249, 9_003, "a.jsonl#1"),
        call("b.jsonl", 0, 300 * MIN, 17_538, 3_000, None),
        call("b.jsonl", 1, 301 * MIN, 20_538, 500, "b.jsonl#0"),
        call("b.jsonl", 2, 420 * MIN, 12_249, 8_789, "b.jsonl#1"),
    ]


def test_the_warm_head_is_the_smallest_read_the_cold_points_agree_on():
    heads = head_sizes(two_sessions())
    assert heads[HEAD] == 12_249  # not 17,538, the largest lane-start read
    assert heads.warm == {HEAD: 3}


def test_reads_after_an_expiry_are_predicted_at_the_warm_head_not_zero():
    requests = two_sessions()
    result = audit_requests(requests, [FileSummary("a.jsonl", "claude-code", 3), FileSummary("b.jsonl", "claude-code", 3)])
    after_expiry = [row for row in result.rows if row.line == 3]
    assert [row.predicted_cache_read for row in after_expiry] == [12_249, 12_249]
    assert all(row.cause == "ttl-expired" for row in after_expiry)
    assert any("12,249 tokens kept warm by the account: 3 cold points" in note for note in result.notes)


def test_a_cold_point_that_read_nothing_means_no_warm_head():
    requests = two_sessions()
    requests[0] = call("a.jsonl", 0, 0, 0, 20_249, None)  # a true cold start: nobody had it cached
    heads = head_sizes(requests)
    assert (heads.warm, heads[HEAD]) == ({}, 17_538)  # the largest lane-start read, as before
    result = audit_requests(requests, [FileSummary("a.jsonl", "claude-code", 3), FileSummary("b.jsonl", "claude-code", 3)])
    assert [row.predicted_cache_read for row in result.rows if row.line == 3 and row.file == "a.jsonl"] == [0]


def test_a_compaction_inside_the_ttl_is_no_cold_point():
    # A compaction's new chain starts 20 s after the lane's previous call: the head it reads is
    # warm from the lane's own traffic, which says nothing of the account. Its read of 512 tokens
    # short of the head (a Codex 0.122 rollout read 11,136 of an 11,648 head so) does not make
    # the head 11,737.
    requests = two_sessions()
    compacted = call("a.jsonl", 3, 121 * MIN + 20_000, 11_737, 2_000, None)
    requests.insert(3, msgspec.structs.replace(compacted, events=(("compaction", ""),)))
    heads = head_sizes(requests)
    assert (heads[HEAD], heads.warm) == (12_249, {HEAD: 3})


def test_a_read_that_fell_back_to_the_lane_start_read_inside_the_ttl_agrees():
    # One session, no expiry: it starts reading 12,249 (another session's head), then a minute on
    # the provider loses the conversation's entry and the read falls back to exactly 12,249 (a
    # public Codex 0.144 session did so 4 times on its 11,008-token head, a 0.125 one twice on
    # 11,648). Two reads of the same amount: the head is warm, and the lane start is predicted to
    # read it (main: one cold point, the head not warm, the lane start predicted 0).
    requests = [
        call("a.jsonl", 0, 0, 12_249, 8_000, None),
        call("a.jsonl", 1, MIN, 20_249, 1_000, "a.jsonl#0"),
        call("a.jsonl", 2, 2 * MIN, 12_249, 9_003, "a.jsonl#1"),
    ]
    heads = head_sizes(requests)
    assert (heads[HEAD], heads.warm, heads.falls) == (12_249, {HEAD: 2}, {HEAD: 1})
    result = audit_requests(requests, [FileSummary("a.jsonl", "claude-code", 3)])
    assert result.rows[0].predicted_cache_read == 12_249
    assert any("2 cold points (lane starts, reads after a TTL expiry; 1 of them reads inside the TTL that fell back to it)" in n
               for n in result.notes)


def test_a_fall_to_another_amount_is_no_evidence():
    requests = [
        call("a.jsonl", 0, 0, 12_249, 8_000, None),
        call("a.jsonl", 1, MIN, 20_249, 1_000, "a.jsonl#0"),
        call("a.jsonl", 2, 2 * MIN, 12_250, 9_002, "a.jsonl#1"),
    ]
    heads = head_sizes(requests)
    assert (heads.warm, heads.falls) == ({}, {})


def test_warm_levels_are_the_reads_two_cold_points_agree_on():
    # 17,600 is within 1% of 17,482 (17,482 x 1.01 = 17,656.82): one level of three points; 0 and
    # the lone 30,000 are none.
    assert warm_levels([17_482, 0, 12_249, 17_600, 30_000, 12_249, 17_482]) == ((12_249, 2), (17_482, 3))
    assert warm_levels([14_608, 0, 0]) == ()


def two_levels() -> list[TraceRequest]:
    # One lane (github.com/thomasahle/trace-taxi's shape): it starts reading 17,482 tokens (the
    # 12,249-token head and a 5,233-token first message another session kept warm), idles 6 min
    # and reads 17,482 again, then idles 30 min and 2 h and reads only the 12,249 head.
    return [
        call("a.jsonl", 0, 0, 17_482, 3_111, None),
        call("a.jsonl", 1, MIN, 20_593, 260, "a.jsonl#0"),
        call("a.jsonl", 2, 7 * MIN, 17_482, 3_371, "a.jsonl#1"),
        call("a.jsonl", 3, 37 * MIN, 12_249, 8_604, "a.jsonl#2"),
        call("a.jsonl", 4, 157 * MIN, 12_249, 8_604, "a.jsonl#3"),
    ]


def test_a_read_stopping_at_a_longer_warm_level_after_an_expiry_is_ttl_expired():
    requests = two_levels()
    heads = head_sizes(requests)
    # Cold points read 17,482, 17,482, 12,249, 12,249: the head is the smaller, the longer a level.
    assert (heads[HEAD], heads.warm, heads.levels) == (12_249, {HEAD: 2}, {HEAD: ((12_249, 2), (17_482, 2))})
    row = audit_requests(requests, [FileSummary("a.jsonl", "claude-code", 5)]).rows[2]
    # 6 min idle, past the 5 min TTL: the conversation's 20,853 tokens (20,593 + 260) expired; the
    # read stopped at the longer level, 5,233 tokens above the predicted head. Before: it read past
    # the head, so no expiry was blamed, and nothing else explained it (unexplained).
    assert (row.reported_cache_read, row.predicted_cache_read, row.expected_cache_read) == (17_482, 12_249, 20_853)
    assert (row.cause, row.lost_tokens) == ("ttl-expired", 3_371)
    assert ("it read 17,482 tokens, as 2 cold points of this log did (lane starts and reads after a TTL expiry, this one "
            "included; reads within 1% of 17,482 tokens, their sizes alone compared)") in row.detail


def lane_starts(provider: str, model: str, reads: list[int]) -> list[TraceRequest]:
    """One lane start a session, an hour apart, each reading what the account kept warm."""
    return [
        TraceRequest(
            file=f"{i}.jsonl", line=1, lane="main", lane_kind="main", seq=0, sent_ms=T0 + 60 * i * MIN,
            ready_ms=T0 + 60 * i * MIN + 2_000, provider=provider, model=model,
            usage=Usage(cache_read=read, uncached=12_000 - read), prefix=Prefix(f"codex:{model}:0.98.0", f"{i}.jsonl#0", None),
        )
        for i, read in enumerate(reads)
    ]


def test_openai_predicts_the_warm_level_most_cold_points_read():
    # BearTDK6/ba-pro's Codex 0.98 rollouts on gpt-5.2-codex: 11 cold points read 8,320 tokens, 6
    # read 7,680, at lane starts and after 1 to 27 h idle alike (neither level outlived the other).
    # On OpenAI the head predicted is the level most of them read (main: the smallest, 7,680).
    reads = [7_680, 8_320, 7_680, 8_320, 8_320]
    heads = head_sizes(lane_starts("openai", "gpt-5.2-codex", reads))
    head = "codex:gpt-5.2-codex:0.98.0"
    assert (heads[head], heads.warm, heads.levels[head]) == (8_320, {head: 3}, ((7_680, 2), (8_320, 3)))
    result = audit_requests(lane_starts("openai", "gpt-5.2-codex", reads),
                            [FileSummary(f"{i}.jsonl", "codex", 1) for i in range(5)])
    assert [row.predicted_cache_read for row in result.rows] == [8_320] * 5
    assert sum(row.read_within for row in result.rows) == 3


def test_anthropic_keeps_the_smallest_warm_level_and_a_tie_keeps_it_on_openai():
    # A longer level lives shorter on Anthropic (trace-taxi: 17,482 read by three cold points
    # within 13 min, 12,249 after 27 min and more): the smallest stays the head there.
    reads = [7_680, 8_320, 7_680, 8_320, 8_320]
    head = "codex:claude-opus-4-5:0.98.0"
    assert head_sizes(lane_starts("anthropic", "claude-opus-4-5", reads))[head] == 7_680
    tie = head_sizes(lane_starts("openai", "gpt-5.2-codex", [7_680, 8_320, 7_680, 8_320]))
    assert (tie["codex:gpt-5.2-codex:0.98.0"], tie.warm) == (7_680, {"codex:gpt-5.2-codex:0.98.0": 2})


def test_a_head_a_lane_start_that_cached_nothing_leaves_unsized_is_not_said_to_have_read_nothing():
    # One lane start read 12,249; another neither read nor wrote (nothing it could have cached), so
    # no head size fits both and the head has none. The note said "no lane start read anything",
    # which the first lane start contradicts (aider's history: lane starts read up to 1,800).
    requests = [call("a.jsonl", 0, 0, 12_249, 8_000, None), call("b.jsonl", 0, 300 * MIN, 0, 0, None)]
    heads = head_sizes(requests)
    assert heads[HEAD] is None and heads.capped == {HEAD: 12_249}
    result = audit_requests(requests, [FileSummary("a.jsonl", "claude-code", 1), FileSummary("b.jsonl", "claude-code", 1)])
    said = [note for note in result.notes if note.startswith(f"unlogged head {HEAD}")]
    assert said == [f"unlogged head {HEAD}: size unknown (lane starts read up to 12,249 tokens, but another lane start "
                    "reported nothing it could have cached, so no head size fits every lane start)"]


def test_on_openai_a_few_cold_points_that_read_nothing_do_not_undo_the_level_most_read():
    # ISO-Bench's Trae runs on gpt-5 (one folder, 149 first calls of one head): 132 read 6,400,
    # 15 read 0, one 8,064 (a rerun of its task read into the task text). OpenAI's cache is best
    # effort: a lane start that found nothing does not show the head went cold; the level most
    # cold points read, more than read 0, is the warm head. Anthropic keeps the rule that a cold
    # point of 0 means no warm head (test_a_cold_point_that_read_nothing_means_no_warm_head).
    reads = [6_400, 6_400, 0, 6_400, 8_064]
    head = "codex:gpt-5:0.98.0"
    heads = head_sizes(lane_starts("openai", "gpt-5", reads))
    assert (heads[head], heads.warm) == (6_400, {head: 3})
    result = audit_requests(lane_starts("openai", "gpt-5", reads), [FileSummary(f"{i}.jsonl", "codex", 1) for i in range(5)])
    assert [row.predicted_cache_read for row in result.rows] == [6_400] * 5
    # As many zeros as reads of the level: no warm head (the largest lane-start read, as before).
    even = head_sizes(lane_starts("openai", "gpt-5", [6_400, 0, 6_400, 0]))
    assert (even[head], even.warm) == (6_400, {})
    assert head_sizes(lane_starts("openai", "gpt-5", [6_400, 0, 6_400, 0, 0]))[head] == 6_400
    assert head_sizes(lane_starts("anthropic", "claude-opus-4-5", reads)).warm == {}


def test_on_anthropic_a_longer_level_most_cold_points_read_is_the_head_where_it_outlived_the_smallest():
    # github.com/JanDeDobbeleer/oh-my-posh's Claude Code 2.1.205 sessions on claude-fable-5: 12 cold
    # points read 24,962 tokens, nine lane starts and three reads after 84, 148 and 299 min idle;
    # one lane start read 22,291 and one read fell back to it inside the TTL. The longer level
    # lived no shorter than the smallest (read after a longer idle than any read of it): it is the
    # head. trace-taxi's longer level, read only after shorter idles, is not (see two_levels).
    requests = [
        call("s0.jsonl", 0, 0, 22_291, 5_290, None),
        call("s0.jsonl", 1, MIN, 30_000, 1_000, "s0.jsonl#0"),
        call("s0.jsonl", 2, 2 * MIN, 22_291, 9_000, "s0.jsonl#1"),  # a fall inside the TTL
        *[call(f"s{i}.jsonl", 0, 600 * i * MIN, 24_962, 5_330, None) for i in range(1, 4)],
        call("s1.jsonl", 1, 601 * MIN, 30_000, 1_000, "s1.jsonl#0"),
        call("s1.jsonl", 2, 900 * MIN, 24_962, 40_103, "s1.jsonl#1"),  # 299 min idle
    ]
    heads = head_sizes(requests)
    assert (heads[HEAD], heads.warm, heads.falls) == (24_962, {HEAD: 4}, {})
    # Where the longer level is read only at lane starts, as the smallest is, the smallest stays.
    starts_only = requests[:5]
    assert head_sizes(starts_only)[HEAD] == 22_291
