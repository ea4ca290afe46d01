"""Compressed logs with damaged bytes: a result or one clear line, never a traceback."""

from __future__ import annotations

import bz2
import gzip
import lzma
import tempfile
from pathlib import Path

import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, fuzz_settings, mutated, write
from tests.fuzz.test_fuzz_audit import SEED_BYTES

PACKERS = (gzip.compress, bz2.compress, lzma.compress, zstandard.ZstdCompressor().compress,
           # skippable frames around the frame (pzstd writes one before each frame)
           lambda data: b"\x50\x2a\x4d\x18\x00\x00\x00\x00" + zstandard.ZstdCompressor().compress(data) + b"\x5f\x2a\x4d\x18\x01\x00\x00\x00x")


def test_damaged_compressed_logs_end_cleanly(importer_examples):
    tally = Tally("compressed", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-compressed-"))
    path = folder / "log.jsonl.gz"
    formats = sorted(SEED_BYTES)

    @fuzz_settings(importer_examples)
    @given(fmt=st.sampled_from(formats), packer=st.sampled_from(PACKERS), data=st.data())
    def case(fmt: str, packer, data: st.DataObject) -> None:
        raw = data.draw(mutated(packer(SEED_BYTES[fmt])))
        tally.check(["audit", str(write(path, raw)), "--quiet", "--format", "json"])

    case()
    tally.report()


def test_damaged_utf16_logs_end_cleanly(importer_examples):
    # A log saved as UTF-16 with a byte-order mark (Windows PowerShell 5's ``>``) is read as its
    # UTF-8 copy: damaged, mutated before or after the encoding, it ends in a result or one line.
    tally = Tally("utf-16", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-utf16-"))
    path = folder / "log.jsonl"
    formats = sorted(SEED_BYTES)

    @fuzz_settings(importer_examples)
    @given(fmt=st.sampled_from(formats), codec=st.sampled_from(("utf-16", "utf-16-be")), before=st.booleans(), data=st.data())
    def case(fmt: str, codec: str, before: bool, data: st.DataObject) -> None:
        bom = b"" if codec == "utf-16" else b"\xfe\xff"  # (utf-16 writes its own, little endian here)
        if before:
            raw = data.draw(mutated(SEED_BYTES[fmt]))
            raw = bom + raw.decode("utf-8", "replace").encode(codec)
        else:
            raw = data.draw(mutated(bom + SEED_BYTES[fmt].decode("utf-8").encode(codec)))
        tally.check(["audit", str(write(path, raw)), "--quiet", "--format", "json"])

    case()
    tally.report()


@settings(max_examples=200, deadline=None)
@given(magic=st.sampled_from([b"", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd", b"\x50\x2a\x4d\x18", b"\x1f"]), rest=st.binary(max_size=64))
def test_a_request_log_of_any_first_bytes_reads_or_is_one_user_error(magic: bytes, rest: bytes) -> None:
    # replay and check --trace read request logs through iter_lines, which refuses a compressed
    # one by its first bytes: any bytes give lines or one UserError, and a magic is always refused.
    from prefixbench.simulator.errors import UserError
    from prefixbench.workloads.logs.jsonlines import iter_lines

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        path.write_bytes(magic + rest)
        try:
            list(iter_lines(path))
        except UserError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(str(path))
        else:
            assert magic in (b"", b"\x1f")
