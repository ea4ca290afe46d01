"""Nothing outside simulator/providers/ branches on a provider's name.

An AST scan of the four packages: a string literal naming a provider (or a provider's model
family, ``claude``, ``gpt``) fails the test when it is compared (``==``, ``!=``), tested for
membership (``x in ("openai", "deepseek")``), matched (``case "anthropic":``) or used as a
substring test (``model.startswith("claude")``, ``"deepseek" in url``). Plain labels (a dict
key, a keyword argument, a message), data files, docs and help text are not comparisons and
pass. Code that needs a provider's behaviour reads its rule object
(:mod:`prefixbench.simulator.providers`).

The same scan holds a missing model to ``trace.NO_MODEL``: no reader writes or compares the
bare ``"unknown"`` as a model; and a provider no rules are known for to the name of those rules,
``providers.UNKNOWN.name``: nothing outside the providers package compares a provider with the
bare ``"unknown"`` (the audit's loss class ``"unknown"`` is neither and passes).
"""

from __future__ import annotations

import ast
from pathlib import Path


from prefixbench.simulator.providers import PROVIDERS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simulator", "kernel", "workloads", "reports")
ALLOWED = ROOT / "simulator" / "providers"
#: Provider names and the model-family prefixes that stand for them.
WORDS = frozenset(PROVIDERS) | {"claude", "gpt"}


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _names_provider(text: str) -> bool:
    return text.lower() in WORDS


def _mentions_provider(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in WORDS)


def _literals(node: ast.AST) -> list[str]:
    """The string literals of a constant or of a tuple/list/set of them."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [t for t in map(_literal, node.elts) if t is not None]
    text = _literal(node)
    return [] if text is None else [text]


def _compare(node: ast.Compare) -> list[str]:
    found = []
    operands = [node.left, *node.comparators]
    for op, left, right in zip(node.ops, operands, operands[1:]):
        if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            found += [t for t in _literals(left) + _literals(right) if _names_provider(t)]
        elif isinstance(op, (ast.In, ast.NotIn)):
            # "x in (literals)" is a membership test; '"word" in text' a substring test.
            found += [t for t in _literals(right) if _names_provider(t)]
            text = _literal(left)
            if text is not None and _mentions_provider(text):
                found.append(text)
    return found


def _call(node: ast.Call) -> list[str]:
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("startswith", "endswith", "find", "index", "count")):
        return []
    return [t for arg in node.args for t in _literals(arg) if _mentions_provider(t)]


def _cases(node: ast.Match) -> list[str]:
    found = []
    for case in node.cases:
        for pattern in ast.walk(case.pattern):
            if isinstance(pattern, ast.MatchValue):
                found += [t for t in _literals(pattern.value) if _names_provider(t)]
    return found


def violations(source: str, name: str = "<source>") -> list[str]:
    """``file:line: 'literal'`` for every provider-name literal used as a test in ``source``."""
    out = []
    for node in ast.walk(ast.parse(source, name)):
        match node:
            case ast.Compare():
                found = _compare(node)
            case ast.Call():
                found = _call(node)
            case ast.Match():
                found = _cases(node)
            case _:
                found = []
        out += [f"{name}:{node.lineno}: {text!r}" for text in found]
    return out


def _sources() -> list[Path]:
    files = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    return [p for p in files if ALLOWED not in p.parents]


def test_no_provider_name_is_compared_outside_the_providers_package():
    found = [v for path in _sources() for v in violations(path.read_text(), path.relative_to(ROOT).as_posix())]
    assert not found, "provider names compared outside simulator/providers/ (read the rule object instead):\n" + "\n".join(found)


def test_a_planted_comparison_fails():
    planted = '''
if r.provider == "anthropic":
    pass
if provider in ("openai", "deepseek"):
    pass
if model.startswith("claude"):
    pass
if "deepseek" in url.lower():
    pass
match name:
    case "vllm":
        pass
if "GPT" != family:
    pass
'''
    found = sorted(violations(planted), key=lambda v: int(v.split(":")[1]))
    assert [v.split(":", 1)[1] for v in found] == [
        "2: 'anthropic'", "4: 'openai'", "4: 'deepseek'", "6: 'claude'", "8: 'deepseek'", "10: 'vllm'", "13: 'GPT'",
    ]


def test_labels_and_other_names_pass():
    clean = '''
CACHE_MODELS = ("byte-exact", "anthropic", "openai")
label = {"anthropic": 1}
make_cache("deepseek")
if binding == "deepseek-official":
    pass
if fmt == "anthropic-capture":
    pass
raise UserError("openai: mode must be ...")
'''
    assert violations(clean) == []


def test_the_formats_name_only_providers_of_the_table():
    # Every provider a log format reads from its fixture has rules; the rest are an engine trace
    # or an unknown endpoint, which fall back to the UNKNOWN rules.
    from pathlib import Path

    from prefixbench.workloads.logs.formats import FORMATS, import_file
    from prefixbench.workloads.logs.formats.base import ImportContext

    fixtures = Path(__file__).parent / "unit" / "logs" / "fixtures"
    named = set()
    for name, fmt in FORMATS.items():
        (fixture,) = fixtures.glob(f"{name}.*")
        requests, _ = import_file(fixture, fmt, ImportContext())
        named |= {r.provider for r in requests}
    assert named - {"engine", "unknown"} <= set(PROVIDERS), named
    assert named & set(PROVIDERS)  # the fixtures do name providers


#: The literal a reader once wrote for "the log names no model"; ``trace.NO_MODEL`` says it now.
NO_MODEL_LITERAL = "unknown"
#: Where the constant is defined (the one place the literal stands for a model).
NO_MODEL_HOME = ROOT / "workloads" / "logs" / "trace.py"


def _is_model(node: ast.AST) -> bool:
    """A name for a model: ``model``, ``this_model``, ``lane.model``, ``r.model``."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lower().endswith("model")


