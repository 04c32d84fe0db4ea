"""warband.env: the PettingZoo and Gymnasium environments over a Warzone match of warband's bots.

The API tests are PettingZoo's and Gymnasium's own; matches are 2 a side and a few dozen ticks
so that each test takes seconds.
"""

from __future__ import annotations

import gc
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="warband.env needs the env extra: pip install '.[env]'")
pytest.importorskip("gymnasium", reason="warband.env needs the env extra: pip install '.[env]'")

import gymnasium
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test, parallel_seed_test

from warband.env import (
    GYMNASIUM_ID,
    OBSERVATION_FIELDS,
    OBSERVATION_SIZE,
    RewardInput,
    WarzoneEnv,
    WarzoneParallelEnv,
    all_bots,
)
from warband.env import actions as A
from warband.exceptions import ConfigurationError
from warband.messaging._collector import YOUNG_THRESHOLD

from ..conftest import REPO


@pytest.fixture
def parallel_env() -> Iterator[WarzoneParallelEnv]:
    """Red's two bots learn; blue's two are warband's, led by a commander and a squad."""
    env = WarzoneParallelEnv(bots=2, blue="hierarchy", time_limit=25)
    yield env
    env.close()


def test_the_parallel_env_passes_pettingzoo_parallel_api_test(
    parallel_env: WarzoneParallelEnv,
) -> None:
    parallel_api_test(parallel_env, num_cycles=30)


def test_the_parallel_env_passes_pettingzoo_parallel_seed_test() -> None:
    # warband's agents on both sides, a learner on each: the whole run must replay.
    def make() -> WarzoneParallelEnv:
        return WarzoneParallelEnv(
            bots=2, learners=["red-1", "blue-2"], red="hierarchy", blue="hierarchy", time_limit=30
        )

    parallel_seed_test(make, num_cycles=30)


def test_the_gymnasium_env_passes_check_env() -> None:
    env = gymnasium.make(GYMNASIUM_ID, bots=2, blue="hierarchy", time_limit=15)
    try:
        check_env(env.unwrapped)
    finally:
        env.close()


def test_a_learners_act_is_checked_by_the_world_as_any_bots(
    parallel_env: WarzoneParallelEnv,
) -> None:
    parallel_env.reset(seed=3)

    _, _, _, _, infos = parallel_env.step({"red-1": A.RELOAD, "red-2": A.CROUCH})

    # The world answered each Act over the run: a full clip cannot be reloaded.
    assert ("reload", False) == (infos["red-1"]["act"], infos["red-1"]["act_accepted"])
    assert "clip is already full" in infos["red-1"]["act_reason"]
    assert ("crouch", True) == (infos["red-2"]["act"], infos["red-2"]["act_accepted"])
    observations, _, _, _, infos = parallel_env.step({"red-1": A.NOOP, "red-2": A.NOOP})
    assert None is infos["red-1"]["act_accepted"]
    assert 1.0 == observations["red-2"][OBSERVATION_FIELDS.index("crouched")]


def test_a_match_plays_to_the_worlds_decision_and_ends_every_learner() -> None:
    env = WarzoneParallelEnv(bots=2, learners=["red-1"], time_limit=12)
    try:
        env.reset(seed=1)
        steps, terminations, infos = 0, {}, {}
        while env.agents:
            _, _, terminations, _, infos = env.step({"red-1": A.GO + 1})
            steps += 1
    finally:
        env.close()

    assert 12 == steps
    assert {"red-1": True} == terminations
    assert "time limit reached" == infos["red-1"]["outcome"]["reason"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"red-1": A.NOOP})


def test_observations_fit_their_space_and_name_every_field(
    parallel_env: WarzoneParallelEnv,
) -> None:
    observations, _ = parallel_env.reset(seed=2)

    assert OBSERVATION_SIZE == len(set(OBSERVATION_FIELDS))
    for agent, observation in observations.items():
        assert parallel_env.observation_space(agent).contains(observation)
        assert 1.0 == observation[OBSERVATION_FIELDS.index("alive")]
        assert 1.0 == observation[OBSERVATION_FIELDS.index("objective0_present")]


def test_go_walks_towards_an_objective_one_link_at_a_time(
    parallel_env: WarzoneParallelEnv,
) -> None:
    observations, _ = parallel_env.reset(seed=2)
    distance = OBSERVATION_FIELDS.index("objective1_distance")
    start = observations["red-1"][distance]

    for _ in range(8):
        observations, *_ = parallel_env.step({"red-1": A.GO + 1})

    assert observations["red-1"][distance] < start


