"""``warband bench scale``: how a Warzone battle grows, in each placement, from 6v6 up.

A match of ``scenarios/warzone.py`` (hierarchy against hierarchy: a commander, squads and bots
per faction, every one an agent running the one agent loop) is played for ``--ticks`` lockstep
ticks at 6v6, 12v12, 24v24, 48v48 and, while the last size still held 1 tick/s, at twice that
(up to the scenario's limit, :data:`MAX_BOTS` a side), in three placements, each size on the
map ``scenarios/warzone.py`` picks for it (``map=auto``: ``warzone`` up to 12 a side,
``warzone-x2`` up to 24, ``warzone-x4`` beyond: the warzone layout repeated, so a bot has about
as much room and as many neighbours at every size) or, with ``--map NAME``, on that one map at
every size (``--map warzone``: every battle on the 12-a-side map, ever more crowded):

- **one process**: every actor and the broker (a thread) in one process, as ``warband run``;
- **workers**: the broker in its own process and the agents in 2 worker processes (``warband
  agent --ids``, placed by the scenario's groups: one faction per worker), as ``warband run
  --workers 2``;
- **processes** (up to 24v24, ``--processes-up-to``): the broker and every agent each in its
  own process, as ``warband run --processes``.

Each match runs in a child process of its own (``--role match``), so that what one match left
in memory does not count in the next. The world (the run's clock) runs in that child; in the
workers and processes placements the child starts ``warband broker`` and the ``warband agent``
processes as ``warband run`` does (the same arguments, no ``--log``), so the world's process does
nothing else while the match runs, as in ``warband bench warzone``. Figures per match:

- **ticks/s**: ticks run divided by the wall time from the first tick's start to the last
  tick's end (start-up and shut-down excluded);
- **CPU ms per agent per tick**: the CPU time (user + system, every thread) of every process of
  the match (world, broker, agents) over the same window, divided by agents and ticks; with its
  split into world, broker and agents (in one process the broker and the agents are one
  figure, ``agents``);
- **frames per agent per tick**: catalog messages delivered to an actor (a broadcast counts
  once per member; pings, acks and registrations are not counted) over the whole run, per agent
  and tick;
- **RSS and PSS**: the resident and proportional set sizes (``/proc/PID/smaps_rollup``) of every
  process of the match, summed, taken at the middle tick; PSS shares each shared page among the
  processes that map it, so it is what the match really costs the machine;
- **growth exponent**: per placement, ``k`` in CPU per tick ~ agents^k, fitted by least squares
  over the sizes (1.0: linear; the issue's target is CPU per agent per tick at most x1.1 per
  doubling, about k <= 1.14), and the same for PSS.

Beside them, the broker's instructions per routed frame and the raw pyzmq forwarder's, counted
by callgrind in the same run (the measurement of ``warband bench messaging --broker``,
bench/instructions.py; CPU ns without valgrind).

``main(argv)`` is the entry point (``warband bench scale`` loads this file by path). With
``--json`` the last stdout line is one JSON object; ``results`` holds one entry per match whose
keys in ``JSON_KEYS`` are a public contract (``map`` names the map the match played on).
Progress goes to stderr.
"""

# No `from __future__ import annotations`: `warband bench` executes this file without adding it
# to sys.modules (see bench/messaging.py).

import argparse
import asyncio
import itertools
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

import zmq

import warband
from warband.exceptions import MapError
from warband.launcher import run_actors_in_process
from warband.messaging import event_loop
from warband.messaging.broker import remove_ipc_socket_file
from warband.messaging.clock import RunResult
from warband.messaging.keeper import ProcessKeeper
from warband.messaging.supervisor import PARENT_VARIABLE, Supervisor, watch_parent
from warband.messaging.tracing import configure_logging
from warband.placement import place
from warband.scenario import Params, Scenario, load_scenario
from warband.world import load_map
from warband.world.actor import WorldActor

REPO: Final = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `warband bench` runs this file by path; bench is a package
    sys.path.insert(0, str(REPO))

from bench import instructions  # noqa: E402
from bench.measure import BenchmarkError  # noqa: E402

