"""The ``warband`` command: run | sweep | agent | broker | gateway | keys | trace | bench | render |
view | scenarios.

Exit codes: 0 when the command did its job (for ``run``: the run completed, whatever its
outcome; read ``outcome`` in the ``--json`` line), 1 when it failed while running, 2 for bad
usage or bad input (a missing file, an unknown parameter, a malformed scenario...), 128 + N when
signal N stopped it, 141 when its stdout or stderr was a pipe that closed (see
:mod:`warband.pipes`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import math
import os
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, cast

from . import __version__
from ._paths import wrong_kind
from .exceptions import ConfigurationError, WarbandError

if TYPE_CHECKING:
    from .launcher import RunOptions
    from .messaging.secret import RunSecret
    from .scenario import Scenario

BENCHMARKS = ("messaging", "planning", "world", "warzone", "chaos", "view", "env", "scale")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    from .pipes import exit_status, guard_standard_streams

    # A closed stdout or stderr (`warband run ... | head`) stops the command as SIGPIPE stops
    # a Unix tool, with status 141 (see warband.pipes).
    guard_standard_streams()
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except ConfigurationError as error:
        print(f"warband: error: {error}", file=sys.stderr)
        code = 2
    except WarbandError as error:
        print(f"warband: error: {error}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        print("warband: interrupted", file=sys.stderr)
        code = 130
    return exit_status(code)


def run_file(path: str | Path, argv: Sequence[str] | None = None) -> int:
    """``warband run PATH ARGV...``: how a scenario file runs itself as a script.

    A scenario ends with ``raise SystemExit(run_file(__file__))`` under
    ``if __name__ == "__main__":``, so ``python scenarios/x.py --json`` takes every option of
    ``warband run`` (``argv`` defaults to ``sys.argv[1:]``). The file is not imported a second
    time: the run uses the ``scenario`` of the running ``__main__`` module.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    return main(["run", str(path), *args])


