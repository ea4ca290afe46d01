"""Loads bench/peers/run.py (a script, not a package) for the benchmarks that reuse its helpers."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "peers" / "run.py"


def load_peers_script():
    """The peer benchmark module (``run``, ``run_once``, ``Tool``, ...)."""
    name = "prefixbench_bench_peers"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
