"""Ready-made planning domains from the source papers, used by the tests, benchmarks and scenarios."""
