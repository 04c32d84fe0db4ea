"""The agent loop on real sockets and a real world: orders go down, acts reach the world,
completion reports come up, and plans are kept, replaced and dropped for the right reasons."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from warband.agents import Agent, Role
from warband.agents.agent import ACT_REFUSED, REFUSAL_MEMORY
from warband.agents.cooperation import world_state
from warband.agents.execute import TaskStatus
from warband.exceptions import ConfigurationError, DomainSyntaxError
from warband.planning import FactDB, Task, WorldState, parse_domain
from warband.testing import run_actors
from warband.values import Fact, Value
from warband.world import World, load_map, waypoint_path

from ..conftest import read_log_events

TEST_MAP = load_map("test")


def next_hop(facts: FactDB, here: Value, goal: Value) -> Value:
    """The waypoint after ``here`` on the way to ``goal`` (None when there is none)."""
    path = waypoint_path(TEST_MAP, str(here), str(goal))
    return path[1] if path is not None and len(path) > 1 else None


BOT_DOMAIN = """
(:domain walker)
(:constant @self)
(:primitive !move ?waypoint)
(:primitive !clear_order)
(:primitive !idle ?ticks)
(:primitive !report ?status ?where)

(:method (behave)
  (:branch "the order is done"
    (and (order ?id ?from goto ?goal) (at @self ?goal))
    ((!report arrived ?goal) (!clear_order)))
  (:branch "walk to the ordered waypoint"
    (and (order ?id ?from goto ?goal) (at @self ?here) (?next = (call next_hop ?here ?goal)))
    ((!move ?next)))
  (:branch "idle"
    ()
    ((!idle 1))))
"""

SQUAD_DOMAIN = """
(:domain squad)
(:fact member ?bot)
(:fact target ?waypoint)
(:fact sent ?bot)
(:primitive !order ?member ?task ?where)
(:primitive !remember ?fact ?member)
(:primitive !idle ?ticks)

(:method (behave)
  (:branch "send the member"
    (and (member ?m) (target ?where) (not (sent ?m)))
    ((!order ?m goto ?where) (!remember sent ?m)))
  (:branch "wait"
    ()
    ((!idle 1))))
"""


def _role(name: str, text: str, **options: Any) -> Role:
    return Role(name, parse_domain(text, functions={"next_hop": next_hop}), **options)


class Inspected(Agent):
    """An agent whose final state also holds some of its facts and its decisions."""

    def final_state(self) -> dict[str, Any]:
        facts = self.memory.facts
        return {
            **super().final_state(),
            "order_ended": [list(f) for f in facts.facts("order_ended")],
            "statuses": [list(f) for f in facts.facts("status")],
            "decisions": [list(d) for d in self.recent_decisions],
        }


def _world(start: str = "r1") -> World:
    return World.create(
        TEST_MAP,
        seed=1,
        roster={"bot-1": {"team": "red", "class": "assault", "start": start}},
    )


async def test_an_order_goes_down_the_bot_walks_and_a_completion_report_comes_up() -> None:
    squad = Inspected(
        "squad-1",
        _role("squad", SQUAD_DOMAIN),
        subordinates=["bot-1"],
        facts=[("member", "bot-1"), ("target", "m3")],
    )
    bot = Inspected("bot-1", _role("bot", BOT_DOMAIN), superior="squad-1", team="red")
    result = await run_actors([squad, bot], ticks=30, world=_world())
    squad_state = result.final_states["squad-1"]
    assert [["order_ended", "bot-1", "goto", "done"]] == squad_state["order_ended"]
    assert 0 == squad_state["orders_open"]
    assert [["status", "bot-1", "arrived", "m3"]] == squad_state["statuses"]
    walking = [d for d in result.final_states["bot-1"]["decisions"] if d[2] == "behave:1"]
    assert walking, result.final_states["bot-1"]["decisions"]
    assert 0 == result.final_states["world"]["acts_rejected"]


async def test_a_plan_whose_act_the_world_refuses_is_dropped_with_the_worlds_reason() -> None:
    stubborn = """
    (:domain stubborn)
    (:fact tried)
    (:primitive !move ?waypoint)
    (:primitive !idle ?ticks)
    (:method (behave)
      (:branch "walk through a wall" (not (tried)) ((!move b2)))
      (:branch "idle" () ((!idle 1))))
    """
    bot = Inspected("bot-1", _role("bot", stubborn), team="red")
    result = await run_actors([bot], ticks=6, world=_world())
    dropped = [d for d in result.final_states["bot-1"]["decisions"] if d[1] == "dropped"]
    assert dropped, result.final_states["bot-1"]["decisions"]
    assert "the world refused (!move b2)" in dropped[0][3]


class FailureNoting(Inspected):
    """An agent that keeps every task failure the loop tells it about."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.failed: list[tuple[str, str]] = []

    def on_task_failed(self, task: Task, reason: str) -> None:
        self.failed.append((str(task), reason))

    def final_state(self) -> dict[str, Any]:
        return {**super().final_state(), "failed": [list(entry) for entry in self.failed]}


