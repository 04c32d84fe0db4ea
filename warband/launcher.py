"""Running a scenario: everything in one process, or the broker and every actor in its own.

Both paths build the same actors from the same parameters and seed and drive them with the same
clock, so a lockstep run sends the same messages in the same per-tick order either way.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import zmq

from .exceptions import ConfigurationError, WarbandError
from .messaging import event_loop
from .messaging.actor import Actor, Mode
from .messaging.broker import Broker
from .messaging.clock import Clock, RunResult
from .messaging.supervisor import Supervisor
from .messaging.tracing import get_logger
from .scenario import Outcome, Params, Scenario

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
        }


@dataclass(frozen=True)
class RunOptions:
    """How to run a scenario; the CLI fills this from its flags."""

    seed: int = 0
    ticks: int | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    log_dir: Path | None = None
    mode: Mode = "lockstep"
    tick_timeout: float = 10.0
    endpoint: str | None = None


def build_clock(
    scenario: Scenario, actors: list[Actor], options: RunOptions, params: Params
) -> Clock:
    """The clock that drives ``actors`` for ``scenario``: the world actor if it declares one."""
    ticks = options.ticks if options.ticks is not None else scenario.ticks
    participants = [a.id for a in actors]
    model = scenario.build_world(params, options.seed)
    if model is not None:
        from .world.actor import WorldActor

        return WorldActor(
            model,
            scenario.clock_id,
            participants=participants,
            ticks=ticks,
            seed=options.seed,
            tick_timeout=options.tick_timeout,
        )
    return Clock(
        scenario.clock_id,
        participants=participants,
        ticks=ticks,
        seed=options.seed,
        tick_timeout=options.tick_timeout,
    )


def run_in_process(
    scenario: Scenario, options: RunOptions, progress: Progress | None = None
) -> RunReport:
    """Run the broker (a thread) and every actor (asyncio tasks) in this process."""
    params = scenario.resolve_params(options.params)
    actors = scenario.build(params, options.seed)
    clock = build_clock(scenario, actors, options, params)
    started = time.monotonic()
    result = event_loop.run(_run_actors(actors, clock, options, progress))
    return _report(scenario, params, options, result, started, processes=1, pids={})


async def _run_actors(
    actors: list[Actor], clock: Clock, options: RunOptions, progress: Progress | None
) -> RunResult:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    endpoint = options.endpoint or f"inproc://warband-{uuid.uuid4().hex[:12]}"
    broker = Broker(endpoint, context=context)
    broker.start()
    if progress is not None:
        _watch_progress(clock, progress)
    tasks = [
        asyncio.create_task(
            actor.run(endpoint, context=context, mode=options.mode, clock_id=clock.id)
        )
        for actor in actors
    ]
    try:
        await clock.run(endpoint, context=context, mode=options.mode)
        done, stragglers = await asyncio.wait(tasks, timeout=clock.shutdown_timeout)
        for task in stragglers:
            task.cancel()
        for task in done:
            if task.exception() is not None:
                get_logger(agent="launcher").error("actor.crashed", error=repr(task.exception()))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        broker.stop()
        context.term()
    if clock.result is None:
        raise WarbandError("the clock stopped without a result; see the log for actor.failure")
    return clock.result


def _watch_progress(clock: Clock, progress: Progress) -> None:
    every = max(1, clock.max_ticks // 10)
    original = clock.advance

    async def advance_and_report(tick: int) -> None:
        await original(tick)
        if tick % every == 0 or tick == clock.max_ticks:
            progress(f"tick {tick}/{clock.max_ticks}")

    clock.advance = advance_and_report  # type: ignore[method-assign]


def run_in_processes(
    scenario: Scenario, options: RunOptions, progress: Progress | None = None
) -> RunReport:
    """Run the broker, the clock and every actor each in its own OS process, supervised."""
    if scenario.path is None:
        raise ConfigurationError("a multi-process run needs a scenario loaded from a file")
    params = scenario.resolve_params(options.params)
    actor_ids = [a.id for a in scenario.build(params, options.seed)]
    workdir = Path(tempfile.mkdtemp(prefix="warband-run-"))
    endpoint = options.endpoint or f"ipc://{workdir / 'broker.sock'}"
    result_file = workdir / "result.json"
    supervisor = Supervisor()
    started = time.monotonic()
    try:
        supervisor.start("broker", _broker_argv(endpoint, options), restartable=False)
        common = _agent_argv(scenario.path, endpoint, options)
        clock_argv = [*common, "--id", scenario.clock_id, "--result", str(result_file)]
        supervisor.start(scenario.clock_id, clock_argv, restartable=False)
        for actor_id in actor_ids:
            supervisor.start(actor_id, [*common, "--id", actor_id])
        _supervise_until_clock_exits(supervisor, scenario.clock_id, progress)
        supervisor.stop_restarting()
        supervisor.wait_all(timeout=10.0, exclude=("broker",))
    finally:
        supervisor.stop_all()
    if not result_file.exists():
        code = supervisor.processes[scenario.clock_id].returncode
        raise WarbandError(
            f"the clock process exited with code {code} before finishing the run; "
            f"rerun with --log DIR and read {scenario.clock_id}.*.jsonl"
        )
    result = msgspec.json.decode(result_file.read_bytes(), type=RunResult)
    pids = {name: managed.pids for name, managed in supervisor.processes.items()}
    report = _report(
        scenario, params, options, result, started, processes=len(supervisor.processes), pids=pids
    )
    report.restarts = supervisor.total_restarts
    return report


def _supervise_until_clock_exits(
    supervisor: Supervisor, clock_id: str, progress: Progress | None
) -> None:
    clock = supervisor.processes[clock_id]
    broker = supervisor.processes["broker"]
    while True:
        for ended in supervisor.check():
            if ended is broker:
                raise WarbandError(f"the broker process exited early (code {ended.returncode})")
            if ended is clock:
                return
            if ended.returncode not in (0, None) and progress is not None:
                progress(f"{ended.name} failed with code {ended.returncode} and stays down")
        time.sleep(0.05)


def _broker_argv(endpoint: str, options: RunOptions) -> list[str]:
    argv = [sys.executable, "-m", "warband", "broker", "--bind", endpoint]
    if options.log_dir is not None:
        argv += ["--log", str(options.log_dir)]
    return argv


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
    ]
    if options.ticks is not None:
        argv += ["--ticks", str(options.ticks)]
    for key, value in options.params.items():
        argv += ["--param", f"{key}={value}"]
    if options.log_dir is not None:
        argv += ["--log", str(options.log_dir)]
    return argv


def run_agent(
    scenario: Scenario,
    agent_id: str,
    endpoint: str,
    options: RunOptions,
    result_file: Path | None = None,
) -> int:
    """Run one actor of ``scenario`` (or its clock) in this process; the ``warband agent`` body."""
    params = scenario.resolve_params(options.params)
    actors = scenario.build(params, options.seed)
    if agent_id == scenario.clock_id:
        clock = build_clock(scenario, actors, options, params)
        event_loop.run(_run_single(clock, endpoint, options))
        if clock.result is None:
            return 1
        if result_file is not None:
            result_file.write_bytes(msgspec.json.encode(clock.result))
        return 0
    by_id = {actor.id: actor for actor in actors}
    if agent_id not in by_id:
        known = ", ".join([scenario.clock_id, *sorted(by_id)])
        raise ConfigurationError(
            f"scenario {scenario.name!r} has no agent {agent_id!r}; known agents: {known}"
        )
    event_loop.run(_run_single(by_id[agent_id], endpoint, options, scenario.clock_id))
    return 0


async def _run_single(
    actor: Actor, endpoint: str, options: RunOptions, clock_id: str | None = None
) -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        await actor.run(endpoint, context=context, mode=options.mode, clock_id=clock_id or actor.id)
    finally:
        context.term()


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
    completed = not result.missing and not result.finish_reason.startswith("participants never")
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
    )


def format_report(report: RunReport) -> str:
    """A human summary of a run, a few lines long."""
    verdict = "SUCCESS" if report.outcome.success else "FAILURE"
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
            lines.append(f"    {name}: pid {', '.join(map(str, pids))}")
    if report.tick_timeouts:
        lines.append(f"  tick timeouts: {report.tick_timeouts}")
    if report.missing:
        lines.append(f"  no final report from: {', '.join(report.missing)}")
    if report.log_dir:
        lines.append(f"  logs: {report.log_dir} (read them with `warband trace {report.log_dir}`)")
    return "\n".join(lines)


def report_json_line(report: RunReport) -> str:
    """The ``--json`` output: one line."""
    return json.dumps(report.as_json(), sort_keys=False)
