"""Movement in play: walking links at the class speed, turning back, stopping at closed doors,
and turning to look."""

from __future__ import annotations

from ._bodies import Character
from ._objects import closed_blocker
from ._state import Events, WorldState
from .geometry import distance, heading, move_toward
from .perception import Noise
from .vocabulary import ALIVE


def move(state: WorldState, events: Events) -> None:
    """Every queued movement, in agent-id order: ``wait`` stops, ``move`` walks on."""
    for agent_id in sorted(state.movement):
        verb, args = state.movement[agent_id]
        agent = state.agents[agent_id]
        if agent.life != ALIVE:
            continue
        if verb == "wait":
            if agent.progress == 0:
                agent.target = None
            del state.movement[agent_id]
            continue
        _walk(state, agent, str(args["waypoint"]), events)


def _walk(state: WorldState, agent: Character, target: str, events: Events) -> None:
    if agent.progress > 0 and target == agent.waypoint and agent.target is not None:
        # Turning back on a link: swap ends, the distance walked becomes the distance left.
        length = state.map.link_length(agent.waypoint, agent.target)
        agent.waypoint, agent.target = agent.target, agent.waypoint
        agent.progress = length - agent.progress
    agent.target = target
    if agent.progress == 0:
        blocker = closed_blocker(state, agent.waypoint, target)
        if blocker is not None:
            events.tell(agent.id, "blocked", blocker.id, agent.waypoint, target)
            agent.target = None
            del state.movement[agent.id]
            return
    start, end = state.map.position(agent.waypoint), state.map.position(target)
    length = distance(start, end)
    agent.progress = min(agent.progress + agent.speed, length)
    agent.heading = heading(start, end)
    agent.position = move_toward(start, end, agent.progress)
    if not agent.crouched:
        state.noises.append(
            (Noise("footsteps", agent.position, agent.id, loudness=0.3), agent.waypoint)
        )
    if agent.progress >= length:
        agent.waypoint, agent.target, agent.progress = target, None, 0.0
        agent.position = end
        del state.movement[agent.id]
        events.tell(agent.id, "arrived", target)


def look(state: WorldState, agent: Character, waypoint: str) -> None:
    """Turn ``agent`` towards ``waypoint`` now (what it sees changes at once)."""
    agent.heading = heading(agent.position, state.map.position(waypoint))
    state.senses_cache = None
