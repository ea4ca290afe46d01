"""Fuzz ``--engine-config``: generated and mutated configs (TOML and JSON) end in exit 0 or
one clean line with exit 2, and a config that validates runs to its end within the bound."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.kernel.engines.checkpoint import CheckpointConfig
from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.user_tail import UserTailConfig
from tests.fuzz.harness import Tally, fuzz_settings, weighted, json_values, mutated, to_toml, write

KEYS = {
    "checkpoint": list(CheckpointConfig.__struct_fields__),
    "user-tail": list(UserTailConfig.__struct_fields__),
    "ranges": list(RangesConfig.__struct_fields__),
}
numbers = st.one_of(
    st.integers(-10, 60_000),
    st.sampled_from((0, 1, 2, 5, 50, 300, 600, 20_000, 10**12)),
    st.floats(-1, 2),
    st.sampled_from((0.0, 0.16, 0.5, 0.8, 1.0, float("nan"), float("inf"))),
)
value = st.one_of(
    numbers,
    st.booleans(),
    st.sampled_from(("none", "soft", "strong", "all", "user", "codex", "x", "", "reasoning_content", "write")),
    st.lists(st.sampled_from(("write", "edit", "", 5)), max_size=3),
    st.fixed_dictionaries({}, optional={"threshold_chars": numbers, "head_chars": numbers, "tail_chars": numbers}),
    json_values,
)


@st.composite
def config(draw) -> dict[str, dict[str, object]]:
    engines = draw(st.lists(st.sampled_from(["checkpoint", "user-tail", "ranges"]), min_size=1, max_size=2, unique=True))
    out: dict[str, dict[str, object]] = {}
    for engine in engines:
        keys = draw(st.lists(st.sampled_from([*KEYS[engine], "nope"]), max_size=3, unique=True))
        out[engine] = {key: draw(value) for key in keys}
    if draw(st.integers(0, 49)) == 17:
        out[draw(st.sampled_from(("gpu", "Ranges")))] = {}
    return out


SEED_TOML = b"""[ranges]
protected_tools = ["write", "edit"]
tier2_trigger = 5
max_summary_length = 20000

[checkpoint]
retain_ratio = 0.3
pruner = { threshold_chars = 8192, head_chars = 4096, tail_chars = 1024 }
"""
SEED_JSON = json.dumps({"user-tail": {"retained_turns": 2, "tail_rule": "codex"}, "ranges": {"nudge_force": "strong"}}).encode()

SWEEP = ["sweep", "--workload", "thinking-tools", "--windows", "8k", "--presets", "patched", "--turns", "2", "--steps-per-turn", "30", "--quiet"]


def test_generated_and_mutated_configs_end_cleanly(config_examples):
    tally = Tally("engine-config", bound_s=60)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-config-"))

    @fuzz_settings(config_examples)
    @given(
        source=weighted(
            (config().map(lambda c: ("toml", c, to_toml(c).encode("utf-8", "surrogatepass"))), 2),
            (config().map(lambda c: ("json", c, json.dumps(c).encode())), 2),
            (mutated(SEED_TOML).map(lambda b: ("toml", {"ranges": {}, "checkpoint": {}}, b)), 1),
            (mutated(SEED_JSON).map(lambda b: ("json", {"user-tail": {}, "ranges": {}}, b)), 1),
        )
    )
    def case(source) -> None:
        suffix, parsed, data = source
        engines = [e for e in parsed if e in KEYS] or ["ranges"]
        path = write(folder / f"engines.{suffix}", data)
        tally.check([*SWEEP, "--engines", ",".join(engines), "--engine-config", str(path), "--out", str(folder / "out")])

    case()
    tally.report()
