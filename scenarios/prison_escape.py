"""Prison escape (Boeda's WONDER prototype): cooperation by talking, with no commander.

alice is locked in cell-a behind bars-a, which rise only while someone stands on plate-a in the
switch room. Her GOAP planner finds no solo plan, so it plans with a cooperation step: another
agent must make ``open(bars-a) == true`` hold. She asks the agents she knows, in order (bob in
cell-b, carol in the guard room, dave at the hall's end): RequestTalk, TalkReply,
RequestCooperation, CooperationReply, EndTalk. The helper walks to the plate and stands on it,
then sends a CooperationResult; alice walks out as soon as she perceives the bars open.

    warband run scenarios/prison_escape.py --json
    warband run scenarios/prison_escape.py --processes --log runs/pe
    warband trace runs/pe --format mermaid

Parameters:

- ``first_helper``: ``willing`` (bob helps), ``busy`` (bob is busy and refuses) or
  ``dislikes`` (bob dislikes alice and refuses): alice then asks carol;
- ``nobody_able``: no one can reach the plate: every helper says it cannot, alice cancels her
  Escape goal and rests instead;
- ``kill_helper``: bob agrees, then is killed (his actor leaves the run) while walking to the
  plate; alice waits in vain, then asks carol.

The ``--json`` outcome: ``escaped``, ``helped_by``, ``refusals`` (who refused and why),
``cancelled`` (goals given up), ``plans_chosen`` (each plan alice chose, in order).
"""

from __future__ import annotations

from typing import Any

from warband import Actor, ConfigurationError, Outcome, Params, RunResult, Scenario
from warband.agents import Agent
from warband.agents.cooperation import CooperativeAgent, cooperative_role
from warband.agents.execute import TaskStatus
from warband.planning import Action, Brain, Goal, Task, eq
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
OUT = "hall-b"
"""Where alice counts as escaped: out of her cell and past the hall in front of it."""
KILLED_AFTER = 4
"""Ticks of walking after which bob is killed (kill_helper)."""


def _prisoner_brain() -> Brain:
    me = PRISONER
    return Brain(
        "prisoner",
        goals=[
            Goal("Escape", [eq(f"at({me})", OUT)], relevancy=1.0),
            Goal("Rest", [eq(f"rested({me})", True)], relevancy=0.2),
        ],
        actions=[
            Action(
                "LeaveCell",
                preconditions=[eq(f"at({me})", "cell-a"), eq("open(bars-a)", True, any_agent=True)],
                effects={f"at({me})": "hall-a"},
            ),
            Action("WalkOn", preconditions={f"at({me})": "hall-a"}, effects={f"at({me})": OUT}),
            Action("Rest", effects={f"rested({me})": True}),
        ],
    )


def _helper_brain(able: bool) -> Brain:
    hold = Action("HoldPlate", effects={"open(bars-a)": True, "pressed(plate-a)": True}, cost=2)
    return Brain("helper", actions=[hold] if able else [Action("Idle", effects={"idle": True})])


def _move(target: str) -> Any:
    def run(agent: Agent, task: Task) -> TaskStatus:
        assert isinstance(agent, CooperativeAgent)
        return agent.act(task, "move", {"waypoint": target})

    return run


def _rest(agent: Agent, task: Task) -> TaskStatus:
    agent.memory.remember("rested", agent.id, True)
    return "done"


def _hold_plate(agent: Agent, task: Task) -> TaskStatus:
    assert isinstance(agent, CooperativeAgent)
    here = next(
        (at.waypoint for at in AT.all(agent.memory.facts.facts("at")) if at.id == agent.id), None
    )
    if here is None:
        return agent.fail_task(f"{agent.id} does not know where it is")
    path = waypoint_path(PRISON, here, "switch")
    if path is None:
        return agent.fail_task(f"no way from {here} to the switch room")
    return agent.walk(task, path[1:])


def _idle(agent: Agent, task: Task) -> TaskStatus:
    return "done"


class Prisoner(CooperativeAgent):
    """alice: ends the run once she is out, or once she gave up and rested."""

    _finishing = False

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        over = self._where() == OUT or ("Escape" in self.cancelled and self.plan is None)
        if over and not self._finishing:
            self._finishing = True
            self.finish_run("escaped" if self._where() == OUT else "escape cancelled")

    def _where(self) -> str | None:
        facts = self.memory.facts.facts("at")
        return next((str(f[2]) for f in facts if len(f) > 2 and f[1] == self.id), None)

    def final_state(self) -> dict[str, Any]:
        return {**super().final_state(), "at": self._where(), "escaped": self._where() == OUT}


class Helper(CooperativeAgent):
    """A character alice may ask; with ``killed_after`` it dies that many ticks into its walk."""

    def __init__(
        self, actor_id: str, role: Any, *, killed_after: int | None = None, **options: Any
    ) -> None:
        super().__init__(actor_id, role, **options)
        self.killed_after = killed_after
        self._walking_since: int | None = None

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        if self.killed_after is None:
            return
        if self._route and self._walking_since is None:
            self._walking_since = tick
        if self._walking_since is not None and tick - self._walking_since >= self.killed_after:
            self.killed_after = None
            self.log.info("agent.killed", tick=tick, route=list(self._route))
            self.stop("killed on the way to the plate")


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
        {"LeaveCell": _move("hall-a"), "WalkOn": _move(OUT), "Rest": _rest},
        task_timeout=120,
    )
    helper_role = cooperative_role(
        "helper",
        _helper_brain(able),
        {"HoldPlate": _hold_plate, "Idle": _idle},
        task_timeout=120,
    )
    actors: list[Actor] = [
        Prisoner(PRISONER, prisoner_role, acquaintances=list(HELPERS), team="prisoners", seed=seed)
    ]
    for name, (team, _) in HELPERS.items():
        first_one = name == "bob"
        actors.append(
            Helper(
                name,
                helper_role,
                team=team,
                seed=seed,
                busy=first_one and first == "busy",
                affinity={PRISONER: 0.1} if first_one and first == "dislikes" else {},
                killed_after=KILLED_AFTER if first_one and bool(params["kill_helper"]) else None,
            )
        )
    return actors


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    alice = result.final_states.get(PRISONER, {})
    escaped = bool(alice.get("escaped"))
    details = {
        "escaped": escaped,
        "helped_by": alice.get("helped_by", []),
        "refusals": alice.get("refusals", []),
        "cancelled": alice.get("cancelled", []),
        "plans_chosen": alice.get("plans_chosen", []),
        "departed": dict(result.departed),
    }
    expect_escape = not bool(params["nobody_able"])
    if escaped:
        summary = f"alice escaped with the help of {', '.join(details['helped_by']) or 'nobody'}"
    elif details["cancelled"]:
        summary = "nobody could help: alice cancelled her escape"
    else:
        summary = "alice is still in her cell"
    return Outcome(
        escaped == expect_escape and (escaped or bool(details["cancelled"])), summary, details
    )


if __name__ == "__main__":
    from warband.cli import run_file

    raise SystemExit(run_file(__file__))
