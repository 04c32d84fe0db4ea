"""The Killzone squad: the middle layer of the hierarchy, as a :class:`~warband.agents.Role`.

A squad "is similar to an individual": it gathers a world state, plans with its HTN domain
(``domains/squad.htn``) and executes. What differs is the data: it perceives nothing, its world
state comes from its members' reports, and it acts through them by ordering them. This module
gives the domain:

- **daemons**: ``reported`` (each member's last report: ``(reported member status what)``),
  ``member_alive`` (members whose last status says alive, or that have not reported yet),
  ``now`` (the tick, to time a regroup) and, with corridors, ``came_back`` (a member seen
  downed or dead that reports alive again: it stands somewhere else now, often a spawn);
- **functions**: ``point_waypoint``; ``rally_point`` (where the squad gathers before it
  attacks, see below); ``regroup_spot`` (each member's own place there: the rally waypoint
  and its neighbours on the squad's side, dealt out in id order, so the squad stands side by
  side, not four on one waypoint); ``most_arrived`` (:data:`REGROUP_SHARE` of the members
  alive have reported their arrival; ``all_arrived``: every one) and ``regroup_timed_out``
  (:data:`REGROUP_WAIT` ticks went by, the exception), two branches so that the logs tell a
  regroup ended by arrival from one ended by the time-out (``regrouped``: either);
  ``defend_spot`` (members spread over a marker and the defend markers of its group);
  ``attack_order`` (which objectives the squad attacks together, and the member order they
  become); ``corridor`` (Listing 29.3's area restriction, below);
- **tasks**: ``!take_members ?list [?lane]`` (the commander's ``lead`` order names the members
  and, when several squads share an objective, which of the routes there this squad takes);
- **reports** up: every few ticks, where its members are.

The squad pathfinder (:mod:`warband.world.pathfinding`) plans over the strategic graph's
areas, and the squad's own influence map (:mod:`warband.world.influence`) makes areas where its
members recently reported enemies dear. Both are rebuilt from the facts whenever asked, so a
squad decides the same in one process and in many. Squads that share an objective *spread over
routes*: the squad on lane ``k`` pays :data:`LANE_PENALTY` for every area the routes of lanes
``0..k-1`` use, so two squads sent to one point come at it from different sides.

- ``corridor`` is the comma-joined waypoints of the areas of the squad's route from where the
  member last reported it stood to where it is sent (each end's waypoint included); every
  command sequence starts by restricting the member to it (``restrict``), as in Listing 29.3.
  "" (no restriction) when the member has not reported a place yet.
- ``rally_point`` lies on the squad's route: the waypoints :data:`REGROUP_HOPS` links short of
  the objective and the regroup markers within :data:`RALLY_REACH` links of it (and nearer the
  members than it is) are the candidates, and the one with the least enemy influence wins;
  among equals, a regroup marker on the route first (the nearest the objective), then the
  route's waypoint farthest from it, then the other markers.

Corridors are on by default (``squad_role(..., corridors=False)``, Warzone's ``--param
corridors=off``: the squad sends the same sequences with no ``restrict``, and a member back
from the dead keeps its orders). They cost the hierarchy its margin while the bot took a
``restrict`` order above close combat (every new sequence interrupted a fight) and went on with
the move it restricts a tick late; the bot now takes it just above "follow the order" and plans
the move in the same tick (``decide_again_after``), and the Warzone sweeps (12 v 12, seeds
1..10, both sides) gave the hierarchy 17 of 20 with corridors, 16 of 20 without. On
2026-11-26, with the freelance side playing every mode and turrets attacked, Capture and Hold
gave it 16 of 20 against freelance (``warband sweep scenarios/warzone.py --seeds 10 --param
bots=12 --param blue=freelance``, then ``red=freelance``) and 6 to 4 against itself. Later that
day, with regroups that end by arrival, the faction's influence map, bots that spread out of a
crowd and a mirror-symmetric map and strategic graph, the same sweeps gave it 20 of 20 in
Capture and Hold, 16 of 20 in Search and Retrieve, 15 of 20 in Assassination, 20 of 20 in
Search and Destroy and 12 of 20 in Body Count; 51 of its 73 Capture and Hold regroups ended by
arrival (0 of 41 before).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ..messaging import StatusReport
from ..planning import FactDB, Task, load_domain_file
from ..planning.htn.domain import HtnFunction
from ..values import Fact, Value
from ..world import (
    FactKind,
    InfluenceMap,
    Map,
    StrategicGraph,
    build_strategic_graph,
    waypoint_path,
)
from ..world.influence import InfluenceSettings
from ..world.pathfinding import area_weighted_path
from .bot import member_status
from .execute import TaskStatus, check_acts
from .facts import DEPARTED, STATUS, THREAT_REPORT, Status, declares
from .memory import Memory
from .objectives import enemy_influence
from .role import FIXED_RATE, Role

if TYPE_CHECKING:
    from .agent import Agent

SQUAD_DOMAIN = Path(__file__).parent / "domains" / "squad.htn"
"""The shipped squad domain; copy it to change how squads lead their members."""

REGROUP_HOPS = 2
"""How many links short of an attack objective the squad regroups."""
REGROUP_WAIT = 20
"""Ticks a squad waits at its rally point for stragglers before it attacks anyway."""
REGROUP_SHARE = 0.75
"""The share of the members alive whose arrival ends a regroup (``most_arrived``)."""

ATTACK_ORDERS = {"capture": "capture", "attack": "attack"}
"""Squad orders carried out as a regrouped attack -> the order each member then gets."""

RALLY_REACH = REGROUP_HOPS + 1
"""Regroup markers at most this many links from an attack objective may be its rally point."""
THREAT_MEMORY = 10
"""Ticks a member's ThreatReport counts in the squad's influence map."""
LANE_PENALTY = 15.0
"""Route cost per area an earlier lane's route uses (see :func:`squad_route`)."""
INFLUENCE_WEIGHT = 10.0
"""Route cost per unit of enemy influence in an area the route enters."""

