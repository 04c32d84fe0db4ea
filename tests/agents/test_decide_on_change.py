"""Deciding again only when something changed: a decider gives its last decision again while
nothing it read has changed (Decider.reuse), the agent plans at its role's fixed rate
(Role.replan_every) and otherwise only when something did, and its decisions are those of
planning every tick."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from warband.agents import Agent, Decision, GoapDecider, HtnDecider, Role
from warband.agents.cooperation import CooperativeDecider
from warband.agents.execute import TaskStatus
from warband.messaging import Percept
from warband.planning import Action, Brain, FactDB, Goal, Task, parse_domain
from warband.testing import Drive
from warband.values import Value

GUARD = """
(:domain guard)
(:constant @self)
(:fact alarm ?where "an alarm rang there")
(:fact post ?waypoint "where the guard stands")
(:fact noise ?loudness "a noise no branch cares about")
(:primitive !flee ?from)
(:primitive !go ?to)
(:primitive !idle ?ticks)
(:method (behave)
  (:branch "flee the alarm" (alarm ?where) ((!flee ?where)))
  (:branch "go to the post" (and (at @self ?here) (post ?post) (call differ ?here ?post))
    ((!go ?post)))
  (:branch "watch" () ((!idle 1))))
"""


def _differ(facts: FactDB, a: Value, b: Value) -> bool:
    return a != b


def _guard() -> HtnDecider:
    domain = parse_domain(GUARD, functions={"differ": _differ})
    return HtnDecider(domain, constants={"self": "g1"})


def _seen(decision: Decision | None) -> tuple[str, str | None, str] | None:
    """What a decision is, leaving out its search's size (a reused one searched nothing)."""
    if decision is None:
        return None
    return (decision.kind, decision.plan.label if decision.plan else None, decision.reason)


def _memory() -> FactDB:
    return FactDB([("at", "g1", "w1"), ("post", "w3"), ("noise", 1)])


def test_an_htn_decision_is_given_again_while_nothing_it_read_changes() -> None:
    decider, facts = _guard(), _memory()
    first = decider.decide(facts, None, budget=1000)
    assert first is not None and "new" == first.kind
    facts.retract("noise", 1)
    facts.assert_fact("noise", 2)  # read by no branch
    again = decider.reuse(facts, None)
    assert _seen(first) == _seen(again)
    assert 0 == again.expansions  # type: ignore[union-attr]
    facts.assert_fact("alarm", "w9")  # the branch above the chosen one
    assert None is decider.reuse(facts, None)


def test_the_decision_for_the_plan_just_made_is_what_planning_would_say() -> None:
    decider, facts = _guard(), _memory()
    made = decider.decide(facts, None, budget=1000)
    assert made is not None and made.plan is not None
    reused = decider.reuse(facts, made.plan)
    planned = _guard().decide(facts, made.plan, budget=1000)
    assert ("kept", made.plan.label, "kept: new plan does not outrank the current one") == _seen(
        reused
    )
    assert _seen(planned) == _seen(reused)
    assert made.plan is reused.plan  # type: ignore[union-attr]


def test_nothing_is_given_again_while_a_search_spans_ticks() -> None:
    domain = parse_domain(
        """
        (:domain deep)
        (:primitive !idle ?ticks)
        (:method (behave)
          (:branch "step" (step ?n) ((deeper ?n)))
          (:branch "idle" () ((!idle 1))))
        (:method (deeper ?n)
          (:branch "never" (never ?n) ((!idle 1))))
        """
    )
    decider, facts = HtnDecider(domain), FactDB([("step", 1), ("step", 2)])
    assert None is decider.decide(facts, None, budget=1)  # one step tried of three
    assert None is decider.reuse(facts, None)
    finished = decider.decide(facts, None, budget=1000)
    assert finished is not None and "new" == finished.kind
    # Made over two calls: taken again at once, it would come sooner than planning it would.
    assert None is decider.reuse(facts, None)


def test_a_running_plan_a_continuation_branch_may_keep_is_planned_again() -> None:
    domain = parse_domain(
        """
        (:domain heal)
        (:primitive !heal ?who)
        (:primitive !idle ?ticks)
        (:method (behave)
          (:branch "heal" () ((heal)))
          (:branch "idle" () ((!idle 1))))
        (:method (heal)
          (:branch "keep healing" (hurt ?who) ((!continue)))
          (:branch "start healing" (hurt ?who) ((!heal ?who))))
        """
    )
    decider, facts = HtnDecider(domain), FactDB([("hurt", "ann")])
    made = decider.decide(facts, None, budget=1000)
    assert made is not None and made.plan is not None
    # With a heal plan running, "keep healing" may fire: not the search that made the plan.
    assert None is decider.reuse(facts, made.plan)
    kept = decider.decide(facts, made.plan, budget=1000)
    assert ("kept", made.plan.label, "continuation conditions hold") == _seen(kept)
    assert _seen(kept) == _seen(decider.reuse(facts, made.plan))


