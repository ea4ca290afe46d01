"""The chain cache model: provider rules on chains of opaque segments."""

from __future__ import annotations

import pytest
from prefixbench.simulator.chain import ChainCache

MODEL = "claude-sonnet-4-20250514"


def _send(cache: ChainCache, node: str, parent: str | None, cacheable: int, tick: int, ready: int | None = None, **kw):
    return cache.observe(
        family=kw.pop("family", "f"), head=kw.pop("head", "h"), head_tokens=kw.pop("head_tokens", None), node=node,
        parent=parent, new_blocks=kw.pop("new_blocks", 2), cacheable=cacheable, model=kw.pop("model", MODEL), tick=tick,
        ready=tick if ready is None else ready, **kw,
    )


def test_anthropic_chain_reads_the_previous_prompt_and_writes_the_rest() -> None:
    cache = ChainCache("anthropic")
    first = _send(cache, "a", None, 10_000, 0, 1_000)
    second = _send(cache, "b", "a", 10_500, 2_000)
    assert (first.read, first.write, second.read, second.write) == (0, 10_000, 10_000, 500)


def test_anthropic_ttl_and_in_flight() -> None:
    cache = ChainCache("anthropic")
    _send(cache, "a", None, 10_000, 0, 3_000)
    early = _send(cache, "b", "a", 10_500, 1_000)  # before the first response began
    assert early.read == 0 and early.in_flight
    late = _send(cache, "c", "a", 10_500, 3_000 + 5 * 60_000 + 1)  # past 5 minutes
    assert late.read == 0 and late.expired
    cache = ChainCache("anthropic")
    _send(cache, "a", None, 10_000, 0, ttl="1h")
    assert _send(cache, "b", "a", 10_500, 30 * 60_000).read == 10_000


def test_anthropic_lifetime_counts_from_the_request_start() -> None:
    # A 2 min response (sent at 0, streaming from 1 s, the next call sent when it ended at 120 s):
    # the 5 min entry dies at 300,000 counted from the start, at 301,000 counted from the response.
    cache = ChainCache("anthropic")
    _send(cache, "a", None, 10_000, 0, 1_000)
    assert _send(cache, "b", "a", 10_500, 299_999).read == 10_000
    cache = ChainCache("anthropic")
    _send(cache, "a", None, 10_000, 0, 1_000)
    assert _send(cache, "b", "a", 10_500, 300_000).expired
    cache = ChainCache("anthropic", ttl_from="response")
    _send(cache, "a", None, 10_000, 0, 1_000)
    assert _send(cache, "b", "a", 10_500, 300_500).read == 10_000


def test_qwen_lifetime_counts_from_the_response_end() -> None:
    # A 400 s answer (sent at 0, ended at 400,000), the next call 1 s after it ended: read on Qwen
    # (its 5 min counted from the end, measured on Qwen Code's calls), expired on Anthropic (from
    # the start); on Qwen, 5 min past the end is expired, and a log without the end counts from
    # the response's start.
    cache = ChainCache("qwen")
    _send(cache, "a", None, 10_000, 0, done=400_000, model="coder-model")
    assert _send(cache, "b", "a", 10_500, 401_000, done=402_000, model="coder-model").read == 10_000
    assert _send(cache, "c", "b", 11_000, 402_000 + 5 * 60_000, model="coder-model").expired
    cache = ChainCache("anthropic")
    _send(cache, "a", None, 10_000, 0, done=400_000)
    assert _send(cache, "b", "a", 10_500, 401_000).expired
    cache = ChainCache("qwen")
    _send(cache, "a", None, 10_000, 0, 1_000, model="coder-model")
    assert _send(cache, "b", "a", 10_500, 300_999, model="coder-model").read == 10_000
    assert _send(cache, "c", "a", 10_500, 602_000, model="coder-model").expired


