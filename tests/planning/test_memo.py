"""BranchMemo: a search that skips the preconditions that failed last time (and read nothing
that changed since) finds what a search without it finds, with the same expansions, the same
explanations and the same reads, over random sequences of changing facts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from warband.planning import BranchMemo, FactDB, FactReads, HtnPlanner, HtnResult, parse_domain
from warband.values import Fact, Value

# Nested methods, task arguments (bools and ints among them), a condition that binds, negation,
# disjunction, functions that read the facts and one that writes the branch's snapshot,
# primitives with effects that later preconditions read, and a branch that fails below its
# precondition (decomposition failed): the shapes of the bundled bot's domain.
DOMAIN = """
(:domain watch)
(:constant @self)
(:primitive !flee ?from)
(:primitive !go ?to)
(:primitive !mark ?what :add ((marked ?what)))
(:primitive !unmark ?what :del ((marked ?what)))
(:primitive !wait)
(:method (behave)
  (:branch "alarm" (and (alarm ?where) (not (calm ?where))) ((!flee ?where)))
  (:branch "threat" (or (threat ?e ?d) (rumour ?e)) ((react ?e true)))
  (:branch "post" (and (at @self ?here) (post ?post) (call differ ?here ?post))
    ((!mark ?post) (go_to ?post 1)))
  (:branch "count" (call more_than 2 rumour) ((!wait)))
  (:branch "line" (call line_of @self) ((check_line)))
  (:branch "idle" () ((!wait))))
(:method (react ?e ?armed)
  (:branch "marked" (and (marked ?e) (near ?e ?armed)) ((!unmark ?e) (!flee ?e)))
  (:branch "near" (near ?e ?armed) ((!flee ?e)))
  (:branch "never" (and (threat ?e ?d) (stuck ?e)) ((react_deeper ?e))))
(:method (react_deeper ?e)
  (:branch "no way" (gone ?e) ((!wait))))
(:method (go_to ?to ?speed)
  (:branch "marked" (and (marked ?to) (open ?to ?speed)) ((!go ?to)))
  (:branch "blocked" (blocked ?to) ((!wait))))
(:method (check_line)
  (:branch "line" (line ?who) ((!go ?who))))
