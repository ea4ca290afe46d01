"""Cache models by name: the one place ``--cache`` and ``--tokenizer`` are turned into objects.

* ``byte-exact``: the reference, longest common byte prefix (no options)
* ``anthropic``: ``cache_control`` breakpoints, 20-block lookback, TTL (options: the
  keyword arguments of :class:`prefixbench.simulator.anthropic.AnthropicCache`)
* ``openai``: exact prefix, pre-5.6 128-token steps or 5.6 breakpoints (``mode``,
  ``retention``, ``zdr``, ``ttl_ms``, ``lookback``, ``servers``, ``routing``, ``overflow_rpm``,
  ``cache_output``)
* ``deepseek``: prefix units, fixed interval, no write fee (``interval``, ``ttl_ms``,
  ``common_prefix_units``, ``cache_output``, ``whole_units``)
* ``vllm``: 16-token hashed blocks, LRU free queue (``block_size``, ``capacity_blocks``,
  ``cache_output``)
* ``radix``: SGLang token radix tree, LRU leaves (``capacity_tokens``, ``cache_output``)
* ``gemini``, ``xai``, ``kimi``, ``zai``: automatic prefix caching
  (:class:`prefixbench.simulator.automatic.AutomaticCache`); ``gemini:mode=explicit``: the
  agent's ``CachedContent`` objects (:class:`prefixbench.simulator.cached_content.CachedContentCache`); ``qwen``, ``minimax``: explicit
  markers or automatic caching (:class:`prefixbench.simulator.automatic.MarkedCache`). Their
  options, defaults and the source kind of each default are the ``cache_options`` of the
  provider's rules (:func:`option_lines` lists them for ``--help`` and the reports).

Every model but ``byte-exact`` and ``anthropic`` counts tokens with the tokenizer given
(``heuristic`` by default, or ``deepseek-v4``); ``anthropic`` uses its own calibrated ratio.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from prefixbench.simulator.checks import spelled
from prefixbench.simulator.cache import ByteExactCache, CacheModel
from prefixbench.simulator.errors import UserError

if TYPE_CHECKING:
    from prefixbench.simulator.tokenizer import Tokenizer

# The model classes are imported by their builders when asked for: the CLI lists CACHE_MODELS
# in its help without loading every model (start-up: docs/performance.md).

#: Converts one option value given as text (``--cache openai:mode=5.6``) or as a value.
Parser = Callable[[object], object]


def _text_int(value: object) -> object:
    if not (isinstance(value, str) and value.isascii() and value.strip().lstrip("-").isdigit()):
        return value
    if len(value.strip()) > 30:  # beyond any count, and beyond Python's int-string limit soon after
        raise UserError(f"cache option value {value.strip()[:12]}... has {len(value.strip()):,} digits: too large")
    return int(value)


def _text_int_or_none(value: object) -> object:
    return None if isinstance(value, str) and value.strip().lower() in ("none", "") else _text_int(value)


def _text_bool(value: object) -> object:
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "0", "off"):
        return False
    return value


def _text(value: object) -> object:
    return value.strip() if isinstance(value, str) else value


def _text_or_none(value: object) -> object:
    return None if isinstance(value, str) and value.strip().lower() in ("none", "") else _text(value)


#: Options of the models built here, and how text becomes a value (the model validates it).
_OPTIONS: dict[str, dict[str, Parser]] = {
    "openai": {
        "mode": _text,
        "retention": _text_or_none,
        "ttl_ms": _text_int_or_none,
        "lookback": _text_int,
        "servers": _text_int,
        "routing": _text,
        "overflow_rpm": _text_int_or_none,
        "cache_output": _text_bool,
        "zdr": _text_bool,
    },
    "deepseek": {
        "interval": _text_int,
        "ttl_ms": _text_int_or_none,
        "common_prefix_units": _text_bool,
        "cache_output": _text_bool,
        "whole_units": _text_bool,
    },
    "vllm": {"block_size": _text_int, "capacity_blocks": _text_int, "cache_output": _text_bool},
    "radix": {"capacity_tokens": _text_int, "cache_output": _text_bool},
}


def make_cache(name: str, *, tokenizer: str | Tokenizer | None = None, **options: object) -> CacheModel:
    """A fresh cache model by name.

    Args:
        name: one of :data:`CACHE_MODELS`.
        tokenizer: a tokenizer name (``heuristic``, ``deepseek-v4``) or object; None = heuristic.
        options: model options; values may be text, as from the command line.

    Raises:
        UserError: unknown model, unknown option or bad value, or a tokenizer the model cannot use.
    """
    builder = _BUILDERS.get(name)
    if builder is None:
        raise UserError(f"unknown cache model {name!r} (known: {', '.join(CACHE_MODELS)}){_runs_through(name)}")
    return builder(name, tokenizer, options)


def _runs_through(name: str) -> str:
    """``; bedrock's requests run through --cache anthropic:rules=bedrock`` for a provider whose
    rules name another model as theirs (with ``rules=`` where that model takes the provider's
    rules as an option), else empty."""
    from prefixbench.simulator.providers import PROVIDERS

    rules = PROVIDERS.get(name)
    if rules is None or rules.body_model not in _BUILDERS or rules.body_model == name:
        return ""
    option = f":rules={name}" if "rules" in MORE_OPTIONS_HELP.get(rules.body_model, {}) else ""
    return f"; {name}'s requests run through --cache {rules.body_model}{option}"


def _make_byte_exact(name: str, tokenizer: str | Tokenizer | None, options: Mapping[str, object]) -> CacheModel:
    _only_heuristic(name, tokenizer, "it is the chars/4 reference")
    if options:
        raise UserError(f"cache model {name!r} takes no options, got {', '.join(sorted(options))}")
    return ByteExactCache()


def _tokenized(load: Callable[[], type]) -> Callable[[str, str | Tokenizer | None, Mapping[str, object]], CacheModel]:
    """A builder for a token-based model whose class ``load`` imports when asked for."""

    def build(name: str, tokenizer: str | Tokenizer | None, options: Mapping[str, object]) -> CacheModel:
        from prefixbench.simulator.tokenizer import make_tokenizer

        parsed = _parse(name, options)  # before the tokenizer: loading a real one may need an extra
        return load()(tokenizer=make_tokenizer(tokenizer), **parsed)

    return build


def _openai() -> type:
    from prefixbench.simulator.openai import OpenAICache

    return OpenAICache


def _deepseek() -> type:
    from prefixbench.simulator.deepseek import DeepSeekCache

    return DeepSeekCache


def _vllm() -> type:
    from prefixbench.simulator.blocks import VllmCache

    return VllmCache


def _radix() -> type:
    from prefixbench.simulator.blocks import RadixCache

    return RadixCache


def _provider_model(rules_name: str, construct: Callable[..., CacheModel]) -> Callable[[str, str | Tokenizer | None, Mapping[str, object]], CacheModel]:
    """A builder for a provider's own model: its options and defaults are the ``cache_options``
    of the provider's rules, text is parsed to the type of each default, and ``construct``
    (imported when asked for) turns the values into the model."""

    def build(name: str, tokenizer: str | Tokenizer | None, options: Mapping[str, object]) -> CacheModel:
        from prefixbench.simulator.providers import PROVIDERS
        from prefixbench.simulator.tokenizer import make_tokenizer

        defaults = PROVIDERS[rules_name].option_defaults()
        unknown = sorted(set(options) - set(defaults))
        if unknown:
            raise UserError(f"cache model {name!r} has no option {unknown[0]!r} (known: {', '.join(defaults)})")
        takes_none = {option.key: option.none_means for option in PROVIDERS[rules_name].cache_options if option.none_means}
        values = dict(defaults)
        for key, value in options.items():
            # `none` where the option takes it (Z.AI's ttl_ms: 20 min by default, none keeps all).
            values[key] = None if key in takes_none and _text_or_none(value) is None else _like(defaults[key], value)
            if key in takes_none and isinstance(values[key], str) and not isinstance(defaults[key], str):
                raise UserError(f"{name}: {key} must be a positive integer or none ({takes_none[key]}), got {spelled(value)}")
        return construct(name, make_tokenizer(tokenizer), values)

    return build


def _gemini(name: str, tokenizer: Tokenizer, values: dict[str, object]) -> CacheModel:
    from prefixbench.simulator.automatic import AutomaticCache
    from prefixbench.simulator.providers.gemini import CHECKPOINTS, DEFAULT_MIN_TOKENS, MINIMUM_TABLES

    table = MINIMUM_TABLES.get(str(values["minimums"]))
    if table is None:
        raise UserError(f"{name}: minimums must be one of {', '.join(MINIMUM_TABLES)}, got {values['minimums']!r}")
    block = values["block"]  # one step for every model, else each model's checkpoints
    steps = {"block": 1, "block_by_model": CHECKPOINTS} if block is None else {"block": block}
    implicit = AutomaticCache(name=name, tokenizer=tokenizer, min_tokens=values["min_tokens"], min_by_model=table, **steps,  # type: ignore[arg-type]
                              min_default=DEFAULT_MIN_TOKENS, ttl_ms=values["ttl_ms"])  # type: ignore[arg-type]
    match values["mode"]:
        case "implicit":
            return implicit
        case "explicit":
            from prefixbench.simulator.cached_content import DOUBLE, CachedContentCache

            refresh = values["explicit_refresh"]
            refresh = refresh if refresh == DOUBLE else _text_int(refresh)
            return CachedContentCache(name=name, tokenizer=tokenizer, ttl_ms=values["explicit_ttl_ms"],  # type: ignore[arg-type]
                                      at=values["explicit_at"], refresh=refresh, implicit=implicit)  # type: ignore[arg-type]
        case mode:
            raise UserError(f"{name}: mode must be implicit or explicit, got {mode!r}")


def _xai(name: str, tokenizer: Tokenizer, values: dict[str, object]) -> CacheModel:
    from prefixbench.simulator.automatic import AutomaticCache

    return AutomaticCache(name=name, tokenizer=tokenizer, **values)  # type: ignore[arg-type]


def _kimi(name: str, tokenizer: Tokenizer, values: dict[str, object]) -> CacheModel:
    from prefixbench.simulator.automatic import AutomaticCache
    from prefixbench.simulator.providers.moonshot import TTL_MS

    ttl = TTL_MS.get(str(values["ttl"]))
    if ttl is None:
        raise UserError(f"{name}: ttl must be one of {', '.join(TTL_MS)}, got {values['ttl']!r}")
    return AutomaticCache(name=name, tokenizer=tokenizer, block=values["block"], ttl_ms=ttl)  # type: ignore[arg-type]


def _zai(name: str, tokenizer: Tokenizer, values: dict[str, object]) -> CacheModel:
    from prefixbench.simulator.automatic import AutomaticCache

    return AutomaticCache(name=name, tokenizer=tokenizer, block=values["block"], cache_output=values["cache_output"],  # type: ignore[arg-type]
                          ttl_ms=values["ttl_ms"])  # type: ignore[arg-type]


def _qwen(name: str, tokenizer: Tokenizer, values: dict[str, object]) -> CacheModel:
    from prefixbench.simulator.automatic import MarkedCache
    from prefixbench.simulator.providers.qwen import EXPLICIT_MIN, EXPLICIT_TTL_MS, LOOKBACK_BLOCKS

    return MarkedCache(name=name, tokenizer=tokenizer, explicit_min=EXPLICIT_MIN, lookback=LOOKBACK_BLOCKS,
                       explicit_ttl_ms=EXPLICIT_TTL_MS, **values)  # type: ignore[arg-type]


def _minimax(name: str, tokenizer: Tokenizer, values: dict[str, object]) -> CacheModel:
    from prefixbench.simulator.automatic import MarkedCache
    from prefixbench.simulator.providers.minimax import LOOKBACK_BLOCKS, MIN_TOKENS

    return MarkedCache(name=name, tokenizer=tokenizer, explicit_min=MIN_TOKENS, implicit_min=MIN_TOKENS,
                       lookback=LOOKBACK_BLOCKS, **values)  # type: ignore[arg-type]


def option_lines(name: str) -> tuple[str, ...]:
    """``key=default [source] (seen ...): meaning`` for each option of a provider's own
    ``--cache`` model (empty for the others): the assumptions a run with it rests on."""
    from prefixbench.simulator.providers import PROVIDERS

    for rules in PROVIDERS.values():
        if rules.body_model == name and rules.cache_options:
            return tuple(option.describe() for option in rules.cache_options)
    return ()


def assumptions(spec: str) -> tuple[str, ...]:
    """What a run with the ``--cache`` argument ``spec`` assumes, one line an option of a provider
    model: the value used, whether it was given, the default and what it rests on, the range
    seen; then one line each simulation option given (:data:`MORE_OPTIONS_HELP`), with its
    default (empty for a model without provider options run at its defaults).

    Raises:
        UserError: a malformed ``spec``.
    """
    name, given = parse_cache_spec(spec)
    from prefixbench.simulator.providers import PROVIDERS

    lines = []
    facts: set[str] = set()
    for rules in PROVIDERS.values():
        if rules.body_model == name and rules.cache_options:
            for o in rules.cache_options:
                used = f"{given[o.key]} (given; default {o.default_text})" if o.key in given else f"{o.default_text} (default)"
                lines.append(f"{name}: {o.key}={used}, rests on [{o.source}], seen {o.seen}: {o.help}")
                facts.add(o.key)
            break
    # The other options given (anthropic:rules=bedrock, openai:mode=5.6): what the run was asked.
    more = MORE_OPTIONS_HELP.get(name, {})
    lines += [f"{name}: {key}={value} (given; default {more[key]}), a simulation option" for key, value in given.items()
              if key not in facts and key in more]
    return tuple(lines)


def options_help() -> str:
    """The options of the provider models, with defaults and what each rests on, for ``--help``:
    ``xai: block=128 [S] (64-128), ...``."""
    from prefixbench.simulator.providers import PROVIDERS

    parts = []
    for rules in PROVIDERS.values():
        if rules.body_model in _BUILDERS and rules.cache_options:
            shown = ", ".join(f"{o.key}={o.default_text} [{o.source}]" for o in rules.cache_options)
            parts.append(f"{rules.body_model}: {shown}")
    return "; ".join(parts)


#: The options ``options_help`` leaves out, with their defaults: the simulation models' (vllm,
#: radix), openai's ``mode`` and ``lookback`` and anthropic's constructor options (``rules=bedrock``
#: runs Bedrock's rules) (not provider facts with a source). Written out,
#: so ``--help`` imports no model; tests/unit/simulator/test_cache_options_help.py keeps them
#: equal to the constructors' defaults.
MORE_OPTIONS_HELP: dict[str, dict[str, str]] = {
    "anthropic": {"rules": "anthropic", "min_tokens": "none", "lookback_blocks": "20", "max_breakpoints": "4",
                  "auto_when_unmarked": "5m"},
    "openai": {"mode": "pre-5.6", "lookback": "50"},
    "vllm": {"block_size": "16", "capacity_blocks": "65536", "cache_output": "true"},
    "radix": {"capacity_tokens": "1048576", "cache_output": "true"},
}
#: The other values an option of :data:`MORE_OPTIONS_HELP` takes, shown beside its default.
OTHER_VALUES: dict[tuple[str, str], str] = {
    ("openai", "mode"): "5.6",
    ("anthropic", "rules"): "bedrock",  # Bedrock's minimums and Nova's cap: how a sweep runs Bedrock
    ("anthropic", "auto_when_unmarked"): "1h, none",
}


def more_options_help() -> str:
    """``openai: mode=pre-5.6 (or 5.6), lookback=50; vllm: ...``, for ``--help``."""
    def shown(model: str, key: str, default: str) -> str:
        other = OTHER_VALUES.get((model, key))
        return f"{key}={default}" + (f" (or {other})" if other else "")

    return "; ".join(f"{model}: {', '.join(shown(model, k, v) for k, v in options.items())}" for model, options in MORE_OPTIONS_HELP.items())


def parse_cache_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``name`` or ``name:key=value,key=value`` (a ``--cache`` argument) into name and options.

    Raises:
        UserError: an option without ``=``.
    """
    name, colon, rest = spec.partition(":")
    if colon and not rest.strip():
        raise UserError("nothing after the colon (give key=value options, or drop the colon)")
    options: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"cache option {item!r} in {spec!r} is not key=value")
        if key.strip() in options:
            raise UserError(f"cache option {key.strip()!r} given twice in {spec!r}")
        options[key.strip()] = value.strip()
    return name.strip(), options


