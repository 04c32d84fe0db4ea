"""Instructions per step of ``bench env``'s configurations under callgrind, and what they gave.

``python bench/env_callgrind.py [--config NAME ...] [--steps 100] [--seed 1]`` runs itself
again under ``valgrind --tool=callgrind --dump-before=getloadavg`` for each configuration of
``warband bench env`` (all five by default; ``--config "1 learner vs hierarchy"`` for one):
the environment is made and reset as ``bench env`` does (seed ``--seed``, the learners' seeded
random actions), ``os.getloadavg()`` is called before the first step and after the last, so
that one callgrind dump holds the steps alone (a match that ends is reset inside them, as in
``bench env``). It prints, per configuration, the instructions per step (millions) and a hash
of every observation, reward, termination, truncation and info the steps returned: two
versions of warband that hash alike gave the environment's user the same steps.
Instructions do not depend on the machine's load, which ``bench env``'s steps/s do.

``--no-valgrind`` plays the steps in this process and prints the hash and the CPU time per step
(``time.process_time()``, noisy under load; labelled so). ``PYTHONHASHSEED`` is set to 0 for
the counted runs, so two runs of the same code count the same. The last stdout line is one
JSON object: ``results`` (per configuration ``name``, ``steps``, ``unit`` and ``per_step``,
``hash``), ``seed``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def main(argv: list[str]) -> int:
    """Count (or time) each configuration's steps; prints a table and one JSON line."""
    from bench.env import CONFIGS
    from bench.measure import BenchmarkError

    names = [c.name for c in CONFIGS]
    parser = argparse.ArgumentParser(prog="bench/env_callgrind.py", description=__doc__)
    parser.add_argument("--config", action="append", choices=names, help="(all)")
    parser.add_argument("--steps", type=int, default=100, help="steps counted (100)")
    parser.add_argument("--seed", type=int, default=1, help="match and action seed (1)")
    parser.add_argument("--no-valgrind", action="store_true", help="CPU time, not instructions")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.steps < 1:
        print("bench/env_callgrind.py: --steps must be >= 1", file=sys.stderr)
        return 2
    chosen = args.config or names
    if args.child:
        (name,) = chosen
        print(json.dumps(_play(name, args.steps, args.seed)))
        return 0
    if not args.no_valgrind and shutil.which("valgrind") is None:
        print("bench/env_callgrind.py: valgrind not found (or pass --no-valgrind)", file=sys.stderr)
        return 2
    results = []
    for name in chosen:
        print(f"[env callgrind] {name}, {args.steps} steps", file=sys.stderr, flush=True)
        if args.no_valgrind:
            played = _play(name, args.steps, args.seed)
            results.append({"name": name, "steps": args.steps, "unit": "CPU ms", **played})
        else:
            try:
                results.append(_counted(name, args.steps, args.seed))
            except BenchmarkError as error:
                print(f"bench/env_callgrind.py: {name}: {error}", file=sys.stderr)
                return 1
    for r in results:
        shown = r["per_step"] / 1e6 if r["unit"] == "instructions" else r["per_step"]
        unit = "M instructions" if r["unit"] == "instructions" else "CPU ms"
        print(f"{r['name']:<26} {shown:10.2f} {unit} per step   hash {r['hash']}")
    print(json.dumps({"results": results, "seed": args.seed}))
    return 0


def _play(name: str, steps: int, seed: int) -> dict[str, Any]:
    """Play ``steps`` steps of the configuration called ``name``: CPU ms per step and hash."""
    from bench.env import CONFIGS, open_env

    config = next(c for c in CONFIGS if c.name == name)
    env = open_env(config, 6, steps, seed)
    returned: list[Any] = []
    try:
        os.getloadavg()  # callgrind's dump: what came before is not counted
        started = time.process_time()
        for _ in range(steps):
            if not env.agents:
                returned.append(env.reset())
            actions = {agent: env.action_space(agent).sample() for agent in env.agents}
            returned.append(env.step(actions))
        cpu = time.process_time() - started
        os.getloadavg()  # and the steps' dump ends here
    finally:
        env.close()
    digest = hashlib.sha256(pickle.dumps(_plain(returned))).hexdigest()[:16]
    return {"per_step": cpu * 1000 / steps, "hash": digest}


def _plain(value: Any) -> Any:
    """``value`` with arrays as (dtype, shape, bytes) and mappings sorted: picklable alike."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return tuple(sorted((str(k), _plain(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    return value


def _counted(name: str, steps: int, seed: int) -> dict[str, Any]:
    """Run this file under callgrind for one configuration: instructions per step and hash."""
    from bench.measure import callgrind_instructions, run_callgrind

    with tempfile.TemporaryDirectory(prefix="env-callgrind-") as scratch:
        out = Path(scratch) / "callgrind.out"
        child = [sys.executable, str(Path(__file__).resolve()), "--child", "--config", name]
        child += ["--steps", str(steps), "--seed", str(seed)]
        done = run_callgrind(child, out)
        played = json.loads(done.stdout.strip().splitlines()[-1])
        # dump 1: up to the first mark; 2: the steps
        instructions = callgrind_instructions(Path(f"{out}.2"))
    return {
        "name": name,
        "steps": steps,
        "unit": "instructions",
        "per_step": instructions / steps,
        "hash": played["hash"],
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
