"""Rewards: what one learning agent earns in one step, per game mode, or by your function.

The default, :func:`default_reward`, is the same shape in every mode; only the weight of the
score changes (:data:`~warband.env.observations.SCORE_SCALE`: the points a team wins with in
Capture and Hold (100) and Body Count (20 kills), 3 goals in Search and Retrieve, Assassination
and Search and Destroy):

- **team score**: (the change of its team's points - the change of the best other team's) /
  the mode's scale. In Capture and Hold points come every tick per point held, in Body Count
  per kill, in the others per goal (an object returned, a VIP killed or kept, a target
  destroyed or saved).
- **the end**: +1 when its team wins, -1 when it loses, 0 for a draw (the step the world
  decides in).
- **its own deeds**: +0.1 for each enemy it downs (``killed`` events naming it the killer),
  -0.1 when it is downed, +0.02 for each shot of it that hits (``hit``).

Pass ``reward=your_function`` to an environment to replace it: it is called once per agent and
step with a :class:`RewardInput` and returns a float.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..world.vocabulary import HIT, KILLED
from .observations import SCORE_SCALE, Facts


@dataclass(frozen=True, slots=True)
class RewardInput:
    """Everything a reward function may read about one agent's step."""

    agent: str
    team: str
    mode: str
    facts: Facts
    """The agent's Percept after the step."""
    events: Facts
    """The step's events the agent was told (public and its own)."""
    scores_before: Mapping[str, int]
    scores_after: Mapping[str, int]
    outcome: Mapping[str, Any] | None = None
    """The world's outcome (``winner``, ``reason``...) in the step it decided, else None."""
    act: str | None = None
    """The verb the agent sent the world this step (None: no act)."""
    act_accepted: bool | None = None
    """Whether the world took that act; None when it sent none, or when the match ended before
    the world's answer reached it."""
    extra: Mapping[str, Any] = field(default_factory=dict)


RewardFunction = Callable[[RewardInput], float]
"""A user's reward: one float per agent and step."""

KILL_REWARD = 0.1
DOWNED_PENALTY = -0.1
HIT_REWARD = 0.02


def default_reward(step: RewardInput) -> float:
    """The reward of the module docstring."""
    scale = SCORE_SCALE.get(step.mode, 3.0)
    own = step.scores_after.get(step.team, 0) - step.scores_before.get(step.team, 0)
    others = [
        step.scores_after.get(t, 0) - step.scores_before.get(t, 0)
        for t in step.scores_after
        if t != step.team
    ]
    reward = (own - max(others, default=0)) / scale
    if step.outcome is not None:
        winner = step.outcome.get("winner")
        reward += 0.0 if not winner else (1.0 if winner == step.team else -1.0)
    for killed in KILLED.all(step.events):
        if killed.killer == step.agent and killed.victim_team != step.team:
            reward += KILL_REWARD
        if killed.victim == step.agent:
            reward += DOWNED_PENALTY
    reward += HIT_REWARD * sum(1 for e in step.events if HIT.matches(e))
    return float(reward)
