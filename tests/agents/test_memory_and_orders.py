"""Memory by sources, the command queue and the order book: the bookkeeping of the agent loop."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warband.agents import CommandQueue, Memory, OrderBook
from warband.exceptions import ConfigurationError
from warband.messaging import CompletionReport, Order
from warband.planning import FactDB


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
