"""``--cache``'s help names every option a cache model accepts, with its default.

Fails on main: the help's own example, ``openai:mode=5.6``, named an option the listing left
out, as it left out ``lookback`` and every vllm and radix option (``vllm:capacity_blocks=4096``,
the other example).
"""

from __future__ import annotations

import re

from prefixbench.simulator.models import _OPTIONS, MORE_OPTIONS_HELP, _openai, _radix, _vllm, more_options_help, options_help


def _listed() -> dict[str, set[str]]:
    listed: dict[str, set[str]] = {}
    for part in f"{options_help()}; {more_options_help()}".split("; "):
        model, _, options = part.partition(": ")
        listed.setdefault(model, set()).update(re.findall(r"(\w+)=", options))
    return listed


def test_every_option_a_model_accepts_is_in_the_help() -> None:
    listed = _listed()
    for model, options in _OPTIONS.items():
        assert set(options) <= listed.get(model, set()), (model, set(options) - listed.get(model, set()))


def test_every_option_anthropic_accepts_is_in_the_help() -> None:
    # Fails on main: the help named ttl_from and chars_per_token only, not rules (rules=bedrock
    # replays Bedrock's rules, the way to sweep Bedrock), min_tokens, lookback_blocks,
    # max_breakpoints or auto_when_unmarked, which --cache anthropic:... accepts.
    from prefixbench.simulator.anthropic import AnthropicCache

    assert set(AnthropicCache.__init__.__kwdefaults__) <= _listed()["anthropic"]
    assert "rules=anthropic (or bedrock)" in more_options_help()


def test_the_defaults_shown_are_the_constructors() -> None:
    from prefixbench.simulator.anthropic import AnthropicCache

    classes = {"openai": _openai(), "vllm": _vllm(), "radix": _radix(), "anthropic": AnthropicCache}
    for model, options in MORE_OPTIONS_HELP.items():
        defaults = classes[model].__init__.__kwdefaults__
        for key, shown in options.items():
            value = defaults[key]
            assert shown == (str(value).lower() if isinstance(value, (bool, type(None))) else str(value)), (model, key)
