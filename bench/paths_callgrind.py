"""Instructions of every waypoint path of a map, searched with a cold memory, under callgrind.

``python bench/paths_callgrind.py [--map warzone-x4]`` runs itself again under
``valgrind --tool=callgrind --dump-before=getloadavg`` and prints the instructions of
:func:`~warband.world.waypoint_path` asked once for every ordered pair of the map's waypoints
(the map loaded and its path memory empty before the mark, so every pair is searched, and the
first search pays for whatever the map's search tables cost), then of the same pairs inside
corridors (a seeded random half of the waypoints, the ends added) with a few links blocked.
Instructions do not depend on the machine's load, which the wall clock does.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # for bench.measure, when run by its path
    sys.path.insert(0, str(REPO))

PHASES = ("plain", "corridors")


def main(argv: list[str] | None = None) -> int:
    """Count the phases under callgrind (or run them, as the child); prints one line each."""
    parser = argparse.ArgumentParser(prog="python bench/paths_callgrind.py", description=__doc__)
    parser.add_argument("--map", default="warzone-x4", help="a bundled map's name")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _run_phases(args.map)
        return 0
    from bench.measure import callgrind_instructions, run_callgrind

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cg.out"
        run_callgrind([sys.executable, __file__, "--child", f"--map={args.map}"], out)
        dumps = sorted(Path(folder).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))
        # Dump n holds what ran before the n-th mark: the first is the set-up.
        counts = [callgrind_instructions(dump) for dump in dumps][1:]
    for phase, count in zip(PHASES, counts, strict=True):
        print(f"{args.map} {phase}: {count:,} instructions")
    return 0


def _run_phases(name: str) -> None:
    from warband.world import load_map, pathfinding, waypoint_path

    game_map = load_map(name)
    ids = list(game_map.waypoint_ids)
    rng = random.Random(1)
    corridors = [set(rng.sample(ids, len(ids) // 2)) for _ in range(8)]
    shut = [rng.sample(list(game_map.links), 3) for _ in range(8)]
    pathfinding._PATHS.pop(game_map, None)
    os.getloadavg()
    for start in ids:
        for goal in ids:
            waypoint_path(game_map, start, goal)
    os.getloadavg()
    for i, start in enumerate(ids):
        for j, goal in enumerate(ids):
            allowed = corridors[(i + j) % 8] | {start, goal}
            waypoint_path(game_map, start, goal, allowed=allowed, blocked_links=shut[i % 8])
    os.getloadavg()


if __name__ == "__main__":
    sys.exit(main())
