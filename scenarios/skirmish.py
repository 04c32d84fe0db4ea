"""Skirmish: two teams of scripted bots play Capture and Hold on the Warzone map.

The smallest run with a world in it: the world actor ticks the simulation, every bot reads its
Percepts (where it is, whom it sees, its ammo, who owns which point) and drives its body with
Acts (move, fire, reload, capture), which the world validates. The bots follow a fixed script,
no planner: shoot a visible enemy, else walk to the capture point they were given and take it.
The run ends when a team wins or the tick limit is reached; the world decides the score.

    warband run scenarios/skirmish.py
    warband run scenarios/skirmish.py --param bots=6 --ticks 300 --log runs/sk
    warband render runs/sk --out skirmish.svg

Parameters: ``bots`` per team (1..12), ``mode`` (``capture_and_hold`` or ``body_count``).
"""

from __future__ import annotations

from typing import Any

from warband import (
    Act,
    Actor,
    ActResult,
    ConfigurationError,
    Outcome,
    Params,
    Percept,
    RunResult,
    Scenario,
    handles,
)
from warband.world import World, load_map, waypoint_path

scenario = Scenario(
    "skirmish",
    ticks=200,
    params={"bots": 3, "mode": "capture_and_hold"},
    description="Two teams of scripted bots play Capture and Hold on the Warzone map.",
)

TEAMS = ("red", "blue")
POINTS = {"cp-north": "e5", "cp-centre": "e3", "cp-south": "e1"}


class ScriptedBot(Actor):
    """Shoots what it sees, else walks to its capture point and takes it."""

    def __init__(self, actor_id: str, *, team: str, point: str) -> None:
        super().__init__(actor_id)
        self.team = team
        self.point = point
        self.facts: list[list[Any]] = []
        self.shots = 0
        self.kills = 0
        self.rejected: list[str] = []

    @handles(Percept)
    def on_percept(self, percept: Percept) -> None:
        self.facts = [list(fact) for fact in percept.facts]
        self.kills += sum(1 for e in percept.events if e[0] == "killed" and e[3] == self.id)

    def _fact(self, name: str) -> list[Any] | None:
        return next((fact for fact in self.facts if fact[0] == name), None)

    async def on_tick(self, tick: int) -> None:
        state = self._fact("state")
        if state is None or state[1] != "alive":
            return
        act = self._choose()
        if act is not None:
            answer = await self.request(act)
            if isinstance(answer, ActResult) and not answer.accepted:
                self.rejected.append(f"{act.verb}: {answer.reason}")

    def _choose(self) -> Act | None:
        enemies = [f for f in self.facts if f[0] == "sees" and f[4] != self.team]
        ammo = self._fact("ammo")
        if enemies and ammo is not None:
            if ammo[2] == 0:
                return None if self._fact("reloading") else Act(recipient="world", verb="reload")
            nearest = min(enemies, key=lambda f: (f[3], f[1]))
            self.shots += 1
            return Act(recipient="world", verb="fire", args={"target": nearest[1]})
        return self._walk_or_capture()

    def _walk_or_capture(self) -> Act | None:
        at = next((f for f in self.facts if f[0] == "at" and f[1] == self.id), None)
        if at is None or self._fact("moving") is not None:
            return None
        goal = POINTS[self.point]
        if at[2] == goal:
            owned = any(
                f[0] == "captured" and f[1] == self.point and f[2] == self.team for f in self.facts
            )
            return (
                None
                if owned
                else Act(recipient="world", verb="capture", args={"point": self.point})
            )
        path = waypoint_path(load_map("warzone"), at[2], goal)
        if path is None or len(path) < 2:
            return None
        return Act(recipient="world", verb="move", args={"waypoint": path[1]})

    def final_state(self) -> dict[str, Any]:
        return {
            "team": self.team,
            "shots": self.shots,
            "kills": self.kills,
            "rejected": self.rejected[:5],
        }


def _roster(params: Params) -> dict[str, tuple[str, str]]:
    count = int(params["bots"])
    if not 1 <= count <= 12:
        raise ConfigurationError(f"bots must be 1..12 per team (--param bots=N), got {count}")
    classes = ("assault", "medic", "engineer", "tactician")
    return {
        f"{team}-{i}": (team, classes[i % len(classes)]) for team in TEAMS for i in range(count)
    }


@scenario.world
def make_world(params: Params, seed: int) -> World:
    world = World.create(
        load_map("warzone"),
        seed=seed,
        mode=str(params["mode"]),
        roster=_roster(params),
        time_limit=scenario.ticks,
    )
    world.track_influence()  # so `warband render` can draw each team's influence
    return world


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    points = sorted(POINTS)
    return [
        ScriptedBot(agent, team=team, point=points[index % len(points)])
        for index, (agent, (team, _)) in enumerate(sorted(_roster(params).items()))
    ]


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    world = result.final_states.get("world", {})
    outcome = world.get("outcome")
    shots = sum(
        int(state.get("shots", 0)) for name, state in result.final_states.items() if name != "world"
    )
    details = {"outcome": outcome, "acts_accepted": world.get("acts_accepted"), "shots": shots}
    if outcome is None:
        return Outcome(False, f"no decision after {result.ticks} ticks", details)
    winner = outcome.get("winner") or "nobody"
    return Outcome(
        True, f"{winner} wins ({outcome.get('reason')}), scores {outcome.get('scores')}", details
    )


if __name__ == "__main__":
    from warband.cli import run_file

    raise SystemExit(run_file(__file__))
