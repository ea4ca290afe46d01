"""The live audit of ``prefixbench proxy``, in its own process: follows the capture file and
prints one line per call (:func:`prefixbench.reports.proxy_record.live_line`).

Run by the proxy as ``python -m prefixbench.reports.proxy_audit FILE OFFSET``: it reads the
lines appended after byte OFFSET as they land, audits each
(:class:`~prefixbench.workloads.audit.live.LiveAudit`) and prints its line on stdout. When its
standard input closes it audits what is left in the file and exits; SIGTERM stops it at once.
Auditing costs CPU (every body is replayed through the cache model); in its own process it
never holds the proxy's interpreter, so the calls in flight are not slowed by it.
"""

from __future__ import annotations

import os
import select
import sys
import time
from pathlib import Path
from typing import BinaryIO, TextIO

import msgspec

from prefixbench.simulator.errors import UserError

#: How often the file is looked at when nothing new was there (seconds).
POLL_S = 0.05


def follow(path: Path, offset: int, out: TextIO, control: BinaryIO | None) -> int:
    """Audit the lines appended to ``path`` after ``offset`` until ``control`` reaches its end
    (None: until the file has no more complete lines); returns the number of calls audited."""
    from prefixbench.reports.proxy_record import live_line
    from prefixbench.workloads.audit.live import LiveAudit

    audit = LiveAudit(path)
    decode = msgspec.json.Decoder().decode
    number = 0
    pending = b""
    closing = control is None
    with path.open("rb") as handle:
        handle.seek(offset)
        while True:
            data = handle.read()
            if data:
                pending += data
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    number += 1
                    out.write(_line(audit, decode, number, raw, live_line))
                    out.flush()
                continue
            if closing:
                return number
            if control is not None:
                ready, _, _ = select.select([control], [], [], POLL_S)
                if ready and not os.read(control.fileno(), 4096):
                    closing = True  # the proxy has stopped: audit what is left, then end
            else:
                time.sleep(POLL_S)


def _line(audit, decode, number: int, raw: bytes, live_line) -> str:  # type: ignore[no-untyped-def]
    """The live line of one capture line ('' when the call gets none)."""
    try:
        record = decode(raw)
        row = audit.add(record)
    except (msgspec.DecodeError, UserError) as exc:
        return f"#{number} not audited: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}\n"
    except Exception as exc:  # the live audit must never stop: the capture is what counts
        return f"#{number} live audit failed: {type(exc).__name__}: {exc}\n"
    response = record.get("response") if isinstance(record, dict) else None
    status = response.get("status_code") if isinstance(response, dict) else None
    line = live_line(number, row, status if isinstance(status, int) else None)
    if line is None:
        return ""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in line) + "\n"


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the proxy, which stops this
    path, offset = Path(sys.argv[1]), int(sys.argv[2])
    follow(path, offset, sys.stdout, sys.stdin.buffer)


if __name__ == "__main__":
    main()
