"""What an agent perceives: the facts of its own body, what it sees and hears, and common
knowledge; the names and fields of every fact are in :mod:`~warband.world.vocabulary`.

Sightings and hearings of every living agent are computed once per tick (the spatial grid and
sight index of :mod:`~warband.world.perception`) and cached until the world changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..values import Fact
from ._bodies import Character
from ._objectives import RETRIEVAL_KIND
from ._objectives import facts_for as objective_facts
from ._objects import item_kind, object_facts
from ._rules import spawn_options
from ._state import WorldState, rounded
from .classes import PLAYABLE
from .perception import Body, Observer, Senses, Sighting, hear_all, perceive
from .vocabulary import ALIVE, DEAD, DOWNED


def perception_inputs(state: WorldState) -> tuple[list[Observer], list[Body]]:
    """The observers (living agents) and bodies (everyone not dead, turrets) of this tick."""
    eyes = [_observer(a) for _, a in sorted(state.agents.items()) if a.life == ALIVE]
    return eyes, bodies(state)


def bodies(state: WorldState) -> list[Body]:
    """Everything that can be seen: characters not dead, then turrets, in id order."""
    found = [
        Body(a.id, a.team, a.position, a.cloaked, a.disguised)
        for _, a in sorted(state.agents.items())
        if a.life != DEAD
    ]
    found.extend(Body(t.id, t.team, t.position) for _, t in sorted(state.turrets.items()))
    return found


def _observer(agent: Character) -> Observer:
    senses = Senses(view_distance=60.0) if agent.cls.name == "scout" else Senses()
    return Observer(agent.id, agent.team, agent.position, agent.heading, senses)


def _senses(state: WorldState) -> tuple[dict[str, list[Sighting]], dict[str, list[Fact]]]:
    """Sightings and heard-noise facts of every living agent, computed once per tick."""
    cache = state.senses_cache
    if cache is not None and cache[0] == state.tick:
        return cache[1], cache[2]
    eyes, seen_bodies = perception_inputs(state)
    seen = perceive(eyes, seen_bodies, state.sight)
    where = {noise.source: waypoint for noise, waypoint in state.noises}
    heard_raw = hear_all(eyes, [noise for noise, _ in state.noises])
    heard: dict[str, list[Fact]] = {
        agent: list(dict.fromkeys(("heard", h.kind, where[h.source]) for h in hearings))
        for agent, hearings in heard_raw.items()
    }
    state.senses_cache = (state.tick, seen, heard)
    return seen, heard


def sightings(state: WorldState) -> dict[str, list[Sighting]]:
    """What every living agent sees this tick (agent id -> sightings)."""
    return _senses(state)[0]


INFLUENCE_DIGITS = 1
"""The influence facts' precision, in decimals: coarse, so a map that barely moved is the same
facts as the tick before (a percept is applied as the facts that changed)."""


def influence_facts(state: WorldState, team: str) -> Iterable[Fact]:
    """``(influence area friendly enemy)`` for every area of the world's strategic graph where
    ``team``'s influence map (when the world tracks one) has enemy influence that rounds (to
    :data:`INFLUENCE_DIGITS` decimals) above 0, both sides rounded: what a team plans by is
    where the enemy is, and the facts stay few. ``area`` is the area's id in
    :func:`~warband.world.build_strategic_graph` of the map."""
    influence, graph = state.influence.get(team), state.graph
    if influence is None or graph is None:
        return
    for area in graph.areas:
        enemy = round(influence.enemy(area.id), INFLUENCE_DIGITS)
        if enemy > 0:
            friendly = round(influence.friendly(area.id), INFLUENCE_DIGITS)
            yield ("influence", area.id, friendly, enemy)


def percepts(state: WorldState, agent: Character) -> list[Fact]:
    """The facts ``agent``'s sensors allow now, in the order the vocabulary lists them."""
    facts: list[Fact] = [
        ("tick", state.tick),
        ("self", agent.id, agent.team, agent.cls.name),
        ("state", agent.life),
    ]
    facts.extend(_body_facts(state, agent))
    if agent.life == ALIVE:
        seen, heard = _senses(state)
        facts.extend(_sight_facts(state, seen.get(agent.id, [])))
        facts.extend(heard.get(agent.id, []))
    facts.extend(team_knowledge(state, agent.team, "common"))
    if agent.life == DEAD:
        facts.extend(team_knowledge(state, agent.team, "influence"))  # to choose where to spawn
    return facts


