"""The world actor: the run's clock, owning the simulation every agent lives in.

As DESIGN.md puts it, the world ticks. :class:`WorldActor` is a :class:`~warband.messaging.Clock`
that also owns a world model (:class:`WorldModel`, normally a
:class:`~warband.world.simulation.World`):

- **Act** messages are the agents' virtual controller. Each is validated by the model with the
  *sender's* id (the broker guarantees it is the real one, so an agent cannot act for another)
  and answered with an :class:`~warband.messaging.ActResult` saying accepted or why not.
- After every tick, once every agent has reported ``TickDone`` and the world has handled the
  tick's Acts in (sender, seq) order, the world steps the simulation and sends each agent one
  :class:`~warband.messaging.Percept`: the facts its sensors allow and the game events of that
  step. Before tick 1 every agent gets its first Percept, so it can plan in tick 1.
- **Delta percepts**: an agent that says so when it joins (``_Ready.percept_deltas``, as every
  warband agent does) is sent what changed since its last Percept (``since``, ``removed``,
  :mod:`~warband.world._deltas`), and a full Percept after every ``_Ready`` (a join, a
  restart), after it left (a crash) or a Percept to it was undeliverable, on a
  :class:`~warband.messaging.PerceptRequest`, and every ``full_percepts_every`` ticks. Anyone
  else (a learner, an outside client) gets full Percepts, as before.
- When the model reports an outcome (a team won, time ran out), the run ends after that tick
  and the outcome is the world's ``final_state()``, which scenario judges read from
  ``result.final_states["world"]``.
- With ``--log DIR`` the world writes a ``world.snapshot`` event after every step (keys ``tick``
  and ``snapshot``); ``warband render LOG_DIR --tick N`` draws them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, cast

from ..messaging import Act, ActResult, Clock, Message, Percept, PerceptRequest, handles
from ..messaging.catalog import Fact as WireFact
from ..messaging.catalog import _Left, _Ready, _Undeliverable
from ..messaging.tracing import log_every_tick, logging_to_files
from ..values import Value
from ._deltas import PerceptDeltas
from ._snapshot import SNAPSHOT_EVENT as SNAPSHOT_EVENT
from .vocabulary import CAPTURED, KILLED

WORLD_ID = "world"
"""The world actor's id (and so the run's clock id) in scenarios that declare a world."""


class ActVerdict(Protocol):
    """What the world model answers to one act (:class:`warband.world.simulation.ActVerdict`)."""

    @property
    def accepted(self) -> bool:
        """True when the act was taken."""
        ...

    @property
    def reason(self) -> str:
        """Why it was rejected, or empty."""
        ...


class WorldModel(Protocol):
    """What the world actor needs from a simulation (``warband.world.World`` provides it).

    A small scenario world may subclass it to inherit the defaults of the three methods most
    such worlds do not need: no events, no score, no team facts.
    """

    def has_agent(self, agent_id: str) -> bool:
        """True when ``agent_id`` has a body in this world."""
        ...

    def submit(self, agent_id: str, verb: str, args: Mapping[str, Value]) -> ActVerdict:
        """Validate and queue one act of ``agent_id`` for the next step."""
        ...

    def step(self) -> Any:
        """Advance one tick; returns the step's report (its events are sent to the agents)."""
        ...

    def percepts_for(self, agent_id: str) -> Sequence[Sequence[Value]]:
        """The facts ``agent_id``'s sensors allow now."""
        ...

    def events_for(self, agent_id: str, report: Any) -> Sequence[Sequence[Value]]:
        """The events of ``report`` that ``agent_id`` should know."""
        return []

    def outcome(self) -> Mapping[str, Any] | None:
        """None while the game runs, else who won and why."""
        ...

    def score(self) -> Mapping[str, int]:
        """Each team's points so far (empty without a game mode)."""
        return {}

    def team_facts(self, team: str) -> Sequence[Sequence[Value]]:
        """What every member of ``team`` knows, for observers without a body (commanders)."""
        return []

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain data, for logs and the renderer."""
        ...


class WorldActor(Clock):
    """The clock of a run with a world: steps ``model`` every tick and talks to the agents."""

    def __init__(
        self,
        model: WorldModel,
        actor_id: str = WORLD_ID,
        *,
        participants: Iterable[str],
        ticks: int,
        seed: int = 0,
        tick_interval: float = 0.05,
        tick_timeout: float = 10.0,
        observers: Mapping[str, str] | None = None,
        full_percepts_every: int = 50,
        **clock_options: Any,
    ) -> None:
        """``full_percepts_every``: ticks between two full Percepts to an agent that takes
        deltas. ``clock_options`` go to :class:`~warband.messaging.clock.Clock` as they are."""
        super().__init__(
            actor_id,
            participants=participants,
            ticks=ticks,
            seed=seed,
            tick_interval=tick_interval,
            tick_timeout=tick_timeout,
            **clock_options,
        )
        self.model = model
        self.observers = dict(observers or {})
        """Participants without a body (a team's commander) and their team: each tick they get
        a Percept of what their team knows (:meth:`WorldModel.team_facts`)."""
        self.acts_accepted = 0
        self.acts_rejected = 0
        self.kills: dict[str, int] = {}
        """Characters each team downed (``killed`` events, by the killer's team)."""
        self.captures: dict[str, int] = {}
        """Capture points and TSPs each team took (``captured`` events)."""
        self._deltas = PerceptDeltas(full_percepts_every)
        self._delta_takers: set[str] = set()
        """Participants that said in ``_Ready`` that they apply delta percepts."""

    @handles(Act)
    def on_act(self, act: Act) -> None:
        verdict = self.model.submit(act.sender, act.verb, act.args)
        if verdict.accepted:
            self.acts_accepted += 1
        else:
            self.acts_rejected += 1
            self.log.info("act.rejected", peer=act.sender, verb=act.verb, reason=verdict.reason)
        self.reply(act, ActResult(accepted=verdict.accepted, reason=verdict.reason))

    @handles(PerceptRequest)
    def on_percept_request(self, request: PerceptRequest) -> None:
        self.log.info("percept.full_requested", peer=request.sender)
        self._deltas.forget(request.sender)

    async def _handle_immediate(self, message: Message) -> None:
        # A _Ready is a join or a comeback: whatever the agent held before is gone, so its next
        # Percept is a full one; it says whether it takes deltas after that. A peer that left
        # (a crash its supervisor may restart) comes back with an empty memory: full as well.
        if isinstance(message, _Ready):
            self._deltas.forget(message.sender)
            if message.percept_deltas:
                self._delta_takers.add(message.sender)
            else:
                self._delta_takers.discard(message.sender)
        elif isinstance(message, _Left):
            self._deltas.forget(message.agent)
        await super()._handle_immediate(message)

    def on_undeliverable(self, notice: _Undeliverable) -> None:
        # A Percept that did not arrive is no base for a delta: the next one is full.
        if notice.message_type == Percept.__name__:
            self._deltas.forget(notice.target)

    async def before_ticks(self) -> None:
        self._send_percepts(report=None)
        self._log_snapshot(0)

    async def advance(self, tick: int) -> None:
        report = self.model.step()
        self._count(getattr(report, "events", ()))
        self._send_percepts(report)
        self._log_snapshot(tick)
        outcome = self.model.outcome()
        if outcome is not None:
            self.end_run(f"game over: {outcome.get('reason', 'decided')}")

    def _send_percepts(self, report: Any) -> None:
        # Every observer of a team is told the same facts: asked for once per team, and given
        # to the deltas as one tuple, which they encode and diff once (PerceptDeltas).
        team_facts: dict[str, tuple[Sequence[Value], ...]] = {}
        for agent in sorted(self.everyone):
            if not self.model.has_agent(agent):
                team = self.observers.get(agent)
                if team is not None:
                    facts = team_facts.get(team)
                    if facts is None:
                        facts = team_facts[team] = tuple(self.model.team_facts(team))
                    self._send_percept(agent, facts, ())
                continue
            events = self.model.events_for(agent, report) if report is not None else ()
            self._send_percept(agent, self.model.percepts_for(agent), events)

    def _send_percept(
        self,
        agent: str,
        facts: Sequence[Sequence[Value]],
        events: Sequence[Sequence[Value]],
    ) -> None:
        wire_events = _wire(events)
        if agent not in self._delta_takers:
            self.send(Percept(recipient=agent, facts=_wire(facts), events=wire_events))
            return
        change = self._deltas.next(agent, facts, self.tick)
        self.send(
            Percept(
                recipient=agent,
                facts=_wire(change.facts),
                events=wire_events,
                since=change.since,
                removed=_wire(change.removed),
            )
        )

    def _count(self, events: Sequence[Sequence[Value]]) -> None:
        for event in events:
            if KILLED.matches(event):
                team = KILLED.read(event).killer_team
                self.kills[team] = self.kills.get(team, 0) + 1
            elif CAPTURED.matches(event):
                team = CAPTURED.read(event).team
                self.captures[team] = self.captures.get(team, 0) + 1

    def _log_snapshot(self, tick: int) -> None:
        if logging_to_files():
            log_every_tick(self.log, SNAPSHOT_EVENT, tick=tick, snapshot=self.model.snapshot())

    def final_state(self) -> dict[str, Any]:
        outcome = self.model.outcome()
        return {
            "ticks": self.tick,
            "acts_accepted": self.acts_accepted,
            "acts_rejected": self.acts_rejected,
            "outcome": dict(outcome) if outcome is not None else None,
            "scores": dict(self.model.score()),
            "kills": dict(sorted(self.kills.items())),
            "captures": dict(sorted(self.captures.items())),
        }


def _wire(facts: Sequence[Sequence[Value]]) -> list[WireFact]:
    """``facts`` for a Percept, each as it is: MessagePack writes a tuple and a list alike (an
    array, PROTOCOL.md), so the Percept's bytes are those of lists without copying every fact
    into one (only a listener to this process's sends sees the tuples)."""
    return cast("list[WireFact]", list(facts))
