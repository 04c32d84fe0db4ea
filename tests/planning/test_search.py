"""The interruptible A* core on small explicit graphs: infinite estimates and pruning."""

from __future__ import annotations

import math

from warband.planning.search import AStar, SearchStatus

GRAPH = {"s": [("a", 1.0), ("b", 1.0)], "a": [("g", 5.0)], "b": [("g", 1.0)], "g": []}


def _expand(node: str) -> list[tuple[str, str, float]]:
    return [(f"{node}->{child}", child, cost) for child, cost in GRAPH[node]]


def test_a_node_with_an_infinite_estimate_is_never_recorded_or_expanded() -> None:
    core: AStar[str, str] = AStar(
        [("s", 0.0)],
        expand=_expand,
        heuristic=lambda node: math.inf if node == "b" else 0.0,
        is_goal=lambda node: node == "g",
    )

    assert SearchStatus.FOUND == core.step(100)
    assert "b" not in core.records
    assert ["s->a", "a->g"] == core.path("g")


def test_a_pruned_node_costs_no_expansion_and_the_search_goes_on_without_it() -> None:
    core: AStar[str, str] = AStar(
        [("s", 0.0)],
        expand=_expand,
        heuristic=lambda node: 0.0,
        is_goal=lambda node: node == "g",
        prune=lambda node, g: node == "b",
    )

    assert SearchStatus.FOUND == core.step(100)
    assert ["s", "a", "g"] == core.expanded
    assert 3 == core.expansions
    assert 6.0 == core.records["g"].g
