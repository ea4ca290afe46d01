"""Integrity specs: invariants a compaction engine must keep, checked on scripted runs.

Each spec returns a :class:`~prefixbench.workloads.specs.base.SpecResult` instead of raising, so the
``check`` command can print every verdict and the test-suite can assert both that a spec
passes on the fixed preset and that it fails on the preset that reproduces its bug.
"""
