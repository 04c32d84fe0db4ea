"""The public surface of warband.planning: a curated list, pinned so nothing leaks or vanishes."""

from __future__ import annotations

import subprocess
import sys

import warband.planning as planning

PUBLIC = {
    # GOAP
    "Action", "Brain", "Condition", "Effect", "Goal", "GoalSelection", "GoalVerdict", "GoapPlan",
    "GoapSearch", "GoapStep", "Key", "PlanResult", "SearchStatus", "Simulation", "StateValue",
    "WorldState", "eq", "find_plan", "ne", "select_goal", "simulate",
    # cooperation
    "CooperableNode", "CooperationAnswer", "CooperationCost", "CooperativePlan",
    "CooperativePlanning", "CooperativeSearch", "answer_request", "plan_cooperatively",
    # HTN
    "BUNDLED_DOMAINS", "And", "Bind", "Branch", "BranchFailure", "BranchMemo", "Call", "Choice",
    "ConstRef", "DomainBuilder", "FactDB", "FactDecl", "FactReads", "HtnCondition", "HtnDomain",
    "HtnPlan", "HtnPlanner", "HtnResult", "HtnSearch", "Method", "Not", "Or", "Primitive", "Query",
    "Replan", "Task", "Var", "bind", "call", "choose_plan", "format_domain", "load_domain",
    "load_domain_file", "parse_domain", "query", "task", "validate_domain",
    # scheduling
    "InterruptibleSearch", "PlanDelivery", "PlanningScheduler",
    # explanations
    "BranchNode", "SearchTree", "SearchTreeNode", "TaskNode", "decomposition_tree",
    "goap_tree_dict", "goap_tree_dot", "goap_tree_text", "htn_plan_text", "htn_tree_dict",
    "htn_tree_text",
}  # fmt: skip


def test_the_public_names_are_exactly_the_curated_list_each_once() -> None:
    assert sorted(PUBLIC) == sorted(planning.__all__)
    assert len(planning.__all__) == len(set(planning.__all__))
    assert [] == [name for name in planning.__all__ if not hasattr(planning, name)]


def test_no_public_name_means_two_things_across_the_layers() -> None:
    import warband.messaging.catalog as catalog

    assert {"CooperationResult", "Bindings", "GoapProblem", "FactValue"}.isdisjoint(PUBLIC)
    assert hasattr(catalog, "CooperationResult")  # the message keeps its name


def test_the_planning_modules_import_no_runtime_module() -> None:
    code = (
        "import sys, warband.planning, warband.planning.domains.blocks; "
        "bad = [m for m in ('zmq', 'asyncio', 'structlog', 'msgspec', 'warband.messaging') "
        "if m in sys.modules]; print(bad)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "[]" == result.stdout.strip()


def test_the_goap_and_htn_subpackages_each_export_their_half_of_the_public_names() -> None:
    import warband.planning.goap as goap
    import warband.planning.htn as htn

    assert set(goap.__all__) | set(htn.__all__) <= PUBLIC
    assert set(goap.__all__).isdisjoint(htn.__all__)
    assert {"GoapSearch", "WorldState", "plan_cooperatively"} <= set(goap.__all__)
    assert {"HtnPlanner", "FactDB", "parse_domain", "htn_tree_text"} <= set(htn.__all__)
    for module in (goap, htn):
        assert [] == [
            name for name in module.__all__ if getattr(planning, name) is not getattr(module, name)
        ]
