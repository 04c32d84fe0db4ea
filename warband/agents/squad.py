"""The Killzone squad: the middle layer of the hierarchy, as a :class:`~warband.agents.Role`.

A squad "is similar to an individual": it gathers a world state, plans with its HTN domain
(``domains/squad.htn``) and executes. What differs is the data: it perceives nothing, its world
state comes from its members' reports, and it acts through them by ordering them. This module
gives the domain:

- **daemons**: ``reported`` (each member's last report: ``(reported member status what)``),
  ``member_alive`` (members whose last status says alive, or that have not reported yet) and
  ``now`` (the tick, to time a regroup);
- **functions**: ``point_waypoint``; ``rally_point`` (where the squad gathers before it
  attacks: :data:`REGROUP_HOPS` links short of the objective on the way from where its members
  are, a regroup marker when one lies on that stretch); ``regrouped`` (every member alive has
  arrived there, or :data:`REGROUP_WAIT` ticks went by); ``defend_spot`` (members spread over a
  marker and the defend markers of its group); ``attack_order`` (which objectives the squad
  attacks together, and the member order they become);
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
from ..world import Map, waypoint_path
from .execute import TaskStatus, check_acts
from .memory import Memory
from .role import Role

if TYPE_CHECKING:
    from .agent import Agent

SQUAD_DOMAIN = Path(__file__).parent / "domains" / "squad.htn"
"""The shipped squad domain; copy it to change how squads lead their members."""

REGROUP_HOPS = 2
"""How many links short of an attack objective the squad regroups."""
REGROUP_WAIT = 12
"""Ticks a squad waits at its rally point for stragglers before it attacks anyway."""

ATTACK_ORDERS = {"capture": "capture", "attack": "attack"}
"""Squad orders carried out as a regrouped attack -> the order each member then gets."""


def now_daemon(memory: Memory, tick: int) -> list[Fact]:
    """``(now tick)``: a squad perceives nothing, not even the clock."""
    return [("now", tick)]


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
    """``(member_alive m)`` for members whose last status is ``alive`` or who said nothing yet,
    and whose process has not left the run (``departed``, from the broker's notice)."""
    facts = memory.facts
    dead = {str(f[1]) for f in facts.facts("status") if f[2] in ("downed", "dead")}
    dead |= {str(f[1]) for f in facts.facts("departed")}
    return [("member_alive", f[1]) for f in facts.facts("member") if str(f[1]) not in dead]


def squad_functions(game_map: Map) -> dict[str, HtnFunction]:
    """The functions ``squad.htn`` calls, bound to ``game_map``."""
    points = {marker.id: marker.waypoint for marker in game_map.markers}
    spawns = {
        str(marker.team): marker.waypoint
        for marker in sorted(game_map.markers_of("spawn"), key=lambda m: m.id)
        if marker.team is not None
    }
    regroups = {m.waypoint for m in game_map.markers_of("regroup")}
    groups: dict[str, list[str]] = {}
    for marker in sorted(game_map.markers_of("defend"), key=lambda m: m.id):
        if marker.group is not None:
            groups.setdefault(marker.group, []).append(marker.waypoint)
    rallies: dict[tuple[str, str], str] = {}

    def point_waypoint(facts: FactDB, point: Value) -> Value:
        return points.get(str(point))

    def _where(target: str) -> str | None:
        if target in points:
            return points[target]
        return target if game_map.has_waypoint(target) else None

    def rally_point(facts: FactDB, team: Value, target: Value) -> Value:
        """Where to regroup before attacking ``target`` (a marker or waypoint): see the module
        docstring. None for a target without a place (the squad goes straight in)."""
        goal = _where(str(target))
        if goal is None:
            return None
        origin = _members_waypoint(facts) or spawns.get(str(team))
        if origin is None:
            return goal
        key = (origin, goal)
        if key not in rallies:
            path = waypoint_path(game_map, origin, goal) or [origin]
            stretch = path[max(0, len(path) - 1 - REGROUP_HOPS) : -1] or [origin]
            marked = [w for w in stretch if w in regroups]
            rallies[key] = marked[-1] if marked else stretch[0]
        return rallies[key]

    def regrouped(facts: FactDB, order: Value) -> bool:
        alive = {str(f[1]) for f in facts.facts("member_alive")}
        arrived = {str(f[1]) for f in facts.facts("arrived") if f[2] == order}
        if alive <= arrived:
            return True
        now = facts.facts("now")
        started = [f[2] for f in facts.facts("regroup_started") if f[1] == order]
        return bool(now and started) and now[0][1] - started[0] >= REGROUP_WAIT  # type: ignore[operator]

    def defend_spot(facts: FactDB, target: Value, member: Value) -> Value:
        """The place of ``member`` around ``target``: the marker's own waypoint first, then its
        group's defend markers, dealt to the members in id order."""
        goal = _where(str(target))
        if goal is None:
            return None
        spots = [goal, *groups.get(str(target), [])]
        members = sorted(str(f[1]) for f in facts.facts("member"))
        index = members.index(str(member)) if str(member) in members else 0
        return spots[index % len(spots)]

    def attack_order(facts: FactDB, task: Value) -> Value:
        return ATTACK_ORDERS.get(str(task))

    return {
        "point_waypoint": point_waypoint,
        "rally_point": rally_point,
        "regrouped": regrouped,
        "defend_spot": defend_spot,
        "attack_order": attack_order,
    }


def _members_waypoint(facts: FactDB) -> str | None:
    """The waypoint most of the squad's alive members last reported (ties: the smaller id)."""
    alive = {str(f[1]) for f in facts.facts("member_alive")}
    counts: dict[str, int] = {}
    for fact in facts.facts("status"):
        if str(fact[1]) in alive and fact[2] == "alive" and isinstance(fact[-1], str) and fact[-1]:
            counts[fact[-1]] = counts.get(fact[-1], 0) + 1
    if not counts:
        return None
    return min(counts, key=lambda w: (-counts[w], w))


def _take_members(agent: Agent, task: Task) -> TaskStatus:
    listed = task.args[0] if task.args else None
    if not isinstance(listed, str):
        return agent.fail_task(f"{task}: !take_members needs a comma-separated list of bots")
    members = [name for name in listed.split(",") if name]
    agent.memory.forget("member")
    agent.memory.forget("tasked")
    for member in members:
        agent.memory.remember("member", member)
        agent.memory.forget("departed", member)  # given back to us: its process came back
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
        daemons={
            "reported": reported_daemon,
            "member_alive": member_alive_daemon,
            "now": now_daemon,
        },
        tasks={"!take_members": _take_members},
        reporter=SquadReports,
        **options,  # type: ignore[arg-type]
    )
