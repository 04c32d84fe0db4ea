"""Boeda's cooperative GOAP agent: plan with others in mind, then ask them, one by one.

A :class:`CooperativeAgent` is an :class:`~warband.agents.Agent` whose decider
(:class:`CooperativeDecider`) plans each goal with a :class:`~warband.planning.CooperativeSearch`:
a solo plan when one exists, else the cheapest plan holding one cooperation step
(``Cooperate``), whose effects are the conditions another character must make hold.

The conversation component (Boeda, "Messaging Component"):

- **requester**: when its plan reaches ``Cooperate`` it asks the agents it knows (those it was
  told about, then those it has perceived), one at a time: RequestTalk -> TalkReply; on accept,
  RequestCooperation with the planner's conditions as WireConditions (``!=``, subjects and the
  ``achievable_by_any_agent`` tag included) -> CooperationReply; then it sends EndTalk. Once a
  helper agreed it waits at the cooperation step until it perceives the conditions, or a
  CooperationResult arrives. A refusal, a time-out (``talk_timeout`` ticks per request), a
  helper that leaves the run before it reports (the broker's ``_Left`` notice: it was killed on
  the way, its host went silent; a failure at the next tick), or one that neither succeeds nor
  reports within ``wait_timeout`` ticks moves it to the next known agent; with nobody left it
  cancels the goal (``cancelled`` in its final state) and its decider picks the next goal;
- **responder**: refuses a RequestTalk while busy (``busy``, another conversation, already
  helping) or when its ``affinity`` for the requester is below ``dislike_below``; on a
  RequestCooperation it checks it is still free and plans for the conditions
  (:func:`~warband.planning.answer_request`), replies, and once the requester's EndTalk comes it
  runs that plan in place of its own, then sends a CooperationResult. A conversation whose
  requester goes silent is dropped after ``talk_timeout`` ticks, so a requester that dies
  mid-conversation never leaves it stuck.

Every time-out counts ticks, so a run sends the same messages in one process and with
``--processes``. A role for this agent needs the ``Cooperate`` task: build it with
:func:`cooperative_role`.

**Walks need a precondition that still holds mid-walk.** A running plan is kept while what
remains of it, the running step included, replays from the agent's state (see
:class:`CooperativeDecider`). A walk (:class:`Walking`) changes ``at(me)`` at every waypoint it
passes, so a walk whose precondition names where it starts (``{"at(alice)": "hall-a"}``) no
longer replays one link into the walk: the plan is dropped and replanned mid-walk. Write what
must hold for the walk to make sense, not where it starts: ``ne("at(alice)", "cell-a")``
(anywhere but the cell), as ``scenarios/prison_escape.py``'s ``GoToKey`` and ``GoToExit`` do.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import ConfigurationError, DeliveryError, RequestTimeout
from ..messaging import (
    Act,
    CooperationReply,
    CooperationResult,
    EndTalk,
    RequestCooperation,
    RequestTalk,
    TalkReply,
    handles,
)
from ..messaging.catalog import WireCondition
from ..messaging.tracing import tracing_enabled
from ..planning import Brain, FactDB, Goal, GoapPlan, Task, WorldState, simulate
from ..planning.goap.cooperation import (
    COOPERATION_ACTION,
    CooperationCost,
    CooperativePlan,
    CooperativePlanning,
    CooperativeSearch,
    answer_request,
)
from ..planning.goap.state import Condition, Key
from ..values import Value
from ..world import ARRIVED, SEES
from .agent import Agent
from .component import Component
from .decide import (
    AgentPlan,
    Decider,
    Decision,
    DecisionKind,
    GoalByGoal,
    goap_tasks,
    rank_goals,
    world_state,
)
from .execute import TaskHandler, TaskStatus
from .role import FIXED_RATE, Role

# --- conditions on the wire ------------------------------------------------------------------


def to_wire(condition: Condition) -> WireCondition:
    """``condition`` as it travels in a RequestCooperation or CooperationResult."""
    return WireCondition(
        key=condition.key.name,
        subject=condition.key.subject,
        value=condition.value,
        negated=condition.negated,
        achievable_by_any_agent=condition.achievable_by_any_agent,
    )


def from_wire(condition: WireCondition) -> Condition:
    """The planner's condition for a WireCondition (inverse of :func:`to_wire`)."""
    value = condition.value
    if value is None:
        raise ConfigurationError(
            f"wire condition {condition.key}({condition.subject}) has no value (nil); a "
            "condition needs a bool, number or string value"
        )
    return Condition(
        Key(condition.key, condition.subject),
        value,
        condition.negated,
        condition.achievable_by_any_agent,
    )


