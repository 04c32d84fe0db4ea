"""Running a scenario: everything in one process; the agents in N worker processes of many
agents each (``--workers N``); or the broker and every actor in its own (``--processes``).

Every path builds the same actors from the same parameters and seed and drives them with the
same clock, so a lockstep run sends the same messages in the same per-tick order in each. Every
process of actors runs a keeper (:mod:`warband.messaging.keeper`), so a long tick departs none.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import zmq

from .exceptions import ConfigurationError, WarbandError
from .interrupts import Interrupted, SignalFlag, run_until_signalled, signal_name, stop_on_signal
from .messaging import event_loop
from .messaging.actor import Actor, Mode
from .messaging.addresses import DEFAULT_CLOCK_ID, SUPERVISOR_ID
from .messaging.broker import CLOSE_LINGER_MS, Broker, remove_ipc_socket_file
from .messaging.clock import Clock, DeparturePolicy, RunResult
from .messaging.faults import FrameDrops
from .messaging.keeper import STUCK_AFTER, ProcessKeeper
from .messaging.secret import RUN_ID_VARIABLE, SECRET_VARIABLE, RunSecret, new_secret
from .messaging.supervisor import (
    DEFAULT_MAX_RESTARTS,
    DEFAULT_RESTART_PERIOD,
    BrokerEscalation,
    Supervisor,
)
from .messaging.tracing import get_logger, logging_to_files
from .placement import place
from .scenario import Outcome, Params, Scenario

if TYPE_CHECKING:
    from .messaging.curve import CurveClient
    from .world.actor import WorldModel

Progress = Callable[[str], None]


@dataclass
class RunReport:
    """Everything a finished run tells its user; ``as_json()`` is the ``--json`` contract."""

    scenario: str
    seed: int
    ticks: int
    processes: int
    messages_sent: int
    messages_received: int
    outcome: Outcome
    finish_reason: str
    completed: bool
    duration_s: float
    params: dict[str, Any] = field(default_factory=dict)
    pids: dict[str, list[int]] = field(default_factory=dict)
    restarts: int = 0
    messages_rejected: int = 0
    tick_timeouts: int = 0
    missing: list[str] = field(default_factory=list)
    log_dir: str | None = None
    departed: dict[str, str] = field(default_factory=dict)
    handler_failures: dict[str, int] = field(default_factory=dict)
    undeliverable: dict[str, int] = field(default_factory=dict)
    conflated: dict[str, int] = field(default_factory=dict)
    would_block: dict[str, int] = field(default_factory=dict)
    workers: dict[str, list[str]] = field(default_factory=dict)
    """With ``--workers N``: each worker process's name and the agents it ran."""

    @property
    def clean(self) -> bool:
        """True when no actor's handler, timer or ``on_tick`` raised during the run."""
        return not self.handler_failures

    def as_json(self) -> dict[str, Any]:
        """The run summary as one JSON-ready object (keys documented in README, 'Run output')."""
        return {
            "scenario": self.scenario,
            "seed": self.seed,
            "ticks": self.ticks,
            "processes": self.processes,
            "messages_sent": self.messages_sent,
            "messages_received": self.messages_received,
            "outcome": "success" if self.outcome.success else "failure",
            "outcome_summary": self.outcome.summary,
            "outcome_details": self.outcome.details,
            "completed": self.completed,
            "finish_reason": self.finish_reason,
            "duration_s": round(self.duration_s, 3),
            "params": self.params,
            "pids": self.pids,
            "restarts": self.restarts,
            "messages_rejected": self.messages_rejected,
            "tick_timeouts": self.tick_timeouts,
            "missing": self.missing,
            "log_dir": self.log_dir,
            "departed": self.departed,
            "handler_failures": self.handler_failures,
            "undeliverable": self.undeliverable,
            "conflated": self.conflated,
            "would_block": self.would_block,
            "workers": self.workers,
            "clean": self.clean,
        }


@dataclass(frozen=True)
class RunOptions:
    """How to run a scenario; the CLI fills this from its flags."""

    seed: int = 0
    ticks: int | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    log_dir: Path | None = None
    live: str | None = None
    """A ``warband view --live`` endpoint every process pushes its events to."""
    mode: Mode = "lockstep"
    tick_timeout: float = 10.0
    endpoint: str | None = None
    broker_timeout: float = 30.0
    """Seconds an actor waits for a lost broker to come back before it gives up."""
    start_timeout: float = 60.0
    """Seconds the clock waits for every participant to connect before the run fails."""
    curve: Path | None = None
    """With processes or workers: the CURVE key directory (``warband keys``) every connection
    uses."""
    max_restarts: int = DEFAULT_MAX_RESTARTS
    """With processes: restarts of one agent allowed per ``restart_period`` before the
    supervisor gives up on it (its superior and the clock are told: ``gave_up``)."""
    restart_period: float = DEFAULT_RESTART_PERIOD
    """Seconds over which ``max_restarts`` counts."""
    otel: str | None = None
    """``--otel``'s OTLP endpoint, passed on to every process of a run (each exports its spans;
    see :mod:`warband.messaging.otel`). None: the children read ``OTEL_EXPORTER_OTLP_ENDPOINT``."""
    secret: RunSecret | None = None
    """For one process of a run (``warband agent``): the run secret it proves its id with, its
    launcher's (inherited) or the user's (``--secret FILE``)."""
    run_id: str = ""
    """For one process of a run: the id of the run it belongs to, when its launcher said."""
    quiet: bool = False
    """``--quiet``: no progress lines on stderr from any process of the run (the broker's
    ``routing on`` line, the clock's ticks)."""
    kills: Mapping[str, int] = field(default_factory=dict)
    """``--kill AGENT@TICK``: agent id -> the tick it is killed at (:meth:`Actor.kill_at`)."""
    planning_budget: int | None = None
    """``--planning-budget N`` (realtime runs): the agents of each process share N planner
    expansions per tick (:class:`~warband.agents.SharedPlanning`); None: each plans alone."""


