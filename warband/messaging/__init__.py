"""Messaging: how actors exist and talk.

The message catalog and codec, the ZeroMQ broker and connections, the Actor base (mailbox,
timers, request/reply), the clock, the process supervisor, and tracing.
"""

from . import event_loop
from .actor import Actor, ActorStats, Mode, Timer, check_actor_id, check_group_name, handles
from .broker import BROKER_ID, Broker
from .catalog import (
    AGENT_MESSAGES,
    Act,
    ActResult,
    CompletionReport,
    CooperationReply,
    CooperationResult,
    EndTalk,
    Fact,
    GoalBias,
    Heartbeat,
    Message,
    Order,
    Percept,
    RequestCooperation,
    RequestTalk,
    StatusReport,
    TalkReply,
    ThreatReport,
    Tick,
    TickDone,
    Value,
    WireCondition,
)
from .clock import Clock, RunResult
from .codec import Codec
from .supervisor import Supervisor, incarnation

__all__ = [
    "AGENT_MESSAGES",
    "BROKER_ID",
    "Act",
    "ActResult",
    "Actor",
    "ActorStats",
    "Broker",
    "Clock",
    "Codec",
    "CompletionReport",
    "CooperationReply",
    "CooperationResult",
    "EndTalk",
    "Fact",
    "GoalBias",
    "Heartbeat",
    "Message",
    "Mode",
    "Order",
    "Percept",
    "RequestCooperation",
    "RequestTalk",
    "RunResult",
    "StatusReport",
    "Supervisor",
    "TalkReply",
    "ThreatReport",
    "Tick",
    "TickDone",
    "Timer",
    "Value",
    "WireCondition",
    "check_actor_id",
    "check_group_name",
    "event_loop",
    "handles",
    "incarnation",
]