class _Parser(argparse.ArgumentParser):
    """argparse with bad usage reported as every other bad input is: one line on stderr, exit
    2 (argparse's own prints its whole usage first, nine lines for ``warband run``)."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("warband").strip()
        where = f"{command}: " if command else ""
        help_hint = f"`{self.prog} --help`"
        self.exit(2, f"warband: error: {where}{message} (see {help_hint})\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="warband",
        description="Team AI for games: message-passing actors over ZeroMQ.",
    )
    parser.add_argument("--version", action="version", version=f"warband {__version__}")
    # Each subcommand's parser is a _Parser too (argparse makes them of the parent's class).
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", required=True, metavar="COMMAND"),
    )
    _add_run(commands)
    _add_sweep(commands)
    _add_agent(commands)
    _add_broker(commands)
    _add_gateway(commands)
    _add_keys(commands)
    _add_trace(commands)
    _add_metrics(commands)
    _add_bench(commands)
    _add_render(commands)
    _add_explain(commands)
    _add_view(commands)
    _add_scenarios(commands)
    return parser


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="seed of every random source (0)")
    parser.add_argument("--ticks", type=int, help="number of ticks (default: the scenario's)")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a scenario parameter; repeatable",
    )
    parser.add_argument("--log", type=Path, metavar="DIR", help="write JSON trace logs here")
    parser.add_argument(
        "--kill",
        action="append",
        default=[],
        metavar="AGENT@TICK",
        help="kill AGENT when tick TICK reaches it, before it acts on it (with --processes: "
        "SIGKILL to its process; the supervisor's restart stays dead), to watch the run go on "
        "without it; repeatable",
    )
    parser.add_argument(
        "--live",
        metavar="ENDPOINT",
        help="push the run's events to the `warband view --live ENDPOINT` bound there (it may "
        "start before or after the run; a slow viewer loses events, never slows the run)",
    )
    parser.add_argument(
        "--mode",
        choices=("lockstep", "realtime"),
        default="lockstep",
        help="clock mode (lockstep: deterministic; realtime: wall-clock ticks)",
    )
    parser.add_argument(
        "--planning-budget",
        type=int,
        metavar="N",
        help="realtime runs: the agents of each process share N planner expansions per tick, "
        "served in turn (Pittman's planning scheduler); an agent whose decision waits goes on "
        "with its plan (default: each agent plans with its role's own budget)",
    )
    parser.add_argument(
        "--tick-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long the clock waits for a TickDone before moving on (10)",
    )
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long the clock waits for every participant to connect (60)",
    )
    parser.add_argument(
        "--broker-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long an actor waits for its broker, at the start or once lost, before it "
        "exits (30); a broker that refuses its key or run secret ends it at once",
    )
    parser.add_argument(
        "--curve",
        type=Path,
        metavar="KEYDIR",
        help="encrypt and authenticate every connection with the CURVE keys in KEYDIR (made "
        "by `warband keys`); needs a tcp:// endpoint",
    )
    _add_otel_option(parser)


def _add_otel_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--otel",
        metavar="ENDPOINT",
        help="export OpenTelemetry spans (one per message handled; a broker: per traced frame "
        "routed; a run, a sweep and each of its runs: one) to this OTLP/HTTP collector, e.g. "
        "http://localhost:4318 (default: $OTEL_EXPORTER_OTLP_ENDPOINT, else off); needs "
        "pip install 'warband[otel]'",
    )


def _add_run(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser("run", help="run a scenario script", description="Run a scenario.")
    run.add_argument(
        "scenario",
        type=Path,
        help="scenario file, e.g. scenarios/ping_pong.py, or a bundled scenario's name, e.g. "
        "ping_pong (`warband scenarios` lists them)",
    )
    run.add_argument(
        "--processes",
        action="store_true",
        help="run the broker, the clock and every actor each in its own OS process",
    )
    run.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="run the broker and the clock each in its own OS process and the agents in N "
        "worker processes, each one event loop for many agents (placed by the scenario's "
        "groups, else round-robin)",
    )
    run.add_argument("--json", action="store_true", help="end with one JSON summary line")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    run.add_argument(
        "--endpoint",
        metavar="ENDPOINT",
        help="broker endpoint (default: inproc:// in one process, ipc:// across processes)",
    )
    run.add_argument(
        "--view",
        action="store_true",
        help="start `warband view --live` for this run: its URL is printed first, and it "
        "keeps serving after the run ends until Ctrl-C",
    )
    run.add_argument(
        "--view-port",
        type=int,
        default=8765,
        metavar="PORT",
        help="with --view: the page's port (8765; 0 picks a free one)",
    )
    run.add_argument(
        "--max-restarts",
        type=int,
        default=3,
        metavar="N",
        help="with --processes: restarts of a crashed agent allowed per --restart-period; past "
        "them the supervisor gives up and the agent's superior is told (gave_up) (3)",
    )
    run.add_argument(
        "--restart-period",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="the period over which --max-restarts counts (10)",
    )
    _add_run_options(run)
    run.add_argument(
        "--secret",
        type=Path,
        metavar="FILE",
        help="the run secret (`warband keys DIR --secret` writes DIR/run.secret) instead of one "
        "made for this run: what an outside participant the scenario declares proves its id "
        "with (PROTOCOL.md section 10)",
    )
    run.set_defaults(handler=_run)


def _add_sweep(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sweep = commands.add_parser(
        "sweep",
        help="run a scenario over many seeds and count the wins",
        description="Run a scenario over seeds 1..N, each seed its own `warband run` process, "
        "and print wins per side (95% Wilson interval) and mean outcome details. A scenario "
        "with sides names the winning side as `winner` in its outcome details.",
    )
    sweep.add_argument("scenario", type=Path, help="scenario file, e.g. scenarios/skirmish.py")
    sweep.add_argument("--seeds", type=int, required=True, metavar="N", help="run seeds 1..N")
    sweep.add_argument(
        "--jobs", type=int, metavar="J", help="runs at a time (default: the number of cores)"
    )
    sweep.add_argument(
        "--run-timeout",
        type=float,
        metavar="SECONDS",
        help="stop a run that has not ended after SECONDS (SIGTERM, then SIGKILL) and count it "
        "as an error, so that one stalled run cannot hold up the sweep (default: no limit)",
    )
    sweep.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a scenario parameter for every run; repeatable",
    )
    sweep.add_argument("--ticks", type=int, help="number of ticks (default: the scenario's)")
    sweep.add_argument("--mode", choices=("lockstep", "realtime"), help="clock mode of each run")
    sweep.add_argument("--processes", action="store_true", help="each run across processes")
    sweep.add_argument("--json", action="store_true", help="end with one JSON line")
    sweep.add_argument(
        "--metrics",
        action="store_true",
        help="measure how each run played (warband metrics) and add the means and spreads",
    )
    sweep.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    _add_otel_option(sweep)
    sweep.set_defaults(handler=_sweep)


def _add_agent(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    agent = commands.add_parser(
        "agent",
        help="run one actor (or several) of a scenario, connected to a broker",
        description="Run one actor of a scenario (or its clock), or several actors in one "
        "process (--ids), and connect them to a broker.",
    )
    agent.add_argument("--connect", required=True, metavar="ENDPOINT", help="broker endpoint")
    agent.add_argument("--scenario", required=True, type=Path, help="scenario file")
    which = agent.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", dest="agent_id", help="agent id, e.g. bot-3 (or the clock's)")
    which.add_argument(
        "--ids",
        metavar="ID,ID,...",
        help="several agents in this one process, one event loop for them all, e.g. "
        "red-1,red-2,red-squad-1 (not the clock)",
    )
    agent.add_argument(
        "--name",
        metavar="NAME",
        help="the process's name in its log file's name (default: its id; with --ids, "
        "the first id and how many more, e.g. red-1+2)",
    )
    agent.add_argument(
        "--result", type=Path, metavar="FILE", help="(clock only) write the run result JSON here"
    )
    agent.add_argument(
        "--heartbeat",
        type=Path,
        metavar="FILE",
        help="(clock only; `warband run --processes` passes it) replace FILE with the run's "
        "progress every half second, the launcher's sign that the clock still answers",
    )
    agent.add_argument(
        "--quiet", "-q", action="store_true", help="(clock only) no tick progress on stderr"
    )
    _add_secret_option(agent)
    _add_run_options(agent)
    agent.set_defaults(handler=_agent)


def _add_broker(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    broker = commands.add_parser(
        "broker", help="run a message broker", description="Route messages between actors."
    )
    broker.add_argument("--bind", required=True, metavar="ENDPOINT", help="e.g. tcp://0.0.0.0:5555")
    broker.add_argument("--log", type=Path, metavar="DIR", help="write JSON logs here")
    broker.add_argument(
        "--heartbeat",
        type=Path,
        metavar="FILE",
        help="(`warband run --processes` passes it) touch FILE every half second, the "
        "launcher's sign that the broker still answers",
    )
    broker.add_argument(
        "--live", metavar="ENDPOINT", help="push its events to a `warband view --live ENDPOINT`"
    )
    _add_otel_option(broker)
    broker.add_argument(
        "--quiet", "-q", action="store_true", help="no 'routing on ENDPOINT' line on stderr"
    )
    broker.add_argument(
        "--curve",
        type=Path,
        metavar="KEYDIR",
        help="let in only agents whose public key (ID.key) is in KEYDIR, encrypted, each bound "
        "to its key's id; KEYDIR also holds broker.key_secret; needs a tcp:// endpoint",
    )
    _add_secret_option(broker)
    broker.set_defaults(handler=_broker)


def _add_gateway(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    gateway = commands.add_parser(
        "gateway",
        help="let WebSocket clients (game engines, browsers) join a run, in JSON",
        description="Bridge WebSocket clients to a run: each connection is one participant "
        "speaking JSON (PROTOCOL.md, section 15); the gateway registers, pings, acknowledges "
        "and de-duplicates for it. Prints the WebSocket URL first.",
    )
    gateway.add_argument(
        "--connect", required=True, metavar="ENDPOINT", help="the run's broker endpoint"
    )
    gateway.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (127.0.0.1; another needs --tokens)",
    )
    gateway.add_argument("--port", type=int, default=8766, help="port to listen on (8766)")
    gateway.add_argument(
        "--tokens",
        type=Path,
        metavar="DIR",
        help="let a client play agent ID only with the token in DIR/ID.token (`warband keys DIR "
        "--tokens ID[,ID...]` writes them); without it, any id, on loopback only",
    )
    gateway.add_argument(
        "--curve",
        type=Path,
        metavar="KEYDIR",
        help="clients' connections to the broker use the CURVE keys in KEYDIR (ID.key_secret of "
        "each id played, broker.key)",
    )
    _add_secret_option(gateway)
    gateway.add_argument(
        "--clock",
        default="clock",
        metavar="ID",
        help="the run's clock, unless a client names it: clock (world for a scenario with a world)",
    )
    gateway.add_argument(
        "--queue",
        type=int,
        default=10_000,
        metavar="N",
        help="messages waiting for a client before it is dropped as too slow (10000)",
    )
    gateway.add_argument(
        "--tick-timeout",
        type=float,
        default=5.0,
        metavar="S",
        help="seconds a lockstep client has to answer a Tick with TickDone before it is "
        "dropped (5)",
    )
    gateway.add_argument(
        "--register-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a client has to send its _Register before it is closed (10)",
    )
    gateway.add_argument("--log", type=Path, metavar="DIR", help="write JSON logs here")
    gateway.add_argument(
        "--quiet", "-q", action="store_true", help="no line on stderr but the summary"
    )
    gateway.set_defaults(handler=_gateway)


def _add_secret_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--secret",
        type=Path,
        metavar="FILE",
        help="the run secret file (`warband keys DIR --secret` writes DIR/run.secret): the "
        "broker lets in only connections that prove their id with it, and refuses "
        "'supervisor' without it; give the same file to the broker and every agent",
    )


def _add_keys(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keys = commands.add_parser(
        "keys",
        help="make CURVE key pairs for a broker and its agents",
        description="Write a CURVE key pair for the broker (broker.key, broker.key_secret), "
        "for the supervisor of `warband run --processes` (supervisor.key...) and one per agent "
        "(ID.key, ID.key_secret) into DIR. The broker's host needs broker.key_secret and every "
        "ID.key; the host of agent ID needs ID.key_secret and broker.key. Then pass --curve DIR "
        "to `warband broker`, `agent` and `run`. With --secret, also (or only) a run secret, "
        "DIR/run.secret: one file for every host, passed as --secret FILE to `warband broker` "
        "and `warband agent`.",
    )
    keys.add_argument("directory", type=Path, metavar="DIR", help="where to write the keys")
    keys.add_argument(
        "--agents", metavar="ID[,ID...]", help="agent ids to make keys for (comma-separated)"
    )
    keys.add_argument(
        "--scenario",
        type=Path,
        help="make keys for every agent of this scenario and its clock",
    )
    keys.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --scenario: a scenario parameter that changes its agents; repeatable",
    )
    keys.add_argument(
        "--secret",
        action="store_true",
        help="also write DIR/run.secret, a run secret for `warband broker` and `warband agent` "
        "--secret (a shared password: keeps strangers out without per-agent keys)",
    )
    keys.add_argument(
        "--tokens",
        metavar="ID[,ID...]",
        help="also (or only) write a `warband gateway` token for each of these agent ids, "
        "DIR/ID.token: the gateway's host needs them all (--tokens DIR), each client its own",
    )
    keys.add_argument("--force", action="store_true", help="replace existing key files")
    keys.set_defaults(handler=_keys)


def _add_trace(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trace = commands.add_parser(
        "trace",
        help="merge and render the message flow of a run's logs",
        description="Merge the logs of every process of a run into one message flow. A "
        "participant that logs nothing (a client in another language) is drawn from the other "
        "side's logs, marked as known from one side only; lines that are not log events are "
        "skipped and listed at the end (in Mermaid as %% comments).",
    )
    trace.add_argument("log_dir", type=Path, metavar="DIR", help="the run's --log directory")
    trace.add_argument("--format", choices=("text", "mermaid", "json"), default="text")
    trace.add_argument(
        "--agent",
        metavar="ID",
        help="only messages to or from this agent, and the group messages it received (its "
        "Ticks); an id in no log is refused with the ids there",
    )
    trace.add_argument("--conversation", metavar="ID", help="only this conversation")
    trace.add_argument(
        "--type", action="append", dest="types", metavar="T", help="only this message type"
    )
    trace.set_defaults(handler=_trace)


def _add_metrics(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    metrics = commands.add_parser(
        "metrics",
        help="how a match played, per team, from a run's logs",
        description="Measure how Killzone matches played, per team, from their --log "
        "directories alone: stuck bots, order-starved and crowded bot-ticks, oscillations, plan "
        "churn, enemies ignored, regroups, orders and first captures (see warband.metrics).",
    )
    metrics.add_argument(
        "log_dirs", type=Path, nargs="+", metavar="LOG_DIR", help="a run's --log directory"
    )
    metrics.add_argument("--json", action="store_true", help="one JSON object (a list for many)")
    metrics.set_defaults(handler=_metrics)


def _metrics(args: argparse.Namespace) -> int:
    from .metrics import metrics_command

    print(metrics_command(args.log_dirs, as_json=args.json))
    return 0


def _add_bench(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench",
        help="run a benchmark",
        description="Run a benchmark; figures are printed next to baselines from the same run. "
        "Benchmarks live in the bench/ folder of a source checkout and are not installed with "
        "the package: run this from a clone of the repository (pip install -e . there).",
    )
    bench.add_argument("name", choices=BENCHMARKS)
    bench.add_argument("rest", nargs=argparse.REMAINDER, help="options for the benchmark")
    bench.set_defaults(handler=_bench)


def _add_render(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    render = commands.add_parser(
        "render",
        help="draw a map or a run's world state",
        description="Draw a bundled map, a map file, or a run's log directory as PNG or SVG.",
    )
    render.add_argument("source", metavar="MAP_OR_LOG", help="map name, map file or log dir")
    render.add_argument("--tick", type=int, help="which tick of a run to draw (default: last)")
    render.add_argument("--out", type=Path, required=True, help="output .png or .svg file")
    render.set_defaults(handler=_render)


# --- handlers ---------------------------------------------------------------------------------


def _params(pairs: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator or not key:
            raise ConfigurationError(f"--param expects KEY=VALUE, got {pair!r}")
        params[key.strip()] = value
    return params


def _check_run_options(args: argparse.Namespace) -> None:
    """Refuse option values the run would only trip over later, before anything starts."""
    if args.ticks is not None and args.ticks < 1:
        raise ConfigurationError(f"--ticks must be at least 1, got {args.ticks}")
    for flag in ("tick_timeout", "start_timeout", "broker_timeout"):
        value = getattr(args, flag)
        if not (math.isfinite(value) and value > 0):
            name = "--" + flag.replace("_", "-")
            raise ConfigurationError(f"{name} must be a positive number of seconds, got {value}")
    if getattr(args, "max_restarts", 0) < 0:
        raise ConfigurationError(f"--max-restarts must be 0 or more, got {args.max_restarts}")
    period = getattr(args, "restart_period", 1.0)
    if not (math.isfinite(period) and period > 0):
        raise ConfigurationError(
            f"--restart-period must be a positive number of seconds, got {period}"
        )
    _check_log_dir(args.log)
    curve = getattr(args, "curve", None)
    problem = None if curve is None else wrong_kind(curve, "directory")
    if problem is not None:
        raise ConfigurationError(
            f"--curve {str(curve)!r} {problem}; pass the key directory `warband keys DIR` wrote"
        )


def _check_result_file(path: Path | None) -> None:
    """Refuse a ``--result`` file that could not be written, before the run plays (else the
    whole match runs and its result is lost at the end)."""
    if path is None:
        return
    folder = path.parent
    problem = wrong_kind(folder, "directory")
    if problem is None and path.is_dir():
        problem = "is a directory"
        folder = path
    elif problem is None and not os.access(folder, os.W_OK | os.X_OK):
        problem = "is not writable"
    if problem is not None:
        raise ConfigurationError(
            f"--result {str(path)!r} cannot be written: {str(folder)!r} {problem}; pass a file "
            "in a directory you can write to"
        )


def _check_connect_endpoint(endpoint: str) -> None:
    """Connect to ``endpoint`` once and let go, so an address ZeroMQ cannot parse is bad input
    (exit 2) before the actor starts; a broker that is not there yet is not checked."""
    import zmq

    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    probe = context.socket(zmq.DEALER)
    try:
        probe.connect(endpoint)
    except zmq.ZMQError as error:
        raise ConfigurationError(
            f"--connect {endpoint!r} is not an endpoint: {error}; pass tcp://HOST:PORT, "
            "ipc:///path or inproc://name"
        ) from None
    finally:
        probe.close(linger=0)
        context.term()


def _check_log_dir(log_dir: Path | None) -> None:
    if log_dir is None:
        return
    if log_dir.exists() and not log_dir.is_dir():
        raise ConfigurationError(
            f"--log {str(log_dir)!r} {wrong_kind(log_dir, 'directory')}; pass a directory"
        )
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigurationError(
            f"--log {str(log_dir)!r} cannot be created ({error.strerror}); "
            "pass a directory you can write to"
        ) from None
    if not os.access(log_dir, os.W_OK | os.X_OK):
        raise ConfigurationError(
            f"--log {str(log_dir)!r} is not writable; pass a directory you can write to"
        )


def _check_fresh_log_dir(log_dir: Path | None) -> None:
    """Refuse a run's ``--log`` directory that holds another run's logs: the two runs' events
    would be merged into one trace, one replay, one set of metrics, without a word."""
    if log_dir is None:
        return
    found = sorted(log_dir.glob("*.jsonl"))
    if found:
        raise ConfigurationError(
            f"--log {str(log_dir)!r} already holds the logs of a run ({len(found)} .jsonl "
            f"files, e.g. {found[0].name}): its events would be merged with this run's; pass a "
            "new directory, or remove the old logs first"
        )


def _check_endpoint(endpoint: str) -> None:
    """Bind ``endpoint`` once and let go, so a bad address or a port in use is one clear error
    before any process starts (the broker binds it again a moment later)."""
    import zmq

    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    probe = context.socket(zmq.ROUTER)
    try:
        probe.bind(endpoint)
    except zmq.ZMQError as error:
        raise ConfigurationError(
            f"--endpoint {endpoint!r} cannot be bound: {error}; pick a free endpoint such as "
            "tcp://127.0.0.1:5555 or ipc:///tmp/warband.sock"
        ) from None
    finally:
        probe.close(linger=0)
        context.term()


def _check_scenario(scenario: Scenario, options: RunOptions) -> None:
    """Build the actors and the world once, so a parameter value the scenario's factories
    reject is reported before the run starts (in every process the same way)."""
    from .launcher import arm_kills

    params = scenario.resolve_params(options.params)
    arm_kills(scenario, scenario.build(params, options.seed), options)  # --kill names them
    scenario.build_world(params, options.seed)


def _options(args: argparse.Namespace) -> RunOptions:
    from .launcher import RunOptions

    return RunOptions(
        seed=args.seed,
        ticks=args.ticks,
        params=_params(args.param),
        log_dir=args.log,
        live=getattr(args, "live", None),
        mode=args.mode,
        tick_timeout=args.tick_timeout,
        endpoint=getattr(args, "endpoint", None),
        start_timeout=args.start_timeout,
        broker_timeout=args.broker_timeout,
        curve=getattr(args, "curve", None),
        otel=getattr(args, "otel", None),
        max_restarts=getattr(args, "max_restarts", 3),
        restart_period=getattr(args, "restart_period", 10.0),
        secret=_secret_file(getattr(args, "secret", None)),
        kills=_kills(args.kill),
        quiet=getattr(args, "quiet", False),
        planning_budget=args.planning_budget,
    )


def _kills(texts: list[str]) -> dict[str, int]:
    """``--kill AGENT@TICK`` values as {agent: tick}."""
    kills: dict[str, int] = {}
    for text in texts:
        agent, separator, tick = text.rpartition("@")
        if not separator or not agent or not tick.strip().isdigit() or int(tick) < 1:
            raise ConfigurationError(
                f"--kill expects AGENT@TICK with TICK a tick from 1 (--kill bot-1@10), got {text!r}"
            )
        if agent in kills:
            raise ConfigurationError(f"--kill names {agent!r} twice; an agent dies once")
        kills[agent] = int(tick)
    return kills


def _secret_file(path: Path | None) -> RunSecret | None:
    from .messaging.secret import load_secret

    return load_secret(path) if path is not None else None


def _run(args: argparse.Namespace) -> int:
    if not args.view:
        return _run_scenario(args)
    if args.live is not None:
        raise ConfigurationError(
            "--view starts a viewer of its own: drop --live, or drop --view and start "
            "`warband view --live ENDPOINT` yourself"
        )
    from .messaging.supervisor import watch_parent
    from .view.live import AttachedViewer

    watch_parent()
    _check_run_options(args)
    viewer = AttachedViewer("127.0.0.1", args.view_port, name=f"run {args.scenario}")
    # SIGTERM stops the viewer from now on: the run takes it as its own while it runs, and
    # one that comes after the run, before the viewer says it keeps serving, ends it cleanly.
    stop_viewer = signal.signal(signal.SIGTERM, lambda *_: viewer.terminate())
    try:
        print(viewer.url, flush=True)  # first, as `warband view` prints it
        args.live = viewer.endpoint
        code = _run_scenario(args)

        def announce() -> None:
            print(
                f"warband: the run is over; the view keeps serving {viewer.url} until Ctrl-C",
                file=sys.stderr,
                flush=True,
            )

        viewer.wait(announce)
        return code
    finally:
        signal.signal(signal.SIGTERM, stop_viewer)
        viewer.stop()


def _run_scenario(args: argparse.Namespace) -> int:
    from .messaging.supervisor import watch_parent

    watch_parent()  # a run started by `warband sweep` ends when the sweep is killed
    from .launcher import (
        RunFailed,
        RunInterrupted,
        failed_report,
        format_report,
        report_json_line,
        run_scenario,
    )
    from .messaging.tracing import configure_logging, flush_logging
    from .scenario import load_scenario

    _check_run_options(args)
    _check_placement(args)
    _check_fresh_log_dir(args.log)
    separate = args.processes or args.workers is not None
    configure_logging(args.log, "launcher" if separate else "main", live=args.live)
    _start_otel(args.otel, "launcher" if separate else "main")
    scenario = load_scenario(args.scenario)
    options = _options(args)
    _check_scenario(scenario, options)
    if args.curve is not None:
        _check_curve_run(args)
    if args.endpoint is not None:
        if separate and args.endpoint.startswith("inproc://"):
            flag = "--processes" if args.processes else "--workers"
            raise ConfigurationError(
                f"--endpoint {args.endpoint!r} reaches only within one process: a {flag} "
                "run needs tcp://HOST:PORT or ipc:///path (or no --endpoint: ipc:// is the default)"
            )
        _check_endpoint(args.endpoint)

    def progress(text: str) -> None:
        if not args.quiet:
            print(f"[{scenario.name}] {text}", file=sys.stderr, flush=True)

    mode = "processes" if args.processes else "one process"
    if args.workers is not None:
        mode = f"{args.workers} workers"
    progress(f"starting ({mode}, seed {args.seed}, {args.mode})")
    started = time.monotonic()
    try:
        report = run_scenario(
            scenario, options, progress, processes=args.processes, workers=args.workers
        )
    except RunInterrupted as interrupted:
        # Every process of the run is reaped by now; say so in one line, JSON line last.
        flush_logging()
        if args.json:
            print(report_json_line(interrupted.report))
        print(f"warband: {interrupted}", file=sys.stderr)
        return interrupted.exit_code
    except RunFailed as failed:
        report = failed.report  # what was known of the run when it broke
    except ConfigurationError:
        raise
    except WarbandError as error:
        # The run broke (a process died, the clock gave no result): still one summary, and
        # the --json line, saying it did not complete and why.
        params = scenario.resolve_params(options.params)
        report = failed_report(scenario, params, options, str(error), started)
    flush_logging()
    print(format_report(report), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(report_json_line(report))
    if not report.completed:
        print("warband: error: the run did not complete (see above)", file=sys.stderr)
        return 1
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from .launcher import RunOptions
    from .scenario import load_scenario
    from .sweep import SweepPlan

    if args.seeds < 1:
        raise ConfigurationError(f"--seeds must be at least 1, got {args.seeds}")
    if args.jobs is not None and args.jobs < 1:
        raise ConfigurationError(f"--jobs must be at least 1, got {args.jobs}")
    if args.ticks is not None and args.ticks < 1:
        raise ConfigurationError(f"--ticks must be at least 1, got {args.ticks}")
    if args.run_timeout is not None and not args.run_timeout > 0:
        raise ConfigurationError(
            f"--run-timeout must be a positive number of seconds, got {args.run_timeout}"
        )
    _start_otel(args.otel, "sweep")
    scenario = load_scenario(args.scenario)
    params = _params(args.param)
    # Bad parameters fail here once, not in every run.
    _check_scenario(scenario, RunOptions(seed=1, params=params))
    with contextlib.ExitStack() as scratch:
        metrics_dir = None
        if args.metrics:
            made = tempfile.TemporaryDirectory(prefix=f"warband-sweep-{os.getpid()}-")
            metrics_dir = Path(scratch.enter_context(made))
        plan = SweepPlan(
            scenario=scenario.path or args.scenario.resolve(),
            seeds=args.seeds,
            jobs=args.jobs or _cores(),
            params=params,
            ticks=args.ticks,
            mode=args.mode,
            processes=args.processes,
            name=scenario.name,
            otel=args.otel,
            metrics_dir=metrics_dir,
            counts=scenario.counts,
            run_timeout=args.run_timeout,
        )
        return _sweep_plan(plan, scenario.name, args)


def _sweep_plan(plan: Any, name: str, args: argparse.Namespace) -> int:
    from .sweep import SweepInterrupted, format_table, report_json_line, run_sweep

    def progress(text: str) -> None:
        if not args.quiet:
            print(f"[sweep] {text}", file=sys.stderr, flush=True)

    progress(f"{name}: seeds 1..{plan.seeds}, {min(plan.jobs, plan.seeds)} at a time")
    try:
        report = run_sweep(plan, progress)
    except SweepInterrupted as interrupted:
        print(format_table(interrupted.report), file=sys.stderr if args.json else sys.stdout)
        if args.json:
            print(report_json_line(interrupted.report))
        print(f"warband: {interrupted}", file=sys.stderr)
        return interrupted.exit_code
    print(format_table(report), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(report_json_line(report))
    if not report.all_completed:
        print("warband: error: some runs did not complete (see the table)", file=sys.stderr)
        return 1
    return 0


def _cores() -> int:
    # The cores this process may run on (a container or taskset may allow fewer than exist).
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _agent(args: argparse.Namespace) -> int:
    from .messaging.supervisor import watch_parent

    # A launcher killed with -9 takes its agents with it; a closed pipe is its to act on.
    _supervised(watch_parent())
    from .launcher import run_agent, run_agents
    from .messaging.addresses import check_actor_id
    from .messaging.secret import RUN_ID_VARIABLE
    from .messaging.tracing import configure_logging
    from .scenario import load_scenario

    ids = _agent_ids(args)
    for agent_id in ids:
        check_actor_id(agent_id)
    if args.ids is not None and (args.result is not None or args.heartbeat is not None):
        raise ConfigurationError(
            "--result and --heartbeat are the clock's, which runs alone: pass --id CLOCK"
        )
    _check_run_options(args)
    _check_connect_endpoint(args.connect)
    _check_result_file(args.result)
    secret = _secret_of(args)
    if args.curve is not None:
        from .messaging.curve import check_curve_endpoint, load_client

        check_curve_endpoint(args.connect)
        for agent_id in ids:
            load_client(args.curve, agent_id)  # a missing key file is named before we start
    name = args.name or (ids[0] if len(ids) == 1 else f"{ids[0]}+{len(ids) - 1}")
    configure_logging(args.log, name, live=args.live)
    _start_otel(args.otel, name)
    # SIGTERM, SIGINT and SIGHUP stop the actors through their event loop (see run_agent).
    scenario = load_scenario(args.scenario)
    options = dataclasses.replace(
        _options(args), secret=secret, run_id=os.environ.pop(RUN_ID_VARIABLE, "")
    )
    if args.ids is not None:
        return run_agents(scenario, ids, args.connect, options)
    return run_agent(scenario, args.agent_id, args.connect, options, args.result, args.heartbeat)


def _agent_ids(args: argparse.Namespace) -> list[str]:
    """The ids of ``--id`` or ``--ids`` (commas, spaces around them ignored)."""
    if args.ids is None:
        return [args.agent_id]
    ids = [agent.strip() for agent in args.ids.split(",")]
    if not all(ids):
        raise ConfigurationError(
            f"--ids {args.ids!r} has an empty id; pass ids separated by commas: a,b,c"
        )
    return ids


def _secret_of(args: argparse.Namespace) -> RunSecret | None:
    """The run secret of a broker or agent process: ``--secret FILE``, else the one its
    launcher handed it (its environment, read once and removed from it), else None."""
    from .messaging.secret import load_secret, take_inherited_secret

    inherited = take_inherited_secret()
    if args.secret is not None and args.curve is not None:
        raise ConfigurationError(
            "--curve and --secret both prove who connects: pass one of them (CURVE keys also "
            "encrypt and tell each agent apart)"
        )
    if args.secret is not None:
        return load_secret(args.secret)
    return None if args.curve is not None else inherited


def _broker(args: argparse.Namespace) -> int:
    from .interrupts import STOP_SIGNALS
    from .launcher import HEARTBEAT_INTERVAL, write_heartbeat
    from .messaging.broker import Broker
    from .messaging.supervisor import watch_parent
    from .messaging.tracing import configure_logging
    from .pipes import on_closed_pipe

    _supervised(watch_parent())
    _check_log_dir(args.log)
    secret = _secret_of(args)
    configure_logging(args.log, "broker", live=args.live)
    _start_otel(args.otel, "broker")
    import zmq

    curve = None
    if args.curve is not None:
        from .messaging.curve import check_curve_endpoint, load_server

        check_curve_endpoint(args.bind)
        curve = load_server(args.curve)
    # Its own context, terminated at the end: frames still queued go out (up to the linger).
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    broker = Broker(args.bind, context=context, curve=curve, secret=secret)

    def stop(signum: int, frame: FrameType | None) -> None:
        broker.stop(timeout=0)  # only asks: the loop below waits for the routing thread

    for signum in STOP_SIGNALS:
        signal.signal(signum, stop)
    try:
        with on_closed_pipe(lambda signum: broker.stop(timeout=0)):
            broker.start()
            if not args.quiet:
                print(
                    f"warband broker routing on {broker.bound_endpoint}",
                    file=sys.stderr,
                    flush=True,
                )
            while broker.is_running():
                if args.heartbeat is not None:
                    write_heartbeat(args.heartbeat)
                broker.join(HEARTBEAT_INTERVAL)
    finally:
        context.term()
    return 0


def _supervised(by_a_parent: bool) -> None:
    """A child of a launcher or a sweep shares its parent's output: a closed pipe is the
    parent's to act on (it stops the whole run); the child only stops writing to it."""
    if by_a_parent:
        from .pipes import guard_standard_streams

        guard_standard_streams(stop=False)