_NO_SPREAD = InfluenceSettings(persistence=0.0)
"""The squad's influence map is rebuilt from the facts each time: no smoothing over time."""


# --- the facts a squad writes ------------------------------------------------------------------


class Tick(NamedTuple):
    tick: int


class Reported(NamedTuple):
    member: str
    status: str
    what: Value


class Member(NamedTuple):
    member: str


class MemberAt(NamedTuple):
    member: str
    waypoint: str


class Lane(NamedTuple):
    lane: int


class OrderTick(NamedTuple):
    order: str
    tick: int


class MemberOrder(NamedTuple):
    member: str
    order: str


NOW: Final = FactKind("now", Tick, "the tick (a squad perceives nothing, not even the clock)")
REPORTED: Final = FactKind(
    "reported", Reported, "a member's last StatusReport with one detail (arrived, captured...)"
)
MEMBER: Final = FactKind("member", Member, "a bot the commander put in the squad")
MEMBER_ALIVE: Final = FactKind("member_alive", Member, "a member alive, as far as it said")
LAST_AT: Final = FactKind("last_at", MemberAt, "where a member last said it stood, alive")
WAS_DOWN: Final = FactKind("was_down", Member, "a member said it was downed or dead")
CAME_BACK: Final = FactKind("came_back", Member, "a member down before says alive again")
LANE: Final = FactKind("lane", Lane, "which of the routes to its objective the squad takes")
MEMBER_ARRIVED: Final = FactKind(
    "member_arrived", MemberOrder, "a member reported it arrived, for an order of the squad"
)
REGROUP_STARTED: Final = FactKind(
    "regroup_started", OrderTick, "when the squad began to regroup for an order"
)

SQUAD_FACTS: Final = (MEMBER, LANE, MEMBER_ARRIVED, REGROUP_STARTED)
"""The facts the squad's task and domain write that its Python reads (its daemons declare
theirs; ``squad.htn`` declares the facts only it reads)."""


def _members(facts: FactDB, kind: FactKind[Member] = MEMBER) -> set[str]:
    return {fact.member for fact in kind.all(facts.facts(kind.name))}


def _statuses(facts: FactDB) -> list[Status]:
    return STATUS.all(facts.facts(STATUS.name))


@declares(NOW)
def now_daemon(memory: Memory, tick: int) -> list[Fact]:
    """``(now tick)``: a squad perceives nothing, not even the clock."""
    return [NOW.fact(tick)]


@declares(REPORTED)
def reported_daemon(memory: Memory, tick: int) -> list[Fact]:
    """``(reported member status what)`` for each member's last report with one detail."""
    members = _members(memory.facts)
    return [
        REPORTED.fact(s.sender, s.status, s.details[0])
        for s in _statuses(memory.facts)
        if s.sender in members and len(s.details) == 1
    ]


