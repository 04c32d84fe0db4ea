"""Blocks world as an HTN domain (built in Python), with a generator of problems of known optimum.

Facts: ``(block b)``, ``(on b c)``, ``(on_table b)``, ``(clear b)``, ``(hand_empty)``,
``(holding b)``, and the goal as ``(goal_on b c)`` / ``(goal_on_table b)`` for every block.
Primitive tasks (each one action of a one-handed robot): ``!pickup b`` (from the table),
``!unstack b c``, ``!putdown b`` (on the table), ``!stack b c``; their effects are declared so
the planner tracks the state while planning.

The root task ``move_blocks`` follows the classic strategy (Gupta and Nau): a block is *done*
when it sits where the goal wants it on a done block (or the table). While some block is not
done, move a clear one straight to its final place if that place is ready; otherwise put a
clear misplaced block on the table; then recurse.

:func:`problem` builds a problem whose optimal plan length is known exactly (see there).
"""

from __future__ import annotations

import random
from typing import NamedTuple

from ...exceptions import PlanningError
from ...values import Fact
from ..facts import FactDB
from ..htn import And, DomainBuilder, HtnDomain, Not, Task, call, query, task

ROOT = Task("move_blocks")
"""The root task of every blocks-world problem."""


def is_done(facts: FactDB, block: str) -> bool:
    """True when ``block`` and everything under it sit where the goal wants them.

    A block without a goal position counts as done when everything under it is done.
    """
    known = _known(facts)
    answer = known.get(block)
    if answer is not None:
        return answer
    # Walk down until a block decides the answer (or was decided before): every block passed on
    # the way is done exactly when the block under it is, so they all share that answer.
    path = []
    current = block
    while True:
        path.append(current)
        below = _support(facts, current)
        if facts.has("goal_on_table", current):
            answer = below is None
            break
        goal = facts.facts("goal_on", current)
        if goal and goal[0][2] != below:
            answer = False
            break
        if below is None:
            answer = True
            break
        current = below
        cached = known.get(current)
        if cached is not None:
            answer = cached
            break
    for passed in path:
        known[passed] = answer
    return answer


_DONE: list[tuple[int, dict[str, bool]]] = [(-1, {})]
"""The answers of :func:`is_done` for the facts of one version (see ``FactDB.version``).

The planner asks about the same blocks in every branch of ``move_blocks``, and ``every block is
done`` asks about all of them; one state's answers suffice, as it asks about one state at a time.
"""


def _known(facts: FactDB) -> dict[str, bool]:
    version = facts.version
    entry = _DONE[0]  # read once: another thread may replace it meanwhile
    if entry[0] == version:
        return entry[1]
    known: dict[str, bool] = {}
    _DONE[0] = (version, known)
    return known


def _support(facts: FactDB, block: str) -> str | None:
    """The block ``block`` sits on, or None if it is on the table (or held)."""
    for fact in facts.facts("on", block):
        return str(fact[2])
    return None


