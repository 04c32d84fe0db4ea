"""The observation encoding: one learning agent's Percept as a fixed-size vector of floats.

Every value lies in [-1, 1] (:data:`OBSERVATION_SIZE` of them, ``float32``); the index of each
is named in :data:`OBSERVATION_FIELDS`. The vector is built from the facts and events of the
agent's own Percept alone (what the world sends it, as to any bot) plus the map, which every bot
knows. Positions are relative to the agent and divided by the map's diagonal.

Own state (:data:`SELF_FIELDS`):

==================  ============================================================================
``alive``           1 when its ``state`` is alive, else 0 (likewise ``downed`` and ``dead``)
``health``          health / max_health
``clip``            rounds in the selected weapon's clip / its clip size (1 for no-ammo weapons)
``spare``           spare rounds of the selected weapon / 4 clips, at most 1
``reloading``       1 while reloading
``crouched``        1 while crouched
``moving``          1 while walking a link
``x``, ``y``        its position in the map's bounds, scaled to [-1, 1]
``respawn_in``      dead: ticks until respawn / 20, at most 1
``time_left``       ticks left / the mode's time limit
``score_own``       its team's points / :data:`SCORE_SCALE` of the mode, at most 1
``score_enemy``     the best other team's points, likewise
``act_rejected``    1 when the world refused its last act (its ``ActResult``)
``hit``             1 when one of its shots hit in the last step (``hit`` event)
``damaged``         1 when it took damage in the last step (``damaged`` event)
``class_<name>``    one-hot of its class (:data:`warband.world.classes.CLASSES`)
==================  ============================================================================

Then :data:`MAX_ENEMIES` enemy slots, nearest first (``sees``, ``sees_downed`` and
``sees_turret`` facts of another team), each ``present, dx, dy, distance, downed, turret``;
:data:`MAX_MATES` team mate slots, nearest first, each ``present, dx, dy, distance, downed``;
and :data:`MAX_OBJECTIVES` objective slots in the order of the mode's ``objective`` facts
(sorted by marker id), each ``present, dx, dy, distance, ours, theirs, here``: ``ours`` and
``theirs`` say who holds a capture point (``captured``) or, for other markers, whose it is;
``here`` is 1 when the agent stands on its waypoint. An empty slot is all zeros. Ties in
distance are broken by id, so the encoding is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..values import Value
from ..world import Map
from ..world.classes import CLASSES
from ..world.combat import WEAPONS
from ..world.vocabulary import (
    ALIVE,
    AMMO,
    AT,
    CAPTURED,
    CROUCHED,
    DAMAGED,
    DEAD,
    DOWNED,
    HEALTH,
    HIT,
    MAX_HEALTH,
    MOVING,
    OBJECTIVE,
    POSITION,
    RELOADING,
    RESPAWN_IN,
    SCORE,
    SEES,
    SEES_DOWNED,
    SEES_TURRET,
    SELF,
    SPARE_AMMO,
    STATE,
    TIME_LEFT,
    WEAPON,
    FactKind,
)

Facts = Sequence[Sequence[Value]]
Observation = npt.NDArray[np.float32]

MAX_ENEMIES: Final = 4
"""Enemy slots: the nearest visible enemies (characters and turrets)."""
MAX_MATES: Final = 4
"""Team mate slots: the nearest visible team mates."""
MAX_OBJECTIVES: Final = 5
"""Objective slots: the mode's markers in id order (Warzone has five capture points)."""

SCORE_SCALE: Final = {
    "capture_and_hold": 100.0,
    "body_count": 20.0,
    "search_and_retrieve": 3.0,
    "assassination": 3.0,
    "search_and_destroy": 3.0,
}
"""Points that count as 1 in ``score_own`` / ``score_enemy`` and in the default rewards: the
score a team wins with (Capture and Hold, Body Count) or a few goals (the others)."""

SELF_FIELDS: Final = (
    "alive", "downed", "dead", "health", "clip", "spare", "reloading", "crouched", "moving",
    "x", "y", "respawn_in", "time_left", "score_own", "score_enemy", "act_rejected", "hit",
    "damaged", *(f"class_{name}" for name in CLASSES),
)  # fmt: skip
ENEMY_FIELDS: Final = ("present", "dx", "dy", "distance", "downed", "turret")
MATE_FIELDS: Final = ("present", "dx", "dy", "distance", "downed")
OBJECTIVE_FIELDS: Final = ("present", "dx", "dy", "distance", "ours", "theirs", "here")