JSON_KEYS: Final = (
    "placement",
    "bots_per_team",
    "agents",
    "ticks",
    "ticks_per_s",
    "cpu_ms_per_agent_tick",
    "frames_per_agent_tick",
    "rss_mb",
    "pss_mb",
    "map",
)
"""Keys every entry of ``results`` holds (a public contract)."""

WARZONE: Final = REPO / "scenarios" / "warzone.py"
MESSAGING: Final = REPO / "bench" / "messaging.py"
PLACEMENTS: Final = ("one process", "workers", "processes")
SIZES: Final = (6, 12, 24, 48)
QUICK_SIZES: Final = (1, 2)
MAX_BOTS: Final = 128
"""The scenario's limit a side: the ladder's last rung."""
TICKS: Final = 60
QUICK_TICKS: Final = 8
WORKERS: Final = 2
PROCESSES_UP_TO: Final = 24
HOLDS: Final = 1.0
"""Ticks per second a size must hold for the ladder to go on past 48v48."""

_START_TIMEOUT_S: Final = 300.0
"""Seconds the world waits for every agent process to connect (a hundred imports on 2 cores)."""
_TICK_TIMEOUT_S: Final = 60.0
_EXIT_TIMEOUT_S: Final = 30.0
_MATCH_TIMEOUT_S: Final = 1800.0
_CLOCK_TICKS_S: Final = os.sysconf("SC_CLK_TCK")


