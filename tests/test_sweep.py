"""``warband sweep``: many seeds of a scenario, each its own ``warband run`` process, counted.

The sweeps run the real command with real child runs (skirmish, ping pong, and the seeded
toss of ``tests/scenarios/coin.py``); the interval arithmetic is checked against published
values. Every process a test starts is killed and reaped when it ends, pass or fail.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from warband.sweep import SeedRun, SweepPlan, SweepReport, format_table, wilson_interval
from warband.testing import wait_until

from .conftest import REPO, CommandResult, last_json_line

Cli = Callable[..., CommandResult]
SKIRMISH = "scenarios/skirmish.py"
PING_PONG = "scenarios/ping_pong.py"
COIN = str(REPO / "tests" / "scenarios" / "coin.py")
PROGRESS = re.compile(r"^\[sweep\] (\d+)/(\d+) seed (\d+): (.+) \((\d+\.\d) s\)$")


def _progress_lines(stderr: str) -> list[re.Match[str]]:
    return [match for line in stderr.splitlines() if (match := PROGRESS.match(line))]


# --- the Wilson interval -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("successes", "trials", "expected"),
    [
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I,
        # method 3 (score interval without continuity correction).
        (81, 263, (0.2553, 0.3662)),
        (15, 148, (0.0624, 0.1605)),
        (0, 20, (0.0, 0.1611)),
        (1, 29, (0.0061, 0.1718)),
    ],
)
def test_the_wilson_interval_matches_published_values(
    successes: int, trials: int, expected: tuple[float, float]
) -> None:
    low, high = wilson_interval(successes, trials)
    assert expected == (round(low, 4), round(high, 4))


def test_the_wilson_interval_is_symmetric_and_stays_within_zero_and_one() -> None:
    low, high = wilson_interval(20, 20)
    assert (1.0, round(1 - 0.1611, 4)) == (high, round(low, 4))
    mirrored = [1 - bound for bound in reversed(wilson_interval(7, 10))]
    assert pytest.approx(mirrored) == list(wilson_interval(3, 10))


@pytest.mark.parametrize(("successes", "trials"), [(0, 0), (5, 4), (-1, 4)])
def test_the_wilson_interval_refuses_impossible_counts(successes: int, trials: int) -> None:
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(successes, trials)


# --- the report, from runs made up here --------------------------------------------------------


def _seed_run(seed: int, winner: str | None, scores: dict[str, int]) -> SeedRun:
    details = {"winner": winner, "scores": scores}
    return SeedRun(seed, "success", winner, details, True, "", None, 0.1, 0)


def test_a_side_that_never_won_is_listed_with_zero_wins_and_draws_are_the_null_key() -> None:
    plan = SweepPlan(scenario=Path("x.py"), seeds=3, jobs=1, name="x")
    runs = [
        _seed_run(1, "red", {"red": 3, "blue": 1}),
        _seed_run(2, "red", {"red": 2, "blue": 0}),
        _seed_run(3, None, {"red": 1, "blue": 1}),
    ]
    report = SweepReport(plan, runs, 1.0)
    summary = json.loads(json.dumps(report.as_json()))
    assert {"red": 2, "blue": 0, "null": 1} == summary["wins"]
    assert {"n": 3, "mean": 2.0, "sd": 1.0, "min": 1, "max": 3} == summary["stats"]["scores.red"]
    assert [0.0, 0.5615] == summary["intervals"]["blue"]
    table = format_table(report)
    assert re.search(r"blue\s+0\s+0\.0%\s+0\.0% - 56\.1%", table), table
    assert re.search(r"no winner\s+1\s+33\.3%", table), table


def test_a_count_a_run_lacks_counts_zero_when_the_scenario_says_so_and_the_table_shows_n() -> None:
    # Ten runs, red killed in eight: the world's kills have no key for a team with none.
    runs = [
        SeedRun(
            seed,
            "success",
            None,
            {"kills": {"blue": 1, **({"red": 10} if seed <= 8 else {})}},
            True,
            "",
            None,
            0.1,
            0,
        )
        for seed in range(1, 11)
    ]
    counted = SweepPlan(scenario=Path("x.py"), seeds=10, jobs=1, name="x", counts=("kills",))
    stats = SweepReport(counted, runs, 1.0).stats()
    assert (10, 8.0) == (stats["kills.red"].count, stats["kills.red"].mean)
    assert re.search(r"kills\.red\s+10\s+8\s", format_table(SweepReport(counted, runs, 1.0)))
    # A detail the scenario does not call a count is averaged over the runs that have it, and
    # the table says over how many.
    plain = SweepPlan(scenario=Path("x.py"), seeds=10, jobs=1, name="x")
    assert (8, 10.0) == (SweepReport(plain, runs, 1.0).stats()["kills.red"].count, 10.0)
    table = format_table(SweepReport(plain, runs, 1.0))
    assert re.search(r"detail\s+n\s+mean", table), table
    assert re.search(r"kills\.red\s+8\s+10\s", table), table


def test_warzone_declares_its_kills_and_captures_counts() -> None:
    from warband.scenario import load_scenario

    assert {"kills", "captures"} <= set(load_scenario(REPO / "scenarios" / "warzone.py").counts)


def test_scores_by_colour_are_not_listed_as_sides_when_the_winners_are_named_otherwise() -> None:
    plan = SweepPlan(scenario=Path("x.py"), seeds=2, jobs=1, name="x")
    runs = [
        _seed_run(1, "guards", {"red": 3, "blue": 1}),
        _seed_run(2, "prisoners", {"red": 0, "blue": 2}),
    ]
    report = SweepReport(plan, runs, 1.0)
    assert {"guards": 1, "prisoners": 1, None: 0} == report.wins()
    table = format_table(report)
    assert "red" not in table.split("detail")[0], table


def test_sweep_help_shows_a_single_percent_sign(warband_cli: Cli) -> None:
    result = warband_cli("sweep", "--help")
    assert "(95% Wilson interval)" in " ".join(result.stdout.split()), result.stdout
    assert "%%" not in result.stdout


# --- real sweeps -------------------------------------------------------------------------------


def test_a_skirmish_sweep_counts_each_seeds_winner_with_progress_and_a_table(
    warband_cli: Cli,
) -> None:
    result = warband_cli(
        "sweep", SKIRMISH, "--seeds", "4", "--jobs", "2", "--param", "bots=1", "--json"
    )
    assert 0 == result.returncode, result.stderr
    summary = last_json_line(result.stdout)
    runs = summary["runs"]
    assert [1, 2, 3, 4] == [run["seed"] for run in runs]
    for run in runs:
        assert {"seed", "outcome", "winner", "details"} <= run.keys()
        assert run["details"]["winner"] == run["winner"]
        assert run["winner"] in ("red", "blue", None)
    wins = summary["wins"]
    assert {"red", "blue", "null"} == wins.keys()
    for side in ("red", "blue", None):
        key = "null" if side is None else side
        assert sum(1 for run in runs if run["winner"] == side) == wins[key]
    assert {"scores.red", "scores.blue"} <= summary["stats"].keys()

    progress = _progress_lines(result.stderr)
    assert [1, 2, 3, 4] == sorted(int(match[3]) for match in progress)
    assert ["1/4", "2/4", "3/4", "4/4"] == [f"{match[1]}/{match[2]}" for match in progress]
    assert "95% interval" in result.stderr  # the table goes to stderr when stdout is JSON
    assert 1 == len(result.stdout.strip().splitlines())


def test_a_seed_in_a_sweep_gives_what_warband_run_gives_for_that_seed(warband_cli: Cli) -> None:
    swept = warband_cli("sweep", SKIRMISH, "--seeds", "3", "--param", "bots=1", "--json", "-q")
    alone = warband_cli("run", SKIRMISH, "--seed", "3", "--param", "bots=1", "--json", "-q")
    assert 0 == swept.returncode, swept.stderr
    assert 0 == alone.returncode, alone.stderr
    assert (
        last_json_line(alone.stdout)["outcome_details"]
        == (last_json_line(swept.stdout)["runs"][2]["details"])
    )


def test_a_scenario_without_sides_has_no_winner_and_counts_every_run_as_a_draw(
    warband_cli: Cli,
) -> None:
    result = warband_cli("sweep", PING_PONG, "--seeds", "2", "--jobs", "1")
    assert 0 == result.returncode, result.stderr
    assert re.search(r"no winner\s+2\s+100\.0%", result.stdout), result.stdout
    assert "completed" in result.stdout  # ping pong's numeric details are averaged
    assert 2 == len(_progress_lines(result.stderr))

    as_json = warband_cli("sweep", PING_PONG, "--seeds", "2", "--json", "-q")
    summary = last_json_line(as_json.stdout)
    assert [None, None] == [run["winner"] for run in summary["runs"]]
    assert ["success", "success"] == [run["outcome"] for run in summary["runs"]]
    assert {"null": 2} == summary["wins"]
    assert "" == as_json.stderr.split("sweep ping_pong")[0]  # -q: the table only


def test_runs_that_fail_are_kept_in_the_table_and_the_json_with_their_reason(
    warband_cli: Cli,
) -> None:
    result = warband_cli(
        "sweep",
        COIN,
        "--seeds",
        "7",
        "--param",
        "crash_seed=5",
        "--param",
        "stall_seed=6",
        "--param",
        "refuse_seed=7",
        "--json",
    )
    assert 1 == result.returncode, result.stderr
    summary = last_json_line(result.stdout)
    runs = {run["seed"]: run for run in summary["runs"]}
    assert [1, 2, 3, 4, 5, 6, 7] == sorted(runs)
    assert ("error", False, 3) == (runs[5]["outcome"], runs[5]["completed"], runs[5]["exit_code"])
    assert "exit code 3, no summary" == runs[5]["reason"]
    assert ("failure", False) == (runs[6]["outcome"], runs[6]["completed"])
    assert "the toss cannot go on without it" in runs[6]["reason"]
    assert ("error", 2) == (runs[7]["outcome"], runs[7]["exit_code"])
    assert "seed 7 is refused on purpose" in runs[7]["reason"]
    # Only completed runs are counted: seeds 1 and 4 heads, 2 tails, 3 nobody.
    assert {"heads": 2, "tails": 1, "null": 1} == summary["wins"]
    assert 4 == summary["completed"]

    assert "seed 5: error: exit code 3, no summary" in result.stderr
    assert "seed 6: failure: tosser left" in result.stderr
    last_line = result.stderr.splitlines()[-1]
    assert "warband: error: some runs did not complete (see the table)" == last_line


def test_a_run_past_its_run_timeout_is_stopped_and_counted_an_error(warband_cli: Cli) -> None:
    # A million realtime ticks: the runs would go on for hours, their loops awake.
    result = warband_cli(
        "sweep", COIN, "--seeds", "2", "--ticks", "1000000", "--mode", "realtime",
        "--run-timeout", "2", "--json",
    )  # fmt: skip
    assert 1 == result.returncode, result.stderr
    runs = last_json_line(result.stdout)["runs"]
    assert [("error", False)] * 2 == [(run["outcome"], run["completed"]) for run in runs]
    assert all("no end after 2 s: stopped (--run-timeout)" == run["reason"] for run in runs)
    assert all(run["duration_s"] < 60 for run in runs)  # stopped, not run to the end


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([SKIRMISH, "--seeds", "0"], "--seeds must be at least 1, got 0"),
        ([SKIRMISH, "--seeds", "2", "--jobs", "0"], "--jobs must be at least 1, got 0"),
        (
            [SKIRMISH, "--seeds", "2", "--run-timeout", "0"],
            "--run-timeout must be a positive number of seconds, got 0.0",
        ),
        (["scenarios/no_such.py", "--seeds", "2"], "scenario file 'scenarios/no_such.py'"),
        ([SKIRMISH, "--seeds", "2", "--param", "colour=red"], "has no parameter 'colour'"),
        ([SKIRMISH, "--seeds", "2", "--param", "bots=13"], "bots must be 1..12 per team"),
    ],
    ids=["no-seeds", "no-jobs", "no-time", "missing-scenario", "unknown-param", "bad-param-value"],
)
def test_bad_sweep_input_is_one_line_and_exit_2_before_any_run(
    warband_cli: Cli, args: list[str], fragment: str
) -> None:
    result = warband_cli("sweep", *args)
    assert 2 == result.returncode, result.stderr
    assert 1 == len(result.stderr.splitlines()), result.stderr
    assert result.stderr.startswith("warband: error: ")
    assert fragment in result.stderr
    assert "" == result.stdout


# --- stopping a sweep --------------------------------------------------------------------------


def _gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (reaped, or a zombie nobody has reaped yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def _pids(folder: Path) -> list[int]:
    pids = []
    for file in folder.glob("seed-*.pid"):
        text = file.read_text()
        if text.isdigit():
            pids.append(int(text))
    return pids


@pytest.fixture
def endless_sweep(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A sweep of three seeds, two at a time, of tosses that would last ~forever; its runs
    write their pids in the folder yielded with it. Killed, with its runs, at the end."""
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    command = [sys.executable, "-m", "warband", "sweep", COIN, "--seeds", "3", "--jobs", "2"]
    command += ["--ticks", "100000000", "--param", f"pid_dir={pid_dir}", "--json"]
    sweep = subprocess.Popen(
        command,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: len(_pids(pid_dir)) == 2, timeout=60, what="two runs under way")
        yield sweep, pid_dir
    finally:
        if sweep.poll() is None:
            sweep.kill()
        sweep.communicate(timeout=30)
        for pid in _pids(pid_dir):
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_stops_every_run_and_still_ends_with_the_json_line(
    endless_sweep: tuple[subprocess.Popen[str], Path], signum: signal.Signals
) -> None:
    sweep, pid_dir = endless_sweep
    sweep.send_signal(signum)
    stdout, stderr = sweep.communicate(timeout=60)
    assert 128 + signum == sweep.returncode, stderr
    summary = last_json_line(stdout)
    assert signum.name == summary["interrupted"]
    # --jobs 2: the third seed waited for a free slot; it is counted, not listed.
    assert [1, 2] == [run["seed"] for run in summary["runs"]]
    assert ["interrupted"] * 2 == [run["outcome"] for run in summary["runs"]]
    assert (0, 1) == (summary["completed"], summary["not_started"])
    assert f"warband: interrupted by {signum.name}" == stderr.splitlines()[-1]
    assert [True, True] == [_gone(pid) for pid in _pids(pid_dir)]
    # --jobs 2: the third seed waited for a free slot and never started.
    assert ["seed-1.pid", "seed-2.pid"] == sorted(file.name for file in pid_dir.iterdir())


