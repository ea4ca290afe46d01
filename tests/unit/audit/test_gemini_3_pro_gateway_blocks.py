"""gemini-3-pro-preview through OpenRouter reads whole blocks of its upstream's previous prompt
(gruckion/mini-swe-agent's 500 runs, tests/realdata/test_unmeasured_formats_oos_realdata.py):
every 2,016 reported tokens through Vertex AI (OpenRouter's ``Google``), every second such block
through Google AI Studio and Portkey. The gateway and the upstream decide the step together: a
call that names neither (Gemini CLI, Vertex AI direct) keeps the model's own.

Each fixture is a mini-swe-agent 1.15 trajectory written here: LiteLLM keeps OpenRouter's
response (its ``gen-`` id and ``provider``, the upstream) and Portkey's (``portkey-`` id). On the
code before the rule (checked) the reader set no step, so every test here but the one of a prompt
under one block failed (that one the documented 4,096-token minimum already decides): after a
switch of upstream, for one, the audit predicted 11,001, about all of Google's previous prompt.
"""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.simulator.providers.gemini import RULES
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.formats.gateway_usage import route_of

MODEL = "google/gemini-3-pro-preview"


def _trajectory(path: Path, served: list[tuple[str, str | None, int, int]], model: str = MODEL) -> Path:
    """One run whose calls each extend the previous one's messages: ``(response id, upstream the
    response names or None, prompt tokens, cached tokens)`` per call, about four characters a
    token so the body's size agrees with the counts."""
    messages: list[dict] = [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer. " + "abcd " * (served[0][2] * 4 // 5)},
        {"role": "user", "content": "Please solve this issue: calc.divide(1, 0) returns None."},
    ]
    for i, (rid, upstream, prompt, cached) in enumerate(served):
        answer = f"step {i}\n```bash\nls\n```"
        response: dict = {
            "id": rid, "created": 1763506000 + 10 * i, "object": "chat.completion",
            "model": model.split("/", 1)[-1] if rid.startswith("portkey-") else model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20,
                      "prompt_tokens_details": {"cached_tokens": cached}},
        }
        if upstream is not None:
            response["provider"] = upstream
        messages.append({"role": "assistant", "content": answer, "extra": {"response": response}})
        grows = served[i + 1][2] - prompt - 20 if i + 1 < len(served) else 10
        messages.append({"role": "user", "content": f"obs{i} " + "wxyz " * (grows * 4 // 5)})
    path.write_text(json.dumps({
        "info": {"exit_status": "Submitted", "submission": "", "mini_version": "1.15.0",
                 "model_stats": {"instance_cost": 0.01, "api_calls": len(served)},
                 "config": {"model": {"model_name": model, "model_kwargs": {}},
                            "model_type": "minisweagent.models.litellm_model.LitellmModel"}},
        "messages": messages, "trajectory_format": "mini-swe-agent-1"}, indent=2))
    return path


def _steps(path: Path) -> list[tuple[str, int]]:
    fmt = detect_format(path)
    assert fmt is FORMATS["swe-agent"]
    requests, _ = import_file(path, fmt, ImportContext())
    return [(r.upstream, r.read_step) for r in requests]


def test_vertex_ai_through_openrouter_reads_every_2016_token_block(tmp_path: Path) -> None:
    path = _trajectory(tmp_path / "v.traj.json", [("gen-1763510511-q", "Google", 7000, 0), ("gen-1763510512-q", "Google", 11000, 6048)])
    assert _steps(path) == [("Google", 2016), ("Google", 2016)]
    rows = run_audit([path]).rows
    # The last whole block of 7,000 tokens: 3 x 2,016 (base: about the whole 7,000).
    assert (rows[1].predicted_cache_read, rows[1].reported_cache_read, rows[1].cause) == (6048, 6048, None)
    assert "OpenRouter's Google route: blocks of 2,016, measured on one published source of 500 runs" in rows[1].detail


def test_ai_studio_through_openrouter_reads_every_second_block(tmp_path: Path) -> None:
    path = _trajectory(tmp_path / "s.traj.json", [("gen-1763510511-q", "Google AI Studio", 15000, 0), ("gen-1763510512-q", "Google AI Studio", 19000, 12096)])
    assert _steps(path) == [("Google AI Studio", 4032), ("Google AI Studio", 4032)]
    row = run_audit([path]).rows[1]
    # 15,000 holds seven 2,016-token blocks; AI Studio reads the sixth (3 x 4,032), not the seventh.
    assert (row.predicted_cache_read, row.reported_cache_read, row.cause) == (12096, 12096, None)
    assert "OpenRouter's Google AI Studio route: blocks of 4,032" in row.detail


def test_a_switch_of_upstream_reads_the_last_block_of_that_upstreams_own_previous_prompt(tmp_path: Path) -> None:
    path = _trajectory(tmp_path / "w.traj.json", [("gen-1763510511-q", "Google", 11000, 0), ("gen-1763510512-q", "Google AI Studio", 15000, 0),
                                                  ("gen-1763510513-q", "Google", 19000, 10080)])
    rows = run_audit([path]).rows
    assert [r.predicted_cache_read for r in rows] == [0, 0, 10080]  # 5 x 2,016 of Google's 11,000
    assert rows[1].cause == "provider-best-effort"  # AI Studio held nothing Google cached


def test_a_prompt_under_one_block_leaves_nothing_to_read(tmp_path: Path) -> None:
    # (Gemini 3 Pro's documented 4,096-token minimum says as much for this call alone; the grid
    # puts the read at 0 whatever minimum applies.)
    assert RULES.round_read(2015, "gemini-3-pro-preview", 2016) == 0
    assert RULES.round_read(4031, "gemini-3-pro-preview", 4032) == 0
    path = _trajectory(tmp_path / "u.traj.json", [("gen-1763510511-q", "Google", 1900, 0), ("gen-1763510512-q", "Google", 6000, 0)])
    assert [r.predicted_cache_read for r in run_audit([path]).rows] == [0, 0]


def test_portkey_reads_every_second_block_and_direct_calls_keep_the_models_step(tmp_path: Path) -> None:
    portkey = _trajectory(tmp_path / "p.traj.json", [("portkey-1", "google", 15000, 0), ("portkey-2", "google", 19000, 12096)],
                          model="@google/gemini-3-pro-preview")
    assert _steps(portkey) == [("google", 4032), ("google", 4032)]
    # No gateway id, or no upstream named: the model's own step (Gemini CLI, Vertex AI direct).
    direct = _trajectory(tmp_path / "d.traj.json", [("chatcmpl-1", None, 7000, 0), ("chatcmpl-2", None, 11000, 6048)],
                         model="gemini/gemini-3-pro-preview")
    assert _steps(direct) == [("", 0), ("", 0)]
    named = _trajectory(tmp_path / "n.traj.json", [("abc", "Google", 7000, 0), ("def", "Google", 11000, 6048)])
    assert _steps(named) == [("Google", 0), ("Google", 0)]
    # Another model through the same route keeps its own rules.
    flash = _trajectory(tmp_path / "f.traj.json", [("gen-1763510511-q", "Google", 7000, 0)], model="google/gemini-3-flash-preview")
    assert _steps(flash) == [("Google", 0)]


def test_route_of_names_the_gateway_only_where_the_response_names_an_upstream() -> None:
    assert route_of({"id": "gen-1763510516-q2q", "provider": "Google"}) == "openrouter"
    assert route_of({"id": "portkey-077d26bd", "provider": "google"}) == "portkey"
    assert route_of({"id": "gen-1", "provider": ""}) == ""
    assert route_of({"id": "chatcmpl-1", "provider": "Google"}) == ""
    assert RULES.route_upstream_step("openrouter", "Google", "gemini-3-pro-preview") == 2016
    assert RULES.route_upstream_step("", "Google", "gemini-3-pro-preview") == 0


def test_a_hand_made_gen_id_names_no_gateway() -> None:
    # OpenRouter's ids are ``gen-`` and the epoch second; a proxy's own ``gen-`` id is not one
    # (the base took any ``gen-`` id for OpenRouter's).
    assert route_of({"id": "gen-google-rest", "provider": "Google"}) == ""
    assert route_of({"id": "gen-176351051-q", "provider": "Google"}) == ""


def test_a_read_step_flag_is_not_put_down_to_another_gateways_route(tmp_path: Path, capsys) -> None:
    # An OpenRouter call to Google with ``--read-step gemini=4032``: the step is the flag's, and
    # Portkey's Google rule (also 4,032) gave it nothing; the base's detail said "Portkey's
    # Google route".
    from prefixbench.reports.cli import main

    path = _trajectory(tmp_path / "v.traj.json", [("gen-1763510511-q", "Google", 7000, 0), ("gen-1763510512-q", "Google", 11000, 4032)])
    assert main(["audit", str(path), "--quiet", "--format", "json", "--read-step", "gemini=4032"]) == 0
    rows = json.loads(capsys.readouterr().out)["requests"]
    assert not any("route: blocks of" in (row["detail"] or "") for row in rows)
    assert main(["audit", str(path), "--quiet", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["requests"]
    assert "OpenRouter's Google route: blocks of 2,016" in rows[1]["detail"]
