"""Bad input to `warband`: one line on stderr naming the problem, exit 2, no traceback.

Each case runs the real command in a child process, as a user would type it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import zmq

from .conftest import REPO, CommandResult

Cli = Callable[..., CommandResult]
PING_PONG = "scenarios/ping_pong.py"
SKIRMISH = "scenarios/skirmish.py"


def _assert_one_line_error(result: CommandResult, *fragments: str) -> None:
    assert 2 == result.returncode, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert 1 == len(lines), result.stderr
    assert lines[0].startswith("warband: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture
def bound_tcp_endpoint() -> Iterator[str]:
    """A tcp endpoint on 127.0.0.1 that a socket of this test holds bound."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    holder = context.socket(zmq.ROUTER)
    try:
        holder.bind("tcp://127.0.0.1:*")
        yield holder.getsockopt_string(zmq.LAST_ENDPOINT)
    finally:
        holder.close(linger=0)
        context.term()


# --- parameter values a scenario rejects ------------------------------------------------------


def test_a_bot_count_ping_pong_rejects_names_the_scenario_and_its_factory(warband_cli: Cli) -> None:
    result = warband_cli("run", PING_PONG, "--param", "bots=0")
    _assert_one_line_error(result, "scenario 'ping_pong'", "@scenario.actors build()", "got 0")


def test_more_bots_than_skirmish_allows_is_bad_input(warband_cli: Cli) -> None:
    result = warband_cli("run", SKIRMISH, "--param", "bots=13")
    _assert_one_line_error(result, "scenario 'skirmish'", "bots must be 1..12 per team", "got 13")


def test_a_crash_tick_that_is_not_a_number_is_bad_input(warband_cli: Cli) -> None:
    result = warband_cli("run", PING_PONG, "--param", "crash=bot-1@x")
    _assert_one_line_error(result, "crash expects AGENT@TICK", "got 'bot-1@x'")


def test_a_parameter_rejected_in_a_multi_process_run_is_bad_input_too(warband_cli: Cli) -> None:
    result = warband_cli("run", SKIRMISH, "--processes", "--param", "bots=13")
    _assert_one_line_error(result, "scenario 'skirmish'", "got 13")


# --- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_a_tick_timeout_that_is_not_a_positive_number_is_bad_input(
    warband_cli: Cli, value: str
) -> None:
    result = warband_cli("run", PING_PONG, "--tick-timeout", value)
    _assert_one_line_error(result, "--tick-timeout must be a positive number of seconds")


def test_an_agent_checks_its_tick_timeout_too(warband_cli: Cli) -> None:
    result = warband_cli(
        "agent", "--connect", "inproc://x", "--scenario", PING_PONG, "--id", "bot-1",
        "--tick-timeout", "0",
    )  # fmt: skip
    _assert_one_line_error(result, "--tick-timeout")


