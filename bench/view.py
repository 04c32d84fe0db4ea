"""``warband bench view``: what a live viewer costs a run (issue 13: at least 90% of its ticks/s).

Warzone matches (``bench/warzone.py``'s: the Killzone hierarchy on both sides, lockstep, a
fixed seed, the world as the run's clock and timed the same way) are played in threes, in one
invocation and interleaved so the machine's load drifts alike over all:

- **plain**: as ``warband run`` without ``--log``: no tracing;
- **logged**: as ``warband run --log DIR``: every process traces its messages, its agents'
  plans and the world's snapshots to its file (what a recorded run costs, for reference);
- **viewed**: as ``warband run --live ENDPOINT`` with a ``warband view --live ENDPOINT`` process
  bound there and a page attached to it: a client in its own process that does what the page
  does when it follows a run (on each ``/api/updates`` event it asks for the summary, the
  latest tick's frame and its messages). Every process of the run traces as a logged run does
  and pushes its events to the viewer instead of a file.

Figures per configuration (size, one process or ``--processes``): the median ticks/s of each
variant over ``--repeat`` rounds; the ratio viewed / plain of each round (its three matches
are played back to back, every other round in reverse order), their median (the target is 0.90
or more), lowest and highest; the median of viewed / logged (what the viewer costs beyond the
tracing a recorded run pays); and for the viewed runs the events the viewer received, those the
run dropped for it, and the frames the page fetched. ``main(argv)`` is the entry point; with
``--json`` the last stdout line is one JSON object (``results``: one entry per configuration
with the keys in ``JSON_KEYS``).
"""

# No `from __future__ import annotations`: `warband bench` executes this file without adding it
# to sys.modules (see bench/messaging.py).

import argparse
import importlib.util
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from warband.messaging import event_loop
from warband.messaging.broker import remove_ipc_socket_file
from warband.messaging.supervisor import Supervisor
from warband.messaging.tracing import configure_logging
from warband.scenario import Scenario, load_scenario

ROOT: Final = Path(__file__).resolve().parent.parent
TARGET_RATIO: Final = 0.90
SIZES: Final = (6, 12)
TICKS: Final = 150
REPEAT: Final = 3
QUICK_SIZES: Final = (2,)
QUICK_TICKS: Final = 30
VARIANTS: Final = ("plain", "logged", "viewed")
JSON_KEYS: Final = (
    "bots_per_team",
    "processes",
    "ticks",
    "plain_ticks_per_s",
    "logged_ticks_per_s",
    "viewed_ticks_per_s",
    "ratio",
    "ratio_worst",
    "ratio_best",
    "ratio_to_logged",
    "events_received",
    "events_dropped",
    "page_frames",
    "target_met",
)
"""Keys every entry of ``results`` holds (a public contract)."""


def _warzone_bench() -> ModuleType:
    """``bench/warzone.py``, whose matches, timed world and runner this benchmark shares."""
    spec = importlib.util.spec_from_file_location(
        "warband_bench_warzone", ROOT / "bench" / "warzone.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    """Run the benchmark; prints a table (and with ``--json`` one JSON line); 0 when every
    match was played (whether the target was met is a figure, ``target_met``)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.as_page is not None:
        return _page(args.as_page)
    sizes = tuple(args.sizes) if args.sizes else (QUICK_SIZES if args.quick else SIZES)
    ticks = args.ticks if args.ticks is not None else (QUICK_TICKS if args.quick else TICKS)
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else REPEAT)
    modes = (False,) if args.no_processes else (False, True)
    warzone = _warzone_bench()
    scenario = load_scenario(warzone.WARZONE)
    load_before = os.getloadavg()[0]
    results = []
    for bots in sizes:
        for processes in modes:
            config = warzone.Config("warzone", bots, processes)
            ticks_per_s: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
            seen: list[dict[str, int]] = []
            played = 0
            for run in range(1, repeat + 1):
                # Every other round backwards: a machine speeding up or slowing down over a
                # round favours no variant over the rounds.
                for variant in VARIANTS if run % 2 else VARIANTS[::-1]:
                    match, counts = _play_variant(variant, warzone, scenario, config, ticks, args)
                    ticks_per_s[variant].append(match.ticks_per_s)
                    played = match.ticks
                    if counts is not None:
                        seen.append(counts)
                    extra = f", {counts}" if counts is not None else ""
                    _progress(
                        f"{config.label} {variant} {run}/{repeat}: "
                        f"{match.ticks_per_s:.1f} ticks/s{extra}"
                    )
            results.append(_result(bots, processes, played, ticks_per_s, seen))
    report = {
        "benchmark": "view",
        "ticks": ticks,
        "repeat": repeat,
        "seed": args.seed,
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "results": results,
    }
    print(_table(report))
    if args.json:
        print(json.dumps(report))
    return 0


