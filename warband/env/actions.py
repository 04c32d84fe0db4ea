"""The action encoding: one discrete action is at most one of the world's verbs.

An action is an integer in ``range(action_count(map))``; :class:`ActionDecoder` turns it into
the act the learning agent sends the world this tick (a verb and its arguments, as any bot
sends), or into nothing. The world then checks the act as it checks any bot's: an act it
refuses (no ammo, no line of sight, not linked...) is answered with its reason, which the
environment's ``info`` reports (``act_rejected``) and the next observation flags. The slots an
action refers to are those of the observation the agent chose it from
(:mod:`warband.env.observations`).

=============================  ====================================================================
action                         act
=============================  ====================================================================
``0`` (:data:`NOOP`)           nothing (a move under way goes on)
``1`` (:data:`WAIT`)           ``wait {}``: stop moving
``2`` (:data:`RELOAD`)         ``reload {}``
``3`` (:data:`CROUCH`)         ``crouch {}``
``4`` (:data:`STAND`)          ``stand {}``
``5 + k``, k < MAX_ENEMIES     ``fire {"target": id}`` at enemy slot k (nothing for an empty slot)
``GO + j``, j < MAX_OBJECTIVES ``move {"waypoint": w}``: one link along the shortest path to
                               objective slot j's waypoint (nothing while a move is under way,
                               when already there, or for an empty slot)
``WORK + j``                   work on objective slot j: ``capture {"point": id}`` for a capture
                               point, ``plant`` / ``defuse {"target": id}`` for a destroy target
                               (by the team's role), ``pickup {"object": id}`` for the
                               retrieval marker (the object named by ``object_at``); nothing for
                               other markers or an empty slot
``MOVE + n``, n < max degree   ``move {"waypoint": w}``: to the n-th neighbour (by id) of the
                               waypoint the agent is at (nothing past its neighbour count)
=============================  ====================================================================

With :data:`~warband.env.observations.MAX_ENEMIES` 4 and
:data:`~warband.env.observations.MAX_OBJECTIVES` 5: ``GO`` is 9, ``WORK`` 14, ``MOVE`` 19, and
the action count is 19 plus the map's largest neighbour count (``warzone``: 23).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from typing import Final

from ..values import Value
from ..world import Map
from ..world.vocabulary import AT, ATTACK, MOVING, OBJECT_AT, ROLE, SELF, Verb
from .observations import MAX_ENEMIES, MAX_OBJECTIVES, Facts, read_slots

NOOP: Final = 0
WAIT: Final = 1
RELOAD: Final = 2
CROUCH: Final = 3
STAND: Final = 4
FIRE: Final = 5
"""First fire action: ``FIRE + k`` shoots at enemy slot k."""
GO: Final = FIRE + MAX_ENEMIES
"""First go-to action: ``GO + j`` walks towards objective slot j."""
WORK: Final = GO + MAX_OBJECTIVES
"""First work action: ``WORK + j`` captures, plants, defuses or picks up at objective slot j."""
MOVE: Final = WORK + MAX_OBJECTIVES
"""First move action: ``MOVE + n`` walks to neighbour n of the current waypoint."""

Act = tuple[str, dict[str, Value]]
"""A verb and its arguments, as :class:`~warband.messaging.Act` carries them."""

_SIMPLE: Final[Mapping[int, Act]] = {
    WAIT: (Verb.WAIT.value, {}),
    RELOAD: (Verb.RELOAD.value, {}),
    CROUCH: (Verb.CROUCH.value, {}),
    STAND: (Verb.STAND.value, {}),
}


def max_degree(game_map: Map) -> int:
    """The most neighbours any waypoint of ``game_map`` has."""
    return max((len(game_map.neighbours(w)) for w in game_map.waypoint_ids), default=0)


def action_count(game_map: Map) -> int:
    """How many discrete actions an agent has on ``game_map``."""
    return MOVE + max_degree(game_map)


class ActionDecoder:
    """Turns discrete actions into acts on one map (see the module docstring)."""

    def __init__(self, game_map: Map) -> None:
        self.map = game_map
        self.count = action_count(game_map)
        self._distances: dict[str, dict[str, float]] = {}

    def decode(self, action: int, facts: Facts) -> Act | None:
        """The act of ``action`` for an agent whose last Percept held ``facts``, or None for
        no act. Raises ValueError for an action outside ``range(self.count)``."""
        if not 0 <= action < self.count:
            raise ValueError(f"action {action} is not in range({self.count}): see warband.env")
        if action in _SIMPLE:
            verb, args = _SIMPLE[action]
            return verb, dict(args)
        me = SELF.first(facts)
        team = me.team if me is not None else ""
        if FIRE <= action < GO:
            enemies = read_slots(facts, team).enemies
            k = action - FIRE
            return (Verb.FIRE.value, {"target": enemies[k].id}) if k < len(enemies) else None
        if GO <= action < WORK:
            return self._go(facts, team, action - GO)
        if WORK <= action < MOVE:
            return self._work(facts, team, action - WORK)
        if action >= MOVE:
            return self._neighbour(facts, action - MOVE)
        return None

    def _go(self, facts: Facts, team: str, slot: int) -> Act | None:
        objectives = read_slots(facts, team).objectives
        at = AT.first(facts)
        if slot >= len(objectives) or at is None or MOVING.first(facts) is not None:
            return None
        goal = objectives[slot][2]
        step = self.next_hop(at.waypoint, goal)
        return (Verb.MOVE.value, {"waypoint": step}) if step is not None else None

    def _work(self, facts: Facts, team: str, slot: int) -> Act | None:
        objectives = read_slots(facts, team).objectives
        if slot >= len(objectives):
            return None
        marker, kind, _, _ = objectives[slot]
        if kind == "capture":
            return Verb.CAPTURE.value, {"point": marker}
        if kind == "target":
            attacking = any(r.team == team and r.role == ATTACK for r in ROLE.all(facts))
            verb = Verb.PLANT if attacking else Verb.DEFUSE
            return verb.value, {"target": marker}
        if kind == "retrieval":
            lying = OBJECT_AT.first(facts)
            return (Verb.PICKUP.value, {"object": lying.object}) if lying is not None else None
        return None

    def _neighbour(self, facts: Facts, index: int) -> Act | None:
        at = AT.first(facts)
        if at is None or not self.map.has_waypoint(at.waypoint):
            return None
        neighbours = sorted(self.map.neighbours(at.waypoint))
        if index >= len(neighbours):
            return None
        return Verb.MOVE.value, {"waypoint": neighbours[index]}

    def next_hop(self, start: str, goal: str) -> str | None:
        """The neighbour of ``start`` on a shortest path to ``goal`` (by link length; ties by
        id), or None when ``start`` is ``goal`` or no path joins them."""
        if start == goal or not self.map.has_waypoint(start):
            return None
        distance = self._distances_to(goal)
        options = [
            (self.map.link_length(start, n) + distance[n], n)
            for n in self.map.neighbours(start)
            if n in distance
        ]
        return min(options)[1] if options else None

    def _distances_to(self, goal: str) -> dict[str, float]:
        """Shortest path length from every waypoint to ``goal`` (Dijkstra), computed once."""
        known = self._distances.get(goal)
        if known is not None:
            return known
        distance: dict[str, float] = {}
        frontier = [(0.0, goal)] if self.map.has_waypoint(goal) else []
        while frontier:
            length, waypoint = heapq.heappop(frontier)
            if waypoint in distance:
                continue
            distance[waypoint] = length
            for n in self.map.neighbours(waypoint):
                if n not in distance:
                    heapq.heappush(frontier, (length + self.map.link_length(waypoint, n), n))
        self._distances[goal] = distance
        return distance
