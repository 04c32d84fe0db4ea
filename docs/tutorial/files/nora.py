"""nora: a warband participant written against PROTOCOL.md alone (ZeroMQ and MessagePack, as
any language has them). Usage: python nora.py ENDPOINT SECRET_FILE"""

import hashlib
import hmac
import sys
import time
from pathlib import Path

import msgpack
import zmq

ME = "nora"


def connect(endpoint: str, secret: bytes) -> zmq.Socket:
    socket = zmq.Context.instance().socket(zmq.DEALER)
    socket.setsockopt(zmq.ROUTING_ID, ME.encode())  # section 1: routing id = agent id
    socket.setsockopt(zmq.LINGER, 2000)
    socket.plain_username = ME.encode()  # section 10: PLAIN, password = HMAC(secret, id)
    socket.plain_password = hmac.new(secret, ME.encode(), hashlib.sha256).hexdigest().encode()
    socket.connect(endpoint)
    return socket


def main(endpoint: str, secret_file: str) -> None:
    socket = connect(endpoint, Path(secret_file).read_bytes().strip())
    sent, tick = 0, 0

    def send(kind: str, recipient: str, **fields: object) -> None:
        nonlocal sent
        control = kind.startswith("_")  # control messages are not numbered (section 3)
        sent += 0 if control else 1
        message_id = f"{ME}:c{time.monotonic_ns()}" if control else f"{ME}:{sent}"
        envelope = {"type": kind, "sender": ME, "recipient": recipient, "id": message_id,
                    "seq": 0 if control else sent, "tick": tick}  # fmt: skip
        socket.send(msgpack.packb({**envelope, **fields}))

    send("_Register", "broker", groups=["ticks"])  # section 4
    while True:
        message = msgpack.unpackb(socket.recv())
        kind = message["type"]
        if (kind == "_Registered" and "clock" in message["peers"]) or kind == "_RollCall":
            send("_Ready", "clock")  # section 6: take part in the ticks
        elif kind == "Tick":
            tick = message["tick"]
            send("TickDone", "clock")
        elif kind == "StatusReport":
            print(f"tick {tick}: {message['sender']} says {message['status']!r}")
            send("StatusReport", message["sender"], status="loud and clear", details={})
        elif kind == "_Shutdown":
            send("_Stats", "clock", final_state={})
            break
    socket.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
