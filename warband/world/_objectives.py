"""The game modes' things in play: the retrieval object, the VIP, the destroy targets.

A :class:`~warband.world.modes.GameMode` holds the rules (what scores, who wins) and the ids
of what it plays on; this module holds their state in the world and moves it (the mode sees
only the events):

- **Search and Retrieve**: the object lies at a waypoint or is carried. ``pickup`` takes it
  where it lies, ``drop`` puts it down, a downed carrier drops it; a living carrier within
  the radius of its own team's return marker returns it (``returned``; it is back at its
  spawn); left lying away from its spawn for ``reset_ticks`` it goes back there
  (``object_reset``).
- **Assassination**: the VIP is designated when the world is built (the mode's, or one of
  the defenders picked from the seed); the mode ends the game on its ``killed`` event.
- **Search and Destroy**: each target is intact, armed or destroyed. ``plant`` and
  ``defuse`` are work like a capture: an agent that does it ``plant_ticks`` /
  ``defuse_ticks`` ticks in a row, alive and within the target's radius, arms the charge
  (``planted``) or makes the target safe again (``defused``); an armed charge goes off
  ``fuse_ticks`` ticks after it was planted (``destroyed``, an explosion everyone near hears).

Every mode's state is common knowledge in percepts (:func:`facts_for`) and in the snapshot
(:func:`snapshot`); the fact names are in :mod:`~warband.world.vocabulary`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import ConfigurationError
from ..values import Fact
from ._bodies import Character
from ._state import Events, WorldState
from .geometry import distance
from .modes import Assassination, SearchAndDestroy, SearchAndRetrieve
from .perception import Noise
from .vocabulary import ALIVE, ROLE, TARGET_ARMED, TARGET_DESTROYED, TARGET_INTACT, Verb

RETRIEVAL_KIND = "retrieval"
"""The ``kind`` of the retrieval object in ``carrying`` facts."""


@dataclass(slots=True)
class Retrieval:
    """The Search and Retrieve object: where it lies (None while carried) or who carries it."""

    object: str
    spawn: str
    """The waypoint it spawns at and goes back to."""
    waypoint: str | None
    carrier: str | None = None
    idle: int = 0
    """Ticks it has lain away from its spawn, untouched."""


@dataclass(slots=True)
class Target:
    """A Search and Destroy target and the charge on it."""

    id: str
    team: str
    """The team defending it."""
    waypoint: str
    radius: float
    state: str = TARGET_INTACT
    fuse: int = 0
    """Ticks until an armed charge goes off."""
    planter: str = ""


@dataclass(slots=True)
class Objectives:
    """The state of the mode's things in play, and the facts that never change in a game."""

    static: tuple[Fact, ...]
    """``game_mode``, ``objective`` and ``role`` facts, the same in every percept."""
    markers: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    """Marker id -> (kind, waypoint, team or "") for every marker the mode plays on."""
    retrieval: Retrieval | None = None
    returns: dict[str, tuple[str, float]] = field(default_factory=dict)
    """Team -> (waypoint, radius) of its return point."""
    reset_ticks: int = 0
    vip: str | None = None
    vip_team: str = ""
    reveal_vip: bool = True
    targets: dict[str, Target] = field(default_factory=dict)
    plant_ticks: int = 0
    defuse_ticks: int = 0
    fuse_ticks: int = 0
    work: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    """Agent -> (verb, target, ticks in a row) of a plant or defuse in progress."""


def setup(state: WorldState) -> Objectives | None:
    """The objectives of ``state.mode`` on ``state.map`` with the agents spawned (None without
    a mode). Raises ConfigurationError for a marker the map lacks or a VIP that is not one of
    the defenders."""
    mode = state.mode
    if mode is None:
        return None
    game_map = state.map
    markers: dict[str, tuple[str, str, str]] = {}
    for marker_id in mode.markers:
        if not game_map.has_marker(marker_id):
            if mode.name == "capture_and_hold":
                continue  # capture and hold never needed its points on the map: keep it so
            raise ConfigurationError(
                f"{mode.name}: map {game_map.name!r} has no marker {marker_id!r}"
            )
        marker = game_map.marker(marker_id)
        markers[marker_id] = (marker.kind, marker.waypoint, marker.team or "")
    static: list[Fact] = [("game_mode", mode.name)]
    static.extend(("objective", m, *markers[m]) for m in markers)
    static.extend(("role", team, role) for team, role in mode.roles().items())
    found = Objectives(tuple(static), markers)
    if isinstance(mode, SearchAndRetrieve):
        spawn = game_map.marker(mode.spawn).waypoint
        found.retrieval = Retrieval(mode.object_id, spawn, spawn)
        found.reset_ticks = mode.reset_ticks
        for team, marker_id in mode.return_points.items():
            marker = game_map.marker(marker_id)
            found.returns[team] = (marker.waypoint, marker.radius)
    elif isinstance(mode, Assassination):
        defenders = [a for a, body in sorted(state.agents.items()) if body.team == mode.defenders]
        vip = mode.designate(defenders, state.seed)
        if vip not in defenders:
            raise ConfigurationError(
                f"assassination: the VIP {vip!r} is not an agent of the defending team "
                f"{mode.defenders!r}; its agents: {', '.join(defenders) or 'none'}"
            )
        found.vip, found.vip_team, found.reveal_vip = vip, mode.defenders, mode.reveal_position
    elif isinstance(mode, SearchAndDestroy):
        for marker_id in mode.targets:
            marker = game_map.marker(marker_id)
            if marker.team != mode.defenders:
                raise ConfigurationError(
                    f"search_and_destroy: target {marker_id!r} belongs to team {marker.team!r}, "
                    f"not to the defenders {mode.defenders!r}"
                )
            found.targets[marker_id] = Target(
                marker_id, mode.defenders, marker.waypoint, marker.radius
            )
        found.plant_ticks = mode.plant_ticks
        found.defuse_ticks = mode.defuse_ticks
        found.fuse_ticks = mode.fuse_ticks
    return found


