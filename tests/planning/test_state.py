"""World-state properties: keys and their text form, states, conditions, effects, bindings."""

from __future__ import annotations

import pytest

from warband.exceptions import PlanningError
from warband.planning import Condition, Effect, Key, WorldState, eq, ne
from warband.planning.state import (
    Bindings,
    as_conditions,
    format_value,
    normalize,
    parse_value,
    unify_key,
    unify_value,
)


def test_key_text_form_round_trips_with_and_without_subject() -> None:
    assert Key("at", "bot-3") == Key.parse("at(bot-3)")
    assert Key("hungry") == Key.parse(" hungry ")
    assert "at(bot-3)" == str(Key("at", "bot-3"))
    assert "hungry" == str(Key("hungry"))


def test_key_parser_reads_a_variable_subject() -> None:
    key = Key.parse("holding(?item)")

    assert "?item" == key.subject
    assert key.has_variable


@pytest.mark.parametrize("text", ["at(", "(x)", "at(bot 3)", "", "at(a)(b)"])
def test_malformed_key_text_is_rejected_with_an_example(text: str) -> None:
    with pytest.raises(PlanningError, match="expected 'name' or 'name\\(subject\\)'"):
        Key.parse(text)


def test_world_state_is_hashable_and_equal_regardless_of_construction_order() -> None:
    first = WorldState({"at(me)": "n1", "armed": True, "ammo": 3})
    second = WorldState([("ammo", 3), ("armed", True), (Key("at", "me"), "n1")])

    assert first == second
    assert hash(first) == hash(second)
    assert 1 == len({first, second})
    assert list(first) == list(second)


def test_world_state_update_returns_a_new_state_and_leaves_the_old_one_alone() -> None:
    state = WorldState({"armed": False})
    armed = state.updated({"armed": True, "ammo": 2})

    assert False is state.value("armed")
    assert True is armed.value("armed")
    assert 2 == armed.value("ammo")
    assert None is armed.without("ammo").value("ammo")


def test_world_state_rejects_variables_and_unsupported_values() -> None:
    with pytest.raises(PlanningError, match="variable"):
        WorldState({"at(me)": "?node"})
    with pytest.raises(PlanningError, match="variable subject"):
        WorldState({"at(?who)": "n1"})
    with pytest.raises(PlanningError, match="must be bool, int or str"):
        WorldState({"speed": 1.5})


def test_equality_condition_distinguishes_true_from_one() -> None:
    state = WorldState({"flag": True, "count": 1})

    assert eq("flag", True).holds(state)
    assert not eq("flag", 1).holds(state)
    assert not eq("count", True).holds(state)


def test_inequality_condition_holds_when_the_key_is_absent() -> None:
    state = WorldState({"at(me)": "a"})

    assert ne("at(you)", "a").holds(state)
    assert not ne("at(me)", "a").holds(state)
    assert ne("at(me)", "b").holds(state)


def test_condition_parser_reads_operators_values_and_the_bare_key_form() -> None:
    assert eq("door_open(cell)", True) == Condition.parse("door_open(cell) == true")
    assert ne("at(me)", "b") == Condition.parse("at(me) != b")
    assert eq("ammo", 3) == Condition.parse("ammo == 3")
    assert eq("armed", True) == Condition.parse("armed")
    assert eq("name", "42") == Condition.parse('name == "42"')


def test_only_equality_conditions_may_be_tagged_achievable_by_any_agent() -> None:
    tagged = Condition.parse("door_open(cell) == true", achievable_by_any_agent=True)

    assert tagged.achievable_by_any_agent
    with pytest.raises(PlanningError, match="uses '!='"):
        Condition(Key("door_open", "cell"), False, negated=True, achievable_by_any_agent=True)


def test_as_conditions_tags_the_listed_keys() -> None:
    conditions = as_conditions(
        {"door_open(cell)": True, "hungry(me)": False}, any_agent=["door_open(cell)"]
    )

    tags = {str(c.key): c.achievable_by_any_agent for c in conditions}
    assert {"door_open(cell)": True, "hungry(me)": False} == tags


@pytest.mark.parametrize("value", [True, False, 0, -7, "n1", "bot-3", "true", "12", "two words"])
def test_value_text_form_round_trips(value: bool | int | str) -> None:
    parsed = parse_value(format_value(value))

    assert value == parsed
    assert type(value) is type(parsed)


def test_normalize_detects_contradictions_and_drops_redundant_inequalities() -> None:
    assert None is normalize([eq("at(me)", "a"), eq("at(me)", "b")])
    assert None is normalize([eq("at(me)", "a"), ne("at(me)", "a")])
    assert frozenset({eq("at(me)", "a")}) == normalize([eq("at(me)", "a"), ne("at(me)", "b")])


def test_normalize_keeps_the_any_agent_tag_when_duplicates_merge() -> None:
    merged = normalize([eq("door(x)", True), eq("door(x)", True, any_agent=True)])

    assert merged is not None
    assert [True] == [c.achievable_by_any_agent for c in merged]


def test_unification_binds_subject_and_value_variables_consistently() -> None:
    bindings = unify_key(Key("holding", "?item"), Key("holding", "gun"), Bindings())
    assert bindings is not None
    assert "gun" == bindings["item"]
    assert None is unify_value("?item", "knife", bindings)
    assert bindings == unify_value("?item", "gun", bindings)
    assert None is unify_key(Key("holding", "?item"), Key("holding"), Bindings())


def test_substitution_grounds_conditions_and_effects() -> None:
    bindings = Bindings({"node": "n4"})

    assert eq("at(me)", "n4") == eq("at(me)", "?node").substitute(bindings)
    assert Effect(Key("at", "me"), "n4") == Effect(Key("at", "me"), "?node").substitute(bindings)
    assert frozenset({"node"}) == eq("at(me)", "?node").variables


def test_keys_and_conditions_hash_and_compare_by_value_after_copies() -> None:
    import copy
    import pickle

    condition = eq("at(bot-3)", "n1", any_agent=True)
    for twin in (pickle.loads(pickle.dumps(condition)), copy.deepcopy(condition)):
        assert twin == condition
        assert hash(twin) == hash(condition)
        assert hash(twin.key) == hash(Key("at", "bot-3"))
    assert condition != Condition(Key("at", "bot-3"), "n1")
    assert Key.parse("at(bot-3)") == Key("at", "bot-3")
    assert Key.parse("at(bot-3)") != Key("at", "bot-4")
    assert (Key("a") == "a") is False
