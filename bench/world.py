"""``warband bench world``: the cost of one world tick with 24, 100 and 1000 entities.

All sizes play on the same generated map (a 64 x 40 waypoint grid, 5 units apart, with 15% of
the links cut by short walls), the entities spread over it at random (seeded), half red, half
blue. Each tick every living agent acts like a simple bot (fire at the nearest enemy it sees,
reload when empty, otherwise walk to a random neighbouring waypoint); then the world steps and
every agent's percepts are built. Figures per size:

- **tick ms**: ``world.step()`` plus ``world.percepts_for(agent)`` for every agent plus the
  delta percept of every agent (:class:`~warband.world.PerceptDeltas`, what changed since its
  last percept), the median over the measured ticks: what the world actor spends per tick;
  ``step``, ``percepts`` and ``deltas`` are also given apart, and ``acts ms`` is the time the
  bots' acts took to validate. ``facts/tick`` are the facts of every agent's full percept and
  the facts (added and removed) its delta carries instead;
- **perception grid ms**: who-sees-whom for every agent with the spatial grid and a fresh
  :class:`~warband.world.perception.SightIndex` (no remembered sight lines), the median over
  the measured ticks;
- **all-pairs ms** (the baseline): the same question answered by the all-pairs reference
  (every observer against every body, every sight line against every wall), on the same
  states. With 1000 entities it would take about half a minute per tick, so it is timed on
  the first ``--sample`` observers and scaled up linearly (it is linear in the observers);
  the table and the JSON say when a figure is estimated. Both answers are compared where
  both are computed (``agree``).

The targets of issue 22, a tick at most 15 times dearer from 100 to 1000 entities and a
1000-entity tick in at most 50 ms, are checked when both sizes run (``targets`` in the JSON), on
this fixed map: the issue's figures were measured so, and they are judged so.

On a fixed map, ten times the entities are ten times as crowded: every agent sees and hears
about ten times as many others, so the facts alone grow about a hundred-fold in all. A second
series, **same density**, grows the map with the entities instead: every size plays on a grid
of the fixed map's proportions with as many waypoints per entity as the fixed map has at the
largest size (so the largest size is the fixed map's own run, measured once). Its growth
(``same_density`` in the JSON) says how the world's cost grows with a battle's size when the
crowding stays the same; it is reported beside the fixed-map figures, never instead of them.
``--no-same-density`` runs the fixed map alone.

``main(argv)`` is the entry point (``warband bench world`` loads this file by path). With
``--json`` the last stdout line is one JSON object: ``{"results": [{"entities": 24,
"tick_ms": ...}, ...], "baseline_allpairs_ms": {"24": ...}, "targets": {...}, "same_density":
{"results": [...], "growth_100_to_1000": ..., ...}, ...}``. Progress goes to stderr.
"""

# No `from __future__ import annotations`: `warband bench` executes this file without adding it
# to sys.modules (see bench/messaging.py).

import argparse
import json
import math
import platform
import random
import statistics
import sys
import time
from typing import Any

from warband.values import Fact
from warband.world import Map, Member, PerceptDeltas, World, grid_map, perceive
from warband.world.perception import SightIndex, perceive_all_pairs

SIZES = (24, 100, 1000)
"""Entity counts measured by default."""
CLASSES = ("assault", "medic", "engineer", "tactician", "scout", "saboteur")
GROWTH_TARGET = 15.0
"""A 1000-entity tick may cost at most this many times a 100-entity one (issue 22)."""
TICK_TARGET_MS = 50.0
"""A 1000-entity tick may take at most this long (issue 22)."""