def main(argv: list[str]) -> int:
    """Run the benchmark; prints a table (and with ``--json`` one JSON line); 0 on success."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.role == "match":
        return _match(args)
    if args.ticks is not None and args.ticks < 2:
        parser.error(f"--ticks must be at least 2, got {args.ticks}")
    if args.sizes and not all(1 <= n <= MAX_BOTS for n in args.sizes):
        parser.error(f"--sizes: bots per team must be 1..{MAX_BOTS}, got {args.sizes}")
    if args.map is not None:
        try:
            load_map(args.map)
        except MapError as error:
            parser.error(f"--map {args.map}: {error}")
    sizes = tuple(args.sizes) if args.sizes else (QUICK_SIZES if args.quick else SIZES)
    ticks = args.ticks if args.ticks is not None else (QUICK_TICKS if args.quick else TICKS)
    configure_logging(None, "bench")
    load_before = _load_average()
    started = time.monotonic()
    results: list[dict[str, Any]] = []
    for placement in PLACEMENTS:
        results += _ladder(placement, sizes, ticks, args)
    routing = None if args.no_count else _routing(args.quick)
    report = _report(results, routing, ticks, args.seed, sizes)
    report["map"] = args.map if args.map is not None else "auto"
    report["load_average"] = {"before": load_before, "after": _load_average()}
    report["duration_s"] = round(time.monotonic() - started, 1)
    print(_table(report))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warband bench scale",
        description="How a Warzone battle (hierarchy against hierarchy) grows from 6v6 to 48v48 "
        "and beyond, in one process, in 2 worker processes and with a process per agent: "
        "ticks/s, CPU and frames per agent per tick, RSS and PSS, growth exponents, and the "
        "broker's instructions per frame beside a raw forwarder's.",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke test: {' and '.join(f'{n}v{n}' for n in QUICK_SIZES)}, {QUICK_TICKS} "
        "ticks, the routing count with few frames",
    )
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        action="extend",  # --sizes 12 --sizes 48 plays both, as --sizes 12 48 does
        metavar="N",
        help="bots per team, in order (default 6 12 24 48, then doubling while it holds "
        f"{HOLDS:g} tick/s, up to {MAX_BOTS})",
    )
    parser.add_argument(
        "--ticks", type=int, metavar="T", help=f"ticks per match at most (default {TICKS})"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of every match (default 1)")
    parser.add_argument(
        "--map",
        metavar="NAME",
        help="play every size on this map (a bundled name or a TOML path; default: the map "
        "scenarios/warzone.py picks for the size, warzone up to 12 a side, warzone-x2 up to 24, "
        "warzone-x4 beyond)",
    )
    parser.add_argument(
        "--processes-up-to",
        type=int,
        default=PROCESSES_UP_TO,
        metavar="N",
        help=f"the largest size played with a process per agent (default {PROCESSES_UP_TO})",
    )
    parser.add_argument(
        "--no-count",
        action="store_true",
        help="skip counting the broker's and the raw forwarder's instructions per frame",
    )
    parser.add_argument("--role", help=argparse.SUPPRESS)
    parser.add_argument("--placement", help=argparse.SUPPRESS)
    parser.add_argument("--bots", type=int, help=argparse.SUPPRESS)
    return parser


def _ladder(
    placement: str, sizes: tuple[int, ...], ticks: int, args: argparse.Namespace
) -> list[dict[str, Any]]:
    """Every size of ``sizes`` for ``placement``, then (without ``--sizes``) twice the last
    while the last held :data:`HOLDS` ticks/s."""
    if placement == "processes":
        return [_play(placement, n, ticks, args) for n in sizes if n <= args.processes_up_to]
    results = [_play(placement, n, ticks, args) for n in sizes]
    climbing = not args.sizes and not args.quick
    while climbing and results[-1]["ticks_per_s"] >= HOLDS and sizes[-1] < MAX_BOTS:
        last = results[-1]["bots_per_team"]
        if last >= MAX_BOTS:
            break
        results.append(_play(placement, min(last * 2, MAX_BOTS), ticks, args))
    return results


def _play(placement: str, bots: int, ticks: int, args: argparse.Namespace) -> dict[str, Any]:
    """One match in a child process of its own; its figures."""
    seed = args.seed
    on = f", map {args.map}" if args.map is not None else ""
    _progress(f"{placement} {bots}v{bots}: {ticks} ticks, seed {seed}{on}")
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--role=match",
        f"--placement={placement}",
        f"--bots={bots}",
        f"--ticks={ticks}",
        f"--seed={seed}",
        *([f"--map={args.map}"] if args.map is not None else []),
    ]
    # The match ends itself, and so its processes, if this benchmark dies (watch_parent).
    env = {**os.environ, PARENT_VARIABLE: str(os.getpid())}
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_MATCH_TIMEOUT_S, check=False, env=env
        )
    except subprocess.TimeoutExpired:
        raise BenchmarkError(
            f"{placement} {bots}v{bots} did not finish within {_MATCH_TIMEOUT_S:g} s"
        ) from None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise BenchmarkError(
            f"{placement} {bots}v{bots} failed (exit {done.returncode}): {done.stderr[-2000:]}"
        )
    entry: dict[str, Any] = json.loads(lines[-1])
    clean = "" if entry["clean"] else f"  NOT CLEAN: {entry['departed'] or 'failures'}"
    _progress(
        f"{placement} {bots}v{bots} on {entry['map']}: {entry['ticks_per_s']:.2f} ticks/s, "
        f"{entry['cpu_ms_per_agent_tick']:.2f} CPU ms per agent per tick, "
        f"PSS {entry['pss_mb']:.0f} MB{clean}"
    )
    return entry


# --- one match (the child) ----------------------------------------------------------------------


class _Sampler:
    """CPU time and memory of a set of processes, read from /proc."""

    def __init__(self) -> None:
        self.pids: dict[str, list[int]] = {"world": [os.getpid()]}

    def cpu_s(self) -> dict[str, float]:
        """CPU seconds so far of each role's processes (every thread)."""
        return {role: sum(_cpu_s(pid) for pid in pids) for role, pids in self.pids.items()}

    def memory_mb(self) -> dict[str, float]:
        """Rss and Pss of every process, summed, in MB."""
        totals = {"rss_mb": 0.0, "pss_mb": 0.0}
        for pids in self.pids.values():
            for pid in pids:
                for key, kb in _smaps_rollup(pid).items():
                    totals[key] += kb / 1024
        return totals


def _cpu_s(pid: int) -> float:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS_S  # utime, stime


def _smaps_rollup(pid: int) -> dict[str, float]:
    found = {"rss_mb": 0.0, "pss_mb": 0.0}
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return found
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name in ("Rss", "Pss"):
            found[f"{name.lower()}_mb"] = float(rest.split()[0])
    return found


