"""World-state properties: keys and their text form, states, conditions, effects, bindings."""

from __future__ import annotations

import pytest

from warband.exceptions import PlanningError
from warband.planning import Condition, Effect, Key, WorldState, eq, ne
from warband.planning.goap.state import (
    Bindings,
    as_conditions,
    normalize,
    parse_value,
    unify_key,
    unify_value,
)
from warband.values import format_value


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
    with pytest.raises(PlanningError, match="a GOAP property holds one bool, int, float or str"):
        WorldState({"speed": [1.5]})
    with pytest.raises(PlanningError, match="a GOAP property holds one bool, int, float or str"):
        WorldState({"speed": (1.5,)})
    with pytest.raises(PlanningError, match="use None, bool, int, float, str or a tuple"):
        WorldState({"speed": {1.5}})
    with pytest.raises(PlanningError, match="leave the key out"):
        WorldState({"speed": None})
    with pytest.raises(PlanningError, match="not a finite number"):
        WorldState({"speed": float("inf")})


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


@pytest.mark.parametrize(
    "value",
    [
        True,
        False,
        0,
        -7,
        12.5,
        -0.25,
        1e-07,
        "n1",
        "bot-3",
        "true",
        "12",
        "1.5",
        "two words",
        'say "hi"',
        "back\\slash",
        "[Soldier:TimV]",
        "a=b",
        "",
    ],
)
def test_value_text_form_round_trips(value: bool | int | float | str) -> None:
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


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a === true", "cannot read value '= true'"),
        ("a == ", "empty value"),
        ("a ==", "empty value"),
        ("a != ", "empty value"),
        ('a == "open', 'unbalanced "'),
        ("a == 'open", "unbalanced '"),
        ('a == "x" y', "text after the closing"),
        ("a == two words", "cannot read value 'two words'"),
        ("a == !x", "cannot read value '!x'"),
        ("a == <3", "cannot read value '<3'"),
        ("a = true", "two '=' or '!='"),
        ("a =! true", "two '=' or '!='"),
        ("a >= 3", "two '=' or '!='"),
        ("== true", "two '=' or '!='"),
        ("at(bot 3) == w1", "cannot read property key"),
    ],
)
def test_conditions_that_do_not_parse_are_errors_naming_the_text(text: str, problem: str) -> None:
    with pytest.raises(PlanningError) as caught:
        Condition.parse(text)

    assert problem in str(caught.value)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("door_open(cell)", eq("door_open(cell)", True)),
        ("a == TRUE", eq("a", True)),
        ("a==1", eq("a", 1)),
        ("range(bot-7) == 12.5", eq("range(bot-7)", 12.5)),
        ("at(me) != ?node", ne("at(me)", "?node")),
        ("mood == ture", eq("mood", "ture")),
        ('said == "a \\"quoted\\" word"', eq("said", 'a "quoted" word')),
        ("at(bot-3) == 1st-squad", eq("at(bot-3)", "1st-squad")),
    ],
)
def test_conditions_read_every_value_form(text: str, expected: Condition) -> None:
    assert expected == Condition.parse(text)


def test_world_states_keep_true_and_one_apart_and_equate_one_and_one_point_zero() -> None:
    assert WorldState({"a": True}) != WorldState({"a": 1})
    assert WorldState({"a": 1}) == WorldState({"a": 1.0})
    assert eq("a", True) != eq("a", 1)
    assert eq("range", 12).holds(WorldState({"range": 12.0}))
    assert None is normalize([eq("a", True), eq("a", 1)])


def test_a_world_state_accepts_floats() -> None:
    state = WorldState({"range(bot-7)": 12.5})

    assert 12.5 == state.value("range(bot-7)")
    assert "WorldState({range(bot-7): 12.5})" == repr(state)


def test_a_world_state_holds_the_goap_projection_of_percept_facts() -> None:
    state = WorldState.from_facts(
        [("at", "bot-3", "w7"), ("alarm",), ("hp", 80), ("sees", "bot-7", "w9", 12.5, None)]
    )

    expected = {
        "at(bot-3)": "w7",
        "alarm": True,
        "hp": 80,
        "sees(bot-7)": "w9",
        "sees.2(bot-7)": 12.5,
    }
    assert WorldState(expected) == state


def test_two_facts_giving_one_property_two_values_are_an_error_naming_both() -> None:
    with pytest.raises(PlanningError, match=r"'w7'\).*'w8'\).*at\(bot-3\)"):
        WorldState.from_facts([("at", "bot-3", "w7"), ("at", "bot-3", "w8")])
    with pytest.raises(PlanningError, match="must be an entity id"):
        WorldState.from_facts([("hp_of", 3, 50)])
