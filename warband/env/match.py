"""A Warzone match stepped one tick at a time: the engine under both environments.

How a learning agent stays a participant of a real warband run while ``step()`` is synchronous
(``backend="run"``, the default):

- The match is a run like ``warband run scenarios/warzone.py``: the world actor (the run's
  lockstep clock, stepping a :class:`~warband.world.World`), a broker, warband's own agents for
  every bot that is not learning (each faction ``hierarchy`` or ``freelance``), one
  :class:`LearnerActor` per learning bot and one :class:`~warband.env.leader.LearnerSquad` per
  learning squad leader (in the place of that squad), all on an event loop that the match owns.
  The broker routes on that loop too (``broker_on_loop``): the run is paused between steps, and
  a routing thread would only take the interpreter from the loop at every frame.
- A learner is an ordinary actor of the run: it registers with the broker, gets the world's
  Percept and the clock's Tick like any bot, and acts by sending the world ``Act`` messages,
  which the world checks with the sender's id and answers with an ``ActResult``, as any bot's.
- The loop runs only inside :meth:`Match.reset` and :meth:`Match.step`. In its ``on_tick`` a
  learner hands its Percept to the match and awaits its action; the loop runs until every
  learner waits so (or the world ended the run), and then the call returns. ``step(actions)``
  resolves those awaits, so the learners send their acts and report ``TickDone``; the world
  steps once all participants did, and the loop runs again until the learners wait in the next
  tick. One ``step()`` is one lockstep tick. Between calls nothing runs: the run is frozen, so
  the actors ping the broker rarely (:data:`PING_INTERVAL`) and the clock's tick timeout is
  long, so that a learner thinking for minutes is not taken for a dead one.
- The run is lockstep, so with the same seed and actions a match plays the same way
  (``parallel_seed_test``).
- Python's garbage collector runs less often from ``reset()`` to ``close()``, as in every
  run's processes (:func:`warband.messaging.event_loop.fewer_collections`: the youngest
  generation collected every 50,000 objects instead of 700). Raised only inside each call, the
  threshold came back to 700 at the end of every step with a step's worth of new objects
  pending, so every step ended in a collection, which promoted what the next step would have
  freed into the older generations, walked again by their collections: about a tenth of a
  step's CPU time against warband's bots. The process's thresholds come back at ``close()``
  (of the last match open, when there are several: the holders are counted).

``backend="world"`` steps the :class:`~warband.world.World` directly, with no run and no
warband agents: every bot must then be learning (the "world alone" figure of
``warband bench env``). The learners' acts go to the same ``World.submit`` check.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final, Literal

from ..agents import Agent
from ..agents.factions import (
    CONTROLS,
    Control,
    check_map,
    commander_id,
    faction_actors,
    squad_ids,
)
from ..agents.objectives import MapMarkers
from ..agents.squad import squad_functions
from ..exceptions import ConfigurationError
from ..launcher import run_actors_in_process
from ..messaging import Act, Actor, ActResult, Percept, event_loop, handles
from ..planning.htn.domain import HtnFunction
from ..world import MODES, Map, World, load_map
from ..world.actor import WORLD_ID, WorldActor
from .actions import Act as ActTuple
from .leader import LearnerSquad, leader_extra
from .observations import Facts, Observation
from .squad_actions import squad_places
from .squad_observations import SquadObservationEncoder

Backend = Literal["run", "world"]
BACKENDS: Final[tuple[Backend, ...]] = ("run", "world")
TEAMS: Final = ("red", "blue")
CLASSES: Final = ("assault", "medic", "engineer", "tactician")
"""Bot classes by roster index, as ``scenarios/warzone.py`` gives them."""

PING_INTERVAL: Final = 3600.0
"""Seconds between an actor's broker pings in a match: the run is frozen between steps."""
SHUTDOWN_TIMEOUT: Final = 30.0
"""Seconds a match in play gets to end cleanly when the environment resets or closes."""
TICK_TIMEOUT: Final = 10.0 * 24 * 3600
"""The clock's wait for a TickDone: a learner's step may come any time later."""


