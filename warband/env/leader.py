"""A learning squad leader's place in a warband run: one of warband's squads, led by actions.

:class:`LearnerSquad` is an :class:`~warband.agents.Agent` with the stock squad role, taking the
place of one squad of a hierarchy faction (``red-squad-1``...): it is one of the world's
observers (it hears what its team knows), takes the commander's orders into its command queue,
hears its members' status and threat reports, reports where its members are up the chain, and
orders its members with ``Order`` messages that they obey as they obey any squad. Only its
decisions differ: where the stock squad plans with ``squad.htn``, it runs the plans its
:class:`_LeaderDecider` makes, of the same primitive tasks (``!order``,
``!start_command_sequence``..., so its orders are booked, sequenced and logged as a squad's):

- **bookkeeping**, as the stock squad does it, before the learner sees the tick: the
  commander's ``lead`` order gives it its members (``!take_members``) and is reported done; a
  ``capture`` order is reported done when a member reported it captured the point; any order
  is reported failed (``decimated``) when no member is alive;
- **orders**, after the learner chose its action (:mod:`~warband.env.squad_actions`): the
  order it names goes to each member alive that does not have it yet.

Each tick it waits, as a :class:`~warband.env.match.LearnerActor` does, for the action that
``step()`` brings (see :mod:`warband.env.match`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from ..agents import Agent
from ..agents.decide import AgentPlan, Decision
from ..agents.facts import ORDER
from ..agents.role import Role
from ..agents.squad import MEMBER, MEMBER_ALIVE, REPORTED
from ..planning import FactDB, Task
from ..planning.htn.domain import HtnFunction
from ..values import Value
from ..world.vocabulary import CARRIER, OBJECT_AT
from .observations import Facts, Observation
from .squad_actions import Place, SquadOrder, decode_squad_action, member_orders
from .squad_observations import SquadObservationEncoder

if TYPE_CHECKING:
    from .match import AgentStep, _RunMatch


class LearnerSquad(Agent):
    """A squad of warband's whose orders to its members are a learner's actions.

    ``spots`` is the squad role's ``defend_spot`` function (where each member stands around a
    place), ``places`` the map's :func:`~warband.env.squad_actions.squad_places`."""

    def __init__(
        self,
        actor_id: str,
        role: Role,
        *,
        match: _RunMatch,
        spots: HtnFunction,
        places: tuple[Place, ...],
        encoder: SquadObservationEncoder,
        superior: str,
        team: str,
        seed: int,
    ) -> None:
        super().__init__(actor_id, role, superior=superior, team=team, seed=seed)
        self.match = match
        self.places = places
        self.encoder = encoder
        self.decider = _LeaderDecider(self)
        self._reuse = None  # every decision is the learner's or bookkeeping: nothing to reuse
        self._spots = spots
        self.given: SquadOrder | None = None
        """The order the squad gave its members (None: none yet)."""
        self.tasked: set[str] = set()
        """Members that have ``given``: a member downed or dead leaves this set, to be ordered
        again when it says it is alive."""
        self.arrived: set[str] = set()
        """Members that reported their arrival since ``given`` was given."""
        self.chosen: SquadOrder | None = None
        """The order of this tick's action (None: keep the one in force)."""
        self.sent_this_tick: list[tuple[str, str, tuple[Value, ...]]] = []
        """(member, task, args) of every order sent this tick: the step's ``info``."""
        self.observation: Observation = encoder.encode(FactDB(), 0, None, (), ())
        self._phase = "bookkeeping"
        self._action: asyncio.Future[int | None] | None = None

    # Agent.on_tick runs the loop in one go; a learner's tick awaits its action in the middle.
    def on_tick(self, tick: int) -> Awaitable[None] | None:  # type: ignore[override]
        return self._learning_tick(tick)

    async def _learning_tick(self, tick: int) -> None:
        for component in self.components:
            component.on_tick_start(tick)
        self._gather(tick)
        if self._reporter is not None:
            self._reporter(self, tick)
        self._check_running(tick)
        self._run_phase("bookkeeping", tick)
        self._note_members()
        self.observation = self.encoder.encode(
            self.memory.facts, tick, self.given, self.tasked, self.arrived
        )
        # As LearnerActor.on_tick: the future is resolved by step() before the loop runs again.
        future: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self._action = future
        self.match.learner_waits(self)
        action = await future
        self.sent_this_tick = []
        self.chosen = decode_squad_action(action, self.places) if action is not None else None
        self._run_phase("orders", tick)
        for component in self.components:
            component.on_tick_end(tick)

    def _run_phase(self, phase: str, tick: int) -> None:
        self._phase = phase
        self._decide(tick)
        self._execute(tick)
        # What the plan changed (members taken, an order popped) is in memory for what follows.
        self.memory.set_source("orders", self.commands.facts())
        self._run_daemons(tick)

    def _note_members(self) -> None:
        facts = self.memory.facts
        members = {m.member for m in MEMBER.all(facts.facts(MEMBER.name))}
        alive = {m.member for m in MEMBER_ALIVE.all(facts.facts(MEMBER_ALIVE.name))}
        # A member down (or gone from the squad) gets the order again once it is back.
        self.tasked &= alive & members
        self.arrived &= members
        for reported in REPORTED.all(facts.facts(REPORTED.name)):
            if reported.status == "arrived" and reported.member in self.tasked:
                self.arrived.add(reported.member)

    def give(self, action: int | None) -> None:
        """Resolve the await of the tick with this step's action (None: :data:`KEEP`)."""
        if self._action is not None and not self._action.done():
            self._action.set_result(action)

    def step_view(self) -> AgentStep:
        from .match import AgentStep

        facts = self.memory.facts
        known: Facts = [fact for name in facts.names() for fact in facts.facts(name)]
        return AgentStep(known, (), observation=self.observation)

    # --- what the decider reads -------------------------------------------------------------

    def bookkeeping(self, facts: FactDB) -> tuple[tuple[Task, ...], str]:
        """The stock squad's bookkeeping due now (its first branches), and why; () for none."""
        order = ORDER.first(facts.facts(ORDER.name))
        if order is None:
            return (), ""
        if order.task == "lead" and order.args:
            lane = order.args[1] if len(order.args) > 1 else 0
            take = Task("!take_members", (order.args[0], lane))
            return (take, Task("!clear_order")), "take the members the commander gives"
        if order.task == "capture" and order.args:
            reports = REPORTED.all(facts.facts(REPORTED.name))
            if any(r.status == "captured" and r.what == order.args[0] for r in reports):
                return (Task("!clear_order"),), "objective done: a member captured the point"
        members = facts.facts(MEMBER.name)
        if members and not facts.facts(MEMBER_ALIVE.name):
            return (Task("!fail_order", ("decimated",)),), "decimated"
        return (), ""

    def orders(self, facts: FactDB) -> tuple[tuple[Task, ...], str]:
        """The orders the learner's action asks for now, and why; () for none."""
        chosen = self.chosen
        if chosen is not None and chosen != self.given:
            self.given, self.tasked, self.arrived = chosen, set(), set()
        if self.given is None:
            return (), ""
        order = self.given
        place = self.places[order.place]
        alive = sorted(m.member for m in MEMBER_ALIVE.all(facts.facts(MEMBER_ALIVE.name)))
        tasks: list[Task] = []
        for member in alive:
            if member in self.tasked:
                continue
            spot = self._spots(facts, self.team, place.marker, member) or place.waypoint
            given = member_orders(order, place, str(spot), self._retrieval_object(facts))
            tasks += self._orders_for(member, given)
            self.tasked.add(member)
        return tuple(tasks), f"learner: {order.verb} {place.marker}"

    def _orders_for(self, member: str, given: list[tuple[str, list[Value]]]) -> list[Task]:
        tasks = [Task("!order", (member, task, *args)) for task, args in given]
        for task, args in given:
            self.sent_this_tick.append((member, task, tuple(args)))
        if len(tasks) == 1:
            return tasks
        return [
            Task("!start_command_sequence", (member,)),
            *tasks,
            Task("!end_command_sequence", (member,)),
        ]

    @staticmethod
    def _retrieval_object(facts: FactDB) -> str | None:
        lying = OBJECT_AT.first(facts.facts(OBJECT_AT.name))
        if lying is not None:
            return lying.object
        carried = CARRIER.first(facts.facts(CARRIER.name))
        return carried.object if carried is not None else None


