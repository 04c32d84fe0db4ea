"""``warband bench chaos``: faults against warband and against raw ZeroMQ, in the same run.

Each fault runs twice at the same moment or one after the other: once against warband (broker,
actors, ``warband run --processes``) and once against a raw-pyzmq baseline of the same fault
(a DEALER sending numbered frames to a ROUTER at a fixed rate, lost frames counted by sequence
number). Faults:

- **partition**: two network namespaces (the "squad host" with the broker and the receivers,
  the "bots host" with the senders) joined by a veth pair with link-local addresses; the link
  is blackholed both ways (``tc qdisc ... netem loss 100%``) for 3 s, 5 times. Warband's sender
  and the baseline's DEALER send 100 msg/s each across the same link during the same
  blackholes. Needs CAP_NET_ADMIN (``ip netns add``): skipped with the reason otherwise.
- **stuck-sigstop** and **stuck-blocked**: a requester asks a bot process every 0.1 s; the bot
  is stopped with SIGSTOP for 3 s, or its event loop is blocked for 3 s. Warband's broker flags
  it (broker pings every 0.5 s), the requester's waiting conversations fail and close at once,
  the bot is told (EndTalk), and the replies it sends when it wakes are dropped and logged. The
  baseline is a DEALER with ZMTP heartbeats at the same interval: libzmq's I/O thread answers
  heartbeats, so it sees a stopped process but never a blocked loop.
- **churn**: ``kill -9`` a random bot every 2 s in a ``--processes`` Warzone match.
- **clean-exit**: SIGINT or SIGTERM at a random moment of ``--processes`` runs, half of them
  with a bot that keeps sending to an id nobody has: every process gone within 5 s, none
  orphaned, the summary printed.
- **broker-restart**: ``kill -9`` the broker under a commander ordering bots every 20 ms, start
  it again 1 s later: everyone re-registers, outstanding orders are re-sent, none lost or run
  twice. Baseline: a DEALER at a ROUTER closed and bound again.
- **backpressure**: 10,000 Percepts (an Order after every 100th) at a bot whose handler sleeps
  50 ms: no silent drop, orders kept, conflation counted and logged, mailbox within its bound,
  broker RSS growth. Baseline: frames a raw DEALER refuses with EAGAIN at its HWM.
- **start-order**: broker, clock, commander and 24 bots started in 20 random orders: every
  first order answered.
- **reconnect-storm**: the broker down 10 s under 24 actors: tries per second per bot, jitter,
  all back. Baseline: DEALERs with libzmq's default reconnect interval.
- **restart-intensity**: an agent crashing at start under 3 restarts per 10 s is restarted 3
  times, then given up on and its squad led without it.
- **strangers**: raw DEALERs on the TCP port of a ``--processes`` run: an undeclared id that
  registers, sends ``_Ready`` and ``_FinishRun``; ``supervisor`` sending ``_GaveUp`` for every
  agent; an impostor claiming bot-1's id while it restarts after ``kill -9``. Baseline: the same
  run and kill without strangers; 0 keys of the run's summary may differ.
- **fuzz** (with ``--fuzz N``): N malformed inputs into the codec, and N frames into a live
  broker and actor next to a good client.

This module is the command: its options, the registry of faults (:data:`FAULTS`) and the
report. The faults live in tests/chaoslib/, one module per family, each next to its raw
baseline (see tests/chaoslib/__init__.py); the harnesses of broker-restart, backpressure,
start-order, reconnect-storm and restart-intensity in tests/chaoslib/faults.py, which their tests in
tests/messaging run too: the tests assert what happened, this benchmark prints how fast.
``passed`` is correctness only; ``target`` names the issue's timing target and ``target_met``
says whether this run held it.

``main(argv)`` is the entry point. With ``--json`` the last stdout line is one JSON object whose
``tests`` list holds one entry per fault with ``name``, ``passed``, ``lost``, ``duplicated``,
the times measured (``detect_s``, ``recover_s``, ...), ``target`` and ``target_met``, and the
baseline's figures (``baseline_lost``, ``baseline_detect_s``, ...). Progress goes to stderr.
Children of this benchmark run ``python -m tests.chaoslib.roles ROLE``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import zmq

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `warband bench` runs this file by path; its faults are a package
    sys.path.insert(0, str(REPO))

from tests.chaoslib.registry import FUZZ_DEFAULT, faults_asked, run_one  # noqa: E402
from tests.chaoslib.result import Result, progress  # noqa: E402


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from warband.messaging.tracing import configure_logging

    configure_logging(None, "chaos", level="error")
    names = faults_asked(args)
    started = time.monotonic()
    results: list[Result] = []
    for name in names:
        progress(f"{name}: running")
        result = run_one(name, args)
        results.append(result)
        progress(f"{name}: {result.verdict}")
    report = {
        "tests": [result.entry() for result in results],
        "seconds": round(time.monotonic() - started, 1),
        "quick": args.quick,
        "python": sys.version.split()[0],
        "libzmq": zmq.zmq_version(),
    }
    print(_table(results), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(report))
    return 0 if all(result.passed is not False for result in results) else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warband bench chaos", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument("--quick", action="store_true", help="fewer blackholes, kills and runs")
    parser.add_argument(
        "--full", action="store_true", help="churn for 60 s and 20 clean exits (issue 12)"
    )
    parser.add_argument(
        "--fuzz",
        type=int,
        default=0,
        metavar="N",
        help=f"also fuzz with N inputs (1000000 for issue 12; {FUZZ_DEFAULT:,} for --only fuzz)",
    )
    parser.add_argument(
        "--only", action="append", metavar="FAULT", help="run only this fault; repeatable"
    )
    return parser


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _table(results: list[Result]) -> str:
    header = (
        "fault",
        "result",
        "lost",
        "dup",
        "detect s",
        "recover s",
        "baseline lost",
        "baseline detect s",
        "baseline recover s",
        "target",
        "met",
    )
    rows = [header]
    for r in results:
        f = r.figures
        rows.append(
            (
                r.name,
                r.verdict,
                _fmt(r.lost),
                _fmt(r.duplicated),
                _fmt(f.get("detect_s")),
                _fmt(f.get("recover_s") or f.get("exit_s") or f.get("restart_s")),
                _fmt(f.get("baseline_lost")),
                _fmt(f.get("baseline_detect_s")),
                _fmt(f.get("baseline_recover_s")),
                r.target or "-",
                {True: "yes", False: "NO", None: "-"}[r.target_met],
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    for r in results:
        extra = {
            k: v
            for k, v in r.figures.items()
            if k
            not in (
                "detect_s",
                "recover_s",
                "baseline_lost",
                "baseline_detect_s",
                "baseline_recover_s",
            )
        }
        lines.append(f"{r.name}: {json.dumps(extra)}")
        if r.note:
            lines.append(f"  {r.note}")
    return "\n".join(lines)
