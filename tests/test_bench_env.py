"""Smoke test of `bench/env.py`: `warband bench env --quick --json` keeps its contract."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import CommandResult, last_json_line

pytest.importorskip(
    "pettingzoo", reason="warband bench env needs the env extra: pip install '.[env]'"
)

Cli = Callable[..., CommandResult]
KEYS = {
    "name",
    "learners",
    "opponents",
    "backend",
    "bots_per_team",
    "steps",
    "steps_per_s",
    "step_ms_p50",
    "step_ms_p99",
    "met",
}


def test_quick_run_measures_the_world_alone_and_warbands_opponents(warband_cli: Cli) -> None:
    result = warband_cli("bench", "env", "--quick", "--json", "--steps", "10", timeout=120)

    assert 0 == result.returncode, result.stderr
    report = last_json_line(result.stdout)
    results = {entry["name"]: entry for entry in report["results"]}
    assert {"world alone", "1 learner vs freelance", "1 learner vs hierarchy"} <= set(results)
    for entry in results.values():
        assert KEYS <= entry.keys(), entry
        assert 6 == entry["bots_per_team"] and 10 == entry["steps"], entry
        assert entry["steps_per_s"] > 0 and entry["step_ms_p99"] >= entry["step_ms_p50"], entry
        assert (entry["opponents"] == "none") == (entry["met"] is None), entry
    assert 200 == report["target_steps_per_s"]


def test_a_bad_option_gets_one_line_and_exit_2(warband_cli: Cli) -> None:
    result = warband_cli("bench", "env", "--bots", "13", timeout=60)

    assert 2 == result.returncode
    assert 1 == len(result.stderr.strip().splitlines()), result.stderr
    assert "--bots 1..12" in result.stderr
