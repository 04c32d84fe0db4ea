"""Who sees whom for a whole tick at once, in numpy: :func:`~warband.world.perception.sight_lines`
for a big world, with the same answer bit for bit.

The plain path (:func:`~warband.world.perception._seen_by`) pays Python's price per candidate
pair and per wall looked at: some 2,800 instructions a candidate and 34,000 a sight line tested
in a 1,000-entity world. Here every step runs once over all the pairs of the tick:

1. the candidates: for every observer, the bodies in the strips its view box spans (the same
   strips and boxes as the plain path, searched for all observers in one go);
2. distance, cone, cloak and self, with the same float64 operations as the plain predicate; the
   one operation numpy does not repeat bit for bit is the distance (``math.hypot`` against a
   square root of the sum of squares, both within 1.5 units in the last place of the true
   distance), so a pair whose distance or cone test lies within ``1e-12 * (1 + d)`` of its
   border, where those last bits could matter, is decided by the plain predicate in Python;
3. the sight memory, read for every surviving pair by its key (the same bytes, made by numpy);
4. the lines not in memory: every wall in the grid cells of a line's box (a superset of the
   walls that can touch it) through the four cross products of
   :func:`~warband.world.geometry.segments_intersect`, the same operations on the same numbers,
   so the same answer; remembered as the plain path remembers them, mirrored when the plain
   test's own rule says the line back has the same answer;
5. the sightings of each observer: the distance of a body seen is ``math.hypot``'s (mapped in C
   over the pairs seen), sorted by distance and id, ties in the order found.

numpy is imported here only: this module is loaded by the world when a tick is big enough to
pay for it, never by ``import warband`` nor by an agent's process.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias
from weakref import WeakKeyDictionary

import numpy as np
import numpy.typing as npt

from .geometry import _EPSILON

if TYPE_CHECKING:
    from .perception import Body, HeardNoise, Noise, Observer, SeenBody, Senses, SightIndex

Floats: TypeAlias = npt.NDArray[np.float64]
"""A float64 array: coordinates, distances, products."""
Ints: TypeAlias = npt.NDArray[np.int64]
"""An int64 array: indices, cells, codes."""
Bools: TypeAlias = npt.NDArray[np.bool_]
"""A boolean mask over pairs or lines."""

_PAD = 1e-6
"""As :data:`~warband.world.perception._PAD`: the padding of wall boxes and line cells."""

_BORDER = 1e-12
"""How near a border (relative, plus as much absolute) a numpy distance or cone test is left to
the plain predicate: some ten thousand times the two distances' largest difference."""

_LARGEST = 1e100
"""Coordinates beyond this (or not finite) go to the plain path: squares would overflow."""


def sight_lines_batch(
    observers: Sequence[Observer], bodies: Sequence[Body], index: SightIndex
) -> dict[str, list[SeenBody]] | None:
    """The answer of :func:`~warband.world.perception.sight_lines` for these observers and
    bodies, or None when a coordinate is too large for the numpy path (the caller then takes
    the plain one). ``observers`` must not be empty."""
    body = _Bodies(bodies)
    obs = _Observers(observers, body)
    if not (_fits(obs.x, obs.y) and _fits(body.x, body.y)):
        return None
    reach = max(o.senses.view_distance for o in observers)
    # The plain path's strips, so that the pairs come in its order found.
    strips = _Strips(body.x, body.y, max(reach / 4.0, 1.0))
    who, place = strips.in_boxes(*_view_boxes(obs))
    number = strips.order.take(place)
    dx = body.x.take(number) - obs.x.take(who)
    dy = body.y.take(number) - obs.y.take(who)
    keep = _visible_pairs(obs, body, who, number, dx, dy, observers, bodies)
    who, number, dx, dy = who[keep], number[keep], dx[keep], dy[keep]
    clear = _clear_lines(index, obs, body, who, number)
    who, number, dx, dy = who[clear], number[clear], dx[clear], dy[clear]
    return _sightings(observers, bodies, obs, body, who, number, dx, dy)


def _fits(xs: Floats, ys: Floats) -> bool:
    return bool(np.all(np.abs(xs) <= _LARGEST) and np.all(np.abs(ys) <= _LARGEST))


# Python values into arrays by np.fromiter with the count given: a C loop that takes each
# value as it comes (np.array inspects every element first; the array module parses each).


def _floats(values: Iterable[float], count: int = -1) -> Floats:
    return np.fromiter(values, np.float64, len(values) if isinstance(values, list) else count)


def _ints(values: Iterable[int], count: int = -1) -> Ints:
    return np.fromiter(values, np.int64, len(values) if isinstance(values, list) else count)


def _flags(values: Iterable[bool], count: int = -1) -> Bools:
    return np.fromiter(values, np.bool_, len(values) if isinstance(values, list) else count)


