"""What prefixbench wrote into an output folder, so a later sweep removes only its own files.

``<out>/.prefixbench-manifest.json`` lists, relative to the folder, every file the last sweep
that finished wrote. It is the last file a sweep lands (:func:`prefixbench.reports.outdir.land_staged`);
a sweep's new files wait in a staging folder until then, and a run file in ``store/`` is
prefixbench's whether a manifest names it or not (store/ is prefixbench's folder). When a
sweep lands, the files an earlier sweep wrote that this one did not are removed; any other file
is left where it is and named in one warning line. ``<out>/SWEEP-UNFINISHED`` is there while a
sweep runs and after one was interrupted: re-running the command completes it (stored runs are
skipped). A sweep that stops on an error removes it: re-running would stop the same way.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from prefixbench.workloads.runs.store import STORE_DIR, TEMP_PREFIX, write_atomic
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

    def begin(self, planned: int) -> None:
        """Mark the folder as holding an unfinished sweep (until its landing, or its failure)."""
        write_atomic(
            self.out_dir / UNFINISHED,
            (
                f"A prefixbench sweep of {planned} runs is writing this folder, or was stopped before it finished.\n"
                "The other files here are those of the last sweep that finished.\n"
                "Re-run the same command to complete it: runs already in store/ are skipped.\n"
            ).encode(),
        )

    def settle(self, written: set[str], skip: set[str]) -> tuple[list[str], list[str], bytes]:
        """What landing ``written`` means for the folder: ``(stale, foreign, manifest)``.

        ``stale``: files earlier sweeps wrote (the manifest's, and every run file in store/,
        which is prefixbench's folder) that this sweep did not: they go. ``foreign``: files
        prefixbench never wrote, left as they are (for the warning). ``manifest``: the bytes of
        the new manifest, naming ``written``. ``skip`` names top-level entries that are not
        outputs (the lock, a staging folder).
        """
        stored = {f"{STORE_DIR}/{p.name}" for p in (self.out_dir / STORE_DIR).glob("*.parquet")} if (self.out_dir / STORE_DIR).is_dir() else set()
        stale = sorted(f for f in (self.owned | stored) - written if (self.out_dir / f).is_file() or (self.out_dir / f).is_symlink())
        foreign = []
        for root, dirs, files in os.walk(self.out_dir):
            if Path(root) == self.out_dir:
                dirs[:] = [d for d in dirs if d not in skip]
            dirs.sort()
            for name in sorted(files):
                rel = Path(root, name).relative_to(self.out_dir).as_posix()
                if rel in written or rel in stale or rel in (MANIFEST, UNFINISHED) or rel in skip:
                    continue
                foreign.append(rel)
        return stale, foreign, (json.dumps({"files": sorted(written)}, indent=1) + "\n").encode()

    def remove_temporaries(self) -> None:
        """Delete half-written files a killed sweep left (only prefixbench's temporary names)."""
        for root, _, files in os.walk(self.out_dir):
            for name in files:
                if name.startswith(TEMP_PREFIX) or (root == str(self.out_dir) and name == "report.html.tmp"):
                    Path(root, name).unlink(missing_ok=True)


def _inside(rel: str) -> bool:
    """A manifest names files inside the folder only (never an absolute path or ``..``)."""
    path = Path(rel)
    return bool(rel) and not path.is_absolute() and ".." not in path.parts
