"""The one value model (warband.values): equality, text form, projections, and a Percept fact
reaching both planners as it is."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import PlanningError, WarbandError
from warband.messaging.catalog import Percept
from warband.planning import Action, FactDB, HtnPlanner, WorldState, find_plan, parse_domain
from warband.values import (
    check_fact,
    check_value,
    fact_key,
    format_fact,
    format_value,
    goap_properties,
    htn_fact,
    value_key,
    values_equal,
)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (True, 1, False),
        (False, 0, False),
        (1.0, True, False),
        (True, True, True),
        (1, 1.0, True),
        (None, None, True),
        (None, 0, False),
        ("1", 1, False),
        ("w7", "w7", True),
    ],
)
def test_values_are_equal_by_one_rule_in_which_true_is_not_one(
    a: object, b: object, expected: bool
) -> None:
    assert expected is values_equal(a, b)
    assert expected is values_equal(b, a)
    assert expected is (value_key(a) == value_key(b))  # type: ignore[arg-type]


def test_fact_keys_keep_flags_apart_and_leave_other_facts_as_they_are() -> None:
    plain = ("at", "bot-3", "w7")

    assert plain is fact_key(plain)
    assert fact_key(("armed", True)) != fact_key(("armed", 1))
    assert fact_key(("range", 12)) == fact_key(("range", 12.0))
    assert 2 == len({fact_key(("armed", True)), fact_key(("armed", 1))})


_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, -0.0, 1.0, 2.5]),
    st.sampled_from(["w1", "bot-2", ""]),
)  # fmt: skip
_value = st.one_of(_scalar, st.lists(_scalar, max_size=3).map(tuple))


@settings(max_examples=300, deadline=None)
@given(st.lists(_value, max_size=4))
def test_a_fact_key_is_its_values_keys_and_the_fact_itself_when_none_is_a_bool_or_a_list(
    values: list[Any],
) -> None:
    # fact_key's scans of the values' types against its plain definition.
    fact = ("f", *values)
    plain = tuple(value_key(value) for value in fact)
    key = fact_key(fact)
    assert key == plain
    keyed = any(value.__class__ in (bool, tuple) for value in fact)
    assert (key is fact) is not keyed


def test_values_outside_the_model_are_refused_naming_where() -> None:
    with pytest.raises(WarbandError, match=r"order args: value \[1\] is a list; pass a tuple"):
        check_value([1], "order args")
    with pytest.raises(WarbandError, match=r"a list value holds scalars only"):
        check_value(((1,),), "order args")
    assert ("bot-1", 2) == check_value(("bot-1", 2), "order args")
    with pytest.raises(PlanningError, match="not a finite number"):
        check_value(float("nan"), "fact", PlanningError)
    with pytest.raises(WarbandError, match="whose name is a str"):
        check_fact((3, "x"))
    assert ("sees", "bot-7", None) == check_fact(["sees", "bot-7", None])


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "nil"),
        (True, "true"),
        (12.5, "12.5"),
        (3, "3"),
        ("bot-3", "bot-3"),
        ("[Soldier:TimV]", "[Soldier:TimV]"),
        ("true", '"true"'),
        ("nil", '"nil"'),
        ("12", '"12"'),
        ("a === b", '"a === b"'),
        ('say "hi"', '"say \\"hi\\""'),
    ],
)
def test_values_print_with_one_quoting_rule(value: object, text: str) -> None:
    assert text == format_value(value)  # type: ignore[arg-type]


def test_a_fact_prints_in_the_domain_syntax() -> None:
    assert '(say bot-1 "hello there" 3 true nil)' == format_fact(
        ("say", "bot-1", "hello there", 3, True, None)
    )


@pytest.mark.parametrize(
    ("fact", "properties"),
    [
        (("alarm",), [("alarm", True)]),
        (("hp", 80), [("hp", 80)]),
        (("at", "bot-3", "w7"), [("at(bot-3)", "w7")]),
        (("sees", "bot-7", "w9", 12.5), [("sees(bot-7)", "w9"), ("sees.2(bot-7)", 12.5)]),
        (("sees", "bot-7", "w9", 12.5, None), [("sees(bot-7)", "w9"), ("sees.2(bot-7)", 12.5)]),
        (("target", None), []),
    ],
)
def test_a_percept_fact_projects_to_goap_properties_by_position(
    fact: tuple[object, ...], properties: list[tuple[str, object]]
) -> None:
    assert properties == goap_properties(fact)  # type: ignore[arg-type]


def test_a_fact_whose_subject_is_not_an_id_has_no_goap_projection() -> None:
    with pytest.raises(WarbandError, match="must be an entity id"):
        goap_properties(("hp_of", 3, 50))
    with pytest.raises(WarbandError, match="must be an entity id"):
        goap_properties(("seen", "two words", 1))


def test_a_percept_fact_projects_to_an_htn_fact_as_it_is() -> None:
    wire = msgspec.msgpack.encode(Percept(facts=[["sees", "bot-7", 12.5]]))
    percept = msgspec.msgpack.decode(wire, type=Percept)

    assert ("sees", "bot-7", 12.5) == htn_fact(percept.facts[0])


_HTN_DOMAIN = """
(:domain shooter)
(:primitive !fire ?target)
(:primitive !approach ?target)
(:method (engage)
  (:branch "in_range" (and (sees ?t ?d) (call lt ?d 20.0)) ((!fire ?t)))
  (:branch "far" (sees ?t ?d) ((!approach ?t))))
"""


def test_sees_bot_7_at_12_5_m_reaches_both_planners_without_a_lossy_mapping() -> None:
    wire = msgspec.msgpack.encode(Percept(facts=[["sees", "bot-7", 12.5], ["armed", True]]))
    facts = msgspec.msgpack.decode(wire, type=Percept).facts

    memory = FactDB(htn_fact(fact) for fact in facts)
    htn = HtnPlanner(parse_domain(_HTN_DOMAIN)).plan(memory, "engage")
    assert htn.plan is not None
    assert ["(!fire bot-7)"] == [str(step) for step in htn.plan.steps]

    state = WorldState.from_facts(htn_fact(fact) for fact in facts)
    assert 12.5 == state.value("sees(bot-7)")
    shoot = Action(
        "Shoot",
        preconditions=["sees(bot-7) == 12.5", "armed"],
        effects={"down(bot-7)": True},
    )
    too_far = Action(
        "ShootFar", preconditions=["sees(bot-7) == 40.0"], effects={"down(bot-7)": True}
    )
    goap = find_plan(state, {"down(bot-7)": True}, [too_far, shoot])
    assert goap.plan is not None
    assert ["Shoot"] == [step.action.name for step in goap.plan.steps]


def test_a_flag_is_not_a_count_in_either_planner() -> None:
    flagged = [("armed", True)]
    counted = [("armed", 1)]
    domain = parse_domain(
        """
        (:domain arm)
        (:primitive !shoot)
        (:method (act) (:branch "armed" (armed true) ((!shoot))))
        """
    )

    assert HtnPlanner(domain).plan(FactDB(flagged), "act").plan is not None
    assert None is HtnPlanner(domain).plan(FactDB(counted), "act").plan
    shoot = Action("Shoot", preconditions=["armed == true"], effects={"done": True})
    assert find_plan(WorldState.from_facts(flagged), {"done": True}, [shoot]).plan is not None
    assert None is find_plan(WorldState.from_facts(counted), {"done": True}, [shoot]).plan
