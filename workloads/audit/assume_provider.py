"""``audit --assume-provider [FORMAT[:MODEL]=]PROVIDER,...``: who served the calls whose log names no
endpoint.

A local proxy's records of the llm-path kind keep the body and the answer but no URL, and a
capture of a local proxy or an unlisted server has a URL of no provider's own. The reader then
takes the provider from the model's name (:attr:`~prefixbench.workloads.logs.trace.TraceRequest.provider_by_model`):
glm-4-7 is read with Z.AI's rules even where Volcengine Ark served it (Ark read 0 of its Claude
Code calls' prompts, where Z.AI's rules predict reads). That is an assumption: the audit's notes
say how many calls took it and from which model names, and how to correct it.

A user who knows the server names its provider for a format (an ``--input`` name) or, bare,
every format, or one model's calls of a format (``claude-code:claude-opus-4-8=anthropic``,
which wins over the format's for them): those calls take the provider's rules (cache model, TTLs, steps, prices by the
model as before). ``unknown`` is the provider of a server prefixbench has no rules for. A
provider a log's endpoint or wire names is never replaced. The usage stays as the reader read
it from the wire's shape (the Messages or the OpenAI shape, whatever the server).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import PROVIDERS, UNKNOWN
from prefixbench.simulator.providers.hosts import WORKERS_AI, host_at, named_host
from prefixbench.workloads.logs.formats.claude_code import relayed_call
from prefixbench.workloads.logs.trace import Prefix, TraceRequest, replace_request

_EXAMPLE = "e.g. unknown, http-capture=zai or claude-code:claude-opus-4-8=anthropic"


def provider_names() -> tuple[str, ...]:
    """The values ``--assume-provider`` takes: every provider's rules, and ``unknown``."""
    return tuple(sorted({*PROVIDERS, UNKNOWN.name}))


def parse_assumed_providers(text: str | None) -> dict[str, str]:
    """``--assume-provider unknown`` as {"*": "unknown"}; ``http-capture=zai`` as {format: provider};
    ``claude-code:claude-opus-4-8=anthropic`` (one model's calls of a format) as {"format:model": provider}.

    Raises:
        UserError: an item that is not PROVIDER, FORMAT=PROVIDER or FORMAT:MODEL=PROVIDER, an unknown format or
            provider (the line names the valid ones), a format (or every format) named twice.
    """
    if text is None:
        return {}
    from prefixbench.workloads.logs.formats import ALIASES, FORMATS

    chosen: dict[str, str] = {}
    for item in text.split(","):
        name, sep, provider = (part.strip() for part in item.partition("="))
        name, provider = (name, provider) if sep else ("*", name)
        if not name or not provider:
            raise UserError(f"--assume-provider {text}: {item.strip()!r} is not PROVIDER, FORMAT=PROVIDER or "
                            f"FORMAT:MODEL=PROVIDER ({_EXAMPLE})")
        if name != "*":
            fmt, colon, model = name.partition(":")
            if colon and not model.strip():
                raise UserError(f"--assume-provider {text}: {item.strip()!r} names no model after {fmt}: ({_EXAMPLE})")
            if ALIASES.get(fmt, fmt) not in FORMATS:
                raise UserError(f"--assume-provider {text}: unknown format {fmt!r} (known: {', '.join(FORMATS)})")
            name = ALIASES.get(fmt, fmt) + (f":{model.strip()}" if colon else "")
        if provider not in provider_names():
            raise UserError(f"--assume-provider {text}: unknown provider {provider!r} (one of: {', '.join(provider_names())})")
        if name in chosen:
            raise UserError(f"--assume-provider {text}: {'every format' if name == '*' else name} is named twice")
        chosen[name] = provider
    return chosen


def provider_head(r: TraceRequest, provider: str) -> Prefix | None:
    """``r``'s chain prefix with ``provider`` for the reader's in its head's name (``http:zai:glm-4-7``),
    where an importer put the provider there; so the calls share the head of that provider's."""
    if r.prefix is None or f":{r.provider}:" not in r.prefix.head:
        return r.prefix
    return replace(r.prefix, head=r.prefix.head.replace(f":{r.provider}:", f":{provider}:", 1))


