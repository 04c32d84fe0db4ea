"""The Gymnasium environment of one learning squad leader in a Warzone match of warband's agents.

::

    from warband.env import WarzoneSquadEnv

    env = WarzoneSquadEnv(learner="red-squad-1", blue="freelance")
    observation, info = env.reset(seed=1)
    terminated = truncated = False
    while not (terminated or truncated):
        observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
    env.close()

The learner takes the place of one squad of its team's hierarchy (its team is always led by a
commander and squads, :mod:`warband.env.leader`): the commander gives it members (``lead``)
and objectives, as to any squad, and its members are warband's bots, who obey its orders as
they obey a squad's. Its other squads, its bots and the other team (``hierarchy`` or
``freelance``) are warband's.

- **observations**: :mod:`warband.env.squad_observations` (what a squad knows: its members'
  reports, the threats they reported, the places of the map, its commander's order);
- **actions**: :mod:`warband.env.squad_actions` (the order it gives its members: regroup at,
  defend or attack one of the map's places, or keep the order in force);
- **rewards**: :func:`~warband.env.rewards.default_reward` for the learner's team, as for a
  learning bot (the team's score in the mode, +1 / -1 at the end; a squad downs nobody itself,
  so the terms of a bot's own deeds are 0), or ``reward=your_function`` of a
  :class:`~warband.env.rewards.RewardInput` (its ``facts`` are the squad's memory);
- **termination**: as :class:`~warband.env.WarzoneEnv`: terminated when the world decides the
  game, truncated when the run ends otherwise;
- **info**: ``tick``, ``orders`` (each ``[member, task, args]`` the squad sent this step),
  ``order`` (the order in force: ``[verb, marker]``, or None) and in the last step ``outcome``
  and ``end_reason``.

``gymnasium.make("warband/WarzoneSquad-v0", ...)`` builds it too once ``warband.env`` is
imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import gymnasium
import numpy as np
from gymnasium import spaces

from ..agents.factions import Control
from ..exceptions import ConfigurationError
from .episode import next_seed, setup_logging
from .match import MatchConfig, StepResult, open_match
from .observations import Observation
from .rewards import RewardFunction, RewardInput, default_reward
from .squad_actions import SQUAD_ACTION_COUNT, squad_places
from .squad_observations import SQUAD_OBSERVATION_SIZE


def squad_observation_space() -> spaces.Box:
    """The space of :mod:`warband.env.squad_observations`'s vectors."""
    return spaces.Box(-1.0, 1.0, shape=(SQUAD_OBSERVATION_SIZE,), dtype=np.float32)


class WarzoneSquadEnv(gymnasium.Env[Observation, np.int64]):
    """A Gymnasium ``Env``: ``learner`` (a squad id, ``<team>-squad-<n>``) leads warband's bots.

    ``bots`` per team (1..12; a team has one squad for every two bots), ``red`` / ``blue``
    (the learner's team must be ``"hierarchy"``, the default; the other ``"hierarchy"`` or
    ``"freelance"``), ``mode``, ``time_limit``, ``map``, ``corridors`` (the other squads'
    routes), ``reward`` and ``log_dir`` as for :class:`~warband.env.WarzoneParallelEnv`. A bad
    value raises :class:`~warband.exceptions.ConfigurationError` naming it.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        *,
        learner: str = "red-squad-1",
        bots: int = 6,
        red: Control = "hierarchy",
        blue: Control = "freelance",
        mode: str = "capture_and_hold",
        time_limit: int = 400,
        map: str = "warzone",
        corridors: bool = True,
        reward: RewardFunction | None = None,
        log_dir: Path | str | None = None,
    ) -> None:
        if reward is not None and not callable(reward):
            raise ConfigurationError(
                f"reward must be a function of a RewardInput returning a float, got {reward!r}"
            )
        self.config = MatchConfig(
            bots=bots,
            learners=(),
            leaders=(learner,),
            red=red,
            blue=blue,
            mode=mode,
            time_limit=time_limit,
            map=map,
            corridors=corridors,
        )
        setup_logging(log_dir)
        self.learner = learner
        self.team = self.config.team_of(learner)
        self.reward = reward or default_reward
        self._match = open_match(self.config)
        self.places = squad_places(self._match.map)
        self.observation_space = cast(spaces.Space[Observation], squad_observation_space())
        self.action_space = spaces.Discrete(SQUAD_ACTION_COUNT)
        self._last: StepResult | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start a match; ``seed`` seeds the world and every warband agent."""
        super().reset(seed=seed)
        match_seed = seed if seed is not None else next_seed(self.np_random)
        self._last = self._match.reset(match_seed)
        return self._observation(self._last), self._info(self._last)

    def step(self, action: np.int64 | int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        before = self._last
        if before is None or before.ended:
            raise RuntimeError("the match is over or was never started: call reset()")
        chosen = int(action)
        if not 0 <= chosen < SQUAD_ACTION_COUNT:
            raise ValueError(
                f"squad action {chosen} is not in range({SQUAD_ACTION_COUNT}): see "
                "warband.env.squad_actions"
            )
        after = self._match.step({self.learner: chosen})
        self._last = after
        decided = after.ended and after.outcome is not None
        return (
            self._observation(after),
            self._reward(before, after),
            decided,
            after.ended and not decided,
            self._info(after),
        )

    def _observation(self, result: StepResult) -> Observation:
        observation = result.agents[self.learner].observation
        assert observation is not None  # a leader's view always carries its observation
        return observation

    def _reward(self, before: StepResult, after: StepResult) -> float:
        view = after.agents[self.learner]
        step = RewardInput(
            agent=self.learner,
            team=self.team,
            mode=self.config.mode,
            facts=view.facts,
            events=view.events,
            scores_before=before.scores,
            scores_after=after.scores,
            outcome=after.outcome,
        )
        return float(self.reward(step))

    def _info(self, result: StepResult) -> dict[str, Any]:
        view = result.agents[self.learner]
        info: dict[str, Any] = {"tick": result.tick, **view.extra}
        if result.ended:
            info["outcome"] = result.outcome
            info["end_reason"] = result.reason
        return info

    def close(self) -> None:
        self._match.close()
        super().close()
