"""The simulation: the world's state and its tick, pure and deterministic (the actor wraps it).

Life of a tick
==============

Agents call :meth:`World.submit` with a verb and its arguments (the *virtual controller*). The
world validates the act against the current state and queues it, or rejects it with a precise
reason. Each agent has two queues per tick: **movement** (``move``, ``wait``; a move persists
until the target waypoint is reached) and **one action** (every other verb, except ``look``
which is free). :meth:`World.step` then advances one tick, in this fixed order:

1. weapon timers (reload, cooldown) and ability timers (boost) count down; a character downed
   ``DOWNED_TICKS`` ticks ago bleeds out (``died``), one dead for ``RESPAWN_TICKS`` ticks
   respawns (``respawned``) at a base spawn or at a TSP its team holds;
2. actions in agent-id order: reload, select_weapon, crouch/stand, use, capture;
3. shots in agent-id order, then automated turrets in turret-id order; each shot draws from
   the world's ``random.Random(seed)``; damage lands in the same order, and a character whose
   health reaches 0 is *downed* (the ``killed`` event credits the shooter);
4. movement along links at the class speed (boost x1.5, crouched x0.5);
5. symbolic objects: doors and bars worked by a plate are open while someone stands on it;
6. captures; 7. the game mode scores the tick's events.

Verbs and arguments (``args`` is a flat dict of str/int/float/bool):

==================  =============================================================================
``move``            ``{"waypoint": id}``: walk to a waypoint linked to the current one (not through
                    a wall, not across a closed door or bars)
``wait``            ``{}``: stop moving
``fire``            ``{"target": agent or turret id}``: shoot with the selected weapon (needs ammo,
                    range, line of sight; not at a team mate)
``use``             ``{"object": id}``: open or close a door (from either side; a locked one with
                    its key item), lift or lower bars (from the outside only: for another), a lever
                    (toggle), a plate (stand on it), an item (pick it up), a turret (``repair``,
                    engineers). Doors and bars worked by a plate or lever are not moved by hand;
                    ``{"target": agent id}``: ``revive`` a downed / ``heal`` a wounded team mate
                    (medics); ``{"ability": "turret"}``: place a turret here (engineers);
                    ``{"ability": "cloak" | "disguise" | "boost"}``
``reload``          ``{}``: reload the selected weapon
``select_weapon``   ``{"weapon": name}``
``crouch``          ``{}``; ``stand`` ``{}``
``capture``         ``{"point": marker id}``: work on a capture point or TSP (TSPs: tacticians);
                    owned after ``CAPTURE_TICKS`` uncontested ticks
``look``            ``{"waypoint": id}``: turn towards a waypoint (free, not an action)
==================  =============================================================================

Facts
=====

:meth:`World.percepts_for` returns flat tuples: ``("tick", n)``, ``("self", id, team, class)``,
``("state", "alive" | "downed" | "dead")``, ``("at", id, waypoint)``, ``("moving", id, from,
to)``, ``("position", x, y)``, ``("health", hp)``, ``("max_health", hp)``, ``("weapon", name)``,
``("ammo", weapon, clip)``, ``("spare_ammo", weapon, rounds)``, ``("reloading", weapon, ticks)``,
``("crouched",)``, ``("cloaked",)``, ``("disguised",)``, ``("boosted", ticks)``,
``("carrying", item id, item kind)``, ``("bleeding_out", ticks)`` (downed),
``("respawn_in", ticks)`` (dead); what it senses: ``("sees", id,
waypoint, distance, apparent team)``, ``("sees_downed", id, waypoint, distance, team)``,
``("sees_turret", id, waypoint, distance, team)``, ``("heard", kind, waypoint)``; and common
knowledge: ``("captured", point, team)``, ``("open", object, bool)``, ``("pressed", plate,
bool)``, ``("item_at", item, waypoint)``, ``("turret", id, team, waypoint, health)`` (own
team's turrets), ``("score", team, points)``, ``("time_left", ticks)``.

Events (:class:`TickReport`) are public (``killed``, ``died``, ``revived``, ``respawned``,
``captured``, ``contested``, ``opened``, ``closed``, ``picked_up``, ``dropped``,
``turret_placed``, ``repaired``, ``destroyed``, ``game_over``) or private to one agent (``hit``,
``missed``, ``damaged``, ``healed``, ``arrived``, ``blocked``, ``act_failed``);
:meth:`World.events_for` merges them for one agent.

Snapshot format
===============

:meth:`World.snapshot` returns plain JSON-ready data (read by ``render.py`` and the logs)::

    {
      "map": "warzone", "map_source": "<file the map came from>", "tick": 12,
      "mode": "capture_and_hold" | None,
      "scores": {"red": 3, "blue": 0}, "outcome": None | {"winner", "scores", "reason", "tick"},
      "teams": ["red", "blue"],
      "agents": {"bot-1": {"team", "class", "x", "y", "heading", "waypoint", "target",
                           "health", "max_health", "state", "weapon", "crouched", "cloaked",
                           "disguised", "carrying": [item ids], "kills", "deaths"}},
      "turrets": {"turret-bot-3": {"team", "owner", "x", "y", "waypoint", "health"}},
      "captures": {"cp-a": "red" | None},
      "objects": {"cell-door": {"kind", "open", "waypoint"},
                  "key": {"kind": "item", "waypoint": id | None, "carrier": id | None}},
      "influence": {"red": {"<area id>": float}},     # with track_influence: friends - enemies
      "corridors": {"squad-1": ["<area id>", ...]},   # as given by set_corridor
      "events": [[...], ...]                          # public events of the last tick
    }
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from ..exceptions import ConfigurationError
from .classes import (
    BOOST,
    BOOST_FACTOR,
    BOOST_TICKS,
    CAPTURE_TSP,
    CLOAK,
    DISGUISE,
    HEAL,
    HEAL_AMOUNT,
    PLACE_TURRET,
    REPAIR,
    REPAIR_AMOUNT,
    REVIVE,
    TURRET,
    CharacterClass,
    get_class,
)
from .combat import (
    DOWNED_TICKS,
    MISSILE,
    RESPAWN_TICKS,
    REVIVE_HEALTH,
    WEAPONS,
    Health,
    WeaponState,
    resolve_shot,
)
from .geometry import Point, distance, heading, move_toward
from .influence import InfluenceMap, InfluenceSettings
from .maps import Map, MapObject, Marker
from .modes import Fact, FactValue, GameMode, ModeView, make_mode
from .perception import (
    Body,
    Noise,
    Observer,
    Senses,
    SightIndex,
    Sighting,
    hear_all,
    perceive,
)
from .strategic import StrategicGraph, build_strategic_graph

CAPTURE_TICKS: Final = 3
"""Uncontested ticks of ``capture`` needed to take a point."""
REACH: Final = 3.0
"""How close (map units) an agent must be to revive, heal or repair."""
CROUCH_FACTOR: Final = 0.5
"""Speed multiplier while crouched."""

VERBS: Final = (
    "move",
    "wait",
    "fire",
    "use",
    "reload",
    "select_weapon",
    "crouch",
    "stand",
    "capture",
    "look",
)
"""Every verb :meth:`World.submit` accepts."""

_MOVEMENT_VERBS: Final = frozenset({"move", "wait"})
_FREE_VERBS: Final = frozenset({"look"})
_ARGS: Final[Mapping[str, tuple[str, ...]]] = {
    "move": ("waypoint",),
    "wait": (),
    "fire": ("target",),
    "reload": (),
    "select_weapon": ("weapon",),
    "crouch": (),
    "stand": (),
    "capture": ("point",),
    "look": ("waypoint",),
}
_USE_FORMS: Final = ("object", "target", "ability")

ALIVE: Final = "alive"
DOWNED: Final = "downed"
DEAD: Final = "dead"

Args: TypeAlias = Mapping[str, str | int | float | bool | None]
"""The arguments of an act, as they come off the wire."""


@dataclass(frozen=True, slots=True)
class Member:
    """One roster entry: the agent's team, class, and optionally the waypoint it starts at."""

    team: str
    cls: str = "assault"
    start: str | None = None