# --- acts -------------------------------------------------------------------------------------


def is_retrieval(state: WorldState, object_id: str) -> bool:
    """True when ``object_id`` is this game's retrieval object."""
    found = state.objectives
    return found is not None and found.retrieval is not None and found.retrieval.object == object_id


def check_pickup(state: WorldState, agent: Character, object_id: str) -> str | None:
    """Why ``agent`` cannot pick up the retrieval object now, or None."""
    retrieval = _retrieval(state)
    if retrieval.carrier is not None:
        return f"{object_id!r} is carried by {retrieval.carrier}"
    if retrieval.waypoint != agent.waypoint or agent.progress > 0:
        return (
            f"{object_id!r} lies at {retrieval.waypoint}; {agent.id} must stand there "
            f"(it is at {agent.waypoint})"
        )
    return None


def pickup(state: WorldState, agent: Character, events: Events) -> None:
    """``agent`` takes the retrieval object (unless someone took it earlier in the tick)."""
    retrieval = _retrieval(state)
    reason = check_pickup(state, agent, retrieval.object)
    if reason is not None:
        events.tell(agent.id, "act_failed", Verb.PICKUP.value, reason)
        return
    retrieval.carrier, retrieval.waypoint, retrieval.idle = agent.id, None, 0
    events.add("picked_up", retrieval.object, agent.id, agent.team)


def check_drop(state: WorldState, agent: Character, object_id: str) -> str | None:
    """Why ``agent`` cannot drop the retrieval object now, or None."""
    carrier = _retrieval(state).carrier
    return None if carrier == agent.id else f"{agent.id} does not carry {object_id!r}"


def drop(state: WorldState, agent: Character, events: Events) -> None:
    """The retrieval object falls where ``agent`` is."""
    retrieval = _retrieval(state)
    retrieval.carrier, retrieval.waypoint, retrieval.idle = None, agent.waypoint, 0
    events.add("dropped", retrieval.object, agent.waypoint)


def check_work(state: WorldState, agent: Character, verb: str, target_id: str) -> str | None:
    """Why ``agent`` cannot ``plant`` or ``defuse`` (``verb``) at ``target_id`` now, or None."""
    found = state.objectives
    mode = state.mode.name if state.mode is not None else "none"
    if found is None or not found.targets:
        return f"there are no destroy targets in this game (mode: {mode}); {verb} needs one"
    target = found.targets.get(target_id)
    if target is None:
        return f"unknown destroy target {target_id!r}; targets: {', '.join(found.targets)}"
    if verb == Verb.PLANT:
        if agent.team == target.team:
            return f"{target_id} is your team's target; defend it (defuse a charge on it)"
        if target.state != TARGET_INTACT:
            return f"{target_id} is already {target.state}"
    else:
        if agent.team != target.team:
            return f"{target_id} belongs to {target.team}; the attackers plant, not defuse"
        if target.state != TARGET_ARMED:
            return f"{target_id} is {target.state}: there is no charge to defuse"
    gap = distance(agent.position, state.map.position(target.waypoint))
    if gap > target.radius:
        return (
            f"{agent.id} is {gap:.1f} from {target_id} at {target.waypoint}; "
            f"get within {target.radius:g}"
        )
    return None


# --- the tick ---------------------------------------------------------------------------------


def update(state: WorldState, events: Events) -> None:
    """The mode's things after movement: the retrieval object (dropped by a downed carrier,
    returned, reset), plant and defuse work, then the fuses."""
    found = state.objectives
    if found is None:
        return
    if found.retrieval is not None:
        _update_retrieval(state, found, found.retrieval, events)
    if found.targets:
        armed = _update_work(state, found, events)
        _burn_fuses(state, found, armed, events)


