"""Aider's chat history: any history aider could write reads to its Tokens lines' sums (as
printed), and any mutation of one is read or refused in one line naming the file, never a crash."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.aider import OUTSIDE_BEFORE, doubled
from prefixbench.workloads.logs.formats.base import ImportContext

from tests.fuzz.harness import Tally, fuzz_settings, weighted, write


def _examples(default: int) -> int:
    import os

    return int(os.environ.get("PREFIXBENCH_FUZZ_EXAMPLES") or default)


def printed(count: int, exact: bool) -> str:
    """A count as aider prints it: with commas before 0.51, else rounded as its format_tokens does."""
    if exact:
        return f"{count:,}"
    if count < 1000:
        return str(count)
    if count < 10000:
        return f"{count / 1000:.1f}k"
    return f"{round(count / 1000)}k"


def parsed(text: str) -> int:
    return round(float(text[:-1]) * 1000) if text.endswith("k") else int(text.replace(",", ""))


COUNT = st.integers(0, 300_000)
CALL = st.tuples(COUNT, COUNT, COUNT, st.integers(0, 20_000))  # uncached, write, hit, received
RUN = st.tuples(
    st.sampled_from([None, "0.47.0", "0.62.0", "0.75.1", "0.86.1"]),  # the version announced
    st.sampled_from(["claude-3-5-sonnet-20240620", "deepseek/deepseek-chat", "gpt-4o", "openrouter/x/y", "gemini/gemini-2.5-pro"]),
    st.booleans(),  # exact counts (aider before 0.51)
    st.lists(CALL, min_size=0, max_size=5),
)


def history(runs: list) -> tuple[str, list[tuple[int, int, int, int, bool]]]:
    """The file, and each call's printed (sent, write, hit, received) and whether its run prints a cache count."""
    text, calls = "", []
    for n, (version, model, exact, run_calls) in enumerate(runs):
        announced = f"> Aider v{version}  \n" if version else ""
        text += f"\n# aider chat started at 2025-01-01 00:00:{n % 60:02d}\n\n{announced}> Main model: {model} with diff edit format  \n\n"
        number = tuple(int(p) for p in version.split(".")) if version else None
        twice = doubled(number, model)
        outside = number is not None and number < OUTSIDE_BEFORE  # its cache counts are outside 'sent'
        reports = not exact and any(w or h for _, w, h, _ in run_calls)
        for uncached, write, hit, received in run_calls:
            if exact:
                write = hit = 0
            parts = [f"{printed(uncached + write + hit, exact)} sent"]
            if write:
                parts.append(f"{printed(write, exact)} cache write")
            if hit:
                parts.append(f"{printed(hit, exact)} cache hit")
            parts.append(f"{printed(received, exact)} received.")
            text += f"#### do it  \n\nDone.\n\n> Tokens: {', '.join(parts)} Cost: $0.01 message, $0.02 session.  \n\n"
            calls.append((parsed(printed(uncached + write + hit, exact)), parsed(printed(write, exact)), parsed(printed(hit, exact)),
                          parsed(printed(received, exact)), reports, twice, outside))
    return text, calls


@settings(max_examples=_examples(150), deadline=None)
@given(st.lists(RUN, min_size=1, max_size=4))
def test_a_history_reads_to_its_tokens_lines_sums(runs) -> None:
    text, calls = history(runs)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ".aider.chat.history.md"
        path.write_text(text)
        assert detect_format(path) is FORMATS["aider"]
        requests, summary = import_file(path, FORMATS["aider"], ImportContext())
    assert len(requests) == summary.requests == len(calls)
    for request, (sent, write, hit, received, reports, (hit_twice, write_twice), outside) in zip(requests, calls):
        usage = request.usage
        assert usage.output == received and request.sent_ms is None
        if reports:
            prompt = sent - (hit if hit_twice else 0) - (write if write_twice else 0)  # what aider counted twice, once
            prompt += hit + write if outside else 0
            assert (usage.cache_read, usage.cache_write_5m, usage.uncached) == (hit, write, max(0, prompt - hit - write))
        else:
            assert not usage.cache_reported and usage.uncached == sent and usage.cache_read == usage.cache_write == 0


@settings(max_examples=_examples(150), deadline=None)
@given(st.lists(RUN, min_size=1, max_size=3), st.data())
def test_a_mutated_history_is_read_or_refused_in_one_line(runs, data) -> None:
    text, _ = history(runs)
    at = data.draw(st.integers(0, len(text)), label="at")
    cut = data.draw(st.integers(0, 12), label="cut")
    insert = data.draw(st.text(alphabet="0123456789k,.> #\n:xTokens", max_size=8), label="insert")
    mutated = text[:at] + insert + text[at + cut:]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "h.md"
        path.write_text(mutated)
        try:
            requests, _ = import_file(path, detect_format(path), ImportContext())
        except UserError as exc:
            message = str(exc)
            assert message.startswith(str(path)) and "\n" not in message
            return
    assert all(r.usage is not None and r.usage.prompt >= 0 for r in requests)