def test_shared_head_and_minimum_length() -> None:
    cache = ChainCache("anthropic")
    _send(cache, "a", None, 12_000, 0, head_tokens=11_000)
    other_lane = _send(cache, "x", None, 12_500, 10_000, head_tokens=11_000)
    assert (other_lane.read, other_lane.source) == (11_000, "head")
    tiny = _send(cache, "t1", None, 500, 20_000)
    assert (tiny.read, tiny.write) == (0, 0)


def test_openai_steps_and_first_hit() -> None:
    cache = ChainCache("openai")
    _send(cache, "a", None, 10_334, 0)
    assert _send(cache, "b", "a", 11_862, 1_000).read == 10_240  # 128-token steps
    cache = ChainCache("openai")
    _send(cache, "a", None, 900, 0)
    assert _send(cache, "b", "a", 1_200, 1_000).read == 0  # below 1,024 nothing is a hit


def test_families_do_not_share() -> None:
    cache = ChainCache("anthropic")
    _send(cache, "a", None, 10_000, 0)
    assert _send(cache, "b", "a", 10_500, 1_000, family="other").read == 0


def test_openai_reads_into_the_previous_response_when_the_agent_sends_it_back() -> None:
    # Call a: 5,000-token prompt, 500 tokens out (reasoning included), sent back whole by the
    # agent (Codex). OpenAI's cache keeps them after the prompt, so call b (5,600 tokens) reads
    # 5,500 floored to 128-token steps: 5,376, where the prompt alone gives 4,992.
    cache = ChainCache("openai")
    _send(cache, "a", None, 5_000, 0, output=500)
    assert _send(cache, "b", "a", 5_600, 10_000).read == 5_376
    # A prompt shorter than prompt + output did not send the response back whole (its reasoning
    # left out): it reads the previous prompt only, 5,000 floored.
    cache = ChainCache("openai")
    _send(cache, "a", None, 5_000, 0, output=500)
    assert _send(cache, "b2", "a", 5_300, 10_000).read == 4_992
    # An agent that does not send its output back (output 0): the previous prompt only.
    cache = ChainCache("openai")
    _send(cache, "a", None, 5_000, 0)
    assert _send(cache, "b", "a", 5_600, 10_000).read == 4_992
    # A prompt shorter than the previous prompt (compacted) does not read that entry.
    cache = ChainCache("openai")
    _send(cache, "a", None, 5_000, 0, output=500)
    assert _send(cache, "c", "a", 4_000, 10_000).read == 0
    # Anthropic's cache keeps no output: the previous prompt, the rest written.
    cache = ChainCache("anthropic")
    _send(cache, "a", None, 10_000, 0, output=500)
    second = _send(cache, "b", "a", 10_600, 10_000)
    assert (second.read, second.write) == (10_000, 600)


def test_deepseek_stores_a_unit_at_the_end_of_the_output() -> None:
    # DeepSeek's guide: a unit at the end of the user input and one at the end of the model
    # output. A prompt of 3,000 + 400 out, then 3,600 sending the response back whole: 3,400
    # read, in 128-token units: 3,328. Without the output unit: 2,944.
    cache = ChainCache("deepseek")
    _send(cache, "a", None, 3_000, 0, output=400)
    assert _send(cache, "b", "a", 3_600, 10_000).read == 3_328


def test_zai_reads_into_the_previous_answer_sent_back_verbatim() -> None:
    # Crush's read_a_file run on glm-4.6 (Z.AI's coding endpoint, 2026-04-15): a 7,120-token
    # prompt answered with 37 tokens (25 of reasoning), which Crush sends back verbatim; the
    # next prompt (7,180) read 7,155, the prompt and the answer but 2 tokens. The chain model
    # reads 7,157 there (was 7,120: 35 short, now 2 over), to the token on glm-4.6.
    cache = ChainCache("zai")
    _send(cache, "a", None, 7_120, 0, model="glm-4.6", output=37)
    assert _send(cache, "b", "a", 7_180, 2_000, model="glm-4.6").read == 7_157
    # glm-5.2 counts in 64s: 11,799 + 1,286 out = 13,085, read as 13,056 (what OpenCode's
    # session on Z.AI's coding plan read after a finished turn), against 11,776 for the prompt.
    cache = ChainCache("zai")
    _send(cache, "a", None, 11_799, 0, model="glm-5.2", output=1_286)
    assert _send(cache, "b", "a", 13_295, 2_000, model="glm-5.2").read == 13_056
    # An agent whose format does not replay the answer (output 0: OpenCode's and pi's GLM calls)
    # reads the previous prompt only.
    cache = ChainCache("zai")
    _send(cache, "a", None, 11_799, 0, model="glm-5.2")
    assert _send(cache, "b", "a", 13_295, 2_000, model="glm-5.2").read == 11_776


