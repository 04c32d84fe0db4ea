"""A run has a membership, and its broker checks it; with a run secret, every id is proven.

The clients are raw pyzmq DEALERs speaking PROTOCOL.md (MessagePack maps); the broker is the
real one on real TCP sockets.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import structlog
import zmq

from warband.messaging.broker import Broker
from warband.messaging.secret import RunSecret, new_secret

Context = zmq.Context[zmq.Socket[bytes]]


@pytest.fixture
def context() -> Iterator[Context]:
    context: Context = zmq.Context()
    yield context
    context.destroy(linger=0)


@contextlib.contextmanager
def serving(context: Context, secret: RunSecret | None = None) -> Iterator[Broker]:
    broker = Broker("tcp://127.0.0.1:*", context=context, secret=secret)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@contextlib.contextmanager
def client(
    context: Context, broker: Broker, agent_id: str, password: bytes | None = None
) -> Iterator[zmq.Socket[bytes]]:
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, agent_id.encode())
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVTIMEO, 10_000)
    if password is not None:
        socket.setsockopt(zmq.PLAIN_USERNAME, agent_id.encode())
        socket.setsockopt(zmq.PLAIN_PASSWORD, password)
    socket.connect(broker.bound_endpoint)
    try:
        yield socket
    finally:
        socket.close(linger=0)


def register(socket: zmq.Socket[bytes], agent_id: str, **fields: Any) -> dict[str, Any]:
    """Send ``_Register`` every second until the broker answers (PROTOCOL.md, sections 1 and
    4: an id whose last connection just closed may not be free yet); return the answer."""
    message = {"type": "_Register", "sender": agent_id, "recipient": "broker"}
    for _ in range(10):
        socket.send(msgpack.packb(message | {"id": f"{agent_id}:c1", "lockstep": False} | fields))
        if socket.poll(1000):
            answer: dict[str, Any] = msgpack.unpackb(socket.recv())
            return answer
    raise AssertionError(f"the broker never answered {agent_id}'s _Register")


def leave(socket: zmq.Socket[bytes], agent_id: str) -> None:
    message = {"type": "_Leave", "sender": agent_id, "recipient": "broker", "id": f"{agent_id}:c9"}
    socket.send(msgpack.packb(message | {"reason": "run complete"}))


MEMBERS = ["bot-1", "bot-2", "clock"]


def test_once_the_clock_declared_its_run_only_its_members_register(context: Context) -> None:
    with (
        serving(context) as broker,
        client(context, broker, "clock") as clock,
        client(context, broker, "bot-1") as member,
        client(context, broker, "rogue8") as stranger,
    ):
        declared = register(clock, "clock", members=MEMBERS, run="r1")
        joined = register(member, "bot-1")
        refused = register(stranger, "rogue8", groups=["ticks"])
        stranger.send(msgpack.packb({"type": "_Ready", "sender": "rogue8", "recipient": "clock"}))
        after = msgpack.unpackb(stranger.recv())
    assert ("_Registered", "_Registered") == (declared["type"], joined["type"])
    assert "_Undeliverable" == refused["type"]
    assert ("_Register", "rogue8:c1") == (refused["message_type"], refused["message_id"])
    assert refused["reason"].startswith("rejected by broker: 'rogue8' is not a participant")
    assert "bot-1, bot-2, clock" in refused["reason"]
    assert "you have not registered" in after["reason"]


def test_a_stranger_registered_before_the_clock_is_refused_when_the_clock_declares_its_run(
    context: Context,
) -> None:
    with (
        serving(context) as broker,
        client(context, broker, "rogue8") as stranger,
        client(context, broker, "clock") as clock,
    ):
        assert "_Registered" == register(stranger, "rogue8")["type"]
        assert "_Registered" == register(clock, "clock", members=MEMBERS)["type"]
        notice = msgpack.unpackb(stranger.recv())
    assert ("_Undeliverable", "_Register") == (notice["type"], notice["message_type"])
    assert "'rogue8' is not a participant" in notice["reason"]


def test_a_second_clock_is_refused_until_the_first_leaves_and_the_next_run_starts_afresh(
    context: Context,
) -> None:
    with serving(context) as broker:
        with (
            client(context, broker, "clock") as first,
            client(context, broker, "world") as second,
        ):
            assert "_Registered" == register(first, "clock", members=MEMBERS, run="r1")["type"]
            refused = register(second, "world", members=["world", "bot-1"], run="r2")
            leave(first, "clock")
        with client(context, broker, "bot-1") as late:
            # Registers for run r1, which is over: told so.
            over = register(late, "bot-1", run="r1", watch=["clock"])
        with (
            client(context, broker, "bot-1") as agent,
            client(context, broker, "clock") as clock,
        ):
            # The next run's agent, registered before its clock: not told that the last run's
            # clock left (it would stop at once), then served by the new clock.
            joined = register(agent, "bot-1", watch=["clock"])
            agent.setsockopt(zmq.RCVTIMEO, 300)
            with pytest.raises(zmq.Again):
                agent.recv()
            assert "_Registered" == register(clock, "clock", members=MEMBERS, run="r3")["type"]
    assert "_Undeliverable" == refused["type"]
    assert "this broker serves run 'r1' of the clock 'clock'" in refused["reason"]
    assert "one broker serves one run at a time" in refused["reason"]
    assert ("_Undeliverable", "_Register") == (over["type"], over["message_type"])
    assert "run 'r1' is over" in over["reason"]
    assert "_Registered" == joined["type"]


def test_a_registration_for_another_run_is_refused(context: Context) -> None:
    with (
        serving(context) as broker,
        client(context, broker, "clock") as clock,
        client(context, broker, "bot-1") as agent,
    ):
        register(clock, "clock", members=MEMBERS, run="r1")
        refused = register(agent, "bot-1", run="r0")
    assert "this broker serves run 'r1', not run 'r0'" in refused["reason"]


def test_with_a_run_secret_only_a_connection_with_its_ids_pass_gets_in(context: Context) -> None:
    secret = new_secret()
    other = new_secret()
    with (
        structlog.testing.capture_logs() as logs,
        serving(context, secret) as broker,
        client(context, broker, "bot-1") as plain,
        client(context, broker, "bot-1", other.password("bot-1")) as wrong_secret,
        client(context, broker, "bot-1", secret.password("bot-2")) as wrong_id,
    ):
        for socket in (plain, wrong_secret, wrong_id):
            with contextlib.suppress(zmq.Again):  # no peer to queue for once refused
                socket.send(msgpack.packb({"type": "_Register", "sender": "bot-1"}), zmq.NOBLOCK)
        # None gets in, so none holds the id: the agent with its own pass takes it at once.
        with client(context, broker, "bot-1", secret.password("bot-1")) as agent:
            answer = register(agent, "bot-1")
        unanswered = [s.poll(300) for s in (plain, wrong_secret, wrong_id)]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "broker.auth_refused" not in str(logs):
            time.sleep(0.05)
    assert "_Registered" == answer["type"]
    assert [0, 0, 0] == unanswered
    refused = [e for e in logs if e["event"] == "broker.auth_refused"]
    assert "bot-1" == refused[0]["user"]


def test_a_run_secret_is_refused_on_an_inproc_endpoint() -> None:
    from warband.exceptions import ConfigurationError

    with pytest.raises(ConfigurationError, match="inproc:// never leaves this process"):
        Broker("inproc://x", secret=new_secret())


def test_the_clock_takes_ready_only_from_the_runs_members() -> None:
    from warband.messaging.catalog import _Ready
    from warband.messaging.clock import Clock

    clock = Clock(participants=["bot-1"], ticks=1, outside_participants=["probe"])
    refusals = {
        sender: clock._refusal(_Ready(sender=sender, recipient="clock"))
        for sender in ("bot-1", "probe", "rogue8")
    }
    assert (None, None) == (refusals["bot-1"], refusals["probe"])
    assert "_Ready is taken only from the run's members" in str(refusals["rogue8"])
    assert ["bot-1", "clock", "probe"] == clock._declared_members()


def test_warband_keys_writes_a_run_secret_that_a_broker_and_its_agents_read(
    tmp_path: Path,
) -> None:
    from warband.cli import main
    from warband.messaging.secret import load_secret

    assert 0 == main(["keys", str(tmp_path), "--secret"])
    secret_file = tmp_path / "run.secret"
    assert 0o600 == secret_file.stat().st_mode & 0o777
    secret = load_secret(secret_file)
    assert 64 == len(secret.value)
    assert 2 == main(["keys", str(tmp_path), "--secret"])  # never replaced without --force
    assert secret == load_secret(secret_file)


async def test_an_actor_the_broker_refuses_stops_at_once_with_the_reason(context: Context) -> None:
    import asyncio

    from warband.exceptions import DeliveryError
    from warband.messaging import Actor

    with serving(context) as broker, client(context, broker, "clock") as clock:
        register(clock, "clock", members=MEMBERS, run="r1")
        outsider = Actor("rogue8")
        run = outsider.run(broker.bound_endpoint, context=context, register_timeout=60)
        # At once: not after the 60 s it would otherwise ask again for.
        with pytest.raises(DeliveryError) as refused:
            await asyncio.wait_for(run, timeout=30)
    assert (
        "rogue8: the broker refused to register it: 'rogue8' is not a participant of run 'r1'"
        in str(refused.value)
    )


def test_a_missing_secret_file_or_a_secret_next_to_curve_keys_is_refused_before_any_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from warband.cli import main

    missing = tmp_path / "run.secret"
    assert 2 == main(["broker", "--bind", "tcp://127.0.0.1:*", "--secret", str(missing)])
    assert f"cannot read the run secret file {missing}" in capsys.readouterr().err
    argv = ["--curve", str(tmp_path), "--secret", str(missing)]
    assert 2 == main(["broker", "--bind", "tcp://127.0.0.1:*", *argv])
    assert "--curve and --secret both prove who connects" in capsys.readouterr().err
