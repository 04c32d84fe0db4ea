"""The PettingZoo environment: learning bots of both teams, or of one, in a Warzone match.

::

    from warband.env import WarzoneParallelEnv

    env = WarzoneParallelEnv(bots=6, learners=["red-1", "red-2"], blue="hierarchy", seed=1)
    observations, infos = env.reset(seed=1)
    while env.agents:
        actions = {agent: env.action_space(agent).sample() for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
    env.close()

Agents are the learners' bot ids. Observations are :mod:`warband.env.observations`'s vectors,
actions :mod:`warband.env.actions`'s integers, rewards :mod:`warband.env.rewards`'s (or the
``reward`` function you pass). Every learner is terminated in the step the world decides the
game (a team reached its goal, or the mode's time limit, whose leader wins); all are truncated
if the run ends otherwise (a warband agent failed). Each ``info`` holds ``tick``, ``act`` (the
verb sent, or None), ``act_accepted`` and ``act_reason`` (the world's answer to it; None when
no act was sent or the answer came after the match ended), and in the last step ``outcome``
(the world's: ``winner``, ``scores``, ``reason``, ``tick``) and ``end_reason``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from ..agents.factions import Control
from .episode import Episode, next_seed
from .match import Backend, MatchConfig
from .observations import OBSERVATION_SIZE, Observation
from .rewards import RewardFunction


def observation_space() -> spaces.Box:
    """The space of :mod:`warband.env.observations`'s vectors."""
    return spaces.Box(-1.0, 1.0, shape=(OBSERVATION_SIZE,), dtype=np.float32)


# pettingzoo has no type information: its ParallelEnv is Any to mypy.
class WarzoneParallelEnv(ParallelEnv[str, Observation, int]):  # type: ignore[misc]
    """A PettingZoo ``ParallelEnv`` over a Warzone match (see the module docstring).

    ``learners`` are bot ids (default: all of red); every other bot is warband's, its team led
    by ``red`` / ``blue`` (``"hierarchy"`` or ``"freelance"``). ``bots`` per team (1..12),
    ``mode`` (a name of :data:`warband.world.MODES`), ``time_limit`` (ticks), ``map`` (bundled
    name or TOML path), ``corridors`` (squads' routes, hierarchy only), ``backend`` (``"run"``,
    a warband run; ``"world"``, the world alone, learners only), ``reward`` (a function of a
    :class:`~warband.env.rewards.RewardInput`), ``seed`` (of the first ``reset()`` without one),
    ``log_dir`` (the run's logs, as ``warband run --log``). A bad value raises
    :class:`~warband.exceptions.ConfigurationError` naming it.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "warband_warzone_v0",
        "render_modes": [],
        "is_parallelizable": True,
    }

    def __init__(
        self,
        *,
        bots: int = 6,
        learners: Sequence[str] | None = None,
        red: Control = "freelance",
        blue: Control = "freelance",
        mode: str = "capture_and_hold",
        time_limit: int = 400,
        map: str = "warzone",
        corridors: bool = True,
        backend: Backend = "run",
        reward: RewardFunction | None = None,
        seed: int | None = None,
        log_dir: Path | str | None = None,
    ) -> None:
        if learners is None:
            learners = [f"red-{i}" for i in range(1, bots + 1)] if isinstance(bots, int) else []
        config = MatchConfig(
            bots=bots,
            learners=(learners,) if isinstance(learners, str) else tuple(learners),
            red=red,
            blue=blue,
            mode=mode,
            time_limit=time_limit,
            map=map,
            corridors=corridors,
            backend=backend,
        )
        self._episode = Episode(config, reward, log_dir)
        self.possible_agents: list[str] = list(config.learners)
        self.agents: list[str] = []
        self.render_mode = None
        self._rng = np.random.default_rng(seed)
        # One space object per agent, always the same, as PettingZoo requires; each agent's
        # action space is its own, so that seeding one leaves the others alone.
        self._observation_space = observation_space()
        count = self._episode.decoder.count
        self._action_spaces = {agent: spaces.Discrete(count) for agent in self.possible_agents}

    def observation_space(self, agent: str) -> spaces.Box:
        self._check_agent(agent)
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Discrete:
        self._check_agent(agent)
        return self._action_spaces[agent]

    def _check_agent(self, agent: str) -> None:
        if agent not in self._action_spaces:
            raise KeyError(f"{agent!r} is no agent of this environment: {self.possible_agents}")

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Observation], dict[str, dict[str, Any]]]:
        """Start a match; ``seed`` seeds the world and every warband agent (None: the next
        seed of the environment's generator)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        match_seed = seed if seed is not None else next_seed(self._rng)
        observations, infos = self._episode.reset(match_seed)
        self.agents = list(self.possible_agents)
        return observations, infos

    def step(
        self, actions: dict[str, int]
    ) -> tuple[
        dict[str, Observation],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """One tick: each learner's action (a missing one sends no act)."""
        if not self.agents:
            raise RuntimeError("the match is over: call reset() to start another")
        observations, rewards, ended, infos = self._episode.step(actions)
        last = self._episode.last
        decided = ended and last is not None and last.outcome is not None
        terminations = dict.fromkeys(self.agents, ended and decided)
        truncations = dict.fromkeys(self.agents, ended and not decided)
        if ended:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> None:
        """Nothing: watch a match with ``log_dir`` and ``warband view LOG_DIR``."""
        return None

    def close(self) -> None:
        self._episode.close()
