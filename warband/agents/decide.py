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

Deciding again only when something changed. A decision is a function of the facts it read, the
running plan it was given (and, for GOAP, how far that plan got) and nothing else: the planner
is pure and its functions read only the facts. So a decider keeps what it worked out last,
with what that read (:class:`~warband.planning.FactReads`), and :meth:`Decider.reuse` gives
the decision again, without planning, while none of that changed:

- the HTN decider plans on a copy of the facts that watches what the planner reads of it, so
  it knows the fact names (and first arguments) that its branches read, up to and including
  the chosen one; it keeps its last search's result, from which the decision for the running
  plan follows as it does after planning (:func:`~warband.planning.choose_plan`), as long as
  the running plan has the same methods with a continuation branch (all the search reads of it);
- the GOAP deciders read every fact (their world state projects them all), and keep their last
  decisions in a :class:`DecisionMemo`, each for the very plan, and the progress, it was made
  for.

When something it read did change, the HTN decider still does not evaluate again the
preconditions that failed in its recent searches and read none of what changed: its
:class:`~warband.planning.BranchMemo` knows they fail (most of a bot's search is the
higher-priority branches that fail before the one it takes). That search is the one without the
memo, step for step, expansions included.

Taken again, a decision is the one planning would have made, with the same plan, kind and
reason (its ``expansions`` are 0: no search ran). The agent asks for it between its role's
fixed-rate replans (:attr:`~warband.agents.Role.replan_every`).

