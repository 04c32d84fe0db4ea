"""Deciding: keep the running plan, replace it, drop it, or make a first one.

One interface, :class:`Decider`, for every layer: given the agent's facts and its running plan,
:meth:`Decider.decide` returns a :class:`Decision` that says what to run next and why. Each
planner gives its own meaning to "still the best":

- :class:`HtnDecider` (Killzone): replans from the root task and keeps the running plan unless
  the new one takes a branch higher up the list (:func:`warband.planning.choose_plan`: branch
  paths compared from the root; an equal path is no replacement), or the running plan's
  continuation conditions no longer hold.

A plan is also *dropped* when one of its tasks failed (an Act the world rejected, an
``act_failed`` or ``blocked`` event, an order that could not be sent): the agent loop reports
that through :meth:`Decider.drop`, and the next decision starts afresh.

Planning budget. A decision may not take longer than its budget of planner expansions; the
search is resumed on the next call when it ran out (``decide`` returns None meanwhile and the
running plan goes on). The budget belongs to the agent, never to the process: in lockstep
every agent gets the same budget wherever it runs, so a run sends the same messages in one
process and with ``--processes``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import structlog

from ..exceptions import PlanningError
from ..messaging.tracing import tracing_enabled
from ..planning import (
    Brain,
    FactDB,
    Goal,
    GoapPlan,
    GoapSearch,
    HtnDomain,
    HtnPlan,
    HtnPlanner,
    HtnResult,
    HtnSearch,
    Task,
    WorldState,
    choose_plan,
    htn_plan_text,
    simulate,
)
from ..values import Fact, Value, goap_properties
from .facts import ACT_REFUSED, GOAL_BIAS

_log = structlog.get_logger("warband.agents")

DecisionKind = Literal["new", "kept", "replaced", "dropped", "none"]
"""``new``: a plan where there was none; ``kept``: the running plan stays; ``replaced``: a
better plan takes over; ``dropped``: the running plan ends with nothing after it; ``none``:
there was no plan and there still is none."""


@dataclass(frozen=True)
class AgentPlan:
    """A plan the agent loop runs: ground primitive tasks, and where they came from."""

    steps: tuple[Task, ...]
    label: str
    """How the planner names it: the HTN branch path (``behave:0.2.1``) or the GOAP goal."""
    source: object = field(default=None, compare=False, repr=False)
    """The planner's own plan object (an :class:`~warband.planning.HtnPlan`, ...)."""
    branches: tuple[str, ...] = field(default=(), compare=False)
    """The names of the HTN branches the plan took, in decomposition order (the ``label``'s
    path as names: what ``warband metrics`` and a reader of the logs count by)."""


@dataclass(frozen=True)
class Decision:
    """What a decision chose and why; the agent logs it as one ``agent.plan`` event."""

    kind: DecisionKind
    plan: AgentPlan | None
    reason: str
    tree: str = ""
    """The decomposition (HTN) or search tree (cooperative GOAP) behind a new plan, as text;
    made only while messages are traced
    (:func:`~warband.messaging.tracing.tracing_enabled`): the agent logs it then."""
    expansions: int = 0


class Decider(Protocol):
    """Chooses the plan an agent runs (see the module docstring)."""

    def decide(
        self, facts: FactDB, current: AgentPlan | None, *, budget: int, progress: int = 0
    ) -> Decision | None:
        """Decide on ``current`` (``progress`` of its steps done) given ``facts``; None while a
        search needs more budget."""
        ...

    def drop(self, current: AgentPlan, reason: str) -> Decision:
        """The running plan failed: end it (the next ``decide`` plans afresh)."""
        ...


