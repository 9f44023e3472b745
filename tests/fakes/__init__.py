"""Fakes the tests (and benchmarks) run against: a model provider on loopback."""
