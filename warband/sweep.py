"""``warband sweep``: one scenario over seeds 1..N, to see how often each side wins.

Each seed runs as its own child process, ``warband run SCENARIO --seed S --json -q
[--param K=V]...``, ``jobs`` at a time; the sweep reads the JSON line each run ends with. Child
processes rather than runs in this process: a run that crashes, hangs up its sockets or leaks
state cannot spoil the next seed, and a seed's result is exactly what ``warband run --seed S``
gives on its own (so a surprising seed can be replayed, logged and traced by hand).

Who won: a scenario with sides reports the winning side as ``winner`` in its outcome details
(``Outcome(..., details={"winner": "red", "scores": {...}})``); ``None`` there, or no
``winner`` key at all, means nobody won (a draw, or a scenario without sides). Numbers
anywhere in the outcome details (``scores.red``, ``kills``...) are averaged over the seeds.

Nothing is dropped: a run that ended without its summary (it crashed, or refused its seed) is
recorded with outcome ``"error"`` and the reason, a run that did not complete with the reason
its run gave, and runs a signal cut short with outcome ``"interrupted"``; seeds a signal came
before are counted (``not_started``), not listed. Only the runs that completed are counted in
``wins``, so a crash is never mistaken for a draw. Seeds are drawn one at a time as runs
start, so a sweep's memory does not grow with ``--seeds``.

On SIGTERM, SIGINT or SIGHUP the sweep stops every run under way (SIGTERM, which each
``warband run`` turns into a clean stop; SIGKILL after :data:`STOP_GRACE` s), reaps them, and
raises :class:`SweepInterrupted` carrying the report of what finished. A sweep killed outright
takes its runs with it: each child is told its parent's pid and ends when the sweep is gone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import shutil
import signal
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .exceptions import WarbandError
from .interrupts import Interrupted, run_until_signalled, signal_name

if TYPE_CHECKING:
    from .messaging.otel import RunSpan

Z_95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval."""

STOP_GRACE = 10.0
"""Seconds a run has to stop cleanly on SIGTERM before it is killed (a ``--processes`` run
stops its own children first; that usually takes well under a second)."""

OUTCOMES = ("success", "failure", "error", "interrupted")
"""A run's ``outcome`` in a sweep: the run's own verdict (``success``, ``failure``), ``error``
when it ended without a summary, ``interrupted`` when the sweep was stopped before it ended."""

Progress = Callable[[str], None]


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a proportion: ``successes`` out of ``trials``.

    Unlike the textbook ``p ± z·sqrt(p(1-p)/n)`` it stays inside [0, 1] and does not shrink to
    a point at 0 or ``trials`` successes, which matters for a few dozen seeds. ``z`` defaults
    to the 95% two-sided quantile. Raises ``ValueError`` unless ``0 <= successes <= trials``
    and ``trials >= 1``.
    """
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials >= 1, got {successes}/{trials}")
    share = successes / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (share + z2 / (2 * trials)) / denominator
    half = z / denominator * math.sqrt(share * (1 - share) / trials + z2 / (4 * trials * trials))
    # Clamped: rounding can put a bound a hair outside [0, 1] at 0 or n successes.
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class SweepPlan:
    """What to sweep: a scenario file, seeds 1..``seeds``, ``jobs`` runs at a time."""

    scenario: Path
    seeds: int
    jobs: int
    params: Mapping[str, str] = field(default_factory=dict)
    """``--param`` values as text, passed on to every run."""
    ticks: int | None = None
    mode: str | None = None
    processes: bool = False
    name: str = ""
    """The scenario's name, for the table (defaults to the file's stem)."""
    otel: str | None = None
    """``--otel``'s OTLP endpoint, passed on to every run (see :func:`run_sweep`)."""
    metrics_dir: Path | None = None
    """With ``--metrics``: where each run logs (``seed-<n>``) for :mod:`warband.metrics` to
    measure; a seed's logs are removed once measured."""
    run_timeout: float | None = None
    """``--run-timeout``: seconds after which a run that has not ended is stopped and counted an
    ``error`` (None: no limit)."""
    counts: tuple[str, ...] = ()
    """Outcome details that count something (the scenario's ``counts``, e.g. ``kills``): a run
    without one, or without a key under it that other runs have, counts 0 there, so its mean
    is over every run and not only those that had something to count."""

    def log_dir(self, seed: int) -> Path | None:
        """Where the run of ``seed`` logs, when the sweep measures its play."""
        return self.metrics_dir / f"seed-{seed}" if self.metrics_dir is not None else None

    def run_argv(self, seed: int) -> list[str]:
        """The command line of the run for ``seed``."""
        argv = [sys.executable, "-m", "warband", "run", str(self.scenario)]
        argv += ["--seed", str(seed), "--json", "--quiet"]
        for key, value in self.params.items():
            argv += ["--param", f"{key}={value}"]
        if self.ticks is not None:
            argv += ["--ticks", str(self.ticks)]
        if self.mode is not None:
            argv += ["--mode", self.mode]
        if self.processes:
            argv.append("--processes")
        if self.otel is not None:
            argv += ["--otel", self.otel]
        log_dir = self.log_dir(seed)
        if log_dir is not None:
            argv += ["--log", str(log_dir)]
        return argv


