"""What a run promises a scenario and its user (issue 24): the seed reaches the outcome judge;
a scenario's mistakes (no actors, a judge that raises or returns no Outcome) and bad command
lines are one line on stderr with exit 2, checked before anything runs; an agent gives up on a
broker within --broker-timeout, and at once when the broker refuses its run secret.

Each case runs the real command in a child process, as a user would type it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .conftest import REPO, CommandResult, run_summary
from .proc import free_tcp_port

Cli = Callable[..., CommandResult]
VARIANT = str(REPO / "tests" / "scenarios" / "variant.py")


@pytest.mark.parametrize(("seed", "variant"), [(4, "left"), (7, "right")])
def test_the_outcome_judge_is_given_the_runs_seed(
    warband_cli: Cli, seed: int, variant: str
) -> None:
    summary = run_summary(warband_cli, VARIANT, "--seed", str(seed))
    assert {"seed": seed, "variant": variant} == summary["outcome_details"]
    assert "success" == summary["outcome"]


@pytest.mark.processes
def test_the_judge_of_a_multi_process_run_is_given_the_seed_too(warband_cli: Cli) -> None:
    summary = run_summary(warband_cli, VARIANT, "--seed", "3", "--processes")
    assert {"seed": 3, "variant": "right"} == summary["outcome_details"]


# --- a scenario's mistakes ----------------------------------------------------------------------


def _assert_one_line_error(result: CommandResult, *fragments: str) -> None:
    assert 2 == result.returncode, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert 1 == len(lines), result.stderr
    assert lines[0].startswith("warband: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], result.stderr


def _scenario(tmp_path: Path, actors: str, judge: str = "Outcome(True, 'fine')") -> Path:
    path = tmp_path / "made.py"
    path.write_text(
        "from warband import Actor, Outcome, Scenario\n"
        'scenario = Scenario("made", ticks=2)\n'
        "@scenario.actors\n"
        "def build(params, seed):\n"
        f"    return {actors}\n"
        "@scenario.outcome\n"
        "def judge(result, params):\n"
        f"    return {judge}\n"
    )
    return path


@pytest.mark.parametrize("processes", [False, True], ids=["one-process", "processes"])
def test_a_scenario_without_actors_is_one_line(
    warband_cli: Cli, tmp_path: Path, processes: bool
) -> None:
    args = ["--processes"] if processes else []
    result = warband_cli("run", str(_scenario(tmp_path, "[]")), *args)
    _assert_one_line_error(result, "scenario 'made': @scenario.actors build() returned no actors")


def test_actors_that_are_not_a_list_are_one_line(warband_cli: Cli, tmp_path: Path) -> None:
    result = warband_cli("run", str(_scenario(tmp_path, "None")))
    _assert_one_line_error(result, "build() returned None, not a list of Actors")


def test_an_outcome_judge_that_raises_names_its_file_and_line(
    warband_cli: Cli, tmp_path: Path
) -> None:
    path = _scenario(tmp_path, "[Actor('a')]", "result.final_states['nobody']['x']")
    result = warband_cli("run", str(path), "--json", "-q")
    _assert_one_line_error(
        result, "scenario 'made': @scenario.outcome judge() raised KeyError", f"{path}:8"
    )
    assert "" == result.stdout


def test_an_outcome_judge_that_returns_a_string_says_what_to_return(
    warband_cli: Cli, tmp_path: Path
) -> None:
    result = warband_cli("run", str(_scenario(tmp_path, "[Actor('a')]", "'won'")), "-q")
    _assert_one_line_error(result, "judge() returned 'won', not an Outcome")


# --- command lines --------------------------------------------------------------------------


def test_a_value_argparse_rejects_is_one_line_naming_the_help(warband_cli: Cli) -> None:
    result = warband_cli("run", "scenarios/ping_pong.py", "--seed", "abc")
    _assert_one_line_error(
        result, "argument --seed: invalid int value: 'abc'", "`warband run --help`"
    )


def test_a_missing_argument_is_one_line_too(warband_cli: Cli) -> None:
    _assert_one_line_error(warband_cli("agent"), "the following arguments are required")


def test_an_agent_connecting_to_garbage_is_bad_input(warband_cli: Cli) -> None:
    result = warband_cli(
        "agent", "--connect", "garbage", "--scenario", "scenarios/ping_pong.py", "--id", "bot-1"
    )
    _assert_one_line_error(result, "--connect 'garbage' is not an endpoint")


@pytest.mark.parametrize(
    "result_file", ["/proc/x/r.json", "{tmp}"], ids=["missing-directory", "a-directory"]
)
def test_a_clock_result_file_that_cannot_be_written_is_refused_before_the_run(
    warband_cli: Cli, tmp_path: Path, result_file: str
) -> None:
    # No broker listens: a refusal that came after the run would come after its start wait.
    endpoint = f"ipc://{tmp_path / 'nobody.sock'}"
    path = result_file.format(tmp=tmp_path)
    result = warband_cli(
        "agent",
        "--connect",
        endpoint,
        "--scenario",
        "scenarios/ping_pong.py",
        "--id",
        "clock",
        "--result",
        path,
        timeout=60,
    )
    _assert_one_line_error(result, f"--result '{path}' cannot be written")


def test_a_directory_given_for_a_scenario_file_is_not_called_missing(warband_cli: Cli) -> None:
    result = warband_cli("run", "scenarios")
    _assert_one_line_error(result, "scenario file 'scenarios' is a directory, not a file")


def test_a_file_given_for_a_directory_is_not_called_missing(
    warband_cli: Cli, tmp_path: Path
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    result = warband_cli("run", "scenarios/ping_pong.py", "--log", str(a_file))
    _assert_one_line_error(result, f"--log '{a_file}' is a file, not a directory")
    result = warband_cli("run", "scenarios/ping_pong.py", "--processes", "--curve", str(a_file))
    _assert_one_line_error(result, f"--curve '{a_file}' is a file, not a directory")
    result = warband_cli("keys", str(a_file), "--agents", "a")
    _assert_one_line_error(result, f"keys DIR '{a_file}' is a file, not a directory")
    result = warband_cli("trace", str(a_file))
    _assert_one_line_error(result, f"trace directory '{a_file}' is a file, not a directory")
    result = warband_cli("explain", str(a_file), "--agent", "a", "--tick", "1")
    _assert_one_line_error(result, f"log directory '{a_file}' is a file, not a directory")
    result = warband_cli("view", str(a_file))
    _assert_one_line_error(result, f"log directory '{a_file}' is a file, not a directory")


# --- waiting for a broker -----------------------------------------------------------------------


def test_an_agent_waits_for_a_first_broker_only_its_broker_timeout(
    warband_cli: Cli, tmp_path: Path
) -> None:
    endpoint = f"ipc://{tmp_path / 'nobody.sock'}"
    started = time.monotonic()
    result = warband_cli(
        "agent",
        "--connect",
        endpoint,
        "--scenario",
        "scenarios/ping_pong.py",
        "--id",
        "bot-1",
        "--broker-timeout",
        "2",
        timeout=120,
    )
    assert 1 == result.returncode, result.stderr
    assert "no broker answered" in result.stderr and "within 2.0 s" in result.stderr
    # The default start wait is 30 s: well under it, whatever the load.
    assert time.monotonic() - started < 25


@pytest.fixture
def broker_with_a_secret(tmp_path: Path, warband_cli: Cli) -> Iterator[str]:
    """A `warband broker` on a free TCP port holding the run secret tmp_path/theirs/run.secret."""
    import subprocess
    import sys

    assert 0 == warband_cli("keys", str(tmp_path / "theirs"), "--secret").returncode
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    broker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "warband",
            "broker",
            "--bind",
            endpoint,
            "--secret",
            str(tmp_path / "theirs" / "run.secret"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert broker.stderr is not None
        assert "routing on" in broker.stderr.readline()
        yield endpoint
    finally:
        broker.kill()
        broker.communicate()  # reaped, its pipe closed


def test_an_agent_with_another_run_secret_is_told_at_once(
    warband_cli: Cli, tmp_path: Path, broker_with_a_secret: str
) -> None:
    assert 0 == warband_cli("keys", str(tmp_path / "mine"), "--secret").returncode
    started = time.monotonic()
    result = warband_cli(
        "agent",
        "--connect",
        broker_with_a_secret,
        "--scenario",
        "scenarios/ping_pong.py",
        "--id",
        "bot-1",
        "--secret",
        str(tmp_path / "mine" / "run.secret"),
        timeout=120,
    )
    assert 1 == result.returncode, result.stderr
    assert "refused this connection's run secret" in result.stderr, result.stderr
    # It waited out the 30 s start wait before; the refusal comes with the first handshake.
    assert time.monotonic() - started < 25


# --- killing an agent at a tick -------------------------------------------------------------

PING_PONG = "scenarios/ping_pong.py"


def _events(log_dir: Path, name: str) -> list[dict[str, object]]:
    from .conftest import read_log_events

    return [event for event in read_log_events(log_dir) if event.get("event") == name]


def test_kill_stops_an_agent_at_its_tick_and_the_run_goes_on_without_it(
    warband_cli: Cli, tmp_path: Path
) -> None:
    summary = run_summary(warband_cli, PING_PONG, "--kill", "bot-1@3", "--log", str(tmp_path))
    assert {"bot-1": "left: killed at tick 3"} == summary["departed"]
    assert summary["completed"] and 60 == summary["ticks"]
    assert [3] == [event["tick"] for event in _events(tmp_path, "actor.killed")]


@pytest.mark.processes
def test_kill_with_processes_is_a_sigkill_and_the_restart_stays_dead(
    warband_cli: Cli, tmp_path: Path
) -> None:
    import signal

    one = run_summary(warband_cli, PING_PONG, "--kill", "bot-1@3")
    summary = run_summary(
        warband_cli, PING_PONG, "--kill", "bot-1@3", "--processes", "--log", str(tmp_path)
    )
    restarts = [e for e in _events(tmp_path, "process.restart") if e["process"] == "bot-1"]
    assert [-signal.SIGKILL] == [event["code"] for event in restarts]
    first, restarted = summary["pids"]["bot-1"]
    assert [first] == [event["pid"] for event in _events(tmp_path, "actor.killed")]
    assert [restarted] == [event["pid"] for event in _events(tmp_path, "actor.stays_dead")]
    assert ["bot-1"] == list(summary["departed"])
    # The orders bot-1 never finished are the same; how often the commander retried them
    # depends on when the broker notices a dead process, which one process has no say in.
    assert one["outcome_details"]["completed"] == summary["outcome_details"]["completed"]


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("bot-1", "--kill expects AGENT@TICK"),
        ("bot-1@x", "--kill expects AGENT@TICK"),
        ("bot-1@0", "--kill expects AGENT@TICK"),
        ("bot-9@3", "scenario 'ping_pong' has no agent 'bot-9' to kill"),
        ("clock@3", "has no agent 'clock' to kill (the clock cannot be killed)"),
        ("bot-1@61", "the run has 60 ticks"),
    ],
)
def test_a_kill_the_run_cannot_do_is_one_line_before_it_starts(
    warband_cli: Cli, value: str, fragment: str
) -> None:
    _assert_one_line_error(warband_cli("run", PING_PONG, "--kill", value), fragment)


def test_kill_is_in_the_run_help(warband_cli: Cli) -> None:
    assert "--kill AGENT@TICK" in warband_cli("run", "--help").stdout


# --- what was accepted silently -------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run", PING_PONG, "--otel", "notaurl"], "--otel 'notaurl' is not an OTLP/HTTP"),
        (["sweep", PING_PONG, "--seeds", "1", "--otel", "ftp://x"], "is not an OTLP/HTTP"),
        (
            ["run", PING_PONG, "--processes", "--endpoint", "inproc://foo"],
            "reaches only within one process",
        ),
        (["render", "warzone", "--tick", "5", "--out", "{tmp}/w.png"], "a map has no ticks"),
    ],
    ids=["otel", "otel-sweep", "inproc-processes", "render-tick-of-a-map"],
)
def test_a_flag_the_run_would_ignore_or_trip_over_later_is_refused_first(
    warband_cli: Cli, tmp_path: Path, args: list[str], fragment: str
) -> None:
    result = warband_cli(*(arg.format(tmp=tmp_path) for arg in args), timeout=60)
    _assert_one_line_error(result, fragment)
    assert [] == list(tmp_path.iterdir())  # nothing drawn


def test_an_otel_variable_that_is_not_a_url_is_refused_too(warband_cli: Cli) -> None:
    result = warband_cli("run", PING_PONG, env={"OTEL_EXPORTER_OTLP_ENDPOINT": "nope"})
    _assert_one_line_error(result, "$OTEL_EXPORTER_OTLP_ENDPOINT 'nope' is not an OTLP/HTTP")


def test_keys_for_named_agents_and_a_scenario_at_once_is_refused(
    warband_cli: Cli, tmp_path: Path
) -> None:
    keys = tmp_path / "keys"
    result = warband_cli("keys", str(keys), "--agents", "a", "--scenario", PING_PONG)
    _assert_one_line_error(result, "takes --agents ID[,ID...] or --scenario FILE, not both")
    assert not keys.exists()


def test_a_scenario_that_exits_while_imported_is_one_line_not_its_exit_code(
    warband_cli: Cli, tmp_path: Path
) -> None:
    script = tmp_path / "exits.py"
    script.write_text("import sys\nsys.exit(3)\n")
    result = warband_cli("run", str(script))
    _assert_one_line_error(result, f"{script}:2", "called sys.exit(3) while it was imported")


def test_a_message_type_of_ones_own_is_refused_where_it_is_written(
    warband_cli: Cli, tmp_path: Path
) -> None:
    script = tmp_path / "custom.py"
    script.write_text(
        "from warband import Scenario\n"
        "from warband.messaging import Message\n"
        'scenario = Scenario("custom")\n'
        "class Hello(Message, frozen=True):\n"
        '    text: str = "hi"\n'
    )
    result = warband_cli("run", str(script))
    _assert_one_line_error(result, f"{script}:4", "Hello", "subclasses a warband Message")


def test_a_log_directory_holding_another_runs_logs_is_refused(
    warband_cli: Cli, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    run_summary(warband_cli, PING_PONG, "--log", str(logs))
    before = sorted(logs.iterdir())
    result = warband_cli("run", PING_PONG, "--log", str(logs), "--processes")
    _assert_one_line_error(result, f"--log '{logs}' already holds the logs of a run")
    assert before == sorted(logs.iterdir())


def test_an_empty_htn_domain_file_is_refused_when_it_loads(tmp_path: Path) -> None:
    from warband.exceptions import DomainSyntaxError
    from warband.planning.htn.parser import load_domain_file

    empty = tmp_path / "empty.htn"
    empty.write_text("; nothing yet\n")
    with pytest.raises(DomainSyntaxError, match="defines no method and no primitive"):
        load_domain_file(empty)


# --- first-hour polish ----------------------------------------------------------------------


@pytest.mark.processes
def test_a_clock_started_by_hand_prints_progress_and_the_verdict_and_writes_the_outcome(
    tmp_path: Path,
) -> None:
    from .test_runs_that_end import Launched

    launched = Launched(tmp_path)
    try:
        endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
        launched.start("broker", "broker", "--bind", endpoint)
        common = ["agent", "--connect", endpoint, "--scenario", VARIANT, "--seed", "4"]
        result = tmp_path / "result.json"
        launched.start("clock", *common, "--id", "clock", "--result", str(result))
        launched.start("player", *common, "--id", "player")
        assert 0 == launched.wait("clock", 60), launched.stderr("clock")
        assert 0 == launched.wait("player", 60), launched.stderr("player")
    finally:
        launched.kill_all()
    assert "[variant] tick 2/2" in launched.stderr("clock")
    said = (tmp_path / "clock.out").read_text()
    assert said.startswith("scenario variant: SUCCESS - played left\n"), said
    written = json.loads(result.read_text())
    assert ("success", "played left") == (written["outcome"], written["outcome_summary"])
    assert {"seed": 4, "variant": "left"} == written["outcome_details"]
    assert 2 == written["ticks"] and 4 == written["seed"]


@pytest.mark.processes
def test_a_quiet_multi_process_run_prints_only_its_summary_and_a_loud_one_its_ticks(
    warband_cli: Cli,
) -> None:
    quiet = warband_cli("run", PING_PONG, "--processes", "-q")
    assert 0 == quiet.returncode, quiet.stderr
    assert "" == quiet.stderr
    loud = warband_cli("run", PING_PONG, "--processes")
    assert 0 == loud.returncode, loud.stderr
    assert "[ping_pong] tick 6/60" in loud.stderr.splitlines()


def test_run_actors_logs_to_stderr_not_stdout(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = tmp_path / "loud.py"
    script.write_text(
        "import asyncio\n"
        "from warband import Actor\n"
        "from warband.testing import run_actors\n"
        "class Loud(Actor):\n"
        "    def on_tick(self, tick):\n"
        "        self.log.warning('loud.tick', tick=tick)\n"
        "result = asyncio.run(run_actors([Loud('a')], ticks=2))\n"
        "print('ticks', result.ticks)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert 0 == done.returncode, done.stderr
    assert "ticks 2\n" == done.stdout
    assert "loud.tick" in done.stderr


def test_a_quiet_run_shows_a_repeated_error_once_per_power_of_ten(warband_cli: Cli) -> None:
    # Every Percept to bob after he is killed is undeliverable (31 of them), twice logged.
    result = warband_cli("run", "scenarios/prison_escape.py", "--param", "kill_helper=true", "-q")
    assert 0 == result.returncode, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) <= 6, result.stderr
    repeated = [line for line in lines if "msg.undeliverable" in line]
    assert 2 == len(repeated) and "repeated=10" in repeated[1], result.stderr


def test_ping_pong_in_realtime_completes_every_order(warband_cli: Cli) -> None:
    # Its waits were ticks read as seconds: 12 s per order in a run of 3 s.
    summary = run_summary(warband_cli, PING_PONG, "--mode", "realtime")
    assert "success" == summary["outcome"], summary["outcome_summary"]
    assert "every order completed" == summary["finish_reason"]


def test_the_page_of_run_view_names_the_run_not_its_internal_socket() -> None:
    import os
    import signal
    import subprocess
    import sys
    import urllib.request

    from warband.testing import wait_until

    pytest.importorskip("aiohttp", reason="warband view needs the view extra (aiohttp)")
    command = [sys.executable, "-m", "warband", "run", PING_PONG, "-q", "--view"]
    process = subprocess.Popen(
        [*command, "--view-port", str(free_tcp_port())],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )

    def named() -> object:
        with urllib.request.urlopen(url + "api/summary", timeout=10) as response:
            return json.load(response)["log_dir"]

    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert "scenario ping_pong: SUCCESS" in process.stdout.readline()  # the run is over
        assert process.stderr is not None
        # A stop signal is the viewer's to take once it says it keeps serving.
        while "keeps serving" not in (line := process.stderr.readline()):
            assert line, "warband run --view ended before it said it keeps serving"
        wait_until(lambda: named() == f"run {PING_PONG}", timeout=60, what="the run's name")
        process.send_signal(signal.SIGTERM)
        assert 0 == process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_a_name_for_a_log_dir_view_is_refused(warband_cli: Cli, tmp_path: Path) -> None:
    _assert_one_line_error(
        warband_cli("view", str(tmp_path), "--name", "x"), "--name names a --live run"
    )