def _play_variant(
    variant: str, warzone: ModuleType, scenario: Scenario, config: Any, ticks: int, args: Any
) -> tuple[Any, dict[str, int] | None]:
    """One match of ``variant``; for a viewed one, also what the viewer and page received."""
    if variant == "plain":
        configure_logging(None, "bench")
        return _play(warzone, scenario, config, ticks, args.seed, []), None
    if variant == "logged":
        with tempfile.TemporaryDirectory(prefix="warband-bench-logs-") as logs:
            configure_logging(Path(logs), "bench")
            match = _play(warzone, scenario, config, ticks, args.seed, ["--log", logs])
            configure_logging(None, "bench")
        return match, None
    with _Viewer() as viewer:
        configure_logging(None, "bench", live=viewer.endpoint)
        match = _play(warzone, scenario, config, ticks, args.seed, ["--live", viewer.endpoint])
        configure_logging(None, "bench")  # pushes the last events, lets go
        return match, viewer.finish()


def _result(
    bots: int,
    processes: bool,
    ticks: int,
    ticks_per_s: dict[str, list[float]],
    seen: list[dict[str, int]],
) -> dict[str, Any]:
    """One configuration's entry of ``results``: ratios are taken round by round (each round
    played its three matches back to back), then their median; ``ratio_worst`` is the lowest."""
    plain, logged, viewed = (ticks_per_s[variant] for variant in VARIANTS)
    ratios = [v / p for p, v in zip(plain, viewed, strict=True) if p]
    to_logged = [v / lg for lg, v in zip(logged, viewed, strict=True) if lg]
    ratio = statistics.median(ratios) if ratios else 0.0
    return {
        "bots_per_team": bots,
        "processes": processes,
        "ticks": ticks,
        "plain_ticks_per_s": round(statistics.median(plain), 1),
        "logged_ticks_per_s": round(statistics.median(logged), 1),
        "viewed_ticks_per_s": round(statistics.median(viewed), 1),
        "ratio": round(ratio, 3),
        "ratio_worst": round(min(ratios, default=0.0), 3),
        "ratio_best": round(max(ratios, default=0.0), 3),
        "ratio_to_logged": round(statistics.median(to_logged), 3) if to_logged else 0.0,
        "events_received": min(s["received"] for s in seen),
        "events_dropped": max(s["dropped"] for s in seen),
        "page_frames": min(s["frames"] for s in seen),
        "target_met": ratio >= TARGET_RATIO,
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warband bench view",
        description="Ticks/s of Warzone matches with and without a live viewer and page.",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--quick", action="store_true", help="2v2, 30 ticks, one round")
    parser.add_argument("--sizes", type=int, nargs="+", metavar="N", help="bots per team")
    parser.add_argument("--ticks", type=int, help=f"ticks per match (default {TICKS})")
    parser.add_argument("--repeat", type=int, help=f"rounds of matches (default {REPEAT})")
    parser.add_argument("--seed", type=int, default=1, help="seed of every match (default 1)")
    parser.add_argument("--no-processes", action="store_true", help="only matches in one process")
    parser.add_argument("--as-page", metavar="URL", help=argparse.SUPPRESS)
    return parser


def _progress(message: str) -> None:
    print(f"[bench view] {message}", file=sys.stderr, flush=True)


def _play(
    warzone: ModuleType, scenario: Scenario, config: Any, ticks: int, seed: int, extra: list[str]
) -> Any:
    """One match as ``bench/warzone.py`` plays it; ``extra`` (``--log DIR``, ``--live
    ENDPOINT``) is passed to every process of a ``--processes`` match (this process: the
    caller configures its logging)."""
    if not config.processes:
        return warzone._play(scenario, config, ticks, seed)
    overrides = warzone._params(config)
    params = scenario.resolve_params(overrides)
    actors = scenario.build(params, seed)
    world = warzone._timed_world(scenario, actors, params, ticks, seed)
    assert scenario.path is not None
    result = _run_in_processes(
        warzone, world, [a.id for a in actors], scenario.path, overrides, seed, extra
    )
    return warzone.Match(
        ticks=result.ticks,
        tick_s=world.tick_durations(),
        startup_s=world.ticks_started_at - world.created,
        agents=len(actors),
        result=result,
    )


def _run_in_processes(
    warzone: ModuleType,
    world: Any,
    actor_ids: list[str],
    scenario_path: Path,
    params: dict[str, str],
    seed: int,
    extra: list[str],
) -> Any:
    """``bench/warzone.py``'s runner (a broker process, one per actor, the world here), with
    ``extra`` passed to every child."""
    if not extra:
        return warzone._run_in_processes(world, actor_ids, scenario_path, params, seed)
    supervisor = Supervisor()
    with tempfile.TemporaryDirectory(prefix="warband-bench-", ignore_cleanup_errors=True) as tmp:
        endpoint = f"ipc://{Path(tmp) / 'broker.sock'}"
        cli = [sys.executable, "-m", "warband"]
        agent_argv = [*cli, "agent", "--connect", endpoint, "--scenario", str(scenario_path)]
        agent_argv += ["--seed", str(seed), "--ticks", str(world.max_ticks), *extra]
        agent_argv += ["--start-timeout", str(warzone._START_TIMEOUT_S)]
        agent_argv += [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
        try:
            broker_argv = [*cli, "broker", "--bind", endpoint, *extra]
            supervisor.start("broker", broker_argv, restartable=False)
            for actor_id in actor_ids:
                supervisor.start(actor_id, [*agent_argv, "--id", actor_id], restartable=False)
            event_loop.run(warzone._run_clock(world, endpoint))
            supervisor.wait_all(timeout=warzone._EXIT_TIMEOUT_S, exclude=("broker",))
        finally:
            supervisor.stop_all(last=("broker",))
            remove_ipc_socket_file(endpoint)
    if world.result is None:
        raise warzone.BenchmarkError(f"the world stopped without a result ({extra}, processes)")
    return world.result


class _Viewer:
    """A ``warband view --live`` process on an ipc:// endpoint, and a page client attached."""

    def __enter__(self) -> "_Viewer":
        self._tmp = tempfile.TemporaryDirectory(prefix="warband-bench-view-")
        self.endpoint = f"ipc://{self._tmp.name}/view.sock"
        cli = [sys.executable, "-m", "warband"]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self._view = subprocess.Popen(
            [*cli, "view", "--live", self.endpoint, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self._page: subprocess.Popen[str] | None = None
        assert self._view.stdout is not None
        url = self._view.stdout.readline().strip()
        if not url.startswith("http"):
            self.__exit__()
            raise RuntimeError("warband view --live printed no URL (is aiohttp installed?)")
        self._page = subprocess.Popen(
            [*cli, "bench", "view", "--as-page", url],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert self._page.stdout is not None
        self._page.stdout.readline()  # "attached": the page listens for updates
        return self

    def finish(self) -> dict[str, int]:
        """Let the viewer take in the last blocks, stop both; what they received."""
        time.sleep(1.0)  # the sinks flush every 0.25 s; the viewer reads every 0.5 s
        counts = {"received": 0, "dropped": 0, "frames": 0}
        assert self._page is not None and self._view.stdout is not None
        self._page.send_signal(signal.SIGTERM)
        page_out, _ = self._page.communicate(timeout=30)
        counts["frames"] = json.loads(page_out.strip().splitlines()[-1])["frames"]
        self._view.send_signal(signal.SIGTERM)
        view_out, _ = self._view.communicate(timeout=30)
        # "... N events received live, M dropped by the run for this viewer"
        words = view_out.strip().splitlines()[-1].split()
        counts["received"] = int(words[words.index("events") - 1])
        counts["dropped"] = int(words[words.index("dropped") - 1])
        return counts

    def __exit__(self, *exc: object) -> None:
        for process in (self._page, self._view):
            if process is not None and process.poll() is None:
                process.kill()
            if process is not None:
                process.communicate(timeout=30)
        self._tmp.cleanup()


def _page(url: str) -> int:
    """The page's part when it follows a run: on each update, the summary, the latest frame and
    its messages; on SIGTERM prints ``{"frames": N}``."""
    frames = 0

    def stop(signum: int, frame: Any) -> None:
        print(json.dumps({"frames": frames}), flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    with urllib.request.urlopen(url + "api/updates", timeout=600) as updates:
        print("attached", flush=True)
        for line in updates:
            if not line.startswith(b"data: "):
                continue
            last = json.loads(line[6:])["last_tick"]
            for path in ("api/summary", f"api/frame?tick={last}", f"api/messages?tick={last}"):
                with urllib.request.urlopen(url + path, timeout=60) as response:
                    response.read()
            frames += 1
    return 0


def _table(report: dict[str, Any]) -> str:
    lines = [
        f"warband bench view: {report['ticks']} ticks, {report['repeat']} round(s), "
        f"target {TARGET_RATIO:.0%} of plain ticks/s; load average {report['load_average'][0]} "
        f"before, {report['load_average'][1]} after",
        f"{'configuration':<26} {'plain t/s':>10} {'logged t/s':>11} {'viewed t/s':>11} "
        f"{'ratio':>6} {'worst':>6} {'/logged':>8} "
        f"{'received':>9} {'dropped':>8} {'frames':>7}",
    ]
    for r in report["results"]:
        where = "processes" if r["processes"] else "in-process"
        label = f"warzone {r['bots_per_team']}v{r['bots_per_team']} {where}"
        mark = "" if r["ratio"] >= TARGET_RATIO else "  BELOW TARGET"
        lines.append(
            f"{label:<26} {r['plain_ticks_per_s']:>10.1f} {r['logged_ticks_per_s']:>11.1f} "
            f"{r['viewed_ticks_per_s']:>11.1f} {r['ratio']:>6.2f} {r['ratio_worst']:>6.2f} "
            f"{r['ratio_to_logged']:>8.2f} "
            f"{r['events_received']:>9} {r['events_dropped']:>8} "
            f"{r['page_frames']:>7}{mark}"
        )
    return "\n".join(lines)
