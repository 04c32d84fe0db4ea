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
from warband.values import Value
from warband.world import (
    ALIVE,
    AMMO,
    AT,
    CAPTURED,
    KILLED,
    MOVING,
    RELOADING,
    SEES,
    STATE,
    WORLD_ID,
    Verb,
    World,
    load_map,
    waypoint_path,
)

scenario = Scenario(
    "skirmish",
    ticks=200,
    params={"bots": 3, "mode": "capture_and_hold"},
    description="Two teams of scripted bots play Capture and Hold on the Warzone map.",
)

TEAMS = ("red", "blue")
POINTS = {"cp-north": "e5", "cp-centre": "e3", "cp-south": "e1"}


WARZONE = load_map("warzone")
"""Loaded once: the bots find their way on it every tick."""


class ScriptedBot(Actor):
    """Shoots what it sees, else walks to its capture point and takes it.

    It reads its Percept's facts by name and field through the world's vocabulary
    (``SEES.all(facts)`` gives each sighting with ``.id``, ``.distance``, ``.team``...).
    """

    def __init__(self, actor_id: str, *, team: str, point: str) -> None:
        super().__init__(actor_id)
        self.team = team
        self.point = point
        self.facts: list[list[Value]] = []
        self.shots = 0
        self.kills = 0
        self.rejected: list[str] = []

    @handles(Percept)
    def on_percept(self, percept: Percept) -> None:
        self.facts = percept.facts
        self.kills += sum(1 for kill in KILLED.all(percept.events) if kill.killer == self.id)

    async def on_tick(self, tick: int) -> None:
        state = STATE.first(self.facts)
        if state is None or state.life != ALIVE:
            return
        act = self._choose()
        if act is not None:
            answer = await self.request(act)
            if isinstance(answer, ActResult) and not answer.accepted:
                self.rejected.append(f"{act.verb}: {answer.reason}")

    def _choose(self) -> Act | None:
        enemies = [seen for seen in SEES.all(self.facts) if seen.team != self.team]
        ammo = AMMO.first(self.facts)
        if enemies and ammo is not None:
            if ammo.amount == 0:
                reloading = RELOADING.first(self.facts) is not None
                return None if reloading else Act(recipient=WORLD_ID, verb=Verb.RELOAD)
            nearest = min(enemies, key=lambda seen: (seen.distance, seen.id))
            self.shots += 1
            return Act(recipient=WORLD_ID, verb=Verb.FIRE, args={"target": nearest.id})
        return self._walk_or_capture()

    def _walk_or_capture(self) -> Act | None:
        at = next((at for at in AT.all(self.facts) if at.id == self.id), None)
        if at is None or MOVING.first(self.facts) is not None:
            return None
        goal = POINTS[self.point]
        if at.waypoint == goal:
            owned = any(
                c.point == self.point and c.team == self.team for c in CAPTURED.all(self.facts)
            )
            return (
                None
                if owned
                else Act(recipient=WORLD_ID, verb=Verb.CAPTURE, args={"point": self.point})
            )
        path = waypoint_path(WARZONE, at.waypoint, goal)
        if path is None or len(path) < 2:
            return None
        return Act(recipient=WORLD_ID, verb=Verb.MOVE, args={"waypoint": path[1]})

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
        WARZONE,
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
    # The world's outcome (winner, scores, reason, tick) at the top level: `warband sweep` reads
    # `winner` there, as it does for any scenario with sides.
    details = {
        **(outcome or {"winner": None}),
        "acts_accepted": world.get("acts_accepted"),
        "shots": shots,
    }
    if outcome is None:
        return Outcome(False, f"no decision after {result.ticks} ticks", details)
    winner = outcome.get("winner") or "nobody"
    return Outcome(
        True, f"{winner} wins ({outcome.get('reason')}), scores {outcome.get('scores')}", details
    )


if __name__ == "__main__":
    from warband.cli import run_file

    raise SystemExit(run_file(__file__))