class _Bodies:
    """The bodies as arrays, by their index; ``codes`` numbers their ids and teams (one
    numbering for both, shared with the observers), ``id_rank`` is an id's place among them
    in Python's order of strings."""

    __slots__ = ("cloaked", "code", "codes", "disguised", "id_rank", "team", "x", "y")

    def __init__(self, bodies: Sequence[Body]) -> None:
        codes: dict[str, int] = {}
        number = codes.setdefault
        self.codes = codes
        self.x: Floats = _floats([b.position[0] for b in bodies])
        self.y: Floats = _floats([b.position[1] for b in bodies])
        ids = [b.id for b in bodies]
        self.code: Ints = _ints([number(i, len(codes)) for i in ids])
        self.team: Ints = _ints([number(b.team, len(codes)) for b in bodies])
        self.cloaked: Bools = _flags([b.cloaked for b in bodies])
        self.disguised: Bools = _flags([b.disguised for b in bodies])
        self.id_rank: Ints = _ranks(ids)


class _Observers:
    """The observers as arrays, by their index: where, facing, the sizes of their senses, team
    and own id (codes of the bodies' numbering; an id no body has gets a code of its own)."""

    __slots__ = (
        "all_around",
        "cloak_reach",
        "cos_half",
        "fx",
        "fy",
        "half",
        "inside",
        "own",
        "reach",
        "sin_half",
        "team",
        "x",
        "y",
    )

    def __init__(self, observers: Sequence[Observer], body: _Bodies) -> None:
        number = body.codes.setdefault
        codes = body.codes
        self.x: Floats = _floats([o.position[0] for o in observers])
        self.y: Floats = _floats([o.position[1] for o in observers])
        headings = [o.heading for o in observers]
        # The plain path's _Eye, operation for operation (math's cos and sin, not numpy's).
        self.fx: Floats = _floats(map(math.cos, headings), len(headings))
        self.fy: Floats = _floats(map(math.sin, headings), len(headings))
        self.own: Ints = _ints([number(o.id, len(codes)) for o in observers])
        self.team: Ints = _ints([number(o.team, len(codes)) for o in observers])
        # By identity: hashing a dataclass is a Python call, and a world shares a few senses.
        kinds: dict[int, int] = {}
        senses: list[Senses] = []
        for o in observers:
            if kinds.setdefault(id(o.senses), len(kinds)) == len(senses):
                senses.append(o.senses)
        kind = _ints([kinds[id(o.senses)] for o in observers])
        sizes = np.array([_sizes(s) for s in senses], np.float64).reshape(-1, 6).take(kind, axis=0)
        self.half, self.cos_half, self.sin_half = sizes[:, 0], sizes[:, 1], sizes[:, 2]
        self.inside, self.reach, self.cloak_reach = sizes[:, 3], sizes[:, 4], sizes[:, 5]
        self.all_around: Bools = self.half >= math.pi


def _sizes(senses: Senses) -> tuple[float, float, float, float, float, float]:
    """What ``_Eye`` works out from the senses: half the view angle, its cosine and sine, the
    cosine of a hair more (``view_box``'s), the reach and the reach for a cloaked body."""
    half = senses.view_angle / 2.0
    return (
        half,
        math.cos(half),
        math.sin(half),
        math.cos(half + 1e-6) if half + 1e-6 < math.pi else -1.0,
        senses.view_distance,
        min(senses.view_distance, senses.cloak_reveal_distance),
    )


def _ranges(starts: Ints, counts: Ints) -> tuple[Ints, Ints]:
    """Every element of the ranges ``[start, start + count)``: which range it is in, and it."""
    owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    return owner, np.arange(owner.size, dtype=np.int64) + shift


def _view_boxes(obs: _Observers) -> tuple[Floats, Floats, Floats, Floats]:
    """``_Eye.view_box`` of every observer, the same formula: a box holding its view cone."""
    pad = 1e-3 * (1.0 + obs.reach)
    reach = obs.reach + pad
    fx, fy, c, s = obs.fx, obs.fy, obs.cos_half, obs.sin_half
    e0, e1 = (fx * c + fy * s) * reach, (fy * c - fx * s) * reach
    f0, f1 = (fx * c - fy * s) * reach, (fy * c + fx * s) * reach
    x0 = np.minimum(np.minimum(0.0, e0), f0)
    x1 = np.maximum(np.maximum(0.0, e0), f0)
    y0 = np.minimum(np.minimum(0.0, e1), f1)
    y1 = np.maximum(np.maximum(0.0, e1), f1)
    inside = obs.inside
    x1 = np.where(fx >= inside, reach, x1)
    x0 = np.where(-fx >= inside, -reach, x0)
    y1 = np.where(fy >= inside, reach, y1)
    y0 = np.where(-fy >= inside, -reach, y0)
    around, x, y = obs.all_around, obs.x, obs.y
    return (
        np.where(around, x - reach, x + x0 - pad),
        np.where(around, y - reach, y + y0 - pad),
        np.where(around, x + reach, x + x1 + pad),
        np.where(around, y + reach, y + y1 + pad),
    )


