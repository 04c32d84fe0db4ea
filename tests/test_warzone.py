"""The Killzone 3 hierarchy playing Warzone: commanders, squads and bots as actors, orders down,
reports up, the world deciding the match."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, CommandResult, last_json_line, read_log_events
from tests.proc import stat, wait_until
from tests.runs import Ran, ScenarioRuns
from warband.agents import Agent, Role, ideal_distribution, objective_source
from warband.planning import parse_domain
from warband.scenario import load_scenario
from warband.values import Value
from warband.world import Map, World, load_map

WARZONE = "scenarios/warzone.py"
Cli = Callable[..., CommandResult]


HIERARCHY = ("--param", "bots=3", "--ticks", "120")
ROUND = (
    *("--param", "bots=2", "--param", "round=body_count,assassination"),
    *("--param", "time_limit=40"),
)
VIP = ("--param", "bots=3", "--param", "mode=assassination", "--ticks", "10")
FREELANCE = ("--param", "bots=2", "--param", "blue=freelance", "--ticks", "40")


def _mode_args(mode: str) -> tuple[str, ...]:
    return (
        "--param", "bots=2", "--param", f"mode={mode}", "--param", "time_limit=150",
        "--seed", str(MODE_SEEDS.get(mode, 0)),
    )  # fmt: skip


@pytest.fixture
def matches(scenario_runs: ScenarioRuns) -> Callable[[tuple[str, ...]], Ran]:
    """The one-process match of WARZONE with the given arguments, logged. The first test to ask
    plays every match of this file, two at a time (tests/runs.py): each test reads the match it
    would have played alone (same command; lockstep in one process plays the same at any speed)."""
    every = [HIERARCHY, ROUND, VIP, FREELANCE, *(_mode_args(mode) for mode in MODE_OBJECTIVES)]
    scenario_runs.side_by_side((WARZONE, args) for args in every)

    def match(args: tuple[str, ...]) -> Ran:
        return scenario_runs.run(WARZONE, *args)

    return match


def _chain(events: list[dict[str, object]], kind: str, sender: str, recipient: str) -> bool:
    return any(
        e.get("event") == "msg.recv"
        and e.get("msg_type") == kind
        and str(e.get("sender", "")).startswith(sender)
        and str(e.get("recipient", "")).startswith(recipient)
        for e in events
    )


def test_a_hierarchy_match_sends_orders_down_and_reports_up_across_three_layers(
    matches: Callable[[tuple[str, ...]], Ran],
) -> None:
    ran = matches(HIERARCHY)
    report = ran.summary()
    details = report["outcome_details"]
    assert {"winner", "scores", "kills", "captures", "orders", "reports"} <= set(details)
    assert details["orders"]["commander"] > 0
    assert details["orders"]["squad"] > 0
    assert details["reports"]["bot"] > 0
    events = read_log_events(ran.log)
    assert _chain(events, "Order", "red-commander", "red-squad-")
    assert _chain(events, "Order", "red-squad-", "red-")
    assert _chain(events, "CompletionReport", "red-", "red-squad-")
    assert _chain(events, "CompletionReport", "red-squad-", "red-commander")
    assert any(e.get("event") == "agent.plan" and e.get("agent") == "blue-squad-1" for e in events)


def _objectives(events: list[dict[str, Any]]) -> dict[str, set[tuple[str, str]]]:
    """Per commander, every (objective id prefix, kind) it generated during the match."""
    found: dict[str, set[tuple[str, str]]] = {}
    for event in events:
        if event.get("event") == "commander.objectives":
            seen = found.setdefault(str(event["agent"]), set())
            for objective_id, kind in event["objectives"]:
                seen.add((str(objective_id).partition(":")[0], str(kind)))
    return found


MODE_OBJECTIVES = {
    "capture_and_hold": {
        "red-commander": {("capture", "advance_to_waypoint"), ("defend", "defend_marker")},
        "blue-commander": {("capture", "advance_to_waypoint"), ("defend", "defend_marker")},
    },
    "body_count": {  # no TSPs in Body Count: the regroup markers
        "red-commander": {("hold", "defend_marker")},
        "blue-commander": {("hold", "defend_marker")},
    },
    "search_and_retrieve": {
        "red-commander": {
            ("retrieve", "advance_to_waypoint"),
            ("escort", "escort_entity"),
            ("return", "advance_to_waypoint"),
            ("attack", "attack_entity"),
            ("block", "defend_marker"),
        },
        "blue-commander": {
            ("retrieve", "advance_to_waypoint"),
            ("escort", "escort_entity"),
            ("attack", "attack_entity"),
        },
    },
    "assassination": {
        "red-commander": {("attack", "attack_entity")},
        "blue-commander": {("escort", "escort_entity"), ("hide", "defend_marker")},
    },
    "search_and_destroy": {
        "red-commander": {("destroy", "attack_entity"), ("guard", "defend_marker")},
        "blue-commander": {("defend", "defend_marker")},
    },
}
"""What each commander must have generated in a 2v2 match of seed 0 (seed ``MODE_SEEDS`` where
named; red attacks in the attack / defence modes); TSP captures come on top in Search and
Retrieve, Assassination and Search and Destroy."""

MODE_SEEDS: dict[str, int] = {"search_and_destroy": 2}
"""Modes played with a seed other than 0. A side that never holds a point never defends one, and
attackers that never arm a target never guard one: a mode goes here with a seed in which each
side does, when seed 0 stops showing it (in Search and Destroy's seed 0 today, red's attack on
the targets never arms one; Capture and Hold, played with seed 2 while its seeds 0 and 3 had a
side that never held a point, is back on seed 0 since the influence map is told every 5 ticks,
when seed 2's blue stopped holding one)."""


@pytest.mark.parametrize("mode", sorted(MODE_OBJECTIVES))
def test_every_mode_plays_to_an_end_with_the_mode_objectives_on_both_sides(
    matches: Callable[[tuple[str, ...]], Ran], mode: str
) -> None:
    ran = matches(_mode_args(mode))
    report = ran.summary()
    assert report["completed"], report
    assert report["ticks"] <= 150
    assert report["outcome_details"]["reason"]
    found = _objectives(read_log_events(ran.log))
    for commander, expected in MODE_OBJECTIVES[mode].items():
        assert expected <= found.get(commander, set()), (commander, found.get(commander))
    assert report["outcome_details"]["orders"]["squad"] > 0


def test_a_round_plays_the_modes_in_succession_and_the_commanders_follow_the_mode(
    matches: Callable[[tuple[str, ...]], Ran],
) -> None:
    ran = matches(ROUND)
    details = ran.summary()["outcome_details"]
    missions = [(m["mode"], m["attackers"]) for m in details["missions"]]
    assert [("body_count", None), ("assassination", "red"), ("assassination", "blue")] == missions
    won = {team: sum(m["winner"] == team for m in details["missions"]) for team in ("red", "blue")}
    assert won == details["scores"]
    # Each commander took up each mode's objectives as the world changed mode: Body Count's
    # markers to hold, and in Assassination both the attack on the VIP and its escort.
    found = _objectives(read_log_events(ran.log))
    for commander in ("red-commander", "blue-commander"):
        kinds = {prefix for prefix, _kind in found[commander]}
        assert {"hold", "attack", "escort"} <= kinds, (commander, kinds)


def test_a_round_of_an_unknown_mode_is_refused_naming_the_parameter(warband_cli: Cli) -> None:
    result = warband_cli("run", WARZONE, "--param", "round=body_count,king_of_the_hill")
    assert 0 != result.returncode
    assert "--param round=body_count,king_of_the_hill" in result.stderr
    assert "unknown mode 'king_of_the_hill'" in result.stderr


def test_the_assassination_vip_is_told_by_its_commander_where_to_hide(
    matches: Callable[[tuple[str, ...]], Ran],
) -> None:
    ran = matches(VIP)
    ran.summary()  # the match succeeded
    hiding = {m.waypoint for m in load_map("warzone").markers_of("hiding")}
    told = {
        (str(e["agent"]), str(order[4]))
        for e in read_log_events(ran.log)
        if e.get("event") == "agent.plan" and isinstance(e.get("memory"), dict)
        for order in e["memory"].get("orders", [])
        if order[2] == "blue-commander" and order[3] == "hide"
    }
    assert 1 == len(told), told
    ((vip, spot),) = told
    assert vip.startswith("blue-")
    assert spot in hiding


def test_a_freelance_faction_has_no_commander_and_no_squads(
    matches: Callable[[tuple[str, ...]], Ran],
) -> None:
    report = matches(FREELANCE).summary()  # logged, unlike before: the summary is the same
    assert {"red": "hierarchy", "blue": "freelance"} == report["outcome_details"]["control"]
    assert "blue-commander" not in report["pids"] or report["processes"] == 1
    assert report["messages_sent"] > 0


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("bots=129", "bots must be 1..128 per faction"),
        ("red=robots", "a faction is controlled by one of hierarchy, freelance"),
        ("mode=tag", "unknown game mode"),
        ("time_limit=0", "time_limit must be at least 1 tick"),
        ("influence_every=0", "influence_every=0: the ticks between two tellings"),
    ],
)
def test_bad_warzone_parameters_are_one_clear_line(
    warband_cli: Cli, param: str, message: str
) -> None:
    result = warband_cli("run", WARZONE, "--param", param)
    assert 2 == result.returncode
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"bots": "1"}, "warzone"),
        ({"bots": "12"}, "warzone"),
        ({"bots": "13"}, "warzone-x2"),
        ({"bots": "24"}, "warzone-x2"),
        ({"bots": "25"}, "warzone-x4"),
        ({"bots": "48"}, "warzone-x4"),
        ({"bots": "96"}, "warzone-x4"),
        ({"bots": "48", "map": "warzone"}, "warzone"),
        ({"bots": "6", "map": "warzone-x2"}, "warzone-x2"),
    ],
)
def test_map_auto_plays_on_the_smallest_warzone_map_made_for_the_bots(
    params: dict[str, str], expected: str
) -> None:
    scenario = load_scenario(REPO / WARZONE)
    resolved = scenario.resolve_params(params)
    world = scenario.build_world(resolved, 1)
    assert isinstance(world, World)
    assert expected == world.map.name


