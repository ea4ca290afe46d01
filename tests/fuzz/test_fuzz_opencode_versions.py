"""Fuzz the version an OpenCode (or Kilo CLI) session names, its creation time and its steps'
counts: the audit ends cleanly, and each step is read by one convention: additive (as stored),
input less the cache read, or input less the read and write, never below zero. A Kilo CLI 1.0.x
session (to 1.0.25) created after Kilo's first release reads as the same steps under OpenCode 1.1.0."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.workloads.logs.formats import FORMATS, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.formats.opencode import _KILO_1_0_LAST, _KILO_FIRST_MS
from tests.fuzz.harness import Tally, fuzz_settings

FORMAT = FORMATS["opencode"]
VERSIONS = st.one_of(
    st.builds(lambda n: f"1.0.{n}", st.integers(0, 300)),  # OpenCode's own 1.0.x and Kilo's
    st.builds(lambda a, b: f"7.{a}.{b}", st.integers(0, 9), st.integers(0, 60)),  # Kilo CLI 7.x
    st.sampled_from(["0.15.8", "1.1.0", "1.3.4", "1.3.5", "1.17.18", "2.0.3", "v1.0.3", "7", "", "local"]),
    st.text(max_size=12),
    st.none(),
)
CREATED = st.one_of(st.none(), st.integers(_KILO_FIRST_MS - 10**9, _KILO_FIRST_MS + 10**9), st.integers(0, 10**14 - 1))
COUNT = st.integers(0, 2_000_000)
STEP = st.fixed_dictionaries({"input": st.integers(1, 2_000_000), "output": COUNT, "reasoning": COUNT, "cache": st.fixed_dictionaries({"read": COUNT, "write": COUNT})})
PROVIDERS = st.sampled_from(["anthropic", "openai", "openrouter", "google", "kilo"])


def _export(version: str | None, created: int | None, provider: str, steps: list[dict]) -> dict:
    info: dict = {"id": "ses_fuzzver", "projectID": "prj", "directory": "/w", "title": "t",
                  "time": {"created": created, "updated": created} if created is not None else {}}
    if version is not None:
        info["version"] = version
    messages = []
    for n, tokens in enumerate(steps):
        uid, aid = f"msg_{2 * n:04}", f"msg_{2 * n + 1:04}"
        messages.append({"info": {"id": uid, "sessionID": info["id"], "role": "user", "time": {"created": n}}, "parts": []})
        messages.append({"info": {"id": aid, "sessionID": info["id"], "role": "assistant", "time": {"created": n},
                                  "providerID": provider, "modelID": "claude-sonnet-4-5" if provider == "anthropic" else "gpt-5"},
                         "parts": [{"id": f"prt_{n}", "type": "step-finish", "tokens": tokens, "cost": 0}]})
    return {"info": info, "messages": messages}


def _usages(path: Path, export: dict) -> list[tuple[int, int, int]]:
    path.write_text(json.dumps(export))
    requests, _ = import_file(path, FORMAT, ImportContext())
    return [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m) for r in requests if r.usage]


def test_session_versions_and_counts_read_by_one_convention(importer_examples):
    tally = Tally("audit opencode versions", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-opencode-versions-"))
    path = folder / "session.json"

    @fuzz_settings(importer_examples)
    @given(version=VERSIONS, created=CREATED, provider=PROVIDERS, steps=st.lists(STEP, min_size=1, max_size=5))
    def case(version: str | None, created: int | None, provider: str, steps: list[dict]) -> None:
        export = _export(version, created, provider, steps)
        path.write_text(json.dumps(export))
        tally.check(["audit", str(path), "--quiet", "--format", "json"])
        for (uncached, read, write), tokens in zip(_usages(path, export), steps, strict=True):
            stored, cache = tokens["input"], tokens["cache"]
            assert (read, write) == (cache["read"], cache["write"])
            assert uncached in (stored, stored - read, stored - read - write) and uncached >= 0
        if version and version.startswith("1.0.") and created is not None and created >= _KILO_FIRST_MS:
            number = version.split(".")[2]
            if number.isdigit() and int(number) <= _KILO_1_0_LAST[2]:  # Kilo's 1.0.x: to 1.0.25, not OpenCode's 1.0.61
                assert _usages(path, export) == _usages(path, _export("1.1.0", created, provider, steps))

    case()
    tally.report()
