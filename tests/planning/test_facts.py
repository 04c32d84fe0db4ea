"""Tests of the fact database: changes, pattern queries, constants, copy-on-write snapshots."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.exceptions import PlanningError
from warband.planning import ConstRef, FactDB, Var
from warband.planning.htn.facts import parse_term
from warband.values import fact_key, format_fact, values_equal


def test_asserting_a_fact_twice_keeps_one_copy() -> None:
    facts = FactDB()
    assert True is facts.assert_fact("health", "bot-1", 80)
    assert False is facts.assert_fact("health", "bot-1", 80)
    assert 1 == len(facts)
    assert ("health", "bot-1", 80) in facts


def test_retract_removes_one_fact_and_reports_whether_it_was_there() -> None:
    facts = FactDB([("threat", "a"), ("threat", "b")])
    assert True is facts.retract("threat", "a")
    assert False is facts.retract("threat", "a")
    assert [("threat", "b")] == list(facts)


def test_retract_all_removes_every_fact_of_a_name() -> None:
    facts = FactDB([("threat", "a"), ("threat", "b"), ("ammo", 3)])
    assert 2 == facts.retract_all("threat")
    assert 0 == facts.retract_all("threat")
    assert [("ammo", 3)] == list(facts)


def test_retract_matching_uses_variables_as_wildcards() -> None:
    facts = FactDB([("status", "m1", "go"), ("status", "m2", "go"), ("status", "m1", "hold")])
    assert 2 == facts.retract_matching("status", "m1", "?anything")
    assert [("status", "m2", "go")] == list(facts)


def test_query_binds_variables_in_insertion_order() -> None:
    facts = FactDB([("dist", "b", 5), ("dist", "a", 20), ("ammo", 3)])
    assert [{"t": "b", "d": 5}, {"t": "a", "d": 20}] == list(facts.query("dist", "?t", "?d"))


def test_query_uses_bindings_and_the_first_argument_index() -> None:
    facts = FactDB([("dist", "a", 20), ("dist", "b", 5)])
    assert [{"t": "b", "d": 5}] == list(facts.query("dist", "?t", "?d", bindings={"t": "b"}))
    assert [{"d": 20}] == list(facts.query("dist", "a", "?d"))


def test_a_repeated_variable_must_match_the_same_value() -> None:
    facts = FactDB([("on", "a", "a"), ("on", "a", "b")])
    assert [{"x": "a"}] == list(facts.query("on", "?x", "?x"))


def test_patterns_of_another_arity_do_not_match() -> None:
    facts = FactDB([("at", "bot", 1, 2)])
    assert [] == list(facts.query("at", "?who", "?x"))


def test_constants_are_resolved_and_unknown_ones_are_named() -> None:
    facts = FactDB([("class", "me", "medic")])
    assert [{"c": "medic"}] == list(facts.query("class", "@self", "?c", constants={"self": "me"}))
    with pytest.raises(PlanningError, match="unknown constant '@self'"):
        list(facts.query("class", "@self", "?c"))


def test_ground_queries_answer_once_or_not_at_all() -> None:
    facts = FactDB([("clear", "a")])
    assert [{}] == list(facts.query("clear", "a"))
    assert [] == list(facts.query("clear", "b"))
    assert facts.has("clear", "a")


def test_a_copy_is_independent_in_both_directions() -> None:
    original = FactDB([("threat", "a"), ("ammo", 3)])
    snapshot = original.copy()
    snapshot.assert_fact("threat", "b")
    original.retract("ammo", 3)
    assert [("threat", "a")] == list(original)
    assert {("threat", "a"), ("threat", "b"), ("ammo", 3)} == set(snapshot)
    assert [{"t": "a"}] == list(original.query("threat", "?t"))


def test_the_database_may_change_while_a_query_is_being_read() -> None:
    facts = FactDB([("threat", "a"), ("threat", "b")])
    seen = []
    for answer in facts.query("threat", "?t"):
        seen.append(answer["t"])
        facts.assert_fact("threat", f"{answer['t']}2")
    assert ["a", "b"] == seen
    assert 4 == len(facts)


def test_facts_with_unsupported_values_are_rejected() -> None:
    with pytest.raises(PlanningError, match=r"use None, bool, int, float, str or a tuple"):
        FactDB().assert_fact("pos", {1, 2})  # type: ignore[arg-type]
    with pytest.raises(PlanningError, match=r"a list value holds scalars only"):
        FactDB().assert_fact("pos", ((1, 2), 3))
    with pytest.raises(PlanningError, match="not a finite number"):
        FactDB().assert_fact("range", float("nan"))
    with pytest.raises(PlanningError, match="name is a str"):
        FactDB([(3, "x")])


def test_a_list_value_is_a_tuple_that_a_query_binds_whole() -> None:
    facts = FactDB([("members", "squad-1", ("bot-1", "bot-2"))])
    assert [{"m": ("bot-1", "bot-2")}] == [
        {k: v for k, v in answer.items()} for answer in facts.query("members", "squad-1", "?m")
    ][-1:]
    assert [] == list(facts.query("members", "squad-1", ("bot-1",)))


def test_true_and_one_are_two_facts_that_never_answer_for_each_other() -> None:
    facts = FactDB([("armed", "bot-1", 1)])
    assert True is facts.assert_fact("armed", "bot-1", True)
    assert 2 == len(facts)
    assert [] == list(facts.query("armed", "bot-2", True))
    assert [{"x": True}] == list(facts.query("armed", "bot-1", "?x"))[1:]
    assert [] == list(FactDB([("armed", "bot-1", 1)]).query("armed", "bot-1", True))
    assert not FactDB([("armed", "bot-1", 1)]).has("armed", "bot-1", True)
    assert [("flag", True)] == FactDB([("flag", 1), ("flag", True)]).facts("flag", True)
    assert True is facts.retract("armed", "bot-1", True)
    assert [("armed", "bot-1", 1)] == list(facts)


def test_one_equals_one_point_zero_in_facts_as_in_numbers() -> None:
    facts = FactDB([("range", "bot-7", 12)])
    assert facts.has("range", "bot-7", 12.0)
    assert False is facts.assert_fact("range", "bot-7", 12.0)


def test_a_percept_fact_holding_none_goes_in_as_it_is() -> None:
    facts = FactDB([("sees", "bot-7", "w9", 12.5, None)])
    assert [{"team": None}] == list(facts.query("sees", "bot-7", "w9", 12.5, "?team"))
    assert facts.has("sees", "bot-7", "w9", 12.5, None)


def test_parse_term_reads_variables_and_constants() -> None:
    assert Var("d") == parse_term("?d")
    assert ConstRef("max_range") == parse_term("@max_range")
    assert "plain" == parse_term("plain")
    assert 4 == parse_term(4)


def test_facts_print_in_the_domain_syntax() -> None:
    assert '(say bot-1 "hello there" 3 true)' == format_fact(
        ("say", "bot-1", "hello there", 3, True)
    )


_names = st.sampled_from(["a", "b", "c"])
# True/1, False/0 and 1/1.0 side by side: the database must keep the one equality.
_values = st.one_of(st.sampled_from(["x", "y", "z", True, False, None, 1.0]), st.integers(0, 3))
_fact = st.builds(lambda n, args: (n, *args), _names, st.lists(_values, max_size=3))
_ops = st.lists(st.tuples(st.booleans(), _fact), max_size=60)
_pattern = st.lists(st.one_of(_values, st.sampled_from(["?p", "?q", "?r"])), max_size=3)


def _naive(
    facts: list[tuple[object, ...]], name: str, pattern: list[object]
) -> list[dict[str, object]]:
    """Filter every fact one by one: the oracle the indexed query must agree with."""
    answers = []
    for fact in facts:
        if fact[0] != name or len(fact) != len(pattern) + 1:
            continue
        bound: dict[str, object] = {}
        ok = True
        for term, value in zip(pattern, fact[1:], strict=True):
            if isinstance(term, str) and term.startswith("?"):
                if not values_equal(bound.setdefault(term[1:], value), value):
                    ok = False
            elif not values_equal(term, value):
                ok = False
        if ok:
            answers.append(bound)
    return answers


@settings(max_examples=300, deadline=None)
@given(_ops, _names, _pattern, st.booleans())
def test_query_answers_equal_a_naive_filter_over_all_facts(
    ops: list[tuple[bool, tuple[object, ...]]], name: str, pattern: list[object], snapshot: bool
) -> None:
    db = FactDB()
    # An insertion-ordered set under the one equality, like the database.
    model: dict[tuple[object, ...], tuple[object, ...]] = {}
    for add, fact in ops:
        if add:
            db.assert_fact(*fact)  # type: ignore[arg-type]
            model.setdefault(fact_key(fact), fact)  # type: ignore[arg-type]
        else:
            db.retract(*fact)  # type: ignore[arg-type]
            model.pop(fact_key(fact), None)  # type: ignore[arg-type]
    if snapshot:
        # Query a copy after changing the original: the copy must still hold every fact.
        copy = db.copy()
        db.retract_all(name)
        db = copy
    assert len(model) == len(db)
    assert set(model) == {fact_key(fact) for fact in db}
    answers = list(db.query(name, *pattern))  # type: ignore[arg-type]
    assert _naive(list(model.values()), name, pattern) == answers
    prefix = [v for v in pattern if not (isinstance(v, str) and v.startswith("?"))][:1]
    expected = (
        [f for f in model.values() if f[0] == name and f[1:2] and values_equal(f[1], prefix[0])]
        if prefix
        else None
    )
    if expected is not None:
        assert expected == db.facts(name, *prefix)  # type: ignore[arg-type]


def test_copies_share_index_groups_until_one_side_writes_them() -> None:
    facts = FactDB([("at", "bot", 1), ("at", "bot", 2), ("at", "cat", 3)])
    twin = facts.copy()
    twin.retract("at", "bot", 1)
    twin.assert_fact("at", "cat", 4)
    facts.assert_fact("at", "bot", 5)
    assert [("at", "bot", 1), ("at", "bot", 2), ("at", "bot", 5)] == facts.facts("at", "bot")
    assert [("at", "cat", 3)] == facts.facts("at", "cat")
    assert [("at", "bot", 2)] == twin.facts("at", "bot")
    assert [("at", "cat", 3), ("at", "cat", 4)] == twin.facts("at", "cat")
    assert [{"n": 2}] == list(twin.query("at", "bot", "?n"))


def test_the_version_changes_with_the_contents_and_is_shared_by_copies() -> None:
    facts = FactDB([("a", 1)])
    start = facts.version
    assert not facts.assert_fact("a", 1)
    assert not facts.retract("b")
    assert start == facts.version
    twin = facts.copy()
    assert start == twin.version
    twin.assert_fact("b")
    assert start == facts.version
    assert twin.version not in (start, FactDB([("a", 1)]).version)
    for change in (
        lambda db: db.retract("a", 1),
        lambda db: db.retract_all("a"),
        lambda db: db.retract_matching("a", "?x"),
        lambda db: db.update([("c",)]),
    ):
        db = facts.copy()
        before = db.version
        change(db)
        assert before != db.version


def test_an_unpickled_or_deep_copied_database_has_a_version_of_its_own() -> None:
    import copy
    import pickle

    facts = FactDB([("a", 1), ("b", "x", 2)])
    for twin in (pickle.loads(pickle.dumps(facts)), copy.deepcopy(facts)):
        assert facts == twin
        assert facts.version != twin.version
        twin.assert_fact("c")
        assert ("c",) not in facts


_checked_fact = st.tuples(
    st.sampled_from(["at", "armed"]),
    # No list value holding a bool: assert_fact takes (True, 2) for (1, 2) (add_new as well).
    st.lists(st.sampled_from(["a", "b", True, 1, 1.0, 0, (1, 2), ("x", 2)]), max_size=2),
).map(lambda named: (named[0], *named[1]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _checked_fact), max_size=30))
def test_add_new_and_remove_fact_change_the_database_as_assert_fact_and_retract_do(
    steps: list[tuple[bool, tuple[object, ...]]],
) -> None:
    fast, slow = FactDB(), FactDB()
    for adding, fact in steps:
        if adding:
            assert slow.assert_fact(*fact) == fast.add_new(fact)  # type: ignore[arg-type]
        else:
            assert slow.retract(*fact) == fast.remove_fact(fact)  # type: ignore[arg-type]
        assert repr(list(slow)) == repr(list(fast))  # repr: == takes True for 1
        assert slow.names() == fast.names()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(_checked_fact, max_size=10),
    st.lists(
        st.tuples(st.lists(_checked_fact, max_size=5), st.lists(_checked_fact, max_size=5)),
        max_size=4,
    ),
)
def test_exchange_changes_the_database_as_remove_fact_then_add_new_do(
    start: list[tuple[object, ...]],
    rounds: list[tuple[list[tuple[object, ...]], list[tuple[object, ...]]]],
) -> None:
    # A copy taken before each round shares buckets with the database it came from: the
    # exchange must write its own buckets and leave the copy as it was.
    # exchange_keyed, given each fact's fact_key, must do the same.
    fast, slow, keyed = FactDB(), FactDB(), FactDB()
    for fact in start:
        slow.add_new(fact)  # type: ignore[arg-type]
        fast.add_new(fact)  # type: ignore[arg-type]
        keyed.add_new(fact)  # type: ignore[arg-type]
    for removed, added in rounds:
        kept, before = fast.copy(), repr(list(fast))
        kept_keyed = keyed.copy()
        version, keyed_version = fast.version, keyed.version
        changed = [slow.remove_fact(f) for f in removed] + [slow.add_new(f) for f in added]  # type: ignore[arg-type]
        fast.exchange(removed, added)  # type: ignore[arg-type]
        keyed.exchange_keyed(
            [(fact_key(f), f) for f in removed],  # type: ignore[arg-type]
            [(fact_key(f), f) for f in added],  # type: ignore[arg-type]
        )
        for db in (fast, keyed):
            assert repr(list(slow)) == repr(list(db))  # repr: == takes True for 1
            assert slow.names() == db.names() and len(slow) == len(db)
            for name in slow.names():  # the first-argument index: the planner's look-ups
                for fact in slow.facts(name):
                    if len(fact) > 1:
                        first = fact[1:2]
                        assert repr(slow.facts(name, *first)) == repr(db.facts(name, *first))
            for fact in [*removed, *added]:
                assert (fact in slow) == (fact in db)
        assert repr(list(kept)) == before and repr(list(kept_keyed)) == before
        assert (fast.version != version) == any(changed)
        assert (keyed.version != keyed_version) == any(changed)
