"""``warband bench warzone``: ticks per second and per-tick latency of whole Warzone matches.

A match of ``scenarios/warzone.py`` (both factions led by the Killzone hierarchy: commanders,
squads, bots, each an agent running the one agent loop with its HTN domain) is played for a
fixed number of lockstep ticks with a fixed seed, at 6 and 12 bots per faction, once with every
actor in this process and once with every actor in its own OS process (``--processes``). Next
to each configuration the baseline of the same run: ``scenarios/skirmish.py`` (scripted bots, no
planner) at the same size, the same way. Figures per configuration:

- **ticks/s**: ticks completed divided by the time from the first tick's start to the last
  tick's end (start-up, connecting and shutting down are not in it; ``startup_s`` is given
  apart). The median over the ``--repeat`` runs.
- **tick ms p50 / p99**: the duration of each lockstep tick (the world broadcasts ``Tick``,
  every agent decides and acts, every ``TickDone`` arrives, the world steps and sends the
  percepts), nearest-rank percentiles over the ticks of every run.
- **planning ms**: per layer (``bot``, ``squad``, ``commander``), the planning time its agents
  spent, summed over the agents (their final states' ``planning_ms``), the median over the runs;
  ``planning_ms_per_tick`` divides it by the ticks run. With ``--processes`` the layers plan in
  parallel processes, so their sum may exceed the wall time.

How the ticks are timed without changing the run: the world is the run's clock, and
:class:`~warband.messaging.clock.Clock` calls ``on_tick_complete(tick)`` after each tick. The
benchmark builds the scenario's world actor itself (the same class, world, participants,
observers and seed as ``warband run`` builds; only that callback and the recording of when the
first tick starts are added) and drives it:

- in one process with :func:`warband.launcher.run_actors_in_process`, the runner of
  ``warband run``;
- with processes exactly as ``warband run --processes`` starts them (``warband broker`` and one
  ``warband agent --id ID`` per actor, the same arguments, under a
  :class:`~warband.messaging.supervisor.Supervisor`), except that the world runs in this
  benchmark's process instead of a ``warband agent --id world`` child: the benchmark process does
  nothing else while the match runs. No ``--log`` directory: tracing would be measured too.

The match may end before ``--ticks`` (a team wins): the ticks actually run are reported. The
targets of issue 10, 12v12 at least 20 ticks/s with processes (on 2 cores) and at least 30 in one
process, are checked and printed.

``main(argv)`` is the entry point (``warband bench warzone`` loads this file by path). With
``--json`` the last stdout line is one JSON object; ``results`` holds one entry per warzone
configuration whose keys in ``JSON_KEYS`` are a public contract; ``baseline`` holds the skirmish
entries (same keys). Progress goes to stderr.
"""

# No `from __future__ import annotations`: `warband bench` executes this file without adding it
# to sys.modules (see bench/messaging.py).

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import zmq

import warband
from warband.agents import Agent, GoapDecider, HtnDecider, Role
from warband.launcher import run_actors_in_process
from warband.messaging import event_loop
from warband.messaging.actor import Actor
from warband.messaging.broker import remove_ipc_socket_file
from warband.messaging.clock import RunResult
from warband.messaging.supervisor import Supervisor
from warband.messaging.tracing import configure_logging
from warband.scenario import Params, Scenario, load_scenario
from warband.world.actor import WorldActor

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `warband bench` runs this file by path; bench is a package
    sys.path.insert(0, str(REPO))

from bench.measure import BenchmarkError, percentile  # noqa: E402

JSON_KEYS: Final = (
    "bots_per_team",
    "processes",
    "ticks_per_s",
    "tick_ms_p50",
    "tick_ms_p99",
    "planning_ms",
)
"""Keys every entry of ``results`` (and ``baseline``) holds (a public contract)."""

ROOT: Final = Path(__file__).resolve().parent.parent
WARZONE: Final = ROOT / "scenarios" / "warzone.py"
SKIRMISH: Final = ROOT / "scenarios" / "skirmish.py"

SIZES: Final = (6, 12)
QUICK_SIZES: Final = (2,)
TICKS: Final = 150
REPEAT: Final = 3
QUICK_TICKS: Final = 20
LAYERS: Final = ("bot", "squad", "commander")

TARGET_BOTS: Final = 12
TARGETS: Final = {True: 20.0, False: 30.0}
"""Issue 10's speed targets for 12v12, in lockstep ticks per second, by ``processes``."""

