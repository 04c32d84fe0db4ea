"""GOAP explanations: the recorded search tree as text, a JSON-ready dict and Graphviz DOT."""

from __future__ import annotations

import json
import re

from warband.planning import (
    Action,
    SearchTree,
    WorldState,
    eq,
    find_plan,
    goap_tree_dict,
    goap_tree_dot,
    goap_tree_text,
    plan_cooperatively,
)
from warband.planning.goap.explain import cooperable_nodes

BARS = eq("bars_open(cell)", True, any_agent=True)
PRISONER_START = WorldState({"at(prisoner)": "cell", "bars_open(cell)": False})


def _prisoner_actions() -> list[Action]:
    return [
        Action(
            "WalkOut",
            preconditions=[BARS, eq("at(prisoner)", "cell")],
            effects={"at(prisoner)": "yard"},
        )
    ]


def _solo_tree() -> SearchTree:
    actions = [
        Action("Shoot", preconditions={"armed": True}, effects={"enemy_dead": True}),
        Action("Arm", effects={"armed": True}),
        Action("Strangle", effects={"enemy_dead": True}, cost=5),
    ]
    result = find_plan(
        WorldState({"armed": False}), {"enemy_dead": True}, actions, record_tree=True
    )
    assert result.tree is not None
    return result.tree


def _cooperation_tree() -> SearchTree:
    result = plan_cooperatively(
        PRISONER_START, {"at(prisoner)": "yard"}, _prisoner_actions(), record_tree=True
    )
    assert result.tree is not None
    return result.tree


def test_tree_is_not_recorded_unless_asked() -> None:
    result = find_plan(
        WorldState({"armed": False}), {"armed": True}, [Action("Arm", effects={"armed": True})]
    )

    assert None is result.tree


def test_tree_marks_the_chosen_path_from_goal_to_start() -> None:
    tree = _solo_tree()

    steps = [tree.node(i).step for i in tree.path]
    assert [None, "Shoot", "Arm"] == [None if s is None else s.name for s in steps]
    assert [True] * 3 == [tree.node(i).on_path for i in tree.path]
    assert 0 == tree.path[0]


def test_nodes_split_their_conditions_into_satisfied_and_open() -> None:
    tree = _solo_tree()
    shoot_node = tree.node(tree.path[1])

    assert (eq("armed", True),) == shoot_node.open
    assert () == shoot_node.satisfied
    assert (eq("enemy_dead", True),) == shoot_node.achieved
    last = tree.node(tree.path[-1])
    assert () == last.open


def test_text_shows_the_chosen_path_and_each_edge_action() -> None:
    text = goap_tree_text(_solo_tree())

    assert "GOAP search tree for: enemy_dead == true" in text
    assert re.search(r"^  \* #\d+ <- Shoot cost=1", text, re.MULTILINE)
    assert re.search(r"^    \* #\d+ <- Arm cost=1", text, re.MULTILINE)
    assert "open:      armed == true" in text


def test_text_marks_the_cooperation_action_and_tagged_conditions() -> None:
    text = _cooperation_tree().text()

    assert "[cooperation] Cooperate[bars_open(cell) == true]" in text
    assert "bars_open(cell) == true [any agent]" in text


def test_the_cooperable_nodes_of_the_solo_search_are_marked_and_summed_up() -> None:
    tree = _cooperation_tree()
    walk_out = next(node for node in tree.nodes if node.step and node.step.name == "WalkOut")
    asked = next(node for node in tree.nodes if node.cooperation)

    assert (walk_out.id,) == cooperable_nodes(tree)
    assert (BARS,) == walk_out.cooperable
    text = tree.text()
    assert re.search(rf"#{walk_out.id} <- WalkOut cost=1 .*\[cooperable\]$", text, re.MULTILINE)
    assert f"cooperable nodes: #{walk_out.id}" in text
    assert (
        f"chosen cooperation: #{walk_out.id} -> #{asked.id} asks another agent for "
        "bars_open(cell) == true [any agent] (cost 1)"
    ) in text


def test_a_tree_without_tagged_conditions_has_no_cooperation_summary() -> None:
    text = _solo_tree().text()

    assert "cooperable" not in text


def test_the_dict_lists_the_cooperable_conditions_of_cooperable_nodes_only() -> None:
    data = _cooperation_tree().to_dict()

    cooperable = {node["action"]["name"]: node["cooperable"] for node in data["nodes"][1:]}
    assert ["bars_open(cell) == true"] == [c["text"] for c in cooperable["WalkOut"]]
    assert [] == cooperable["Cooperate"]


def test_dict_is_json_serialisable_and_lists_the_plan_in_execution_order() -> None:
    tree = _cooperation_tree()

    data = json.loads(json.dumps(goap_tree_dict(tree)))

    assert ["Cooperate", "WalkOut"] == [step["name"] for step in data["plan"]]
    assert [True, False] == [step["cooperation"] for step in data["plan"]]
    cooperation_nodes = [node for node in data["nodes"] if node["cooperation"]]
    assert 1 == len(cooperation_nodes)
    assert cooperation_nodes[0]["on_path"]
    assert data == tree.to_dict()


def test_dot_is_a_digraph_with_the_path_and_the_cooperation_edge_styled() -> None:
    dot = goap_tree_dot(_cooperation_tree())

    assert dot.startswith("digraph goap_search {")
    assert dot.rstrip().endswith("}")
    cooperation_edges = [line for line in dot.splitlines() if "Cooperate" in line and "->" in line]
    assert 1 == len(cooperation_edges)
    assert 'style="dashed"' in cooperation_edges[0]
    assert "penwidth=2" in cooperation_edges[0]
    assert 'color="red"' in dot


def test_dot_escapes_quotes_in_values() -> None:
    actions = [Action("Say", effects={"said": 'a "quoted" word'})]
    result = find_plan(WorldState(), {"said": 'a "quoted" word'}, actions, record_tree=True)
    assert result.tree is not None

    dot = result.tree.to_dot()

    # The value's text is "a \"quoted\" word" (warband.values.format_value); DOT escapes it again.
    assert r"\"a \\\"quoted\\\" word\"" in dot
    assert re.fullmatch(r'(?:[^"\\]|\\.|"(?:[^"\\]|\\.)*")*', dot)


def test_tree_without_a_plan_says_so() -> None:
    actions = [Action("Arm", preconditions={"licensed": True}, effects={"armed": True})]
    result = find_plan(WorldState({"armed": False}), {"armed": True}, actions, record_tree=True)
    assert result.tree is not None

    assert () == result.tree.path
    assert "no plan" in result.tree.text()
