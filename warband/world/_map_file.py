"""The map file: its TOML format, and the loader that checks it and builds a :class:`Map`.

A map is plain data checked once at load time. Load one with :func:`load_map` (bundled name or
path), :func:`parse_map` (TOML text) or :func:`map_from_data` (a dict).

Map file format
===============

The format is documented in one public place, ``docs/maps.md``: every key, marker kind and
object kind, the coordinate range, and a complete example (a test keeps that page and this
loader in step). In short: top-level ``name``, ``teams``, ``links`` (chains of waypoint ids)
and ``walls`` (polylines), then ``[[waypoints]]`` (``id``, ``pos``, ``cover``),
``[[markers]]`` (``id``, ``kind``, ``waypoint``, ``team``, ``radius``, ``group``) and
``[[objects]]`` (``id``, ``kind``, ``link``, ``waypoint``, ``controls``, ``open``, ``key``,
``item``). Coordinates are map units (metres), ``x`` east and ``y`` north, each finite and
within +-:data:`MAX_COORDINATE`. Cover missing from a waypoint's ``cover`` table is computed
from the walls: a wall within :data:`COVER_REACH` units in a direction gives full cover from
that direction.

Errors
======

Every problem raises :class:`warband.exceptions.MapError` whose message names the file, the
element and the fault, e.g. ``maps/x.toml: link 3 ["a", "zz"]: unknown waypoint "zz"``. List
elements without an id are numbered from 1 in file order (``wall 2``, ``waypoint 4``).
"""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from warband.exceptions import MapError
from warband.world.geometry import (
    DIRECTIONS,
    Point,
    Segment,
    WallIndex,
    direction_vector,
    ray_hit_distance,
    segments_intersect,
)
from warband.world.maps import (
    BLOCKING_KINDS,
    CONTROL_KINDS,
    DEFAULT_TEAMS,
    MARKER_KINDS,
    OBJECT_KINDS,
    TEAM_MARKER_KINDS,
    Link,
    Map,
    MapObject,
    Marker,
    Waypoint,
    link_key,
)

BUNDLED_MAP_DIR = Path(__file__).parent / "maps"
"""Folder of the maps shipped with warband, addressable by name in :func:`load_map`."""

COVER_REACH = 3.0
"""A wall this close (map units) in a direction gives a waypoint full cover from that direction."""

MAX_COORDINATE = 10_000.0
"""Coordinates are finite map units within +-this (10 km): a map is drawn, searched and
clustered at the scale of its extent, and a stray ``1e12`` would take minutes to render."""


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
    except UnicodeDecodeError as exc:
        raise MapError(
            f"{path}: not a map file: byte {exc.start} is not UTF-8 text; a map is a TOML text "
            "file (format: docs/maps.md)"
        ) from None
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
        x, y = float(value[0]), float(value[1])
        if not (abs(x) <= MAX_COORDINATE and abs(y) <= MAX_COORDINATE):  # False for NaN too
            raise self.fail(
                element,
                f"{what} {[value[0], value[1]]!r} is out of range: coordinates are map units "
                f"(metres) between -{MAX_COORDINATE:g} and {MAX_COORDINATE:g}",
            )
        return (x, y)

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
    wall_index = WallIndex(walls)
    waypoints = _read_waypoints(reader, data, wall_index)
    by_id = {w.id: w for w in waypoints}
    links = _read_links(reader, data, by_id, wall_index)
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


def _read_waypoints(reader: _Reader, data: Mapping[str, Any], walls: WallIndex) -> list[Waypoint]:
    tables = reader.table_list(data, "waypoints")
    if not tables:
        raise reader.fail("waypoints", "a map needs at least one [[waypoints]] table")
    seen: set[str] = set()
    waypoints: list[Waypoint] = []
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
        cover = _read_cover(reader, element, table.get("cover", {}), pos, walls)
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
    walls: WallIndex,
) -> set[Link]:
    raw = data.get("links")
    if raw is None:
        raise reader.fail("links", 'missing; write links = [["a", "b"], ...] before the tables')
    if not isinstance(raw, list):
        raise reader.fail("links", f"must be a list of waypoint-id chains, got {raw!r}")
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
            for wall in walls.candidates(pa, pb):
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
        if kind in TEAM_MARKER_KINDS and team is None:
            raise reader.fail(element, f"a {kind} marker needs a 'team'")
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
