"""``prefixbench proxy``'s options, checked without aiohttp (:mod:`prefixbench.reports.proxy_command`
checks them before it looks for the extra; the server, :mod:`prefixbench.reports.proxy`, reads them
the same way)."""

from __future__ import annotations

import os
from pathlib import Path

from prefixbench.simulator.errors import UserError


def resolve_upstream(value: str) -> str:
    """``--upstream``: a provider's name (its public API base) or a URL."""
    from prefixbench.simulator.providers import PROVIDERS

    rules = PROVIDERS.get(value.lower())
    if rules is not None:
        if not rules.api_base:
            with_base = ", ".join(name for name, r in PROVIDERS.items() if r.api_base)
            raise UserError(f"--upstream {value}: no known public API base; give its URL (named ones: {with_base})")
        return rules.api_base
    if not value.startswith(("http://", "https://")) or len(value.split("/")[2]) == 0:
        raise UserError(f"--upstream {value!r}: expected a provider name or an http(s):// URL")
    return value.rstrip("/")


def parse_listen(value: str) -> tuple[str, int]:
    """``--listen host:port`` (``[::1]:8787`` for IPv6; port 0 picks a free one)."""
    host, sep, port = value.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()):  # "¹" is a digit to isdigit()
        raise UserError(f"--listen {value!r}: expected host:port, e.g. 127.0.0.1:8787")
    digits = port.lstrip("0") or "0"
    if len(digits) > 5 or int(digits) > 65535:  # (int() of 4,301 digits or more raises)
        shown = digits if len(digits) <= 12 else f"{digits[:12]}... ({len(digits):,} digits)"
        raise UserError(f"--listen {value[:40]!r}{'...' if len(value) > 40 else ''}: port {shown} is not from 0 to 65535 (0 picks a free one)")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(digits)


def refuse_another_log(out: Path) -> None:
    """An --out that already holds another log (a request log, a transcript) is refused: the
    calls appended after it would make a file of two formats, which audit refuses."""
    try:
        holds = out.is_file() and out.stat().st_size > 0
    except OSError:
        return  # the open says what is wrong
    if not holds:
        return
    from prefixbench.workloads.logs.formats import detect_format

    try:
        found = detect_format(out).name
    except UserError:
        found = None
    except OSError:
        return
    if found != "http-capture":
        what = f"a {found} log" if found else "no capture"
        raise UserError(f"--out {out}: holds {what}; the proxy appends to a capture (http-capture): name another file")


def refuse_out_folder(out: Path) -> None:
    """An --out that is a folder, or sits under a file, is refused before anything starts."""
    if out.is_dir():
        raise UserError(f"--out {out}: is a folder; the proxy appends to a capture file (e.g. {out}/capture.jsonl)")
    for ancestor in Path(os.path.abspath(out)).parents:  # the nearest that exists must be a folder
        if ancestor.exists():
            if not ancestor.is_dir():
                raise UserError(f"--out {out}: lies under the file {ancestor}, not a folder")
            return