_START_TIMEOUT_S: Final = 120.0
"""Seconds the world waits for every agent process to connect (dozens of imports on 2 cores)."""
_TICK_TIMEOUT_S: Final = 10.0
_EXIT_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True)
class Config:
    """One measured configuration: a scenario at a size, in one process or in many."""

    scenario: str
    """``warzone`` or ``skirmish`` (the baseline)."""
    bots: int
    processes: bool
    every_tick: bool = False
    """Every agent plans every tick (its role's ``replan_every`` set to 1): the comparison for
    deciding again only when something changed (in one process only)."""

    @property
    def label(self) -> str:
        where = "processes" if self.processes else "in-process"
        every = ", every tick" if self.every_tick else ""
        return f"{self.scenario} {self.bots}v{self.bots} {where}{every}"


@dataclass
class Match:
    """What one run of one configuration measured."""

    ticks: int
    tick_s: list[float]
    """The duration of every tick, in order."""
    startup_s: float
    """From starting the run to the first tick (processes started, everyone connected)."""
    agents: int
    """Actors of the match, the world not counted."""
    result: RunResult

    @property
    def ticks_per_s(self) -> float:
        total = sum(self.tick_s)
        return self.ticks / total if total > 0 else 0.0

    def planning_ms(self) -> dict[str, float]:
        """Planning time per layer, summed over that layer's agents."""
        return self._per_layer("planning_ms")

    def reused_share(self) -> dict[str, float]:
        """Per layer, the share of its decisions taken again without planning (nothing the
        last one read had changed)."""
        made, reused = self._per_layer("decisions"), self._per_layer("decisions_reused")
        return {layer: reused.get(layer, 0.0) / n for layer, n in made.items() if n}

    def _per_layer(self, key: str) -> dict[str, float]:
        layers: dict[str, float] = {}
        for state in self.result.final_states.values():
            role = state.get("role")
            if role is not None and key in state:
                layers[str(role)] = layers.get(str(role), 0.0) + float(state[key])
        return layers


@dataclass
class Runs:
    """Every run of one configuration."""

    config: Config
    matches: list[Match] = field(default_factory=list)


class _TimedWorld(WorldActor):
    """The scenario's world actor, noting when its first tick starts (nothing else differs)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, on_tick_complete=self._note_tick_end, **kwargs)
        self.created = time.perf_counter()
        self.ticks_started_at: float | None = None
        self.tick_ends: list[float] = []

    async def before_ticks(self) -> None:
        await super().before_ticks()
        # The first tick starts here: the first percepts are out, Tick(1) comes next.
        self.ticks_started_at = time.perf_counter()

    def _note_tick_end(self, tick: int) -> None:
        self.tick_ends.append(time.perf_counter())

    def tick_durations(self) -> list[float]:
        if self.ticks_started_at is None:
            return []
        starts = [self.ticks_started_at, *self.tick_ends[:-1]]
        return [end - start for start, end in zip(starts, self.tick_ends, strict=True)]


def main(argv: list[str]) -> int:
    """Run the benchmark; prints a table (and with ``--json`` one JSON line); 0 on success."""
    parser = _parser()
    args = parser.parse_args(argv)
    for name in ("ticks", "repeat"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    if args.sizes and not all(1 <= n <= 12 for n in args.sizes):
        parser.error(f"--sizes: bots per team must be 1..12, got {args.sizes}")
    sizes = tuple(args.sizes) if args.sizes else (QUICK_SIZES if args.quick else SIZES)
    ticks = args.ticks if args.ticks is not None else (QUICK_TICKS if args.quick else TICKS)
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else REPEAT)
    modes = (False,) if args.no_processes else (False, True)
    configure_logging(None, "bench")  # as `warband run` without --log: warnings and errors only
    scenarios = {"warzone": load_scenario(WARZONE), "skirmish": load_scenario(SKIRMISH)}
    configs = [
        Config(name, bots, processes)
        for bots in sizes
        for processes in modes
        for name in ("warzone", "skirmish")
    ]
    if not args.no_every_tick:
        configs += [Config("warzone", bots, False, every_tick=True) for bots in sizes]
    runs = {config: Runs(config) for config in configs}
    load_before = _load_average()
    # Interleaved, so that drift in the machine's load hits every configuration alike.
    for round_ in range(1, repeat + 1):
        for config in configs:
            _progress(f"{config.label}: run {round_}/{repeat}, {ticks} ticks, seed {args.seed}")
            match = _play(scenarios[config.scenario], config, ticks, args.seed)
            _progress(
                f"{config.label}: {match.ticks} ticks, {match.ticks_per_s:.1f} ticks/s "
                f"(start-up {match.startup_s:.1f} s)"
            )
            runs[config].matches.append(match)
    entries = {config: _entry(runs[config]) for config in configs}
    report = _report(entries, configs, ticks, repeat, args.seed)
    report["load_average"] = {"before": load_before, "after": _load_average()}
    print(_table(report))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warband bench warzone",
        description="Ticks per second and per-tick latency of whole Warzone matches (hierarchy "
        "against hierarchy), in one process and with every actor its own process, with each "
        "layer's planning time, next to the scripted-bot skirmish at the same sizes.",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke test: {QUICK_SIZES[0]}v{QUICK_SIZES[0]}, {QUICK_TICKS} ticks",
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", metavar="N", help="bots per team (default 6 12)"
    )
    parser.add_argument(
        "--ticks", type=int, metavar="T", help=f"ticks per match at most (default {TICKS})"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        metavar="R",
        help=f"runs of every configuration, interleaved (default {REPEAT}; 1 with --quick)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of every match (default 1)")
    parser.add_argument(
        "--no-processes", action="store_true", help="only the in-process configurations"
    )
    parser.add_argument(
        "--no-every-tick",
        action="store_true",
        help="not the in-process matches where every agent plans every tick (the comparison "
        "for deciding again only when something changed)",
    )
    return parser


def _load_average() -> float | None:
    """The machine's 1-minute load average (None where the OS does not tell): other work on
    the machine shows in the figures, and this says how much there was."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _progress(message: str) -> None:
    print(f"[bench warzone] {message}", file=sys.stderr, flush=True)


