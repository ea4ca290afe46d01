"""``prefixbench proxy`` from the command line: checks that the ``proxy`` extra is installed
before importing the server (:mod:`prefixbench.reports.proxy`), so its absence is one line."""

from __future__ import annotations

import argparse
import importlib.util

from prefixbench.simulator.errors import UserError


def run_proxy(args: argparse.Namespace) -> int:
    """Run the proxy until it is stopped; exit 2 (one line) without aiohttp."""
    if importlib.util.find_spec("aiohttp") is None:
        raise UserError("prefixbench proxy needs aiohttp, the proxy extra: pip install 'prefixbench[proxy]'")
    from prefixbench.reports.proxy import run_proxy_command

    return run_proxy_command(args)
