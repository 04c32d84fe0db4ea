"""Delta percepts: an agent's memory fed deltas holds exactly what full percepts would give it,
and a lost delta is healed by the next full percept."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.agents import Agent, Role
from warband.agents.memory import Memory, PerceptFeed
from warband.messaging import Actor, Message, Percept, handles
from warband.messaging.codec import Codec
from warband.planning import parse_domain
from warband.testing import run_actors
from warband.values import Fact, Value, fact_key
from warband.world import PerceptDeltas, World, load_map, waypoint_path

CODEC = Codec()
TEST_MAP = load_map("test")

# Values that Python's equality mixes up (1, 1.0, True; 0, 0.0, False) and a list, so the
# deltas are checked where a planner's equality and the wire's differ.
VALUES = st.sampled_from([1, 1.0, True, 0, 0.0, False, 2.5, "w1", "w2", None, ("a", "b")])
FACTS = st.builds(
    lambda name, args: (name, *args),
    st.sampled_from(["at", "sees", "health"]),
    st.lists(VALUES, max_size=2),
)
STEPS = st.lists(
    st.tuples(
        st.lists(FACTS, max_size=8),
        st.sampled_from(["deliver", "deliver", "deliver", "lose", "ask"]),
    ),
    min_size=1,
    max_size=14,
)


def _wire(message: Message) -> Percept:
    """``message`` as its receiver decodes it from real MessagePack bytes."""
    decoded = CODEC.decode(CODEC.encode(message))
    assert isinstance(decoded, Percept)
    return decoded


def _exactly(facts: Sequence[Fact]) -> bytes:
    """Facts in their order, byte for byte as on the wire (1, 1.0 and True apart)."""
    return msgspec.msgpack.encode(list(facts))


def _keys(facts: Sequence[Fact]) -> set[Fact]:
    return {fact_key(fact) for fact in facts}


@settings(max_examples=300, deadline=None)
@given(steps=STEPS, full_every=st.integers(1, 6))
def test_a_memory_fed_deltas_holds_what_full_percepts_give_and_heals_after_a_loss(
    steps: list[tuple[list[tuple[Value, ...]], str]], full_every: int
) -> None:
    deltas = PerceptDeltas(full_every)
    fed, reference = Memory(), Memory()
    feed = PerceptFeed(fed)
    healing = False  # a percept was lost: no promise until the next full percept
    asked_in_gap = lost = False
    for tick, (facts, what) in enumerate(steps):
        given = facts if tick % 2 else [list(f) for f in facts]  # a model may give lists
        change = deltas.next("bot-1", given, tick)
        percept = _wire(
            Percept(
                recipient="bot-1",
                tick=tick,
                facts=[list(f) for f in change.facts],
                since=change.since,
                removed=[list(f) for f in change.removed],
            )
        )
        full = _wire(Percept(recipient="bot-1", tick=tick, facts=[list(f) for f in facts]))
        reference.set_source("percept", full.facts)
        if what == "lose":
            healing = lost = True
            continue
        asked = feed.take(percept.facts, percept.tick, since=percept.since, removed=percept.removed)
        if percept.since is None:
            healing = asked_in_gap = False
        # Asked once per gap (until a full percept is applied: if that one is lost too, the
        # periodic full percept heals), never outside a gap.
        assert asked == (healing and not asked_in_gap)
        asked_in_gap = asked_in_gap or asked
        if what == "ask" or asked:
            deltas.forget("bot-1")  # the world got the PerceptRequest
        if healing:
            assert feed.last_tick is None
            continue
        assert tick == feed.last_tick
        if lost:  # healed: the same facts; their order in the database follows its history
            assert _keys(list(reference.facts)) == _keys(list(fed.facts))
        else:  # never lost: the very same database, order and forms of every fact included
            assert _exactly(list(reference.facts)) == _exactly(list(fed.facts))
        assert _keys(reference.source("percept")) == _keys(fed.source("percept"))


def test_a_delta_that_does_not_follow_is_not_applied_and_asks_once_for_a_full_percept() -> None:
    memory = Memory()
    feed = PerceptFeed(memory)
    assert not feed.take([("at", "bot-1", "w1"), ("health", 100)], 4)
    assert not feed.take([("at", "bot-1", "w2")], 5, since=4, removed=[("at", "bot-1", "w1")])
    # The percept of tick 6 was lost: those of 7 and 8 do not follow 5.
    assert feed.take([("health", 90)], 7, since=6, removed=[("health", 100)])
    assert not feed.take([("health", 80)], 8, since=7, removed=[("health", 90)])
    assert 2 == feed.gaps
    assert {("at", "bot-1", "w2"), ("health", 100)} == set(memory.source("percept"))
    assert not feed.take([("at", "bot-1", "w3"), ("health", 80)], 9)
    assert {("at", "bot-1", "w3"), ("health", 80)} == set(memory.facts)
    assert 9 == feed.last_tick


def test_the_world_sends_full_percepts_on_join_every_n_ticks_and_after_forget() -> None:
    deltas = PerceptDeltas(full_every=4)
    kinds = []
    for tick in range(12):
        if tick == 6:
            deltas.forget("bot-1")
        facts = [("tick", tick), ("self", "bot-1"), ("at", "bot-1", "w1"), ("health", 100)]
        kinds.append(deltas.next("bot-1", facts, tick).since is None)
    full_ticks = [tick for tick, full in enumerate(kinds) if full]
    assert 0 == full_ticks[0]  # the first one: nothing to follow
    assert 6 in full_ticks  # after forget
    assert len(full_ticks) < len(kinds) / 2  # the others are deltas
    assert len(full_ticks) >= 4  # 0, 6, and at least one in every 4 ticks:
    assert all(b - a <= 4 for a, b in itertools.pairwise([*full_ticks, 12]))


def test_a_percept_whose_facts_nearly_all_changed_goes_full_as_it_is_smaller() -> None:
    deltas = PerceptDeltas(full_every=1000)
    deltas.next("bot-1", [("tick", 1), ("sees", "bot-2", 3.5), ("at", "bot-1", "w1")], 1)
    change = deltas.next("bot-1", [("tick", 2), ("sees", "bot-2", 3.0), ("at", "bot-1", "w1")], 2)
    assert change.since is None  # 4 facts as a delta (2 removed, 2 added), 3 in full
    assert [("tick", 2), ("sees", "bot-2", 3.0), ("at", "bot-1", "w1")] == list(change.facts)
    later = deltas.next("bot-1", [("tick", 3), ("sees", "bot-2", 3.0), ("at", "bot-1", "w1")], 3)
    assert 2 == later.since  # the full one is the base of the next delta


def test_a_delta_names_what_changed_and_the_tick_it_follows() -> None:
    deltas = PerceptDeltas(full_every=1000)
    kept = [("self", "bot-1", "red"), ("at", "bot-1", "w1"), ("health", 100)]
    deltas.next("bot-1", [("tick", 1), *kept, ("armed", True)], 1)
    change = deltas.next("bot-1", [("tick", 2), *kept, ("armed", 1)], 2)
    assert 1 == change.since
    assert [("tick", 2), ("armed", 1)] == list(change.facts)
    assert [("tick", 1), ("armed", True)] == list(change.removed)


WALKER = """
(:domain walker)
(:constant @self)
(:primitive !move ?waypoint)
(:primitive !idle ?ticks)
(:method (behave)
  (:branch "walk to m3" (and (at @self ?here) (?next = (call next_hop ?here m3))) ((!move ?next)))
  (:branch "idle" () ((!idle 1))))
