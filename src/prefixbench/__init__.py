"""prefixbench: a prefix-cache simulator and regression benchmark for compacting LLM agents."""

__version__ = "0.1.0"
