"""The warnings an engine logs over a run reach the user: counted in the run record
(``engine_warnings``) and as one note per engine and kind under sweep's and bench's output, above
check's tally, and in report.md, never one line per warning; runs without warnings print no note."""

from __future__ import annotations

import csv
import json

from prefixbench.reports.entry import main
from prefixbench.reports.warning_notes import warning_notes
from prefixbench.workloads.runs.schema import parse_engine_warnings, warning_kind

#: Claude Code's thrash stop fires 34 times on thinking-tools at 24k: its threshold (2,808 tokens)
#: is above the ~710 tokens a compaction restarts with, and the context refills past it within 3
#: requests (large tool results), a real refill. At 16k and 20k the threshold is 0 (degenerate).
THRASHING = ["--workload", "thinking-tools", "--windows", "24k", "--engines", "claude-code-autocompact", "--quiet"]
THRASH_NOTE = ("claude-code-autocompact stopped auto-compacting 34 times (Claude Code's thrash stop: the context refilled "
               "to the threshold, 2,808 tokens, within 3 requests of the previous compaction, 3 times in a row)")
THRASH_KIND = "autocompact is thrashing [threshold 2,808 tokens, within 3 requests, 3 in a row]"


def _notes(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lower().startswith("note:")]


def test_a_sweep_that_thrashes_says_so_once_with_the_count(tmp_path, capsys):
    assert main(["sweep", *THRASHING, "--out", str(tmp_path)]) == 0
    printed = _notes(capsys.readouterr().out)
    assert len(printed) == 1 and printed[0].startswith(f"note: {THRASH_NOTE}")
    assert "in thinking-tools 24k patched cache byte-exact; the engine compacted anyway" in printed[0]
    report = _notes((tmp_path / "report.md").read_text())
    assert report == [f"Note: {printed[0].removeprefix('note: ')}."]
    rows = list(csv.DictReader((tmp_path / "runs.csv").open()))
    assert [r["engine_warnings"] for r in rows] == [f"34 {THRASH_KIND}"]
    assert THRASH_NOTE.replace("'", "&#x27;") in (tmp_path / "report.html").read_text()


def test_the_json_output_counts_the_warnings(tmp_path, capsys):
    assert main(["sweep", *THRASHING, "--format", "json", "--out", str(tmp_path)]) == 0
    [run] = json.loads(capsys.readouterr().out)
    assert run["engine_warnings"] == f"34 {THRASH_KIND}"


def test_a_threshold_under_the_restarted_context_is_said_once_a_run(tmp_path, capsys):
    # seed-coding at 16k: the threshold (2,000 tokens) is under the summary and the re-read files
    # a compaction restarts with, so nearly every request compacts (58 in 61): degenerate, said.
    argv = ["sweep", "--workload", "seed-coding", "--windows", "16k", "--engines", "claude-code-autocompact", "--quiet",
            "--out", str(tmp_path)]
    assert main(argv) == 0
    low, thrash = _notes(capsys.readouterr().out)
    assert low == ("note: claude-code-autocompact had its threshold (2,000 tokens) at or below the context a compaction "
                   "restarts with (the summary, the kept rounds and the re-read files) in seed-coding 16k patched cache byte-exact; the "
                   "request after such a compaction compacts again: the window is too small for Claude Code's threshold "
                   "and re-read budgets, and its compactions and thrash stops there say little about the workload")
    assert "stopped auto-compacting 19 times (Claude Code's thrash stop: the context refilled to the threshold, 2,000 tokens," in thrash
    [row] = csv.DictReader((tmp_path / "runs.csv").open())
    assert row["engine_warnings"] == ("1 the threshold is below the restarted context [threshold 2,000 tokens]; "
                                      "19 autocompact is thrashing [threshold 2,000 tokens, within 3 requests, 3 in a row]")


def test_the_thrash_note_says_the_configured_counts(tmp_path, capsys):
    config = tmp_path / "cc.toml"
    config.write_text("[claude-code-autocompact]\nthrash_turns = 4\nthrash_refills = 2\n")
    assert main(["sweep", *THRASHING, "--engine-config", str(config), "--out", str(tmp_path)]) == 0
    [note] = _notes(capsys.readouterr().out)
    assert "within 4 requests of the previous compaction, 2 times in a row)" in note


