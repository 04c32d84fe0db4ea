"""The snapshot format: the whole world state as plain, JSON-ready data.

Written to the logs after every step (event :data:`SNAPSHOT_EVENT`, keys ``tick`` and
``snapshot``) and read back by :mod:`~warband.world.replay` and :mod:`~warband.world.render`::

    {
      "map": "warzone", "map_source": "<file the map came from>", "tick": 12,
      "mode": "capture_and_hold" | None,
      "scores": {"red": 3, "blue": 0}, "outcome": None | {"winner", "scores", "reason", "tick"},
      "teams": ["red", "blue"],
      "agents": {"bot-1": {"team", "class", "x", "y", "heading", "waypoint", "target",
                           "health", "max_health", "state", "weapon", "crouched", "cloaked",
                           "disguised", "carrying": [item ids], "kills", "deaths"}},
      "turrets": {"turret-bot-3": {"team", "owner", "x", "y", "waypoint", "health"}},
      "captures": {"cp-a": "red" | None},
      "objects": {"cell-door": {"kind", "open", "waypoint"},
                  "key": {"kind": "item", "waypoint": id | None, "carrier": id | None}},
      "influence": {"red": {"<area id>": float}},     # with track_influence: friends - enemies
      "corridors": {"squad-1": ["<area id>", ...]},   # as given by set_corridor
      "objectives": {                                 # the game mode's things; {} without
        "markers": {"return-red": {"kind", "waypoint", "team"}},   # markers it plays on
        "roles": {"red": "attack", "blue": "defend"},               # attack / defence modes
        "retrieval": None | {"object", "spawn", "waypoint", "carrier"},
        "vip": None | {"agent", "team", "revealed"},
        "targets": {"target-blue-north": {"team", "waypoint", "state", "fuse"}}
      },
      "events": [[...], ...]                          # public events of the last tick
    }
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ..exceptions import MapError
from ._bodies import Character
from ._map_file import bundled_maps, load_map
from ._objectives import carried_by
from ._objectives import snapshot as objectives_snapshot
from ._objects import pressed
from ._state import WorldState, rounded
from .maps import Map

SNAPSHOT_EVENT: Final = "world.snapshot"
"""The log event holding one tick's snapshot (keys ``tick`` and ``snapshot``)."""


def snapshot(
    state: WorldState, scores: dict[str, int], outcome: dict[str, Any] | None
) -> dict[str, Any]:
    """The whole state as plain, JSON-ready data (format in the module docstring)."""
    return {
        "map": state.map.name,
        "map_source": state.map.source,
        "tick": state.tick,
        "mode": state.mode.name if state.mode is not None else None,
        "scores": scores,
        "outcome": outcome,
        "teams": list(state.map.teams),
        "agents": {a.id: _agent(state, a) for _, a in sorted(state.agents.items())},
        "turrets": {
            t.id: {
                "team": t.team,
                "owner": t.owner,
                "x": rounded(t.position[0]),
                "y": rounded(t.position[1]),
                "waypoint": t.waypoint,
                "health": t.health.current,
            }
            for _, t in sorted(state.turrets.items())
        },
        "captures": dict(sorted(state.owners.items())),
        "objects": _objects(state),
        "influence": {
            team: {str(area): rounded(value) for area, value in sorted(influence.as_dict().items())}
            for team, influence in sorted(state.influence.items())
        },
        "corridors": {k: list(v) for k, v in sorted(state.corridors.items())},
        "objectives": objectives_snapshot(state),
        "events": [list(e) for e in state.last.events],
    }


def _agent(state: WorldState, agent: Character) -> dict[str, Any]:
    return {
        "team": agent.team,
        "class": agent.cls.name,
        "x": rounded(agent.position[0]),
        "y": rounded(agent.position[1]),
        "heading": rounded(agent.heading),
        "waypoint": agent.waypoint,
        "target": agent.target,
        "health": agent.health.current,
        "max_health": agent.health.maximum,
        "state": agent.life,
        "weapon": agent.selected,
        "crouched": agent.crouched,
        "cloaked": agent.cloaked,
        "disguised": agent.disguised,
        "carrying": [*agent.carrying, *carried_by(state, agent.id)],
        "kills": agent.kills,
        "deaths": agent.deaths,
    }


def _objects(state: WorldState) -> dict[str, dict[str, Any]]:
    objects: dict[str, dict[str, Any]] = {}
    for obj in state.map.objects:
        if obj.kind == "item":
            objects[obj.id] = {
                "kind": "item",
                "waypoint": state.item_at[obj.id],
                "carrier": state.carrier[obj.id],
            }
        elif obj.kind == "plate":
            objects[obj.id] = {
                "kind": "plate",
                "open": pressed(state, obj),
                "waypoint": obj.waypoint,
            }
        else:
            objects[obj.id] = {
                "kind": obj.kind,
                "open": state.open[obj.id],
                "waypoint": obj.waypoint,
            }
    return objects


def snapshot_map(snapshot: Mapping[str, Any]) -> Map:
    """The map a snapshot was taken on: by its bundled name, else from the file it came from
    (``map_source``, a path on the machine that recorded it). Raises :class:`MapError`, saying
    why, when the snapshot names no map, or names one that is neither bundled nor readable."""
    name = str(snapshot.get("map", ""))
    if not name:
        keys = ", ".join(sorted(str(key) for key in snapshot)) or "none"
        raise MapError(
            f"this run's world has no map to draw: its snapshots name none (their keys: {keys}); "
            "a symbolic world, as in the fear and pirate scenarios, has places but no "
            "positions: `warband view` and `warband trace` show what such a run did"
        )
    if name in bundled_maps():
        return load_map(name)
    source = snapshot.get("map_source")
    if isinstance(source, str) and Path(source).is_file():
        return load_map(Path(source))
    raise MapError(
        f"snapshot of map {name!r}: the map is neither bundled nor in a file "
        f"({source!r}); a generated map cannot be drawn from the logs"
    )