def make_clock(
    participants: list[str],
    *,
    ticks: int,
    seed: int = 0,
    tick_timeout: float = 10.0,
    start_timeout: float = 60.0,
    world: WorldModel | None = None,
    clock_id: str | None = None,
    departure_policy: DeparturePolicy | None = None,
    progress: Progress | None = None,
    observers: Mapping[str, str] | None = None,
    outside_participants: list[str] | None = None,
) -> Clock:
    """The clock of a run: a world actor stepping ``world`` if given, else a plain clock.

    Its id is ``clock_id``, by default ``"world"`` with a world and ``"clock"`` without.
    ``progress`` receives a line about every tenth of the run. The run's members are the
    clock, ``participants`` and ``outside_participants``.
    """
    on_tick = _progress_reporter(ticks, progress) if progress is not None else None
    common: dict[str, Any] = {
        "participants": participants,
        "ticks": ticks,
        "seed": seed,
        "tick_timeout": tick_timeout,
        "ready_timeout": start_timeout,
        "departure_policy": departure_policy,
        "on_tick_complete": on_tick,
        "outside_participants": outside_participants or [],
    }
    if world is not None:
        from .world.actor import WORLD_ID, WorldActor

        return WorldActor(world, clock_id or WORLD_ID, observers=observers, **common)
    return Clock(clock_id or DEFAULT_CLOCK_ID, **common)


