"""PerceptDeltas against the plain definition of its docstring, percept for percept.

The fast paths (each fact encoded once into a list and a set, the bytes-to-fact map built only
for a delta and only when a fact is said twice, a tuple given to several recipients in one tick
encoded and diffed once) must give the same PerceptChange as the plain definition: one dict of
MessagePack bytes to fact per percept, compared whole.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.messaging import Percept
from warband.messaging.codec import Codec
from warband.world import PerceptChange, PerceptDeltas
from warband.world.actor import WorldActor

_encode = msgspec.msgpack.Encoder().encode


class PlainDeltas:
    """The definition: the last percept's facts as one dict of bytes to fact, per recipient
    (PerceptDeltas.next as it was before its fast paths, line for line)."""

    def __init__(self, full_every: int) -> None:
        self.full_every = full_every
        self.last: dict[str, tuple[int, dict[bytes, Any]]] = {}

    def forget(self, recipient: str) -> None:
        self.last.pop(recipient, None)

    def next(self, recipient: str, facts: Sequence[Any], tick: int) -> PerceptChange:
        now = dict(zip(map(_encode, facts), facts, strict=True))
        last = self.last.get(recipient)
        self.last[recipient] = (tick, now)
        phase = zlib.crc32(recipient.encode()) % self.full_every
        if last is None or (tick + phase) % self.full_every == 0:
            return PerceptChange(None, facts)
        since, before = last
        added = [fact for key, fact in now.items() if key not in before]
        removed = [fact for key, fact in before.items() if key not in now]
        if removed:
            added.extend(fact for fact in _plain_alike(removed, facts) if _encode(fact) in before)
        if len(added) + len(removed) >= len(facts):
            return PerceptChange(None, facts)
        return PerceptChange(since, added, removed)


def _plain_alike(removed: list[Any], facts: Sequence[Any]) -> list[Any]:
    """The facts equal to a removed one by Python's equality, as ``_alike`` said it first."""
    try:
        present = set(facts)
        alike = {fact for fact in removed if fact in present}
    except TypeError:
        return [fact for fact in facts if any(list(fact) == list(r) for r in removed)]
    if not alike:
        return []
    return [fact for fact in facts if fact in alike]


# Values Python's equality mixes up (1, 1.0, True; 0, 0.0, -0.0, False), a NaN (equal bytes,
# unequal to itself) and a tuple value; facts as tuples or lists, some with a list inside.
NAN = float("nan")
VALUES = st.sampled_from([1, 1.0, True, 0, 0.0, -0.0, False, NAN, 2.5, "w1", "w2", None, ("a", 1)])
NAMES = st.sampled_from(["at", "sees", "health"])
FACT = st.builds(lambda name, args: (name, *args), NAMES, st.lists(VALUES, max_size=2))
LIST_FACT = st.builds(lambda name, args: [name, *args], NAMES, st.lists(VALUES, max_size=2))
NESTED = st.builds(lambda name, value: (name, [value, "x"]), NAMES, VALUES)
FACTS = st.lists(st.one_of(FACT, FACT, FACT, LIST_FACT, NESTED), max_size=9)
RECIPIENTS = ("bot-1", "bot-2", "cmd-red", "squad-red")

# One tick: each recipient's facts (its own list, its own tuple, or the tick's shared tuple,
# given to several), or forgotten before it.
GIVE = st.sampled_from(["list", "tuple", "shared", "shared", "forget"])
TICK = st.tuples(FACTS, FACTS, st.lists(GIVE, min_size=len(RECIPIENTS), max_size=4))


def _same(fast: PerceptChange, plain: PerceptChange) -> None:
    assert fast.since == plain.since
    # The very facts given or sent (not just equal ones: 1 and 1.0 are equal), in order.
    assert len(fast.facts) == len(plain.facts)
    assert all(a is b for a, b in zip(fast.facts, plain.facts, strict=True))
    assert len(fast.removed) == len(plain.removed)
    assert all(a is b for a, b in zip(fast.removed, plain.removed, strict=True))


