"""The TTL plans' questions answered once a provider and model (``_ttl_choosers``, ``_ttl_for``,
``_source_of``): the same answers, in the same order, as the providers' rules give request by
request, and each question asked once (the rules counted: the answers alone are the same
without the memo, so only the counts can fail where it is gone)."""

from collections import Counter

import pytest

from prefixbench.simulator.providers import rules_for
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit import whatif
from prefixbench.workloads.logs.trace import Prefix, TraceRequest

PAIRS = [("anthropic", "claude-sonnet-4-20250514"), ("openai", "gpt-5.1"), ("openai", "gpt-4o"),
         ("openai", "gpt-6.2-sol"), ("gemini", "gemini-2.5-pro"), ("unknown", "m")]


def _requests() -> list[TraceRequest]:
    found = []
    for n in range(60):
        provider, model = PAIRS[n % len(PAIRS)]
        usage = None if n % 7 == 3 else Usage(cache_read=n, cache_write_5m=1, uncached=2, output=3)
        prefix = None if n % 5 == 4 else Prefix("h", f"n{n}", None)
        found.append(TraceRequest(file=f"f{n % 3}", line=n + 1, lane="main", lane_kind="main", seq=n, sent_ms=None,
                                  ready_ms=None, provider=provider, model=model, usage=usage, prefix=prefix))
    return found


def _asked(provider: str, model: str, ttl: str) -> str | None:
    rules = rules_for(provider)
    if rules.picks_ttl(model):
        return ttl
    choice = rules.retention_choice(model)
    return None if choice is None else choice[1] if ttl == "1h" else choice[0]


def test_the_ttl_choosers_are_the_requests_whose_rules_let_the_client_pick_in_order() -> None:
    requests = _requests()
    expected = [r for r in requests
                if (rules_for(r.provider).picks_ttl(r.model) or rules_for(r.provider).retention_choice(r.model) is not None)
                and r.usage is not None and r.prefix is not None]
    got = whatif._ttl_choosers(requests)
    assert [id(r) for r in got] == [id(r) for r in expected]
    assert {r.provider for r in got} == {"anthropic", "openai"}  # (both ways of picking, and some left out)
    assert len(got) < len(requests)


def test_what_a_ttl_plan_asks_is_what_the_rules_say_asked_again_or_not() -> None:
    for _ in range(2):  # (the second time from what the first kept)
        for r in _requests():
            for ttl in ("5m", "1h"):
                assert whatif._ttl_for(r, ttl) == _asked(r.provider, r.model, ttl), (r.provider, r.model, ttl)
    assert whatif._ttl_for(_requests()[1], "1h") == "24h"  # (an answer that is not the ttl asked)
    assert whatif._ttl_for(_requests()[4], "1h") is None  # (and a kept None)


def test_a_files_source_is_the_same_asked_twice() -> None:
    path = "/home/u/.claude/projects/-w-x/s.jsonl"
    assert whatif._source_of(path) == whatif._source_of(path) == "/home/u/.claude/projects"


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The rules' two questions counted as the TTL plans ask them (each still answered), with
    nothing kept from an earlier test: ``_ttl_for``'s answers forgotten."""
    counts: Counter[str] = Counter()
    picks, choice = whatif._model_picks_ttl, whatif._retention_choice

    def counted_picks(provider: str, model: str) -> bool:
        counts["picks_ttl"] += 1
        return picks(provider, model)

    def counted_choice(provider: str, model: str) -> tuple[str, str] | None:
        counts["retention_choice"] += 1
        return choice(provider, model)

    monkeypatch.setattr(whatif, "_model_picks_ttl", counted_picks)
    monkeypatch.setattr(whatif, "_retention_choice", counted_choice)
    monkeypatch.setattr(whatif, "_TTL_FOR", {}, raising=False)
    return counts


def test_the_ttl_choosers_ask_the_rules_once_a_provider_and_model(asked: Counter[str]) -> None:
    requests = _requests()
    whatif._ttl_choosers(requests)
    whatif._ttl_choosers(requests)  # (a run of the TTL fixes asks it again and again: nine passes)
    # Once a pair a pass, of the pairs with a request it reads (usage and a chain): asked of
    # each request, as before the memo, the two passes asked it 120 times.
    readable = {(r.provider, r.model) for r in requests if r.usage is not None and r.prefix is not None}
    assert asked["picks_ttl"] <= 2 * len(readable) < len(requests)
    assert asked["retention_choice"] <= 2 * len(readable)


def test_a_ttl_plan_asks_the_rules_once_a_provider_model_and_ttl(asked: Counter[str]) -> None:
    requests = _requests()
    for _ in range(2):
        for r in requests:
            for ttl in ("5m", "1h"):
                whatif._ttl_for(r, ttl)
    # 240 questions of six pairs and two TTLs: the rules asked at most 12 times (each once).
    assert asked["picks_ttl"] <= len(PAIRS) * 2
    assert asked["retention_choice"] <= len(PAIRS) * 2


class _CountedHomes(tuple):
    """The agent homes a file's path is matched against, counting the walks over them."""

    walks = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        type(self).walks += 1
        return super().__iter__()


def test_a_files_source_is_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(whatif, "_AGENT_HOMES", _CountedHomes(whatif._AGENT_HOMES))
    path = "/home/memo-test/.pi/agent/sessions/--w--/once.jsonl"  # (a path no other test asks of)
    assert whatif._source_of(path) == "/home/memo-test/.pi/agent/sessions"
    walked = _CountedHomes.walks
    assert walked > 0
    assert whatif._source_of(path) == "/home/memo-test/.pi/agent/sessions"
    assert _CountedHomes.walks == walked  # (the second answer is the first one kept)