def test_a_users_reward_function_replaces_the_default() -> None:
    seen: list[RewardInput] = []

    def reward(step: RewardInput) -> float:
        seen.append(step)
        return 0.5

    env = WarzoneEnv(bots=2, reward=reward, time_limit=10)
    try:
        env.reset(seed=1)
        _, value, *_ = env.step(A.NOOP)
    finally:
        env.close()
    assert 0.5 == value
    assert ("red-1", "red", "capture_and_hold") == (seen[0].agent, seen[0].team, seen[0].mode)


def test_the_world_alone_backend_plays_every_bot_as_a_learner() -> None:
    env = WarzoneParallelEnv(bots=2, learners=list(all_bots(2)), backend="world", time_limit=5)
    try:
        env.reset(seed=1)
        while env.agents:
            _, rewards, *_ = env.step(dict.fromkeys(env.agents, A.GO))
    finally:
        env.close()
    assert set(all_bots(2)) == set(rewards)


def test_closing_a_match_in_play_leaves_no_thread_behind() -> None:
    before = threading.active_count()
    env = WarzoneEnv(bots=2, red="hierarchy", time_limit=50)
    env.reset(seed=1)
    env.step(A.NOOP)
    env.reset(seed=2)  # ends the first run
    env.close()
    env.close()  # closing twice is allowed

    assert before == threading.active_count()


def test_the_collector_runs_less_often_from_reset_to_close_only() -> None:
    own = gc.get_threshold()
    gc.set_threshold(900, *own[1:])
    try:
        env = WarzoneEnv(bots=2, red="hierarchy", time_limit=50)
        try:
            assert (900, *own[1:]) == gc.get_threshold()  # made, not yet running
            env.reset(seed=1)
            raised = (YOUNG_THRESHOLD, *own[1:])
            assert raised == gc.get_threshold()
            env.step(A.NOOP)
            assert raised == gc.get_threshold()  # between steps too
            env.reset(seed=2)
            assert raised == gc.get_threshold()
        finally:
            env.close()
        assert (900, *own[1:]) == gc.get_threshold()
        env.close()
        assert (900, *own[1:]) == gc.get_threshold()
    finally:
        gc.set_threshold(*own)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"bots": 13}, "bots must be 1..12"),
        ({"red": "anarchy"}, "red='anarchy'"),
        ({"mode": "tag"}, "mode='tag'"),
        ({"time_limit": 0}, "time_limit"),
        ({"learner": "green-1"}, "green-1 is no bot"),
        ({"reward": 3}, "reward must be a function"),
    ],
)
def test_a_bad_parameter_is_refused_naming_it(params: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigurationError, match=named):
        WarzoneEnv(**params)


def test_the_world_alone_needs_every_bot_learning() -> None:
    with pytest.raises(ConfigurationError, match="every bot must be a learner"):
        WarzoneParallelEnv(bots=2, backend="world")


def test_the_same_seed_replays_a_match_and_another_seed_differs() -> None:
    def play(seed: int) -> list[Any]:
        env = WarzoneEnv(bots=3, red="hierarchy", blue="hierarchy", time_limit=40)
        try:
            observation, _ = env.reset(seed=seed)
            trace = [observation]
            for step in range(40):
                observation, *_ = env.step(A.GO + step % 3)
                trace.append(observation)
        finally:
            env.close()
        return trace

    first, again, other = play(5), play(5), play(6)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))


def test_the_readme_environment_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Reinforcement learning: `warband.env`", 1)[1]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]

    exec(compile(example, "README.md", "exec"), {})

    # The match ran to its end, by the mode's rule or the time limit, and says who won.
    printed = capsys.readouterr().out
    assert "'winner': " in printed and "'reason': " in printed, printed


def test_the_training_example_prints_its_win_rate_before_and_after() -> None:
    command = [sys.executable, "examples/train_env.py", "--minutes", "0.02", "--eval", "1"]
    result = subprocess.run(
        [*command, "--time-limit", "15"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )

    assert 0 == result.returncode, result.stderr
    assert re.search(r"before training: red wins \d+% of 1 matches", result.stdout)
    assert re.search(r"after training:  red wins \d+% of 1 matches", result.stdout)


def test_matches_closed_in_any_order_leave_the_collector_as_it_was() -> None:
    own = gc.get_threshold()
    gc.set_threshold(900, *own[1:])
    try:
        first = WarzoneEnv(bots=1, time_limit=20)
        second = WarzoneEnv(bots=1, time_limit=20)
        try:
            first.reset(seed=1)
            second.reset(seed=1)
            first.close()  # the first one opened closes first: the second still runs
            assert (YOUNG_THRESHOLD, *own[1:]) == gc.get_threshold()
        finally:
            first.close()
            second.close()
        assert (900, *own[1:]) == gc.get_threshold()
    finally:
        gc.set_threshold(*own)
