"""Tests that the planner's compiled conditions answer as the condition language defines them:
the bindings and their order, repeated variables, negation, rebinding, constants, the errors of
unbound variables and bad task arguments, and planners sharing one domain's compiled form."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import PlanningError
from warband.planning import (
    And,
    Branch,
    DomainBuilder,
    FactDB,
    HtnDomain,
    HtnPlanner,
    HtnResult,
    Method,
    Not,
    Or,
    Task,
    bind,
    call,
    query,
    task,
)
from warband.planning.htn.facts import Var
from warband.planning.htn.planner import HtnCondition, Primitive
from warband.values import Fact


def _probe(condition: HtnCondition, facts: FactDB, **constants: object) -> HtnResult:
    b = DomainBuilder("probe")
    for name, value in constants.items():
        b.constant(name, value)  # type: ignore[arg-type]
    b.primitive("!ok")
    b.method("root").branch("probe", condition, [task("!ok")])
    return HtnPlanner(b.build()).plan(facts, "root")


def _bindings(condition: HtnCondition, facts: FactDB) -> tuple[tuple[str, object], ...] | None:
    result = _probe(condition, facts)
    return None if result.plan is None else result.plan.choices[0].bindings


def test_bindings_are_reported_in_the_order_they_were_bound() -> None:
    facts = FactDB([("q", 1, 2), ("p", 3, 4)])
    either = Or((query("p", "?a", "?b"), query("q", "?b", "?a")))
    assert (("a", 3), ("b", 4)) == _bindings(either, facts)
    facts.retract("p", 3, 4)
    assert (("b", 1), ("a", 2)) == _bindings(either, facts)


def test_a_repeated_variable_matches_only_equal_arguments() -> None:
    facts = FactDB([("pair", 1, 2), ("pair", 3, 3)])
    assert (("x", 3),) == _bindings(query("pair", "?x", "?x"), facts)


def test_negation_binds_nothing_and_later_queries_bind_afresh() -> None:
    facts = FactDB([("a", 1), ("a", 2), ("b", 1)])
    cond = And((Not(And((query("a", "?x"), query("b", "?x"), query("c", "?x")))), query("a", "?x")))
    assert (("x", 1),) == _bindings(cond, facts)


def test_binding_a_bound_variable_compares_it() -> None:
    facts = FactDB([("n", 2), ("n", 3)])
    cond = And((query("n", "?x"), bind("?x", call("add", 1, 2))))
    assert (("x", 3),) == _bindings(cond, facts)


def test_queries_use_constants_and_name_a_missing_one() -> None:
    facts = FactDB([("at", "me", 4), ("at", "you", 5)])
    result = _probe(query("at", "@self", "?p"), facts, self="you")
    assert result.plan is not None
    assert (("p", 5),) == result.plan.choices[0].bindings
    # Built without DomainBuilder, which would refuse the undeclared constant.
    branch = Branch("b", query("at", "@who", "?p"), (Task("!ok"),))
    domain = HtnDomain("raw", {"root": Method("root", (), (branch,))}, {"!ok": Primitive("!ok")})
    with pytest.raises(PlanningError, match="unknown constant '@who'"):
        HtnPlanner(domain).plan(facts, "root")


def test_an_unbound_subtask_variable_is_reported_when_grounding() -> None:
    method = Method("root", (), (Branch("b", query("x"), (Task("!fire", (Var("t"),)),)),))
    domain = HtnDomain("raw", {"root": method}, {"!fire": Primitive("!fire", (Var("t"),))})
    with pytest.raises(PlanningError, match=r"variable \?t is unbound"):
        HtnPlanner(domain).plan(FactDB([("x",)]), "root")


def test_a_task_argument_that_is_not_a_fact_value_is_reported() -> None:
    b = DomainBuilder("bad")
    b.function("make", lambda facts: [1])
    b.primitive("!use", "?v")
    b.method("root").branch("b", bind("?v", call("make")), [task("!use", "?v")])
    with pytest.raises(
        PlanningError, match=r"argument \?v of task \(!use \?v\) evaluated to \[1\]"
    ):
        HtnPlanner(b.build()).plan(FactDB(), "root")


def test_planners_on_one_domain_see_its_current_functions() -> None:
    b = DomainBuilder("switch")
    b.function("ok", lambda facts: True)
    b.primitive("!go")
    b.method("root").branch("b", call("ok"), [task("!go")])
    domain = b.build()
    assert HtnPlanner(domain).plan(FactDB(), "root").plan is not None
    domain.functions["ok"] = lambda facts: False  # type: ignore[index]
    assert HtnPlanner(domain).plan(FactDB(), "root").plan is None
    methods = dict(domain.methods)
    methods["root"] = Method("root", (), (Branch("other", subtasks=(Task("!go"),)),))
    changed = HtnDomain(domain.name, methods, domain.primitives, functions=domain.functions)
    result = HtnPlanner(changed).plan(FactDB(), "root")
    assert result.plan is not None and "other" == result.plan.choices[0].branch


_VALUES = st.sampled_from(["a", "b", "c", 1, 2])
_FACTS = st.lists(
    st.tuples(st.sampled_from(["p", "q"]), st.lists(_VALUES, max_size=2)),  # arities 0 to 2
    max_size=12,
)


def _fact(name: str, args: tuple[object, ...]) -> Fact:
    return (name, *args)  # type: ignore[arg-type]


@settings(max_examples=80, deadline=None)
@given(
    _FACTS,
    st.lists(
        st.tuples(st.sampled_from(["p", "q"]), st.sampled_from(["?x", "?y", "a", 1])),
        min_size=1,
        max_size=3,
    ),
)
def test_a_conjunction_finds_the_first_answer_a_naive_join_finds(
    raw: list[tuple[str, list[object]]], conjuncts: list[tuple[str, str | int]]
) -> None:
    facts = FactDB([_fact(name, tuple(args)) for name, args in raw])
    patterns = [(name, ("?x", term)) for name, term in conjuncts]
    answers: list[dict[str, object]] = [{}]
    for name, terms in patterns:
        answers = [
            {**bound, **found}
            for bound in answers
            for found in facts.query(name, *terms, bindings=bound)  # type: ignore[arg-type]
        ]
    cond = And(tuple(query(name, *terms) for name, terms in patterns))
    got = _bindings(cond, facts)
    if not answers:
        assert got is None
    else:
        assert tuple(answers[0].items()) == got
