"""The planning scheduler: FIFO service within a per-tick expansion budget (Pittman §3.6)."""

from __future__ import annotations

import pytest

from warband.exceptions import PlanningError
from warband.planning import (
    CooperativeSearch,
    GoapSearch,
    PlanDelivery,
    PlanningScheduler,
    PlanResult,
    find_plan,
)
from warband.planning.domains import pirate, synthetic


def _searches() -> dict[str, GoapSearch]:
    return {
        f"bot-{seed}": synthetic.problem(depth=6, distractors=3, seed=seed).search()
        for seed in range(5)
    }


def _drain(scheduler: PlanningScheduler, budget: int) -> list[PlanDelivery]:
    delivered: list[PlanDelivery] = []
    for _ in range(10_000):
        if not scheduler.pending:
            return delivered
        delivered += scheduler.run_tick(budget)
        assert scheduler.last_spent <= budget
    raise AssertionError("the scheduler did not finish")


def test_requests_are_delivered_in_submission_order() -> None:
    scheduler = PlanningScheduler()
    for agent, search in _searches().items():
        scheduler.submit(agent, search)

    delivered = _drain(scheduler, budget=7)

    assert [f"bot-{seed}" for seed in range(5)] == [d.agent for d in delivered]


@pytest.mark.parametrize("budget", [1, 3, 10, 1000])
def test_no_tick_spends_more_than_its_budget(budget: int) -> None:
    searches = _searches()
    scheduler = PlanningScheduler()
    for agent, search in searches.items():
        scheduler.submit(agent, search)

    spent: list[int] = []
    while scheduler.pending:
        before = sum(search.expansions for search in searches.values())
        scheduler.run_tick(budget)
        spent.append(sum(search.expansions for search in searches.values()) - before)

    assert [] == [amount for amount in spent if amount > budget]
    assert all(amount == budget for amount in spent[:-1])


def test_scheduled_results_equal_unscheduled_searches() -> None:
    scheduler = PlanningScheduler()
    for agent, search in _searches().items():
        scheduler.submit(agent, search)

    delivered = {d.agent: d for d in _drain(scheduler, budget=4)}

    for seed in range(5):
        problem = synthetic.problem(depth=6, distractors=3, seed=seed)
        alone = find_plan(problem.start, problem.goal, problem.brain)
        result = delivered[f"bot-{seed}"].result
        assert isinstance(result, PlanResult)
        assert alone.plan is not None and result.plan is not None
        assert [str(step) for step in alone.plan] == [str(step) for step in result.plan]
        assert alone.expansions == delivered[f"bot-{seed}"].expansions
        assert problem.optimal_cost == result.plan.cost


def test_unfinished_request_keeps_its_place_at_the_head() -> None:
    scheduler = PlanningScheduler()
    scheduler.submit("slow", synthetic.problem(depth=10, distractors=6, seed=1).search())
    scheduler.submit("quick", pirate.problem("unlawful").search())

    assert [] == scheduler.run_tick(2)
    assert ("slow", "quick") == scheduler.pending


def test_round_robin_moves_an_unfinished_request_to_the_back() -> None:
    scheduler = PlanningScheduler(round_robin=True)
    scheduler.submit("slow", synthetic.problem(depth=10, distractors=6, seed=1).search())
    scheduler.submit("quick", pirate.problem("unlawful").search())

    scheduler.run_tick(2)

    assert ("quick", "slow") == scheduler.pending


def test_a_tick_goes_on_to_the_next_request_with_what_is_left() -> None:
    scheduler = PlanningScheduler()
    first = pirate.problem("unlawful").search()
    scheduler.submit("first", first)
    scheduler.submit("second", pirate.problem("unlawful").search())
    total = pirate.problem("unlawful").solve().expansions

    delivered = scheduler.run_tick(total + 1)

    assert ["first"] == [d.agent for d in delivered]
    assert total + 1 == scheduler.last_spent
    assert ("second",) == scheduler.pending


def test_cancelled_request_is_never_delivered() -> None:
    scheduler = PlanningScheduler()
    scheduler.submit("a", pirate.problem("lawful").search())
    scheduler.submit("b", pirate.problem("unlawful").search())

    assert scheduler.cancel("a")
    assert not scheduler.cancel("nobody")
    assert ["b"] == [d.agent for d in _drain(scheduler, budget=100)]


def test_resubmitting_replaces_the_agents_pending_request() -> None:
    scheduler = PlanningScheduler()
    first_ticket = scheduler.submit("a", pirate.problem("lawful").search())
    scheduler.submit("b", pirate.problem("unlawful").search())
    second_ticket = scheduler.submit("a", pirate.problem("no_bottle").search())

    delivered = _drain(scheduler, budget=100)

    assert [("b", None), ("a", second_ticket)] == [
        (d.agent, d.ticket if d.agent == "a" else None) for d in delivered
    ]
    assert first_ticket != second_ticket


def test_callback_receives_the_delivery_with_the_agent_id_and_ticks() -> None:
    scheduler = PlanningScheduler()
    received: list[PlanDelivery] = []
    ticket = scheduler.submit("pirate-1", pirate.problem("lawful").search(), received.append)

    returned = _drain(scheduler, budget=2)

    assert returned == received
    assert "pirate-1" == received[0].agent
    assert ticket == received[0].ticket
    assert 0 == received[0].submitted_tick
    assert scheduler.tick == received[0].delivered_tick


def test_cooperative_search_is_scheduled_like_any_other() -> None:
    problem = pirate.problem("dry")
    search = CooperativeSearch(problem.start, problem.goal, problem.brain)
    scheduler = PlanningScheduler()
    scheduler.submit("pirate", search)

    delivered = _drain(scheduler, budget=3)

    assert 1 == len(delivered)
    assert search.result is delivered[0].result


def test_finished_search_and_empty_budget_are_rejected() -> None:
    scheduler = PlanningScheduler()
    search = pirate.problem("lawful").search()
    search.run()

    with pytest.raises(PlanningError, match="already finished"):
        scheduler.submit("a", search)
    with pytest.raises(PlanningError, match="at least 1"):
        scheduler.run_tick(0)
