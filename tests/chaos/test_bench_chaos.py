"""Smoke test of `warband bench chaos`: its --json line keeps the contract (one fault only)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

import pytest

from tests.conftest import REPO, CommandResult, last_json_line

pytestmark = pytest.mark.processes

CONTRACT_KEYS = {"name", "passed", "lost", "duplicated", "target", "target_met"}


def test_bench_chaos_json_has_one_entry_per_fault_with_the_contract_keys(
    bench_chaos_stuck_blocked: CommandResult,
) -> None:
    result = bench_chaos_stuck_blocked  # test_stuck_actor.py reads its figures (conftest.py)

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


def test_bench_chaos_strangers_change_nothing_in_the_run(
    warband_cli: Callable[..., CommandResult],
) -> None:
    result = warband_cli("bench", "chaos", "--quick", "--only", "strangers", "--json", timeout=600)

    assert 0 == result.returncode, result.stderr[-2000:]
    [entry] = last_json_line(result.stdout)["tests"]
    assert ("strangers", True, 0, [], 0) == (
        entry["name"],
        entry["passed"],
        entry["lost"],
        entry["differs_from_baseline"],
        entry["stranger_frames_answered"],
    )
    assert (1, {}) == (entry["restarts"], entry["departed"])  # the kill -9's restart only
    assert entry["stranger_frames"] > 150


def test_the_default_run_is_every_fault_of_the_readme_table_but_fuzz_in_the_table_order() -> None:
    from tests.chaoslib.registry import FAULTS

    readme = (REPO / "bench" / "README.md").read_text()
    section = readme[readme.index("## chaos") :]
    section = section[: section.index("\n## ", 1)]
    listed = re.findall(r"^\| `([a-z-]+)`", section, flags=re.MULTILINE)

    assert listed == list(FAULTS)
    assert "fuzz" == listed[-1]  # run only with --fuzz N, after the others


def test_faults_asked_twice_run_once_and_an_unknown_one_stops_before_any_runs() -> None:
    from tests.chaoslib.registry import FUZZ_DEFAULT, faults_asked

    def asked(only: list[str], fuzz: int = 0) -> argparse.Namespace:
        return argparse.Namespace(only=only, fuzz=fuzz)  # as `--only X --fuzz N` parse

    args = asked(["fuzz", "churn", "fuzz"])
    assert ["fuzz", "churn"] == faults_asked(args)
    assert FUZZ_DEFAULT == args.fuzz  # fuzz asked by name fuzzes something
    args = asked(["fuzz"], 1_000_000)
    assert (["fuzz"], 1_000_000) == (faults_asked(args), args.fuzz)
    assert ["churn", "fuzz"] == faults_asked(asked(["churn"], 10))
    with pytest.raises(SystemExit, match=r"unknown fault 'chrun'.*partition"):
        faults_asked(asked(["churn", "chrun"]))
