"""Perception: who sees whom (view cone, distance, walls), who hears what, cloak and disguise.

Plain inputs only: positions are ``(x, y)`` tuples in map units, walls are segments
``((x1, y1), (x2, y2))``. An :class:`Observer` has :class:`Senses`; a :class:`Body` is anything
that can be seen. Sight needs all of:

- the body is within the observer's ``view_distance`` (a cloaked body: within
  ``cloak_reveal_distance`` as well, so cloak hides it beyond a short distance);
- the body is inside the view cone: the angle between the observer's heading and the direction
  to the body is at most half of ``view_angle`` (a ``view_angle`` of ``2 * pi`` sees all around);
- no wall crosses the segment between them (touching a wall's end counts as blocked, so a
  sight line never slips through the joint of two walls).

A disguised body is seen by an enemy as a member of the enemy's own team; team mates see its
true team. Hearing ignores walls and cones: a :class:`Noise` is heard by an observer within
``hearing_radius * loudness`` of it.

Two implementations give the same answer: :func:`perceive` looks up candidates in strips of
bodies sorted by x (only those in the box around the observer's view cone), and walls in a
grid (:class:`SightIndex`), so a tick with many entities does not test every pair;
:func:`perceive_all_pairs` tests every observer against every body and every wall and is the
reference (and the benchmark's baseline). Both return sightings sorted by ``(distance, id)`` so
results are deterministic. :func:`sight_lines` and :func:`hearings` give the same answers as
:func:`perceive` and :func:`hear_all` without an object per pair, for a world that sees
thousands of them a tick.
"""

from __future__ import annotations

import math
import struct
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import itemgetter
from typing import TypeAlias

from ..exceptions import ConfigurationError
from . import geometry
from .geometry import Point, Segment, distance, line_of_sight


@dataclass(frozen=True, slots=True)
class Senses:
    """What an observer's sensors can do; ranges are in map units, angles in radians."""

    view_angle: float = math.radians(120.0)
    """Full opening of the view cone; ``2 * pi`` (or more) sees all around."""
    view_distance: float = 40.0
    """Nothing farther than this is seen."""
    hearing_radius: float = 25.0
    """A noise of loudness 1 is heard within this distance, through walls."""
    cloak_reveal_distance: float = 3.0
    """A cloaked body is seen only when it is this close (and otherwise visible)."""


@dataclass(frozen=True, slots=True)
class Observer:
    """An entity that looks: its id, team, position, heading (radians, 0 = east)."""

    id: str
    team: str
    position: Point
    heading: float = 0.0
    senses: Senses = Senses()


@dataclass(frozen=True, slots=True)
class Body:
    """An entity that can be seen; ``cloaked`` and ``disguised`` change how it is seen."""

    id: str
    team: str
    position: Point
    cloaked: bool = False
    disguised: bool = False


@dataclass(frozen=True, slots=True)
class Sighting:
    """One body an observer sees: its id, the team it appears to be on, where, how far."""

    id: str
    apparent_team: str
    position: Point
    distance: float


@dataclass(frozen=True, slots=True)
class Noise:
    """A sound made this tick: ``kind`` (``"gunfire"``, ``"explosion"``, ``"footsteps"``...)."""

    kind: str
    position: Point
    source: str
    loudness: float = 1.0
    """Multiplies the listener's hearing radius: an explosion (2.0) carries farther."""


@dataclass(frozen=True, slots=True)
class Hearing:
    """One noise an observer heard, with the distance to it."""

    kind: str
    position: Point
    source: str
    distance: float


def in_view_cone(observer: Observer, point: Point) -> bool:
    """True when ``point`` lies inside the observer's view cone (distance is not checked)."""
    eye = _Eye(observer)
    dx, dy = point[0] - eye.x, point[1] - eye.y
    d = math.hypot(dx, dy)
    return eye.all_around or d == 0.0 or dx * eye.fx + dy * eye.fy >= d * eye.cos_half - 1e-9


