"""The ``warband`` command: run | agent | broker | trace | bench | render.

Exit codes: 0 when the command did its job (for ``run``: the run completed, whatever its
outcome; read ``outcome`` in the ``--json`` line), 1 when it failed while running, 2 for bad
usage or bad input (a missing file, an unknown parameter, a malformed scenario...).
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from . import __version__
from .exceptions import ConfigurationError, WarbandError

BENCHMARKS = ("messaging", "planning", "world")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except ConfigurationError as error:
        print(f"warband: error: {error}", file=sys.stderr)
        return 2
    except WarbandError as error:
        print(f"warband: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("warband: interrupted", file=sys.stderr)
        return 130
    return code


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warband",
        description="Team AI for games: message-passing actors over ZeroMQ.",
    )
    parser.add_argument("--version", action="version", version=f"warband {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run(commands)
    _add_agent(commands)
    _add_broker(commands)
    _add_trace(commands)
    _add_bench(commands)
    _add_render(commands)
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
        "--mode",
        choices=("lockstep", "realtime"),
        default="lockstep",
        help="clock mode (lockstep: deterministic; realtime: wall-clock ticks)",
    )
    parser.add_argument(
        "--tick-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long the clock waits for a TickDone before moving on (10)",
    )


def _add_run(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser("run", help="run a scenario script", description="Run a scenario.")
    run.add_argument("scenario", type=Path, help="scenario file, e.g. scenarios/ping_pong.py")
    run.add_argument(
        "--processes",
        action="store_true",
        help="run the broker, the clock and every actor each in its own OS process",
    )
    run.add_argument("--json", action="store_true", help="end with one JSON summary line")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    run.add_argument(
        "--endpoint",
        metavar="ENDPOINT",
        help="broker endpoint (default: inproc:// in one process, ipc:// across processes)",
    )
    _add_run_options(run)
    run.set_defaults(handler=_run)


def _add_agent(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    agent = commands.add_parser(
        "agent",
        help="run one actor of a scenario, connected to a broker",
        description="Run one actor of a scenario (or its clock) and connect it to a broker.",
    )
    agent.add_argument("--connect", required=True, metavar="ENDPOINT", help="broker endpoint")
    agent.add_argument("--scenario", required=True, type=Path, help="scenario file")
    agent.add_argument("--id", required=True, dest="agent_id", help="agent id, e.g. bot-3")
    agent.add_argument(
        "--result", type=Path, metavar="FILE", help="(clock only) write the run result JSON here"
    )
    _add_run_options(agent)
    agent.set_defaults(handler=_agent)


def _add_broker(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    broker = commands.add_parser(
        "broker", help="run a message broker", description="Route messages between actors."
    )
    broker.add_argument("--bind", required=True, metavar="ENDPOINT", help="e.g. tcp://0.0.0.0:5555")
    broker.add_argument("--log", type=Path, metavar="DIR", help="write JSON logs here")
    broker.set_defaults(handler=_broker)


def _add_trace(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trace = commands.add_parser(
        "trace",
        help="merge and render the message flow of a run's logs",
        description="Merge the logs of every process of a run into one message flow.",
    )
    trace.add_argument("log_dir", type=Path, metavar="DIR", help="the run's --log directory")
    trace.add_argument("--format", choices=("text", "mermaid", "json"), default="text")
    trace.add_argument("--agent", metavar="ID", help="only messages to or from this agent")
    trace.add_argument("--conversation", metavar="ID", help="only this conversation")
    trace.add_argument(
        "--type", action="append", dest="types", metavar="T", help="only this message type"
    )
    trace.set_defaults(handler=_trace)


def _add_bench(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench",
        help="run a benchmark",
        description="Run a benchmark; figures are printed next to baselines from the same run.",
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


def _options(args: argparse.Namespace) -> object:
    from .launcher import RunOptions

    return RunOptions(
        seed=args.seed,
        ticks=args.ticks,
        params=_params(args.param),
        log_dir=args.log,
        mode=args.mode,
        tick_timeout=args.tick_timeout,
        endpoint=getattr(args, "endpoint", None),
    )


def _run(args: argparse.Namespace) -> int:
    from .launcher import format_report, report_json_line, run_in_process, run_in_processes
    from .messaging.tracing import configure_logging, flush_logging
    from .scenario import load_scenario

    if args.ticks is not None and args.ticks < 1:
        raise ConfigurationError(f"--ticks must be at least 1, got {args.ticks}")
    configure_logging(args.log, "launcher" if args.processes else "main")
    scenario = load_scenario(args.scenario)
    options = _options(args)

    def progress(text: str) -> None:
        if not args.quiet:
            print(f"[{scenario.name}] {text}", file=sys.stderr, flush=True)

    mode = "processes" if args.processes else "one process"
    progress(f"starting ({mode}, seed {args.seed}, {args.mode})")
    runner = run_in_processes if args.processes else run_in_process
    report = runner(scenario, options, progress)  # type: ignore[arg-type]
    flush_logging()
    print(format_report(report), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(report_json_line(report))
    if not report.completed:
        print("warband: error: the run did not complete (see above)", file=sys.stderr)
        return 1
    return 0


def _agent(args: argparse.Namespace) -> int:
    from .launcher import run_agent
    from .messaging.actor import check_actor_id
    from .messaging.tracing import configure_logging
    from .scenario import load_scenario

    check_actor_id(args.agent_id)
    configure_logging(args.log, args.agent_id)
    _exit_on_sigterm()
    scenario = load_scenario(args.scenario)
    return run_agent(scenario, args.agent_id, args.connect, _options(args), args.result)  # type: ignore[arg-type]


def _broker(args: argparse.Namespace) -> int:
    from .messaging.broker import Broker
    from .messaging.tracing import configure_logging

    configure_logging(args.log, "broker")
    broker = Broker(args.bind)

    def stop(signum: int, frame: FrameType | None) -> None:
        broker.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    broker.start()
    print(f"warband broker routing on {broker.bound_endpoint}", file=sys.stderr, flush=True)
    while broker.is_running():
        broker.join(0.5)
    return 0


def _trace(args: argparse.Namespace) -> int:
    from .messaging.trace_view import trace_command

    print(trace_command(args.log_dir, args.format, args.agent, args.conversation, args.types))
    return 0


def _bench(args: argparse.Namespace) -> int:
    module = _load_benchmark(args.name)
    code: int = module.main(list(args.rest))
    return code


def _load_benchmark(name: str) -> Any:
    candidates = [Path.cwd() / "bench", Path(__file__).resolve().parent.parent / "bench"]
    for folder in candidates:
        file = folder / f"{name}.py"
        if file.is_file():
            spec = importlib.util.spec_from_file_location(f"warband_bench_{name}", file)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise ConfigurationError(
        f"benchmark {name!r} not found in {', '.join(str(c) for c in candidates)}; "
        "benchmarks live in the source checkout's bench/ folder: run from the repository root"
    )


def _render(args: argparse.Namespace) -> int:
    from .world.render import render_command

    out: Path = render_command(args.source, out=args.out, tick=args.tick)
    print(f"wrote {out}")
    return 0


def _exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit so ``finally`` blocks close sockets before the exit."""

    def leave(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, leave)
