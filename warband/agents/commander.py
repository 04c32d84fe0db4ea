"""The Killzone commander: the strategy layer of the hierarchy, one per faction.

Its three parts (§29.6.1): a game-mode part that turns the game state into objectives, the
assignment of objectives and bots to squads, and the monitoring of the squads' objectives.
The first two are pure functions (:mod:`warband.agents.assignment`); this module is the agent
around them. Its domain (``domains/commander.htn``) is small, because Killzone's commander is
an objective system, not a planner: it re-assigns every few ticks, and the ``!assign`` task
turns what changed into orders:

- a bot that joins a squad gets ``join <squad>`` (it reports to that squad from then on);
- a squad whose members or objective changed gets one command sequence: ``lead <members>
  <lane>`` (the lane: which of the routes to a shared objective it takes, :func:`squad_lanes`)
  then its objective (``capture <point>``, ``defend <waypoint>``, ``advance <waypoint>``);
  what it was doing before is withdrawn;
- a squad taken off duty has its orders withdrawn.

The commander watches its squads and its bots (they are its subordinates for the broker): a
bot whose process dies is left out of the next assignment, so its squad is re-led without it
(and another bot may join); when the supervisor restarts it and it reports again, it is
assigned anew. The VIP of Assassination is ordered directly (``hide <waypoint>``), outside
any squad. Every change of objectives is one ``commander.objectives`` log event.

The commander has no body in the world: it is one of the world's *observers*, and perceives
what its team knows (capture points, score, time left, the mode's objects). Where its bots
are, it learns from its squads' reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..planning import Task, load_domain_file
from ..planning.htn.domain import HtnFunction
from ..world import FactKind, Map, waypoint_path
from .assignment import Assignment, BotInfo, Objective, ObjectiveKind, assign
from .execute import TaskStatus, check_acts
from .facts import DEPARTED
from .role import FIXED_RATE, Role

if TYPE_CHECKING:
    from .agent import Agent

COMMANDER_DOMAIN = Path(__file__).parent / "domains" / "commander.htn"

ObjectiveSource = Callable[["Agent"], list[Objective]]
"""Reads the commander's memory and gives the mode's objectives."""

DirectOrders = Callable[["Agent"], dict[str, tuple[str, str]]]
"""Reads the commander's memory and names the bots it orders itself, outside any squad, with
their order (task, argument): an Assassination VIP told where to hide."""


def squad_order(objective: Objective) -> tuple[str, str]:
    """The order task and target a squad gets for ``objective``.

    - AdvanceToWaypoint: ``capture <point>`` for a capture point or TSP (``capture:`` ids),
      ``retrieve <object>`` for the retrieval object (``retrieve:``), else ``advance
      <waypoint>``;
    - DefendMarker: ``defend <marker>`` (the squad spreads over the marker's defend markers);
    - AttackEntity: ``attack <entity>``: an agent (the VIP), a destroy target, or the
      retrieval object (``attack:<object>``: whoever carries it);
    - EscortEntity: ``escort <entity>``: the VIP, or the retrieval object (``escort:<object>``).

    Objectives about the retrieval object name the object, not its carrier, so the order
    stays right when the carrier changes.
    """
    kind, _, about = objective.id.partition(":")
    if objective.kind == ObjectiveKind.ADVANCE_TO_WAYPOINT:
        if kind == "capture":
            return "capture", objective.target
        if kind == "retrieve":
            return "retrieve", objective.target
        return "advance", objective.waypoint
    if objective.kind == ObjectiveKind.DEFEND_MARKER:
        return "defend", objective.target
    entity = about if kind in ("attack", "escort") and about else objective.target
    if objective.kind == ObjectiveKind.ATTACK_ENTITY:
        return "attack", entity
    return "escort", entity


def travel_distance(game_map: Map) -> Callable[[str, str], float]:
    """Path length in waypoints between two waypoints of ``game_map`` (cached)."""
    cache: dict[tuple[str, str], float] = {}

    def distance(a: str, b: str) -> float:
        key = (a, b) if a <= b else (b, a)
        if key not in cache:
            path = waypoint_path(game_map, a, b)
            cache[key] = math.inf if path is None else float(len(path) - 1)
        return cache[key]

    return distance


class Assigner:
    """The ``!assign`` task of one commander: objectives, assignment, orders (module doc)."""

    def __init__(
        self,
        bots: Sequence[str],
        squads: Sequence[str],
        objectives: ObjectiveSource,
        distance: Callable[[str, str], float],
        *,
        max_squad_size: int = 4,
        direct: DirectOrders | None = None,
    ) -> None:
        self.bots = tuple(bots)
        self.direct = direct
        self.given: dict[str, tuple[str, str]] = {}
        """The direct orders given, by bot (what ``direct`` asked last time)."""
        self.left: dict[str, int] = {}
        """Bots that left the run, and the tick the commander first counted them gone."""
        self.seen: tuple[tuple[str, str], ...] = ()
        """The objectives of the last assignment: (id, kind)."""
        self.squads = tuple(squads)
        self.objectives = objectives
        self.distance = distance
        self.max_squad_size = max_squad_size
        self.current: Assignment | None = None
        self.assignments = 0

    def __call__(self, agent: Agent, task: Task) -> TaskStatus:
        goals = self.objectives(agent)
        seen = tuple((goal.id, goal.kind.value) for goal in goals)
        if seen != self.seen:
            self.seen = seen
            agent.log.info(
                "commander.objectives", tick=agent.tick, objectives=[list(g) for g in seen]
            )
        direct = self.direct(agent) if self.direct is not None else {}
        for bot, (order, arg) in sorted(direct.items()):
            if self.given.get(bot) != (order, arg):
                agent.give_order(bot, order, [arg])
        self.given = dict(direct)
        where = _member_positions(agent)
        gone = self._departed(agent)
        bots = [
            BotInfo(bot, where.get(bot), True)
            for bot in self.bots
            if bot not in direct and bot not in gone
        ]
        new = assign(
            goals,
            bots,
            self.current,
            distance=self.distance,
            squad_ids=self.squads,
            max_squad_size=self.max_squad_size,
        )
        self._order_changes(agent, new, {g.id: g for g in goals})
        if new != self.current:
            # The assignment table of `warband view`: logged when it changes, like objectives.
            agent.log.info(
                "commander.assignment",
                tick=agent.tick,
                squads=[[s.squad, s.objective, list(s.members)] for s in new.squads],
                free=list(new.free),
                direct={bot: list(order) for bot, order in sorted(direct.items())},
            )
        self.current = new
        self.assignments += 1
        return "done"

    def _departed(self, agent: Agent) -> set[str]:
        """The bots that left the run (the broker told the commander, which watches them) and
        have not come back. A bot whose process the supervisor restarted reports its status
        again: it is back, and the assignment takes it in like a new bot."""
        gone: set[str] = set()
        for departed in DEPARTED.all(agent.memory.facts.facts(DEPARTED.name)):
            bot = departed.agent
            if bot not in self.bots:
                continue
            left = self.left.setdefault(bot, agent.tick)
            report = agent.status_reports.get(bot)
            if report is not None and report.tick > left:
                agent.memory.forget(DEPARTED.name, bot)
                del self.left[bot]
                agent.log.info("commander.bot_back", bot=bot, tick=agent.tick)
            else:
                gone.add(bot)
        return gone

    def _order_changes(self, agent: Agent, new: Assignment, goals: dict[str, Objective]) -> None:
        changes = new.changes(self.current)
        for idle in changes.deactivated:
            agent.withdraw_orders(idle, "squad taken off duty")
        for bot, joined in changes.joined:
            agent.give_order(bot, "join", [joined])
        touched = {s for s, _ in changes.retasked}
        touched |= {s for _, s in changes.joined} | {s for _, s in changes.left}
        # A squad whose objective order ended (done, or failed: decimated) while it keeps the
        # objective is given it again: its members have respawned, or the job came back.
        touched |= {a.squad for a in new.squads if not agent.book.open(a.squad)}
        lanes = squad_lanes(new)
        for active in new.squads:
            if active.squad not in touched:
                continue
            task, target = squad_order(goals[active.objective])
            agent.withdraw_orders(active.squad, "new assignment")
            agent.start_sequence(active.squad)
            agent.give_order(active.squad, "lead", [tuple(active.members), lanes[active.squad]])
            agent.give_order(active.squad, task, [target])
            agent.end_sequence(active.squad)


def squad_lanes(assignment: Assignment) -> dict[str, int]:
    """Which route each active squad takes to its objective: 0 for the first squad on an
    objective (in pool order), 1 for the second... so squads sharing an objective spread over
    routes (the squad's pathfinder makes the routes of lower lanes dear)."""
    lanes: dict[str, int] = {}
    taken: dict[str, int] = {}
    for active in assignment.squads:
        lanes[active.squad] = taken.get(active.objective, 0)
        taken[active.objective] = lanes[active.squad] + 1
    return lanes


def _member_positions(agent: Agent) -> dict[str, str]:
    """Where the squads last said their members were."""
    where: dict[str, str] = {}
    for report in agent.status_reports.values():
        if report.status == "members":
            for bot, waypoint in report.details.items():
                if isinstance(waypoint, str) and waypoint:
                    where[bot] = waypoint
    return where


def commander_role(
    assigner: Assigner,
    *,
    domain: str | Path = COMMANDER_DOMAIN,
    functions: Mapping[str, HtnFunction] | None = None,
    facts: Sequence[FactKind[Any]] = (),
    **options: object,
) -> Role:
    """A commander role whose ``!assign`` task is ``assigner``, from the shipped domain or a
    designer's copy; ``functions`` are what that copy calls, ``facts`` what they write."""
    htn = load_domain_file(domain, functions, check=check_acts)
    return Role(
        "commander",
        htn,
        tasks={"!assign": assigner},
        facts=tuple(facts),
        **{"replan_every": FIXED_RATE, **options},  # type: ignore[arg-type]
    )
