"""The Killzone bot: the individual layer of the hierarchy, as a :class:`~warband.agents.Role`.

Its behaviour is the HTN domain ``domains/bot.htn`` (a text file a designer edits). This module
gives that domain what it needs from Python:

- **daemons** that derive facts each tick from the Percept: ``threat`` (every enemy in sight, with
  its waypoint and distance), ``nearest_threat`` and ``close_threat`` (the nearest, when it is
  within :data:`CLOSE_RANGE`), ``downed_mate`` (a downed team mate in sight, for medics), and the
  bot's condition (:func:`condition_daemon`: ``health_share``, ``under_fire``,
  ``outnumbered``, ``own_turret``);
- **functions** the domain calls: ``next_hop`` (the next waypoint towards a goal, within the area
  restrictions its squad set), ``point_waypoint`` (where a marker is), ``place_of`` (where an
  entity is: a marker, the retrieval object, a VIP, an agent in sight), ``home_point`` (the
  team's return point), ``near`` (two waypoints at most a link apart), ``can_capture`` (TSPs
  are for tacticians), ``in_range`` and ``weapon_for`` (Listing 29.1's weapon choice by
  distance), ``nearest_open_point`` and ``nearest_open_tsp`` (what a bot on its own, or a
  tactician, goes for), ``recent`` (a tick at most :data:`RECENT_TICKS` ago), and position
  picking (:mod:`warband.world.positions`): ``cover_spot`` (take cover), ``retreat_spot``
  (fall back), ``attack_spot`` (default combat) and ``spread_spot`` (a crowd of team mates
  deals the attack positions around out among its members, :data:`SPREAD_AT`);
  ``spawn_near`` (a dead bot's spawn: the best travel cost to its squad,
  :func:`~warband.agents.assignment.choose_spawn`) and ``spawn_class`` (the class it comes
  back as, :data:`SPAWN_NEEDS`); ``sniping_spot`` (where a scout holds a spot from,
  :data:`SNIPE_RANGE`); ``next_hop`` fans a crowd out over ways nearly as short (:data:`DETOUR`);
  ``heal_refused`` (the world refused a medic's heal of a mate for good, after it asked).
  Paths and picked positions cross only the links the bot can cross now: the map's rule
  (:meth:`~warband.world.Map.closed_links`) over the bot's ``open`` facts, the rule the world
  applies to a move; and position picking leaves out, for :data:`REFUSED_SPOT_TICKS`, a spot
  the world refused a move towards (``act_refused`` facts, :meth:`Agent.send_act
  <warband.agents.Agent.send_act>`);
- **tasks**: ``!join ?squad`` (the commander put the bot in a squad: it reports there from now
  on, and remembers ``(squad ?squad)``), ``!restrict ?waypoints`` and ``!clear_restrictions``
  (the squad's corridor, Listing 29.3: ``(allowed_waypoint w)`` facts ``next_hop`` keeps to),
  ``!go ?waypoint ?toward`` (start walking a link on the way to ``?toward`` and go on with the
  plan: the bot shoots while the world walks it), and the engineer's ``!place_turret`` and
  ``!repair ?turret`` (``use`` acts: ``!use ?target`` is already the medic's revive and heal);
- **area groups** (:class:`AreaGroups`): the bot keeps itself in its team's group of the area
  it stands in, so that ``!broadcast nearby ...`` reaches the team mates in that area (a hurt
  bot asks the medics nearby for a heal; a medic says it is coming);
- **reports** up: a StatusReport to its squad every few ticks (life, waypoint, health) and a
  ThreatReport for every enemy it starts to see.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from itertools import islice, pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ..messaging import StatusReport, ThreatReport
from ..planning import FactDB, Task, load_domain_file
from ..planning.htn.domain import HtnFunction
from ..values import Fact, Value
from ..world import (
    AMMO,
    AT,
    CAPTURED,
    DAMAGED,
    HEALTH,
    HEARD,
    MAX_HEALTH,
    OBJECT_AT,
    OBJECTIVE,
    OPEN,
    SEES,
    SEES_DOWNED,
    SEES_TURRET,
    SELF,
    SPAWN_OPTION,
    STATE,
    TARGET_INTACT,
    TARGET_STATE,
    TEAM_CLASS,
    TICK,
    TURRET,
    VIP,
    VIP_AT,
    FactKind,
    Map,
    PositionWeights,
    ScoredPosition,
    StrategicGraph,
    build_strategic_graph,
    get_weapon,
    needs_no_help,
    pick_positions,
    waypoint_path,
)
from .commander import travel_distance
from .execute import TaskStatus, check_acts
from .facts import ACT_REFUSED, Status, declares
from .memory import Memory
from .objectives import choose_spawn, enemy_control
from .role import FIXED_RATE, Role

if TYPE_CHECKING:
    from .agent import Agent

BOT_DOMAIN = Path(__file__).parent / "domains" / "bot.htn"
"""The shipped bot domain; copy it to change how bots behave."""

STATUS_EVERY = 5
"""Ticks between a bot's StatusReports to its squad."""

CLOSE_RANGE = 26.0
"""An enemy nearer than this is fought at once, from where the bot stands, whatever its order
(``close_threat``): walking on under fire costs a bot its cover. Tuned by sweeps (20 to 32)."""


THREAT_MEMORY = 10
"""How many ticks a bot remembers where it last saw an enemy now out of sight
(``last_seen``)."""

FIRED_ON_MEMORY = 10
"""How many ticks after a hit a bot still knows it was fired on (``under_fire``); the domain
says how recent a hit must be to count (``@under_fire``)."""

RECENT_TICKS = 10
"""How long a call for a medic (and a medic's answer) stays news (``recent``). At most the
agent's ``REFUSAL_MEMORY``: a medic refused a heal remembers it as long as the call is news."""

REFUSED_SPOT_TICKS = 5
"""How many ticks position picking leaves out a spot the world refused a move towards (at most
the agent's ``REFUSAL_MEMORY``)."""

COVER = PositionWeights(cover=3.0, threat_distance=0.5, line_of_fire=0.5, travel=-1.0)
"""Position picking for cover: cover from the threats first, still able to shoot back, near."""

ATTACK = PositionWeights(
    cover=1.0, threat_distance=-0.5, friend_distance=0.3, line_of_fire=2.0, travel=-1.0
)
"""Position picking for default combat: a spot in reach of the enemy, seeing it, in cover."""