# --- deciding --------------------------------------------------------------------------------


@dataclass
class GoalPlan:
    """What a cooperative agent runs for a goal: a solo plan, or one with a cooperation step."""

    goal: Goal
    plan: GoapPlan
    cooperative: CooperativePlan | None = None


@dataclass
class HelpPlan:
    """What a responder runs for a requester: its plan for the requested conditions."""

    requester: str
    conversation: str
    conditions: tuple[Condition, ...]
    plan: GoapPlan


class CooperativeDecider(GoalByGoal[CooperativeSearch]):
    """The most relevant goal with a plan, solo or cooperative (Boeda's goal manager + planner).

    Goals are ranked by relevancy (plus GoalBias, as :class:`~warband.agents.GoapDecider`);
    cancelled goals (:meth:`cancel`) are skipped. A running plan is kept while what remains of
    it replays from the agent's state; a help plan is kept until it ends. Goals are searched
    one after another, best first, with one :class:`~warband.planning.CooperativeSearch`
    each; a search longer than the decision's budget goes on at the next decision (``decide``
    returns None meanwhile), so an agent's planning per tick stays within its budget.
    """

    def __init__(
        self,
        brain: Brain,
        *,
        state: Callable[[FactDB], WorldState] | None = None,
        context: Callable[[FactDB], Any] | None = None,
        cooperation_cost: CooperationCost = 1.0,
        max_expansions: int = 20_000,
        remember: bool = True,
    ) -> None:
        super().__init__(remember=remember)
        self.brain = brain
        self._state = state or world_state
        self._context = context or (lambda facts: facts)
        self.cooperation_cost = cooperation_cost
        self.max_expansions = max_expansions
        self.cancelled: set[str] = set()

    def cancel(self, goal: str) -> None:
        """Never pursue ``goal`` again (nobody would help with it)."""
        self.cancelled.add(goal)
        self.memo.clear()  # decisions made while it could still be pursued

    def _decide(
        self, facts: FactDB, current: AgentPlan | None, budget: int, progress: int
    ) -> Decision | None:
        if current is not None and isinstance(current.source, HelpPlan):
            return Decision("kept", current, "helping until the help plan ends")
        state, context = self._state(facts), self._context(facts)
        running = current.source if current is not None else None
        if isinstance(running, GoalPlan) and running.goal.name not in self.cancelled:
            remaining = running.plan.steps[progress:]
            if simulate(state, remaining, goal=running.plan.goal, context=context).ok:
                self._reset()
                return Decision("kept", current, "the rest of the plan still replays")
        spent = 0
        for score, goal in self._ranking(facts, context):
            if goal.name in self._tried:
                continue
            planning = self._search_goal(state, goal, context, max(1, budget - spent))
            if planning is None:
                return None  # the budget ran out: the search goes on at the next decision
            spent += planning.expansions
            self._tried.add(goal.name)
            kind: DecisionKind = "replaced" if current is not None else "new"
            if planning.solo is not None:
                if not planning.solo.steps:
                    continue  # the goal already holds
                plan = GoalPlan(goal, planning.solo)
                reason = f"goal {goal.name} (score {score:g}) has a solo plan"
            elif planning.best is not None:
                best = planning.best
                plan = GoalPlan(goal, best.plan, best)
                asks = ", ".join(str(c) for c in best.request)
                reason = f"goal {goal.name} (score {score:g}) needs another agent for {asks}"
            else:
                continue
            self._reset()
            agent_plan = AgentPlan(goap_tasks(plan.plan), f"goal:{goal.name}", plan)
            tree = planning.tree.text() if planning.tree is not None else ""
            return Decision(kind, agent_plan, reason, tree, planning.expansions)
        self._reset()
        if current is not None:
            return Decision("dropped", None, "no relevant goal has a plan any more")
        return Decision("none", None, "no relevant goal has a plan")

    def _search_goal(
        self, state: WorldState, goal: Goal, context: Any, budget: int
    ) -> CooperativePlanning | None:
        """Go on with ``goal``'s search (begun now if it is not the one under way) for at most
        ``budget`` expansions: its result, or None when the budget ran out first."""
        if self._search is None or self._searching is not goal:
            self._search = CooperativeSearch(
                state,
                goal,
                self.brain.actions,
                context,
                cooperation_cost=self.cooperation_cost,
                max_plans=1,
                # The tree (Boeda's, with its cooperable nodes) goes into the agent.plan event
                # for `warband explain`; only a traced run writes it, so only one records it.
                record_tree=tracing_enabled(),
                max_expansions=self.max_expansions,
            )
            self._searching = goal
        self._search.step(budget)
        planning = self._search.result
        if planning is not None:
            self._search, self._searching = None, None
        return planning

    def _ranking(self, facts: FactDB, context: Any) -> list[tuple[float, Goal]]:
        goals = [goal for goal in self.brain.goals if goal.name not in self.cancelled]
        return rank_goals(goals, facts, context)