async def test_the_agent_is_told_which_task_failed_and_why_before_its_plan_is_dropped() -> None:
    stubborn = """
    (:domain stubborn)
    (:fact tried)
    (:primitive !idle ?ticks)
    (:primitive !move ?waypoint)
    (:method (behave)
      (:branch "wait, then walk through a wall" (not (tried)) ((!idle 1) (!move b2))))
    """
    bot = FailureNoting("bot-1", _role("bot", stubborn), team="red")
    result = await run_actors([bot], ticks=6, world=_world())
    state = result.final_states["bot-1"]
    failed = state["failed"]
    assert failed, state["decisions"]
    assert "(!move b2)" == failed[0][0]
    dropped = [d for d in state["decisions"] if d[1] == "dropped"]
    assert [dropped[0][3]] == [reason for _, reason in failed[:1]]


ALERT_DOMAIN = """
(:domain alert)
(:fact alarm)
(:primitive !idle ?ticks)
(:primitive !log ?text)
(:method (behave)
  (:branch "alarm" (alarm) ((!log alarm) (!idle 5)))
  (:branch "patrol" () ((!idle 5))))
"""


class Alarmed(Inspected):
    """Patrols until it remembers an alarm at tick 3, which a higher branch answers."""

    def on_tick(self, tick: int) -> None:
        if tick == 3:
            self.memory.remember("alarm")
        super().on_tick(tick)


async def test_a_higher_branch_replaces_the_running_plan_and_an_equal_path_keeps_it() -> None:
    bot = Alarmed("bot-1", _role("bot", ALERT_DOMAIN), team="red")
    result = await run_actors([bot], ticks=6)
    kinds = [(d[0], d[1], d[2]) for d in result.final_states["bot-1"]["decisions"]]
    assert (1, "new", "behave:1") == kinds[0]
    assert (2, "kept", "behave:1") == kinds[1]
    assert (3, "replaced", "behave:0") == kinds[2]
    assert (4, "kept", "behave:0") == kinds[3]


async def test_each_tick_logs_the_plan_it_runs_also_after_a_replacement(tmp_path: Path) -> None:
    from warband.messaging.tracing import configure_logging, flush_logging

    configure_logging(tmp_path, "main")
    try:
        await run_actors([Alarmed("bot-1", _role("bot", ALERT_DOMAIN), team="red")], ticks=5)
        flush_logging()
    finally:
        configure_logging(None, "main")
    decisions = [e for e in read_log_events(tmp_path) if e.get("event") == "agent.plan"]
    logged = [(e["tick"], e["decision"], e["plan"]) for e in decisions]
    patrol, alarm = ["(!idle 5)"], ["(!log alarm)", "(!idle 5)"]
    assert [(1, "new", patrol), (2, "kept", patrol), (3, "replaced", alarm)] == logged[:3]
    assert all(plan == alarm for _, _, plan in logged[3:])
    # A decision that is not "kept" carries the memory it saw, facts as JSON arrays.
    assert ["alarm"] in decisions[2]["memory"]["memory"]


def test_a_primitive_nothing_executes_is_refused_when_the_role_is_made() -> None:
    domain = parse_domain('(:primitive !dance) (:method (behave) (:branch "b" () ((!dance))))')
    with pytest.raises(ConfigurationError, match=r"nothing executes: !dance"):
        Role("dancer", domain)


def test_an_act_whose_parameters_do_not_fit_the_verb_names_the_file_and_line(
    tmp_path: Path,
) -> None:
    file = tmp_path / "bot.htn"
    file.write_text(
        "(:domain bot)\n"
        "(:primitive !idle ?ticks)\n"
        "(:primitive !fire ?threat)\n"
        '(:method (behave) (:branch "b" () ((!idle 1))))\n'
    )
    with pytest.raises(
        DomainSyntaxError, match=r"bot\.htn:3:1: primitive !fire .*missing \['target'\]"
    ):
        Role.from_file("bot", file)


async def test_a_squad_learns_that_its_member_left_and_its_open_order_is_lost() -> None:
    class Deserter(Inspected):
        def on_tick(self, tick: int) -> None:
            if tick == 3:
                self.stop("deserting")
                return
            super().on_tick(tick)

    class Squad(Inspected):
        def final_state(self) -> dict[str, Any]:
            departed = [list(f) for f in self.memory.facts.facts("departed")]
            return {**super().final_state(), "departed": departed}

    squad = Squad(
        "squad-1",
        _role("squad", SQUAD_DOMAIN),
        subordinates=["bot-1"],
        facts=[("member", "bot-1"), ("target", "m3")],
    )
    bot = Deserter("bot-1", _role("bot", BOT_DOMAIN), superior="squad-1", team="red")
    result = await run_actors([squad, bot], ticks=8, world=_world())
    state = result.final_states["squad-1"]
    assert [["departed", "bot-1", "left: deserting"]] == state["departed"]
    assert [["order_ended", "bot-1", "goto", "lost"]] == state["order_ended"]
    assert {"bot-1": "left: deserting"} == result.departed


