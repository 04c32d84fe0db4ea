"""The squad leader's observation encoding: what a squad knows as a fixed-size vector of floats.

A squad perceives nothing itself: it knows what its members report (their periodic
``StatusReport``: life, waypoint, health; ``arrived`` and ``captured`` reports; the
``ThreatReport`` messages they send), the commander's order at the head of its command
queue, and, as one of the world's observers, what its whole team knows (capture points,
score, time left, the mode's objects). :class:`SquadObservationEncoder` turns that, read from
the learning squad's memory (the same facts a stock squad plans with), into
:data:`SQUAD_OBSERVATION_SIZE` values in [-1, 1] (``float32``), each index named in
:data:`SQUAD_OBSERVATION_FIELDS`. Positions are absolute, scaled to the map's bounds:
``2 * (x - min_x) / width - 1``, likewise ``y``.

The squad (:data:`LEADER_FIELDS`):

=======================  ==========================================================================
``members``              members the commander gave it / :data:`MAX_MEMBERS`
``members_alive``        members whose last report says alive (or who have not reported yet)
``time_left``            ticks left / the time limit
``score_own``            its team's points / the mode's scale, at most 1 (as for a bot)
``score_enemy``          the best other team's points, likewise
``commander_<task>``     one-hot of the commander's order at the head of the command queue, by
                         task (:data:`COMMANDER_TASKS`; ``other`` for another, all 0 for none)
``given_<verb>``         one-hot of the order the squad gave its members
                         (:data:`~warband.env.squad_actions.VERBS`; all 0 before the first)
=======================  ==========================================================================

Then :data:`MAX_MEMBERS` member slots, members in id order, each ``present, alive, downed,
dead, reported, x, y, health, tasked, arrived``: ``reported`` is 1 once the member's periodic
report came (before that life and place are unknown, 0), ``health`` its reported health / 100
(at most 1), ``tasked`` 1 when it has the squad's order in force, ``arrived`` 1 when it
reported its arrival since that order was given. :data:`MAX_THREATS` threat slots, the
members' ``ThreatReport`` messages of the last :data:`~warband.agents.squad.THREAT_MEMORY` ticks,
newest first (ties by enemy id), one per enemy: ``present, x, y, age`` (``age``: ticks since the
report / that memory). And :data:`~warband.env.squad_actions.MAX_PLACES` place slots in the
order of :func:`~warband.env.squad_actions.squad_places`, each ``present, x, y, ours, theirs,
commanded, given, members_here`` and a one-hot of the place's kind
(:data:`~warband.env.squad_actions.PLACE_KINDS`): ``ours`` / ``theirs`` say who holds a capture
point or TSP, or whose marker it is; ``commanded`` is 1 when the commander's order names the
place (its marker or its waypoint), ``given`` when the squad's order does; ``members_here`` the
share of its members alive whose last reported waypoint is the place's. Empty slots are 0.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

import numpy as np

from ..agents.bot import member_status
from ..agents.facts import ORDER, STATUS, THREAT_REPORT, Status
from ..agents.squad import MEMBER, MEMBER_ALIVE, THREAT_MEMORY
from ..planning import FactDB
from ..world import Map
from ..world.vocabulary import CAPTURED, SCORE, TIME_LEFT
from .observations import SCORE_SCALE, Observation
from .squad_actions import MAX_PLACES, PLACE_KINDS, VERBS, Place, SquadOrder

MAX_MEMBERS: Final = 4
"""Member slots: the most bots the stock commander puts in one squad."""
MAX_THREATS: Final = 4
"""Threat slots: the newest enemies the members reported."""
COMMANDER_TASKS: Final = ("capture", "attack", "defend", "advance", "escort", "retrieve", "other")
"""The commander's orders to a squad, as ``commander_<task>`` one-hot fields."""

LEADER_FIELDS: Final = (
    "members", "members_alive", "time_left", "score_own", "score_enemy",
    *(f"commander_{task}" for task in COMMANDER_TASKS),
    *(f"given_{verb}" for verb in VERBS),
)  # fmt: skip
MEMBER_FIELDS: Final = (
    "present", "alive", "downed", "dead", "reported", "x", "y", "health", "tasked", "arrived",
)  # fmt: skip
THREAT_FIELDS: Final = ("present", "x", "y", "age")
PLACE_FIELDS: Final = (
    "present", "x", "y", "ours", "theirs", "commanded", "given", "members_here",
    *(f"kind_{kind}" for kind in PLACE_KINDS),
)  # fmt: skip

SQUAD_OBSERVATION_FIELDS: Final = (
    *LEADER_FIELDS,
    *(f"member{i}_{f}" for i in range(MAX_MEMBERS) for f in MEMBER_FIELDS),
    *(f"threat{i}_{f}" for i in range(MAX_THREATS) for f in THREAT_FIELDS),
    *(f"place{i}_{f}" for i in range(MAX_PLACES) for f in PLACE_FIELDS),
)
"""The name of each index of a squad leader's observation."""
SQUAD_OBSERVATION_SIZE: Final = len(SQUAD_OBSERVATION_FIELDS)


