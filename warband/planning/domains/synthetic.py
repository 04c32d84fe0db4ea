"""Synthetic GOAP problems with a known optimal cost, for benchmarks and tests.

A problem is a chain of ``depth`` stages: ``done(stage-0)`` holds at the start and the goal is
``done(stage-<depth>) == true`` while ``intact(vault) == true`` (which holds at the start).
Stage ``i`` is reached from stage ``i-1`` by the chain action ``Advance<i>`` (cost 1..5). Each
stage also has ``distractors`` other ways to reach it, drawn at random among five kinds:

- **pricier**: same precondition, costs more than ``Advance<i>``;
- **dead end**: cheap, but needs ``unlocked(trap-...)``, which nothing can make true;
- **clobber**: cheap, but also sets ``intact(vault)`` to false, which nothing restores — the
  trap of regressive planners that accept an effect undoing another open condition;
- **shortcut**: starts from stage ``i-2`` and costs more than the two chain actions it skips;
- **detour**: needs ``prepared(side-...)``, set by a helper action from stage ``i-1``; the two
  together cost more than ``Advance<i>``.

None of them can beat the chain, so the optimal cost is the sum of the chain costs. Actions are
shuffled so the chain is not listed first. Everything comes from ``random.Random(seed)``::

    start, brain, goal, optimal_cost, context = synthetic.problem(depth=8, distractors=4, seed=1)

The benchmark range is depth 4..16 and 2..8 distractors per stage; other sizes also work.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ...exceptions import PlanningError
from ..goap.model import Action, Brain, Goal
from ..goap.state import WorldState
from .problem import GoapProblem

DISTRACTOR_KINDS = ("pricier", "dead_end", "clobber", "shortcut", "detour")
"""The kinds of distracting actions drawn for each stage."""


def _stage(index: int) -> str:
    return f"done(stage-{index})"


class _Stage:
    """What the distractors of one stage are built from."""

    def __init__(self, rng: random.Random, stage: int, number: int, costs: list[int]) -> None:
        self.rng = rng
        self.tag = f"{stage}-{number}"
        self.before = _stage(stage - 2) if stage >= 2 else None
        self.previous = _stage(stage - 1)
        self.here = _stage(stage)
        self.cost = costs[stage]
        self.skipped_cost = costs[stage - 1] + costs[stage]

    def pricier(self) -> list[Action]:
        cost = self.cost + self.rng.randint(1, 3)
        pre, eff = {self.previous: True}, {self.here: True}
        return [Action(f"Pricier{self.tag}", preconditions=pre, effects=eff, cost=cost)]

    def dead_end(self) -> list[Action]:
        pre, eff = {f"unlocked(trap-{self.tag})": True}, {self.here: True}
        return [Action(f"DeadEnd{self.tag}", preconditions=pre, effects=eff, cost=self._cheap())]

    def clobber(self) -> list[Action]:
        pre, eff = {self.previous: True}, {self.here: True, "intact(vault)": False}
        return [Action(f"Clobber{self.tag}", preconditions=pre, effects=eff, cost=self._cheap())]

    def shortcut(self) -> list[Action]:
        assert self.before is not None
        cost = self.skipped_cost + self.rng.randint(1, 3)
        pre, eff = {self.before: True}, {self.here: True}
        return [Action(f"Shortcut{self.tag}", preconditions=pre, effects=eff, cost=cost)]

    def detour(self) -> list[Action]:
        side = f"prepared(side-{self.tag})"
        return [
            Action(
                f"Prepare{self.tag}",
                preconditions={self.previous: True},
                effects={side: True},
                cost=self.cost,
            ),
            Action(f"Detour{self.tag}", preconditions={side: True}, effects={self.here: True}),
        ]

    def _cheap(self) -> int:
        """A cost below the chain action's where possible, to lure a careless planner."""
        return self.rng.randint(1, max(1, self.cost - 1))


def _distractor(rng: random.Random, stage: int, number: int, costs: list[int]) -> list[Action]:
    """One distracting way to reach ``stage`` (one or two actions)."""
    kinds = [kind for kind in DISTRACTOR_KINDS if stage >= 2 or kind != "shortcut"]
    builder = _Stage(rng, stage, number, costs)
    build: Callable[[], list[Action]] = getattr(builder, rng.choice(kinds))
    return build()


def problem(depth: int, distractors: int, seed: int) -> GoapProblem:
    """A seeded synthetic problem: ``GoapProblem(start, brain, goal, optimal_cost, None)``.

    ``depth`` stages (at least 1), ``distractors`` distracting ways per stage (at least 0).
    The same arguments always give the same problem.
    """
    if depth < 1:
        raise PlanningError(f"synthetic depth must be at least 1, got {depth}")
    if distractors < 0:
        raise PlanningError(f"synthetic distractors must be at least 0, got {distractors}")
    rng = random.Random(seed)
    costs = [0] + [rng.randint(1, 5) for _ in range(depth)]
    actions: list[Action] = []
    for stage in range(1, depth + 1):
        actions.append(
            Action(
                f"Advance{stage}",
                preconditions={_stage(stage - 1): True},
                effects={_stage(stage): True},
                cost=costs[stage],
            )
        )
        for number in range(distractors):
            actions.extend(_distractor(rng, stage, number, costs))
    rng.shuffle(actions)
    start = WorldState({"intact(vault)": True, **{_stage(i): i == 0 for i in range(depth + 1)}})
    goal = Goal("Finish", {_stage(depth): True, "intact(vault)": True})
    brain = Brain(f"synthetic-d{depth}-k{distractors}-s{seed}", [goal], actions)
    return GoapProblem(start, brain, goal, float(sum(costs)), None)
