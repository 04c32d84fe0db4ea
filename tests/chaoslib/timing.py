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
STUCK_AT_MOST_S = 30.0
"""The longest a stuck bot stays stuck: BLACKHOLE_S, and past that only until the broker has
flagged it. The broker takes the time it did not run itself off a peer's silence
(``Broker._forgive_own_stall``), so on a machine busy enough to starve it, flagging takes more
than BLACKHOLE_S of wall time; a bot woken before that would show only that the machine was
busy, not whether a stuck bot is flagged."""


def zmtp_heartbeats(socket: zmq.Socket[bytes], interval_s: float) -> None:
    """ZMTP heartbeats on ``socket`` every ``interval_s``, the peer dead after 3 unanswered: the
    baseline's counterpart of warband's broker pings at the same interval."""
    socket.setsockopt(zmq.HEARTBEAT_IVL, int(interval_s * 1000))
    socket.setsockopt(zmq.HEARTBEAT_TIMEOUT, int(interval_s * 3000))