@dataclass(frozen=True)
class SeedRun:
    """One seed's run as the sweep saw it; ``as_json()`` is one entry of ``runs``."""

    seed: int
    outcome: str
    """One of :data:`OUTCOMES`."""
    winner: str | None
    details: dict[str, Any]
    """The run's ``outcome_details`` (empty when it ended without a summary)."""
    completed: bool
    summary: str
    """The run's ``outcome_summary``, or what went wrong."""
    reason: str | None
    """Why the run did not complete (None when it did)."""
    duration_s: float
    exit_code: int | None
    metrics: dict[str, float] | None = None
    """With ``--metrics``: the run's measures (:mod:`warband.metrics`) by dotted path
    (``red.order_starved_share``); None when not measured."""

    def as_json(self) -> dict[str, Any]:
        measured = {} if self.metrics is None else {"metrics": self.metrics}
        return {
            **measured,
            "seed": self.seed,
            "outcome": self.outcome,
            "winner": self.winner,
            "details": self.details,
            "completed": self.completed,
            "summary": self.summary,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 3),
            "exit_code": self.exit_code,
        }

    def describe(self) -> str:
        """``red wins``, ``no winner (success)``, or ``error: <reason>``: for progress lines."""
        if not self.completed:
            return f"{self.outcome}: {self.reason}"
        if self.winner is not None:
            return f"{self.winner} wins"
        return f"no winner ({self.outcome})"


@dataclass(frozen=True)
class DetailStats:
    """A numeric outcome detail over the completed runs that reported it."""

    count: int
    mean: float
    sd: float
    """Sample standard deviation (0 with one run)."""
    low: float
    high: float

    def as_json(self) -> dict[str, Any]:
        return {
            "n": self.count,
            "mean": round(self.mean, 4),
            "sd": round(self.sd, 4),
            "min": self.low,
            "max": self.high,
        }


