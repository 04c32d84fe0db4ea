"""Symbolic objects in play: doors and bars (opened by hand, by key, by a plate or a lever),
pressure plates, levers and items that can be picked up, carried and dropped.

The map holds what the objects are (:class:`~warband.world.maps.MapObject`); their state
(open, unlocked, where an item lies, who carries it) lives in the
:class:`~._state.WorldState`, and these functions read and change it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..values import Fact
from ._bodies import Character
from ._state import Events, WorldState
from .maps import MapObject
from .vocabulary import ALIVE


def standing_at(state: WorldState, waypoint: str) -> list[Character]:
    """Living characters standing (not walking) at ``waypoint``, in id order."""
    return [
        a
        for _, a in sorted(state.agents.items())
        if a.life == ALIVE and a.progress == 0 and a.waypoint == waypoint
    ]


def pressed(state: WorldState, plate: MapObject) -> bool:
    """True while someone stands on ``plate``."""
    return bool(standing_at(state, plate.waypoint))


def update_objects(state: WorldState, events: Events) -> None:
    """Recompute doors and bars: open by their own state (moved by hand, unlocked) or while
    a controlling plate is pressed or lever is on."""
    for obj in state.map.objects:
        if obj.kind not in ("door", "bars"):
            continue
        was = state.open[obj.id]
        now = _base_open(state, obj) or any(
            pressed(state, c) if c.kind == "plate" else state.open[c.id]
            for c in state.map.controllers_of(obj.id)
        )
        state.open[obj.id] = now
        if now != was:
            events.add("opened" if now else "closed", obj.id)


def _base_open(state: WorldState, obj: MapObject) -> bool:
    """Whether a door or bars is open by itself (not through a plate or lever)."""
    by_hand = not state.map.controllers_of(obj.id) and obj.key is None
    if by_hand or obj.id in state.unlocked:
        return state.hand[obj.id]
    return False


def closed_blocker(state: WorldState, a: str, b: str) -> MapObject | None:
    """The closed door or bars on the link ``a-b``, if any (the map's rule, with the open
    doors and bars of this world)."""
    return state.map.closed_blocker(a, b, state.open)


def item_kind(state: WorldState, item: str) -> str:
    """The kind of an item (e.g. ``cell-key``), or its id when it has none."""
    return state.map.object(item).item or item


def operated_from(obj: MapObject) -> tuple[str, ...]:
    """Where an object is used from: a door from either side, everything else at its
    waypoint (bars from the outside only: a prisoner cannot lift its own bars)."""
    if obj.kind == "door" and obj.link is not None:
        return tuple(dict.fromkeys((obj.waypoint, *obj.link)))
    return (obj.waypoint,)


def check_use(state: WorldState, agent: Character, obj: MapObject) -> str | None:
    """Why ``agent`` cannot use ``obj`` now, or None."""
    if obj.kind == "item":
        return _check_pick_up(state, agent, obj)
    where = operated_from(obj)
    if agent.progress > 0 or agent.waypoint not in where:
        return f"{agent.id} must stand at {' or '.join(where)} to use {obj.id!r}"
    if obj.kind in ("door", "bars"):
        return _check_door(state, agent, obj)
    return None


def _check_door(state: WorldState, agent: Character, door: MapObject) -> str | None:
    if door.key is not None and door.id not in state.unlocked:
        if not any(item_kind(state, item) == door.key for item in agent.carrying):
            return f"{door.kind} {door.id!r} is locked; it needs a {door.key!r} item"
        return None
    controllers = state.map.controllers_of(door.id)
    if controllers and door.key is None:
        names = ", ".join(f"{c.kind} {c.id!r}" for c in controllers)
        return f"{door.kind} {door.id!r} is worked by {names}, not by hand"
    return None


def _check_pick_up(state: WorldState, agent: Character, item: MapObject) -> str | None:
    carrier = state.carrier[item.id]
    if carrier is not None:
        return f"item {item.id!r} is carried by {carrier}"
    lies = state.item_at[item.id]
    if lies != agent.waypoint or agent.progress > 0:
        return f"item {item.id!r} lies at {lies}; {agent.id} is at {agent.waypoint}"
    return None


def use(state: WorldState, agent: Character, obj: MapObject, events: Events) -> None:
    """``agent`` uses ``obj`` (checked): pick an item up, toggle a lever, unlock or move a
    door or bars by hand. A plate needs nothing: standing on it is what presses it."""
    if obj.kind == "item":
        state.carrier[obj.id] = agent.id
        state.item_at[obj.id] = None
        agent.carrying.append(obj.id)
        events.add("picked_up", obj.id, agent.id, agent.team)
    elif obj.kind == "lever":
        state.hand[obj.id] = state.open[obj.id] = not state.hand[obj.id]
    elif obj.kind in ("door", "bars"):
        if obj.key is not None and obj.id not in state.unlocked:
            state.unlocked.add(obj.id)
            state.hand[obj.id] = True
        else:
            state.hand[obj.id] = not state.hand[obj.id]


def drop_item(state: WorldState, agent: Character, item: str, events: Events) -> None:
    """``agent`` puts down ``item`` (one it carries) where it is."""
    agent.carrying.remove(item)
    state.carrier[item] = None
    state.item_at[item] = agent.waypoint
    events.add("dropped", item, agent.waypoint)


def drop_items(state: WorldState, agent: Character, events: Events) -> None:
    """``agent`` dies: everything it carries falls where it is."""
    for item in agent.carrying:
        state.carrier[item] = None
        state.item_at[item] = agent.waypoint
        events.add("dropped", item, agent.waypoint)
    agent.carrying = []


def object_facts(state: WorldState) -> Iterable[Fact]:
    """What everyone knows about the objects: open, pressed, where items lie."""
    for obj in state.map.objects:
        if obj.kind in ("door", "bars", "lever"):
            yield ("open", obj.id, state.open[obj.id])
        elif obj.kind == "plate":
            yield ("pressed", obj.id, pressed(state, obj))
        elif state.item_at[obj.id] is not None:
            yield ("item_at", obj.id, str(state.item_at[obj.id]))
