"""Pittman's GOAP command hierarchy (thesis §3.9): orders as goal biases, reports as progress.

A commanding agent does not give its subordinates plans. Each of its GOAP actions runs as a
*command*: it recommends (a positive bias) or discourages (a negative one) a goal that is
already in every subordinate's goal set, by a GoalBias message; the subordinate plans for that
goal itself with its own GOAP brain.

- A subordinate (its role's :class:`Following` component) tells its superior when it adopts a
  recommended goal (``StatusReport("adopted", {"a0": goal})``) and when its plan for it
  completes (``StatusReport("completed", {"a0": goal})``). A withdrawal (bias 0 or less) for the
  goal it is pursuing interrupts its plan.
- A commander (its role's :class:`Commanding` component) runs a command task
  (:func:`command_task`) as a lasting task: it sends the GoalBias with the goal's target in it
  (Pittman recommends goals with targets: which room, which enemy), and finishes when every
  subordinate has reported completion. It fails after ``timeout`` ticks, naming who did not
  report, so nothing stalls. When its plan is replaced or dropped (or the command fails) it
  withdraws every open recommendation: a GoalBias of 0, which interrupts the subordinates.
  A member that let :data:`DROP_AFTER` commands in a row time out is dropped: the commander
  goes on without it (``command.member_dropped`` in the log). A command made with
  ``roster=True`` sends its target as ``(target, *members)``, the members it counts on, so they
  can share out the part of a dropped one.
- A subordinate reports a goal completed when its plan for it ended and the goal holds in what
  it believes (for a GOAP decider: a plan can end one step short, and the goal holds only once
  the world confirms the last act), so the commander's count is of work done.

Both are components of a role (``Role(..., components=[Following])``), not classes of agent:
one :class:`~warband.agents.Agent` runs them. :func:`Subordinate` and :func:`Commander` make such
an agent from a role that does not list its component yet.

A subordinate remembers the target of a recommended goal as the fact ``("goal_target", goal,
target)`` (:data:`GOAL_TARGET`) until the recommendation is withdrawn; its planner reads it
with :func:`target_of`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from ..exceptions import ConfigurationError
from ..messaging import GoalBias, StatusReport, handles
from ..planning import FactDB, Task, simulate
from ..values import Value
from ..world import FactKind
from .agent import Agent
from .component import Component
from .decide import AgentPlan, Decision, GoapDecider
from .execute import TaskHandler, TaskStatus
from .role import Role

ADOPTED = "adopted"
"""StatusReport status: the subordinate adopted the recommended goal (``a0``)."""
COMPLETED = "completed"
"""StatusReport status: the subordinate's plan for the recommended goal (``a0``) completed."""
COMMAND_DONE = "command_done"
"""The commander's memory fact ``(command_done, goal, target)``: a command all completed."""
GOAL_TARGET = "goal_target"
"""The memory fact ``(goal_target, goal, target)``: the target of a recommended goal."""


class GoalTarget(NamedTuple):
    goal: str
    target: Value


GOAL_TARGET_FACT: Final = FactKind(GOAL_TARGET, GoalTarget, "the target of a recommended goal")

WITHDRAWN = 0.0
"""The bias a commander sends to take a recommendation back."""

DROP_AFTER = 2
"""Commands in a row a member let time out before its commander goes on without it (Pittman's
commander must not stall on a member that cannot do its part: re-issuing the same command to
it forever cleared 0 of 3 rooms). ``Role(components=[functools.partial(Commanding,
drop_after=3)])`` sets another."""


def target_of(facts: FactDB, goal: str) -> Value | None:
    """The target the superior's GoalBias gave for ``goal`` (None: none given)."""
    for target in GOAL_TARGET_FACT.matching(facts.facts(GOAL_TARGET)):
        if target.goal == goal:
            return target.target
    return None


