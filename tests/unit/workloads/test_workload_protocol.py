"""The Workload protocol is declared, not probed: a sweep's estimate reads what a workload
declares (``expected_requests``), whatever its fields are called, and the registry refuses a
workload class that lacks a member of the protocol with one error naming it."""

from __future__ import annotations

from typing import ClassVar

import msgspec
import pytest

from prefixbench.kernel.api import Engine
from prefixbench.kernel.presets import Preset
from prefixbench.workloads.runs.sweep import PlannedRun
from prefixbench.workloads.scripted.base import missing_members
from prefixbench.workloads.scripted.registry import WORKLOADS, WorkloadEntry
from prefixbench.workloads.scripted.seed_coding import SeedCodingWorkload


class RoundsWorkload(msgspec.Struct, frozen=True):
    """seed-coding's session, sized in rounds of actions: no field called steps or turns."""

    window: int
    rounds: int = 5
    actions_per_round: int = 8
    seed: int = 0
    name: ClassVar[str] = "rounds"
    reasoning_field: ClassVar[None] = None

    def _inner(self) -> SeedCodingWorkload:
        return SeedCodingWorkload(self.window, steps=self.rounds * self.actions_per_round, seed=self.seed)

    def expected_requests(self) -> int:
        return self.rounds * self.actions_per_round

    def model_info(self):
        return self._inner().model_info()

    def header(self):
        return self._inner().header()

    def engine(self, engine_name: str, preset: Preset) -> Engine:
        return self._inner().engine(engine_name, preset)

    def wrap_client(self, engine: Engine) -> Engine:
        return engine

    def script(self):
        return self._inner().script()

    def params(self) -> dict[str, object]:
        return {"rounds": self.rounds, "actions_per_round": self.actions_per_round}

    def run(self, new_engine, engine_name, preset, provider, profile):
        return self._inner().run(new_engine, engine_name, preset, provider, profile)


def test_the_estimate_reads_what_the_workload_declares_whatever_its_fields_are_called():
    # 5 rounds of 8 actions: 40 requests at 32,000 tokens (probing for steps/turns found neither
    # and estimated 1 request).
    item = PlannedRun(RoundsWorkload(32_000), "checkpoint", "patched")
    assert item.cost_estimate == 32_000 * 40
    assert item.describe() == "rounds 32k checkpoint/patched"


def test_every_registered_workload_declares_the_protocol():
    for entry in WORKLOADS.values():
        assert missing_members(entry.factory) == (), entry.name
    assert missing_members(RoundsWorkload) == ()


def test_subagents_estimate_counts_every_agents_steps():
    workload = WORKLOADS["subagents"].factory(window=32_000)
    assert workload.expected_requests() == 4 + 4 * 6


def test_a_workload_without_the_estimate_is_refused_at_registration():
    class Unsized(msgspec.Struct, frozen=True):
        window: int
        rounds: int = 5
        name: ClassVar[str] = "unsized"

    with pytest.raises(TypeError, match=r"workload 'unsized': .*does not declare seed, reasoning_field, model_info"):
        WorkloadEntry("unsized", Unsized, "no protocol", engines=("checkpoint",), options=())
    assert "expected_requests" in missing_members(Unsized)