"""


def _differ(facts: FactDB, a: Value, b: Value) -> bool:
    return a != b


def _more_than(facts: FactDB, n: Value, name: Value) -> bool:
    return len(facts.facts(str(name))) > int(n)  # type: ignore[call-overload]


def _line_of(facts: FactDB, who: Value) -> bool:
    # Killzone's request_line_of_attack: it writes the branch's snapshot of the facts.
    spots = facts.facts("at", who)
    if spots:
        facts.assert_fact("line", spots[0][2])
    return bool(spots)


FUNCTIONS = {"differ": _differ, "more_than": _more_than, "line_of": _line_of}
PLANNER = HtnPlanner(parse_domain(DOMAIN, functions=FUNCTIONS))
CONSTANTS = {"self": "g1"}

PLACES = ("w1", "w2", "w3")
WHO = ("e1", "e2", "g1", True, 1)
UNIVERSE: tuple[Fact, ...] = (
    *(("alarm", w) for w in PLACES),
    *(("calm", w) for w in PLACES),
    *(("threat", e, d) for e in WHO[:2] for d in (3, 7)),
    *(("rumour", e) for e in WHO),
    *(("near", e, armed) for e in WHO[:3] for armed in (True, 1, False)),
    *(("stuck", e) for e in WHO[:2]),
    *(("gone", e) for e in WHO[:2]),
    *(("at", who, w) for who in ("g1", "g2") for w in PLACES),
    *(("post", w) for w in PLACES),
    *(("marked", w) for w in (*PLACES, "e1")),
    *(("open", w, speed) for w in PLACES for speed in (1, True)),
    *(("blocked", w) for w in PLACES),
    ("visitor", "v1"),
)

changes = st.lists(
    st.lists(st.sampled_from(range(len(UNIVERSE))), max_size=4), min_size=1, max_size=12
)


def _search(facts: FactDB, memo: BranchMemo | None, explain: bool) -> tuple[HtnResult, FactReads]:
    reads = FactReads()
    result = PLANNER.plan(reads.watch(facts), "behave", constants=CONSTANTS, explain=explain)
    if memo is not None:  # plan() takes no memo: the interruptible search does
        reads = FactReads()
        search = PLANNER.search(
            reads.watch(facts), "behave", constants=CONSTANTS, explain=explain, memo=memo
        )
        search.step(1)  # a budget of one expansion a step: the memo across resumed steps too
        result = search.run()
    return result, reads


def _same(with_memo: HtnResult, without: HtnResult) -> None:
    assert with_memo.status == without.status
    assert with_memo.plan == without.plan
    assert with_memo.choices == without.choices  # with each branch's failures, when explained
    assert with_memo.root_failures == without.root_failures
    assert with_memo.expansions == without.expansions


def _replay(start: list[int], steps: list[list[int]], explain: bool) -> BranchMemo:
    facts = FactDB([UNIVERSE[i] for i in sorted(set(start))])
    memo, unwatched = BranchMemo(), BranchMemo()
    for toggles in steps:
        for index in toggles:  # each index toggles one fact of the universe
            fact = UNIVERSE[index]
            if not facts.remove_fact(fact):
                facts.add_new(fact)
        expected, expected_reads = _search(facts, None, explain)
        found, found_reads = _search(facts, memo, explain)
        _same(found, expected)
        assert found_reads.everything == expected_reads.everything
        assert found_reads.names == expected_reads.names
        assert found_reads.groups == expected_reads.groups
        # On facts that are not a watching copy, the memo watches each precondition itself.
        plain = PLANNER.search(
            facts, "behave", constants=CONSTANTS, explain=explain, memo=unwatched
        )
        _same(plain.run(), expected)
    return memo


@settings(max_examples=150, deadline=None)
@given(start=st.lists(st.sampled_from(range(len(UNIVERSE)))), steps=changes)
def test_a_search_with_the_memo_finds_what_one_without_finds(
    start: list[int], steps: list[list[int]]
) -> None:
    _replay(start, steps, explain=False)


@settings(max_examples=60, deadline=None)
@given(start=st.lists(st.sampled_from(range(len(UNIVERSE)))), steps=changes)
def test_explained_searches_record_the_same_failures(
    start: list[int], steps: list[list[int]]
) -> None:
    _replay(start, steps, explain=True)


def test_a_failed_precondition_is_skipped_until_a_fact_it_read_changes() -> None:
    # "alarm", "post" (g1 stands at its post) and "count" (one rumour) fail, and "threat"
    # fails below its precondition: the three branches of (react e1 true) fail.
    facts = FactDB([("at", "g1", "w2"), ("post", "w2"), ("rumour", "e1")])
    memo = BranchMemo()
    first, _ = _search(facts, memo, False)
    assert first.plan is not None and first.plan.path == (4, 0)
    assert (0, 0) == (memo.hits, memo.misses)
    facts.assert_fact("visitor", "v2")  # read by no precondition
    facts.assert_fact("at", "g2", "w3")  # another guard's place: (at @self ?here) reads g1's
    again, _ = _search(facts, memo, False)
    _same(again, first)
    assert (6, 0) == (memo.hits, memo.misses)
    for who in ("e2", "g1"):
        facts.assert_fact("rumour", who)  # read by "threat" (which fails below) and "count"
    third, _ = _search(facts, memo, False)
    assert third.plan is not None and third.plan.path == (3,)
    # Skipped again: "alarm", (react e1 true)'s three, "post"; "count" is evaluated again.
    assert (11, 1) == (memo.hits, memo.misses)


def test_a_branch_without_a_condition_is_not_kept() -> None:
    memo = BranchMemo()
    _search(FactDB([("visitor", "v1")]), memo, False)
    kept = {key[:2] for key in memo._entries}
    assert {("behave", index) for index in range(5)} == kept  # not "idle", which held


def test_the_memo_forgets_what_its_last_searches_did_not_meet() -> None:
    memo = BranchMemo(keep=2)
    _search(FactDB([("alarm", "w1")]), memo, False)
    assert 0 == len(memo)  # the first branch held: nothing failed
    _search(FactDB([("post", "w1")]), memo, False)  # search 2: five branches fail
    assert 5 == len(memo)
    _search(FactDB([("alarm", "w1")]), memo, False)  # 3: four are kept, unmet
    assert 4 == len(memo)  # the alarm's failure is gone: it holds now
    _search(FactDB([("alarm", "w1")]), memo, False)  # 4: two searches did not meet them
    assert 0 == len(memo)


def test_another_planner_or_other_constants_start_afresh() -> None:
    memo = BranchMemo()
    facts = FactDB([("post", "w1")])
    _search(facts, memo, False)
    assert len(memo) > 0
    PLANNER.search(facts, "behave", constants={"self": "g2"}, memo=memo).run()
    assert 0 == memo.hits
