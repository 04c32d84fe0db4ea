"""Roles are data for GOAP too: per-agent components (hooks, message handlers, final state), a
decider factory, and a default GOAP projection that works in a world with Percept facts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from structlog.testing import capture_logs

from warband.agents import (
    Agent,
    Component,
    Conversation,
    Decider,
    GoapDecider,
    Role,
    cooperative_role,
)
from warband.agents.command import Commanding, command_task
from warband.agents.execute import TaskStatus
from warband.exceptions import ConfigurationError
from warband.messaging import Actor, StatusReport, handles
from warband.planning import Action, Brain, Goal, Task
from warband.testing import run_actors
from warband.values import Value
from warband.world import World, load_map

BRAIN = Brain(
    "guard",
    goals=[Goal("Guard", ["guarded == true"], relevancy=0.5)],
    actions=[Action("Guard", effects={"guarded": True})],
)


def _guard(agent: Agent, task: Task) -> TaskStatus:
    agent.memory.remember("guarded", True)
    return "done"


class Tally(Component):
    """Counts ticks and decisions, and the StatusReports its agent receives."""

    def __init__(self) -> None:
        self.ticks = 0
        self.decisions: list[str] = []
        self.statuses: list[str] = []

    def on_tick_end(self, tick: int) -> None:
        self.ticks += 1

    def on_decision(self, decision: Any) -> None:
        self.decisions.append(decision.kind)

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        self.statuses.append(report.status)

    def final_state(self) -> dict[str, Any]:
        return {"ticks": self.ticks, "decisions_seen": self.decisions, "statuses": self.statuses}


class Teller(Actor):
    def on_tick(self, tick: int) -> None:
        if tick == 1:
            self.send(StatusReport(recipient="guard-1", status="hello"))


async def test_each_agent_gets_its_own_component_whose_hooks_and_handlers_run() -> None:
    role = Role("guard", BRAIN, tasks={"Guard": _guard}, components=[Tally])
    first, second = Agent("guard-1", role), Agent("guard-2", role)
    assert first.component(Tally) is not second.component(Tally)
    result = await run_actors([first, second, Teller("teller")], ticks=4)
    one, two = result.final_states["guard-1"], result.final_states["guard-2"]
    assert 4 == one["ticks"] == two["ticks"]
    assert "new" == one["decisions_seen"][0]
    assert ["hello"] == one["statuses"]  # after the agent's own StatusReport handler
    assert [] == two["statuses"]
    assert "hello" == first.status_reports["teller"].status


def test_a_task_that_needs_a_component_its_role_lacks_fails_saying_so() -> None:
    agent = Agent("guard-1", Role("guard", BRAIN, tasks={"Guard": _guard}))
    with pytest.raises(ConfigurationError, match=r"role 'guard' has no Tally component"):
        agent.component(Tally)
    run = command_task("Assault")
    assert "failed" == run(agent, Task("OrderAssault"))
    assert "has no Commanding component" in agent.task_failure
    leader = Agent("c", Role("c", BRAIN, tasks={"Guard": _guard}, components=[Commanding]))
    assert isinstance(leader.component(Commanding), Commanding)


def test_a_role_takes_any_decider_factory() -> None:
    made: list[Mapping[str, Value]] = []

    def make(role: Role, constants: Mapping[str, Value]) -> Decider:
        made.append(constants)
        assert isinstance(role.domain, Brain)
        return GoapDecider(role.domain, max_expansions=7)

    agent = Agent("guard-1", Role("guard", BRAIN, tasks={"Guard": _guard}, make_decider=make))
    assert isinstance(agent.decider, GoapDecider) and 7 == agent.decider.max_expansions
    assert [{"self": "guard-1", "team": ""}] == made


def test_a_cooperative_role_carries_its_conversation_settings_per_role() -> None:
    tasks = {"Guard": _guard}
    busy = Agent("bob", cooperative_role("helper", BRAIN, tasks, busy=True, acquaintances=["a"]))
    assert busy.component(Conversation).busy
    assert ["a"] == busy.component(Conversation).known
    with pytest.raises(ConfigurationError, match="talk_timeout and wait_timeout"):
        cooperative_role("helper", BRAIN, tasks, talk_timeout=0)


async def test_the_default_goap_projection_skips_facts_without_one_with_one_warning() -> None:
    world = World.create(
        load_map("test"),
        seed=1,
        roster={"guard-1": {"team": "red", "class": "assault", "start": "c"}},
    )
    agent = Agent("guard-1", Role("guard", BRAIN, tasks={"Guard": _guard}), team="red")
    with capture_logs() as logs:
        result = await run_actors([agent], ticks=5, world=world)
    assert result.clean
    warnings = [e for e in logs if e.get("event") == "goap.unprojected"]
    assert ["position"] == [e["fact"] for e in warnings]  # once, not at every tick
    assert "goal:Guard" in [label for _, _, label, _ in agent.recent_decisions]
