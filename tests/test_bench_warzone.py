"""Smoke test of `bench/warzone.py`: `warband bench warzone --quick --json` keeps its contract."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .conftest import CommandResult, last_json_line

Cli = Callable[..., CommandResult]
CONTRACT_KEYS = {
    "bots_per_team",
    "processes",
    "ticks_per_s",
    "tick_ms_p50",
    "tick_ms_p99",
    "planning_ms",
}
LAYERS = {"bot", "squad", "commander"}


def _positive(value: Any) -> bool:
    is_number = isinstance(value, float | int) and not isinstance(value, bool)
    return is_number and math.isfinite(value) and value > 0


def _check_timing(entry: dict[str, Any]) -> None:
    assert CONTRACT_KEYS <= entry.keys(), entry
    assert 2 == entry["bots_per_team"], entry
    assert isinstance(entry["processes"], bool), entry
    for key in ("ticks_per_s", "tick_ms_p50", "tick_ms_p99"):
        assert _positive(entry[key]), (key, entry)
    assert entry["tick_ms_p99"] >= entry["tick_ms_p50"], entry
    assert 0 < entry["ticks"] <= 20, entry
    assert entry["clean"], entry


def test_quick_run_reports_every_configuration_with_the_contract_keys(warband_cli: Cli) -> None:
    result = warband_cli("bench", "warzone", "--quick", "--json", timeout=120)

    assert 0 == result.returncode, result.stderr
    report = last_json_line(result.stdout)
    results, baseline = report["results"], report["baseline"]
    assert [False, True] == [entry["processes"] for entry in results]
    assert [False, True] == [entry["processes"] for entry in baseline]
    for entry in results:
        _check_timing(entry)
        # Every layer of the hierarchy planned, and its time is counted.
        assert LAYERS == set(entry["planning_ms"]), entry
        assert all(_positive(ms) for ms in entry["planning_ms"].values()), entry
        assert _positive(entry["ratio"]), entry
    for entry in baseline:
        _check_timing(entry)
        assert {} == entry["planning_ms"], entry  # scripted bots: no planner
    # The targets are for 12v12, which --quick does not play: said so, not guessed.
    assert [None, None] == [target["met"] for target in report["targets"]]
    assert "not measured" in result.stdout
    assert "skirmish (baseline) 2v2 processes" in result.stdout