@dataclass
class SweepReport:
    """Every seed's run and what they add up to; ``as_json()`` is the ``--json`` contract."""

    plan: SweepPlan
    runs: list[SeedRun]
    """The seeds that ran, in seed order: every seed of a sweep that finished; those that
    finished or were under way when a signal stopped it."""
    duration_s: float
    interrupted_by: int | None = None
    """The signal that stopped the sweep, if one did."""

    @property
    def not_started(self) -> int:
        """Seeds a signal stopped the sweep before (not in ``runs``): counted, not listed, so
        an interrupted sweep of ``--seeds 100000000000`` stays small."""
        return self.plan.seeds - len(self.runs)

    @property
    def completed(self) -> list[SeedRun]:
        """The runs that completed, whatever their outcome: the ones ``wins`` counts."""
        return [run for run in self.runs if run.completed]

    @property
    def all_completed(self) -> bool:
        return len(self.runs) == self.plan.seeds and all(run.completed for run in self.runs)

    def wins(self) -> dict[str | None, int]:
        """Winner -> completed runs it won; ``None`` counts runs nobody won.

        Every side seen is listed, with 0 if it never won: each winner, and the keys of a
        ``scores`` detail when they name the sides (every winner is one of them; a scenario
        that names its winners otherwise, "guards" with scores by team colour, does not get
        its colours listed as sides that never won). Most wins first, ``None`` last.
        """
        counts = Counter(run.winner for run in self.completed)
        sides = {side for side in counts if side is not None}
        scored: set[str] = set()
        for run in self.completed:
            scores = run.details.get("scores")
            if isinstance(scores, dict):
                scored.update(str(side) for side in scores)
        if sides <= scored:
            sides |= scored
        ordered: dict[str | None, int] = {
            side: counts[side] for side in sorted(sides, key=lambda s: (-counts[s], s))
        }
        ordered[None] = counts[None]
        return ordered

    def intervals(self) -> dict[str | None, tuple[float, float]]:
        """Winner -> Wilson 95% interval of its share of the completed runs (empty if none)."""
        total = len(self.completed)
        if total == 0:
            return {}
        return {side: wilson_interval(won, total) for side, won in self.wins().items()}

    def stats(self) -> dict[str, DetailStats]:
        """Numeric outcome detail (dotted path, e.g. ``scores.red``) -> its spread over the
        completed runs that reported it (``n`` of them), a count of ``plan.counts`` over every
        completed run (0 where a run has none)."""
        numbers = [_numbers(run.details) for run in self.completed]
        counted = {
            path
            for found in numbers
            for path, _ in found
            if any(path == c or path.startswith(f"{c}.") for c in self.plan.counts)
        }
        for found in numbers:
            found += [(path, 0) for path in sorted(counted - {path for path, _ in found})]
        return _spreads(numbers)

    def metric_stats(self) -> dict[str, DetailStats]:
        """With ``--metrics``: each measure (dotted path) -> its spread over the measured runs."""
        return _spreads(
            list(run.metrics.items()) for run in self.completed if run.metrics is not None
        )

    @property
    def measured(self) -> bool:
        return self.plan.metrics_dir is not None

    def as_json(self) -> dict[str, Any]:
        """``runs`` (one entry per seed) and ``wins`` (winner -> count; JSON writes the
        ``None`` key, the runs nobody won, as ``"null"``), then the figures behind the table."""
        return {
            "scenario": self.plan.name,
            "seeds": self.plan.seeds,
            "params": dict(self.plan.params),
            "runs": [run.as_json() for run in self.runs],
            "wins": self.wins(),
            "intervals": {
                side: [round(low, 4), round(high, 4)]
                for side, (low, high) in self.intervals().items()
            },
            "stats": {path: stat.as_json() for path, stat in self.stats().items()},
            **(
                {"metrics": {p: stat.as_json() for p, stat in self.metric_stats().items()}}
                if self.measured
                else {}
            ),
            "completed": len(self.completed),
            "not_started": self.not_started,
            "duration_s": round(self.duration_s, 3),
            "interrupted": signal_name(self.interrupted_by) if self.interrupted_by else None,
        }


def _spreads(runs: Iterable[list[tuple[str, float]]]) -> dict[str, DetailStats]:
    values: dict[str, list[float]] = {}
    for numbers in runs:
        for path, number in numbers:
            values.setdefault(path, []).append(number)
    return {
        path: DetailStats(
            count=len(numbers),
            mean=statistics.fmean(numbers),
            sd=statistics.stdev(numbers) if len(numbers) > 1 else 0.0,
            low=min(numbers),
            high=max(numbers),
        )
        for path, numbers in sorted(values.items())
    }


class SweepInterrupted(Interrupted):
    """A signal stopped the sweep; every run it had started was stopped and reaped.

    ``report`` holds every seed: the runs that finished, and the others as ``interrupted``.
    """

    def __init__(self, signum: int, report: SweepReport) -> None:
        super().__init__(signum)
        self.report = report