def _start_otel(flag: str | None, process: str) -> None:
    """Export this process's spans when ``--otel`` or ``OTEL_EXPORTER_OTLP_ENDPOINT`` says so.

    A missing extra is refused here, before a ``--processes`` launcher or a sweep starts any
    child. The launcher and the sweep export their own spans (``run <scenario>``, ``sweep
    <scenario>``); each child exports its own (``--otel`` is passed on, the variable
    inherited). Queued spans go out when the process exits (for at most
    :data:`~warband.messaging.otel.SHUTDOWN_FLUSH_S`).
    """
    from urllib.parse import urlsplit

    from .messaging import otel

    endpoint = otel.endpoint_from(flag)
    if endpoint is None:
        return
    try:
        url = urlsplit(endpoint)
        url.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        url = urlsplit("")
    if url.scheme not in ("http", "https") or not url.hostname:
        where = "--otel" if flag else f"${otel.ENDPOINT_VARIABLE}"
        raise ConfigurationError(
            f"{where} {endpoint!r} is not an OTLP/HTTP collector URL; pass one such as "
            "http://localhost:4318"
        )
    otel.configure(endpoint, process)


def _check_placement(args: argparse.Namespace) -> None:
    if args.workers is None:
        return
    if args.processes:
        raise ConfigurationError(
            "--processes and --workers are two placements: pass one (--processes: a process "
            "per agent; --workers N: N processes of many agents each)"
        )
    if args.workers < 1:
        raise ConfigurationError(f"--workers must be at least 1, got {args.workers}")


