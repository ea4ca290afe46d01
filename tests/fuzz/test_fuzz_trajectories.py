"""Fuzz the trajectory-shaped and span-shaped formats on their own (workloads/logs/formats/):
mutated pretty-printed files and edited records end in exit 0 or one clean line with exit 2, never
a traceback or a hang. ``test_fuzz_audit.py`` samples every format; this one spends its examples
on the one-object files, which are read whole rather than line by line."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, write
from tests.fuzz.test_fuzz_audit import SEEDS

FORMATS = ("swe-agent", "otel", "litellm", "openhands", "langfuse")


def test_mutated_trajectories_end_cleanly(importer_examples):
    tally = Tally("audit", bound_s=20)
    path = Path(tempfile.mkdtemp(prefix="fuzz-traj-")) / "run.traj.json"

    @fuzz_settings(importer_examples)
    @given(fmt=st.sampled_from(FORMATS), data=st.data(), explicit=st.booleans())
    def case(fmt: str, data: st.DataObject, explicit: bool) -> None:
        seeds = SEEDS[fmt]
        raw = data.draw(
            st.one_of(
                st.sampled_from(seeds).flatmap(lambda doc: mutated(json.dumps(doc, indent=2).encode())),
                edited(st.sampled_from(seeds)).map(lambda doc: json.dumps(doc, indent=2).encode()),
            )
        )
        argv = ["audit", str(write(path, raw)), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", fmt]
        tally.check(argv)

    case()
    tally.report()
