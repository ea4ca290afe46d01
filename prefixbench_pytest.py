"""pytest11 entry point of prefixbench: the plugin lives in :mod:`prefixbench.reports.pytest_plugin`.

A top-level module on purpose: pytest marks the modules of every distribution that declares a
``pytest11`` plugin for assertion rewriting, and for a namespace package with no top-level
module it would guess ``__main__`` and warn in every test run. This module gives it a name.
"""

from prefixbench.reports.pytest_plugin import (  # noqa: F401  (pytest reads the hooks off this module)
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    prefixbench,
)
