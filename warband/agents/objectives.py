"""What a commander wants in each game mode: objectives per mode, spawns and hiding spots.

A commander turns the state of its game mode into a list of :class:`~warband.agents.Objective`
values, which :func:`~warband.agents.assign` shares its squads and bots among. This module makes
those objectives, in two layers:

- **pure builders**, one per mode (``objectives_for_<mode>``): plain values in (who owns which
  point, where the object lies, the VIP's place), objectives out, with weights and optimal
  numbers as keyword arguments for a designer to tune; :func:`choose_spawn` (where a bot
  respawns, §29.6.1) and :func:`choose_hiding_spot` (where the VIP hides);
- **map-bound sources** (:func:`objective_source`): for a map, a mode and a team, a function
  from the commander agent to its objectives, reading the mode's facts from the commander's
  memory by name; the commander's :class:`~warband.agents.commander.Assigner` calls it.
  :data:`MODE_SOURCES` maps each mode name to the maker of its source: add an entry to play a
  mode of your own with the stock commander.

Each ``objectives_for_<mode>`` reads the state of one Warzone mode as plain values (what the
commander's memory knows from its percepts) and gives that mode's objectives, following
Killzone 3's commanders; the tactical spawn points (TSPs) are a lower-priority objective in
every mode (:func:`objectives_for_tsps`). Weights and optimal numbers are keyword arguments
with defaults, for a designer to tune.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from ..exceptions import ConfigurationError, UnknownIdError
from ..planning import FactDB
from ..world import (
    CAPTURED,
    CARRIER,
    GAME_MODE,
    INFLUENCE,
    OBJECT_AT,
    OBJECTIVE,
    ROLE,
    SCORE,
    TARGET_STATE,
    VIP,
    VIP_AT,
    Map,
    build_strategic_graph,
    waypoint_path,
)
from ..world.vocabulary import ATTACK, DEFEND, TARGET_ARMED, TARGET_DESTROYED, TARGET_INTACT
from .assignment import Distance, Objective, ObjectiveKind
from .commander import DirectOrders, ObjectiveSource, travel_distance

if TYPE_CHECKING:
    from .agent import Agent

DANGER_WEIGHT = 10.0
"""Travel units a unit of enemy influence costs at a VIP's hiding spot or a
respawn (against the travel to it)."""

EXPOSURE_WEIGHT = 1.0
"""Travel units a VIP's hiding spot costs for each waypoint in sight of it, at most
:data:`EXPOSURE_RANGE` away: an open corner seen from 14 waypoints lost the VIP to snipers that
a house seen from 3 would have kept out."""
EXPOSURE_RANGE = 45.0
"""How far a waypoint may be to count as in sight of a hiding spot (the rifles' reach, and
then some)."""

# --- objectives per game mode ---------------------------------------------------------------


def objectives_for_tsps(
    tsps: Mapping[str, str | None],
    marker_waypoints: Mapping[str, str],
    team: str,
    *,
    weight: float = 1.0,
    bots: int = 2,
) -> list[Objective]:
    """The TSP objectives of every mode: ``capture:<tsp>`` (AdvanceToWaypoint; a tactician
    captures it there) for each tactical spawn point ``team`` does not own.

    ``tsps``: TSP marker id -> owning team or None. Owned TSPs get no objective: the team's
    respawning bots keep them busy enough. The default weight is below every mode objective's.
    """
    return [
        Objective(
            f"capture:{tsp}",
            ObjectiveKind.ADVANCE_TO_WAYPOINT,
            tsp,
            _waypoint_of(tsp, marker_waypoints, "TSP"),
            weight,
            bots,
        )
        for tsp, owner in sorted(tsps.items())
        if owner != team
    ]


def objectives_for_capture_and_hold(
    points: Mapping[str, str | None],
    point_waypoints: Mapping[str, str],
    team: str,
    score: Mapping[str, int],
    tsps: Mapping[str, str | None] | None = None,
    *,
    capture_weight: float = 3.0,
    defend_weight: float = 2.0,
    squad_bots: int = 4,
    tsp_weight: float = 1.0,
    tsp_bots: int = 2,
) -> list[Objective]:
    """Capture and Hold: take the points ``team`` does not own, hold the ones it does.

    ``points``: capture point id -> owning team or None; ``point_waypoints``: marker id ->
    waypoint, for every capture point and TSP; ``score``: team -> points.

    - a point not owned (neutral or the enemy's): ``capture:<point>``, an AdvanceToWaypoint to
      the point's waypoint. Capturing is going there and staying: the bots capture the point
      they stand on, and once it is ours the next re-plan turns the objective into a defence.
      (A point is a marker, not an entity that can be attacked, hence not AttackEntity.)
    - a point owned: ``defend:<point>``, a DefendMarker.
    - when ``team`` leads on score and owns more than half the points, it plays safe: only the
      defence of its points (Killzone 3's commander ahead with two of three areas).
    - the TSPs (``tsps``: marker id -> owner) as :func:`objectives_for_tsps`.
    """
    owned = sorted(p for p, owner in points.items() if owner == team)
    others = [s for t, s in score.items() if t != team]
    ahead = score.get(team, 0) > max(others, default=0)
    safe = ahead and 2 * len(owned) > len(points)
    objectives: list[Objective] = []
    for point, owner in sorted(points.items()):
        waypoint = _waypoint_of(point, point_waypoints, "capture point")
        if owner == team:
            objectives.append(
                Objective(
                    f"defend:{point}",
                    ObjectiveKind.DEFEND_MARKER,
                    point,
                    waypoint,
                    defend_weight,
                    squad_bots,
                )
            )
        elif not safe:
            objectives.append(
                Objective(
                    f"capture:{point}",
                    ObjectiveKind.ADVANCE_TO_WAYPOINT,
                    point,
                    waypoint,
                    capture_weight,
                    squad_bots,
                )
            )
    objectives += objectives_for_tsps(
        tsps or {}, point_waypoints, team, weight=tsp_weight, bots=tsp_bots
    )
    return objectives


def objectives_for_search_and_retrieve(
    team: str,
    *,
    object_id: str,
    object_waypoint: str,
    carrier: str | None = None,
    carrier_team: str | None = None,
    return_points: Mapping[str, str],
    marker_waypoints: Mapping[str, str],
    tsps: Mapping[str, str | None] | None = None,
    retrieve_weight: float = 4.0,
    escort_weight: float = 4.0,
    attack_weight: float = 5.0,
    return_weight: float = 2.0,
    squad_bots: int = 4,
    tsp_weight: float = 1.0,
    tsp_bots: int = 2,
) -> list[Objective]:
    """Search and Retrieve: the one object both teams want at their own return point.

    ``object_waypoint``: where the object lies, or where its carrier is; ``carrier`` and
    ``carrier_team``: who holds it (both None while nobody does); ``return_points``: team ->
    return marker id; ``marker_waypoints``: marker id -> waypoint (return points, TSPs).

    - nobody holds it: ``retrieve:<object>``, AdvanceToWaypoint to it (whoever gets there picks
      it up);
    - ``team`` holds it: ``escort:<object>``, EscortEntity of the carrier, and
      ``return:<our return marker>``, AdvanceToWaypoint to clear the way home;
    - the enemy holds it: ``attack:<object>``, AttackEntity on the carrier (to take the object
      back), and ``block:<their return marker>``, DefendMarker where they must bring it.

    The ids name the object, not the carrier, so the squads keep the job when the carrier
    changes within a team; the objective's ``target`` is the current carrier.
    """
    if (carrier is None) != (carrier_team is None):
        raise ConfigurationError(
            f"search and retrieve: carrier {carrier!r} and carrier_team {carrier_team!r} must "
            "be given together (both None while nobody holds the object)"
        )
    objectives: list[Objective] = []
    if carrier is None or carrier_team is None:
        objectives.append(
            Objective(
                f"retrieve:{object_id}",
                ObjectiveKind.ADVANCE_TO_WAYPOINT,
                object_id,
                object_waypoint,
                retrieve_weight,
                squad_bots,
            )
        )
    elif carrier_team == team:
        objectives.append(
            Objective(
                f"escort:{object_id}",
                ObjectiveKind.ESCORT_ENTITY,
                carrier,
                object_waypoint,
                escort_weight,
                squad_bots,
            )
        )
        home = _return_point(return_points, team)
        objectives.append(
            Objective(
                f"return:{home}",
                ObjectiveKind.ADVANCE_TO_WAYPOINT,
                home,
                _waypoint_of(home, marker_waypoints, "return point"),
                return_weight,
                squad_bots,
            )
        )
    else:
        objectives.append(
            Objective(
                f"attack:{object_id}",
                ObjectiveKind.ATTACK_ENTITY,
                carrier,
                object_waypoint,
                attack_weight,
                squad_bots,
            )
        )
        theirs = _return_point(return_points, carrier_team)
        objectives.append(
            Objective(
                f"block:{theirs}",
                ObjectiveKind.DEFEND_MARKER,
                theirs,
                _waypoint_of(theirs, marker_waypoints, "return point"),
                return_weight,
                squad_bots,
            )
        )
    objectives += objectives_for_tsps(
        tsps or {}, marker_waypoints, team, weight=tsp_weight, bots=tsp_bots
    )
    return objectives


def objectives_for_search_and_destroy(
    team: str,
    *,
    role: str,
    targets: Mapping[str, str],
    marker_waypoints: Mapping[str, str],
    tsps: Mapping[str, str | None] | None = None,
    attack_weight: float = 3.0,
    guard_weight: float = 4.0,
    defend_weight: float = 3.0,
    defuse_weight: float = 5.0,
    squad_bots: int = 4,
    tsp_weight: float = 1.0,
    tsp_bots: int = 2,
) -> list[Objective]:
    """Search and Destroy: the defenders' targets, attacked or defended by ``role``.

    ``role``: :data:`~warband.world.vocabulary.ATTACK` or ``DEFEND`` (the team's ``role``
    fact); ``targets``: target marker id -> its ``target_state`` (intact, armed, destroyed).

    - attackers: ``destroy:<target>``, AttackEntity on each intact target (plant a charge);
      ``guard:<target>``, DefendMarker on an armed one, heavier (keep the defenders off the
      charge until it goes off);
    - defenders: ``defend:<target>``, DefendMarker on each target, heavier while armed (defuse
      it): the id stays, so the squads already there stay and more join them.

    A destroyed target gets no objective.
    """
    if role not in (ATTACK, DEFEND):
        raise ConfigurationError(
            f"search and destroy: role must be {ATTACK!r} or {DEFEND!r}, got {role!r}"
        )
    states = (TARGET_INTACT, TARGET_ARMED, TARGET_DESTROYED)
    objectives: list[Objective] = []
    for target, state in sorted(targets.items()):
        if state not in states:
            raise ConfigurationError(
                f"search and destroy: target {target!r} has state {state!r}; "
                f"known states: {', '.join(states)}"
            )
        if state == TARGET_DESTROYED:
            continue
        waypoint = _waypoint_of(target, marker_waypoints, "destroy target")
        armed = state == TARGET_ARMED
        if role == DEFEND:
            objectives.append(
                Objective(
                    f"defend:{target}",
                    ObjectiveKind.DEFEND_MARKER,
                    target,
                    waypoint,
                    defuse_weight if armed else defend_weight,
                    squad_bots,
                )
            )
        elif armed:
            objectives.append(
                Objective(
                    f"guard:{target}",
                    ObjectiveKind.DEFEND_MARKER,
                    target,
                    waypoint,
                    guard_weight,
                    squad_bots,
                )
            )
        else:
            objectives.append(
                Objective(
                    f"destroy:{target}",
                    ObjectiveKind.ATTACK_ENTITY,
                    target,
                    waypoint,
                    attack_weight,
                    squad_bots,
                )
            )
    objectives += objectives_for_tsps(
        tsps or {}, marker_waypoints, team, weight=tsp_weight, bots=tsp_bots
    )
    return objectives


def objectives_for_assassination(
    team: str,
    *,
    role: str,
    vip: str,
    vip_waypoint: str | None,
    marker_waypoints: Mapping[str, str],
    hiding_spot: str | None = None,
    search_spots: Sequence[str] = (),
    tsps: Mapping[str, str | None] | None = None,
    escort_weight: float = 5.0,
    hide_weight: float = 2.0,
    attack_weight: float = 5.0,
    search_weight: float = 2.0,
    squad_bots: int = 4,
    search_bots: int = 2,
    tsp_weight: float = 1.0,
    tsp_bots: int = 2,
) -> list[Objective]:
    """Assassination: keep our VIP alive, or hunt theirs.

    ``role``: :data:`~warband.world.vocabulary.ATTACK` or ``DEFEND``; ``vip``: the target's
    agent id; ``vip_waypoint``: where it is, None when unknown (the attackers are not always
    told); ``marker_waypoints``: marker id -> waypoint (hiding spots, TSPs).

    - defenders: ``escort:<vip>``, EscortEntity of the VIP, and, when the commander has chosen
      one (:func:`choose_hiding_spot`), ``hide:<spot>``, DefendMarker on the VIP's hiding spot,
      so a squad holds the place the VIP goes to. The VIP itself is best left out of the bots
      given to :func:`assign` and ordered to hide directly.
    - attackers: ``attack:<vip>``, AttackEntity on the VIP, when they know where it is; while
      they do not, ``search:<spot>``, AdvanceToWaypoint to each of ``search_spots`` (the map's
      hiding markers: where a VIP is likely to be).
    """
    if role not in (ATTACK, DEFEND):
        raise ConfigurationError(
            f"assassination: role must be {ATTACK!r} or {DEFEND!r}, got {role!r}"
        )
    objectives: list[Objective] = []
    if role == DEFEND:
        if vip_waypoint is not None:
            objectives.append(
                Objective(
                    f"escort:{vip}",
                    ObjectiveKind.ESCORT_ENTITY,
                    vip,
                    vip_waypoint,
                    escort_weight,
                    squad_bots,
                )
            )
        if hiding_spot is not None:
            objectives.append(
                Objective(
                    f"hide:{hiding_spot}",
                    ObjectiveKind.DEFEND_MARKER,
                    hiding_spot,
                    _waypoint_of(hiding_spot, marker_waypoints, "hiding spot"),
                    hide_weight,
                    squad_bots,
                )
            )
    elif vip_waypoint is not None:
        objectives.append(
            Objective(
                f"attack:{vip}",
                ObjectiveKind.ATTACK_ENTITY,
                vip,
                vip_waypoint,
                attack_weight,
                squad_bots,
            )
        )
    else:
        objectives += [
            Objective(
                f"search:{spot}",
                ObjectiveKind.ADVANCE_TO_WAYPOINT,
                spot,
                _waypoint_of(spot, marker_waypoints, "hiding spot"),
                search_weight,
                search_bots,
            )
            for spot in sorted(set(search_spots))
        ]
    objectives += objectives_for_tsps(
        tsps or {}, marker_waypoints, team, weight=tsp_weight, bots=tsp_bots
    )
    return objectives


def objectives_for_body_count(
    team: str,
    *,
    regroup_points: Iterable[str] = (),
    marker_waypoints: Mapping[str, str],
    tsps: Mapping[str, str | None] | None = None,
    hold_weight: float = 2.0,
    squad_bots: int = 4,
    tsp_weight: float = 1.0,
    tsp_bots: int = 2,
) -> list[Objective]:
    """Body Count has no objective of its own but kills: hold the regroup locations (the map's
    strategic places worth controlling, where the fights are) as ``hold:<marker>``
    DefendMarkers, and take the TSPs, so that the bots fight together, from good ground."""
    objectives = [
        Objective(
            f"hold:{marker}",
            ObjectiveKind.DEFEND_MARKER,
            marker,
            _waypoint_of(marker, marker_waypoints, "regroup location"),
            hold_weight,
            squad_bots,
        )
        for marker in sorted(set(regroup_points))
    ]
    objectives += objectives_for_tsps(
        tsps or {}, marker_waypoints, team, weight=tsp_weight, bots=tsp_bots
    )
    return objectives


def choose_spawn(
    options: Sequence[str],
    squad: Iterable[str],
    distance: Distance,
    *,
    objective: str | None = None,
    danger: Mapping[str, float] | None = None,
    danger_weight: float = DANGER_WEIGHT,
) -> str | None:
    """Where a respawning bot should come back (§29.6.1): of the spawn waypoints ``options``
    (a team's base spawns and the TSPs it holds), the one with the best travel cost to its
    squad, the mean ``distance`` to the waypoints of ``squad`` (its members' places); to the
    squad's ``objective`` waypoint while no member is located; None without ``options``. A
    spawn's ``danger`` (waypoint -> e.g. enemy influence) costs ``danger_weight`` travel units
    per unit, so a bot does not come back into the enemy's fire. Ties go to the smaller
    waypoint id; a spawn from which the squad cannot be reached comes last.
    """
    if not options:
        return None
    targets = sorted(squad) or ([objective] if objective is not None else [])
    if not targets:
        return min(options)
    risk = danger or {}

    def cost(spawn: str) -> float:
        travel = sum(float(distance(spawn, target)) for target in targets) / len(targets)
        return travel + danger_weight * risk.get(spawn, 0.0)

    return min(sorted(options), key=cost)


def choose_hiding_spot(
    spots: Mapping[str, str],
    vip_waypoint: str,
    distance: Distance,
    *,
    current: str | None = None,
    danger: Mapping[str, float] | None = None,
    danger_weight: float = 1.0,
    switch_ratio: float = 0.8,
) -> str | None:
    """Where the VIP should hide (Assassination defenders): the hiding marker of ``spots``
    (marker id -> waypoint) with the lowest cost, None if there is none.

    The cost of a spot is the VIP's travel cost to it plus ``danger_weight`` times its
    ``danger`` (waypoint -> e.g. enemy influence; 0 where absent). The ``current`` spot is kept
    unless another costs less than ``switch_ratio`` times as much, so the VIP does not run back
    and forth between two spots of nearly equal cost. Ties go to the smaller marker id.
    """
    if not spots:
        return None
    risk = danger or {}

    def cost(marker: str) -> float:
        waypoint = spots[marker]
        return float(distance(vip_waypoint, waypoint)) + danger_weight * risk.get(waypoint, 0.0)

    best = min(sorted(spots), key=cost)
    if current is None or current not in spots:
        return best
    return best if cost(best) < switch_ratio * cost(current) else current


def _waypoint_of(marker: str, marker_waypoints: Mapping[str, str], what: str) -> str:
    try:
        return marker_waypoints[marker]
    except KeyError:
        known = ", ".join(sorted(marker_waypoints)) or "none"
        raise UnknownIdError(
            f"no waypoint given for the {what} {marker!r}; markers with a waypoint: {known}"
        ) from None


def _return_point(return_points: Mapping[str, str], team: str) -> str:
    try:
        return return_points[team]
    except KeyError:
        known = ", ".join(sorted(return_points)) or "none"
        raise UnknownIdError(
            f"search and retrieve: no return point given for team {team!r}; teams with one: {known}"
        ) from None


# --- objective sources bound to a map ---------------------------------------------------------

ModeSource: TypeAlias = Callable[["MapMarkers", str], tuple[ObjectiveSource, DirectOrders | None]]
"""Makes the objective source (and direct orders) of one mode, for a map and a team."""

CH_TSP_WEIGHT = 0.1
"""Capture and Hold's TSP objective weighs less than a fourth of a spare point's (0.5), so the
deal of bots (D'Hondt) gives it a bot only when every point has its optimal number: sweeps at
12v12 showed that a bot taken from the fight for the points (weight 0.2 to 0.5, or a TSP
objective for every TSP) costs the hierarchy matches."""

TSP_WEIGHT = 0.5
"""The TSP objectives' weight in every mode but Capture and Hold."""


class MapMarkers:
    """What the objective sources read from a map once: its markers by kind, each team's first
    spawn, travel costs between waypoints."""

    def __init__(self, game_map: Map) -> None:
        self.map = game_map
        self.waypoints = {m.id: m.waypoint for m in game_map.markers}
        self.points = sorted(m.id for m in game_map.markers_of("capture"))
        self.tsps = sorted(m.id for m in game_map.markers_of("tsp"))
        self.regroups = sorted(m.id for m in game_map.markers_of("regroup"))
        self.hiding = {m.id: m.waypoint for m in game_map.markers_of("hiding")}
        self.spawns = {
            team: home for team in game_map.teams if (home := game_map.home(team)) is not None
        }
        """Each team's base: :meth:`Map.home <warband.world.Map.home>`."""
        self.distance = travel_distance(game_map)
        self.graph = build_strategic_graph(game_map)

    def owners(self, facts: FactDB, markers: Sequence[str]) -> dict[str, str | None]:
        """Who owns each of ``markers`` (capture points, TSPs), None for nobody."""
        owned = {c.point: c.team for c in CAPTURED.matching(facts.facts(CAPTURED.name))}
        return {marker: owned.get(marker) for marker in markers}


def _team_role(facts: FactDB, team: str) -> str | None:
    return next((r.role for r in ROLE.matching(facts.facts(ROLE.name)) if r.team == team), None)


def _focus(
    markers: MapMarkers, objectives: list[Objective], owners: Mapping[str, str | None], team: str
) -> list[Objective]:
    """Capture and Hold is won by holding a majority, so the commander attacks only as many
    points as it lacks for one, with all it has (the nearest to its base first, neutral before
    the enemy's); the others stay objectives of low weight, for bots to spare."""
    majority = len(owners) // 2 + 1
    lacking = majority - sum(1 for owner in owners.values() if owner == team)
    base = markers.spawns[team]
    captures = sorted(
        (o for o in objectives if o.id.startswith("capture:") and o.target in owners),
        key=lambda o: (owners[o.target] is not None, markers.distance(base, o.waypoint), o.id),
    )
    if lacking <= 0 or len(captures) <= lacking:
        return objectives
    spare = {o.id for o in captures[lacking:]}
    return [dataclasses.replace(o, weight=0.5) if o.id in spare else o for o in objectives]


def _nearest_unheld(
    markers: MapMarkers, tsps: Mapping[str, str | None], team: str
) -> dict[str, str | None]:
    """The TSP nearest ``team``'s base that it does not hold (none when it holds them all)."""
    base = markers.spawns[team]
    unheld = sorted(
        (markers.distance(base, markers.waypoints[t]), t) for t, o in tsps.items() if o != team
    )
    return {unheld[0][1]: tsps[unheld[0][1]]} if unheld else {}


def capture_and_hold_source(markers: MapMarkers, team: str) -> tuple[ObjectiveSource, None]:
    """Attack the majority of points the team lacks, defend what it holds, and take the TSP
    nearest its base when it has a bot to spare."""

    def objectives(agent: Agent) -> list[Objective]:
        facts = agent.memory.facts
        owners = markers.owners(facts, markers.points)
        score = _scores(facts)
        found = objectives_for_capture_and_hold(
            owners,
            markers.waypoints,
            team,
            score,
            _nearest_unheld(markers, markers.owners(facts, markers.tsps), team),
            tsp_weight=CH_TSP_WEIGHT,
            tsp_bots=1,
        )
        return _focus(markers, found, owners, team)

    return objectives, None


HOLD_NEARNESS = 0.01
"""Body Count: how much less a regroup marker weighs per marker nearer the team's base."""


def body_count_source(markers: MapMarkers, team: str) -> tuple[ObjectiveSource, None]:
    """Hold every regroup marker, the nearest the team's base weighing the most; no TSPs.

    Body Count is won on kills, where the fights are: the regroup markers are the map's
    strategic places, on both halves. The markers weigh the same but for a step of
    :data:`HOLD_NEARNESS` by nearness to the team's base: with a tie broken by marker id, both
    teams went to hold the markers with the smaller ids, which lie in red's half of Warzone.

    Sweeps, 12 v 12 against freelance bots that hunt (they go where they last saw an enemy,
    towards gunfire, else to the enemy's spawns), seeds 1-10 with the hierarchy on each side:
    every marker 20 of 20; the team's half and one more 10 of 20, and only when two kills
    behind 4 of 20; the four markers nearest the centre 18 of 20. Against freelance bots that
    stood at their spawns once they held the capture points (before they hunted), holding the
    team's half had won more: 14 of 20 against 9 of 20 for every marker."""
    home = markers.spawns.get(team)

    def nearness(marker: str) -> tuple[float, float, str]:
        # Equal travel goes to the marker nearer the map's centre, which a marker and its mirror
        # image share, before the id: on warzone-x2 red's tied b9 and d7 went b9 first (by id)
        # and blue's mirrored h9 and f7 went f7 first, and Body Count there went to the east,
        # 9 of 11 decided (seeds 1-12; 4 of 12 with the sides exchanged).
        waypoint = markers.waypoints[marker]
        travel = float(markers.distance(home, waypoint)) if home else 0.0
        return travel, markers.map.from_centre(waypoint), marker

    rank = {m: i for i, m in enumerate(sorted(markers.regroups, key=nearness))}
    found = objectives_for_body_count(
        team, regroup_points=markers.regroups, marker_waypoints=markers.waypoints
    )
    weighted = [
        dataclasses.replace(o, weight=o.weight * (1 - HOLD_NEARNESS * rank[o.target]))
        for o in found
    ]

    def objectives(agent: Agent) -> list[Objective]:
        return list(weighted)

    return objectives, None


def _scores(facts: FactDB) -> dict[str, int]:
    """Team -> points, from the world's ``score`` facts."""
    return {s.team: s.points for s in SCORE.matching(facts.facts(SCORE.name))}


def search_and_retrieve_source(markers: MapMarkers, team: str) -> tuple[ObjectiveSource, None]:
    """Get the object (or its carrier), escort our carrier home."""

    def objectives(agent: Agent) -> list[Objective]:
        facts = agent.memory.facts
        lying = OBJECT_AT.first(facts.facts(OBJECT_AT.name))
        if lying is None:
            return []
        carriers = CARRIER.matching(facts.facts(CARRIER.name))
        held = next((c for c in carriers if c.object == lying.object), None)
        returns = {
            o.team: o.id
            for o in OBJECTIVE.matching(facts.facts(OBJECTIVE.name))
            if o.kind == "return"
        }
        return objectives_for_search_and_retrieve(
            team,
            object_id=lying.object,
            object_waypoint=lying.waypoint,
            carrier=held.agent if held else None,
            carrier_team=held.team if held else None,
            return_points=returns,
            marker_waypoints=markers.waypoints,
            tsps=markers.owners(facts, markers.tsps),
            tsp_weight=TSP_WEIGHT,
        )

    return objectives, None


def search_and_destroy_source(markers: MapMarkers, team: str) -> tuple[ObjectiveSource, None]:
    """Attackers go for the targets, defenders guard and defuse them."""

    def objectives(agent: Agent) -> list[Objective]:
        facts = agent.memory.facts
        role = _team_role(facts, team)
        if role is None:
            return []
        states = TARGET_STATE.matching(facts.facts(TARGET_STATE.name))
        targets = {t.target: t.state for t in states}
        return objectives_for_search_and_destroy(
            team,
            role=role,
            targets=targets,
            marker_waypoints=markers.waypoints,
            tsps=markers.owners(facts, markers.tsps),
            tsp_weight=TSP_WEIGHT,
        )

    return objectives, None


class _Assassination:
    """Assassination for one team: the objectives, and the VIP's own order (where to hide,
    chosen by travel cost, the enemy influence on the way and how exposed the spot is, and kept
    unless another spot is much better)."""

    def __init__(self, markers: MapMarkers, team: str) -> None:
        self.markers = markers
        self.team = team
        self.spot: str | None = None
        self.exposure = {
            spot: len(markers.map.waypoints_in_sight(spot, EXPOSURE_RANGE))
            for spot in markers.hiding.values()
        }
        """Each hiding spot's waypoint: how many waypoints see it (:data:`EXPOSURE_WEIGHT`)."""

    def vip(self, facts: FactDB) -> tuple[str | None, str | None]:
        """Our VIP (defending) or theirs (attacking), and where it is if known."""
        vip = VIP.first(facts.facts(VIP.name))
        if vip is None:
            return None, None
        places = VIP_AT.matching(facts.facts(VIP_AT.name))
        return vip.agent, next((p.waypoint for p in places if p.agent == vip.agent), None)

    def objectives(self, agent: Agent) -> list[Objective]:
        facts = agent.memory.facts
        role = _team_role(facts, self.team)
        vip, where = self.vip(facts)
        if role is None or vip is None:
            return []
        hiding = self.markers.hiding
        if role == DEFEND and where is not None:
            on_the_way = self.danger_on_the_way(where, enemy_influence(facts))
            self.spot = choose_hiding_spot(
                hiding,
                where,
                self.markers.distance,
                current=self.spot,
                danger={
                    spot: DANGER_WEIGHT * danger + EXPOSURE_WEIGHT * self.exposure[spot]
                    for spot, danger in on_the_way.items()
                },
            )
        return objectives_for_assassination(
            self.team,
            role=role,
            vip=vip,
            vip_waypoint=where,
            marker_waypoints=self.markers.waypoints,
            hiding_spot=self.spot if role == DEFEND else None,
            search_spots=sorted(hiding),
            tsps=self.markers.owners(facts, self.markers.tsps),
            tsp_weight=TSP_WEIGHT,
        )

    def danger_on_the_way(self, start: str, enemy: Mapping[int, float]) -> dict[str, float]:
        """Each hiding spot's danger: the enemy influence (per area) of the areas on the VIP's
        way there, its end included. A spot's own danger alone sent the VIP across the map,
        through the enemy, to the one spot the enemy had not been seen near."""
        danger: dict[str, float] = {}
        area_of = self.markers.graph.area_of
        for spot in self.markers.hiding.values():
            path = waypoint_path(self.markers.map, start, spot) or (spot,)
            danger[spot] = sum(enemy.get(area, 0.0) for area in {area_of(w) for w in path})
        return danger

    def direct(self, agent: Agent) -> dict[str, tuple[str, str]]:
        facts = agent.memory.facts
        vip, _ = self.vip(facts)
        if _team_role(facts, self.team) != DEFEND or vip is None or self.spot is None:
            return {}
        return {vip: ("hide", self.markers.hiding[self.spot])}


def assassination_source(
    markers: MapMarkers, team: str
) -> tuple[ObjectiveSource, DirectOrders | None]:
    """Defenders escort their VIP and send it to hide; attackers hunt the VIP."""
    assassination = _Assassination(markers, team)
    return assassination.objectives, assassination.direct


MODE_SOURCES: dict[str, ModeSource] = {
    "capture_and_hold": capture_and_hold_source,
    "body_count": body_count_source,
    "search_and_retrieve": search_and_retrieve_source,
    "assassination": assassination_source,
    "search_and_destroy": search_and_destroy_source,
}
"""Mode name -> the maker of its objective source. A mode of your own with the stock commander:
``MODE_SOURCES["king_of_the_hill"] = my_source`` (or pass ``sources=`` to
:func:`objective_source`)."""


def objective_source(
    markers: MapMarkers | Map,
    mode: str,
    team: str,
    *,
    sources: Mapping[str, ModeSource] | None = None,
) -> tuple[ObjectiveSource, DirectOrders | None]:
    """The commander's objective source (and direct orders) for ``team`` playing ``mode`` on a
    map; each call makes a fresh one (a source may keep state, as the VIP's hiding spot)."""
    table = MODE_SOURCES if sources is None else sources
    make = table.get(mode)
    if make is None:
        raise ConfigurationError(
            f"no objective source for game mode {mode!r}; known modes: {', '.join(table)}"
        )
    if not isinstance(markers, MapMarkers):
        markers = MapMarkers(markers)
    return make(markers, team)


def round_source(
    markers: MapMarkers | Map,
    team: str,
    *,
    sources: Mapping[str, ModeSource] | None = None,
) -> tuple[ObjectiveSource, DirectOrders]:
    """The objective source of a commander that plays whatever mode the world says (its
    ``game_mode`` and ``role`` facts): a Warzone round (:class:`~warband.world.WarzoneRound`)
    changes mode between missions. Each mission gets a fresh source of
    :func:`objective_source` (a source may keep state, as the VIP's hiding spot), also when a
    mode is played again with the sides swapped; before the first percept, no objectives."""
    if not isinstance(markers, MapMarkers):
        markers = MapMarkers(markers)
    playing: dict[str, Any] = {}

    def current(agent: Agent) -> tuple[ObjectiveSource, DirectOrders | None] | None:
        facts = agent.memory.facts
        mode = GAME_MODE.first(facts.facts(GAME_MODE.name))
        if mode is None:
            return None
        roles = {r.team: r.role for r in ROLE.all(facts.facts(ROLE.name))}
        mission = (mode.name, roles.get(team))
        if playing.get("mission") != mission:
            playing["mission"] = mission
            playing["source"] = objective_source(markers, mode.name, team, sources=sources)
        found: tuple[ObjectiveSource, DirectOrders | None] = playing["source"]
        return found

    def objectives(agent: Agent) -> list[Objective]:
        source = current(agent)
        return source[0](agent) if source is not None else []

    def direct(agent: Agent) -> dict[str, tuple[str, str]]:
        source = current(agent)
        return source[1](agent) if source is not None and source[1] is not None else {}

    return objectives, direct


def enemy_influence(facts: FactDB) -> dict[int, float]:
    """Enemy influence per area of the map's strategic graph, from the faction's influence map
    the world tells (the ``influence`` facts; empty without them)."""
    return {
        int(fact.area): float(fact.enemy)
        for fact in INFLUENCE.all(facts.facts(INFLUENCE.name))
        if isinstance(fact.area, int)
    }


def enemy_control(facts: FactDB) -> dict[int, float]:
    """Where the enemy holds sway, per area: its influence less the team's own (the faction's
    influence map; only where it is above). A spawn in a fight the team holds its own in is not
    one to shun: in the sweeps, shunning every enemy presence sent the dead to their base, far
    from the fight, and cost Search and Retrieve 5 of 20 wins."""
    return {
        int(fact.area): float(fact.enemy) - float(fact.friendly)
        for fact in INFLUENCE.all(facts.facts(INFLUENCE.name))
        if isinstance(fact.area, int) and float(fact.enemy) > float(fact.friendly)
    }
