"""What an agent perceives: the facts of its own body, what it sees and hears, and common
knowledge; the names and fields of every fact are in :mod:`~warband.world.vocabulary`.

Sightings and hearings of every living agent are computed once per tick (the strips and sight
index of :mod:`~warband.world.perception`) and kept until the world changes (:class:`TickSenses`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from ..values import Fact
from ._bodies import Character
from ._objectives import RETRIEVAL_KIND
from ._objectives import facts_for as objective_facts
from ._objects import item_kind, object_facts
from ._rules import spawn_options
from ._state import WorldState, rounded
from .classes import PLAYABLE
from .perception import Body, Observer, SeenBody, Senses, heard_numbers, sight_lines
from .vocabulary import ALIVE, DEAD, DOWNED


def perception_inputs(state: WorldState) -> tuple[list[Observer], list[Body]]:
    """The observers (living agents) and bodies (everyone not dead, turrets) of this tick."""
    agents = [agent for _, agent in sorted(state.agents.items())]
    eyes = [_observer(a) for a in agents if a.life == ALIVE]
    return eyes, _bodies(state, agents)


def bodies(state: WorldState) -> list[Body]:
    """Everything that can be seen: characters not dead, then turrets, in id order."""
    return _bodies(state, [agent for _, agent in sorted(state.agents.items())])


def _bodies(state: WorldState, agents: list[Character]) -> list[Body]:
    found = [
        Body(a.id, a.team, a.position, a.cloaked, a.disguised) for a in agents if a.life != DEAD
    ]
    found.extend(Body(t.id, t.team, t.position) for _, t in sorted(state.turrets.items()))
    return found


_SCOUT_SENSES = Senses(view_distance=60.0)
"""A scout sees farther; the rest of its senses, and everyone else's, are the defaults (one
object each, shared: senses are immutable)."""
_SENSES = Senses()


def _observer(agent: Character) -> Observer:
    senses = _SCOUT_SENSES if agent.cls.name == "scout" else _SENSES
    return Observer(agent.id, agent.team, agent.position, agent.heading, senses)


class TickSenses:
    """What every living agent sees and hears in one tick, worked out once (a thousand
    percepts need not look a thousand times) and kept until the world changes.

    Kept raw: a sighting as :data:`~warband.world.perception.SeenBody` and a hearing as the
    index of the noise, so that a percept builds only its own facts, once per tick.
    """

    __slots__ = ("heard", "labels", "lines", "looks", "tick")

    def __init__(self, state: WorldState) -> None:
        eyes, seen_bodies = perception_inputs(state)
        self.tick = state.tick
        self.lines = sight_lines(eyes, seen_bodies, state.sight)
        """Agent id -> the bodies it sees, nearest first."""
        self.looks = [_look_of(state, body.id) for body in seen_bodies]
        """What a body seen looks like, by its index: its sight fact's name and its waypoint."""
        # A noise is heard as where its source was: the last waypoint it made a noise from.
        where = {noise.source: waypoint for noise, waypoint in state.noises}
        self.labels: list[Fact] = [
            ("heard", noise.kind, where[noise.source]) for noise, _ in state.noises
        ]
        """The fact of each noise of the tick, by its index (one tuple, shared by listeners)."""
        self.heard = heard_numbers(eyes, [noise for noise, _ in state.noises])
        """Agent id -> the indices of the noises it hears, nearest first."""

    def sight_facts(self, agent: str) -> list[Fact]:
        """``sees``, ``sees_downed`` and ``sees_turret`` facts of ``agent``, nearest first."""
        looks = self.looks
        facts: list[Fact] = []
        for d, body, _, team, number in self.lines.get(agent, ()):
            name, waypoint = looks[number]
            facts.append((name, body, waypoint, rounded(d), team))
        return facts

    def heard_facts(self, agent: str) -> list[Fact]:
        """``heard`` facts of ``agent``, one per kind of noise and waypoint, nearest first."""
        heard = self.heard.get(agent)
        if not heard:
            return []
        labels = self.labels
        if len(heard) == 1:
            return [labels[heard[0]]]
        return list(dict.fromkeys(map(labels.__getitem__, heard)))


def _look_of(state: WorldState, body: str) -> tuple[str, str]:
    if body in state.turrets:
        return "sees_turret", state.turrets[body].waypoint
    agent = state.agents[body]
    return ("sees_downed" if agent.life == DOWNED else "sees"), agent.waypoint


def senses(state: WorldState) -> TickSenses:
    """The senses of this tick, worked out on the first call after the world changed."""
    found = state.senses_cache
    if found is None or found.tick != state.tick:
        found = state.senses_cache = TickSenses(state)
    return found


