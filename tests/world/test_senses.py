"""Percepts: what an agent sees and hears, cloak and disguise, facts as flat wire scalars."""

from __future__ import annotations

import math
import struct

from hypothesis import example, given, settings
from hypothesis import strategies as st

from warband.world import (
    Member,
)
from warband.world._state import rounded

from .simulation_helpers import (
    DUEL,
    accept,
    facts_named,
    world_on_test_map,
)


def test_percepts_report_what_the_agent_sees_and_hears() -> None:
    world = world_on_test_map(
        {
            "r": Member("red", "medic", start="m1"),
            "b": Member("blue", "medic", start="m3"),
            "far": Member("blue", "scout", start="s"),
        }
    )
    accept(world, "r", "look", waypoint="m3")
    accept(world, "r", "fire", target="b")
    world.step()

    assert ("sees", "b", "m3", 10.0, "blue") in world.percepts_for("r")
    assert [] == [f for f in world.percepts_for("r") if f[0] == "sees" and f[1] == "far"]
    assert ("heard", "gunfire", "m1") in world.percepts_for("far")
    assert ("heard", "gunfire", "m1") in world.percepts_for("b")


def test_a_cloaked_scout_is_unseen_from_afar_and_a_disguised_saboteur_looks_friendly() -> None:
    world = world_on_test_map(
        {
            "watcher": Member("red", "medic", start="m1"),
            "scout": Member("blue", "scout", start="m3"),
            "spy": Member("blue", "saboteur", start="c"),
        }
    )
    accept(world, "watcher", "look", waypoint="m3")
    accept(world, "scout", "use", ability="cloak")
    accept(world, "spy", "use", ability="disguise")
    world.step()
    seen = {f[1]: f for f in facts_named(world, "watcher", "sees")}

    assert "scout" not in seen
    assert "red" == seen["spy"][4]
    assert ("cloaked",) in world.percepts_for("scout")


def test_facts_are_flat_tuples_of_wire_scalars() -> None:
    world = world_on_test_map(DUEL, mode="capture_and_hold")
    world.submit("red-1", "fire", {"target": "blue-1"})
    world.step()

    for agent in world.agent_ids:
        for fact in [*world.percepts_for(agent), *world.events_for(agent)]:
            assert isinstance(fact, tuple) and isinstance(fact[0], str)
            assert all(isinstance(v, str | int | float | bool) for v in fact), fact


# Ties (k / 200: an exact half of a hundredth when the float is exact), their neighbours, and
# anything else a float can be, ints included: rounded() must be round(x, 2) to the bit.
tie = st.integers(-(10**8), 10**8).map(lambda k: k / 200)
near_tie = st.tuples(tie, st.sampled_from([math.inf, -math.inf])).map(lambda t: math.nextafter(*t))


@settings(max_examples=200, deadline=None)
@given(value=st.one_of(st.floats(), st.floats(0.0, 1e8), tie, near_tie, st.integers(-999, 999)))
@example(value=2.675)  # 267.49999999999997 exactly: round gives 2.67
@example(value=0.125)  # an exact tie: to even, 0.12
@example(value=-0.001)  # -0.0, not 0.0
@example(value=-0.0)
@example(value=99999999.995)
def test_rounded_is_round_to_two_decimals_bit_for_bit(value: float) -> None:
    expected, found = round(value, 2), rounded(value)

    assert type(found) is type(expected)
    if isinstance(expected, float):
        assert struct.pack("<d", found) == struct.pack("<d", expected)
    else:
        assert found == expected