class HtnDecider:
    """Killzone's bot, squad and commander decision: an HTN domain planned from one root task."""

    def __init__(
        self,
        domain: HtnDomain,
        root: str = "behave",
        *,
        constants: Mapping[str, Value] | None = None,
        max_expansions: int = 1_000_000,
    ) -> None:
        self.planner = HtnPlanner(domain)
        self.root = Task(root)
        self.constants = dict(constants or {})
        self.max_expansions = max_expansions
        self._search: HtnSearch | None = None
        self._searched_for: HtnPlan | None = None

    def decide(
        self, facts: FactDB, current: AgentPlan | None, *, budget: int, progress: int = 0
    ) -> Decision | None:
        running = current.source if current is not None else None
        running_plan = running if isinstance(running, HtnPlan) else None
        if self._search is None:
            # A search spans ticks when its budget runs out: it plans against the facts and the
            # running plan as they were when it began (it took a copy of the facts).
            self._search = self.planner.search(
                facts,
                self.root,
                constants=self.constants,
                current=running_plan,
                explain=tracing_enabled(),  # why branches failed: only the tree shows it
                max_expansions=self.max_expansions,
            )
            self._searched_for = running_plan
        search = self._search
        search.step(budget)
        result = search.result
        if result is None:
            return None
        self._search = None
        if self._searched_for is not running_plan:
            return None  # the plan changed while we searched (a task failed): search again
        return self._decision(result, current, running_plan)

    def _decision(
        self, result: HtnResult, current: AgentPlan | None, running_plan: HtnPlan | None
    ) -> Decision:
        choice = choose_plan(running_plan, result)
        chosen = choice.plan
        if chosen is None:
            kind: DecisionKind = "dropped" if current is not None else "none"
            return Decision(kind, None, choice.reason, expansions=result.expansions)
        if chosen is running_plan and current is not None:
            return Decision("kept", current, choice.reason, expansions=result.expansions)
        branches = tuple(choice.branch for choice in chosen.choices)
        plan = AgentPlan(chosen.steps, _label(chosen), chosen, branches)
        kind = "replaced" if current is not None else "new"
        tree = ""
        if tracing_enabled():  # only the agent.plan event of a traced run shows it
            tree = htn_plan_text(chosen, self.planner.domain)
        return Decision(kind, plan, choice.reason, tree, result.expansions)

    def drop(self, current: AgentPlan, reason: str) -> Decision:
        self._search = None  # it was planned against the plan that failed
        return Decision("dropped", None, reason)


def _label(plan: HtnPlan) -> str:
    path = ".".join(str(index) for index in plan.path)
    return f"{plan.root.name}:{path}"


class GoapDecider:
    """F.E.A.R. and Pittman's decision: the most relevant goal that has a plan.

    A goal's score is its relevancy in the agent's context plus the bias its superior gave it
    (``(goal_bias goal bias)`` facts, from GoalBias messages); goals scoring 0 or less are not
    pursued, nor are goals that already hold (their plan is empty). The running plan is kept
    while what remains of it still replays from the agent's state
    (:func:`warband.planning.simulate`) and no higher-scoring goal has a plan; a higher-scoring
    goal with a plan replaces it. Goals are searched one after another, best
    first, with :class:`~warband.planning.GoapSearch`; a search longer than the agent's budget
    goes on at the next decision. A plan's steps become tasks named after its actions, with
    the bound values of the action's variables (sorted by variable name) as arguments.

    ``state`` turns the agent's facts into a GOAP world state (default: :func:`world_state`,
    the documented projection of every fact that has one; a fact without one, such as a
    Percept's ``position``, is left out with one ``goap.unprojected`` warning per fact name);
    ``context`` gives the goals' relevancy functions and the actions' procedural checks what
    they read (default: the facts).
    """

    def __init__(
        self,
        brain: Brain,
        *,
        state: Callable[[FactDB], WorldState] | None = None,
        context: Callable[[FactDB], Any] | None = None,
        max_expansions: int = 100_000,
    ) -> None:
        self.brain = brain
        self._state = state or self._projected
        self._context = context or (lambda facts: facts)
        self.max_expansions = max_expansions
        self._unprojected: set[str] = set()
        self._search: GoapSearch | None = None
        self._searching: Goal | None = None
        self._tried: set[str] = set()

    def _projected(self, facts: FactDB) -> WorldState:
        return world_state(facts, skipped=self._warn_unprojected)

    def _warn_unprojected(self, fact: Fact, why: str) -> None:
        name = str(next(iter(fact), ""))
        if name not in self._unprojected:
            self._unprojected.add(name)
            _log.warning("goap.unprojected", fact=name, reason=why, brain=self.brain.name)

    def decide(
        self, facts: FactDB, current: AgentPlan | None, *, budget: int, progress: int = 0
    ) -> Decision | None:
        state, context = self._state(facts), self._context(facts)
        ranking = self._ranking(facts, context)
        running = current.source if current is not None else None
        running_plan = running if isinstance(running, _RunningGoap) else None
        if running_plan is not None and not _replays(running_plan, progress, state, context):
            self._reset()
            return Decision("dropped", None, "the rest of the plan no longer replays")
        current_score = self._score_of(running_plan, ranking) if running_plan else None
        spent = 0
        for score, goal in ranking:
            if current_score is not None and (score, goal.name) <= current_score:
                break  # nothing better than what runs: keep it
            if goal.name in self._tried:
                continue
            if self._searching is not goal:
                self._search = GoapSearch(
                    state, goal, self.brain.actions, context, max_expansions=self.max_expansions
                )
                self._searching = goal
            search = self._search
            assert search is not None
            search.step(max(1, budget - spent))
            spent = search.expansions
            result = search.result
            if result is None:
                return None  # go on next decision
            self._tried.add(goal.name)
            self._searching, self._search = None, None
            if result.plan is not None and result.plan.steps:
                self._tried.clear()
                plan = _RunningGoap(goal, result.plan)
                decision_kind: DecisionKind = "replaced" if current is not None else "new"
                steps = len(result.plan.steps)
                reason = f"goal {goal.name} (score {score:g}) has a plan of {steps} steps"
                return Decision(
                    decision_kind,
                    AgentPlan(goap_tasks(result.plan), f"goal:{goal.name}", plan),
                    reason,
                    expansions=result.expansions,
                )
        self._tried.clear()
        if current is not None:
            return Decision("kept", current, "no goal scoring higher has a plan")
        return Decision("none", None, "no relevant goal has a plan")

    def state_of(self, facts: FactDB) -> WorldState:
        """The GOAP world state this decider plans from, given the agent's facts."""
        return self._state(facts)

    def context_of(self, facts: FactDB) -> Any:
        """What goals' relevancy functions and actions' checks read, given the agent's facts."""
        return self._context(facts)

    def drop(self, current: AgentPlan, reason: str) -> Decision:
        self._reset()
        return Decision("dropped", None, reason)

    def _reset(self) -> None:
        self._search, self._searching = None, None
        self._tried.clear()

    def _ranking(self, facts: FactDB, context: Any) -> list[tuple[float, Goal]]:
        return rank_goals(self.brain.goals, facts, context)

    @staticmethod
    def _score_of(
        running: _RunningGoap, ranking: list[tuple[float, Goal]]
    ) -> tuple[float, str] | None:
        for score, goal in ranking:
            if goal.name == running.goal.name:
                return (score, goal.name)
        return None


