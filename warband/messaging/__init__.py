"""Messaging: how actors exist and talk.

What an actor's author needs is exported here: the :class:`Actor` base and :func:`handles`,
every message of the catalog, the :class:`Clock` and its :class:`RunResult`,
:func:`incarnation` (which restart of a supervised process this is) and
:func:`configure_logging` (trace logs for actors run outside the ``warband`` command).

The runtime's plumbing stays in its modules, importable by the CLI, tests and benchmarks
but not part of this surface: ``broker.Broker``, ``codec.Codec``, ``connection``,
``supervisor.Supervisor``, ``event_loop``, ``trace_view``, the catalog's control messages
(``_Register``, ``_Shutdown``, ...) and ``AGENT_MESSAGES``. The values that messages carry
are defined once in :mod:`warband.values`.
"""

from .actor import Actor as Actor
from .actor import Mode as Mode
from .actor import Timer as Timer
from .actor import handles as handles
from .catalog import Act as Act
from .catalog import ActResult as ActResult
from .catalog import CompletionReport as CompletionReport
from .catalog import CooperationReply as CooperationReply
from .catalog import CooperationResult as CooperationResult
from .catalog import EndTalk as EndTalk
from .catalog import GoalBias as GoalBias
from .catalog import Heartbeat as Heartbeat
from .catalog import Message as Message
from .catalog import Order as Order
from .catalog import Percept as Percept
from .catalog import PerceptRequest as PerceptRequest
from .catalog import RequestCooperation as RequestCooperation
from .catalog import RequestTalk as RequestTalk
from .catalog import StatusReport as StatusReport
from .catalog import TalkReply as TalkReply
from .catalog import ThreatReport as ThreatReport
from .catalog import Tick as Tick
from .catalog import TickDone as TickDone
from .catalog import WireCondition as WireCondition
from .catalog import WithdrawOrder as WithdrawOrder
from .clock import REALTIME_TICK_S as REALTIME_TICK_S
from .clock import Clock as Clock
from .clock import RunResult as RunResult
from .supervisor import incarnation as incarnation
from .tracing import configure_logging as configure_logging

__all__ = [
    "REALTIME_TICK_S",
    "Act",
    "ActResult",
    "Actor",
    "Clock",
    "CompletionReport",
    "CooperationReply",
    "CooperationResult",
    "EndTalk",
    "GoalBias",
    "Heartbeat",
    "Message",
    "Mode",
    "Order",
    "Percept",
    "PerceptRequest",
    "RequestCooperation",
    "RequestTalk",
    "RunResult",
    "StatusReport",
    "TalkReply",
    "ThreatReport",
    "Tick",
    "TickDone",
    "Timer",
    "WireCondition",
    "WithdrawOrder",
    "configure_logging",
    "handles",
    "incarnation",
]
