"""A warband client written from PROTOCOL.md alone: raw pyzmq + msgpack, no warband import.

Usage: python raw_client.py ENDPOINT PEER_ID
Joins the run as ``probe``, sends RequestTalk to PEER_ID, prints the reply as one JSON line.
"""

from __future__ import annotations

import json
import sys

import msgpack
import zmq


def main(endpoint: str, peer: str) -> int:
    context = zmq.Context()
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, b"probe")
    socket.setsockopt(zmq.LINGER, 2000)
    socket.setsockopt(zmq.RCVTIMEO, 10_000)
    socket.connect(endpoint)
    try:
        socket.send(
            msgpack.packb(
                {"type": "_Register", "sender": "probe", "recipient": "broker", "id": "probe:c1"}
            )
        )
        registered = msgpack.unpackb(socket.recv())
        assert registered["type"] == "_Registered", registered
        socket.send(
            msgpack.packb(
                {
                    "type": "RequestTalk",
                    "sender": "probe",
                    "recipient": peer,
                    "id": "probe:1",
                    "seq": 1,
                    "conversation": "probe:1",
                    "topic": "cooperation",
                }
            )
        )
        reply = msgpack.unpackb(socket.recv())
        print(json.dumps({"reply": reply, "warband_imported": "warband" in sys.modules}))
    finally:
        socket.close()
        context.term()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2]))