def world_state(
    facts: Iterable[Fact], *, skipped: Callable[[Fact, str], None] | None = None
) -> WorldState:
    """The GOAP projection (:func:`warband.values.goap_properties`) of the facts that have one.

    A fact without one (a Percept's ``position``: its first argument is a number, not an
    entity id) is left out, and ``skipped(fact, why)`` is told; the loop's ``act_refused``
    bookkeeping is left out silently (it ages every tick, and no goal reads it).
    """
    kept: list[Fact] = []
    for fact in facts:
        if ACT_REFUSED.matches(fact):
            continue
        try:
            goap_properties(fact, PlanningError)
        except PlanningError as error:
            if skipped is not None:
                skipped(fact, str(error))
            continue
        kept.append(fact)
    return WorldState.from_facts(kept)


def rank_goals(goals: Iterable[Goal], facts: FactDB, context: Any) -> list[tuple[float, Goal]]:
    """``goals`` with their scores, best first (ties in the order given), those scoring 0 or
    less left out: a goal's score is its relevancy in ``context`` plus the bias of
    its ``(goal_bias goal bias)`` fact in ``facts`` (0 without one)."""
    biases = {
        b.goal: b.bias
        for b in GOAL_BIAS.matching(facts.facts(GOAL_BIAS.name))
        if isinstance(b.bias, int | float)
    }
    scored = [
        (goal.relevance(context) + float(biases.get(goal.name, 0.0)), index, goal)
        for index, goal in enumerate(goals)
    ]
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    return [(score, goal) for score, _, goal in scored if score > 0]


@dataclass
class _RunningGoap:
    """A GOAP plan the agent runs, and the goal it serves."""

    goal: Goal
    plan: GoapPlan


def _replays(running: _RunningGoap, done: int, state: WorldState, context: Any) -> bool:
    """True when the steps of ``running`` not yet done still work from ``state``."""
    remaining = running.plan.steps[done:]
    return simulate(state, remaining, goal=running.plan.goal, context=context).ok


def goap_tasks(plan: GoapPlan) -> tuple[Task, ...]:
    """A GOAP plan's steps as the agent loop's tasks: named after the actions, with the bound
    values of each action's variables (sorted by variable name) as arguments."""
    return tuple(
        Task(step.name, tuple(step.bindings[name] for name in sorted(step.bindings)))
        for step in plan.steps
    )
