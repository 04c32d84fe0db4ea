"""The faults of ``warband bench chaos`` by name, and which of them a command line asks for.

The harness of each fault lives in this package (the tests run the same ones); the benchmark
(bench/chaos.py) runs them and prints their figures next to raw ZeroMQ's.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from .backpressure import backpressure
from .broker_loss import broker_restart, reconnect_storm
from .fuzz import fuzz
from .lifecycle import (
    churn,
    clean_exit,
    restart_intensity,
    start_order,
)
from .partition import partition
from .result import Result
from .strangers import strangers
from .stuck import stuck

FAULTS: dict[str, Callable[[argparse.Namespace], Result]] = {
    "partition": lambda args: partition(blackholes=2 if args.quick else 5),
    "stuck-sigstop": lambda args: stuck("sigstop"),
    "stuck-blocked": lambda args: stuck("blocked"),
    "broker-restart": lambda args: broker_restart(bots=3 if args.quick else 8),
    "backpressure": lambda args: backpressure(2_000 if args.quick else 10_000),
    "start-order": lambda args: start_order(
        orders=4 if args.quick else 20, bots=6 if args.quick else 24
    ),
    "churn": lambda args: churn(60.0 if args.full else 8.0 if args.quick else 20.0, bots=12),
    "clean-exit": lambda args: clean_exit(2 if args.quick else 20 if args.full else 6),
    "reconnect-storm": lambda args: reconnect_storm(bots=24, down_s=4.0 if args.quick else 10.0),
    "restart-intensity": lambda args: restart_intensity(),
    "strangers": lambda args: strangers(10_000 if args.quick else 20_000),
    "fuzz": lambda args: fuzz(args.fuzz),
}
"""Every fault by name, run with the command's options; all but ``fuzz`` (``--fuzz N``) run by
default, in this order."""
FUZZ_DEFAULT = 100_000
"""Inputs of ``--only fuzz`` given without ``--fuzz N``."""


def faults_asked(args: argparse.Namespace) -> list[str]:
    """The faults to run, in order, each once; an unknown name ends the command before any
    fault runs. ``--only fuzz`` without ``--fuzz N`` fuzzes with FUZZ_DEFAULT inputs."""
    unknown = [name for name in args.only or [] if name not in FAULTS]
    if unknown:
        raise SystemExit(
            f"warband bench chaos: unknown fault {unknown[0]!r}; the faults are: "
            + ", ".join(FAULTS)
        )
    names = list(dict.fromkeys(args.only or [name for name in FAULTS if name != "fuzz"]))
    if args.fuzz and "fuzz" not in names:
        names.append("fuzz")
    if "fuzz" in names and not args.fuzz:
        args.fuzz = FUZZ_DEFAULT
    return names


def run_one(name: str, args: argparse.Namespace) -> Result:
    fault = FAULTS[name]
    try:
        return fault(args)
    except Exception as error:  # one fault's harness breaking must not hide the others' figures
        return Result(name, False, note=f"the harness failed: {error!r}")
