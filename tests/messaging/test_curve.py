"""CURVE: only known keys get in, and each key speaks only as its own agent (issue 12, test 10).

The broker is the real one over TCP on 127.0.0.1 with its real ZAP handler; every attacker is a
plain pyzmq DEALER, as a hostile client in any language would be. Each case makes ``TRIES``
attempts and then proves, with a good message sent after them, that no spoofed message reached
anyone.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgpack
import pytest
import structlog
import zmq
from zmq.utils.monitor import recv_monitor_message

from tests.conftest import REPO, CommandResult, last_json_line
from tests.proc import free_tcp_port
from warband.exceptions import ConfigurationError
from warband.messaging.broker import Broker
from warband.messaging.curve import (
    CurveClient,
    check_curve_endpoint,
    load_client,
    load_server,
    make_keys,
)
from warband.messaging.supervisor import BrokerEscalation

Context = zmq.Context[zmq.Socket[bytes]]
Socket = zmq.Socket[bytes]
LogEvents = list[MutableMapping[str, Any]]

TRIES = 1000
"""Attempts per case, as the issue asks; all six cases together take a few seconds."""

_SUCCEEDED = int(zmq.EVENT_HANDSHAKE_SUCCEEDED)
_FAILED = {
    int(zmq.EVENT_HANDSHAKE_FAILED_AUTH): "auth",
    int(zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL): "protocol",
    int(zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL): "no detail",
}


def frame(kind: str, sender: str, recipient: str, label: str, **fields: Any) -> bytes:
    control = kind.startswith("_")
    data: bytes = msgpack.packb(
        {
            "type": kind,
            "sender": sender,
            "recipient": recipient,
            "id": f"{sender}:c-{label}" if control else f"{sender}:{label}",
            "seq": 0,
            **fields,
        }
    )
    return data


def order(sender: str, recipient: str, label: str) -> bytes:
    return frame("Order", sender, recipient, label, task=label)


@pytest.fixture
def context() -> Iterator[Context]:
    context: Context = zmq.Context()
    yield context
    context.term()


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    directory = tmp_path / "keys"
    make_keys(directory, ["bot-1", "bot-2", "bot-3"])
    return directory


@contextmanager
def curve_broker(context: Context, keys: Path) -> Iterator[Broker]:
    broker = Broker("tcp://127.0.0.1:*", context=context, curve=load_server(keys))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@contextmanager
def dealer(context: Context, routing_id: str, curve: CurveClient | None = None) -> Iterator[Socket]:
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, routing_id.encode())
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVTIMEO, 30_000)  # a deadline for a broken test, not a timing: load
    if curve is not None:
        curve.apply(socket)
    try:
        yield socket
    finally:
        socket.close(linger=0)


@contextmanager
def agent(context: Context, broker: Broker, keys: Path, agent_id: str) -> Iterator[Socket]:
    """A connected, registered honest agent with its own key."""
    with dealer(context, agent_id, load_client(keys, agent_id)) as socket:
        socket.connect(broker.bound_endpoint)
        register = frame("_Register", agent_id, "broker", "register", lockstep=False)
        deadline = time.monotonic() + 30  # a deadline for a broken test, not a timing: load
        # Asked again every second, as an Actor does (Actor._register): right after a squatter
        # on this id, the broker may still hold the squatter's connection, and ZeroMQ drops
        # what comes on the second connection with that id until the broker closes it (after
        # its first_frame_timeout) and ours reconnects. A busy machine widens that window.
        socket.send(register)
        while not socket.poll(1000):
            assert time.monotonic() < deadline, f"the broker never registered {agent_id}"
            socket.send(register)
        answer = msgpack.unpackb(socket.recv())
        assert "_Registered" == answer["type"], answer
        yield socket


class Attempts:
    """Connects one socket again and again, reporting how each handshake ended."""

    def __init__(self, socket: Socket, endpoint: str) -> None:
        self.socket = socket
        self.endpoint = endpoint
        self.outcomes: dict[str, int] = {}
        self._monitor = socket.get_monitor_socket()

    def connect(self) -> str:
        """Connect and wait for the handshake's end: ``succeeded`` or why it failed."""
        self.socket.connect(self.endpoint)
        while True:
            assert self._monitor.poll(10_000), f"no handshake outcome; so far {self.outcomes}"
            event = int(recv_monitor_message(self._monitor)["event"])
            if event == _SUCCEEDED or event in _FAILED:
                outcome = _FAILED.get(event, "succeeded")
                self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
                return outcome

    def wait_closed_by_broker(self) -> None:
        while True:
            assert self._monitor.poll(10_000), "the broker did not close the connection"
            if int(recv_monitor_message(self._monitor)["event"]) == zmq.EVENT_DISCONNECTED:
                return

    def disconnect(self) -> None:
        self.socket.disconnect(self.endpoint)

    def close(self) -> None:
        self.socket.disable_monitor()
        self._monitor.close(linger=0)


