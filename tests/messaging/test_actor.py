"""The Actor base under a real broker: handlers, request/reply, timeouts, timers, determinism."""

from __future__ import annotations

from typing import Any

import pytest

from warband.exceptions import DeliveryError, RequestTimeout
from warband.messaging import (
    Actor,
    CompletionReport,
    EndTalk,
    Message,
    Order,
    RequestTalk,
    StatusReport,
    TalkReply,
    handles,
)
from warband.testing import ActorFailures, run_actors


class Echo(Actor):
    """Answers every Order with a CompletionReport naming the order's first argument."""

    @handles(Order)
    def on_order(self, order: Order) -> None:
        self.reply(order, CompletionReport(task=order.task, success=True, reason=str(order.args)))


class Asker(Actor):
    """Sends one request at tick 1 to ``target`` and records what happened."""

    def __init__(self, actor_id: str, target: str, timeout: float = 5) -> None:
        super().__init__(actor_id)
        self.target = target
        self.timeout = timeout
        self.outcome: str = "nothing"
        self.answered_at: int | None = None

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            self.start_task(self._ask())

    async def _ask(self) -> None:
        try:
            reply = await self.request(
                Order(recipient=self.target, task="hold", args=["w1"]), timeout=self.timeout
            )
        except RequestTimeout:
            self.outcome = "timeout"
        except DeliveryError as error:
            self.outcome = f"undeliverable: {error}"
        else:
            self.outcome = f"{type(reply).__name__}:{getattr(reply, 'reason', '')}"
        self.answered_at = self.tick

    def final_state(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "answered_at": self.answered_at}


async def test_request_gets_the_reply_two_ticks_later() -> None:
    result = await run_actors([Asker("asker", "echo"), Echo("echo")], ticks=5)
    assert result.final_states["asker"] == {"outcome": "CompletionReport:['w1']", "answered_at": 3}


class Mute(Actor):
    """Receives orders and never answers; records the EndTalk that closes the conversation."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.ended: list[str] = []

    @handles(Order)
    def on_order(self, order: Order) -> None:
        pass

    @handles(EndTalk)
    def on_end(self, end: EndTalk) -> None:
        self.ended.append(
            f"{end.conversation}:{end.reason}:{self.is_closed(end.conversation or '')}"
        )

    def final_state(self) -> dict[str, Any]:
        return {"ended": list(self.ended)}


async def test_timed_out_request_closes_the_conversation_on_both_sides() -> None:
    result = await run_actors([Asker("asker", "mute", timeout=3), Mute("mute")], ticks=8)
    assert result.final_states["asker"] == {"outcome": "timeout", "answered_at": 4}
    assert result.final_states["mute"]["ended"] == ["asker:1:timeout:True"]


async def test_request_to_an_unknown_agent_fails_with_the_brokers_reason() -> None:
    result = await run_actors([Asker("asker", "nobody")], ticks=4)
    outcome = result.final_states["asker"]["outcome"]
    assert outcome.startswith("undeliverable: Order to 'nobody': no agent 'nobody' is connected")


class Fragile(Actor):
    """Raises on the first order it gets, handles the second; counts failures it saw."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.handled: list[str] = []
        self.failures: list[str] = []

    @handles(Order)
    def on_order(self, order: Order) -> None:
        if order.task == "explode":
            raise ValueError("boom")
        self.handled.append(order.task)

    def on_failure(self, error: BaseException, message: Message | None) -> None:
        self.failures.append(f"{type(error).__name__}:{type(message).__name__}")

    def final_state(self) -> dict[str, Any]:
        return {"handled": self.handled, "failures": self.failures}


class Sender(Actor):
    """Sends the given orders to ``target`` at tick 1, in list order."""

    def __init__(self, actor_id: str, target: str, tasks: list[str]) -> None:
        super().__init__(actor_id)
        self.target = target
        self.tasks = tasks

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            for task in self.tasks:
                self.send(Order(recipient=self.target, task=task))