class _MeasuredWorld(WorldActor):
    """The scenario's world actor, sampling time, CPU and memory at tick boundaries."""

    def __init__(self, sampler: _Sampler, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, on_tick_complete=self._tick_ended, **kwargs)
        self.sampler = sampler
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.cpu_start: dict[str, float] = {}
        self.cpu_end: dict[str, float] = {}
        self.memory: dict[str, float] = {}
        self.map_name = ""

    async def before_ticks(self) -> None:
        await super().before_ticks()
        self.cpu_start = self.sampler.cpu_s()
        self.started_at = time.perf_counter()

    def _tick_ended(self, tick: int) -> None:
        self.ended_at = time.perf_counter()
        self.cpu_end = self.sampler.cpu_s()
        if tick == max(1, self.max_ticks // 2):
            self.memory = self.sampler.memory_mb()


def _match(args: argparse.Namespace) -> int:
    watch_parent()
    configure_logging(None, "bench")
    scenario = load_scenario(WARZONE)
    overrides = {"bots": str(args.bots), "red": "hierarchy", "blue": "hierarchy"}
    if args.map is not None:  # else the scenario's default, map=auto: the map sized for the bots
        overrides["map"] = args.map
    params = scenario.resolve_params(overrides)
    actors = scenario.build(params, args.seed)
    sampler = _Sampler()
    if args.placement == "one process":
        sampler.pids = {"all": [os.getpid()]}  # the world, the broker and the agents
    world = _world(scenario, sampler, [a.id for a in actors], params, args.ticks, args.seed)
    world.map_name = world.model.map.name
    if args.placement == "one process":
        result = event_loop.run(run_actors_in_process(actors, world))
    else:
        if args.placement == "workers":
            placed = place([a.id for a in actors], WORKERS, scenario.placement_groups(params))
            hosts = {f"worker-{i}": agents for i, agents in enumerate(placed, start=1)}
        else:
            hosts = {a.id: [a.id] for a in actors}
        result = _run_separate(world, sampler, hosts, overrides, args)
    if not result.started or world.started_at is None or world.ended_at is None:
        raise BenchmarkError(f"the match never started ({result.finish_reason})")
    if not world.memory:  # the match ended before its middle tick
        world.memory = sampler.memory_mb()
    print(json.dumps(_figures(args, actors, world, result), sort_keys=True), flush=True)
    return 0


def _world(
    scenario: Scenario,
    sampler: _Sampler,
    participants: list[str],
    params: Params,
    ticks: int,
    seed: int,
) -> _MeasuredWorld:
    """The world actor ``warband run`` would build for ``scenario`` (launcher.build_clock)."""

    def departure_policy(agent: str, reason: str) -> str | None:
        return scenario.on_departure(agent, reason, params)

    return _MeasuredWorld(
        sampler,
        scenario.build_world(params, seed),
        scenario.clock_id,
        participants=participants,
        ticks=ticks,
        seed=seed,
        tick_timeout=_TICK_TIMEOUT_S,
        ready_timeout=_START_TIMEOUT_S,
        departure_policy=departure_policy,
        observers=scenario.build_observers(params),
    )


def _run_separate(
    world: _MeasuredWorld,
    sampler: _Sampler,
    hosts: dict[str, list[str]],
    params: dict[str, str],
    args: argparse.Namespace,
) -> RunResult:
    """``warband broker`` and a ``warband agent`` process per entry of ``hosts`` (``--ids`` for
    several agents), as ``warband run`` starts them; the world runs here."""
    supervisor = Supervisor()
    with tempfile.TemporaryDirectory(prefix="warband-scale-", ignore_cleanup_errors=True) as tmp:
        endpoint = f"ipc://{Path(tmp) / 'broker.sock'}"
        cli = [sys.executable, "-m", "warband"]
        agent = [
            *cli,
            *("agent", "--connect", endpoint, "--scenario", str(WARZONE)),
            *("--seed", str(args.seed), "--ticks", str(args.ticks)),
            *("--start-timeout", str(_START_TIMEOUT_S), "--quiet"),
            *(arg for key, value in params.items() for arg in ("--param", f"{key}={value}")),
        ]
        try:
            broker = supervisor.start(
                "broker", [*cli, "broker", "--bind", endpoint, "--quiet"], restartable=False
            )
            sampler.pids["broker"] = [broker.process.pid]
            sampler.pids["agents"] = []
            for name, ids in hosts.items():
                which = ["--id", ids[0]] if len(ids) == 1 else ["--ids", ",".join(ids)]
                started = supervisor.start(name, [*agent, *which], restartable=False)
                sampler.pids["agents"].append(started.process.pid)
            event_loop.run(_run_world(world, endpoint))
            supervisor.wait_all(timeout=_EXIT_TIMEOUT_S, exclude=("broker",))
        finally:
            supervisor.stop_all(last=("broker",))
            remove_ipc_socket_file(endpoint)
    if world.result is None:
        raise BenchmarkError("the world stopped without a result; run the match with --log")
    return world.result


async def _run_world(world: WorldActor, endpoint: str) -> None:
    """The world alone in this process, with a keeper as every process of actors has."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    keeper = ProcessKeeper(
        endpoint, lambda: [world.id] if world.registered else [], context=context
    )
    try:
        async with keeper:
            await world.run(endpoint, context=context, mode="lockstep", clock_id=world.id)
    finally:
        await asyncio.to_thread(context.term)


def _figures(
    args: argparse.Namespace, actors: list[Any], world: _MeasuredWorld, result: RunResult
) -> dict[str, Any]:
    assert world.started_at is not None and world.ended_at is not None
    ticks = result.ticks
    agents = len(actors)
    seconds = world.ended_at - world.started_at
    cpu = {
        role: world.cpu_end.get(role, 0.0) - world.cpu_start.get(role, 0.0)
        for role in world.sampler.pids
    }
    per = agents * ticks if ticks else 1
    return {
        "placement": args.placement,
        "bots_per_team": args.bots,
        "map": world.map_name,
        "agents": agents,
        "processes": sum(len(pids) for pids in world.sampler.pids.values()),
        "ticks": ticks,
        "ticks_per_s": round(ticks / seconds, 3) if seconds > 0 else 0.0,
        "cpu_ms_per_agent_tick": round(sum(cpu.values()) * 1000 / per, 4),
        "cpu_ms_per_agent_tick_by_role": {r: round(s * 1000 / per, 4) for r, s in cpu.items()},
        "cpu_ms_per_tick": round(sum(cpu.values()) * 1000 / ticks, 3) if ticks else 0.0,
        "frames_per_agent_tick": round(result.messages_received / per, 3),
        "rss_mb": round(world.memory["rss_mb"], 1),
        "pss_mb": round(world.memory["pss_mb"], 1),
        "pss_mb_per_agent": round(world.memory["pss_mb"] / agents, 2),
        "clean": result.clean and not result.missing and not result.departed,
        "departed": dict(result.departed),
        "tick_timeouts": result.tick_timeouts,
        "finish_reason": result.finish_reason,
    }


# --- the report ---------------------------------------------------------------------------------


def _routing(quick: bool) -> dict[str, Any]:
    sizes = instructions.QUICK_SIZES if quick else instructions.DEFAULT_SIZES
    _progress(f"routing: the broker and a raw forwarder, {sizes.frames} frames each")
    broker, forwarder, unit = instructions.measure_routing(MESSAGING, sizes)
    return {
        "unit": unit,
        "broker_per_frame": round(broker),
        "forwarder_per_frame": round(forwarder),
        "broker_vs_forwarder": round(broker / forwarder, 3),
        "frames": sizes.frames,
    }


def growth_exponent(points: list[tuple[float, float]]) -> float | None:
    """``k`` of y ~ x^k, the least-squares slope of log y on log x (None with fewer than 2
    points, or a zero)."""
    usable = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(usable) < 2:
        return None
    mean_x = sum(x for x, _ in usable) / len(usable)
    mean_y = sum(y for _, y in usable) / len(usable)
    spread = sum((x - mean_x) ** 2 for x, _ in usable)
    if spread == 0:
        return None
    return sum((x - mean_x) * (y - mean_y) for x, y in usable) / spread


def _report(
    results: list[dict[str, Any]],
    routing: dict[str, Any] | None,
    ticks: int,
    seed: int,
    sizes: tuple[int, ...],
) -> dict[str, Any]:
    growth: dict[str, dict[str, Any]] = {}
    for placement in PLACEMENTS:
        rows = [r for r in results if r["placement"] == placement]
        cpu = growth_exponent([(r["agents"], r["cpu_ms_per_tick"]) for r in rows])
        pss = growth_exponent([(r["agents"], r["pss_mb"]) for r in rows])
        doublings = [
            round(b["cpu_ms_per_agent_tick"] / a["cpu_ms_per_agent_tick"], 3)
            for a, b in itertools.pairwise(rows)
            if a["cpu_ms_per_agent_tick"] > 0
        ]
        growth[placement] = {
            "cpu_exponent": None if cpu is None else round(cpu, 3),
            "pss_exponent": None if pss is None else round(pss, 3),
            "cpu_per_agent_tick_step_ratios": doublings,
        }
    return {
        "results": results,
        "growth": growth,
        "routing": routing,
        "ticks": ticks,
        "seed": seed,
        "sizes": list(sizes),
        "workers": WORKERS,
        "mode": "capture_and_hold",
        "cores": os.cpu_count(),
        "event_loop": event_loop.event_loop_name(),
        "python": platform.python_version(),
        "warband": warband.__version__,
    }


def _table(report: dict[str, Any]) -> str:
    loads = report["load_average"]
    lines = [
        f"Warzone ({_maps(report['map'])}), hierarchy vs hierarchy, capture and hold: at most "
        f"{report['ticks']} lockstep "
        f"ticks, seed {report['seed']}, {report['cores']} cores, {report['event_loop']}, load "
        f"average {loads['before']} before, {loads['after']} after",
        "",
        f"{'placement':<12} {'size':>6} {'map':<11} {'agents':>6} {'procs':>5} {'ticks/s':>8} "
        f"{'CPU ms/agent/tick':>17} {'frames/agent/tick':>17} {'RSS MB':>8} {'PSS MB':>8}",
    ]
    for row in report["results"]:
        size = f"{row['bots_per_team']}v{row['bots_per_team']}"
        clean = "" if row["clean"] else "  NOT CLEAN"
        lines.append(
            f"{row['placement']:<12} {size:>6} {row['map']:<11} {row['agents']:>6} "
            f"{row['processes']:>5} "
            f"{row['ticks_per_s']:>8.2f} {row['cpu_ms_per_agent_tick']:>17.3f} "
            f"{row['frames_per_agent_tick']:>17.2f} {row['rss_mb']:>8.0f} {row['pss_mb']:>8.0f}"
            f"{clean}"
        )
    lines += ["", "growth (k in y ~ agents^k; CPU per agent per tick, size to size):"]
    for placement, growth in report["growth"].items():
        steps = ", ".join(f"x{r:.2f}" for r in growth["cpu_per_agent_tick_step_ratios"]) or "-"
        lines.append(
            f"  {placement:<12} CPU per tick k={_k(growth['cpu_exponent'])}, PSS "
            f"k={_k(growth['pss_exponent'])}; CPU per agent per tick {steps}"
        )
    routing = report["routing"]
    lines.append("")
    if routing is None:
        lines.append("routing: not counted (--no-count)")
    else:
        unit = "instructions" if routing["unit"] == "instructions" else "CPU ns (no valgrind)"
        lines.append(
            f"routing, {unit} per frame ({routing['frames']} frames): warband broker "
            f"{routing['broker_per_frame']:,}, raw pyzmq forwarder "
            f"{routing['forwarder_per_frame']:,} (x{routing['broker_vs_forwarder']:.2f})"
        )
    lines.append(f"({report['duration_s']} s in all)")
    return "\n".join(lines)


def _maps(forced: str) -> str:
    return "each size on its own map" if forced == "auto" else f"every size on map {forced}"


def _k(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _progress(message: str) -> None:
    print(f"[bench scale] {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
