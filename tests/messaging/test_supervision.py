"""Supervision with restart intensity: N restarts per period, then the supervisor gives up and
the agent's superior and the clock are told (``gave_up``). Real processes and sockets."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import zmq

from tests.chaoslib.faults import restart_intensity
from warband.messaging.addresses import BROKER_ID, GAVE_UP, SUPERVISOR_ID
from warband.messaging.broker import Broker
from warband.messaging.catalog import _GaveUp, _Left, _Register, _Registered, _Undeliverable
from warband.messaging.codec import Codec
from warband.messaging.secret import new_secret
from warband.messaging.supervisor import BrokerEscalation, Supervisor
from warband.testing import wait_until

CODEC = Codec()
SECRET = new_secret()
"""The run secret of the broker below: 'supervisor' proves itself by it (a launcher's run)."""


def _supervise(supervisor: Supervisor, until: Callable[[], bool], timeout: float) -> None:
    def checked() -> bool:
        supervisor.check()
        return until()

    try:
        wait_until(checked, timeout=timeout, interval=0.02, what="the supervisor's work")
    finally:
        supervisor.stop_all(grace=0.5)


def test_a_process_that_crashes_at_once_is_restarted_exactly_max_restarts_times_then_given_up() -> (
    None
):
    told: list[tuple[str, str]] = []
    supervisor = Supervisor(
        max_restarts=3, restart_period=10.0, on_give_up=lambda n, r: told.append((n, r))
    )
    managed = supervisor.start("bot-1", ["sh", "-c", "exit 3"])
    _supervise(supervisor, lambda: bool(told), timeout=20)

    assert 3 == managed.restarts
    assert 4 == len(managed.pids)
    assert ["bot-1"] == supervisor.gave_up
    assert [("bot-1", "gave_up: exited with code 3 after 3 restarts in 10 s")] == told
    assert managed.finished


def test_a_process_that_crashes_less_often_than_the_period_is_restarted_every_time() -> None:
    # One restart per 0.2 s allowed; each incarnation lives 0.5 s: the old restart has always
    # left the window when the next crash comes, so the supervisor never gives up.
    told: list[str] = []
    supervisor = Supervisor(
        max_restarts=1, restart_period=0.2, on_give_up=lambda n, r: told.append(n)
    )
    managed = supervisor.start("bot-1", ["sh", "-c", "sleep 0.5; exit 1"])
    _supervise(supervisor, lambda: managed.restarts >= 3 or bool(told), timeout=20)

    assert [] == told
    assert 3 <= managed.restarts


def test_a_clean_exit_is_never_restarted_nor_escalated() -> None:
    told: list[str] = []
    supervisor = Supervisor(on_give_up=lambda n, r: told.append(n))
    managed = supervisor.start("bot-1", ["sh", "-c", "exit 0"])
    _supervise(supervisor, lambda: managed.finished, timeout=20)

    assert (0, 0, []) == (managed.restarts, managed.returncode, told)


def test_restart_intensity_must_be_positive() -> None:
    with pytest.raises(Exception, match="--max-restarts 3 --restart-period 10"):
        Supervisor(restart_period=0)


@pytest.fixture
def broker() -> Iterator[Broker]:
    running = Broker("tcp://127.0.0.1:*", secret=SECRET)
    running.start()
    try:
        yield running
    finally:
        running.stop()


def _client(
    context: zmq.Context[zmq.Socket[bytes]], endpoint: str, agent: str, watch: list[str]
) -> zmq.Socket[bytes]:
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, agent.encode())
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.RCVTIMEO, 10_000)
    SECRET.apply_client(socket, agent)
    socket.connect(endpoint)
    register = _Register(sender=agent, recipient=BROKER_ID, id=f"{agent}:c1", watch=watch)
    socket.send(CODEC.encode(register))
    assert isinstance(CODEC.decode(socket.recv()), _Registered)
    return socket