def team_knowledge(state: WorldState, team: str, part: str) -> list[Fact]:
    """:func:`common_facts` (``part`` ``"common"``) or :func:`influence_facts`
    (``"influence"``) of ``team``, worked out once per tick: every member's percept holds
    them, and a thousand members need not build them a thousand times."""
    cache = state.team_cache
    if cache is None or cache[0] != state.tick:
        cache = state.team_cache = (state.tick, {})
    found = cache[1].get((team, part))
    if found is None:
        facts = common_facts(state, team) if part == "common" else influence_facts(state, team)
        found = cache[1][team, part] = list(facts)
    return found


def _body_facts(state: WorldState, agent: Character) -> Iterable[Fact]:
    yield ("at", agent.id, agent.waypoint)
    if agent.target is not None and agent.progress > 0:
        yield ("moving", agent.id, agent.waypoint, agent.target)
    yield ("position", rounded(agent.position[0]), rounded(agent.position[1]))
    yield ("health", agent.health.current)
    yield ("max_health", agent.health.maximum)
    if agent.life != ALIVE:
        yield ("respawn_in" if agent.life == DEAD else "bleeding_out", agent.timer)
    if agent.life == DEAD:
        for waypoint in sorted(set(spawn_options(state, agent.team))):
            yield ("spawn_option", waypoint)
        # What the team plays, to choose one's own class (respawn's class argument).
        mates = Counter(
            m.cls.name for m in state.agents.values() if m.team == agent.team and m is not agent
        )
        for name in PLAYABLE:
            yield ("team_class", name, mates[name])
    if agent.selected is not None:
        yield ("weapon", agent.selected)
    for name, weapon in agent.weapons.items():
        if weapon.weapon.clip_size > 0:
            yield ("ammo", name, weapon.clip)
            yield ("spare_ammo", name, weapon.spare)
        if weapon.reload_left > 0:
            yield ("reloading", name, weapon.reload_left)
    for flag, on in (
        ("crouched", agent.crouched),
        ("cloaked", agent.cloaked),
        ("disguised", agent.disguised),
    ):
        if on:
            yield (flag,)
    if agent.boost_left > 0:
        yield ("boosted", agent.boost_left)
    for item in agent.carrying:
        yield ("carrying", item, item_kind(state, item))
    found = state.objectives
    if found is not None and found.retrieval is not None and found.retrieval.carrier == agent.id:
        yield ("carrying", found.retrieval.object, RETRIEVAL_KIND)


def _sight_facts(state: WorldState, sightings: list[Sighting]) -> Iterable[Fact]:
    for s in sightings:
        waypoint = state.waypoint_of(s.id)
        if s.id in state.turrets:
            yield ("sees_turret", s.id, waypoint, rounded(s.distance), s.apparent_team)
        elif state.agents[s.id].life == DOWNED:
            yield ("sees_downed", s.id, waypoint, rounded(s.distance), s.apparent_team)
        else:
            yield ("sees", s.id, waypoint, rounded(s.distance), s.apparent_team)


def common_facts(state: WorldState, team: str) -> Iterable[Fact]:
    """What every member of ``team`` knows, wherever it stands: who owns which capture point,
    the symbolic objects, the team's turrets, the score, the time left and the mode's state.
    A commander, which has no body, is told exactly this."""
    for point, owner in sorted(state.owners.items()):
        if owner is not None:
            yield ("captured", point, owner)
    yield from object_facts(state)
    for turret_id, turret in sorted(state.turrets.items()):
        if turret.team == team:
            yield ("turret", turret_id, turret.team, turret.waypoint, turret.health.current)
    if state.mode is not None:
        for scorer, points in state.mode.score().items():
            yield ("score", scorer, points)
        yield ("time_left", max(state.mode.time_limit - state.tick, 0))
        yield from objective_facts(state, team)
