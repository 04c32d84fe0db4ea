"""Ready-made planning domains from the source papers, for tests, benchmarks and scenarios."""