def _yields_literal(node: ast.AST) -> bool:
    """Whether ``node`` can evaluate to the bare literal: itself, a branch of ``or``/``if else``,
    an argument of a call (``str(x or "unknown")``, ``next(gen, "unknown")``) or the receiver of a
    method (``(x or "unknown").rsplit(...)``). Conditions and keyword arguments are not followed,
    so ``model = pick(provider == "unknown")`` passes."""
    match node:
        case ast.Constant(value=str() as text):
            return text == NO_MODEL_LITERAL
        case ast.BoolOp(values=values):
            return any(map(_yields_literal, values))
        case ast.IfExp(body=body, orelse=orelse):
            return _yields_literal(body) or _yields_literal(orelse)
        case ast.Call(func=func, args=args):
            receiver = [func.value] if isinstance(func, ast.Attribute) else []
            return any(map(_yields_literal, [*receiver, *args]))
        case ast.Subscript(value=value):
            return _yields_literal(value)
    return False


def _pairs(target: ast.AST, value: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """Target and value, element by element for ``a, b = x, y``."""
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return [p for t, v in zip(target.elts, value.elts) for p in _pairs(t, v)]
    return [(target, value)]


def model_literals(source: str, name: str = "<source>") -> list[str]:
    """``file:line`` for every place ``source`` writes the bare ``"unknown"`` as a model: assigned
    to a model name (``model = x or "unknown"``), passed as ``model=``, returned by a function
    named for a model (``def _model``) or compared with a model (``r.model == "unknown"``). A
    provider, a response id or a format that is ``"unknown"`` is not a model and passes."""
    out = []
    for node in ast.walk(ast.parse(source, name)):
        match node:
            case ast.Compare(left=left, comparators=comparators):
                operands = [left, *comparators]
                hit = any(_is_model(a) and _literal(b) == NO_MODEL_LITERAL or _is_model(b) and _literal(a) == NO_MODEL_LITERAL
                          for a, b in zip(operands, operands[1:]))
            case _:
                hit = _writes_literal(node, _is_model, lambda word: word.endswith("model"))
        if hit:
            out.append(f"{name}:{node.lineno}")
    return out


def _writes_literal(node: ast.AST, is_name, names) -> bool:
    """Whether ``node`` writes the bare ``"unknown"`` to what ``is_name`` tells (a model, a
    provider): assigned to it, passed as a keyword whose lower-cased name ``names`` accepts, or
    returned by a function whose lower-cased name it accepts."""
    match node:
        case ast.Assign(targets=targets, value=value):
            return any(is_name(t) and _yields_literal(v) for target in targets for t, v in _pairs(target, value))
        case ast.AnnAssign(target=target, value=value) if value is not None:
            return is_name(target) and _yields_literal(value)
        case ast.keyword(arg=arg, value=value):
            return arg is not None and names(arg.lower()) and _yields_literal(value)
        case ast.FunctionDef(name=fn):
            return names(fn.lower()) and any(
                isinstance(r, ast.Return) and r.value is not None and _yields_literal(r.value) for r in ast.walk(node))
    return False


def test_no_reader_writes_the_bare_literal_for_a_missing_model():
    found = [v for path in _sources() if path != NO_MODEL_HOME
             for v in model_literals(path.read_text(), path.relative_to(ROOT).as_posix())]
    assert not found, "a missing model is trace.NO_MODEL, not the literal 'unknown':\n" + "\n".join(found)


def test_a_planted_model_literal_fails():
    planted = '''
model = row.get("model") or "unknown"
self.model = "unknown"
lane.model = str(named or lane.model or "unknown")
emit(model=call.model.rsplit("/", 1)[-1] or "unknown")
model, pending = "unknown", None
if r.model != "unknown":
    pass
def _model(value):
    return value if value else "unknown"
this_model = zen_model(provider, str(m or "unknown"))
'''
    assert [int(v.split(":")[1]) for v in sorted(model_literals(planted), key=lambda v: int(v.split(":")[1]))] == [
        2, 3, 4, 5, 6, 7, 9, 11]


def test_an_unknown_provider_or_id_is_not_a_model():
    clean = '''
provider = rules.name if rules is not None else "unknown"
emit(provider="unknown", model=NO_MODEL)
if r.provider == "unknown" and r.model in served:
    pass
key = rid if rid != "unknown" else None
model, provider = NO_MODEL, "unknown"
model = pick(provider == "unknown")
def _provider(info):
    return "unknown"
'''
    assert model_literals(clean) == []


def _is_provider(node: ast.AST) -> bool:
    """A name for a provider: ``provider``, ``r.provider``, ``ev.r.provider``."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.lower().endswith("provider")


def provider_unknown_literals(source: str, name: str = "<source>") -> list[str]:
    """``file:line`` for every place ``source`` compares a provider with the bare ``"unknown"``
    (``==``, ``!=``, or membership in a literal tuple, list or set) instead of
    ``providers.UNKNOWN.name``."""
    out = []
    for node in ast.walk(ast.parse(source, name)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for op, a, b in zip(node.ops, operands, operands[1:]):
            if isinstance(op, (ast.Eq, ast.NotEq)):
                hit = (_is_provider(a) and _literal(b) == NO_MODEL_LITERAL
                       or _is_provider(b) and _literal(a) == NO_MODEL_LITERAL)
            elif isinstance(op, (ast.In, ast.NotIn)):
                hit = _is_provider(a) and NO_MODEL_LITERAL in _literals(b)
            else:
                hit = False
            if hit:
                out.append(f"{name}:{node.lineno}")
                break
    return out


def _assert_no_provider_literal(check) -> None:
    """Every source ``check`` (a scan of one source text for the bare ``"unknown"`` as a
    provider) passes, or the places it found, one a line."""
    found = [v for path in _sources() for v in check(path.read_text(), path.relative_to(ROOT).as_posix())]
    assert not found, "a provider without rules is providers.UNKNOWN.name, not the literal 'unknown':\n" + "\n".join(found)


def test_no_code_compares_a_provider_with_the_bare_literal():
    _assert_no_provider_literal(provider_unknown_literals)


def test_a_planted_provider_literal_fails_and_other_unknowns_pass():
    planted = '''
if ev.r.provider == "unknown":
    pass
if "unknown" != provider:
    pass
if r.provider in ("unknown", "engine"):
    pass
if r.provider == UNKNOWN.name:
    pass
if loss_class == "unknown" or found == "unknown":
    pass
if r.model == NO_MODEL and rid != "unknown":
    pass
'''
    assert [int(v.split(":")[1]) for v in provider_unknown_literals(planted)] == [2, 4, 6]


def provider_literal_writes(source: str, name: str = "<source>") -> list[str]:
    """``file:line`` for every place ``source`` writes the bare ``"unknown"`` as a provider, as
    :func:`model_literals` finds a model's: assigned to a provider name (``provider = x or
    "unknown"``), passed as ``provider=``, or returned by a function named for a provider (``def
    _provider``, ``def provider_of``), instead of ``providers.UNKNOWN.name``. A model, a response
    id or a loss class that is ``"unknown"`` is not a provider and passes."""
    # A keyword ends with "provider"; a function has it anywhere in its name (``provider_of``).
    return [f"{name}:{node.lineno}" for node in ast.walk(ast.parse(source, name))
            if (_writes_literal(node, _is_provider, lambda word: word.endswith("provider"))
                if isinstance(node, ast.keyword) else
                _writes_literal(node, _is_provider, lambda word: "provider" in word))]


def test_no_reader_writes_the_bare_literal_for_a_provider_without_rules():
    _assert_no_provider_literal(provider_literal_writes)


def test_a_planted_provider_write_fails_and_other_unknowns_pass():
    planted = '''
provider = str(call.get("provider") or "unknown")
emit(provider=rules.name if rules is not None else "unknown")
r.provider = table.get(name, "unknown")
def provider_of(model):
    return "unknown"
def _provider(info):
    if info:
        return info["id"]
    return "unknown"
model, provider = NO_MODEL, "unknown"
provider = rules.name if rules is not None else UNKNOWN.name
emit(provider=UNKNOWN.name, model=NO_MODEL)
loss_class = "unknown"
key = rid if rid != "unknown" else None
provider = pick(model == "unknown")
def _model(value):
    return "unknown"
'''
    assert sorted(int(v.split(":")[1]) for v in provider_literal_writes(planted)) == [2, 3, 4, 5, 7, 11]