@contextmanager
def attempts(socket: Socket, endpoint: str) -> Iterator[Attempts]:
    tries = Attempts(socket, endpoint)
    try:
        yield tries
    finally:
        tries.close()


def received_until(socket: Socket, sentinel: str) -> list[dict[str, Any]]:
    """Every frame ``socket`` receives up to and including the one whose task is ``sentinel``."""
    frames: list[dict[str, Any]] = []
    while not frames or frames[-1].get("task") != sentinel:
        received = msgpack.unpackb(socket.recv())
        if received["type"] != "_Registered":  # a _Register asked again (agent) is answered again
            frames.append(received)
    return frames


def spoofed(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in frames if str(f.get("task", "")).startswith("spoof")]


def events(logs: LogEvents, name: str) -> list[MutableMapping[str, Any]]:
    return [event for event in logs if event["event"] == name]


# --- who gets in ------------------------------------------------------------------------------


def test_a_key_the_broker_does_not_hold_never_completes_a_handshake(
    context: Context, keys: Path
) -> None:
    public, secret = zmq.curve_keypair()
    stranger = CurveClient("bot-1", public, secret, load_server(keys).public_key)
    with (
        structlog.testing.capture_logs() as logs,
        curve_broker(context, keys) as broker,
        agent(context, broker, keys, "bot-2") as victim,
        dealer(context, "bot-1", stranger) as attacker,
        attempts(attacker, broker.bound_endpoint) as tries,
    ):
        for _ in range(TRIES):
            tries.connect()
            tries.disconnect()
        victim.send(order("bot-2", "bot-2", "sentinel"))
        got = received_until(victim, "sentinel")
    assert {"auth": TRIES} == tries.outcomes
    assert [] == spoofed(got)
    refused = events(logs, "broker.key_refused")
    assert TRIES == len(refused)
    assert {(public.decode(), "unknown key")} == {(e["key"], e["reason"]) for e in refused}


def test_with_its_authenticator_stopped_the_broker_refuses_even_known_keys(
    context: Context, keys: Path
) -> None:
    with (
        curve_broker(context, keys) as broker,
        agent(context, broker, keys, "bot-2") as victim,
        dealer(context, "bot-1", load_client(keys, "bot-1")) as attacker,
        attempts(attacker, broker.bound_endpoint) as tries,
    ):
        # ZAP_ENFORCE_DOMAIN is what makes this refuse: libzmq's default lets every key in
        # when no ZAP handler answers.
        assert broker._authenticator is not None
        broker._authenticator.stop()
        for _ in range(TRIES):
            tries.connect()
            tries.disconnect()
        victim.send(order("bot-2", "bot-2", "sentinel"))
        got = received_until(victim, "sentinel")
    assert {"no detail": TRIES} == tries.outcomes
    assert [] == spoofed(got)


@pytest.mark.parametrize("mechanism", ["NULL", "PLAIN"])
def test_clients_without_curve_are_refused(context: Context, keys: Path, mechanism: str) -> None:
    with (
        curve_broker(context, keys) as broker,
        agent(context, broker, keys, "bot-2") as victim,
        dealer(context, "bot-1") as attacker,
        attempts(attacker, broker.bound_endpoint) as tries,
    ):
        if mechanism == "PLAIN":
            attacker.setsockopt(zmq.PLAIN_USERNAME, b"bot-1")
            attacker.setsockopt(zmq.PLAIN_PASSWORD, b"letmein")
        for _ in range(TRIES):
            tries.connect()
            tries.disconnect()
        victim.send(order("bot-2", "bot-2", "sentinel"))
        got = received_until(victim, "sentinel")
    # Every try is refused. libzmq names most of these refusals a protocol error, but a
    # handshake cut short on a loaded machine ends "no detail": how it failed is libzmq's detail.
    assert 0 == tries.outcomes.get("succeeded", 0)
    assert TRIES == sum(tries.outcomes.values())
    assert [] == spoofed(got)


# --- each key speaks only as its agent --------------------------------------------------------


