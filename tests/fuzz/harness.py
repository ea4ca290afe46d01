"""What every fuzz case checks, and the inputs it is built from.

A case writes one input file and runs the command line on it in-process
(:func:`prefixbench.reports.cli.run`, the path the console script takes). It must end in
exit 0, or exit 2 with one line ``prefixbench: error: ...`` on stderr, within the time bound;
any exception that escapes is a crash, and running past the bound is a hang. A :class:`Tally`
counts the outcomes and timings, so the long run (``--fuzz``) can report its figures.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from prefixbench.reports.cli import run

#: Examples per property: the default run keeps the suite fast; ``--fuzz`` is the long run.
DEFAULT_EXAMPLES = 25
LONG_IMPORTER_EXAMPLES = 10_000
LONG_CONFIG_EXAMPLES = 2_000


class Hang(BaseException):
    """A case ran past its time bound (BaseException: nothing under test may swallow it)."""


def fuzz_settings(examples: int) -> settings:
    """Hypothesis settings of a fuzz property: no deadline (the harness has its own bound)."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=examples <= DEFAULT_EXAMPLES,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


@dataclass
class Tally:
    """Outcomes of a fuzz property's cases."""

    name: str
    bound_s: float
    outcomes: Counter[str] = field(default_factory=Counter)
    slowest_s: float = 0.0
    #: Refusal messages with the place and numbers taken out, to see what the cases exercised.
    refusals: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)

    def check(self, argv: Sequence[str], gate: bool = False, echo: bool = False) -> int:
        """Run the command line once; assert a clean ending within the bound (``gate``: exit 1,
        a gate that failed, is a clean ending too; ``echo``: what it printed is passed on to the
        caller's stdout and stderr, to compare two runs)."""
        out, err = io.StringIO(), io.StringIO()
        begin = time.monotonic()
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, self.bound_s)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = run(list(argv))
        except Hang:
            self.outcomes["hang"] += 1
            raise AssertionError(f"hang: {' '.join(argv)} ran past {self.bound_s:.0f} s") from None
        except BaseException:
            self.outcomes["crash"] += 1
            raise
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        self.slowest_s = max(self.slowest_s, time.monotonic() - begin)
        text = err.getvalue()
        if echo:
            print(out.getvalue(), end="")
            print(text, end="", file=sys.stderr)
        if status == 2:
            lines = [line for line in text.splitlines() if not line.startswith("prefixbench: warning:")]
            assert len(lines) == 1 and lines[0].startswith("prefixbench: error: "), text
            assert "Traceback" not in text, text
            self.refusals[_kind(lines[0])] += 1
        else:
            assert status == 0 or (gate and status == 1), (status, text)
        self.outcomes[f"exit {status}"] += 1
        return status

    def report(self) -> str:
        """``chat-completions: 10,000 cases (6,000 exit 0, 4,000 exit 2), 0 crashes, 0 hangs, ...``;
        the exit-1 cases (a gate that failed: ``check(..., gate=True)``) between, where there are any."""
        cases = sum(self.outcomes.values())
        failed = f"{self.outcomes['exit 1']:,} exit 1, " if self.outcomes["exit 1"] else ""
        line = (
            f"fuzz {self.name}: {cases:,} cases ({self.outcomes['exit 0']:,} exit 0, {failed}{self.outcomes['exit 2']:,} exit 2), "
            f"{self.outcomes['crash']} crashes, {self.outcomes['hang']} hangs, "
            f"{time.monotonic() - self.started:.1f} s, slowest case {self.slowest_s:.2f} s (bound {self.bound_s:.0f} s)"
        )
        print(line)
        for kind, n in self.refusals.most_common(8):
            print(f"    {n:6,}  {kind}")
        return line


def _kind(line: str) -> str:
    body = line.removeprefix("prefixbench: error: ")
    body = re.sub(r"^\S*?:\d+: |^\S+: ", "", body)
    return re.sub(r"\d+", "N", body)[:60]


def _on_alarm(signum: int, frame: object) -> None:
    raise Hang


# --- values --------------------------------------------------------------------------------

#: Strings that broke an importer once, or sit on a boundary.
NASTY_TEXT = ("", " ", "\ud800", "a\udfffb", "\u2028", "\u2029", "\u0085", "\x00", "\ufeff", "é" * 3, "x" * 300,
              "\u00b2", "1" * 5000)  # a digit to str.isdigit that int() refuses; more digits than int() takes
#: Raw JSON text spliced into inputs by the mutator.
NASTY_TOKENS = (
    b'"\\ud800"', b'"\\udc00x"', b"1e308", b"-1e308", b"1e999", b"NaN", b"-Infinity", b"9" * 4400, b"[" * 1200,
    b"{" * 300, b"\xff", b"\xc3", b"\xe2\x80\xa8", b"\n", b"\r\n", b"{}", b"[]", b"null", b'""', b"-1", b"0",
    b"true", b'"x"', b"5", b"0.5", b'"500"', b"\xef\xbb\xbf", b"\x00",
)

clean_texts = st.one_of(st.sampled_from(("hi", "ls", "c1", "a b", "x" * 300)), st.text(max_size=20))
#: Text a client would send; nasty text (lone surrogates...) comes in through :func:`edited`.
texts = clean_texts
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from((0, -1, 1, 2**31, 2**63, 10**200)),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(clean_texts, inner, max_size=4)),
    max_leaves=12,
)


NASTY_SCALARS = (*NASTY_TEXT, None, True, False, 0, -1, 2**63, 10**20, 10**400, 10**4000, 1e308, -1e308, float("nan"), float("inf"), [], {})