def _params(config: Config) -> dict[str, str]:
    params = {"bots": str(config.bots), "mode": "capture_and_hold"}
    if config.scenario == "warzone":
        params |= {"red": "hierarchy", "blue": "hierarchy"}
    return params


def _play(scenario: Scenario, config: Config, ticks: int, seed: int) -> Match:
    overrides = _params(config)
    params = scenario.resolve_params(overrides)
    actors = scenario.build(params, seed)
    if config.every_tick:
        _plan_every_tick(actors)
    world = _timed_world(scenario, actors, params, ticks, seed)
    if config.processes:
        assert scenario.path is not None  # loaded from a file
        result = _run_in_processes(world, [a.id for a in actors], scenario.path, overrides, seed)
    else:
        result = event_loop.run(run_actors_in_process(actors, world))
    if not result.started or world.ticks_started_at is None:
        raise BenchmarkError(f"{config.label}: the match never started ({result.finish_reason})")
    if result.handler_failures or result.missing or result.departed:
        _progress(
            f"{config.label}: NOT CLEAN: handler failures {result.handler_failures}, "
            f"missing {result.missing}, departed {result.departed}"
        )
    return Match(
        ticks=result.ticks,
        tick_s=world.tick_durations(),
        startup_s=world.ticks_started_at - world.created,
        agents=len(actors),
        result=result,
    )


def _plan_every_tick(actors: list[Actor]) -> None:
    """Make every agent of ``actors`` plan every tick (its role's ``replan_every`` 1), and its
    decider keep nothing for reuse, as a role made with ``replan_every=1`` would."""
    roles: dict[int, Role] = {}
    for actor in actors:
        if isinstance(actor, Agent):
            role = actor.role
            actor.role = roles.setdefault(id(role), replace(role, replan_every=1))
            if isinstance(actor.decider, HtnDecider | GoapDecider):
                actor.decider.remember = False


def _timed_world(
    scenario: Scenario, actors: list[Actor], params: Params, ticks: int, seed: int
) -> _TimedWorld:
    """The world actor ``warband run`` would build for ``scenario`` (launcher.build_clock)."""

    def departure_policy(agent: str, reason: str) -> str | None:
        return scenario.on_departure(agent, reason, params)

    return _TimedWorld(
        scenario.build_world(params, seed),
        scenario.clock_id,
        participants=[a.id for a in actors],
        ticks=ticks,
        seed=seed,
        tick_timeout=_TICK_TIMEOUT_S,
        ready_timeout=_START_TIMEOUT_S,
        departure_policy=departure_policy,
        observers=scenario.build_observers(params),
    )