SPREAD_AT = 3
"""Team mates on one waypoint (the bot included) that spread out when they fight there
(``spread_spot``): a crowd is one grenade's target and blocks its own lines of fire."""

SAFE_BLAST = 2 * get_weapon("rocket_launcher").splash_radius
"""How far a group must be for a bot to fire a missile at it (``missile_target``): a rocket
that falls short still misses the shooter."""

ESCORT_LINKS = 3
"""How far (in links) from a VIP in its hiding spot an escort stays (``escort_near``), and its
escorts in a crowd look for spots (``spread_around``): a VIP in a dead end has one neighbour."""

DETOUR = 1.3
"""How much longer than the shortest a way to the goal may be for a bot in a crowd to take
it instead (``next_hop``): a grid's parallel ways are the same length, a way around a block one
link longer."""

SNIPE_RANGE = 45.0
"""How far a sniping spot may be from the spot a scout holds from it: half the sniper rifle's
range, where it still hits nearly as often as at the muzzle."""

SPAWN_NEEDS: Final = (("tactician", 6), ("engineer", 6))
"""Classes a team needs for its objectives, and one for how many members (at least one each):
a dead bot comes back as one the team is short of (``spawn_class``)."""

ATTACK_GAIN = 0.2
"""A bot in default combat moves to the picked position only when it scores this much more
than where it stands."""


# --- the facts a bot writes --------------------------------------------------------------------


class Threat(NamedTuple):
    id: str
    waypoint: str
    distance: float


class CloseThreat(NamedTuple):
    id: str
    distance: float


class MateAt(NamedTuple):
    id: str
    waypoint: str


class Percent(NamedTuple):
    percent: int


class UnderFire(NamedTuple):
    attacker: str
    ago: int


class SeenAt(NamedTuple):
    enemy: str
    waypoint: str
    tick: int


class LastSeen(NamedTuple):
    enemy: str
    waypoint: str
    ago: int


class FiredOn(NamedTuple):
    attacker: str
    tick: int


class Outnumbered(NamedTuple):
    enemies: int
    friends: int


class OwnTurret(NamedTuple):
    id: str
    waypoint: str
    health: int


class SquadOf(NamedTuple):
    squad: str


class Allowed(NamedTuple):
    waypoint: str


class Group(NamedTuple):
    group: str


THREAT: Final = FactKind("threat", Threat, "an enemy in sight (nearest first)")
NEAREST_THREAT: Final = FactKind("nearest_threat", Threat, "the nearest enemy in sight")
CLOSE_THREAT: Final = FactKind(
    "close_threat", CloseThreat, "the nearest enemy, when within CLOSE_RANGE"
)
SEEN_AT: Final = FactKind("seen_at", SeenAt, "where and when the bot last saw an enemy")
LAST_SEEN: Final = FactKind(
    "last_seen", LastSeen, "an enemy out of sight now, seen lately: where, how many ticks ago"
)
DOWNED_MATE: Final = FactKind("downed_mate", MateAt, "the nearest downed team mate in sight")
HEALTH_SHARE: Final = FactKind("health_share", Percent, "health in percent of the maximum")
UNDER_FIRE: Final = FactKind("under_fire", UnderFire, "hit by an attacker a few ticks ago")
FIRED_ON: Final = FactKind("fired_on", FiredOn, "the last hit: who and when")
OUTNUMBERED: Final = FactKind("outnumbered", Outnumbered, "more enemies in sight than mates")
OWN_TURRET: Final = FactKind("own_turret", OwnTurret, "an engineer's own turret")
SQUAD: Final = FactKind("squad", SquadOf, "the squad the commander put the bot in (!join)")
ALLOWED_WAYPOINT: Final = FactKind(
    "allowed_waypoint", Allowed, "a waypoint of the squad's corridor (!restrict)"
)
NEARBY_GROUP: Final = FactKind(
    "nearby_group", Group, "the area group !broadcast nearby reaches (AreaGroups)"
)


class MemberStatus(NamedTuple):
    """A bot's StatusReport to its squad: ``status`` is its life, the details these fields in
    this order (``{"life": ..., "waypoint": ..., "health": ...}``)."""

    life: str
    waypoint: str
    health: int


def member_status(status: Status) -> MemberStatus | None:
    """A squad member's periodic StatusReport read by field name; None for another report."""
    if len(status.details) != len(MemberStatus._fields):
        return None
    return MemberStatus(*status.details)  # type: ignore[arg-type]  # the bot's own shape


def _me(memory: Memory) -> tuple[str, str] | None:
    me = SELF.first(memory.facts.facts("self"))
    return (me.id, me.team) if me is not None else None


@declares(THREAT, NEAREST_THREAT, CLOSE_THREAT, SEEN_AT, LAST_SEEN)
def threat_daemon(memory: Memory, tick: int) -> list[Fact]:
    """``(threat enemy waypoint distance)`` for every enemy in sight, enemy turrets included,
    nearest first, and ``(nearest_threat ...)`` for the nearest; ``(last_seen enemy waypoint
    ticks_ago)`` for an enemy out of sight now that the bot saw at most
    :data:`THREAT_MEMORY` ticks ago (it remembers ``(seen_at enemy waypoint tick)``), so that
    an enemy behind a corner is not an enemy gone."""
    me = _me(memory)
    if me is None:
        return []
    known = memory.facts
    seen = [*SEES.all(known.facts(SEES.name)), *SEES_TURRET.all(known.facts(SEES_TURRET.name))]
    # Enemy turrets are threats too (Killzone's bots attack them; an engineer repairs its own).
    enemies = sorted((s for s in seen if s.team != me[1]), key=lambda s: (s.distance, s.id))
    facts: list[Fact] = [THREAT.fact(s.id, s.waypoint, s.distance) for s in enemies]
    if enemies:
        nearest = enemies[0]
        facts.append(NEAREST_THREAT.fact(nearest.id, nearest.waypoint, nearest.distance))
        if nearest.distance <= CLOSE_RANGE:
            facts.append(CLOSE_THREAT.fact(nearest.id, nearest.distance))
    return facts + _remember_threats(memory, tick, enemies)