def _progress_reporter(ticks: int, progress: Progress) -> Callable[[int], None]:
    every = max(1, ticks // 10)

    def report(tick: int) -> None:
        if tick % every == 0 or tick == ticks:
            progress(f"tick {tick}/{ticks}")

    return report


def build_clock(
    scenario: Scenario,
    actors: list[Actor],
    options: RunOptions,
    params: Params,
    progress: Progress | None = None,
) -> Clock:
    """The clock that drives ``actors`` for ``scenario``: the world actor if it declares one."""

    def departure_policy(agent: str, reason: str) -> str | None:
        return scenario.on_departure(agent, reason, params)

    return make_clock(
        [a.id for a in actors],
        ticks=options.ticks if options.ticks is not None else scenario.ticks,
        seed=options.seed,
        tick_timeout=options.tick_timeout,
        start_timeout=options.start_timeout,
        world=scenario.build_world(params, options.seed),
        clock_id=scenario.clock_id,
        departure_policy=departure_policy,
        progress=progress,
        observers=scenario.build_observers(params),
        outside_participants=scenario.outside_participants(params),
    )


def run_scenario(
    scenario: Scenario,
    options: RunOptions,
    progress: Progress | None = None,
    *,
    processes: bool = False,
    workers: int | None = None,
) -> RunReport:
    """Run ``scenario`` in one process, one process per agent (``processes``) or in ``workers``
    worker processes: the ``warband run`` body.

    With OpenTelemetry export on in this process, the run has a span of its own here,
    ``run <scenario>`` (:func:`warband.messaging.otel.run_span`; parent: ``TRACEPARENT`` if set),
    ended with the run's outcome, its ticks and how many processes it had; status ERROR when
    the run did not complete, with the exception recorded when it raised. The span parents
    nothing in the run (the module docstring of :mod:`warband.messaging.otel` says why): the
    roots of the run's traces link to it instead, in every process of the run. Raises what
    :func:`run_in_process` and :func:`run_in_processes` raise.
    """
    from .messaging import otel

    if processes and workers is not None:
        raise ConfigurationError(
            "--processes and --workers are two placements: pass one (--processes: a process "
            "per agent; --workers N: N processes of many agents each)"
        )

    share_planning([], options)  # a bad --planning-budget fails here, before any process

    def runner(
        scenario: Scenario, options: RunOptions, progress: Progress | None = None
    ) -> RunReport:
        if workers is not None:
            return run_in_workers(scenario, options, progress, workers=workers)
        if processes:
            return run_in_processes(scenario, options, progress)
        return run_in_process(scenario, options, progress)

    span = otel.run_span(
        f"run {scenario.name}",
        {"warband.scenario": scenario.name, "warband.seed": options.seed},
    )
    if span is None:
        return runner(scenario, options, progress)
    try:
        with span.linked():
            report = runner(scenario, options, progress)
    except RunInterrupted as interrupted:
        span.end(_span_attributes(interrupted.report, "interrupted"), failure=str(interrupted))
        raise
    except BaseException as error:
        span.end({"warband.outcome": "error", "warband.completed": False}, error=error)
        raise
    outcome = "success" if report.outcome.success else "failure"
    failure = None if report.completed else report.finish_reason
    span.end(_span_attributes(report, outcome), failure=failure)
    return report


def _span_attributes(report: RunReport, outcome: str) -> dict[str, Any]:
    return {
        "warband.outcome": outcome,
        "warband.ticks": report.ticks,
        "warband.processes": report.processes,
        "warband.completed": report.completed,
        "warband.finish_reason": report.finish_reason,
    }


def _check_outsiders_can_join(
    scenario: Scenario,
    params: Params,
    options: RunOptions,
    actor_ids: list[str],
) -> None:
    """Refuse, before anything starts, a run whose declared outside participants could not join
    it: one built by the scenario too, no endpoint they reach, or nothing to prove their id by."""
    outsiders = scenario.outside_participants(params)
    if not outsiders:
        return
    names = ", ".join(outsiders)
    built = sorted(set(outsiders) & set(actor_ids))
    if built:
        raise ConfigurationError(
            f"scenario {scenario.name!r}: {', '.join(built)} is both built by @scenario.actors "
            "and declared an outside participant; keep one"
        )
    endpoint = options.endpoint or ""
    if not endpoint.startswith(("tcp://", "ipc://")):
        raise ConfigurationError(
            f"scenario {scenario.name!r} declares outside participants ({names}): give the run "
            "an endpoint they can reach, --endpoint tcp://HOST:PORT (or ipc://PATH)"
        )
    if options.secret is None and options.curve is None:
        raise ConfigurationError(
            f"scenario {scenario.name!r} declares outside participants ({names}): pass "
            "--secret FILE (`warband keys DIR --secret` writes one) so that they can prove their "
            "ids, as PROTOCOL.md section 10 says, or --curve KEYDIR with their keys"
        )


def arm_kills(scenario: Scenario, actors: list[Actor], options: RunOptions) -> None:
    """Make each agent of ``--kill AGENT@TICK`` die at its tick (:meth:`Actor.kill_at`).

    Raises :class:`ConfigurationError` for an agent the scenario does not build (its clock
    included: the run would end with it) or a tick after the run's last.
    """
    by_id = {actor.id: actor for actor in actors}
    ticks = options.ticks if options.ticks is not None else scenario.ticks
    for agent, tick in options.kills.items():
        if agent not in by_id:
            known = ", ".join(sorted(by_id))
            raise ConfigurationError(
                f"--kill {agent}@{tick}: scenario {scenario.name!r} has no agent {agent!r} to "
                f"kill (the clock cannot be killed); its agents: {known}"
            )
        if tick > ticks:
            raise ConfigurationError(
                f"--kill {agent}@{tick}: the run has {ticks} ticks; pick a tick from 1 to {ticks}"
            )
        by_id[agent].kill_at(tick)


def share_planning(actors: list[Actor], options: RunOptions) -> None:
    """Give the agents among ``actors`` (one process's) one planning queue, for
    ``--planning-budget``. Raises :class:`ConfigurationError` in a lockstep run: there a budget
    shared by whichever agents share a process would make the run's messages depend on where
    its agents run."""
    if options.planning_budget is None:
        return
    if options.mode != "realtime":
        raise ConfigurationError(
            f"--planning-budget {options.planning_budget} needs --mode realtime: in lockstep, "
            "what an agent may plan in a tick must not depend on which agents share its "
            "process; give its Role a planning_budget instead"
        )
    from .agents import Agent, SharedPlanning

    shared = SharedPlanning(options.planning_budget)
    for actor in actors:
        if isinstance(actor, Agent):
            actor.shared_planning = shared


def run_in_process(
    scenario: Scenario, options: RunOptions, progress: Progress | None = None
) -> RunReport:
    """Run the broker (a thread) and every actor (asyncio tasks) in this process."""
    params = scenario.resolve_params(options.params)
    actors = scenario.build(params, options.seed)
    arm_kills(scenario, actors, options)
    share_planning(actors, options)
    _check_outsiders_can_join(scenario, params, options, [a.id for a in actors])
    clock = build_clock(scenario, actors, options, params, progress)
    started = time.monotonic()
    try:
        result = event_loop.run(
            run_until_signalled(
                run_actors_in_process(
                    actors,
                    clock,
                    mode=options.mode,
                    endpoint=options.endpoint,
                    secret=options.secret,
                )
            )
        )
    except Interrupted as interrupted:
        report = interrupted_report(
            scenario, params, options, interrupted.signum, started, partial=clock.progress("")
        )
        raise RunInterrupted(interrupted.signum, report) from None
    except ConfigurationError:
        raise
    except WarbandError as error:
        # The clock failed: still what it knew of the run, not zeros.
        known = clock.progress("")
        report = failed_report(scenario, params, options, str(error), started, partial=known)
        raise RunFailed(report) from None
    return _report(scenario, params, options, result, started, processes=1, pids={})


async def run_actors_in_process(
    actors: list[Actor],
    clock: Clock,
    *,
    mode: Mode = "lockstep",
    endpoint: str | None = None,
    broker_timeout: float = 30.0,
    drops: FrameDrops | None = None,
    secret: RunSecret | None = None,
    ping_interval: float = 1.0,
    broker_on_loop: bool = False,
) -> RunResult:
    """Run ``clock`` and ``actors`` to the end of the run, with a broker thread, in this process.

    The one in-process runner: ``warband run`` and :func:`warband.testing.run_actors` both use
    it. An actor whose ``run`` raised (it failed in ``on_start``, say) is logged as
    ``actor.crashed``; the clock heard of its departure and the result lists it in
    ``departed``. Raises :class:`WarbandError` when the clock itself failed. ``drops`` makes
    the broker lose frames on purpose, for tests of re-sending (:mod:`warband.messaging.faults`).

    A keeper thread (:mod:`warband.messaging.keeper`) vouches for every actor of the run to
    the broker, so that a tick that holds the loop for seconds departs nobody.

    On a ``tcp://`` or ``ipc://`` endpoint, reachable from other processes, the broker lets in
    only connections that prove their id with a secret: ``secret`` (an outside participant's
    user holds it too), else one made for this run and known only here. ``ping_interval`` is
    every actor's (:meth:`Actor.run <warband.messaging.Actor.run>`): a caller that pauses the
    loop between ticks (:mod:`warband.env`) makes it long. Such a caller also routes on the
    loop, with ``broker_on_loop`` (:meth:`Broker.start_on_loop
    <warband.messaging.broker.Broker.start_on_loop>`): the same frames, routed without a thread.
    """
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    endpoint = endpoint or f"inproc://warband-{uuid.uuid4().hex[:12]}"
    if secret is None and not endpoint.startswith("inproc://"):
        secret = new_secret()
    broker = Broker(endpoint, context=context, drops=drops, secret=secret)
    if broker_on_loop:
        broker.start_on_loop()
    else:
        broker.start()
    bound = broker.bound_endpoint
    options: dict[str, Any] = {
        "context": context,
        "mode": mode,
        "broker_timeout": broker_timeout,
        "secret": secret,
        "run_id": uuid.uuid4().hex[:12],
        "ping_interval": ping_interval,
    }
    everyone = [clock, *actors]
    keeper = ProcessKeeper(
        bound,
        lambda: [actor.id for actor in everyone if actor.registered],
        context=context,
        interval=ping_interval,
        secret=secret,
    )
    tasks = [
        asyncio.create_task(actor.run(bound, clock_id=clock.id, **options)) for actor in actors
    ]
    try:
        async with keeper:
            await clock.run(bound, **options)
            done, _ = await asyncio.wait(tasks, timeout=clock.shutdown_timeout)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    get_logger(agent="launcher").error(
                        "actor.crashed", error=repr(task.exception())
                    )
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # Both block (a thread join, the context's teardown): keep the event loop free. A broker
        # on the loop stops on it: its socket belongs to this thread.
        if broker_on_loop:
            broker.stop()
        else:
            await asyncio.to_thread(broker.stop)
        await asyncio.to_thread(context.term)
    if clock.result is None:
        where = (
            "read its actor.failure events in the run's log"
            if logging_to_files()
            else "rerun with --log DIR and read its actor.failure events"
        )
        raise WarbandError(f"the clock {clock.id!r} stopped without a result; {where}")
    return clock.result


def run_in_processes(
    scenario: Scenario, options: RunOptions, progress: Progress | None = None
) -> RunReport:
    """Run the broker, the clock and every actor each in its own OS process, supervised.

    The launcher watches the broker and the clock: each shows a sign of life every
    :data:`HEARTBEAT_INTERVAL` s (the clock's carries its progress), and one silent for
    :data:`SILENT_AFTER` s (stopped with SIGSTOP, hung, its host gone) ends the run. A run that
    breaks raises :class:`RunFailed`, whose report has what was known of the run when it broke.
    """
    return _run_supervised(scenario, options, progress, workers=None)


def run_in_workers(
    scenario: Scenario, options: RunOptions, progress: Progress | None = None, *, workers: int
) -> RunReport:
    """Run the broker and the clock each in its own OS process, and the agents in ``workers``
    worker processes (``warband agent --ids``, each one event loop for its agents), supervised.

    Agents are placed by the scenario's groups, else round-robin (:mod:`warband.placement`).
    The supervisor restarts a worker that dies, with all its agents (``--max-restarts`` counts
    per worker; giving up on it reports each of its agents gone); an agent that fails inside
    a live worker leaves the run, as in one process. Otherwise as :func:`run_in_processes`.
    """
    return _run_supervised(scenario, options, progress, workers=workers)


def _placement(
    scenario: Scenario, params: Params, actor_ids: list[str], workers: int | None
) -> dict[str, list[str]]:
    """Process name -> the agents it runs: one per agent, or ``worker-1`` ... ``worker-N``."""
    if workers is None:
        return {actor_id: [actor_id] for actor_id in actor_ids}
    groups = scenario.placement_groups(params)
    placed = place(actor_ids, workers, groups)
    return {f"worker-{number}": agents for number, agents in enumerate(placed, start=1)}


def _run_supervised(
    scenario: Scenario,
    options: RunOptions,
    progress: Progress | None,
    *,
    workers: int | None,
) -> RunReport:
    if scenario.path is None:
        raise ConfigurationError("a multi-process run needs a scenario loaded from a file")
    params = scenario.resolve_params(options.params)
    built = scenario.build(params, options.seed)
    arm_kills(scenario, built, options)  # checked here; each agent's process arms its own
    actor_ids = [a.id for a in built]
    _check_outsiders_can_join(scenario, params, options, actor_ids)
    placement = _placement(scenario, params, actor_ids, workers)
    if workers is not None and progress is not None:
        sizes = ", ".join(f"{name} {len(agents)}" for name, agents in placement.items())
        progress(f"{len(placement)} workers for {len(actor_ids)} agents ({sizes})")
    # The run's own processes prove who they are by a secret made for this run, handed to them
    # only, in their environment (a command line shows in `ps`); with CURVE their keys do.
    secret = None if options.curve is not None else (options.secret or new_secret())
    run_id = uuid.uuid4().hex[:12]
    environment = {RUN_ID_VARIABLE: run_id}
    if secret is not None:
        environment[SECRET_VARIABLE] = secret.value.decode()
    supervisor = Supervisor(
        max_restarts=options.max_restarts,
        restart_period=options.restart_period,
        environment=environment,
    )
    started = time.monotonic()
    result: RunResult | None = None
    failure: str | None = None
    known: RunResult | None = None
    # SIGTERM, SIGINT and SIGHUP are recorded, not fatal, until every child has been reaped and
    # the run's directory (its ipc socket, the clock's result file) removed.
    with (
        SignalFlag() as signals,
        _run_directory() as tmp,
    ):
        workdir = Path(tmp)
        endpoint = options.endpoint or f"ipc://{workdir / 'broker.sock'}"
        result_file = workdir / "result.json"
        pulses = {
            "broker": _Pulse("the broker", workdir / "broker.alive", options.start_timeout),
            scenario.clock_id: _Pulse(
                f"the clock {scenario.clock_id!r}", workdir / "clock.alive", options.start_timeout
            ),
        }
        if options.curve is not None:
            _check_curve_keys(options.curve, endpoint, [scenario.clock_id, *actor_ids])
        escalation = BrokerEscalation(endpoint, curve=_supervisor_keys(options), secret=secret)

        def give_up(name: str, reason: str) -> None:
            # A worker given up on takes all its agents out of the run.
            for agent in placement.get(name, [name]):
                escalation(agent, reason)

        supervisor.on_give_up = give_up
        try:
            broker_argv = [
                *_broker_argv(endpoint, options),
                "--heartbeat",
                str(pulses["broker"].file),
            ]
            supervisor.start("broker", broker_argv, restartable=False)
            common = _agent_argv(scenario.path, endpoint, options)
            clock_argv = [*common, "--id", scenario.clock_id, "--result", str(result_file)]
            clock_argv += ["--heartbeat", str(pulses[scenario.clock_id].file)]
            supervisor.start(scenario.clock_id, clock_argv, restartable=False)
            for name, agents in placement.items():
                if signals.received is not None:
                    break
                if workers is None:
                    supervisor.start(name, [*common, "--id", name])
                else:
                    supervisor.start(name, [*common, "--ids", ",".join(agents), "--name", name])
            failure = _supervise_until_clock_exits(
                supervisor, scenario.clock_id, progress, signals, pulses, result_file
            )
            if failure is None:
                supervisor.stop_restarting()
                supervisor.wait_all(
                    timeout=10.0, exclude=("broker",), give_up=lambda: signals.received is not None
                )
                if result_file.exists():
                    result = msgspec.json.decode(result_file.read_bytes(), type=RunResult)
                else:
                    failure = _why_the_clock_ended(supervisor, scenario.clock_id, options)
        except WarbandError:
            if signals.received is None:
                raise
        finally:
            escalation.close()
            # The broker may spend its socket's linger closing: not a hung one to kill.
            supervisor.stop_all(last=("broker",), last_grace=1.5 + CLOSE_LINGER_MS / 1000)
            remove_ipc_socket_file(endpoint)  # left behind if the broker was killed
            known = _progress_known(pulses[scenario.clock_id].file)
    pids = {name: managed.pids for name, managed in supervisor.processes.items()}
    if result is None and signals.received is not None:
        report = interrupted_report(
            scenario,
            params,
            options,
            signals.received,
            started,
            processes=len(pids),
            pids=pids,
            partial=known,
        )
        report.restarts = supervisor.total_restarts
        report.workers = placement if workers is not None else {}
        raise RunInterrupted(signals.received, report)
    if result is None:
        reason = failure or "the run ended without a result"
        report = failed_report(
            scenario,
            params,
            options,
            reason,
            started,
            processes=len(pids),
            pids=pids,
            partial=known,
        )
        report.restarts = supervisor.total_restarts
        report.workers = placement if workers is not None else {}
        raise RunFailed(report)
    report = _report(
        scenario, params, options, result, started, processes=len(supervisor.processes), pids=pids
    )
    report.restarts = supervisor.total_restarts
    if workers is not None:
        report.workers = placement
    return report


RUN_DIRECTORY_PREFIX = "warband-run-"
"""A ``--processes`` run's directory in the temp dir (its ipc socket, the clock's result) is
``warband-run-<launcher pid>-<random>``."""


def _run_directory() -> tempfile.TemporaryDirectory[str]:
    """This run's directory, after removing those of launchers that died without removing
    theirs (``kill -9``): a directory whose launcher pid no longer exists, and ours."""
    _remove_stale_run_directories(Path(tempfile.gettempdir()))
    return tempfile.TemporaryDirectory(
        prefix=f"{RUN_DIRECTORY_PREFIX}{os.getpid()}-", ignore_cleanup_errors=True
    )


def _remove_stale_run_directories(temp: Path) -> None:
    with contextlib.suppress(OSError):
        for entry in temp.glob(f"{RUN_DIRECTORY_PREFIX}*-*"):
            owner = entry.name[len(RUN_DIRECTORY_PREFIX) :].split("-", 1)[0]
            if not owner.isdigit() or _process_exists(int(owner)):
                continue
            with contextlib.suppress(OSError):
                if entry.is_dir() and entry.stat().st_uid == os.getuid():
                    shutil.rmtree(entry, ignore_errors=True)
                    get_logger(agent="launcher").info(
                        "run.stale_directory_removed", path=str(entry)
                    )


def _process_exists(pid: int) -> bool:
    """True when a process ``pid`` exists (even another user's, or a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


HEARTBEAT_INTERVAL = 0.5
"""Seconds between two signs of life of a ``--processes`` run's broker and clock."""
SILENT_AFTER = 5.0
"""Seconds without a sign of life after which the launcher ends the run: the broker or the
clock was stopped (SIGSTOP), hangs, or its host is gone (before the first sign of life the
launcher waits ``--start-timeout`` seconds)."""


def write_heartbeat(file: Path, content: bytes = b"") -> None:
    """Replace ``file`` with ``content`` at once (readers never see half of it): a sign of
    life of this process for the launcher that watches ``file``."""
    partial = file.with_name(file.name + ".tmp")
    with contextlib.suppress(OSError):  # the run's directory is gone: the run is over
        partial.write_bytes(content)
        os.replace(partial, file)


class _Pulse:
    """What the launcher knows of one watched process's signs of life (its heartbeat file).

    Silence is measured on the launcher's own monotonic clock, from the moment it last saw the
    file change: a wall clock that jumps, or a launcher that was itself suspended, finds no
    silence that was not there.
    """

    def __init__(self, who: str, file: Path, first_within: float) -> None:
        self.who = who
        self.file = file
        self._stamp: int | None = None
        self._changed_at = time.monotonic()
        self._limit = max(first_within, SILENT_AFTER)

    def silence(self) -> float | None:
        """Seconds it has been silent, once that is longer than allowed; else None."""
        try:
            stamp: int | None = self.file.stat().st_mtime_ns
        except OSError:
            stamp = None
        now = time.monotonic()
        if stamp != self._stamp:
            self._stamp, self._changed_at = stamp, now
            if stamp is not None:
                self._limit = SILENT_AFTER
        silent = now - self._changed_at
        return silent if silent > self._limit else None

    def stopped_answering(self, silent: float) -> str:
        return (
            f"{self.who} stopped answering (no sign of life for {silent:.1f} s): it was "
            "stopped (SIGSTOP), hangs, or its host is gone"
        )


def _progress_known(file: Path) -> RunResult | None:
    """The clock's last progress report (see :meth:`Clock.progress`), if it wrote one."""
    try:
        return msgspec.json.decode(file.read_bytes(), type=RunResult)
    except (OSError, msgspec.DecodeError):
        return None


def _supervise_until_clock_exits(
    supervisor: Supervisor,
    clock_id: str,
    progress: Progress | None,
    signals: SignalFlag,
    pulses: Mapping[str, _Pulse],
    result_file: Path,
) -> str | None:
    """Supervise until the clock exits or writes its result (None) or the run breaks (why); a
    signal ends it too. Once the result is written, the clock's silence as it winds down is
    no news (the caller waits a while for every process to exit, then stops them)."""
    clock = supervisor.processes[clock_id]
    broker = supervisor.processes["broker"]
    while signals.received is None:
        if result_file.exists():
            return None
        for ended in supervisor.check():
            if ended is broker:
                return f"the broker process {_ended(ended.returncode)} before the run ended"
            if ended is clock:
                return None
            if ended.returncode not in (0, None) and progress is not None:
                progress(f"{ended.name} failed with code {ended.returncode} and stays down")
        for pulse in pulses.values():
            silent = pulse.silence()
            if silent is not None:
                return pulse.stopped_answering(silent)
        time.sleep(0.05)
    return None


def _why_the_clock_ended(supervisor: Supervisor, clock_id: str, options: RunOptions) -> str:
    """Why the clock process ended without a result, naming the culprit."""
    broker = supervisor.processes["broker"]
    if broker.process.poll() is not None:
        return f"the broker process {_ended(broker.process.returncode)} before the run ended"
    code = supervisor.processes[clock_id].returncode
    if code is not None and code < 0:
        return f"the clock process {clock_id!r} {_ended(code)} before finishing the run"
    if options.log_dir is not None:
        where = f"read {options.log_dir / clock_id}.*.jsonl"
    else:
        where = f"rerun with --log DIR and read DIR/{clock_id}.*.jsonl"
    return (
        f"the clock process {clock_id!r} exited with code {code} before finishing the run; {where}"
    )


def _ended(code: int | None) -> str:
    """``exited with code 1`` or ``was killed by SIGKILL``, for a process's return code."""
    if code is not None and code < 0:
        return f"was killed by {signal_name(-code)}"
    return f"exited with code {code}"


class RunFailed(WarbandError):
    """A run broke before its clock had a result (a process died or stopped answering); every
    process of it was stopped. ``report`` sums it up (``completed`` false, the reason naming the
    culprit, what was known of the run by then)."""

    def __init__(self, report: RunReport) -> None:
        super().__init__(report.finish_reason)
        self.report = report


class RunInterrupted(Interrupted):
    """A signal ended a run before it had a result; every process of it was stopped.

    ``report`` sums up the interrupted run (``completed`` false, the signal as its reason), so
    ``warband run --json`` still ends with its JSON line.
    """

    def __init__(self, signum: int, report: RunReport) -> None:
        super().__init__(signum)
        self.report = report


def interrupted_report(
    scenario: Scenario,
    params: Params,
    options: RunOptions,
    signum: int,
    started: float,
    *,
    processes: int = 1,
    pids: dict[str, list[int]] | None = None,
    partial: RunResult | None = None,
) -> RunReport:
    """The summary of a run that a signal ended before its clock had a result."""
    reason = f"interrupted by {signal_name(signum)}"
    return failed_report(
        scenario, params, options, reason, started, processes=processes, pids=pids, partial=partial
    )


def failed_report(
    scenario: Scenario,
    params: Params,
    options: RunOptions,
    reason: str,
    started: float,
    *,
    processes: int = 1,
    pids: dict[str, list[int]] | None = None,
    partial: RunResult | None = None,
) -> RunReport:
    """The summary of a run that ended without its clock's result (``completed`` false).

    ``partial`` is what the clock knew by then (:meth:`Clock.progress`): its ticks, message
    counts, departures and failures are reported as far as they go; without it they are 0.
    """
    known = partial or RunResult(ticks=0, finish_reason=reason)
    return RunReport(
        scenario=scenario.name,
        seed=options.seed,
        ticks=known.ticks,
        processes=processes,
        messages_sent=known.messages_sent,
        messages_received=known.messages_received,
        outcome=Outcome(success=False, summary=reason),
        finish_reason=reason,
        completed=False,
        duration_s=time.monotonic() - started,
        params=dict(params),
        pids=pids or {"main": [os.getpid()]},
        messages_rejected=known.messages_rejected,
        tick_timeouts=known.tick_timeouts,
        log_dir=str(options.log_dir) if options.log_dir else None,
        departed=dict(known.departed),
        handler_failures=dict(known.handler_failures),
        undeliverable=dict(known.undeliverable),
        conflated=dict(known.conflated),
        would_block=dict(known.would_block),
    )


def _check_curve_keys(directory: Path, endpoint: str, agent_ids: list[str]) -> None:
    """Refuse a CURVE run before any process starts if a key file it needs is missing."""
    from .messaging.curve import check_curve_endpoint, check_run_keys

    check_curve_endpoint(endpoint)
    check_run_keys(directory, [*agent_ids, SUPERVISOR_ID])


def _supervisor_keys(options: RunOptions) -> CurveClient | None:
    """The keys the supervisor reports give-ups to a CURVE broker with (its own pair)."""
    if options.curve is None:
        return None
    from .messaging.curve import load_client

    return load_client(options.curve, SUPERVISOR_ID)


def _process_flags(options: RunOptions) -> list[str]:
    """The flags every process of a run gets, the broker as well as the agents."""
    flags: list[str] = []
    if options.log_dir is not None:
        flags += ["--log", str(options.log_dir)]
    if options.otel is not None:
        flags += ["--otel", options.otel]
    if options.live is not None:
        flags += ["--live", options.live]
    if options.curve is not None:
        flags += ["--curve", str(options.curve)]
    return flags


def _broker_argv(endpoint: str, options: RunOptions) -> list[str]:
    argv = [sys.executable, "-m", "warband", "broker", "--bind", endpoint]
    return argv + (["--quiet"] if options.quiet else []) + _process_flags(options)


def _agent_argv(scenario_path: Path, endpoint: str, options: RunOptions) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        "warband",
        "agent",
        "--connect",
        endpoint,
        "--scenario",
        str(scenario_path),
        "--seed",
        str(options.seed),
        "--mode",
        options.mode,
        "--tick-timeout",
        str(options.tick_timeout),
        "--start-timeout",
        str(options.start_timeout),
        "--broker-timeout",
        str(options.broker_timeout),
    ]
    if options.ticks is not None:
        argv += ["--ticks", str(options.ticks)]
    for key, value in options.params.items():
        argv += ["--param", f"{key}={value}"]
    for agent, tick in options.kills.items():
        argv += ["--kill", f"{agent}@{tick}"]
    if options.planning_budget is not None:
        argv += ["--planning-budget", str(options.planning_budget)]
    if options.quiet:
        argv.append("--quiet")
    return argv + _process_flags(options)