def assume_providers(
    requests: Sequence[TraceRequest], providers: Mapping[str, str]
) -> tuple[list[TraceRequest], tuple[str, ...]]:
    """The requests with the provider ``providers`` gives their format (key ``*``: every format
    not named) where their reader took it from the model's name, and the notes: per format, how
    many calls took their provider from the model's name and, with the option, which they took."""
    out: list[TraceRequest] = []
    guessed: dict[str, Counter[tuple[str, str]]] = {}  # format -> (provider, model) -> calls
    hosts: dict[str, Counter[str]] = {}  # format -> the upstream a gateway names -> calls
    own: dict[str, Counter[str]] = {}  # format -> the third-party host whose own endpoint was called -> calls
    by_id: dict[str, Counter[str]] = {}  # format -> the host the model's own id names (no upstream named) -> calls
    relays: dict[str, Counter[str]] = {}  # format -> model -> calls whose provider their unsplit writes decided
    by_model: dict[str, Counter[tuple[str, str]]] = {}  # format -> (model, provider a FORMAT:MODEL key set) -> calls
    used: set[str] = set()  # the FORMAT:MODEL keys some call took
    seen: dict[str, Counter[tuple[str, str]]] = {}  # format -> (model, provider) -> calls, every call
    for r in requests:
        seen.setdefault(r.source_format, Counter())[(str(r.model or ""), r.provider)] += 1
        if not r.provider_by_model:
            out.append(r)
            continue
        if relayed_call(r):
            relays.setdefault(r.source_format, Counter())[r.model] += 1
        else:
            guessed.setdefault(r.source_format, Counter())[(r.provider, r.model)] += 1
        # (a Workers AI model's call went to Cloudflare's own endpoint, or through its AI Gateway
        # to Workers AI: a host's endpoint either way, no gateway naming the host in its answer)
        if r.upstream and (host_at(r.endpoint) == r.upstream or r.upstream == WORKERS_AI):
            own.setdefault(r.source_format, Counter())[r.upstream] += 1
        elif r.upstream:
            hosts.setdefault(r.source_format, Counter())[r.upstream] += 1
        elif host := named_host(r.model):
            by_id.setdefault(r.source_format, Counter())[host] += 1
        key = next((k for k in (f"{r.source_format}:{r.model}", r.source_format, "*") if k in providers), None)
        provider = None if key is None else providers[key]
        if provider is not None and ":" in key:
            by_model.setdefault(r.source_format, Counter())[(r.model, provider)] += 1
            used.add(key)
        if provider is None or provider == r.provider:
            out.append(r)
        else:
            out.append(replace_request(r, provider=provider, prefix=provider_head(r, provider)))
    notes = [_note(fmt, taken, providers.get(fmt if fmt in providers else "*"), hosts.get(fmt, Counter()), own.get(fmt, Counter()),
                   by_id.get(fmt, Counter()), relays.get(fmt, Counter()), by_model.get(fmt, Counter()))
             for fmt in sorted(set(guessed) | set(relays)) for taken in [guessed.get(fmt, Counter())]]
    named = {key for key in providers if key == "*" or key in guessed or key in relays or key in used}
    notes += [_unused(key, providers[key], seen) for key in sorted(set(providers) - named)]
    if "*" in providers and not guessed and not relays:
        notes.append(f"--assume-provider {providers['*']}: no call in these logs took its provider from the model's name, "
                     "nothing changed")
    return out, tuple(notes)


#: The models an unused FORMAT:MODEL key's note lists, at most.
_LISTED_MODELS = 8


def _unused(key: str, provider: str, seen: Mapping[str, Counter[tuple[str, str]]]) -> str:
    """The note of a FORMAT or FORMAT:MODEL key no call took: no call of the format, no call of
    the model (the format's models named), or calls whose provider was not taken from the
    model's name (their endpoint or the log's own evidence decided it), which it never changes."""
    fmt, _, model = key.partition(":")
    option = f"--assume-provider {key}={provider}"
    calls = seen.get(fmt, Counter())
    if not calls:
        return f"{option}: no {fmt} call in these logs, nothing changed"
    if model:
        of = Counter({p: n for (m, p), n in calls.items() if m == model})
        if not of:
            models = sorted({m for m, _ in calls if m})
            listed = ", ".join(models[:_LISTED_MODELS]) + (f" and {len(models) - _LISTED_MODELS} more" if len(models) > _LISTED_MODELS else "")
            return f"{option}: no call of model {model} in the {fmt} logs (their models: {listed or 'none named'}), nothing changed"
        whose, total = of, sum(of.values())
        what = f"{model}'s {total:,} {fmt} call(s)"
    else:
        whose = Counter()
        for (_, p), n in calls.items():
            whose[p] += n
        what = f"the {sum(whose.values()):,} {fmt} call(s)"
    providers = ", ".join(f"{p}: {n:,}" for p, n in sorted(whose.items(), key=lambda item: (-item[1], item[0])))
    return (f"{option}: {what} took their provider ({providers}) from their endpoint or the log's own evidence, "
            "not from the model's name, so it is not assumed: not changed")


