"""Maps as data: the waypoint graph, walls, markers and symbolic objects, loaded from TOML.

A map is plain data checked once at load time; after that every id it mentions is known to
exist, so the rest of the world code never re-validates it. Load one with :func:`load_map`
(bundled name or path), :func:`parse_map` (TOML text) or :func:`map_from_data` (a dict);
:func:`grid_map` generates a big map for benchmarks and property tests.

Map file format
===============

Coordinates are map units (metres); ``x`` grows east, ``y`` grows north (see
:mod:`warband.world.geometry`). Top-level keys must come before the first ``[[...]]`` table,
as TOML requires::

    name = "test"                       # required: the map's name
    description = "what it is for"      # optional
    teams = ["red", "blue"]             # optional, default ["red", "blue"]
    links = [                           # required: chains of waypoint ids; consecutive ids
      ["a", "b", "c"],                  #   are linked both ways (here a-b and b-c)
    ]
    walls = [                           # optional: polylines of [x, y] points; each piece
      [[0, 0], [30, 0], [30, 20]],      #   blocks sight, and no link may cross it
    ]

    [[waypoints]]                       # one table per waypoint
    id = "a"                            # required, unique
    pos = [2.0, 3.5]                    # required: [x, y]
    cover = { e = 0.5, ne = 1.0 }       # optional: 0..1 per compass direction (n ne e se s sw
                                        #   w nw) the threat is in; 1 = full cover

    [[markers]]                         # annotations the AI and the game modes use
    id = "cp-a"                         # required, unique among markers and objects
    kind = "capture"                    # spawn capture tsp regroup sniping defend hiding
                                        #   exit stack corner
    waypoint = "b"                      # required: where it is
    team = "red"                        # spawn: required (whose spawn); tsp/capture: initial owner
    radius = 3.0                        # optional, default 3.0: capture radius
    group = "room-1"                    # optional: ties markers together (e.g. one room's
                                        #   stack and corner markers)

    [[objects]]                         # symbolic objects for cooperation and planning scenarios
    id = "cell-door"                    # required, unique among markers and objects
    kind = "door"                       # door | bars | plate | lever | item
    link = ["cell", "hall"]             # door, bars: the link they block while closed (required)
    waypoint = "hall"                   # plate, lever, item: where it is (required); door, bars:
                                        #   where it is operated (default: the link's 2nd id)
    controls = ["cell-door"]            # plate, lever: the doors/bars they open
    open = false                        # door, bars, lever: initial state (default false)
    key = "cell-key"                    # door, bars: item kind that unlocks it by hand (optional)
    item = "cell-key"                   # item: what kind of item it is (required for items)

Cover missing from a waypoint's ``cover`` table is computed from the walls: a wall within
:data:`COVER_REACH` units in a direction gives full cover from that direction. Explicit values
win, so a low crate (which does not block sight, hence is not a wall) is written as ``cover``.

Errors
======

Every problem raises :class:`warband.exceptions.MapError` whose message names the file, the
element and the fault, e.g. ``maps/x.toml: link 3 ["a", "zz"]: unknown waypoint "zz"``. List
elements without an id are numbered from 1 in file order (``wall 2``, ``waypoint 4``).
"""

from __future__ import annotations

import itertools
import random
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warband.exceptions import MapError
from warband.world.geometry import (
    DIRECTIONS,
    BoundingBox,
    Point,
    Segment,
    WallIndex,
    bounding_box,
    direction_index,
    direction_vector,
    distance,
    distance_sq,
    ray_hit_distance,
    segments_intersect,
)

BUNDLED_MAP_DIR = Path(__file__).parent / "maps"
"""Folder of the maps shipped with warband, addressable by name in :func:`load_map`."""

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
)
"""Marker kinds: base spawn, capture point, tactical spawn point (TSP), regroup, sniping,
defend, hiding spot (Killzone 3); exit (an escape goal, prison); stack (where a squad lines up
outside a room) and corner (a corner to clear inside it) for room clearing."""

