"""Tests of the HTN planner: SHOP-ordered backtracking, calls, negation, effects, continuation
branches, plan priority by branch path, and the checks of domains built in Python."""

from __future__ import annotations

import pytest

from warband.exceptions import PlanningError
from warband.planning import (
    And,
    DomainBuilder,
    FactDB,
    HtnPlan,
    HtnPlanner,
    HtnResult,
    Not,
    Or,
    Task,
    bind,
    call,
    choose_plan,
    query,
    task,
)
from warband.values import Value


def _steps(result: HtnResult) -> list[str]:
    assert result.plan is not None, result.status
    return [str(step) for step in result.plan.steps]


def _attack_domain() -> DomainBuilder:
    b = DomainBuilder("attack")
    b.primitive("!fire", "?t")
    b.primitive("!wait")
    b.method("behave").branch(
        "attack", query("threat", "?t"), [task("aim", "?t"), task("!fire", "?t")]
    ).branch("idle", subtasks=[task("!wait")])
    b.method("aim", "?t").branch("visible", query("visible", "?t"))
    return b


def test_backtracks_to_the_second_binding_when_the_first_fails_deeper() -> None:
    domain = _attack_domain().build()
    facts = FactDB([("threat", "a"), ("threat", "b"), ("visible", "b")])
    result = HtnPlanner(domain).plan(facts, "behave")
    assert ["(!fire b)"] == _steps(result)
    assert (0, 0) == result.plan.path  # type: ignore[union-attr]


def test_backtracks_to_the_next_branch_when_no_binding_decomposes() -> None:
    domain = _attack_domain().build()
    facts = FactDB([("threat", "a"), ("threat", "b")])
    result = HtnPlanner(domain).plan(facts, "behave")
    assert ["(!wait)"] == _steps(result)
    assert (1,) == result.plan.path  # type: ignore[union-attr]


def test_the_path_lists_branch_indices_in_decomposition_order() -> None:
    b = DomainBuilder("path")
    b.primitive("!x", "?v")
    b.method("root").branch("r", subtasks=[task("left"), task("right")])
    b.method("left").branch("l0", query("never")).branch("l1", subtasks=[task("!x", 1)])
    b.method("right").branch("r0", query("never")).branch("r1", query("never")).branch(
        "r2", subtasks=[task("!x", 2)]
    )
    result = HtnPlanner(b.build()).plan(FactDB(), "root")
    assert (0, 1, 2) == result.plan.path  # type: ignore[union-attr]
    assert ("root", "left", "right") == result.plan.methods  # type: ignore[union-attr]
    assert ["(!x 1)", "(!x 2)"] == _steps(result)


def test_call_binds_its_result_and_comparison_calls_filter() -> None:
    b = DomainBuilder("calls")
    b.constant("range", 10)
    b.function("dist", lambda facts, t: {"a": 20, "b": 5}[t])
    b.primitive("!fire", "?t", "?d")
    b.method("behave").branch(
        "in range",
        And((query("threat", "?t"), bind("?d", call("dist", "?t")), call("le", "?d", "@range"))),
        [task("!fire", "?t", "?d")],
    )
    result = HtnPlanner(b.build()).plan(FactDB([("threat", "a"), ("threat", "b")]), "behave")
    assert ["(!fire b 5)"] == _steps(result)


def test_a_call_returning_none_fails_the_binding() -> None:
    b = DomainBuilder("none")
    b.function("pick", lambda facts: None)
    b.primitive("!go", "?p")
    b.primitive("!stay")
    b.method("behave").branch("go", bind("?p", call("pick")), [task("!go", "?p")]).branch(
        "stay", subtasks=[task("!stay")]
    )
    assert ["(!stay)"] == _steps(HtnPlanner(b.build()).plan(FactDB(), "behave"))