def apparent_team(observer: Observer, body: Body) -> str:
    """The team ``observer`` believes ``body`` is on: a disguise fools enemies, not friends."""
    if body.disguised and body.team != observer.team:
        return observer.team
    return body.team


def sight_range(observer: Observer, body: Body) -> float:
    """How close ``body`` must be for ``observer`` to see it (cloak shortens the range)."""
    if body.cloaked and body.team != observer.team:
        return min(observer.senses.view_distance, observer.senses.cloak_reveal_distance)
    return observer.senses.view_distance


class _Eye:
    """An observer with its cone precomputed: a dot product replaces an arctangent per pair."""

    __slots__ = (
        "all_around",
        "cloak_reach",
        "cos_half",
        "fx",
        "fy",
        "half",
        "id",
        "observer",
        "reach",
        "team",
        "x",
        "y",
    )

    def __init__(self, observer: Observer) -> None:
        half = observer.senses.view_angle / 2.0
        self.observer = observer
        self.id = observer.id
        self.team = observer.team
        self.x, self.y = observer.position
        self.fx, self.fy = math.cos(observer.heading), math.sin(observer.heading)
        self.half = half
        self.all_around = half >= math.pi
        self.cos_half = math.cos(half)
        self.reach = observer.senses.view_distance
        self.cloak_reach = min(observer.senses.view_distance, observer.senses.cloak_reveal_distance)

    def view_box(self) -> tuple[float, float, float, float]:
        """A box ``(x0, y0, x1, y1)`` holding the whole view cone, with room to spare.

        The cone is the observer's spot, the two ends of its arc and the points of the arc due
        east, north, west or south when the cone spans them. The margin covers rounding here
        and the cone test's own tolerance: a box too big costs a few candidates, never a
        sighting.
        """
        pad = 1e-3 * (1.0 + self.reach)
        reach = self.reach + pad
        x, y = self.x, self.y
        if self.all_around:
            return (x - reach, y - reach, x + reach, y + reach)
        # The arc's ends: the heading turned by half the view angle either way (a rotation of
        # the heading's unit vector, so no trigonometry per observer).
        fx, fy, c = self.fx, self.fy, self.cos_half
        s = math.sin(self.half)
        ends = ((fx * c + fy * s) * reach, (fy * c - fx * s) * reach)
        ends2 = ((fx * c - fy * s) * reach, (fy * c + fx * s) * reach)
        x0 = min(0.0, ends[0], ends2[0])
        x1 = max(0.0, ends[0], ends2[0])
        y0 = min(0.0, ends[1], ends2[1])
        y1 = max(0.0, ends[1], ends2[1])
        # A compass direction inside the cone (with a margin of a millionth of a radian: one
        # taken in too many only widens the box) is a point of the arc the box must hold.
        inside = math.cos(self.half + 1e-6) if self.half + 1e-6 < math.pi else -1.0
        if fx >= inside:
            x1 = reach
        if -fx >= inside:
            x0 = -reach
        if fy >= inside:
            y1 = reach
        if -fy >= inside:
            y0 = -reach
        return (x + x0 - pad, y + y0 - pad, x + x1 + pad, y + y1 + pad)


def _sighting(eye: _Eye, body: Body) -> Sighting | None:
    """Distance and cone test shared by both implementations (walls are checked by the caller).

    Inside the cone means ``cos(angle to the body) >= cos(half the view angle)``, written as a
    dot product so it needs no arctangent; a body on the observer's own spot is inside.
    """
    if body.id == eye.id:
        return None
    dx, dy = body.position[0] - eye.x, body.position[1] - eye.y
    d = math.hypot(dx, dy)
    if d > eye.reach:
        return None
    if body.cloaked and body.team != eye.team and d > sight_range(eye.observer, body):
        return None
    if not eye.all_around and d > 0.0 and dx * eye.fx + dy * eye.fy < d * eye.cos_half - 1e-9:
        return None
    return Sighting(body.id, apparent_team(eye.observer, body), body.position, d)


