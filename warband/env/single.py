"""The Gymnasium environment: one learning bot in a Warzone match of warband's bots.

::

    import gymnasium
    from warband.env import WarzoneEnv

    env = WarzoneEnv(learner="red-1", red="hierarchy", blue="freelance")
    observation, info = env.reset(seed=1)
    terminated = truncated = False
    while not (terminated or truncated):
        observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
    env.close()

The learner's team mates and enemies are warband's agents: with ``red="hierarchy"`` its team's
other bots are led by a commander and squads (the learner takes no orders), with
``"freelance"`` each goes for the nearest point its team lacks. Observations, actions, rewards,
termination and ``info`` are those of :class:`~warband.env.WarzoneParallelEnv` for one agent;
``gymnasium.make("warband/Warzone-v0", ...)`` builds it too once ``warband.env`` is imported
(``gymnasium.make("warband.env:warband/Warzone-v0", ...)`` imports it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import gymnasium
import numpy as np
from gymnasium import spaces

from ..agents.factions import Control
from .episode import Episode, next_seed
from .match import MatchConfig
from .observations import Observation
from .parallel import observation_space
from .rewards import RewardFunction


class WarzoneEnv(gymnasium.Env[Observation, np.int64]):
    """A Gymnasium ``Env``: ``learner`` (a bot id) against and beside warband's bots.

    The other parameters are :class:`~warband.env.WarzoneParallelEnv`'s.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        *,
        learner: str = "red-1",
        bots: int = 6,
        red: Control = "freelance",
        blue: Control = "freelance",
        mode: str = "capture_and_hold",
        time_limit: int = 400,
        map: str = "warzone",
        corridors: bool = True,
        reward: RewardFunction | None = None,
        log_dir: Path | str | None = None,
    ) -> None:
        config = MatchConfig(
            bots=bots,
            learners=(learner,),
            red=red,
            blue=blue,
            mode=mode,
            time_limit=time_limit,
            map=map,
            corridors=corridors,
        )
        self.learner = learner
        self._episode = Episode(config, reward, log_dir)
        self.observation_space = cast(spaces.Space[Observation], observation_space())
        self.action_space = spaces.Discrete(self._episode.decoder.count)
        self._over = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start a match; ``seed`` seeds the world and every warband agent."""
        super().reset(seed=seed)
        match_seed = seed if seed is not None else next_seed(self.np_random)
        observations, infos = self._episode.reset(match_seed)
        self._over = False
        return observations[self.learner], infos[self.learner]

    def step(self, action: np.int64 | int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self._over:
            raise RuntimeError("the match is over: call reset() to start another")
        observations, rewards, ended, infos = self._episode.step({self.learner: int(action)})
        last = self._episode.last
        decided = ended and last is not None and last.outcome is not None
        self._over = ended
        return (
            observations[self.learner],
            rewards[self.learner],
            decided,
            ended and not decided,
            infos[self.learner],
        )

    def close(self) -> None:
        self._episode.close()
        super().close()
