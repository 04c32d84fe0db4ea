"""Smoke test of ``bench/planning.py``: a quick run reports every problem with the contract keys."""

from __future__ import annotations

import importlib.util
import math
from types import ModuleType
from typing import Any

import pytest

from ..conftest import REPO, last_json_line

CONTRACT_KEYS = ("name", "planner", "median_ms", "p99_ms", "cost", "optimal_cost")
FAMILIES = ("fear/", "pirate/", "synthetic/", "chains/", "blocks/")


def _load_benchmark() -> ModuleType:
    """Load the benchmark by file path, as ``warband bench planning`` does (not in sys.modules)."""
    path = REPO / "bench" / "planning.py"
    spec = importlib.util.spec_from_file_location("warband_bench_planning_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _positive(value: Any) -> bool:
    is_number = isinstance(value, float | int) and not isinstance(value, bool)
    return is_number and math.isfinite(value) and value > 0


def _check_report(report: dict[str, Any]) -> None:
    entries = report["problems"]
    assert entries, report
    for entry in entries:
        assert set(CONTRACT_KEYS) <= set(entry), entry
        assert isinstance(entry["name"], str) and isinstance(entry["planner"], str), entry
        for key in ("median_ms", "p99_ms", "cost", "optimal_cost"):
            assert _positive(entry[key]), (key, entry)
        assert entry["p99_ms"] >= entry["median_ms"], entry
        assert entry["valid"], entry
    mine = [entry for entry in entries if entry["planner"] == "warband"]
    for family in FAMILIES:
        assert any(entry["name"].startswith(family) for entry in mine), family
    for entry in mine:
        assert entry["optimal_cost"] == entry["cost"], entry
        assert entry["optimal"], entry
    assert report["warband_all_optimal"]
    summary = report["chains"]
    planners = {row["planner"] for row in summary}
    assert "warband" in planners, summary
    assert {"warband"} | set(report["peers_run"]) - {"goap", "gtpyhop"} == planners, summary
    for row in summary:
        assert row["optimal"], row
        assert _positive(row["median_ms"]) and row["worst_ms"] >= row["median_ms"], row
    for entry in entries:
        if entry["planner"] != "warband":
            assert _positive(entry["ratio"]), entry
            assert entry["planner"] in report["peers_run"], entry


def test_quick_run_reports_every_problem_with_optimal_warband_costs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = _load_benchmark()

    code = bench.main(["--json", "--quick"])

    out = capsys.readouterr().out
    assert 0 == code, out
    report = last_json_line(out)
    assert set(CONTRACT_KEYS) == set(bench.JSON_KEYS)
    _check_report(report)
    # Peers are optional: whatever is not installed must be named as skipped.
    for peer in ("pyperplan", "goap", "gtpyhop"):
        assert peer in report["peers_run"] or peer in report["peers_missing"], peer
    assert "warband optimal on every problem: yes" in out


def test_quick_run_without_peers_runs_warband_only(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load_benchmark()

    code = bench.main(["--json", "--quick", "--no-peers"])

    report = last_json_line(capsys.readouterr().out)
    assert 0 == code
    _check_report(report)
    assert {"warband"} == {entry["planner"] for entry in report["problems"]}
    assert [] == report["peers_run"]


def test_a_missing_peer_is_told_the_install_that_brings_it() -> None:
    # goap is not in warband[peers] (and 0.3.0 does not import on 3.11): the extra is no hint.
    bench = _load_benchmark()
    assert "pip install 'warband[peers]'" in bench._not_installed("pyperplan")
    goap = bench._not_installed("goap")
    assert "goap is not in warband[peers]" in goap and "or pip install" not in goap