def test_not_holds_only_when_its_condition_has_no_answer() -> None:
    b = DomainBuilder("not")
    b.primitive("!charge", "?t")
    b.method("behave").branch(
        "charge", And((query("threat", "?t"), Not(query("armed", "?t")))), [task("!charge", "?t")]
    )
    facts = FactDB([("threat", "a"), ("armed", "a"), ("threat", "b")])
    assert ["(!charge b)"] == _steps(HtnPlanner(b.build()).plan(facts, "behave"))


def test_or_tries_each_alternative_in_order() -> None:
    b = DomainBuilder("or")
    b.primitive("!hit", "?t")
    b.method("behave").branch(
        "hit", Or((query("enemy", "?t"), query("turret", "?t"))), [task("!hit", "?t")]
    )
    planner = HtnPlanner(b.build())
    assert ["(!hit t1)"] == _steps(planner.plan(FactDB([("turret", "t1")]), "behave"))
    assert ["(!hit e1)"] == _steps(
        planner.plan(FactDB([("turret", "t1"), ("enemy", "e1")]), "behave")
    )


def test_primitive_effects_are_seen_by_later_preconditions_and_undone_on_backtracking() -> None:
    b = DomainBuilder("effects")
    b.primitive("!load", "?w", add=[query("loaded", "?w")])
    b.primitive("!fire", "?w")
    b.primitive("!idle")
    b.method("behave").branch(
        "load then fire", subtasks=[task("!load", "rifle"), task("shoot"), task("fail_if_rifle")]
    ).branch("idle", subtasks=[task("check_unloaded")])
    b.method("shoot").branch("fire", query("loaded", "?w"), [task("!fire", "?w")])
    b.method("fail_if_rifle").branch("never", query("loaded", "pistol"))
    b.method("check_unloaded").branch("unloaded", Not(query("loaded", "?w")), [task("!idle")])
    facts = FactDB()
    result = HtnPlanner(b.build()).plan(facts, "behave")
    # The first branch loaded the rifle in its own snapshot; the second branch must not see it.
    assert ["(!idle)"] == _steps(result)
    assert 0 == len(facts)


def test_facts_a_function_asserts_live_only_in_its_branch() -> None:
    def request(facts: FactDB, target: str) -> bool:
        facts.assert_fact("answer", target)
        return True

    b = DomainBuilder("request")
    b.function("request", request)
    b.primitive("!use", "?t")
    b.method("behave").branch(
        "ask a", And((call("request", "a"), query("answer", "a"), query("never"))), []
    ).branch(
        "check", And((Not(query("answer", "a")), query("answer", "?t"))), [task("!use", "?t")]
    ).branch("ask b", And((call("request", "b"), query("answer", "?t"))), [task("!use", "?t")])
    facts = FactDB()
    assert ["(!use b)"] == _steps(HtnPlanner(b.build()).plan(facts, "behave"))
    assert [] == list(facts)


def test_a_function_that_raises_is_reported_with_its_call() -> None:
    b = DomainBuilder("raise")
    b.function("boom", lambda facts: 1 / 0)
    b.method("behave").branch("b", call("boom"))
    with pytest.raises(PlanningError, match=r"function 'boom' raised ZeroDivisionError"):
        HtnPlanner(b.build()).plan(FactDB(), "behave")


def test_a_domain_that_never_bottoms_out_exhausts_its_budget() -> None:
    b = DomainBuilder("loop")
    b.method("behave").branch("again", subtasks=[task("behave")])
    result = HtnPlanner(b.build()).plan(FactDB(), "behave", max_expansions=500)
    assert "exhausted" == result.status
    assert 500 == result.expansions


def test_no_plan_is_a_result_with_the_root_failures() -> None:
    b = DomainBuilder("nothing")
    b.method("behave").branch("a", query("x")).branch("b", query("y"))
    result = HtnPlanner(b.build()).plan(FactDB(), "behave")
    assert "failed" == result.status
    assert ["a", "b"] == [f.name for f in result.root_failures]
    assert {"precondition failed"} == {f.reason for f in result.root_failures}