@declares(MEMBER_ALIVE)
def member_alive_daemon(memory: Memory, tick: int) -> list[Fact]:
    """``(member_alive m)`` for members whose last status is ``alive`` or who said nothing yet,
    and whose process has not left the run (``departed``, from the broker's notice)."""
    facts = memory.facts
    dead = {s.sender for s in _statuses(facts) if s.status in ("downed", "dead")}
    dead |= {d.agent for d in DEPARTED.all(facts.facts(DEPARTED.name))}
    members = MEMBER.all(facts.facts(MEMBER.name))
    return [MEMBER_ALIVE.fact(m.member) for m in members if m.member not in dead]


def _reported_waypoint(status: Status) -> str | None:
    """Where a member's periodic report says it stands (None: another report, or nowhere)."""
    report = member_status(status)
    if report is None or not isinstance(report.waypoint, str) or not report.waypoint:
        return None
    return report.waypoint


@declares(LAST_AT, WAS_DOWN, CAME_BACK)
def whereabouts_daemon(memory: Memory, tick: int) -> list[Fact]:
    """Keeps what the members' reports said longer than the reports last (a member's next
    report, "arrived" say, replaces its last one):

    - ``(last_at m waypoint)``: where ``m`` last said it stood, alive;
    - ``(was_down m)`` once ``m`` said it was downed or dead, and ``(came_back m)`` while it
      says alive again (the domain forgets ``was_down`` when it re-tasks ``m``).
    """
    facts = memory.facts
    members = _members(facts)
    back: list[Fact] = []
    for status in _statuses(facts):
        member = status.sender
        if member not in members:
            continue
        if status.status in ("downed", "dead"):
            memory.remember(*WAS_DOWN.fact(member))
        elif status.status == "alive":
            waypoint = _reported_waypoint(status)
            if waypoint is not None and not facts.facts(LAST_AT.name, member, waypoint):
                memory.forget(LAST_AT.name, member)
                memory.remember(*LAST_AT.fact(member, waypoint))
            if facts.facts(WAS_DOWN.name, member):
                back.append(CAME_BACK.fact(member))
    return back


DEFEND_RINGS = 2
"""How many rings of links around a marker a squad defending it spreads over, at most."""