def _note(fmt: str, taken: Counter[tuple[str, str]], provider: str | None, hosts: Counter[str], own: Counter[str],
          by_id: Counter[str] | None = None, relays: Counter[str] | None = None,
          by_model: Counter[tuple[str, str]] | None = None) -> str:
    """The note of one format's calls whose provider was the model's name's; ``hosts``: the
    upstreams a gateway named for some of them (OpenRouter's response ``provider``), ``own``: the
    third-party hosts of open models whose own endpoint others were sent to (api.together.xyz:
    :func:`~prefixbench.simulator.providers.hosts.host_at`), which the note names rather than
    saying nothing told who served them; ``by_id``: the hosts the model's own id names
    (``accounts/fireworks/...``, a ``:groq`` router suffix), which the note names likewise;
    ``relays``: per Claude model, the calls whose provider (unknown) their cache writes, unsplit by
    TTL, decided and not their name (a relay's: Claude Code's reader), said apart; ``by_model``: the
    calls a ``FORMAT:MODEL=PROVIDER`` item set, by model and provider."""
    by_id, relays = by_id or Counter(), relays or Counter()
    set_by_model = "".join(f"; {model}'s {n:,} call(s) set to {name} by --assume-provider {fmt}:{model}={name}"
                           for (model, name), n in sorted((by_model or Counter()).items()))
    relayed = ""
    if relays:
        relayed = (f"{sum(relays.values()):,} {fmt} call(s) of Claude models "
                   f"({', '.join(f'{model}: {n:,}' for model, n in sorted(relays.items()))}) taken as an unknown "
                   "provider's (a relay's) from their cache writes, which no call of the model in its file split by TTL "
                   "as Anthropic's API does (the file's note says), not from their names, which are Anthropic's")
    if not taken:
        if provider is None:
            return f"assumed: {relayed}{set_by_model}; name the server with --assume-provider {fmt}:MODEL=PROVIDER"
        return f"assumed: {relayed}, then set to {provider} by --assume-provider{set_by_model}"
    relayed = f"; {relayed}" if relayed else ""
    calls = sum(taken.values())
    by_provider: Counter[str] = Counter()
    for (name, _), n in taken.items():
        by_provider[name] += n
    split = ", ".join(f"{name}: {n:,}" for name, n in sorted(by_provider.items()))
    models = ", ".join(sorted({model for _, model in taken}))
    named = ", ".join(f"{host}: {n:,}" for host, n in sorted(hosts.items()))
    at = ", ".join(f"{host}: {n:,}" for host, n in sorted(own.items()))
    if sum(own.values()) == calls:
        said = (f"{calls:,} {fmt} call(s) sent to the endpoint of a third-party host of open models ({at}), not "
                f"their model's maker's: their provider, whose cache rules model the host's, was taken from the model's "
                f"name ({split}; models {models})")
    elif own:
        through = (f"{sum(hosts.values()):,} through a gateway that names the host that served them: {named}; " if hosts else "")
        said = (f"{calls:,} {fmt} call(s) name no provider's own endpoint ({through}{sum(own.values()):,} sent to the "
                f"endpoint of a third-party host of open models: {at}): their provider was taken from the model's name "
                f"({split}; models {models})")
    elif sum(by_id.values()) == calls:
        ids = ", ".join(f"{host}: {n:,}" for host, n in sorted(by_id.items()))
        said = (f"{calls:,} {fmt} call(s) whose model id names the host that served them ({ids}) name no endpoint of "
                f"that host's own: their provider, whose cache rules model the host's, was taken from the model's name "
                f"({split}; models {models})")
    elif sum(hosts.values()) == calls:
        said = (f"{calls:,} {fmt} call(s) through a gateway that names the host that served them ({named}) name no "
                f"endpoint of that host's own: their provider, whose cache rules model the host's, was taken from the "
                f"model's name ({split}; models {models})")
    else:
        told = ([f"{sum(hosts.values()):,} of them through a gateway that names the host that served them: {named}"] if hosts else [])
        told += ([f"{sum(by_id.values()):,} whose model id names it: "
                  + ", ".join(f"{host}: {n:,}" for host, n in sorted(by_id.items()))] if by_id else [])
        through = f" ({'; '.join(told)})" if told else ""
        said = (f"{calls:,} {fmt} call(s) name no endpoint that tells who served them{through}: their provider was taken "
                f"from the model's name ({split}; models {models})")
    if provider is None:
        return (f"assumed: {said}{relayed}{set_by_model}; another server's cache behaves otherwise: name it with "
                f"--assume-provider {fmt}=PROVIDER")
    return f"assumed: {said}{relayed}, then set to {provider} by --assume-provider{set_by_model}"
