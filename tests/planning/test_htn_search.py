"""Tests of the interruptible HTN search: however its budget is split into steps it gives exactly
the result of one ``plan()`` call, it never spends more than a step's budget, it plans against the
facts it was made with, it cannot be resumed after an error, and the planning scheduler serves it
next to GOAP searches."""

from __future__ import annotations

import gc
import inspect
import itertools
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warband.exceptions import PlanningError
from warband.planning import (
    And,
    DomainBuilder,
    FactDB,
    GoapSearch,
    HtnDomain,
    HtnPlan,
    HtnPlanner,
    HtnResult,
    HtnSearch,
    Not,
    PlanningScheduler,
    SearchStatus,
    Task,
    call,
    query,
    task,
)
from warband.planning.domains import blocks, synthetic
from warband.planning.domains.htn_library import load_domain, medic_facts, turret_facts
from warband.planning.htn import planner as htn
from warband.values import Value

TIM = "[Soldier:TimV]"


class Problem(NamedTuple):
    """One planning call: what ``plan()`` and ``search()`` are given."""

    domain: HtnDomain
    facts: FactDB
    root: Task | str
    constants: dict[str, Value]
    current: HtnPlan | None = None
    max_expansions: int = 1_000_000


def _search(problem: Problem, *, explain: bool = False) -> HtnSearch:
    return HtnPlanner(problem.domain).search(
        problem.facts,
        problem.root,
        constants=problem.constants,
        current=problem.current,
        explain=explain,
        max_expansions=problem.max_expansions,
    )


def _plan(problem: Problem, *, explain: bool = False) -> HtnResult:
    return HtnPlanner(problem.domain).plan(
        problem.facts,
        problem.root,
        constants=problem.constants,
        current=problem.current,
        explain=explain,
        max_expansions=problem.max_expansions,
    )


def _stepped(search: HtnSearch, budgets: list[int]) -> HtnResult:
    """Step ``search`` with ``budgets`` in turn (cycling) to its end, checking what each spends."""
    for budget in itertools.cycle(budgets):
        before = search.expansions
        status = search.step(budget)
        spent = search.expansions - before
        assert spent <= budget
        if status is SearchStatus.RUNNING:
            assert budget == spent, "a step cut short by its budget spends all of it"
            assert not search.done and search.result is None
        else:
            assert search.done and search.result is not None
            return search.result
    raise AssertionError("unreachable")


def _assert_same(expected: HtnResult, got: HtnResult) -> None:
    assert expected == got
    # The fields plans leave out of their equality, for explanations and plan choice.
    if expected.plan is not None:
        assert got.plan is not None
        assert expected.plan.methods == got.plan.methods
        assert expected.plan.continuable == got.plan.continuable
        assert expected.plan.choices == got.plan.choices


# --- problems over the bundled domains and two that backtrack hard ------------------------


def _permutations_domain() -> HtnDomain:
    """Fill columns with distinct rows; the last column needs every goal row used. It explores
    permutations depth first, so a plan (or the proof there is none) needs deep backtracking."""
    b = DomainBuilder("permutations")
    b.primitive("!put", "?c", "?r", add=[query("used", "?r")])
    b.method("place", "?c").branch(
        "all goals used",
        And((query("last", "?c"), Not(And((query("goal", "?g"), Not(query("used", "?g"))))))),
    ).branch(
        "next column",
        And((query("succ", "?c", "?d"), query("row", "?r"), Not(query("used", "?r")))),
        [task("!put", "?c", "?r"), task("place", "?d")],
    )
    return b.build()


def _loop_domain() -> HtnDomain:
    b = DomainBuilder("loop")
    b.method("behave").branch("again", subtasks=[task("behave")])
    return b.build()


_THREATS = st.lists(
    st.tuples(
        st.sampled_from(["grunt-1", "grunt-2", "drone-1", "tank-1"]),
        st.sampled_from([5.0, 25.0, 30.0, 60.0, 150.0]),
        st.sampled_from(["infantry", "vehicle"]),
    ),
    max_size=4,
    unique_by=lambda threat: threat[0],
)


@st.composite
def _turret(draw: st.DrawFn) -> Problem:
    threats = draw(_THREATS)
    names = [threat[0] for threat in threats] or ["grunt-1"]
    obstructed = draw(
        st.lists(st.tuples(st.sampled_from(names), st.sampled_from(["bullets", "missiles"])))
    )
    weapon = draw(st.sampled_from([None, "bullets", "missiles"]))
    facts = turret_facts(threats, obstructed=obstructed, selected_weapon=weapon)
    return Problem(load_domain("turret"), facts, "behave", {})


