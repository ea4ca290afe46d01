"""Fuzz the command-line options: any value of any option is refused with one line (exit 2)
or accepted up to the first run, which the test stops there; never a traceback."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.runs import store as store_module
from prefixbench.workloads.runs import sweep as sweep_module
from tests.fuzz.harness import Tally, fuzz_settings

VALUES = st.one_of(
    st.sampled_from(
        (
            "0", "-1", "1", "40", "0.5", "1e400", "nan", "inf", "-inf", "32k", "1.5m", "100m", "2000m", "9" * 5000, "",
            ",", "32k,,", "32k,32000", "\u2028", "\udcff", "legacy,legacy", "patched", "ranges", "thinking-tools",
            "byte-exact", "openai:", "openai:mode=5.6", "vllm:capacity_blocks=0", "deepseek:interval=64,interval=128",
            "xai:block=64", "xai:block=0", "xai:evict_p=nan", "xai:routing=random,servers=3", "gemini:minimums=blog",
            "gemini:min_tokens=-1", "qwen:mode=explicit", "kimi:ttl=2h", "minimax:implicit_ttl_ms=none", "grok-code-fast-1",
            "deepseek-v4", "deepseek-v4-flash", "peak", "2020-13-45", "2026-01-01", "default", "none", "json",
            "lenient", "deepseek-official", "deepseek-relay", "deepseek-official,lenient", "LENIENT",
        )
    ),
    st.text(max_size=12),
)
SWEEP_FLAGS = (
    "--workload", "--windows", "--presets", "--engines", "--profile", "--cache", "--tokenizer", "--steps", "--effort",
    "--pruner", "--threshold-ratio", "--retain-ratio", "--retain-tokens", "--turns", "--steps-per-turn",
    "--reasoning-field", "--price", "--period", "--price-as-of", "--format",
)
BENCH_FLAGS = (
    "--workloads", "--strategies", "--caches", "--windows", "--seeds", "--preset", "--profile", "--read-discount",
    "--read-price", "--price-as-of", "--steps",
)
REPLAY_FLAGS = ("--input", "--chars-per-token", "--cache", "--tokenizer", "--profile", "--price", "--period", "--price-as-of", "--format")


def test_any_option_value_is_refused_in_one_line_or_reaches_the_first_run(importer_examples, monkeypatch):
    def stop(item, spec=None):
        raise UserError("fuzz: reached the first run")

    monkeypatch.setattr(sweep_module, "execute_planned", stop)
    # A worker computes a run through the store module's own name for it (a bench plans
    # hundreds of runs: it must stop at the first one too).
    monkeypatch.setattr(store_module, "execute_planned", stop)
    tally = Tally("options", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-options-"))
    log = folder / "log.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')

    @fuzz_settings(importer_examples)
    @given(
        command=st.sampled_from(("sweep", "replay", "check", "bench")),
        sweep_options=st.lists(st.tuples(st.sampled_from(SWEEP_FLAGS), VALUES), max_size=3),
        replay_options=st.lists(st.tuples(st.sampled_from(REPLAY_FLAGS), VALUES), max_size=3),
        bench_options=st.lists(st.tuples(st.sampled_from(BENCH_FLAGS), VALUES), max_size=3),
    )
    def case(command, sweep_options, replay_options, bench_options) -> None:
        if command == "sweep":
            argv = ["sweep", "--quiet", "--out", str(folder / "out"), *(x for pair in sweep_options for x in pair)]
        elif command == "bench":
            argv = ["bench", "--quiet", "--out", str(folder / "bench"), *(x for pair in bench_options for x in pair)]
        elif command == "replay":
            argv = ["replay", str(log), *(x for pair in replay_options for x in pair)]
        else:  # check runs specs, not sweeps: only its validation is fuzzed, with a window too small to run
            argv = ["check", "--preset", "nope", *(x for flag, value in sweep_options if flag in ("--windows", "--engines") for x in (flag, value))]
        tally.check(argv)

    case()
    tally.report()


#: Pieces of the audit's model options' values: models (priced, ruled, unknown, cased, odd),
#: formats and their aliases, fixes, and text that is none of them.
_MODEL = st.sampled_from(("gpt-4o", "GPT-4O", "claude-3-5-sonnet-20240620", "deepseek/deepseek-chat", "deepseek-chat", "unknown",
                          "anthropic/claude-3-opus", "openrouter/x/y", "claude_4_5_opus", "gpt-4o=x", "", " ", "*", "\u2028",
                          "\udcff", "x" * 300, "gemini-2.5-pro"))
_FORMAT = st.sampled_from(("aider", "iflow", "claude-code", "trae", "continue", "cn", "auto", "nope", "", "AIDER"))
_ITEM = st.one_of(_MODEL, st.builds(lambda a, b: f"{a}={b}", st.one_of(_MODEL, _FORMAT), _MODEL), st.text(max_size=8))
_LIST = st.lists(_ITEM, min_size=1, max_size=3).map(",".join)
_FIXES = st.lists(st.sampled_from(("pin-model", "ttl-1h", "keep-alive", "all", "breakpoints=last", "breakpoints=", "nope", "")),
                  min_size=1, max_size=3).map(",".join)
AUDIT_OPTIONS = st.one_of(
    st.tuples(st.sampled_from(("--model-alias", "--assume-model")), _LIST),
    st.tuples(st.just("--assume-provider"), st.one_of(_LIST, st.sampled_from(("anthropic", "aider=deepseek", "openai,openai")))),
    st.tuples(st.just("--what-if"), _FIXES),
)


def test_any_model_option_or_fix_of_an_audit_is_refused_in_one_line_or_audits(importer_examples):
    """--model-alias, --assume-model, --assume-provider and --what-if (pin-model among the fixes),
    on an aider history and a Claude Code transcript (iFlow's): exit 0 or one line."""
    tally = Tally("audit options", bound_s=30)
    fixtures = Path(__file__).parents[1] / "unit" / "logs" / "fixtures"

    @fuzz_settings(importer_examples)
    @given(log=st.sampled_from(("aider.md", "claude-code.jsonl", "trae-agent.json", "continue-cli.json")),
           options=st.lists(AUDIT_OPTIONS, min_size=1, max_size=3))
    def case(log: str, options: list[tuple[str, str]]) -> None:
        tally.check(["audit", str(fixtures / log), "--quiet", "--format", "json", *(x for pair in options for x in pair)])

    case()
    tally.report()
