"""Instructions of ``bench world``'s tick, phase by phase, under callgrind.

``python bench/world_callgrind.py --entities 1000 [--columns 64 --rows 40 --ticks 10]`` runs
itself again under ``valgrind --tool=callgrind --dump-before=getloadavg``: the same map, world
and simple bots as ``warband bench world`` (seed 1, 2 warm-up ticks), with ``os.getloadavg()``
called between the phases of every tick, so that callgrind writes one dump per phase. It then
prints, per phase, the median over the measured ticks in instructions: ``acts`` (the bots'
acts, not part of the tick), ``step``, ``senses`` (who sees and hears whom, worked out once),
``facts`` (every agent's percept) and ``deltas`` (every agent's delta percept); ``tick`` is
step + senses + facts + deltas. Instructions do not depend on the machine's load, which the
wall clock of ``warband bench world`` does.

Beside the instructions, what each tick did (medians over the measured ticks, in ``per_tick``;
counted in a second play of the same ticks, in this process, so that counting changes nothing
in the measured run, not even when the garbage collector runs): ``observers`` (living agents),
``sightings``, ``hearings`` (one per listener and noise heard), ``heard_facts`` (a listener's
noises of one kind from one waypoint are one fact), ``sight_tests`` (sight lines tested against
the walls, not answered from the sight memory), ``facts_full`` (every agent's percept) and
``facts_sent`` (what the deltas carry instead).

``--learn-waypoint-lines`` is an experiment, not the judged figure: before the first tick the
world's sight index learns every line between two waypoints at most the farthest view distance
apart (what a visibility table computed offline and stored with the map would hold; its memory
is made big enough to keep them), so that the ticks test only lines with an end off the
waypoints.

``--no-valgrind`` runs the phases in this process and reads ``time.process_time()`` at the
same marks instead (CPU time, noisy under load; labelled so). ``PYTHONHASHSEED`` is set to 0
for the counted run, so two runs of the same code count the same.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # for bench.measure, when run by its path
    sys.path.insert(0, str(REPO))

PHASES = ("acts", "step", "senses", "facts", "deltas")
"""The marks of one tick, in order; the tick is every phase but ``acts``."""
PER_TICK = (
    "observers",
    "sightings",
    "hearings",
    "heard_facts",
    "sight_tests",
    "facts_full",
    "facts_sent",
)
"""What ``per_tick`` counts, in this order."""


def main(argv: list[str]) -> int:
    """Count (or time) the phases; prints a summary line and one JSON line; 0 on success."""
    args = _parser().parse_args(argv)
    if args.child is not None:
        _run_phases(args, mark=os.getloadavg if args.child == "callgrind" else None)
        return 0
    if args.no_valgrind:
        counts = _run_phases(args, mark=None)
        unit = "cpu_ms"
    else:
        from bench.measure import BenchmarkError

        try:
            counts = _under_callgrind(args)
        except BenchmarkError as error:
            print(f"bench/world_callgrind.py: {error}", file=sys.stderr)
            return 1
        unit = "instructions"
    report = _summary(counts, args, unit)
    per_tick = _count_ticks(args)
    report["per_tick"] = {
        name: statistics.median(tick[i] for tick in per_tick[args.warmup :])
        for i, name in enumerate(PER_TICK)
    }
    report["learn_waypoint_lines"] = args.learn_waypoint_lines
    per = "M" if unit == "instructions" else "ms"
    scale = 1e6 if unit == "instructions" else 1.0
    print(
        f"{args.entities} entities on {args.columns}x{args.rows}: tick "
        f"{report['tick'] / scale:.1f} {per} (median of {args.ticks}; "
        + ", ".join(f"{p} {report[p] / scale:.1f}" for p in PHASES)
        + f"; ticks from {report['tick_min'] / scale:.0f} to {report['tick_max'] / scale:.0f})"
    )
    print(
        "per tick (medians): "
        + ", ".join(f"{name} {count:g}" for name, count in report["per_tick"].items())
    )
    print(json.dumps(report, sort_keys=True))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python bench/world_callgrind.py", description=__doc__)
    parser.add_argument("--entities", type=int, default=1000)
    parser.add_argument("--columns", type=int, default=64, help="map width in waypoints")
    parser.add_argument("--rows", type=int, default=40, help="map height in waypoints")
    parser.add_argument("--ticks", type=int, default=10, help="measured ticks")
    parser.add_argument("--warmup", type=int, default=2, help="ticks before the measured ones")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-valgrind", action="store_true", help="CPU time in this process")
    parser.add_argument(
        "--learn-waypoint-lines",
        action="store_true",
        help="experiment: the sight index learns every waypoint-to-waypoint line first",
    )
    parser.add_argument("--child", choices=("callgrind",), help=argparse.SUPPRESS)
    return parser


def _bench_world() -> Any:
    """``bench/world.py``, loaded by path as ``warband bench world`` loads it."""
    path = Path(__file__).with_name("world.py")
    spec = importlib.util.spec_from_file_location("warband_bench_world_phases", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}: is the bench directory complete?")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _start(args: argparse.Namespace) -> tuple[Any, Any, Any, random.Random, dict[str, Any]]:
    """The bench's module, its world (having learnt the waypoint lines when asked), every
    agent's first percept (its delta base) and the bots' random generator."""
    from warband.world import PerceptDeltas

    bench = _bench_world()
    world = bench._build_world(bench._map(args.columns, args.rows, args.seed), args.entities, 1)
    if args.learn_waypoint_lines:
        _learn_waypoint_lines(world)
    facts = {agent: world.percepts_for(agent) for agent in world.agent_ids}
    deltas = PerceptDeltas()
    for agent in world.agent_ids:
        deltas.next(agent, facts[agent], world.tick)
    return bench, world, deltas, random.Random(args.seed), facts


def _run_phases(args: argparse.Namespace, mark: Callable[..., Any] | None) -> list[float]:
    """Play the bench's world; between phases, ``mark()`` (callgrind dumps there) or, without
    one, read the CPU clock. Returns the CPU milliseconds per phase when timing itself."""
    from warband.world._senses import senses

    bench, world, deltas, rng, facts = _start(args)
    spent: list[float] = []
    clock = [time.process_time()]

    def border() -> None:
        if mark is not None:
            mark()
        else:
            now = time.process_time()
            spent.append((now - clock[0]) * 1000)
            clock[0] = now

    border()  # set-up ends
    for _ in range(args.warmup + args.ticks):
        for agent in world.agent_ids:
            bench._act(world, agent, facts[agent], rng)
        border()
        world.step()
        border()
        senses(world._state)
        border()
        facts = {agent: world.percepts_for(agent) for agent in world.agent_ids}
        border()
        for agent in world.agent_ids:
            deltas.next(agent, facts[agent], world.tick)
        border()
    return spent[1:]  # the first: set-up


def _count_ticks(args: argparse.Namespace) -> list[list[int]]:
    """The :data:`PER_TICK` counts of every tick of :func:`_run_phases`'s play, played again
    (the same seeds, the same ticks) with the sight index's tests counted."""
    from warband.world._senses import senses

    print(f"[world callgrind] {args.entities} entities: counting a tick's work...", file=sys.stderr)
    bench, world, deltas, rng, facts = _start(args)
    index = world._state.sight
    learn, tested = index._learn, [0]

    def counted_learn(*line: Any) -> bool:
        tested[0] += 1
        return bool(learn(*line))

    index._learn = counted_learn  # this instance only: the measured play is not touched
    per_tick = []

    def lines_tested() -> int:  # by the Python path's test, and by the numpy path's
        from warband.world._sight_batch import lines_tested as tested_by_numpy

        return tested[0] + tested_by_numpy(index)

    for _ in range(args.warmup + args.ticks):
        for agent in world.agent_ids:
            bench._act(world, agent, facts[agent], rng)
        world.step()
        before = lines_tested()
        found = senses(world._state)
        facts = {agent: world.percepts_for(agent) for agent in world.agent_ids}
        changes = [deltas.next(agent, facts[agent], world.tick) for agent in world.agent_ids]
        per_tick.append(
            [
                len(found.lines),
                sum(len(seen) for seen in found.lines.values()),
                sum(len(heard) for heard in found.heard.values()),
                sum(len(found.heard_facts(agent)) for agent in found.heard),
                lines_tested() - before,
                sum(len(percept) for percept in facts.values()),
                sum(len(change.facts) + len(change.removed) for change in changes),
            ]
        )
    return per_tick