def _update_retrieval(
    state: WorldState, found: Objectives, retrieval: Retrieval, events: Events
) -> None:
    if retrieval.carrier is not None:
        carrier = state.agents[retrieval.carrier]
        if carrier.life != ALIVE:
            drop(state, carrier, events)
            return
        home, radius = found.returns.get(carrier.team, ("", 0.0))
        if home and distance(carrier.position, state.map.position(home)) <= radius:
            retrieval.carrier, retrieval.waypoint, retrieval.idle = None, retrieval.spawn, 0
            events.add("returned", retrieval.object, carrier.id, carrier.team)
        return
    if retrieval.waypoint == retrieval.spawn:
        return
    retrieval.idle += 1
    if retrieval.idle >= found.reset_ticks:
        retrieval.waypoint, retrieval.idle = retrieval.spawn, 0
        events.add("object_reset", retrieval.object, retrieval.spawn)


def _update_work(state: WorldState, found: Objectives, events: Events) -> set[str]:
    """Plant and defuse work of this tick; returns the targets armed in it."""
    work: dict[str, tuple[str, str, int]] = {}
    armed: set[str] = set()
    for agent_id in sorted(state.actions):
        verb, args = state.actions[agent_id]
        if verb not in (Verb.PLANT, Verb.DEFUSE):
            continue
        agent = state.agents[agent_id]
        target_id = str(args["target"])
        if agent.life != ALIVE or check_work(state, agent, verb, target_id) is not None:
            continue
        before = found.work.get(agent_id)
        ticks = before[2] + 1 if before is not None and before[:2] == (verb, target_id) else 1
        target = found.targets[target_id]
        if verb == Verb.PLANT and ticks >= found.plant_ticks:
            target.state, target.fuse, target.planter = TARGET_ARMED, found.fuse_ticks, agent_id
            armed.add(target_id)
            events.add("planted", target_id, agent_id, agent.team)
        elif verb == Verb.DEFUSE and ticks >= found.defuse_ticks:
            target.state, target.fuse, target.planter = TARGET_INTACT, 0, ""
            events.add("defused", target_id, agent_id, agent.team)
        else:
            work[agent_id] = (verb, target_id, ticks)
    found.work = work
    return armed


def _burn_fuses(state: WorldState, found: Objectives, armed: set[str], events: Events) -> None:
    for target_id, target in found.targets.items():
        if target.state != TARGET_ARMED or target_id in armed:
            continue
        target.fuse -= 1
        if target.fuse > 0:
            continue
        target.state, target.fuse = TARGET_DESTROYED, 0
        spot = state.map.position(target.waypoint)
        state.noises.append((Noise("explosion", spot, target_id, 2.0), target.waypoint))
        events.add("destroyed", target_id, target.team, target.planter)


# --- what agents and logs see -----------------------------------------------------------------


def carried_by(state: WorldState, agent_id: str) -> Iterator[str]:
    """The retrieval object's id when ``agent_id`` carries it."""
    found = state.objectives
    if found is not None and found.retrieval is not None and found.retrieval.carrier == agent_id:
        yield found.retrieval.object


def facts_for(state: WorldState, team: str) -> Iterable[Fact]:
    """What a member of ``team`` knows of the mode's state (after its static facts)."""
    found = state.objectives
    if found is None:
        return ()
    facts = list(found.static)
    retrieval = found.retrieval
    if retrieval is not None:
        if retrieval.carrier is not None:
            carrier = state.agents[retrieval.carrier]
            facts.append(("object_at", retrieval.object, carrier.waypoint))
            facts.append(("carrier", retrieval.object, carrier.id, carrier.team))
        elif retrieval.waypoint is not None:
            facts.append(("object_at", retrieval.object, retrieval.waypoint))
    if found.vip is not None:
        own = team == found.vip_team
        facts.append(("vip", found.vip, found.vip_team))
        if own or found.reveal_vip:
            facts.append(("vip_at", found.vip, state.agents[found.vip].waypoint))
    for target_id, target in found.targets.items():
        facts.append(("target_state", target_id, target.state))
        if target.state == TARGET_ARMED:
            facts.append(("fuse", target_id, target.fuse))
    return facts


def snapshot(state: WorldState) -> dict[str, Any]:
    """The mode's state as plain data (the ``objectives`` key of the snapshot)."""
    found = state.objectives
    if found is None:
        return {}
    retrieval = found.retrieval
    return {
        "markers": {
            m: {"kind": kind, "waypoint": waypoint, "team": team or None}
            for m, (kind, waypoint, team) in found.markers.items()
        },
        "roles": {r.team: r.role for r in ROLE.matching(found.static)},
        "retrieval": None
        if retrieval is None
        else {
            "object": retrieval.object,
            "spawn": retrieval.spawn,
            "waypoint": retrieval.waypoint
            if retrieval.carrier is None
            else state.agents[retrieval.carrier].waypoint,
            "carrier": retrieval.carrier,
        },
        "vip": None
        if found.vip is None
        else {"agent": found.vip, "team": found.vip_team, "revealed": found.reveal_vip},
        "targets": {
            t.id: {"team": t.team, "waypoint": t.waypoint, "state": t.state, "fuse": t.fuse}
            for t in found.targets.values()
        },
    }


def _retrieval(state: WorldState) -> Retrieval:
    found = state.objectives
    assert found is not None and found.retrieval is not None  # checked by is_retrieval
    return found.retrieval