def run_sweep(plan: SweepPlan, progress: Progress | None = None) -> SweepReport:
    """Run seeds 1..``plan.seeds``, ``plan.jobs`` at a time, and sum them up.

    ``progress`` gets one line per finished run. Raises :class:`SweepInterrupted` on a stop
    signal (see the module docstring) once every child is reaped.

    With OpenTelemetry export on in this process (``warband sweep --otel``), the sweep exports
    a span ``sweep <scenario>`` and under it one ``sweep run <scenario>`` per seed (its seed,
    outcome, winner, exit code; ERROR when the run did not complete), and gives each run that
    span in the ``TRACEPARENT`` variable: the run's own ``run <scenario>`` span is its child.
    """
    if plan.seeds < 1 or plan.jobs < 1:
        raise ValueError(f"a sweep needs seeds >= 1 and jobs >= 1, got {plan.seeds}, {plan.jobs}")
    from .messaging import otel

    name = plan.name or plan.scenario.stem
    span = otel.run_span(
        f"sweep {name}",
        {"warband.scenario": name, "warband.seeds": plan.seeds, "warband.jobs": plan.jobs},
    )
    finished: dict[int, SeedRun] = {}
    under_way: set[int] = set()
    started = time.monotonic()
    try:
        asyncio.run(run_until_signalled(_sweep(plan, finished, under_way, progress, span)))
    except Interrupted as interrupted:
        # The seeds that ran only: never one entry per seed asked for, which may be 10**11.
        stopped = {seed: _interrupted_run(seed, interrupted.signum) for seed in under_way}
        runs = [run for _, run in sorted({**stopped, **finished}.items())]
        report = SweepReport(plan, runs, time.monotonic() - started, interrupted.signum)
        if span is not None:
            span.end(_sweep_attributes(report), failure=str(interrupted))
        raise SweepInterrupted(interrupted.signum, report) from None
    except BaseException as error:
        if span is not None:
            span.end({}, error=error)
        raise
    runs = [finished[seed] for seed in range(1, plan.seeds + 1)]
    report = SweepReport(plan, runs, time.monotonic() - started)
    if span is not None:
        failed = plan.seeds - len(report.completed)
        span.end(
            _sweep_attributes(report),
            failure=f"{failed} of {plan.seeds} runs did not complete" if failed else None,
        )
    return report


def _sweep_attributes(report: SweepReport) -> dict[str, Any]:
    return {"warband.completed": len(report.completed), "warband.runs": len(report.runs)}


async def _sweep(
    plan: SweepPlan,
    finished: dict[int, SeedRun],
    under_way: set[int],
    progress: Progress | None,
    span: RunSpan | None,
) -> None:
    seeds = iter(range(1, plan.seeds + 1))  # lazily: --seeds may be far more than will run

    async def worker() -> None:
        # Workers pull seeds in order, so runs start 1, 2, 3... whatever order they end in.
        for seed in seeds:
            under_way.add(seed)
            run = await _run_seed(plan, seed, span)
            under_way.discard(seed)
            finished[seed] = run
            if progress is not None:
                progress(
                    f"{len(finished)}/{plan.seeds} seed {seed}: {run.describe()} "
                    f"({run.duration_s:.1f} s)"
                )

    async with asyncio.TaskGroup() as group:
        for _ in range(min(plan.jobs, plan.seeds)):
            group.create_task(worker())


