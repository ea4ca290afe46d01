"""Compressed logs (gzip, bzip2, xz) are audited as they are: the same requests and figures as
the plain file, found by a folder walk; damaged or zstd data is one clear line, exit 2."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

PACKERS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


def _session(folder: Path) -> Path:
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    t.user("result", "2025-09-03T00:00:03.000Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:05.000Z", [cc_usage(3, 200, 15000, 9)])
    return write_jsonl(folder / "s1.jsonl", t.lines)


def _audit(path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["audit", str(path), "--quiet", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("suffix", sorted(PACKERS))
def test_a_compressed_transcript_audits_as_the_plain_one(tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str) -> None:
    plain = _session(tmp_path / "plain")
    packed = tmp_path / "packed" / f"s1.jsonl{suffix}"
    packed.parent.mkdir()
    packed.write_bytes(PACKERS[suffix](plain.read_bytes()))
    want, got = _audit(plain, capsys), _audit(packed.parent, capsys)  # the walk finds *.jsonl.gz
    assert got["totals"] == want["totals"] and got["totals"]["requests"] == 2
    assert [r["predicted_cache_read"] for r in got["requests"]] == [r["predicted_cache_read"] for r in want["requests"]]
    assert [f["file"] for f in got["files"]] == [str(packed)]


def test_damaged_compressed_data_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    packed = gzip.compress(_session(tmp_path).read_bytes())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    assert main(["audit", str(cut), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"prefixbench: error: {cut}: gzip-compressed data cut short or corrupt (") and "\n" not in err
    zstd = tmp_path / "s.jsonl.zst"
    zstd.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    assert main(["audit", str(zstd), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: {zstd}: zstd-compressed: decompress it first (zstd -d s.jsonl.zst)"
