"""Pittman's pirates (thesis §4.5): one goal, get drunk, and many ways to the rum.

Two GOAP :class:`~warband.agents.character.Character` pirates with the brain of
:mod:`warband.planning.domains.pirate`, each in his own harbour (ship, docks, tavern with one
bottle, storehouse with molasses, still), acting by Act messages and perceiving by Percepts:

- ``jack`` is **lawful**: he works at the docks for a gold coin, buys the bottle and drinks it;
- ``anne`` is **unlawful**: she walks to the tavern, steals the bottle and drinks it.

Parameter ``remove_bottle``: once both have planned (after the world's first step) the bottle
is taken from each tavern. Their plans no longer replay against what they perceive, so each
drops it and replans from where he stands: collect the molasses at the storehouse, brew rum at
the still, drink. The real world has no rum, so this scenario brings its own small world model
(:class:`HarbourWorld`, a :class:`warband.world.actor.WorldModel`).

    warband run scenarios/pirate.py --json
    warband run scenarios/pirate.py --param remove_bottle=true --processes --json

The ``--json`` outcome, per pirate: ``plans_chosen`` (in order), ``drops`` (why a plan was
dropped), ``acts`` (the verbs the world accepted), ``rum_from`` (bought, stolen or brewed) and
``drunk``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from warband import Actor, Outcome, Params, RunResult, Scenario
from warband.agents import Agent
from warband.agents.character import character_role
from warband.agents.execute import TaskStatus
from warband.planning import Task
from warband.planning.domains import pirate
from warband.values import Value
from warband.world import ActVerdict
from warband.world.actor import WorldModel

scenario = Scenario(
    "pirate",
    ticks=40,
    params={"remove_bottle": False},
    description="Pittman's pirates: a lawful one buys rum, an unlawful one steals it.",
)

PIRATES = {"jack": True, "anne": False}
"""Each pirate and whether he is lawful."""
REMOVED_AFTER_STEP = 1
"""The world step after which ``remove_bottle`` takes the bottles (both pirates planned)."""

TIME_LIMIT = 36
"""World steps after which the game ends whoever is drunk (before the run's 40 ticks)."""

_VERB_OF = {
    "Goto": "goto",
    "DrinkRum": "drink",
    "StealRum": "steal",
    "BuyRum": "buy",
    "WorkForGold": "work",
    "CollectMolasses": "collect",
    "BrewRum": "brew",
}
"""The world verb each GOAP action is run as."""
_RUM_FROM = {"buy": "bought", "steal": "stolen", "brew": "brewed"}


@dataclass
class Harbour:
    """One pirate's harbour and what he carries."""

    lawful: bool
    at: str = "ship"
    drunk: bool = False
    rum: bool = False
    gold: bool = False
    molasses: bool = False
    bottle_in_tavern: bool = True
    molasses_in_storehouse: bool = True
    rum_from: str = ""


class HarbourWorld(WorldModel):
    """One harbour per pirate (a WorldModel); ``remove_bottle`` empties the taverns."""

    def __init__(self, pirates: Mapping[str, bool], *, remove_bottle: bool) -> None:
        self.harbours = {name: Harbour(lawful) for name, lawful in pirates.items()}
        self.remove_bottle = remove_bottle
        self.acts: dict[str, list[str]] = {name: [] for name in pirates}
        self._queued: list[tuple[str, str, dict[str, Value]]] = []
        self.tick = 0

    def has_agent(self, agent_id: str) -> bool:
        return agent_id in self.harbours

    def submit(self, agent_id: str, verb: str, args: Mapping[str, Value]) -> ActVerdict:
        harbour = self.harbours.get(agent_id)
        if harbour is None:
            return ActVerdict(False, f"{agent_id} has no body in the harbour")
        problem = self._problem(harbour, verb, args)
        if problem:
            return ActVerdict(False, problem)
        self._queued.append((agent_id, verb, dict(args)))
        return ActVerdict(True)

    @staticmethod
    def _problem(harbour: Harbour, verb: str, args: Mapping[str, Value]) -> str:
        """Why ``verb`` cannot be done now (empty: it can)."""
        at = harbour.at
        needs = {"work": "docks", "buy": "tavern", "steal": "tavern", "collect": "storehouse"}
        needs["brew"] = "still"
        if verb == "goto":
            place = str(args.get("place"))
            return "" if place in pirate.WALK_COST else f"there is no {place} in this harbour"
        if verb in needs and at != needs[verb]:
            return f"{verb} is done at the {needs[verb]}, not at the {at}"
        if verb in ("buy", "steal") and not harbour.bottle_in_tavern:
            return "there is no bottle left in the tavern"
        if verb == "buy" and not harbour.gold:
            return "no gold to pay for the bottle"
        if verb == "steal" and harbour.lawful:
            return "a lawful pirate does not steal"
        if verb == "collect" and not harbour.molasses_in_storehouse:
            return "there is no molasses in the storehouse"
        if verb == "brew" and not harbour.molasses:
            return "no molasses to brew"
        if verb == "drink" and not harbour.rum:
            return "no rum to drink"
        if verb in ("goto", "drink", *needs):
            return ""
        return f"unknown verb {verb!r}; the harbour knows {', '.join(sorted(_VERB_OF.values()))}"

    def step(self) -> None:
        self.tick += 1
        for name, verb, args in self._queued:
            harbour = self.harbours[name]
            self.acts[name].append(verb)
            if verb == "goto":
                harbour.at = str(args["place"])
            elif verb == "work":
                harbour.gold = True
            elif verb in ("buy", "steal"):
                harbour.gold = harbour.gold and verb == "steal"
                harbour.bottle_in_tavern, harbour.rum = False, True
                harbour.rum_from = _RUM_FROM[verb]
            elif verb == "collect":
                harbour.molasses_in_storehouse, harbour.molasses = False, True
            elif verb == "brew":
                harbour.molasses, harbour.rum, harbour.rum_from = False, True, "brewed"
            elif verb == "drink":
                harbour.rum, harbour.drunk = False, True
        self._queued.clear()
        if self.remove_bottle and self.tick == REMOVED_AFTER_STEP:
            for harbour in self.harbours.values():
                harbour.bottle_in_tavern = False

    def percepts_for(self, agent_id: str) -> Sequence[Sequence[Value]]:
        h = self.harbours[agent_id]
        return [
            ("at", agent_id, h.at),
            ("lawful", agent_id, h.lawful),
            ("drunk", agent_id, h.drunk),
            ("has_rum", agent_id, h.rum),
            ("has_gold", agent_id, h.gold),
            ("has_molasses", agent_id, h.molasses),
            ("bottle_in", "tavern", h.bottle_in_tavern),
            ("molasses_in", "storehouse", h.molasses_in_storehouse),
        ]

    def outcome(self) -> Mapping[str, Any] | None:
        finished = all(h.drunk for h in self.harbours.values())
        if not finished and self.tick < TIME_LIMIT:
            return None
        return {
            "reason": "every pirate is drunk" if finished else "time is up",
            "drunk": {name: h.drunk for name, h in self.harbours.items()},
            "acts": {name: list(verbs) for name, verbs in self.acts.items()},
            "rum_from": {name: h.rum_from for name, h in self.harbours.items()},
        }

    def snapshot(self) -> dict[str, Any]:
        return {
            "tick": self.tick,
            "harbours": {n: vars(h).copy() for n, h in self.harbours.items()},
        }


def _run_as(verb: str) -> Any:
    def run(agent: Agent, task: Task) -> TaskStatus:
        args: dict[str, Value] = {"place": str(task.args[0])} if verb == "goto" else {}
        return agent.act(task, verb, args)

    return run


@scenario.world
def make_world(params: Params, seed: int) -> HarbourWorld:
    return HarbourWorld(PIRATES, remove_bottle=bool(params["remove_bottle"]))


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    actors: list[Actor] = []
    for name in PIRATES:
        brain = pirate.brain(name)
        tasks = {action.name: _run_as(_VERB_OF[action.name]) for action in brain.actions}
        role = character_role("pirate", brain, tasks, task_timeout=10)
        actors.append(Agent(name, role, team="crew", seed=seed))
    return actors


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    world = (result.final_states.get("world") or {}).get("outcome") or {}
    pirates = {}
    for name in PIRATES:
        state = result.final_states.get(name, {})
        rum_from = world.get("rum_from", {}).get(name, "")
        pirates[name] = {
            "lawful": PIRATES[name],
            "plans_chosen": state.get("plans_chosen", []),
            "drops": state.get("drops", []),
            "acts": world.get("acts", {}).get(name, []),
            "rum_from": rum_from,
            "drunk": bool(world.get("drunk", {}).get(name, False)),
        }
    if params["remove_bottle"]:
        expected = {name: "brewed" for name in PIRATES}
    else:
        expected = {name: "bought" if lawful else "stolen" for name, lawful in PIRATES.items()}
    got = {name: p["rum_from"] for name, p in pirates.items()}
    summary = ", ".join(f"{name}: rum {how or 'never got'}" for name, how in got.items())
    details = {"remove_bottle": bool(params["remove_bottle"]), "pirates": pirates}
    return Outcome(expected == got and all(p["drunk"] for p in pirates.values()), summary, details)


if __name__ == "__main__":
    from warband.cli import run_file

    raise SystemExit(run_file(__file__))