def test_the_bot_1_key_cannot_send_as_bot_2(context: Context, keys: Path) -> None:
    with (
        structlog.testing.capture_logs() as logs,
        curve_broker(context, keys) as broker,
        agent(context, broker, keys, "bot-2") as victim,
        agent(context, broker, keys, "bot-1") as attacker,
    ):
        for number in range(TRIES):
            attacker.send(order("bot-2", "bot-2", f"spoof-{number}"))
        notices = [msgpack.unpackb(attacker.recv()) for _ in range(TRIES)]
        attacker.send(order("bot-1", "bot-2", "sentinel"))
        got = received_until(victim, "sentinel")
        stats = broker.stats
    assert [] == spoofed(got)
    assert {"_Undeliverable"} == {notice["type"] for notice in notices}
    assert "sender field 'bot-2' does not match the connection's id 'bot-1'" in notices[0]["reason"]
    assert TRIES == stats.spoofed
    claims = events(logs, "broker.spoofed")
    assert TRIES == len(claims)
    assert {("bot-1", "bot-2")} == {(e["key"], e["claimed"]) for e in claims}


def test_the_bot_1_key_cannot_take_the_routing_id_of_a_connected_bot_2(
    context: Context, keys: Path
) -> None:
    with (
        curve_broker(context, keys) as broker,
        agent(context, broker, keys, "bot-2") as victim,
        agent(context, broker, keys, "bot-3") as witness,
        dealer(context, "bot-2", load_client(keys, "bot-1")) as attacker,
        attempts(attacker, broker.bound_endpoint) as tries,
    ):
        for number in range(TRIES):
            if tries.connect() == "succeeded":
                attacker.send(order("bot-2", "bot-3", f"spoof-{number}"))
            tries.disconnect()
        # bot-2 keeps its route: what is sent to it still reaches it, and it can still speak.
        witness.send(order("bot-3", "bot-2", "sentinel"))
        at_victim = received_until(victim, "sentinel")
        victim.send(order("bot-2", "bot-3", "sentinel"))
        at_witness = received_until(witness, "sentinel")
    assert [] == spoofed(at_victim)
    assert [] == spoofed(at_witness)
    assert 0 == sum(count for outcome, count in tries.outcomes.items() if outcome != "succeeded")


def test_a_squatter_on_bot_3s_id_is_closed_every_time_and_bot_3_and_bot_1_get_in(
    context: Context, keys: Path
) -> None:
    with (
        structlog.testing.capture_logs() as logs,
        curve_broker(context, keys) as broker,
        agent(context, broker, keys, "bot-2") as victim,
        dealer(context, "bot-3", load_client(keys, "bot-1")) as squatter,
        attempts(squatter, broker.bound_endpoint) as tries,
    ):
        for number in range(TRIES):
            if tries.connect() == "succeeded":
                squatter.send(order("bot-3", "bot-2", f"spoof-{number}"))
                tries.wait_closed_by_broker()
            tries.disconnect()
        with agent(context, broker, keys, "bot-3") as bot_3:
            bot_3.send(order("bot-3", "bot-2", "sentinel"))
            at_victim = received_until(victim, "sentinel")
            victim.send(order("bot-2", "bot-3", "sentinel"))
            at_bot_3 = received_until(bot_3, "sentinel")
        # Issue 25, finding 8: the misused key is not banned; its own agent (restarted, say)
        # still gets in under its own id.
        with agent(context, broker, keys, "bot-1") as bot_1:
            bot_1.send(order("bot-1", "bot-2", "from-bot-1"))
            at_victim += received_until(victim, "from-bot-1")
    assert [] == spoofed(at_victim)
    assert ["sentinel"] == [f["task"] for f in at_bot_3]
    # Let in every time, caught at its first frame and closed (a frame that comes while the
    # broker still holds the previous connection's id is dropped by ZeroMQ before it is read).
    assert {"succeeded": TRIES} == tries.outcomes
    caught = events(logs, "broker.spoofed")
    assert caught
    assert {("bot-1", "bot-3", True)} == {(e["key"], e["claimed"], e["closed"]) for e in caught}
    assert [] == events(logs, "broker.key_refused")


def test_the_supervisor_reports_a_give_up_to_a_curve_broker_with_its_own_key(
    context: Context, keys: Path
) -> None:
    with (
        curve_broker(context, keys) as broker,
        dealer(context, "bot-2", load_client(keys, "bot-2")) as watcher,
    ):
        watcher.connect(broker.bound_endpoint)
        watcher.send(frame("_Register", "bot-2", "broker", "r", lockstep=False, watch=["bot-1"]))
        assert "_Registered" == msgpack.unpackb(watcher.recv())["type"]
        escalation = BrokerEscalation(
            broker.bound_endpoint, context=context, curve=load_client(keys, "supervisor")
        )
        try:
            escalation("bot-1", "gave_up: crashed 3 times")
            notice = msgpack.unpackb(watcher.recv())
        finally:
            escalation.close()
    assert ("_Left", "bot-1") == (notice["type"], notice["agent"])