def _learn_waypoint_lines(world: Any) -> None:
    """The experiment of ``--learn-waypoint-lines``: a sight index that has tested every line
    between two waypoints at most the farthest view distance apart, both ways."""
    from warband.world._senses import _SCOUT_SENSES, _SENSES
    from warband.world.perception import SightIndex

    reach = max(_SCOUT_SENSES.view_distance, _SENSES.view_distance)
    spots = [waypoint.pos for waypoint in world.map.waypoints]
    index = SightIndex(world.map.walls, cache_limit=len(spots) ** 2 + 2)
    for a in spots:
        for b in spots:
            if a != b and math.dist(a, b) <= reach:
                index.clear(a, b)
    world._state.sight = index
    print(f"[world callgrind] learnt {len(index._memory)} waypoint lines", file=sys.stderr)


def _under_callgrind(args: argparse.Namespace) -> list[float]:
    """Run the phases in a child under callgrind; the instructions of every dump, in order."""
    from bench.measure import callgrind_instructions, run_callgrind

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cg.out"
        print(f"[world callgrind] {args.entities} entities under callgrind...", file=sys.stderr)
        run_callgrind([sys.executable, __file__, "--child", "callgrind", *_settings(args)], out)
        dumps = sorted(Path(folder).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
        # Dump n holds what ran before the n-th mark: the first is the set-up; what ran after
        # the last mark (the exit) is in the final file, not a dump.
        return [float(callgrind_instructions(dump)) for dump in dumps][1:]


def _settings(args: argparse.Namespace) -> list[str]:
    return [
        f"--entities={args.entities}",
        f"--columns={args.columns}",
        f"--rows={args.rows}",
        f"--ticks={args.ticks}",
        f"--warmup={args.warmup}",
        f"--seed={args.seed}",
        *(["--learn-waypoint-lines"] if args.learn_waypoint_lines else []),
    ]


def _summary(counts: list[float], args: argparse.Namespace, unit: str) -> dict[str, Any]:
    """Medians per phase over the measured ticks (the warm-up ones left out)."""
    ticks = [counts[i : i + len(PHASES)] for i in range(0, len(counts), len(PHASES))]
    measured = [tick for tick in ticks[args.warmup :] if len(tick) == len(PHASES)]
    if not measured:
        raise RuntimeError(f"no measured tick in {len(counts)} marks: was --ticks 0?")
    totals = [sum(tick[1:]) for tick in measured]
    report: dict[str, Any] = {
        phase: statistics.median(tick[i] for tick in measured) for i, phase in enumerate(PHASES)
    }
    report.update(
        tick=statistics.median(totals),
        tick_min=min(totals),
        tick_max=max(totals),
        unit=unit,
        entities=args.entities,
        columns=args.columns,
        rows=args.rows,
        ticks=len(measured),
    )
    return report


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