class Following(Component):
    """The subordinate's part (module doc): follows goal biases, remembers each recommended
    goal's target, reports adoption and completion, and ends a plan whose goal is withdrawn."""

    def __init__(self) -> None:
        self.recommended: dict[str, float] = {}
        """The goals the superior recommends now, and by how much."""
        self.adopted: list[str] = []
        """Every recommended goal adopted, in order."""
        self.completed: list[str] = []
        """Every recommended goal whose plan completed, in order."""
        self.interrupted: list[str] = []
        """Every goal whose plan a withdrawal interrupted, in order."""
        self._reported: set[str] = set()
        # Recommended goals already reported adopted: a replan after a failure is no news.
        self._before: AgentPlan | None = None

    @handles(GoalBias)
    def on_goal_bias(self, bias: GoalBias) -> None:
        agent = self.agent
        self._reported.discard(bias.goal)
        agent.memory.forget(GOAL_TARGET, bias.goal)
        if bias.bias > 0:
            self.recommended[bias.goal] = bias.bias
            if bias.target is not None:
                agent.memory.remember(*GOAL_TARGET_FACT.fact(bias.goal, bias.target))
            return
        recommended = self.recommended.pop(bias.goal, None) is not None
        # A withdrawn recommendation or a discouragement ends the plan for that goal (a running
        # plan would otherwise be kept while no other goal has a plan).
        pursued = agent.plan is not None and agent.plan.label == f"goal:{bias.goal}"
        if pursued and (recommended or bias.bias < 0):
            self.interrupted.append(bias.goal)
            agent.log.info("command.interrupted", goal=bias.goal, by=bias.sender, tick=agent.tick)
            agent.fail_running(f"{bias.sender} withdrew goal {bias.goal}")

    def on_decision(self, decision: Decision) -> None:
        plan = decision.plan
        if decision.kind in ("new", "replaced") and plan is not None:
            goal = _goal_of(plan.label)
            if goal in self.recommended and goal not in self._reported:
                self._reported.add(goal)
                self.adopted.append(goal)
                self.agent.report_status(ADOPTED, [goal])

    def on_tick_start(self, tick: int) -> None:
        self._before = self.agent.plan

    def on_tick_end(self, tick: int) -> None:
        agent, before = self.agent, self._before
        # The loop ends a plan whose last step finished by clearing it with the step count at
        # its length; a dropped plan resets the step count instead.
        if before is not None and agent.plan is None and agent.step == len(before.steps):
            goal = _goal_of(before.label)
            if goal in self.recommended and self._achieved(goal):
                self._complete(goal)
        running = _goal_of(agent.plan.label) if agent.plan is not None else None
        for goal in [g for g in self.recommended if g != running and self._holds(g)]:
            # Recommended but already achieved (an order given again after a time-out): no
            # plan will run for it, so report it done now.
            self._complete(goal)

    def _complete(self, goal: str) -> None:
        del self.recommended[goal]
        self.completed.append(goal)
        self.agent.report_status(COMPLETED, [goal])

    def _achieved(self, name: str) -> bool:
        """A plan for ``name`` ended: is the goal achieved? A GOAP agent checks that it holds;
        one that did not reach it yet (the world has still to confirm the last act, or the
        plan did one part of several) reports when it does (:meth:`on_tick_end`'s check)."""
        return not isinstance(self.agent.decider, GoapDecider) or self._holds(name)

    def _holds(self, name: str) -> bool:
        """True when the goal ``name`` holds in what the agent believes now."""
        decider = self.agent.decider
        if not isinstance(decider, GoapDecider):
            return False
        goal = next((g for g in decider.brain.goals if g.name == name), None)
        if goal is None:
            return False
        facts = self.agent.memory.facts
        # The decider's own projection and context: the goal holds as its planner would see it.
        state, context = decider.state_of(facts), decider.context_of(facts)
        return simulate(state, [], goal=goal.ground(context), context=context).ok

    def final_state(self) -> dict[str, Any]:
        return {
            "adopted": list(self.adopted),
            "completed": list(self.completed),
            "interrupted": list(self.interrupted),
        }