def run_agent(
    scenario: Scenario,
    agent_id: str,
    endpoint: str,
    options: RunOptions,
    result_file: Path | None = None,
    heartbeat: Path | None = None,
) -> int:
    """Run one actor of ``scenario`` (or its clock) in this process; the ``warband agent`` body.

    The clock prints its progress on stderr (``[scenario] tick 12/60``, unless
    ``options.quiet``). Given ``heartbeat`` (it runs under ``warband run --processes``), it
    replaces that file every :data:`HEARTBEAT_INTERVAL` s with its progress
    (:meth:`Clock.progress`), the launcher's sign that it still answers, and writes the bare
    :class:`RunResult` to ``result_file`` for the launcher to judge. Without one (a clock
    started by hand), it judges the run itself: it prints the verdict on stdout and adds
    ``outcome``, ``outcome_summary`` and ``outcome_details`` to ``result_file``.
    """
    params = scenario.resolve_params(options.params)
    actors = scenario.build(params, options.seed)
    arm_kills(scenario, actors, options)
    share_planning([a for a in actors if a.id == agent_id], options)
    if agent_id == scenario.clock_id:
        clock = build_clock(scenario, actors, options, params, _clock_progress(scenario, options))
        beat = _Beat(clock, heartbeat, result_file) if heartbeat is not None else None
        signum = event_loop.run(_run_clock(clock, endpoint, options, beat))
        if clock.result is None:
            return 1 if signum is None else 128 + signum
        if beat is not None:
            beat.write_result()
        else:
            _judge_alone(scenario, params, clock.result, result_file)
        if not clock.result.started:
            raise WarbandError(f"the run never started: {clock.result.finish_reason}")
        return 0
    return _run_hosted(scenario, actors, [agent_id], endpoint, options)