def test_a_squatter_sending_multipart_frames_is_closed_as_well(
    context: Context, keys: Path
) -> None:
    with (
        structlog.testing.capture_logs() as logs,
        curve_broker(context, keys) as broker,
        dealer(context, "bot-3", load_client(keys, "bot-1")) as squatter,
        attempts(squatter, broker.bound_endpoint) as tries,
    ):
        assert "succeeded" == tries.connect()
        squatter.send_multipart([b"", order("bot-3", "bot-2", "spoof")])
        tries.wait_closed_by_broker()
    [caught] = events(logs, "broker.spoofed")
    assert ("bot-1", "bot-3") == (caught["key"], caught["claimed"])


# --- keys and configuration -------------------------------------------------------------------


def test_keys_are_not_replaced_without_force(tmp_path: Path) -> None:
    directory = tmp_path / "keys"
    written = make_keys(directory, ["bot-1"])
    before = (directory / "bot-1.key_secret").read_bytes()
    with pytest.raises(ConfigurationError, match=r"broker\.key exists already; pass --force"):
        make_keys(directory, ["bot-1"])
    assert before == (directory / "bot-1.key_secret").read_bytes()
    make_keys(directory, ["bot-1"], force=True)
    assert before != (directory / "bot-1.key_secret").read_bytes()
    names = [
        f"{name}.{suffix}"
        for name in ("broker", "supervisor", "bot-1")
        for suffix in ("key", "key_secret")
    ]
    assert names == [path.name for path in written]
    assert 0o600 == (directory / "bot-1.key_secret").stat().st_mode & 0o777


def test_a_missing_key_file_is_named(keys: Path) -> None:
    (keys / "broker.key").unlink()
    with pytest.raises(ConfigurationError, match=r"missing public key file .*broker\.key;"):
        load_client(keys, "bot-1")
    with pytest.raises(ConfigurationError, match=r"missing secret key file .*bot-9\.key_secret"):
        load_client(keys, "bot-9")


@pytest.mark.parametrize("endpoint", ["ipc:///tmp/warband.sock", "inproc://run"])
def test_curve_needs_a_tcp_endpoint(endpoint: str) -> None:
    with pytest.raises(ConfigurationError, match="--curve needs a tcp:// endpoint"):
        check_curve_endpoint(endpoint)


def test_a_curve_broker_refuses_an_inproc_endpoint(keys: Path) -> None:
    with pytest.raises(ConfigurationError, match="--curve needs a tcp:// endpoint"):
        Broker("inproc://curve", curve=load_server(keys))


# --- end to end -------------------------------------------------------------------------------


def test_a_processes_run_with_curve_completes(warband_cli: Any, tmp_path: Path) -> None:
    keydir = tmp_path / "keys"
    made: CommandResult = warband_cli("keys", str(keydir), "--scenario", "scenarios/ping_pong.py")
    assert 0 == made.returncode, made.stderr
    assert "wrote " in made.stdout
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    log_dir = tmp_path / "log"
    result: CommandResult = warband_cli(
        "run", "scenarios/ping_pong.py", "--processes", "--json", "--quiet",
        "--curve", str(keydir), "--endpoint", endpoint, "--log", str(log_dir),
    )  # fmt: skip
    assert 0 == result.returncode, result.stderr
    summary = last_json_line(result.stdout)
    assert (True, 0) == (summary["completed"], summary["messages_rejected"])
    assert "broker.spoofed" not in "".join(p.read_text() for p in log_dir.glob("*.jsonl"))


def test_run_with_curve_refuses_an_ipc_endpoint_before_starting(
    warband_cli: Any, keys: Path
) -> None:
    result: CommandResult = warband_cli(
        "run", "scenarios/ping_pong.py", "--processes", "--curve", str(keys),
        "--endpoint", "ipc:///tmp/warband-curve-test.sock",
    )  # fmt: skip
    assert 2 == result.returncode
    assert "--curve needs a tcp:// endpoint" in result.stderr


def test_run_with_curve_needs_processes(warband_cli: Any, keys: Path) -> None:
    result: CommandResult = warband_cli(
        "run", "scenarios/ping_pong.py", "--curve", str(keys), "--endpoint", "tcp://127.0.0.1:1"
    )
    assert 2 == result.returncode
    assert "--curve protects connections between processes and hosts: add --processes" in (
        result.stderr
    )