def _remember_threats(memory: Memory, tick: int, in_sight: Sequence[Any]) -> list[Fact]:
    # An enemy the last run of this daemon saw (its threat facts, still in memory) and this one
    # does not has just gone out of sight: remember where. Only the going writes to memory.
    visible = {enemy.id for enemy in in_sight}
    for before in THREAT.all(list(memory.facts.facts(THREAT.name))):
        if before.id not in visible:
            memory.forget(SEEN_AT.name, before.id)
            memory.remember(*SEEN_AT.fact(before.id, before.waypoint, tick - 1))
    gone: list[SeenAt] = []
    for seen in SEEN_AT.all(list(memory.facts.facts(SEEN_AT.name))):
        if tick - seen.tick > THREAT_MEMORY:
            memory.forget(SEEN_AT.name, seen.enemy)
        elif seen.enemy not in visible:
            gone.append(seen)
    gone.sort(key=lambda seen: (-seen.tick, seen.enemy))  # the latest first
    return [LAST_SEEN.fact(seen.enemy, seen.waypoint, tick - seen.tick) for seen in gone]


@declares(DOWNED_MATE)
def downed_mate_daemon(memory: Memory, tick: int) -> list[Fact]:
    """``(downed_mate id waypoint)`` for the nearest downed team mate in sight."""
    me = _me(memory)
    if me is None:
        return []
    mates = sorted(
        (s for s in SEES_DOWNED.all(memory.facts.facts("sees_downed")) if s.team == me[1]),
        key=lambda seen: (seen.distance, seen.id),
    )
    return [DOWNED_MATE.fact(mates[0].id, mates[0].waypoint)] if mates else []