def run_agents(scenario: Scenario, agent_ids: list[str], endpoint: str, options: RunOptions) -> int:
    """Run several actors of ``scenario`` in this process, one event loop for them all; the
    ``warband agent --ids a,b,c`` body (a worker of ``warband run --workers N``).

    Each actor has its own connection to the broker, as alone in a process, and a keeper
    thread (:mod:`warband.messaging.keeper`) vouches for them all, so a long tick departs
    none. An actor that fails leaves the run (logged ``actor.crashed``) while the others play
    on; the process exits 1 then, and 0 when they all stopped cleanly, 128 + N on signal N.
    Raises :class:`ConfigurationError` for an id the scenario does not build, one named twice,
    or the clock's (it runs alone: ``--id``).
    """
    if not agent_ids:
        raise ConfigurationError("--ids names no agent; pass ids separated by commas: a,b,c")
    if scenario.clock_id in agent_ids and len(agent_ids) > 1:
        raise ConfigurationError(
            f"--ids names the clock {scenario.clock_id!r} with other agents: the clock runs "
            f"alone in its process (`warband agent --id {scenario.clock_id}`)"
        )
    twice = sorted({agent for agent in agent_ids if agent_ids.count(agent) > 1})
    if twice:
        raise ConfigurationError(f"--ids names {', '.join(twice)} twice; an agent runs once")
    if agent_ids == [scenario.clock_id]:
        return run_agent(scenario, scenario.clock_id, endpoint, options)
    params = scenario.resolve_params(options.params)
    actors = scenario.build(params, options.seed)
    arm_kills(scenario, actors, options)
    share_planning([a for a in actors if a.id in agent_ids], options)
    return _run_hosted(scenario, actors, agent_ids, endpoint, options)


