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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..planning import (
    FactDB,
    HtnDomain,
    HtnPlan,
    HtnPlanner,
    HtnResult,
    HtnSearch,
    Task,
    choose_plan,
    decomposition_tree,
    htn_tree_text,
)
from ..values import Value

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


@dataclass(frozen=True)
class Decision:
    """What a decision chose and why; the agent logs it as one ``agent.plan`` event."""

    kind: DecisionKind
    plan: AgentPlan | None
    reason: str
    tree: str = ""
    """The decomposition (HTN) or search tree (GOAP) behind a new plan, as text."""
    expansions: int = 0


class Decider(Protocol):
    """Chooses the plan an agent runs (see the module docstring)."""

    def decide(self, facts: FactDB, current: AgentPlan | None, *, budget: int) -> Decision | None:
        """Decide on ``current`` given ``facts``; None while a search needs more budget."""
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

    def decide(self, facts: FactDB, current: AgentPlan | None, *, budget: int) -> Decision | None:
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
                explain=True,
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
        plan = AgentPlan(chosen.steps, _label(chosen), chosen)
        kind = "replaced" if current is not None else "new"
        tree = htn_tree_text(decomposition_tree(chosen, self.planner.domain))
        return Decision(kind, plan, choice.reason, tree, result.expansions)

    def drop(self, current: AgentPlan, reason: str) -> Decision:
        self._search = None  # it was planned against the plan that failed
        return Decision("dropped", None, reason)


def _label(plan: HtnPlan) -> str:
    path = ".".join(str(index) for index in plan.path)
    return f"{plan.root.name}:{path}"