# --- the agent -------------------------------------------------------------------------------


@dataclass
class _Asking:
    """The requester's side of one cooperation: whom it tried, who helps, since when."""

    goal: str
    request: tuple[Condition, ...]
    tried: list[str] = field(default_factory=list)
    helper: str | None = None
    waiting_since: int = 0
    result: CooperationResult | None = None
    talking: bool = False
    helper_left: bool = False
    """The helper left the run (the broker's notice) before it reported: a failure at once."""


@dataclass
class _Talk:
    """The responder's side of an open conversation."""

    peer: str
    conversation: str
    since: int
    agreed: HelpPlan | None = None


class Conversation(Component):
    """Boeda's conversation component (module doc): the requester's and the responder's side.

    ``acquaintances`` are the agents it knows at the start, asked first and in that order;
    agents it perceives later (``sees`` facts) are asked after them. ``affinity`` maps agent ids
    to how much it likes them (default ``neutral_affinity``); it refuses to talk to those below
    ``dislike_below``. ``busy`` makes it refuse every conversation. The agent's decider must be
    a :class:`CooperativeDecider` (a role made by :func:`cooperative_role` has one).
    """

    def __init__(
        self,
        *,
        acquaintances: Sequence[str] = (),
        affinity: Mapping[str, float] | None = None,
        neutral_affinity: float = 0.5,
        dislike_below: float = 0.3,
        busy: bool = False,
        talk_timeout: int = 6,
        wait_timeout: int = 40,
    ) -> None:
        if talk_timeout < 1 or wait_timeout < 1:
            raise ConfigurationError(
                f"conversation: talk_timeout and wait_timeout must be at least 1 tick, got "
                f"{talk_timeout} and {wait_timeout}"
            )
        self.acquaintances = tuple(acquaintances)
        self.known: list[str] = []
        self.affinity = dict(affinity or {})
        self.neutral_affinity = neutral_affinity
        self.dislike_below = dislike_below
        self.busy = busy
        self.talk_timeout = talk_timeout
        self.wait_timeout = wait_timeout
        self.helped_by: list[str] = []
        self.refusals: list[tuple[str, str]] = []
        self.cancelled: list[str] = []
        self.plans_chosen: list[str] = []
        self.helped: list[str] = []
        self.refused: list[tuple[str, str]] = []
        self._asking: _Asking | None = None
        self._talk: _Talk | None = None
        self._help: HelpPlan | None = None
        self._help_before: HelpPlan | None = None

    def attach(self, agent: Agent) -> None:
        super().attach(agent)
        if not isinstance(agent.decider, CooperativeDecider):
            raise ConfigurationError(
                f"cooperative agent {agent.id!r}: role {agent.role.name!r} does not decide "
                "with a CooperativeDecider; build it with cooperative_role(name, brain, tasks)"
            )
        self.known = [peer for peer in self.acquaintances if peer != agent.id]

    @property
    def decider(self) -> CooperativeDecider:
        decider = self.agent.decider
        assert isinstance(decider, CooperativeDecider), "checked when attached"
        return decider

    # --- the loop --------------------------------------------------------------------------

    def on_tick_start(self, tick: int) -> None:
        self._perceive_peers()
        self._check_cooperation(tick)
        self._check_talk(tick)
        self._help_before = self._help

    def on_tick_end(self, tick: int) -> None:
        self._check_help_done(self._help_before)

    def _perceive_peers(self) -> None:
        for seen in SEES.all(self.agent.memory.facts.facts(SEES.name)):
            if seen.id != self.agent.id and seen.id not in self.known:
                self.known.append(seen.id)

    def on_decision(self, decision: Decision) -> None:
        if decision.kind in ("new", "replaced", "dropped"):
            self._asking = None  # a goal given up or replaced ends its cooperation too
        if decision.kind in ("new", "replaced") and decision.plan is not None:
            self.plans_chosen.append(
                f"{decision.plan.label}: {' '.join(task.name for task in decision.plan.steps)}"
            )

    # --- requester -------------------------------------------------------------------------

    def start_cooperation(self, task: Task) -> TaskStatus:
        """The ``Cooperate`` task: ask the known agents, one by one, for the plan's request."""
        plan = self.agent.plan.source if self.agent.plan is not None else None
        if not isinstance(plan, GoalPlan) or plan.cooperative is None:
            return self.agent.fail_task(f"{task} runs only in a plan with a cooperation step")
        request = plan.cooperative.request
        if self._holds(request):
            return "done"
        self._asking = _Asking(plan.goal.name, request)
        self.agent.start_task(self._ask_next(self._asking))
        return "running"

    async def _ask_next(self, asking: _Asking) -> None:
        """Ask the agents not tried yet, one at a time, until one agrees or none is left."""
        asking.talking = True
        try:
            for peer in list(self.known):
                if peer in asking.tried or self._asking is not asking:
                    continue
                asking.tried.append(peer)
                refusal = await self._ask(peer, asking)
                if refusal is None:
                    asking.helper = peer
                    asking.waiting_since = self.agent.tick
                    self.agent.log.info(
                        "cooperation.agreed", helper=peer, goal=asking.goal, tick=self.agent.tick
                    )
                    return
                self.refusals.append((peer, refusal))
                self.agent.log.info(
                    "cooperation.refused",
                    peer=peer,
                    reason=refusal,
                    goal=asking.goal,
                    tick=self.agent.tick,
                )
        finally:
            asking.talking = False

    async def _ask(self, peer: str, asking: _Asking) -> str | None:
        """One conversation with ``peer``: None when it agreed, else why not."""
        try:
            reply = await self.agent.request(
                RequestTalk(recipient=peer, topic="cooperation"), timeout=self.talk_timeout
            )
            if not isinstance(reply, TalkReply) or not reply.accepted:
                return getattr(reply, "reason", "") or "refused to talk"
            conversation = reply.conversation
            conditions = [to_wire(condition) for condition in asking.request]
            answer = await self.agent.request(
                RequestCooperation(
                    recipient=peer, conversation=conversation, conditions=conditions
                ),
                timeout=self.talk_timeout,
            )
            accepted = isinstance(answer, CooperationReply) and answer.accepted
            why = "agreed" if accepted else "refused"
            self.agent.send(EndTalk(recipient=peer, conversation=conversation, reason=why))
            if not accepted:
                return getattr(answer, "reason", "") or "cannot help"
            return None
        except RequestTimeout:
            return "timeout"
        except DeliveryError as error:
            return f"unreachable: {error}"

    @handles(CooperationResult)
    def on_cooperation_result(self, result: CooperationResult) -> None:
        asking = self._asking
        if asking is not None and result.sender == asking.helper:
            asking.result = result

    def on_peer_left(self, agent: str, reason: str) -> None:
        """A helper that leaves the run (killed on its way, its host gone) has failed: the
        next tick asks the next agent, without waiting out ``wait_timeout``. (The requester
        watches it: it awaited its replies.) Why it left is logged, not kept in ``refusals``:
        a process killed is "disconnected" where an actor stopped in one process is "left",
        and the outcome must not depend on which."""
        asking = self._asking
        if asking is not None and asking.helper == agent and asking.result is None:
            asking.helper_left = True
            self.agent.log.info(
                "cooperation.helper_left", helper=agent, reason=reason, tick=self.agent.tick
            )

    def _check_cooperation(self, tick: int) -> None:
        """At the cooperation step: done when the conditions hold or the helper says so;
        the next agent when the helper failed or went silent; the goal cancelled when nobody
        is left."""
        asking = self._asking
        if asking is None or asking.talking:
            return
        if asking.helper is not None:
            result = asking.result
            if self._holds(asking.request) or (result is not None and result.success):
                if not self._holds(asking.request):
                    self._believe(asking.request)
                self.helped_by.append(asking.helper)
                self._asking = None
                self.agent.finish_task()
                return
            waited = tick - asking.waiting_since
            if result is None and not asking.helper_left and waited < self.wait_timeout:
                return
            if result is not None:
                why = result.reason
            else:
                why = "left the run" if asking.helper_left else "no result in time"
            self.refusals.append((asking.helper, f"failed: {why}"))
            self.agent.log.info("cooperation.failed", helper=asking.helper, reason=why, tick=tick)
            asking.helper, asking.result, asking.helper_left = None, None, False
        if any(peer not in asking.tried for peer in self.known):
            self.agent.start_task(self._ask_next(asking))
            return
        self.agent.log.info(
            "cooperation.cancelled", goal=asking.goal, tried=asking.tried, tick=tick
        )
        self.cancelled.append(asking.goal)
        self.decider.cancel(asking.goal)
        self._asking = None
        self.agent.fail_running(f"nobody helps with goal {asking.goal}; it is cancelled")

    def _believe(self, conditions: Iterable[Condition]) -> None:
        """Take the helper's word for conditions we cannot perceive: remember them as facts
        (``key(subject) == value`` is the fact ``(key, subject, value)``), so the rest of the
        plan replays."""
        for condition in conditions:
            if condition.negated:
                continue  # "anything but v" gives no fact to remember
            key = condition.key
            if key.subject is None:
                self.agent.memory.remember(key.name, condition.value)
            else:
                self.agent.memory.remember(key.name, key.subject, condition.value)

    def _holds(self, conditions: Iterable[Condition]) -> bool:
        state = world_state(self.agent.memory.facts)
        return all(condition.holds(state) for condition in conditions)

    # --- responder -------------------------------------------------------------------------

    @handles(RequestTalk)
    def on_request_talk(self, request: RequestTalk) -> None:
        refusal = self._why_not_talk(request.sender)
        if refusal is None and request.conversation is not None:
            self._talk = _Talk(request.sender, request.conversation, self.agent.tick)
        else:
            self.refused.append((request.sender, refusal or "no conversation id"))
        self.agent.reply(request, TalkReply(accepted=refusal is None, reason=refusal or ""))

    def _why_not_talk(self, peer: str) -> str | None:
        if self.busy or self._talk is not None or self._help is not None:
            return "busy"
        if self._asking is not None:
            return "busy with its own request"
        if self.affinity.get(peer, self.neutral_affinity) < self.dislike_below:
            return f"dislikes {peer}"
        return None

    @handles(RequestCooperation)
    def on_request_cooperation(self, request: RequestCooperation) -> None:
        talk = self._talk
        if talk is None or talk.conversation != request.conversation:
            self.agent.reply(
                request, CooperationReply(accepted=False, reason="no conversation open")
            )
            return
        conditions = tuple(from_wire(condition) for condition in request.conditions)
        answer = answer_request(
            conditions,
            world_state(self.agent.memory.facts),
            self.decider.brain.actions,
            self.agent.memory.facts,
            max_expansions=self.agent.role.planning_budget,
        )
        if answer.plan is None:
            self.agent.reply(request, CooperationReply(accepted=False, reason="cannot plan for it"))
            return
        talk.agreed = HelpPlan(talk.peer, talk.conversation, conditions, answer.plan)
        self.agent.reply(request, CooperationReply(accepted=True, cost=answer.plan.cost))

    @handles(EndTalk)
    def on_end_talk(self, end: EndTalk) -> None:
        talk = self._talk
        if talk is None or talk.conversation != end.conversation:
            return
        self._talk = None
        if talk.agreed is not None and end.reason == "agreed":
            self._start_helping(talk.agreed)

    def _check_talk(self, tick: int) -> None:
        talk = self._talk
        if talk is not None and tick - talk.since > 2 * self.talk_timeout:
            # The requester went silent (it died, or its EndTalk was lost): free ourselves.
            self.agent.log.info(
                "cooperation.abandoned",
                peer=talk.peer,
                conversation=talk.conversation,
                tick=tick,
            )
            self._talk = None

    def _start_helping(self, help_plan: HelpPlan) -> None:
        self._help = help_plan
        self.helped.append(help_plan.requester)
        plan = AgentPlan(goap_tasks(help_plan.plan), f"help:{help_plan.requester}", help_plan)
        kind: DecisionKind = "replaced" if self.agent.plan is not None else "new"
        reason = f"helping {help_plan.requester}"
        self.agent.adopt(Decision(kind, plan, reason))

    def _check_help_done(self, help_before: HelpPlan | None) -> None:
        """Once the help plan has ended, tell the requester how it went."""
        help_plan = self._help
        if help_plan is None or help_plan is not help_before:
            return
        running = self.agent.plan.source if self.agent.plan is not None else None
        if running is help_plan:
            return
        self._help = None
        success = self.agent.step >= len(help_plan.plan.steps) and not self.agent.task_failure
        self.agent.send(
            CooperationResult(
                recipient=help_plan.requester,
                conversation=help_plan.conversation,
                success=success,
                conditions=[to_wire(condition) for condition in help_plan.conditions],
                reason="" if success else self.agent.task_failure or "the help plan was dropped",
            )
        )

    def final_state(self) -> dict[str, Any]:
        return {
            "helped_by": list(self.helped_by),
            "refusals": [list(entry) for entry in self.refusals],
            "cancelled": list(self.cancelled),
            "plans_chosen": list(self.plans_chosen),
            "helped": list(self.helped),
            "refused": [list(entry) for entry in self.refused],
        }