@st.composite
def edited(draw: Callable, base: st.SearchStrategy, max_edits: int = 2) -> object:
    """A document from ``base`` with 0 to ``max_edits`` structural edits, each at a random
    place: the value replaced by any JSON value or a nasty scalar, or the key deleted."""
    doc = copy.deepcopy(draw(base))
    for _ in range(draw(st.integers(0, max_edits))):
        # Deepest places first: Hypothesis leans towards the first choices of a list.
        paths = list(reversed(_paths(doc)))[:-1]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(("nasty", "any", "nasty", "delete")))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if op == "delete":
            del parent[last]
        else:
            parent[last] = draw(json_values) if op == "any" else draw(st.sampled_from(NASTY_SCALARS))
    return doc


def _paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for idx, value in enumerate(doc):
            out += _paths(value, (*prefix, idx))
    return out


def weighted(*choices: tuple[st.SearchStrategy, int]) -> st.SearchStrategy:
    """One of the strategies, each drawn about ``weight`` times in ``sum(weights)``."""
    pool = [strategy for strategy, weight in choices for _ in range(weight)]
    return st.sampled_from(range(len(pool))).flatmap(lambda idx: pool[idx])


def optional_keys(required: dict[str, st.SearchStrategy], optional: dict[str, st.SearchStrategy]) -> st.SearchStrategy:
    """An object with every required key and any subset of the optional ones."""
    return st.fixed_dictionaries(required, optional=optional)


def to_json_line(value: object) -> bytes:
    """One JSON line; NaN/inf and lone surrogates are written as JSON text would carry them."""
    return json.dumps(value, ensure_ascii=True, allow_nan=True).encode()


def array_or_lines(docs: list, shape: str) -> bytes:
    """``docs`` as one pretty-printed JSON array where ``shape`` is ``"array"``, else as JSON lines."""
    return json.dumps(docs, indent=2).encode() if shape == "array" else b"\n".join(map(to_json_line, docs))


def seed_or_edited(seed: bytes, docs: list, written: Callable[[list], bytes]) -> st.SearchStrategy:
    """A file for an export reader: ``seed`` mutated byte-wise, or 1 to 4 of ``docs`` (the seed's
    records), each edited, written out by ``written``."""
    return st.one_of(mutated(seed), st.lists(edited(st.sampled_from(docs)), min_size=1, max_size=4).map(written))


def check_audit(tally: Tally, path: Path, raw: bytes, reader: str, explicit: bool) -> None:
    """Write ``raw`` to ``path`` and audit it (quiet, JSON out), naming the reader with
    ``--input reader`` where ``explicit`` (else it is detected); ``tally`` checks the outcome."""
    argv = ["audit", str(write(path, raw)), "--quiet", "--format", "json"]
    if explicit:
        argv += ["--input", reader]
    tally.check(argv)


# --- mutation ------------------------------------------------------------------------------


@st.composite
def mutated(draw: Callable, seed: bytes) -> bytes:
    """``seed`` with 1-4 byte-level edits: splice a nasty token, delete or duplicate a span, cut."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(("insert", "replace", "delete", "duplicate", "truncate", "flip")))
        pos = draw(st.integers(0, max(0, len(data))))
        span = draw(st.integers(1, 40))
        match op:
            case "insert":
                data[pos:pos] = draw(st.sampled_from(NASTY_TOKENS))
            case "replace":
                data[pos : pos + span] = draw(st.sampled_from(NASTY_TOKENS))
            case "delete":
                del data[pos : pos + span]
            case "duplicate":
                data[pos:pos] = data[pos : pos + span]
            case "truncate":
                del data[pos:]
            case "flip":
                if pos < len(data):
                    data[pos] ^= 1 << draw(st.integers(0, 7))
    return bytes(data)


# --- a minimal TOML writer (tomllib reads only) ---------------------------------------------


def to_toml(config: dict[str, object]) -> str:
    """``{engine: {key: value}}`` as TOML tables; values TOML cannot hold are skipped."""
    lines = []
    for table, section in config.items():
        lines.append(f"[{json.dumps(str(table))}]")
        if isinstance(section, dict):
            for key, value in section.items():
                text = _toml_value(value)
                if text is not None:
                    lines.append(f"{json.dumps(str(key))} = {text}")
    return "\n".join(lines) + "\n"


def _toml_value(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        items = [_toml_value(v) for v in value]
        return "[" + ", ".join(i for i in items if i is not None) + "]"
    if isinstance(value, dict):
        items = [f"{json.dumps(str(k))} = {t}" for k, v in value.items() if (t := _toml_value(v)) is not None]
        return "{" + ", ".join(items) + "}"
    return None


def write(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    return path


def loaded_or_refused(lines: Sequence[object], name: str) -> list | None:
    """The requests ``load_trace`` reads from ``lines`` written as a JSON-lines file ``name``, or
    None where it refused the file in one line that names it (anything else fails the case)."""
    import tempfile

    from prefixbench.simulator.errors import UserError
    from prefixbench.workloads.audit.core import load_trace

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        try:
            requests, _ = load_trace([path])
        except UserError as error:
            assert "\n" not in str(error) and str(error).startswith(str(path))
            return None
    return list(requests)


#: Any JSON value (small), and a JSON-lines record: an object of a few such values (the torn-tail
#: and run-together-records properties write logs of these).
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
RECORD = st.dictionaries(st.text(max_size=8), JSON, min_size=1, max_size=5)
