"""The Warzone modes beyond Capture and Hold and Body Count, played by scripted acts on the world:
Search and Retrieve, Assassination and Search and Destroy each end with either team winning or
at the time limit, score, and show their state in percepts and snapshots."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from warband.exceptions import ConfigurationError
from warband.values import Fact
from warband.world import (
    CARRIER,
    CARRYING,
    DESTROYED,
    FACTS,
    FUSE,
    MODES,
    OBJECT_AT,
    OBJECTIVE,
    PRIVATE_EVENTS,
    PUBLIC_EVENTS,
    ROLE,
    TARGET_STATE,
    VIP,
    VIP_AT,
    Assassination,
    Member,
    Queue,
    SearchAndDestroy,
    SearchAndRetrieve,
    TickReport,
    World,
    check_act,
    load_map,
    make_mode,
    waypoint_path,
)

from .simulation_helpers import accept, facts_named, fire_until_down, rejection, walk

WARZONE = load_map("warzone")
RETURNS = {"red": "return-red", "blue": "return-blue"}
OBJECT = "retrieval-object"


def _other(team: str) -> str:
    return "blue" if team == "red" else "red"


def _world(
    mode: object, roster: Mapping[str, Member], *, seed: int = 1, **options: object
) -> World:
    return World.create(WARZONE, seed=seed, mode=mode, roster=roster, **options)  # type: ignore[arg-type]


def _idle(world: World, ticks: int) -> list[TickReport]:
    return [world.step() for _ in range(ticks)]


def _walk_to(world: World, agent: str, goal: str) -> None:
    here = str(facts_named(world, agent, "at")[0][2])
    path = waypoint_path(WARZONE, here, goal)
    assert path is not None
    walk(world, agent, *path[1:])


def _carry_home(world: World, agent: str, goal: str) -> TickReport:
    """Walk ``agent`` to ``goal``; the report of the tick the object was returned (within the
    return point's radius: maybe before the agent arrives, and the game may end there)."""
    here = str(facts_named(world, agent, "at")[0][2])
    path = waypoint_path(WARZONE, here, goal)
    assert path is not None
    returned: TickReport | None = None
    for waypoint in path[1:]:
        accept(world, agent, "move", waypoint=waypoint)
        for _ in range(20):
            report = world.step()
            if any(e[0] == "returned" for e in report.events):
                returned = report
            if world.outcome() is not None or ("arrived", waypoint) in report.events_for(agent):
                break
    assert returned is not None, f"{agent} walked to {goal} and returned nothing"
    return returned


def _events(reports: list[TickReport], name: str) -> list[Fact]:
    return [e for r in reports for e in r.events if e[0] == name]


# --- make_mode and World.create ---------------------------------------------------------------


@pytest.mark.parametrize("name", MODES)
def test_every_mode_is_built_by_name_from_the_warzone_markers(name: str) -> None:
    world = _world(name, {"red-0": Member("red"), "blue-0": Member("blue")})
    assert world.mode is not None
    assert name == world.mode.name
    assert [("game_mode", name)] == facts_named(world, "red-0", "game_mode")
    assert name == world.snapshot()["mode"]


def test_a_map_without_the_mode_markers_is_refused_naming_what_is_missing() -> None:
    with pytest.raises(ConfigurationError, match="needs exactly one 'retrieval' marker"):
        World.create(
            load_map("test"), seed=1, mode="search_and_retrieve", roster={"r": Member("red")}
        )
    with pytest.raises(ConfigurationError, match="'target' markers of the defending team"):
        World.create(
            load_map("test"), seed=1, mode="search_and_destroy", roster={"r": Member("red")}
        )
    with pytest.raises(ConfigurationError, match="attackers must be one of the teams"):
        make_mode("assassination", ("red", "blue"), attackers="green")
    with pytest.raises(ConfigurationError, match="known modes: capture_and_hold, body_count"):
        make_mode("king_of_the_hill", ("red", "blue"))


def test_new_verbs_are_refused_where_their_mode_is_not_played() -> None:
    world = _world("capture_and_hold", {"red-0": Member("red", start="g5")})
    assert "no destroy targets in this game (mode: capture_and_hold)" in rejection(
        world, "red-0", "plant", target="target-blue-north"
    )
    assert "'retrieval-object' is not something to carry" in rejection(
        world, "red-0", "pickup", object=OBJECT
    )


# --- Search and Retrieve ----------------------------------------------------------------------


def _retrieve(target_returns: int = 1, time_limit: int = 600) -> SearchAndRetrieve:
    return SearchAndRetrieve(
        WARZONE.teams,
        "retrieval-centre",
        RETURNS,
        target_returns=target_returns,
        time_limit=time_limit,
        reset_ticks=5,
    )


@pytest.mark.parametrize("team", ["red", "blue"])
def test_search_and_retrieve_is_won_by_the_team_that_returns_the_object(team: str) -> None:
    carrier = f"{team}-0"
    world = _world(_retrieve(), {carrier: Member(team, start="e3"), "x": Member(_other(team))})
    assert [("object_at", OBJECT, "e3")] == facts_named(world, "x", "object_at")

    accept(world, carrier, "pickup", object=OBJECT)
    picked = world.step()
    assert ("picked_up", OBJECT, carrier, team) in picked.events
    home = WARZONE.marker(RETURNS[team]).waypoint
    last = _carry_home(world, carrier, home)

    assert ("returned", OBJECT, carrier, team) in last.events
    assert ("game_over", team, "returned the object 1 times") in last.events
    outcome = world.outcome()
    assert outcome is not None
    assert (team, 1) == (outcome["winner"], outcome["scores"][team])
    assert [("object_at", OBJECT, "e3")] == facts_named(world, "x", "object_at")
    assert "the game is over" == rejection(world, carrier, "wait")


def test_search_and_retrieve_by_name_needs_three_returns_and_scores_each() -> None:
    world = _world("search_and_retrieve", {"red-0": Member("red", start="e3")})
    for expected in (1, 2, 3):
        accept(world, "red-0", "pickup", object=OBJECT)
        world.step()
        _carry_home(world, "red-0", "b3")
        assert expected == world.score()["red"]
        if expected < 3:
            _walk_to(world, "red-0", "e3")
    outcome = world.outcome()
    assert outcome is not None
    assert ("red", "returned the object 3 times") == (outcome["winner"], outcome["reason"])


def test_search_and_retrieve_time_limit_gives_the_game_to_the_leader_or_a_draw() -> None:
    idle = _world(_retrieve(time_limit=4), {"red-0": Member("red"), "blue-0": Member("blue")})
    _idle(idle, 4)
    assert {"winner": None, "scores": {"red": 0, "blue": 0}} == {
        k: v for k, v in (idle.outcome() or {}).items() if k in ("winner", "scores")
    }

    leading = _world(
        _retrieve(target_returns=3, time_limit=40), {"red-0": Member("red", "medic", start="e3")}
    )
    accept(leading, "red-0", "pickup", object=OBJECT)
    leading.step()
    _carry_home(leading, "red-0", "b3")
    while leading.outcome() is None:
        leading.step()
    outcome = leading.outcome()
    assert outcome is not None
    assert ("red", {"red": 1, "blue": 0}, "time limit reached", 40) == (
        outcome["winner"],
        outcome["scores"],
        outcome["reason"],
        outcome["tick"],
    )


def test_every_agent_knows_who_carries_the_object_and_where_and_the_carrier_knows_it_carries() -> (
    None
):
    roster = {"red-0": Member("red", start="e3"), "blue-0": Member("blue", start="i3")}
    world = _world(_retrieve(), roster)
    assert {
        ("objective", "retrieval-centre", "retrieval", "e3", ""),
        ("objective", "return-red", "return", "b3", "red"),
        ("objective", "return-blue", "return", "h3", "blue"),
    } == set(facts_named(world, "blue-0", "objective"))
    accept(world, "red-0", "pickup", object=OBJECT)
    world.step()
    walk(world, "red-0", "d3")

    for agent in ("red-0", "blue-0"):
        facts = world.percepts_for(agent)
        assert CARRIER.read(("carrier", OBJECT, "red-0", "red")) == CARRIER.first(facts)
        assert ("d3",) == (OBJECT_AT.first(facts) or ("", ""))[1:]
    assert ("carrying", OBJECT, "retrieval") in world.percepts_for("red-0")
    assert CARRYING.first(world.percepts_for("blue-0")) is None
    snapshot = world.snapshot()
    assert {"object": OBJECT, "spawn": "e3", "waypoint": "d3", "carrier": "red-0"} == snapshot[
        "objectives"
    ]["retrieval"]
    assert [OBJECT] == snapshot["agents"]["red-0"]["carrying"]


def test_a_downed_carrier_drops_the_object_which_the_enemy_can_take_or_which_goes_home() -> None:
    roster = {"red-0": Member("red", "medic", start="e3"), "blue-0": Member("blue", start="f3")}
    world = _world(_retrieve(), roster)
    accept(world, "red-0", "pickup", object=OBJECT)
    world.step()
    downed = fire_until_down(world, "blue-0", "red-0")
    assert ("dropped", OBJECT, "e3") in downed.events
    assert [] == facts_named(world, "blue-0", "carrier")
    assert [("object_at", OBJECT, "e3")] == facts_named(world, "blue-0", "object_at")

    walk(world, "blue-0", "e3")
    accept(world, "blue-0", "pickup", object=OBJECT)
    world.step()
    walk(world, "blue-0", "f3")
    accept(world, "blue-0", "drop", object=OBJECT)
    assert ("dropped", OBJECT, "f3") in world.step().events
    reports = _idle(world, 5)  # reset_ticks = 5: untouched away from its spawn, it goes home
    assert [("object_reset", OBJECT, "e3")] == _events(reports, "object_reset")
    assert [("object_at", OBJECT, "e3")] == facts_named(world, "blue-0", "object_at")


def test_pickup_and_drop_say_why_they_are_refused() -> None:
    roster = {"red-0": Member("red", start="e3"), "red-1": Member("red", start="e3")}
    roster |= {"blue-0": Member("blue", start="d3")}
    world = _world(_retrieve(), roster)
    assert "'retrieval-object' lies at e3; blue-0 must stand there" in rejection(
        world, "blue-0", "pickup", object=OBJECT
    )
    assert "red-0 does not carry 'retrieval-object'" == rejection(
        world, "red-0", "drop", object=OBJECT
    )
    assert "is picked up with pickup, not use" in rejection(world, "red-0", "use", object=OBJECT)
    assert "'crate' is not something to carry; objects to carry here: retrieval-object" == (
        rejection(world, "red-0", "pickup", object="crate")
    )
    accept(world, "red-0", "pickup", object=OBJECT)
    accept(world, "red-1", "pickup", object=OBJECT)  # both asked in one tick: red-0 is first
    report = world.step()
    assert ("picked_up", OBJECT, "red-0", "red") in report.events
    assert [("act_failed", "pickup", "'retrieval-object' is carried by red-0")] == [
        e for e in report.events_for("red-1") if e[0] == "act_failed"
    ]
    assert "'retrieval-object' is carried by red-0" == rejection(
        world, "red-1", "pickup", object=OBJECT
    )


def test_pickup_and_drop_also_carry_the_items_of_a_map() -> None:
    item = load_map("test").objects_of("item")[0]
    world = World.create(
        load_map("test"), seed=1, mode=None, roster={"alice": Member("red", start=item.waypoint)}
    )
    accept(world, "alice", "pickup", object=item.id)
    assert ("picked_up", item.id, "alice", "red") in world.step().events
    accept(world, "alice", "drop", object=item.id)
    assert ("dropped", item.id, item.waypoint) in world.step().events
    assert [("item_at", item.id, item.waypoint)] == facts_named(world, "alice", "item_at")


# --- Assassination ----------------------------------------------------------------------------


@pytest.mark.parametrize("attackers", ["red", "blue"])
def test_assassination_is_won_by_the_attackers_when_they_down_the_vip(attackers: str) -> None:
    defenders = _other(attackers)
    roster = {
        "hunter": Member(attackers, "assault", start="e3"),
        "vip": Member(defenders, "medic", start="f3"),
        "guard": Member(defenders, "medic", start="i3"),
    }
    world = _world("assassination", roster, attackers=attackers, vip="vip")
    report = fire_until_down(world, "hunter", "vip")

    reason = "the VIP vip was taken down"
    assert ("game_over", attackers, reason) in report.events
    outcome = world.outcome()
    assert outcome is not None
    assert (attackers, {attackers: 1, defenders: 0}, reason) == (
        outcome["winner"],
        outcome["scores"],
        outcome["reason"],
    )


@pytest.mark.parametrize("attackers", ["red", "blue"])
def test_assassination_is_won_by_the_defenders_when_the_vip_survives_the_time_limit(
    attackers: str,
) -> None:
    defenders = _other(attackers)
    roster = {
        "hunter": Member(attackers, "medic", start="e3"),
        "vip": Member(defenders, "medic", start="f3"),
        "guard": Member(defenders, "assault", start="e2"),
    }
    world = World.create(
        WARZONE,
        seed=1,
        mode=Assassination(WARZONE.teams, attackers=attackers, target="vip", time_limit=30),
        roster=roster,
    )
    fire_until_down(world, "guard", "hunter")  # downing someone else does not end the game
    assert world.outcome() is None
    _idle(world, 30 - world.tick)
    outcome = world.outcome()
    assert outcome is not None
    assert (defenders, "the VIP survived the time limit", 30) == (
        outcome["winner"],
        outcome["reason"],
        outcome["tick"],
    )
    assert 1 == outcome["scores"][defenders]


def test_the_vip_is_designated_from_the_seed_among_the_defenders() -> None:
    roster = {f"blue-{i}": Member("blue") for i in range(6)} | {"red-0": Member("red")}
    picks = {
        seed: _world("assassination", roster, seed=seed).snapshot()["objectives"]["vip"]["agent"]
        for seed in range(1, 9)
    }
    assert picks == {
        seed: _world("assassination", roster, seed=seed).snapshot()["objectives"]["vip"]["agent"]
        for seed in range(1, 9)
    }
    assert set(picks.values()) <= {f"blue-{i}" for i in range(6)}
    assert len(set(picks.values())) > 1
    with pytest.raises(ConfigurationError, match="the VIP 'red-0' is not an agent of the defend"):
        _world("assassination", roster, vip="red-0")


@pytest.mark.parametrize("reveal", [True, False])
def test_the_vip_is_known_to_its_team_and_named_to_the_attackers_located_if_revealed(
    reveal: bool,
) -> None:
    roster = {"red-0": Member("red"), "blue-0": Member("blue"), "blue-1": Member("blue")}
    mode = Assassination(WARZONE.teams, attackers="red", target="blue-1", reveal_position=reveal)
    world = _world(mode, roster)
    where = world.snapshot()["agents"]["blue-1"]["waypoint"]
    for agent in ("blue-0", "blue-1"):
        facts = world.percepts_for(agent)
        assert [VIP.read(("vip", "blue-1", "blue"))] == VIP.all(facts)
        assert [VIP_AT.read(("vip_at", "blue-1", where))] == VIP_AT.all(facts)
    attacker = world.percepts_for("red-0")
    assert [("blue-1", "blue")] == [tuple(v) for v in VIP.all(attacker)]
    assert ([("blue-1", where)] if reveal else []) == [tuple(v) for v in VIP_AT.all(attacker)]
    assert {("red", "attack"), ("blue", "defend")} == {tuple(r) for r in ROLE.all(attacker)}


def test_assassination_by_name_tells_everyone_the_hiding_spots_of_the_map() -> None:
    world = _world("assassination", {"red-0": Member("red"), "blue-0": Member("blue")})
    hiding = {(m.id, m.waypoint) for m in WARZONE.markers_of("hiding")}
    assert 4 == len(hiding)
    assert hiding == {
        (o.id, o.waypoint) for o in OBJECTIVE.all(world.percepts_for("red-0")) if o.kind == "hiding"
    }


# --- Search and Destroy -----------------------------------------------------------------------


def _targets(team: str) -> list[str]:
    return [m.id for m in WARZONE.markers_of("target", team)]


@pytest.mark.parametrize("attackers", ["red", "blue"])
def test_search_and_destroy_is_won_by_the_attackers_when_both_targets_go_off(
    attackers: str,
) -> None:
    defenders = _other(attackers)
    first, second = _targets(defenders)
    roster = {
        "sapper-1": Member(attackers, start=WARZONE.marker(first).waypoint),
        "sapper-2": Member(attackers, start=WARZONE.marker(second).waypoint),
        "defender": Member(defenders, start="e3"),
    }
    world = _world("search_and_destroy", roster, attackers=attackers)
    assert {first, second} == {
        o.id for o in OBJECTIVE.all(world.percepts_for("defender")) if o.kind == "target"
    }
    reports: list[TickReport] = []
    for tick in range(3):  # plant_ticks = 3 in a row
        accept(world, "sapper-1", "plant", target=first)
        if tick > 0:
            accept(world, "sapper-2", "plant", target=second)
        reports.append(world.step())
    assert [("planted", first, "sapper-1", attackers)] == _events(reports, "planted")
    assert (first, "armed") == tuple(TARGET_STATE.all(world.percepts_for("defender"))[0])
    assert [(first, 15)] == [tuple(f) for f in FUSE.all(world.percepts_for("defender"))]
    assert "target-" in rejection(world, "sapper-1", "plant", target=first)  # already armed

    accept(world, "sapper-2", "plant", target=second)
    reports = [world.step(), *_idle(world, 15)]
    assert [
        ("destroyed", first, defenders, "sapper-1"),
        ("destroyed", second, defenders, "sapper-2"),
    ] == _events(reports, "destroyed")
    outcome = world.outcome()
    assert outcome is not None
    assert (attackers, {attackers: 2, defenders: 0}, "destroyed all 2 targets") == (
        outcome["winner"],
        outcome["scores"],
        outcome["reason"],
    )
    assert {"destroyed"} == {t["state"] for t in world.snapshot()["objectives"]["targets"].values()}


@pytest.mark.parametrize("attackers", ["red", "blue"])
def test_search_and_destroy_is_won_by_the_defenders_who_defuse_and_hold_to_the_time_limit(
    attackers: str,
) -> None:
    defenders = _other(attackers)
    target = _targets(defenders)[0]
    spot = WARZONE.marker(target).waypoint
    roster = {
        "sapper": Member(attackers, "medic", start=spot),
        "engineer": Member(defenders, "medic", start=spot),
    }
    mode = SearchAndDestroy(
        WARZONE.teams, _targets(defenders), attackers=attackers, time_limit=40, fuse_ticks=5
    )
    world = _world(mode, roster)
    for _ in range(3):
        accept(world, "sapper", "plant", target=target)
        world.step()
    assert "there is no charge" not in rejection(world, "sapper", "plant", target=target)
    reports = []
    for _ in range(3):  # defuse_ticks = 3, within the 5-tick fuse
        accept(world, "engineer", "defuse", target=target)
        reports.append(world.step())
    assert [("defused", target, "engineer", defenders)] == _events(reports, "defused")
    assert [] == facts_named(world, "sapper", "fuse")
    _idle(world, 40 - world.tick)
    outcome = world.outcome()
    assert outcome is not None
    assert (defenders, {attackers: 0, defenders: 0}, 40) == (
        outcome["winner"],
        outcome["scores"],
        outcome["tick"],
    )
    assert "time limit reached with 2 target(s) saved" == outcome["reason"]


def test_plant_work_must_be_unbroken_and_a_charge_is_heard_going_off() -> None:
    target = "target-blue-north"
    roster = {"sapper": Member("red", start="g5"), "listener": Member("blue", start="h5")}
    world = _world(SearchAndDestroy(WARZONE.teams, [target], attackers="red", fuse_ticks=2), roster)
    for verb in ("plant", "plant", "reload", "plant", "plant"):  # interrupted: starts again
        if verb == "plant":
            accept(world, "sapper", "plant", target=target)
        report = world.step()
        assert [] == [e for e in report.events if e[0] == "planted"]
    accept(world, "sapper", "plant", target=target)
    assert ("planted", target, "sapper", "red") in world.step().events
    world.step()
    boom = world.step()
    assert ("destroyed", target, "blue", "sapper") in boom.events
    assert ("heard", "explosion", "g5") in world.percepts_for("listener")


def test_plant_and_defuse_say_why_they_are_refused() -> None:
    roster = {"red-0": Member("red", start="g5"), "blue-0": Member("blue", start="g5")}
    roster |= {"red-far": Member("red", start="a3")}
    world = _world("search_and_destroy", roster, attackers="red")
    assert "is your team's target; defend it" in rejection(
        world, "blue-0", "plant", target="target-blue-north"
    )
    assert "intact: there is no charge to defuse" in rejection(
        world, "blue-0", "defuse", target="target-blue-north"
    )
    assert "belongs to blue; the attackers plant, not defuse" in rejection(
        world, "red-0", "defuse", target="target-blue-north"
    )
    assert "red-far is " in rejection(world, "red-far", "plant", target="target-blue-north")
    assert "unknown destroy target 'target-red-north'; targets: target-blue-north" in rejection(
        world, "red-0", "plant", target="target-red-north"
    )


# --- vocabulary -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["search_and_retrieve", "assassination", "search_and_destroy"])
def test_every_fact_and_event_of_a_random_game_in_each_mode_fits_the_vocabulary(name: str) -> None:
    rng = random.Random(7)
    roster = {
        f"{team}-{i}": Member(team, "medic", start=rng.choice(["d3", "e3", "f3", "g5", "c5"]))
        for team in WARZONE.teams
        for i in range(4)
    }
    world = _world(name, roster, seed=7)
    targets = [m.id for m in WARZONE.markers_of("target")]
    seen_names: set[str] = set()
    for _ in range(120):
        for agent in world.agent_ids:
            facts = world.percepts_for(agent)
            misfits = [f for f in facts if f[0] not in FACTS or not FACTS[str(f[0])].matches(f)]
            assert [] == misfits
            seen_names.update(str(f[0]) for f in facts)
            here = str(facts_named(world, agent, "at")[0][2]) if facts else ""
            world.submit(agent, "move", {"waypoint": rng.choice(WARZONE.neighbours(here))})
            enemies = [str(f[1]) for f in facts if f[0] == "sees" and f[4] != agent[:-2]]
            verb = rng.choice(["fire", "pickup", "drop", "plant", "defuse"])
            if verb == "fire" and enemies:
                world.submit(agent, "fire", {"target": enemies[0]})
            elif verb in ("pickup", "drop"):
                world.submit(agent, verb, {"object": OBJECT})
            elif verb in ("plant", "defuse"):
                world.submit(agent, verb, {"target": rng.choice(targets)})
        report = world.step()
        for event in report.events:
            assert event[0] in PUBLIC_EVENTS and PUBLIC_EVENTS[str(event[0])].matches(event), event
        for events in report.private.values():
            for event in events:
                assert PRIVATE_EVENTS[str(event[0])].matches(event), event
        if world.outcome() is not None:
            break
    assert {"game_mode"} <= seen_names


def test_the_new_verbs_and_mode_facts_are_published_in_the_vocabulary() -> None:
    for verb, args in (
        ("pickup", ["object"]),
        ("drop", ["object"]),
        ("plant", ["target"]),
        ("defuse", ["target"]),
    ):
        assert Queue.ACTION is check_act(verb, args).queue
    assert {
        "game_mode",
        "objective",
        "role",
        "object_at",
        "carrier",
        "vip",
        "vip_at",
        "target_state",
        "fuse",
    } <= set(FACTS)
    assert {"returned", "object_reset", "planted", "defused", "destroyed"} <= set(PUBLIC_EVENTS)
    assert ("object", "team", "attacker") == DESTROYED.fields