@pytest.mark.parametrize(
    ("params", "score", "kills"),
    [
        ({"bots": "12"}, 100, 20),
        ({"bots": "48", "map": "warzone"}, 100, 20),
        ({"bots": "24"}, 200, 40),
        ({"bots": "48"}, 400, 80),
        ({"bots": "6", "map": "warzone-x4"}, 400, 80),
    ],
)
def test_the_targets_that_grow_with_the_battle_grow_with_the_copies_of_warzone(
    params: dict[str, str], score: int, kills: int
) -> None:
    scenario = load_scenario(REPO / WARZONE)
    targets = []
    for mode in ("capture_and_hold", "body_count", "search_and_retrieve"):
        world = scenario.build_world(scenario.resolve_params({**params, "mode": mode}), 1)
        assert isinstance(world, World) and world.mode is not None
        assert 400 == world.mode.time_limit
        targets.append(
            getattr(
                world.mode,
                {"capture_and_hold": "target_score", "body_count": "target_kills"}.get(
                    mode, "target_returns"
                ),
            )
        )
    assert [score, kills, 3] == targets  # one object to return: its target stays


def test_a_commander_perceives_what_its_team_knows_without_a_body() -> None:
    world = World.create(
        load_map("warzone"),
        seed=1,
        mode="capture_and_hold",
        roster={"red-1": {"team": "red", "class": "assault"}},
    )
    facts = world.team_facts("red")
    assert ("tick", 0) == facts[0]
    assert {("score", "red", 0), ("score", "blue", 0)} <= set(facts)
    with pytest.raises(KeyError, match="unknown team 'green'"):
        world.team_facts("green")


