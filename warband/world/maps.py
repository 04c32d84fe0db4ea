"""The map model: waypoints, links, walls, markers and symbolic objects, immutable and validated.

A :class:`Map` is built once by the loader (:func:`~warband.world.load_map`,
:func:`~warband.world.parse_map`, :func:`~warband.world.map_from_data`; the file format is in
docs/maps.md) or the generator (:func:`~warband.world.grid_map`). After that every id it
mentions is known to exist, so the rest of the world code never re-validates it.
Lookups of an unknown id raise :class:`~warband.exceptions.UnknownIdError` naming the id and
the map (check with :meth:`Map.has_waypoint` and friends first when the id comes from outside).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import NoReturn

from warband.exceptions import UnknownIdError
from warband.world.geometry import (
    DIRECTIONS,
    BoundingBox,
    Point,
    Segment,
    WallIndex,
    bounding_box,
    direction_index,
    distance,
    distance_sq,
)

MARKER_KINDS: tuple[str, ...] = (
    "spawn",
    "capture",
    "tsp",
    "regroup",
    "sniping",
    "defend",
    "hiding",
    "exit",
    "stack",
    "corner",
    "retrieval",
    "return",
    "target",
)
"""Marker kinds: base spawn, capture point, tactical spawn point (TSP), regroup, sniping,
defend, hiding spot (Killzone 3); exit (an escape goal, prison); stack (where a squad lines up
outside a room) and corner (a corner to clear inside it) for room clearing; the Warzone mode
annotations: retrieval (where Search and Retrieve's object spawns), return (a team's return
point) and target (a Search and Destroy target of the team that defends it)."""

TEAM_MARKER_KINDS: frozenset[str] = frozenset({"spawn", "return", "target"})
"""Marker kinds that belong to a team and so need one."""

OBJECT_KINDS: tuple[str, ...] = ("door", "bars", "plate", "lever", "item")
"""Symbolic object kinds. Doors and bars block a link while closed; plates and levers open them."""

BLOCKING_KINDS: frozenset[str] = frozenset({"door", "bars"})
"""Object kinds that sit on a link and block it while closed."""

CONTROL_KINDS: frozenset[str] = frozenset({"plate", "lever"})
"""Object kinds that open the doors/bars listed in their ``controls``."""

DEFAULT_TEAMS: tuple[str, ...] = ("red", "blue")
"""Teams of a map that does not list its own."""

Link = tuple[str, str]
"""An undirected link between two waypoint ids, stored with the smaller id first."""


def link_key(a: str, b: str) -> Link:
    """The canonical (sorted) form of the link between waypoints ``a`` and ``b``."""
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True)
class Waypoint:
    """A position with tactical data.

    ``cover`` holds one value in ``[0, 1]`` per compass direction, indexed like
    :data:`~warband.world.geometry.DIRECTIONS`: how well a bot here is covered from a threat
    in that direction (0 = exposed, 1 = full cover).
    """

    id: str
    pos: Point
    cover: tuple[float, ...] = (0.0,) * len(DIRECTIONS)

    def cover_from(self, threat: Point) -> float:
        """Cover (0..1) this waypoint gives against a threat standing at ``threat``."""
        return self.cover[direction_index(self.pos, threat)]


@dataclass(frozen=True)
class Marker:
    """A level annotation at a waypoint (see :data:`MARKER_KINDS`).

    ``team`` is the owning team of a spawn, or the initial owner of a TSP/capture point
    (``None``: neutral). ``radius`` is how close an agent must be to capture it. ``group``
    ties markers together, e.g. the stack and corner markers of one room.
    """

    id: str
    kind: str
    waypoint: str
    team: str | None = None
    radius: float = 3.0
    group: str | None = None


@dataclass(frozen=True)
class MapObject:
    """A symbolic object (see :data:`OBJECT_KINDS`); its dynamic state lives in the simulation.

    * ``door``/``bars``: block ``link`` while closed; ``open`` is the initial state; ``key`` is
      the item kind that opens them by hand (``None``: see the simulation's rules).
    * ``plate``/``lever``: at ``waypoint``; open the objects in ``controls`` (a plate while an
      agent stands on it, a lever while it is switched on; ``open`` is a lever's initial state).
    * ``item``: lies at ``waypoint`` and can be picked up; ``item`` is its kind (e.g. a key).
    """

    id: str
    kind: str
    waypoint: str
    link: Link | None = None
    controls: tuple[str, ...] = ()
    open: bool = False
    key: str | None = None
    item: str | None = None


@dataclass(frozen=True, eq=False)
class Map:
    """A validated, immutable map. Build it with :func:`load_map` / :func:`map_from_data`.

    All ids referenced by links, markers and objects exist; no link crosses a wall. Lookups
    that take an id raise :class:`~warband.exceptions.UnknownIdError` (a ``KeyError``) for an
    unknown one (check with :meth:`has_waypoint` first when the id comes from outside, e.g.
    from an agent's act).
    """

    name: str
    description: str
    source: str
    teams: tuple[str, ...]
    waypoints: tuple[Waypoint, ...]
    links: tuple[Link, ...]
    walls: tuple[Segment, ...]
    markers: tuple[Marker, ...] = ()
    objects: tuple[MapObject, ...] = ()
    _waypoints_by_id: dict[str, Waypoint] = field(init=False, repr=False)
    _neighbours: dict[str, tuple[str, ...]] = field(init=False, repr=False)
    _markers_by_id: dict[str, Marker] = field(init=False, repr=False)
    _objects_by_id: dict[str, MapObject] = field(init=False, repr=False)
    _blockers: dict[Link, tuple[MapObject, ...]] = field(init=False, repr=False)
    _wall_index: WallIndex = field(init=False, repr=False)
    _from_centre: dict[str, float] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Frozen dataclass: indexes are derived once here, hence object.__setattr__.
        neighbours: dict[str, list[str]] = {w.id: [] for w in self.waypoints}
        for a, b in self.links:
            neighbours[a].append(b)
            neighbours[b].append(a)
        blockers: dict[Link, list[MapObject]] = {}
        for obj in self.objects:
            if obj.link is not None:
                blockers.setdefault(obj.link, []).append(obj)
        object.__setattr__(self, "_waypoints_by_id", {w.id: w for w in self.waypoints})
        object.__setattr__(
            self, "_neighbours", {k: tuple(sorted(v)) for k, v in neighbours.items()}
        )
        object.__setattr__(self, "_markers_by_id", {m.id: m for m in self.markers})
        object.__setattr__(self, "_objects_by_id", {o.id: o for o in self.objects})
        object.__setattr__(self, "_blockers", {k: tuple(v) for k, v in blockers.items()})
        object.__setattr__(self, "_wall_index", WallIndex(self.walls))
        cx, cy = self.centre
        from_centre = {w.id: math.hypot(w.pos[0] - cx, w.pos[1] - cy) for w in self.waypoints}
        object.__setattr__(self, "_from_centre", from_centre)

    # --- waypoints and links ---

    @property
    def waypoint_ids(self) -> tuple[str, ...]:
        """Waypoint ids in file order."""
        return tuple(w.id for w in self.waypoints)

    def has_waypoint(self, waypoint_id: str) -> bool:
        """True when the map has a waypoint with this id."""
        return waypoint_id in self._waypoints_by_id

    def waypoint(self, waypoint_id: str) -> Waypoint:
        """The waypoint with this id (:class:`UnknownIdError` if unknown)."""
        try:
            return self._waypoints_by_id[waypoint_id]
        except KeyError:
            self._unknown("waypoint", waypoint_id, "has_waypoint")

    def from_centre(self, waypoint_id: str) -> float:
        """How far a waypoint lies from :attr:`centre`: the same for a waypoint and its mirror
        image on a mirror-symmetric map, so a tie broken by it favours neither side (a tie
        broken by waypoint id favours the side whose ids sort first)."""
        try:
            return self._from_centre[waypoint_id]
        except KeyError:
            self._unknown("waypoint", waypoint_id, "has_waypoint")

    def position(self, waypoint_id: str) -> Point:
        """Position of a waypoint (:class:`UnknownIdError` if unknown)."""
        try:
            return self._waypoints_by_id[waypoint_id].pos
        except KeyError:
            self._unknown("waypoint", waypoint_id, "has_waypoint")

    def neighbours(self, waypoint_id: str) -> tuple[str, ...]:
        """Ids linked to ``waypoint_id``, sorted; ignores doors (see :meth:`link_blockers`).
        :class:`UnknownIdError` for an unknown waypoint."""
        try:
            return self._neighbours[waypoint_id]
        except KeyError:
            self._unknown("waypoint", waypoint_id, "has_waypoint")

    def rings(
        self, centre: str, keep: Callable[[str], bool] | None = None
    ) -> Iterator[tuple[str, ...]]:
        """The rings of waypoints around ``centre``, nearest first, each sorted: the first is
        its neighbours, each next one the neighbours of the last that no earlier ring holds.
        With ``keep``, a ring holds only the waypoints ``keep`` accepts and the next grows
        from those alone (the rings end where nothing is kept). How a squad spreads around a
        marker, and escorts around their VIP, instead of standing four on one waypoint."""
        seen = {centre}
        ring: tuple[str, ...] = (centre,)
        while True:
            around = sorted({n for w in ring for n in self.neighbours(w)} - seen)
            seen.update(around)
            ring = tuple(w for w in around if keep is None or keep(w))
            if not ring:
                return
            yield ring

    def has_link(self, a: str, b: str) -> bool:
        """True when waypoints ``a`` and ``b`` are directly linked (doors not considered)."""
        return b in self._neighbours.get(a, ())

    def link_length(self, a: str, b: str) -> float:
        """Straight-line length of the link (or distance) between two waypoints."""
        return distance(self.position(a), self.position(b))

    def link_blockers(self, a: str, b: str) -> tuple[MapObject, ...]:
        """Doors and bars sitting on the link ``a-b`` (empty when nothing can block it)."""
        return self._blockers.get(link_key(a, b), ())

    def closed_blocker(self, a: str, b: str, is_open: Mapping[str, bool]) -> MapObject | None:
        """The door or bars on the link ``a-b`` that is closed, if any: the one rule for which
        links can be crossed now (the world's move check, the bots' paths and positions).

        ``is_open`` says which doors and bars are open (the world's state, or an agent's
        ``open`` facts); one it does not name is as the map file sets it."""
        for obj in self.link_blockers(a, b):
            if not is_open.get(obj.id, obj.open):
                return obj
        return None

    def closed_links(self, is_open: Mapping[str, bool]) -> tuple[Link, ...]:
        """Every link a closed door or bars blocks now (see :meth:`closed_blocker`), sorted."""
        return tuple(link for link in sorted(self._blockers) if self.closed_blocker(*link, is_open))

    def nearest_waypoint(self, point: Point) -> str:
        """Id of the waypoint closest to ``point`` (ties: first in file order)."""
        return min(self.waypoints, key=lambda w: distance_sq(w.pos, point)).id

    # --- walls ---

    @property
    def wall_index(self) -> WallIndex:
        """The map's walls on a uniform grid, for fast sight tests."""
        return self._wall_index

    def line_of_sight(self, a: Point, b: Point) -> bool:
        """True when no wall touches the straight line from ``a`` to ``b``."""
        return self._wall_index.line_of_sight(a, b)

    def waypoints_in_sight(self, waypoint_id: str, within: float) -> tuple[str, ...]:
        """Ids of the other waypoints at most ``within`` away from ``waypoint_id`` with a clear
        line of sight to it, in map order (:class:`UnknownIdError` for an unknown waypoint)."""
        here = self.position(waypoint_id)
        return tuple(
            w.id
            for w in self.waypoints
            if w.id != waypoint_id
            and distance(w.pos, here) <= within
            and self.line_of_sight(w.pos, here)
        )

    @property
    def bounds(self) -> BoundingBox:
        """``(min_x, min_y, max_x, max_y)`` enclosing every waypoint and wall."""
        points = [w.pos for w in self.waypoints]
        for p, q in self.walls:
            points.extend((p, q))
        return bounding_box(points)

    @property
    def centre(self) -> Point:
        """The middle of :attr:`bounds`. A character (re)spawns facing it: on a mirror-symmetric
        map both teams then face the battle alike (all facing east gave the west team the first
        sight of the enemy, and Body Count to the west side 27 of 40 times whoever played it)."""
        min_x, min_y, max_x, max_y = self.bounds
        return ((min_x + max_x) / 2, (min_y + max_y) / 2)

    # --- markers and objects ---

    def marker(self, marker_id: str) -> Marker:
        """The marker with this id (:class:`UnknownIdError` if unknown)."""
        try:
            return self._markers_by_id[marker_id]
        except KeyError:
            self._unknown("marker", marker_id, "has_marker")

    def has_marker(self, marker_id: str) -> bool:
        """True when the map has a marker with this id."""
        return marker_id in self._markers_by_id

    def markers_of(self, kind: str, team: str | None = None) -> tuple[Marker, ...]:
        """Markers of ``kind`` in file order; with ``team``, only those whose team is ``team``."""
        return tuple(m for m in self.markers if m.kind == kind and (team is None or m.team == team))

    def spawns(self, team: str) -> tuple[Marker, ...]:
        """The base spawn markers of ``team``."""
        return self.markers_of("spawn", team)

    def home(self, team: str) -> str | None:
        """The waypoint of ``team``'s base: of its spawns, the one nearest their middle (ties
        by marker id); None when it has no spawn marker."""
        spawns = sorted(self.spawns(team), key=lambda m: m.id)
        if not spawns:
            return None
        points = [self.position(m.waypoint) for m in spawns]
        middle = (sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points))
        return min(spawns, key=lambda m: distance(self.position(m.waypoint), middle)).waypoint

    def object(self, object_id: str) -> MapObject:
        """The symbolic object with this id (:class:`UnknownIdError` if unknown)."""
        try:
            return self._objects_by_id[object_id]
        except KeyError:
            self._unknown("object", object_id, "has_object")

    def has_object(self, object_id: str) -> bool:
        """True when the map has a symbolic object with this id."""
        return object_id in self._objects_by_id

    def objects_of(self, kind: str) -> tuple[MapObject, ...]:
        """Symbolic objects of ``kind`` in file order."""
        return tuple(o for o in self.objects if o.kind == kind)

    def controllers_of(self, object_id: str) -> tuple[MapObject, ...]:
        """Plates and levers whose ``controls`` include ``object_id``."""
        return tuple(o for o in self.objects if object_id in o.controls)

    def _unknown(self, kind: str, ident: str, check: str) -> NoReturn:
        known: Mapping[str, object] = self._objects_by_id
        if kind == "waypoint":
            known = self._waypoints_by_id
        elif kind == "marker":
            known = self._markers_by_id
        sample = ", ".join(list(known)[:8]) + (", ..." if len(known) > 8 else "")
        raise UnknownIdError(
            f"unknown {kind} {ident!r} on map {self.name!r} (it has {len(known)} {kind}s: "
            f"{sample or 'none'}); check with {check}() first"
        ) from None
