"""Prison escape (Boeda's WONDER prototype): cooperation by talking, with no commander.

alice is locked in cell-a behind bars-a, which rise only while someone stands on plate-a in the
switch room. Out means the yard, behind the exit door, whose key lies in the guard room. Her
GOAP planner finds no solo plan, so it plans with a cooperation step: another agent must make
``open(bars-a) == true`` hold; after it she leaves her cell, fetches the key, unlocks the exit
door and steps out into the yard. She asks the agents she knows, in order (bob in cell-b, carol
in the guard room, dave at the hall's end): RequestTalk, TalkReply, RequestCooperation,
CooperationReply, EndTalk. The helper walks to the plate and stands on it, then sends a
CooperationResult; alice leaves her cell as soon as she perceives the bars open.

    warband run scenarios/prison_escape.py --json
    warband run scenarios/prison_escape.py --processes --log runs/pe
    warband trace runs/pe --format mermaid
    warband explain runs/pe --agent alice --tick 1

Parameters:

- ``first_helper``: ``willing`` (bob helps), ``busy`` (bob is busy and refuses) or
  ``dislikes`` (bob dislikes alice and refuses): alice then asks carol;
- ``nobody_able``: no one can reach the plate: every helper says it cannot, alice cancels her
  Escape goal and rests instead;
- ``kill_helper``: bob agrees, then is killed at tick 10 while walking to the plate
  (``Actor.kill_at``, what ``warband run --kill bob@10`` does for any run): with
  ``--processes`` his OS process gets SIGKILL (the supervisor's restart finds him dead and
  stops at once); in one process his actor stops. alice hears that he left and asks carol at
  the next tick.

The ``--json`` outcome: ``escaped`` (alice reached the yard), ``where`` (where alice ended),
``helped_by``, ``refusals`` (who refused and why), ``cancelled`` (goals given up),
``plans_chosen`` (each plan alice chose, in order), ``departed`` (who left the run, by name).
"""

from __future__ import annotations

from typing import Any

from warband import Actor, ConfigurationError, Outcome, Params, RunResult, Scenario
from warband.agents import Agent
from warband.agents.cooperation import Conversation, Walking, cooperative_role
from warband.agents.execute import TaskHandler, TaskStatus
from warband.planning import Action, Brain, Goal, Task, eq, ne
from warband.world import AT, Member, World, load_map, waypoint_path

scenario = Scenario(
    "prison_escape",
    ticks=160,
    params={"first_helper": "willing", "nobody_able": False, "kill_helper": False},
    description="Boeda's prison escape: a prisoner asks others, one by one, to open her bars.",
)

PRISON = load_map("prison")
PRISONER = "alice"
HELPERS = {
    "bob": ("prisoners", "cell-b"),
    "carol": ("guards", "guard-room"),
    "dave": ("guards", "hall-end"),
}
OUT = PRISON.marker("exit").waypoint
"""Where alice counts as escaped: the yard, the map's exit, outside the prison wall."""
EXIT_DOOR = "exit-door"
EXIT_KEY = "exit-key"
KEY_ROOM = PRISON.object(EXIT_KEY).waypoint
DOOR_SIDE = PRISON.object(EXIT_DOOR).waypoint
"""The exit door's inside (hall-end): where alice unlocks it and steps out from."""
PLATE_ROOM = PRISON.object("plate-a").waypoint
KILLED_AT = 10
"""The tick bob is killed at (kill_helper): he agreed at tick 5 and is on his way by then."""


def _prisoner_brain() -> Brain:
    me = f"at({PRISONER})"
    return Brain(
        "prisoner",
        goals=[
            Goal("Escape", [eq(me, OUT)], relevancy=1.0),
            Goal("Rest", [eq(f"rested({PRISONER})", True)], relevancy=0.2),
        ],
        actions=[
            Action(
                "LeaveCell",
                preconditions=[eq(me, "cell-a"), eq("open(bars-a)", True, any_agent=True)],
                effects={me: "hall-a"},
            ),
            # Out of the cell, the walks start wherever alice is: a walk under way passes
            # waypoints that a fixed start would no longer match, and the plan would not replay.
            Action("GoToKey", preconditions=[ne(me, "cell-a")], effects={me: KEY_ROOM}),
            Action(
                "TakeKey",
                preconditions={me: KEY_ROOM, f"item_at({EXIT_KEY})": KEY_ROOM},
                effects={f"carrying({EXIT_KEY})": EXIT_KEY},
            ),
            Action("GoToExit", preconditions=[ne(me, "cell-a")], effects={me: DOOR_SIDE}),
            Action(
                "UnlockExit",
                preconditions={me: DOOR_SIDE, f"carrying({EXIT_KEY})": EXIT_KEY},
                effects={f"open({EXIT_DOOR})": True},
            ),
            Action(
                "StepOut",
                preconditions={me: DOOR_SIDE, f"open({EXIT_DOOR})": True},
                effects={me: OUT},
            ),
            Action("Rest", effects={f"rested({PRISONER})": True}),
        ],
    )


