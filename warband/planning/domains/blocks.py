"""Blocks world as an HTN domain (built in Python), with a generator of problems of known optimum.

Facts: ``(block b)``, ``(on b c)``, ``(on_table b)``, ``(clear b)``, ``(hand_empty)``,
``(holding b)``. Block names are any values but ``None`` (strings, integers...), compared by the
value model of :mod:`warband.values` (``1`` and ``1.0`` are one block; ``True`` is not ``1``).
The goal is a set of facts ``(goal_on b c)``, ``(goal_on_table b)`` and ``(goal_clear b)``, as
in the IPC problem sets: it may leave any block unplaced, and a block without a goal may end
anywhere but on a block the goal wants for another block or clear. :func:`facts_for` builds
such a fact base from a start and a goal given as maps.

Primitive tasks (each one action of a one-handed robot): ``!pickup b`` (from the table),
``!unstack b c``, ``!putdown b`` (on the table), ``!stack b c``; their effects are declared so
the planner tracks the state while planning.

The root task ``move_blocks`` first checks that the goal can be met (:func:`goal_problem`;
if not, it fails at once instead of searching), then ``place_blocks`` follows Gupta and Nau's
near-optimal strategy. A block is *done* (:func:`is_done`) when it will never have to move
again: it sits where its goal wants it (a block without a goal: anywhere but on a block that
the goal wants covered by another block or left clear), on a done block or the table. While
some block is not done:

1. move a clear block that is not done onto its goal block if that block is done and clear;
2. else move a clear block that is not done and whose goal is the table, or that has no goal,
   to the table (it will stay there);
3. else put any clear block that is not done and sits on a block on the table (it waits there
   until its goal block is ready).

Every move puts a block in its final place except those of step 3, and a block moves at most
once to the table and once from it, so a plan has at most four actions per block not done at
the start, where any plan needs at least two (each such block must move). For a goal that can
be met the strategy never gets stuck, so the planner never backtracks. A block held at the
start is placed first: on its goal block if that is ready, else on the table.

:func:`problem` builds a problem whose optimal plan length is known exactly (see there).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from ...exceptions import PlanningError
from ...values import Fact, Value, format_fact, format_value, value_key, values_equal
from ..htn.facts import FactDB
from ..htn.planner import TRUE, And, DomainBuilder, HtnDomain, Not, Or, Task, call, query, task

ROOT = Task("move_blocks")
"""The root task of every blocks-world problem."""


def is_done(facts: FactDB, block: Value) -> bool:
    """True when ``block`` need never move again to reach the goal of ``facts``.

    That is: ``block`` sits where its goal wants it (``goal_on`` / ``goal_on_table``); a block
    without a goal may sit on the table, or on a block that no goal wants covered by another
    block (``goal_on``) or left clear (``goal_clear``); and the block under it is done too. A
    block in the hand is not done.
    """
    return _answers(facts).done(facts, block)


class _Answers:
    """The answers of :func:`is_done` for the facts of one version, keyed by ``value_key``."""

    __slots__ = ("known", "taken")

    def __init__(self) -> None:
        self.known: dict[object, bool] = {}
        self.taken: set[object] | None = None
        """The blocks a block without a goal must not sit on: another block is wanted there
        or the goal wants them clear. Built on first need: never, when every block has a goal."""

    def done(self, facts: FactDB, block: Value) -> bool:
        known = self.known
        answer = known.get(value_key(block))
        if answer is not None:
            return answer
        # Walk down until a block decides the answer (or was decided before): every block
        # passed on the way is done exactly when the block under it is, so they share it.
        path = []
        current = block
        while True:
            path.append(value_key(current))
            if facts.has("goal_on_table", current):
                answer = facts.has("on_table", current)
                break
            under = facts.facts("on", current)
            below = under[0][2] if under else None
            goal = facts.facts("goal_on", current)
            if goal:
                if below is None or not values_equal(goal[0][2], below):
                    answer = False
                    break
            elif below is not None and value_key(below) in self._taken(facts):
                answer = False
                break
            if below is None:
                answer = facts.has("on_table", current)  # not on a block: on the table or held
                break
            current = below
            cached = known.get(value_key(current))
            if cached is not None:
                answer = cached
                break
        for passed in path:
            known[passed] = answer
        return answer

    def _taken(self, facts: FactDB) -> set[object]:
        taken = self.taken
        if taken is None:
            # Built whole before it is shared: another thread may ask about the same version.
            taken = {value_key(f[2]) for f in facts.facts("goal_on")}
            taken.update(value_key(f[1]) for f in facts.facts("goal_clear"))
            self.taken = taken
        return taken


_ANSWERS: list[tuple[int, _Answers | None]] = [(-1, None)]
"""The answers for the facts of one version (see ``FactDB.version``).

