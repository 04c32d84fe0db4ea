"""Memory by sources, the command queue and the order book: the bookkeeping of the agent loop."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.agents import CommandQueue, Memory, OrderBook
from warband.exceptions import ConfigurationError, WarbandError
from warband.messaging import CompletionReport, Order
from warband.planning import FactDB
from warband.values import check_fact, fact_key, values_equal


def test_a_source_replaces_what_it_said_before_and_memory_lasts() -> None:
    memory = Memory([("home", "r1")])
    memory.set_source("percept", [("at", "bot-1", "w1"), ("sees", "bot-7", "w9", 12.5)])
    memory.set_source("percept", [("at", "bot-1", "w2")])
    assert {("home", "r1"), ("at", "bot-1", "w2")} == set(memory.facts)
    memory.clear_source("percept")
    assert {("home", "r1")} == set(memory.facts)


def test_forget_removes_remembered_facts_by_prefix_with_or_without_a_wildcard() -> None:
    memory = Memory()
    memory.remember("member_status", "bot-1", "go_defend", 3)
    memory.remember("member_status", "bot-2", "idle")
    assert 1 == memory.forget("member_status", "bot-1", "**")
    assert [("member_status", "bot-2", "idle")] == list(memory.source("memory"))
    with pytest.raises(ConfigurationError, match="remember"):
        memory.set_source("memory", [])


def test_true_and_one_stay_two_facts_in_memory() -> None:
    memory = Memory()
    memory.remember("armed", True)
    memory.remember("armed", 1)
    assert 2 == len(memory.source("memory"))
    assert memory.facts.has("armed", True)
    assert memory.facts.has("armed", 1)


def _order(number: int, task: str, sequence: str | None = None) -> Order:
    return Order(recipient="bot-1", sender="squad-1", id=f"squad-1:{number}", task=task,
                 sequence=sequence)  # fmt: skip


def test_a_new_order_overwrites_the_queue_unless_it_continues_the_sequence() -> None:
    queue = CommandQueue()
    assert [] == queue.receive(_order(1, "patrol"))
    overwritten = queue.receive(_order(2, "move_to_defend", "seq-1"))
    assert ["patrol"] == [o.task for o in overwritten]
    assert [] == queue.receive(_order(3, "defend_marker", "seq-1"))
    assert ["move_to_defend", "defend_marker"] == [o.task for o in queue]
    assert [
        ("order", "squad-1:2", "squad-1", "move_to_defend"),
        ("queued_order", 1, "squad-1:3", "defend_marker"),
    ] == queue.facts()
    popped = queue.pop()
    assert popped is not None and "move_to_defend" == popped.task
    assert "defend_marker" == (queue.current.task if queue.current else None)


def test_a_withdrawn_order_leaves_the_queue_wherever_it_is() -> None:
    queue = CommandQueue()
    queue.receive(_order(1, "a", "s"))
    queue.receive(_order(2, "b", "s"))
    assert queue.withdraw("squad-1:2") is not None
    assert queue.withdraw("squad-1:9") is None
    assert ["a"] == [o.task for o in queue]


def test_every_order_in_the_book_ends_once_reported_withdrawn_or_lost() -> None:
    book = OrderBook()
    for number in (1, 2, 3):
        book.issued(_order(number, f"t{number}"), tick=1)
    report = CompletionReport(reply_to="squad-1:1", task="t1", success=False, reason="dead end")
    entry = book.reported(report, tick=4)
    assert entry is not None and ("failed", "dead end") == (entry.state, entry.reason)
    assert book.reported(report, tick=5) is None  # a second report on a closed order
    assert book.withdrawn("squad-1:2", "replanned", tick=5) is not None
    assert ["squad-1:3"] == [e.order.id for e in book.lost("bot-1", "left", tick=6)]
    assert [] == book.open()
    assert [("order_ended", "bot-1", "t3", "lost")] == book.facts()


def _plain_facts(book: OrderBook) -> list[Any]:
    """The order book's facts by their definition, from every order it holds."""
    facts: list[Any] = []
    last_end: dict[str, Any] = {}
    for entry in book.orders.values():
        if entry.state == "open":
            facts.append(("order_open", entry.order.id, entry.order.recipient, entry.order.task))
        else:
            last_end[entry.order.recipient] = entry
    for recipient, entry in sorted(last_end.items()):
        facts.append(("order_ended", recipient, entry.order.task, entry.state))
    return facts


