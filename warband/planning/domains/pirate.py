"""Pittman's pirate demo (thesis §4.5): one goal, many ways to get the rum.

The pirate has a single goal, to get drunk, which one action satisfies: drinking rum. How he
obtains the rum depends on the world, which the user controls:

- an **unlawful** pirate simply steals the bottle from the tavern;
- a **lawful** pirate works at the docks to earn a gold coin and buys the bottle;
- with the **bottle removed**, he collects a cask of molasses from the storehouse and brews his
  own rum at the still;
- with neither bottle nor molasses there is no plan.

Lawfulness is a world-state property (``lawful(pirate)``), as in the demo where the user toggles
it. Walking costs depend on the destination (a cost function of the bound ``?place``). Removing
the bottle after a plan was made invalidates the plan when it is replayed, and replanning from
where the pirate stands picks the molasses. For a benchmark::

    start, brain, goal, optimal_cost, context = pirate.problem("lawful")
"""

from __future__ import annotations

from typing import Any

from ...exceptions import PlanningError
from ..goap.model import Action, Brain, Goal
from ..goap.state import Bindings, WorldState
from .problem import GoapProblem

PIRATE = "pirate"
"""The pirate's entity id, the subject of his own properties."""
WALK_COST = {"ship": 1.0, "docks": 1.0, "tavern": 2.0, "storehouse": 2.0, "still": 3.0}
"""What walking to each place costs (the planner does not know where he walks from)."""
VARIANTS = ("lawful", "unlawful", "no_bottle", "dry")
"""The ready-made situations of :func:`problem`."""


def _walk_cost(context: Any, bindings: Bindings) -> float:
    place = bindings["place"]
    if place not in WALK_COST:
        known = ", ".join(WALK_COST)
        raise PlanningError(f"the pirate cannot walk to {place!r}; known places: {known}")
    return WALK_COST[str(place)]


def brain(pirate: str = PIRATE) -> Brain:
    """The pirate's goal (GetDrunk) and his actions."""
    at = f"at({pirate})"
    has_rum = f"has_rum({pirate})"
    has_gold = f"has_gold({pirate})"
    has_molasses = f"has_molasses({pirate})"
    bottle = "bottle_in(tavern)"
    actions = [
        Action("Goto", effects={at: "?place"}, cost=_walk_cost, min_cost=min(WALK_COST.values())),
        Action(
            "DrinkRum",
            preconditions={has_rum: True},
            effects={f"drunk({pirate})": True, has_rum: False},
        ),
        Action(
            "StealRum",
            preconditions={f"lawful({pirate})": False, at: "tavern", bottle: True},
            effects={has_rum: True, bottle: False},
        ),
        Action(
            "BuyRum",
            preconditions={has_gold: True, at: "tavern", bottle: True},
            effects={has_rum: True, has_gold: False, bottle: False},
        ),
        Action("WorkForGold", preconditions={at: "docks"}, effects={has_gold: True}, cost=3),
        Action(
            "CollectMolasses",
            preconditions={at: "storehouse", "molasses_in(storehouse)": True},
            effects={has_molasses: True, "molasses_in(storehouse)": False},
        ),
        Action(
            "BrewRum",
            preconditions={has_molasses: True, at: "still"},
            effects={has_rum: True, has_molasses: False},
            cost=4,
        ),
    ]
    goal = Goal("GetDrunk", {f"drunk({pirate})": True}, relevancy=1.0)
    return Brain("pirate", [goal], actions)


def start_state(
    *, lawful: bool = True, bottle: bool = True, molasses: bool = True, pirate: str = PIRATE
) -> WorldState:
    """The pirate sober on his ship, without gold; the bottle and molasses as the user set them."""
    return WorldState(
        {
            f"at({pirate})": "ship",
            f"lawful({pirate})": lawful,
            f"drunk({pirate})": False,
            f"has_rum({pirate})": False,
            f"has_gold({pirate})": False,
            f"has_molasses({pirate})": False,
            "bottle_in(tavern)": bottle,
            "molasses_in(storehouse)": molasses,
        }
    )


_SITUATIONS: dict[str, tuple[tuple[bool, bool, bool], float | None]] = {
    # (lawful, bottle, molasses), optimal cost
    # Goto docks 1, WorkForGold 3, Goto tavern 2, BuyRum 1, DrinkRum 1
    "lawful": ((True, True, True), 8.0),
    # Goto tavern 2, StealRum 1, DrinkRum 1
    "unlawful": ((False, True, True), 4.0),
    # Goto storehouse 2, CollectMolasses 1, Goto still 3, BrewRum 4, DrinkRum 1
    "no_bottle": ((True, False, True), 11.0),
    "dry": ((True, False, False), None),
}


def problem(variant: str = "lawful") -> GoapProblem:
    """A ready-made situation: ``lawful``, ``unlawful``, ``no_bottle`` or ``dry``.

    Returns ``GoapProblem(start, brain, goal, optimal_cost, context)`` with context None and
    ``optimal_cost`` None when no plan exists (``dry``).
    """
    if variant not in _SITUATIONS:
        raise PlanningError(
            f"unknown pirate situation {variant!r}; known situations: {', '.join(VARIANTS)}"
        )
    (lawful, bottle, molasses), optimal = _SITUATIONS[variant]
    start = start_state(lawful=lawful, bottle=bottle, molasses=molasses)
    pirate = brain()
    return GoapProblem(start, pirate, pirate.goal("GetDrunk"), optimal, None)