def _sorted(sightings: list[Sighting]) -> list[Sighting]:
    return sorted(sightings, key=lambda s: (s.distance, s.id))


def perceive_all_pairs(
    observers: Sequence[Observer], bodies: Sequence[Body], walls: Sequence[Segment]
) -> dict[str, list[Sighting]]:
    """Reference implementation: every observer against every body and every wall.

    Returns, for every observer id, the sightings sorted by ``(distance, id)``.
    """
    seen: dict[str, list[Sighting]] = {}
    for observer in observers:
        eye = _Eye(observer)
        found = []
        for body in bodies:
            sighting = _sighting(eye, body)
            if sighting is not None and line_of_sight(observer.position, body.position, walls):
                found.append(sighting)
        seen[observer.id] = _sorted(found)
    return seen


def _cell_of(point: Point, size: float) -> tuple[int, int]:
    return (math.floor(point[0] / size), math.floor(point[1] / size))


class SpatialGrid:
    """A uniform grid of entity ids by position: finds the entities near a point cheaply.

    ``cell_size`` should be about the typical query radius; a query visits the cells the
    query square overlaps, so its cost grows with the density, not with the entity count.
    """

    def __init__(self, cell_size: float) -> None:
        if cell_size <= 0:
            raise ConfigurationError(f"SpatialGrid cell_size must be positive, got {cell_size}")
        self.cell_size = cell_size
        self._cells: dict[tuple[int, int], list[tuple[str, Point]]] = {}

    def insert(self, entity_id: str, position: Point) -> None:
        """Add an entity at a position (an id inserted twice is found twice)."""
        self._cells.setdefault(_cell_of(position, self.cell_size), []).append((entity_id, position))

    def near(self, center: Point, radius: float) -> list[str]:
        """Ids of the entities within ``radius`` of ``center`` (inclusive), in insertion order
        per cell, cells visited row by row."""
        (x0, y0) = _cell_of((center[0] - radius, center[1] - radius), self.cell_size)
        (x1, y1) = _cell_of((center[0] + radius, center[1] + radius), self.cell_size)
        found = []
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                for entity_id, position in self._cells.get((cx, cy), ()):
                    if distance(center, position) <= radius:
                        found.append(entity_id)
        return found


_Wall: TypeAlias = tuple[float, float, float, float, float, float, float, float, float, float]
"""A wall in a :class:`SightIndex` cell: its padded box, the coordinates of its ends ``p`` and
``q``, and ``q - p``."""

_EPSILON = geometry._EPSILON
"""The tolerance of :func:`~warband.world.geometry.segments_intersect` (touching counts)."""

_PAD = 1e-6
"""Widening of wall boxes and sight-line cells: the intersection test tolerates a tiny epsilon,
so a wall just across a grid-cell border may still touch the line."""

_PACK_POINT = struct.Struct("<dd").pack


def _spot_key(point: Point) -> bytes:
    """A point's key in a :class:`SightIndex`'s memory: its two coordinates' bits (16 bytes);
    a sight line's key is its two ends' keys, the one it starts from first."""
    return _PACK_POINT(point[0], point[1])