def sightings(state: WorldState) -> dict[str, list[SeenBody]]:
    """What every living agent sees this tick (agent id -> the bodies, nearest first)."""
    return senses(state).lines


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
        found = senses(state)
        facts.extend(found.sight_facts(agent.id))
        facts.extend(found.heard_facts(agent.id))
    facts.extend(team_knowledge(state, agent.team, "common"))
    if agent.life == DEAD:
        facts.extend(team_knowledge(state, agent.team, "influence"))  # to choose where to spawn
    return facts


def team_knowledge(state: WorldState, team: str, part: str) -> list[Fact]:
    """What every member of ``team`` is told, worked out once per tick (every member's percept
    holds it, and a thousand members need not build it a thousand times): ``part``
    ``"common"`` (:func:`common_facts`), ``"influence"`` (:func:`influence_facts`), or for its
    dead, ``"spawns"`` (``spawn_option`` facts)."""
    cache = _team_cache(state)
    found = cache.get((team, part))
    if found is None:
        found = cache[team, part] = list(_TEAM_PARTS[part](state, team))
    return found


def _told_influence(state: WorldState, team: str) -> list[Fact]:
    """The influence facts ``team`` is told: worked out every ``influence_every`` ticks
    (:meth:`World.track_influence`) and on the first ask; the last telling holds between."""
    told = state.influence_told.get(team)
    if told is None or state.tick % state.influence_every == 0:
        told = state.influence_told[team] = list(influence_facts(state, team))
    return told


def _team_cache(state: WorldState) -> dict[tuple[str, str], list[Fact]]:
    cache = state.team_cache
    if cache is None or cache[0] != state.tick:
        cache = state.team_cache = (state.tick, {})
    return cache[1]


def _spawn_facts(state: WorldState, team: str) -> Iterable[Fact]:
    for waypoint in sorted(set(spawn_options(state, team))):
        yield ("spawn_option", waypoint)


def _class_facts(state: WorldState, team: str, own: str) -> list[Fact]:
    """``team_class`` facts for a dead member of ``team`` playing ``own``: what its mates play
    (the team less itself), worked out once per tick for each class the dead play."""
    cache = _team_cache(state)
    key = (team, f"team_class without a {own}")
    found = cache.get(key)
    if found is None:
        mates = Counter(m.cls.name for m in state.agents.values() if m.team == team)
        mates[own] -= 1
        found = cache[key] = [("team_class", name, mates[name]) for name in PLAYABLE]
    return found


def _body_facts(state: WorldState, agent: Character) -> list[Fact]:
    facts: list[Fact] = [("at", agent.id, agent.waypoint)]
    if agent.target is not None and agent.progress > 0:
        facts.append(("moving", agent.id, agent.waypoint, agent.target))
    facts.append(("position", rounded(agent.position[0]), rounded(agent.position[1])))
    facts.append(("health", agent.health.current))
    facts.append(("max_health", agent.health.maximum))
    if agent.life != ALIVE:
        facts.append(("respawn_in" if agent.life == DEAD else "bleeding_out", agent.timer))
    if agent.life == DEAD:
        facts.extend(team_knowledge(state, agent.team, "spawns"))
        # What the team plays, to choose one's own class (respawn's class argument).
        facts.extend(_class_facts(state, agent.team, agent.cls.name))
    if agent.selected is not None:
        facts.append(("weapon", agent.selected))
    for name, weapon in agent.weapons.items():
        if weapon.weapon.clip_size > 0:
            facts.append(("ammo", name, weapon.clip))
            facts.append(("spare_ammo", name, weapon.spare))
        if weapon.reload_left > 0:
            facts.append(("reloading", name, weapon.reload_left))
    if agent.crouched:
        facts.append(("crouched",))
    if agent.cloaked:
        facts.append(("cloaked",))
    if agent.disguised:
        facts.append(("disguised",))
    if agent.boost_left > 0:
        facts.append(("boosted", agent.boost_left))
    for item in agent.carrying:
        facts.append(("carrying", item, item_kind(state, item)))
    found = state.objectives
    if found is not None and found.retrieval is not None and found.retrieval.carrier == agent.id:
        facts.append(("carrying", found.retrieval.object, RETRIEVAL_KIND))
    return facts


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


_TEAM_PARTS: dict[str, Callable[[WorldState, str], Iterable[Fact]]] = {
    "common": common_facts,
    "influence": _told_influence,
    "spawns": _spawn_facts,
}
