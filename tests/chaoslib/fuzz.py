"""Fault: hostile input (``--fuzz N``). N malformed frames into the codec, then N through a live
``warband broker`` process at an actor process, next to a good client sending numbered
messages: only the codec's own error escapes, both stay up, the good client loses nothing."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import msgspec
import zmq

from tests.chaoslib.faults import rss_kib

from .children import children, role_argv, warband_argv
from .processes import scratch_dir, wait_until
from .result import Result, lost_and_duplicated, progress
from .timing import RATE


def fuzz(count: int) -> Result:
    """``count`` inputs into the codec, then ``count`` frames into a live broker and actor."""
    codec = fuzz_codec(count)
    progress(f"fuzz: codec done ({codec['inputs']:,} inputs in {codec['seconds']} s)")
    live = fuzz_live(count)
    growth = [g for g in live["rss_growth_mb"].values()]
    passed = (
        not codec["escaped"]
        and all(live["alive"].values())
        and live["good_lost"] == 0
        and live["good_duplicated"] == 0
        and all(g is not None and g <= 10 for g in growth)
    )
    return Result(
        "fuzz",
        passed,
        live["good_lost"],
        live["good_duplicated"],
        {
            "codec": codec,
            **{k: v for k, v in live.items() if k not in ("good_lost", "good_duplicated")},
        },
        note="lost/duplicated: the good client's messages next to the fuzzer; rss growth after "
        "the first 5% of the frames",
    )


def fuzz_inputs(
    rng: random.Random, sender: str = "fuzzer", recipient: str = "sink"
) -> Iterator[bytes]:
    """Endless malformed frames: random bytes, valid frames with flipped bytes, truncated or
    spliced, envelopes with values of the wrong type, and random MessagePack values."""
    from warband.messaging import catalog
    from warband.messaging.codec import Codec

    codec = Codec()
    valid = [
        codec.encode(msgspec.structs.replace(message, sender=sender, id=f"{sender}:{n}"))
        for n, message in enumerate(
            [
                catalog.StatusReport(recipient=recipient, status="busy", details={"hp": 3}),
                catalog.Order(recipient=recipient, task="defend", args=["w1", 2]),
                catalog.RequestTalk(recipient=recipient, topic="t", conversation="c1"),
                catalog.Percept(recipient=recipient, facts=[["at", "x", "w1"]]),
                catalog.Tick(recipient=recipient, tick=3),
                catalog._Register(recipient="broker", groups=["g"]),
                catalog._Left(recipient=recipient, agent="clock"),
            ]
        )
    ]
    types = [*catalog.MESSAGE_TYPES, "Ordr", "", "_Nope"]
    oddities: list[Any] = [
        None,
        True,
        -1,
        2**63,
        1.5e308,
        "",
        "x" * 300,
        b"\xff",
        [],
        {},
        [[1]],
        {"a": None},
    ]
    while True:
        kind = rng.randrange(6)
        if kind == 0:
            yield rng.randbytes(rng.randrange(0, 64))
        elif kind == 1:
            flipped = bytearray(rng.choice(valid))
            for _ in range(rng.randrange(1, 4)):
                flipped[rng.randrange(len(flipped))] = rng.randrange(256)
            yield bytes(flipped)
        elif kind == 2:
            frame = rng.choice(valid)
            yield frame[: rng.randrange(len(frame))]
        elif kind == 3:
            frame = rng.choice(valid)
            cut = rng.randrange(len(frame))
            yield frame[:cut] + rng.randbytes(rng.randrange(1, 16)) + frame[cut:]
        elif kind == 4:
            body: dict[str, Any] = {
                "type": rng.choice(types),
                "sender": rng.choice([sender, sender, "bot-2", 7, None]),
                "recipient": rng.choice([recipient, recipient, "broker", "#all", 3, ""]),
                "id": rng.choice([f"{sender}:9", 9, None]),
            }
            for key in rng.sample(
                ["tick", "task", "status", "details", "facts", "seq", "args", "agent", "groups"], 3
            ):
                body[key] = rng.choice(oddities)
            yield msgspec.msgpack.encode(body)
        else:
            yield msgspec.msgpack.encode(rng.choice(oddities))


def fuzz_codec(count: int, seed: int = 11) -> dict[str, Any]:
    """Decode ``count`` malformed frames; count what escapes other than ProtocolError."""
    from warband.exceptions import ProtocolError
    from warband.messaging.codec import Codec

    codec = Codec()
    rng = random.Random(seed)
    inputs = fuzz_inputs(rng)
    rejected = accepted = 0
    escaped: dict[str, int] = {}
    started = time.monotonic()
    for _ in range(count):
        frame = next(inputs)
        try:
            codec.decode(frame)
            accepted += 1
        except ProtocolError:
            rejected += 1
        except Exception as error:
            escaped[type(error).__name__] = escaped.get(type(error).__name__, 0) + 1
    return {
        "inputs": count,
        "rejected": rejected,
        "accepted": accepted,
        "escaped": escaped,
        "seconds": round(time.monotonic() - started, 1),
    }


def fuzz_live(count: int, seed: int = 12, good: int = 2000) -> dict[str, Any]:
    """Send ``count`` malformed frames through a live broker at an actor, next to a good client."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    fuzzer = context.socket(zmq.DEALER)
    fuzzer.setsockopt(zmq.ROUTING_ID, b"fuzzer")
    fuzzer.setsockopt(zmq.LINGER, 0)
    rng = random.Random(seed)
    try:
        with scratch_dir() as tmp, children() as start:
            endpoint = f"ipc://{tmp}/broker.sock"
            broker = start(warband_argv("broker", "--bind", endpoint), "broker")
            wait_until(lambda: (tmp / "broker.sock").exists(), 30)
            sink = start(role_argv("sink", endpoint, 100_000), "sink")
            sink.wait_for("ready", 30)
            fuzzer.connect(endpoint)
            _register(fuzzer)
            source = start(role_argv("source", endpoint, good), "source")
            source.wait_for("ready", 30)
            inputs = fuzz_inputs(rng)
            warm = max(1, count // 20)
            rss: dict[str, float] = {}
            started = time.monotonic()
            for number in range(count):
                fuzzer.send(next(inputs))
                if number % 1000 == 999:
                    _sync(fuzzer)  # the broker has routed all we sent: no queue grows
                if number == warm:
                    rss = {"broker": _rss_mb(broker.process.pid), "sink": _rss_mb(sink.process.pid)}
                if number % 200_000 == 0 and number:
                    progress(f"fuzz: {number:,} frames into the broker")
            seconds = time.monotonic() - started
            # Read every notice the broker and the sink sent back, so what the broker still
            # holds for the fuzzer is not counted as growth.
            _drain(fuzzer, 1000)
            source.wait_for("sent", good / RATE + 60)
            alive = {"broker": broker.process.poll() is None, "sink": sink.process.poll() is None}
            growth = {
                name: round(_rss_mb(child.process.pid) - rss.get(name, 0.0), 1)
                if alive[name]
                else None
                for name, child in (("broker", broker), ("sink", sink))
            }
            _register(fuzzer)  # fuzzed _Leave frames may have unregistered it
            fuzzer.send(_frame("StatusReport", "sink", "fuzzer:end", status="quit"))
            got = sink.wait_for("received", 30)["received"] if alive["sink"] else []
    finally:
        fuzzer.close(linger=0)
        context.term()
    lost, duplicated = lost_and_duplicated(got, good)
    return {
        "frames": count,
        "frames_per_s": round(count / seconds) if seconds else None,
        "alive": alive,
        "rss_growth_mb": growth,
        "good_sent": good,
        "good_lost": lost,
        "good_duplicated": duplicated,
    }


def _rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` (MB); 0 once it has exited (an unreaped child has none)."""
    try:
        return rss_kib(pid) / 1024
    except LookupError:
        return 0.0


def _frame(kind: str, recipient: str, msg_id: str, **fields: Any) -> bytes:
    """A well-formed frame from the fuzzer, written by hand (the fuzzer is no warband actor)."""
    envelope = {"type": kind, "sender": "fuzzer", "recipient": recipient, "id": msg_id}
    return msgspec.msgpack.encode({**envelope, **fields})


def _drain(fuzzer: zmq.Socket[bytes], wait_ms: int) -> None:
    """Read and drop what comes back to the fuzzer until nothing has for ``wait_ms``."""
    while fuzzer.poll(wait_ms):
        while fuzzer.poll(0):
            fuzzer.recv()


def _answer(fuzzer: zmq.Socket[bytes], kind: bytes, what: str) -> None:
    """Read until a frame holding ``kind`` comes; RuntimeError naming ``what`` after 10 s."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if fuzzer.poll(100) and kind in fuzzer.recv():
            return
    raise RuntimeError(f"the broker did not answer the fuzzer's {what} within 10 s")


def _sync(fuzzer: zmq.Socket[bytes]) -> None:
    """Read every answer the fuzz has had so far, then ping the broker and read until its pong:
    the broker has routed all we sent and holds nothing for us (else its queue to us grows)."""
    _drain(fuzzer, 50)
    fuzzer.send(_frame("_Ping", "broker", f"fuzzer:p{time.monotonic_ns()}"))
    _answer(fuzzer, b"_Pong", "_Ping")
    _drain(fuzzer, 0)


def _register(fuzzer: zmq.Socket[bytes]) -> None:
    registration = _frame(
        "_Register", "broker", f"fuzzer:r{time.monotonic_ns()}", groups=[], lockstep=False
    )
    fuzzer.send(registration)
    _answer(fuzzer, b"_Registered", "_Register")