async def _run_seed(plan: SweepPlan, seed: int, sweep_span: RunSpan | None) -> SeedRun:
    from .messaging.otel import TRACEPARENT
    from .messaging.supervisor import PARENT_VARIABLE

    # The run ends itself if this process dies without stopping it (see watch_parent).
    env = {**os.environ, PARENT_VARIABLE: str(os.getpid())}
    span = None
    if sweep_span is not None:
        name = plan.name or plan.scenario.stem
        span = sweep_span.child(
            f"sweep run {name}", {"warband.scenario": name, "warband.seed": seed}
        )
        env[TRACEPARENT] = span.traceparent
    started = time.monotonic()
    try:
        process = await asyncio.create_subprocess_exec(
            *plan.run_argv(seed),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        try:
            async with asyncio.timeout(plan.run_timeout):
                stdout, stderr = await process.communicate()
        except asyncio.CancelledError:
            await _stop(process)
            raise
        except TimeoutError:
            await _stop(process)
            stalled = f"no end after {plan.run_timeout:g} s: stopped (--run-timeout)"
            if span is not None:
                span.end({"warband.outcome": "error"}, failure=stalled)
            duration = time.monotonic() - started
            return SeedRun(seed, "error", None, {}, False, stalled, stalled, duration, None)
    except asyncio.CancelledError:
        if span is not None:
            span.end(
                {"warband.outcome": "interrupted"},
                failure="the sweep was interrupted before this run ended",
            )
        raise
    except BaseException as error:
        if span is not None:
            span.end({"warband.outcome": "error"}, error=error)
        raise
    run = _seed_run(
        seed,
        process.returncode,
        stdout.decode(errors="replace"),
        stderr.decode(errors="replace"),
        time.monotonic() - started,
    )
    log_dir = plan.log_dir(seed)
    if log_dir is not None:
        measures = await asyncio.to_thread(_measure, log_dir) if run.completed else None
        run = dataclasses.replace(run, metrics=measures)
    if span is not None:
        attributes: dict[str, Any] = {
            "warband.outcome": run.outcome,
            "warband.completed": run.completed,
        }
        if run.winner is not None:
            attributes["warband.winner"] = run.winner
        if run.exit_code is not None:
            attributes["warband.exit_code"] = run.exit_code
        span.end(attributes, failure=run.reason)
    return run


async def _stop(process: asyncio.subprocess.Process) -> None:
    """SIGTERM (a clean stop for ``warband run``), SIGKILL after the grace; always reaped."""
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), STOP_GRACE)
        except TimeoutError:
            process.kill()
    await process.wait()


def _seed_run(
    seed: int, exit_code: int | None, stdout: str, stderr: str, duration: float
) -> SeedRun:
    summary = _last_json_object(stdout.splitlines())
    if summary is None:
        reason = _failure_line(stderr.splitlines(), exit_code)
        return SeedRun(seed, "error", None, {}, False, reason, reason, duration, exit_code)
    details = summary.get("outcome_details")
    details = details if isinstance(details, dict) else {}
    completed = summary.get("completed") is True
    outcome = summary.get("outcome")
    return SeedRun(
        seed=seed,
        outcome=outcome if outcome in ("success", "failure") else "failure",
        winner=_winner(details),
        details=details,
        completed=completed,
        summary=str(summary.get("outcome_summary", "")),
        reason=None if completed else str(summary.get("finish_reason") or "did not complete"),
        duration_s=duration,
        exit_code=exit_code,
    )


def _measure(log_dir: Path) -> dict[str, float] | None:
    """The measures of a run's logs by dotted path, then its logs removed; None when the run
    cannot be measured (a scenario without a world)."""
    from .metrics import load_match, measure

    try:
        teams = measure(load_match(log_dir))["teams"]
    except WarbandError:
        return None
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    return dict(_numbers(teams))


def _winner(details: Mapping[str, Any]) -> str | None:
    winner = details.get("winner")
    return None if winner is None else str(winner)


def _last_json_object(lines: Sequence[str]) -> dict[str, Any] | None:
    for line in reversed(lines):
        if line.strip():
            try:
                parsed = json.loads(line)
            except ValueError:
                return None
            return parsed if isinstance(parsed, dict) else None
    return None


def _failure_line(stderr_lines: Sequence[str], exit_code: int | None) -> str:
    """Why a run gave no summary: its one-line ``warband: error:``, else its last words."""
    lines = [line.strip() for line in stderr_lines if line.strip()]
    errors = [line for line in lines if line.startswith("warband: ")]
    said = errors[-1] if errors else (lines[-1] if lines else "")
    if exit_code is not None and exit_code < 0:
        code = f"killed by {signal_name(-exit_code)}"
    else:
        code = f"exit code {exit_code}"
    return f"{code}, no summary: {said}" if said else f"{code}, no summary"


def _interrupted_run(seed: int, signum: int) -> SeedRun:
    reason = f"the sweep was interrupted by {signal_name(signum)} before this run ended"
    return SeedRun(seed, "interrupted", None, {}, False, reason, reason, 0.0, None)