#: Lines aider writes (and lines shaped like them that it does not), drawn in any order: run
#: starts (dates on and off the calendar), announcements, /model and /clear, architect mode,
#: Tokens and Cost lines (rounded, exact, giant), fences holding aider's shapes, nasty text.
_STARTS = weighted(
    (st.sampled_from(["2025-01-01 00:00:00", "2024-08-20 12:30:59", "0001-01-01 00:00:00", "9999-12-31 23:59:59"]), 12),
    (st.sampled_from(["2024-13-45 99:99:99", "2024-02-30 00:00:00", "0000-00-00 00:00:00", "2024-02-29 23:59:60"]), 1),
)
_COUNTS = weighted(
    (st.integers(0, 999).map(str), 4),
    (st.integers(1, 99_999).map(lambda n: f"{n / 10:.1f}k"), 4),
    (st.integers(0, 10**7).map(lambda n: f"{n:,}"), 2),
    (st.integers(10**7, 10**13).map(lambda n: f"{n:,}"), 1),
    (st.integers(1, 10**9).map(lambda n: f"{n}k"), 1),
    (st.sampled_from(["9" * 30, "9" * 400 + "k", "0.0k", "1,000,000,000,000", "999999999999"]), 1),
)
_MODELS = st.sampled_from(["claude-3-5-sonnet-20240620", "anthropic/claude-3-opus", "deepseek/deepseek-chat", "gpt-4o",
                           "openrouter/anthropic/claude-3.5-sonnet", "gemini/gemini-2.5-pro", "x\u202e", "\u26a1"])
_TOKENS_LINES = st.one_of(
    st.builds(lambda a, b, c, d, tail: f"> Tokens: {a} sent, {b} cache write, {c} cache hit, {d} received.{tail}",
              _COUNTS, _COUNTS, _COUNTS, _COUNTS, st.sampled_from(["", " Cost: $0.01 message, $0.02 session.  ", " Cost"])),
    st.builds(lambda a, d: f"> Tokens: {a} sent, {d} received.", _COUNTS, _COUNTS),
    st.builds(lambda a, b, d: f"> Tokens: {a} sent, {b} cached, {d} received, cache costs not included.", _COUNTS, _COUNTS, _COUNTS),
)
_LINES = weighted((_TOKENS_LINES, 4), (st.one_of(
    st.builds(lambda when: f"# aider chat started at {when}", _STARTS),
    st.builds(lambda v: f"> Aider v{v}  ", st.sampled_from(["0.47.0", "0.50.2-dev", "0.62.0", "0.75.1", "0.86.1", "9" * 30 + ".0.0"])),
    st.builds(lambda m, f: f"> Main model: {m} with {f} edit format, infinite output  ", _MODELS,
              st.sampled_from(["diff", "whole", "architect", "\u267e\ufe0f diff"])),
    st.builds(lambda m: f"> Model: {m} with whole edit format  ", _MODELS),
    st.builds(lambda m: f"> Models: {m} with diff edit format, weak model gpt-3.5-turbo  ", _MODELS),
    st.builds(lambda m: f"> Editor model: {m} with editor-diff edit format  ", _MODELS),
    st.builds(lambda m: f"#### /model {m}", _MODELS),
    st.sampled_from(["#### /clear", "#### /reset", "#### /ask why?", "#### /architect do it", "#### ", "#### hi  ",
                     "```", "```python", "x = 1", "", "Cost: $0.01 message, $0.02 session.", "> Tokens: ", "> Tokens:",
                     "> Weak model: gpt-4o-mini", "> Git repo: .git with 12 files", "\ufeff", "\x00", "\u2028", "\r"]),
    st.text(max_size=12),
), 6))


def test_any_sequence_of_aider_s_lines_is_read_or_refused_in_one_line(importer_examples) -> None:
    tally = Tally("audit", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-aider-lines-"))

    @fuzz_settings(importer_examples)
    @given(lines=st.lists(_LINES, min_size=1, max_size=30), last=_TOKENS_LINES, first=_STARTS, ending=st.sampled_from(["\n", "\r\n", ""]), bom=st.booleans(),
           extra=st.sampled_from([(), ("--what-if", "pin-model"), ("--assume-model", "gpt-4o"), ("--input", "aider"),
                                  ("--model-alias", "gpt-4o=claude-3-5-sonnet-20240620")]))
    def case(lines: list[str], last: str, first: str, ending: str, bom: bool, extra: tuple[str, ...]) -> None:
        text = ("\ufeff" if bom else "") + "\n".join([f"# aider chat started at {first}", *lines, last]).replace("\n", ending or "\n") + ending
        path = write(folder / ".aider.chat.history.md", text)
        tally.check(["audit", str(path), "--quiet", "--format", "json", *extra])

    case()
    tally.report()


def _variant(text: str, how: str) -> bytes:
    import gzip

    match how:
        case "crlf":
            return text.replace("\n", "\r\n").encode()
        case "bom":
            return b"\xef\xbb\xbf" + text.encode()
        case "utf-16":
            return text.encode("utf-16")
        case "gzip":
            return gzip.compress(text.encode())
        case _:  # no last newline
            return text.rstrip("\n").encode()


@settings(max_examples=_examples(100), deadline=None)
@given(st.lists(RUN, min_size=1, max_size=3), st.sampled_from(["crlf", "bom", "utf-16", "gzip", "cut"]), st.booleans())
def test_a_history_reads_the_same_in_crlf_with_a_byte_order_mark_compressed_or_without_its_last_newline(runs, how, bare) -> None:
    text, _ = history(runs)
    text = text.lstrip("\n") if bare else text  # (the first run's line first, right after a mark)
    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / ".aider.chat.history.md"
        plain.write_text(text)
        other = Path(folder) / f"other.chat.history.md{'.gz' if how == 'gzip' else ''}"
        other.write_bytes(_variant(text, how))
        assert detect_format(other) is FORMATS["aider"]
        expected, summary = import_file(plain, FORMATS["aider"], ImportContext())
        got, other_summary = import_file(other, FORMATS["aider"], ImportContext())
    assert [(r.line, r.model, r.usage, r.lane) for r in got] == [(r.line, r.model, r.usage, r.lane) for r in expected]
    assert other_summary.skipped == summary.skipped