def squad_functions(game_map: Map) -> dict[str, HtnFunction]:
    """The functions ``squad.htn`` calls, bound to ``game_map``."""
    points = {marker.id: marker.waypoint for marker in game_map.markers}
    spawns = {team: home for team in game_map.teams if (home := game_map.home(team)) is not None}
    regroups = sorted({m.waypoint for m in game_map.markers_of("regroup")})
    kinds = {marker.id: marker.kind for marker in game_map.markers}
    sites: dict[str, list[str]] = {}
    for marker in game_map.markers:
        sites.setdefault(marker.kind, []).append(marker.waypoint)
    groups: dict[str, list[str]] = {}
    for marker in sorted(game_map.markers_of("defend"), key=lambda m: m.id):
        if marker.group is not None:
            groups.setdefault(marker.group, []).append(marker.waypoint)
    strategic = build_strategic_graph(game_map)
    hops: dict[tuple[str, str], int | None] = {}

    def links(a: str, b: str) -> int | None:
        """Links on the shortest path between two waypoints (cached; None: no way)."""
        key = (a, b) if a <= b else (b, a)
        if key not in hops:
            path = waypoint_path(game_map, a, b)
            hops[key] = None if path is None else len(path) - 1
        return hops[key]

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
        enemy = _enemy_influence(facts, strategic, game_map)
        path = squad_route(game_map, strategic, origin, goal, lane=_lane(facts), enemy=enemy)
        path = path or (origin,)
        stretch = list(path[max(0, len(path) - 1 - REGROUP_HOPS) : -1]) or [origin]
        # The old rule's order breaks ties: marked waypoints of the stretch nearest the goal,
        # then the stretch's first waypoint, then the other regroup markers near the goal.
        preferred = [w for w in reversed(stretch) if w in regroups]
        preferred += [w for w in stretch if w not in preferred]
        short = links(origin, goal)
        near = [
            w
            for w in regroups
            if w not in preferred and _within(links(w, goal)) and _nearer(links(origin, w), short)
        ]
        candidates = preferred + near
        best = min(
            range(len(candidates)),
            key=lambda i: (enemy.get(strategic.area_of(candidates[i]), 0.0), i),
        )
        return candidates[best]

    def corridor(facts: FactDB, team: Value, member: Value, target: Value) -> Value:
        """The waypoints ``member`` keeps to on its way to ``target`` (module docstring), a
        list; empty when the member has not said where it is."""
        goal = _where(str(target))
        origin = _member_waypoint(facts, str(member))
        if goal is None or origin is None:
            return ()
        enemy = _enemy_influence(facts, strategic, game_map)
        path = squad_route(game_map, strategic, origin, goal, lane=_lane(facts), enemy=enemy)
        if path is None:
            return ()
        return tuple(sorted(strategic.waypoints_in({strategic.area_of(w) for w in path})))

    def all_arrived(facts: FactDB, order: Value) -> bool:
        """Every member alive has reported its arrival for ``order``."""
        alive = _members(facts, MEMBER_ALIVE)
        arrived = MEMBER_ARRIVED.all(facts.facts(MEMBER_ARRIVED.name))
        return alive <= {a.member for a in arrived if a.order == order}

    def most_arrived(facts: FactDB, order: Value) -> bool:
        """At least :data:`REGROUP_SHARE` of the members alive have reported their arrival
        for ``order``: the squad goes without a straggler or two (one member held up in a
        fight kept the whole squad waiting at the rally point until the time-out)."""
        alive = _members(facts, MEMBER_ALIVE)
        arrived = MEMBER_ARRIVED.all(facts.facts(MEMBER_ARRIVED.name))
        came = len(alive & {a.member for a in arrived if a.order == order})
        return bool(alive) and came >= math.ceil(REGROUP_SHARE * len(alive))

    def regroup_spot(
        facts: FactDB, team: Value, rally: Value, target: Value, member: Value
    ) -> Value:
        """The place of ``member`` at the rally point: the rally waypoint, then the rings of
        waypoints around it (as many as it takes to have a place for every member) no nearer
        the objective ``target`` than it (the side away from the enemy) and no nearer another
        regroup marker, its own first (:func:`_cell_rank`), then the least enemy influence,
        dealt to the members in id order, so a squad regroups side by side instead of four on
        one waypoint."""
        here, goal = str(rally), _where(str(target))
        if not game_map.has_waypoint(here):
            return None
        members = sorted(_members(facts))
        spots = [here]
        if goal is not None:
            short = links(here, goal)
            enemy = _enemy_influence(facts, strategic, game_map)
            rank = _cell_rank(here, regroups if here in regroups else ())
            tie_break = _tie_break(team)

            def behind(w: str) -> bool:
                return (short is None or (links(w, goal) or 0) >= short) and rank(w) is not None

            # Ring after ring until there is a place for every member (a dead end's single
            # neighbour is not enough for four).
            for ring in game_map.rings(here, behind):
                if len(spots) >= len(members):
                    break
                spots += sorted(
                    ring,
                    key=lambda w: (rank(w), enemy.get(strategic.area_of(w), 0.0), tie_break(w)),
                )
        index = members.index(str(member)) if str(member) in members else 0
        return spots[index % len(spots)]

    def regroup_timed_out(facts: FactDB, order: Value) -> bool:
        """:data:`REGROUP_WAIT` ticks went by since the squad began to regroup for ``order``."""
        now = NOW.first(facts.facts(NOW.name))
        started = REGROUP_STARTED.all(facts.facts(REGROUP_STARTED.name))
        ticks = [r.tick for r in started if r.order == order]
        return now is not None and bool(ticks) and now.tick - ticks[0] >= REGROUP_WAIT

    def regrouped(facts: FactDB, order: Value) -> bool:
        return all_arrived(facts, order) or regroup_timed_out(facts, order)

    def defend_spot(facts: FactDB, team: Value, target: Value, member: Value) -> Value:
        """The place of ``member`` around ``target``: the marker's own waypoint first, then its
        group's defend markers, then (for a marker with fewer such spots than members, as a
        TSP) the waypoints at most :data:`DEFEND_RINGS` links around it and no nearer another
        marker of its kind: those nearer it than any other first (:func:`_cell_rank`), then
        the nearest, then the least enemy influence. They are dealt to the members in id
        order: four members and a tactician on one TSP were one grenade's target, a house's
        one neighbour, its yard, held two each, and two squads at neighbouring markers each
        sent a member to the waypoint between them. A VIP's hiding spot is left to the VIP
        (its defenders take the rings around it, one more than :data:`DEFEND_RINGS`)."""
        goal = _where(str(target))
        if goal is None:
            return None
        spots = [goal, *groups.get(str(target), [])]
        members = sorted(_members(facts))
        kind = kinds.get(str(target))
        # A VIP's hiding spot is the VIP's and its escorts' place: its defenders hold the ways
        # in (the VIP, its escort and a defender made a crowd of four in a house).
        leave_to_vip = kind == "hiding"
        if len(spots) < len(members) + leave_to_vip:
            enemy = _enemy_influence(facts, strategic, game_map)
            rank = _cell_rank(goal, sites.get(kind, ()) if kind else ())
            ours = game_map.rings(goal, lambda w: rank(w) is not None)
            tie_break = _tie_break(team)
            around = [
                (rank(w), distance, enemy.get(strategic.area_of(w), 0.0), tie_break(w))
                for distance, ring in enumerate(itertools.islice(ours, DEFEND_RINGS + leave_to_vip))
                for w in ring
                if w not in spots
            ]
            spots += [w for *_, (_home, _away, w) in sorted(around)]
        if leave_to_vip:
            spots = [*spots[1:], goal]
        index = members.index(str(member)) if str(member) in members else 0
        return spots[index % len(spots)]

    def _tie_break(team: Value) -> Callable[[str], tuple[int, int, str]]:
        """The last tie-break between spots: the nearer the enemy's base (in links) first, then
        the farther from the team's own, then the id. An id alone is no mirror image of itself:
        on a map mirrored east-west it put the west team's members on their side of a marker
        and the east team's on the enemy's side. Forward first: a squad holding a marker meets
        the enemy there (Body Count, hierarchy against freelance as red: 10 of 10 forward, 7 of
        10 back first)."""
        home = spawns.get(str(team))
        theirs = [w for t, w in sorted(spawns.items()) if t != str(team)]

        def hops(a: str, b: str | None) -> int:
            found = links(a, b) if b is not None else None
            return found if found is not None else 1 << 20

        def key(waypoint: str) -> tuple[int, int, str]:
            away = min((hops(waypoint, w) for w in theirs), default=0)
            return (away, -hops(waypoint, home), waypoint)

        return key

    def _cell_rank(goal: str, sites: Iterable[str]) -> Callable[[str], int | None]:
        """How much a waypoint is ``goal``'s among ``sites`` (in links): 0 when it is nearer
        ``goal`` than any other site, 1 when another is as near (a waypoint between two
        markers), None when another is nearer. A team's squads, each at its own marker of
        one kind, take their own waypoints first instead of meeting between their markers."""
        others = [w for w in sites if w != goal]

        def rank(waypoint: str) -> int | None:
            own = links(waypoint, goal)
            if own is None:
                return None
            theirs = [t for o in others if (t := links(waypoint, o)) is not None]
            nearest = min(theirs, default=own + 1)
            return None if nearest < own else 0 if nearest > own else 1

        return rank

    def attack_order(facts: FactDB, task: Value) -> Value:
        return ATTACK_ORDERS.get(str(task))

    return {
        "point_waypoint": point_waypoint,
        "rally_point": rally_point,
        "regrouped": regrouped,
        "all_arrived": all_arrived,
        "most_arrived": most_arrived,
        "regroup_spot": regroup_spot,
        "regroup_timed_out": regroup_timed_out,
        "defend_spot": defend_spot,
        "attack_order": attack_order,
        "corridor": corridor,
    }