class SightIndex:
    """Line-of-sight tests against fixed walls, fast enough for many entities per tick.

    Walls are registered in the uniform-grid cells their (slightly padded) bounding box
    overlaps. A sight line visits only the cells it passes through, column by column, skips
    walls whose box does not overlap its own, and runs the exact test
    (:func:`~warband.world.geometry.segments_intersect`) on the rest, so it answers exactly
    like :func:`~warband.world.geometry.line_of_sight` over all walls. Walls never move, so
    answers are remembered per ``(from, to)`` pair: characters standing on waypoints ask the
    same questions tick after tick. When the memory holds ``cache_limit`` pairs, the older half
    is forgotten.

    The memory is keyed by the bytes of the two points' coordinates (:func:`_spot_key`), not by
    the points: a dict of bytes and booleans is one Python's garbage collector never tracks,
    while a dict that takes in new tuples is tracked again and walked entry by entry at every
    full collection, which came every tick or two in a 1000-entity world (hundreds of
    thousands of entries). Two points equal as numbers but not as bits (``0.0`` and ``-0.0``)
    get two entries with the same answer: the test on either is the same arithmetic.
    """

    def __init__(
        self, walls: Sequence[Segment], cell_size: float = 16.0, cache_limit: int = 400_000
    ) -> None:
        # 16 units: a sight line (40 to 60 long) spans fewer columns and cells, each of which
        # costs more in Python than the few more walls looked at (on bench world's lines, 5%
        # fewer instructions a test than with 8).
        if cell_size <= 0:
            raise ConfigurationError(f"SightIndex cell_size must be positive, got {cell_size}")
        self.walls: tuple[Segment, ...] = tuple(walls)
        self.cell_size = cell_size
        self.cache_limit = cache_limit
        self._boxes = [
            (
                min(p[0], q[0]) - _PAD,
                min(p[1], q[1]) - _PAD,
                max(p[0], q[0]) + _PAD,
                max(p[1], q[1]) + _PAD,
            )
            for p, q in self.walls
        ]
        # Column of cells -> row -> the walls there: a sight line walks the columns it spans.
        self._columns: dict[int, dict[int, list[_Wall]]] = {}
        for (x0, y0, x1, y1), (p, q) in zip(self._boxes, self.walls, strict=True):
            wall = (x0, y0, x1, y1, p[0], p[1], q[0], q[1], q[0] - p[0], q[1] - p[1])
            for cx in range(math.floor(x0 / cell_size), math.floor(x1 / cell_size) + 1):
                column = self._columns.setdefault(cx, {})
                for cy in range(math.floor(y0 / cell_size), math.floor(y1 / cell_size) + 1):
                    column.setdefault(cy, []).append(wall)
        self._memory: dict[bytes, bool] = {}
        self._longest = max(
            (abs(q[0] - p[0]) + abs(q[1] - p[1]) for p, q in self.walls), default=0.0
        )

    def clear(self, a: Point, b: Point) -> bool:
        """True when no wall touches the segment from ``a`` to ``b``."""
        key_a, key_b = _spot_key(a), _spot_key(b)
        known = self._memory.get(key_a + key_b)
        return self._learn(a, b, key_a, key_b) if known is None else known

    def remembers(self, a: Point, b: Point) -> bool:
        """True when the answer for the line from ``a`` to ``b`` is in memory (it will not be
        tested again)."""
        return _spot_key(a) + _spot_key(b) in self._memory

    def _learn(self, a: Point, b: Point, key_a: bytes, key_b: bytes) -> bool:
        """Test the line from ``a`` to ``b`` (keys: :func:`_spot_key` of each) and remember the
        answer, for the line back too when it holds for it."""
        memory = self._memory
        known, mirrored = self._test(a, b)
        if len(memory) + 2 > self.cache_limit:
            # Forget the older half (a dict keeps the order answers were learnt in), not
            # everything: a thousand characters on the move meet most of their pairs again
            # within a few ticks, and a memory emptied at once makes one tick pay for all.
            for old in list(islice(memory, len(memory) // 2 + 1)):
                del memory[old]
        memory[key_a + key_b] = known
        if mirrored:  # the body looking back at the observer asks the same question
            memory[key_b + key_a] = known
        return known

    def _test(self, a: Point, b: Point) -> tuple[bool, bool]:
        """:func:`~warband.world.geometry.segments_intersect` against the walls of the cells
        the padded line passes through, column by column from its left end. Its four cross
        products are written out (the same arithmetic on the same numbers, so the same answer);
        the function itself decides the rare cases a product is within its epsilon of 0
        (touching, collinear). Two kinds of wall are passed over before the whole test, as it
        would call them clear: one whose box misses the box of the line's piece in the column
        (not the whole line's box: a long diagonal line's box holds many walls far from it),
        and one whose two ends lie on one side of the line beyond the epsilon, while neither
        end of the line lies in the wall's padded box (only such an end could touch it then).

        Also says whether the answer holds for the line from ``b`` to ``a``. Mostly it does
        (the walk visits the same walls in the same order, and two of the four products only
        swap), but the other two are computed from the other end and may differ in their last
        bits: the answer is mirrored only when no such product came within a rounding error of
        the epsilon, so a mirrored answer is the one the test from ``b`` would give."""
        ax, ay = a
        bx, by = b
        lx, hx = (ax, bx) if ax <= bx else (bx, ax)
        ly, hy = (ay, by) if ay <= by else (by, ay)
        sx, sy = bx - ax, by - ay
        size, eps, floor = self.cell_size, _EPSILON, math.floor
        # The two products from the other end differ from these by a few units in the last
        # place of their terms, at most about |s| * (|s| + the longest wall): far within this.
        span = abs(sx) + abs(sy)
        doubt = 1e-12 + 1e-13 * span * (span + self._longest)
        low_doubt, high_doubt = eps - doubt, eps + doubt
        mirrored = True
        (qx, qy), (rx, ry) = (a, b) if ax <= bx else (b, a)
        # A nearly vertical line spans a column or two: take its whole height there, which
        # also keeps the slope finite below.
        steep = rx - qx <= _PAD
        slope = 0.0 if steep else (ry - qy) / (rx - qx)
        left, right, low, high = lx - _PAD, hx + _PAD, ly - _PAD, hy + _PAD
        # The piece of the line in a column runs from where it entered (``x``, ``y``) to the
        # column's right border or the line's end; the next piece enters there.
        x, y = qx, qy
        for cx in range(floor((qx - _PAD) / size), floor((rx + _PAD) / size) + 1):
            if not steep:
                end = (cx + 1) * size
                if end > rx:
                    end = rx
                y_end = qy + slope * (end - qx)
                left, right = x - _PAD, end + _PAD
                low, high = (y - _PAD, y_end + _PAD) if y <= y_end else (y_end - _PAD, y + _PAD)
                x, y = end, y_end
            column = self._columns.get(cx)
            if column is None:
                continue
            for cy in range(floor(low / size), floor(high / size) + 1):
                for x0, y0, x1, y1, px, py, qx2, qy2, wx, wy in column.get(cy, ()):
                    # A wall whose box misses the box of the line's piece in this column
                    # cannot touch that piece; where the line meets it, a column holds both.
                    if x0 > right or x1 < left or y0 > high or y1 < low:
                        continue
                    d3 = sx * (py - ay) - sy * (px - ax)
                    d4 = sx * (qy2 - ay) - sy * (qx2 - ax)
                    # Both ends of the wall clearly on one side of the line: the wall is
                    # clear of it, unless an end of the line lies on the wall (the one case
                    # segments_intersect still calls touching; an end outside the wall's
                    # padded box cannot).
                    aside = (d3 > high_doubt and d4 > high_doubt) or (
                        d3 < -high_doubt and d4 < -high_doubt
                    )
                    if (
                        aside
                        and not (x0 <= ax <= x1 and y0 <= ay <= y1)
                        and not (x0 <= bx <= x1 and y0 <= by <= y1)
                    ):
                        continue
                    d1 = wx * (ay - py) - wy * (ax - px)
                    d2 = wx * (by - py) - wy * (bx - px)
                    if (
                        abs(d1) <= eps
                        or abs(d2) <= eps
                        or abs(d3) <= high_doubt
                        or abs(d4) <= high_doubt
                    ):
                        if low_doubt <= abs(d3) <= high_doubt or low_doubt <= abs(d4) <= high_doubt:
                            mirrored = False
                        if abs(d1) <= eps or abs(d2) <= eps or abs(d3) <= eps or abs(d4) <= eps:
                            if geometry.segments_intersect(a, b, (px, py), (qx2, qy2)):
                                return False, mirrored
                        elif (d1 > 0.0) != (d2 > 0.0) and (d3 > 0.0) != (d4 > 0.0):
                            return False, mirrored
                    elif (d1 > 0.0) != (d2 > 0.0) and (d3 > 0.0) != (d4 > 0.0):
                        return False, mirrored
        return True, mirrored


def perceive(
    observers: Sequence[Observer],
    bodies: Sequence[Body],
    walls: SightIndex | Sequence[Segment],
    *,
    batch: bool | None = None,
) -> dict[str, list[Sighting]]:
    """What every observer sees, looking up candidates in strips of bodies sorted by x and
    walls in a :class:`SightIndex`.

    Same contract and same result as :func:`perceive_all_pairs` (the same arithmetic on the
    same numbers, on fewer pairs); ``walls`` may be a prebuilt :class:`SightIndex` (build it
    once per map and keep it: walls do not move, and it remembers answers) or a plain list.
    ``batch`` chooses numpy or Python as in :func:`sight_lines`.
    """
    return {
        observer: [Sighting(s[1], s[3], bodies[s[4]].position, s[0]) for s in seen]
        for observer, seen in sight_lines(observers, bodies, walls, batch=batch).items()
    }


SeenBody: TypeAlias = tuple[float, str, int, str, int]
"""One body an observer sees, as :func:`sight_lines` gives it: ``(distance, body id, order
found, apparent team, index of the body)``; a list of them sorts as sightings do."""


BATCH_PAIRS = 4_000
"""From how many observer-body pairs (observers times bodies) :func:`sight_lines` works out a
tick in numpy (:mod:`~warband.world._sight_batch`) rather than pair by pair in Python: below
it, numpy's fixed costs per call weigh more than the Python they save (counted on bench
world's map: dearer at 40 entities, 1,600 pairs; cheaper at 70, 4,900)."""

BATCH_HEARING_PAIRS = 8_000
"""The same for :func:`hearings` and :func:`heard_numbers`, in listener-noise pairs (about
even at 70 entities, 7,000 pairs; cheaper at 100, 12,000)."""


def _in_numpy(batch: bool | None, pairs: int, threshold: int) -> bool:
    """Whether a call takes the numpy path: as its ``batch`` says, else from ``threshold``
    pairs (:data:`BATCH_PAIRS`, :data:`BATCH_HEARING_PAIRS`)."""
    return batch if batch is not None else pairs >= threshold


def sight_lines(
    observers: Sequence[Observer],
    bodies: Sequence[Body],
    walls: SightIndex | Sequence[Segment],
    *,
    batch: bool | None = None,
) -> dict[str, list[SeenBody]]:
    """:func:`perceive` without building a :class:`Sighting` per pair: a world with a thousand
    characters sees thousands of them a tick and needs only a few of their fields. Every
    observer's list is sorted by ``(distance, id)``, ties in the order found.

    ``batch`` chooses the numpy path (True) or the Python one (False); by default it is numpy
    from :data:`BATCH_PAIRS` pairs. Both give the same answer, bit for bit (and numpy is
    imported only when it is taken)."""
    index = walls if isinstance(walls, SightIndex) else SightIndex(walls)
    if not observers:
        return {}
    if _in_numpy(batch, len(observers) * len(bodies), BATCH_PAIRS):
        from ._sight_batch import sight_lines_batch

        found = sight_lines_batch(observers, bodies, index)
        if found is not None:
            return found
    reach = max(o.senses.view_distance for o in observers)
    strips = _Strips(bodies, max(reach / 4.0, 1.0))
    return {observer.id: _seen_by(_Eye(observer), strips, index) for observer in observers}


class _Strips:
    """Bodies in horizontal strips of one height, each strip sorted by x: the bodies in a box
    are two bisections per strip the box spans."""

    def __init__(self, bodies: Sequence[Body], height: float) -> None:
        self.height = height
        rows: dict[int, list[_Entry]] = {}
        for number, body in enumerate(bodies):
            x, y = body.position
            entry = (
                x,
                y,
                body.id,
                body.team,
                body.cloaked,
                body.disguised,
                body.position,
                _spot_key(body.position),
                number,
            )
            rows.setdefault(math.floor(y / height), []).append(entry)
        self.rows: dict[int, tuple[list[float], list[_Entry]]] = {}
        for row, entries in rows.items():
            entries.sort(key=itemgetter(0))
            self.rows[row] = ([entry[0] for entry in entries], entries)

    def in_box(self, x0: float, y0: float, x1: float, y1: float) -> list[list[_Entry]]:
        """The bodies of the strips the box spans whose x lies in ``[x0, x1]``, by strip."""
        found = []
        for row in range(math.floor(y0 / self.height), math.floor(y1 / self.height) + 1):
            strip = self.rows.get(row)
            if strip is not None:
                xs, entries = strip
                low, high = bisect_left(xs, x0), bisect_right(xs, x1)
                if low < high:
                    found.append(entries[low:high])
        return found


_Entry: TypeAlias = tuple[float, float, str, str, bool, bool, Point, bytes, int]
"""A body in a strip: x, y, id, team, cloaked, disguised, position, its key in a sight index's
memory, index in the bodies given (the fields the hot loop reads, unpacked in one go)."""


def _seen_by(eye: _Eye, strips: _Strips, index: SightIndex) -> list[SeenBody]:
    """The sightings of one observer: :func:`_sighting` and the sight line, written out in
    one loop (the hot loop of a big world: a call per candidate cost more than the test)."""
    x, y, fx, fy, reach, cos_half = eye.x, eye.y, eye.fx, eye.fy, eye.reach, eye.cos_half
    cone, own, team, cloak_reach = not eye.all_around, eye.id, eye.team, eye.cloak_reach
    spot = eye.observer.position
    spot_key = _spot_key(spot)
    hypot, memory, learn = math.hypot, index._memory, index._learn
    found: list[SeenBody] = []
    for strip in strips.in_box(*eye.view_box()):
        for bx, by, body, side, cloaked, disguised, there, there_key, number in strip:
            dx, dy = bx - x, by - y
            d = hypot(dx, dy)
            if d > reach or (cone and d > 0.0 and dx * fx + dy * fy < d * cos_half - 1e-9):
                continue
            if body == own or (cloaked and side != team and d > cloak_reach):
                continue
            sight = memory.get(spot_key + there_key)
            if sight is None:
                sight = learn(spot, there, spot_key, there_key)
            if sight:
                seen_as = team if disguised and side != team else side
                found.append((d, body, len(found), seen_as, number))
    found.sort()
    return found


def hear(observer: Observer, noises: Iterable[Noise]) -> list[Hearing]:
    """The noises ``observer`` hears (through walls), nearest first; its own noises excluded."""
    heard = []
    for noise in noises:
        if noise.source == observer.id:
            continue
        d = distance(observer.position, noise.position)
        if d <= observer.senses.hearing_radius * noise.loudness:
            heard.append(Hearing(noise.kind, noise.position, noise.source, d))
    return sorted(heard, key=lambda h: (h.distance, h.source, h.kind))


def hear_all(
    observers: Sequence[Observer], noises: Sequence[Noise], *, batch: bool | None = None
) -> dict[str, list[Hearing]]:
    """What every observer hears; the same answer as :func:`hear` per observer, but noises are
    looked up in strips per loudness, so many listeners and many faint noises (footsteps) stay
    cheap. ``batch`` chooses numpy or Python as in :func:`hearings`."""
    return {
        listener: [Hearing(kind, noises[i].position, source, d) for d, source, kind, i in heard]
        for listener, heard in hearings(observers, noises, batch=batch).items()
    }


HeardNoise: TypeAlias = tuple[float, str, str, int]
"""One noise an observer hears, as :func:`hearings` gives it: ``(distance, source, kind, index
of the noise)``; a list of them sorts as :func:`hear` sorts."""


def hearings(
    observers: Sequence[Observer], noises: Sequence[Noise], *, batch: bool | None = None
) -> dict[str, list[HeardNoise]]:
    """:func:`hear_all` without building a :class:`Hearing` per pair: for every observer, the
    noises it hears in :func:`hear`'s order (by distance, source and kind, ties in the order
    of ``noises``).

    ``batch`` chooses the numpy path (True) or the Python one (False), as for
    :func:`sight_lines` (by default numpy from :data:`BATCH_HEARING_PAIRS` listener-noise
    pairs); both give the same answer, bit for bit."""
    if not observers:
        return {}
    if not noises:
        return {o.id: [] for o in observers}
    if _in_numpy(batch, len(observers) * len(noises), BATCH_HEARING_PAIRS):
        from ._sight_batch import hearings_batch

        found = hearings_batch(observers, noises)
        if found is not None:
            return found
    hearing = max(o.senses.hearing_radius for o in observers)
    by_loudness: dict[float, list[tuple[float, float, str, str, int]]] = {}
    for number, noise in enumerate(noises):
        x, y = noise.position
        entry = (x, y, noise.source, noise.kind, number)
        by_loudness.setdefault(noise.loudness, []).append(entry)
    groups = [
        (loudness, _NoiseStrips(entries, max(hearing * loudness, 1.0)))
        for loudness, entries in by_loudness.items()
    ]
    return {observer.id: _heard_by(observer, groups) for observer in observers}


def heard_numbers(
    observers: Sequence[Observer], noises: Sequence[Noise], *, batch: bool | None = None
) -> dict[str, list[int]]:
    """:func:`hearings` with the noises' indices alone (what a world's percepts are made of):
    for every observer, the index of each noise it hears, in :func:`hear`'s order."""
    if observers and noises and _in_numpy(batch, len(observers) * len(noises), BATCH_HEARING_PAIRS):
        from ._sight_batch import heard_numbers_batch

        found = heard_numbers_batch(observers, noises)
        if found is not None:
            return found
    return {
        listener: [h[3] for h in heard]
        for listener, heard in hearings(observers, noises, batch=False).items()
    }


class _NoiseStrips:
    """The noises of one loudness in horizontal strips as high as the farthest they carry,
    each strip sorted by x: the noises near a listener are two bisections in two or three
    strips."""

    def __init__(self, entries: list[tuple[float, float, str, str, int]], height: float) -> None:
        self.height = height
        rows: dict[int, list[tuple[float, float, str, str, int]]] = {}
        for entry in entries:
            rows.setdefault(math.floor(entry[1] / height), []).append(entry)
        self.rows: dict[int, tuple[list[float], list[tuple[float, float, str, str, int]]]] = {}
        for row, found in rows.items():
            found.sort(key=itemgetter(0))
            self.rows[row] = ([entry[0] for entry in found], found)


def _heard_by(observer: Observer, groups: list[tuple[float, _NoiseStrips]]) -> list[HeardNoise]:
    """:func:`hear` on the noises of the strips around the observer, loudness by loudness."""
    (x, y), own, radius = observer.position, observer.id, observer.senses.hearing_radius
    hypot, floor = math.hypot, math.floor
    heard: list[HeardNoise] = []
    for loudness, strips in groups:
        reach = radius * loudness
        wide = reach + _PAD  # a rounding error must not leave out the last strip
        height, rows = strips.height, strips.rows
        for row in range(floor((y - wide) / height), floor((y + wide) / height) + 1):
            strip = rows.get(row)
            if strip is None:
                continue
            xs, entries = strip
            for nx, ny, source, kind, number in entries[
                bisect_left(xs, x - wide) : bisect_right(xs, x + wide)
            ]:
                d = hypot(nx - x, ny - y)
                if d <= reach and source != own:
                    heard.append((d, source, kind, number))
    heard.sort()  # as hear() sorts, (distance, source, kind), ties in the order given
    return heard