def _numbers(details: Mapping[str, Any], prefix: str = "") -> list[tuple[str, float]]:
    found: list[tuple[str, float]] = []
    for key, value in details.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            found += _numbers(value, f"{path}.")
        elif _is_number(value) and math.isfinite(value):
            found.append((path, value))
    return found


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def format_table(report: SweepReport) -> str:
    """The sweep as a table for people: wins with intervals, numeric details, failed runs."""
    plan = report.plan
    params = ", ".join(f"{key}={value}" for key, value in plan.params.items())
    heading = f"sweep {plan.name}: seeds 1..{plan.seeds}" + (f", {params}" if params else "")
    outcomes = Counter(run.outcome for run in report.runs)
    counts = [f"{outcomes[name]} {name}" for name in OUTCOMES if outcomes[name]]
    if report.not_started:
        counts.append(f"{report.not_started} not started")
    lines = [
        heading,
        f"  {len(report.completed)} of {plan.seeds} runs completed ({', '.join(counts)}) "
        f"in {report.duration_s:.1f} s",
    ]
    if report.completed:
        total = len(report.completed)
        intervals = report.intervals()
        labels = {side: "no winner" if side is None else side for side in intervals}
        width = max(len("winner"), *(len(label) for label in labels.values()))
        lines.append(f"  {'winner':<{width}}  wins   share  95% interval")
        for side, won in report.wins().items():
            low, high = intervals[side]
            lines.append(
                f"  {labels[side]:<{width}}  {won:>4}  {won / total:>6.1%}  {low:.1%} - {high:.1%}"
            )
    stats = report.stats()
    if stats:
        width = max(len("detail"), *(len(path) for path in stats))
        lines += _spread_table("detail", width, stats)
    if report.measured:
        lines += _metrics_table(report)
    failed = [run for run in report.runs if not run.completed]
    if failed:
        lines.append("  runs that did not complete:")
        lines += [f"    seed {run.seed}: {run.outcome}: {run.reason}" for run in failed]
    return "\n".join(lines)


METRICS_IN_TABLE = (
    "order_starved_share",
    "crowded_share",
    "enemies_ignored_share",
    "stuck.episodes",
    "stuck.stuck_firing_full_health",
    "oscillations",
    "plan_churn",
    "regroups.ended",
    "regroups.by_arrival",
    "regroups.three_quarters",
    "attack_positions",
    "sniping",
    "turrets.placed",
    "turrets.damaged",
)
"""The measures the table shows per team (the JSON has them all)."""


def _metrics_table(report: SweepReport) -> list[str]:
    stats = report.metric_stats()
    measured = sum(1 for run in report.completed if run.metrics is not None)
    if not stats:
        return [f"  play measures: none ({measured} runs measured; a scenario with a world?)"]
    shown = {
        path: stat for path, stat in stats.items() if path.split(".", 1)[-1] in METRICS_IN_TABLE
    }
    width = max(len("measure"), *(len(path) for path in shown))
    lines = [f"  play measures over {measured} runs (warband metrics; --json has every one)"]
    return lines + _spread_table("measure", width, shown)


def _spread_table(heading: str, width: int, stats: Mapping[str, DetailStats]) -> list[str]:
    """One line per path: over how many runs (``n``: a detail only some runs reported has a
    smaller one), then mean, sd, min and max."""
    columns = "  ".join(f"{name:>9}" for name in ("mean", "sd", "min", "max"))
    lines = [f"  {heading:<{width}}  {'n':>4}  {columns}"]
    for path, stat in stats.items():
        figures = "  ".join(f"{_number(x):>9}" for x in (stat.mean, stat.sd, stat.low, stat.high))
        lines.append(f"  {path:<{width}}  {stat.count:>4}  {figures}")
    return lines


def _number(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.2f}"


def report_json_line(report: SweepReport) -> str:
    """The ``--json`` line: :meth:`SweepReport.as_json` on one line."""
    return json.dumps(report.as_json(), separators=(", ", ": "))