async def test_a_failing_handler_is_reported_and_the_actor_keeps_handling() -> None:
    actors = [Sender("sender", "fragile", ["explode", "hold"]), Fragile("fragile")]
    result = await run_actors(actors, ticks=3, raise_on_failure=False)
    assert result.final_states["fragile"] == {"handled": ["hold"], "failures": ["ValueError:Order"]}
    assert {"fragile": 1} == result.handler_failures
    assert not result.clean


async def test_run_actors_raises_when_a_handler_raised_unless_told_not_to() -> None:
    actors = [Sender("sender", "fragile", ["explode", "hold"]), Fragile("fragile")]
    with pytest.raises(ActorFailures, match="fragile: 1") as caught:
        await run_actors(actors, ticks=3)
    assert {"fragile": 1} == caught.value.result.handler_failures


class Recorder(Actor):
    """Records (tick, sender, task) of every order it handles."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.seen: list[str] = []

    @handles(Order)
    def on_order(self, order: Order) -> None:
        self.seen.append(f"{self.tick}:{order.sender}:{order.task}")

    def final_state(self) -> dict[str, Any]:
        return {"seen": self.seen}


async def test_messages_of_a_tick_are_handled_next_tick_sorted_by_sender_then_sequence() -> None:
    actors = [
        Sender("zulu", "recorder", ["z1", "z2"]),
        Sender("alpha", "recorder", ["a1", "a2", "a3"]),
        Recorder("recorder"),
    ]
    result = await run_actors(actors, ticks=3)
    expected = ["2:alpha:a1", "2:alpha:a2", "2:alpha:a3", "2:zulu:z1", "2:zulu:z2"]
    assert expected == result.final_states["recorder"]["seen"]


class Ticker(Actor):
    """Records the ticks at which its timers fire."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.fired: list[str] = []

    async def on_start(self) -> None:
        self.every(3, lambda: self.fired.append(f"every@{self.tick}"))
        self.call_later(2, lambda: self.fired.append(f"once@{self.tick}"))

    def final_state(self) -> dict[str, Any]:
        return {"fired": self.fired}


async def test_timers_count_ticks_in_lockstep() -> None:
    result = await run_actors([Ticker("ticker")], ticks=7)
    assert result.final_states["ticker"]["fired"] == ["once@2", "every@3", "every@6"]


class Chatty(Actor):
    """Talks to a random peer every tick (seeded) and logs who it heard from."""

    def __init__(self, actor_id: str, peers: list[str], seed: int) -> None:
        super().__init__(actor_id, seed=seed)
        self.peers = peers
        self.heard: list[str] = []

    def on_tick(self, tick: int) -> None:
        peer = self.random.choice(self.peers)
        self.send(StatusReport(recipient=peer, status=f"t{tick}-{self.random.randint(0, 99)}"))
        self.start_task(self._talk(peer))

    async def _talk(self, peer: str) -> None:
        try:
            reply = await self.request(RequestTalk(recipient=peer), timeout=4)
        except RequestTimeout:
            return
        self.heard.append(f"{self.tick}:{reply.sender}")

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        self.heard.append(f"{self.tick}:{report.sender}:{report.status}")

    @handles(RequestTalk)
    def on_talk(self, request: RequestTalk) -> None:
        self.reply(request, TalkReply(accepted=self.random.random() < 0.8))

    def final_state(self) -> dict[str, Any]:
        return {"heard": self.heard}


def _chatty_team(seed: int) -> list[Actor]:
    names = [f"c{i}" for i in range(4)]
    return [Chatty(name, [n for n in names if n != name], seed) for name in names]


async def test_same_seed_gives_the_same_run_and_another_seed_another() -> None:
    first = await run_actors(_chatty_team(seed=7), ticks=12, seed=7)
    second = await run_actors(_chatty_team(seed=7), ticks=12, seed=7)
    third = await run_actors(_chatty_team(seed=8), ticks=12, seed=8)
    assert first.final_states == second.final_states
    assert first.messages_sent == second.messages_sent
    assert first.final_states != third.final_states


class Member(Actor):
    """Counts broadcasts it receives."""

    def __init__(self, actor_id: str, groups: list[str]) -> None:
        super().__init__(actor_id, groups=groups)
        self.got: list[str] = []

    @handles(Order)
    def on_order(self, order: Order) -> None:
        self.got.append(order.task)

    def final_state(self) -> dict[str, Any]:
        return {"got": self.got}