@dataclass(frozen=True)
class MatchConfig:
    """What match to play. Raises :class:`ConfigurationError` naming a bad field."""

    bots: int = 6
    """Bots per team (1..12), ids ``red-1``... and ``blue-1``... (classes as in Warzone)."""
    learners: tuple[str, ...] = ("red-1",)
    """The learning bots' ids; every other bot is warband's."""
    red: Control = "freelance"
    """How warband leads red's other bots: ``hierarchy`` (commander, squads) or ``freelance``."""
    blue: Control = "freelance"
    mode: str = "capture_and_hold"
    time_limit: int = 400
    """Ticks until the mode's time limit (the match's last step)."""
    map: str = "warzone"
    """A bundled map name or a path to a TOML map."""
    corridors: bool = True
    backend: Backend = "run"
    leaders: tuple[str, ...] = ()
    """Learning squad leaders: squad ids (``red-squad-1``...) of a ``hierarchy`` team, each
    taking the place of that squad of warband's (:mod:`warband.env.leader`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.bots, int) or not 1 <= self.bots <= 12:
            raise ConfigurationError(f"bots must be 1..12 per team, got {self.bots!r}")
        if self.mode not in MODES:
            raise ConfigurationError(
                f"mode={self.mode!r}: unknown game mode; known modes: {', '.join(MODES)}"
            )
        for team in TEAMS:
            control = getattr(self, team)
            if control not in CONTROLS:
                raise ConfigurationError(
                    f"{team}={control!r}: a team's other bots are led by one of "
                    f"{', '.join(CONTROLS)}"
                )
        if not isinstance(self.time_limit, int) or self.time_limit < 1:
            raise ConfigurationError(f"time_limit must be at least 1 tick, got {self.time_limit!r}")
        if self.backend not in BACKENDS:
            raise ConfigurationError(
                f"backend={self.backend!r}: say 'run' (a warband run) or 'world' (the world alone)"
            )
        self._check_learners()

    def _check_learners(self) -> None:
        if isinstance(self.learners, str) or (not self.learners and not self.leaders):
            raise ConfigurationError(
                f"learners must be a non-empty list of bot ids, got {self.learners!r}"
            )
        self._check_leaders()
        unknown = sorted(set(self.learners) - set(self.bot_ids()))
        if unknown:
            raise ConfigurationError(
                f"learners: {', '.join(unknown)} is no bot of a {self.bots}-a-side match; "
                f"bots are red-1..red-{self.bots} and blue-1..blue-{self.bots}"
            )
        if len(set(self.learners)) != len(self.learners):
            raise ConfigurationError(f"learners name a bot twice: {list(self.learners)}")
        if self.backend == "world" and set(self.learners) != set(self.bot_ids()):
            raise ConfigurationError(
                "backend='world' runs no warband agents: every bot must be a learner "
                "(learners=all_bots(bots)), or use backend='run'"
            )

    def _check_leaders(self) -> None:
        if isinstance(self.leaders, str):
            raise ConfigurationError(f"leaders must be a list of squad ids, got {self.leaders!r}")
        for leader in self.leaders:
            team = leader.split("-squad-", 1)[0] if "-squad-" in leader else ""
            squads = squad_ids(team, self.bots) if team in TEAMS else []
            if leader not in squads:
                known = [s for t in TEAMS for s in squad_ids(t, self.bots)]
                raise ConfigurationError(
                    f"leaders: {leader!r} is no squad of a {self.bots}-a-side match; its squads "
                    f"are {', '.join(known)}"
                )
            if getattr(self, team) != "hierarchy":
                raise ConfigurationError(
                    f"leaders: {leader!r} leads a squad of {team}, whose bots are "
                    f"{getattr(self, team)}: say {team}='hierarchy' (a squad has a commander)"
                )
        if len(set(self.leaders)) != len(self.leaders):
            raise ConfigurationError(f"leaders name a squad twice: {list(self.leaders)}")
        if self.leaders and self.backend != "run":
            raise ConfigurationError(
                "a learning squad leader leads warband's bots: it needs backend='run'"
            )

    def bot_ids(self, team: str | None = None) -> list[str]:
        """Every bot id of ``team`` (both teams when None), in roster order."""
        teams = TEAMS if team is None else (team,)
        return [f"{t}-{i}" for t in teams for i in range(1, self.bots + 1)]

    def team_of(self, agent: str) -> str:
        """The team of a bot or squad id."""
        return agent.split("-squad-", 1)[0] if "-squad-" in agent else agent.rsplit("-", 1)[0]


def all_bots(bots: int) -> tuple[str, ...]:
    """The ids of every bot of a ``bots``-a-side match: learners for a match of learners only."""
    return tuple(f"{t}-{i}" for t in TEAMS for i in range(1, bots + 1))


@cache
def load_checked_map(source: str, mode: str) -> tuple[Map, MapMarkers]:
    """The map (read once per process) after checking it can host ``mode``."""
    game_map = load_map(source)
    check_map(game_map, mode, TEAMS)
    return game_map, MapMarkers(game_map)


@dataclass
class AgentStep:
    """What one learner knows after a step: its Percept and how the world took its act."""

    facts: Facts
    events: Facts
    act_accepted: bool | None = None
    """None when it sent no act (or the run ended before the world's answer came)."""
    act_reason: str = ""
    observation: Observation | None = None
    """A squad leader's observation, encoded by its actor (a bot's is encoded from ``facts``)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """More for the step's ``info`` (a squad leader: the orders it sent)."""


@dataclass
class StepResult:
    """One tick of the match, for every learner."""

    agents: dict[str, AgentStep]
    scores: dict[str, int]
    outcome: dict[str, Any] | None
    tick: int
    ended: bool
    """True when the world decided the game or the run ended otherwise (see ``reason``)."""
    reason: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class LearnerActor(Actor):
    """A learning bot's place in the run: forwards Percepts to the match, sends its acts."""

    def __init__(self, actor_id: str, match: _RunMatch, *, seed: int) -> None:
        super().__init__(actor_id, seed=seed)
        self.match = match
        self.facts: Facts = []
        self.events: Facts = []
        self.result: ActResult | None = None
        self._action: asyncio.Future[ActTuple | None] | None = None
        self.sent = False

    @handles(Percept)
    def on_percept(self, percept: Percept) -> None:
        self.facts = percept.facts
        self.events = percept.events

    @handles(ActResult)
    def on_act_result(self, result: ActResult) -> None:
        self.result = result

    async def on_tick(self, tick: int) -> None:
        # Awaiting a future that is not the actor's own breaks no lockstep rule here: the tick
        # waits for it as for any handler, and it is resolved by step() before the loop runs
        # again, so what the learner sends never depends on the loop's scheduling.
        future: asyncio.Future[ActTuple | None] = asyncio.get_running_loop().create_future()
        self._action = future
        self.match.learner_waits(self)
        act = await future
        self.sent = act is not None
        self.result = None
        if act is not None:
            verb, args = act
            self.send(Act(recipient=self.match.world_id, verb=verb, args=dict(args)))

    def give(self, act: ActTuple | None) -> None:
        """Resolve the await of ``on_tick`` with this tick's act (None: no act)."""
        if self._action is not None and not self._action.done():
            self._action.set_result(act)

    def step_view(self) -> AgentStep:
        if not self.sent or self.result is None:
            return AgentStep(self.facts, self.events)
        return AgentStep(self.facts, self.events, self.result.accepted, self.result.reason)


class Match(ABC):
    """A match between ``config.learners`` and warband's bots; build with :func:`open_match`."""

    config: MatchConfig
    map: Map
    world: World

    @abstractmethod
    def reset(self, seed: int) -> StepResult:
        """Start a new match (ending any running one) and return the learners' first view."""

    @abstractmethod
    def step(self, acts: Mapping[str, ActTuple | int | None]) -> StepResult:
        """Play one tick with these acts of the learning bots and actions of the learning
        squad leaders (missing: no act, :data:`~warband.env.squad_actions.KEEP`)."""

    def close(self) -> None:  # noqa: B027 - nothing to free without a run
        """End the run (if any) and free its loop, broker and sockets. Idempotent."""


def open_match(config: MatchConfig) -> Match:
    """The match engine of ``config.backend``."""
    return _RunMatch(config) if config.backend == "run" else _WorldMatch(config)


def _new_world(config: MatchConfig, game_map: Map, seed: int) -> World:
    roster: dict[str, Any] = {
        bot: {"team": team, "class": CLASSES[index % len(CLASSES)]}
        for team in TEAMS
        for index, bot in enumerate(config.bot_ids(team))
    }
    return World.create(
        game_map, seed=seed, mode=config.mode, roster=roster, time_limit=config.time_limit
    )


def _final_view(world: World, agents: Iterable[str]) -> dict[str, AgentStep]:
    return {
        a: AgentStep(world.percepts_for(a), world.events_for(a, world.last_report)) for a in agents
    }


class _WorldMatch(Match):
    """The world alone: acts go straight to ``World.submit``, ``World.step`` is the tick."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config
        self.map, _ = load_checked_map(config.map, config.mode)

    def reset(self, seed: int) -> StepResult:
        self.world = _new_world(self.config, self.map, seed)
        return StepResult(_final_view(self.world, self.config.learners), {}, None, 0, False)

    def step(self, acts: Mapping[str, ActTuple | int | None]) -> StepResult:
        verdicts: dict[str, tuple[bool, str]] = {}
        for agent in sorted(acts):
            act = acts[agent]
            if isinstance(act, tuple):
                verdict = self.world.submit(agent, act[0], act[1])
                verdicts[agent] = (verdict.accepted, verdict.reason)
        self.world.step()
        views = _final_view(self.world, self.config.learners)
        for agent, (accepted, reason) in verdicts.items():
            views[agent].act_accepted, views[agent].act_reason = accepted, reason
        outcome = self.world.outcome()
        ended = outcome is not None
        reason = "game over" if ended else ""
        return StepResult(views, self.world.score(), outcome, self.world.tick, ended, reason)


class _RunMatch(Match):
    """A warband run on a loop of our own, frozen between calls (the module docstring)."""

    world_id = WORLD_ID

    def __init__(self, config: MatchConfig) -> None:
        self.config = config
        self.map, self.markers = load_checked_map(config.map, config.mode)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._learners: dict[str, LearnerActor] = {}
        self._leaders: dict[str, LearnerSquad] = {}
        self._spots: HtnFunction | None = None
        self._waiting: set[str] = set()
        self._all_wait: asyncio.Future[None] | None = None
        self.clock: WorldActor | None = None
        self._collections: Callable[[], None] | None = None
        """Releases the garbage collector's raised threshold, held while a run is open."""

    def _actors(self, seed: int) -> list[Actor]:
        learners = set(self.config.learners)
        actors: list[Actor] = []
        for team in TEAMS:
            others = [b for b in self.config.bot_ids(team) if b not in learners]
            if others:
                actors += faction_actors(
                    self.map,
                    team,
                    others,
                    mode=self.config.mode,
                    control=getattr(self.config, team),
                    seed=seed,
                    corridors=self.config.corridors,
                    markers=self.markers,
                )
        self._learners = {a: LearnerActor(a, self, seed=seed) for a in sorted(learners)}
        self._leaders = {}
        actors = [self._leader_in_place(actor, seed) for actor in actors]
        return [*actors, *self._learners.values()]

    def _leader_in_place(self, actor: Actor, seed: int) -> Actor:
        """A learning squad leader in the place of warband's squad ``actor`` (the same role,
        superior and team), or ``actor`` itself when no learner leads it."""
        if actor.id not in self.config.leaders or not isinstance(actor, Agent):
            return actor
        places = squad_places(self.map)
        if self._spots is None:  # the squad's functions read the map's strategic graph: once
            self._spots = squad_functions(self.map)["defend_spot"]
        leader = LearnerSquad(
            actor.id,
            actor.role,
            match=self,
            spots=self._spots,
            places=places,
            encoder=SquadObservationEncoder(
                self.map, places, actor.team, self.config.mode, self.config.time_limit
            ),
            superior=actor.superior or commander_id(actor.team),
            team=actor.team,
            seed=seed,
        )
        self._leaders[leader.id] = leader
        return leader

    def _observers(self, actors: Sequence[Actor]) -> dict[str, str]:
        ids = {a.id for a in actors}
        observers = {commander_id(t): t for t in TEAMS if commander_id(t) in ids}
        # A squad leader hears what its team knows, as the squads of scenarios/warzone.py do.
        return observers | {leader: self.config.team_of(leader) for leader in self._leaders}

    def reset(self, seed: int) -> StepResult:
        self.close()
        self._collections = event_loop.hold_fewer_collections()
        self.world = _new_world(self.config, self.map, seed)
        actors = self._actors(seed)
        self.clock = WorldActor(
            self.world,
            participants=[a.id for a in actors],
            ticks=self.config.time_limit,
            seed=seed,
            tick_timeout=TICK_TIMEOUT,
            observers=self._observers(actors),
        )
        self._loop = event_loop.new_event_loop()
        self._all_wait = self._loop.create_future()
        self._task = self._loop.create_task(
            run_actors_in_process(
                actors, self.clock, ping_interval=PING_INTERVAL, broker_on_loop=True
            )
        )
        return self._play()

    def step(self, acts: Mapping[str, ActTuple | int | None]) -> StepResult:
        if self._loop is None or self._task is None or self._task.done():
            raise RuntimeError("the match is over or was never started: call reset() first")
        self._all_wait = self._loop.create_future()
        self._waiting.clear()
        for agent, learner in self._learners.items():
            act = acts.get(agent)
            learner.give(act if isinstance(act, tuple) else None)
        for agent, leader in self._leaders.items():
            action = acts.get(agent)
            leader.give(action if isinstance(action, int) else None)
        return self._play()

    def learner_waits(self, learner: LearnerActor | LearnerSquad) -> None:
        """Called by a learner awaiting its act: the step is over once all of them wait."""
        self._waiting.add(learner.id)
        everyone = len(self._waiting) == len(self._learners) + len(self._leaders)
        if everyone and self._all_wait is not None and not self._all_wait.done():
            self._all_wait.set_result(None)

    def _play(self) -> StepResult:
        assert self._loop is not None and self._task is not None and self._all_wait is not None
        waiting = self._all_wait
        self._loop.run_until_complete(
            asyncio.wait([waiting, self._task], return_when=asyncio.FIRST_COMPLETED)
        )
        if self._task.done():
            return self._ended()
        views = {a: learner.step_view() for a, learner in self._learners.items()}
        views |= self._leader_views()
        assert self.clock is not None
        return StepResult(views, self.world.score(), None, self.world.tick, False)

    def _leader_views(self) -> dict[str, AgentStep]:
        views: dict[str, AgentStep] = {}
        for agent, leader in self._leaders.items():
            view = leader.step_view()
            view.extra = leader_extra(leader)
            views[agent] = view
        return views

    def _ended(self) -> StepResult:
        assert self._task is not None
        error = self._task.exception() if not self._task.cancelled() else None
        if error is not None:
            self.close()
            raise RuntimeError(f"the match's run failed: {error}") from error
        result = self._task.result()
        outcome = self.world.outcome()
        views = _final_view(self.world, self.config.learners) | self._leader_views()
        reason = "game over" if outcome is not None else f"run ended: {result.finish_reason}"
        extra = {"departed": dict(result.departed)} if result.departed else {}
        return StepResult(views, self.world.score(), outcome, self.world.tick, True, reason, extra)

    def close(self) -> None:
        loop, task, collections = self._loop, self._task, self._collections
        self._loop = self._task = self._collections = None
        if collections is not None:
            collections()  # the process's own thresholds again, once no match holds them
        if loop is None:
            return
        try:
            if task is not None and not task.done():
                self._end_run(loop, task)
            loop.run_until_complete(loop.shutdown_asyncgens())
            # The run stopped its broker and context in the default executor's thread.
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()

    def _end_run(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        """End a match in play as a run ends: after this tick (the learners send no act), the
        clock shuts every actor down and collects its stats; cancelled only if that hangs."""
        if self.clock is not None:
            self.clock.end_run("environment reset or closed")
        for learner in self._learners.values():
            learner.give(None)
        for leader in self._leaders.values():
            leader.give(None)
        loop.run_until_complete(asyncio.wait([task], timeout=SHUTDOWN_TIMEOUT))
        if not task.done():
            task.cancel()
        loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
