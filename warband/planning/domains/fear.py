"""The F.E.A.R. combat domain (Orkin, "Three States and a Plan", GDC 2006).

Three characters share one goal set (Orkin's ``GDC06`` set, Patrol and KillEnemy, plus the
Cover goal whose node the Goto action is bound to) and differ only in their action sets:

- the **soldier** fires his weapon (reloading first if needed) and gets into the warehouse by
  opening the door, kicking it, or diving through the window into melee range;
- the **assassin** cloaks, sticks to the wall above the player and lunges down at him;
- the **rat** can walk and patrol but has no way to attack, so KillEnemy has no plan and it
  falls back to the lower-priority Patrol goal.

Orkin's blocked door is modelled with procedural preconditions that read working memory: once
the soldier has tried to open the held door and failed, ``FearMemory.remember_failure`` records
it, the old plan no longer replays, and replanning picks kicking, then the window.

The map: every character starts in the ``corridor``; the player is in the ``warehouse`` behind
``door-1`` (closed), which has a window; ``patrol-a``, ``patrol-b``, ``cover-1`` and ``cover-2``
are reachable on foot. For a benchmark::

    start, brain, goal, optimal_cost, memory = fear.problem("soldier")

A context of None stands for the default :class:`FearMemory` (player visible, nothing failed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...exceptions import PlanningError
from ..goap.model import Action, Brain, CheckFunction, Goal
from ..goap.state import Bindings, StateValue, WorldState, eq
from .problem import GoapProblem

KINDS = ("soldier", "assassin", "rat")
"""The character kinds Orkin compares, all with the same goal set."""
ENEMY = "player"
"""The enemy every character targets."""
DOOR = "door-1"
"""The warehouse door."""
WALKABLE = frozenset({"corridor", "patrol-a", "patrol-b", "cover-1", "cover-2"})
"""Nodes reachable on foot without passing the door."""


@dataclass(frozen=True)
class FearMemory:
    """The working memory goals and procedural preconditions read (the planning context)."""

    enemy_visible: bool = True
    """The player has been seen: KillEnemy is relevant."""
    threatened: bool = False
    """The character is under fire: Cover is relevant (when a cover node is known)."""
    cover_node: str | None = None
    """The cover node the Cover goal sends the character to."""
    failed: frozenset[str] = frozenset()
    """Actions that failed on earlier attempts (e.g. "OpenDoor" on the held door)."""
    walkable: frozenset[str] = WALKABLE
    """Nodes the Goto action can reach."""

    def remember_failure(self, action: str) -> FearMemory:
        """A copy recording that ``action`` failed; plans relying on it no longer check out."""
        return replace(self, failed=self.failed | {action})


_DEFAULT_MEMORY = FearMemory()


def _memory(context: Any) -> FearMemory:
    # No context means the opening situation, so find_plan(start, goal, brain) works as is.
    if context is None:
        return _DEFAULT_MEMORY
    if not isinstance(context, FearMemory):
        raise PlanningError(
            f"the F.E.A.R. domain needs a FearMemory as its planning context, got {context!r}"
        )
    return context


def _not_failed(name: str) -> CheckFunction:
    def check(context: Any, bindings: Bindings) -> bool:
        return name not in _memory(context).failed

    return check


def _walkable(context: Any, bindings: Bindings) -> bool:
    return bindings["node"] in _memory(context).walkable


def goals(agent: str) -> tuple[Goal, ...]:
    """The shared goal set, for the character ``agent``: KillEnemy, Cover, Patrol."""

    def kill_relevancy(context: Any) -> float:
        return 0.8 if _memory(context).enemy_visible else 0.0

    def cover_relevancy(context: Any) -> float:
        memory = _memory(context)
        return 0.9 if memory.threatened and memory.cover_node else 0.0

    def cover_node(context: Any) -> dict[str, StateValue]:
        node = _memory(context).cover_node
        return {} if node is None else {"node": node}

    return (
        Goal("KillEnemy", {f"target_dead({ENEMY})": True}, relevancy=kill_relevancy),
        Goal("Cover", {f"at({agent})": "?node"}, relevancy=cover_relevancy, bind=cover_node),
        Goal("Patrol", {f"patrolled({agent})": True}, relevancy=0.3),
    )


def _movement(agent: str) -> list[Action]:
    at = f"at({agent})"
    return [
        Action("Goto", effects={at: "?node"}, check=_walkable, cost=1),
        Action("Patrol", effects={f"patrolled({agent})": True}, cost=2),
    ]


def _soldier(agent: str) -> list[Action]:
    at = f"at({agent})"
    loaded = f"weapon_loaded({agent})"
    door = eq(f"door_open({DOOR})", True, any_agent=True)
    return [
        Action(
            "Attack",
            preconditions={loaded: True, at: "warehouse"},
            effects={f"target_dead({ENEMY})": True},
        ),
        Action("Reload", effects={loaded: True}),
        Action(
            "AttackMelee",
            preconditions={at: "beside-player"},
            effects={f"target_dead({ENEMY})": True},
        ),
        Action(
            "OpenDoor",
            preconditions={at: "corridor"},
            effects={f"door_open({DOOR})": True},
            check=_not_failed("OpenDoor"),
        ),
        Action(
            "KickDoor",
            preconditions={at: "corridor"},
            effects={f"door_open({DOOR})": True},
            check=_not_failed("KickDoor"),
            cost=2,
        ),
        Action(
            "EnterWarehouse", preconditions=[eq(at, "corridor"), door], effects={at: "warehouse"}
        ),
        Action(
            "DiveThroughWindow",
            preconditions={at: "corridor"},
            effects={at: "beside-player"},
            check=_not_failed("DiveThroughWindow"),
            cost=4,
        ),
    ]


def _assassin(agent: str) -> list[Action]:
    at = f"at({agent})"
    cloaked = f"cloaked({agent})"
    return [
        Action("Cloak", effects={cloaked: True}),
        Action(
            "RunCloaked",
            preconditions={cloaked: True},
            effects={f"patrolled({agent})": True},
        ),
        Action("StickToWall", preconditions={cloaked: True}, effects={at: "wall-above-player"}),
        Action(
            "LungeFromWall",
            preconditions={at: "wall-above-player"},
            effects={f"target_dead({ENEMY})": True, at: "beside-player"},
        ),
        Action(
            "MeleeFists",
            preconditions={at: "beside-player"},
            effects={f"target_dead({ENEMY})": True},
        ),
    ]


def brain(kind: str, agent: str | None = None) -> Brain:
    """The brain of a ``soldier``, ``assassin`` or ``rat``; ``agent`` defaults to ``kind``.

    All three share :func:`goals`; their action sets differ (the assassin runs cloaked instead
    of the plain Patrol walk).
    """
    agent = agent or kind
    if kind == "soldier":
        actions = _movement(agent) + _soldier(agent)
    elif kind == "assassin":
        actions = _movement(agent)[:1] + _assassin(agent)
    elif kind == "rat":
        actions = _movement(agent)
    else:
        raise PlanningError(f"unknown F.E.A.R. character {kind!r}; known kinds: {', '.join(KINDS)}")
    return Brain(kind, goals(agent), actions)


def start_state(agent: str, *, weapon_loaded: bool = True) -> WorldState:
    """The opening situation: in the corridor, door closed, player alive, not yet patrolled."""
    return WorldState(
        {
            f"at({agent})": "corridor",
            f"weapon_loaded({agent})": weapon_loaded,
            f"cloaked({agent})": False,
            f"patrolled({agent})": False,
            f"target_dead({ENEMY})": False,
            f"door_open({DOOR})": False,
        }
    )


_OPTIMAL: dict[tuple[str, str], float | None] = {
    ("soldier", "KillEnemy"): 3.0,  # OpenDoor, EnterWarehouse, Attack
    ("soldier", "Patrol"): 2.0,
    ("assassin", "KillEnemy"): 3.0,  # Cloak, StickToWall, LungeFromWall
    ("assassin", "Patrol"): 2.0,  # Cloak, RunCloaked
    ("rat", "KillEnemy"): None,  # no attack action at all
    ("rat", "Patrol"): 2.0,
}


def problem(kind: str, goal: str = "KillEnemy") -> GoapProblem:
    """The opening situation for ``kind`` planning ``goal`` (``KillEnemy`` or ``Patrol``).

    Returns ``GoapProblem(start, brain, goal, optimal_cost, context)``: the context is the
    default :class:`FearMemory` (player visible, nothing failed yet); ``optimal_cost`` is None
    when no plan exists (the rat's KillEnemy).
    """
    character = brain(kind)
    chosen = character.goal(goal)
    if (kind, goal) not in _OPTIMAL:
        raise PlanningError(
            f"no ready-made F.E.A.R. problem for goal {goal!r}; use KillEnemy or Patrol, or "
            "build one from brain(), start_state() and FearMemory()"
        )
    return GoapProblem(start_state(kind), character, chosen, _OPTIMAL[kind, goal], FearMemory())