def _run_hosted(
    scenario: Scenario,
    actors: list[Actor],
    agent_ids: list[str],
    endpoint: str,
    options: RunOptions,
) -> int:
    """Run the actors ``agent_ids`` of those built, in one event loop, until they stop."""
    by_id = {actor.id: actor for actor in actors}
    unknown = [agent for agent in agent_ids if agent not in by_id]
    if unknown:
        known = ", ".join([scenario.clock_id, *sorted(by_id)])
        raise ConfigurationError(
            f"scenario {scenario.name!r} has no agent {unknown[0]!r}; known agents: {known}"
        )
    hosted = [by_id[agent] for agent in agent_ids]
    for actor in hosted:
        actor.shares_process = len(hosted) > 1
    crashed, signum = event_loop.run(_run_many(hosted, endpoint, options, scenario.clock_id))
    if signum is not None:
        return 128 + signum
    if crashed and len(hosted) == 1:
        raise crashed[0]  # alone, its error is the process's, as it always was
    return 1 if crashed else 0


async def _run_many(
    actors: list[Actor], endpoint: str, options: RunOptions, clock_id: str
) -> tuple[list[BaseException], int | None]:
    """Run ``actors`` connected to ``endpoint`` until they all stop; SIGTERM, SIGINT or SIGHUP
    stop them cleanly. Returns the errors of the actors that failed, and the number of the
    signal that stopped them, or None."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    crashed: list[BaseException] = []

    async def run_one(actor: Actor) -> None:
        try:
            await _run_connected(actor, endpoint, options, clock_id, context)
        except Exception as error:
            crashed.append(error)
            if len(actors) > 1:
                get_logger(agent=actor.id).error("actor.crashed", error=repr(error))

    async def run_all() -> None:
        await asyncio.gather(*(run_one(actor) for actor in actors))

    def stop_all(reason: str) -> None:
        for actor in actors:
            actor.stop(reason)

    # CURVE binds each connection to its agent's key: the keeper has none of its own.
    keeper = None
    if options.curve is None:
        keeper = ProcessKeeper(
            endpoint,
            lambda: [actor.id for actor in actors if actor.registered],
            context=context,
            secret=options.secret,
        )
    try:
        async with keeper if keeper is not None else contextlib.nullcontext():
            signum = await stop_on_signal(run_all(), stop_all)
    finally:
        await asyncio.to_thread(context.term)
    return crashed, signum


def _clock_progress(scenario: Scenario, options: RunOptions) -> Progress | None:
    """The clock process's progress lines on stderr, as ``warband run`` prints its own."""
    if options.quiet:
        return None

    def progress(text: str) -> None:
        print(f"[{scenario.name}] {text}", file=sys.stderr, flush=True)

    return progress