_book_operation = st.tuples(
    st.sampled_from(["issue", "done", "failed", "withdraw", "undelivered", "lose"]),
    st.integers(1, 8),  # the order's number (an id given twice is issued again)
    st.sampled_from(["bot-1", "bot-2", "bot-3"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_book_operation, max_size=40))
def test_the_order_books_kept_indexes_give_the_facts_and_open_orders_of_every_order(
    operations: list[tuple[str, int, str]],
) -> None:
    # The book keeps the open orders and each recipient's last ended one apart, so that its
    # facts do not walk every order of a long match; they must be what every order gives.
    book = OrderBook()
    for tick, (verb, number, recipient) in enumerate(operations):
        order_id = f"squad-1:{number}"
        if verb == "issue":
            task = f"t{tick}"
            book.issued(Order(recipient=recipient, sender="squad-1", id=order_id, task=task), tick)
        elif verb in ("done", "failed"):
            report = CompletionReport(reply_to=order_id, task="", success=verb == "done")
            book.reported(report, tick)
        elif verb == "withdraw":
            book.withdrawn(order_id, "replanned", tick)
        elif verb == "undelivered":
            book.undelivered(order_id, "abandoned", tick)
        else:
            book.lost(recipient, "left", tick)
        for _ in range(2):  # kept until the book changes; the caller's list its own
            given_facts = book.facts()
            assert repr(_plain_facts(book)) == repr([tuple(f) for f in given_facts])
            given_facts.clear()
        for whom in (None, "bot-1", "bot-2"):
            plain = [
                e for e in book.orders.values()
                if e.state == "open" and whom in (None, e.order.recipient)
            ]  # fmt: skip
            assert plain == book.open(whom)


_queue_operation = st.tuples(
    st.sampled_from(["receive", "pop", "withdraw"]),
    st.integers(1, 6),  # the order's number
    st.sampled_from([None, "s1", "s2"]),  # its command sequence
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_queue_operation, max_size=30))
def test_the_command_queues_kept_facts_are_those_of_the_orders_it_holds(
    operations: list[tuple[str, int, str | None]],
) -> None:
    # facts() keeps its answer until the queue changes: after every change (and every
    # unchanged ask), what the orders held give, as new tuples equal in value and type.
    queue = CommandQueue()
    for verb, number, sequence in operations:
        if verb == "receive":
            queue.receive(
                Order(recipient="bot-1", sender="squad-1", id=f"o{number}", task="goto",
                      args=[f"w{number}", number % 2 == 0], sequence=sequence)
            )  # fmt: skip
        elif verb == "pop":
            queue.pop()
        else:
            queue.withdraw(f"o{number}")
        for _ in range(2):
            plain = [
                ("order", o.id, o.sender, o.task, *o.args) if i == 0
                else ("queued_order", i, o.id, o.task)
                for i, o in enumerate(queue)
            ]  # fmt: skip
            given_facts = queue.facts()
            assert repr(given_facts) == repr(plain)
            given_facts.clear()  # the caller's list: the queue's own is not touched


_fact = st.tuples(
    st.sampled_from(["at", "sees", "armed"]),
    st.sampled_from(["bot-1", "bot-2", True, 1, 1.0, 2]),
)
_operation = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(["percept", "events", "daemon"]),
              st.lists(_fact, max_size=4)),
    st.tuples(st.just("remember"), _fact),
    st.tuples(st.just("forget"), st.sampled_from(["at", "sees", "armed"])),
    st.tuples(st.just("clear"), st.sampled_from(["percept", "events", "daemon"])),
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(_operation, max_size=25))
def test_memory_kept_fact_by_fact_equals_the_union_of_its_sources(operations: list[Any]) -> None:
    memory = Memory()
    for operation in operations:
        if operation[0] == "set":
            memory.set_source(operation[1], operation[2])
        elif operation[0] == "remember":
            memory.remember(*operation[1])
        elif operation[0] == "forget":
            memory.forget(operation[1])
        else:
            memory.clear_source(operation[1])
    union = FactDB()
    for source in memory.sources():
        union.update(memory.source(source))
    assert union == memory.facts