class _Strips:
    """Points in horizontal strips of one height, each strip by x (ties in the points'
    order), searched for all boxes at once: the plain path's ``_Strips`` and ``_NoiseStrips``.

    ``order`` is the number of the point at each place, strip by strip. The strips are one
    sorted array of keys: a point's strip's number times a width larger than the points'
    spread in x, plus its x less the smallest x. Rounding is monotone, so the keys keep the
    order of x within a strip, and strips never mix."""

    __slots__ = ("height", "keys", "left", "low", "order", "rows", "width")

    def __init__(self, xs: Floats, ys: Floats, height: float) -> None:
        self.height = height
        row = np.floor(ys / height).astype(np.int64)
        self.order: Ints = np.lexsort((xs, row))  # stable: by number among equal places
        self.low, self.rows = int(row.min()), int(row.max()) - int(row.min()) + 1
        self.left = float(xs.min())
        self.width = float(math.floor(float(xs.max()) - self.left) + 2)
        self.keys: Floats = (row[self.order] - self.low) * self.width + (xs[self.order] - self.left)

    def in_boxes(self, x0: Floats, y0: Floats, x1: Floats, y1: Floats) -> tuple[Ints, Ints]:
        """Every pair (box, place) of a point in a strip the box spans with its x in the
        box's (and perhaps a few more, never fewer), box by box, strip by strip, by x."""
        height, low = self.height, self.low
        first = np.maximum(np.floor(y0 / height).astype(np.int64) - low, 0)
        last = np.minimum(np.floor(y1 / height).astype(np.int64) - low, self.rows - 1)
        box, strip = _ranges(first, np.maximum(last - first + 1, 0))
        base = strip * self.width
        top = self.width - 1.0
        lo = np.searchsorted(self.keys, base + np.clip(x0.take(box) - self.left, 0.0, top), "left")
        hi = np.searchsorted(
            self.keys, base + np.clip(x1.take(box) - self.left, -0.5, top), "right"
        )
        owner, place = _ranges(lo, np.maximum(hi - lo, 0))
        return box.take(owner), place


def _visible_pairs(
    obs: _Observers,
    body: _Bodies,
    who: Ints,
    number: Ints,
    dx: Floats,
    dy: Floats,
    observers: Sequence[Observer],
    bodies: Sequence[Body],
) -> Bools:
    """Which pairs pass the plain path's range, cone, self and cloak tests (walls aside)."""
    d = np.sqrt(dx * dx + dy * dy)
    border = _BORDER * (1.0 + d)
    reach, cloak = obs.reach.take(who), obs.cloak_reach.take(who)
    dot = dx * obs.fx.take(who) + dy * obs.fy.take(who)  # the plain path's operations, in its order
    edge = d * obs.cos_half.take(who) - 1e-9
    cone = ~obs.all_around.take(who) & ((dx != 0.0) | (dy != 0.0))
    hidden = body.cloaked.take(number) & (body.team.take(number) != obs.team.take(who))
    own = body.code.take(number) == obs.own.take(who)
    out = (d > reach + border) | (cone & (dot < edge - border)) | (hidden & (d > cloak + border))
    sure = (
        (d < reach - border)
        & (~cone | (dot > edge + border))
        & (~hidden | (d < cloak - border))
        & ~own
    )
    keep: Bools = sure
    doubtful = np.flatnonzero(~sure & ~out & ~own)
    if doubtful.size:
        keep = sure.copy()
        for pair in doubtful.tolist():
            o = int(who[pair])
            keep[pair] = _plain_visible(observers[o], obs, o, bodies[int(number[pair])])
    return keep


def _plain_visible(observer: Observer, obs: _Observers, o: int, body: Body) -> bool:
    """The plain path's test of one pair (``_seen_by``), walls aside: for pairs near a border."""
    dx, dy = body.position[0] - float(obs.x[o]), body.position[1] - float(obs.y[o])
    d = math.hypot(dx, dy)
    fx, fy, cos_half = float(obs.fx[o]), float(obs.fy[o]), float(obs.cos_half[o])
    if d > float(obs.reach[o]):
        return False
    if not bool(obs.all_around[o]) and d > 0.0 and dx * fx + dy * fy < d * cos_half - 1e-9:
        return False
    if body.id == observer.id:
        return False
    return not (body.cloaked and body.team != observer.team and d > float(obs.cloak_reach[o]))