def unmarked_ttl_ms(spec: str) -> int | None:
    """The lifetime (ms) the cache model ``spec`` (a ``--cache`` argument) gives what a
    kernel-built request writes (no ``cache_control`` marks, no retention asked): Anthropic's
    ``auto_when_unmarked``, another model's ``ttl_ms``; None where such entries never expire (or
    are never written).

    Raises:
        UserError: ``spec`` names no cache model, or options it does not take.
    """
    from prefixbench.simulator.anthropic import TTL_MS, AnthropicCache

    name, options = parse_cache_spec(spec)
    model = make_cache(name, **options)
    if isinstance(model, AnthropicCache):
        return None if model.auto_when_unmarked is None else TTL_MS[model.auto_when_unmarked]
    ttl = getattr(model, "ttl_ms", None)
    return ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None


def _parse(name: str, options: Mapping[str, object]) -> dict[str, object]:
    known = _OPTIONS[name]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise UserError(f"cache model {name!r} has no option {unknown[0]!r} (known: {', '.join(known)})")
    return {key: known[key](value) for key, value in options.items()}


def _tokenizer_name(tokenizer: str | Tokenizer | None) -> str:
    """The name of a tokenizer given by name or object, without building it (a real one may
    need an extra that is not installed; the question asked here is only which one).

    Raises:
        UserError: an unknown name.
    """
    from prefixbench.simulator.tokenizer import TOKENIZERS, make_tokenizer

    match tokenizer:
        case None:
            return "heuristic"
        case str() if tokenizer in TOKENIZERS:
            return tokenizer
        case str():
            return make_tokenizer(tokenizer).name  # raises: unknown tokenizer
        case _:
            return tokenizer.name


