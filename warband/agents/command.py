"""Pittman's GOAP command hierarchy (thesis §3.9): orders as goal biases, reports as progress.

A commanding agent does not give its subordinates plans. Each of its GOAP actions runs as a
*command*: it recommends (a positive bias) or discourages (a negative one) a goal that is
already in every subordinate's goal set, by a GoalBias message; the subordinate plans for that
goal itself with its own GOAP brain.

- A :class:`Subordinate` tells its superior when it adopts a recommended goal
  (``StatusReport("adopted", {"a0": goal})``) and when its plan for it completes
  (``StatusReport("completed", {"a0": goal})``). A withdrawal (bias 0 or less) for the goal it
  is pursuing interrupts its plan.
- A :class:`Commander` runs a command task (:func:`command_task`) as a lasting task: it sends
  the GoalBias with the goal's target in it (Pittman recommends goals with targets: which room,
  which enemy), and finishes when every subordinate has reported completion. It fails after
  ``timeout`` ticks, naming who did not report, so nothing stalls. When its plan is replaced or
  dropped (or the command fails) it withdraws every open recommendation: a GoalBias of 0, which
  interrupts the subordinates.

A subordinate remembers the target of a recommended goal as the fact ``("goal_target", goal,
target)`` (:data:`GOAL_TARGET`) until the recommendation is withdrawn; its planner reads it
with :func:`target_of`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from ..exceptions import ConfigurationError
from ..messaging import GoalBias, StatusReport, handles
from ..planning import FactDB, Task, simulate
from ..values import Value
from ..world import FactKind
from .agent import Agent
from .decide import Decision, GoapDecider
from .execute import TaskHandler, TaskStatus

ADOPTED = "adopted"
"""StatusReport status: the subordinate adopted the recommended goal (``a0``)."""
COMPLETED = "completed"
"""StatusReport status: the subordinate's plan for the recommended goal (``a0``) completed."""
GOAL_TARGET = "goal_target"
"""The memory fact ``(goal_target, goal, target)``: the target of a recommended goal."""


class GoalTarget(NamedTuple):
    goal: str
    target: Value


GOAL_TARGET_FACT: Final = FactKind(GOAL_TARGET, GoalTarget, "the target of a recommended goal")

WITHDRAWN = 0.0
"""The bias a commander sends to take a recommendation back."""


def target_of(facts: FactDB, goal: str) -> Value | None:
    """The target the superior's GoalBias gave for ``goal`` (None: none given)."""
    for target in GOAL_TARGET_FACT.matching(facts.facts(GOAL_TARGET)):
        if target.goal == goal:
            return target.target
    return None


