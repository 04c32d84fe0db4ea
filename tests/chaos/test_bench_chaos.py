"""Smoke test of `warband bench chaos`: its --json line keeps the contract (one fault only)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tests.conftest import REPO, CommandResult, last_json_line

pytestmark = pytest.mark.processes

CONTRACT_KEYS = {"name", "passed", "lost", "duplicated", "target", "target_met"}


def test_bench_chaos_json_has_one_entry_per_fault_with_the_contract_keys(
    warband_cli: Callable[..., CommandResult],
) -> None:
    result = warband_cli("bench", "chaos", "--quick", "--only", "stuck-blocked", "--json")

    assert 0 == result.returncode, result.stderr[-2000:]
    report = last_json_line(result.stdout)
    [entry] = report["tests"]
    assert CONTRACT_KEYS | {"detect_s", "recover_s"} <= entry.keys(), entry
    assert ("stuck-blocked", True) == (entry["name"], entry["passed"])
    assert "baseline_detect_s" in entry
    assert "stuck-blocked" in result.stderr  # the table, on stderr with --json


def test_bench_chaos_runs_the_backpressure_fault_next_to_a_raw_baseline(
    warband_cli: Callable[..., CommandResult],
) -> None:
    result = warband_cli("bench", "chaos", "--quick", "--only", "backpressure", "--json")

    assert 0 == result.returncode, result.stderr[-2000:]
    [entry] = last_json_line(result.stdout)["tests"]
    assert CONTRACT_KEYS | {"baseline_lost", "conflated", "mailbox_peak"} <= entry.keys(), entry
    assert ("backpressure", True, 0, 0) == (
        entry["name"],
        entry["passed"],
        entry["lost"],
        entry["duplicated"],
    )


def test_the_default_run_is_every_fault_of_the_readme_table_but_fuzz_in_the_table_order() -> None:
    from bench.chaos import FAULTS

    readme = (REPO / "bench" / "README.md").read_text()
    section = readme[readme.index("## chaos") :]
    section = section[: section.index("\n## ", 1)]
    listed = re.findall(r"^\| `([a-z-]+)`", section, flags=re.MULTILINE)

    assert listed == list(FAULTS)
    assert "fuzz" == listed[-1]  # run only with --fuzz N, after the others
