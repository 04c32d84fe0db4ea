"""The Killzone squad: the middle layer of the hierarchy, as a :class:`~warband.agents.Role`.

A squad "is similar to an individual": it gathers a world state, plans with its HTN domain
(``domains/squad.htn``) and executes. What differs is the data: it perceives nothing, its world
state comes from its members' reports, and it acts through them by ordering them. This module
gives the domain:

- **daemons**: ``reported`` (each member's last report: ``(reported member status what)``) and
  ``member_alive`` (members whose last status says alive, or that have not reported yet);
- **functions**: ``point_waypoint`` and ``rally_point`` (a regroup marker near the objective,
  on a cheap route from the team's spawn: the squad gathers there before it attacks);
- **tasks**: ``!take_members ?list`` (the commander's ``lead`` order names the members);
- **reports** up: every few ticks, where its members are.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..messaging import StatusReport
from ..planning import FactDB, Task, load_domain_file
from ..planning.htn_domain import HtnFunction
from ..values import Fact, Value
from ..world import Map, build_strategic_graph, choose_regroup_marker, plan_routes
from .execute import TaskStatus, check_acts
from .memory import Memory
from .role import Role

if TYPE_CHECKING:
    from .agent import Agent

SQUAD_DOMAIN = Path(__file__).parent / "domains" / "squad.htn"
"""The shipped squad domain; copy it to change how squads lead their members."""


def reported_daemon(memory: Memory, tick: int) -> list[Fact]:
    """``(reported member status what)`` for each member's last report with one detail."""
    facts = memory.facts
    members = {str(f[1]) for f in facts.facts("member")}
    return [
        ("reported", f[1], f[2], f[3])
        for f in facts.facts("status")
        if str(f[1]) in members and len(f) == 4
    ]


def member_alive_daemon(memory: Memory, tick: int) -> list[Fact]:
    """``(member_alive m)`` for members whose last status is ``alive`` or who said nothing yet."""
    facts = memory.facts
    dead = {str(f[1]) for f in facts.facts("status") if f[2] in ("downed", "dead")}
    return [("member_alive", f[1]) for f in facts.facts("member") if str(f[1]) not in dead]


def squad_functions(game_map: Map) -> dict[str, HtnFunction]:
    """The functions ``squad.htn`` calls, bound to ``game_map``."""
    points = {marker.id: marker.waypoint for marker in game_map.markers}
    graph = build_strategic_graph(game_map)
    spawns = {
        str(marker.team): marker.waypoint
        for marker in sorted(game_map.markers_of("spawn"), key=lambda m: m.id)
        if marker.team is not None
    }
    rallies: dict[tuple[str, str], str] = {}

    def point_waypoint(facts: FactDB, point: Value) -> Value:
        return points.get(str(point))

    def rally_point(facts: FactDB, team: Value, objective: Value) -> Value:
        """A regroup marker near ``objective`` on a cheap route from the team's spawn; the
        objective itself when there is none."""
        key = (str(team), str(objective))
        if key not in rallies:
            spawn = spawns.get(str(team))
            rally = str(objective)
            if spawn is not None:
                routes = plan_routes(graph, graph.area_of(spawn))
                marker = choose_regroup_marker(
                    game_map, graph, routes, objective=graph.area_of(str(objective))
                )
                if marker is not None:
                    rally = marker.waypoint
            rallies[key] = rally
        return rallies[key]

    return {"point_waypoint": point_waypoint, "rally_point": rally_point}


def _take_members(agent: Agent, task: Task) -> TaskStatus:
    listed = task.args[0] if task.args else None
    if not isinstance(listed, str):
        return agent.fail_task(f"{task}: !take_members needs a comma-separated list of bots")
    members = [name for name in listed.split(",") if name]
    agent.memory.forget("member")
    agent.memory.forget("tasked")
    for member in members:
        agent.memory.remember("member", member)
    agent.set_subordinates(members)
    return "done"


class SquadReports:
    """What a squad tells its commander every few ticks: where its members are (their last
    reported waypoints), so the commander can measure distances when it re-assigns."""

    EVERY = 5

    def __call__(self, agent: Agent, tick: int) -> None:
        if agent.superior is None or tick % self.EVERY != 2:
            return
        details: dict[str, Value] = {}
        for member in agent.subordinates:
            report = agent.status_reports.get(member)
            waypoint = report.details.get("waypoint") if report is not None else None
            details[member] = waypoint if isinstance(waypoint, str) else ""
        if details:
            agent.send(StatusReport(recipient=agent.superior, status="members", details=details))


def squad_role(game_map: Map, *, domain: str | Path = SQUAD_DOMAIN, **options: object) -> Role:
    """The squad role on ``game_map``, from the shipped domain or a designer's copy."""
    htn = load_domain_file(domain, squad_functions(game_map), check=check_acts)
    return Role(
        "squad",
        htn,
        daemons={"reported": reported_daemon, "member_alive": member_alive_daemon},
        tasks={"!take_members": _take_members},
        reporter=SquadReports,
        **options,  # type: ignore[arg-type]
    )
