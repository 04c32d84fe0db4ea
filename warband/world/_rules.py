"""The per-tick game rules besides acts: timers, lives (bleeding out, respawning), captures,
scoring by the game mode, and the influence maps kept for rendering."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ._bodies import Character
from ._objects import drop_items
from ._state import Events, WorldState
from .classes import get_class
from .combat import RESPAWN_TICKS
from .geometry import distance, heading
from .maps import Marker
from .modes import ModeView
from .perception import SeenBody
from .vocabulary import ALIVE, DEAD, DOWNED

CAPTURE_TICKS: Final = 3
"""Uncontested ticks of ``capture`` needed to take a point."""


def run_timers(state: WorldState) -> None:
    """Weapon timers (reload, cooldown), boosts and turret weapons count down one tick."""
    for agent_id in sorted(state.agents):
        agent = state.agents[agent_id]
        for weapon in agent.weapons.values():
            weapon.tick()
        if agent.boost_left > 0:
            agent.boost_left -= 1
    for turret_id in sorted(state.turrets):
        state.turrets[turret_id].weapon.tick()


def update_lives(state: WorldState, events: Events) -> None:
    """The downed bleed out (``died``, dropping what they carry); the long dead respawn."""
    for agent_id in sorted(state.agents):
        agent = state.agents[agent_id]
        if agent.life == ALIVE:
            continue
        agent.timer -= 1
        if agent.timer > 0:
            continue
        if agent.life == DOWNED:
            agent.life, agent.timer = DEAD, RESPAWN_TICKS
            drop_items(state, agent, events)
            events.add("died", agent_id)
        else:
            _respawn(state, agent, events)


def spawn_options(state: WorldState, team: str) -> list[str]:
    """Waypoints a member of ``team`` may respawn at: the TSPs the team holds, then its base
    spawns (a dead bot chooses among them all, e.g. by travel cost and danger)."""
    return [*_held_tsps(state, team), *(m.waypoint for m in state.map.spawns(team))]


def _held_tsps(state: WorldState, team: str) -> list[str]:
    return [m.waypoint for m in state.map.markers_of("tsp") if state.owners[m.id] == team]


def _respawn(state: WorldState, agent: Character, events: Events) -> None:
    options = spawn_options(state, agent.team) or [agent.waypoint]
    chosen = agent.spawn_choice
    # The agent's choice (the verb respawn), if its team still holds it; else the world picks,
    # a held TSP first (nearer the fight, which is why tacticians take them).
    default = _held_tsps(state, agent.team) or options
    waypoint = chosen if chosen in options else state.rng.choice(default)
    position = state.map.position(waypoint)
    cls = get_class(agent.spawn_class) if agent.spawn_class else agent.cls
    fresh = Character(
        agent.id, agent.team, cls, waypoint, position, heading(position, state.map.centre)
    )
    fresh.kills, fresh.deaths = agent.kills, agent.deaths
    state.agents[agent.id] = fresh
    events.add("respawned", agent.id, waypoint)


def update_captures(state: WorldState, events: Events) -> None:
    """Points worked on by exactly one team, with no enemy near, progress; after
    :data:`CAPTURE_TICKS` such ticks in a row the team owns the point."""
    working: dict[str, set[str]] = {}
    for agent_id in sorted(state.actions):
        verb, args = state.actions[agent_id]
        agent = state.agents[agent_id]
        if verb == "capture" and agent.life == ALIVE:
            working.setdefault(str(args["point"]), set()).add(agent.team)
    for point in sorted(working):
        teams = working[point]
        marker = state.map.marker(point)
        if len(teams) != 1 or _contested(state, marker, next(iter(teams))):
            events.add("contested", point)
            continue
        team = next(iter(teams))
        held_team, ticks = state.progress.get(point, (team, 0))
        ticks = ticks + 1 if held_team == team else 1
        if ticks >= CAPTURE_TICKS:
            state.owners[point] = team
            state.progress.pop(point, None)
            events.add("captured", point, team)
        else:
            state.progress[point] = (team, ticks)


def _contested(state: WorldState, marker: Marker, team: str) -> bool:
    spot = state.map.position(marker.waypoint)
    return any(
        a.life == ALIVE and a.team != team and distance(a.position, spot) <= marker.radius
        for a in state.agents.values()
    )


def _seen_by(state: WorldState, team: str, seen: Mapping[str, Sequence[SeenBody]]) -> set[str]:
    """Everything some living member of ``team`` sees this tick."""
    return {
        sighting[1]
        for agent_id, sightings in seen.items()
        if state.agents[agent_id].team == team
        for sighting in sightings
    }


def _known(body: str, known: set[str] | None) -> bool:
    return known is None or body in known


def score(state: WorldState, events: Events) -> None:
    """The game mode scores the step's public events and the end of the tick; its own events
    (``game_over``) join the public ones."""
    if state.mode is None:
        return
    for event in list(events.public):
        state.mode.on_event(event, state.tick)
    alive: dict[str, int] = dict.fromkeys(state.map.teams, 0)
    for agent in state.agents.values():
        if agent.life == ALIVE:
            alive[agent.team] = alive.get(agent.team, 0) + 1
    view = ModeView(state.tick, dict(state.owners), alive)
    events.public.extend(state.mode.on_tick(view))


def update_influence(
    state: WorldState, events: Events, seen: Mapping[str, Sequence[SeenBody]] | None = None
) -> None:
    """Each team's influence map from its members and turrets, the enemies (all of them, or
    with ``seen``, the sightings of this tick, those the team's members see) and the step's
    deaths (when the world tracks influence)."""
    if not state.influence:
        return
    deaths: dict[str, list[str]] = {team: [] for team in state.map.teams}
    for event in events.public:
        if event[0] == "killed":
            victim = state.agents[str(event[1])]
            deaths.setdefault(victim.team, []).append(victim.waypoint)
    living = [a for _, a in sorted(state.agents.items()) if a.life == ALIVE]
    turrets = [t for _, t in sorted(state.turrets.items())]
    for team, influence in sorted(state.influence.items()):
        known = _seen_by(state, team, seen) if seen is not None else None
        influence.update(
            friendly=[a.waypoint for a in living if a.team == team],
            enemy=[a.waypoint for a in living if a.team != team and _known(a.id, known)],
            friendly_turrets=[t.waypoint for t in turrets if t.team == team],
            enemy_turrets=[t.waypoint for t in turrets if t.team != team and _known(t.id, known)],
            friendly_deaths=deaths.get(team, []),
            enemy_deaths=[w for t, ws in sorted(deaths.items()) if t != team for w in ws],
        )