def test_the_broker_reports_an_agent_given_up_on_to_its_watchers_even_if_it_never_registered(
    broker: Broker,
) -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    escalation = BrokerEscalation(broker.bound_endpoint, context=context, secret=SECRET)
    commander = _client(context, broker.bound_endpoint, "commander", ["bot-2"])
    try:
        escalation("bot-2", "gave_up: exited with code 3 after 3 restarts in 10 s")
        notice = CODEC.decode(commander.recv())
        assert isinstance(notice, _Left)
        assert ("bot-2", "gave_up: exited with code 3 after 3 restarts in 10 s") == (
            notice.agent,
            notice.reason,
        )
        # A watcher that registers later is told at once, like for any departure.
        late = _client(context, broker.bound_endpoint, "squad", ["bot-2"])
        notice = CODEC.decode(late.recv())
        assert isinstance(notice, _Left) and notice.reason.startswith(GAVE_UP)
        late.close()
    finally:
        escalation.close()
        commander.close()
        context.term()


def test_only_the_supervisor_may_report_an_agent_given_up_on(broker: Broker) -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    liar = _client(context, broker.bound_endpoint, "bot-1", [])
    victim_watcher = _client(context, broker.bound_endpoint, "commander", ["bot-2"])
    try:
        forged = _GaveUp(sender="bot-1", recipient=BROKER_ID, id="bot-1:c9", agent="bot-2")
        liar.send(CODEC.encode(forged))
        answer = CODEC.decode(liar.recv())
        assert isinstance(answer, _Undeliverable)
        assert f"only {SUPERVISOR_ID!r} may send _GaveUp" in answer.reason
        victim_watcher.setsockopt(zmq.RCVTIMEO, 300)
        with pytest.raises(zmq.Again):
            victim_watcher.recv()
    finally:
        liar.close()
        victim_watcher.close()
        context.term()


def test_a_broker_that_checks_no_proof_of_identity_obeys_no_give_up() -> None:
    # Anyone may connect as 'supervisor' to it (issue 25, finding 2): refused, with the reason.
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    open_broker = Broker("tcp://127.0.0.1:*", context=context)
    open_broker.start()
    liar = context.socket(zmq.DEALER)
    liar.setsockopt(zmq.ROUTING_ID, SUPERVISOR_ID.encode())
    liar.setsockopt(zmq.LINGER, 0)
    liar.setsockopt(zmq.RCVTIMEO, 10_000)
    try:
        liar.connect(open_broker.bound_endpoint)
        liar.send(CODEC.encode(_GaveUp(sender=SUPERVISOR_ID, recipient=BROKER_ID, agent="bot-1")))
        answer = CODEC.decode(liar.recv())
    finally:
        liar.close()
        open_broker.stop()
        context.term()
    assert isinstance(answer, _Undeliverable)
    assert "no connection can prove it is 'supervisor'" in answer.reason


def test_an_agent_that_crashes_at_start_is_restarted_3_times_then_escalated_and_reassigned(
    tmp_path: Path,
) -> None:
    # Issue 12, test 13: Warzone with red's hierarchy, red-2 crashing in on_start (os._exit)
    # in every incarnation, 3 restarts. The harness is tests/chaoslib/faults.py's (`warband
    # bench chaos --only restart-intensity`, at the default 3 restarts per 10 s). Here per
    # 120 s: on a busy machine a restart takes seconds, and 3 of them may not fit in 10 s (the
    # supervisor then rightly keeps restarting). The clock waits for red-2 until it is given
    # up on, however long its restarts take (the run has not started).
    figures = restart_intensity(tmp_path, restart_period=120.0)

    assert 0 == figures["returncode"], figures["stderr"]
    assert 3 == figures["restarts"]
    assert 4 == figures["incarnations"]
    assert figures["departed"].startswith("gave_up: exited with code 3 after 3 restarts")
    assert figures["completed"]
    assert ["red-2"] == figures["gave_up"]
    assert ["red-2"] == figures["told"]
    # Reassigned: the squad red-2 would have joined is led without it to the end.
    assert ["red-1"] == figures["squad_members"]