def test_deepseek_reads_before_v4_count_in_64_token_units() -> None:
    # Reads sent before V4's launch (2026-04-24) count in the 2024 guide's 64-token units, later
    # ones in 128: 3,400 tokens read are 3,392 on 2025-10-15 and 3,328 on 2026-05-18.
    from prefixbench.simulator.providers import rules_for

    rules = rules_for("deepseek")
    assert [rules.dated_step(ms) for ms in (1_760_535_280_000, 1_776_988_799_999, 1_776_988_800_000, None)] == [64, 64, 0, 0]
    assert rules.round_read(3_400, "deepseek-chat", rules.dated_step(1_760_535_280_000)) == 3_392
    assert rules.round_read(3_400, "deepseek-v4-flash", rules.dated_step(1_779_097_539_728)) == 3_328


def test_kimi_coding_plan_reads_in_256_token_steps() -> None:
    # kimi-for-coding (the coding plan) counts reads in 256-token blocks; another Kimi model, whose
    # step is not published, exactly.
    cache = ChainCache("moonshot")
    _send(cache, "a", None, 12_700, 0, model="kimi-for-coding")
    assert _send(cache, "b", "a", 13_000, 5_000, model="kimi-for-coding").read == 12_544
    cache = ChainCache("moonshot")
    _send(cache, "a", None, 12_700, 0, model="kimi-k2-0905-preview")
    assert _send(cache, "b", "a", 13_000, 5_000, model="kimi-k2-0905-preview").read == 12_700


def _walks(n: int = 3_000) -> list[dict]:
    """Calls in tick order over a few chains that branch back, expire (20 min idle every 7th
    call), replay output, grow and shrink, on two families and a shared head: every path of a
    walk back (a read, an entry in flight, one expired in flight, an expired one too short or long
    enough, a head)."""
    out: list[dict] = []
    tips: dict[int, list[str]] = {0: [], 1: [], 2: []}
    tick = 0
    for k in range(n):
        lane = k % 3
        tick += 20 * 60_000 if k % 7 == 6 else 30_000 + k % 5 * 1_000
        nodes = tips[lane]
        parent = nodes[-1 - k % 4] if len(nodes) > 4 and k % 11 == 0 else (nodes[-1] if nodes and k % 13 else None)
        node = f"n{k}"
        nodes.append(node)
        out.append(dict(node=node, parent=parent, cacheable=4_000 + (k * 37) % 3_000 + len(nodes) * 50, tick=tick,
                        # (every 23rd answer starts past its 5 m TTL counted from the send: an entry
                        # expired while still in flight, which a sweep must leave alone)
                        ready=tick + (400_000 if k % 23 == 0 else (k % 3) * 40_000), family="f" if lane else "g", head=f"h{lane % 2}",
                        head_tokens=2_000 if lane else None, output=200 if k % 4 == 0 else 0,
                        ttl="1h" if k % 17 == 0 else "5m", shared=1_000 if k % 29 == 0 else None))
    return out


