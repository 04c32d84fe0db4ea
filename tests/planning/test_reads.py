"""What a computation read of a fact database (FactReads), and whether any of it changed since:
what lets an agent take its last decision again instead of planning."""

from __future__ import annotations

from warband.planning import FactDB, FactReads, HtnPlanner, parse_domain
from warband.values import Value

GUARD = """
(:domain guard)
(:constant @self)
(:primitive !flee ?from)
(:primitive !go ?to)
(:primitive !wait)
(:method (behave)
  (:branch "flee the alarm" (alarm ?where) ((!flee ?where)))
  (:branch "go to the post" (and (at @self ?here) (post ?post) (call differ ?here ?post))
    ((!go ?post)))
  (:branch "wait" (rumour ?what) ((!wait)))
  (:branch "idle" () ((!wait))))
"""


def _differ(facts: FactDB, a: Value, b: Value) -> bool:
    return a != b


def _plan_reading(facts: FactDB) -> tuple[FactDB, FactReads, list[str]]:
    """Plan the guard domain on a watching copy of ``facts``: the copy, what it read, the
    plan's steps."""
    domain = parse_domain(GUARD, functions={"differ": _differ})
    reads = FactReads()
    seen = reads.watch(facts)
    result = HtnPlanner(domain).plan(seen, "behave", constants={"self": "g1"})
    assert result.plan is not None
    return seen, reads, [str(step) for step in result.plan.steps]


def _memory() -> FactDB:
    return FactDB([("at", "g1", "w1"), ("at", "g2", "w5"), ("post", "w3"), ("rumour", "x")])


def test_the_planner_reads_the_branches_up_to_the_chosen_one_and_no_further() -> None:
    _, reads, steps = _plan_reading(_memory())
    assert ["(!go w3)"] == steps
    # The alarm (the branch above) and the post are read whole; only g1's own place is read.
    assert {"alarm", "post"} == reads.names
    assert {("at", "g1")} == reads.groups
    assert False is reads.everything


def test_a_change_to_a_fact_the_plan_did_not_read_is_not_a_change() -> None:
    facts = _memory()
    seen, reads, _ = _plan_reading(facts)
    facts.retract("rumour", "x")  # read only by a branch below the chosen one
    facts.assert_fact("at", "g2", "w6")  # another guard's place
    facts.assert_fact("visitor", "v1")
    assert False is reads.changed(seen, facts)


def test_a_fact_added_or_removed_where_the_plan_read_is_a_change() -> None:
    for change in (
        lambda facts: facts.assert_fact("alarm", "w9"),  # the branch above now holds
        lambda facts: facts.retract("at", "g1", "w1"),
        lambda facts: facts.assert_fact("post", "w4"),
    ):
        facts = _memory()
        seen, reads, _ = _plan_reading(facts)
        change(facts)
        assert True is reads.changed(seen, facts)


def test_a_fact_put_back_as_it_was_may_count_as_a_change_never_the_reverse() -> None:
    facts = _memory()
    seen, reads, _ = _plan_reading(facts)
    facts.retract("post", "w3")
    facts.assert_fact("post", "w3")
    assert True is reads.changed(seen, facts)


def test_the_watching_copy_is_a_snapshot_the_facts_change_apart_from() -> None:
    facts = _memory()
    seen, _, _ = _plan_reading(facts)
    facts.assert_fact("alarm", "w9")
    assert ("alarm", "w9") not in FactDB(list(seen))
    assert ("alarm", "w9") in facts


def test_copies_of_a_watching_copy_note_their_reads_in_the_same_place() -> None:
    reads = FactReads()
    seen = reads.watch(_memory())
    twin = seen.copy()
    assert [("post", "w3")] == twin.facts("post")
    assert True is twin.has("at", "g2", "w5")
    assert {"post"} == reads.names
    assert {("at", "g2")} == reads.groups


def test_a_group_read_sees_changes_of_its_first_argument_only() -> None:
    facts = FactDB([("ammo", "rifle", 30), ("ammo", "missile", 4)])
    reads = FactReads()
    seen = reads.watch(facts)
    assert [("ammo", "rifle", 30)] == seen.facts("ammo", "rifle")
    facts.retract("ammo", "missile", 4)
    facts.assert_fact("ammo", "missile", 3)
    assert False is reads.changed(seen, facts)
    facts.retract("ammo", "rifle", 30)
    facts.assert_fact("ammo", "rifle", 29)
    assert True is reads.changed(seen, facts)


def test_a_bool_coming_into_a_bucket_read_by_group_is_a_change() -> None:
    # A bucket holding a bool (or 0 or 1, equal to one) keys its groups apart (True is not 1):
    # the groups before and after cannot be compared, so the change is assumed.
    facts = FactDB([("flag", "a", "x")])
    reads = FactReads()
    seen = reads.watch(facts)
    assert True is seen.has("flag", "a", "x")
    facts.assert_fact("flag", "b", True)
    assert True is reads.changed(seen, facts)


def test_iterating_or_counting_the_facts_reads_them_all() -> None:
    for read in (list, len, lambda facts: facts.version, lambda facts: facts.names()):
        facts = _memory()
        reads = FactReads()
        seen = reads.watch(facts)
        read(seen)
        assert True is reads.everything
        facts.assert_fact("visitor", "v1")
        assert True is reads.changed(seen, facts)


def test_reading_nothing_sees_no_change() -> None:
    facts = _memory()
    reads = FactReads()
    seen = reads.watch(facts)
    facts.assert_fact("alarm", "w9")
    assert False is reads.changed(seen, facts)
