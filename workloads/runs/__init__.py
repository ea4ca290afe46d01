"""Sweeps: the plan, execution (local or Dask), the result store, the manifest, the run record, compare."""