class _RecomputedMemory:
    """Memory as it was written before its fast paths: every fact of a source checked and keyed
    again whenever the source is given, forget() looking at every remembered fact. The
    reference the kept-up-to-date Memory must match fact for fact and in order."""

    def __init__(self) -> None:
        self.sources: dict[str, dict[Any, Any]] = {}
        self.remembered: dict[Any, Any] = {}
        self.db = FactDB()
        self.holders: dict[Any, int] = {}

    def set_source(self, source: str, facts: list[Any]) -> None:
        old = self.sources.get(source, {})
        new = {fact_key(check_fact(tuple(f))): check_fact(tuple(f)) for f in facts}
        for key, fact in old.items():
            if key not in new:
                self._drop(key, fact)
        for key, fact in new.items():
            if key not in old:
                self._hold(key, fact)
        self.sources[source] = new

    def change_source(self, source: str, added: list[Any], removed: list[Any]) -> None:
        held = self.sources.setdefault(source, {})
        coming = {fact_key(check_fact(tuple(f))): check_fact(tuple(f)) for f in added}
        for fact in removed:
            key = fact_key(check_fact(tuple(fact)))
            if key not in coming and key in held:
                self._drop(key, held.pop(key))
        for key, fact in coming.items():
            if key not in held:
                self._hold(key, fact)
            held[key] = fact

    def remember(self, fact: Any) -> None:
        key = fact_key(fact)
        if key not in self.remembered:
            self.remembered[key] = fact
            self._hold(key, fact)

    def forget(self, pattern: tuple[Any, ...]) -> int:
        gone = [
            key
            for key, fact in self.remembered.items()
            if len(fact) >= len(pattern) and all(map(values_equal, fact, pattern))
        ]
        for key in gone:
            self._drop(key, self.remembered.pop(key))
        return len(gone)

    def clear_source(self, source: str) -> None:
        for key, fact in self.sources.pop(source, {}).items():
            self._drop(key, fact)

    def _hold(self, key: Any, fact: Any) -> None:
        if self.holders.get(key, 0) == 0:
            self.db.assert_fact(*fact)
        self.holders[key] = self.holders.get(key, 0) + 1

    def _drop(self, key: Any, fact: Any) -> None:
        self.holders[key] -= 1
        if self.holders[key] == 0:
            del self.holders[key]
            self.db.retract(*fact)


# No list value holding a bool, such as (True, 2): FactDB takes it for (1, 2) and, beside a
# fact whose first value is a bool, fails to remove it (the same before Memory's fast paths).
_value = st.sampled_from(["bot-1", "bot-2", True, False, 1, 1.0, 0, 2, 2.5, (1, 2), ("x", 2)])
_any_fact = st.tuples(st.sampled_from(["at", "sees", "armed"]), st.lists(_value, max_size=3)).map(
    lambda named: (named[0], *named[1])
)
_given = st.one_of(_any_fact, _any_fact.map(list))  # a percept's facts come as lists
_source = st.sampled_from(["percept", "events", "daemon"])
_step = st.one_of(
    st.tuples(st.just("set"), _source, st.lists(_given, max_size=6)),
    st.tuples(st.just("change"), _source, st.lists(_given, max_size=4),
              st.lists(_given, max_size=4)),
    st.tuples(st.just("remember"), _any_fact),
    st.tuples(st.just("forget"), st.tuples(_any_fact, st.integers(1, 3)).map(
        lambda cut: cut[0][:cut[1]])),
    st.tuples(st.just("clear"), _source),
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(_step, max_size=30))
def test_memory_kept_up_to_date_equals_memory_recomputed_fact_for_fact_and_in_order(
    steps: list[Any],
) -> None:
    memory, recomputed = Memory(), _RecomputedMemory()
    for step in steps:
        _play(step, memory, recomputed)
        _assert_alike(memory, recomputed)


