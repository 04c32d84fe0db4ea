"""The fast senses keep agreeing with the plain definition tick after tick.

A world keeps one :class:`~warband.world.perception.SightIndex` for its whole life, and its
memory answers every sight line met before: these tests play several ticks on one index, with
bodies that move, turn, share a spot and come back to a spot they left, walls that touch end to
end, bodies on the borders of view cones and at exactly the view distance, and noises at
exactly the hearing range; every tick the strips and the remembered index must give what every
observer against every body and every wall gives (:func:`perceive_all_pairs`), and
:func:`hearings` what :func:`hear` gives per listener. Doors and bars block links (moves), not
sight: a world's sight lines are its walls' alone, which the last test pins on a map with doors
that open and close between ticks. Each holds for both ways of working a tick out: pair by pair
in Python, and in numpy (:mod:`warband.world._sight_batch`), which a world takes from
:data:`~warband.world.perception.BATCH_PAIRS` observer-body pairs on.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from warband.world import Member, World, load_map, perception
from warband.world.perception import (
    Body,
    Noise,
    Observer,
    Senses,
    SightIndex,
    hear,
    hear_all,
    heard_numbers,
    hearings,
    perceive,
    perceive_all_pairs,
)

from .test_crowd_senses import SENSED, _reference_senses

# Spots on a lattice of 2.5: bodies meet on one spot, come back to one, stand on the ends of
# walls and on the diagonals (the borders of a cone a multiple of 45 degrees wide, turned by a
# multiple of 45 degrees), and at 12.5 (7.5, 10) from each other: exactly a view distance.
LATTICE = st.tuples(
    st.integers(-6, 6).map(lambda i: i * 2.5), st.integers(-6, 6).map(lambda i: i * 2.5)
)
HEADINGS = st.integers(-4, 4).map(lambda i: i * math.pi / 4)
CONES = st.sampled_from([math.pi / 2, math.pi, 2.0, 2 * math.pi])
REACHES = st.sampled_from([12.5, 10.0, 40.0])
PATHS = ["python", "numpy", "alternating"]
"""Which way :func:`perceive` works out the ticks: pair by pair in Python, in numpy, or each in
turn on the one index (a world takes numpy from a size on, and may fall below it again)."""


@st.composite
def _walls(draw: st.DrawFn) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Walls between lattice spots, some of them chained end to end (touching)."""
    walls = []
    for _ in range(draw(st.integers(0, 8))):
        start = walls[-1][1] if walls and draw(st.booleans()) else draw(LATTICE)
        walls.append((start, draw(LATTICE)))
    return walls


@st.composite
def _ticks(draw: st.DrawFn) -> list[list[tuple[tuple[float, float], float]]]:
    """Where each of a few entities stands and faces, tick after tick: it stays, moves to
    another spot, or goes back to the spot it had two ticks before."""
    count = draw(st.integers(1, 8))
    ticks = [[(draw(LATTICE), draw(HEADINGS)) for _ in range(count)]]
    for _ in range(draw(st.integers(1, 4))):
        now = []
        for i in range(count):
            how = draw(st.sampled_from(["stay", "move", "back", "turn"]))
            spot, heading = ticks[-1][i]
            if how == "move":
                spot = draw(LATTICE)
            elif how == "back":
                spot = ticks[-2][i][0] if len(ticks) > 1 else spot
            elif how == "turn":
                heading = draw(HEADINGS)
            now.append((spot, heading))
        ticks.append(now)
    return ticks


@settings(max_examples=150, deadline=None)
@given(
    walls=_walls(),
    ticks=_ticks(),
    cone=CONES,
    reach=REACHES,
    teams=st.lists(st.sampled_from(["r", "b"]), min_size=8, max_size=8),
    cloaked=st.lists(st.booleans(), min_size=8, max_size=8),
)
# Two on one spot, one leaving it and coming back; one on the border of the others' cones (at
# 45 degrees off a heading of 0, in cones 90 degrees wide) behind the joint of two walls; one at
# exactly the view distance (7.5, 10) from the shared spot.
@example(
    walls=[((5.0, 0.0), (5.0, 5.0)), ((5.0, 5.0), (10.0, 5.0))],
    ticks=[
        [((0.0, 0.0), 0.0), ((0.0, 0.0), math.pi), ((7.5, 7.5), 0.0), ((7.5, 10.0), 0.0)],
        [((2.5, 2.5), 0.0), ((0.0, 0.0), math.pi), ((7.5, 7.5), 0.0), ((7.5, 10.0), 0.0)],
        [((0.0, 0.0), 0.0), ((0.0, 0.0), math.pi), ((7.5, 7.5), 0.0), ((7.5, 10.0), 0.0)],
    ],
    cone=math.pi / 2,
    reach=12.5,
    teams=["r", "b", "r", "b", "r", "b", "r", "b"],
    cloaked=[False] * 8,
)
@pytest.mark.parametrize("path", PATHS)
def test_one_sight_index_over_ticks_of_moves_turns_and_returns_sees_like_all_pairs(
    walls: list[tuple[tuple[float, float], tuple[float, float]]],
    ticks: list[list[tuple[tuple[float, float], float]]],
    cone: float,
    reach: float,
    teams: list[str],
    cloaked: list[bool],
    path: str,
) -> None:
    senses = Senses(view_angle=cone, view_distance=reach, cloak_reveal_distance=5.0)
    index = SightIndex(walls, cell_size=5.0)  # kept, as a world keeps it: it remembers
    for number, tick in enumerate(ticks):
        eyes = [
            Observer(f"e{i}", teams[i], spot, heading, senses)
            for i, (spot, heading) in enumerate(tick)
        ]
        bodies = [
            Body(eye.id, eye.team, eye.position, cloaked=cloaked[i]) for i, eye in enumerate(eyes)
        ]

        batch = path == "numpy" or (path == "alternating" and number % 2 == 1)
        assert perceive_all_pairs(eyes, bodies, walls) == perceive(eyes, bodies, index, batch=batch)