def _clear_lines(
    index: SightIndex, obs: _Observers, body: _Bodies, who: Ints, number: Ints
) -> Bools:
    """Whether each pair's sight line is clear: from the index's batch memory, else tested here
    (and remembered)."""
    memory = _memory(index)
    memory.tidy()
    start, end = memory.spots(obs.x, obs.y)[who], memory.spots(body.x, body.y)[number]
    keys = (start << 32) | end
    known = memory.recall(keys)
    new = np.flatnonzero(known == 2)
    if new.size:
        # One test per line, however many pairs ask it (bodies sharing a spot).
        learnt, first, again = np.unique(keys.take(new), return_index=True, return_inverse=True)
        pick = new.take(first)
        lines = np.empty((pick.size, 4), np.float64)
        lines[:, 0], lines[:, 1] = obs.x.take(who.take(pick)), obs.y.take(who.take(pick))
        lines[:, 2], lines[:, 3] = body.x.take(number.take(pick)), body.y.take(number.take(pick))
        clear, mirrored = _test_lines(memory.grid, lines)
        memory.tested += pick.size
        known[new] = clear[again.reshape(-1)]
        back = (learnt[mirrored] & 0xFFFFFFFF) << 32 | (learnt[mirrored] >> 32)
        memory.learn(np.concatenate([learnt, back]), np.concatenate([clear, clear[mirrored]]))
    found: Bools = known == 1
    return found


