"""Smoke test of `bench/scale.py`: `warband bench scale` at tiny sizes keeps its contract."""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from collections.abc import Callable
from types import ModuleType

import pytest

from .conftest import REPO, CommandResult, last_json_line

Cli = Callable[..., CommandResult]
CONTRACT_KEYS = {
    "placement",
    "bots_per_team",
    "agents",
    "ticks",
    "ticks_per_s",
    "cpu_ms_per_agent_tick",
    "frames_per_agent_tick",
    "rss_mb",
    "pss_mb",
    "map",
}


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("warband_bench_scale", REPO / "bench/scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.processes
def test_a_tiny_run_reports_every_placement_with_the_contract_keys(warband_cli: Cli) -> None:
    result = warband_cli(
        "bench", "scale", "--sizes", "1", "--ticks", "4", "--no-count", "--json", timeout=300
    )

    assert 0 == result.returncode, result.stderr
    report = last_json_line(result.stdout)
    played = [(e["placement"], e["bots_per_team"]) for e in report["results"]]
    assert [("one process", 1), ("workers", 1), ("processes", 1)] == played
    for entry in report["results"]:
        assert CONTRACT_KEYS <= entry.keys(), entry
        assert entry["clean"], entry
        assert 2 * entry["bots_per_team"] + 4 == entry["agents"]  # a commander, 1 squad a side
        for key in ("ticks_per_s", "frames_per_agent_tick", "rss_mb", "pss_mb"):
            assert math.isfinite(entry[key]) and entry[key] > 0, (key, entry)
        assert entry["pss_mb"] <= entry["rss_mb"], entry
        assert "warzone" == entry["map"]  # map=auto: 1 a side plays on the 12-a-side map
    # The world, the broker and 2 workers; the world, the broker and a process per agent.
    assert [1, 4, 8] == [e["processes"] for e in report["results"]]
    # One size: no growth to fit (the fit itself is tested below).
    growth = report["growth"]
    assert {"one process", "workers", "processes"} == set(growth)
    assert all(None is g["cpu_exponent"] for g in growth.values()), growth
    assert report["routing"] is None
    assert "auto" == report["map"]
    assert "routing: not counted (--no-count)" in result.stdout


def test_the_growth_exponent_is_the_slope_of_log_cost_on_log_agents() -> None:
    growth_exponent = _bench().growth_exponent
    assert growth_exponent([(10, 5.0), (20, 10.0), (40, 20.0)]) == pytest.approx(1.0)
    assert growth_exponent([(10, 1.0), (20, 4.0), (40, 16.0)]) == pytest.approx(2.0)
    assert None is growth_exponent([(10, 1.0)])


def test_a_match_plays_on_the_map_of_map_and_says_so() -> None:
    # The child of one match, as `warband bench scale --map warzone-x2` starts it, one process.
    match = [sys.executable, str(REPO / "bench/scale.py"), "--role=match"]
    options = ["--placement=one process", "--bots=2", "--ticks=2", "--seed=1"]
    done = subprocess.run(
        [*match, *options, "--map=warzone-x2"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},  # this checkout's warband, installed or not
    )
    assert 0 == done.returncode, done.stderr
    entry = last_json_line(done.stdout)
    assert ("warzone-x2", 2, True) == (entry["map"], entry["bots_per_team"], entry["clean"])


def test_an_unknown_map_is_refused_before_any_match(warband_cli: Cli) -> None:
    result = warband_cli("bench", "scale", "--map", "nowhere", "--no-count", timeout=60)
    assert 2 == result.returncode
    assert "--map nowhere: unknown map 'nowhere'; bundled maps:" in result.stderr
    assert "Traceback" not in result.stderr


def test_sizes_given_twice_add_up_as_in_one_list() -> None:
    parser = _bench()._parser()
    assert parser.parse_args(["--sizes", "12", "--sizes", "48"]).sizes == [12, 48]
    assert parser.parse_args(["--sizes", "12", "48"]).sizes == [12, 48]
    assert parser.parse_args([]).sizes is None  # the default series
