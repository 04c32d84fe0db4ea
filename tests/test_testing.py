"""warband.testing: driving agents tick by tick without sockets, capturing what a run sends and
logs, and waiting for what happens outside a test."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from warband.agents import Agent, Role
from warband.agents.bot import bot_role
from warband.agents.squad import squad_role
from warband.messaging import Act, Order, Percept, StatusReport
from warband.planning import parse_domain
from warband.testing import Drive, capture_log_events, capture_messages, run_actors, wait_until
from warband.values import Fact
from warband.world import load_map

TEST_MAP = load_map("test")
WARZONE = load_map("warzone")


def _bot_facts(*, enemy_at: str | None = "c", distance: float = 7.07) -> list[Fact]:
    """What the world's percept tells an assault bot at m1 (as World.percepts_for says it)."""
    facts: list[Fact] = [
        ("tick", 0),
        ("self", "bot-1", "red", "assault"),
        ("state", "alive"),
        ("at", "bot-1", "m1"),
        ("position", 10.0, 5.0),
        ("health", 150),
        ("max_health", 150),
        ("weapon", "machine_gun"),
        ("ammo", "machine_gun", 60),
        ("spare_ammo", "machine_gun", 120),
    ]
    if enemy_at is not None:
        facts.append(("sees", "blue-1", enemy_at, distance, "blue"))
    return facts


def _percept(facts: list[Fact]) -> Percept:
    return Percept(recipient="bot-1", facts=[list(f) for f in facts])


def test_a_driven_bot_fires_at_an_enemy_in_sight_and_not_when_none_is() -> None:
    with Drive(Agent("bot-1", bot_role(TEST_MAP), team="red")) as drive:
        sent = drive.tick(_percept(_bot_facts()))
        acts = [m for m in sent if isinstance(m, Act)]
        assert [("fire", {"target": "blue-1"})] == [(a.verb, a.args) for a in acts][:1]
        assert all("world" == a.recipient and 1 == a.tick for a in acts)
        quiet = drive.tick(_percept(_bot_facts(enemy_at=None)))
    assert not [m for m in quiet if isinstance(m, Act) and m.verb == "fire"]
    assert 2 == drive.tick_number


def test_a_driven_squad_orders_its_bot_and_the_bot_hears_it_the_next_tick() -> None:
    squad = Agent("squad-1", squad_role(WARZONE), superior="commander", team="red")
    bot = Agent("red-1", bot_role(WARZONE), superior="squad-1", team="red")
    with Drive(squad, bot, sender="commander") as drive:
        lead = Order(recipient="squad-1", task="lead", args=[("red-1",), 0], sequence="s1")
        attack = Order(recipient="squad-1", task="defend", args=["cp-centre"], sequence="s1")
        drive.tick(lead, attack)
        orders = [m for m in drive.ticks(3) if isinstance(m, Order) and m.recipient == "red-1"]
        assert orders, drive.sent
        assert "squad-1" == orders[0].sender
        held = list(bot.commands)
    assert held and "squad-1" == held[0].sender  # the bot's command queue has the squad's order
    done = [m for m in drive.sent if type(m).__name__ == "CompletionReport"]
    assert ["lead"] == [r.task for r in done if r.recipient == "commander"]


def test_what_a_driven_actor_sends_is_read_back_from_its_messagepack_frame() -> None:
    squad = Agent("squad-1", squad_role(WARZONE), team="red", subordinates=["red-1"])
    with Drive(squad, sender="commander") as drive:
        drive.tick(
            Order(recipient="squad-1", task="lead", args=[("red-1", "red-2"), 0], sequence="s"),
            Order(recipient="squad-1", task="defend", args=["cp-centre"], sequence="s"),
            StatusReport(
                recipient="squad-1",
                sender="red-1",
                status="alive",
                details={"life": "alive", "waypoint": "a3", "health": 100},
            ),
        )
        sent = drive.ticks(2)
    restricts = [m for m in sent if isinstance(m, Order) and m.task == "restrict"]
    assert restricts, sent
    assert isinstance(restricts[0].args[0], tuple)  # a list: an array on the wire, a tuple here


def test_drive_refuses_to_run_inside_a_running_event_loop_with_a_clear_error() -> None:
    async def inside() -> None:
        Drive(Agent("bot-1", Role("idle", parse_domain(_IDLE))))

    with pytest.raises(RuntimeError, match=r"plain code .*run_actors"):
        asyncio.run(inside())


_IDLE = '(:primitive !idle ?t) (:method (behave) (:branch "idle" () ((!idle 1))))'


async def test_capture_messages_and_log_events_hold_what_a_run_sent_and_logged() -> None:
    role = Role("idle", parse_domain(_IDLE))
    with capture_messages() as sent, capture_log_events() as events:
        await run_actors([Agent("a", role), Agent("b", role)], ticks=3)
    assert {"TickDone"} <= {type(m).__name__ for m in sent}
    assert all(not type(m).__name__.startswith("_") for m in sent)
    plans = [e for e in events if e.get("event") == "agent.plan"]
    assert 6 == len(plans)  # each agent logs one decision per tick
    assert {"a", "b"} == {e["agent"] for e in plans}
    assert "new" == plans[0]["decision"]


def test_wait_until_returns_the_value_and_times_out_naming_what_it_waited_for() -> None:
    calls: list[int] = []

    def third_time() -> Any:
        calls.append(1)
        return len(calls) >= 3 and "ready"

    assert "ready" == wait_until(third_time, interval=0.001)
    with pytest.raises(TimeoutError, match=r"the file did not happen within 0\.05 s"):
        wait_until(lambda: False, timeout=0.05, interval=0.01, what="the file")
    assert 3 == len(calls)
