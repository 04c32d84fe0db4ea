"""The message catalog: every message survives the wire, and the wire is plain MessagePack."""

from __future__ import annotations

import msgpack
import pytest

from warband.messaging import catalog as c
from warband.messaging.catalog import AGENT_MESSAGES
from warband.messaging.codec import Codec

SAMPLES: list[c.Message] = [
    c.Order(recipient="bot-1", task="defend", args=["area-4", 3, 1.5, True, None], priority=2),
    c.Order(recipient="bot-1", task="move_to_defend", args=["cp-a"], sequence="squad-1:7"),
    c.WithdrawOrder(recipient="bot-1", order_id="squad-1:7", reason="replanned"),
    c.CompletionReport(recipient="squad-a", task="defend", success=False, reason="blocked"),
    c.ThreatReport(recipient="squad-a", threat="bot-9", position="w12", level=0.7),
    c.StatusReport(recipient="squad-a", status="busy", details={"health": 80, "at": "w3"}),
    c.GoalBias(recipient="bot-1", goal="Patrol", bias=-0.25),
    c.RequestTalk(recipient="prisoner-2", topic="cooperation", conversation="p1:1"),
    c.TalkReply(recipient="prisoner-1", accepted=False, reason="busy"),
    c.RequestCooperation(
        recipient="prisoner-2",
        conditions=[c.WireCondition(key="door_open", subject="cell-1", value=True)],
    ),
    c.CooperationReply(recipient="prisoner-1", accepted=True, cost=3.0),
    c.EndTalk(recipient="prisoner-2", reason="done"),
    c.CooperationResult(recipient="prisoner-1", success=True, conditions=[]),
    c.Heartbeat(recipient="clock", interval=0.5),
    c.Act(recipient="world", verb="move", args={"waypoint": "w7"}),
    c.ActResult(recipient="bot-1", accepted=False, reason="wall in the way"),
    c.Percept(recipient="bot-1", facts=[["at", "bot-1", "w3"]], events=[["death", "bot-7"]]),
    c.Percept(
        recipient="bot-1", facts=[["at", "bot-1", "w4"]], since=3, removed=[["at", "bot-1", "w3"]]
    ),
    c.PerceptRequest(recipient="world"),
    c.Tick(recipient="#ticks", tick=4),
    c.TickDone(recipient="clock", tick=4),
]


def test_samples_cover_every_public_message_type() -> None:
    assert {type(m) for m in SAMPLES} == set(AGENT_MESSAGES)


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
def test_message_round_trips_through_the_codec(message: c.Message) -> None:
    codec = Codec()
    assert message == codec.decode(codec.encode(message))


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
def test_wire_bytes_are_a_plain_messagepack_map_with_a_type_key(message: c.Message) -> None:
    decoded = msgpack.unpackb(Codec().encode(message), raw=False)
    assert type(message).__name__ == decoded["type"]
    assert message.recipient == decoded["recipient"]


def test_a_map_packed_by_the_msgpack_library_decodes_to_the_typed_message() -> None:
    frame = msgpack.packb(
        {
            "type": "Order",
            "sender": "squad-a",
            "recipient": "bot-1",
            "id": "squad-a:7",
            "seq": 7,
            "tick": 3,
            "task": "move_to",
            "args": ["area-2"],
        }
    )
    message = Codec().decode(frame)
    assert (
        c.Order(
            sender="squad-a",
            recipient="bot-1",
            id="squad-a:7",
            seq=7,
            tick=3,
            task="move_to",
            args=["area-2"],
        )
        == message
    )