def test_a_sweep_without_warnings_prints_no_note(tmp_path, capsys):
    argv = ["sweep", "--workload", "seed-coding", "--windows", "32k", "--engines", "checkpoint", "--presets", "patched",
            "--steps", "24", "--quiet", "--out", str(tmp_path)]
    assert main(argv) == 0
    assert _notes(capsys.readouterr().out) == []
    assert _notes((tmp_path / "report.md").read_text()) == []
    assert [r["engine_warnings"] for r in csv.DictReader((tmp_path / "runs.csv").open())] == [""]


def test_bench_notes_the_warnings_of_its_runs(tmp_path, capsys):
    argv = ["bench", "--workloads", "thinking-tools", "--strategies", "claude-code-autocompact,checkpoint", "--caches", "anthropic-5m",
            "--windows", "24k", "--seeds", "0", "--quiet", "--jobs", "1", "--out", str(tmp_path)]
    assert main(argv) == 0
    printed = _notes(capsys.readouterr().out)
    # Bench's runs (cache anthropic-5m) stop 37 times.
    assert len(printed) == 1 and printed[0].startswith(f"note: {THRASH_NOTE.replace('34 times', '37 times')}")
    assert _notes((tmp_path / "report.md").read_text()) == [f"Note: {printed[0].removeprefix('note: ')}."]


def test_the_notes_name_the_cache_model_their_counts_were_made_under(tmp_path, capsys):
    """Review of issue 19: bench's note said 37 stops, sweep's 34, each "in thinking-tools 24k
    patched", as if the same run. Claude Code reads its context's size from the provider's usage,
    so under Anthropic's cache model, which counts more tokens than chars/4 (sweep's default,
    byte-exact), it compacts at other requests (121 summary calls, not 111) and stops 37 times:
    both counts are right, and each note names the cache model (bench by its label) it ran under.
    A bench of several runs counts every run (each seed, each cache model), and says over how many."""
    assert main(["sweep", *THRASHING, "--out", str(tmp_path / "sweep")]) == 0
    [swept] = _notes(capsys.readouterr().out)
    assert swept.endswith(" in thinking-tools 24k patched cache byte-exact; the engine compacted anyway, as the user's next turn would")
    assert main(["sweep", *THRASHING, "--cache", "anthropic", "--out", str(tmp_path / "anthropic")]) == 0
    [anthropic] = _notes(capsys.readouterr().out)
    assert "37 times" in anthropic and " in thinking-tools 24k patched cache anthropic; " in anthropic
    argv = ["bench", "--workloads", "thinking-tools", "--strategies", "claude-code-autocompact", "--windows", "24k", "--quiet",
            "--jobs", "1"]
    assert main([*argv, "--caches", "anthropic-5m", "--seeds", "0", "--out", str(tmp_path / "bench")]) == 0
    [benched] = _notes(capsys.readouterr().out)
    assert "37 times" in benched and " in thinking-tools 24k patched cache anthropic-5m; " in benched
    assert main([*argv, "--caches", "anthropic-1h,openai", "--seeds", "0,1", "--out", str(tmp_path / "bench2")]) == 0
    [several] = _notes(capsys.readouterr().out)
    assert "stopped auto-compacting 140 times" in several  # 37 + 38 (anthropic-1h) + 34 + 31 (openai)
    assert (" in 4 runs: thinking-tools 24k patched cache anthropic-1h (37), thinking-tools 24k patched seed 1 cache "
            "anthropic-1h (38), thinking-tools 24k patched cache openai (34), thinking-tools 24k patched seed 1 cache openai (31);") in several