class Walking(Component):
    """Walks the agent along a route, one link per move (a task that lasts until it arrives at
    the last waypoint): :meth:`walk`. A new, replaced or dropped plan ends the walk."""

    def __init__(self) -> None:
        self.route: list[str] = []
        """The waypoints still to walk to, the next first."""

    def walk(self, task: Task, route: Sequence[str]) -> TaskStatus:
        """Run ``task`` as a walk along ``route`` (waypoints after the current one), one link
        per move; done on arriving at the last."""
        agent = self.agent
        if not route:
            return "done"
        self.route = list(route)
        agent.send(Act(recipient=agent.world, verb="move", args={"waypoint": self.route[0]}))
        return agent.hold_task(task)

    def on_tick_start(self, tick: int) -> None:
        agent = self.agent
        if not self.route or agent.running_task is None:
            return
        if any(e[:2] == (ARRIVED.name, self.route[0]) for e in agent.events):
            self.route.pop(0)
            if not self.route:
                agent.finish_task()
                return
            agent.keep_running()
            agent.send(Act(recipient=agent.world, verb="move", args={"waypoint": self.route[0]}))

    def on_decision(self, decision: Decision) -> None:
        if decision.kind in ("new", "replaced", "dropped"):
            self.route = []


def cooperate(agent: Agent, task: Task) -> TaskStatus:
    """The ``Cooperate`` task: the agent's :class:`Conversation` asks for the plan's request."""
    conversation = agent.find_component(Conversation)
    if conversation is None:
        return agent.fail_task(
            f"{task} needs a Conversation component; the role {agent.role.name!r} of "
            f"{agent.id} has none (build it with cooperative_role)"
        )
    return conversation.start_cooperation(task)