class Shouter(Member):
    def on_tick(self, tick: int) -> None:
        if tick == 1:
            self.broadcast("red", Order(task="regroup"))


async def test_broadcast_reaches_every_member_of_the_group_but_not_the_sender() -> None:
    actors = [
        Shouter("lead", ["red"]),
        Member("r1", ["red"]),
        Member("r2", ["red", "snipers"]),
        Member("b1", ["blue"]),
    ]
    result = await run_actors(actors, ticks=3)
    got = {name: state["got"] for name, state in result.final_states.items() if "got" in state}
    assert got == {"lead": [], "r1": ["regroup"], "r2": ["regroup"], "b1": []}


async def test_realtime_mode_runs_the_same_request_reply() -> None:
    result = await run_actors(
        [Asker("asker", "echo", timeout=5), Echo("echo")], ticks=20, mode="realtime"
    )
    assert result.final_states["asker"]["outcome"] == "CompletionReport:['w1']"


class Wanderer(Member):
    """Moves from area "a1" to area "a2" at tick 2, keeping itself in its area's group."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id, ["a1"])

    def on_tick(self, tick: int) -> None:
        if tick == 2:
            self.leave_group("a1")
            self.join_group("a2")
            self.got.append(f"in {','.join(self.groups)}")


class AreaShouter(Member):
    """Warns everyone nearby, i.e. in area ``area``, on every tick."""

    def __init__(self, actor_id: str, area: str) -> None:
        super().__init__(actor_id, [area])
        self.area = area

    def on_tick(self, tick: int) -> None:
        self.broadcast(self.area, Order(task=f"{self.area}@{tick}"))


async def test_groups_change_at_run_time_so_a_group_can_mean_nearby() -> None:
    actors = [AreaShouter("s1", "a1"), AreaShouter("s2", "a2"), Wanderer("bot")]
    result = await run_actors(actors, ticks=5)
    # Broadcasts of tick N are handled at tick N+1. The bot moves during tick 2, so it hears
    # area a1 up to tick 2's broadcast and area a2 from tick 3's on, in every run.
    assert ["a1@1", "in a2", "a1@2", "a2@3", "a2@4"] == result.final_states["bot"]["got"]


async def test_in_realtime_a_group_change_holds_from_the_brokers_next_frame() -> None:
    actors = [AreaShouter("s1", "a1"), AreaShouter("s2", "a2"), Wanderer("bot")]
    got = (await run_actors(actors, ticks=8, mode="realtime")).final_states["bot"]["got"]
    moved = got.index("in a2")
    assert all(not g.startswith("a2@") for g in got[:moved]), got
    assert any(g.startswith("a2@") for g in got[moved:]), got


def test_a_bad_group_name_is_refused_naming_the_rules() -> None:
    import pytest

    from warband.exceptions import ConfigurationError

    with pytest.raises(ConfigurationError, match="invalid group name '#red'"):
        Member("m", ["#red"])
    with pytest.raises(ConfigurationError, match="'ticks'"):
        Member("m", []).leave_group("ticks")
    with pytest.raises(DeliveryError, match="m is not running"):
        Member("m", []).join_group("red")


class Watcher(Actor):
    """Watches ``leaver`` through the public hooks and notes how it heard it left."""

    def __init__(self) -> None:
        super().__init__("watcher")
        self.heard: list[list[str]] = []

    def watched_peers(self) -> list[str]:
        return ["leaver"]

    def on_peer_left(self, agent: str, reason: str) -> None:
        self.heard.append([agent, reason])

    def final_state(self) -> dict[str, Any]:
        return {"heard": self.heard}


class Leaver(Actor):
    def on_tick(self, tick: int) -> None:
        if tick == 2:
            self.stop("done here")


async def test_an_actor_hears_through_on_peer_left_that_a_peer_it_watches_left() -> None:
    result = await run_actors([Watcher(), Leaver("leaver")], ticks=5)
    assert [["leaver", "left: done here"]] == result.final_states["watcher"]["heard"]
