"""warband: team AI for games, built from message-passing actors over ZeroMQ.

The public API is re-exported here; see the subpackages for the rest:
``warband.messaging`` (actors, messages, transport), ``warband.planning`` (GOAP, HTN),
``warband.world`` (maps and the simulated world), ``warband.agents`` (bot, squad, commander).
"""

from __future__ import annotations

__version__ = "0.1.0"

from .exceptions import (
    ConfigurationError,
    DeliveryError,
    PlanningError,
    ProtocolError,
    RequestTimeout,
    WarbandError,
)
from .messaging import (
    Act,
    Actor,
    ActResult,
    Clock,
    CompletionReport,
    CooperationReply,
    CooperationResult,
    EndTalk,
    GoalBias,
    Heartbeat,
    Message,
    Order,
    Percept,
    RequestCooperation,
    RequestTalk,
    RunResult,
    StatusReport,
    TalkReply,
    ThreatReport,
    Tick,
    TickDone,
    WireCondition,
    handles,
    incarnation,
)
from .scenario import Outcome, Params, Scenario, load_scenario

__all__ = [
    "Act",
    "ActResult",
    "Actor",
    "Clock",
    "CompletionReport",
    "ConfigurationError",
    "CooperationReply",
    "CooperationResult",
    "DeliveryError",
    "EndTalk",
    "GoalBias",
    "Heartbeat",
    "Message",
    "Order",
    "Outcome",
    "Params",
    "Percept",
    "PlanningError",
    "ProtocolError",
    "RequestCooperation",
    "RequestTalk",
    "RequestTimeout",
    "RunResult",
    "Scenario",
    "StatusReport",
    "TalkReply",
    "ThreatReport",
    "Tick",
    "TickDone",
    "WarbandError",
    "WireCondition",
    "__version__",
    "handles",
    "incarnation",
    "load_scenario",
]
