"""PROTOCOL.md is enough: a client with only pyzmq and msgpack joins a run and talks."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import zmq

from warband.messaging import Actor, RequestTalk, TalkReply, handles
from warband.testing import running_broker

RAW_CLIENT = Path(__file__).with_name("raw_client.py")


class Listener(Actor):
    """Accepts every RequestTalk."""

    @handles(RequestTalk)
    def on_talk(self, request: RequestTalk) -> None:
        self.reply(request, TalkReply(accepted=True, reason=f"hello {request.sender}"))


async def talk_from_a_raw_client(listener: Actor) -> dict[str, Any]:
    """Run raw_client.py against ``listener``; return the reply it printed."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        with running_broker("tcp://127.0.0.1:*", context=context) as broker:
            task = asyncio.create_task(
                listener.run(broker.bound_endpoint, context=context, mode="realtime")
            )
            try:
                await listener.wait_started()
                client = await asyncio.create_subprocess_exec(
                    sys.executable,
                    str(RAW_CLIENT),
                    broker.bound_endpoint,
                    listener.id,
                    stdout=asyncio.subprocess.PIPE,
                )
                try:
                    stdout, _ = await asyncio.wait_for(client.communicate(), timeout=30)
                finally:
                    if client.returncode is None:
                        client.kill()
                        await client.wait()
            finally:
                listener.stop()
                await asyncio.wait_for(task, timeout=10)
    finally:
        context.term()
    assert client.returncode == 0
    output: dict[str, Any] = json.loads(stdout.decode().strip().splitlines()[-1])
    assert output["warband_imported"] is False
    reply: dict[str, Any] = output["reply"]
    return reply


async def test_a_client_that_imports_nothing_from_warband_gets_its_talk_reply() -> None:
    reply = await talk_from_a_raw_client(Listener("listener"))
    assert (reply["type"], reply["accepted"], reply["reason"]) == ("TalkReply", True, "hello probe")
    assert (
        reply["sender"],
        reply["recipient"],
        reply["reply_to"],
        reply["conversation"],
    ) == ("listener", "probe", "probe:1", "probe:1")


class Deaf(Actor):
    """Has no handler at all."""


async def test_a_talk_nobody_handles_is_refused_not_left_to_time_out() -> None:
    reply = await talk_from_a_raw_client(Deaf("deaf"))
    assert ("TalkReply", False, "not handled") == (
        reply["type"],
        reply["accepted"],
        reply["reason"],
    )
    assert ("probe:1", "probe:1") == (reply["reply_to"], reply["conversation"])