def Subordinate(actor_id: str, role: Role, **options: Any) -> Agent:  # was a class
    """An :class:`Agent` of ``role`` with the :class:`Following` component added (the role
    may list it already: ``Role(..., components=[Following])``)."""
    return Agent(actor_id, role.with_components(Following), **options)


def _goal_of(label: str) -> str:
    return label.removeprefix("goal:")


@dataclass
class Command:
    """One command in flight: the goal recommended, to whom, and who reported what."""

    goal: str
    bias: float
    members: tuple[str, ...]
    deadline: int
    target: Value | None = None
    discouraged: tuple[tuple[str, float], ...] = ()
    """Other goals discouraged meanwhile, with their (negative) biases."""
    adopted: set[str] = field(default_factory=set)
    completed: set[str] = field(default_factory=set)

    @property
    def missing(self) -> list[str]:
        return [member for member in self.members if member not in self.completed]


class Commanding(Component):
    """The commanding agent's part (see :func:`command_task`): the command in flight, the
    reports on it, and the withdrawal of its recommendations when the plan changes."""

    def __init__(self, drop_after: int = DROP_AFTER) -> None:
        if drop_after < 1:
            raise ConfigurationError(
                f"Commanding: drop_after must be at least 1 time-out, got {drop_after}"
            )
        self.drop_after = drop_after
        self.command: Command | None = None
        self.commands_done: list[str] = []
        """The goal of every command all subordinates completed, in order."""
        self.commands_failed: list[str] = []
        """Why each failed command failed, in order."""
        self.reports: list[tuple[int, str, str, str]] = []
        """Every adoption and completion report: (tick, member, status, goal)."""
        self.dropped: list[str] = []
        """The members the commander goes on without, in the order it dropped them."""
        self._timed_out: Counter[str] = Counter()
        # Commands in a row each member let time out.

    @property
    def members(self) -> tuple[str, ...]:
        """The subordinates the commander counts on: all but those it dropped."""
        return tuple(m for m in self.agent.subordinates if m not in self.dropped)

    def start_command(
        self,
        task: Task,
        goal: str,
        bias: float,
        target: Value | None,
        timeout: int,
        discouraged: tuple[tuple[str, float], ...] = (),
        *,
        roster: bool = False,
    ) -> TaskStatus:
        """Recommend ``goal`` (with ``target``; with ``roster``, ``(target, *members)``) to
        every member (:attr:`members`), and discourage the goals of ``discouraged`` (name,
        negative bias); the running ``task`` lasts until all report completion, and fails
        after ``timeout`` ticks."""
        agent = self.agent
        members = self.members
        if not members:
            dropped = f" (dropped: {', '.join(self.dropped)})" if self.dropped else ""
            return agent.fail_task(f"{agent.id} has no subordinates to command {goal}{dropped}")
        told: Value | None = target
        if roster:
            if isinstance(target, tuple):
                raise ConfigurationError(
                    f"command {goal}: with roster=True the target must be one value, got "
                    f"{target!r}; the members follow it in the GoalBias"
                )
            told = members if target is None else (target, *members)
        self._withdraw("a new command")
        for member in members:
            agent.send(GoalBias(recipient=member, goal=goal, bias=bias, target=told))
            for other, against in discouraged:
                agent.send(GoalBias(recipient=member, goal=other, bias=against))
        deadline = agent.tick + timeout
        self.command = Command(goal, bias, members, deadline, target, discouraged)
        return agent.hold_task(task)

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        command = self.command
        goal = report.details.get("a0")
        if command is None or goal != command.goal or report.sender not in command.members:
            return
        if report.status == ADOPTED:
            command.adopted.add(report.sender)
        elif report.status == COMPLETED:
            command.completed.add(report.sender)
            self._timed_out[report.sender] = 0
        else:
            return
        self.reports.append((self.agent.tick, report.sender, report.status, command.goal))

    def on_tick_end(self, tick: int) -> None:
        agent, command = self.agent, self.command
        if command is None or agent.running_task is None:
            return
        if not command.missing:
            self.command = None
            self.commands_done.append(command.goal)
            # What the commander's own planner sees: ("command_done", goal, target).
            agent.memory.remember(COMMAND_DONE, command.goal, command.target)
            # The goal is done: take the recommendation back so it does not linger.
            self._send_bias(command, WITHDRAWN)
            agent.finish_task()
        elif tick >= command.deadline:
            reason = (
                f"command {command.goal}: {', '.join(command.missing)} did not report "
                f"completion by tick {command.deadline}"
            )
            self.commands_failed.append(reason)
            self._withdraw(reason)
            for member in command.missing:
                self._timed_out[member] += 1
                if self._timed_out[member] >= self.drop_after:
                    self._drop(member)
            agent.fail_running(reason)

    def _drop(self, member: str) -> None:
        self.dropped.append(member)
        self.agent.log.info(
            "command.member_dropped",
            member=member,
            time_outs=self._timed_out[member],
            tick=self.agent.tick,
        )

    def on_decision(self, decision: Decision) -> None:
        if decision.kind in ("replaced", "dropped"):
            self._withdraw(f"plan {decision.kind}: {decision.reason}")

    def _withdraw(self, reason: str) -> None:
        command, self.command = self.command, None
        if command is not None:
            self.agent.log.info(
                "command.withdrawn", goal=command.goal, reason=reason, tick=self.agent.tick
            )
            self._send_bias(command, WITHDRAWN)

    def _send_bias(self, command: Command, bias: float) -> None:
        for member in command.members:
            self.agent.send(GoalBias(recipient=member, goal=command.goal, bias=bias))
            for other, _against in command.discouraged:
                self.agent.send(GoalBias(recipient=member, goal=other, bias=bias))

    def final_state(self) -> dict[str, Any]:
        return {
            "commands_done": list(self.commands_done),
            "commands_failed": list(self.commands_failed),
            "reports": [list(report) for report in self.reports],
            "members_dropped": list(self.dropped),
        }