@declares(HEALTH_SHARE, UNDER_FIRE, FIRED_ON, OUTNUMBERED, OWN_TURRET)
def condition_daemon(memory: Memory, tick: int) -> list[Fact]:
    """The bot's own condition, for self-preservation and class abilities (the domain's
    constants say what counts as hurt, badly hurt, under fire):

    - ``(health_share percent)``: its health, in percent of its maximum (0 to 100);
    - ``(under_fire attacker ticks_ago)`` for :data:`FIRED_ON_MEMORY` ticks after a hit (the
      last hit is remembered as ``(fired_on attacker tick)``);
    - ``(outnumbered enemies friends)`` when it sees more enemies than team mates (itself
      included);
    - ``(own_turret id waypoint health)`` for an engineer's turret.
    """
    me = _me(memory)
    if me is None:
        return []
    facts = memory.facts
    out: list[Fact] = []
    health = HEALTH.first(facts.facts("health"))
    maximum = MAX_HEALTH.first(facts.facts("max_health"))
    if health is not None and maximum is not None and maximum.value > 0:
        out.append(HEALTH_SHARE.fact(100 * health.value // maximum.value))
    hits = DAMAGED.all(facts.facts("damaged"))
    if hits:
        memory.forget(FIRED_ON.name)
        memory.remember(*FIRED_ON.fact(hits[-1].by, tick))
    for fired in FIRED_ON.all(list(facts.facts(FIRED_ON.name))):
        if isinstance(fired.tick, int) and tick - fired.tick <= FIRED_ON_MEMORY:
            out.append(UNDER_FIRE.fact(fired.attacker, tick - fired.tick))
    seen = SEES.all(facts.facts("sees"))
    enemies = sum(1 for s in seen if s.team != me[1])
    friends = 1 + sum(1 for s in seen if s.team == me[1])
    if enemies > friends:
        out.append(OUTNUMBERED.fact(enemies, friends))
    mine = f"turret-{me[0]}"
    for turret in TURRET.all(facts.facts("turret")):
        if turret.id == mine:
            out.append(OWN_TURRET.fact(turret.id, turret.waypoint, turret.health))
    return out


def _corridor(facts: FactDB) -> set[str] | None:
    """The waypoints of the squad's corridor; None: no restriction."""
    return {a.waypoint for a in ALLOWED_WAYPOINT.all(facts.facts(ALLOWED_WAYPOINT.name))} or None


def bot_functions(game_map: Map) -> dict[str, HtnFunction]:
    """The functions ``bot.htn`` calls, bound to ``game_map``."""
    points = {marker.id: marker.waypoint for marker in game_map.markers}
    capture_points = {m.id: m.waypoint for m in game_map.markers_of("capture")}
    areas = build_strategic_graph(game_map)  # the influence facts' areas

    doors = any(game_map.link_blockers(*link) for link in game_map.links)

    def closed(facts: FactDB) -> tuple[tuple[str, str], ...]:
        """The links closed now, as the bot's ``open`` facts say (the world's rule)."""
        if not doors:
            return ()
        return game_map.closed_links(
            {door.object: door.on is True for door in OPEN.all(facts.facts(OPEN.name))}
        )

    def way(facts: FactDB, start: str, goal: str) -> tuple[str, ...] | None:
        """The shortest path the bot may walk: in the squad's corridor if it can, else not."""
        allowed = _corridor(facts)
        shut = closed(facts)
        path = waypoint_path(game_map, start, goal, allowed=allowed, blocked_links=shut)
        if path is None and allowed is not None:
            # The restrictions cut us off.
            path = waypoint_path(game_map, start, goal, blocked_links=shut)
        return path

    def length(path: Sequence[str]) -> float:
        return sum(game_map.link_length(a, b) for a, b in pairwise(path))

    def next_hop(facts: FactDB, here: Value, goal: Value) -> Value:
        """The next waypoint towards ``goal``. A bot in a crowd of team mates
        (:func:`_crowd_rank`: a squad that walks one path is one blob) takes the k-th best
        first step of those whose way to the goal is at most :data:`DETOUR` times the shortest
        and does not come back through here, so the crowd fans out over parallel ways."""
        path = way(facts, str(here), str(goal))
        if path is None or len(path) < 2:
            return None
        ranked = _crowd_rank(facts, here) if len(path) > 2 else None
        if ranked is None:
            return path[1]
        shortest = length(path)
        shut = {frozenset(link) for link in closed(facts)}
        allowed = _corridor(facts)
        # Equal ways nearer the map's centre first (as waypoint_path): mirror images on a
        # mirror-symmetric map, where the id alone favoured the side whose ids sort first.
        options: list[tuple[float, float, str]] = []
        for step in game_map.neighbours(str(here)):
            if frozenset((str(here), step)) in shut or (allowed and step not in allowed):
                continue
            onward = way(facts, step, str(goal))
            if onward is None or str(here) in onward:
                continue
            cost = game_map.link_length(str(here), step) + length(onward)
            if cost <= DETOUR * shortest:
                options.append((cost, game_map.from_centre(step), step))
        options.sort()
        rank, _held = ranked
        return options[rank % len(options)][2] if options else path[1]

    def point_waypoint(facts: FactDB, point: Value) -> Value:
        return points.get(str(point))

    def in_range(facts: FactDB, weapon: Value, distance: Value) -> bool:
        return isinstance(distance, int | float) and distance <= get_weapon(str(weapon)).range

    def weapon_for(facts: FactDB, distance: Value) -> Value:
        """The carried weapon with rounds that reaches ``distance``, bullets before missiles."""
        return _reaching(facts, distance, first="bullet")

    def weapon_against(facts: FactDB, target: Value, distance: Value) -> Value:
        """Listing 29.1's choice: missiles at a turret or a group (:func:`missile_target`),
        bullets at anyone else (among the carried weapons with rounds that reach
        ``distance``). Body Count against freelance, 12 v 12, seeds 1-10 with the hierarchy on
        each side: 16 of 20 with missiles at turrets only, 17 of 20 at groups too (19 of 20
        over seeds 11-20)."""
        first = "missile" if missile_target(facts, target, distance) else "bullet"
        return _reaching(facts, distance, first=first)

    def missile_target(facts: FactDB, target: Value, distance: Value) -> bool:
        """A turret in sight, or an enemy in a group: another enemy in sight on its waypoint
        and no team mate there (a team kill costs the team), at least :data:`SAFE_BLAST` away
        so that the blast misses the shooter."""
        if any(s.id == target for s in SEES_TURRET.all(facts.facts(SEES_TURRET.name))):
            return True
        me = SELF.first(facts.facts(SELF.name))
        if me is None or not isinstance(distance, int | float) or distance < SAFE_BLAST:
            return False
        seen = SEES.all(facts.facts(SEES.name))
        spot = next((s.waypoint for s in seen if s.id == target and s.team != me.team), None)
        there = [s.team for s in seen if s.waypoint == spot]
        return spot is not None and me.team not in there and len(there) >= 2

    def _reaching(facts: FactDB, distance: Value, *, first: str) -> Value:
        if not isinstance(distance, int | float):
            return None
        loaded = sorted(clip.weapon for clip in AMMO.all(facts.facts(AMMO.name)) if clip.amount)
        reaching = [w for w in loaded if get_weapon(w).range >= distance]
        reaching.sort(key=lambda w: (get_weapon(w).kind != first, w))
        return reaching[0] if reaching else None

    def nearest_unheld(
        markers: Mapping[str, str], facts: FactDB, team: Value, here: Value
    ) -> Value:
        """Of ``markers`` (marker -> waypoint), the one nearest ``here`` (in waypoints) that
        ``team`` does not hold; ties by marker id."""
        held = {c.point for c in CAPTURED.all(facts.facts(CAPTURED.name)) if c.team == team}
        best: tuple[int, str] | None = None
        for point, waypoint in sorted(markers.items()):
            if point in held:
                continue
            path = waypoint_path(game_map, str(here), waypoint)
            if path is not None and (best is None or (len(path), point) < best):
                best = (len(path), point)
        return best[1] if best is not None else None

    def nearest_open_point(facts: FactDB, team: Value, here: Value) -> Value:
        """The capture point nearest ``here`` (in waypoints) that ``team`` does not hold."""
        return nearest_unheld(capture_points, facts, team, here)

    tsps = {m.id for m in game_map.markers_of("tsp")}
    tsp_waypoints = {m.id: m.waypoint for m in game_map.markers_of("tsp")}
    spawns = {team: sorted(m.waypoint for m in game_map.spawns(team)) for team in game_map.teams}

    def _seen(facts: FactDB, team: Value, *, enemies: bool) -> list[tuple[float, float]]:
        return [
            game_map.position(s.waypoint)
            for s in SEES.all(facts.facts("sees"))
            if (s.team != team) == enemies
        ]

    def _forward(team: Value) -> Callable[[str], float] | None:
        """Position picking's ``tie_break`` for ``team``: of spots that score alike, the nearer
        the enemy's home first. The picker's own tie-break, the id, is no mirror image of
        itself: on Warzone, mirrored east-west, the west team fell back on a tie and the east
        team stepped forward. Forward, as the squads' spots (against freelance, seeds 1-20 on
        each side: Search and Retrieve 40 of 40 forward, 34 back; Body Count 28 and 29)."""
        theirs = [home for side, home in sorted(homes.items()) if side != str(team) and home]
        if not theirs:
            return None
        return lambda waypoint: min(float(travel(waypoint, home)) for home in theirs)

    def _my_team(facts: FactDB) -> Value:
        me = SELF.first(facts.facts("self"))
        return me.team if me is not None else None

    def recent(facts: FactDB, when: Value) -> bool:
        """``when`` (a tick) is at most :data:`RECENT_TICKS` ago."""
        now = TICK.first(facts.facts("tick"))
        return now is not None and isinstance(when, int) and now.tick - when <= RECENT_TICKS

    def refused_spots(facts: FactDB) -> set[str]:
        """Spots the world refused a move towards (``act_refused move ago reason next
        toward``) at most :data:`REFUSED_SPOT_TICKS` ago."""
        return {
            str(refused.about[-1])
            for refused in ACT_REFUSED.all(facts.facts(ACT_REFUSED.name))
            if refused.verb == "move"
            and refused.about
            and isinstance(refused.ago, int)
            and refused.ago <= REFUSED_SPOT_TICKS
        }

    def heal_refused(facts: FactDB, mate: Value, asked: Value) -> bool:
        """The world refused a heal of ``mate`` sent after it asked (tick ``asked``) because
        the mate needs none or is past help (:func:`~warband.world.needs_no_help`)."""
        now = TICK.first(facts.facts("tick"))
        if now is None or not isinstance(asked, int):
            return False
        return any(
            refused.verb == "use"
            and refused.about[:1] == (mate,)
            and isinstance(refused.ago, int)
            and now.tick - refused.ago > asked
            and needs_no_help(str(mate), refused.reason)
            for refused in ACT_REFUSED.all(facts.facts(ACT_REFUSED.name))
        )

    def cover_spot(facts: FactDB, here: Value, radius: Value) -> Value:
        """The waypoint within ``radius`` (travel, in the corridor) that covers best
        from the enemies in sight and those seen lately (``last_seen``: an enemy behind a
        corner is still one), by position picking with :data:`COVER`; ``here`` when it is the
        best; None when nothing near gives cover or no enemy is known."""
        team = _my_team(facts)
        threats = _seen(facts, team, enemies=True) + [
            game_map.position(gone.waypoint)
            for gone in LAST_SEEN.all(facts.facts(LAST_SEEN.name))
            if game_map.has_waypoint(gone.waypoint)
        ]
        if not threats:
            return None
        ranked = pick_positions(
            game_map,
            origin=str(here),
            behaviour=COVER,
            threats=threats,
            radius=float(radius) if isinstance(radius, int | float) else 0.0,
            allowed=_corridor(facts),
            blocked_links=closed(facts),
            tie_break=_forward(team),
        )
        refused = refused_spots(facts)
        ranked = [c for c in ranked if c.waypoint not in refused]
        if not ranked or ranked[0].cover <= 0.0:
            return None
        return ranked[0].waypoint

    def retreat_spot(facts: FactDB, team: Value, here: Value) -> Value:
        """Where a badly hurt, outnumbered bot falls back to: the nearest team mate in sight
        that stands farther from the enemies than the bot, else the team's nearest spawn;
        None when it is there already."""
        threats = _seen(facts, team, enemies=True)
        origin = str(here)

        def danger(waypoint: str) -> float:
            x, y = game_map.position(waypoint)
            return min(((x - a) ** 2 + (y - b) ** 2 for a, b in threats), default=0.0)

        mine = danger(origin)
        mates = sorted(
            (s.distance, s.waypoint)
            for s in SEES.all(facts.facts("sees"))
            if s.team == team and s.waypoint != origin and danger(s.waypoint) > mine
        )
        if mates:
            return mates[0][1]
        best: tuple[int, str] | None = None
        for spawn in spawns.get(str(team), []):
            path = waypoint_path(game_map, origin, spawn)
            if path is not None and (best is None or (len(path), spawn) < best):
                best = (len(path), spawn)
        return best[1] if best is not None and best[1] != origin else None

    def _attack_positions(facts: FactDB, here: str, enemy_at: str) -> list[ScoredPosition]:
        """Position picking with :data:`ATTACK` within reach of the enemy at ``enemy_at`` (the
        longest range of the bot's weapons with rounds), against every enemy in sight, best
        first; never onto an enemy, nor a spot the world just refused a move towards."""
        clips = AMMO.all(facts.facts(AMMO.name))
        reach = max((get_weapon(c.weapon).range for c in clips if c.amount), default=0.0)
        team = _my_team(facts)
        threats = _seen(facts, team, enemies=True)
        if reach <= 0.0 or not threats:
            return []
        ranked = pick_positions(
            game_map,
            origin=here,
            behaviour=ATTACK,
            threats=threats,
            friends=_seen(facts, team, enemies=False),
            centre=enemy_at,
            radius=reach,
            allowed=_corridor(facts),
            blocked_links=closed(facts),
            tie_break=_forward(team),
        )
        shunned = {s.waypoint for s in SEES.all(facts.facts("sees")) if s.team != team}
        shunned |= refused_spots(facts)
        return [c for c in ranked if c.waypoint not in shunned]

    def attack_spot(facts: FactDB, here: Value, enemy_at: Value) -> Value:
        """Default combat's position picking (:func:`_attack_positions`); None when the best is
        ``here`` or scores less than :data:`ATTACK_GAIN` above it."""
        ranked = _attack_positions(facts, str(here), str(enemy_at))
        if not ranked or ranked[0].waypoint == here:
            return None
        stay = next((c.score for c in ranked if c.waypoint == here), None)
        if stay is not None and ranked[0].score < stay + ATTACK_GAIN:
            return None  # not worth the walk: no hopping between spots that score alike
        return ranked[0].waypoint

    def shot_from(facts: FactDB, here: Value) -> Value:
        """Where a bot hit by an enemy it cannot see should look: the nearest place it heard
        gunfire or an explosion this tick, other than its own and its team mates' in sight;
        None when it heard none."""
        team = _my_team(facts)
        friendly = {str(here)} | {
            s.waypoint for s in SEES.all(facts.facts(SEES.name)) if s.team == team
        }
        noises = sorted(
            {
                noise.waypoint
                for noise in HEARD.all(facts.facts(HEARD.name))
                if noise.kind in ("gunfire", "explosion")
                and noise.waypoint not in friendly
                and game_map.has_waypoint(noise.waypoint)
            }
        )
        if not noises or not game_map.has_waypoint(str(here)):
            return None
        home = homes.get(str(team))

        def nearness(w: str) -> tuple[float, float, float, str]:
            # Of two as near, the nearer the map's centre, then the team's own side: an id
            # alone is no mirror image of itself.
            own_side = float(travel(home, w)) if home else 0.0
            return float(travel(str(here), w)), game_map.from_centre(w), own_side, w

        return min(noises, key=nearness)

    def hunt_spot(facts: FactDB, here: Value) -> Value:
        """Where a bot on its own in Body Count goes looking for enemies when it sees none: the
        nearest gunfire or explosion it hears (:func:`shot_from`), else the enemy spawn nearest
        ``here`` (the enemies come from there). None when it stands there already. Without it a
        freelance bot with nothing in sight stood at its spawn, and a match froze once neither
        side went looking (Body Count seed 3: nothing moved from tick 120 to 400)."""
        noise = shot_from(facts, here)
        if noise is not None:
            return noise
        team = str(_my_team(facts))
        theirs = [w for side, places in sorted(spawns.items()) if side != team for w in places]
        if not theirs or not game_map.has_waypoint(str(here)):
            return None

        def nearness(w: str) -> tuple[float, float, str]:
            return float(travel(str(here), w)), game_map.from_centre(w), w

        spot = min(theirs, key=nearness)
        return spot if spot != here else None

    def _crowd_rank(facts: FactDB, here: Value) -> tuple[int, Counter[str]] | None:
        """The bot's rank (1, 2...: the first by id is 0, and stays) in a crowd of
        :data:`SPREAD_AT` or more team mates on ``here`` (itself included), and how many team
        mates in sight stand on each waypoint; None when it is not in a crowd or is its
        first. Every bot of the crowd sees the same crowd, so ranks deal places out among them
        with no message."""
        me = SELF.first(facts.facts(SELF.name))
        if me is None:
            return None
        mates = [s for s in SEES.all(facts.facts(SEES.name)) if s.team == me.team]
        crowd = sorted({s.id for s in mates if s.waypoint == here} | {me.id})
        if len(crowd) < SPREAD_AT or crowd[0] == me.id:
            return None
        return crowd.index(me.id), Counter(s.waypoint for s in mates)

    def spread_spot(facts: FactDB, here: Value, enemy_at: Value) -> Value:
        """Where a bot in a crowd (:func:`_crowd_rank`) steps to fight: the k-th of the crowd
        takes the k-th best attack position (:func:`_attack_positions`) that holds fewer than
        two team mates in sight, instead of all walking to the one best spot. None when the
        bot is not in a crowd, is its first, or has no spot to go to."""
        ranked = _crowd_rank(facts, here)
        if ranked is None:
            return None
        rank, held = ranked
        spots = [
            c.waypoint
            for c in _attack_positions(facts, str(here), str(enemy_at))
            if c.waypoint != here and held[c.waypoint] < 2
        ]
        return spots[(rank - 1) % len(spots)] if spots else None

    hiding_spots = {m.waypoint for m in game_map.markers_of("hiding")}

    def _escort_links(centre: str) -> int:
        """How far (in links) escorts stand from ``centre``: :data:`ESCORT_LINKS` around a VIP
        in its hiding spot (a dead end: a house and its yard), one link around a moving one
        (as the object's carrier: escorts two and three links back lost Search and Retrieve
        matches, 12 of 16 against 16 of 16)."""
        return ESCORT_LINKS if centre in hiding_spots else 1

    def spread_around(facts: FactDB, here: Value, centre: Value) -> Value:
        """Where a bot in a crowd (:func:`_crowd_rank`) around ``centre`` (an escorted VIP's
        waypoint) stands instead: the k-th of the crowd takes the k-th of the centre and the
        rings around it. Around a hiding VIP, ring after ring (at most :data:`ESCORT_LINKS`)
        until there is a spot with fewer than two team mates for each rank, those first, then
        the nearer, then the fewest team mates; around a moving one, its neighbours (and
        theirs, when there are fewer than the crowd), the fewest team mates first. None when
        the bot is not in a crowd or is its first."""
        ranked = _crowd_rank(facts, here)
        if ranked is None or not game_map.has_waypoint(str(centre)):
            return None
        rank, held = ranked
        rings = game_map.rings(str(centre))
        if _escort_links(str(centre)) == 1:
            near = [str(centre), *next(rings, ())]
            if len(near) <= rank:
                near += next(rings, ())
            spots = sorted((w for w in near if w != here), key=lambda w: (held[w], w))
            return spots[(rank - 1) % len(spots)] if spots else None
        # The VIP, its escorts and the squad that defends it crowded the house and its yard
        # when the spots stopped at the second ring.
        around = {str(centre): 0}
        for distance, ring in enumerate(rings, 1):
            free = sum(1 for w in around if w != here and held[w] < 2)
            if distance > ESCORT_LINKS or free >= rank:
                break
            around.update(dict.fromkeys(ring, distance))
        spots = sorted(
            (w for w in around if w != here), key=lambda w: (held[w] >= 2, around[w], held[w], w)
        )
        return spots[(rank - 1) % len(spots)] if spots else None

    def nearest_open_tsp(facts: FactDB, team: Value, here: Value) -> Value:
        """The TSP nearest ``here`` (in waypoints) that ``team`` does not hold."""
        return nearest_unheld(tsp_waypoints, facts, team, here)

    returns = {str(m.team): m.waypoint for m in game_map.markers_of("return") if m.team}

    def place_of(facts: FactDB, entity: Value) -> Value:
        """Where ``entity`` is, as far as the bot knows: a marker's waypoint, the retrieval
        object's (lying or carried), a VIP's, an agent's in sight; None when unknown."""
        name = str(entity)
        if name in points:
            return points[name]
        for lying in OBJECT_AT.all(facts.facts(OBJECT_AT.name)):
            if lying.object == name:
                return lying.waypoint
        for vip in VIP_AT.all(facts.facts(VIP_AT.name)):
            if vip.agent == name:
                return vip.waypoint
        for agent in AT.all(facts.facts(AT.name)):
            if agent.id == name:
                return agent.waypoint
        for seen in SEES.all(facts.facts(SEES.name)):
            if seen.id == name:
                return seen.waypoint
        return None

    def home_point(facts: FactDB, team: Value) -> Value:
        return returns.get(str(team))

    def near(facts: FactDB, here: Value, there: Value) -> bool:
        return here == there or game_map.has_link(str(here), str(there))

    def escort_near(facts: FactDB, here: Value, there: Value) -> bool:
        """``here`` is near enough ``there`` (the escorted entity's waypoint) for an escort
        (:func:`_escort_links`)."""
        if here == there:
            return True
        if not game_map.has_waypoint(str(there)):
            return False
        rings = islice(game_map.rings(str(there)), _escort_links(str(there)))
        return any(here in ring for ring in rings)

    def can_capture(facts: FactDB, point: Value) -> bool:
        if str(point) not in tsps:
            return True
        return any(me.cls == "tactician" for me in SELF.all(facts.facts(SELF.name)))

    travel = travel_distance(game_map)
    hiding = sorted(m.waypoint for m in game_map.markers_of("hiding"))
    snipes = sorted({m.waypoint for m in game_map.markers_of("sniping")})
    homes = {team: game_map.home(team) for team in game_map.teams}
    overlooking: dict[str, list[str]] = {}
    """spot -> the sniping waypoints that overlook it (the spot itself, if it is one), once."""

    def sniping_spot(facts: FactDB, spot: Value) -> Value:
        """The sniping marker that overlooks ``spot`` (in sight of it, at most
        :data:`SNIPE_RANGE` away), the nearest by travel (then the nearer the team's base);
        None when none does. A scout ordered
        to hold ``spot`` holds this instead (the map's sniping annotations, §29.6.2)."""
        if not game_map.has_waypoint(str(spot)):
            return None
        if spot not in overlooking:
            seeing = set(game_map.waypoints_in_sight(str(spot), SNIPE_RANGE)) | {str(spot)}
            overlooking[str(spot)] = [w for w in snipes if w in seeing]
        home = homes.get(str(_my_team(facts)))

        def nearness(w: str) -> tuple[float, float, str]:
            # Of two as near (mirror images), the one on the team's own side.
            return travel(str(spot), w), travel(home, w) if home else 0.0, w

        found = overlooking[str(spot)]
        return min(found, key=nearness) if found else None

    def _nearest(here: Value, waypoints: list[tuple[str, str]]) -> Value:
        """Of ``(id, waypoint)`` pairs, the id whose waypoint is nearest ``here`` in travel."""
        if not waypoints:
            return None
        return min(waypoints, key=lambda pair: (travel(str(here), pair[1]), pair[0]))[0]

    def order_place(facts: FactDB, task: Value, arg: Value) -> Value:
        """Where an order sends the bot: a goto's waypoint, a capture point's waypoint, the
        waypoint it defends or hides at, an attacked destroy target's waypoint; None for an
        order without a fixed place (an attack on an agent follows it). Attackers of a target
        that stood and fought wherever they met a defender were order-starved a fifth of the
        time."""
        if task in ("capture", "attack"):
            return point_waypoint(facts, arg)
        if task in ("goto", "defend", "hide") and game_map.has_waypoint(str(arg)):
            return arg
        return None

    def nearest_hiding(facts: FactDB, here: Value) -> Value:
        """The hiding spot nearest ``here`` (Assassination's VIP on its own), a waypoint."""
        return _nearest(here, [(w, w) for w in hiding])

    def _targets(facts: FactDB, *, ours: bool) -> list[tuple[str, str]]:
        team = _my_team(facts)
        states = {t.target: t.state for t in TARGET_STATE.matching(facts.facts(TARGET_STATE.name))}
        return [
            (o.id, o.waypoint)
            for o in OBJECTIVE.matching(facts.facts(OBJECTIVE.name))
            if o.kind == "target"
            and (o.team == team) == ours
            and (ours or states.get(o.id) == TARGET_INTACT)
        ]

    def nearest_enemy_target(facts: FactDB, here: Value) -> Value:
        """The enemy's intact destroy target nearest ``here`` (Search and Destroy attackers)."""
        return _nearest(here, _targets(facts, ours=False))

    def nearest_own_target(facts: FactDB, here: Value) -> Value:
        """The team's destroy target nearest ``here`` (Search and Destroy defenders)."""
        return _nearest(here, _targets(facts, ours=True))

    def spawn_near(facts: FactDB, places: Value) -> Value:
        """Of the spawns the world offers a dead bot (``spawn_option``), the one with the best
        travel cost to ``places`` (where its squad's members are, a list; §29.6.1's respawn),
        where the enemy holds sway counted against it (:func:`enemy_control` of the faction's
        map, when the world tells a dead bot its ``influence``)."""
        options = [o.waypoint for o in SPAWN_OPTION.all(facts.facts("spawn_option"))]
        squad = [str(w) for w in places if w] if isinstance(places, tuple) else []
        if not squad:
            return None
        control = enemy_control(facts)
        danger = {w: control.get(areas.area_of(w), 0.0) for w in options} if control else None
        return choose_spawn(options, squad, travel, danger=danger)

    def spawn_class(facts: FactDB, me: Value) -> Value:
        """The class a dead bot comes back as (§29.6.1's fixed heuristic): the team needs
        tacticians and engineers for its objectives (:data:`SPAWN_NEEDS`), so a bot whose class
        is one the team is short of keeps it, else it takes one the team is short of, else it
        keeps its own (the paper draws the rest at random: keeping the roster's mix is as
        varied and does not change a medic into a scout for no reason). The VIP stays what it
        is. None when the world told no ``team_class`` facts."""
        counts = {c.cls: c.players for c in TEAM_CLASS.all(facts.facts(TEAM_CLASS.name))}
        myself = SELF.first(facts.facts(SELF.name))
        if not counts or myself is None:
            return None
        if any(v.agent == me for v in VIP.all(facts.facts(VIP.name))):
            return myself.cls
        team = sum(counts.values()) + 1
        short = [c for c, per in SPAWN_NEEDS if counts.get(c, 0) < max(1, team // per)]
        if myself.cls in short or not short:
            return myself.cls
        return short[0]

    return {
        "attack_spot": attack_spot,
        "spread_spot": spread_spot,
        "spread_around": spread_around,
        "escort_near": escort_near,
        "shot_from": shot_from,
        "hunt_spot": hunt_spot,
        "cover_spot": cover_spot,
        "nearest_open_tsp": nearest_open_tsp,
        "recent": recent,
        "retreat_spot": retreat_spot,
        "can_capture": can_capture,
        "home_point": home_point,
        "near": near,
        "place_of": place_of,
        "nearest_open_point": nearest_open_point,
        "next_hop": next_hop,
        "point_waypoint": point_waypoint,
        "in_range": in_range,
        "weapon_for": weapon_for,
        "weapon_against": weapon_against,
        "spawn_near": spawn_near,
        "spawn_class": spawn_class,
        "sniping_spot": sniping_spot,
        "heal_refused": heal_refused,
        "nearest_hiding": nearest_hiding,
        "order_place": order_place,
        "nearest_enemy_target": nearest_enemy_target,
        "nearest_own_target": nearest_own_target,
    }


def _join(agent: Agent, task: Task) -> TaskStatus:
    squad = task.args[0] if task.args else None
    if not isinstance(squad, str):
        return agent.fail_task(f"{task}: !join needs a squad id")
    agent.superior = squad
    agent.memory.forget(ALLOWED_WAYPOINT.name)
    agent.memory.forget(SQUAD.name)
    agent.memory.remember(*SQUAD.fact(squad))
    return "done"


def _restrict(agent: Agent, task: Task) -> TaskStatus:
    """Keep to the squad's corridor: ``(allowed_waypoint w)`` for each waypoint of the list
    (none: no restriction), replacing the corridor of the bot's previous order sequence."""
    listed = task.args[0] if task.args else ()
    if not isinstance(listed, tuple) or not all(isinstance(w, str) for w in listed):
        return agent.fail_task(f"{task}: !restrict needs a list of waypoint ids")
    agent.memory.forget(ALLOWED_WAYPOINT.name)
    for waypoint in sorted({str(w) for w in listed if w}):
        agent.memory.remember(*ALLOWED_WAYPOINT.fact(waypoint))
    return "done"


def _clear_restrictions(agent: Agent, task: Task) -> TaskStatus:
    agent.memory.forget(ALLOWED_WAYPOINT.name)
    return "done"


def _go(agent: Agent, task: Task) -> TaskStatus:
    waypoint = task.args[0] if task.args else None
    if not isinstance(waypoint, str):
        return agent.fail_task(f"{task}: !go needs a waypoint")
    toward = task.args[1] if len(task.args) > 1 else waypoint
    # Done at once: the world walks the bot on (its movement queue) while the plan goes on. A
    # refusal comes back as (act_refused move ago reason waypoint toward).
    agent.send_act("move", {"waypoint": waypoint}, about=(waypoint, str(toward)))
    return "done"


def _place_turret(agent: Agent, task: Task) -> TaskStatus:
    # Its own primitive: !use already means use {"target": ...} (revive, heal).
    return agent.act(task, "use", {"ability": "turret"})


def _repair(agent: Agent, task: Task) -> TaskStatus:
    turret = task.args[0] if task.args else None
    if not isinstance(turret, str):
        return agent.fail_task(f"{task}: !repair needs a turret id")
    return agent.act(task, "use", {"object": turret})


NEARBY = "nearby"
"""The group name a bot's plan broadcasts to (``!broadcast nearby ...``): the team mates in
the same area of the map's strategic graph."""


class AreaGroups:
    """Keeps a bot in the group of the area it stands in, one group per team and area
    (``red.area-3``), and points its ``nearby`` alias there: what a bot broadcasts to
    ``nearby`` reaches the team mates in its area. A bot that is not alive leaves it.

    A change of groups takes effect as the next tick begins (lockstep), so the bot remembers
    ``(nearby_group group)`` from that tick on: a plan that broadcasts to ``nearby`` waits for
    it, instead of calling into a group it is not heard in yet."""

    def __init__(self, graph: StrategicGraph) -> None:
        self._graph = graph
        self._group: str | None = None
        self._since = 0

    def __call__(self, agent: Agent, tick: int) -> None:
        facts = agent.memory.facts
        state = STATE.first(facts.facts("state"))
        group: str | None = None
        if state is not None and state.life == "alive" and agent.team:
            at = next((a.waypoint for a in AT.all(facts.facts("at")) if a.id == agent.id), None)
            if at is not None:
                group = f"{agent.team}.area-{self._graph.area_of(at)}"
        if group != self._group:
            agent.memory.forget(NEARBY_GROUP.name)
            if self._group is not None:
                agent.leave_group(self._group)
            if group is not None:
                agent.join_group(group)
                agent.group_aliases[NEARBY] = group
            else:
                agent.group_aliases.pop(NEARBY, None)
            self._group, self._since = group, tick
        elif group is not None and tick == self._since + 1:
            agent.memory.remember(*NEARBY_GROUP.fact(group))


class BotReports:
    """What a bot tells its squad: its status every few ticks, and the enemies it starts to see.
    It also keeps the bot's ``nearby`` area group (:class:`AreaGroups`)."""

    def __init__(self, graph: StrategicGraph) -> None:
        self._reported: set[str] = set()
        self._areas = AreaGroups(graph)

    def __call__(self, agent: Agent, tick: int) -> None:
        self._areas(agent, tick)
        if agent.superior is None:
            return
        facts = agent.memory.facts
        state = STATE.first(facts.facts("state"))
        if tick % STATUS_EVERY == 1 and state is not None:
            at = next((a.waypoint for a in AT.all(facts.facts("at")) if a.id == agent.id), "")
            health = HEALTH.first(facts.facts(HEALTH.name))
            report = MemberStatus(state.life, at, health.value if health is not None else 0)
            details: dict[str, Value] = report._asdict()
            agent.send(StatusReport(recipient=agent.superior, status=state.life, details=details))
        seen = {threat.id: threat for threat in THREAT.all(facts.facts(THREAT.name))}
        for enemy in sorted(set(seen) - self._reported):
            agent.send(
                ThreatReport(recipient=agent.superior, threat=enemy, position=seen[enemy].waypoint)
            )
        self._reported = set(seen)


BOOKKEEPING_TASKS = frozenset({"!restrict", "!clear_restrictions", "!clear_order", "!report"})
"""The bot's bookkeeping tasks (its squad's corridor, an order done, a report up): a plan of
them is followed by a new decision in the same tick (:attr:`Role.decide_again_after`), so the
move the corridor restricts, or the next order, starts at once (the sweeps: a corridor taken a
tick late cost the hierarchy its margin) and a fight holds up no report."""


BOT_FACTS: Final = (SQUAD, ALLOWED_WAYPOINT, NEARBY_GROUP)
"""The facts the bot's tasks and reporter write (its daemons declare theirs)."""


def bot_role(
    game_map: Map,
    *,
    domain: str | Path = BOT_DOMAIN,
    functions: Mapping[str, HtnFunction] | None = None,
    facts: Sequence[FactKind[Any]] = (),
    **options: object,
) -> Role:
    """The bot role on ``game_map``, from the shipped domain or a designer's copy.

    ``functions`` are added to (or replace) :func:`bot_functions`, for a domain that calls
    functions of its own; ``facts`` declares the facts they or the domain's new daemons write.
    """
    htn = load_domain_file(
        domain, {**bot_functions(game_map), **(functions or {})}, check=check_acts
    )
    areas = build_strategic_graph(game_map)
    daemons: Mapping[str, object] = {
        "threat": threat_daemon,
        "downed_mate": downed_mate_daemon,
        "condition": condition_daemon,
    }
    return Role(
        "bot",
        htn,
        daemons=daemons,  # type: ignore[arg-type]
        tasks={
            "!join": _join,
            "!go": _go,
            "!restrict": _restrict,
            "!clear_restrictions": _clear_restrictions,
            "!place_turret": _place_turret,
            "!repair": _repair,
        },
        reporter=lambda: BotReports(areas),
        decide_again_after=BOOKKEEPING_TASKS,
        facts=(*BOT_FACTS, *facts),
        **{"replan_every": FIXED_RATE, **options},  # type: ignore[arg-type]
    )
