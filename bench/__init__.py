"""warband's benchmarks: each module measures one part next to a no-framework baseline.

Run them with ``warband bench NAME [--json]`` from the repository root; bench/README.md says what
every figure means.
"""