def main(argv: list[str]) -> int:
    """Run the benchmark; prints a table (and with ``--json`` one JSON line); 0 on success."""
    args = _parser().parse_args(argv)
    sizes = tuple(args.sizes) if args.sizes else ((24, 100) if args.quick else SIZES)
    ticks = args.ticks if args.ticks is not None else (3 if args.quick else 10)
    _progress(f"building the map ({args.columns} x {args.rows} waypoints)")
    game_map = _map(args.columns, args.rows, args.seed)
    rows = []
    for entities in sizes:
        _progress(f"{entities} entities: {args.warmup} warm-up + {ticks} measured ticks")
        rows.append(_measure(game_map, entities, ticks, args))
    report = {
        "results": rows,
        "baseline_allpairs_ms": {str(r["entities"]): r["baseline_allpairs_ms"] for r in rows},
        "targets": _targets(rows),
        "map": game_map.name,
        "waypoints": len(game_map.waypoints),
        "walls": len(game_map.walls),
        "ticks": ticks,
        "warmup": args.warmup,
        "seed": args.seed,
        "python": platform.python_version(),
    }
    if args.same_density:
        report["same_density"] = _same_density(rows, ticks, args)
    print(_table(report))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    return 0


def _map(columns: int, rows: int, seed: int) -> Map:
    return grid_map(columns, rows, spacing=5.0, wall_fraction=0.15, seed=seed)


def _same_density(
    fixed: list[dict[str, Any]], ticks: int, args: argparse.Namespace
) -> dict[str, Any]:
    """Every size again on a map grown to keep the fixed map's crowding at the largest size:
    as many waypoints per entity (as near as whole columns and rows come), the same
    proportions. A size whose grid comes out as the fixed map is that run's row (the same
    map, roster and bots: measured once)."""
    largest = max(row["entities"] for row in fixed)
    per_entity = args.columns * args.rows / largest
    aspect = args.columns / args.rows
    rows = []
    for row in fixed:
        entities = row["entities"]
        columns = max(3, round(math.sqrt(per_entity * entities * aspect)))
        height = max(1, round(per_entity * entities / columns))
        if (columns, height) == (args.columns, args.rows):
            found = dict(row)
        else:
            _progress(
                f"same density: {entities} entities on {columns} x {height} waypoints: "
                f"{args.warmup} warm-up + {ticks} measured ticks"
            )
            found = _measure(_map(columns, height, args.seed), entities, ticks, args)
        found.update(columns=columns, rows=height, waypoints=columns * height)
        rows.append(found)
    return {
        "results": rows,
        "waypoints_per_entity": round(per_entity, 3),
        **_growth(rows),
    }


