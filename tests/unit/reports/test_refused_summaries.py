"""A refused summary call is counted as refused, never as uncached: the summary figures of the
run record, the sweep table and ``compare`` hold the accepted calls only, and the refused ones
are counted apart (``num_summaries_rejected``), as the session figures leave refused requests
out and ``num_rejected`` counts them."""

from __future__ import annotations

import json

import pytest

from prefixbench.kernel import EngineBase, EngineOptions, Message, StepContext, Text, ToolResult, user_text
from prefixbench.reports.cli import main
from prefixbench.reports.tables import fmt_calls

ASK = user_text("Summarize the conversation so far.")
#: A tool result that answers no call: the provider refuses a request that starts with it.
ORPHAN = Message("tool", (ToolResult("call_nowhere", (Text("orphaned"),)),))


class HalfRefused(EngineBase):
    """Every 10th step sends two summary calls: one the provider accepts (the view it sent, then
    the question; refused too once the session outgrows the window), one it refuses (an
    orphaned tool result first). It never rewrites."""

    name = "half-refused"

    def __init__(self) -> None:
        self.steps = 0

    def before_step(self, ctx: StepContext) -> None:
        self.steps += 1
        if self.steps % 10:
            return
        ctx.client(ctx.summary_request([*self.view(ctx.session), ASK]))
        ctx.client(ctx.summary_request([ORPHAN, ASK]))


def factory(window: int, options: EngineOptions) -> HalfRefused:
    return HalfRefused()


REF = f"{__name__}:factory"
SWEEP = ["sweep", "--engine", REF, "--windows", "32k", "--steps", "40"]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("refused") / "out"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main([*SWEEP, "--out", str(out), "--format", "json", "--quiet"]) == 0
    (out.parent / "sweep.json").write_text(buf.getvalue())
    return out, json.loads(buf.getvalue())


def test_refused_summary_calls_are_left_out_of_the_summary_figures(swept):
    _, runs = swept
    (run,) = runs
    refused = run["num_summaries_rejected"]
    assert 1 <= run["num_summaries"] - refused <= refused  # every orphaned call refused, some others too
    assert run["num_rejected"] >= refused
    # one entry per accepted call, none at the refused call's full size and 0% hit
    for field in ("summary_prompt_tokens", "summary_cached_tokens", "summary_uncached_tokens", "summary_hit_ratio"):
        assert len(run[field]) == run["num_summaries"] - refused, field
    assert min(run["summary_hit_ratio"]) > 0.5


def test_the_table_counts_refused_summary_calls_apart(swept, capsys):
    out, runs = swept
    assert main([*SWEEP, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"(+{runs[0]['num_summaries_rejected']} refused)" in text
    assert "0.0-" not in text  # no refused call's 0% in the hit range
    assert fmt_calls([], 44) == "- (44 refused)"
    assert fmt_calls([470, 471], 0) == "470 / 471"


def test_compare_sums_the_accepted_summary_calls_only(swept, tmp_path, capsys):
    out, runs = swept
    base = out.parent / "sweep.json"
    new = json.loads(base.read_text())
    new[0]["num_summaries_rejected"] += 5  # more refused calls: not a rise in uncached tokens
    (tmp_path / "new.json").write_text(json.dumps(new))
    assert main(["compare", str(base), str(tmp_path / "new.json")]) == 0
    assert "summary_uncached_tokens" not in capsys.readouterr().out