def test_check_notes_each_run_once_before_the_tally(tmp_path, capsys):
    # The deterministic spec runs a case twice: the note counts that run once. At 24k only
    # thinking-tools thrashes; its threshold is above the restarted context (no other note).
    # The tally stays the last line on stdout, which scripts read with `tail -n 1`.
    main(["check", "--engine", "claude-code-autocompact", "--windows", "24k", "--quiet", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("preset patched: "), out.splitlines()[-1]
    printed = _notes(out)
    assert printed == [f"note: {THRASH_NOTE} in thinking-tools 24k patched cache byte-exact; the engine compacted anyway, as the user's next turn would"]
    assert json.loads((tmp_path / "check.json").read_text())["notes"] == [printed[0].removeprefix("note: ")]


def test_a_warning_kind_drops_the_engine_name_the_details_and_the_numbers():
    assert warning_kind("claude-code-autocompact: autocompact is thrashing: the context (1,234 tokens) ...") == "autocompact is thrashing"
    assert warning_kind("codex-compact: the remote compaction failed: HTTP 500") == "the remote compaction failed"
    assert warning_kind("roo-condense: still over the window after 3 retries") == "still over the window after N retries"
    assert warning_kind("compaction failed: boom") == "compaction failed"
    assert warning_kind("x: a kind [threshold 2,000 tokens] of 3: 4") == "a kind [threshold 2,000 tokens] of N"
    assert parse_engine_warnings("19 autocompact is thrashing; 2 compaction failed") == [
        ("autocompact is thrashing", 19), ("compaction failed", 2)]
    assert parse_engine_warnings(float("nan")) == [] and parse_engine_warnings("") == []


def test_other_warnings_get_a_generic_note_naming_every_run_up_to_four():
    records = [{"workload": "seed-coding", "window": w, "engine": "roo-condense", "preset": "patched", "seed": 0,
                "engine_warnings": "2 too few messages since the last condense"} for w in (8000, 16000, 32000, 64000, 128000)]
    [note] = warning_notes(records)
    assert note == ("roo-condense warned 'too few messages since the last condense' 10 times in 5 runs: "
                    "seed-coding 8k patched (2), seed-coding 16k patched (2), seed-coding 32k patched (2), "
                    "seed-coding 64k patched (2) and 1 more; a warning does not stop a run, the engine went on")
    assert warning_notes([{**records[0], "engine_warnings": ""}]) == []


IDLE_128K = ["sweep", "--workload", "idle-gaps", "--gap-s", "3600", "--windows", "128k", "--engines", "claude-code-idle-compact",
             "--quiet"]


def test_idle_compaction_that_cannot_fire_at_the_window_is_said(tmp_path, capsys):
    # Base: idle_min_tokens (200,000) over the 128k window, nothing said; the run is auto-compact's.
    assert main([*IDLE_128K, "--out", str(tmp_path)]) == 0
    assert _notes(capsys.readouterr().out) == [
        "note: claude-code-idle-compact could not idle-compact (idle_min_tokens 200,000 at or over the run's window) in "
        "idle-gaps 128k patched cache byte-exact; it ran as claude-code-autocompact would, so its figures say nothing of "
        "idle compaction"]
    [row] = csv.DictReader((tmp_path / "runs.csv").open())
    assert row["engine_warnings"] == "1 idle compaction cannot fire [idle_min_tokens 200,000 at or over the run's window]"
    # The default gaps (about 5 minutes) are idle gaps too: the settings still block it there.
    assert main([*IDLE_128K[:3], *IDLE_128K[5:], "--out", str(tmp_path / "default")]) == 0
    [note] = _notes(capsys.readouterr().out)
    assert note.startswith("note: claude-code-idle-compact could not idle-compact (idle_min_tokens 200,000")


def test_an_engine_ttl_other_than_the_run_caches_is_said(tmp_path, capsys):
    # Base: under --cache anthropic (5 min for the kernel's requests) the engine idle-compacted as
    # if on the 1 h cache, its cache_ttl_s, and nothing said so.
    config = tmp_path / "engines.toml"
    config.write_text("[claude-code-idle-compact]\nidle_min_tokens = 16000\n")
    assert main([*IDLE_128K, "--cache", "anthropic", "--engine-config", str(config), "--out", str(tmp_path / "a")]) == 0
    assert _notes(capsys.readouterr().out) == [
        "note: claude-code-idle-compact idle-compacts and clears old tool results by its cache_ttl_s (3,600 s), not by the "
        "run's cache: --cache anthropic gives its requests 300 s; set cache_ttl_s = 300, or run a cache of 3,600 s"]
    # The 1 h cache matches: no note; nor does a cache whose entries never expire (byte-exact).
    for cache in ("anthropic:auto_when_unmarked=1h", "byte-exact"):
        assert main([*IDLE_128K, "--cache", cache, "--engine-config", str(config), "--out", str(tmp_path / "b")]) == 0
        assert _notes(capsys.readouterr().out) == []


def test_idle_compaction_on_another_ttl_setting_is_said():
    from prefixbench.kernel.strategies.claude_code import ttl_note

    assert ttl_note("claude-code-idle-compact", {"cache_ttl_s": "300"}, 3_600_000, "anthropic-1h") == (
        "claude-code-idle-compact idle-compacts and clears old tool results by its cache_ttl_s (300 s), not by the run's "
        "cache: --cache anthropic-1h gives its requests 3,600 s; set cache_ttl_s = 3600, or run a cache of 300 s")
    assert ttl_note("claude-code-autocompact", {"idle_compact": "true"}, 300_000, "anthropic").startswith(
        "claude-code-autocompact idle-compacts and clears old tool results by its cache_ttl_s (3,600 s)")
    # The clearing of old tool results goes by cache_ttl_s too, idle compaction on or not (base: no
    # note for claude-code-autocompact); with the clearing off too, nothing goes by the setting.
    assert ttl_note("claude-code-autocompact", {}, 300_000, "anthropic") == (
        "claude-code-autocompact clears old tool results by its cache_ttl_s (3,600 s), not by the run's cache: "
        "--cache anthropic gives its requests 300 s; set cache_ttl_s = 300, or run a cache of 3,600 s")
    assert ttl_note("claude-code-autocompact", {"microcompact": "false"}, 300_000, "anthropic") is None
    assert ttl_note("claude-code-idle-compact", {"microcompact": "false"}, 300_000, "anthropic").startswith(
        "claude-code-idle-compact idle-compacts by its cache_ttl_s (3,600 s)")
    assert ttl_note("claude-code-idle-compact", {}, None, "byte-exact") is None
    assert ttl_note("sliding-window", {}, 300_000, "anthropic") is None


def test_a_sweep_says_which_path_codex_compacts_auto_took(tmp_path, capsys):
    # Under --cache openai the thinking-tools route is still DeepSeek's: auto compacts locally.
    argv = ["sweep", "--workload", "thinking-tools", "--windows", "24k", "--engines", "codex-compact", "--cache", "openai",
            "--quiet", "--out", str(tmp_path)]
    assert main(argv) == 0
    assert _notes(capsys.readouterr().out) == [
        "note: codex-compact took the local path (mode=auto, routed provider deepseek) in thinking-tools 24k patched cache "
        "openai; auto compacts remotely only where the run routes OpenAI's provider, whatever cache model prices it; "
        "set mode to choose"]
    [row] = csv.DictReader((tmp_path / "runs.csv").open())
    assert row["engine_warnings"] == "1 mode=auto chose its path [local, routed provider deepseek]"


def test_codex_compacts_path_is_noted_only_where_the_cache_suggests_another():
    # Base: every run noted its local path, though a mock/DeepSeek route on a non-OpenAI cache is
    # the path any user expects; only an OpenAI-priced run that compacted locally (or the reverse) is.
    local = "1 mode=auto chose its path [local, routed provider deepseek]"
    remote = "1 mode=auto chose its path [remote_v2, routed provider openai]"
    run = {"engine": "codex-compact", "workload": "thinking-tools", "window": 24_000, "preset": "patched"}
    for cache in ("byte-exact", "anthropic", "deepseek", "anthropic-5m"):
        assert warning_notes([{**run, "cache": cache, "engine_warnings": local}]) == []
    assert warning_notes([{**run, "cache": "openai", "engine_warnings": remote}]) == []
    [note] = warning_notes([{**run, "cache": "openai", "engine_warnings": local}], bench=True)
    assert note.startswith("codex-compact took the local path (mode=auto, routed provider deepseek) in thinking-tools "
                           "24k patched cache openai;")
    [note] = warning_notes([{**run, "cache": "deepseek", "engine_warnings": remote}])
    assert note.startswith("codex-compact took the remote_v2 path")


def test_a_sweep_on_the_default_cache_says_nothing_of_codex_compacts_path(tmp_path, capsys):
    argv = ["sweep", "--workload", "thinking-tools", "--windows", "24k", "--engines", "codex-compact",
            "--quiet", "--out", str(tmp_path)]
    assert main(argv) == 0
    assert _notes(capsys.readouterr().out) == []
    [row] = csv.DictReader((tmp_path / "runs.csv").open())
    assert row["engine_warnings"] == "1 mode=auto chose its path [local, routed provider deepseek]"  # still recorded


def test_no_ttl_note_where_idle_compaction_cannot_fire(tmp_path, capsys):
    # Base: both "could not idle-compact (idle_min_tokens ... window 128,000)" and the TTL advice.
    from prefixbench.kernel.strategies.claude_code import ttl_note

    # (Its clearing of old tool results still goes by cache_ttl_s: that note says so, and no word
    # of idle compaction.)
    assert ttl_note("claude-code-idle-compact", {}, 300_000, "anthropic", 128_000).startswith(
        "claude-code-idle-compact clears old tool results by its cache_ttl_s (3,600 s)")
    assert ttl_note("claude-code-idle-compact", {}, 300_000, "anthropic", 512_000).startswith(
        "claude-code-idle-compact idle-compacts and clears old tool results")
    assert main([*IDLE_128K, "--cache", "anthropic", "--out", str(tmp_path)]) == 0
    notes = _notes(capsys.readouterr().out)
    assert len(notes) == 2 and notes[0].startswith("note: claude-code-idle-compact could not idle-compact (idle_min_tokens")
    assert notes[1].startswith("note: claude-code-idle-compact clears old tool results by its cache_ttl_s (3,600 s)")


def test_bench_ttl_note_names_the_caches_without_advice():
    # Base: one note per cache, each advising "set cache_ttl_s = 300" and naming --cache.
    run = {"engine": "claude-code-idle-compact", "workload": "seed-coding", "window": 512_000, "preset": "patched",
           "engine_warnings": ""}
    records = [{**run, "cache": cache} for cache in ("anthropic-5m", "anthropic-1h", "openai", "deepseek")]
    records.append({**run, "window": 32_000, "cache": "kimi"})  # idle compaction cannot fire at 32k
    assert warning_notes(records, bench=True) == [
        "claude-code-idle-compact idle-compacts and clears old tool results by its cache_ttl_s (3,600 s), not by the "
        "run's cache: its runs of seed-coding on anthropic-5m and openai model idle compaction as on the 1 h cache "
        "(one --engine-config serves every cache of a bench)",
        # (idle compaction cannot fire at 32k, its clearing of old results still goes by the setting)
        "claude-code-idle-compact clears old tool results by its cache_ttl_s (3,600 s), not by the run's cache: its "
        "runs of seed-coding on kimi model the clearing of old tool results as on the 1 h cache (one --engine-config serves every "
        "cache of a bench)"]


def test_bench_ttl_note_only_for_runs_with_an_idle_gap_long_enough():
    # Base: the note for any run, though a run record did not say whether its workload had an
    # idle gap (seed-coding has none: the engine acted the same on any setting). Now each run
    # records its longest idle gap; one too short for the setting to matter gets no note.
    run = {"engine": "claude-code-idle-compact", "workload": "seed-coding", "window": 512_000, "preset": "patched",
           "engine_warnings": ""}
    caches = ("anthropic-5m", "anthropic-1h", "openai", "deepseek")
    assert warning_notes([{**run, "cache": cache, "longest_idle_ms": 0} for cache in caches], bench=True) == []
    # A gap of 5 minutes reaches the 5 minutes of anthropic-5m (the clearing differs there), not
    # openai's longer lifetime; an hour's reaches both.
    [note] = warning_notes([{**run, "cache": cache, "longest_idle_ms": 300_000} for cache in caches], bench=True)
    assert "its runs of seed-coding on anthropic-5m model idle compaction" in note
    [note] = warning_notes([{**run, "cache": cache, "longest_idle_ms": 3_600_000} for cache in caches], bench=True)
    assert "its runs of seed-coding on anthropic-5m and openai model idle compaction" in note


def test_bench_ttl_note_names_the_workloads_it_covers():
    # Base: one note "its runs on anthropic-5m ..." for a bench of idle-gaps and seed-coding,
    # though only idle-gaps has an idle gap long enough for the setting to matter.
    run = {"engine": "claude-code-idle-compact", "window": 512_000, "preset": "patched", "engine_warnings": ""}
    caches = ("anthropic-5m", "anthropic-1h", "openai")
    records = [{**run, "workload": "idle-gaps", "cache": cache, "longest_idle_ms": 300_000} for cache in caches]
    records += [{**run, "workload": "seed-coding", "cache": cache, "longest_idle_ms": 0} for cache in caches]
    [note] = warning_notes(records, bench=True)
    assert "its runs of idle-gaps on anthropic-5m model idle compaction" in note and "seed-coding" not in note
    records += [{**run, "workload": "long-idle", "cache": cache, "longest_idle_ms": 3_600_000} for cache in caches]
    [note] = warning_notes(records, bench=True)
    assert "its runs of idle-gaps on anthropic-5m and of long-idle on anthropic-5m and openai model idle compaction" in note


def test_a_sweep_records_each_runs_longest_idle_gap(tmp_path, capsys):
    # seed-coding's user never steps away: 0, and no TTL note under --cache anthropic (base: the
    # note, and no such column); idle-gaps with --gap-s 3600: its longest, 4,320,000 ms, and the note.
    argv = ["sweep", "--workload", "seed-coding", "--windows", "32k", "--engines", "claude-code-autocompact",
            "--cache", "anthropic", "--quiet", "--out", str(tmp_path / "a")]
    assert main(argv) == 0
    assert [note for note in _notes(capsys.readouterr().out) if "cache_ttl_s" in note] == []
    [row] = csv.DictReader((tmp_path / "a" / "runs.csv").open())
    assert row["longest_idle_ms"] == "0"
    assert main([*IDLE_128K, "--cache", "anthropic", "--out", str(tmp_path / "b")]) == 0
    assert any("clears old tool results by its cache_ttl_s" in note for note in _notes(capsys.readouterr().out))
    [row] = csv.DictReader((tmp_path / "b" / "runs.csv").open())
    assert row["longest_idle_ms"] == "4320000"  # (the gaps vary around --gap-s: 1.2 x 3,600 s the longest)


def test_a_workload_without_idle_gaps_gets_no_idle_compaction_warning(tmp_path, capsys):
    # Base: "could not idle-compact (idle_min_tokens 200,000 at or over the window 32,000)" on
    # seed-coding, which has no idle gap where the timer could fire on any settings.
    argv = ["sweep", "--workload", "seed-coding", "--windows", "32k", "--engines", "claude-code-idle-compact",
            "--quiet", "--out", str(tmp_path)]
    assert main(argv) == 0
    assert [note for note in _notes(capsys.readouterr().out) if "idle" in note] == []
    [row] = csv.DictReader((tmp_path / "runs.csv").open())
    assert "idle compaction cannot fire" not in row["engine_warnings"]


def test_idle_compaction_that_cannot_fire_is_one_note_an_engine(tmp_path, capsys):
    # Base: one note a window (the window's size was in the warning's kind).
    argv = ["sweep", "--workload", "idle-gaps", "--gap-s", "3600", "--windows", "64k,128k", "--engines",
            "claude-code-idle-compact", "--quiet", "--out", str(tmp_path)]
    assert main(argv) == 0
    assert _notes(capsys.readouterr().out) == [
        "note: claude-code-idle-compact could not idle-compact (idle_min_tokens 200,000 at or over the run's window) in "
        "2 runs: idle-gaps 64k patched cache byte-exact (1), idle-gaps 128k patched cache byte-exact (1); it ran as "
        "claude-code-autocompact would, so its figures say nothing of idle compaction"]


def test_openclaws_cache_ttl_pruning_on_another_ttl_is_said(tmp_path, capsys):
    # OpenClaw's cache-ttl pruning goes by its own ttl_s too (base: no note for any engine but
    # Claude Code's idle compaction); pruning off (its default), nothing goes by it.
    from prefixbench.kernel.strategies.openclaw import ttl_setting

    assert ttl_setting("openclaw-compaction", {}, 300_000) is None
    assert ttl_setting("openclaw-compaction", {"context_pruning": "cache-ttl"}, 300_000) is None  # its 300 s default
    config = tmp_path / "engines.toml"
    config.write_text('[openclaw-compaction]\ncontext_pruning = "cache-ttl"\nttl_s = 3600\n')
    argv = ["sweep", "--workload", "idle-gaps", "--windows", "128k", "--engines", "openclaw-compaction", "--cache", "anthropic",
            "--engine-config", str(config), "--quiet", "--out", str(tmp_path / "a")]
    assert main(argv) == 0
    assert _notes(capsys.readouterr().out) == [
        "note: openclaw-compaction prunes old tool results by its ttl_s (3,600 s), not by the run's cache: --cache anthropic "
        "gives its requests 300 s; set ttl_s = 300, or run a cache of 3,600 s"]


def test_check_passes_each_runs_longest_idle_gap_to_the_ttl_note():
    # check's warning_lines builds the records the TTL note reads: without the run's
    # longest_idle_ms a run that never idled would get the note as a record from an older prefixbench.
    from types import SimpleNamespace

    from prefixbench.reports.check_report import warning_lines

    def run(idle: int) -> SimpleNamespace:
        return SimpleNamespace(workload="seed-coding", window=512_000, engine="claude-code-idle-compact", preset="patched",
                               profile=None, cache="anthropic-5m", seed=0, longest_idle_ms=idle, session=SimpleNamespace(events=()))

    assert warning_lines([run(0)]) == []
    [note] = warning_lines([run(3_600_000)])
    assert note.startswith("claude-code-idle-compact idle-compacts and clears old tool results by its cache_ttl_s (3,600 s)")