def _check_curve_run(args: argparse.Namespace) -> None:
    if not args.processes and args.workers is None:
        raise ConfigurationError(
            "--curve protects connections between processes and hosts: add --processes or "
            "--workers N (and --endpoint tcp://127.0.0.1:PORT)"
        )
    if args.endpoint is None:
        raise ConfigurationError(
            "--curve needs a tcp:// broker endpoint: add --endpoint tcp://127.0.0.1:PORT"
        )
    from .messaging.curve import check_curve_endpoint

    check_curve_endpoint(args.endpoint)


def _keys(args: argparse.Namespace) -> int:
    from .messaging.curve import make_keys

    if args.directory.exists() and not args.directory.is_dir():
        raise ConfigurationError(
            f"keys DIR {str(args.directory)!r} {wrong_kind(args.directory, 'directory')}; pass "
            "a directory (it is made if missing)"
        )

    if args.agents and args.scenario is not None:
        raise ConfigurationError(
            "warband keys takes --agents ID[,ID...] or --scenario FILE, not both: --scenario "
            "makes keys for every agent of the scenario and its clock"
        )
    ids: list[str] = []
    if args.agents:
        ids += [agent.strip() for agent in args.agents.split(",") if agent.strip()]
    if args.scenario is not None:
        from .scenario import load_scenario

        scenario = load_scenario(args.scenario)
        params = scenario.resolve_params(_params(args.param))
        ids += [scenario.clock_id, *(actor.id for actor in scenario.build(params, 0))]
    token_ids = [agent.strip() for agent in (args.tokens or "").split(",") if agent.strip()]
    if args.tokens is not None and not token_ids:
        raise ConfigurationError("--tokens names no agent id: pass --tokens ID[,ID...]")
    if not ids and not args.secret and not token_ids:
        raise ConfigurationError(
            "name the agents: --agents ID[,ID...] or --scenario FILE (or --secret for a run "
            "secret alone, --tokens ID[,ID...] for gateway tokens)"
        )
    from .gateway.tokens import TOKEN_SUFFIX, write_tokens
    from .messaging.secret import SECRET_FILE, write_secret

    if args.secret and (args.directory / SECRET_FILE).exists() and not args.force:
        write_secret(args.directory)  # refuses, naming the file, before any key is written
    for agent in token_ids:
        if (args.directory / f"{agent}{TOKEN_SUFFIX}").exists() and not args.force:
            write_tokens(args.directory, [agent])  # refuses, naming the file, as above
    written = make_keys(args.directory, ids, force=args.force) if ids else []
    if token_ids:
        written += write_tokens(args.directory, token_ids, force=args.force)
    if args.secret:
        written.append(write_secret(args.directory, force=args.force))
    for path in written:
        print(f"wrote {path}")
    return 0