def _helper_brain(able: bool) -> Brain:
    hold = Action("HoldPlate", effects={"open(bars-a)": True, "pressed(plate-a)": True}, cost=2)
    return Brain("helper", actions=[hold] if able else [Action("Idle", effects={"idle": True})])


def _act(verb: str, **args: str) -> TaskHandler:
    def run(agent: Agent, task: Task) -> TaskStatus:
        return agent.act(task, verb, args)

    return run


def _walk_to(target: str) -> TaskHandler:
    """A task that walks the agent from where it is to ``target``, link by link."""

    def run(agent: Agent, task: Task) -> TaskStatus:
        here = next(
            (at.waypoint for at in AT.all(agent.memory.facts.facts("at")) if at.id == agent.id),
            None,
        )
        if here is None:
            return agent.fail_task(f"{agent.id} does not know where it is")
        path = waypoint_path(PRISON, here, target)
        if path is None:
            return agent.fail_task(f"no way from {here} to {target}")
        return agent.component(Walking).walk(task, path[1:])

    return run


def _rest(agent: Agent, task: Task) -> TaskStatus:
    agent.memory.remember("rested", agent.id, True)
    return "done"


def _idle(agent: Agent, task: Task) -> TaskStatus:
    return "done"


class Prisoner(Agent):
    """alice: ends the run once she is out, or once she gave up and rested."""

    _finishing = False

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        cancelled = self.component(Conversation).cancelled
        over = self._where() == OUT or ("Escape" in cancelled and self.plan is None)
        if over and not self._finishing:
            self._finishing = True
            self.finish_run("escaped" if self._where() == OUT else "escape cancelled")

    def _where(self) -> str | None:
        facts = self.memory.facts.facts("at")
        return next((str(f[2]) for f in facts if len(f) > 2 and f[1] == self.id), None)

    def final_state(self) -> dict[str, Any]:
        return {**super().final_state(), "at": self._where(), "escaped": self._where() == OUT}


def _check(params: Params) -> str:
    first = str(params["first_helper"])
    if first not in ("willing", "busy", "dislikes"):
        raise ConfigurationError(
            f"first_helper must be willing, busy or dislikes (--param first_helper=busy), "
            f"got {first!r}"
        )
    return first


@scenario.world
def make_world(params: Params, seed: int) -> World:
    _check(params)
    roster = {PRISONER: Member("prisoners", "civilian", start="cell-a")}
    roster.update(
        {name: Member(team, "civilian", start=start) for name, (team, start) in HELPERS.items()}
    )
    return World.create(PRISON, seed=seed, roster=roster)


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    first = _check(params)
    able = not bool(params["nobody_able"])
    prisoner_role = cooperative_role(
        "prisoner",
        _prisoner_brain(),
        {
            "LeaveCell": _act("move", waypoint="hall-a"),
            "GoToKey": _walk_to(KEY_ROOM),
            "TakeKey": _act("pickup", object=EXIT_KEY),
            "GoToExit": _walk_to(DOOR_SIDE),
            "UnlockExit": _act("use", object=EXIT_DOOR),
            "StepOut": _act("move", waypoint=OUT),
            "Rest": _rest,
        },
        task_timeout=120,
        acquaintances=list(HELPERS),
    )
    actors: list[Actor] = [Prisoner(PRISONER, prisoner_role, team="prisoners", seed=seed)]
    for name, (team, _) in HELPERS.items():
        first_one = name == "bob"
        helper_role = cooperative_role(
            "helper",
            _helper_brain(able),
            {"HoldPlate": _walk_to(PLATE_ROOM), "Idle": _idle},
            task_timeout=120,
            busy=first_one and first == "busy",
            affinity={PRISONER: 0.1} if first_one and first == "dislikes" else {},
        )
        helper = Agent(name, helper_role, team=team, seed=seed)
        if first_one and bool(params["kill_helper"]):
            helper.kill_at(KILLED_AT)
        actors.append(helper)
    return actors


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    alice = result.final_states.get(PRISONER, {})
    escaped = bool(alice.get("escaped"))
    details = {
        "escaped": escaped,
        "where": alice.get("at"),
        "helped_by": alice.get("helped_by", []),
        "refusals": alice.get("refusals", []),
        "cancelled": alice.get("cancelled", []),
        "plans_chosen": alice.get("plans_chosen", []),
        # Names only: why a killed process counts as gone (its restart stopped, or it stayed
        # away past the clock's grace) depends on timing, and the outcome must not.
        "departed": sorted(result.departed),
    }
    expect_escape = not bool(params["nobody_able"])
    helpers = ", ".join(details["helped_by"]) or "nobody"
    if escaped:
        summary = f"alice is out: she reached the {OUT} with the help of {helpers}"
    elif details["cancelled"]:
        summary = f"nobody could help: alice cancelled her escape and stays in {details['where']}"
    else:
        summary = f"alice is still inside, in {details['where']}"
    return Outcome(
        escaped == expect_escape and (escaped or bool(details["cancelled"])), summary, details
    )


if __name__ == "__main__":
    from warband.cli import run_file

    raise SystemExit(run_file(__file__))