def domain() -> HtnDomain:
    """The blocks-world HTN domain (root task :data:`ROOT`)."""
    b = DomainBuilder("blocks")
    b.function("done", is_done)
    b.primitive(
        "!pickup",
        "?b",
        delete=[query("on_table", "?b"), query("clear", "?b"), query("hand_empty")],
        add=[query("holding", "?b")],
    )
    b.primitive(
        "!unstack",
        "?b",
        "?c",
        delete=[query("on", "?b", "?c"), query("clear", "?b"), query("hand_empty")],
        add=[query("holding", "?b"), query("clear", "?c")],
    )
    b.primitive(
        "!putdown",
        "?b",
        delete=[query("holding", "?b")],
        add=[query("on_table", "?b"), query("clear", "?b"), query("hand_empty")],
    )
    b.primitive(
        "!stack",
        "?b",
        "?c",
        delete=[query("holding", "?b"), query("clear", "?c")],
        add=[query("on", "?b", "?c"), query("clear", "?b"), query("hand_empty")],
    )
    misplaced = And((query("clear", "?x"), Not(call("done", "?x"))))
    b.method("move_blocks").branch(
        "move a block onto its final block",
        And(
            (
                misplaced,
                query("goal_on", "?x", "?y"),
                call("done", "?y"),
                query("clear", "?y"),
            )
        ),
        [task("move_onto", "?x", "?y"), task("move_blocks")],
    ).branch(
        "move a block to its final place on the table",
        And((misplaced, query("goal_on_table", "?x"))),
        [task("move_to_table", "?x"), task("move_blocks")],
    ).branch(
        "put a misplaced block on the table",
        And((misplaced, query("on", "?x", "?z"))),
        [task("move_to_table", "?x"), task("move_blocks")],
    ).branch(
        "every block is done",
        Not(And((query("block", "?x"), Not(call("done", "?x"))))),
        [],
    )
    b.method("move_onto", "?x", "?y").branch(
        "from the table",
        query("on_table", "?x"),
        [task("!pickup", "?x"), task("!stack", "?x", "?y")],
    ).branch(
        "from a block",
        query("on", "?x", "?z"),
        [task("!unstack", "?x", "?z"), task("!stack", "?x", "?y")],
    )
    b.method("move_to_table", "?x").branch(
        "from a block",
        query("on", "?x", "?z"),
        [task("!unstack", "?x", "?z"), task("!putdown", "?x")],
    )
    return b.build()


class BlocksProblem(NamedTuple):
    """A blocks-world problem; unpacks as ``(domain, facts, root, optimal_length)``."""

    domain: HtnDomain
    facts: FactDB
    root: Task
    optimal_length: int
    """The number of primitive tasks of a shortest plan."""


def problem(n_blocks: int, seed: int) -> BlocksProblem:
    """A random problem with ``n_blocks`` blocks whose optimal plan length is known.

    The goal is a random set of towers. The start state is made by undoing the goal: ``k``
    distinct clear blocks, one after another, each leave their goal place for the table or
    the top of another tower, and none moves twice. Every one of those ``k`` blocks is out of
    place at the start, so any plan moves each at least once (two actions per move); the
    blocks never moved stand on never-moved blocks down to the table, so they are already
    done. Replaying the undo backwards moves each block once, straight to its goal: the
    optimum is exactly ``2 * k``. Deterministic for a given ``seed``.
    """
    if n_blocks < 1:
        raise PlanningError(f"a blocks-world problem needs at least 1 block, got {n_blocks}")
    rng = random.Random(seed)
    blocks = [f"b{i}" for i in range(n_blocks)]
    order = blocks[:]
    rng.shuffle(order)
    goal: dict[str, str | None] = {}
    below: str | None = None
    for block in order:
        # Start a new tower with probability 1/3, so towers average three blocks.
        below = None if below is None or rng.random() < 1 / 3 else below
        goal[block] = below
        below = block
    support = dict(goal)
    moved: set[str] = set()
    target_moves = rng.randint(n_blocks // 2, n_blocks)
    while len(moved) < target_moves:
        covered = {s for s in support.values() if s is not None}
        clear = [b for b in blocks if b not in covered]
        movable = [b for b in clear if b not in moved]
        if not movable:
            break
        block = rng.choice(movable)
        places: list[str | None] = [c for c in clear if c != block and c != support[block]]
        if support[block] is not None:
            places.append(None)
        if not places:
            break
        support[block] = rng.choice(places)
        moved.add(block)
    facts = FactDB(_state_facts(blocks, support))
    for block in blocks:
        if goal[block] is None:
            facts.assert_fact("goal_on_table", block)
        else:
            facts.assert_fact("goal_on", block, goal[block])
    return BlocksProblem(domain(), facts, ROOT, 2 * len(moved))


def _state_facts(blocks: list[str], support: dict[str, str | None]) -> list[Fact]:
    covered = {s for s in support.values() if s is not None}
    facts: list[Fact] = [("hand_empty",)]
    for block in blocks:
        facts.append(("block", block))
        below = support[block]
        facts.append(("on_table", block) if below is None else ("on", block, below))
        if block not in covered:
            facts.append(("clear", block))
    return facts