RosterEntry: TypeAlias = Member | tuple[str, str] | Mapping[str, str]
"""A roster value: a :class:`Member`, ``(team, class)`` or ``{"team": ..., "class": ...,
"start": ...}``."""


@dataclass(frozen=True, slots=True)
class ActResult:
    """The world's verdict on one act: accepted, or rejected with the reason."""

    accepted: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class TickReport:
    """What happened in one tick: public events, and private events per agent id."""

    tick: int
    events: tuple[Fact, ...] = ()
    private: Mapping[str, tuple[Fact, ...]] = field(default_factory=dict)

    def events_for(self, agent_id: str) -> list[Fact]:
        """The public events followed by ``agent_id``'s private ones."""
        return [*self.events, *self.private.get(agent_id, ())]


class _Agent:
    """The mutable body of one agent (private: the world changes it, others read facts)."""

    __slots__ = (
        "boost_left",
        "carrying",
        "cloaked",
        "cls",
        "crouched",
        "deaths",
        "disguised",
        "heading",
        "health",
        "id",
        "kills",
        "life",
        "position",
        "progress",
        "selected",
        "target",
        "team",
        "timer",
        "waypoint",
        "weapons",
    )

    def __init__(
        self, agent_id: str, team: str, cls: CharacterClass, waypoint: str, pos: Point
    ) -> None:
        self.id = agent_id
        self.team = team
        self.cls = cls
        self.waypoint = waypoint
        self.target: str | None = None
        self.progress = 0.0
        self.position = pos
        self.heading = 0.0
        self.health = Health(cls.max_health)
        self.life = ALIVE
        self.timer = 0
        self.weapons = {w.name: WeaponState(w) for w in cls.weapon_specs()}
        self.selected: str | None = cls.weapons[0] if cls.weapons else None
        self.crouched = False
        self.cloaked = False
        self.disguised = False
        self.boost_left = 0
        self.carrying: list[str] = []
        self.kills = 0
        self.deaths = 0

    @property
    def speed(self) -> float:
        factor = (BOOST_FACTOR if self.boost_left > 0 else 1.0) * (
            CROUCH_FACTOR if self.crouched else 1.0
        )
        return self.cls.speed * factor


class _Turret:
    __slots__ = ("health", "id", "owner", "position", "team", "waypoint", "weapon")

    def __init__(self, turret_id: str, owner: _Agent, waypoint: str, pos: Point) -> None:
        self.id = turret_id
        self.team = owner.team
        self.owner = owner.id
        self.waypoint = waypoint
        self.position = pos
        self.health = Health(TURRET.max_health)
        self.weapon = WeaponState(WEAPONS[TURRET.weapon])


class _Events:
    def __init__(self) -> None:
        self.public: list[Fact] = []
        self.private: dict[str, list[Fact]] = {}

    def add(self, *fact: FactValue) -> None:
        self.public.append(tuple(fact))

    def tell(self, agent_id: str, *fact: FactValue) -> None:
        self.private.setdefault(agent_id, []).append(tuple(fact))


def _member(agent_id: str, entry: RosterEntry) -> Member:
    if isinstance(entry, Member):
        return entry
    if isinstance(entry, tuple):
        return Member(entry[0], entry[1])
    unknown = sorted(set(entry) - {"team", "class", "start"})
    if "team" not in entry or unknown:
        raise ConfigurationError(
            f"roster entry for {agent_id!r} must have 'team' and may have 'class' and 'start'; "
            f"got keys {sorted(entry)}"
        )
    return Member(entry["team"], entry.get("class", "assault"), entry.get("start"))


def _a(noun: str) -> str:
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


def _r(value: float) -> float:
    """Round for facts and snapshots: readable, and stable across platforms."""
    return round(value, 2)


