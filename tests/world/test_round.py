"""A Warzone round: missions one after another, the attack/defend modes twice, sides swapped."""

from __future__ import annotations

import pytest

from warband.exceptions import ConfigurationError
from warband.world import Mission, WarzoneRound, World, load_map, round_missions

WARZONE = load_map("warzone")
ROSTER = {
    bot: {"team": team, "class": "assault"}
    for team in ("red", "blue")
    for bot in (f"{team}-1", f"{team}-2")
}


def test_a_round_plays_every_mode_and_the_attack_defend_ones_twice_with_sides_swapped() -> None:
    assert [
        Mission("capture_and_hold"),
        Mission("body_count"),
        Mission("search_and_retrieve"),
        Mission("assassination", "red"),
        Mission("assassination", "blue"),
        Mission("search_and_destroy", "red"),
        Mission("search_and_destroy", "blue"),
    ] == round_missions(["red", "blue"])
    with pytest.raises(ConfigurationError, match="unknown mode 'king_of_the_hill'"):
        round_missions(["red", "blue"], ["king_of_the_hill"])


def test_each_mission_starts_afresh_when_the_one_before_is_decided() -> None:
    prepared: list[World] = []
    missions = round_missions(["red", "blue"], ["body_count", "assassination"])
    played = WarzoneRound(
        WARZONE, seed=4, roster=ROSTER, missions=missions, time_limit=5, prepare=prepared.append
    )
    modes, starts = [], []
    spawns = {m.waypoint for m in WARZONE.spawns("red")}
    while played.outcome() is None:
        snapshot = played.snapshot()
        modes.append(str(snapshot["mission"]["mode"]))
        if played.world.tick == 0:  # a mission's first tick: everyone back at base
            starts.append(snapshot["agents"]["red-1"]["waypoint"] in spawns)
        played.submit("red-1", "move", {"waypoint": "b3"})
        played.step()
        assert played.tick < 100, "the round never ended"
    # Nobody fights: every mission runs to its time limit, one after the other.
    assert ["body_count"] * 5 + ["assassination"] * 10 == modes
    assert 3 == len(prepared)  # each mission's world prepared before its first tick
    assert [("game_mode", "assassination")] == [
        f for f in played.percepts_for("red-1") if f[0] == "game_mode"
    ]
    assert [True, True, True] == starts  # though red-1 walked off in every mission
    outcome = played.outcome()
    assert outcome is not None
    results = [(m["mode"], m["attackers"], m["winner"]) for m in outcome["missions"]]
    # Body Count with no kills: nobody; Assassination's VIP alive at the time limit: defenders.
    assert [
        ("body_count", None, None),
        ("assassination", "red", "blue"),
        ("assassination", "blue", "red"),
    ] == results
    assert {"red": 1, "blue": 1} == outcome["scores"] and outcome["winner"] is None
    assert 15 == outcome["tick"]