# Spots on a lattice of 0.5: noises exactly at a hearing range from a listener, for loudness
# 0.3 (7.5 = (4.5, 6)), 1 (25 = (15, 20)) and 2 (50 = (30, 40)) with a radius of 25.
FINE = st.tuples(
    st.integers(-60, 60).map(lambda i: i * 0.5), st.integers(-60, 60).map(lambda i: i * 0.5)
)


@settings(max_examples=150, deadline=None)
@given(
    ticks=st.lists(
        st.tuples(
            st.lists(FINE, min_size=1, max_size=6),
            st.lists(
                st.tuples(FINE, st.sampled_from([0.3, 1.0, 2.0]), st.sampled_from(["a", "b"])),
                max_size=10,
            ),
        ),
        min_size=1,
        max_size=4,
    ),
    radius=st.sampled_from([25.0, 10.0]),
)
@example(
    ticks=[
        (
            [(0.0, 0.0), (0.0, 0.0)],
            [
                ((4.5, 6.0), 0.3, "a"),
                ((15.0, 20.0), 1.0, "a"),
                ((-30.0, 40.0), 2.0, "b"),
                ((4.5, 6.5), 0.3, "a"),
                ((0.0, 0.0), 1.0, "b"),
            ],
        ),
        ([(4.5, 6.0), (0.0, 0.0)], [((0.0, 0.0), 0.3, "a"), ((15.0, 20.0), 1.0, "a")]),
    ],
    radius=25.0,
)
@pytest.mark.parametrize("batch", [False, True], ids=["python", "numpy"])
# Two noises whose distances from the listener at the origin differ in their last bit by
# math.hypot (19.164191869212747 and ...75) and not at all by a square root of the sum of
# squares: the nearer is made by o1, so only the distances, not the sources, order them.
@example(
    ticks=[
        (
            [(-30.0, -30.0), (-30.0, -29.5), (0.0, 0.0)],
            [((17.969, 6.661928324441805), 1.0, "a"), ((18.125, -6.225), 1.0, "a")],
        )
    ],
    radius=25.0,
)
def test_hearings_tick_after_tick_are_what_each_listener_hears_at_the_range_borders(
    ticks: list[tuple[list[tuple[float, float]], list[tuple[tuple[float, float], float, str]]]],
    radius: float,
    batch: bool,
) -> None:
    for spots, made in ticks:
        ears = [
            Observer(f"o{i}", "red", spot, senses=Senses(hearing_radius=radius))
            for i, spot in enumerate(spots)
        ]
        # Noise i is made by listener o<i> when there is one (its own noise is never heard):
        # one source, one noise, as in a world (two alike at one distance keep no order).
        noises = [
            Noise(kind, spot, f"o{i}", loudness=loudness)
            for i, (spot, loudness, kind) in enumerate(made)
        ]

        assert {o.id: hear(o, noises) for o in ears} == hear_all(ears, noises, batch=batch)
        # What a world's percepts take: the indices alone, in the same order.
        assert {
            listener: [h[3] for h in found]
            for listener, found in hearings(ears, noises, batch=False).items()
        } == heard_numbers(ears, noises, batch=batch)


@pytest.mark.parametrize("numpy", [False, True], ids=["by size", "numpy"])
def test_doors_opening_and_closing_between_ticks_change_no_sight_line(
    numpy: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rooms map's doors block links while closed; sight goes by the walls alone, so a
    # world's remembered sight lines stay right whichever way the doors are (and whichever
    # path the world takes: a world of 12 takes Python's by size; numpy's when told to).
    if numpy:
        monkeypatch.setattr(perception, "BATCH_PAIRS", 0)
        monkeypatch.setattr(perception, "BATCH_HEARING_PAIRS", 0)
    game_map = load_map("rooms")
    spots = game_map.waypoint_ids
    rng = random.Random(7)
    roster = {
        f"p{i}": Member(game_map.teams[i % 2], "assault", start=rng.choice(spots))
        for i in range(12)
    }
    world = World.create(game_map, seed=7, roster=roster)
    blockers = [o.id for o in game_map.objects if o.kind in ("bars", "door")]
    assert blockers, "the rooms map has no door or bars: pick a map with some"
    compared = 0
    for tick in range(8):
        for agent in world.agent_ids:
            here = world.snapshot()["agents"][agent]["waypoint"]
            world.submit(agent, "move", {"waypoint": rng.choice(game_map.neighbours(here))})
        for blocker in blockers:  # open, shut, open... (the world's state, as a lever sets it)
            world._state.open[blocker] = tick % 2 == 0
        world.step()
        expected = _reference_senses(world)
        for agent in world.agent_ids:
            sensed = [f for f in world.percepts_for(agent) if f[0] in SENSED]
            assert expected.get(agent, []) == sensed, agent
            compared += len(sensed)
    assert compared > 0  # the crowd saw or heard something to compare