@settings(max_examples=400, deadline=None)
@given(ticks=st.lists(TICK, min_size=1, max_size=10), full_every=st.integers(1, 7))
def test_the_deltas_are_those_of_the_plain_definition(
    ticks: list[tuple[list[Any], list[Any], list[str]]], full_every: int
) -> None:
    fast, plain = PerceptDeltas(full_every), PlainDeltas(full_every)
    for tick, (own, common, gives) in enumerate(ticks, start=1):
        shared = tuple(common)
        for recipient, give in zip(RECIPIENTS, gives, strict=True):
            if give == "forget":
                fast.forget(recipient)
                plain.forget(recipient)
                continue
            facts: Sequence[Any] = {"list": list(own), "tuple": tuple(own), "shared": shared}[give]
            _same(fast.next(recipient, facts, tick), plain.next(recipient, facts, tick))


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.tuples(FACTS, st.booleans()), min_size=1, max_size=12))
def test_a_reused_list_does_not_change_the_base_of_the_next_delta(
    steps: list[tuple[list[Any], bool]],
) -> None:
    """A caller may give its facts in one list it clears and fills again every tick."""
    fast, plain = PerceptDeltas(1000), PlainDeltas(1000)
    buffer: list[Any] = []
    for tick, (facts, repeat) in enumerate(steps):
        buffer[:] = facts + facts[:2] if repeat else facts
        _same(fast.next("bot-1", buffer, tick), plain.next("bot-1", buffer, tick))


def test_two_forms_of_one_fact_and_lists_among_them_as_the_plain_definition() -> None:
    """The cases _alike is for, tuples and lists mixed: a form removed while another holds
    (sent again), and a list fact after one alike (a set of the facts could not hold it)."""
    kept = [("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5)]
    steps = [
        [("h", 1), ("h", 1.0), *kept],
        [("h", 1.0), *kept],  # ("h", 1) removed: ("h", 1.0) again
        [("h", True), ("h", 1.0), ["l", [1]], *kept],
        [("h", 1.0), ["l", [1]], *kept],  # alike found, then a list fact
        [["h", 1.0], ("l", (1,)), *kept, ("h", 1)],
        [("h", 1), ("h", 1), *kept],
    ]
    fast, plain = PerceptDeltas(1000), PlainDeltas(1000)
    sent_again = 0
    for tick, facts in enumerate(steps):
        change = fast.next("bot-1", facts, tick)
        _same(change, plain.next("bot-1", facts, tick))
        sent_again += change.since is not None and any(f in facts[:1] for f in change.facts)
    assert sent_again >= 2


def test_nan_facts_are_compared_as_bytes() -> None:
    deltas = PerceptDeltas(1000)
    kept = [("h", 1), ("h", 2), ("h", 3)]
    deltas.next("bot-1", [("x", float("nan")), *kept], 1)
    change = deltas.next("bot-1", [("x", float("nan")), *kept, ("tick", 2)], 2)
    assert 1 == change.since  # a NaN made anew is the same bytes: kept
    assert [("tick", 2)] == list(change.facts)
    assert math.isnan(float("nan"))


class _Model:
    """Two teams' facts for observers without a body, a new list on every call."""

    def __init__(self) -> None:
        self.tick = 0
        self.asked = 0

    def has_agent(self, agent_id: str) -> bool:
        return False

    def team_facts(self, team: str) -> list[tuple[Any, ...]]:
        self.asked += 1
        return [
            ("tick", self.tick),
            ("score", team, self.tick // 3),
            ("captured", "cp-a", "red" if self.tick % 4 < 2 else "blue"),
            ("influence", 1, 0.5, 1.0 if self.tick % 2 else 1),
        ]


def test_observers_of_a_team_get_the_percepts_of_the_plain_path() -> None:
    """Every observer's Percept bytes are those the plain deltas give, one each, with the
    facts as lists (as the world sent them before it passed its tuples as they are)."""
    observers = {"cmd-red": "red", "sq-red-1": "red", "sq-red-2": "red", "cmd-blue": "blue"}
    model = _Model()
    actor = WorldActor(model, participants=list(observers), ticks=20, observers=observers)  # type: ignore[arg-type]
    sent: list[Percept] = []
    actor.send = sent.append  # type: ignore[method-assign, assignment]
    actor._delta_takers = {"cmd-red", "sq-red-1", "cmd-blue"}
    plain = PlainDeltas(50)
    codec = Codec()
    for tick in range(20):
        model.tick = actor.tick = tick
        if tick == 7:
            actor._deltas.forget("sq-red-1")
            plain.forget("sq-red-1")
        sent.clear()
        actor._send_percepts(report=None)
        for percept, agent in zip(sent, sorted(observers), strict=True):
            facts = model.team_facts(observers[agent])
            if agent in actor._delta_takers:
                change = plain.next(agent, facts, tick)
                expected = Percept(
                    recipient=agent,
                    facts=[list(f) for f in change.facts],
                    since=change.since,
                    removed=[list(f) for f in change.removed],
                )
            else:
                expected = Percept(recipient=agent, facts=[list(f) for f in facts])
            assert codec.encode(expected) == codec.encode(percept)
    assert 2 * 20 + 4 * 20 == model.asked  # once per team and tick, then once per check