def _gateway(args: argparse.Namespace) -> int:
    from .gateway.server import GatewayConfig, serve
    from .gateway.tokens import load_tokens
    from .messaging.addresses import check_actor_id
    from .messaging.tracing import configure_logging

    _check_connect_endpoint(args.connect)
    _check_log_dir(args.log)
    check_actor_id(args.clock)
    if not 0 < args.port < 65536:
        raise ConfigurationError(f"--port must be 1..65535, got {args.port}")
    secret = _secret_of(args)
    if args.curve is not None:
        from .messaging.curve import check_curve_endpoint

        check_curve_endpoint(args.connect)
    config = GatewayConfig(
        connect=args.connect,
        host=args.host,
        port=args.port,
        tokens=load_tokens(args.tokens) if args.tokens is not None else None,
        secret=secret,
        curve=args.curve,
        clock=args.clock,
        queue=args.queue,
        tick_timeout=args.tick_timeout,
        register_timeout=args.register_timeout,
    )
    configure_logging(args.log, "gateway", console=args.log is None)
    return serve(config, quiet=args.quiet)


def _trace(args: argparse.Namespace) -> int:
    from .messaging.trace_view import trace_command

    print(trace_command(args.log_dir, args.format, args.agent, args.conversation, args.types))
    return 0