BRAIN = Brain(
    "sentry",
    goals=[Goal("Guard", ["guarded == true"], relevancy=0.5)],
    actions=[Action("Guard", effects={"guarded": True})],
)


def test_a_goap_decision_is_given_again_only_while_no_fact_and_no_progress_changed() -> None:
    decider, facts = GoapDecider(BRAIN), FactDB([("at", "s1", "gate")])
    made = decider.decide(facts, None, budget=100)
    assert made is not None and made.plan is not None
    kept = decider.decide(facts, made.plan, budget=100)
    assert _seen(kept) == _seen(decider.reuse(facts, made.plan))
    assert None is decider.reuse(facts, made.plan, progress=1)  # a step done
    facts.assert_fact("noise", "s1", "loud")  # a GOAP decision reads every fact
    assert None is decider.reuse(facts, made.plan)


def test_a_cancelled_goal_forgets_the_cooperative_decisions() -> None:
    decider, facts = CooperativeDecider(BRAIN), FactDB([("at", "s1", "gate")])
    made = decider.decide(facts, None, budget=100)
    assert made is not None and "new" == made.kind
    assert _seen(made) == _seen(decider.reuse(facts, None))
    decider.cancel("Guard")
    assert None is decider.reuse(facts, None)
    assert ("none", None, "no relevant goal has a plan") == _seen(
        decider.decide(facts, None, budget=100)
    )


# --- the agent ---------------------------------------------------------------------------


def _percept(*facts: tuple[Value, ...]) -> Percept:
    return Percept(recipient="g1", facts=[list(fact) for fact in facts])


# What the guard perceives, tick by tick: a noise (read by no branch) that changes at every
# tick, then an alarm from tick 7 on (the branch above the one it runs).
TICKS = [
    [("at", "g1", "w1"), ("post", "w1"), ("noise", tick)] + ([("alarm", "w7")] if tick >= 7 else [])
    for tick in range(1, 15)
]


def _two_ticks(agent: Agent, task: Task) -> TaskStatus:
    return agent.wait_task(2)


def _play(replan_every: int) -> tuple[Agent, list[int]]:
    """Drive a guard through TICKS; the agent, and the ticks its decider planned at."""
    domain = parse_domain(GUARD, functions={"differ": _differ})
    tasks = {"!flee": _two_ticks, "!go": _two_ticks}
    guard = Agent("g1", Role("guard", domain, tasks=tasks, replan_every=replan_every))
    planned: list[int] = []
    decide: Callable[..., Any] = guard.decider.decide

    def counted(*args: Any, **kwargs: Any) -> Any:
        planned.append(guard.tick)
        return decide(*args, **kwargs)

    guard.decider.decide = counted  # type: ignore[method-assign]
    with Drive(guard) as drive:
        for facts in TICKS:
            drive.tick(_percept(*facts))
    return guard, planned


def test_an_agent_plans_at_its_fixed_rate_and_when_something_it_read_changed() -> None:
    guard, planned = _play(replan_every=4)
    every_tick, planned_every_tick = _play(replan_every=1)
    # The same decisions, tick by tick, as planning every tick (the kept plan's, the new one's).
    assert [d[:3] for d in every_tick.recent_decisions] == [d[:3] for d in guard.recent_decisions]
    assert list(range(1, 15)) == sorted(set(planned_every_tick))
    # Planned at the first tick, at the alarm, and four ticks after the last time it planned.
    assert [1, 5, 7, 11] == planned
    assert len(planned) < len(planned_every_tick)
    assert guard.decisions == every_tick.decisions
    assert guard.decisions == guard.decisions_reused + len(planned)
    assert "behave:0" == guard.recent_decisions[-1][2]  # fleeing the alarm


def test_a_role_that_plans_every_tick_keeps_nothing_for_reuse() -> None:
    domain = parse_domain(GUARD, functions={"differ": _differ})
    role = Role("guard", domain, tasks={"!flee": _two_ticks, "!go": _two_ticks})
    assert 1 == role.replan_every
    decider = role.decider({"self": "g1"})
    assert isinstance(decider, HtnDecider) and False is decider.remember
    fixed_rate = dataclasses.replace(role, replan_every=4).decider({"self": "g1"})
    assert isinstance(fixed_rate, HtnDecider) and True is fixed_rate.remember
