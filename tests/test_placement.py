"""warband.placement: which worker process each agent of a ``--workers N`` run goes to."""

from __future__ import annotations

import pytest

from warband import ConfigurationError
from warband.placement import place

AGENTS = [f"a{i}" for i in range(1, 8)]


def test_without_groups_agents_are_dealt_round_robin_in_build_order() -> None:
    assert [["a1", "a4", "a7"], ["a2", "a5"], ["a3", "a6"]] == place(AGENTS, 3)


def test_more_workers_than_agents_gives_one_worker_per_agent_and_no_empty_one() -> None:
    assert [["a1"], ["a2"]] == place(["a1", "a2"], 5)


def test_groups_at_least_as_many_as_workers_stay_whole_largest_first_to_the_lightest() -> None:
    groups = [["a1"], ["a2", "a3", "a4"], ["a5", "a6"], ["a7"]]
    # a2-a4 to worker 1, a5-a6 to worker 2, a1 to the lighter worker 2, a7 to the first of
    # two equal ones.
    assert [["a2", "a3", "a4", "a7"], ["a5", "a6", "a1"]] == place(AGENTS, 2, groups)


def test_fewer_groups_than_workers_share_the_workers_by_size_and_never_mix() -> None:
    red, blue = ["r1", "r2", "r3", "r4", "r5", "r6"], ["b1", "b2"]
    placed = place([*red, *blue], 4, [red, blue])
    assert [["r1", "r4"], ["r2", "r5"], ["r3", "r6"], ["b1", "b2"]] == placed


def test_agents_no_group_names_form_a_group_of_their_own() -> None:
    assert [["a1", "a2"], ["a3", "a4", "a5", "a6", "a7"]] == sorted(
        place(AGENTS, 2, [["a1", "a2"]]), key=len
    )


def test_the_same_input_gives_the_same_placement() -> None:
    groups = [AGENTS[:3], AGENTS[3:]]
    assert place(AGENTS, 3, groups) == place(AGENTS, 3, groups)


@pytest.mark.parametrize(
    ("workers", "groups", "message"),
    [
        (0, None, "--workers must be at least 1, got 0"),
        (2, [["a1", "nobody"]], "group 1 names 'nobody', which is not an agent of this run"),
        (2, [["a1"], ["a2", "a1"]], "'a1' is in group 1 and in group 2"),
    ],
)
def test_bad_placements_are_refused_naming_what_is_wrong(
    workers: int, groups: list[list[str]] | None, message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        place(AGENTS, workers, groups)
