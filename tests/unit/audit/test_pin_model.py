"""A session whose lane switches models on its own (Gemini CLI's default auto routing between
Pro and Flash) loses its cache on each switch: the loss is ``unknown`` (the log does not say who
switched), ``pin-model`` re-simulates the lane on one model and what to change names Gemini
CLI's setting; a switch the log shows the user chose is a choice (``model-chosen``)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from prefixbench.reports.cli import main
from prefixbench.workloads.audit.advice import advise
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import what_if

FLASH, PRO = "gemini-3-flash-preview", "gemini-3.1-pro-preview"
#: (model, prompt, cached) a call: three on Flash, two routed to Pro, two back on Flash.
ROUTED = [(FLASH, 20_000, 0), (FLASH, 21_000, 19_620), (FLASH, 22_000, 19_620), (PRO, 23_000, 0), (PRO, 24_000, 22_000),
          (FLASH, 25_000, 19_620), (FLASH, 26_000, 23_544)]


def _session(path: Path, calls=ROUTED, infos: dict[int, str] | None = None) -> Path:
    """A Gemini CLI JSONL session: a user turn before each call, 5 s apart; ``infos``: an info
    message the CLI logged before call i."""
    start = "2026-06-14T12:00:00.000Z"
    lines: list[dict] = [{"sessionId": "s", "projectHash": "h", "startTime": start, "lastUpdated": start, "kind": "main"}]
    t = 0

    def at(seconds: int) -> str:
        return f"2026-06-14T12:{seconds // 60:02d}:{seconds % 60:02d}.000Z"

    for i, (model, prompt, cached) in enumerate(calls):
        if infos and i in infos:
            lines.append({"id": f"i{i}", "timestamp": at(t), "type": "info", "content": infos[i]})
        lines.append({"id": f"u{i}", "timestamp": at(t), "type": "user", "content": [{"text": "go"}]})
        tokens = {"input": prompt, "output": 20, "cached": cached, "thoughts": 5, "tool": 0, "total": prompt + 25}
        lines.append({"id": f"m{i}", "timestamp": at(t + 5), "type": "gemini", "content": "ok", "tokens": tokens, "model": model})
        t += 10
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _audit(path: Path):
    trace = load_trace([path])
    return advise(run_audit([path], trace=trace), trace)


def test_a_routed_model_switch_is_unknown_not_unavoidable(tmp_path: Path) -> None:
    """Before, model-changed was unavoidable: $0.51 of a real session's $1.63 (Gemini CLI's router
    switching Flash and Pro) was put down as nothing to change."""
    result = _audit(_session(tmp_path / "routed.jsonl"))
    switched = [row for row in result.rows if row.cause == "model-changed"]
    assert len(switched) == 2 and {row.loss_class for row in switched} == {"unknown"}
    assert result.loss_split is not None and result.loss_split.unknown_usd >= Decimal("0.04")


def test_pin_model_is_recommended_with_gemini_clis_setting_and_its_price_effect_apart(tmp_path: Path) -> None:
    result = _audit(_session(tmp_path / "routed.jsonl"))
    [rec] = [rec for rec in result.recommendations if rec.fix == "pin-model"]
    assert rec.rank == 1 and rec.agent == "Gemini CLI" and rec.causes == ("model-changed",)
    assert rec.saved_usd is not None and rec.saved_usd > 0
    assert rec.setting is not None and "model.name" in rec.setting and "GEMINI_MODEL" in rec.setting
    assert "model-routing.md" in (rec.source or "")
    # The figure is the cache reads at each request's own model; the price of moving the two Pro
    # requests to Flash is said apart, not counted in.
    assert "priced at the model it was sent to" in rec.assumption
    assert f"2 from {PRO} to {FLASH}" in rec.detail and "less at its prices (not in the figure)" in rec.detail


def test_pin_model_sends_the_lane_to_its_most_used_model_and_prices_each_request_as_logged(tmp_path: Path) -> None:
    path = _session(tmp_path / "routed.jsonl")
    requests, summaries = load_trace([path])
    [w] = what_if(list(requests), list(summaries), ["pin-model"])
    assert w.applies and w.saved_usd is not None and w.saved_usd > 0 and w.tokens_to_read > 0
    # The Pro call that read nothing reads Flash's cache once pinned.
    first_pro = next(c for c in w.changes if c.index == 3)
    assert first_pro.reported_read == 0 and first_pro.counterfactual_read > 0
    # One model throughout: nothing to pin.
    one = _session(tmp_path / "one.jsonl", [(FLASH, p, c) for _, p, c in ROUTED])
    requests, summaries = load_trace([one])
    [w] = what_if(list(requests), list(summaries), ["pin-model"])
    assert not w.applies and w.saved_usd is None and "one model" in w.detail


def test_what_if_pin_model_on_the_command_line(tmp_path: Path, capsys) -> None:
    assert main(["audit", str(_session(tmp_path / "routed.jsonl")), "--quiet", "--what-if", "pin-model"]) == 0
    assert "pin-model" in capsys.readouterr().out


def test_a_switch_the_log_shows_the_user_made_is_a_choice(tmp_path: Path) -> None:
    """Gemini CLI records `/model set X` ("Model set to X") and a fallback kept on a quota error
    ("Switched to fallback model X") as info lines: the switch to X after one is the user's
    (``model-chosen``, unavoidable), not a routed one; "Model set to auto" hands the pick back to
    the router, so the switch after it stays unknown."""
    for info in (f"Model set to {PRO}", f"Switched to fallback model {PRO}", f"Model set to {PRO} (persisted)"):
        result = _audit(_session(tmp_path / "chosen.jsonl", infos={3: info}))
        causes = {row.index: (row.cause, row.loss_class) for row in result.rows if row.cause in ("model-changed", "model-chosen")}
        assert causes == {3: ("model-chosen", "unavoidable"), 5: ("model-changed", "unknown")}, info
        chosen = next(row for row in result.rows if row.index == 3)
        assert "picked by the user" in chosen.detail
    result = _audit(_session(tmp_path / "auto.jsonl", infos={3: "Model set to auto"}))
    assert {row.cause for row in result.rows if row.index == 3} == {"model-changed"}


def _claude_code(path: Path, command: str | None = None) -> Path:
    """A Claude Code session: two calls on Opus, then one on Sonnet; ``command``: a /model's
    output logged before the third."""
    from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

    t = Transcript("s1")
    t.user("plan it", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 20_000, 0, 40)], model="claude-opus-4-1-20250805")
    t.user("go on", "2025-09-03T00:00:10.000Z")
    t.assistant("r2", "2025-09-03T00:00:12.000Z", [cc_usage(3, 300, 20_000, 40)], model="claude-opus-4-1-20250805")
    if command is not None:
        t.user(command, "2025-09-03T00:00:15.000Z")
    t.user("now build it", "2025-09-03T00:00:20.000Z")
    t.assistant("r3", "2025-09-03T00:00:22.000Z", [cc_usage(3, 20_600, 0, 40)], model="claude-sonnet-4-5-20250929")
    return write_jsonl(path, t.lines)


def test_claude_codes_model_switches_name_its_own_settings(tmp_path: Path) -> None:
    """A Claude Code main lane that moves from Opus to Sonnet with no /model logged (opusplan
    leaving plan mode, a fallback): unknown, and pin-model names Claude Code's model setting, not
    Gemini CLI's; the detail says Opus's prices would cost more."""
    result = _audit(_claude_code(tmp_path / "s1.jsonl"))
    assert [row.loss_class for row in result.rows if row.cause == "model-changed"] == ["unknown"]
    [rec] = [rec for rec in result.recommendations if rec.fix == "pin-model"]
    assert rec.agent == "Claude Code" and "opusplan" in rec.change and "ANTHROPIC_MODEL" in (rec.setting or "")
    assert "model-config" in (rec.source or "")
    assert "more at its prices (not in the figure)" in rec.detail


def test_a_claude_code_model_switch_after_a_logged_slash_model_is_the_users_choice(tmp_path: Path) -> None:
    """Claude Code logs /model's output as a user entry ("Set model to ..." with an alias or a
    display name): the switch after it is model-chosen, unavoidable, and pin-model is not offered."""
    for said in ("<local-command-stdout>Set model to \x1b[1mSonnet 4.5\x1b[22m</local-command-stdout>",
                 "<local-command-stdout>Set model to sonnet (claude-sonnet-4-5-20250929)</local-command-stdout>"):
        result = _audit(_claude_code(tmp_path / "s1.jsonl", said))
        [row] = [row for row in result.rows if row.model == "claude-sonnet-4-5-20250929"]
        assert (row.cause, row.loss_class) == ("model-chosen", "unavoidable") and "a /model" in row.detail
        assert not [rec for rec in result.recommendations if rec.fix == "pin-model"]


def test_a_lane_that_starts_on_another_model_switched_nothing() -> None:
    """A subagent lane run on a smaller model than its parent (its first request's model-changed)
    is how the lane is made: unavoidable, and no pin-model for it; a switch inside a lane is unknown."""
    from types import SimpleNamespace

    from prefixbench.workloads.audit.losses import fixes_for, loss_class

    def row(index: int) -> SimpleNamespace:
        return SimpleNamespace(cause="model-changed", provider="openai", model="gpt-5.1-codex-mini", lane_kind="subagent",
                               gap_ms=None, index=index)

    assert (loss_class(row(0)), fixes_for(row(0))) == ("unavoidable", ())
    assert (loss_class(row(3)), fixes_for(row(3))) == ("unknown", ("pin-model",))


def test_a_users_own_message_quoting_set_model_to_is_no_choice(tmp_path: Path) -> None:
    """Only /model's own output, a user entry that *is* ``<local-command-stdout>Set model to ...``,
    says the user switched: a prompt the user typed that merely quotes those words (a pasted
    transcript, a question about it) is no evidence, so the switch after it stays model-changed."""
    for typed in ("why does my log say <local-command-stdout>Set model to sonnet</local-command-stdout>?",
                  "Set model to sonnet, please", "the CLI printed: Set model to sonnet"):
        result = _audit(_claude_code(tmp_path / "s1.jsonl", typed))
        [row] = [row for row in result.rows if row.model == "claude-sonnet-4-5-20250929"]
        assert (row.cause, row.loss_class) == ("model-changed", "unknown"), typed


def test_a_model_chosen_by_its_alias_stays_chosen_under_model_alias(tmp_path: Path, capsys) -> None:
    """`/model set` names the model as the log does: where that name is an alias the user maps
    (--model-alias), the switch to it is still the user's choice, not a routed switch."""
    alias = "my-pro"
    calls = [(alias if model == PRO else model, prompt, cached) for model, prompt, cached in ROUTED]
    path = _session(tmp_path / "aliased.jsonl", calls, infos={3: f"Model set to {alias}"})
    assert main(["audit", str(path), "--quiet", "--format", "json", "--model-alias", f"{alias}={PRO}"]) in (0, 1)
    rows = json.loads(capsys.readouterr().out)["requests"]
    [row] = [row for row in rows if row["index"] == 3]
    assert (row["model"], row["cause"]) == (PRO, "model-chosen")


def test_a_model_changed_diagnostic_after_a_logged_slash_model_is_still_the_users_choice(tmp_path: Path) -> None:
    """Anthropic's diagnostic ``model_changed`` says the model changed, not who changed it: after
    a /model the log records, the switch is the user's (model-chosen), as without the diagnostic."""
    said = "<local-command-stdout>Set model to sonnet (claude-sonnet-4-5-20250929)</local-command-stdout>"
    path = _claude_code(tmp_path / "s1.jsonl", said)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        if line.get("type") == "assistant" and line["message"]["model"] == "claude-sonnet-4-5-20250929":
            line["message"]["usage"]["cache_miss_reason"] = "model_changed"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = _audit(path)
    [row] = [row for row in result.rows if row.model == "claude-sonnet-4-5-20250929"]
    assert (row.cause, row.loss_class) == ("model-chosen", "unavoidable")
    assert not [rec for rec in result.recommendations if rec.fix == "pin-model"]
    # Without the /model the diagnostic's cause stands.
    path = _claude_code(tmp_path / "s2.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        if line.get("type") == "assistant" and line["message"]["model"] == "claude-sonnet-4-5-20250929":
            line["message"]["usage"]["cache_miss_reason"] = "model_changed"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    [row] = [row for row in _audit(path).rows if row.model == "claude-sonnet-4-5-20250929"]
    assert (row.cause, row.evidence) == ("model-changed", "diagnostic")


def test_the_servers_model_changed_agrees_with_a_switch_the_user_chose() -> None:
    """model-chosen is a model change the log shows the user made: Anthropic's ``model_changed``
    agrees with it (the agreement table called it a disagreement)."""
    from collections import Counter

    from prefixbench.workloads.audit.core import _agreement

    [pair] = _agreement(Counter({("model_changed", "model-chosen"): 2}))
    assert pair.agree is True
    [pair] = _agreement(Counter({("system_changed", "model-chosen"): 1}))
    assert pair.agree is False


def test_pin_model_keeps_the_switches_the_log_shows_the_user_made(tmp_path: Path) -> None:
    """pin-model is what a client that switches on its own would save pinned: a switch the log
    shows the user chose (model-chosen) is kept, so a lane whose every switch was chosen has
    nothing to pin (it re-simulated the user's choices away and claimed their cache as saved)."""
    infos = {3: f"Model set to {PRO}", 5: f"Model set to {FLASH}"}
    requests, summaries = load_trace([_session(tmp_path / "chosen.jsonl", infos=infos)])
    [w] = what_if(list(requests), list(summaries), ["pin-model"])
    assert not w.applies and w.saved_usd is None
    # One chosen, one routed: only the routed one's part of the lane is pinned (Pro, its
    # most used model from the chosen switch on: 2 of 4, the first sent).
    requests, summaries = load_trace([_session(tmp_path / "half.jsonl", infos={3: f"Model set to {PRO}"})])
    [w] = what_if(list(requests), list(summaries), ["pin-model"])
    assert w.applies and f"2 from {FLASH} to {PRO}" in w.detail and "1 lane" in w.detail


def test_nothing_to_pin_names_the_users_switches_only_where_the_log_shows_some(tmp_path: Path) -> None:
    """Before, every "nothing to pin" said "but for the switches the log shows the user made
    (kept)", on a one-model Codex rollout with no switch at all: a claim the log does not make."""
    one = _session(tmp_path / "one.jsonl", [(FLASH, p, c) for _, p, c in ROUTED])
    [w] = what_if(*map(list, load_trace([one])), ["pin-model"])
    assert not w.applies and "nothing to pin" in w.detail and "switch" not in w.detail
    infos = {3: f"Model set to {PRO}", 5: f"Model set to {FLASH}"}
    [w] = what_if(*map(list, load_trace([_session(tmp_path / "chosen.jsonl", infos=infos)])), ["pin-model"])
    assert not w.applies and "but for the 2 switch(es) the log shows the user made (kept)" in w.detail


def test_a_request_whose_model_the_log_does_not_name_is_not_a_switch_to_pin(tmp_path: Path) -> None:
    """A Cline-family task names a call's model ``unknown`` where its log does not say it: a real
    Roo task's lane of 15 such calls and 23 on claude-sonnet-4 was "pinned" (15 moved from
    unknown), a switch the log never showed. They are left as logged and the detail says so."""
    calls = [(FLASH, p, c) if i < 3 else ("unknown", p, c) for i, (_, p, c) in enumerate(ROUTED)]
    requests, summaries = load_trace([_session(tmp_path / "unnamed.jsonl", calls)])
    assert {r.model for r in requests} == {FLASH, "unknown"}
    [w] = what_if(list(requests), list(summaries), ["pin-model"])
    assert not w.applies and w.saved_usd is None
    assert "nothing to pin" in w.detail and "4 request(s) whose model the log does not name" in w.detail


def test_the_price_effect_of_moving_unpriced_requests_is_unknown_not_zero(tmp_path: Path) -> None:
    """Before, moving requests none of which had a price read "would also cost $0 more at its
    prices"; the log cannot price it, and the detail says so."""
    calls = [("made-up-model-a" if m == FLASH else "made-up-model-b", p, c) for m, p, c in ROUTED]
    requests, summaries = load_trace([_session(tmp_path / "unpriced.jsonl", calls)])
    [w] = what_if(list(requests), list(summaries), ["pin-model"])
    assert w.applies and "$0 more" not in w.detail and "$0 less" not in w.detail
    assert "cost an amount the log cannot price" in w.detail


def test_a_call_whose_model_the_log_does_not_name_is_not_put_down_to_a_model_change(tmp_path: Path) -> None:
    """Before, a miss on the call after one logged as ``unknown`` was ``model-changed`` (the same
    Roo task: $0.3056 put down to a switch the log never showed) and pin-model was offered for it."""
    calls = [(FLASH, p, c) if i < 3 else ("unknown", p, c) for i, (_, p, c) in enumerate(ROUTED)]
    result = _audit(_session(tmp_path / "unnamed.jsonl", calls))
    assert not [row for row in result.rows if row.cause in ("model-changed", "model-chosen")]
    assert not [rec for rec in result.recommendations if rec.fix == "pin-model"]


def test_a_codex_model_switch_names_codexs_own_model_setting() -> None:
    """A real Codex rollout (AkashJana18/edgerunner) moved from gpt-5.6-luna to gpt-5.6-sol:
    pin-model's change was the generic one, though Codex documents its model setting."""
    from prefixbench.workloads.audit.advice import AGENT_SETTINGS

    codex = AGENT_SETTINGS[("codex", "pin-model")]
    assert "~/.codex/config.toml" in (codex.setting or "") and "--model" in (codex.setting or "")
    assert "developers.openai.com/codex/config-basic" in codex.source


def test_a_switch_after_an_idle_gap_past_the_ttl_is_the_expiry_not_the_switch(tmp_path: Path) -> None:
    """AkashJana18/edgerunner's codex-session.jsonl:855 (tests/realdata): 18h39m idle after a 30 min
    lifetime, then gpt-5.6-sol -> gpt-5.6-luna, was model-changed (unknown), and pin-model ranked
    first though its own re-simulation changed none of it: the entry had expired either way. The
    expiry leads and the detail names the switch."""
    lines = _claude_code(tmp_path / "s1.jsonl").read_text().replace("2025-09-03T00:00:2", "2025-09-03T02:00:2")
    (tmp_path / "s1.jsonl").write_text(lines)  # the Sonnet call 2 h after the Opus one, past its 5 min
    result = _audit(tmp_path / "s1.jsonl")
    [row] = [row for row in result.rows if row.model == "claude-sonnet-4-5-20250929"]
    assert row.gap_ms is not None and row.gap_ms > 3_600_000
    assert row.cause == "ttl-expired", (row.cause, row.detail)
    assert "the model changed too (claude-opus-4-1-20250805 -> claude-sonnet-4-5-20250929)" in row.detail
    assert row.detail.startswith("idle 2h00m since the previous request") or "2h00m" in row.detail.split(";")[0]
    assert not [rec for rec in result.recommendations or () if rec.fix == "pin-model"]
    # docs/audit.md's example is that row's switch (it said gpt-5.6-sol -> gpt-5.5)
    from tests.readme import ROOT

    assert "then `gpt-5.6-sol -> gpt-5.6-luna`" in (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")


def test_a_switch_after_an_idle_gap_stays_the_switch_where_another_lane_kept_the_head_warm() -> None:
    """The warm case of the test above: another lane sent under the same head 30 s before the
    switch, within the TTL, so the head was warm and the gap alone does not explain the miss; the
    switch stays the cause (with no such lane, the same call is ttl-expired)."""
    from prefixbench.simulator.price_lookup import Prices
    from prefixbench.simulator.usage import Usage
    from prefixbench.workloads.audit.core import audit_requests
    from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest

    minute, t0, opus, sonnet = 60_000, 1_780_000_000_000, "claude-opus-4-1", "claude-sonnet-4-5"

    def call(file: str, seq: int, sent: int, read: int, write: int, parent: str | None, model: str) -> TraceRequest:
        return TraceRequest(file=file, line=seq + 1, lane="main", lane_kind="main", seq=seq, sent_ms=t0 + sent,
                            ready_ms=t0 + sent + 2_000, provider="anthropic", model=model,
                            usage=Usage(cache_read=read, cache_write_5m=write, uncached=3),
                            prefix=Prefix(f"claude-code:main:{model}:2.1.0", f"{file}#{seq}", parent))

    def cause(other_lane: bool) -> str:
        requests = [call("a.jsonl", 0, 0, 0, 12_000, None, opus), call("a.jsonl", 1, minute, 12_000, 2_000, "a.jsonl#0", opus)]
        if other_lane:  # c's start under the Sonnet head, 30 s before a's switch to Sonnet
            requests.append(call("c.jsonl", 0, 30 * minute, 0, 12_000, None, sonnet))
        requests.append(call("a.jsonl", 2, 30 * minute + 30_000, 12_000, 4_000, "a.jsonl#1", sonnet))
        summaries = [FileSummary(f, "claude-code", 2) for f in ("a.jsonl", "c.jsonl")[:1 + other_lane]]
        [row] = [row for row in audit_requests(requests, summaries, Prices(None)).rows if (row.file, row.line) == ("a.jsonl", 3)]
        return row.cause

    assert cause(other_lane=True) == "model-changed"
    assert cause(other_lane=False) == "ttl-expired"
