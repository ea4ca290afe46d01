"""The one rule the readers share for a call's upstream where its host runs open models itself
(simulator/providers/vllm.py: ``self_hosted_upstream``, ``own_host``)."""

from __future__ import annotations

import pytest
from prefixbench.simulator.providers.vllm import own_host, self_hosted_upstream


@pytest.mark.parametrize(("name", "oss", "upstream"), [
    ("ollama-launch", False, "ollama-launch"),  # Codex's `ollama launch codex`: the name kept as written
    ("Ollama", False, "Ollama"),
    ("LM_Studio", False, "LM_Studio"),
    ("lmstudio-remote", False, "lmstudio-remote"),
    ("openai", True, ""),
    ("", True, ""),
    # `oss` is Codex's flag alone: another agent's provider named so is a name of the user's.
    ("oss", False, ""),
    ("oss", True, "oss"),
    ("OSS", True, "OSS"),
])
def test_self_hosted_upstream(name: str, oss: bool, upstream: str) -> None:
    assert self_hosted_upstream(name, oss=oss) == upstream


@pytest.mark.parametrize(("upstream", "unbilled"), [
    ("oss", True), ("Ollama", True), ("ollama-launch", True), ("lm_studio", True),
    ("workers-ai", False), ("DeepInfra", False), ("Chutes", False), ("DeepSeek", False),
])
def test_own_host_is_any_upstream_a_reader_keeps_for_a_self_hosted_call(upstream: str, unbilled: bool) -> None:
    """Prices read a call's upstream: every name a reader keeps for a self-hosted call leaves it
    unpriced; a gateway's upstream (OpenRouter's provider names) or Workers AI is priced as before."""
    assert own_host(upstream) is unbilled