"""


class LosingWalker(Agent):
    """A walker that loses the Percept of one tick on the way, and checks every tick that its
    percept source is what the world's sensors say (the world has not stepped since)."""

    def __init__(self, actor_id: str, world: World, lose: int) -> None:
        functions = {"next_hop": _next_hop}
        super().__init__(actor_id, Role("walker", parse_domain(WALKER, functions=functions)))
        self.truth, self.lose = world, lose
        self.kinds: list[str] = []
        self.stale: list[int] = []

    @handles(Percept)
    def on_percept(self, percept: Percept) -> None:
        self.kinds.append("full" if percept.since is None else "delta")
        if percept.tick != self.lose:
            super().on_percept(percept)

    def on_tick(self, tick: int) -> None:
        if _keys(self.memory.source("percept")) != _keys(self.truth.percepts_for(self.id)):
            self.stale.append(tick)
        super().on_tick(tick)

    def final_state(self) -> dict[str, Any]:
        return {"kinds": self.kinds, "stale": self.stale, "gaps": self._percepts.gaps}


class FullOnly(Actor):
    """An actor that does not say it takes deltas: a learner, an outside client."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.since: list[int | None] = []

    @handles(Percept)
    def on_percept(self, percept: Percept) -> None:
        self.since.append(percept.since)

    def final_state(self) -> dict[str, Any]:
        return {"since": self.since}


def _next_hop(facts: object, here: Value, goal: Value) -> Value:
    path = waypoint_path(TEST_MAP, str(here), str(goal))
    return path[1] if path is not None and len(path) > 1 else None


async def test_over_real_sockets_an_agent_applies_deltas_and_a_lost_one_heals_on_request() -> None:
    world = World.create(
        TEST_MAP,
        seed=1,
        roster={
            "bot-1": {"team": "red", "class": "assault", "start": "r1"},
            "plain": {"team": "blue", "class": "assault", "start": "b1"},
        },
    )
    walker, plain = LosingWalker("bot-1", world, lose=6), FullOnly("plain")
    result = await run_actors([walker, plain], ticks=14, world=world)
    state = result.final_states["bot-1"]
    # Full on join, deltas after; the delta stamped 7 does not follow 5 (6 was lost): the agent
    # asks, and the world's next Percept (stamped 8, handled in tick 9) is full.
    assert ["full"] + ["delta"] * 7 + ["full"] + ["delta"] * 5 == state["kinds"]
    assert 1 == state["gaps"]
    assert [7, 8] == state["stale"]  # the lost one and the one that did not follow
    assert all(since is None for since in result.final_states["plain"]["since"])
    assert 14 == len(result.final_states["plain"]["since"])
