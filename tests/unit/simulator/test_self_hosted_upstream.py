"""The one rule the readers share for a call's upstream where its host runs open models itself
(simulator/providers/vllm.py: ``self_hosted_upstream``, ``litellm_engine``, ``own_host``)."""

from __future__ import annotations

import pytest
from prefixbench.simulator.providers.vllm import litellm_engine, own_host, self_hosted_upstream


@pytest.mark.parametrize(("name", "oss", "litellm", "upstream"), [
    ("ollama-launch", False, False, "ollama-launch"),  # Codex's `ollama launch codex`: the name kept as written
    ("Ollama", False, False, "Ollama"),
    ("LM_Studio", False, False, "LM_Studio"),
    ("lmstudio-remote", False, False, "lmstudio-remote"),
    ("openai", True, True, ""),
    ("", True, True, ""),
    # `oss` is Codex's flag alone: another agent's provider named so is a name of the user's.
    ("oss", False, False, ""),
    ("oss", True, False, "oss"),
    ("OSS", True, False, "OSS"),
    # litellm's engines are its prefixes, matched whole, only where the name is a litellm route's.
    ("hosted_vllm", False, False, ""),
    ("hosted_vllm", False, True, "hosted_vllm"),
    ("Triton", False, True, "Triton"),
    ("vllm-cloud", False, True, ""),
    ("oss", False, True, ""),
    # An engine a user runs, or the user's own machine, named whole (a Codex model_provider).
    ("vllm", False, False, "vllm"),
    ("llama.cpp", False, False, "llama.cpp"),
    ("LocalHost", False, False, "LocalHost"),
    ("sglang", False, False, "sglang"),
    ("vllm-cloud", False, False, ""),
    ("custom", True, True, ""),
])
def test_self_hosted_upstream(name: str, oss: bool, litellm: bool, upstream: str) -> None:
    assert self_hosted_upstream(name, oss=oss, litellm=litellm) == upstream


@pytest.mark.parametrize(("model", "engine"), [
    ("ollama/deepseek-chat", "ollama"),
    ("ollama_chat/qwen2.5-coder:32b", "ollama_chat"),
    ("lm_studio/gpt-4o", "lm_studio"),
    ("hosted_vllm/Qwen/Qwen3-8B", "hosted_vllm"),
    ("vllm/facebook/opt-125m", "vllm"),
    ("llamafile/mistral-7b-instruct", "llamafile"),
    ("xinference/qwen2.5-instruct", "xinference"),
    ("triton/llama-3-8b", "triton"),
    ("oobabooga/vicuna-13b", "oobabooga"),
    ("docker_model_runner/ai/qwen3", "docker_model_runner"),
    ("lemonade/Qwen3-Coder-30B", "lemonade"),
    # Only a route's first segment names its engine; a vendor's route is none, whatever follows.
    ("openrouter/vllm/x", ""),
    ("fireworks_ai/accounts/fireworks/models/triton-7b", ""),
    ("openai_like/deepseek-chat", ""),
    ("nvidia_nim/meta/llama3-70b-instruct", ""),
    ("vllm", ""),  # no route: a model's name
    ("deepseek-chat", ""),
])
def test_litellm_engine_reads_a_routes_first_segment_whole(model: str, engine: str) -> None:
    assert litellm_engine(model) == engine


@pytest.mark.parametrize(("upstream", "unbilled"), [
    ("oss", True), ("Ollama", True), ("ollama-launch", True), ("lm_studio", True), ("hosted_vllm", True),
    ("xinference", True), ("workers-ai", False), ("DeepInfra", False), ("Chutes", False), ("DeepSeek", False),
])
def test_own_host_is_any_upstream_a_reader_keeps_for_a_self_hosted_call(upstream: str, unbilled: bool) -> None:
    """Prices read a call's upstream: every name a reader keeps for a self-hosted call leaves it
    unpriced; a gateway's upstream (OpenRouter's provider names) or Workers AI is priced as before."""
    assert own_host(upstream) is unbilled