def test_required_constants_must_be_supplied_by_the_agent() -> None:
    b = DomainBuilder("self")
    b.constant("self")
    b.primitive("!heal", "?who")
    b.method("behave").branch("heal", query("hurt", "@self"), [task("!heal", "@self")])
    planner = HtnPlanner(b.build())
    with pytest.raises(PlanningError, match=r"needs the constant\(s\) @self"):
        planner.plan(FactDB(), "behave")
    facts = FactDB([("hurt", "bot-2")])
    assert ["(!heal bot-2)"] == _steps(planner.plan(facts, "behave", constants={"self": "bot-2"}))


def test_an_unknown_root_task_names_the_known_methods() -> None:
    with pytest.raises(
        PlanningError, match=r"unknown root task 'behav'.*known methods: aim, behave"
    ):
        HtnPlanner(_attack_domain().build()).plan(FactDB(), "behav")


@pytest.mark.parametrize(
    ("subtask", "message"),
    [
        (task("!fyre", "?t"), "unknown primitive task '!fyre'.*Known primitives: !fire"),
        (task("aimm", "?t"), "unknown compound task 'aimm'.*Known methods: behave"),
        (task("!fire", "?nobody"), r"unbound variable \?nobody"),
        (task("!fire", "@range"), "unknown constant @range"),
        (task("!fire", "?t", "?t"), "takes 1 argument"),
        (task("!fire", call("distt", "?t")), "unknown function 'distt'"),
    ],
)
def test_domains_built_in_python_are_checked(subtask: Task, message: str) -> None:
    b = DomainBuilder("bad")
    b.primitive("!fire", "?t")
    b.method("behave").branch("attack", query("threat", "?t"), [subtask])
    with pytest.raises(PlanningError, match=message):
        b.build()


def test_a_call_may_only_use_variables_bound_before_it() -> None:
    b = DomainBuilder("order")
    b.method("behave").branch("b", And((call("le", "?d", 3), query("dist", "?d"))))
    with pytest.raises(PlanningError, match=r"unbound variable \?d"):
        b.build()


# --- continuation and priority --------------------------------------------------------------


def _heal_domain() -> DomainBuilder:
    b = DomainBuilder("heal")
    b.primitive("!flee", "?g")
    b.primitive("!heal", "?who")
    b.primitive("!idle")
    b.method("behave").branch("flee", query("grenade", "?g"), [task("!flee", "?g")]).branch(
        "heal", subtasks=[task("heal")]
    ).branch("idle", subtasks=[task("!idle")])
    b.method("heal").continuation("keep healing", query("hurt", "?who")).branch(
        "start healing", query("hurt", "?who"), [task("!heal", "?who")]
    )
    return b


def _plan(facts: list[tuple[Value, ...]], current: HtnPlan | None = None) -> HtnResult:
    return HtnPlanner(_heal_domain().build()).plan(FactDB(facts), "behave", current=current)


def test_continuation_branches_are_skipped_without_an_active_plan() -> None:
    result = _plan([("hurt", "ann")])
    assert ["(!heal ann)"] == _steps(result)
    assert (1, 1) == result.plan.path  # type: ignore[union-attr]


def test_an_active_plan_whose_continuation_holds_is_kept() -> None:
    heal = _plan([("hurt", "ann")]).plan
    result = _plan([("hurt", "ann")], current=heal)
    assert "continue" == result.status
    assert None is result.plan
    decision = choose_plan(heal, result)
    assert heal is decision.plan
    assert False is decision.replaced


def test_continuation_applies_only_to_plans_made_by_the_same_method() -> None:
    idle = _plan([]).plan
    assert idle is not None and ("behave",) == idle.methods
    result = _plan([("hurt", "ann")], current=idle)
    assert "plan" == result.status
    assert True is choose_plan(idle, result).replaced  # (1, 1) outranks (2,)


