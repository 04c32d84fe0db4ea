"""Public names of each package, pinned, so nothing leaks into or vanishes from the API unnoticed.

Changing a package's surface means changing its list here too, on purpose.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

from tests.planning.test_exports import PUBLIC as PLANNING_PUBLIC
from tests.world.test_exports import PUBLIC as WORLD_PUBLIC

MESSAGES = {
    "Act",
    "ActResult",
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
    "StatusReport",
    "TalkReply",
    "ThreatReport",
    "WireCondition",
    "WithdrawOrder",
}
"""The catalog messages agents send and handle (the runtime's own Tick, TickDone and Heartbeat
are not among them)."""

EXCEPTIONS = {
    "ConfigurationError",
    "DeliveryError",
    "DomainSyntaxError",
    "MapError",
    "PlanningError",
    "ProtocolError",
    "RequestTimeout",
    "WarbandError",
}

PUBLIC_NAMES: dict[str, set[str]] = {
    "warband": {
        *MESSAGES,
        *EXCEPTIONS,
        "Actor",
        "Clock",
        "Outcome",
        "Params",
        "RunResult",
        "Scenario",
        "__version__",
        "handles",
        "incarnation",
        "load_scenario",
    },
    "warband.messaging": {
        *MESSAGES,
        "REALTIME_TICK_S",
        "Actor",
        "Clock",
        "Heartbeat",
        "Mode",
        "RunResult",
        "Tick",
        "TickDone",
        "Timer",
        "configure_logging",
        "handles",
        "incarnation",
    },
    # planning and world pin their lists beside their own tests (tests/<package>/test_exports.py)
    "warband.planning": PLANNING_PUBLIC,
    "warband.world": set(WORLD_PUBLIC),
    "warband.agents": {
        "Commander",
        "Commanding",
        "Following",
        "Subordinate",
        "command_task",
        "Character",
        "Recollection",
        "Component",
        "Conversation",
        "Walking",
        "MODE_SOURCES",
        "MapMarkers",
        "check_map",
        "faction_actors",
        "faction_observers",
        "objective_source",
        "round_source",
        "WorkingMemory",
        "character_role",
        "CooperativeAgent",
        "CooperativeDecider",
        "cooperative_role",
        "from_wire",
        "to_wire",
        "Assignment",
        "AssignmentChanges",
        "BotInfo",
        "Objective",
        "ObjectiveKind",
        "SquadAssignment",
        "assign",
        "choose_hiding_spot",
        "ideal_distribution",
        "objectives_for_assassination",
        "objectives_for_body_count",
        "objectives_for_capture_and_hold",
        "objectives_for_search_and_destroy",
        "objectives_for_search_and_retrieve",
        "objectives_for_tsps",
        "BUILTIN_TASKS",
        "ActTask",
        "Agent",
        "AgentPlan",
        "CommandQueue",
        "Daemon",
        "Decider",
        "Decision",
        "DecisionMemo",
        "GoapDecider",
        "HtnDecider",
        "Memory",
        "OrderBook",
        "Role",
        "SharedPlanning",
        "TaskHandler",
        "check_acts",
    },
    "warband.gateway": {
        "DEFAULT_PORT",
        "ClientActor",
        "Gateway",
        "GatewayConfig",
        "JsonCodec",
        "Tokens",
        "load_tokens",
        "serve",
        "write_tokens",
    },
    "warband.env": {
        "GYMNASIUM_ID",
        "OBSERVATION_FIELDS",
        "OBSERVATION_SIZE",
        "SQUAD_ACTION_COUNT",
        "SQUAD_GYMNASIUM_ID",
        "SQUAD_OBSERVATION_FIELDS",
        "SQUAD_OBSERVATION_SIZE",
        "ActionDecoder",
        "MatchConfig",
        "ObservationEncoder",
        "RewardFunction",
        "RewardInput",
        "SquadObservationEncoder",
        "WarzoneEnv",
        "WarzoneParallelEnv",
        "WarzoneSquadEnv",
        "action_count",
        "all_bots",
        "default_reward",
        "squad_places",
    },
}


@pytest.mark.parametrize("package", sorted(PUBLIC_NAMES))
def test_a_package_exports_exactly_its_curated_names(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(PUBLIC_NAMES[package]) == sorted(getattr(module, "__all__", []))


@pytest.mark.parametrize("package", sorted(PUBLIC_NAMES))
def test_every_exported_name_can_be_imported(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in getattr(module, "__all__", []) if not hasattr(module, name)]
    assert [] == missing


@pytest.mark.parametrize("package", sorted(PUBLIC_NAMES))
def test_a_package_has_no_public_name_outside_its_list(package: str) -> None:
    module = importlib.import_module(package)
    exported = getattr(module, "__all__", [])
    # Submodules are attributes of their package once imported; they are not exports.
    leaked = [
        name
        for name in dir(module)
        if not name.startswith("_")
        and name not in exported
        and not isinstance(getattr(module, name), ModuleType)
    ]
    assert [] == leaked


def test_the_root_lists_its_lazy_names_in_dir() -> None:
    import warband

    assert set(warband.__all__) <= set(dir(warband))


def test_the_root_and_messaging_export_the_same_objects() -> None:
    import warband
    import warband.messaging

    shared = set(warband.__all__) & set(warband.messaging.__all__)
    assert [] == [n for n in shared if getattr(warband, n) is not getattr(warband.messaging, n)]