class SquadObservationEncoder:
    """Encodes what one squad knows on one map, for one mode (see the module docstring)."""

    def __init__(
        self, game_map: Map, places: Sequence[Place], team: str, mode: str, time_limit: int
    ) -> None:
        self.map = game_map
        self.places = tuple(places)
        self.team = team
        self.time_limit = max(1, time_limit)
        self._score_scale = SCORE_SCALE.get(mode, 3.0)
        min_x, min_y, max_x, max_y = game_map.bounds
        self._origin = (min_x, min_y)
        self._size = (max(max_x - min_x, 1e-9), max(max_y - min_y, 1e-9))

    def encode(
        self,
        facts: FactDB,
        tick: int,
        given: SquadOrder | None,
        tasked: Collection[str],
        arrived: Collection[str],
    ) -> Observation:
        """The observation of a squad whose memory holds ``facts`` at ``tick``, that gave
        ``given`` (None: no order yet) to the members in ``tasked``, of whom those in
        ``arrived`` reported their arrival."""
        members = sorted(m.member for m in MEMBER.all(facts.facts(MEMBER.name)))
        alive = {m.member for m in MEMBER_ALIVE.all(facts.facts(MEMBER_ALIVE.name))}
        statuses = {s.sender: s for s in STATUS.all(facts.facts(STATUS.name))}
        values = [
            *self._leader(facts, members, alive, given),
            *self._members(members, alive, statuses, tasked, arrived),
            *self._threats(facts, tick),
            *self._places(facts, members, alive, statuses, given),
        ]
        return np.clip(np.asarray(values, dtype=np.float32), -1.0, 1.0)

    def _xy(self, waypoint: str) -> tuple[float, float]:
        x, y = self.map.position(waypoint)
        return (
            2 * (x - self._origin[0]) / self._size[0] - 1,
            2 * (y - self._origin[1]) / self._size[1] - 1,
        )

    def _leader(
        self, facts: FactDB, members: list[str], alive: set[str], given: SquadOrder | None
    ) -> list[float]:
        left = TIME_LEFT.first(facts.facts(TIME_LEFT.name))
        scores = {s.team: s.points for s in SCORE.all(facts.facts(SCORE.name))}
        enemy_best = max((p for t, p in scores.items() if t != self.team), default=0)
        order = ORDER.first(facts.facts(ORDER.name))
        task = "" if order is None else (order.task if order.task in COMMANDER_TASKS else "other")
        return [
            len(members) / MAX_MEMBERS,
            len(alive & set(members)) / MAX_MEMBERS,
            left.ticks / self.time_limit if left is not None else 0.0,
            min(scores.get(self.team, 0) / self._score_scale, 1.0),
            min(enemy_best / self._score_scale, 1.0),
            *(float(task == name) for name in COMMANDER_TASKS),
            *(float(given is not None and given.verb == verb) for verb in VERBS),
        ]

    def _members(
        self,
        members: list[str],
        alive: set[str],
        statuses: dict[str, Status],
        tasked: Collection[str],
        arrived: Collection[str],
    ) -> list[float]:
        values: list[float] = []
        for member in members[:MAX_MEMBERS]:
            report = statuses.get(member)
            periodic = member_status(report) if report is not None else None
            life = report.status if report is not None else ""
            x = y = health = 0.0
            if periodic is not None and self.map.has_waypoint(str(periodic.waypoint)):
                x, y = self._xy(str(periodic.waypoint))
            if periodic is not None and isinstance(periodic.health, int | float):
                health = min(max(float(periodic.health), 0.0) / 100.0, 1.0)
            values += [
                1.0,
                float(member in alive),
                float(life == "downed"),
                float(life == "dead"),
                float(periodic is not None),
                x,
                y,
                health,
                float(member in tasked),
                float(member in arrived),
            ]
        values += [0.0] * (len(MEMBER_FIELDS) * (MAX_MEMBERS - min(len(members), MAX_MEMBERS)))
        return values

    def _threats(self, facts: FactDB, tick: int) -> list[float]:
        newest: dict[str, tuple[int, str]] = {}
        for report in THREAT_REPORT.all(facts.facts(THREAT_REPORT.name)):
            if tick - report.tick > THREAT_MEMORY or not self.map.has_waypoint(report.position):
                continue
            known = newest.get(report.threat)
            if known is None or report.tick > known[0]:
                newest[report.threat] = (report.tick, report.position)
        ranked = sorted(newest.items(), key=lambda item: (-item[1][0], item[0]))[:MAX_THREATS]
        values: list[float] = []
        for _, (reported, waypoint) in ranked:
            values += [1.0, *self._xy(waypoint), (tick - reported) / THREAT_MEMORY]
        values += [0.0] * (len(THREAT_FIELDS) * (MAX_THREATS - len(ranked)))
        return values

    def _places(
        self,
        facts: FactDB,
        members: list[str],
        alive: set[str],
        statuses: dict[str, Status],
        given: SquadOrder | None,
    ) -> list[float]:
        owners = {c.point: c.team for c in CAPTURED.all(facts.facts(CAPTURED.name))}
        order = ORDER.first(facts.facts(ORDER.name))
        named = {str(a) for a in order.args} if order is not None else set()
        standing = [
            str(periodic.waypoint)
            for m in members
            if m in alive
            and (report := statuses.get(m)) is not None
            and (periodic := member_status(report)) is not None
        ]
        living = max(len(alive & set(members)), 1)
        values: list[float] = []
        for index, place in enumerate(self.places):
            capturable = place.kind in ("capture", "tsp")
            holder = owners.get(place.marker, "") if capturable else place.team
            values += [
                1.0,
                *self._xy(place.waypoint),
                float(holder == self.team),
                float(holder not in ("", self.team)),
                float(place.marker in named or place.waypoint in named),
                float(given is not None and given.place == index),
                sum(1 for w in standing if w == place.waypoint) / living,
                *(float(place.kind == kind) for kind in PLACE_KINDS),
            ]
        values += [0.0] * (len(PLACE_FIELDS) * (MAX_PLACES - len(self.places)))
        return values