def _growth(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Growth of the same-density series from 100 to 1000 entities (when both ran), beside
    the issue's ceiling for comparison."""
    ticks = {row["entities"]: row["tick_ms"] for row in rows}
    if 100 not in ticks or 1000 not in ticks or ticks[100] <= 0:
        return {}
    growth = ticks[1000] / ticks[100]
    return {
        "growth_100_to_1000": round(growth, 2),
        "growth_target": GROWTH_TARGET,
        "growth_within_target": growth <= GROWTH_TARGET,
    }


def _targets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Issue 22's targets, checked when 100 and 1000 entities both ran."""
    ticks = {row["entities"]: row["tick_ms"] for row in rows}
    if 100 not in ticks or 1000 not in ticks:
        return {}
    growth = ticks[1000] / ticks[100] if ticks[100] > 0 else None
    return {
        "growth_100_to_1000": round(growth, 2) if growth is not None else None,
        "growth_target": GROWTH_TARGET,
        "growth_met": growth is not None and growth <= GROWTH_TARGET,
        "tick_1000_ms": ticks[1000],
        "tick_target_ms": TICK_TARGET_MS,
        "tick_met": ticks[1000] <= TICK_TARGET_MS,
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warband bench world",
        description="World tick time (step + percepts for all agents) with 24, 100 and 1000 "
        "entities, next to an all-pairs perception baseline on the same states.",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--quick", action="store_true", help="24 and 100 entities, 3 ticks")
    parser.add_argument("--sizes", type=int, nargs="+", metavar="N", help="entity counts")
    parser.add_argument("--ticks", type=int, metavar="T", help="measured ticks per size")
    parser.add_argument("--warmup", type=int, default=2, metavar="W", help="untimed ticks first")
    parser.add_argument(
        "--sample",
        type=int,
        default=100,
        metavar="S",
        help="above this many observers, time the all-pairs baseline on S of them and scale up",
    )
    parser.add_argument("--columns", type=int, default=64, help="map width in waypoints")
    parser.add_argument("--rows", type=int, default=40, help="map height in waypoints")
    parser.add_argument("--seed", type=int, default=1, help="seed of the map, roster and bots")
    parser.add_argument(
        "--no-same-density",
        dest="same_density",
        action="store_false",
        help="skip the same-density series (maps grown with the entities)",
    )
    return parser


def _progress(message: str) -> None:
    print(f"[bench world] {message}", file=sys.stderr, flush=True)


def _build_world(game_map: Map, entities: int, seed: int) -> World:
    rng = random.Random(seed * 7919 + entities)
    waypoints = game_map.waypoint_ids
    roster = {
        f"bot-{i:04d}": Member(
            "red" if i % 2 == 0 else "blue", CLASSES[i % len(CLASSES)], start=rng.choice(waypoints)
        )
        for i in range(entities)
    }
    return World.create(game_map, seed=seed, roster=roster)


def _act(world: World, agent: str, facts: list[Fact], rng: random.Random) -> None:
    """One simple bot: fire at the nearest enemy in sight, reload when dry, else wander."""
    if ("state", "alive") not in facts:
        return
    team = next(f[2] for f in facts if f[0] == "self")
    enemy = next((str(f[1]) for f in facts if f[0] == "sees" and f[4] != team), None)
    if enemy is None or not world.submit(agent, "fire", {"target": enemy}).accepted:
        world.submit(agent, "reload", {})
    if not any(f[0] == "moving" for f in facts):
        here = next(str(f[2]) for f in facts if f[0] == "at")
        world.submit(agent, "move", {"waypoint": rng.choice(world.map.neighbours(here))})


def _measure(game_map: Map, entities: int, ticks: int, args: argparse.Namespace) -> dict[str, Any]:
    world = _build_world(game_map, entities, args.seed)
    rng = random.Random(args.seed)
    facts = {agent: world.percepts_for(agent) for agent in world.agent_ids}
    deltas = PerceptDeltas()
    for agent in world.agent_ids:  # every agent's first percept: a full one
        deltas.next(agent, facts[agent], world.tick)
    step_ms: list[float] = []
    percept_ms: list[float] = []
    delta_ms: list[float] = []
    full_facts: list[int] = []
    sent_facts: list[int] = []
    act_ms: list[float] = []
    grid_ms: list[float] = []
    base_ms: list[float] = []
    agree, estimated, sightings = True, False, 0
    for tick in range(args.warmup + ticks):
        t0 = time.perf_counter()
        for agent in world.agent_ids:
            _act(world, agent, facts[agent], rng)
        t1 = time.perf_counter()
        world.step()
        t2 = time.perf_counter()
        facts = {agent: world.percepts_for(agent) for agent in world.agent_ids}
        t3 = time.perf_counter()
        changes = [deltas.next(agent, facts[agent], world.tick) for agent in world.agent_ids]
        t4 = time.perf_counter()
        if tick < args.warmup:
            continue
        act_ms.append((t1 - t0) * 1000)
        step_ms.append((t2 - t1) * 1000)
        percept_ms.append((t3 - t2) * 1000)
        delta_ms.append((t4 - t3) * 1000)
        full_facts.append(sum(len(f) for f in facts.values()))
        sent_facts.append(sum(len(c.facts) + len(c.removed) for c in changes))
        eyes, bodies = world.perception_inputs()
        fresh = SightIndex(game_map.walls)  # built once per map in a world: not timed
        t6 = time.perf_counter()
        grid = perceive(eyes, bodies, fresh)
        grid_ms.append((time.perf_counter() - t6) * 1000)
        sightings = sum(len(v) for v in grid.values())
        if len(eyes) <= args.sample or not base_ms:
            sample = eyes if len(eyes) <= args.sample else eyes[: args.sample]
            t5 = time.perf_counter()
            reference = perceive_all_pairs(sample, bodies, game_map.walls)
            elapsed = (time.perf_counter() - t5) * 1000
            estimated = estimated or len(sample) < len(eyes)
            base_ms.append(elapsed * len(eyes) / max(len(sample), 1))
            agree = agree and all(reference[e.id] == grid[e.id] for e in sample)
    step, percepts = statistics.median(step_ms), statistics.median(percept_ms)
    tick_ms = statistics.median(
        s + p + d for s, p, d in zip(step_ms, percept_ms, delta_ms, strict=True)
    )
    grid_median, base_median = statistics.median(grid_ms), statistics.median(base_ms)
    _progress(f"{entities} entities: tick {tick_ms:.2f} ms, all-pairs {base_median:.1f} ms")
    return {
        "entities": entities,
        "tick_ms": round(tick_ms, 3),
        "step_ms": round(step, 3),
        "percepts_ms": round(percepts, 3),
        "deltas_ms": round(statistics.median(delta_ms), 3),
        "facts_per_tick_full": round(statistics.median(full_facts)),
        "facts_per_tick_sent": round(statistics.median(sent_facts)),
        "acts_ms": round(statistics.median(act_ms), 3),
        "perception_grid_ms": round(grid_median, 3),
        "baseline_allpairs_ms": round(base_median, 3),
        "baseline_estimated": estimated,
        "speedup": round(base_median / grid_median, 1) if grid_median > 0 else None,
        "sightings": sightings,
        "agree": agree,
    }


def _table(report: dict[str, Any]) -> str:
    lines = [
        f"world tick on {report['map']} ({report['waypoints']} waypoints, {report['walls']} "
        f"walls), median of {report['ticks']} ticks after {report['warmup']} warm-up",
        "",
        "fixed map (the entities grow, the map does not: the crowd grows ten-fold too)",
        _header("entities"),
    ]
    lines += [_line(f"{row['entities']}", row) for row in report["results"]]
    density = report.get("same_density")
    if density is not None:
        lines += [
            "",
            f"same density (the map grows with the entities: {density['waypoints_per_entity']:g} "
            "waypoints per entity)",
            _header("entities on map"),
        ]
        lines += [
            _line(f"{row['entities']} on {row['columns']}x{row['rows']}", row)
            for row in density["results"]
        ]
    lines += [
        "",
        "tick ms = step + percepts + deltas for every agent (the world actor's work per tick);",
        "sight grid / all-pairs = who sees whom, grid + fresh sight index vs. every pair and wall;",
    ]
    targets = report["targets"]
    if targets:
        lines.append(
            f"issue 22 (fixed map): 100 -> 1000 entities x{targets['growth_100_to_1000']} (target "
            f"<= x{targets['growth_target']:g}: {'met' if targets['growth_met'] else 'missed'}), "
            f"1000-entity tick {targets['tick_1000_ms']:.1f} ms (target <= "
            f"{targets['tick_target_ms']:g} ms: {'met' if targets['tick_met'] else 'missed'})"
        )
    if density is not None and "growth_100_to_1000" in density:
        lines.append(
            f"same density: 100 -> 1000 entities x{density['growth_100_to_1000']} (beside the "
            f"issue's x{density['growth_target']:g}; the issue's target is judged on the fixed map)"
        )
    rows = report["results"] + (density["results"] if density is not None else [])
    if any(row["baseline_estimated"] for row in rows):
        lines.append("* all-pairs timed on a sample of the observers and scaled up linearly.")
    return "\n".join(lines)


def _header(first: str) -> str:
    return (
        f"{first:>16}  {'tick ms':>9}  {'step':>8}  {'percepts':>8}  {'deltas':>7}  "
        f"{'acts':>8}  {'facts/tick full > sent':>22}  {'sight grid':>10}  {'all-pairs':>10}  "
        f"{'speed-up':>8}  agree"
    )


def _line(first: str, row: dict[str, Any]) -> str:
    base = f"{row['baseline_allpairs_ms']:.1f}" + ("*" if row["baseline_estimated"] else "")
    facts = f"{row['facts_per_tick_full']} > {row['facts_per_tick_sent']}"
    return (
        f"{first:>16}  {row['tick_ms']:>9.2f}  {row['step_ms']:>8.2f}  "
        f"{row['percepts_ms']:>8.2f}  {row['deltas_ms']:>7.2f}  {row['acts_ms']:>8.2f}  "
        f"{facts:>22}  {row['perception_grid_ms']:>10.2f}  {base:>10}  "
        f"{row['speedup']!s:>8}  {'yes' if row['agree'] else 'NO'}"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
