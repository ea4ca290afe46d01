"""Compressed logs (gzip, bzip2, xz, zstd) are audited as they are: the same requests and figures
as the plain file, found by a folder walk; damaged data is one clear line, exit 2."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import sys
import tracemalloc
from pathlib import Path

import pytest
import zstandard
from prefixbench.reports.cli import main
from prefixbench.workloads.logs.records import _COMPRESSED
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

PACKERS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress, ".zst": zstandard.ZstdCompressor().compress}


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


def _zstd_frames(data: bytes, cuts: int) -> bytes:
    """``data`` as ``cuts`` Zstandard frames one after another (as ``zstd`` appends, or a writer flushes)."""
    step = -(-len(data) // cuts)
    return b"".join(zstandard.ZstdCompressor().compress(data[i : i + step]) for i in range(0, len(data), step))


def test_a_zstd_log_of_several_frames_reads_whole_and_one_cut_short_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Codex keeps its archived rollouts as *.jsonl.zst; main refused every zstd file ("decompress it first").
    plain = _session(tmp_path / "plain")
    frames = tmp_path / "frames.jsonl.zst"
    frames.write_bytes(_zstd_frames(plain.read_bytes(), 3))
    assert _audit(frames, capsys)["totals"] == _audit(plain, capsys)["totals"]
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes())[:-9])
    assert main(["audit", str(cut), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (f"prefixbench: error: {cut}: zstd-compressed data cut short or corrupt "
                                               "(the data ends inside a zstd frame)")
    junk = tmp_path / "junk.jsonl.zst"
    junk.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(range(256)) * 4)
    assert main(["audit", str(junk), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"prefixbench: error: {junk}: zstd-compressed data cut short or corrupt (") and "\n" not in err


def test_a_zstd_log_without_the_zstandard_package_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(_session(tmp_path).read_bytes()))
    monkeypatch.setitem(sys.modules, "zstandard", None)  # an install that left the dependency out
    assert main(["audit", str(path), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (f"prefixbench: error: {path}: zstd-compressed: reading it needs the zstandard "
                                               "package (pip install zstandard), or decompress it first (zstd -d s.jsonl.zst)")


def _skippable(payload: bytes) -> bytes:
    """A Zstandard skippable frame (magic 0x184D2A50, then its size): ``zstd -d`` passes over it."""
    return b"\x50\x2a\x4d\x18" + len(payload).to_bytes(4, "little") + payload


def test_a_zstd_log_that_starts_with_a_skippable_frame_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pzstd starts its output with a skippable frame (the next frame's size); int38 read such a
    # file's first bytes as no compression: "binary file, not a text log".
    plain = _session(tmp_path / "plain")
    packed = tmp_path / "pzstd.jsonl.zst"
    packed.write_bytes(_skippable(b"\x10\x00\x00\x00") + zstandard.ZstdCompressor().compress(plain.read_bytes()) + _skippable(b""))
    assert _audit(packed, capsys)["totals"] == _audit(plain, capsys)["totals"]


def test_a_zstd_log_is_decompressed_a_little_at_a_time(tmp_path: Path) -> None:
    # A block of one repeated byte is 4 bytes of zstd for 128 KiB: int38 decompressed each 16 KiB
    # read whole (here 64 MiB held at once from a 2 KiB file; up to 512 MiB a read), where gzip
    # holds a buffer's worth.
    packed = tmp_path / "blank.jsonl.zst"
    packed.write_bytes(zstandard.ZstdCompressor(level=19).compress(b"\n" * (64 << 20)))
    tracemalloc.start()
    try:
        with packed.open("rb") as raw:
            stream = _COMPRESSED["zstd"](raw)
            read = 0
            while chunk := stream.read(1 << 16):
                read += len(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == 64 << 20 and peak < 16 << 20