@st.composite
def _medic(draw: st.DrawFn) -> Problem:
    downed = draw(
        st.lists(
            st.tuples(
                st.sampled_from([TIM, "[Soldier:Ann]", "[Soldier:Bo]"]),
                st.sampled_from([4.0, 12.0, 40.0]),
                st.integers(1, 9999),
            ),
            max_size=3,
            unique_by=lambda mate: mate[0],
        )
    )
    grenades = draw(st.lists(st.sampled_from(["grenade-1", "grenade-2"]), unique=True))
    vehicle = draw(st.sampled_from([None, "hovertank-2"]))
    domain = load_domain("medic")
    constants: dict[str, Value] = {"self": "medic-1"}
    facts = medic_facts(downed=downed, grenades=grenades, vehicle=vehicle)
    current = None
    if draw(st.booleans()):
        # Replanning while reviving: continuation branches may fire.
        revive = HtnPlanner(domain).plan(
            medic_facts(downed=[(TIM, 12.0, 5416)]), "behave", constants=constants
        )
        current = revive.plan
        facts.assert_fact("active_plan", "medic_revive", TIM)
        if draw(st.booleans()):
            facts.assert_fact("dead", TIM)
    return Problem(domain, facts, "behave", constants, current)


@st.composite
def _blocks(draw: st.DrawFn) -> Problem:
    made = blocks.problem(draw(st.integers(1, 12)), draw(st.integers(0, 10_000)))
    return Problem(made.domain, made.facts, made.root, {})


@st.composite
def _permutations(draw: st.DrawFn) -> Problem:
    rows = draw(st.integers(1, 5))
    columns = draw(st.integers(1, rows))
    goals = draw(st.lists(st.integers(0, rows), max_size=columns + 1, unique=True))
    facts = FactDB(
        [("row", r) for r in range(rows)]
        + [("succ", c, c + 1) for c in range(columns)]
        + [("last", columns)]
        + [("goal", g) for g in goals]
    )
    limit = draw(st.sampled_from([1_000_000, 0, 1, 7, 40]))
    return Problem(_permutations_domain(), facts, Task("place", (0,)), {}, None, limit)


@st.composite
def _loop(draw: st.DrawFn) -> Problem:
    return Problem(_loop_domain(), FactDB(), "behave", {}, None, draw(st.integers(0, 60)))


_PROBLEMS = st.one_of(_turret(), _medic(), _blocks(), _permutations(), _loop())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_PROBLEMS, st.lists(st.integers(1, 12), min_size=1, max_size=6), st.booleans())
def test_any_split_of_the_budget_gives_exactly_the_result_of_one_plan_call(
    problem: Problem, budgets: list[int], explain: bool
) -> None:
    expected = _plan(problem, explain=explain)

    got = _stepped(_search(problem, explain=explain), budgets)

    _assert_same(expected, got)


def test_each_outcome_ends_the_search_with_its_status() -> None:
    revive = HtnPlanner(load_domain("medic")).plan(
        medic_facts(downed=[(TIM, 12.0, 5416)]), "behave", constants={"self": "medic-1"}
    )
    reviving = medic_facts(downed=[(TIM, 12.0, 5416)])
    reviving.assert_fact("active_plan", "medic_revive", TIM)
    no_goal = FactDB([("row", 0), ("succ", 0, 1), ("last", 1), ("goal", 1)])
    problems = {
        "plan": Problem(
            load_domain("turret"), turret_facts([("t", 5.0, "infantry")]), "behave", {}
        ),
        "continue": Problem(
            load_domain("medic"), reviving, "behave", {"self": "medic-1"}, revive.plan
        ),
        "failed": Problem(_permutations_domain(), no_goal, Task("place", (0,)), {}),
        "exhausted": Problem(_loop_domain(), FactDB(), "behave", {}, None, 30),
    }
    statuses = {
        "plan": SearchStatus.FOUND,
        "continue": SearchStatus.FOUND,
        "failed": SearchStatus.NO_PLAN,
        "exhausted": SearchStatus.GAVE_UP,
    }
    for name, problem in problems.items():
        search = _search(problem)
        last = SearchStatus.RUNNING
        while last is SearchStatus.RUNNING:
            last = search.step(1)
        assert search.result is not None
        assert name == search.result.status
        assert statuses[name] is last
        assert statuses[name] is search.step(5), "a finished search keeps its status"
        _assert_same(_plan(problem), search.result)


def test_a_backtracking_search_spread_over_single_expansions_finds_the_same_plan() -> None:
    facts = FactDB(
        [("row", r) for r in range(6)]
        + [("succ", c, c + 1) for c in range(3)]
        + [("last", 3), ("goal", 5), ("goal", 4), ("goal", 3)]
    )
    problem = Problem(_permutations_domain(), facts, Task("place", (0,)), {})
    expected = _plan(problem)
    assert expected.plan is not None and expected.expansions > 50

    search = _search(problem)
    steps = 0
    while search.step(1) is SearchStatus.RUNNING:
        steps += 1
        assert steps == search.expansions

    assert ["(!put 0 3)", "(!put 1 4)", "(!put 2 5)"] == [str(s) for s in expected.plan.steps]
    _assert_same(expected, search.result)  # type: ignore[arg-type]