def _within(links: int | None) -> bool:
    return links is not None and links <= RALLY_REACH


def _nearer(links: int | None, than: int | None) -> bool:
    """A place the members reach in fewer links than the objective: on their side of it."""
    return links is not None and than is not None and links < than


def _lane(facts: FactDB) -> int:
    """Which of the routes to its objective the squad takes (0: the best; ``(lane k)``)."""
    lanes = [fact.lane for fact in LANE.all(facts.facts(LANE.name)) if isinstance(fact.lane, int)]
    return max(0, lanes[0]) if lanes else 0


def _enemy_influence(facts: FactDB, graph: StrategicGraph, game_map: Map) -> dict[int, float]:
    """Enemy influence per area: the faction's map when the world keeps one and tells the squad
    (``influence`` facts, :meth:`~warband.world.World.track_influence`), else the squad's own
    from its members: the enemies they reported in the last :data:`THREAT_MEMORY` ticks
    against the members alive where they last stood."""
    told = enemy_influence(facts)
    if told:
        return {area: enemy for area, enemy in told.items() if 0 <= area < len(graph.areas)}
    now = NOW.first(facts.facts(NOW.name))
    tick = now.tick if now is not None else 0
    enemies = sorted(
        report.position
        for report in THREAT_REPORT.all(facts.facts(THREAT_REPORT.name))
        if isinstance(report.position, str)
        and game_map.has_waypoint(report.position)
        and isinstance(report.tick, int)
        and tick - report.tick <= THREAT_MEMORY
    )
    if not enemies:
        return {}
    friends = sorted(
        waypoint for waypoint in _alive_members_waypoints(facts) if game_map.has_waypoint(waypoint)
    )
    influence = InfluenceMap(graph, "squad", _NO_SPREAD)
    influence.update(friendly=friends, enemy=enemies)
    return {area: influence.enemy(area) for area in range(len(graph.areas))}