def _bench(args: argparse.Namespace) -> int:
    module = _load_benchmark(args.name)
    code: int = module.main(list(args.rest))
    return code


def _load_benchmark(name: str) -> Any:
    # Benchmarks are not installed with the package: they live in a checkout's bench/ folder.
    # Only a warband checkout is searched (the one this package runs from, then the current
    # directory), so `warband bench` never runs some other project's bench/NAME.py.
    candidates = [Path(__file__).resolve().parent.parent, Path.cwd()]
    for root in candidates:
        file = root / "bench" / f"{name}.py"
        if _is_checkout(root) and file.is_file():
            spec = importlib.util.spec_from_file_location(f"warband_bench_{name}", file)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise ConfigurationError(
        f"benchmark {name!r} needs a source checkout of warband: benchmarks live in its bench/ "
        "folder and are not installed with the package; clone the repository and run "
        f"`warband bench {name}` inside it (searched {', '.join(str(c) for c in candidates)})"
    )


def _is_checkout(root: Path) -> bool:
    pyproject = root / "pyproject.toml"
    return pyproject.is_file() and 'name = "warband"' in pyproject.read_text(errors="replace")


def _add_explain(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    explain = commands.add_parser(
        "explain",
        help="an agent's memory, plan and decomposition at a tick, from a run's logs",
        description="Explain one agent's decision at a tick from the agent.plan events of a "
        "run's --log directory: its memory, its plan and the plan's decomposition tree.",
    )
    explain.add_argument("log_dir", type=Path, metavar="LOG_DIR", help="the run's --log directory")
    explain.add_argument("--agent", required=True, metavar="ID", help="the agent to explain")
    explain.add_argument("--tick", type=int, required=True, metavar="N", help="the tick")
    explain.set_defaults(handler=_explain)


def _explain(args: argparse.Namespace) -> int:
    from .agents.explain import explain

    print(explain(args.log_dir, args.agent, args.tick).text())
    return 0


def _add_view(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    view = commands.add_parser(
        "view",
        help="watch a recorded run in a web page (map, messages, plans)",
        description="Serve a web page that replays a run's --log directory: the map, the "
        "messages around each tick, each agent's plan and memory, the commanders' tables. "
        "Prints the page's URL on its first line and opens nothing; Ctrl-C stops it. "
        "Needs the view extra: pip install 'warband[view]'.",
    )
    view.add_argument(
        "log_dir",
        type=Path,
        nargs="?",
        metavar="LOG_DIR",
        help="the run's --log directory (none with --live)",
    )
    view.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    view.add_argument(
        "--port", type=int, default=8765, help="port to listen on (8765; 0 picks a free one)"
    )
    view.add_argument(
        "--follow",
        action="store_true",
        help="follow a run still writing LOG_DIR (start it before or after the run)",
    )
    view.add_argument(
        "--live",
        metavar="ENDPOINT",
        help="bind ENDPOINT (e.g. tcp://127.0.0.1:8766) and follow the runs started with "
        "--live ENDPOINT as they push their events (one process or many)",
    )
    view.add_argument(
        "--name",
        metavar="TEXT",
        help="with --live: what the page calls the run (default: live ENDPOINT)",
    )
    view.set_defaults(handler=_view)


def _view(args: argparse.Namespace) -> int:
    from .messaging.supervisor import watch_parent
    from .view.server import view_command

    watch_parent()  # a viewer started by `warband run --view` ends with its run

    if args.live is not None and (args.log_dir is not None or args.follow):
        raise ConfigurationError(
            "warband view takes a LOG_DIR (with or without --follow) or --live ENDPOINT, not both"
        )
    if args.name is not None and args.live is None:
        raise ConfigurationError("--name names a --live run; a LOG_DIR is named by its path")
    return view_command(
        args.log_dir, args.host, args.port, follow=args.follow, live=args.live, name=args.name
    )


def _render(args: argparse.Namespace) -> int:
    from .world.render import render_command

    if args.tick is not None and not Path(args.source).is_dir():
        raise ConfigurationError(
            f"--tick {args.tick} draws a tick of a run: give a run's --log directory, not the "
            f"map {args.source!r} (a map has no ticks)"
        )

    out: Path = render_command(args.source, out=args.out, tick=args.tick)
    print(f"wrote {out}")
    return 0


def _add_scenarios(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listing = commands.add_parser(
        "scenarios",
        help="list the bundled scenarios, or copy them out",
        description="List the scenarios that ship with warband (each runs by name: `warband run "
        "ping_pong`), or copy them into a directory to read and change.",
    )
    listing.add_argument(
        "--copy",
        type=Path,
        metavar="DIR",
        help="copy every bundled scenario into DIR (made if missing; refuses to overwrite)",
    )
    listing.set_defaults(handler=_scenarios)


def _scenarios(args: argparse.Namespace) -> int:
    from ._bundled import bundled_scenarios, copy_scenarios, summary

    if args.copy is not None:
        for file in copy_scenarios(args.copy):
            print(file)
        return 0
    files = bundled_scenarios()
    if not files:
        raise ConfigurationError("this installation of warband holds no bundled scenarios")
    width = max(len(name) for name in files)
    for name, file in files.items():
        print(f"{name:<{width}}  {summary(file)}")
    return 0
