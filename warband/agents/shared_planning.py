"""Pittman's planning scheduler for running agents: the agents of one process share a budget.

Pittman (§3.6) kept a frame from hitching when several agents had long planning jobs at once:
an agent that needs a plan joins a FIFO queue, the scheduler spends a fixed number of search
iterations per frame on the queue's head, and a search cut short goes to the back and goes on
in a later frame. :class:`SharedPlanning` does that for the agents of one process in a
``--mode realtime`` run (``warband run --planning-budget N``): each tick the decisions they
asked for share ``N`` planner expansions, served by a round-robin
:class:`~warband.planning.PlanningScheduler`. An agent whose decision is still queued goes on
with its running plan, as it does while its own budget's search spans ticks.

Only in realtime runs: in lockstep, what a shared budget lets each agent plan in a tick would
depend on which agents share its process, so a run would no longer send the same messages in
one process, with ``--workers`` and with ``--processes``. There each agent has its own budget
per decision (:attr:`~warband.agents.Role.planning_budget`), the lockstep-safe form of the same
idea (:mod:`warband.planning.scheduler` says why).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from ..exceptions import ConfigurationError
from ..planning import PlanDelivery, PlanningScheduler
from ..planning.search import SearchStatus
from .decide import Decision

if TYPE_CHECKING:
    from .agent import Agent

_log = structlog.get_logger("warband.agents")


class _DecisionJob:
    """One agent's decision as a search the scheduler steps: each step is a call of its
    decider with the step's budget (a decider's search goes on where the last call stopped)."""

    def __init__(self, agent: Agent, asked: int) -> None:
        self.agent = agent
        self.asked = asked
        """The tick the agent asked in."""
        self.plan = agent.plan
        """The running plan the decision is made for (the one when it was made)."""
        self.expansions = 0
        self.decision: Decision | None = None

    @property
    def done(self) -> bool:
        return self.decision is not None

    @property
    def result(self) -> Decision | None:
        return self.decision

    def step(self, budget: int) -> SearchStatus:
        agent = self.agent
        decision = agent.decider.decide(
            agent.memory.facts, agent.plan, budget=budget, progress=agent.step
        )
        if decision is None:
            self.expansions += budget  # a search cut short spent all it was given
            return SearchStatus.RUNNING
        # A decision's expansions count its whole search, over every call (none when reused);
        # a step is never free, so one agent's empty decisions cannot starve the others.
        self.expansions = max(self.expansions + 1, decision.expansions)
        self.plan = agent.plan
        self.decision = decision
        return SearchStatus.FOUND


@dataclass
class SharedPlanning:
    """The planning queue of the agents of one process (see the module docstring).

    ``budget``: planner expansions the queue is served per tick, in all. Give the same object
    to every :class:`~warband.agents.Agent` of the process (``agent.shared_planning``).
    """

    budget: int
    scheduler: PlanningScheduler = field(
        default_factory=lambda: PlanningScheduler(round_robin=True)
    )
    waits: list[int] = field(default_factory=list)
    """Ticks each delivered decision waited in the queue (0: served in the tick it was asked)."""
    _served: int | None = None
    _jobs: dict[str, _DecisionJob] = field(default_factory=dict)
    """Each agent's decision asked for and not yet made."""
    _ready: dict[str, _DecisionJob] = field(default_factory=dict)
    """Each agent's decision made and not yet taken."""

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ConfigurationError(
                f"--planning-budget {self.budget}: the agents of a process need at least 1 "
                "planner expansion per tick to share"
            )

    def decide(self, agent: Agent, tick: int) -> Decision | None:
        """``agent``'s decision, if the queue has served it; else None, and it stays queued
        (asked for now if it was not). The first agent to ask in a tick serves the queue."""
        ready = self._ready.pop(agent.id, None)
        if ready is not None and ready.plan is agent.plan:
            return ready.decision
        # (A decision made for a plan that ended or failed while it waited is moot.)
        if agent.id not in self._jobs:
            self._jobs[agent.id] = job = _DecisionJob(agent, tick)
            self.scheduler.submit(agent.id, job, self._deliver)
        if self._served != tick:
            self._served = tick
            self.scheduler.run_tick(self.budget)
        ready = self._ready.pop(agent.id, None)
        if ready is None or ready.plan is not agent.plan:
            return None
        return ready.decision

    def _deliver(self, delivery: PlanDelivery) -> None:
        job = self._jobs.pop(delivery.agent)
        asked = job.asked
        served = self._served if self._served is not None else asked
        self.waits.append(served - asked)
        if served > asked:
            # What a reader of the logs needs to see a decision the queue held back.
            _log.info(
                "planning.waited",
                agent=delivery.agent,
                asked=asked,
                tick=served,
                expansions=delivery.expansions,
            )
        self._ready[delivery.agent] = job
