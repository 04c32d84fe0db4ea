"""The numpy path of the senses (:mod:`warband.world._sight_batch`) answers exactly like the
plain definition: every observer against every body and every wall
(:func:`~warband.world.perception.perceive_all_pairs`), every listener against every noise
(:func:`~warband.world.perception.hear`), and the Python path pair by pair; and numpy stays out
of ``import warband`` and of an agent's process.

The cone, range, cloak, shared-spot and hearing borders over ticks are pinned for both paths in
``test_senses_over_ticks.py``; here, the walls' edge cases (lines ending on walls, along them, a
hair off them, on cell borders, nearly vertical, shorter than a hundredth), lines asked back
from their far end, a memory that fills up, coordinates too big for numpy, and a crowded world.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from warband.world import Member, World, grid_map
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
    sight_lines,
)

from .test_perception import _walls_and_lines

# Sees all around and as far as any test line goes: only the walls decide.
EVERYWHERE = Senses(view_angle=2 * math.pi, view_distance=1e4)
Segment = tuple[tuple[float, float], tuple[float, float]]


def _sees(
    starts: list[tuple[float, float]], ends: list[tuple[float, float]], index: SightIndex
) -> tuple[object, object]:
    """What observers on ``starts`` see of bodies on ``ends`` by numpy, and by every wall."""
    eyes = [Observer(f"o{i}", "r", spot, 0.0, EVERYWHERE) for i, spot in enumerate(starts)]
    bodies = [Body(f"b{i}", "b", spot) for i, spot in enumerate(ends)]
    return perceive_all_pairs(eyes, bodies, index.walls), perceive(eyes, bodies, index, batch=True)


@settings(max_examples=100, deadline=None)
@given(case=_walls_and_lines(), cell_size=st.sampled_from([8.0, 16.0, 3.0]))
# A line starting a hair beyond a wall's end, along it (touching there only); a line shorter
# than a hundredth ending on a wall; a nearly vertical one through a wall's end.
@example(case=([((0.0, 0.0), (10.0, 0.0))], [((10.0 + 1e-10, 0.0), (20.0, 30.0))]), cell_size=16.0)
@example(case=([((0.0, 0.0), (10.0, 0.0))], [((5.0, 0.0), (5.001, 0.004))]), cell_size=16.0)
@example(case=([((0.0, 0.0), (10.0, 0.0))], [((10.0, -5.0), (10.0 + 1e-7, 5.0))]), cell_size=8.0)
# A line a ten-thousandth long across a cell border, and a wall ending within the epsilon of it
# outside the box of its piece in either column (only the line's whole box holds that end).
@example(
    case=([((15.999995, 4.4e-05), (15.99, 0.01))], [((15.99995, 0.0), (16.00005, 0.00008))]),
    cell_size=16.0,
)
# A wall ending within a rounding error of the epsilon of a line: touching seen from one end,
# not from the other, so the answer must not be mirrored.
@example(
    case=(
        [((-35.07778521487535, 13.630679749958938), (-37.091725718645215, 18.30971285146783))],
        [((-4.915497285726836, 2.3895439866978094), (-42.459475145403914, 16.381750188159337))],
    ),
    cell_size=16.0,
)
def test_numpy_sight_on_lines_ending_on_walls_at_cell_borders_or_steep_is_every_walls_answer(
    case: tuple[list[Segment], list[Segment]], cell_size: float
) -> None:
    walls, lines = case
    index = SightIndex(walls, cell_size=cell_size)
    starts, ends = [a for a, _ in lines], [b for _, b in lines]

    expected, found = _sees(starts, ends, index)
    assert expected == found
    # Asked back from the far ends: answered from the lines learnt (mirrored) or tested again.
    expected, found = _sees(ends, starts, index)
    assert expected == found


def test_a_full_numpy_sight_memory_forgets_its_older_half_and_keeps_answering_like_every_wall() -> (
    None
):
    rng = random.Random(3)

    def spot() -> tuple[float, float]:
        return (rng.uniform(0, 50), rng.uniform(0, 50))

    walls = [(spot(), spot()) for _ in range(12)]
    index = SightIndex(walls, cache_limit=16)
    for _ in range(6):  # each round learns up to 25 lines (and their mirrors) in a memory of 16
        starts, ends = [spot() for _ in range(5)], [spot() for _ in range(5)]
        expected, found = _sees(starts, ends, index)
        assert expected == found
        expected, found = _sees(ends, starts, index)
        assert expected == found


def test_coordinates_too_big_for_numpy_are_seen_and_heard_by_the_python_path() -> None:
    far = 1e120  # its square overflows: the numpy path hands over to the Python one
    eyes = [Observer("a", "r", (far, far)), Observer("b", "b", (far + 1e105, far))]
    bodies = [Body(e.id, e.team, e.position) for e in eyes]
    noises = [Noise("footsteps", e.position, e.id) for e in eyes]

    assert perceive_all_pairs(eyes, bodies, []) == perceive(eyes, bodies, [], batch=True)
    assert {e.id: hear(e, noises) for e in eyes} == hear_all(eyes, noises, batch=True)


def _crowd(entities: int, seed: int) -> World:
    game_map = grid_map(24, 16, spacing=5.0, wall_fraction=0.15, seed=seed)
    rng = random.Random(seed)
    roster = {
        f"bot-{i:03d}": Member(
            "red" if i % 2 else "blue",
            ("assault", "scout", "saboteur")[i % 3],
            start=rng.choice(game_map.waypoint_ids),
        )
        for i in range(entities)
    }
    return World.create(game_map, seed=seed, roster=roster)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_crowded_world_sees_and_hears_alike_by_numpy_and_by_python_tick_after_tick(
    seed: int,
) -> None:
    # 160 characters on 384 waypoints, walking, turning and firing: bodies share spots, noises
    # pile up, scouts see farther; one index per path, each remembering across the ticks.
    world = _crowd(160, seed)
    rng = random.Random(seed)
    plain, numpy_index = SightIndex(world.map.walls), SightIndex(world.map.walls)
    compared = 0
    for _ in range(6):
        for agent in world.agent_ids:
            here = world.snapshot()["agents"][agent]["waypoint"]
            world.submit(agent, "move", {"waypoint": rng.choice(world.map.neighbours(here))})
            world.submit(agent, "fire", {"target": rng.choice(world.agent_ids)})
        world.step()
        eyes, bodies = world.perception_inputs()
        noises = [noise for noise, _ in world._state.noises]
        seen = sight_lines(eyes, bodies, numpy_index, batch=True)
        heard = hearings(eyes, noises, batch=True)

        assert sight_lines(eyes, bodies, plain, batch=False) == seen
        assert list(seen) == [e.id for e in eyes]
        assert hearings(eyes, noises, batch=False) == heard
        numbers = {listener: [h[3] for h in found] for listener, found in heard.items()}
        assert heard_numbers(eyes, noises, batch=True) == numbers
        assert heard_numbers(eyes, noises, batch=False) == numbers
        compared += sum(map(len, seen.values())) + sum(map(len, heard.values()))
    assert compared > 1000  # a crowd that saw and heard plenty


def test_numpy_stays_out_of_import_warband_and_of_an_agents_process() -> None:
    # What `warband agent` does before it runs: import warband, load the scenario and build
    # its actors (a 48v48 Warzone: the world is built too). Perception of a whole tick, and
    # numpy with it, belongs to the world actor's process once it runs: numpy would cost
    # every agent process its memory.
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "warzone.py"
    code = (
        "import sys, warband\n"
        "assert 'numpy' not in sys.modules, 'import warband'\n"
        "from warband.scenario import load_scenario\n"
        f"scenario = load_scenario({str(scenario)!r})\n"
        "scenario.build(scenario.resolve_params({'bots': '48'}), 1)\n"
        "print('numpy' in sys.modules)"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "False" == found.stdout.strip()


def test_bodies_at_one_distance_are_seen_and_heard_in_id_order_by_numpy_too() -> None:
    # Found in another order than their ids sort in: two on one spot (listed z first), two at
    # 5 units on other spots; and their noises, all at one distance from the listener.
    eye = Observer("eye", "r", (0.0, 0.0), 0.0, EVERYWHERE)
    bodies = [
        Body("z", "b", (3.0, 4.0)),
        Body("a", "b", (3.0, 4.0)),
        Body("m", "b", (4.0, 3.0)),
        Body("c", "b", (5.0, 0.0)),
    ]
    noises = [Noise(kind, b.position, b.id) for b in bodies for kind in ("shot", "step")]

    assert perceive_all_pairs([eye], bodies, []) == perceive([eye], bodies, [], batch=True)
    assert {"eye": hear(eye, noises)} == hear_all([eye], noises, batch=True)
