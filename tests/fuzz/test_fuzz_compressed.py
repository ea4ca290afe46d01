"""Compressed logs with damaged bytes: a result or one clear line, never a traceback."""

from __future__ import annotations

import bz2
import gzip
import lzma
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, fuzz_settings, mutated, write
from tests.fuzz.test_fuzz_audit import SEED_BYTES

PACKERS = (gzip.compress, bz2.compress, lzma.compress)


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
