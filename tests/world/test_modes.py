"""Game modes: Capture and Hold scores held points per tick, Body Count scores kills; both end at
their target or their time limit."""

from __future__ import annotations

import pytest

from warband.exceptions import ConfigurationError
from warband.world.modes import BodyCount, CaptureAndHold, ModeView, make_mode

TEAMS = ("red", "blue")


def _kill(victim_team: str, killer_team: str) -> tuple[str, ...]:
    return ("killed", "v", victim_team, "k", killer_team, "rifle")


def test_capture_and_hold_scores_each_held_point_every_tick() -> None:
    mode = CaptureAndHold(TEAMS, ["a", "b", "c"], target_score=100)

    mode.on_tick(ModeView(1, {"a": "red", "b": "red", "c": "blue"}))
    mode.on_tick(ModeView(2, {"a": "red", "b": None, "c": "blue"}))

    assert {"red": 3, "blue": 2} == mode.score()
    assert mode.outcome() is None


def test_capture_and_hold_ends_when_a_team_reaches_the_target() -> None:
    mode = CaptureAndHold(TEAMS, ["a", "b"], target_score=4)
    events = []
    for tick in (1, 2):
        events = mode.on_tick(ModeView(tick, {"a": "blue", "b": "blue"}))

    outcome = mode.outcome()
    assert outcome is not None
    assert ("blue", 2, "reached 4 points") == (outcome.winner, outcome.tick, outcome.reason)
    assert [("game_over", "blue", "reached 4 points")] == events


def test_time_limit_gives_the_game_to_the_leader_or_a_draw() -> None:
    leading = CaptureAndHold(TEAMS, ["a"], time_limit=3)
    tied = CaptureAndHold(TEAMS, ["a"], time_limit=3)
    for tick in (1, 2, 3):
        leading.on_tick(ModeView(tick, {"a": "red" if tick < 3 else None}))
        tied.on_tick(ModeView(tick, {"a": None}))

    leading_outcome, tied_outcome = leading.outcome(), tied.outcome()
    assert leading_outcome is not None
    assert "red" == leading_outcome.winner
    assert tied_outcome is not None
    assert (None, "time limit reached") == (tied_outcome.winner, tied_outcome.reason)


def test_body_count_scores_enemy_kills_and_punishes_team_kills() -> None:
    mode = BodyCount(TEAMS, target_kills=10)
    mode.on_event(_kill("blue", "red"))
    mode.on_event(_kill("blue", "red"))
    mode.on_event(_kill("red", "red"))
    mode.on_event(("captured", "cp-a", "blue"))

    assert {"red": 1, "blue": 0} == mode.score()


def test_body_count_ends_at_the_target_kills() -> None:
    mode = BodyCount(TEAMS, target_kills=2)
    mode.on_event(_kill("red", "blue"), tick=4)
    mode.on_event(_kill("red", "blue"), tick=5)
    mode.on_event(_kill("blue", "red"), tick=6)

    outcome = mode.outcome()
    assert outcome is not None
    assert ("blue", {"red": 0, "blue": 2}, 5) == (
        outcome.winner,
        dict(outcome.scores),
        outcome.tick,
    )
    assert {
        "winner": "blue",
        "scores": {"red": 0, "blue": 2},
        "reason": "reached 2 kills",
        "tick": 5,
    } == outcome.as_dict()


def test_make_mode_builds_modes_by_name_and_lists_the_known_ones() -> None:
    assert isinstance(make_mode("body_count", TEAMS), BodyCount)
    assert isinstance(make_mode("capture_and_hold", TEAMS, capture_points=["a"]), CaptureAndHold)
    with pytest.raises(ConfigurationError, match="known modes: capture_and_hold, body_count"):
        make_mode("deathmatch", TEAMS)


def test_a_mode_needs_two_teams_and_a_positive_time_limit() -> None:
    with pytest.raises(ConfigurationError, match="at least two distinct teams"):
        BodyCount(["red"])
    with pytest.raises(ConfigurationError, match="positive number of ticks"):
        BodyCount(TEAMS, time_limit=0)
    with pytest.raises(ConfigurationError, match="at least one capture point"):
        CaptureAndHold(TEAMS, [])