def cooperative_role(
    name: str,
    brain: Brain,
    tasks: Mapping[str, TaskHandler],
    *,
    cooperation_cost: CooperationCost = 1.0,
    acquaintances: Sequence[str] = (),
    affinity: Mapping[str, float] | None = None,
    neutral_affinity: float = 0.5,
    dislike_below: float = 0.3,
    busy: bool = False,
    talk_timeout: int = 6,
    wait_timeout: int = 40,
    **options: Any,
) -> Role:
    """A role for Boeda's cooperative character: ``brain``'s actions run by ``tasks``, the
    cooperation step by :func:`cooperate`, decided by a :class:`CooperativeDecider`, with the
    :class:`Walking` and :class:`Conversation` components (the keywords of the latter are its
    settings: a role per character when they differ). ``options`` are the other fields of
    :class:`Role`."""
    if not isinstance(brain, Brain):
        raise ConfigurationError(
            f"cooperative role {name!r}: its domain must be a GOAP Brain, got "
            f"{type(brain).__name__}"
        )
    conversation = functools.partial(
        Conversation,
        acquaintances=acquaintances,
        affinity=affinity,
        neutral_affinity=neutral_affinity,
        dislike_below=dislike_below,
        busy=busy,
        talk_timeout=talk_timeout,
        wait_timeout=wait_timeout,
    )
    conversation()  # its settings are checked now, not when the first agent is made
    components = [*options.pop("components", ()), Walking, conversation]
    return Role(
        name,
        brain,
        tasks={**tasks, COOPERATION_ACTION: cooperate},
        components=components,
        make_decider=_decider_costing(cooperation_cost),
        **{"replan_every": FIXED_RATE, **options},
    )