def _judge_alone(
    scenario: Scenario, params: Params, result: RunResult, result_file: Path | None
) -> None:
    """A clock started by hand: the verdict on stdout, and in ``result_file`` with the result."""
    outcome = scenario.judge(result, params) if result.started else None
    if result_file is not None:
        verdict: dict[str, Any] = {}
        if outcome is not None:
            verdict = {
                "outcome": "success" if outcome.success else "failure",
                "outcome_summary": outcome.summary,
                "outcome_details": outcome.details,
            }
        # The keys of RunResult, then the verdict's (as `warband run --json` names them).
        result_file.write_bytes(msgspec.json.encode({**msgspec.structs.asdict(result), **verdict}))
    if outcome is not None:
        verdict_word = "SUCCESS" if outcome.success else "FAILURE"
        print(f"scenario {scenario.name}: {verdict_word} - {outcome.summary}", flush=True)
        print(f"  ticks {result.ticks} ({result.finish_reason}), seed {result.seed}", flush=True)


async def _run_clock(
    clock: Clock, endpoint: str, options: RunOptions, beat: _Beat | None
) -> int | None:
    """Run ``clock`` until it stops (with its keeper, as any process of actors); SIGTERM,
    SIGINT or SIGHUP stop it cleanly. Returns the number of the signal that stopped it, or
    None; raises what the clock raised."""
    beating = None
    if beat is not None:
        beating = asyncio.create_task(beat.run())
    try:
        crashed, signum = await _run_many([clock], endpoint, options, clock.id)
    finally:
        if beating is not None:
            beating.cancel()
    if crashed:
        raise crashed[0]
    return signum