async def test_explain_shows_an_agents_memory_plan_and_tree_at_a_tick_from_the_logs(
    tmp_path: Path,
) -> None:
    from warband.agents.explain import explain
    from warband.messaging.tracing import configure_logging, flush_logging

    configure_logging(tmp_path, "main")
    try:
        squad = Inspected(
            "squad-1",
            _role("squad", SQUAD_DOMAIN),
            subordinates=["bot-1"],
            facts=[("member", "bot-1"), ("target", "m3")],
        )
        bot = Inspected("bot-1", _role("bot", BOT_DOMAIN), superior="squad-1", team="red")
        await run_actors([squad, bot], ticks=12, world=_world())
        flush_logging()
    finally:
        configure_logging(None, "main")
    text = explain(tmp_path, "bot-1", 3).text()
    assert "bot-1 at tick 3" in text
    assert "(!move m1)" in text
    assert "(order squad-1:1 squad-1 goto m3)" in text
    assert "+ walk to the ordered waypoint" in text
    assert "(?next = m1)" in text
    with pytest.raises(ConfigurationError, match=r"no agent\.plan events of agent 'nobody'"):
        explain(tmp_path, "nobody", 3)


async def test_a_search_longer_than_the_budget_spans_ticks_and_finds_the_same_plan() -> None:
    domain = """
    (:domain patient)
    (:primitive !log ?text)
    (:primitive !idle ?ticks)
    (:method (behave) (:branch "count" () ((count 0) (!idle 50))))
    (:method (count ?n)
      (:branch "done" (call ge ?n 30) ((!log ?n)))
      (:branch "more" (?m = (call add ?n 1)) ((count ?m))))
    """

    class Planner(Inspected):
        def final_state(self) -> dict[str, Any]:
            plan = [str(step) for step in self.plan.steps] if self.plan else None
            return {**super().final_state(), "steps": plan}

    quick = Planner("quick", _role("quick", domain, planning_budget=10_000))
    slow = Planner("slow", _role("slow", domain, planning_budget=8))
    result = await run_actors([quick, slow], ticks=12)
    quick_state, slow_state = result.final_states["quick"], result.final_states["slow"]
    assert ["(!log 30)", "(!idle 50)"] == quick_state["steps"] == slow_state["steps"]
    assert 1 == quick_state["decisions"][0][0]
    assert slow_state["decisions"][0][0] > 3  # 60-odd expansions at 8 a tick


class RefusalsSeen(Inspected):
    """An agent whose final state holds, per tick, the ``act_refused`` facts it knew."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refusals: dict[int, list[list[Value]]] = {}

    def on_tick(self, tick: int) -> None:
        super().on_tick(tick)
        self.refusals[tick] = [list(f) for f in self.memory.facts.facts("act_refused")]

    def final_state(self) -> dict[str, Any]:
        return {**super().final_state(), "refusals": self.refusals}


async def test_an_act_the_plan_does_not_wait_for_is_remembered_refused_for_a_while() -> None:
    dasher = """
    (:domain dasher)
    (:fact dashed)
    (:primitive !dash ?waypoint)
    (:primitive !remember ?fact)
    (:primitive !idle ?ticks)
    (:method (behave)
      (:branch "dash far away, once" (not (dashed)) ((!dash b2) (!remember dashed)))
      (:branch "idle" () ((!idle 1))))
    """

    def dash(agent: Agent, task: Task) -> TaskStatus:
        agent.send_act("move", {"waypoint": str(task.args[0])}, about=("b2", "beyond"))
        return "done"

    bot = RefusalsSeen("bot-1", _role("dasher", dasher, tasks={"!dash": dash}), team="red")
    result = await run_actors([bot], ticks=REFUSAL_MEMORY + 3, world=_world())
    seen = result.final_states["bot-1"]["refusals"]
    reason = "b2 is not linked to r1 (move one link at a time)"
    assert [] == seen[1]
    assert [["act_refused", "move", 1, reason, "b2", "beyond"]] == seen[2]
    assert [["act_refused", "move", REFUSAL_MEMORY, reason, "b2", "beyond"]] == seen[
        1 + REFUSAL_MEMORY
    ]
    assert [] == seen[2 + REFUSAL_MEMORY]


def test_a_refused_act_stays_out_of_a_goap_agents_state() -> None:
    at: Fact = ("at", "bot-1", "r1")
    refused: Fact = (ACT_REFUSED, "move", 1, "b2 is not linked to r1", "b2")
    assert WorldState.from_facts([at]) == world_state([at, refused])
