"""warband.env.WarzoneSquadEnv: a learning squad leader orders warband's bots in a Warzone match.

Matches are 2 a side (red's one squad leads both red bots) and a few dozen ticks, so each test
takes seconds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="warband.env needs the env extra: pip install '.[env]'")
pytest.importorskip("gymnasium", reason="warband.env needs the env extra: pip install '.[env]'")

import gymnasium
from gymnasium.utils.env_checker import check_env

from warband.env import (
    SQUAD_ACTION_COUNT,
    SQUAD_GYMNASIUM_ID,
    SQUAD_OBSERVATION_FIELDS,
    SQUAD_OBSERVATION_SIZE,
    RewardInput,
    WarzoneSquadEnv,
    squad_places,
)
from warband.env import squad_actions as S
from warband.exceptions import ConfigurationError
from warband.world import load_map
from warband.world.vocabulary import AT

FAR_PLACE = "regroup-h4"
"""A place at blue's end of ``warzone``, where red's commander sends nobody early on."""


def _place(marker: str) -> int:
    return [p.marker for p in squad_places(load_map("warzone"))].index(marker)


def test_the_squad_env_passes_check_env() -> None:
    env = gymnasium.make(SQUAD_GYMNASIUM_ID, bots=2, time_limit=15)
    try:
        check_env(env.unwrapped)
    finally:
        env.close()


def test_the_places_and_the_fields_are_a_fixed_documented_list() -> None:
    places = squad_places(load_map("warzone"))

    assert S.MAX_PLACES == len(places)
    assert ("cp-centre", "capture") == (places[0].marker, places[0].kind)
    assert "regroup-h4" == places[-1].marker
    assert 61 == SQUAD_ACTION_COUNT
    assert SQUAD_OBSERVATION_SIZE == len(set(SQUAD_OBSERVATION_FIELDS))
    assert S.SquadOrder("attack", 2) == S.decode_squad_action(S.ATTACK + 2, places)
    assert S.decode_squad_action(S.KEEP, places) is None
    with pytest.raises(ValueError, match="range\\(61\\)"):
        S.decode_squad_action(61, places)


def test_the_commander_gives_the_learner_its_members_and_objective() -> None:
    env = WarzoneSquadEnv(bots=2, time_limit=20)
    try:
        observation, _ = env.reset(seed=1)
        for _ in range(3):
            observation, *_ = env.step(S.KEEP)
    finally:
        env.close()

    field = SQUAD_OBSERVATION_FIELDS.index
    # lead red-1, red-2 (taken and reported done), then capture a point: the queue's head now.
    assert 0.5 == observation[field("members")]
    assert 1.0 == observation[field("member0_present")]
    assert 1.0 == observation[field("commander_capture")]
    assert 1.0 == sum(observation[field(f"place{i}_commanded")] for i in range(S.MAX_PLACES))


def test_an_order_of_the_learner_reaches_its_bots_and_they_go_there() -> None:
    """The same match twice: keeping the commander's objective, and regrouping far away. The
    world sees the bots walk to where their squad leader sent them."""
    game_map = load_map("warzone")
    target = game_map.position("h4")

    def play(action: int) -> tuple[float, Any, dict[str, Any], list[Any]]:
        env = WarzoneSquadEnv(bots=2, time_limit=60)
        try:
            env.reset(seed=4)
            sent: list[Any] = []
            for _ in range(30):
                observation, _, _, _, info = env.step(action)
                sent += info["orders"]
            at = [AT.first(env._match.world.percepts_for(bot)) for bot in ("red-1", "red-2")]
        finally:
            env.close()
        nearest = min(math.dist(game_map.position(a.waypoint), target) for a in at if a)
        return nearest, observation, info, sent

    kept, _, kept_info, kept_sent = play(S.KEEP)
    regrouped, observation, info, sent = play(S.REGROUP + _place(FAR_PLACE))

    assert [] == kept_sent and kept_info["order"] is None
    assert ["regroup", FAR_PLACE] == info["order"]
    assert {"red-1", "red-2"} == {member for member, _, _ in sent}
    assert {"goto", "send_message", "defend"} == {task for _, task, _ in sent}
    # Kept to the commander's objective, no bot comes near; sent there, one stands at its spot
    # (the place or a waypoint linked to it: the world's `at`) and told its squad it arrived.
    beside = max(game_map.link_length("h4", w) for w in game_map.neighbours("h4"))
    assert regrouped <= beside < kept
    arrived = [observation[SQUAD_OBSERVATION_FIELDS.index(f"member{i}_arrived")] for i in (0, 1)]
    assert 1.0 in arrived


def test_the_same_seed_gives_the_same_observations() -> None:
    actions = [S.KEEP, S.ATTACK + 1, S.KEEP, S.REGROUP + 15, S.DEFEND + 0] * 5

    def play(seed: int) -> list[Any]:
        env = WarzoneSquadEnv(bots=2, blue="hierarchy", time_limit=30)
        try:
            observation, _ = env.reset(seed=seed)
            trace = [observation]
            for action in actions:
                observation, reward, _, _, info = env.step(action)
                trace += [observation, reward, info["orders"]]
        finally:
            env.close()
        return trace

    first, again, other = play(7), play(7), play(8)
    assert all(
        np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
        for a, b in zip(first, again, strict=True)
    )
    assert not all(np.array_equal(a, b) for a, b in zip(first[::3], other[::3], strict=True))


def test_a_users_reward_function_sees_the_squad() -> None:
    seen: list[RewardInput] = []

    def reward(step: RewardInput) -> float:
        seen.append(step)
        return -0.25

    env = WarzoneSquadEnv(bots=2, reward=reward, time_limit=10)
    try:
        env.reset(seed=1)
        _, value, *_ = env.step(S.KEEP)
    finally:
        env.close()
    assert -0.25 == value
    assert ("red-squad-1", "red") == (seen[0].agent, seen[0].team)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"learner": "red-1"}, "'red-1' is no squad"),
        ({"learner": "red-squad-9"}, "red-squad-1"),
        ({"red": "freelance"}, "red='hierarchy'"),
        ({"reward": "win"}, "reward must be a function"),
    ],
)
def test_a_bad_parameter_is_refused_naming_it(params: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigurationError, match=named):
        WarzoneSquadEnv(bots=2, **params)
