"""Fuzz: JSON documents (one object, one array) that zero bytes end, as a crash while the agent
wrote them leaves them: every document reader reads one whole before the zeros or refuses it in
one line (exit 2), never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.reports.cli import run
from tests.fuzz.harness import Tally, fuzz_settings, mutated, write

FIXTURES = Path(__file__).parent / "fixtures"
#: The document readers that go through the shared document path, each by a file of its own:
#: a Cline task's ui_messages.json (an array), a Gemini CLI session, an ``opencode export``, a
#: mini-swe-agent trajectory (a pretty-printed object each).
DOCUMENTS = {
    "cline": FIXTURES / "cline" / "claude-dev" / "ui_messages.json",
    "gemini-cli": FIXTURES / "gemini-cli.json",
    "opencode": FIXTURES / "opencode.json",
    "swe-agent": FIXTURES / "swe-agent.json",
}


def _seeds() -> list[tuple[str, bytes]]:
    """Each document as written (pretty-printed) and on one line (as a Cline task writes it)."""
    seeds = []
    for name, path in DOCUMENTS.items():
        data = path.read_bytes()
        seeds += [(name, data), (name, json.dumps(json.loads(data)).encode())]
    return seeds


@st.composite
def _zero_filled(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed``, maybe edited (:func:`mutated`), its end from a drawn place on given over to zero
    bytes; now and then a byte after them (binary data, not a tail)."""
    data = draw(mutated(seed)) if draw(st.booleans()) else seed
    cut = draw(st.one_of(st.just(len(data)), st.integers(0, len(data))))
    tail = b"\0" * draw(st.integers(1, 5_000))
    after = draw(st.sampled_from((b"", b"", b"", b" ", b"\n", b"x", b"\0\n")))
    return data[:cut] + tail + after


def test_zero_filled_documents_are_read_or_refused_in_one_line() -> None:
    """Fuzz: a document of each reader that zeros end (whole, cut anywhere, edited): exit 0 or
    one line with exit 2; whole and unedited, the same calls as without the zeros."""
    tally = Tally("zero-filled documents", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-zero-documents-"))
    seeds = _seeds()

    @fuzz_settings(40)
    @given(seed=st.sampled_from(seeds), data=st.data())
    def case(seed: tuple[str, bytes], data: st.DataObject) -> None:
        name, text = seed
        shutil.rmtree(folder / "task", ignore_errors=True)
        (folder / "task").mkdir()
        path = write(folder / "task" / DOCUMENTS[name].name, data.draw(_zero_filled(text)))
        tally.check(["audit", str(folder / "task" if name == "cline" else path), "--quiet"])

    case()
    assert tally.outcomes["crash"] == 0


def test_a_whole_document_before_zeros_gives_the_calls_it_gives_without_them(tmp_path: Path) -> None:
    """Each reader's document, pretty-printed or on one line, zeros after it: exit 0 and the same
    audit as without them (the warning apart)."""
    for name, text in _seeds():
        folder = tmp_path / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        path = write(folder / DOCUMENTS[name].name, text)
        target = str(folder if name == "cline" else path)
        clean = json.loads(_captured(target))
        write(path, text + b"\0" * 1_000)
        zeros = json.loads(_captured(target))
        assert [f["requests"] for f in zeros["files"]] == [f["requests"] for f in clean["files"]], name
        assert [f["skipped"] for f in zeros["files"]] == [f["skipped"] for f in clean["files"]], name
        assert zeros["files"][0]["notes"][-1].endswith("the zeros are not read"), name


def _captured(target: str) -> str:
    """audit's JSON of ``target`` (exit 0 asserted)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(["audit", target, "--quiet", "--format", "json"])
    assert status == 0, err.getvalue()
    return out.getvalue()