class Subordinate(Agent):
    """A GOAP agent that follows goal biases and reports adoption and completion."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
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

    @handles(GoalBias)
    def on_goal_bias(self, bias: GoalBias) -> None:
        super().on_goal_bias(bias)
        self._reported.discard(bias.goal)
        self.memory.forget(GOAL_TARGET, bias.goal)
        if bias.bias > 0:
            self.recommended[bias.goal] = bias.bias
            if bias.target is not None:
                self.memory.remember(GOAL_TARGET, bias.goal, bias.target)
            return
        recommended = self.recommended.pop(bias.goal, None) is not None
        # A withdrawn recommendation or a discouragement ends the plan for that goal (a running
        # plan would otherwise be kept while no other goal has a plan).
        pursued = self.plan is not None and self.plan.label == f"goal:{bias.goal}"
        if pursued and (recommended or bias.bias < 0):
            self.interrupted.append(bias.goal)
            self.log.info("command.interrupted", goal=bias.goal, by=bias.sender)
            self.fail_running(f"{bias.sender} withdrew goal {bias.goal}")

    def on_decision(self, decision: Decision) -> None:
        super().on_decision(decision)
        plan = decision.plan
        if decision.kind in ("new", "replaced") and plan is not None:
            goal = _goal_of(plan.label)
            if goal in self.recommended and goal not in self._reported:
                self._reported.add(goal)
                self.adopted.append(goal)
                self.report_status(ADOPTED, [goal])

    def on_tick(self, tick: int) -> None:
        before = self.plan
        super().on_tick(tick)
        # The loop ends a plan whose last step finished by clearing it with the step count at
        # its length; a dropped plan resets the step count instead.
        if before is not None and self.plan is None and self.step == len(before.steps):
            goal = _goal_of(before.label)
            if goal in self.recommended:
                self._complete(goal)
        running = _goal_of(self.plan.label) if self.plan is not None else None
        for goal in [g for g in self.recommended if g != running and self._holds(g)]:
            # Recommended but already achieved (an order given again after a time-out): no
            # plan will run for it, so report it done now.
            self._complete(goal)

    def _complete(self, goal: str) -> None:
        del self.recommended[goal]
        self.completed.append(goal)
        self.report_status(COMPLETED, [goal])

    def _holds(self, name: str) -> bool:
        """True when the goal ``name`` holds in what the agent believes now."""
        decider = self.decider
        if not isinstance(decider, GoapDecider):
            return False
        goal = next((g for g in decider.brain.goals if g.name == name), None)
        if goal is None:
            return False
        facts = self.memory.facts
        # The decider's own projection and context: the goal holds as its planner would see it.
        state, context = decider.state_of(facts), decider.context_of(facts)
        return simulate(state, [], goal=goal.ground(context), context=context).ok

    def final_state(self) -> dict[str, Any]:
        return {
            **super().final_state(),
            "adopted": list(self.adopted),
            "completed": list(self.completed),
            "interrupted": list(self.interrupted),
        }


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


class Commander(Agent):
    """A GOAP agent whose actions command its subordinates (see :func:`command_task`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command: Command | None = None
        self.commands_done: list[str] = []
        """The goal of every command all subordinates completed, in order."""
        self.commands_failed: list[str] = []
        """Why each failed command failed, in order."""
        self.reports: list[tuple[int, str, str, str]] = []
        """Every adoption and completion report: (tick, member, status, goal)."""

    def start_command(
        self,
        task: Task,
        goal: str,
        bias: float,
        target: Value | None,
        timeout: int,
        discouraged: tuple[tuple[str, float], ...] = (),
    ) -> TaskStatus:
        """Recommend ``goal`` (with ``target``) to every subordinate, and discourage the goals
        of ``discouraged`` (name, negative bias); the running ``task`` lasts until all report
        completion, and fails after ``timeout`` ticks."""
        if not self.subordinates:
            return self.fail_task(f"{self.id} has no subordinates to command {goal}")
        self._withdraw("a new command")
        for member in self.subordinates:
            self.send(GoalBias(recipient=member, goal=goal, bias=bias, target=target))
            for other, against in discouraged:
                self.send(GoalBias(recipient=member, goal=other, bias=against))
        deadline = self.tick + timeout
        self.command = Command(goal, bias, self.subordinates, deadline, target, discouraged)
        return self.hold_task(task)

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        super().on_status(report)
        command = self.command
        goal = report.details.get("a0")
        if command is None or goal != command.goal or report.sender not in command.members:
            return
        if report.status == ADOPTED:
            command.adopted.add(report.sender)
        elif report.status == COMPLETED:
            command.completed.add(report.sender)
        else:
            return
        self.reports.append((self.tick, report.sender, report.status, command.goal))

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        command = self.command
        if command is None or self.running_task is None:
            return
        if not command.missing:
            self.command = None
            self.commands_done.append(command.goal)
            # What the commander's own planner sees: ("command_done", goal, target).
            self.memory.remember("command_done", command.goal, command.target)
            # The goal is done: take the recommendation back so it does not linger.
            self._send_bias(command, WITHDRAWN)
            self.finish_task()
        elif tick >= command.deadline:
            reason = (
                f"command {command.goal}: {', '.join(command.missing)} did not report "
                f"completion by tick {command.deadline}"
            )
            self.commands_failed.append(reason)
            self._withdraw(reason)
            self.fail_running(reason)

    def on_decision(self, decision: Decision) -> None:
        super().on_decision(decision)
        if decision.kind in ("replaced", "dropped"):
            self._withdraw(f"plan {decision.kind}: {decision.reason}")

    def _withdraw(self, reason: str) -> None:
        command, self.command = self.command, None
        if command is not None:
            self.log.info("command.withdrawn", goal=command.goal, reason=reason)
            self._send_bias(command, WITHDRAWN)

    def _send_bias(self, command: Command, bias: float) -> None:
        for member in command.members:
            self.send(GoalBias(recipient=member, goal=command.goal, bias=bias))
            for other, _against in command.discouraged:
                self.send(GoalBias(recipient=member, goal=other, bias=bias))

    def final_state(self) -> dict[str, Any]:
        return {
            **super().final_state(),
            "commands_done": list(self.commands_done),
            "commands_failed": list(self.commands_failed),
            "reports": [list(report) for report in self.reports],
        }


def command_task(
    goal: str,
    *,
    bias: float = 1.0,
    target: Callable[[Task], Value] | None = None,
    timeout: int = 20,
    discourage: dict[str, float] | None = None,
) -> TaskHandler:
    """A task handler for a :class:`Commander`'s action: recommend ``goal`` by ``bias`` to every
    subordinate (``target(task)`` as its target) and discourage the goals of ``discourage``
    (name: negative bias) until it ends; done when all reported completion, failed after
    ``timeout`` ticks."""
    against = tuple(sorted((discourage or {}).items()))
    if bias <= 0 or timeout < 1 or any(value >= 0 for _, value in against):
        raise ConfigurationError(
            f"command {goal!r}: bias must be positive (got {bias}), timeout at least 1 tick "
            f"(got {timeout}) and every discouraging bias negative (got {dict(against)})"
        )

    def run(agent: Agent, task: Task) -> TaskStatus:
        if not isinstance(agent, Commander):
            return agent.fail_task(f"{agent.id} runs command {goal} but is not a Commander")
        aim = target(task) if target is not None else None
        return agent.start_command(task, goal, bias, aim, timeout, against)

    return run


__all__ = [
    "ADOPTED",
    "COMPLETED",
    "GOAL_TARGET",
    "WITHDRAWN",
    "Command",
    "Commander",
    "Subordinate",
    "command_task",
    "target_of",
]
