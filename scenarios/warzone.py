"""Warzone: two factions of bots on the Warzone map, led by Killzone 3's hierarchy or freelance.

Every bot, squad and commander is its own actor running the one agent loop with an HTN domain
(warband/agents/domains/*.htn): the commander turns the game state into objectives and shares
its squads and bots among them, the squads order their members in command sequences, the bots
fight, capture and report back. A faction set to ``freelance`` has the same bots and nothing
above them: each goes for the nearest point its team does not hold.

    warband run scenarios/warzone.py
    warband run scenarios/warzone.py --param bots=12 --param blue=freelance --log runs/wz
    warband run scenarios/warzone.py --processes --param bots=6
    warband trace runs/wz --type Order --type CompletionReport
    warband explain runs/wz --agent red-squad-1 --tick 40

Parameters: ``bots`` per faction (1..12), ``mode`` (``capture_and_hold``, ``body_count``,
``search_and_retrieve``, ``assassination``, ``search_and_destroy``; red attacks in the last two),
``red`` and ``blue`` (``hierarchy`` or ``freelance``), ``time_limit`` (the mode's, in ticks),
``corridors`` (``on``, the default: squads keep their members to the squad's route, Listing
29.3; ``off``: the same orders, unrestricted; see :mod:`warband.agents.squad`).
Each mode has its commander objective source below (``_sources``): Capture and Hold attacks
the majority of points the team lacks and defends what it holds, and takes the TSP nearest its
base when it has a bot to spare; the others use :mod:`warband.agents.assignment`'s
``objectives_for_<mode>`` with TSPs below the rest. The
world decides who wins; the outcome details hold ``winner``, ``scores``, ``kills``,
``captures``, and per layer the ``orders`` it gave and the ``reports`` it sent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from warband import Actor, ConfigurationError, Outcome, Params, RunResult, Scenario
from warband.agents import Agent
from warband.agents.assignment import (
    Objective,
    choose_hiding_spot,
    objectives_for_assassination,
    objectives_for_body_count,
    objectives_for_capture_and_hold,
    objectives_for_search_and_destroy,
    objectives_for_search_and_retrieve,
)
from warband.agents.bot import bot_role
from warband.agents.commander import (
    Assigner,
    DirectOrders,
    ObjectiveSource,
    commander_role,
    travel_distance,
)
from warband.agents.squad import squad_role
from warband.planning import FactDB
from warband.world import MODES, World, load_map
from warband.world.vocabulary import DEFEND

scenario = Scenario(
    "warzone",
    ticks=400,
    params={
        "bots": 6,
        "mode": "capture_and_hold",
        "red": "hierarchy",
        "blue": "hierarchy",
        "time_limit": 400,
        "corridors": "on",
    },
    description="Two factions on Warzone: Killzone 3's hierarchy (or freelance bots) per side.",
)

TEAMS = ("red", "blue")
CONTROLS = ("hierarchy", "freelance")
CLASSES = ("assault", "medic", "engineer", "tactician")
SQUAD_SIZE = 4

WARZONE = load_map("warzone")
"""Loaded once per process: every bot and squad plans on it."""


def _count(params: Params) -> int:
    count = int(params["bots"])
    if not 1 <= count <= 12:
        raise ConfigurationError(f"bots must be 1..12 per faction (--param bots=N), got {count}")
    return count


def _control(params: Params, team: str) -> str:
    control = str(params[team])
    if control not in CONTROLS:
        raise ConfigurationError(
            f"--param {team}={control}: a faction is controlled by one of {', '.join(CONTROLS)}"
        )
    return control


def _corridors(params: Params) -> bool:
    value = str(params["corridors"])
    if value not in ("on", "off"):
        raise ConfigurationError(
            f"--param corridors={value}: squads keep members to corridors or not: say on or off"
        )
    return value == "on"


def _bots(team: str, count: int) -> list[str]:
    return [f"{team}-{i}" for i in range(1, count + 1)]


def _squads(team: str, count: int) -> list[str]:
    return [f"{team}-squad-{i}" for i in range(1, math.ceil(count / 2) + 1)]


def _commander(team: str) -> str:
    return f"{team}-commander"


@scenario.world
def make_world(params: Params, seed: int) -> World:
    count = _count(params)
    roster = {
        bot: {"team": team, "class": CLASSES[index % len(CLASSES)]}
        for team in TEAMS
        for index, bot in enumerate(_bots(team, count))
    }
    return World.create(
        WARZONE, seed=seed, mode=str(params["mode"]), roster=roster, time_limit=_time_limit(params)
    )


def _time_limit(params: Params) -> int:
    limit = int(params["time_limit"])
    if limit < 1:
        raise ConfigurationError(
            f"time_limit must be at least 1 tick (--param time_limit=N), got {limit}"
        )
    return limit


@scenario.observers
def commanders(params: Params) -> dict[str, str]:
    return {_commander(team): team for team in TEAMS if _control(params, team) == "hierarchy"}


MARKERS = {m.id: m.waypoint for m in WARZONE.markers}
POINTS = {m.id: m.waypoint for m in WARZONE.markers_of("capture")}
TSPS = sorted(m.id for m in WARZONE.markers_of("tsp"))
SPAWNS = {team: WARZONE.spawns(team)[0].waypoint for team in TEAMS}
DISTANCE = travel_distance(WARZONE)


def _owners(facts: FactDB, markers: Sequence[str]) -> dict[str, str | None]:
    owned = {str(f[1]): str(f[2]) for f in facts.facts("captured")}
    return {marker: owned.get(marker) for marker in markers}


def _focus(
    objectives: list[Objective], owners: Mapping[str, str | None], team: str
) -> list[Objective]:
    """Capture and Hold is won by holding a majority, so the commander attacks only as many
    points as it lacks for one, with all it has (the nearest to its base first, neutral before
    the enemy's); the others stay objectives of low weight, for bots to spare."""
    majority = len(owners) // 2 + 1
    lacking = majority - sum(1 for owner in owners.values() if owner == team)
    captures = sorted(
        (o for o in objectives if o.id.startswith("capture:") and o.target in owners),
        key=lambda o: (owners[o.target] is not None, DISTANCE(SPAWNS[team], o.waypoint), o.id),
    )
    if lacking <= 0 or len(captures) <= lacking:
        return objectives
    spare = {o.id for o in captures[lacking:]}
    return [replace(o, weight=0.5) if o.id in spare else o for o in objectives]


CH_TSP_WEIGHT = 0.1
"""Capture and Hold's TSP objective weighs less than a fourth of a spare point's (0.5), so the
deal of bots (D'Hondt) gives it a bot only when every point has its optimal number: sweeps at
12v12 showed that a bot taken from the fight for the points (weight 0.2 to 0.5, or a TSP
objective for every TSP) costs the hierarchy matches."""


def _nearest_unheld(tsps: Mapping[str, str | None], team: str) -> dict[str, str | None]:
    """The TSP nearest ``team``'s base that it does not hold (none when it holds them all)."""
    unheld = sorted((DISTANCE(SPAWNS[team], MARKERS[t]), t) for t, o in tsps.items() if o != team)
    return {unheld[0][1]: tsps[unheld[0][1]]} if unheld else {}


def _capture_and_hold(team: str) -> ObjectiveSource:
    def objectives(agent: Agent) -> list[Objective]:
        facts = agent.memory.facts
        owners = _owners(facts, sorted(POINTS))
        score = {str(f[1]): f[2] for f in facts.facts("score") if isinstance(f[2], int)}
        tsps = _owners(facts, TSPS)
        found = objectives_for_capture_and_hold(
            owners,
            MARKERS,
            team,
            score,
            _nearest_unheld(tsps, team),
            tsp_weight=CH_TSP_WEIGHT,
            tsp_bots=1,
        )
        return _focus(found, owners, team)

    return objectives


def _role(facts: FactDB, team: str) -> str | None:
    return next((str(f[2]) for f in facts.facts("role") if f[1] == team), None)


def _body_count(team: str) -> ObjectiveSource:
    regroups = sorted(m.id for m in WARZONE.markers_of("regroup"))

    def objectives(agent: Agent) -> list[Objective]:
        tsps = _owners(agent.memory.facts, TSPS)
        return objectives_for_body_count(
            team, regroup_points=regroups, marker_waypoints=MARKERS, tsps=tsps, tsp_weight=0.5
        )

    return objectives


def _search_and_retrieve(team: str) -> ObjectiveSource:
    def objectives(agent: Agent) -> list[Objective]:
        facts = agent.memory.facts
        lying = facts.facts("object_at")
        if not lying:
            return []
        thing, waypoint = str(lying[0][1]), str(lying[0][2])
        held = next((f for f in facts.facts("carrier") if f[1] == thing), None)
        returns = {str(f[4]): str(f[1]) for f in facts.facts("objective") if f[2] == "return"}
        return objectives_for_search_and_retrieve(
            team,
            object_id=thing,
            object_waypoint=waypoint,
            carrier=str(held[2]) if held else None,
            carrier_team=str(held[3]) if held else None,
            return_points=returns,
            marker_waypoints=MARKERS,
            tsps=_owners(facts, TSPS),
            tsp_weight=0.5,
        )

    return objectives


def _search_and_destroy(team: str) -> ObjectiveSource:
    def objectives(agent: Agent) -> list[Objective]:
        facts = agent.memory.facts
        role = _role(facts, team)
        if role is None:
            return []
        targets = {str(f[1]): str(f[2]) for f in facts.facts("target_state")}
        return objectives_for_search_and_destroy(
            team,
            role=role,
            targets=targets,
            marker_waypoints=MARKERS,
            tsps=_owners(facts, TSPS),
            tsp_weight=0.5,
        )

    return objectives


HIDING = {m.id: m.waypoint for m in WARZONE.markers_of("hiding")}


class _Assassination:
    """Assassination for one team: the objectives, and the VIP's own order (where to hide,
    chosen by travel cost and kept unless another spot is much closer)."""

    def __init__(self, team: str) -> None:
        self.team = team
        self.spot: str | None = None

    def vip(self, facts: FactDB) -> tuple[str | None, str | None]:
        """Our VIP (defending) or theirs (attacking), and where it is if known."""
        vip = next((str(f[1]) for f in facts.facts("vip")), None)
        where = next((str(f[2]) for f in facts.facts("vip_at") if f[1] == vip), None)
        return vip, where

    def objectives(self, agent: Agent) -> list[Objective]:
        facts = agent.memory.facts
        role = _role(facts, self.team)
        vip, where = self.vip(facts)
        if role is None or vip is None:
            return []
        if role == DEFEND and where is not None:
            self.spot = choose_hiding_spot(HIDING, where, DISTANCE, current=self.spot)
        return objectives_for_assassination(
            self.team,
            role=role,
            vip=vip,
            vip_waypoint=where,
            marker_waypoints=MARKERS,
            hiding_spot=self.spot if role == DEFEND else None,
            search_spots=sorted(HIDING),
            tsps=_owners(facts, TSPS),
            tsp_weight=0.5,
        )

    def direct(self, agent: Agent) -> dict[str, tuple[str, str]]:
        facts = agent.memory.facts
        vip, _ = self.vip(facts)
        if _role(facts, self.team) != DEFEND or vip is None or self.spot is None:
            return {}
        return {vip: ("hide", HIDING[self.spot])}


def _sources(mode: str, team: str) -> tuple[ObjectiveSource, DirectOrders | None]:
    """The commander's objective source (and direct orders) for ``mode``."""
    if mode == "assassination":
        assassination = _Assassination(team)
        return assassination.objectives, assassination.direct
    by_mode = {
        "capture_and_hold": _capture_and_hold,
        "body_count": _body_count,
        "search_and_retrieve": _search_and_retrieve,
        "search_and_destroy": _search_and_destroy,
    }
    if mode not in by_mode:
        raise ConfigurationError(
            f"--param mode={mode}: unknown game mode; known modes: {', '.join(MODES)}"
        )
    return by_mode[mode](team), None


@scenario.actors
def build(params: Params, seed: int) -> list[Actor]:
    count = _count(params)
    bot = bot_role(WARZONE)
    actors: list[Actor] = []
    for team in TEAMS:
        bots = _bots(team, count)
        if _control(params, team) == "freelance":
            actors += [Agent(b, bot, team=team, seed=seed) for b in bots]
            continue
        commander_id = _commander(team)
        squads = _squads(team, count)
        objectives, direct = _sources(str(params["mode"]), team)
        assigner = Assigner(
            bots,
            squads,
            objectives,
            DISTANCE,
            max_squad_size=SQUAD_SIZE,
            direct=direct,
        )
        actors.append(
            Agent(
                commander_id,
                commander_role(assigner),
                subordinates=[*squads, *bots],
                team=team,
                seed=seed,
            )
        )
        squad = squad_role(WARZONE, corridors=_corridors(params))
        actors += [Agent(s, squad, superior=commander_id, team=team, seed=seed) for s in squads]
        actors += [Agent(b, bot, superior=commander_id, team=team, seed=seed) for b in bots]
    return actors


@scenario.outcome
def judge(result: RunResult, params: Params) -> Outcome:
    world = result.final_states.get("world", {})
    outcome = world.get("outcome")
    layers: dict[str, dict[str, int]] = {}
    for state in result.final_states.values():
        role = state.get("role")
        if role is None:
            continue
        layer = layers.setdefault(str(role), {"orders": 0, "reports": 0, "agents": 0})
        layer["orders"] += int(state.get("orders_given", 0))
        layer["reports"] += int(state.get("reports_sent", 0))
        layer["agents"] += 1
    details = {
        "winner": None,
        "scores": world.get("scores"),
        **(outcome or {}),
        "kills": world.get("kills"),
        "captures": world.get("captures"),
        "orders": {layer: v["orders"] for layer, v in sorted(layers.items())},
        "reports": {layer: v["reports"] for layer, v in sorted(layers.items())},
        "control": {team: _control(params, team) for team in TEAMS},
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
