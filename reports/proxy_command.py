"""``prefixbench proxy`` from the command line: checks its options, then that the ``proxy``
extra is installed, before importing the server (:mod:`prefixbench.reports.proxy`), so a typo
and the extra's absence are each one line, the typo first. Nothing here imports aiohttp."""

from __future__ import annotations

import argparse
import importlib.util

from prefixbench.reports.proxy_options import parse_listen, refuse_another_log, refuse_out_folder, resolve_upstream
from prefixbench.simulator.errors import UserError


def run_proxy(args: argparse.Namespace) -> int:
    """Run the proxy until it is stopped; exit 2 (one line) without aiohttp.

    The options are checked first: a user without the extra who mistypes --upstream hears of
    the typo, not only of the missing extra (and fixes both at once)."""
    resolve_upstream(args.upstream)
    parse_listen(args.listen)
    refuse_out_folder(args.out)
    refuse_another_log(args.out)
    if importlib.util.find_spec("aiohttp") is None:
        raise UserError("prefixbench proxy needs aiohttp, the proxy extra: pip install 'prefixbench[proxy]'")
    from prefixbench.reports.proxy import run_proxy_command

    return run_proxy_command(args)
