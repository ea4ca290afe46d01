"""report.html without a browser: self-contained, deterministic, honest axes, escaped text."""

import re

from prefixbench.reports.html import Bar, Step, page, stacked_bars, waterfall
from prefixbench.reports.cli import main


def test_sweep_report_is_self_contained(tmp_path):
    assert main(["sweep", "--windows", "32k", "--presets", "patched", "--steps", "30", "--quiet", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "report.html").read_text()
    # nothing to fetch: no src/href to another document, no external URL anywhere
    assert not re.search(r"""(?:src|href)\s*=\s*["'](?!#)""", text)
    assert "http://" not in text and "https://" not in text and "//cdn" not in text
    assert "default-src 'none'" in text


def test_the_axis_reaches_the_tallest_bar_and_overlay():
    bars = [Bar((("read", 900.0, "#000"), ("uncached", 100.0, "#111")), "t", {}), Bar((("read", 10.0, "#000"),), "t", {}, overlay=1234.0)]
    svg = stacked_bars(bars, title="x", xlabel="r")
    ticks = [t for t in re.findall(r'text-anchor="end">([^<]+)<', svg)]
    top = ticks[4]  # 0, 1/4, 1/2, 3/4, top
    value = float(top.rstrip("k")) * (1000 if top.endswith("k") else 1)
    assert value >= 1234


def test_text_is_escaped_and_the_data_cannot_close_its_script():
    html = page("sweep", "<b>t</b>", "s", [("a", "A", stacked_bars([Bar((("read", 1.0, "#0"),), "<script>x</script>", {})], title="t", xlabel="x"))],
                {"k": "</script><script>alert(1)</script>"})
    assert "<b>t</b>" not in html and "&lt;b&gt;" in html
    assert "<script>x</script>" not in html
    assert html.count("</script>") == 2  # the data block and the tooltip script


def test_waterfall_floats_changes_from_the_running_sum():
    svg = waterfall([Step("paid", 10.0, "total", ""), Step("ttl-expired", -4.0, "loss", ""), Step("left", 6.0, "total", "")], title="w")
    heights = {m.group(1): float(m.group(2)) for m in re.finditer(r'data-label="([^"]+)" data-value="[^"]*" x="[^"]*" y="[^"]*" width="[^"]*" height="([^"]*)"', svg)}
    assert abs(heights["ttl-expired"] / heights["paid"] - 0.4) < 1e-3
    assert abs(heights["left"] / heights["paid"] - 0.6) < 1e-3


def test_the_sweep_cost_table_shows_an_unknown_summary_cost_as_a_dash():
    """A run whose observations name no purpose has no compaction cost: "-", not $0.0000 (main)."""
    import re
    from decimal import Decimal

    from prefixbench.reports.html_pages import _cost_section

    run = {"window": 32_000, "engine": "checkpoint", "preset": "legacy", "uncached_input_usd": Decimal("0.5"),
           "cache_read_usd": Decimal("0.1"), "cache_write_usd": Decimal("0.2"), "output_usd": Decimal("0.1"),
           "storage_usd": Decimal(0), "total_usd": Decimal("0.9"), "saving_vs_legacy_usd": None, "saving_vs_legacy_pct": None}
    for value, shown in ((None, "-"), (float("nan"), "-"), (Decimal("0.0036"), "$0.003600")):
        html = _cost_section([(0, {**run, "compaction_usd": value})], [32_000], False)
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", html.split("<tbody>")[1].split("</tr>")[0])
        assert cells[-2] == shown, cells


def test_runs_of_two_cache_models_are_two_rows_and_two_bars_the_page_tells_apart(tmp_path):
    """newuser4: a sweep of two --cache models (or two workloads) wrote report.html rows and bars
    labelled only engine/preset: two runs that differ by their cache read as one configuration twice."""
    args = ["sweep", "--windows", "32k", "--presets", "patched", "--steps", "30", "--quiet", "--out", str(tmp_path),
            "--grid", str(tmp_path.parent / "two-caches.toml")]
    (tmp_path.parent / "two-caches.toml").write_text('[sweep.a]\ncaches = ["byte-exact", "deepseek"]\n')
    assert main(args) == 0
    text = (tmp_path / "report.html").read_text()
    table = text[text.index("<table"):text.index("</table>")]
    header = re.sub(r"<[^>]+>", " ", table.split("</tr>")[0]).split()
    assert header[:3] == ["window", "cache", "preset"], header
    assert re.search(r">byte-exact<", table) and re.search(r">deepseek<", table)
    assert "patched (byte-exact)" in text and "patched (deepseek)" in text


def test_check_page_keeps_each_case_of_a_user_engine_apart():
    """trial54: the grid keyed a cell by spec, engine and window only, so the case judged last
    (thinking-tools) overwrote seed-coding's: a FAIL there was drawn as PASS, and the verdicts
    table showed two rows alike but for their verdict."""
    from prefixbench.reports.html_pages import check_page

    base = {"spec": "rewrites-pay-back", "engine": "mine", "preset": "patched", "window": 32_000, "profile": "lenient"}
    records = [
        {**base, "workload": "seed-coding", "verdict": "violated", "passed": False, "status": "FAIL", "figure": "1 of 2 never paid back"},
        {**base, "workload": "thinking-tools", "verdict": "pass", "passed": True, "status": "PASS", "figure": "3 paid back"},
    ]
    page = check_page("patched", records)
    assert page.count('<rect class="fail"') == 1 and page.count('<rect class="pass"') == 1
    assert "rewrites-pay-back [mine/seed-coding/lenient]" in page and "rewrites-pay-back [mine/thinking-tools/lenient]" in page
    assert "<th>workload</th><th>profile</th>" in page


def test_a_page_rounds_dollars_as_the_table_does() -> None:
    # review62c: $0.01235 was $0.0124 in the terminal (Decimal, half up) and $0.0123 on the page.
    from decimal import Decimal

    from prefixbench.reports.html import fmt_usd
    from prefixbench.simulator.pricing import format_usd

    for value in (0.01235, 0.00012345, 0.2193, 0.0, -0.01, 12.34):
        assert fmt_usd(value) == format_usd(Decimal(repr(value)))
    assert fmt_usd(0.01235) == "$0.0124"
