"""Combat in play: who may shoot whom, the shots of a step (agents, then turrets) and the damage
they do, downing characters and destroying turrets.

The arithmetic of a single shot (hit chance, cover, splash) is :mod:`~warband.world.combat`'s;
this module applies it to the bodies of a :class:`~._state.WorldState`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ._bodies import Character, Turret
from ._senses import bodies
from ._state import Events, WorldState
from .classes import TURRET
from .combat import DOWNED_TICKS, MISSILE, resolve_shot
from .geometry import Point, distance, heading
from .perception import Noise, Observer, Senses, perceive
from .vocabulary import ALIVE, DEAD, DOWNED

Hit = tuple[str, str, str, int]
"""One blow of a step: (attacker, victim, weapon, damage)."""


def target_reason(state: WorldState, agent: Character, target: str, reach: float) -> str | None:
    """Why ``agent`` cannot shoot ``target`` with a weapon of range ``reach``, or None."""
    if target == agent.id:
        return "cannot fire at yourself"
    pos: Point
    if target in state.agents:
        victim = state.agents[target]
        if victim.life != ALIVE:
            return f"target {target!r} is {victim.life}"
        team, pos = victim.team, victim.position
    elif target in state.turrets:
        turret = state.turrets[target]
        team, pos = turret.team, turret.position
    else:
        return f"unknown target {target!r}: no agent or turret has that id"
    if team == agent.team:
        return f"target {target!r} is on your team ({team})"
    gap = distance(agent.position, pos)
    if gap > reach:
        return f"target {target!r} is out of range ({gap:.1f} > {reach:g} for {agent.selected})"
    # The world's sight index answers as the map would, and has most shots' sight lines in
    # memory already: the shooter saw its target in the last percept, from where it stands.
    if not state.sight.clear(agent.position, pos):
        return f"no line of sight to {target!r} (a wall is in the way)"
    return None


def resolve_combat(state: WorldState, events: Events) -> None:
    """Every queued shot in agent-id order, then every turret in turret-id order; the damage
    lands afterwards in the same order, so no shooter is downed before it fires."""
    hits: list[Hit] = []
    for agent_id in sorted(state.actions):
        verb, args = state.actions[agent_id]
        if verb == "fire":
            hits.extend(_shoot(state, state.agents[agent_id], str(args["target"]), events))
    for turret_id in sorted(state.turrets):
        hits.extend(_turret_fire(state, state.turrets[turret_id]))
    # A turret destroyed by an earlier hit of this step still fired in it, and may be hit again.
    turrets = dict(state.turrets)
    for attacker, victim, weapon, amount in hits:
        _damage(state, turrets, attacker, victim, weapon, amount, events)


def _shoot(state: WorldState, agent: Character, target: str, events: Events) -> list[Hit]:
    weapon = agent.weapons[agent.selected] if agent.selected is not None else None
    reason = "no weapon" if weapon is None else weapon.why_cannot_fire()
    if reason is None and weapon is not None:
        reason = target_reason(state, agent, target, weapon.weapon.range)
    if reason is not None or weapon is None:
        events.tell(agent.id, "act_failed", "fire", reason or "no weapon")
        return []
    victim_pos = state.position_of(target)
    agent.heading = heading(agent.position, victim_pos)
    weapon.fire()
    kind = "explosion" if weapon.weapon.kind == MISSILE else "gunfire"
    state.noises.append((Noise(kind, agent.position, agent.id), agent.waypoint))
    shot = resolve_shot(
        state.rng,
        weapon.weapon,
        target,
        victim_pos,
        distance(agent.position, victim_pos),
        crouched=target in state.agents and state.agents[target].crouched,
        cover=_cover(state, target, agent.position),
        bystanders=_bystanders(state, victim_pos, weapon.weapon.splash_radius),
    )
    events.tell(agent.id, "hit" if shot.hit else "missed", target)
    return [(agent.id, victim, weapon.weapon.name, dmg) for victim, dmg in shot.damage.items()]


def _turret_fire(state: WorldState, turret: Turret) -> list[Hit]:
    if turret.weapon.why_cannot_fire() is not None:
        return []
    eye = Observer(
        turret.id,
        turret.team,
        turret.position,
        senses=Senses(view_angle=math.tau, view_distance=TURRET.view_distance),
    )
    enemies = [b for b in bodies(state) if b.team != turret.team and b.id in state.agents]
    alive = [b for b in enemies if state.agents[b.id].life == ALIVE]
    seen = perceive([eye], alive, state.sight)[turret.id]
    if not seen:
        return []
    target = seen[0]
    turret.weapon.fire()
    state.noises.append((Noise("gunfire", turret.position, turret.id), turret.waypoint))
    shot = resolve_shot(
        state.rng,
        turret.weapon.weapon,
        target.id,
        target.position,
        target.distance,
        crouched=state.agents[target.id].crouched,
        cover=_cover(state, target.id, turret.position),
    )
    return [(turret.id, v, turret.weapon.weapon.name, d) for v, d in shot.damage.items()]


def _cover(state: WorldState, target: str, shooter: Point) -> float:
    """Cover of a target standing on a waypoint against a shooter; none while walking."""
    agent = state.agents.get(target)
    if agent is None or agent.progress > 0:
        return 0.0
    return state.map.waypoint(agent.waypoint).cover_from(shooter)


def _bystanders(state: WorldState, center: Point, radius: float) -> dict[str, Point]:
    if radius <= 0:
        return {}
    near: dict[str, Point] = {}
    for agent_id in sorted(state.agents):
        agent = state.agents[agent_id]
        if agent.life != DEAD and distance(agent.position, center) < radius:
            near[agent_id] = agent.position
    for turret_id in sorted(state.turrets):
        turret = state.turrets[turret_id]
        if distance(turret.position, center) < radius:
            near[turret_id] = turret.position
    return near


def _damage(
    state: WorldState,
    turrets: Mapping[str, Turret],
    attacker: str,
    victim: str,
    weapon: str,
    amount: int,
    ev: Events,
) -> None:
    """Land one hit. ``turrets`` are the turrets as the step began: one destroyed by an earlier
    hit is still known as an attacker, and takes no further hits."""
    if victim in turrets:
        turret = state.turrets.get(victim)
        if turret is not None and turret.health.damage(amount):
            del state.turrets[victim]
            ev.add("destroyed", victim, turret.team, attacker)
        return
    body = state.agents[victim]
    if body.life != ALIVE:
        return
    ev.tell(victim, "damaged", attacker, amount)
    if body.health.damage(amount):
        body.life = DOWNED
        body.timer = DOWNED_TICKS
        body.target, body.progress = None, 0.0
        state.movement.pop(victim, None)
        body.deaths += 1
        killer_team = turrets[attacker].team if attacker in turrets else state.team_of(attacker)
        owner = turrets[attacker].owner if attacker in turrets else attacker
        if owner in state.agents and killer_team != body.team:
            state.agents[owner].kills += 1
        ev.add("killed", victim, body.team, attacker, killer_team, weapon)
