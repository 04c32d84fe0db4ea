"""Smoke test of `bench/env.py`: `warband bench env --quick --json` keeps its contract."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import REPO, CommandResult, last_json_line

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


def test_the_counting_script_plays_the_steps_and_hashes_what_they_gave() -> None:
    """`bench/env_callgrind.py --no-valgrind` (the counted run is the same play under
    callgrind): the same seed gives the same hash, a learner alone in the run the same steps
    as the world alone (the same acts reach the same world), another seed another hash."""
    script = REPO / "bench" / "env_callgrind.py"

    def run(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, str(script), "--no-valgrind", "--steps", "3", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert 0 == done.returncode, done.stderr
        return last_json_line(done.stdout)

    both = ("--config", "world alone", "--config", "run, learners only")
    first, again = run(*both), run(*both)
    hashes = [r["hash"] for r in first["results"]]
    assert hashes == [r["hash"] for r in again["results"]]
    assert hashes[0] == hashes[1]
    assert {"CPU ms"} == {r["unit"] for r in first["results"]}
    assert hashes[0] != run("--config", "world alone", "--seed", "2")["results"][0]["hash"]
