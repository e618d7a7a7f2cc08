"""Benchmark harness: every figure is a ratio against a baseline measured in the same run,
interleaved (A B A B ...), reported as the median with min-max. ``python -m bench``."""
