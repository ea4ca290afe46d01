"""``audit --assume-model [FORMAT=]MODEL,...``: the model of the calls whose log names none.

Some logs never name the model a call ran on: a Claude Managed Agents event stream (the model
is in the agent's configuration; only a ``session.updated`` event names one), ``opencode run
--format json`` output, and a call here and there in other formats. Their importers put such a
call down as model ``unknown`` (:data:`NO_MODEL`): it has no price row, and its provider is the
one the format implies (Managed Agents: Anthropic) or ``unknown``.

A user who knows the model says so. The assumption applies to those calls only (a model the log
names is never replaced), and sets with the model its provider: the format's own where the
format implies one (a model of another provider is refused), else the provider whose rules name
the model (:func:`~prefixbench.simulator.providers.provider_of_model`), else the one the reader
gave the call. The price row follows the model, and so do the chain head's name an importer gave the call
(``...:unknown``: the calls share the head of the calls that name that model) and its model-change
events. The audit's notes say how many calls took it.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Mapping, Sequence

from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import PRICE_TABLE_WHERE, PriceTable, load_prices
from prefixbench.simulator.providers import PROVIDERS, provider_of_model
from prefixbench.simulator.providers.base import ProviderRules
from prefixbench.workloads.audit.assume_provider import provider_head
from prefixbench.workloads.logs.trace import NO_MODEL, Prefix, TraceRequest, replace_request

#: The longest model name the option takes (importers cut a log's name at 120 characters).
MAX_NAME = 120
_EXAMPLE = "e.g. claude-opus-4-5 or managed-agents=claude-opus-4-5"


def fits_option(name: str) -> bool:
    """Whether ``name`` can be given in ``--assume-model`` or ``--model-alias``: printable, no
    space, no ``,`` or ``=`` (they separate the items and their parts), at most :data:`MAX_NAME`
    characters. A log may name a model otherwise; such a name cannot be mapped from the command
    line."""
    return option_misfit(name) is None


def option_misfit(name: str) -> str | None:
    """Why ``name`` cannot be given in ``--assume-model`` or ``--model-alias`` (None: it can,
    :func:`fits_option`)."""
    if not name:
        return "an empty name"
    if any(c.isspace() or c in ",=" for c in name):
        return "a space, comma or '=' in the name"
    if not name.isprintable():
        return "an unprintable character in the name"
    return f"longer than {MAX_NAME} characters" if len(name) > MAX_NAME else None


def _model_provider(model: str) -> ProviderRules | None:
    """The hosted provider whose rules name ``model``, if one does."""
    rules = provider_of_model(model)
    return rules if rules is not None and rules.reports_usage else None


def _priced(model: str, table: PriceTable) -> bool:
    try:
        table.resolve(model)
    except UserError:
        return False
    return True


def parse_assumed_models(text: str | None, table: PriceTable | None = None) -> dict[str, str]:
    """``--assume-model claude-opus-4-5`` as {"*": "claude-opus-4-5"};
    ``managed-agents=claude-opus-4-5,opencode=gpt-5.5`` as {format: model}.

    A model that neither a provider's rules nor the price table name is refused: the assumption
    would change nothing but the label (most likely a typing slip).

    Raises:
        UserError: an item that is not MODEL or FORMAT=MODEL, an unknown format, a format (or
            every format) named twice, a model no provider or price row names, or a model of
            another provider than the one a format implies.
    """
    if text is None:
        return {}
    from prefixbench.workloads.logs.formats import ALIASES, FORMATS

    table = table or load_prices()
    models: dict[str, str] = {}
    for item in text.split(","):
        name, sep, model = (part.strip() for part in item.partition("="))
        name, model = (name, model) if sep else ("*", name)
        if not name or not fits_option(model):
            raise UserError(f"--assume-model {text}: {item.strip()!r} is not MODEL or FORMAT=MODEL ({_EXAMPLE})")
        if name != "*":
            if ALIASES.get(name, name) not in FORMATS:
                raise UserError(f"--assume-model {text}: unknown format {name!r} (known: {', '.join(FORMATS)})")
            name = ALIASES.get(name, name)
        if name in models:
            raise UserError(f"--assume-model {text}: {'every format' if name == '*' else name} is named twice")
        if model.lower() == NO_MODEL:
            raise UserError(f"--assume-model {text}: {model!r} is what a log naming no model gives; name the model ({_EXAMPLE})")
        rules = _model_provider(model)
        if rules is None and not _priced(model, table):
            raise UserError(
                f"--assume-model {text}: no provider's rules and no price row name {model!r}, so it would change nothing "
                f"({_closest(model, table.models())}every priced model: {PRICE_TABLE_WHERE})"
            )
        fixed = FORMATS[name].provider if name != "*" else ""
        if fixed and rules is not None and rules.name != fixed:
            raise UserError(f"--assume-model {text}: {name} calls are {fixed}'s, {model} is {rules.name}'s")
        models[name] = model.lower()  # the price table's ids are lowercase (its look-up ignores case)
    return models


def _provider(r: TraceRequest, model: str, fixed: str, every: str) -> str:
    """The provider of ``r`` on ``model``: see the module doc."""
    rules = _model_provider(model)
    if fixed:
        if rules is not None and rules.name != fixed:
            raise UserError(
                f"--assume-model {every}: {r.file} holds {r.source_format} calls, which are {fixed}'s, and {model} is "
                f"{rules.name}'s (name a model per format: FORMAT=MODEL)"
            )
        return fixed
    own = PROVIDERS.get(r.provider)
    if rules is None or own is not None and own.names_model(model):
        return r.provider  # no provider names the model, or the reader's own does (Bedrock's ids)
    return rules.name


def assume_models(
    requests: Sequence[TraceRequest], models: Mapping[str, str], table: PriceTable | None = None
) -> tuple[list[TraceRequest], tuple[str, ...]]:
    """The requests with the model ``models`` gives their format (key ``*``: every format not
    named) where their log names none, and one note per model saying how many calls took it.

    Raises:
        UserError: a model of another provider than the one a call's format implies.
    """
    if not models:
        return list(requests), ()
    from prefixbench.workloads.logs.formats import FORMATS

    table = table or load_prices()
    out: list[TraceRequest] = []
    taken: dict[str, Counter[tuple[str, str]]] = {}  # key of models -> (format, provider) -> calls
    named: Counter[str] = Counter()  # key of models -> calls of its formats whose log names their model
    for r in requests:
        key = r.source_format if r.source_format in models else "*"
        model = models.get(key)
        if model is None:
            out.append(r)
        elif r.model != NO_MODEL:
            named[key] += 1
            out.append(r)
        else:
            fmt = FORMATS.get(r.source_format)
            provider = _provider(r, model, fmt.provider if fmt is not None else "", models.get("*", ""))
            taken.setdefault(key, Counter())[(r.source_format, provider)] += 1
            out.append(replace_request(r, model=model, provider=provider, prefix=_prefix(r, model, provider), events=_events(r, model)))
        if model is not None and r.model != NO_MODEL and r.events:
            out[-1] = replace_request(out[-1], events=_events(r, model))  # a switch away from the assumed model
    return out, tuple(_note(name, model, taken.get(name), named[name], table, len(models) > 1) for name, model in sorted(models.items()))


def _prefix(r: TraceRequest, model: str, provider: str) -> Prefix | None:
    """``r``'s chain prefix with the assumed model, and the provider it sets, in its head's name
    where an importer put them there (``http:unknown:unknown`` to ``http:anthropic:claude-opus-4-5``):
    the calls share the head of the calls naming that model (then of the provider
    ``--assume-provider`` names, which renames the same part)."""
    prefix = provider_head(r, provider) if provider != r.provider else r.prefix
    if prefix is None or not prefix.head.endswith(f":{NO_MODEL}"):
        return prefix
    return replace(prefix, head=f"{prefix.head[: -len(NO_MODEL)]}{model}")


def _events(r: TraceRequest, model: str) -> tuple[tuple[str, str], ...]:
    """``r``'s events with the assumed model for ``unknown`` in a model change, and a change from
    the assumed model to itself dropped (the log named later the model assumed for its first calls)."""
    out = []
    for kind, text in r.events:
        if kind == "model_change":
            before, sep, after = text.partition(" -> ")
            before, after = (model if before == NO_MODEL else before), (model if after == NO_MODEL else after)
            if sep and before == after:
                continue
            text = f"{before}{sep}{after}" if sep else text
        out.append((kind, text))
    return tuple(out)


def _note(name: str, model: str, taken: Counter[tuple[str, str]] | None, named: int, table: PriceTable, others: bool) -> str:
    option = f"--assume-model {model}" if name == "*" else f"--assume-model {name}={model}"
    kept = f"; {named:,} call(s) whose log names their model kept it" if named else ""
    if not taken:
        where = f" of {name}" if name != "*" else " of a format not named" if others else ""
        return f"{option}: no call{where} in these logs lacks a model name, nothing changed{kept}"
    calls = sum(taken.values())
    split = ", ".join(f"{n:,} {fmt} on {provider}" for (fmt, provider), n in sorted(taken.items()))
    price = "" if _priced(model, table) else f"; no price row for {model}: its calls stay unpriced"
    return f"assumed: {calls:,} call(s) whose log names no model ran on {model} ({option}: {split}){price}{kept}"


def _closest(model: str, priced: Sequence[str]) -> str:
    """``closest priced: gpt-5.5, gpt-5; `` (up to three names like ``model``), '' for none."""
    near = difflib.get_close_matches(model.lower(), list(priced), n=3, cutoff=0.6)
    return f"closest priced: {', '.join(near)}; " if near else ""


#: ``--model-alias``'s example.
_ALIAS_EXAMPLE = "e.g. claude_4_5_opus=claude-opus-4-5"


def parse_model_aliases(text: str | None, table: PriceTable | None = None) -> dict[str, str]:
    """``audit --model-alias ALIAS=MODEL,...`` as {alias: model}: the calls whose log names ALIAS
    (a gateway's or an agent's own name for a model, such as Cline's ``claude_4_5_opus``) are
    priced and modelled as MODEL. Nothing is guessed: only the names given are mapped.

    Raises:
        UserError: an item that is not ALIAS=MODEL, an alias named twice or mapped to itself,
            ``unknown`` as the alias (a log naming no model: ``--assume-model``), or a MODEL no
            price row names (the closest priced names said).
    """
    if text is None:
        return {}
    table = table or load_prices()
    aliases: dict[str, str] = {}
    for item in text.split(","):
        alias, sep, model = (part.strip() for part in item.partition("="))
        if not sep or not fits_option(alias) or not fits_option(model):
            raise UserError(f"--model-alias {text}: {item.strip()!r} is not ALIAS=MODEL ({_ALIAS_EXAMPLE})")
        if alias.lower() == NO_MODEL:
            raise UserError(f"--model-alias {text}: {alias!r} is what a log naming no model gives; "
                            f"--assume-model names the model of those calls")
        if alias in aliases:
            raise UserError(f"--model-alias {text}: {alias} is named twice")
        # The price table's ids are lowercase and found whatever the case: the model is named so
        # (as typed, its calls would be another model than the calls naming it to the replay).
        model = model.lower()
        if alias == model:
            raise UserError(f"--model-alias {text}: {alias} is mapped to itself")
        if not _priced(model, table):
            raise UserError(f"--model-alias {text}: no price row names {model!r} "
                            f"({_closest(model, table.models())}every priced model: {PRICE_TABLE_WHERE})")
        aliases[alias] = model
    return aliases


def alias_models(requests: Sequence[TraceRequest], aliases: Mapping[str, str]) -> tuple[list[TraceRequest], tuple[str, ...]]:
    """The requests with each call naming an alias of ``aliases`` on its model: the model's name
    (in the request, its body's envelope, its chain head and its model-change events), and the
    provider it sets where the call's own provider's rules do not name it (as ``--assume-model``
    sets it: :func:`_provider`); one note per alias saying how many calls took it."""
    if not aliases:
        return list(requests), ()
    out: list[TraceRequest] = []
    taken: dict[str, Counter[str]] = {}  # alias -> provider -> calls
    for r in requests:
        model = aliases.get(r.model)
        if model is not None:
            provider = _provider(r, model, "", "")
            taken.setdefault(r.model, Counter())[provider] += 1
            prefix = provider_head(r, provider) if provider != r.provider else r.prefix
            if prefix is not None and prefix.head.endswith(f":{r.model}"):
                prefix = replace(prefix, head=f"{prefix.head[: -len(r.model)]}{model}")
            body = r.body
            named = r.model
            r = replace_request(r, model=model, provider=provider, prefix=prefix)
            if body is not None and body.envelope.model == named:  # a plain request has no body: never here
                r = replace(r, body=replace(body, envelope=replace(body.envelope, model=model)))
        if r.events and any(kind in ("model_change", "model_chosen") for kind, _ in r.events):
            r = replace_request(r, events=_aliased_events(r.events, aliases))
        out.append(r)
    return out, tuple(_alias_note(alias, model, taken.get(alias)) for alias, model in aliases.items())


def _aliased_events(events: tuple[tuple[str, str], ...], aliases: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``events`` with each alias in a model change its model, a change from a model to itself
    dropped, and a model the user chose (``model_chosen``, named as the log names it) its model."""
    out = []
    for kind, text in events:
        if kind == "model_chosen":
            text = aliases.get(text, text)
        elif kind == "model_change":
            before, sep, after = text.partition(" -> ")
            before, after = aliases.get(before, before), aliases.get(after, after)
            if sep and before == after:
                continue
            text = f"{before}{sep}{after}" if sep else aliases.get(text, text)
        out.append((kind, text))
    return tuple(out)


def _alias_note(alias: str, model: str, taken: Counter[str] | None) -> str:
    option = f"--model-alias {alias}={model}"
    if not taken:
        return f"{option}: no call in these logs names {alias}, nothing changed"
    providers = ", ".join(f"{n:,} on {provider}" for provider, n in sorted(taken.items()))
    return f"assumed: {sum(taken.values()):,} call(s) naming {alias} priced and modelled as {model} ({option}: {providers})"