class _Beat:
    """The clock's signs of life for the launcher (``warband run --processes``): its progress
    in the heartbeat file every :data:`HEARTBEAT_INTERVAL` s, and its result file as soon as
    the run is over, before the process winds down (on a busy machine closing connections and
    exiting may take longer than the launcher waits for a sign of life; with the result
    written, it waits for the exit no more).

    The loop notes its progress; a thread writes it. A long tick (a big world's step on a busy
    machine) holds the loop for seconds but not the interpreter, and the clock is busy, not
    hung: it still beats. A loop that has not turned for :data:`STUCK_AFTER` s is stuck, and
    the beats stop, as they do at once for a process that is stopped (SIGSTOP) or gone (as
    the keeper vouches for a process's agents: :mod:`warband.messaging.keeper`).
    """

    def __init__(self, clock: Clock, heartbeat: Path, result_file: Path | None) -> None:
        self.clock = clock
        self.heartbeat = heartbeat
        self.result_file = result_file
        self._written = False
        self._progress = b""
        self._turned = time.monotonic()
        self._done = threading.Event()

    async def run(self) -> None:
        self._note()
        writer = threading.Thread(target=self._write, name="warband-heartbeat", daemon=True)
        writer.start()
        try:
            while True:
                self._note()
                if self.clock.result is not None:
                    self.write_result()
                await asyncio.sleep(HEARTBEAT_INTERVAL)
        finally:
            self._done.set()

    def _note(self) -> None:
        """On the loop: the progress to write, and that the loop turned."""
        self._progress = msgspec.json.encode(self.clock.progress(""))
        self._turned = time.monotonic()

    def _write(self) -> None:
        """In the thread: beat while the loop turned within STUCK_AFTER s."""
        while not self._done.is_set():
            if time.monotonic() - self._turned <= STUCK_AFTER:
                write_heartbeat(self.heartbeat, self._progress)
            self._done.wait(HEARTBEAT_INTERVAL)

    def write_result(self) -> None:
        """Write the run's result once, whole (a reader never sees half of it)."""
        if self._written or self.clock.result is None or self.result_file is None:
            return
        self._written = True
        write_heartbeat(self.result_file, msgspec.json.encode(self.clock.result))


async def _run_connected(
    actor: Actor,
    endpoint: str,
    options: RunOptions,
    clock_id: str,
    context: zmq.Context[zmq.Socket[bytes]],
) -> None:
    curve = None
    if options.curve is not None:
        from .messaging.curve import load_client

        curve = load_client(options.curve, actor.id)
    await actor.run(
        endpoint,
        context=context,
        mode=options.mode,
        clock_id=clock_id,
        broker_timeout=options.broker_timeout,
        # The wait for a first broker is a wait for a lost one too: --broker-timeout.
        register_timeout=options.broker_timeout,
        curve=curve,
        secret=options.secret,
        run_id=options.run_id,
    )


def _report(
    scenario: Scenario,
    params: Params,
    options: RunOptions,
    result: RunResult,
    started: float,
    *,
    processes: int,
    pids: dict[str, list[int]],
) -> RunReport:
    outcome = scenario.judge(result, params)
    completed = result.completed and not result.missing
    if outcome.success and not completed:
        # A run that did not complete is no success, whatever the partial state looks like.
        summary = f"the run did not complete ({result.finish_reason}); {outcome.summary}"
        outcome = Outcome(False, summary, outcome.details)
    return RunReport(
        scenario=scenario.name,
        seed=options.seed,
        ticks=result.ticks,
        processes=processes,
        messages_sent=result.messages_sent,
        messages_received=result.messages_received,
        outcome=outcome,
        finish_reason=result.finish_reason,
        completed=completed,
        duration_s=time.monotonic() - started,
        params=dict(params),
        pids=pids or {"main": [os.getpid()]},
        messages_rejected=result.messages_rejected,
        tick_timeouts=result.tick_timeouts,
        missing=list(result.missing),
        log_dir=str(options.log_dir) if options.log_dir else None,
        departed=dict(result.departed),
        handler_failures=dict(result.handler_failures),
        undeliverable=dict(result.undeliverable),
        conflated=dict(result.conflated),
        would_block=dict(result.would_block),
    )


def format_report(report: RunReport) -> str:
    """A human summary of a run, a few lines long."""
    verdict = "SUCCESS" if report.outcome.success else "FAILURE"
    if report.outcome.success and not report.clean:
        verdict = "SUCCESS, NOT CLEAN"
    lines = [
        f"scenario {report.scenario}: {verdict} - {report.outcome.summary}",
        f"  ticks {report.ticks} ({report.finish_reason}), seed {report.seed}, "
        f"{report.duration_s:.2f} s",
        f"  messages: {report.messages_sent} sent, {report.messages_received} received, "
        f"{report.messages_rejected} rejected",
        f"  processes: {report.processes}"
        + (f", restarts: {report.restarts}" if report.restarts else ""),
    ]
    if report.processes > 1:
        for name, pids in sorted(report.pids.items()):
            agents = report.workers.get(name)
            hosts = f" ({len(agents)} agents)" if agents else ""
            lines.append(f"    {name}: pid {', '.join(map(str, pids))}{hosts}")
    if report.tick_timeouts:
        lines.append(f"  tick timeouts: {report.tick_timeouts}")
    if report.missing:
        lines.append(f"  no final report from: {', '.join(report.missing)}")
    for agent, reason in report.departed.items():
        lines.append(f"  left the run: {agent} ({reason})")
    if report.handler_failures:
        counts = ", ".join(f"{a} {n}" for a, n in report.handler_failures.items())
        lines.append(f"  handler failures: {counts} (actor.failure events in the log)")
    if report.undeliverable:
        counts = ", ".join(f"{a} {n}" for a, n in report.undeliverable.items())
        lines.append(f"  undeliverable messages: {counts}")
    if report.conflated:
        counts = ", ".join(f"{a} {n}" for a, n in report.conflated.items())
        lines.append(f"  percepts conflated (a newer one came first): {counts}")
    if report.would_block:
        counts = ", ".join(f"{a} {n}" for a, n in report.would_block.items())
        lines.append(f"  sends refused, queue to the broker full: {counts}")
    if report.log_dir:
        lines.append(f"  logs: {report.log_dir} (read them with `warband trace {report.log_dir}`)")
    return "\n".join(lines)


def report_json_line(report: RunReport) -> str:
    """The ``--json`` output: one line."""
    return json.dumps(report.as_json(), sort_keys=False)