OBJECT_KINDS: tuple[str, ...] = ("door", "bars", "plate", "lever", "item")
"""Symbolic object kinds. Doors and bars block a link while closed; plates and levers open them."""

BLOCKING_KINDS: frozenset[str] = frozenset({"door", "bars"})
"""Object kinds that sit on a link and block it while closed."""

CONTROL_KINDS: frozenset[str] = frozenset({"plate", "lever"})
"""Object kinds that open the doors/bars listed in their ``controls``."""

COVER_REACH = 3.0
"""A wall this close (map units) in a direction gives a waypoint full cover from that direction."""

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
    that take an id raise ``KeyError`` for an unknown one (check with :meth:`has_waypoint`
    first when the id comes from outside, e.g. from an agent's act).
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

    # --- waypoints and links ---

    @property
    def waypoint_ids(self) -> tuple[str, ...]:
        """Waypoint ids in file order."""
        return tuple(w.id for w in self.waypoints)

    def has_waypoint(self, waypoint_id: str) -> bool:
        """True when the map has a waypoint with this id."""
        return waypoint_id in self._waypoints_by_id

    def waypoint(self, waypoint_id: str) -> Waypoint:
        """The waypoint with this id (``KeyError`` if unknown)."""
        return self._waypoints_by_id[waypoint_id]

    def position(self, waypoint_id: str) -> Point:
        """Position of a waypoint (``KeyError`` if unknown)."""
        return self._waypoints_by_id[waypoint_id].pos

    def neighbours(self, waypoint_id: str) -> tuple[str, ...]:
        """Ids linked to ``waypoint_id``, sorted; ignores doors (see :meth:`link_blockers`)."""
        return self._neighbours[waypoint_id]

    def has_link(self, a: str, b: str) -> bool:
        """True when waypoints ``a`` and ``b`` are directly linked (doors not considered)."""
        return b in self._neighbours.get(a, ())

    def link_length(self, a: str, b: str) -> float:
        """Straight-line length of the link (or distance) between two waypoints."""
        return distance(self.position(a), self.position(b))

    def link_blockers(self, a: str, b: str) -> tuple[MapObject, ...]:
        """Doors and bars sitting on the link ``a-b`` (empty when nothing can block it)."""
        return self._blockers.get(link_key(a, b), ())

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

    @property
    def bounds(self) -> BoundingBox:
        """``(min_x, min_y, max_x, max_y)`` enclosing every waypoint and wall."""
        points = [w.pos for w in self.waypoints]
        for p, q in self.walls:
            points.extend((p, q))
        return bounding_box(points)

    # --- markers and objects ---

    def marker(self, marker_id: str) -> Marker:
        """The marker with this id (``KeyError`` if unknown)."""
        return self._markers_by_id[marker_id]

    def has_marker(self, marker_id: str) -> bool:
        """True when the map has a marker with this id."""
        return marker_id in self._markers_by_id

    def markers_of(self, kind: str, team: str | None = None) -> tuple[Marker, ...]:
        """Markers of ``kind`` in file order; with ``team``, only those whose team is ``team``."""
        return tuple(m for m in self.markers if m.kind == kind and (team is None or m.team == team))

    def spawns(self, team: str) -> tuple[Marker, ...]:
        """The base spawn markers of ``team``."""
        return self.markers_of("spawn", team)

    def object(self, object_id: str) -> MapObject:
        """The symbolic object with this id (``KeyError`` if unknown)."""
        return self._objects_by_id[object_id]

    def has_object(self, object_id: str) -> bool:
        """True when the map has a symbolic object with this id."""
        return object_id in self._objects_by_id

    def objects_of(self, kind: str) -> tuple[MapObject, ...]:
        """Symbolic objects of ``kind`` in file order."""
        return tuple(o for o in self.objects if o.kind == kind)

    def controllers_of(self, object_id: str) -> tuple[MapObject, ...]:
        """Plates and levers whose ``controls`` include ``object_id``."""
        return tuple(o for o in self.objects if object_id in o.controls)


# --- loading -----------------------------------------------------------------------------------


def bundled_maps() -> tuple[str, ...]:
    """Names of the maps shipped with warband, sorted."""
    return tuple(sorted(p.stem for p in BUNDLED_MAP_DIR.glob("*.toml")))


def load_map(source: str | Path) -> Map:
    """Load a map by bundled name (``"warzone"``) or from a TOML file path.

    A ``str`` without a path separator and without a ``.toml`` suffix is a bundled map name;
    anything else is a path. Raises :class:`MapError` for an unknown name, an unreadable file
    or an invalid map.
    """
    if isinstance(source, str) and "/" not in source and not source.endswith(".toml"):
        path = BUNDLED_MAP_DIR / f"{source}.toml"
        if not path.is_file():
            raise MapError(
                f"unknown map {source!r}; bundled maps: {', '.join(bundled_maps())} "
                "(or pass a path to a .toml file)"
            )
    else:
        path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MapError(f"{path}: cannot read map file: {exc.strerror or exc}") from exc
    return parse_map(text, source=str(path))


def parse_map(text: str, *, source: str = "<string>") -> Map:
    """Parse TOML map text (format in the module docstring); ``source`` names it in errors."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MapError(f"{source}: not valid TOML: {exc}") from exc
    return map_from_data(data, source=source)


_TOP_KEYS = ("name", "description", "teams", "links", "walls", "waypoints", "markers", "objects")
_WAYPOINT_KEYS = ("id", "pos", "cover")
_MARKER_KEYS = ("id", "kind", "waypoint", "team", "radius", "group")
_OBJECT_KEYS = ("id", "kind", "link", "waypoint", "controls", "open", "key", "item")


class _Reader:
    """Turns raw TOML data into map values, raising MapError that names file and element."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, element: str, problem: str) -> MapError:
        prefix = f"{self.source}: {element}: " if element else f"{self.source}: "
        return MapError(prefix + problem)

    def check_keys(self, element: str, table: Mapping[str, Any], known: Sequence[str]) -> None:
        for key in table:
            if key not in known:
                raise self.fail(element, f"unknown key {key!r}; known keys: {', '.join(known)}")

    def table_list(self, data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
        raw = data.get(key, [])
        if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
            raise self.fail(key, f"must be an array of tables ([[{key}]]), got {raw!r}")
        return raw

    def string(self, element: str, table: Mapping[str, Any], key: str) -> str:
        if key not in table:
            raise self.fail(element, f"missing {key!r}")
        value = table[key]
        if not isinstance(value, str) or not value:
            raise self.fail(element, f"{key!r} must be a non-empty string, got {value!r}")
        return value

    def optional_string(self, element: str, table: Mapping[str, Any], key: str) -> str | None:
        return self.string(element, table, key) if key in table else None

    def point(self, element: str, value: Any, what: str) -> Point:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        ):
            raise self.fail(element, f"{what} must be [x, y] numbers, got {value!r}")
        return (float(value[0]), float(value[1]))

    def element_name(self, kind: str, index: int, table: Mapping[str, Any]) -> str:
        ident = table.get("id")
        return f'{kind} "{ident}"' if isinstance(ident, str) and ident else f"{kind} {index}"


def map_from_data(data: Mapping[str, Any], *, source: str = "<data>") -> Map:
    """Build and validate a :class:`Map` from parsed TOML data (same layout as the file)."""
    reader = _Reader(source)
    reader.check_keys("", data, _TOP_KEYS)
    name = reader.string("map", data, "name")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise reader.fail("map", f"'description' must be a string, got {description!r}")
    teams = _read_teams(reader, data)
    walls = _read_walls(reader, data)
    waypoints = _read_waypoints(reader, data, walls)
    by_id = {w.id: w for w in waypoints}
    links = _read_links(reader, data, by_id, walls)
    markers = _read_markers(reader, data, by_id, teams)
    objects = _read_objects(reader, data, by_id, set(links), {m.id for m in markers})
    return Map(
        name=name,
        description=description,
        source=source,
        teams=teams,
        waypoints=tuple(waypoints),
        links=tuple(sorted(links)),
        walls=tuple(walls),
        markers=tuple(markers),
        objects=tuple(objects),
    )


def _read_teams(reader: _Reader, data: Mapping[str, Any]) -> tuple[str, ...]:
    raw = data.get("teams", list(DEFAULT_TEAMS))
    if (
        not isinstance(raw, list)
        or not raw
        or not all(isinstance(t, str) and t for t in raw)
        or len(set(raw)) != len(raw)
    ):
        raise reader.fail("teams", f"must be a list of distinct non-empty strings, got {raw!r}")
    return tuple(raw)


def _read_walls(reader: _Reader, data: Mapping[str, Any]) -> list[Segment]:
    raw = data.get("walls", [])
    if not isinstance(raw, list):
        raise reader.fail("walls", f"must be a list of polylines, got {raw!r}")
    segments: list[Segment] = []
    for number, polyline in enumerate(raw, start=1):
        element = f"wall {number}"
        if not isinstance(polyline, list) or len(polyline) < 2:
            raise reader.fail(
                element, f"must be a list of at least 2 [x, y] points, got {polyline!r}"
            )
        points = [reader.point(element, p, "each point") for p in polyline]
        for p, q in itertools.pairwise(points):
            if p == q:
                raise reader.fail(element, f"has a zero-length piece at {list(p)}")
            segments.append((p, q))
    return segments


def _read_waypoints(
    reader: _Reader, data: Mapping[str, Any], walls: Sequence[Segment]
) -> list[Waypoint]:
    tables = reader.table_list(data, "waypoints")
    if not tables:
        raise reader.fail("waypoints", "a map needs at least one [[waypoints]] table")
    seen: set[str] = set()
    waypoints: list[Waypoint] = []
    index = WallIndex(walls)
    for number, table in enumerate(tables, start=1):
        element = reader.element_name("waypoint", number, table)
        reader.check_keys(element, table, _WAYPOINT_KEYS)
        ident = reader.string(element, table, "id")
        if ident in seen:
            raise reader.fail(element, "duplicate waypoint id")
        seen.add(ident)
        if "pos" not in table:
            raise reader.fail(element, "missing 'pos' (write pos = [x, y])")
        pos = reader.point(element, table["pos"], "'pos'")
        cover = _read_cover(reader, element, table.get("cover", {}), pos, index)
        waypoints.append(Waypoint(ident, pos, cover))
    return waypoints


def _read_cover(
    reader: _Reader, element: str, raw: Any, pos: Point, walls: WallIndex
) -> tuple[float, ...]:
    if not isinstance(raw, dict):
        raise reader.fail(element, f"'cover' must be a table like {{ n = 1.0 }}, got {raw!r}")
    cover = list(auto_cover(pos, walls))
    for direction, value in raw.items():
        if direction not in DIRECTIONS:
            raise reader.fail(
                element,
                f"unknown cover direction {direction!r}; known directions: {', '.join(DIRECTIONS)}",
            )
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
            raise reader.fail(
                element, f"cover {direction!r} must be a number in 0..1, got {value!r}"
            )
        cover[DIRECTIONS.index(direction)] = float(value)
    return tuple(cover)


def auto_cover(pos: Point, walls: WallIndex) -> tuple[float, ...]:
    """Cover per direction derived from walls: 1.0 where a wall is within :data:`COVER_REACH`."""
    cover: list[float] = []
    for name in DIRECTIONS:
        direction = direction_vector(name)
        tip = (pos[0] + direction[0] * COVER_REACH, pos[1] + direction[1] * COVER_REACH)
        hit = ray_hit_distance(pos, direction, COVER_REACH, walls.candidates(pos, tip))
        cover.append(0.0 if hit is None else 1.0)
    return tuple(cover)


def _read_links(
    reader: _Reader,
    data: Mapping[str, Any],
    waypoints: Mapping[str, Waypoint],
    walls: Sequence[Segment],
) -> set[Link]:
    raw = data.get("links")
    if raw is None:
        raise reader.fail("links", 'missing; write links = [["a", "b"], ...] before the tables')
    if not isinstance(raw, list):
        raise reader.fail("links", f"must be a list of waypoint-id chains, got {raw!r}")
    index = WallIndex(walls)
    links: set[Link] = set()
    for number, chain in enumerate(raw, start=1):
        element = f"link {number} {chain!r}"
        if not isinstance(chain, list) or len(chain) < 2:
            raise reader.fail(element, "must be a list of at least 2 waypoint ids")
        for ident in chain:
            if not isinstance(ident, str):
                raise reader.fail(element, f"waypoint ids must be strings, got {ident!r}")
            if ident not in waypoints:
                raise reader.fail(element, f'unknown waypoint "{ident}"')
        for a, b in itertools.pairwise(chain):
            if a == b:
                raise reader.fail(element, f'links waypoint "{a}" to itself')
            pa, pb = waypoints[a].pos, waypoints[b].pos
            for wall in index.candidates(pa, pb):
                if segments_intersect(pa, pb, wall[0], wall[1]):
                    raise reader.fail(
                        element,
                        f'link "{a}"-"{b}" crosses the wall piece {list(wall[0])}-{list(wall[1])};'
                        " move a waypoint or leave a gap (a door) in the wall",
                    )
            links.add(link_key(a, b))
    return links


def _read_markers(
    reader: _Reader,
    data: Mapping[str, Any],
    waypoints: Mapping[str, Waypoint],
    teams: Sequence[str],
) -> list[Marker]:
    markers: list[Marker] = []
    seen: set[str] = set()
    for number, table in enumerate(reader.table_list(data, "markers"), start=1):
        element = reader.element_name("marker", number, table)
        reader.check_keys(element, table, _MARKER_KEYS)
        ident = reader.string(element, table, "id")
        if ident in seen:
            raise reader.fail(element, "duplicate marker id")
        seen.add(ident)
        kind = reader.string(element, table, "kind")
        if kind not in MARKER_KINDS:
            raise reader.fail(
                element, f"unknown marker kind {kind!r}; known kinds: {', '.join(MARKER_KINDS)}"
            )
        waypoint = _read_waypoint_ref(reader, element, table, waypoints)
        team = reader.optional_string(element, table, "team")
        if team is not None and team not in teams:
            raise reader.fail(element, f"unknown team {team!r}; map teams: {', '.join(teams)}")
        if kind == "spawn" and team is None:
            raise reader.fail(element, "a spawn marker needs a 'team'")
        radius = table.get("radius", 3.0)
        if not isinstance(radius, int | float) or isinstance(radius, bool) or radius <= 0:
            raise reader.fail(element, f"'radius' must be a positive number, got {radius!r}")
        group = reader.optional_string(element, table, "group")
        markers.append(Marker(ident, kind, waypoint, team, float(radius), group))
    return markers


def _read_waypoint_ref(
    reader: _Reader, element: str, table: Mapping[str, Any], waypoints: Mapping[str, Waypoint]
) -> str:
    waypoint = reader.string(element, table, "waypoint")
    if waypoint not in waypoints:
        raise reader.fail(element, f'unknown waypoint "{waypoint}"')
    return waypoint


def _read_objects(
    reader: _Reader,
    data: Mapping[str, Any],
    waypoints: Mapping[str, Waypoint],
    links: set[Link],
    marker_ids: set[str],
) -> list[MapObject]:
    tables = reader.table_list(data, "objects")
    objects: list[MapObject] = []
    seen: set[str] = set()
    for number, table in enumerate(tables, start=1):
        element = reader.element_name("object", number, table)
        reader.check_keys(element, table, _OBJECT_KEYS)
        ident = reader.string(element, table, "id")
        if ident in seen or ident in marker_ids:
            raise reader.fail(element, "duplicate id (ids are unique among markers and objects)")
        seen.add(ident)
        kind = reader.string(element, table, "kind")
        if kind not in OBJECT_KINDS:
            raise reader.fail(
                element, f"unknown object kind {kind!r}; known kinds: {', '.join(OBJECT_KINDS)}"
            )
        objects.append(_read_object(reader, element, ident, kind, table, waypoints, links))
    kinds = {o.id: o.kind for o in objects}
    for obj in objects:
        for target in obj.controls:
            if kinds.get(target) not in BLOCKING_KINDS:
                raise reader.fail(
                    f'object "{obj.id}"',
                    f'controls "{target}", which is not a door or bars object of this map',
                )
    return objects


def _read_object(
    reader: _Reader,
    element: str,
    ident: str,
    kind: str,
    table: Mapping[str, Any],
    waypoints: Mapping[str, Waypoint],
    links: set[Link],
) -> MapObject:
    link: Link | None = None
    if kind in BLOCKING_KINDS:
        raw = table.get("link")
        if not isinstance(raw, list) or len(raw) != 2 or not all(isinstance(v, str) for v in raw):
            raise reader.fail(element, f'a {kind} needs link = ["a", "b"], got {raw!r}')
        link = link_key(raw[0], raw[1])
        if link not in links:
            raise reader.fail(element, f"link {raw!r} is not a link of this map")
        waypoint = (
            _read_waypoint_ref(reader, element, table, waypoints) if "waypoint" in table else raw[1]
        )
    else:
        if "link" in table:
            raise reader.fail(element, f"a {kind} sits at a waypoint; 'link' is for doors and bars")
        waypoint = _read_waypoint_ref(reader, element, table, waypoints)
    controls_raw = table.get("controls", [])
    if not isinstance(controls_raw, list) or not all(isinstance(c, str) for c in controls_raw):
        raise reader.fail(element, f"'controls' must be a list of object ids, got {controls_raw!r}")
    if controls_raw and kind not in CONTROL_KINDS:
        raise reader.fail(element, f"only plates and levers have 'controls', not a {kind}")
    if kind in CONTROL_KINDS and not controls_raw:
        raise reader.fail(element, f"a {kind} needs 'controls' = [door or bars ids]")
    is_open = table.get("open", False)
    if not isinstance(is_open, bool):
        raise reader.fail(element, f"'open' must be true or false, got {is_open!r}")
    key = reader.optional_string(element, table, "key")
    if key is not None and kind not in BLOCKING_KINDS:
        raise reader.fail(element, f"only doors and bars take a 'key', not a {kind}")
    item = reader.optional_string(element, table, "item")
    if kind == "item" and item is None:
        raise reader.fail(element, "an item needs 'item' (its kind, e.g. \"key\")")
    if item is not None and kind != "item":
        raise reader.fail(element, f"only items have 'item', not a {kind}")
    return MapObject(ident, kind, waypoint, link, tuple(controls_raw), is_open, key, item)


# --- generated maps ----------------------------------------------------------------------------


def grid_map(
    columns: int,
    rows: int,
    *,
    spacing: float = 5.0,
    wall_fraction: float = 0.0,
    seed: int = 0,
    teams: Sequence[str] = DEFAULT_TEAMS,
    name: str | None = None,
) -> Map:
    """A generated grid of ``columns`` x ``rows`` waypoints named ``g{col}_{row}``.

    Neighbouring waypoints are linked. With ``wall_fraction`` > 0, that share of the links is
    removed (seeded by ``seed``) and replaced by a short wall across the gap, keeping the graph
    connected. The first team spawns on column 0, the second on the last column (other teams
    get no spawns); three capture points lie on the middle column, a regroup marker next to
    each team's spawns and TSPs at the quarter columns. Needs ``columns >= 3`` and ``rows >= 1``.
    """
    if columns < 3 or rows < 1:
        raise ValueError(f"grid_map needs columns >= 3 and rows >= 1, got {columns}x{rows}")
    if not 0.0 <= wall_fraction < 1.0:
        raise ValueError(f"wall_fraction must be in [0, 1), got {wall_fraction}")

    def wid(c: int, r: int) -> str:
        return f"g{c}_{r}"

    pairs = [(wid(c, r), wid(c + 1, r)) for c in range(columns - 1) for r in range(rows)]
    pairs += [(wid(c, r), wid(c, r + 1)) for c in range(columns) for r in range(rows - 1)]
    removed = _removable_links(pairs, wall_fraction, random.Random(seed))
    walls = [_wall_across(a, b, spacing) for a, b in removed]
    kept = [list(p) for p in pairs if p not in removed]
    data: dict[str, Any] = {
        "name": name or f"grid-{columns}x{rows}",
        "description": "generated grid map",
        "teams": list(teams),
        "links": kept,
        "walls": walls,
        "waypoints": [
            {"id": wid(c, r), "pos": [c * spacing, r * spacing]}
            for c in range(columns)
            for r in range(rows)
        ],
        "markers": _grid_markers(columns, rows, list(teams), wid),
    }
    return map_from_data(data, source=f"<grid_map {columns}x{rows} seed={seed}>")


def _removable_links(
    pairs: Sequence[tuple[str, str]], fraction: float, rng: random.Random
) -> set[tuple[str, str]]:
    """Pick about ``fraction`` of the links to remove without disconnecting the graph.

    A random spanning tree (Kruskal over shuffled links) is always kept, so only links that
    close a cycle are candidates; that keeps generation linear instead of re-testing
    connectivity after every removal.
    """
    order = list(pairs)
    rng.shuffle(order)
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    spare: list[tuple[str, str]] = []
    for a, b in order:
        ra, rb = root(a), root(b)
        if ra == rb:
            spare.append((a, b))
        else:
            parent[ra] = rb
    return set(spare[: int(len(pairs) * fraction)])


def _grid_position(ident: str, spacing: float) -> Point:
    col, row = ident[1:].split("_")
    return (int(col) * spacing, int(row) * spacing)


def _wall_across(a: str, b: str, spacing: float) -> list[list[float]]:
    """A wall across link a-b at its midpoint, short enough to cross no other link."""
    (ax, ay), (bx, by) = _grid_position(a, spacing), _grid_position(b, spacing)
    mx, my = (ax + bx) / 2, (ay + by) / 2
    half = spacing * 0.4
    if ay == by:
        return [[mx, my - half], [mx, my + half]]
    return [[mx - half, my], [mx + half, my]]


def _grid_markers(columns: int, rows: int, teams: list[str], wid: Any) -> list[dict[str, Any]]:
    markers: list[dict[str, Any]] = []
    sides = [(0, 1), (columns - 1, columns - 2)]
    for team, (spawn_col, regroup_col) in zip(teams[:2], sides, strict=False):
        for r in range(rows):
            markers.append(
                {
                    "id": f"spawn-{team}-{r}",
                    "kind": "spawn",
                    "waypoint": wid(spawn_col, r),
                    "team": team,
                }
            )
        markers.append(
            {"id": f"regroup-{team}", "kind": "regroup", "waypoint": wid(regroup_col, rows // 2)}
        )
    middle = columns // 2
    for label, row in zip("abc", sorted({0, rows // 2, rows - 1}), strict=False):
        markers.append({"id": f"cp-{label}", "kind": "capture", "waypoint": wid(middle, row)})
    for label, col in (("west", columns // 4), ("east", columns - 1 - columns // 4)):
        markers.append({"id": f"tsp-{label}", "kind": "tsp", "waypoint": wid(col, rows // 2)})
    return markers