def _last_plan_tick(log: Path) -> int:
    ticks = [
        int(event["tick"])
        for line in log.read_text().splitlines()
        if line.strip() and '"agent.plan"' in line
        for event in [json.loads(line)]
    ]
    return max(ticks, default=-1)


@pytest.mark.processes
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_bot_killed_mid_match_is_dropped_by_its_squad_and_commander_and_the_match_goes_on(
    tmp_path: Path,
) -> None:
    logs, out = tmp_path / "logs", tmp_path / "out.json"
    with out.open("wb") as stdout:
        launcher = subprocess.Popen(
            [
                sys.executable, "-m", "warband", "run", WARZONE, "--processes",
                "--param", "bots=2", "--param", "time_limit=300", "--log", str(logs), "--json",
                "-q",
            ],
            cwd=REPO, stdout=stdout, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
    groups: set[int] = {launcher.pid}
    try:
        # The run's log files are named <agent>.<pid>.jsonl: that is how we find the bot.
        wait_until(lambda: any(logs.glob("red-1.*.jsonl")), 60, "red-1's log file")
        bot_log = next(logs.glob("red-1.*.jsonl"))
        bot_pid = int(bot_log.name.split(".")[1])
        found = stat(bot_pid)
        assert found is not None, "red-1's process is gone before the kill"
        groups.add(found[2])
        wait_until(lambda: _last_plan_tick(bot_log) >= 20, 60, "red-1 to play 20 ticks")
        killed_at = _last_plan_tick(bot_log)
        os.kill(bot_pid, signal.SIGKILL)
        launcher.wait(timeout=120)
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        if launcher.poll() is None:
            launcher.kill()
        launcher.wait()
    assert 0 == launcher.returncode
    report = last_json_line(out.read_text())
    assert report["completed"] and report["outcome_details"]["reason"], report
    assert report["ticks"] > killed_at + 10
    assert bot_pid == report["pids"]["red-1"][0]
    assert 2 <= len(report["pids"]["red-1"])  # the supervisor started it again
    events = read_log_events(logs)

    def left(agent: str) -> bool:
        return any(
            e.get("event") == "agent.subordinate_left"
            and e.get("agent") == agent
            and e.get("peer") == "red-1"
            and not str(e.get("reason")).startswith("left")
            for e in events
        )

    assert left("red-squad-1")
    assert left("red-commander")
    led = [
        (int(e["tick"]), step)
        for e in events
        if e.get("event") == "agent.plan" and e.get("agent") == "red-squad-1"
        for step in e.get("plan") or []
        if str(step).startswith("(!take_members")
    ]
    after = [step for tick, step in sorted(led) if tick > killed_at]
    assert "(!take_members [red-2] 0)" in after, after  # re-led without the dead bot (lane 0)
    back = after[after.index("(!take_members [red-2] 0)") :]
    assert any("red-1" in step for step in back), back  # and with it once it came back
    assert any(e.get("event") == "commander.bot_back" and e.get("bot") == "red-1" for e in events)


def test_capture_and_hold_takes_the_tsp_nearest_its_base_with_a_bot_to_spare() -> None:
    source, _ = objective_source(load_map("warzone"), "capture_and_hold", "red")
    idle = Role("c", parse_domain('(:domain i)(:method (behave) (:branch "i" () ()))'))
    scores: list[tuple[Value, ...]] = [("score", "red", 0), ("score", "blue", 0)]
    objectives = source(Agent("red-commander", idle, facts=scores))
    tsps = [o for o in objectives if o.target.startswith("tsp-")]
    # Red's base, a3, is as far from either TSP of its side: the marker id breaks the tie.
    assert [("capture:tsp-west-north", 1)] == [(o.id, o.optimal_bots) for o in tsps]
    # Below every point: it gets a bot only when each point has its optimal four.
    assert 0 == ideal_distribution(objectives, 12, max_squad_size=4)["capture:tsp-west-north"]
    assert 1 == ideal_distribution(objectives, 13, max_squad_size=4)["capture:tsp-west-north"]
    held = [*scores, ("captured", "tsp-west-north", "red")]
    objectives = source(Agent("red-commander", idle, facts=held))
    assert ["capture:tsp-west-south"] == [o.id for o in objectives if o.target.startswith("tsp-")]


@pytest.mark.parametrize("name", ["warzone", "warzone-x2", "warzone-x4"])
def test_body_count_weighs_the_markers_of_each_team_as_mirror_images(name: str) -> None:
    # Each team's regroup markers, heaviest first, must be the mirror images of the other's:
    # on the stacked maps red's b9 and d7 are as far from its base as blue's h9 and f7, and a
    # tie broken by id sent the two teams to places that are not each other's images (Body
    # Count went to the east side, 9 of 11 decided at 24v24).
    game_map = load_map(name)
    idle = Role("c", parse_domain('(:domain i)(:method (behave) (:branch "i" () ()))'))
    order = {}
    for team in ("red", "blue"):
        source, _ = objective_source(game_map, "body_count", team)
        objectives = source(Agent(f"{team}-commander", idle))
        heaviest_first = sorted(objectives, key=lambda o: -o.weight)
        order[team] = [o.waypoint for o in heaviest_first]
    assert [_mirror(game_map, w) for w in order["red"]] == order["blue"]


def _mirror(game_map: Map, waypoint: str) -> str:
    """The waypoint at the mirror image of ``waypoint`` across the map's vertical middle."""
    xs = [w.pos[0] for w in game_map.waypoints]
    x, y = game_map.position(waypoint)
    image = (min(xs) + max(xs) - x, y)
    return next(w.id for w in game_map.waypoints if math.dist(w.pos, image) < 1e-6)


def test_body_count_holds_every_regroup_marker_and_takes_no_tsp() -> None:
    idle = Role("c", parse_domain('(:domain i)(:method (behave) (:branch "i" () ()))'))
    weights = {}
    for team in ("red", "blue"):
        source, _ = objective_source(load_map("warzone"), "body_count", team)
        scores: list[tuple[Value, ...]] = [("score", "red", 3), ("score", "blue", 9)]
        objectives = source(Agent(f"{team}-commander", idle, facts=scores))
        assert {"b4", "d2", "d4", "f2", "f4", "h4"} == {o.waypoint for o in objectives}, team
        assert all(o.id.startswith("hold:") for o in objectives)
        weights[team] = {o.waypoint: o.weight for o in objectives}
    # The nearest the team's base weighs the most, the farthest the least, as mirror images
    # (red's base is west, blue's east); the score changes nothing.
    assert weights["red"]["b4"] == weights["blue"]["h4"] == max(weights["red"].values())
    assert weights["red"]["h4"] == weights["blue"]["b4"] == min(weights["red"].values())