def _only_heuristic(name: str, tokenizer: str | Tokenizer | None, why: str) -> None:
    if _tokenizer_name(tokenizer) != "heuristic":
        raise UserError(
            f"cache model {name!r} counts its own tokens ({why}); a tokenizer needs a token-based model: "
            f"add --cache deepseek (or openai, vllm, radix), or use --tokenizer heuristic"
        )


def _make_anthropic(name: str, tokenizer: str | Tokenizer | None, options: Mapping[str, object]) -> CacheModel:
    """The anthropic model, imported only when asked for; options follow its constructor."""
    _only_heuristic(name, tokenizer, "no public Claude tokenizer: a calibrated chars-per-token ratio")
    try:
        from prefixbench.simulator.anthropic import AnthropicCache
    except ImportError as error:
        raise UserError(f"cache model {name!r} is not available: {error}") from None
    # Its keyword-only parameters and their defaults, in order (read without importing inspect).
    defaults: dict[str, object] = dict(AnthropicCache.__init__.__kwdefaults__ or {})
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise UserError(f"cache model {name!r} has no option {unknown[0]!r} (known: {', '.join(defaults)})")
    # auto_when_unmarked=none: an unmarked request caches nothing, as the API prices it.
    values = {key: _text_or_none(value) if key == "auto_when_unmarked" else _like(defaults[key], value) for key, value in options.items()}
    try:
        return AnthropicCache(**values)
    except (TypeError, ValueError) as error:
        raise UserError(f"{name}: {error}") from None