OBSERVATION_FIELDS: Final = (
    *SELF_FIELDS,
    *(f"enemy{i}_{f}" for i in range(MAX_ENEMIES) for f in ENEMY_FIELDS),
    *(f"mate{i}_{f}" for i in range(MAX_MATES) for f in MATE_FIELDS),
    *(f"objective{i}_{f}" for i in range(MAX_OBJECTIVES) for f in OBJECTIVE_FIELDS),
)
"""The name of each index of an observation."""
OBSERVATION_SIZE: Final = len(OBSERVATION_FIELDS)


@dataclass(frozen=True, slots=True)
class Sighting:
    """A character or turret in sight, as an enemy or mate slot reads it."""

    id: str
    waypoint: str
    distance: float
    downed: bool
    turret: bool


@dataclass(frozen=True, slots=True)
class Slots:
    """What the slots of an observation refer to, for decoding actions against it."""

    enemies: tuple[Sighting, ...]
    objectives: tuple[tuple[str, str, str, str], ...]
    """(marker id, kind, waypoint, team) of each objective slot."""


def read_slots(facts: Facts, team: str) -> Slots:
    """The enemies (nearest first) and objectives (by id) an observation's slots hold."""
    return _slots(_by_name(facts), team)


_Named = dict[str, list[Sequence[Value]]]
"""A Percept's facts by name, each list in the Percept's order."""


def _by_name(facts: Facts) -> _Named:
    """``facts`` grouped by name, in order: what :meth:`FactKind.first` and ``all`` find in a
    group is what they find in the whole list, and the encoder asks a score of kinds of one
    Percept (each asking read the whole list again: a third of a step with 12 learners)."""
    named: _Named = {}
    for fact in facts:
        if fact:
            group = named.get(fact[0])  # type: ignore[arg-type]  # by index: the name
            if group is None:
                named[fact[0]] = [fact]  # type: ignore[index]
            else:
                group.append(fact)
    return named


def _of(named: _Named, kind: FactKind[Any]) -> Sequence[Sequence[Value]]:
    """The facts of ``kind`` in a grouped Percept (none: empty)."""
    return named.get(kind.name, ())


def _slots(named: _Named, team: str) -> Slots:
    seen = _sightings(named)
    enemies = tuple(s for s, t in seen if t != team)[:MAX_ENEMIES]
    objectives = sorted(
        (o.id, o.kind, o.waypoint, o.team) for o in OBJECTIVE.all(_of(named, OBJECTIVE))
    )
    return Slots(enemies, tuple(objectives[:MAX_OBJECTIVES]))


def _sightings(named: _Named) -> list[tuple[Sighting, str]]:
    seen: list[tuple[Sighting, str]] = []
    for kind, downed, turret in ((SEES, False, False), (SEES_DOWNED, True, False)):
        seen += [(Sighting(s.id, s.waypoint, s.distance, downed, turret), s.team)
                 for s in kind.all(_of(named, kind))]  # fmt: skip
    seen += [
        (Sighting(s.id, s.waypoint, s.distance, False, True), s.team)
        for s in SEES_TURRET.all(_of(named, SEES_TURRET))
    ]
    return sorted(seen, key=lambda pair: (pair[0].distance, pair[0].id))