def test_grenade_beats_heal() -> None:
    heal = _plan([("hurt", "ann")]).plan
    result = _plan([("hurt", "ann"), ("grenade", "g1")], current=heal)
    assert ["(!flee g1)"] == _steps(result)
    decision = choose_plan(heal, result)
    assert True is decision.replaced
    assert result.plan is decision.plan
    assert "higher-priority" in decision.reason


def test_a_lapsed_continuable_plan_is_replaced_by_a_lower_priority_plan() -> None:
    heal = _plan([("hurt", "ann")]).plan
    result = _plan([], current=heal)  # ann is healed: the continuation no longer holds
    assert ["(!idle)"] == _steps(result)
    decision = choose_plan(heal, result)
    assert True is decision.replaced
    assert "lapsed" in decision.reason


def _plan_with_path(path: tuple[int, ...], continuable: bool = False) -> HtnPlan:
    return HtnPlan(Task("behave"), (), path, ("behave",) * len(path), continuable, ())


def test_an_equal_path_is_not_a_replacement() -> None:
    current = _plan_with_path((1, 0))
    fresh = _plan_with_path((1, 0))
    assert False is fresh.outranks(current)
    decision = choose_plan(current, HtnResult("plan", Task("behave"), plan=fresh))
    assert current is decision.plan
    assert False is decision.replaced


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        ((0,), (1,), True),
        ((1, 0, 5), (1, 1), True),
        ((1, 1), (1, 0, 5), False),
        ((2,), (1, 9), False),
        ((1, 0), (1, 0, 3), False),  # a prefix takes no branch farther up the list
        ((1, 0, 3), (1, 0), False),
    ],
)
def test_plans_rank_by_the_first_differing_branch_index(
    new: tuple[int, ...], old: tuple[int, ...], expected: bool
) -> None:
    assert expected is _plan_with_path(new).outranks(_plan_with_path(old))


def test_a_lower_priority_plan_does_not_replace_a_plan_without_continuation() -> None:
    current = _plan_with_path((0,))
    fresh = _plan_with_path((1,))
    decision = choose_plan(current, HtnResult("plan", Task("behave"), plan=fresh))
    assert current is decision.plan


def test_without_a_current_plan_any_new_plan_is_taken_and_no_plan_stays_none() -> None:
    fresh = _plan_with_path((3,))
    assert fresh is choose_plan(None, HtnResult("plan", Task("behave"), plan=fresh)).plan
    assert None is choose_plan(None, HtnResult("failed", Task("behave"))).plan


def test_the_htn_public_names_are_exported_from_warband_planning() -> None:
    import warband.planning as planning

    names = {
        "FactDB",
        "HtnPlanner",
        "DomainBuilder",
        "HtnPlan",
        "HtnResult",
        "choose_plan",
        "parse_domain",
        "format_domain",
        "decomposition_tree",
        "htn_tree_text",
        "htn_tree_dict",
    }
    assert names <= set(planning.__all__)
    assert all(hasattr(planning, name) for name in planning.__all__)
    assert len(planning.__all__) == len(set(planning.__all__))


def test_backtracks_into_an_earlier_sibling_when_a_later_one_fails() -> None:
    b = DomainBuilder("siblings")
    b.primitive("!choose", "?x", add=[query("chosen", "?x")])
    b.primitive("!use", "?x")
    b.method("root").branch("r", subtasks=[task("pick"), task("check")])
    b.method("pick").branch("a", subtasks=[task("!choose", "a")]).branch(
        "b", subtasks=[task("!choose", "b")]
    )
    b.method("check").branch("needs b", query("chosen", "b"), [task("!use", "b")])
    result = HtnPlanner(b.build()).plan(FactDB(), "root")
    assert ["(!choose b)", "(!use b)"] == _steps(result)
    assert (0, 1, 0) == result.plan.path  # type: ignore[union-attr]


def test_an_exhausted_replan_keeps_the_current_plan() -> None:
    current = _plan_with_path((1,), continuable=True)
    decision = choose_plan(current, HtnResult("exhausted", Task("behave")))
    assert current is decision.plan
    assert False is decision.replaced
