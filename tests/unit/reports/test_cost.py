"""Cost reports: per-request dollars, per-run totals and savings, the Markdown section, cost.png."""

import math
from decimal import Decimal

import pandas as pd
import pytest

from prefixbench.workloads.runs.schema import COST_COLUMNS
from prefixbench.reports.cost import cost_chart, cost_markdown, cost_table, cost_text, run_costs
from prefixbench.simulator.pricing import get_price

D = Decimal


def make_observations() -> pd.DataFrame:
    """Two runs at one window: legacy re-sends its summary prompt uncached, patched reads it."""
    keys = {"workload": "seed-coding", "window": 32_000, "engine": "checkpoint", "profile": "lenient", "cache": "byte-exact"}
    rows = [
        # preset, purpose, prompt, cached, written, output
        ("legacy", "conversation", 10_000, 0, 10_000, 500),
        ("legacy", "compaction", 20_000, 0, 20_000, 1_000),
        ("patched", "conversation", 10_000, 0, 10_000, 500),
        ("patched", "compaction", 20_000, 19_500, 500, 1_000),
    ]
    return pd.DataFrame(
        [
            {**keys, "preset": p, "purpose": purpose, "prompt_tokens": n, "cached_tokens": c, "written_tokens": w,
             "written_long_tokens": 0, "output_tokens": o, "status": 200}
            for p, purpose, n, c, w, o in rows
        ]
    )


def test_cost_table_adds_exact_dollars_per_request():
    # deepseek-v4-flash off-peak: input 0.15, hit 0.003, output 0.60 per 1M tokens.
    costs = cost_table(make_observations(), get_price("deepseek-v4-flash"))
    assert list(costs.columns[-len(COST_COLUMNS):]) == list(COST_COLUMNS)
    last = costs.iloc[3]
    # 500 uncached x 0.15 + 19,500 hits x 0.003 + 1,000 output x 0.60, per 1M.
    assert (last["uncached_input_usd"], last["cache_read_usd"], last["cache_write_usd"], last["output_usd"]) == (
        D("0.000075"), D("0.0000585"), D(0), D("0.0006"),
    )
    assert last["total_usd"] == D("0.0007335")
    assert all(isinstance(v, Decimal) for v in costs["total_usd"])


def test_cost_table_needs_the_token_columns():
    with pytest.raises(ValueError, match="observations lack column\\(s\\) written_tokens"):
        cost_table(make_observations().drop(columns=["written_tokens"]), get_price("deepseek-v4-flash"))


def test_run_costs_totals_and_saving_vs_legacy():
    runs = run_costs(cost_table(make_observations(), get_price("deepseek-v4-flash")))
    legacy, patched = runs.iloc[0], runs.iloc[1]
    # legacy: 30,000 uncached x 0.15 + 1,500 output x 0.60 = 0.0045 + 0.0009
    assert (legacy["preset"], legacy["num_requests"], legacy["total_usd"]) == ("legacy", 2, D("0.0054"))
    assert legacy["compaction_usd"] == D("0.0036")
    # patched: 10,500 uncached + 19,500 hits + 1,500 output
    assert patched["total_usd"] == D("0.0015750") + D("0.0000585") + D("0.0009")
    assert patched["saving_vs_legacy_usd"] == D("0.0028665")
    assert patched["saving_vs_legacy_pct"] == pytest.approx(53.083333, abs=1e-6)
    assert legacy["saving_vs_legacy_usd"] == 0


def test_run_costs_without_a_legacy_run_has_no_saving():
    obs = make_observations()
    runs = run_costs(cost_table(obs[obs["preset"] == "patched"], get_price("deepseek-v4-flash")))
    assert runs.iloc[0]["saving_vs_legacy_usd"] is None and math.isnan(runs.iloc[0]["saving_vs_legacy_pct"])


def test_cost_markdown_section():
    price = get_price("deepseek-v4-flash", period="peak")
    text = cost_markdown(run_costs(cost_table(make_observations(), price)), price)
    assert text.splitlines()[:2] == ["## Cost", ""]
    assert "**deepseek/deepseek-v4-flash**, effective 2026-09-10, **peak** prices (peak = 2x off-peak, " in text
    assert "USD per 1M tokens: input 0.30, cache read 0.006, no cache-write fee, output 1.20." in text
    assert "Source: https://api-docs.deepseek.com/quick_start/pricing (official)." in text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table == [
        "| window | preset | requests | uncached input | cache read | cache write | output | total | summary calls | saving vs legacy |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        "| 32k | legacy | 2 | $0.009000 | $0 | $0 | $0.001800 | $0.010800 | $0.007200 | - |",
        "| 32k | patched | 2 | $0.003150 | $0.0001170 | $0 | $0.001800 | $0.005067 | $0.001467 | $0.005733 (53.1%) |",
    ]


