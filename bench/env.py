"""``warband bench env``: steps per second of warband.env's environments at 6 v 6.

Each configuration plays ``--steps`` environment steps (one step is one lockstep tick of the
match) with uniformly random actions from a seeded generator, from a match started with
``--seed``; a match that ends first is reset and play goes on. Configurations, all 6 bots a
side by default (``--bots``):

==========================  ==================================================================
``world alone``             every bot learns; the :class:`~warband.world.World` is stepped
                            directly, no run (``backend="world"``): the baseline
``run, learners only``      every bot learns, in a warband run (world actor, broker, learner
                            actors): what the run costs the environment, without agents
``1 learner vs freelance``  red-1 learns; the 11 other bots are warband's, freelance
``1 learner vs hierarchy``  red-1 learns; the 11 other bots are warband's, each team led by
                            its commander and squads
``6 learners vs freelance`` red's bots learn; blue is warband's freelance bots
``6 learners vs hierarchy`` red's bots learn; blue is warband's hierarchy
==========================  ==================================================================

- **steps/s**: steps divided by the time spent in ``step()`` (``reset()`` excluded), the median
  over ``--repeat`` rounds (the configurations take turns in each round, so that a change in
  the machine's load hits them alike);
- **step ms p50 / p99**: nearest-rank percentiles of single steps over every round.

The target of issue 23 is at least 200 steps/s with warband's opponents; the table says "met"
or "MISSED" for each configuration with opponents. The machine's one-minute load average is
printed: other work on the machine shows in every figure.

``main(argv)`` is the entry point (``warband bench env`` loads this file by path). With
``--json`` the last stdout line is one JSON object; each entry of ``results`` has the keys
``name``, ``learners``, ``opponents`` (``none``, ``freelance`` or ``hierarchy``), ``backend``,
``bots_per_team``, ``steps``, ``steps_per_s``, ``step_ms_p50``, ``step_ms_p99`` and ``met``
(null without opponents); then ``target_steps_per_s``, the settings and ``load_average``.
Progress goes to stderr.
"""

# No `from __future__ import annotations`: `warband bench` executes this file without adding it
# to sys.modules (see bench/messaging.py).

import argparse
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # the env extra is imported only when a configuration runs
    from warband.env import WarzoneParallelEnv

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `warband bench` runs this file by path; bench is a package
    sys.path.insert(0, str(REPO))

from bench.measure import BenchmarkError, percentile  # noqa: E402

TARGET_STEPS_PER_S: Final = 200.0
"""Issue 23: steps per second at 6 v 6 with warband's opponents."""


@dataclass(frozen=True)
class Config:
    name: str
    learners: str
    """``all``, ``one`` (red-1) or ``red``."""
    opponents: str
    backend: str


CONFIGS: Final = (
    Config("world alone", "all", "none", "world"),
    Config("run, learners only", "all", "none", "run"),
    Config("1 learner vs freelance", "one", "freelance", "run"),
    Config("1 learner vs hierarchy", "one", "hierarchy", "run"),
    Config("6 learners vs freelance", "red", "freelance", "run"),
    Config("6 learners vs hierarchy", "red", "hierarchy", "run"),
)


def main(argv: list[str]) -> int:
    """Run the benchmark; prints a table (and with ``--json`` one JSON line); 0 on success."""
    args = _parser().parse_args(argv)
    try:
        from warband.env import WarzoneParallelEnv  # noqa: F401 - the extra must be there
    except ImportError as missing:
        print(f"warband bench env: {missing}", file=sys.stderr)
        return 2
    steps = args.steps if args.steps is not None else (40 if args.quick else 400)
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    if steps < 1 or repeat < 1 or not 1 <= args.bots <= 12:
        print("warband bench env: --steps and --repeat must be >= 1, --bots 1..12", file=sys.stderr)
        return 2
    load_before = _load()
    samples: dict[str, list[float]] = {c.name: [] for c in CONFIGS}
    rates: dict[str, list[float]] = {c.name: [] for c in CONFIGS}
    for round_ in range(1, repeat + 1):
        for config in CONFIGS:
            _progress(f"round {round_}/{repeat}: {config.name}, {steps} steps")
            durations = _play(config, args.bots, steps, args.seed + round_ - 1)
            samples[config.name] += durations
            rates[config.name].append(len(durations) / sum(durations))
    results = [_entry(c, args.bots, steps, samples[c.name], rates[c.name]) for c in CONFIGS]
    report = {
        "results": results,
        "target_steps_per_s": TARGET_STEPS_PER_S,
        "bots_per_team": args.bots,
        "steps": steps,
        "repeat": repeat,
        "seed": args.seed,
        "load_average": [load_before, _load()],
        "cores": os.cpu_count(),
        "python": platform.python_version(),
    }
    print(_table(report))
    if args.json:
        print(json.dumps(report, sort_keys=True))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warband bench env",
        description="Steps per second of warband.env at 6 v 6: the world alone, and with "
        "warband's bots as opponents (freelance, hierarchy).",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--quick", action="store_true", help="40 steps, one round")
    parser.add_argument("--steps", type=int, metavar="N", help="steps per configuration (400)")
    parser.add_argument("--repeat", type=int, metavar="R", help="rounds (3)")
    parser.add_argument("--bots", type=int, default=6, metavar="B", help="bots a side (6)")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="match seed (1)")
    return parser