def squad_route(
    game_map: Map,
    graph: StrategicGraph,
    origin: str,
    goal: str,
    *,
    lane: int = 0,
    enemy: Mapping[int, float] | None = None,
) -> tuple[str, ...] | None:
    """The squad pathfinder: the waypoints of the squad's way from ``origin`` to ``goal`` on
    ``lane``, or None when there is none.

    Entering an area costs :data:`INFLUENCE_WEIGHT` times its ``enemy`` influence, plus
    :data:`LANE_PENALTY` for each route of the lanes below ``lane`` that crosses it (the ends'
    areas excepted), on top of the links' lengths. With nothing to avoid this is the shortest
    path (:func:`~warband.world.waypoint_path`), so a squad alone, seeing no enemy, goes the way
    its members would go on their own.
    """
    danger = {area: INFLUENCE_WEIGHT * value for area, value in (enemy or {}).items() if value}
    ends = {graph.area_of(origin), graph.area_of(goal)}
    path = waypoint_path(game_map, origin, goal) if not danger else None
    claimed: dict[int, float] = {}
    for step in range(lane + 1):
        if step or danger:
            costs = {a: danger.get(a, 0.0) + claimed.get(a, 0.0) for a in danger.keys() | claimed}
            path = area_weighted_path(game_map, graph, origin, goal, costs)
        if path is None:
            return None
        for area in {graph.area_of(w) for w in path} - ends:
            claimed[area] = claimed.get(area, 0.0) + LANE_PENALTY
    return path


def _members_waypoint(facts: FactDB) -> str | None:
    """The waypoint most of the squad's alive members last reported (ties: the smaller id)."""
    counts: dict[str, int] = {}
    for waypoint in _alive_members_waypoints(facts):
        counts[waypoint] = counts.get(waypoint, 0) + 1
    if not counts:
        return None
    return min(counts, key=lambda w: (-counts[w], w))


def _alive_members_waypoints(facts: FactDB) -> list[str]:
    """Where each member alive last said it stood, alive (one entry per member)."""
    alive = _members(facts, MEMBER_ALIVE)
    return [
        waypoint
        for status in _statuses(facts)
        if status.sender in alive
        and status.status == "alive"
        and (waypoint := _reported_waypoint(status)) is not None
    ]


def _member_waypoint(facts: FactDB, member: str) -> str | None:
    """Where ``member`` last said it stood (``last_at``, from the ``whereabouts`` daemon)."""
    for fact in LAST_AT.all(facts.facts(LAST_AT.name, member)):
        return fact.waypoint
    return None


def _take_members(agent: Agent, task: Task) -> TaskStatus:
    listed = task.args[0] if task.args else None
    if not isinstance(listed, tuple) or not all(isinstance(m, str) for m in listed):
        return agent.fail_task(f"{task}: !take_members needs a list of bot ids")
    lane = task.args[1] if len(task.args) > 1 else 0
    if not isinstance(lane, int) or lane < 0:
        return agent.fail_task(f"{task}: !take_members: the lane must be an integer >= 0")
    members = [str(name) for name in listed]
    agent.memory.forget(MEMBER.name)
    agent.memory.forget("tasked")
    agent.memory.forget(LANE.name)
    agent.memory.remember(*LANE.fact(lane))
    for member in members:
        agent.memory.remember(*MEMBER.fact(member))
        # Given back to us: its process came back.
        agent.memory.forget(DEPARTED.name, member)
    agent.set_subordinates(members)
    return "done"