def test_runs_end_when_their_sweep_is_killed_outright(
    endless_sweep: tuple[subprocess.Popen[str], Path],
) -> None:
    sweep, pid_dir = endless_sweep
    sweep.kill()
    sweep.wait(timeout=30)
    pids = _pids(pid_dir)
    wait_until(lambda: all(_gone(pid) for pid in pids), timeout=30, what=f"runs {pids} to end")


def test_a_sweep_of_a_hundred_billion_seeds_stays_small_and_ctrl_c_prints_the_partial_table(
    tmp_path: Path,
) -> None:
    # Issue 25, finding 9. Its address space is capped at 2 GiB, children included: a sweep
    # that listed every seed it was asked for would die of MemoryError (or take the machine).
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    command = [sys.executable, "-m", "warband", "sweep", COIN, "--seeds", "100000000000"]
    command += ["--jobs", "2", "--param", f"pid_dir={pid_dir}", "--json"]
    cap = 2 * 1024**3

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    sweep = subprocess.Popen(
        command,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=capped,
    )
    try:
        wait_until(
            lambda: len(_pids(pid_dir)) >= 4, timeout=120, what="four runs under way or done"
        )
        sweep.send_signal(signal.SIGINT)
        stdout, stderr = sweep.communicate(timeout=60)
    finally:
        if sweep.poll() is None:
            sweep.kill()
            sweep.communicate(timeout=30)
    assert 130 == sweep.returncode, stderr
    assert "Traceback" not in stderr and "MemoryError" not in stderr, stderr
    assert "warband: interrupted by SIGINT" == stderr.splitlines()[-1]
    summary = last_json_line(stdout)
    ran = [run["seed"] for run in summary["runs"]]
    assert ran == list(range(1, len(ran) + 1)), ran
    assert len(ran) >= 4
    assert 100_000_000_000 == len(ran) + summary["not_started"]
    # The partial table, on stderr with --json: what finished, and how many never started.
    assert f"{summary['not_started']} not started" in stderr
    assert "sweep coin: seeds 1..100000000000" in stderr


def test_a_sweep_with_metrics_adds_each_runs_play_measures_and_their_spread(
    warband_cli: Cli, tmp_path: Path
) -> None:
    warzone = "scenarios/warzone.py"
    env = {"TMPDIR": str(tmp_path)}
    result = warband_cli(
        "sweep", warzone, "--seeds", "2", "--param", "bots=2", "--ticks", "40", "--metrics",
        "--json", "-q", env=env,
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    report = last_json_line(result.stdout)
    for run in report["runs"]:
        assert {"red.alive_bot_ticks", "blue.order_starved_share"} <= set(run["metrics"])
    spread = report["metrics"]["red.crowded_share"]
    assert 2 == spread["n"] and spread["min"] <= spread["mean"] <= spread["max"]
    assert "play measures over 2 runs" in result.stderr  # the table goes to stderr with --json
    assert [] == list(tmp_path.iterdir())  # every seed's logs were removed once measured
    plain = warband_cli("sweep", PING_PONG, "--seeds", "1", "--metrics", "--json", "-q", env=env)
    assert {} == last_json_line(plain.stdout)["metrics"]  # no world: nothing to measure
    assert "play measures: none" in plain.stderr