@pytest.mark.parametrize("sweep_at", [1, None])
def test_an_in_order_model_keeps_expired_entries_as_tombstones_and_predicts_the_same(sweep_at, monkeypatch) -> None:
    """Fails on main (no ``in_order``): the model kept every entry of every node. ``sweep_at``:
    a sweep as often as it may run (1), or as the model runs them."""
    from prefixbench.simulator import chain

    if sweep_at is not None:
        monkeypatch.setattr(chain, "SWEEP_AT_LEAST", sweep_at)
    calls = _walks()
    everything, forgetful = ChainCache("anthropic"), ChainCache("anthropic", in_order=True)
    verdicts = [(_send(everything, **dict(c)), _send(forgetful, **dict(c))) for c in calls]
    assert all(kept == forgot for kept, forgot in verdicts)
    assert sum(v.expired for v, _ in verdicts) > 100 and sum(v.source == "node" for v, _ in verdicts) > 1_000
    entries = [e for table in forgetful._entries.values() for e in table.values()]
    alive = sum(type(e) is chain._Entry for e in entries)
    assert len(entries) > 3_000 and alive < max(2 * chain.SWEEP_AT_LEAST, 50), alive  # the others: an int each
    assert all(type(e) is chain._Entry for table in everything._entries.values() for e in table.values())


def test_an_expired_head_kept_as_a_tombstone_still_says_expired(monkeypatch) -> None:
    from prefixbench.simulator import chain

    monkeypatch.setattr(chain, "SWEEP_AT_LEAST", 1)
    verdicts = []
    for cache in (ChainCache("anthropic"), ChainCache("anthropic", in_order=True)):
        _send(cache, "a", None, 10_000, 0, head_tokens=2_000)
        _send(cache, "tiny", None, 500, 20 * 60_000)  # (below the minimum: a sweep, nothing stored)
        assert cache.in_order == (type(cache._entries[f"head:{MODEL}"]["h"]) is int)
        verdicts.append(_send(cache, "b", None, 10_000, 20 * 60_000, head_tokens=2_000))
    assert verdicts[0] == verdicts[1] and verdicts[1].expired and verdicts[1].read == 0


def test_an_entry_expired_while_still_in_flight_is_no_tombstone(monkeypatch) -> None:
    """An answer that starts past its 5 m TTL counted from the send (Anthropic's ``start``) left
    an entry expired yet in flight: a call during the wait is in flight, not ``ttl-expired``,
    however many other entries made a sweep run before it. Fails before the sweep checked the
    entry's start (the child was called expired when a sweep had run)."""
    from prefixbench.simulator import chain

    monkeypatch.setattr(chain, "SWEEP_AT_LEAST", 1)
    verdicts = []
    for cache in (ChainCache("anthropic"), ChainCache("anthropic", in_order=True)):
        _send(cache, "a", None, 10_000, 0, 400_000)  # answered 6m40s after it was sent
        _send(cache, "other", None, 10_000, 350_000, family="g")  # another family: a sweep runs
        verdicts.append(_send(cache, "b", "a", 10_500, 360_000))
    assert verdicts[0] == verdicts[1] and verdicts[1].in_flight and not verdicts[1].expired


def test_an_in_order_model_refuses_a_call_out_of_order() -> None:
    cache = ChainCache("anthropic", in_order=True)
    _send(cache, "a", None, 10_000, 5_000)
    _send(cache, "b", "a", 10_500, 5_000)  # (the same tick: in order)
    with pytest.raises(ValueError, match="tick 4999 after one at 5000"):
        _send(cache, "c", "b", 11_000, 4_999)


def test_output_written_by_a_call_outside_the_log_is_kept_where_the_cache_keeps_no_output() -> None:
    # Anthropic keeps no output; a call the log does not hold (Claude Code 2.1.185's after a turn)
    # wrote the prompt and the reply, so the next prompt that sends both reads them, a shorter one
    # the prompt alone.
    cache = ChainCache("anthropic")
    _send(cache, "a", None, 20_000, 0, model="claude-sonnet-4-6", output=1_500)
    assert _send(cache, "b", "a", 22_000, 1_000, model="claude-sonnet-4-6").read == 20_000
    cache = ChainCache("anthropic")
    _send(cache, "a", None, 20_000, 0, model="claude-sonnet-4-6", output=1_500, output_written=True)
    assert _send(cache, "b", "a", 22_000, 1_000, model="claude-sonnet-4-6").read == 21_500
    assert _send(cache, "c", "a", 21_000, 2_000, model="claude-sonnet-4-6").read == 20_000