class ObservationEncoder:
    """Encodes Percepts on one map for one game mode (see the module docstring)."""

    def __init__(self, game_map: Map, mode: str, time_limit: int) -> None:
        self.map = game_map
        self.mode = mode
        self.time_limit = max(1, time_limit)
        min_x, min_y, max_x, max_y = game_map.bounds
        self._origin = (min_x, min_y)
        self._size = (max(max_x - min_x, 1e-9), max(max_y - min_y, 1e-9))
        self._diagonal = max(math.hypot(*self._size), 1e-9)
        self._score_scale = SCORE_SCALE.get(mode, 3.0)

    def encode(
        self, facts: Facts, events: Facts = (), *, act_rejected: bool = False
    ) -> Observation:
        """The observation of one Percept (``facts``), its step's ``events`` and whether the
        agent's last act was refused."""
        named = _by_name(facts)
        me = SELF.first(_of(named, SELF))
        team = me.team if me is not None else ""
        here = self._here(named)
        values = [
            *self._own(named, team, events, act_rejected, me.cls if me is not None else ""),
            *self._sighted(named, team, here),
            *self._objectives(named, team, here),
        ]
        return np.clip(np.asarray(values, dtype=np.float32), -1.0, 1.0)

    def _here(self, named: _Named) -> tuple[float, float]:
        position = POSITION.first(_of(named, POSITION))
        if position is not None:
            return position.x, position.y
        at = AT.first(_of(named, AT))
        if at is not None and self.map.has_waypoint(at.waypoint):
            return self.map.position(at.waypoint)
        return self._origin

    def _own(
        self, named: _Named, team: str, events: Facts, act_rejected: bool, cls: str
    ) -> list[float]:
        state = STATE.first(_of(named, STATE))
        life = state.life if state is not None else DEAD
        health = HEALTH.first(_of(named, HEALTH))
        max_health = MAX_HEALTH.first(_of(named, MAX_HEALTH))
        x, y = self._here(named)
        respawn = RESPAWN_IN.first(_of(named, RESPAWN_IN))
        left = TIME_LEFT.first(_of(named, TIME_LEFT))
        scores = {s.team: s.points for s in SCORE.all(_of(named, SCORE))}
        enemy_best = max((p for t, p in scores.items() if t != team), default=0)
        return [
            float(life == ALIVE),
            float(life == DOWNED),
            float(life == DEAD),
            health.value / max(max_health.value, 1) if health and max_health else 0.0,
            *self._ammo(named),
            float(bool(RELOADING.all(_of(named, RELOADING)))),
            float(CROUCHED.first(_of(named, CROUCHED)) is not None),
            float(MOVING.first(_of(named, MOVING)) is not None),
            2 * (x - self._origin[0]) / self._size[0] - 1,
            2 * (y - self._origin[1]) / self._size[1] - 1,
            min(respawn.ticks / 20, 1.0) if respawn is not None else 0.0,
            left.ticks / self.time_limit if left is not None else 0.0,
            min(scores.get(team, 0) / self._score_scale, 1.0),
            min(enemy_best / self._score_scale, 1.0),
            float(act_rejected),
            float(any(HIT.matches(e) for e in events)),
            float(any(DAMAGED.matches(e) for e in events)),
            *(float(cls == name) for name in CLASSES),
        ]

    def _ammo(self, named: _Named) -> tuple[float, float]:
        weapon = WEAPON.first(_of(named, WEAPON))
        if weapon is None or weapon.name not in WEAPONS:
            return 0.0, 0.0
        clip_size = WEAPONS[weapon.name].clip_size
        if clip_size == 0:
            return 1.0, 1.0
        ammo = AMMO.all(_of(named, AMMO))
        clip = next((a.amount for a in ammo if a.weapon == weapon.name), 0)
        spares = SPARE_AMMO.all(_of(named, SPARE_AMMO))
        spare = next((a.amount for a in spares if a.weapon == weapon.name), 0)
        return clip / clip_size, min(spare / (4 * clip_size), 1.0)

    def _relative(self, waypoint: str, here: tuple[float, float]) -> tuple[float, float, float]:
        if not self.map.has_waypoint(waypoint):
            return 0.0, 0.0, 0.0
        x, y = self.map.position(waypoint)
        dx, dy = x - here[0], y - here[1]
        return dx / self._diagonal, dy / self._diagonal, math.hypot(dx, dy) / self._diagonal

    def _sighted(self, named: _Named, team: str, here: tuple[float, float]) -> list[float]:
        seen = _sightings(named)
        enemies = [s for s, t in seen if t != team][:MAX_ENEMIES]
        mates = [s for s, t in seen if t == team and not s.turret][:MAX_MATES]
        values: list[float] = []
        for enemy in enemies:
            values += [1.0, *self._relative(enemy.waypoint, here)]
            values += [float(enemy.downed), float(enemy.turret)]
        values += [0.0] * (len(ENEMY_FIELDS) * (MAX_ENEMIES - len(enemies)))
        for mate in mates:
            values += [1.0, *self._relative(mate.waypoint, here), float(mate.downed)]
        values += [0.0] * (len(MATE_FIELDS) * (MAX_MATES - len(mates)))
        return values

    def _objectives(self, named: _Named, team: str, here: tuple[float, float]) -> list[float]:
        owners = {c.point: c.team for c in CAPTURED.all(_of(named, CAPTURED))}
        at = AT.first(_of(named, AT))
        moving = MOVING.first(_of(named, MOVING))
        standing = at.waypoint if at is not None and moving is None else None
        values: list[float] = []
        slots = _slots(named, team).objectives
        for marker, kind, waypoint, marker_team in slots:
            holder = owners.get(marker, "") if kind == "capture" else marker_team
            values += [1.0, *self._relative(waypoint, here)]
            values += [float(holder == team), float(holder not in ("", team))]
            values.append(float(waypoint == standing))
        values += [0.0] * (len(OBJECTIVE_FIELDS) * (MAX_OBJECTIVES - len(slots)))
        return values
