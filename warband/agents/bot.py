"""The Killzone bot: the individual layer of the hierarchy, as a :class:`~warband.agents.Role`.

Its behaviour is the HTN domain ``domains/bot.htn`` (a text file a designer edits). This module
gives that domain what it needs from Python:

- **daemons** that derive facts each tick from the Percept: ``threat`` (every enemy in sight, with
  its waypoint and distance), ``nearest_threat`` and ``close_threat`` (the nearest, when it is
  within :data:`CLOSE_RANGE`), ``downed_mate`` (a downed team mate in sight, for medics);
- **functions** the domain calls: ``next_hop`` (the next waypoint towards a goal, within the area
  restrictions its squad set), ``point_waypoint`` (where a marker is), ``place_of`` (where an
  entity is: a marker, the retrieval object, a VIP, an agent in sight), ``home_point`` (the
  team's return point), ``near`` (two waypoints at most a link apart), ``can_capture`` (TSPs
  are for tacticians), ``in_range`` and ``weapon_for`` (Listing 29.1's weapon choice by
  distance), ``nearest_open_point`` (what a bot on its own goes for);
- **tasks**: ``!join ?squad`` (the commander put the bot in a squad: it reports there from now
  on), ``!restrict ?waypoints`` and ``!clear_restrictions`` (the squad's corridor, Listing
  29.3: ``(allowed_waypoint w)`` facts ``next_hop`` keeps to) and ``!go ?waypoint`` (start
  walking a link and go on with the plan: the bot shoots while the world walks it);
- **reports** up: a StatusReport to its squad every few ticks (life, waypoint, health) and a
  ThreatReport for every enemy it starts to see.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..messaging import Act, StatusReport, ThreatReport
from ..planning import FactDB, Task, load_domain_file
from ..values import Fact, Value
from ..world import AT, SEES, SEES_DOWNED, SELF, STATE, Map, get_weapon, waypoint_path
from .execute import TaskStatus, check_acts
from .memory import Memory
from .role import Role

if TYPE_CHECKING:
    from .agent import Agent

BOT_DOMAIN = Path(__file__).parent / "domains" / "bot.htn"
"""The shipped bot domain; copy it to change how bots behave."""

STATUS_EVERY = 5
"""Ticks between a bot's StatusReports to its squad."""

CLOSE_RANGE = 26.0
"""An enemy nearer than this is fought at once, from where the bot stands, whatever its order
(``close_threat``): walking on under fire costs a bot its cover. Tuned by sweeps (20 to 32)."""


def _me(memory: Memory) -> tuple[str, str] | None:
    me = SELF.first(memory.facts.facts("self"))
    return (me.id, me.team) if me is not None else None


def threat_daemon(memory: Memory, tick: int) -> list[Fact]:
    """``(threat enemy waypoint distance)`` for every enemy in sight, nearest first, and
    ``(nearest_threat ...)`` for the nearest."""
    me = _me(memory)
    if me is None:
        return []
    enemies = sorted(
        (seen for seen in SEES.all(memory.facts.facts("sees")) if seen.team != me[1]),
        key=lambda seen: (seen.distance, seen.id),
    )
    facts: list[Fact] = [("threat", s.id, s.waypoint, s.distance) for s in enemies]
    if enemies:
        nearest = enemies[0]
        facts.append(("nearest_threat", nearest.id, nearest.waypoint, nearest.distance))
        if nearest.distance <= CLOSE_RANGE:
            facts.append(("close_threat", nearest.id, nearest.distance))
    return facts


def downed_mate_daemon(memory: Memory, tick: int) -> list[Fact]:
    """``(downed_mate id waypoint)`` for the nearest downed team mate in sight."""
    me = _me(memory)
    if me is None:
        return []
    mates = sorted(
        (s for s in SEES_DOWNED.all(memory.facts.facts("sees_downed")) if s.team == me[1]),
        key=lambda seen: (seen.distance, seen.id),
    )
    return [("downed_mate", mates[0].id, mates[0].waypoint)] if mates else []