class _LeaderDecider:
    """The decider of a :class:`LearnerSquad`: plans of bookkeeping, then of the learner's
    orders (see the module docstring). It never searches, so it never returns None."""

    def __init__(self, squad: LearnerSquad) -> None:
        self.squad = squad

    def decide(
        self, facts: FactDB, current: AgentPlan | None, *, budget: int, progress: int = 0
    ) -> Decision:
        squad = self.squad
        steps, reason = (
            squad.bookkeeping(facts) if squad._phase == "bookkeeping" else squad.orders(facts)
        )
        if not steps:
            if current is not None:
                return Decision("kept", current, "the running plan goes on")
            return Decision("none", None, "nothing to order")
        plan = AgentPlan(steps, f"{squad._phase}: {reason}")
        return Decision("new" if current is None else "replaced", plan, reason)

    def drop(self, current: AgentPlan, reason: str) -> Decision:
        return Decision("dropped", None, reason)


def leader_extra(squad: LearnerSquad) -> dict[str, Any]:
    """The ``info`` a squad leader's step adds: the orders it sent this step (``orders``) and
    the order in force (``order``: ``[verb, marker]``, None before the first)."""
    given = squad.given
    return {
        "orders": [[m, t, list(a)] for m, t, a in squad.sent_this_tick],
        "order": [given.verb, squad.places[given.place].marker] if given is not None else None,
    }
