"""The agent loop every layer shares: gather, decide, execute (DESIGN.md, Killzone Fig. 29.2).

Every tick an :class:`Agent`

1. **gathers**: the messages of the last tick are already in its memory (its handlers wrote
   them: the Percept's facts and events, its orders, its subordinates' reports); the command
   queue and the order book add their facts; each daemon of its role derives its facts;
2. **decides** (:mod:`warband.agents.decide`): it asks its decider whether to keep, replace or
   drop the running plan (or make one); every decision is one ``agent.plan`` log event. The
   decider plans at least every :attr:`~warband.agents.Role.replan_every` ticks (Killzone's
   fixed rate); in between, while no fact its last decision read has changed (a percept, an
   order, a report, a daemon's fact: they all reach the decision as facts) and the running plan
   is the one that decision was made for, it gives that decision again without planning
   (:meth:`~warband.agents.Decider.reuse`), the decision planning would have made;
3. **executes** (:mod:`warband.agents.execute`): the current task of the plan runs; tasks that
   finish at once are followed by the next in the same tick, a lasting one (a move) is checked
   again next tick, a failed one drops the plan.

Orders outlive a tick: a subordinate holds them in a :class:`~warband.agents.CommandQueue` and
answers each with one CompletionReport (done, failed, or overwritten by a newer order); a
superior keeps an :class:`~warband.agents.OrderBook` and closes each order it gave on that
report, when it withdraws it, or when the subordinate leaves.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..exceptions import ConfigurationError
from ..messaging import (
    Act,
    Actor,
    ActResult,
    CompletionReport,
    GoalBias,
    Order,
    Percept,
    PerceptRequest,
    StatusReport,
    ThreatReport,
    WithdrawOrder,
    handles,
)
from ..messaging.catalog import Message
from ..messaging.tracing import log_every_tick, tracing_enabled
from ..planning import Task
from ..values import Fact, Value
from ..world import ACT_FAILED, BLOCKED, WORLD_ID
from .component import Component
from .decide import AgentPlan, Decider, Decision
from .execute import BUILTIN_TASKS, LASTING_VERBS, ActTask, TaskStatus, act_of
from .facts import ACT_REFUSED, DEPARTED, GOAL_BIAS, STATUS, THREAT_REPORT, UNDELIVERED
from .memory import Memory, PerceptFeed
from .orders import CommandQueue, OrderBook
from .role import Role

if TYPE_CHECKING:
    from .shared_planning import SharedPlanning

C = TypeVar("C", bound=Component)
M = TypeVar("M", bound=Message)

MAX_TASKS_PER_TICK = 128
"""Tasks that finish at once run back to back; this many at most in one tick (a squad of
twelve tasks each member with eight, in one tick)."""

REFUSAL_MEMORY = 10
"""Ticks an agent remembers an act the world refused (its ``act_refused`` facts), counted from
the tick it sent the act."""

_Refusal = tuple[int, str, str, tuple[Value, ...]]
"""An act the world refused: the tick it was sent, its verb, the reason, what it was about."""


@dataclass
class _Running:
    """The task the agent is in the middle of."""

    task: Task
    started: int
    act: ActTask | None = None
    act_id: str | None = None
    accepted: bool = False
    until_tick: int | None = None


class Agent(Actor):
    """An agent of any layer: a role (domain, daemons, tasks) run by the one loop.

    ``superior`` receives its reports and CompletionReports; ``subordinates`` are the agents it
    may order. ``team`` and the agent's id are the domain constants ``@team`` and ``@self``.
    """

    percept_deltas = True  # on_percept applies deltas (PerceptFeed)

    def __init__(
        self,
        actor_id: str,
        role: Role,
        *,
        superior: str | None = None,
        subordinates: Sequence[str] = (),
        team: str = "",
        world: str = WORLD_ID,
        facts: Iterable[Sequence[Value]] = (),
        groups: Iterable[str] = (),
        seed: int = 0,
    ) -> None:
        super().__init__(actor_id, groups=groups, seed=seed)
        self.role = role
        self.superior = superior
        self.subordinates = tuple(subordinates)
        self.team = team
        self.world = world
        self.memory = Memory(facts)
        self._percepts = PerceptFeed(self.memory)
        self.commands = CommandQueue()
        self.book = OrderBook()
        constants: dict[str, Value] = {"self": actor_id, "team": team}
        if superior is not None:
            constants["superior"] = superior
        self.decider: Decider = role.decider(constants)
        self.plan: AgentPlan | None = None
        self.step = 0
        self.task_failure = ""
        self.decisions = 0
        self.recent_decisions: deque[tuple[int, str, str | None, str]] = deque(maxlen=64)
        """The last decisions: (tick, kind, plan label, reason)."""
        self._plan_written: tuple[AgentPlan | None, list[str]] = (None, [])
        self.tasks_run = 0
        self.reports_sent = 0
        self.planning_seconds = 0.0
        self._doing: _Running | None = None
        self._last_plan_tick = -(10**9)
        self._reuse: Callable[..., Decision | None] | None = getattr(self.decider, "reuse", None)
        self.decisions_reused = 0
        self.shared_planning: SharedPlanning | None = None
        """The planning queue this agent shares with the others of its process (a realtime
        run's ``--planning-budget``), else None: it plans with its role's own budget."""
        """Decisions taken again without planning (:meth:`Decider.reuse`): nothing the last
        one read had changed."""
        self._sequences: dict[str, str] = {}
        self._sequence_count = 0
        self._threats: dict[tuple[str, str], Fact] = {}
        self.status_reports: dict[str, StatusReport] = {}
        """The last StatusReport from each sender, as it came (memory holds it as a
        ``("status", sender, status, *details)`` fact)."""
        self._status_made: dict[str, tuple[StatusReport, Fact]] = {}
        self._events: tuple[Fact, ...] = ()
        self._loose_acts: dict[str, tuple[str, tuple[Value, ...], int]] = {}
        self._refusals: list[_Refusal] = []
        self._acts = role.acts
        self._reporter = role.reporter() if role.reporter is not None else None
        self._composed: dict[type[Message], Callable[[Any], Any] | None] = {}
        self.components: tuple[Component, ...] = tuple(make() for make in role.components)
        """The per-agent parts of the role, in the role's order (:mod:`~.component`)."""
        for component in self.components:
            component.attach(self)
        self.group_aliases: dict[str, str] = {}
        """Group names a plan uses that stand for another group, for now: a bot keeps
        ``"nearby"`` pointing at the group of the area it stands in (``!broadcast nearby ...``)."""

    # --- gather: handlers write memory ---------------------------------------------------------

    @handles(Percept)
    def on_percept(self, percept: Percept) -> None:
        ask = self._percepts.take(
            percept.facts, percept.tick, since=percept.since, removed=percept.removed
        )
        if ask:
            self.log.warning("percept.gap", sender=percept.sender, since=percept.since)
            self.send(PerceptRequest(recipient=percept.sender))
        self._events = tuple(tuple(event) for event in percept.events)
        self.memory.set_source("events", self._events)

    @handles(Order)
    def on_order(self, order: Order) -> None:
        self.log.info(
            "order.received",
            order=order.id,
            task=order.task,
            args=list(order.args),
            sender=order.sender,
            tick=self.tick,
        )
        for old in self.commands.receive(order):
            self._report_order(old, success=False, reason=f"overwritten by order {order.id}")

    @handles(WithdrawOrder)
    def on_withdraw(self, withdrawal: WithdrawOrder) -> None:
        if self.commands.withdraw(withdrawal.order_id) is not None:
            self.log.info(
                "order.withdrawn",
                order=withdrawal.order_id,
                reason=withdrawal.reason,
                tick=self.tick,
            )

    @handles(CompletionReport)
    def on_completion(self, report: CompletionReport) -> None:
        self.book.reported(report, self.tick)

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        self.status_reports[report.sender] = report

    @handles(ThreatReport)
    def on_threat(self, report: ThreatReport) -> None:
        self._threats[(report.sender, report.threat)] = THREAT_REPORT.fact(
            report.sender, report.threat, report.position, report.tick
        )

    @handles(GoalBias)
    def on_goal_bias(self, bias: GoalBias) -> None:
        # A newer bias for a goal replaces the older one; a bias of 0 takes it back.
        self.memory.forget(GOAL_BIAS.name, bias.goal)
        if bias.bias:
            self.memory.remember(*GOAL_BIAS.fact(bias.goal, bias.bias))

    @handles(ActResult)
    def on_act_result(self, result: ActResult) -> None:
        running = self._doing
        if running is None or running.act_id != result.reply_to:
            loose = self._loose_acts.pop(result.reply_to or "", None)
            if loose is not None and not result.accepted:
                self._refused(*loose, result.reason)
            return
        if result.accepted:
            running.accepted = True
        else:
            if running.act is not None:
                about = _args_of(running.task)
                self._refused(running.act.verb, about, running.started, result.reason)
            self._fail_running(f"the world refused {running.task}: {result.reason}")

    def _refused(self, verb: str, about: tuple[Value, ...], sent: int, reason: str) -> None:
        self._refusals.append((sent, verb, reason, about))

    # --- the loop -----------------------------------------------------------------------------

    def on_tick(self, tick: int) -> None:
        for component in self.components:
            component.on_tick_start(tick)
        self._gather(tick)
        if self._reporter is not None:
            self._reporter(self, tick)
        self._check_running(tick)
        self._decide(tick)
        self._execute(tick)
        for component in self.components:
            component.on_tick_end(tick)

    # --- components ----------------------------------------------------------------------------

    def find_component(self, kind: type[C]) -> C | None:
        """This agent's component of class ``kind`` (the first, if several), or None."""
        return next((c for c in self.components if isinstance(c, kind)), None)

    def component(self, kind: type[C]) -> C:
        """This agent's component of class ``kind`` (the first, if several); raises
        :class:`~warband.exceptions.ConfigurationError` naming the role when it has none."""
        found = self.find_component(kind)
        if found is not None:
            return found
        raise ConfigurationError(
            f"agent {self.id!r}: its role {self.role.name!r} has no {kind.__name__} component; "
            "list one in Role(components=[...]) or build the role with the function made for it"
        )

    def handler_for(self, message_type: type[Message]) -> Callable[[Any], Any] | None:
        """The agent's own handler of ``message_type`` followed by its components' (in the
        role's order); None when nobody handles it. Worked out once per type: the components
        never change after the agent is made."""
        if message_type not in self._composed:
            self._composed[message_type] = self._compose(message_type)
        return self._composed[message_type]

    def _compose(self, message_type: type[Message]) -> Callable[[Any], Any] | None:
        own = super().handler_for(message_type)
        extra = [
            handler
            for component in self.components
            if (handler := component.handler(message_type)) is not None
        ]
        if not extra:
            return own
        handlers = [own, *extra] if own is not None else extra

        def handle_all(message: Any) -> None:
            for handler in handlers:
                handler(message)

        return handle_all

    def _gather(self, tick: int) -> None:
        memory = self.memory
        memory.set_source("orders", self.commands.facts())
        memory.set_source("order_book", self.book.facts())
        memory.set_source("reports", [*self._status_facts(), *self._threats.values()])
        if self._refusals:
            self._refusals = [r for r in self._refusals if tick - r[0] <= REFUSAL_MEMORY]
            memory.set_source(
                "refusals",
                [
                    ACT_REFUSED.fact(verb, tick - sent, why, *about)
                    for sent, verb, why, about in self._refusals
                ],
            )
        if self._loose_acts:
            # An answer that never came (the world left) is not waited for forever.
            self._loose_acts = {
                act: sent
                for act, sent in self._loose_acts.items()
                if tick - sent[2] <= REFUSAL_MEMORY
            }
        self._run_daemons(tick)

    def _status_facts(self) -> list[Fact]:
        """The status fact of each sender's last StatusReport, made once per report: most
        reports are the same as the tick before, and the same tuples tell the memory at once
        that they did not change (a report is a frozen message)."""
        made = self._status_made
        facts = []
        for sender, report in self.status_reports.items():
            known = made.get(sender)
            if known is None or known[0] is not report:
                known = made[sender] = (report, _status_fact(report))
            facts.append(known[1])
        return facts

    def _run_daemons(self, tick: int) -> None:
        for name, daemon in self.role.daemons.items():
            self.memory.set_source(f"daemon:{name}", daemon(self.memory, tick))

    def _decide(self, tick: int) -> None:
        started = time.thread_time()
        decision = self._reused(tick)
        if decision is None:
            if self.shared_planning is not None:
                decision = self.shared_planning.decide(self, tick)
            else:
                decision = self.decider.decide(
                    self.memory.facts,
                    self.plan,
                    budget=self.role.planning_budget,
                    progress=self.step,
                )
            if decision is not None:
                self._last_plan_tick = tick
        # CPU time of this thread (a process paused by others does not count), for benchmarks
        # only: it never decides anything, so lockstep stays exact.
        self.planning_seconds += time.thread_time() - started
        if decision is None:
            return  # still searching; the running plan goes on
        self._apply(decision, tick)

    def _reused(self, tick: int) -> Decision | None:
        """The last decision again, when the decider can tell it is the one it would make
        (:meth:`Decider.reuse`) and the role's fixed-rate replan is not due."""
        every = self.role.replan_every
        if self._reuse is None or every == 1 or tick - self._last_plan_tick >= every:
            return None
        decision = self._reuse(self.memory.facts, self.plan, progress=self.step)
        if decision is not None:
            self.decisions_reused += 1
        return decision

    def adopt(self, decision: Decision) -> None:
        """Run the plan of ``decision``, made outside the decider (a cooperative agent's help
        plan), as if the decider had made it: it is logged and replaces the running plan."""
        self._apply(decision, self.tick)

    def on_decision(self, decision: Decision) -> None:
        """Called with every decision before it takes effect; subclasses keep their own
        bookkeeping here (the default does nothing)."""

    def on_task_failed(self, task: Task, reason: str) -> None:
        """Called when ``task``, the running or starting task of the plan, failed (``reason``
        says why), just before the plan is dropped; subclasses keep their own bookkeeping here
        (the default does nothing)."""

    def _apply(self, decision: Decision, tick: int) -> None:
        self.on_decision(decision)
        for component in self.components:
            component.on_decision(decision)
        self.decisions += 1
        label = decision.plan.label if decision.plan else None
        self.recent_decisions.append((tick, decision.kind, label, decision.reason))
        if decision.kind in ("new", "replaced", "dropped"):
            self._abandon_running()
            self.plan = decision.plan
            self.step = 0
        self._log_decision(decision, tick)

    def _execute(self, tick: int) -> None:
        for _ in range(MAX_TASKS_PER_TICK):
            if self.plan is None or self._doing is not None:
                return
            if self.step >= len(self.plan.steps):
                steps = self.plan.steps
                self.plan = None
                again = self.role.decide_again_after
                if again and any(step.name in again for step in steps):
                    # Bookkeeping only (Role.decide_again_after): plan the real work now, with
                    # the command queue as it is after the plan popped its order, and the
                    # daemons' facts drawn again from what the plan remembered.
                    self.memory.set_source("orders", self.commands.facts())
                    self._run_daemons(tick)
                    self._decide(tick)
                    continue
                return
            task = self.plan.steps[self.step]
            self.tasks_run += 1
            status = self._start(task, tick)
            if status == "failed":
                self._drop(task, tick)
                return
            if status == "done":
                self.step += 1

    def _start(self, task: Task, tick: int) -> TaskStatus:
        self.task_failure = ""
        act = self._acts.get(task.name)
        if act is not None:
            sent = self.send(act_of(act, task, self.world))
            self._doing = _Running(task, tick, act, sent.id)
            return "running"
        handler = self.role.tasks.get(task.name) or BUILTIN_TASKS.get(task.name)
        if handler is None:
            return self.fail_task(f"no handler runs {task.name}")
        status = handler(self, task)
        if status == "running" and self._doing is None:
            self._doing = _Running(task, tick)
        return status

    def _check_running(self, tick: int) -> None:
        running = self._doing
        if running is None:
            return
        if running.until_tick is not None:
            if tick >= running.until_tick:
                self._finish_running()
            return
        act = running.act
        if act is not None:
            failure = _act_failure(self._events, act.verb)
            if failure is not None:
                self._fail_running(f"{running.task}: {failure}")
                return
            if running.accepted and (act.until is None or _has_event(self._events, act.until)):
                self._finish_running()
                return
        if tick - running.started >= self.role.task_timeout:
            self._fail_running(
                f"{running.task} did not finish within {self.role.task_timeout} ticks"
            )

    def _finish_running(self) -> None:
        self._doing = None
        self.step += 1

    def _fail_running(self, reason: str) -> None:
        running, self._doing = self._doing, None
        self.task_failure = reason
        if self.plan is not None:
            self._drop(running.task if running is not None else None, self.tick)

    def _abandon_running(self) -> None:
        self._doing = None

    def _drop(self, failed: Task | None, tick: int) -> None:
        assert self.plan is not None
        if failed is not None and self.task_failure:
            self.on_task_failed(failed, self.task_failure)
            for component in self.components:
                component.on_task_failed(failed, self.task_failure)
        decision = self.decider.drop(self.plan, self.task_failure or "a task failed")
        self._apply(decision, tick)

    def _log_decision(self, decision: Decision, tick: int) -> None:
        plan = decision.plan
        fields: dict[str, Any] = {
            "decision": decision.kind,
            "reason": decision.reason,
            "tick": tick,
            "plan": self._plan_text(plan) if plan else None,
            "label": plan.label if plan else None,
            "expansions": decision.expansions,
            # The plan step the agent is on as the tick runs: `warband view` shows it as the task.
            "step": self.step if plan else None,
        }
        if plan is not None and decision.kind != "kept":
            # What a kept plan keeps too: a reader carries it forward (warband metrics).
            fields["branches"] = list(plan.branches)
        if decision.kind != "kept" and tracing_enabled():
            # What `warband explain` shows: the memory the decision saw, and why.
            fields["memory"] = self.memory.snapshot()
            fields["tree"] = decision.tree or None
        log_every_tick(self.log, "agent.plan", **fields)

    def _plan_text(self, plan: AgentPlan) -> list[str]:
        # A plan is kept for many ticks and logged at each: its steps are written out once.
        if self._plan_written[0] is not plan:
            self._plan_written = (plan, [str(step) for step in plan.steps])
        return self._plan_written[1]

    def send(self, message: M) -> M:
        if isinstance(message, StatusReport | ThreatReport | CompletionReport):
            self.reports_sent += 1
        return super().send(message)

    # --- what tasks can do (used by warband.agents.execute) ----------------------------------

    @property
    def events(self) -> tuple[Fact, ...]:
        """The events of the last Percept (``arrived``, ``act_failed``, ``killed``...)."""
        return self._events

    def act(self, task: Task, verb: str, args: Mapping[str, Value]) -> TaskStatus:
        """Run the starting ``task`` as one Act to the world: done when the world accepts it,
        or, for a lasting verb (a move), when its event comes; failed when it is refused."""
        act = ActTask(verb, tuple(args), LASTING_VERBS.get(verb))
        sent = self.send(Act(recipient=self.world, verb=verb, args=dict(args)))
        self._doing = _Running(task, self.tick, act, sent.id)
        return "running"

    def send_act(
        self, verb: str, args: Mapping[str, Value], *, about: Sequence[Value] | None = None
    ) -> Act:
        """Send an Act the plan does not wait for: the task that sends it is done at once (a
        bot's ``!go`` walks on while its plan fires).

        If the world refuses it, the agent decides again and knows
        ``("act_refused", verb, ago, reason, *about)`` for :data:`REFUSAL_MEMORY` ticks
        (``ago``: how many ticks ago it sent the act, so that a domain compares it with its own
        clock facts; ``about``: what the plan meant by it, by default the act's argument
        values). A refused act a plan waits for (:meth:`act`, an act primitive)
        is remembered the same way, with the task's arguments, and fails its task."""
        sent = self.send(Act(recipient=self.world, verb=verb, args=dict(args)))
        facts = tuple(args.values()) if about is None else tuple(about)
        self._loose_acts[sent.id] = (verb, facts, self.tick)
        return sent

    def hold_task(self, task: Task) -> TaskStatus:
        """Make the starting ``task`` last until :meth:`finish_task` or :meth:`fail_running`
        (or the role's task time-out, counted from now or from :meth:`keep_running`)."""
        self._doing = _Running(task, self.tick)
        return "running"

    def keep_running(self) -> None:
        """The running task made progress: its time-out counts from this tick."""
        if self._doing is not None:
            self._doing.started = self.tick

    @property
    def running_task(self) -> Task | None:
        """The task the agent is in the middle of, or None."""
        return self._doing.task if self._doing is not None else None

    def finish_task(self) -> None:
        """The running task succeeded: the plan goes on with the next one."""
        if self._doing is not None:
            self._finish_running()

    def fail_running(self, reason: str) -> None:
        """The running task failed: the plan is dropped (``reason`` says why)."""
        self._fail_running(reason)

    def fail_task(self, reason: str) -> TaskStatus:
        """Mark the starting task failed with ``reason``; returns ``"failed"``."""
        self.task_failure = reason
        return "failed"

    def wait_task(self, ticks: int) -> TaskStatus:
        """Make the starting task last ``ticks`` ticks."""
        assert self.plan is not None
        task = self.plan.steps[self.step]
        self._doing = _Running(task, self.tick, until_tick=self.tick + max(1, ticks))
        return "running"

    def give_order(self, member: str, task: str, args: Sequence[Value]) -> Order:
        """Send ``task`` to ``member`` (in its open command sequence, if any) and book it."""
        sent = self.send(
            Order(
                recipient=member,
                task=task,
                args=list(args),
                sequence=self._sequences.get(member),
            )
        )
        self.book.issued(sent, self.tick)
        return sent

    def withdraw_orders(self, member: str, reason: str) -> None:
        """Take back every open order given to ``member``."""
        for entry in self.book.open(member):
            self.send(WithdrawOrder(recipient=member, order_id=entry.order.id, reason=reason))
            self.book.withdrawn(entry.order.id, reason, self.tick)

    def start_sequence(self, member: str) -> None:
        """Orders to ``member`` from now until :meth:`end_sequence` queue up behind each other."""
        self._sequence_count += 1
        self._sequences[member] = f"{self.id}:seq{self._sequence_count}"

    def end_sequence(self, member: str) -> None:
        self._sequences.pop(member, None)

    def finish_order(self, *, success: bool, reason: str = "") -> None:
        """The current order is finished: pop it and report to whoever gave it."""
        order = self.commands.pop()
        if order is not None:
            self._report_order(order, success=success, reason=reason)

    def report_status(self, status: str, args: Sequence[Value]) -> None:
        """Send a StatusReport to the superior (nothing without one)."""
        if self.superior is not None:
            details = {f"a{index}": value for index, value in enumerate(args)}
            self.send(StatusReport(recipient=self.superior, status=status, details=details))

    def broadcast_status(self, group: str, topic: str, args: Sequence[Value]) -> None:
        """Tell every member of ``group`` (an area group: "nearby", resolved through
        :attr:`group_aliases`) about ``topic``."""
        details = {f"a{index}": value for index, value in enumerate(args)}
        self.broadcast(
            self.group_aliases.get(group, group), StatusReport(status=topic, details=details)
        )

    def _report_order(self, order: Order, *, success: bool, reason: str) -> None:
        self.log.info(
            "order.finished",
            order=order.id,
            task=order.task,
            success=success,
            reason=reason,
            tick=self.tick,
        )
        self.reply(order, CompletionReport(task=order.task, success=success, reason=reason))

    def set_subordinates(self, members: Sequence[str]) -> None:
        """Make ``members`` this agent's subordinates (a squad the commander gave new bots);
        the broker reports their departures from now on."""
        self.subordinates = tuple(members)
        self.update_registration()

    def on_peer_departed(self, agent: str, reason: str) -> None:
        """A subordinate left the run: its open orders are lost, and the agent knows it
        (``("departed", agent, reason)`` in memory) when it next decides."""
        self.book.lost(agent, reason, self.tick)
        self.memory.remember(*DEPARTED.fact(agent, reason))

    def on_abandoned(self, message: Message, reason: str) -> None:
        """A reliable message of ours was never acknowledged (see ``Actor.on_abandoned``).

        An order is closed as lost in the order book and the agent replans, knowing
        ``("undelivered", recipient, type)``. The superior is told with a StatusReport
        ``undelivered`` (details: ``type``, ``id``, ``recipient``, ``reason``); an agent without
        one passes it to :meth:`on_failure`, as any actor does.
        """
        if isinstance(message, Order):
            self.book.undelivered(message.id, reason, self.tick)
        self.memory.remember(*UNDELIVERED.fact(message.recipient, type(message).__name__))
        if self.superior is None or self.superior == message.recipient:
            super().on_abandoned(message, reason)
            return
        details: dict[str, Value] = {
            "type": type(message).__name__,
            "id": message.id,
            "recipient": message.recipient,
            "reason": reason,
        }
        self.send(StatusReport(recipient=self.superior, status="undelivered", details=details))

    def watched_peers(self) -> list[str]:
        # The broker tells us when a subordinate leaves (it died, its host went silent).
        return list(self.subordinates)

    def on_peer_left(self, agent: str, reason: str) -> None:
        if agent in self.subordinates:
            if not self.stopping:
                self.log.info("agent.subordinate_left", peer=agent, reason=reason)
            self.on_peer_departed(agent, reason)
        for component in self.components:
            component.on_peer_left(agent, reason)

    def final_state(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        for component in self.components:
            extra.update(component.final_state())
        return {
            **extra,
            "role": self.role.name,
            "decisions": self.decisions,
            "decisions_reused": self.decisions_reused,
            "tasks_run": self.tasks_run,
            "orders_given": len(self.book.orders),
            "orders_open": len(self.book.open()),
            "reports_sent": self.reports_sent,
            "planning_ms": round(self.planning_seconds * 1000, 3),
            "plan": self.plan.label if self.plan else None,
        }


def _args_of(task: Task) -> tuple[Value, ...]:
    """The values of a ground task's arguments (a plan's tasks are ground)."""
    return tuple(
        arg for arg in task.args if arg is None or isinstance(arg, bool | int | float | str | tuple)
    )


def _status_fact(report: StatusReport) -> Fact:
    # The details in the order the sender wrote them: a reader knows the report's shape.
    return STATUS.fact(report.sender, report.status, *report.details.values())


def _has_event(events: Sequence[Fact], name: str) -> bool:
    return any(event and event[0] == name for event in events)


def _act_failure(events: Sequence[Fact], verb: str) -> str | None:
    for failed in ACT_FAILED.all(events):
        if failed.verb == verb:
            return f"act_failed: {failed.reason}"
    blocked = BLOCKED.first(events)
    if blocked is not None and verb == "move":
        return f"blocked by {blocked.object}"
    return None


__all__ = ["ACT_REFUSED", "MAX_TASKS_PER_TICK", "REFUSAL_MEMORY", "Agent"]
