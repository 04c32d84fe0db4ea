"""F.E.A.R. (Orkin, "Three States and a Plan"): three characters, one goal set, three behaviours.

A soldier, an assassin and a rat share the goal set of :mod:`warband.planning.domains.fear`
(KillEnemy, Cover, Patrol) and differ only in their actions. Each is a GOAP
:class:`~warband.agents.character.Character`: it acts by Act messages, perceives by Percepts and
keeps a working memory (beliefs with confidence and age, failed actions):

- the **soldier** opens the warehouse door, walks in and fires at the player;
- the **assassin** cloaks, sticks to the wall above the player and lunges down at him (melee);
- the **rat** has no way to attack, so KillEnemy has no plan and it only patrols.

The real world has no door to kick nor window to dive through, so this scenario brings its own
small world model (:class:`FearWorld`, a :class:`warband.world.actor.WorldModel`): each
character faces its own player behind its own door (three side-by-side arenas, so one kill does
not end the others' fight).

Parameter ``door_blocked``: the door is barricaded. The soldier's OpenDoor act is refused; he
remembers the failure and replans to kick the door; that is refused too, so he replans to dive
through the window, which lands him beside the player, in melee range, and he kills him with
his fists.

Parameter ``failure_ticks`` (default 12): how long a character remembers a failed action. With
0 it forgets at once: the soldier behind the blocked door replans to open it again and again,
and never gets in (Orkin's point: the failure must be in working memory).

    warband run scenarios/fear.py --json
    warband run scenarios/fear.py --param door_blocked=true --processes --json

The ``--json`` outcome: per character its ``plans_chosen`` (in order), ``failures`` (action and
why), ``acts`` (the verbs the world accepted), ``position`` at the end and whether its player
is ``enemy_dead``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from warband import Actor, Outcome, Params, RunResult, Scenario
from warband.agents import Agent
from warband.agents.character import WorkingMemory, character_role, failed_actions
from warband.agents.component import Component
from warband.agents.execute import TaskStatus
from warband.planning import FactDB, Task
from warband.planning.domains import fear
from warband.values import Value
from warband.world import AT, ActVerdict
from warband.world.actor import WorldModel

scenario = Scenario(
    "fear",
    ticks=40,
    params={"door_blocked": False, "failure_ticks": 12},
    description="F.E.A.R.: soldier, assassin and rat with one goal set; the blocked door.",
)

CHARACTERS = {"soldier": "soldier", "assassin": "assassin", "rat": "rat"}
"""Each character's id and kind."""
PLAYER = fear.ENEMY
DOOR = fear.DOOR
WINDOW = "window-1"
TIME_LIMIT = 36
"""World steps after which the game ends whoever is done (before the run's 40 ticks, so the
outcome says what each character did even when one never finished)."""

_VERB_OF = {
    "Goto": "goto",
    "Patrol": "patrol",
    "RunCloaked": "patrol",
    "Attack": "fire",
    "Reload": "reload",
    "AttackMelee": "melee",
    "MeleeFists": "melee",
    "OpenDoor": "open_door",
    "KickDoor": "kick_door",
    "EnterWarehouse": "enter",
    "DiveThroughWindow": "dive",
    "Cloak": "cloak",
    "StickToWall": "stick_to_wall",
    "LungeFromWall": "lunge",
}
"""The world verb each GOAP action is run as."""


@dataclass
class Arena:
    """One character's side of the world: where it is, its weapon, its door and its player."""

    at: str = "corridor"
    weapon_loaded: bool = True
    cloaked: bool = False
    patrolled: bool = False
    door_open: bool = False
    player_dead: bool = False