def _learners(config: Config, bots: int) -> list[str]:
    red = [f"red-{i}" for i in range(1, bots + 1)]
    if config.learners == "one":
        return red[:1]
    if config.learners == "red":
        return red
    return [*red, *(f"blue-{i}" for i in range(1, bots + 1))]


def open_env(config: Config, bots: int, steps: int, seed: int) -> "WarzoneParallelEnv":
    """The environment of ``config`` with ``bots`` a side, reset with ``seed`` and its action
    spaces seeded, for ``steps`` steps at least before its match ends; the caller closes it."""
    from warband.env import WarzoneParallelEnv

    opponents = config.opponents if config.opponents != "none" else "freelance"
    env = WarzoneParallelEnv(
        bots=bots,
        learners=_learners(config, bots),
        red=opponents,
        blue=opponents,
        backend=config.backend,
        time_limit=max(steps, 400),
    )
    try:
        env.reset(seed=seed)
        for agent in env.possible_agents:
            env.action_space(agent).seed(seed)
    except BaseException:
        env.close()
        raise
    return env


def _play(config: Config, bots: int, steps: int, seed: int) -> list[float]:
    """The duration of each ``step()`` of ``steps`` steps of ``config``."""
    env = open_env(config, bots, steps, seed)
    durations: list[float] = []
    try:
        while len(durations) < steps:
            if not env.agents:
                env.reset()
            actions = {agent: env.action_space(agent).sample() for agent in env.agents}
            started = time.perf_counter()
            env.step(actions)
            durations.append(time.perf_counter() - started)
    finally:
        env.close()
    if not durations:
        raise BenchmarkError(f"{config.name}: no step was measured")
    return durations


def _entry(
    config: Config, bots: int, steps: int, durations: list[float], rates: list[float]
) -> dict[str, Any]:
    rate = statistics.median(rates)
    with_opponents = config.opponents != "none"
    return {
        "name": config.name,
        "learners": len(_learners(config, bots)),
        "opponents": config.opponents,
        "backend": config.backend,
        "bots_per_team": bots,
        "steps": steps,
        "steps_per_s": round(rate, 1),
        "step_ms_p50": round(percentile(durations, 0.5) * 1000, 2),
        "step_ms_p99": round(percentile(durations, 0.99) * 1000, 2),
        "met": rate >= TARGET_STEPS_PER_S if with_opponents else None,
    }


def _table(report: dict[str, Any]) -> str:
    lines = [
        f"warband.env, {report['bots_per_team']} v {report['bots_per_team']}, "
        f"{report['steps']} steps x {report['repeat']} rounds (target with opponents: "
        f">= {report['target_steps_per_s']:g} steps/s)",
        f"{'configuration':<26} {'learners':>8} {'steps/s':>9} {'p50 ms':>8} {'p99 ms':>8}  target",
    ]
    for r in report["results"]:
        target = "" if r["met"] is None else ("met" if r["met"] else "MISSED")
        lines.append(
            f"{r['name']:<26} {r['learners']:>8} {r['steps_per_s']:>9.1f} "
            f"{r['step_ms_p50']:>8.2f} {r['step_ms_p99']:>8.2f}  {target}"
        )
    before, after = report["load_average"]
    lines.append(f"load average (1 min): {before:.2f} before, {after:.2f} after")
    return "\n".join(lines)


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return -1.0


def _progress(text: str) -> None:
    print(f"[bench env] {text}", file=sys.stderr, flush=True)
