"""``prefixbench compare``: exit 0 on identical results, 1 past a threshold, 2 on kinds that do
not compare; named baselines; one-line errors on bad files."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.runs.compare import (
    DEFAULT_THRESHOLDS,
    Thresholds,
    compare,
    load_baseline,
    read_result,
    result_from_json,
    save_baseline,
)

SWEEP = ["sweep", "--windows", "32k", "--presets", "legacy,patched", "--steps", "40", "--quiet"]

AUDIT = {
    "schema": 1,
    "requests": [],
    "lanes": [
        {"file": "s.jsonl", "lane": "main", "requests": 10, "reported_uncached": 1000, "reported_cache_read": 50000, "cost_usd": 0.5, "lost_usd": 0.1, "hit_ratio": 0.9},
        {"file": "s.jsonl", "lane": "agent-1", "requests": 4, "reported_uncached": 200, "reported_cache_read": 9000, "cost_usd": 0.1, "lost_usd": 0.0, "hit_ratio": 0.8},
    ],
    "causes": [{"cause": "ttl-expired", "requests": 2, "lost_tokens": 3000, "lost_usd": 0.05}],
    "totals": {"requests": 14, "input": 1200, "output": 900, "cache_read": 59000, "cache_write": 3000, "cost_usd": 0.6, "lost_usd": 0.1, "hit_ratio": 0.88},
}


@pytest.fixture(scope="module")
def sweep_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main([*SWEEP, "--out", str(root / "out"), "--format", "json"]) == 0
    (root / "sweep.json").write_text(buf.getvalue())
    return root / "sweep.json", root / "out" / "runs.csv"


def _write(path, data):
    path.write_text(json.dumps(data))
    return path


def test_identical_inputs_exit_0_and_csv_equals_json(sweep_files, capsys):
    js, csv = sweep_files
    assert main(["compare", str(js), str(js)]) == 0
    # runs.csv and the JSON output of the same sweep are the same result
    assert main(["compare", str(csv), str(js)]) == 0
    assert "every shared figure is identical" in capsys.readouterr().out


@pytest.mark.parametrize("run", [0, 1])
def test_default_thresholds_catch_a_ten_percent_rise_in_any_run(sweep_files, tmp_path, capsys, run):
    js, _ = sweep_files
    runs = json.loads(js.read_text())
    runs[run]["session_uncached_tokens"] = round(runs[run]["session_uncached_tokens"] * 1.10)
    new = _write(tmp_path / "new.json", runs)
    assert main(["compare", str(js), str(new), "--format", "md"]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 1 regression" in out and "+10.0%" in out and f"preset={runs[run]['preset']}" in out
    # an improvement of the same size passes
    runs[run]["session_uncached_tokens"] = round(runs[run]["session_uncached_tokens"] / 1.10 * 0.9)
    assert main(["compare", str(js), str(_write(tmp_path / "better.json", runs))]) == 0


def test_a_small_rise_under_the_limit_passes_and_the_limit_is_configurable(sweep_files, tmp_path):
    js, _ = sweep_files
    runs = json.loads(js.read_text())
    runs[1]["session_uncached_tokens"] = round(runs[1]["session_uncached_tokens"] * 1.01)
    new = _write(tmp_path / "new.json", runs)
    assert main(["compare", str(js), str(new)]) == 0
    assert main(["compare", str(js), str(new), "--max-regression", "uncached=0.5%"]) == 1
    assert main(["compare", str(js), str(new), "--max-regression", "none"]) == 0


def test_hit_ratio_drop_in_points(sweep_files, tmp_path):
    js, _ = sweep_files
    runs = json.loads(js.read_text())
    runs[1]["summary_hit_ratio"] = [h - 0.006 for h in runs[1]["summary_hit_ratio"]]
    assert main(["compare", str(js), str(_write(tmp_path / "n.json", runs))]) == 1
    runs[1]["summary_hit_ratio"] = [h + 0.002 for h in runs[1]["summary_hit_ratio"]]  # -0.4pt in all
    assert main(["compare", str(js), str(_write(tmp_path / "m.json", runs))]) == 0


def test_naming_one_limit_keeps_the_other_defaults(sweep_files, tmp_path, capsys):
    """``--max-regression uncached=15%`` loosens uncached only: a 20-point drop of the summary
    hit ratio still fails, and the header prints every limit in force."""
    js, _ = sweep_files
    runs = json.loads(js.read_text())
    runs[1]["summary_hit_ratio"] = [h - 0.2 for h in runs[1]["summary_hit_ratio"]]
    new = _write(tmp_path / "n.json", runs)
    capsys.readouterr()
    assert main(["compare", str(js), str(new), "--max-regression", "uncached=15%"]) == 1
    assert "thresholds uncached=15%,hit=0.5pt,usd=5%,rejected=0)" in capsys.readouterr().out
    # NAME=off turns that one limit off, and only it
    assert main(["compare", str(js), str(new), "--max-regression", "hit=off"]) == 0
    assert "thresholds uncached=2%,usd=5%,rejected=0)" in capsys.readouterr().out
    assert main(["compare", str(js), str(new), "--max-regression", "none"]) == 0


def test_thresholds_over_the_defaults():
    t = Thresholds.parse("written=1%,usd=off", over=DEFAULT_THRESHOLDS)
    assert t.text() == "uncached=2%,hit=0.5pt,rejected=0,written=1%"
    assert Thresholds.parse("uncached=off,hit=off,usd=off,rejected=off", over=DEFAULT_THRESHOLDS).text() == "none"
    with pytest.raises(UserError, match="NAME=off"):
        Thresholds.parse("hit=of", over=DEFAULT_THRESHOLDS)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="uncachedhitusdrejectwrof=%pt0123456789.,none ", max_size=40))
def test_fuzz_thresholds_parse_or_user_error(text):
    """Any --max-regression text either parses (and prints back to the same limits) or is a
    one-line UserError naming the option."""
    try:
        t = Thresholds.parse(text, over=DEFAULT_THRESHOLDS)
    except UserError as exc:
        assert str(exc).startswith("--max-regression: ") and "\n" not in str(exc)
        return
    assert Thresholds.parse(t.text()).limits == t.limits


def test_runs_made_with_other_workload_parameters_do_not_pair(sweep_files, tmp_path, capsys):
    """A --steps 40 run is not the same unit as a --steps 60 run: nothing comparable left is bad
    input (exit 2, one line naming the parameter); one such run among others fails the gate."""
    js, csv = sweep_files
    runs = json.loads(js.read_text())
    other = _write(tmp_path / "steps60.json", [{**r, "steps": 60} for r in runs])
    capsys.readouterr()
    assert main(["compare", str(js), str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert "different workload parameters (steps 40 in BASE, 60 in NEW)" in err and "\n" not in err
    assert main(["compare", str(csv), str(other)]) == 2  # runs.csv keeps them in its params column
    mixed = _write(tmp_path / "mixed.json", [runs[0], {**runs[1], "steps": 60}])
    capsys.readouterr()
    assert main(["compare", str(js), str(mixed)]) == 1
    out = capsys.readouterr().out
    assert "1 run made with other workload parameters" in out
    assert f"preset={runs[1]['preset']}" in out and "steps 40 in BASE, 60 in NEW" in out
    # a saved baseline keeps the parameters
    save_baseline(read_result(js), "b", tmp_path)
    with pytest.raises(UserError, match="steps 40 in BASE, 60 in NEW"):
        compare(load_baseline("b", tmp_path), read_result(other), Thresholds.parse(DEFAULT_THRESHOLDS))


def test_a_run_missing_from_new_fails(sweep_files, tmp_path, capsys):
    js, _ = sweep_files
    runs = json.loads(js.read_text())
    assert main(["compare", str(js), str(_write(tmp_path / "n.json", runs[:1]))]) == 1
    assert "missing from NEW" in capsys.readouterr().out


def test_sweep_against_audit_is_exit_2_with_one_line(sweep_files, tmp_path, capsys):
    js, _ = sweep_files
    audit = _write(tmp_path / "audit.json", AUDIT)
    assert main(["compare", str(js), str(audit)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "a sweep result" in err and "an audit result" in err


def test_audit_lanes_totals_and_causes(tmp_path, capsys):
    base = _write(tmp_path / "base.json", AUDIT)
    assert main(["compare", str(base), str(base)]) == 0
    capsys.readouterr()
    worse = json.loads(json.dumps(AUDIT))
    worse["lanes"][1]["reported_uncached"] = 230  # +15% on one subagent lane
    worse["causes"][0]["lost_usd"] = 0.5  # causes are shown, not gated
    assert main(["compare", str(base), str(_write(tmp_path / "w.json", worse)), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    regressed = [c for c in report["changes"] if c["regressed"]]
    assert [(c["group"], c["unit"], c["figure"]) for c in regressed] == [("lane", "s.jsonl agent-1", "reported_uncached")]
    assert any(c["group"] == "cause" and c["figure"] == "lost_usd" and not c["regressed"] for c in report["changes"])
    cost = json.loads(json.dumps(AUDIT))
    cost["totals"]["cost_usd"] = 0.64  # +6.7% dollars
    assert main(["compare", str(base), str(_write(tmp_path / "c.json", cost))]) == 1


def test_named_baselines(sweep_files, tmp_path, monkeypatch, capsys):
    js, csv = sweep_files
    monkeypatch.chdir(tmp_path)
    assert main(["compare", str(csv), "--save", "main"]) == 0
    assert (tmp_path / ".prefixbench" / "main.json").is_file()
    assert main(["compare", str(js), "--compare", "main"]) == 0
    runs = json.loads(js.read_text())
    runs[0]["session_uncached_tokens"] *= 2
    assert main(["compare", str(_write(tmp_path / "n.json", runs)), "--compare", "main", "--markdown", "pr.md"]) == 1
    assert "FAIL" in (tmp_path / "pr.md").read_text()
    assert main(["compare", str(js), "--compare", "nope"]) == 2
    assert "saved: main" in capsys.readouterr().err
    assert main(["compare", str(js), "--save", "../escape"]) == 2


def test_baseline_round_trip_keeps_every_figure(tmp_path):
    result = result_from_json(AUDIT, "a.json")
    save_baseline(result, "x", tmp_path)
    again = load_baseline("x", tmp_path)
    assert again.kind == "audit" and again.units == result.units


@pytest.mark.parametrize(
    "text",
    ["uncached", "uncached=2", "hit=2%", "usd=1pt", "speed=2%", "uncached=-1%", "uncached=2%,,hit=1pt"],
)
def test_bad_thresholds_are_user_errors(text):
    if text == "uncached=2":  # an absolute token limit is allowed
        assert Thresholds.parse(text).limits["uncached"].unit == ""
        return
    with pytest.raises(UserError, match="--max-regression"):
        Thresholds.parse(text)


def test_default_thresholds_parse():
    t = Thresholds.parse(DEFAULT_THRESHOLDS)
    assert set(t.limits) == {"uncached", "hit", "usd", "rejected"}
    assert t.limits["uncached"].crossed(100, 103) and not t.limits["uncached"].crossed(100, 102)
    assert t.limits["hit"].crossed(0.99, 0.984, "drop") and not t.limits["hit"].crossed(0.99, 0.986, "drop")


@pytest.mark.parametrize(
    "content, where",
    [
        ("", "empty file"),
        ("[1, 2]", r"run \[0\]"),
        ('{"schema": 7, "lanes": []}', "schema"),
        ('{"schema": 1, "lanes": {}, "causes": [], "totals": {}}', "'lanes'"),
        ("[{\"workload\": \"x\"", ":1: not valid JSON"),
        ("a,b\n1,2\n", ":1: not runs.csv"),
        # newuser4: a bench's CSV was "missing column(s) engine, preset, ...", as if it were a damaged runs.csv
        ("workload,window,cache,strategy,seed,cost_usd\nseed-coding,32000,openai,checkpoint,0,1.0\n", ":1: a bench result"),
        # an audit's --out folder holds audit.csv beside audit.json: the CSV read as a damaged runs.csv
        ("file,lane,lane_kind,index,line,timestamp,provider,model\na.jsonl,main,main,0,1,,anthropic,m\n",
         ":1: an audit's per-request CSV .*audit.json"),
        # trial54: check --out's check.json was "neither an audit result (no 'schema' key) nor a baseline"
        ('{"preset": "patched", "results": [{"spec": "no-silent-rewrite", "verdict": "pass"}]}',
         ": a check result .*check's exit status is its gate"),
        # fuzz59: a field over the csv module's 128 KiB limit was a traceback (_csv.Error)
        ('"' + "x" * 131_073, r":1: not runs.csv nor JSON \(field larger than field limit"),
        ("workload,window\n32k,1\n" + "x" * 131_073, r":3: not runs.csv nor JSON \(field larger than field limit"),
    ],
)
def test_bad_files_name_file_and_place(tmp_path, content, where):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(UserError, match=where) as info:
        read_result(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_figures_too_large_for_a_float_are_one_user_error_or_read(sweep_files, tmp_path, capsys):
    # Found by fuzzing: an integer too large for a float (10**400, valid JSON) raised OverflowError
    # in float() / math.isfinite() (a traceback), and a dollar figure of 1e308 raised
    # decimal.InvalidOperation where the markdown table formats it.
    import copy

    audit = copy.deepcopy(AUDIT)
    audit["totals"]["cost_usd"] = 10**400
    with pytest.raises(UserError, match=r"totals: key 'cost_usd' is 1000.*, not a finite number"):
        result_from_json(audit, "a.json")
    runs = json.loads(sweep_files[0].read_text())
    counted = copy.deepcopy(runs)
    counted[0]["num_folds"] = 10**400
    with pytest.raises(UserError, match=r"run \[0\]: 'num_folds' is 1000.*, expected a finite number"):
        result_from_json(counted, "s.json")
    keyed = copy.deepcopy(runs)
    keyed[0]["seed"], keyed[0]["window"] = 10**400, 10**400  # a key of its own digits: no run to pair
    assert len(result_from_json(keyed, "s.json").units) == len(runs)
    with pytest.raises(UserError, match=r"units\[0\] is malformed"):
        (tmp_path / "b").mkdir()
        (tmp_path / "b" / "x.json").write_text(json.dumps({"prefixbench_baseline": 1, "kind": "audit", "units": [
            {"group": "lane", "key": "k", "figures": {"cost_usd": 10**400}}]}))
        load_baseline("x", tmp_path / "b")
    huge = copy.deepcopy(AUDIT)
    huge["totals"]["cost_usd"] = 1e308
    base, new = _write(tmp_path / "base.json", AUDIT), _write(tmp_path / "new.json", huge)
    assert main(["compare", str(base), str(new), "--format", "md"]) == 1
    assert "$100,000,000,000,000," in capsys.readouterr().out


@pytest.mark.parametrize(("edit", "said"), [
    ({"figures": "NaN"}, "units[0]: figure 'cost_usd' is nan, expected a finite number"),
    ({"figures": "1e999"}, "units[0]: figure 'cost_usd' is inf, expected a finite number"),
    ({"figures": "-Infinity"}, "units[0]: figure 'cost_usd' is -inf, expected a finite number"),
    ({"units": "7"}, "'units' is a JSON int, expected a list of units"),
    ({"units": "0.5"}, "'units' is a JSON float, expected a list of units"),
])
def test_a_saved_baseline_with_a_figure_not_finite_or_units_not_a_list_is_one_line(tmp_path, monkeypatch, capsys, edit, said):
    # fuzz60: a figure NaN or infinite (1e999 is infinity to json.loads) reached the table's
    # formatting (int(nan): ValueError; int(inf): OverflowError; a dollar figure: decimal.InvalidOperation),
    # and 'units' a number was a TypeError: tracebacks, exit 1.
    monkeypatch.chdir(tmp_path)
    new = _write(tmp_path / "new.json", AUDIT)
    assert main(["compare", str(new), "--save", "b"]) == 0
    saved = (tmp_path / ".prefixbench" / "b.json").read_text()
    if "figures" in edit:
        saved = saved.replace('"cost_usd": ' + json.dumps(json.loads(saved)["units"][0]["figures"]["cost_usd"]), '"cost_usd": ' + edit["figures"], 1)
    else:
        saved = json.dumps({**json.loads(saved), "units": json.loads(edit["units"])})
    (tmp_path / ".prefixbench" / "b.json").write_text(saved)
    capsys.readouterr()
    assert main(["compare", str(new), "--compare", "b", "--format", "md"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"prefixbench: error: .prefixbench/b.json: {said}"]


_FIGURES = st.sampled_from([0, -1, 1.5, 10**400, "3", "x", "NaN", "1e999", None, True, [], {}]) | st.floats()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_saved_baseline_with_any_value_swapped_is_read_or_one_user_error(tmp_path, data):
    """A saved baseline with a figure, a unit or its units list set to any JSON value (NaN and
    infinity too, which json.loads reads): a result, or one line naming the file."""
    from prefixbench.workloads.runs.compare import baseline_path

    folder = tmp_path / data.draw(st.uuids()).hex
    save_baseline(result_from_json(AUDIT, "a.json"), "b", folder)
    doc = json.loads(baseline_path("b", folder).read_text())
    unit = doc["units"][data.draw(st.integers(0, len(doc["units"]) - 1))]
    place = data.draw(st.sampled_from(("figure", "unit", "units", "group")))
    if place == "figure":
        unit["figures"][data.draw(st.sampled_from(sorted(unit["figures"])))] = data.draw(_FIGURES)
    elif place == "units":
        doc["units"] = data.draw(_FIGURES)
    else:
        unit["figures" if place == "unit" else "group"] = data.draw(_FIGURES)
    baseline_path("b", folder).write_text(json.dumps(doc, allow_nan=True).replace('"NaN"', "NaN").replace('"1e999"', "1e999"))
    try:
        base = load_baseline("b", folder)
    except UserError as exc:
        assert "\n" not in str(exc) and "b.json" in str(exc), str(exc)
        return
    from prefixbench.reports.compare import compare_json, compare_markdown, compare_text

    try:
        comparison = compare(base, result_from_json(AUDIT, "a.json"), Thresholds.parse("", over=DEFAULT_THRESHOLDS))
    except UserError as exc:  # no lane shared, another kind...
        assert "\n" not in str(exc), str(exc)
        return
    compare_text(comparison), compare_markdown(comparison), compare_json(comparison)  # as the command prints it


#: Bytes, or bytes around a run longer than the csv module takes in one field (128 KiB: fuzz59).
_BLOBS = st.binary(max_size=200) | st.tuples(st.binary(max_size=40), st.sampled_from((b"x", b'"', b"a,")), st.binary(max_size=40)).map(
    lambda parts: parts[0] + parts[1] * 131_073 + parts[2])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_BLOBS)
def test_any_bytes_are_a_result_or_one_user_error(tmp_path, blob):
    path = tmp_path / "fuzz"
    path.write_bytes(blob)
    try:
        read_result(path)
    except UserError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=30, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.sampled_from([10**400, -(10**400), 1e308]) | st.floats() | st.text(max_size=5),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(["schema", "lanes", "causes", "totals", "lane", "cause", "workload"]), c, max_size=4),
                    max_leaves=10))
def test_any_json_is_a_result_or_one_user_error(data):
    try:
        result_from_json(data, "x.json")
    except UserError:
        pass


def _audit_json(folder, pause_minutes, capsys):
    from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

    t = Transcript("s1")
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 20_000, 0, 40)])
    t.user("more", "2025-09-03T00:00:10.000Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:12.000Z", [cc_usage(3, 500, 20_000, 40)])
    later = f"2025-09-03T00:{pause_minutes:02d}:12.000Z"
    t.user("after a pause", later)
    expired = pause_minutes > 5
    t.assistant("r3", later.replace(":12.000Z", ":14.000Z"), [cc_usage(3, 20_600 if expired else 100, 0 if expired else 20_500, 40)])
    folder.mkdir(parents=True, exist_ok=True)
    log = write_jsonl(folder / "s1.jsonl", t.lines)
    capsys.readouterr()
    assert main(["audit", str(log), "--format", "json", "--quiet"]) == 0
    path = folder / "audit.json"
    path.write_text(capsys.readouterr().out)
    return path


def test_real_audit_results_compare_across_checkouts(tmp_path, capsys):
    base = _audit_json(tmp_path / "ci" / "run1", 2, capsys)
    same = _audit_json(tmp_path / "laptop", 2, capsys)  # same log under another path
    assert main(["compare", str(base), str(same)]) == 0
    worse = _audit_json(tmp_path / "ci" / "run2", 20, capsys)  # the cache expired in the pause
    capsys.readouterr()
    assert main(["compare", str(base), str(worse), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    regressed = {(c["group"], c["figure"]) for c in report["changes"] if c["regressed"]}
    assert ("lane", "cost_usd") in regressed and ("totals", "hit_ratio") in regressed


def test_log_strings_in_lane_keys_are_escaped_in_text_and_markdown(tmp_path, capsys):
    # A lane named from a log (a model or file name) with an escape sequence, a newline, a
    # heading and backticks: compare's text and Markdown show it escaped and fenced.
    hostile = "agent\x1b]0;pwned\x07\x1b[2J\n# owned `x`"
    base = json.loads(json.dumps(AUDIT))
    base["lanes"][1]["lane"] = hostile
    new = json.loads(json.dumps(base))
    del new["lanes"][1]
    base_path, new_path = _write(tmp_path / "b.json", base), _write(tmp_path / "n.json", new)
    capsys.readouterr()
    assert main(["compare", str(base_path), str(new_path)]) == 1
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text and "\\x1b]0;pwned" in text
    assert main(["compare", str(base_path), str(new_path), "--format", "md"]) == 1
    md = capsys.readouterr().out
    assert "\x1b" not in md and "\n# owned" not in md and "`` " in md


@pytest.mark.parametrize("name", ["ünï", "x" * 101, ".hidden"])
def test_a_refused_baseline_name_says_the_rule_it_broke(name):
    # Before: "use letters, digits, '.', '_' and '-'" for a name of letters (ü), for one of 101
    # of them and for one starting with '.', as if the name held a character it did not.
    from prefixbench.workloads.runs.compare import baseline_path

    with pytest.raises(UserError, match=r"start with an ASCII letter or digit, then ASCII letters, digits, '\.', '_' or '-', at most 100"):
        baseline_path(name)


def test_a_named_baseline_is_named_as_the_base(sweep_files, tmp_path, monkeypatch, capsys):
    # `compare new/runs.csv --compare main` printed "base base/runs.csv": the file main's job saved
    # the baseline from, which a pull request's job has never seen (the recipe in
    # docs/recipes.md). The base now names the baseline, where it is, and what it was saved from.
    js, csv = sweep_files
    monkeypatch.chdir(tmp_path)
    assert main(["compare", str(csv), "--save", "main"]) == 0
    capsys.readouterr()
    assert main(["compare", str(js), "--compare", "main"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == f"base baseline main ({Path('.prefixbench') / 'main.json'}, saved from {csv})"
    assert out[2] == f"new  {js}"


def test_an_audit_of_an_older_release_lists_no_count_it_did_not_have_where_the_new_one_is_0(tmp_path, capsys):
    # An audit.json written before its lanes, causes and totals counted the requests no dollar
    # figure holds (unpriced_requests, unpriced_no_usage): each count a row "only in NEW" at 0,
    # a table of them where nothing changed; a count above 0 is still shown.
    new = _audit_json(tmp_path / "new", 2, capsys)
    record = json.loads(new.read_text())
    def older(value):
        if isinstance(value, dict):
            return {k: older(v) for k, v in value.items() if k not in ("unpriced_requests", "unpriced_no_usage")}
        return [older(v) for v in value] if isinstance(value, list) else value
    base = _write(tmp_path / "old.json", older(record))
    for form in ([], ["--format", "md"]):
        capsys.readouterr()
        assert main(["compare", str(base), str(new), *form]) == 0
        out = capsys.readouterr().out
        assert "unpriced" not in out and ("every shared figure is identical" in out or "Every shared figure is identical" in out)
    record["totals"]["unpriced_requests"] = 2
    capsys.readouterr()
    assert main(["compare", str(base), str(_write(tmp_path / "new2.json", record))]) == 0
    assert "unpriced_requests" in capsys.readouterr().out


def test_with_both_files_wrong_the_line_names_base_first(tmp_path, monkeypatch, capsys):
    # newuser4: NEW was read first, so `compare missing-base missing-new` named the second file.
    monkeypatch.chdir(tmp_path)  # (--save checks .prefixbench/ in the working directory)
    assert main(["compare", str(tmp_path / "base.json"), str(tmp_path / "new.json")]) == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: {tmp_path / 'base.json'}: no such file"
    assert main(["compare", str(tmp_path / "base.json"), str(tmp_path / "new.json"), "--save", "x"]) == 2
    assert f"{tmp_path / 'base.json'}: no such file" in capsys.readouterr().err


@pytest.mark.parametrize("unknown", [0.0, None], ids=["saved-before-null", "null"])
def test_dollars_of_no_priced_request_are_not_a_change_from_0(tmp_path, capsys, unknown):
    # An audit of a block-hash trace: none of its requests priced. Its totals' cost_usd was 0.0
    # (an audit.json saved then, still read), now null: either way unknown, so a NEW with dollars
    # is "not comparable", never "+$0.6 (from 0)" gated as a regression.
    old = json.loads(json.dumps(AUDIT))
    for group in (*old["lanes"], old["totals"]):
        group.update(cost_usd=unknown, lost_usd=None, unpriced_requests=group["requests"])
    base = _write(tmp_path / "base.json", old)
    assert main(["compare", str(base), str(_write(tmp_path / "new.json", AUDIT))]) == 0
    out = capsys.readouterr().out
    assert "(from 0)" not in out
    rows = [line.split() for line in out.splitlines() if "cost_usd" in line]
    assert rows and all(row[-3:-1] == ["not", "comparable"] for row in rows), out
    assert main(["compare", str(base), str(base)]) == 0
    assert "every shared figure is identical" in capsys.readouterr().out


def test_a_schema_4_audit_beside_a_schema_5_one_says_shared_misses_count_otherwise(tmp_path, capsys):
    # Base: nothing said that schema 5 splits a shared miss's loss between its causes, so a cause's
    # figures could move between the two with no change in the log.
    new = _audit_json(tmp_path / "new", 20, capsys)
    data = json.loads(new.read_text())
    assert data["schema"] >= 5
    old = tmp_path / "old.json"
    old.write_text(json.dumps(dict(data, schema=4)))
    said = f"audit schema 4 (BASE) and {data['schema']} (NEW) count shared misses otherwise"
    for fmt in ("table", "md", "json"):
        capsys.readouterr()
        main(["compare", str(old), str(new), "--format", fmt])
        out = capsys.readouterr().out
        assert out.count(said) == 1, (fmt, out)
    capsys.readouterr()
    main(["compare", str(new), str(new)])
    assert "count shared misses otherwise" not in capsys.readouterr().out
