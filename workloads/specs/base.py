"""Spec results and the registry the ``check`` command runs."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence

import msgspec
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.windows import format_window
from prefixbench.workloads.scripted.base import Run


class Verdict(enum.Enum):
    """What a spec concluded about a run: a closed set."""

    #: The invariant held, and the run exercised it.
    PASS = "pass"
    #: The run broke the invariant; the figure names the request and number that show it.
    VIOLATED = "violated"
    #: The run never exercised what the spec judges (no checkpoint, too few summary calls):
    #: it proves nothing either way. ``check``, ``check --trace`` and the pytest plugin all
    #: skip it with its reason (``check --vacuous fail`` / ``--prefixbench-vacuous fail`` fail it).
    VACUOUS = "vacuous"

    @classmethod
    def of(cls, holds: bool) -> Verdict:
        """PASS when ``holds``, else VIOLATED."""
        return cls.PASS if holds else cls.VIOLATED


class SpecResult(msgspec.Struct, frozen=True):
    """One spec's verdict on one run, with the figure that decided it."""

    spec: str
    verdict: Verdict
    figure: str
    preset: str
    window: int | None = None
    engine: str = "checkpoint"
    #: Engine specs (a user's engine): the workload and provider profile the run used.
    workload: str | None = None
    profile: str | None = None

    @property
    def passed(self) -> bool:
        """Whether the spec passed (a vacuous result did not: it proves nothing)."""
        return self.verdict is Verdict.PASS

    def failed(self, vacuous_fails: bool = False) -> bool:
        """Whether the spec failed: violated, or vacuous when ``vacuous_fails``."""
        return self.verdict is Verdict.VIOLATED or (vacuous_fails and self.verdict is Verdict.VACUOUS)

    def status(self, vacuous_fails: bool = False) -> str:
        """``PASS``, ``SKIP`` (vacuous) or ``FAIL``: the word every gate prints."""
        if self.failed(vacuous_fails):
            return "FAIL"
        return "PASS" if self.passed else "SKIP"

    def line(self, vacuous_fails: bool = False) -> str:
        """``PASS spec @window [engine/preset]: figure`` (SKIP when vacuous, FAIL when violated)."""
        where = f" @{format_window(self.window)}" if self.window else ""  # as --windows takes it: 32500 is not 32k
        run = f"{self.engine}/{self.preset}" if self.workload is None else f"{self.engine}/{self.workload}/{self.profile}"
        return f"{self.status(vacuous_fails)}  {self.spec}{where} [{run}]: {self.figure}"


class Spec(msgspec.Struct, frozen=True):
    """A registered spec.

    ``windowed`` specs run once per requested window; the others at their own fixed setup.
    ``bug_preset`` reproduces the bug the spec guards against (it must fail there), or None
    for structural guards that are meant to pass on every preset.
    """

    name: str
    description: str
    check: Callable[..., SpecResult]
    windowed: bool = False
    bug_preset: str | None = "legacy"
    engines: tuple[str, ...] = ("checkpoint",)


def hit_pct(ratio: float) -> str:
    """A hit ratio as ``97.9%``."""
    return f"{ratio * 100:.1f}%"


def first_silent_rewrite(run: Run) -> int | None:
    """Index of the first conversation request that rewrote cached history with no durable rewrite.

    Every conversation request must extend the previous one byte for byte, unless a durable
    surface replacement (checkpoint, prune, compression) landed in between.
    """
    return first_silent_rewrite_in(run.observations)


def first_silent_rewrite_in(observations: Sequence[Observation]) -> int | None:
    """:func:`first_silent_rewrite` on any sequence of observations (a run's, or a replayed log's)."""
    rewritten = False
    seen_conversation = False
    for observation in observations:
        if observation.rewrites_since_previous:
            rewritten = True
        if observation.purpose == "compaction":
            continue
        if observation.is_rejected:
            # Refused (a prompt over the window, a strict profile): never cached, so the next
            # accepted request is compared with the one before it, and a rewrite declared
            # before the refused one still explains that comparison.
            continue
        if seen_conversation and not rewritten and not observation.extends_previous_conversation:
            return observation.index
        seen_conversation = True
        rewritten = False
    return None
