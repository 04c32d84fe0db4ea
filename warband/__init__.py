"""warband: team AI for games, built from message-passing actors over ZeroMQ.

What a scenario script needs is re-exported here; see the subpackages for the rest:
``warband.messaging`` (actors, messages, transport), ``warband.planning`` (GOAP, HTN),
``warband.world`` (maps and the simulated world), ``warband.agents`` (bot, squad, commander).

Only the exceptions are imported eagerly. Every other name is imported on first use
(PEP 562), because importing a subpackage runs this file first: ``import warband.planning``
must stay pure and fast, without ZeroMQ, asyncio or the scenario runner.
"""

# No `from __future__ import annotations` and only underscored helper imports: every public
# name of this module is an export (tests/test_exports.py checks that nothing else leaks).
import importlib as _importlib
import typing as _typing

from .exceptions import (
    ConfigurationError,
    DeliveryError,
    DomainSyntaxError,
    MapError,
    PlanningError,
    ProtocolError,
    RequestTimeout,
    WarbandError,
)

__version__ = "0.1.0"

if _typing.TYPE_CHECKING:
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
        Message,
        Order,
        Percept,
        PerceptRequest,
        RequestCooperation,
        RequestTalk,
        RunResult,
        StatusReport,
        TalkReply,
        ThreatReport,
        WireCondition,
        WithdrawOrder,
        handles,
        incarnation,
    )
    from .scenario import Outcome, Params, Scenario, load_scenario

_MESSAGING_NAMES = (
    "Act",
    "ActResult",
    "Actor",
    "Clock",
    "CompletionReport",
    "CooperationReply",
    "CooperationResult",
    "EndTalk",
    "GoalBias",
    "Message",
    "Order",
    "Percept",
    "PerceptRequest",
    "RequestCooperation",
    "RequestTalk",
    "RunResult",
    "StatusReport",
    "TalkReply",
    "ThreatReport",
    "WireCondition",
    "WithdrawOrder",
    "handles",
    "incarnation",
)
_SCENARIO_NAMES = ("Outcome", "Params", "Scenario", "load_scenario")

# Which module defines each lazily imported name.
_LAZY: dict[str, str] = {
    **dict.fromkeys(_MESSAGING_NAMES, "warband.messaging"),
    **dict.fromkeys(_SCENARIO_NAMES, "warband.scenario"),
}

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
    "DomainSyntaxError",
    "EndTalk",
    "GoalBias",
    "MapError",
    "Message",
    "Order",
    "Outcome",
    "Params",
    "Percept",
    "PerceptRequest",
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
    "WarbandError",
    "WireCondition",
    "WithdrawOrder",
    "__version__",
    "handles",
    "incarnation",
    "load_scenario",
]


def __getattr__(name: str) -> object:
    """Import a public name from its module the first time it is read, then keep it here."""
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'warband' has no attribute {name!r}")
    value: object = getattr(_importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