class _LineMemory:
    """The batch path's memory of sight lines, kept beside its index (walls never move).

    The plain path keys a line by its ends' bytes in a dict; looking up tens of thousands of
    them a tick costs a dict probe each, missing the cache in a dict of hundreds of thousands
    of entries. Here a spot (its coordinates' bytes) is numbered once, a line is the pair of
    numbers in one int64, and the lines known are one sorted array: a tick's lookups are one
    binary search over all its pairs. At ``cache_limit`` lines the older half is forgotten,
    as in the index (:meth:`learn`), and the spots no line uses once they outnumber that
    (:meth:`tidy`)."""

    __slots__ = ("answers", "born", "grid", "keys", "lessons", "limit", "numbers", "tested")

    def __init__(self, index: SightIndex) -> None:
        self.grid = _WallGrid(index)
        self.limit = index.cache_limit
        self.numbers: dict[bytes, int] = {}
        """A spot's coordinates' bytes (``perception._spot_key``) -> its number."""
        self.keys: Ints = np.zeros(0, np.int64)
        """The lines known, sorted: the number of their start << 32 | the number of their end."""
        self.answers: Bools = np.zeros(0, np.bool_)
        self.born: Ints = np.zeros(0, np.int64)
        """When each line was learnt, in :meth:`learn` calls."""
        self.lessons = 0
        self.tested = 0
        """Lines tested against the walls so far (for the benchmarks' counts)."""

    def spots(self, xs: Floats, ys: Floats) -> Ints:
        """The number of each spot ``(xs[i], ys[i])``, new ones numbered on the way."""
        points = np.empty((xs.size, 2), np.float64)
        points[:, 0], points[:, 1] = xs, ys
        numbers = self.numbers
        keys: list[bytes] = points.view("V16").ravel().tolist()
        found = [numbers.setdefault(key, len(numbers)) for key in keys]
        return _ints(found)

    def recall(self, keys: Ints) -> npt.NDArray[np.int8]:
        """1 for a line known clear, 0 known blocked, 2 unknown."""
        known = np.full(keys.size, 2, np.int8)
        if self.keys.size:
            place = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
            hit = self.keys.take(place) == keys
            known[hit] = self.answers[place[hit]]
        return known

    def learn(self, keys: Ints, answers: Bools) -> None:
        """Remember new lines (unknown so far; a line and its mirror may both come): the older
        half of the memory is forgotten first when they would not fit (at least as many as
        come), and a tick bringing more than the whole memory holds keeps that many."""
        keys, first = np.unique(keys, return_index=True)
        answers = answers.take(first)
        if keys.size > self.limit:
            keys, answers = keys[: self.limit], answers[: self.limit]
        size = self.keys.size
        if size + keys.size > self.limit:
            drop = min(size, max(size // 2 + 1, size + keys.size - self.limit))
            keep = np.sort(np.argsort(self.born, kind="stable")[drop:])
            self.keys, self.answers = self.keys.take(keep), self.answers.take(keep)
            self.born = self.born.take(keep)
        place = np.searchsorted(self.keys, keys)
        self.keys = np.insert(self.keys, place, keys)
        self.answers = np.insert(self.answers, place, answers)
        self.born = np.insert(self.born, place, self.lessons)
        self.lessons += 1

    def tidy(self) -> None:
        """Before a tick numbers its spots: when the spots outnumber the lines the memory may
        hold, forget the spots no line remembered uses, and number the rest again."""
        if len(self.numbers) <= self.limit:
            return
        keys = self.keys
        used, compact = np.unique(
            np.concatenate([keys >> 32, keys & 0xFFFFFFFF]), return_inverse=True
        )
        renumber = dict(zip(used.tolist(), range(used.size), strict=True))
        self.numbers = {spot: renumber[n] for spot, n in self.numbers.items() if n in renumber}
        halves = compact.reshape(2, -1)
        keys = (halves[0] << 32) | halves[1]
        order = np.argsort(keys)
        self.keys, self.answers = keys.take(order), self.answers.take(order)
        self.born = self.born.take(order)


_MEMORIES: WeakKeyDictionary[SightIndex, _LineMemory] = WeakKeyDictionary()
"""Each index's batch memory and walls as arrays (an index never changes its walls)."""


def _memory(index: SightIndex) -> _LineMemory:
    found = _MEMORIES.get(index)
    if found is None:
        found = _MEMORIES[index] = _LineMemory(index)
    return found


def lines_tested(index: SightIndex) -> int:
    """How many sight lines the numpy path has tested against ``index``'s walls (not answered
    from its memory): what the benchmarks count."""
    found = _MEMORIES.get(index)
    return 0 if found is None else found.tested


class _WallGrid:
    """The walls of an index in cells, as arrays of a row per (cell, wall) pair, cell by cell:
    ``box`` (a wall's padded box) and ``ends`` (its ends ``p`` and ``q``, and ``q - p``); the
    rows of cell ``(cx, cy)`` are ``start[c]`` to ``start[c + 1]``, ``c = (cx - cx0) * rows + cy
    - cy0``.
    A wall is in every cell its padded box meets, as in the index."""

    __slots__ = ("box", "ends", "first", "longest", "rows", "size", "span", "start")

    def __init__(self, index: SightIndex) -> None:
        self.size = size = index.cell_size
        self.longest = index._longest
        rows_of = []
        placed = []
        for (x0, y0, x1, y1), (p, q) in zip(index._boxes, index.walls, strict=True):
            row = (x0, y0, x1, y1, p[0], p[1], q[0], q[1], q[0] - p[0], q[1] - p[1])
            for column in range(math.floor(x0 / size), math.floor(x1 / size) + 1):
                for line in range(math.floor(y0 / size), math.floor(y1 / size) + 1):
                    placed.append((column, line))
                    rows_of.append(row)
        if not placed:  # no walls: one empty cell
            placed = [(0, 0)]
        cx, cy = (np.array(c, np.int64) for c in zip(*placed, strict=True))
        self.first = (int(cx.min()), int(cy.min()))
        self.span = (int(cx.max()) - self.first[0] + 1, int(cy.max()) - self.first[1] + 1)
        self.rows = self.span[1]
        cell = (cx - self.first[0]) * self.rows + (cy - self.first[1])
        by_cell = np.argsort(cell, kind="stable")
        data = np.array(rows_of, np.float64).reshape(-1, 10)[by_cell[: len(rows_of)]]
        self.box: Floats = np.ascontiguousarray(data[:, :4])
        self.ends: Floats = np.ascontiguousarray(data[:, 4:])
        cells = self.span[0] * self.rows
        self.start: Ints = np.searchsorted(
            cell[by_cell][: len(rows_of)], np.arange(cells + 1, dtype=np.int64)
        ).astype(np.int64)


def _test_lines(grid: _WallGrid, lines: Floats) -> tuple[Bools, Bools]:
    """Whether each line ``(ax, ay, bx, by)`` is clear of every wall, and whether that answer
    holds for the line back (the index's rule: see ``SightIndex._test``).

    The walls looked at are those of the cells the padded line passes through, column by
    column, as in the index's walk, and of those only the walls whose padded box meets the box
    of the line's piece in that column. A wall :func:`~warband.world.geometry.segments_intersect`
    calls touching has a point within 1e-6 of a point of the line (a crossing is on both; a
    touching end lies within the test's epsilon of the other's line and box, which for a line
    at least 1e-2 long is within 4e-7 of it), so its padded box meets that piece's box. A
    line shorter than that, or nearly vertical, takes its whole box in every column. On those
    walls, the test's four cross products with its own operations, and where one of them lies
    within its epsilon of 0 (touching, collinear), the rest of the test (:func:`_touching`)."""
    count = lines.shape[0]
    ax, ay, bx, by = lines[:, 0], lines[:, 1], lines[:, 2], lines[:, 3]
    flip = bx < ax
    qx, qy = np.where(flip, bx, ax), np.where(flip, by, ay)
    rx, ry = np.where(flip, ax, bx), np.where(flip, ay, by)
    low_y, high_y = np.minimum(ay, by), np.maximum(ay, by)
    run = rx - qx
    whole = (run <= _PAD) | (run + np.abs(ry - qy) < 1e-2)
    slope = (ry - qy) / np.where(whole, 1.0, run)
    size, (cx0, cy0), (columns, rows) = grid.size, grid.first, grid.span
    c0 = np.maximum(np.floor((qx - _PAD) / size).astype(np.int64), cx0)
    c1 = np.minimum(np.floor((rx + _PAD) / size).astype(np.int64), cx0 + columns - 1)
    line, column = _ranges(c0, np.maximum(c1 - c0 + 1, 0))
    # The piece of each line in each of its columns, and that piece's box, padded.
    lq, lr = qx.take(line), rx.take(line)
    x_from = np.maximum(lq, column * size)
    x_to = np.minimum(lr, (column + 1) * size)
    y_from = qy.take(line) + slope.take(line) * (x_from - lq)
    y_to = qy.take(line) + slope.take(line) * (x_to - lq)
    wide = whole.take(line)
    left = np.where(wide, lq, x_from) - _PAD
    right = np.where(wide, lr, x_to) + _PAD
    low = np.where(wide, low_y.take(line), np.minimum(y_from, y_to)) - _PAD
    high = np.where(wide, high_y.take(line), np.maximum(y_from, y_to)) + _PAD
    r0 = np.maximum(np.floor(low / size).astype(np.int64), cy0)
    r1 = np.minimum(np.floor(high / size).astype(np.int64), cy0 + rows - 1)
    piece, row = _ranges(r0, np.maximum(r1 - r0 + 1, 0))
    cell = (column.take(piece) - cx0) * rows + (row - cy0)
    first = grid.start.take(cell)
    walls = grid.start.take(cell + 1) - first
    _, place = _ranges(first, walls)
    # Each wall of a cell against the box of the piece there (repeated: cheaper than gathered);
    # the ends of the walls that meet it are gathered next.
    box = grid.box.take(place, axis=0)
    meets = ~(
        (box[:, 0] > np.repeat(right.take(piece), walls))
        | (box[:, 2] < np.repeat(left.take(piece), walls))
        | (box[:, 1] > np.repeat(high.take(piece), walls))
        | (box[:, 3] < np.repeat(low.take(piece), walls))
    )
    line = np.repeat(line.take(piece), walls).compress(meets)
    ends = grid.ends.take(place.compress(meets), axis=0)
    px, py, wqx, wqy, wx, wy = (ends[:, k] for k in range(6))
    a_x, a_y, b_x, b_y = ax.take(line), ay.take(line), bx.take(line), by.take(line)
    sx, sy = b_x - a_x, b_y - a_y
    d1 = wx * (a_y - py) - wy * (a_x - px)
    d2 = wx * (b_y - py) - wy * (b_x - px)
    d3 = sx * (py - a_y) - sy * (px - a_x)
    d4 = sx * (wqy - a_y) - sy * (wqx - a_x)
    eps = _EPSILON
    hit = (((d1 > eps) & (d2 < -eps)) | ((d1 < -eps) & (d2 > eps))) & (
        ((d3 > eps) & (d4 < -eps)) | ((d3 < -eps) & (d4 > eps))
    )
    a3, a4 = np.abs(d3), np.abs(d4)
    near = np.flatnonzero((np.abs(d1) <= eps) | (np.abs(d2) <= eps) | (a3 <= eps) | (a4 <= eps))
    if near.size:  # touching or collinear: the rest of the test, on these pairs alone
        hit[near] = _touching(
            (a_x.take(near), a_y.take(near), b_x.take(near), b_y.take(near)),
            (px.take(near), py.take(near), wqx.take(near), wqy.take(near)),
            (d1.take(near), d2.take(near), d3.take(near), d4.take(near)),
        )
    # The line back computes d3 and d4 from its other end: the same answer unless one of them
    # lies within a rounding error of the epsilon (the doubt of SightIndex._test).
    span = np.abs(sx) + np.abs(sy)
    doubt = 1e-12 + 1e-13 * span * (span + grid.longest)
    low_doubt, high_doubt = eps - doubt, eps + doubt
    clean = ~(((low_doubt <= a3) & (a3 <= high_doubt)) | ((low_doubt <= a4) & (a4 <= high_doubt)))
    blocked = np.zeros(count, np.bool_)
    blocked[line[hit]] = True
    unclean = np.zeros(count, np.bool_)
    unclean[line[~clean]] = True
    firm = np.zeros(count, np.bool_)
    firm[line[hit & clean]] = True
    return ~blocked, ~unclean | firm


def _sightings(
    observers: Sequence[Observer],
    bodies: Sequence[Body],
    obs: _Observers,
    body: _Bodies,
    who: Ints,
    number: Ints,
    dx: Floats,
    dy: Floats,
) -> dict[str, list[SeenBody]]:
    """Every observer's :data:`~warband.world.perception.SeenBody` list from its pairs seen
    (in the order found): the plain path's tuples, sorted as it sorts them."""
    distances = _floats(map(math.hypot, dx.tolist(), dy.tolist()), dx.size)
    group = np.searchsorted(who, np.arange(len(observers) + 1, dtype=np.int64))
    found = np.arange(who.size, dtype=np.int64) - group.take(who)
    team, looker = body.team.take(number), obs.team.take(who)
    seen_as = np.where(body.disguised.take(number) & (team != looker), looker, team)
    by = np.lexsort((distances, _small(who, len(observers))))
    # Ties in distance (bodies sharing a spot) go by id, then by the order found.
    looker, ranked = who.take(by), distances.take(by)
    tied = (looker[1:] == looker[:-1]) & (ranked[1:] == ranked[:-1])
    if tied.any():
        places = _runs(tied)
        pick = by.take(places)
        run = np.cumsum(~np.concatenate([[False], tied])).take(places)
        after = body.id_rank.take(number.take(pick)) * (who.size + 1) + found.take(pick)
        by[places] = pick.take(np.lexsort((after, run)))
    names = list(body.codes)
    numbers = number.take(by).tolist()
    seen = list(
        zip(
            distances.take(by).tolist(),
            map([b.id for b in bodies].__getitem__, numbers),
            found.take(by).tolist(),
            map(names.__getitem__, seen_as.take(by).tolist()),
            numbers,
            strict=True,
        )
    )
    edges = group.tolist()
    return {o.id: seen[edges[i] : edges[i + 1]] for i, o in enumerate(observers)}


def _touching(
    line: tuple[Floats, Floats, Floats, Floats],
    wall: tuple[Floats, Floats, Floats, Floats],
    products: tuple[Floats, Floats, Floats, Floats],
) -> Bools:
    """The second half of :func:`~warband.world.geometry.segments_intersect`: an end of one
    segment within the epsilon of the other's line and inside its box widened by the epsilon
    (``_on_segment``), the same comparisons on the same numbers."""
    ax, ay, bx, by = line
    px, py, qx, qy = wall
    d1, d2, d3, d4 = products
    eps = _EPSILON

    def on(x0: Floats, y0: Floats, x1: Floats, y1: Floats, x: Floats, y: Floats) -> Bools:
        return (
            (np.minimum(x0, x1) - eps <= x)
            & (x <= np.maximum(x0, x1) + eps)
            & (np.minimum(y0, y1) - eps <= y)
            & (y <= np.maximum(y0, y1) + eps)
        )

    return (
        ((np.abs(d1) <= eps) & on(px, py, qx, qy, ax, ay))
        | ((np.abs(d2) <= eps) & on(px, py, qx, qy, bx, by))
        | ((np.abs(d3) <= eps) & on(ax, ay, bx, by, px, py))
        | ((np.abs(d4) <= eps) & on(ax, ay, bx, by, qx, qy))
    )


def hearings_batch(
    observers: Sequence[Observer], noises: Sequence[Noise]
) -> dict[str, list[HeardNoise]] | None:
    """The answer of :func:`~warband.world.perception.hearings`, or None when a coordinate is
    too large for the numpy path. ``observers`` and ``noises`` must not be empty."""
    heard = _heard(observers, noises)
    if heard is None:
        return None
    edges, which, dx, dy = heard
    numbers = which.tolist()
    distances = _floats(map(math.hypot, dx.tolist(), dy.tolist()), dx.size)
    sources, kinds = [n.source for n in noises], [n.kind for n in noises]
    found = list(
        zip(
            distances.tolist(),
            map(sources.__getitem__, numbers),
            map(kinds.__getitem__, numbers),
            numbers,
            strict=True,
        )
    )
    return {o.id: found[edges[i] : edges[i + 1]] for i, o in enumerate(observers)}


def heard_numbers_batch(
    observers: Sequence[Observer], noises: Sequence[Noise]
) -> dict[str, list[int]] | None:
    """The answer of :func:`~warband.world.perception.heard_numbers`, or None when a
    coordinate is too large for the numpy path. ``observers`` and ``noises`` must not be
    empty."""
    heard = _heard(observers, noises)
    if heard is None:
        return None
    edges, which, _, _ = heard
    numbers = which.tolist()
    return {o.id: numbers[edges[i] : edges[i + 1]] for i, o in enumerate(observers)}


def _heard(
    observers: Sequence[Observer], noises: Sequence[Noise]
) -> tuple[list[int], Ints, Floats, Floats] | None:
    """Every listener's noises heard in :func:`~warband.world.perception.hear`'s order: the
    noises' numbers and their offsets from the listener (``dx``, ``dy``), listener after
    listener (listener ``i``'s from ``edges[i]`` to ``edges[i + 1]``); None when a coordinate
    is too large for numpy.

    The candidates are the noises of each loudness in the strips the plain path makes for that
    loudness, inside the square around a listener its reach spans; a pair is heard when its
    distance is at most the listener's hearing radius times the loudness (numpy's distance
    away from that border, ``math.hypot``'s near it, as for sight)."""
    codes: dict[str, int] = {}
    number = codes.setdefault
    x = _floats([o.position[0] for o in observers])
    y = _floats([o.position[1] for o in observers])
    radius = _floats([o.senses.hearing_radius for o in observers])
    own = _ints([number(o.id, len(codes)) for o in observers])
    nx = _floats([n.position[0] for n in noises])
    ny = _floats([n.position[1] for n in noises])
    source = _ints([number(n.source, len(codes)) for n in noises])
    if not (_fits(x, y) and _fits(nx, ny)):
        return None
    hearing = max(o.senses.hearing_radius for o in observers)
    by_loudness: dict[float, list[int]] = {}
    for i, noise in enumerate(noises):
        by_loudness.setdefault(noise.loudness, []).append(i)
    listeners: list[Ints] = []
    heard: list[Ints] = []
    near: list[Floats] = []
    offsets: list[tuple[Floats, Floats]] = []
    for loudness, members in by_loudness.items():
        group = _ints(members)
        reach = radius * loudness
        wide = reach + _PAD
        strips = _Strips(nx.take(group), ny.take(group), max(hearing * loudness, 1.0))
        who, place = strips.in_boxes(x - wide, y - wide, x + wide, y + wide)
        which = group.take(strips.order.take(place))
        dx, dy = nx.take(which) - x.take(who), ny.take(which) - y.take(who)
        d = np.sqrt(dx * dx + dy * dy)
        border = _BORDER * (1.0 + d)
        limit = reach.take(who)
        other = source.take(which) != own.take(who)
        keep = (d < limit - border) & other
        for pair in np.flatnonzero((np.abs(d - limit) <= border) & other):
            keep[pair] = math.hypot(float(dx[pair]), float(dy[pair])) <= float(limit[pair])
        listeners.append(who[keep])
        heard.append(which[keep])
        near.append(d[keep])
        offsets.append((dx[keep], dy[keep]))
    who, which = np.concatenate(listeners), np.concatenate(heard)
    dx = np.concatenate([offset[0] for offset in offsets])
    dy = np.concatenate([offset[1] for offset in offsets])
    # hear()'s order after the distance: source, kind, then the noises' order, as one key.
    source_rank = _ranks([n.source for n in noises])
    kind_rank = _ranks([n.kind for n in noises])
    after = (source_rank * (int(kind_rank.max()) + 1) + kind_rank) * len(noises) + _ints(
        range(len(noises)), len(noises)
    )
    after = after.take(which)
    distances = np.concatenate(near)
    by = np.lexsort((distances, _small(who, len(observers))))
    # A listener's noises whose numpy distances lie within the border of each other may come in
    # another order by math.hypot's (ties included): those runs are sorted again by math.hypot's
    # distances, then by source, kind and index. The rest keep their order: a gap wider than
    # the border separates each from every other noise, and the two distances differ by far
    # less.
    looker, ranked = who.take(by), distances.take(by)
    close = (looker[1:] == looker[:-1]) & (ranked[1:] - ranked[:-1] <= _BORDER * (1.0 + ranked[1:]))
    if close.any():
        places = _runs(close)
        pick = by.take(places)
        exact = _floats(map(math.hypot, dx.take(pick).tolist(), dy.take(pick).tolist()), pick.size)
        run = np.cumsum(~np.concatenate([[False], close])).take(places)
        by[places] = pick.take(np.lexsort((after.take(pick), exact, run)))
    edges = np.searchsorted(who.take(by), np.arange(len(observers) + 1, dtype=np.int64))
    return edges.tolist(), which.take(by), dx.take(by), dy.take(by)


def _small(numbers: Ints, bound: int) -> npt.NDArray[np.signedinteger[Any]]:
    """``numbers`` (all below ``bound``) as int16 when they fit: numpy sorts those by radix."""
    return numbers.astype(np.int16) if bound < 2**15 else numbers


def _runs(close: Bools) -> Ints:
    """The places (in a sorted order) of every element in a run of neighbours ``close`` links:
    ``close[i]`` links places ``i`` and ``i + 1``."""
    run = np.zeros(close.size + 1, np.bool_)
    run[1:] |= close
    run[:-1] |= close
    return np.flatnonzero(run)


def _ranks(names: list[str]) -> Ints:
    """Each name's place among the names, in Python's order of strings."""
    rank = {name: place for place, name in enumerate(sorted(set(names)))}
    return _ints([rank[n] for n in names])