def _play(step: Any, memory: Memory, recomputed: _RecomputedMemory) -> None:
    """One step of the property tests, on the memory and on the plain definition alike."""
    if step[0] == "set":
        memory.set_source(step[1], step[2])
        recomputed.set_source(step[1], step[2])
    elif step[0] == "change":
        memory.change_source(step[1], step[2], step[3])
        recomputed.change_source(step[1], step[2], step[3])
    elif step[0] == "remember":
        memory.remember(*step[1])
        recomputed.remember(step[1])
    elif step[0] == "forget":
        assert recomputed.forget(step[1]) == memory.forget(*step[1])
    else:
        memory.clear_source(step[1])
        recomputed.clear_source(step[1])


def _assert_alike(memory: Memory, recomputed: _RecomputedMemory) -> None:
    """The memory holds what the plain definition does: every fact, in order and in its form
    (repr: == would take True for 1), each source's and the remembered ones."""
    assert repr(list(recomputed.db)) == repr(list(memory.facts))
    assert recomputed.db.names() == memory.facts.names()
    assert repr(list(recomputed.remembered.values())) == repr(list(memory.source("memory")))
    for name, facts in recomputed.sources.items():
        assert repr(list(facts.values())) == repr(list(memory.source(name)))


def _retyped(value: Any) -> Any:
    """A value ``==`` takes for ``value`` but another to a planner or to its text: True for 1,
    1.0 for 1, -0.0 for 0.0 (``value`` itself when there is none)."""
    swaps = {1: True, 0: False}
    if value.__class__ is int and value in swaps:
        return swaps[value]
    if value.__class__ is float and value == 0.0:
        return -value
    if value.__class__ is int:
        return float(value)
    return value


_again = st.sampled_from(["held", "copies", "lists", "retyped", "reversed", "twice"])


def _given_again(memory: Memory, source: str, how: str, where: int) -> list[Any]:
    """What ``source`` says now, given again: the held tuples themselves, equal copies, lists,
    one value retyped (``where`` picks it), in reverse order, or with a fact twice."""
    held = list(memory.source(source))
    if how == "held":
        return held
    if how == "copies":
        return [tuple(list(fact)) for fact in held]
    if how == "lists":
        return [list(fact) for fact in held]
    if how == "reversed":
        return held[::-1]
    if how == "twice":
        return held + held[:1]
    values = [(i, j) for i, fact in enumerate(held) for j in range(1, len(fact))]
    if not values:
        return held
    i, j = values[where % len(values)]
    fact = list(held[i])
    fact[j] = _retyped(fact[j])
    return [*held[:i], tuple(fact), *held[i + 1 :]]


_value_or_zero = st.sampled_from(["bot-1", True, False, 1, 1.0, 0, 0.0, -0.0, 2, (1, 2)])
_zero_fact = st.tuples(st.sampled_from(["at", "sees"]), st.lists(_value_or_zero, max_size=3)).map(
    lambda named: (named[0], *named[1])
)
_same_step = st.one_of(
    st.tuples(st.just("set"), _source, st.lists(_zero_fact, max_size=5)),
    st.tuples(st.just("again"), _source, _again, st.integers(0, 20)),
    st.tuples(st.just("change"), _source, st.lists(_zero_fact, max_size=3),
              st.lists(_zero_fact, max_size=3)),
    st.tuples(st.just("clear"), _source),
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(_same_step, max_size=25))
def test_a_source_given_again_ends_as_memory_recomputed_whatever_form_it_comes_in(
    steps: list[Any],
) -> None:
    # set_source's fast paths (the same facts in the same order: nothing to do; a tuple it
    # holds: not checked again) against the plain definition, with the forms that look the
    # same to == and are not: True and 1, 1 and 1.0, 0.0 and -0.0, a list and a tuple.
    memory, recomputed = Memory(), _RecomputedMemory()
    for step in steps:
        if step[0] == "again":
            given = _given_again(memory, step[1], step[2], step[3])
            _play(("set", step[1], given), memory, recomputed)
        else:
            _play(step, memory, recomputed)
        _assert_alike(memory, recomputed)


def test_a_bad_fact_given_again_in_another_form_is_refused() -> None:
    memory = Memory()
    memory.set_source("daemon", [("at", "bot-1", (1, 2))])
    with pytest.raises(WarbandError, match="is a list"):
        memory.set_source("daemon", [("at", "bot-1", [1, 2])])
    assert memory.source("daemon") == (("at", "bot-1", (1, 2)),)
