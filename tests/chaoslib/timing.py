"""The rates and intervals the faults, their raw baselines and the child roles share."""

from __future__ import annotations

import zmq

RATE = 100
"""Messages per second each sender sends across the partitioned link."""
BLACKHOLE_S = 3.0
"""How long a fault lasts: a blackhole, a SIGSTOP, a blocked loop."""
PING_S = 0.25
"""Broker ping interval of the partition's actors: ``detected within about 1 s``."""
STUCK_PING_S = 0.5
"""Broker ping interval of the stuck bot and its requester: flagged within 4 of them."""
FAULT_AT_MOST_S = 30.0
"""The longest a stuck bot stays stuck, or a blackhole lasts: BLACKHOLE_S, and past that only
until the fault has been noticed (the broker flagged the bot, the sender lost its broker). Both
take the time they did not run themselves off a peer's silence (``Broker._forgive_own_stall``,
an actor's late ping), so on a machine busy enough to starve them, noticing takes more than
BLACKHOLE_S of wall time; a fault ended before that would show only that the machine was busy,
not whether the fault is noticed."""
STOP_GRACE_S = 5.0
"""How long a receiver goes on receiving once the parent says the senders are done (frames in
flight, resends: a sender's last 3 s)."""


def zmtp_heartbeats(socket: zmq.Socket[bytes], interval_s: float) -> None:
    """ZMTP heartbeats on ``socket`` every ``interval_s``, the peer dead after 3 unanswered: the
    baseline's counterpart of warband's broker pings at the same interval."""
    socket.setsockopt(zmq.HEARTBEAT_IVL, int(interval_s * 1000))
    socket.setsockopt(zmq.HEARTBEAT_TIMEOUT, int(interval_s * 3000))