def _run_in_processes(
    world: _TimedWorld,
    actor_ids: list[str],
    scenario_path: Path,
    params: dict[str, str],
    seed: int,
) -> RunResult:
    """A broker process and one process per actor, as ``warband run --processes``; the world
    (the clock) runs here."""
    supervisor = Supervisor()
    with tempfile.TemporaryDirectory(prefix="warband-bench-", ignore_cleanup_errors=True) as tmp:
        endpoint = f"ipc://{Path(tmp) / 'broker.sock'}"
        warband_cli = [sys.executable, "-m", "warband"]
        agent_argv = [
            *warband_cli,
            "agent",
            "--connect",
            endpoint,
            "--scenario",
            str(scenario_path),
            "--seed",
            str(seed),
            "--ticks",
            str(world.max_ticks),
            "--start-timeout",
            str(_START_TIMEOUT_S),
            *(arg for key, value in params.items() for arg in ("--param", f"{key}={value}")),
        ]
        try:
            supervisor.start(
                "broker", [*warband_cli, "broker", "--bind", endpoint], restartable=False
            )
            for actor_id in actor_ids:
                supervisor.start(actor_id, [*agent_argv, "--id", actor_id], restartable=False)
            event_loop.run(_run_clock(world, endpoint))
            supervisor.wait_all(timeout=_EXIT_TIMEOUT_S, exclude=("broker",))
        finally:
            supervisor.stop_all(last=("broker",))
            remove_ipc_socket_file(endpoint)
    failed = {
        name: managed.returncode
        for name, managed in supervisor.processes.items()
        if managed.returncode not in (0, None)
    }
    if failed:
        _progress(f"processes that failed: {failed}")
    if world.result is None:
        raise BenchmarkError(
            "the world stopped without a result; run the match with "
            "`warband run --processes --log DIR` and read its logs"
        )
    return world.result


async def _run_clock(world: _TimedWorld, endpoint: str) -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        await world.run(endpoint, context=context, mode="lockstep", clock_id=world.id)
    finally:
        await asyncio.to_thread(context.term)


def _entry(runs: Runs) -> dict[str, Any]:
    config, matches = runs.config, runs.matches
    ticks_ms = [s * 1000 for match in matches for s in match.tick_s]
    planning = [match.planning_ms() for match in matches]
    layers = sorted({layer for p in planning for layer in p}, key=_layer_order)
    planning_ms = {
        layer: statistics.median(p.get(layer, 0.0) for p in planning) for layer in layers
    }
    shares = [match.reused_share() for match in matches]
    reused = {layer: statistics.median(s.get(layer, 0.0) for s in shares) for layer in layers}
    ticks = statistics.median(match.ticks for match in matches)
    world = matches[-1].result.final_states.get("world", {})
    outcome = world.get("outcome") or {}
    return {
        "scenario": config.scenario,
        "bots_per_team": config.bots,
        "processes": config.processes,
        "ticks_per_s": round(statistics.median(m.ticks_per_s for m in matches), 2),
        "tick_ms_p50": round(percentile(ticks_ms, 0.5), 3) if ticks_ms else None,
        "tick_ms_p99": round(percentile(ticks_ms, 0.99), 3) if ticks_ms else None,
        "tick_ms_max": round(max(ticks_ms), 3) if ticks_ms else None,
        "planning_ms": {layer: round(ms, 3) for layer, ms in planning_ms.items()},
        "planning_ms_per_tick": {
            layer: round(ms / ticks, 3) if ticks else None for layer, ms in planning_ms.items()
        },
        "reused_share": {layer: round(share, 3) for layer, share in reused.items()},
        "ticks": ticks,
        "runs": len(matches),
        "startup_s": round(statistics.median(m.startup_s for m in matches), 2),
        "agents": matches[-1].agents,
        "winner": outcome.get("winner"),
        "finish_reason": matches[-1].result.finish_reason,
        "tick_timeouts": sum(m.result.tick_timeouts for m in matches),
        "clean": all(
            m.result.clean and not m.result.missing and not m.result.departed for m in matches
        ),
    }


def _layer_order(layer: str) -> tuple[int, str]:
    return (LAYERS.index(layer) if layer in LAYERS else len(LAYERS), layer)