def test_the_keys_command_refuses_to_overwrite_and_names_the_file(
    warband_cli: Any, keys: Path
) -> None:
    result: CommandResult = warband_cli("keys", str(keys), "--agents", "bot-1")
    assert 2 == result.returncode
    assert f"{keys / 'broker.key'} exists already; pass --force" in result.stderr


def test_an_agent_without_its_secret_key_is_refused_naming_the_file(
    warband_cli: Any, keys: Path
) -> None:
    result: CommandResult = warband_cli(
        "agent", "--connect", "tcp://127.0.0.1:1", "--scenario", "scenarios/ping_pong.py",
        "--id", "commander", "--curve", str(keys),
    )  # fmt: skip
    assert 2 == result.returncode
    assert f"missing secret key file {keys / 'commander.key_secret'}" in result.stderr


# --- what a refused agent is told (issue 25, finding 8) ----------------------------------------


def _agent_against_a_curve_broker(
    tmp_path: Path, broker_keys: Path, agent_keys: Path
) -> subprocess.CompletedProcess[str]:
    """``warband agent --curve AGENT_KEYS`` against a broker holding BROKER_KEYS; the agent's
    broker timeout is far beyond the test's, so only a refusal it understands ends it."""
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    command = [sys.executable, "-m", "warband"]
    with (tmp_path / "broker.err").open("wb") as err:
        broker = subprocess.Popen(
            [*command, "broker", "--bind", endpoint, "--curve", str(broker_keys)],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        return subprocess.run(
            [*command, "agent", "--connect", endpoint, "--scenario", "scenarios/ping_pong.py",
             "--id", "bot-1", "--curve", str(agent_keys), "--broker-timeout", "600"],
            cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        broker.kill()
        broker.wait(10)


def test_an_agent_whose_key_the_broker_refuses_is_told_so_at_once(
    tmp_path: Path, keys: Path
) -> None:
    # Its own pair and the right broker.key, but the broker holds another bot-1.key.
    theirs = tmp_path / "theirs"
    make_keys(theirs, ["bot-1"])
    mine = tmp_path / "mine"
    mine.mkdir()
    shutil.copy(keys / "broker.key", mine / "broker.key")
    shutil.copy(theirs / "bot-1.key_secret", mine / "bot-1.key_secret")

    result = _agent_against_a_curve_broker(tmp_path, keys, mine)

    assert 1 == result.returncode, result.stderr
    assert "the broker at 'tcp://127.0.0.1:" in result.stderr
    assert "refused this key (ZAP status 400)" in result.stderr
    assert "no broker answered" not in result.stderr
    assert "EAGAIN" not in result.stderr


def test_an_agent_with_another_brokers_key_is_told_the_handshake_failed(
    tmp_path: Path, keys: Path
) -> None:
    other = tmp_path / "other"
    make_keys(other, ["bot-1"])

    result = _agent_against_a_curve_broker(tmp_path, keys, other)

    assert 1 == result.returncode, result.stderr
    assert "the CURVE handshake with 'tcp://127.0.0.1:" in result.stderr
    assert "does not hold the secret key of this broker.key" in result.stderr
    assert "no broker answered" not in result.stderr


@pytest.mark.parametrize("problem", ["missing", "mismatched"])
def test_a_run_whose_key_directory_lacks_an_agents_public_key_is_refused_before_it_starts(
    warband_cli: Any, tmp_path: Path, problem: str
) -> None:
    keydir = tmp_path / "keys"
    make_keys(keydir, ["clock", "commander", "bot-1", "bot-2"])
    if problem == "missing":
        (keydir / "bot-1.key").unlink()
    else:
        other = tmp_path / "other"
        make_keys(other, ["bot-1"])
        shutil.copy(other / "bot-1.key", keydir / "bot-1.key")
    log_dir = tmp_path / "log"
    result: CommandResult = warband_cli(
        "run", "scenarios/ping_pong.py", "--processes", "--curve", str(keydir),
        "--endpoint", f"tcp://127.0.0.1:{free_tcp_port()}", "--log", str(log_dir),
    )  # fmt: skip
    assert 2 == result.returncode, result.stderr
    if problem == "missing":
        assert f"no key file bot-1.key in {keydir}: the broker would refuse 'bot-1'" in (
            result.stderr
        )
    else:
        assert "are not one key pair: the broker would refuse 'bot-1'" in result.stderr
    # Refused before any process started: none of them wrote a log.
    assert [] == sorted(
        p.name for p in log_dir.glob("*.jsonl") if not p.name.startswith("launcher")
    )