class World:
    """The world state and its tick. Build one with :meth:`create`.

    Deterministic: the same map, seed, roster and acts give the same events, percepts and
    snapshots. Not thread-safe; the world actor calls it from one task.
    """

    def __init__(
        self,
        game_map: Map,
        *,
        seed: int,
        mode: GameMode | None,
        members: Mapping[str, Member],
    ) -> None:
        self.map = game_map
        self.mode = mode
        self.seed = seed
        self.rng = random.Random(seed)
        self.tick = 0
        self._agents: dict[str, _Agent] = {}
        self._turrets: dict[str, _Turret] = {}
        self._owners: dict[str, str | None] = {
            m.id: m.team for m in game_map.markers if m.kind in ("capture", "tsp")
        }
        self._progress: dict[str, tuple[str, int]] = {}
        self._open: dict[str, bool] = {
            o.id: o.open for o in game_map.objects if o.kind in ("door", "bars", "lever")
        }
        self._hand = dict(self._open)
        """Where a hand last left each door, bars and lever (plates and levers add to it)."""
        self._unlocked: set[str] = set()
        self._item_at: dict[str, str | None] = {
            o.id: o.waypoint for o in game_map.objects if o.kind == "item"
        }
        self._carrier: dict[str, str | None] = dict.fromkeys(self._item_at)
        self._movement: dict[str, tuple[str, Args]] = {}
        self._actions: dict[str, tuple[str, Args]] = {}
        self._noises: list[tuple[Noise, str]] = []
        self._last = TickReport(0)
        self._corridors: dict[str, list[str]] = {}
        self._influence: dict[str, InfluenceMap] = {}
        self._graph: StrategicGraph | None = None
        self._senses_cache: tuple[int, dict[str, list[Sighting]], dict[str, list[Fact]]] | None
        self._senses_cache = None
        self._sight = SightIndex(game_map.walls)
        self._spawn_members(members)
        self._update_objects(_Events())

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        game_map: Map,
        *,
        seed: int,
        mode: GameMode | str | None = None,
        roster: Mapping[str, RosterEntry],
        time_limit: int = 600,
    ) -> World:
        """A new world on ``game_map`` with the agents of ``roster`` at their spawns.

        ``mode`` is a :class:`~warband.world.modes.GameMode`, the name of a built-in one
        (``"capture_and_hold"`` uses the map's capture markers; ``time_limit`` in ticks), or
        None for no scoring (cooperation scenarios). Raises ConfigurationError for an unknown
        class, team, start waypoint or mode.
        """
        members = {agent: _member(agent, entry) for agent, entry in roster.items()}
        for agent, member in sorted(members.items()):
            get_class(member.cls)
            if member.team not in game_map.teams:
                raise ConfigurationError(
                    f"roster: agent {agent!r} is on team {member.team!r}, which map "
                    f"{game_map.name!r} does not have; its teams: {', '.join(game_map.teams)}"
                )
            if member.start is not None and not game_map.has_waypoint(member.start):
                raise ConfigurationError(
                    f"roster: agent {agent!r} starts at unknown waypoint {member.start!r} "
                    f"of map {game_map.name!r}"
                )
        if isinstance(mode, str):
            try:
                points = [m.id for m in game_map.markers_of("capture")]
                mode = make_mode(mode, game_map.teams, capture_points=points, time_limit=time_limit)
            except ConfigurationError as exc:
                raise ConfigurationError(f"map {game_map.name!r}: {exc}") from None
        return cls(game_map, seed=seed, mode=mode, members=members)

    def _spawn_members(self, members: Mapping[str, Member]) -> None:
        used: dict[str, int] = {}
        for agent_id in sorted(members):
            member = members[agent_id]
            waypoint = member.start
            if waypoint is None:
                spawns = self.map.spawns(member.team)
                if not spawns:
                    raise ConfigurationError(
                        f"roster: team {member.team!r} has no spawn marker on map "
                        f"{self.map.name!r}; give agent {agent_id!r} a 'start' waypoint"
                    )
                index = used.get(member.team, 0)
                used[member.team] = index + 1
                waypoint = spawns[index % len(spawns)].waypoint
            body = _Agent(
                agent_id, member.team, get_class(member.cls), waypoint, self.map.position(waypoint)
            )
            self._agents[agent_id] = body

    def track_influence(
        self, graph: StrategicGraph | None = None, settings: InfluenceSettings | None = None
    ) -> None:
        """Keep one influence map per team up to date (every step, from the true positions of
        living agents and turrets and the tick's deaths) and put it in snapshots.

        ``graph`` defaults to :func:`~warband.world.strategic.build_strategic_graph` of the
        map. The maps are the world's truth, for rendering and logs; a faction's squads may
        keep their own from what they perceive.
        """
        self._graph = graph if graph is not None else build_strategic_graph(self.map)
        self._influence = {
            team: InfluenceMap(self._graph, team, settings) for team in self.map.teams
        }

    def influence(self, team: str) -> InfluenceMap:
        """The influence map of ``team`` (after :meth:`track_influence`; KeyError otherwise)."""
        return self._influence[team]

    def set_corridor(self, squad: str, areas: Sequence[str | int]) -> None:
        """Record a squad's corridor (its sequence of area ids) for snapshots and rendering;
        an empty sequence removes it."""
        if areas:
            self._corridors[squad] = [str(a) for a in areas]
        else:
            self._corridors.pop(squad, None)

    # --- queries ------------------------------------------------------------------------------

    @property
    def agent_ids(self) -> tuple[str, ...]:
        """Every agent id, sorted."""
        return tuple(sorted(self._agents))

    def has_agent(self, agent_id: str) -> bool:
        """True when ``agent_id`` has a body in this world."""
        return agent_id in self._agents

    def owner_of(self, point: str) -> str | None:
        """The team owning a capture point or TSP, or None while neutral."""
        return self._owners[point]

    def is_open(self, object_id: str) -> bool:
        """True when a door, bars or lever is open (a lever: switched on)."""
        return self._open[object_id]

    def score(self) -> dict[str, int]:
        """Points per team (empty without a game mode)."""
        return self.mode.score() if self.mode is not None else {}

    def outcome(self) -> dict[str, Any] | None:
        """None while the game runs, else ``{"winner", "scores", "reason", "tick"}``."""
        if self.mode is None:
            return None
        result = self.mode.outcome()
        return result.as_dict() if result is not None else None

    @property
    def last_report(self) -> TickReport:
        """The report of the last step (tick 0: empty)."""
        return self._last

    # --- acts ---------------------------------------------------------------------------------

    def submit(self, agent_id: str, verb: str, args: Args | None = None) -> ActResult:
        """Validate one act of ``agent_id`` and queue it for the next :meth:`step`.

        ``agent_id`` must be the true sender (the actor passes it). Rejections say why:
        unknown agent, downed or dead agent, game over, unknown verb, missing / unexpected /
        mistyped arguments, a second action in one tick, or the verb's own checks.
        """
        given: Args = args if args is not None else {}
        reason = self._reject_reason(agent_id, verb, given)
        if reason is not None:
            return ActResult(False, reason)
        if verb in _FREE_VERBS:
            self._look(self._agents[agent_id], str(given["waypoint"]))
        elif verb in _MOVEMENT_VERBS:
            self._movement[agent_id] = (verb, dict(given))
        else:
            self._actions[agent_id] = (verb, dict(given))
        return ActResult(True)

    def _reject_reason(self, agent_id: str, verb: str, args: Args) -> str | None:
        agent = self._agents.get(agent_id)
        if agent is None:
            return f"unknown agent {agent_id!r}: it has no body in this world"
        if agent.life == DEAD:
            return f"{agent_id} is dead (respawns in {agent.timer} ticks); the dead cannot act"
        if agent.life == DOWNED:
            return f"{agent_id} is downed ({agent.timer} ticks to bleed out); wait for a medic"
        if self.outcome() is not None:
            return "the game is over"
        if verb not in VERBS:
            return f"unknown verb {verb!r}; known verbs: {', '.join(VERBS)}"
        shape = self._check_args(verb, args)
        if shape is not None:
            return shape
        if verb not in _MOVEMENT_VERBS | _FREE_VERBS and agent_id in self._actions:
            queued = self._actions[agent_id][0]
            return f"{agent_id} already queued {queued!r} this tick; one action per tick"
        check: Callable[[_Agent, Args], str | None] = getattr(self, f"_check_{verb}")
        return check(agent, args)

    def _check_args(self, verb: str, args: Args) -> str | None:
        for key, value in args.items():
            if not isinstance(value, str | int | float | bool):
                return f"{verb}: argument {key!r} must be a string or a number, got {value!r}"
        if verb == "use":
            forms = [k for k in _USE_FORMS if k in args]
            expected = 'one of {"object": id}, {"target": agent id}, {"ability": name}'
            if len(forms) != 1 or set(args) - {*forms, "waypoint"}:
                return f"use needs {expected}; got {dict(args)}"
            return None
        wanted = _ARGS[verb]
        missing = [k for k in wanted if k not in args]
        extra = sorted(set(args) - set(wanted))
        if missing or extra:
            form = ", ".join(f'"{k}": ...' for k in wanted)
            problem = f"missing {missing}" if missing else f"unexpected {extra}"
            return f"{verb} takes {{{form}}}; {problem}"
        for key in wanted:
            if not isinstance(args[key], str):
                return f"{verb}: {key!r} must be an id string, got {args[key]!r}"
        return None

    # --- per-verb checks (the agent is alive, the args have the right shape) ---

    def _check_move(self, agent: _Agent, args: Args) -> str | None:
        target = str(args["waypoint"])
        if not self.map.has_waypoint(target):
            return f"unknown waypoint {target!r}"
        origin = agent.waypoint
        if agent.target is not None and agent.progress > 0:
            if target in (agent.target, agent.waypoint):
                return None
            return (
                f"{agent.id} is between {agent.waypoint} and {agent.target}; "
                f"it can only go on to {agent.target} or back to {agent.waypoint}"
            )
        if target == origin:
            return f"{agent.id} is already at {target}"
        if not self.map.has_link(origin, target):
            if not self.map.line_of_sight(self.map.position(origin), self.map.position(target)):
                return f"cannot move from {origin} to {target}: a wall is in the way (no link)"
            return f"{target} is not linked to {origin} (move one link at a time)"
        blocker = self._closed_blocker(origin, target)
        if blocker is not None:
            verb = "are" if blocker.kind == "bars" else "is"
            return f"the {blocker.kind} {blocker.id!r} between {origin} and {target} {verb} closed"
        return None

    def _check_wait(self, agent: _Agent, args: Args) -> str | None:
        return None

    def _check_fire(self, agent: _Agent, args: Args) -> str | None:
        target = str(args["target"])
        if agent.selected is None:
            return f"{agent.id} ({agent.cls.name}) has no weapon"
        state = agent.weapons[agent.selected]
        blocked = state.why_cannot_fire()
        if blocked is not None:
            return blocked
        return self._target_reason(agent, target, state.weapon.range)

    def _target_reason(self, agent: _Agent, target: str, reach: float) -> str | None:
        if target == agent.id:
            return "cannot fire at yourself"
        pos: Point
        if target in self._agents:
            victim = self._agents[target]
            if victim.life != ALIVE:
                return f"target {target!r} is {victim.life}"
            team, pos = victim.team, victim.position
        elif target in self._turrets:
            turret = self._turrets[target]
            team, pos = turret.team, turret.position
        else:
            return f"unknown target {target!r}: no agent or turret has that id"
        if team == agent.team:
            return f"target {target!r} is on your team ({team})"
        gap = distance(agent.position, pos)
        if gap > reach:
            return f"target {target!r} is out of range ({gap:.1f} > {reach:g} for {agent.selected})"
        if not self.map.line_of_sight(agent.position, pos):
            return f"no line of sight to {target!r} (a wall is in the way)"
        return None

    def _check_reload(self, agent: _Agent, args: Args) -> str | None:
        if agent.selected is None:
            return f"{agent.id} ({agent.cls.name}) has no weapon"
        return agent.weapons[agent.selected].why_cannot_reload()

    def _check_select_weapon(self, agent: _Agent, args: Args) -> str | None:
        weapon = str(args["weapon"])
        if weapon not in agent.weapons:
            carried = ", ".join(agent.weapons) or "none"
            return f"{agent.cls.name} does not carry {weapon!r}; it carries: {carried}"
        if weapon == agent.selected:
            return f"{weapon} is already selected"
        return None

    def _check_crouch(self, agent: _Agent, args: Args) -> str | None:
        return f"{agent.id} is already crouching" if agent.crouched else None

    def _check_stand(self, agent: _Agent, args: Args) -> str | None:
        return None if agent.crouched else f"{agent.id} is already standing"

    def _check_capture(self, agent: _Agent, args: Args) -> str | None:
        point = str(args["point"])
        if point not in self._owners:
            known = ", ".join(sorted(self._owners)) or "none on this map"
            return f"unknown capture point {point!r}; capture points and TSPs: {known}"
        marker = self.map.marker(point)
        if marker.kind == "tsp" and not agent.cls.can(CAPTURE_TSP):
            return f"only tacticians capture TSPs; {agent.id} is {_a(agent.cls.name)}"
        if self._owners[point] == agent.team:
            return f"{point} already belongs to {agent.team}"
        return self._near(agent, marker.waypoint, marker.radius, point)

    def _check_look(self, agent: _Agent, args: Args) -> str | None:
        target = str(args["waypoint"])
        return None if self.map.has_waypoint(target) else f"unknown waypoint {target!r}"

    def _near(self, agent: _Agent, waypoint: str, radius: float, what: str) -> str | None:
        gap = distance(agent.position, self.map.position(waypoint))
        if gap > radius:
            return f"{agent.id} is {gap:.1f} from {what} at {waypoint}; get within {radius:g}"
        return None

    def _check_use(self, agent: _Agent, args: Args) -> str | None:
        if "object" in args:
            return self._check_use_object(agent, str(args["object"]))
        if "target" in args:
            return self._check_use_target(agent, str(args["target"]))
        return self._check_use_ability(agent, str(args["ability"]))

    def _check_use_object(self, agent: _Agent, object_id: str) -> str | None:
        if object_id in self._turrets:
            turret = self._turrets[object_id]
            if not agent.cls.can(REPAIR):
                return f"only engineers repair turrets; {agent.id} is {_a(agent.cls.name)}"
            if turret.team != agent.team:
                return f"turret {object_id!r} belongs to {turret.team}"
            if turret.health.current == turret.health.maximum:
                return f"turret {object_id!r} is not damaged"
            return self._near(agent, turret.waypoint, REACH, object_id)
        if not self.map.has_object(object_id):
            return f"unknown object {object_id!r} on map {self.map.name!r}"
        obj = self.map.object(object_id)
        if obj.kind == "item":
            return self._check_pick_up(agent, obj)
        where = self._operated_from(obj)
        if agent.progress > 0 or agent.waypoint not in where:
            return f"{agent.id} must stand at {' or '.join(where)} to use {object_id!r}"
        if obj.kind in ("door", "bars"):
            return self._check_door(agent, obj)
        return None

    def _operated_from(self, obj: MapObject) -> tuple[str, ...]:
        """Where an object is used from: a door from either side, everything else at its
        waypoint (bars from the outside only: a prisoner cannot lift its own bars)."""
        if obj.kind == "door" and obj.link is not None:
            return tuple(dict.fromkeys((obj.waypoint, *obj.link)))
        return (obj.waypoint,)

    def _check_door(self, agent: _Agent, door: MapObject) -> str | None:
        if door.key is not None and door.id not in self._unlocked:
            if not any(self._item_kind(item) == door.key for item in agent.carrying):
                return f"{door.kind} {door.id!r} is locked; it needs a {door.key!r} item"
            return None
        controllers = self.map.controllers_of(door.id)
        if controllers and door.key is None:
            names = ", ".join(f"{c.kind} {c.id!r}" for c in controllers)
            return f"{door.kind} {door.id!r} is worked by {names}, not by hand"
        return None

    def _check_pick_up(self, agent: _Agent, item: MapObject) -> str | None:
        carrier = self._carrier[item.id]
        if carrier is not None:
            return f"item {item.id!r} is carried by {carrier}"
        lies = self._item_at[item.id]
        if lies != agent.waypoint or agent.progress > 0:
            return f"item {item.id!r} lies at {lies}; {agent.id} is at {agent.waypoint}"
        return None

    def _check_use_target(self, agent: _Agent, target: str) -> str | None:
        other = self._agents.get(target)
        if other is None:
            return f"unknown agent {target!r}"
        if other.team != agent.team:
            return f"{target} is not on your team"
        if other.life == DOWNED:
            if not agent.cls.can(REVIVE):
                return f"only medics revive; {agent.id} is {_a(agent.cls.name)}"
        elif other.life == ALIVE and target != agent.id:
            if not agent.cls.can(HEAL):
                return f"only medics heal; {agent.id} is {_a(agent.cls.name)}"
            if other.health.current == other.health.maximum:
                return f"{target} is not wounded"
        else:
            return f"{target} is {other.life}; use a target to revive or heal a team mate"
        gap = distance(agent.position, other.position)
        return None if gap <= REACH else f"{target} is {gap:.1f} away; get within {REACH:g}"

    def _check_use_ability(self, agent: _Agent, ability: str) -> str | None:
        needed = {"turret": PLACE_TURRET, "cloak": CLOAK, "disguise": DISGUISE, "boost": BOOST}
        if ability not in needed:
            return f"unknown ability {ability!r}; abilities: {', '.join(needed)}"
        if not agent.cls.can(needed[ability]):
            return f"{agent.cls.name} cannot {ability}"
        if ability == "turret":
            if agent.progress > 0:
                return "place a turret while standing at a waypoint"
            if f"turret-{agent.id}" in self._turrets:
                return f"{agent.id} already has a turret (one at a time)"
        if ability == "boost" and agent.boost_left > 0:
            return f"{agent.id} is already boosted"
        return None

    # --- the tick -----------------------------------------------------------------------------

    def step(self) -> TickReport:
        """Advance one tick (see the module docstring for the order) and report its events.

        After the game is over, returns an empty report and does not advance.
        """
        if self.outcome() is not None:
            return TickReport(self.tick)
        self.tick += 1
        events = _Events()
        self._noises = []
        self._run_timers()
        self._update_lives(events)
        for agent_id in sorted(self._actions):
            verb, args = self._actions[agent_id]
            if verb != "fire":
                self._perform(self._agents[agent_id], verb, args, events)
        self._resolve_combat(events)
        self._move(events)
        self._update_objects(events)
        self._update_captures(events)
        self._score(events)
        self._update_influence(events)
        self._actions.clear()
        self._last = TickReport(
            self.tick,
            tuple(events.public),
            {k: tuple(v) for k, v in sorted(events.private.items())},
        )
        self._senses_cache = None
        return self._last

    def events_for(self, agent_id: str, report: TickReport | None = None) -> list[Fact]:
        """The events of ``report`` (default: the last step's) that ``agent_id`` should know."""
        return (report or self._last).events_for(agent_id)

    def _run_timers(self) -> None:
        for agent_id in sorted(self._agents):
            agent = self._agents[agent_id]
            for state in agent.weapons.values():
                state.tick()
            if agent.boost_left > 0:
                agent.boost_left -= 1
        for turret_id in sorted(self._turrets):
            self._turrets[turret_id].weapon.tick()

    def _perform(self, agent: _Agent, verb: str, args: Args, events: _Events) -> None:
        if agent.life != ALIVE:
            return
        if verb == "reload" and agent.selected is not None:
            agent.weapons[agent.selected].start_reload()
        elif verb == "select_weapon":
            agent.selected = str(args["weapon"])
        elif verb in ("crouch", "stand"):
            agent.crouched = verb == "crouch"
        elif verb == "capture":
            pass  # counted in _update_captures, after combat decided who is still standing
        elif verb == "use":
            self._perform_use(agent, args, events)

    def _perform_use(self, agent: _Agent, args: Args, events: _Events) -> None:
        if "target" in args:
            other = self._agents[str(args["target"])]
            if other.life == DOWNED:
                other.life = ALIVE
                other.timer = 0
                other.health.restore(REVIVE_HEALTH)
                events.add("revived", other.id, agent.id)
            elif other.life == ALIVE:
                other.health.heal(HEAL_AMOUNT)
                events.tell(other.id, "healed", agent.id, HEAL_AMOUNT)
            return
        if "ability" in args:
            self._perform_ability(agent, str(args["ability"]), events)
            return
        object_id = str(args["object"])
        if object_id in self._turrets:
            self._turrets[object_id].health.heal(REPAIR_AMOUNT)
            events.add("repaired", object_id, agent.id)
            return
        obj = self.map.object(object_id)
        if obj.kind == "item":
            self._carrier[obj.id] = agent.id
            self._item_at[obj.id] = None
            agent.carrying.append(obj.id)
            events.add("picked_up", obj.id, agent.id, agent.team)
        elif obj.kind == "lever":
            self._hand[obj.id] = self._open[obj.id] = not self._hand[obj.id]
        elif obj.kind in ("door", "bars"):
            if obj.key is not None and obj.id not in self._unlocked:
                self._unlocked.add(obj.id)
                self._hand[obj.id] = True
            else:
                self._hand[obj.id] = not self._hand[obj.id]

    def _perform_ability(self, agent: _Agent, ability: str, events: _Events) -> None:
        if ability == "turret":
            turret = _Turret(f"turret-{agent.id}", agent, agent.waypoint, agent.position)
            self._turrets[turret.id] = turret
            events.add("turret_placed", turret.id, agent.team, agent.waypoint)
        elif ability == "cloak":
            agent.cloaked = not agent.cloaked
        elif ability == "disguise":
            agent.disguised = not agent.disguised
        elif ability == "boost":
            agent.boost_left = BOOST_TICKS

    # --- combat ---

    def _resolve_combat(self, events: _Events) -> None:
        hits: list[tuple[str, str, str, int]] = []  # (attacker, victim, weapon, damage)
        for agent_id in sorted(self._actions):
            verb, args = self._actions[agent_id]
            if verb == "fire":
                hits.extend(self._shoot(self._agents[agent_id], str(args["target"]), events))
        for turret_id in sorted(self._turrets):
            hits.extend(self._turret_fire(self._turrets[turret_id], events))
        for attacker, victim, weapon, amount in hits:
            self._damage(attacker, victim, weapon, amount, events)

    def _shoot(
        self, agent: _Agent, target: str, events: _Events
    ) -> list[tuple[str, str, str, int]]:
        state = agent.weapons[agent.selected] if agent.selected is not None else None
        reason = "no weapon" if state is None else state.why_cannot_fire()
        if reason is None and state is not None:
            reason = self._target_reason(agent, target, state.weapon.range)
        if reason is not None or state is None:
            events.tell(agent.id, "act_failed", "fire", reason or "no weapon")
            return []
        victim_pos = self._position_of(target)
        agent.heading = heading(agent.position, victim_pos)
        state.fire()
        kind = "explosion" if state.weapon.kind == MISSILE else "gunfire"
        self._noises.append((Noise(kind, agent.position, agent.id), agent.waypoint))
        shot = resolve_shot(
            self.rng,
            state.weapon,
            target,
            victim_pos,
            distance(agent.position, victim_pos),
            crouched=target in self._agents and self._agents[target].crouched,
            cover=self._cover(target, agent.position),
            bystanders=self._bystanders(victim_pos, state.weapon.splash_radius),
        )
        events.tell(agent.id, "hit" if shot.hit else "missed", target)
        return [(agent.id, victim, state.weapon.name, dmg) for victim, dmg in shot.damage.items()]

    def _turret_fire(self, turret: _Turret, events: _Events) -> list[tuple[str, str, str, int]]:
        if turret.weapon.why_cannot_fire() is not None:
            return []
        eye = Observer(
            turret.id,
            turret.team,
            turret.position,
            senses=Senses(view_angle=math.tau, view_distance=TURRET.view_distance),
        )
        enemies = [b for b in self._bodies() if b.team != turret.team and b.id in self._agents]
        alive = [b for b in enemies if self._agents[b.id].life == ALIVE]
        seen = perceive([eye], alive, self._sight)[turret.id]
        if not seen:
            return []
        target = seen[0]
        turret.weapon.fire()
        self._noises.append((Noise("gunfire", turret.position, turret.id), turret.waypoint))
        shot = resolve_shot(
            self.rng,
            turret.weapon.weapon,
            target.id,
            target.position,
            target.distance,
            crouched=self._agents[target.id].crouched,
            cover=self._cover(target.id, turret.position),
        )
        return [(turret.id, v, turret.weapon.weapon.name, d) for v, d in shot.damage.items()]

    def _position_of(self, entity: str) -> Point:
        if entity in self._agents:
            return self._agents[entity].position
        return self._turrets[entity].position

    def _cover(self, target: str, shooter: Point) -> float:
        """Cover of a target standing on a waypoint against a shooter; none while walking."""
        agent = self._agents.get(target)
        if agent is None or agent.progress > 0:
            return 0.0
        return self.map.waypoint(agent.waypoint).cover_from(shooter)

    def _bystanders(self, center: Point, radius: float) -> dict[str, Point]:
        if radius <= 0:
            return {}
        near: dict[str, Point] = {}
        for agent_id in sorted(self._agents):
            agent = self._agents[agent_id]
            if agent.life != DEAD and distance(agent.position, center) < radius:
                near[agent_id] = agent.position
        for turret_id in sorted(self._turrets):
            turret = self._turrets[turret_id]
            if distance(turret.position, center) < radius:
                near[turret_id] = turret.position
        return near

    def _attacker_team(self, attacker: str) -> str:
        if attacker in self._agents:
            return self._agents[attacker].team
        return self._turrets[attacker].team

    def _damage(self, attacker: str, victim: str, weapon: str, amount: int, ev: _Events) -> None:
        if victim in self._turrets:
            turret = self._turrets[victim]
            if turret.health.damage(amount):
                del self._turrets[victim]
                ev.add("destroyed", victim, turret.team, attacker)
            return
        body = self._agents[victim]
        if body.life != ALIVE:
            return
        ev.tell(victim, "damaged", attacker, amount)
        if body.health.damage(amount):
            body.life = DOWNED
            body.timer = DOWNED_TICKS
            body.target, body.progress = None, 0.0
            self._movement.pop(victim, None)
            body.deaths += 1
            killer_team = self._attacker_team(attacker)
            owner = self._turrets[attacker].owner if attacker in self._turrets else attacker
            if owner in self._agents and killer_team != body.team:
                self._agents[owner].kills += 1
            ev.add("killed", victim, body.team, attacker, killer_team, weapon)

    # --- movement and objects ---

    def _move(self, events: _Events) -> None:
        for agent_id in sorted(self._movement):
            verb, args = self._movement[agent_id]
            agent = self._agents[agent_id]
            if agent.life != ALIVE:
                continue
            if verb == "wait":
                if agent.progress == 0:
                    agent.target = None
                del self._movement[agent_id]
                continue
            self._walk(agent, str(args["waypoint"]), events)

    def _walk(self, agent: _Agent, target: str, events: _Events) -> None:
        if agent.progress > 0 and target == agent.waypoint and agent.target is not None:
            # Turning back on a link: swap ends, the distance walked becomes the distance left.
            length = self.map.link_length(agent.waypoint, agent.target)
            agent.waypoint, agent.target = agent.target, agent.waypoint
            agent.progress = length - agent.progress
        agent.target = target
        if agent.progress == 0:
            blocker = self._closed_blocker(agent.waypoint, target)
            if blocker is not None:
                events.tell(agent.id, "blocked", blocker.id, agent.waypoint, target)
                agent.target = None
                del self._movement[agent.id]
                return
        start, end = self.map.position(agent.waypoint), self.map.position(target)
        length = distance(start, end)
        agent.progress = min(agent.progress + agent.speed, length)
        agent.heading = heading(start, end)
        agent.position = move_toward(start, end, agent.progress)
        if not agent.crouched:
            self._noises.append(
                (Noise("footsteps", agent.position, agent.id, loudness=0.3), agent.waypoint)
            )
        if agent.progress >= length:
            agent.waypoint, agent.target, agent.progress = target, None, 0.0
            agent.position = end
            del self._movement[agent.id]
            events.tell(agent.id, "arrived", target)

    def _look(self, agent: _Agent, waypoint: str) -> None:
        agent.heading = heading(agent.position, self.map.position(waypoint))
        self._senses_cache = None

    def _closed_blocker(self, a: str, b: str) -> MapObject | None:
        for obj in self.map.link_blockers(a, b):
            if not self._open[obj.id]:
                return obj
        return None

    def _standing_at(self, waypoint: str) -> list[_Agent]:
        return [
            a
            for _, a in sorted(self._agents.items())
            if a.life == ALIVE and a.progress == 0 and a.waypoint == waypoint
        ]

    def _pressed(self, plate: MapObject) -> bool:
        return bool(self._standing_at(plate.waypoint))

    def _update_objects(self, events: _Events) -> None:
        """Recompute doors and bars: open by their own state (moved by hand, unlocked) or while
        a controlling plate is pressed or lever is on."""
        for obj in self.map.objects:
            if obj.kind not in ("door", "bars"):
                continue
            was = self._open[obj.id]
            now = self._base_open(obj) or any(
                self._pressed(c) if c.kind == "plate" else self._open[c.id]
                for c in self.map.controllers_of(obj.id)
            )
            self._open[obj.id] = now
            if now != was:
                events.add("opened" if now else "closed", obj.id)

    def _base_open(self, obj: MapObject) -> bool:
        """Whether a door or bars is open by itself (not through a plate or lever)."""
        by_hand = not self.map.controllers_of(obj.id) and obj.key is None
        if by_hand or obj.id in self._unlocked:
            return self._hand[obj.id]
        return False

    # --- captures, lives, scoring ---

    def _update_captures(self, events: _Events) -> None:
        working: dict[str, set[str]] = {}
        for agent_id in sorted(self._actions):
            verb, args = self._actions[agent_id]
            agent = self._agents[agent_id]
            if verb == "capture" and agent.life == ALIVE:
                working.setdefault(str(args["point"]), set()).add(agent.team)
        for point in sorted(working):
            teams = working[point]
            marker = self.map.marker(point)
            if len(teams) != 1 or self._contested(marker, next(iter(teams))):
                events.add("contested", point)
                continue
            team = next(iter(teams))
            held_team, ticks = self._progress.get(point, (team, 0))
            ticks = ticks + 1 if held_team == team else 1
            if ticks >= CAPTURE_TICKS:
                self._owners[point] = team
                self._progress.pop(point, None)
                events.add("captured", point, team)
            else:
                self._progress[point] = (team, ticks)

    def _contested(self, marker: Marker, team: str) -> bool:
        spot = self.map.position(marker.waypoint)
        return any(
            a.life == ALIVE and a.team != team and distance(a.position, spot) <= marker.radius
            for a in self._agents.values()
        )

    def _update_lives(self, events: _Events) -> None:
        for agent_id in sorted(self._agents):
            agent = self._agents[agent_id]
            if agent.life == ALIVE:
                continue
            agent.timer -= 1
            if agent.timer > 0:
                continue
            if agent.life == DOWNED:
                agent.life, agent.timer = DEAD, RESPAWN_TICKS
                self._drop_items(agent, events)
                events.add("died", agent_id)
            else:
                self._respawn(agent, events)

    def _drop_items(self, agent: _Agent, events: _Events) -> None:
        for item in agent.carrying:
            self._carrier[item] = None
            self._item_at[item] = agent.waypoint
            events.add("dropped", item, agent.waypoint)
        agent.carrying = []

    def spawn_options(self, team: str) -> list[str]:
        """Waypoints a member of ``team`` may respawn at: TSPs the team holds, else its base
        spawns (a held TSP is nearer the fight, which is why tacticians capture them)."""
        tsps = [m.waypoint for m in self.map.markers_of("tsp") if self._owners[m.id] == team]
        return tsps or [m.waypoint for m in self.map.spawns(team)]

    def _respawn(self, agent: _Agent, events: _Events) -> None:
        options = self.spawn_options(agent.team) or [agent.waypoint]
        waypoint = self.rng.choice(options)
        fresh = _Agent(agent.id, agent.team, agent.cls, waypoint, self.map.position(waypoint))
        fresh.kills, fresh.deaths = agent.kills, agent.deaths
        self._agents[agent.id] = fresh
        events.add("respawned", agent.id, waypoint)

    def _score(self, events: _Events) -> None:
        if self.mode is None:
            return
        for event in list(events.public):
            self.mode.on_event(event, self.tick)
        alive: dict[str, int] = dict.fromkeys(self.map.teams, 0)
        for agent in self._agents.values():
            if agent.life == ALIVE:
                alive[agent.team] = alive.get(agent.team, 0) + 1
        view = ModeView(self.tick, dict(self._owners), alive)
        events.public.extend(self.mode.on_tick(view))

    def _update_influence(self, events: _Events) -> None:
        if not self._influence:
            return
        deaths: dict[str, list[str]] = {team: [] for team in self.map.teams}
        for event in events.public:
            if event[0] == "killed":
                victim = self._agents[str(event[1])]
                deaths.setdefault(victim.team, []).append(victim.waypoint)
        living = [a for _, a in sorted(self._agents.items()) if a.life == ALIVE]
        turrets = [t for _, t in sorted(self._turrets.items())]
        for team, influence in sorted(self._influence.items()):
            influence.update(
                friendly=[a.waypoint for a in living if a.team == team],
                enemy=[a.waypoint for a in living if a.team != team],
                friendly_turrets=[t.waypoint for t in turrets if t.team == team],
                enemy_turrets=[t.waypoint for t in turrets if t.team != team],
                friendly_deaths=deaths.get(team, []),
                enemy_deaths=[w for t, ws in sorted(deaths.items()) if t != team for w in ws],
            )

    # --- senses -------------------------------------------------------------------------------

    def perception_inputs(self) -> tuple[list[Observer], list[Body]]:
        """The observers (living agents) and bodies (everyone not dead, turrets) the senses of
        this tick work on; the benchmark feeds them to the all-pairs reference."""
        eyes = [self._observer(a) for _, a in sorted(self._agents.items()) if a.life == ALIVE]
        return eyes, self._bodies()

    def _bodies(self) -> list[Body]:
        bodies = [
            Body(a.id, a.team, a.position, a.cloaked, a.disguised)
            for _, a in sorted(self._agents.items())
            if a.life != DEAD
        ]
        bodies.extend(Body(t.id, t.team, t.position) for _, t in sorted(self._turrets.items()))
        return bodies

    def _observer(self, agent: _Agent) -> Observer:
        senses = Senses(view_distance=60.0) if agent.cls.name == "scout" else Senses()
        return Observer(agent.id, agent.team, agent.position, agent.heading, senses)

    def _senses(self) -> tuple[dict[str, list[Sighting]], dict[str, list[Fact]]]:
        """Sightings and heard-noise facts of every living agent, computed once per tick."""
        if self._senses_cache is not None and self._senses_cache[0] == self.tick:
            return self._senses_cache[1], self._senses_cache[2]
        eyes, bodies = self.perception_inputs()
        seen = perceive(eyes, bodies, self._sight)
        where = {noise.source: waypoint for noise, waypoint in self._noises}
        heard_raw = hear_all(eyes, [noise for noise, _ in self._noises])
        heard: dict[str, list[Fact]] = {
            agent: list(dict.fromkeys(("heard", h.kind, where[h.source]) for h in hearings))
            for agent, hearings in heard_raw.items()
        }
        self._senses_cache = (self.tick, seen, heard)
        return seen, heard

    def _entity_waypoint(self, entity: str) -> str:
        if entity in self._agents:
            return self._agents[entity].waypoint
        return self._turrets[entity].waypoint

    def percepts_for(self, agent_id: str) -> list[Fact]:
        """The facts ``agent_id``'s sensors allow now (see the module docstring for the list).

        Raises KeyError for an agent that is not in the world (check :meth:`has_agent`).
        """
        agent = self._agents[agent_id]
        facts: list[Fact] = [
            ("tick", self.tick),
            ("self", agent.id, agent.team, agent.cls.name),
            ("state", agent.life),
        ]
        facts.extend(self._body_facts(agent))
        if agent.life == ALIVE:
            seen, heard = self._senses()
            facts.extend(self._sight_facts(seen.get(agent_id, [])))
            facts.extend(heard.get(agent_id, []))
        facts.extend(self._common_facts(agent))
        return facts

    def _body_facts(self, agent: _Agent) -> Iterable[Fact]:
        yield ("at", agent.id, agent.waypoint)
        if agent.target is not None and agent.progress > 0:
            yield ("moving", agent.id, agent.waypoint, agent.target)
        yield ("position", _r(agent.position[0]), _r(agent.position[1]))
        yield ("health", agent.health.current)
        yield ("max_health", agent.health.maximum)
        if agent.life != ALIVE:
            yield ("respawn_in" if agent.life == DEAD else "bleeding_out", agent.timer)
        if agent.selected is not None:
            yield ("weapon", agent.selected)
        for name, state in agent.weapons.items():
            if state.weapon.clip_size > 0:
                yield ("ammo", name, state.clip)
                yield ("spare_ammo", name, state.spare)
            if state.reload_left > 0:
                yield ("reloading", name, state.reload_left)
        for flag, on in (
            ("crouched", agent.crouched),
            ("cloaked", agent.cloaked),
            ("disguised", agent.disguised),
        ):
            if on:
                yield (flag,)
        if agent.boost_left > 0:
            yield ("boosted", agent.boost_left)
        for item in agent.carrying:
            yield ("carrying", item, self._item_kind(item))

    def _item_kind(self, item: str) -> str:
        return self.map.object(item).item or item

    def _sight_facts(self, sightings: list[Sighting]) -> Iterable[Fact]:
        for s in sightings:
            waypoint = self._entity_waypoint(s.id)
            if s.id in self._turrets:
                yield ("sees_turret", s.id, waypoint, _r(s.distance), s.apparent_team)
            elif self._agents[s.id].life == DOWNED:
                yield ("sees_downed", s.id, waypoint, _r(s.distance), s.apparent_team)
            else:
                yield ("sees", s.id, waypoint, _r(s.distance), s.apparent_team)

    def _common_facts(self, agent: _Agent) -> Iterable[Fact]:
        for point, owner in sorted(self._owners.items()):
            if owner is not None:
                yield ("captured", point, owner)
        for obj in self.map.objects:
            if obj.kind in ("door", "bars", "lever"):
                yield ("open", obj.id, self._open[obj.id])
            elif obj.kind == "plate":
                yield ("pressed", obj.id, self._pressed(obj))
            elif self._item_at[obj.id] is not None:
                yield ("item_at", obj.id, str(self._item_at[obj.id]))
        for turret_id, turret in sorted(self._turrets.items()):
            if turret.team == agent.team:
                yield ("turret", turret_id, turret.team, turret.waypoint, turret.health.current)
        if self.mode is not None:
            for team, points in self.mode.score().items():
                yield ("score", team, points)
            yield ("time_left", max(self.mode.time_limit - self.tick, 0))

    # --- snapshot -----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain, JSON-ready data (format in the module docstring)."""
        return {
            "map": self.map.name,
            "map_source": self.map.source,
            "tick": self.tick,
            "mode": self.mode.name if self.mode is not None else None,
            "scores": self.score(),
            "outcome": self.outcome(),
            "teams": list(self.map.teams),
            "agents": {a.id: self._agent_snapshot(a) for _, a in sorted(self._agents.items())},
            "turrets": {
                t.id: {
                    "team": t.team,
                    "owner": t.owner,
                    "x": _r(t.position[0]),
                    "y": _r(t.position[1]),
                    "waypoint": t.waypoint,
                    "health": t.health.current,
                }
                for _, t in sorted(self._turrets.items())
            },
            "captures": dict(sorted(self._owners.items())),
            "objects": self._objects_snapshot(),
            "influence": self._influence_snapshot(),
            "corridors": {k: list(v) for k, v in sorted(self._corridors.items())},
            "events": [list(e) for e in self._last.events],
        }

    def _agent_snapshot(self, agent: _Agent) -> dict[str, Any]:
        return {
            "team": agent.team,
            "class": agent.cls.name,
            "x": _r(agent.position[0]),
            "y": _r(agent.position[1]),
            "heading": _r(agent.heading),
            "waypoint": agent.waypoint,
            "target": agent.target,
            "health": agent.health.current,
            "max_health": agent.health.maximum,
            "state": agent.life,
            "weapon": agent.selected,
            "crouched": agent.crouched,
            "cloaked": agent.cloaked,
            "disguised": agent.disguised,
            "carrying": list(agent.carrying),
            "kills": agent.kills,
            "deaths": agent.deaths,
        }

    def _objects_snapshot(self) -> dict[str, dict[str, Any]]:
        objects: dict[str, dict[str, Any]] = {}
        for obj in self.map.objects:
            if obj.kind == "item":
                objects[obj.id] = {
                    "kind": "item",
                    "waypoint": self._item_at[obj.id],
                    "carrier": self._carrier[obj.id],
                }
            elif obj.kind == "plate":
                objects[obj.id] = {
                    "kind": "plate",
                    "open": self._pressed(obj),
                    "waypoint": obj.waypoint,
                }
            else:
                objects[obj.id] = {
                    "kind": obj.kind,
                    "open": self._open[obj.id],
                    "waypoint": obj.waypoint,
                }
        return objects

    def _influence_snapshot(self) -> dict[str, dict[str, float]]:
        return {
            team: {str(area): _r(value) for area, value in sorted(influence.as_dict().items())}
            for team, influence in sorted(self._influence.items())
        }
