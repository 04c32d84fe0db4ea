"""One episode seen by learners: a match's raw steps turned into observations and rewards.

The shared part of :class:`~warband.env.WarzoneParallelEnv` and :class:`~warband.env.WarzoneEnv`:
it decodes actions into acts (:mod:`~warband.env.actions`), plays the match
(:mod:`~warband.env.match`), encodes each learner's Percept (:mod:`~warband.env.observations`)
and computes its reward (:mod:`~warband.env.rewards`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from ..exceptions import ConfigurationError
from ..messaging.tracing import configure_logging
from .actions import Act as ActTuple
from .actions import ActionDecoder
from .match import MatchConfig, StepResult, open_match
from .observations import Observation, ObservationEncoder
from .rewards import RewardFunction, RewardInput, default_reward


def setup_logging(log_dir: Path | str | None) -> None:
    """With ``log_dir``, the run's events and messages go there as in ``warband run --log``
    (``warband trace`` and ``warband view`` read it); else, unless the program configured
    logging itself, only warnings and errors, on stderr."""
    if log_dir is not None:
        configure_logging(Path(log_dir), "env")
    elif not structlog.is_configured():
        configure_logging(None, "env", level="warning")


class Episode:
    """Plays matches of ``config`` for its learners and reports what each learner gets."""

    def __init__(
        self,
        config: MatchConfig,
        reward: RewardFunction | None = None,
        log_dir: Path | str | None = None,
    ) -> None:
        if reward is not None and not callable(reward):
            raise ConfigurationError(
                f"reward must be a function of a RewardInput returning a float, got {reward!r}"
            )
        setup_logging(log_dir)
        self.config = config
        self.match = open_match(config)
        self.decoder = ActionDecoder(self.match.map)
        self.encoder = ObservationEncoder(self.match.map, config.mode, config.time_limit)
        self.reward = reward or default_reward
        self.last: StepResult | None = None
        self._acts: dict[str, ActTuple | None] = {}

    def reset(self, seed: int) -> tuple[dict[str, Observation], dict[str, dict[str, Any]]]:
        self.last = self.match.reset(seed)
        self._acts = {}
        return self._observations(self.last), self._infos(self.last)

    def step(
        self, actions: Mapping[str, int]
    ) -> tuple[dict[str, Observation], dict[str, float], bool, dict[str, dict[str, Any]]]:
        """Observations, rewards, whether the match ended, and infos, for every learner."""
        if self.last is None:
            raise RuntimeError("call reset() before step()")
        before = self.last
        self._acts = {
            agent: self.decoder.decode(int(actions[agent]), before.agents[agent].facts)
            for agent in self.config.learners
            if agent in actions
        }
        self.last = self.match.step(self._acts)
        rewards = {a: self._reward(a, before, self.last) for a in self.config.learners}
        return self._observations(self.last), rewards, self.last.ended, self._infos(self.last)

    def _observations(self, result: StepResult) -> dict[str, Observation]:
        return {
            agent: self.encoder.encode(
                view.facts, view.events, act_rejected=view.act_accepted is False
            )
            for agent, view in result.agents.items()
        }

    def _reward(self, agent: str, before: StepResult, after: StepResult) -> float:
        view = after.agents[agent]
        step = RewardInput(
            agent=agent,
            team=self.config.team_of(agent),
            mode=self.config.mode,
            facts=view.facts,
            events=view.events,
            scores_before=before.scores,
            scores_after=after.scores,
            outcome=after.outcome,
            act=act[0] if (act := self._acts.get(agent)) is not None else None,
            act_accepted=view.act_accepted,
        )
        return float(self.reward(step))

    def _infos(self, result: StepResult) -> dict[str, dict[str, Any]]:
        infos: dict[str, dict[str, Any]] = {}
        for agent, view in result.agents.items():
            act = self._acts.get(agent)
            info: dict[str, Any] = {
                "tick": result.tick,
                "act": act[0] if act is not None else None,
                "act_accepted": view.act_accepted,
                "act_reason": view.act_reason,
            }
            if result.ended:
                info["outcome"] = result.outcome
                info["end_reason"] = result.reason
            infos[agent] = info
        return infos

    def close(self) -> None:
        self.match.close()


def next_seed(rng: np.random.Generator) -> int:
    """A match seed drawn from an environment's generator (``reset()`` without a seed)."""
    return int(rng.integers(0, 2**31 - 1))
