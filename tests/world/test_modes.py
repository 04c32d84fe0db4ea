"""Game modes: Capture and Hold scores held points per tick, Body Count scores kills; both end at
their target or their time limit."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from warband.exceptions import ConfigurationError
from warband.world.modes import (
    Assassination,
    BodyCount,
    CaptureAndHold,
    GameResult,
    ModeView,
    SearchAndDestroy,
    SearchAndRetrieve,
    make_mode,
)

TEAMS = ("red", "blue")
_NONE = GameResult(None, {}, "not over", 0)


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


def test_body_count_ends_at_the_end_of_the_tick_a_team_reaches_the_target_kills() -> None:
    mode = BodyCount(TEAMS, target_kills=2)
    mode.on_event(_kill("red", "blue"), tick=4)
    mode.on_tick(ModeView(4))
    mode.on_event(_kill("red", "blue"), tick=5)
    assert mode.outcome() is None  # the tick's other kills may still come
    mode.on_tick(ModeView(5))
    mode.on_event(_kill("blue", "red"), tick=6)
    mode.on_tick(ModeView(6))

    outcome = mode.outcome()
    assert outcome is not None
    assert {
        "winner": "blue",
        "scores": {"red": 0, "blue": 2},
        "reason": "reached 2 kills",
        "tick": 5,
    } == outcome.as_dict()


def test_body_count_counts_every_kill_of_the_tick_both_teams_reach_the_target_in() -> None:
    # The shots of a tick land together: the world reports blue's kills first (ids sort so).
    both = BodyCount(TEAMS, target_kills=2)
    for event in (_kill("red", "blue"), _kill("blue", "red")):
        both.on_event(event, tick=1)
    both.on_tick(ModeView(1))
    # Blue's second kill comes first, then red's second and third.
    for event in (_kill("red", "blue"), _kill("blue", "red"), _kill("blue", "red")):
        both.on_event(event, tick=2)
    both.on_tick(ModeView(2))
    outcome = both.outcome()
    assert outcome is not None
    assert ("red", {"red": 3, "blue": 2}) == (outcome.winner, dict(outcome.scores))

    level = BodyCount(TEAMS, target_kills=1)
    level.on_event(_kill("red", "blue"), tick=1)
    level.on_event(_kill("blue", "red"), tick=1)
    level.on_tick(ModeView(1))
    drawn = level.outcome()
    assert drawn is not None
    assert (None, "reached 1 kills") == (drawn.winner, drawn.reason)


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


def test_a_game_ended_by_an_event_is_announced_once_at_the_end_of_its_tick() -> None:
    mode = BodyCount(TEAMS, target_kills=1)
    mode.on_event(_kill("red", "blue"), tick=3)

    assert [("game_over", "blue", "reached 1 kills")] == mode.on_tick(ModeView(3))
    assert [] == mode.on_tick(ModeView(4))


def test_search_and_retrieve_scores_returns_of_its_own_object_only() -> None:
    mode = SearchAndRetrieve(TEAMS, "spawn", {"red": "r", "blue": "b"}, target_returns=2)
    mode.on_event(("returned", "retrieval-object", "bot-1", "red"), tick=5)
    mode.on_event(("returned", "another-object", "bot-2", "blue"), tick=6)
    assert {"red": 1, "blue": 0} == mode.score()
    assert ("spawn", "r", "b") == mode.markers

    mode.on_event(("returned", "retrieval-object", "bot-1", "red"), tick=9)
    outcome = mode.outcome()
    assert outcome is not None
    assert ("red", 9) == (outcome.winner, outcome.tick)


def test_the_attack_and_defence_modes_name_each_side_and_decide_at_the_time_limit() -> None:
    hunt = Assassination(TEAMS, attackers="blue", target="red-3", time_limit=2)
    destroy = SearchAndDestroy(TEAMS, ["t1", "t2"], attackers="red", time_limit=2)
    destroy.on_event(("destroyed", "t1", "blue", "red-1"), tick=1)
    destroy.on_event(("destroyed", "t1", "blue", "red-1"), tick=1)  # counted once
    for tick in (1, 2):
        hunt.on_tick(ModeView(tick))
        destroy.on_tick(ModeView(tick))

    assert {"blue": "attack", "red": "defend"} == hunt.roles()
    assert {"red": "attack", "blue": "defend"} == destroy.roles()
    assert ("red", {"red": 1, "blue": 0}) == (
        (hunt.outcome() or _NONE).winner,
        dict((hunt.outcome() or _NONE).scores),
    )
    assert ("blue", {"red": 1, "blue": 0}, "time limit reached with 1 target(s) saved") == (
        (destroy.outcome() or _NONE).winner,
        dict((destroy.outcome() or _NONE).scores),
        (destroy.outcome() or _NONE).reason,
    )


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: SearchAndRetrieve(TEAMS, "s", {"red": "r"}),
            "a return point for every team; none for \\['blue'\\]",
        ),
        (lambda: Assassination(TEAMS, attackers="green"), "attackers 'green'"),
        (lambda: SearchAndDestroy(TEAMS, [], attackers="red"), "at least one target"),
        (
            lambda: SearchAndDestroy(TEAMS, ["t"], attackers="red", fuse_ticks=0),
            "must be positive",
        ),
        (lambda: make_mode("search_and_destroy", TEAMS), "pass game_map"),
    ],
    ids=["return-point-missing", "unknown-attackers", "no-target", "no-fuse", "no-map"],
)
def test_the_new_modes_refuse_a_configuration_they_cannot_play(
    build: Callable[[], object], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        build()


def test_a_vip_is_designated_once_from_the_seed() -> None:
    mode = Assassination(TEAMS, attackers="red")
    first = mode.designate(["blue-1", "blue-2", "blue-3"], seed=4)
    assert first == mode.designate(["blue-9"], seed=5)
    assert first == Assassination(TEAMS, attackers="red").designate(
        ["blue-3", "blue-2", "blue-1"], seed=4
    )
    with pytest.raises(ConfigurationError, match="have no agent to protect"):
        Assassination(TEAMS, attackers="red").designate([], seed=1)