class FearWorld(WorldModel):
    """The warehouse, its door and window, one arena per character (a WorldModel)."""

    def __init__(self, characters: Mapping[str, str], *, door_blocked: bool) -> None:
        self.kinds = dict(characters)
        self.door_blocked = door_blocked
        self.arenas = {agent: Arena() for agent in characters}
        self.acts: dict[str, list[str]] = {agent: [] for agent in characters}
        self._queued: list[tuple[str, str, dict[str, Value]]] = []
        self._events: dict[str, list[tuple[Value, ...]]] = {}
        self.tick = 0

    def has_agent(self, agent_id: str) -> bool:
        return agent_id in self.arenas

    def submit(self, agent_id: str, verb: str, args: Mapping[str, Value]) -> ActVerdict:
        arena = self.arenas.get(agent_id)
        if arena is None:
            return ActVerdict(False, f"{agent_id} has no body in the F.E.A.R. world")
        problem = self._problem(arena, verb, args)
        if problem:
            return ActVerdict(False, problem)
        self._queued.append((agent_id, verb, dict(args)))
        return ActVerdict(True)

    def _problem(self, arena: Arena, verb: str, args: Mapping[str, Value]) -> str:
        """Why ``verb`` cannot be done now in ``arena`` (empty: it can)."""
        where = arena.at
        if verb == "goto":
            node = str(args.get("node"))
            return "" if node in fear.WALKABLE else f"{node} cannot be reached on foot"
        if verb in ("patrol", "reload", "cloak", "stick_to_wall"):
            return ""
        if verb == "fire":
            if where != "warehouse":
                return f"no line of fire on {PLAYER} from the {where}"
            return "" if arena.weapon_loaded else "the weapon is empty"
        if verb == "melee":
            return "" if where == "beside-player" else f"{PLAYER} is out of reach from {where}"
        if verb == "lunge":
            return "" if where == "wall-above-player" else "not on the wall above the player"
        if verb in ("open_door", "kick_door", "dive") and where != "corridor":
            return f"{verb} needs the corridor, not the {where}"
        if verb == "open_door":
            return f"{DOOR} is held shut from the other side" if self.door_blocked else ""
        if verb == "kick_door":
            return f"{DOOR} does not give: it is barricaded" if self.door_blocked else ""
        if verb == "dive":
            return ""
        if verb == "enter":
            return "" if arena.door_open and where == "corridor" else f"{DOOR} is closed"
        return (
            f"unknown verb {verb!r}; this world knows {', '.join(sorted(set(_VERB_OF.values())))}"
        )

    def step(self) -> dict[str, list[tuple[Value, ...]]]:
        self.tick += 1
        events: dict[str, list[tuple[Value, ...]]] = {agent: [] for agent in self.arenas}
        for agent, verb, args in self._queued:
            arena = self.arenas[agent]
            self.acts[agent].append(verb)
            if verb == "goto":
                arena.at = str(args["node"])
            elif verb == "patrol":
                arena.patrolled = True
            elif verb == "reload":
                arena.weapon_loaded = True
            elif verb == "cloak":
                arena.cloaked = True
            elif verb == "stick_to_wall":
                arena.at = "wall-above-player"
            elif verb in ("open_door", "kick_door"):
                arena.door_open = True
            elif verb == "enter":
                arena.at = "warehouse"
            elif verb == "dive":
                arena.at = "beside-player"
                events[agent].append(("dived", agent, WINDOW))
            elif verb in ("fire", "melee", "lunge"):
                if verb == "lunge":
                    arena.at = "beside-player"
                arena.player_dead = True
                events[agent].append(("killed", PLAYER, agent, verb))
        self._queued.clear()
        return events

    def percepts_for(self, agent_id: str) -> Sequence[Sequence[Value]]:
        arena = self.arenas[agent_id]
        facts: list[tuple[Value, ...]] = [
            ("at", agent_id, arena.at),
            ("weapon_loaded", agent_id, arena.weapon_loaded),
            ("cloaked", agent_id, arena.cloaked),
            ("patrolled", agent_id, arena.patrolled),
            ("door_open", DOOR, arena.door_open),
            ("target_dead", PLAYER, arena.player_dead),
        ]
        if not arena.player_dead:
            facts.append(("sees", agent_id, PLAYER))
        return facts

    def events_for(self, agent_id: str, report: Any) -> Sequence[Sequence[Value]]:
        return list(report.get(agent_id, ())) if isinstance(report, dict) else []

    def _done(self, agent: str) -> bool:
        arena = self.arenas[agent]
        return arena.patrolled if self.kinds[agent] == "rat" else arena.player_dead

    def outcome(self) -> Mapping[str, Any] | None:
        finished = all(self._done(agent) for agent in self.arenas)
        if not finished and self.tick < TIME_LIMIT:
            return None
        return {
            "reason": "every character is done" if finished else "time is up",
            "positions": {agent: arena.at for agent, arena in self.arenas.items()},
            "acts": {agent: list(verbs) for agent, verbs in self.acts.items()},
            "enemy_dead": {agent: arena.player_dead for agent, arena in self.arenas.items()},
        }

    def snapshot(self) -> dict[str, Any]:
        return {
            "tick": self.tick,
            "arenas": {agent: vars(arena).copy() for agent, arena in self.arenas.items()},
        }


