"""The squad leader's action encoding: one discrete action is the order the squad gives its members.

A learning squad leader (:class:`~warband.env.WarzoneSquadEnv`) acts as warband's squads do:
by ordering its members (``Order`` messages, in command sequences where the stock squad uses
them). The places it can send them to are a fixed list derived from the map,
:func:`squad_places`: its markers of the kinds in :data:`PLACE_KINDS`, in that kind order and by
id within a kind, at most :data:`MAX_PLACES` of them (``warzone``: the 3 capture points, the
4 destroy targets, the retrieval marker, the 2 return points, the 4 TSPs and the 6 regroup
markers, 20 in all). An action is an integer in ``range(SQUAD_ACTION_COUNT)``:

=============================  ====================================================================
action                         the squad's order to each member alive
=============================  ====================================================================
``0`` (:data:`KEEP`)           nothing new: the squad's order stands (members who have not had it
                               yet, new ones or ones back from the dead, get it now)
``REGROUP + p``, p < 20        regroup at place p: a command sequence ``goto <spot>``,
                               ``send_message arrived``, ``defend <spot>``, as the stock squad
                               regroups (each member its own spot around the place: the squad's
                               ``defend_spot``); members report ``arrived`` when there
``DEFEND + p``                 ``defend <spot>``: hold the place, each member its spot
``ATTACK + p``                 the place's objective: ``capture <marker>`` for a capture point or
                               a TSP, ``attack <marker>`` for a destroy target (attackers plant a
                               charge, defenders keep the enemy off it), ``retrieve <object>`` at
                               the retrieval marker (the object the world names there, when it
                               does); for another kind of place, as ``DEFEND + p``
=============================  ====================================================================

``REGROUP`` is 1, ``DEFEND`` 21 and ``ATTACK`` 41: :data:`SQUAD_ACTION_COUNT` is 61 on any map.
An action naming an empty place slot (a map with fewer places) is :data:`KEEP`. The squad
sends its order to a member once: choosing the order in force again sends nothing (so a
regroup is not restarted every step), and a member is given the order in force when it joins
or comes back alive. The members obey as they obey a stock squad: the same bots, the same
domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..values import Value
from ..world import Map

PLACE_KINDS: Final = ("capture", "target", "retrieval", "return", "tsp", "regroup")
"""The marker kinds a squad leader's places are made of, in slot order."""
MAX_PLACES: Final = 20
"""Place slots: the actions and the observation have room for this many places."""

KEEP: Final = 0
REGROUP: Final = 1
"""First regroup action: ``REGROUP + p`` regroups the squad at place p."""
DEFEND: Final = REGROUP + MAX_PLACES
"""First defend action: ``DEFEND + p`` holds place p."""
ATTACK: Final = DEFEND + MAX_PLACES
"""First attack action: ``ATTACK + p`` takes on place p's objective."""
SQUAD_ACTION_COUNT: Final = ATTACK + MAX_PLACES

VERBS: Final = ("regroup", "defend", "attack")
"""The squad orders an action can give, by action block."""


@dataclass(frozen=True, slots=True)
class Place:
    """One place a squad leader can send its members to: a marker of the map."""

    marker: str
    kind: str
    waypoint: str
    team: str
    """The marker's team ("" for none): whose target, return point or spawn it is."""


@dataclass(frozen=True, slots=True)
class SquadOrder:
    """What an action asks of the squad: ``verb`` (one of :data:`VERBS`) at ``place``."""

    verb: str
    place: int
    """The place slot (an index of :func:`squad_places`)."""


def squad_places(game_map: Map) -> tuple[Place, ...]:
    """The places of ``game_map`` a squad leader chooses from (see the module docstring)."""
    places = [
        Place(m.id, m.kind, m.waypoint, m.team or "")
        for kind in PLACE_KINDS
        for m in sorted(game_map.markers_of(kind), key=lambda m: m.id)
    ]
    return tuple(places[:MAX_PLACES])


def decode_squad_action(action: int, places: tuple[Place, ...]) -> SquadOrder | None:
    """The squad order of ``action``, or None for :data:`KEEP` (and an empty place slot).
    Raises ValueError for an action outside ``range(SQUAD_ACTION_COUNT)``."""
    if isinstance(action, bool) or not 0 <= action < SQUAD_ACTION_COUNT:
        raise ValueError(
            f"squad action {action!r} is not in range({SQUAD_ACTION_COUNT}): see "
            "warband.env.squad_actions"
        )
    if action == KEEP:
        return None
    block, place = divmod(action - REGROUP, MAX_PLACES)
    if place >= len(places):
        return None
    return SquadOrder(VERBS[block], place)


def member_orders(
    order: SquadOrder, place: Place, spot: str, retrieval_object: str | None
) -> list[tuple[str, list[Value]]]:
    """The orders (task, arguments) one member gets for ``order`` at ``place``, standing at
    ``spot`` (its own waypoint around the place); more than one is a command sequence."""
    if order.verb == "regroup":
        return [("goto", [spot]), ("send_message", ["arrived"]), ("defend", [spot])]
    if order.verb == "attack":
        if place.kind in ("capture", "tsp"):
            return [("capture", [place.marker])]
        if place.kind == "target":
            return [("attack", [place.marker])]
        if place.kind == "retrieval" and retrieval_object is not None:
            return [("retrieve", [retrieval_object])]
    return [("defend", [spot])]