def _report(
    entries: dict[Config, dict[str, Any]],
    configs: list[Config],
    ticks: int,
    repeat: int,
    seed: int,
) -> dict[str, Any]:
    results = [entries[c] for c in configs if c.scenario == "warzone" and not c.every_tick]
    baseline = [entries[c] for c in configs if c.scenario == "skirmish"]
    for config in configs:
        if config.every_tick:
            same = next(c for c in configs if c == replace(config, every_tick=False))
            entries[same]["every_tick"] = entries[config]
    for entry in results:
        base = next(
            b
            for b in baseline
            if (b["bots_per_team"], b["processes"]) == (entry["bots_per_team"], entry["processes"])
        )
        entry["baseline_ticks_per_s"] = base["ticks_per_s"]
        entry["ratio"] = (
            round(entry["ticks_per_s"] / base["ticks_per_s"], 3) if base["ticks_per_s"] else None
        )
    by_config = {(e["bots_per_team"], e["processes"]): e for e in results}
    targets = []
    for processes, target in TARGETS.items():
        measured = by_config.get((TARGET_BOTS, processes), {}).get("ticks_per_s")
        targets.append(
            {
                "bots_per_team": TARGET_BOTS,
                "processes": processes,
                "target_ticks_per_s": target,
                "ticks_per_s": measured,
                "met": None if measured is None else measured >= target,
            }
        )
    return {
        "results": results,
        "baseline": baseline,
        "targets": targets,
        "ticks": ticks,
        "repeat": repeat,
        "seed": seed,
        "mode": "capture_and_hold",
        "cores": os.cpu_count(),
        "event_loop": event_loop.event_loop_name(),
        "python": platform.python_version(),
        "warband": warband.__version__,
    }


def _loads(report: dict[str, Any]) -> str:
    loads = report.get("load_average", {})
    before, after = loads.get("before"), loads.get("after")
    return "unknown" if before is None else f"{before} before, {after} after"


def _table(report: dict[str, Any]) -> str:
    lines = [
        f"Warzone, hierarchy vs hierarchy, capture and hold: at most {report['ticks']} lockstep "
        f"ticks, seed {report['seed']}, {report['repeat']} run(s) each, {report['cores']} cores, "
        f"{report['event_loop']}, load average {_loads(report)}",
        "",
        f"{'configuration':<40}  {'ticks':>5}  {'ticks/s':>8}  {'p50 ms':>7}  {'p99 ms':>7}  "
        f"{'x base':>6}  planning ms (per tick)",
    ]
    baseline = {(b["bots_per_team"], b["processes"]): b for b in report["baseline"]}
    for entry in report["results"]:
        base = baseline[(entry["bots_per_team"], entry["processes"])]
        rows = [(entry, "warzone"), (base, "  skirmish (baseline)")]
        if "every_tick" in entry:
            rows.insert(1, (entry["every_tick"], "  warzone every tick"))
        for row, name in rows:
            where = "processes" if row["processes"] else "in-process"
            label = f"{name} {row['bots_per_team']}v{row['bots_per_team']} {where}"
            ratio = f"{entry['ratio']:.2f}" if row is entry and entry["ratio"] else ""
            planning = ", ".join(
                f"{layer} {ms:.0f} ({row['planning_ms_per_tick'][layer]:.1f}"
                + (f", {row['reused_share'][layer]:.0%} reused" if row is entry else "")
                + ")"
                for layer, ms in row["planning_ms"].items()
            )
            clean = "" if row["clean"] else "  NOT CLEAN"
            lines.append(
                f"{label:<40}  {row['ticks']:>5}  {row['ticks_per_s']:>8.1f}  "
                f"{row['tick_ms_p50']:>7.2f}  {row['tick_ms_p99']:>7.2f}  {ratio:>6}  "
                f"{planning or '-'}{clean}"
            )
    lines += [
        "",
        "ticks/s = ticks run / their wall time (start-up excluded); p50/p99 = one lockstep tick;",
        "x base = warzone ticks/s / the scripted skirmish's at the same size and placement;",
        "planning ms = summed over each layer's agents (per tick in brackets, and the share of",
        "its decisions taken again without planning: nothing the last one read had changed);",
        "every tick = the same match with every agent planning every tick (replan_every 1).",
        "",
    ]
    for target in report["targets"]:
        where = "with --processes" if target["processes"] else "in one process"
        goal = f"{target['target_ticks_per_s']:.0f}"
        if target["met"] is None:
            verdict = "not measured (needs --sizes including 12)"
        else:
            verdict = f"{target['ticks_per_s']:.1f}: " + (
                "target met" if target["met"] else "MISSED"
            )
        lines.append(
            f"target: {target['bots_per_team']}v{target['bots_per_team']} {where} "
            f">= {goal} ticks/s: {verdict}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
