"""Pittman's planning scheduler in running agents: the agents of a process share a budget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CommandResult, read_log_events
from warband.agents import Agent, AgentPlan, CooperativeDecider, Decision, Role, SharedPlanning
from warband.planning import Action, Brain, FactDB, Goal, Task, parse_domain
from warband.values import Value

Cli = Callable[..., CommandResult]

COUNTDOWN = """
(:domain countdown)
(:primitive !idle ?ticks)
(:fact start ?count)
(:method (behave)
  (:branch "count down from the start" (start ?n) ((count ?n))))
(:method (count ?n)
  (:branch "done" (call eq ?n 0) ((!idle 1)))
  (:branch "one less" (?m = (call minus ?n 1)) ((count ?m))))
"""
"""A plan that costs one expansion per step of the count, plus the root's."""


def _minus(facts: FactDB, n: Value, k: Value) -> Value:
    return int(str(n)) - int(str(k))


def _agent(agent_id: str, start: int) -> Agent:
    domain = parse_domain(COUNTDOWN, functions={"minus": _minus})
    return Agent(agent_id, Role("counter", domain), facts=[("start", start)])


def _ask_every_tick(
    shared: SharedPlanning, agents: list[Agent], ticks: int
) -> tuple[dict[str, tuple[int, Decision]], list[int]]:
    """Each tick, each agent still without a decision asks (in list order), as the agent
    loop does; the tick each got it, and the expansions the queue was served each tick."""
    got: dict[str, tuple[int, Decision]] = {}
    spent: list[int] = []
    for tick in range(1, ticks + 1):
        served = shared.scheduler.tick
        for agent in agents:
            if agent.id not in got and (decision := shared.decide(agent, tick)) is not None:
                got[agent.id] = (tick, decision)
        if shared.scheduler.tick > served:
            spent.append(shared.scheduler.last_spent)
    return got, spent


def test_agents_sharing_a_budget_get_the_decisions_they_would_make_alone_within_it() -> None:
    agents = [_agent(name, 5) for name in ("a", "b", "c")]
    alone = _agent("alone", 5).decider.decide(_agent("x", 5).memory.facts, None, budget=100)
    assert alone is not None and alone.plan is not None
    assert 7 == alone.expansions  # behave, then count 5 down to 0: dearer than one tick's budget

    shared = SharedPlanning(budget=4)
    got, spent = _ask_every_tick(shared, agents, ticks=12)

    assert {"a", "b", "c"} == set(got)
    for _tick, decision in got.values():
        assert decision.plan is not None and alone.plan.steps == decision.plan.steps
    # Never more than the budget in a tick, all of it in every tick but the last.
    assert [4, 4, 4, 4, 4, 1] == spent
    # A search cut short goes to the back (round robin, as Pittman's scheduler resubmits it):
    # the first to ask finishes first, each took several ticks, and every wait was logged.
    assert 2 == got["a"][0]
    assert 6 == max(tick for tick, _ in got.values())
    assert sorted(tick - 1 for tick, _ in got.values()) == sorted(shared.waits)


def test_a_decision_made_for_a_plan_that_ended_while_it_waited_is_not_used() -> None:
    first, late = _agent("first", 1), _agent("late", 1)
    shared = SharedPlanning(budget=100)
    assert shared.decide(first, 1) is not None  # it asks first: the queue is served at once
    assert shared.decide(late, 1) is None  # the queue was served this tick: late waits
    other = _agent("other", 1)
    assert shared.decide(other, 2) is not None  # serves the queue: late's decision is ready
    # late's plan changed while its decision waited (a task failed, a plan ended): it asks
    # again, and gets a decision made for the plan it runs now.
    late.plan = AgentPlan((Task("!idle", (1,)),), "behave:0")
    assert shared.decide(late, 2) is None
    decision = shared.decide(late, 3)
    assert decision is not None
    assert "replaced" == decision.kind  # made for the plan it runs (for none, it was "new")


def test_a_realtime_run_shares_a_budget_and_the_waits_are_in_the_logs(
    warband_cli: Cli, tmp_path: Path
) -> None:
    result = warband_cli(
        "run", "scenarios/prison_escape.py", "--mode", "realtime", "--planning-budget", "2",
        "--log", str(tmp_path), "-q",
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    assert "SUCCESS" in result.stdout  # alice escaped with bob's help, her plans queued
    waited = [e for e in read_log_events(tmp_path) if e.get("event") == "planning.waited"]
    assert waited, "no decision waited for its turn"
    assert all(e["tick"] > e["asked"] for e in waited)
    assert {"alice", "bob"} <= {e["agent"] for e in waited}


def test_a_shared_planning_budget_is_refused_in_lockstep_with_the_reason(
    warband_cli: Cli,
) -> None:
    result = warband_cli("run", "scenarios/prison_escape.py", "--planning-budget", "5")
    assert 2 == result.returncode
    assert "--planning-budget 5 needs --mode realtime" in result.stderr
    assert 1 == len([line for line in result.stderr.splitlines() if "error" in line])


def test_a_cooperative_search_longer_than_the_budget_goes_on_at_the_next_decision() -> None:
    # It used to be capped at the budget and give up: with a shared budget of 2 a tick, alice
    # never planned her escape.
    walker = Brain(
        "walker",
        goals=[Goal("Far", ["step == 5"], relevancy=0.5)],
        actions=[
            Action(f"Step{i}", preconditions=[f"step == {i}"], effects={"step": i + 1})
            for i in range(5)
        ],
    )
    facts = FactDB([("step", 0)])
    at_once = CooperativeDecider(walker).decide(facts, None, budget=1000)
    assert at_once is not None and at_once.plan is not None and 6 == at_once.expansions

    decider, calls, decision = CooperativeDecider(walker), 0, None
    while decision is None and calls < 10:
        calls += 1
        decision = decider.decide(facts, None, budget=1)
        if decision is None:
            assert None is decider.reuse(facts, None)  # nothing to give again mid-search
    assert 6 == calls  # one expansion per decision
    assert decision is not None and decision.plan is not None
    assert (at_once.kind, at_once.plan.steps) == (decision.kind, decision.plan.steps)