def _context(agent: str) -> Any:
    def context(facts: FactDB) -> fear.FearMemory:
        # The player is visible while working memory still believes it sees him.
        visible = any(len(f) > 2 and f[1] == agent and f[2] == PLAYER for f in facts.facts("sees"))
        return fear.FearMemory(enemy_visible=visible, failed=failed_actions(facts))

    return context


def _run_as(verb: str) -> Any:
    def run(agent: Agent, task: Task) -> TaskStatus:
        args: dict[str, Value] = {}
        if verb == "goto":
            args["node"] = str(task.args[0])  # a plan's task holds values
        return agent.act(task, verb, args)

    return run


class Whereabouts(Component):
    """A F.E.A.R. character's part that says where it ended (``at`` in its final state)."""

    def final_state(self) -> dict[str, Any]:
        agent = self.agent
        at = next(
            (a.waypoint for a in AT.all(agent.memory.facts.facts(AT.name)) if a.id == agent.id),
            None,
        )
        return {"at": at}


@scenario.world
def make_world(params: Params, seed: int) -> FearWorld:
    return FearWorld(CHARACTERS, door_blocked=bool(params["door_blocked"]))


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    actors: list[Actor] = []
    for agent, kind in CHARACTERS.items():
        brain = fear.brain(kind, agent)
        tasks = {action.name: _run_as(_VERB_OF[action.name]) for action in brain.actions}
        working = WorkingMemory(failure_ticks=int(params["failure_ticks"]))
        role = character_role(
            kind, brain, tasks, context=_context(agent), working_memory=working, task_timeout=10
        )
        role = role.with_components(Whereabouts)
        actors.append(Agent(agent, role, team="monolith", seed=seed))
    return actors


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    world = (result.final_states.get("world") or {}).get("outcome") or {}
    characters = {}
    for agent in CHARACTERS:
        state = result.final_states.get(agent, {})
        characters[agent] = {
            "plans_chosen": state.get("plans_chosen", []),
            "failures": state.get("failures", []),
            "acts": world.get("acts", {}).get(agent, []),
            "position": world.get("positions", {}).get(agent, state.get("at")),
            "enemy_dead": bool(world.get("enemy_dead", {}).get(agent, False)),
        }
    soldier, assassin, rat = (characters[a] for a in ("soldier", "assassin", "rat"))
    killed_by = {a: [v for v in c["acts"] if v in ("fire", "melee", "lunge")] for a, c in
                 characters.items()}  # fmt: skip
    expected = (
        (["melee"] if params["door_blocked"] else ["fire"]) == killed_by["soldier"]
        and ["lunge"] == killed_by["assassin"]
        and [] == killed_by["rat"]
        and "patrol" in rat["acts"]
    )
    summary = (
        f"soldier killed by {killed_by['soldier'] or 'nothing'} from {soldier['position']}, "
        f"assassin by {killed_by['assassin'] or 'nothing'}, rat "
        f"{'patrolled' if 'patrol' in rat['acts'] else 'did nothing'}"
    )
    details = {"door_blocked": bool(params["door_blocked"]), "characters": characters}
    return Outcome(expected and bool(world) and assassin["enemy_dead"], summary, details)


if __name__ == "__main__":
    from warband.cli import run_file

    raise SystemExit(run_file(__file__))
