"""warband metrics: each measure counted on a match whose log the test writes by hand (so every
expected figure is known), and the command on a real Warzone match's logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from warband.exceptions import ConfigurationError, WarbandError
from warband.metrics import STUCK_TICKS, load_match, measure, metrics_command, tick_flags
from warband.world import get_weapon, load_map

from .conftest import CommandResult, last_json_line

TICKS = 25
TEST_MAP = load_map("test")


def _body(team: str, waypoint: str, *, target: str | None = None) -> dict[str, Any]:
    x, y = TEST_MAP.position(waypoint)
    return {
        "team": team,
        "waypoint": waypoint,
        "target": target,
        "x": x,
        "y": y,
        "health": 150,
        "max_health": 150,
        "state": "alive",
        "weapon": "machine_gun",
    }


def _snapshot(tick: int) -> dict[str, Any]:
    red6 = ("m2" if tick % 2 else "c") if tick <= 5 else "m4"
    agents = {
        # red-1 stands at m1 all match, firing, with an order to go to b2.
        "red-1": _body("red", "m1"),
        # red-2..5 crowd the centre (walking on: not stuck), ignoring blue-1 there.
        **{f"red-{n}": _body("red", "c", target="m4") for n in range(2, 6)},
        # red-6 walks m2, c, m2, c, m2 (one oscillation), then on.
        "red-6": _body("red", red6, target="m4" if tick > 5 else None),
        "blue-1": _body("blue", "c"),
    }
    events = [["captured", "cp-centre", "red"]] if tick == 5 else []
    # red's turret on m1 is hit at tick 12; blue's on b1 never is.
    turrets = {
        "turret-red-1": {"team": "red", "waypoint": "m1", "health": 120 if tick < 12 else 90},
        "turret-blue-1": {"team": "blue", "waypoint": "b1", "health": 120},
    }
    return {
        "tick": tick,
        "map": "test",
        "map_source": "test",
        "agents": agents,
        "turrets": turrets,
        "events": events,
    }


def _plan(agent: str, tick: int, decision: str, plan: list[str], **extra: Any) -> dict[str, Any]:
    return {"event": "agent.plan", "agent": agent, "tick": tick, "decision": decision,
            "plan": plan, **extra}  # fmt: skip


def _events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"event": "commander.assignment", "agent": "red-commander", "tick": 1,
         "squads": [["red-squad-1", "capture:cp-centre", ["red-2", "red-3", "red-4", "red-5"]]]},
        {"event": "order.received", "agent": "red-1", "order": "o1", "task": "goto",
         "args": ["b2"], "tick": 1},
        {"event": "order.received", "agent": "red-2", "order": "o2", "task": "goto",
         "args": ["c"], "tick": 2},
        {"event": "order.finished", "agent": "red-2", "order": "o2", "success": True,
         "reason": "", "tick": 3},
        {"event": "order.received", "agent": "red-3", "order": "o3", "task": "goto",
         "args": ["c"], "tick": 2},
        {"event": "order.finished", "agent": "red-3", "order": "o3", "success": False,
         "reason": "overwritten by order o5", "tick": 4},
        {"event": "order.received", "agent": "red-4", "order": "o4", "task": "goto",
         "args": ["c"], "tick": 2},
        {"event": "order.withdrawn", "agent": "red-4", "order": "o4", "reason": "replanned",
         "tick": 6},
        _plan("red-squad-1", 3, "new",
              ["(!remember rally o9 c)", "(!remember regroup_started o9 3)"],
              branches=["attack: choose where to regroup"]),
        _plan("red-squad-1", 10, "new", ["(!remember attacking o9 cp-centre)"],
              branches=["attack: the squad regrouped, go"]),
        {"event": "order.received", "agent": "red-6", "order": "o6", "task": "goto",
         "args": ["b2"], "tick": 6},
        _plan("red-6", 7, "new", ["(!go m4 b2)", "(!fire blue-1)"],
              branches=["default combat", "fire on the way to a position picked for the attack"]),
        _plan("red-5", 8, "new", ["(!go m2 m2)"],
              branches=["class ability: a scout holds the sniping spot overlooking the spot it "
                        "defends", "go there"]),
    ]  # fmt: skip
    for tick in range(1, TICKS + 1):
        events.append({"event": "world.snapshot", "tick": tick, "snapshot": _snapshot(tick)})
        fire = ["(!fire blue-1)"]
        if tick == 1:
            events.append(_plan("red-1", tick, "new", fire, branches=["close combat", "shoot"]))
        else:
            events.append(_plan("red-1", tick, "kept", fire))
    return events


@pytest.fixture
def match_logs(tmp_path: Path) -> Path:
    lines = [json.dumps(event) for event in _events()]
    (tmp_path / "main.1.jsonl").write_text("\n".join(lines) + "\nnot json, a cut line\n")
    return tmp_path


def test_every_measure_counts_what_the_hand_written_match_holds(match_logs: Path) -> None:
    assert get_weapon("machine_gun").range > 8  # m2 and m4 are 7.07 from c
    red = measure(load_match(match_logs))["teams"]["red"]
    assert 6 * TICKS == red["alive_bot_ticks"]
    # red-1 fires at m1, its order's place is b2; red-6 fires walking to its own: not starved
    assert TICKS == red["order_starved"]
    assert 4 * TICKS + 2 == red["crowded"]  # red-2..5 at c; red-6 too at ticks 2 and 4
    # red-2..6 see blue-1 and fire at nobody, but for red-6 at tick 7
    assert 4 * TICKS + TICKS - 1 == red["enemies_ignored"]
    assert {
        "episodes": 1,
        "longest": TICKS,
        "by_doing": {"close combat": 1},
        "stuck_firing_full_health": 1,
    } == red["stuck"]
    assert 1 == red["oscillations"]
    assert round(100 * 3 / (6 * TICKS), 2) == red["plan_churn"]  # red-1's, red-5's, red-6's
    regroups = {"ended": 1, "by_arrival": 1, "by_timeout": 0, "three_quarters": 1}
    assert regroups == red["regroups"]
    expected_orders = {"completed": 1, "failed": 0, "overwritten": 1, "withdrawn": 1, "open": 2}
    assert expected_orders == red["orders"]
    assert {"cp-centre": 5} == red["first_capture"]
    assert 1 == red["attack_positions"]  # red-6's walk to a picked spot
    assert 1 == red["sniping"]  # red-5's walk to a sniping spot
    assert {"placed": 1, "damaged": 1} == red["turrets"]
    blue = measure(load_match(match_logs))["teams"]["blue"]
    assert {"placed": 1, "damaged": 0} == blue["turrets"]
    assert {"(no plan)": 1} == blue["stuck"]["by_doing"]


def test_the_text_form_names_every_measure_with_its_share(match_logs: Path) -> None:
    text = metrics_command([match_logs])
    for words in ("order-starved", "crowded", "enemies ignored", "stuck", "oscillations",
                  "plan churn", "regroups", "orders", "first held", "attack positions",
                  "turrets"):  # fmt: skip
        assert words in text
    assert f"order-starved   {TICKS:6d}  ({100 * TICKS / (6 * TICKS):.1f}%)" in text


def test_a_directory_without_a_world_or_logs_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"no \*\.jsonl log files"):
        load_match(tmp_path)
    (tmp_path / "main.1.jsonl").write_text(json.dumps({"event": "actor.start"}) + "\n")
    with pytest.raises(WarbandError, match=r"no world\.snapshot events"):
        load_match(tmp_path)


def test_warband_metrics_measures_a_real_match_from_its_logs(
    warband_cli: Any, tmp_path: Path
) -> None:
    logs = tmp_path / "wz"
    run: CommandResult = warband_cli(
        "run", "scenarios/warzone.py", "--param", "bots=4", "--ticks", "60", "--log", str(logs),
        "-q",
    )  # fmt: skip
    assert 0 == run.returncode, run.stderr
    result = warband_cli("metrics", str(logs), "--json")
    assert 0 == result.returncode, result.stderr
    report = last_json_line(result.stdout)
    assert {"red", "blue"} == set(report["teams"])
    red = report["teams"]["red"]
    assert 0 < red["alive_bot_ticks"] <= 4 * 60
    assert sum(red["orders"].values()) > 0  # the hierarchy gave orders, and bots logged them


def test_per_tick_flags_name_the_bots_each_count_is_made_of(match_logs: Path) -> None:
    match = load_match(match_logs)
    red = measure(match)["teams"]["red"]
    flags = tick_flags(match, "red")
    assert sorted(match.snapshots) == sorted(flags)
    for name in ("order_starved", "crowded", "enemies_ignored"):
        assert red[name] == sum(len(at[name]) for at in flags.values()), name
    assert ["red-2", "red-3", "red-4", "red-5"] == flags[1]["crowded"]  # four on c
    # red-1 stands firing on m1 all match: stuck from its STUCK_TICKS-th tick on, not before.
    stuck_ticks = [tick for tick, at in sorted(flags.items()) if "red-1" in at["stuck"]]
    assert stuck_ticks == sorted(match.snapshots)[STUCK_TICKS - 1 :]


def test_the_tick_a_bot_reaches_a_waypoint_on_its_way_is_not_order_starved(
    tmp_path: Path,
) -> None:
    # red-1 walks m1 -> c (ticks 1-3), ends tick 4 on c, then stands there (5-6), firing all
    # along, with an order to go to b2: it walked in tick 4 too, only 5 and 6 are starved.
    def snapshot(tick: int) -> dict[str, Any]:
        body = _body("red", "m1", target="c") if tick < 4 else _body("red", "c")
        return {
            "tick": tick,
            "map": "test",
            "map_source": "test",
            "agents": {"red-1": body},
            "events": [],
        }

    events: list[dict[str, Any]] = [
        {"event": "order.received", "agent": "red-1", "order": "o1", "task": "goto",
         "args": ["b2"], "tick": 1},
        _plan("red-1", 1, "new", ["(!fire blue-1)"], branches=["close combat", "shoot"]),
    ]  # fmt: skip
    for tick in range(1, 7):
        events.append({"event": "world.snapshot", "tick": tick, "snapshot": snapshot(tick)})
        if tick > 1:
            events.append(_plan("red-1", tick, "kept", ["(!fire blue-1)"]))
    (tmp_path / "main.1.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    match = load_match(tmp_path)
    assert 2 == measure(match)["teams"]["red"]["order_starved"]
    flags = tick_flags(match, "red")
    flagged = [tick for tick in range(1, 7) if "red-1" in flags[tick]["order_starved"]]
    assert [5, 6] == flagged


def test_an_order_waiting_behind_a_corridor_order_counts_for_order_starved(tmp_path: Path) -> None:
    # red-1 stands at m1 firing with a corridor order (no place) at the head of its queue and
    # a goto b2 behind it: its orders send it to b2, so every tick is starved.
    events: list[dict[str, Any]] = [
        {"event": "order.received", "agent": "red-1", "order": "o1", "task": "restrict",
         "args": [["m1", "c", "m4", "b2"]], "tick": 1},
        {"event": "order.received", "agent": "red-1", "order": "o2", "task": "goto",
         "args": ["b2"], "tick": 1},
        _plan("red-1", 1, "new", ["(!fire blue-1)"], branches=["close combat", "shoot"]),
    ]  # fmt: skip
    for tick in range(1, 5):
        body = _body("red", "m1")
        snapshot = {
            "tick": tick,
            "map": "test",
            "map_source": "test",
            "agents": {"red-1": body},
            "events": [],
        }
        events.append({"event": "world.snapshot", "tick": tick, "snapshot": snapshot})
        if tick > 1:
            events.append(_plan("red-1", tick, "kept", ["(!fire blue-1)"]))
    (tmp_path / "main.1.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    assert 4 == measure(load_match(tmp_path))["teams"]["red"]["order_starved"]


def test_bots_walking_away_from_a_waypoint_are_no_crowd_on_it(tmp_path: Path) -> None:
    # Four red bots stand on c at tick 1; at tick 2 three of them walk off (half-way along
    # their links, the world still naming c as their waypoint), and at tick 3 all four stand.
    def walker(to: str) -> dict[str, Any]:
        body = _body("red", "c", target=to)
        (x0, y0), (x1, y1) = TEST_MAP.position("c"), TEST_MAP.position(to)
        body["x"], body["y"] = (x0 + x1) / 2, (y0 + y1) / 2
        return body

    def snapshot(tick: int, walking: bool) -> dict[str, Any]:
        agents = {f"red-{n}": _body("red", "c") for n in range(1, 5)}
        if walking:
            agents.update({"red-2": walker("m1"), "red-3": walker("m2"), "red-4": walker("m3")})
        return {"tick": tick, "map": "test", "map_source": "test", "agents": agents}

    events = [
        {"event": "world.snapshot", "tick": t, "snapshot": snapshot(t, walking=t == 2)}
        for t in (1, 2, 3)
    ]
    (tmp_path / "main.1.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    assert 8 == measure(load_match(tmp_path))["teams"]["red"]["crowded"]  # ticks 1 and 3


def test_a_map_that_cannot_load_is_noted_once_and_a_bundled_one_loads_by_name(
    tmp_path: Path,
) -> None:
    def write(name: str, source: str) -> Path:
        logs = tmp_path / name
        logs.mkdir()
        lines = [
            {
                "event": "world.snapshot",
                "tick": tick,
                "snapshot": {"tick": tick, "map": name, "map_source": source, "agents": {}},
            }
            for tick in range(1, 6)
        ]
        (logs / "world.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        return logs

    gone = str(tmp_path / "elsewhere" / "m.toml")
    lost = measure(load_match(write("custom", gone)))
    assert 1 == len(lost["problems"]), lost["problems"]  # not once per snapshot
    assert (
        "custom" in lost["problems"][0] and "neither bundled nor in a file" in lost["problems"][0]
    )
    # Logs recorded in another checkout: the bundled map is found by its name.
    assert [] == measure(load_match(write("warzone", gone)))["problems"]