class SquadReports:
    """What a squad tells its commander every few ticks: where its members are (their last
    reported waypoints), so the commander can measure distances when it re-assigns; and what
    it tells its downed and dead members: where its living ones are (a StatusReport
    ``squad_at`` with ``places``, the list of their waypoints, sent when it changes), so that
    a dead bot picks the spawn with the best travel cost to its squad (§29.6.1)."""

    EVERY = 5

    def __init__(self) -> None:
        self._told: dict[str, tuple[str, ...]] = {}

    def __call__(self, agent: Agent, tick: int) -> None:
        self._tell_the_fallen(agent)
        if agent.superior is None or tick % self.EVERY != 2:
            return
        details: dict[str, Value] = {}
        for member in agent.subordinates:
            report = agent.status_reports.get(member)
            waypoint = report.details.get("waypoint") if report is not None else None
            details[member] = waypoint if isinstance(waypoint, str) else ""
        if details:
            agent.send(StatusReport(recipient=agent.superior, status="members", details=details))

    def _tell_the_fallen(self, agent: Agent) -> None:
        living: set[str] = set()
        fallen: list[str] = []
        for member in agent.subordinates:
            report = agent.status_reports.get(member)
            if report is None:
                continue
            waypoint = report.details.get("waypoint")
            if report.status == "alive" and isinstance(waypoint, str) and waypoint:
                living.add(waypoint)
            elif report.status in ("downed", "dead"):
                fallen.append(member)
        places = tuple(sorted(living))
        for member in fallen:
            if places and self._told.get(member) != places:
                self._told[member] = places
                agent.send(
                    StatusReport(recipient=member, status="squad_at", details={"places": places})
                )


SQUAD_BOOKKEEPING = frozenset({"!remember", "!forget", "!end_command_sequence"})
"""The squad's plans that only take note or task one member are followed by a new decision in
the same tick (:attr:`Role.decide_again_after`): a squad of four is tasked in one tick, not
four, and a regroup's wait starts with every member on its way. Not ``!take_members``: the
members report where they stand once they joined, and their corridors start there."""


def squad_role(
    game_map: Map,
    *,
    domain: str | Path = SQUAD_DOMAIN,
    corridors: bool = True,
    functions: Mapping[str, HtnFunction] | None = None,
    facts: Sequence[FactKind[Any]] = (),
    **options: object,
) -> Role:
    """The squad role on ``game_map``, from the shipped domain or a designer's copy.

    ``functions`` are added to (or replace) :func:`squad_functions`, for a domain that calls
    functions of its own; ``facts`` declares the facts they or new daemons write.

    ``corridors`` (the default): restrict each member to the squad's route (Listing 29.3) and
    re-task a member back from the dead from where it stands; False: the same orders,
    unrestricted (see the module docstring for what the sweeps said).
    """
    extra_functions = functions
    functions = squad_functions(game_map)
    whereabouts = whereabouts_daemon
    if not corridors:
        functions["corridor"] = _no_corridor
        whereabouts = _whereabouts_without_returns
    htn = load_domain_file(domain, {**functions, **(extra_functions or {})}, check=check_acts)
    return Role(
        "squad",
        htn,
        daemons={
            "reported": reported_daemon,
            "member_alive": member_alive_daemon,
            "now": now_daemon,
            "whereabouts": whereabouts,
        },
        tasks={"!take_members": _take_members},
        reporter=SquadReports,
        facts=(*SQUAD_FACTS, *facts),
        **{  # type: ignore[arg-type]
            "decide_again_after": SQUAD_BOOKKEEPING,
            "replan_every": FIXED_RATE,
            **options,
        },
    )


def _no_corridor(facts: FactDB, team: Value, member: Value, target: Value) -> Value:
    return None


@declares(LAST_AT, WAS_DOWN, CAME_BACK)  # never came_back: it is declared, and never holds
def _whereabouts_without_returns(memory: Memory, tick: int) -> list[Fact]:
    whereabouts_daemon(memory, tick)
    return []
