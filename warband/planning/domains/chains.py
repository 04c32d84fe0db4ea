"""Crafting chains: deep GOAP problems with many alternative producers, for benchmarks and tests.

A problem is a chain of ``depth`` parts. ``have(part-0)`` holds at the start, the goal is
``have(part-<depth>) == true``, and part ``i`` is crafted from part ``i-1`` by ``Craft<i>``
(cost 1..4) with one of three tools, ``tool(t-0..2)``, which all hold at the start. Each level
also has ``alternatives`` other actions, drawn at random among three kinds:

- **decoy** (``Tinker<i>-<j>``): usable as soon as part ``i-1`` exists, makes an irrelevant
  ``junk(...)`` fact and, half the time, wears a tool out (sets it false): useless, and worse
  than useless to a forward planner that wanders into it;
- **dead end** (``Rush<i>-<j>``): makes part ``i`` cheaper than ``Craft<i>`` where it can, but
  needs a ``blueprint(...)`` that nothing makes;
- **detour** (``Salvage<i>-<j>`` then ``Rebuild<i>-<j>``): reaches part ``i`` through a
  ``scrap(...)`` fact at a higher total cost than ``Craft<i>``; ``Rebuild`` needs a kit of its
  own, ``kit(<i>-<j>)``, which holds at the start (a decoy may wear it out too). A regressive
  planner meets the same part again and again with another set of kits to keep: that is how
  its search explodes without duplicate detection and a heuristic that sees along the chain.

Parts are never lost and every alternative is dearer or impossible, so the optimal plan is
``Craft1 .. Craft<depth>`` and the optimal cost is the sum of their costs. Actions are shuffled;
everything comes from ``random.Random(seed)``::

    start, brain, goal, optimal_cost, context = chains.problem(depth=16, alternatives=8, seed=1)

The benchmark range is depth 4..24 and 2..12 alternatives per level.
"""

from __future__ import annotations

import random

from ...exceptions import PlanningError
from ..goap.model import Action, Brain, Goal
from ..goap.state import WorldState
from .problem import GoapProblem

ALTERNATIVE_KINDS = ("decoy", "dead_end", "detour")
"""The kinds of alternative actions drawn for each level."""
TOOLS = 3
"""How many tools there are; ``Craft<i>`` uses tool ``i mod TOOLS``."""


def _part(index: int) -> str:
    return f"have(part-{index})"


def _tool(index: int) -> str:
    return f"tool(t-{index % TOOLS})"


def _alternative(
    rng: random.Random, level: int, number: int, cost: int, kind: str, kits: list[str]
) -> list[Action]:
    tag = f"{level}-{number}"
    previous, here = _part(level - 1), _part(level)
    if kind == "decoy":
        effects: dict[str, bool] = {f"junk({tag})": True}
        if rng.random() < 0.5:
            worn = [_tool(t) for t in range(TOOLS)] + kits
            effects[rng.choice(worn)] = False
        return [Action(f"Tinker{tag}", preconditions={previous: True}, effects=effects, cost=1)]
    if kind == "dead_end":
        cheap = rng.randint(1, max(1, cost - 1))
        pre = {f"blueprint({tag})": True}
        return [Action(f"Rush{tag}", preconditions=pre, effects={here: True}, cost=cheap)]
    first = rng.randint(1, cost)
    second = cost - first + rng.randint(1, 3)
    scrap, kit = f"scrap({tag})", f"kit({tag})"
    kits.append(kit)
    return [
        Action(
            f"Salvage{tag}",
            preconditions={previous: True, _tool(rng.randrange(TOOLS)): True},
            effects={scrap: True},
            cost=first,
        ),
        Action(
            f"Rebuild{tag}",
            preconditions={scrap: True, kit: True},
            effects={here: True},
            cost=second,
        ),
    ]


def problem(depth: int, alternatives: int, seed: int) -> GoapProblem:
    """A seeded crafting chain: ``GoapProblem(start, brain, goal, optimal_cost, None)``.

    ``depth`` levels (at least 1), ``alternatives`` alternative actions per level (at least 0).
    The same arguments always give the same problem.
    """
    if depth < 1:
        raise PlanningError(f"chain depth must be at least 1, got {depth}")
    if alternatives < 0:
        raise PlanningError(f"chain alternatives must be at least 0, got {alternatives}")
    rng = random.Random(seed)
    costs = [rng.randint(1, 4) for _ in range(depth)]
    actions: list[Action] = []
    kits: list[str] = []
    for level, cost in enumerate(costs, start=1):
        actions.append(
            Action(
                f"Craft{level}",
                preconditions={_part(level - 1): True, _tool(level): True},
                effects={_part(level): True},
                cost=cost,
            )
        )
        for number in range(alternatives):
            kind = rng.choice(ALTERNATIVE_KINDS)
            actions.extend(_alternative(rng, level, number, cost, kind, kits))
    rng.shuffle(actions)
    start = WorldState(
        {_part(0): True, **{_tool(t): True for t in range(TOOLS)}, **dict.fromkeys(kits, True)}
    )
    goal = Goal("Craft", {_part(depth): True})
    brain = Brain(f"chains-d{depth}-b{alternatives}-s{seed}", [goal], actions)
    return GoapProblem(start, brain, goal, float(sum(costs)), None)
