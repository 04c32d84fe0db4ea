"""Acts: the table from each verb to its check (may this agent do it now?) and its effect.

:func:`reject_reason` validates an act in a fixed order (the agent, the game, the verb's shape
from :mod:`~warband.world.vocabulary`, one action per tick, then the verb's own check) and
:func:`queue` puts an accepted act in its queue. Actions take effect in :func:`perform_actions`
during the step; ``fire``, ``capture`` and the movement verbs have no effect of their own in
the table: their phase of the step resolves them (combat, captures, movement), after every
action, so that the order of a tick does not depend on the order of the acts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from . import _objectives
from ._battle import target_reason
from ._bodies import Character, Turret
from ._movement import look
from ._objects import check_use, closed_blocker, drop_item, use
from ._rules import spawn_options
from ._state import Args, Events, WorldState, article
from .classes import (
    BOOST,
    BOOST_TICKS,
    CAPTURE_TSP,
    CLOAK,
    DISGUISE,
    HEAL,
    HEAL_AMOUNT,
    PLACE_TURRET,
    PLAYABLE,
    REPAIR,
    REPAIR_AMOUNT,
    REVIVE,
)
from .combat import REVIVE_HEALTH
from .geometry import distance
from .vocabulary import ALIVE, DEAD, DOWNED, VERBS, Queue, Verb, act_problem

REACH: Final = 3.0
"""How close (map units) an agent must be to revive, heal or repair."""

Check = Callable[[WorldState, Character, Args], str | None]
"""Why an agent cannot do the act now (its shape is already checked), or None."""
Effect = Callable[[WorldState, Character, Args, Events], None]
"""What the act does when its turn in the step comes."""


@dataclass(frozen=True, slots=True)
class _Rule:
    check: Check
    effect: Effect | None = None
    """None when a phase of the step resolves the verb (movement, combat, captures)."""


# --- checks (the agent is alive, the args have the right shape) -------------------------------


def _check_move(state: WorldState, agent: Character, args: Args) -> str | None:
    target = str(args["waypoint"])
    game_map = state.map
    if not game_map.has_waypoint(target):
        return f"unknown waypoint {target!r}"
    origin = agent.waypoint
    if agent.target is not None and agent.progress > 0:
        if target in (agent.target, agent.waypoint):
            return None
        return (
            f"{agent.id} is between {agent.waypoint} and {agent.target}; "
            f"it can only go on to {agent.target} or back to {agent.waypoint}"
        )
    if target == origin:
        return f"{agent.id} is already at {target}"
    if not game_map.has_link(origin, target):
        if not game_map.line_of_sight(game_map.position(origin), game_map.position(target)):
            return f"cannot move from {origin} to {target}: a wall is in the way (no link)"
        return f"{target} is not linked to {origin} (move one link at a time)"
    blocker = closed_blocker(state, origin, target)
    if blocker is not None:
        verb = "are" if blocker.kind == "bars" else "is"
        return f"the {blocker.kind} {blocker.id!r} between {origin} and {target} {verb} closed"
    return None


def _always(state: WorldState, agent: Character, args: Args) -> str | None:
    return None


def _check_fire(state: WorldState, agent: Character, args: Args) -> str | None:
    if agent.selected is None:
        return f"{agent.id} ({agent.cls.name}) has no weapon"
    weapon = agent.weapons[agent.selected]
    blocked = weapon.why_cannot_fire()
    if blocked is not None:
        return blocked
    return target_reason(state, agent, str(args["target"]), weapon.weapon.range)


def _check_reload(state: WorldState, agent: Character, args: Args) -> str | None:
    if agent.selected is None:
        return f"{agent.id} ({agent.cls.name}) has no weapon"
    return agent.weapons[agent.selected].why_cannot_reload()


def _check_select_weapon(state: WorldState, agent: Character, args: Args) -> str | None:
    weapon = str(args["weapon"])
    if weapon not in agent.weapons:
        carried = ", ".join(agent.weapons) or "none"
        return f"{agent.cls.name} does not carry {weapon!r}; it carries: {carried}"
    if weapon == agent.selected:
        return f"{weapon} is already selected"
    return None


def _check_crouch(state: WorldState, agent: Character, args: Args) -> str | None:
    return f"{agent.id} is already crouching" if agent.crouched else None


def _check_stand(state: WorldState, agent: Character, args: Args) -> str | None:
    return None if agent.crouched else f"{agent.id} is already standing"


def _check_capture(state: WorldState, agent: Character, args: Args) -> str | None:
    point = str(args["point"])
    if point not in state.owners:
        known = ", ".join(sorted(state.owners)) or "none on this map"
        return f"unknown capture point {point!r}; capture points and TSPs: {known}"
    marker = state.map.marker(point)
    if marker.kind == "tsp" and not agent.cls.can(CAPTURE_TSP):
        return f"only tacticians capture TSPs; {agent.id} is {article(agent.cls.name)}"
    if state.owners[point] == agent.team:
        return f"{point} already belongs to {agent.team}"
    return _near(state, agent, marker.waypoint, marker.radius, point)


def _check_look(state: WorldState, agent: Character, args: Args) -> str | None:
    target = str(args["waypoint"])
    return None if state.map.has_waypoint(target) else f"unknown waypoint {target!r}"


def _near(
    state: WorldState, agent: Character, waypoint: str, radius: float, what: str
) -> str | None:
    gap = distance(agent.position, state.map.position(waypoint))
    if gap > radius:
        return f"{agent.id} is {gap:.1f} from {what} at {waypoint}; get within {radius:g}"
    return None


def _check_use(state: WorldState, agent: Character, args: Args) -> str | None:
    if "object" in args:
        return _check_use_object(state, agent, str(args["object"]))
    if "target" in args:
        return _check_use_target(state, agent, str(args["target"]))
    return _check_use_ability(state, agent, str(args["ability"]))


def _check_use_object(state: WorldState, agent: Character, object_id: str) -> str | None:
    if object_id in state.turrets:
        turret = state.turrets[object_id]
        if not agent.cls.can(REPAIR):
            return f"only engineers repair turrets; {agent.id} is {article(agent.cls.name)}"
        if turret.team != agent.team:
            return f"turret {object_id!r} belongs to {turret.team}"
        if turret.health.current == turret.health.maximum:
            return f"turret {object_id!r} is not damaged"
        return _near(state, agent, turret.waypoint, REACH, object_id)
    if _objectives.is_retrieval(state, object_id):
        return f"{object_id!r} is picked up with pickup, not use"
    if not state.map.has_object(object_id):
        return f"unknown object {object_id!r} on map {state.map.name!r}"
    return check_use(state, agent, state.map.object(object_id))


def _check_pickup(state: WorldState, agent: Character, args: Args) -> str | None:
    object_id = str(args["object"])
    if _objectives.is_retrieval(state, object_id):
        return _objectives.check_pickup(state, agent, object_id)
    if not state.map.has_object(object_id) or state.map.object(object_id).kind != "item":
        return _not_portable(state, object_id)
    return check_use(state, agent, state.map.object(object_id))


def _check_drop(state: WorldState, agent: Character, args: Args) -> str | None:
    object_id = str(args["object"])
    if _objectives.is_retrieval(state, object_id):
        return _objectives.check_drop(state, agent, object_id)
    if object_id in agent.carrying:
        return None
    if state.map.has_object(object_id) and state.map.object(object_id).kind == "item":
        return f"{agent.id} does not carry {object_id!r}"
    return _not_portable(state, object_id)


def _not_portable(state: WorldState, object_id: str) -> str:
    portable = [o.id for o in state.map.objects_of("item")]
    found = state.objectives
    if found is not None and found.retrieval is not None:
        portable.insert(0, found.retrieval.object)
    return (
        f"{object_id!r} is not something to carry; "
        f"objects to carry here: {', '.join(portable) or 'none'}"
    )


def _check_plant(state: WorldState, agent: Character, args: Args) -> str | None:
    return _objectives.check_work(state, agent, Verb.PLANT, str(args["target"]))


def _check_defuse(state: WorldState, agent: Character, args: Args) -> str | None:
    return _objectives.check_work(state, agent, Verb.DEFUSE, str(args["target"]))


def _check_respawn(state: WorldState, agent: Character, args: Args) -> str | None:
    if agent.life != DEAD:
        return f"{agent.id} is {agent.life}: only the dead choose where they respawn"
    options = sorted(set(spawn_options(state, agent.team)))
    if str(args["waypoint"]) not in options:
        return (
            f"{args['waypoint']!r} is not a spawn of team {agent.team} now; "
            f"choose one of its spawn_option facts: {', '.join(options) or 'none'}"
        )
    if "class" in args and str(args["class"]) not in PLAYABLE:
        return f"no playable class {args['class']!r}; choose one of {', '.join(PLAYABLE)}"
    return None


def _respawn_at(state: WorldState, agent: Character, args: Args, events: Events) -> None:
    agent.spawn_choice = str(args["waypoint"])
    agent.spawn_class = str(args["class"]) if "class" in args else None


_UNKNOWN_AGENT: Final = "unknown agent {target!r}"
_NOT_WOUNDED: Final = "{target} is not wounded"
_PAST_HELP: Final = "{target} is {life}; use a target to revive or heal a team mate"


def needs_no_help(target: str, reason: str) -> bool:
    """True when ``reason``, the world's refusal of ``use {"target": target}``, says the team
    mate needs no help (it is not wounded) or is past it (dead, or no such agent): asking again
    gets the same answer. Other refusals (too far, one action per tick) may pass."""
    return reason in (
        _NOT_WOUNDED.format(target=target),
        _PAST_HELP.format(target=target, life=DEAD),
        _UNKNOWN_AGENT.format(target=target),
    )


def _check_use_target(state: WorldState, agent: Character, target: str) -> str | None:
    other = state.agents.get(target)
    if other is None:
        return _UNKNOWN_AGENT.format(target=target)
    if other.team != agent.team:
        return f"{target} is not on your team"
    if other.life == DOWNED:
        if not agent.cls.can(REVIVE):
            return f"only medics revive; {agent.id} is {article(agent.cls.name)}"
    elif other.life == ALIVE and target != agent.id:
        if not agent.cls.can(HEAL):
            return f"only medics heal; {agent.id} is {article(agent.cls.name)}"
        if other.health.current == other.health.maximum:
            return _NOT_WOUNDED.format(target=target)
    else:
        return _PAST_HELP.format(target=target, life=other.life)
    gap = distance(agent.position, other.position)
    return None if gap <= REACH else f"{target} is {gap:.1f} away; get within {REACH:g}"


_ABILITIES: Final = {"turret": PLACE_TURRET, "cloak": CLOAK, "disguise": DISGUISE, "boost": BOOST}
"""``use {"ability": name}`` -> the class ability it needs."""


def _check_use_ability(state: WorldState, agent: Character, ability: str) -> str | None:
    if ability not in _ABILITIES:
        return f"unknown ability {ability!r}; abilities: {', '.join(_ABILITIES)}"
    if not agent.cls.can(_ABILITIES[ability]):
        return f"{agent.cls.name} cannot {ability}"
    if ability == "turret":
        if agent.progress > 0:
            return "place a turret while standing at a waypoint"
        if f"turret-{agent.id}" in state.turrets:
            return f"{agent.id} already has a turret (one at a time)"
    if ability == "boost" and agent.boost_left > 0:
        return f"{agent.id} is already boosted"
    return None


# --- effects ----------------------------------------------------------------------------------


def _reload(state: WorldState, agent: Character, args: Args, events: Events) -> None:
    if agent.selected is not None:
        agent.weapons[agent.selected].start_reload()


def _select_weapon(state: WorldState, agent: Character, args: Args, events: Events) -> None:
    agent.selected = str(args["weapon"])


def _crouch(state: WorldState, agent: Character, args: Args, events: Events) -> None:
    agent.crouched = True


def _stand(state: WorldState, agent: Character, args: Args, events: Events) -> None:
    agent.crouched = False


def _look(state: WorldState, agent: Character, args: Args, events: Events) -> None:
    look(state, agent, str(args["waypoint"]))


def _use(state: WorldState, agent: Character, args: Args, events: Events) -> None:
    if "target" in args:
        other = state.agents[str(args["target"])]
        if other.life == DOWNED:
            other.life = ALIVE
            other.timer = 0
            other.health.restore(REVIVE_HEALTH)
            events.add("revived", other.id, agent.id)
        elif other.life == ALIVE:
            other.health.heal(HEAL_AMOUNT)
            events.tell(other.id, "healed", agent.id, HEAL_AMOUNT)
        return
    if "ability" in args:
        _use_ability(state, agent, str(args["ability"]), events)
        return
    object_id = str(args["object"])
    if object_id in state.turrets:
        state.turrets[object_id].health.heal(REPAIR_AMOUNT)
        events.add("repaired", object_id, agent.id)
        return
    use(state, agent, state.map.object(object_id), events)


def _pickup(state: WorldState, agent: Character, args: Args, events: Events) -> None:
    object_id = str(args["object"])
    if _objectives.is_retrieval(state, object_id):
        _objectives.pickup(state, agent, events)
        return
    item = state.map.object(object_id)
    reason = check_use(state, agent, item)  # someone earlier in the tick may have taken it
    if reason is not None:
        events.tell(agent.id, "act_failed", Verb.PICKUP.value, reason)
        return
    use(state, agent, item, events)


def _drop(state: WorldState, agent: Character, args: Args, events: Events) -> None:
    object_id = str(args["object"])
    if _objectives.is_retrieval(state, object_id):
        if _objectives.check_drop(state, agent, object_id) is None:
            _objectives.drop(state, agent, events)
    elif object_id in agent.carrying:
        drop_item(state, agent, object_id, events)


def _use_ability(state: WorldState, agent: Character, ability: str, events: Events) -> None:
    if ability == "turret":
        turret = Turret(f"turret-{agent.id}", agent, agent.waypoint, agent.position)
        state.turrets[turret.id] = turret
        events.add("turret_placed", turret.id, agent.team, agent.waypoint)
    elif ability == "cloak":
        agent.cloaked = not agent.cloaked
    elif ability == "disguise":
        agent.disguised = not agent.disguised
    elif ability == "boost":
        agent.boost_left = BOOST_TICKS


# --- the table --------------------------------------------------------------------------------

_RULES: Final[Mapping[str, _Rule]] = {
    Verb.MOVE: _Rule(_check_move),
    Verb.WAIT: _Rule(_always),
    Verb.FIRE: _Rule(_check_fire),
    Verb.USE: _Rule(_check_use, _use),
    Verb.RELOAD: _Rule(_check_reload, _reload),
    Verb.SELECT_WEAPON: _Rule(_check_select_weapon, _select_weapon),
    Verb.CROUCH: _Rule(_check_crouch, _crouch),
    Verb.STAND: _Rule(_check_stand, _stand),
    Verb.CAPTURE: _Rule(_check_capture),
    Verb.LOOK: _Rule(_check_look, _look),
    Verb.PICKUP: _Rule(_check_pickup, _pickup),
    Verb.DROP: _Rule(_check_drop, _drop),
    Verb.PLANT: _Rule(_check_plant),
    Verb.DEFUSE: _Rule(_check_defuse),
    Verb.RESPAWN: _Rule(_check_respawn, _respawn_at),
}
"""Every verb of the vocabulary -> its check and effect (a test pins that none is missing)."""


def reject_reason(state: WorldState, agent_id: str, verb: str, args: Args) -> str | None:
    """Why the act is refused, or None: unknown, downed or dead agent (the dead may only
    ``respawn``), game over, a verb or
    arguments the vocabulary does not know, a second action in one tick, the verb's check."""
    agent = state.agents.get(agent_id)
    if agent is None:
        return f"unknown agent {agent_id!r}: it has no body in this world"
    if agent.life == DEAD and verb != Verb.RESPAWN:
        return (
            f"{agent_id} is dead (respawns in {agent.timer} ticks); the dead cannot act, "
            "except to choose their spawn (respawn)"
        )
    if agent.life == DOWNED:
        return f"{agent_id} is downed ({agent.timer} ticks to bleed out); wait for a medic"
    if state.mode is not None and state.mode.outcome() is not None:
        return "the game is over"
    shape = act_problem(verb, args)
    if shape is not None:
        return shape
    if VERBS[verb].queue is Queue.ACTION and agent_id in state.actions:
        queued = state.actions[agent_id][0]
        return f"{agent_id} already queued {queued!r} this tick; one action per tick"
    return _RULES[verb].check(state, agent, args)


def queue(state: WorldState, agent_id: str, verb: str, args: Args) -> None:
    """Queue an accepted act: a free verb takes effect now, the others in the next step."""
    kind = VERBS[verb].queue
    if kind is Queue.FREE:
        effect = _RULES[verb].effect
        if effect is not None:
            effect(state, state.agents[agent_id], args, Events())
    elif kind is Queue.MOVEMENT:
        state.movement[agent_id] = (verb, dict(args))
    else:
        state.actions[agent_id] = (verb, dict(args))


def perform_actions(state: WorldState, events: Events) -> None:
    """The effects of the queued actions, in agent-id order (living agents only)."""
    for agent_id in sorted(state.actions):
        verb, args = state.actions[agent_id]
        effect = _RULES[verb].effect
        agent = state.agents[agent_id]
        if effect is not None and agent.life == ALIVE:
            effect(state, agent, args, events)
