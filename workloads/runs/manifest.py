"""What prefixbench wrote into an output folder, so a later sweep removes only its own files.

``<out>/.prefixbench-manifest.json`` lists, relative to the folder, every file a sweep wrote
or was about to write (a sweep claims its files before it writes the first one, so a killed
sweep's files are still known as prefixbench's). When a sweep ends, the files an earlier
sweep wrote that this one did not are removed; any other file is left where it is and named
in one warning line. ``<out>/SWEEP-UNFINISHED`` is there from a sweep's first write until its
last: a folder that holds it is a sweep that did not finish (re-run the command to complete
it; stored runs are skipped).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from prefixbench.workloads.runs.store import TEMP_PREFIX, write_atomic
from prefixbench.simulator.errors import UserError

MANIFEST = ".prefixbench-manifest.json"
UNFINISHED = "SWEEP-UNFINISHED"


class Manifest:
    """The manifest of one output folder."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.path = out_dir / MANIFEST
        self.previous: set[str] = self._read()
        self.owned: set[str] = set(self.previous)

    def _read(self) -> set[str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return set()
        except (OSError, ValueError, UnicodeDecodeError):
            raise UserError(
                f"{self.path}: not a prefixbench manifest; remove it, or choose another --out"
            ) from None
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise UserError(f"{self.path}: not a prefixbench manifest; remove it, or choose another --out")
        return {f for f in files if _inside(f)}

    def claim(self, files: set[str]) -> None:
        """Record files this sweep is about to write (before the first is written)."""
        self.owned |= files
        self._write(self.owned)

    def begin(self, planned: int) -> None:
        """Mark the folder as holding an unfinished sweep."""
        write_atomic(
            self.out_dir / UNFINISHED,
            (
                f"A prefixbench sweep of {planned} runs is writing this folder, or was stopped before it finished.\n"
                "Re-run the same command to complete it: runs already in store/ are skipped.\n"
            ).encode(),
        )

    def finish(self, written: set[str]) -> list[str]:
        """Remove what earlier sweeps wrote and this one did not; returns the files left that
        prefixbench never wrote (for the warning). Clears the unfinished mark last."""
        for rel in sorted(self.owned - written):
            path = self.out_dir / rel
            if path.is_file() or path.is_symlink():
                path.unlink()
        self._prune_empty_dirs()
        self._write(written)
        foreign = []
        for root, dirs, files in os.walk(self.out_dir):
            dirs.sort()
            for name in sorted(files):
                rel = Path(root, name).relative_to(self.out_dir).as_posix()
                if rel in written or rel in (MANIFEST, UNFINISHED):
                    continue
                foreign.append(rel)
        (self.out_dir / UNFINISHED).unlink(missing_ok=True)
        return foreign

    def remove_temporaries(self) -> None:
        """Delete half-written files a killed sweep left (only prefixbench's temporary names)."""
        for root, _, files in os.walk(self.out_dir):
            for name in files:
                if name.startswith(TEMP_PREFIX) or (root == str(self.out_dir) and name == "report.html.tmp"):
                    Path(root, name).unlink(missing_ok=True)

    def remove_owned(self, names: set[str]) -> None:
        """Delete files earlier sweeps wrote (derived outputs rebuilt at the end)."""
        for rel in sorted(names & self.previous):
            (self.out_dir / rel).unlink(missing_ok=True)

    def _prune_empty_dirs(self) -> None:
        for rel in sorted({str(Path(r).parent) for r in self.owned if "/" in r}, reverse=True):
            directory = self.out_dir / rel
            try:
                directory.rmdir()
            except OSError:
                pass  # not empty, or gone

    def _write(self, files: set[str]) -> None:
        write_atomic(self.path, (json.dumps({"files": sorted(files)}, indent=1) + "\n").encode())


def _inside(rel: str) -> bool:
    """A manifest names files inside the folder only (never an absolute path or ``..``)."""
    path = Path(rel)
    return bool(rel) and not path.is_absolute() and ".." not in path.parts