def test_a_log_directory_that_cannot_be_created_is_bad_input(
    warband_cli: Cli, tmp_path: Path
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    result = warband_cli("run", PING_PONG, "--log", str(a_file / "logs"))
    _assert_one_line_error(result, f"--log '{a_file / 'logs'}' cannot be created")


def test_a_broker_log_directory_that_cannot_be_created_is_bad_input(
    warband_cli: Cli, tmp_path: Path
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    result = warband_cli("broker", "--bind", "inproc://x", "--log", str(a_file))
    _assert_one_line_error(result, f"--log '{a_file}' is a file, not a directory")


# --- endpoints --------------------------------------------------------------------------------


def test_an_endpoint_that_is_not_an_address_is_bad_input(warband_cli: Cli) -> None:
    result = warband_cli("run", PING_PONG, "--endpoint", "localhost:5555")
    _assert_one_line_error(result, "--endpoint 'localhost:5555' cannot be bound")


@pytest.mark.parametrize("processes", [False, True], ids=["one process", "processes"])
def test_an_endpoint_whose_port_is_in_use_is_bad_input(
    warband_cli: Cli, bound_tcp_endpoint: str, processes: bool
) -> None:
    extra = ["--processes"] if processes else []
    result = warband_cli("run", PING_PONG, "--endpoint", bound_tcp_endpoint, *extra)
    _assert_one_line_error(result, f"--endpoint '{bound_tcp_endpoint}'", "in use")


def test_a_broker_whose_port_is_in_use_says_so_without_a_thread_traceback(
    warband_cli: Cli, bound_tcp_endpoint: str
) -> None:
    result = warband_cli("broker", "--bind", bound_tcp_endpoint)
    _assert_one_line_error(result, f"broker cannot bind '{bound_tcp_endpoint}'", "in use")


def test_a_broker_bind_address_that_is_not_an_address_is_bad_input(warband_cli: Cli) -> None:
    result = warband_cli("broker", "--bind", "nowhere")
    _assert_one_line_error(result, "broker cannot bind 'nowhere'")


# --- trace ------------------------------------------------------------------------------------


def _write_log(tmp_path: Path, *lines: object) -> Path:
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    (log_dir / "bot-1.42.jsonl").write_text(text)
    return log_dir


def test_trace_of_a_json_line_that_is_not_an_event_names_the_file_and_line(
    warband_cli: Cli, tmp_path: Path
) -> None:
    log_dir = _write_log(tmp_path, {"event": "actor.start"}, [1, 2, 3])
    result = warband_cli("trace", str(log_dir))
    _assert_one_line_error(result, "bot-1.42.jsonl:2: a JSON list, not an event object")


def test_trace_of_a_message_event_without_its_ids_names_what_is_missing(
    warband_cli: Cli, tmp_path: Path
) -> None:
    event = {"event": "msg.send", "msg_id": "bot-1:1", "msg_type": "Order", "recipient": "x"}
    log_dir = _write_log(tmp_path, event)
    result = warband_cli("trace", str(log_dir))
    _assert_one_line_error(result, "bot-1.42.jsonl:1:", "needs 'sender' as a string")


def test_trace_of_an_unknown_message_type_lists_the_known_ones(
    warband_cli: Cli, tmp_path: Path
) -> None:
    log_dir = _write_log(tmp_path, {"event": "actor.start"})
    result = warband_cli("trace", str(log_dir), "--type", "Ordr")
    _assert_one_line_error(
        result, "unknown message type 'Ordr'; did you mean 'Order'?", "Order, CompletionReport"
    )


# --- broken scenario files --------------------------------------------------------------------


def test_a_scenario_with_a_syntax_error_names_the_file_and_line(
    warband_cli: Cli, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text('from warband import Scenario\nscenario = Scenario("x"\nx = 1\n')
    result = warband_cli("run", str(broken))
    _assert_one_line_error(result, f"{broken}:2: the scenario does not parse")


def test_a_scenario_that_raises_while_importing_names_the_file_and_line(
    warband_cli: Cli, tmp_path: Path
) -> None:
    broken = tmp_path / "raises.py"
    broken.write_text('from warband import Scenario\n\nscenario = Scenario("x")\nmissing_name\n')
    result = warband_cli("run", str(broken))
    _assert_one_line_error(result, f"{broken}:4:", "NameError", "'missing_name'")


def test_a_scenario_factory_with_a_bug_names_the_file_and_line(
    warband_cli: Cli, tmp_path: Path
) -> None:
    buggy = tmp_path / "buggy.py"
    buggy.write_text(
        "from warband import Scenario\n"
        'scenario = Scenario("buggy")\n'
        "@scenario.actors\n"
        "def build(params, seed):\n"
        "    return 1 / 0\n"
    )
    result = warband_cli("run", str(buggy))
    _assert_one_line_error(
        result, "scenario 'buggy': @scenario.actors build() raised ZeroDivisionError", f"{buggy}:5"
    )


# --- render -----------------------------------------------------------------------------------


def test_render_into_a_missing_directory_is_an_error_not_a_mkdir(
    warband_cli: Cli, tmp_path: Path
) -> None:
    out = tmp_path / "missing" / "map.svg"
    result = warband_cli("render", "test", "--out", str(out))
    _assert_one_line_error(result, f"'{out.parent}' is not an existing directory")
    assert not out.parent.exists()


def test_render_onto_a_file_that_cannot_be_written_is_bad_input(
    warband_cli: Cli, tmp_path: Path
) -> None:
    out = tmp_path / "taken.svg"
    out.mkdir()
    result = warband_cli("render", "test", "--out", str(out))
    _assert_one_line_error(result, f"cannot render to '{out}'")


# --- bench ------------------------------------------------------------------------------------


def test_bench_outside_a_checkout_says_benchmarks_need_one(tmp_path: Path) -> None:
    # A copy of the package without the checkout around it is what `pip install warband` gives.
    shutil.copytree(REPO / "warband", tmp_path / "warband")
    result = subprocess.run(
        [sys.executable, "-m", "warband", "bench", "world"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    _assert_one_line_error(result, "benchmark 'world' needs a source checkout of warband")