def Commander(actor_id: str, role: Role, **options: Any) -> Agent:  # was a class
    """An :class:`Agent` of ``role`` with the :class:`Commanding` component added (the role
    may list it already: ``Role(..., components=[Commanding])``)."""
    return Agent(actor_id, role.with_components(Commanding), **options)


def command_task(
    goal: str,
    *,
    bias: float = 1.0,
    target: Callable[[Task], Value] | None = None,
    timeout: int = 20,
    discourage: dict[str, float] | None = None,
    roster: bool = False,
) -> TaskHandler:
    """A task handler for an action of an agent with the :class:`Commanding` component:
    recommend ``goal`` by ``bias`` to every member it counts on (``target(task)`` as its
    target; with ``roster``, ``(target(task), *members)``, so the members know who is left to
    share the work) and discourage the goals of ``discourage`` (name: negative bias) until it
    ends; done when all reported completion, failed after ``timeout`` ticks."""
    against = tuple(sorted((discourage or {}).items()))
    if bias <= 0 or timeout < 1 or any(value >= 0 for _, value in against):
        raise ConfigurationError(
            f"command {goal!r}: bias must be positive (got {bias}), timeout at least 1 tick "
            f"(got {timeout}) and every discouraging bias negative (got {dict(against)})"
        )

    def run(agent: Agent, task: Task) -> TaskStatus:
        commanding = agent.find_component(Commanding)
        if commanding is None:
            return agent.fail_task(
                f"{agent.id} runs command {goal}, but its role {agent.role.name!r} has no "
                "Commanding component: list it in Role(components=[Commanding])"
            )
        aim = target(task) if target is not None else None
        return commanding.start_command(task, goal, bias, aim, timeout, against, roster=roster)

    return run


__all__ = [
    "ADOPTED",
    "COMMAND_DONE",
    "COMPLETED",
    "DROP_AFTER",
    "GOAL_TARGET",
    "WITHDRAWN",
    "Command",
    "Commander",
    "Commanding",
    "Following",
    "Subordinate",
    "command_task",
    "target_of",
]