def _decider_costing(cost: CooperationCost) -> Callable[[Role, Mapping[str, Value]], Decider]:
    def make(role: Role, constants: Mapping[str, Value]) -> Decider:
        assert isinstance(role.domain, Brain), "cooperative_role checked it"
        return CooperativeDecider(
            role.domain,
            cooperation_cost=cost,
            **{"remember": role.replan_every > 1, **role.decider_options},
        )

    return make


CONVERSATION_SETTINGS = (
    "acquaintances",
    "affinity",
    "neutral_affinity",
    "dislike_below",
    "busy",
    "talk_timeout",
    "wait_timeout",
)
"""The keywords of :class:`Conversation` (and of :func:`cooperative_role`)."""


def CooperativeAgent(  # was a class; now an Agent of a cooperative role
    actor_id: str, role: Role, *, cooperation_cost: CooperationCost = 1.0, **options: Any
) -> Agent:
    """An :class:`Agent` of ``role`` (made by :func:`cooperative_role`) with the conversation
    settings among ``options`` (:data:`CONVERSATION_SETTINGS`) and ``cooperation_cost`` in
    place of the role's; the other ``options`` go to :class:`Agent`."""
    if not isinstance(role.domain, Brain):
        raise ConfigurationError(
            f"cooperative agent {actor_id!r}: role {role.name!r} has an HTN domain; "
            "give it a GOAP Brain (cooperative_role(name, brain, tasks))"
        )
    settings = {key: options.pop(key) for key in CONVERSATION_SETTINGS if key in options}
    own = [c for c in role.components if getattr(c, "func", c) not in (Walking, Conversation)]
    settled = cooperative_role(
        role.name,
        role.domain,
        {k: v for k, v in role.tasks.items() if k != COOPERATION_ACTION},
        cooperation_cost=cooperation_cost,
        **settings,
        **{**_role_options(role), "components": own},
    )
    return Agent(actor_id, settled, **options)


def _role_options(role: Role) -> dict[str, Any]:
    """The fields of ``role`` that :func:`cooperative_role` passes through as they are."""
    skip = {"name", "domain", "tasks", "components", "make_decider"}
    return {f.name: getattr(role, f.name) for f in dataclasses.fields(role) if f.name not in skip}


__all__ = [
    "Conversation",
    "CooperativeAgent",
    "CooperativeDecider",
    "GoalPlan",
    "HelpPlan",
    "Walking",
    "cooperate",
    "cooperative_role",
    "from_wire",
    "to_wire",
    "world_state",
]
