"""Smoke test of `bench/view.py`: `warband bench view --quick --json` keeps its contract."""

from __future__ import annotations

from collections.abc import Callable

from .conftest import CommandResult, last_json_line

Cli = Callable[..., CommandResult]
CONTRACT_KEYS = {
    "bots_per_team",
    "processes",
    "ticks",
    "plain_ticks_per_s",
    "logged_ticks_per_s",
    "viewed_ticks_per_s",
    "ratio",
    "ratio_worst",
    "ratio_best",
    "ratio_to_logged",
    "events_received",
    "events_dropped",
    "page_frames",
    "target_met",
}


def test_a_quick_run_measures_the_match_plain_logged_and_viewed_by_a_page(
    warband_cli: Cli,
) -> None:
    result = warband_cli("bench", "view", "--quick", "--no-processes", "--json", timeout=180)

    assert 0 == result.returncode, result.stderr
    (entry,) = last_json_line(result.stdout)["results"]
    assert CONTRACT_KEYS <= entry.keys(), entry
    assert (2, False) == (entry["bots_per_team"], entry["processes"])
    for key in ("plain_ticks_per_s", "logged_ticks_per_s", "viewed_ticks_per_s"):
        assert 0 < entry[key], (key, entry)
    # The viewer took the run's events in, and the page fetched frames as they came.
    assert 0 < entry["events_received"], entry
    assert 0 < entry["page_frames"], entry
    assert isinstance(entry["target_met"], bool), entry
    # One round: its one ratio is the median, the lowest and the highest.
    assert entry["ratio_worst"] == entry["ratio"] == entry["ratio_best"] > 0, entry
