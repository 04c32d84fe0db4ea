"""Smoke test of ``bench/world.py``: a tiny run prints a table and the JSON contract."""

from __future__ import annotations

import importlib.util
import math
from types import ModuleType

import pytest

from ..conftest import REPO, last_json_line


def _load_benchmark() -> ModuleType:
    """Load the benchmark by file path, as ``warband bench world`` does (not in sys.modules)."""
    path = REPO / "bench" / "world.py"
    spec = importlib.util.spec_from_file_location("warband_bench_world_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tiny_run_reports_tick_times_and_an_agreeing_all_pairs_baseline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = _load_benchmark()
    argv = ["--json", "--sizes", "8", "30", "--ticks", "2", "--warmup", "1"]
    argv += ["--columns", "12", "--rows", "8", "--sample", "10"]

    code = bench.main(argv)

    captured = capsys.readouterr()
    assert 0 == code
    report = last_json_line(captured.out)
    assert [8, 30] == [row["entities"] for row in report["results"]]
    for row in report["results"]:
        for key in ("tick_ms", "step_ms", "percepts_ms", "deltas_ms", "perception_grid_ms"):
            assert math.isfinite(row[key]) and row[key] > 0, (key, row)
        # A delta never carries more than a full percept's facts twice over (each removed and
        # added again); the first full percepts are not in the measured ticks.
        assert 0 < row["facts_per_tick_sent"] <= 2 * row["facts_per_tick_full"]
        assert row["baseline_allpairs_ms"] > 0
        assert row["agree"] is True
    assert [False, True] == [row["baseline_estimated"] for row in report["results"]]
    assert {"8", "30"} == set(report["baseline_allpairs_ms"])
    assert {} == report["targets"]  # checked only when 100 and 1000 entities both ran
    assert "all-pairs" in captured.out and "[bench world]" in captured.err
    # The same-density series: the largest size is the fixed map's own run (12 x 8 = 96
    # waypoints for 30 entities), the smaller one plays on a map as crowded (3.2 waypoints
    # per entity: 8 entities on 6 x 4).
    density = report["same_density"]
    assert 3.2 == density["waypoints_per_entity"]
    assert [(8, 6, 4), (30, 12, 8)] == [
        (row["entities"], row["columns"], row["rows"]) for row in density["results"]
    ]
    assert density["results"][1]["tick_ms"] == report["results"][1]["tick_ms"]
    assert all(row["agree"] is True for row in density["results"])
    assert "same density" in captured.out


def test_the_same_density_series_can_be_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load_benchmark()
    argv = ["--json", "--sizes", "8", "--ticks", "1", "--warmup", "0", "--no-same-density"]
    argv += ["--columns", "6", "--rows", "4"]

    assert 0 == bench.main(argv)

    assert "same_density" not in last_json_line(capsys.readouterr().out)


def test_the_phase_counter_times_every_phase_of_the_bench_world_without_valgrind(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = REPO / "bench" / "world_callgrind.py"
    spec = importlib.util.spec_from_file_location("warband_bench_world_callgrind_test", path)
    assert spec is not None and spec.loader is not None
    counter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(counter)
    argv = ["--entities", "6", "--columns", "5", "--rows", "3", "--ticks", "3", "--warmup", "1"]

    assert 0 == counter.main([*argv, "--no-valgrind"])

    report = last_json_line(capsys.readouterr().out)
    assert ("cpu_ms", 6, 3) == (report["unit"], report["entities"], report["ticks"])
    assert all(report[phase] >= 0 for phase in counter.PHASES)
    assert report["tick_min"] <= report["tick"] <= report["tick_max"]
    assert report["tick_max"] > 0
    counted = report["per_tick"]
    assert set(counter.PER_TICK) == set(counted)
    assert 0 < counted["observers"] <= 6 and counted["facts_full"] >= counted["observers"]

    # The experiment learns every waypoint line first: fewer lines tested, the same answers.
    assert 0 == counter.main([*argv, "--no-valgrind", "--learn-waypoint-lines"])

    learnt = last_json_line(capsys.readouterr().out)["per_tick"]
    assert 0 < counted["sight_tests"] and learnt["sight_tests"] <= counted["sight_tests"]
    alike = ("observers", "sightings", "hearings", "heard_facts", "facts_full", "facts_sent")
    assert [counted[name] for name in alike] == [learnt[name] for name in alike]