def _like(default: object, value: object) -> object:
    """Text to the type of an option's default (numbers and flags); other values pass through."""
    if not isinstance(value, str):
        return value
    if isinstance(default, bool):
        return _text_bool(value)
    try:
        if isinstance(default, float):
            return float(value)
        if isinstance(default, int) or default is None:
            return _text_int_or_none(value) if default is None else _text_int(value)
        if isinstance(default, str):
            return value.strip()
    except ValueError:
        return value
    return value


#: Each cache model's builder, by the name ``--cache`` takes (:data:`CACHE_MODELS`).
_BUILDERS: dict[str, Callable[[str, str | Tokenizer | None, Mapping[str, object]], CacheModel]] = {
    "byte-exact": _make_byte_exact,
    "anthropic": _make_anthropic,
    "openai": _tokenized(_openai),
    "deepseek": _tokenized(_deepseek),
    "vllm": _tokenized(_vllm),
    "radix": _tokenized(_radix),
    "gemini": _provider_model("gemini", _gemini),
    "xai": _provider_model("xai", _xai),
    "kimi": _provider_model("moonshot", _kimi),
    "zai": _provider_model("zai", _zai),
    "qwen": _provider_model("qwen", _qwen),
    "minimax": _provider_model("minimax", _minimax),
}
#: The cache models ``--cache`` offers, in the order the help lists them: one line in
#: :data:`_BUILDERS` adds one.
CACHE_MODELS: tuple[str, ...] = tuple(_BUILDERS)