def test_run_finishes_a_search_that_was_stepped_part_way() -> None:
    made = blocks.problem(10, 3)
    problem = Problem(made.domain, made.facts, made.root, {})
    search = _search(problem)
    assert SearchStatus.RUNNING is search.step(2)
    assert 2 == search.expansions

    _assert_same(_plan(problem), search.run())
    assert search.result is search.run()


def test_a_search_plans_against_the_facts_it_was_made_with() -> None:
    facts = turret_facts([("grunt-1", 12.0, "infantry")])
    search = HtnPlanner(load_domain("turret")).search(facts, "behave")
    facts.retract("threat", "grunt-1")
    facts.assert_fact("threat", "tank-1")

    result = search.run()

    assert result.plan is not None
    assert "(!fire_weapon grunt-1)" in [str(step) for step in result.plan.steps]


def test_a_step_needs_a_budget_of_at_least_one_expansion() -> None:
    search = HtnPlanner(_loop_domain()).search(FactDB(), "behave")
    with pytest.raises(PlanningError, match="at least 1 expansion, got 0"):
        search.step(0)
    assert 0 == search.expansions


def test_an_unknown_root_or_missing_constant_is_refused_when_the_search_is_made() -> None:
    with pytest.raises(PlanningError, match="unknown root task 'fly'"):
        HtnPlanner(load_domain("turret")).search(FactDB(), "fly")
    with pytest.raises(PlanningError, match="@self"):
        HtnPlanner(load_domain("medic")).search(medic_facts(), "behave")


def test_a_search_that_raised_cannot_be_resumed() -> None:
    b = DomainBuilder("fragile")
    b.primitive("!ok")
    b.function("boom", lambda facts, n: 1 // (2 - n) > 1)  # n = 1: False; n = 2: raises
    b.method("behave").branch("count", query("n", "?n"), [task("check", "?n")]).branch(
        "idle", subtasks=[task("!ok")]
    )
    b.method("check", "?n").branch("divide", call("boom", "?n"), [task("!ok")])
    search = HtnPlanner(b.build()).search(FactDB([("n", 1), ("n", 2)]), "behave")
    with pytest.raises(PlanningError, match="function 'boom' raised ZeroDivisionError"):
        search.run()

    # Resuming would skip the choices lost with the error and could return a wrong plan.
    with pytest.raises(PlanningError, match=r"raised earlier .*start a new search"):
        search.step(10)
    assert not search.done


def _live_htn_generators() -> int:
    return sum(
        1
        for obj in gc.get_objects()
        if inspect.isgenerator(obj) and obj.gi_code.co_filename == htn.__file__
    )


def test_a_finished_search_is_freed_without_the_cycle_collector() -> None:
    # The choice points refer to the search that holds them; left in place, every plan would
    # be a reference cycle, and the collector would run more often on a hot path.
    problem = Problem(
        load_domain("medic"),
        medic_facts(downed=[(TIM, 12.0, 5416)], grenades=["grenade-7"]),
        "behave",
        {"self": "medic-1"},
    )
    gc.collect()
    gc.disable()
    try:
        before = _live_htn_generators()
        _plan(problem)
        search = _search(problem)
        while search.step(1) is SearchStatus.RUNNING:
            assert before < _live_htn_generators(), "a paused search keeps its choice points"
        del search
        after = _live_htn_generators()
    finally:
        gc.enable()
    assert before == after


# --- the scheduler ------------------------------------------------------------------------


def test_one_scheduler_shares_its_budget_among_htn_and_goap_searches() -> None:
    htn = {}
    for seed in range(3):
        tower = blocks.problem(8, seed)
        htn[f"bot-{seed}"] = Problem(tower.domain, tower.facts, tower.root, {})
    goap = {f"coop-{seed}": synthetic.problem(6, 3, seed) for seed in range(3)}
    searches: dict[str, HtnSearch | GoapSearch] = {}
    for seed in range(3):
        searches[f"bot-{seed}"] = _search(htn[f"bot-{seed}"])
        searches[f"coop-{seed}"] = goap[f"coop-{seed}"].search()
    scheduler = PlanningScheduler()
    for agent, search in searches.items():
        scheduler.submit(agent, search)

    delivered = {}
    for _ in range(10_000):
        if not scheduler.pending:
            break
        before = sum(search.expansions for search in searches.values())
        for delivery in scheduler.run_tick(5):
            delivered[delivery.agent] = delivery
        spent = sum(search.expansions for search in searches.values()) - before
        assert spent == scheduler.last_spent <= 5

    assert list(searches) == list(delivered)
    for agent, problem in htn.items():
        result = delivered[agent].result
        assert isinstance(result, HtnResult)
        _assert_same(_plan(problem), result)
        assert result.expansions == delivered[agent].expansions
    for agent, chain in goap.items():
        assert chain.solve() == delivered[agent].result