What a decision reads besides its facts is not watched, so it must read nothing else: time
reaches an agent's decision only as facts (the Percept's ``tick``, a daemon's ``ticks ago``),
which are watched like any other; no decider draws random numbers (one that did would draw
fewer when it plans less, and its stream would no longer be that of planning every tick); and
the planner's functions are ``fn(facts, *args)`` over those facts and data that never changes
(the map). A role whose functions break that keeps ``replan_every`` 1. The facts are read as
they are when the agent decides: after its daemons ran, and run again before a decision in the
same tick (``Role.decide_again_after``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

import structlog

from ..exceptions import PlanningError
from ..messaging.tracing import tracing_enabled
from ..planning import (
    Brain,
    BranchMemo,
    FactDB,
    FactReads,
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
    """Chooses the plan an agent runs (see the module docstring).

    A decider may also have ``reuse(facts, current, *, progress=0) -> Decision | None``: the
    decision ``decide`` would return now, when it can tell without planning (nothing its last
    decision on ``current`` read has changed since), else None. The agent calls it between its
    role's fixed-rate replans; a decider without it plans every time. :class:`HtnDecider`,
    :class:`GoapDecider` and :class:`~warband.agents.CooperativeDecider` have it
    (:class:`DecisionMemo` does the work).
    """

    def decide(
        self, facts: FactDB, current: AgentPlan | None, *, budget: int, progress: int = 0
    ) -> Decision | None:
        """Decide on ``current`` (``progress`` of its steps done) given ``facts``; None while a
        search needs more budget."""
        ...

    def drop(self, current: AgentPlan, reason: str) -> Decision:
        """The running plan failed: end it (the next ``decide`` plans afresh)."""
        ...


@dataclass(frozen=True)
class _Remembered:
    """One decision and what it was made from."""

    current: AgentPlan | None
    progress: int | None
    """The running plan's progress the decision read; None: it read none."""
    seen: FactDB
    """The facts as the decision saw them: a copy, never changed since."""
    reads: FactReads
    decision: Decision
    """The decision as it is taken again (no expansions: nothing is searched)."""


class DecisionMemo:
    """A decider's last decisions, each with what it read: one made with no running plan and
    one made for the running plan (an agent goes back and forth between the two as its short
    plans end and are made again).

    :meth:`recall` gives a remembered decision again when ``current`` is the very plan it was
    made for (or both are None), the progress it read is the same, and no fact it read was
    added or removed since (:meth:`~warband.planning.FactReads.changed`). A decider whose state
    besides the facts changes (a cancelled goal) calls :meth:`clear`.
    """

    __slots__ = ("_idle", "_running")

    def __init__(self) -> None:
        self._idle: _Remembered | None = None
        self._running: _Remembered | None = None

    def remember(
        self,
        current: AgentPlan | None,
        seen: FactDB,
        reads: FactReads,
        decision: Decision,
        *,
        progress: int | None = None,
    ) -> None:
        """Keep ``decision``, made for ``current`` from ``seen`` (a copy of the facts that
        nobody changes, :meth:`~warband.planning.FactReads.watch`'s or ``facts.copy()``), of
        which it read ``reads`` (and ``progress``, if not None)."""
        again = dataclasses.replace(decision, expansions=0) if decision.expansions else decision
        entry = _Remembered(current, progress, seen, reads, again)
        if current is None:
            self._idle = entry
        else:
            self._running = entry

    def recall(
        self, facts: FactDB, current: AgentPlan | None, progress: int = 0
    ) -> Decision | None:
        """The decision remembered for ``current``, if nothing it read changed in ``facts``."""
        entry = self._idle if current is None else self._running
        if entry is None or entry.current is not current:
            return None
        if entry.progress is not None and entry.progress != progress:
            return None
        if entry.reads.changed(entry.seen, facts):
            return None
        return entry.decision

    def clear(self) -> None:
        """Forget every decision (the decider's own state changed)."""
        self._idle = self._running = None


class HtnDecider:
    """Killzone's bot, squad and commander decision: an HTN domain planned from one root task."""

    def __init__(
        self,
        domain: HtnDomain,
        root: str = "behave",
        *,
        constants: Mapping[str, Value] | None = None,
        max_expansions: int = 1_000_000,
        remember: bool = True,
    ) -> None:
        self.planner = HtnPlanner(domain)
        self.remember = remember
        """Watch what each search reads, for :meth:`reuse` (some 4% more instructions per
        search, a Warzone bot's; a role that plans every tick has no use for it)."""
        self.root = Task(root)
        self.constants = dict(constants or {})
        self.max_expansions = max_expansions
        self._search: HtnSearch | None = None
        self._searched_for: HtnPlan | None = None
        # The running plan is read by the search only through its methods that have a
        # continuation branch (such a branch fires only while a plan made by its method runs).
        self._continuing = frozenset(
            name for name, method in domain.methods.items() if method.has_continuation
        )
        self._last: _Searched | None = None
        # Preconditions that failed, skipped while what they read holds: the same contract as
        # reuse() (functions read only the facts), so only for a decider that remembers.
        self.memo: BranchMemo | None = BranchMemo() if remember else None

    def reuse(
        self, facts: FactDB, current: AgentPlan | None, *, progress: int = 0
    ) -> Decision | None:
        """The decision :meth:`decide` would make now, when the last search would find the
        same again: no fact it read has changed, and ``current`` is read by it as the plan it
        was made with was (the same methods with a continuation branch, usually none). The
        running plan is then kept, replaced or dropped as :func:`~warband.planning.choose_plan`
        says, as after planning. None otherwise, or while a search is under way (it goes on at
        the next ``decide``). An HTN decision does not read ``progress``."""
        last = self._last
        if last is None or self._search is not None:
            return None
        running_plan = _htn_plan(current)
        if self._continued(running_plan) != last.continued:
            return None
        if last.reads.changed(last.seen, facts):
            return None
        return self._decision(last.result, current, running_plan, again=True)

    def decide(
        self, facts: FactDB, current: AgentPlan | None, *, budget: int, progress: int = 0
    ) -> Decision | None:
        running_plan = _htn_plan(current)
        watched: tuple[FactDB, FactReads] | None = None
        if self._search is None:
            # A search spans ticks when its budget runs out: it plans against the facts and the
            # running plan as they were when it began (it took a copy of the facts). The copy
            # watches what the planner reads of it, for reuse().
            if self.remember:
                reads = FactReads()
                watched = (reads.watch(facts), reads)
            self._search = self.planner.search(
                watched[0] if watched is not None else facts,
                self.root,
                constants=self.constants,
                current=running_plan,
                explain=tracing_enabled(),  # why branches failed: only the tree shows it
                max_expansions=self.max_expansions,
                memo=self.memo,
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
        if watched is not None:
            # Only a search made in one call: one that spanned ticks, found again at once,
            # would come sooner than searching again would.
            self._last = _Searched(self._continued(running_plan), *watched, result)
        return self._decision(result, current, running_plan)

    def _continued(self, running_plan: HtnPlan | None) -> frozenset[str]:
        """The methods whose continuation branches may fire while ``running_plan`` runs."""
        if running_plan is None or not self._continuing:
            return frozenset()
        return self._continuing.intersection(running_plan.methods)

    def _decision(
        self,
        result: HtnResult,
        current: AgentPlan | None,
        running_plan: HtnPlan | None,
        *,
        again: bool = False,
    ) -> Decision:
        expansions = 0 if again else result.expansions
        choice = choose_plan(running_plan, result)
        chosen = choice.plan
        if chosen is None:
            kind: DecisionKind = "dropped" if current is not None else "none"
            return Decision(kind, None, choice.reason, expansions=expansions)
        if chosen is running_plan and current is not None:
            return Decision("kept", current, choice.reason, expansions=expansions)
        branches = tuple(choice.branch for choice in chosen.choices)
        plan = AgentPlan(chosen.steps, _label(chosen), chosen, branches)
        kind = "replaced" if current is not None else "new"
        tree = ""
        if tracing_enabled():  # only the agent.plan event of a traced run shows it
            tree = htn_plan_text(chosen, self.planner.domain)
        return Decision(kind, plan, choice.reason, tree, expansions)

    def drop(self, current: AgentPlan, reason: str) -> Decision:
        self._search = None  # it was planned against the plan that failed
        return Decision("dropped", None, reason)


@dataclass(frozen=True)
class _Searched:
    """An HTN search that ran to its end in one call, and what it read."""

    continued: frozenset[str]
    """The running plan's methods with a continuation branch (all the search read of it)."""
    seen: FactDB
    """The facts as the search saw them: a watching copy, never changed since."""
    reads: FactReads
    result: HtnResult


def _htn_plan(current: AgentPlan | None) -> HtnPlan | None:
    running = current.source if current is not None else None
    return running if isinstance(running, HtnPlan) else None


def _label(plan: HtnPlan) -> str:
    path = ".".join(str(index) for index in plan.path)
    return f"{plan.root.name}:{path}"


S = TypeVar("S")


class GoalByGoal(Generic[S]):
    """What a GOAP decider keeps between decisions as it searches its goals one after another,
    best first: the search of the goal under way (``S``; it goes on at the next decision when
    the budget runs out), the goals tried, and its last decisions (:meth:`reuse`). A subclass
    makes the decision itself, in ``_decide``."""

    def __init__(self, *, remember: bool) -> None:
        self.remember = remember
        """Keep each decision and the facts it saw, for :meth:`reuse`."""
        self._search: S | None = None
        self._searching: Goal | None = None
        self._tried: set[str] = set()
        self.memo = DecisionMemo()
        """The last decisions and what they read (:meth:`reuse`): every fact, and the
        progress of the running plan (what is left of it must still replay)."""

    def reuse(
        self, facts: FactDB, current: AgentPlan | None, *, progress: int = 0
    ) -> Decision | None:
        """The decision :meth:`decide` would make now, if no fact changed since the last one
        made for ``current`` at this ``progress``; None otherwise, or while a goal's search is
        under way."""
        if self._search is not None or self._tried:
            return None
        return self.memo.recall(facts, current, progress)

    def decide(
        self, facts: FactDB, current: AgentPlan | None, *, budget: int, progress: int = 0
    ) -> Decision | None:
        # The state, the goals' relevancy and the actions' checks may read any fact.
        idle = self._search is None and not self._tried
        seen = facts.copy() if idle and self.remember else None
        decision = self._decide(facts, current, budget, progress)
        if decision is not None and seen is not None:
            self.memo.remember(current, seen, every_fact(), decision, progress=progress)
        return decision

    def _decide(
        self, facts: FactDB, current: AgentPlan | None, budget: int, progress: int
    ) -> Decision | None:
        raise NotImplementedError

    def drop(self, current: AgentPlan, reason: str) -> Decision:
        self._reset()
        return Decision("dropped", None, reason)

    def _reset(self) -> None:
        self._search, self._searching = None, None
        self._tried.clear()


class GoapDecider(GoalByGoal[GoapSearch]):
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
        remember: bool = True,
    ) -> None:
        super().__init__(remember=remember)
        self.brain = brain
        self._state = state or self._projected
        self._context = context or (lambda facts: facts)
        self.max_expansions = max_expansions
        self._unprojected: set[str] = set()

    def _projected(self, facts: FactDB) -> WorldState:
        return world_state(facts, skipped=self._warn_unprojected)

    def _warn_unprojected(self, fact: Fact, why: str) -> None:
        name = str(next(iter(fact), ""))
        if name not in self._unprojected:
            self._unprojected.add(name)
            _log.warning("goap.unprojected", fact=name, reason=why, brain=self.brain.name)

    def _decide(
        self, facts: FactDB, current: AgentPlan | None, budget: int, progress: int
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


def every_fact() -> FactReads:
    """What a decision that may read any fact read (a GOAP decision: its world state projects
    every fact, and its goals and actions read the facts as they like)."""
    reads = FactReads()
    reads.read_all()
    return reads


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