The planner asks about the same blocks in every branch of ``place_blocks``, and ``every block
is done`` asks about all of them; one state's answers suffice, as it asks about one state at a
time. Versions are never reused, so a stale entry is never mistaken for the current one.
"""


def _answers(facts: FactDB) -> _Answers:
    version = facts.version
    entry = _ANSWERS[0]  # read once: another thread may replace it meanwhile
    if entry[0] == version and entry[1] is not None:
        return entry[1]
    layout = _Answers()
    _ANSWERS[0] = (version, layout)
    return layout


def goal_problem(facts: FactDB) -> str | None:
    """Why the goal of ``facts`` cannot be met, or None when it can.

    A goal can be met when every block it names is a block (``(block b)``), no block is
    wanted in two places or on itself, no two blocks are wanted on one block, no block is
    wanted both covered and clear, and the ``goal_on`` facts form no cycle. The domain's root
    task checks this first and fails at once when it does not hold; call this to learn why.
    """
    blocks = {value_key(f[1]) for f in facts.facts("block")}
    goals = [*facts.facts("goal_on"), *facts.facts("goal_on_table"), *facts.facts("goal_clear")]
    for goal in goals:
        if len(goal) != _ARITY[str(goal[0])]:
            return f"the goal {format_fact(goal)} should name {_ARITY[str(goal[0])] - 1} block(s)"
        for name in goal[1:]:
            if value_key(name) not in blocks:
                return (
                    f"the goal {format_fact(goal)} names {format_value(name)}, which is not a "
                    f"block: add the fact (block {format_value(name)}) or drop the goal"
                )
    place: dict[object, Fact] = {}  # block -> its goal_on or goal_on_table fact
    covered: dict[object, Fact] = {}  # block -> the goal_on fact that wants a block on it
    for goal in [*facts.facts("goal_on_table"), *facts.facts("goal_on")]:
        block = value_key(goal[1])
        if len(goal) == 3 and value_key(goal[2]) == block:
            return f"the goal {format_fact(goal)} wants a block on itself"
        other = place.setdefault(block, goal)
        if other is not goal:
            return f"the goal wants {format_value(goal[1])} in two places: {_both(other, goal)}"
        if len(goal) == 3:
            other = covered.setdefault(value_key(goal[2]), goal)
            if other is not goal:
                return f"the goal wants two blocks on {format_value(goal[2])}: {_both(other, goal)}"
    for goal in facts.facts("goal_clear"):
        wants_on = covered.get(value_key(goal[1]))
        if wants_on is not None:
            return f"the goal wants {format_value(goal[1])} clear: {_both(wants_on, goal)}"
    # Follow each chain of goal_on down: it must end on the table or on a block without a goal
    # place, not come back to a block it passed (a on b, b on a).
    grounded: set[object] = set()
    for start in place:
        chain: dict[object, int] = {}  # block -> its position in the chain
        current = start
        while current not in grounded and current in place:
            if current in chain:
                cycle = [place[block] for block in list(chain)[chain[current] :]]
                return "the goal stacks blocks in a cycle: " + " ".join(map(format_fact, cycle))
            chain[current] = len(chain)
            goal = place[current]
            if len(goal) == 2:
                break
            current = value_key(goal[2])
        grounded.update(chain)
    return None


_ARITY = {"goal_on": 3, "goal_on_table": 2, "goal_clear": 2}
"""The length of each kind of goal fact, its name included."""


def _both(first: Fact, second: Fact) -> str:
    return f"{format_fact(first)} and {format_fact(second)}"


def facts_for(
    start: Mapping[Value, Value],
    goal: Mapping[Value, Value] | None = None,
    clear: Iterable[Value] = (),
) -> FactDB:
    """The fact base of a problem: ``start`` maps every block to the block it sits on (None: the
    table); ``goal`` maps some blocks to where the goal wants them (None: the table) and
    ``clear`` names the blocks the goal wants clear. The hand is empty.

    Raises PlanningError when ``start`` is not a state (a block on a block it does not list, on
    itself, two blocks on one, a tower standing on itself) or the goal cannot be met (see
    :func:`goal_problem`).
    """
    keys = {value_key(block): block for block in start}
    if None in keys:
        raise PlanningError("a block cannot be called None: None stands for the table")
    seen: dict[object, Value] = {}
    for block, under in start.items():
        if under is None:
            continue
        if value_key(under) not in keys:
            raise PlanningError(
                f"{format_value(block)} sits on {format_value(under)}, which is not a block of "
                f"the start state: add {format_value(under)} to it"
            )
        other = seen.setdefault(value_key(under), block)
        if other is not block:
            raise PlanningError(
                f"{format_value(other)} and {format_value(block)} both sit on "
                f"{format_value(under)} in the start state"
            )
    for block in start:
        # A tower must reach the table within as many steps as there are blocks.
        current: Value = block
        for _ in range(len(start) + 1):
            current = start[keys[value_key(current)]]
            if current is None:
                break
        else:
            raise PlanningError(f"the tower under {format_value(block)} stands on itself")
    facts = FactDB([("hand_empty",)])
    for block, under in start.items():
        facts.assert_fact("block", block)
        if under is None:
            facts.assert_fact("on_table", block)
        else:
            facts.assert_fact("on", block, under)
        if value_key(block) not in seen:
            facts.assert_fact("clear", block)
    for block, place in (goal or {}).items():
        if place is None:
            facts.assert_fact("goal_on_table", block)
        else:
            facts.assert_fact("goal_on", block, place)
    for block in clear:
        facts.assert_fact("goal_clear", block)
    problem = goal_problem(facts)
    if problem is not None:
        raise PlanningError(f"a blocks-world goal that cannot be met: {problem}")
    return facts


def domain() -> HtnDomain:
    """The blocks-world HTN domain (root task :data:`ROOT`)."""
    b = DomainBuilder("blocks")
    b.function("done", is_done)
    b.function("goal_can_be_met", lambda facts: goal_problem(facts) is None)
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
    b.method("move_blocks").branch(
        "the goal can be met", call("goal_can_be_met"), [task("place_blocks")]
    )
    misplaced = And((query("clear", "?x"), Not(call("done", "?x"))))
    ready = And((query("goal_on", "?x", "?y"), call("done", "?y"), query("clear", "?y")))
    b.method("place_blocks").branch(
        "place the block in hand",
        query("holding", "?x"),
        [task("place_held", "?x"), task("place_blocks")],
    ).branch(
        "move a block onto its final block",
        And((misplaced, ready)),
        [task("move_onto", "?x", "?y"), task("place_blocks")],
    ).branch(
        "move a block to the table for good",
        And((misplaced, Or((query("goal_on_table", "?x"), Not(query("goal_on", "?x", "?y")))))),
        [task("move_to_table", "?x"), task("place_blocks")],
    ).branch(
        "put a waiting block on the table",
        And((misplaced, query("on", "?x", "?z"))),
        [task("move_to_table", "?x"), task("place_blocks")],
    ).branch(
        "every block is done",
        Not(And((query("block", "?x"), Not(call("done", "?x"))))),
        [],
    )
    b.method("place_held", "?x").branch(
        "onto its final block", ready, [task("!stack", "?x", "?y")]
    ).branch("on the table", TRUE, [task("!putdown", "?x")])
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

    The goal is a random set of towers, a place for every block. The start state is made by
    undoing the goal: ``k`` distinct clear blocks, one after another, each leave their goal
    place for the table or the top of another tower, and none moves twice. Every one of those
    ``k`` blocks is out of place at the start, so any plan moves each at least once (two
    actions per move); the blocks never moved stand on never-moved blocks down to the table,
    so they are already done. Replaying the undo backwards moves each block once, straight to
    its goal: the optimum is exactly ``2 * k``. Deterministic for a given ``seed``.
    """
    if n_blocks < 1:
        raise PlanningError(f"a blocks-world problem needs at least 1 block, got {n_blocks}")
    rng = random.Random(seed)
    blocks = [f"b{i}" for i in range(n_blocks)]
    order = blocks[:]
    rng.shuffle(order)
    goal: dict[Value, Value] = {}
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
        places: list[Value] = [c for c in clear if c != block and c != support[block]]
        if support[block] is not None:
            places.append(None)
        if not places:
            break
        support[block] = rng.choice(places)
        moved.add(block)
    start: dict[Value, Value] = {block: support[block] for block in blocks}
    facts = facts_for(start, {block: goal[block] for block in blocks})
    return BlocksProblem(domain(), facts, ROOT, 2 * len(moved))