def test_cost_markdown_for_a_model_with_write_fees_and_a_long_tier():
    price = get_price("gpt-5.6-sol", as_of="2026-08-01")  # the launch row, undated
    text = cost_markdown(run_costs(cost_table(make_observations(), price)), price)
    assert "since launch (the sources give no date)" in text
    assert "cache write 6.25, output 30." in text
    assert "Above 272,000 prompt tokens a request bills at input 10, cache read 1.00, cache write 12.50, output 45." in text
    assert "(inferred)" in text and "no cache-write fee" not in text


def test_cost_chart_is_byte_identical_across_runs(tmp_path):
    runs = run_costs(cost_table(make_observations(), get_price("claude-sonnet-4-5")))
    first, second = tmp_path / "a.png", tmp_path / "b.png"
    cost_chart(runs, first)
    cost_chart(runs, second)
    data = first.read_bytes()
    assert data.startswith(b"\x89PNG") and data == second.read_bytes()
    assert b"Software" not in data


def test_runs_that_differ_only_in_a_workload_option_are_priced_apart(tmp_path, capsys):
    # A grid over the pruner: the main table keeps a row per option set, and so must the cost
    # table (two 64/65-request runs were once added up into one 129-request row).
    from prefixbench.reports.entry import main

    grid = tmp_path / "grid.toml"
    grid.write_text(
        '[sweep.x]\nwindows = ["32k"]\npresets = ["legacy", "patched"]\nprice = "deepseek-v4-flash"\n'
        '[sweep.x.options]\npruner = ["rewrite-only", "none"]\nsteps = 20\n'
    )
    assert main(["sweep", "--grid", str(grid), "--quiet", "--jobs", "1", "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    import json

    runs = json.loads(capsys.readouterr().out)
    assert len(runs) == 4
    by_option = {(r["pruner"], r["preset"]): r for r in runs}
    assert len(by_option) == 4
    for (pruner, preset), r in by_option.items():
        assert r["total_usd"] > 0
        if preset == "patched":  # saved against the legacy run of the same option set
            legacy = by_option[(pruner, "legacy")]
            assert r["saving_vs_legacy_usd"] == pytest.approx(legacy["total_usd"] - r["total_usd"], abs=1e-9)
    cost_md = (tmp_path / "out" / "cost.md").read_text()
    assert cost_md.count("pruner=none") == 2 and cost_md.count("pruner=rewrite-only") == 2


def test_cost_chart_names_storage_only_where_a_run_paid_it(tmp_path, monkeypatch):
    # On integ53 cost.png's legend named "explicit-cache storage" on every sweep, a part of the
    # bill that cost.md leaves out where no run paid any (no explicit cache).
    import prefixbench.reports.charts as charts

    legends = []
    real_save = charts.save

    def keep_legend(fig, path):
        legends.append([t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()])
        real_save(fig, path)

    monkeypatch.setattr(charts, "save", keep_legend)
    runs = run_costs(cost_table(make_observations(), get_price("claude-sonnet-4-5")))
    cost_chart(runs, tmp_path / "cost.png")
    assert legends == [["uncached input", "cache read", "cache write", "output"]], legends


def test_a_run_with_refused_requests_is_marked_rejected_and_the_note_says_its_total_leaves_them_out():
    obs = make_observations()
    obs.loc[obs["preset"] == "patched", "status"] = 400  # every patched request refused
    price = get_price("deepseek-v4-flash")
    runs = run_costs(cost_table(obs, price))
    assert list(runs["num_rejected"]) == [0, 2]
    text = cost_text(runs)
    lines = text.splitlines()
    assert lines[0].split()[-1] == "status" and "400s" in lines[0].split()
    assert lines[2].endswith(" ok") and lines[3].endswith("! rejected")
    assert "the run's total leaves them out" in text
    table = [line for line in cost_markdown(runs, price).splitlines() if line.startswith("|")]
    assert table[0].endswith("| saving vs legacy | status |") and table[3].endswith("| ! rejected |")
    # without a refused request the table is as before
    assert "status" not in cost_text(run_costs(cost_table(make_observations(), price)))


def test_a_run_identical_to_its_legacy_run_reads_same_run_in_the_cost_table(tmp_path, capsys):
    from prefixbench.reports.cli import main

    argv = ["sweep", "--engine", "tests.user_engines:declared", "--windows", "32k", "--steps", "20",
            "--presets", "legacy,patched", "--price", "deepseek-v4-flash", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    cost = out[out.index("cost at"):].splitlines()
    patched = next(line for line in cost if " patched " in line)
    assert patched.endswith("same run") and "(0.0%)" not in patched
    assert "| same run |" in (tmp_path / "out" / "cost.md").read_text()