def bot_functions(game_map: Map) -> dict[str, object]:
    """The functions ``bot.htn`` calls, bound to ``game_map``."""
    points = {marker.id: marker.waypoint for marker in game_map.markers}
    capture_points = {m.id: m.waypoint for m in game_map.markers_of("capture")}

    def next_hop(facts: FactDB, here: Value, goal: Value) -> Value:
        allowed = {str(f[1]) for f in facts.facts("allowed_waypoint")} or None
        path = waypoint_path(game_map, str(here), str(goal), allowed=allowed)
        if path is None and allowed is not None:
            path = waypoint_path(game_map, str(here), str(goal))  # restrictions cut us off
        return path[1] if path is not None and len(path) > 1 else None

    def point_waypoint(facts: FactDB, point: Value) -> Value:
        return points.get(str(point))

    def in_range(facts: FactDB, weapon: Value, distance: Value) -> bool:
        return isinstance(distance, int | float) and distance <= get_weapon(str(weapon)).range

    def weapon_for(facts: FactDB, distance: Value) -> Value:
        """The carried weapon with rounds that reaches ``distance``, bullets before missiles."""
        if not isinstance(distance, int | float):
            return None
        loaded = sorted(str(f[1]) for f in facts.facts("ammo") if f[2])
        reaching = [w for w in loaded if get_weapon(w).range >= distance]
        reaching.sort(key=lambda w: (get_weapon(w).kind != "bullet", w))
        return reaching[0] if reaching else None

    def nearest_open_point(facts: FactDB, team: Value, here: Value) -> Value:
        """The capture point nearest ``here`` (in waypoints) that ``team`` does not hold."""
        held = {str(f[1]) for f in facts.facts("captured") if f[2] == team}
        best: tuple[int, str] | None = None
        for point, waypoint in sorted(capture_points.items()):
            if point in held:
                continue
            path = waypoint_path(game_map, str(here), waypoint)
            if path is not None and (best is None or (len(path), point) < best):
                best = (len(path), point)
        return best[1] if best is not None else None

    tsps = {m.id for m in game_map.markers_of("tsp")}
    returns = {str(m.team): m.waypoint for m in game_map.markers_of("return") if m.team}

    def place_of(facts: FactDB, entity: Value) -> Value:
        """Where ``entity`` is, as far as the bot knows: a marker's waypoint, the retrieval
        object's (lying or carried), a VIP's, an agent's in sight; None when unknown."""
        name = str(entity)
        if name in points:
            return points[name]
        for fact in facts.facts("object_at"):
            if fact[1] == name:
                return fact[2]
        for kind in ("vip_at", "at"):
            for fact in facts.facts(kind):
                if fact[1] == name:
                    return fact[2]
        for fact in facts.facts("sees"):
            if fact[1] == name:
                return fact[2]
        return None

    def home_point(facts: FactDB, team: Value) -> Value:
        return returns.get(str(team))

    def near(facts: FactDB, here: Value, there: Value) -> bool:
        return here == there or game_map.has_link(str(here), str(there))

    def can_capture(facts: FactDB, point: Value) -> bool:
        if str(point) not in tsps:
            return True
        return any(fact[3] == "tactician" for fact in facts.facts("self"))

    return {
        "can_capture": can_capture,
        "home_point": home_point,
        "near": near,
        "place_of": place_of,
        "nearest_open_point": nearest_open_point,
        "next_hop": next_hop,
        "point_waypoint": point_waypoint,
        "in_range": in_range,
        "weapon_for": weapon_for,
    }


def _join(agent: Agent, task: Task) -> TaskStatus:
    squad = task.args[0] if task.args else None
    if not isinstance(squad, str):
        return agent.fail_task(f"{task}: !join needs a squad id")
    agent.superior = squad
    agent.memory.forget("allowed_waypoint")
    return "done"


def _restrict(agent: Agent, task: Task) -> TaskStatus:
    """Keep to the squad's corridor: ``(allowed_waypoint w)`` for each comma-joined waypoint
    (none: no restriction), replacing the corridor of the bot's previous order sequence."""
    listed = task.args[0] if task.args else ""
    if not isinstance(listed, str):
        return agent.fail_task(f"{task}: !restrict needs comma-joined waypoint ids")
    agent.memory.forget("allowed_waypoint")
    for waypoint in sorted({w for w in listed.split(",") if w}):
        agent.memory.remember("allowed_waypoint", waypoint)
    return "done"


def _clear_restrictions(agent: Agent, task: Task) -> TaskStatus:
    agent.memory.forget("allowed_waypoint")
    return "done"


def _go(agent: Agent, task: Task) -> TaskStatus:
    waypoint = task.args[0] if task.args else None
    if not isinstance(waypoint, str):
        return agent.fail_task(f"{task}: !go needs a waypoint")
    # Done at once: the world walks the bot on (its movement queue) while the plan goes on.
    agent.send(Act(recipient=agent.world, verb="move", args={"waypoint": waypoint}))
    return "done"


class BotReports:
    """What a bot tells its squad: its status every few ticks, and the enemies it starts to see."""

    def __init__(self) -> None:
        self._reported: set[str] = set()

    def __call__(self, agent: Agent, tick: int) -> None:
        if agent.superior is None:
            return
        facts = agent.memory.facts
        state = STATE.first(facts.facts("state"))
        if tick % STATUS_EVERY == 1 and state is not None:
            at = next((a.waypoint for a in AT.all(facts.facts("at")) if a.id == agent.id), "")
            health = facts.facts("health")
            details: dict[str, Value] = {
                "life": state.life,
                "waypoint": at,
                "health": health[0][1] if health else 0,
            }
            agent.send(StatusReport(recipient=agent.superior, status=state.life, details=details))
        seen = {str(f[1]): f for f in facts.facts("threat")}
        for enemy in sorted(set(seen) - self._reported):
            agent.send(
                ThreatReport(recipient=agent.superior, threat=enemy, position=str(seen[enemy][2]))
            )
        self._reported = set(seen)


def bot_role(game_map: Map, *, domain: str | Path = BOT_DOMAIN, **options: object) -> Role:
    """The bot role on ``game_map``, from the shipped domain or a designer's copy."""
    functions = bot_functions(game_map)
    htn = load_domain_file(domain, functions, check=check_acts)  # type: ignore[arg-type]
    daemons: Mapping[str, object] = {"threat": threat_daemon, "downed_mate": downed_mate_daemon}
    return Role(
        "bot",
        htn,
        daemons=daemons,  # type: ignore[arg-type]
        tasks={
            "!join": _join,
            "!go": _go,
            "!restrict": _restrict,
            "!clear_restrictions": _clear_restrictions,
        },
        reporter=BotReports,
        **options,  # type: ignore[arg-type]
    )
